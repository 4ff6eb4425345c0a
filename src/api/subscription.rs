//! Subscriptions in Polar's shapes: the `Subscription` schema (lists, get, update), the
//! `OrderSubscription` base form embedded in orders, the `SubscriptionStatus` and
//! `CustomerCancellationReason` enums, and the `PATCH` body (`SubscriptionUpdate`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use super::custom_field_data::custom_field_data_json;
use super::customer::{CustomerUser, CustomerView};
use super::discount::DiscountBase;
use super::metadata::{metadata_map, MetadataMap};
use super::meter::MeterView;
use super::product::{ProductPriceRecurring, ProductView, RecurringInterval};
use crate::api::free_form::CustomFieldValue;
use crate::domain::custom_field::CustomFieldData;
use crate::domain::customer::Customer;
use crate::domain::discount::Discount;
use crate::domain::ids::{CustomerId, PriceId, ProductId};
use crate::domain::meter::Meter;
use crate::domain::subscription_change::{
    CancelSubscription, NewSubscription, PlanRequest, Subscriber, SubscriptionChange,
};
use crate::error::{ApiError, FieldError};
use crate::loc;
use tollgate_actors::subscription::{self as domain, Subscription};

pub use super::custom_field_data::CustomFieldDataMap;

/// The JSON object of stored custom-field answers, as responses carry it (see
/// `custom_field_data_json`: the `null`s of optional fields left empty are left out).
pub fn custom_field_data_map(data: &CustomFieldData) -> CustomFieldDataMap {
    custom_field_data_json(data)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubscriptionStatus {
    Incomplete,
    IncompleteExpired,
    Trialing,
    Active,
    PastDue,
    Canceled,
    Unpaid,
}

impl From<domain::SubscriptionStatus> for SubscriptionStatus {
    fn from(s: domain::SubscriptionStatus) -> Self {
        use domain::SubscriptionStatus as S;
        match s {
            S::Incomplete => SubscriptionStatus::Incomplete,
            S::IncompleteExpired => SubscriptionStatus::IncompleteExpired,
            S::Trialing => SubscriptionStatus::Trialing,
            S::Active => SubscriptionStatus::Active,
            S::PastDue => SubscriptionStatus::PastDue,
            S::Canceled => SubscriptionStatus::Canceled,
            S::Unpaid => SubscriptionStatus::Unpaid,
        }
    }
}

// Polar's `CustomerCancellationReason`: read from `PATCH` bodies, stored as its `as_str`
// and sent back in subscriptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CustomerCancellationReason {
    CustomerService,
    LowQuality,
    MissingFeatures,
    SwitchedService,
    TooComplex,
    TooExpensive,
    Unused,
    Other,
}

impl CustomerCancellationReason {
    pub const ALL: [CustomerCancellationReason; 8] = [
        CustomerCancellationReason::CustomerService,
        CustomerCancellationReason::LowQuality,
        CustomerCancellationReason::MissingFeatures,
        CustomerCancellationReason::SwitchedService,
        CustomerCancellationReason::TooComplex,
        CustomerCancellationReason::TooExpensive,
        CustomerCancellationReason::Unused,
        CustomerCancellationReason::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CustomerCancellationReason::CustomerService => "customer_service",
            CustomerCancellationReason::LowQuality => "low_quality",
            CustomerCancellationReason::MissingFeatures => "missing_features",
            CustomerCancellationReason::SwitchedService => "switched_service",
            CustomerCancellationReason::TooComplex => "too_complex",
            CustomerCancellationReason::TooExpensive => "too_expensive",
            CustomerCancellationReason::Unused => "unused",
            CustomerCancellationReason::Other => "other",
        }
    }

    /// A stored reason (always written by [`as_str`](Self::as_str)); `None` for any other
    /// text.
    pub fn parse(stored: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == stored)
    }
}

