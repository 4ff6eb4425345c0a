//! The CSV exports: `GET /v1/orders/export`, `/v1/subscriptions/export`,
//! `/v1/customers/export` (Polar's) and `/v1/license-keys/export` (Tollgate's own): the
//! header row and the column order asked for, the filters, dates in the time zone asked for,
//! RFC 4180 quoting and the formula guard, many pages streamed, 422s in the one error
//! shape, scopes and tenancy; and the dashboard's download links with the seller's session.

use chrono::{DateTime, Duration, Utc};
use reqwest::Method;
use serde_json::json;
use tollgate::auth::Scope;
use tollgate::domain::customer::{Address, Customer};
use tollgate::domain::ids::{OrderId, OrganizationId};
use tollgate::domain::order::{BillingReason, Order, OrderStatus};
use tollgate::domain::product::Product;
use tollgate_storage::{Batch, Expect};

use crate::subscriptions::{purchase, spawn_app_with_clock, t0, ClockApp};

/// An order as checkout completion writes it.
fn order(product: &Product, customer: &Customer, amount: i64, at: DateTime<Utc>) -> Order {
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
        billing_reason: BillingReason::Purchase,
        billing_address: customer.billing_address.clone(),
        customer_id: customer.id,
        product_id: product.id,
        product_price_id: product.prices[0].id,
        recurring: false,
        discount_id: None,
        subscription_id: None,
        checkout_id: None,
        metadata: Default::default(),
        custom_field_data: Default::default(),
        customer_email: customer.email.clone(),
        product_name: product.name.clone(),
        discount_name: None,
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

async fn one_time(app: &ClockApp, org: OrganizationId, name: &str, amount: i64) -> Product {
    app.product(
        &app.token,
        org,
        name,
        json!({"type": "one_time", "amount_type": "fixed", "price_amount": amount, "price_currency": "usd"}),
    )
    .await
}

/// A raw GET: (status, content type, body).
async fn fetch(app: &ClockApp, path: &str, token: Option<&str>) -> (u16, String, String) {
    let resp = app.request(Method::GET, path, token).send().await.unwrap();
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, content_type, resp.text().await.unwrap())
}

