//! Crash safety of a purchase on the real binary (behaviour.md "Checkout lifecycle"):
//! a checkout left `confirmed` by a crash between confirm's two writes is completed on
//! start-up, exactly once; and a purchase acknowledged before `kill -9` is all there after a
//! restart (order, subscription, license keys).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};
use tempfile::TempDir;
use tollgate::app::checkout::FAULT_AFTER_CONFIRM;
use tollgate::bootstrap::TOKEN_FILE;
use tollgate::domain::discount::Discount;
use tollgate::domain::order::Order;
use tollgate_actors::checkout::CheckoutStatus;
use tollgate_actors::license_key::LicenseKey;
use tollgate_actors::subscription::Subscription;
use tollgate_storage::{Store, StoreConfig};

use crate::binary::Binary;
use crate::checkouts::{
    assert_acme_key, assert_subscription_purchase, buyer, by_price, check_purchase_endpoints,
    client_get, confirm, confirm_path, created, get_by_id, id_of, purchase_of, secret, seed,
    store_values, stored_checkout, with, Api, Catalog,
};
use crate::helpers::client;

const READY_DEADLINE: Duration = Duration::from_secs(30);
const EXIT_DEADLINE: Duration = Duration::from_secs(20);
const LOG_RECOVERED: &str = "completed confirmed checkouts left by a previous run";

/// A data directory with the servers' logs beside it.
struct Harness {
    root: TempDir,
    client: reqwest::Client,
    runs: u32,
}

impl Harness {
    fn new() -> Harness {
        let root = tempfile::tempdir().expect("creating a temporary directory");
        std::fs::create_dir_all(root.path().join("data")).expect("creating the data directory");
        Harness {
            root,
            client: client(),
            runs: 0,
        }
    }

    fn data_dir(&self) -> PathBuf {
        self.root.path().join("data")
    }

    fn token(&self) -> String {
        std::fs::read_to_string(self.data_dir().join(TOKEN_FILE))
            .expect("reading the bootstrap token")
            .trim()
            .to_string()
    }

    /// Starts the binary over the data directory; `fault`: with the test-only fault point
    /// that aborts the process right after a confirm is durable.
    async fn start(&mut self, fault: bool) -> Binary {
        self.runs += 1;
        let env: &[(&str, &str)] = if fault {
            &[(FAULT_AFTER_CONFIRM, "1")]
        } else {
            &[]
        };
        Binary::start(
            self.root.path(),
            &self.data_dir(),
            &format!("server-{}.log", self.runs),
            env,
            READY_DEADLINE,
        )
        .await
    }

    /// Opens the store of a stopped server (the caller drops it before the next start).
    fn open_store(&self) -> Store {
        Store::open(&StoreConfig::new(self.data_dir())).expect("opening the store")
    }
}

fn api<'a>(server: &'a Binary, h: &'a Harness, token: &'a str) -> Api<'a> {
    Api {
        base: &server.address,
        client: &h.client,
        token,
    }
}

async fn redemptions(store: &Store, discount: &str) -> i64 {
    let key = uuid::Uuid::parse_str(discount).unwrap().as_bytes().to_vec();
    store
        .get::<Discount>(&key)
        .await
        .unwrap()
        .expect("the discount is stored")
        .value
        .redemptions_count
}

/// Every record of the three kinds a purchase creates: (orders, subscriptions, keys).
async fn totals(store: &Store) -> (usize, usize, usize) {
    (
        store_values::<Order>(store).await.len(),
        store_values::<Subscription>(store).await.len(),
        store_values::<LicenseKey>(store).await.len(),
    )
}

