//! Checkout sessions as today's SDKs use them (issue 27): the `/v1/checkouts/…` spellings
//! of every `/v1/checkouts/custom/…` route, answered directly in every API version; the
//! list's filters.

use reqwest::Method;
use serde_json::{json, Value};
use tollgate::auth::Scope;

use crate::checkouts::{buyer, by_price, created, id_of, seed, Api};
use crate::helpers::{spawn_app, Reply, TestApp};

pub(crate) const SESSIONS: &str = "/v1/checkouts/";

/// No header (the default shape), then each version by its header.
const VERSIONS: [Option<&str>; 4] = [None, Some("2026-04"), Some("2026-10"), Some("2027-01")];

/// A client that never follows a redirect: every answer must come straight from the route.
fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(crate::helpers::CLIENT_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("building the HTTP client")
}

/// Sends `method path` with `body` (if any) in `version`, as `token` (if any).
async fn call(
    app: &TestApp,
    http: &reqwest::Client,
    method: Method,
    path: &str,
    token: Option<&str>,
    version: Option<&str>,
    body: Option<&Value>,
) -> Reply {
    let mut req = http.request(method, app.url(path));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(v) = version {
        req = req.header("Polar-Version", v);
    }
    if let Some(b) = body {
        req = req.json(b);
    }
    app.send(req).await
}

/// The version an answer names: the one asked for, `2026-04` without a header.
fn answered_in(r: &Reply, version: Option<&str>) {
    assert_eq!(r.header("polar-version"), version.unwrap_or("2026-04"));
}

#[actix_web::test]
async fn every_checkout_route_has_its_current_spelling_answered_directly_in_every_version() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let catalog = seed(api, "spellings").await;
    let http = no_redirects();
    let token = Some(app.token.as_str());
    for version in VERSIONS {
        let created = call(
            &app,
            &http,
            Method::POST,
            SESSIONS,
            token,
            version,
            Some(&by_price(&catalog.ebook_price)),
        )
        .await;
        created.expect(201);
        answered_in(&created, version);
        let id = id_of(&created.body);
        let secret = created.body["client_secret"].as_str().unwrap().to_string();
        assert!(secret.starts_with("polar_c_"));

        let list = call(
            &app,
            &http,
            Method::GET,
            &format!("{SESSIONS}?organization_id={}", catalog.org),
            token,
            version,
            None,
        )
        .await;
        list.expect(200);
        answered_in(&list, version);
        assert!(list.items().iter().any(|c| c["id"] == id.as_str()));

        let got = call(
            &app,
            &http,
            Method::GET,
            &format!("{SESSIONS}{id}"),
            token,
            version,
            None,
        )
        .await;
        got.expect(200);
        assert_eq!(got.body["client_secret"], secret.as_str());

        let patched = call(
            &app,
            &http,
            Method::PATCH,
            &format!("{SESSIONS}{id}"),
            token,
            version,
            Some(&json!({"metadata": {"round": "one"}})),
        )
        .await;
        patched.expect(200);
        assert_eq!(patched.body["metadata"], json!({"round": "one"}));

        // The client routes ignore any bearer, and need none.
        let client = format!("{SESSIONS}client/{secret}");
        let public = call(&app, &http, Method::GET, &client, None, version, None).await;
        public.expect(200);
        answered_in(&public, version);
        assert_eq!(public.body["id"], id.as_str());
        let updated = call(
            &app,
            &http,
            Method::PATCH,
            &client,
            token,
            version,
            Some(&json!({"customer_name": "Ada Lovelace"})),
        )
        .await;
        updated.expect(200);
        assert_eq!(updated.body["customer_name"], "Ada Lovelace");
        let confirmed = call(
            &app,
            &http,
            Method::POST,
            &format!("{client}/confirm"),
            None,
            version,
            Some(&buyer("ada@example.com")),
        )
        .await;
        confirmed.expect(200);
        answered_in(&confirmed, version);
        assert_eq!(confirmed.body["status"], "confirmed");
        assert!(confirmed.body["customer_session_token"].is_string());

        // The seed-era spelling reads the same checkout.
        let custom = call(
            &app,
            &http,
            Method::GET,
            &format!("/v1/checkouts/custom/{id}"),
            token,
            version,
            None,
        )
        .await;
        custom.expect(200);
        assert_eq!(custom.body["status"], "succeeded");
    }
}

