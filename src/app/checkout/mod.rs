//! Checkout sessions, the purchase itself: create and update a checkout (as its
//! organization, or as the buyer with its client secret), confirm it, charge it, and settle
//! the processor's answer with one atomic write of the checkout, order, subscription and
//! license keys.
//!
//! - this file: the checkout aggregate's errors as [`ApiError`]s, finding a checkout (by id
//!   for a subject, by client secret for a buyer), and the use cases the endpoints and the
//!   pages call: [`create`], [`update`], [`update_as_buyer`], [`confirm_as_buyer`];
//! - `fields`: request fields resolved into domain values (prices, discounts, custom field
//!   data, addresses);
//! - `completion`: confirm (customer, discount redemption and customer session in one
//!   write), charge, settle; the start-up recovery of confirmed checkouts and the sweeps;
//! - `payment_events`: the processor's events after the fact (Stripe's webhooks);
//! - `links`: checkout links, and the checkouts following one opens.

mod completion;
mod fields;
pub mod links;
mod payment_events;

pub use completion::{
    apply_outcome, complete_stale_confirmed, grace_end, key_expiry, recover, settle, sweep_expired,
};
pub use payment_events::payment_event;

use chrono::Duration;
use serde_json::Value;
use tollgate_actors::checkout::{
    AppliedDiscount, Changes, Checkout, CheckoutError, CheckoutStatus, CheckoutTerms, GetCheckout,
    Issue, NewCheckout, UpdateCheckout, CHECKOUT_BY_CREATED, CHECKOUT_BY_EXPIRES,
    CHECKOUT_PRODUCT_BY_CREATED, CHECKOUT_PRODUCT_BY_EXPIRES,
};
use tollgate_actors::ActorError;
use tollgate_storage::Stored;

use crate::api::checkout::{CheckoutChanges, CheckoutCreate};
use crate::app::access::{can_access, organizations_for_list};
use crate::app::listing::{compare_times, directed, sorted_page_of};
use crate::app::paging::{ListParams, SortField, Sorting};
use crate::auth::tokens::{generate, CHECKOUT_SECRET_PREFIX};
use crate::auth::Subject;
use crate::domain::customer::customer_by_id;
use crate::domain::ids::{CheckoutId, CustomerId, DiscountId, OrganizationId, ProductId};
use crate::domain::product::Product;
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::state::AppState;
use crate::validate::Validator;

use fields::{
    address_field, check_amount, check_ip, custom_field_data, discount_for_checkout, email_field,
    metadata_field, optional_string, price_for_create, refuse_unsupported_on_create,
    resolve_changes,
};

/// Set (to anything) to abort the process right after a confirm is durable, before its
/// payment is settled. Crash tests use it; nothing else should.
pub const FAULT_AFTER_CONFIRM: &str = "TOLLGATE_FAULT_AFTER_CONFIRM";

// ---------------------------------------------------------------------------------------
// Errors of the checkout aggregate, and finding a checkout.

pub(crate) fn issues_to_error(issues: Vec<Issue>) -> ApiError {
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

pub(crate) fn checkout_error(e: ActorError<CheckoutError>) -> ApiError {
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
        ActorError::Domain(CheckoutError::Superseded) => ApiError::Conflict(
            "The checkout's payment attempt changed meanwhile; retry the request.".into(),
        ),
        ActorError::NotFound => ApiError::not_found(),
        ActorError::AlreadyExists => ApiError::Conflict("The checkout already exists.".into()),
        ActorError::Unavailable(_) => ApiError::Unavailable,
        ActorError::Storage(s) => s.into(),
    }
}

pub(crate) fn not_open(c: &Checkout, status: CheckoutStatus) -> ApiError {
    ApiError::NotOpenCheckout {
        id: c.id.to_string(),
        status: status.as_str().to_string(),
    }
}

/// Names the checkout in a `NotOpenCheckout` raised inside the actor.
pub(crate) fn with_id(e: ApiError, id: CheckoutId) -> ApiError {
    match e {
        ApiError::NotOpenCheckout { status, .. } => ApiError::NotOpenCheckout {
            id: id.to_string(),
            status,
        },
        other => other,
    }
}

pub(crate) fn widen(e: ActorError) -> ActorError<CheckoutError> {
    match e {
        ActorError::NotFound => ActorError::NotFound,
        ActorError::AlreadyExists => ActorError::AlreadyExists,
        ActorError::Unavailable(u) => ActorError::Unavailable(u),
        ActorError::Storage(s) => ActorError::Storage(s),
        ActorError::Domain(never) => match never {},
    }
}

pub(crate) async fn load(state: &AppState, id: CheckoutId) -> Result<Checkout, ApiError> {
    state
        .checkouts
        .call(id, GetCheckout)
        .await
        .map_err(checkout_error)
}

