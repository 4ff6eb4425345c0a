//! What happened: the webhook events a change-feed entry stands for, each with its body
//! rendered exactly as the API renders the resource.
//!
//! A change carries the record before and after one atomic write; comparing the two says
//! which events it is (a subscription whose `cancel_at_period_end` went up was canceled).
//! Related records (a subscription's product, a key's customer) are read as they are when
//! the event is rendered, right after the write.

use chrono::{DateTime, Utc};
use serde::Serialize;
use tollgate_storage::{Change, Direction, Record};

use super::customer_events::{checkout_events, customer_events, discount_events, state_events};
use crate::api::benefit::BenefitView;
use crate::api::customer::CustomerView;
use crate::api::license_key::{LicenseKeyActivationRead, LicenseKeyRead};
use crate::api::organization::OrganizationView;
use crate::api::webhook::{
    BenefitGrantProperties, BenefitGrantView, WebhookEventType as T, WebhookPayload,
};
use crate::domain::benefit::{Benefit, BenefitType};
use crate::domain::benefit_grant::GrantSource;
use crate::domain::customer::Customer;
use crate::domain::discount::Discount;
use crate::domain::ids::{
    BenefitId, CustomerId, OrderId, OrganizationId, ProductId, SubscriptionId,
};
use crate::domain::order::{Order, OrderStatus};
use crate::domain::organization::Organization;
use crate::domain::product::Product;
use crate::domain::webhook::{LimitReached, LIMIT_REACHED};
use crate::error::ApiError;
use crate::state::AppState;
use tollgate_actors::checkout::Checkout;
use tollgate_actors::license_key::{KeyStatus, LicenseKey, LICENSE_KEY_BY_CUSTOMER};
use tollgate_actors::subscription::{Subscription, SubscriptionStatus};

/// One event, rendered.
#[derive(Debug, Clone)]
pub struct Event {
    pub event_type: T,
    pub organization_id: OrganizationId,
    /// `collection:id`: events of one resource reach an endpoint in order.
    pub resource: String,
    /// The `raw` body: `{"type", "timestamp", "data"}`.
    pub body: serde_json::Value,
}

pub(super) struct Out {
    pub(super) events: Vec<Event>,
    organization_id: OrganizationId,
    now: DateTime<Utc>,
    resource: String,
}

impl Out {
    pub(super) fn push<D: Serialize>(&mut self, event_type: T, data: &D) -> Result<(), ApiError> {
        self.push_for(event_type, self.resource.clone(), data)
    }

    fn push_for<D: Serialize>(
        &mut self,
        event_type: T,
        resource: String,
        data: &D,
    ) -> Result<(), ApiError> {
        let body = serde_json::to_value(WebhookPayload {
            event_type: event_type.as_str(),
            timestamp: self.now,
            data,
        })
        .map_err(|e| ApiError::internal(format!("rendering {}: {e}", event_type.as_str())))?;
        self.events.push(Event {
            event_type,
            organization_id: self.organization_id,
            resource,
            body,
        });
        Ok(())
    }
}

pub(super) fn out(
    organization_id: OrganizationId,
    collection: &str,
    id: impl std::fmt::Display,
    now: DateTime<Utc>,
) -> Out {
    Out {
        events: Vec::new(),
        organization_id,
        now,
        resource: format!("{collection}:{id}"),
    }
}

/// `created` or `updated` of a record whose changes tell nothing more (organizations have
/// no `created`: nobody can listen before one exists).
async fn created_or_updated<R: Record, D: Serialize, F>(
    change: &Change,
    now: DateTime<Utc>,
    listening: &mut dyn FnMut(OrganizationId) -> bool,
    kinds: (Option<T>, T),
    owner: impl Fn(&R) -> (OrganizationId, String),
    render: impl FnOnce(R) -> F,
) -> Result<Vec<Event>, ApiError>
where
    F: std::future::Future<Output = Result<D, ApiError>>,
{
    let Some(after) = change.after::<R>()? else {
        return Ok(Vec::new());
    };
    let kind = match (change.before::<R>()?, kinds) {
        (None, (Some(created), _)) => created,
        (None, (None, _)) => return Ok(Vec::new()),
        (Some(_), (_, updated)) => updated,
    };
    let (organization_id, id) = owner(&after);
    if !listening(organization_id) {
        return Ok(Vec::new());
    }
    let mut o = out(organization_id, R::COLLECTION, id, now);
    o.push(kind, &render(after).await?)?;
    Ok(o.events)
}

