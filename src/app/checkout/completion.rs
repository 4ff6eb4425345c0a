//! Completing a purchase: confirm (customer, discount redemption and customer session in
//! one write), charge, then settle the processor's outcome (`apply_outcome`) with one
//! atomic write of the order, subscription and license keys granted by the product's
//! benefits. Also the start-up recovery of confirmed checkouts and the expiry sweep.

use chrono::{DateTime, Duration, Utc};
use tollgate_actors::checkout::{
    Checkout, CheckoutError, CheckoutStatus, ConfirmCheckout, ExpireCheckout, Issue,
    SettleCheckout, Settlement, CHECKOUT_CONFIRMED, CHECKOUT_OPEN_BY_EXPIRY,
};
use tollgate_actors::ids::derived_uuid;
use tollgate_actors::license_key::{generate_key, LicenseKey};
use tollgate_actors::subscription::{Purchase, Subscription};
use tollgate_actors::ActorError;
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{Batch, Expect, StorageError};

use crate::auth::tokens::{generate, CUSTOMER_SESSION_PREFIX};
use crate::domain::customer::{customer_by_email, customer_by_id, normalize_email, Customer};
use crate::domain::customer_session::{CustomerSession, SessionPurchase};
use crate::domain::discount::{discount_by_id, Discount};
use crate::domain::grants;
use crate::domain::ids::{
    CheckoutId, CustomerId, CustomerSessionId, DiscountId, LicenseKeyId, ProductId, SubscriptionId,
};
use crate::domain::order::Order;
use crate::domain::product::Product;
use crate::error::{AppError, Code};
use crate::payments::{ChargeOutcome, ChargeRequest};
use crate::state::AppState;
use tollgate_actors::checkout::ChangeCheckout;

use super::fields::resolve_changes;
use super::{load, refusal};
use crate::app::portal::purchase::{
    customer_of_checkout, order_of_checkout, subscription_of_checkout,
};
use crate::app::views::product_of;

/// How many times a confirm that lost a race for the customer or the discount reads again
/// and retries.
const CONFIRM_ATTEMPTS: u32 = 10;

