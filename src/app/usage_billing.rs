//! What a renewal bills for usage (`polar-2026.md` §7.5): one line per metered price of
//! the subscription's product (in its currency), for what the customer consumed of the
//! price's meter in the ending period, less the credits of that period.
//!
//! The usage of a period is the customer's usage window of the meter (`usage::keys::window`
//! of each of the customer's scopes: events ingested by `customer_id` and by
//! `external_customer_id`), closed by the renewal: every event lands in exactly one window,
//! so it is billed once. The close is idempotent per subscription and cycle, so the
//! planning of a charge, its retries while past due and the buyer's own retry all bill
//! what the first close found. Usage during a trial is not billed (Polar), its window is
//! closed all the same.
//!
//! A subscription that ends at its period end bills its last period's usage in a final
//! order of the usage lines only ([`final_usage_lines`], its windows closed with a token
//! of their own), charged, taxed and mailed as a renewal; none when it comes to 0. A
//! subscription revoked at once bills nothing more (Polar's immediate cancellation writes
//! no order).

use std::collections::HashMap;

use chrono::{DateTime, TimeZone, Utc};
use tollgate_storage::WindowState;

use crate::api::subscription::SubscriptionMeter;
use crate::app::usage::customer_meters::{consumed, merge_windows, scopes_of};
use crate::app::usage::keys;
use crate::domain::currency::Currency;
use crate::domain::customer::Customer;
use crate::domain::ids::ProductId;
use crate::domain::meter::Meter;
use crate::domain::metered::{usage_charge, usage_label};
use crate::domain::order::UsageLine;
use crate::domain::product::{Price, PriceKind, Product};
use crate::error::AppError;
use crate::state::AppState;
use tollgate_actors::ids::derived_uuid;
use tollgate_actors::subscription::Subscription;

/// The token that closes a subscription's usage windows for the renewal to `cycle`.
fn close_token(s: &Subscription, cycle: u32) -> Vec<u8> {
    format!("renewal:{}:{cycle}", s.id).into_bytes()
}

/// The currency of `s` and the metered prices of its product in it, the prices its
/// usage is billed at (in the product's order).
pub(crate) fn metered_prices(s: &Subscription, product: &Product) -> (Currency, Vec<Price>) {
    let currency = s
        .currency
        .as_deref()
        .and_then(Currency::from_code)
        .unwrap_or_default();
    let metered = product
        .active_metered_prices()
        .filter(|p| product.currency_of(p) == currency)
        .cloned()
        .collect();
    (currency, metered)
}

/// Whether the period of `s` ending at `end` is its trial (its usage is not billed).
fn in_trial(s: &Subscription, end: DateTime<Utc>) -> bool {
    s.trial_end.is_some_and(|t| t >= end)
}

/// The bounds of the current period of `s` at `now`.
fn period(s: &Subscription, now: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
    (s.current_period_start, s.current_period_end.unwrap_or(now))
}

/// The usage lines of the final charge of `s`, which ends at its period end (Polar's
/// `subscription_cancel` order): the ending period's usage, closed with a token of its
/// own (`end:<subscription>`: the final close is done once, every retry finds it).
pub(crate) async fn final_usage_lines(
    state: &AppState,
    s: &Subscription,
) -> Result<Vec<UsageLine>, AppError> {
    period_usage_lines(state, s, format!("end:{}", s.id).into_bytes()).await
}

/// The usage lines of `s`'s renewal to period `cycle` (the charge that ends its current
/// period), closing the period's usage windows: empty for a product without metered
/// prices.
pub(crate) async fn usage_lines(
    state: &AppState,
    s: &Subscription,
    cycle: u32,
) -> Result<Vec<UsageLine>, AppError> {
    period_usage_lines(state, s, close_token(s, cycle)).await
}

