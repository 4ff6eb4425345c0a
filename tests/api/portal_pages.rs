//! The customer portal's pages over HTTP (`/portal/{slug}`, `src/web/portal`): a browser
//! that keeps cookies and never follows redirects signs in by e-mailed code (read from the
//! outbox), lands with a seller's `customer_portal_url`, reads its orders (and their signed
//! receipts), cancels and resumes a subscription, deactivates an activation and rotates a
//! key. Denials: wrong, expired, reused and worn-out codes, the rate limits (429 with
//! `Retry-After`), another customer's ids in every page and form (404, nothing changed), a
//! missing or forged CSRF token (403, nothing changed), a cookie of another organization or
//! of an ended session (signed out), a receipt link with a bad signature (404).

use std::collections::BTreeSet;

use chrono::{Duration, Utc};
use reqwest::header::{CONTENT_SECURITY_POLICY, RETRY_AFTER, SET_COOKIE};
use reqwest::StatusCode;
use serde_json::{json, Value};
use tollgate::config::{Limit, Settings};
use tollgate::web::portal::ROUTES;
use tollgate_actors::domain::mail::{MailKind, MailMessage};
use tollgate_actors::ManualClock;

use crate::benefit_grants::{buy, key_of, order_of, subscription_of};
use crate::checkouts::store_values;
use crate::helpers::{spawn_app, spawn_app_with, TestApp};
use crate::oauth::{Browser, Page};

const UNKNOWN: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";
/// A CSRF token of the right shape that is not the browser's.
const FORGED: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
pub(crate) const VALIDATE: &str = "/v1/customer-portal/license-keys/validate";
pub(crate) const ACTIVATE: &str = "/v1/customer-portal/license-keys/activate";

// ---------------------------------------------------------------------------------------
// A shop

/// An organization with a support address selling "Desktop App" (one-time, `ACME-` keys,
/// two activations the customer may manage), "Cloud Sync" (monthly) and "Locked" (one-time,
/// `LOCK-` keys whose activations only the seller manages, and that customers may not
/// rotate).
pub(crate) struct PortalShop {
    pub org: String,
    pub slug: String,
    pub benefit: String,
    pub locked_benefit: String,
    pub app_product: String,
    pub sync_product: String,
    pub locked_product: String,
}

pub(crate) async fn portal_shop(app: &TestApp, slug: &str) -> PortalShop {
    let token = Some(app.token.as_str());
    let org = app.created_org_as(&app.token, "Acme Tools", slug).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    app.patch_json(
        &format!("/v1/organizations/{org}"),
        token,
        &json!({"email": format!("support@{slug}.test")}),
    )
    .await
    .expect(200);
    let benefit = |description: &'static str, properties: Value| {
        let org = org.clone();
        async move {
            let r = app
                .post_json(
                    "/v1/benefits/",
                    token,
                    &json!({"type": "license_keys", "description": description,
                            "organization_id": org, "properties": properties}),
                )
                .await;
            r.expect(201);
            r.id()
        }
    };
    let keys = benefit(
        "Desktop App license",
        json!({"prefix": "ACME", "activations": {"limit": 2, "enable_customer_admin": true}}),
    )
    .await;
    let locked = benefit(
        "Locked license",
        json!({"prefix": "LOCK", "activations": {"limit": 2, "enable_customer_admin": false},
                "allow_customer_rotation": false}),
    )
    .await;
    let product = |name: &'static str, price: Value, benefits: Vec<String>| {
        let org = org.clone();
        async move {
            let r = app
                .post_json(
                    "/v1/products/",
                    token,
                    &json!({"name": name, "organization_id": org, "prices": [price]}),
                )
                .await;
            r.expect(201);
            let id = r.id();
            if !benefits.is_empty() {
                app.post_json(
                    &format!("/v1/products/{id}/benefits"),
                    token,
                    &json!({ "benefits": benefits }),
                )
                .await
                .expect(200);
            }
            id
        }
    };
    let app_product = product(
        "Desktop App",
        json!({"type": "one_time", "amount_type": "fixed", "price_amount": 4900, "price_currency": "usd"}),
        vec![keys.clone()],
    )
    .await;
    let sync_product = product(
        "Cloud Sync",
        json!({"type": "recurring", "amount_type": "fixed", "price_amount": 900,
               "price_currency": "usd", "recurring_interval": "month"}),
        Vec::new(),
    )
    .await;
    let locked_product = product(
        "Locked",
        json!({"type": "one_time", "amount_type": "fixed", "price_amount": 1000, "price_currency": "usd"}),
        vec![locked.clone()],
    )
    .await;
    PortalShop {
        org,
        slug: slug.to_string(),
        benefit: keys,
        locked_benefit: locked,
        app_product,
        sync_product,
        locked_product,
    }
}

/// What one buyer holds: its customer, one-time order, subscription and key.
pub(crate) struct Buyer {
    pub email: String,
    pub customer: String,
    pub order: String,
    pub subscription: String,
    pub key_id: String,
    pub key: String,
}

/// `email` buys the app and the subscription.
pub(crate) async fn buyer(app: &TestApp, shop: &PortalShop, email: &str) -> Buyer {
    let bought = buy(app, &shop.app_product, email).await;
    buy(app, &shop.sync_product, email).await;
    let order = order_of(app, &bought.checkout).await;
    let subscription = subscription_of(app, &bought.customer).await;
    let key = &key_of(app, &bought.customer, &shop.benefit).await[0];
    Buyer {
        email: email.to_string(),
        customer: bought.customer,
        order,
        subscription,
        key_id: key["id"].as_str().unwrap().to_string(),
        key: key["key"].as_str().unwrap().to_string(),
    }
}

