//! Issue 46, items 1 and 3: the `feature_flag` benefit as Polar has it (created, changed,
//! granted and revoked like every benefit, shown in the customer's state and, when public,
//! in the portal), and Tollgate's entitlements: the feature flags a key's customer holds
//! from the key's own order or subscription, inside the validate and activate answers, their
//! signed form and the license file; a plan change swaps them at once, a revocation ends them.

use serde_json::{json, Value};
use tollgate::auth::Scope;

use crate::benefit_grants::{buy, key_of, revoke, subscription_of};
use crate::helpers::{spawn_app, Reply, TestApp};
use crate::license_signing::{ask, jwks, open_license_file, post, verify, Jwk, LICENSE_FILE};
use crate::versions::{sell_key, Sale};

const BENEFITS: &str = "/v1/benefits/";
const PORTAL: &str = "/v1/customer-portal/license-keys";

async fn flag(app: &TestApp, org: &str, description: &str, extra: Value) -> Reply {
    let mut body = json!({"type": "feature_flag", "description": description,
                          "organization_id": org, "properties": {}});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    app.post_json(BENEFITS, Some(&app.token), &body).await
}

pub(crate) async fn flag_id(
    app: &TestApp,
    org: &str,
    description: &str,
    metadata: Value,
) -> String {
    let r = flag(app, org, description, json!({"metadata": metadata})).await;
    r.expect(201);
    r.id()
}

pub(crate) async fn set_benefits(app: &TestApp, product: &str, benefits: &[&str]) {
    app.post_json(
        &format!("/v1/products/{product}/benefits"),
        Some(&app.token),
        &json!({ "benefits": benefits }),
    )
    .await
    .expect(200);
}

async fn validate(app: &TestApp, sale: &Sale) -> Value {
    let r = app
        .post_json(
            &format!("{PORTAL}/validate"),
            None,
            &json!({"key": sale.key, "organization_id": sale.org}),
        )
        .await;
    r.expect(200);
    r.body.clone()
}

fn entitlement_ids(answer: &Value) -> Vec<String> {
    answer["entitlements"]
        .as_array()
        .unwrap_or_else(|| panic!("no entitlements: {answer}"))
        .iter()
        .map(|e| e["benefit_id"].as_str().unwrap().to_string())
        .collect()
}