/// A subscription rendering: the fields every form has (Polar's `SubscriptionBase` with
/// `metadata` and the deprecated `user_id`), then the form's own; `build` fills the common
/// fields from the record.
macro_rules! subscription_schema {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        #[derive(Debug, Clone, Serialize, ToSchema)]
        $(#[$doc])*
        pub struct $name {
            pub id: Uuid,
            pub created_at: DateTime<Utc>,
            pub modified_at: Option<DateTime<Utc>>,
            /// 0 for a free subscription.
            pub amount: i64,
            pub currency: String,
            pub recurring_interval: RecurringInterval,
            /// How many `recurring_interval`s one period spans.
            pub recurring_interval_count: i64,
            /// A meter clock of its own (Polar's `meter_interval`) is not supported: `null`;
            /// usage is billed at each renewal.
            pub current_meter_period_start: Option<DateTime<Utc>>,
            pub current_meter_period_end: Option<DateTime<Utc>>,
            /// The free trial the subscription started with (`null`: none).
            pub trial_start: Option<DateTime<Utc>>,
            pub trial_end: Option<DateTime<Utc>>,
            /// Pausing is not supported: false and `null`.
            pub pause_at_period_end: bool,
            pub paused_at: Option<DateTime<Utc>>,
            pub resumes_at: Option<DateTime<Utc>>,
            /// The seats paid for at a seat-based price; `null` for any other price.
            pub seats: Option<i64>,
            /// Unit-based prices are not sold: `null`.
            pub units: Option<i64>,
            pub status: SubscriptionStatus,
            pub current_period_start: DateTime<Utc>,
            pub current_period_end: Option<DateTime<Utc>>,
            pub cancel_at_period_end: bool,
            pub canceled_at: Option<DateTime<Utc>>,
            pub started_at: Option<DateTime<Utc>>,
            pub ends_at: Option<DateTime<Utc>>,
            pub ended_at: Option<DateTime<Utc>>,
            /// When the subscription went `past_due` (a renewal declined); `null` otherwise.
            pub past_due_at: Option<DateTime<Utc>>,
            pub customer_id: Uuid,
            pub product_id: Uuid,
            pub price_id: Uuid,
            pub discount_id: Option<Uuid>,
            pub checkout_id: Option<Uuid>,
            pub customer_cancellation_reason: Option<CustomerCancellationReason>,
            pub customer_cancellation_comment: Option<String>,
            #[schema(value_type = crate::api::free_form::Metadata)]
            pub metadata: MetadataMap,
            /// Deprecated: the customer's id.
            pub user_id: Uuid,
            $($(#[$fdoc])* pub $field: $ty,)*
        }

        impl $name {
            // One argument per field of the form (the full one has nine).
            #[allow(clippy::too_many_arguments)]
            fn build(s: &Subscription, $($field: $ty),*) -> Self {
                Self {
                    id: s.id.0,
                    created_at: s.created_at,
                    modified_at: s.modified_at,
                    amount: s.amount.unwrap_or(0),
                    currency: s.currency.clone().unwrap_or_else(|| crate::domain::currency::Currency::DEFAULT.into()),
                    recurring_interval: s.recurring_interval.into(),
                    recurring_interval_count: i64::from(s.recurring_interval_count),
                    current_meter_period_start: None,
                    current_meter_period_end: None,
                    trial_start: s.trial_start,
                    trial_end: s.trial_end,
                    pause_at_period_end: false,
                    paused_at: None,
                    resumes_at: None,
                    seats: s.seats.map(i64::from),
                    units: None,
                    status: s.status.into(),
                    current_period_start: s.current_period_start,
                    current_period_end: s.current_period_end,
                    cancel_at_period_end: s.cancel_at_period_end,
                    canceled_at: s.canceled_at,
                    started_at: s.started_at,
                    ends_at: s.ends_at,
                    ended_at: s.ended_at,
                    past_due_at: s.past_due_at,
                    customer_id: s.customer_id.0,
                    product_id: s.product_id.0,
                    price_id: s.price_id.0,
                    discount_id: s.discount_id.map(|d| d.0),
                    checkout_id: s.checkout_id.map(|c| c.0),
                    customer_cancellation_reason: s
                        .customer_cancellation_reason
                        .as_deref()
                        .and_then(CustomerCancellationReason::parse),
                    customer_cancellation_comment: s.customer_cancellation_comment.clone(),
                    metadata: metadata_map(&s.metadata),
                    // Polar's legacy user id; Tollgate has none, so the customer's.
                    user_id: s.customer_id.0,
                    $($field,)*
                }
            }
        }
    };
}

subscription_schema!(
    /// A subscription without its related objects (inside orders).
    OrderSubscription {}
);

subscription_schema!(
    #[schema(as = Subscription)]
    SubscriptionView {
        #[schema(value_type = std::collections::HashMap<String, CustomFieldValue>)]
        custom_field_data: CustomFieldDataMap,
        customer: CustomerView,
        user: CustomerUser,
        product: ProductView,
        price: ProductPriceRecurring,
        discount: Option<DiscountBase>,
        /// Polar's 2026 list of the subscription's prices: its price, then the metered
        /// prices of its product in its currency.
        prices: Vec<ProductPriceRecurring>,
        /// The running usage of each metered price (`docs/usage.md`).
        meters: Vec<SubscriptionMeter>,
        /// A plan change waiting for the period's end: none (issue 31).
        pending_update: Option<PendingSubscriptionUpdate>,
    }
);

subscription_schema!(
    /// A subscription as its customer sees it in the portal (Polar's
    /// `CustomerSubscription`).
    CustomerSubscription {
        product: super::product::CustomerProduct,
        price: ProductPriceRecurring,
        prices: Vec<ProductPriceRecurring>,
        /// The running usage of each metered price (`docs/usage.md`).
        meters: Vec<CustomerSubscriptionMeter>,
        pending_update: Option<PendingSubscriptionUpdate>,
    }
);

impl CustomerSubscription {
    pub fn new(
        s: &Subscription,
        product: super::product::CustomerProduct,
        price: ProductPriceRecurring,
    ) -> Self {
        CustomerSubscription::build(s, product, price.clone(), vec![price], Vec::new(), None)
    }

    /// The subscription with its prices (its own first) and the running usage of its
    /// metered prices.
    pub fn with_usage(
        mut self,
        prices: Vec<ProductPriceRecurring>,
        meters: &[SubscriptionMeter],
    ) -> Self {
        self.prices = prices;
        self.meters = meters.iter().map(CustomerSubscriptionMeter::from).collect();
        self
    }
}

/// What a subscription's customer consumed of the meter of one of its metered prices
/// in the current period (the customer's open usage window of the meter), the credits
/// in it and what the next renewal bills for it now (Polar's `SubscriptionMeter`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SubscriptionMeter {
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    /// Derived from the subscription and the meter (stable).
    pub id: Uuid,
    pub consumed_units: f64,
    pub credited_units: i64,
    /// What the renewal would bill for the meter now, before tax (0 during a trial).
    pub amount: i64,
    pub meter_id: Uuid,
    pub meter: MeterView,
}

impl SubscriptionMeter {
    pub fn new(
        id: Uuid,
        created_at: DateTime<Utc>,
        modified_at: Option<DateTime<Utc>>,
        meter: &Meter,
        consumed_units: f64,
        credited_units: i64,
        amount: i64,
    ) -> Self {
        SubscriptionMeter {
            created_at,
            modified_at,
            id,
            consumed_units,
            credited_units,
            amount,
            meter_id: meter.id.uuid(),
            meter: MeterView::from(meter),
        }
    }
}

/// [`SubscriptionMeter`] as the portal shows it (Polar's `CustomerSubscriptionMeter`):
/// the meter's id, dates and name only.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerSubscriptionMeter {
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub id: Uuid,
    pub consumed_units: f64,
    pub credited_units: i64,
    pub amount: i64,
    pub meter_id: Uuid,
    pub meter: CustomerSubscriptionMeterMeter,
}