#[actix_web::test]
async fn the_current_spellings_refuse_as_the_seed_era_ones_do() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let catalog = seed(api, "refusals").await;
    let checkout = created(api, &by_price(&catalog.ebook_price)).await;
    let id = id_of(&checkout);
    let http = no_redirects();

    // No token, then a token without the scopes.
    for (method, path) in [
        (Method::GET, SESSIONS.to_string()),
        (Method::POST, SESSIONS.to_string()),
        (Method::GET, format!("{SESSIONS}{id}")),
        (Method::PATCH, format!("{SESSIONS}{id}")),
    ] {
        let r = call(
            &app,
            &http,
            method.clone(),
            &path,
            None,
            None,
            Some(&json!({})),
        )
        .await;
        assert_eq!(r.status, 401, "{method} {path}: {}", r.body);
    }
    let (_, weak) = app
        .new_user_with_scopes("weak@example.com", &[Scope::ProductsRead])
        .await;
    let r = call(
        &app,
        &http,
        Method::GET,
        &format!("{SESSIONS}{id}"),
        Some(&weak),
        None,
        None,
    )
    .await;
    r.expect_error(403);
    let r = call(
        &app,
        &http,
        Method::POST,
        SESSIONS,
        Some(&weak),
        None,
        Some(&by_price(&catalog.ebook_price)),
    )
    .await;
    r.expect_error(403);

    // Another seller reaches none of it.
    let (_, other) = app
        .new_user_with_scopes(
            "other@example.com",
            &[
                Scope::CheckoutsRead,
                Scope::CheckoutsWrite,
                Scope::OrganizationsWrite,
            ],
        )
        .await;
    app.create_org_as(&other, "Other", "other-seller")
        .await
        .expect(201);
    let r = call(
        &app,
        &http,
        Method::GET,
        &format!("{SESSIONS}{id}"),
        Some(&other),
        None,
        None,
    )
    .await;
    r.expect_error(404);
    let r = call(
        &app,
        &http,
        Method::PATCH,
        &format!("{SESSIONS}{id}"),
        Some(&other),
        None,
        Some(&json!({"metadata": {}})),
    )
    .await;
    r.expect_error(404);
    let r = call(&app, &http, Method::GET, SESSIONS, Some(&other), None, None).await;
    r.expect(200);
    assert_eq!(r.total_count(), 0);
    let r = call(
        &app,
        &http,
        Method::POST,
        SESSIONS,
        Some(&other),
        None,
        Some(&by_price(&catalog.ebook_price)),
    )
    .await;
    r.expect_invalid_at(json!(["body", "product_price_id"]));

    // Unknown ids and secrets, malformed bodies.
    let unknown = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";
    let r = call(
        &app,
        &http,
        Method::GET,
        &format!("{SESSIONS}{unknown}"),
        Some(&app.token),
        None,
        None,
    )
    .await;
    r.expect_error(404);
    let r = call(
        &app,
        &http,
        Method::GET,
        &format!("{SESSIONS}client/polar_c_unknown"),
        None,
        None,
        None,
    )
    .await;
    r.expect_error(404);
    let r = call(
        &app,
        &http,
        Method::POST,
        &format!("{SESSIONS}client/polar_c_unknown/confirm"),
        None,
        None,
        Some(&buyer("a@example.com")),
    )
    .await;
    r.expect_error(404);
    let r = call(
        &app,
        &http,
        Method::PATCH,
        &format!(
            "{SESSIONS}client/{}",
            checkout["client_secret"].as_str().unwrap()
        ),
        None,
        None,
        Some(&json!({"customer_email": "not an address"})),
    )
    .await;
    r.expect_invalid_at(json!(["body", "customer_email"]));
}

#[actix_web::test]
async fn the_list_filters_by_customer_status_and_email() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let catalog = seed(api, "filters").await;
    let open = created(api, &by_price(&catalog.ebook_price)).await;
    let bought = created(api, &by_price(&catalog.ebook_price)).await;
    let secret = bought["client_secret"].as_str().unwrap();
    let r = api
        .post(
            &format!("{SESSIONS}client/{secret}/confirm"),
            None,
            &buyer("Grace.Hopper@example.com"),
        )
        .await;
    r.expect(200);
    let customer = api
        .read(&format!("{SESSIONS}{}", id_of(&bought)))
        .await
        .body["customer_id"]
        .as_str()
        .unwrap()
        .to_string();
    let ids = |r: &Reply| -> Vec<String> { r.items().iter().map(id_of).collect() };
    let org = &catalog.org;

    let r = api
        .read(&format!(
            "{SESSIONS}?organization_id={org}&status=succeeded"
        ))
        .await;
    r.expect(200);
    assert_eq!(ids(&r), [id_of(&bought)]);
    assert_eq!(r.total_count(), 1);
    let r = api
        .read(&format!(
            "{SESSIONS}?organization_id={org}&status=open&status=succeeded"
        ))
        .await;
    assert_eq!(r.total_count(), 2);
    let r = api
        .read(&format!("{SESSIONS}?organization_id={org}&status=open"))
        .await;
    assert_eq!(ids(&r), [id_of(&open)]);
    let r = api
        .read(&format!("{SESSIONS}?customer_id={customer}"))
        .await;
    assert_eq!(ids(&r), [id_of(&bought)]);
    let r = api.read(&format!("{SESSIONS}?query=grace.HOPPER")).await;
    assert_eq!(ids(&r), [id_of(&bought)]);
    let r = api.read(&format!("{SESSIONS}?query=nobody")).await;
    assert_eq!(r.total_count(), 0);

    let r = api.read(&format!("{SESSIONS}?status=paid")).await;
    r.expect_invalid_at(json!(["query", "status", 0]));
    let r = api.read(&format!("{SESSIONS}?customer_id=nope")).await;
    r.expect_invalid_at(json!(["query", "customer_id"]));
}