/// Confirms a checkout: applies the body, checks it can be paid, and writes in one
/// transaction the confirmed checkout, its customer (found by e-mail or created), the
/// discount redemption and the customer session. Returns the session token.
pub(super) async fn confirm(
    state: &AppState,
    checkout: &Checkout,
    input: ChangeCheckout,
    token: Option<String>,
) -> Result<(Checkout, String), AppError> {
    let mut last_error = None;
    // The checkout the tax is quoted for (read again when it moved meanwhile).
    let mut snapshot = checkout.clone();
    // A concurrent confirm may take the customer's e-mail or the discount's revision
    // first; the next attempt reads again and sees its write.
    for attempt in 0..CONFIRM_ATTEMPTS {
        if attempt > 0 {
            // Apart, so that confirms of one buyer racing each other do not meet again.
            tokio::time::sleep(std::time::Duration::from_millis(
                (rand::random::<u64>() % 5 + 1) << attempt.min(4),
            ))
            .await;
        }
        let changes = resolve_changes(state, checkout, input.clone(), true).await?;
        let preview_discount = changes
            .discount
            .as_ref()
            .map(|(d, _)| d.clone())
            .unwrap_or_else(|| checkout.discount.clone());
        let now = state.now();
        let discount_redeemable = match &preview_discount {
            Some(d) => discount_by_id(&state.store, d.id)
                .await?
                .is_some_and(|s| s.value.is_redeemable(now)),
            None => true,
        };
        // The price being paid: the one the body switches to (already checked), else the
        // checkout's, which may have been archived since it was selected.
        let price_archived = match &changes.price {
            Some(p) => p.is_archived,
            None => product_of(state, checkout)
                .await?
                .price(checkout.price.id)
                .is_none_or(|p| p.is_archived),
        };
        // The checkout as the body leaves it: its trial is checked and its tax quoted before
        // the rules confirm it (the rules refuse what the preview refuses, the same way).
        let preview = snapshot
            .update(changes.clone(), now, None)
            .map_err(|e| refusal(ActorError::Domain(e), checkout.id))?;
        // One trial per customer and product: a buyer who already had one pays now.
        if preview.trial_end.is_some() && had_trial(state, &preview).await? {
            return Err(AppError::new(
                Code::TrialAlreadyRedeemed,
                "You have already used a trial for this product. Trials can only be used \
                 once per customer.",
            ));
        }
        let tax = super::quote_tax(state, &preview).await?;
        let session_token = generate(CUSTOMER_SESSION_PREFIX, 32);
        // What the confirmation's write reads, read now: the actor decides without I/O.
        // The checkout as confirmed may name another customer or discount than these
        // (a concurrent update): its write then fails as a conflict, and the loop retries.
        let mut reads = Reads::default();
        let emails = [
            changes.customer_email.clone().flatten(),
            checkout.customer_email.clone(),
        ];
        for email in emails.into_iter().flatten() {
            reads.email(state, checkout.organization_id, &email).await?;
        }
        if let Some(id) = checkout.customer_id {
            reads.customer(state, id).await?;
        }
        if let Some(d) = &preview_discount {
            reads.discount(state, d.id).await?;
        }
        if let Some(external) = &checkout.external_customer_id {
            reads
                .external(state, checkout.organization_id, external)
                .await?;
        }
        let usage_later = products_billing_usage(state, checkout).await?;
        let attach = {
            let token_hash = state.hasher.hash(&session_token).to_vec();
            Box::new(move |c: &Checkout| {
                // Nothing to pay now, but usage is charged off-session later: a card.
                if saves_card_for_usage(c, usage_later.contains(&c.product_id))
                    && c.confirmation_token.is_none()
                {
                    return Err(ActorError::Domain(CheckoutError::Invalid(vec![Issue {
                        loc: vec!["confirmation_token_id".into()],
                        kind: "missing",
                        msg: "Confirmation token is required.".into(),
                    }])));
                }
                attach_confirmation(&reads, c, token_hash.clone(), now)
            }) as tollgate_actors::checkout::Attach
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
                    tax,
                    attach,
                },
            )
            .await;
        match result {
            Ok(c) => return Ok((c, session_token)),
            // The checkout changed since its tax was quoted: quote it as it now is.
            Err(ActorError::Domain(tollgate_actors::checkout::CheckoutError::TaxQuoteStale)) => {
                snapshot = state
                    .checkouts
                    .call(checkout.id, tollgate_actors::checkout::GetCheckout)
                    .await
                    .map_err(|e| refusal(e, checkout.id))?;
                last_error = Some(AppError::conflict(
                    "The checkout changed meanwhile; retry the request.",
                ));
                continue;
            }
            Err(ActorError::Storage(
                e @ (StorageError::Unique { .. } | StorageError::Conflict { .. }),
            )) => {
                last_error = Some(AppError::conflict(contention(&e)));
                continue;
            }
            Err(e) => return Err(refusal(e, checkout.id)),
        }
    }
    Err(last_error.unwrap_or_else(AppError::unavailable))
}

/// What a confirm that kept losing its race says: the checkout's own record only when it
/// was the checkout that changed under it.
fn contention(e: &StorageError) -> &'static str {
    match e {
        StorageError::Conflict {
            collection: "checkout",
            ..
        } => "The checkout is being confirmed concurrently; retry.",
        _ => "The customer or the discount of this checkout changed while it was being confirmed; retry.",
    }
}

