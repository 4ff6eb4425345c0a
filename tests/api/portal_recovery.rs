//! "Pay now" over HTTP with the test processor on a `ManualClock` (Polar's customer portal
//! `orders/{id}/confirm-payment` and `payment-status`): a trial whose card cannot be
//! charged goes past due at its end with its renewal order `pending`; the buyer adds a
//! working card and pays the order now: the subscription is `active`, the key validates
//! without `grace_until`, the order is `paid` with its receipt, and `order.paid` and
//! `subscription.active` are sent. Refusals: an order that is not a pending renewal (422),
//! another customer's order (404, nothing changed), the sixth attempt (429), a body with
//! both or neither way to pay (422), no session (401).

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};
use tollgate::domain::ids::{OrganizationId, SubscriptionId};
use tollgate_actors::domain::mail::{MailKind, MailMessage};
use tollgate_actors::domain::webhook::WebhookEvent;

use crate::checkouts::store_values;
use crate::helpers::Reply;
use crate::subscriptions::{spawn_app_with_clock, t0, ClockApp};

const VALIDATE: &str = "/v1/customer-portal/license-keys/validate";
const METHODS: &str = "/v1/customer-portal/customers/me/payment-methods";

fn time(v: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("not a time: {v}")))
        .unwrap()
        .with_timezone(&Utc)
}

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap().to_string()
}

/// A past-due subscription: its trial ended and its card could not be charged.
struct PastDue {
    org: OrganizationId,
    subscription: String,
    /// A customer session of the buyer.
    session: String,
    /// The renewal order left `pending`.
    order: Value,
    key: Value,
    trial_end: DateTime<Utc>,
    endpoint: String,
}

/// A shop selling a 14-day trial with a license key (3 days of grace), a paused webhook
/// endpoint, and a buyer whose card saves but never charges, past the trial's end.
async fn past_due(app: &ClockApp, slug: &str, email: &str) -> PastDue {
    past_due_all(app, &[(slug, email)]).await.remove(0)
}

/// Each `(slug, email)`'s shop and buyer (see [`past_due`]), the trials started together
/// and ended by one sweep.
async fn past_due_all(app: &ClockApp, buyers: &[(&str, &str)]) -> Vec<PastDue> {
    let mut bought = Vec::new();
    for (slug, email) in buyers {
        bought.push(subscribed(app, slug, email).await);
    }
    let trial_end = t0() + Duration::days(14);
    app.clock.set(trial_end + Duration::minutes(1));
    assert_eq!(app.sweep().await.declined, buyers.len() as u64);
    let mut out = Vec::new();
    for b in bought {
        out.push(b.past_due(app, trial_end).await);
    }
    out
}

/// A shop's trial subscription, before its end.
struct Subscribed {
    org: OrganizationId,
    benefit: String,
    customer: String,
    subscription: String,
    endpoint: String,
}