/// The events `change` stands for, in the order they happened (none for a change no
/// event describes, or of an organization `listening` says nobody listens to: nothing is
/// rendered for nobody), then `customer.state_changed` for each of `states` (the
/// customers it touches whose state the caller wants told after this change: see
/// [`super::dispatch`]).
pub async fn events_of(
    state: &AppState,
    change: &Change,
    states: &[CustomerId],
    listening: &mut dyn FnMut(OrganizationId) -> bool,
) -> Vec<Event> {
    let now = state.now();
    // A record that cannot be rendered (its product vanished) must not cost the customers
    // their states, nor a state the change its own events.
    let mut events = match resource_events(state, change, now, listening).await {
        Ok(events) => events,
        Err(e) => {
            tracing::warn!(collection = %change.collection, error = %e, "cannot render a webhook event; skipped");
            Vec::new()
        }
    };
    match state_events(state, states, now, listening).await {
        Ok(states) => events.extend(states),
        Err(e) => {
            tracing::warn!(collection = %change.collection, error = %e, "cannot render a customer state; skipped")
        }
    }
    events
}

/// The events of the record `change` is about.
async fn resource_events(
    state: &AppState,
    change: &Change,
    now: DateTime<Utc>,
    listening: &mut dyn FnMut(OrganizationId) -> bool,
) -> Result<Vec<Event>, ApiError> {
    if change.collection == LIMIT_REACHED {
        return limit_reached(state, change, now, listening).await;
    }
    if change.is::<Organization>() {
        return created_or_updated(
            change,
            now,
            listening,
            (None, T::OrganizationUpdated),
            |o: &Organization| (o.id, o.id.to_string()),
            |o| async move { Ok(OrganizationView::from(&o)) },
        )
        .await;
    }
    if change.is::<Product>() {
        return created_or_updated(
            change,
            now,
            listening,
            (Some(T::ProductCreated), T::ProductUpdated),
            |p: &Product| (p.organization_id, p.id.to_string()),
            |p| async move { Ok(crate::app::views::product_view(state, &p).await?) },
        )
        .await;
    }
    if change.is::<Benefit>() {
        return created_or_updated(
            change,
            now,
            listening,
            (Some(T::BenefitCreated), T::BenefitUpdated),
            |b: &Benefit| (b.organization_id, b.id.to_string()),
            |b| async move { Ok(BenefitView::from(&b)) },
        )
        .await;
    }
    if change.is::<Customer>() {
        return customer_events(change, now, listening).await;
    }
    if change.is::<Checkout>() {
        return checkout_events(state, change, now, listening).await;
    }
    if change.is::<Discount>() {
        return discount_events(state, change, now, listening).await;
    }
    if change.is::<crate::domain::refund::Refund>() {
        return refund_events(state, change, now, listening).await;
    }
    if change.is::<Order>() {
        return order_events(
            state,
            change.before::<Order>()?,
            change.after::<Order>()?,
            now,
            listening,
        )
        .await;
    }
    if change.is::<Subscription>() {
        return subscription_events(
            state,
            change.before::<Subscription>()?,
            change.after::<Subscription>()?,
            now,
            listening,
        )
        .await;
    }
    if change.is::<LicenseKey>() {
        return license_key_events(
            state,
            change.before::<LicenseKey>()?,
            change.after::<LicenseKey>()?,
            now,
            listening,
        )
        .await;
    }
    Ok(Vec::new())
}

