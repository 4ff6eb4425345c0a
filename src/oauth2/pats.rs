//! Personal access tokens for a signed-in browser: the `/v1/personal_access_tokens/` API
//! (reference 6.2; web session only, like Polar) and the settings page behind it.

use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use chrono::{DateTime, Duration, Utc};
use serde_json::Value;
use tollgate_storage::{Batch, Direction, Expect, PageQuery};

use super::forms::{csrf_ok, csrf_token};
use super::pages::{error_page, html};
use crate::api::oauth2::{
    PersonalAccessTokenCreate as CreatePat, PersonalAccessTokenCreateResponse,
    PersonalAccessTokenView,
};
use crate::api::{Created, ListResource, Pagination};
use crate::auth::service::new_pat;
use crate::auth::session;
use crate::auth::{AuthMethod, Scope, ScopeSet, Subject};
use crate::domain::ids::{PatId, UserId};
use crate::domain::pat::{PersonalAccessToken, PAT_BY_USER};
use crate::domain::user::User;
use crate::error::{ApiError, BearerError};
use crate::extract::auth::UserAccount;
use crate::extract::{Auth, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/personal_access_tokens/", { get => list, post => create });
    crate::resource!(cfg, "/v1/personal_access_tokens/{id}", { delete => delete });
    crate::resource!(cfg, "/settings/tokens", { get => settings_page, post => settings_create });
    crate::resource!(cfg, "/settings/tokens/{id}/revoke", { post => settings_revoke });
}

/// The web-session user; tokens cannot manage tokens or OAuth2 clients (Polar:
/// `web_default`, which only a browser session carries).
pub(super) fn web_user(auth: &Auth<UserAccount>) -> Result<UserId, ApiError> {
    match (auth.principal.subject, auth.principal.method) {
        (Subject::User(u), AuthMethod::WebSession) => Ok(u),
        _ => Err(ApiError::Bearer(BearerError::InsufficientScope {
            required: "web_default".into(),
        })),
    }
}

fn parse_scopes(names: &[String]) -> Result<ScopeSet, ApiError> {
    let mut set = ScopeSet::empty();
    for (i, n) in names.iter().enumerate() {
        match Scope::parse(n) {
            Some(s) if !s.is_reserved() => set.insert(s),
            _ => {
                return Err(ApiError::invalid(
                    crate::loc!["body", "scopes", i],
                    "Input should be a supported scope",
                    Value::from(n.clone()),
                ))
            }
        }
    }
    Ok(set)
}