// ---------------------------------------------------------------------------------------
// `products`: checkouts of several products.

fn products(ids: &[&str]) -> Value {
    json!({ "products": ids })
}

fn listed(c: &Value) -> Vec<String> {
    c["products"]
        .as_array()
        .unwrap_or_else(|| panic!("no products in {c}"))
        .iter()
        .map(id_of)
        .collect()
}

#[actix_web::test]
async fn a_checkout_of_several_products_offers_each_with_its_prices() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "several").await;
    let c = api
        .posted(SESSIONS, &products(&[&cat.ebook, &cat.plan, &cat.tip]), 201)
        .await;
    assert_eq!(
        listed(&c),
        [cat.ebook.clone(), cat.plan.clone(), cat.tip.clone()]
    );
    // The first one is selected, at its first price.
    assert_eq!(c["product_id"], cat.ebook.as_str());
    assert_eq!(c["product"]["id"], cat.ebook.as_str());
    assert_eq!(c["product_price_id"], cat.ebook_price.as_str());
    assert_eq!(c["amount"], 2500);
    let prices = c["prices"].as_object().unwrap();
    assert_eq!(prices.len(), 3);
    let ids = |p: &Value| -> Vec<String> { p.as_array().unwrap().iter().map(id_of).collect() };
    assert_eq!(
        ids(&prices[&cat.plan]),
        [cat.monthly.clone(), cat.yearly.clone()]
    );
    assert_eq!(ids(&prices[&cat.ebook]), vec![cat.ebook_price.clone()]);
    assert_eq!(prices[&cat.tip][0]["amount_type"], "custom");
    // Each product is rendered whole, as the selected one is.
    assert_eq!(c["products"][1]["name"], "Acme Pro");
    assert_eq!(c["products"][1]["prices"].as_array().unwrap().len(), 2);
    assert_eq!(c["products"][0], c["product"]);

    // The buyer sees the same list.
    let public = api
        .get(
            &format!("{SESSIONS}client/{}", c["client_secret"].as_str().unwrap()),
            None,
        )
        .await;
    public.expect(200);
    assert_eq!(listed(&public.body), listed(&c));
    assert_eq!(public.body["prices"], c["prices"]);

    // A checkout of one product lists it alone, however it was created.
    for body in [
        products(&[&cat.ebook]),
        json!({"product_id": cat.ebook}),
        by_price(&cat.ebook_price),
    ] {
        let one = created(api, &body).await;
        assert_eq!(listed(&one), vec![cat.ebook.clone()]);
        assert_eq!(one["prices"].as_object().unwrap().len(), 1);
    }
}

