//! Stripe: charges through PaymentIntents, and the verification of Stripe's webhooks.
//!
//! A charge creates (once per customer of ours, remembered in the store) a Stripe customer,
//! then a PaymentIntent with `confirm=true` for the amount, the buyer's ConfirmationToken
//! (`ctoken_…`) or PaymentMethod (`pm_…`), `setup_future_usage=off_session` for recurring
//! prices (renewals then charge the saved method with `off_session=true`), the checkout in
//! its metadata and the charge's idempotency key as Stripe's `Idempotency-Key`, so a
//! retried confirm never charges twice. The intent's status maps to a [`ChargeOutcome`].
//!
//! Webhooks are verified as Stripe documents it: the `Stripe-Signature` header carries
//! `t=<unix time>` and one or more `v1=<hex HMAC-SHA256 of "t.body">`; the timestamp must be
//! within [`SIGNATURE_TOLERANCE_SECS`] and one signature must match, compared in constant
//! time.

use std::time::Duration;

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;
use tollgate_storage::{Batch, Store};

use super::events::{
    DisputeUpdate, EventKind, PaymentUpdate, ProcessorEvent, RefundState, RefundUpdate,
};
use super::{
    ChargeFuture, ChargeOutcome, ChargeRequest, DescribeFuture, DetachFuture, DisputeCloseFuture,
    DisputeCloseOutcome, PageSources, PaymentProcessor, ProcessorClient, ProcessorError,
    RefundFuture, RefundOutcome, RefundRequest,
};
use crate::config::PaymentSettings;
use crate::domain::dispute::DisputeStatus;
use crate::domain::ids::{CheckoutId, OrderId, RefundId};
use crate::domain::refund::RefundReason;
use tollgate_actors::domain::ids::CustomerId;

#[path = "stripe_methods.rs"]
mod methods;

/// How far a webhook's signed timestamp may be from now (Stripe's libraries: 300 s).
pub const SIGNATURE_TOLERANCE_SECS: i64 = 300;

/// Stripe's API version these requests and the parsed objects follow.
pub const STRIPE_VERSION: &str = "2024-06-20";

pub struct StripeProcessor {
    http: reqwest::Client,
    api_base: String,
    secret_key: String,
    publishable_key: String,
    js_url: String,
    store: Store,
}

impl StripeProcessor {
    pub fn new(settings: &PaymentSettings, store: Store) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(40))
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Self {
            http,
            api_base: settings.stripe_api_base.trim_end_matches('/').to_string(),
            secret_key: settings.stripe_secret_key.clone(),
            publishable_key: settings.stripe_publishable_key.clone(),
            js_url: settings.stripe_js_url.clone(),
            store,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.api_base)
    }

    /// Sends one API request and parses the answer: the object on 2xx, a decline on a
    /// card error, [`ProcessorError`] when Stripe cannot be reached or refuses our keys.
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        form: &[(String, String)],
        idempotency_key: Option<&str>,
    ) -> Result<Result<serde_json::Value, StripeApiError>, ProcessorError> {
        let mut req = self
            .http
            .request(method.clone(), self.url(path))
            .bearer_auth(&self.secret_key)
            .header("Stripe-Version", STRIPE_VERSION);
        if let Some(key) = idempotency_key {
            req = req.header("Idempotency-Key", key);
        }
        if method == reqwest::Method::POST {
            req = req.form(form);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| ProcessorError(format!("{path}: {}", e.without_url())))?;
        let status = resp.status();
        let body: serde_json::Value = resp
            .json()
            .await
            .map_err(|e| ProcessorError(format!("{path}: unreadable answer ({status}): {e}")))?;
        if status.is_success() {
            return Ok(Ok(body));
        }
        let error: StripeApiError = body
            .get("error")
            .cloned()
            .and_then(|e| serde_json::from_value(e).ok())
            .unwrap_or_default();
        // Our keys, Stripe's limits or Stripe itself: nothing the buyer can fix; retry later.
        if matches!(status.as_u16(), 401 | 403 | 429) || status.is_server_error() {
            return Err(ProcessorError(format!(
                "{path}: {status} {}",
                error.message.as_deref().unwrap_or("")
            )));
        }
        Ok(Err(error))
    }

    /// The Stripe customer of one of ours: created on first use, then remembered.
    async fn stripe_customer(&self, request: &ChargeRequest) -> Result<String, ProcessorError> {
        let meta_key = customer_meta_key(request.customer_id);
        let stored = self
            .store
            .get_meta(&meta_key)
            .await
            .map_err(|e| ProcessorError(e.to_string()))?;
        if let Some(id) = stored.and_then(|v| String::from_utf8(v).ok()) {
            return Ok(id);
        }
        let mut form = vec![
            ("email".to_string(), request.customer_email.clone()),
            (
                "metadata[tollgate_customer_id]".to_string(),
                request.customer_id.to_string(),
            ),
        ];
        if let Some(name) = &request.customer_name {
            form.push(("name".into(), name.clone()));
        }
        // The idempotency key makes a crash between creating and remembering harmless.
        let key = format!("customer:{}", request.customer_id);
        let customer = self
            .call(reqwest::Method::POST, "/v1/customers", &form, Some(&key))
            .await?
            .map_err(|e| ProcessorError(format!("creating a customer: {}", e.describe())))?;
        let id = customer
            .get("id")
            .and_then(|v| v.as_str())
            .ok_or_else(|| ProcessorError("Stripe customer without an id".into()))?
            .to_string();
        let mut batch = Batch::new();
        batch.put_meta(&meta_key, id.clone().into_bytes());
        self.store
            .commit_durable(&batch)
            .await
            .map_err(|e| ProcessorError(e.to_string()))?;
        Ok(id)
    }
}

