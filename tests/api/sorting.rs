//! `sorting` with several criteria (`?sorting=-status&sorting=started_at`): every criterion
//! applies in the order given, a later one breaking the ties of the earlier ones, and pages
//! neither overlap nor skip (issue 13; clients.md "Query strings"; reference 2.1, 2.2).
//!
//! The server runs on a `ManualClock`, so records created without moving it share their
//! creation time: ties that only a later criterion can break.

use chrono::Duration;
use serde_json::{json, Value};

use crate::helpers::Reply;
use crate::subscriptions::{purchase, spawn_app_with_clock, t0, ClockApp, SUBSCRIPTIONS};

const PRODUCTS: &str = "/v1/products/";
const CUSTOMERS: &str = "/v1/customers/";
const DISCOUNTS: &str = "/v1/discounts/";
const ORDERS: &str = "/v1/orders/";

/// One page of a list as the admin, which must be a 200.
async fn page(app: &ClockApp, path: &str, query: &str) -> Reply {
    let r = app.get(&format!("{path}?{query}"), Some(&app.token)).await;
    r.expect(200);
    r
}

/// The string `field` of every item of a page.
fn field(r: &Reply, field: &str) -> Vec<String> {
    r.items()
        .iter()
        .map(|item| item[field].as_str().unwrap_or("<null>").to_string())
        .collect()
}

/// Walks every page of `limit` items of a list: each page's `field` values, checking the
/// pagination of each against the `expected` total.
async fn walk(
    app: &ClockApp,
    path: &str,
    query: &str,
    limit: u64,
    key: &str,
    expected: u64,
) -> Vec<Vec<String>> {
    let pages = expected.div_ceil(limit);
    let mut out = Vec::new();
    for p in 1..=pages + 1 {
        let r = page(app, path, &format!("{query}&limit={limit}&page={p}")).await;
        assert_eq!(
            (r.total_count(), r.max_page()),
            (expected, pages),
            "{query} page {p}: {}",
            r.body
        );
        out.push(field(&r, key));
    }
    assert_eq!(out.pop(), Some(vec![]), "the page after the last is empty");
    out
}

fn price_amounts(r: &Reply) -> Vec<Value> {
    r.items()
        .iter()
        .map(|p| p["prices"][0]["price_amount"].clone())
        .collect()
}

#[actix_web::test]
async fn products_sort_by_price_then_name_over_pages() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "sorting-products").await;
    let monthly = |amount: i64| {
        json!({"type": "recurring", "amount_type": "fixed", "price_amount": amount,
               "price_currency": "usd", "recurring_interval": "month"})
    };
    let once = |amount: i64| {
        json!({"type": "one_time", "amount_type": "fixed", "price_amount": amount,
               "price_currency": "usd"})
    };
    let free = json!({"type": "recurring", "amount_type": "free", "recurring_interval": "month"});
    let specs = [
        ("delta", monthly(1000)),
        ("Alpha", once(1000)),
        ("charlie", monthly(500)),
        ("Bravo", monthly(1000)),
        ("echo", once(500)),
        ("foxtrot", free),
        ("hotel", monthly(2000)),
    ];
    let mut ids = Vec::new();
    for (name, price) in specs {
        ids.push(app.product(&token, org, name, price).await.id);
        app.clock.advance(Duration::minutes(1));
    }

    // Amount descending (free is the lowest), then the name, case-insensitively. The
    // amount alone would order its ties newest first: Bravo, Alpha, delta.
    let q = "sorting=-price_amount&sorting=name";
    assert_eq!(
        walk(&app, PRODUCTS, q, 3, "name", 7).await,
        [
            vec!["hotel", "Alpha", "Bravo"],
            vec!["delta", "charlie", "echo"],
            vec!["foxtrot"],
        ]
    );
    let r = page(&app, PRODUCTS, &format!("{q}&limit=3&page=2")).await;
    assert_eq!(price_amounts(&r), [json!(1000), json!(500), json!(500)]);
    assert_eq!(r.items()[0]["is_recurring"], true);

    // One-time prices first, then recurring; each by name descending.
    assert_eq!(
        walk(
            &app,
            PRODUCTS,
            "sorting=price_type&sorting=-name",
            4,
            "name",
            7
        )
        .await,
        [
            vec!["echo", "Alpha", "hotel", "foxtrot"],
            vec!["delta", "charlie", "Bravo"],
        ]
    );

    // The same order over the products granting a benefit (gathered from its index).
    let benefit = app
        .post_json(
            "/v1/benefits/",
            Some(&token),
            &json!({"type": "custom", "description": "Sorted benefit",
                    "organization_id": org, "properties": {"note": null}}),
        )
        .await;
    benefit.expect(201);
    let benefit = benefit.id();
    for i in [0, 1, 3, 4, 5] {
        app.post_json(
            &format!("{PRODUCTS}{}/benefits", ids[i]),
            Some(&token),
            &json!({"benefits": [benefit]}),
        )
        .await
        .expect(200);
    }
    assert_eq!(
        walk(
            &app,
            PRODUCTS,
            &format!("benefit_id={benefit}&{q}"),
            2,
            "name",
            5
        )
        .await,
        [
            vec!["Alpha", "Bravo"],
            vec!["delta", "echo"],
            vec!["foxtrot"]
        ]
    );
}

