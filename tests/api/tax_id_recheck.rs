//! Issue 48, a business number the register did not answer for is asked again. A German
//! seller with VIES on (a fake VIES: it sleeps past `tax.lookup_timeout_ms` while no sale
//! of the number is stored, then says "not registered") sells to a French business: the
//! checkout completes reverse-charged on the format check, the order records the number
//! `Unverified`; the re-check pass, woken by the fan-out, asks again and records it
//! `Invalid`. The seller's order page then flags it, and the order's amounts are those it
//! was sold for. A number VIES never answers for stays unverified, "will be re-checked".
//! Another seller gets 404 for the page.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpResponse, HttpServer};
use serde_json::{json, Value};
use tollgate::auth::Scope;
use tollgate::config::Settings;
use tollgate::domain::ids::OrderId;
use tollgate::domain::order::Order;
use tollgate::domain::tax_breakdown::TaxIdStatus;
use tollgate::state::AppState;

use crate::checkouts::{id_of, product, Api};
use crate::dashboard::{assert_not_found, assert_status, main_of, seller, text_of};
use crate::helpers::{spawn_app_with, TestApp};
use crate::oauth::user_with_password;
use crate::tax_checkout::{bought, french_business, quoted, FR_BUSINESS, SELLER_TAX};

/// A Belgian business's number (its check digits pass) VIES never answers for.
const BE_BUSINESS: &str = "BE0403170701";

/// The lookup timeout of the test server.
const TIMEOUT_MS: u64 = 300;

/// A fake VIES: no answer in time until a sale with a tax number is stored, then "not
/// registered".
struct FakeVies {
    url: String,
    state: Arc<Gate>,
    handle: actix_web::dev::ServerHandle,
}

#[derive(Default)]
struct Gate {
    /// The application, once started (the fake reads its store to know whether the sale
    /// was made).
    app: OnceLock<web::Data<AppState>>,
    /// Requests left without an answer in time.
    slow: AtomicUsize,
    /// Requests answered "not registered".
    answered: AtomicUsize,
}

impl FakeVies {
    fn start() -> FakeVies {
        let state = Arc::new(Gate::default());
        let shared = state.clone();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(web::Data::new(shared.clone()))
                .route("/check-vat-number", web::post().to(vies))
        })
        .workers(1)
        .bind(("127.0.0.1", 0))
        .expect("binding the fake VIES");
        let port = server.addrs()[0].port();
        let server = server.run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        FakeVies {
            url: format!("http://127.0.0.1:{port}"),
            state,
            handle,
        }
    }
}

impl Drop for FakeVies {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
    }
}

async fn vies(gate: web::Data<Arc<Gate>>, body: web::Json<Value>) -> HttpResponse {
    let number = format!(
        "{}{}",
        body["countryCode"].as_str().unwrap_or_default(),
        body["vatNumber"].as_str().unwrap_or_default()
    );
    assert!(
        [FR_BUSINESS, BE_BUSINESS].contains(&number.as_str()),
        "{body}"
    );
    // The Belgian number never gets an answer in time.
    let sold = match gate.app.get() {
        Some(app) if number == FR_BUSINESS => app
            .store
            .scan::<Order>()
            .await
            .expect("the orders")
            .iter()
            .any(|o| {
                o.value
                    .tax
                    .tax_id
                    .as_ref()
                    .is_some_and(|t| t.value == number)
            }),
        _ => false,
    };
    if sold {
        gate.answered.fetch_add(1, Ordering::SeqCst);
        return HttpResponse::Ok().json(json!({
            "countryCode": "FR", "vatNumber": &FR_BUSINESS[2..],
            "requestDate": "2026-11-29+01:00", "valid": false, "name": "---", "address": "---"
        }));
    }
    gate.slow.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(TIMEOUT_MS * 4)).await;
    HttpResponse::Ok().json(json!({"countryCode": "FR", "vatNumber": &FR_BUSINESS[2..],
                                   "requestDate": "2026-11-29+01:00", "valid": true}))
}

/// The application with VIES on (the fake) and a short lookup timeout.
async fn app_with(fake: &FakeVies) -> TestApp {
    let dir = tempfile::tempdir().expect("a data directory");
    let mut settings = Settings::for_tests(dir.path());
    settings.tax.vies = true;
    settings.tax.vies_url = fake.url.clone();
    settings.tax.lookup_timeout_ms = TIMEOUT_MS;
    let app = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    assert!(fake.state.app.set(app.state.clone()).is_ok());
    app
}

async fn stored(app: &TestApp, id: &str) -> Order {
    let id: OrderId = id.parse().expect("an order id");
    app.state
        .store
        .get::<Order>(&id.key())
        .await
        .expect("the store")
        .expect("the order")
        .value
}

/// (amount, net, tax, total) of an order as the API answers it.
fn amounts(o: &Value) -> (i64, i64, i64, i64) {
    let n = |k: &str| o[k].as_i64().unwrap_or_else(|| panic!("no {k} in {o}"));
    (
        n("amount"),
        n("net_amount"),
        n("tax_amount"),
        n("total_amount"),
    )
}

