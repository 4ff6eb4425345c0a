//! The renewal events Polar sends: `subscription.cycled` and one `benefit_grant.cycled` per
//! grant when a paid renewal starts a new period, `subscription.past_due` once when a
//! renewal is declined (not again at each retry), each only to the endpoints subscribed to
//! it, with payloads polar-sdk 1.0.2's webhook validator parses in every served version.
//!
//! Subscriptions are seeded into the store and renewed by the sweep on a `ManualClock`
//! (see `subscriptions.rs`); the events are read from the store as the fan-out records
//! them, for endpoints paused so that nothing is sent anywhere.

use std::time::Duration as StdDuration;

use chrono::{Duration, TimeZone, Utc};
use serde_json::{json, Value};
use tollgate::domain::customer::Customer;
use tollgate::domain::ids::{OrganizationId, SubscriptionId};
use tollgate::domain::product::Product;
use tollgate_actors::domain::webhook::WebhookEvent;
use tollgate_actors::subscription::{Subscription, SubscriptionStatus};

use crate::subscriptions::{purchase, spawn_app_with_clock, t0, ClockApp};
use crate::tools;

/// The new types, and `subscription.updated` beside them.
const RENEWAL_EVENTS: &[&str] = &[
    "subscription.updated",
    "subscription.past_due",
    "subscription.cycled",
    "benefit_grant.cycled",
];

/// Everything a subscription's renewal sends but the new types.
const OTHER_EVENTS: &[&str] = &[
    "subscription.created",
    "subscription.updated",
    "subscription.active",
    "subscription.canceled",
    "subscription.revoked",
    "benefit_grant.created",
    "benefit_grant.updated",
    "benefit_grant.revoked",
    "order.created",
    "order.paid",
];

/// An organization selling a monthly product with a custom benefit, a customer, and two
/// paused endpoints: one for [`RENEWAL_EVENTS`], one for [`OTHER_EVENTS`].
struct Shop {
    product: Product,
    customer: Customer,
    benefit: String,
    renewals: Endpoint,
    others: Endpoint,
}

struct Endpoint {
    id: String,
    secret: String,
}

async fn shop(app: &ClockApp, slug: &str) -> Shop {
    let token = Some(app.token.as_str());
    let org = app.org(&app.token, slug).await;
    let b = app
        .post_json(
            "/v1/benefits/",
            token,
            &json!({"type": "custom", "description": "Support", "organization_id": org,
                    "properties": {"note": "Write to support@example.com"}}),
        )
        .await;
    b.expect(201);
    let benefit = b.body["id"].as_str().unwrap().to_string();
    let product = app.monthly(&app.token, org, "Pro", 1500).await;
    app.post_json(
        &format!("/v1/products/{}/benefits", product.id),
        token,
        &json!({ "benefits": [benefit] }),
    )
    .await
    .expect(200);
    let customer = app.customer(&app.token, org, "jane@example.com").await;
    Shop {
        product,
        customer,
        benefit,
        renewals: endpoint(app, org, RENEWAL_EVENTS).await,
        others: endpoint(app, org, OTHER_EVENTS).await,
    }
}

/// A paused endpoint: its events are recorded (as skipped), never sent.
async fn endpoint(app: &ClockApp, org: OrganizationId, events: &[&str]) -> Endpoint {
    let r = app
        .post_json(
            "/v1/webhooks/endpoints",
            Some(&app.token),
            &json!({"url": "https://hooks.example.com/tollgate", "format": "raw",
                    "events": events, "organization_id": org}),
        )
        .await;
    r.expect(201);
    assert_eq!(r.body["events"], json!(events), "every type is accepted");
    let id = r.body["id"].as_str().unwrap().to_string();
    app.patch_json(
        &format!("/v1/webhooks/endpoints/{id}"),
        Some(&app.token),
        &json!({"enabled": false}),
    )
    .await
    .expect(200);
    Endpoint {
        id,
        secret: r.body["secret"].as_str().unwrap().to_string(),
    }
}