pub fn customer_meta_key(customer: CustomerId) -> String {
    format!("stripe_customer:{customer}")
}

/// The methods an intent accepts: those the seller turned on in Stripe's Dashboard
/// (`automatic_payment_methods`, as Stripe's Payment Element expects), redirect-based ones
/// (iDEAL, Bancontact) only when the buyer's browser has somewhere to come back to
/// (`return_url`); a charge without one (renewals, off-session) never redirects.
fn automatic_methods(form: &mut Vec<(String, String)>, return_url: Option<&str>) {
    form.push((
        "automatic_payment_methods[enabled]".to_string(),
        "true".to_string(),
    ));
    if return_url.is_none() {
        form.push((
            "automatic_payment_methods[allow_redirects]".to_string(),
            "never".to_string(),
        ));
    }
}

/// The buyer's payment as Stripe takes it: a ConfirmationToken (`ctoken_…`, the Payment
/// Element's) or a PaymentMethod (`pm_…`, the card Element's and renewals').
fn payment_source(form: &mut Vec<(String, String)>, token: Option<&str>) {
    match token {
        Some(t) if t.starts_with("ctoken_") => {
            form.push(("confirmation_token".into(), t.to_string()));
        }
        Some(t) => form.push(("payment_method".into(), t.to_string())),
        None => {}
    }
}

/// The form of the PaymentIntent a charge creates; `return_url`: where a redirect-based
/// method brings the buyer back (the checkout's confirmation page).
pub fn intent_form(
    request: &ChargeRequest,
    stripe_customer: &str,
    return_url: Option<&str>,
) -> Vec<(String, String)> {
    let mut form = vec![
        ("amount".to_string(), request.amount.to_string()),
        ("currency".to_string(), request.currency.to_lowercase()),
        ("customer".to_string(), stripe_customer.to_string()),
        ("confirm".to_string(), "true".to_string()),
    ];
    automatic_methods(&mut form, return_url);
    if let Some(url) = return_url {
        form.push(("return_url".into(), url.to_string()));
    }
    payment_source(&mut form, request.confirmation_token.as_deref());
    if request.off_session {
        form.push(("off_session".into(), "true".into()));
    } else if request.setup_future_usage {
        form.push(("setup_future_usage".into(), "off_session".into()));
    }
    for (k, v) in &request.metadata {
        form.push((format!("metadata[{k}]"), v.clone()));
    }
    form
}

