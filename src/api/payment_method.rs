//! The customer portal's saved payment methods (Polar's `CustomerPaymentMethod`,
//! `CustomerPaymentMethodCreate`, `CustomerPaymentMethodConfirm` and
//! `CustomerPaymentMethodCreateResponse`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::domain::payment_method::{
    AddPaymentMethod, ConfirmPaymentMethod, PaymentMethod, SetupAnswer,
};
use crate::error::ApiError;
use crate::loc;
use crate::validate::Validator;

/// A card's details (Polar's `PaymentMethodCardMetadata`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PaymentMethodCardMetadata {
    pub brand: String,
    pub last4: String,
    pub exp_month: u32,
    pub exp_year: u32,
    /// The wallet the card was added through (`apple_pay`, `google_pay`, …), if any.
    pub wallet: Option<String>,
}

/// One of the customer's saved payment methods (Polar's `CustomerPaymentMethod`: a card,
/// or a method of another `type` without details).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerPaymentMethod {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    /// `stripe` (the only processor Polar's clients know).
    #[schema(value_type = String)]
    pub processor: &'static str,
    pub customer_id: Uuid,
    /// `card`, or the processor's type of another method.
    #[serde(rename = "type")]
    pub kind: String,
    /// A card's details; `null` for another type.
    pub method_metadata: Option<PaymentMethodCardMetadata>,
}

impl From<&PaymentMethod> for CustomerPaymentMethod {
    fn from(m: &PaymentMethod) -> Self {
        let d = &m.details;
        let method_metadata = (d.kind == "card").then(|| PaymentMethodCardMetadata {
            brand: d.brand.clone().unwrap_or_default(),
            last4: d.last4.clone().unwrap_or_default(),
            exp_month: d.exp_month.unwrap_or_default(),
            exp_year: d.exp_year.unwrap_or_default(),
            wallet: d.wallet.clone(),
        });
        CustomerPaymentMethod {
            id: m.id.0,
            created_at: m.created_at,
            modified_at: m.modified_at,
            processor: "stripe",
            customer_id: m.customer_id.0,
            kind: d.kind.clone(),
            method_metadata,
        }
    }
}

/// `POST /v1/customer-portal/customers/me/payment-methods`: every field required.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct CustomerPaymentMethodCreate {
    /// Stripe's ConfirmationToken (`ctoken_…`) or PaymentMethod (`pm_…`); a test token
    /// with the test processor.
    pub confirmation_token_id: String,
    /// Make the method the customer's default.
    pub set_default: bool,
    /// Where the processor sends the buyer back after an authentication (an http(s) URL).
    pub return_url: String,
}

impl CustomerPaymentMethodCreate {
    /// A 422 for a blank token or a `return_url` that is no http(s) URL.
    pub fn into_command(self) -> Result<AddPaymentMethod, ApiError> {
        let mut v = Validator::new();
        v.min_chars(
            loc!["body", "confirmation_token_id"],
            self.confirmation_token_id.trim(),
            1,
        );
        v.http_url(loc!["body", "return_url"], &self.return_url);
        v.finish()?;
        Ok(AddPaymentMethod {
            token: self.confirmation_token_id.trim().to_string(),
            set_default: self.set_default,
            return_url: self.return_url,
        })
    }
}

/// `POST /v1/customer-portal/customers/me/payment-methods/confirm`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct CustomerPaymentMethodConfirm {
    pub setup_intent_id: String,
    pub set_default: bool,
}

impl CustomerPaymentMethodConfirm {
    pub fn into_command(self) -> Result<ConfirmPaymentMethod, ApiError> {
        let mut v = Validator::new();
        v.min_chars(
            loc!["body", "setup_intent_id"],
            self.setup_intent_id.trim(),
            1,
        );
        v.finish()?;
        Ok(ConfirmPaymentMethod {
            setup_intent_id: self.setup_intent_id.trim().to_string(),
            set_default: self.set_default,
        })
    }
}

/// What an add or a confirm did (Polar's `CustomerPaymentMethodCreateResponse`, told
/// apart by `status`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CustomerPaymentMethodCreateResponse {
    /// Saved.
    Succeeded {
        payment_method: CustomerPaymentMethod,
    },
    /// The buyer must authenticate the card (3-D Secure) with this secret, then the
    /// setup is confirmed with its id.
    RequiresAction { client_secret: String },
}

