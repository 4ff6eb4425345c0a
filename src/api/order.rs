//! Orders in Polar's `Order` shape: every key present, nullable ones as `null`.

use serde_json::{json, Map, Value};

use crate::api::customer::{address_json, customer_json, customer_user_json};
use crate::api::discount::discount_base_json;
use crate::api::price::price_json;
use crate::api::product::order_product_json;
use crate::api::subscription::subscription_base_json;
use crate::domain::customer::Customer;
use crate::domain::discount::Discount;
use crate::domain::order::Order;
use crate::domain::product::{Price, Product};
use tollgate_actors::subscription::Subscription;

/// The records an order refers to, as its rendering embeds them.
pub struct OrderRefs<'a> {
    pub customer: &'a Customer,
    pub product: &'a Product,
    pub price: &'a Price,
    pub discount: Option<&'a Discount>,
    pub subscription: Option<&'a Subscription>,
}

/// The `Order` schema: `customer` (`OrderCustomer`), the deprecated `user_id`/`user`
/// built from the customer, `product` (`OrderProduct`), `product_price`, `discount`
/// (`OrderDiscount`, a `Discount…Base` form) and `subscription` (`OrderSubscription`).
pub fn order_json(o: &Order, refs: &OrderRefs<'_>) -> Value {
    let mut m = Map::new();
    m.insert("created_at".into(), json!(o.created_at));
    m.insert("modified_at".into(), json!(o.modified_at));
    m.insert("id".into(), json!(o.id));
    m.insert("metadata".into(), o.metadata.to_json());
    m.insert(
        "custom_field_data".into(),
        crate::api::custom_field_data::custom_field_data_json(&o.custom_field_data),
    );
    m.insert("status".into(), json!(o.status.as_str()));
    m.insert("amount".into(), json!(o.amount));
    m.insert("tax_amount".into(), json!(o.tax_amount));
    m.insert("refunded_amount".into(), json!(o.refunded_amount));
    m.insert("refunded_tax_amount".into(), json!(o.refunded_tax_amount));
    m.insert("currency".into(), json!(o.currency));
    m.insert("billing_reason".into(), json!(o.billing_reason.as_str()));
    m.insert(
        "billing_address".into(),
        o.billing_address.as_ref().map_or(Value::Null, address_json),
    );
    m.insert("customer_id".into(), json!(o.customer_id));
    m.insert("product_id".into(), json!(o.product_id));
    m.insert("product_price_id".into(), json!(o.product_price_id));
    m.insert("discount_id".into(), json!(o.discount_id));
    m.insert("subscription_id".into(), json!(o.subscription_id));
    m.insert("checkout_id".into(), json!(o.checkout_id));
    m.insert("customer".into(), customer_json(refs.customer));
    m.insert("user_id".into(), json!(refs.customer.id));
    m.insert("user".into(), customer_user_json(refs.customer));
    m.insert("product".into(), order_product_json(refs.product));
    m.insert(
        "product_price".into(),
        price_json(refs.product.id, refs.price),
    );
    m.insert(
        "discount".into(),
        refs.discount.map_or(Value::Null, discount_base_json),
    );
    m.insert(
        "subscription".into(),
        refs.subscription
            .map_or(Value::Null, subscription_base_json),
    );
    Value::Object(m)
}
