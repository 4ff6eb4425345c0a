//! The customer portal's shapes (Polar's `customer_portal/schemas`): what a buyer signed in
//! with a customer session reads and sends. One shape serves every API version: the
//! fields of today's SDKs, plus the seed era's deprecated ones (`user_id`, `price`,
//! `product_price`), which newer clients ignore.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::benefit::{BenefitView, TagDownloadables};
use super::customer::{AddressView, CustomerView};
use super::metadata::MetadataMap;
use super::order::{OrderItemSchema, OrderStatus, OrderView};
use super::organization::OrganizationView;
pub use super::portal_update::CustomerSubscriptionUpdate;
use super::product::{CustomerProduct, ProductPrice};
pub use super::subscription::CustomerSubscription;
use super::subscription::OrderSubscription;
use super::webhook::BenefitGrantProperties;
use crate::domain::benefit::Benefit;
use crate::domain::benefit_grant::BenefitGrant;
use crate::domain::customer::Customer;
use crate::domain::organization::Organization;

/// `POST /v1/customer-portal/customer-session/request`: send a sign-in code.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct CustomerSessionCodeRequest {
    pub email: String,
    pub organization_id: Uuid,
    /// Accepted for Polar's member model, which Tollgate does not have: ignored.
    #[serde(default)]
    pub customer_id: Option<Uuid>,
}

/// `POST /v1/customer-portal/customer-session/authenticate`: a code for a session.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct CustomerSessionCodeAuthenticateRequest {
    pub code: String,
}

/// The session a code opened.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerSessionCodeAuthenticateResponse {
    /// `polar_cst_…`, for `Authorization: Bearer` on `/v1/customer-portal/*`.
    pub token: String,
}

/// `GET /v1/customer-portal/customer-session/introspect`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerCustomerSession {
    pub expires_at: DateTime<Utc>,
    pub return_url: Option<String>,
}

/// `GET /v1/customer-portal/customer-session/user`: who is signed in.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PortalAuthenticatedUser {
    /// `customer`: Tollgate has no members.
    #[serde(rename = "type")]
    #[schema(value_type = String)]
    pub kind: &'static str,
    pub name: Option<String>,
    pub email: String,
    pub customer_id: Uuid,
    pub member_id: Option<Uuid>,
    #[schema(value_type = Option<String>)]
    pub role: Option<&'static str>,
}

impl From<&Customer> for PortalAuthenticatedUser {
    fn from(c: &Customer) -> Self {
        Self {
            kind: "customer",
            name: c.name.clone(),
            email: c.email.clone(),
            customer_id: c.id.0,
            member_id: None,
            role: None,
        }
    }
}

/// The signed-in customer (Polar's `CustomerPortalCustomer`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerPortalCustomer {
    #[serde(flatten)]
    pub customer: CustomerView,
    /// Sign-in with OAuth accounts is not offered: `{}`.
    #[schema(value_type = Object)]
    pub oauth_accounts: serde_json::Map<String, serde_json::Value>,
    /// The saved payment method charges use first, if the customer chose one.
    pub default_payment_method_id: Option<Uuid>,
    pub locale: Option<String>,
}

impl From<&Customer> for CustomerPortalCustomer {
    fn from(c: &Customer) -> Self {
        Self {
            customer: CustomerView::from(c),
            oauth_accounts: serde_json::Map::new(),
            default_payment_method_id: c.default_payment_method_id.map(|id| id.0),
            locale: None,
        }
    }
}

/// One of the customer's orders (Polar's `CustomerOrder`), with the product it bought.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerOrder {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub status: OrderStatus,
    pub paid: bool,
    pub subtotal_amount: i64,
    pub discount_amount: i64,
    pub net_amount: i64,
    /// Deprecated: `net_amount`.
    pub amount: i64,
    pub tax_amount: i64,
    pub total_amount: i64,
    pub applied_balance_amount: i64,
    pub due_amount: i64,
    pub refunded_amount: i64,
    pub refunded_tax_amount: i64,
    pub refundable_amount: i64,
    pub refundable_tax_amount: i64,
    pub currency: String,
    pub billing_reason: super::order::BillingReason,
    pub billing_name: Option<String>,
    pub billing_address: Option<AddressView>,
    pub invoice_number: String,
    pub is_invoice_generated: bool,
    pub receipt_number: Option<String>,
    /// The seats bought at a seat-based price; `null` for any other price.
    pub seats: Option<i64>,
    pub units: Option<i64>,
    pub customer_id: Uuid,
    pub product_id: Uuid,
    pub product_price_id: Uuid,
    pub discount_id: Option<Uuid>,
    pub subscription_id: Option<Uuid>,
    pub checkout_id: Option<Uuid>,
    /// When a `pending` renewal is charged again; `null` for any other order (and once
    /// dunning gave up). The buyer may pay it sooner (`confirm-payment`).
    pub next_payment_attempt_at: Option<DateTime<Utc>>,
    /// Deprecated: the customer's id.
    pub user_id: Uuid,
    pub product: CustomerProduct,
    pub product_price: ProductPrice,
    pub subscription: Option<OrderSubscription>,
    pub items: Vec<OrderItemSchema>,
    pub description: String,
}