/// Activates `key` as a program does: the activation's id.
pub(crate) async fn activate(app: &TestApp, org: &str, key: &str, label: &str) -> String {
    let r = app
        .post_json(
            ACTIVATE,
            None,
            &json!({"key": key, "organization_id": org, "label": label,
                    "meta": {"hostname": label}}),
        )
        .await;
    r.expect(200);
    r.id()
}

/// The seller's view of a key (with its activations).
async fn seller_key(app: &TestApp, id: &str) -> Value {
    let r = app
        .get(&format!("/v1/license-keys/{id}"), Some(&app.token))
        .await;
    r.expect(200);
    r.body
}

async fn seller_subscription(app: &TestApp, id: &str) -> Value {
    let r = app
        .get(&format!("/v1/subscriptions/{id}"), Some(&app.token))
        .await;
    r.expect(200);
    r.body
}

// ---------------------------------------------------------------------------------------
// Signing in

/// Every sign-in code the outbox holds for `to`.
pub(crate) async fn codes_for(app: &TestApp, to: &str) -> BTreeSet<String> {
    store_values::<MailMessage>(&app.state.store)
        .await
        .into_iter()
        .filter(|m| m.kind == MailKind::SignInCode && m.to.eq_ignore_ascii_case(to))
        .map(|m| {
            m.text
                .lines()
                .map(str::trim)
                .find(|l| l.len() == 6 && l.bytes().all(|b| b.is_ascii_alphanumeric()))
                .unwrap_or_else(|| panic!("no code in: {}", m.text))
                .to_string()
        })
        .collect()
}

/// Asks for a code on the sign-in page; the page answered and the code sent, if any.
pub(crate) async fn ask_code(
    app: &TestApp,
    b: &mut Browser,
    slug: &str,
    email: &str,
) -> (Page, Option<String>) {
    let before = codes_for(app, email).await;
    let page = b.get(&format!("/portal/{slug}")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let csrf = page.csrf();
    let page = b
        .post(
            &format!("/portal/{slug}/code"),
            &[("csrf_token", &csrf), ("email", email)],
        )
        .await;
    let after = codes_for(app, email).await;
    let new: Vec<String> = after.difference(&before).cloned().collect();
    assert!(new.len() <= 1, "{new:?}");
    (page, new.into_iter().next())
}

/// Types `code` for `email` on the code form (`page`).
pub(crate) async fn type_code(
    b: &mut Browser,
    slug: &str,
    page: &Page,
    email: &str,
    code: &str,
) -> Page {
    let csrf = page.csrf();
    b.post(
        &format!("/portal/{slug}/session"),
        &[("csrf_token", &csrf), ("email", email), ("code", code)],
    )
    .await
}

/// A browser signed in to `slug`'s portal as `email`.
pub(crate) async fn signed_in(app: &TestApp, slug: &str, email: &str) -> Browser {
    let mut b = Browser::new(app);
    let (page, code) = ask_code(app, &mut b, slug, email).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let page = type_code(&mut b, slug, &page, email, &code.expect("a code was sent")).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert_eq!(page.location, format!("/portal/{slug}/overview"));
    b
}

/// The `Set-Cookie` of the portal's session in an answer.
fn portal_cookie(page: &Page) -> Option<String> {
    page.headers
        .get_all(SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|v| v.starts_with("tollgate_portal="))
}

#[track_caller]
pub(crate) fn status(page: &Page, want: u16) {
    assert_eq!(
        page.status.as_u16(),
        want,
        "{} (location {})",
        page.body,
        page.location
    );
}

#[track_caller]
fn to_sign_in(page: &Page, slug: &str) {
    status(page, 303);
    assert_eq!(page.location, format!("/portal/{slug}"), "{}", page.body);
}

/// Settings whose sign-in limits the test does not reach (the tests of the limits keep
/// the defaults).
pub(crate) fn roomy(dir: &std::path::Path) -> Settings {
    let mut s = Settings::for_tests(dir);
    s.rate_limits.portal_sign_ins_per_ip = Limit::new(1000, 600);
    s.rate_limits.portal_codes_per_ip = Limit::new(1000, 3600);
    s.rate_limits.portal_codes_per_address_client = Limit::new(1000, 3600);
    s.rate_limits.portal_codes_per_address = Limit::new(1000, 3600);
    s
}

async fn roomy_app() -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let settings = roomy(dir.path());
    spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await
}

// ---------------------------------------------------------------------------------------
// The happy path

