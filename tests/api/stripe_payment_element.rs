//! Stripe's Payment Element end to end at the API, against localstripe
//! (`tests/clients/stripe/payment_element.py`): a buyer's ConfirmationToken pays through an
//! intent with Stripe's automatic payment methods; a redirect method (iDEAL) waits on the
//! bank's page and comes back to the checkout's confirmation page; a delayed one (SEPA
//! Direct Debit) keeps the checkout `confirmed`, with nothing granted, until Stripe's signed
//! `payment_intent.succeeded` (keys granted then) or `payment_intent.payment_failed`
//! (checkout `failed`, nothing granted), each handled once however often it comes. Also
//! Apple Pay's domain-association file.

use std::time::{Duration, Instant};

use actix_web::rt::time::sleep;
use chrono::Utc;
use serde_json::{json, Value};
use tollgate::config::Settings;

use crate::checkouts::{buyer, by_price, client_get, confirm, created, id_of, secret, seed};
use crate::helpers::{spawn_app, spawn_app_with};
use crate::stripe::{
    intent_of, orders_of, spawn_shop, str_of, stripe_signature, wait_status, Shop, WEBHOOK_SECRET,
};

/// A test's wait for something a webhook does; far more than it takes.
const DEADLINE: Duration = Duration::from_secs(30);

/// Stripe's test IBAN whose debit succeeds (the fake holds every debit until settled).
const IBAN: &str = "AT611904300234573201";

/// A ConfirmationToken as Stripe.js makes it in the buyer's browser (publishable key).
pub(crate) async fn token(shop: &Shop, method: &[(&str, &str)]) -> String {
    let mut form = vec![
        ("key", crate::stripe::PUBLISHABLE_KEY),
        ("payment_method_data[billing_details][name]", "Ada Lovelace"),
        (
            "payment_method_data[billing_details][email]",
            "ada@example.com",
        ),
    ];
    form.extend_from_slice(method);
    let resp = reqwest::Client::new()
        .post(format!("{}/v1/confirmation_tokens", shop.ls.base))
        .form(&form)
        .send()
        .await
        .expect("creating a ConfirmationToken");
    assert_eq!(resp.status(), 200, "creating a ConfirmationToken");
    let body: Value = resp.json().await.expect("a token");
    id_of(&body)
}

pub(crate) async fn sepa_token(shop: &Shop) -> String {
    token(
        shop,
        &[
            ("payment_method_data[type]", "sepa_debit"),
            ("payment_method_data[sepa_debit][iban]", IBAN),
        ],
    )
    .await
}

/// The confirm body of a buyer paying with the ConfirmationToken `ctoken`.
fn paying_with(email: &str, ctoken: &str) -> Value {
    let mut body = buyer(email);
    body["confirmation_token_id"] = json!(ctoken);
    body
}

/// A Stripe event about `intent` as Stripe would send it, signed with the endpoint's secret.
async fn signed_event(shop: &Shop, id: &str, kind: &str, intent: &Value) -> crate::helpers::Reply {
    let body = json!({
        "id": id, "object": "event", "type": kind, "created": Utc::now().timestamp(),
        "data": {"object": intent},
    })
    .to_string();
    let signature = stripe_signature(body.as_bytes(), WEBHOOK_SECRET, Utc::now().timestamp());
    shop.deliver(body.as_bytes(), Some(&signature)).await
}

/// A checkout of the e-book (a license key) confirmed with a SEPA debit: processing.
async fn processing_debit(shop: &Shop, slug: &str) -> (String, Value, String) {
    let cat = seed(shop.api(), slug).await;
    let c = created(shop.api(), &by_price(&cat.ebook_price)).await;
    let ctoken = sepa_token(shop).await;
    let r = confirm(
        shop.api(),
        &secret(&c),
        &paying_with("ada@example.com", &ctoken),
    )
    .await;
    r.expect(200);
    (cat.org, r.body.clone(), id_of(&c))
}

