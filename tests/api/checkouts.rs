//! `/v1/checkouts/custom/`: create (every price shape, discounts, customers, metadata,
//! custom fields), list, get and update by id, the client-secret endpoints, confirm and
//! what a purchase creates (order, subscription, license keys), expiry with a manual clock,
//! and concurrent confirms (reference 1, 9.1, 9.2; behaviour.md "Payments" and "Checkout
//! lifecycle"; clients.md 4).
//!
//! The catalog is seeded over HTTP only. What a purchase creates is read from the store
//! (`Order`, `Subscription`, `LicenseKey`) and, when the other engineers' endpoints are
//! served, through `/v1/orders/`, `/v1/subscriptions/`, `/v1/license-keys` and the customer
//! portal as well.

use std::collections::BTreeSet;
use std::sync::Arc;

use actix_web::dev::ServerHandle;
use actix_web::web;
use chrono::{DateTime, Duration, Months, Utc};
use futures_util::future::join_all;
use reqwest::{Method, RequestBuilder};
use serde_json::{json, Value};
use tempfile::TempDir;
use tollgate::app::checkout::sweep_expired;
use tollgate::auth::Scope;
use tollgate::bootstrap::TOKEN_FILE;
use tollgate::config::Settings;
use tollgate::domain::ids::CheckoutId;
use tollgate::domain::order::{BillingReason, Order, OrderStatus};
use tollgate::startup::Application;
use tollgate::state::AppState;
use tollgate_actors::checkout::{Checkout, CheckoutStatus};
use tollgate_actors::license_key::{KeyStatus, LicenseKey};
use tollgate_actors::subscription::{Subscription, SubscriptionStatus};
use tollgate_actors::ManualClock;
use tollgate_storage::Store;

use crate::helpers::{assert_utc_timestamp, client, spawn_app, Reply, TestApp};

pub(crate) const CHECKOUTS: &str = "/v1/checkouts/custom/";
const UNKNOWN_ID: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";

// ---------------------------------------------------------------------------------------
// A small HTTP client over any running server (in-process app or the real binary).

/// The server a test talks to, and the bootstrap admin's token.
#[derive(Clone, Copy)]
pub(crate) struct Api<'a> {
    pub base: &'a str,
    pub client: &'a reqwest::Client,
    pub token: &'a str,
}

impl<'a> Api<'a> {
    pub(crate) fn of(app: &'a TestApp) -> Api<'a> {
        Api {
            base: &app.address,
            client: &app.client,
            token: &app.token,
        }
    }

    pub(crate) fn request(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
    ) -> RequestBuilder {
        let req = self.client.request(method, format!("{}{path}", self.base));
        match token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    pub(crate) async fn send(&self, req: RequestBuilder) -> Reply {
        crate::helpers::send_checked(req).await
    }

    pub(crate) async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        self.send(self.request(Method::GET, path, token)).await
    }

    pub(crate) async fn post(&self, path: &str, token: Option<&str>, body: &Value) -> Reply {
        self.send(self.request(Method::POST, path, token).json(body))
            .await
    }

    pub(crate) async fn patch(&self, path: &str, token: Option<&str>, body: &Value) -> Reply {
        self.send(self.request(Method::PATCH, path, token).json(body))
            .await
    }

    /// GET as the admin.
    pub(crate) async fn read(&self, path: &str) -> Reply {
        self.get(path, Some(self.token)).await
    }

    /// POST as the admin, failing the test unless the status is `status`.
    pub(crate) async fn posted(&self, path: &str, body: &Value, status: u16) -> Value {
        let r = self.post(path, Some(self.token), body).await;
        r.expect(status);
        r.body
    }

    /// A route served by the running server, read as the admin; `None` while nobody has
    /// added it yet (an unknown route answers 404).
    pub(crate) async fn served(&self, path: &str) -> Option<Reply> {
        let r = self.read(path).await;
        (r.status != 404).then_some(r)
    }
}

// ---------------------------------------------------------------------------------------
// Seeding a catalog over HTTP.

pub(crate) fn id_of(v: &Value) -> String {
    v["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {v}"))
        .to_string()
}

pub(crate) async fn create_org(api: Api<'_>, slug: &str) -> String {
    id_of(
        &api.posted(
            "/v1/organizations/",
            &json!({"name": format!("Org {slug}"), "slug": slug}),
            201,
        )
        .await,
    )
}

pub(crate) async fn license_benefit(api: Api<'_>, org: &str, properties: Value) -> String {
    id_of(
        &api.posted(
            "/v1/benefits/",
            &json!({"type": "license_keys", "description": "License", "organization_id": org, "properties": properties}),
            201,
        )
        .await,
    )
}

/// `ACME-…` keys, three activations, valid one year.
pub(crate) fn acme_key_properties() -> Value {
    json!({
        "prefix": "acme",
        "expires": {"ttl": 1, "timeframe": "year"},
        "activations": {"limit": 3, "enable_customer_admin": true},
    })
}

pub(crate) async fn product(api: Api<'_>, org: &str, name: &str, prices: Value) -> Value {
    api.posted(
        "/v1/products/",
        &json!({"name": name, "organization_id": org, "prices": prices}),
        201,
    )
    .await
}

pub(crate) async fn attach_benefits(api: Api<'_>, product: &str, benefits: &[&str]) {
    let r = api
        .post(
            &format!("/v1/products/{product}/benefits"),
            Some(api.token),
            &json!({"benefits": benefits}),
        )
        .await;
    r.expect(200);
}

pub(crate) fn monthly(amount: i64) -> Value {
    json!({"type": "recurring", "amount_type": "fixed", "price_amount": amount, "price_currency": "usd", "recurring_interval": "month"})
}

fn yearly(amount: i64) -> Value {
    json!({"type": "recurring", "amount_type": "fixed", "price_amount": amount, "price_currency": "usd", "recurring_interval": "year"})
}

fn one_time(amount: i64) -> Value {
    json!({"type": "one_time", "amount_type": "fixed", "price_amount": amount, "price_currency": "usd"})
}

fn price_id(product: &Value, i: usize) -> String {
    product["prices"][i]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no price {i} in {product}"))
        .to_string()
}

/// Everything most tests sell, in one organization of the admin.
pub(crate) struct Catalog {
    pub org: String,
    /// `ACME-` keys, 3 activations, 1 year.
    pub acme_benefit: String,
    /// Bare keys, no limits, no expiry.
    pub plain_benefit: String,
    /// "Acme Pro": monthly 1500 and yearly 15000; both license-key benefits.
    pub plan: String,
    pub monthly: String,
    pub yearly: String,
    /// One-time 2500; the acme benefit.
    pub ebook: String,
    pub ebook_price: String,
    /// Pay what you want: 1000 to 5000, preset 4242.
    pub tip: String,
    pub tip_price: String,
    /// One-time free; the acme benefit.
    pub free: String,
    pub free_price: String,
    /// Fixed 500 off, once, code `LAUNCH`, any product.
    pub discount: String,
}

pub(crate) async fn seed(api: Api<'_>, slug: &str) -> Catalog {
    let org = create_org(api, slug).await;
    let acme_benefit = license_benefit(api, &org, acme_key_properties()).await;
    let plain_benefit = license_benefit(api, &org, json!({})).await;
    let plan = product(api, &org, "Acme Pro", json!([monthly(1500), yearly(15000)])).await;
    attach_benefits(api, &id_of(&plan), &[&acme_benefit, &plain_benefit]).await;
    let ebook = product(api, &org, "Ebook", json!([one_time(2500)])).await;
    attach_benefits(api, &id_of(&ebook), &[&acme_benefit]).await;
    let tip = product(
        api,
        &org,
        "Tip jar",
        json!([{"type": "one_time", "amount_type": "custom", "minimum_amount": 1000, "maximum_amount": 5000, "preset_amount": 4242, "price_currency": "usd"}]),
    )
    .await;
    let free = product(
        api,
        &org,
        "Community",
        json!([{"type": "one_time", "amount_type": "free"}]),
    )
    .await;
    attach_benefits(api, &id_of(&free), &[&acme_benefit]).await;
    let discount = api
        .posted(
            "/v1/discounts/",
            &json!({"name": "Launch", "code": "LAUNCH", "type": "fixed", "amount": 500, "currency": "usd", "duration": "once", "max_redemptions": 10, "organization_id": org}),
            201,
        )
        .await;
    Catalog {
        org,
        acme_benefit,
        plain_benefit,
        monthly: price_id(&plan, 0),
        yearly: price_id(&plan, 1),
        plan: id_of(&plan),
        ebook_price: price_id(&ebook, 0),
        ebook: id_of(&ebook),
        tip_price: price_id(&tip, 0),
        tip: id_of(&tip),
        free_price: price_id(&free, 0),
        free: id_of(&free),
        discount: id_of(&discount),
    }
}

// ---------------------------------------------------------------------------------------
// Checkout calls.

pub(crate) fn by_price(price: &str) -> Value {
    json!({"payment_processor": "stripe", "product_price_id": price})
}

fn by_product(product: &str) -> Value {
    json!({"payment_processor": "stripe", "product_id": product})
}

pub(crate) fn with(mut body: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

async fn create(api: Api<'_>, body: &Value) -> Reply {
    api.post(CHECKOUTS, Some(api.token), body).await
}

/// Creates a checkout as the admin, failing unless 201.
pub(crate) async fn created(api: Api<'_>, body: &Value) -> Value {
    api.posted(CHECKOUTS, body, 201).await
}

pub(crate) fn secret(c: &Value) -> String {
    c["client_secret"]
        .as_str()
        .unwrap_or_else(|| panic!("no client_secret in {c}"))
        .to_string()
}

pub(crate) fn client_path(secret: &str) -> String {
    format!("{CHECKOUTS}client/{secret}")
}

pub(crate) fn confirm_path(secret: &str) -> String {
    format!("{CHECKOUTS}client/{secret}/confirm")
}

pub(crate) fn id_path(id: &str) -> String {
    format!("{CHECKOUTS}{id}")
}

pub(crate) async fn client_get(api: Api<'_>, secret: &str) -> Reply {
    api.get(&client_path(secret), None).await
}

async fn client_update(api: Api<'_>, secret: &str, body: &Value) -> Reply {
    api.patch(&client_path(secret), None, body).await
}

pub(crate) async fn confirm(api: Api<'_>, secret: &str, body: &Value) -> Reply {
    api.post(&confirm_path(secret), None, body).await
}

pub(crate) async fn get_by_id(api: Api<'_>, id: &str) -> Reply {
    api.read(&id_path(id)).await
}

async fn update_by_id(api: Api<'_>, id: &str, body: &Value) -> Reply {
    api.patch(&id_path(id), Some(api.token), body).await
}

/// Everything a paid confirm needs.
pub(crate) fn buyer(email: &str) -> Value {
    json!({
        "customer_name": "Ada Lovelace",
        "customer_email": email,
        "customer_billing_address": {"country": "FR"},
        "confirmation_token_id": "tok_visa",
    })
}

async fn discount_redemptions(api: Api<'_>, id: &str) -> i64 {
    let r = api.read(&format!("/v1/discounts/{id}")).await;
    r.expect(200);
    r.body["redemptions_count"]
        .as_i64()
        .unwrap_or_else(|| panic!("no redemptions_count: {}", r.body))
}

/// The customers of an organization: (total, e-mails).
async fn customers(api: Api<'_>, org: &str) -> (u64, Vec<String>) {
    let r = api
        .read(&format!("/v1/customers/?organization_id={org}&limit=100"))
        .await;
    r.expect(200);
    let emails = r
        .items()
        .iter()
        .map(|c| c["email"].as_str().unwrap().to_string())
        .collect();
    (r.total_count(), emails)
}

#[track_caller]
fn assert_invalid(r: &Reply, loc: Value, kind: &str, msg: &str) -> Value {
    let item = r.expect_invalid_at(loc);
    assert_eq!(item["type"], kind, "{item}");
    assert_eq!(item["msg"], msg, "{item}");
    item
}

#[track_caller]
pub(crate) fn assert_not_open(r: &Reply, id: &str, status: &str) {
    assert_eq!(r.expect_error(403), "NotOpenCheckout", "{}", r.body);
    assert_eq!(
        r.body["detail"],
        format!("Checkout {id} is not open: {status}")
    );
}

#[track_caller]
fn assert_not_found(r: &Reply) {
    assert_eq!(r.expect_error(404), "ResourceNotFound", "{}", r.body);
    assert_eq!(r.body["detail"], "Not found");
}

#[track_caller]
fn ts(v: &Value) -> DateTime<Utc> {
    assert_utc_timestamp(v);
    DateTime::parse_from_rfc3339(v.as_str().unwrap())
        .unwrap()
        .with_timezone(&Utc)
}

// ---------------------------------------------------------------------------------------
// Response shapes (clients.md 4).

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect()
}

fn set(names: &[&[&str]]) -> BTreeSet<String> {
    names
        .iter()
        .flat_map(|n| n.iter())
        .map(|s| s.to_string())
        .collect()
}

/// `required`: present and non-null; `nullable`: present.
#[track_caller]
fn assert_shape(model: &str, v: &Value, required: &[&str], nullable: &[&str]) {
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("{model} is not an object: {v}"));
    for key in required {
        let value = obj
            .get(*key)
            .unwrap_or_else(|| panic!("{model}: missing {key} in {v}"));
        assert!(!value.is_null(), "{model}: {key} is null in {v}");
    }
    for key in nullable {
        assert!(obj.contains_key(*key), "{model}: missing {key} in {v}");
    }
    for key in ["created_at", "modified_at", "expires_at"] {
        if let Some(t) = obj.get(key).filter(|t| !t.is_null()) {
            assert_utc_timestamp(t);
        }
    }
}

