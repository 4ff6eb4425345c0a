//! The token, introspection, revocation and userinfo endpoints, discovery and the JWKS.

use std::collections::HashMap;

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::{DateTime, Duration, Utc};
use tollgate_storage::{Batch, Direction, Expect, PageQuery, StorageError, Stored};

use super::id_token::{self, IdTokenInput};
use super::{field, parse_form, pkce, scopes};
use crate::api::oauth2::{
    IntrospectTokenResponse, JwkSet, OpenIdConfiguration, RevokeTokenResponse,
    TokenIntrospectionRequest, TokenRequest, TokenResponse, TokenTypeHint, UserInfo,
};
use crate::auth::tokens::{
    ACCESS_TOKEN_ORG_PREFIX, ACCESS_TOKEN_USER_PREFIX, REFRESH_TOKEN_ORG_PREFIX,
    REFRESH_TOKEN_USER_PREFIX,
};
use crate::auth::{Scope, ScopeSet};
use crate::credentials::bearer::find_client;
use crate::credentials::{bearer_token, resolve_oauth2};
use crate::domain::ids::{OAuth2TokenId, TokenFamilyId, UserId};
use crate::domain::oauth2::{
    AuthorizationCode, ClientAuthMethod, OAuth2Client, OAuth2Token, OAuthSub,
    SpentAuthorizationCode, OAUTH2_TOKEN_BY_FAMILY,
};
use crate::domain::organization::Organization;
use crate::domain::user::User;
use crate::error::{ApiError, BearerError};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/oauth2/token", { post => token });
    crate::resource!(cfg, "/v1/oauth2/introspect", { post => introspect });
    crate::resource!(cfg, "/v1/oauth2/revoke", { post => revoke });
    crate::resource!(cfg, "/v1/oauth2/userinfo", { get => userinfo, post => userinfo });
    crate::resource!(cfg, "/.well-known/openid-configuration", { get => openid_configuration });
    crate::resource!(cfg, "/.well-known/jwks.json", { get => jwks });
}

fn invalid_client() -> ApiError {
    ApiError::oauth("invalid_client", "Client authentication failed.")
}

