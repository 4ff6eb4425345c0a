//! Credentials: scopes, token generation and hashing, password hashing, and the records
//! behind them (users, personal access tokens).

pub mod password;
pub use tollgate_actors::domain::scope;
pub mod service;
pub mod tokens;

pub use scope::{Scope, ScopeSet};
pub use tokens::TokenHasher;
