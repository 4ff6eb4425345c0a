//! Plan changes of a subscription (`PATCH /v1/subscriptions/{id}` with a new product or
//! price, and `POST /v1/subscriptions/{id}/change-preview`): the target resolved from the
//! catalog, the proration decided by the subscription's rules
//! (`tollgate_actors::subscription::plan_change`), the charge of an `invoice` change made
//! through the payment processor, then the change, its order and the new product's keys
//! written in one batch by the subscription's actor. Keys of benefits the new product
//! lacks are revoked; benefits both products grant keep their keys.
//!
//! Order of steps, and why it is safe: the change is decided at one instant `at` (so the
//! preview and the change agree to the cent for a given instant); the charge uses the
//! change's idempotency key (`<subscription>:change:<n>`: a retried request is never
//! charged twice); the actor applies the change only if the subscription still decides
//! the same at `at`, else nothing is written and the charge is refunded.

use chrono::{DateTime, Utc};
use serde::Serialize;
use tollgate_actors::ids::derived_uuid;
use tollgate_actors::license_key::{generate_key, GetLicenseKey, LicenseKey};
use tollgate_actors::subscription::{
    ChangeCharge, ChangePlan, PlanChange, PlanTarget, ProrationBehavior, Subscription,
    SubscriptionError,
};
use tollgate_actors::ActorError;
use utoipa::ToSchema;

use crate::app::subscription::{
    key_failure, subscription_for, subscription_refusal, tax_quote, Context,
};
use crate::auth::Subject;
use crate::domain::benefit::{Benefit, BenefitProperties};
use crate::domain::currency::Currency;
use crate::domain::discount::{amount_off, Discount};
use crate::domain::grants;
use crate::domain::ids::{LicenseKeyId, PriceId, SubscriptionId};
use crate::domain::organization::Organization;
use crate::domain::product::{product_for_price, Price, Product};
use crate::error::{AppError, Code, Given};
use crate::field;
use crate::payments::{ChargeOutcome, ChargeRequest, RefundRequest, TaxQuote};
use crate::state::AppState;

pub use crate::domain::subscription_change::PlanRequest;

/// One line of a preview: a credit (negative) or a debit.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProrationLine {
    pub label: String,
    /// Signed, in cents.
    pub amount: i64,
}

/// What a plan change costs, before it is made (Polar's `SubscriptionChargePreview`, with
/// Tollgate's additions `proration_behavior`, `carried_amount` and `period_end`). All
/// amounts in cents of `currency`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SubscriptionChargePreview {
    /// 0: a change has no base charge, only prorations.
    pub base_amount: i64,
    /// 0: Tollgate has no metered prices.
    pub metered_amount: i64,
    /// The net of the prorations (debit − credit).
    pub proration_amount: i64,
    pub prorations: Vec<ProrationLine>,
    pub subtotal_amount: i64,
    /// 0: the amounts are already net of the subscription's discount.
    pub discount_amount: i64,
    pub net_amount: i64,
    /// The tax on what is charged now.
    pub tax_amount: i64,
    pub total_amount: i64,
    /// 0: Tollgate keeps credits on the subscription (`carried_amount`), not on a
    /// customer balance.
    pub applied_balance_amount: i64,
    /// Charged at once, tax included (what the change's order will total).
    pub due_amount: i64,
    pub currency: String,
    /// `invoice` or `prorate`, as applied.
    pub proration_behavior: &'static str,
    /// Added to the next renewal's charge (negative: a credit taken off it).
    pub carried_amount: i64,
    /// The end of the period the change leaves the subscription in (a new interval starts
    /// a new period now).
    pub period_end: DateTime<Utc>,
    /// What the renewal at `period_end` charges before tax, if nothing else changes: the
    /// new amount with the balance carried (a credit taken off up to the period's amount).
    pub next_amount: i64,
}

/// What the next renewal charges before tax for `amount` a period with `balance` carried
/// (the renewal's own rule: a credit is taken off up to the amount, a debt added in full).
fn next_amount(amount: Option<i64>, balance: i64) -> i64 {
    let base = amount.unwrap_or(0).max(0);
    base.saturating_add(balance.max(-base))
}

/// A change as decided now, with what applying it needs.
struct Decided {
    current: Subscription,
    change: PlanChange,
    product: Product,
}

/// Polar's refusal of a plan change to a product without a price in the subscription's
/// currency.
const NO_PRICE_IN_CURRENCY: &str =
    "This product doesn't have a price for the subscription currency.";