/// The client credentials of a request: `client_secret_basic` (an `Authorization: Basic`
/// header) or `client_secret_post` / `none` (form fields). A bearer header (Polar's SDK
/// sends one everywhere) is not a client credential and is ignored. `client_id` and
/// `client_secret` are the form's fields.
fn client_credentials(
    req: &HttpRequest,
    client_id: Option<&str>,
    client_secret: Option<&str>,
) -> Result<(String, Option<String>, ClientAuthMethod), ApiError> {
    let basic = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
        .map(|(_, value)| value.trim().to_string());
    if let Some(value) = basic {
        let decoded = STANDARD.decode(value).map_err(|_| invalid_client())?;
        let decoded = String::from_utf8(decoded).map_err(|_| invalid_client())?;
        let (id, secret) = decoded.split_once(':').ok_or_else(invalid_client)?;
        let id = form_urlencoded::parse(format!("a={id}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        let secret = form_urlencoded::parse(format!("a={secret}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        return Ok((id, Some(secret), ClientAuthMethod::ClientSecretBasic));
    }
    let id = client_id.ok_or_else(invalid_client)?;
    match client_secret {
        Some(secret) => Ok((
            id.to_string(),
            Some(secret.to_string()),
            ClientAuthMethod::ClientSecretPost,
        )),
        None => Ok((id.to_string(), None, ClientAuthMethod::None)),
    }
}

/// Authenticates the calling client with its registered method. `allow_public` lets a
/// public client identify itself by `client_id` alone.
pub async fn authenticate_client(
    state: &AppState,
    req: &HttpRequest,
    client_id: Option<&str>,
    client_secret: Option<&str>,
    allow_public: bool,
) -> Result<OAuth2Client, ApiError> {
    let (id, secret, method) = client_credentials(req, client_id, client_secret)?;
    let client = find_client(state, &id)
        .await?
        .ok_or_else(invalid_client)?
        .value;
    if method != client.auth_method || (method == ClientAuthMethod::None && !allow_public) {
        return Err(invalid_client());
    }
    if let Some(secret) = secret {
        if !state.hasher.verify(&secret, &client.client_secret_hash) {
            return Err(invalid_client());
        }
    }
    Ok(client)
}

/// The rate limits of the token, introspection and revocation endpoints: per client address,
/// then per the client the request names (before it is authenticated, so guessing a
/// client's secret is limited too).
fn limit(
    state: &AppState,
    req: &HttpRequest,
    body: &web::Bytes,
) -> Result<crate::ratelimit::Report, ApiError> {
    let ip = crate::client_ip::client_ip(&state.trusted_proxies, req);
    let form = parse_form(body);
    let client_id = client_credentials(
        req,
        field(&form, "client_id"),
        field(&form, "client_secret"),
    )
    .ok()
    .map(|(id, _, _)| id);
    Ok(state.limits.oauth(ip, client_id.as_deref())?)
}

async fn read_form(body: web::Bytes) -> HashMap<String, String> {
    parse_form(&body)
}

fn no_store(mut res: HttpResponse) -> HttpResponse {
    let headers = res.headers_mut();
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    headers.insert(header::PRAGMA, header::HeaderValue::from_static("no-cache"));
    res
}

/// The `iss` of id_tokens and introspection, and the base of discovery URLs.
pub fn issuer(state: &AppState) -> String {
    state.public_url.clone()
}

async fn token(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let report = limit(&state, &req, &body)?;
    let mut res = token_inner(state, req, body).await?;
    crate::error::add_rate_limit_headers(&mut res, &report);
    Ok(res)
}

async fn token_inner(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let form = TokenRequest::from_form(&read_form(body).await);
    let client = authenticate_client(
        &state,
        &req,
        form.client_id.as_deref(),
        form.client_secret.as_deref(),
        true,
    )
    .await?;
    let grant = form
        .grant_type
        .as_deref()
        .ok_or_else(|| ApiError::oauth("invalid_request", "Missing \"grant_type\" in request."))?;
    let body = match grant {
        "authorization_code" | "refresh_token" if !client.allows_grant(grant) => {
            return Err(ApiError::oauth(
                "unauthorized_client",
                "The client may not use this grant type.",
            ))
        }
        "authorization_code" => authorization_code_grant(&state, &client, &form).await?,
        "refresh_token" => refresh_token_grant(&state, &client, &form).await?,
        _ => {
            return Err(ApiError::oauth(
                "unsupported_grant_type",
                "Unsupported \"grant_type\".",
            ))
        }
    };
    Ok(no_store(HttpResponse::Ok().json(body)))
}

fn invalid_code() -> ApiError {
    ApiError::oauth("invalid_grant", "Invalid \"code\" in request.")
}

async fn authorization_code_grant(
    state: &AppState,
    client: &OAuth2Client,
    form: &TokenRequest,
) -> Result<TokenResponse, ApiError> {
    let code = form
        .code
        .as_deref()
        .ok_or_else(|| ApiError::oauth("invalid_request", "Missing \"code\" in request."))?;
    let hash = state.hasher.hash(code);
    let Some(stored) = state.store.get::<AuthorizationCode>(&hash).await? else {
        // A code presented again after its exchange: refuse it and revoke every token
        // issued from it (RFC 6749 4.1.2), since one of the two presenters stole it.
        if let Some(spent) = state.store.get::<SpentAuthorizationCode>(&hash).await? {
            if spent.value.client_id == client.client_id {
                revoke_family(state, spent.value.family, state.now()).await?;
                tracing::warn!(client_id = %client.client_id, "authorization code reused; the tokens issued from it are revoked");
            }
        }
        return Err(invalid_code());
    };
    if stored.value.client_id != client.client_id {
        return Err(invalid_code());
    }
    // Single use: the code is replaced by its spent record (naming the token family this
    // exchange issues) before anything else is checked, so a failed or replayed exchange
    // can never be retried with the same code, and a replay finds what to revoke.
    let family = TokenFamilyId::new();
    let spent = SpentAuthorizationCode {
        code_hash: hash.to_vec(),
        client_id: client.client_id.clone(),
        family,
        spent_at: state.now(),
        expires_at: stored.value.expires_at,
    };
    let mut batch = Batch::new();
    batch.delete::<AuthorizationCode>(&hash, Expect::Rev(stored.rev));
    batch.put(&spent, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) => {}
        Err(StorageError::Conflict { .. }) => return Err(invalid_code()),
        Err(e) => return Err(e.into()),
    }
    let code = stored.value;
    let now = state.now();
    if now >= code.expires_at {
        return Err(invalid_code());
    }
    let sent_uri = form.redirect_uri.as_deref();
    let uri_ok = match sent_uri {
        Some(uri) => uri == code.redirect_uri,
        None => !code.redirect_uri_sent,
    };
    if !uri_ok {
        return Err(ApiError::oauth(
            "invalid_grant",
            "Invalid \"redirect_uri\" in request.",
        ));
    }
    let verifier = form.code_verifier.as_deref();
    match (&code.code_challenge, verifier) {
        (Some(_), None) => {
            return Err(ApiError::oauth(
                "invalid_request",
                "Missing \"code_verifier\"",
            ))
        }
        (None, None) if client.is_public() => {
            return Err(ApiError::oauth(
                "invalid_request",
                "Missing \"code_verifier\"",
            ))
        }
        // A verifier for a code issued without a challenge: the request and the exchange
        // disagree (a PKCE downgrade), so the code is refused (RFC 9700 2.1.1).
        (None, Some(_)) => {
            return Err(ApiError::oauth(
                "invalid_grant",
                "The code was issued without a code challenge.",
            ))
        }
        (Some(challenge), Some(v)) => {
            if !pkce::is_valid_value(v) {
                return Err(ApiError::oauth(
                    "invalid_request",
                    "Invalid \"code_verifier\"",
                ));
            }
            if !pkce::verify_s256(v, challenge) {
                return Err(ApiError::oauth("invalid_grant", "Code challenge failed."));
            }
        }
        _ => {}
    }
    let issue = Issue {
        client,
        sub: code.sub,
        user_id: code.user_id,
        scopes: code.scopes,
        family,
        auth_time: code.auth_time,
        nonce: code.nonce,
        with_refresh: client.allows_grant("refresh_token"),
        ttl_secs: state.settings.oauth2.access_token_ttl_secs,
    };
    let (row, response) = prepare_tokens(state, issue, now).await?;
    let mut batch = Batch::new();
    batch.put(&row, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    Ok(response)
}

fn invalid_refresh() -> ApiError {
    ApiError::oauth("invalid_grant", "Invalid \"refresh_token\" in request.")
}

/// What a refresh token presented at the token endpoint leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshDecision {
    /// Rotate: revoke this row and issue a new pair in the same family.
    Rotate,
    /// A refresh token that was already rotated: someone replayed it, so the whole family
    /// is revoked.
    RevokeFamily,
    /// Revoked, or issued to another client.
    Refuse,
}

pub fn decide_refresh(row: &OAuth2Token, client_id: &str) -> RefreshDecision {
    if row.client_id != client_id {
        RefreshDecision::Refuse
    } else if row.rotated_at.is_some() {
        RefreshDecision::RevokeFamily
    } else if row.is_revoked() {
        RefreshDecision::Refuse
    } else {
        RefreshDecision::Rotate
    }
}

async fn refresh_token_grant(
    state: &AppState,
    client: &OAuth2Client,
    form: &TokenRequest,
) -> Result<TokenResponse, ApiError> {
    let presented = form.refresh_token.as_deref().ok_or_else(|| {
        ApiError::oauth("invalid_request", "Missing \"refresh_token\" in request.")
    })?;
    let hash = state.hasher.hash(presented);
    let id = state
        .store
        .lookup_unique(&OAuth2Token::refresh_key(&hash))
        .await?
        .ok_or_else(invalid_refresh)?;
    let stored = state
        .store
        .get::<OAuth2Token>(&id)
        .await?
        .ok_or_else(invalid_refresh)?;
    let now = state.now();
    match decide_refresh(&stored.value, &client.client_id) {
        RefreshDecision::Refuse => return Err(invalid_refresh()),
        RefreshDecision::RevokeFamily => {
            revoke_family(state, stored.value.family, now).await?;
            tracing::warn!(client_id = %client.client_id, "rotated refresh token reused; token family revoked");
            return Err(invalid_refresh());
        }
        RefreshDecision::Rotate => {}
    }
    let old = stored.value.clone();
    let family = old.family;
    let scopes = match form.scope.as_deref() {
        None => old.scopes,
        Some(s) => {
            let requested = scopes::parse_requested(s)
                .map_err(|_| ApiError::oauth("invalid_scope", "Invalid \"scope\" in request."))?;
            if !requested.is_subset_of(old.scopes) {
                return Err(ApiError::oauth(
                    "invalid_scope",
                    "The requested scope exceeds the original grant.",
                ));
            }
            requested
        }
    };
    let issue = Issue {
        client,
        sub: old.sub,
        user_id: old.user_id,
        scopes,
        family: old.family,
        auth_time: old.auth_time,
        nonce: None,
        with_refresh: true,
        ttl_secs: state.settings.oauth2.refreshed_access_token_ttl_secs,
    };
    let (row, response) = prepare_tokens(state, issue, now).await?;
    let mut rotated = old;
    rotated.rotated_at = Some(now);
    rotated.refresh_revoked_at = Some(now);
    rotated.access_revoked_at = Some(now);
    let mut batch = Batch::new();
    batch.put(&rotated, Expect::Rev(stored.rev))?;
    batch.put(&row, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) => Ok(response),
        // A concurrent refresh with the same token won the race: the token was used twice,
        // which is reuse like any other, so the family goes (the winner's pair included).
        Err(StorageError::Conflict { .. }) => {
            revoke_family(state, family, now).await?;
            tracing::warn!(client_id = %client.client_id, "refresh token used concurrently; token family revoked");
            Err(invalid_refresh())
        }
        Err(e) => Err(e.into()),
    }
}

