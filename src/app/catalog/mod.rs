//! The catalog and its owners: organizations, products (with their prices), benefits,
//! discounts, custom fields and customers. Each is a plain record (no actor): created in
//! one write with its index entries, changed through [`tollgate_storage::Store::update`]
//! (compare-and-swap, decided again when another writer won), read within the
//! organizations a subject reaches (`crate::app::access`).

pub mod benefits;
pub mod custom_fields;
pub mod customers;
pub mod discounts;
pub mod meter_references;
pub mod organizations;
pub mod products;

use crate::error::AppError;

/// The record an update left, or 404 when it is gone (an [`AppError`], or what an
/// unconverted caller returns).
fn found<R, E: From<AppError>>(record: Option<R>) -> Result<R, E> {
    record.ok_or_else(|| AppError::not_found().into())
}