/// The form of the SetupIntent a trial's checkout (or the portal) creates: for the
/// customer, `usage=off_session`, the methods as a charge's intent ([`automatic_methods`]).
pub fn setup_form(
    request: &ChargeRequest,
    stripe_customer: &str,
    return_url: Option<&str>,
) -> Vec<(String, String)> {
    let mut form = vec![
        ("customer".to_string(), stripe_customer.to_string()),
        ("usage".to_string(), "off_session".to_string()),
    ];
    automatic_methods(&mut form, return_url);
    for (k, v) in &request.metadata {
        form.push((format!("metadata[{k}]"), v.clone()));
    }
    form
}

/// The confirmation of a SetupIntent: the buyer's method, and where a redirect comes back.
pub fn setup_confirm_form(
    request: &ChargeRequest,
    return_url: Option<&str>,
) -> Vec<(String, String)> {
    let mut form = Vec::new();
    payment_source(&mut form, request.confirmation_token.as_deref());
    if let Some(url) = return_url {
        form.push(("return_url".into(), url.to_string()));
    }
    form
}

/// What Stripe says in `error` of a failed request.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct StripeApiError {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub code: Option<String>,
    pub decline_code: Option<String>,
    pub message: Option<String>,
    pub payment_intent: Option<serde_json::Value>,
}

impl StripeApiError {
    fn describe(&self) -> String {
        self.message
            .clone()
            .or_else(|| self.code.clone())
            .unwrap_or_else(|| "unknown error".into())
    }
}

/// The parts of a PaymentIntent Tollgate reads.
#[derive(Debug, Clone, Deserialize)]
pub struct PaymentIntent {
    pub id: String,
    pub status: String,
    pub client_secret: Option<String>,
    pub payment_method: Option<serde_json::Value>,
    #[serde(default)]
    pub metadata: std::collections::BTreeMap<String, String>,
    /// A SetupIntent's is `last_setup_error`.
    #[serde(alias = "last_setup_error")]
    pub last_payment_error: Option<StripeApiError>,
}

impl PaymentIntent {
    pub fn payment_method_id(&self) -> Option<String> {
        match &self.payment_method {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Object(o)) => {
                o.get("id").and_then(|v| v.as_str()).map(str::to_string)
            }
            _ => None,
        }
    }

    /// What the intent's status means for the checkout or renewal it pays.
    pub fn outcome(&self) -> ChargeOutcome {
        match self.status.as_str() {
            "succeeded" => ChargeOutcome::Succeeded {
                intent_id: self.id.clone(),
                payment_method: self.payment_method_id(),
            },
            // Authorized with manual capture is as good as paid for us: we never hold it.
            "requires_capture" => ChargeOutcome::Succeeded {
                intent_id: self.id.clone(),
                payment_method: self.payment_method_id(),
            },
            "requires_action" | "processing" | "requires_confirmation" => ChargeOutcome::Pending {
                intent_id: self.id.clone(),
                status: self.status.clone(),
                client_secret: self.client_secret.clone(),
            },
            // `requires_payment_method` after an attempt (declined or failed authentication)
            // or `canceled`.
            _ => ChargeOutcome::Declined {
                message: self
                    .last_payment_error
                    .as_ref()
                    .and_then(|e| e.message.clone()),
            },
        }
    }
}

/// What the checkout page needs beyond itself: Stripe.js's origin for its script, the
/// origins Stripe.js calls, and those of the frames it opens. Stripe's own Stripe.js
/// (its documented Content-Security-Policy) runs its card field and 3-D Secure in frames of
/// `js.stripe.com`, `*.js.stripe.com` and `hooks.stripe.com`, and calls the API; another
/// one (a fake in tests) is allowed its own origin and the API's.
pub fn page_sources(js_url: &str, api_base: &str) -> PageSources {
    let origin = |u: &str| {
        url::Url::parse(u)
            .ok()
            .map(|u| u.origin())
            .filter(url::Origin::is_tuple)
            .map(|o| o.ascii_serialization())
    };
    let Some(script) = origin(js_url) else {
        return PageSources::default();
    };
    let mut connect = vec![script.clone()];
    if let Some(api) = origin(api_base).filter(|a| *a != script) {
        connect.push(api);
    }
    let frame = if script == STRIPE_JS_ORIGIN {
        vec![
            STRIPE_JS_ORIGIN.to_string(),
            "https://*.js.stripe.com".to_string(),
            "https://hooks.stripe.com".to_string(),
        ]
    } else {
        vec![script.clone()]
    };
    PageSources {
        script: vec![script],
        connect,
        frame,
    }
}

