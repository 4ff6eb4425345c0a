//! The organization's `tax` object on the wire (behaviour.md, decisions of 2026-11-28):
//! read in every organization answer, written with `PATCH /v1/organizations/{id}` (each key
//! optional: an absent key keeps its value, `null` clears it), and Polar's
//! `default_tax_behavior`.
//!
//! Beyond behaviour.md's five keys, the object carries what an invoice prints of the seller
//! (`legal_name`, `address`), the invoices' number prefix and when invoices are issued
//! (`invoice_prefix`, `invoice_timing`).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::api::customer::{parse_address, AddressView};
use crate::domain::customer::{is_country, validate_tax_id, TaxIdError};
use crate::domain::organization::Organization;
use crate::domain::tax_settings::{
    InvoiceTiming, Registration, TaxBehaviorOption, TaxProvider, TaxSettings,
};
use crate::error::FieldError;
use tollgate_actors::tax::rates::EU_MEMBER_STATES;

/// The seller's tax settings.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OrganizationTax {
    /// Where the seller is established (ISO 3166-1 alpha-2); `null`: no tax.
    pub country: Option<String>,
    /// The seller's VAT/GST number.
    pub tax_id: Option<String>,
    /// The registrations held abroad: `eu_oss`, `non_eu_oss`, `gb`, `no`, `ch`, `au`, `ca`,
    /// `us_<state>`.
    pub registrations: Vec<String>,
    /// An EU seller under the €10,000 threshold charges its own VAT to EU consumers.
    pub eu_micro_threshold: bool,
    /// `builtin`, `stripe` or `none`.
    pub provider: &'static str,
    /// The seller's name on invoices (`null`: the organization's name).
    pub legal_name: Option<String>,
    /// The seller's address on invoices.
    pub address: Option<AddressView>,
    /// Invoice numbers are `<prefix>-0001`, …
    pub invoice_prefix: String,
    /// `on_payment` (every paid order is invoiced) or `on_request`.
    pub invoice_timing: &'static str,
}

impl OrganizationTax {
    pub fn of(o: &Organization) -> OrganizationTax {
        let t = &o.tax;
        OrganizationTax {
            country: t.country.clone(),
            tax_id: t.tax_id.as_ref().map(|i| i.value.clone()),
            registrations: t.registrations.iter().map(|r| r.as_string()).collect(),
            eu_micro_threshold: t.eu_micro_threshold,
            provider: t.provider.as_str(),
            legal_name: t.legal_name.clone(),
            address: t.address.as_ref().map(AddressView::from),
            invoice_prefix: invoice_prefix(o),
            invoice_timing: t.invoice_timing.as_str(),
        }
    }
}

/// The invoices' prefix of `o`: its own, or its slug in upper case.
pub fn invoice_prefix(o: &Organization) -> String {
    o.tax.prefix_for(&o.slug)
}

/// The `tax` object's keys in a PATCH (every one optional).
#[derive(Debug, Clone, ToSchema)]
#[allow(dead_code)] // The schema of the body `parse_tax` reads.
pub struct OrganizationTaxUpdate {
    pub country: Option<String>,
    pub tax_id: Option<String>,
    pub registrations: Option<Vec<String>>,
    pub eu_micro_threshold: Option<bool>,
    pub provider: Option<String>,
    pub legal_name: Option<String>,
    pub address: Option<AddressView>,
    pub invoice_prefix: Option<String>,
    pub invoice_timing: Option<String>,
}

const KEYS: [&str; 9] = [
    "country",
    "tax_id",
    "registrations",
    "eu_micro_threshold",
    "provider",
    "legal_name",
    "address",
    "invoice_prefix",
    "invoice_timing",
];

fn loc(key: &str) -> Vec<Value> {
    vec!["body".into(), "tax".into(), key.into()]
}

fn err(kind: &str, loc: Vec<Value>, msg: &str, input: &Value) -> FieldError {
    FieldError::new(kind, loc, msg, input.clone())
}