fn invalid(field: &str, msg: &str, input: impl Into<Given>) -> AppError {
    AppError::invalid(field![field], msg, input)
}

/// The price of `product` a subscription moves to: the one named, else an active
/// recurring price in the subscription's currency, preferring its interval. A price in
/// another currency (a free one counts in the currency it was created in) is never one:
/// a subscription's currency does not change (Polar's 422 on `product_id`).
fn target_price<'a>(
    s: &Subscription,
    product: &'a Product,
    price_id: Option<PriceId>,
) -> Result<&'a Price, AppError> {
    let currency = s
        .currency
        .as_deref()
        .and_then(Currency::from_code)
        .unwrap_or(Currency::DEFAULT);
    if let Some(id) = price_id {
        let price = product
            .active_price(id)
            .filter(|p| p.kind.is_recurring())
            .ok_or_else(|| invalid("product_price_id", "Price does not exist.", id.to_string()))?;
        if product.currency_of(price) != currency {
            return Err(invalid(
                "product_price_id",
                NO_PRICE_IN_CURRENCY,
                id.to_string(),
            ));
        }
        return Ok(price);
    }
    let same_currency = |p: &&Price| p.kind.is_recurring() && product.currency_of(p) == currency;
    let mut candidates = product.active_prices().filter(same_currency);
    let first = candidates.next();
    product
        .active_prices()
        .filter(same_currency)
        .find(|p| p.kind.interval() == Some(s.recurring_interval))
        .or(first)
        .ok_or_else(|| invalid("product_id", NO_PRICE_IN_CURRENCY, product.id.to_string()))
}

/// The seats a subscription keeps when it moves to `price`. A seat-based subscription
/// moves only to another seat-based price (Polar's 422 otherwise), keeping its seat
/// count, which the new tiers must sell. A subscription that is not seat-based does not
/// move to a seat-based price: Polar would make its customer a team and assign seats,
/// which Tollgate does not have.
fn seats_after_change(
    current: &Subscription,
    price: &Price,
    named: &str,
    field: &str,
) -> Result<Option<u32>, AppError> {
    match (current.seats, price.kind.seat_tiers()) {
        (Some(_), None) => Err(invalid(
            field,
            "Can't switch from a seat-based to a non-seat-based product.",
            named.to_string(),
        )),
        (None, Some(_)) => Err(invalid(
            field,
            "Can't switch from a non-seat-based to a seat-based product.",
            named.to_string(),
        )),
        (Some(n), Some(tiers)) if !tiers.allows(n) => Err(invalid(
            field,
            &format!("This product doesn't sell the subscription's {n} seats."),
            named.to_string(),
        )),
        (seats, _) => Ok(seats),
    }
}

/// Resolves the request against the catalog and decides the change at `at`.
async fn decide(
    state: &AppState,
    current: Subscription,
    req: &PlanRequest,
    at: DateTime<Utc>,
) -> Result<Option<Decided>, AppError> {
    let (field, product) = match (req.product_id, req.price_id) {
        (Some(id), _) => (
            "product_id",
            state
                .store
                .get::<Product>(&id.key())
                .await?
                .map(|p| p.value),
        ),
        (None, Some(id)) => (
            "product_price_id",
            product_for_price(&state.store, id).await?.map(|p| p.value),
        ),
        (None, None) => return Ok(None),
    };
    let named = req
        .product_id
        .map(|p| p.to_string())
        .or(req.price_id.map(|p| p.to_string()))
        .unwrap_or_default();
    let product = product
        .filter(|p| p.organization_id == current.organization_id)
        .ok_or_else(|| {
            let msg = if field == "product_id" {
                "Product does not exist."
            } else {
                "Price does not exist."
            };
            invalid(field, msg, named.clone())
        })?;
    if product.is_archived {
        return Err(invalid(field, "Product is archived.", named.clone()));
    }
    if !product.is_recurring {
        return Err(invalid(field, "Product is not recurring.", named.clone()));
    }
    let price = target_price(&current, &product, req.price_id)?;
    let seats = seats_after_change(&current, price, &named, field)?;
    // A seat-based price costs what its tiers ask for the seats kept.
    let base = match (seats, price.kind.seat_tiers()) {
        (Some(n), Some(tiers)) => tiers.amount(n),
        _ => price.kind.fixed_amount(),
    };
    let discount = match current.discount_id {
        Some(id) => state
            .store
            .get::<Discount>(&id.key())
            .await?
            .map(|d| d.value),
        None => None,
    };
    // Discounts apply to fixed prices only.
    let keeps_discount = discount
        .as_ref()
        .is_some_and(|d| d.applies_to(product.id) && price.kind.fixed_amount().is_some());
    let amount = base.map(|a| match (&discount, keeps_discount) {
        (Some(d), true) => a - amount_off(&d.kind, a),
        _ => a,
    });
    let target = PlanTarget::new(
        product.id,
        &product.name,
        price,
        product.recurring_interval_count,
        amount,
        keeps_discount,
    )
    .ok_or_else(|| invalid(field, "Product is not recurring.", named.clone()))?
    .with_seats(seats);
    let behavior = match req.behavior {
        Some(b) => b,
        None => state
            .store
            .get::<Organization>(&current.organization_id.key())
            .await?
            .map_or(ProrationBehavior::Prorate, |o| {
                o.value.subscription_settings.proration_behavior
            }),
    };
    let change = current
        .plan_change(&target, behavior, at)
        .map_err(|e| plan_error(ActorError::Domain(e)))?;
    Ok(change.map(|change| Decided {
        current,
        change,
        product,
    }))
}

