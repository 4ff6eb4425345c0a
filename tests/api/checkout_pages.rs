//! The hosted checkout page (`/checkout/{client_secret}`), its confirmation page and its
//! script, over HTTP: what they show, their headers, the friendly 404 pages, the redirects
//! between them, and the confirmation page's processing and succeeded states.

use chrono::{Duration, Utc};
use reqwest::Method;
use serde_json::{json, Value};
use tollgate::config::Settings;
use tollgate::domain::ids::CheckoutId;
use tollgate_actors::checkout::{Checkout, CheckoutStatus};
use tollgate_actors::license_key::LicenseKey;
use tollgate_actors::ManualClock;
use tollgate_storage::{Batch, Expect};

use crate::checkouts::{
    buyer, by_price, client_path, confirm, create_org, created, id_of, product, secret, seed, with,
    Api,
};
use crate::helpers::{send_checked, spawn_app, spawn_app_with, Reply, TestApp};

/// Pages are read without following redirects, through the OpenAPI check.
pub(crate) async fn page(app: &TestApp, path: &str) -> Reply {
    let c = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(10))
        .build()
        .unwrap();
    send_checked(c.request(Method::GET, app.url(path))).await
}

fn html(r: &Reply) -> &str {
    r.body
        .as_str()
        .unwrap_or_else(|| panic!("not HTML: {}", r.body))
}

#[track_caller]
pub(crate) fn assert_page(r: &Reply, status: u16) -> &str {
    assert_eq!(r.status.as_u16(), status, "{}", r.body);
    assert!(
        r.content_type().starts_with("text/html"),
        "{}",
        r.content_type()
    );
    assert_eq!(r.header("cache-control"), "no-store");
    assert_eq!(r.header("x-frame-options"), "DENY");
    assert!(r
        .header("content-security-policy")
        .contains("frame-ancestors 'none'"));
    let body = html(r);
    assert!(body.contains("name=\"viewport\""), "{body}");
    body
}

pub(crate) fn checkout_path(c: &Value) -> String {
    format!("/checkout/{}", secret(c))
}

fn confirmation_path(c: &Value) -> String {
    format!("/checkout/{}/confirmation", secret(c))
}

#[actix_web::test]
async fn the_checkout_page_shows_the_product_the_price_and_the_seller() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "pages").await;

    let c = created(api, &by_price(&cat.ebook_price)).await;
    assert_eq!(c["url"], app.url(&checkout_path(&c)));
    let r = page(&app, &checkout_path(&c)).await;
    let body = assert_page(&r, 200);
    for needle in [
        "Ebook",
        "Org pages",
        "$25.00",
        "Pay $25.00",
        "id=\"test-card\"",
        "value=\"tok_visa\"",
        "tok_decline",
        "id=\"discount_code\"",
        "id=\"customer_email\"",
        "id=\"country\"",
        "<option value=\"FR\">FR</option>",
        "License",
        "novalidate",
    ] {
        assert!(body.contains(needle), "missing {needle:?} in {body}");
    }
    let csp = r.header("content-security-policy");
    assert!(csp.contains("script-src 'self';"), "{csp}");
    assert!(csp.contains("connect-src 'self';"), "{csp}");
    assert_eq!(r.header("referrer-policy"), "same-origin");

    // The script it loads is ours, cached for a year.
    let start = body
        .find("/checkout/assets/checkout.js?v=")
        .expect("the script tag");
    let end = start + body[start..].find('"').unwrap();
    let script = page(&app, &body[start..end]).await;
    assert_eq!(script.status.as_u16(), 200);
    assert!(script.content_type().starts_with("text/javascript"));
    assert!(script.header("cache-control").contains("max-age=31536000"));
    assert!(html(&script).contains("/confirm"));

    // A subscription shows its interval; a free product needs no card.
    let monthly = created(api, &by_price(&cat.monthly)).await;
    let body = page(&app, &checkout_path(&monthly)).await;
    let body = assert_page(&body, 200).to_string();
    assert!(body.contains("Acme Pro"), "{body}");
    assert!(body.contains("Subscribe $15.00/month"), "{body}");

    let free = created(api, &by_price(&cat.free_price)).await;
    let r = page(&app, &checkout_path(&free)).await;
    let body = assert_page(&r, 200);
    assert!(body.contains("Get it free"), "{body}");
    assert!(!body.contains("id=\"test-card\""), "{body}");
    assert!(!body.contains("id=\"discount_code\""), "{body}");

    // Pay what you want: an amount input within the bounds, at the preset.
    let tip = created(api, &by_price(&cat.tip_price)).await;
    let r = page(&app, &checkout_path(&tip)).await;
    let body = assert_page(&r, 200);
    assert!(body.contains("id=\"amount\""), "{body}");
    assert!(body.contains("min=\"10.00\""), "{body}");
    assert!(body.contains("max=\"50.00\""), "{body}");
    assert!(body.contains("value=\"42.42\""), "{body}");
    assert!(!body.contains("id=\"discount_code\""), "{body}");

    // No discount box when the checkout does not take codes.
    let closed = created(
        api,
        &with(
            by_price(&cat.ebook_price),
            json!({"allow_discount_codes": false}),
        ),
    )
    .await;
    let r = page(&app, &checkout_path(&closed)).await;
    assert!(!assert_page(&r, 200).contains("id=\"discount_code\""));
}

