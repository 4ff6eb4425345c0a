//! Discounts and custom fields.

use serde::Deserialize;

use crate::api::custom_field::{
    field_type, CustomFieldChangeInput, CustomFieldInput, OptionInput, PropertiesInput,
};
use crate::api::discount::{
    check_dates, AmountsInput, DiscountCreate, DiscountTypeInput, DiscountUpdate, DurationInput,
};
use crate::api::Maybe;
use crate::app::catalog::{custom_fields, discounts};
use crate::auth::Subject;
use crate::domain::currency::Currency;
use crate::domain::custom_field::{CustomField, CustomFieldProperties, CustomFieldType};
use crate::domain::discount::{Discount, DiscountKind};
use crate::domain::ids::{DiscountId, OrganizationId, ProductId};
use crate::error::{ApiError, AppError, Invalid};
use crate::field;
use crate::state::AppState;

use super::{basis_points, day_of, major_units, opt_string, text, ticked, Typed, MIDNIGHT};

// ---------------------------------------------------------------------------------------
// Discounts
// ---------------------------------------------------------------------------------------

/// A discount: percentage (`percent`) or fixed (rows of `amount_currency` and `amount`,
/// typed in the currency's major unit: one amount per currency it applies in), its
/// duration, code, dates and products.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct DiscountForm {
    pub name: String,
    pub code: String,
    /// `percentage` or `fixed`.
    #[serde(rename = "type")]
    pub kind: String,
    pub percent: String,
    /// The amount of each row (blank rows are left out).
    pub amount: Vec<String>,
    /// The currency of each row (a row without one: US dollars).
    pub amount_currency: Vec<String>,
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
            amount: Vec::new(),
            amount_currency: Vec::new(),
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
        let (kind, percent) = match &d.kind {
            DiscountKind::Fixed { .. } => ("fixed", String::new()),
            DiscountKind::Percentage { basis_points } => {
                ("percentage", format!("{}", *basis_points as f64 / 100.0))
            }
        };
        let amounts = d.fixed_amounts();
        DiscountForm {
            name: d.name.clone(),
            code: opt_string(&d.code),
            kind: kind.into(),
            percent,
            amount: amounts.iter().map(|(c, a)| major_units(*a, *c)).collect(),
            amount_currency: amounts.iter().map(|(c, _)| c.to_string()).collect(),
            duration: d.duration.as_str().into(),
            duration_in_months: opt_string(&d.duration.months()),
            max_redemptions: opt_string(&d.max_redemptions),
            starts_at: day_of(d.starts_at),
            ends_at: day_of(d.ends_at),
            product: d.product_ids.iter().map(ToString::to_string).collect(),
        }
    }

    /// The amount rows to show: those typed (or stored), then blank ones up to three and
    /// one more than typed, the first in US dollars when none was typed.
    pub fn amount_rows(&self) -> Vec<AmountRow> {
        let n = self.amount.len().max(self.amount_currency.len());
        let mut rows: Vec<AmountRow> = (0..n)
            .map(|i| AmountRow {
                currency: self
                    .amount_currency
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| Currency::DEFAULT.code().to_string()),
                amount: self.amount.get(i).cloned().unwrap_or_default(),
            })
            .collect();
        let blank = 3usize.saturating_sub(rows.len()).max(1);
        for _ in 0..blank {
            let currency = if rows.is_empty() {
                Currency::DEFAULT.code().to_string()
            } else {
                String::new()
            };
            rows.push(AmountRow {
                currency,
                amount: String::new(),
            });
        }
        rows
    }

    /// The rows typed with an amount: (currency code as typed, amount as typed).
    fn typed_amounts(&self) -> Vec<(String, String)> {
        self.amount
            .iter()
            .enumerate()
            .filter(|(_, a)| !a.trim().is_empty())
            .map(|(i, a)| {
                let code = self
                    .amount_currency
                    .get(i)
                    .map(|c| c.trim().to_lowercase())
                    .filter(|c| !c.is_empty())
                    .unwrap_or_else(|| Currency::DEFAULT.code().to_string());
                (code, a.trim().to_string())
            })
            .collect()
    }

    /// Every currency a discount may have an amount in (Polar's presentment currencies).
    pub fn currency_options(&self) -> Vec<String> {
        Currency::presentment().map(|c| c.to_string()).collect()
    }

    /// Whether product `id` is ticked.
    pub fn has_product(&self, id: &ProductId) -> bool {
        let id = id.to_string();
        self.product.contains(&id)
    }
}