/// The origin of Stripe's own Stripe.js.
const STRIPE_JS_ORIGIN: &str = "https://js.stripe.com";

fn parse_intent(value: serde_json::Value) -> Result<PaymentIntent, ProcessorError> {
    serde_json::from_value(value)
        .map_err(|e| ProcessorError(format!("unexpected PaymentIntent from Stripe: {e}")))
}

impl PaymentProcessor for StripeProcessor {
    fn client(&self) -> ProcessorClient {
        ProcessorClient::Stripe {
            publishable_key: self.publishable_key.clone(),
            js_url: self.js_url.clone(),
            sources: page_sources(&self.js_url, &self.api_base),
        }
    }

    fn charge(&self, request: ChargeRequest) -> ChargeFuture {
        self.charge_returning(request, None)
    }

    fn charge_from_page(&self, request: ChargeRequest, return_url: String) -> ChargeFuture {
        self.charge_returning(request, Some(return_url))
    }

    fn setup(&self, request: ChargeRequest) -> ChargeFuture {
        self.setup_returning(request, None)
    }

    fn setup_from_page(&self, request: ChargeRequest, return_url: String) -> ChargeFuture {
        self.setup_returning(request, Some(return_url))
    }

    fn intent(&self, intent_id: &str) -> ChargeFuture {
        let this = self.clone_handle();
        // A trial's checkout waits on a SetupIntent, every other on a PaymentIntent.
        let path = if intent_id.starts_with("seti_") {
            format!("/v1/setup_intents/{intent_id}")
        } else {
            format!("/v1/payment_intents/{intent_id}")
        };
        Box::pin(async move {
            match this.call(reqwest::Method::GET, &path, &[], None).await? {
                Ok(intent) => Ok(parse_intent(intent)?.outcome()),
                Err(e) => Err(ProcessorError(format!("{path}: {}", e.describe()))),
            }
        })
    }

    /// A Refund of the order's PaymentIntent (`amount` tax included), with the refund's
    /// id as Stripe's `Idempotency-Key`: a retried request is the same refund.
    fn refund(&self, request: RefundRequest) -> RefundFuture {
        let this = self.clone_handle();
        Box::pin(async move {
            let Some(intent) = request.payment_id.clone() else {
                return Ok(RefundOutcome::Failed {
                    processor_id: None,
                    message: "This order has no Stripe payment to refund.".into(),
                });
            };
            let mut form = vec![
                ("payment_intent".to_string(), intent),
                ("amount".to_string(), request.amount.to_string()),
                ("reason".to_string(), request.reason.to_string()),
            ];
            for (k, v) in &request.metadata {
                form.push((format!("metadata[{k}]"), v.clone()));
            }
            let answer = this
                .call(
                    reqwest::Method::POST,
                    "/v1/refunds",
                    &form,
                    Some(&request.idempotency_key),
                )
                .await?;
            match answer {
                Ok(refund) => Ok(refund_outcome(&refund)),
                Err(e) => Ok(RefundOutcome::Failed {
                    processor_id: None,
                    message: e.message.clone().unwrap_or_else(|| e.describe()),
                }),
            }
        })
    }