/// A string or null at `key` (`Some(None)`: null; `None`: absent).
fn string_at(
    map: &serde_json::Map<String, Value>,
    key: &str,
    errors: &mut Vec<FieldError>,
) -> Option<Option<String>> {
    match map.get(key)? {
        Value::Null => Some(None),
        Value::String(s) => Some(Some(s.trim().to_string()).filter(|s| !s.is_empty())),
        other => {
            errors.push(err(
                "string_type",
                loc(key),
                "Input should be a valid string",
                other,
            ));
            None
        }
    }
}

/// Whether a number that passed the country's formats is the country's own: a European
/// VAT number names its state in its prefix (`EL` for Greece), and a seller's must be its
/// own state's (a buyer's may be any state's, as Polar validates).
fn own_number(value: &str, country: &str) -> bool {
    let prefix = value.get(..2).unwrap_or("");
    if !is_eu(country) || !prefix.bytes().all(|b| b.is_ascii_alphabetic()) {
        return true;
    }
    let own = if country == "GR" { "EL" } else { country };
    prefix.eq_ignore_ascii_case(own)
}

fn is_eu(country: &str) -> bool {
    EU_MEMBER_STATES.contains(&country)
}

/// The settings `current` becomes with the `tax` object `value` of a PATCH, or the 422's
/// field errors. The rules across keys are checked on the result: a tax number valid for
/// the country, `eu_oss` only for an EU country and `non_eu_oss` only outside, the micro
/// threshold only in the EU, a provider other than `none` only with a country.
pub fn parse_tax(value: &Value, current: &TaxSettings) -> Result<TaxSettings, Vec<FieldError>> {
    let Value::Object(map) = value else {
        return Err(vec![err(
            "model_type",
            vec!["body".into(), "tax".into()],
            "Input should be a valid dictionary or object to extract fields from",
            value,
        )]);
    };
    let mut errors = Vec::new();
    for (k, v) in map {
        if !KEYS.contains(&k.as_str()) {
            errors.push(err(
                "extra_forbidden",
                loc(k),
                "Extra inputs are not permitted",
                v,
            ));
        }
    }
    let mut next = current.clone();
    let first_country = current.country.is_none();
    if let Some(c) = string_at(map, "country", &mut errors) {
        match c.map(|c| c.to_ascii_uppercase()) {
            Some(c) if !is_country(&c) => errors.push(err(
                "country_alpha2",
                loc("country"),
                "Invalid country alpha2 code",
                &map["country"],
            )),
            c => next.country = c,
        }
    }
    let tax_id_given = string_at(map, "tax_id", &mut errors);
    let raw_tax_id = match &tax_id_given {
        Some(given) => given.clone(),
        None => current.tax_id.as_ref().map(|t| t.value.clone()),
    };
    next.tax_id = None;
    if let Some(raw) = raw_tax_id {
        let input = map
            .get("tax_id")
            .cloned()
            .unwrap_or(Value::from(raw.clone()));
        match &next.country {
            None => errors.push(err(
                "value_error",
                loc("tax_id"),
                "Country is required to validate tax ID.",
                &input,
            )),
            Some(country) => match validate_tax_id(&raw, country) {
                Ok(id) if own_number(&id.value, country) => next.tax_id = Some(id),
                Ok(_) => errors.push(err("value_error", loc("tax_id"), "Invalid tax ID.", &input)),
                Err(TaxIdError::UnsupportedCountry | TaxIdError::Invalid) => {
                    errors.push(err("value_error", loc("tax_id"), "Invalid tax ID.", &input))
                }
            },
        }
    }
    match map.get("registrations") {
        None => {}
        Some(Value::Null) => next.registrations.clear(),
        Some(Value::Array(items)) => {
            let mut regs = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let mut at = loc("registrations");
                at.push(i.into());
                match item.as_str().map(Registration::parse) {
                    Some(Some(r)) => regs.push(r),
                    Some(None) => errors.push(err(
                        "enum",
                        at,
                        "Input should be 'eu_oss', 'non_eu_oss', 'gb', 'no', 'ch', 'au', 'ca' or 'us_<state>'",
                        item,
                    )),
                    None => errors.push(err(
                        "string_type",
                        at,
                        "Input should be a valid string",
                        item,
                    )),
                }
            }
            regs.sort();
            regs.dedup();
            next.registrations = regs;
        }
        Some(other) => errors.push(err(
            "list_type",
            loc("registrations"),
            "Input should be a valid list",
            other,
        )),
    }
    match map.get("eu_micro_threshold") {
        None => {}
        Some(Value::Bool(b)) => next.eu_micro_threshold = *b,
        Some(Value::Null) => next.eu_micro_threshold = false,
        Some(other) => errors.push(err(
            "bool_type",
            loc("eu_micro_threshold"),
            "Input should be a valid boolean",
            other,
        )),
    }
    let provider_given = match string_at(map, "provider", &mut errors) {
        Some(Some(p)) => match TaxProvider::parse(&p) {
            Some(p) => Some(p),
            None => {
                errors.push(err(
                    "enum",
                    loc("provider"),
                    "Input should be 'builtin', 'stripe' or 'none'",
                    &map["provider"],
                ));
                None
            }
        },
        Some(None) => Some(TaxProvider::None),
        None => None,
    };
    next.provider = match (provider_given, &next.country) {
        (_, None) if map.contains_key("country") => TaxProvider::None,
        (Some(p), _) => p,
        (None, Some(_)) if first_country => TaxProvider::Builtin,
        (None, _) => next.provider,
    };
    if let Some(name) = string_at(map, "legal_name", &mut errors) {
        if name.as_ref().is_some_and(|n| n.chars().count() > 200) {
            errors.push(err(
                "string_too_long",
                loc("legal_name"),
                "String should have at most 200 characters",
                &map["legal_name"],
            ));
        } else {
            next.legal_name = name;
        }
    }
    match map.get("address") {
        None => {}
        Some(Value::Null) => next.address = None,
        Some(a) => match parse_address(a, loc("address")) {
            Ok(a) => next.address = Some(a),
            Err(mut e) => errors.append(&mut e),
        },
    }
    if let Some(prefix) = string_at(map, "invoice_prefix", &mut errors) {
        match prefix {
            Some(p)
                if p.len() > 16
                    || !p
                        .bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-') =>
            {
                errors.push(err(
                    "string_pattern_mismatch",
                    loc("invoice_prefix"),
                    "String should match pattern '^[A-Z0-9-]{1,16}$'",
                    &map["invoice_prefix"],
                ))
            }
            p => next.invoice_prefix = p,
        }
    }
    if let Some(t) = string_at(map, "invoice_timing", &mut errors) {
        match t.as_deref().map(InvoiceTiming::parse) {
            Some(Some(t)) => next.invoice_timing = t,
            None => next.invoice_timing = InvoiceTiming::default(),
            Some(None) => errors.push(err(
                "enum",
                loc("invoice_timing"),
                "Input should be 'on_payment' or 'on_request'",
                &map["invoice_timing"],
            )),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    cross_rules(&next, value, &mut errors);
    if errors.is_empty() {
        Ok(next)
    } else {
        Err(errors)
    }
}

/// The rules across keys, on the settings after the change.
fn cross_rules(next: &TaxSettings, value: &Value, errors: &mut Vec<FieldError>) {
    let input = |key: &str| value.get(key).cloned().unwrap_or(Value::Null);
    let eu = next.country.as_deref().is_some_and(is_eu);
    if next.country.is_none() && next.provider != TaxProvider::None {
        errors.push(err(
            "value_error",
            loc("provider"),
            "A country is required to compute tax.",
            &input("provider"),
        ));
    }
    if next.holds(&Registration::EuOss) && !eu {
        errors.push(err(
            "value_error",
            loc("registrations"),
            "eu_oss is for a seller established in the EU; use non_eu_oss.",
            &input("registrations"),
        ));
    }
    if next.holds(&Registration::NonEuOss) && (eu || next.country.is_none()) {
        errors.push(err(
            "value_error",
            loc("registrations"),
            "non_eu_oss is for a seller established outside the EU; use eu_oss.",
            &input("registrations"),
        ));
    }
    if next.eu_micro_threshold && !eu {
        errors.push(err(
            "value_error",
            loc("eu_micro_threshold"),
            "The micro-business threshold is for a seller established in the EU.",
            &input("eu_micro_threshold"),
        ));
    }
    let us_state = next
        .registrations
        .iter()
        .any(|r| matches!(r, Registration::UsState(_)));
    if us_state && next.provider == TaxProvider::Builtin {
        errors.push(err(
            "value_error",
            loc("registrations"),
            "US sales tax is computed by the stripe provider only.",
            &input("registrations"),
        ));
    }
}

/// Polar's `default_tax_behavior` in a PATCH.
pub fn parse_default_tax_behavior(value: &Value) -> Result<TaxBehaviorOption, Box<FieldError>> {
    value
        .as_str()
        .and_then(TaxBehaviorOption::parse)
        .ok_or_else(|| {
            Box::new(err(
                "enum",
                vec!["body".into(), "default_tax_behavior".into()],
                "Input should be 'location', 'inclusive' or 'exclusive'",
                value,
            ))
        })
}

// ---------------------------------------------------------------------------------------
// The dashboard's form
// ---------------------------------------------------------------------------------------

/// The dashboard's tax form as posted (`/dashboard/{org}/tax`): text fields, ticked boxes
/// and radios. It is read by the PATCH's own rules: [`TaxForm::to_value`] writes the `tax`
/// object a PATCH would carry and [`parse_tax`] reads it, so a form and the API accept and
/// refuse the same settings with the same messages.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TaxForm {
    /// ISO 3166-1 alpha-2; empty: no tax.
    pub country: String,
    pub tax_id: String,
    pub legal_name: String,
    pub address_line1: String,
    pub address_line2: String,
    pub address_postal_code: String,
    pub address_city: String,
    pub address_state: String,
    pub address_country: String,
    /// The ticked registrations (wire names), and those the form keeps without a box
    /// (`us_<state>`, set through the API).
    pub registrations: Vec<String>,
    pub eu_micro_threshold: Option<String>,
    /// `none`, `builtin` or `stripe`; empty: the PATCH's default.
    pub provider: String,
    /// `location`, `inclusive` or `exclusive`; empty: unchanged.
    pub default_tax_behavior: String,
    /// Empty: the slug in upper case.
    pub invoice_prefix: String,
    /// `on_payment` or `on_request`; empty: the default.
    pub invoice_timing: String,
}

