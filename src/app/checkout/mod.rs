//! Checkout sessions, the purchase itself: create and update a checkout (as its
//! organization, or as the buyer with its client secret), confirm it, charge it, and settle
//! the processor's answer with one atomic write of the checkout, order, subscription and
//! license keys.
//!
//! - this file: the checkout aggregate's errors as codes ([`refusal`]), finding a checkout (by id
//!   for a subject, by client secret for a buyer), and the use cases the endpoints and the
//!   pages call: [`create`], [`update`], [`update_as_buyer`], [`confirm_as_buyer`];
//! - `fields`: request fields resolved into domain values (prices, discounts, custom field
//!   data, addresses);
//! - `completion`: confirm (customer, discount redemption and customer session in one
//!   write), charge, settle; the start-up recovery of confirmed checkouts and the sweeps;
//! - `payment_events`: the processor's events after the fact (Stripe's webhooks);
//! - `links`: checkout links, and the checkouts following one opens.

mod completion;
mod currency;
mod fields;
pub mod links;
mod payment_events;

/// What a key's term is: the rules moved to `domain::grants` (kept here for callers not
/// yet moved).
pub use crate::domain::grants::{grace_end, key_expiry};
pub use completion::{apply_outcome, complete_stale_confirmed, recover, settle, sweep_expired};
/// The completion planner and its reads, for the big-shop generator (`crate::bench_fill`).
pub(crate) use completion::{completion, Reads};
pub use payment_events::payment_event;

use chrono::Duration;
use tollgate_actors::checkout::{
    AppliedDiscount, Changes, Checkout, CheckoutError, CheckoutStatus, CheckoutTarget,
    CheckoutTerms, GetCheckout, NewCheckout, UpdateCheckout, CHECKOUT_BY_CREATED,
    CHECKOUT_BY_EXPIRES, CHECKOUT_PRODUCT_BY_CREATED, CHECKOUT_PRODUCT_BY_EXPIRES,
};
use tollgate_actors::ActorError;
use tollgate_storage::Stored;

use crate::app::access::{can_access, organizations_for_list};
use crate::app::listing::{compare_times, directed, sorted_page_of};
use crate::app::paging::{ListParams, SortField, Sorting};
use crate::auth::tokens::{generate, CHECKOUT_SECRET_PREFIX};
use crate::auth::Subject;
use crate::domain::customer::customer_by_id;
use crate::domain::ids::{CheckoutId, CustomerId, OrganizationId, ProductId};
use crate::domain::product::Product;
use crate::error::{AppError, Code, Given, Invalid, Step};
use crate::field;
use crate::state::AppState;
use tollgate_actors::checkout::{ChangeCheckout, CreateCheckout};

use fields::{
    custom_field_data_for_create, discount_for_checkout, price_for_create, resolve_changes,
};

/// Set (to anything) to abort the process right after a confirm is durable, before its
/// payment is settled. Crash tests use it; nothing else should.
pub const FAULT_AFTER_CONFIRM: &str = "TOLLGATE_FAULT_AFTER_CONFIRM";

// ---------------------------------------------------------------------------------------
// Errors of the checkout aggregate, and finding a checkout.

/// What the checkout aggregate's refusal of a command about checkout `id` means to the
/// use case: the one place the actor's errors become codes.
pub(crate) fn refusal(e: ActorError<CheckoutError>, id: CheckoutId) -> AppError {
    match e {
        ActorError::Domain(CheckoutError::NotOpen(status)) => {
            AppError::not_open_checkout(id, status.as_str())
        }
        ActorError::Domain(CheckoutError::Invalid(issues)) => AppError::Invalid(
            issues
                .into_iter()
                .map(|i| Invalid {
                    kind: i.kind,
                    path: i.loc.into_iter().map(Step::from).collect(),
                    msg: i.msg,
                    input: Given::none(),
                    ctx: Vec::new(),
                })
                .collect(),
        ),
        ActorError::Domain(CheckoutError::WrongStatus { expected, found }) => {
            AppError::internal(format!(
                "checkout transition expected {} but found {}",
                expected.as_str(),
                found.as_str()
            ))
        }
        ActorError::Domain(CheckoutError::Superseded) => AppError::conflict(
            "The checkout's payment attempt changed meanwhile; retry the request.",
        ),
        ActorError::Domain(CheckoutError::TaxQuoteStale) => {
            AppError::conflict("The checkout changed meanwhile; retry the request.")
        }
        ActorError::NotFound => AppError::not_found(),
        ActorError::AlreadyExists => AppError::conflict("The checkout already exists."),
        ActorError::Unavailable(_) => AppError::unavailable(),
        ActorError::Storage(s) => s.into(),
    }
}

