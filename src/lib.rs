//! Tollgate: checkout sessions, orders, subscriptions, organizations and license keys behind
//! Polar's /v1 API.

pub mod admin;
pub mod api;
pub mod app;
pub mod auth;
pub mod bootstrap;
pub mod cache;
pub mod client_ip;
pub mod config;
pub mod cors;
pub mod credentials;
pub use tollgate_actors::domain;
pub mod egress;
pub mod error;
pub mod extract;
pub mod http_io;
pub mod idempotency;
pub mod jobs;
pub mod mail;
pub mod metrics;
pub mod middleware;
pub mod oauth2;
pub mod openapi;
pub mod payments;
pub mod ratelimit;
pub mod resource;
pub mod retention;
pub mod routes;
pub mod signature;
pub mod startup;
pub mod state;
pub mod stats;
pub mod telemetry;
pub mod validate;
pub mod web;
pub mod webhooks;