const BASE_REQUIRED: &[&str] = &[
    "created_at",
    "id",
    "payment_processor",
    "status",
    "client_secret",
    "url",
    "expires_at",
    "success_url",
    "product_id",
    "product_price_id",
    "allow_discount_codes",
    "is_discount_applicable",
    "is_free_product_price",
    "is_payment_required",
    "is_payment_setup_required",
    "is_payment_form_required",
    "payment_processor_metadata",
    "product",
    "product_price",
    "attached_custom_fields",
    // Polar's 2026 shape (issue 27), a superset of the seed's.
    "products",
    "prices",
    "discount_amount",
    "net_amount",
    "organization_id",
    "require_billing_address",
    "is_business_customer",
    "billing_address_fields",
    "allow_trial",
    // Tollgate's additive tax breakdown (issue 48).
    "tax_breakdown",
];
const BASE_NULLABLE: &[&str] = &[
    "modified_at",
    "embed_origin",
    "amount",
    "tax_amount",
    "currency",
    "subtotal_amount",
    "total_amount",
    "discount_id",
    "customer_id",
    "customer_name",
    "customer_email",
    "customer_ip_address",
    "customer_billing_address",
    "customer_tax_id",
    "discount",
];
/// Polar's 2026 keys (issue 27) that may be null.
const NEW_NULLABLE: &[&str] = &[
    "return_url",
    "locale",
    "seats",
    "min_seats",
    "max_seats",
    "units",
    "min_units",
    "max_units",
    "tax_behavior",
    "active_trial_interval",
    "active_trial_interval_count",
    "trial_end",
    "customer_billing_name",
    "payment_method_type",
];
const OPTIONAL: &[&str] = &["custom_field_data"];
const CHECKOUT_REQUIRED: &[&str] = &["metadata", "customer_metadata"];
const CHECKOUT_NULLABLE: &[&str] = &[
    "subscription_id",
    "external_customer_id",
    "trial_interval",
    "trial_interval_count",
];
const PUBLIC_REQUIRED: &[&str] = &["organization"];
const CONFIRMED_REQUIRED: &[&str] = &["customer_session_token"];

#[track_caller]
fn assert_common(model: &str, c: &Value) {
    assert_eq!(c["payment_processor"], "stripe", "{c}");
    assert!(
        ["open", "expired", "confirmed", "succeeded", "failed"]
            .contains(&c["status"].as_str().unwrap_or("")),
        "{c}"
    );
    assert!(c["payment_processor_metadata"].is_object(), "{c}");
    assert!(c["attached_custom_fields"].is_array(), "{c}");
    assert_shape(
        &format!("{model}.product"),
        &c["product"],
        &[
            "created_at",
            "id",
            "name",
            "is_recurring",
            "is_archived",
            "organization_id",
            "prices",
            "benefits",
            "medias",
        ],
        &["modified_at", "description"],
    );
    assert_eq!(c["product"]["id"], c["product_id"]);
    assert_shape(
        &format!("{model}.product_price"),
        &c["product_price"],
        &[
            "created_at",
            "id",
            "is_archived",
            "product_id",
            "amount_type",
            "type",
        ],
        &["modified_at"],
    );
    assert_eq!(c["product_price"]["id"], c["product_price_id"]);
    if !c["discount"].is_null() {
        assert_shape(
            &format!("{model}.discount"),
            &c["discount"],
            &["duration", "type", "id", "name"],
            &["code"],
        );
        assert_eq!(c["discount"]["id"], c["discount_id"]);
    }
    if !c["customer_billing_address"].is_null() {
        assert_shape(
            &format!("{model}.customer_billing_address"),
            &c["customer_billing_address"],
            &["country"],
            &[],
        );
    }
}

/// `Checkout`: the token holder's view, with metadata.
#[track_caller]
fn assert_checkout(c: &Value) {
    assert_shape(
        "Checkout",
        c,
        &[BASE_REQUIRED, CHECKOUT_REQUIRED].concat(),
        &[BASE_NULLABLE, NEW_NULLABLE, CHECKOUT_NULLABLE].concat(),
    );
    assert_eq!(
        keys(c),
        set(&[
            BASE_REQUIRED,
            BASE_NULLABLE,
            NEW_NULLABLE,
            OPTIONAL,
            CHECKOUT_REQUIRED,
            CHECKOUT_NULLABLE
        ]),
        "Checkout keys"
    );
    assert_common("Checkout", c);
}

/// `CheckoutPublic` (or `CheckoutPublicConfirmed`): no metadata, the organization instead.
#[track_caller]
fn assert_public(c: &Value, confirmed: bool) {
    let model = if confirmed {
        "CheckoutPublicConfirmed"
    } else {
        "CheckoutPublic"
    };
    let extra: &[&str] = if confirmed { CONFIRMED_REQUIRED } else { &[] };
    assert_shape(
        model,
        c,
        &[BASE_REQUIRED, PUBLIC_REQUIRED, extra].concat(),
        &[BASE_NULLABLE, NEW_NULLABLE].concat(),
    );
    assert_eq!(
        keys(c),
        set(&[
            BASE_REQUIRED,
            BASE_NULLABLE,
            NEW_NULLABLE,
            OPTIONAL,
            PUBLIC_REQUIRED,
            extra
        ]),
        "{model} keys"
    );
    for absent in [
        "metadata",
        "customer_metadata",
        "subscription_id",
        "external_customer_id",
        "trial_interval",
    ] {
        assert!(c.get(absent).is_none(), "{model} has {absent}: {c}");
    }
    assert_common(model, c);
    assert_shape(
        &format!("{model}.organization"),
        &c["organization"],
        &[
            "created_at",
            "id",
            "name",
            "slug",
            "pledge_minimum_amount",
            "pledge_badge_show_amount",
            "subscription_settings",
        ],
        &[
            "modified_at",
            "avatar_url",
            "bio",
            "company",
            "blog",
            "location",
            "email",
            "twitter_username",
            "default_upfront_split_to_contributors",
            "profile_settings",
            "feature_settings",
        ],
    );
    assert_eq!(c["organization"]["id"], c["product"]["organization_id"]);
}

#[track_caller]
fn assert_token_format(token: &Value, prefix: &str) {
    let t = token
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {token}"));
    let rest = t
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("{t} does not start with {prefix}"));
    assert_eq!(rest.len(), 43, "{t}");
    assert!(
        rest.chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_'),
        "not URL-safe base64: {t}"
    );
}

// ---------------------------------------------------------------------------------------
// What a purchase created, read from the store.

pub(crate) async fn store_values<R: tollgate_storage::Record>(store: &Store) -> Vec<R> {
    store
        .scan::<R>()
        .await
        .expect("scanning the store")
        .into_iter()
        .map(|r| r.value)
        .collect()
}

/// Every stored webhook event, each with its payload (a payload apart is loaded).
pub(crate) async fn webhook_events(
    state: &tollgate::state::AppState,
) -> Vec<tollgate::domain::webhook::WebhookEvent> {
    let mut events = store_values::<tollgate::domain::webhook::WebhookEvent>(&state.store).await;
    for e in &mut events {
        tollgate::app::webhook_endpoints::load_payload(state, e)
            .await
            .expect("loading a webhook payload");
        assert!(!e.archived, "a webhook event's payload is missing");
    }
    events
}

fn checkout_key(id: &str) -> Vec<u8> {
    CheckoutId(uuid::Uuid::parse_str(id).unwrap()).key()
}

pub(crate) async fn stored_checkout(store: &Store, id: &str) -> Checkout {
    store
        .get::<Checkout>(&checkout_key(id))
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("checkout {id} is not stored"))
        .value
}

/// The records of one purchase.
#[derive(Debug)]
pub(crate) struct Purchase {
    pub order: Order,
    pub subscription: Option<Subscription>,
    pub keys: Vec<LicenseKey>,
}

/// What the checkout `id` created, failing unless there is exactly one order and at most
/// one subscription.
pub(crate) async fn purchase_of(store: &Store, id: &str) -> Purchase {
    let mine = |c: Option<CheckoutId>| c.map(|c| c.to_string()).as_deref() == Some(id);
    let orders: Vec<Order> = store_values::<Order>(store)
        .await
        .into_iter()
        .filter(|o| mine(o.checkout_id))
        .collect();
    assert_eq!(orders.len(), 1, "orders of checkout {id}: {orders:#?}");
    let order = orders.into_iter().next().unwrap();
    let subscriptions: Vec<Subscription> = store_values::<Subscription>(store)
        .await
        .into_iter()
        .filter(|s| mine(s.checkout_id))
        .collect();
    assert!(
        subscriptions.len() <= 1,
        "subscriptions of checkout {id}: {subscriptions:#?}"
    );
    let subscription = subscriptions.into_iter().next();
    let sub_id = subscription.as_ref().map(|s| s.id);
    let keys = store_values::<LicenseKey>(store)
        .await
        .into_iter()
        .filter(|k| {
            k.order_id == Some(order.id) || (sub_id.is_some() && k.subscription_id == sub_id)
        })
        .collect();
    Purchase {
        order,
        subscription,
        keys,
    }
}

fn is_upper_uuid(s: &str) -> bool {
    s.len() == 36 && uuid::Uuid::parse_str(s).is_ok() && s == s.to_uppercase()
}

/// A license key of the acme benefit: `ACME-<UUID>`, 3 activations, one year.
#[track_caller]
pub(crate) fn assert_acme_key(k: &LicenseKey) {
    let rest = k
        .key
        .strip_prefix("ACME-")
        .unwrap_or_else(|| panic!("key without the upper-cased prefix: {}", k.key));
    assert!(is_upper_uuid(rest), "{}", k.key);
    assert_eq!(k.status, KeyStatus::Granted);
    assert_eq!(k.limit_activations, Some(3));
    assert_eq!(k.limit_usage, None);
    assert_eq!((k.usage, k.validations), (0, 0));
    assert_key_expiry(k, k.created_at.checked_add_months(Months::new(12)));
}

/// A one-time purchase's key expires as its benefit says (`ttl`); a subscription's key
/// follows the subscription: its paid period plus the default grace (3 days).
#[track_caller]
fn assert_key_expiry(k: &LicenseKey, one_time: Option<chrono::DateTime<chrono::Utc>>) {
    match k.paid_until {
        Some(paid) => {
            assert!(k.subscription_id.is_some(), "{k:?}");
            assert_eq!(
                k.expires_at,
                Some(paid + chrono::Duration::days(3)),
                "{k:?}"
            );
        }
        None => {
            assert!(
                k.subscription_id.is_none(),
                "a subscription's key is paid until: {k:?}"
            );
            assert_eq!(k.expires_at, one_time, "expires as the benefit says: {k:?}");
        }
    }
}

/// A license key of a benefit without prefix or limits.
#[track_caller]
fn assert_plain_key(k: &LicenseKey) {
    assert!(is_upper_uuid(&k.key), "bare upper-case UUID: {}", k.key);
    assert_eq!(k.status, KeyStatus::Granted);
    assert_eq!((k.limit_activations, k.limit_usage), (None, None));
    assert_key_expiry(k, None);
}

/// A monthly subscription purchase of the catalog's plan, at `amount` per month.
#[track_caller]
pub(crate) fn assert_subscription_purchase(
    p: &Purchase,
    checkout: &str,
    amount: i64,
    acme_benefit: &str,
    plain_benefit: Option<&str>,
) {
    let o = &p.order;
    assert_eq!(o.billing_reason, BillingReason::SubscriptionCreate);
    assert_eq!(o.status, OrderStatus::Paid);
    assert_eq!((o.amount, o.tax_amount), (amount, 0));
    assert_eq!(o.currency, "usd");
    assert!(o.recurring);
    assert_eq!(
        o.checkout_id.map(|c| c.to_string()).as_deref(),
        Some(checkout)
    );
    let s = p
        .subscription
        .as_ref()
        .unwrap_or_else(|| panic!("no subscription for checkout {checkout}"));
    assert_eq!(o.subscription_id, Some(s.id));
    assert_eq!(s.status, SubscriptionStatus::Active);
    let started = s.started_at.expect("started_at is set");
    assert_eq!(s.current_period_start, started);
    assert_eq!(
        s.current_period_end,
        started.checked_add_months(Months::new(1)),
        "current_period_end is one month after started_at"
    );
    assert_eq!(s.amount, Some(amount));
    assert_eq!(s.currency.as_deref(), Some("usd"));
    assert!(!s.cancel_at_period_end);
    assert_eq!(s.customer_id, o.customer_id);
    assert_eq!(s.product_id, o.product_id);
    assert_eq!(s.price_id, o.product_price_id);
    let expected = 1 + usize::from(plain_benefit.is_some());
    assert_eq!(
        p.keys.len(),
        expected,
        "one key per license-key benefit: {:#?}",
        p.keys
    );
    for k in &p.keys {
        assert_eq!(k.customer_id, o.customer_id);
        assert_eq!(k.organization_id, o.organization_id);
        assert_eq!(k.subscription_id, Some(s.id));
        assert_eq!(
            k.paid_until, s.current_period_end,
            "paid for the first period"
        );
        if k.benefit_id.to_string() == acme_benefit {
            assert_acme_key(k);
        } else {
            assert_eq!(Some(k.benefit_id.to_string().as_str()), plain_benefit);
            assert_plain_key(k);
        }
    }
}

/// The purchase through the organizer endpoints, for those that are served already.
pub(crate) async fn check_purchase_endpoints(
    api: Api<'_>,
    org: &str,
    checkout: &str,
    p: &Purchase,
) {
    let subscription = p.subscription.as_ref();
    match api
        .served(&format!("/v1/orders/?organization_id={org}&limit=100"))
        .await
    {
        Some(r) => {
            r.expect(200);
            let mine: Vec<Value> = r
                .items()
                .into_iter()
                .filter(|o| o["checkout_id"] == checkout)
                .collect();
            assert_eq!(mine.len(), 1, "orders listed for {checkout}: {}", r.body);
            let o = &mine[0];
            assert_eq!(o["id"], p.order.id.to_string());
            assert_eq!(o["amount"], p.order.amount);
            assert_eq!(o["billing_reason"], p.order.billing_reason.as_str());
            assert_eq!(o["customer_id"], p.order.customer_id.to_string());
        }
        // TODO: check GET /v1/orders/ once the orders endpoints are served.
        None => eprintln!("GET /v1/orders/ is not served yet; checked the store only"),
    }
    match api
        .served(&format!(
            "/v1/subscriptions/?organization_id={org}&limit=100"
        ))
        .await
    {
        Some(r) => {
            r.expect(200);
            let mine: Vec<Value> = r
                .items()
                .into_iter()
                .filter(|s| s["checkout_id"] == checkout)
                .collect();
            match subscription {
                Some(s) => {
                    assert_eq!(mine.len(), 1, "subscriptions of {checkout}: {}", r.body);
                    assert_eq!(mine[0]["id"], s.id.to_string());
                    assert_eq!(mine[0]["status"], "active");
                    assert!(!mine[0]["started_at"].is_null());
                }
                None => assert!(mine.is_empty(), "{}", r.body),
            }
        }
        // TODO: check GET /v1/subscriptions/ once the subscriptions endpoints are served.
        None => eprintln!("GET /v1/subscriptions/ is not served yet; checked the store only"),
    }
    match api
        .served(&format!("/v1/license-keys?organization_id={org}&limit=100"))
        .await
    {
        Some(r) => {
            r.expect(200);
            for k in &p.keys {
                let listed: Vec<Value> = r
                    .items()
                    .into_iter()
                    .filter(|i| i["id"] == k.id.to_string())
                    .collect();
                assert_eq!(listed.len(), 1, "key {} listed once: {}", k.id, r.body);
                assert_eq!(listed[0]["key"], k.key.as_str());
                assert_eq!(listed[0]["status"], "granted");
                assert_eq!(listed[0]["customer_id"], k.customer_id.to_string());
                assert_eq!(listed[0]["benefit_id"], k.benefit_id.to_string());
            }
        }
        // TODO: check GET /v1/license-keys once the license-key endpoints are served.
        None => eprintln!("GET /v1/license-keys is not served yet; checked the store only"),
    }
}

