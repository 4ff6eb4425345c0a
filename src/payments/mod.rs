//! Payments and tax behind traits, so checkouts complete for real without a card network.
//!
//! Two processors implement [`PaymentProcessor`]: the built-in [`TestProcessor`] approves
//! every confirmation token except those starting with `tok_decline`, deterministically per
//! idempotency key, so a charge retried after a crash gets the same answer (`tok_unavailable`
//! plays an outage: the first charge of each idempotency key fails as unavailable, a retry
//! succeeds); and
//! [`stripe::StripeProcessor`], which charges through Stripe PaymentIntents and verifies
//! Stripe's webhooks. `payments.processor` in `config.toml` picks one.

pub mod events;
pub mod stripe;
pub mod stripe_tax;
pub mod tax;

use std::future::Future;
use std::pin::Pin;

use tollgate_actors::domain::ids::CustomerId;

/// What to charge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChargeRequest {
    /// Charging twice with the same key must not take the money twice: a checkout's
    /// first charge uses `<checkout id>:<confirmed at>` (one key per attempt, so a buyer
    /// can pay again after a decline), a renewal `<subscription id>:<cycle>`.
    pub idempotency_key: String,
    pub amount: i64,
    pub currency: String,
    /// The buyer's payment: a test token, a Stripe ConfirmationToken (`ctoken_…`) or a
    /// Stripe PaymentMethod (`pm_…`; what renewals charge).
    pub confirmation_token: Option<String>,
    /// A recurring price: keep the payment method for renewals.
    pub setup_future_usage: bool,
    /// The buyer is not there (renewals): charge the saved method without them.
    pub off_session: bool,
    /// Our customer; the processor keeps its own customer per one of ours.
    pub customer_id: CustomerId,
    pub customer_email: String,
    pub customer_name: Option<String>,
    /// Recorded on the processor's side (Stripe metadata), e.g. `checkout_id`.
    pub metadata: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChargeOutcome {
    Succeeded {
        intent_id: String,
        /// The payment method later charges reuse (Stripe `pm_…`), when there is one.
        payment_method: Option<String>,
    },
    /// The buyer must act (3-D Secure, a bank's page), or the payment settles later (a
    /// debit: `processing`): the checkout stays `confirmed` until the processor tells how
    /// it ended.
    Pending {
        intent_id: String,
        /// The processor's own status (`requires_action`, `processing`).
        status: String,
        /// What the page needs to run the next action (Stripe's intent client secret).
        client_secret: Option<String>,
    },
    Declined {
        message: Option<String>,
    },
}

/// The processor failed to answer (not a decline): the charge may be retried.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("payment processor unavailable: {0}")]
pub struct ProcessorError(pub String);

pub type ChargeFuture = Pin<Box<dyn Future<Output = Result<ChargeOutcome, ProcessorError>> + Send>>;

/// What the hosted checkout page needs to collect a payment in the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessorClient {
    /// A plain text field for a test token.
    Test,
    /// Stripe.js with a card element.
    Stripe {
        publishable_key: String,
        /// Where Stripe.js is loaded from (`payments.stripe_js_url`).
        js_url: String,
        /// What the page must allow beyond itself.
        sources: PageSources,
    },
}

/// The origins a page that collects a payment loads from, talks to and frames, beyond its
/// own: its Content-Security-Policy allows exactly these.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageSources {
    pub script: Vec<String>,
    pub connect: Vec<String>,
    pub frame: Vec<String>,
}

