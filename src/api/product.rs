//! Products in Polar's shapes: the create/update bodies and the product renderings (full
//! `Product`, `CheckoutProduct`, `ProductBase`). Their prices live in [`super::price`].

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use super::benefit::{BenefitBase, BenefitView};
use super::custom_field::AttachedCustomFieldView;
use super::metadata::{metadata_map, MetadataMap};
use super::Maybe;
use crate::domain::benefit::Benefit;
use crate::domain::custom_field::CustomField;
use crate::domain::meter::Meter;
use crate::domain::product::Product;

pub use super::price::{
    ProductPrice, ProductPriceCreate, ProductPriceRecurring, RecurringInterval,
};

pub const NAME_MIN_CHARS: usize = 3;

#[path = "product_command.rs"]
mod command;
pub use command::{body_cadence, parse_prices, refuse_one_time_trial, BodyCadence};

/// Creates a product with its prices (recurring or one-time, as the prices are).
// Polar's `ProductRecurringCreate` / `ProductOneTimeCreate`, told apart by the prices.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ProductCreate {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    // Parsed item by item with [`parse_price`], for precise error locations.
    #[schema(value_type = Vec<ProductPriceCreate>)]
    pub prices: Vec<Value>,
    #[serde(default)]
    #[schema(nullable = false)]
    pub medias: Option<Vec<Uuid>>,
    #[serde(default)]
    #[schema(nullable = false)]
    pub attached_custom_fields: Option<Vec<AttachedCustomFieldCreate>>,
    // Parsed with [`super::metadata::parse_metadata`].
    #[serde(default)]
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub metadata: Maybe<Value>,
    #[serde(default)]
    #[schema(nullable = false)]
    pub organization_id: Option<Uuid>,
    #[serde(flatten)]
    pub cadence: ProductCadenceInput,
}

/// Polar's 2026 product fields: the product recurs (`recurring_interval`, every
/// `recurring_interval_count` of them), its prices have no `type`, and a subscription may
/// start with a free trial. Other values are a 422 naming the field.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ProductCadenceInput {
    /// `day`, `week`, `month` or `year`; left out or `null`: one-time.
    #[serde(default)]
    #[schema(value_type = Option<RecurringInterval>)]
    pub recurring_interval: Option<Value>,
    /// 1–999 (default 1): a period spans this many intervals. Fixed once created.
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub recurring_interval_count: Option<Value>,
    /// `day`, `week`, `month` or `year`, with `trial_interval_count` (1–1000): both or
    /// neither; `null` removes the trial. Recurring products only.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub trial_interval: Maybe<Value>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub trial_interval_count: Maybe<Value>,
    /// Only `public`.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub visibility: Option<Value>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct AttachedCustomFieldCreate {
    pub custom_field_id: Uuid,
    pub required: bool,
}

/// Updates a product: every field optional; `null` leaves a field as it is.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ProductUpdate {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub is_archived: Option<bool>,
    /// Each item is an existing price (`{"id": …}`) or a new price.
    #[serde(default)]
    #[schema(value_type = Option<Vec<Object>>)]
    pub prices: Option<Vec<Value>>,
    #[serde(default)]
    pub medias: Option<Vec<Uuid>>,
    #[serde(default)]
    pub attached_custom_fields: Option<Vec<AttachedCustomFieldCreate>>,
    // Parsed with [`super::metadata::parse_metadata`].
    #[serde(default)]
    #[schema(value_type = Option<crate::api::free_form::Metadata>)]
    pub metadata: Maybe<Value>,
    #[serde(flatten)]
    pub cadence: ProductCadenceInput,
}

/// The benefits a product grants, in order.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ProductBenefitsUpdate {
    pub benefits: Vec<Uuid>,
}

impl ProductBenefitsUpdate {
    /// The command: the benefits to grant, in order.
    pub fn benefit_ids(self) -> Vec<crate::domain::ids::BenefitId> {
        self.benefits
            .into_iter()
            .map(crate::domain::ids::BenefitId)
            .collect()
    }
}