#[actix_web::test]
async fn an_unverified_number_is_asked_again_and_the_page_flags_it_not_registered() {
    let fake = FakeVies::start();
    let app = app_with(&fake).await;
    let email = "recheck-seller@example.de";
    let user = user_with_password(&app, email).await;
    let token = app.issue_token(user, Scope::ALL).await;
    let (mut b, org) = seller(&app, email, "Recheck Shop").await;
    let api = Api {
        base: &app.address,
        client: &app.client,
        token: &token,
    };
    let r = api
        .patch(
            &format!("/v1/organizations/{org}"),
            Some(&token),
            &json!({"tax": {"country": "DE", "tax_id": SELLER_TAX,
                            "registrations": ["eu_oss"]},
                    "default_tax_behavior": "location"}),
        )
        .await;
    r.expect(200);
    let p = product(
        api,
        &org,
        "Lifetime",
        json!([{"amount_type": "fixed", "price_amount": 1200, "price_currency": "usd"}]),
    )
    .await;
    let price = id_of(&p["prices"][0]);

    // The checkout: VIES does not answer in time, the sale goes on reverse-charged.
    let (c, _) = quoted(api, &price, &french_business()).await;
    let o = bought(api, &c, &french_business(), "compta@acme.fr").await;
    assert!(
        fake.state.slow.load(Ordering::SeqCst) >= 1,
        "VIES was asked"
    );
    assert_eq!(amounts(&o), (1200, 1200, 0, 1200), "{o}");
    assert_eq!(
        o["tax_breakdown"][0]["taxability_reason"], "reverse_charge",
        "{o}"
    );
    assert_eq!(o["customer_tax_id"], FR_BUSINESS, "{o}");
    let id = id_of(&o);
    let sold = stored(&app, &id).await;
    assert_eq!(sold.tax.tax_id.as_ref().unwrap().value, FR_BUSINESS);

    // The pass asks again (woken by the fan-out: no minute's wait) and VIES answers.
    let deadline = Instant::now() + Duration::from_secs(30);
    let checked = loop {
        let now = stored(&app, &id).await;
        if now.tax.tax_id_status == Some(TaxIdStatus::Invalid) {
            break now;
        }
        assert_eq!(
            now.tax.tax_id_status,
            Some(TaxIdStatus::Unverified),
            "unverified until VIES answers"
        );
        assert!(
            Instant::now() < deadline,
            "the number was not re-checked (VIES asked {} times in time, {} without)",
            fake.state.answered.load(Ordering::SeqCst),
            fake.state.slow.load(Ordering::SeqCst)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(fake.state.answered.load(Ordering::SeqCst) >= 1);
    // The sale stands as charged.
    assert_eq!(
        (checked.amount, checked.tax_amount, &checked.tax.breakdown),
        (sold.amount, sold.tax_amount, &sold.tax.breakdown)
    );
    let r = app.get(&format!("/v1/orders/{id}"), Some(&token)).await;
    r.expect(200);
    assert_eq!(amounts(&r.body), amounts(&o), "{}", r.body);
    assert_eq!(r.body["tax_breakdown"], o["tax_breakdown"]);

    // The seller's page flags it.
    let path = format!("/dashboard/{org}/orders/{id}");
    let page = b.get(&path).await;
    assert_status(&page, 200);
    let flagged_page = page.body.clone();
    let main = main_of(&page);
    assert!(
        main.contains(&format!("id=\"tax-number\"><code>{FR_BUSINESS}</code>")),
        "{main}"
    );
    assert_eq!(text_of(&page, "tax-number-status"), "(not registered)");
    assert_eq!(
        text_of(&page, "tax-number-invalid"),
        "The register says this number is not registered. VAT was not charged on this \
         sale (reverse charge); the amounts stand as charged."
    );

    // A number VIES never answers for: unverified, and the page says it will be asked again.
    let mut belgian = french_business();
    belgian["customer_billing_address"] = json!({"country": "BE", "line1": "Rue Royale 1",
                                                  "city": "Bruxelles", "postal_code": "1000"});
    belgian["customer_tax_id"] = json!(BE_BUSINESS);
    let (c, _) = quoted(api, &price, &belgian).await;
    let be = bought(api, &c, &belgian, "compta@acme.be").await;
    assert_eq!(amounts(&be), (1200, 1200, 0, 1200), "{be}");
    let be_path = format!("/dashboard/{org}/orders/{}", id_of(&be));
    let page = b.get(&be_path).await;
    assert_status(&page, 200);
    assert_eq!(
        text_of(&page, "tax-number-status"),
        "(unverified, will be re-checked)"
    );
    assert!(!page.body.contains("id=\"tax-number-invalid\""));
    assert_eq!(
        stored(&app, &id_of(&be)).await.tax.tax_id_status,
        Some(TaxIdStatus::Unverified)
    );

    // Another seller does not see the page.
    let (mut other, _) = seller(&app, "other-recheck@example.com", "Other Shop").await;
    assert_not_found(&other.get(&path).await);
    let again = stored(&app, &id).await;
    assert_eq!(again.tax.tax_id_status, Some(TaxIdStatus::Invalid));
    // Drawn last (the server is not kept waiting): the flagged order page.
    crate::tools::render_page("dashboard-screenshots", "tax-id-invalid", &flagged_page);
}
