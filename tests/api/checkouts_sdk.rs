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
