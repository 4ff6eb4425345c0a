//! The settings page of a signed-in user's personal access tokens (`/settings/tokens`):
//! list, create (the secret shown once) and revoke, over `crate::app::tokens`.

use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use chrono::Duration;

use crate::app::tokens;
use crate::auth::{Scope, ScopeSet};
use crate::credentials::session;
use crate::domain::ids::UserId;
use crate::domain::user::User;
use crate::error::ApiError;
use crate::oauth2::{field, parse_form};
use crate::state::AppState;
use crate::web::forms::{csrf_ok, csrf_token};
use crate::web::{error_page, html};

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/settings/tokens", { get => settings_page, post => settings_create });
    crate::resource!(cfg, "/settings/tokens/{id}/revoke", { post => settings_revoke });
}

struct TokenRow {
    id: String,
    comment: String,
    expires: String,
    scopes: String,
}

#[derive(Template)]
#[template(path = "tokens.html")]
struct TokensPage {
    csrf: String,
    user_email: String,
    tokens: Vec<TokenRow>,
    new_token: Option<String>,
    error: Option<String>,
    all_scopes: Vec<&'static str>,
}

async fn render_settings(
    state: &AppState,
    req: &HttpRequest,
    user: UserId,
    new_token: Option<String>,
    error: Option<String>,
    status: u16,
) -> Result<HttpResponse, ApiError> {
    let (csrf, cookie) = csrf_token(state, req);
    let user_email = state
        .store
        .get::<User>(&user.key())
        .await?
        .map(|u| u.value.email)
        .unwrap_or_default();
    let tokens = tokens::list(state, user)
        .await?
        .into_iter()
        .map(|p| TokenRow {
            id: p.id.to_string(),
            comment: p.comment,
            expires: p
                .expires_at
                .map(|e| e.format("%Y-%m-%d %H:%M UTC").to_string())
                .unwrap_or_else(|| "never".into()),
            scopes: p.scopes.to_space_separated(),
        })
        .collect();
    let page = TokensPage {
        csrf,
        user_email,
        tokens,
        new_token,
        error,
        all_scopes: ScopeSet::all_grantable()
            .iter()
            .map(Scope::as_str)
            .collect(),
    };
    let body = page.render().map_err(ApiError::internal)?;
    Ok(html(status, body, cookie.into_iter().collect()))
}

fn to_login() -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((
            actix_web::http::header::LOCATION,
            "/oauth2/login?next=%2Fsettings%2Ftokens",
        ))
        .finish()
}

async fn settings_page(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    match session::current(&state, &req).await? {
        Some(s) => render_settings(&state, &req, s.value.user_id, None, None, 200).await,
        None => Ok(to_login()),
    }
}

async fn settings_create(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let pairs: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
    let get = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    if !csrf_ok(&state, &req, get("csrf_token")) {
        return Err(error_page(
            403,
            "Request refused",
            "CSRF check failed; reload the page and try again.",
        ));
    }
    let Some(s) = session::current(&state, &req).await? else {
        return Ok(to_login());
    };
    let user = s.value.user_id;
    let names: Vec<String> = pairs
        .iter()
        .filter(|(k, _)| k == "scope")
        .map(|(_, v)| v.clone())
        .collect();
    let Ok(scopes) = tokens::parse_scopes(&names) else {
        return render_settings(&state, &req, user, None, Some("Unknown scope.".into()), 422).await;
    };
    let comment = get("comment").unwrap_or("").trim().to_string();
    let expires_at = match get("expires_in_days")
        .map(str::trim)
        .filter(|v| !v.is_empty())
    {
        None => None,
        Some(d) => match d.parse::<i64>() {
            Ok(d) if (1..=3650).contains(&d) => Some(state.now() + Duration::days(d)),
            _ => {
                return render_settings(
                    &state,
                    &req,
                    user,
                    None,
                    Some("Expiry must be 1 to 3650 days.".into()),
                    422,
                )
                .await
            }
        },
    };
    let (_, token) = tokens::create(&state, user, scopes, &comment, expires_at).await?;
    render_settings(&state, &req, user, Some(token), None, 200).await
}

async fn settings_revoke(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let form = parse_form(&body);
    if !csrf_ok(&state, &req, field(&form, "csrf_token")) {
        return Err(error_page(
            403,
            "Request refused",
            "CSRF check failed; reload the page and try again.",
        ));
    }
    let Some(s) = session::current(&state, &req).await? else {
        return Ok(to_login());
    };
    tokens::revoke(&state, s.value.user_id, &path).await?;
    Ok(HttpResponse::SeeOther()
        .insert_header((actix_web::http::header::LOCATION, "/settings/tokens"))
        .finish())
}