impl CustomerOrder {
    /// The seller's rendering of the order, with the product as the customer sees it.
    pub fn new(o: OrderView, product: CustomerProduct) -> Self {
        Self {
            id: o.id,
            created_at: o.created_at,
            modified_at: o.modified_at,
            status: o.status,
            paid: o.paid,
            subtotal_amount: o.subtotal_amount,
            discount_amount: o.discount_amount,
            net_amount: o.net_amount,
            amount: o.amount,
            tax_amount: o.tax_amount,
            total_amount: o.total_amount,
            applied_balance_amount: o.applied_balance_amount,
            due_amount: o.due_amount,
            refunded_amount: o.refunded_amount,
            refunded_tax_amount: o.refunded_tax_amount,
            refundable_amount: o.refundable_amount,
            refundable_tax_amount: o.refundable_tax_amount,
            currency: o.currency,
            billing_reason: o.billing_reason,
            billing_name: o.billing_name,
            billing_address: o.billing_address,
            invoice_number: o.invoice_number,
            is_invoice_generated: o.is_invoice_generated,
            receipt_number: o.receipt_number,
            seats: o.seats,
            units: o.units,
            customer_id: o.customer_id,
            product_id: o.product_id,
            product_price_id: o.product_price_id,
            discount_id: o.discount_id,
            subscription_id: o.subscription_id,
            checkout_id: o.checkout_id,
            next_payment_attempt_at: o.next_payment_attempt_at,
            user_id: o.user_id,
            product,
            product_price: o.product_price,
            subscription: o.subscription,
            items: o.items,
            description: o.description,
        }
    }
}

/// Where an order's receipt is (Polar's `CustomerOrderReceipt`): a signed link to the
/// printable receipt page, valid for an hour.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerOrderReceipt {
    pub url: String,
}

/// A benefit as a customer holds it (Polar's `Benefit…Subscriber`): the benefit and its
/// organization.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SubscriberBenefit {
    #[serde(flatten)]
    pub benefit: SubscriberBenefitView,
    pub organization: OrganizationView,
}

/// The benefit as its subscriber reads it (Polar's `Benefit…Subscriber` union): the
/// seller's view, but a downloadables benefit's `properties` are `{active_files}`, which
/// polar-sdk 1.0's `CustomerBenefitGrantDownloadables` requires.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
pub enum SubscriberBenefitView {
    Downloadables(BenefitDownloadablesSubscriber),
    Other(BenefitView),
}

impl From<&Benefit> for SubscriberBenefitView {
    fn from(b: &Benefit) -> Self {
        match BenefitView::from(b) {
            BenefitView::Downloadables(d) => {
                let active_files = d
                    .properties
                    .files
                    .iter()
                    .copied()
                    .filter(|f| !d.properties.archived.get(f).copied().unwrap_or(false))
                    .collect();
                SubscriberBenefitView::Downloadables(BenefitDownloadablesSubscriber {
                    id: d.id,
                    created_at: d.created_at,
                    modified_at: d.modified_at,
                    kind: d.kind,
                    description: d.description,
                    selectable: d.selectable,
                    deletable: d.deletable,
                    organization_id: d.organization_id,
                    properties: BenefitDownloadablesSubscriberProperties { active_files },
                    is_deleted: d.is_deleted,
                    metadata: d.metadata,
                    visibility: d.visibility,
                    visibility_configurable: d.visibility_configurable,
                })
            }
            other => SubscriberBenefitView::Other(other),
        }
    }
}

/// Polar's `BenefitDownloadablesSubscriberProperties`: the benefit's files without the
/// archived ones.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BenefitDownloadablesSubscriberProperties {
    pub active_files: Vec<Uuid>,
}

