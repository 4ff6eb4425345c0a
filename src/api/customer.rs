//! Customer request bodies, the `Address` and tax-id inputs checkouts share, and the
//! `Customer` view (also `OrderCustomer`, `SubscriptionCustomer`, `LicenseKeyCustomer`) with
//! the deprecated `user` object built from it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use super::metadata::parse_metadata;
use super::metadata::{metadata_map, MetadataMap};
use super::Maybe;
use crate::domain::customer::{
    validate_tax_id, Address, AddressIssue, Customer, CustomerChange, NewCustomer, TaxId,
    TaxIdFormat,
};
use crate::domain::ids::OrganizationId;
use crate::domain::metadata::Metadata;
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::validate::Validator;

#[derive(Debug, Deserialize, ToSchema)]
pub struct CustomerCreate {
    /// The seller's id for the customer: unique in the organization; once set, it cannot
    /// be changed. A blank one is none.
    #[serde(default)]
    pub external_id: Option<String>,
    /// `individual` (the default); Tollgate has no team customers, so `team` is a 422.
    #[serde(default, rename = "type")]
    #[schema(value_type = Option<String>)]
    pub kind: Option<String>,
    pub email: String,
    #[serde(default)]
    pub name: Option<String>,
    // Parsed with [`parse_address`].
    #[serde(default)]
    #[schema(value_type = Option<crate::api::free_form::AddressInput>)]
    pub billing_address: Option<Value>,
    // Parsed with [`parse_tax_id_input`].
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub tax_id: Option<Value>,
    #[serde(default)]
    #[schema(nullable = false)]
    pub organization_id: Option<Uuid>,
    // Parsed with [`super::metadata::parse_metadata`].
    #[serde(default)]
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub metadata: Option<Value>,
}

/// Every field optional; `null` clears `name`, `billing_address` and `tax_id`, and leaves
/// `email` and `metadata` as they are. `external_id` may be set once (Polar: "Once set, it
/// can't be updated"); `PATCH /v1/customers/external/{external_id}` ignores it.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CustomerUpdate {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub external_id: Maybe<String>,
    /// `individual` only (Tollgate has no team customers).
    #[serde(default, rename = "type")]
    #[schema(value_type = Option<String>)]
    pub kind: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub email: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub name: Maybe<String>,
    // Parsed with [`parse_address`].
    #[serde(default)]
    #[schema(value_type = Option<crate::api::free_form::AddressInput>)]
    pub billing_address: Maybe<Value>,
    // Parsed with [`parse_tax_id_input`].
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub tax_id: Maybe<Value>,
    // Parsed with [`super::metadata::parse_metadata`].
    #[serde(default)]
    #[schema(value_type = Option<crate::api::free_form::Metadata>)]
    pub metadata: Maybe<Value>,
}

fn at(loc: &[Value], field: &str) -> Vec<Value> {
    let mut l = loc.to_vec();
    l.push(Value::from(field));
    l
}

/// Parses an `Address` object found at `loc` (e.g. `["body", "billing_address"]`):
/// `country` is required and must be an ISO 3166-1 alpha-2 code; the other lines are
/// optional strings (blank ones become null); a US or CA `state` must be a subdivision
/// (`NY` and `US-NY` both give `US-NY`).
pub fn parse_address(value: &Value, loc: Vec<Value>) -> Result<Address, Vec<FieldError>> {
    let Value::Object(map) = value else {
        return Err(vec![FieldError::new(
            "model_type",
            loc,
            "Input should be a valid dictionary or instance of Address",
            value.clone(),
        )]);
    };
    let mut errors = Vec::new();
    let mut line = |field: &str| -> Option<String> {
        match map.get(field) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                errors.push(FieldError::new(
                    "string_type",
                    at(&loc, field),
                    "Input should be a valid string",
                    other.clone(),
                ));
                None
            }
        }
    };
    let line1 = line("line1");
    let line2 = line("line2");
    let postal_code = line("postal_code");
    let city = line("city");
    let state = line("state");
    let country = match map.get("country") {
        None => {
            errors.push(FieldError::new(
                "missing",
                at(&loc, "country"),
                "Field required",
                value.clone(),
            ));
            None
        }
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            errors.push(FieldError::new(
                "string_type",
                at(&loc, "country"),
                "Input should be a valid string",
                other.clone(),
            ));
            None
        }
    };
    let Some(country) = country else {
        return Err(errors);
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    Address::new(
        line1.as_deref(),
        line2.as_deref(),
        postal_code.as_deref(),
        city.as_deref(),
        state.as_deref(),
        &country,
    )
    .map_err(|issue| {
        vec![match issue {
            AddressIssue::UnknownCountry => FieldError::new(
                "country_alpha2",
                at(&loc, "country"),
                "Invalid country alpha2 code",
                Value::from(country.as_str()),
            ),
            AddressIssue::InvalidUsState => FieldError::new(
                "value_error",
                loc.clone(),
                "Value error, Invalid US state",
                value.clone(),
            ),
            AddressIssue::InvalidCaSubdivision => FieldError::new(
                "value_error",
                loc.clone(),
                "Value error, Invalid CA subdivision",
                value.clone(),
            ),
        }]
    })
}

