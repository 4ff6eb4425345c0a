//! `/v1/subscriptions/` and the subscription sweep: the `Subscription` shape, list
//! filters, sorting and pagination, get, `PATCH` (cancel at period end, uncancel, revoke),
//! renewals with their orders, discount durations, declines, period-end cancellation with
//! license-key revocation, crash recovery, scopes and tenancy (reference 2.2, 6.4, 8, 9.7;
//! behaviour.md "Subscriptions and orders"; clients.md 4).
//!
//! Catalog records (organizations, products, customers, discounts) are created over HTTP;
//! subscriptions, orders and license keys are seeded straight into the store, since the
//! checkout flow that creates them is tested on its own. Time is a `ManualClock`: tests
//! move it past a period end and run the sweep, never sleep.

use std::collections::BTreeSet;
use std::str::FromStr;
use std::sync::Arc;

use actix_web::dev::ServerHandle;
use actix_web::web;
use chrono::{DateTime, Duration, TimeZone, Utc};
use reqwest::{Method, RequestBuilder};
use serde_json::{json, Value};
use tempfile::TempDir;
use tollgate::app::subscription::sweep_subscriptions;
use tollgate::auth::service::{create_user, issue_pat, new_user};
use tollgate::auth::{Scope, ScopeSet};
use tollgate::bootstrap::TOKEN_FILE;
use tollgate::config::Settings;
use tollgate::domain::customer::Customer;
use tollgate::domain::discount::Discount;
use tollgate::domain::ids::{
    BenefitId, CustomerId, DiscountId, LicenseKeyId, OrderId, OrganizationId, ProductId,
    SubscriptionId,
};
use tollgate::domain::order::Order;
use tollgate::domain::product::Product;
use tollgate::startup::Application;
use tollgate::state::AppState;
use tollgate_actors::checkout::AppliedDiscount;
use tollgate_actors::license_key::{KeyStatus, LicenseKey};
use tollgate_actors::subscription::{
    renewal_order_id, Change, Purchase, Subscription, SubscriptionStatus, UpdateSubscription,
};
use tollgate_actors::ManualClock;
use tollgate_storage::{Batch, Expect};

use crate::helpers::{assert_utc_timestamp, client, Reply};

pub const SUBSCRIPTIONS: &str = "/v1/subscriptions/";
pub const UNKNOWN_ID: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";

/// 2025-01-31 12:00 UTC: a month end, so period arithmetic is visible.
pub fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 1, 31, 12, 0, 0).unwrap()
}

// ---------------------------------------------------------------------------------------
// A server on a manual clock, and seeding helpers (also used by the order tests)
// ---------------------------------------------------------------------------------------

/// The real application on a free port, with a `ManualClock` starting at [`t0`].
pub struct ClockApp {
    pub address: String,
    pub client: reqwest::Client,
    /// The bootstrap admin's token (every grantable scope).
    pub token: String,
    pub state: web::Data<AppState>,
    pub clock: Arc<ManualClock>,
    handle: ServerHandle,
    _dir: TempDir,
}

pub async fn spawn_app_with_clock() -> ClockApp {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings::for_tests(dir.path());
    let (clock, shared) = ManualClock::shared(t0());
    let app = Application::build_with_clock(settings, shared)
        .await
        .unwrap();
    let port = app.port();
    let state = app.state();
    let handle = app.handle();
    actix_web::rt::spawn(async move {
        if let Err(e) = app.run_until_stopped().await {
            eprintln!("test server stopped with an error: {e:#}");
        }
    });
    let token = std::fs::read_to_string(dir.path().join(TOKEN_FILE))
        .unwrap()
        .trim()
        .to_string();
    ClockApp {
        address: format!("http://127.0.0.1:{port}"),
        client: client(),
        token,
        state,
        clock,
        handle,
        _dir: dir,
    }
}

impl Drop for ClockApp {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
    }
}

