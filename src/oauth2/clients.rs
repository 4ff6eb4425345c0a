//! Dynamic client registration (RFC 7591) and client configuration (RFC 7592).
//!
//! `POST /v1/oauth2/register` and `GET /v1/oauth2/` take the browser session of a signed-in
//! user only (Polar: web session User); a personal access token or an OAuth2 access token
//! gets 403 `insufficient_scope`, as on the personal access token endpoints. `GET`, `PUT`
//! and `DELETE /v1/oauth2/register/{client_id}` take the owner's browser session or the
//! client's registration access token; any other bearer token is 401 `invalid_client`.
//! The client secret and registration token are shown once, when issued; only their keyed
//! hashes are stored.

use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::{json, Value};
use tollgate_storage::{Batch, Direction, Expect, PageQuery, Stored};

use super::{redirect, scopes};
use crate::api::oauth2::{
    OAuth2ClientConfiguration as ClientConfiguration,
    OAuth2ClientConfigurationUpdate as ClientUpdate, OAuth2ClientCreated, OAuth2ClientView,
};
use crate::api::{ListResource, Pagination};
use crate::auth::tokens::{
    generate, CLIENT_ID_PREFIX, CLIENT_SECRET_PREFIX, REGISTRATION_TOKEN_PREFIX,
};
use crate::credentials::bearer::find_client;
use crate::credentials::{bearer_token, session};
use crate::domain::ids::{OAuth2ClientId, UserId};
use crate::domain::oauth2::{ClientAuthMethod, OAuth2Client, OAuth2Grant, OAUTH2_CLIENT_BY_OWNER};
use crate::error::{ApiError, FieldError};
use crate::extract::auth::UserAccount;
use crate::extract::{Auth, ValidJson};
use crate::extract::{ListParams, QueryParams};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/oauth2/", { get => list });
    crate::resource!(cfg, "/v1/oauth2/register", { post => create });
    crate::resource!(cfg, "/v1/oauth2/register/{client_id}", {
        get => get,
        put => update,
        delete => delete,
    });
}

/// The validated metadata of a configuration.
struct Metadata {
    client_name: String,
    redirect_uris: Vec<String>,
    auth_method: ClientAuthMethod,
    grant_types: Vec<String>,
    response_types: Vec<String>,
    scopes: crate::auth::ScopeSet,
    client_uri: Option<String>,
    logo_uri: Option<String>,
    tos_uri: Option<String>,
    policy_uri: Option<String>,
}

fn optional_url(
    name: &str,
    value: &Option<String>,
    errors: &mut Vec<FieldError>,
) -> Option<String> {
    let v = value.as_deref().map(str::trim).filter(|v| !v.is_empty())?;
    match url::Url::parse(v) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => Some(v.to_string()),
        _ => {
            errors.push(FieldError::new(
                "url_parsing",
                crate::loc!["body", name],
                "Input should be a valid URL",
                Value::from(v),
            ));
            None
        }
    }
}

fn validate(c: &ClientConfiguration) -> Result<Metadata, ApiError> {
    let mut errors = Vec::new();
    if c.client_name.trim().is_empty() {
        errors.push(FieldError::new(
            "string_too_short",
            crate::loc!["body", "client_name"],
            "String should have at least 1 character",
            Value::from(c.client_name.clone()),
        ));
    }
    if c.redirect_uris.is_empty() {
        errors.push(FieldError::new(
            "too_short",
            crate::loc!["body", "redirect_uris"],
            "List should have at least 1 item after validation, not 0",
            json!([]),
        ));
    }
    for (i, uri) in c.redirect_uris.iter().enumerate() {
        if let Err(msg) = redirect::check_redirect_uri(uri) {
            errors.push(FieldError::new(
                "value_error",
                crate::loc!["body", "redirect_uris", i],
                format!("Value error, {msg}"),
                Value::from(uri.clone()),
            ));
        }
    }
    let auth_method = match c.token_endpoint_auth_method.as_deref() {
        None => ClientAuthMethod::ClientSecretPost,
        Some(m) => ClientAuthMethod::parse(m).unwrap_or_else(|| {
            errors.push(FieldError::new(
                "literal_error",
                crate::loc!["body", "token_endpoint_auth_method"],
                "Input should be 'client_secret_basic', 'client_secret_post' or 'none'",
                Value::from(m),
            ));
            ClientAuthMethod::ClientSecretPost
        }),
    };
    let grant_types = c
        .grant_types
        .clone()
        .unwrap_or_else(|| vec!["authorization_code".into(), "refresh_token".into()]);
    for (i, g) in grant_types.iter().enumerate() {
        if !matches!(g.as_str(), "authorization_code" | "refresh_token") {
            errors.push(FieldError::new(
                "literal_error",
                crate::loc!["body", "grant_types", i],
                "Input should be 'authorization_code' or 'refresh_token'",
                Value::from(g.clone()),
            ));
        }
    }
    let response_types = c
        .response_types
        .clone()
        .unwrap_or_else(|| vec!["code".into()]);
    for (i, r) in response_types.iter().enumerate() {
        if r != "code" {
            errors.push(FieldError::new(
                "literal_error",
                crate::loc!["body", "response_types", i],
                "Input should be 'code'",
                Value::from(r.clone()),
            ));
        }
    }
    let scopes = match c.scope.as_deref() {
        None => scopes::supported(),
        Some(s) => scopes::parse_registered(s).unwrap_or_else(|bad| {
            errors.push(FieldError::new(
                "value_error",
                crate::loc!["body", "scope"],
                format!("Value error, unsupported scopes: {}", bad.join(" ")),
                Value::from(s),
            ));
            crate::auth::ScopeSet::empty()
        }),
    };
    let client_uri = optional_url("client_uri", &c.client_uri, &mut errors);
    let logo_uri = optional_url("logo_uri", &c.logo_uri, &mut errors);
    let tos_uri = optional_url("tos_uri", &c.tos_uri, &mut errors);
    let policy_uri = optional_url("policy_uri", &c.policy_uri, &mut errors);
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    Ok(Metadata {
        client_name: c.client_name.trim().to_string(),
        redirect_uris: c.redirect_uris.clone(),
        auth_method,
        grant_types,
        response_types,
        scopes,
        client_uri,
        logo_uri,
        tos_uri,
        policy_uri,
    })
}