pub trait PaymentProcessor: Send + Sync + 'static {
    /// The value of `payment_processor` in API bodies (Polar's clients only know `stripe`).
    fn name(&self) -> &'static str {
        "stripe"
    }

    /// How the hosted checkout page collects a payment.
    fn client(&self) -> ProcessorClient;

    fn charge(&self, request: ChargeRequest) -> ChargeFuture;

    /// A charge the buyer makes on a page: as [`PaymentProcessor::charge`], and a method
    /// that sends the buyer elsewhere (a bank's page: iDEAL, Bancontact) brings them back
    /// to `return_url` (Stripe's; the checkout's confirmation page). The default ignores it.
    fn charge_from_page(&self, request: ChargeRequest, return_url: String) -> ChargeFuture {
        let _ = return_url;
        self.charge(request)
    }

    /// Saves the buyer's payment method for later off-session charges without charging
    /// (a free trial's checkout; `amount` is ignored): Stripe's SetupIntent. Answers as a
    /// charge does, the intent being the setup's (`seti_…`); idempotent per key.
    fn setup(&self, request: ChargeRequest) -> ChargeFuture;

    /// [`PaymentProcessor::setup`] from a page, coming back to `return_url` after a
    /// redirect (as [`PaymentProcessor::charge_from_page`]).
    fn setup_from_page(&self, request: ChargeRequest, return_url: String) -> ChargeFuture {
        let _ = return_url;
        self.setup(request)
    }

    /// The current state of an intent this processor answered `Pending` for (recovery and
    /// polling): `Pending` again while it is unsettled.
    fn intent(&self, intent_id: &str) -> ChargeFuture;

    /// Gives money back on a payment this processor took. Idempotent per
    /// `idempotency_key`: asking again with the same key never refunds twice.
    fn refund(&self, request: RefundRequest) -> RefundFuture;

    /// Closes a dispute this processor reported (`processor_id`, Stripe's `dp_…`),
    /// conceding it: Stripe's `POST /v1/disputes/{id}/close`, which settles it as lost.
    fn close_dispute(&self, processor_id: &str) -> DisputeCloseFuture;

    /// What a saved payment method is (`processor_ref`: what `setup` or `charge`
    /// answered as its `payment_method`): Stripe's `GET /v1/payment_methods/{id}`.
    fn describe_method(&self, processor_ref: &str) -> DescribeFuture;

    /// Forgets a saved payment method: later charges cannot use it (Stripe's `POST
    /// /v1/payment_methods/{id}/detach`). A method the processor no longer holds is
    /// forgotten already.
    fn detach_method(&self, processor_ref: &str) -> DetachFuture;
}

pub use tollgate_actors::domain::payment_method::MethodDetails;

pub type DescribeFuture =
    Pin<Box<dyn Future<Output = Result<MethodDetails, ProcessorError>> + Send>>;
pub type DetachFuture = Pin<Box<dyn Future<Output = Result<(), ProcessorError>> + Send>>;

/// What the processor did with a request to close a dispute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DisputeCloseOutcome {
    /// Closed: the dispute as the processor reports it now.
    Closed(events::DisputeUpdate),
    /// Refused (a dispute closed already, or one the processor does not know), with its
    /// message.
    Refused { message: String },
}

pub type DisputeCloseFuture =
    Pin<Box<dyn Future<Output = Result<DisputeCloseOutcome, ProcessorError>> + Send>>;

/// A refund to ask of the processor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundRequest {
    /// The processor's payment (`payment_id` of the order).
    pub payment_id: Option<String>,
    /// Tax included, in the currency's minor unit.
    pub amount: i64,
    pub currency: String,
    /// The refund's id: a retry of this refund is the same refund.
    pub idempotency_key: String,
    /// Stripe's `reason`: `duplicate`, `fraudulent` or `requested_by_customer`.
    pub reason: &'static str,
    pub metadata: Vec<(String, String)>,
}

impl RefundRequest {
    /// The processor's `reason` for ours (Stripe has three; Polar sends `duplicate` as is
    /// and every other reason as the customer's request).
    pub fn reason_for(reason: crate::domain::refund::RefundReason) -> &'static str {
        match reason {
            crate::domain::refund::RefundReason::Duplicate => "duplicate",
            _ => "requested_by_customer",
        }
    }
}

