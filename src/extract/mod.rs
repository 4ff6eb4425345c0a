//! Request extraction: the authenticated principal, JSON bodies, query parameters and path
//! ids, each failing with the documented error shape before a handler runs.

pub mod auth;
pub mod json;
pub mod path;
pub mod query;

pub use auth::{Auth, Principal, Subject};
pub use json::ValidJson;
pub use path::path_id;
pub use query::{ListParams, QueryParams, RawQuery, SortField, Sorting};
