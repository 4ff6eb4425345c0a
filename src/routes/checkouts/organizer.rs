//! The organizer endpoints, `/v1/checkouts/custom/` and `/v1/checkouts/custom/{id}`:
//! list, read, create and update checkouts with an access token.

use actix_web::{web, HttpRequest};
use chrono::Duration;
use serde_json::Value;
use tollgate_actors::checkout::{
    AppliedDiscount, Changes, Checkout, CheckoutStatus, NewCheckout, UpdateCheckout,
    CHECKOUT_BY_CREATED, CHECKOUT_BY_EXPIRES, CHECKOUT_PRODUCT_BY_CREATED,
    CHECKOUT_PRODUCT_BY_EXPIRES,
};
use tollgate_actors::ActorError;
use tollgate_storage::Stored;

use crate::api::checkout::{CheckoutCreate, CheckoutUpdate, CheckoutView};
use crate::api::{Created, ListResource, Pagination};
use crate::auth::tokens::{generate, CHECKOUT_SECRET_PREFIX};
use crate::domain::customer::customer_by_id;
use crate::domain::ids::{CheckoutId, CustomerId, DiscountId, OrganizationId, ProductId};
use crate::domain::product::Product;
use crate::error::{ApiResult, FieldError};
use crate::extract::auth::{CheckoutsRead, CheckoutsWrite};
use crate::extract::{path_id, Auth, ListParams, QueryParams, SortField, Sorting, ValidJson};
use crate::loc;
use crate::routes::access::organizations_for_list;
use crate::routes::listing::{compare_times, directed, sorted_page_of};
use crate::state::AppState;
use crate::validate::Validator;

use super::fields::{
    address_field, check_amount, check_ip, custom_field_data, discount_for_checkout, email_field,
    metadata_field, optional_string, price_for_create, resolve_changes,
};
use super::{checkout_error, checkout_for, not_open, render, widen, with_id};

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

pub(super) async fn list(
    auth: Auth<CheckoutsRead>,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> ApiResult<web::Json<ListResource<CheckoutView>>> {
    let mut q = QueryParams::parse(req.query_string());
    let params = ListParams::from_query(&mut q);
    let orgs: Vec<OrganizationId> = q.ids("organization_id");
    let products: Vec<ProductId> = q.ids("product_id");
    let sorting = Sorting::<CheckoutSort>::from_query(&mut q, (CheckoutSort::CreatedAt, true));
    q.finish()?;
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(&state, auth.subject(), &orgs).await?;
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
            if let Some(product) = state.store.get::<Product>(&p.key()).await? {
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
    )
    .await?;
    let items = futures_util::future::try_join_all(items.iter().map(|c| render(&state, c))).await?;
    Ok(web::Json(ListResource {
        items,
        pagination: Pagination::new(total, params.limit),
    }))
}

pub(super) async fn get(
    auth: Auth<CheckoutsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<CheckoutView>> {
    let id: CheckoutId = path_id("id", &id)?;
    let checkout = checkout_for(&state, auth.subject(), id).await?;
    Ok(web::Json(render(&state, &checkout).await?))
}

pub(crate) async fn create(
    auth: Auth<CheckoutsWrite>,
    state: web::Data<AppState>,
    body: ValidJson<CheckoutCreate>,
) -> ApiResult<Created<CheckoutView>> {
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

    let (product, price) = price_for_create(&state, auth.subject(), &input).await?;
    let org = product.organization_id;
    let mut v = Validator::new();
    let discount = match input.discount_id {
        Some(id) => match discount_for_checkout(&state, org, product.id, DiscountId(id)).await? {
            Ok(d) => Some(AppliedDiscount::from(&d)),
            Err(e) => {
                v.push(e);
                None
            }
        },
        None => None,
    };
    let custom_field_data = match &input.custom_field_data {
        Some(data) => custom_field_data(&mut v, &state, &product, data).await?,
        None => {
            custom_field_data(&mut v, &state, &product, &Value::Object(Default::default())).await?
        }
    }
    .unwrap_or_default();
    // A customer fills the fields the checkout leaves empty.
    let customer = match input.customer_id {
        Some(id) => match customer_by_id(&state.store, CustomerId(id))
            .await?
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
    Ok(Created(render(&state, &checkout).await?))
}

pub(super) async fn update(
    auth: Auth<CheckoutsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<CheckoutUpdate>,
) -> ApiResult<web::Json<CheckoutView>> {
    let id: CheckoutId = path_id("id", &id)?;
    let checkout = checkout_for(&state, auth.subject(), id).await?;
    let status = checkout.effective_status(state.now());
    if status != CheckoutStatus::Open {
        return Err(not_open(&checkout, status));
    }
    let changes = resolve_changes(&state, &checkout, body.into_inner().into(), false).await?;
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
    Ok(web::Json(render(&state, &updated).await?))
}
