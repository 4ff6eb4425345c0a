//! The link of a "payment failed" e-mail (issue 47, part 3), over HTTP with the test
//! processor on a manual clock and the file transport (`<data_dir>/mail/<id>.eml`): a
//! trial bought with `tok_chargeDeclined` (saved, never charged) goes past due at its end;
//! the message has a one-use link and the day access stops; the link signs the buyer in
//! and lands on the subscription's page, once; used, expired, altered, or opened on
//! another organization's portal, it is a 401 page with the sign-in form.

use std::path::PathBuf;
use std::time::{Duration as StdDuration, Instant};

use chrono::{DateTime, Duration, TimeZone, Utc};
use reqwest::StatusCode;
use serde_json::{json, Value};
use tollgate::app::subscription::sweep_subscriptions;
use tollgate::config::{EmailTransport, Settings};
use tollgate::domain::ids::SubscriptionId;
use tollgate_actors::domain::mail::{MailKind, MailMessage};
use tollgate_actors::ManualClock;

use crate::checkouts::store_values;
use crate::helpers::{spawn_app_with, TestApp};
use crate::oauth::{Browser, Page};

const PORTAL_COOKIE: &str = "tollgate_portal";
const DEAD: &str = "This link has expired or was already used";

pub(crate) fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 9, 0, 0).unwrap()
}

/// A server mailing into `<data_dir>/mail/`, on a manual clock at [`t0`].
pub(crate) async fn spawn() -> (TestApp, std::sync::Arc<ManualClock>) {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings.email.transport = EmailTransport::File;
    let (clock, shared) = ManualClock::shared(t0());
    (spawn_app_with(dir, settings, shared).await, clock)
}

pub(crate) struct Shop {
    pub org: String,
    pub slug: String,
    pub product: String,
}

/// An organization selling "Pro" ($10 a month after a 14-day trial) with a license key
/// whose grace is 3 days.
pub(crate) async fn shop(app: &TestApp, slug: &str) -> Shop {
    let token = Some(app.token.as_str());
    let org = app.created_org_as(&app.token, "Acme Tools", slug).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = app
        .post_json(
            "/v1/benefits/",
            token,
            &json!({"type": "license_keys", "description": "Pro license", "organization_id": org,
                    "properties": {"prefix": "PRO", "grace_days": 3}}),
        )
        .await;
    r.expect(201);
    let benefit = r.id();
    let r = app
        .post_json(
            "/v1/products/",
            token,
            &json!({"name": "Pro", "organization_id": org, "recurring_interval": "month",
                    "trial_interval": "day", "trial_interval_count": 14,
                    "prices": [{"amount_type": "fixed", "price_amount": 1000, "price_currency": "usd"}]}),
        )
        .await;
    r.expect(201);
    let product = r.id();
    app.post_json(
        &format!("/v1/products/{product}/benefits"),
        token,
        &json!({ "benefits": [benefit] }),
    )
    .await
    .expect(200);
    Shop {
        org,
        slug: slug.into(),
        product,
    }
}

/// A trial of `product` bought by `email` with a card that saves but never charges; the
/// subscription once the checkout succeeded.
pub(crate) async fn declining_trial(app: &TestApp, product: &str, email: &str) -> Value {
    let c = app
        .post_json(
            "/v1/checkouts/custom/",
            Some(&app.token),
            &json!({"product_id": product}),
        )
        .await;
    c.expect(201);
    let checkout = c.id();
    let secret = c.body["client_secret"].as_str().unwrap().to_string();
    app.post_json(
        &format!("/v1/checkouts/custom/client/{secret}/confirm"),
        None,
        &json!({"customer_name": "Ada Lovelace", "customer_email": email,
                "customer_billing_address": {"country": "FR"},
                "confirmation_token_id": "tok_chargeDeclined"}),
    )
    .await
    .expect(200);
    for _ in 0..200 {
        let c = app
            .get(
                &format!("/v1/checkouts/custom/{checkout}"),
                Some(&app.token),
            )
            .await;
        if c.body["status"] == "succeeded" {
            let customer = c.body["customer_id"].as_str().unwrap();
            let r = app
                .get(
                    &format!("/v1/subscriptions/?customer_id={customer}"),
                    Some(&app.token),
                )
                .await;
            r.expect(200);
            return r.items().remove(0);
        }
        actix_web::rt::time::sleep(StdDuration::from_millis(50)).await;
    }
    panic!("the checkout did not succeed");
}

