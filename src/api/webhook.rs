//! Webhooks: endpoints, events, deliveries (Polar's `webhook/schemas.py`), and the body
//! every delivery carries.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::Maybe;
use crate::domain::ids::OrganizationId;
use crate::domain::webhook::{
    NewWebhookEndpoint, WebhookDelivery, WebhookEndpoint, WebhookEndpointChange, WebhookEvent,
    WebhookEventState, WebhookFormat as Format,
};
use crate::error::ApiError;

/// The format of the webhook payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = WebhookFormat)]
pub enum WebhookFormat {
    Raw,
    Discord,
    Slack,
}

impl From<WebhookFormat> for Format {
    fn from(f: WebhookFormat) -> Self {
        match f {
            WebhookFormat::Raw => Format::Raw,
            WebhookFormat::Discord => Format::Discord,
            WebhookFormat::Slack => Format::Slack,
        }
    }
}

impl From<Format> for WebhookFormat {
    fn from(f: Format) -> Self {
        match f {
            Format::Raw => WebhookFormat::Raw,
            Format::Discord => WebhookFormat::Discord,
            Format::Slack => WebhookFormat::Slack,
        }
    }
}

/// What happened. Polar's types for what Tollgate does, and the `license_key.*` types
/// Polar lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[schema(as = WebhookEventType)]
pub enum WebhookEventType {
    #[serde(rename = "checkout.created")]
    CheckoutCreated,
    #[serde(rename = "checkout.updated")]
    CheckoutUpdated,
    #[serde(rename = "order.created")]
    OrderCreated,
    #[serde(rename = "order.paid")]
    OrderPaid,
    #[serde(rename = "order.updated")]
    OrderUpdated,
    #[serde(rename = "order.refunded")]
    OrderRefunded,
    #[serde(rename = "refund.created")]
    RefundCreated,
    #[serde(rename = "refund.updated")]
    RefundUpdated,
    #[serde(rename = "subscription.created")]
    SubscriptionCreated,
    #[serde(rename = "subscription.updated")]
    SubscriptionUpdated,
    #[serde(rename = "subscription.active")]
    SubscriptionActive,
    #[serde(rename = "subscription.canceled")]
    SubscriptionCanceled,
    #[serde(rename = "subscription.uncanceled")]
    SubscriptionUncanceled,
    #[serde(rename = "subscription.revoked")]
    SubscriptionRevoked,
    /// A renewal was declined: the subscription went `past_due` (once per failed
    /// renewal, not at each retry).
    #[serde(rename = "subscription.past_due")]
    SubscriptionPastDue,
    /// A paid renewal started a new billing period.
    #[serde(rename = "subscription.cycled")]
    SubscriptionCycled,
    #[serde(rename = "product.created")]
    ProductCreated,
    #[serde(rename = "product.updated")]
    ProductUpdated,
    #[serde(rename = "benefit.created")]
    BenefitCreated,
    #[serde(rename = "benefit.updated")]
    BenefitUpdated,
    #[serde(rename = "benefit_grant.created")]
    BenefitGrantCreated,
    #[serde(rename = "benefit_grant.updated")]
    BenefitGrantUpdated,
    /// A subscription's grant renewed for the new period (with `subscription.cycled`).
    #[serde(rename = "benefit_grant.cycled")]
    BenefitGrantCycled,
    #[serde(rename = "benefit_grant.revoked")]
    BenefitGrantRevoked,
    #[serde(rename = "customer.created")]
    CustomerCreated,
    #[serde(rename = "customer.updated")]
    CustomerUpdated,
    #[serde(rename = "organization.updated")]
    OrganizationUpdated,
    /// An open checkout passed its `expires_at` and was expired by the sweep.
    #[serde(rename = "checkout.expired")]
    CheckoutExpired,
    /// A customer was deleted (`deleted_at` set; `metadata.__external_id` keeps its external id).
    #[serde(rename = "customer.deleted")]
    CustomerDeleted,
    /// What `GET /v1/customers/{id}/state` answers changed: the state after the change.
    #[serde(rename = "customer.state_changed")]
    CustomerStateChanged,
    #[serde(rename = "discount.created")]
    DiscountCreated,
    #[serde(rename = "discount.updated")]
    DiscountUpdated,
    /// A discount was deleted (the payload is the discount, with no deletion marker).
    #[serde(rename = "discount.deleted")]
    DiscountDeleted,
    #[serde(rename = "license_key.created")]
    LicenseKeyCreated,
    #[serde(rename = "license_key.updated")]
    LicenseKeyUpdated,
    #[serde(rename = "license_key.revoked")]
    LicenseKeyRevoked,
    #[serde(rename = "license_key.activated")]
    LicenseKeyActivated,
    #[serde(rename = "license_key.deactivated")]
    LicenseKeyDeactivated,
    #[serde(rename = "license_key.limit_reached")]
    LicenseKeyLimitReached,
}