/// A product media (the lists are always empty: Tollgate stores no files).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProductMediaFileRead {
    pub id: Uuid,
    pub organization_id: Uuid,
    pub name: String,
    pub path: String,
    pub mime_type: String,
    pub size: i64,
    pub created_at: DateTime<Utc>,
    pub public_url: String,
}

/// A product rendering: the `ProductBase` fields, then its own; `build` fills the base
/// fields from the record.
macro_rules! product_schema {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        #[derive(Debug, Clone, Serialize, ToSchema)]
        $(#[$doc])*
        pub struct $name {
            pub id: Uuid,
            pub created_at: DateTime<Utc>,
            pub modified_at: Option<DateTime<Utc>>,
            pub name: String,
            pub description: Option<String>,
            pub is_recurring: bool,
            pub is_archived: bool,
            pub organization_id: Uuid,
            /// The interval every price on sale recurs at; `null`: one-time, or sold both
            /// monthly and yearly (legacy prices, each with its own interval).
            pub recurring_interval: Option<RecurringInterval>,
            /// How many `recurring_interval`s one billing period spans (1–999), when
            /// `recurring_interval` is set.
            pub recurring_interval_count: Option<i64>,
            /// The free trial a subscription starts with (`trial_interval_count` ×
            /// `trial_interval`); `null`: none.
            pub trial_interval: Option<RecurringInterval>,
            pub trial_interval_count: Option<i64>,
            /// Usage-based billing is not supported: `null`.
            #[schema(value_type = Option<String>)]
            pub meter_interval: Option<&'static str>,
            pub meter_interval_count: Option<i64>,
            /// `public`: every product can be bought through its checkout link.
            pub visibility: &'static str,
            $($(#[$fdoc])* pub $field: $ty,)*
        }

        impl $name {
            fn build(p: &Product, $($field: $ty),*) -> Self {
                Self {
                    id: p.id.0,
                    created_at: p.created_at,
                    modified_at: p.modified_at,
                    name: p.name.clone(),
                    description: p.description.clone(),
                    is_recurring: p.is_recurring,
                    is_archived: p.is_archived,
                    organization_id: p.organization_id.0,
                    recurring_interval: p.recurring_interval().map(Into::into),
                    recurring_interval_count: p
                        .recurring_interval()
                        .map(|_| i64::from(p.recurring_interval_count)),
                    trial_interval: p.trial.map(|t| t.interval.into()),
                    trial_interval_count: p.trial.map(|t| i64::from(t.count)),
                    meter_interval: None,
                    meter_interval_count: None,
                    visibility: "public",
                    $($field,)*
                }
            }
        }
    };
}

product_schema!(
    /// The `Product` schema.
    #[schema(as = Product)]
    ProductView {
        #[schema(value_type = crate::api::free_form::Metadata)]
        metadata: MetadataMap,
        prices: Vec<ProductPrice>,
        benefits: Vec<BenefitView>,
        medias: Vec<ProductMediaFileRead>,
        attached_custom_fields: Vec<AttachedCustomFieldView>,
        /// Products are archived, never deleted: false.
        is_deletable: bool,
    }
);

product_schema!(
    /// A product without prices, benefits or medias (in orders and discounts).
    ProductBase {
        #[schema(value_type = crate::api::free_form::Metadata)]
        metadata: MetadataMap,
    }
);

product_schema!(
    /// The product inside a checkout: prices, benefits as `BenefitBase`, medias; no
    /// metadata.
    CheckoutProduct {
        prices: Vec<ProductPrice>,
        benefits: Vec<BenefitBase>,
        medias: Vec<ProductMediaFileRead>,
    }
);

product_schema!(
    /// The product of a customer's order or subscription (Polar's
    /// `CustomerOrderProduct` / `CustomerSubscriptionProduct`): prices, benefits as
    /// `BenefitBase`, medias, and its organization.
    CustomerProduct {
        prices: Vec<ProductPrice>,
        benefits: Vec<BenefitBase>,
        medias: Vec<ProductMediaFileRead>,
        organization: super::organization::OrganizationView,
    }
);

impl CustomerProduct {
    /// `benefits` holds (at least) the product's benefit records, in any order; `meters`
    /// the meters of its metered prices.
    pub fn new(
        p: &Product,
        benefits: &[Benefit],
        organization: &crate::domain::organization::Organization,
        meters: &[Meter],
    ) -> Self {
        CustomerProduct::build(
            p,
            active_prices(p, meters),
            ordered_benefits(p, benefits)
                .into_iter()
                .map(BenefitBase::from)
                .collect(),
            Vec::new(),
            organization.into(),
        )
    }
}

/// The prices on sale (`meters`: those of its metered prices).
fn active_prices(p: &Product, meters: &[Meter]) -> Vec<ProductPrice> {
    p.active_prices()
        .map(|price| ProductPrice::new(p, price, meters))
        .collect()
}

/// The product's benefits in its order, skipping deleted and unknown ones.
fn ordered_benefits<'a>(p: &Product, benefits: &'a [Benefit]) -> Vec<&'a Benefit> {
    p.benefit_ids
        .iter()
        .filter_map(|id| benefits.iter().find(|b| b.id == *id))
        .filter(|b| b.deleted_at.is_none())
        .collect()
}

