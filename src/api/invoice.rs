//! Invoices on the wire: Polar's `OrderUpdate` (an order's billing details, also the
//! portal's `CustomerOrderUpdate`), `OrderInvoice` / `CustomerOrderInvoice` (the link to
//! an order's invoice) and the link to a refund's credit note.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::api::customer::parse_address;
use crate::api::Maybe;
use crate::domain::customer::Address;
use crate::error::ApiError;
use crate::loc;
use crate::validate::Validator;

/// A change of an order's billing details (Polar's `OrderUpdate`): `None` leaves a field
/// as it is, `Some(None)` clears it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BillingUpdate {
    pub billing_name: Option<Option<String>>,
    pub billing_address: Option<Option<Address>>,
}

/// The longest billing name kept (as the checkout's `customer_billing_name`).
const NAME_MAX: usize = 256;

/// `PATCH /v1/orders/{id}` and `PATCH /v1/customer-portal/orders/{id}` (Polar's
/// `OrderUpdate` / `CustomerOrderUpdate`): both fields optional, an explicit `null` clears,
/// unknown keys ignored.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[schema(as = OrderUpdate)]
pub struct OrderUpdate {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub billing_name: Maybe<String>,
    // Parsed with [`parse_address`].
    #[serde(default)]
    #[schema(value_type = Option<crate::api::free_form::AddressInput>)]
    pub billing_address: Maybe<Value>,
}

impl OrderUpdate {
    /// The change the body asks for, or a 422 naming every field that breaks a rule.
    pub fn into_command(self) -> Result<BillingUpdate, ApiError> {
        let mut v = Validator::new();
        let billing_name = match self.billing_name {
            Maybe::Absent => None,
            Maybe::Null => Some(None),
            Maybe::Value(name) => {
                let name = name.trim().to_string();
                let loc = loc!["body", "billing_name"];
                if name.is_empty() {
                    Some(None)
                } else if v.max_chars(loc.clone(), &name, NAME_MAX) && v.header_safe(loc, &name) {
                    Some(Some(name))
                } else {
                    None
                }
            }
        };
        let billing_address = match &self.billing_address {
            Maybe::Absent => None,
            Maybe::Null => Some(None),
            Maybe::Value(value) => match parse_address(value, loc!["body", "billing_address"]) {
                Ok(a) => Some(Some(a)),
                Err(errors) => {
                    errors.into_iter().for_each(|e| v.push(e));
                    None
                }
            },
        };
        v.finish()?;
        Ok(BillingUpdate {
            billing_name,
            billing_address,
        })
    }
}

/// Where an order's invoice is (Polar's `OrderInvoice`, also the portal's
/// `CustomerOrderInvoice`): a signed link to the PDF, valid 600 seconds.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = OrderInvoice)]
pub struct OrderInvoice {
    pub url: String,
}

/// Where a refund's credit note is: a signed link to the PDF, valid 600 seconds.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = RefundCreditNote)]
pub struct RefundCreditNote {
    pub url: String,
}

/// One of each answer, for the document's tests.
#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    let url = "https://tollgate.example/v1/invoices/0d00.pdf?expires=1&signature=abc";
    vec![
        (
            "OrderInvoice",
            serde_json::to_value(OrderInvoice { url: url.into() }).unwrap_or_default(),
        ),
        (
            "RefundCreditNote",
            serde_json::to_value(RefundCreditNote { url: url.into() }).unwrap_or_default(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<BillingUpdate, ApiError> {
        serde_json::from_value::<OrderUpdate>(v)
            .expect("the body's shape")
            .into_command()
    }

    #[test]
    fn absent_null_and_values() {
        assert_eq!(parse(json!({})).ok(), Some(BillingUpdate::default()));
        let cleared = parse(json!({"billing_name": null, "billing_address": null})).ok();
        assert_eq!(
            cleared,
            Some(BillingUpdate {
                billing_name: Some(None),
                billing_address: Some(None)
            })
        );
        let set = parse(json!({"billing_name": "  Acme SAS ", "billing_address": {"country": "FR", "city": "Paris"}, "x": 1}))
            .expect("valid");
        assert_eq!(set.billing_name, Some(Some("Acme SAS".into())));
        assert_eq!(
            set.billing_address.flatten().map(|a| (a.country, a.city)),
            Some(("FR".into(), Some("Paris".into())))
        );
    }

    #[test]
    fn every_broken_field_is_named() {
        let e =
            parse(json!({"billing_name": "x".repeat(257), "billing_address": {"country": "XX"}}))
                .expect_err("invalid");
        let ApiError::Validation(errors) = e else {
            panic!("{e:?}")
        };
        let locs: Vec<String> = errors.iter().map(|e| format!("{:?}", e.loc)).collect();
        assert_eq!(errors.len(), 2, "{locs:?}");
        assert!(locs[0].contains("billing_name"), "{locs:?}");
        assert!(locs[1].contains("billing_address"), "{locs:?}");
    }
}
