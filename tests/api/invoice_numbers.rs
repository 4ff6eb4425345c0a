//! Issue 48: invoice numbers are gapless. An organization that invoices on payment sells
//! through concurrent paid checkouts; the numbers issued are exactly `ACME-0001..N` for
//! the N paid orders, each order one invoice, no number twice: on one node (200 at once),
//! on two nodes over PostgreSQL (100 through each at once), and across a `kill -9` of the
//! server in the middle of the run (the orders paid before the kill are all invoiced after
//! the restart, from the numbers the crash left unused).

use std::cell::Cell;
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use actix_web::rt::time::sleep;
use futures_util::future::{join, join_all};
use serde_json::{json, Value};
use tempfile::TempDir;
use tollgate::bootstrap::TOKEN_FILE;
use tollgate::domain::invoice::{Invoice, InvoiceKind};
use tollgate::domain::order::{InvoiceState, Order};
use tollgate_storage::{Store, StoreConfig};

use crate::binary::Binary;
use crate::checkouts::{
    buyer, by_price, confirm, id_of, product, secret, store_values, Api, CHECKOUTS,
};
use crate::helpers::{client, spawn_app};

const READY_DEADLINE: Duration = Duration::from_secs(30);

/// An organization invoicing on payment (prefix `ACME`) with one price of 1000; its price.
async fn shop(api: Api<'_>, slug: &str) -> String {
    let r = api
        .post(
            "/v1/organizations/",
            Some(api.token),
            &json!({"name": format!("Org {slug}"), "slug": slug}),
        )
        .await;
    r.expect(201);
    let org = id_of(&r.body);
    api.patch(
        &format!("/v1/organizations/{org}"),
        Some(api.token),
        &json!({"tax": {"country": "DE", "tax_id": "DE136695976", "registrations": ["eu_oss"],
                        "invoice_timing": "on_payment", "invoice_prefix": "ACME"}}),
    )
    .await
    .expect(200);
    let p = product(
        api,
        &org,
        "App",
        json!([{"amount_type": "fixed", "price_amount": 1000, "price_currency": "usd"}]),
    )
    .await;
    id_of(&p["prices"][0])
}

/// One paid checkout of `price`: `true` once the confirm is acknowledged. A busy server
/// (503, under the whole suite's load) is asked again, as a client would: a new checkout
/// is safe to create again, and a confirm answered 503 that went through anyway answers
/// `NotOpenCheckout` (403) the second time, which is a purchase made.
async fn buy(api: Api<'_>, price: &str, n: usize) -> bool {
    let mut c = None;
    for _ in 0..10 {
        let r = api.post(CHECKOUTS, Some(api.token), &by_price(price)).await;
        if r.status == 201 {
            c = Some(r.body);
            break;
        }
        assert_eq!(r.status, 503, "{}", r.body);
        sleep(Duration::from_millis(200)).await;
    }
    let c = c.expect("a checkout created within 10 tries");
    for attempt in 0..10 {
        let r = confirm(api, &secret(&c), &buyer(&format!("buyer{n}@example.com"))).await;
        match r.status.as_u16() {
            200 => return true,
            403 if attempt > 0 => return true,
            503 => sleep(Duration::from_millis(200)).await,
            other => panic!("confirm answered {other}: {}", r.body),
        }
    }
    false
}

/// `workers` buyers at once, each buying `each` times through `api` (numbered from
/// `first`); how many were acknowledged.
async fn crowd(api: Api<'_>, price: &str, first: usize, workers: usize, each: usize) -> usize {
    let acked = Cell::new(0);
    join_all((0..workers).map(|w| {
        let acked = &acked;
        async move {
            for i in 0..each {
                if buy(api, price, first + w * each + i).await {
                    acked.set(acked.get() + 1);
                }
            }
        }
    }))
    .await;
    acked.get()
}

/// The numbers of the invoices the orders listed through `api` hold, once every paid one
/// has one (bounded wait); asserts each order's number is its invoice's.
async fn numbers_once_issued(api: Api<'_>, expected_orders: usize) -> Vec<String> {
    for _ in 0..600 {
        let mut numbers = Vec::new();
        let mut pending = 0;
        for page in 1.. {
            let r = api
                .read(&format!("/v1/orders/?limit=100&page={page}"))
                .await;
            r.expect(200);
            let items = r.items();
            if items.is_empty() {
                break;
            }
            for o in items {
                if o["is_invoice_generated"] == true {
                    numbers.push(o["invoice_number"].as_str().unwrap().to_string());
                } else {
                    pending += 1;
                }
            }
        }
        if pending == 0 && numbers.len() >= expected_orders {
            return numbers;
        }
        sleep(Duration::from_millis(100)).await;
    }
    panic!("the orders were not all invoiced");
}

#[track_caller]
fn assert_gapless(mut numbers: Vec<String>, n: usize) {
    numbers.sort();
    let want: Vec<String> = (1..=n).map(|i| format!("ACME-{i:04}")).collect();
    assert_eq!(numbers, want, "the numbers issued are not exactly 1..{n}");
}

/// What the store holds: every invoice's number is its order's, one per order, and the
/// numbers are exactly 1..N for the N paid orders.
async fn assert_store_gapless(store: &Store) -> usize {
    let orders: Vec<Order> = store_values::<Order>(store).await;
    let invoices: Vec<Invoice> = store_values::<Invoice>(store).await;
    let paid = orders.iter().filter(|o| o.status.was_paid()).count();
    assert_eq!(invoices.len(), paid, "one invoice per paid order");
    let mut seen = HashSet::new();
    for i in &invoices {
        assert_eq!(i.kind, InvoiceKind::Invoice);
        assert!(seen.insert(i.order_id), "two invoices for one order");
        let o = orders
            .iter()
            .find(|o| o.id == i.order_id)
            .expect("the invoice's order");
        assert_eq!(
            o.invoice,
            InvoiceState::Issued {
                number: i.number.clone(),
                seq: i.seq
            }
        );
    }
    assert_gapless(invoices.iter().map(|i| i.number.clone()).collect(), paid);
    paid
}