/// The meter of a [`CustomerSubscriptionMeter`].
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerSubscriptionMeterMeter {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub name: String,
}

impl From<&SubscriptionMeter> for CustomerSubscriptionMeter {
    fn from(m: &SubscriptionMeter) -> Self {
        CustomerSubscriptionMeter {
            created_at: m.created_at,
            modified_at: m.modified_at,
            id: m.id,
            consumed_units: m.consumed_units,
            credited_units: m.credited_units,
            amount: m.amount,
            meter_id: m.meter_id,
            meter: CustomerSubscriptionMeterMeter {
                id: m.meter.id,
                created_at: m.meter.created_at,
                modified_at: m.meter.modified_at,
                name: m.meter.name.clone(),
            },
        }
    }
}

/// A change that applies at the end of the period (never yet).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PendingSubscriptionUpdate {
    pub id: Uuid,
    pub applies_at: DateTime<Utc>,
    pub product_id: Option<Uuid>,
}

impl From<&Subscription> for OrderSubscription {
    fn from(s: &Subscription) -> Self {
        OrderSubscription::build(s)
    }
}

impl SubscriptionView {
    /// The full subscription. `product` is the full `Product` rendering and `price` the
    /// subscription's price (both need the store, so the caller renders them).
    pub fn new(
        s: &Subscription,
        customer: &Customer,
        product: ProductView,
        price: ProductPriceRecurring,
        discount: Option<&Discount>,
    ) -> Self {
        SubscriptionView::build(
            s,
            custom_field_data_map(&s.custom_field_data),
            CustomerView::from(customer),
            CustomerUser::from(customer),
            product,
            price.clone(),
            discount.map(DiscountBase::from),
            vec![price],
            Vec::new(),
            None,
        )
    }

