//! License keys follow the subscription that granted them (issue 31, part 1): a key is
//! valid for the period its subscription paid plus its benefit's grace (`grace_days`), its
//! `expires_at` moves with each paid renewal, a validation inside the grace says until
//! when (`grace_until`), and the key is revoked when the subscription ends.

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};
use tollgate::domain::ids::{BenefitId, LicenseKeyId, OrganizationId, SubscriptionId};
use tollgate_actors::license_key::{KeyStatus, LicenseKey};
use tollgate_actors::subscription::{KeysPaidUntil, Subscription, SubscriptionStatus};
use tollgate_storage::Record;

use crate::benefit_grants::{buy, key_of, shop, subscription_of};
use crate::helpers::spawn_app;
use crate::subscriptions::{purchase, spawn_app_with_clock, t0, ClockApp};

const VALIDATE: &str = "/v1/customer-portal/license-keys/validate";

fn time(v: &Value) -> DateTime<Utc> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("not a time: {v}")))
        .unwrap()
        .with_timezone(&Utc)
}

#[actix_web::test]
async fn a_subscriptions_key_lasts_its_paid_period_and_the_grace() {
    let app = spawn_app().await;
    let shop = shop(&app, "follow").await;
    let ada = buy(&app, &shop.monthly, "ada@follow.example").await;
    let sub = subscription_of(&app, &ada.customer).await;
    let s = app
        .get(&format!("/v1/subscriptions/{sub}"), Some(&app.token))
        .await;
    let period_end = time(&s.body["current_period_end"]);
    let key = key_of(&app, &ada.customer, &shop.keys).await.remove(0);
    // The default grace: three days past the paid period.
    assert_eq!(time(&key["expires_at"]), period_end + Duration::days(3));
    let r = app
        .post_json(
            VALIDATE,
            None,
            &json!({"key": key["key"], "organization_id": shop.org}),
        )
        .await;
    r.expect(200);
    assert!(r.body["grace_until"].is_null(), "{}", r.body);

    // A one-time purchase keeps the benefit's own expiry (none here).
    let bob = buy(&app, &shop.one_time, "bob@follow.example").await;
    let bobs = key_of(&app, &bob.customer, &shop.keys).await.remove(0);
    assert!(bobs["expires_at"].is_null());

    // The benefit's grace: 0 to 30 days; an update without it keeps it.
    let benefit = format!("/v1/benefits/{}", shop.keys);
    for bad in [json!(-1), json!(31), json!("x")] {
        app.patch_json(
            &benefit,
            Some(&app.token),
            &json!({"type": "license_keys", "properties": {"grace_days": bad}}),
        )
        .await
        .expect(422);
    }
    let r = app
        .patch_json(
            &benefit,
            Some(&app.token),
            &json!({"type": "license_keys", "properties": {"grace_days": 7}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["properties"]["grace_days"], 7);
    let r = app
        .patch_json(
            &benefit,
            Some(&app.token),
            &json!({"type": "license_keys", "properties": {"prefix": "TG"}}),
        )
        .await;
    assert_eq!(r.body["properties"]["grace_days"], 7);
}

/// A license-key benefit with `grace_days`, and a key of `subscription` granted at t0 as
/// checkout completion grants it.
async fn benefit_and_key(
    app: &ClockApp,
    org: OrganizationId,
    customer: &tollgate::domain::customer::Customer,
    subscription: SubscriptionId,
    paid_until: DateTime<Utc>,
    grace_days: i64,
) -> (BenefitId, LicenseKey) {
    let r = app
        .post_json(
            "/v1/benefits/",
            Some(&app.token),
            &json!({"type": "license_keys", "description": "Follows", "organization_id": org,
                    "properties": {"prefix": "FK", "grace_days": grace_days}}),
        )
        .await;
    r.expect(201);
    let benefit: BenefitId = r.body["id"].as_str().unwrap().parse().unwrap();
    let key = LicenseKey {
        id: LicenseKeyId::new(),
        organization_id: org,
        customer_id: customer.id,
        benefit_id: benefit,
        created_at: t0(),
        modified_at: None,
        key: format!("FK-{}", uuid::Uuid::new_v4()).to_uppercase(),
        status: KeyStatus::Granted,
        limit_activations: None,
        usage: 0,
        limit_usage: None,
        validations: 0,
        last_validated_at: None,
        expires_at: Some(paid_until + Duration::days(grace_days)),
        activations: Vec::new(),
        subscription_id: Some(subscription),
        order_id: None,
        paid_until: Some(paid_until),
        allow_replacement: false,
        replacements: Vec::new(),
    };
    app.put(&key).await;
    (benefit, key)
}

async fn stored_key(app: &ClockApp, id: LicenseKeyId) -> LicenseKey {
    app.state
        .store
        .get::<LicenseKey>(&id.key())
        .await
        .unwrap()
        .unwrap()
        .value
}

async fn validate(app: &ClockApp, key: &LicenseKey) -> crate::helpers::Reply {
    app.post_json(
        VALIDATE,
        None,
        &json!({"key": key.key, "organization_id": key.organization_id}),
    )
    .await
}

#[actix_web::test]
async fn a_paid_renewal_moves_the_keys_expiry() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "renewed-keys").await;
    let product = app.monthly(&app.token, org, "Pro", 1500).await;
    let customer = app.customer(&app.token, org, "jane@renewed.example").await;
    let id = SubscriptionId::new();
    let end = Subscription::new_from_purchase(id, purchase(&product, &customer, None), t0())
        .unwrap()
        .current_period_end
        .unwrap();
    let (_, key) = benefit_and_key(&app, org, &customer, id, end, 2).await;
    let mut p = purchase(&product, &customer, None);
    p.license_key_ids = vec![key.id];
    let s = Subscription::new_from_purchase(id, p, t0()).unwrap();
    app.put(&s).await;

    app.clock.set(end + Duration::minutes(1));
    let report = app.sweep().await;
    assert_eq!((report.renewed, report.keys_extended), (1, 1), "{report:?}");
    let renewed = app.stored(id).await;
    let next_end = renewed.current_period_end.unwrap();
    assert!(next_end > end);
    let k = stored_key(&app, key.id).await;
    assert_eq!(k.paid_until, Some(next_end));
    assert_eq!(k.expires_at, Some(next_end + Duration::days(2)));
    // The outbox is empty, and another sweep changes nothing.
    assert!(app
        .state
        .store
        .scan::<KeysPaidUntil>()
        .await
        .unwrap()
        .is_empty());
    assert_eq!(app.sweep().await.keys_extended, 0);
    let r = validate(&app, &k).await;
    r.expect(200);
    assert_eq!(time(&r.body["expires_at"]), next_end + Duration::days(2));
    assert!(r.body["grace_until"].is_null());

    // A crash between the renewal and the keys: the outbox is finished by the next sweep.
    let later = next_end + Duration::days(31);
    let orphan = KeysPaidUntil {
        subscription_id: id,
        paid_until: later,
        keys: vec![key.id],
        created_at: next_end,
    };
    app.put(&orphan).await;
    assert_eq!(app.sweep().await.keys_extended, 1);
    assert_eq!(stored_key(&app, key.id).await.paid_until, Some(later));
    // Never backwards.
    let stale = KeysPaidUntil {
        paid_until: end,
        ..orphan
    };
    app.put(&stale).await;
    assert_eq!(app.sweep().await.keys_extended, 0);
    assert_eq!(stored_key(&app, key.id).await.paid_until, Some(later));
    // A key the seller revoked is left alone.
    app.patch_json(
        &format!("/v1/license-keys/{}", key.id),
        Some(&app.token),
        &json!({"status": "revoked"}),
    )
    .await
    .expect(200);
    app.put(&KeysPaidUntil {
        paid_until: later + Duration::days(31),
        ..stale
    })
    .await;
    assert_eq!(app.sweep().await.keys_extended, 0);
    assert_eq!(stored_key(&app, key.id).await.paid_until, Some(later));
    assert_eq!(
        KeysPaidUntil::COLLECTION,
        "subscription_keys_paid_until",
        "a stable collection name"
    );
}

