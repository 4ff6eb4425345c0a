//! The records of the OAuth 2.0 / OpenID Connect server: registered clients, the grants users
//! gave them, single-use authorization codes, access/refresh token pairs (grouped in
//! rotation families), RSA signing keys and browser sessions of the authorization pages.
//! Secrets (client secrets, registration tokens, codes, tokens, session ids) are stored only
//! as keyed hashes.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::{IndexEntry, Record, UniqueKey};

use super::ids::{
    BrowserSessionId, OAuth2ClientId, OAuth2TokenId, OrganizationId, TokenFamilyId, UserId,
};
use super::scope::ScopeSet;
use super::time_key;

/// Whose data a token acts on: a user, or an organization chosen by one of its members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OAuthSub {
    User(UserId),
    Organization(OrganizationId),
}

impl OAuthSub {
    pub fn sub_type(&self) -> &'static str {
        match self {
            OAuthSub::User(_) => "user",
            OAuthSub::Organization(_) => "organization",
        }
    }

    /// The subject's UUID as a string (the `sub` claim).
    pub fn id_string(&self) -> String {
        match self {
            OAuthSub::User(u) => u.to_string(),
            OAuthSub::Organization(o) => o.to_string(),
        }
    }

    pub fn key(&self) -> Vec<u8> {
        match self {
            OAuthSub::User(u) => {
                let mut k = vec![b'u'];
                k.extend_from_slice(&u.key());
                k
            }
            OAuthSub::Organization(o) => {
                let mut k = vec![b'o'];
                k.extend_from_slice(&o.key());
                k
            }
        }
    }
}

/// How a client authenticates at the token endpoint (RFC 7591 `token_endpoint_auth_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClientAuthMethod {
    ClientSecretPost,
    ClientSecretBasic,
    /// A public client: no secret, PKCE required.
    None,
}

impl ClientAuthMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            ClientAuthMethod::ClientSecretPost => "client_secret_post",
            ClientAuthMethod::ClientSecretBasic => "client_secret_basic",
            ClientAuthMethod::None => "none",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "client_secret_post" => Some(ClientAuthMethod::ClientSecretPost),
            "client_secret_basic" => Some(ClientAuthMethod::ClientSecretBasic),
            "none" => Some(ClientAuthMethod::None),
            _ => None,
        }
    }
}

/// A registered OAuth2 client (RFC 7591).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OAuth2Client {
    pub id: OAuth2ClientId,
    /// The public `polar_ci_…` identifier.
    pub client_id: String,
    pub client_secret_hash: Vec<u8>,
    pub registration_token_hash: Vec<u8>,
    pub owner: UserId,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub auth_method: ClientAuthMethod,
    /// `authorization_code`, `refresh_token`.
    pub grant_types: Vec<String>,
    pub response_types: Vec<String>,
    pub scopes: ScopeSet,
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
    pub tos_uri: Option<String>,
    pub policy_uri: Option<String>,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub deleted_at: Option<DateTime<Utc>>,
}

pub const OAUTH2_CLIENT_ID: &str = "oauth2_client_id";
pub const OAUTH2_CLIENT_BY_OWNER: &str = "oauth2_client_by_owner";

impl OAuth2Client {
    pub fn client_id_key(client_id: &str) -> UniqueKey {
        UniqueKey::new(OAUTH2_CLIENT_ID, Vec::new(), client_id.as_bytes().to_vec())
    }

    pub fn is_public(&self) -> bool {
        self.auth_method == ClientAuthMethod::None
    }

    pub fn allows_grant(&self, grant: &str) -> bool {
        self.grant_types.iter().any(|g| g == grant)
    }
}

impl Record for OAuth2Client {
    crate::record_v1!(OAuth2Client, "oauth2_client");
    const INDEXES: &'static [&'static str] = &[OAUTH2_CLIENT_BY_OWNER];
    const UNIQUES: &'static [&'static str] = &[OAUTH2_CLIENT_ID];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        if self.deleted_at.is_some() {
            return Vec::new();
        }
        vec![IndexEntry::new(
            OAUTH2_CLIENT_BY_OWNER,
            self.owner.key(),
            time_key(self.created_at),
        )]
    }

    /// A deleted client gives up its client id, so it can no longer be found.
    fn unique_keys(&self) -> Vec<UniqueKey> {
        if self.deleted_at.is_some() {
            return Vec::new();
        }
        vec![OAuth2Client::client_id_key(&self.client_id)]
    }
}

/// The scopes a subject consented to for one client; replaced by each new consent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OAuth2Grant {
    pub sub: OAuthSub,
    pub client_id: String,
    pub scopes: ScopeSet,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
}

impl OAuth2Grant {
    pub fn key(sub: &OAuthSub, client_id: &str) -> Vec<u8> {
        let mut k = sub.key();
        k.extend_from_slice(client_id.as_bytes());
        k
    }
}