impl TaxForm {
    /// The form filled with the organization's settings. With no country yet, the provider
    /// offered is `builtin`, what a country first set turns on.
    pub fn of(o: &Organization) -> TaxForm {
        let t = &o.tax;
        let a = t.address.clone().unwrap_or_default();
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        TaxForm {
            country: text(&t.country),
            tax_id: t
                .tax_id
                .as_ref()
                .map(|i| i.value.clone())
                .unwrap_or_default(),
            legal_name: text(&t.legal_name),
            address_line1: text(&a.line1),
            address_line2: text(&a.line2),
            address_postal_code: text(&a.postal_code),
            address_city: text(&a.city),
            address_state: text(&a.state),
            address_country: a.country,
            registrations: t.registrations.iter().map(|r| r.as_string()).collect(),
            eu_micro_threshold: t.eu_micro_threshold.then(|| "on".to_string()),
            provider: match (&t.country, t.provider) {
                (None, TaxProvider::None) => TaxProvider::Builtin.as_str().to_string(),
                (_, p) => p.as_str().to_string(),
            },
            default_tax_behavior: o.default_tax_behavior.as_str().to_string(),
            invoice_prefix: text(&t.invoice_prefix),
            invoice_timing: t.invoice_timing.as_str().to_string(),
        }
    }

