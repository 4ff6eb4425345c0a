//! The billing-details form of the dashboard's order page, read by the rules of
//! `PATCH /v1/orders/{id}` (Polar's `OrderUpdate`, [`super::invoice::OrderUpdate`]): the
//! same change, the same 422s.

use serde::Deserialize;
use serde_json::{json, Value};

use super::invoice::{BillingUpdate, OrderUpdate};
use super::Maybe;
use crate::domain::customer::Address;
use crate::error::ApiError;

/// The form as posted (every field a text box; the country and a state read-only once the
/// order has them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct BillingForm {
    pub billing_name: String,
    pub line1: String,
    pub line2: String,
    pub postal_code: String,
    pub city: String,
    pub state: String,
    pub country: String,
}

impl BillingForm {
    /// The form as an order's details fill it.
    pub fn of(billing_name: Option<&str>, address: Option<&Address>) -> BillingForm {
        let s =
            |f: fn(&Address) -> Option<&String>| address.and_then(f).cloned().unwrap_or_default();
        BillingForm {
            billing_name: billing_name.unwrap_or_default().to_string(),
            line1: s(|a| a.line1.as_ref()),
            line2: s(|a| a.line2.as_ref()),
            postal_code: s(|a| a.postal_code.as_ref()),
            city: s(|a| a.city.as_ref()),
            state: s(|a| a.state.as_ref()),
            country: address.map(|a| a.country.clone()).unwrap_or_default(),
        }
    }

    /// The change the form asks for, validated as `PATCH /v1/orders/{id}` validates its
    /// body: an empty name clears it; an address without a country is left as it is.
    pub fn into_command(self) -> Result<BillingUpdate, ApiError> {
        let opt = |v: &str| match v.trim() {
            "" => Value::Null,
            v => Value::String(v.to_string()),
        };
        let billing_address = match self.country.trim() {
            "" => Maybe::Absent,
            country => Maybe::Value(json!({
                "line1": opt(&self.line1),
                "line2": opt(&self.line2),
                "postal_code": opt(&self.postal_code),
                "city": opt(&self.city),
                "state": opt(&self.state),
                "country": country,
            })),
        };
        OrderUpdate {
            billing_name: Maybe::Value(self.billing_name),
            billing_address,
        }
        .into_command()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::ResponseError;

    fn form(name: &str, country: &str, city: &str) -> BillingForm {
        BillingForm {
            billing_name: name.into(),
            city: city.into(),
            country: country.into(),
            ..BillingForm::default()
        }
    }

    #[test]
    fn the_form_reads_as_the_api_body_does() {
        let change = form(" Acme SAS ", "fr", "Lyon").into_command().unwrap();
        assert_eq!(change.billing_name, Some(Some("Acme SAS".into())));
        let address = change.billing_address.flatten().expect("an address");
        assert_eq!(
            (
                address.country.as_str(),
                address.city.as_deref(),
                address.line1
            ),
            ("FR", Some("Lyon"), None)
        );
        // No country: the address is left alone; an empty name clears it.
        let change = form("", "", "Lyon").into_command().unwrap();
        assert_eq!(change.billing_name, Some(None));
        assert_eq!(change.billing_address, None);
        // A country that is none: the API's 422 at its field.
        let e = form("Acme", "XX", "").into_command().unwrap_err();
        assert_eq!(e.status_code().as_u16(), 422);
    }

    #[test]
    fn the_form_is_filled_from_the_order() {
        let a = Address {
            line1: Some("1 rue".into()),
            line2: None,
            postal_code: Some("75001".into()),
            city: Some("Paris".into()),
            state: None,
            country: "FR".into(),
        };
        let f = BillingForm::of(Some("Jo"), Some(&a));
        assert_eq!(
            (
                f.billing_name.as_str(),
                f.line1.as_str(),
                f.line2.as_str(),
                f.country.as_str()
            ),
            ("Jo", "1 rue", "", "FR")
        );
        assert_eq!(BillingForm::of(None, None).country, "");
    }
}
