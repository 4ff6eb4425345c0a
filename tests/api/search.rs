//! Search through the search indexes, never a scan (issue 52): `GET /v1/customers/?query=`
//! over a few thousand customers answers what the predicate answers over all of them
//! (Polar's `query` from 3 characters, word beginnings below), in the list's order, with
//! the exact `total_count`; another organization's customers never match; license keys
//! by fragment and by customer, and orders by customer and id (`?query=`, Tollgate's
//! extension) answer their predicates; and a shop generated alike on the embedded store and
//! on PostgreSQL answers the same.

use chrono::{DateTime, Duration, TimeZone, Utc};
use reqwest::Method;
use serde_json::json;
use serde_json::Value;
use tempfile::TempDir;
use tollgate::auth::Scope;
use tollgate::config::{Settings, StorageBackend};
use tollgate::domain::customer::{matches_search, normalize_email, Customer};
use tollgate::domain::grants::KeyGrant;
use tollgate::domain::ids::{
    BenefitId, CustomerId, LicenseKeyId, OrderId, OrganizationId, ProductId,
};
use tollgate::domain::order::{BillingReason, Order, OrderStatus};
use tollgate::domain::product::Product;
use tollgate_actors::license_key::search::{matches_fragment, normalize_fragment};
use tollgate_actors::license_key::LicenseKey;
use tollgate_storage::{Batch, Expect};

use crate::helpers::{spawn_app, spawn_app_with, Reply, TestApp};

const CUSTOMERS: &str = "/v1/customers/";

const FIRST: &[&str] = &[
    "John", "Mary", "Jo", "Ann", "Zoë", "Li", "Émile", "Bob", "Alice", "Jean-Luc", "Smitty",
];
const LAST: &[&str] = &[
    "Smith",
    "Jones",
    "O'Hara",
    "Ödön",
    "Lee",
    "Martin",
    "Smithers",
    "Ng",
    "de la Cruz",
];
const DOMAINS: &[&str] = &["Gmail.com", "example.org", "yahoo.fr", "mail.co", "x.io"];

/// A deterministic shop's customers: names (some missing), e-mail addresses (mixed case)
/// and external ids (some), creation times in groups of three equal ones (ties broken by
/// id).
fn customers(org: OrganizationId, n: u64, salt: u64) -> Vec<Customer> {
    let start: DateTime<Utc> = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64 ^ salt;
    let mut next = move |m: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as usize) % m
    };
    (0..n)
        .map(|i| {
            let first = FIRST[next(FIRST.len())];
            let last = LAST[next(LAST.len())];
            let domain = DOMAINS[next(DOMAINS.len())];
            let local = format!("{first}.{last}{i}").replace([' ', '\''], "");
            let id = CustomerId::from_uuid(uuid::Uuid::from_u128(
                (u128::from(salt) << 64) | u128::from(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            ));
            let created = start + Duration::seconds((i / 3) as i64);
            let mut c = Customer::new(id, org, format!("{local}@{domain}"), created);
            if i % 7 != 0 {
                c.name = Some(format!("{first} {last}"));
            }
            match i % 5 {
                0 => c.external_id = Some(format!("EXT-{i:05}")),
                1 => c.external_id = Some(format!("usr{i}")),
                _ => {}
            }
            c
        })
        .collect()
}

async fn seed(app: &TestApp, all: &[Customer]) {
    for chunk in all.chunks(250) {
        let mut batch = Batch::new();
        for c in chunk {
            batch.put(c, Expect::Absent).unwrap();
        }
        app.state.store.commit_durable(&batch).await.unwrap();
    }
}

/// Polar's `query` as Tollgate answered it before the index (a scan of every customer).
fn polar_query(c: &Customer, needle: &str) -> bool {
    c.email.to_lowercase().contains(needle)
        || c.name
            .as_ref()
            .is_some_and(|m| m.to_lowercase().contains(needle))
        || c.external_id
            .as_ref()
            .is_some_and(|e| e.to_lowercase().starts_with(needle))
}