    /// Whether the micro-threshold box is ticked.
    pub fn micro_threshold(&self) -> bool {
        self.eu_micro_threshold
            .as_deref()
            .is_some_and(|v| v != "false")
    }

    /// The `tax` object of a PATCH with what was typed: every key sent (a blank text is
    /// `null`), but the provider and the invoice timing when left blank, and the address
    /// `null` when all of its fields are blank.
    fn to_value(&self) -> Value {
        let text = |v: &str| match v.trim() {
            "" => Value::Null,
            v => Value::from(v),
        };
        let mut tax = serde_json::Map::new();
        tax.insert("country".into(), text(&self.country));
        tax.insert("tax_id".into(), text(&self.tax_id));
        tax.insert(
            "registrations".into(),
            self.registrations
                .iter()
                .map(|r| Value::from(r.trim()))
                .collect(),
        );
        tax.insert(
            "eu_micro_threshold".into(),
            Value::from(self.micro_threshold()),
        );
        if !self.provider.trim().is_empty() {
            tax.insert("provider".into(), text(&self.provider));
        }
        tax.insert("legal_name".into(), text(&self.legal_name));
        let lines = [
            ("line1", &self.address_line1),
            ("line2", &self.address_line2),
            ("postal_code", &self.address_postal_code),
            ("city", &self.address_city),
            ("state", &self.address_state),
        ];
        let address = if lines.iter().all(|(_, v)| v.trim().is_empty())
            && self.address_country.trim().is_empty()
        {
            Value::Null
        } else {
            let mut a: serde_json::Map<String, Value> = lines
                .iter()
                .map(|(k, v)| (k.to_string(), text(v)))
                .collect();
            a.insert("country".into(), Value::from(self.address_country.trim()));
            Value::Object(a)
        };
        tax.insert("address".into(), address);
        tax.insert("invoice_prefix".into(), text(&self.invoice_prefix));
        if !self.invoice_timing.trim().is_empty() {
            tax.insert("invoice_timing".into(), text(&self.invoice_timing));
        }
        Value::Object(tax)
    }