/// The checkout if the subject may see it (its organization), else 404.
pub async fn checkout_for(
    state: &AppState,
    subject: Subject,
    id: CheckoutId,
) -> Result<Checkout, ApiError> {
    // Read the record first so that an unknown id never spawns an actor.
    let Some(stored) = state.store.get::<Checkout>(&id.key()).await? else {
        return Err(ApiError::not_found());
    };
    if !can_access(state, subject, stored.value.organization_id).await? {
        return Err(ApiError::not_found());
    }
    load(state, id).await
}

/// Whether the checkout's payment succeeded (its purchase was completed), as stored.
pub async fn has_succeeded(state: &AppState, id: CheckoutId) -> Result<bool, ApiError> {
    Ok(state
        .store
        .get::<Checkout>(&id.key())
        .await?
        .is_some_and(|c| c.value.status == CheckoutStatus::Succeeded))
}

/// The checkout of a client secret; 404 once it has expired, whatever its status (Polar).
pub async fn checkout_by_secret(state: &AppState, secret: &str) -> Result<Checkout, ApiError> {
    let Some(id) = state
        .store
        .lookup_unique(&Checkout::secret_key(secret))
        .await?
    else {
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

// ---------------------------------------------------------------------------------------
// Use cases.

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CheckoutSort {
    CreatedAt,
    ExpiresAt,
}

impl SortField for CheckoutSort {
    const FIELDS: &'static [(&'static str, CheckoutSort)] = &[
        ("created_at", CheckoutSort::CreatedAt),
        ("expires_at", CheckoutSort::ExpiresAt),
    ];
}

/// Which checkouts a list shows, and in what order.
#[derive(Debug, Clone)]
pub struct CheckoutFilter {
    /// Of these organizations (all the subject reaches when empty).
    pub organization_id: Vec<OrganizationId>,
    /// Whose selected product is one of these.
    pub product_id: Vec<ProductId>,
    pub customer_id: Vec<CustomerId>,
    /// Made for one of these ids of the seller's system (the checkout's own
    /// `external_customer_id`).
    pub external_customer_id: Vec<String>,
    /// In one of these statuses as seen now (an open checkout past its expiry is expired).
    pub status: Vec<CheckoutStatus>,
    /// Part of the customer's e-mail address, in any case.
    pub query: Option<String>,
    pub sorting: Sorting<CheckoutSort>,
}

impl Default for CheckoutFilter {
    fn default() -> Self {
        Self {
            organization_id: Vec::new(),
            product_id: Vec::new(),
            customer_id: Vec::new(),
            external_customer_id: Vec::new(),
            status: Vec::new(),
            query: None,
            sorting: Sorting::by(CheckoutSort::CreatedAt, true),
        }
    }
}

impl CheckoutFilter {
    /// Whether a predicate beyond the index is needed.
    fn filters(&self) -> bool {
        !self.customer_id.is_empty()
            || !self.external_customer_id.is_empty()
            || !self.status.is_empty()
            || self.query.is_some()
    }

    /// Whether `c` passes the filters no index serves, as seen at `now`.
    fn keeps(&self, c: &Checkout, now: chrono::DateTime<chrono::Utc>) -> bool {
        let customer = self.customer_id.is_empty()
            || c.customer_id
                .is_some_and(|id| self.customer_id.contains(&id));
        let external = self.external_customer_id.is_empty()
            || c.external_customer_id
                .as_ref()
                .is_some_and(|e| self.external_customer_id.contains(e));
        let status = self.status.is_empty() || self.status.contains(&c.effective_status(now));
        let query = self.query.as_ref().is_none_or(|q| {
            c.customer_email
                .as_ref()
                .is_some_and(|e| e.to_lowercase().contains(&q.to_lowercase()))
        });
        customer && external && status && query
    }
}