/// A refusal of the subscription's rules as Polar answers a plan change.
fn plan_error(e: ActorError<SubscriptionError>) -> AppError {
    subscription_refusal(e, Context::PlanChange)
}

/// The tax quote on `amount` for the subscription's customer (by their billing address),
/// at the tax behaviour of the price the change moves to.
async fn tax_for(state: &AppState, d: &Decided, amount: i64) -> Result<TaxQuote, AppError> {
    let s = &d.current;
    let currency = s
        .currency
        .as_deref()
        .unwrap_or(crate::domain::currency::Currency::DEFAULT.code());
    let option = d.product.price_tax_behavior(d.change.target.price_id);
    tax_quote(state, s.customer_id, option, amount, currency).await
}

fn date(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d").to_string()
}

fn preview_of(
    current: &Subscription,
    c: &PlanChange,
    tax_amount: i64,
) -> SubscriptionChargePreview {
    let (from, to) = (c.at.max(c.period_start), c.period_end);
    let mut prorations = Vec::new();
    if c.credit != 0 {
        prorations.push(ProrationLine {
            label: format!(
                "Remaining time on {} — From {} to {}",
                current.product_name,
                date(from),
                date(current.current_period_end.unwrap_or(to))
            ),
            amount: -c.credit,
        });
    }
    if c.debit != 0 {
        prorations.push(ProrationLine {
            label: format!(
                "{} — From {} to {}",
                c.target.product_name,
                date(from),
                date(to)
            ),
            amount: c.debit,
        });
    }
    let net = c.net();
    SubscriptionChargePreview {
        base_amount: 0,
        metered_amount: 0,
        proration_amount: net,
        prorations,
        subtotal_amount: net,
        discount_amount: 0,
        net_amount: net,
        tax_amount,
        total_amount: net + tax_amount,
        applied_balance_amount: 0,
        due_amount: c.due_now + tax_amount,
        currency: current
            .currency
            .clone()
            .unwrap_or_else(|| crate::domain::currency::Currency::DEFAULT.into()),
        proration_behavior: match c.behavior {
            ProrationBehavior::Invoice => "invoice",
            ProrationBehavior::Prorate => "prorate",
        },
        carried_amount: c.carried,
        period_end: c.period_end,
        next_amount: next_amount(
            c.target.amount,
            current.proration_balance.saturating_add(c.carried),
        ),
    }
}

/// What changing subscription `id` as `req` asks would cost now; nothing is written. A
/// change to what the subscription already has previews as nothing.
pub async fn preview(
    state: &AppState,
    subject: Subject,
    id: SubscriptionId,
    req: &PlanRequest,
) -> Result<SubscriptionChargePreview, AppError> {
    state.store.read_barrier().await?;
    let current = subscription_for(state, subject, id).await?;
    let at = state.now();
    match decide(state, current.clone(), req, at).await? {
        Some(d) => {
            let tax = tax_for(state, &d, d.change.due_now).await?;
            Ok(preview_of(&d.current, &d.change, tax.added_tax()))
        }
        None => Ok(SubscriptionChargePreview {
            base_amount: 0,
            metered_amount: 0,
            proration_amount: 0,
            prorations: Vec::new(),
            subtotal_amount: 0,
            discount_amount: 0,
            net_amount: 0,
            tax_amount: 0,
            total_amount: 0,
            applied_balance_amount: 0,
            due_amount: 0,
            currency: current
                .currency
                .clone()
                .unwrap_or_else(|| crate::domain::currency::Currency::DEFAULT.into()),
            proration_behavior: "prorate",
            carried_amount: 0,
            period_end: current
                .current_period_end
                .unwrap_or(current.current_period_start),
            next_amount: next_amount(current.amount, current.proration_balance),
        }),
    }
}