#[actix_web::test]
async fn a_debit_keeps_the_checkout_confirmed_until_a_signed_success_grants_the_keys() {
    let shop = spawn_shop(false).await;
    let (org, confirmed, id) = processing_debit(&shop, "sepa-ok").await;
    // Stripe's answer: processing. The checkout stays confirmed (as Polar shows it).
    assert_eq!(confirmed["status"], "confirmed", "{confirmed}");
    let meta = &confirmed["payment_processor_metadata"];
    assert_eq!(meta["intent_status"], "processing", "{confirmed}");
    let pi = intent_of(&confirmed);
    // The intent took Stripe's automatic payment methods and the buyer's token.
    let intent = shop.ls.intent(&pi).await;
    assert_eq!(intent["status"], "processing", "{intent}");
    assert_eq!(
        intent["automatic_payment_methods"]["enabled"], true,
        "{intent}"
    );
    assert_eq!(
        intent["automatic_payment_methods"]["allow_redirects"], "always",
        "{intent}"
    );
    assert_eq!(intent["amount"], 2500);
    let method = shop
        .ls
        .get(&format!(
            "/v1/payment_methods/{}",
            str_of(&intent, "payment_method")
        ))
        .await;
    assert_eq!(method["type"], "sepa_debit", "{method}");
    // Stripe's own `payment_intent.processing` is handled: still confirmed, nothing paid.
    let processing = shop.ls.event_for("payment_intent.processing", &pi).await;
    shop.wait_handled(str_of(&processing, "id")).await;
    let now = client_get(shop.api(), str_of(&confirmed, "client_secret")).await;
    assert_eq!(now.body["status"], "confirmed", "{}", now.body);
    assert!(orders_of(&shop.orders(&org).await, &id).is_empty());
    assert!(shop.license_keys(&org).await.is_empty());

    // Days later, the bank pays: Stripe's signed event completes the purchase.
    let mut paid = intent.clone();
    paid["status"] = json!("succeeded");
    let r = signed_event(&shop, "evt_sepa_paid", "payment_intent.succeeded", &paid).await;
    r.expect(200);
    assert_eq!(r.body["duplicate"], false, "{}", r.body);
    let done = wait_status(&shop, str_of(&confirmed, "client_secret"), "succeeded").await;
    assert_eq!(done["payment_processor_metadata"]["intent_id"], pi.as_str());
    let orders = shop.orders(&org).await;
    let mine = orders_of(&orders, &id);
    assert_eq!(mine.len(), 1, "{orders:?}");
    assert_eq!(mine[0]["paid"], true, "{:?}", mine[0]);
    let keys = shop.license_keys(&org).await;
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert_eq!(keys[0]["status"], "granted", "{keys:?}");

    // The same event again, and a late failure of the same debit: nothing changes.
    let r = signed_event(&shop, "evt_sepa_paid", "payment_intent.succeeded", &paid).await;
    r.expect(200);
    assert_eq!(r.body["duplicate"], true, "{}", r.body);
    let mut failed = intent.clone();
    failed["status"] = json!("requires_payment_method");
    signed_event(
        &shop,
        "evt_sepa_late",
        "payment_intent.payment_failed",
        &failed,
    )
    .await
    .expect(200);
    let again = client_get(shop.api(), str_of(&confirmed, "client_secret")).await;
    assert_eq!(again.body["status"], "succeeded");
    assert_eq!(orders_of(&shop.orders(&org).await, &id).len(), 1);
    assert_eq!(shop.license_keys(&org).await.len(), 1);
}

#[actix_web::test]
async fn a_debit_that_fails_after_processing_fails_the_checkout_and_grants_nothing() {
    let shop = spawn_shop(false).await;
    let (org, confirmed, id) = processing_debit(&shop, "sepa-fail").await;
    let client_secret = str_of(&confirmed, "client_secret").to_string();
    let pi = intent_of(&confirmed);
    let processing = shop.ls.event_for("payment_intent.processing", &pi).await;
    shop.wait_handled(str_of(&processing, "id")).await;
    // An event of another intent changes nothing.
    let mut other = shop.ls.intent(&pi).await;
    other["id"] = json!("pi_someone_else");
    other["status"] = json!("requires_payment_method");
    signed_event(&shop, "evt_other", "payment_intent.payment_failed", &other)
        .await
        .expect(200);
    assert_eq!(
        client_get(shop.api(), &client_secret).await.body["status"],
        "confirmed"
    );

    // The bank refuses the debit: the checkout fails (the buyer has long left), and
    // nothing was granted.
    let mut failed = shop.ls.intent(&pi).await;
    failed["status"] = json!("requires_payment_method");
    failed["last_payment_error"] = json!({"code": "insufficient_funds",
        "message": "The account has insufficient funds to cover this payment."});
    let r = signed_event(
        &shop,
        "evt_sepa_failed",
        "payment_intent.payment_failed",
        &failed,
    )
    .await;
    r.expect(200);
    let c = client_get(shop.api(), &client_secret).await;
    assert_eq!(c.body["status"], "failed", "{}", c.body);
    assert!(orders_of(&shop.orders(&org).await, &id).is_empty());
    assert!(shop.license_keys(&org).await.is_empty());
    // The confirmation page tells the buyer; the checkout page is closed.
    let page = shop
        .app
        .get(&format!("/checkout/{client_secret}/confirmation"), None)
        .await;
    page.expect(200);
    let html = page.body.as_str().unwrap_or_default().to_string();
    assert!(html.contains("Payment failed"), "{html}");
    // Delivered again: acknowledged as a duplicate, still failed.
    let r = signed_event(
        &shop,
        "evt_sepa_failed",
        "payment_intent.payment_failed",
        &failed,
    )
    .await;
    assert_eq!(r.body["duplicate"], true, "{}", r.body);
    // A success reported for it afterwards (a forged or misrouted event) completes
    // nothing: the checkout is no longer waiting.
    let mut paid = failed.clone();
    paid["status"] = json!("succeeded");
    signed_event(&shop, "evt_sepa_after", "payment_intent.succeeded", &paid)
        .await
        .expect(200);
    assert_eq!(
        client_get(shop.api(), &client_secret).await.body["status"],
        "failed"
    );
    assert!(shop.license_keys(&org).await.is_empty());
}