#[actix_web::test]
async fn a_buyer_signs_in_by_code_and_sees_its_orders_subscriptions_and_keys() {
    let app = roomy_app().await;
    let shop = portal_shop(&app, "acme-pages").await;
    let ada = buyer(&app, &shop, "ada@pages.example").await;
    activate(&app, &shop.org, &ada.key, "ada-laptop").await;
    let slug = &shop.slug;

    // The sign-in page: the seller's name, a script from this site only.
    let mut b = Browser::new(&app);
    let page = b.get(&format!("/portal/{slug}")).await;
    status(&page, 200);
    assert!(page.body.contains("Your purchases from Acme Tools"));
    let csp = page.headers[CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("form-action 'self'"),
        "{csp}"
    );
    assert!(page.body.contains("/portal/assets/portal.js?v="));
    let script = b.get("/portal/assets/portal.js").await;
    status(&script, 200);
    assert!(script.content_type.starts_with("text/javascript"));

    // The same answer for an address that never bought, and no code for it.
    let (stranger, code) = ask_code(&app, &mut b, slug, "nobody@pages.example").await;
    status(&stranger, 200);
    assert!(code.is_none());
    assert!(stranger
        .body
        .contains("If nobody@pages.example bought from Acme Tools"));
    let (page, code) = ask_code(&app, &mut b, slug, "ADA@pages.example").await;
    status(&page, 200);
    assert!(page
        .body
        .contains("If ADA@pages.example bought from Acme Tools"));
    // The address is kept for the code form.
    assert_eq!(page.input("email").as_deref(), Some("ADA@pages.example"));
    let code = code.expect("a code for a customer's address, whatever its case");

    // The code (any case) signs in: an HttpOnly cookie on /portal for the session's hour.
    let page = type_code(
        &mut b,
        slug,
        &page,
        "ADA@pages.example",
        &code.to_lowercase(),
    )
    .await;
    status(&page, 303);
    assert_eq!(page.location, format!("/portal/{slug}/overview"));
    let cookie = portal_cookie(&page).expect("the session cookie");
    assert!(cookie.starts_with("tollgate_portal=polar_cst_"), "{cookie}");
    for part in ["HttpOnly", "SameSite=Lax", "Path=/portal"] {
        assert!(cookie.contains(part), "{part} in {cookie}");
    }
    assert!(!cookie.contains("Secure"), "http: {cookie}");
    let max_age: i64 = cookie
        .split("; ")
        .find_map(|p| p.strip_prefix("Max-Age="))
        .unwrap()
        .parse()
        .unwrap();
    assert!((3590..=3600).contains(&max_age), "{cookie}");

    // The overview: the order, the subscription, the key, help.
    let page = b.get(&format!("/portal/{slug}/overview")).await;
    status(&page, 200);
    for text in [
        "Desktop App",
        "$49.00",
        "Cloud Sync",
        "$9.00 / month",
        "Renews on",
        "Desktop App license",
        &format!("data-order=\"{}\"", ada.order),
        &format!("data-subscription=\"{}\"", ada.subscription),
        &format!("data-key=\"{}\"", ada.key_id),
        "Signed in as <strong id=\"signed-in-as\">ada@pages.example</strong>",
        &format!("/license-keys/resend?organization_id={}", shop.org),
        "mailto:support@acme-pages.test",
    ] {
        assert!(page.body.contains(text), "{text} not in\n{}", page.body);
    }
    // The full key is on its own page only.
    assert!(!page.body.contains(&ada.key));
    // Signed in, the sign-in page leads to the overview.
    let page = b.get(&format!("/portal/{slug}")).await;
    status(&page, 303);
    assert_eq!(page.location, format!("/portal/{slug}/overview"));

    // An order: amounts, status, the printable receipt.
    let page = b.get(&format!("/portal/{slug}/orders/{}", ada.order)).await;
    status(&page, 200);
    for text in ["Desktop App", "Paid", "$49.00", "Printable receipt"] {
        assert!(page.body.contains(text), "{text} not in\n{}", page.body);
    }
    let receipt = receipt_link(&page);
    assert!(receipt.starts_with(&format!("/portal/receipts/{}?expires=", ada.order)));
    // Anyone with the link reads it, without a session; no referrer leaves the page.
    let mut other = Browser::new(&app);
    let page = other.get(&receipt).await;
    status(&page, 200);
    assert_eq!(page.headers["referrer-policy"], "no-referrer");
    for text in [
        "Receipt",
        "Acme Tools",
        "ada@pages.example",
        "Ada Lovelace",
        "$49.00",
        "Total paid",
        "@media print",
        "data-print",
    ] {
        assert!(page.body.contains(text), "{text} not in\n{}", page.body);
    }

    // A subscription and a key.
    let page = b
        .get(&format!(
            "/portal/{slug}/subscriptions/{}",
            ada.subscription
        ))
        .await;
    status(&page, 200);
    assert!(page.body.contains("Cancel subscription"));
    assert!(page.body.contains("value=\"too_expensive\""));
    let page = b
        .get(&format!("/portal/{slug}/license-keys/{}", ada.key_id))
        .await;
    status(&page, 200);
    for text in [
        ada.key.as_str(),
        "1 of 2",
        "ada-laptop",
        "Deactivate",
        "Rotate the key now",
        "data-copy=\"license-key\"",
        "&#34;hostname&#34;",
    ] {
        assert!(page.body.contains(text), "{text} not in\n{}", page.body);
    }

    // Sign out: the session ends and the cookie goes; the old cookie opens nothing.
    let old = b.cookie_header();
    let csrf = page.csrf();
    let page = b
        .post(
            &format!("/portal/{slug}/sign-out"),
            &[("csrf_token", &csrf)],
        )
        .await;
    status(&page, 303);
    assert_eq!(page.location, format!("/portal/{slug}?signed_out=1"));
    let removed = portal_cookie(&page).unwrap();
    assert!(removed.contains("Max-Age=0"), "{removed}");
    to_sign_in(&b.get(&format!("/portal/{slug}/overview")).await, slug);
    let token = old
        .split("; ")
        .find_map(|c| c.strip_prefix("tollgate_portal="))
        .unwrap();
    b.set_cookie("tollgate_portal", token);
    to_sign_in(&b.get(&format!("/portal/{slug}/overview")).await, slug);
    let page = b.get(&format!("/portal/{slug}?signed_out=1")).await;
    assert!(page.body.contains("You are signed out."));
}