impl WebhookEventType {
    pub const ALL: &'static [WebhookEventType] = &[
        WebhookEventType::CheckoutCreated,
        WebhookEventType::CheckoutUpdated,
        WebhookEventType::OrderCreated,
        WebhookEventType::OrderPaid,
        WebhookEventType::OrderUpdated,
        WebhookEventType::OrderRefunded,
        WebhookEventType::RefundCreated,
        WebhookEventType::RefundUpdated,
        WebhookEventType::SubscriptionCreated,
        WebhookEventType::SubscriptionUpdated,
        WebhookEventType::SubscriptionActive,
        WebhookEventType::SubscriptionCanceled,
        WebhookEventType::SubscriptionUncanceled,
        WebhookEventType::SubscriptionRevoked,
        WebhookEventType::SubscriptionPastDue,
        WebhookEventType::SubscriptionCycled,
        WebhookEventType::ProductCreated,
        WebhookEventType::ProductUpdated,
        WebhookEventType::BenefitCreated,
        WebhookEventType::BenefitUpdated,
        WebhookEventType::BenefitGrantCreated,
        WebhookEventType::BenefitGrantUpdated,
        WebhookEventType::BenefitGrantCycled,
        WebhookEventType::BenefitGrantRevoked,
        WebhookEventType::CustomerCreated,
        WebhookEventType::CustomerUpdated,
        WebhookEventType::OrganizationUpdated,
        WebhookEventType::CheckoutExpired,
        WebhookEventType::CustomerDeleted,
        WebhookEventType::CustomerStateChanged,
        WebhookEventType::DiscountCreated,
        WebhookEventType::DiscountUpdated,
        WebhookEventType::DiscountDeleted,
        WebhookEventType::LicenseKeyCreated,
        WebhookEventType::LicenseKeyUpdated,
        WebhookEventType::LicenseKeyRevoked,
        WebhookEventType::LicenseKeyActivated,
        WebhookEventType::LicenseKeyDeactivated,
        WebhookEventType::LicenseKeyLimitReached,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            WebhookEventType::CheckoutCreated => "checkout.created",
            WebhookEventType::CheckoutUpdated => "checkout.updated",
            WebhookEventType::OrderCreated => "order.created",
            WebhookEventType::OrderPaid => "order.paid",
            WebhookEventType::OrderUpdated => "order.updated",
            WebhookEventType::OrderRefunded => "order.refunded",
            WebhookEventType::RefundCreated => "refund.created",
            WebhookEventType::RefundUpdated => "refund.updated",
            WebhookEventType::SubscriptionCreated => "subscription.created",
            WebhookEventType::SubscriptionUpdated => "subscription.updated",
            WebhookEventType::SubscriptionActive => "subscription.active",
            WebhookEventType::SubscriptionCanceled => "subscription.canceled",
            WebhookEventType::SubscriptionUncanceled => "subscription.uncanceled",
            WebhookEventType::SubscriptionRevoked => "subscription.revoked",
            WebhookEventType::SubscriptionPastDue => "subscription.past_due",
            WebhookEventType::SubscriptionCycled => "subscription.cycled",
            WebhookEventType::ProductCreated => "product.created",
            WebhookEventType::ProductUpdated => "product.updated",
            WebhookEventType::BenefitCreated => "benefit.created",
            WebhookEventType::BenefitUpdated => "benefit.updated",
            WebhookEventType::BenefitGrantCreated => "benefit_grant.created",
            WebhookEventType::BenefitGrantUpdated => "benefit_grant.updated",
            WebhookEventType::BenefitGrantCycled => "benefit_grant.cycled",
            WebhookEventType::BenefitGrantRevoked => "benefit_grant.revoked",
            WebhookEventType::CustomerCreated => "customer.created",
            WebhookEventType::CustomerUpdated => "customer.updated",
            WebhookEventType::OrganizationUpdated => "organization.updated",
            WebhookEventType::CheckoutExpired => "checkout.expired",
            WebhookEventType::CustomerDeleted => "customer.deleted",
            WebhookEventType::CustomerStateChanged => "customer.state_changed",
            WebhookEventType::DiscountCreated => "discount.created",
            WebhookEventType::DiscountUpdated => "discount.updated",
            WebhookEventType::DiscountDeleted => "discount.deleted",
            WebhookEventType::LicenseKeyCreated => "license_key.created",
            WebhookEventType::LicenseKeyUpdated => "license_key.updated",
            WebhookEventType::LicenseKeyRevoked => "license_key.revoked",
            WebhookEventType::LicenseKeyActivated => "license_key.activated",
            WebhookEventType::LicenseKeyDeactivated => "license_key.deactivated",
            WebhookEventType::LicenseKeyLimitReached => "license_key.limit_reached",
        }
    }

    pub fn parse(s: &str) -> Option<WebhookEventType> {
        Self::ALL.iter().copied().find(|t| t.as_str() == s)
    }
}