/// Whether the buyer of `c` (its customer, else the organization's customer with its
/// e-mail address) already started a trial of its product (bought with it, even if the
/// subscription moved to another plan since), when the organization gives one trial per
/// customer and product (`prevent_trial_abuse`, on by default).
async fn had_trial(state: &AppState, c: &Checkout) -> Result<bool, AppError> {
    let once = state
        .store
        .get::<crate::domain::organization::Organization>(&c.organization_id.key())
        .await?
        .is_none_or(|o| o.value.prevent_trial_abuse);
    if !once {
        return Ok(false);
    }
    let customer = match (c.customer_id, c.customer_email.as_deref()) {
        (Some(id), _) => Some(id),
        (None, Some(email)) => customer_by_email(&state.store, c.organization_id, email)
            .await?
            .map(|c| c.value.id),
        (None, None) => None,
    };
    let Some(customer) = customer else {
        return Ok(false);
    };
    let ids = state
        .store
        .index_range(
            tollgate_actors::subscription::SUBSCRIPTION_OF_CUSTOMER,
            &customer.key(),
            &[],
            None,
        )
        .await?;
    for key in ids {
        let Some(id) = SubscriptionId::from_key(&key) else {
            continue;
        };
        let Some(s) = state.store.get::<Subscription>(&id.key()).await? else {
            continue;
        };
        if s.value.trial_start.is_none() {
            continue;
        }
        if s.value.product_id == c.product_id {
            return Ok(true);
        }
        // A plan change since: the product its trial was of is its checkout's.
        if let Some(bought) = s.value.checkout_id {
            if let Some(k) = state.store.get::<Checkout>(&bought.key()).await? {
                if k.value.product_id == c.product_id {
                    return Ok(true);
                }
            }
        }
    }
    Ok(false)
}

/// The writes that go with a confirmation (runs inside the checkout actor, on the
/// checkout as confirmed).
fn attach_confirmation(
    reads: &Reads,
    c: &Checkout,
    token_hash: Vec<u8>,
    now: DateTime<Utc>,
) -> Result<(CustomerId, Batch), ActorError<CheckoutError>> {
    let mut batch = Batch::new();
    let email = c.customer_email.clone().unwrap_or_default();
    let existing = match c.customer_id {
        Some(id) => reads.customers.get(&id).ok_or_else(unread)?.clone(),
        None => reads
            .by_email
            .get(&(c.organization_id, normalize_email(&email)))
            .ok_or_else(unread)?
            .clone(),
    };
    // The seller's id for the buyer (`external_customer_id`), as Polar gives it: to a
    // customer without one, when no other customer of the organization holds it.
    let external = match &c.external_customer_id {
        Some(e) => reads
            .by_external
            .get(&(c.organization_id, e.clone()))
            .ok_or_else(unread)?
            .is_none()
            .then(|| e.clone()),
        None => None,
    };
    let own = customer_of_checkout(c.id, &normalize_email(&email));
    let reach = session_reach(c, existing.as_ref().map(|s| &s.value), own);
    let customer = match existing {
        Some(stored) => match updated_customer(&stored.value, c, reach, external, now) {
            // Written only when something changed: confirms of one buyer's checkouts then
            // never contend on the customer's record.
            Some(customer) => {
                batch.put(&customer, Expect::Rev(stored.rev))?;
                customer
            }
            None => stored.value,
        },
        None => {
            let mut customer = Customer::new(own, c.organization_id, email.clone(), now);
            customer.name = c.customer_name.clone();
            customer.billing_address = c.customer_billing_address.clone();
            customer.tax_id = c.customer_tax_id.clone();
            customer.metadata = c.customer_metadata.clone();
            customer.external_id = external;
            batch.put(&customer, Expect::Absent)?;
            customer
        }
    };
    if let Some(applied) = &c.discount {
        let stored = reads.discounts.get(&applied.id).ok_or_else(unread)?.clone();
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
        // It opens nothing before the payment succeeded, and reaches only this purchase
        // unless the customer is the seller's word or this checkout's own.
        purchase: Some(reach),
    };
    batch.put(&session, Expect::Absent)?;
    Ok((customer.id, batch))
}

