//! Checkout sessions on the wire: the create/update/confirm bodies and the three response
//! variants (`Checkout` for tokens, `CheckoutPublic` for the client secret,
//! `CheckoutPublicConfirmed` for confirm).

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::customer::address_json;
use super::Maybe;
use tollgate_actors::checkout::{AppliedDiscount, Checkout};

#[derive(Debug, Deserialize)]
pub struct CheckoutCreate {
    pub payment_processor: Option<String>,
    pub product_price_id: Option<uuid::Uuid>,
    pub product_id: Option<uuid::Uuid>,
    pub amount: Option<i64>,
    pub discount_id: Option<uuid::Uuid>,
    pub allow_discount_codes: Option<bool>,
    pub customer_id: Option<uuid::Uuid>,
    pub customer_name: Option<String>,
    pub customer_email: Option<String>,
    pub customer_ip_address: Option<String>,
    pub customer_billing_address: Option<Value>,
    pub customer_tax_id: Option<String>,
    pub customer_metadata: Option<Value>,
    pub metadata: Option<Value>,
    pub custom_field_data: Option<Value>,
    pub subscription_id: Option<uuid::Uuid>,
    pub success_url: Option<String>,
    pub embed_origin: Option<String>,
    /// Tollgate extension: between 1 minute and 24 hours from now.
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// `CheckoutUpdate` (by id) and `CheckoutUpdatePublic`/`CheckoutConfirm` (by client
/// secret) in one type; the handlers ignore the fields their variant does not accept.
#[derive(Debug, Default, Deserialize)]
pub struct CheckoutChanges {
    #[serde(default)]
    pub product_price_id: Maybe<uuid::Uuid>,
    #[serde(default)]
    pub amount: Maybe<i64>,
    #[serde(default)]
    pub customer_name: Maybe<String>,
    #[serde(default)]
    pub customer_email: Maybe<String>,
    #[serde(default)]
    pub customer_billing_address: Maybe<Value>,
    #[serde(default)]
    pub customer_tax_id: Maybe<String>,
    #[serde(default)]
    pub custom_field_data: Maybe<Value>,
    // Organizer side only.
    #[serde(default)]
    pub metadata: Maybe<Value>,
    #[serde(default)]
    pub discount_id: Maybe<uuid::Uuid>,
    #[serde(default)]
    pub allow_discount_codes: Maybe<bool>,
    #[serde(default)]
    pub customer_ip_address: Maybe<String>,
    #[serde(default)]
    pub customer_metadata: Maybe<Value>,
    #[serde(default)]
    pub success_url: Maybe<String>,
    #[serde(default)]
    pub embed_origin: Maybe<String>,
    // Client side only.
    #[serde(default)]
    pub discount_code: Maybe<String>,
    // Confirm only.
    #[serde(default)]
    pub confirmation_token_id: Maybe<String>,
}

/// The `Checkout…Discount` summary of an applied discount.
pub fn applied_discount_json(d: &AppliedDiscount) -> Value {
    let mut out = Map::new();
    out.insert("id".into(), json!(d.id.0));
    out.insert("name".into(), Value::from(d.name.as_str()));
    out.insert("code".into(), json!(d.code));
    super::discount::kind_fields(&mut out, &d.kind, d.duration);
    Value::Object(out)
}

/// What the views need besides the checkout itself.
pub struct CheckoutContext {
    pub status: &'static str,
    pub url: String,
    pub success_url: String,
    pub product: Value,
    pub product_price: Value,
    pub attached_custom_fields: Value,
}

/// The fields every variant shares.
pub fn base_json(c: &Checkout, ctx: &CheckoutContext) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("id".into(), json!(c.id.0));
    m.insert("created_at".into(), json!(c.created_at));
    m.insert("modified_at".into(), json!(c.modified_at));
    m.insert("payment_processor".into(), Value::from("stripe"));
    m.insert("status".into(), Value::from(ctx.status));
    m.insert(
        "client_secret".into(),
        Value::from(c.client_secret.as_str()),
    );
    m.insert("url".into(), Value::from(ctx.url.as_str()));
    m.insert("expires_at".into(), json!(c.expires_at));
    m.insert("success_url".into(), Value::from(ctx.success_url.as_str()));
    m.insert("embed_origin".into(), json!(c.embed_origin));
    m.insert("amount".into(), json!(c.amount));
    m.insert("tax_amount".into(), json!(c.tax_amount));
    m.insert("currency".into(), json!(c.currency));
    m.insert("subtotal_amount".into(), json!(c.subtotal_amount()));
    m.insert("total_amount".into(), json!(c.total_amount()));
    m.insert("product_id".into(), json!(c.product_id.0));
    m.insert("product_price_id".into(), json!(c.price.id.0));
    m.insert(
        "discount_id".into(),
        json!(c.discount.as_ref().map(|d| d.id.0)),
    );
    m.insert(
        "allow_discount_codes".into(),
        Value::from(c.allow_discount_codes),
    );
    m.insert(
        "is_discount_applicable".into(),
        Value::from(c.is_discount_applicable()),
    );
    m.insert(
        "is_free_product_price".into(),
        Value::from(c.is_free_product_price()),
    );
    m.insert(
        "is_payment_required".into(),
        Value::from(c.is_payment_required()),
    );
    m.insert(
        "is_payment_setup_required".into(),
        Value::from(c.is_payment_setup_required()),
    );
    m.insert(
        "is_payment_form_required".into(),
        Value::from(c.is_payment_form_required()),
    );
    m.insert("customer_id".into(), json!(c.customer_id.map(|id| id.0)));
    m.insert("customer_name".into(), json!(c.customer_name));
    m.insert("customer_email".into(), json!(c.customer_email));
    m.insert("customer_ip_address".into(), json!(c.customer_ip_address));
    m.insert(
        "customer_billing_address".into(),
        c.customer_billing_address
            .as_ref()
            .map(address_json)
            .unwrap_or(Value::Null),
    );
    m.insert(
        "customer_tax_id".into(),
        json!(c.customer_tax_id.as_ref().map(|t| t.value.clone())),
    );
    m.insert(
        "payment_processor_metadata".into(),
        json!(c.payment_processor_metadata),
    );
    m.insert(
        "custom_field_data".into(),
        super::custom_field_data::custom_field_data_json(&c.custom_field_data),
    );
    m.insert("product".into(), ctx.product.clone());
    m.insert("product_price".into(), ctx.product_price.clone());
    m.insert(
        "discount".into(),
        c.discount
            .as_ref()
            .map(applied_discount_json)
            .unwrap_or(Value::Null),
    );
    m.insert(
        "attached_custom_fields".into(),
        ctx.attached_custom_fields.clone(),
    );
    m
}

/// `Checkout`: what token holders see.
pub fn checkout_json(c: &Checkout, ctx: &CheckoutContext) -> Value {
    let mut m = base_json(c, ctx);
    m.insert("metadata".into(), c.metadata.to_json());
    m.insert("customer_metadata".into(), c.customer_metadata.to_json());
    m.insert(
        "subscription_id".into(),
        json!(c.subscription_id.map(|s| s.0)),
    );
    Value::Object(m)
}

/// `CheckoutPublic` (and, with a session token, `CheckoutPublicConfirmed`): what the buyer
/// sees through the client secret; no metadata, plus the seller organization.
pub fn checkout_public_json(
    c: &Checkout,
    ctx: &CheckoutContext,
    organization: Value,
    session_token: Option<&str>,
) -> Value {
    let mut m = base_json(c, ctx);
    m.insert("organization".into(), organization);
    if let Some(token) = session_token {
        m.insert("customer_session_token".into(), Value::from(token));
    }
    Value::Object(m)
}
