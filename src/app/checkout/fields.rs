//! Resolving the fields of checkout requests into domain values: amounts, addresses,
//! metadata, custom field data, discounts and the price a checkout is created for, with
//! every reference checked here; shared by the organizer and client endpoints and by
//! confirmation.

use serde_json::Value;
use tollgate_actors::checkout::{AppliedDiscount, Changes, Checkout};
use tollgate_storage::StorageError;
use uuid::Uuid;

use crate::api::checkout::create::{
    address_field, check_amount, check_currency, check_ip, email_field, metadata_field,
    optional_string, refuse, refuse_business, refuse_counts, trial_fields,
};
use crate::api::checkout::{
    CheckoutBuyerUpdate, CheckoutChanges, CheckoutTarget, CheckoutTermsUpdate,
};
use crate::api::custom_field_data::{validate_custom_field_data, CustomFieldInput};
use crate::api::Maybe;
use crate::app::access::can_access;
use crate::app::catalog::custom_fields::attached_custom_fields;
use crate::auth::Subject;
use crate::domain::custom_field::CustomFieldData;
use crate::domain::discount::{discount_by_code, discount_by_id, Discount};
use crate::domain::ids::{DiscountId, OrganizationId, PriceId, ProductId};
use crate::domain::product::{Price, Product};
use crate::error::{ApiError, AppError, FieldError, Given, Invalid};
use crate::field;
use crate::loc;
use crate::state::AppState;
use crate::validate::Validator;

use crate::app::views::product_of;

// ---------------------------------------------------------------------------------------
// Resolving request fields into domain values (every reference checked here).

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

/// The custom field data of a create command checked against the product's fields: what
/// is stored, or the fields that break them.
pub(super) async fn custom_field_data_for_create(
    state: &AppState,
    product: &Product,
    input: &CustomFieldInput,
) -> Result<Result<CustomFieldData, Vec<Invalid>>, AppError> {
    let fields = custom_fields_of(state, product).await?;
    Ok(input.check(&fields))
}

/// A discount given by id, if it is the organization's, applies to the product and is
/// redeemable now.
pub(super) async fn discount_for_checkout(
    state: &AppState,
    org: OrganizationId,
    product: ProductId,
    id: DiscountId,
) -> Result<Option<Discount>, StorageError> {
    Ok(discount_by_id(&state.store, id)
        .await?
        .map(|d| d.value)
        .filter(|d| {
            d.organization_id == org && d.applies_to(product) && d.is_redeemable(state.now())
        }))
}

/// A discount given by id on an update, else its 422.
async fn discount_for_update(
    state: &AppState,
    org: OrganizationId,
    product: ProductId,
    id: DiscountId,
) -> Result<Result<Discount, FieldError>, ApiError> {
    let found = discount_for_checkout(state, org, product, id).await?;
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

/// The products a checkout is created for (Polar's `CheckoutProductsCreate`; at least
/// one, unique: parsed so): each readable by the subject, not archived and with an active
/// price, all of one organization. The first one is selected, at its first active price.
pub(super) async fn products_for_create(
    state: &AppState,
    subject: Subject,
    ids: &[ProductId],
) -> Result<(Product, Price, Vec<ProductId>), AppError> {
    let mut invalid = Vec::new();
    let mut products = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let found = state.store.get::<Product>(&id.key()).await?;
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
            invalid.push(Invalid::new(field!["products", i], msg, id.0));
        }
    }
    let organizations: std::collections::HashSet<_> =
        products.iter().map(|p| p.organization_id).collect();
    if organizations.len() > 1 {
        let list: Vec<String> = ids.iter().map(|id| id.0.to_string()).collect();
        invalid.push(Invalid::new(
            field!["products"],
            "Products must all belong to the same organization.",
            Given::of(&list),
        ));
    }
    if !invalid.is_empty() {
        return Err(AppError::Invalid(invalid));
    }
    let first = products
        .into_iter()
        .next()
        .ok_or_else(|| AppError::internal("no product left after validation"))?;
    let price = first
        .first_active_price()
        .cloned()
        .ok_or_else(|| AppError::internal("a validated product has no active price"))?;
    Ok((first, price, ids.to_vec()))
}

/// The product and price a checkout is created for, and the products it offers: a list of
/// products (the first one selected), a price or a product (its first active price),
/// readable by the subject, neither archived (reference 1.2 steps 1–2).
pub(super) async fn price_for_create(
    state: &AppState,
    subject: Subject,
    target: &CheckoutTarget,
) -> Result<(Product, Price, Vec<ProductId>), AppError> {
    match *target {
        CheckoutTarget::Products(ref ids) => products_for_create(state, subject, ids).await,
        CheckoutTarget::Price(price_id) => {
            let refused =
                |msg: &str| AppError::invalid(field!["product_price_id"], msg, price_id.0);
            let found = crate::domain::product::product_for_price(&state.store, price_id).await?;
            let product = accessible(state, subject, found)
                .await
                .ok_or_else(|| refused("Price does not exist."))?;
            let price = product
                .price(price_id)
                .cloned()
                .ok_or_else(|| refused("Price does not exist."))?;
            if price.is_archived {
                return Err(refused("Price is archived."));
            }
            if product.is_archived {
                return Err(refused("Product is archived."));
            }
            let products = vec![product.id];
            Ok((product, price, products))
        }
        CheckoutTarget::Product(product_id) => {
            let refused = |msg: &str| AppError::invalid(field!["product_id"], msg, product_id.0);
            let found = state.store.get::<Product>(&product_id.key()).await?;
            let product = accessible(state, subject, found)
                .await
                .ok_or_else(|| refused("Product does not exist."))?;
            if product.is_archived {
                return Err(refused("Product is archived."));
            }
            let price = product
                .first_active_price()
                .cloned()
                .ok_or_else(|| refused("Product has no active price."))?;
            let products = vec![product.id];
            Ok((product, price, products))
        }
    }
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
            Maybe::Value(id) => match discount_for_update(
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
