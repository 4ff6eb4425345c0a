//! Checkout sessions: the organizer endpoints (token), the client endpoints (client
//! secret only; any `Authorization` header is ignored), and the purchase itself:
//! confirm → charge → one atomic write of the checkout, order, subscription and license keys.

use std::net::IpAddr;

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::{DateTime, Duration, Months, Utc};
use serde_json::Value;
use tollgate_actors::checkout::{
    AppliedDiscount, Changes, Checkout, CheckoutError, CheckoutStatus, ConfirmCheckout,
    ExpireCheckout, GetCheckout, Issue, NewCheckout, SettleCheckout, Settlement, UpdateCheckout,
    CHECKOUT_BY_CREATED, CHECKOUT_BY_EXPIRES, CHECKOUT_CONFIRMED, CHECKOUT_OPEN_BY_EXPIRY,
    CHECKOUT_PRODUCT_BY_CREATED, CHECKOUT_PRODUCT_BY_EXPIRES,
};
use tollgate_actors::ids::derived_uuid;
use tollgate_actors::license_key::{generate_key, KeyStatus, LicenseKey};
use tollgate_actors::subscription::{Purchase, Subscription};
use tollgate_actors::ActorError;
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{Batch, Expect, StorageError, Stored};

use crate::api::checkout::{
    checkout_json, checkout_public_json, CheckoutChanges, CheckoutContext, CheckoutCreate,
};
use crate::api::custom_field_data::validate_custom_field_data;
use crate::api::customer::parse_address;
use crate::api::metadata::parse_metadata;
use crate::api::organization::OrganizationView;
use crate::api::Maybe;
use crate::auth::tokens::{generate, CHECKOUT_SECRET_PREFIX, CUSTOMER_SESSION_PREFIX};
use crate::domain::benefit::{BenefitProperties, Timeframe};
use crate::domain::custom_field::CustomFieldData;
use crate::domain::customer::{customer_by_email, customer_by_id, Customer};
use crate::domain::customer_session::CustomerSession;
use crate::domain::discount::{discount_by_code, discount_by_id, Discount};
use crate::domain::ids::{
    CheckoutId, CustomerId, CustomerSessionId, DiscountId, LicenseKeyId, OrderId, OrganizationId,
    PriceId, ProductId, SubscriptionId,
};
use crate::domain::metadata::Metadata;
use crate::domain::order::Order;
use crate::domain::organization::Organization;
use crate::domain::product::{Price, Product, RecurringInterval};
use crate::error::{ApiError, ApiResult, FieldError};
use crate::extract::auth::{CheckoutsRead, CheckoutsWrite};
use crate::extract::{
    path_id, Auth, ListParams, QueryParams, SortField, Sorting, Subject, ValidJson,
};
use crate::loc;
use crate::payments::{ChargeOutcome, ChargeRequest};
use crate::routes::access::{can_access, organizations_for_list};
use crate::routes::custom_fields::attached_custom_fields;
use crate::routes::listing::{compare_times, directed, sorted_page_of};
use crate::routes::products::{attached_custom_fields_view, checkout_product_view, price_view};
use crate::state::AppState;
use crate::validate::Validator;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/checkouts/custom/", { get => list, post => create });
    crate::resource!(cfg, "/v1/checkouts/custom/client/{client_secret}", {
        get => client_get,
        patch => client_update,
    });
    crate::resource!(cfg, "/v1/checkouts/custom/client/{client_secret}/confirm", {
        post => client_confirm,
    });
    crate::resource!(cfg, "/v1/checkouts/custom/{id}", { get => get, patch => update });
}

// ---------------------------------------------------------------------------------------
// Errors of the checkout aggregate, as HTTP errors.

fn issues_to_error(issues: Vec<Issue>) -> ApiError {
    ApiError::Validation(
        issues
            .into_iter()
            .map(|i| {
                let mut loc = vec![Value::from("body")];
                loc.extend(i.loc.into_iter().map(Value::from));
                FieldError::new(i.kind, loc, i.msg, Value::Null)
            })
            .collect(),
    )
}

fn checkout_error(e: ActorError<CheckoutError>) -> ApiError {
    match e {
        ActorError::Domain(CheckoutError::NotOpen(status)) => ApiError::NotOpenCheckout {
            id: String::new(),
            status: status.as_str().to_string(),
        },
        ActorError::Domain(CheckoutError::Invalid(issues)) => issues_to_error(issues),
        ActorError::Domain(CheckoutError::WrongStatus { expected, found }) => {
            ApiError::Internal(format!(
                "checkout transition expected {} but found {}",
                expected.as_str(),
                found.as_str()
            ))
        }
        ActorError::NotFound => ApiError::not_found(),
        ActorError::AlreadyExists => ApiError::Conflict("The checkout already exists.".into()),
        ActorError::Unavailable(_) => ApiError::Unavailable,
        ActorError::Storage(s) => s.into(),
    }
}

fn not_open(c: &Checkout, status: CheckoutStatus) -> ApiError {
    ApiError::NotOpenCheckout {
        id: c.id.to_string(),
        status: status.as_str().to_string(),
    }
}

