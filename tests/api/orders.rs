//! `/v1/orders/`: the `Order` shape with its nested customer, user, product, price,
//! discount and subscription; list filters (`product_price_type` and the id filters),
//! sorting and pagination; get; scopes and tenancy (reference 2.1, 6.4, 8, 9.7;
//! clients.md 4). Orders are seeded into the store (checkout completion and renewals
//! write them; those have their own tests).

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};
use tollgate::auth::Scope;
use tollgate::domain::customer::{Address, Customer};
use tollgate::domain::discount::Discount;
use tollgate::domain::ids::{OrderId, OrganizationId};
use tollgate::domain::order::{BillingReason, Order, OrderStatus};
use tollgate::domain::product::Product;
use tollgate_actors::subscription::Subscription;

use crate::helpers::{assert_utc_timestamp, Reply};
use crate::subscriptions::{
    purchase, spawn_app_with_clock, t0, ClockApp, SUBSCRIPTION_BASE_KEYS, UNKNOWN_ID,
};

const ORDERS: &str = "/v1/orders/";

const ORDER_KEYS: &[&str] = &[
    "created_at",
    "modified_at",
    "id",
    "metadata",
    "custom_field_data",
    "status",
    "amount",
    "tax_amount",
    "refunded_amount",
    "refunded_tax_amount",
    "currency",
    "billing_reason",
    "billing_address",
    "customer_id",
    "product_id",
    "product_price_id",
    "discount_id",
    "subscription_id",
    "checkout_id",
    "customer",
    "user_id",
    "user",
    "product",
    "product_price",
    "discount",
    "subscription",
    // Polar's 2026 keys.
    "paid",
    "subtotal_amount",
    "discount_amount",
    "net_amount",
    "total_amount",
    "applied_balance_amount",
    "due_amount",
    "refundable_amount",
    "refundable_tax_amount",
    "billing_name",
    "invoice_number",
    // Tollgate's additive tax keys (issue 48).
    "tax_breakdown",
    "tax_behavior",
    "customer_tax_id",
    "is_invoice_generated",
    "receipt_number",
    "seats",
    "next_payment_attempt_at",
    "units",
    "platform_fee_amount",
    "platform_fee_currency",
    "description",
    "items",
];

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn ids(r: &Reply) -> Vec<String> {
    r.items()
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect()
}

/// An order as checkout completion writes it.
fn order(
    product: &Product,
    customer: &Customer,
    amount: i64,
    at: DateTime<Utc>,
    discount: Option<&Discount>,
    subscription: Option<&Subscription>,
) -> Order {
    Order {
        id: OrderId::new(),
        organization_id: product.organization_id,
        created_at: at,
        modified_at: None,
        status: OrderStatus::Paid,
        amount,
        tax_amount: 0,
        refunded_amount: 0,
        refunded_tax_amount: 0,
        currency: "usd".into(),
        billing_reason: if subscription.is_some() {
            BillingReason::SubscriptionCreate
        } else {
            BillingReason::Purchase
        },
        billing_address: customer.billing_address.clone(),
        customer_id: customer.id,
        product_id: product.id,
        product_price_id: product.prices[0].id,
        recurring: product.prices[0].kind.is_recurring(),
        discount_id: discount.map(|d| d.id),
        subscription_id: subscription.map(|s| s.id),
        checkout_id: None,
        metadata: Default::default(),
        custom_field_data: Default::default(),
        customer_email: customer.email.clone(),
        product_name: product.name.clone(),
        discount_name: discount.map(|d| d.name.clone()),
        payment_id: None,
        refund_pending_amount: 0,
        refund_pending_tax_amount: 0,
        seats: None,
        next_payment_attempt_at: None,
        last_payment: None,
        tax: tollgate::domain::order::OrderTax::default(),
        invoice: tollgate::domain::order::InvoiceState::None,
        usage_lines: Vec::new(),
    }
}

async fn one_time(
    app: &ClockApp,
    token: &str,
    org: OrganizationId,
    name: &str,
    amount: i64,
) -> Product {
    app.product(
        token,
        org,
        name,
        json!({"type": "one_time", "amount_type": "fixed", "price_amount": amount, "price_currency": "usd"}),
    )
    .await
}