#[actix_web::test]
async fn customers_sort_by_name_then_email_with_no_name_last() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "sorting-customers").await;
    // Created a minute apart, in this order: the name alone would order its ties by
    // creation (bob before cid), not by e-mail address descending.
    let specs = [
        ("ann@example.com", json!("Zoe")),
        ("bob@example.com", json!("amy")),
        ("cid@example.com", json!("Amy")),
        ("dan@example.com", Value::Null),
        ("eve@example.com", json!("zoe")),
        ("fay@example.com", Value::Null),
    ];
    for (email, name) in specs {
        app.post_json(
            CUSTOMERS,
            Some(&token),
            &json!({"email": email, "name": name, "organization_id": org}),
        )
        .await
        .expect(201);
        app.clock.advance(Duration::minutes(1));
    }

    let r = walk(
        &app,
        CUSTOMERS,
        "sorting=name&sorting=-email",
        2,
        "email",
        6,
    )
    .await;
    assert_eq!(
        r,
        [
            vec!["cid@example.com", "bob@example.com"],
            vec!["eve@example.com", "ann@example.com"],
            vec!["fay@example.com", "dan@example.com"],
        ]
    );
    let r = page(
        &app,
        CUSTOMERS,
        "sorting=name&sorting=-email&limit=2&page=2",
    )
    .await;
    assert_eq!(field(&r, "name"), ["zoe", "Zoe"]);
    // Descending, no name comes first (PostgreSQL's NULL order).
    let r = walk(
        &app,
        CUSTOMERS,
        "sorting=-name&sorting=email",
        4,
        "email",
        6,
    )
    .await;
    assert_eq!(
        r,
        [
            vec![
                "dan@example.com",
                "fay@example.com",
                "ann@example.com",
                "eve@example.com"
            ],
            vec!["bob@example.com", "cid@example.com"],
        ]
    );
    let r = page(&app, CUSTOMERS, "sorting=-name&sorting=email&limit=4").await;
    assert_eq!(field(&r, "name"), ["<null>", "<null>", "Zoe", "zoe"]);
    // A filtered list keeps the order and counts only what it keeps.
    let r = walk(
        &app,
        CUSTOMERS,
        "query=e.com&sorting=name&sorting=-email",
        5,
        "email",
        6,
    )
    .await;
    assert_eq!(r[1], ["dan@example.com"]);
}

#[actix_web::test]
async fn discounts_sort_by_code_then_name() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "sorting-discounts").await;
    let specs = [
        ("Beta", Some("ZED")),
        ("alpha", None),
        ("Gamma", Some("abc")),
        ("delta", None),
        ("Epsilon", Some("ABD")),
    ];
    for (name, code) in specs {
        let mut body = json!({"type": "fixed", "duration": "once", "amount": 100,
                              "currency": "usd", "name": name});
        if let Some(code) = code {
            body["code"] = json!(code);
        }
        app.discount(&token, org, body).await;
        app.clock.advance(Duration::minutes(1));
    }

    // Codes case-insensitively, no code last; those without a code by name descending
    // (the code alone would order them by creation: alpha, delta).
    let r = walk(&app, DISCOUNTS, "sorting=code&sorting=-name", 2, "name", 5).await;
    assert_eq!(
        r,
        [
            vec!["Gamma", "Epsilon"],
            vec!["Beta", "delta"],
            vec!["alpha"]
        ]
    );
    let r = page(&app, DISCOUNTS, "sorting=code&sorting=-name&limit=2").await;
    assert_eq!(field(&r, "code"), ["abc", "ABD"]);
    // Every count is 0: the name decides (the count alone: newest first).
    let r = walk(
        &app,
        DISCOUNTS,
        "sorting=-redemptions_count&sorting=name",
        2,
        "name",
        5,
    )
    .await;
    assert_eq!(
        r,
        [
            vec!["alpha", "Beta"],
            vec!["delta", "Epsilon"],
            vec!["Gamma"]
        ]
    );
}