/// The usage lines of the current period of `s`, closing its windows with `token`.
async fn period_usage_lines(
    state: &AppState,
    s: &Subscription,
    token: Vec<u8>,
) -> Result<Vec<UsageLine>, AppError> {
    let Some(product) = state.store.get::<Product>(&s.product_id.key()).await? else {
        return Ok(Vec::new());
    };
    let product = product.value;
    let (currency, metered) = metered_prices(s, &product);
    if metered.is_empty() {
        return Ok(Vec::new());
    }
    let Some(customer) = state.store.get::<Customer>(&s.customer_id.key()).await? else {
        return Ok(Vec::new());
    };
    let customer = customer.value;
    let now = state.now();
    let (start, end) = period(s, now);
    // The ending period was the trial: its usage is not billed.
    let trial = in_trial(s, end);
    let mut lines = Vec::new();
    for price in metered {
        let Some(meter_id) = price.kind.meter_id() else {
            continue;
        };
        let Some(meter) = state.store.get::<Meter>(&meter_id.key()).await? else {
            continue;
        };
        let meter = meter.value;
        let mut windows = Vec::new();
        for scope in scopes_of(&customer) {
            let key = keys::window(meter.organization_id, meter.id, &scope);
            windows.push(
                state
                    .store
                    .close_window(&key, &token, now.timestamp_micros())
                    .await?,
            );
        }
        if trial {
            continue;
        }
        lines.push(price_line(
            &meter,
            &merge_windows(&windows),
            &price,
            currency,
            start,
            end,
        )?);
    }
    Ok(lines)
}

/// The running usage of each metered price of `s` (`Subscription.meters`): what its
/// customer consumed of the price's meter in the open window (the window the next
/// renewal closes), the credits in it, and what the renewal would bill for it now, by
/// the renewal's own line ([`usage_lines`]). `meters` holds (at least) the meters of the
/// product's metered prices; a price whose meter is missing is left out. A subscription
/// that ended has nothing running: its meters are listed at 0.
pub(crate) async fn running_usage(
    state: &AppState,
    s: &Subscription,
    customer: &Customer,
    product: &Product,
    meters: &[Meter],
) -> Result<Vec<SubscriptionMeter>, AppError> {
    let (currency, metered) = metered_prices(s, product);
    let now = state.now();
    let (start, end) = period(s, now);
    let trial = in_trial(s, end);
    let mut out = Vec::new();
    for price in metered {
        let Some(meter) = price
            .kind
            .meter_id()
            .and_then(|id| meters.iter().find(|m| m.id == id))
        else {
            continue;
        };
        let mut windows = Vec::new();
        if s.ended_at.is_none() && customer.id == s.customer_id {
            for scope in scopes_of(customer) {
                let (from, to) = keys::window_range(meter.organization_id, meter.id, &scope);
                windows.extend(
                    state
                        .store
                        .windows(&from, &to)
                        .await?
                        .into_iter()
                        .map(|(_, w)| w),
                );
            }
        }
        let merged = merge_windows(&windows);
        let amount = if trial {
            0
        } else {
            price_line(meter, &merged, &price, currency, start, end)?.amount
        };
        let modified_at = (!windows.is_empty() && merged.modified_us > merged.created_us)
            .then(|| Utc.timestamp_micros(merged.modified_us).single())
            .flatten();
        out.push(SubscriptionMeter::new(
            subscription_meter_id(s, meter),
            s.created_at,
            modified_at,
            meter,
            consumed(meter, &merged),
            merged.credited.max(0),
            amount,
        ));
    }
    Ok(out)
}

/// [`running_usage`] of several subscriptions of one customer, by subscription id: each
/// distinct product and meter read once (one batch each).
pub(crate) async fn running_usage_of(
    state: &AppState,
    customer: &Customer,
    subscriptions: &[&Subscription],
) -> Result<HashMap<uuid::Uuid, Vec<SubscriptionMeter>>, AppError> {
    let mut product_keys: Vec<Vec<u8>> = subscriptions.iter().map(|s| s.product_id.key()).collect();
    product_keys.sort();
    product_keys.dedup();
    let products: HashMap<ProductId, Product> = state
        .store
        .get_many::<Product>(&product_keys)
        .await?
        .into_iter()
        .map(|p| (p.value.id, p.value))
        .collect();
    let mut meter_keys: Vec<Vec<u8>> = products
        .values()
        .flat_map(|p| {
            p.active_metered_prices()
                .filter_map(|price| price.kind.meter_id())
        })
        .map(|m| m.key())
        .collect();
    meter_keys.sort();
    meter_keys.dedup();
    let meters: Vec<Meter> = if meter_keys.is_empty() {
        Vec::new()
    } else {
        state
            .store
            .get_many::<Meter>(&meter_keys)
            .await?
            .into_iter()
            .map(|m| m.value)
            .collect()
    };
    let mut out = HashMap::new();
    for s in subscriptions {
        let Some(product) = products.get(&s.product_id) else {
            continue;
        };
        out.insert(
            s.id.0,
            running_usage(state, s, customer, product, &meters).await?,
        );
    }
    Ok(out)
}

