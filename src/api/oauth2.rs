//! OAuth 2.0 / OpenID Connect and personal access tokens in Polar's shapes: client
//! registration (RFC 7591/7592), the token, introspection (RFC 7662), revocation (RFC 7009)
//! and userinfo bodies, discovery and the JWKS, and the personal access token API. The
//! endpoints are in `crate::oauth2`; their error body is `crate::error::OAuthErrorBody`.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::domain::oauth2::{ClientAuthMethod, OAuth2Client, OAuth2Token, OAuthSub};
use crate::domain::pat::PersonalAccessToken;
use crate::domain::scope::ScopeSet;

// ---------------------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TokenEndpointAuthMethod {
    ClientSecretBasic,
    ClientSecretPost,
    None,
}

impl From<ClientAuthMethod> for TokenEndpointAuthMethod {
    fn from(m: ClientAuthMethod) -> Self {
        match m {
            ClientAuthMethod::ClientSecretBasic => TokenEndpointAuthMethod::ClientSecretBasic,
            ClientAuthMethod::ClientSecretPost => TokenEndpointAuthMethod::ClientSecretPost,
            ClientAuthMethod::None => TokenEndpointAuthMethod::None,
        }
    }
}

/// RFC 7591 client metadata.
// The enumerated fields are read as strings and checked by the registration endpoint,
// which names every wrong value in one 422.
#[derive(Debug, Deserialize, ToSchema)]
pub struct OAuth2ClientConfiguration {
    /// https, or http on localhost and loopback addresses.
    pub redirect_uris: Vec<String>,
    pub client_name: String,
    #[schema(value_type = Option<TokenEndpointAuthMethod>, nullable = false)]
    pub token_endpoint_auth_method: Option<String>,
    #[schema(nullable = false)]
    pub grant_types: Option<Vec<String>>,
    #[schema(nullable = false)]
    pub response_types: Option<Vec<String>>,
    /// Space-separated scopes the client may ask for.
    #[schema(nullable = false)]
    pub scope: Option<String>,
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
    pub tos_uri: Option<String>,
    pub policy_uri: Option<String>,
    /// On update: must be the client's id.
    #[schema(nullable = false)]
    pub client_id: Option<String>,
}

/// RFC 7592 client update: `client_id` names the client; every other field left out keeps
/// its stored value (Polar merges). An empty link clears it.
#[derive(Debug, Deserialize, ToSchema)]
pub struct OAuth2ClientConfigurationUpdate {
    /// Must be the client's id.
    #[schema(value_type = String, required = true)]
    pub client_id: Option<String>,
    #[schema(nullable = false)]
    pub redirect_uris: Option<Vec<String>>,
    #[schema(nullable = false)]
    pub client_name: Option<String>,
    #[schema(value_type = Option<TokenEndpointAuthMethod>, nullable = false)]
    pub token_endpoint_auth_method: Option<String>,
    #[schema(nullable = false)]
    pub grant_types: Option<Vec<String>>,
    #[schema(nullable = false)]
    pub response_types: Option<Vec<String>>,
    /// Space-separated scopes the client may ask for.
    #[schema(nullable = false)]
    pub scope: Option<String>,
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
    pub tos_uri: Option<String>,
    pub policy_uri: Option<String>,
}

impl OAuth2ClientConfigurationUpdate {
    /// The client's configuration with this update merged in.
    pub fn merged(self, c: &OAuth2Client) -> OAuth2ClientConfiguration {
        OAuth2ClientConfiguration {
            redirect_uris: self
                .redirect_uris
                .unwrap_or_else(|| c.redirect_uris.clone()),
            client_name: self.client_name.unwrap_or_else(|| c.client_name.clone()),
            token_endpoint_auth_method: Some(
                self.token_endpoint_auth_method
                    .unwrap_or_else(|| c.auth_method.as_str().to_string()),
            ),
            grant_types: Some(self.grant_types.unwrap_or_else(|| c.grant_types.clone())),
            response_types: Some(
                self.response_types
                    .unwrap_or_else(|| c.response_types.clone()),
            ),
            scope: Some(self.scope.unwrap_or_else(|| c.scopes.to_space_separated())),
            client_uri: self.client_uri.or_else(|| c.client_uri.clone()),
            logo_uri: self.logo_uri.or_else(|| c.logo_uri.clone()),
            tos_uri: self.tos_uri.or_else(|| c.tos_uri.clone()),
            policy_uri: self.policy_uri.or_else(|| c.policy_uri.clone()),
            client_id: self.client_id,
        }
    }
}