#[actix_web::test]
async fn a_debit_settled_at_stripe_completes_through_stripe_s_own_event() {
    let shop = spawn_shop(false).await;
    let (org, confirmed, id) = processing_debit(&shop, "sepa-settled").await;
    let pi = intent_of(&confirmed);
    let (status, body) = shop
        .ls
        .post(
            &format!("/_tollgate/settle/{pi}"),
            &[("outcome", "succeeded")],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let event = shop.ls.event_for("payment_intent.succeeded", &pi).await;
    shop.wait_handled(str_of(&event, "id")).await;
    wait_status(&shop, str_of(&confirmed, "client_secret"), "succeeded").await;
    assert_eq!(orders_of(&shop.orders(&org).await, &id).len(), 1);
    assert_eq!(shop.license_keys(&org).await.len(), 1);
}

#[actix_web::test]
async fn a_redirect_method_waits_on_the_bank_and_comes_back_to_the_confirmation_page() {
    let shop = spawn_shop(false).await;
    let cat = seed(shop.api(), "ideal").await;
    let c = created(shop.api(), &by_price(&cat.ebook_price)).await;
    let client_secret = secret(&c);
    let ctoken = token(
        &shop,
        &[
            ("payment_method_data[type]", "ideal"),
            ("payment_method_data[ideal][bank]", "ing"),
        ],
    )
    .await;
    let r = confirm(
        shop.api(),
        &client_secret,
        &paying_with("grace@example.com", &ctoken),
    )
    .await;
    r.expect(200);
    // The page runs Stripe.js's next action with the intent's client secret.
    let meta = &r.body["payment_processor_metadata"];
    assert_eq!(r.body["status"], "confirmed", "{}", r.body);
    assert_eq!(meta["intent_status"], "requires_action", "{}", r.body);
    assert!(
        str_of(meta, "intent_client_secret").starts_with("pi_"),
        "{}",
        r.body
    );
    let pi = intent_of(&r.body);
    let intent = shop.ls.intent(&pi).await;
    let redirect = &intent["next_action"]["redirect_to_url"];
    let return_url = shop
        .app
        .url(&format!("/checkout/{client_secret}/confirmation"));
    assert_eq!(redirect["return_url"], return_url.as_str(), "{intent}");

    // While the buyer is at the bank, the confirmation page says processing.
    let page = shop
        .app
        .get(&format!("/checkout/{client_secret}/confirmation"), None)
        .await;
    assert!(
        page.body
            .as_str()
            .unwrap_or_default()
            .contains("Processing"),
        "{:?}",
        page.body
    );
    // The bank authorizes: back to the return URL with Stripe's parameters.
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client");
    let resp = no_redirects
        .post(format!("{}/_tollgate/bank/{pi}", shop.ls.base))
        .form(&[
            ("client_secret", str_of(&intent, "client_secret")),
            ("action", "authorize"),
        ])
        .send()
        .await
        .expect("the bank's answer");
    assert_eq!(resp.status(), 302);
    let location = resp.headers()["location"]
        .to_str()
        .expect("a location")
        .to_string();
    assert!(
        location.starts_with(&format!("{return_url}?payment_intent={pi}&")),
        "{location}"
    );
    assert!(
        location.ends_with("redirect_status=succeeded"),
        "{location}"
    );
    // The confirmation page the buyer lands on, with those parameters, settles it (it asks
    // Stripe), whether or not the webhook came first.
    let path = location.trim_start_matches(&shop.app.address);
    let started = Instant::now();
    loop {
        let page = shop.app.get(path, None).await;
        page.expect(200);
        if page
            .body
            .as_str()
            .unwrap_or_default()
            .contains("license-key")
        {
            break;
        }
        assert!(started.elapsed() < DEADLINE, "{:?}", page.body);
        sleep(Duration::from_millis(200)).await;
    }
    let done = client_get(shop.api(), &client_secret).await;
    assert_eq!(done.body["status"], "succeeded", "{}", done.body);
    assert_eq!(orders_of(&shop.orders(&cat.org).await, &id_of(&c)).len(), 1);
}

#[actix_web::test]
async fn a_failed_bank_page_reopens_the_checkout_for_another_method() {
    let shop = spawn_shop(false).await;
    let cat = seed(shop.api(), "ideal-fail").await;
    let c = created(shop.api(), &by_price(&cat.ebook_price)).await;
    let client_secret = secret(&c);
    let ctoken = token(
        &shop,
        &[
            ("payment_method_data[type]", "ideal"),
            ("payment_method_data[ideal][bank]", "rabobank"),
        ],
    )
    .await;
    let r = confirm(
        shop.api(),
        &client_secret,
        &paying_with("grace@example.com", &ctoken),
    )
    .await;
    r.expect(200);
    let pi = intent_of(&r.body);
    let intent = shop.ls.intent(&pi).await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(crate::helpers::CLIENT_TIMEOUT)
        .build()
        .expect("a client");
    let answer = client
        .post(format!("{}/_tollgate/bank/{pi}", shop.ls.base))
        .form(&[
            ("client_secret", str_of(&intent, "client_secret")),
            ("action", "fail"),
        ])
        .send()
        .await
        .expect("the bank's answer");
    assert_eq!(answer.status(), 302);
    let back = answer
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(back.contains("redirect_status=failed"), "{back}");
    let event = shop
        .ls
        .event_for("payment_intent.payment_failed", &pi)
        .await;
    shop.wait_handled(str_of(&event, "id")).await;
    // The buyer was there: the checkout is open again (not failed), and a card pays it.
    wait_status(&shop, &client_secret, "open").await;
    // Back from the bank, the buyer lands on the checkout, which tells them why.
    let landed = client.get(&back).send().await.expect("the return page");
    assert!(landed.status().is_redirection(), "{}", landed.status());
    let to = landed
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert_eq!(to, format!("/checkout/{client_secret}#payment-failed"));
    let card = token(
        &shop,
        &[
            ("payment_method_data[type]", "card"),
            ("payment_method_data[card][number]", "4242424242424242"),
            ("payment_method_data[card][exp_month]", "12"),
            ("payment_method_data[card][exp_year]", "2034"),
            ("payment_method_data[card][cvc]", "123"),
        ],
    )
    .await;
    let r = confirm(
        shop.api(),
        &client_secret,
        &paying_with("grace@example.com", &card),
    )
    .await;
    r.expect(200);
    assert_eq!(
        r.body["payment_processor_metadata"]["intent_status"], "succeeded",
        "{}",
        r.body
    );
    assert_eq!(
        client_get(shop.api(), &client_secret).await.body["status"],
        "succeeded"
    );
    // A token is used once.
    let r = confirm(
        shop.api(),
        &secret(&created(shop.api(), &by_price(&cat.ebook_price)).await),
        &paying_with("grace@example.com", &card),
    )
    .await;
    r.expect(400);
}

#[actix_web::test]
async fn the_apple_pay_file_is_served_as_configured_and_not_found_without_one() {
    let app = spawn_app().await;
    app.get(
        "/.well-known/apple-developer-merchantid-domain-association",
        None,
    )
    .await
    .expect(404);

    let dir = tempfile::tempdir().expect("a data directory");
    let file = dir.path().join("association.txt");
    let content = "7B227073704964223A2239373943394538343346343131343044\n";
    std::fs::write(&file, content).expect("writing the file");
    let mut settings = Settings::for_tests(dir.path());
    settings.payments.apple_pay_domain_association = file.display().to_string();
    let app = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let r = app
        .get(
            "/.well-known/apple-developer-merchantid-domain-association",
            None,
        )
        .await;
    r.expect(200);
    assert!(
        r.content_type().starts_with("text/plain"),
        "{}",
        r.content_type()
    );
    assert_eq!(r.body.as_str(), Some(content));
    // A path that cannot be read stops start-up, naming the key.
    let dir = tempfile::tempdir().expect("a data directory");
    let mut settings = Settings::for_tests(dir.path());
    settings.payments.apple_pay_domain_association =
        dir.path().join("missing").display().to_string();
    let e = tollgate::startup::Application::build(settings)
        .await
        .err()
        .expect("refused");
    assert!(
        e.to_string()
            .contains("payments.apple_pay_domain_association"),
        "{e}"
    );
}
