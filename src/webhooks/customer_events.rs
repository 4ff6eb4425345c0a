//! The events of customers, checkouts' expiry and discounts, and `customer.state_changed`
//! (Polar's `polar-2026.md` §5.4).
//!
//! `customer.state_changed` is rendered for every customer a change touches (the customer
//! itself, the customer of a subscription, an order, a refund or a license key, the buyers
//! of a product whose benefits changed or of the products granting a benefit whose metadata
//! changed) as
//! `GET /v1/customers/{id}/state` answers right after the write; the fan-out sends it only
//! if it differs from the last state it told of that customer (`super::log`), so a change
//! that leaves the state as it was (a key's activation, an order's invoice) tells nothing.

use chrono::{DateTime, Utc};
use tollgate_storage::{Change, Direction, Record};

use super::events::{out, Event};
use crate::api::customer::CustomerView;
use crate::api::webhook::WebhookEventType as T;
use crate::domain::benefit::Benefit;
use crate::domain::customer::Customer;
use crate::domain::discount::Discount;
use crate::domain::ids::{CustomerId, OrganizationId};
use crate::domain::order::{Order, ORDER_OF_PRODUCT};
use crate::domain::product::{Product, PRODUCT_BY_BENEFIT};
use crate::domain::refund::Refund;
use crate::error::ApiError;
use crate::state::AppState;
use tollgate_actors::checkout::{Checkout, CheckoutStatus};
use tollgate_actors::license_key::LicenseKey;
use tollgate_actors::subscription::{Subscription, SUBSCRIPTION_OF_PRODUCT};

/// Where Polar keeps a deleted customer's external id (it clears the column, so that the
/// seller can give the id to a new customer, and shows it from there).
pub const DELETED_EXTERNAL_ID: &str = "__external_id";

/// A customer as the API renders it; a deleted one as Polar's `customer.deleted` does:
/// `metadata` carries `__external_id` (when it had one) and `external_id` is still shown.
pub fn customer_view(c: &Customer) -> CustomerView {
    let mut view = CustomerView::from(c);
    if c.is_deleted() {
        if let Some(external) = &c.external_id {
            view.metadata
                .insert(DELETED_EXTERNAL_ID.into(), external.clone().into());
        }
    }
    view
}

/// `customer.created`, `customer.updated`, or `customer.deleted` when `deleted_at` was set.
pub async fn customer_events(
    change: &Change,
    now: DateTime<Utc>,
    listening: &mut dyn FnMut(OrganizationId) -> bool,
) -> Result<Vec<Event>, ApiError> {
    let Some(after) = change.after::<Customer>()? else {
        return Ok(Vec::new());
    };
    if !listening(after.organization_id) {
        return Ok(Vec::new());
    }
    let before = change.before::<Customer>()?;
    let kind = match &before {
        None => T::CustomerCreated,
        Some(b) if !b.is_deleted() && after.is_deleted() => T::CustomerDeleted,
        Some(_) => T::CustomerUpdated,
    };
    let mut o = out(after.organization_id, Customer::COLLECTION, after.id, now);
    o.push(kind, &customer_view(&after))?;
    Ok(o.events)
}

/// `checkout.created` / `checkout.updated`, and `checkout.expired` when an open checkout
/// became expired (the sweep of checkouts past `expires_at`).
pub async fn checkout_events(
    state: &AppState,
    change: &Change,
    now: DateTime<Utc>,
    listening: &mut dyn FnMut(OrganizationId) -> bool,
) -> Result<Vec<Event>, ApiError> {
    let Some(after) = change.after::<Checkout>()? else {
        return Ok(Vec::new());
    };
    if !listening(after.organization_id) {
        return Ok(Vec::new());
    }
    let before = change.before::<Checkout>()?;
    let view = crate::app::views::checkout_view(state, &after).await?;
    let mut o = out(after.organization_id, Checkout::COLLECTION, after.id, now);
    let Some(before) = before else {
        o.push(T::CheckoutCreated, &view)?;
        return Ok(o.events);
    };
    o.push(T::CheckoutUpdated, &view)?;
    if after.status == CheckoutStatus::Expired && before.status != CheckoutStatus::Expired {
        o.push(T::CheckoutExpired, &view)?;
    }
    Ok(o.events)
}

/// `discount.created`, `discount.updated`, or `discount.deleted` (the discount as it was
/// last shown: Polar's payload has no deletion marker). A redemption is no change of the
/// discount (its counter is not in the feed).
pub async fn discount_events(
    state: &AppState,
    change: &Change,
    now: DateTime<Utc>,
    listening: &mut dyn FnMut(OrganizationId) -> bool,
) -> Result<Vec<Event>, ApiError> {
    let Some(after) = change.after::<Discount>()? else {
        return Ok(Vec::new());
    };
    if !listening(after.organization_id) {
        return Ok(Vec::new());
    }
    let before = change.before::<Discount>()?;
    let kind = match &before {
        None => T::DiscountCreated,
        Some(b) if b.is_deleted() => return Ok(Vec::new()),
        Some(_) if after.is_deleted() => T::DiscountDeleted,
        Some(_) => T::DiscountUpdated,
    };
    let view = crate::app::views::discount_view(state, &after).await?;
    let mut o = out(after.organization_id, Discount::COLLECTION, after.id, now);
    o.push(kind, &view)?;
    Ok(o.events)
}