    /// The subscription with its prices (its own first) and the running usage of its
    /// metered prices.
    pub fn with_usage(
        mut self,
        prices: Vec<ProductPriceRecurring>,
        meters: Vec<SubscriptionMeter>,
    ) -> Self {
        self.prices = prices;
        self.meters = meters;
        self
    }
}

/// Changes the plan (`product_id`, or the 0.13.5-era `product_price_id`, with
/// `proration_behavior`), cancels at the end of the period (`cancel_at_period_end`) or
/// revokes at once (`revoke: true`), with the customer's reason.
// Polar's `SubscriptionUpdateProduct` / `SubscriptionUpdatePrice` / `SubscriptionCancel` /
// `SubscriptionRevoke`; unknown fields are ignored.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct SubscriptionUpdate {
    /// The product to move to (its recurring price in the subscription's currency, the
    /// subscription's interval preferred).
    #[serde(default)]
    pub product_id: Option<Uuid>,
    /// The price to move to (Polar's January 2025 shape).
    #[serde(default)]
    pub product_price_id: Option<Uuid>,
    /// `invoice`: the difference is charged now; `prorate`: it is added to the next
    /// renewal. Default: the organization's `subscription_settings.proration_behavior`.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub proration_behavior: Option<Value>,
    #[serde(default)]
    pub cancel_at_period_end: Option<bool>,
    // `Literal[True] | None`: `false` is refused by the handler.
    #[serde(default)]
    pub revoke: Option<bool>,
    #[serde(default)]
    pub customer_cancellation_reason: Option<CustomerCancellationReason>,
    #[serde(default)]
    pub customer_cancellation_comment: Option<String>,
}

/// The change `POST /v1/subscriptions/{id}/change-preview` prices (Polar's
/// `SubscriptionChangePreviewProduct`, with the 0.13.5-era `product_price_id` too).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct SubscriptionChangePreviewInput {
    #[serde(default)]
    pub product_id: Option<Uuid>,
    #[serde(default)]
    pub product_price_id: Option<Uuid>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub proration_behavior: Option<Value>,
}

/// `proration_behavior` of a body: `invoice` or `prorate` (Polar's `next_period`, a change
/// deferred to the period's end, is refused with a 422 saying so).
pub fn proration_behavior(
    value: Option<&Value>,
) -> Result<Option<domain::ProrationBehavior>, ApiError> {
    use domain::ProrationBehavior as P;
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s == "invoice" => Ok(Some(P::Invoice)),
        Some(Value::String(s)) if s == "prorate" => Ok(Some(P::Prorate)),
        Some(v @ Value::String(s)) if s == "next_period" || s == "reset" => Err(ApiError::invalid(
            loc!["body", "proration_behavior"],
            "Only 'invoice' (charge the difference now) and 'prorate' (add it to the next \
             renewal) are supported.",
            v.clone(),
        )),
        Some(v) => Err(ApiError::validation(
            FieldError::new(
                "enum",
                loc!["body", "proration_behavior"],
                "Input should be 'invoice', 'prorate' or 'next_period'",
                v.clone(),
            )
            .with_ctx(serde_json::json!({"expected": "'invoice', 'prorate' or 'next_period'"})),
        )),
    }
}