/// Reads a tax-id input: a string (blank means none), or Polar's stored pair
/// `[number, format]` whose format is checked but whose number is revalidated like a
/// string.
pub fn parse_tax_id_input(
    value: &Value,
    loc: Vec<Value>,
) -> Result<Option<String>, Vec<FieldError>> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.trim().to_string()).filter(|s| !s.is_empty())),
        Value::Array(pair) if pair.len() == 2 => {
            let number = pair.first().and_then(Value::as_str);
            let format = pair.get(1).and_then(Value::as_str);
            match (number, format.map(TaxIdFormat::parse)) {
                (Some(n), Some(Some(_))) => {
                    Ok(Some(n.trim().to_string()).filter(|s| !s.is_empty()))
                }
                (None, _) => {
                    let mut l = loc;
                    l.push(Value::from(0));
                    Err(vec![FieldError::new(
                        "string_type",
                        l,
                        "Input should be a valid string",
                        pair.first().cloned().unwrap_or(Value::Null),
                    )])
                }
                (Some(_), _) => {
                    let mut l = loc;
                    l.push(Value::from(1));
                    let names: Vec<String> = TaxIdFormat::ALL
                        .iter()
                        .map(|(n, _)| format!("'{n}'"))
                        .collect();
                    let (last, rest) = match names.split_last() {
                        Some((last, rest)) => (last.as_str(), rest),
                        None => ("", &[][..]),
                    };
                    Err(vec![FieldError::new(
                        "enum",
                        l,
                        format!("Input should be {} or {last}", rest.join(", ")),
                        pair.get(1).cloned().unwrap_or(Value::Null),
                    )])
                }
            }
        }
        other => Err(vec![FieldError::new(
            "string_type",
            loc,
            "Input should be a valid string",
            other.clone(),
        )]),
    }
}

/// Validates a tax-id number against the country of `address` (Polar's rule, reference
/// 1.2 step 6): no address is a `missing` error at `address_loc`; a number the country
/// does not accept is "Invalid tax ID." at `tax_loc`.
pub fn check_tax_id(
    number: &str,
    address: Option<&Address>,
    address_loc: Vec<Value>,
    tax_loc: Vec<Value>,
) -> Result<TaxId, Vec<FieldError>> {
    let Some(address) = address else {
        return Err(vec![FieldError::new(
            "missing",
            address_loc,
            "Country is required to validate tax ID.",
            Value::Null,
        )]);
    };
    validate_tax_id(number, &address.country).map_err(|_| {
        vec![FieldError::new(
            "value_error",
            tax_loc,
            "Invalid tax ID.",
            Value::from(number),
        )]
    })
}

/// A postal address; every line is sent, null when unset.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Address)]
pub struct AddressView {
    pub line1: Option<String>,
    pub line2: Option<String>,
    pub postal_code: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    /// ISO 3166-1 alpha-2.
    pub country: String,
}

impl From<&Address> for AddressView {
    fn from(a: &Address) -> Self {
        AddressView {
            line1: a.line1.clone(),
            line2: a.line2.clone(),
            postal_code: a.postal_code.clone(),
            city: a.city.clone(),
            state: a.state.clone(),
            country: a.country.clone(),
        }
    }
}

/// A tax id and its format, e.g. `["FR61954506077", "eu_vat"]`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = TaxId)]
pub struct TaxIdView(pub String, pub String);

impl From<&TaxId> for TaxIdView {
    fn from(t: &TaxId) -> Self {
        TaxIdView(t.value.clone(), t.format.as_str().to_string())
    }
}

/// Polar's `CustomerType`. Tollgate's customers are all individuals (Polar's team
/// customers come with seats and members, which Tollgate does not have).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CustomerType {
    Individual,
}

