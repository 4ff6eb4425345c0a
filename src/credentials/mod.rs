//! Resolving a request's credentials to the principal they name: a bearer token (personal
//! access token, OAuth 2.0 access token, customer session) looked up by its keyed hash, or
//! the browser session cookie of the pages (with its CSRF rule for API calls); and the
//! browser session's life (start after a password check, end on sign-out).
//!
//! Above `crate::state` (it reads the store through it); the credentials themselves
//! (scopes, token formats and hashing, passwords, principals) are `crate::auth`, which
//! imports neither this nor the state.

pub mod bearer;
pub mod session;

pub use bearer::{bearer_token, resolve, resolve_oauth2};