/// A registered client. `client_secret` is only shown when the secret is issued
/// (registration, or an update that makes a public client confidential); other reads, and
/// public clients, send an empty string (it is stored hashed).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = OAuth2Client)]
pub struct OAuth2ClientView {
    pub client_id: String,
    pub client_secret: String,
    pub client_id_issued_at: i64,
    /// Always 0: secrets do not expire.
    pub client_secret_expires_at: i64,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub token_endpoint_auth_method: TokenEndpointAuthMethod,
    pub grant_types: Vec<String>,
    pub response_types: Vec<String>,
    /// Space-separated.
    pub scope: String,
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
    pub tos_uri: Option<String>,
    pub policy_uri: Option<String>,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
}

impl OAuth2ClientView {
    /// The client, with `secret` when it was just issued.
    pub fn new(c: &OAuth2Client, secret: Option<&str>) -> Self {
        Self {
            client_id: c.client_id.clone(),
            client_secret: secret.unwrap_or("").to_string(),
            client_id_issued_at: c.created_at.timestamp(),
            client_secret_expires_at: 0,
            client_name: c.client_name.clone(),
            redirect_uris: c.redirect_uris.clone(),
            token_endpoint_auth_method: c.auth_method.into(),
            grant_types: c.grant_types.clone(),
            response_types: c.response_types.clone(),
            scope: c.scopes.to_space_separated(),
            client_uri: c.client_uri.clone(),
            logo_uri: c.logo_uri.clone(),
            tos_uri: c.tos_uri.clone(),
            policy_uri: c.policy_uri.clone(),
            created_at: c.created_at,
            modified_at: c.modified_at,
        }
    }
}

/// A newly registered client, with its registration access token (RFC 7592).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OAuth2ClientCreated {
    #[serde(flatten)]
    pub client: OAuth2ClientView,
    pub registration_access_token: String,
    pub registration_client_uri: String,
}