/// A webhook endpoint.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = WebhookEndpoint)]
pub struct WebhookEndpointView {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    /// The URL where the webhook events will be sent.
    pub url: String,
    /// An optional name to help organize and identify it.
    pub name: Option<String>,
    pub format: WebhookFormat,
    /// The secret used to sign the webhook events: its UTF-8 bytes are the HMAC-SHA256 key
    /// (Polar's encoding; pass `base64(secret)` to a Standard Webhooks library).
    pub secret: String,
    pub organization_id: Uuid,
    /// The events that will trigger the webhook.
    pub events: Vec<WebhookEventType>,
    /// Whether the endpoint is enabled and will receive events.
    pub enabled: bool,
    /// The API version chosen for the endpoint (`2026-04` for one created before versions).
    /// Payloads are sent in Tollgate's default shape, which every version's client parses
    /// (docs/differences.md), with this version as their `api_version`.
    pub api_version: String,
    /// False: signatures use the secret's UTF-8 bytes as the key, Polar's own encoding
    /// (a Standard Webhooks library verifies with `base64(secret)`).
    pub uses_standard_webhook_signature: bool,
}

impl From<&WebhookEndpoint> for WebhookEndpointView {
    fn from(e: &WebhookEndpoint) -> Self {
        Self {
            id: e.id.uuid(),
            created_at: e.created_at,
            modified_at: e.modified_at,
            url: e.url.clone(),
            name: e.name.clone(),
            format: e.format.into(),
            secret: e.secret.clone(),
            organization_id: e.organization_id.uuid(),
            events: e
                .events
                .iter()
                .filter_map(|t| WebhookEventType::parse(t))
                .collect(),
            enabled: e.enabled,
            api_version: e
                .api_version
                .clone()
                .unwrap_or_else(|| crate::api::version::DEFAULT.as_str().to_string()),
            uses_standard_webhook_signature: false,
        }
    }
}