impl SubscriptionUpdate {
    /// The change the body asks for, or the 422 of a body that asks for several at once
    /// (or for `revoke: false`). The order of the checks is the wire's.
    pub fn into_command(self) -> Result<SubscriptionChange, ApiError> {
        // `revoke` is `Literal[True] | None`.
        if self.revoke == Some(false) {
            return Err(ApiError::validation(
                FieldError::new(
                    "literal_error",
                    loc!["body", "revoke"],
                    "Input should be True",
                    Value::Bool(false),
                )
                .with_ctx(serde_json::json!({"expected": "True"})),
            ));
        }
        let plan = PlanRequest {
            product_id: self.product_id.map(ProductId),
            price_id: self.product_price_id.map(PriceId),
            behavior: proration_behavior(self.proration_behavior.as_ref())?,
        };
        if plan.is_change() {
            if self.cancel_at_period_end.is_some() || self.revoke.is_some() {
                let field = if self.product_id.is_some() {
                    "product_id"
                } else {
                    "product_price_id"
                };
                return Err(ApiError::invalid(
                    loc!["body", field],
                    "Change the plan, cancel or revoke: one at a time.",
                    Value::Null,
                ));
            }
            return Ok(SubscriptionChange::Plan(plan));
        }
        let revoke = self.revoke == Some(true);
        let reason = self
            .customer_cancellation_reason
            .map(|r| r.as_str().to_string());
        let comment = self.customer_cancellation_comment;
        Ok(match self.cancel_at_period_end {
            Some(_) if revoke => {
                return Err(ApiError::invalid(
                    loc!["body", "revoke"],
                    "Use either `revoke` for immediate cancellation and revokation or \
                     `cancel_at_period_end`.",
                    Value::Bool(true),
                ))
            }
            Some(false) => SubscriptionChange::Uncancel,
            Some(true) => SubscriptionChange::Cancel(CancelSubscription {
                at_period_end: true,
                reason,
                comment,
            }),
            None if revoke => SubscriptionChange::Cancel(CancelSubscription {
                at_period_end: false,
                reason,
                comment,
            }),
            None => SubscriptionChange::Nothing,
        })
    }
}

impl SubscriptionChangePreviewInput {
    /// The plan change to price, or the 422 of a body that names no product or price.
    pub fn into_command(self) -> Result<PlanRequest, ApiError> {
        let req = PlanRequest {
            product_id: self.product_id.map(ProductId),
            price_id: self.product_price_id.map(PriceId),
            behavior: proration_behavior(self.proration_behavior.as_ref())?,
        };
        if !req.is_change() {
            return Err(ApiError::validation(FieldError::new(
                "missing",
                loc!["body", "product_id"],
                "Field required",
                Value::Null,
            )));
        }
        Ok(req)
    }
}

#[cfg(test)]
pub(crate) fn sample_customer() -> Customer {
    use chrono::TimeZone;

    use crate::domain::ids::{CustomerId, OrganizationId};

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let mut c = Customer::new(
        CustomerId(Uuid::from_u128(0xc0)),
        OrganizationId(Uuid::from_u128(0x0a)),
        "jane@example.com".into(),
        now,
    );
    c.name = Some("Jane Doe".into());
    c
}

