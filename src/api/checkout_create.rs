//! Parsing a checkout create body ([`CheckoutCreate`]) into the command the application
//! acts on ([`CreateCheckout`]): every check that needs no store (amounts, addresses,
//! metadata, e-mail, URLs, what Tollgate does not sell, the expiry), with the 422 and its
//! locations as Polar gives them. The shape checks of single fields are shared with the
//! update and confirm bodies.

use std::collections::HashSet;
use std::net::IpAddr;

use chrono::{DateTime, Duration, Utc};
use serde_json::Value;
use tollgate_actors::checkout::{CheckoutTarget, CreateCheckout, CustomFieldInput};
use uuid::Uuid;

use super::CheckoutCreate;
use crate::api::customer::parse_address;
use crate::api::metadata::parse_metadata;
use crate::api::price::currency_mismatch;
use crate::domain::currency::Currency;
use crate::domain::customer::Address;
use crate::domain::ids::{CustomerId, DiscountId, PriceId, ProductId, SubscriptionId};
use crate::domain::metadata::Metadata;
use crate::domain::product::{RecurringInterval, Trial, MAX_TRIAL_COUNT};
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::validate::Validator;

impl CheckoutCreate {
    /// The command this body asks for at `now`, or the 422 of its fields (in the order
    /// Polar lists them); what needs the store is checked by the use case.
    pub fn into_command(self, now: DateTime<Utc>) -> Result<CreateCheckout, ApiError> {
        let input = self;
        let mut v = Validator::new();
        if let Some(p) = &input.payment_processor {
            if p != "stripe" {
                v.push(FieldError::new(
                    "enum",
                    loc!["body", "payment_processor"],
                    "Input should be 'stripe'",
                    Value::from(p.as_str()),
                ));
            }
        }
        if let Some(a) = input.amount {
            check_amount(&mut v, a);
        }
        let metadata = input
            .metadata
            .as_ref()
            .and_then(|m| metadata_field(&mut v, "metadata", m))
            .unwrap_or_default();
        let customer_metadata = input
            .customer_metadata
            .as_ref()
            .and_then(|m| metadata_field(&mut v, "customer_metadata", m))
            .unwrap_or_default();
        let email = optional_string(input.customer_email.clone())
            .and_then(|e| email_field(&mut v, "customer_email", &e));
        if let Some(name) = &input.customer_name {
            v.header_safe(loc!["body", "customer_name"], name);
        }
        if let Some(ip) = &input.customer_ip_address {
            check_ip(&mut v, ip);
        }
        let address = input
            .customer_billing_address
            .as_ref()
            .filter(|a| !a.is_null())
            .and_then(|a| address_field(&mut v, a));
        if let Some(url) = &input.success_url {
            v.http_url(loc!["body", "success_url"], url);
        }
        if let Some(url) = &input.return_url {
            v.http_url(loc!["body", "return_url"], url);
        }
        refuse_unsupported_on_create(&mut v, &input);
        let currency = currency_field(&mut v, input.currency.as_deref());
        let locale = input
            .locale
            .as_deref()
            .and_then(|l| locale_field(&mut v, l));
        let seats = input.seats.and_then(|n| seats_field(&mut v, n));
        let min_seats = input
            .min_seats
            .and_then(|n| count_field(&mut v, "min_seats", n));
        let max_seats = input
            .max_seats
            .and_then(|n| count_field(&mut v, "max_seats", n));
        let trial = trial_fields(
            &mut v,
            input.trial_interval.as_deref().map(Some),
            input.trial_interval_count.map(Some),
        )
        .flatten();
        if let Some(t) = input.expires_at {
            if t < now + Duration::minutes(1) || t > now + Duration::hours(24) {
                v.push(FieldError::new(
                    "value_error",
                    loc!["body", "expires_at"],
                    "Value error, expires_at must be between 1 minute and 24 hours from now.",
                    serde_json::json!(t),
                ));
            }
        }
        v.finish()?;
        check_seat_bounds(seats, min_seats, max_seats)?;
        let target = target(&input)?;
        Ok(CreateCheckout {
            target,
            amount: input.amount,
            seats,
            min_seats,
            max_seats,
            discount_id: input.discount_id.map(DiscountId),
            allow_discount_codes: input.allow_discount_codes.unwrap_or(true),
            customer_id: input.customer_id.map(CustomerId),
            customer_name: optional_string(input.customer_name),
            customer_email: email,
            customer_ip_address: optional_string(input.customer_ip_address),
            customer_billing_address: address,
            customer_tax_id: optional_string(input.customer_tax_id),
            is_business_customer: input.is_business_customer.unwrap_or(false),
            customer_billing_name: optional_string(input.customer_billing_name),
            customer_metadata,
            metadata,
            custom_field_data: input
                .custom_field_data
                .map_or_else(CustomFieldInput::empty, CustomFieldInput::new),
            subscription_id: input.subscription_id.map(SubscriptionId),
            success_url: input.success_url,
            embed_origin: optional_string(input.embed_origin),
            expires_at: input.expires_at,
            require_billing_address: input.require_billing_address.unwrap_or(false),
            allow_trial: input.allow_trial.unwrap_or(true),
            external_customer_id: optional_string(input.external_customer_id),
            return_url: input.return_url,
            trial,
            currency,
            locale,
        })
    }
}