// ---------------------------------------------------------------------------------------
// An application on a manual clock.

struct ClockedApp {
    address: String,
    client: reqwest::Client,
    token: String,
    state: web::Data<AppState>,
    handle: ServerHandle,
    clock: Arc<ManualClock>,
    _dir: TempDir,
}

impl ClockedApp {
    fn api(&self) -> Api<'_> {
        Api {
            base: &self.address,
            client: &self.client,
            token: &self.token,
        }
    }
}

impl Drop for ClockedApp {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
    }
}

/// Like `helpers::spawn_app`, on a `ManualClock` starting at `start`. The background sweep
/// is pushed out of the test's way, so the test decides when expiry is persisted.
async fn spawn_app_with_clock(start: DateTime<Utc>) -> ClockedApp {
    let dir = tempfile::tempdir().expect("creating the data directory");
    let mut settings = Settings::for_tests(dir.path());
    settings.jobs.sweep_interval_secs = 24 * 3600;
    let (clock, shared) = ManualClock::shared(start);
    let app = Application::build_with_clock(settings, shared)
        .await
        .expect("building the application");
    let port = app.port();
    let state = app.state();
    let handle = app.handle();
    actix_web::rt::spawn(async move {
        if let Err(e) = app.run_until_stopped().await {
            eprintln!("test server stopped with an error: {e:#}");
        }
    });
    let token = std::fs::read_to_string(dir.path().join(TOKEN_FILE))
        .expect("reading the bootstrap token")
        .trim()
        .to_string();
    ClockedApp {
        address: format!("http://127.0.0.1:{port}"),
        client: client(),
        token,
        state,
        handle,
        clock,
        _dir: dir,
    }
}

// =======================================================================================
// Create.

#[actix_web::test]
async fn create_by_price_returns_the_full_checkout() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "shape").await;

    let r = create(
        api,
        &with(
            by_price(&cat.monthly),
            json!({
                "success_url": "https://shop.example/thanks?checkout_id={CHECKOUT_ID}&session={CHECKOUT_SESSION_ID}",
                "metadata": {"source": "test", "rank": 1, "vip": true},
                "customer_metadata": {"crm": "c-42"},
                "embed_origin": "https://shop.example",
            }),
        ),
    )
    .await;
    r.expect(201);
    let c = &r.body;
    assert_checkout(c);
    let id = c["id"].as_str().unwrap();
    assert_eq!(c["status"], "open");
    assert_eq!(
        c["success_url"],
        format!("https://shop.example/thanks?checkout_id={id}&session={{CHECKOUT_SESSION_ID}}")
    );
    assert_token_format(&c["client_secret"], "polar_c_");
    let s = secret(c);
    assert_eq!(c["url"], format!("{}/checkout/{s}", app.address));
    let created_at = ts(&c["created_at"]);
    let expires_at = ts(&c["expires_at"]);
    assert_eq!(
        expires_at - created_at,
        Duration::minutes(30),
        "expires_at = created_at + 30 min"
    );
    assert!((created_at - Utc::now()).num_seconds().abs() < 60);
    assert_eq!(c["modified_at"], Value::Null);
    assert_eq!(c["product_id"], cat.plan.as_str());
    assert_eq!(c["product_price_id"], cat.monthly.as_str());
    assert_eq!(c["product"]["name"], "Acme Pro");
    assert_eq!(c["product_price"]["price_amount"], 1500);
    assert_eq!(c["product_price"]["recurring_interval"], "month");
    assert_eq!(c["product"]["benefits"].as_array().unwrap().len(), 2);
    assert_eq!(
        (&c["amount"], &c["currency"], &c["tax_amount"]),
        (&json!(1500), &json!("usd"), &json!(0))
    );
    assert_eq!(
        (&c["subtotal_amount"], &c["total_amount"]),
        (&json!(1500), &json!(1500))
    );
    assert_eq!(c["is_payment_required"], true);
    assert_eq!(c["is_payment_setup_required"], true, "recurring, not free");
    assert_eq!(c["is_payment_form_required"], true);
    assert_eq!(c["is_discount_applicable"], true);
    assert_eq!(c["is_free_product_price"], false);
    assert_eq!(c["allow_discount_codes"], true);
    assert_eq!(
        c["metadata"],
        json!({"source": "test", "rank": 1, "vip": true})
    );
    assert_eq!(c["customer_metadata"], json!({"crm": "c-42"}));
    assert_eq!(c["embed_origin"], "https://shop.example");
    assert_eq!(c["payment_processor_metadata"], json!({}));
    assert_eq!(c["attached_custom_fields"], json!([]));
    for null in [
        "discount_id",
        "discount",
        "customer_id",
        "customer_name",
        "customer_email",
        "customer_billing_address",
        "customer_tax_id",
        "subscription_id",
    ] {
        assert_eq!(c[null], Value::Null, "{null}");
    }

    // Read back by id: the same checkout.
    let g = get_by_id(api, id).await;
    g.expect(200);
    assert_checkout(&g.body);
    assert_eq!(&g.body, c, "GET by id returns what create returned");

    // The buyer's view: no metadata, the organization instead.
    let p = client_get(api, &s).await;
    p.expect(200);
    assert_public(&p.body, false);
    assert_eq!(p.body["id"], id);
    assert_eq!(p.body["status"], "open");
    assert_eq!(p.body["organization"]["id"], cat.org.as_str());
    assert_eq!(p.body["success_url"], c["success_url"]);

    // Without a success_url, the confirmation page is the default.
    let d = created(api, &by_price(&cat.monthly)).await;
    assert_eq!(
        d["success_url"],
        format!("{}/checkout/{}/confirmation", app.address, secret(&d))
    );
    assert_ne!(secret(&d), s, "client secrets are unique");
}

#[actix_web::test]
async fn create_by_product_uses_its_first_active_price() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "by-product").await;

    let r = create(
        api,
        &with(
            by_product(&cat.plan),
            json!({"success_url": "https://x.example/{CHECKOUT_ID}"}),
        ),
    )
    .await;
    r.expect(201);
    assert_checkout(&r.body);
    let id = r.id();
    assert_eq!(r.body["product_id"], cat.plan.as_str());
    assert_eq!(r.body["product_price_id"], cat.monthly.as_str());
    assert_eq!(r.body["amount"], 1500);
    assert_eq!(r.body["success_url"], format!("https://x.example/{id}"));

    // Once the monthly price is archived, the yearly one is the first active price.
    api.patch(
        &format!("/v1/products/{}", cat.plan),
        Some(api.token),
        &json!({"prices": [{"id": cat.yearly}]}),
    )
    .await
    .expect(200);
    let r = create(api, &by_product(&cat.plan)).await;
    r.expect(201);
    assert_eq!(r.body["product_price_id"], cat.yearly.as_str());
    assert_eq!(r.body["amount"], 15000);
    assert_eq!(r.body["product_price"]["recurring_interval"], "year");
}

#[actix_web::test]
async fn fixed_custom_and_free_prices() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "prices").await;

    // Fixed: the price's amount; an amount in the body is ignored.
    let c = created(
        api,
        &with(by_price(&cat.ebook_price), json!({"amount": 99999})),
    )
    .await;
    assert_checkout(&c);
    assert_eq!(
        (&c["amount"], &c["currency"]),
        (&json!(2500), &json!("usd"))
    );
    assert_eq!(c["total_amount"], 2500);
    assert_eq!(c["is_payment_setup_required"], false, "one-time");
    assert_eq!(c["is_payment_required"], true);
    assert_eq!(c["product_price"]["type"], "one_time");

    // Custom: the preset, or the amount given, within the bounds.
    let c = created(api, &by_price(&cat.tip_price)).await;
    assert_checkout(&c);
    assert_eq!(
        (&c["amount"], &c["currency"]),
        (&json!(4242), &json!("usd"))
    );
    assert_eq!(c["is_discount_applicable"], false);
    assert_eq!(c["product_price"]["amount_type"], "custom");
    let c = created(
        api,
        &with(by_price(&cat.tip_price), json!({"amount": 1000})),
    )
    .await;
    assert_eq!(
        (&c["amount"], &c["subtotal_amount"]),
        (&json!(1000), &json!(1000))
    );
    let c = created(
        api,
        &with(by_price(&cat.tip_price), json!({"amount": 5000})),
    )
    .await;
    assert_eq!(c["amount"], 5000);
    let r = create(api, &with(by_price(&cat.tip_price), json!({"amount": 999}))).await;
    assert_invalid(
        &r,
        json!(["body", "amount"]),
        "greater_than_equal",
        "Amount is below minimum.",
    );
    let r = create(
        api,
        &with(by_price(&cat.tip_price), json!({"amount": 5001})),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "amount"]),
        "less_than_equal",
        "Amount is above maximum.",
    );
    // Outside Polar's schema bounds (50 ..= 99 999 999) whatever the price.
    for amount in [49, 100_000_000] {
        let r = create(
            api,
            &with(by_price(&cat.tip_price), json!({"amount": amount})),
        )
        .await;
        r.expect_invalid_at(json!(["body", "amount"]));
    }

    // By product, the custom price's preset too.
    let c = created(api, &by_product(&cat.tip)).await;
    assert_eq!(
        (&c["product_price_id"], &c["amount"]),
        (&json!(cat.tip_price), &json!(4242))
    );

    // Free: 0 US dollars (Polar's 2026 shape, which the seed's nullable fields accept),
    // no tax, nothing to pay.
    let by_id = created(api, &by_product(&cat.free)).await;
    assert_eq!(by_id["product_price_id"], cat.free_price.as_str());
    let c = created(api, &by_price(&cat.free_price)).await;
    assert_checkout(&c);
    for zero in ["amount", "subtotal_amount", "net_amount", "total_amount"] {
        assert_eq!(c[zero], 0, "{zero}: {c}");
    }
    assert_eq!(c["currency"], "usd");
    assert_eq!(c["tax_amount"], Value::Null);
    assert_eq!(c["is_free_product_price"], true);
    assert_eq!(c["is_payment_required"], false);
    assert_eq!(c["is_payment_setup_required"], false);
    assert_eq!(c["is_payment_form_required"], false);
    assert_eq!(c["product_price"]["amount_type"], "free");

    // A free recurring price: no setup either.
    let org = cat.org.as_str();
    let p = product(
        api,
        org,
        "Free tier",
        json!([{"type": "recurring", "amount_type": "free", "recurring_interval": "month"}]),
    )
    .await;
    let c = created(api, &by_price(&price_id(&p, 0))).await;
    assert_eq!(c["is_free_product_price"], true);
    assert_eq!(c["is_payment_setup_required"], false);
    assert_eq!(c["amount"], 0);
}

#[actix_web::test]
async fn discounts_on_create() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "disc-create").await;

    let c = created(
        api,
        &with(by_price(&cat.monthly), json!({"discount_id": cat.discount})),
    )
    .await;
    assert_checkout(&c);
    assert_eq!(c["discount_id"], cat.discount.as_str());
    assert_eq!(c["amount"], 1500);
    assert_eq!(
        (&c["subtotal_amount"], &c["total_amount"]),
        (&json!(1000), &json!(1000))
    );
    let d = &c["discount"];
    assert_eq!(
        (&d["name"], &d["type"], &d["duration"], &d["code"]),
        (
            &json!("Launch"),
            &json!("fixed"),
            &json!("once"),
            &json!("LAUNCH")
        )
    );
    assert_eq!((&d["amount"], &d["currency"]), (&json!(500), &json!("usd")));
    // Creating a checkout does not redeem the discount.
    assert_eq!(discount_redemptions(api, &cat.discount).await, 0);

    // A percentage discount restricted to this product.
    let pct = api
        .posted(
            "/v1/discounts/",
            &json!({"name": "Quarter", "type": "percentage", "basis_points": 2500, "duration": "forever", "products": [cat.plan], "organization_id": cat.org}),
            201,
        )
        .await;
    let c = created(
        api,
        &with(by_price(&cat.monthly), json!({"discount_id": id_of(&pct)})),
    )
    .await;
    assert_eq!(c["subtotal_amount"], 1125);
    assert_eq!(c["discount"]["basis_points"], 2500);

    // Refused: unknown, another organization's, restricted to another product.
    let other_org = create_org(api, "disc-other").await;
    let foreign = api
        .posted(
            "/v1/discounts/",
            &json!({"name": "Foreign", "type": "fixed", "amount": 100, "currency": "usd", "duration": "once", "organization_id": other_org}),
            201,
        )
        .await;
    let ebook_only = api
        .posted(
            "/v1/discounts/",
            &json!({"name": "Ebook only", "type": "fixed", "amount": 100, "currency": "usd", "duration": "once", "products": [cat.ebook], "organization_id": cat.org}),
            201,
        )
        .await;
    for discount in [UNKNOWN_ID.to_string(), id_of(&foreign), id_of(&ebook_only)] {
        let r = create(
            api,
            &with(by_price(&cat.monthly), json!({"discount_id": discount})),
        )
        .await;
        assert_invalid(
            &r,
            json!(["body", "discount_id"]),
            "value_error",
            "Discount does not exist.",
        );
    }
    // On a custom price.
    let r = create(
        api,
        &with(
            by_price(&cat.tip_price),
            json!({"discount_id": cat.discount}),
        ),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "discount_id"]),
        "value_error",
        "Discounts are only applicable to fixed prices.",
    );
    // A discount past its max redemptions or ends_at is not redeemable.
    let ended = api
        .posted(
            "/v1/discounts/",
            &json!({"name": "Ended", "type": "fixed", "amount": 100, "currency": "usd", "duration": "once",
                    "starts_at": (Utc::now() - Duration::days(10)).to_rfc3339(),
                    "ends_at": (Utc::now() - Duration::days(1)).to_rfc3339(), "organization_id": cat.org}),
            201,
        )
        .await;
    let r = create(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"discount_id": id_of(&ended)}),
        ),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "discount_id"]),
        "value_error",
        "Discount does not exist.",
    );
}