/// The `Customer` schema (Polar's `CustomerIndividual`; the same keys as `OrderCustomer`,
/// `SubscriptionCustomer`, `LicenseKeyCustomer`, and the `customer` of a customer session
/// or a benefit grant): what both polar-sdk 1.0 and @polar-sh/sdk 0.47 require. The keys
/// are in Polar's order.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Customer)]
pub struct CustomerView {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub metadata: MetadataMap,
    /// The seller's id for the customer; unique in the organization, never changed once
    /// set.
    pub external_id: Option<String>,
    pub email: String,
    pub email_verified: bool,
    #[serde(rename = "type")]
    pub kind: CustomerType,
    pub name: Option<String>,
    /// The name on invoices: the customer's billing name, else the name (Polar's
    /// fallback).
    pub billing_name: Option<String>,
    pub billing_address: Option<AddressView>,
    pub tax_id: Option<TaxIdView>,
    pub organization_id: Uuid,
    /// When the customer was deleted (an order or key still shows its customer).
    pub deleted_at: Option<DateTime<Utc>>,
    /// Polar's first ingested event; Tollgate ingests no events, so always null.
    pub first_user_event_at: Option<DateTime<Utc>>,
    /// Always a URL: @polar-sh/sdk 0.47 requires a string.
    pub avatar_url: String,
}

impl From<&Customer> for CustomerView {
    fn from(c: &Customer) -> Self {
        CustomerView {
            id: c.id.0,
            created_at: c.created_at,
            modified_at: c.modified_at,
            metadata: metadata_map(&c.metadata),
            external_id: c.external_id.clone(),
            email: c.email.clone(),
            email_verified: c.email_verified,
            kind: CustomerType::Individual,
            name: c.name.clone(),
            billing_name: c.invoice_name().map(str::to_string),
            billing_address: c.billing_address.as_ref().map(AddressView::from),
            tax_id: c.tax_id.as_ref().map(TaxIdView::from),
            organization_id: c.organization_id.0,
            deleted_at: c.deleted_at,
            first_user_event_at: None,
            avatar_url: c.avatar_url(),
        }
    }
}

/// The deprecated `user` of orders, subscriptions and license keys, built from the
/// customer as Polar does: the customer's id, e-mail, and the first letter of the name (or
/// e-mail) as `public_name`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerUser {
    pub id: Uuid,
    pub email: String,
    pub public_name: String,
    #[schema(value_type = Option<String>)]
    pub avatar_url: String,
}

impl From<&Customer> for CustomerUser {
    fn from(c: &Customer) -> Self {
        let public_name: String = c
            .name
            .as_deref()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or(&c.email)
            .chars()
            .take(1)
            .collect();
        CustomerUser {
            id: c.id.0,
            email: c.email.clone(),
            public_name,
            avatar_url: c.avatar_url(),
        }
    }
}

/// An e-mail address as stored: trimmed, with a lower-cased domain.
pub fn normalize_email_input(email: &str) -> String {
    let email = email.trim();
    match email.rsplit_once('@') {
        Some((local, domain)) => format!("{local}@{}", domain.to_lowercase()),
        None => email.to_string(),
    }
}

/// `type`: only `individual` (Tollgate has no team customers).
fn check_kind(v: &mut Validator, kind: Option<&String>) {
    match kind.map(String::as_str) {
        None | Some("individual") => {}
        Some("team") => v.push(FieldError::new(
            "value_error",
            loc!["body", "type"],
            "Team customers are not supported.",
            Value::from("team"),
        )),
        Some(other) => v.push(FieldError::new(
            "literal_error",
            loc!["body", "type"],
            "Input should be 'individual'",
            Value::from(other),
        )),
    }
}

fn check_email(v: &mut Validator, raw: &str) -> Option<String> {
    let email = normalize_email_input(raw);
    v.email(loc!["body", "email"], &email).then_some(email)
}

fn check_address(v: &mut Validator, value: &Value) -> Option<Address> {
    match parse_address(value, loc!["body", "billing_address"]) {
        Ok(a) => Some(a),
        Err(errors) => {
            errors.into_iter().for_each(|e| v.push(e));
            None
        }
    }
}

fn check_tax_input(v: &mut Validator, value: &Value) -> Option<String> {
    match parse_tax_id_input(value, loc!["body", "tax_id"]) {
        Ok(t) => t,
        Err(errors) => {
            errors.into_iter().for_each(|e| v.push(e));
            None
        }
    }
}

