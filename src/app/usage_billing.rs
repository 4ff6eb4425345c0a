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
//! Left to later work: the final usage of a subscription that ends at its period end is
//! not billed (Polar writes a last order of the metered lines).

use chrono::{DateTime, Utc};
use tollgate_storage::WindowState;

use crate::app::usage::customer_meters::{consumed, merge_windows, scopes_of};
use crate::app::usage::keys;
use crate::domain::currency::Currency;
use crate::domain::customer::Customer;
use crate::domain::meter::Meter;
use crate::domain::metered::{usage_charge, usage_label};
use crate::domain::order::UsageLine;
use crate::domain::product::{PriceKind, Product};
use crate::error::AppError;
use crate::state::AppState;
use tollgate_actors::subscription::Subscription;

/// The token that closes a subscription's usage windows for the renewal to `cycle`.
fn close_token(s: &Subscription, cycle: u32) -> Vec<u8> {
    format!("renewal:{}:{cycle}", s.id).into_bytes()
}

/// The usage lines of `s`'s renewal to period `cycle` (the charge that ends its current
/// period), closing the period's usage windows: empty for a product without metered
/// prices.
pub(crate) async fn usage_lines(
    state: &AppState,
    s: &Subscription,
    cycle: u32,
) -> Result<Vec<UsageLine>, AppError> {
    let Some(product) = state.store.get::<Product>(&s.product_id.key()).await? else {
        return Ok(Vec::new());
    };
    let product = product.value;
    let currency = s
        .currency
        .as_deref()
        .and_then(Currency::from_code)
        .unwrap_or_default();
    let metered: Vec<_> = product
        .active_metered_prices()
        .filter(|p| product.currency_of(p) == currency)
        .cloned()
        .collect();
    if metered.is_empty() {
        return Ok(Vec::new());
    }
    let Some(customer) = state.store.get::<Customer>(&s.customer_id.key()).await? else {
        return Ok(Vec::new());
    };
    let customer = customer.value;
    let token = close_token(s, cycle);
    let now = state.now();
    let start = s.current_period_start;
    let end: DateTime<Utc> = s.current_period_end.unwrap_or(now);
    // The ending period was the trial: its usage is not billed.
    let trial = s.trial_end.is_some_and(|t| t >= end);
    let mut lines = Vec::new();
    for price in metered {
        let PriceKind::RecurringMeteredUnit {
            meter_id,
            unit_amount,
            cap_amount,
            ..
        } = &price.kind
        else {
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
        let line = usage_line(
            &meter,
            &merge_windows(&windows),
            &price.id,
            unit_amount,
            *cap_amount,
            currency,
            start,
            end,
        )?;
        lines.push(line);
    }
    Ok(lines)
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