/// Polar's `BenefitDownloadablesSubscriber`: a downloadables benefit as its customer reads
/// it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BenefitDownloadablesSubscriber {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    #[serde(rename = "type")]
    pub kind: TagDownloadables,
    pub description: String,
    pub selectable: bool,
    pub deletable: bool,
    pub organization_id: Uuid,
    pub properties: BenefitDownloadablesSubscriberProperties,
    pub is_deleted: bool,
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub metadata: MetadataMap,
    pub visibility: &'static str,
    pub visibility_configurable: bool,
}

/// A grant of the signed-in customer (Polar's `CustomerBenefitGrant…`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerBenefitGrant {
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub id: Uuid,
    pub granted_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub customer_id: Uuid,
    pub benefit_id: Uuid,
    pub subscription_id: Option<Uuid>,
    pub order_id: Option<Uuid>,
    pub is_granted: bool,
    pub is_revoked: bool,
    pub customer: CustomerPortalCustomer,
    pub benefit: SubscriberBenefit,
    pub properties: BenefitGrantProperties,
}

impl CustomerBenefitGrant {
    pub fn new(
        g: &BenefitGrant,
        customer: &Customer,
        benefit: &Benefit,
        organization: &Organization,
    ) -> Self {
        Self {
            created_at: g.created_at,
            modified_at: g.modified_at,
            id: g.id,
            granted_at: g.granted_at,
            revoked_at: g.revoked_at,
            customer_id: g.customer_id.uuid(),
            benefit_id: g.benefit_id.uuid(),
            subscription_id: g.source.subscription_id().map(|s| s.uuid()),
            order_id: g.source.order_id().map(|o| o.uuid()),
            is_granted: g.is_granted(),
            is_revoked: g.is_revoked(),
            customer: CustomerPortalCustomer::from(customer),
            benefit: SubscriberBenefit {
                benefit: SubscriberBenefitView::from(benefit),
                organization: organization.into(),
            },
            properties: super::benefit_grant::properties(g),
        }
    }

    /// With the files a downloadables grant gives now (`properties.files`).
    pub fn with_files(mut self, files: Option<&[crate::domain::ids::FileId]>) -> Self {
        self.properties = self.properties.with_files(files);
        self
    }
}