#[actix_web::test]
async fn unknown_or_archived_prices_and_products_are_refused() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "refused").await;

    let r = create(api, &by_price(UNKNOWN_ID)).await;
    assert_invalid(
        &r,
        json!(["body", "product_price_id"]),
        "value_error",
        "Price does not exist.",
    );
    let r = create(api, &by_product(UNKNOWN_ID)).await;
    assert_invalid(
        &r,
        json!(["body", "product_id"]),
        "value_error",
        "Product does not exist.",
    );
    // A price id that is not a UUID.
    let r = create(api, &by_price("not-a-uuid")).await;
    r.expect_invalid_at(json!(["body", "product_price_id"]));

    // Archived price (the yearly one dropped from the product).
    api.patch(
        &format!("/v1/products/{}", cat.plan),
        Some(api.token),
        &json!({"prices": [{"id": cat.monthly}]}),
    )
    .await
    .expect(200);
    let r = create(api, &by_price(&cat.yearly)).await;
    assert_invalid(
        &r,
        json!(["body", "product_price_id"]),
        "value_error",
        "Price is archived.",
    );

    // Archived product, by price and by product.
    api.patch(
        &format!("/v1/products/{}", cat.ebook),
        Some(api.token),
        &json!({"is_archived": true}),
    )
    .await
    .expect(200);
    let r = create(api, &by_price(&cat.ebook_price)).await;
    assert_invalid(
        &r,
        json!(["body", "product_price_id"]),
        "value_error",
        "Product is archived.",
    );
    let r = create(api, &by_product(&cat.ebook)).await;
    assert_invalid(
        &r,
        json!(["body", "product_id"]),
        "value_error",
        "Product is archived.",
    );

    // A price of an organization the caller is not a member of does not exist for it.
    let (_, stranger) = app
        .new_user_with_scopes(
            "stranger@example.com",
            &[Scope::CheckoutsWrite, Scope::CheckoutsRead],
        )
        .await;
    let r = api
        .post(CHECKOUTS, Some(&stranger), &by_price(&cat.monthly))
        .await;
    assert_invalid(
        &r,
        json!(["body", "product_price_id"]),
        "value_error",
        "Price does not exist.",
    );
    let r = api
        .post(CHECKOUTS, Some(&stranger), &by_product(&cat.plan))
        .await;
    assert_invalid(
        &r,
        json!(["body", "product_id"]),
        "value_error",
        "Product does not exist.",
    );

    // Nothing was created.
    let r = api.read(CHECKOUTS).await;
    r.expect(200);
    assert_eq!(r.total_count(), 0);
}

#[actix_web::test]
async fn a_customer_prefills_the_buyer_fields() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "prefill").await;
    let customer = api
        .posted(
            "/v1/customers/",
            &json!({"email": "buyer@example.com", "name": "Buyer", "organization_id": cat.org,
                    "billing_address": {"country": "FR", "city": "Paris"}, "tax_id": "FR61954506077"}),
            201,
        )
        .await;
    let customer_id = id_of(&customer);

    let c = created(
        api,
        &with(by_price(&cat.monthly), json!({"customer_id": customer_id})),
    )
    .await;
    assert_checkout(&c);
    assert_eq!(c["customer_id"], customer_id.as_str());
    assert_eq!(c["customer_email"], "buyer@example.com");
    assert_eq!(c["customer_name"], "Buyer");
    assert_eq!(c["customer_billing_address"]["country"], "FR");
    assert_eq!(c["customer_billing_address"]["city"], "Paris");
    assert_eq!(c["customer_tax_id"], "FR61954506077");

    // Fields given on create win over the customer's.
    let c2 = created(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"customer_id": customer_id, "customer_name": "Someone Else"}),
        ),
    )
    .await;
    assert_eq!(c2["customer_name"], "Someone Else");
    assert_eq!(c2["customer_email"], "buyer@example.com");

    // The e-mail of a checkout tied to a customer is the customer's.
    let u = client_update(
        api,
        &secret(&c),
        &json!({"customer_email": "other@example.com"}),
    )
    .await;
    u.expect(200);
    assert_eq!(u.body["customer_email"], "buyer@example.com");

    // Unknown customer, or another organization's.
    let other_org = create_org(api, "prefill-other").await;
    let foreign = api
        .posted(
            "/v1/customers/",
            &json!({"email": "foreign@example.com", "organization_id": other_org}),
            201,
        )
        .await;
    for id in [UNKNOWN_ID.to_string(), id_of(&foreign)] {
        let r = create(
            api,
            &with(by_price(&cat.monthly), json!({"customer_id": id})),
        )
        .await;
        assert_invalid(
            &r,
            json!(["body", "customer_id"]),
            "value_error",
            "Customer does not exist.",
        );
    }

    // Confirm with only a payment token: everything else came from the customer, and the
    // purchase goes to that customer (no new one).
    let r = confirm(
        api,
        &secret(&c),
        &json!({"confirmation_token_id": "tok_visa"}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["customer_id"], customer_id.as_str());
    let p = purchase_of(&app.state.store, &id_of(&c)).await;
    assert_eq!(p.order.customer_id.to_string(), customer_id);
    assert_eq!(customers(api, &cat.org).await.0, 1);
}

#[actix_web::test]
async fn metadata_keys_longer_than_40_characters_are_refused() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "meta").await;
    let long = "k".repeat(41);
    let ok = "k".repeat(40);

    let r = create(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"metadata": {long.clone(): "v"}}),
        ),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "metadata", long, "[key]"]),
        "string_too_long",
        "String should have at most 40 characters",
    );
    let r = create(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"customer_metadata": {long.clone(): 1}}),
        ),
    )
    .await;
    r.expect_invalid_at(json!(["body", "customer_metadata", long, "[key]"]));
    let r = create(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"metadata": {"k": {"nested": 1}}}),
        ),
    )
    .await;
    r.expect_invalid_at(json!(["body", "metadata", "k"]));

    let c = created(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"metadata": {ok.clone(): "v"}}),
        ),
    )
    .await;
    assert_eq!(c["metadata"], json!({ok.clone(): "v"}));

    // Same rule on update by id; the stored metadata is unchanged after a refusal.
    let id = id_of(&c);
    let r = update_by_id(api, &id, &json!({"metadata": {long.clone(): "v"}})).await;
    r.expect_invalid_at(json!(["body", "metadata", long, "[key]"]));
    let g = get_by_id(api, &id).await;
    assert_eq!(g.body["metadata"], json!({ok: "v"}));
}

#[actix_web::test]
async fn custom_field_data_is_validated_against_the_products_fields() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "fields").await;
    let field = api
        .posted(
            "/v1/custom-fields/",
            &json!({"type": "text", "slug": "company", "name": "Company", "organization_id": cat.org, "properties": {}}),
            201,
        )
        .await;
    let field_id = id_of(&field);
    let p = api
        .posted(
            "/v1/products/",
            &json!({"name": "B2B", "organization_id": cat.org, "prices": [one_time(2000)],
                    "attached_custom_fields": [{"custom_field_id": field_id, "required": true}]}),
            201,
        )
        .await;
    let price = price_id(&p, 0);

    // A required field left out, or a value of the wrong type.
    let r = create(api, &by_price(&price)).await;
    let item = r.expect_invalid_at(json!(["body", "custom_field_data", "company"]));
    assert_eq!(item["type"], "missing", "{item}");
    let r = create(
        api,
        &with(
            by_price(&price),
            json!({"custom_field_data": {"company": 42}}),
        ),
    )
    .await;
    r.expect_invalid_at(json!(["body", "custom_field_data", "company"]));

    let c = created(
        api,
        &with(
            by_price(&price),
            json!({"custom_field_data": {"company": "Acme Corp"}, "metadata": {"deal": "d-1"}}),
        ),
    )
    .await;
    assert_checkout(&c);
    assert_eq!(c["custom_field_data"], json!({"company": "Acme Corp"}));
    let attached = c["attached_custom_fields"].as_array().unwrap();
    assert_eq!(attached.len(), 1, "{c}");
    assert_eq!(attached[0]["custom_field_id"], field_id.as_str());
    assert_eq!(attached[0]["required"], true);
    assert_eq!(attached[0]["custom_field"]["slug"], "company");

    // Revalidated on updates, by id and by client secret.
    let id = id_of(&c);
    let r = update_by_id(api, &id, &json!({"custom_field_data": {"company": 7}})).await;
    r.expect_invalid_at(json!(["body", "custom_field_data", "company"]));
    let r = client_update(
        api,
        &secret(&c),
        &json!({"custom_field_data": {"company": "New Co"}}),
    )
    .await;
    r.expect(200);
    assert_public(&r.body, false);
    assert_eq!(r.body["custom_field_data"], json!({"company": "New Co"}));

    // The order carries the data and the metadata.
    let r = confirm(api, &secret(&c), &buyer("b2b@example.com")).await;
    r.expect(200);
    let o = purchase_of(&app.state.store, &id).await.order;
    assert_eq!(o.custom_field_data.to_json(), json!({"company": "New Co"}));
    assert_eq!(o.metadata.to_json(), json!({"deal": "d-1"}));
    assert_eq!(o.billing_reason, BillingReason::Purchase);
}

/// Polar's clients type `custom_field_data` values as string, integer, boolean or date-time:
/// a `null` for an optional field left empty breaks the whole Checkout, Order or
/// Subscription for them, so responses leave those keys out (the store keeps them).
#[actix_web::test]
async fn empty_optional_custom_fields_are_left_out_of_responses() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "optional-fields").await;
    let mut fields = Vec::new();
    for (kind, slug) in [("text", "company"), ("number", "seats"), ("date", "start")] {
        let f = api
            .posted(
                "/v1/custom-fields/",
                &json!({"type": kind, "slug": slug, "name": slug, "organization_id": cat.org, "properties": {}}),
                201,
            )
            .await;
        fields.push(json!({"custom_field_id": id_of(&f), "required": false}));
    }
    let p = api
        .posted(
            "/v1/products/",
            &json!({"name": "Team plan", "organization_id": cat.org, "prices": [monthly(900)],
                    "attached_custom_fields": fields}),
            201,
        )
        .await;
    let price = price_id(&p, 0);

    let c = created(api, &by_price(&price)).await;
    assert_eq!(c["custom_field_data"], json!({}));
    let c = created(
        api,
        &with(
            by_price(&price),
            json!({"custom_field_data": {"company": "Acme", "seats": null}}),
        ),
    )
    .await;
    assert_eq!(c["custom_field_data"], json!({"company": "Acme"}));
    let id = id_of(&c);
    let r = get_by_id(api, &id).await;
    r.expect(200);
    assert_eq!(r.body["custom_field_data"], json!({"company": "Acme"}));
    let r = api.read(&client_path(&secret(&c))).await;
    r.expect(200);
    assert_eq!(r.body["custom_field_data"], json!({"company": "Acme"}));

    let r = confirm(api, &secret(&c), &buyer("team@example.com")).await;
    r.expect(200);
    assert_eq!(r.body["custom_field_data"], json!({"company": "Acme"}));
    let purchase = purchase_of(&app.state.store, &id).await;
    // Stored as Polar stores it: every attached field's key.
    assert_eq!(
        purchase.order.custom_field_data.to_json(),
        json!({"company": "Acme", "seats": null, "start": null})
    );
    let r = api.read(&format!("/v1/orders/{}", purchase.order.id)).await;
    r.expect(200);
    assert_eq!(r.body["custom_field_data"], json!({"company": "Acme"}));
    let sub = purchase.subscription.expect("a subscription");
    let r = api.read(&format!("/v1/subscriptions/{}", sub.id)).await;
    r.expect(200);
    assert_eq!(r.body["custom_field_data"], json!({"company": "Acme"}));
    let r = api
        .read(&format!("/v1/subscriptions/?organization_id={}", cat.org))
        .await;
    r.expect(200);
    assert_eq!(
        r.items()[0]["custom_field_data"],
        json!({"company": "Acme"})
    );
}

// =======================================================================================
// List, get, tenancy and scopes.

fn ids(r: &Reply) -> Vec<String> {
    r.items().iter().map(id_of).collect()
}

