//! The dashboard's forms: what a seller types (amounts in major units, dates as days,
//! checkboxes, one option per line), turned into the JSON API's own inputs and run through
//! the same use cases, so the rules, the tenancy and every 422's message are the API's.
//!
//! Each form is a typed struct the pages deserialize a posted body into (`crate::web`);
//! `of(&record)` fills one from a stored record for editing; the functions below build the
//! API's request body from it, read it with the API's deserialization
//! (`crate::validate::input`, same errors as over HTTP) and call the use case. An amount
//! that does not read as one is named by its field's label ("Price: Enter an amount like 19
//! or 19.99") instead of the API's "not an integer".

use chrono::NaiveDate;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::api::organization::{OrganizationCreate, OrganizationUpdate, OrganizationView};
use crate::app::catalog::organizations;
use crate::auth::Subject;
use crate::domain::currency::Currency;
use crate::domain::organization::Organization;
use crate::error::{ApiError, FieldError};
use crate::state::AppState;

mod catalog;
mod offers;
mod sales;

pub use catalog::*;
pub use offers::*;
pub use sales::*;

// ---------------------------------------------------------------------------------------
// Reading typed-in values
// ---------------------------------------------------------------------------------------

/// Whether a checkbox was ticked (a browser sends `on`; `false` is unticked).
pub fn ticked(v: &Option<String>) -> bool {
    v.as_deref().is_some_and(|v| v != "false")
}

/// A text field for the API: trimmed, or null when blank.
fn text(v: &str) -> Value {
    Some(v.trim())
        .filter(|v| !v.is_empty())
        .map_or(Value::Null, Value::from)
}

/// An integer field for the API: the number, null when blank, else the text as typed (the
/// API's validation names the field and says what it wants).
fn int(v: &str) -> Value {
    match Some(v.trim()).filter(|v| !v.is_empty()) {
        None => Value::Null,
        Some(v) => v
            .parse::<i64>()
            .map_or_else(|_| Value::from(v), Value::from),
    }
}

/// An amount in major units as cents for the API; null when blank; anything else as typed
/// for the API to refuse.
fn cents(v: &str, currency: Currency) -> Value {
    match Some(v.trim()).filter(|v| !v.is_empty()) {
        None => Value::Null,
        Some(v) => currency
            .to_minor(v)
            .map_or_else(|| Value::from(v), Value::from),
    }
}

/// An amount in the minor unit as a number input shows it ("12.50", "1200" yen).
pub fn major_units(amount: i64, currency: Currency) -> String {
    currency.major(amount)
}

/// A day input (`YYYY-MM-DD`) as the API's timestamp at `time` UTC; null when blank, else
/// as typed.
fn day_value(v: &str, time: &str) -> Value {
    match Some(v.trim()).filter(|v| !v.is_empty()) {
        None => Value::Null,
        Some(d) => match NaiveDate::parse_from_str(d, "%Y-%m-%d") {
            Ok(date) => Value::from(format!("{date}T{time}Z")),
            Err(_) => Value::from(d),
        },
    }
}

/// A timestamp as a day input's value.
fn day_of(t: Option<chrono::DateTime<chrono::Utc>>) -> String {
    t.map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

fn opt_string(v: &Option<impl ToString>) -> String {
    v.as_ref().map(ToString::to_string).unwrap_or_default()
}

/// An API error about a form with amount fields (`(typed, label)`): each amount that does
/// not read as one (sent as typed, so the API refused it as "not an integer") is named by
/// its label with what to type instead; the API's other problems stay as they are.
fn explain_amounts(e: ApiError, currency: Currency, fields: &[(&str, &str)]) -> ApiError {
    let ApiError::Validation(mut errors) = e else {
        return e;
    };
    for (typed, label) in fields {
        let typed = typed.trim();
        if typed.is_empty() || currency.to_minor(typed).is_some() {
            continue;
        }
        let before = errors.len();
        errors.retain(|f| f.input.as_str() != Some(typed));
        if errors.len() < before {
            errors.push(FieldError::new(
                "decimal_parsing",
                crate::loc!["body", *label],
                "Enter an amount like 19 or 19.99",
                Value::from(typed),
            ));
        }
    }
    ApiError::Validation(errors)
}

/// A body built here, read as the API's input `T` (with the API's 422s), and as built.
struct Input<T> {
    value: T,
    raw: Value,
}

impl<T> Input<T> {
    fn into_inner(self) -> T {
        self.value
    }
}

/// The API's input read from a body built here, by the rules of a body sent over HTTP.
fn input<T: serde::de::DeserializeOwned>(raw: Value) -> Result<Input<T>, ApiError> {
    Ok(Input {
        value: crate::validate::input::<T>(&raw)?,
        raw,
    })
}

// ---------------------------------------------------------------------------------------
// Organizations
// ---------------------------------------------------------------------------------------

/// Create an organization.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct OrganizationForm {
    pub name: String,
    /// Empty: from the name.
    pub slug: String,
}

/// A slug from a name: lower-case ASCII letters and digits, runs of anything else as `-`.
pub fn slugify(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

pub async fn create_organization(
    state: &AppState,
    subject: Subject,
    form: &OrganizationForm,
) -> Result<Organization, ApiError> {
    let slug = match form.slug.trim() {
        "" => slugify(&form.name),
        s => s.to_string(),
    };
    let raw = json!({ "name": form.name.trim(), "slug": slug });
    let body = input::<OrganizationCreate>(raw)?;
    Ok(organizations::create(state, subject, body.into_inner().into_command()?).await?)
}

/// The refund form of an order's page: the amount in major units (`12.50`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct RefundForm {
    pub amount: String,
    pub reason: String,
    pub revoke_benefits: Option<String>,
    pub comment: String,
    /// For a subscription's order: `""` (keep it), `at_period_end` or `now`.
    pub end_subscription: String,
}