/// The keys the change grants (the new product's license-key benefits no kept key
/// covers) and drops (keys of benefits the new product lacks).
async fn key_changes(
    state: &AppState,
    d: &Decided,
) -> Result<(Vec<LicenseKey>, Vec<LicenseKeyId>), AppError> {
    let mut benefits: Vec<Benefit> = Vec::new();
    for id in &d.product.benefit_ids {
        if let Some(b) = state.store.get::<Benefit>(&id.key()).await? {
            if b.value.deleted_at.is_none()
                && matches!(b.value.properties, BenefitProperties::LicenseKeys(_))
            {
                benefits.push(b.value);
            }
        }
    }
    let mut dropped = Vec::new();
    let mut covered = Vec::new();
    for key in &d.current.license_key_ids {
        let k = match state.license_keys.call(*key, GetLicenseKey).await {
            Ok(k) => k,
            Err(ActorError::NotFound) => continue,
            Err(e) => return Err(key_failure(e)),
        };
        if benefits.iter().any(|b| b.id == k.benefit_id) {
            covered.push(k.benefit_id);
        } else {
            dropped.push(*key);
        }
    }
    let c = &d.change;
    let paid_until =
        grants::plan_change_paid_until(c.resets_cycle, c.period_end, d.current.current_period_end);
    // The new benefits grant as a purchase of the seats kept would (one seat otherwise).
    let uncovered: Vec<Benefit> = benefits
        .into_iter()
        .filter(|b| !covered.contains(&b.id))
        .collect();
    let seats = c.target.seats.unwrap_or(1);
    let mut granted: Vec<LicenseKey> = Vec::new();
    for g in grants::purchase_of(&uncovered, c.at, Some(paid_until), seats) {
        // The first key of a benefit keeps the id a one-key change derives; the others
        // are numbered.
        let nth = granted
            .iter()
            .filter(|k| k.benefit_id == g.benefit_id)
            .count();
        let name = match nth {
            0 => format!("license_key:{}:{}", g.benefit_id, c.number),
            n => format!("license_key:{}:{}:{n}", g.benefit_id, c.number),
        };
        let id = LicenseKeyId(derived_uuid(d.current.id.0, &name));
        granted.push(LicenseKey::from_grant(
            id,
            d.current.organization_id,
            d.current.customer_id,
            &g,
            generate_key(g.prefix.as_deref()),
            Some(d.current.id),
            None,
        ));
    }
    Ok((granted, dropped))
}

