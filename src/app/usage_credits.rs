//! The credits of the `meter_credit` benefit (`polar-2026.md` §7.5): what its grants
//! write into the customer's usage windows, as Polar's system events.
//!
//! Read from the change feed (the fan-out calls [`apply`] for every change, after it is
//! durable), following the grants the webhooks derive:
//! * a purchase grants (a one-time order, a started subscription): `meter.credited`
//!   `{meter_id, units, rollover}`;
//! * a paid renewal cycles the grant: the period's window closes (with the renewal's own
//!   token, so a window the usage billing already closed is not closed twice),
//!   `meter.reset`, the rolled-over units if the benefit rolls over (what is left of the
//!   credits, at most the credits that were themselves rolled over or granted to roll
//!   over: Polar's rule), then the period's new units;
//! * an ended subscription revokes: the units credited last, negated.
//!
//! Every event's external id is derived from the grant and the step, so a replayed feed
//! entry writes nothing twice.
//!
//! Left to later work: a refund that revokes an order's benefits takes no credit back;
//! a plan change keeps the credits of the period.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use tollgate_storage::{Change, WindowState};

use crate::app::usage::customer_meters::{consumed, merge_windows, scopes_of};
use crate::app::usage::{ingest::store_events, keys};
use crate::domain::benefit::{Benefit, BenefitProperties};
use crate::domain::customer::Customer;
use crate::domain::ids::{BenefitId, CustomerId, EventId, MeterId, OrganizationId, ProductId};
use crate::domain::meter::Meter;
use crate::domain::order::Order;
use crate::domain::product::Product;
use crate::domain::usage_event::{EventMetadata, EventSource, EventValue, UsageEvent};
use crate::error::AppError;
use crate::state::AppState;
use tollgate_actors::ids::derived_uuid;
use tollgate_actors::subscription::Subscription;

/// A `meter_credit` benefit of a product: its id, meter, units and rollover.
struct Credit {
    benefit: BenefitId,
    meter: MeterId,
    units: i64,
    rollover: bool,
}

/// What happened to a purchase's grants.
enum Step {
    Granted,
    /// Its subscription was renewed to this cycle.
    Cycled(u32),
    Revoked,
}

/// Writes the credits `change` calls for (nothing for most changes).
pub async fn apply(state: &AppState, change: &Change) -> Result<(), AppError> {
    if change.is::<Subscription>() {
        let (before, after) = (
            change.before::<Subscription>()?,
            change.after::<Subscription>()?,
        );
        let Some(after) = after else {
            return Ok(());
        };
        let step = match &before {
            None => Some(Step::Granted),
            Some(b) if after.ended_at.is_some() && b.ended_at.is_none() => Some(Step::Revoked),
            Some(b) if after.ended_at.is_none() && after.cycles > b.cycles => {
                Some(Step::Cycled(after.cycles))
            }
            _ => None,
        };
        if let Some(step) = step {
            let source = format!("subscription:{}", after.id);
            let token = format!("renewal:{}:{}", after.id, after.cycles).into_bytes();
            grant_step(
                state,
                &source,
                &token,
                after.organization_id,
                after.customer_id,
                after.product_id,
                step,
            )
            .await?;
        }
    } else if change.is::<Order>() {
        // A one-time purchase grants its benefits itself (a subscription's come with it).
        if let (None, Some(order)) = (change.before::<Order>()?, change.after::<Order>()?) {
            if order.subscription_id.is_none() && order.status.was_paid() {
                let source = format!("order:{}", order.id);
                grant_step(
                    state,
                    &source,
                    &[],
                    order.organization_id,
                    order.customer_id,
                    order.product_id,
                    Step::Granted,
                )
                .await?;
            }
        }
    }
    Ok(())
}