/// `refund.created` / `refund.updated`; a refund that succeeded with `revoke_benefits`
/// also revokes its order's grants (`benefit_grant.revoked`).
async fn refund_events(
    state: &AppState,
    change: &Change,
    now: DateTime<Utc>,
    listening: &mut dyn FnMut(OrganizationId) -> bool,
) -> Result<Vec<Event>, ApiError> {
    use crate::domain::refund::{Refund, RefundStatus};
    let Some(after) = change.after::<Refund>()? else {
        return Ok(Vec::new());
    };
    if !listening(after.organization_id) {
        return Ok(Vec::new());
    }
    let before = change.before::<Refund>()?;
    let mut o = out(after.organization_id, Refund::COLLECTION, after.id, now);
    let kind = if before.is_none() {
        T::RefundCreated
    } else {
        T::RefundUpdated
    };
    o.push(kind, &crate::api::refund::RefundView::from(&after))?;
    let succeeded_now = after.status == RefundStatus::Succeeded
        && before
            .as_ref()
            .is_none_or(|b| b.status != RefundStatus::Succeeded);
    if succeeded_now && after.revoke_benefits {
        if let Some(order) = state.store.get::<Order>(&after.order_id.key()).await? {
            let grantor = Grantor {
                purchase: Purchase::Order(order.value.id),
                product_id: order.value.product_id,
                customer_id: order.value.customer_id,
                granted_at: order.value.created_at,
            };
            grants(state, &mut o, &grantor, GrantChange::Revoked(now)).await?;
        }
    }
    Ok(o.events)
}

async fn order_events(
    state: &AppState,
    before: Option<Order>,
    after: Option<Order>,
    now: DateTime<Utc>,
    listening: &mut dyn FnMut(OrganizationId) -> bool,
) -> Result<Vec<Event>, ApiError> {
    let Some(after) = after else {
        return Ok(Vec::new());
    };
    if !listening(after.organization_id) {
        return Ok(Vec::new());
    }
    let view = crate::app::views::order_view(state, &after).await?;
    let mut o = out(after.organization_id, "order", after.id, now);
    match before {
        None => {
            o.push(T::OrderCreated, &view)?;
            // A pending renewal (declined) is paid later, if ever.
            if after.status == OrderStatus::Paid {
                o.push(T::OrderPaid, &view)?;
            }
            // A one-time purchase grants its benefits itself (a subscription's grants
            // come with the subscription).
            if after.subscription_id.is_none() {
                let grantor = Grantor {
                    purchase: Purchase::Order(after.id),
                    product_id: after.product_id,
                    customer_id: after.customer_id,
                    granted_at: after.created_at,
                };
                grants(state, &mut o, &grantor, GrantChange::Created).await?;
            }
        }
        Some(before) => {
            o.push(T::OrderUpdated, &view)?;
            // A pending renewal paid by a retry is paid now.
            if after.status.was_paid() && !before.status.was_paid() {
                o.push(T::OrderPaid, &view)?;
            }
            let refunded = |s: OrderStatus| {
                matches!(s, OrderStatus::Refunded | OrderStatus::PartiallyRefunded)
            };
            if after.refunded_amount > before.refunded_amount
                || (refunded(after.status) && !refunded(before.status))
            {
                o.push(T::OrderRefunded, &view)?;
            }
        }
    }
    Ok(o.events)
}