/// The id of a subscription's meter: derived from the subscription and the meter.
pub fn subscription_meter_id(s: &Subscription, meter: &Meter) -> uuid::Uuid {
    derived_uuid(s.id.0, &format!("subscription_meter:{}", meter.id.uuid()))
}

/// The usage line of a metered price for a window (none for another kind of price).
fn price_line(
    meter: &Meter,
    window: &WindowState,
    price: &Price,
    currency: Currency,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Result<UsageLine, AppError> {
    let PriceKind::RecurringMeteredUnit {
        unit_amount,
        cap_amount,
        ..
    } = &price.kind
    else {
        return Err(AppError::internal(format!(
            "price {} is not metered",
            price.id
        )));
    };
    usage_line(
        meter,
        window,
        &price.id,
        unit_amount,
        *cap_amount,
        currency,
        start,
        end,
    )
}

/// The line of one metered price for a closed window.
#[allow(clippy::too_many_arguments)]
fn usage_line(
    meter: &Meter,
    window: &WindowState,
    price_id: &crate::domain::ids::PriceId,
    unit_amount: &crate::domain::product::UnitAmount,
    cap: Option<i64>,
    currency: Currency,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Result<UsageLine, AppError> {
    let units = consumed(meter, window) - window.credited.max(0) as f64;
    let unit = unit_amount.to_string();
    let (amount, capped) = usage_charge(&unit, units, cap).ok_or_else(|| {
        AppError::internal(format!(
            "the usage of meter {} does not price ({units} units at {unit})",
            meter.id
        ))
    })?;
    Ok(UsageLine {
        price_id: *price_id,
        label: usage_label(&meter.name, units, &unit, currency.code(), cap, capped),
        amount,
        start,
        end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{MeterId, OrganizationId, PriceId};
    use crate::domain::meter::{Aggregation, Conjunction, Filter, MeterUnit};
    use crate::domain::product::UnitAmount;
    use tollgate_storage::Agg;

    fn meter(aggregation: Aggregation) -> Meter {
        Meter {
            id: MeterId::new(),
            organization_id: OrganizationId::new(),
            name: "API calls".into(),
            unit: MeterUnit::Scalar,
            custom_label: None,
            custom_multiplier: None,
            filter: Filter {
                conjunction: Conjunction::And,
                clauses: Vec::new(),
            },
            aggregation,
            metadata: Default::default(),
            created_at: Utc::now(),
            modified_at: None,
            archived_at: None,
            aggregating: true,
        }
    }

    fn window(n: i64, sum: f64, credited: i64) -> WindowState {
        WindowState {
            window: 0,
            consumed: Agg {
                n,
                sum,
                min: 0.0,
                max: sum,
            },
            distinct: 0,
            credited,
            rollover_credited: 0,
            created_us: 0,
            modified_us: 0,
        }
    }

    #[test]
    fn a_line_bills_the_consumed_units_less_the_credits() {
        let unit = UnitAmount::parse("0.5").unwrap();
        let (start, end) = (Utc::now(), Utc::now());
        let m = meter(Aggregation::Count);
        let l = usage_line(
            &m,
            &window(1350, 0.0, 100),
            &PriceId::new(),
            &unit,
            None,
            Currency::default(),
            start,
            end,
        )
        .unwrap();
        assert_eq!(l.amount, 625);
        assert_eq!(l.label, "API calls — (1,250 consumed units) × $0.005");
        // More credits than usage: nothing billed.
        let l = usage_line(
            &m,
            &window(10, 0.0, 100),
            &PriceId::new(),
            &unit,
            None,
            Currency::default(),
            start,
            end,
        )
        .unwrap();
        assert_eq!(
            (l.amount, l.label.contains("(0 consumed units)")),
            (0, true)
        );
        // A sum meter bills the sum, capped.
        let m = meter(Aggregation::Sum("tokens".into()));
        let l = usage_line(
            &m,
            &window(3, 90_000.0, 0),
            &PriceId::new(),
            &unit,
            Some(10_000),
            Currency::default(),
            start,
            end,
        )
        .unwrap();
        assert_eq!(l.amount, 10_000);
        assert!(l.label.ends_with(" — Capped at $100.00"), "{}", l.label);
    }

    #[test]
    fn windows_of_both_scopes_merge() {
        let m = merge_windows(&[window(2, 4.0, 10), window(3, 6.0, -5)]);
        assert_eq!((m.consumed.n, m.consumed.sum, m.credited), (5, 10.0, 5));
    }
}