#[actix_web::test]
async fn the_checkout_page_lists_the_products_custom_fields_and_escapes_text() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = create_org(api, "fields").await;
    let field = api
        .posted(
            "/v1/custom-fields/",
            &json!({"type": "select", "slug": "seats", "name": "Seats <b>", "organization_id": org,
                    "properties": {"options": [{"value": "one", "label": "One seat"}, {"value": "team", "label": "A team"}]}}),
            201,
        )
        .await;
    let p = api
        .posted(
            "/v1/products/",
            &json!({"name": "Widget <script>alert(1)</script>", "organization_id": org,
                    "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 1000, "price_currency": "usd"}],
                    "attached_custom_fields": [{"custom_field_id": id_of(&field), "required": true}]}),
            201,
        )
        .await;
    let price = p["prices"][0]["id"].as_str().unwrap();
    let c = created(
        api,
        &with(
            by_price(price),
            json!({"custom_field_data": {"seats": "team"}}),
        ),
    )
    .await;
    let r = page(&app, &checkout_path(&c)).await;
    let body = assert_page(&r, 200);
    assert!(body.contains("id=\"cf-seats\""), "{body}");
    assert!(
        body.contains("<option value=\"team\" selected>A team</option>"),
        "{body}"
    );
    assert!(
        body.contains("Seats &#60;b&#62;") || body.contains("Seats &lt;b&gt;"),
        "{body}"
    );
    assert!(!body.contains("<script>alert(1)"), "{body}");
    assert!(body.contains("Pay $10.00"), "{body}");
}

/// A monthly product sold by the seat: 1 to 4 seats at $10.00 each, 5 to 10 at $8.00.
async fn seat_checkout(api: Api<'_>, slug: &str) -> Value {
    let org = create_org(api, slug).await;
    let p = api
        .posted(
            "/v1/products/",
            &json!({"name": "Team plan", "organization_id": org, "recurring_interval": "month",
                    "prices": [{"amount_type": "seat_based", "price_currency": "usd",
                                "seat_tiers": {"tiers": [
                                    {"min_seats": 1, "max_seats": 4, "price_per_seat": 1000},
                                    {"min_seats": 5, "max_seats": 10, "price_per_seat": 800}]}}]}),
            201,
        )
        .await;
    created(api, &by_price(p["prices"][0]["id"].as_str().unwrap())).await
}