#[actix_web::test]
async fn the_buyer_and_the_seller_switch_among_the_products_only() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "switch").await;
    let c = api
        .posted(SESSIONS, &products(&[&cat.ebook, &cat.plan, &cat.tip]), 201)
        .await;
    let id = id_of(&c);
    let secret = c["client_secret"].as_str().unwrap().to_string();
    let client = format!("{SESSIONS}client/{secret}");

    // The buyer picks the plan: its first price, re-priced.
    let r = api
        .patch(&client, None, &json!({"product_id": cat.plan}))
        .await;
    r.expect(200);
    assert_eq!(r.body["product_id"], cat.plan.as_str());
    assert_eq!(r.body["product"]["id"], cat.plan.as_str());
    assert_eq!(r.body["product_price_id"], cat.monthly.as_str());
    assert_eq!(r.body["amount"], 1500);
    assert_eq!(
        listed(&r.body),
        [cat.ebook.clone(), cat.plan.clone(), cat.tip.clone()]
    );
    // Then its yearly price.
    let r = api
        .patch(&client, None, &json!({"product_price_id": cat.yearly}))
        .await;
    r.expect(200);
    assert_eq!(r.body["amount"], 15000);
    // A product and one of its prices at once.
    let r = api
        .patch(
            &client,
            None,
            &json!({"product_id": cat.plan, "product_price_id": cat.monthly}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["product_price_id"], cat.monthly.as_str());
    // The pay-what-you-want product starts at its preset amount.
    let r = api
        .patch(&client, None, &json!({"product_id": cat.tip}))
        .await;
    r.expect(200);
    assert_eq!(r.body["amount"], 4242);
    // A price of another product of the list selects that product.
    let r = api
        .patch(&client, None, &json!({"product_price_id": cat.ebook_price}))
        .await;
    r.expect(200);
    assert_eq!(r.body["product_id"], cat.ebook.as_str());
    assert_eq!(r.body["amount"], 2500);

    // Nothing outside the list.
    let r = api
        .patch(&client, None, &json!({"product_id": cat.free}))
        .await;
    let item = r.expect_invalid_at(json!(["body", "product_id"]));
    assert_eq!(item["msg"], "Product is not available in this checkout.");
    let r = api
        .patch(&client, None, &json!({"product_price_id": cat.free_price}))
        .await;
    r.expect_invalid_at(json!(["body", "product_price_id"]));
    let r = api
        .patch(
            &client,
            None,
            &json!({"product_id": cat.plan, "product_price_id": cat.ebook_price}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "product_price_id"]));
    let r = api
        .patch(
            &client,
            None,
            &json!({"product_id": "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e"}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "product_id"]));
    let r = api
        .patch(&client, None, &json!({"product_id": "nope"}))
        .await;
    r.expect_invalid_at(json!(["body", "product_id"]));
    // A refused switch changed nothing.
    let r = api.get(&client, None).await;
    assert_eq!(r.body["product_id"], cat.ebook.as_str());

    // The seller switches too.
    let seller = format!("{SESSIONS}{id}");
    let r = api
        .patch(&seller, Some(api.token), &json!({"product_id": cat.plan}))
        .await;
    r.expect(200);
    assert_eq!(r.body["product_price_id"], cat.monthly.as_str());
    let r = api
        .patch(&seller, Some(api.token), &json!({"product_id": cat.free}))
        .await;
    r.expect_invalid_at(json!(["body", "product_id"]));
    // An archived product of the list can no longer be chosen.
    let r = api
        .patch(
            &format!("/v1/products/{}", cat.ebook),
            Some(api.token),
            &json!({"is_archived": true}),
        )
        .await;
    r.expect(200);
    let r = api
        .patch(&client, None, &json!({"product_id": cat.ebook}))
        .await;
    let item = r.expect_invalid_at(json!(["body", "product_id"]));
    assert_eq!(item["msg"], "Product is archived.");

    // Confirming with a switch buys the product chosen last.
    let mut body = buyer("switch@example.com");
    body["product_id"] = json!(cat.tip);
    body["amount"] = json!(2000);
    let r = api.post(&format!("{client}/confirm"), None, &body).await;
    r.expect(200);
    assert_eq!(r.body["product_id"], cat.tip.as_str());
    let orders = api
        .read(&format!("/v1/orders/?organization_id={}", cat.org))
        .await;
    orders.expect(200);
    let items = orders.items();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["product_id"], cat.tip.as_str());
    assert_eq!(items[0]["checkout_id"], id.as_str());
}

