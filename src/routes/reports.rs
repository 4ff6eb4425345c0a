//! `/v1/reports/*`: the tax reports as CSV (`crate::app::tax_reports`).

use actix_web::web;

pub fn configure(_cfg: &mut web::ServiceConfig) {}