impl ProductView {
    /// The full product. `benefits`, `custom_fields` and `meters` hold (at least) the
    /// records the product refers to, in any order; deleted ones are left out.
    pub fn new(
        p: &Product,
        benefits: &[Benefit],
        custom_fields: &[CustomField],
        meters: &[Meter],
    ) -> Self {
        ProductView::build(
            p,
            metadata_map(&p.metadata),
            active_prices(p, meters),
            ordered_benefits(p, benefits)
                .into_iter()
                .map(BenefitView::from)
                .collect(),
            Vec::new(),
            attached_custom_fields(p, custom_fields),
            false,
        )
    }
}

impl From<&Product> for ProductBase {
    fn from(p: &Product) -> Self {
        ProductBase::build(p, metadata_map(&p.metadata))
    }
}

impl CheckoutProduct {
    /// `benefits` holds (at least) the product's benefit records, in any order; `meters`
    /// the meters of its metered prices.
    pub fn new(p: &Product, benefits: &[Benefit], meters: &[Meter]) -> Self {
        CheckoutProduct::build(
            p,
            active_prices(p, meters),
            ordered_benefits(p, benefits)
                .into_iter()
                .map(BenefitBase::from)
                .collect(),
            Vec::new(),
        )
    }
}

/// The product's `attached_custom_fields`, in order; deleted fields are left out.
pub fn attached_custom_fields(
    p: &Product,
    custom_fields: &[CustomField],
) -> Vec<AttachedCustomFieldView> {
    let mut attached: Vec<_> = p.attached_custom_fields.iter().collect();
    attached.sort_by_key(|a| a.order);
    attached
        .into_iter()
        .filter_map(|a| {
            let field = custom_fields
                .iter()
                .find(|f| f.id == a.custom_field_id && f.deleted_at.is_none())?;
            Some(AttachedCustomFieldView::new(field, a.order, a.required))
        })
        .collect()
}