/// One page of the checkouts `subject` reaches, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &CheckoutFilter,
    params: ListParams,
) -> Result<(Vec<Checkout>, u64), ApiError> {
    let sorting = &filter.sorting;
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    // The first criterion is served by an index (equal values follow the id), the others
    // in memory.
    let (field, desc) = sorting.primary();
    let (index, tenants): (&'static str, Vec<Vec<u8>>) = if filter.product_id.is_empty() {
        let index = match field {
            CheckoutSort::CreatedAt => CHECKOUT_BY_CREATED,
            CheckoutSort::ExpiresAt => CHECKOUT_BY_EXPIRES,
        };
        (index, orgs.iter().map(|o| o.key()).collect())
    } else {
        // Only products of the organizations the subject reaches.
        let mut tenants = Vec::new();
        for p in &filter.product_id {
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
    let now = state.now();
    let keep = |c: &Checkout| filter.keeps(c, now);
    let predicate: Option<&dyn Fn(&Checkout) -> bool> = filter.filters().then_some(&keep);
    Ok(sorted_page_of::<Checkout>(
        state,
        index,
        &tenants,
        desc,
        params,
        predicate,
        several.as_deref(),
    )
    .await?)
}

/// Creates a checkout for `subject` (who must reach the product's organization).
pub async fn create(
    state: &AppState,
    subject: Subject,
    input: CheckoutCreate,
) -> Result<Checkout, ApiError> {
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
    let trial = fields::trial_fields(
        &mut v,
        input.trial_interval.as_deref().map(Some),
        input.trial_interval_count.map(Some),
    )
    .flatten();
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

    let (product, price, products) = price_for_create(state, subject, &input).await?;
    let org = product.organization_id;
    let mut v = Validator::new();
    let discount = match input.discount_id {
        Some(id) => match discount_for_checkout(state, org, product.id, DiscountId(id)).await? {
            Ok(d) => Some(AppliedDiscount::from(&d)),
            Err(e) => {
                v.push(e);
                None
            }
        },
        None => None,
    };
    let custom_field_data = match &input.custom_field_data {
        Some(data) => custom_field_data(&mut v, state, &product, data).await?,
        None => {
            custom_field_data(&mut v, state, &product, &Value::Object(Default::default())).await?
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

    let body_address = address.clone();
    let new = NewCheckout {
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
        product_trial: product.trial,
    };
    // A tax id given on create is validated against the address, like an update.
    let tax_input = optional_string(input.customer_tax_id);
    // A billing address given with its lines asks for a full one (Polar: the body's, not
    // a customer's it was filled from).
    let full_address = body_address.as_ref().is_some_and(|a| {
        a.line1.is_some()
            || a.line2.is_some()
            || a.postal_code.is_some()
            || a.city.is_some()
            || (a.state.is_some() && !matches!(a.country.as_str(), "US" | "CA"))
    });
    let terms = CheckoutTerms {
        products,
        require_billing_address: input.require_billing_address.unwrap_or(false) || full_address,
        allow_trial: input.allow_trial.unwrap_or(true),
        external_customer_id: optional_string(input.external_customer_id),
        return_url: input.return_url,
        trial,
    };
    let checkout = Checkout::create_with(new, terms, now, state.tax.as_ref())
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
    Ok(checkout)
}

/// Applies `input` to an open checkout: as its organization (`as_buyer` false) or as the
/// buyer (`as_buyer` true: the fields a buyer may set).
async fn apply_update(
    state: &AppState,
    checkout: &Checkout,
    input: CheckoutChanges,
    as_buyer: bool,
) -> Result<Checkout, ApiError> {
    let status = checkout.effective_status(state.now());
    if status != CheckoutStatus::Open {
        return Err(not_open(checkout, status));
    }
    let changes = resolve_changes(state, checkout, input, as_buyer).await?;
    state
        .checkouts
        .call(
            checkout.id,
            UpdateCheckout {
                changes,
                tax: state.tax.clone(),
            },
        )
        .await
        .map_err(|e| with_id(checkout_error(e), checkout.id))
}

/// Updates checkout `id` as `subject` (its organization's member or token).
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: CheckoutId,
    input: CheckoutChanges,
) -> Result<Checkout, ApiError> {
    let checkout = checkout_for(state, subject, id).await?;
    apply_update(state, &checkout, input, false).await
}

/// Updates the checkout of a client secret, as its buyer.
pub async fn update_as_buyer(
    state: &AppState,
    secret: &str,
    input: CheckoutChanges,
) -> Result<Checkout, ApiError> {
    let checkout = checkout_by_secret(state, secret).await?;
    apply_update(state, &checkout, input, true).await
}

/// The buyer pays: confirms the checkout of a client secret (`token`: the processor's
/// confirmation token), charges it and settles the answer. Returns the checkout as settled
/// and the customer session's token.
pub async fn confirm_as_buyer(
    state: &AppState,
    secret: &str,
    input: CheckoutChanges,
    token: Option<String>,
) -> Result<(Checkout, String), ApiError> {
    let mut checkout = checkout_by_secret(state, secret).await?;
    if checkout.effective_status(state.now()) == CheckoutStatus::Confirmed
        && checkout.pending_intent().is_some()
    {
        // Waiting on the buyer's 3-D Secure, which may have failed a moment ago, before the
        // processor's webhook says so: ask how the intent stands. A failed one reopens the
        // checkout and this confirm is the buyer's next attempt; one still under way or
        // paid is reported below as not open.
        match settle(state, checkout.id).await {
            Ok(_) | Err(ApiError::PaymentError(_)) => {}
            Err(e) => return Err(e),
        }
        checkout = checkout_by_secret(state, secret).await?;
    }
    let status = checkout.effective_status(state.now());
    if status != CheckoutStatus::Open {
        return Err(not_open(&checkout, status));
    }
    let (confirmed, session_token) = completion::confirm(state, &checkout, input, token).await?;
    if std::env::var_os(FAULT_AFTER_CONFIRM).is_some() {
        // Test-only fault point: die between confirm's two writes (crash tests).
        tracing::warn!("fault point {FAULT_AFTER_CONFIRM} reached: aborting");
        std::process::abort();
    }
    let settled = settle(state, confirmed.id).await?;
    Ok((settled, session_token))
}