#[actix_web::test]
async fn list_filters_sorts_and_pages() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "list").await;
    let in_hours = |h: i64| (Utc::now() + Duration::hours(h)).to_rfc3339();

    // Created in this order; they expire in the reverse order.
    let a = id_of(
        &created(
            api,
            &with(by_price(&cat.monthly), json!({"expires_at": in_hours(3)})),
        )
        .await,
    );
    let b = id_of(
        &created(
            api,
            &with(by_price(&cat.yearly), json!({"expires_at": in_hours(2)})),
        )
        .await,
    );
    let c = id_of(&created(api, &by_price(&cat.ebook_price)).await);
    // Another organization of the same admin.
    let org2 = create_org(api, "list-two").await;
    let p2 = product(api, &org2, "Other", json!([one_time(700)])).await;
    let d = id_of(&created(api, &by_price(&price_id(&p2, 0))).await);

    let list = |q: String| async move {
        let r = api.read(&format!("{CHECKOUTS}?{q}")).await;
        r.expect(200);
        r
    };
    let org = &cat.org;

    // Default: -created_at, every organization of the user.
    let r = list(String::new()).await;
    assert_eq!(ids(&r), vec![d.clone(), c.clone(), b.clone(), a.clone()]);
    assert_eq!((r.total_count(), r.max_page()), (4, 1));
    for item in r.items() {
        assert_checkout(&item);
    }

    let r = list(format!("organization_id={org}")).await;
    assert_eq!(ids(&r), vec![c.clone(), b.clone(), a.clone()]);
    assert_eq!(r.total_count(), 3);
    let r = list(format!("organization_id={org2}")).await;
    assert_eq!(ids(&r), vec![d.clone()]);
    let r = list(format!("organization_id={org}&organization_id={org2}")).await;
    assert_eq!(r.total_count(), 4);

    let r = list(format!("product_id={}", cat.plan)).await;
    assert_eq!(ids(&r), vec![b.clone(), a.clone()]);
    assert_eq!(r.total_count(), 2);
    let r = list(format!("product_id={}&product_id={}", cat.plan, cat.ebook)).await;
    assert_eq!(r.total_count(), 3);
    let r = list(format!("product_id={UNKNOWN_ID}")).await;
    assert_eq!(r.total_count(), 0);
    let r = list(format!("organization_id={org2}&product_id={}", cat.plan)).await;
    assert_eq!(r.total_count(), 0, "both filters apply");

    // Sorting.
    let q = format!("organization_id={org}&sorting=created_at");
    assert_eq!(ids(&list(q).await), vec![a.clone(), b.clone(), c.clone()]);
    let q = format!("organization_id={org}&sorting=-created_at");
    assert_eq!(ids(&list(q).await), vec![c.clone(), b.clone(), a.clone()]);
    let q = format!("organization_id={org}&sorting=expires_at");
    assert_eq!(ids(&list(q).await), vec![c.clone(), b.clone(), a.clone()]);
    let q = format!("organization_id={org}&sorting=-expires_at");
    assert_eq!(ids(&list(q).await), vec![a.clone(), b.clone(), c.clone()]);
    let q = format!("product_id={}&sorting=expires_at", cat.plan);
    assert_eq!(ids(&list(q).await), vec![b.clone(), a.clone()]);
    let r = api.read(&format!("{CHECKOUTS}?sorting=amount")).await;
    let items = r.expect_validation();
    assert_eq!(items[0]["loc"][0], "query");
    assert_eq!(items[0]["loc"][1], "sorting");

    // Pagination.
    let r = list("limit=3".into()).await;
    assert_eq!(ids(&r), vec![d.clone(), c.clone(), b.clone()]);
    assert_eq!((r.total_count(), r.max_page()), (4, 2));
    let r = list("limit=3&page=2".into()).await;
    assert_eq!(ids(&r), vec![a.clone()]);
    let r = list("limit=3&page=3".into()).await;
    assert!(r.items().is_empty());
    assert_eq!(r.total_count(), 4);
    let r = list("limit=1000".into()).await;
    assert_eq!(r.items().len(), 4, "limit is clamped, not refused");
    api.read(&format!("{CHECKOUTS}?page=0"))
        .await
        .expect_validation();
    api.read(&format!("{CHECKOUTS}?limit=0"))
        .await
        .expect_validation();
    api.read(&format!("{CHECKOUTS}?organization_id=nope"))
        .await
        .expect_validation();
}

#[actix_web::test]
async fn another_organizations_checkouts_are_invisible() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "mine").await;
    let mine = created(api, &by_price(&cat.monthly)).await;
    let mine_id = id_of(&mine);

    // Someone else's organization, product and checkout.
    let (_, other) = app
        .new_user_with_scopes(
            "other@example.com",
            &[
                Scope::OrganizationsWrite,
                Scope::ProductsWrite,
                Scope::CheckoutsWrite,
            ],
        )
        .await;
    let other_api = Api {
        token: &other,
        ..api
    };
    let other_org = create_org(other_api, "theirs").await;
    let p = product(other_api, &other_org, "Theirs", json!([one_time(900)])).await;
    let theirs = created(other_api, &by_price(&price_id(&p, 0))).await;
    let theirs_id = id_of(&theirs);

    // The admin sees only its own.
    let r = api.read(CHECKOUTS).await;
    r.expect(200);
    assert_eq!(ids(&r), vec![mine_id.clone()]);
    let r = api
        .read(&format!("{CHECKOUTS}?organization_id={other_org}"))
        .await;
    r.expect(200);
    assert_eq!(r.total_count(), 0);
    let r = api
        .read(&format!("{CHECKOUTS}?product_id={}", id_of(&p)))
        .await;
    r.expect(200);
    assert_eq!(r.total_count(), 0);
    assert_not_found(&get_by_id(api, &theirs_id).await);
    assert_not_found(&update_by_id(api, &theirs_id, &json!({"metadata": {"x": "y"}})).await);
    assert_not_found(&get_by_id(api, UNKNOWN_ID).await);
    assert_not_found(&update_by_id(api, UNKNOWN_ID, &json!({})).await);
    get_by_id(api, "not-a-uuid")
        .await
        .expect_invalid_at(json!(["path", "id"]));

    // And the other user only theirs.
    let r = other_api.read(CHECKOUTS).await;
    r.expect(200);
    assert_eq!(ids(&r), vec![theirs_id.clone()]);
    assert_not_found(&get_by_id(other_api, &mine_id).await);
    other_api.read(&id_path(&theirs_id)).await.expect(200);
    let r = other_api
        .post(CHECKOUTS, Some(&other), &by_price(&cat.monthly))
        .await;
    assert_invalid(
        &r,
        json!(["body", "product_price_id"]),
        "value_error",
        "Price does not exist.",
    );
    // Their refused PATCH changed nothing.
    let g = get_by_id(other_api, &theirs_id).await;
    assert_eq!(g.body["metadata"], json!({}));
}

#[actix_web::test]
async fn checkout_endpoints_need_a_token_with_checkout_scopes() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "scopes").await;
    let c = created(api, &by_price(&cat.monthly)).await;
    let id = id_of(&c);
    let body = by_price(&cat.monthly);

    // No token: 401.
    for r in [
        api.get(CHECKOUTS, None).await,
        api.get(&id_path(&id), None).await,
        api.post(CHECKOUTS, None, &body).await,
        api.patch(&id_path(&id), None, &json!({"metadata": {"a": "b"}}))
            .await,
    ] {
        assert_eq!(r.expect_error(401), "Unauthorized", "{}", r.body);
        assert!(r.www_authenticate().contains("Bearer realm=\"polar\""));
    }
    let r = api.get(CHECKOUTS, Some("polar_pat_bogus")).await;
    assert_eq!(r.expect_error(401), "invalid_token");

    // A token without checkout scopes: 403.
    let (user, token) = app
        .new_user_with_scopes("noscope@example.com", &[Scope::ProductsRead])
        .await;
    for r in [
        api.get(CHECKOUTS, Some(&token)).await,
        api.get(&id_path(&id), Some(&token)).await,
        api.post(CHECKOUTS, Some(&token), &body).await,
        api.patch(&id_path(&id), Some(&token), &json!({})).await,
    ] {
        assert_eq!(r.expect_error(403), "insufficient_scope", "{}", r.body);
    }
    let r = api.get(CHECKOUTS, Some(&token)).await;
    assert!(
        r.www_authenticate().contains("checkouts:read"),
        "{}",
        r.www_authenticate()
    );

    // checkouts:read (no web scopes) reads but does not write.
    let reader = app.issue_token(user, &[Scope::CheckoutsRead]).await;
    let r = api.get(CHECKOUTS, Some(&reader)).await;
    r.expect(200);
    assert_eq!(
        r.total_count(),
        0,
        "not a member of the seller's organization"
    );
    let r = api.post(CHECKOUTS, Some(&reader), &body).await;
    assert_eq!(r.expect_error(403), "insufficient_scope", "{}", r.body);
    assert!(r.www_authenticate().contains("checkouts:write"));
    let r = api.patch(&id_path(&id), Some(&reader), &json!({})).await;
    assert_eq!(r.expect_error(403), "insufficient_scope", "{}", r.body);

    // The admin's token still works, and nothing changed.
    let g = get_by_id(api, &id).await;
    g.expect(200);
    assert_eq!(g.body["metadata"], json!({}));
    assert_eq!(api.read(CHECKOUTS).await.total_count(), 1);
}

// =======================================================================================
// Update by id, and by client secret.

#[actix_web::test]
async fn update_by_id_applies_organizer_changes() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "update").await;
    let c = created(api, &by_price(&cat.monthly)).await;
    let id = id_of(&c);

    let r = update_by_id(api, &id, &json!({"metadata": {"test": "test"}})).await;
    r.expect(200);
    assert_checkout(&r.body);
    assert_eq!(r.body["metadata"], json!({"test": "test"}));
    assert_utc_timestamp(&r.body["modified_at"]);
    assert_eq!(
        get_by_id(api, &id).await.body["metadata"],
        json!({"test": "test"})
    );

    // Discount by id, then removed with an explicit null.
    let r = update_by_id(api, &id, &json!({"discount_id": cat.discount})).await;
    r.expect(200);
    assert_eq!(r.body["discount_id"], cat.discount.as_str());
    assert_eq!(r.body["subtotal_amount"], 1000);
    assert_eq!(
        r.body["metadata"],
        json!({"test": "test"}),
        "absent fields are kept"
    );
    let r = update_by_id(api, &id, &json!({"discount_id": null})).await;
    r.expect(200);
    assert_eq!(
        (&r.body["discount_id"], &r.body["discount"]),
        (&Value::Null, &Value::Null)
    );
    assert_eq!(r.body["subtotal_amount"], 1500);
    let r = update_by_id(api, &id, &json!({"discount_id": UNKNOWN_ID})).await;
    assert_invalid(
        &r,
        json!(["body", "discount_id"]),
        "value_error",
        "Discount does not exist.",
    );

    // Another price of the same product: amount and currency follow; the discount stays.
    update_by_id(api, &id, &json!({"discount_id": cat.discount}))
        .await
        .expect(200);
    let r = update_by_id(api, &id, &json!({"product_price_id": cat.yearly})).await;
    r.expect(200);
    assert_eq!(r.body["product_price_id"], cat.yearly.as_str());
    assert_eq!(r.body["product_price"]["recurring_interval"], "year");
    assert_eq!(
        (&r.body["amount"], &r.body["currency"]),
        (&json!(15000), &json!("usd"))
    );
    assert_eq!(r.body["subtotal_amount"], 14500);

    // Refused prices.
    let r = update_by_id(api, &id, &json!({"product_price_id": cat.ebook_price})).await;
    assert_invalid(
        &r,
        json!(["body", "product_price_id"]),
        "value_error",
        "Price does not belong to the product.",
    );
    let r = update_by_id(api, &id, &json!({"product_price_id": UNKNOWN_ID})).await;
    assert_invalid(
        &r,
        json!(["body", "product_price_id"]),
        "value_error",
        "Price does not exist.",
    );
    api.patch(
        &format!("/v1/products/{}", cat.plan),
        Some(api.token),
        &json!({"prices": [{"id": cat.yearly}]}),
    )
    .await
    .expect(200);
    let r = update_by_id(api, &id, &json!({"product_price_id": cat.monthly})).await;
    assert_invalid(
        &r,
        json!(["body", "product_price_id"]),
        "value_error",
        "Price is archived.",
    );
    // None of the refusals changed the checkout.
    let g = get_by_id(api, &id).await;
    assert_eq!(g.body["product_price_id"], cat.yearly.as_str());
    assert_eq!(g.body["discount_id"], cat.discount.as_str());

    // Other organizer-only fields.
    let r = update_by_id(
        api,
        &id,
        &json!({"customer_metadata": {"crm": 1}, "customer_ip_address": "192.0.2.1",
                "success_url": "https://ok.example/{CHECKOUT_ID}", "allow_discount_codes": false,
                "customer_name": "  "}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["customer_metadata"], json!({"crm": 1}));
    assert_eq!(r.body["customer_ip_address"], "192.0.2.1");
    assert_eq!(r.body["success_url"], format!("https://ok.example/{id}"));
    assert_eq!(r.body["allow_discount_codes"], false);
    assert_eq!(r.body["customer_name"], Value::Null, "a blank name is null");
    let r = update_by_id(api, &id, &json!({"customer_ip_address": "not-an-ip"})).await;
    r.expect_invalid_at(json!(["body", "customer_ip_address"]));

    // A custom price takes an amount within its bounds.
    let t = created(api, &by_price(&cat.tip_price)).await;
    let r = update_by_id(api, &id_of(&t), &json!({"amount": 3000})).await;
    r.expect(200);
    assert_eq!(r.body["amount"], 3000);
    let r = update_by_id(api, &id_of(&t), &json!({"amount": 6000})).await;
    assert_invalid(
        &r,
        json!(["body", "amount"]),
        "less_than_equal",
        "Amount is above maximum.",
    );
}

#[actix_web::test]
async fn client_update_by_secret() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "client-update").await;
    let c = created(
        api,
        &with(by_price(&cat.monthly), json!({"metadata": {"kept": "yes"}})),
    )
    .await;
    let id = id_of(&c);
    let s = secret(&c);

    // customer_name is updated; metadata in the body is ignored and never shown.
    let r = client_update(
        api,
        &s,
        &json!({"customer_name": "Grace Hopper", "metadata": {"test": "test"}, "customer_metadata": {"x": 1}}),
    )
    .await;
    r.expect(200);
    assert_public(&r.body, false);
    assert_eq!(r.body["customer_name"], "Grace Hopper");
    let g = get_by_id(api, &id).await;
    assert_eq!(g.body["metadata"], json!({"kept": "yes"}));
    assert_eq!(g.body["customer_metadata"], json!({}));
    assert_eq!(g.body["customer_name"], "Grace Hopper");

    // Organizer-only fields are ignored here too.
    let r = client_update(
        api,
        &s,
        &json!({"discount_id": cat.discount, "allow_discount_codes": false, "success_url": "https://evil.example/"}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["discount_id"], Value::Null);
    assert_eq!(r.body["allow_discount_codes"], true);
    assert_ne!(r.body["success_url"], "https://evil.example/");

    // A discount code, case-insensitively.
    let r = client_update(api, &s, &json!({"discount_code": "launch"})).await;
    r.expect(200);
    assert_eq!(r.body["discount_id"], cat.discount.as_str());
    assert_eq!(r.body["discount"]["code"], "LAUNCH");
    assert_eq!(r.body["subtotal_amount"], 1000);
    let r = client_update(api, &s, &json!({"discount_code": "LaUnCh"})).await;
    r.expect(200);
    assert_eq!(r.body["discount_id"], cat.discount.as_str());
    // An unknown code.
    let r = client_update(api, &s, &json!({"discount_code": "NOPE"})).await;
    assert_invalid(
        &r,
        json!(["body", "discount_code"]),
        "value_error",
        "This discount code does not exist or is no longer available.",
    );
    // An explicit null removes the discount.
    let r = client_update(api, &s, &json!({"discount_code": null})).await;
    r.expect(200);
    assert_eq!(r.body["discount_id"], Value::Null);
    assert_eq!(r.body["subtotal_amount"], 1500);

    // Codes are ignored on a checkout that does not allow them.
    let closed = created(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"allow_discount_codes": false}),
        ),
    )
    .await;
    let r = client_update(api, &secret(&closed), &json!({"discount_code": "LAUNCH"})).await;
    r.expect(200);
    assert_eq!(r.body["discount_id"], Value::Null);
    assert_eq!(r.body["subtotal_amount"], 1500);
    let r = client_update(api, &secret(&closed), &json!({"discount_code": "NOPE"})).await;
    r.expect(200);

    // A code on a custom price.
    let tip = created(api, &by_price(&cat.tip_price)).await;
    let r = client_update(api, &secret(&tip), &json!({"discount_code": "LAUNCH"})).await;
    assert_invalid(
        &r,
        json!(["body", "discount_code"]),
        "value_error",
        "Discounts are only applicable to fixed prices.",
    );
    // The buyer may pick an amount, and another price of the same product.
    let r = client_update(api, &secret(&tip), &json!({"amount": 2000})).await;
    r.expect(200);
    assert_eq!(r.body["amount"], 2000);
    let r = client_update(api, &s, &json!({"product_price_id": cat.yearly})).await;
    r.expect(200);
    assert_eq!(r.body["amount"], 15000);
    let r = client_update(api, &s, &json!({"product_price_id": cat.ebook_price})).await;
    assert_invalid(
        &r,
        json!(["body", "product_price_id"]),
        "value_error",
        "Price does not belong to the product.",
    );
    let r = client_update(api, &s, &json!({"customer_email": "not an email"})).await;
    r.expect_invalid_at(json!(["body", "customer_email"]));
}

