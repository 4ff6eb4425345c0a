//! After a sale: subscriptions, license keys, and checkout links.

use chrono::NaiveTime;
use serde::Deserialize;
use tollgate_actors::checkout::Checkout;
use tollgate_actors::license_key::LicenseKey;
use tollgate_actors::subscription::Subscription;

use crate::api::checkout::CheckoutCreate;
use crate::api::license_key::{LicenseKeyChangeInput, LicenseKeyDeactivate, LicenseKeyRead};
use crate::api::subscription::SubscriptionUpdate;
use crate::api::Maybe;
use crate::auth::Subject;
use crate::domain::ids::{PriceId, SubscriptionId};
use crate::domain::product::Product;
use crate::error::{ApiError, AppError, Invalid};
use crate::field;
use crate::state::AppState;

use super::{day_of, opt_string, Typed};

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
    let body = match form.action.as_str() {
        "cancel" => SubscriptionUpdate {
            cancel_at_period_end: Some(true),
            ..SubscriptionUpdate::default()
        },
        "resume" => SubscriptionUpdate {
            cancel_at_period_end: Some(false),
            ..SubscriptionUpdate::default()
        },
        "revoke" => SubscriptionUpdate {
            revoke: Some(true),
            ..SubscriptionUpdate::default()
        },
        other => {
            let wrong = Invalid::new(
                field!["cancel_at_period_end"],
                "Input should be a valid boolean",
                other,
            )
            .kind("bool_type");
            return Err(AppError::Invalid(vec![wrong]).into());
        }
    };
    let command = body.into_command()?;
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

    /// The changes typed (a number or a day that does not read is in `typed`), for the
    /// API's rules on a key's fields (`PATCH /v1/license-keys/{id}`).
    fn changes(&self, key: &LicenseKey, typed: &mut Typed) -> LicenseKeyChangeInput {
        let status = Maybe::Value(self.status.clone());
        if self.quick.is_some() {
            return LicenseKeyChangeInput {
                status,
                ..LicenseKeyChangeInput::default()
            };
        }
        // A blank limit or expiry clears it.
        let cleared = |v: Option<i64>| v.map_or(Maybe::Null, Maybe::Value);
        let mut limit = |name: &str, v: &str| cleared(typed.int(field![name], v, false));
        let limit_activations = limit("limit_activations", &self.limit_activations);
        let limit_usage = limit("limit_usage", &self.limit_usage);
        LicenseKeyChangeInput {
            status,
            // A blank usage keeps the key's.
            usage: Maybe::Value(
                typed
                    .int(field!["usage"], &self.usage, false)
                    .unwrap_or(key.usage),
            ),
            limit_activations,
            limit_usage,
            // An expiry left on its day keeps its time (a day input holds no time).
            expires_at: if self.expires_at.trim() == day_of(key.expires_at) {
                key.expires_at.map_or(Maybe::Null, Maybe::Value)
            } else {
                let end_of_day = NaiveTime::from_hms_opt(23, 59, 59).unwrap_or(NaiveTime::MIN);
                let day = typed.day(field!["expires_at"], &self.expires_at, end_of_day);
                day.map_or(Maybe::Null, Maybe::Value)
            },
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
    let mut typed = Typed::default();
    let input = form.changes(key, &mut typed);
    let changes = typed.finish(input.into_changes())?;
    Ok(crate::app::license_keys::update(state, subject, key.id, changes).await?)
}

/// Deactivates one activation of a key, as its holder would (the customer portal's
/// `deactivate`); an activation id that is not one is the API's 422 about it.
pub async fn deactivate(
    state: &AppState,
    key: &LicenseKey,
    activation: &str,
) -> Result<(), ApiError> {
    let activation_id = match activation.trim() {
        "" => None,
        id => match uuid::Uuid::parse_str(id) {
            Ok(id) => Some(id),
            Err(e) => {
                let msg = format!("Input should be a valid UUID, {e}");
                let wrong = Invalid::new(field!["activation_id"], msg, id).kind("uuid_parsing");
                return Err(AppError::Invalid(vec![wrong]).into());
            }
        },
    };
    let body = LicenseKeyDeactivate {
        key: key.key.clone(),
        organization_id: key.organization_id.0,
        activation_id,
        label: None,
    };
    Ok(crate::app::license_keys::deactivate(state, body.into_command()?).await?)
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
    let (product_id, product_price_id) = match price {
        Some(price) if product.prices.iter().any(|p| p.id == price) => (None, Some(price.0)),
        Some(_) => return Ok(None),
        None => (Some(product.id.0), None),
    };
    let body = CheckoutCreate {
        payment_processor: None,
        products: None,
        product_price_id,
        product_id,
        amount: None,
        discount_id: None,
        allow_discount_codes: None,
        customer_id: None,
        customer_name: None,
        customer_email: None,
        customer_ip_address: Some(ip.to_string()),
        customer_billing_address: None,
        customer_tax_id: None,
        customer_metadata: None,
        metadata: None,
        custom_field_data: None,
        subscription_id: None,
        success_url: None,
        embed_origin: None,
        expires_at: None,
        require_billing_address: None,
        allow_trial: None,
        external_customer_id: None,
        return_url: None,
        locale: None,
        currency: None,
        is_business_customer: None,
        customer_billing_name: None,
        prices: None,
        seats: None,
        min_seats: None,
        max_seats: None,
        units: None,
        min_units: None,
        max_units: None,
        trial_interval: None,
        trial_interval_count: None,
    };
    let command = match body.into_command(state.now()) {
        Ok(command) => command,
        Err(ApiError::Validation(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    let subject = Subject::Organization(product.organization_id);
    match crate::app::checkout::create(state, subject, command).await {
        Ok(c) => Ok(Some(c)),
        Err(AppError::Invalid(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}