    /// `POST /v1/disputes/{id}/close`: Stripe answers the Dispute, now `lost`; a dispute
    /// closed already (or unknown) is Stripe's 4xx, a refusal.
    fn close_dispute(&self, processor_id: &str) -> DisputeCloseFuture {
        let this = self.clone_handle();
        let id = processor_id.to_string();
        Box::pin(async move {
            let path = format!("/v1/disputes/{id}/close");
            match this.call(reqwest::Method::POST, &path, &[], None).await? {
                Ok(dispute) => dispute_update(&dispute)
                    .map(DisputeCloseOutcome::Closed)
                    .ok_or_else(|| ProcessorError(format!("{path}: not a dispute: {dispute}"))),
                Err(e) => Ok(DisputeCloseOutcome::Refused {
                    message: e.message.clone().unwrap_or_else(|| e.describe()),
                }),
            }
        })
    }

    fn describe_method(&self, processor_ref: &str) -> DescribeFuture {
        methods::describe(self.clone_handle(), processor_ref)
    }

    fn detach_method(&self, processor_ref: &str) -> DetachFuture {
        methods::detach(self.clone_handle(), processor_ref)
    }
}

/// A Stripe Refund object's outcome: `succeeded`, `pending` (and `requires_action`), or
/// `failed`/`canceled`.
pub fn refund_outcome(refund: &serde_json::Value) -> RefundOutcome {
    let id = refund["id"].as_str().unwrap_or_default().to_string();
    match refund["status"].as_str() {
        Some("succeeded") => RefundOutcome::Succeeded { processor_id: id },
        Some("failed") | Some("canceled") => RefundOutcome::Failed {
            message: refund["failure_reason"]
                .as_str()
                .map(|r| format!("The refund failed at Stripe ({r})."))
                .unwrap_or_else(|| "The refund failed at Stripe.".into()),
            processor_id: Some(id),
        },
        _ => RefundOutcome::Pending { processor_id: id },
    }
}

impl StripeProcessor {
    /// A PaymentIntent confirmed at once ([`intent_form`]).
    fn charge_returning(&self, request: ChargeRequest, return_url: Option<String>) -> ChargeFuture {
        let this = self.clone_handle();
        Box::pin(async move {
            let customer = this.stripe_customer(&request).await?;
            let form = intent_form(&request, &customer, return_url.as_deref());
            let answer = this
                .call(
                    reqwest::Method::POST,
                    "/v1/payment_intents",
                    &form,
                    Some(&request.idempotency_key),
                )
                .await?;
            match answer {
                Ok(intent) => Ok(parse_intent(intent)?.outcome()),
                Err(error) => {
                    // A declined confirmation comes back as an error carrying the intent.
                    if let Some(intent) = error.payment_intent.clone() {
                        if let Ok(intent) = parse_intent(intent) {
                            if let ChargeOutcome::Pending { .. } = intent.outcome() {
                                return Ok(intent.outcome());
                            }
                        }
                    }
                    Ok(ChargeOutcome::Declined {
                        message: Some(error.describe()),
                    })
                }
            }
        })
    }

    /// A SetupIntent ([`setup_form`]) created then confirmed with the buyer's method (two
    /// requests, each with its own idempotency key derived from the request's). Stripe
    /// attaches the method to the customer once the setup succeeds.
    fn setup_returning(&self, request: ChargeRequest, return_url: Option<String>) -> ChargeFuture {
        let this = self.clone_handle();
        Box::pin(async move {
            let customer = this.stripe_customer(&request).await?;
            let form = setup_form(&request, &customer, return_url.as_deref());
            let key = format!("{}:setup", request.idempotency_key);
            let created = match this
                .call(
                    reqwest::Method::POST,
                    "/v1/setup_intents",
                    &form,
                    Some(&key),
                )
                .await?
            {
                Ok(v) => parse_intent(v)?,
                Err(e) => {
                    return Err(ProcessorError(format!(
                        "creating a SetupIntent: {}",
                        e.describe()
                    )))
                }
            };
            let confirm = setup_confirm_form(&request, return_url.as_deref());
            let path = format!("/v1/setup_intents/{}/confirm", created.id);
            let key = format!("{}:confirm", request.idempotency_key);
            match this
                .call(reqwest::Method::POST, &path, &confirm, Some(&key))
                .await?
            {
                Ok(v) => Ok(parse_intent(v)?.outcome()),
                Err(error) => Ok(ChargeOutcome::Declined {
                    message: Some(error.describe()),
                }),
            }
        })
    }
}