pub(crate) async fn status(app: &TestApp, subscription: &str) -> String {
    let r = app
        .get(
            &format!("/v1/subscriptions/{subscription}"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    r.body["status"].as_str().unwrap().to_string()
}

/// Waits (bounded) until the change feed was consumed: the messages are decided.
async fn settled(app: &TestApp) {
    for _ in 0..400 {
        if app.state.store.changes(None, 1).await.unwrap().is_empty() {
            return;
        }
        actix_web::rt::time::sleep(StdDuration::from_millis(25)).await;
    }
    panic!("the change feed was not consumed");
}

/// The "payment failed" messages of a subscription.
async fn failure_mails(app: &TestApp, subscription: &str) -> Vec<MailMessage> {
    settled(app).await;
    let id: SubscriptionId = subscription.parse().unwrap();
    store_values::<MailMessage>(&app.state.store)
        .await
        .into_iter()
        .filter(|m| m.kind == MailKind::RenewalFailed && m.subscription_id == Some(id))
        .collect()
}

/// The message as the file transport left it, soft line breaks of quoted-printable
/// undone (waits, bounded, for the sender).
async fn eml(app: &TestApp, m: &MailMessage) -> String {
    let path: PathBuf = app
        .data_dir()
        .join("mail")
        .join(format!("{}.eml", m.id.uuid()));
    let started = Instant::now();
    loop {
        if let Ok(raw) = std::fs::read_to_string(&path) {
            return raw
                .replace("=\r\n", "")
                .replace("=\n", "")
                .replace("=3D", "=");
        }
        assert!(
            started.elapsed() < StdDuration::from_secs(20),
            "no {}",
            path.display()
        );
        actix_web::rt::time::sleep(StdDuration::from_millis(100)).await;
    }
}

/// The link's path (`/portal/{slug}/recover/{token}`) in a message's text part.
fn link_path(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.contains("/recover/"))
        .unwrap_or_else(|| panic!("no link in:\n{text}"));
    let at = line.find("/portal/").unwrap();
    line[at..].to_string()
}

fn header<'a>(p: &'a Page, name: &str) -> &'a str {
    p.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// A link that does not open: 401, the page saying so with the sign-in form, no session.
fn assert_dead(p: &Page, slug: &str) {
    assert_eq!(p.status, StatusCode::UNAUTHORIZED, "{}", p.body);
    assert!(p.body.contains(DEAD), "{}", p.body);
    assert!(
        p.body.contains(&format!("action=\"/portal/{slug}/code\"")),
        "the sign-in form: {}",
        p.body
    );
    assert!(p.input("csrf_token").is_some(), "{}", p.body);
    // No path leaves in a referrer, and the form still posts with an `Origin`
    // (`no-referrer` would make it `null`, which the CSRF check refuses).
    assert_eq!(header(p, "referrer-policy"), "strict-origin");
    assert!(
        !p.headers
            .get_all("set-cookie")
            .iter()
            .any(|c| c.to_str().unwrap_or("").starts_with(PORTAL_COOKIE)),
        "no session: {:?}",
        p.headers
    );
}

