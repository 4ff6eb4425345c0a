//! Checkout links in Polar's shapes (`server/polar/checkout_link/schemas.py`): the create
//! body (its three forms in one: `products`, `product_id` or `product_price_id`), the
//! update body, and `CheckoutLink`, a superset of what polar-sdk 1.0.2 and
//! @polar-sh/sdk 0.47.1 require.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use super::checkout::create::{metadata_field, optional_string, product_list, trial_fields};
use super::checkout::{PaymentProcessor, TrialInterval};
use super::discount::DiscountBase;
use super::metadata::{metadata_map, MetadataMap};
use super::product::ProductView;
use super::Maybe;
use crate::domain::checkout_link::{CheckoutLink, CheckoutLinkChange, LinkOffer, NewCheckoutLink};
use crate::domain::ids::{DiscountId, PriceId, ProductId};
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::validate::Validator;

/// The client secret's prefix (Polar's `CHECKOUT_LINK_CLIENT_SECRET_PREFIX`).
pub const CHECKOUT_LINK_SECRET_PREFIX: &str = "polar_cl_";

/// Creates a checkout link for products (`products`), a product (`product_id`) or the
/// product of a price (`product_price_id`).
#[derive(Debug, Deserialize, ToSchema)]
pub struct CheckoutLinkCreate {
    /// Checked for Polar's error ("Input should be 'stripe'").
    #[schema(value_type = PaymentProcessor)]
    pub payment_processor: String,
    /// Unique, of one organization, each with a price; the first is selected.
    #[serde(default)]
    #[schema(nullable = false)]
    pub products: Option<Vec<Uuid>>,
    #[schema(nullable = false)]
    pub product_id: Option<Uuid>,
    #[schema(nullable = false)]
    pub product_price_id: Option<Uuid>,
    /// A name for the seller only.
    pub label: Option<String>,
    /// Default `true`.
    #[schema(nullable = false)]
    pub allow_discount_codes: Option<bool>,
    /// Default `false`.
    #[schema(nullable = false)]
    pub require_billing_address: Option<bool>,
    pub discount_id: Option<Uuid>,
    pub success_url: Option<String>,
    pub return_url: Option<String>,
    // Parsed with [`super::metadata::parse_metadata`].
    #[serde(default)]
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub metadata: Option<Value>,
    /// The trial each checkout of the link gives instead of its product's: `day`,
    /// `week`, `month` or `year`, with `trial_interval_count` (1-1000), both or neither.
    #[schema(value_type = Option<TrialInterval>)]
    pub trial_interval: Option<String>,
    pub trial_interval_count: Option<i64>,
    /// The seats each checkout starts with (1-1000; every product seat-based).
    pub seats: Option<i64>,
    /// Not supported (unit-based prices).
    pub units: Option<i64>,
}

/// Changes a checkout link. A key left out is unchanged.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CheckoutLinkUpdate {
    #[serde(default)]
    #[schema(value_type = Option<Vec<Uuid>>)]
    pub products: Maybe<Vec<Uuid>>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub label: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub allow_discount_codes: Maybe<bool>,
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub require_billing_address: Maybe<bool>,
    #[serde(default)]
    #[schema(value_type = Option<Uuid>)]
    pub discount_id: Maybe<Uuid>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub success_url: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub return_url: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<crate::api::free_form::Metadata>)]
    pub metadata: Maybe<Value>,
    /// The link's own trial (both fields, or both `null` to drop it).
    #[serde(default)]
    #[schema(value_type = Option<TrialInterval>)]
    pub trial_interval: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub trial_interval_count: Maybe<i64>,
    /// The seats each checkout starts with (`null`: none preset).
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub seats: Maybe<i64>,
    /// Not supported (unit-based prices).
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub units: Maybe<i64>,
}

fn refuse(v: &mut Validator, field: &str, msg: &str, input: Value) {
    v.push(FieldError::new(
        "value_error",
        loc!["body", field],
        msg,
        input,
    ));
}

/// A preset seat count: 1-1000 (whether every product is seat-based is the use case's
/// question).
fn seats_field(v: &mut Validator, seats: Option<i64>) -> Option<u32> {
    let n = seats?;
    v.int_range(loc!["body", "seats"], n, Some(1), Some(1000))
        .then(|| u32::try_from(n).ok())
        .flatten()
}

/// Units: not sold by Tollgate.
fn refuse_unsupported(v: &mut Validator, units: Option<i64>) {
    if let Some(n) = units {
        refuse(
            v,
            "units",
            "Units can only be preconfigured when all products use unit-based pricing.",
            Value::from(n),
        );
    }
}

fn check_url(v: &mut Validator, field: &str, url: Option<&String>) {
    if let Some(u) = url {
        v.http_url(loc!["body", field], u);
    }
}

