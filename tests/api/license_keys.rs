//! License keys, organizer side (reference 3.4 and 9.3), tenancy, and crash safety of the
//! counters (`kill -9` of the real binary).
//!
//! Keys are granted by checkout completion, which writes `LicenseKey` records straight to
//! the store. These tests do the same ([`grant_key`]): organization, benefit and customer
//! through the API, the key record through the store, built from the benefit's properties
//! as a checkout would.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use actix_web::dev::ServerHandle;
use actix_web::rt::time::sleep;
use actix_web::web;
use chrono::{DateTime, Months, Utc};
use futures_util::future::{join, join_all};
use reqwest::Method;
use serde_json::{json, Value};
use tempfile::TempDir;
use tollgate::auth::service::{create_user, issue_pat, new_user};
use tollgate::auth::tokens::{generate, CUSTOMER_SESSION_PREFIX};
use tollgate::auth::{Scope, ScopeSet};
use tollgate::bootstrap::TOKEN_FILE;
use tollgate::config::Settings;
use tollgate::domain::benefit::{Benefit, BenefitProperties, Timeframe};
use tollgate::domain::customer_session::CustomerSession;
use tollgate::domain::ids::{
    BenefitId, CustomerId, CustomerSessionId, LicenseKeyId, OrganizationId,
};
use tollgate::startup::Application;
use tollgate::state::AppState;
use tollgate_actors::license_key::{generate_key, KeyStatus, LicenseKey};
use tollgate_actors::SharedClock;
use tollgate_storage::{Batch, Expect, Store, StoreConfig};

use crate::binary::Binary;
use crate::helpers::{assert_utc_timestamp, client, Reply};

// ---------------------------------------------------------------------------------------
// Harness (shared with `customer_portal_keys`)
// ---------------------------------------------------------------------------------------

/// The real application on a free port over its own data directory, optionally with a
/// manual clock.
pub struct KeyApp {
    pub address: String,
    pub client: reqwest::Client,
    /// The bootstrap admin's token (every scope).
    pub token: String,
    pub state: web::Data<AppState>,
    handle: ServerHandle,
    _dir: TempDir,
}

impl Drop for KeyApp {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
    }
}

pub async fn spawn(clock: Option<SharedClock>) -> KeyApp {
    let dir = tempfile::tempdir().expect("creating the data directory");
    let settings = Settings::for_tests(dir.path());
    let app = match clock {
        Some(clock) => Application::build_with_clock(settings, clock).await,
        None => Application::build(settings).await,
    }
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
    KeyApp {
        address: format!("http://127.0.0.1:{port}"),
        client: client(),
        token,
        state,
        handle,
        _dir: dir,
    }
}