/// Revokes every token of a rotation family.
pub async fn revoke_family(
    state: &AppState,
    family: TokenFamilyId,
    now: DateTime<Utc>,
) -> Result<(), ApiError> {
    let tenants = [family.key()];
    let page = state
        .store
        .page(&PageQuery {
            index: OAUTH2_TOKEN_BY_FAMILY,
            tenants: &tenants,
            direction: Direction::Asc,
            offset: 0,
            limit: u64::MAX,
        })
        .await?;
    let mut batch = Batch::new();
    for row in state.store.get_many::<OAuth2Token>(&page.ids).await? {
        let mut t = row.value;
        t.access_revoked_at.get_or_insert(now);
        t.refresh_revoked_at.get_or_insert(now);
        batch.put(&t, Expect::Any)?;
    }
    state.store.commit_durable(&batch).await?;
    Ok(())
}

struct Issue<'a> {
    client: &'a OAuth2Client,
    sub: OAuthSub,
    user_id: UserId,
    scopes: ScopeSet,
    family: TokenFamilyId,
    auth_time: DateTime<Utc>,
    nonce: Option<String>,
    with_refresh: bool,
    ttl_secs: u64,
}

/// A new token row and the token response for it (with a signed id_token).
async fn prepare_tokens(
    state: &AppState,
    issue: Issue<'_>,
    now: DateTime<Utc>,
) -> Result<(OAuth2Token, TokenResponse), ApiError> {
    let (at_prefix, rt_prefix) = match issue.sub {
        OAuthSub::User(_) => (ACCESS_TOKEN_USER_PREFIX, REFRESH_TOKEN_USER_PREFIX),
        OAuthSub::Organization(_) => (ACCESS_TOKEN_ORG_PREFIX, REFRESH_TOKEN_ORG_PREFIX),
    };
    let access = crate::auth::tokens::generate(at_prefix, 32);
    let refresh = issue
        .with_refresh
        .then(|| crate::auth::tokens::generate(rt_prefix, 32));
    let row = OAuth2Token {
        id: OAuth2TokenId::new(),
        family: issue.family,
        client_id: issue.client.client_id.clone(),
        sub: issue.sub,
        user_id: issue.user_id,
        scopes: issue.scopes,
        access_token_hash: state.hasher.hash(&access).to_vec(),
        refresh_token_hash: refresh.as_ref().map(|r| state.hasher.hash(r).to_vec()),
        issued_at: now,
        expires_at: now + Duration::seconds(issue.ttl_secs as i64),
        auth_time: issue.auth_time,
        access_revoked_at: None,
        refresh_revoked_at: None,
        rotated_at: None,
    };
    let (email, name) = subject_claims(state, &row.sub, row.scopes).await?;
    let settings = &state.settings.oauth2;
    state
        .signing_keys
        .ensure(&state.store, settings.signing_key_bits, now)
        .await
        .map_err(ApiError::internal)?;
    let claims = id_token::claims(IdTokenInput {
        issuer: &issuer(state),
        sub: row.sub.id_string(),
        client_id: &issue.client.client_id,
        now,
        ttl_secs: settings.id_token_ttl_secs as i64,
        auth_time: issue.auth_time,
        nonce: issue.nonce,
        access_token: &access,
        email,
        name,
    });
    let id_token = state
        .signing_keys
        .sign(&claims)
        .map_err(ApiError::internal)?;
    let response = TokenResponse::new(access, issue.ttl_secs, refresh, issue.scopes, id_token);
    Ok((row, response))
}