#[actix_web::test]
async fn an_order_has_the_shape_the_sdks_require() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "order-shape").await;
    let widget = one_time(&app, &token, org, "Widget", 2000).await;
    let pro = app.monthly(&token, org, "Pro", 1500).await;
    let mut customer = app.customer(&token, org, "ann@example.com").await;
    customer.billing_address = Some(Address {
        country: "FR".into(),
        city: Some("Paris".into()),
        ..Default::default()
    });
    let discount = app
        .discount(
            &token,
            org,
            json!({"name": "Launch", "type": "fixed", "amount": 200, "currency": "usd", "duration": "once"}),
        )
        .await;
    let bought = order(&widget, &customer, 1800, t0(), Some(&discount), None);
    app.put(&bought).await;
    let s = app.subscribe(purchase(&pro, &customer, None), t0()).await;
    let first = order(&pro, &customer, 1500, t0(), None, Some(&s));
    app.put(&first).await;

    let r = app
        .get(&format!("{ORDERS}{}", bought.id), Some(&token))
        .await;
    r.expect(200);
    let b = &r.body;
    assert_eq!(keys(b), set(ORDER_KEYS));
    assert_eq!(b["status"], "paid");
    assert_eq!(b["billing_reason"], "purchase");
    assert_eq!(
        (b["amount"].as_i64(), b["tax_amount"].as_i64()),
        (Some(1800), Some(0))
    );
    assert_eq!(b["refunded_amount"], 0);
    assert_eq!(b["refunded_tax_amount"], 0);
    // Polar's 2026 amounts: the widget's 2000 less the 200 discount, no tax.
    assert_eq!(
        [
            &b["subtotal_amount"],
            &b["discount_amount"],
            &b["net_amount"],
            &b["total_amount"]
        ],
        [2000, 200, 1800, 1800]
    );
    assert_eq!(
        (b["paid"].as_bool(), b["due_amount"].as_i64()),
        (Some(true), Some(0))
    );
    assert_eq!(b["refundable_amount"], 1800);
    assert_eq!(b["items"].as_array().map(Vec::len), Some(1));
    assert_eq!(b["items"][0]["amount"], 2000);
    assert_eq!(b["items"][0]["label"], "Widget");
    assert_eq!(b["description"], "Widget");
    assert!(b["invoice_number"]
        .as_str()
        .is_some_and(|n| n.starts_with("TG-")));
    assert_eq!(b["currency"], "usd");
    assert_utc_timestamp(&b["created_at"]);
    assert_eq!(b["billing_address"]["country"], "FR");
    assert_eq!(b["billing_address"]["city"], "Paris");
    assert!(b["billing_address"]["line1"].is_null());
    assert_eq!(b["customer"]["email"], "ann@example.com");
    assert_eq!(b["user_id"], customer.id.to_string());
    assert_eq!(b["user"]["id"], customer.id.to_string());
    assert_eq!(b["user"]["email"], "ann@example.com");
    assert!(b["user"]["public_name"].is_string());
    // `OrderProduct`: the product without prices, benefits or medias.
    assert_eq!(
        keys(&b["product"]),
        set(&[
            "created_at",
            "modified_at",
            "id",
            "name",
            "description",
            "is_recurring",
            "is_archived",
            "organization_id",
            "metadata",
            "recurring_interval",
            "recurring_interval_count",
            "trial_interval",
            "trial_interval_count",
            "meter_interval",
            "meter_interval_count",
            "visibility",
        ])
    );
    assert_eq!(b["product_price"]["id"], widget.prices[0].id.to_string());
    assert_eq!(b["product_price"]["type"], "one_time");
    assert_eq!(b["product_price"]["price_amount"], 2000);
    // `OrderDiscount`: the base form, without `products`.
    assert_eq!(b["discount"]["id"], discount.id.to_string());
    assert_eq!(b["discount"]["amount"], 200);
    assert!(b["discount"].get("products").is_none());
    assert!(b["subscription"].is_null());
    assert!(b["subscription_id"].is_null());
    assert!(b["checkout_id"].is_null());
    assert_eq!(b["metadata"], json!({}));

    let r = app
        .get(&format!("{ORDERS}{}", first.id), Some(&token))
        .await;
    r.expect(200);
    assert_eq!(r.body["billing_reason"], "subscription_create");
    assert!(r.body["discount"].is_null());
    assert_eq!(r.body["product_price"]["type"], "recurring");
    // `OrderSubscription`: the base form.
    assert_eq!(keys(&r.body["subscription"]), set(SUBSCRIPTION_BASE_KEYS));
    assert_eq!(r.body["subscription"]["id"], s.id.to_string());
    assert_eq!(r.body["subscription"]["status"], "active");
    assert_eq!(r.body["subscription"]["user_id"], customer.id.to_string());

    let r = app
        .get(&format!("{ORDERS}{UNKNOWN_ID}"), Some(&token))
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app.get(&format!("{ORDERS}nope"), Some(&token)).await;
    let item = r.expect_invalid_at(json!(["path", "id"]));
    assert_eq!(item["type"], "uuid_parsing");
}