/// The CSV of a 200 answer, parsed by an independent reader: (header, rows).
pub(crate) async fn csv_of(
    app: &ClockApp,
    path: &str,
    token: &str,
) -> (Vec<String>, Vec<Vec<String>>) {
    let (status, content_type, body) = fetch(app, path, Some(token)).await;
    assert_eq!(status, 200, "{path}: {body}");
    assert!(content_type.starts_with("text/csv"), "{content_type}");
    assert!(body.ends_with("\r\n"), "records end with CRLF: {body:?}");
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(body.as_bytes());
    let header = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

fn column(rows: &[Vec<String>], n: usize) -> Vec<&str> {
    rows.iter().map(|r| r[n].as_str()).collect()
}

async fn put_all<R: tollgate_storage::Record>(app: &ClockApp, records: &[R]) {
    let mut batch = Batch::new();
    for r in records {
        batch.put(r, Expect::Absent).unwrap();
    }
    app.state.store.commit_durable(&batch).await.unwrap();
}

#[actix_web::test]
async fn orders_export_polars_columns_in_order_filtered_and_in_the_time_zone() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "export-orders").await;
    let widget = one_time(&app, org, "Widget", 2000).await;
    let gadget = one_time(&app, org, "Gadget", 1999).await;
    let mut ann = app.customer(&token, org, "ann@example.com").await;
    ann.billing_address = Some(Address {
        country: "FR".into(),
        ..Default::default()
    });
    let first = order(&widget, &ann, 2000, t0());
    let second = order(&gadget, &ann, 1999, t0() + Duration::days(1));
    let mut refunded = order(&widget, &ann, 2000, t0() + Duration::days(2));
    refunded.status = OrderStatus::Refunded;
    refunded.refunded_amount = 2000;
    put_all(&app, &[first.clone(), second.clone(), refunded.clone()]).await;

    // Polar's default columns and headers, newest first; amounts as Python's cents / 100.
    let (header, rows) = csv_of(&app, "/v1/orders/export", &token).await;
    assert_eq!(
        header,
        [
            "Email",
            "Created At",
            "Product",
            "Net Amount",
            "Currency",
            "Status",
            "Invoice number"
        ]
    );
    assert_eq!(rows.len(), 3);
    assert_eq!(column(&rows, 0), ["ann@example.com"; 3]);
    assert_eq!(
        column(&rows, 1),
        [
            "2025-02-02T12:00:00+00:00",
            "2025-02-01T12:00:00+00:00",
            "2025-01-31T12:00:00+00:00"
        ]
    );
    assert_eq!(column(&rows, 2), ["Widget", "Gadget", "Widget"]);
    assert_eq!(column(&rows, 3), ["20.0", "19.99", "20.0"]);
    assert_eq!(column(&rows, 4), ["usd"; 3]);
    assert_eq!(column(&rows, 5), ["refunded", "paid", "paid"]);
    assert!(rows.iter().all(|r| r[6].starts_with("TG-")), "{rows:?}");

    // The columns asked for, in the order asked for.
    let (header, rows) = csv_of(
        &app,
        "/v1/orders/export?columns=refunded_amount&columns=billing_country&columns=status&columns=billing_reason",
        &token,
    )
    .await;
    assert_eq!(
        header,
        [
            "Refunded Amount",
            "Billing Country",
            "Status",
            "Billing Reason"
        ]
    );
    assert_eq!(rows[0], ["20.0", "FR", "refunded", "purchase"]);
    assert_eq!(rows[2], ["0.0", "FR", "paid", "purchase"]);

    // Dates in the IANA time zone asked for.
    let (_, rows) = csv_of(
        &app,
        "/v1/orders/export?timezone=America/New_York&columns=created_at",
        &token,
    )
    .await;
    assert_eq!(rows[2], ["2025-01-31T07:00:00-05:00"]);

    // Filters: product, status, the creation window (bounds with their offset).
    let (_, rows) = csv_of(
        &app,
        &format!("/v1/orders/export?product_id={}&columns=product", gadget.id),
        &token,
    )
    .await;
    assert_eq!(rows, [["Gadget"]]);
    let (_, rows) = csv_of(
        &app,
        "/v1/orders/export?status=paid&status=void&columns=status",
        &token,
    )
    .await;
    assert_eq!(rows, [["paid"], ["paid"]]);
    let (_, rows) = csv_of(
        &app,
        "/v1/orders/export?created_after=2025-02-01T00:00:00%2B01:00&created_before=2025-02-02T00:00:00Z&columns=net_amount",
        &token,
    )
    .await;
    assert_eq!(rows, [["19.99"]]);
    // The file is named after the window, as Polar names it.
    let resp = app
        .request(
            Method::GET,
            "/v1/orders/export?created_after=2025-02-01T00:00:00Z",
            Some(&token),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.headers()["content-disposition"],
        "attachment; filename=tollgate-orders-2025-02-01.csv"
    );
}

#[actix_web::test]
async fn an_export_refuses_bad_columns_time_zones_and_dates_in_the_error_shape() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    for (path, loc) in [
        (
            "/v1/orders/export?columns=password",
            json!(["query", "columns", 0]),
        ),
        (
            "/v1/orders/export?columns=email&columns=nope",
            json!(["query", "columns", 1]),
        ),
        (
            "/v1/orders/export?timezone=Mars/Olympus",
            json!(["query", "timezone"]),
        ),
        (
            "/v1/orders/export?created_after=2025-01-01T00:00:00",
            json!(["query", "created_after"]),
        ),
        (
            "/v1/orders/export?created_before=yesterday",
            json!(["query", "created_before"]),
        ),
        (
            "/v1/orders/export?status=lost",
            json!(["query", "status", 0]),
        ),
        (
            "/v1/orders/export?organization_id=x",
            json!(["query", "organization_id"]),
        ),
        (
            "/v1/subscriptions/export?started_after=2025-01-01",
            json!(["query", "started_after"]),
        ),
        (
            "/v1/subscriptions/export?cancel_at_period_end=maybe",
            json!(["query", "cancel_at_period_end"]),
        ),
        (
            "/v1/subscriptions/export?columns=email&columns=x",
            json!(["query", "columns", 1]),
        ),
        (
            "/v1/customers/export?timezone=Nowhere",
            json!(["query", "timezone"]),
        ),
        (
            "/v1/license-keys/export?columns=key",
            json!(["query", "columns", 0]),
        ),
        (
            "/v1/license-keys/export?status=stolen",
            json!(["query", "status", 0]),
        ),
    ] {
        let r = app.get(path, Some(&token)).await;
        r.expect_invalid_at(loc);
    }
}