/// `(email, email_verified)` and `name` claims.
type SubjectClaims = (Option<(String, bool)>, Option<String>);

/// The userinfo claims a subject's granted scopes allow: `(email, email_verified)` with the
/// `email` scope for users; the organization's slug as `name` with `openid`.
async fn subject_claims(
    state: &AppState,
    sub: &OAuthSub,
    scopes: ScopeSet,
) -> Result<SubjectClaims, ApiError> {
    match sub {
        OAuthSub::User(u) if scopes.contains(Scope::Email) => {
            let user = state.store.get::<User>(&u.key()).await?;
            Ok((user.map(|u| (u.value.email, u.value.email_verified)), None))
        }
        OAuthSub::Organization(o) if scopes.contains(Scope::Openid) => {
            let org = state.store.get::<Organization>(&o.key()).await?;
            Ok((None, org.map(|o| o.value.slug)))
        }
        _ => Ok((None, None)),
    }
}

/// A token presented to introspection or revocation: its row and which kind it is.
async fn find_token(
    state: &AppState,
    token: &str,
    hint: Option<TokenTypeHint>,
) -> Result<Option<(Stored<OAuth2Token>, TokenTypeHint)>, ApiError> {
    use TokenTypeHint::{AccessToken, RefreshToken};
    let hash = state.hasher.hash(token);
    let order = if hint == Some(RefreshToken) {
        [RefreshToken, AccessToken]
    } else {
        [AccessToken, RefreshToken]
    };
    for kind in order {
        let key = match kind {
            AccessToken => OAuth2Token::access_key(&hash),
            RefreshToken => OAuth2Token::refresh_key(&hash),
        };
        if let Some(id) = state.store.lookup_unique(&key).await? {
            if let Some(row) = state.store.get::<OAuth2Token>(&id).await? {
                return Ok(Some((row, kind)));
            }
        }
    }
    Ok(None)
}