/// Subscriptions to the sample products' recurring prices (fixed and free), the first with
/// a discount, a cancellation reason and custom-field answers.
#[cfg(test)]
pub(crate) fn sample_subscriptions() -> Vec<Subscription> {
    use chrono::TimeZone;

    use crate::domain::custom_field::FieldValue;
    use crate::domain::ids::{CheckoutId, SubscriptionId};
    use crate::domain::metadata::{MetaValue, Metadata};
    use tollgate_actors::subscription::Purchase;

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let customer = sample_customer();
    let discount = super::discount::sample_discounts().into_iter().next();
    let mut out = Vec::new();
    for (n, p) in super::product::sample_products().into_iter().enumerate() {
        let Some(price) = p.prices.iter().find(|price| price.kind.is_recurring()) else {
            continue;
        };
        let first = out.is_empty();
        let purchase = Purchase {
            organization_id: customer.organization_id,
            customer_id: customer.id,
            customer_email: customer.email.clone(),
            product_id: p.id,
            product_name: p.name.clone(),
            price: price.clone(),
            amount: None,
            discount: None,
            checkout_id: first.then(|| CheckoutId(Uuid::from_u128(0xc4))),
            metadata: Metadata(
                [("plan".to_string(), MetaValue::Str("team".into()))]
                    .into_iter()
                    .collect(),
            ),
            custom_field_data: CustomFieldData(
                [
                    ("seats".to_string(), FieldValue::Int(3)),
                    ("notes".to_string(), FieldValue::Null),
                ]
                .into_iter()
                .collect(),
            ),
            payment_token: None,
            license_key_ids: Vec::new(),
            interval_count: 1,
            trial_end: None,
            seats: None,
        };
        let id = SubscriptionId(Uuid::from_u128(0x5000 + n as u128));
        let Ok(mut s) = Subscription::new_from_purchase(id, purchase, now) else {
            continue;
        };
        if first {
            s.discount_id = discount.as_ref().map(|d| d.id);
            s.discount_name = discount.as_ref().map(|d| d.name.clone());
            s.cancel_at_period_end = true;
            s.canceled_at = Some(now);
            s.ends_at = s.current_period_end;
            s.customer_cancellation_reason = Some("too_expensive".into());
            s.customer_cancellation_comment = Some("Later".into());
        }
        out.push(s);
    }
    out
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    let customer = sample_customer();
    let products = super::product::sample_products();
    let benefits = super::benefit::sample_benefits();
    let fields = super::custom_field::sample_custom_fields();
    let discounts = super::discount::sample_discounts();
    let meters = super::price::sample_meters();
    let mut out = Vec::new();
    for s in sample_subscriptions() {
        out.push((
            "OrderSubscription",
            serde_json::to_value(OrderSubscription::from(&s)).unwrap_or_default(),
        ));
        let Some(product) = products.iter().find(|p| p.id == s.product_id) else {
            continue;
        };
        let Some(price) = product
            .price(s.price_id)
            .and_then(|price| ProductPriceRecurring::new(product, price, &meters))
        else {
            continue;
        };
        let view = SubscriptionView::new(
            &s,
            &customer,
            ProductView::new(product, &benefits, &fields, &meters),
            price.clone(),
            discounts.iter().find(|d| Some(d.id) == s.discount_id),
        );
        out.push((
            "Subscription",
            serde_json::to_value(view.clone()).unwrap_or_default(),
        ));
        // A product with metered prices: the subscription lists them and their usage.
        let metered: Vec<ProductPriceRecurring> = product
            .active_metered_prices()
            .filter_map(|p| ProductPriceRecurring::new(product, p, &meters))
            .collect();
        if !metered.is_empty() {
            let mut prices = vec![price.clone()];
            prices.extend(metered);
            let usage = sample_subscription_meters(&s);
            out.push((
                "Subscription",
                serde_json::to_value(view.with_usage(prices.clone(), usage.clone()))
                    .unwrap_or_default(),
            ));
            let organization = crate::domain::organization::Organization::new(
                customer.organization_id,
                "Acme Inc.".into(),
                "acme".into(),
                s.created_at,
            );
            let portal = CustomerSubscription::new(
                &s,
                super::product::CustomerProduct::new(product, &benefits, &organization, &meters),
                price,
            )
            .with_usage(prices, &usage);
            out.push((
                "CustomerSubscription",
                serde_json::to_value(portal).unwrap_or_default(),
            ));
        }
    }
    out
}