#[actix_web::test]
async fn client_endpoints_take_only_the_client_secret() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "client-auth").await;
    let c = created(api, &by_price(&cat.ebook_price)).await;
    let s = secret(&c);

    // Unknown secrets.
    for unknown in ["polar_c_doesnotexist", "nope", UNKNOWN_ID] {
        assert_not_found(&client_get(api, unknown).await);
        assert_not_found(&client_update(api, unknown, &json!({"customer_name": "x"})).await);
        assert_not_found(&confirm(api, unknown, &buyer("a@example.com")).await);
    }

    // Any Authorization header is ignored: valid, garbage, or another scheme.
    let (_, unrelated) = app
        .new_user_with_scopes("unrelated@example.com", &[Scope::ProductsRead])
        .await;
    let headers = [
        format!("Bearer {}", app.token),
        format!("Bearer {unrelated}"),
        "Bearer polar_pat_garbage".to_string(),
        "Bearer".to_string(),
        "Basic dXNlcjpwYXNz".to_string(),
        "garbage".to_string(),
    ];
    for (i, h) in headers.iter().enumerate() {
        let r = api
            .send(
                api.request(Method::GET, &client_path(&s), None)
                    .header("Authorization", h),
            )
            .await;
        r.expect(200);
        assert_public(&r.body, false);
        let r = api
            .send(
                api.request(Method::PATCH, &client_path(&s), None)
                    .header("Authorization", h)
                    .json(&json!({"customer_name": format!("Buyer {i}")})),
            )
            .await;
        r.expect(200);
        assert_eq!(r.body["customer_name"], format!("Buyer {i}"));
    }
    let r = api
        .send(
            api.request(Method::POST, &confirm_path(&s), None)
                .header("Authorization", "Bearer polar_pat_garbage")
                .json(&buyer("header@example.com")),
        )
        .await;
    r.expect(200);
    assert_public(&r.body, true);

    // A second checkout confirmed with the seller's own token (as the SDK sends it).
    let c2 = created(api, &by_price(&cat.ebook_price)).await;
    let r = api
        .post(
            &confirm_path(&secret(&c2)),
            Some(api.token),
            &buyer("sdk@example.com"),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["status"], "confirmed");
}

// =======================================================================================
// Confirm.

#[actix_web::test]
async fn confirm_lists_every_missing_field() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "missing").await;
    let c = created(api, &by_price(&cat.monthly)).await;
    let s = secret(&c);

    let r = confirm(api, &s, &json!({})).await;
    let items = r.expect_validation();
    let found: Vec<(Value, Value)> = items
        .iter()
        .map(|i| (i["loc"].clone(), i["type"].clone()))
        .collect();
    for field in [
        "customer_email",
        "customer_name",
        "customer_billing_address",
        "confirmation_token_id",
    ] {
        assert!(
            found.contains(&(json!(["body", field]), json!("missing"))),
            "{field} missing is reported: {}",
            r.body
        );
    }
    assert_eq!(items.len(), 4, "{}", r.body);
    let token_item = r.expect_invalid_at(json!(["body", "confirmation_token_id"]));
    assert_eq!(token_item["msg"], "Confirmation token is required.");
    assert_eq!(
        r.expect_invalid_at(json!(["body", "customer_email"]))["msg"],
        "Field is required."
    );

    // A token alone still lacks the buyer's details.
    let r = confirm(api, &s, &json!({"confirmation_token_id": "tok_visa"})).await;
    let items = r.expect_validation();
    assert_eq!(items.len(), 3, "{}", r.body);

    // The checkout is still open, with nothing recorded.
    let g = client_get(api, &s).await;
    assert_eq!(g.body["status"], "open");
    assert_eq!(customers(api, &cat.org).await.0, 0);

    // Fields set earlier by an update count.
    client_update(
        api,
        &s,
        &json!({"customer_email": "late@example.com", "customer_name": "Late", "customer_billing_address": {"country": "DE"}}),
    )
    .await
    .expect(200);
    let r = confirm(api, &s, &json!({})).await;
    let items = r.expect_validation();
    assert_eq!(items.len(), 1, "{}", r.body);
    assert_eq!(items[0]["loc"], json!(["body", "confirmation_token_id"]));
    confirm(api, &s, &json!({"confirmation_token_id": "tok_visa"}))
        .await
        .expect(200);
}

#[actix_web::test]
async fn a_declined_payment_leaves_the_checkout_open() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "declined").await;
    let c = created(
        api,
        &with(by_price(&cat.monthly), json!({"discount_id": cat.discount})),
    )
    .await;
    let (id, s) = (id_of(&c), secret(&c));

    let mut declined = buyer("ada@example.com");
    declined["confirmation_token_id"] = json!("tok_decline_insufficient_funds");
    let r = confirm(api, &s, &declined).await;
    assert_eq!(r.expect_error(400), "PaymentError", "{}", r.body);
    assert_eq!(
        r.body["detail"],
        "The payment failed: Your card was declined. Please try again with a different payment method."
    );

    // Still open, nothing bought, the redemption given back.
    let g = client_get(api, &s).await;
    g.expect(200);
    assert_eq!(g.body["status"], "open");
    assert_eq!(get_by_id(api, &id).await.body["status"], "open");
    assert_eq!(
        stored_checkout(&app.state.store, &id).await.status,
        CheckoutStatus::Open
    );
    assert_eq!(discount_redemptions(api, &cat.discount).await, 0);
    assert!(store_values::<Order>(&app.state.store).await.is_empty());
    assert!(store_values::<Subscription>(&app.state.store)
        .await
        .is_empty());
    assert!(store_values::<LicenseKey>(&app.state.store)
        .await
        .is_empty());

    // Declined again, then approved.
    let mut declined = buyer("ada@example.com");
    declined["confirmation_token_id"] = json!("tok_decline");
    assert_eq!(
        confirm(api, &s, &declined).await.expect_error(400),
        "PaymentError"
    );
    let r = confirm(api, &s, &buyer("ada@example.com")).await;
    r.expect(200);
    assert_eq!(r.body["status"], "confirmed");
    assert_eq!(client_get(api, &s).await.body["status"], "succeeded");
    assert_eq!(discount_redemptions(api, &cat.discount).await, 1);
    let p = purchase_of(&app.state.store, &id).await;
    assert_subscription_purchase(
        &p,
        &id,
        1000,
        &cat.acme_benefit,
        Some(cat.plain_benefit.as_str()),
    );
    assert_eq!(customers(api, &cat.org).await.0, 1);
}

#[actix_web::test]
async fn a_declined_confirm_does_not_bind_the_checkout_to_a_customer() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "declined-email").await;
    let c = created(api, &by_price(&cat.monthly)).await;
    let (id, s) = (id_of(&c), secret(&c));

    // A typo in the e-mail, and the card is declined: "the checkout stays open" (Polar
    // rolls the whole confirm back on a payment error).
    let mut declined = buyer("ada@exmaple.com");
    declined["confirmation_token_id"] = json!("tok_decline");
    confirm(api, &s, &declined).await.expect_error(400);
    let after_decline = get_by_id(api, &id).await.body;
    let customers_after_decline = customers(api, &cat.org).await;

    // The buyer fixes the e-mail and pays with another card: the purchase is theirs.
    let r = confirm(api, &s, &buyer("ada@example.com")).await;
    r.expect(200);
    let order = purchase_of(&app.state.store, &id).await.order;
    let (_, emails) = customers(api, &cat.org).await;

    let mut problems = Vec::new();
    if after_decline["status"] != "open" || !after_decline["customer_id"].is_null() {
        problems.push(format!(
            "after the decline: status {}, customer_id {} (expected open, null)",
            after_decline["status"], after_decline["customer_id"]
        ));
    }
    // Deliberate difference from Polar: the customer the declined confirm created stays
    // (without orders), since deleting it could pull it from under a concurrent confirm
    // that found it by e-mail. The checkout no longer points at it.
    assert!(
        customers_after_decline.0 <= 1,
        "{:?}",
        customers_after_decline.1
    );
    if r.body["customer_email"] != "ada@example.com" {
        problems.push(format!(
            "confirm with the corrected e-mail answered customer_email {}",
            r.body["customer_email"]
        ));
    }
    if order.customer_email != "ada@example.com" {
        problems.push(format!("the order went to {}", order.customer_email));
    }
    if !emails.contains(&"ada@example.com".to_string()) {
        problems.push(format!("customers at the end: {emails:?}"));
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[actix_web::test]
async fn a_discount_past_its_max_redemptions_is_refused_at_confirm() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "max-redemptions").await;
    let once = api
        .posted(
            "/v1/discounts/",
            &json!({"name": "Only one", "code": "ONLYONE", "type": "fixed", "amount": 300, "currency": "usd",
                    "duration": "once", "max_redemptions": 1, "organization_id": cat.org}),
            201,
        )
        .await;
    let once = id_of(&once);
    let with_discount = with(by_price(&cat.ebook_price), json!({"discount_id": once}));
    let a = created(api, &with_discount).await;
    let b = created(api, &with_discount).await;

    confirm(api, &secret(&a), &buyer("first@example.com"))
        .await
        .expect(200);
    assert_eq!(discount_redemptions(api, &once).await, 1);
    let r = confirm(api, &secret(&b), &buyer("second@example.com")).await;
    assert_invalid(
        &r,
        json!(["body", "discount_id"]),
        "value_error",
        "Discount is no longer redeemable.",
    );
    let g = client_get(api, &secret(&b)).await;
    assert_eq!(g.body["status"], "open");
    assert_eq!(discount_redemptions(api, &once).await, 1);
    // The buyer drops the discount and pays the full price.
    client_update(api, &secret(&b), &json!({"discount_code": null}))
        .await
        .expect(200);
    confirm(api, &secret(&b), &buyer("second@example.com"))
        .await
        .expect(200);
    let o = purchase_of(&app.state.store, &id_of(&b)).await.order;
    assert_eq!((o.amount, o.discount_id), (2500, None));
    assert_eq!(discount_redemptions(api, &once).await, 1);

    // Two buyers at the same moment: only one gets the last redemption.
    let last = api
        .posted(
            "/v1/discounts/",
            &json!({"name": "Last one", "type": "fixed", "amount": 300, "currency": "usd",
                    "duration": "once", "max_redemptions": 1, "organization_id": cat.org}),
            201,
        )
        .await;
    let last = id_of(&last);
    let body = with(by_price(&cat.ebook_price), json!({"discount_id": last}));
    let mut secrets = Vec::new();
    for _ in 0..4 {
        secrets.push(secret(&created(api, &body).await));
    }
    let emails: Vec<Value> = (0..secrets.len())
        .map(|i| buyer(&format!("racer{i}@example.com")))
        .collect();
    let replies = join_all(secrets.iter().zip(&emails).map(|(s, b)| confirm(api, s, b))).await;
    let ok = replies.iter().filter(|r| r.status == 200).count();
    assert_eq!(
        ok,
        1,
        "{:?}",
        replies
            .iter()
            .map(|r| (r.status, &r.body))
            .collect::<Vec<_>>()
    );
    for r in replies.iter().filter(|r| r.status != 200) {
        assert_invalid(
            r,
            json!(["body", "discount_id"]),
            "value_error",
            "Discount is no longer redeemable.",
        );
    }
    assert_eq!(discount_redemptions(api, &last).await, 1);
}

#[actix_web::test]
async fn confirm_rechecks_that_the_price_is_not_archived() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "archived-later").await;
    let c = created(api, &by_price(&cat.yearly)).await;
    api.patch(
        &format!("/v1/products/{}", cat.plan),
        Some(api.token),
        &json!({"prices": [{"id": cat.monthly}]}),
    )
    .await
    .expect(200);
    let r = confirm(api, &secret(&c), &buyer("late@example.com")).await;
    assert_invalid(
        &r,
        json!(["body", "product_price_id"]),
        "value_error",
        "Price is archived.",
    );
    assert_eq!(client_get(api, &secret(&c)).await.body["status"], "open");
    assert!(store_values::<Order>(&app.state.store).await.is_empty());
    // Switching to the active price makes it payable again.
    let r = client_update(api, &secret(&c), &json!({"product_price_id": cat.monthly})).await;
    r.expect(200);
    let r = confirm(api, &secret(&c), &buyer("late@example.com")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let o = purchase_of(&app.state.store, &id_of(&c)).await.order;
    assert_eq!(o.product_price_id.to_string(), cat.monthly);
    assert_eq!(o.amount, 1500);
}