impl CheckoutLinkCreate {
    /// The link to create, or the 422 of its shape (every field's error, then what it
    /// offers).
    pub fn into_command(self) -> Result<NewCheckoutLink, ApiError> {
        let mut v = Validator::new();
        if self.payment_processor != "stripe" {
            v.push(FieldError::new(
                "literal_error",
                loc!["body", "payment_processor"],
                "Input should be 'stripe'",
                Value::from(self.payment_processor.as_str()),
            ));
        }
        let metadata = self
            .metadata
            .as_ref()
            .and_then(|m| metadata_field(&mut v, "metadata", m))
            .unwrap_or_default();
        check_url(&mut v, "success_url", self.success_url.as_ref());
        check_url(&mut v, "return_url", self.return_url.as_ref());
        let seats = seats_field(&mut v, self.seats);
        refuse_unsupported(&mut v, self.units);
        let trial = trial_fields(
            &mut v,
            self.trial_interval.as_deref().map(Some),
            self.trial_interval_count.map(Some),
        )
        .flatten();
        v.finish()?;
        let offer = match (&self.products, self.product_id, self.product_price_id) {
            (Some(ids), _, _) => LinkOffer::Products(product_list(ids)?),
            (None, Some(id), _) => LinkOffer::Product(ProductId(id)),
            (None, None, Some(price)) => LinkOffer::Price(PriceId(price)),
            (None, None, None) => {
                return Err(ApiError::validation(FieldError::new(
                    "missing",
                    loc!["body", "products"],
                    "Field required",
                    Value::Null,
                )))
            }
        };
        Ok(NewCheckoutLink {
            offer,
            label: optional_string(self.label),
            allow_discount_codes: self.allow_discount_codes.unwrap_or(true),
            require_billing_address: self.require_billing_address.unwrap_or(false),
            discount_id: self.discount_id.map(DiscountId),
            success_url: self.success_url,
            return_url: self.return_url,
            metadata,
            trial,
            seats,
        })
    }
}

impl CheckoutLinkUpdate {
    /// The change, or the 422 of its shape (every field's error, then the products').
    pub fn into_command(self) -> Result<CheckoutLinkChange, ApiError> {
        let mut v = Validator::new();
        let metadata = match &self.metadata {
            Maybe::Value(m) => metadata_field(&mut v, "metadata", m),
            _ => None,
        };
        check_url(&mut v, "success_url", self.success_url.as_value());
        check_url(&mut v, "return_url", self.return_url.as_value());
        let seats = match self.seats {
            Maybe::Absent => None,
            Maybe::Null => Some(None),
            Maybe::Value(n) => Some(seats_field(&mut v, Some(n))),
        };
        refuse_unsupported(&mut v, self.units.as_value().copied());
        let interval = match &self.trial_interval {
            Maybe::Absent => None,
            Maybe::Null => Some(None),
            Maybe::Value(i) => Some(Some(i.as_str())),
        };
        let count = match self.trial_interval_count {
            Maybe::Absent => None,
            Maybe::Null => Some(None),
            Maybe::Value(n) => Some(Some(n)),
        };
        let trial = trial_fields(&mut v, interval, count);
        v.finish()?;
        let products = match &self.products {
            Maybe::Value(ids) => Some(product_list(ids)?),
            Maybe::Null => {
                return Err(ApiError::invalid(
                    loc!["body", "products"],
                    "Input should be a valid list",
                    Value::Null,
                ))
            }
            Maybe::Absent => None,
        };
        Ok(CheckoutLinkChange {
            products,
            label: self.label.into_update().map(optional_string),
            allow_discount_codes: self.allow_discount_codes.as_value().copied(),
            require_billing_address: self.require_billing_address.as_value().copied(),
            discount_id: self.discount_id.into_update().map(|d| d.map(DiscountId)),
            success_url: self.success_url.into_update(),
            return_url: self.return_url.into_update(),
            metadata,
            trial,
            seats,
        })
    }
}

/// A checkout link: following `url` opens a new checkout of its products.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = CheckoutLink)]
pub struct CheckoutLinkView {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    /// The link's own trial (`null`: each product's applies).
    pub trial_interval: Option<TrialInterval>,
    pub trial_interval_count: Option<i64>,
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub metadata: MetadataMap,
    pub payment_processor: PaymentProcessor,
    pub client_secret: String,
    pub success_url: Option<String>,
    pub return_url: Option<String>,
    pub label: Option<String>,
    pub allow_discount_codes: bool,
    pub require_billing_address: bool,
    pub discount_id: Option<Uuid>,
    /// The seats each checkout starts with (`null`: the price's fewest).
    pub seats: Option<i64>,
    /// Tollgate has no unit-based prices: always `null`.
    pub units: Option<i64>,
    pub organization_id: Uuid,
    /// The products a checkout of the link offers, in order.
    pub products: Vec<ProductView>,
    pub discount: Option<DiscountBase>,
    /// `{public_url}/v1/checkout-links/{client_secret}/redirect`.
    pub url: String,
}