async fn subscribed(app: &ClockApp, slug: &str, email: &str) -> Subscribed {
    let token = Some(app.token.as_str());
    let org = app.org(&app.token, slug).await;
    let b = app
        .post_json(
            "/v1/benefits/",
            token,
            &json!({"type": "license_keys", "description": "Keys", "organization_id": org,
                    "properties": {"prefix": "PAY", "grace_days": 3}}),
        )
        .await;
    b.expect(201);
    let benefit = id(&b.body);
    let p = app
        .post_json(
            "/v1/products/",
            token,
            &json!({"name": "Pro", "organization_id": org, "recurring_interval": "month",
                    "trial_interval": "day", "trial_interval_count": 14,
                    "prices": [{"amount_type": "fixed", "price_amount": 1000,
                                "price_currency": "usd"}]}),
        )
        .await;
    p.expect(201);
    let product = id(&p.body);
    app.post_json(
        &format!("/v1/products/{product}/benefits"),
        token,
        &json!({ "benefits": [benefit] }),
    )
    .await
    .expect(200);
    let e = app
        .post_json(
            "/v1/webhooks/endpoints",
            token,
            &json!({"url": "https://hooks.example.com/pay", "format": "raw",
                    "events": ["order.paid", "order.updated", "subscription.active"],
                    "organization_id": org}),
        )
        .await;
    e.expect(201);
    let endpoint = id(&e.body);
    app.patch_json(
        &format!("/v1/webhooks/endpoints/{endpoint}"),
        token,
        &json!({"enabled": false}),
    )
    .await
    .expect(200);

    // A card that can be saved but not charged (Stripe's `tok_chargeDeclined`).
    let c = app
        .post_json(
            "/v1/checkouts/custom/",
            token,
            &json!({"product_id": product}),
        )
        .await;
    c.expect(201);
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
    let checkout = id(&c.body);
    let mut customer = String::new();
    for _ in 0..100 {
        let c = app
            .get(&format!("/v1/checkouts/custom/{checkout}"), token)
            .await;
        if c.body["status"] == "succeeded" {
            customer = c.body["customer_id"].as_str().unwrap().to_string();
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(!customer.is_empty(), "the checkout did not succeed");
    let r = app
        .get(&format!("/v1/subscriptions/?customer_id={customer}"), token)
        .await;
    r.expect(200);
    let subscription = id(&r.body["items"][0]);
    Subscribed {
        org,
        benefit,
        customer,
        subscription,
        endpoint,
    }
}

impl Subscribed {
    /// Past its trial's end: a customer session, the pending order and the key.
    async fn past_due(self, app: &ClockApp, trial_end: DateTime<Utc>) -> PastDue {
        let token = Some(app.token.as_str());
        let Subscribed {
            org,
            benefit,
            customer,
            subscription,
            endpoint,
        } = self;
        let s = app
            .post_json(
                "/v1/customer-sessions/",
                token,
                &json!({ "customer_id": customer }),
            )
            .await;
        s.expect(201);
        let session = s.body["token"].as_str().unwrap().to_string();
        let orders = app.get("/v1/customer-portal/orders/", Some(&session)).await;
        orders.expect(200);
        let order = orders.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["status"] == "pending")
            .unwrap_or_else(|| panic!("no pending order: {}", orders.body))
            .clone();
        let keys = app
            .get(
                &format!("/v1/license-keys/?benefit_id={benefit}&limit=100"),
                token,
            )
            .await;
        keys.expect(200);
        let key = keys.body["items"][0].clone();
        PastDue {
            org,
            subscription,
            session,
            order,
            key,
            trial_end,
            endpoint,
        }
    }
}

async fn confirm(app: &ClockApp, session: Option<&str>, order: &str, body: Value) -> Reply {
    app.post_json(
        &format!("/v1/customer-portal/orders/{order}/confirm-payment"),
        session,
        &body,
    )
    .await
}

async fn validate(app: &ClockApp, p: &PastDue) -> Reply {
    app.post_json(
        VALIDATE,
        None,
        &json!({"key": p.key["key"], "organization_id": p.org}),
    )
    .await
}

async fn subscription(app: &ClockApp, id: &str) -> Value {
    let r = app
        .get(&format!("/v1/subscriptions/{id}"), Some(&app.token))
        .await;
    r.expect(200);
    r.body
}

/// Waits until the change feed was consumed (mails and webhooks decided).
async fn settled(app: &ClockApp) {
    for _ in 0..400 {
        if app.state.store.changes(None, 1).await.unwrap().is_empty() {
            return;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("the change feed was not consumed");
}

/// The types of the events recorded for the endpoint about `id` (as `data.id`).
async fn event_types(app: &ClockApp, endpoint: &str, id: &str) -> Vec<String> {
    settled(app).await;
    let mut events: Vec<WebhookEvent> = crate::checkouts::webhook_events(&app.state)
        .await
        .into_iter()
        .filter(|e| e.endpoint_id.to_string() == endpoint)
        .collect();
    events.sort_by_key(|e| e.seq);
    events
        .iter()
        .map(|e| serde_json::from_str::<Value>(&e.payload).unwrap())
        .filter(|b| b["data"]["id"] == id)
        .map(|b| b["type"].as_str().unwrap().to_string())
        .collect()
}

#[actix_web::test]
async fn a_past_due_buyer_adds_a_card_and_pays_now() {
    let app = spawn_app_with_clock().await;
    let p = past_due(&app, "pay-now", "ada@pay.example").await;
    let order = id(&p.order);

    // The declined renewal: a pending order, retried in 3 days; the key in its grace.
    assert_eq!(p.order["paid"], false);
    assert_eq!(p.order["due_amount"], p.order["total_amount"]);
    assert_eq!(p.order["billing_reason"], "subscription_cycle");
    // The buyer's view and the seller's say when it is retried.
    let seller_view = app
        .get(&format!("/v1/orders/{order}"), Some(&app.token))
        .await;
    seller_view.expect(200);
    let retry = p.trial_end + Duration::minutes(1) + Duration::days(3);
    assert_eq!(time(&seller_view.body["next_payment_attempt_at"]), retry);
    assert_eq!(
        time(&p.order["next_payment_attempt_at"]),
        retry,
        "{}",
        p.order
    );
    let s = subscription(&app, &p.subscription).await;
    assert_eq!(s["status"], "past_due");
    assert_eq!(time(&s["past_due_at"]), p.trial_end + Duration::minutes(1));
    let r = validate(&app, &p).await;
    r.expect(200);
    assert_eq!(
        time(&r.body["grace_until"]),
        p.trial_end + Duration::days(3)
    );
    let status = app
        .get(
            &format!("/v1/customer-portal/orders/{order}/payment-status"),
            Some(&p.session),
        )
        .await;
    status.expect(200);
    assert_eq!(status.body["status"], "failed");
    assert_eq!(
        event_types(&app, &p.endpoint, &order).await,
        Vec::<String>::new()
    );
    assert_eq!(
        event_types(&app, &p.endpoint, &p.subscription).await,
        ["subscription.active"],
        "the trial's start only"
    );

    // A working card, then pay now with it.
    let r = app
        .post_json(
            METHODS,
            Some(&p.session),
            &json!({"confirmation_token_id": "tok_visa", "set_default": true,
                    "return_url": "https://shop.example.com/portal"}),
        )
        .await;
    r.expect(201);
    let visa = id(&r.body["payment_method"]);
    app.clock.set(p.trial_end + Duration::minutes(30));
    let r = confirm(
        &app,
        Some(&p.session),
        &order,
        json!({"payment_method_id": visa, "payment_processor": "stripe"}),
    )
    .await;
    r.expect(200);
    assert_eq!(
        r.body,
        json!({"status": "succeeded", "client_secret": null, "error": null})
    );

    // Active, the period paid from the trial's end, the key without grace at once.
    let s = subscription(&app, &p.subscription).await;
    assert_eq!(s["status"], "active");
    assert_eq!(s["past_due_at"], Value::Null);
    assert_eq!(time(&s["current_period_start"]), p.trial_end);
    let r = validate(&app, &p).await;
    r.expect(200);
    assert_eq!(r.body["grace_until"], Value::Null, "{}", r.body);
    let stored = app
        .stored(p.subscription.parse::<SubscriptionId>().unwrap())
        .await;
    assert_eq!(stored.payment_token.as_deref(), Some("tok_visa"));
    assert_eq!(
        (stored.buyer_attempts, stored.payment_lock_until),
        (0, None)
    );

    // The same order, paid; its receipt; order.paid and subscription.active.
    let o = app
        .get(
            &format!("/v1/customer-portal/orders/{order}"),
            Some(&p.session),
        )
        .await;
    o.expect(200);
    assert_eq!(o.body["status"], "paid");
    assert_eq!(o.body.get("next_payment_attempt_at"), Some(&Value::Null));
    let status = app
        .get(
            &format!("/v1/customer-portal/orders/{order}/payment-status"),
            Some(&p.session),
        )
        .await;
    assert_eq!(status.body, json!({"status": "succeeded", "error": null}));
    let order_events = event_types(&app, &p.endpoint, &order).await;
    assert_eq!(order_events, ["order.updated", "order.paid"]);
    // (The first at the trial's start: a trial is active.)
    assert_eq!(
        event_types(&app, &p.endpoint, &p.subscription).await,
        ["subscription.active", "subscription.active"]
    );
    let receipts: Vec<MailMessage> = store_values::<MailMessage>(&app.state.store)
        .await
        .into_iter()
        .filter(|m| {
            m.kind == MailKind::RenewalReceipt
                && m.order_id.map(|o| o.to_string()) == Some(order.clone())
        })
        .collect();
    assert_eq!(receipts.len(), 1);

    // Paid: not again.
    let r = confirm(
        &app,
        Some(&p.session),
        &order,
        json!({"payment_method_id": visa}),
    )
    .await;
    assert_eq!(r.expect_error(422), "OrderNotEligibleForRetry");
    assert_eq!(
        r.body["detail"],
        format!("Order {order} is not eligible for payment retry.")
    );
    // Nor does the sweep charge it again.
    app.clock.set(p.trial_end + Duration::days(4));
    assert_eq!(app.sweep().await.renewed, 0);
}

#[actix_web::test]
async fn pay_now_refusals() {
    let app = spawn_app_with_clock().await;
    let mut both = past_due_all(
        &app,
        &[
            ("pay-refusals", "bob@pay.example"),
            ("pay-other", "eve@pay.example"),
        ],
    )
    .await;
    let other = both.remove(1);
    let p = both.remove(0);
    let order = id(&p.order);
    let sub: SubscriptionId = p.subscription.parse().unwrap();
    let before = app.stored(sub).await;

    // No session: 401.
    let r = confirm(
        &app,
        None,
        &order,
        json!({"confirmation_token_id": "tok_visa"}),
    )
    .await;
    r.expect(401);
    // Both ways to pay, or neither: 422.
    for body in [
        json!({}),
        json!({"confirmation_token_id": "tok_visa",
               "payment_method_id": "7e000000-0000-4000-8000-0000000000e1"}),
    ] {
        let r = confirm(&app, Some(&p.session), &order, body).await;
        r.expect(422);
    }
    // A saved method that is not the customer's: 422.
    let r = confirm(
        &app,
        Some(&p.session),
        &order,
        json!({"payment_method_id": "7e000000-0000-4000-8000-0000000000e1"}),
    )
    .await;
    assert_eq!(r.expect_error(422), "PaymentRetryValidationError");

    // Another customer's order: 404, and nothing changed.
    let r = confirm(
        &app,
        Some(&other.session),
        &order,
        json!({"confirmation_token_id": "tok_visa"}),
    )
    .await;
    r.expect(404);
    let r = app
        .get(
            &format!("/v1/customer-portal/orders/{order}/payment-status"),
            Some(&other.session),
        )
        .await;
    r.expect(404);
    assert_eq!(app.stored(sub).await, before);

    // The order of the trial (free, paid): not eligible.
    let orders = app
        .get("/v1/customer-portal/orders/", Some(&p.session))
        .await;
    let free = orders.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["status"] == "paid")
        .cloned()
        .expect("the trial's order");
    let r = confirm(
        &app,
        Some(&p.session),
        &id(&free),
        json!({"confirmation_token_id": "tok_visa"}),
    )
    .await;
    assert_eq!(r.expect_error(422), "OrderNotEligibleForRetry");

    // Five declined attempts are answered `failed`; the sixth is refused.
    for n in 0..5 {
        let r = confirm(
            &app,
            Some(&p.session),
            &order,
            json!({"confirmation_token_id": "tok_decline_insufficient_funds"}),
        )
        .await;
        r.expect(200);
        assert_eq!(
            r.body,
            json!({"status": "failed", "client_secret": null,
                   "error": "Your card was declined."}),
            "attempt {n}"
        );
    }
    let status = app
        .get(
            &format!("/v1/customer-portal/orders/{order}/payment-status"),
            Some(&p.session),
        )
        .await;
    assert_eq!(
        status.body,
        json!({"status": "failed", "error": "Your card was declined."})
    );
    let r = confirm(
        &app,
        Some(&p.session),
        &order,
        json!({"confirmation_token_id": "tok_visa"}),
    )
    .await;
    assert_eq!(r.expect_error(429), "ManualRetryLimitExceeded");
    let s = app.stored(sub).await;
    assert_eq!(s.buyer_attempts, 5);
    assert_eq!(
        subscription(&app, &p.subscription).await["status"],
        "past_due"
    );
}

/// A browser on the portal's pages: its cookies (the session's and the CSRF one) kept.
struct PortalBrowser {
    http: reqwest::Client,
    base: String,
    cookies: std::collections::BTreeMap<String, String>,
}

struct Page {
    status: u16,
    location: String,
    /// The page's `Content-Security-Policy`.
    csp: String,
    body: String,
}

impl PortalBrowser {
    /// Signed in through the seller's link (`customer_session_token`).
    async fn signed_in(address: &str, slug: &str, session: &str) -> PortalBrowser {
        let mut b = PortalBrowser {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            base: address.to_string(),
            cookies: Default::default(),
        };
        let page = b
            .get(&format!("/portal/{slug}?customer_session_token={session}"))
            .await;
        assert_eq!(page.status, 303, "{}", page.body);
        b
    }

    async fn send(&mut self, req: reqwest::RequestBuilder) -> Page {
        let cookie: Vec<String> = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let resp = req
            .header("cookie", cookie.join("; "))
            .header("origin", self.base.clone())
            .send()
            .await
            .unwrap();
        for c in resp.headers().get_all("set-cookie") {
            let pair = c.to_str().unwrap().split(';').next().unwrap().to_string();
            if let Some((k, v)) = pair.split_once('=') {
                self.cookies.insert(k.to_string(), v.to_string());
            }
        }
        Page {
            csp: resp
                .headers()
                .get("content-security-policy")
                .map(|l| l.to_str().unwrap().to_string())
                .unwrap_or_default(),
            status: resp.status().as_u16(),
            location: resp
                .headers()
                .get("location")
                .map(|l| l.to_str().unwrap().to_string())
                .unwrap_or_default(),
            body: resp.text().await.unwrap(),
        }
    }

    async fn get(&mut self, path: &str) -> Page {
        let req = self.http.get(format!("{}{path}", self.base));
        self.send(req).await
    }

    async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let req = self.http.post(format!("{}{path}", self.base)).form(form);
        self.send(req).await
    }
}

/// The value of the first input named `name` with a non-empty value.
fn input(body: &str, name: &str) -> Option<String> {
    body.split(&format!("name=\"{name}\" value=\""))
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .find(|v| !v.is_empty())
        .map(str::to_string)
}

#[actix_web::test]
async fn the_subscription_page_pays_a_past_due_renewal_now() {
    let app = spawn_app_with_clock().await;
    let slug = "pay-page";
    let mut both = past_due_all(
        &app,
        &[
            (slug, "ada@page.example"),
            ("pay-page-other", "eve@page.example"),
        ],
    )
    .await;
    let other = both.remove(1);
    let p = both.remove(0);
    let order = id(&p.order);
    let path = format!("/portal/{slug}/subscriptions/{}", p.subscription);
    let mut b = PortalBrowser::signed_in(&app.address, slug, &p.session).await;

    // The page says the payment failed, when access stops, what is due; the card that
    // failed is the one offered.
    let page = b.get(&path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let failed_on = p.trial_end + Duration::minutes(1);
    // The key's grace (3 days) ends before dunning gives up (9 days).
    let stops = p.trial_end + Duration::days(3);
    assert!(
        page.body.contains(&format!(
            "Payment failed on {}; access stops on {}.",
            failed_on.format("%B %-d, %Y"),
            stops.format("%B %-d, %Y")
        )),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("id=\"amount-due\">$10.00<"),
        "{}",
        page.body
    );
    assert!(page.body.contains("Visa •••• 0341"));
    let csrf = input(&page.body, "csrf_token").expect("a CSRF token");
    let failing = input(&page.body, "method_id").expect("the saved card");
    let pay = format!("{path}/pay");

    // A forged form, another buyer's subscription, no card chosen: nothing is charged.
    let r = b
        .post(
            &pay,
            &[
                ("csrf_token", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
                ("action", "pay"),
                ("method_id", failing.as_str()),
            ],
        )
        .await;
    assert_eq!(r.status, 403);
    let r = b
        .post(
            &format!("/portal/{slug}/subscriptions/{}/pay", other.subscription),
            &[
                ("csrf_token", csrf.as_str()),
                ("action", "pay"),
                ("token", "tok_visa"),
            ],
        )
        .await;
    assert_eq!(r.status, 404);
    let r = b
        .post(&pay, &[("csrf_token", csrf.as_str()), ("action", "pay")])
        .await;
    assert_eq!(r.status, 422);
    assert!(r.body.contains("Choose a card to pay with."));
    let sub: SubscriptionId = p.subscription.parse().unwrap();
    assert_eq!(app.stored(sub).await.buyer_attempts, 0);
    let other_sub: SubscriptionId = other.subscription.parse().unwrap();
    assert_eq!(app.stored(other_sub).await.status.as_str(), "past_due");

    // The saved card is declined again: the page says so.
    let r = b
        .post(
            &pay,
            &[
                ("csrf_token", csrf.as_str()),
                ("action", "pay"),
                ("method_id", failing.as_str()),
            ],
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("Your card was declined."), "{}", r.body);
    assert_eq!(app.stored(sub).await.buyer_attempts, 1);

    // Another card pays: the page again, active; the key without grace; the order paid.
    let r = b
        .post(
            &pay,
            &[
                ("csrf_token", csrf.as_str()),
                ("action", "pay"),
                ("method_id", ""),
                ("token", "tok_visa"),
            ],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(r.location, format!("{path}?done=paid"));
    let page = b.get(&r.location).await;
    assert!(page.body.contains("Payment received"), "{}", page.body);
    assert!(!page.body.contains("payment-failed"));
    assert_eq!(
        subscription(&app, &p.subscription).await["status"],
        "active"
    );
    let v = validate(&app, &p).await;
    v.expect(200);
    assert_eq!(v.body["grace_until"], Value::Null);
    let o = app
        .get(
            &format!("/v1/customer-portal/orders/{order}"),
            Some(&p.session),
        )
        .await;
    assert_eq!(o.body["status"], "paid");
    assert_eq!(
        app.stored(sub).await.payment_token.as_deref(),
        Some("tok_visa")
    );
}

/// Against localstripe: a trial whose card saves but never charges (4000000000000341)
/// goes past due; the buyer pays now with a new card that asks for 3-D Secure: the answer
/// is `requires_action` with the intent's secret, the status `pending` until the buyer
/// authenticates, then `succeeded` (payment-status asks Stripe and settles): one succeeded,
/// on-session charge at Stripe for the customer, the subscription active and billed with
/// the new card, the key without grace.
#[actix_web::test]
async fn with_stripe_a_past_due_buyer_pays_now_through_3d_secure_once() {
    use crate::stripe::{spawn_shop, CARD_3DS};

    let shop = spawn_shop(true).await;
    let clock = shop.clock.clone().expect("a manual clock");
    let trial = stripe_declining_trial(&shop, "stripe-pay-now", "ada@example.com").await;
    let (org, c) = (trial.org, trial.checkout);
    let trial_end = time(&c["trial_end"]);
    clock.set(trial_end + Duration::minutes(1));
    tollgate::app::subscription::sweep_subscriptions(&shop.app.state)
        .await
        .unwrap();
    let subs = shop
        .api()
        .read(&format!("/v1/subscriptions/?organization_id={org}"))
        .await;
    let s = subs.items()[0].clone();
    assert_eq!(s["status"], "past_due", "{s}");
    let sub = id(&s);
    let session = shop
        .app
        .post_json(
            "/v1/customer-sessions/",
            Some(&shop.app.token),
            &json!({"customer_id": s["customer_id"]}),
        )
        .await;
    session.expect(201);
    let session = session.body["token"].as_str().unwrap().to_string();
    let orders = shop
        .app
        .get("/v1/customer-portal/orders/", Some(&session))
        .await;
    let order = orders
        .items()
        .into_iter()
        .find(|o| o["status"] == "pending")
        .unwrap_or_else(|| panic!("no pending order: {}", orders.body));
    let order = id(&order);

    // The subscription's page offers the saved card, and allows Stripe.js (its origin,
    // frames and calls); the card is declined again, the page says so.
    let mut b = PortalBrowser::signed_in(&shop.app.address, "stripe-pay-now", &session).await;
    let path = format!("/portal/stripe-pay-now/subscriptions/{sub}");
    let page = b.get(&path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("id=\"payment-failed\""), "{}", page.body);
    assert!(page.body.contains("•••• 0341"), "{}", page.body);
    assert!(
        !page.body.contains("name=\"token\""),
        "no token field with Stripe"
    );
    let tollgate::payments::ProcessorClient::Stripe { sources, .. } =
        shop.app.state.processor.client()
    else {
        panic!("not Stripe");
    };
    assert!(!sources.script.is_empty());
    assert!(
        page.csp
            .contains(&format!("script-src 'self' {}", sources.script.join(" "))),
        "{}",
        page.csp
    );
    assert!(page.csp.contains("frame-src 'self'"), "{}", page.csp);
    let csrf = input(&page.body, "csrf_token").unwrap();
    let saved = input(&page.body, "method_id").unwrap();
    let r = b
        .post(
            &format!("{path}/pay"),
            &[
                ("csrf_token", csrf.as_str()),
                ("action", "pay"),
                ("method_id", saved.as_str()),
            ],
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("declined"), "{}", r.body);
    let before = shop.ls.intents().await.len();

    // A new card that asks for 3-D Secure.
    let card = shop.ls.card(CARD_3DS).await;
    let r = shop
        .app
        .post_json(
            &format!("/v1/customer-portal/orders/{order}/confirm-payment"),
            Some(&session),
            &json!({"confirmation_token_id": card, "payment_processor": "stripe"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["status"], "requires_action", "{}", r.body);
    let client_secret = r.body["client_secret"].as_str().unwrap().to_string();
    let intent = client_secret.split("_secret_").next().unwrap().to_string();
    let status = |session: String| {
        let app = &shop.app;
        let order = order.clone();
        async move {
            let r = app
                .get(
                    &format!("/v1/customer-portal/orders/{order}/payment-status"),
                    Some(&session),
                )
                .await;
            r.expect(200);
            r.body
        }
    };
    assert_eq!(status(session.clone()).await["status"], "pending");
    // Meanwhile another charge is refused: one is under way.
    let r = shop
        .app
        .post_json(
            &format!("/v1/customer-portal/orders/{order}/confirm-payment"),
            Some(&session),
            &json!({"confirmation_token_id": card}),
        )
        .await;
    assert_eq!(r.expect_error(409), "PaymentAlreadyInProgress");

    // The page, asked how it went, checks again later (its script polls).
    let check = [("csrf_token", csrf.as_str()), ("action", "check")];
    let r = b.post(&format!("{path}/pay"), &check).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert!(r.body.contains("id=\"pay-check\""), "{}", r.body);
    assert!(r.body.contains("/portal/assets/payments.js"), "{}", r.body);
    let script = b.get("/portal/assets/payments.js").await;
    assert_eq!(script.status, 200);
    assert!(script.body.contains("confirmCardPayment(secret)"));

    // The buyer authenticates; the page's next look settles it.
    shop.ls.authenticate(&intent, &client_secret, true).await;
    let r = b.post(&format!("{path}/pay"), &check).await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(r.location, format!("{path}?done=paid"));
    assert_eq!(
        status(session.clone()).await,
        json!({"status": "succeeded", "error": null})
    );
    let s = shop.api().read(&format!("/v1/subscriptions/{sub}")).await;
    assert_eq!(s.body["status"], "active", "{}", s.body);
    assert_eq!(s.body["past_due_at"], Value::Null);
    let keys = shop.license_keys(&org).await;
    let v = shop
        .app
        .post_json(
            VALIDATE,
            None,
            &json!({"key": keys[0]["key"], "organization_id": org}),
        )
        .await;
    v.expect(200);
    assert_eq!(v.body["grace_until"], Value::Null, "{}", v.body);
    let stored = shop
        .app
        .state
        .store
        .get::<tollgate_actors::subscription::Subscription>(
            &sub.parse::<SubscriptionId>().unwrap().key(),
        )
        .await
        .unwrap()
        .unwrap()
        .value;
    assert_eq!(stored.payment_token.as_deref(), Some(card.as_str()));

    // At Stripe: one charge of the buyer's, on-session, succeeded.
    let intents = shop.ls.intents().await;
    assert_eq!(intents.len(), before + 1, "{intents:?}");
    let pi = intents
        .iter()
        .find(|i| i["id"] == intent.as_str())
        .expect("the buyer's intent");
    assert_eq!(pi["status"], "succeeded", "{pi}");
    assert_ne!(pi["off_session"], true, "{pi}");
    assert_eq!(pi["metadata"]["order_id"], order.as_str());
    assert_eq!(
        intents
            .iter()
            .filter(|i| i["status"] == "succeeded")
            .count(),
        1
    );
}

/// With Stripe, the cards page takes a card in Stripe's card Element: the page carries the
/// Element's mount point and its key, and allows Stripe.js (its origin, frames and calls);
/// the payment method Stripe.js makes of the card is posted as the token and saved as the
/// default; a card whose bank asks for 3-D Secure comes back with the confirm step (Stripe.js
/// shows the dialog with the setup's secret, then the form asks how it ended).
#[actix_web::test]
async fn with_stripe_the_cards_page_adds_a_card_from_stripes_element() {
    use crate::stripe::{spawn_shop, CARD_3DS};

    let shop = spawn_shop(false).await;
    let org = stripe_declining_trial(&shop, "stripe-cards", "ada@example.com")
        .await
        .org;
    let mut customer = Value::Null;
    for _ in 0..200 {
        let s = shop
            .api()
            .read(&format!("/v1/subscriptions/?organization_id={org}"))
            .await;
        if let Some(s) = s.items().first() {
            customer = s["customer_id"].clone();
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(customer.is_string(), "no subscription");
    let session = shop
        .app
        .post_json(
            "/v1/customer-sessions/",
            Some(&shop.app.token),
            &json!({ "customer_id": customer }),
        )
        .await;
    session.expect(201);
    let session = session.body["token"].as_str().unwrap().to_string();
    let mut b = PortalBrowser::signed_in(&shop.app.address, "stripe-cards", &session).await;
    let path = "/portal/stripe-cards/payment-methods";
    let page = b.get(path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("id=\"card-element\""), "{}", page.body);
    assert!(page.body.contains("data-stripe-key=\"pk_"), "{}", page.body);
    assert!(
        page.body.contains("/portal/assets/payments.js"),
        "{}",
        page.body
    );
    assert!(
        !page.body.contains("Card token"),
        "no token field with Stripe"
    );
    let tollgate::payments::ProcessorClient::Stripe { sources, .. } =
        shop.app.state.processor.client()
    else {
        panic!("not Stripe");
    };
    assert!(
        page.csp
            .contains(&format!("script-src 'self' {}", sources.script.join(" "))),
        "{}",
        page.csp
    );
    let script = b.get("/portal/assets/payments.js").await;
    // Stripe's Payment Element: a ConfirmationToken, and the intent's next action.
    assert!(
        script.body.contains("createConfirmationToken"),
        "{}",
        script.body
    );
    assert!(script.body.contains("handleNextAction"), "{}", script.body);
    let csrf = input(&page.body, "csrf_token").unwrap();

    // Nothing typed: the page says so.
    let r = b
        .post(path, &[("csrf_token", csrf.as_str()), ("action", "add")])
        .await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert!(r.body.contains("Enter your card"), "{}", r.body);

    // A working card, as Stripe.js makes it: saved, the default.
    let visa = shop.ls.card("4242424242424242").await;
    let r = b
        .post(
            path,
            &[
                ("csrf_token", csrf.as_str()),
                ("action", "add"),
                ("token", visa.as_str()),
                ("set_default", "on"),
            ],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(r.location, format!("{path}?done=added"));
    let page = b.get(path).await;
    assert!(page.body.contains("Visa •••• 4242"), "{}", page.body);
    let r = shop
        .app
        .get(
            "/v1/customer-portal/customers/me/payment-methods",
            Some(&session),
        )
        .await;
    r.expect(200);
    let me = shop
        .app
        .get("/v1/customer-portal/customers/me", Some(&session))
        .await;
    let default = me.body["default_payment_method_id"].clone();
    let added = r
        .items()
        .into_iter()
        .find(|m| m["method_metadata"]["last4"] == "4242")
        .expect("the card added");
    assert_eq!(added["id"], default, "the new card is the default");

    // A card whose bank asks: the confirm step, with the setup's secret for Stripe.js.
    let asking = shop.ls.card(CARD_3DS).await;
    let r = b
        .post(
            path,
            &[
                ("csrf_token", csrf.as_str()),
                ("action", "add"),
                ("token", asking.as_str()),
            ],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("id=\"card-confirm\""), "{}", r.body);
    assert!(r.body.contains("data-client-secret=\"seti_"), "{}", r.body);
    let setup = input(&r.body, "setup_intent_id").unwrap();
    assert!(setup.starts_with("seti_"), "{setup}");
    assert!(
        !r.body.contains("name=\"set_default\""),
        "not asked for: {}",
        r.body
    );
    // Checked before the buyer answered the bank: not saved, the step again or a refusal.
    let r = b
        .post(
            path,
            &[
                ("csrf_token", csrf.as_str()),
                ("action", "confirm"),
                ("setup_intent_id", setup.as_str()),
            ],
        )
        .await;
    assert!(matches!(r.status, 200 | 400), "{}: {}", r.status, r.body);
    let page = b.get(path).await;
    assert_eq!(page.body.matches("•••• 3220").count(), 0, "{}", page.body);
}

/// A Stripe shop's declining trial: the organization, the product ("Pro", $10 a month after
/// a 14-day trial, granting a license key with 3 days of grace) and the checkout.
pub(crate) struct StripeTrial {
    pub org: String,
    pub product: String,
    pub checkout: Value,
}

/// On `shop` (localstripe), an organization `slug` selling "Pro" (see [`StripeTrial`]),
/// its trial bought by `email` with a card that attaches but fails every charge
/// (4000000000000341), and every event localstripe sent handled (later ones would look
/// stale once a manual clock moves: see stripe_subscriptions.rs).
pub(crate) async fn stripe_declining_trial(
    shop: &crate::stripe::Shop,
    slug: &str,
    email: &str,
) -> StripeTrial {
    use crate::checkouts::{
        attach_benefits, confirm as confirm_checkout, create_org, created, id_of, license_benefit,
        secret,
    };
    use crate::stripe::{list, paying, str_of, CARD_DECLINED};

    let api = shop.api();
    let org = create_org(api, slug).await;
    let benefit = license_benefit(api, &org, json!({"prefix": "PAY", "grace_days": 3})).await;
    let product = id_of(
        &api.posted(
            "/v1/products/",
            &json!({"name": "Pro", "organization_id": org, "recurring_interval": "month",
                    "trial_interval": "day", "trial_interval_count": 14,
                    "prices": [{"amount_type": "fixed", "price_amount": 1000,
                                "price_currency": "usd"}]}),
            201,
        )
        .await,
    );
    attach_benefits(api, &product, &[&benefit]).await;
    let declining = shop.ls.card(CARD_DECLINED).await;
    let checkout = created(
        api,
        &json!({"payment_processor": "stripe", "product_id": product}),
    )
    .await;
    confirm_checkout(api, &secret(&checkout), &paying(email, &declining))
        .await
        .expect(200);
    for event in list(&shop.ls.get("/v1/events?limit=100").await) {
        shop.wait_handled(str_of(&event, "id")).await;
    }
    StripeTrial {
        org,
        product,
        checkout,
    }
}