    /// The organization update the form saves, through the same command as
    /// `PATCH /v1/organizations/{id}`: the `tax` object and `default_tax_behavior` (when
    /// chosen), nothing else.
    pub fn update(&self) -> crate::api::organization::OrganizationUpdate {
        use crate::api::Maybe;
        let behavior = match self.default_tax_behavior.trim() {
            "" => Maybe::Absent,
            b => Maybe::Value(Value::from(b)),
        };
        crate::api::organization::OrganizationUpdate {
            name: Maybe::Absent,
            avatar_url: Maybe::Absent,
            default_upfront_split_to_contributors: Maybe::Absent,
            pledge_badge_show_amount: Maybe::Absent,
            pledge_minimum_amount: Maybe::Absent,
            billing_email: Maybe::Absent,
            default_badge_custom_content: Maybe::Absent,
            total_monthly_spending_limit: Maybe::Absent,
            per_user_monthly_spending_limit: Maybe::Absent,
            profile_settings: Maybe::Absent,
            feature_settings: Maybe::Absent,
            subscription_settings: Maybe::Absent,
            notification_settings: Maybe::Absent,
            customer_portal_settings: Maybe::Absent,
            default_tax_behavior: behavior,
            default_presentment_currency: Maybe::Absent,
            tax: Maybe::Value(self.to_value()),
            embed_hosts: Maybe::Absent,
            bio: Maybe::Absent,
            company: Maybe::Absent,
            blog: Maybe::Absent,
            location: Maybe::Absent,
            email: Maybe::Absent,
            twitter_username: Maybe::Absent,
        }
    }
}

/// The settings `current` becomes with the form, by [`parse_tax`]'s rules, or its 422's
/// field errors.
pub fn parse_tax_form(
    form: &TaxForm,
    current: &TaxSettings,
) -> Result<TaxSettings, Vec<FieldError>> {
    parse_tax(&form.to_value(), current)
}

/// The form's field a 422's problem is about (`tax_id`, `address_city`,
/// `default_tax_behavior`; `registrations` for any of them), and its message; `""` for a
/// problem of no one field.
pub fn form_problems(errors: &[FieldError]) -> Vec<(String, String)> {
    errors
        .iter()
        .map(|e| {
            let keys: Vec<&str> = e.loc.iter().skip(1).filter_map(Value::as_str).collect();
            let field = match keys.as_slice() {
                ["default_tax_behavior", ..] => "default_tax_behavior".to_string(),
                ["tax", "address", part, ..] => format!("address_{part}"),
                ["tax", "address"] => "address_country".to_string(),
                ["tax", key, ..] => key.to_string(),
                _ => String::new(),
            };
            (field, e.msg.clone())
        })
        .collect()
}

#[cfg(test)]
#[path = "organization_tax_tests.rs"]
mod tests;