#[actix_web::test]
async fn cells_are_quoted_and_formulas_are_defused() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "export-quoting").await;
    let evil = one_time(&app, org, "=HYPERLINK(\"http://x\",\"y\")", 500).await;
    let r = app
        .post_json(
            "/v1/customers/",
            Some(&token),
            &json!({"email": "bob@example.com", "name": "Doe, \"Jim\"", "organization_id": org}),
        )
        .await;
    r.expect(201);
    let bob = app
        .state
        .store
        .get::<Customer>(
            &r.body["id"]
                .as_str()
                .unwrap()
                .parse::<tollgate::domain::ids::CustomerId>()
                .unwrap()
                .key(),
        )
        .await
        .unwrap()
        .unwrap()
        .value;
    put_all(&app, &[order(&evil, &bob, 500, t0())]).await;
    let (_, body_type, body) = fetch(
        &app,
        "/v1/orders/export?columns=product&columns=customer_name",
        Some(&token),
    )
    .await;
    assert!(body_type.starts_with("text/csv"));
    // The raw bytes: the formula with a leading quote, the name quoted with its quotes
    // doubled (a name cannot hold a line break; the unit tests quote one).
    assert_eq!(
        body,
        "Product,Customer Name\r\n\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",\"Doe, \"\"Jim\"\"\"\r\n"
    );
    let (_, rows) = csv_of(
        &app,
        "/v1/orders/export?columns=product&columns=customer_name",
        &token,
    )
    .await;
    assert_eq!(rows, [["'=HYPERLINK(\"http://x\",\"y\")", "Doe, \"Jim\""]]);
}

#[actix_web::test]
async fn a_long_export_is_streamed_page_after_page_and_holds_every_order() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "export-many").await;
    let widget = one_time(&app, org, "Widget", 100).await;
    let ann = app.customer(&token, org, "ann@example.com").await;
    let n = tollgate::app::exports::PAGE * 2 + 5;
    let orders: Vec<Order> = (0..n)
        .map(|i| {
            order(
                &widget,
                &ann,
                100 + i as i64,
                t0() + Duration::minutes(i as i64),
            )
        })
        .collect();
    put_all(&app, &orders).await;
    let resp = app
        .request(
            Method::GET,
            "/v1/orders/export?columns=net_amount",
            Some(&token),
        )
        .send()
        .await
        .unwrap();
    // Streamed: no length known up front.
    assert!(resp.headers().get("content-length").is_none());
    assert_eq!(
        resp.headers()["transfer-encoding"].to_str().unwrap(),
        "chunked"
    );
    let (_, rows) = csv_of(&app, "/v1/orders/export?columns=net_amount", &token).await;
    let want: Vec<String> = (0..n)
        .rev()
        .map(|i| tollgate::routes::exports::amount(100 + i as i64))
        .collect();
    assert_eq!(column(&rows, 0), want);
}

#[actix_web::test]
async fn pages_a_filter_empties_do_not_end_the_export() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "export-sparse").await;
    let widget = one_time(&app, org, "Widget", 100).await;
    let gadget = one_time(&app, org, "Gadget", 700).await;
    let ann = app.customer(&token, org, "ann@example.com").await;
    // Three old gadget orders, then more than two pages of newer widget orders: the first
    // pages read keep nothing, and the export goes on past them.
    let n = tollgate::app::exports::PAGE * 2 + 5;
    let mut orders: Vec<Order> = (0..3)
        .map(|i| order(&gadget, &ann, 700, t0() + Duration::minutes(i)))
        .collect();
    orders.extend((0..n).map(|i| order(&widget, &ann, 100, t0() + Duration::hours(1 + i as i64))));
    put_all(&app, &orders).await;
    let (_, rows) = csv_of(
        &app,
        &format!("/v1/orders/export?product_id={}&columns=product", gadget.id),
        &token,
    )
    .await;
    assert_eq!(rows, [["Gadget"], ["Gadget"], ["Gadget"]]);
}