impl KeyApp {
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Reply {
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.address));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.json(b);
        }
        crate::helpers::send_checked(req).await
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        self.call(Method::GET, path, token, None).await
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: &Value) -> Reply {
        self.call(Method::POST, path, token, Some(body)).await
    }

    pub async fn patch(&self, path: &str, token: Option<&str>, body: &Value) -> Reply {
        self.call(Method::PATCH, path, token, Some(body)).await
    }

    /// A new user with one personal access token holding `scopes`.
    pub async fn user_with_scopes(&self, email: &str, scopes: &[Scope]) -> String {
        let user = new_user(email, None, false, Utc::now());
        create_user(&self.state.store, &user)
            .await
            .expect("creating a user");
        let scopes: ScopeSet = scopes.iter().copied().collect();
        let (_, token) = issue_pat(
            &self.state.store,
            &self.state.hasher,
            user.id,
            scopes,
            "test",
            None,
        )
        .await
        .expect("issuing a token");
        token
    }

    /// A customer session token (`polar_cst_`) for a customer, as checkout confirm issues.
    pub async fn customer_session(&self, org: &str, customer: &str) -> String {
        let token = generate(CUSTOMER_SESSION_PREFIX, 32);
        let now = self.state.now();
        let session = CustomerSession {
            id: CustomerSessionId::new(),
            customer_id: customer.parse().unwrap(),
            organization_id: org.parse().unwrap(),
            token_hash: self.state.hasher.hash(&token).to_vec(),
            created_at: now,
            expires_at: now + chrono::Duration::hours(1),
            purchase: None,
        };
        let mut batch = Batch::new();
        batch.put(&session, Expect::Absent).unwrap();
        self.state.store.commit_durable(&batch).await.unwrap();
        token
    }

    /// An organization (owned by the bootstrap admin); returns its id.
    pub async fn org(&self, slug: &str) -> String {
        let r = self
            .post(
                "/v1/organizations/",
                Some(&self.token),
                &json!({"name": slug, "slug": slug}),
            )
            .await;
        r.expect(201);
        r.id()
    }

    /// A license-key benefit with these `properties`; returns its id.
    pub async fn key_benefit(&self, org: &str, properties: Value) -> String {
        let r = self
            .post(
                "/v1/benefits/",
                Some(&self.token),
                &json!({
                    "type": "license_keys",
                    "description": "License key",
                    "organization_id": org,
                    "properties": properties,
                }),
            )
            .await;
        r.expect(201);
        r.id()
    }

    pub async fn customer(&self, org: &str, email: &str) -> String {
        let r = self
            .post(
                "/v1/customers/",
                Some(&self.token),
                &json!({"email": email, "name": "Jane Buyer", "organization_id": org}),
            )
            .await;
        r.expect(201);
        r.id()
    }

    /// Grants a key of `benefit` to `customer`, as checkout completion does.
    pub async fn grant(&self, org: &str, benefit: &str, customer: &str) -> LicenseKey {
        let key = grant_key(&self.state.store, self.state.now(), org, benefit, customer).await;
        let mut batch = Batch::new();
        batch.put(&key, Expect::Absent).unwrap();
        self.state.store.commit_durable(&batch).await.unwrap();
        key
    }

    /// Organization, benefit with `properties`, customer and one key of it.
    pub async fn seeded(&self, slug: &str, properties: Value) -> Seeded {
        let org = self.org(slug).await;
        let benefit = self.key_benefit(&org, properties).await;
        let customer = self.customer(&org, &format!("buyer@{slug}.example")).await;
        let key = self.grant(&org, &benefit, &customer).await;
        Seeded {
            org,
            benefit,
            customer,
            key,
        }
    }

    pub async fn validate(&self, body: &Value) -> Reply {
        self.post("/v1/customer-portal/license-keys/validate", None, body)
            .await
    }

    pub async fn activate(&self, body: &Value) -> Reply {
        self.post("/v1/customer-portal/license-keys/activate", None, body)
            .await
    }

    pub async fn deactivate(&self, body: &Value) -> Reply {
        self.post("/v1/customer-portal/license-keys/deactivate", None, body)
            .await
    }
}

pub struct Seeded {
    pub org: String,
    pub benefit: String,
    pub customer: String,
    pub key: LicenseKey,
}

impl Seeded {
    /// `{key, organization_id}` plus `extra`.
    pub fn body(&self, extra: Value) -> Value {
        let mut b = json!({"key": self.key.key, "organization_id": self.org});
        if let (Some(b), Value::Object(extra)) = (b.as_object_mut(), extra) {
            b.extend(extra);
        }
        b
    }
}

/// The key a checkout grants for this benefit (reference 3.2), built from the benefit's
/// stored properties.
pub async fn grant_key(
    store: &Store,
    now: DateTime<Utc>,
    org: &str,
    benefit: &str,
    customer: &str,
) -> LicenseKey {
    let benefit_id: BenefitId = benefit.parse().unwrap();
    let stored = store
        .get::<Benefit>(&benefit_id.key())
        .await
        .unwrap()
        .expect("the benefit");
    let BenefitProperties::LicenseKeys(props) = stored.value.properties else {
        panic!("not a license-key benefit");
    };
    let expires_at = props.expires.map(|e| match e.timeframe {
        Timeframe::Day => now + chrono::Duration::days(e.ttl),
        Timeframe::Month => now.checked_add_months(Months::new(e.ttl as u32)).unwrap(),
        Timeframe::Year => now
            .checked_add_months(Months::new(12 * e.ttl as u32))
            .unwrap(),
    });
    LicenseKey {
        id: LicenseKeyId::new(),
        organization_id: org.parse::<OrganizationId>().unwrap(),
        customer_id: customer.parse::<CustomerId>().unwrap(),
        benefit_id,
        created_at: now,
        modified_at: None,
        key: generate_key(props.prefix.as_deref()),
        status: KeyStatus::Granted,
        limit_activations: props.activations.map(|a| a.limit),
        usage: 0,
        limit_usage: props.limit_usage,
        validations: 0,
        last_validated_at: None,
        expires_at,
        activations: Vec::new(),
        subscription_id: None,
        order_id: None,
        paid_until: None,
        allow_replacement: props.activations.is_some_and(|a| a.allow_replacement),
        replacements: Vec::new(),
    }
}