impl ClockApp {
    pub fn request(&self, method: Method, path: &str, token: Option<&str>) -> RequestBuilder {
        let req = self
            .client
            .request(method, format!("{}{}", self.address, path));
        match token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    pub async fn send(&self, req: RequestBuilder) -> Reply {
        crate::helpers::send_checked(req).await
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        self.send(self.request(Method::GET, path, token)).await
    }

    pub async fn post_json(&self, path: &str, token: Option<&str>, body: &Value) -> Reply {
        self.send(self.request(Method::POST, path, token).json(body))
            .await
    }

    pub async fn patch_json(&self, path: &str, token: Option<&str>, body: &Value) -> Reply {
        self.send(self.request(Method::PATCH, path, token).json(body))
            .await
    }

    /// A user who belongs to no organization, with one token holding `scopes`.
    pub async fn user_with_scopes(&self, email: &str, scopes: &[Scope]) -> String {
        let user = new_user(email, None, false, Utc::now());
        create_user(&self.state.store, &user).await.unwrap();
        let scopes: ScopeSet = scopes.iter().copied().collect();
        issue_pat(
            &self.state.store,
            &self.state.hasher,
            user.id,
            scopes,
            "t",
            None,
        )
        .await
        .unwrap()
        .1
    }

    pub async fn org(&self, token: &str, slug: &str) -> OrganizationId {
        let r = self
            .post_json(
                "/v1/organizations/",
                Some(token),
                &json!({"name": slug, "slug": slug}),
            )
            .await;
        r.expect(201);
        OrganizationId::from_str(r.body["id"].as_str().unwrap()).unwrap()
    }

    /// A product with one price (`price` is a `prices` item), read back from the store.
    pub async fn product(
        &self,
        token: &str,
        org: OrganizationId,
        name: &str,
        price: Value,
    ) -> Product {
        let r = self
            .post_json(
                "/v1/products/",
                Some(token),
                &json!({"name": name, "organization_id": org, "prices": [price]}),
            )
            .await;
        r.expect(201);
        let id = ProductId::from_str(r.body["id"].as_str().unwrap()).unwrap();
        self.state
            .store
            .get::<Product>(&id.key())
            .await
            .unwrap()
            .unwrap()
            .value
    }

    pub async fn monthly(
        &self,
        token: &str,
        org: OrganizationId,
        name: &str,
        amount: i64,
    ) -> Product {
        self.product(
            token,
            org,
            name,
            json!({"type": "recurring", "amount_type": "fixed", "price_amount": amount,
                   "price_currency": "usd", "recurring_interval": "month"}),
        )
        .await
    }

    pub async fn customer(&self, token: &str, org: OrganizationId, email: &str) -> Customer {
        let r = self
            .post_json(
                "/v1/customers/",
                Some(token),
                &json!({"email": email, "name": "Jane Doe", "organization_id": org}),
            )
            .await;
        r.expect(201);
        let id = CustomerId::from_str(r.body["id"].as_str().unwrap()).unwrap();
        self.state
            .store
            .get::<Customer>(&id.key())
            .await
            .unwrap()
            .unwrap()
            .value
    }

    pub async fn discount(&self, token: &str, org: OrganizationId, body: Value) -> Discount {
        let mut body = body;
        body["organization_id"] = json!(org);
        let r = self.post_json("/v1/discounts/", Some(token), &body).await;
        r.expect(201);
        let id = DiscountId::from_str(r.body["id"].as_str().unwrap()).unwrap();
        self.state
            .store
            .get::<Discount>(&id.key())
            .await
            .unwrap()
            .unwrap()
            .value
    }

    pub async fn put<R: tollgate_storage::Record>(&self, record: &R) {
        let mut batch = Batch::new();
        batch.put(record, Expect::Absent).unwrap();
        self.state.store.commit_durable(&batch).await.unwrap();
    }

    /// A subscription bought at `at` (as checkout completion creates it), stored.
    pub async fn subscribe(&self, purchase: Purchase, at: DateTime<Utc>) -> Subscription {
        let s = Subscription::new_from_purchase(SubscriptionId::new(), purchase, at).unwrap();
        self.put(&s).await;
        s
    }

    /// A granted license key of `customer`, as a subscription's purchase grants it.
    pub async fn key(&self, customer: &Customer, subscription: SubscriptionId) -> LicenseKeyId {
        let id = LicenseKeyId::new();
        let key = LicenseKey {
            id,
            organization_id: customer.organization_id,
            customer_id: customer.id,
            benefit_id: BenefitId::new(),
            created_at: t0(),
            modified_at: None,
            key: format!("TEST-{}", uuid::Uuid::new_v4()).to_uppercase(),
            status: KeyStatus::Granted,
            limit_activations: None,
            usage: 0,
            limit_usage: None,
            validations: 0,
            last_validated_at: None,
            expires_at: None,
            activations: Vec::new(),
            subscription_id: Some(subscription),
            order_id: None,
            paid_until: None,
            allow_replacement: false,
            replacements: Vec::new(),
        };
        self.put(&key).await;
        id
    }

    pub async fn key_status(&self, id: LicenseKeyId) -> KeyStatus {
        self.state
            .store
            .get::<LicenseKey>(&id.key())
            .await
            .unwrap()
            .unwrap()
            .value
            .status
    }

    pub async fn stored(&self, id: SubscriptionId) -> Subscription {
        self.state
            .store
            .get::<Subscription>(&id.key())
            .await
            .unwrap()
            .unwrap()
            .value
    }

    pub async fn order(&self, id: OrderId) -> Option<Order> {
        self.state
            .store
            .get::<Order>(&id.key())
            .await
            .unwrap()
            .map(|o| o.value)
    }

    pub async fn sweep(&self) -> tollgate::app::subscription::SweepReport {
        sweep_subscriptions(&self.state).await.unwrap()
    }
}

/// What checkout completion passes for a purchase of `product`'s first price.
pub fn purchase(product: &Product, customer: &Customer, discount: Option<&Discount>) -> Purchase {
    Purchase {
        organization_id: product.organization_id,
        customer_id: customer.id,
        customer_email: customer.email.clone(),
        product_id: product.id,
        product_name: product.name.clone(),
        price: product.prices[0].clone(),
        amount: None,
        discount: discount.map(AppliedDiscount::from),
        checkout_id: None,
        metadata: Default::default(),
        custom_field_data: Default::default(),
        payment_token: Some("tok_visa".into()),
        license_key_ids: Vec::new(),
        interval_count: product.recurring_interval_count,
        trial_end: None,
        seats: None,
    }
}

fn path(id: impl std::fmt::Display) -> String {
    format!("{SUBSCRIPTIONS}{id}")
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn ids(r: &Reply) -> Vec<String> {
    r.items()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

fn id_of(s: &Subscription) -> String {
    s.id.to_string()
}

/// The subscription fields of clients.md's `Subscription` model (beyond the base).
pub const SUBSCRIPTION_BASE_KEYS: &[&str] = &[
    "created_at",
    "modified_at",
    "id",
    "amount",
    "currency",
    "recurring_interval",
    "status",
    "current_period_start",
    "current_period_end",
    "cancel_at_period_end",
    "canceled_at",
    "started_at",
    "ends_at",
    "ended_at",
    "customer_id",
    "product_id",
    "price_id",
    "discount_id",
    "checkout_id",
    "customer_cancellation_reason",
    "customer_cancellation_comment",
    "metadata",
    "user_id",
    // Polar's 2026 keys.
    "recurring_interval_count",
    "current_meter_period_start",
    "current_meter_period_end",
    "trial_start",
    "trial_end",
    "pause_at_period_end",
    "paused_at",
    "resumes_at",
    "seats",
    "past_due_at",
    "units",
];

/// One organization of the admin with a monthly product and a customer.
struct Shop {
    org: OrganizationId,
    product: Product,
    customer: Customer,
}

async fn shop(app: &ClockApp, slug: &str) -> Shop {
    let org = app.org(&app.token, slug).await;
    let product = app.monthly(&app.token, org, "Pro", 1500).await;
    let customer = app.customer(&app.token, org, "jane@example.com").await;
    Shop {
        org,
        product,
        customer,
    }
}

// ---------------------------------------------------------------------------------------
// Shape and get
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn a_subscription_has_the_shape_the_sdks_require() {
    let app = spawn_app_with_clock().await;
    let shop = shop(&app, "shape").await;
    let discount = app
        .discount(
            &app.token,
            shop.org,
            json!({"name": "Tenth", "type": "percentage", "basis_points": 1000, "duration": "forever"}),
        )
        .await;
    let s = app
        .subscribe(
            purchase(&shop.product, &shop.customer, Some(&discount)),
            t0(),
        )
        .await;

    let r = app.get(&path(s.id), Some(&app.token)).await;
    r.expect(200);
    let b = &r.body;
    let mut expected = set(SUBSCRIPTION_BASE_KEYS);
    for k in [
        "custom_field_data",
        "customer",
        "user",
        "product",
        "price",
        "discount",
        "prices",
        "meters",
        "pending_update",
    ] {
        expected.insert(k.into());
    }
    assert_eq!(keys(b), expected);
    assert_eq!(b["prices"], json!([b["price"]]));
    assert_eq!(b["meters"], json!([]));
    assert_eq!(b["id"], id_of(&s));
    assert_eq!(b["status"], "active");
    assert_eq!(b["amount"], 1350);
    assert_eq!(b["currency"], "usd");
    assert_eq!(b["recurring_interval"], "month");
    assert_eq!(b["cancel_at_period_end"], false);
    for t in [
        "created_at",
        "current_period_start",
        "current_period_end",
        "started_at",
    ] {
        assert_utc_timestamp(&b[t]);
    }
    assert_eq!(
        DateTime::parse_from_rfc3339(b["current_period_end"].as_str().unwrap()).unwrap(),
        Utc.with_ymd_and_hms(2025, 2, 28, 12, 0, 0).unwrap()
    );
    for k in [
        "ended_at",
        "ends_at",
        "canceled_at",
        "checkout_id",
        "modified_at",
    ] {
        assert!(b[k].is_null(), "{k} should be null: {b}");
    }
    assert_eq!(b["customer_id"], shop.customer.id.to_string());
    assert_eq!(b["user_id"], shop.customer.id.to_string());
    assert_eq!(b["customer"]["email"], "jane@example.com");
    assert_eq!(b["customer"]["email_verified"], false);
    assert!(b["customer"]["avatar_url"].is_string());
    assert!(keys(&b["user"]).is_superset(&set(&["id", "email", "public_name"])));
    assert_eq!(b["user"]["public_name"], "J");
    // The full `Product`, the recurring price, the discount's base form.
    for k in [
        "metadata",
        "prices",
        "benefits",
        "medias",
        "attached_custom_fields",
    ] {
        assert!(b["product"].get(k).is_some(), "product without {k}: {b}");
    }
    assert_eq!(b["price"]["id"], shop.product.prices[0].id.to_string());
    assert_eq!(b["price"]["type"], "recurring");
    assert_eq!(b["price"]["recurring_interval"], "month");
    assert_eq!(b["discount"]["id"], discount.id.to_string());
    assert_eq!(b["discount"]["basis_points"], 1000);
    assert!(b["discount"].get("products").is_none());
    assert_eq!(b["metadata"], json!({}));
    assert_eq!(b["custom_field_data"], json!({}));

    // The same rendering in the list.
    let l = app.get(SUBSCRIPTIONS, Some(&app.token)).await;
    l.expect(200);
    assert_eq!(l.items()[0], r.body);

    let r = app.get(&path(UNKNOWN_ID), Some(&app.token)).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app.get(&path("not-a-uuid"), Some(&app.token)).await;
    let item = r.expect_invalid_at(json!(["path", "id"]));
    assert_eq!(item["type"], "uuid_parsing");
}

// ---------------------------------------------------------------------------------------
// Renewals
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn the_sweep_renews_at_the_period_end_with_a_cycle_order() {
    let app = spawn_app_with_clock().await;
    let shop = shop(&app, "renew").await;
    let s = app
        .subscribe(purchase(&shop.product, &shop.customer, None), t0())
        .await;
    let end = s.current_period_end.unwrap();

    // Not due yet.
    app.clock.set(end - Duration::seconds(1));
    assert_eq!(app.sweep().await.renewed, 0);
    assert!(app.order(renewal_order_id(s.id, 1)).await.is_none());

    app.clock.set(end + Duration::hours(1));
    let report = app.sweep().await;
    assert_eq!((report.renewed, report.errors), (1, 0));
    let order = app.order(renewal_order_id(s.id, 1)).await.unwrap();
    assert_eq!(order.amount, 1500);
    assert_eq!(order.subscription_id, Some(s.id));

    let r = app.get(&path(s.id), Some(&app.token)).await;
    r.expect(200);
    assert_eq!(r.body["status"], "active");
    let start =
        DateTime::parse_from_rfc3339(r.body["current_period_start"].as_str().unwrap()).unwrap();
    assert_eq!(start, end);
    // Periods count from the start: Jan 31 → Feb 28 → Mar 31.
    let next_end =
        DateTime::parse_from_rfc3339(r.body["current_period_end"].as_str().unwrap()).unwrap();
    assert_eq!(
        next_end,
        Utc.with_ymd_and_hms(2025, 3, 31, 12, 0, 0).unwrap()
    );

    // The renewal order as the API shows it.
    let o = app
        .get(&format!("/v1/orders/{}", order.id), Some(&app.token))
        .await;
    o.expect(200);
    assert_eq!(o.body["billing_reason"], "subscription_cycle");
    assert_eq!(o.body["amount"], 1500);
    assert_eq!(o.body["subscription_id"], id_of(&s));
    assert_eq!(o.body["subscription"]["id"], id_of(&s));
    assert!(o.body["checkout_id"].is_null());
    let recurring = app
        .get("/v1/orders/?product_price_type=recurring", Some(&app.token))
        .await;
    assert_eq!(recurring.total_count(), 1);

    // A second sweep at the same time does nothing.
    assert_eq!(app.sweep().await, Default::default());
    let again = app
        .get("/v1/orders/?product_price_type=recurring", Some(&app.token))
        .await;
    assert_eq!(again.total_count(), 1);

    // A service down for two periods catches up, one order per period.
    app.clock
        .set(Utc.with_ymd_and_hms(2025, 5, 1, 0, 0, 0).unwrap());
    assert_eq!(app.sweep().await.renewed, 2);
    assert_eq!(app.stored(s.id).await.cycles, 3);
    assert!(app.order(renewal_order_id(s.id, 3)).await.is_some());
}

#[actix_web::test]
async fn concurrent_sweeps_write_one_order_per_period() {
    let app = spawn_app_with_clock().await;
    let shop = shop(&app, "concurrent").await;
    let s = app
        .subscribe(purchase(&shop.product, &shop.customer, None), t0())
        .await;
    app.clock
        .set(s.current_period_end.unwrap() + Duration::minutes(1));
    let (a, b) = futures_util::future::join(
        sweep_subscriptions(&app.state),
        sweep_subscriptions(&app.state),
    )
    .await;
    assert_eq!(a.unwrap().renewed + b.unwrap().renewed, 1);
    assert_eq!(app.stored(s.id).await.cycles, 1);
    let orders = app.get("/v1/orders/", Some(&app.token)).await;
    assert_eq!(orders.total_count(), 1);
}

#[actix_web::test]
async fn discounts_last_their_duration_at_renewal() {
    let app = spawn_app_with_clock().await;
    let shop = shop(&app, "durations").await;
    let once = app
        .discount(
            &app.token,
            shop.org,
            json!({"name": "Half once", "type": "percentage", "basis_points": 5000, "duration": "once"}),
        )
        .await;
    let repeating = app
        .discount(
            &app.token,
            shop.org,
            json!({"name": "Two months", "type": "fixed", "amount": 500, "currency": "usd",
                   "duration": "repeating", "duration_in_months": 2}),
        )
        .await;
    let forever = app
        .discount(
            &app.token,
            shop.org,
            json!({"name": "Forever", "type": "percentage", "basis_points": 1000, "duration": "forever"}),
        )
        .await;
    let a = app
        .subscribe(purchase(&shop.product, &shop.customer, Some(&once)), t0())
        .await;
    let b = app
        .subscribe(
            purchase(&shop.product, &shop.customer, Some(&repeating)),
            t0(),
        )
        .await;
    let c = app
        .subscribe(
            purchase(&shop.product, &shop.customer, Some(&forever)),
            t0(),
        )
        .await;
    assert_eq!(
        (a.amount, b.amount, c.amount),
        (Some(750), Some(1000), Some(1350))
    );

    let amounts = async |s: &Subscription, cycle: u32| {
        let o = app.order(renewal_order_id(s.id, cycle)).await.unwrap();
        (o.amount, o.discount_id.is_some())
    };
    // Three renewals: Feb 28, Mar 31, Apr 30.
    app.clock
        .set(Utc.with_ymd_and_hms(2025, 4, 30, 13, 0, 0).unwrap());
    assert_eq!(app.sweep().await.renewed, 9);
    let once_orders: Vec<_> = futures_util::future::join_all((1..=3).map(|n| amounts(&a, n))).await;
    assert_eq!(once_orders, [(1500, false), (1500, false), (1500, false)]);
    let repeating_orders: Vec<_> =
        futures_util::future::join_all((1..=3).map(|n| amounts(&b, n))).await;
    assert_eq!(
        repeating_orders,
        [(1000, true), (1500, false), (1500, false)]
    );
    let forever_orders: Vec<_> =
        futures_util::future::join_all((1..=3).map(|n| amounts(&c, n))).await;
    assert_eq!(forever_orders, [(1350, true), (1350, true), (1350, true)]);

    // A discount that ended is gone from the subscription.
    let r = app.get(&path(a.id), Some(&app.token)).await;
    assert_eq!(r.body["amount"], 1500);
    assert!(r.body["discount"].is_null());
    assert!(r.body["discount_id"].is_null());
    let r = app.get(&path(c.id), Some(&app.token)).await;
    assert_eq!(r.body["amount"], 1350);
    assert_eq!(r.body["discount"]["name"], "Forever");
}

#[actix_web::test]
async fn a_declined_renewal_is_past_due_then_canceled_with_its_keys_revoked() {
    let app = spawn_app_with_clock().await;
    let shop = shop(&app, "declined").await;
    let mut p = purchase(&shop.product, &shop.customer, None);
    p.payment_token = Some("tok_decline_insufficient_funds".into());
    let id = SubscriptionId::new();
    let key = app.key(&shop.customer, id).await;
    p.license_key_ids = vec![key];
    let s = Subscription::new_from_purchase(id, p, t0()).unwrap();
    app.put(&s).await;
    let end = s.current_period_end.unwrap();

    app.clock.set(end + Duration::minutes(1));
    let report = app.sweep().await;
    assert_eq!((report.declined, report.renewed), (1, 0));
    let r = app.get(&path(id), Some(&app.token)).await;
    assert_eq!(r.body["status"], "past_due");
    assert_eq!(app.key_status(key).await, KeyStatus::Granted);
    // The renewal's order is written pending, retried with the subscription.
    let pending = app
        .order(renewal_order_id(id, 1))
        .await
        .expect("the pending order");
    assert_eq!(pending.status.as_str(), "pending");
    assert_eq!(
        pending.next_payment_attempt_at,
        Some(end + Duration::minutes(1) + Duration::days(3))
    );
    // Listed as inactive.
    let inactive = app
        .get(&format!("{SUBSCRIPTIONS}?active=false"), Some(&app.token))
        .await;
    assert_eq!(ids(&inactive), [id.to_string()]);

    // The retry waits for its delay.
    assert_eq!(app.sweep().await, Default::default());
    app.clock
        .set(end + Duration::days(3) + Duration::minutes(2));
    assert_eq!(app.sweep().await.declined, 1);
    assert_eq!(app.stored(id).await.status, SubscriptionStatus::PastDue);

    // Still declined after the dunning period: canceled, keys revoked.
    for day in [6, 9] {
        app.clock
            .set(end + Duration::days(day) + Duration::minutes(3 + day));
        app.sweep().await;
    }
    let gone = app.stored(id).await;
    assert_eq!(gone.status, SubscriptionStatus::Canceled);
    assert!(gone.ended_at.is_some());
    assert!(gone.pending_revocations.is_empty());
    assert_eq!(app.key_status(key).await, KeyStatus::Revoked);
    // Given up: the renewal's order stays pending, with no next attempt.
    let pending = app
        .order(renewal_order_id(id, 1))
        .await
        .expect("the pending order");
    assert_eq!(
        (pending.status.as_str(), pending.next_payment_attempt_at),
        ("pending", None)
    );
    let report = app
        .state
        .store
        .verify_indexes::<Subscription>()
        .await
        .unwrap();
    assert!(report.is_clean(), "{report:?}");
}

// ---------------------------------------------------------------------------------------
// PATCH: cancel at period end, uncancel, revoke
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn cancel_at_period_end_ends_it_at_the_period_end_and_revokes_its_keys() {
    let app = spawn_app_with_clock().await;
    let shop = shop(&app, "cancel").await;
    let id = SubscriptionId::new();
    let key = app.key(&shop.customer, id).await;
    let mut p = purchase(&shop.product, &shop.customer, None);
    p.license_key_ids = vec![key];
    let s = Subscription::new_from_purchase(id, p, t0()).unwrap();
    app.put(&s).await;
    let end = s.current_period_end.unwrap();

    app.clock.set(t0() + Duration::days(5));
    let r = app
        .patch_json(
            &path(id),
            Some(&app.token),
            &json!({"cancel_at_period_end": true, "customer_cancellation_reason": "too_expensive",
                    "customer_cancellation_comment": "Pricey"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["cancel_at_period_end"], true);
    assert_eq!(r.body["status"], "active");
    assert_eq!(r.body["ends_at"], r.body["current_period_end"]);
    assert_utc_timestamp(&r.body["canceled_at"]);
    assert!(r.body["ended_at"].is_null());
    assert_eq!(r.body["customer_cancellation_reason"], "too_expensive");
    assert_eq!(r.body["customer_cancellation_comment"], "Pricey");
    assert_eq!(app.key_status(key).await, KeyStatus::Granted);

    // Twice: Polar's 403.
    let again = app
        .patch_json(
            &path(id),
            Some(&app.token),
            &json!({"cancel_at_period_end": true}),
        )
        .await;
    assert_eq!(again.expect_error(403), "NotPermitted");
    assert_eq!(
        again.body["detail"],
        "This subscription is already canceled or will be at the end of the period."
    );

    // Still active (and listed as such) until the period end.
    let active = app
        .get(&format!("{SUBSCRIPTIONS}?active=true"), Some(&app.token))
        .await;
    assert_eq!(active.total_count(), 1);
    app.clock.set(end - Duration::seconds(1));
    assert_eq!(app.sweep().await, Default::default());

    app.clock.set(end + Duration::minutes(5));
    let report = app.sweep().await;
    assert_eq!(
        (report.ended, report.keys_revoked, report.renewed),
        (1, 1, 0)
    );
    let r = app.get(&path(id), Some(&app.token)).await;
    assert_eq!(r.body["status"], "canceled");
    let ended = DateTime::parse_from_rfc3339(r.body["ended_at"].as_str().unwrap()).unwrap();
    assert_eq!(ended, end);
    assert_eq!(app.key_status(key).await, KeyStatus::Revoked);
    assert!(app.order(renewal_order_id(id, 1)).await.is_none());
    assert!(app.stored(id).await.pending_revocations.is_empty());

    // Nothing more happens, ever.
    app.clock.set(end + Duration::days(400));
    assert_eq!(app.sweep().await, Default::default());
    // An ended subscription cannot be uncanceled.
    let r = app
        .patch_json(
            &path(id),
            Some(&app.token),
            &json!({"cancel_at_period_end": false}),
        )
        .await;
    assert_eq!(r.expect_error(400), "BadRequest");
}

#[actix_web::test]
async fn uncancel_restores_the_renewal() {
    let app = spawn_app_with_clock().await;
    let shop = shop(&app, "uncancel").await;
    let s = app
        .subscribe(purchase(&shop.product, &shop.customer, None), t0())
        .await;
    // Not set to cancel: Polar's 400.
    let r = app
        .patch_json(
            &path(s.id),
            Some(&app.token),
            &json!({"cancel_at_period_end": false}),
        )
        .await;
    assert_eq!(r.expect_error(400), "BadRequest");

    app.patch_json(
        &path(s.id),
        Some(&app.token),
        &json!({"cancel_at_period_end": true, "customer_cancellation_reason": "unused"}),
    )
    .await
    .expect(200);
    let r = app
        .patch_json(
            &path(s.id),
            Some(&app.token),
            &json!({"cancel_at_period_end": false}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["cancel_at_period_end"], false);
    for k in [
        "ends_at",
        "canceled_at",
        "customer_cancellation_reason",
        "customer_cancellation_comment",
    ] {
        assert!(r.body[k].is_null(), "{k}: {}", r.body);
    }
    app.clock
        .set(s.current_period_end.unwrap() + Duration::minutes(1));
    assert_eq!(app.sweep().await.renewed, 1);
    assert_eq!(app.stored(s.id).await.status, SubscriptionStatus::Active);
}

#[actix_web::test]
async fn revoke_ends_now_and_revokes_the_keys_at_once() {
    let app = spawn_app_with_clock().await;
    let shop = shop(&app, "revoke").await;
    let id = SubscriptionId::new();
    let key = app.key(&shop.customer, id).await;
    let mut p = purchase(&shop.product, &shop.customer, None);
    p.license_key_ids = vec![key];
    app.put(&Subscription::new_from_purchase(id, p, t0()).unwrap())
        .await;

    // Body rules first: `revoke` is `true` or absent, and not with `cancel_at_period_end`.
    let r = app
        .patch_json(&path(id), Some(&app.token), &json!({"revoke": false}))
        .await;
    let item = r.expect_invalid_at(json!(["body", "revoke"]));
    assert_eq!(item["type"], "literal_error");
    let r = app
        .patch_json(
            &path(id),
            Some(&app.token),
            &json!({"revoke": true, "cancel_at_period_end": true}),
        )
        .await;
    let item = r.expect_invalid_at(json!(["body", "revoke"]));
    assert_eq!(item["type"], "value_error");
    let r = app
        .patch_json(
            &path(id),
            Some(&app.token),
            &json!({"customer_cancellation_reason": "bored"}),
        )
        .await;
    r.expect_invalid_at(json!(["body", "customer_cancellation_reason"]));
    // Nothing to change: the subscription as it is.
    let r = app
        .patch_json(&path(id), Some(&app.token), &json!({}))
        .await;
    r.expect(200);
    assert_eq!(r.body["status"], "active");

    let now = t0() + Duration::days(10);
    app.clock.set(now);
    let r = app
        .patch_json(&path(id), Some(&app.token), &json!({"revoke": true}))
        .await;
    r.expect(200);
    assert_eq!(r.body["status"], "canceled");
    let ended = DateTime::parse_from_rfc3339(r.body["ended_at"].as_str().unwrap()).unwrap();
    assert_eq!(ended, now);
    assert_eq!(r.body["ends_at"], r.body["ended_at"]);
    assert_eq!(r.body["canceled_at"], r.body["ended_at"]);
    assert_eq!(app.key_status(key).await, KeyStatus::Revoked);
    assert!(app.stored(id).await.pending_revocations.is_empty());

    let again = app
        .patch_json(&path(id), Some(&app.token), &json!({"revoke": true}))
        .await;
    assert_eq!(again.expect_error(403), "NotPermitted");
    // No renewal for an ended subscription.
    app.clock.set(now + Duration::days(60));
    assert_eq!(app.sweep().await, Default::default());
}

#[actix_web::test]
async fn revocations_interrupted_by_a_crash_are_finished_by_the_sweep() {
    let app = spawn_app_with_clock().await;
    let shop = shop(&app, "outbox").await;
    let id = SubscriptionId::new();
    let keys = [
        app.key(&shop.customer, id).await,
        app.key(&shop.customer, id).await,
    ];
    let mut p = purchase(&shop.product, &shop.customer, None);
    p.license_key_ids = keys.to_vec();
    app.put(&Subscription::new_from_purchase(id, p, t0()).unwrap())
        .await;
    // The subscription ended, but the process stopped before revoking anything.
    app.state
        .subscriptions
        .call(
            id,
            UpdateSubscription(Change::Revoke {
                reason: None,
                comment: None,
            }),
        )
        .await
        .unwrap();
    assert_eq!(app.stored(id).await.pending_revocations, keys);
    assert_eq!(app.key_status(keys[0]).await, KeyStatus::Granted);
    // One key was revoked before the crash: revoking it again is harmless.
    app.state
        .license_keys
        .call(keys[0], tollgate_actors::license_key::RevokeLicenseKey)
        .await
        .unwrap();

    let report = app.sweep().await;
    assert_eq!((report.keys_revoked, report.errors), (2, 0));
    for k in &keys {
        assert_eq!(app.key_status(*k).await, KeyStatus::Revoked);
    }
    assert!(app.stored(id).await.pending_revocations.is_empty());
    assert_eq!(app.sweep().await, Default::default());
}

// ---------------------------------------------------------------------------------------
// List: filters, sorting, pagination
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn the_list_filters_sorts_and_pages_started_subscriptions() {
    let app = spawn_app_with_clock().await;
    let token = app.token.clone();
    let org = app.org(&token, "listing").await;
    let basic = app.monthly(&token, org, "Basic", 1000).await;
    let yearly = app
        .product(
            &token,
            org,
            "Annual",
            json!({"type": "recurring", "amount_type": "fixed", "price_amount": 6000,
                   "price_currency": "usd", "recurring_interval": "year"}),
        )
        .await;
    let free = app
        .product(
            &token,
            org,
            "Community",
            json!({"type": "recurring", "amount_type": "free", "recurring_interval": "month"}),
        )
        .await;
    let ann = app.customer(&token, org, "ann@example.com").await;
    let bob = app.customer(&token, org, "bob@example.com").await;
    let cid = app.customer(&token, org, "cid@example.com").await;
    let promo = app
        .discount(
            &token,
            org,
            json!({"name": "Alpha", "type": "fixed", "amount": 100, "currency": "usd", "duration": "forever"}),
        )
        .await;
    let other = app
        .discount(
            &token,
            org,
            json!({"name": "Beta", "type": "fixed", "amount": 200, "currency": "usd", "duration": "forever"}),
        )
        .await;

    let h = Duration::hours(1);
    // s1: Basic, ann, 1000 - 100 = 900/month, started first.
    let s1 = app
        .subscribe(purchase(&basic, &ann, Some(&promo)), t0())
        .await;
    // s2: Annual, bob, 6000/year = 500/month.
    let s2 = app.subscribe(purchase(&yearly, &bob, None), t0() + h).await;
    // s3: Community (free), cid.
    let s3 = app
        .subscribe(purchase(&free, &cid, None), t0() + h * 2)
        .await;
    // s4: Basic, bob, 1000 - 200 = 800/month, then revoked (canceled).
    let s4 = app
        .subscribe(purchase(&basic, &bob, Some(&other)), t0() + h * 3)
        .await;
    app.patch_json(&path(s4.id), Some(&token), &json!({"revoke": true}))
        .await
        .expect(200);
    // s5: Basic, cid, 1000/month, set to cancel at the period end.
    let s5 = app
        .subscribe(purchase(&basic, &cid, None), t0() + h * 4)
        .await;
    app.patch_json(
        &path(s5.id),
        Some(&token),
        &json!({"cancel_at_period_end": true}),
    )
    .await
    .expect(200);
    // Not started: never listed.
    let mut incomplete = Subscription::new_from_purchase(
        SubscriptionId::new(),
        purchase(&basic, &ann, None),
        t0() + h * 5,
    )
    .unwrap();
    incomplete.status = SubscriptionStatus::Incomplete;
    incomplete.started_at = None;
    app.put(&incomplete).await;
    let ids5 = [&s1, &s2, &s3, &s4, &s5].map(id_of);
    let [s1, s2, s3, s4, s5] = [0, 1, 2, 3, 4].map(|i| ids5[i].as_str());

    let list = |query: String| {
        let app = &app;
        let token = token.clone();
        async move {
            let r = app
                .get(&format!("{SUBSCRIPTIONS}?{query}"), Some(&token))
                .await;
            r.expect(200);
            r
        }
    };

    // Default: -started_at.
    let r = list(String::new()).await;
    assert_eq!(ids(&r), [s5, s4, s3, s2, s1]);
    assert_eq!((r.total_count(), r.max_page()), (5, 1));
    assert_eq!(
        ids(&list("sorting=started_at".into()).await),
        [s1, s2, s3, s4, s5]
    );

    // Amount per month, nulls last both ways.
    assert_eq!(
        ids(&list("sorting=amount".into()).await),
        [s2, s4, s1, s5, s3]
    );
    assert_eq!(
        ids(&list("sorting=-amount".into()).await),
        [s5, s1, s4, s2, s3]
    );
    // Status: active < active set to cancel < canceled (ties: started_at).
    assert_eq!(
        ids(&list("sorting=status".into()).await),
        [s1, s2, s3, s5, s4]
    );
    assert_eq!(
        ids(&list("sorting=-status".into()).await),
        [s4, s5, s3, s2, s1]
    );
    // Customer e-mail, product name, discount name (no discount last ascending).
    assert_eq!(
        ids(&list("sorting=customer".into()).await),
        [s1, s2, s4, s3, s5]
    );
    assert_eq!(
        ids(&list("sorting=product".into()).await),
        [s2, s1, s4, s5, s3]
    );
    assert_eq!(
        ids(&list("sorting=discount".into()).await),
        [s1, s4, s2, s3, s5]
    );
    assert_eq!(
        ids(&list("sorting=-discount".into()).await),
        [s5, s3, s2, s4, s1]
    );
    // Period end: monthly ones by start, the yearly one last; the revoked one keeps its.
    assert_eq!(
        ids(&list("sorting=current_period_end".into()).await),
        [s1, s3, s4, s5, s2]
    );
    let bad = app
        .get(&format!("{SUBSCRIPTIONS}?sorting=price"), Some(&token))
        .await;
    let item = bad.expect_invalid_at(json!(["query", "sorting", 0]));
    assert_eq!(item["type"], "enum");

    // Filters.
    let r = list(format!("customer_id={}&customer_id={}", bob.id, cid.id)).await;
    assert_eq!(ids(&r), [s5, s4, s3, s2]);
    let r = list(format!("product_id={}&sorting=started_at", basic.id)).await;
    assert_eq!(ids(&r), [s1, s4, s5]);
    let r = list(format!("discount_id={}&discount_id={}", promo.id, other.id)).await;
    assert_eq!(ids(&r), [s4, s1]);
    let r = list(format!("product_id={}&customer_id={}", basic.id, bob.id)).await;
    assert_eq!(ids(&r), [s4]);
    assert_eq!(ids(&list("active=true".into()).await), [s5, s3, s2, s1]);
    assert_eq!(ids(&list("active=false".into()).await), [s4]);
    let r = list(format!("active=true&customer_id={}&sorting=amount", cid.id)).await;
    assert_eq!(ids(&r), [s5, s3]);
    assert_eq!(
        list(format!("organization_id={org}")).await.total_count(),
        5
    );
    assert_eq!(
        list(format!("organization_id={UNKNOWN_ID}"))
            .await
            .total_count(),
        0
    );
    assert_eq!(
        list(format!("customer_id={UNKNOWN_ID}"))
            .await
            .total_count(),
        0
    );

    // Pagination.
    let r = list("limit=2&page=2".into()).await;
    assert_eq!(ids(&r), [s3, s2]);
    assert_eq!((r.total_count(), r.max_page()), (5, 3));
    let r = list("limit=2&page=4".into()).await;
    assert!(r.items().is_empty());
    assert_eq!(r.total_count(), 5);
    let r = list(format!("limit=1&page=2&customer_id={}", bob.id)).await;
    assert_eq!(ids(&r), [s2]);
    assert_eq!((r.total_count(), r.max_page()), (2, 2));
    let bad = app
        .get(&format!("{SUBSCRIPTIONS}?page=0"), Some(&token))
        .await;
    bad.expect_invalid_at(json!(["query", "page"]));
    let bad = app
        .get(&format!("{SUBSCRIPTIONS}?active=maybe"), Some(&token))
        .await;
    bad.expect_invalid_at(json!(["query", "active"]));

    // The indexes match the records.
    let report = app
        .state
        .store
        .verify_indexes::<Subscription>()
        .await
        .unwrap();
    assert!(report.is_clean(), "{report:?}");
}

// ---------------------------------------------------------------------------------------
// Authentication, scopes and tenancy
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn subscriptions_need_a_token_with_subscription_scopes_and_stay_in_their_organization() {
    let app = spawn_app_with_clock().await;
    let shop = shop(&app, "tenant").await;
    let s = app
        .subscribe(purchase(&shop.product, &shop.customer, None), t0())
        .await;
    let cancel = json!({"cancel_at_period_end": true});

    for r in [
        app.get(SUBSCRIPTIONS, None).await,
        app.get(&path(s.id), None).await,
        app.patch_json(&path(s.id), None, &cancel).await,
    ] {
        assert_eq!(r.expect_error(401), "Unauthorized");
        assert!(r.www_authenticate().contains("Bearer realm=\"polar\""));
    }

    let no_scope = app
        .user_with_scopes("noscope@example.com", &[Scope::OrdersRead])
        .await;
    let r = app.get(SUBSCRIPTIONS, Some(&no_scope)).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    assert!(r
        .www_authenticate()
        .contains("scope=\"web_default subscriptions:read subscriptions:write\""));

    // A reader of another organization: sees nothing of this one, cannot write.
    let reader = app
        .user_with_scopes(
            "rival@example.com",
            &[
                Scope::SubscriptionsRead,
                Scope::OrganizationsWrite,
                Scope::ProductsWrite,
                Scope::CustomersWrite,
            ],
        )
        .await;
    let r = app.get(SUBSCRIPTIONS, Some(&reader)).await;
    r.expect(200);
    assert_eq!(r.total_count(), 0);
    let rival = app.org(&reader, "rival").await;
    let r = app
        .get(
            &format!("{SUBSCRIPTIONS}?organization_id={}", shop.org),
            Some(&reader),
        )
        .await;
    assert_eq!(r.total_count(), 0);
    let r = app.get(&path(s.id), Some(&reader)).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app.patch_json(&path(s.id), Some(&reader), &cancel).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    assert!(r
        .www_authenticate()
        .contains("scope=\"web_default subscriptions:write\""));

    // A writer of another organization gets 404, and the subscription is untouched.
    let writer = app
        .user_with_scopes("writer@example.com", &[Scope::SubscriptionsWrite])
        .await;
    let r = app.patch_json(&path(s.id), Some(&writer), &cancel).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app
        .patch_json(&path(UNKNOWN_ID), Some(&app.token), &cancel)
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    assert!(!app.stored(s.id).await.cancel_at_period_end);

    // The rival's own subscription is theirs alone.
    let product = app.monthly(&reader, rival, "Rival Pro", 700).await;
    let customer = app.customer(&reader, rival, "x@example.com").await;
    let t = app
        .subscribe(purchase(&product, &customer, None), t0())
        .await;
    let r = app.get(SUBSCRIPTIONS, Some(&reader)).await;
    assert_eq!(ids(&r), [id_of(&t)]);
    let r = app.get(SUBSCRIPTIONS, Some(&app.token)).await;
    assert_eq!(ids(&r), [id_of(&s)]);
}