/// Names the checkout in a `NotOpenCheckout` raised inside the actor.
fn with_id(e: ApiError, id: CheckoutId) -> ApiError {
    match e {
        ApiError::NotOpenCheckout { status, .. } => ApiError::NotOpenCheckout {
            id: id.to_string(),
            status,
        },
        other => other,
    }
}

fn widen(e: ActorError) -> ActorError<CheckoutError> {
    match e {
        ActorError::NotFound => ActorError::NotFound,
        ActorError::AlreadyExists => ActorError::AlreadyExists,
        ActorError::Unavailable(u) => ActorError::Unavailable(u),
        ActorError::Storage(s) => ActorError::Storage(s),
        ActorError::Domain(never) => match never {},
    }
}

// ---------------------------------------------------------------------------------------
// Reading and rendering.

async fn load(state: &AppState, id: CheckoutId) -> Result<Checkout, ApiError> {
    state
        .checkouts
        .call(id, GetCheckout)
        .await
        .map_err(checkout_error)
}

/// The checkout if the subject may see it (its organization), else 404.
async fn checkout_for(
    state: &AppState,
    subject: Subject,
    id: CheckoutId,
) -> Result<Checkout, ApiError> {
    // Read the record first so that an unknown id never spawns an actor.
    let Some(stored) = state.store.get::<Checkout>(&id.key())? else {
        return Err(ApiError::not_found());
    };
    if !can_access(state, subject, stored.value.organization_id)? {
        return Err(ApiError::not_found());
    }
    load(state, id).await
}

/// The checkout of a client secret; 404 once it has expired, whatever its status (Polar).
async fn checkout_by_secret(state: &AppState, secret: &str) -> Result<Checkout, ApiError> {
    let Some(id) = state.store.lookup_unique(&Checkout::secret_key(secret))? else {
        return Err(ApiError::not_found());
    };
    let id = CheckoutId::from_key(&id)
        .ok_or_else(|| ApiError::internal("bad checkout id in the secret index"))?;
    let checkout = load(state, id).await?;
    if state.now() >= checkout.expires_at {
        return Err(ApiError::not_found());
    }
    Ok(checkout)
}

fn product_of(state: &AppState, c: &Checkout) -> Result<Product, ApiError> {
    state
        .store
        .get::<Product>(&c.product_id.key())?
        .map(|p| p.value)
        .ok_or_else(|| ApiError::internal("a checkout's product is missing"))
}

fn context(
    state: &AppState,
    c: &Checkout,
    status: CheckoutStatus,
) -> Result<CheckoutContext, ApiError> {
    let product = product_of(state, c)?;
    let base = &state.public_url;
    Ok(CheckoutContext {
        status: status.as_str(),
        url: format!("{base}/checkout/{}", c.client_secret),
        success_url: c.success_url(&format!("{base}/checkout/{}/confirmation", c.client_secret)),
        product: checkout_product_view(state, &product)?,
        product_price: price_view(&product, &c.price),
        attached_custom_fields: attached_custom_fields_view(state, &product)?,
    })
}

fn render(state: &AppState, c: &Checkout) -> Result<Value, ApiError> {
    let ctx = context(state, c, c.effective_status(state.now()))?;
    Ok(checkout_json(c, &ctx))
}

fn render_public(
    state: &AppState,
    c: &Checkout,
    status: CheckoutStatus,
    session: Option<&str>,
) -> Result<Value, ApiError> {
    let ctx = context(state, c, status)?;
    let org = state
        .store
        .get::<Organization>(&c.organization_id.key())?
        .map(|o| serde_json::to_value(OrganizationView::from(&o.value)).unwrap_or(Value::Null))
        .unwrap_or(Value::Null);
    Ok(checkout_public_json(c, &ctx, org, session))
}

// ---------------------------------------------------------------------------------------
// Resolving request fields into domain values (every reference checked here).

const MIN_AMOUNT: i64 = 50;
const MAX_AMOUNT: i64 = 99_999_999;

fn check_amount(v: &mut Validator, amount: i64) -> bool {
    v.int_range(
        loc!["body", "amount"],
        amount,
        Some(MIN_AMOUNT),
        Some(MAX_AMOUNT),
    )
}

