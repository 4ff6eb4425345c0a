//! Invoices and credit notes (issue 48): the documents an order and its refunds are billed
//! with. The records are `crate::domain::invoice` (an immutable snapshot of everything
//! printed, numbered from a gapless sequence); `pdf` renders one as a PDF, on demand and
//! the same bytes every time.

pub mod issue;
pub mod pdf;

pub use issue::{queue, start};
