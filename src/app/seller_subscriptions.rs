//! Subscriptions a seller starts without a checkout (Polar's `POST /v1/subscriptions/`):
//! a free recurring product given to an existing customer. No order is written and no
//! e-mail is sent; the subscription and the license keys its product's benefits grant are
//! written in one transaction, so the change feed sends `subscription.created`,
//! `subscription.active` and the grants' events as for a purchase.
//!
//! Ending one at once (`DELETE /v1/subscriptions/{id}`) is `crate::app::subscription::revoke`.

use chrono::Utc;
use tollgate_actors::license_key::{generate_key, LicenseKey};
use tollgate_actors::subscription::{Purchase, Subscription};
use tollgate_storage::{Batch, Expect};

use crate::app::access::can_access;
use crate::domain::benefit::Benefit;
use crate::domain::customer::{customer_by_external_id, customer_by_id, Customer};
use crate::domain::grants;
use crate::domain::ids::{LicenseKeyId, SubscriptionId};
use crate::domain::product::{PriceKind, Product};
pub use crate::domain::subscription_change::{NewSubscription, Subscriber};
use crate::error::{AppError, Given};
use crate::field;
use crate::state::AppState;

const NO_PRODUCT: &str = "Product does not exist.";
const NOT_RECURRING: &str = "Product is not a recurring product.";
const NOT_FREE: &str =
    "Product is not free. The customer should go through a checkout to create a paid subscription.";
const NO_CUSTOMER: &str = "Customer does not exist.";
const NO_PRICE_IN_CURRENCY: &str = "Product is not available in the specified currency.";

/// Starts a free subscription to `command.product_id` for the customer, as `subject`
/// (who must reach the product's organization). Refusals are Polar's 422s on
/// `product_id`, `customer_id` or `external_customer_id`.
pub async fn create(
    state: &AppState,
    subject: crate::auth::Subject,
    command: NewSubscription,
) -> Result<Subscription, AppError> {
    state.store.read_barrier().await?;
    let product_given = || Given::from(command.product_id.0);
    let product = match state
        .store
        .get::<Product>(&command.product_id.key())
        .await?
    {
        Some(p) if can_access(state, subject, p.value.organization_id).await? => p.value,
        _ => {
            return Err(AppError::invalid(
                field!["product_id"],
                NO_PRODUCT,
                product_given(),
            ))
        }
    };
    if !product.is_recurring {
        return Err(AppError::invalid(
            field!["product_id"],
            NOT_RECURRING,
            product_given(),
        ));
    }
    // Polar: the subscription is in the organization's default presentment currency, and
    // freeness is judged on the product's recurring price in it.
    let currency =
        crate::app::catalog::organizations::default_currency(state, product.organization_id)
            .await?;
    if !product.sells_in(currency) {
        return Err(AppError::invalid(
            field!["product_id"],
            NO_PRICE_IN_CURRENCY,
            product_given(),
        ));
    }
    let price = product
        .active_prices_in(currency)
        .find(|p| p.kind.is_recurring())
        .cloned()
        .ok_or_else(|| AppError::invalid(field!["product_id"], NOT_RECURRING, product_given()))?;
    let free = match &price.kind {
        PriceKind::RecurringFree { .. } => true,
        PriceKind::RecurringFixed { amount, .. } => *amount == 0,
        _ => false,
    };
    if !free {
        return Err(AppError::invalid(
            field!["product_id"],
            NOT_FREE,
            product_given(),
        ));
    }
    let customer = subscriber(state, &product, &command.customer).await?;
    let benefits = live_benefits(state, &product).await?;

    let now = Utc::now();
    let id = SubscriptionId::new();
    let interval = price
        .kind
        .interval()
        .ok_or_else(|| AppError::invalid(field!["product_id"], NOT_RECURRING, product_given()))?;
    let paid_until =
        grants::first_period_end(interval, product.recurring_interval_count, None, now);
    let mut batch = Batch::new();
    let mut key_ids = Vec::new();
    for grant in grants::purchase(&benefits, now, Some(paid_until)) {
        let key_id = LicenseKeyId::new();
        let key = LicenseKey::from_grant(
            key_id,
            product.organization_id,
            customer.id,
            &grant,
            generate_key(grant.prefix.as_deref()),
            Some(id),
            None,
        );
        batch.put(&key, Expect::Absent)?;
        key_ids.push(key_id);
    }
    let purchase = Purchase {
        organization_id: product.organization_id,
        customer_id: customer.id,
        customer_email: customer.email.clone(),
        product_id: product.id,
        product_name: product.name.clone(),
        price,
        amount: None,
        discount: None,
        checkout_id: None,
        metadata: command.metadata,
        custom_field_data: Default::default(),
        payment_token: None,
        license_key_ids: key_ids,
        interval_count: product.recurring_interval_count,
        trial_end: None,
        seats: None,
    };
    let mut subscription =
        Subscription::new_from_purchase(id, purchase, now).map_err(AppError::internal)?;
    // A free price holds no currency of its own: the subscription keeps the one it was
    // started in.
    subscription.currency = Some(currency.code().to_string());
    batch.put(&subscription, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    Ok(subscription)
}

/// The live customer the command names in the product's organization, else the 422 on the
/// field that named it.
async fn subscriber(
    state: &AppState,
    product: &Product,
    who: &Subscriber,
) -> Result<Customer, AppError> {
    let found = match who {
        Subscriber::Id(id) => customer_by_id(&state.store, *id)
            .await?
            .map(|c| c.value)
            .filter(|c| c.organization_id == product.organization_id),
        Subscriber::External(external) => {
            customer_by_external_id(&state.store, product.organization_id, external)
                .await?
                .map(|c| c.value)
        }
    };
    match found.filter(|c| c.deleted_at.is_none()) {
        Some(c) => Ok(c),
        None => Err(match who {
            Subscriber::Id(id) => {
                AppError::invalid(field!["customer_id"], NO_CUSTOMER, Given::from(id.0))
            }
            Subscriber::External(e) => AppError::invalid(
                field!["external_customer_id"],
                NO_CUSTOMER,
                Given::from(e.as_str()),
            ),
        }),
    }
}

/// The product's benefits that are not deleted, in the product's order.
async fn live_benefits(state: &AppState, product: &Product) -> Result<Vec<Benefit>, AppError> {
    let mut out = Vec::new();
    for id in &product.benefit_ids {
        if let Some(b) = state.store.get::<Benefit>(&id.key()).await? {
            if b.value.deleted_at.is_none() {
                out.push(b.value);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "seller_subscriptions_tests.rs"]
mod tests;