/// What the processor did with a refund.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefundOutcome {
    Succeeded {
        processor_id: String,
    },
    /// Accepted, not settled yet: the processor's webhook (or the next look) settles it.
    Pending {
        processor_id: String,
    },
    /// Refused (a payment that cannot be refunded, already refunded at the processor, …).
    Failed {
        processor_id: Option<String>,
        message: String,
    },
}

pub type RefundFuture = Pin<Box<dyn Future<Output = Result<RefundOutcome, ProcessorError>> + Send>>;

pub const DECLINE_PREFIX: &str = "tok_decline";
/// A card that can be saved but not charged (Stripe's test token of the same name): a
/// trial's setup succeeds, every charge is declined.
pub const CHARGE_DECLINED: &str = "tok_chargeDeclined";

/// The test token of a processor outage: the first charge of an idempotency key fails as
/// unavailable, the next one succeeds.
pub const UNAVAILABLE_ONCE: &str = "tok_unavailable";

/// Approves every token but `tok_decline…`; needs no network.
#[derive(Debug, Default)]
pub struct TestProcessor {
    /// Idempotency keys already refused once by [`UNAVAILABLE_ONCE`].
    outages: dashmap::DashSet<String>,
}

impl PaymentProcessor for TestProcessor {
    fn client(&self) -> ProcessorClient {
        ProcessorClient::Test
    }

    fn charge(&self, request: ChargeRequest) -> ChargeFuture {
        if request.confirmation_token.as_deref() == Some(UNAVAILABLE_ONCE)
            && self.outages.insert(request.idempotency_key.clone())
        {
            return Box::pin(async { Err(ProcessorError("test outage".into())) });
        }
        let outcome = match &request.confirmation_token {
            Some(t) if t.starts_with(DECLINE_PREFIX) || t == CHARGE_DECLINED => {
                ChargeOutcome::Declined {
                    message: Some("Your card was declined.".into()),
                }
            }
            token => ChargeOutcome::Succeeded {
                intent_id: format!("pi_test_{}", test_intent_suffix(&request.idempotency_key)),
                payment_method: token.clone(),
            },
        };
        Box::pin(async move { Ok(outcome) })
    }

    fn setup(&self, request: ChargeRequest) -> ChargeFuture {
        let outcome = match &request.confirmation_token {
            Some(t) if t.starts_with(DECLINE_PREFIX) => ChargeOutcome::Declined {
                message: Some("Your card was declined.".into()),
            },
            token => ChargeOutcome::Succeeded {
                intent_id: format!("seti_test_{}", test_intent_suffix(&request.idempotency_key)),
                payment_method: token.clone(),
            },
        };
        Box::pin(async move { Ok(outcome) })
    }

    /// The test processor never leaves a payment pending.
    fn intent(&self, intent_id: &str) -> ChargeFuture {
        let outcome = ChargeOutcome::Succeeded {
            intent_id: intent_id.to_string(),
            payment_method: None,
        };
        Box::pin(async move { Ok(outcome) })
    }

    /// Refunds at once; the refund's id derives from its idempotency key (asked twice, the
    /// same refund).
    fn refund(&self, request: RefundRequest) -> RefundFuture {
        let outcome = RefundOutcome::Succeeded {
            processor_id: format!("re_test_{}", test_intent_suffix(&request.idempotency_key)),
        };
        Box::pin(async move { Ok(outcome) })
    }

    /// Concedes at once, as Stripe does: the dispute is lost (its amount and payment are
    /// the ones Tollgate recorded; the update carries only the new status).
    fn close_dispute(&self, processor_id: &str) -> DisputeCloseFuture {
        let outcome = DisputeCloseOutcome::Closed(events::DisputeUpdate {
            processor_id: processor_id.to_string(),
            payment_id: None,
            status: crate::domain::dispute::DisputeStatus::Lost,
            amount: 0,
            currency: String::new(),
            reason: None,
            evidence_due_by: None,
        });
        Box::pin(async move { Ok(outcome) })
    }

