//! How the document describes the free-form values (metadata, custom-field answers) and the
//! address input: the request bodies and views in `crate::api` carry these as JSON maps or
//! values and parse them by hand (for pydantic's error locations), and name these types with
//! `#[schema(value_type = …)]`. Every other schema is derived from the type the service
//! sends or reads.
#![allow(dead_code)] // Documentation types: they are described, never built.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

// ---------------------------------------------------------------------------------------
// Shared
// ---------------------------------------------------------------------------------------

/// A metadata value: string, integer or boolean.
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum MetadataValue {
    String(String),
    Integer(i64),
    Boolean(bool),
}

/// Up to 50 keys of at most 40 characters; string values of at most 500 characters.
pub type Metadata = HashMap<String, MetadataValue>;

/// A custom-field value as sent: string (text, select, date-time), integer or boolean.
/// Fields left empty are not sent.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum CustomFieldValue {
    String(String),
    Integer(i64),
    Boolean(bool),
}

/// A custom-field value in a request; null leaves an optional field empty.
#[derive(Deserialize, ToSchema)]
#[serde(untagged)]
pub enum CustomFieldInput {
    String(String),
    Integer(i64),
    Boolean(bool),
    Null,
}

/// A postal address in a request; only `country` is required.
#[derive(Deserialize, ToSchema)]
pub struct AddressInput {
    #[schema(nullable = false)]
    pub line1: Option<String>,
    #[schema(nullable = false)]
    pub line2: Option<String>,
    #[schema(nullable = false)]
    pub postal_code: Option<String>,
    #[schema(nullable = false)]
    pub city: Option<String>,
    #[schema(nullable = false)]
    pub state: Option<String>,
    pub country: String,
}
