//! After a sale: subscriptions, license keys, and checkout links.

use serde::Deserialize;
use serde_json::{json, Value};
use tollgate_actors::checkout::Checkout;
use tollgate_actors::license_key::LicenseKey;
use tollgate_actors::subscription::Subscription;

use crate::api::checkout::CheckoutCreate;
use crate::api::license_key::{LicenseKeyDeactivate, LicenseKeyRead, LicenseKeyUpdate};
use crate::api::subscription::SubscriptionUpdate;
use crate::auth::Subject;
use crate::domain::ids::{PriceId, SubscriptionId};
use crate::domain::product::Product;
use crate::error::ApiError;
use crate::state::AppState;

use super::{day_of, day_value, input, int, opt_string};

// ---------------------------------------------------------------------------------------
// Subscriptions
// ---------------------------------------------------------------------------------------

/// `action`: `cancel` (at the period's end), `resume` (undo that) or `revoke` (now).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SubscriptionActionForm {
    pub action: String,
}

pub async fn subscription_action(
    state: &AppState,
    subject: Subject,
    id: SubscriptionId,
    form: &SubscriptionActionForm,
) -> Result<Subscription, ApiError> {
    let raw = match form.action.as_str() {
        "cancel" => json!({ "cancel_at_period_end": true }),
        "resume" => json!({ "cancel_at_period_end": false }),
        "revoke" => json!({ "revoke": true }),
        other => json!({ "cancel_at_period_end": other }),
    };
    let body = input::<SubscriptionUpdate>(raw)?;
    let command = body.into_inner().into_command()?;
    let by = crate::app::subscription::Toggler::Seller;
    Ok(crate::app::subscription::change(state, subject, id, command, by).await?)
}

// ---------------------------------------------------------------------------------------
// License keys
// ---------------------------------------------------------------------------------------

/// A key's status, expiry (a day), usage and limits; `quick` (a button): the status alone.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct LicenseKeyForm {
    /// `granted`, `disabled` or `revoked`.
    pub status: String,
    pub usage: String,
    pub limit_usage: String,
    pub limit_activations: String,
    pub expires_at: String,
    pub quick: Option<String>,
}

impl LicenseKeyForm {
    pub fn of(k: &LicenseKey) -> Self {
        LicenseKeyForm {
            status: k.status.as_str().into(),
            usage: k.usage.to_string(),
            limit_usage: opt_string(&k.limit_usage),
            limit_activations: opt_string(&k.limit_activations),
            expires_at: day_of(k.expires_at),
            quick: None,
        }
    }
}

/// Changes a key as `form` says. A blank usage keeps the key's; an expiry left on its day
/// keeps its time (a day input holds no time).
pub async fn update_license_key(
    state: &AppState,
    subject: Subject,
    key: &LicenseKey,
    form: &LicenseKeyForm,
) -> Result<LicenseKeyRead, ApiError> {
    let raw = if form.quick.is_some() {
        json!({ "status": form.status })
    } else {
        let mut raw = json!({
            "status": form.status,
            "usage": int(&form.usage),
            "limit_usage": int(&form.limit_usage),
            "limit_activations": int(&form.limit_activations),
            "expires_at": day_value(&form.expires_at, "23:59:59"),
        });
        if raw["usage"].is_null() {
            raw["usage"] = Value::from(key.usage);
        }
        if form.expires_at.trim() == day_of(key.expires_at) {
            raw["expires_at"] = serde_json::to_value(key.expires_at).map_err(ApiError::internal)?;
        }
        raw
    };
    let body = input::<LicenseKeyUpdate>(raw)?;
    let changes = body.into_inner().into_changes()?;
    Ok(crate::app::license_keys::update(state, subject, key.id, changes).await?)
}

/// Deactivates one activation of a key, as its holder would (the customer portal's
/// `deactivate`); an activation id that is not one is the API's 422 about it.
pub async fn deactivate(
    state: &AppState,
    key: &LicenseKey,
    activation: &str,
) -> Result<(), ApiError> {
    let raw = json!({
        "key": key.key,
        "organization_id": key.organization_id.to_string(),
        "activation_id": activation,
    });
    let body = input::<LicenseKeyDeactivate>(raw)?;
    let command = body.into_inner().into_command()?;
    Ok(crate::app::license_keys::deactivate(state, command).await?)
}

// ---------------------------------------------------------------------------------------
// Checkout links
// ---------------------------------------------------------------------------------------

/// A checkout for a product on sale (its first price, or `price`), created by the product's
/// organization through the API's own checkout creation, as a server of the seller would
/// with an organization token; `None` when the link leads nowhere (an archived product, a
/// price of another product, a checkout the API refuses).
pub async fn checkout_from_link(
    state: &AppState,
    product: &Product,
    price: Option<PriceId>,
    ip: std::net::IpAddr,
) -> Result<Option<Checkout>, ApiError> {
    if product.is_archived {
        return Ok(None);
    }
    let mut raw = json!({ "customer_ip_address": ip.to_string() });
    match price {
        Some(price) if product.prices.iter().any(|p| p.id == price) => {
            raw["product_price_id"] = Value::from(price.to_string());
        }
        Some(_) => return Ok(None),
        None => raw["product_id"] = Value::from(product.id.to_string()),
    }
    let created = async {
        let command = input::<CheckoutCreate>(raw)?
            .into_inner()
            .into_command(state.now())?;
        crate::app::checkout::create(
            state,
            Subject::Organization(product.organization_id),
            command,
        )
        .await
        .map_err(ApiError::from)
    }
    .await;
    match created {
        Ok(c) => Ok(Some(c)),
        Err(ApiError::Validation(_)) => Ok(None),
        Err(e) => Err(e),
    }
}
