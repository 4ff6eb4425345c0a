//! Resolving the fields of checkout requests into domain values: amounts, addresses,
//! metadata, custom field data, discounts and the price a checkout is created for, with
//! every reference checked here; shared by the organizer and client endpoints and by
//! confirmation.

use std::net::IpAddr;

use serde_json::Value;
use tollgate_actors::checkout::{AppliedDiscount, Changes, Checkout};
use uuid::Uuid;

use crate::api::checkout::{
    CheckoutBuyerUpdate, CheckoutChanges, CheckoutCreate, CheckoutTermsUpdate,
};
use crate::api::custom_field_data::validate_custom_field_data;
use crate::api::customer::parse_address;
use crate::api::metadata::parse_metadata;
use crate::api::Maybe;
use crate::app::access::can_access;
use crate::app::catalog::custom_fields::attached_custom_fields;
use crate::auth::Subject;
use crate::domain::custom_field::CustomFieldData;
use crate::domain::discount::{discount_by_code, discount_by_id, Discount};
use crate::domain::ids::{DiscountId, OrganizationId, PriceId, ProductId};
use crate::domain::metadata::Metadata;
use crate::domain::product::{Price, Product, RecurringInterval, Trial, MAX_TRIAL_COUNT};
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::state::AppState;
use crate::validate::Validator;

use crate::app::views::product_of;

// ---------------------------------------------------------------------------------------
// Resolving request fields into domain values (every reference checked here).

const MIN_AMOUNT: i64 = 50;
const MAX_AMOUNT: i64 = 99_999_999;

pub(super) fn check_amount(v: &mut Validator, amount: i64) -> bool {
    v.int_range(
        loc!["body", "amount"],
        amount,
        Some(MIN_AMOUNT),
        Some(MAX_AMOUNT),
    )
}