#[actix_web::test]
async fn products_on_create_are_checked_as_polar_checks_them() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "checked").await;
    let create = |body: Value| async move { api.post(SESSIONS, Some(api.token), &body).await };

    let r = create(products(&[])).await;
    let item = r.expect_invalid_at(json!(["body", "products"]));
    assert_eq!(item["type"], "too_short");
    let r = create(products(&[&cat.ebook, &cat.plan, &cat.ebook])).await;
    let item = r.expect_invalid_at(json!(["body", "products"]));
    assert_eq!(item["msg"], "Value error, Product IDs must be unique.");
    let unknown = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";
    let r = create(products(&[&cat.ebook, unknown])).await;
    let item = r.expect_invalid_at(json!(["body", "products", 1]));
    assert_eq!(item["msg"], "Product does not exist.");
    let r = create(json!({"products": [cat.ebook, "nope"]})).await;
    r.expect_invalid_at(json!(["body", "products", 1]));
    let r = create(json!({"products": cat.ebook})).await;
    r.expect_invalid_at(json!(["body", "products"]));

    // Archived, of another organization, of another seller.
    let archived = crate::checkouts::product(
        api,
        &cat.org,
        "Old",
        json!([{"type": "one_time", "amount_type": "fixed", "price_amount": 900, "price_currency": "usd"}]),
    )
    .await;
    api.patch(
        &format!("/v1/products/{}", id_of(&archived)),
        Some(api.token),
        &json!({"is_archived": true}),
    )
    .await
    .expect(200);
    let r = create(products(&[&cat.ebook, &id_of(&archived)])).await;
    let item = r.expect_invalid_at(json!(["body", "products", 1]));
    assert_eq!(item["msg"], "Product is archived.");
    let elsewhere = crate::checkouts::create_org(api, "checked-two").await;
    let other = crate::checkouts::product(
        api,
        &elsewhere,
        "Elsewhere",
        json!([{"type": "one_time", "amount_type": "fixed", "price_amount": 900, "price_currency": "usd"}]),
    )
    .await;
    let r = create(products(&[&cat.ebook, &id_of(&other)])).await;
    let item = r.expect_invalid_at(json!(["body", "products"]));
    assert_eq!(
        item["msg"],
        "Products must all belong to the same organization."
    );
    let (_, stranger) = app
        .new_user_with_scopes(
            "stranger@example.com",
            &[Scope::CheckoutsWrite, Scope::OrganizationsWrite],
        )
        .await;
    let r = api
        .post(SESSIONS, Some(&stranger), &products(&[&cat.ebook]))
        .await;
    let item = r.expect_invalid_at(json!(["body", "products", 0]));
    assert_eq!(item["msg"], "Product does not exist.");
    // Nothing was created.
    let r = api
        .read(&format!("{SESSIONS}?organization_id={}", cat.org))
        .await;
    assert_eq!(r.total_count(), 0);
}

/// The hosted page of a checkout, read as a browser would (no redirect followed).
async fn page(app: &TestApp, secret: &str) -> String {
    let r = app
        .send(no_redirects().get(app.url(&format!("/checkout/{secret}"))))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.content_type().starts_with("text/html"));
    r.body.as_str().unwrap_or_default().to_string()
}

/// The radio input of a product choice, as the page renders it.
fn choice(product: &str, checked: bool) -> String {
    let checked = if checked { " checked" } else { "" };
    format!("<input type=\"radio\" name=\"product_id\" value=\"{product}\"{checked}>")
}

#[actix_web::test]
async fn the_hosted_page_lets_the_buyer_choose_between_the_products() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "page-choice").await;
    let c = api
        .posted(SESSIONS, &products(&[&cat.ebook, &cat.plan]), 201)
        .await;
    let secret = c["client_secret"].as_str().unwrap().to_string();

    let html = page(&app, &secret).await;
    assert!(html.contains("id=\"product-choices\""), "{html}");
    assert!(html.contains(&choice(&cat.ebook, true)), "{html}");
    assert!(html.contains(&choice(&cat.plan, false)), "{html}");
    assert!(
        html.contains("Ebook <span class=\"muted\">$25.00</span>"),
        "{html}"
    );
    assert!(
        html.contains("Acme Pro <span class=\"muted\">$15.00/month</span>"),
        "{html}"
    );
    assert!(
        html.contains("<h1 id=\"product-name\">Ebook</h1>"),
        "{html}"
    );
    // The page's script sends the choice to the client endpoint.
    let script = app
        .send(app.client.get(app.url("/checkout/assets/checkout.js")))
        .await;
    let js = script.body.as_str().unwrap_or_default();
    assert!(js.contains("input[name=\"product_id\"]"));
    assert!(
        js.contains("send(\"PATCH\", api, { product_id: radio.value })"),
        "{js}"
    );
    assert!(js.contains("\"/v1/checkouts/client/\""));

    // What the script sends when the buyer picks the plan; the page then shows it.
    let r = api
        .patch(
            &format!("{SESSIONS}client/{secret}"),
            None,
            &json!({"product_id": cat.plan}),
        )
        .await;
    r.expect(200);
    let html = page(&app, &secret).await;
    assert!(html.contains(&choice(&cat.plan, true)), "{html}");
    assert!(html.contains(&choice(&cat.ebook, false)), "{html}");
    assert!(
        html.contains("<h1 id=\"product-name\">Acme Pro</h1>"),
        "{html}"
    );
    assert!(html.contains("Subscribe $15.00/month"), "{html}");

    // A checkout of one product offers no choice.
    let one = created(api, &by_price(&cat.ebook_price)).await;
    let html = page(&app, one["client_secret"].as_str().unwrap()).await;
    assert!(!html.contains("product-choices"), "{html}");
    assert!(!html.contains("name=\"product_id\""), "{html}");
}

// ---------------------------------------------------------------------------------------
// The 2026 shapes: Polar's keys beside the seed's, with true values.

