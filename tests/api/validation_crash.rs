//! `kill -9` under concurrent validation load, in both durability modes of the validation
//! counters (`license_keys.stats_flush_ms`, `docs/operating.md` "Durability"): strict loses no
//! acknowledged validation; batched loses at most the counts of its last interval; in both,
//! no acknowledged usage increment or activation is lost and usage never passes its limit.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use futures_util::future::{join, join_all};
use serde_json::{json, Value};
use tokio::time::sleep;

use crate::binary::Binary;
use crate::checkouts::{buyer, by_price, confirm, create_org, created, id_of, secret, Api};
use crate::helpers::client;

const READY: Duration = Duration::from_secs(30);
const LIMIT_USAGE: i64 = 60;
const WORKERS: usize = 12;

/// What the load saw acknowledged.
#[derive(Default)]
struct Acked {
    /// Instants of acknowledged validations (plain and incrementing ones).
    validations: Vec<Instant>,
    increments: i64,
    activations: usize,
}

async fn crash_under_load(stats_flush_ms: u64) {
    let root = tempfile::tempdir().expect("a temporary directory");
    let data = root.path().join("data");
    std::fs::create_dir_all(&data).expect("creating the data directory");
    let flush = stats_flush_ms.to_string();
    let env: &[(&str, &str)] = &[("TOLLGATE__LICENSE_KEYS__STATS_FLUSH_MS", flush.as_str())];
    let server = RefCell::new(Binary::start(root.path(), &data, "first.log", env, READY).await);
    let token = crate::helpers::bootstrap_token(&data);
    let http = client();
    let address = server.borrow().address.clone();
    let api = Api {
        base: &address,
        client: &http,
        token: &token,
    };

    // One key with a usage limit and room for a few activations, bought like any other.
    let org = create_org(api, &format!("crash-{stats_flush_ms}")).await;
    let benefit = api
        .posted(
            "/v1/benefits/",
            &json!({"type": "license_keys", "description": "Key", "organization_id": org,
                    "properties": {"limit_usage": LIMIT_USAGE, "activations": {"limit": 4, "enable_customer_admin": true}}}),
            201,
        )
        .await;
    let product = api
        .posted(
            "/v1/products/",
            &json!({"name": "App", "organization_id": org, "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 100, "price_currency": "usd"}]}),
            201,
        )
        .await;
    api.post(
        &format!("/v1/products/{}/benefits", id_of(&product)),
        Some(&token),
        &json!({"benefits": [id_of(&benefit)]}),
    )
    .await
    .expect(200);
    let c = created(api, &by_price(product["prices"][0]["id"].as_str().unwrap())).await;
    confirm(api, &secret(&c), &buyer("crash@example.com"))
        .await
        .expect(200);
    let keys = api.read("/v1/license-keys/").await;
    let key: Value = keys.items()[0].clone();
    let key_id = id_of(&key);
    let key_value = key["key"].as_str().unwrap().to_string();

    let acked = RefCell::new(Acked::default());
    let killed = Cell::new(false);
    let worker = |w: usize| {
        let (http, server, acked, killed, org, key_value) =
            (&http, &server, &acked, &killed, &org, &key_value);
        async move {
            for i in 0usize.. {
                if killed.get() {
                    break;
                }
                let address = server.borrow().address.clone();
                // Mostly plain validations; some increments; a few activations.
                let (path, body, kind) = match (w + i) % 10 {
                    0 => (
                        "activate",
                        json!({"key": key_value, "organization_id": org, "label": format!("m{w}-{i}")}),
                        2,
                    ),
                    1 | 2 => (
                        "validate",
                        json!({"key": key_value, "organization_id": org, "increment_usage": 1}),
                        1,
                    ),
                    _ => (
                        "validate",
                        json!({"key": key_value, "organization_id": org}),
                        0,
                    ),
                };
                let resp = http
                    .post(format!("{address}/v1/customer-portal/license-keys/{path}"))
                    .json(&body)
                    .send()
                    .await;
                let Ok(resp) = resp else { break };
                let status = resp.status().as_u16();
                if resp.bytes().await.is_err() {
                    break;
                }
                if status == 200 {
                    let mut a = acked.borrow_mut();
                    match kind {
                        2 => a.activations += 1,
                        1 => {
                            a.increments += 1;
                            a.validations.push(Instant::now());
                        }
                        _ => a.validations.push(Instant::now()),
                    }
                }
            }
        }
    };
    let killer = async {
        // Long enough that batched mode has written several intervals.
        let started = Instant::now();
        while started.elapsed() < Duration::from_millis(1500)
            || acked.borrow().validations.len() < 400
        {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "validations too slow"
            );
            sleep(Duration::from_millis(1)).await;
        }
        server.borrow_mut().kill_9();
        killed.set(true);
        Instant::now()
    };
    let (killed_at, _) = join(killer, join_all((0..WORKERS).map(worker))).await;
    drop(server);

    let server = Binary::start(root.path(), &data, "second.log", env, READY).await;
    let api = Api {
        base: &server.address,
        client: &http,
        token: &token,
    };
    let after = api.read(&format!("/v1/license-keys/{key_id}")).await;
    after.expect(200);
    let acked = acked.into_inner();
    let stored = after.body["validations"].as_i64().unwrap();
    let usage = after.body["usage"].as_i64().unwrap();
    let activations = after.body["activations"].as_array().unwrap().len();
    let total = acked.validations.len() as i64;
    // Validations answered within the last interval before the kill (with a margin for
    // the timer's scheduling): the most batched mode may lose.
    let window = Duration::from_millis(stats_flush_ms * 2 + 50);
    let recent = acked
        .validations
        .iter()
        .filter(|t| killed_at.duration_since(**t) <= window)
        .count() as i64;
    eprintln!(
        "kill -9 with stats_flush_ms={stats_flush_ms}: {total} validations acknowledged \
         ({recent} in the last {window:?}), {stored} counted after restart; \
         {} increments acknowledged, usage {usage}; {} activations acknowledged, {activations} stored",
        acked.increments, acked.activations
    );
    if stats_flush_ms == 0 {
        assert!(
            stored >= total,
            "strict: every acknowledged validation is counted"
        );
    } else {
        assert!(
            stored >= total - recent,
            "batched: at most the last interval's counts are lost"
        );
    }
    assert!(
        usage >= acked.increments,
        "no acknowledged increment is lost"
    );
    assert!(usage <= LIMIT_USAGE, "usage never passes its limit");
    assert!(
        activations >= acked.activations,
        "no acknowledged activation is lost"
    );
    assert!(activations <= 4);
}

#[actix_web::test]
async fn strict_counters_lose_no_acknowledged_validation_on_kill_9() {
    crash_under_load(0).await;
}

#[actix_web::test]
async fn batched_counters_lose_at_most_one_interval_on_kill_9() {
    crash_under_load(200).await;
}

/// Batched counters with an interval far longer than the test: a graceful stop (SIGTERM)
/// writes them all.
#[actix_web::test]
async fn batched_counters_are_all_written_on_a_graceful_stop() {
    let root = tempfile::tempdir().expect("a temporary directory");
    let data = root.path().join("data");
    std::fs::create_dir_all(&data).expect("creating the data directory");
    let env: &[(&str, &str)] = &[("TOLLGATE__LICENSE_KEYS__STATS_FLUSH_MS", "3600000")];
    let mut server = Binary::start(root.path(), &data, "first.log", env, READY).await;
    let token = crate::helpers::bootstrap_token(&data);
    let http = client();
    let address = server.address.clone();
    let api = Api {
        base: &address,
        client: &http,
        token: &token,
    };
    let cat = crate::checkouts::seed(api, "graceful").await;
    let c = created(api, &by_price(&cat.ebook_price)).await;
    confirm(api, &secret(&c), &buyer("stop@example.com"))
        .await
        .expect(200);
    let key = api.read("/v1/license-keys/").await.items()[0].clone();
    let body = json!({"key": key["key"], "organization_id": cat.org});
    for _ in 0..25 {
        api.post("/v1/customer-portal/license-keys/validate", None, &body)
            .await
            .expect(200);
    }
    // Live through the key's actor, not yet in the store's lists.
    let live = api.read(&format!("/v1/license-keys/{}", id_of(&key))).await;
    assert_eq!(live.body["validations"], 25);
    let listed = api.read("/v1/license-keys/").await.items()[0].clone();
    assert_eq!(listed["validations"], 0, "lists lag by up to one interval");
    server.sigterm();
    let status = server.wait_exit(Duration::from_secs(20)).await;
    assert!(status.success(), "{status:?}");
    let first_log = server.log_text();
    drop(server);
    let server = Binary::start(root.path(), &data, "second.log", env, READY).await;
    let api = Api {
        base: &server.address,
        client: &http,
        token: &token,
    };
    let listed = api.read("/v1/license-keys/").await.items()[0].clone();
    assert_eq!(
        listed["validations"], 25,
        "the first server's log:\n{first_log}"
    );
}

/// The validation hot path renders customers from a cache; a change of the customer shows
/// in the very next validation.
#[actix_web::test]
async fn a_customer_change_shows_in_the_next_validation() {
    let app = crate::helpers::spawn_app().await;
    let api = Api::of(&app);
    let cat = crate::checkouts::seed(api, "cached").await;
    let c = created(api, &by_price(&cat.ebook_price)).await;
    confirm(api, &secret(&c), &buyer("cache@example.com"))
        .await
        .expect(200);
    let key = api.read("/v1/license-keys/").await.items()[0].clone();
    let body = json!({"key": key["key"], "organization_id": cat.org});
    let validate = || async {
        let r = api
            .post("/v1/customer-portal/license-keys/validate", None, &body)
            .await;
        r.expect(200);
        r.body
    };
    let first = validate().await;
    assert_eq!(first["customer"]["name"], "Ada Lovelace");
    assert_eq!(validate().await["customer"]["name"], "Ada Lovelace");
    api.patch(
        &format!("/v1/customers/{}", key["customer_id"].as_str().unwrap()),
        Some(api.token),
        &json!({"name": "Grace Hopper", "email": "grace@example.com"}),
    )
    .await
    .expect(200);
    let after = validate().await;
    assert_eq!(after["customer"]["name"], "Grace Hopper");
    assert_eq!(after["customer"]["email"], "grace@example.com");
    assert_eq!(after["user"]["email"], "grace@example.com");
    assert_eq!(after["user"]["public_name"], "G");
    assert_eq!(after["validations"], 3);
}