/// One row of a fixed discount's amounts in the form: a currency code (blank: none
/// chosen) and the amount as typed.
#[derive(Debug, Clone, PartialEq)]
pub struct AmountRow {
    pub currency: String,
    pub amount: String,
}

impl AmountRow {
    /// Whether `code` is the row's currency (its option is selected).
    pub fn selected(&self, code: &str) -> bool {
        self.currency == code
    }
}

/// The discount type typed, or the problem (and a stand-in, so that the other fields are
/// still checked).
fn discount_type(typed: &mut Typed, v: &str) -> DiscountTypeInput {
    match v {
        "fixed" => DiscountTypeInput::Fixed,
        "percentage" => DiscountTypeInput::Percentage,
        other => {
            typed.0.push(
                Invalid::new(
                    field!["type"],
                    "Input should be 'fixed' or 'percentage'",
                    other,
                )
                .kind("enum"),
            );
            DiscountTypeInput::Percentage
        }
    }
}

/// The duration typed, or the problem (and a stand-in).
fn duration(typed: &mut Typed, v: &str) -> DurationInput {
    match v {
        "once" => DurationInput::Once,
        "forever" => DurationInput::Forever,
        "repeating" => DurationInput::Repeating,
        other => {
            typed.0.push(
                Invalid::new(
                    field!["duration"],
                    "Input should be 'once', 'forever' or 'repeating'",
                    other,
                )
                .kind("enum"),
            );
            DurationInput::Once
        }
    }
}

pub async fn create_discount(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
    form: &DiscountForm,
) -> Result<Discount, ApiError> {
    let mut typed = Typed::default();
    let kind = discount_type(&mut typed, &form.kind);
    let duration = duration(&mut typed, &form.duration);
    let months = match duration {
        DurationInput::Repeating => {
            typed.int(field!["duration_in_months"], &form.duration_in_months, true)
        }
        _ => None,
    };
    // An amount or a percentage that does not read is named by its label (and stands in
    // as a valid one, so that the API does not also call it missing).
    let (mut amounts, mut bp) = (None, None);
    match kind {
        DiscountTypeInput::Fixed => {
            let mut rows: Vec<(String, i64)> = Vec::new();
            for (code, typed_in) in form.typed_amounts() {
                // A currency the API does not know is its to name (enum); the amount is
                // read in the currency if it is one.
                let currency = Currency::from_code(&code).unwrap_or_default();
                let label = format!("{} off", code.to_uppercase());
                let minor = typed.amount(&typed_in, currency, &label).unwrap_or(0);
                rows.push((code, minor));
            }
            amounts = Some(AmountsInput::of(&rows));
        }
        DiscountTypeInput::Percentage => {
            let typed_in = form.percent.trim();
            bp = basis_points(typed_in);
            if bp.is_none() && !typed_in.is_empty() {
                typed.0.push(
                    Invalid::new(
                        field!["Percent off"],
                        "Enter an amount like 19 or 19.99",
                        typed_in,
                    )
                    .kind("decimal_parsing"),
                );
                bp = Some(1);
            }
        }
    }
    let starts_at = typed.day(field!["starts_at"], &form.starts_at, MIDNIGHT);
    let ends_at = typed.day(field!["ends_at"], &form.ends_at, MIDNIGHT);
    let body = DiscountCreate {
        name: form.name.trim().to_string(),
        kind,
        duration,
        duration_in_months: months,
        amount: None,
        currency: None,
        amounts,
        basis_points: bp,
        code: text(&form.code),
        starts_at: None,
        ends_at: None,
        max_redemptions: typed.int(field!["max_redemptions"], &form.max_redemptions, true),
        max_redemptions_per_customer: None,
        products: Some(typed.ids("products", &form.product)),
        organization_id: Some(org.0),
        metadata: None,
    };
    // No body was sent: nothing to quote.
    let built = body.into_command(None).and_then(|mut new| {
        // The dates (days here) and the API's rule on them.
        check_dates(starts_at, ends_at)?;
        new.starts_at = starts_at;
        new.ends_at = ends_at;
        Ok(new)
    });
    let new = typed.finish(built)?;
    Ok(discounts::create(state, subject, new).await?)
}