#[actix_web::test]
async fn answers_carry_polars_2026_keys_with_what_the_checkout_is() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "shapes").await;
    let mut body = products(&[&cat.ebook, &cat.plan]);
    body["discount_id"] = json!(cat.discount);
    let c = api.posted(SESSIONS, &body, 201).await;
    // 2500 less the 500 of LAUNCH; no tax yet, none with the default calculator.
    assert_eq!(
        (
            &c["amount"],
            &c["discount_amount"],
            &c["net_amount"],
            &c["total_amount"]
        ),
        (&json!(2500), &json!(500), &json!(2000), &json!(2000))
    );
    assert_eq!(c["subtotal_amount"], 2000);
    assert_eq!(c["currency"], "usd");
    assert_eq!(c["organization_id"], cat.org.as_str());
    assert_eq!(c["discount"]["amounts"], json!({"usd": 500}));
    assert_eq!(c["require_billing_address"], false);
    assert_eq!(c["is_business_customer"], false);
    assert_eq!(c["allow_trial"], true);
    assert_eq!(
        c["billing_address_fields"],
        json!({"country": "required", "state": "disabled", "line1": "optional",
               "line2": "optional", "postal_code": "optional", "city": "optional"})
    );
    for null in [
        "return_url",
        "units",
        "min_units",
        "max_units",
        "active_trial_interval",
        "active_trial_interval_count",
        "trial_end",
        "trial_interval",
        "trial_interval_count",
        "customer_billing_name",
        "payment_method_type",
        "external_customer_id",
    ] {
        assert_eq!(c[null], Value::Null, "{null}");
    }
    let secret = c["client_secret"].as_str().unwrap().to_string();
    let client = format!("{SESSIONS}client/{secret}");
    // A US address: its state is asked for; tax is computed (0), added on top.
    let r = api
        .patch(
            &client,
            None,
            &json!({"customer_billing_address": {"country": "US", "state": "NY"}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["billing_address_fields"]["state"], "required");
    assert_eq!(r.body["tax_amount"], 0);
    assert_eq!(r.body["tax_behavior"], "exclusive");
    assert_eq!(r.body["organization"]["id"], cat.org.as_str());
    // The buyer's shape has no seller-only keys.
    for absent in [
        "metadata",
        "external_customer_id",
        "trial_interval",
        "customer_metadata",
    ] {
        assert!(r.body.get(absent).is_none(), "{absent}");
    }
    // The same keys in every version.
    for version in ["2026-04", "2026-10", "2027-01"] {
        let v = app
            .send(
                app.request(Method::GET, &client, None)
                    .header("Polar-Version", version),
            )
            .await;
        v.expect(200);
        let mut expected: Vec<&String> = r.body.as_object().unwrap().keys().collect();
        let mut got: Vec<&String> = v.body.as_object().unwrap().keys().collect();
        expected.sort();
        got.sort();
        assert_eq!(got, expected, "{version}");
    }
    let mut pay = buyer("shapes@example.com");
    pay["customer_billing_address"] = json!({"country": "US", "state": "NY"});
    let r = api.post(&format!("{client}/confirm"), None, &pay).await;
    r.expect(200);
    assert_eq!(r.body["status"], "confirmed");
    assert_eq!(r.body["net_amount"], 2000);
    assert!(r.body["customer_session_token"].is_string());
}

// ---------------------------------------------------------------------------------------
// The bodies today's SDKs send.

#[actix_web::test]
async fn the_bodies_of_todays_sdks_are_accepted_and_honoured() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "bodies").await;
    // What @polar-sh/sdk 0.47 sends for checkouts.create({products, externalCustomerId,
    // customerEmail, metadata}): its defaults are always on the wire.
    let c = api
        .posted(
            SESSIONS,
            &json!({
                "products": [cat.ebook],
                "allow_discount_codes": true,
                "require_billing_address": false,
                "allow_trial": true,
                "is_business_customer": false,
                "external_customer_id": "ext-0.47",
                "customer_email": "buyer@example.com",
                "metadata": {"source": "node-0.47"},
            }),
            201,
        )
        .await;
    assert_eq!(c["external_customer_id"], "ext-0.47");
    assert_eq!(c["customer_email"], "buyer@example.com");
    assert_eq!(c["metadata"], json!({"source": "node-0.47"}));
    assert_eq!(c["allow_trial"], true);
    assert_eq!(c["require_billing_address"], false);
    assert_eq!(c["is_business_customer"], false);
    // Polar's alias, a return URL, a locale, the one currency, no trial.
    let d = api
        .posted(
            SESSIONS,
            &json!({
                "products": [cat.plan],
                "customer_external_id": "ext-alias",
                "return_url": "https://shop.example.com/pricing",
                "locale": "fr",
                "currency": "usd",
                "allow_trial": false,
                "seats": null,
                "units": null,
                "trial_interval": null,
                "prices": null,
                "customer_billing_name": null,
            }),
            201,
        )
        .await;
    assert_eq!(d["external_customer_id"], "ext-alias");
    assert_eq!(d["return_url"], "https://shop.example.com/pricing");
    assert_eq!(d["allow_trial"], false);
    assert_eq!(d["currency"], "usd");
    let page = page(&app, d["client_secret"].as_str().unwrap()).await;
    assert!(
        page.contains(
            "<a class=\"back\" id=\"return-link\" href=\"https://shop.example.com/pricing\">"
        ),
        "{page}"
    );
    // The list finds checkouts by the seller's id for the buyer.
    let r = api
        .read(&format!(
            "{SESSIONS}?external_customer_id=ext-0.47&external_customer_id=nobody"
        ))
        .await;
    assert_eq!(r.items().iter().map(id_of).collect::<Vec<_>>(), [id_of(&c)]);
    // The seller changes the return URL and clears it.
    let path = format!("{SESSIONS}{}", id_of(&d));
    let r = api
        .patch(
            &path,
            Some(api.token),
            &json!({"return_url": "https://shop.example.com/"}),
        )
        .await;
    assert_eq!(r.body["return_url"], "https://shop.example.com/");
    let r = api
        .patch(&path, Some(api.token), &json!({"return_url": null}))
        .await;
    assert_eq!(r.body["return_url"], Value::Null);
    let r = api
        .patch(&path, Some(api.token), &json!({"return_url": "ftp://x"}))
        .await;
    r.expect_invalid_at(json!(["body", "return_url"]));

    // The buyer's 2026 fields: a card, no trial, a language.
    let client = format!("{SESSIONS}client/{}", d["client_secret"].as_str().unwrap());
    let r = api
        .patch(
            &client,
            None,
            &json!({"payment_method_type": "card", "allow_trial": false, "locale": "de",
                    "is_business_customer": false, "customer_billing_name": "", "seats": null}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["payment_method_type"], "card");
    assert_eq!(r.body["allow_trial"], false);
    let r = api
        .patch(&client, None, &json!({"payment_method_type": ""}))
        .await;
    assert_eq!(r.body["payment_method_type"], Value::Null);
}