const NEEDLES: &[&str] = &[
    "a",
    "o",
    "é",
    "jo",
    "ZO",
    "gm",
    "ex",
    "ng",
    "us",
    "e-",
    "smi",
    "GMAIL",
    "john.smith1",
    "@example.org",
    "ext-0001",
    "usr1",
    "zzzz",
    "n-l",
    "ann ",
    "1@",
    "ödö",
    "smithers42@x.io",
];

async fn list(app: &TestApp, token: &str, params: &[(&str, String)]) -> Reply {
    app.send(
        app.request(Method::GET, CUSTOMERS, Some(token))
            .query(params),
    )
    .await
}

fn ids(r: &Reply) -> Vec<String> {
    r.items()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

/// Creation time, then id, newest first: the default list order.
fn newest_first(a: &Customer, b: &Customer) -> std::cmp::Ordering {
    (b.created_at.timestamp_micros(), b.id.key())
        .cmp(&(a.created_at.timestamp_micros(), a.id.key()))
}

/// Every needle's answers (first and third pages of 40, by e-mail on one), checked against
/// the predicate over all of `mine` (the customers `org` holds), as
/// `(needle, total, ids of the pages)`.
async fn search_answers(
    app: &TestApp,
    org: OrganizationId,
    mine: &[Customer],
) -> Vec<(String, u64, Vec<String>)> {
    let mut answers = Vec::new();
    for needle in NEEDLES {
        let lower = needle.to_lowercase();
        let mut expected: Vec<&Customer> =
            mine.iter().filter(|c| matches_search(c, &lower)).collect();
        if lower.chars().count() >= 3 {
            let polar: Vec<&Customer> = mine.iter().filter(|c| polar_query(c, &lower)).collect();
            assert_eq!(expected, polar, "{needle}: Polar's query from 3 characters");
        }
        expected.sort_by(|a, b| newest_first(a, b));
        let mut got = Vec::new();
        for page in [1u64, 3] {
            let r = list(
                app,
                &app.token,
                &[
                    ("organization_id", org.to_string()),
                    ("query", needle.to_string()),
                    ("limit", "40".into()),
                    ("page", page.to_string()),
                ],
            )
            .await;
            r.expect(200);
            assert_eq!(r.total_count(), expected.len() as u64, "{needle}");
            let want: Vec<String> = expected
                .iter()
                .skip(((page - 1) * 40) as usize)
                .take(40)
                .map(|c| c.id.to_string())
                .collect();
            assert_eq!(ids(&r), want, "{needle} page {page}");
            got.extend(want);
        }
        // By e-mail, ties in creation order.
        let r = list(
            app,
            &app.token,
            &[
                ("organization_id", org.to_string()),
                ("query", needle.to_string()),
                ("sorting", "email".into()),
                ("limit", "25".into()),
            ],
        )
        .await;
        let mut by_email = expected.clone();
        by_email.sort_by(|a, b| {
            normalize_email(&a.email)
                .cmp(&normalize_email(&b.email))
                .then(
                    (a.created_at.timestamp_micros(), a.id.key())
                        .cmp(&(b.created_at.timestamp_micros(), b.id.key())),
                )
        });
        let want: Vec<String> = by_email.iter().take(25).map(|c| c.id.to_string()).collect();
        assert_eq!(ids(&r), want, "{needle} by e-mail");
        got.extend(want);
        answers.push((needle.to_string(), expected.len() as u64, got));
    }
    answers
}

/// A deterministic key for the `i`th customer: a UUID-like value, some with a prefix.
fn key_value(i: u64) -> String {
    let h = u128::from(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) * 0x1_0000_0001 + u128::from(i);
    let uuid = format!(
        "{:08X}-{:04X}-4{:03X}-{:04X}-{:012X}",
        (h >> 96) as u32,
        (h >> 80) as u16,
        (h >> 68) as u16 & 0xfff,
        (h >> 52) as u16,
        (h as u64) & 0xffff_ffff_ffff
    );
    if i.is_multiple_of(4) {
        format!("ACME-{uuid}")
    } else {
        uuid
    }
}

/// A key for each of every second customer, and an order for each of every third, ten
/// minutes after the customer.
fn keys_and_orders(mine: &[Customer], product: &Product) -> (Vec<LicenseKey>, Vec<Order>) {
    let benefit = BenefitId::from_uuid(uuid::Uuid::from_u128(7));
    let mut keys = Vec::new();
    let mut orders = Vec::new();
    for (i, c) in mine.iter().enumerate() {
        let i = i as u64;
        let at = c.created_at + Duration::minutes(10);
        if i.is_multiple_of(2) {
            let grant = KeyGrant {
                benefit_id: benefit,
                prefix: None,
                limit_activations: None,
                allow_replacement: false,
                limit_usage: None,
                granted_at: at,
                expires_at: None,
                paid_until: None,
            };
            keys.push(LicenseKey::from_grant(
                LicenseKeyId::from_uuid(uuid::Uuid::from_u128(u128::from(i) << 32 | 0xbeef)),
                c.organization_id,
                c.id,
                &grant,
                key_value(i),
                None,
                None,
            ));
        }
        if i.is_multiple_of(3) {
            orders.push(Order {
                id: OrderId::from_uuid(uuid::Uuid::from_u128(u128::from(i) << 40 | 0xfeed)),
                organization_id: c.organization_id,
                created_at: at,
                modified_at: None,
                status: OrderStatus::Paid,
                amount: 1000,
                tax_amount: 0,
                refunded_amount: 0,
                refunded_tax_amount: 0,
                currency: "usd".into(),
                billing_reason: BillingReason::Purchase,
                billing_address: None,
                customer_id: c.id,
                product_id: product.id,
                product_price_id: product.prices[0].id,
                recurring: false,
                discount_id: None,
                subscription_id: None,
                checkout_id: None,
                metadata: Default::default(),
                custom_field_data: Default::default(),
                customer_email: c.email.clone(),
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
            });
        }
    }
    (keys, orders)
}

async fn seed_records<R: tollgate_storage::Record>(app: &TestApp, all: &[R]) {
    for chunk in all.chunks(250) {
        let mut batch = Batch::new();
        for r in chunk {
            batch.put(r, Expect::Absent).unwrap();
        }
        app.state.store.commit_durable(&batch).await.unwrap();
    }
}

async fn get_list(app: &TestApp, path: &str, params: &[(&str, String)]) -> Reply {
    let r = app
        .send(
            app.request(Method::GET, path, Some(&app.token))
                .query(params),
        )
        .await;
    r.expect(200);
    r
}

/// The answers of `/v1/license-keys/?query=` and `/v1/orders/?query=` for needles taken
/// from the shop, checked against their predicates over every key and order.
async fn key_and_order_answers(
    app: &TestApp,
    org: OrganizationId,
    mine: &[Customer],
    keys: &[LicenseKey],
    orders: &[Order],
) -> Vec<(String, u64, Vec<String>)> {
    let k = |i: usize| keys[i].key.clone();
    let tail = |i: usize| format!("****-{}", &keys[i].key[keys[i].key.len() - 6..]);
    let mut needles: Vec<String> = vec![
        k(3),
        k(4).to_lowercase(),
        k(10)[..8].to_string(),
        "ACME".into(),
        "acme-".into(),
        tail(7),
        k(9)[9..18].to_string(),
        "smi".into(),
        "jo".into(),
        mine[30].email.clone(),
        mine[32].id.to_string(),
        orders[5].id.to_string(),
        "zzzz".into(),
        "abc".into(),
    ];
    needles.push(k(12)[k(12).len() - 4..].to_string());
    let customer_of = |id: CustomerId| mine.iter().find(|c| c.id == id);
    let mut answers = Vec::new();
    for needle in &needles {
        let lower = needle.to_lowercase();
        let customer_hit = |id: CustomerId| {
            customer_of(id).is_some_and(|c| matches_search(c, &lower)) || id.to_string() == *needle
        };
        // Keys: a fragment of the key, or its customer; in creation order.
        let fragment = normalize_fragment(needle);
        let mut want: Vec<&LicenseKey> = keys
            .iter()
            .filter(|key| matches_fragment(&key.key, &fragment) || customer_hit(key.customer_id))
            .collect();
        want.sort_by_key(|key| (key.created_at.timestamp_micros(), key.id.key()));
        let r = get_list(
            app,
            "/v1/license-keys/",
            &[
                ("organization_id", org.to_string()),
                ("query", needle.clone()),
                ("limit", "50".into()),
            ],
        )
        .await;
        assert_eq!(r.total_count(), want.len() as u64, "keys {needle}");
        let want: Vec<String> = want.iter().take(50).map(|k| k.id.to_string()).collect();
        assert_eq!(ids(&r), want, "keys {needle}");
        answers.push((format!("keys {needle}"), r.total_count(), want));
        // Orders: of a customer found, or the order named; newest first.
        let mut want: Vec<&Order> = orders
            .iter()
            .filter(|o| {
                customer_of(o.customer_id).is_some_and(|c| matches_search(c, &lower))
                    || o.id.to_string() == *needle
            })
            .collect();
        want.sort_by_key(|o| std::cmp::Reverse((o.created_at.timestamp_micros(), o.id.key())));
        let r = get_list(
            app,
            "/v1/orders/",
            &[
                ("organization_id", org.to_string()),
                ("query", needle.clone()),
                ("limit", "50".into()),
            ],
        )
        .await;
        assert_eq!(r.total_count(), want.len() as u64, "orders {needle}");
        let want: Vec<String> = want.iter().take(50).map(|o| o.id.to_string()).collect();
        assert_eq!(ids(&r), want, "orders {needle}");
        answers.push((format!("orders {needle}"), r.total_count(), want));
    }
    assert!(answers.iter().filter(|(_, total, _)| *total > 0).count() > 10);
    answers
}

/// A shop of 2,400 customers in one organization and 300 in another (whose addresses look
/// alike), on the app's store; the answers of [`search_answers`] for the first.
async fn shop(app: &TestApp) -> Vec<(String, u64, Vec<String>)> {
    let org: OrganizationId = app.created_org_as(&app.token, "Big", "big").await["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let other: OrganizationId = app.created_org_as(&app.token, "Other", "other").await["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let mine = customers(org, 2400, 1);
    let theirs = customers(other, 300, 2);
    seed(app, &mine).await;
    seed(app, &theirs).await;
    let mut answers = search_answers(app, org, &mine).await;
    let r = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": "Tool", "organization_id": org, "prices": [
                {"amount_type": "fixed", "price_amount": 1000, "price_currency": "usd"}
            ]}),
        )
        .await;
    r.expect(201);
    let product_id: ProductId = r.body["id"].as_str().unwrap().parse().unwrap();
    let product = app
        .state
        .store
        .get::<Product>(&product_id.key())
        .await
        .unwrap()
        .unwrap()
        .value;
    let (keys, orders) = keys_and_orders(&mine, &product);
    seed_records(app, &keys).await;
    seed_records(app, &orders).await;
    answers.extend(key_and_order_answers(app, org, &mine, &keys, &orders).await);
    // Every answer is of the organization asked for; without one, of all the admin's.
    let r = list(
        app,
        &app.token,
        &[("query", "smi".into()), ("limit", "100".into())],
    )
    .await;
    let both = mine
        .iter()
        .chain(&theirs)
        .filter(|c| matches_search(c, "smi"))
        .count();
    assert_eq!(r.total_count(), both as u64);
    assert!(answers.iter().any(|(_, total, _)| *total > 100));
    answers
}

