//! The issuer: numbers and writes the documents that are due (`DocumentDue`).

use actix_web::web;
use tollgate_storage::{Batch, Change, StorageError};

use crate::state::AppState;

/// The documents `change` makes due, queued in `batch` (the fan-out's write that consumes
/// the change); whether the issuer should be woken.
pub async fn queue(
    _state: &AppState,
    _change: &Change,
    _batch: &mut Batch,
) -> Result<bool, StorageError> {
    Ok(false)
}

/// Runs the issuer until the process ends. Call once.
pub fn start(_state: web::Data<AppState>) {}
