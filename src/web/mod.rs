//! Every HTML page of the service, in one home: the hosted checkout (`checkout`), the
//! sign-in, sign-up, consent and token pages (`account`), the seller's dashboard
//! (`dashboard`). They share this file's response helpers and error page, the forms' CSRF
//! protection (`forms`), and one money formatter (`tollgate_actors::domain::money::Money`);
//! the dashboard's templates add their own helpers (`dashboard::fmt`).
//!
//! Pages call `crate::app` (the same use cases the JSON API calls), never a handler.

pub mod account;
pub mod checkout;
pub mod dashboard;
pub mod forms;
pub mod portal;
pub mod resend;

use actix_web::cookie::Cookie;
use actix_web::http::header;
use actix_web::{web, HttpResponse};
use askama::Template;

use crate::error::ApiError;

pub fn configure(cfg: &mut web::ServiceConfig) {
    checkout::configure(cfg);
    account::configure(cfg);
    dashboard::configure(cfg);
    resend::configure(cfg);
    portal::configure(cfg);
}

#[derive(Template)]
#[template(path = "error.html")]
pub(crate) struct ErrorPage<'a> {
    pub(crate) title: &'a str,
    pub(crate) message: &'a str,
}

/// An HTML response: never cached, never framed (no clickjacking of the consent page).
pub fn html(status: u16, body: String, cookies: Vec<Cookie<'static>>) -> HttpResponse {
    let mut res = HttpResponse::build(
        actix_web::http::StatusCode::from_u16(status).unwrap_or(actix_web::http::StatusCode::OK),
    );
    crate::error::page_headers(&mut res);
    for c in cookies {
        res.cookie(c);
    }
    res.content_type("text/html; charset=utf-8").body(body)
}

pub fn render<T: Template>(t: &T) -> Result<String, ApiError> {
    t.render().map_err(ApiError::internal)
}

/// An error page as an `ApiError` (status and rendered body).
pub fn error_page(status: u16, title: &str, message: &str) -> ApiError {
    match render(&ErrorPage { title, message }) {
        Ok(html) => ApiError::Page { status, html },
        Err(e) => e,
    }
}

pub fn see_other(location: &str, cookies: Vec<Cookie<'static>>) -> HttpResponse {
    let mut res = HttpResponse::SeeOther();
    res.insert_header((header::LOCATION, location.to_string()))
        .insert_header((header::CACHE_CONTROL, "no-store"));
    for c in cookies {
        res.cookie(c);
    }
    res.finish()
}