impl OAuth2ClientCreated {
    /// `public_url` is the API's base URL, under which the client's configuration lives.
    pub fn new(
        c: &OAuth2Client,
        secret: &str,
        registration_access_token: String,
        public_url: &str,
    ) -> Self {
        Self {
            client: OAuth2ClientView::new(c, Some(secret)),
            registration_access_token,
            registration_client_uri: format!("{public_url}/v1/oauth2/register/{}", c.client_id),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Token, introspection, revocation, userinfo
// ---------------------------------------------------------------------------------------

/// The non-empty value of a form field (an empty value counts as left out).
fn form_value(form: &HashMap<String, String>, name: &str) -> Option<String> {
    form.get(name).filter(|v| !v.is_empty()).cloned()
}

/// A token request: `authorization_code` (with `code`, `redirect_uri` and, when a
/// challenge was sent, `code_verifier`) or `refresh_token` (with `refresh_token`, and
/// optionally a narrower `scope`). Clients authenticate with these fields or HTTP Basic.
// Read from the form by `from_form`: a missing field is the endpoint's `invalid_request`,
// not a 422.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct TokenRequest {
    #[schema(value_type = String, required = true)]
    pub grant_type: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_verifier: Option<String>,
    pub refresh_token: Option<String>,
    pub scope: Option<String>,
}

impl TokenRequest {
    /// The fields of a parsed form (`crate::oauth2::parse_form`); empty values are absent.
    pub fn from_form(form: &HashMap<String, String>) -> Self {
        Self {
            grant_type: form_value(form, "grant_type"),
            client_id: form_value(form, "client_id"),
            client_secret: form_value(form, "client_secret"),
            code: form_value(form, "code"),
            redirect_uri: form_value(form, "redirect_uri"),
            code_verifier: form_value(form, "code_verifier"),
            refresh_token: form_value(form, "refresh_token"),
            scope: form_value(form, "scope"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TokenTypeHint {
    AccessToken,
    RefreshToken,
}

/// Introspection or revocation of a token by the client it was issued to.
// Read from the form by `from_form`: a missing `token` is the endpoint's `invalid_request`
// and an unknown `token_type_hint` its `unsupported_token_type`, not a 422.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct TokenIntrospectionRequest {
    #[schema(value_type = String, required = true)]
    pub token: Option<String>,
    #[schema(value_type = Option<TokenTypeHint>)]
    pub token_type_hint: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
}

impl TokenIntrospectionRequest {
    /// The fields of a parsed form (`crate::oauth2::parse_form`); empty values are absent.
    pub fn from_form(form: &HashMap<String, String>) -> Self {
        Self {
            token: form_value(form, "token"),
            token_type_hint: form_value(form, "token_type_hint"),
            client_id: form_value(form, "client_id"),
            client_secret: form_value(form, "client_secret"),
        }
    }
}

/// `Bearer`, the only token type issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum TokenType {
    Bearer,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TokenResponse {
    pub access_token: String,
    #[schema(inline)]
    pub token_type: TokenType,
    /// Seconds.
    pub expires_in: u64,
    /// Sent when the client may use the `refresh_token` grant.
    pub refresh_token: Option<String>,
    /// Space-separated.
    pub scope: String,
    pub id_token: String,
}

impl TokenResponse {
    pub fn new(
        access_token: String,
        expires_in: u64,
        refresh_token: Option<String>,
        scopes: ScopeSet,
        id_token: String,
    ) -> Self {
        Self {
            access_token,
            token_type: TokenType::Bearer,
            expires_in,
            refresh_token,
            scope: scopes.to_space_separated(),
            id_token,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubType {
    User,
    Organization,
}

impl From<&OAuthSub> for SubType {
    fn from(s: &OAuthSub) -> Self {
        match s {
            OAuthSub::User(_) => SubType::User,
            OAuthSub::Organization(_) => SubType::Organization,
        }
    }
}

/// RFC 7662; an inactive token has `active: false` and empty values in the other fields.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IntrospectTokenResponse {
    pub active: bool,
    pub client_id: String,
    pub token_type: TokenTypeHint,
    /// Space-separated.
    pub scope: String,
    pub sub_type: SubType,
    pub sub: String,
    pub aud: String,
    pub iss: String,
    pub exp: i64,
    pub iat: i64,
}

impl IntrospectTokenResponse {
    /// A live token of the asking client.
    pub fn active(row: &OAuth2Token, kind: TokenTypeHint, issuer: String) -> Self {
        Self {
            active: true,
            client_id: row.client_id.clone(),
            token_type: kind,
            scope: row.scopes.to_space_separated(),
            sub_type: (&row.sub).into(),
            sub: row.sub.id_string(),
            aud: row.client_id.clone(),
            iss: issuer,
            exp: row.expires_at.timestamp(),
            iat: row.issued_at.timestamp(),
        }
    }

    /// Anything else. RFC 7662 says nothing more about an inactive token; Polar's SDKs
    /// still require every field, so they are present with empty values that reveal nothing.
    pub fn inactive(client_id: &str, hint: Option<TokenTypeHint>, issuer: String) -> Self {
        Self {
            active: false,
            client_id: client_id.to_string(),
            token_type: hint.unwrap_or(TokenTypeHint::AccessToken),
            scope: String::new(),
            sub_type: SubType::User,
            sub: String::new(),
            aud: client_id.to_string(),
            iss: issuer,
            exp: 0,
            iat: 0,
        }
    }
}

/// Always `{}`.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct RevokeTokenResponse {}

/// The claims the token's scopes allow: `email` for users, the organization's `name`.
/// A claim the scopes do not allow is left out, not null (OpenID Connect Core 5.3.2).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UserInfo {
    pub sub: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub email_verified: Option<bool>,
}

impl UserInfo {
    /// `email` is `(address, verified)`.
    pub fn new(sub: String, email: Option<(String, bool)>, name: Option<String>) -> Self {
        Self {
            sub,
            name,
            email_verified: email.as_ref().map(|e| e.1),
            email: email.map(|e| e.0),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Discovery and keys
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GrantType {
    AuthorizationCode,
    RefreshToken,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResponseType {
    Code,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResponseMode {
    Query,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum CodeChallengeMethod {
    S256,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubjectType {
    Public,
}

/// The algorithm of id_token signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum SigningAlgorithm {
    RS256,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Claim {
    Sub,
    Name,
    Email,
    EmailVerified,
}

/// OpenID Provider metadata.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OpenIdConfiguration {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub jwks_uri: String,
    pub userinfo_endpoint: String,
    pub registration_endpoint: String,
    pub revocation_endpoint: String,
    pub introspection_endpoint: String,
    pub service_documentation: String,
    pub scopes_supported: Vec<String>,
    #[schema(inline)]
    pub response_types_supported: Vec<ResponseType>,
    #[schema(inline)]
    pub response_modes_supported: Vec<ResponseMode>,
    #[schema(inline)]
    pub grant_types_supported: Vec<GrantType>,
    pub token_endpoint_auth_methods_supported: Vec<TokenEndpointAuthMethod>,
    pub revocation_endpoint_auth_methods_supported: Vec<TokenEndpointAuthMethod>,
    pub introspection_endpoint_auth_methods_supported: Vec<TokenEndpointAuthMethod>,
    #[schema(inline)]
    pub subject_types_supported: Vec<SubjectType>,
    #[schema(inline)]
    pub id_token_signing_alg_values_supported: Vec<SigningAlgorithm>,
    #[schema(inline)]
    pub code_challenge_methods_supported: Vec<CodeChallengeMethod>,
    #[schema(inline)]
    pub claims_supported: Vec<Claim>,
}

impl OpenIdConfiguration {
    /// `issuer` is the API's base URL; `auth_url` the base URL of the browser pages.
    pub fn new(issuer: &str, auth_url: &str, scopes: ScopeSet) -> Self {
        use TokenEndpointAuthMethod::{ClientSecretBasic, ClientSecretPost, None as Public};
        Self {
            issuer: issuer.to_string(),
            authorization_endpoint: format!("{auth_url}/oauth2/authorize"),
            token_endpoint: format!("{issuer}/v1/oauth2/token"),
            jwks_uri: format!("{issuer}/.well-known/jwks.json"),
            userinfo_endpoint: format!("{issuer}/v1/oauth2/userinfo"),
            registration_endpoint: format!("{issuer}/v1/oauth2/register"),
            revocation_endpoint: format!("{issuer}/v1/oauth2/revoke"),
            introspection_endpoint: format!("{issuer}/v1/oauth2/introspect"),
            service_documentation: "https://polar.sh/docs".to_string(),
            scopes_supported: scopes.iter().map(|s| s.as_str().to_string()).collect(),
            response_types_supported: vec![ResponseType::Code],
            response_modes_supported: vec![ResponseMode::Query],
            grant_types_supported: vec![GrantType::AuthorizationCode, GrantType::RefreshToken],
            token_endpoint_auth_methods_supported: vec![
                ClientSecretBasic,
                ClientSecretPost,
                Public,
            ],
            revocation_endpoint_auth_methods_supported: vec![
                ClientSecretBasic,
                ClientSecretPost,
                Public,
            ],
            introspection_endpoint_auth_methods_supported: vec![
                ClientSecretBasic,
                ClientSecretPost,
            ],
            subject_types_supported: vec![SubjectType::Public],
            id_token_signing_alg_values_supported: vec![SigningAlgorithm::RS256],
            code_challenge_methods_supported: vec![CodeChallengeMethod::S256],
            claims_supported: vec![Claim::Sub, Claim::Name, Claim::Email, Claim::EmailVerified],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum KeyType {
    #[serde(rename = "RSA")]
    Rsa,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeyUse {
    Sig,
}

/// An RSA public key of the id_token signatures.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Jwk {
    #[schema(inline)]
    pub kty: KeyType,
    #[serde(rename = "use")]
    #[schema(inline)]
    pub usage: KeyUse,
    #[schema(inline)]
    pub alg: SigningAlgorithm,
    pub kid: String,
    /// Modulus, base64url.
    pub n: String,
    /// Exponent, base64url.
    pub e: String,
}

impl Jwk {
    /// The public key `(n, e)` (base64url) that verifies RS256 signatures made with `kid`.
    pub fn rs256(kid: &str, n: &str, e: &str) -> Self {
        Self {
            kty: KeyType::Rsa,
            usage: KeyUse::Sig,
            alg: SigningAlgorithm::RS256,
            kid: kid.to_string(),
            n: n.to_string(),
            e: e.to_string(),
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct JwkSet {
    pub keys: Vec<Jwk>,
}

// ---------------------------------------------------------------------------------------
// Personal access tokens
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = PersonalAccessToken)]
pub struct PersonalAccessTokenView {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub scopes: Vec<String>,
    pub expires_at: Option<DateTime<Utc>>,
    pub comment: String,
    pub last_used_at: Option<DateTime<Utc>>,
}

impl From<&PersonalAccessToken> for PersonalAccessTokenView {
    fn from(p: &PersonalAccessToken) -> Self {
        Self {
            id: p.id.uuid(),
            created_at: p.created_at,
            modified_at: p.modified_at,
            scopes: p.scopes.iter().map(|s| s.as_str().to_string()).collect(),
            expires_at: p.expires_at,
            comment: p.comment.clone(),
            last_used_at: p.last_used_at,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct PersonalAccessTokenCreate {
    pub comment: String,
    pub scopes: Vec<String>,
    /// Lifetime in seconds, 1 to 315360000 (ten years); none for a token that does not
    /// expire.
    #[schema(minimum = 1, maximum = 315360000)]
    pub expires_in: Option<i64>,
}

/// The new token, shown once.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PersonalAccessTokenCreateResponse {
    pub personal_access_token: PersonalAccessTokenView,
    pub token: String,
}

impl PersonalAccessTokenCreateResponse {
    pub fn new(pat: &PersonalAccessToken, token: String) -> Self {
        Self {
            personal_access_token: pat.into(),
            token,
        }
    }
}

#[cfg(test)]
fn sample_client(auth_method: ClientAuthMethod) -> OAuth2Client {
    use crate::domain::ids::{OAuth2ClientId, UserId};
    use chrono::TimeZone;
    let created_at = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    OAuth2Client {
        id: OAuth2ClientId::new(),
        client_id: "polar_ci_Zt3LHU1lVgyKvDC8pqzi2g".into(),
        client_secret_hash: vec![1; 32],
        registration_token_hash: vec![2; 32],
        owner: UserId::new(),
        client_name: "My app".into(),
        redirect_uris: vec!["https://app.example/callback".into()],
        auth_method,
        grant_types: vec!["authorization_code".into(), "refresh_token".into()],
        response_types: vec!["code".into()],
        scopes: ScopeSet::parse_space_separated("openid email").unwrap_or_default(),
        client_uri: Some("https://app.example".into()),
        logo_uri: None,
        tos_uri: None,
        policy_uri: None,
        created_at,
        modified_at: Some(created_at + chrono::Duration::hours(1)),
        deleted_at: None,
    }
}

#[cfg(test)]
fn sample_token(sub: OAuthSub) -> OAuth2Token {
    use crate::domain::ids::{OAuth2TokenId, TokenFamilyId, UserId};
    let issued_at = Utc::now();
    OAuth2Token {
        id: OAuth2TokenId::new(),
        family: TokenFamilyId::new(),
        client_id: "polar_ci_Zt3LHU1lVgyKvDC8pqzi2g".into(),
        sub,
        user_id: UserId::new(),
        scopes: ScopeSet::parse_space_separated("openid email").unwrap_or_default(),
        access_token_hash: vec![3; 32],
        refresh_token_hash: Some(vec![4; 32]),
        issued_at,
        expires_at: issued_at + chrono::Duration::hours(1),
        auth_time: issued_at,
        access_revoked_at: None,
        refresh_revoked_at: None,
        rotated_at: None,
    }
}

/// `(schema name, JSON)` of a sample.
#[cfg(test)]
fn sample<T: Serialize>(name: &'static str, view: T) -> (&'static str, serde_json::Value) {
    (name, serde_json::to_value(view).unwrap_or_default())
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    use crate::domain::ids::{OrganizationId, UserId};
    use crate::error::OAuthErrorBody;
    let confidential = sample_client(ClientAuthMethod::ClientSecretPost);
    let public = sample_client(ClientAuthMethod::None);
    let user_token = sample_token(OAuthSub::User(UserId::new()));
    let org_token = sample_token(OAuthSub::Organization(OrganizationId::new()));
    let scopes = ScopeSet::parse_space_separated("openid email").unwrap_or_default();
    let hasher = crate::auth::TokenHasher::new(b"sample");
    let expires_at = Some(Utc::now() + chrono::Duration::days(30));
    let (pat, token) =
        crate::auth::service::new_pat(&hasher, UserId::new(), scopes, "CI", expires_at, Utc::now());
    let issuer = "https://api.example".to_string();
    let id_token = "eyJhbGciOiJSUzI1NiJ9.e30.c2ln".to_string();
    let jwk = || Jwk::rs256("kid-1", "0vx7agoebGc", "AQAB");
    vec![
        sample("OAuth2Client", OAuth2ClientView::new(&confidential, None)),
        sample("OAuth2Client", OAuth2ClientView::new(&public, None)),
        sample(
            "OAuth2ClientCreated",
            OAuth2ClientCreated::new(
                &confidential,
                "polar_cs_5mKZ0p9cJ3tNQXo5x0rQ1vR0hG2Y8kWmZ3bD4eF6gH7",
                "polar_crt_2wXr5tYb8nM1qK4sV7eH0jL3pZ6cF9gA2dR5uI8oB1".into(),
                &issuer,
            ),
        ),
        sample(
            "TokenResponse",
            TokenResponse::new(
                "polar_at_u_access".into(),
                3600,
                Some("polar_rt_u_refresh".into()),
                scopes,
                id_token.clone(),
            ),
        ),
        sample(
            "TokenResponse",
            TokenResponse::new("polar_at_o_access".into(), 3600, None, scopes, id_token),
        ),
        sample(
            "IntrospectTokenResponse",
            IntrospectTokenResponse::active(
                &user_token,
                TokenTypeHint::AccessToken,
                issuer.clone(),
            ),
        ),
        sample(
            "IntrospectTokenResponse",
            IntrospectTokenResponse::active(
                &org_token,
                TokenTypeHint::RefreshToken,
                issuer.clone(),
            ),
        ),
        sample(
            "IntrospectTokenResponse",
            IntrospectTokenResponse::inactive(&confidential.client_id, None, issuer.clone()),
        ),
        sample("RevokeTokenResponse", RevokeTokenResponse {}),
        sample(
            "UserInfo",
            UserInfo::new(
                user_token.sub.id_string(),
                Some(("buyer@example.com".into(), true)),
                None,
            ),
        ),
        sample(
            "UserInfo",
            UserInfo::new(org_token.sub.id_string(), None, Some("acme".into())),
        ),
        sample(
            "OpenIdConfiguration",
            OpenIdConfiguration::new(&issuer, "https://auth.example", ScopeSet::all_grantable()),
        ),
        sample("Jwk", jwk()),
        sample("JwkSet", JwkSet { keys: vec![jwk()] }),
        sample("PersonalAccessToken", PersonalAccessTokenView::from(&pat)),
        sample(
            "PersonalAccessTokenCreateResponse",
            PersonalAccessTokenCreateResponse::new(&pat, token),
        ),
        sample(
            "OAuth2Error",
            OAuthErrorBody {
                error: "invalid_grant",
                error_description: Some("Invalid \"code\" in request."),
            },
        ),
        sample(
            "OAuth2Error",
            OAuthErrorBody {
                error: "invalid_client",
                error_description: None,
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn clients_send_every_key_and_the_secret_only_when_issued() {
        let c = sample_client(ClientAuthMethod::ClientSecretBasic);
        let read = serde_json::to_value(OAuth2ClientView::new(&c, None)).unwrap();
        assert_eq!(read["client_secret"], "");
        assert_eq!(read["token_endpoint_auth_method"], "client_secret_basic");
        assert_eq!(read["scope"], "openid email");
        assert_eq!(read["logo_uri"], json!(null));
        assert_eq!(read["client_secret_expires_at"], 0);
        assert_eq!(read["client_id_issued_at"], c.created_at.timestamp());
        assert_eq!(read.as_object().unwrap().len(), 16);
        let created = serde_json::to_value(OAuth2ClientCreated::new(
            &c,
            "polar_cs_x",
            "polar_crt_y".into(),
            "https://api.example",
        ))
        .unwrap();
        assert_eq!(created["client_secret"], "polar_cs_x");
        assert_eq!(created["registration_access_token"], "polar_crt_y");
        assert_eq!(
            created["registration_client_uri"],
            format!("https://api.example/v1/oauth2/register/{}", c.client_id)
        );
        assert_eq!(created.as_object().unwrap().len(), 18);
    }

    #[test]
    fn token_bodies_are_todays() {
        let scopes = ScopeSet::parse_space_separated("openid email").unwrap();
        assert_eq!(
            serde_json::to_value(TokenResponse::new("a".into(), 60, None, scopes, "i".into()))
                .unwrap(),
            json!({"access_token": "a", "token_type": "Bearer", "expires_in": 60,
                   "refresh_token": null, "scope": "openid email", "id_token": "i"})
        );
        assert_eq!(
            serde_json::to_value(IntrospectTokenResponse::inactive(
                "c",
                Some(TokenTypeHint::RefreshToken),
                "https://i".into()
            ))
            .unwrap(),
            json!({"active": false, "client_id": "c", "token_type": "refresh_token",
                   "scope": "", "sub_type": "user", "sub": "", "aud": "c",
                   "iss": "https://i", "exp": 0, "iat": 0})
        );
        let org = sample_token(OAuthSub::Organization(
            crate::domain::ids::OrganizationId::new(),
        ));
        let active = serde_json::to_value(IntrospectTokenResponse::active(
            &org,
            TokenTypeHint::AccessToken,
            "https://i".into(),
        ))
        .unwrap();
        assert_eq!(active["sub_type"], "organization");
        assert_eq!(active["sub"], org.sub.id_string());
        assert_eq!(active["exp"], org.expires_at.timestamp());
        assert_eq!(
            serde_json::to_value(RevokeTokenResponse {}).unwrap(),
            json!({})
        );
    }

    #[test]
    fn userinfo_leaves_out_the_claims_it_may_not_send() {
        let v = |u: UserInfo| serde_json::to_value(u).unwrap();
        assert_eq!(
            v(UserInfo::new("s".into(), None, None)),
            json!({"sub": "s"})
        );
        assert_eq!(
            v(UserInfo::new(
                "s".into(),
                Some(("a@b.c".into(), false)),
                None
            )),
            json!({"sub": "s", "email": "a@b.c", "email_verified": false})
        );
        assert_eq!(
            v(UserInfo::new("s".into(), None, Some("acme".into()))),
            json!({"sub": "s", "name": "acme"})
        );
    }

    #[test]
    fn discovery_and_keys_are_todays() {
        let scopes = ScopeSet::parse_space_separated("openid email").unwrap();
        let v = serde_json::to_value(OpenIdConfiguration::new(
            "https://api.example",
            "https://auth.example",
            scopes,
        ))
        .unwrap();
        let base = "https://api.example";
        assert_eq!(
            v,
            json!({
                "issuer": base,
                "authorization_endpoint": "https://auth.example/oauth2/authorize",
                "token_endpoint": format!("{base}/v1/oauth2/token"),
                "jwks_uri": format!("{base}/.well-known/jwks.json"),
                "userinfo_endpoint": format!("{base}/v1/oauth2/userinfo"),
                "registration_endpoint": format!("{base}/v1/oauth2/register"),
                "scopes_supported": ["openid", "email"],
                "response_types_supported": ["code"],
                "response_modes_supported": ["query"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
                "service_documentation": "https://polar.sh/docs",
                "revocation_endpoint": format!("{base}/v1/oauth2/revoke"),
                "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
                "introspection_endpoint": format!("{base}/v1/oauth2/introspect"),
                "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
                "code_challenge_methods_supported": ["S256"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "claims_supported": ["sub", "name", "email", "email_verified"],
            })
        );
        assert_eq!(
            serde_json::to_value(Jwk::rs256("k", "n1", "e1")).unwrap(),
            json!({"kty": "RSA", "use": "sig", "alg": "RS256", "kid": "k", "n": "n1", "e": "e1"})
        );
    }

    #[test]
    fn forms_read_non_empty_fields_only() {
        let form = crate::oauth2::parse_form(b"grant_type=refresh_token&code=&scope=openid");
        let t = TokenRequest::from_form(&form);
        assert_eq!(t.grant_type.as_deref(), Some("refresh_token"));
        assert_eq!(t.code, None);
        assert_eq!(t.scope.as_deref(), Some("openid"));
        let form = crate::oauth2::parse_form(b"token=t&token_type_hint=bogus&client_id=c");
        let i = TokenIntrospectionRequest::from_form(&form);
        assert_eq!(i.token.as_deref(), Some("t"));
        assert_eq!(i.token_type_hint.as_deref(), Some("bogus"));
        assert_eq!(i.client_secret, None);
    }

    #[test]
    fn samples_name_documented_schemas_and_send_their_required_keys() {
        let schemas = &crate::openapi::document()["components"]["schemas"];
        let mut samples = samples();
        samples.extend(super::super::health::samples());
        for (name, value) in samples {
            let schema = &schemas[name];
            assert!(schema.is_object(), "{name} is not in the document");
            let mut required: Vec<&serde_json::Value> = Vec::new();
            for part in
                std::iter::once(schema).chain(schema["allOf"].as_array().into_iter().flatten())
            {
                let part = match part["$ref"].as_str() {
                    Some(r) => &schemas[r.trim_start_matches("#/components/schemas/")],
                    None => part,
                };
                required.extend(part["required"].as_array().into_iter().flatten());
            }
            assert!(
                !required.is_empty() || name == "RevokeTokenResponse",
                "{name}"
            );
            for key in required {
                let key = key.as_str().unwrap();
                assert!(value.get(key).is_some(), "{name} lacks {key}: {value}");
            }
        }
    }
}