/// Changes subscription `id` to another product or price as `req` asks: an `invoice`
/// change (or one to a new interval) charges its positive net now, through the saved
/// payment method (402 `PaymentFailed` when declined: nothing changes); otherwise the net
/// goes on the next renewal. Keys switch to the new product's. Nothing to change answers
/// the subscription as it is.
pub async fn change_plan(
    state: &AppState,
    subject: Subject,
    id: SubscriptionId,
    req: &PlanRequest,
) -> Result<Subscription, AppError> {
    state.store.read_barrier().await?;
    let current = subscription_for(state, subject, id).await?;
    let at = state.now();
    let Some(d) = decide(state, current.clone(), req, at).await? else {
        return Ok(current);
    };
    // A paid plan is charged (now or at its renewals) with the saved payment method: a
    // free subscription has none to charge.
    let Some(token) = d
        .current
        .payment_token
        .clone()
        .or_else(|| (d.change.target.amount.unwrap_or(0) <= 0).then(String::new))
    else {
        return Err(AppError::new(
            Code::PaymentMethodRequired,
            "Add a payment method before updating this subscription.",
        ));
    };
    let (new_keys, dropped_keys) = key_changes(state, &d).await?;
    let mut charged: Option<(ChangeCharge, i64)> = None;
    if d.change.due_now > 0 {
        let tax = tax_for(state, &d, d.change.due_now).await?;
        let total = d.change.due_now + tax.added_tax();
        let request = ChargeRequest {
            idempotency_key: d.change.idempotency_key(id),
            amount: total,
            currency: d
                .current
                .currency
                .clone()
                .unwrap_or_else(|| crate::domain::currency::Currency::DEFAULT.into()),
            confirmation_token: Some(token),
            setup_future_usage: true,
            off_session: true,
            customer_id: d.current.customer_id,
            customer_email: d.current.customer_email.clone(),
            customer_name: None,
            metadata: vec![
                ("subscription_id".into(), id.to_string()),
                ("idempotency_key".into(), d.change.idempotency_key(id)),
            ],
        };
        let payment_id = match state.processor.charge(request).await {
            Ok(ChargeOutcome::Succeeded { intent_id, .. }) => {
                Some(intent_id).filter(|i| !i.is_empty())
            }
            Ok(ChargeOutcome::Declined { .. } | ChargeOutcome::Pending { .. }) => {
                return Err(AppError::new(
                    Code::PaymentFailed,
                    "Payment failed with reason: card_error.",
                ))
            }
            Err(e) => {
                tracing::warn!(subscription = %id, error = %e, "plan change charge failed");
                return Err(AppError::unavailable());
            }
        };
        charged = Some((ChangeCharge { tax, payment_id }, total));
    }
    let applied = state
        .subscriptions
        .call(
            id,
            ChangePlan {
                change: d.change.clone(),
                charge: charged.as_ref().map(|(c, _)| c.clone()),
                new_keys,
                dropped_keys,
            },
        )
        .await
        .map_err(plan_error)?;
    if !applied.applied {
        // The subscription changed between the decision and the write: give the money
        // back and let the caller ask again.
        if let Some((charge, total)) = &charged {
            if let Some(payment) = &charge.payment_id {
                let refund = RefundRequest {
                    idempotency_key: format!("{}:refund", d.change.idempotency_key(id)),
                    payment_id: Some(payment.clone()),
                    amount: *total,
                    currency: d
                        .current
                        .currency
                        .clone()
                        .unwrap_or_else(|| crate::domain::currency::Currency::DEFAULT.into()),
                    reason: "duplicate",
                    metadata: vec![("subscription_id".into(), id.to_string())],
                };
                if let Err(e) = state.processor.refund(refund).await {
                    tracing::error!(subscription = %id, error = %e,
                        "a charge of a change that did not apply could not be refunded");
                }
            }
        }
        return Err(AppError::new(
            Code::SubscriptionLocked,
            "This subscription is pending an update.",
        ));
    }
    let mut updated = applied.subscription;
    if d.change.resets_cycle {
        // The kept keys follow the new cycle now; what fails is left for the sweep.
        if let Some(paid) = state
            .store
            .get::<tollgate_actors::subscription::KeysPaidUntil>(&id.key())
            .await?
        {
            let mut report = crate::app::subscription::SweepReport::default();
            if let Err(e) = crate::app::subscription::follow_keys(state, paid, &mut report).await {
                tracing::warn!(subscription = %id, error = %e,
                    "key expiry left for the sweep");
            }
        }
    }
    if !updated.pending_revocations.is_empty() {
        let mut report = crate::app::subscription::SweepReport::default();
        match crate::app::subscription::revoke_pending(state, id, &mut report).await {
            Ok(Some(s)) => updated = s,
            Ok(None) => {}
            Err(e) => tracing::warn!(subscription = %id, error = %e,
                "license keys left for the sweep to revoke"),
        }
    }
    Ok(updated)
}

/// One rendering of each response type, from a decided change (the OpenAPI tests validate
/// them against the document).
#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    let mut s = crate::api::subscription::sample_subscriptions()
        .into_iter()
        .next()
        .expect("a sample subscription");
    // A live paid subscription, mid-period.
    s.status = tollgate_actors::subscription::SubscriptionStatus::Active;
    (s.cancel_at_period_end, s.ends_at, s.ended_at) = (false, None, None);
    s.amount = Some(1500);
    s.currency = Some("usd".into());
    s.current_period_end = Some(s.current_period_start + chrono::Duration::days(30));
    let price = Price {
        id: PriceId::new(),
        created_at: s.created_at,
        modified_at: None,
        is_archived: false,
        kind: crate::domain::product::PriceKind::RecurringFixed {
            interval: s.recurring_interval,
            currency: s
                .currency
                .clone()
                .unwrap_or_else(|| crate::domain::currency::Currency::DEFAULT.into()),
            amount: s.amount.unwrap_or(0) * 3,
        },
    };
    let target = PlanTarget::new(
        crate::domain::ids::ProductId::new(),
        "Pro",
        &price,
        1,
        price.kind.fixed_amount(),
        false,
    )
    .expect("a recurring price");
    let at = s.current_period_start + chrono::Duration::days(3);
    let change = s
        .plan_change(&target, ProrationBehavior::Invoice, at)
        .ok()
        .flatten()
        .expect("a change");
    vec![(
        "SubscriptionChargePreview",
        serde_json::to_value(preview_of(&s, &change, 125)).unwrap_or_default(),
    )]
}