fn check_ip(v: &mut Validator, ip: &str) -> bool {
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

fn metadata_field(v: &mut Validator, field: &str, value: &Value) -> Option<Metadata> {
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

fn address_field(v: &mut Validator, value: &Value) -> Option<crate::domain::customer::Address> {
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

fn custom_fields_of(
    state: &AppState,
    product: &Product,
) -> Result<Vec<(crate::domain::custom_field::CustomField, bool)>, ApiError> {
    Ok(
        attached_custom_fields(state, &product.attached_custom_fields)?
            .into_iter()
            .map(|(cf, a)| (cf, a.required))
            .collect(),
    )
}

fn custom_field_data(
    v: &mut Validator,
    state: &AppState,
    product: &Product,
    value: &Value,
) -> Result<Option<CustomFieldData>, ApiError> {
    let fields = custom_fields_of(state, product)?;
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
fn discount_for_checkout(
    state: &AppState,
    org: OrganizationId,
    product: ProductId,
    id: DiscountId,
) -> Result<Result<Discount, FieldError>, ApiError> {
    let found = discount_by_id(&state.store, id)?
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

fn discount_for_code(
    state: &AppState,
    org: OrganizationId,
    product: ProductId,
    code: &str,
) -> Result<Result<Discount, FieldError>, ApiError> {
    let found = discount_by_code(&state.store, org, code)?
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
fn price_for_create(
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
        let product = crate::domain::product::product_for_price(&state.store, PriceId(price_id))?
            .map(|p| p.value)
            .filter(|p| can_access(state, subject, p.organization_id).unwrap_or(false))
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
        let product = state
            .store
            .get::<Product>(&ProductId(product_id).key())?
            .map(|p| p.value)
            .filter(|p| can_access(state, subject, p.organization_id).unwrap_or(false))
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

fn email_field(v: &mut Validator, field: &str, email: &str) -> Option<String> {
    let email = email.trim();
    v.email(loc!["body", field], email)
        .then(|| email.to_string())
}

fn optional_string(value: Option<String>) -> Option<String> {
    value
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

// ---------------------------------------------------------------------------------------
// Organizer endpoints.

#[derive(Debug, Clone, Copy, PartialEq)]
enum CheckoutSort {
    CreatedAt,
    ExpiresAt,
}

impl SortField for CheckoutSort {
    const FIELDS: &'static [(&'static str, CheckoutSort)] = &[
        ("created_at", CheckoutSort::CreatedAt),
        ("expires_at", CheckoutSort::ExpiresAt),
    ];
}

async fn list(
    auth: Auth<CheckoutsRead>,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> ApiResult<HttpResponse> {
    let mut q = QueryParams::parse(req.query_string());
    let params = ListParams::from_query(&mut q);
    let orgs: Vec<OrganizationId> = q.ids("organization_id");
    let products: Vec<ProductId> = q.ids("product_id");
    let sorting = Sorting::<CheckoutSort>::from_query(&mut q, (CheckoutSort::CreatedAt, true));
    q.finish()?;
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(&state, auth.subject(), &orgs)?;
    // The first criterion is served by an index (equal values follow the id), the others
    // in memory.
    let (field, desc) = sorting.primary();
    let (index, tenants): (&'static str, Vec<Vec<u8>>) = if products.is_empty() {
        let index = match field {
            CheckoutSort::CreatedAt => CHECKOUT_BY_CREATED,
            CheckoutSort::ExpiresAt => CHECKOUT_BY_EXPIRES,
        };
        (index, orgs.iter().map(|o| o.key()).collect())
    } else {
        // Only products of the organizations the subject reaches.
        let mut tenants = Vec::new();
        for p in &products {
            if let Some(product) = state.store.get::<Product>(&p.key())? {
                if orgs.contains(&product.value.organization_id) {
                    tenants.push(p.key());
                }
            }
        }
        let index = match field {
            CheckoutSort::CreatedAt => CHECKOUT_PRODUCT_BY_CREATED,
            CheckoutSort::ExpiresAt => CHECKOUT_PRODUCT_BY_EXPIRES,
        };
        (index, tenants)
    };
    let several = sorting.several(|field, desc, a: &Checkout, b: &Checkout| {
        let ordering = match field {
            CheckoutSort::CreatedAt => compare_times(&a.created_at, &b.created_at),
            CheckoutSort::ExpiresAt => compare_times(&a.expires_at, &b.expires_at),
        };
        directed(ordering, desc)
    });
    let (items, total) = sorted_page_of::<Checkout>(
        &state,
        index,
        &tenants,
        desc,
        params,
        None,
        several.as_deref(),
    )?;
    let items = items
        .iter()
        .map(|c| render(&state, c))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(HttpResponse::Ok().json(serde_json::json!({
        "items": items,
        "pagination": crate::api::Pagination::new(total, params.limit),
    })))
}

async fn get(
    auth: Auth<CheckoutsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id: CheckoutId = path_id("id", &id)?;
    let checkout = checkout_for(&state, auth.subject(), id).await?;
    Ok(HttpResponse::Ok().json(render(&state, &checkout)?))
}

async fn create(
    auth: Auth<CheckoutsWrite>,
    state: web::Data<AppState>,
    body: ValidJson<CheckoutCreate>,
) -> ApiResult<HttpResponse> {
    let input = body.into_inner();
    let now = state.now();
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
    let expires_at = match input.expires_at {
        None => now + Duration::seconds(state.settings.checkout.ttl_secs as i64),
        Some(t) => {
            if t < now + Duration::minutes(1) || t > now + Duration::hours(24) {
                v.push(FieldError::new(
                    "value_error",
                    loc!["body", "expires_at"],
                    "Value error, expires_at must be between 1 minute and 24 hours from now.",
                    serde_json::json!(t),
                ));
            }
            t
        }
    };
    v.finish()?;

    let (product, price) = price_for_create(&state, auth.subject(), &input)?;
    let org = product.organization_id;
    let mut v = Validator::new();
    let discount = match input.discount_id {
        Some(id) => match discount_for_checkout(&state, org, product.id, DiscountId(id))? {
            Ok(d) => Some(AppliedDiscount::from(&d)),
            Err(e) => {
                v.push(e);
                None
            }
        },
        None => None,
    };
    let custom_field_data = match &input.custom_field_data {
        Some(data) => custom_field_data(&mut v, &state, &product, data)?,
        None => custom_field_data(&mut v, &state, &product, &Value::Object(Default::default()))?,
    }
    .unwrap_or_default();
    // A customer fills the fields the checkout leaves empty.
    let customer = match input.customer_id {
        Some(id) => match customer_by_id(&state.store, CustomerId(id))?
            .filter(|c| c.value.organization_id == org)
        {
            Some(c) => Some(c.value),
            None => {
                v.push(FieldError::new(
                    "value_error",
                    loc!["body", "customer_id"],
                    "Customer does not exist.",
                    Value::from(id.to_string()),
                ));
                None
            }
        },
        None => None,
    };
    if let Some(s) = input.subscription_id {
        // Upgrading a free subscription through a checkout is not supported (yet).
        v.push(FieldError::new(
            "value_error",
            loc!["body", "subscription_id"],
            "Subscription does not exist.",
            Value::from(s.to_string()),
        ));
    }
    v.finish()?;

    let mut new = NewCheckout {
        id: CheckoutId::new(),
        organization_id: org,
        client_secret: generate(CHECKOUT_SECRET_PREFIX, 32),
        expires_at,
        product_id: product.id,
        price,
        amount: input.amount,
        discount,
        allow_discount_codes: input.allow_discount_codes.unwrap_or(true),
        customer_id: customer.as_ref().map(|c| c.id),
        customer_name: optional_string(input.customer_name)
            .or_else(|| customer.as_ref().and_then(|c| c.name.clone())),
        customer_email: email.or_else(|| customer.as_ref().map(|c| c.email.clone())),
        customer_ip_address: optional_string(input.customer_ip_address),
        customer_billing_address: address
            .or_else(|| customer.as_ref().and_then(|c| c.billing_address.clone())),
        customer_tax_id: customer.as_ref().and_then(|c| c.tax_id.clone()),
        customer_metadata,
        metadata,
        custom_field_data,
        success_url: input.success_url,
        embed_origin: optional_string(input.embed_origin),
        subscription_id: None,
    };
    // A tax id given on create is validated against the address, like an update.
    let tax_input = optional_string(input.customer_tax_id);
    let checkout = Checkout::create(new.clone(), now, state.tax.as_ref())
        .map_err(|e| checkout_error(ActorError::Domain(e)))?;
    let checkout = match tax_input {
        Some(raw) => {
            let changes = Changes {
                customer_tax_id: Some(Some(raw)),
                ..Changes::default()
            };
            let mut updated = checkout
                .update(changes, now, state.tax.as_ref())
                .map_err(|e| checkout_error(ActorError::Domain(e)))?;
            updated.modified_at = None;
            updated
        }
        None => checkout,
    };
    new.id = checkout.id;
    state
        .checkouts
        .create(
            checkout.id,
            Stored {
                rev: 0,
                value: checkout.clone(),
            },
        )
        .await
        .map_err(|e| checkout_error(widen(e)))?;
    Ok(HttpResponse::Created().json(render(&state, &checkout)?))
}

/// The changes a request asks for, resolved against the checkout's product and organization.
/// `public`: the client-secret variant (no metadata, discount by code only).
fn resolve_changes(
    state: &AppState,
    checkout: &Checkout,
    input: CheckoutChanges,
    public: bool,
) -> Result<Changes, ApiError> {
    let product = product_of(state, checkout)?;
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
                        crate::domain::product::product_for_price(&state.store, PriceId(id))?
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
            ch.custom_field_data = custom_field_data(&mut v, state, &product, data)?;
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
                )? {
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
            )? {
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

async fn update(
    auth: Auth<CheckoutsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<CheckoutChanges>,
) -> ApiResult<HttpResponse> {
    let id: CheckoutId = path_id("id", &id)?;
    let checkout = checkout_for(&state, auth.subject(), id).await?;
    let status = checkout.effective_status(state.now());
    if status != CheckoutStatus::Open {
        return Err(not_open(&checkout, status));
    }
    let changes = resolve_changes(&state, &checkout, body.into_inner(), false)?;
    let updated = state
        .checkouts
        .call(
            id,
            UpdateCheckout {
                changes,
                tax: state.tax.clone(),
            },
        )
        .await
        .map_err(|e| with_id(checkout_error(e), id))?;
    Ok(HttpResponse::Ok().json(render(&state, &updated)?))
}

// ---------------------------------------------------------------------------------------
// Client endpoints: the client secret is the only credential.

async fn client_get(
    state: web::Data<AppState>,
    secret: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let checkout = checkout_by_secret(&state, &secret).await?;
    let status = checkout.effective_status(state.now());
    Ok(HttpResponse::Ok().json(render_public(&state, &checkout, status, None)?))
}

async fn client_update(
    state: web::Data<AppState>,
    secret: web::Path<String>,
    body: ValidJson<CheckoutChanges>,
) -> ApiResult<HttpResponse> {
    let checkout = checkout_by_secret(&state, &secret).await?;
    let status = checkout.effective_status(state.now());
    if status != CheckoutStatus::Open {
        return Err(not_open(&checkout, status));
    }
    let changes = resolve_changes(&state, &checkout, body.into_inner(), true)?;
    let updated = state
        .checkouts
        .call(
            checkout.id,
            UpdateCheckout {
                changes,
                tax: state.tax.clone(),
            },
        )
        .await
        .map_err(|e| with_id(checkout_error(e), checkout.id))?;
    let status = updated.effective_status(state.now());
    Ok(HttpResponse::Ok().json(render_public(&state, &updated, status, None)?))
}

async fn client_confirm(
    state: web::Data<AppState>,
    secret: web::Path<String>,
    body: ValidJson<CheckoutChanges>,
) -> ApiResult<HttpResponse> {
    let checkout = checkout_by_secret(&state, &secret).await?;
    let status = checkout.effective_status(state.now());
    if status != CheckoutStatus::Open {
        return Err(not_open(&checkout, status));
    }
    let mut input = body.into_inner();
    let token = match std::mem::take(&mut input.confirmation_token_id) {
        Maybe::Value(t) => Some(t),
        _ => None,
    };
    let (confirmed, session_token) = confirm(&state, &checkout, input, token).await?;
    if std::env::var_os(FAULT_AFTER_CONFIRM).is_some() {
        // Test-only fault point: die between confirm's two writes (crash tests).
        tracing::warn!("fault point {FAULT_AFTER_CONFIRM} reached: aborting");
        std::process::abort();
    }
    let settled = settle(&state, confirmed.id).await?;
    // The confirm response shows the checkout as confirmed (Polar's clients expect that),
    // with the processor's intent: a page runs its next action (3-D Secure) from
    // `payment_processor_metadata`. A later read shows it succeeded.
    Ok(HttpResponse::Ok().json(render_public(
        &state,
        &settled,
        CheckoutStatus::Confirmed,
        Some(&session_token),
    )?))
}

/// Set (to anything) to abort the process right after a confirm is durable, before its
/// payment is settled. Crash tests use it; nothing else should.
pub const FAULT_AFTER_CONFIRM: &str = "TOLLGATE_FAULT_AFTER_CONFIRM";

/// Confirms a checkout: applies the body, checks it can be paid, and writes in one
/// transaction the confirmed checkout, its customer (found by e-mail or created), the
/// discount redemption and the customer session. Returns the session token.
async fn confirm(
    state: &AppState,
    checkout: &Checkout,
    input: CheckoutChanges,
    token: Option<String>,
) -> Result<(Checkout, String), ApiError> {
    let mut last_error = None;
    // A concurrent confirm may take the customer's e-mail or the discount's revision
    // first; the second attempt sees its write.
    for _ in 0..3 {
        let changes = resolve_changes(state, checkout, clone_changes(&input), true)?;
        let preview_discount = changes
            .discount
            .as_ref()
            .map(|(d, _)| d.clone())
            .unwrap_or_else(|| checkout.discount.clone());
        let now = state.now();
        let discount_redeemable = match &preview_discount {
            Some(d) => {
                discount_by_id(&state.store, d.id)?.is_some_and(|s| s.value.is_redeemable(now))
            }
            None => true,
        };
        // The price being paid: the one the body switches to (already checked), else the
        // checkout's, which may have been archived since it was selected.
        let price_archived = match &changes.price {
            Some(p) => p.is_archived,
            None => product_of(state, checkout)?
                .price(checkout.price.id)
                .is_none_or(|p| p.is_archived),
        };
        let session_token = generate(CUSTOMER_SESSION_PREFIX, 32);
        let attach = {
            let store = state.store.clone();
            let token_hash = state.hasher.hash(&session_token).to_vec();
            Box::new(move |c: &Checkout| attach_confirmation(&store, c, token_hash, now))
                as tollgate_actors::checkout::Attach
        };
        let result = state
            .checkouts
            .call(
                checkout.id,
                ConfirmCheckout {
                    changes,
                    confirmation_token: token.clone(),
                    discount_redeemable,
                    price_archived,
                    tax: state.tax.clone(),
                    attach,
                },
            )
            .await;
        match result {
            Ok(c) => return Ok((c, session_token)),
            Err(ActorError::Storage(
                StorageError::Unique { .. } | StorageError::Conflict { .. },
            )) => {
                last_error = Some(ApiError::Conflict(
                    "The checkout is being confirmed concurrently; retry.".into(),
                ));
                continue;
            }
            Err(e) => return Err(with_id(checkout_error(e), checkout.id)),
        }
    }
    Err(last_error.unwrap_or(ApiError::Unavailable))
}

fn clone_changes(c: &CheckoutChanges) -> CheckoutChanges {
    CheckoutChanges {
        product_price_id: c.product_price_id.clone(),
        amount: c.amount.clone(),
        customer_name: c.customer_name.clone(),
        customer_email: c.customer_email.clone(),
        customer_billing_address: c.customer_billing_address.clone(),
        customer_tax_id: c.customer_tax_id.clone(),
        custom_field_data: c.custom_field_data.clone(),
        discount_code: c.discount_code.clone(),
        ..CheckoutChanges::default()
    }
}

/// The writes that go with a confirmation (runs inside the checkout actor, on the
/// checkout as confirmed).
fn attach_confirmation(
    store: &tollgate_storage::Store,
    c: &Checkout,
    token_hash: Vec<u8>,
    now: DateTime<Utc>,
) -> Result<(CustomerId, Batch), ActorError<CheckoutError>> {
    let mut batch = Batch::new();
    let email = c.customer_email.clone().unwrap_or_default();
    let existing = match c.customer_id {
        Some(id) => customer_by_id(store, id)?,
        None => customer_by_email(store, c.organization_id, &email)?,
    };
    let customer = match existing {
        Some(stored) => {
            let mut customer = stored.value;
            customer.metadata.merge(&c.customer_metadata);
            if customer.name.is_none() {
                customer.name = c.customer_name.clone();
            }
            if c.customer_billing_address.is_some() {
                customer.billing_address = c.customer_billing_address.clone();
            }
            if c.customer_tax_id.is_some() {
                customer.tax_id = c.customer_tax_id.clone();
            }
            customer.modified_at = Some(now);
            batch.put(&customer, Expect::Rev(stored.rev))?;
            customer
        }
        None => {
            let mut customer =
                Customer::new(CustomerId::new(), c.organization_id, email.clone(), now);
            customer.name = c.customer_name.clone();
            customer.billing_address = c.customer_billing_address.clone();
            customer.tax_id = c.customer_tax_id.clone();
            customer.metadata = c.customer_metadata.clone();
            batch.put(&customer, Expect::Absent)?;
            customer
        }
    };
    if let Some(applied) = &c.discount {
        let stored = discount_by_id(store, applied.id)?;
        match stored {
            Some(mut d) if d.value.is_redeemable(now) => {
                d.value.record_redemption();
                batch.put(&d.value, Expect::Rev(d.rev))?;
            }
            _ => {
                return Err(ActorError::Domain(CheckoutError::Invalid(vec![Issue {
                    loc: vec!["discount_id".into()],
                    kind: "value_error",
                    msg: "Discount is no longer redeemable.".into(),
                }])))
            }
        }
    }
    let session = CustomerSession {
        id: CustomerSessionId::new(),
        customer_id: customer.id,
        organization_id: c.organization_id,
        token_hash,
        created_at: now,
        expires_at: now + Duration::hours(1),
    };
    batch.put(&session, Expect::Absent)?;
    Ok((customer.id, batch))
}

// ---------------------------------------------------------------------------------------
// Settling a confirmed checkout: charge, then one write of everything the purchase creates.

/// Charges a confirmed checkout and records the outcome. Safe to repeat: the charge is
/// idempotent per checkout and confirmation token, a checkout that already waits on an
/// intent asks the processor how it stands instead of charging again, and a checkout no
/// longer `confirmed` is left as it is.
pub async fn settle(state: &AppState, id: CheckoutId) -> Result<Checkout, ApiError> {
    let checkout = load(state, id).await?;
    if checkout.status != CheckoutStatus::Confirmed {
        return Ok(checkout);
    }
    let outcome = if let Some(intent) = checkout.pending_intent() {
        state.processor.intent(intent).await
    } else if checkout.is_payment_required() {
        state.processor.charge(charge_request(&checkout)?).await
    } else {
        Ok(ChargeOutcome::Succeeded {
            intent_id: String::new(),
            payment_method: None,
        })
    };
    match outcome {
        Ok(outcome) => apply_outcome(state, &checkout, outcome).await,
        Err(e) => {
            // Left confirmed: recovery (or the processor's webhook) settles it later.
            tracing::warn!(checkout = %id, error = %e, "payment processor unavailable");
            Err(ApiError::Unavailable)
        }
    }
}

/// The charge of a confirmed checkout.
fn charge_request(c: &Checkout) -> Result<ChargeRequest, ApiError> {
    let customer_id = c
        .customer_id
        .ok_or_else(|| ApiError::internal("a confirmed checkout has no customer"))?;
    let token = c.confirmation_token.clone();
    Ok(ChargeRequest {
        // One key per attempt: a retried charge of the same attempt is taken once, and a
        // buyer whose card was declined can pay again, even with the same card.
        idempotency_key: c.charge_key(),
        amount: c.total_amount().unwrap_or(0),
        currency: c.currency.clone().unwrap_or_else(|| "usd".into()),
        confirmation_token: token,
        setup_future_usage: c.price.kind.is_recurring(),
        off_session: false,
        customer_id,
        customer_email: c.customer_email.clone().unwrap_or_default(),
        customer_name: c.customer_name.clone(),
        metadata: vec![
            ("checkout_id".into(), c.id.to_string()),
            ("organization_id".into(), c.organization_id.to_string()),
        ],
    })
}

/// Records what the processor said about a confirmed checkout's payment: paid → the
/// purchase is completed (exactly once, whoever gets there first); under way → the intent
/// is recorded and the checkout stays confirmed; declined → it is open again and the
/// answer is 400 `PaymentError`.
pub async fn apply_outcome(
    state: &AppState,
    checkout: &Checkout,
    outcome: ChargeOutcome,
) -> Result<Checkout, ApiError> {
    let id = checkout.id;
    match outcome {
        ChargeOutcome::Succeeded {
            intent_id,
            payment_method,
        } => {
            let subscription = checkout
                .price
                .kind
                .is_recurring()
                .then(|| SubscriptionId(derived_uuid(checkout.id.0, "subscription")));
            let store = state.store.clone();
            // Renewals charge the method the processor kept, else the buyer's token.
            let token = payment_method.or_else(|| checkout.confirmation_token.clone());
            let settled = state
                .checkouts
                .call(
                    id,
                    SettleCheckout {
                        settlement: Settlement::Succeeded {
                            intent: (!intent_id.is_empty()).then_some(intent_id),
                            subscription,
                        },
                        build: Box::new(move |c: &Checkout| completion(&store, c, token)),
                    },
                )
                .await;
            match settled {
                Ok(c) => Ok(c),
                // Someone else settled it first.
                Err(ActorError::Domain(CheckoutError::WrongStatus { .. })) => load(state, id).await,
                Err(e) => Err(checkout_error(e)),
            }
        }
        ChargeOutcome::Pending {
            intent_id,
            status,
            client_secret,
        } => {
            let m = &checkout.payment_processor_metadata;
            if checkout.pending_intent() == Some(intent_id.as_str())
                && m.get("intent_status") == Some(&status)
            {
                return Ok(checkout.clone());
            }
            let settled = state
                .checkouts
                .call(
                    id,
                    SettleCheckout {
                        settlement: Settlement::AwaitPayment {
                            intent: intent_id,
                            status,
                            client_secret,
                        },
                        build: Box::new(|_: &Checkout| Ok(Batch::new())),
                    },
                )
                .await;
            match settled {
                Ok(c) => Ok(c),
                Err(ActorError::Domain(CheckoutError::WrongStatus { .. })) => load(state, id).await,
                Err(e) => Err(checkout_error(e)),
            }
        }
        ChargeOutcome::Declined { message } => {
            let store = state.store.clone();
            let discount = checkout.discount.as_ref().map(|d| d.id);
            let reopened = state
                .checkouts
                .call(
                    id,
                    SettleCheckout {
                        settlement: Settlement::Reopen,
                        build: Box::new(move |_: &Checkout| undo_redemption(&store, discount)),
                    },
                )
                .await;
            match reopened {
                Ok(_) => {}
                // Settled meanwhile (a webhook, a concurrent retry): report what it is.
                Err(ActorError::Domain(CheckoutError::WrongStatus { .. })) => {
                    return load(state, id).await
                }
                Err(e) => return Err(checkout_error(e)),
            }
            let detail = match message {
                Some(m) => format!(
                    "The payment failed: {m} Please try again with a different payment method."
                ),
                None => {
                    "The payment failed. Please try again with a different payment method.".into()
                }
            };
            Err(ApiError::PaymentError(detail))
        }
    }
}

fn undo_redemption(
    store: &tollgate_storage::Store,
    discount: Option<DiscountId>,
) -> Result<Batch, ActorError<CheckoutError>> {
    let mut batch = Batch::new();
    if let Some(id) = discount {
        if let Some(mut d) = store.get::<Discount>(&id.key())? {
            d.value.redemptions_count = (d.value.redemptions_count - 1).max(0);
            batch.put(&d.value, Expect::Rev(d.rev))?;
        }
    }
    Ok(batch)
}

/// When a key granted now expires: `ttl` calendar years, months or days from now.
pub fn key_expiry(now: DateTime<Utc>, ttl: i64, timeframe: Timeframe) -> Option<DateTime<Utc>> {
    let n = u32::try_from(ttl).ok()?;
    match timeframe {
        Timeframe::Day => now.checked_add_signed(Duration::days(ttl)),
        Timeframe::Month => now.checked_add_months(Months::new(n)),
        Timeframe::Year => now.checked_add_months(Months::new(n.checked_mul(12)?)),
    }
}

/// The end of a subscription period that starts at `start`.
pub fn period_end(start: DateTime<Utc>, interval: RecurringInterval) -> Option<DateTime<Utc>> {
    match interval {
        RecurringInterval::Month => start.checked_add_months(Months::new(1)),
        RecurringInterval::Year => start.checked_add_months(Months::new(12)),
    }
}

/// Everything a successful purchase creates, with ids derived from the checkout's, so
/// that a repeated completion can never create anything twice (`Expect::Absent`).
fn completion(
    store: &tollgate_storage::Store,
    c: &Checkout,
    payment_token: Option<String>,
) -> Result<Batch, ActorError<CheckoutError>> {
    let now = c.modified_at.unwrap_or(c.created_at);
    let missing = |what: &str| {
        ActorError::Storage(StorageError::Corrupt(format!(
            "checkout {}: {what} is missing",
            c.id
        )))
    };
    let product = store
        .get::<Product>(&c.product_id.key())?
        .ok_or_else(|| missing("product"))?
        .value;
    let customer_id = c.customer_id.ok_or_else(|| missing("customer"))?;
    let customer = store
        .get::<Customer>(&customer_id.key())?
        .ok_or_else(|| missing("customer record"))?
        .value;
    let recurring = c.price.kind.is_recurring();
    let order_id = OrderId(derived_uuid(c.id.0, "order"));
    let subscription_id = c.subscription_id.filter(|_| recurring);
    let mut batch = Batch::new();

    let mut key_ids = Vec::new();
    for benefit in product_benefit_records(store, &product)? {
        let BenefitProperties::LicenseKeys(props) = &benefit.properties else {
            continue;
        };
        let id = LicenseKeyId(derived_uuid(c.id.0, &format!("license_key:{}", benefit.id)));
        key_ids.push(id);
        let key = LicenseKey {
            id,
            organization_id: c.organization_id,
            customer_id,
            benefit_id: benefit.id,
            created_at: now,
            modified_at: None,
            key: generate_key(props.prefix.as_deref()),
            status: KeyStatus::Granted,
            limit_activations: props.activations.map(|a| a.limit),
            usage: 0,
            limit_usage: props.limit_usage,
            validations: 0,
            last_validated_at: None,
            expires_at: props
                .expires
                .and_then(|e| key_expiry(now, e.ttl, e.timeframe)),
            activations: Vec::new(),
            subscription_id,
            order_id: subscription_id.is_none().then_some(order_id),
        };
        batch.put(&key, Expect::Absent)?;
    }

    if let Some(sid) = subscription_id {
        let purchase = Purchase::from_checkout(
            c,
            customer_id,
            &customer.email,
            &product.name,
            payment_token,
            key_ids,
        );
        let subscription = Subscription::new_from_purchase(sid, purchase, now).map_err(|e| {
            ActorError::Storage(StorageError::Corrupt(format!("checkout {}: {e}", c.id)))
        })?;
        batch.put(&subscription, Expect::Absent)?;
    }

    let order = Order::from_checkout(order_id, c, &customer, &product.name, subscription_id, now);
    batch.put(&order, Expect::Absent)?;
    Ok(batch)
}

fn product_benefit_records(
    store: &tollgate_storage::Store,
    product: &Product,
) -> Result<Vec<crate::domain::benefit::Benefit>, StorageError> {
    let mut out = Vec::new();
    for id in &product.benefit_ids {
        if let Some(b) = store.get::<crate::domain::benefit::Benefit>(&id.key())? {
            if b.value.deleted_at.is_none() {
                out.push(b.value);
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Start-up recovery and the expiry sweep.

/// Completes every checkout left `confirmed` by a crash (run before the service reports
/// ready). Returns how many it settled.
pub async fn recover(state: &AppState) -> Result<usize, ApiError> {
    let ids = state
        .store
        .index_range(CHECKOUT_CONFIRMED, &[], &[], None)?;
    let mut settled = 0;
    for id in ids {
        let Some(id) = CheckoutId::from_key(&id) else {
            continue;
        };
        match settle(state, id).await {
            Ok(_) => settled += 1,
            Err(ApiError::PaymentError(_)) => settled += 1,
            Err(e) => {
                tracing::error!(checkout = %id, error = %e, "could not settle a confirmed checkout")
            }
        }
    }
    Ok(settled)
}

/// Persists the expiry of open checkouts past `expires_at`. Returns how many expired.
pub async fn sweep_expired(state: &AppState) -> Result<usize, ApiError> {
    // Everything with `expires_at <= now` (the range's end is exclusive).
    let until = KeyBuf::new()
        .i64(state.now().timestamp_micros().saturating_add(1))
        .into_vec();
    let ids = state
        .store
        .index_range(CHECKOUT_OPEN_BY_EXPIRY, &[], &[], Some(&until))?;
    let mut expired = 0;
    for id in ids {
        let Some(id) = CheckoutId::from_key(&id) else {
            continue;
        };
        match state.checkouts.call(id, ExpireCheckout).await {
            Ok(c) if c.status == CheckoutStatus::Expired => expired += 1,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(checkout = %id, error = %checkout_error(e), "could not expire a checkout")
            }
        }
    }
    Ok(expired)
}