impl Record for OAuth2Grant {
    crate::record_v1!(OAuth2Grant, "oauth2_grant");

    fn id_key(&self) -> Vec<u8> {
        OAuth2Grant::key(&self.sub, &self.client_id)
    }
}

/// A single-use authorization code, keyed by its hash and removed when exchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthorizationCode {
    pub code_hash: Vec<u8>,
    pub client_id: String,
    /// The redirect URI the authorization request used (the token request must repeat it).
    pub redirect_uri: String,
    /// Whether the authorization request named `redirect_uri` explicitly.
    pub redirect_uri_sent: bool,
    pub scopes: ScopeSet,
    pub sub: OAuthSub,
    /// The user who signed in and consented.
    pub user_id: UserId,
    pub nonce: Option<String>,
    /// S256 challenge (base64url of SHA-256 of the verifier); `plain` is never stored.
    pub code_challenge: Option<String>,
    pub auth_time: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// The codes of one (user, client), by expiry: the outstanding ones are those expiring
/// after now, so issuance can cap them and drop the expired ones.
pub const OAUTH2_CODE_BY_GRANT: &str = "oauth2_code_by_grant";

impl AuthorizationCode {
    /// The index tenant of a user's codes for one client.
    pub fn grant_tenant(user: UserId, client_id: &str) -> Vec<u8> {
        let mut t = user.key();
        t.extend_from_slice(client_id.as_bytes());
        t
    }
}

impl Record for AuthorizationCode {
    crate::record_v1!(AuthorizationCode, "oauth2_code");
    const INDEXES: &'static [&'static str] = &[OAUTH2_CODE_BY_GRANT];

    fn id_key(&self) -> Vec<u8> {
        self.code_hash.clone()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![IndexEntry::new(
            OAUTH2_CODE_BY_GRANT,
            AuthorizationCode::grant_tenant(self.user_id, &self.client_id),
            time_key(self.expires_at),
        )]
    }
}

/// An authorization code that was exchanged, kept (keyed by the code's hash) until the
/// code would have expired and a grace period more, so that presenting it again is
/// recognised and revokes the tokens issued from it (RFC 6749 4.1.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpentAuthorizationCode {
    pub code_hash: Vec<u8>,
    pub client_id: String,
    /// The token family the exchange issued (every refresh of it stays in the family).
    pub family: TokenFamilyId,
    pub spent_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl Record for SpentAuthorizationCode {
    crate::record_v1!(SpentAuthorizationCode, "oauth2_spent_code");

    fn id_key(&self) -> Vec<u8> {
        self.code_hash.clone()
    }
}

/// An access token and (optionally) its refresh token. Rotation revokes the row and links
/// the new one through `family`; presenting a rotated refresh token revokes the family.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OAuth2Token {
    pub id: OAuth2TokenId,
    pub family: TokenFamilyId,
    pub client_id: String,
    pub sub: OAuthSub,
    pub user_id: UserId,
    pub scopes: ScopeSet,
    pub access_token_hash: Vec<u8>,
    pub refresh_token_hash: Option<Vec<u8>>,
    pub issued_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub auth_time: DateTime<Utc>,
    pub access_revoked_at: Option<DateTime<Utc>>,
    pub refresh_revoked_at: Option<DateTime<Utc>>,
    /// Set when the refresh token was exchanged for a newer pair.
    pub rotated_at: Option<DateTime<Utc>>,
}

pub const OAUTH2_ACCESS_TOKEN: &str = "oauth2_access_token";
pub const OAUTH2_REFRESH_TOKEN: &str = "oauth2_refresh_token";
pub const OAUTH2_TOKEN_BY_FAMILY: &str = "oauth2_token_by_family";

impl OAuth2Token {
    pub fn access_key(hash: &[u8]) -> UniqueKey {
        UniqueKey::new(OAUTH2_ACCESS_TOKEN, Vec::new(), hash.to_vec())
    }

    pub fn refresh_key(hash: &[u8]) -> UniqueKey {
        UniqueKey::new(OAUTH2_REFRESH_TOKEN, Vec::new(), hash.to_vec())
    }

    /// Either revocation kills the whole row (Polar's rule).
    pub fn is_revoked(&self) -> bool {
        self.access_revoked_at.is_some() || self.refresh_revoked_at.is_some()
    }

    /// Whether the access token may be used at `now`.
    pub fn access_usable(&self, now: DateTime<Utc>) -> bool {
        !self.is_revoked() && now < self.expires_at
    }
}

