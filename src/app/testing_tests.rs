//! For the use cases' unit tests: the application's state over a temporary store, built as
//! the server builds it (registries, caches, jobs) but never sent a request, a seller with
//! an organization to act as, and a paid order of it.

use std::sync::Arc;

use actix_web::web;
use tempfile::TempDir;
use tollgate_actors::ManualClock;
use tollgate_storage::{Batch, Expect};

use crate::auth::Subject;
use crate::config::Settings;
use crate::domain::ids::{OrderId, OrganizationId, UserId};
use crate::domain::membership::Membership;
use crate::domain::order::{BillingReason, Order, OrderStatus};
use crate::domain::organization::Organization;
use crate::startup::Application;
use crate::state::AppState;

/// The state of an application built over a temporary directory, with a manual clock.
pub struct TestApp {
    pub state: web::Data<AppState>,
    pub clock: Arc<ManualClock>,
    _app: Application,
    _dir: TempDir,
}

impl std::ops::Deref for TestApp {
    type Target = AppState;
    fn deref(&self) -> &AppState {
        &self.state
    }
}

/// Builds the application (in an actix system: use `#[actix_web::test]`).
pub async fn app() -> TestApp {
    let dir = tempfile::tempdir().expect("temporary directory");
    let settings = Settings::for_tests(dir.path());
    let clock = Arc::new(ManualClock::new(chrono::Utc::now()));
    let app = Application::build_with_clock(settings, clock.clone())
        .await
        .expect("the application builds");
    TestApp {
        state: app.state(),
        clock,
        _app: app,
        _dir: dir,
    }
}

/// A new organization with one member; the subject is that member acting in it.
pub async fn seller(state: &AppState) -> (OrganizationId, Subject) {
    let now = state.now();
    let id = OrganizationId::new();
    let user = UserId::new();
    let org = Organization::new(
        id,
        "Acme Tools".into(),
        format!("acme-{}", id.0.simple()),
        now,
    );
    let membership = Membership {
        user_id: user,
        organization_id: id,
        organization_created_at: org.created_at,
        organization_slug: org.slug.clone(),
        created_at: now,
    };
    let mut batch = Batch::new();
    batch.put(&org, Expect::Absent).expect("organization");
    batch.put(&membership, Expect::Absent).expect("membership");
    state.store.commit_durable(&batch).await.expect("seeded");
    (id, Subject::UserIn(user, id))
}

/// A paid one-time order of the organization, stored as is: `amount` cents in USD, of which
/// `tax_amount` tax, paid by the processor's payment `payment`, for the API's sample customer
/// and the product of its first sample subscription.
pub async fn paid_order(
    state: &AppState,
    org: OrganizationId,
    amount: i64,
    tax_amount: i64,
    payment: &str,
) -> Order {
    let customer = crate::api::subscription::sample_customer();
    let sub = &crate::api::subscription::sample_subscriptions()[0];
    let order = Order {
        id: OrderId::new(),
        organization_id: org,
        created_at: state.now(),
        modified_at: None,
        status: OrderStatus::Paid,
        amount,
        tax_amount,
        refunded_amount: 0,
        refunded_tax_amount: 0,
        currency: "usd".into(),
        billing_reason: BillingReason::Purchase,
        billing_address: None,
        customer_id: customer.id,
        product_id: sub.product_id,
        product_price_id: sub.price_id,
        recurring: false,
        discount_id: None,
        subscription_id: None,
        checkout_id: None,
        metadata: Default::default(),
        custom_field_data: Default::default(),
        customer_email: customer.email,
        product_name: "Pro".into(),
        discount_name: None,
        payment_id: Some(payment.to_string()),
        refund_pending_amount: 0,
        refund_pending_tax_amount: 0,
        seats: None,
        next_payment_attempt_at: None,
        last_payment: None,
        tax: crate::domain::order::OrderTax::default(),
        invoice: crate::domain::order::InvoiceState::None,
        usage_lines: Vec::new(),
    };
    let mut batch = Batch::new();
    batch.put(&order, Expect::Absent).expect("order");
    state.store.commit_durable(&batch).await.expect("stored");
    order
}

#[actix_web::test]
async fn a_seller_reaches_its_organization_and_no_other() {
    let app = app().await;
    let (org, subject) = seller(&app).await;
    let (other, _) = seller(&app).await;
    assert!(crate::app::access::can_access(&app, subject, org)
        .await
        .unwrap());
    assert!(!crate::app::access::can_access(&app, subject, other)
        .await
        .unwrap());
}

/// Event `n` of an endpoint (id and feed position `n`, resource `order:<n>`), pending,
/// its payload `payload` inline; tests change what they need.
pub fn webhook_event(
    state: &AppState,
    org: OrganizationId,
    endpoint: crate::domain::ids::WebhookEndpointId,
    n: u128,
    payload: String,
) -> crate::domain::webhook::WebhookEvent {
    crate::domain::webhook::WebhookEvent {
        id: crate::domain::ids::WebhookEventId(uuid::Uuid::from_u128(n)),
        organization_id: org,
        endpoint_id: endpoint,
        created_at: state.now(),
        modified_at: None,
        event_type: "order.paid".into(),
        resource: format!("order:{n}"),
        seq: n as u64,
        payload,
        state: crate::domain::webhook::WebhookEventState::Pending,
        attempts: 0,
        next_attempt_at: None,
        last_http_code: None,
        archived: false,
        payload_apart: false,
        payload_id: None,
    }
}