/// The receipt link of an order page.
fn receipt_link(page: &Page) -> String {
    let at = page.body.find("id=\"receipt-link\" href=\"").unwrap()
        + "id=\"receipt-link\" href=\"".len();
    let end = page.body[at..].find('"').unwrap();
    page.body[at..at + end]
        .replace("&#38;", "&")
        .replace("&amp;", "&")
}

#[actix_web::test]
async fn receipts_need_a_good_signature_and_show_refunds() {
    let app = roomy_app().await;
    let shop = portal_shop(&app, "acme-receipts").await;
    let ada = buyer(&app, &shop, "ada@receipts.example").await;
    let grace = buyer(&app, &shop, "grace@receipts.example").await;
    let r = app
        .post_json(
            "/v1/refunds/",
            Some(&app.token),
            &json!({"order_id": ada.order, "reason": "customer_request", "amount": 900}),
        )
        .await;
    r.expect(200);
    let mut b = signed_in(&app, &shop.slug, &ada.email).await;
    let page = b
        .get(&format!("/portal/{}/orders/{}", shop.slug, ada.order))
        .await;
    status(&page, 200);
    assert!(page.body.contains("Partially refunded"));
    assert!(page.body.contains("id=\"refunded\">$9.00"), "{}", page.body);
    let link = receipt_link(&page);
    let page = Browser::new(&app).get(&link).await;
    status(&page, 200);
    assert!(page.body.contains("id=\"refunded\">$9.00"));

    // Another order's id under this signature, a changed signature or expiry, none: 404.
    let (path, query) = link.split_once('?').unwrap();
    let expires = query
        .split('&')
        .find_map(|p| p.strip_prefix("expires="))
        .unwrap();
    let signature = query
        .split('&')
        .find_map(|p| p.strip_prefix("signature="))
        .unwrap();
    let later: i64 = expires.parse::<i64>().unwrap() + 3600;
    let mut flipped = signature.to_string();
    flipped.replace_range(0..1, if signature.starts_with('A') { "B" } else { "A" });
    for bad in [
        format!("/portal/receipts/{}?{query}", grace.order),
        format!("{path}?expires={expires}&signature={flipped}"),
        format!("{path}?expires={later}&signature={signature}"),
        format!("{path}?expires={expires}"),
        path.to_string(),
        format!("/portal/receipts/not-an-id?{query}"),
    ] {
        let page = Browser::new(&app).get(&bad).await;
        status(&page, 404);
        assert!(
            page.body.contains("Receipt link expired"),
            "{bad}: {}",
            page.body
        );
    }
}

// ---------------------------------------------------------------------------------------
// Codes that do not sign in

#[actix_web::test]
async fn wrong_reused_worn_out_and_foreign_codes_show_the_form_again_with_401() {
    let app = roomy_app().await;
    let shop = portal_shop(&app, "acme-codes").await;
    let other = portal_shop(&app, "other-codes").await;
    let ada = buyer(&app, &shop, "ada@codes.example").await;
    buy(&app, &other.app_product, &ada.email).await;
    buy(&app, &shop.app_product, "grace@codes.example").await;
    let slug = &shop.slug;
    let refused = |page: &Page| {
        status(page, 401);
        assert!(page
            .body
            .contains("This code is wrong, has expired or was used already"));
        assert!(page.body.contains("name=\"code\""), "the code form again");
        assert!(portal_cookie(page).is_none());
    };

    // A wrong code; a missing one (422).
    let mut b = Browser::new(&app);
    let (page, code) = ask_code(&app, &mut b, slug, &ada.email).await;
    let code = code.unwrap();
    refused(&type_code(&mut b, slug, &page, &ada.email, "ZZZZZZ").await);
    let missing = type_code(&mut b, slug, &page, &ada.email, "").await;
    status(&missing, 422);
    assert!(missing.body.contains("Enter the code from the e-mail."));

    // A code sent to another address, or for another organization, typed here: refused.
    let (_, graces) = ask_code(&app, &mut Browser::new(&app), slug, "grace@codes.example").await;
    refused(&type_code(&mut b, slug, &page, &ada.email, &graces.unwrap()).await);
    let (_, foreign) = ask_code(&app, &mut Browser::new(&app), &other.slug, &ada.email).await;
    refused(&type_code(&mut b, slug, &page, &ada.email, &foreign.unwrap()).await);

    // The good code signs in once; again it is refused.
    let ok = type_code(&mut b, slug, &page, &ada.email, &code).await;
    status(&ok, 303);
    let mut b2 = Browser::new(&app);
    let page2 = b2.get(&format!("/portal/{slug}")).await;
    refused(&type_code(&mut b2, slug, &page2, &ada.email, &code).await);

    // Five wrong codes typed for the address wear out a good one.
    let mut b = Browser::new(&app);
    let (page, code) = ask_code(&app, &mut b, slug, &ada.email).await;
    for _ in 0..5 {
        refused(&type_code(&mut b, slug, &page, &ada.email, "WRONG1").await);
    }
    refused(&type_code(&mut b, slug, &page, &ada.email, &code.unwrap()).await);
    // A new code works.
    let (page, code) = ask_code(&app, &mut b, slug, &ada.email).await;
    status(
        &type_code(&mut b, slug, &page, &ada.email, &code.unwrap()).await,
        303,
    );

    // A malformed address: the e-mail form again, 422.
    let mut c = Browser::new(&app);
    let csrf = c.get(&format!("/portal/{slug}")).await.csrf();
    let bad = c
        .post(
            &format!("/portal/{slug}/code"),
            &[("csrf_token", &csrf), ("email", "not an address")],
        )
        .await;
    status(&bad, 422);
    assert!(bad
        .body
        .contains("Enter the e-mail address you bought with."));
}