/// How far the session of a confirm of `c` reaches, `existing` being the customer its
/// buyer resolved to (`None`: the checkout creates one, `own`). The whole portal for the
/// customer the seller named (`customer_id` when the checkout was created, or the holder of
/// its `external_customer_id`) or the one this checkout creates (or created at an earlier
/// attempt, before a declined card); only this purchase for an existing customer found by
/// an address the buyer typed, which proves nothing.
fn session_reach(c: &Checkout, existing: Option<&Customer>, own: CustomerId) -> SessionPurchase {
    let seller_named = c.customer_id.is_some()
        || existing.is_some_and(|s| {
            c.external_customer_id.is_some() && s.external_id == c.external_customer_id
        });
    SessionPurchase {
        checkout_id: c.id,
        limited: existing.is_some_and(|s| s.id != own) && !seller_named,
    }
}

/// The existing customer `stored` as the confirm of `c` leaves it, `None` when unchanged.
/// Only a confirm whose buyer the seller vouched for (`reach` not limited) changes it: the
/// seller's external id (`external`, when it has none) and metadata, and the buyer's name
/// (when it has none), billing address and tax id. A stranger typing someone's address
/// changes nothing of theirs, not even through a checkout the seller's app made for the
/// stranger (its external id would later name the victim as the stranger); the order
/// keeps the address and tax id it was bought with.
fn updated_customer(
    stored: &Customer,
    c: &Checkout,
    reach: SessionPurchase,
    external: Option<String>,
    now: DateTime<Utc>,
) -> Option<Customer> {
    if reach.limited {
        return None;
    }
    let mut customer = stored.clone();
    if customer.external_id.is_none() {
        customer.external_id = external;
    }
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
    (customer != *stored).then(|| {
        customer.modified_at = Some(now);
        customer
    })
}

// ---------------------------------------------------------------------------------------
// Settling a confirmed checkout: charge, then one write of everything the purchase creates.

/// The products among those of checkout `c` that sell a metered price beside a price
/// billed up front: their usage is charged off-session at the renewals.
async fn products_billing_usage(
    state: &AppState,
    c: &Checkout,
) -> Result<std::collections::HashSet<ProductId>, AppError> {
    let mut keys: Vec<Vec<u8>> = c.products.iter().map(|p| p.key()).collect();
    keys.push(c.product_id.key());
    keys.sort();
    keys.dedup();
    Ok(state
        .store
        .get_many::<Product>(&keys)
        .await?
        .into_iter()
        .filter(|p| p.value.has_metered_prices())
        .map(|p| p.value.id)
        .collect())
}

/// Whether checkout `c`, of a product that bills usage later (`usage_later`), saves the
/// buyer's card though nothing is charged now: its recurring price came to 0 (free, or
/// discounted to nothing), and the usage of its metered prices is charged off-session at
/// the period's end, so a card is needed all the same. (A checkout of the metered price
/// itself, or with a trial, is [`Checkout::saves_payment_method`]'s.)
fn saves_card_for_usage(c: &Checkout, usage_later: bool) -> bool {
    usage_later
        && c.price.kind.is_recurring()
        && c.is_payment_setup_required()
        && !c.is_payment_required()
        && !c.saves_payment_method()
}

/// Charges a confirmed checkout and records the outcome. Safe to repeat: the charge is
/// idempotent per checkout and confirmation token, a checkout that already waits on an
/// intent asks the processor how it stands instead of charging again, and a checkout no
/// longer `confirmed` is left as it is.
pub async fn settle(state: &AppState, id: CheckoutId) -> Result<Checkout, AppError> {
    let checkout = load(state, id).await?;
    if checkout.status != CheckoutStatus::Confirmed {
        return Ok(checkout);
    }
    let outcome = if let Some(intent) = checkout.pending_intent() {
        state.processor.intent(intent).await
    } else if checkout.is_payment_required() {
        state
            .processor
            .charge_from_page(charge_request(&checkout)?, return_url(state, &checkout))
            .await
    } else if checkout.saves_payment_method()
        || saves_card_for_usage(
            &checkout,
            products_billing_usage(state, &checkout)
                .await?
                .contains(&checkout.product_id),
        )
    {
        // A trial, or a metered price: nothing is charged now, the card is saved for the
        // first charge at the trial's end or the usage billed at the period's end.
        state
            .processor
            .setup_from_page(charge_request(&checkout)?, return_url(state, &checkout))
            .await
    } else {
        Ok(ChargeOutcome::Succeeded {
            intent_id: String::new(),
            payment_method: None,
        })
    };
    match outcome {
        Ok(outcome) => apply_outcome(state, &checkout, outcome).await,
        Err(e) => {
            state.metrics.payment("error");
            // Left confirmed: recovery (or the processor's webhook) settles it later.
            tracing::warn!(checkout = %id, error = %e, "payment processor unavailable");
            Err(AppError::unavailable())
        }
    }
}