async fn subscription_events(
    state: &AppState,
    before: Option<Subscription>,
    after: Option<Subscription>,
    now: DateTime<Utc>,
    listening: &mut dyn FnMut(OrganizationId) -> bool,
) -> Result<Vec<Event>, ApiError> {
    let Some(after) = after else {
        return Ok(Vec::new());
    };
    if !listening(after.organization_id) {
        return Ok(Vec::new());
    }
    let view = crate::app::views::subscription_view(state, &after).await?;
    let mut o = out(after.organization_id, "subscription", after.id, now);
    let active = |s: &Subscription| {
        matches!(
            s.status,
            SubscriptionStatus::Active | SubscriptionStatus::Trialing
        )
    };
    let grantor = Grantor {
        purchase: Purchase::Subscription(after.id),
        product_id: after.product_id,
        customer_id: after.customer_id,
        granted_at: after.created_at,
    };
    match before {
        None => {
            o.push(T::SubscriptionCreated, &view)?;
            if active(&after) {
                o.push(T::SubscriptionActive, &view)?;
            }
            grants(state, &mut o, &grantor, GrantChange::Created).await?;
        }
        Some(before) => {
            // A trial's reminder is bookkeeping (its mail is the event): nothing to tell.
            let mut reminded = before.clone();
            reminded.trial_reminded_for = after.trial_reminded_for;
            if reminded == after {
                return Ok(Vec::new());
            }
            o.push(T::SubscriptionUpdated, &view)?;
            if active(&after) && !active(&before) {
                o.push(T::SubscriptionActive, &view)?;
            }
            // A declined renewal: once when the status changes, not at each retry.
            if after.status == SubscriptionStatus::PastDue
                && before.status != SubscriptionStatus::PastDue
            {
                o.push(T::SubscriptionPastDue, &view)?;
            }
            let canceled = |s: &Subscription| {
                s.cancel_at_period_end || s.status == SubscriptionStatus::Canceled
            };
            if canceled(&after) && !canceled(&before) {
                o.push(T::SubscriptionCanceled, &view)?;
            }
            if before.cancel_at_period_end
                && !after.cancel_at_period_end
                && after.status != SubscriptionStatus::Canceled
            {
                o.push(T::SubscriptionUncanceled, &view)?;
            }
            if after.ended_at.is_some() && before.ended_at.is_none() {
                o.push(T::SubscriptionRevoked, &view)?;
                let at = after.ended_at.unwrap_or(now);
                grants(state, &mut o, &grantor, GrantChange::Revoked(at)).await?;
            } else if after.ended_at.is_none() && after.product_id != before.product_id {
                // A plan change: the benefits only the old product granted are revoked,
                // those only the new one grants are granted (Polar's outdated grants).
                let benefits = |id: ProductId| async move {
                    Ok::<_, ApiError>(
                        state
                            .store
                            .get::<Product>(&id.key())
                            .await?
                            .map(|p| p.value.benefit_ids)
                            .unwrap_or_default(),
                    )
                };
                let (old, new) = (
                    benefits(before.product_id).await?,
                    benefits(after.product_id).await?,
                );
                let old_grantor = Grantor {
                    product_id: before.product_id,
                    ..grantor
                };
                grants_except(state, &mut o, &old_grantor, GrantChange::Revoked(now), &new).await?;
                grants_except(state, &mut o, &grantor, GrantChange::Created, &old).await?;
            } else if after.ended_at.is_none() {
                // A paid renewal (`cycles` counts them) starts a new period: Polar's
                // `subscription.cycled`, then `benefit_grant.cycled` per grant.
                let cycled = after.cycles > before.cycles;
                if cycled {
                    o.push(T::SubscriptionCycled, &view)?;
                }
                if after.current_period_start != before.current_period_start {
                    // A renewal grants the benefits for the new period.
                    grants(state, &mut o, &grantor, GrantChange::Renewed(now)).await?;
                }
                if cycled {
                    grants(state, &mut o, &grantor, GrantChange::Cycled(now)).await?;
                }
            }
        }
    }
    Ok(o.events)
}

#[derive(Clone, Copy)]
enum Purchase {
    Order(OrderId),
    Subscription(SubscriptionId),
}

/// A purchase as its benefit grants show it.
#[derive(Clone, Copy)]
struct Grantor {
    purchase: Purchase,
    product_id: crate::domain::ids::ProductId,
    customer_id: crate::domain::ids::CustomerId,
    granted_at: DateTime<Utc>,
}

/// What happened to a purchase's grants.
#[derive(Clone, Copy)]
enum GrantChange {
    Created,
    /// Granted again for a new period, at this time (`benefit_grant.updated`).
    Renewed(DateTime<Utc>),
    /// Renewed with its subscription's paid period, at this time (`benefit_grant.cycled`).
    Cycled(DateTime<Utc>),
    Revoked(DateTime<Utc>),
}

/// `benefit_grant.created`, `.updated`, `.cycled` or `.revoked` for each benefit of the
/// product a purchase granted.
async fn grants(
    state: &AppState,
    o: &mut Out,
    grantor: &Grantor,
    change: GrantChange,
) -> Result<(), ApiError> {
    grants_except(state, o, grantor, change, &[]).await
}

