//! `GET /portal/{slug}/recover/{token}`: the link of a "payment failed" e-mail
//! (`crate::app::portal::recovery_link`). A live link of this organization is used up, a
//! new session cookie is set (the one a sign-in code gives), and the browser goes (303) to
//! the subscription's page; a link used, expired, unknown or of another organization is a
//! **401** page saying so, with the sign-in form.
//!
//! The URL is a secret until used: the redirect says `Referrer-Policy: no-referrer`, so
//! it is never sent on. The 401 page, whose link is dead, says `strict-origin`: no path
//! leaves either, and its form still posts with an `Origin` (`no-referrer` would make it
//! `null`, which the CSRF check refuses).

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use askama::Template;

use super::{render, respond, see_other, session_cookie, Frame, PageResult, Portal, Seller};
use crate::app::portal::recovery_link as app;
use crate::error::Code;
use crate::state::AppState;

#[derive(Template)]
#[template(path = "portal/recover.html")]
struct DeadLinkPage {
    seller: Seller,
    frame: Frame,
}

/// `GET /portal/{slug}/recover/{token}`.
pub async fn recover(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let (slug, token) = path.into_inner();
    let p = match Portal::of(&state, &req, &slug).await {
        Ok(p) => p,
        Err(f) => return Ok(no_referrer(f.error_response())),
    };
    let answer: PageResult = async {
        match app::open(&state, p.org.id, &token).await {
            Ok(r) => {
                let c = session_cookie(&state, r.opened.token, r.opened.session.expires_at);
                let to = p
                    .seller
                    .at(&format!("/subscriptions/{}", r.subscription_id));
                Ok(no_referrer(see_other(&to, vec![c])))
            }
            Err(e) if e.code() == Code::Unauthorized => {
                let page = DeadLinkPage {
                    seller: p.seller.clone(),
                    frame: p.frame(None),
                };
                let cookies = p.csrf_cookie.clone().into_iter().collect();
                Ok(respond(401, render(&page)?, cookies, "strict-origin"))
            }
            Err(e) => Err(e.into()),
        }
    }
    .await;
    match p.branded(answer) {
        Ok(res) => Ok(res),
        Err(f) => Ok(no_referrer(f.error_response())),
    }
}

/// The answer, telling the browser to send its URL nowhere.
fn no_referrer(mut res: HttpResponse) -> HttpResponse {
    res.headers_mut().insert(
        header::REFERRER_POLICY,
        header::HeaderValue::from_static("no-referrer"),
    );
    res
}
