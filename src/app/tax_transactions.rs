//! Tax transactions at the tax provider (Stripe Tax): a paid order's calculation recorded
//! as a transaction, reversed when the order is refunded.

use actix_web::web;
use tollgate_storage::{Batch, Change, StorageError};

use crate::state::AppState;

/// The records at the provider `change` calls for, queued in `batch` (the fan-out's write
/// that consumes the change); whether the recorder should be woken.
pub async fn queue(
    _state: &AppState,
    _change: &Change,
    _batch: &mut Batch,
) -> Result<bool, StorageError> {
    Ok(false)
}

/// Runs the recorder until the process ends. Call once.
pub fn start(_state: web::Data<AppState>) {}