/// Schema to create a webhook endpoint.
#[derive(Debug, Deserialize, ToSchema)]
pub struct WebhookEndpointCreate {
    /// `https://…`, or `http://` on localhost (with `webhooks.allow_private_targets`).
    pub url: String,
    #[serde(default)]
    pub name: Option<String>,
    /// Generated when not given (at least 32 characters when given).
    #[serde(default)]
    pub secret: Option<String>,
    pub format: WebhookFormat,
    pub events: Vec<WebhookEventType>,
    /// Required unless you use an organization token.
    #[serde(default)]
    #[schema(nullable = false)]
    pub organization_id: Option<Uuid>,
    /// `2026-04`, `2026-10` or `2027-01`; left out: the version of the request.
    #[serde(default)]
    #[schema(nullable = false)]
    pub api_version: Option<String>,
}

/// Schema to update a webhook endpoint; absent fields stay as they are.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct WebhookEndpointUpdate {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub url: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub name: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub secret: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<WebhookFormat>)]
    pub format: Maybe<WebhookFormat>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<WebhookEventType>>)]
    pub events: Maybe<Vec<WebhookEventType>>,
    /// Pause (`false`) or resume (`true`) deliveries; resuming also clears the failure
    /// count of an endpoint the service disabled.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub enabled: Maybe<bool>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub api_version: Maybe<String>,
}

/// Event type names, each once, in the order given.
pub fn event_names(events: &[WebhookEventType]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(events.len());
    for e in events {
        if !out.iter().any(|n| n == e.as_str()) {
            out.push(e.as_str().to_string());
        }
    }
    out
}

impl WebhookEndpointCreate {
    /// The command this body asks for (its fields are checked by the use case).
    pub fn into_command(self) -> NewWebhookEndpoint {
        NewWebhookEndpoint {
            organization_id: self.organization_id.map(OrganizationId),
            url: self.url,
            name: self.name,
            secret: self.secret,
            format: self.format.into(),
            events: event_names(&self.events),
            api_version: self.api_version,
        }
    }
}

impl WebhookEndpointUpdate {
    /// The command this body asks for; a `null` URL is a 422.
    pub fn into_command(self) -> Result<WebhookEndpointChange, ApiError> {
        let url = match self.url {
            Maybe::Value(url) => Some(url),
            Maybe::Null => {
                return Err(ApiError::invalid(
                    crate::loc!["body", "url"],
                    "Input should be a valid URL",
                    serde_json::Value::Null,
                ))
            }
            Maybe::Absent => None,
        };
        Ok(WebhookEndpointChange {
            url,
            name: self.name.into_update(),
            secret: self.secret.as_value().cloned(),
            format: self.format.as_value().map(|f| (*f).into()),
            events: self.events.as_value().map(|e| event_names(e)),
            enabled: self.enabled.as_value().copied(),
            api_version: self.api_version.as_value().cloned(),
        })
    }
}

/// A webhook event: something that happened, for one endpoint. Every attempt to deliver
/// it carries its `id` as `webhook-id`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = WebhookEvent)]
pub struct WebhookEventView {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    /// Last HTTP code returned by the URL; `null` if no delivery has been attempted or the
    /// endpoint was unreachable.
    pub last_http_code: Option<u16>,
    /// Whether this event was delivered; `null` while no attempt has settled it.
    pub succeeded: Option<bool>,
    /// Whether this event was skipped because the endpoint was disabled.
    pub skipped: bool,
    /// The body sent; `null` once archived.
    pub payload: Option<String>,
    #[serde(rename = "type")]
    pub event_type: WebhookEventType,
    /// Archived events can't be redelivered, and their payload is gone.
    pub is_archived: bool,
}

impl WebhookEventView {
    /// `None` for an event type this build no longer knows (never written by it).
    pub fn new(e: &WebhookEvent) -> Option<Self> {
        Some(Self {
            id: e.id.uuid(),
            created_at: e.created_at,
            modified_at: e.modified_at,
            last_http_code: e.last_http_code,
            succeeded: match e.state {
                WebhookEventState::Succeeded => Some(true),
                WebhookEventState::Failed => Some(false),
                WebhookEventState::Pending if e.attempts > 0 => Some(false),
                WebhookEventState::Pending | WebhookEventState::Skipped => None,
            },
            skipped: e.state == WebhookEventState::Skipped,
            payload: (!e.archived).then(|| e.payload.clone()),
            event_type: WebhookEventType::parse(&e.event_type)?,
            is_archived: e.archived,
        })
    }
}