impl From<&SetupAnswer> for CustomerPaymentMethodCreateResponse {
    fn from(a: &SetupAnswer) -> Self {
        match a {
            SetupAnswer::Saved(m) => CustomerPaymentMethodCreateResponse::Succeeded {
                payment_method: m.into(),
            },
            SetupAnswer::RequiresAction { client_secret } => {
                CustomerPaymentMethodCreateResponse::RequiresAction {
                    client_secret: client_secret.clone(),
                }
            }
        }
    }
}

/// One answer of each shape, for the document's tests.
#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    use crate::domain::ids::{CustomerId, OrganizationId};
    let method = PaymentMethod::new(
        OrganizationId(Uuid::from_u128(0x0a)),
        CustomerId(Uuid::from_u128(0xc0)),
        "pm_1Qabc".into(),
        crate::domain::payment_method::MethodDetails {
            kind: "card".into(),
            brand: Some("visa".into()),
            last4: Some("4242".into()),
            exp_month: Some(12),
            exp_year: Some(2030),
            wallet: None,
        },
        DateTime::<Utc>::UNIX_EPOCH,
    );
    let json = |v: serde_json::Result<serde_json::Value>| v.unwrap_or_default();
    vec![
        (
            "CustomerPaymentMethod",
            json(serde_json::to_value(CustomerPaymentMethod::from(&method))),
        ),
        (
            "CustomerPaymentMethodCreateResponse",
            json(serde_json::to_value(
                CustomerPaymentMethodCreateResponse::from(&SetupAnswer::Saved(method)),
            )),
        ),
        (
            "CustomerPaymentMethodCreateResponse",
            json(serde_json::to_value(
                CustomerPaymentMethodCreateResponse::from(&SetupAnswer::RequiresAction {
                    client_secret: "seti_1Qabc_secret_xyz".into(),
                }),
            )),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{CustomerId, OrganizationId};
    use crate::domain::payment_method::MethodDetails;
    use serde_json::json;

    fn method(kind: &str) -> PaymentMethod {
        PaymentMethod::new(
            OrganizationId::new(),
            CustomerId::new(),
            "pm_1".into(),
            MethodDetails {
                kind: kind.into(),
                brand: Some("visa".into()),
                last4: Some("4242".into()),
                exp_month: Some(12),
                exp_year: Some(2030),
                wallet: None,
            },
            DateTime::<Utc>::UNIX_EPOCH,
        )
    }

    #[test]
    fn a_card_shows_its_metadata_and_another_type_none() {
        let m = method("card");
        let shown = serde_json::to_value(CustomerPaymentMethod::from(&m)).unwrap_or_default();
        assert_eq!(shown["processor"], "stripe");
        assert_eq!(shown["type"], "card");
        assert_eq!(shown["customer_id"], json!(m.customer_id.to_string()));
        assert_eq!(
            shown["method_metadata"],
            json!({"brand": "visa", "last4": "4242", "exp_month": 12, "exp_year": 2030,
                   "wallet": null})
        );
        let other = serde_json::to_value(CustomerPaymentMethod::from(&method("sepa_debit")))
            .unwrap_or_default();
        assert_eq!(other["type"], "sepa_debit");
        assert_eq!(other["method_metadata"], serde_json::Value::Null);
    }

    #[test]
    fn the_answer_is_told_apart_by_status() {
        let saved = CustomerPaymentMethodCreateResponse::from(&SetupAnswer::Saved(method("card")));
        let saved = serde_json::to_value(saved).unwrap_or_default();
        assert_eq!(saved["status"], "succeeded");
        assert_eq!(saved["payment_method"]["type"], "card");
        let action = CustomerPaymentMethodCreateResponse::from(&SetupAnswer::RequiresAction {
            client_secret: "seti_1_secret_x".into(),
        });
        assert_eq!(
            serde_json::to_value(action).unwrap_or_default(),
            json!({"status": "requires_action", "client_secret": "seti_1_secret_x"})
        );
    }

    #[test]
    fn a_create_needs_a_token_and_an_http_return_url() {
        let body = |token: &str, url: &str| CustomerPaymentMethodCreate {
            confirmation_token_id: token.into(),
            set_default: true,
            return_url: url.into(),
        };
        let ok = body(" tok_visa ", "https://example.com/portal").into_command();
        assert!(
            matches!(ok, Ok(AddPaymentMethod { ref token, set_default: true, .. })
            if token == "tok_visa")
        );
        assert!(body("", "https://example.com").into_command().is_err());
        assert!(body("tok_visa", "javascript:alert(1)")
            .into_command()
            .is_err());
        assert!(CustomerPaymentMethodConfirm {
            setup_intent_id: " ".into(),
            set_default: false
        }
        .into_command()
        .is_err());
    }
}
