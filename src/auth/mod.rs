//! Credentials: scopes, token generation and hashing, password hashing, the records behind
//! them (users, personal access tokens), and resolving a request's credentials (a bearer
//! token or the browser session) to the principal they name. The extractors
//! (`crate::extract::auth`) and the OAuth 2.0 endpoints (`crate::oauth2`) both resolve
//! through here; this module imports neither.

pub mod bearer;
pub mod password;
pub mod principal;
pub use tollgate_actors::domain::scope;
pub mod service;
pub mod session;
pub mod tokens;

pub use bearer::{bearer_token, resolve, resolve_oauth2};
pub use principal::{AuthMethod, Principal, Subject, SubjectKind};
pub use scope::{Scope, ScopeSet};
pub use tokens::TokenHasher;
