//! Invoices and credit notes: an order's invoice (`/v1/orders/{id}/invoice`), a refund's
//! credit note, and the signed PDF links (`/v1/invoices/{id}.pdf`).

use actix_web::web;

pub fn configure(_cfg: &mut web::ServiceConfig) {}
