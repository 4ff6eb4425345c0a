//! Personal access tokens for a signed-in browser: the `/v1/personal_access_tokens/` API
//! (reference 6.2; web session only, like Polar), over `crate::app::tokens`.

use actix_web::{web, HttpResponse};

use crate::api::oauth2::{
    PersonalAccessTokenCreate as CreatePat, PersonalAccessTokenCreateResponse,
    PersonalAccessTokenView,
};
use crate::api::{Created, ListResource, Pagination};
use crate::app::tokens;
use crate::auth::AuthMethod;
use crate::domain::ids::UserId;
use crate::error::{ApiError, BearerError};
use crate::extract::auth::UserAccount;
use crate::extract::{Auth, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/personal_access_tokens/", { get => list, post => create });
    crate::resource!(cfg, "/v1/personal_access_tokens/{id}", { delete => delete });
}

/// The web-session user; tokens cannot manage tokens or OAuth2 clients (Polar:
/// `web_default`, which only a browser session carries).
pub(super) fn web_user(auth: &Auth<UserAccount>) -> Result<UserId, ApiError> {
    match (auth.principal.subject.user(), auth.principal.method) {
        (Some(u), AuthMethod::WebSession) => Ok(u),
        _ => Err(ApiError::Bearer(BearerError::InsufficientScope {
            required: "web_default".into(),
        })),
    }
}

async fn create(
    state: web::Data<AppState>,
    auth: Auth<UserAccount>,
    body: ValidJson<CreatePat>,
) -> Result<Created<PersonalAccessTokenCreateResponse>, ApiError> {
    let user = web_user(&auth)?;
    let scopes = tokens::parse_scopes(&body.value.scopes)?;
    let expires_at = match body.value.expires_in {
        None => None,
        Some(s) => Some(tokens::expiry(state.now(), s)?),
    };
    let (pat, token) =
        tokens::create(&state, user, scopes, &body.value.comment, expires_at).await?;
    Ok(Created(PersonalAccessTokenCreateResponse::new(&pat, token)))
}

async fn list(
    state: web::Data<AppState>,
    auth: Auth<UserAccount>,
) -> Result<web::Json<ListResource<PersonalAccessTokenView>>, ApiError> {
    let user = web_user(&auth)?;
    let pats = tokens::list(&state, user).await?;
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

async fn delete(
    state: web::Data<AppState>,
    auth: Auth<UserAccount>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let user = web_user(&auth)?;
    if tokens::revoke(&state, user, &path).await? {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(ApiError::not_found())
    }
}