#[actix_web::test]
async fn confirm_that_switches_to_an_active_price_is_not_refused_for_the_old_one() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "archived-switch").await;
    let c = created(api, &by_price(&cat.yearly)).await;
    api.patch(
        &format!("/v1/products/{}", cat.plan),
        Some(api.token),
        &json!({"prices": [{"id": cat.monthly}]}),
    )
    .await
    .expect(200);
    // Confirm applies its body as an update first (reference 1.7 step 1), so the price it
    // switches to is the one that must not be archived.
    let mut body = buyer("switch@example.com");
    body["product_price_id"] = json!(cat.monthly);
    let r = confirm(api, &secret(&c), &body).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["product_price_id"], cat.monthly.as_str());
    let o = purchase_of(&app.state.store, &id_of(&c)).await.order;
    assert_eq!(
        (o.product_price_id.to_string(), o.amount),
        (cat.monthly.clone(), 1500)
    );
}

#[actix_web::test]
async fn a_fully_discounted_or_free_subscription_needs_no_payment_token() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "no-charge").await;
    let full = api
        .posted(
            "/v1/discounts/",
            &json!({"name": "On the house", "type": "percentage", "basis_points": 10000, "duration": "forever", "organization_id": cat.org}),
            201,
        )
        .await;
    let c = created(
        api,
        &with(by_price(&cat.monthly), json!({"discount_id": id_of(&full)})),
    )
    .await;
    assert_eq!(
        (&c["total_amount"], &c["is_payment_required"]),
        (&json!(0), &json!(false))
    );
    assert_eq!(
        c["is_payment_setup_required"], true,
        "still a subscription to set up"
    );
    // Name and address are still required (payment setup), the token is not.
    let r = confirm(
        api,
        &secret(&c),
        &json!({"customer_email": "gift@example.com"}),
    )
    .await;
    let items = r.expect_validation();
    let locs: BTreeSet<String> = items.iter().map(|i| i["loc"][1].to_string()).collect();
    assert_eq!(
        locs,
        ["\"customer_billing_address\"", "\"customer_name\""]
            .iter()
            .map(|s| s.to_string())
            .collect::<BTreeSet<_>>(),
        "{}",
        r.body
    );
    let mut body = buyer("gift@example.com");
    body["confirmation_token_id"] = Value::Null;
    let r = confirm(api, &secret(&c), &body).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let p = purchase_of(&app.state.store, &id_of(&c)).await;
    assert_subscription_purchase(
        &p,
        &id_of(&c),
        0,
        &cat.acme_benefit,
        Some(cat.plain_benefit.as_str()),
    );

    // A free recurring price: an e-mail is enough, and it still makes a subscription.
    let tier = product(
        api,
        &cat.org,
        "Free tier",
        json!([{"type": "recurring", "amount_type": "free", "recurring_interval": "month"}]),
    )
    .await;
    attach_benefits(api, &id_of(&tier), &[&cat.acme_benefit]).await;
    let f = created(api, &by_price(&price_id(&tier, 0))).await;
    let r = confirm(
        api,
        &secret(&f),
        &json!({"customer_email": "free-tier@example.com"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let p = purchase_of(&app.state.store, &id_of(&f)).await;
    assert_eq!(p.order.billing_reason, BillingReason::SubscriptionCreate);
    assert_eq!(p.order.amount, 0);
    let s = p
        .subscription
        .as_ref()
        .expect("a free recurring price makes a subscription");
    assert_eq!(s.status, SubscriptionStatus::Active);
    assert_eq!(s.amount, None);
    assert_eq!(
        s.current_period_end,
        s.started_at
            .and_then(|t| t.checked_add_months(Months::new(1)))
    );
    assert_eq!(p.keys.len(), 1);
    assert_acme_key(&p.keys[0]);
}

#[actix_web::test]
async fn tax_ids_and_expiry_times_are_validated() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "tax").await;

    let r = create(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"customer_tax_id": "FR61954506077"}),
        ),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "customer_billing_address"]),
        "missing",
        "Country is required to validate tax ID.",
    );
    let r = create(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"customer_tax_id": "123", "customer_billing_address": {"country": "FR"}}),
        ),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "customer_tax_id"]),
        "value_error",
        "Invalid tax ID.",
    );
    let c = created(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"customer_tax_id": "FR61954506077", "customer_billing_address": {"country": "FR"}}),
        ),
    )
    .await;
    assert_eq!(c["customer_tax_id"], "FR61954506077");
    let id = id_of(&c);
    // Changing the country alone revalidates it; null clears it.
    let r = update_by_id(
        api,
        &id,
        &json!({"customer_billing_address": {"country": "US", "state": "US-NY"}}),
    )
    .await;
    assert_invalid(
        &r,
        json!(["body", "customer_tax_id"]),
        "value_error",
        "Invalid tax ID.",
    );
    let r = client_update(api, &secret(&c), &json!({"customer_tax_id": null})).await;
    r.expect(200);
    assert_eq!(r.body["customer_tax_id"], Value::Null);
    let r = create(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"customer_billing_address": {"country": "XX"}}),
        ),
    )
    .await;
    r.expect_invalid_at(json!(["body", "customer_billing_address", "country"]));
    let r = create(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"customer_email": "not-an-email"}),
        ),
    )
    .await;
    r.expect_invalid_at(json!(["body", "customer_email"]));

    // expires_at (Tollgate extension): between 1 minute and 24 hours ahead.
    for bad in [
        Duration::seconds(30),
        Duration::hours(25),
        Duration::hours(-1),
    ] {
        let r = create(
            api,
            &with(
                by_price(&cat.monthly),
                json!({"expires_at": (Utc::now() + bad).to_rfc3339()}),
            ),
        )
        .await;
        r.expect_invalid_at(json!(["body", "expires_at"]));
    }
    let at = Utc::now() + Duration::hours(23);
    let c = created(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"expires_at": at.to_rfc3339()}),
        ),
    )
    .await;
    assert_eq!(ts(&c["expires_at"]).timestamp(), at.timestamp());
    // Only `stripe` as payment processor.
    let r = create(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"payment_processor": "paypal"}),
        ),
    )
    .await;
    r.expect_invalid_at(json!(["body", "payment_processor"]));
}

#[actix_web::test]
async fn a_subscription_purchase_completes_before_confirm_returns() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "purchase").await;
    let c = created(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"discount_id": cat.discount, "metadata": {"campaign": "spring"}}),
        ),
    )
    .await;
    let (id, s) = (id_of(&c), secret(&c));

    // Metadata in the confirm body is ignored, as on a client update.
    let mut body = buyer("ada@example.com");
    body["metadata"] = json!({"evil": true});
    let r = confirm(api, &s, &body).await;
    r.expect(200);
    let body = &r.body;
    assert_public(body, true);
    assert_eq!(body["status"], "confirmed");
    assert_eq!(body["id"], id.as_str());
    assert_token_format(&body["customer_session_token"], "polar_cst_");
    assert_eq!(body["customer_email"], "ada@example.com");
    assert_eq!(body["customer_name"], "Ada Lovelace");
    assert_eq!(body["customer_billing_address"]["country"], "FR");
    assert_eq!(body["subtotal_amount"], 1000);
    let customer_id = body["customer_id"]
        .as_str()
        .unwrap_or_else(|| panic!("confirm names the customer: {body}"))
        .to_string();
    let session = body["customer_session_token"].as_str().unwrap().to_string();

    // A later read shows it succeeded.
    let g = client_get(api, &s).await;
    g.expect(200);
    assert_public(&g.body, false);
    assert_eq!(g.body["status"], "succeeded");
    assert!(g.body.get("customer_session_token").is_none());
    let g = get_by_id(api, &id).await;
    g.expect(200);
    assert_checkout(&g.body);
    assert_eq!(g.body["status"], "succeeded");
    assert_eq!(g.body["customer_id"], customer_id.as_str());
    assert_eq!(
        g.body["payment_processor_metadata"]["intent_status"],
        "succeeded"
    );

    // Not open any more: confirm, update by id and by secret are refused.
    assert_not_open(
        &confirm(api, &s, &buyer("ada@example.com")).await,
        &id,
        "succeeded",
    );
    assert_not_open(
        &update_by_id(api, &id, &json!({"metadata": {"late": true}})).await,
        &id,
        "succeeded",
    );
    assert_not_open(
        &client_update(api, &s, &json!({"customer_name": "Late"})).await,
        &id,
        "succeeded",
    );

    // One redemption, one customer.
    assert_eq!(discount_redemptions(api, &cat.discount).await, 1);
    let (count, emails) = customers(api, &cat.org).await;
    assert_eq!((count, emails), (1, vec!["ada@example.com".to_string()]));

    // The order, the subscription and one key per license-key benefit.
    let store = &app.state.store;
    let p = purchase_of(store, &id).await;
    assert_subscription_purchase(
        &p,
        &id,
        1000,
        &cat.acme_benefit,
        Some(cat.plain_benefit.as_str()),
    );
    assert_eq!(p.order.customer_id.to_string(), customer_id);
    assert_eq!(p.order.metadata.to_json(), json!({"campaign": "spring"}));
    assert_eq!(
        p.order.discount_id.map(|d| d.to_string()),
        Some(cat.discount.clone())
    );
    let sub = p.subscription.as_ref().unwrap();
    assert_eq!(g.body["subscription_id"], sub.id.to_string());
    assert_eq!(store_values::<Order>(store).await.len(), 1);
    assert_eq!(store_values::<Subscription>(store).await.len(), 1);
    assert_eq!(store_values::<LicenseKey>(store).await.len(), 2);
    check_purchase_endpoints(api, &cat.org, &id, &p).await;

    // The customer session token is a bearer token of the customer portal.
    match api.served("/v1/customer-portal/license-keys/").await {
        Some(_) => {
            let r = api
                .get("/v1/customer-portal/license-keys/", Some(&session))
                .await;
            r.expect(200);
            let listed: BTreeSet<String> = r.items().iter().map(id_of).collect();
            let expected: BTreeSet<String> = p.keys.iter().map(|k| k.id.to_string()).collect();
            assert_eq!(listed, expected, "{}", r.body);
            for item in r.items() {
                assert_eq!(item["customer_id"], customer_id.as_str());
            }
            let r = api
                .get(
                    "/v1/customer-portal/license-keys/",
                    Some("polar_cst_garbage"),
                )
                .await;
            r.expect(401);
        }
        // TODO: check the customer portal once GET /v1/customer-portal/license-keys/ is served.
        None => eprintln!("the customer portal key list is not served yet; skipped"),
    }
}

#[actix_web::test]
async fn a_one_time_purchase_creates_an_order_and_keys_without_a_subscription() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "one-time").await;
    let c = created(api, &by_price(&cat.ebook_price)).await;
    let id = id_of(&c);
    let r = confirm(api, &secret(&c), &buyer("reader@example.com")).await;
    r.expect(200);
    assert_eq!(r.body["status"], "confirmed");

    let p = purchase_of(&app.state.store, &id).await;
    assert!(p.subscription.is_none(), "{:#?}", p.subscription);
    let o = &p.order;
    assert_eq!(o.billing_reason, BillingReason::Purchase);
    assert_eq!((o.amount, o.currency.as_str()), (2500, "usd"));
    assert_eq!(o.subscription_id, None);
    assert!(!o.recurring);
    assert_eq!(p.keys.len(), 1);
    let k = &p.keys[0];
    assert_acme_key(k);
    assert_eq!(k.order_id, Some(o.id));
    assert_eq!(k.subscription_id, None);
    assert_eq!(k.benefit_id.to_string(), cat.acme_benefit);
    assert_eq!(k.customer_id, o.customer_id);
    assert!(store_values::<Subscription>(&app.state.store)
        .await
        .is_empty());
    let g = get_by_id(api, &id).await;
    assert_eq!(g.body["status"], "succeeded");
    assert_eq!(g.body["subscription_id"], Value::Null);
    check_purchase_endpoints(api, &cat.org, &id, &p).await;
}

#[actix_web::test]
async fn a_custom_price_is_charged_the_amount_chosen() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "custom-buy").await;
    let c = created(
        api,
        &with(by_price(&cat.tip_price), json!({"amount": 3333})),
    )
    .await;
    let mut body = buyer("tipper@example.com");
    body["amount"] = json!(4000);
    let r = confirm(api, &secret(&c), &body).await;
    r.expect(200);
    assert_eq!(r.body["amount"], 4000);
    let o = purchase_of(&app.state.store, &id_of(&c)).await.order;
    assert_eq!(
        (o.amount, o.billing_reason),
        (4000, BillingReason::Purchase)
    );
}

#[actix_web::test]
async fn a_free_product_confirms_with_an_email_only() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "free").await;
    let c = created(api, &by_price(&cat.free_price)).await;
    let (id, s) = (id_of(&c), secret(&c));

    // The e-mail is still required.
    let r = confirm(api, &s, &json!({})).await;
    let items = r.expect_validation();
    assert_eq!(items.len(), 1, "{}", r.body);
    assert_eq!(items[0]["loc"], json!(["body", "customer_email"]));
    assert_eq!(items[0]["type"], "missing");

    let r = confirm(api, &s, &json!({"customer_email": "free@example.com"})).await;
    r.expect(200);
    assert_public(&r.body, true);
    assert_eq!(r.body["status"], "confirmed");
    assert_token_format(&r.body["customer_session_token"], "polar_cst_");
    assert_eq!(r.body["amount"], 0);
    assert_eq!(client_get(api, &s).await.body["status"], "succeeded");

    let p = purchase_of(&app.state.store, &id).await;
    assert_eq!(p.order.amount, 0);
    assert_eq!(p.order.billing_reason, BillingReason::Purchase);
    assert!(p.subscription.is_none());
    assert_eq!(p.keys.len(), 1);
    assert_acme_key(&p.keys[0]);
    assert_eq!(customers(api, &cat.org).await.0, 1);
}