#[actix_web::test]
async fn two_hundred_concurrent_paid_checkouts_get_numbers_1_to_200() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let price = shop(api, "numbers-one-node").await;
    let acked = crowd(api, &price, 0, 20, 10).await;
    assert_eq!(acked, 200);
    assert_gapless(numbers_once_issued(api, 200).await, 200);
    assert_eq!(assert_store_gapless(&app.state.store).await, 200);
}

#[actix_web::test]
async fn a_kill_9_mid_run_leaves_no_gap_and_no_duplicate() {
    let root = TempDir::new().expect("a temporary directory");
    let data = root.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let start = |run: u32| {
        let (root, data) = (root.path().to_path_buf(), data.clone());
        async move {
            Binary::start(
                &root,
                &data,
                &format!("server-{run}.log"),
                &[],
                READY_DEADLINE,
            )
            .await
        }
    };
    let server = std::cell::RefCell::new(start(1).await);
    let token = token_of(&data);
    let http = client();
    let address = server.borrow().address.clone();
    let api = Api {
        base: &address,
        client: &http,
        token: &token,
    };
    let price = shop(api, "numbers-kill").await;
    // Buyers keep buying; the server is killed once 60 purchases were acknowledged.
    let acked = Cell::new(0usize);
    let killed = Cell::new(false);
    let buyers = join_all((0..8).map(|w| {
        let (acked, killed, price) = (&acked, &killed, &price);
        async move {
            for i in 0..40 {
                if killed.get() {
                    return;
                }
                // After the kill a request fails: the buyer stops.
                let c = api
                    .client
                    .post(format!("{}/v1/checkouts/custom/", api.base))
                    .bearer_auth(api.token)
                    .json(&by_price(price))
                    .timeout(Duration::from_secs(20))
                    .send()
                    .await;
                let Ok(c) = c else { return };
                let Ok(c) = c.json::<Value>().await else {
                    return;
                };
                let Some(s) = c["client_secret"].as_str() else {
                    return;
                };
                let r = api
                    .client
                    .post(format!(
                        "{}/v1/checkouts/custom/client/{s}/confirm",
                        api.base
                    ))
                    .json(&buyer(&format!("k{w}-{i}@example.com")))
                    .timeout(Duration::from_secs(20))
                    .send()
                    .await;
                match r {
                    Ok(r) if r.status() == 200 => acked.set(acked.get() + 1),
                    _ => return,
                }
            }
        }
    }));
    let killer = async {
        while acked.get() < 60 {
            sleep(Duration::from_millis(5)).await;
        }
        server.borrow_mut().kill_9();
        killed.set(true);
    };
    join(killer, buyers).await;
    let acknowledged = acked.get();
    assert!(acknowledged >= 60, "{acknowledged} acknowledged");

    // Restarted over the same data: every paid order gets its invoice, from 1 up, no gap.
    let server = start(2).await;
    let api = Api {
        base: &server.address,
        client: &http,
        token: &token,
    };
    let numbers = numbers_once_issued(api, acknowledged).await;
    let n = numbers.len();
    assert!(
        n >= acknowledged,
        "{n} invoiced of {acknowledged} acknowledged"
    );
    assert_gapless(numbers, n);
    drop(server);
    let store = Store::open(&StoreConfig::new(&data)).expect("opening the store");
    assert_eq!(assert_store_gapless(&store).await, n);
}

fn token_of(data: &Path) -> String {
    std::fs::read_to_string(data.join(TOKEN_FILE))
        .expect("reading the bootstrap token")
        .trim()
        .to_string()
}

#[actix_web::test]
async fn two_nodes_over_postgresql_draw_every_number_once() {
    let Some(db) = tollgate_storage::testing::fresh_schema("invoice_numbers") else {
        return;
    };
    let root = TempDir::new().expect("a temporary directory");
    let node = |name: &'static str| {
        let (root, url, schema) = (root.path().to_path_buf(), db.url.clone(), db.schema.clone());
        async move {
            let data = root.join(name);
            std::fs::create_dir_all(&data).unwrap();
            Binary::start(
                &root,
                &data,
                &format!("{name}.log"),
                &[
                    ("TOLLGATE__STORAGE__BACKEND", "postgres"),
                    ("TOLLGATE__STORAGE__URL", url.as_str()),
                    ("TOLLGATE__STORAGE__SCHEMA", schema.as_str()),
                    ("TOLLGATE__STORAGE__POOL_SIZE", "8"),
                ],
                READY_DEADLINE,
            )
            .await
        }
    };
    let a = node("a").await;
    let b = node("b").await;
    let token = token_of(&root.path().join("a"));
    let http = client();
    let api_a = Api {
        base: &a.address,
        client: &http,
        token: &token,
    };
    let api_b = Api {
        base: &b.address,
        client: &http,
        token: &token,
    };
    let price = shop(api_a, "numbers-two-nodes").await;
    let (through_a, through_b) = join(
        crowd(api_a, &price, 0, 10, 10),
        crowd(api_b, &price, 100, 10, 10),
    )
    .await;
    assert_eq!((through_a, through_b), (100, 100));
    assert_gapless(numbers_once_issued(api_b, 200).await, 200);
    // Both nodes answer the same numbers.
    assert_gapless(numbers_once_issued(api_a, 200).await, 200);
}