fn check_metadata(v: &mut Validator, value: &Value) -> Metadata {
    match parse_metadata("metadata", value) {
        Ok(m) => m,
        Err(errors) => {
            errors.into_iter().for_each(|e| v.push(e));
            Metadata::default()
        }
    }
}

/// Polar's `EmptyStrToNone`: a blank external id is none.
fn non_empty(external_id: Option<String>) -> Option<String> {
    external_id.filter(|e| !e.is_empty())
}

impl CustomerCreate {
    /// The command this body asks for, or a 422 naming every field that breaks a rule.
    pub fn into_command(self) -> Result<NewCustomer, ApiError> {
        let mut v = Validator::new();
        let email = check_email(&mut v, &self.email);
        let billing_address = match &self.billing_address {
            Some(Value::Null) | None => None,
            Some(value) => check_address(&mut v, value),
        };
        let tax_number = self
            .tax_id
            .as_ref()
            .and_then(|value| check_tax_input(&mut v, value));
        let metadata = self
            .metadata
            .as_ref()
            .map(|m| check_metadata(&mut v, m))
            .unwrap_or_default();
        check_kind(&mut v, self.kind.as_ref());
        if let Some(name) = &self.name {
            v.header_safe(loc!["body", "name"], name);
        }
        v.finish()?;
        let Some(email) = email else {
            return Err(ApiError::internal("email validated but missing"));
        };
        Ok(NewCustomer {
            organization_id: self.organization_id.map(OrganizationId),
            email,
            name: self.name,
            billing_address,
            tax_number,
            metadata,
            external_id: non_empty(self.external_id),
        })
    }
}

impl CustomerUpdate {
    /// The command this body asks for, or a 422 naming every field that breaks a rule.
    pub fn into_command(self) -> Result<CustomerChange, ApiError> {
        let mut v = Validator::new();
        let email = self.email.as_value().and_then(|e| check_email(&mut v, e));
        let billing_address = match &self.billing_address {
            Maybe::Absent => None,
            Maybe::Null => Some(None),
            Maybe::Value(value) => Some(check_address(&mut v, value)),
        };
        let tax_number = match &self.tax_id {
            Maybe::Absent => None,
            Maybe::Null => Some(None),
            Maybe::Value(value) => Some(check_tax_input(&mut v, value)),
        };
        let metadata = self.metadata.as_value().map(|m| check_metadata(&mut v, m));
        check_kind(&mut v, self.kind.as_value());
        if let Maybe::Value(name) = &self.name {
            v.header_safe(loc!["body", "name"], name);
        }
        v.finish()?;
        Ok(CustomerChange {
            external_id: self.external_id.into_update().map(non_empty),
            email,
            name: self.name.into_update(),
            billing_address,
            tax_number,
            metadata,
        })
    }
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    use chrono::TimeZone;