#[actix_web::test]
async fn a_full_billing_address_is_asked_for_and_required_when_the_seller_wants_it() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "full-address").await;
    let mut body = products(&[&cat.ebook]);
    body["require_billing_address"] = json!(true);
    let c = api.posted(SESSIONS, &body, 201).await;
    assert_eq!(c["require_billing_address"], true);
    assert_eq!(c["billing_address_fields"]["line1"], "required");
    assert_eq!(c["billing_address_fields"]["postal_code"], "required");
    assert_eq!(c["billing_address_fields"]["city"], "required");
    assert_eq!(c["billing_address_fields"]["line2"], "optional");
    let secret = c["client_secret"].as_str().unwrap().to_string();
    let html = page(&app, &secret).await;
    assert!(
        html.contains("autocomplete=\"address-line1\" value=\"\" aria-required=\"true\""),
        "{html}"
    );

    // The country alone is not enough.
    let r = api
        .post(
            &format!("{SESSIONS}client/{secret}/confirm"),
            None,
            &buyer("full@example.com"),
        )
        .await;
    for line in ["line1", "postal_code", "city"] {
        r.expect_invalid_at(json!(["body", "customer_billing_address", line]));
    }
    let mut pay = buyer("full@example.com");
    pay["customer_billing_address"] = json!({"country": "FR", "line1": "1 rue de la Paix", "postal_code": "75002", "city": "Paris"});
    let r = api
        .post(&format!("{SESSIONS}client/{secret}/confirm"), None, &pay)
        .await;
    r.expect(200);

    // An address given with its lines asks for a full one, as Polar does; the seller may
    // turn it off again.
    let mut body = products(&[&cat.ebook]);
    body["customer_billing_address"] = json!({"country": "FR", "city": "Paris"});
    let c = api.posted(SESSIONS, &body, 201).await;
    assert_eq!(c["require_billing_address"], true);
    let r = api
        .patch(
            &format!("{SESSIONS}{}", id_of(&c)),
            Some(api.token),
            &json!({"require_billing_address": false}),
        )
        .await;
    assert_eq!(r.body["require_billing_address"], false);
    assert_eq!(r.body["billing_address_fields"]["line1"], "optional");
    // A free product asks for no address, unless a full one is required.
    let free = created(api, &products(&[&cat.free])).await;
    let html = page(&app, free["client_secret"].as_str().unwrap()).await;
    assert!(!html.contains("Billing address"), "{html}");
    let mut body = products(&[&cat.free]);
    body["require_billing_address"] = json!(true);
    let strict = api.posted(SESSIONS, &body, 201).await;
    let html = page(&app, strict["client_secret"].as_str().unwrap()).await;
    assert!(html.contains("Billing address"), "{html}");
}