/// One attempt to deliver a webhook event.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = WebhookDelivery)]
pub struct WebhookDeliveryView {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    /// Whether the receiver answered 2xx.
    pub succeeded: bool,
    /// The HTTP code returned; `null` if the endpoint was unreachable.
    pub http_code: Option<u16>,
    /// The start of the response body (at most 2 KiB), or what went wrong.
    pub response: Option<String>,
    /// Milliseconds the attempt took.
    pub duration: u64,
    pub webhook_event: WebhookEventView,
}

impl WebhookDeliveryView {
    pub fn new(d: &WebhookDelivery, event: &WebhookEvent) -> Option<Self> {
        Some(Self {
            id: d.id.uuid(),
            created_at: d.created_at,
            modified_at: None,
            succeeded: d.succeeded,
            http_code: d.http_code,
            response: d.response.clone(),
            duration: d.duration_ms,
            webhook_event: WebhookEventView::new(event)?,
        })
    }
}

/// What a grant gave: for a license-key benefit, the key; for a downloadables benefit,
/// the files it gives now (Polar's `BenefitGrantDownloadablesProperties`, `files`).
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
#[schema(as = BenefitGrantProperties)]
pub struct BenefitGrantProperties {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub license_key_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<Uuid>>,
}

impl BenefitGrantProperties {
    /// With the `files` a downloadables grant gives (`None`: not such a grant, or revoked).
    pub fn with_files(mut self, files: Option<&[crate::domain::ids::FileId]>) -> Self {
        self.files = files.map(|f| f.iter().map(|id| id.uuid()).collect());
        self
    }
}

/// A benefit granted to a customer by an order or a subscription (Polar's
/// `BenefitGrantWebhook`): the `data` of `benefit_grant.*` events. Tollgate derives grants
/// from purchases; the id is stable for one (purchase, benefit) pair.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = BenefitGrantWebhook)]
pub struct BenefitGrantView {
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub id: Uuid,
    pub granted_at: Option<DateTime<Utc>>,
    pub is_granted: bool,
    pub revoked_at: Option<DateTime<Utc>>,
    pub is_revoked: bool,
    pub subscription_id: Option<Uuid>,
    pub order_id: Option<Uuid>,
    pub customer_id: Uuid,
    /// Deprecated: the customer's id.
    pub user_id: Uuid,
    pub benefit_id: Uuid,
    pub customer: super::customer::CustomerView,
    pub properties: BenefitGrantProperties,
    pub benefit: super::benefit::BenefitView,
    pub previous_properties: Option<BenefitGrantProperties>,
}

/// The body of every delivery in the `raw` format: Polar's `{"type", "timestamp",
/// "data"}`, where `data` is the resource exactly as the API returns it; each endpoint's
/// copy also carries its `api_version` (`crate::webhooks::dispatch::format_body`).
#[derive(Debug, Serialize)]
pub struct WebhookPayload<'a, T: Serialize> {
    #[serde(rename = "type")]
    pub event_type: &'a str,
    pub timestamp: DateTime<Utc>,
    pub data: T,
}

/// One event of the cursor (`GET /v1/webhooks/events`): its number within the
/// organization, and the `type`, `timestamp` and `data` of the webhook body.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WebhookCursorEvent {
    /// 1, 2, 3, … in commit order within the organization; resume with `after` = the last
    /// one handled.
    pub seq: u64,
    #[serde(rename = "type")]
    pub event_type: String,
    pub timestamp: DateTime<Utc>,
    /// The resource as the webhook's `data` shows it.
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
}

impl WebhookCursorEvent {
    /// From the logged event (`data` is the JSON text the fan-out rendered).
    pub fn new(seq: u64, event_type: &str, timestamp: DateTime<Utc>, data: &str) -> Self {
        WebhookCursorEvent {
            seq,
            event_type: event_type.to_string(),
            timestamp,
            data: serde_json::from_str(data).unwrap_or(serde_json::Value::Null),
        }
    }
}