#[actix_web::test]
async fn an_expired_code_is_refused_and_an_expired_session_is_signed_out() {
    let dir = tempfile::tempdir().unwrap();
    let settings = roomy(dir.path());
    let (clock, shared) = ManualClock::shared(Utc::now());
    let app = spawn_app_with(dir, settings, shared).await;
    let shop = portal_shop(&app, "acme-clock").await;
    let ada = buyer(&app, &shop, "ada@clock.example").await;
    let slug = &shop.slug;

    let mut b = Browser::new(&app);
    let (page, code) = ask_code(&app, &mut b, slug, &ada.email).await;
    clock.advance(Duration::minutes(31));
    let late = type_code(&mut b, slug, &page, &ada.email, &code.unwrap()).await;
    status(&late, 401);

    // A session lasts its hour; after it, the cookie opens nothing.
    let mut b = signed_in(&app, slug, &ada.email).await;
    status(&b.get(&format!("/portal/{slug}/overview")).await, 200);
    clock.advance(Duration::minutes(59));
    status(&b.get(&format!("/portal/{slug}/overview")).await, 200);
    clock.advance(Duration::minutes(2));
    to_sign_in(&b.get(&format!("/portal/{slug}/overview")).await, slug);
    to_sign_in(
        &b.get(&format!("/portal/{slug}/orders/{}", ada.order)).await,
        slug,
    );
    // The sign-in page shows (no loop back to the overview).
    status(&b.get(&format!("/portal/{slug}")).await, 200);
}

#[actix_web::test]
async fn too_many_codes_or_sign_ins_answer_429_with_retry_after() {
    let app = spawn_app().await;
    let shop = portal_shop(&app, "acme-limits").await;
    let ada = buyer(&app, &shop, "ada@limits.example").await;
    let slug = &shop.slug;

    // Five codes an hour for one address.
    let mut b = Browser::new(&app);
    let mut page = None;
    for _ in 0..5 {
        let (p, code) = ask_code(&app, &mut b, slug, &ada.email).await;
        status(&p, 200);
        assert!(code.is_some());
        page = Some(p);
    }
    let (denied, code) = ask_code(&app, &mut b, slug, &ada.email).await;
    status(&denied, 429);
    assert!(code.is_none());
    let retry: u64 = denied.headers[RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry > 0);
    assert!(denied.body.contains("Too many attempts: try again in"));
    assert!(denied.headers.contains_key("ratelimit-policy"));

    // Twelve codes typed per ten minutes from one client.
    let page = page.unwrap();
    for _ in 0..12 {
        status(
            &type_code(&mut b, slug, &page, &ada.email, "WRONG1").await,
            401,
        );
    }
    let denied = type_code(&mut b, slug, &page, &ada.email, "WRONG1").await;
    status(&denied, 429);
    assert!(denied.headers.contains_key(RETRY_AFTER));
    assert!(denied.body.contains("name=\"code\""), "the code form again");
}

// ---------------------------------------------------------------------------------------
// What the buyer does

#[actix_web::test]
async fn cancel_and_resume_a_subscription_and_what_is_refused() {
    let app = roomy_app().await;
    let shop = portal_shop(&app, "acme-subs").await;
    let ada = buyer(&app, &shop, "ada@subs.example").await;
    let slug = &shop.slug;
    let mut b = signed_in(&app, slug, &ada.email).await;
    let path = format!("/portal/{slug}/subscriptions/{}", ada.subscription);

    // A reason that is not Polar's: 422, nothing changes.
    let csrf = b.get(&path).await.csrf();
    let page = b
        .post(
            &path,
            &[
                ("csrf_token", &csrf),
                ("action", "cancel"),
                ("reason", "bored"),
            ],
        )
        .await;
    status(&page, 422);
    assert!(page.body.contains("Choose a reason from the list."));
    assert_eq!(
        seller_subscription(&app, &ada.subscription).await["cancel_at_period_end"],
        false
    );

    let page = b
        .post(
            &path,
            &[
                ("csrf_token", &csrf),
                ("action", "cancel"),
                ("reason", "too_expensive"),
                ("comment", "  Too much for me  "),
            ],
        )
        .await;
    status(&page, 303);
    assert_eq!(page.location, format!("{path}?done=canceled"));
    let s = seller_subscription(&app, &ada.subscription).await;
    assert_eq!(s["cancel_at_period_end"], true);
    assert_eq!(s["customer_cancellation_reason"], "too_expensive");
    assert_eq!(s["customer_cancellation_comment"], "Too much for me");
    let page = b.get(&page.location).await;
    status(&page, 200);
    assert!(page.body.contains("Your subscription is canceled"));
    assert!(page.body.contains(">Canceling<"));
    assert!(page.body.contains("Ends on"));
    assert!(page.body.contains("id=\"resume\""));
    assert!(!page.body.contains("id=\"cancel\""));

    // Canceled already: the app's 403, shown on the page.
    let again = b
        .post(&path, &[("csrf_token", &csrf), ("action", "cancel")])
        .await;
    status(&again, 403);
    assert!(again.body.contains("already canceled"), "{}", again.body);

    let page = b
        .post(&path, &[("csrf_token", &csrf), ("action", "resume")])
        .await;
    status(&page, 303);
    assert_eq!(page.location, format!("{path}?done=resumed"));
    assert_eq!(
        seller_subscription(&app, &ada.subscription).await["cancel_at_period_end"],
        false
    );
    let page = b.get(&page.location).await;
    assert!(page.body.contains(">Active<"));
    assert!(page.body.contains("Renews on"));

    // Neither: 422.
    let page = b
        .post(&path, &[("csrf_token", &csrf), ("action", "pause")])
        .await;
    status(&page, 422);
}