#[actix_web::test]
async fn customer_search_answers_the_predicate_and_the_same_on_both_engines() {
    let app = spawn_app().await;
    let embedded = shop(&app).await;
    let report = app.state.store.verify_indexes::<Customer>().await.unwrap();
    assert!(report.is_clean(), "{report:?}");
    let report = app
        .state
        .store
        .verify_indexes::<LicenseKey>()
        .await
        .unwrap();
    assert!(report.is_clean(), "{report:?}");
    // The same shop on PostgreSQL (skipped without a test database, a failure under CI).
    let Some(db) = tollgate_storage::testing::fresh_schema("search") else {
        return;
    };
    let dir = TempDir::new().unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings.storage.backend = StorageBackend::Postgres;
    settings.storage.url = db.url.clone().into();
    settings.storage.schema = db.schema.clone();
    settings.storage.pool_size = 8;
    let pg = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    assert_eq!(pg.state.store.engine_name(), "postgres");
    let postgres = shop(&pg).await;
    assert_eq!(embedded, postgres);
    let report = pg.state.store.verify_indexes::<Customer>().await.unwrap();
    assert!(report.is_clean(), "{report:?}");
}

#[actix_web::test]
async fn customer_search_keeps_to_the_reachable_organizations_and_its_scope() {
    let app = spawn_app().await;
    let org: OrganizationId = app.created_org_as(&app.token, "Mine", "mine").await["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    seed(&app, &customers(org, 50, 3)).await;
    let (user, token) = app
        .new_user_with_scopes(
            "rival@example.com",
            &[Scope::CustomersRead, Scope::OrganizationsWrite],
        )
        .await;
    let rival: OrganizationId = app.created_org_as(&token, "Rival", "rival").await["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let theirs = customers(rival, 20, 4);
    seed(&app, &theirs).await;
    // The rival sees only its own customers, whatever it asks.
    for needle in ["a", "jo", "smi", "example"] {
        let r = list(&app, &token, &[("query", needle.into())]).await;
        let expected = theirs.iter().filter(|c| matches_search(c, needle)).count();
        assert_eq!(r.total_count(), expected as u64, "{needle}");
        for c in r.items() {
            assert_eq!(c["organization_id"], Value::from(rival.to_string()));
        }
        let r = list(
            &app,
            &token,
            &[
                ("query", needle.into()),
                ("organization_id", org.to_string()),
            ],
        )
        .await;
        assert_eq!(r.total_count(), 0, "{needle}: {}", r.body);
    }
    // Without customers:read, no search.
    let other = app.issue_token(user, &[Scope::OrganizationsWrite]).await;
    let r = list(&app, &other, &[("query", "smi".into())]).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
}

/// The bytes of a customer's search entries on the embedded store (key and value as
/// written; sled adds its own per-entry overhead), for the issue's per-sale budget.
#[actix_web::test]
async fn customer_search_entries_stay_small() {
    let org = OrganizationId::new();
    let all = customers(org, 2000, 5);
    let mut bytes = 0usize;
    let mut entries = 0usize;
    for c in &all {
        for e in tollgate_storage::Record::index_entries(c)
            .iter()
            .filter(|e| !e.counted)
        {
            // `index 0 len tenant | sort | id` → id.
            bytes += e.index.len() + 2 + e.tenant.len() + e.sort.len() + 16 + 16;
            entries += 1;
        }
    }
    let per_customer = bytes / all.len();
    eprintln!(
        "search entries: {:.1} per customer, {per_customer} bytes per customer",
        entries as f64 / all.len() as f64
    );
    assert!(per_customer < 3000, "{per_customer} bytes per customer");
}

/// A customer as a build without search entries wrote it: the same record, its counted
/// indexes and unique keys only.
struct Unindexed(Customer);

impl tollgate_storage::Record for Unindexed {
    const COLLECTION: &'static str = <Customer as tollgate_storage::Record>::COLLECTION;
    const VERSION: u16 = <Customer as tollgate_storage::Record>::VERSION;
    fn id_key(&self) -> Vec<u8> {
        tollgate_storage::Record::id_key(&self.0)
    }
    fn encode(&self) -> Result<Vec<u8>, tollgate_storage::StorageError> {
        tollgate_storage::Record::encode(&self.0)
    }
    fn decode(version: u16, payload: &[u8]) -> Result<Self, tollgate_storage::StorageError> {
        <Customer as tollgate_storage::Record>::decode(version, payload).map(Unindexed)
    }
    fn index_entries(&self) -> Vec<tollgate_storage::IndexEntry> {
        tollgate_storage::Record::index_entries(&self.0)
            .into_iter()
            .filter(|e| e.counted)
            .collect()
    }
    fn unique_keys(&self) -> Vec<tollgate_storage::UniqueKey> {
        tollgate_storage::Record::unique_keys(&self.0)
    }
}

#[actix_web::test]
async fn a_store_without_search_entries_gets_them_once_at_start() {
    use tollgate::app::catalog::customers::ensure_search_indexes;
    use tollgate::domain::customer::{search_tenant, CUSTOMER_SEARCH};
    let store = tollgate_storage::Store::temporary().unwrap();
    let org = OrganizationId::new();
    let all = customers(org, 300, 6);
    let mut batch = Batch::new();
    for c in &all {
        batch.put(&Unindexed(c.clone()), Expect::Absent).unwrap();
    }
    store.commit_durable(&batch).await.unwrap();
    let smith = |store: tollgate_storage::Store| async move {
        store
            .index_iter(
                CUSTOMER_SEARCH,
                &[search_tenant(org, "smi")],
                tollgate_storage::Direction::Asc,
            )
            .unwrap()
            .collect()
            .await
            .unwrap()
            .len()
    };
    assert_eq!(smith(store.clone()).await, 0);
    let report = store.verify_indexes::<Customer>().await.unwrap();
    assert!(!report.missing.is_empty() && report.extra.is_empty());
    ensure_search_indexes(&store).await.unwrap();
    let expected = all
        .iter()
        .filter(|c| tollgate::domain::customer::customer_terms(c).contains("smi"))
        .count();
    assert!(expected > 0);
    assert_eq!(smith(store.clone()).await, expected);
    assert!(store.verify_indexes::<Customer>().await.unwrap().is_clean());
    // Marked: a later start does not rebuild again.
    assert!(store.get_meta("search_indexes_v1").await.unwrap().is_some());
    ensure_search_indexes(&store).await.unwrap();
    assert!(store.verify_indexes::<Customer>().await.unwrap().is_clean());
}

/// Bytes of the files under `dir`.
fn disk_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let meta = e.metadata().unwrap();
            if meta.is_dir() {
                disk_bytes(&e.path())
            } else {
                meta.len()
            }
        })
        .sum()
}