/// The running usage of a sample subscription: 1,250 calls of the first sample meter.
#[cfg(test)]
pub(crate) fn sample_subscription_meters(s: &Subscription) -> Vec<SubscriptionMeter> {
    super::price::sample_meters()
        .first()
        .map(|m| {
            vec![SubscriptionMeter::new(
                Uuid::from_u128(0x5e7e),
                s.created_at,
                Some(s.created_at),
                m,
                1250.0,
                100,
                575,
            )]
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use std::collections::BTreeSet;

    fn keys(v: &Value) -> BTreeSet<String> {
        v.as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    const BASE_KEYS: [&str; 34] = [
        "created_at",
        "modified_at",
        "id",
        "amount",
        "currency",
        "recurring_interval",
        "status",
        "current_period_start",
        "current_period_end",
        "cancel_at_period_end",
        "canceled_at",
        "started_at",
        "ends_at",
        "ended_at",
        "customer_id",
        "product_id",
        "price_id",
        "discount_id",
        "checkout_id",
        "customer_cancellation_reason",
        "customer_cancellation_comment",
        "metadata",
        "user_id",
        // Polar's 2026 keys.
        "recurring_interval_count",
        "current_meter_period_start",
        "current_meter_period_end",
        "trial_start",
        "trial_end",
        "pause_at_period_end",
        "paused_at",
        "resumes_at",
        "units",
        "seats",
        "past_due_at",
    ];

    #[test]
    fn the_renderings_have_every_key_of_the_sdk_models() {
        let samples = samples();
        let expected_base: BTreeSet<String> = BASE_KEYS.into_iter().map(String::from).collect();
        let mut expected_full = expected_base.clone();
        for k in [
            "custom_field_data",
            "customer",
            "user",
            "product",
            "price",
            "discount",
            "prices",
            "meters",
            "pending_update",
        ] {
            expected_full.insert(k.into());
        }
        let mut expected_portal = expected_full.clone();
        for k in ["custom_field_data", "customer", "user", "discount"] {
            expected_portal.remove(k);
        }
        let mut seen = BTreeSet::new();
        for (name, v) in &samples {
            let expected = match *name {
                "OrderSubscription" => &expected_base,
                "CustomerSubscription" => &expected_portal,
                _ => &expected_full,
            };
            assert_eq!(&keys(v), expected, "{name}");
            assert_eq!(v["status"], "active");
            assert_eq!(v["user_id"], v["customer_id"]);
            seen.insert(*name);
        }
        assert_eq!(
            seen,
            ["CustomerSubscription", "OrderSubscription", "Subscription"]
                .into_iter()
                .collect()
        );
        let full: Vec<&Value> = samples
            .iter()
            .filter(|(n, _)| *n == "Subscription")
            .map(|(_, v)| v)
            .collect();
        assert_eq!(full.len(), 4);
        assert_eq!(full[0]["price"]["amount_type"], "fixed");
        assert_eq!(full[1]["price"]["amount_type"], "free");
        // The product with a metered price is subscribed to at its fixed price; the
        // product lists both.
        assert_eq!(full[2]["price"]["amount_type"], "fixed");
        assert_eq!(
            full[2]["product"]["prices"][1]["amount_type"],
            "metered_unit"
        );
        assert_eq!(
            full[2]["product"]["prices"][1]["meter"]["name"],
            "API calls"
        );
        assert_eq!(full[0]["discount"]["id"], json!(Uuid::from_u128(0xd101)));
        assert_eq!(full[1]["discount"], Value::Null);
        assert_eq!(full[0]["customer_cancellation_reason"], "too_expensive");
        assert_eq!(full[1]["customer_cancellation_reason"], Value::Null);
        // The empty optional answer is left out, as in `custom_field_data_json`.
        assert_eq!(full[0]["custom_field_data"], json!({"seats": 3}));
        assert_eq!(full[0]["metadata"], json!({"plan": "team"}));
        assert_eq!(full[0]["user"]["id"], full[0]["customer"]["id"]);
        assert_eq!(full[0]["user"]["public_name"], "J");
        // Without usage: its one price and no meter; with it: its price, then the
        // metered one, and the meter's usage with the full meter.
        assert_eq!(full[2]["prices"].as_array().map(Vec::len), Some(1));
        assert_eq!(full[2]["meters"], json!([]));
        let metered = full[3];
        assert_eq!(metered["prices"][0]["id"], metered["price"]["id"]);
        assert_eq!(metered["prices"][1]["amount_type"], "metered_unit");
        let m = &metered["meters"][0];
        assert_eq!(
            keys(m),
            [
                "created_at",
                "modified_at",
                "id",
                "consumed_units",
                "credited_units",
                "amount",
                "meter_id",
                "meter"
            ]
            .into_iter()
            .map(String::from)
            .collect()
        );
        assert_eq!(m["meter"]["id"], m["meter_id"]);
        assert_eq!(m["meter"]["aggregation"]["func"], "count");
        let portal = &samples
            .iter()
            .find(|(n, _)| *n == "CustomerSubscription")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        assert_eq!(
            keys(&portal["meters"][0]["meter"]),
            ["created_at", "id", "modified_at", "name"]
                .into_iter()
                .map(String::from)
                .collect()
        );
        assert_eq!(portal["meters"][0]["amount"], 575);
    }

    #[test]
    fn cancellation_reasons_round_trip_through_their_stored_text() {
        for r in CustomerCancellationReason::ALL {
            assert_eq!(CustomerCancellationReason::parse(r.as_str()), Some(r));
            assert_eq!(serde_json::to_value(r).unwrap(), json!(r.as_str()));
            let back: CustomerCancellationReason =
                serde_json::from_value(json!(r.as_str())).unwrap();
            assert_eq!(back, r);
        }
        assert_eq!(CustomerCancellationReason::parse("bored"), None);
    }

    #[test]
    fn statuses_are_the_domains_names() {
        for s in domain::SubscriptionStatus::ALL {
            assert_eq!(
                serde_json::to_value(SubscriptionStatus::from(*s)).unwrap(),
                json!(s.as_str())
            );
        }
    }

    #[test]
    fn the_update_reads_a_price_change_and_ignores_unknown_fields() {
        let id = uuid::Uuid::new_v4();
        let u: SubscriptionUpdate = serde_json::from_value(json!({
            "product_price_id": id, "proration_behavior": "invoice", "other": 1
        }))
        .unwrap();
        assert_eq!(u.product_price_id, Some(id));
        assert_eq!(u.proration_behavior, Some(json!("invoice")));
        assert!(serde_json::from_value::<SubscriptionUpdate>(json!({
            "product_id": "not even a uuid"
        }))
        .is_err());
    }
}

/// `POST /v1/subscriptions/`: a free subscription the seller starts for an existing
/// customer (Polar's `SubscriptionCreateCustomer` | `SubscriptionCreateExternalCustomer`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct SubscriptionCreate {
    /// A recurring product whose price is free.
    pub product_id: Uuid,
    /// The customer, by id (or give `external_customer_id`).
    #[serde(default)]
    pub customer_id: Option<Uuid>,
    /// The customer, by the seller's external id; it must already exist.
    #[serde(default)]
    pub external_customer_id: Option<String>,
    // Parsed with [`super::metadata::parse_metadata`].
    #[serde(default)]
    #[schema(value_type = Option<crate::api::free_form::Metadata>)]
    pub metadata: Option<Value>,
}

impl SubscriptionCreate {
    /// The command, or the 422 of a body that names no customer or whose metadata breaks
    /// Polar's rules.
    pub fn into_command(self) -> Result<NewSubscription, ApiError> {
        let metadata = match self.metadata.as_ref().filter(|m| !m.is_null()) {
            None => Default::default(),
            Some(m) => {
                super::metadata::parse_metadata("metadata", m).map_err(ApiError::Validation)?
            }
        };
        let customer = match (self.customer_id, self.external_customer_id) {
            (Some(id), _) => Subscriber::Id(CustomerId(id)),
            (None, Some(external)) => Subscriber::External(external),
            (None, None) => {
                return Err(ApiError::validation(FieldError::new(
                    "missing",
                    loc!["body", "customer_id"],
                    "Field required",
                    Value::Null,
                )))
            }
        };
        Ok(NewSubscription {
            product_id: ProductId(self.product_id),
            customer,
            metadata,
        })
    }
}