fn check_hint(form: &TokenIntrospectionRequest) -> Result<Option<TokenTypeHint>, ApiError> {
    match form.token_type_hint.as_deref() {
        None => Ok(None),
        Some("access_token") => Ok(Some(TokenTypeHint::AccessToken)),
        Some("refresh_token") => Ok(Some(TokenTypeHint::RefreshToken)),
        Some(_) => Err(ApiError::oauth(
            "unsupported_token_type",
            "Unsupported \"token_type_hint\".",
        )),
    }
}

/// The authenticated client and the token of an introspection or revocation request.
async fn read_token_request(
    state: &AppState,
    req: &HttpRequest,
    form: &TokenIntrospectionRequest,
    allow_public: bool,
) -> Result<(OAuth2Client, String), ApiError> {
    let client = authenticate_client(
        state,
        req,
        form.client_id.as_deref(),
        form.client_secret.as_deref(),
        allow_public,
    )
    .await?;
    let token = form
        .token
        .clone()
        .ok_or_else(|| ApiError::oauth("invalid_request", "Missing \"token\" in request."))?;
    Ok((client, token))
}

async fn introspect(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let report = limit(&state, &req, &body)?;
    let mut res = introspect_inner(state, req, body).await?;
    crate::error::add_rate_limit_headers(&mut res, &report);
    Ok(res)
}