/// A page of the cursor: the events after the `after` given, and the `after` to pass next.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WebhookCursorPage {
    pub items: Vec<WebhookCursorEvent>,
    /// The last item's `seq` (the `after` given when the page is empty).
    pub next: u64,
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    use chrono::TimeZone;

    use crate::domain::ids::{
        OrganizationId, WebhookDeliveryId, WebhookEndpointId, WebhookEventId,
    };

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let endpoint = WebhookEndpoint {
        id: WebhookEndpointId(Uuid::from_u128(0xe1)),
        organization_id: OrganizationId(Uuid::from_u128(0x0a)),
        created_at: now,
        modified_at: Some(now),
        url: "https://example.com/hooks".into(),
        name: Some("Backend".into()),
        format: Format::Raw,
        secret: "polar_whs_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG".into(),
        events: vec!["order.created".into(), "license_key.created".into()],
        enabled: true,
        consecutive_failures: 0,
        failing_since: None,
        disabled_reason: None,
        api_version: Some("2026-10".into()),
    };
    let event = WebhookEvent {
        id: WebhookEventId(Uuid::from_u128(0xe2)),
        organization_id: endpoint.organization_id,
        endpoint_id: endpoint.id,
        created_at: now,
        modified_at: Some(now),
        event_type: "order.created".into(),
        resource: "order:1".into(),
        seq: 7,
        payload: r#"{"type":"order.created","timestamp":"2025-01-02T03:04:05Z","data":{}}"#.into(),
        state: WebhookEventState::Succeeded,
        attempts: 1,
        next_attempt_at: None,
        last_http_code: Some(200),
        archived: false,
        payload_apart: false,
        payload_id: None,
    };
    let delivery = WebhookDelivery {
        id: WebhookDeliveryId(Uuid::from_u128(0xe3)),
        organization_id: endpoint.organization_id,
        endpoint_id: endpoint.id,
        event_id: event.id,
        created_at: now,
        succeeded: true,
        http_code: Some(200),
        response: Some("ok".into()),
        duration_ms: 12,
    };
    let value = |v: serde_json::Result<serde_json::Value>| v.unwrap_or_default();
    vec![
        (
            "WebhookEndpoint",
            value(serde_json::to_value(WebhookEndpointView::from(&endpoint))),
        ),
        (
            "WebhookEvent",
            value(serde_json::to_value(WebhookEventView::new(&event))),
        ),
        (
            "WebhookDelivery",
            value(serde_json::to_value(WebhookDeliveryView::new(
                &delivery, &event,
            ))),
        ),
        (
            "WebhookCursorPage",
            value(serde_json::to_value(WebhookCursorPage {
                items: vec![WebhookCursorEvent::new(
                    7,
                    "customer.updated",
                    now,
                    r#"{"id":"992fae2a-2a17-4b7a-8d9e-e287cf90131b","email":"jane@example.com"}"#,
                )],
                next: 7,
            })),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::WebhookEventType;

    #[test]
    fn every_webhook_event_type_round_trips_by_its_name() {
        let mut names = std::collections::BTreeSet::new();
        for t in WebhookEventType::ALL {
            assert_eq!(WebhookEventType::parse(t.as_str()), Some(*t));
            assert_eq!(
                serde_json::to_value(t).ok(),
                Some(serde_json::Value::from(t.as_str()))
            );
            assert!(names.insert(t.as_str()), "{} twice", t.as_str());
        }
        for name in [
            "subscription.past_due",
            "subscription.cycled",
            "benefit_grant.cycled",
            "checkout.expired",
            "customer.deleted",
            "customer.state_changed",
            "discount.created",
            "discount.updated",
            "discount.deleted",
        ] {
            assert!(names.contains(name), "{name}");
        }
        // Every variant is listed (`as_str` is exhaustive, `ALL` is not by itself).
        assert_eq!(names.len(), 39);
    }
}