#[actix_web::test]
async fn a_past_due_key_validates_in_its_grace_then_expires_then_is_revoked() {
    let app = spawn_app_with_clock().await;
    let org = app.org(&app.token, "grace-keys").await;
    let product = app.monthly(&app.token, org, "Pro", 1500).await;
    let customer = app.customer(&app.token, org, "jane@grace.example").await;
    let id = SubscriptionId::new();
    let end = Subscription::new_from_purchase(id, purchase(&product, &customer, None), t0())
        .unwrap()
        .current_period_end
        .unwrap();
    let (_, key) = benefit_and_key(&app, org, &customer, id, end, 2).await;
    let mut p = purchase(&product, &customer, None);
    p.payment_token = Some("tok_decline_insufficient_funds".into());
    p.license_key_ids = vec![key.id];
    app.put(&Subscription::new_from_purchase(id, p, t0()).unwrap())
        .await;

    // Paid period: no grace.
    app.clock.set(end - Duration::hours(1));
    let r = validate(&app, &key).await;
    r.expect(200);
    assert!(r.body["grace_until"].is_null());

    // The renewal is declined: past due, the key validates in its grace and says so.
    app.clock.set(end + Duration::minutes(1));
    assert_eq!(app.sweep().await.declined, 1);
    assert_eq!(app.stored(id).await.status, SubscriptionStatus::PastDue);
    let r = validate(&app, &key).await;
    r.expect(200);
    assert_eq!(time(&r.body["grace_until"]), end + Duration::days(2));
    assert_eq!(r.body["status"], "granted");
    // The buyer's mail says until when the keys work.
    let until = (end + Duration::days(2)).format("%B %-d, %Y").to_string();
    let mut told = false;
    for _ in 0..200 {
        let messages =
            crate::checkouts::store_values::<tollgate_actors::domain::mail::MailMessage>(
                &app.state.store,
            )
            .await;
        if let Some(m) = messages
            .iter()
            .find(|m| m.kind == tollgate_actors::domain::mail::MailKind::RenewalFailed)
        {
            assert!(
                m.text.contains(&format!("keep working until {until}")),
                "{}",
                m.text
            );
            told = true;
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(told, "no renewal-failed message");

    // After the grace: expired (Polar's 404), while the renewal is still retried.
    app.clock
        .set(end + Duration::days(2) + Duration::minutes(1));
    let r = validate(&app, &key).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    assert_eq!(r.body["detail"], "License key has expired.");
    assert_eq!(stored_key(&app, key.id).await.status, KeyStatus::Granted);

    // Dunning gives up: canceled, the key revoked.
    for day in [3, 6, 9] {
        app.clock
            .set(end + Duration::days(day) + Duration::minutes(3 + day));
        app.sweep().await;
    }
    assert_eq!(app.stored(id).await.status, SubscriptionStatus::Canceled);
    assert_eq!(stored_key(&app, key.id).await.status, KeyStatus::Revoked);
}