#[actix_web::test]
async fn subscriptions_export_polars_columns_and_filters() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "export-subs").await;
    let pro = app.monthly(&token, org, "Pro", 1500).await;
    let ann = app.customer(&token, org, "ann@example.com").await;
    let bob = app.customer(&token, org, "bob@example.com").await;
    let first = app.subscribe(purchase(&pro, &ann, None), t0()).await;
    let mut later = app
        .subscribe(purchase(&pro, &bob, None), t0() + Duration::days(3))
        .await;
    later.cancel_at_period_end = true;
    let mut batch = Batch::new();
    batch.put(&later, Expect::Any).unwrap();
    app.state.store.commit_durable(&batch).await.unwrap();

    let (header, rows) = csv_of(&app, "/v1/subscriptions/export", &token).await;
    assert_eq!(
        header,
        [
            "Email",
            "Started At",
            "Product",
            "Amount",
            "Currency",
            "Status",
            "Billing Interval"
        ]
    );
    assert_eq!(column(&rows, 0), ["bob@example.com", "ann@example.com"]);
    assert_eq!(column(&rows, 1)[1], "2025-01-31T12:00:00+00:00");
    assert_eq!(column(&rows, 2), ["Pro", "Pro"]);
    assert_eq!(column(&rows, 3), ["15.0", "15.0"]);
    assert_eq!(
        column(&rows, 5),
        [later.status.as_str(), first.status.as_str()]
    );
    assert_eq!(column(&rows, 6), ["month", "month"]);

    let (header, rows) = csv_of(
        &app,
        "/v1/subscriptions/export?cancel_at_period_end=true&columns=cancel_at_period_end&columns=email&columns=seats",
        &token,
    )
    .await;
    assert_eq!(header, ["Cancels At Period End", "Email", "Seats"]);
    assert_eq!(rows, [["true", "bob@example.com", ""]]);
    let (_, rows) = csv_of(
        &app,
        "/v1/subscriptions/export?started_before=2025-02-01T00:00:00%2B00:00&columns=email&timezone=Asia/Tokyo&columns=current_period_start",
        &token,
    )
    .await;
    assert_eq!(rows, [["ann@example.com", "2025-01-31T21:00:00+09:00"]]);
}

#[actix_web::test]
async fn customers_and_license_keys_export_their_columns_never_the_key() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "export-people").await;
    let pro = app.monthly(&token, org, "Pro", 1500).await;
    let r = app
        .post_json(
            "/v1/customers/",
            Some(&token),
            &json!({"email": "ann@example.com", "name": "@ann", "external_id": "u-1",
                    "metadata": {"plan": "gold"}, "organization_id": org,
                    "billing_address": {"country": "DE", "city": "Berlin", "line1": "-1 Way"}}),
        )
        .await;
    r.expect(201);
    let ann_id = r.body["id"].as_str().unwrap().to_string();
    let (header, rows) = csv_of(&app, "/v1/customers/export", &token).await;
    assert_eq!(
        header,
        [
            "ID",
            "External ID",
            "Created At",
            "Email",
            "Name",
            "Tax ID",
            "Billing Address Line 1",
            "Billing Address Line 2",
            "Billing Address City",
            "Billing Address State",
            "Billing Address Zip",
            "Billing Address Country",
            "Metadata"
        ]
    );
    assert_eq!(
        rows,
        [[
            ann_id.as_str(),
            "u-1",
            "2025-01-31T12:00:00+00:00",
            "ann@example.com",
            "'@ann",
            "",
            "'-1 Way",
            "",
            "Berlin",
            "",
            "",
            "DE",
            "{\"plan\":\"gold\"}"
        ]]
    );

    let ann = app
        .state
        .store
        .get::<Customer>(
            &ann_id
                .parse::<tollgate::domain::ids::CustomerId>()
                .unwrap()
                .key(),
        )
        .await
        .unwrap()
        .unwrap()
        .value;
    let s = app.subscribe(purchase(&pro, &ann, None), t0()).await;
    let key = app.key(&ann, s.id).await;
    let stored = app
        .state
        .store
        .get::<tollgate_actors::license_key::LicenseKey>(&key.key())
        .await
        .unwrap()
        .unwrap()
        .value;
    let (status, _, body) = fetch(&app, "/v1/license-keys/export", Some(&token)).await;
    assert_eq!(status, 200);
    assert!(
        !body.contains(&stored.key),
        "the full key must never be exported"
    );
    let (header, rows) = csv_of(&app, "/v1/license-keys/export", &token).await;
    assert_eq!(
        header,
        [
            "ID",
            "Key",
            "Email",
            "Benefit",
            "Status",
            "Usage",
            "Usage Limit",
            "Validations",
            "Activation Limit",
            "Activations",
            "Expires At",
            "Created At",
            "Last Validated At"
        ]
    );
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0], key.to_string());
    assert_eq!(rows[0][1], stored.display_key());
    assert!(rows[0][1].starts_with("****-"));
    assert_eq!(rows[0][2], "ann@example.com");
    assert_eq!(rows[0][4], "granted");
    let (_, rows) = csv_of(
        &app,
        "/v1/license-keys/export?status=revoked&columns=id",
        &token,
    )
    .await;
    assert!(rows.is_empty());
}