/// A checkout `status` (as seen now) does not take the command.
pub(crate) fn not_open(c: &Checkout, status: CheckoutStatus) -> AppError {
    AppError::not_open_checkout(c.id, status.as_str())
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

pub(crate) async fn load(state: &AppState, id: CheckoutId) -> Result<Checkout, AppError> {
    state
        .checkouts
        .call(id, GetCheckout)
        .await
        .map_err(|e| refusal(e, id))
}

/// The checkout if the subject may see it (its organization), else 404.
pub async fn checkout_for(
    state: &AppState,
    subject: Subject,
    id: CheckoutId,
) -> Result<Checkout, AppError> {
    // Read the record first so that an unknown id never spawns an actor.
    let Some(stored) = state.store.get::<Checkout>(&id.key()).await? else {
        return Err(AppError::not_found());
    };
    if !can_access(state, subject, stored.value.organization_id).await? {
        return Err(AppError::not_found());
    }
    load(state, id).await
}

/// Whether the checkout's payment succeeded (its purchase was completed), as stored.
pub async fn has_succeeded(state: &AppState, id: CheckoutId) -> Result<bool, AppError> {
    Ok(state
        .store
        .get::<Checkout>(&id.key())
        .await?
        .is_some_and(|c| c.value.status == CheckoutStatus::Succeeded))
}

/// The checkout of a client secret; 404 once it has expired, whatever its status (Polar).
pub async fn checkout_by_secret(state: &AppState, secret: &str) -> Result<Checkout, AppError> {
    let Some(id) = state
        .store
        .lookup_unique(&Checkout::secret_key(secret))
        .await?
    else {
        return Err(AppError::not_found());
    };
    let id = CheckoutId::from_key(&id)
        .ok_or_else(|| AppError::internal("bad checkout id in the secret index"))?;
    let checkout = load(state, id).await?;
    if state.now() >= checkout.expires_at {
        return Err(AppError::not_found());
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
) -> Result<(Vec<Checkout>, u64), AppError> {
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
    sorted_page_of::<Checkout>(
        state,
        index,
        &tenants,
        desc,
        params,
        predicate,
        several.as_deref(),
    )
    .await
}

/// Creates a checkout for `subject` (who must reach the product's organization): checks
/// what the command names (products or price, discount, customer, the product's custom
/// fields), then fills the checkout and has its actor create it.
pub async fn create(
    state: &AppState,
    subject: Subject,
    cmd: CreateCheckout,
) -> Result<Checkout, AppError> {
    let now = state.now();
    let (product, price, products) = price_for_create(state, subject, &cmd.target).await?;
    let org = product.organization_id;
    // The currency (Polar's `_get_currencies`): a price's own; else the explicit one, the
    // IP country's, the organization's default, the first the product sells in.
    let ip_country = currency::ip_country(state, cmd.customer_ip_address.as_deref());
    let (currency, price) = match cmd.target {
        CheckoutTarget::Price(_) => (product.currency_of(&price), price),
        CheckoutTarget::Products(_) | CheckoutTarget::Product(_) => {
            let default = crate::app::catalog::organizations::default_currency(state, org).await?;
            let preferred = currency::preferred(cmd.currency, ip_country.as_deref(), default);
            match currency::price_in(&product, &preferred) {
                Some(found) => found,
                None => {
                    let at = match cmd.target {
                        CheckoutTarget::Products(_) => field!["products", 0],
                        _ => field!["product_id"],
                    };
                    return Err(AppError::invalid(at, currency::NOT_AVAILABLE, product.id.0));
                }
            }
        }
    };
    let mut invalid = Vec::new();
    let discount = match cmd.discount_id {
        Some(id) => match discount_for_checkout(state, org, product.id, id)
            .await?
            .and_then(|d| AppliedDiscount::in_currency(&d, currency))
        {
            Some(d) => Some(d),
            None => {
                invalid.push(Invalid::new(
                    field!["discount_id"],
                    "Discount does not exist.",
                    id.0,
                ));
                None
            }
        },
        None => None,
    };
    let custom_field_data =
        match custom_field_data_for_create(state, &product, &cmd.custom_field_data).await? {
            Ok(data) => data,
            Err(items) => {
                invalid.extend(items);
                Default::default()
            }
        };
    // A customer fills the fields the checkout leaves empty.
    let customer = match cmd.customer_id {
        Some(id) => match customer_by_id(&state.store, id)
            .await?
            .filter(|c| c.value.organization_id == org)
        {
            Some(c) => Some(c.value),
            None => {
                invalid.push(Invalid::new(
                    field!["customer_id"],
                    "Customer does not exist.",
                    id.0,
                ));
                None
            }
        },
        None => None,
    };
    if let Some(s) = cmd.subscription_id {
        // Upgrading a free subscription through a checkout is not supported (yet).
        invalid.push(Invalid::new(
            field!["subscription_id"],
            "Subscription does not exist.",
            s.0,
        ));
    }
    if !invalid.is_empty() {
        return Err(AppError::Invalid(invalid));
    }

    let expires_at = cmd
        .expires_at
        .unwrap_or_else(|| now + Duration::seconds(state.settings.checkout.ttl_secs as i64));
    // A billing address given with its lines asks for a full one (Polar: the command's,
    // not a customer's it is filled from).
    let full_address = cmd.customer_billing_address.as_ref().is_some_and(|a| {
        a.line1.is_some()
            || a.line2.is_some()
            || a.postal_code.is_some()
            || a.city.is_some()
            || (a.state.is_some() && !matches!(a.country.as_str(), "US" | "CA"))
    });
    let new = NewCheckout {
        id: CheckoutId::new(),
        organization_id: org,
        client_secret: generate(CHECKOUT_SECRET_PREFIX, 32),
        expires_at,
        product_id: product.id,
        price,
        amount: cmd.amount,
        discount,
        allow_discount_codes: cmd.allow_discount_codes,
        customer_id: customer.as_ref().map(|c| c.id),
        customer_name: cmd
            .customer_name
            .or_else(|| customer.as_ref().and_then(|c| c.name.clone())),
        customer_email: cmd
            .customer_email
            .or_else(|| customer.as_ref().map(|c| c.email.clone())),
        customer_ip_address: cmd.customer_ip_address,
        customer_billing_address: cmd
            .customer_billing_address
            .or_else(|| customer.as_ref().and_then(|c| c.billing_address.clone()))
            .or_else(|| currency::prefilled_address(ip_country)),
        customer_tax_id: customer.as_ref().and_then(|c| c.tax_id.clone()),
        customer_metadata: cmd.customer_metadata,
        metadata: cmd.metadata,
        custom_field_data,
        success_url: cmd.success_url,
        embed_origin: cmd.embed_origin,
        subscription_id: None,
        product_trial: product.trial,
        seats: cmd.seats,
        is_business_customer: cmd.is_business_customer,
        customer_billing_name: cmd.customer_billing_name.clone(),
    };
    let id = new.id;
    let terms = CheckoutTerms {
        products,
        require_billing_address: cmd.require_billing_address || full_address,
        allow_trial: cmd.allow_trial,
        external_customer_id: cmd.external_customer_id,
        return_url: cmd.return_url,
        trial: cmd.trial,
        min_seats: cmd.min_seats,
        max_seats: cmd.max_seats,
        locale: cmd.locale,
    };
    let mut checkout = Checkout::create_with(new, terms, now, None)
        .map_err(|e| refusal(ActorError::Domain(e), id))?;
    // A free price names no currency: the checkout's is the one picked.
    checkout.currency = Some(currency.code().to_string());
    // A tax id given on create is validated against the address, like an update.
    let checkout = match cmd.customer_tax_id {
        Some(raw) => {
            let changes = Changes {
                customer_tax_id: Some(Some(raw)),
                ..Changes::default()
            };
            let mut updated = checkout
                .update(changes, now, None)
                .map_err(|e| refusal(ActorError::Domain(e), id))?;
            updated.modified_at = None;
            updated
        }
        None => checkout,
    };
    let tax = preview_quote(quote_tax(state, &checkout).await)?;
    let checkout = checkout
        .with_tax(tax.as_ref())
        .map_err(|e| refusal(ActorError::Domain(e), id))?;
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
        .map_err(|e| refusal(widen(e), id))?;
    Ok(checkout)
}

/// Applies `input` to an open checkout: as its organization (`as_buyer` false) or as the
/// buyer (`as_buyer` true: the fields a buyer may set).
async fn apply_update(
    state: &AppState,
    checkout: &Checkout,
    input: ChangeCheckout,
    as_buyer: bool,
) -> Result<Checkout, AppError> {
    let status = checkout.effective_status(state.now());
    if status != CheckoutStatus::Open {
        return Err(not_open(checkout, status));
    }
    let changes = resolve_changes(state, checkout, input, as_buyer).await?;
    // The tax is quoted for the checkout as the changes leave it; a quote the checkout
    // moved away from meanwhile is asked again, for the checkout as it then is.
    let mut base = checkout.clone();
    let mut attempts = 0;
    loop {
        let preview = base
            .update(changes.clone(), state.now(), None)
            .map_err(|e| refusal(ActorError::Domain(e), checkout.id))?;
        let tax = preview_quote(quote_tax(state, &preview).await)?;
        let message = UpdateCheckout {
            changes: changes.clone(),
            tax,
        };
        match state.checkouts.call(checkout.id, message).await {
            Err(ActorError::Domain(CheckoutError::TaxQuoteStale)) if attempts < 2 => {
                attempts += 1;
                base = state
                    .checkouts
                    .call(checkout.id, GetCheckout)
                    .await
                    .map_err(|e| refusal(e, checkout.id))?;
            }
            other => return other.map_err(|e| refusal(e, checkout.id)),
        }
    }
}

/// A quote of a checkout being filled in (Polar's create and update): an address the
/// provider cannot place leaves it without one, for the buyer to correct; its confirmation
/// is refused with the provider's words (a 422 at `customer_billing_address`).
fn preview_quote(
    quote: Result<Option<crate::payments::TaxQuote>, AppError>,
) -> Result<Option<crate::payments::TaxQuote>, AppError> {
    match quote {
        Err(e) if crate::app::tax::is_location_refusal(&e) => Ok(None),
        other => other,
    }
}

/// The tax quote of checkout `c` as it is (`None`: nothing to tax), asked of the tax
/// service (`state.tax`): what the checkout's rules are given with a change.
pub(crate) async fn quote_tax(
    state: &AppState,
    c: &Checkout,
) -> Result<Option<crate::payments::TaxQuote>, crate::error::AppError> {
    let Some(mut request) = c.tax_request() else {
        return Ok(None);
    };
    // A business's number is checked with its register (when one is configured) before
    // the quote: a number the register refutes is taxed as a consumer's.
    if let (true, Some((id, status)), Some(country)) = (
        request.buyer.is_business,
        request.buyer.tax_id.as_mut(),
        c.customer_billing_address
            .as_ref()
            .map(|a| a.country.clone()),
    ) {
        *status = state.tax_ids.check(id, &country).await;
    }
    // The price sold says whether its amount includes the tax (else the organization's
    // default does).
    let price_option =
        crate::app::catalog::products::price_tax_behavior(state, c.product_id, c.price.id).await?;
    crate::app::tax::quote(state, c.organization_id, price_option, request)
        .await
        .map(Some)
}

/// Updates checkout `id` as `subject` (its organization's member or token).
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: CheckoutId,
    input: ChangeCheckout,
) -> Result<Checkout, AppError> {
    let checkout = checkout_for(state, subject, id).await?;
    apply_update(state, &checkout, input, false).await
}

/// Updates the checkout of a client secret, as its buyer.
pub async fn update_as_buyer(
    state: &AppState,
    secret: &str,
    input: ChangeCheckout,
) -> Result<Checkout, AppError> {
    let checkout = checkout_by_secret(state, secret).await?;
    apply_update(state, &checkout, input, true).await
}

/// The buyer pays: confirms the checkout of a client secret (`token`: the processor's
/// confirmation token), charges it and settles the answer. Returns the checkout as settled
/// and the customer session's token.
pub async fn confirm_as_buyer(
    state: &AppState,
    secret: &str,
    input: ChangeCheckout,
    token: Option<String>,
) -> Result<(Checkout, String), AppError> {
    let mut checkout = checkout_by_secret(state, secret).await?;
    if checkout.effective_status(state.now()) == CheckoutStatus::Confirmed
        && checkout.pending_intent().is_some()
    {
        // Waiting on the buyer's 3-D Secure, which may have failed a moment ago, before the
        // processor's webhook says so: ask how the intent stands. A failed one reopens the
        // checkout and this confirm is the buyer's next attempt; one still under way or
        // paid is reported below as not open.
        match settle(state, checkout.id).await {
            Ok(_) => {}
            Err(e) if e.code() == Code::PaymentError => {}
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

#[cfg(test)]
#[path = "create_tests.rs"]
mod create_tests;