/// [`grants`] of the product's benefits but those in `except` (a plan change tells only
/// the benefits one product grants and the other does not).
async fn grants_except(
    state: &AppState,
    o: &mut Out,
    grantor: &Grantor,
    change: GrantChange,
    except: &[BenefitId],
) -> Result<(), ApiError> {
    let Grantor {
        purchase,
        product_id,
        customer_id,
        granted_at,
    } = *grantor;
    let (event_type, modified_at, revoked_at) = match change {
        GrantChange::Created => (T::BenefitGrantCreated, None, None),
        GrantChange::Renewed(at) => (T::BenefitGrantUpdated, Some(at), None),
        GrantChange::Cycled(at) => (T::BenefitGrantCycled, Some(at), None),
        GrantChange::Revoked(at) => (T::BenefitGrantRevoked, Some(at), Some(at)),
    };
    let Some(product) = state.store.get::<Product>(&product_id.key()).await? else {
        return Ok(());
    };
    let Some(customer) = state.store.get::<Customer>(&customer_id.key()).await? else {
        return Ok(());
    };
    let customer = customer.value;
    let (parent, subscription_id, order_id) = match purchase {
        Purchase::Order(id) => (id.uuid(), None, Some(id.uuid())),
        Purchase::Subscription(id) => (id.uuid(), Some(id.uuid()), None),
    };
    for benefit_id in product
        .value
        .benefit_ids
        .iter()
        .filter(|b| !except.contains(b))
    {
        let Some(benefit) = state.store.get::<Benefit>(&benefit_id.key()).await? else {
            continue;
        };
        let benefit = benefit.value;
        let mut properties = BenefitGrantProperties::default();
        if benefit.kind() == BenefitType::LicenseKeys {
            if let Some(key) = granted_key(state, &customer, *benefit_id, purchase).await? {
                properties.license_key_id = Some(key.id.uuid());
                properties.display_key = Some(key.display_key());
            }
        }
        if benefit.kind() == BenefitType::Downloadables && revoked_at.is_none() {
            // The files the grant gives now, as the grant lists derive them.
            let source = match purchase {
                Purchase::Order(id) => GrantSource::Order(id),
                Purchase::Subscription(id) => GrantSource::Subscription(id),
            };
            let grant = crate::domain::benefit_grant::BenefitGrant::new(
                customer.organization_id,
                customer.id,
                *benefit_id,
                source,
                granted_at,
                None,
            );
            let files = crate::app::benefit_grants::granted_files(state, &grant, &benefit).await?;
            properties = properties.with_files(files.as_deref());
        }
        let id = crate::domain::benefit_grant::grant_id(parent, *benefit_id);
        let view = BenefitGrantView {
            created_at: granted_at,
            modified_at,
            id,
            granted_at: revoked_at.is_none().then_some(granted_at),
            is_granted: revoked_at.is_none(),
            revoked_at,
            is_revoked: revoked_at.is_some(),
            subscription_id,
            order_id,
            customer_id: customer.id.uuid(),
            user_id: customer.id.uuid(),
            benefit_id: benefit_id.uuid(),
            customer: CustomerView::from(&customer),
            // Polar's cycle carries the properties from before it (a cycle keeps them).
            previous_properties: matches!(change, GrantChange::Cycled(_))
                .then(|| properties.clone()),
            properties,
            benefit: BenefitView::from(&benefit),
        };
        o.push_for(event_type, format!("benefit_grant:{id}"), &view)?;
    }
    Ok(())
}

/// The key a purchase's license-key benefit created, if any.
async fn granted_key(
    state: &AppState,
    customer: &Customer,
    benefit_id: BenefitId,
    purchase: Purchase,
) -> Result<Option<LicenseKey>, ApiError> {
    let tenants = [customer.id.key()];
    let mut ids = state
        .store
        .index_iter(LICENSE_KEY_BY_CUSTOMER, &tenants, Direction::Desc)?;
    while let Some(id) = ids.next().await {
        let Some(key) = state.store.get::<LicenseKey>(&id?).await? else {
            continue;
        };
        let key = key.value;
        let from_purchase = match purchase {
            Purchase::Order(id) => key.order_id == Some(id),
            Purchase::Subscription(id) => key.subscription_id == Some(id),
        };
        if key.benefit_id == benefit_id && from_purchase {
            return Ok(Some(key));
        }
    }
    Ok(None)
}