    /// `tok_visa` is a Visa ending in 4242, `tok_mastercard` a Mastercard ending in 4444,
    /// `tok_chargeDeclined` a Visa ending in 0341 (Stripe's test cards); any other token
    /// a Visa whose last four digits derive from the token.
    fn describe_method(&self, processor_ref: &str) -> DescribeFuture {
        let details = test_method_details(processor_ref);
        Box::pin(async move { Ok(details) })
    }

    /// Nothing is kept: forgetting is done.
    fn detach_method(&self, _processor_ref: &str) -> DetachFuture {
        Box::pin(async { Ok(()) })
    }
}

/// What the test processor says of a token (see [`TestProcessor::describe_method`]).
pub fn test_method_details(token: &str) -> MethodDetails {
    let (brand, last4) = match token {
        "tok_visa" => ("visa", "4242".to_string()),
        "tok_mastercard" => ("mastercard", "4444".to_string()),
        CHARGE_DECLINED => ("visa", "0341".to_string()),
        other => {
            use sha2::Digest;
            let digest = sha2::Sha256::digest(other.as_bytes());
            let n = u16::from_be_bytes([digest[0], digest[1]]) % 10_000;
            ("visa", format!("{n:04}"))
        }
    };
    MethodDetails {
        kind: "card".into(),
        brand: Some(brand.into()),
        last4: Some(last4),
        exp_month: Some(12),
        exp_year: Some(2030),
        wallet: None,
    }
}

/// A stable, id-like suffix for the test processor's intent ids.
fn test_intent_suffix(key: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(key.as_bytes());
    digest[..12].iter().map(|b| format!("{b:02x}")).collect()
}

pub use tax::{BuiltinTax, NoTax, TaxError, TaxQuote, TaxRequest, TaxService, TaxServices};

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
            off_session: false,
            customer_id: CustomerId::new(),
            customer_email: "a@b.co".into(),
            customer_name: None,
            metadata: Vec::new(),
        }
    }

    #[actix_web::test]
    async fn approves_and_declines_by_token() {
        let p = TestProcessor::default();
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
    async fn test_cards_describe_as_stripe_s_and_others_stably() {
        let p = TestProcessor::default();
        let visa = p.describe_method("tok_visa").await.unwrap();
        assert_eq!(
            (
                visa.kind.as_str(),
                visa.brand.as_deref(),
                visa.last4.as_deref()
            ),
            ("card", Some("visa"), Some("4242"))
        );
        let mc = p.describe_method("tok_mastercard").await.unwrap();
        assert_eq!(
            (mc.brand.as_deref(), mc.last4.as_deref()),
            (Some("mastercard"), Some("4444"))
        );
        let declined = p.describe_method(CHARGE_DECLINED).await.unwrap();
        assert_eq!(declined.last4.as_deref(), Some("0341"));
        let other = p.describe_method("tok_other").await.unwrap();
        assert_eq!(other, p.describe_method("tok_other").await.unwrap());
        assert_eq!(other.last4.map(|l| l.len()), Some(4));
        assert!(p.detach_method("tok_visa").await.is_ok());
    }

    #[actix_web::test]
    async fn is_deterministic_per_idempotency_key() {
        let p = TestProcessor::default();
        assert_eq!(
            p.charge(request(Some("tok_visa"))).await,
            p.charge(request(Some("tok_visa"))).await
        );
    }

    #[actix_web::test]
    async fn an_outage_token_fails_once_per_key_then_charges() {
        let p = TestProcessor::default();
        let mut first = request(Some(UNAVAILABLE_ONCE));
        assert!(p.charge(first.clone()).await.is_err());
        assert!(matches!(
            p.charge(first.clone()).await,
            Ok(ChargeOutcome::Succeeded { .. })
        ));
        first.idempotency_key = "c2".into();
        assert!(
            p.charge(first).await.is_err(),
            "another attempt has its own outage"
        );
    }
}