/// Waits until the fan-out consumed every change written so far.
async fn settled(app: &ClockApp) {
    for _ in 0..400 {
        if app.state.store.changes(None, 1).await.unwrap().is_empty() {
            return;
        }
        actix_web::rt::time::sleep(StdDuration::from_millis(25)).await;
    }
    panic!("the webhook fan-out did not catch up");
}

/// The bodies recorded for `endpoint` about `subscription` (its own events and its
/// grants'), in the order they happened, as `(type, body)`.
async fn events(app: &ClockApp, endpoint: &Endpoint, subscription: SubscriptionId) -> Vec<Value> {
    settled(app).await;
    let mut events: Vec<WebhookEvent> = crate::checkouts::webhook_events(&app.state)
        .await
        .into_iter()
        .filter(|e| e.endpoint_id.to_string() == endpoint.id)
        .collect();
    events.sort_by_key(|e| e.seq);
    let id = subscription.to_string();
    events
        .iter()
        .map(|e| serde_json::from_str::<Value>(&e.payload).unwrap())
        .filter(|b| b["data"]["id"] == id.as_str() || b["data"]["subscription_id"] == id.as_str())
        .collect()
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

#[actix_web::test]
async fn a_paid_renewal_sends_subscription_cycled_and_a_cycled_grant() {
    let app = spawn_app_with_clock().await;
    let shop = shop(&app, "cycled").await;
    let s = app
        .subscribe(purchase(&shop.product, &shop.customer, None), t0())
        .await;
    let end = s.current_period_end.unwrap();
    let before = events(&app, &shop.renewals, s.id).await;
    assert_eq!(types(&before), Vec::<&str>::new(), "nothing renewed yet");

    app.clock.set(end + Duration::hours(1));
    assert_eq!(app.sweep().await.renewed, 1);
    let got = events(&app, &shop.renewals, s.id).await;
    assert_eq!(
        types(&got),
        [
            "subscription.updated",
            "subscription.cycled",
            "benefit_grant.cycled"
        ]
    );
    // The subscription in its new period, as `subscription.updated` shows it.
    let cycled = &of_type(&got, "subscription.cycled")[0];
    assert_eq!(cycled["data"], got[0]["data"]);
    assert_eq!(cycled["data"]["status"], "active");
    let start = chrono::DateTime::parse_from_rfc3339(
        cycled["data"]["current_period_start"].as_str().unwrap(),
    )
    .unwrap();
    assert_eq!(start, end);
    // The grant: the subscription's, granted, with the benefit and the customer.
    let grant = &of_type(&got, "benefit_grant.cycled")[0]["data"];
    assert_eq!(grant["subscription_id"], s.id.to_string());
    assert!(grant["order_id"].is_null());
    assert_eq!(grant["benefit_id"], shop.benefit.as_str());
    assert_eq!(grant["benefit"]["id"], shop.benefit.as_str());
    assert_eq!(grant["customer_id"], shop.customer.id.to_string());
    assert_eq!(grant["customer"]["email"], "jane@example.com");
    assert_eq!(grant["is_granted"], true);
    assert_eq!(grant["is_revoked"], false);
    assert!(grant["revoked_at"].is_null());
    assert!(grant["modified_at"].is_string());
    assert_eq!(grant["previous_properties"], grant["properties"]);
    // The same grant as it was created.
    let others = events(&app, &shop.others, s.id).await;
    let created = &of_type(&others, "benefit_grant.created")[0]["data"];
    assert_eq!(grant["id"], created["id"]);

    // A service down for two periods catches up: one cycle per period.
    app.clock
        .set(Utc.with_ymd_and_hms(2025, 5, 1, 0, 0, 0).unwrap());
    assert_eq!(app.sweep().await.renewed, 2);
    let got = events(&app, &shop.renewals, s.id).await;
    assert_eq!(of_type(&got, "subscription.cycled").len(), 3);
    assert_eq!(of_type(&got, "benefit_grant.cycled").len(), 3);
    assert_eq!(of_type(&got, "subscription.past_due").len(), 0);

    // The endpoint not subscribed to them got the rest, and none of them.
    let others = events(&app, &shop.others, s.id).await;
    let kinds = types(&others);
    for kind in ["subscription.cycled", "benefit_grant.cycled"] {
        assert!(!kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    assert_eq!(of_type(&others, "subscription.updated").len(), 3);
    assert_eq!(of_type(&others, "benefit_grant.updated").len(), 3);

    check_with_polar_sdk(&shop.renewals, &got).await;
}

#[actix_web::test]
async fn a_declined_renewal_sends_subscription_past_due_once() {
    let app = spawn_app_with_clock().await;
    let shop = shop(&app, "past-due").await;
    let mut p = purchase(&shop.product, &shop.customer, None);
    p.payment_token = Some("tok_decline_insufficient_funds".into());
    let s = app.subscribe(p, t0()).await;
    let end = s.current_period_end.unwrap();

    app.clock.set(end + Duration::minutes(1));
    assert_eq!(app.sweep().await.declined, 1);
    let got = events(&app, &shop.renewals, s.id).await;
    assert_eq!(
        types(&got),
        ["subscription.updated", "subscription.past_due"]
    );
    let past_due = &got[1]["data"];
    assert_eq!(past_due["status"], "past_due");
    assert_eq!(past_due, &got[0]["data"]);

    // Declined again at the retry: nothing the API shows changed (only the time of the
    // attempt), so no event, and no second past due.
    app.clock
        .set(end + Duration::days(3) + Duration::minutes(2));
    assert_eq!(app.sweep().await.declined, 1);
    assert_eq!(app.stored(s.id).await.status, SubscriptionStatus::PastDue);
    let got = events(&app, &shop.renewals, s.id).await;
    assert_eq!(
        types(&got),
        ["subscription.updated", "subscription.past_due"]
    );

    // Dunning ends: canceled and revoked, still one past due and no cycle.
    for day in [6, 9] {
        app.clock
            .set(end + Duration::days(day) + Duration::minutes(3 + day));
        app.sweep().await;
    }
    let gone: Subscription = app.stored(s.id).await;
    assert_eq!(gone.status, SubscriptionStatus::Canceled);
    let got = events(&app, &shop.renewals, s.id).await;
    assert_eq!(of_type(&got, "subscription.past_due").len(), 1);
    assert_eq!(of_type(&got, "subscription.cycled").len(), 0);
    assert_eq!(of_type(&got, "benefit_grant.cycled").len(), 0);
    assert_eq!(
        of_type(&got, "subscription.updated").last().unwrap()["data"]["status"],
        "canceled"
    );

    // The other endpoint: the updates and the end, never a past due.
    let others = events(&app, &shop.others, s.id).await;
    assert!(of_type(&others, "subscription.past_due").is_empty());
    assert_eq!(of_type(&others, "subscription.revoked").len(), 1);
    assert_eq!(of_type(&others, "benefit_grant.revoked").len(), 1);

    check_with_polar_sdk(&shop.renewals, &got).await;
}

/// A plan change: `subscription.updated`, the grants of benefits only the old product gave
/// revoked, those only the new one gives created; a benefit both give is left alone.
#[actix_web::test]
async fn a_plan_change_revokes_and_grants_only_the_benefits_that_differ() {
    let app = spawn_app_with_clock().await;
    let shop = shop(&app, "plan-change").await;
    let org = shop.product.organization_id;
    let token = Some(app.token.as_str());
    let b = app
        .post_json(
            "/v1/benefits/",
            token,
            &json!({"type": "custom", "description": "Priority support", "organization_id": org,
                    "properties": {"note": "Call us"}}),
        )
        .await;
    b.expect(201);
    let extra = b.body["id"].as_str().unwrap().to_string();
    let max = app.monthly(&app.token, org, "Max", 4000).await;
    app.post_json(
        &format!("/v1/products/{}/benefits", max.id),
        token,
        &json!({ "benefits": [shop.benefit, extra] }),
    )
    .await
    .expect(200);
    let s = app
        .subscribe(purchase(&shop.product, &shop.customer, None), t0())
        .await;
    app.clock.set(t0() + Duration::days(5));
    let path = format!("/v1/subscriptions/{}", s.id);
    app.patch_json(
        &path,
        token,
        &json!({"product_id": max.id, "proration_behavior": "prorate"}),
    )
    .await
    .expect(200);
    let got = events(&app, &shop.others, s.id).await;
    let about = |kind: &str, benefit: &str| {
        of_type(&got, kind)
            .into_iter()
            .filter(|e| e["data"]["benefit_id"] == benefit)
            .count()
    };
    // Created once at the purchase, never again; the new benefit once; nothing revoked.
    assert_eq!(about("benefit_grant.created", &shop.benefit), 1);
    assert_eq!(about("benefit_grant.created", &extra), 1);
    assert_eq!(of_type(&got, "benefit_grant.revoked").len(), 0);
    let updated = of_type(&got, "subscription.updated");
    assert_eq!(
        updated.last().unwrap()["data"]["product_id"],
        max.id.to_string()
    );

    // Back: the new benefit's grant is revoked, the shared one stays.
    app.patch_json(&path, token, &json!({"product_id": shop.product.id}))
        .await
        .expect(200);
    let got = events(&app, &shop.others, s.id).await;
    let revoked = of_type(&got, "benefit_grant.revoked");
    assert_eq!(revoked.len(), 1);
    assert_eq!(revoked[0]["data"]["benefit_id"], extra.as_str());
    assert_eq!(revoked[0]["data"]["is_revoked"], true);
}

/// Signs each body as a delivery would and loads it with `validate_event` of polar-sdk
/// 1.0.2, in each of its API versions: the SDK knows these types, so each must parse into
/// its payload class with its type.
async fn check_with_polar_sdk(endpoint: &Endpoint, bodies: &[Value]) {
    let python = tools::python_venv("tests/clients/python-1.0/requirements.txt");
    let bodies: Vec<String> = bodies.iter().map(Value::to_string).collect();
    let input = json!({"secret": endpoint.secret, "bodies": bodies}).to_string();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("input.json");
    std::fs::write(&path, &input).unwrap();
    let mut cmd = std::process::Command::new(python);
    cmd.arg("-c").arg(SDK_CHECK).arg(&path);
    let out = tools::run_async(cmd, StdDuration::from_secs(120)).await;
    assert!(
        out.status.success(),
        "polar-sdk 1.0.2 refused a payload:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

const SDK_CHECK: &str = r#"
import base64, hashlib, hmac, importlib, json, sys, time

given = json.load(open(sys.argv[1]))
secret = given["secret"]
failed = 0
for version in ("v2026_04", "v2026_10", "v2027_01"):
    webhooks = importlib.import_module(f"polar.{version}.webhooks")
    for n, body in enumerate(given["bodies"]):
        kind = json.loads(body)["type"]
        msg_id, ts = f"msg_{n}", str(int(time.time()))
        mac = hmac.new(secret.encode(), f"{msg_id}.{ts}.{body}".encode(), hashlib.sha256)
        headers = {"webhook-id": msg_id, "webhook-timestamp": ts,
                   "webhook-signature": "v1," + base64.b64encode(mac.digest()).decode()}
        try:
            event = webhooks.validate_event(body, headers, secret)
            assert event.type == kind, (event.type, kind)
            print("ok", version, kind)
        except Exception as e:
            failed += 1
            print("FAIL", version, kind, repr(e), repr(e.__cause__)[:2000])
sys.exit(1 if failed else 0)
"#;