#[actix_web::test]
async fn a_feature_flag_is_created_and_changed_as_polar_does() {
    let app = spawn_app().await;
    let org = app.created_org_as(&app.token, "Flags", "flags").await["id"]
        .as_str()
        .unwrap()
        .to_string();

    let r = flag(
        &app,
        &org,
        "Beta features",
        json!({"metadata": {"flag": "beta_dashboard", "max_projects": 10}}),
    )
    .await;
    r.expect(201);
    let b = &r.body;
    assert_eq!(b["type"], "feature_flag");
    assert_eq!(b["properties"], json!({}));
    assert_eq!(b["visibility"], "public");
    assert_eq!(b["visibility_configurable"], true);
    assert_eq!(
        b["metadata"],
        json!({"flag": "beta_dashboard", "max_projects": 10})
    );
    assert_eq!(b["selectable"], true);
    assert_eq!(b["deletable"], true);
    let id = r.id();

    let private = flag(&app, &org, "Hidden", json!({"visibility": "private"})).await;
    private.expect(201);
    assert_eq!(private.body["visibility"], "private");

    // 422s: an unknown visibility, a short description, a visibility on another type.
    let e = flag(&app, &org, "Beta", json!({"visibility": "secret"}))
        .await
        .expect_invalid_at(json!(["body", "visibility"]));
    assert_eq!(e["type"], "enum", "{e}");
    assert_eq!(e["input"], "secret");
    flag(&app, &org, "ab", json!({}))
        .await
        .expect_invalid_at(json!(["body", "description"]));
    let e = app
        .post_json(
            BENEFITS,
            Some(&app.token),
            &json!({"type": "custom", "description": "Support", "organization_id": org,
                    "properties": {}, "visibility": "private"}),
        )
        .await
        .expect_invalid_at(json!(["body", "visibility"]));
    assert_eq!(
        e["msg"],
        "Visibility is not configurable for this benefit type and must be public."
    );

    // An update changes visibility and metadata, never the type.
    let path = format!("{BENEFITS}{id}");
    let r = app
        .patch_json(
            &path,
            Some(&app.token),
            &json!({"type": "feature_flag", "visibility": "draft",
                    "metadata": {"flag": "beta_v2"}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["visibility"], "draft");
    assert_eq!(r.body["metadata"], json!({"flag": "beta_v2"}));
    assert_eq!(r.body["description"], "Beta features");
    let read = app.get(&path, Some(&app.token)).await;
    read.expect(200);
    assert_eq!(read.body["visibility"], "draft");
    app.patch_json(
        &path,
        Some(&app.token),
        &json!({"type": "feature_flag", "visibility": "hidden"}),
    )
    .await
    .expect_invalid_at(json!(["body", "visibility"]));
    app.patch_json(
        &path,
        Some(&app.token),
        &json!({"type": "custom", "description": "Renamed"}),
    )
    .await
    .expect(400);

    // Tenancy and scopes: another seller's token neither sees nor changes it; a token
    // without `benefits:write` may not create one.
    let (_, other_token) = app
        .new_user_with_scopes(
            "other@flags.example",
            &[Scope::BenefitsRead, Scope::BenefitsWrite],
        )
        .await;
    app.get(&path, Some(&other_token)).await.expect(404);
    app.patch_json(
        &path,
        Some(&other_token),
        &json!({"type": "feature_flag", "visibility": "public"}),
    )
    .await
    .expect(404);
    let (_, reader) = app
        .new_user_with_scopes("reader@flags.example", &[Scope::BenefitsRead])
        .await;
    app.post_json(
        BENEFITS,
        Some(&reader),
        &json!({"type": "feature_flag", "description": "Beta", "properties": {}}),
    )
    .await
    .expect(403);
}

#[actix_web::test]
async fn a_keys_entitlements_are_the_flags_of_its_own_purchase_now() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "entitled").await;
    // No flag yet: an empty list.
    assert_eq!(validate(&app, &sale).await["entitlements"], json!([]));

    let beta = flag_id(
        &app,
        &sale.org,
        "Beta features",
        json!({"flag": "beta", "max_projects": 10}),
    )
    .await;
    let r = flag(
        &app,
        &sale.org,
        "Internal tools",
        json!({"visibility": "private", "metadata": {"flag": "internal"}}),
    )
    .await;
    r.expect(201);
    let internal = r.id();
    // The product gains both flags: the purchase grants them (as Polar grants a product's
    // new benefits), and the next answer shows them at once.
    set_benefits(&app, &sale.product, &[&sale.benefit, &beta, &internal]).await;
    let answer = validate(&app, &sale).await;
    assert_eq!(
        answer["entitlements"],
        json!([
            {"benefit_id": beta, "description": "Beta features",
             "metadata": {"flag": "beta", "max_projects": 10}},
            {"benefit_id": internal, "description": "Internal tools",
             "metadata": {"flag": "internal"}}
        ])
    );

    // Activate carries them on its key; so do the token routes.
    let r = app
        .post_json(
            &format!("{PORTAL}/activate"),
            None,
            &json!({"key": sale.key, "organization_id": sale.org, "label": "laptop"}),
        )
        .await;
    r.expect(200);
    assert_eq!(
        r.body["license_key"]["entitlements"],
        answer["entitlements"]
    );
    let r = app
        .post_json(
            "/v1/license-keys/validate",
            Some(&app.token),
            &json!({"key": sale.key, "organization_id": sale.org}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["entitlements"], answer["entitlements"]);

    // The state shows the flags as Polar's grants of them.
    let state = app
        .get(
            &format!("/v1/customers/{}/state", sale.customer),
            Some(&app.token),
        )
        .await;
    state.expect(200);
    let granted = state.body["granted_benefits"].as_array().unwrap().clone();
    let of = |id: &str| {
        granted
            .iter()
            .find(|g| g["benefit_id"] == id)
            .unwrap_or_else(|| panic!("{id} not in {granted:?}"))
            .clone()
    };
    let g = of(&beta);
    assert_eq!(g["benefit_type"], "feature_flag");
    assert_eq!(
        g["benefit_metadata"],
        json!({"flag": "beta", "max_projects": 10})
    );
    assert_eq!(g["properties"], json!({}));
    assert_eq!(of(&internal)["benefit_type"], "feature_flag");

    // The portal lists the public flag, not the private one (Polar shows public benefits).
    let session = app
        .post_json(
            "/v1/customer-sessions/",
            Some(&app.token),
            &json!({"customer_id": sale.customer}),
        )
        .await;
    session.expect(201);
    let cst = session.body["token"].as_str().unwrap().to_string();
    let grants = app
        .get("/v1/customer-portal/benefit-grants/", Some(&cst))
        .await;
    grants.expect(200);
    let listed: Vec<Value> = grants
        .items()
        .iter()
        .map(|g| g["benefit_id"].clone())
        .collect();
    assert!(listed.contains(&json!(beta)), "{listed:?}");
    assert!(listed.contains(&json!(sale.benefit)), "{listed:?}");
    assert!(!listed.contains(&json!(internal)), "{listed:?}");
    assert_eq!(grants.total_count(), 2);

    // A change of a flag's metadata, its deletion, its removal from the product: each
    // shows in the very next answer.
    app.patch_json(
        &format!("{BENEFITS}{beta}"),
        Some(&app.token),
        &json!({"type": "feature_flag", "metadata": {"flag": "beta", "max_projects": 20}}),
    )
    .await
    .expect(200);
    let answer = validate(&app, &sale).await;
    assert_eq!(answer["entitlements"][0]["metadata"]["max_projects"], 20);
    let r = app
        .request(
            reqwest::Method::DELETE,
            &format!("{BENEFITS}{internal}"),
            Some(&app.token),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 204);
    assert_eq!(
        entitlement_ids(&validate(&app, &sale).await),
        vec![beta.clone()]
    );
    set_benefits(&app, &sale.product, &[&sale.benefit]).await;
    assert_eq!(validate(&app, &sale).await["entitlements"], json!([]));
}

#[actix_web::test]
async fn entitlements_come_from_the_keys_purchase_only_and_end_with_a_refund() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "own-purchase").await;
    let beta = flag_id(&app, &sale.org, "Beta features", json!({"flag": "beta"})).await;
    set_benefits(&app, &sale.product, &[&sale.benefit, &beta]).await;
    // The same customer buys another product with another flag: the customer holds both,
    // the key only its own purchase's.
    let extra = flag_id(&app, &sale.org, "Extra seats", json!({"seats": 5})).await;
    let product = app
        .post_json(
            "/v1/products/",
            Some(&app.token),
            &json!({"name": "Add-on", "organization_id": sale.org,
                    "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 900}]}),
        )
        .await;
    product.expect(201);
    let addon = product.id();
    set_benefits(&app, &addon, &[&extra]).await;
    let checkout = app
        .post_json(
            "/v1/checkouts/custom/",
            Some(&app.token),
            &json!({"product_id": addon, "customer_id": sale.customer}),
        )
        .await;
    checkout.expect(201);
    let secret = checkout.body["client_secret"].as_str().unwrap().to_string();
    app.post_json(
        &format!("/v1/checkouts/custom/client/{secret}/confirm"),
        None,
        &json!({"customer_name": "Ada Lovelace",
                "customer_billing_address": {"country": "FR"}, "confirmation_token_id": "tok_visa"}),
    )
    .await
    .expect(200);
    let state = app
        .get(
            &format!("/v1/customers/{}/state", sale.customer),
            Some(&app.token),
        )
        .await;
    state.expect(200);
    let held: Vec<Value> = state.body["granted_benefits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["benefit_id"].clone())
        .collect();
    assert!(held.contains(&json!(extra)), "{held:?}");
    assert_eq!(
        entitlement_ids(&validate(&app, &sale).await),
        vec![beta.clone()]
    );

    // A refund that revokes the order's benefits revokes its key too: no answer at all.
    let orders = app
        .get(
            &format!(
                "/v1/orders/?customer_id={}&product_id={}",
                sale.customer, sale.product
            ),
            Some(&app.token),
        )
        .await;
    orders.expect(200);
    let order = orders.items()[0]["id"].as_str().unwrap().to_string();
    app.post_json(
        "/v1/refunds/",
        Some(&app.token),
        &json!({"order_id": order, "reason": "customer_request", "amount": 1900,
                "revoke_benefits": true}),
    )
    .await
    .expect(200);
    let r = app
        .post_json(
            &format!("{PORTAL}/validate"),
            None,
            &json!({"key": sale.key, "organization_id": sale.org}),
        )
        .await;
    assert_ne!(r.status.as_u16(), 200, "{}", r.body);
}

/// polar-sdk 1.0.2, in each API version's module: create a feature flag, buy it once, read
/// the customer's state (`tests/clients/python-1.0/feature_flags.py`).
#[actix_web::test]
async fn polar_sdk_1_0_creates_a_feature_flag_and_reads_it_in_the_state() {
    use std::process::Command;
    let python = crate::tools::python_venv("tests/clients/python-1.0/requirements.txt");
    let app = spawn_app().await;
    for version in ["v2026_04", "v2026_10", "v2027_01"] {
        let mut cmd = Command::new(&python);
        cmd.arg(crate::tools::repo_root().join("tests/clients/python-1.0/feature_flags.py"))
            .env("TOLLGATE_URL", &app.address)
            .env("TOLLGATE_TOKEN", &app.token)
            .env("TOLLGATE_API_VERSION", version)
            .env("PYTHONUNBUFFERED", "1");
        let out = crate::tools::run_async(cmd, std::time::Duration::from_secs(120)).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            crate::tools::tally(&stdout),
            Some((8, 0)),
            "{version}:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A seller with one license-key benefit and two monthly plans: Starter grants the key and
/// the flag `starter`, Pro the key and the flag `pro`.
struct Plans {
    org: String,
    keys: String,
    starter: String,
    pro: String,
    starter_flag: String,
    pro_flag: String,
}

async fn plans(app: &TestApp, slug: &str) -> Plans {
    let org = app.created_org_as(&app.token, slug, slug).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = app
        .post_json(
            BENEFITS,
            Some(&app.token),
            &json!({"type": "license_keys", "description": "Key", "organization_id": org,
                    "properties": {"prefix": "TG"}}),
        )
        .await;
    r.expect(201);
    let keys = r.id();
    let starter_flag = flag_id(app, &org, "Starter features", json!({"tier": "starter"})).await;
    let pro_flag = flag_id(
        app,
        &org,
        "Pro features",
        json!({"tier": "pro", "max_projects": 10}),
    )
    .await;
    let mut products = Vec::new();
    for (name, amount, flag) in [("Starter", 900, &starter_flag), ("Pro", 2900, &pro_flag)] {
        let r = app
            .post_json(
                "/v1/products/",
                Some(&app.token),
                &json!({"name": name, "organization_id": org,
                        "prices": [{"type": "recurring", "amount_type": "fixed",
                                    "price_amount": amount, "price_currency": "usd",
                                    "recurring_interval": "month"}]}),
            )
            .await;
        r.expect(201);
        let product = r.id();
        set_benefits(app, &product, &[&keys, flag]).await;
        products.push(product);
    }
    let pro = products.pop().unwrap();
    let starter = products.pop().unwrap();
    Plans {
        org,
        keys,
        starter,
        pro,
        starter_flag,
        pro_flag,
    }
}

/// What a key's customer holds, seen four ways: the validate answer's entitlements, the
/// signed validate answer's (its RFC 9421 signature verified), the license file's (its
/// ed25519 signature verified), and the `feature_flag` grants of the customer's state.
#[derive(Debug, PartialEq)]
struct Held {
    answer: Vec<String>,
    signed: Vec<String>,
    file: Vec<String>,
    state: Vec<String>,
}

impl Held {
    fn all(ids: &[&str]) -> Held {
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        Held {
            answer: ids.clone(),
            signed: ids.clone(),
            file: ids.clone(),
            state: ids,
        }
    }
}

async fn held(app: &TestApp, org: &str, key: &str, customer: &str, trusted: &[Jwk]) -> Held {
    let body = json!({"key": key, "organization_id": org});
    let answer = entitlement_ids(&{
        let r = app
            .post_json(&format!("{PORTAL}/validate"), None, &body)
            .await;
        r.expect(200);
        r.body.clone()
    });
    let nonce = format!("n-{}", uuid::Uuid::new_v4().simple());
    let ex = post(
        app,
        &format!("{PORTAL}/validate"),
        None,
        &body,
        &[("Accept-Signature", &*ask(&nonce))],
    )
    .await;
    ex.expect(200);
    verify(&ex, trusted, "sig1", Some(&nonce)).unwrap();
    let signed = entitlement_ids(&ex.json());
    let r = app.post_json(LICENSE_FILE, None, &body).await;
    r.expect(200);
    let opened = open_license_file(
        r.body["certificate"].as_str().unwrap(),
        trusted,
        key,
        chrono::Utc::now(),
    )
    .unwrap();
    let file = entitlement_ids(&opened.data["meta"]["license_key"]);
    Held {
        answer,
        signed,
        file,
        state: state_flags(app, customer).await,
    }
}

/// The ids of the `feature_flag` grants in the customer's state.
async fn state_flags(app: &TestApp, customer: &str) -> Vec<String> {
    let state = app
        .get(&format!("/v1/customers/{customer}/state"), Some(&app.token))
        .await;
    state.expect(200);
    state.body["granted_benefits"]
        .as_array()
        .unwrap_or_else(|| panic!("no granted_benefits: {}", state.body))
        .iter()
        .filter(|g| g["benefit_type"] == "feature_flag")
        .map(|g| g["benefit_id"].as_str().unwrap().to_string())
        .collect()
}

async fn change_plan(app: &TestApp, token: &str, subscription: &str, product: &str) -> Reply {
    app.patch_json(
        &format!("/v1/subscriptions/{subscription}"),
        Some(token),
        &json!({"product_id": product, "proration_behavior": "prorate"}),
    )
    .await
}

#[actix_web::test]
async fn a_plan_change_swaps_the_keys_entitlements_and_a_revocation_ends_them() {
    let app = spawn_app().await;
    let p = plans(&app, "plan-flags").await;
    let ada = buy(&app, &p.starter, "ada@plan-flags.example").await;
    let sub = subscription_of(&app, &ada.customer).await;
    let key = key_of(&app, &ada.customer, &p.keys).await.remove(0);
    let key = key["key"].as_str().unwrap().to_string();
    let trusted = jwks(&app, &p.org).await;
    assert_eq!(
        held(&app, &p.org, &key, &ada.customer, &trusted).await,
        Held::all(&[&p.starter_flag])
    );

    // Starter to Pro: the same key, and at once Pro's flag in every answer, Starter's in none.
    change_plan(&app, &app.token, &sub, &p.pro)
        .await
        .expect(200);
    let now = held(&app, &p.org, &key, &ada.customer, &trusted).await;
    assert_eq!(now, Held::all(&[&p.pro_flag]));
    // The entitlement carries Pro's flag as it is.
    let r = app
        .post_json(
            &format!("{PORTAL}/validate"),
            None,
            &json!({"key": key, "organization_id": p.org}),
        )
        .await;
    assert_eq!(
        r.body["entitlements"],
        json!([{"benefit_id": p.pro_flag, "description": "Pro features",
                "metadata": {"tier": "pro", "max_projects": 10}}])
    );
    // And back: Starter's again, not Pro's.
    change_plan(&app, &app.token, &sub, &p.starter)
        .await
        .expect(200);
    assert_eq!(
        held(&app, &p.org, &key, &ada.customer, &trusted).await,
        Held::all(&[&p.starter_flag])
    );

    // Revoked (canceled at once): no answer carries anything, the state holds nothing.
    revoke(&app, &sub).await;
    let body = json!({"key": key, "organization_id": p.org});
    let r = app
        .post_json(&format!("{PORTAL}/validate"), None, &body)
        .await;
    assert_ne!(r.status.as_u16(), 200, "{}", r.body);
    assert!(r.body.get("entitlements").is_none(), "{}", r.body);
    let ex = post(
        &app,
        &format!("{PORTAL}/validate"),
        None,
        &body,
        &[("Accept-Signature", &*ask("n-revoked"))],
    )
    .await;
    assert_ne!(ex.status, 200, "{:?}", ex.json());
    let r = app.post_json(LICENSE_FILE, None, &body).await;
    assert_ne!(r.status.as_u16(), 200, "{}", r.body);
    assert!(r.body.get("certificate").is_none(), "{}", r.body);
    let state = app
        .get(
            &format!("/v1/customers/{}/state", ada.customer),
            Some(&app.token),
        )
        .await;
    state.expect(200);
    assert_eq!(state.body["active_subscriptions"], json!([]));
    assert_eq!(state.body["granted_benefits"], json!([]));
}

#[actix_web::test]
async fn a_plan_change_that_is_refused_leaves_the_entitlements_as_they_were() {
    let app = spawn_app().await;
    let p = plans(&app, "plan-denials").await;
    let ada = buy(&app, &p.starter, "ada@plan-denials.example").await;
    let sub = subscription_of(&app, &ada.customer).await;
    let key = key_of(&app, &ada.customer, &p.keys).await.remove(0);
    let key = key["key"].as_str().unwrap().to_string();
    let trusted = jwks(&app, &p.org).await;
    let before = Held::all(&[&p.starter_flag]);

    // A token that may only read subscriptions: 403.
    let (_, read_only) = app
        .new_user_with_scopes("ro@plan-denials.example", &[Scope::SubscriptionsRead])
        .await;
    let (_, stranger) = app
        .new_user_with_scopes(
            "stranger@plan-denials.example",
            &[
                Scope::SubscriptionsRead,
                Scope::SubscriptionsWrite,
                Scope::CustomersRead,
            ],
        )
        .await;
    change_plan(&app, &read_only, &sub, &p.pro)
        .await
        .expect(403);
    // Another seller, with every subscription scope: the subscription is not found, nor the
    // customer's state.
    change_plan(&app, &stranger, &sub, &p.pro).await.expect(404);
    app.get(
        &format!("/v1/customers/{}/state", ada.customer),
        Some(&stranger),
    )
    .await
    .expect(404);
    // Another organization's plan, with its own flag: not a product of this one.
    let other = plans(&app, "plan-elsewhere").await;
    change_plan(&app, &app.token, &sub, &other.pro)
        .await
        .expect_invalid_at(json!(["body", "product_id"]));
    // The key is not another organization's either.
    app.post_json(
        &format!("{PORTAL}/validate"),
        None,
        &json!({"key": key, "organization_id": other.org}),
    )
    .await
    .expect(404);

    assert_eq!(
        held(&app, &p.org, &key, &ada.customer, &trusted).await,
        before
    );
    let s = app
        .get(&format!("/v1/subscriptions/{sub}"), Some(&app.token))
        .await;
    s.expect(200);
    assert_eq!(s.body["product_id"], p.starter);
}