#[actix_web::test]
async fn a_declined_renewal_mails_a_link_that_signs_in_once_until_access_stops() {
    let (app, clock) = spawn().await;
    let acme = shop(&app, "recover-acme").await;
    let other = shop(&app, "recover-other").await;
    let ada = declining_trial(&app, &acme.product, "ada@recover.test").await;
    let bob = declining_trial(&app, &acme.product, "bob@recover.test").await;
    let (ada_sub, bob_sub) = (
        ada["id"].as_str().unwrap().to_string(),
        bob["id"].as_str().unwrap().to_string(),
    );
    assert_eq!(status(&app, &ada_sub).await, "trialing");

    // The trial ends; its first charge is declined: past due, and a mail with the link.
    let trial_end = t0() + Duration::days(14);
    clock.set(trial_end + Duration::minutes(1));
    let report = sweep_subscriptions(&app.state).await.unwrap();
    assert_eq!(report.declined, 2, "{report:?}");
    assert_eq!(status(&app, &ada_sub).await, "past_due");
    let mails = failure_mails(&app, &ada_sub).await;
    assert_eq!(mails.len(), 1, "{mails:?}");
    let mail = &mails[0];
    assert_eq!(mail.to, "ada@recover.test");
    // Access stops when the key's grace ends: 3 days after the period ended.
    let stops = tollgate::app::mail::date(trial_end + Duration::days(3));
    let path = link_path(&mail.text);
    assert!(path.starts_with("/portal/recover-acme/recover/"), "{path}");
    for part in [&mail.text, &mail.html] {
        assert!(part.contains(&path), "the link in:\n{part}");
        assert!(
            part.contains(&format!("works once, until {stops}")),
            "{stops} in:\n{part}"
        );
        assert!(
            part.contains(&format!("Access stops on {stops}")),
            "{stops} in:\n{part}"
        );
        assert!(!part.contains("Make sure your card"), "{part}");
    }
    // The message as sent (the outbox's file) carries the same link.
    let sent = eml(&app, mail).await;
    assert!(
        sent.contains("Subject: Payment failed for your Pro subscription"),
        "{sent}"
    );
    assert!(sent.contains(&path), "{path} in:\n{sent}");
    assert!(sent.contains(&format!("Access stops on {stops}")), "{sent}");

    let token = path.rsplit('/').next().unwrap().to_string();
    // Another organization's portal, an altered token, a cut one: refused, nothing used.
    let mut stranger = Browser::new(&app);
    let p = stranger
        .get(&format!("/portal/{}/recover/{token}", other.slug))
        .await;
    assert_dead(&p, &other.slug);
    let mut altered = token.clone().into_bytes();
    let last = altered.len() - 1;
    altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    for bad in [altered.as_str(), &token[..30]] {
        let p = stranger
            .get(&format!("/portal/{}/recover/{bad}", acme.slug))
            .await;
        assert_dead(&p, &acme.slug);
    }

    // No such portal: 404, and the address is not passed on either.
    let p = stranger
        .get(&format!("/portal/recover-nobody/recover/{token}"))
        .await;
    assert_eq!(p.status, StatusCode::NOT_FOUND, "{}", p.body);
    assert_eq!(header(&p, "referrer-policy"), "no-referrer");

    // Ada opens it: signed in, on her subscription's page.
    let mut b = Browser::new(&app);
    let p = b.get(&path).await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    assert_eq!(
        p.location,
        format!("/portal/{}/subscriptions/{ada_sub}", acme.slug)
    );
    assert_eq!(header(&p, "referrer-policy"), "no-referrer");
    assert!(
        b.cookie_header().contains(PORTAL_COOKIE),
        "a session cookie"
    );
    let page = b.get(&p.location).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("Pro"), "{}", page.body);
    let overview = b.get(&format!("/portal/{}/overview", acme.slug)).await;
    assert_eq!(
        overview.status,
        StatusCode::OK,
        "signed in: {}",
        overview.body
    );
    assert!(
        overview.body.contains("ada@recover.test"),
        "{}",
        overview.body
    );

    // Once: again, from this browser or another, it is refused.
    assert_dead(&b.get(&path).await, &acme.slug);
    let mut again = Browser::new(&app);
    let p = again.get(&path).await;
    assert_dead(&p, &acme.slug);
    // The 401 page's sign-in form works.
    let sent_code = again
        .post(
            &format!("/portal/{}/code", acme.slug),
            &[("csrf_token", &p.csrf()), ("email", "ada@recover.test")],
        )
        .await;
    assert_eq!(sent_code.status, StatusCode::OK, "{}", sent_code.body);

    // Bob's link, opened once access stopped: refused; a minute before, it worked.
    let bob_mail = failure_mails(&app, &bob_sub).await.remove(0);
    let bob_path = link_path(&bob_mail.text);
    assert_ne!(bob_path, path, "one link per message");
    clock.set(trial_end + Duration::days(3));
    assert_dead(&Browser::new(&app).get(&bob_path).await, &acme.slug);
    clock.set(trial_end + Duration::days(3) - Duration::minutes(1));
    let p = Browser::new(&app).get(&bob_path).await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    assert_eq!(
        p.location,
        format!("/portal/{}/subscriptions/{bob_sub}", acme.slug)
    );

    // Once they would have expired, and the grace period after, the links are purged.
    clock.set(trial_end + Duration::days(3) + Duration::hours(25));
    let report = tollgate::retention::purge(&app.state).await.unwrap();
    assert_eq!(report.recovery_links, 2, "{report:?}");
    assert_dead(&Browser::new(&app).get(&path).await, &acme.slug);
    let _ = acme.org;
}