#[actix_web::test]
async fn what_tollgate_does_not_sell_is_refused_naming_the_field() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "unsupported").await;
    let unsupported = [
        (
            "seats",
            json!(2),
            "Seats can only be set for seat-based pricing.",
        ),
        (
            "min_seats",
            json!(1),
            "min_seats can only be set for seat-based pricing.",
        ),
        (
            "max_seats",
            json!(5),
            "max_seats can only be set for seat-based pricing.",
        ),
        (
            "units",
            json!(3),
            "Units can only be set for unit-based pricing.",
        ),
        (
            "min_units",
            json!(1),
            "min_units can only be set for unit-based pricing.",
        ),
        (
            "max_units",
            json!(9),
            "max_units can only be set for unit-based pricing.",
        ),
        (
            "prices",
            json!({ cat.ebook.clone(): [{"amount_type": "fixed", "price_amount": 100}] }),
            "Ad-hoc prices are not supported.",
        ),
    ];
    // A currency the product has no prices in: Polar's 422 at the product (issue 49).
    let mut body = products(&[&cat.ebook]);
    body["currency"] = json!("eur");
    let r = api.post(SESSIONS, Some(api.token), &body).await;
    let item = r.expect_invalid_at(json!(["body", "products", 0]));
    assert_eq!(
        item["msg"],
        "Product is not available in the specified currency."
    );
    // On create, one by one and all at once.
    let mut all = products(&[&cat.ebook]);
    for (field, value, msg) in &unsupported {
        let mut body = products(&[&cat.ebook]);
        body[*field] = value.clone();
        all[*field] = value.clone();
        let r = api.post(SESSIONS, Some(api.token), &body).await;
        let item = r.expect_invalid_at(json!(["body", field]));
        assert_eq!(item["msg"], *msg, "{field}");
    }
    let r = api.post(SESSIONS, Some(api.token), &all).await;
    // All but the seats (`seats`, `min_seats`, `max_seats`): whether the price sells seats
    // is the use case's question, asked of a body whose own fields read.
    assert_eq!(
        r.expect_validation().len(),
        unsupported.len() - 3,
        "{}",
        r.body
    );
    assert_eq!(
        api.read(&format!("{SESSIONS}?organization_id={}", cat.org))
            .await
            .total_count(),
        0
    );

    let c = created(api, &products(&[&cat.ebook])).await;
    let seller = format!("{SESSIONS}{}", id_of(&c));
    let client = format!("{SESSIONS}client/{}", c["client_secret"].as_str().unwrap());
    // The seller's update.
    for (field, value) in [
        ("seats", json!(2)),
        ("units", json!(2)),
        ("currency", json!("eur")),
    ] {
        let r = api
            .patch(&seller, Some(api.token), &json!({ field: value }))
            .await;
        r.expect_invalid_at(json!(["body", field]));
    }
    // A trial needs both of its fields: the missing one is named.
    for (field, value, missing) in [
        ("trial_interval", json!("week"), "trial_interval_count"),
        ("trial_interval_count", json!(2), "trial_interval"),
    ] {
        let r = api
            .patch(&seller, Some(api.token), &json!({ field: value }))
            .await;
        r.expect_invalid_at(json!(["body", missing]));
    }
    // The buyer's update and confirm.
    for (field, value) in [
        ("seats", json!(2)),
        ("units", json!(2)),
        ("payment_method_type", json!("upi")),
    ] {
        let r = api.patch(&client, None, &json!({ field: value })).await;
        r.expect_invalid_at(json!(["body", field]));
        let mut pay = buyer("refused@example.com");
        pay[field] = value.clone();
        let r = api.post(&format!("{client}/confirm"), None, &pay).await;
        r.expect_invalid_at(json!(["body", field]));
    }
    // A buyer may only turn a trial off.
    let r = api
        .patch(&client, None, &json!({"allow_trial": true}))
        .await;
    let item = r.expect_invalid_at(json!(["body", "allow_trial"]));
    assert_eq!(item["type"], "literal_error");
    // Wrong types are named too.
    let r = api.patch(&client, None, &json!({"seats": "two"})).await;
    r.expect_invalid_at(json!(["body", "seats"]));
    let r = api
        .patch(
            &seller,
            Some(api.token),
            &json!({"require_billing_address": "yes"}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "require_billing_address"]));
    // Nothing changed, and the checkout can still be paid.
    let r = api
        .post(
            &format!("{client}/confirm"),
            None,
            &buyer("refused@example.com"),
        )
        .await;
    r.expect(200);
}
