//! "Pay now" on the wire (Polar's customer portal): `CustomerOrderConfirmPayment` (the
//! body of `POST /v1/customer-portal/orders/{id}/confirm-payment`),
//! `CustomerOrderConfirmPaymentResponse` and `CustomerOrderPaymentStatus`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::domain::ids::PaymentMethodId;
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::validate::Validator;
use tollgate_actors::subscription::{Confirmation, ConfirmationStatus, PayWith, PaymentStatus};

/// Exactly one of `confirmation_token_id` (a new payment) and `payment_method_id` (a
/// saved one).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct CustomerOrderConfirmPayment {
    /// Stripe's ConfirmationToken (`ctoken_…`) or PaymentMethod (`pm_…`); a test token
    /// with the test processor.
    #[serde(default)]
    pub confirmation_token_id: Option<String>,
    /// One of the customer's saved payment methods.
    #[serde(default)]
    pub payment_method_id: Option<Uuid>,
    /// `stripe` (the only one).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub payment_processor: Option<Value>,
}

impl CustomerOrderConfirmPayment {
    /// Polar's model validator: neither or both is a 422 at the body; a processor other
    /// than `stripe`, a blank token, 422 at their field.
    pub fn into_command(self) -> Result<PayWith, ApiError> {
        let mut v = Validator::new();
        let token = self
            .confirmation_token_id
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        match (&self.confirmation_token_id, &self.payment_method_id) {
            (None, None) => v.push(FieldError::new(
                "value_error",
                loc!["body"],
                "Value error, Either confirmation_token_id or payment_method_id must be provided",
                Value::Null,
            )),
            (Some(_), Some(_)) => v.push(FieldError::new(
                "value_error",
                loc!["body"],
                "Value error, Only one of confirmation_token_id or payment_method_id can be provided",
                Value::Null,
            )),
            (Some(t), None) if token.is_none() => {
                v.min_chars(loc!["body", "confirmation_token_id"], t.trim(), 1);
            }
            _ => {}
        }
        if let Some(p) = &self.payment_processor {
            if p != "stripe" {
                v.push(FieldError::new(
                    "literal_error",
                    loc!["body", "payment_processor"],
                    "Input should be 'stripe'",
                    p.clone(),
                ));
            }
        }
        v.finish()?;
        Ok(match (token, self.payment_method_id) {
            (Some(t), _) => PayWith::New(t.to_string()),
            (None, Some(id)) => PayWith::Saved(PaymentMethodId(id)),
            // Refused above.
            (None, None) => PayWith::New(String::new()),
        })
    }
}

/// How the charge went: `succeeded`, `requires_action` (the page authenticates with
/// `client_secret`, then polls the payment status) or `failed` (with `error`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerOrderConfirmPaymentResponse {
    pub status: String,
    pub client_secret: Option<String>,
    pub error: Option<String>,
}

impl From<&Confirmation> for CustomerOrderConfirmPaymentResponse {
    fn from(c: &Confirmation) -> Self {
        let status = match c.status {
            ConfirmationStatus::Succeeded => "succeeded",
            ConfirmationStatus::RequiresAction => "requires_action",
            ConfirmationStatus::Failed => "failed",
        };
        CustomerOrderConfirmPaymentResponse {
            status: status.into(),
            client_secret: c.client_secret.clone(),
            error: c.error.clone(),
        }
    }
}

/// The order's last payment: `pending`, `succeeded`, `failed` or `no_payment`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomerOrderPaymentStatus {
    pub status: String,
    pub error: Option<String>,
}

impl From<&PaymentStatus> for CustomerOrderPaymentStatus {
    fn from(p: &PaymentStatus) -> Self {
        CustomerOrderPaymentStatus {
            status: p.status.into(),
            error: p.error.clone(),
        }
    }
}

/// One answer of each shape, for the document's tests.
#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    let json = |v: serde_json::Result<Value>| v.unwrap_or_default();
    let answers = [
        Confirmation {
            status: ConfirmationStatus::Succeeded,
            client_secret: None,
            error: None,
        },
        Confirmation {
            status: ConfirmationStatus::RequiresAction,
            client_secret: Some("pi_3Qabc_secret_xyz".into()),
            error: None,
        },
        Confirmation {
            status: ConfirmationStatus::Failed,
            client_secret: None,
            error: Some("Your card was declined.".into()),
        },
    ];
    let mut samples: Vec<(&'static str, Value)> = answers
        .iter()
        .map(|c| {
            (
                "CustomerOrderConfirmPaymentResponse",
                json(serde_json::to_value(
                    CustomerOrderConfirmPaymentResponse::from(c),
                )),
            )
        })
        .collect();
    for status in [
        PaymentStatus {
            status: "succeeded",
            error: None,
        },
        PaymentStatus {
            status: "failed",
            error: Some("Your card was declined.".into()),
        },
    ] {
        samples.push((
            "CustomerOrderPaymentStatus",
            json(serde_json::to_value(CustomerOrderPaymentStatus::from(
                &status,
            ))),
        ));
    }
    samples
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<PayWith, ApiError> {
        serde_json::from_value::<CustomerOrderConfirmPayment>(v)
            .expect("the body's shape")
            .into_command()
    }

    #[test]
    fn exactly_one_way_to_pay_is_given() {
        let id = Uuid::from_u128(7);
        assert_eq!(
            parse(json!({"payment_method_id": id, "payment_processor": "stripe"})).ok(),
            Some(PayWith::Saved(PaymentMethodId(id)))
        );
        assert_eq!(
            parse(json!({"confirmation_token_id": " tok_visa "})).ok(),
            Some(PayWith::New("tok_visa".into()))
        );
        for bad in [
            json!({}),
            json!({"confirmation_token_id": "tok_visa", "payment_method_id": id}),
            json!({"confirmation_token_id": "  "}),
            json!({"payment_method_id": id, "payment_processor": "paypal"}),
        ] {
            assert!(parse(bad.clone()).is_err(), "{bad}");
        }
    }
}