#[actix_web::test]
async fn exports_need_their_scope_and_show_only_the_callers_organizations() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "export-owner").await;
    let widget = one_time(&app, org, "Widget", 2000).await;
    let pro = app.monthly(&token, org, "Pro", 1500).await;
    let ann = app.customer(&token, org, "ann@example.com").await;
    put_all(&app, &[order(&widget, &ann, 2000, t0())]).await;
    let s = app.subscribe(purchase(&pro, &ann, None), t0()).await;
    app.key(&ann, s.id).await;
    let exports = [
        ("/v1/orders/export", Scope::OrdersRead, "orders:read"),
        (
            "/v1/subscriptions/export",
            Scope::SubscriptionsRead,
            "subscriptions:read",
        ),
        (
            "/v1/customers/export",
            Scope::CustomersRead,
            "customers:read",
        ),
        (
            "/v1/license-keys/export",
            Scope::LicenseKeysRead,
            "license_keys:read",
        ),
    ];
    for (i, (path, scope, name)) in exports.into_iter().enumerate() {
        // No credentials: 401.
        let r = app.get(path, None).await;
        assert_eq!(r.expect_error(401), "Unauthorized", "{path}");
        // Another resource's scope: 403 naming the one needed.
        let wrong_scope = if scope == Scope::OrdersRead {
            Scope::ProductsRead
        } else {
            Scope::OrdersRead
        };
        let wrong = app
            .user_with_scopes(&format!("wrong{i}@example.com"), &[wrong_scope])
            .await;
        let r = app.get(path, Some(&wrong)).await;
        assert_eq!(r.expect_error(403), "insufficient_scope", "{path}");
        assert!(r.www_authenticate().contains(name), "{path}");
        // The owner sees its record.
        let (_, rows) = csv_of(&app, path, &token).await;
        assert_eq!(rows.len(), 1, "{path}");
        // A stranger with the right scope: the header and nothing else, even naming the
        // owner's organization.
        let rival = app
            .user_with_scopes(&format!("rival{i}@example.com"), &[scope])
            .await;
        for query in ["", &format!("?organization_id={org}")] {
            let (header, rows) = csv_of(&app, &format!("{path}{query}"), &rival).await;
            assert!(!header.is_empty());
            assert!(rows.is_empty(), "{path}{query}: {rows:?}");
        }
        // The owner naming an organization it does not reach: nothing either.
        let (_, rows) = csv_of(
            &app,
            &format!("{path}?organization_id={}", OrganizationId::new()),
            &token,
        )
        .await;
        assert!(rows.is_empty(), "{path}");
    }
}

#[actix_web::test]
async fn the_dashboards_download_links_give_the_sellers_csv_with_its_session() {
    let app = crate::helpers::spawn_app().await;
    let (mut b, org) = crate::dashboard::seller(&app, "export-seller@example.com", "Exports").await;
    let r = b
        .api(
            Method::POST,
            "/v1/customers/",
            Some(&json!({"email": "ann@example.com", "organization_id": org})),
        )
        .await;
    r.expect(201);
    for (page, link) in [
        ("orders", "/v1/orders/export"),
        ("subscriptions", "/v1/subscriptions/export"),
        ("customers", "/v1/customers/export"),
        ("license-keys", "/v1/license-keys/export"),
    ] {
        let html = b.get(&format!("/dashboard/{org}/{page}")).await;
        assert_eq!(html.status, 200);
        let href = format!("href=\"{link}?organization_id={org}\"");
        assert!(html.body.contains(&href), "{page}: no {href}");
        let csv = b.get(&format!("{link}?organization_id={org}")).await;
        assert_eq!(csv.status, 200, "{link}: {}", csv.body);
        assert!(csv.content_type.starts_with("text/csv"));
        if page == "customers" {
            assert!(csv.body.contains("ann@example.com"), "{}", csv.body);
        }
    }
    // Another seller's session, naming this organization: only the header.
    let (mut other, _) = crate::dashboard::seller(&app, "export-rival@example.com", "Rival").await;
    let csv = other
        .get(&format!("/v1/customers/export?organization_id={org}"))
        .await;
    assert_eq!(csv.status, 200);
    assert!(!csv.body.contains("ann@example.com"));
    assert_eq!(csv.body.lines().count(), 1);
}