/// Every key of `LicenseKeyRead` (clients.md §4): required ones non-null, nullable ones
/// present; the nested user and customer with theirs; display_key and timestamps right.
#[track_caller]
pub fn assert_key_shape(v: &Value) {
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"));
    for k in [
        "id",
        "organization_id",
        "user_id",
        "customer_id",
        "user",
        "customer",
        "benefit_id",
        "key",
        "display_key",
        "status",
        "usage",
        "validations",
    ] {
        assert!(
            obj.get(k).is_some_and(|x| !x.is_null()),
            "missing or null {k} in {v}"
        );
    }
    for k in [
        "limit_activations",
        "limit_usage",
        "last_validated_at",
        "expires_at",
    ] {
        assert!(obj.contains_key(k), "missing {k} in {v}");
    }
    for k in ["last_validated_at", "expires_at"] {
        if !v[k].is_null() {
            assert_utc_timestamp(&v[k]);
        }
    }
    assert!(matches!(
        v["status"].as_str(),
        Some("granted" | "revoked" | "disabled")
    ));
    assert!(v["usage"].is_i64() && v["validations"].is_i64());
    let key = v["key"].as_str().unwrap();
    assert_eq!(v["display_key"], format!("****-{}", &key[key.len() - 6..]));
    assert_eq!(v["user_id"], v["customer_id"]);
    for k in ["id", "email", "public_name"] {
        assert!(v["user"][k].is_string(), "user.{k} in {v}");
    }
    assert!(v["user"].get("github_username").is_none());
    let c = &v["customer"];
    for k in [
        "id",
        "created_at",
        "metadata",
        "email",
        "email_verified",
        "organization_id",
        "avatar_url",
    ] {
        assert!(
            c.get(k).is_some_and(|x| !x.is_null()),
            "customer.{k} in {v}"
        );
    }
    for k in ["modified_at", "name", "billing_address", "tax_id"] {
        assert!(
            c.as_object().unwrap().contains_key(k),
            "customer.{k} in {v}"
        );
    }
    assert_eq!(c["id"], v["customer_id"]);
    assert_utc_timestamp(&c["created_at"]);
}

/// `LicenseKeyActivationBase`.
#[track_caller]
pub fn assert_activation_shape(v: &Value) {
    for k in ["id", "license_key_id", "label", "meta", "created_at"] {
        assert!(v.get(k).is_some_and(|x| !x.is_null()), "missing {k} in {v}");
    }
    assert!(v.as_object().unwrap().contains_key("modified_at"));
    assert!(v["meta"].is_object());
    assert!(
        v.get("conditions").is_none(),
        "conditions are never shown: {v}"
    );
    assert_utc_timestamp(&v["created_at"]);
}

// ---------------------------------------------------------------------------------------
// Reference 9.3
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn get_unknown_or_anonymous() {
    let app = spawn(None).await;
    let r = app
        .get(
            &format!("/v1/license-keys/{}", uuid::Uuid::new_v4()),
            Some(&app.token),
        )
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    assert_eq!(r.body["detail"], "Not found");
    let s = app.seeded("anon", json!({"prefix": "testing"})).await;
    let r = app
        .get(&format!("/v1/license-keys/{}", s.key.id), None)
        .await;
    assert_eq!(r.expect_error(401), "Unauthorized");
    let r = app
        .get("/v1/license-keys/not-a-uuid", Some(&app.token))
        .await;
    r.expect_invalid_at(json!(["path", "id"]));
}