#[actix_web::test]
async fn the_list_filters_sorts_and_pages_orders() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "order-list").await;
    let widget = one_time(&app, &token, org, "Widget", 2000).await;
    let pro = app.monthly(&token, org, "Pro", 1500).await;
    let ann = app.customer(&token, org, "ann@example.com").await;
    let bob = app.customer(&token, org, "bob@example.com").await;
    let cid = app.customer(&token, org, "cid@example.com").await;
    let alpha = app
        .discount(
            &token,
            org,
            json!({"name": "Alpha", "type": "fixed", "amount": 200, "currency": "usd", "duration": "once"}),
        )
        .await;
    let beta = app
        .discount(
            &token,
            org,
            json!({"name": "Beta", "type": "fixed", "amount": 300, "currency": "usd", "duration": "forever"}),
        )
        .await;
    let s = app.subscribe(purchase(&pro, &cid, Some(&beta)), t0()).await;
    let h = Duration::hours(1);
    let o1 = order(&widget, &ann, 2000, t0(), None, None);
    let o2 = order(&widget, &bob, 1800, t0() + h, Some(&alpha), None);
    let o3 = order(&pro, &cid, 1500, t0() + h * 2, None, Some(&s));
    let mut o4 = order(&pro, &cid, 1200, t0() + h * 3, Some(&beta), Some(&s));
    o4.billing_reason = BillingReason::SubscriptionCycle;
    for o in [&o1, &o2, &o3, &o4] {
        app.put(o).await;
    }
    let ids4 = [&o1, &o2, &o3, &o4].map(|o| o.id.to_string());
    let [o1, o2, o3, o4] = [0, 1, 2, 3].map(|i| ids4[i].as_str());

    let list = |query: String| {
        let app = &app;
        let token = token.clone();
        async move {
            let r = app.get(&format!("{ORDERS}?{query}"), Some(&token)).await;
            r.expect(200);
            r
        }
    };

    // Sorting: -created_at by default.
    let r = list(String::new()).await;
    assert_eq!(ids(&r), [o4, o3, o2, o1]);
    assert_eq!((r.total_count(), r.max_page()), (4, 1));
    assert_eq!(
        ids(&list("sorting=created_at".into()).await),
        [o1, o2, o3, o4]
    );
    assert_eq!(ids(&list("sorting=amount".into()).await), [o4, o3, o2, o1]);
    assert_eq!(ids(&list("sorting=-amount".into()).await), [o1, o2, o3, o4]);
    assert_eq!(
        ids(&list("sorting=customer".into()).await),
        [o1, o2, o3, o4]
    );
    assert_eq!(
        ids(&list("sorting=-customer".into()).await),
        [o4, o3, o2, o1]
    );
    assert_eq!(ids(&list("sorting=product".into()).await), [o3, o4, o1, o2]);
    assert_eq!(
        ids(&list("sorting=discount".into()).await),
        [o2, o4, o1, o3]
    );
    assert_eq!(
        ids(&list("sorting=-discount".into()).await),
        [o3, o1, o4, o2]
    );
    assert_eq!(
        ids(&list("sorting=subscription".into()).await),
        [o3, o4, o1, o2]
    );
    let bad = app
        .get(&format!("{ORDERS}?sorting=total"), Some(&token))
        .await;
    assert_eq!(
        bad.expect_invalid_at(json!(["query", "sorting", 0]))["type"],
        "enum"
    );

    // Filters.
    let r = list("product_price_type=one_time".into()).await;
    assert_eq!(ids(&r), [o2, o1]);
    let r = list("product_price_type=recurring".into()).await;
    assert_eq!(ids(&r), [o4, o3]);
    let r = list("product_price_type=recurring&product_price_type=one_time".into()).await;
    assert_eq!(r.total_count(), 4);
    let bad = app
        .get(
            &format!("{ORDERS}?product_price_type=monthly"),
            Some(&token),
        )
        .await;
    assert_eq!(
        bad.expect_invalid_at(json!(["query", "product_price_type", 0]))["type"],
        "enum"
    );
    assert_eq!(
        ids(&list(format!("product_id={}", widget.id)).await),
        [o2, o1]
    );
    let r = list(format!("customer_id={}&customer_id={}", ann.id, bob.id)).await;
    assert_eq!(ids(&r), [o2, o1]);
    assert_eq!(ids(&list(format!("discount_id={}", alpha.id)).await), [o2]);
    let r = list(format!("customer_id={}&sorting=amount", cid.id)).await;
    assert_eq!(ids(&r), [o4, o3]);
    let r = list(format!(
        "product_id={}&product_price_type=one_time&sorting=customer",
        widget.id
    ))
    .await;
    assert_eq!(ids(&r), [o1, o2]);
    let r = list(format!("product_id={}&product_price_type=one_time", pro.id)).await;
    assert_eq!(r.total_count(), 0);
    assert_eq!(
        list(format!("organization_id={org}")).await.total_count(),
        4
    );
    assert_eq!(
        list(format!("organization_id={UNKNOWN_ID}"))
            .await
            .total_count(),
        0
    );

    // Pagination.
    let r = list("limit=3&page=2".into()).await;
    assert_eq!(ids(&r), [o1]);
    assert_eq!((r.total_count(), r.max_page()), (4, 2));
    let r = list(format!("limit=1&page=2&customer_id={}", cid.id)).await;
    assert_eq!(ids(&r), [o3]);
    assert_eq!((r.total_count(), r.max_page()), (2, 2));
    let r = list("limit=2&page=5".into()).await;
    assert!(r.items().is_empty());
    assert_eq!(r.total_count(), 4);
    let bad = app.get(&format!("{ORDERS}?limit=0"), Some(&token)).await;
    bad.expect_invalid_at(json!(["query", "limit"]));

    // The renewal the subscription makes joins the list.
    app.clock
        .set(s.current_period_end.unwrap() + Duration::minutes(1));
    assert_eq!(app.sweep().await.renewed, 1);
    let r = list(format!("customer_id={}", cid.id)).await;
    assert_eq!(r.total_count(), 3);
    assert_eq!(r.items()[0]["billing_reason"], "subscription_cycle");
    assert_eq!(r.items()[0]["amount"], 1200);
    let report = app.state.store.verify_indexes::<Order>().await.unwrap();
    assert!(report.is_clean(), "{report:?}");
}