#[actix_web::test]
async fn a_crash_between_confirm_and_settlement_is_completed_once_on_restart() {
    let mut h = Harness::new();
    let mut server = h.start(true).await;
    let token = h.token();
    let (cat, id, s): (Catalog, String, String) = {
        let api = api(&server, &h, &token);
        let cat = seed(api, "fault").await;
        let c = created(
            api,
            &with(
                by_price(&cat.monthly),
                json!({"discount_id": cat.discount, "metadata": {"run": "fault"}}),
            ),
        )
        .await;
        (cat, id_of(&c), secret(&c))
    };

    // Confirm: the server aborts after the confirmation is durable, before it is settled,
    // so the request gets no answer.
    let sent = h
        .client
        .post(format!("{}{}", server.address, confirm_path(&s)))
        .json(&buyer("crash@example.com"))
        .send()
        .await;
    match sent {
        Err(_) => {}
        Ok(resp) => panic!(
            "confirm answered {} although the server should have aborted: {:?}",
            resp.status(),
            resp.text().await
        ),
    }
    let exit = server.wait_exit(EXIT_DEADLINE).await;
    assert!(!exit.success(), "the fault point aborts: {exit}");
    assert!(
        server.log_text().contains("fault point"),
        "the process died at the fault point; log:\n{}",
        server.log_text()
    );
    drop(server);

    // Between the two writes: confirmed, redeemed, nothing bought yet.
    {
        let store = h.open_store();
        let c = stored_checkout(&store, &id).await;
        assert_eq!(c.status, CheckoutStatus::Confirmed, "{c:#?}");
        assert!(
            c.customer_id.is_some(),
            "the customer is part of the confirm write"
        );
        assert_eq!(c.confirmation_token.as_deref(), Some("tok_visa"));
        assert_eq!(totals(&store).await, (0, 0, 0));
        assert_eq!(redemptions(&store, &cat.discount).await, 1);
    }

    // Restart without the fault point: start-up recovery completes the purchase before
    // the service reports ready.
    let mut server = h.start(false).await;
    assert!(
        server.log_text().contains(LOG_RECOVERED),
        "recovery ran; log:\n{}",
        server.log_text()
    );
    {
        let api = api(&server, &h, &token);
        let g = get_by_id(api, &id).await;
        g.expect(200);
        assert_eq!(g.body["status"], "succeeded", "{}", g.body);
        assert_eq!(g.body["customer_email"], "crash@example.com");
        let p = client_get(api, &s).await;
        p.expect(200);
        assert_eq!(p.body["status"], "succeeded");
        // Not open any more.
        let r = confirm(api, &s, &buyer("crash@example.com")).await;
        crate::checkouts::assert_not_open(&r, &id, "succeeded");
        let d = api.read(&format!("/v1/discounts/{}", cat.discount)).await;
        assert_eq!(d.body["redemptions_count"], 1, "{}", d.body);
        let customers = api
            .read(&format!("/v1/customers/?organization_id={}", cat.org))
            .await;
        customers.expect(200);
        assert_eq!(customers.total_count(), 1, "{}", customers.body);
    }
    // kill -9 right away: what recovery wrote is durable.
    server.kill_9();
    drop(server);

    let purchase = {
        let store = h.open_store();
        let p = purchase_of(&store, &id).await;
        assert_subscription_purchase(
            &p,
            &id,
            1000,
            &cat.acme_benefit,
            Some(cat.plain_benefit.as_str()),
        );
        assert_eq!(p.order.metadata.to_json(), json!({"run": "fault"}));
        assert_eq!(
            totals(&store).await,
            (1, 1, 2),
            "exactly one of each (two keys)"
        );
        assert_eq!(
            stored_checkout(&store, &id).await.status,
            CheckoutStatus::Succeeded
        );
        assert_eq!(redemptions(&store, &cat.discount).await, 1);
        p
    };

    // Another restart settles nothing again, and the endpoints show the purchase.
    let server = h.start(false).await;
    assert!(
        !server.log_text().contains(LOG_RECOVERED),
        "nothing left to recover; log:\n{}",
        server.log_text()
    );
    {
        let api = api(&server, &h, &token);
        check_purchase_endpoints(api, &cat.org, &id, &purchase).await;
        assert_eq!(get_by_id(api, &id).await.body["status"], "succeeded");
    }
    drop(server);
    let store = h.open_store();
    assert_eq!(totals(&store).await, (1, 1, 2));
    let again = purchase_of(&store, &id).await;
    assert_eq!(again.order, purchase.order);
    assert_eq!(again.subscription, purchase.subscription);
    let keys = |p: &crate::checkouts::Purchase| {
        let mut k: Vec<(String, String)> = p
            .keys
            .iter()
            .map(|k| (k.id.to_string(), k.key.clone()))
            .collect();
        k.sort();
        k
    };
    assert_eq!(keys(&again), keys(&purchase), "the same keys, not new ones");
}