/// What the body creates the checkout for: `products` (at least one, unique), else
/// `product_price_id`, else `product_id`.
fn target(input: &CheckoutCreate) -> Result<CheckoutTarget, ApiError> {
    if let Some(ids) = &input.products {
        return product_list(ids).map(CheckoutTarget::Products);
    }
    if let Some(id) = input.product_price_id {
        return Ok(CheckoutTarget::Price(PriceId(id)));
    }
    if let Some(id) = input.product_id {
        return Ok(CheckoutTarget::Product(ProductId(id)));
    }
    Err(ApiError::validation(FieldError::new(
        "missing",
        loc!["body", "product_price_id"],
        "Field required",
        Value::Null,
    )))
}

/// A list of products to choose between (a checkout's, a link's): at least one, unique.
pub fn product_list(ids: &[Uuid]) -> Result<Vec<ProductId>, ApiError> {
    let list = || Value::from(ids.iter().map(|id| id.to_string()).collect::<Vec<_>>());
    if ids.is_empty() {
        return Err(ApiError::validation(
            FieldError::new(
                "too_short",
                loc!["body", "products"],
                "List should have at least 1 item after validation, not 0",
                list(),
            )
            .with_ctx(
                serde_json::json!({"field_type": "List", "min_length": 1, "actual_length": 0}),
            ),
        ));
    }
    let unique: HashSet<&Uuid> = ids.iter().collect();
    if unique.len() != ids.len() {
        return Err(ApiError::invalid(
            loc!["body", "products"],
            "Value error, Product IDs must be unique.",
            list(),
        ));
    }
    Ok(ids.iter().map(|id| ProductId(*id)).collect())
}

// ---------------------------------------------------------------------------------------
// The shape of single fields, shared with the update and confirm bodies.

/// An amount (a pay-what-you-want price's): not negative here; the bounds of the
/// checkout's currency and of the price are the use case's (they depend on the price).
pub fn check_amount(v: &mut Validator, amount: i64) -> bool {
    v.int_range(loc!["body", "amount"], amount, Some(0), None)
}

pub fn check_ip(v: &mut Validator, ip: &str) -> bool {
    if ip.parse::<IpAddr>().is_ok() {
        return true;
    }
    v.push(FieldError::new(
        "ip_any_address",
        loc!["body", "customer_ip_address"],
        "value is not a valid IPv4 or IPv6 address",
        Value::from(ip),
    ));
    false
}