impl CheckoutLinkView {
    /// `products` are the link's products as they are now, in its order; `discount` its
    /// discount if it still exists.
    pub fn new(
        link: &CheckoutLink,
        products: Vec<ProductView>,
        discount: Option<DiscountBase>,
        public_url: &str,
    ) -> Self {
        CheckoutLinkView {
            id: link.id.0,
            created_at: link.created_at,
            modified_at: link.modified_at,
            trial_interval: link.trial.map(|t| t.interval.into()),
            trial_interval_count: link.trial.map(|t| i64::from(t.count)),
            metadata: metadata_map(&link.metadata),
            payment_processor: PaymentProcessor::Stripe,
            client_secret: link.client_secret.clone(),
            success_url: link.success_url.clone(),
            return_url: link.return_url.clone(),
            label: link.label.clone(),
            allow_discount_codes: link.allow_discount_codes,
            require_billing_address: link.require_billing_address,
            discount_id: link.discount_id.map(|d| d.0),
            seats: link.seats.map(i64::from),
            units: None,
            organization_id: link.organization_id.0,
            products,
            discount,
            url: redirect_url(public_url, &link.client_secret),
        }
    }
}

/// Where a link leads: the redirect that opens a checkout of it.
pub fn redirect_url(public_url: &str, client_secret: &str) -> String {
    format!("{public_url}/v1/checkout-links/{client_secret}/redirect")
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    use chrono::TimeZone;

    use crate::domain::checkout_link::CheckoutLinkId;
    use crate::domain::metadata::{MetaValue, Metadata};

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let products = super::product::sample_products();
    let benefits = super::benefit::sample_benefits();
    let fields = super::custom_field::sample_custom_fields();
    let discounts = super::discount::sample_discounts();
    let Some(first) = products.first() else {
        return Vec::new();
    };
    let link = |n: u128, ids: Vec<crate::domain::ids::ProductId>| CheckoutLink {
        id: CheckoutLinkId(Uuid::from_u128(0xc1_0000 + n)),
        organization_id: first.organization_id,
        created_at: now,
        modified_at: (n > 0).then_some(now),
        client_secret: format!("polar_cl_sample{n}"),
        label: (n > 0).then(|| "Spring sale".to_string()),
        products: ids,
        allow_discount_codes: n == 0,
        require_billing_address: n > 0,
        discount_id: None,
        success_url: (n > 0).then(|| "https://example.com/thanks".to_string()),
        return_url: None,
        metadata: Metadata(
            [("campaign".to_string(), MetaValue::Str("spring".into()))]
                .into_iter()
                .collect(),
        ),
        trial: (n > 0).then_some(crate::domain::product::Trial {
            interval: crate::domain::product::RecurringInterval::Day,
            count: 14,
        }),
        seats: None,
    };
    let views = |ids: &[crate::domain::ids::ProductId]| -> Vec<ProductView> {
        ids.iter()
            .filter_map(|id| products.iter().find(|p| p.id == *id))
            .map(|p| ProductView::new(p, &benefits, &fields, &super::price::sample_meters()))
            .collect()
    };
    let base = "https://tollgate.example.com";
    let one = link(0, vec![first.id]);
    let ids: Vec<_> = products
        .iter()
        .filter(|p| p.organization_id == first.organization_id)
        .map(|p| p.id)
        .collect();
    let mut several = link(1, ids.clone());
    let discount = discounts.first();
    several.discount_id = discount.map(|d| d.id);
    let to_value = |v: Result<Value, serde_json::Error>| v.unwrap_or_default();
    vec![
        (
            "CheckoutLink",
            to_value(serde_json::to_value(CheckoutLinkView::new(
                &one,
                views(&one.products),
                None,
                base,
            ))),
        ),
        (
            "CheckoutLink",
            to_value(serde_json::to_value(CheckoutLinkView::new(
                &several,
                views(&ids),
                discount.map(DiscountBase::from),
                base,
            ))),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_has_every_key_of_the_sdk_models_and_points_to_its_redirect() {
        let fixture: Value = serde_json::from_str(
            r#"{"id":"","created_at":"","modified_at":null,"trial_interval":null,
            "trial_interval_count":null,"metadata":{},"payment_processor":"stripe",
            "client_secret":"","success_url":null,"return_url":null,"label":null,
            "allow_discount_codes":false,"require_billing_address":false,"discount_id":null,
            "seats":null,"units":null,"organization_id":"","products":[],"discount":null,
            "url":""}"#,
        )
        .unwrap_or_default();
        let keys = |v: &Value| -> Vec<String> {
            let mut k: Vec<String> = v
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            k.sort();
            k
        };
        let samples = samples();
        assert_eq!(samples.len(), 2);
        for (_, v) in &samples {
            assert_eq!(keys(v), keys(&fixture));
            assert_eq!(v["payment_processor"], "stripe");
            assert_eq!(
                v["url"],
                format!(
                    "https://tollgate.example.com/v1/checkout-links/{}/redirect",
                    v["client_secret"].as_str().unwrap_or_default()
                )
            );
        }
        let several = &samples[1].1;
        assert!(several["products"].as_array().is_some_and(|p| p.len() > 1));
        assert_eq!(several["discount"]["id"], several["discount_id"]);
        assert_eq!(several["label"], "Spring sale");
        assert_eq!(samples[0].1["discount"], Value::Null);
    }
}