    use crate::domain::customer::TaxIdFormat;
    use crate::domain::ids::{CustomerId, OrganizationId};

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let mut full = Customer::new(
        CustomerId(Uuid::from_u128(0xc0)),
        OrganizationId(Uuid::from_u128(0x0a)),
        "jane@example.com".into(),
        now,
    );
    full.name = Some("Jane Doe".into());
    full.external_id = Some("usr_1337".into());
    full.modified_at = Some(now);
    full.billing_address = Address::new(
        Some("1 rue de la Paix"),
        None,
        Some("75002"),
        Some("Paris"),
        None,
        "FR",
    )
    .ok();
    full.tax_id = TaxIdFormat::parse("eu_vat").map(|format| TaxId {
        value: "FR61954506077".into(),
        format,
    });
    let mut bare = Customer::new(
        CustomerId(Uuid::from_u128(0xc1)),
        OrganizationId(Uuid::from_u128(0x0a)),
        "bob@example.com".into(),
        now,
    );
    bare.deleted_at = Some(now);
    let mut out = Vec::new();
    for c in [&full, &bare] {
        out.push((
            "Customer",
            serde_json::to_value(CustomerView::from(c)).unwrap_or_default(),
        ));
        out.push((
            "CustomerUser",
            serde_json::to_value(CustomerUser::from(c)).unwrap_or_default(),
        ));
    }
    if let Some(a) = &full.billing_address {
        out.push((
            "Address",
            serde_json::to_value(AddressView::from(a)).unwrap_or_default(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{CustomerId, OrganizationId};
    use serde_json::json;
    use std::collections::BTreeSet;

    fn loc() -> Vec<Value> {
        crate::loc!["body", "billing_address"]
    }

    #[test]
    fn customer_has_exactly_the_schema_keys() {
        let c = Customer::new(
            CustomerId::new(),
            OrganizationId::new(),
            "a@b.co".into(),
            Utc::now(),
        );
        let v = serde_json::to_value(CustomerView::from(&c)).unwrap();
        let keys: BTreeSet<&str> = v
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let expected: BTreeSet<&str> = [
            "id",
            "created_at",
            "modified_at",
            "metadata",
            "external_id",
            "email",
            "email_verified",
            "type",
            "name",
            "billing_name",
            "billing_address",
            "tax_id",
            "organization_id",
            "deleted_at",
            "first_user_event_at",
            "avatar_url",
        ]
        .into_iter()
        .collect();
        assert_eq!(keys, expected);
        assert_eq!(v["email_verified"], false);
        assert_eq!(v["tax_id"], Value::Null);
        assert_eq!(v["type"], "individual");
        assert!(v["avatar_url"].is_string());
    }

    #[test]
    fn addresses() {
        let a = parse_address(&json!({"country": "fr", "line1": " 1 rue X "}), loc());
        let a = a.unwrap_or_default();
        assert_eq!(a.country, "FR");
        assert_eq!(
            serde_json::to_value(AddressView::from(&a)).unwrap(),
            json!({"line1": "1 rue X", "line2": null, "postal_code": null, "city": null, "state": null, "country": "FR"})
        );
        let e = parse_address(&json!({"line1": "x"}), loc())
            .err()
            .unwrap_or_default();
        assert_eq!(e[0].kind, "missing");
        assert_eq!(e[0].loc, crate::loc!["body", "billing_address", "country"]);
        let e = parse_address(&json!({"country": "XX"}), loc())
            .err()
            .unwrap_or_default();
        assert_eq!(e[0].kind, "country_alpha2");
        let e = parse_address(&json!({"country": "US", "state": "ZZ"}), loc())
            .err()
            .unwrap_or_default();
        assert_eq!(e[0].msg, "Value error, Invalid US state");
        assert_eq!(e[0].loc, loc());
        let e = parse_address(&json!("FR"), loc()).err().unwrap_or_default();
        assert_eq!(e[0].kind, "model_type");
        let e = parse_address(&json!({"country": 3, "city": 4}), loc())
            .err()
            .unwrap_or_default();
        assert_eq!(e.len(), 2);
    }

    #[test]
    fn tax_ids() {
        let fr = parse_address(&json!({"country": "FR"}), loc()).ok();
        let t = check_tax_id(
            "FR61954506077",
            fr.as_ref(),
            loc(),
            crate::loc!["body", "tax_id"],
        );
        assert_eq!(
            t.map(|t| serde_json::to_value(TaxIdView::from(&t)).unwrap()),
            Ok(json!(["FR61954506077", "eu_vat"]))
        );
        let e = check_tax_id("123", fr.as_ref(), loc(), crate::loc!["body", "tax_id"]);
        assert_eq!(
            e.err().map(|e| e[0].msg.clone()),
            Some("Invalid tax ID.".into())
        );
        let e = check_tax_id("FR61954506077", None, loc(), crate::loc!["body", "tax_id"]);
        let e = e.err();
        assert_eq!(e.as_ref().map(|e| e[0].kind.as_str()), Some("missing"));
        assert_eq!(e.map(|e| e[0].loc.clone()), Some(loc()));

        let l = || crate::loc!["body", "tax_id"];
        assert_eq!(parse_tax_id_input(&json!(" x "), l()), Ok(Some("x".into())));
        assert_eq!(parse_tax_id_input(&json!(""), l()), Ok(None));
        assert_eq!(
            parse_tax_id_input(&json!(["FR61954506077", "eu_vat"]), l()),
            Ok(Some("FR61954506077".into()))
        );
        assert!(parse_tax_id_input(&json!(["x", "nope"]), l()).is_err());
        assert!(parse_tax_id_input(&json!(5), l()).is_err());
    }

    #[test]
    fn emails_keep_their_local_part() {
        assert_eq!(
            normalize_email_input(" Jane@Example.COM "),
            "Jane@example.com"
        );
    }

    #[test]
    fn samples_cover_every_shape() {
        let samples = samples();
        let names: BTreeSet<&str> = samples.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            ["Address", "Customer", "CustomerUser"]
                .into_iter()
                .collect()
        );
        assert_eq!(samples[0].1["tax_id"], json!(["FR61954506077", "eu_vat"]));
        assert_eq!(samples[0].1["billing_address"]["country"], "FR");
        assert_eq!(samples[1].1["public_name"], "J");
    }
}