/// The customers whose state a change may alter.
pub async fn touched_customers(
    state: &AppState,
    change: &Change,
) -> Result<Vec<CustomerId>, ApiError> {
    let mut ids = Vec::new();
    if change.is::<Customer>() {
        ids.extend(change.after::<Customer>()?.map(|c| c.id));
    } else if change.is::<Subscription>() {
        ids.extend(change.before::<Subscription>()?.map(|s| s.customer_id));
        ids.extend(change.after::<Subscription>()?.map(|s| s.customer_id));
    } else if change.is::<Order>() {
        ids.extend(change.after::<Order>()?.map(|o| o.customer_id));
    } else if change.is::<Refund>() {
        if let Some(refund) = change.after::<Refund>()? {
            if let Some(order) = state.store.get::<Order>(&refund.order_id.key()).await? {
                ids.push(order.value.customer_id);
            }
        }
    } else if change.is::<LicenseKey>() {
        ids.extend(change.before::<LicenseKey>()?.map(|k| k.customer_id));
        ids.extend(change.after::<LicenseKey>()?.map(|k| k.customer_id));
    } else if change.is::<Benefit>() {
        // A benefit's metadata is each grant's `benefit_metadata` (a feature flag's
        // payload); its deletion revokes its grants: every customer of a product granting it.
        if let (Some(before), Some(after)) =
            (change.before::<Benefit>()?, change.after::<Benefit>()?)
        {
            if before.metadata != after.metadata || before.deleted_at != after.deleted_at {
                let products = state
                    .store
                    .index_iter(PRODUCT_BY_BENEFIT, &[after.id.key()], Direction::Asc)?
                    .collect()
                    .await?;
                ids.extend(customers_of_products(state, &products).await?);
            }
        }
    } else if change.is::<Product>() {
        // Benefits added to or removed from a product are granted or revoked to everyone
        // who bought it.
        if let (Some(before), Some(after)) =
            (change.before::<Product>()?, change.after::<Product>()?)
        {
            if before.benefit_ids != after.benefit_ids {
                ids.extend(customers_of_products(state, &[after.id.key()]).await?);
            }
        }
    }
    let mut unique = Vec::with_capacity(ids.len());
    for id in ids {
        if !unique.contains(&id) {
            unique.push(id);
        }
    }
    Ok(unique)
}

/// The customers of the orders and subscriptions of these products (id keys).
async fn customers_of_products(
    state: &AppState,
    products: &[Vec<u8>],
) -> Result<Vec<CustomerId>, ApiError> {
    let mut ids = Vec::new();
    let mut orders = state
        .store
        .index_iter(ORDER_OF_PRODUCT, products, Direction::Asc)?;
    while let Some(id) = orders.next().await {
        if let Some(o) = state.store.get::<Order>(&id?).await? {
            ids.push(o.value.customer_id);
        }
    }
    let mut subscriptions =
        state
            .store
            .index_iter(SUBSCRIPTION_OF_PRODUCT, products, Direction::Asc)?;
    while let Some(id) = subscriptions.next().await {
        if let Some(s) = state.store.get::<Subscription>(&id?).await? {
            ids.push(s.value.customer_id);
        }
    }
    Ok(ids)
}

/// `customer.state_changed` for each of `customers`, as its state reads now (the fan-out
/// drops those equal to the last one told).
pub async fn state_events(
    state: &AppState,
    customers: &[CustomerId],
    now: DateTime<Utc>,
    listening: &mut dyn FnMut(OrganizationId) -> bool,
) -> Result<Vec<Event>, ApiError> {
    let mut events = Vec::new();
    for &id in customers {
        let Some(customer) = state.store.get::<Customer>(&id.key()).await? else {
            continue;
        };
        let customer = customer.value;
        if !listening(customer.organization_id) {
            continue;
        }
        let mut view = crate::app::customer_state::state_as_stored(state, &customer).await?;
        view.customer = customer_view(&customer);
        let mut o = out(
            customer.organization_id,
            Customer::COLLECTION,
            customer.id,
            now,
        );
        o.push(T::CustomerStateChanged, &view)?;
        events.extend(o.events);
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deleted_customer_shows_its_external_id_in_metadata_as_polar_does() {
        let now = chrono::Utc::now();
        let mut c = Customer::new(
            CustomerId::new(),
            OrganizationId::new(),
            "jane@example.com".into(),
            now,
        );
        c.external_id = Some("usr_1337".into());
        let live = serde_json::to_value(customer_view(&c)).unwrap();
        assert_eq!(live["metadata"], serde_json::json!({}));
        c.deleted_at = Some(now);
        let gone = serde_json::to_value(customer_view(&c)).unwrap();
        assert_eq!(
            gone["metadata"],
            serde_json::json!({"__external_id": "usr_1337"})
        );
        assert_eq!(gone["external_id"], "usr_1337");
        assert!(gone["deleted_at"].is_string());
        // Without an external id there is nothing to keep.
        c.external_id = None;
        let anonymous = serde_json::to_value(customer_view(&c)).unwrap();
        assert_eq!(anonymous["metadata"], serde_json::json!({}));
    }
}