async fn create(
    state: web::Data<AppState>,
    auth: Auth<UserAccount>,
    body: ValidJson<ClientConfiguration>,
) -> Result<web::Json<OAuth2ClientCreated>, ApiError> {
    let owner = super::pats::web_user(&auth)?;
    let meta = validate(&body.value)?;
    let _cap = state.lock_user_caps(owner).await;
    let max = state.settings.retention.max_oauth_clients_per_user;
    if state
        .store
        .count(OAUTH2_CLIENT_BY_OWNER, &owner.key())
        .await?
        >= u64::from(max)
    {
        return Err(ApiError::NotPermitted(format!(
            "You have reached the limit of {max} OAuth clients; delete one first."
        )));
    }
    // A public client (`none`) gets no secret: the field is an empty string (the SDK's
    // `OAuth2Client.client_secret` is a required string) and the stored hash is of a value
    // nobody knows.
    let secret = generate(CLIENT_SECRET_PREFIX, 32);
    let shown_secret = if meta.auth_method == ClientAuthMethod::None {
        ""
    } else {
        secret.as_str()
    };
    let registration_token = generate(REGISTRATION_TOKEN_PREFIX, 32);
    let client = OAuth2Client {
        id: OAuth2ClientId::new(),
        client_id: generate(CLIENT_ID_PREFIX, 16),
        client_secret_hash: state.hasher.hash(&secret).to_vec(),
        registration_token_hash: state.hasher.hash(&registration_token).to_vec(),
        owner,
        client_name: meta.client_name,
        redirect_uris: meta.redirect_uris,
        auth_method: meta.auth_method,
        grant_types: meta.grant_types,
        response_types: meta.response_types,
        scopes: meta.scopes,
        client_uri: meta.client_uri,
        logo_uri: meta.logo_uri,
        tos_uri: meta.tos_uri,
        policy_uri: meta.policy_uri,
        created_at: state.now(),
        modified_at: None,
        deleted_at: None,
    };
    let mut batch = Batch::new();
    batch.put(&client, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    // 200, not Polar's 201: Polar's SDK accepts only 200 here.
    Ok(web::Json(OAuth2ClientCreated::new(
        &client,
        shown_secret,
        registration_token,
        &state.public_url,
    )))
}

async fn list(
    state: web::Data<AppState>,
    auth: Auth<UserAccount>,
    req: HttpRequest,
) -> Result<web::Json<ListResource<OAuth2ClientView>>, ApiError> {
    let owner = super::pats::web_user(&auth)?;
    let mut q = QueryParams::parse(req.query_string());
    let ListParams { page, limit } = ListParams::from_query(&mut q);
    q.finish()?;
    let tenants = [owner.key()];
    let result = state
        .store
        .page(&PageQuery {
            index: OAUTH2_CLIENT_BY_OWNER,
            tenants: &tenants,
            direction: Direction::Desc,
            offset: (page - 1).saturating_mul(limit),
            limit,
        })
        .await?;
    let items = state
        .store
        .get_many::<OAuth2Client>(&result.ids)
        .await?
        .iter()
        .map(|c| OAuth2ClientView::new(&c.value, None))
        .collect();
    Ok(web::Json(ListResource {
        items,
        pagination: Pagination::new(result.total, limit),
    }))
}

/// The client named in the path, if the caller may manage it (RFC 7592 rules, Polar's
/// statuses): no credentials 400 `access_denied`; an unknown client, a wrong token or a
/// non-owner 401 `invalid_client`.
async fn managed_client(
    state: &AppState,
    req: &HttpRequest,
    client_id: &str,
) -> Result<Stored<OAuth2Client>, ApiError> {
    let client = find_client(state, client_id).await?;
    let owner_ok = |user: UserId| client.as_ref().is_some_and(|c| c.value.owner == user);
    let allowed = match bearer_token(req) {
        Some(token) if token.starts_with(REGISTRATION_TOKEN_PREFIX) => {
            client.as_ref().is_some_and(|c| {
                state
                    .hasher
                    .verify(&token, &c.value.registration_token_hash)
            })
        }
        // Only the registration access token: personal access tokens and OAuth2 access
        // tokens never manage clients.
        Some(_) => false,
        None => match session::current(state, req).await? {
            Some(s) => {
                session::same_origin_json(state, req)?;
                owner_ok(s.value.user_id)
            }
            None => {
                return Err(ApiError::oauth(
                    "access_denied",
                    "Credentials are required to manage a client.",
                ))
            }
        },
    };
    match client {
        Some(c) if allowed => Ok(c),
        _ => Err(ApiError::oauth(
            "invalid_client",
            "Unknown client or wrong credentials.",
        )),
    }
}

async fn get(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<web::Json<OAuth2ClientView>, ApiError> {
    let client = managed_client(&state, &req, &path).await?;
    Ok(web::Json(OAuth2ClientView::new(&client.value, None)))
}

async fn update(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    body: ValidJson<ClientUpdate>,
) -> Result<web::Json<OAuth2ClientView>, ApiError> {
    let stored = managed_client(&state, &req, &path).await?;
    if body.value.client_id.as_deref() != Some(path.as_str()) {
        return Err(ApiError::invalid(
            crate::loc!["body", "client_id"],
            "client_id must match the client being updated.",
            body.raw.get("client_id").cloned().unwrap_or(Value::Null),
        ));
    }
    let meta = validate(&body.value.merged(&stored.value))?;
    let mut c = stored.value;
    // Consent was given to the client as it was: a new redirect URI or a new way to
    // authenticate must be consented to again, not reached by a silent redirect.
    let reconsent = c.redirect_uris != meta.redirect_uris || c.auth_method != meta.auth_method;
    // A client that becomes confidential needs a secret, shown in this response only; one
    // that becomes public loses its secret.
    let new_secret = match (c.auth_method, meta.auth_method) {
        (ClientAuthMethod::None, m) if m != ClientAuthMethod::None => {
            Some(generate(CLIENT_SECRET_PREFIX, 32))
        }
        (m, ClientAuthMethod::None) if m != ClientAuthMethod::None => {
            c.client_secret_hash = state
                .hasher
                .hash(&generate(CLIENT_SECRET_PREFIX, 32))
                .to_vec();
            None
        }
        _ => None,
    };
    if let Some(secret) = &new_secret {
        c.client_secret_hash = state.hasher.hash(secret).to_vec();
    }
    c.client_name = meta.client_name;
    c.redirect_uris = meta.redirect_uris;
    c.auth_method = meta.auth_method;
    c.grant_types = meta.grant_types;
    c.response_types = meta.response_types;
    c.scopes = meta.scopes;
    c.client_uri = meta.client_uri;
    c.logo_uri = meta.logo_uri;
    c.tos_uri = meta.tos_uri;
    c.policy_uri = meta.policy_uri;
    c.modified_at = Some(state.now());
    let mut batch = Batch::new();
    batch.put(&c, Expect::Rev(stored.rev))?;
    if reconsent {
        forget_grants(&state, &c.client_id, &mut batch).await?;
    }
    state.store.commit_durable(&batch).await?;
    Ok(web::Json(OAuth2ClientView::new(&c, new_secret.as_deref())))
}

/// Adds the removal of every consent given to `client_id` to `batch`. Grants are keyed by
/// subject, so this scans them; client updates are rare.
async fn forget_grants(
    state: &AppState,
    client_id: &str,
    batch: &mut Batch,
) -> Result<(), ApiError> {
    for grant in state.store.scan::<OAuth2Grant>().await? {
        if grant.value.client_id == client_id {
            batch
                .delete::<OAuth2Grant>(&OAuth2Grant::key(&grant.value.sub, client_id), Expect::Any);
        }
    }
    Ok(())
}

async fn delete(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let stored = managed_client(&state, &req, &path).await?;
    let mut c = stored.value;
    c.deleted_at = Some(state.now());
    let mut batch = Batch::new();
    batch.put(&c, Expect::Rev(stored.rev))?;
    state.store.commit_durable(&batch).await?;
    Ok(HttpResponse::NoContent().finish())
}