#[cfg(test)]
mod currency_tests {
    use super::*;
    use crate::domain::ids::{OrganizationId, ProductId};
    use crate::domain::product::{PriceKind, RecurringInterval};

    fn price(kind: PriceKind) -> Price {
        Price {
            id: PriceId::new(),
            created_at: Utc::now(),
            modified_at: None,
            is_archived: false,
            kind,
        }
    }

    fn fixed(currency: &str, amount: i64) -> Price {
        price(PriceKind::RecurringFixed {
            interval: RecurringInterval::Month,
            currency: currency.into(),
            amount,
        })
    }

    fn product(prices: Vec<Price>, free_price_currency: Vec<(PriceId, Currency)>) -> Product {
        Product {
            id: ProductId::new(),
            organization_id: OrganizationId::new(),
            created_at: Utc::now(),
            modified_at: None,
            name: "Pro".into(),
            description: None,
            is_recurring: true,
            is_archived: false,
            is_tax_applicable: true,
            metadata: Default::default(),
            prices,
            benefit_ids: Vec::new(),
            media_ids: Vec::new(),
            attached_custom_fields: Vec::new(),
            recurring_interval_count: 1,
            trial: None,
            price_tax_behavior: Vec::new(),
            free_price_currency,
        }
    }

    fn in_euros() -> Subscription {
        let mut s = crate::api::subscription::sample_subscriptions()
            .into_iter()
            .next()
            .expect("a sample subscription");
        s.currency = Some("eur".into());
        s.recurring_interval = RecurringInterval::Month;
        s
    }

    fn refusal(e: AppError) -> (String, String) {
        match e {
            AppError::Invalid(items) => (format!("{:?}", items[0].path), items[0].msg.clone()),
            other => panic!("not a 422: {other:?}"),
        }
    }

    #[test]
    fn the_target_price_is_the_one_in_the_subscriptions_currency() {
        let s = in_euros();
        let (usd, eur) = (fixed("usd", 3000), fixed("eur", 2700));
        let p = product(vec![usd.clone(), eur.clone()], Vec::new());
        assert_eq!(target_price(&s, &p, None).expect("a euro price").id, eur.id);
        assert_eq!(
            target_price(&s, &p, Some(eur.id)).expect("named").id,
            eur.id
        );
        // Named, but in dollars: refused on the field that named it.
        let (loc, msg) = refusal(target_price(&s, &p, Some(usd.id)).expect_err("dollars"));
        assert_eq!(
            (loc, msg.as_str()),
            (
                format!("{:?}", field!["product_price_id"]),
                NO_PRICE_IN_CURRENCY
            )
        );
    }

    #[test]
    fn a_product_without_a_price_in_the_subscriptions_currency_is_refused() {
        let s = in_euros();
        let dollars = product(vec![fixed("usd", 3000)], Vec::new());
        let (loc, msg) = refusal(target_price(&s, &dollars, None).expect_err("no euros"));
        assert_eq!(
            (loc, msg.as_str()),
            (format!("{:?}", field!["product_id"]), NO_PRICE_IN_CURRENCY)
        );
        // A free price counts in the currency it was created in: a dollar one is no
        // euro price, a euro one is.
        let free = price(PriceKind::RecurringFree {
            interval: RecurringInterval::Month,
        });
        let free_usd = product(vec![free.clone()], Vec::new());
        assert!(target_price(&s, &free_usd, None).is_err());
        let eur = Currency::from_code("eur").expect("eur");
        let free_eur = product(vec![free.clone()], vec![(free.id, eur)]);
        assert_eq!(
            target_price(&s, &free_eur, None).expect("free in euros").id,
            free.id
        );
    }
}