#[cfg(test)]
pub(crate) fn sample_products() -> Vec<Product> {
    use crate::domain::ids::{PriceId, ProductId};
    use crate::domain::product::{self as domain, Price, PriceKind};
    use chrono::TimeZone;

    use crate::domain::ids::{CustomFieldId, OrganizationId};
    use crate::domain::metadata::{MetaValue, Metadata};
    use crate::domain::product::AttachedCustomField;

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let price = |n: u128, kind| Price {
        id: PriceId(Uuid::from_u128(0x9000 + n)),
        created_at: now,
        modified_at: None,
        is_archived: false,
        kind,
    };
    let product = |n: u128, name: &str, prices: Vec<Price>| Product {
        id: ProductId(Uuid::from_u128(0x9900 + n)),
        organization_id: OrganizationId(Uuid::from_u128(0x0a)),
        created_at: now,
        modified_at: None,
        name: name.into(),
        description: None,
        is_recurring: prices.iter().all(|p| p.kind.is_recurring()),
        is_archived: false,
        is_tax_applicable: true,
        metadata: Metadata::default(),
        prices,
        benefit_ids: Vec::new(),
        media_ids: Vec::new(),
        attached_custom_fields: Vec::new(),
        recurring_interval_count: 1,
        trial: None,
        price_tax_behavior: Vec::new(),
        free_price_currency: Vec::new(),
    };
    let month = domain::RecurringInterval::Month;
    let mut archived = price(
        3,
        PriceKind::RecurringFixed {
            interval: month,
            currency: crate::domain::currency::Currency::DEFAULT.into(),
            amount: 900,
        },
    );
    archived.is_archived = true;
    let mut pro = product(
        1,
        "Pro",
        vec![
            price(
                1,
                PriceKind::RecurringFixed {
                    interval: month,
                    currency: crate::domain::currency::Currency::DEFAULT.into(),
                    amount: 1000,
                },
            ),
            price(
                2,
                PriceKind::RecurringFixed {
                    interval: domain::RecurringInterval::Year,
                    currency: crate::domain::currency::Currency::DEFAULT.into(),
                    amount: 10_000,
                },
            ),
            archived,
        ],
    );
    pro.description = Some("Everything, monthly or yearly".into());
    pro.modified_at = Some(now);
    pro.metadata = Metadata(
        [("tier".to_string(), MetaValue::Int(2))]
            .into_iter()
            .collect(),
    );
    pro.benefit_ids = super::benefit::sample_benefits()
        .iter()
        .map(|b| b.id)
        .collect();
    pro.attached_custom_fields = super::custom_field::sample_custom_fields()
        .iter()
        .enumerate()
        .map(|(i, f)| AttachedCustomField {
            custom_field_id: CustomFieldId(f.id.0),
            required: i == 0,
            order: i as i64,
        })
        .collect();
    vec![
        pro,
        product(
            2,
            "Donation",
            vec![price(
                4,
                PriceKind::OneTimeCustom {
                    currency: crate::domain::currency::Currency::DEFAULT.into(),
                    minimum_amount: Some(100),
                    maximum_amount: None,
                    preset_amount: Some(500),
                },
            )],
        ),
        product(
            3,
            "E-book",
            vec![price(
                5,
                PriceKind::OneTimeFixed {
                    currency: crate::domain::currency::Currency::DEFAULT.into(),
                    amount: 2500,
                },
            )],
        ),
        product(4, "Sample", vec![price(6, PriceKind::OneTimeFree)]),
        product(
            5,
            "Newsletter",
            vec![price(7, PriceKind::RecurringFree { interval: month })],
        ),
        product(
            6,
            "API",
            vec![
                price(
                    8,
                    PriceKind::RecurringFixed {
                        interval: month,
                        currency: crate::domain::currency::Currency::DEFAULT.into(),
                        amount: 2000,
                    },
                ),
                price(9, super::price::sample_metered_kind()),
            ],
        ),
    ]
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    let benefits = super::benefit::sample_benefits();
    let fields = super::custom_field::sample_custom_fields();
    let meters = super::price::sample_meters();
    let mut out = Vec::new();
    for p in sample_products() {
        let to_value = |v: Result<Value, serde_json::Error>| v.unwrap_or_default();
        out.push((
            "Product",
            to_value(serde_json::to_value(ProductView::new(
                &p, &benefits, &fields, &meters,
            ))),
        ));
        out.push((
            "CheckoutProduct",
            to_value(serde_json::to_value(CheckoutProduct::new(
                &p, &benefits, &meters,
            ))),
        ));
        out.push((
            "ProductBase",
            to_value(serde_json::to_value(ProductBase::from(&p))),
        ));
        for price in &p.prices {
            out.push((
                "ProductPrice",
                to_value(serde_json::to_value(ProductPrice::new(&p, price, &meters))),
            ));
            if let Some(recurring) = ProductPriceRecurring::new(&p, price, &meters) {
                out.push((
                    "ProductPriceRecurring",
                    to_value(serde_json::to_value(recurring)),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn products_render_polars_keys() {
        let benefits = crate::api::benefit::sample_benefits();
        let fields = crate::api::custom_field::sample_custom_fields();
        let products = sample_products();
        let pro =
            serde_json::to_value(ProductView::new(&products[0], &benefits, &fields, &[])).unwrap();
        // The archived price is left out; benefits and fields keep the product's order.
        assert_eq!(pro["prices"].as_array().map(Vec::len), Some(2));
        assert_eq!(
            pro["prices"][0],
            json!({"id": "00000000-0000-0000-0000-000000009001",
                   "created_at": "2025-01-02T03:04:05Z", "modified_at": null,
                   "amount_type": "fixed", "type": "recurring", "is_archived": false,
                   "product_id": "00000000-0000-0000-0000-000000009901",
                   "price_currency": "usd", "price_amount": 1000, "recurring_interval": "month",
                   "source": "catalog", "tax_behavior": null})
        );
        assert_eq!(pro["benefits"].as_array().map(Vec::len), Some(4));
        assert_eq!(pro["benefits"][1]["is_tax_applicable"], false);
        assert_eq!(pro["attached_custom_fields"][0]["required"], true);
        assert_eq!(pro["metadata"], json!({"tier": 2}));
        assert_eq!(pro["medias"], json!([]));
        let checkout =
            serde_json::to_value(CheckoutProduct::new(&products[0], &benefits, &[])).unwrap();
        assert!(checkout.get("metadata").is_none());
        assert!(checkout["benefits"][0].get("properties").is_none());
        assert_eq!(checkout["benefits"][0]["type"], "license_keys");
        let base = serde_json::to_value(ProductBase::from(&products[1])).unwrap();
        // The seed's 8 keys, Polar's 2026 ones (7) and the metadata orders show.
        assert_eq!(base.as_object().map(|m| m.len()), Some(16));
        assert_eq!(base["recurring_interval"], serde_json::Value::Null);
        // Sold monthly and yearly: no single interval (each legacy price has its own).
        assert_eq!(pro["recurring_interval"], serde_json::Value::Null);
        assert_eq!(pro["recurring_interval_count"], serde_json::Value::Null);
        assert_eq!(pro["visibility"], "public");
        assert_eq!(
            serde_json::to_value(ProductPrice::new(&products[1], &products[1].prices[0], &[]))
                .unwrap(),
            json!({"id": "00000000-0000-0000-0000-000000009004",
                   "created_at": "2025-01-02T03:04:05Z", "modified_at": null,
                   "amount_type": "custom", "type": "one_time", "is_archived": false,
                   "product_id": "00000000-0000-0000-0000-000000009902", "price_currency": "usd",
                   "minimum_amount": 100, "maximum_amount": null, "preset_amount": 500,
                   "source": "catalog", "tax_behavior": null})
        );
        let free = &products[3];
        assert!(ProductPriceRecurring::new(free, &free.prices[0], &[]).is_none());
    }

    #[test]
    fn samples_cover_every_price_variant() {
        let variants = |schema: &str| -> std::collections::BTreeSet<String> {
            samples()
                .iter()
                .filter(|(name, _)| *name == schema)
                .map(|(_, v)| format!("{}/{}", v["type"], v["amount_type"]))
                .collect()
        };
        assert_eq!(variants("ProductPrice").len(), 6);
        assert_eq!(variants("ProductPriceRecurring").len(), 3);
    }
}