#[actix_web::test]
async fn orders_need_an_orders_scope_and_stay_in_their_organization() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "order-owner").await;
    let widget = one_time(&app, &token, org, "Widget", 2000).await;
    let ann = app.customer(&token, org, "ann@example.com").await;
    let o = order(&widget, &ann, 2000, t0(), None, None);
    app.put(&o).await;
    let one = format!("{ORDERS}{}", o.id);

    for r in [app.get(ORDERS, None).await, app.get(&one, None).await] {
        assert_eq!(r.expect_error(401), "Unauthorized");
        assert!(r.www_authenticate().contains("Bearer realm=\"polar\""));
    }
    // `orders:read` (or a web session) only: a subscriptions token is not enough.
    let wrong = app
        .user_with_scopes("wrong@example.com", &[Scope::SubscriptionsWrite])
        .await;
    for r in [
        app.get(ORDERS, Some(&wrong)).await,
        app.get(&one, Some(&wrong)).await,
    ] {
        assert_eq!(r.expect_error(403), "insufficient_scope");
        assert!(r
            .www_authenticate()
            .contains("scope=\"web_default orders:read\""));
    }
    // A non-member sees none of them.
    let rival = app
        .user_with_scopes("rival@example.com", &[Scope::OrdersRead])
        .await;
    let r = app.get(ORDERS, Some(&rival)).await;
    r.expect(200);
    assert_eq!(r.total_count(), 0);
    let r = app
        .get(&format!("{ORDERS}?organization_id={org}"), Some(&rival))
        .await;
    assert_eq!(r.total_count(), 0);
    let r = app
        .get(&format!("{ORDERS}?customer_id={}", ann.id), Some(&rival))
        .await;
    assert_eq!(r.total_count(), 0);
    let r = app.get(&one, Some(&rival)).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    // The owner does.
    let r = app.get(ORDERS, Some(&token)).await;
    assert_eq!(ids(&r), [o.id.to_string()]);
    app.get(&one, Some(&token)).await.expect(200);
}