pub fn metadata_field(v: &mut Validator, field: &str, value: &Value) -> Option<Metadata> {
    match parse_metadata(field, value) {
        Ok(m) => Some(m),
        Err(errors) => {
            for e in errors {
                v.push(e);
            }
            None
        }
    }
}

pub fn address_field(v: &mut Validator, value: &Value) -> Option<Address> {
    match parse_address(value, loc!["body", "customer_billing_address"]) {
        Ok(a) => Some(a),
        Err(errors) => {
            for e in errors {
                v.push(e);
            }
            None
        }
    }
}

pub fn email_field(v: &mut Validator, field: &str, email: &str) -> Option<String> {
    let email = email.trim();
    v.email(loc!["body", field], email)
        .then(|| email.to_string())
}

pub fn optional_string(value: Option<String>) -> Option<String> {
    value
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

pub fn refuse(v: &mut Validator, field: &str, msg: &str, input: Value) {
    v.push(FieldError::new(
        "value_error",
        loc!["body", field],
        msg,
        input,
    ));
}

/// A seat count (`seats` of a create, update or confirm): 1 to [`MAX_CHECKOUT_SEATS`];
/// whether the price sells that many is the use case's question.
pub fn seats_field(v: &mut Validator, n: i64) -> Option<u32> {
    count_field(v, "seats", n)
}

/// The most seats a checkout body names (Polar's `le=1000` on `seats`, `min_seats` and
/// `max_seats`).
pub const MAX_CHECKOUT_SEATS: i64 = 1000;

/// A seat count of the body (`seats`, `min_seats`, `max_seats`): 1 to
/// [`MAX_CHECKOUT_SEATS`], as Polar's fields are.
fn count_field(v: &mut Validator, field: &str, n: i64) -> Option<u32> {
    let ok = v.int_range(loc!["body", field], n, Some(1), Some(MAX_CHECKOUT_SEATS));
    ok.then(|| u32::try_from(n).ok()).flatten()
}

/// Polar's model-level rules on the seats of a create body (at `["body"]`, the first one
/// broken): `min_seats` at most `max_seats`, `seats` within them. Whether the price sells
/// them is the use case's question.
fn check_seat_bounds(
    seats: Option<u32>,
    min: Option<u32>,
    max: Option<u32>,
) -> Result<(), ApiError> {
    let broken = if min.zip(max).is_some_and(|(a, b)| a > b) {
        Some("min_seats must be less than or equal to max_seats")
    } else if seats.zip(min).is_some_and(|(s, a)| s < a) {
        Some("seats must be greater than or equal to min_seats")
    } else if seats.zip(max).is_some_and(|(s, b)| s > b) {
        Some("seats must be less than or equal to max_seats")
    } else {
        None
    };
    match broken {
        Some(msg) => Err(ApiError::validation(FieldError::new(
            "value_error",
            loc!["body"],
            format!("Value error, {msg}"),
            Value::Null,
        ))),
        None => Ok(()),
    }
}

/// Seat and unit counts (Polar refuses them for prices that are not seat- or unit-based,
/// and Tollgate has none), with Polar's messages.
pub fn refuse_counts(v: &mut Validator, counts: &[(&str, Option<i64>)]) {
    for (field, value) in counts {
        let Some(n) = value else { continue };
        let msg = match *field {
            "seats" => "Seats can only be set for seat-based pricing.".to_string(),
            "units" => "Units can only be set for unit-based pricing.".to_string(),
            f if f.ends_with("_seats") => format!("{f} can only be set for seat-based pricing."),
            f => format!("{f} can only be set for unit-based pricing."),
        };
        refuse(v, field, &msg, Value::from(*n));
    }
}

/// A billing name longer than Polar's 256 characters.
pub fn check_billing_name(v: &mut Validator, billing_name: Option<&str>) {
    if let Some(name) = billing_name.filter(|n| n.chars().count() > 256) {
        v.push(FieldError::new(
            "string_too_long",
            loc!["body", "customer_billing_name"],
            "String should have at most 256 characters",
            Value::from(name),
        ));
    }
}

/// A presentment currency (Polar's `PresentmentCurrency`, lowercase): pydantic's `enum`
/// 422 for anything else. Whether the product sells in it is the use case's question.
pub fn currency_field(v: &mut Validator, currency: Option<&str>) -> Option<Currency> {
    let c = currency?;
    match Currency::parse(c) {
        Ok(c) => Some(c),
        Err(_) => {
            v.push(currency_mismatch(loc!["body", "currency"], c));
            None
        }
    }
}

/// The trial of a create or update body (Polar's `trial_interval` and
/// `trial_interval_count`, both or neither): `Some(Some)` sets the checkout's own trial,
/// `Some(None)` removes it (both `null`), `None` leaves it. Each field is `None` when the
/// body lacks it, `Some(None)` when it is `null`.
pub fn trial_fields(
    v: &mut Validator,
    interval: Option<Option<&str>>,
    count: Option<Option<i64>>,
) -> Option<Option<Trial>> {
    let given = interval.is_some() || count.is_some();
    let (i, n) = (interval.flatten(), count.flatten());
    let interval = i.and_then(|i| match RecurringInterval::parse(i) {
        Some(i) => Some(i),
        None => {
            v.push(
                FieldError::new(
                    "enum",
                    loc!["body", "trial_interval"],
                    "Input should be 'day', 'week', 'month' or 'year'",
                    Value::from(i),
                )
                .with_ctx(serde_json::json!({"expected": "'day', 'week', 'month' or 'year'"})),
            );
            None
        }
    });
    let count = n.and_then(|n| {
        v.int_range(
            loc!["body", "trial_interval_count"],
            n,
            Some(1),
            Some(i64::from(MAX_TRIAL_COUNT)),
        )
        .then(|| u32::try_from(n).ok())
        .flatten()
    });
    match (i.is_some(), n.is_some()) {
        (true, true) => match (interval, count) {
            (Some(interval), Some(count)) => Some(Some(Trial { interval, count })),
            _ => None,
        },
        // `null` (and the other `null` or left out): no trial of its own.
        (false, false) if given => Some(None),
        (false, false) => None,
        (has_interval, _) => {
            let missing = if has_interval {
                "trial_interval_count"
            } else {
                "trial_interval"
            };
            v.push(FieldError::new(
                "missing",
                loc!["body", missing],
                "Both trial_interval and trial_interval_count must be set together.",
                Value::Null,
            ));
            None
        }
    }
}

/// Refuses the create body's fields for what Tollgate does not sell.
/// Polar's `Locale`: a valid BCP 47 tag, kept normalized (`de-at` → `de-AT`); else a 422
/// `value_error` at `body.locale`. A tag of a language Tollgate does not speak is valid
/// (its pages fall back at render time).
pub fn locale_field(v: &mut Validator, tag: &str) -> Option<String> {
    let normalized = crate::domain::locale::normalize_tag(tag);
    if normalized.is_none() {
        v.push(FieldError::new(
            "value_error",
            loc!["body", "locale"],
            "Value error, Invalid IETF BCP 47 language tag",
            Value::from(tag),
        ));
    }
    normalized
}

pub fn refuse_unsupported_on_create(v: &mut Validator, input: &CheckoutCreate) {
    refuse_counts(
        v,
        &[
            ("units", input.units),
            ("min_units", input.min_units),
            ("max_units", input.max_units),
        ],
    );
    check_billing_name(v, input.customer_billing_name.as_deref());
    if let Some(prices) = input.prices.as_ref().filter(|p| !p.is_null()) {
        refuse(
            v,
            "prices",
            "Ad-hoc prices are not supported.",
            prices.clone(),
        );
    }
}
