//! Discounts and custom fields.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::api::discount::{DiscountCreate, DiscountUpdate};
use crate::app::catalog::{custom_fields, discounts};
use crate::auth::Subject;
use crate::domain::currency::Currency;
use crate::domain::custom_field::{CustomField, CustomFieldProperties};
use crate::domain::discount::{Discount, DiscountKind};
use crate::domain::ids::{CustomFieldId, DiscountId, OrganizationId, ProductId};
use crate::error::ApiError;
use crate::state::AppState;

use super::{
    cents, day_of, day_value, explain_amounts, input, int, major_units, opt_string, text, ticked,
};

// ---------------------------------------------------------------------------------------
// Discounts
// ---------------------------------------------------------------------------------------

/// A discount: percentage (`percent`) or fixed (`amount`, USD), its duration, code, dates
/// and products.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct DiscountForm {
    pub name: String,
    pub code: String,
    /// `percentage` or `fixed`.
    #[serde(rename = "type")]
    pub kind: String,
    pub percent: String,
    pub amount: String,
    /// `once`, `forever` or `repeating`.
    pub duration: String,
    pub duration_in_months: String,
    pub max_redemptions: String,
    pub starts_at: String,
    pub ends_at: String,
    pub product: Vec<String>,
}

impl Default for DiscountForm {
    fn default() -> Self {
        DiscountForm {
            name: String::new(),
            code: String::new(),
            kind: "percentage".into(),
            percent: String::new(),
            amount: String::new(),
            duration: "once".into(),
            duration_in_months: String::new(),
            max_redemptions: String::new(),
            starts_at: String::new(),
            ends_at: String::new(),
            product: Vec::new(),
        }
    }
}

impl DiscountForm {
    pub fn of(d: &Discount) -> Self {
        let (kind, amount, percent) = match &d.kind {
            DiscountKind::Fixed { amount, currency } => {
                let currency = Currency::from_code(currency).unwrap_or_default();
                ("fixed", major_units(*amount, currency), String::new())
            }
            DiscountKind::Percentage { basis_points } => (
                "percentage",
                String::new(),
                format!("{}", *basis_points as f64 / 100.0),
            ),
        };
        DiscountForm {
            name: d.name.clone(),
            code: opt_string(&d.code),
            kind: kind.into(),
            percent,
            amount,
            duration: d.duration.as_str().into(),
            duration_in_months: opt_string(&d.duration.months()),
            max_redemptions: opt_string(&d.max_redemptions),
            starts_at: day_of(d.starts_at),
            ends_at: day_of(d.ends_at),
            product: d.product_ids.iter().map(ToString::to_string).collect(),
        }
    }

    /// Whether product `id` is ticked.
    pub fn has_product(&self, id: &ProductId) -> bool {
        let id = id.to_string();
        self.product.contains(&id)
    }
}

pub async fn create_discount(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
    form: &DiscountForm,
) -> Result<Discount, ApiError> {
    let mut raw = json!({
        "name": form.name.trim(),
        "type": form.kind,
        "duration": form.duration,
        "code": text(&form.code),
        "starts_at": day_value(&form.starts_at, "00:00:00"),
        "ends_at": day_value(&form.ends_at, "00:00:00"),
        "max_redemptions": int(&form.max_redemptions),
        "products": form.product,
        "organization_id": org.to_string(),
    });
    if form.duration == "repeating" {
        raw["duration_in_months"] = int(&form.duration_in_months);
    }
    if form.kind == "fixed" {
        raw["amount"] = cents(&form.amount, Currency::DEFAULT);
        raw["currency"] = Value::from(Currency::DEFAULT.code());
    } else {
        // A percentage has two decimals, as a dollar amount does.
        raw["basis_points"] = cents(&form.percent, Currency::USD);
    }
    let created = async {
        let body = input::<DiscountCreate>(raw)?;
        let new = body.value.into_command(&body.raw)?;
        Ok(discounts::create(state, subject, new).await?)
    }
    .await;
    created.map_err(|e| {
        explain_amounts(
            e,
            Currency::DEFAULT,
            &[(&form.amount, "USD off"), (&form.percent, "Percent off")],
        )
    })
}

/// Saves a discount's name, code, dates, limit and products (its amount and duration are
/// fixed once created: the API refuses to change the duration).
pub async fn update_discount(
    state: &AppState,
    subject: Subject,
    id: DiscountId,
    form: &DiscountForm,
) -> Result<Discount, ApiError> {
    let raw = json!({
        "name": form.name.trim(),
        "code": text(&form.code),
        "starts_at": day_value(&form.starts_at, "00:00:00"),
        "ends_at": day_value(&form.ends_at, "00:00:00"),
        "max_redemptions": int(&form.max_redemptions),
        "products": form.product,
    });
    let body = input::<DiscountUpdate>(raw)?;
    let change = body.value.into_command()?;
    discounts::update(state, subject, id, change)
        .await
        .map_err(|e| crate::api::discount::quote_body(e, &body.raw).into())
}

