//! Payments and tax behind traits, so checkouts complete for real without a card network.
//!
//! The built-in [`TestProcessor`] approves every confirmation token except those starting
//! with `tok_decline`, and is deterministic per idempotency key, so a checkout whose charge
//! is retried after a crash gets the same answer. A real processor (Stripe) is future work
//! and fits the same trait.

use std::future::Future;
use std::pin::Pin;

/// What to charge. `idempotency_key` is the checkout id: charging twice with the same key
/// must not take the money twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChargeRequest {
    pub idempotency_key: String,
    pub amount: i64,
    pub currency: String,
    pub confirmation_token: Option<String>,
    /// A recurring price: keep the payment method for renewals.
    pub setup_future_usage: bool,
    pub customer_email: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChargeOutcome {
    Succeeded { intent_id: String },
    Declined { message: Option<String> },
}

/// The processor failed to answer (not a decline): the charge may be retried.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("payment processor unavailable: {0}")]
pub struct ProcessorError(pub String);

pub type ChargeFuture = Pin<Box<dyn Future<Output = Result<ChargeOutcome, ProcessorError>> + Send>>;

pub trait PaymentProcessor: Send + Sync + 'static {
    /// The value of `payment_processor` in API bodies (Polar's clients only know `stripe`).
    fn name(&self) -> &'static str {
        "stripe"
    }

    fn charge(&self, request: ChargeRequest) -> ChargeFuture;
}

pub const DECLINE_PREFIX: &str = "tok_decline";

/// Approves every token but `tok_decline…`; needs no network.
#[derive(Debug, Default, Clone, Copy)]
pub struct TestProcessor;

impl PaymentProcessor for TestProcessor {
    fn charge(&self, request: ChargeRequest) -> ChargeFuture {
        let outcome = match &request.confirmation_token {
            Some(t) if t.starts_with(DECLINE_PREFIX) => ChargeOutcome::Declined {
                message: Some("Your card was declined.".into()),
            },
            _ => ChargeOutcome::Succeeded {
                intent_id: format!("pi_test_{}", request.idempotency_key.replace('-', "")),
            },
        };
        Box::pin(async move { Ok(outcome) })
    }
}

pub use tollgate_actors::tax::{NoTax, TaxCalculator};

#[cfg(test)]
mod tests {
    use super::*;

    fn request(token: Option<&str>) -> ChargeRequest {
        ChargeRequest {
            idempotency_key: "c1".into(),
            amount: 1000,
            currency: "usd".into(),
            confirmation_token: token.map(Into::into),
            setup_future_usage: false,
            customer_email: "a@b.co".into(),
        }
    }

    #[actix_web::test]
    async fn approves_and_declines_by_token() {
        let p = TestProcessor;
        assert!(matches!(
            p.charge(request(Some("tok_visa"))).await,
            Ok(ChargeOutcome::Succeeded { .. })
        ));
        assert!(matches!(
            p.charge(request(Some("tok_decline_insufficient_funds")))
                .await,
            Ok(ChargeOutcome::Declined { .. })
        ));
    }

    #[actix_web::test]
    async fn is_deterministic_per_idempotency_key() {
        let p = TestProcessor;
        assert_eq!(
            p.charge(request(Some("tok_visa"))).await,
            p.charge(request(Some("tok_visa"))).await
        );
    }

    #[test]
    fn no_tax_is_zero() {
        assert_eq!(NoTax.tax(1000, "usd", Some("FR")), 0);
    }
}