#[actix_web::test]
async fn get_as_a_member_has_every_field() {
    let app = spawn(None).await;
    let s = app
        .seeded(
            "member",
            json!({"prefix": "testing", "activations": {"limit": 2, "enable_customer_admin": false}, "limit_usage": 7}),
        )
        .await;
    let r = app
        .get(&format!("/v1/license-keys/{}", s.key.id), Some(&app.token))
        .await;
    r.expect(200);
    let v = &r.body;
    assert_key_shape(v);
    assert_eq!(v["benefit_id"], s.benefit.as_str());
    assert_eq!(v["organization_id"], s.org.as_str());
    assert_eq!(v["customer_id"], s.customer.as_str());
    assert!(v["key"].as_str().unwrap().starts_with("TESTING-"));
    assert_eq!(v["key"].as_str().unwrap().len(), "TESTING-".len() + 36);
    assert_eq!(v["status"], "granted");
    assert_eq!(v["limit_activations"], 2);
    assert_eq!(v["limit_usage"], 7);
    assert_eq!(
        (v["usage"].as_i64(), v["validations"].as_i64()),
        (Some(0), Some(0))
    );
    assert!(v["last_validated_at"].is_null() && v["expires_at"].is_null());
    assert_eq!(v["activations"], json!([]));
    assert_eq!(v["customer"]["email"], "buyer@member.example");
    assert_eq!(v["user"]["public_name"], "J");
}