#[actix_web::test]
async fn a_purchase_acknowledged_before_kill_9_is_all_there_after_restart() {
    let mut h = Harness::new();
    let mut server = h.start(false).await;
    let token = h.token();
    let (cat, sub_id, one_id, session): (Catalog, String, String, String) = {
        let api = api(&server, &h, &token);
        let cat = seed(api, "kill9").await;
        let sub = created(api, &by_price(&cat.monthly)).await;
        let one = created(api, &by_price(&cat.ebook_price)).await;
        let r = confirm(api, &secret(&one), &buyer("kill@example.com")).await;
        r.expect(200);
        // The first confirm created the customer: its session is the whole portal's.
        let session: Value = r.body["customer_session_token"].clone();
        let r = confirm(api, &secret(&sub), &buyer("kill@example.com")).await;
        r.expect(200);
        assert_eq!(r.body["status"], "confirmed");
        (
            cat,
            id_of(&sub),
            id_of(&one),
            session.as_str().unwrap().to_string(),
        )
    };
    // kill -9 right after the answer.
    server.kill_9();
    drop(server);

    let (sub_purchase, one_purchase) = {
        let store = h.open_store();
        let sub = purchase_of(&store, &sub_id).await;
        assert_subscription_purchase(
            &sub,
            &sub_id,
            1500,
            &cat.acme_benefit,
            Some(cat.plain_benefit.as_str()),
        );
        let one = purchase_of(&store, &one_id).await;
        assert!(one.subscription.is_none());
        assert_eq!(one.order.amount, 2500);
        assert_eq!(one.keys.len(), 1);
        assert_acme_key(&one.keys[0]);
        assert_eq!(totals(&store).await, (2, 1, 3));
        for id in [&sub_id, &one_id] {
            assert_eq!(
                stored_checkout(&store, id).await.status,
                CheckoutStatus::Succeeded
            );
        }
        (sub, one)
    };

    let server = h.start(false).await;
    assert!(
        !server.log_text().contains(LOG_RECOVERED),
        "both purchases were settled before the kill; log:\n{}",
        server.log_text()
    );
    let api = api(&server, &h, &token);
    for id in [&sub_id, &one_id] {
        let g = get_by_id(api, id).await;
        g.expect(200);
        assert_eq!(g.body["status"], "succeeded", "{}", g.body);
    }
    check_purchase_endpoints(api, &cat.org, &sub_id, &sub_purchase).await;
    check_purchase_endpoints(api, &cat.org, &one_id, &one_purchase).await;
    let customers = api
        .read(&format!("/v1/customers/?organization_id={}", cat.org))
        .await;
    assert_eq!(customers.total_count(), 1, "{}", customers.body);
    // The customer session survived the crash too.
    if api
        .served("/v1/customer-portal/license-keys/")
        .await
        .is_some()
    {
        let r = api
            .get("/v1/customer-portal/license-keys/", Some(&session))
            .await;
        r.expect(200);
        assert_eq!(r.total_count(), 3, "{}", r.body);
    } else {
        // TODO: check the customer portal once GET /v1/customer-portal/license-keys/ is served.
        eprintln!("the customer portal key list is not served yet; skipped");
    }
}
