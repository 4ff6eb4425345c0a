//! Resolving the fields of checkout requests into domain values: amounts, addresses,
//! metadata, custom field data, discounts and the price a checkout is created for, with
//! every reference checked here; shared by the organizer and client endpoints and by
//! confirmation.

use std::net::IpAddr;

use serde_json::Value;
use tollgate_actors::checkout::{AppliedDiscount, Changes, Checkout};

use crate::api::checkout::{CheckoutChanges, CheckoutCreate};
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
use crate::domain::product::{Price, Product};
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

/// The price a checkout is created for: by price id or by product id (its first active
/// price), readable by the subject, neither archived (reference 1.2 steps 1–2).
pub(super) async fn price_for_create(
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
    let product = product_of(state, checkout).await?;
    let mut v = Validator::new();
    let mut ch = Changes::default();
    match input.product_price_id {
        Maybe::Value(id) => {
            let price = match product.price(PriceId(id)) {
                Some(p) if p.is_archived => {
                    v.push(FieldError::new(
                        "value_error",
                        loc!["body", "product_price_id"],
                        "Price is archived.",
                        Value::from(id.to_string()),
                    ));
                    None
                }
                Some(p) => Some(p.clone()),
                None => {
                    // Another product's price, or no price at all.
                    let other =
                        crate::domain::product::product_for_price(&state.store, PriceId(id))
                            .await?
                            .filter(|p| p.value.organization_id == checkout.organization_id);
                    let msg = if other.is_some() {
                        "Price does not belong to the product."
                    } else {
                        "Price does not exist."
                    };
                    v.push(FieldError::new(
                        "value_error",
                        loc!["body", "product_price_id"],
                        msg,
                        Value::from(id.to_string()),
                    ));
                    None
                }
            };
            ch.price = price;
        }
        Maybe::Null | Maybe::Absent => {}
    }
    if let Maybe::Value(a) = input.amount {
        if check_amount(&mut v, a) {
            ch.amount = Some(a);
        }
    }
    if let Some(name) = input.customer_name.into_update() {
        ch.customer_name = Some(optional_string(name));
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
                Maybe::Value(code) => match discount_for_code(
                    state,
                    checkout.organization_id,
                    checkout.product_id,
                    &code,
                )
                .await?
                {
                    Ok(d) => ch.discount = Some((Some(AppliedDiscount::from(&d)), "discount_code")),
                    Err(e) => v.push(e),
                },
                Maybe::Null => ch.discount = Some((None, "discount_code")),
                Maybe::Absent => {}
            }
        }
    } else {
        match input.discount_id {
            Maybe::Value(id) => match discount_for_checkout(
                state,
                checkout.organization_id,
                checkout.product_id,
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
    v.finish()?;
    Ok(ch)
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