impl StripeProcessor {
    /// A copy sharing the HTTP client's pool, for the `'static` futures.
    fn clone_handle(&self) -> StripeProcessor {
        StripeProcessor {
            http: self.http.clone(),
            api_base: self.api_base.clone(),
            secret_key: self.secret_key.clone(),
            publishable_key: self.publishable_key.clone(),
            js_url: self.js_url.clone(),
            store: self.store.clone(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Webhooks

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("missing Stripe-Signature header")]
    Missing,
    #[error("malformed Stripe-Signature header")]
    Malformed,
    #[error("timestamp outside the tolerance")]
    Stale,
    #[error("no signature matches")]
    Mismatch,
}

/// Checks a `Stripe-Signature` header against the raw body.
pub fn verify_signature(
    header: Option<&str>,
    body: &[u8],
    secret: &str,
    now: DateTime<Utc>,
) -> Result<(), SignatureError> {
    let header = header.ok_or(SignatureError::Missing)?;
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        let Some((k, v)) = part.trim().split_once('=') else {
            continue;
        };
        match k {
            "t" => timestamp = v.parse::<i64>().ok(),
            "v1" => {
                if let Some(bytes) = hex_decode(v) {
                    signatures.push(bytes);
                }
            }
            _ => {}
        }
    }
    let timestamp = timestamp.ok_or(SignatureError::Malformed)?;
    if signatures.is_empty() {
        return Err(SignatureError::Malformed);
    }
    if (now.timestamp() - timestamp).abs() > SIGNATURE_TOLERANCE_SECS {
        return Err(SignatureError::Stale);
    }
    for signature in signatures {
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
            return Err(SignatureError::Mismatch);
        };
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        // `verify_slice` compares in constant time.
        if mac.verify_slice(&signature).is_ok() {
            return Ok(());
        }
    }
    Err(SignatureError::Mismatch)
}

/// `t=…,v1=…` for `body` at `timestamp` (tests, and the documentation of the format).
pub fn sign(body: &[u8], secret: &str, timestamp: i64) -> String {
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
        Ok(mac) => mac,
        Err(_) => return String::new(),
    };
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("t={timestamp},v1={hex}")
}

fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok()))
        .collect()
}

/// A Stripe event, with the object it carries.
#[derive(Debug, Clone, Deserialize)]
pub struct Event {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub data: EventData,
}

#[derive(Debug, Clone, Deserialize)]
pub struct EventData {
    pub object: serde_json::Value,
}

/// The store key that marks an event as handled.
pub fn event_meta_key(event_id: &str) -> String {
    format!("stripe_event:{event_id}")
}

/// A verified webhook body that is not an event Tollgate can read (Stripe delivers it
/// again later).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    #[error("Not a Stripe event: {0}.")]
    NotAnEvent(String),
    #[error("Not a PaymentIntent: {0}.")]
    NotAnIntent(String),
}

/// A verified webhook body as the typed event it carries: Stripe's type strings and field
/// names end here. Types Tollgate does not act on are [`EventKind::Ignored`].
pub fn parse_event(body: &[u8]) -> Result<ProcessorEvent, EventError> {
    let event: Event =
        serde_json::from_slice(body).map_err(|e| EventError::NotAnEvent(e.to_string()))?;
    let kind = typed_event(&event)?;
    Ok(ProcessorEvent { id: event.id, kind })
}

