//! Products (with their prices in major units) and the benefits they grant.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::api::benefit::{BenefitCreate, BenefitUpdate};
use crate::api::product::{ProductBenefitsUpdate, ProductCreate, ProductUpdate};
use crate::app::catalog::{benefits, products};
use crate::auth::Subject;
use crate::domain::benefit::{Benefit, BenefitProperties, Timeframe};
use crate::domain::currency::Currency;
use crate::domain::ids::{OrganizationId, ProductId};
use crate::domain::product::Product;
use crate::error::ApiError;
use crate::state::AppState;

use super::{cents, explain_amounts, input, int, opt_string, text, ticked};

// ---------------------------------------------------------------------------------------
// Products
// ---------------------------------------------------------------------------------------

/// A product and its pricing: billing (`one_time`, `month`, `year` or `month_year`),
/// amount type (`fixed`, `custom`, `free`) and the amounts, in major units.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ProductForm {
    pub name: String,
    pub description: String,
    pub billing: String,
    pub amount_type: String,
    pub amount: String,
    pub yearly_amount: String,
    pub minimum_amount: String,
    pub maximum_amount: String,
    pub preset_amount: String,
    pub is_archived: Option<String>,
    /// On an edit: replace the prices with the ones of the form.
    pub replace_prices: Option<String>,
}

impl Default for ProductForm {
    fn default() -> Self {
        ProductForm {
            name: String::new(),
            description: String::new(),
            billing: "one_time".into(),
            amount_type: "fixed".into(),
            amount: String::new(),
            yearly_amount: String::new(),
            minimum_amount: String::new(),
            maximum_amount: String::new(),
            preset_amount: String::new(),
            is_archived: None,
            replace_prices: None,
        }
    }
}

impl ProductForm {
    pub fn of(p: &Product) -> Self {
        ProductForm {
            name: p.name.clone(),
            description: opt_string(&p.description),
            is_archived: p.is_archived.then(|| "on".to_string()),
            ..ProductForm::default()
        }
    }

    /// The amount fields as typed, with their labels.
    fn amounts(&self) -> [(&str, &str); 5] {
        [
            (&self.amount, "Price"),
            (&self.yearly_amount, "Yearly price"),
            (&self.minimum_amount, "Minimum"),
            (&self.maximum_amount, "Maximum"),
            (&self.preset_amount, "Suggested"),
        ]
    }

    /// The API's `prices`.
    fn prices(&self) -> Value {
        let amount_type = match self.amount_type.trim() {
            "" => "fixed",
            t => t,
        };
        let price = |kind: &str, interval: Option<&str>, amount: &str| {
            let mut p = json!({ "type": kind, "amount_type": amount_type });
            if let Some(i) = interval {
                p["recurring_interval"] = Value::from(i);
            }
            match amount_type {
                "fixed" => {
                    p["price_amount"] = cents(amount, Currency::DEFAULT);
                    p["price_currency"] = Value::from(Currency::DEFAULT.code());
                }
                "custom" => {
                    p["price_currency"] = Value::from(Currency::DEFAULT.code());
                    for (field, v) in [
                        ("minimum_amount", &self.minimum_amount),
                        ("maximum_amount", &self.maximum_amount),
                        ("preset_amount", &self.preset_amount),
                    ] {
                        let v = cents(v, Currency::DEFAULT);
                        if !v.is_null() {
                            p[field] = v;
                        }
                    }
                }
                _ => {}
            }
            p
        };
        match self.billing.trim() {
            "month" => json!([price("recurring", Some("month"), &self.amount)]),
            "year" => json!([price("recurring", Some("year"), &self.amount)]),
            "month_year" => json!([
                price("recurring", Some("month"), &self.amount),
                price("recurring", Some("year"), &self.yearly_amount),
            ]),
            "" => json!([price("one_time", None, &self.amount)]),
            other => json!([price(other, None, &self.amount)]),
        }
    }
}