// ---------------------------------------------------------------------------------------
// Custom fields
// ---------------------------------------------------------------------------------------

/// A custom field: type, slug, name and the properties of its type; select options one per
/// line, `value` or `value: label`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct CustomFieldForm {
    /// `text`, `number`, `date`, `checkbox` or `select`.
    #[serde(rename = "type")]
    pub kind: String,
    pub slug: String,
    pub name: String,
    pub form_label: String,
    pub form_help_text: String,
    pub form_placeholder: String,
    pub textarea: Option<String>,
    pub min_length: String,
    pub max_length: String,
    pub ge: String,
    pub le: String,
    pub options: String,
}

impl Default for CustomFieldForm {
    fn default() -> Self {
        CustomFieldForm {
            kind: "text".into(),
            slug: String::new(),
            name: String::new(),
            form_label: String::new(),
            form_help_text: String::new(),
            form_placeholder: String::new(),
            textarea: None,
            min_length: String::new(),
            max_length: String::new(),
            ge: String::new(),
            le: String::new(),
            options: String::new(),
        }
    }
}

impl CustomFieldForm {
    pub fn of(f: &CustomField) -> Self {
        let mut form = CustomFieldForm {
            kind: f.kind().as_str().into(),
            slug: f.slug.clone(),
            name: f.name.clone(),
            ..CustomFieldForm::default()
        };
        let shared = match &f.properties {
            CustomFieldProperties::Text {
                form: shared,
                textarea,
                min_length,
                max_length,
            } => {
                form.textarea = textarea.filter(|t| *t).map(|_| "on".to_string());
                form.min_length = opt_string(min_length);
                form.max_length = opt_string(max_length);
                shared
            }
            CustomFieldProperties::Number {
                form: shared,
                ge,
                le,
            }
            | CustomFieldProperties::Date {
                form: shared,
                ge,
                le,
            } => {
                form.ge = opt_string(ge);
                form.le = opt_string(le);
                shared
            }
            CustomFieldProperties::Checkbox { form: shared } => shared,
            CustomFieldProperties::Select {
                form: shared,
                options,
            } => {
                form.options = options
                    .iter()
                    .map(|o| format!("{}: {}", o.value, o.label))
                    .collect::<Vec<_>>()
                    .join("\n");
                shared
            }
        };
        form.form_label = opt_string(&shared.form_label);
        form.form_help_text = opt_string(&shared.form_help_text);
        form.form_placeholder = opt_string(&shared.form_placeholder);
        form
    }

    /// The API's body (with `organization_id` on a create).
    fn body(&self, org: Option<OrganizationId>) -> Value {
        let mut props = json!({
            "form_label": text(&self.form_label),
            "form_help_text": text(&self.form_help_text),
            "form_placeholder": text(&self.form_placeholder),
        });
        match self.kind.as_str() {
            "text" => {
                props["textarea"] = Value::from(ticked(&self.textarea));
                props["min_length"] = int(&self.min_length);
                props["max_length"] = int(&self.max_length);
            }
            "number" => {
                props["ge"] = int(&self.ge);
                props["le"] = int(&self.le);
            }
            "select" => {
                let options: Vec<Value> = self
                    .options
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(|l| match l.split_once(':') {
                        Some((v, label)) => json!({"value": v.trim(), "label": label.trim()}),
                        None => json!({"value": l, "label": l}),
                    })
                    .collect();
                props["options"] = Value::from(options);
            }
            _ => {}
        }
        if let Some(m) = props.as_object_mut() {
            m.retain(|_, v| !v.is_null());
        }
        let mut raw = json!({
            "type": self.kind,
            "slug": self.slug.trim(),
            "name": self.name.trim(),
            "properties": props,
        });
        if let Some(org) = org {
            raw["organization_id"] = Value::from(org.to_string());
        }
        raw
    }
}

pub async fn create_custom_field(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
    form: &CustomFieldForm,
) -> Result<CustomField, ApiError> {
    let new = crate::api::custom_field::new_custom_field(&form.body(Some(org)))?;
    Ok(custom_fields::create(state, subject, new).await?)
}

/// Saves a custom field (its type does not change: the stored one is sent).
pub async fn update_custom_field(
    state: &AppState,
    subject: Subject,
    field: &CustomField,
    form: &CustomFieldForm,
) -> Result<CustomField, ApiError> {
    let form = CustomFieldForm {
        kind: field.kind().as_str().into(),
        ..form.clone()
    };
    let id: CustomFieldId = field.id;
    let change = crate::api::custom_field::custom_field_change(&form.body(None))?;
    Ok(custom_fields::update(state, subject, id, change).await?)
}