#[actix_web::test]
async fn patch_echoes_and_null_clears() {
    let app = spawn(None).await;
    let s = app
        .seeded(
            "patching",
            json!({"expires": {"ttl": 1, "timeframe": "year"}, "limit_usage": 3}),
        )
        .await;
    let path = format!("/v1/license-keys/{}", s.key.id);
    let expires_at = "2031-05-06T07:08:09Z";
    let r = app
        .patch(
            &path,
            Some(&app.token),
            &json!({"usage": 4, "limit_usage": 10, "limit_activations": 5, "expires_at": expires_at}),
        )
        .await;
    r.expect(200);
    assert_key_shape(&r.body);
    assert_eq!(r.body["usage"], 4);
    assert_eq!(r.body["limit_usage"], 10);
    assert_eq!(r.body["limit_activations"], 5);
    assert_eq!(r.body["expires_at"], expires_at);
    // LicenseKeyRead: no activations key.
    assert!(r.body.get("activations").is_none());

    // Usage may exceed the limit; null clears; absent fields stay.
    let r = app
        .patch(
            &path,
            Some(&app.token),
            &json!({"usage": 40, "limit_usage": null, "expires_at": null}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["usage"], 40);
    assert!(r.body["limit_usage"].is_null() && r.body["expires_at"].is_null());
    assert_eq!(r.body["limit_activations"], 5);

    let r = app
        .patch(&path, Some(&app.token), &json!({"status": "disabled"}))
        .await;
    assert_eq!(r.expect(200).body["status"], "disabled");
    let r = app.validate(&s.body(json!({}))).await;
    r.expect_error(404);
    assert_eq!(r.body["detail"], "License key is no longer active.");
    let r = app
        .patch(&path, Some(&app.token), &json!({"status": "granted"}))
        .await;
    r.expect(200);
    app.validate(&s.body(json!({}))).await.expect(200);

    // pydantic's checks, every field at once.
    let r = app
        .patch(
            &path,
            Some(&app.token),
            &json!({"limit_activations": 51, "limit_usage": 0, "status": "paused", "usage": "x"}),
        )
        .await;
    let items = r.expect_validation();
    assert_eq!(items.len(), 4, "{}", r.body);
    let item = r.expect_invalid_at(json!(["body", "limit_activations"]));
    assert_eq!(item["msg"], "Input should be less than or equal to 50");
    let item = r.expect_invalid_at(json!(["body", "limit_usage"]));
    assert_eq!(item["msg"], "Input should be greater than 0");
    // Nothing was applied.
    let r = app.get(&path, Some(&app.token)).await;
    assert_eq!(r.body["usage"], 40);
    let r = app
        .patch(
            &format!("/v1/license-keys/{}", uuid::Uuid::new_v4()),
            Some(&app.token),
            &json!({}),
        )
        .await;
    r.expect_error(404);
}

#[actix_web::test]
async fn list_counts_filters_and_pages_in_creation_order() {
    let app = spawn(None).await;
    let s = app.seeded("listing", json!({"prefix": "testing"})).await;
    let other_benefit = app.key_benefit(&s.org, json!({})).await;
    let mut ids = vec![s.key.id.to_string()];
    for i in 0..4 {
        let benefit = if i % 2 == 0 {
            &other_benefit
        } else {
            &s.benefit
        };
        ids.push(app.grant(&s.org, benefit, &s.customer).await.id.to_string());
    }
    // Another organization's keys never show.
    app.seeded("listing-other", json!({})).await;

    let r = app
        .get(
            &format!("/v1/license-keys?organization_id={}", s.org),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    assert_eq!(r.total_count(), 5);
    let listed: Vec<String> = r
        .items()
        .iter()
        .map(|k| k["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, ids, "created_at ascending");
    for item in r.items() {
        assert_key_shape(&item);
        assert!(item.get("activations").is_none());
    }
    let r = app
        .get(
            &format!("/v1/license-keys?organization_id={}&limit=2&page=3", s.org),
            Some(&app.token),
        )
        .await;
    assert_eq!((r.total_count(), r.max_page(), r.items().len()), (5, 3, 1));
    assert_eq!(r.items()[0]["id"], ids[4].as_str());

    let r = app
        .get(
            &format!("/v1/license-keys?benefit_id={other_benefit}"),
            Some(&app.token),
        )
        .await;
    assert_eq!(r.total_count(), 2);
    let r = app
        .get(
            &format!(
                "/v1/license-keys?benefit_id={other_benefit}&benefit_id={}",
                s.benefit
            ),
            Some(&app.token),
        )
        .await;
    assert_eq!(r.total_count(), 5);
    // Without a filter: every reachable organization (this admin has both).
    let r = app.get("/v1/license-keys", Some(&app.token)).await;
    assert_eq!(r.total_count(), 6);
    // With a trailing slash (today's clients): the same list, answered directly (no
    // redirect, which polar-sdk 1.0 would not follow).
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let resp = no_redirects
        .get(format!("{}/v1/license-keys/", app.address))
        .bearer_auth(&app.token)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let r = app.get("/v1/license-keys/", Some(&app.token)).await;
    assert_eq!(r.total_count(), 6);
    let r = app
        .get("/v1/license-keys?benefit_id=nope", Some(&app.token))
        .await;
    r.expect_invalid_at(json!(["query", "benefit_id"]));
}

#[actix_web::test]
async fn activation_through_the_legacy_path_then_get_activation() {
    let app = spawn(None).await;
    let s = app
        .seeded(
            "acts",
            json!({"activations": {"limit": 2, "enable_customer_admin": false}}),
        )
        .await;
    let r = app
        .post(
            "/v1/users/license-keys/activate",
            None,
            &s.body(json!({"label": "laptop", "meta": {"os": "linux"}})),
        )
        .await;
    r.expect(200);
    let activation = r.id();
    let path = format!("/v1/license-keys/{}/activations/{activation}", s.key.id);
    let r = app.get(&path, Some(&app.token)).await;
    r.expect(200);
    assert_activation_shape(&r.body);
    assert_eq!(r.body["license_key"]["id"], s.key.id.to_string());
    assert_eq!(r.body["license_key_id"], s.key.id.to_string());
    assert_eq!(r.body["meta"], json!({"os": "linux"}));
    assert_key_shape(&r.body["license_key"]);
    // The key lists it.
    let r = app
        .get(&format!("/v1/license-keys/{}", s.key.id), Some(&app.token))
        .await;
    let acts = r.body["activations"].as_array().unwrap().clone();
    assert_eq!(acts.len(), 1);
    assert_activation_shape(&acts[0]);
    // Unknown activation, or another key's → 404.
    let r = app
        .get(
            &format!(
                "/v1/license-keys/{}/activations/{}",
                s.key.id,
                uuid::Uuid::new_v4()
            ),
            Some(&app.token),
        )
        .await;
    assert_eq!(r.body["detail"], "Not found");
    r.expect_error(404);
    let other = app.grant(&s.org, &s.benefit, &s.customer).await;
    app.get(
        &format!("/v1/license-keys/{}/activations/{activation}", other.id),
        Some(&app.token),
    )
    .await
    .expect_error(404);
    // Deactivated: gone everywhere.
    app.deactivate(&s.body(json!({"activation_id": activation})))
        .await
        .expect(204);
    app.get(&path, Some(&app.token)).await.expect_error(404);
    let r = app
        .get(&format!("/v1/license-keys/{}", s.key.id), Some(&app.token))
        .await;
    assert_eq!(r.body["activations"], json!([]));
}

// ---------------------------------------------------------------------------------------
// Tenancy
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn another_organizations_key_is_not_found_and_scopes_are_enforced() {
    let app = spawn(None).await;
    let s = app
        .seeded(
            "tenant-a",
            json!({"activations": {"limit": 1, "enable_customer_admin": true}}),
        )
        .await;
    let act = app.activate(&s.body(json!({"label": "x"}))).await;
    act.expect(200);
    let activation = act.id();
    let key_path = format!("/v1/license-keys/{}", s.key.id);

    // A user of another organization, with every license-key scope.
    let outsider = app
        .user_with_scopes(
            "outsider@example.com",
            &[Scope::LicenseKeysRead, Scope::LicenseKeysWrite],
        )
        .await;
    for r in [
        app.get(&key_path, Some(&outsider)).await,
        app.patch(&key_path, Some(&outsider), &json!({"usage": 1}))
            .await,
        app.get(
            &format!("{key_path}/activations/{activation}"),
            Some(&outsider),
        )
        .await,
    ] {
        assert_eq!(r.expect_error(404), "ResourceNotFound");
        assert_eq!(r.body["detail"], "Not found");
    }
    let r = app
        .get(
            &format!("/v1/license-keys?organization_id={}", s.org),
            Some(&outsider),
        )
        .await;
    assert_eq!(r.total_count(), 0);
    let r = app
        .get(
            &format!("/v1/license-keys?benefit_id={}", s.benefit),
            Some(&outsider),
        )
        .await;
    assert_eq!(r.total_count(), 0);
    // The key is untouched.
    let r = app.get(&key_path, Some(&app.token)).await;
    assert_eq!(r.body["usage"], 0);

    // Missing scope → 403 insufficient_scope; read scope cannot write.
    let wrong = app
        .user_with_scopes("orders@example.com", &[Scope::OrdersRead])
        .await;
    let r = app.get(&key_path, Some(&wrong)).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    assert!(r.www_authenticate().contains("license_keys:read"));
    let r = app.get("/v1/license-keys", Some(&wrong)).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    let reader = app
        .user_with_scopes("reader@example.com", &[Scope::LicenseKeysRead])
        .await;
    let r = app
        .patch(&key_path, Some(&reader), &json!({"usage": 1}))
        .await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    // A bad token → 401.
    let r = app.get(&key_path, Some("polar_pat_nope")).await;
    assert_eq!(r.expect_error(401), "invalid_token");
    // A customer session is not an organizer.
    let cst = app.customer_session(&s.org, &s.customer).await;
    let r = app.get(&key_path, Some(&cst)).await;
    r.expect_error(401);
}

// ---------------------------------------------------------------------------------------
// Concurrency over HTTP
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn fifty_parallel_increments_against_a_limit_of_ten() {
    let app = spawn(None).await;
    let s = app.seeded("parallel", json!({"limit_usage": 10})).await;
    let body = s.body(json!({"increment_usage": 1}));
    let replies = join_all((0..50).map(|_| app.validate(&body))).await;
    let ok = replies.iter().filter(|r| r.status == 200).count();
    let refused: Vec<&Reply> = replies.iter().filter(|r| r.status == 400).collect();
    assert_eq!((ok, refused.len()), (10, 40));
    for r in refused {
        assert_eq!(r.body["error"], "BadRequest");
        assert_eq!(r.body["detail"], "License key only has 0 more usages.");
    }
    let mut usages: Vec<i64> = replies
        .iter()
        .filter(|r| r.status == 200)
        .map(|r| r.body["usage"].as_i64().unwrap())
        .collect();
    usages.sort_unstable();
    assert_eq!(usages, (1..=10).collect::<Vec<_>>());
    let r = app
        .get(&format!("/v1/license-keys/{}", s.key.id), Some(&app.token))
        .await;
    assert_eq!(
        (r.body["usage"].as_i64(), r.body["validations"].as_i64()),
        (Some(10), Some(10))
    );
}

// ---------------------------------------------------------------------------------------
// kill -9 of the real binary
// ---------------------------------------------------------------------------------------

const READY_DEADLINE: Duration = Duration::from_secs(20);
const EXIT_DEADLINE: Duration = Duration::from_secs(20);

/// Starts the binary over `data`, logging to `root/server-<run>.log`, and waits until it is
/// ready. Strict counters: these tests hold every answered validation to be durable
/// (batched mode has its own tests in `validation_crash.rs`).
async fn start(root: &Path, data: &Path, run: u32) -> Binary {
    Binary::start(
        root,
        data,
        &format!("server-{run}.log"),
        &[
            ("TOLLGATE__LOG__LEVEL", "warn"),
            ("TOLLGATE__LICENSE_KEYS__STATS_FLUSH_MS", "0"),
        ],
        READY_DEADLINE,
    )
    .await
}

/// SIGTERM, then wait for the process to exit.
async fn terminate(p: &mut Binary) {
    p.sigterm();
    p.wait_exit(EXIT_DEADLINE).await;
}

/// One request to the binary `p`.
async fn call(
    p: &Binary,
    client: &reqwest::Client,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> reqwest::Result<Reply> {
    let mut req = client.request(method, format!("{}{path}", p.address));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.json(b);
    }
    Ok(Reply::read(req.send().await?).await)
}

/// Keys seeded into a stopped server's store: organization, benefit and customer through
/// the API, then the keys written to the store while no server holds it.
async fn seed_offline(root: &Path, data: &Path, keys: usize) -> (String, Vec<LicenseKey>) {
    let mut p = start(root, data, 0).await;
    let token = std::fs::read_to_string(data.join(TOKEN_FILE))
        .unwrap()
        .trim()
        .to_string();
    let c = client();
    let org = call(
        &p,
        &c,
        Method::POST,
        "/v1/organizations/",
        Some(&token),
        Some(&json!({"name": "Crash", "slug": "crash"})),
    )
    .await
    .unwrap();
    org.expect(201);
    let org = org.id();
    let benefit = call(
        &p,
        &c,
        Method::POST,
        "/v1/benefits/",
        Some(&token),
        Some(
            &json!({"type": "license_keys", "description": "Crash keys", "organization_id": org,
                "properties": {"activations": {"limit": 50, "enable_customer_admin": true}}}),
        ),
    )
    .await
    .unwrap();
    benefit.expect(201);
    let customer = call(
        &p,
        &c,
        Method::POST,
        "/v1/customers/",
        Some(&token),
        Some(&json!({"email": "c@crash.example", "organization_id": org})),
    )
    .await
    .unwrap();
    customer.expect(201);
    terminate(&mut p).await;
    drop(p);

    let store = Store::open(&StoreConfig::new(data)).expect("opening the stopped server's store");
    let mut granted = Vec::new();
    let mut batch = Batch::new();
    for _ in 0..keys {
        let key = grant_key(&store, Utc::now(), &org, &benefit.id(), &customer.id()).await;
        batch.put(&key, Expect::Absent).unwrap();
        granted.push(key);
    }
    store.commit_durable(&batch).await.unwrap();
    store.flush_blocking().unwrap();
    drop(store);
    (org, granted)
}

#[actix_web::test]
async fn every_answered_validation_and_activation_survives_kill_9() {
    const KEYS: usize = 8;
    const ROUNDS: usize = 25;
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let (org, keys) = seed_offline(root.path(), &data, KEYS).await;
    let mut p = start(root.path(), &data, 1).await;
    let c = client();

    // Every key: concurrent validations with increments, and activations, all answered.
    let validations: RefCell<HashMap<LicenseKeyId, (i64, i64)>> = RefCell::new(HashMap::new());
    let activations: RefCell<Vec<(LicenseKeyId, String)>> = RefCell::new(Vec::new());
    let worker = |k: &LicenseKey, w: usize| {
        let (p, c, org, validations, activations) = (&p, &c, &org, &validations, &activations);
        let k = k.clone();
        async move {
            for round in 0..ROUNDS {
                let inc = ((w + round) % 3) as i64;
                let r = call(
                    p,
                    c,
                    Method::POST,
                    "/v1/customer-portal/license-keys/validate",
                    None,
                    Some(&json!({"key": k.key, "organization_id": org, "increment_usage": inc})),
                )
                .await
                .unwrap();
                r.expect(200);
                {
                    let mut v = validations.borrow_mut();
                    let e = v.entry(k.id).or_default();
                    e.0 += 1;
                    e.1 += inc;
                }
                if round % 5 == w % 5 {
                    let r = call(p, c, Method::POST, "/v1/customer-portal/license-keys/activate", None,
                            Some(&json!({"key": k.key, "organization_id": org, "label": format!("w{w} r{round}")})))
                        .await
                        .unwrap();
                    r.expect(200);
                    activations.borrow_mut().push((k.id, r.id()));
                }
            }
        }
    };
    join_all(
        keys.iter()
            .flat_map(|k| (0..2).map(move |w| (k, w)))
            .map(|(k, w)| worker(k, w)),
    )
    .await;
    // Right after the last answer.
    p.kill_9();
    drop(p);

    let p = start(root.path(), &data, 2).await;
    let token = std::fs::read_to_string(data.join(TOKEN_FILE))
        .unwrap()
        .trim()
        .to_string();
    let validations = validations.into_inner();
    for k in &keys {
        let r = call(
            &p,
            &c,
            Method::GET,
            &format!("/v1/license-keys/{}", k.id),
            Some(&token),
            None,
        )
        .await
        .unwrap();
        r.expect(200);
        let (count, usage) = validations[&k.id];
        assert_eq!(
            r.body["validations"].as_i64(),
            Some(count),
            "validations of {}",
            k.id
        );
        assert_eq!(r.body["usage"].as_i64(), Some(usage), "usage of {}", k.id);
        assert!(!r.body["last_validated_at"].is_null());
    }
    let activations = activations.into_inner();
    assert!(activations.len() >= KEYS * 2 * ROUNDS / 5);
    for (key, activation) in &activations {
        call(
            &p,
            &c,
            Method::GET,
            &format!("/v1/license-keys/{key}/activations/{activation}"),
            Some(&token),
            None,
        )
        .await
        .unwrap()
        .expect(200);
    }
    // And the keys still validate.
    let r = call(
        &p,
        &c,
        Method::POST,
        "/v1/customer-portal/license-keys/validate",
        None,
        Some(&json!({"key": keys[0].key, "organization_id": org})),
    )
    .await
    .unwrap();
    assert_eq!(
        r.expect(200).body["validations"].as_i64(),
        Some(validations[&keys[0].id].0 + 1)
    );
}

#[actix_web::test]
async fn kill_9_with_validations_in_flight_loses_no_answered_one() {
    const KILL_AFTER: usize = 300;
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let (org, keys) = seed_offline(root.path(), &data, 4).await;
    let p = RefCell::new(start(root.path(), &data, 1).await);
    let c = client();
    let answered: RefCell<HashMap<LicenseKeyId, i64>> = RefCell::new(HashMap::new());
    let attempted: RefCell<HashMap<LicenseKeyId, i64>> = RefCell::new(HashMap::new());
    let total = Cell::new(0usize);
    let killed = Cell::new(false);
    let address = p.borrow().address.clone();

    let worker = |k: LicenseKey| {
        let (c, org, answered, attempted, total, killed, address) =
            (&c, &org, &answered, &attempted, &total, &killed, &address);
        async move {
            while !killed.get() {
                *attempted.borrow_mut().entry(k.id).or_default() += 1;
                let resp = c
                    .post(format!(
                        "{address}/v1/customer-portal/license-keys/validate"
                    ))
                    .json(&json!({"key": k.key, "organization_id": org}))
                    .send()
                    .await;
                let Ok(resp) = resp else { break };
                let status = resp.status();
                if resp.bytes().await.is_err() {
                    break;
                }
                if status == 200 {
                    *answered.borrow_mut().entry(k.id).or_default() += 1;
                    total.set(total.get() + 1);
                } else if !killed.get() {
                    panic!("unexpected status {status}");
                }
            }
        }
    };
    let killer = async {
        let started = Instant::now();
        while total.get() < KILL_AFTER {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "validations too slow"
            );
            sleep(Duration::from_millis(1)).await;
        }
        p.borrow_mut().kill_9();
        killed.set(true);
    };
    let workers = keys
        .iter()
        .flat_map(|k| (0..4).map(move |_| k.clone()))
        .map(worker);
    join(killer, join_all(workers)).await;
    drop(p);

    let p = start(root.path(), &data, 2).await;
    let token = std::fs::read_to_string(data.join(TOKEN_FILE))
        .unwrap()
        .trim()
        .to_string();
    let (answered, attempted) = (answered.into_inner(), attempted.into_inner());
    for k in &keys {
        let r = call(
            &p,
            &c,
            Method::GET,
            &format!("/v1/license-keys/{}", k.id),
            Some(&token),
            None,
        )
        .await
        .unwrap();
        let stored = r.expect(200).body["validations"].as_i64().unwrap();
        let (acked, tried) = (answered.get(&k.id).copied().unwrap_or(0), attempted[&k.id]);
        assert!(
            stored >= acked,
            "{}: {stored} stored < {acked} answered",
            k.id
        );
        assert!(
            stored <= tried,
            "{}: {stored} stored > {tried} attempted",
            k.id
        );
    }
}