async fn store_pat(
    state: &AppState,
    user: UserId,
    scopes: ScopeSet,
    comment: &str,
    expires_at: Option<DateTime<Utc>>,
) -> Result<(PersonalAccessToken, String), ApiError> {
    let _cap = state.lock_user_caps(user).await;
    let max = state.settings.retention.max_personal_access_tokens_per_user;
    if state.store.count(PAT_BY_USER, &user.key()).await? >= u64::from(max) {
        return Err(ApiError::NotPermitted(format!(
            "You have reached the limit of {max} personal access tokens; delete one first."
        )));
    }
    let (pat, token) = new_pat(
        &state.hasher,
        user,
        scopes,
        comment,
        expires_at,
        state.now(),
    );
    let mut batch = Batch::new();
    batch.put(&pat, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    Ok((pat, token))
}

async fn create(
    state: web::Data<AppState>,
    auth: Auth<UserAccount>,
    body: ValidJson<CreatePat>,
) -> Result<Created<PersonalAccessTokenCreateResponse>, ApiError> {
    let user = web_user(&auth)?;
    let scopes = parse_scopes(&body.value.scopes)?;
    let expires_at = match body.value.expires_in {
        None => None,
        Some(s) => Some(expiry(state.now(), s)?),
    };
    let (pat, token) = store_pat(&state, user, scopes, &body.value.comment, expires_at).await?;
    Ok(Created(PersonalAccessTokenCreateResponse::new(&pat, token)))
}

/// The longest lifetime a token may be given: ten years (the settings page's 3650 days).
const MAX_EXPIRES_IN_SECS: i64 = 3650 * 24 * 60 * 60;

/// When a token created at `now` with `expires_in` seconds expires: 1 second to ten years,
/// else 422 at `["body", "expires_in"]` (never an overflowing date).
fn expiry(now: DateTime<Utc>, expires_in: i64) -> Result<DateTime<Utc>, ApiError> {
    let invalid = |msg: &str| {
        ApiError::invalid(
            crate::loc!["body", "expires_in"],
            msg,
            Value::from(expires_in),
        )
    };
    if expires_in <= 0 {
        return Err(invalid("Input should be greater than 0"));
    }
    if expires_in > MAX_EXPIRES_IN_SECS {
        return Err(invalid(&format!(
            "Input should be less than or equal to {MAX_EXPIRES_IN_SECS}"
        )));
    }
    chrono::TimeDelta::try_seconds(expires_in)
        .and_then(|d| now.checked_add_signed(d))
        .ok_or_else(|| invalid("Input is out of range"))
}

async fn user_pats(state: &AppState, user: UserId) -> Result<Vec<PersonalAccessToken>, ApiError> {
    let tenants = [user.key()];
    let page = state
        .store
        .page(&PageQuery {
            index: PAT_BY_USER,
            tenants: &tenants,
            direction: Direction::Desc,
            offset: 0,
            limit: 1000,
        })
        .await?;
    Ok(state
        .store
        .get_many::<PersonalAccessToken>(&page.ids)
        .await?
        .into_iter()
        .map(|p| p.value)
        .filter(|p| p.deleted_at.is_none())
        .collect())
}

async fn list(
    state: web::Data<AppState>,
    auth: Auth<UserAccount>,
) -> Result<web::Json<ListResource<PersonalAccessTokenView>>, ApiError> {
    let user = web_user(&auth)?;
    let pats = user_pats(&state, user).await?;
    let total = pats.len() as u64;
    // One page holds them all (at most the per-user cap).
    Ok(web::Json(ListResource {
        items: pats.iter().map(PersonalAccessTokenView::from).collect(),
        pagination: Pagination {
            total_count: total,
            max_page: u64::from(total > 0),
        },
    }))
}

async fn revoke_pat(state: &AppState, user: UserId, id: &str) -> Result<bool, ApiError> {
    let Ok(id) = id.parse::<PatId>() else {
        return Ok(false);
    };
    let Some(stored) = state.store.get::<PersonalAccessToken>(&id.key()).await? else {
        return Ok(false);
    };
    if stored.value.user_id != user || stored.value.deleted_at.is_some() {
        return Ok(false);
    }
    let mut pat = stored.value;
    pat.deleted_at = Some(state.now());
    let mut batch = Batch::new();
    batch.put(&pat, Expect::Rev(stored.rev))?;
    state.store.commit_durable(&batch).await?;
    Ok(true)
}

async fn delete(
    state: web::Data<AppState>,
    auth: Auth<UserAccount>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let user = web_user(&auth)?;
    if revoke_pat(&state, user, &path).await? {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(ApiError::not_found())
    }
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
    let tokens = user_pats(state, user)
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
    let Ok(scopes) = parse_scopes(&names) else {
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
    let (_, token) = store_pat(&state, user, scopes, &comment, expires_at).await?;
    render_settings(&state, &req, user, Some(token), None, 200).await
}

async fn settings_revoke(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let form = super::parse_form(&body);
    if !csrf_ok(&state, &req, super::field(&form, "csrf_token")) {
        return Err(error_page(
            403,
            "Request refused",
            "CSRF check failed; reload the page and try again.",
        ));
    }
    let Some(s) = session::current(&state, &req).await? else {
        return Ok(to_login());
    };
    revoke_pat(&state, s.value.user_id, &path).await?;
    Ok(HttpResponse::SeeOther()
        .insert_header((actix_web::http::header::LOCATION, "/settings/tokens"))
        .finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_is_bounded_and_never_overflows() {
        let now = Utc::now();
        assert_eq!(expiry(now, 60).unwrap(), now + Duration::seconds(60));
        assert!(expiry(now, MAX_EXPIRES_IN_SECS).is_ok());
        for bad in [
            0,
            -1,
            MAX_EXPIRES_IN_SECS + 1,
            10_000_000_000_000_000,
            i64::MAX,
            i64::MIN,
        ] {
            match expiry(now, bad) {
                Err(ApiError::Validation(errors)) => assert_eq!(errors.len(), 1),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