pub async fn create_product(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
    form: &ProductForm,
) -> Result<Product, ApiError> {
    let raw = json!({
        "name": form.name.trim(),
        "description": text(&form.description),
        "organization_id": org.to_string(),
        "prices": form.prices(),
    });
    let created = async {
        let body = input::<ProductCreate>(raw)?;
        let new = body.value.into_command(&body.raw)?;
        Ok(products::create(state, subject, new).await?)
    }
    .await;
    created.map_err(|e| explain_amounts(e, Currency::DEFAULT, &form.amounts()))
}

pub async fn update_product(
    state: &AppState,
    subject: Subject,
    id: ProductId,
    form: &ProductForm,
) -> Result<Product, ApiError> {
    let mut raw = json!({
        "name": form.name.trim(),
        "description": text(&form.description),
        "is_archived": ticked(&form.is_archived),
    });
    if ticked(&form.replace_prices) {
        raw["prices"] = form.prices();
    }
    let updated = async {
        let body = input::<ProductUpdate>(raw)?;
        let current = products::product_for(state, subject, id).await;
        let change = body
            .value
            .into_command(&body.raw, current.as_ref().ok().map(|p| &p.value))?;
        current?;
        Ok(products::update(state, subject, id, change).await?)
    }
    .await;
    updated.map_err(|e| explain_amounts(e, Currency::DEFAULT, &form.amounts()))
}

/// The benefits a product grants: the ticked ones, in order.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ProductBenefitsForm {
    pub benefit: Vec<String>,
}

pub async fn set_product_benefits(
    state: &AppState,
    subject: Subject,
    id: ProductId,
    form: &ProductBenefitsForm,
) -> Result<Product, ApiError> {
    let body = input::<ProductBenefitsUpdate>(json!({ "benefits": form.benefit }))?;
    let requested = body.into_inner().benefit_ids();
    Ok(products::update_benefits(state, subject, id, requested).await?)
}

// ---------------------------------------------------------------------------------------
// Benefits
// ---------------------------------------------------------------------------------------

/// A license-key benefit (or just the description of another type).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct BenefitForm {
    pub description: String,
    pub prefix: String,
    pub limit_usage: String,
    /// Expires after this many `timeframe`s; empty: never.
    pub ttl: String,
    pub timeframe: String,
    /// Activation limit; empty: none.
    pub activations: String,
    pub enable_customer_admin: Option<String>,
    /// Customers may rotate their keys in the portal.
    pub allow_customer_rotation: Option<String>,
    /// Days a subscription's key keeps working past its paid period; empty: the default.
    pub grace_days: String,
}

impl Default for BenefitForm {
    fn default() -> Self {
        BenefitForm {
            description: String::new(),
            prefix: String::new(),
            limit_usage: String::new(),
            ttl: String::new(),
            timeframe: "year".into(),
            activations: String::new(),
            enable_customer_admin: None,
            allow_customer_rotation: None,
            grace_days: String::new(),
        }
    }
}

impl BenefitForm {
    /// The form of a new benefit: customers may rotate their keys, as Polar lets them.
    pub fn blank() -> Self {
        BenefitForm {
            allow_customer_rotation: Some("on".into()),
            ..BenefitForm::default()
        }
    }

    pub fn of(b: &Benefit) -> Self {
        let mut form = BenefitForm {
            description: b.description.clone(),
            ..BenefitForm::default()
        };
        if let BenefitProperties::LicenseKeys(p) = &b.properties {
            form.allow_customer_rotation = p.allow_customer_rotation.then(|| "on".to_string());
            form.grace_days = p.grace_days.to_string();
            form.prefix = opt_string(&p.prefix);
            form.limit_usage = opt_string(&p.limit_usage);
            if let Some(e) = &p.expires {
                form.ttl = e.ttl.to_string();
                form.timeframe = match e.timeframe {
                    Timeframe::Day => "day",
                    Timeframe::Month => "month",
                    Timeframe::Year => "year",
                }
                .into();
            }
            if let Some(a) = &p.activations {
                form.activations = a.limit.to_string();
                form.enable_customer_admin = a.enable_customer_admin.then(|| "on".to_string());
            }
        }
        form
    }