#[actix_web::test]
async fn the_same_email_in_another_case_reuses_the_customer() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "same-buyer").await;

    let first = created(api, &by_price(&cat.ebook_price)).await;
    let r = confirm(api, &secret(&first), &buyer("Ada@Example.com")).await;
    r.expect(200);
    let customer = r.body["customer_id"].as_str().unwrap().to_string();

    let second = created(api, &by_price(&cat.monthly)).await;
    let r = confirm(api, &secret(&second), &buyer("ada@EXAMPLE.COM")).await;
    r.expect(200);
    assert_eq!(r.body["customer_id"], customer.as_str());

    assert_eq!(customers(api, &cat.org).await.0, 1);
    let a = purchase_of(&app.state.store, &id_of(&first)).await;
    let b = purchase_of(&app.state.store, &id_of(&second)).await;
    assert_eq!(a.order.customer_id.to_string(), customer);
    assert_eq!(b.order.customer_id.to_string(), customer);
    assert_ne!(a.order.id, b.order.id);
    // Each purchase grants its own keys.
    assert_eq!(a.keys.len(), 1);
    assert_eq!(b.keys.len(), 2);
    assert_eq!(store_values::<LicenseKey>(&app.state.store).await.len(), 3);

    // Another organization's buyer with the same e-mail is another customer.
    let cat2 = seed(api, "same-buyer-2").await;
    let third = created(api, &by_price(&cat2.ebook_price)).await;
    let r = confirm(api, &secret(&third), &buyer("ada@example.com")).await;
    r.expect(200);
    assert_ne!(r.body["customer_id"], customer.as_str());
    assert_eq!(customers(api, &cat.org).await.0, 1);
    assert_eq!(customers(api, &cat2.org).await.0, 1);
}

// =======================================================================================
// Expiry, on a manual clock.

#[actix_web::test]
async fn an_open_checkout_expires_after_30_minutes() {
    let start = Utc::now();
    let app = spawn_app_with_clock(start).await;
    let api = app.api();
    let cat = seed(api, "expiry").await;
    let store = &app.state.store;

    let open = created(api, &by_price(&cat.monthly)).await;
    let (id, s) = (id_of(&open), secret(&open));
    assert_eq!(ts(&open["created_at"]), start);
    assert_eq!(ts(&open["expires_at"]), start + Duration::minutes(30));
    let later = created(
        api,
        &with(
            by_price(&cat.monthly),
            json!({"expires_at": (start + Duration::hours(2)).to_rfc3339()}),
        ),
    )
    .await;
    let done = created(api, &by_price(&cat.ebook_price)).await;
    let r = confirm(api, &secret(&done), &buyer("early@example.com")).await;
    r.expect(200);
    let session = r.body["customer_session_token"]
        .as_str()
        .unwrap()
        .to_string();
    let portal = api
        .served("/v1/customer-portal/license-keys/")
        .await
        .is_some();
    if portal {
        api.get("/v1/customer-portal/license-keys/", Some(&session))
            .await
            .expect(200);
    }

    // 29 minutes: still open.
    app.clock.advance(Duration::minutes(29));
    assert_eq!(client_get(api, &s).await.body["status"], "open");

    // 31 minutes.
    app.clock.advance(Duration::minutes(2));
    assert_not_found(&client_get(api, &s).await);
    assert_not_found(&client_update(api, &s, &json!({"customer_name": "x"})).await);
    assert_not_found(&confirm(api, &s, &buyer("late@example.com")).await);
    assert_not_open(
        &update_by_id(api, &id, &json!({"metadata": {"late": 1}})).await,
        &id,
        "expired",
    );
    let g = get_by_id(api, &id).await;
    g.expect(200);
    assert_checkout(&g.body);
    assert_eq!(g.body["status"], "expired");
    assert_eq!(
        g.body["metadata"],
        json!({}),
        "the refused update changed nothing"
    );
    let listed = api
        .read(&format!("{CHECKOUTS}?organization_id={}", cat.org))
        .await;
    let item = listed
        .items()
        .into_iter()
        .find(|c| c["id"] == id.as_str())
        .unwrap();
    assert_eq!(item["status"], "expired");

    // Seen as expired, but only the sweep persists it.
    assert_eq!(
        stored_checkout(store, &id).await.status,
        CheckoutStatus::Open
    );
    let swept = sweep_expired(&app.state).await.expect("sweeping");
    assert_eq!(swept, 1, "only the one open checkout past its expiry");
    assert_eq!(
        stored_checkout(store, &id).await.status,
        CheckoutStatus::Expired
    );
    assert_eq!(sweep_expired(&app.state).await.expect("sweeping"), 0);
    assert_eq!(get_by_id(api, &id).await.body["status"], "expired");
    assert_not_open(&update_by_id(api, &id, &json!({})).await, &id, "expired");

    // A checkout with a later expiry is untouched.
    let l = client_get(api, &secret(&later)).await;
    l.expect(200);
    assert_eq!(l.body["status"], "open");
    assert_eq!(
        stored_checkout(store, &id_of(&later)).await.status,
        CheckoutStatus::Open
    );

    // A succeeded checkout stays succeeded; its client secret is no longer served.
    let d = get_by_id(api, &id_of(&done)).await;
    assert_eq!(d.body["status"], "succeeded");
    assert_not_found(&client_get(api, &secret(&done)).await);
    assert_eq!(
        stored_checkout(store, &id_of(&done)).await.status,
        CheckoutStatus::Succeeded
    );

    // The customer session lasts one hour.
    app.clock.advance(Duration::minutes(30));
    if portal {
        let r = api
            .get("/v1/customer-portal/license-keys/", Some(&session))
            .await;
        assert_eq!(r.status, 401, "an expired customer session: {}", r.body);
    }
    // Two hours in, the later one expires too.
    app.clock.advance(Duration::minutes(60));
    assert_not_found(&client_get(api, &secret(&later)).await);
    assert_eq!(sweep_expired(&app.state).await.expect("sweeping"), 1);
    assert_eq!(
        stored_checkout(store, &id_of(&later)).await.status,
        CheckoutStatus::Expired
    );
}

#[actix_web::test]
async fn a_checkout_is_expired_from_the_instant_of_its_expires_at() {
    let start = Utc::now();
    let app = spawn_app_with_clock(start).await;
    let api = app.api();
    let cat = seed(api, "boundary").await;
    let c = created(api, &by_price(&cat.ebook_price)).await;
    let id = id_of(&c);

    app.clock
        .advance(Duration::minutes(30) - Duration::microseconds(1));
    assert_eq!(client_get(api, &secret(&c)).await.body["status"], "open");
    assert_eq!(sweep_expired(&app.state).await.expect("sweeping"), 0);

    app.clock.advance(Duration::microseconds(1));
    assert_not_found(&client_get(api, &secret(&c)).await);
    assert_eq!(get_by_id(api, &id).await.body["status"], "expired");
    assert_eq!(
        sweep_expired(&app.state).await.expect("sweeping"),
        1,
        "the sweep persists what reads already show"
    );
    assert_eq!(
        stored_checkout(&app.state.store, &id).await.status,
        CheckoutStatus::Expired
    );
}

// =======================================================================================
// Concurrency.

#[actix_web::test]
async fn concurrent_confirms_of_one_checkout_settle_it_once() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "race").await;
    let c = created(
        api,
        &with(by_price(&cat.monthly), json!({"discount_id": cat.discount})),
    )
    .await;
    let (id, s) = (id_of(&c), secret(&c));

    let body = buyer("racer@example.com");
    let replies = join_all((0..10).map(|_| confirm(api, &s, &body))).await;
    let ok: Vec<&Reply> = replies.iter().filter(|r| r.status == 200).collect();
    assert_eq!(
        ok.len(),
        1,
        "exactly one confirm succeeds: {:?}",
        replies
            .iter()
            .map(|r| (r.status, &r.body))
            .collect::<Vec<_>>()
    );
    assert_public(&ok[0].body, true);
    for r in replies.iter().filter(|r| r.status != 200) {
        match r.status.as_u16() {
            403 => {
                assert_eq!(r.body["error"], "NotOpenCheckout", "{}", r.body);
                let detail = r.body["detail"].as_str().unwrap();
                assert!(
                    detail == format!("Checkout {id} is not open: confirmed")
                        || detail == format!("Checkout {id} is not open: succeeded"),
                    "{detail}"
                );
            }
            409 | 422 => {}
            other => panic!("unexpected {other}: {}", r.body),
        }
    }

    assert_eq!(client_get(api, &s).await.body["status"], "succeeded");
    let store = &app.state.store;
    let p = purchase_of(store, &id).await;
    assert_subscription_purchase(
        &p,
        &id,
        1000,
        &cat.acme_benefit,
        Some(cat.plain_benefit.as_str()),
    );
    assert_eq!(store_values::<Order>(store).await.len(), 1);
    assert_eq!(store_values::<Subscription>(store).await.len(), 1);
    assert_eq!(store_values::<LicenseKey>(store).await.len(), 2);
    assert_eq!(customers(api, &cat.org).await.0, 1);
    assert_eq!(discount_redemptions(api, &cat.discount).await, 1);
}

#[actix_web::test]
async fn concurrent_purchases_by_one_buyer_create_one_customer() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "same-time").await;
    let mut secrets = Vec::new();
    for _ in 0..6 {
        secrets.push(secret(&created(api, &by_price(&cat.ebook_price)).await));
    }
    let emails = ["Same@Example.com", "same@example.com", "SAME@EXAMPLE.COM"];
    let bodies: Vec<Value> = (0..secrets.len())
        .map(|i| buyer(emails[i % emails.len()]))
        .collect();
    let replies = join_all(
        secrets
            .iter()
            .zip(&bodies)
            .map(|(s, body)| confirm(api, s, body)),
    )
    .await;
    for r in &replies {
        r.expect(200);
    }
    let customer_ids: BTreeSet<&str> = replies
        .iter()
        .map(|r| r.body["customer_id"].as_str().unwrap())
        .collect();
    assert_eq!(customer_ids.len(), 1, "one customer for one e-mail");
    assert_eq!(customers(api, &cat.org).await.0, 1);
    assert_eq!(
        store_values::<Order>(&app.state.store).await.len(),
        secrets.len()
    );
}

/// The key a purchase grants validates as soon as confirm has answered, without
/// credentials, and counts the validation.
#[actix_web::test]
async fn the_granted_key_validates_the_moment_confirm_returns() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "validate-now").await;
    let c = created(api, &by_price(&cat.monthly)).await;
    confirm(api, &secret(&c), &buyer("fast@example.com"))
        .await
        .expect(200);
    let p = purchase_of(&app.state.store, &id_of(&c)).await;
    let key = &p.keys[0];
    let body = json!({"key": key.key, "organization_id": cat.org});
    let r = app
        .post_json("/v1/customer-portal/license-keys/validate", None, &body)
        .await;
    r.expect(200);
    assert_eq!(r.body["id"], key.id.to_string());
    assert_eq!(r.body["validations"], 1);
    assert_eq!(r.body["status"], "granted");
    // The organizer sees the same key, counted.
    let got = app
        .get(&format!("/v1/license-keys/{}", key.id), Some(&app.token))
        .await;
    got.expect(200);
    assert_eq!(got.body["validations"], 1);
}

// ---------------------------------------------------------------------------------------
// Checkouts left confirmed.

/// The orders of `checkout`, and the license keys of their customers.
async fn purchase_counts(api: Api<'_>, org: &str, checkout: &str) -> (usize, usize) {
    let orders = api
        .read(&format!("/v1/orders/?organization_id={org}&limit=100"))
        .await;
    orders.expect(200);
    let mine: Vec<Value> = orders
        .items()
        .into_iter()
        .filter(|o| o["checkout_id"] == checkout)
        .collect();
    let keys = api
        .read(&format!("/v1/license-keys?organization_id={org}&limit=100"))
        .await;
    keys.expect(200);
    // Each test buyer buys once: their keys are this purchase's.
    let customers: Vec<&Value> = mine.iter().map(|o| &o["customer_id"]).collect();
    let key_count = keys
        .items()
        .iter()
        .filter(|k| customers.contains(&&k["customer_id"]))
        .count();
    (mine.len(), key_count)
}

#[actix_web::test]
async fn a_checkout_the_processor_did_not_answer_is_completed_by_a_sweep_after_the_grace() {
    let app = spawn_app_with_clock(Utc::now()).await;
    let api = app.api();
    let cat = seed(api, "outage").await;
    let c = created(api, &by_price(&cat.ebook_price)).await;
    let id = c["id"].as_str().expect("an id").to_string();
    let mut card = buyer("ada@example.com");
    card["confirmation_token_id"] = json!(tollgate::payments::UNAVAILABLE_ONCE);
    // The processor does not answer: 503, and the checkout stays confirmed (paid for or
    // not, nobody knows yet).
    confirm(api, &secret(&c), &card).await.expect(503);
    assert_eq!(get_by_id(api, &id).await.body["status"], "confirmed");

    // Within the grace a confirm may still be under way: left alone.
    let complete = || tollgate::app::checkout::complete_stale_confirmed(&app.state);
    assert_eq!(complete().await.unwrap(), 0);
    app.clock.advance(Duration::seconds(30));
    assert_eq!(complete().await.unwrap(), 0);
    assert_eq!(get_by_id(api, &id).await.body["status"], "confirmed");

    // Past it: the sweep charges again under the same idempotency key and completes it,
    // once.
    app.clock.advance(Duration::seconds(31));
    assert_eq!(complete().await.unwrap(), 1);
    assert_eq!(get_by_id(api, &id).await.body["status"], "succeeded");
    assert_eq!(purchase_counts(api, &cat.org, &id).await, (1, 1));
    assert_eq!(complete().await.unwrap(), 0);
    assert_eq!(purchase_counts(api, &cat.org, &id).await, (1, 1));
}

#[actix_web::test]
async fn the_background_sweep_completes_checkouts_left_confirmed() {
    let dir = tempfile::tempdir().expect("a data directory");
    let mut settings = Settings::for_tests(dir.path());
    settings.jobs.sweep_interval_secs = 1;
    settings.jobs.confirmed_grace_secs = 0;
    let app =
        crate::helpers::spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let api = Api::of(&app);
    let cat = seed(api, "outage-sweep").await;
    let c = created(api, &by_price(&cat.ebook_price)).await;
    let id = c["id"].as_str().expect("an id").to_string();
    let mut card = buyer("grace@example.com");
    card["confirmation_token_id"] = json!(tollgate::payments::UNAVAILABLE_ONCE);
    confirm(api, &secret(&c), &card).await.expect(503);
    // Polled (bounded): the sweep runs every second.
    let mut status = Value::Null;
    for _ in 0..100 {
        status = get_by_id(api, &id).await.body["status"].clone();
        if status == "succeeded" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, "succeeded");
    assert_eq!(purchase_counts(api, &cat.org, &id).await, (1, 1));
}