/// One instance of each response of the portal, built from the other modules' sample
/// records: the session's answers, the customer, an order of each sample product (one-time
/// and recurring), a subscription of each recurring one, the grants.
#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    use chrono::TimeZone;

    use super::order::OrderRefs;
    use super::product::ProductPriceRecurring;
    use crate::domain::custom_field::CustomFieldData;
    use crate::domain::ids::{CheckoutId, OrderId};
    use crate::domain::metadata::Metadata;
    use crate::domain::order::{self as order_domain, Order};

    let to_value = |v: Result<serde_json::Value, serde_json::Error>| v.unwrap_or_default();
    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let customer = super::subscription::sample_customer();
    let organization = Organization::new(
        customer.organization_id,
        "Acme Inc.".into(),
        "acme".into(),
        now,
    );
    let products = super::product::sample_products();
    let benefits = super::benefit::sample_benefits();
    let meters = super::price::sample_meters();
    let subscriptions = super::subscription::sample_subscriptions();
    let mut out = vec![
        (
            "CustomerSessionCodeAuthenticateResponse",
            to_value(serde_json::to_value(
                CustomerSessionCodeAuthenticateResponse {
                    token: "polar_cst_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG".into(),
                },
            )),
        ),
        (
            "CustomerCustomerSession",
            to_value(serde_json::to_value(CustomerCustomerSession {
                expires_at: now,
                return_url: None,
            })),
        ),
        (
            "PortalAuthenticatedUser",
            to_value(serde_json::to_value(PortalAuthenticatedUser::from(
                &customer,
            ))),
        ),
        (
            "CustomerPortalCustomer",
            to_value(serde_json::to_value(CustomerPortalCustomer::from(
                &customer,
            ))),
        ),
        (
            "CustomerOrderReceipt",
            to_value(serde_json::to_value(CustomerOrderReceipt {
                url: "https://tollgate.example/portal/acme/orders/0d00/receipt?sig=abc".into(),
            })),
        ),
    ];
    for (n, product) in products.iter().enumerate() {
        let view = CustomerProduct::new(product, &benefits, &organization, &meters);
        let Some(price) = product.prices.first() else {
            continue;
        };
        let subscription = subscriptions.iter().find(|s| s.product_id == product.id);
        let order = Order {
            id: OrderId(Uuid::from_u128(0x0d00 + n as u128)),
            organization_id: customer.organization_id,
            created_at: now,
            modified_at: None,
            status: order_domain::OrderStatus::Paid,
            amount: price.kind.fixed_amount().unwrap_or(0),
            tax_amount: 0,
            refunded_amount: 0,
            refunded_tax_amount: 0,
            currency: "usd".into(),
            billing_reason: if subscription.is_some() {
                order_domain::BillingReason::SubscriptionCreate
            } else {
                order_domain::BillingReason::Purchase
            },
            billing_address: None,
            customer_id: customer.id,
            product_id: product.id,
            product_price_id: price.id,
            recurring: price.kind.is_recurring(),
            discount_id: None,
            subscription_id: subscription.map(|s| s.id),
            checkout_id: Some(CheckoutId(Uuid::from_u128(0xc400 + n as u128))),
            metadata: Metadata::default(),
            custom_field_data: CustomFieldData::default(),
            customer_email: customer.email.clone(),
            product_name: product.name.clone(),
            discount_name: None,
            payment_id: None,
            refund_pending_amount: 0,
            refund_pending_tax_amount: 0,
            seats: None,
            next_payment_attempt_at: None,
            last_payment: None,
            tax: crate::domain::order::OrderTax::default(),
            invoice: crate::domain::order::InvoiceState::None,
            usage_lines: Vec::new(),
        };
        let refs = OrderRefs {
            meters: &meters,
            customer: &customer,
            product,
            price,
            discount: None,
            subscription,
        };
        out.push((
            "CustomerOrder",
            to_value(serde_json::to_value(CustomerOrder::new(
                OrderView::new(&order, &refs),
                view.clone(),
            ))),
        ));
        if let Some(s) = subscription {
            if let Some(recurring) = product
                .price(s.price_id)
                .and_then(|p| ProductPriceRecurring::new(product, p, &meters))
            {
                out.push((
                    "CustomerSubscription",
                    to_value(serde_json::to_value(CustomerSubscription::new(
                        s, view, recurring,
                    ))),
                ));
            }
        }
    }
    let (grantee, benefit, grants) = super::benefit_grant::sample_grants();
    for g in &grants {
        out.push((
            "CustomerBenefitGrant",
            to_value(serde_json::to_value(CustomerBenefitGrant::new(
                g,
                &grantee,
                &benefit,
                &organization,
            ))),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_cover_orders_subscriptions_and_grants() {
        let samples = samples();
        let count = |name: &str| samples.iter().filter(|(n, _)| *n == name).count();
        assert!(count("CustomerOrder") >= 2);
        assert!(count("CustomerSubscription") >= 1);
        assert_eq!(count("CustomerBenefitGrant"), 2);
        let (_, order) = samples
            .iter()
            .find(|(n, _)| *n == "CustomerOrder")
            .cloned()
            .unwrap_or_default();
        assert_eq!(order["product"]["organization"]["slug"], "acme");
        assert!(order["product"]["benefits"].is_array());
        let (_, me) = samples
            .iter()
            .find(|(n, _)| *n == "CustomerPortalCustomer")
            .cloned()
            .unwrap_or_default();
        assert_eq!(me["email"], "jane@example.com");
        assert_eq!(me["oauth_accounts"], serde_json::json!({}));
    }

    #[test]
    fn the_billing_name_and_default_method_are_the_customer_s() {
        let mut c = Customer::new(
            crate::domain::ids::CustomerId::new(),
            crate::domain::ids::OrganizationId::new(),
            "jane@example.com".into(),
            chrono::DateTime::<Utc>::UNIX_EPOCH,
        );
        c.name = Some("Jane".into());
        let me = |c: &Customer| {
            serde_json::to_value(CustomerPortalCustomer::from(c)).unwrap_or_default()
        };
        assert_eq!(
            me(&c)["billing_name"],
            "Jane",
            "the name when none was given"
        );
        assert_eq!(me(&c)["default_payment_method_id"], serde_json::Value::Null);
        let method = crate::domain::ids::PaymentMethodId::new();
        c.billing_name = Some("Jane Doe Ltd".into());
        c.default_payment_method_id = Some(method);
        assert_eq!(me(&c)["billing_name"], "Jane Doe Ltd");
        assert_eq!(
            me(&c)["default_payment_method_id"],
            serde_json::json!(method.to_string())
        );
    }
}