async fn license_key_events(
    state: &AppState,
    before: Option<LicenseKey>,
    after: Option<LicenseKey>,
    now: DateTime<Utc>,
    listening: &mut dyn FnMut(OrganizationId) -> bool,
) -> Result<Vec<Event>, ApiError> {
    let Some(after) = after else {
        return Ok(Vec::new());
    };
    if !listening(after.organization_id) {
        return Ok(Vec::new());
    }
    let customer = crate::app::views::key_customer(state, &after).await?;
    let view = LicenseKeyRead::new(&after, &customer);
    let mut o = out(after.organization_id, "license_key", after.id, now);
    let Some(before) = before else {
        o.push(T::LicenseKeyCreated, &view)?;
        return Ok(o.events);
    };
    let live = |k: &LicenseKey| -> Vec<crate::domain::ids::ActivationId> {
        k.activations
            .iter()
            .filter(|a| a.deleted_at.is_none())
            .map(|a| a.id)
            .collect()
    };
    let (was, is) = (live(&before), live(&after));
    for a in after
        .activations
        .iter()
        .filter(|a| a.deleted_at.is_none() && !was.contains(&a.id))
    {
        o.push(
            T::LicenseKeyActivated,
            &LicenseKeyActivationRead::new(&after, a, &customer),
        )?;
    }
    for id in was.iter().filter(|id| !is.contains(id)) {
        let gone = after
            .activations
            .iter()
            .chain(before.activations.iter())
            .find(|a| a.id == *id);
        if let Some(a) = gone {
            o.push(
                T::LicenseKeyDeactivated,
                &LicenseKeyActivationRead::new(&after, a, &customer),
            )?;
        }
    }
    let revoked = after.status == KeyStatus::Revoked && before.status != KeyStatus::Revoked;
    if revoked {
        o.push(T::LicenseKeyRevoked, &view)?;
    }
    let settings_changed = (after.status != before.status && !revoked)
        || after.expires_at != before.expires_at
        || after.limit_activations != before.limit_activations
        || after.limit_usage != before.limit_usage
        || after.customer_id != before.customer_id
        // A rotation: the key has a new value.
        || after.key != before.key;
    if settings_changed {
        o.push(T::LicenseKeyUpdated, &view)?;
    }
    Ok(o.events)
}

async fn limit_reached(
    state: &AppState,
    change: &Change,
    now: DateTime<Utc>,
    listening: &mut dyn FnMut(OrganizationId) -> bool,
) -> Result<Vec<Event>, ApiError> {
    let Some(payload) = change.notice() else {
        return Ok(Vec::new());
    };
    let notice: LimitReached = serde_json::from_slice(payload)
        .map_err(|e| ApiError::internal(format!("limit notice: {e}")))?;
    let Some(key) = state
        .store
        .get::<LicenseKey>(&notice.license_key_id.key())
        .await?
    else {
        return Ok(Vec::new());
    };
    let key = key.value;
    if !listening(key.organization_id) {
        return Ok(Vec::new());
    }
    let customer = crate::app::views::key_customer(state, &key).await?;
    let mut o = out(key.organization_id, "license_key", key.id, now);
    o.push(
        T::LicenseKeyLimitReached,
        &LicenseKeyRead::new(&key, &customer),
    )?;
    Ok(o.events)
}

/// Whether a record type's changes can be events (the dispatcher skips the rest cheaply).
pub fn is_event_source(collection: &str) -> bool {
    collection == LIMIT_REACHED
        || [
            Organization::COLLECTION,
            Product::COLLECTION,
            Benefit::COLLECTION,
            Customer::COLLECTION,
            Checkout::COLLECTION,
            Discount::COLLECTION,
            Order::COLLECTION,
            Subscription::COLLECTION,
            LicenseKey::COLLECTION,
            <crate::domain::refund::Refund as Record>::COLLECTION,
        ]
        .contains(&collection)
}