/// What the search entries cost on the embedded store's disk: the same 5,000 customers
/// with and without them, each store flushed and closed (sled's settings as configured
/// by default; a figure to report, bounded loosely).
#[actix_web::test]
async fn customer_search_entries_on_the_embedded_disk() {
    let org = OrganizationId::new();
    let all = customers(org, 5000, 7);
    let mut sizes = Vec::new();
    for indexed in [false, true] {
        let dir = TempDir::new().unwrap();
        {
            let store =
                tollgate_storage::Store::open(&tollgate_storage::StoreConfig::new(dir.path()))
                    .unwrap();
            for chunk in all.chunks(250) {
                let mut batch = Batch::new();
                for c in chunk {
                    if indexed {
                        batch.put(c, Expect::Absent).unwrap();
                    } else {
                        batch.put(&Unindexed(c.clone()), Expect::Absent).unwrap();
                    }
                }
                store.commit_durable(&batch).await.unwrap();
            }
        }
        sizes.push(disk_bytes(dir.path()));
    }
    let per_customer = sizes[1].saturating_sub(sizes[0]) / all.len() as u64;
    eprintln!(
        "embedded disk: {} bytes without search entries, {} with: {per_customer} bytes per customer",
        sizes[0], sizes[1]
    );
    assert!(per_customer < 10_000, "{per_customer} bytes per customer");
}