impl Record for OAuth2Token {
    crate::record_v1!(OAuth2Token, "oauth2_token");
    const INDEXES: &'static [&'static str] = &[OAUTH2_TOKEN_BY_FAMILY];
    const UNIQUES: &'static [&'static str] = &[OAUTH2_ACCESS_TOKEN, OAUTH2_REFRESH_TOKEN];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![IndexEntry::new(
            OAUTH2_TOKEN_BY_FAMILY,
            self.family.key(),
            time_key(self.issued_at),
        )]
    }

    /// Revoked rows keep their hashes, so a replayed refresh token is recognised.
    fn unique_keys(&self) -> Vec<UniqueKey> {
        let mut keys = vec![OAuth2Token::access_key(&self.access_token_hash)];
        if let Some(h) = &self.refresh_token_hash {
            keys.push(OAuth2Token::refresh_key(h));
        }
        keys
    }
}

/// An RSA key that signs id_tokens. The newest unretired key signs; retired keys stay
/// published in the JWKS until `retire_after`, when no token they signed is still valid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SigningKey {
    pub kid: String,
    /// PKCS#1 DER of the private key.
    pub private_der: Vec<u8>,
    pub created_at: DateTime<Utc>,
    /// Set on rotation: the key is published until then, and never signs again.
    pub retire_after: Option<DateTime<Utc>>,
}

impl SigningKey {
    pub fn is_published(&self, now: DateTime<Utc>) -> bool {
        self.retire_after.is_none_or(|t| now < t)
    }
}

impl Record for SigningKey {
    crate::record_v1!(SigningKey, "oauth2_signing_key");

    fn id_key(&self) -> Vec<u8> {
        self.kid.as_bytes().to_vec()
    }
}

/// A signed-in browser on the authorization pages, keyed by the hash of its cookie value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BrowserSession {
    pub id: BrowserSessionId,
    pub token_hash: Vec<u8>,
    pub user_id: UserId,
    /// When the user last entered a password (OIDC `auth_time`).
    pub auth_time: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

pub const BROWSER_SESSION_TOKEN: &str = "browser_session_token";

impl BrowserSession {
    pub fn token_key(hash: &[u8]) -> UniqueKey {
        UniqueKey::new(BROWSER_SESSION_TOKEN, Vec::new(), hash.to_vec())
    }
}

impl Record for BrowserSession {
    crate::record_v1!(BrowserSession, "browser_session");
    const UNIQUES: &'static [&'static str] = &[BROWSER_SESSION_TOKEN];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![BrowserSession::token_key(&self.token_hash)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn token_golden_bytes_and_revocation() {
        let t0 = Utc.timestamp_opt(0, 0).unwrap();
        let token = OAuth2Token {
            id: OAuth2TokenId(uuid::Uuid::from_u128(1)),
            family: TokenFamilyId(uuid::Uuid::from_u128(2)),
            client_id: "c".into(),
            sub: OAuthSub::User(UserId(uuid::Uuid::from_u128(3))),
            user_id: UserId(uuid::Uuid::from_u128(3)),
            scopes: ScopeSet::empty(),
            access_token_hash: vec![7],
            refresh_token_hash: None,
            issued_at: t0,
            expires_at: t0 + chrono::Duration::seconds(10),
            auth_time: t0,
            access_revoked_at: None,
            refresh_revoked_at: None,
            rotated_at: None,
        };
        let bytes = token.encode().unwrap();
        assert_eq!(OAuth2Token::decode(1, &bytes).unwrap(), token);
        assert!(hex(&bytes)
            .starts_with("10000000000000000000000000000000011000000000000000000000000000000002"));
        assert!(token.access_usable(t0));
        assert!(!token.access_usable(t0 + chrono::Duration::seconds(10)));
        let mut revoked = token.clone();
        revoked.refresh_revoked_at = Some(t0);
        assert!(revoked.is_revoked());
        assert!(!revoked.access_usable(t0));
        // Revoked rows keep their lookup keys, so replays are recognised.
        assert_eq!(revoked.unique_keys().len(), 1);
    }

    #[test]
    fn sub_keys_differ_by_kind() {
        let id = uuid::Uuid::from_u128(9);
        let u = OAuthSub::User(UserId(id));
        let o = OAuthSub::Organization(OrganizationId(id));
        assert_ne!(u.key(), o.key());
        assert_eq!(u.sub_type(), "user");
        assert_eq!(o.sub_type(), "organization");
        assert_eq!(u.id_string(), id.to_string());
    }

    #[test]
    fn signing_keys_are_published_until_retired() {
        let t0 = Utc.timestamp_opt(100, 0).unwrap();
        let mut k = SigningKey {
            kid: "k".into(),
            private_der: vec![],
            created_at: t0,
            retire_after: None,
        };
        assert!(k.is_published(t0));
        k.retire_after = Some(t0 + chrono::Duration::seconds(5));
        assert!(k.is_published(t0));
        assert!(!k.is_published(t0 + chrono::Duration::seconds(5)));
    }
}
