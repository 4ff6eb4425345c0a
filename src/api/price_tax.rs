//! A price's `tax_behavior` (Polar's `TaxBehaviorOption`): read from a price body and
//! rendered on the price.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::ToSchema;

use super::at;
use crate::domain::tax_settings::TaxBehaviorOption;
use crate::error::FieldError;
use crate::validate::Validator;

/// Polar's `TaxBehaviorOption`: a price's (or an organization's default) tax behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = TaxBehaviorOption)]
pub enum TaxBehaviorOptionWire {
    Location,
    Inclusive,
    Exclusive,
}

impl From<TaxBehaviorOption> for TaxBehaviorOptionWire {
    fn from(b: TaxBehaviorOption) -> Self {
        match b {
            TaxBehaviorOption::Location => TaxBehaviorOptionWire::Location,
            TaxBehaviorOption::Inclusive => TaxBehaviorOptionWire::Inclusive,
            TaxBehaviorOption::Exclusive => TaxBehaviorOptionWire::Exclusive,
        }
    }
}

/// The message of a value that is not a [`TaxBehaviorOption`] (as the organization's
/// `default_tax_behavior` words it).
pub const TAX_BEHAVIOR_EXPECTED: &str = "'location', 'inclusive' or 'exclusive'";

/// `tax_behavior` of a price: `Some(None)` when absent or null (the organization's
/// default), `None` after pushing Polar's enum error for anything else.
pub(super) fn tax_behavior(
    v: &mut Validator,
    raw: &Value,
    loc: &[Value],
) -> Option<Option<TaxBehaviorOption>> {
    match raw.get("tax_behavior") {
        None | Some(Value::Null) => Some(None),
        Some(value) => match value.as_str().and_then(TaxBehaviorOption::parse) {
            Some(b) => Some(Some(b)),
            None => {
                v.push(
                    FieldError::new(
                        "enum",
                        at(loc, "tax_behavior"),
                        format!("Input should be {TAX_BEHAVIOR_EXPECTED}"),
                        value.clone(),
                    )
                    .with_ctx(json!({ "expected": TAX_BEHAVIOR_EXPECTED })),
                );
                None
            }
        },
    }
}