#[actix_web::test]
async fn the_checkout_page_sells_seats_at_the_rate_of_their_tier() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let c = seat_checkout(api, "seat-page").await;

    // The fewest seats at first: the first tier's rate, an input bounded by the tiers.
    let r = page(&app, &checkout_path(&c)).await;
    let body = assert_page(&r, 200);
    for needle in [
        r#"id="price">$10.00 per seat/month</p>"#,
        r#"id="seats" name="seats" type="number""#,
        r#"min="1" max="10" value="1""#,
        "From 1 to 10 seats.",
        r#"id="err-seats""#,
        "1–4 seats: $10.00 per seat/month",
        "5–10 seats: $8.00 per seat/month",
        r#"id="summary-seats">1</td>"#,
        "Subscribe $10.00/month",
    ] {
        assert!(body.contains(needle), "missing {needle:?} in {body}");
    }
    assert!(!body.contains(r#"id="discount_code""#), "{body}");

    // The page's update path: six seats are priced at the second tier's rate.
    let path = client_path(&secret(&c));
    let r = api.patch(&path, None, &json!({"seats": 6})).await;
    r.expect(200);
    assert_eq!(r.body["seats"], 6);
    assert_eq!(r.body["amount"], 4800);
    let r = page(&app, &checkout_path(&c)).await;
    let body = assert_page(&r, 200);
    for needle in [
        r#"id="price">$8.00 per seat/month</p>"#,
        r#"value="6""#,
        r#"id="summary-seats">6</td>"#,
        r#"<li data-min="5" data-max="10" data-rate="$8.00 per seat/month" class="current">"#,
        "Subscribe $48.00/month",
    ] {
        assert!(body.contains(needle), "missing {needle:?} in {body}");
    }

    // Bad counts are refused at `seats` with a message the page shows; nothing changes.
    for (bad, msg) in [
        (json!(0), "greater than or equal to 1"),
        (json!(11), "less than or equal to 10"),
        (json!("many"), "integer"),
        (json!(2.5), "integer"),
    ] {
        let r = api.patch(&path, None, &json!({"seats": bad})).await;
        let item = r.expect_invalid_at(json!(["body", "seats"]));
        assert!(
            item["msg"].as_str().unwrap_or_default().contains(msg),
            "{bad}: {item}"
        );
    }
    let r = page(&app, &checkout_path(&c)).await;
    let body = assert_page(&r, 200);
    assert!(body.contains("Subscribe $48.00/month"), "{body}");
    assert!(body.contains(r#"value="6""#), "{body}");

    // The script sends the count, says so when it is not a whole number, and is the one
    // the page loads.
    let start = body.find("/checkout/assets/checkout.js?v=").unwrap();
    let end = start + body[start..].find('"').unwrap();
    let script = page(&app, &body[start..end]).await;
    let script = html(&script);
    assert!(script.contains("{ seats: n }"), "{script}");
    assert!(script.contains(r#"tr("seats-whole")"#), "{script}");
    assert!(
        body.contains(r#"data-seats-whole="Enter a whole number of seats.""#),
        "{body}"
    );

    // A price that is not seat-based has no seats input.
    let cat = seed(api, "seat-page-fixed").await;
    let fixed = created(api, &by_price(&cat.ebook_price)).await;
    let r = page(&app, &checkout_path(&fixed)).await;
    let body = assert_page(&r, 200);
    assert!(!body.contains(r#"id="seats""#), "{body}");
    assert!(!body.contains("per seat"), "{body}");
}

/// Issue 54: a checkout created with an `embed_origin` may be framed by that origin only
/// (its pages name it in `frame-ancestors`, without `X-Frame-Options`); any other
/// checkout, and an `embed_origin` that is not an origin, is never framed.
#[actix_web::test]
async fn a_checkout_is_framed_only_by_its_own_embed_origin() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "framed").await;
    let framed = |origin: &str| with(by_price(&cat.ebook_price), json!({"embed_origin": origin}));
    for (origin, ancestor) in [
        ("https://shop.example", "https://shop.example"),
        (
            "https://shop.example/pricing?plan=pro",
            "https://shop.example",
        ),
        ("http://localhost:3000", "http://localhost:3000"),
        ("https://shop.example:8443/", "https://shop.example:8443"),
    ] {
        let c = created(api, &framed(origin)).await;
        for path in [checkout_path(&c), confirmation_path(&c)] {
            if path.ends_with("/confirmation") {
                confirm(api, &secret(&c), &buyer("ada@example.com"))
                    .await
                    .expect(200);
            }
            let r = page(&app, &path).await;
            assert_eq!(r.status.as_u16(), 200, "{path}: {}", r.body);
            let csp = r.header("content-security-policy");
            assert!(
                csp.contains(&format!("frame-ancestors {ancestor}")),
                "{origin}: {csp}"
            );
            assert!(!csp.contains("frame-ancestors 'none'"), "{csp}");
            assert!(r.headers.get("x-frame-options").is_none(), "{origin}");
        }
    }
    // Not an origin: never framed, and nothing of it reaches the header.
    for origin in [
        "javascript:alert(1)",
        "https://a.example; script-src *",
        "https://a.example;script-src",
        "shop.example",
        "ftp://shop.example",
    ] {
        let c = created(api, &framed(origin)).await;
        let r = page(&app, &checkout_path(&c)).await;
        assert_page(&r, 200);
        let csp = r.header("content-security-policy");
        assert!(!csp.contains("script-src *"), "{csp}");
        assert!(!csp.contains("a.example"), "{csp}");
        assert!(!csp.contains("alert"), "{csp}");
    }
    // Without one, the page is never framed (`assert_page`).
    let c = created(api, &by_price(&cat.ebook_price)).await;
    assert_page(&page(&app, &checkout_path(&c)).await, 200);
}

#[actix_web::test]
async fn unknown_secrets_get_a_friendly_404_page() {
    let app = spawn_app().await;
    for path in [
        "/checkout/polar_c_unknown",
        "/checkout/polar_c_unknown/confirmation",
    ] {
        let r = page(&app, path).await;
        let body = assert_page(&r, 404);
        assert!(body.contains("Checkout not found"), "{body}");
    }
}

#[actix_web::test]
async fn the_confirmation_page_follows_the_checkout() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "confirm-page").await;
    let c = created(
        api,
        &with(
            by_price(&cat.ebook_price),
            json!({"success_url": "https://shop.example/thanks?id={CHECKOUT_ID}"}),
        ),
    )
    .await;

    // Open: back to the checkout page.
    let r = page(&app, &confirmation_path(&c)).await;
    assert_eq!(r.status.as_u16(), 303);
    assert_eq!(r.header("location"), checkout_path(&c));

    let r = confirm(api, &secret(&c), &buyer("ada@example.com")).await;
    r.expect(200);

    // Confirmed: the checkout page sends the buyer on.
    let r = page(&app, &checkout_path(&c)).await;
    assert_eq!(r.status.as_u16(), 303);
    assert_eq!(r.header("location"), confirmation_path(&c));

    let r = page(&app, &confirmation_path(&c)).await;
    let body = assert_page(&r, 200);
    let customer = r_customer(&app, &c).await;
    let key = app
        .state
        .store
        .scan::<LicenseKey>()
        .await
        .unwrap()
        .into_iter()
        .map(|k| k.value)
        .find(|k| k.customer_id.to_string() == customer)
        .expect("the purchase's license key");
    assert!(body.contains(&key.key), "{} not in {body}", key.key);
    assert!(body.contains("Thank you"), "{body}");
    assert!(body.contains("$25.00"), "{body}");
    assert!(body.contains("class=\"secondary copy\""), "{body}");
    assert!(
        body.contains(&format!(
            "href=\"https://shop.example/thanks?id={}\"",
            id_of(&c)
        )),
        "{body}"
    );
    assert!(!body.contains("http-equiv=\"refresh\""), "{body}");
}

async fn r_customer(app: &TestApp, c: &Value) -> String {
    let id = CheckoutId(id_of(c).parse().unwrap());
    let stored = app
        .state
        .store
        .get::<Checkout>(&id.key())
        .await
        .unwrap()
        .unwrap();
    stored.value.customer_id.unwrap().to_string()
}

#[actix_web::test]
async fn a_confirmed_checkout_shows_a_processing_page_that_refreshes_itself() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = create_org(api, "processing").await;
    let p = product(
        api,
        &org,
        "Slow",
        json!([{"type": "one_time", "amount_type": "fixed", "price_amount": 900, "price_currency": "usd"}]),
    )
    .await;
    let c = created(api, &by_price(p["prices"][0]["id"].as_str().unwrap())).await;
    // A payment still settling (as with 3-D Secure): the checkout is `confirmed`.
    let id = CheckoutId(id_of(&c).parse().unwrap());
    let stored = app
        .state
        .store
        .get::<Checkout>(&id.key())
        .await
        .unwrap()
        .unwrap();
    let mut confirmed = stored.value.clone();
    confirmed.status = CheckoutStatus::Confirmed;
    let mut batch = Batch::new();
    batch.put(&confirmed, Expect::Rev(stored.rev)).unwrap();
    app.state.store.commit_durable(&batch).await.unwrap();

    let r = page(&app, &confirmation_path(&c)).await;
    let body = assert_page(&r, 200);
    assert!(body.contains("Processing your payment"), "{body}");
    assert!(
        body.contains("<meta http-equiv=\"refresh\" content=\"2\">"),
        "{body}"
    );
}

#[actix_web::test]
async fn expired_checkouts_get_a_404_page_but_a_paid_one_keeps_its_confirmation() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings.jobs.sweep_interval_secs = 24 * 3600;
    let (clock, shared) = ManualClock::shared(Utc::now());
    let app = spawn_app_with(dir, settings, shared).await;
    let api = Api::of(&app);
    let cat = seed(api, "expiry").await;
    let open = created(api, &by_price(&cat.ebook_price)).await;
    let paid = created(api, &by_price(&cat.ebook_price)).await;
    confirm(api, &secret(&paid), &buyer("bob@example.com"))
        .await
        .expect(200);

    clock.advance(Duration::hours(2));

    for path in [checkout_path(&open), confirmation_path(&open)] {
        let r = page(&app, &path).await;
        let body = assert_page(&r, 404);
        assert!(body.contains("expired"), "{body}");
    }
    // The buyer may come back to the confirmation page later.
    let r = page(&app, &confirmation_path(&paid)).await;
    let body = assert_page(&r, 200);
    assert!(body.contains("Thank you"), "{body}");
    let r = page(&app, &checkout_path(&paid)).await;
    assert_eq!(r.status.as_u16(), 303);
}