/// The `meter_credit` benefits of a product.
async fn credits_of(state: &AppState, product: ProductId) -> Result<Vec<Credit>, AppError> {
    let Some(product) = state.store.get::<Product>(&product.key()).await? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for id in &product.value.benefit_ids {
        let Some(b) = state.store.get::<Benefit>(&id.key()).await? else {
            continue;
        };
        if b.value.deleted_at.is_some() {
            continue;
        }
        if let BenefitProperties::MeterCredit(p) = &b.value.properties {
            out.push(Credit {
                benefit: *id,
                meter: p.meter_id,
                units: i64::from(p.units),
                rollover: p.rollover,
            });
        }
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
async fn grant_step(
    state: &AppState,
    source: &str,
    token: &[u8],
    org: OrganizationId,
    customer: CustomerId,
    product: ProductId,
    step: Step,
) -> Result<(), AppError> {
    let credits = credits_of(state, product).await?;
    if credits.is_empty() {
        return Ok(());
    }
    let Some(customer) = state.store.get::<Customer>(&customer.key()).await? else {
        return Ok(());
    };
    let customer = customer.value;
    let now = state.now();
    let mut events = Vec::new();
    for c in credits {
        let tag = format!("credit:{source}:{}", c.benefit);
        match step {
            Step::Granted => {
                events.push(credited(
                    org,
                    &customer,
                    &format!("{tag}:granted"),
                    &c,
                    c.units,
                    c.rollover,
                    now,
                ));
            }
            Step::Revoked => {
                events.push(credited(
                    org,
                    &customer,
                    &format!("{tag}:revoked"),
                    &c,
                    -c.units,
                    c.rollover,
                    now,
                ));
            }
            Step::Cycled(cycle) => {
                let Some(meter) = state.store.get::<Meter>(&c.meter.key()).await? else {
                    continue;
                };
                let closed = close(state, &meter.value, &customer, token).await?;
                events.push(system(
                    org,
                    &customer,
                    &format!("{tag}:reset:{cycle}"),
                    "meter.reset",
                    BTreeMap::from([(
                        "meter_id".to_string(),
                        EventValue::Str(c.meter.to_string()),
                    )]),
                    now,
                ));
                let rolled = rollover_units(&meter.value, &closed);
                if c.rollover && rolled > 0 {
                    events.push(credited(
                        org,
                        &customer,
                        &format!("{tag}:rollover:{cycle}"),
                        &c,
                        rolled,
                        true,
                        now,
                    ));
                }
                events.push(credited(
                    org,
                    &customer,
                    &format!("{tag}:cycle:{cycle}"),
                    &c,
                    c.units,
                    c.rollover,
                    now,
                ));
            }
        }
    }
    store_events(state, events).await?;
    Ok(())
}

/// Closes the customer's windows of `meter` with `token` (the renewal's), merged.
async fn close(
    state: &AppState,
    meter: &Meter,
    customer: &Customer,
    token: &[u8],
) -> Result<WindowState, AppError> {
    let now = state.now().timestamp_micros();
    let mut closed = Vec::new();
    for scope in scopes_of(customer) {
        let key = keys::window(meter.organization_id, meter.id, &scope);
        closed.push(state.store.close_window(&key, token, now).await?);
    }
    Ok(merge_windows(&closed))
}

/// Polar's rollover of a closed window: what is left of its credits, whole units, at most
/// the credits granted to roll over.
fn rollover_units(meter: &Meter, closed: &WindowState) -> i64 {
    let balance = closed.credited as f64 - consumed(meter, closed);
    let left = if balance.is_finite() {
        balance.floor() as i64
    } else {
        0
    };
    left.min(closed.rollover_credited).max(0)
}

fn credited(
    org: OrganizationId,
    customer: &Customer,
    external_id: &str,
    c: &Credit,
    units: i64,
    rollover: bool,
    now: DateTime<Utc>,
) -> UsageEvent {
    system(
        org,
        customer,
        external_id,
        "meter.credited",
        BTreeMap::from([
            ("meter_id".to_string(), EventValue::Str(c.meter.to_string())),
            ("units".to_string(), EventValue::Int(units)),
            ("rollover".to_string(), EventValue::Bool(rollover)),
        ]),
        now,
    )
}

fn system(
    org: OrganizationId,
    customer: &Customer,
    external_id: &str,
    name: &str,
    values: BTreeMap<String, EventValue>,
    now: DateTime<Utc>,
) -> UsageEvent {
    UsageEvent {
        id: EventId(derived_uuid(org.uuid(), &format!("event:{external_id}"))),
        organization_id: org,
        name: name.into(),
        source: EventSource::System,
        timestamp: now,
        ingested_at: now,
        customer_id: Some(customer.id),
        external_customer_id: None,
        external_member_id: None,
        external_id: Some(external_id.into()),
        parent_id: None,
        metadata: EventMetadata {
            values,
            cost: None,
            llm: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::meter::{Aggregation, Conjunction, Filter, MeterUnit};
    use tollgate_storage::Agg;

    fn meter() -> Meter {
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
            aggregation: Aggregation::Count,
            metadata: Default::default(),
            created_at: Utc::now(),
            modified_at: None,
            archived_at: None,
            aggregating: true,
        }
    }

    fn closed(n: i64, credited: i64, rollover_credited: i64) -> WindowState {
        WindowState {
            window: 1,
            consumed: Agg {
                n,
                sum: 0.0,
                min: 0.0,
                max: 0.0,
            },
            distinct: 0,
            credited,
            rollover_credited,
            created_us: 0,
            modified_us: 0,
        }
    }

    #[test]
    fn what_is_left_rolls_over_up_to_the_rollover_credits() {
        let m = meter();
        assert_eq!(rollover_units(&m, &closed(30, 100, 100)), 70);
        assert_eq!(rollover_units(&m, &closed(30, 100, 50)), 50);
        assert_eq!(rollover_units(&m, &closed(130, 100, 100)), 0);
        assert_eq!(rollover_units(&m, &closed(0, 100, 0)), 0);
    }
}
