//! Credentials: scopes, token generation and hashing, password hashing, principals, and the
//! records behind them (users, personal access tokens). A leaf: it imports no module that
//! holds or reads the application state (`crate::credentials` resolves a request's
//! credentials with these).

pub mod keys;
pub mod password;
pub mod principal;
pub use tollgate_actors::domain::scope;
pub mod service;
pub mod signed_link;
pub mod tokens;

pub use principal::{AuthMethod, Principal, Subject, SubjectKind};
pub use scope::{Scope, ScopeSet};
pub use tokens::TokenHasher;