/// What a Stripe event says, in Tollgate's words.
pub fn typed_event(event: &Event) -> Result<EventKind, EventError> {
    let object = &event.data.object;
    Ok(match event.kind.as_str() {
        "refund.created" | "refund.updated" | "refund.failed" => {
            EventKind::RefundUpdated(refund_update(object, None).into_iter().collect())
        }
        "charge.refunded" => {
            let payment = object["payment_intent"].as_str();
            let refunds = object["refunds"]["data"].as_array();
            EventKind::RefundUpdated(
                refunds
                    .into_iter()
                    .flatten()
                    .filter_map(|r| refund_update(r, payment))
                    .collect(),
            )
        }
        "charge.dispute.created" | "charge.dispute.updated" | "charge.dispute.closed" => {
            match dispute_update(object) {
                Some(d) => EventKind::DisputeChanged(d),
                None => EventKind::Ignored,
            }
        }
        // A trial's checkout saves the card with a SetupIntent (the same fields).
        "payment_intent.succeeded" | "setup_intent.succeeded" => {
            EventKind::PaymentSucceeded(payment_update(object)?)
        }
        // A delayed method (SEPA Direct Debit) was accepted: it settles in days.
        "payment_intent.processing" => EventKind::PaymentProcessing(payment_update(object)?),
        "payment_intent.payment_failed"
        | "payment_intent.canceled"
        | "setup_intent.setup_failed"
        | "setup_intent.canceled" => EventKind::PaymentFailed(payment_update(object)?),
        _ => EventKind::Ignored,
    })
}

/// A PaymentIntent's (or SetupIntent's) state: the checkout named in its metadata.
fn payment_update(object: &serde_json::Value) -> Result<PaymentUpdate, EventError> {
    let intent: PaymentIntent = serde_json::from_value(object.clone())
        .map_err(|e| EventError::NotAnIntent(e.to_string()))?;
    let checkout_id = intent
        .metadata
        .get("checkout_id")
        .and_then(|s| s.parse::<uuid::Uuid>().ok())
        .map(CheckoutId);
    let order_id = intent
        .metadata
        .get("order_id")
        .and_then(|s| s.parse::<uuid::Uuid>().ok())
        .map(OrderId);
    Ok(PaymentUpdate {
        payment_id: intent.id.clone(),
        checkout_id,
        order_id,
        outcome: intent.outcome(),
    })
}

/// A Stripe Refund object (`payment`: its charge's intent, when the refund does not name
/// one); `None` without an id.
fn refund_update(refund: &serde_json::Value, payment: Option<&str>) -> Option<RefundUpdate> {
    let processor_id = refund["id"].as_str().filter(|s| !s.is_empty())?;
    let status = match refund["status"].as_str().unwrap_or("pending") {
        "succeeded" => RefundState::Succeeded,
        "failed" | "canceled" => RefundState::Failed,
        _ => RefundState::Pending,
    };
    Some(RefundUpdate {
        processor_id: processor_id.to_string(),
        refund_id: refund["metadata"]["refund_id"]
            .as_str()
            .and_then(|s| s.parse::<uuid::Uuid>().ok())
            .map(RefundId),
        payment_id: refund["payment_intent"]
            .as_str()
            .or(payment)
            .map(str::to_string),
        amount: refund["amount"].as_i64().unwrap_or(0),
        currency: refund["currency"].as_str().unwrap_or_default().to_string(),
        status,
        reason: match refund["reason"].as_str() {
            Some("duplicate") => RefundReason::Duplicate,
            Some("fraudulent") => RefundReason::Fraudulent,
            Some("requested_by_customer") => RefundReason::CustomerRequest,
            _ => RefundReason::Other,
        },
    })
}

/// A Stripe Dispute object; `None` without an id or with a status Stripe does not send.
fn dispute_update(object: &serde_json::Value) -> Option<DisputeUpdate> {
    let processor_id = object["id"].as_str().filter(|s| !s.is_empty())?;
    let status = object["status"]
        .as_str()
        .and_then(DisputeStatus::from_stripe)?;
    Some(DisputeUpdate {
        processor_id: processor_id.to_string(),
        payment_id: object["payment_intent"].as_str().map(str::to_string),
        status,
        amount: object["amount"].as_i64().unwrap_or(0),
        currency: object["currency"].as_str().unwrap_or_default().to_string(),
        reason: object["reason"].as_str().map(str::to_string),
        evidence_due_by: object["evidence_details"]["due_by"]
            .as_i64()
            .and_then(|t| DateTime::from_timestamp(t, 0)),
    })
}

#[cfg(test)]
#[path = "stripe_events_tests.rs"]
mod events_tests;

#[cfg(test)]
#[path = "stripe_tests.rs"]
mod tests;