/// Where a buyer sent to their bank's page (iDEAL, Bancontact) comes back: the checkout's
/// confirmation page, which shows the payment processing until the processor settles it
/// (Polar's `return_url`).
pub fn return_url(state: &AppState, c: &Checkout) -> String {
    return_url_of(&state.public_url, c)
}

/// [`return_url`] under `public_url`.
pub fn return_url_of(public_url: &str, c: &Checkout) -> String {
    format!(
        "{}/checkout/{}/confirmation",
        public_url.trim_end_matches('/'),
        c.client_secret
    )
}

/// What a declined or failed payment does to its checkout: one the buyer is still at
/// (declined while confirming, a failed 3-D Secure or bank page) reopens it, so that they
/// can pay again; one that failed after the processor accepted it for settlement
/// (`processing`: a debit that bounced days later) fails it, since the buyer has left.
pub fn after_decline(c: &Checkout) -> Settlement {
    let m = &c.payment_processor_metadata;
    if c.pending_intent().is_some()
        && m.get("intent_status").map(String::as_str) == Some("processing")
    {
        Settlement::Failed
    } else {
        Settlement::Reopen
    }
}

/// The charge of a confirmed checkout.
fn charge_request(c: &Checkout) -> Result<ChargeRequest, AppError> {
    let customer_id = c
        .customer_id
        .ok_or_else(|| AppError::internal("a confirmed checkout has no customer"))?;
    let token = c.confirmation_token.clone();
    Ok(ChargeRequest {
        // One key per attempt: a retried charge of the same attempt is taken once, and a
        // buyer whose card was declined can pay again, even with the same card.
        idempotency_key: c.charge_key(),
        amount: c.total_amount().unwrap_or(0),
        currency: c
            .currency
            .clone()
            .unwrap_or_else(|| crate::domain::currency::Currency::DEFAULT.into()),
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
/// answer is `Code::PaymentError` (400). The processor's typed events call it too.
pub async fn apply_outcome(
    state: &AppState,
    checkout: &Checkout,
    outcome: ChargeOutcome,
) -> Result<Checkout, AppError> {
    let id = checkout.id;
    // What the processor answered about: the attempt of the checkout read before asking.
    let attempt = checkout.attempt();
    state.metrics.payment(match &outcome {
        ChargeOutcome::Succeeded { .. } => "succeeded",
        ChargeOutcome::Pending { .. } => "pending",
        ChargeOutcome::Declined { .. } => "declined",
    });
    match outcome {
        ChargeOutcome::Succeeded {
            intent_id,
            payment_method,
        } => {
            let subscription = checkout
                .price
                .kind
                .is_recurring()
                .then(|| subscription_of_checkout(checkout.id));
            let reads = Reads::for_completion(state, checkout).await?;
            // Renewals charge the method the processor kept, else the buyer's token.
            let token = payment_method.or_else(|| checkout.confirmation_token.clone());
            let settled = state
                .checkouts
                .call(
                    id,
                    SettleCheckout {
                        attempt: attempt.clone(),
                        settlement: Settlement::Succeeded {
                            intent: (!intent_id.is_empty()).then_some(intent_id),
                            subscription,
                        },
                        build: Box::new(move |c: &Checkout| completion(&reads, c, token.clone())),
                    },
                )
                .await;
            match settled {
                Ok(c) => Ok(c),
                // Someone else settled it first.
                Err(ActorError::Domain(CheckoutError::WrongStatus { .. })) => load(state, id).await,
                Err(e) => Err(refusal(e, id)),
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
                        attempt: attempt.clone(),
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
                // Settled meanwhile, or the buyer started another attempt: report what it is.
                Err(ActorError::Domain(
                    CheckoutError::WrongStatus { .. } | CheckoutError::Superseded,
                )) => load(state, id).await,
                Err(e) => Err(refusal(e, id)),
            }
        }
        ChargeOutcome::Declined { message } => {
            let discount = checkout.discount.as_ref().map(|d| d.id);
            let mut reads = Reads::default();
            if let Some(id) = discount {
                reads.discount(state, id).await?;
            }
            let settlement = after_decline(checkout);
            let failed = matches!(settlement, Settlement::Failed);
            let reopened = state
                .checkouts
                .call(
                    id,
                    SettleCheckout {
                        attempt: attempt.clone(),
                        settlement,
                        build: Box::new(move |_: &Checkout| undo_redemption(&reads, discount)),
                    },
                )
                .await;
            match reopened {
                // Nothing was granted (a purchase completes only once paid): the checkout
                // is closed, its page says the payment failed.
                Ok(c) if failed => {
                    tracing::info!(checkout = %id, "a processing payment failed");
                    return Ok(c);
                }
                Ok(_) => {}
                // Settled meanwhile (a webhook, a concurrent retry), or this decline is of
                // an earlier attempt than the one under way now: report what it is.
                Err(ActorError::Domain(
                    CheckoutError::WrongStatus { .. } | CheckoutError::Superseded,
                )) => return load(state, id).await,
                Err(e) => return Err(refusal(e, id)),
            }
            let detail = match message {
                Some(m) => format!(
                    "The payment failed: {m} Please try again with a different payment method."
                ),
                None => {
                    "The payment failed. Please try again with a different payment method.".into()
                }
            };
            Err(AppError::new(Code::PaymentError, detail))
        }
    }
}

fn undo_redemption(
    reads: &Reads,
    discount: Option<DiscountId>,
) -> Result<Batch, ActorError<CheckoutError>> {
    let mut batch = Batch::new();
    if let Some(id) = discount {
        if let Some(mut d) = reads.discounts.get(&id).ok_or_else(unread)?.clone() {
            d.value.redemptions_count = (d.value.redemptions_count - 1).max(0);
            batch.put(&d.value, Expect::Rev(d.rev))?;
        }
    }
    Ok(batch)
}

/// Everything a successful purchase creates, with ids derived from the checkout's, so
/// that a repeated completion can never create anything twice (`Expect::Absent`).
pub(crate) fn completion(
    reads: &Reads,
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
    let (product, benefits) = reads.products.get(&c.product_id).ok_or_else(unread)?;
    let product = product.clone().ok_or_else(|| missing("product"))?;
    let customer_id = c.customer_id.ok_or_else(|| missing("customer"))?;
    let customer = reads
        .customers
        .get(&customer_id)
        .ok_or_else(unread)?
        .clone()
        .ok_or_else(|| missing("customer record"))?
        .value;
    let recurring = c.price.kind.is_recurring();
    let order_id = order_of_checkout(c.id);
    let subscription_id = c.subscription_id.filter(|_| recurring);
    let mut batch = Batch::new();

    // What the product's benefits grant: with a subscription, keys follow its periods.
    let paid_until = subscription_id
        .and_then(|_| c.price.kind.interval())
        .map(|i| grants::first_period_end(i, product.recurring_interval_count, c.trial_end, now));
    let mut key_ids = Vec::new();
    // A seat-based purchase grants per its seats; the first key of a benefit keeps the id
    // a purchase of one always had, the others are numbered after it.
    let mut drawn: std::collections::HashMap<crate::domain::ids::BenefitId, u32> =
        std::collections::HashMap::new();
    for grant in grants::purchase_of(benefits, now, paid_until, c.seats.unwrap_or(1)) {
        let n = drawn.entry(grant.benefit_id).or_insert(0);
        let name = match *n {
            0 => format!("license_key:{}", grant.benefit_id),
            i => format!("license_key:{}:{i}", grant.benefit_id),
        };
        *n += 1;
        let id = LicenseKeyId(derived_uuid(c.id.0, &name));
        key_ids.push(id);
        let key = LicenseKey::from_grant(
            id,
            c.organization_id,
            customer_id,
            &grant,
            generate_key(grant.prefix.as_deref()),
            subscription_id,
            subscription_id.is_none().then_some(order_id),
        );
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
            product.recurring_interval_count,
            c.trial_end,
        );
        let mut subscription =
            Subscription::new_from_purchase(sid, purchase, now).map_err(|e| {
                ActorError::Storage(StorageError::Corrupt(format!("checkout {}: {e}", c.id)))
            })?;
        // A free price holds no currency of its own: the subscription is in the
        // checkout's, and stays in it.
        if subscription.currency.is_none() {
            subscription.currency = c.currency.clone();
        }
        batch.put(&subscription, Expect::Absent)?;
    }

    let order = Order::from_checkout(order_id, c, &customer, &product.name, subscription_id, now);
    batch.put(&order, Expect::Absent)?;
    Ok(batch)
}

/// Records the checkout actor's writes are built from, read before it decides (it does
/// no I/O of its own). A builder that needs a record not read here fails as a conflict,
/// which its caller retries with fresh reads.
#[derive(Default)]
pub(crate) struct Reads {
    customers: std::collections::HashMap<CustomerId, Option<tollgate_storage::Stored<Customer>>>,
    /// By (organization, lower-cased e-mail).
    by_email: std::collections::HashMap<
        (crate::domain::ids::OrganizationId, String),
        Option<tollgate_storage::Stored<Customer>>,
    >,
    discounts: std::collections::HashMap<DiscountId, Option<tollgate_storage::Stored<Discount>>>,
    /// Which live customer holds an external id (by organization and id).
    by_external:
        std::collections::HashMap<(crate::domain::ids::OrganizationId, String), Option<CustomerId>>,
    /// A product and its live benefits.
    products: std::collections::HashMap<
        crate::domain::ids::ProductId,
        (Option<Product>, Vec<crate::domain::benefit::Benefit>),
    >,
}

impl Reads {
    async fn external(
        &mut self,
        state: &AppState,
        org: crate::domain::ids::OrganizationId,
        external_id: &str,
    ) -> Result<(), AppError> {
        let holder =
            crate::domain::customer::customer_by_external_id(&state.store, org, external_id)
                .await?
                .map(|c| c.value.id);
        self.by_external
            .insert((org, external_id.to_string()), holder);
        Ok(())
    }

    async fn customer(&mut self, state: &AppState, id: CustomerId) -> Result<(), AppError> {
        let found = customer_by_id(&state.store, id).await?;
        self.customers.insert(id, found);
        Ok(())
    }

    async fn email(
        &mut self,
        state: &AppState,
        org: crate::domain::ids::OrganizationId,
        email: &str,
    ) -> Result<(), AppError> {
        let found = customer_by_email(&state.store, org, email).await?;
        self.by_email.insert((org, normalize_email(email)), found);
        Ok(())
    }

    async fn discount(&mut self, state: &AppState, id: DiscountId) -> Result<(), AppError> {
        let found = discount_by_id(&state.store, id).await?;
        self.discounts.insert(id, found);
        Ok(())
    }

    /// What a completion of `c` reads: its product, the product's benefits, its customer.
    pub(crate) async fn for_completion(state: &AppState, c: &Checkout) -> Result<Reads, AppError> {
        let mut reads = Reads::default();
        let product = state.store.get::<Product>(&c.product_id.key()).await?;
        let benefits = match &product {
            Some(p) => product_benefit_records(&state.store, &p.value).await?,
            None => Vec::new(),
        };
        reads
            .products
            .insert(c.product_id, (product.map(|p| p.value), benefits));
        if let Some(id) = c.customer_id {
            let found = state.store.get::<Customer>(&id.key()).await?;
            reads.customers.insert(id, found);
        }
        Ok(reads)
    }
}

/// A builder needed a record its caller did not read: the checkout changed since.
fn unread() -> ActorError<CheckoutError> {
    ActorError::Storage(StorageError::Conflict {
        // Not the checkout's own collection: the caller's inputs were stale, not the
        // actor's state (see `Entity::owns`).
        collection: "checkout inputs",
        expected: "the records read before deciding".into(),
        found: None,
    })
}

async fn product_benefit_records(
    store: &tollgate_storage::Store,
    product: &Product,
) -> Result<Vec<crate::domain::benefit::Benefit>, StorageError> {
    let mut out = Vec::new();
    for id in &product.benefit_ids {
        if let Some(b) = store
            .get::<crate::domain::benefit::Benefit>(&id.key())
            .await?
        {
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
pub async fn recover(state: &AppState) -> Result<usize, AppError> {
    settle_confirmed(state, None).await
}

/// Completes the checkouts `confirmed` for longer than `jobs.confirmed_grace_secs` (run by
/// every sweep): the confirm that should have completed one died between the charge and
/// the completion (on this node or another), or the processor did not answer it. Returns
/// how many it settled. Safe next to a confirm still under way: the charge is idempotent
/// per attempt and the completion happens once, whoever gets there first. A payment the
/// processor reported under way is left to its webhook (and to start-up recovery).
pub async fn complete_stale_confirmed(state: &AppState) -> Result<usize, AppError> {
    let grace = chrono::Duration::seconds(
        i64::try_from(state.settings.jobs.confirmed_grace_secs).unwrap_or(i64::MAX),
    );
    settle_confirmed(state, state.now().checked_sub_signed(grace)).await
}

/// Settles the confirmed checkouts last changed before `before` (all of them: `None`).
async fn settle_confirmed(
    state: &AppState,
    before: Option<chrono::DateTime<chrono::Utc>>,
) -> Result<usize, AppError> {
    let ids = state
        .store
        .index_range(CHECKOUT_CONFIRMED, &[], &[], None)
        .await?;
    let mut settled = 0;
    for id in ids {
        let Some(id) = CheckoutId::from_key(&id) else {
            continue;
        };
        if let Some(before) = before {
            // Recent ones may still be settled by their confirm; one whose payment the
            // processor reported under way (3-D Secure, processing) is settled by its
            // webhook, not polled by every sweep.
            let leave = state
                .store
                .get::<Checkout>(&id.key())
                .await?
                .is_none_or(|c| {
                    c.value.modified_at.unwrap_or(c.value.created_at) > before
                        || c.value.pending_intent().is_some()
                });
            if leave {
                continue;
            }
        }
        match settle(state, id).await {
            Ok(_) => settled += 1,
            Err(e) if e.code() == Code::PaymentError => settled += 1,
            Err(e) => {
                tracing::error!(checkout = %id, error = %e, "could not settle a confirmed checkout")
            }
        }
    }
    Ok(settled)
}

/// Persists the expiry of open checkouts past `expires_at`. Returns how many expired.
pub async fn sweep_expired(state: &AppState) -> Result<usize, AppError> {
    // Everything with `expires_at <= now` (the range's end is exclusive).
    let until = KeyBuf::new()
        .i64(state.now().timestamp_micros().saturating_add(1))
        .into_vec();
    let ids = state
        .store
        .index_range(CHECKOUT_OPEN_BY_EXPIRY, &[], &[], Some(&until))
        .await?;
    let mut expired = 0;
    for id in ids {
        let Some(id) = CheckoutId::from_key(&id) else {
            continue;
        };
        match state.checkouts.call(id, ExpireCheckout).await {
            Ok(c) if c.status == CheckoutStatus::Expired => expired += 1,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(checkout = %id, error = %refusal(e, id), "could not expire a checkout")
            }
        }
    }
    Ok(expired)
}

#[cfg(test)]
#[path = "completion_tests.rs"]
mod tests;