pub(super) fn check_ip(v: &mut Validator, ip: &str) -> bool {
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

pub(super) fn metadata_field(v: &mut Validator, field: &str, value: &Value) -> Option<Metadata> {
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

pub(super) fn address_field(
    v: &mut Validator,
    value: &Value,
) -> Option<crate::domain::customer::Address> {
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

async fn custom_fields_of(
    state: &AppState,
    product: &Product,
) -> Result<Vec<(crate::domain::custom_field::CustomField, bool)>, ApiError> {
    Ok(
        attached_custom_fields(state, &product.attached_custom_fields)
            .await?
            .into_iter()
            .map(|(cf, a)| (cf, a.required))
            .collect(),
    )
}

pub(super) async fn custom_field_data(
    v: &mut Validator,
    state: &AppState,
    product: &Product,
    value: &Value,
) -> Result<Option<CustomFieldData>, ApiError> {
    let fields = custom_fields_of(state, product).await?;
    Ok(
        match validate_custom_field_data(value, &fields, &["body", "custom_field_data"]) {
            Ok(d) => Some(d),
            Err(errors) => {
                for e in errors {
                    v.push(e);
                }
                None
            }
        },
    )
}

/// A discount given by id: it must be the organization's, apply to the product and be
/// redeemable now.
pub(super) async fn discount_for_checkout(
    state: &AppState,
    org: OrganizationId,
    product: ProductId,
    id: DiscountId,
) -> Result<Result<Discount, FieldError>, ApiError> {
    let found = discount_by_id(&state.store, id)
        .await?
        .map(|d| d.value)
        .filter(|d| {
            d.organization_id == org && d.applies_to(product) && d.is_redeemable(state.now())
        });
    Ok(found.ok_or_else(|| {
        FieldError::new(
            "value_error",
            loc!["body", "discount_id"],
            "Discount does not exist.",
            Value::from(id.to_string()),
        )
    }))
}

async fn discount_for_code(
    state: &AppState,
    org: OrganizationId,
    product: ProductId,
    code: &str,
) -> Result<Result<Discount, FieldError>, ApiError> {
    let found = discount_by_code(&state.store, org, code)
        .await?
        .map(|d| d.value)
        .filter(|d| d.applies_to(product) && d.is_redeemable(state.now()));
    Ok(found.ok_or_else(|| {
        FieldError::new(
            "value_error",
            loc!["body", "discount_code"],
            "This discount code does not exist or is no longer available.",
            Value::from(code),
        )
    }))
}

/// The products a checkout is created for (Polar's `CheckoutProductsCreate`): at least
/// one, unique, each readable by the subject, not archived and with an active price, all
/// of one organization. The first one is selected, at its first active price.
pub(super) async fn products_for_create(
    state: &AppState,
    subject: Subject,
    ids: &[Uuid],
) -> Result<(Product, Price, Vec<ProductId>), ApiError> {
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
    let unique: std::collections::HashSet<&Uuid> = ids.iter().collect();
    if unique.len() != ids.len() {
        return Err(ApiError::invalid(
            loc!["body", "products"],
            "Value error, Product IDs must be unique.",
            list(),
        ));
    }
    let mut v = Validator::new();
    let mut products = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let found = state.store.get::<Product>(&ProductId(*id).key()).await?;
        let problem = match accessible(state, subject, found).await {
            None => Some("Product does not exist."),
            Some(p) if p.is_archived => Some("Product is archived."),
            Some(p) if p.first_active_price().is_none() => Some("Product has no active price."),
            Some(p) => {
                products.push(p);
                None
            }
        };
        if let Some(msg) = problem {
            v.push(FieldError::new(
                "value_error",
                loc!["body", "products", i],
                msg,
                Value::from(id.to_string()),
            ));
        }
    }
    let organizations: std::collections::HashSet<_> =
        products.iter().map(|p| p.organization_id).collect();
    if organizations.len() > 1 {
        v.push(FieldError::new(
            "value_error",
            loc!["body", "products"],
            "Products must all belong to the same organization.",
            list(),
        ));
    }
    v.finish()?;
    let first = products
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::internal("no product left after validation"))?;
    let price = first
        .first_active_price()
        .cloned()
        .ok_or_else(|| ApiError::internal("a validated product has no active price"))?;
    Ok((first, price, ids.iter().map(|id| ProductId(*id)).collect()))
}

/// The product and price a checkout is created for, and the products it offers: a list of
/// products (`products`, the first one selected), a price (`product_price_id`) or a
/// product (`product_id`, its first active price), readable by the subject, neither
/// archived (reference 1.2 steps 1–2).
pub(super) async fn price_for_create(
    state: &AppState,
    subject: Subject,
    input: &CheckoutCreate,
) -> Result<(Product, Price, Vec<ProductId>), ApiError> {
    if let Some(ids) = &input.products {
        return products_for_create(state, subject, ids).await;
    }
    let (product, price) = single_price_for_create(state, subject, input).await?;
    let products = vec![product.id];
    Ok((product, price, products))
}

async fn single_price_for_create(
    state: &AppState,
    subject: Subject,
    input: &CheckoutCreate,
) -> Result<(Product, Price), ApiError> {
    if let Some(price_id) = input.product_price_id {
        let not_found = || {
            ApiError::invalid(
                loc!["body", "product_price_id"],
                "Price does not exist.",
                Value::from(price_id.to_string()),
            )
        };
        let found =
            crate::domain::product::product_for_price(&state.store, PriceId(price_id)).await?;
        let product = accessible(state, subject, found)
            .await
            .ok_or_else(not_found)?;
        let price = product
            .price(PriceId(price_id))
            .cloned()
            .ok_or_else(not_found)?;
        if price.is_archived {
            return Err(ApiError::invalid(
                loc!["body", "product_price_id"],
                "Price is archived.",
                Value::from(price_id.to_string()),
            ));
        }
        if product.is_archived {
            return Err(ApiError::invalid(
                loc!["body", "product_price_id"],
                "Product is archived.",
                Value::from(price_id.to_string()),
            ));
        }
        return Ok((product, price));
    }
    if let Some(product_id) = input.product_id {
        let not_found = || {
            ApiError::invalid(
                loc!["body", "product_id"],
                "Product does not exist.",
                Value::from(product_id.to_string()),
            )
        };
        let found = state
            .store
            .get::<Product>(&ProductId(product_id).key())
            .await?;
        let product = accessible(state, subject, found)
            .await
            .ok_or_else(not_found)?;
        if product.is_archived {
            return Err(ApiError::invalid(
                loc!["body", "product_id"],
                "Product is archived.",
                Value::from(product_id.to_string()),
            ));
        }
        let price = product.first_active_price().cloned().ok_or_else(|| {
            ApiError::invalid(
                loc!["body", "product_id"],
                "Product has no active price.",
                Value::from(product_id.to_string()),
            )
        })?;
        return Ok((product, price));
    }
    Err(ApiError::validation(FieldError::new(
        "missing",
        loc!["body", "product_price_id"],
        "Field required",
        Value::Null,
    )))
}

pub(super) fn email_field(v: &mut Validator, field: &str, email: &str) -> Option<String> {
    let email = email.trim();
    v.email(loc!["body", field], email)
        .then(|| email.to_string())
}

pub(super) fn optional_string(value: Option<String>) -> Option<String> {
    value
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The changes a request asks for, resolved against the checkout's product and organization.
/// `public`: the client-secret variant (no metadata, discount by code only).
pub(super) async fn resolve_changes(
    state: &AppState,
    checkout: &Checkout,
    input: CheckoutChanges,
    public: bool,
) -> Result<Changes, ApiError> {
    let mut v = Validator::new();
    let mut ch = Changes::default();
    let current = product_of(state, checkout).await?;
    let (product, price) = product_and_price(
        state,
        checkout,
        current,
        input.product_id.as_value().copied(),
        input.product_price_id.as_value().copied(),
        &mut v,
    )
    .await?;
    if product.id != checkout.product_id {
        ch.product = Some(product.id);
        ch.product_trial = Some(product.trial);
        // A discount that does not apply to the new product is removed (Polar).
        if let (Some(applied), Maybe::Absent) = (&checkout.discount, &input.discount_id) {
            let applies = discount_by_id(&state.store, applied.id)
                .await?
                .is_some_and(|d| d.value.applies_to(product.id));
            if !applies {
                ch.discount = Some((None, "discount_id"));
            }
        }
    }
    ch.price = price;
    if let Maybe::Value(a) = input.amount {
        if check_amount(&mut v, a) {
            ch.amount = Some(a);
        }
    }
    if let Some(name) = input.customer_name.into_update() {
        // The buyer's name becomes a customer's, which may reach a message header.
        if name
            .as_deref()
            .is_none_or(|n| v.header_safe(loc!["body", "customer_name"], n))
        {
            ch.customer_name = Some(optional_string(name));
        }
    }
    match input.customer_email {
        Maybe::Value(e) => {
            let e = e.trim().to_string();
            if e.is_empty() {
                ch.customer_email = Some(None);
            } else if let Some(e) = email_field(&mut v, "customer_email", &e) {
                ch.customer_email = Some(Some(e));
            }
        }
        Maybe::Null => ch.customer_email = Some(None),
        Maybe::Absent => {}
    }
    match input.customer_billing_address {
        Maybe::Value(a) if !a.is_null() => {
            if let Some(a) = address_field(&mut v, &a) {
                ch.customer_billing_address = Some(Some(a));
            }
        }
        Maybe::Value(_) | Maybe::Null => ch.customer_billing_address = Some(None),
        Maybe::Absent => {}
    }
    if let Some(t) = input.customer_tax_id.into_update() {
        ch.customer_tax_id = Some(t);
    }
    if let Maybe::Value(data) = &input.custom_field_data {
        let non_empty = data.as_object().is_some_and(|m| !m.is_empty());
        if non_empty || !data.is_object() {
            ch.custom_field_data = custom_field_data(&mut v, state, &product, data).await?;
        }
    }
    if public {
        // A code is ignored when the checkout does not allow codes (Polar).
        if checkout.allow_discount_codes {
            match input.discount_code {
                Maybe::Value(code) => {
                    match discount_for_code(state, checkout.organization_id, product.id, &code)
                        .await?
                    {
                        Ok(d) => {
                            ch.discount = Some((Some(AppliedDiscount::from(&d)), "discount_code"))
                        }
                        Err(e) => v.push(e),
                    }
                }
                Maybe::Null => ch.discount = Some((None, "discount_code")),
                Maybe::Absent => {}
            }
        }
    } else {
        match input.discount_id {
            Maybe::Value(id) => match discount_for_checkout(
                state,
                checkout.organization_id,
                product.id,
                DiscountId(id),
            )
            .await?
            {
                Ok(d) => ch.discount = Some((Some(AppliedDiscount::from(&d)), "discount_id")),
                Err(e) => v.push(e),
            },
            Maybe::Null => ch.discount = Some((None, "discount_id")),
            Maybe::Absent => {}
        }
        if let Maybe::Value(a) = input.allow_discount_codes {
            ch.allow_discount_codes = Some(a);
        }
        if let Maybe::Value(m) = &input.metadata {
            ch.metadata = metadata_field(&mut v, "metadata", m);
        }
        if let Maybe::Value(m) = &input.customer_metadata {
            ch.customer_metadata = metadata_field(&mut v, "customer_metadata", m);
        }
        match input.customer_ip_address {
            Maybe::Value(ip) => {
                if check_ip(&mut v, &ip) {
                    ch.customer_ip_address = Some(Some(ip));
                }
            }
            Maybe::Null => ch.customer_ip_address = Some(None),
            Maybe::Absent => {}
        }
        match input.success_url {
            Maybe::Value(u) => {
                if v.http_url(loc!["body", "success_url"], &u) {
                    ch.success_url = Some(Some(u));
                }
            }
            Maybe::Null => ch.success_url = Some(None),
            Maybe::Absent => {}
        }
        if let Some(o) = input.embed_origin.into_update() {
            ch.embed_origin = Some(o);
        }
    }
    resolve_2026_fields(&mut v, &mut ch, input.terms, input.buyer, public);
    v.finish()?;
    Ok(ch)
}

// ---------------------------------------------------------------------------------------
// What Tollgate does not sell: a clear 422 naming the field, never a silent ignore.

fn refuse(v: &mut Validator, field: &str, msg: &str, input: Value) {
    v.push(FieldError::new(
        "value_error",
        loc!["body", field],
        msg,
        input,
    ));
}

/// Seat and unit counts (Polar refuses them for prices that are not seat- or unit-based,
/// and Tollgate has none), with Polar's messages.
fn refuse_counts(v: &mut Validator, counts: &[(&str, Option<i64>)]) {
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

/// Business purchases (a billing name, a business customer): not supported.
fn refuse_business(v: &mut Validator, is_business: Option<bool>, billing_name: Option<&str>) {
    if is_business == Some(true) {
        refuse(
            v,
            "is_business_customer",
            "Business customers are not supported.",
            Value::Bool(true),
        );
    }
    if let Some(name) = billing_name.filter(|n| !n.trim().is_empty()) {
        refuse(
            v,
            "customer_billing_name",
            "A billing name is only used for business customers, which are not supported.",
            Value::from(name),
        );
    }
}

/// A presentment currency: US dollars only.
fn check_currency(v: &mut Validator, currency: Option<&str>) {
    if let Some(c) = currency
        .filter(|c| crate::domain::currency::Currency::parse(&c.to_ascii_lowercase()).is_err())
    {
        refuse(
            v,
            "currency",
            "Product is not available in the specified currency.",
            Value::from(c),
        );
    }
}

/// The trial of a create or update body (Polar's `trial_interval` and
/// `trial_interval_count`, both or neither): `Some(Some)` sets the checkout's own trial,
/// `Some(None)` removes it (both `null`), `None` leaves it. Each field is `None` when the
/// body lacks it, `Some(None)` when it is `null`.
pub(super) fn trial_fields(
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
pub(super) fn refuse_unsupported_on_create(v: &mut Validator, input: &CheckoutCreate) {
    refuse_counts(
        v,
        &[
            ("seats", input.seats),
            ("min_seats", input.min_seats),
            ("max_seats", input.max_seats),
            ("units", input.units),
            ("min_units", input.min_units),
            ("max_units", input.max_units),
        ],
    );
    refuse_business(
        v,
        input.is_business_customer,
        input.customer_billing_name.as_deref(),
    );
    check_currency(v, input.currency.as_deref());
    if let Some(prices) = input.prices.as_ref().filter(|p| !p.is_null()) {
        refuse(
            v,
            "prices",
            "Ad-hoc prices are not supported.",
            prices.clone(),
        );
    }
}

/// The 2026 fields of an update or confirm body: the supported ones as changes, the
/// others refused. `public`: the buyer's body (`allow_trial` may only turn a trial off,
/// `payment_method_type` is the buyer's, the seller's terms are not in it).
fn resolve_2026_fields(
    v: &mut Validator,
    ch: &mut Changes,
    terms: CheckoutTermsUpdate,
    buyer: CheckoutBuyerUpdate,
    public: bool,
) {
    refuse_counts(
        v,
        &[
            ("seats", buyer.seats.as_value().copied()),
            ("units", buyer.units.as_value().copied()),
        ],
    );
    refuse_business(
        v,
        buyer.is_business_customer.as_value().copied(),
        buyer.customer_billing_name.as_value().map(String::as_str),
    );
    // `locale` is accepted: the pages are in English, as Polar's are for organizations
    // without checkout localization.
    match (buyer.allow_trial, public) {
        (Maybe::Value(true), true) => v.push(FieldError::new(
            "literal_error",
            loc!["body", "allow_trial"],
            "Input should be False",
            Value::Bool(true),
        )),
        (Maybe::Value(allow), _) => ch.allow_trial = Some(allow),
        (Maybe::Null | Maybe::Absent, _) => {}
    }
    if public {
        match buyer.payment_method_type {
            Maybe::Value(m) if m.trim().is_empty() => ch.payment_method_type = Some(None),
            Maybe::Value(m) if m.trim() == "card" => {
                ch.payment_method_type = Some(Some("card".into()))
            }
            Maybe::Value(m) => refuse(
                v,
                "payment_method_type",
                "Only card payments are supported.",
                Value::from(m),
            ),
            Maybe::Null => ch.payment_method_type = Some(None),
            Maybe::Absent => {}
        }
        return;
    }
    check_currency(v, terms.currency.as_value().map(String::as_str));
    let maybe_str = |m: &Maybe<String>| match m {
        Maybe::Absent => None,
        Maybe::Null => Some(None),
        Maybe::Value(s) => Some(Some(s.clone())),
    };
    let maybe_int = |m: &Maybe<i64>| match m {
        Maybe::Absent => None,
        Maybe::Null => Some(None),
        Maybe::Value(n) => Some(Some(*n)),
    };
    let interval = maybe_str(&terms.trial_interval);
    if let Some(trial) = trial_fields(
        v,
        interval.as_ref().map(|i| i.as_deref()),
        maybe_int(&terms.trial_interval_count),
    ) {
        ch.trial = Some(trial);
    }
    if let Maybe::Value(r) = terms.require_billing_address {
        ch.require_billing_address = Some(r);
    }
    match terms.return_url {
        Maybe::Value(u) => {
            if v.http_url(loc!["body", "return_url"], &u) {
                ch.return_url = Some(Some(u));
            }
        }
        Maybe::Null => ch.return_url = Some(None),
        Maybe::Absent => {}
    }
}

/// The product a change sells and the price to select, if it changes: `product_id` must
/// be one of the checkout's products and not archived (then its first active price, or
/// `price_id`, which must be that product's); a `price_id` alone may be a price of any of
/// the checkout's products (selecting that product). Problems go to `v` and leave the
/// current product.
async fn product_and_price(
    state: &AppState,
    checkout: &Checkout,
    current: Product,
    product_id: Option<Uuid>,
    price_id: Option<Uuid>,
    v: &mut Validator,
) -> Result<(Product, Option<Price>), ApiError> {
    let mut product = current;
    let mut switched = false;
    if let Some(id) = product_id.filter(|id| *id != checkout.product_id.0) {
        let listed = checkout.products.contains(&ProductId(id));
        let found = match listed {
            true => state.store.get::<Product>(&ProductId(id).key()).await?,
            false => None,
        };
        match found.map(|p| p.value) {
            None => v.push(FieldError::new(
                "value_error",
                loc!["body", "product_id"],
                "Product is not available in this checkout.",
                Value::from(id.to_string()),
            )),
            Some(p) if p.is_archived => v.push(FieldError::new(
                "value_error",
                loc!["body", "product_id"],
                "Product is archived.",
                Value::from(id.to_string()),
            )),
            Some(p) => {
                product = p;
                switched = true;
            }
        }
    }
    let Some(id) = price_id else {
        if !switched {
            return Ok((product, None));
        }
        return Ok(match product.first_active_price().cloned() {
            Some(price) => (product, Some(price)),
            None => {
                v.push(FieldError::new(
                    "value_error",
                    loc!["body", "product_id"],
                    "Product has no active price.",
                    Value::from(product.id.to_string()),
                ));
                (product, None)
            }
        });
    };
    let price_problem = |msg: &str| {
        FieldError::new(
            "value_error",
            loc!["body", "product_price_id"],
            msg,
            Value::from(id.to_string()),
        )
    };
    if let Some(p) = product.price(PriceId(id)) {
        if p.is_archived {
            v.push(price_problem("Price is archived."));
            return Ok((product, None));
        }
        let price = p.clone();
        return Ok((product, Some(price)));
    }
    // Another product's price: one of the checkout's other products (when no product was
    // named), or a price the checkout does not offer.
    let owner = crate::domain::product::product_for_price(&state.store, PriceId(id))
        .await?
        .map(|p| p.value)
        .filter(|p| p.organization_id == checkout.organization_id);
    match owner {
        Some(other) if !switched && checkout.products.contains(&other.id) => {
            match other.price(PriceId(id)) {
                Some(p) if p.is_archived => v.push(price_problem("Price is archived.")),
                Some(_) if other.is_archived => v.push(price_problem("Product is archived.")),
                Some(p) => {
                    let price = p.clone();
                    return Ok((other, Some(price)));
                }
                None => v.push(price_problem("Price does not exist.")),
            }
        }
        Some(_) => v.push(price_problem("Price does not belong to the product.")),
        None => v.push(price_problem("Price does not exist.")),
    }
    Ok((product, None))
}

/// The product, if the subject may sell it (another organization's reads as missing).
async fn accessible(
    state: &AppState,
    subject: Subject,
    found: Option<tollgate_storage::Stored<Product>>,
) -> Option<Product> {
    let p = found?;
    can_access(state, subject, p.value.organization_id)
        .await
        .unwrap_or(false)
        .then_some(p.value)
}