#[actix_web::test]
async fn deactivate_an_activation_and_rotate_the_key() {
    let app = roomy_app().await;
    let shop = portal_shop(&app, "acme-keys").await;
    let ada = buyer(&app, &shop, "ada@keys.example").await;
    let laptop = activate(&app, &shop.org, &ada.key, "laptop").await;
    activate(&app, &shop.org, &ada.key, "desktop").await;
    // The limit is reached.
    let full = app
        .post_json(
            ACTIVATE,
            None,
            &json!({"key": ada.key, "organization_id": shop.org, "label": "tablet"}),
        )
        .await;
    full.expect(403);
    let slug = &shop.slug;
    let mut b = signed_in(&app, slug, &ada.email).await;
    let path = format!("/portal/{slug}/license-keys/{}", ada.key_id);
    let page = b.get(&path).await;
    assert!(page.body.contains("2 of 2"));
    let csrf = page.csrf();

    let page = b
        .post(
            &format!("{path}/activations/{laptop}/deactivate"),
            &[("csrf_token", &csrf)],
        )
        .await;
    status(&page, 303);
    assert_eq!(page.location, format!("{path}?done=deactivated"));
    let page = b.get(&page.location).await;
    assert!(page.body.contains("1 of 2"));
    assert!(!page.body.contains(&laptop));
    // The slot is free; the old activation no longer validates.
    activate(&app, &shop.org, &ada.key, "tablet").await;
    let old = app
        .post_json(
            VALIDATE,
            None,
            &json!({"key": ada.key, "organization_id": shop.org, "activation_id": laptop}),
        )
        .await;
    old.expect(404);
    // Deactivated already: 404.
    let page = b
        .post(
            &format!("{path}/activations/{laptop}/deactivate"),
            &[("csrf_token", &csrf)],
        )
        .await;
    status(&page, 404);

    // Rotate: a new key; the old one is refused at once.
    let page = b
        .post(&format!("{path}/rotate"), &[("csrf_token", &csrf)])
        .await;
    status(&page, 303);
    let page = b.get(&page.location).await;
    assert!(page.body.contains("Your key was rotated"));
    let new_key = seller_key(&app, &ada.key_id).await["key"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(new_key, ada.key);
    assert!(new_key.starts_with("ACME-"));
    assert!(page.body.contains(&new_key));
    assert!(!page.body.contains(&ada.key));
    let validate = |key: String| {
        let org = shop.org.clone();
        let app = &app;
        async move {
            app.post_json(VALIDATE, None, &json!({"key": key, "organization_id": org}))
                .await
        }
    };
    validate(ada.key.clone()).await.expect(404);
    validate(new_key).await.expect(200);

    // A key whose activations the seller manages: listed without a button; a post is 403.
    let locked = buy(&app, &shop.locked_product, &ada.email).await;
    let lk = &key_of(&app, &locked.customer, &shop.locked_benefit).await[0];
    let lk_id = lk["id"].as_str().unwrap();
    let act = activate(&app, &shop.org, lk["key"].as_str().unwrap(), "pc").await;
    let page = b.get(&format!("/portal/{slug}/license-keys/{lk_id}")).await;
    status(&page, 200);
    assert!(page.body.contains("1 of 2"));
    assert!(page.body.contains("Acme Tools manages this key"));
    assert!(!page.body.contains("/deactivate"));
    let page = b
        .post(
            &format!("/portal/{slug}/license-keys/{lk_id}/activations/{act}/deactivate"),
            &[("csrf_token", &csrf)],
        )
        .await;
    status(&page, 403);
    assert!(page.body.contains("does not let customers manage"));
    // Nor may the buyer rotate it: no button, and a post is 403.
    assert!(!page.body.contains("Rotate the key now"));
    let page = b
        .post(
            &format!("/portal/{slug}/license-keys/{lk_id}/rotate"),
            &[("csrf_token", &csrf)],
        )
        .await;
    status(&page, 403);
    assert!(
        page.body.contains("does not let customers rotate"),
        "{}",
        page.body
    );
    assert_eq!(seller_key(&app, lk_id).await["key"], lk["key"]);
    assert_eq!(
        seller_key(&app, lk_id).await["activations"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

// ---------------------------------------------------------------------------------------
// Another customer's records, CSRF, other organizations

#[actix_web::test]
async fn another_customers_ids_are_404_in_every_page_and_form_and_change_nothing() {
    let app = roomy_app().await;
    let shop = portal_shop(&app, "acme-tenancy").await;
    let ada = buyer(&app, &shop, "ada@tenancy.example").await;
    let grace = buyer(&app, &shop, "grace@tenancy.example").await;
    let adas_act = activate(&app, &shop.org, &ada.key, "ada-pc").await;
    let graces_act = activate(&app, &shop.org, &grace.key, "grace-pc").await;
    let slug = &shop.slug;
    let mut b = signed_in(&app, slug, &ada.email).await;
    let csrf = b.get(&format!("/portal/{slug}/overview")).await.csrf();
    let not_found = |page: &Page, what: &str| {
        status(page, 404);
        assert!(
            page.body.contains("Page not found"),
            "{what}: {}",
            page.body
        );
        assert!(
            page.body.contains("Acme Tools"),
            "{what}: the seller's header"
        );
    };

    for path in [
        format!("/portal/{slug}/orders/{}", grace.order),
        format!("/portal/{slug}/subscriptions/{}", grace.subscription),
        format!("/portal/{slug}/license-keys/{}", grace.key_id),
        format!("/portal/{slug}/orders/{UNKNOWN}"),
        format!("/portal/{slug}/orders/{}", ada.subscription),
        format!("/portal/{slug}/license-keys/not-a-uuid"),
    ] {
        not_found(&b.get(&path).await, &path);
    }
    let forms: Vec<(String, Vec<(&str, &str)>)> = vec![
        (
            format!("/portal/{slug}/subscriptions/{}", grace.subscription),
            vec![("action", "cancel"), ("reason", "other")],
        ),
        (
            format!("/portal/{slug}/license-keys/{}/rotate", grace.key_id),
            vec![],
        ),
        (
            format!(
                "/portal/{slug}/license-keys/{}/activations/{graces_act}/deactivate",
                grace.key_id
            ),
            vec![],
        ),
        // Ada's key with Grace's activation, Grace's key with Ada's.
        (
            format!(
                "/portal/{slug}/license-keys/{}/activations/{graces_act}/deactivate",
                ada.key_id
            ),
            vec![],
        ),
        (
            format!(
                "/portal/{slug}/license-keys/{}/activations/{adas_act}/deactivate",
                grace.key_id
            ),
            vec![],
        ),
    ];
    for (path, fields) in &forms {
        let mut form = vec![("csrf_token", csrf.as_str())];
        form.extend(fields.iter().copied());
        not_found(&b.post(path, &form).await, path);
    }
    // Nothing changed.
    assert_eq!(
        seller_subscription(&app, &grace.subscription).await["cancel_at_period_end"],
        false
    );
    let gk = seller_key(&app, &grace.key_id).await;
    assert_eq!(gk["key"], grace.key.as_str());
    assert_eq!(gk["activations"].as_array().unwrap().len(), 1);
    assert_eq!(
        seller_key(&app, &ada.key_id).await["activations"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // An unknown organization, or a blocked one: a 404 page, signed in or not.
    not_found_page(&Browser::new(&app).get("/portal/no-such-shop").await);
    block(&app, &shop.org).await;
    not_found_page(&b.get(&format!("/portal/{slug}/overview")).await);
    not_found_page(&b.get(&format!("/portal/{slug}")).await);
}

#[track_caller]
fn not_found_page(page: &Page) {
    status(page, 404);
    assert!(
        page.content_type.starts_with("text/html"),
        "{}",
        page.content_type
    );
    assert!(page.body.contains("Page not found"), "{}", page.body);
}

/// Blocks an organization (what an operator does).
async fn block(app: &TestApp, org: &str) {
    use tollgate::domain::ids::OrganizationId;
    use tollgate::domain::organization::Organization;
    let id = OrganizationId(uuid::Uuid::parse_str(org).unwrap());
    app.state
        .store
        .update::<Organization, std::convert::Infallible>(&id.key(), async |o: &Organization| {
            let mut o = o.clone();
            o.blocked_at = Some(Utc::now());
            Ok(Some(o))
        })
        .await
        .unwrap();
}

#[actix_web::test]
async fn a_missing_or_forged_csrf_token_is_403_and_changes_nothing() {
    let app = roomy_app().await;
    let shop = portal_shop(&app, "acme-csrf").await;
    let ada = buyer(&app, &shop, "ada@csrf.example").await;
    let act = activate(&app, &shop.org, &ada.key, "pc").await;
    let slug = &shop.slug;
    let mut b = signed_in(&app, slug, &ada.email).await;
    // A token of another browser (its own nonce and session).
    let mut other = signed_in(&app, slug, &ada.email).await;
    let foreign = other.get(&format!("/portal/{slug}/overview")).await.csrf();
    let before = codes_for(&app, &ada.email).await.len();

    let forms: Vec<(String, Vec<(&str, &str)>)> = vec![
        (
            format!("/portal/{slug}/code"),
            vec![("email", ada.email.as_str())],
        ),
        (
            format!("/portal/{slug}/session"),
            vec![("email", ada.email.as_str()), ("code", "AAAAAA")],
        ),
        (format!("/portal/{slug}/sign-out"), vec![]),
        (
            format!("/portal/{slug}/subscriptions/{}", ada.subscription),
            vec![("action", "cancel")],
        ),
        (
            format!("/portal/{slug}/license-keys/{}/rotate", ada.key_id),
            vec![],
        ),
        (
            format!(
                "/portal/{slug}/license-keys/{}/activations/{act}/deactivate",
                ada.key_id
            ),
            vec![],
        ),
    ];
    for (path, fields) in &forms {
        for token in [None, Some(FORGED), Some(foreign.as_str())] {
            let mut form: Vec<(&str, &str)> = fields.clone();
            if let Some(t) = token {
                form.push(("csrf_token", t));
            }
            let page = b.post(path, &form).await;
            status(&page, 403);
            assert!(
                page.body.contains("Request refused"),
                "{path}: {}",
                page.body
            );
        }
    }
    // From another site, even with the right token: 403.
    let csrf = b.get(&format!("/portal/{slug}/overview")).await.csrf();
    let res = b
        .request(reqwest::Method::POST, &format!("/portal/{slug}/sign-out"))
        .header("Origin", "https://evil.example")
        .form(&[("csrf_token", csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);

    // Nothing changed: still signed in, no code sent, the subscription, key, activation.
    status(&b.get(&format!("/portal/{slug}/overview")).await, 200);
    assert_eq!(codes_for(&app, &ada.email).await.len(), before);
    assert_eq!(
        seller_subscription(&app, &ada.subscription).await["cancel_at_period_end"],
        false
    );
    let k = seller_key(&app, &ada.key_id).await;
    assert_eq!(k["key"], ada.key.as_str());
    assert_eq!(k["activations"].as_array().unwrap().len(), 1);
}

#[actix_web::test]
async fn a_session_of_another_organization_counts_as_signed_out() {
    let app = roomy_app().await;
    let a = portal_shop(&app, "shop-a").await;
    let b_shop = portal_shop(&app, "shop-b").await;
    let ada = buyer(&app, &a, "ada@two.example").await;
    buyer(&app, &b_shop, "ada@two.example").await;
    let mut b = signed_in(&app, &a.slug, &ada.email).await;
    status(&b.get("/portal/shop-a/overview").await, 200);
    to_sign_in(&b.get("/portal/shop-b/overview").await, "shop-b");
    to_sign_in(
        &b.get(&format!("/portal/shop-b/orders/{}", ada.order)).await,
        "shop-b",
    );
    // Its sign-in page shows, and a form of B is refused as signed out.
    status(&b.get("/portal/shop-b").await, 200);
    let csrf = b.get("/portal/shop-b").await.csrf();
    let page = b
        .post(
            &format!("/portal/shop-b/subscriptions/{}", ada.subscription),
            &[("csrf_token", &csrf), ("action", "cancel")],
        )
        .await;
    to_sign_in(&page, "shop-b");
    assert_eq!(
        seller_subscription(&app, &ada.subscription).await["cancel_at_period_end"],
        false
    );
}

#[actix_web::test]
async fn the_customer_portal_url_of_a_seller_signs_in_and_leaves_the_address_bar() {
    let app = roomy_app().await;
    let shop = portal_shop(&app, "acme-link").await;
    let other = portal_shop(&app, "other-link").await;
    let ada = buyer(&app, &shop, "ada@link.example").await;
    let r = app
        .post_json(
            "/v1/customer-sessions/",
            Some(&app.token),
            &json!({"customer_id": ada.customer}),
        )
        .await;
    r.expect(201);
    let url = r.body["customer_portal_url"].as_str().unwrap().to_string();
    assert!(
        url.starts_with(&format!(
            "{}/portal/acme-link?customer_session_token=polar_cst_",
            app.address
        )),
        "{url}"
    );

    // Under another organization's portal the token opens nothing.
    let foreign = url.replace("/portal/acme-link?", "/portal/other-link?");
    let mut b = Browser::new(&app);
    let page = b.get(&foreign).await;
    status(&page, 401);
    assert!(page.body.contains("This sign-in link has expired"));
    assert!(portal_cookie(&page).is_none());
    let _ = other;

    let page = b.get(&url).await;
    status(&page, 303);
    assert_eq!(page.location, "/portal/acme-link/overview");
    assert!(portal_cookie(&page).unwrap().contains("HttpOnly"));
    let page = b.get("/portal/acme-link/overview").await;
    status(&page, 200);
    assert!(page.body.contains("Desktop App"));

    // A made-up token: the sign-in page with 401, the address kept.
    let page = Browser::new(&app)
        .get("/portal/acme-link?customer_session_token=polar_cst_nope&email=ada%40link.example")
        .await;
    status(&page, 401);
    assert!(page.body.contains("value=\"ada@link.example\""));
}

#[actix_web::test]
async fn every_portal_route_is_listed_and_the_forms_targets_lead_to_sign_in() {
    let app = spawn_app().await;
    let page = Browser::new(&app).get("/portal/none/code").await;
    status(&page, 303);
    assert_eq!(page.location, "/portal/none");
    let registered: BTreeSet<(String, String)> = tollgate::resource::registered()
        .into_iter()
        .filter(|(_, p)| p.starts_with("/portal"))
        .collect();
    let listed: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|(m, p, _)| (m.to_uppercase(), p.to_string()))
        .collect();
    assert_eq!(registered, listed);
}