/// Saves a discount's name, code, dates, limit and products (its amounts and duration are
/// fixed once created here: the API refuses to change the duration).
pub async fn update_discount(
    state: &AppState,
    subject: Subject,
    id: DiscountId,
    form: &DiscountForm,
) -> Result<Discount, ApiError> {
    let mut typed = Typed::default();
    let starts_at = typed.day(field!["starts_at"], &form.starts_at, MIDNIGHT);
    let ends_at = typed.day(field!["ends_at"], &form.ends_at, MIDNIGHT);
    let nullable = |v: Option<i64>| v.map_or(Maybe::Null, Maybe::Value);
    let body = DiscountUpdate {
        name: Maybe::Value(form.name.trim().to_string()),
        code: super::maybe_text(&form.code),
        max_redemptions: nullable(typed.int(
            field!["max_redemptions"],
            &form.max_redemptions,
            true,
        )),
        products: Maybe::Value(typed.ids("products", &form.product)),
        ..DiscountUpdate::default()
    };
    let change = typed.finish(body.into_command(None).map(|mut change| {
        change.starts_at = Some(starts_at);
        change.ends_at = Some(ends_at);
        change
    }))?;
    Ok(discounts::update(state, subject, id, change).await?)
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

    /// The field's type, or the API's 422 about a type that is not one.
    fn kind(&self) -> Result<CustomFieldType, ApiError> {
        field_type(&self.kind).map_err(|wrong| ApiError::from(AppError::Invalid(vec![wrong])))
    }

    /// The properties as typed (an integer that does not read is in `typed`); the API's
    /// rules check them.
    fn properties(&self, kind: CustomFieldType, typed: &mut Typed) -> PropertiesInput {
        let at = |key: &str| field![kind.as_str(), "properties", key];
        let mut p = PropertiesInput {
            form_label: text(&self.form_label),
            form_help_text: text(&self.form_help_text),
            form_placeholder: text(&self.form_placeholder),
            ..PropertiesInput::default()
        };
        match kind {
            CustomFieldType::Text => {
                p.textarea = Some(ticked(&self.textarea));
                p.min_length = typed.int(at("min_length"), &self.min_length, false);
                p.max_length = typed.int(at("max_length"), &self.max_length, false);
            }
            CustomFieldType::Number => {
                p.ge = typed.int(at("ge"), &self.ge, false);
                p.le = typed.int(at("le"), &self.le, false);
            }
            CustomFieldType::Date | CustomFieldType::Checkbox => {}
            CustomFieldType::Select => {
                let lines = self
                    .options
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty());
                let option = |line: &str| {
                    let (value, label) = line
                        .split_once(':')
                        .map_or((line, line), |(v, l)| (v.trim(), l.trim()));
                    OptionInput {
                        value: Some(value.to_string()),
                        label: Some(label.to_string()),
                    }
                };
                p.options = Some(lines.map(option).collect());
            }
        }
        p
    }
}

pub async fn create_custom_field(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
    form: &CustomFieldForm,
) -> Result<CustomField, ApiError> {
    let kind = form.kind()?;
    let mut typed = Typed::default();
    let input = CustomFieldInput {
        kind,
        slug: Some(form.slug.trim().to_string()),
        name: Some(form.name.trim().to_string()),
        metadata: None,
        organization_id: Some(org.0),
        properties: Some(form.properties(kind, &mut typed)),
    };
    let new = typed.finish(input.into_command())?;
    Ok(custom_fields::create(state, subject, new).await?)
}

/// Saves a custom field (its type does not change: the stored one is sent).
pub async fn update_custom_field(
    state: &AppState,
    subject: Subject,
    field: &CustomField,
    form: &CustomFieldForm,
) -> Result<CustomField, ApiError> {
    let kind = field.kind();
    let mut typed = Typed::default();
    let input = CustomFieldChangeInput {
        kind,
        slug: Some(form.slug.trim().to_string()),
        name: Some(form.name.trim().to_string()),
        metadata: None,
        properties: Some(form.properties(kind, &mut typed)),
    };
    let change = typed.finish(input.into_command())?;
    Ok(custom_fields::update(state, subject, field.id, change).await?)
}