async fn introspect_inner(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let form = TokenIntrospectionRequest::from_form(&read_form(body).await);
    let (client, token) = read_token_request(&state, &req, &form, false).await?;
    let hint = check_hint(&form)?;
    let now = state.now();
    let found = find_token(&state, &token, hint)
        .await?
        .filter(|(row, kind)| {
            let row = &row.value;
            row.client_id == client.client_id
                && !row.is_revoked()
                && (*kind == TokenTypeHint::RefreshToken || now < row.expires_at)
        });
    let body = match found {
        Some((row, kind)) => IntrospectTokenResponse::active(&row.value, kind, issuer(&state)),
        None => IntrospectTokenResponse::inactive(&client.client_id, hint, issuer(&state)),
    };
    Ok(no_store(HttpResponse::Ok().json(body)))
}

async fn revoke(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let report = limit(&state, &req, &body)?;
    let mut res = revoke_inner(state, req, body).await?;
    crate::error::add_rate_limit_headers(&mut res, &report);
    Ok(res)
}

async fn revoke_inner(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let form = TokenIntrospectionRequest::from_form(&read_form(body).await);
    let (client, token) = read_token_request(&state, &req, &form, true).await?;
    let hint = check_hint(&form)?;
    let Some((row, _)) = find_token(&state, &token, hint).await? else {
        return Ok(no_store(HttpResponse::Ok().json(RevokeTokenResponse {})));
    };
    if row.value.client_id != client.client_id {
        return Err(ApiError::oauth(
            "invalid_grant",
            "The token was not issued to this client.",
        ));
    }
    let now = state.now();
    let mut t = row.value;
    t.access_revoked_at.get_or_insert(now);
    if hint != Some(TokenTypeHint::AccessToken) {
        t.refresh_revoked_at.get_or_insert(now);
    }
    let mut batch = Batch::new();
    batch.put(&t, Expect::Any)?;
    state.store.commit_durable(&batch).await?;
    Ok(no_store(HttpResponse::Ok().json(RevokeTokenResponse {})))
}

/// `GET|POST /v1/oauth2/userinfo`: OAuth2 access tokens only (not PATs).
async fn userinfo(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<web::Json<UserInfo>, ApiError> {
    let token = bearer_token(&req).ok_or(ApiError::Unauthorized)?;
    let (_, row) = resolve_oauth2(&state, &token)
        .await?
        .ok_or(ApiError::Bearer(BearerError::InvalidToken))?;
    let (email, name) = subject_claims(&state, &row.sub, row.scopes).await?;
    Ok(web::Json(UserInfo::new(row.sub.id_string(), email, name)))
}

async fn openid_configuration(state: web::Data<AppState>) -> web::Json<OpenIdConfiguration> {
    web::Json(OpenIdConfiguration::new(
        &issuer(&state),
        &crate::credentials::session::auth_url(&state),
        scopes::supported(),
    ))
}

async fn jwks(state: web::Data<AppState>) -> Result<web::Json<JwkSet>, ApiError> {
    let now = state.now();
    state
        .signing_keys
        .ensure(&state.store, state.settings.oauth2.signing_key_bits, now)
        .await
        .map_err(ApiError::internal)?;
    Ok(web::Json(state.signing_keys.jwk_set(now)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn row() -> OAuth2Token {
        let t0 = Utc.timestamp_opt(0, 0).unwrap();
        OAuth2Token {
            id: OAuth2TokenId::new(),
            family: TokenFamilyId::new(),
            client_id: "c1".into(),
            sub: OAuthSub::User(UserId::new()),
            user_id: UserId::new(),
            scopes: ScopeSet::empty(),
            access_token_hash: vec![1],
            refresh_token_hash: Some(vec![2]),
            issued_at: t0,
            expires_at: t0,
            auth_time: t0,
            access_revoked_at: None,
            refresh_revoked_at: None,
            rotated_at: None,
        }
    }

    #[test]
    fn refresh_family_rules() {
        let live = row();
        assert_eq!(decide_refresh(&live, "c1"), RefreshDecision::Rotate);
        assert_eq!(decide_refresh(&live, "other"), RefreshDecision::Refuse);
        let mut revoked = row();
        revoked.refresh_revoked_at = Some(Utc::now());
        assert_eq!(decide_refresh(&revoked, "c1"), RefreshDecision::Refuse);
        let mut rotated = revoked.clone();
        rotated.rotated_at = Some(Utc::now());
        assert_eq!(
            decide_refresh(&rotated, "c1"),
            RefreshDecision::RevokeFamily
        );
        assert_eq!(decide_refresh(&rotated, "other"), RefreshDecision::Refuse);
    }
}