/// Refunds an order from its page, through the same use case as `POST /v1/refunds/`.
pub async fn refund_order(
    state: &AppState,
    subject: Subject,
    order: &crate::domain::order::Order,
    form: &RefundForm,
) -> Result<crate::domain::refund::Refund, ApiError> {
    let currency = Currency::from_code(&order.currency.to_ascii_lowercase()).unwrap_or_default();
    let Some(amount) = currency.to_minor(form.amount.trim()) else {
        return Err(ApiError::Validation(vec![crate::error::FieldError::new(
            "value_error",
            crate::loc!["body", "amount"],
            "Enter an amount, like 12.50.",
            serde_json::Value::from(form.amount.clone()),
        )]));
    };
    let raw = json!({
        "order_id": order.id.to_string(),
        "reason": form.reason.trim(),
        "amount": amount,
        "revoke_benefits": ticked(&form.revoke_benefits),
        "comment": text(&form.comment),
        "end_subscription": text(&form.end_subscription),
    });
    let body = input::<crate::api::refund::RefundCreate>(raw)?;
    let command = body.into_inner().into_command()?;
    Ok(crate::app::refunds::create(state, subject, command).await?)
}

/// An organization's settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SettingsForm {
    pub name: String,
    pub avatar_url: String,
    pub bio: String,
    pub company: String,
    pub blog: String,
    pub location: String,
    pub allow_multiple_subscriptions: Option<String>,
    pub allow_customer_updates: Option<String>,
    /// The organization's e-mail: its messages' Reply-To, and where copies of orders go.
    pub email: String,
    /// A copy of each order to `email`.
    pub new_order_emails: Option<String>,
    /// A full refund of a one-time purchase revokes its benefits.
    pub revoke_on_full_refund: Option<String>,
}

impl SettingsForm {
    pub fn of(org: &Organization) -> Self {
        let on = |b: bool| b.then(|| "on".to_string());
        SettingsForm {
            name: org.name.clone(),
            avatar_url: opt_string(&org.avatar_url),
            bio: opt_string(&org.bio),
            company: opt_string(&org.company),
            blog: opt_string(&org.blog),
            location: opt_string(&org.location),
            allow_multiple_subscriptions: on(org
                .subscription_settings
                .allow_multiple_subscriptions),
            allow_customer_updates: on(org.subscription_settings.allow_customer_updates),
            email: opt_string(&org.email),
            new_order_emails: on(org.notification_settings.new_order),
            revoke_on_full_refund: on(org.refund_settings.revoke_benefits_on_full_refund),
        }
    }
}

pub async fn update_settings(
    state: &AppState,
    subject: Subject,
    org: &Organization,
    form: &SettingsForm,
) -> Result<Organization, ApiError> {
    let mut raw = json!({
        "name": form.name.trim(),
        "avatar_url": text(&form.avatar_url),
        "bio": text(&form.bio),
        "company": text(&form.company),
        "blog": text(&form.blog),
        "location": text(&form.location),
        "email": text(&form.email),
        "notification_settings": {
            "new_order": ticked(&form.new_order_emails),
            "new_subscription": org.notification_settings.new_subscription,
        },
    });
    let view = serde_json::to_value(OrganizationView::from(org)).map_err(ApiError::internal)?;
    let mut sub = view["subscription_settings"].clone();
    if sub.is_object() {
        sub["allow_multiple_subscriptions"] =
            Value::from(ticked(&form.allow_multiple_subscriptions));
        sub["allow_customer_updates"] = Value::from(ticked(&form.allow_customer_updates));
        raw["subscription_settings"] = sub;
    }
    let body = input::<OrganizationUpdate>(raw)?;
    let change = body.into_inner().into_command(org)?;
    let updated = organizations::update(state, subject, org.id, change).await?;
    let revoke = ticked(&form.revoke_on_full_refund);
    if updated.refund_settings.revoke_benefits_on_full_refund == revoke {
        return Ok(updated);
    }
    Ok(organizations::set_refund_settings(
        state,
        subject,
        org.id,
        crate::domain::organization::RefundSettings {
            revoke_benefits_on_full_refund: revoke,
        },
    )
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_parse_in_the_currencys_minor_unit_and_print_back() {
        assert_eq!(cents("12.5", Currency::USD), Value::from(1250));
        assert_eq!(cents("1200", Currency::JPY), Value::from(1200));
        assert_eq!(cents("12.5", Currency::JPY), Value::from("12.5"));
        assert_eq!(cents(" ", Currency::USD), Value::Null);
        assert_eq!(major_units(1250, Currency::USD), "12.50");
        assert_eq!(major_units(1500, Currency::JPY), "1500");
        assert_eq!(major_units(-5, Currency::USD), "-0.05");
        assert_eq!(text(" Pro "), Value::from("Pro"));
        assert_eq!(int("12"), Value::from(12));
        assert_eq!(int("x1"), Value::from("x1"));
        assert_eq!(int(""), Value::Null);
        assert_eq!(cents("9.99", Currency::USD), Value::from(999));
        assert!(ticked(&Some("on".into())) && !ticked(&None) && !ticked(&Some("false".into())));
    }

    #[test]
    fn slugs_from_names() {
        assert_eq!(slugify("  Acme Tools, Inc. "), "acme-tools-inc");
        assert_eq!(slugify("Élan"), "lan");
        assert_eq!(slugify("!!"), "");
    }
}