#[actix_web::test]
async fn subscriptions_sort_by_status_then_another_criterion_and_orders_too() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "sorting-subscriptions").await;
    let basic = app.monthly(&token, org, "Basic", 1000).await;
    let pro = app.monthly(&token, org, "Pro", 3000).await;
    let ann = app.customer(&token, org, "ann@example.com").await;
    let bob = app.customer(&token, org, "bob@example.com").await;
    let cid = app.customer(&token, org, "cid@example.com").await;
    let dan = app.customer(&token, org, "dan@example.com").await;
    let h = Duration::hours(1);
    let plan = [
        (&basic, &ann, None),
        (&pro, &bob, Some(json!({"revoke": true}))),
        (&basic, &cid, None),
        (&pro, &ann, Some(json!({"cancel_at_period_end": true}))),
        (&pro, &dan, None),
        (&basic, &bob, Some(json!({"revoke": true}))),
    ];
    let mut ids = Vec::new();
    for (i, (product, customer, change)) in plan.into_iter().enumerate() {
        let s = app
            .subscribe(purchase(product, customer, None), t0() + h * i as i32)
            .await;
        if let Some(change) = change {
            app.patch_json(&format!("{SUBSCRIPTIONS}{}", s.id), Some(&token), &change)
                .await
                .expect(200);
        }
        ids.push(s.id.to_string());
    }
    let s = |n: usize| ids[n - 1].clone();
    // Statuses: s1, s3, s5 active; s4 active and set to cancel; s2, s6 canceled.

    // Status descending, then the start ascending (the status alone: newest first).
    let r = walk(
        &app,
        SUBSCRIPTIONS,
        "sorting=-status&sorting=started_at",
        4,
        "id",
        6,
    )
    .await;
    assert_eq!(r, [vec![s(2), s(6), s(4), s(1)], vec![s(3), s(5)]]);
    let r = page(
        &app,
        SUBSCRIPTIONS,
        "sorting=-status&sorting=started_at&limit=4",
    )
    .await;
    assert_eq!(
        field(&r, "status"),
        ["canceled", "canceled", "active", "active"]
    );
    assert_eq!(r.items()[2]["cancel_at_period_end"], true);
    // Then the customer's e-mail: bob's two canceled ones tie, and keep the status index's
    // order (started last first).
    let r = walk(
        &app,
        SUBSCRIPTIONS,
        "sorting=-status&sorting=customer",
        4,
        "id",
        6,
    )
    .await;
    assert_eq!(r, [vec![s(6), s(2), s(4), s(1)], vec![s(3), s(5)]]);
    // Three criteria: status, then amount descending, then product.
    let r = walk(
        &app,
        SUBSCRIPTIONS,
        "sorting=status&sorting=-amount&sorting=product",
        3,
        "id",
        6,
    )
    .await;
    assert_eq!(r, [vec![s(5), s(1), s(3)], vec![s(4), s(2), s(6)]]);
    // A customer filter gathers from its own index and keeps the order.
    let q = format!(
        "customer_id={}&customer_id={}&sorting=-status&sorting=-product",
        ann.id, bob.id
    );
    let r = walk(&app, SUBSCRIPTIONS, &q, 2, "id", 4).await;
    assert_eq!(r, [vec![s(2), s(6)], vec![s(4), s(1)]]);

    // The active ones renew at their period end, all at the same instant: three orders
    // tied on their creation time.
    app.clock.set(t0() + Duration::days(35));
    let report = app.sweep().await;
    assert_eq!(report.renewed, 3, "{report:?}");
    let customers = |r: &Reply| -> Vec<String> {
        r.items()
            .iter()
            .map(|o| o["customer"]["email"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let r = page(&app, ORDERS, "sorting=-created_at&sorting=customer").await;
    assert_eq!(
        customers(&r),
        ["ann@example.com", "cid@example.com", "dan@example.com"]
    );
    let r = page(&app, ORDERS, "sorting=product&sorting=-customer&limit=2").await;
    assert_eq!(customers(&r), ["cid@example.com", "ann@example.com"]);
    assert_eq!(field(&r, "billing_reason"), ["subscription_cycle"; 2]);
    let r = page(
        &app,
        ORDERS,
        "sorting=product&sorting=-customer&limit=2&page=2",
    )
    .await;
    assert_eq!(customers(&r), ["dan@example.com"]);
    assert_eq!(r.items()[0]["product"]["name"], "Pro");
    let q = format!(
        "customer_id={}&customer_id={}&sorting=-amount&sorting=-customer",
        ann.id, cid.id
    );
    let r = page(&app, ORDERS, &q).await;
    assert_eq!(customers(&r), ["cid@example.com", "ann@example.com"]);
}

#[actix_web::test]
async fn organizations_created_together_sort_by_slug() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    for slug in ["kilo", "oscar", "lima", "mike"] {
        app.org(&token, slug).await;
    }
    let r = app
        .get(
            "/v1/organizations/?sorting=created_at&sorting=-name&limit=3",
            Some(&token),
        )
        .await;
    r.expect(200);
    assert_eq!(r.slugs(), ["oscar", "mike", "lima"]);
    assert_eq!((r.total_count(), r.max_page()), (4, 2));
    let r = app
        .get(
            "/v1/organizations/?sorting=created_at&sorting=-name&limit=3&page=2",
            Some(&token),
        )
        .await;
    assert_eq!(r.slugs(), ["kilo"]);
    // A name is unique: the criteria after it change nothing.
    let r = app
        .get(
            "/v1/organizations/?sorting=name&sorting=-created_at",
            Some(&token),
        )
        .await;
    assert_eq!(r.slugs(), ["kilo", "lima", "mike", "oscar"]);
}