    /// The body of a license-key benefit (create and update).
    fn license_keys(&self) -> Value {
        let expires = match self.ttl.trim() {
            "" => Value::Null,
            _ => json!({ "ttl": int(&self.ttl), "timeframe": self.timeframe }),
        };
        let activations = match self.activations.trim() {
            "" => Value::Null,
            _ => json!({
                "limit": int(&self.activations),
                "enable_customer_admin": ticked(&self.enable_customer_admin),
            }),
        };
        json!({
            "type": "license_keys",
            "description": self.description.trim(),
            "properties": {
                "prefix": text(&self.prefix),
                "expires": expires,
                "activations": activations,
                "limit_usage": int(&self.limit_usage),
                "allow_customer_rotation": ticked(&self.allow_customer_rotation),
                "grace_days": int(&self.grace_days),
            },
        })
    }
}

pub async fn create_license_key_benefit(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
    form: &BenefitForm,
) -> Result<Benefit, ApiError> {
    let mut raw = form.license_keys();
    raw["organization_id"] = Value::from(org.to_string());
    let new = input::<BenefitCreate>(raw)?.into_inner().into_command()?;
    Ok(benefits::create(state, subject, new).await?)
}

/// Saves a benefit: a license-key benefit's description and properties (keys already
/// granted keep theirs, as with the API); another type's description.
pub async fn update_benefit(
    state: &AppState,
    subject: Subject,
    benefit: &Benefit,
    form: &BenefitForm,
) -> Result<Benefit, ApiError> {
    let raw = match benefit.properties {
        BenefitProperties::LicenseKeys(_) => form.license_keys(),
        _ => json!({
            "type": benefit.properties.kind().as_str(),
            "description": form.description.trim(),
        }),
    };
    let change = input::<BenefitUpdate>(raw)?.into_inner().into_command()?;
    Ok(benefits::update(state, subject, benefit.id, change).await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::FieldError;

    #[test]
    fn amounts_that_do_not_read_are_named_by_their_label_with_the_other_problems() {
        let form = ProductForm {
            amount: "19.999".into(),
            minimum_amount: "abc".into(),
            maximum_amount: "20".into(),
            ..ProductForm::default()
        };
        let field = |loc: Vec<Value>, msg: &str, input: &str| {
            FieldError::new("int_parsing", loc, msg, Value::from(input))
        };
        // What the API answers for the body the form made (amounts sent as typed).
        let api = ApiError::Validation(vec![
            field(
                crate::loc!["body", "name"],
                "String should have at least 3 characters",
                "x",
            ),
            field(
                crate::loc!["body", "prices", 0, "price_amount"],
                "Input should be a valid integer",
                "19.999",
            ),
            field(
                crate::loc!["body", "prices", 0, "minimum_amount"],
                "Input should be a valid integer",
                "abc",
            ),
        ]);
        assert_eq!(
            explain_amounts(api, Currency::DEFAULT, &form.amounts()).messages(),
            vec![
                "name: String should have at least 3 characters",
                "Price: Enter an amount like 19 or 19.99",
                "Minimum: Enter an amount like 19 or 19.99"
            ]
        );
        // Other errors pass through.
        assert!(matches!(
            explain_amounts(
                ApiError::Conflict("x".into()),
                Currency::DEFAULT,
                &form.amounts()
            ),
            ApiError::Conflict(_)
        ));
    }

    #[test]
    fn a_monthly_and_yearly_product_sends_two_prices_in_cents() {
        let form = ProductForm {
            billing: "month_year".into(),
            amount: "15".into(),
            yearly_amount: "150.50".into(),
            ..ProductForm::default()
        };
        let prices = form.prices();
        assert_eq!(prices[0]["recurring_interval"], "month");
        assert_eq!(prices[0]["price_amount"], 1500);
        assert_eq!(prices[1]["recurring_interval"], "year");
        assert_eq!(prices[1]["price_amount"], 15050);
    }
}
