//! The tax service: asked for a [`TaxQuote`] before a checkout is confirmed (and whenever
//! its amounts change), before a renewal is charged and before a plan change is applied.
//! The quote then travels to the pure rules as data (`tollgate_actors::tax`). The default,
//! [`NoTax`], answers zero tax; a real service (asynchronous: it calls out) goes behind
//! the same trait.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tollgate_actors::domain::tax_settings::TaxProvider;

pub use tollgate_actors::tax::{TaxQuote, TaxRequest};

/// No quote: the step that needed it is not taken. Either the tax service did not answer
/// (or answered nonsense), or it could not place the buyer from the address given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tax service unavailable: {message}")]
pub struct TaxError {
    /// The cause, for the log.
    pub message: String,
    /// The service could not tell where the buyer is taxed from their address (Stripe's
    /// `customer_tax_location_invalid`), in the service's words for the buyer: theirs to
    /// correct, not an outage.
    pub location: Option<String>,
}

impl TaxError {
    /// The service did not answer, or answered nonsense.
    pub fn failed(message: impl Into<String>) -> TaxError {
        TaxError {
            message: message.into(),
            location: None,
        }
    }

    /// The service could not place the buyer: `said` is what the buyer reads.
    pub fn location(message: impl Into<String>, said: impl Into<String>) -> TaxError {
        TaxError {
            message: message.into(),
            location: Some(said.into()),
        }
    }
}

pub type TaxFuture = Pin<Box<dyn Future<Output = Result<TaxQuote, TaxError>> + Send>>;

/// Quotes tax (an `async fn quote(&self, TaxRequest) -> Result<TaxQuote, TaxError>`,
/// boxed so the application can hold any service as `Arc<dyn TaxService>`).
pub trait TaxService: Send + Sync + 'static {
    fn quote(&self, request: TaxRequest) -> TaxFuture;
}

/// The default: no tax (`tax_amount: 0`), whatever the request.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoTax;

impl TaxService for NoTax {
    fn quote(&self, request: TaxRequest) -> TaxFuture {
        Box::pin(async move { Ok(TaxQuote::zero(request)) })
    }
}

/// Tollgate's own rules (`tollgate_actors::tax::builtin`): destination VAT/GST from the
/// dated rate table, for the seller's registrations. Synchronous and local: it never fails.
#[derive(Debug, Default, Clone, Copy)]
pub struct BuiltinTax;

impl TaxService for BuiltinTax {
    fn quote(&self, request: TaxRequest) -> TaxFuture {
        Box::pin(async move { Ok(tollgate_actors::tax::builtin::quote(request)) })
    }
}

/// The services an organization's `tax.provider` picks from.
#[derive(Clone)]
pub struct TaxServices {
    builtin: Arc<dyn TaxService>,
    stripe: Option<Arc<dyn TaxService>>,
}

impl TaxServices {
    /// The built-in rules, and Stripe Tax when the server has it (`stripe`).
    pub fn new(builtin: Arc<dyn TaxService>, stripe: Option<Arc<dyn TaxService>>) -> Self {
        TaxServices { builtin, stripe }
    }

    /// The built-in rules only.
    pub fn builtin() -> Self {
        TaxServices::new(Arc::new(BuiltinTax), None)
    }

    /// The service of `provider`: `Ok(None)` for `none` (no tax); an error for `stripe` on
    /// a server without Stripe Tax.
    pub fn for_provider(&self, provider: TaxProvider) -> Result<Option<&dyn TaxService>, TaxError> {
        match provider {
            TaxProvider::None => Ok(None),
            TaxProvider::Builtin => Ok(Some(self.builtin.as_ref())),
            TaxProvider::Stripe => self
                .stripe
                .as_deref()
                .map(Some)
                .ok_or_else(|| TaxError::failed("Stripe Tax is not configured on this server")),
        }
    }
}

/// The quote of `request` from `service`; an amount of 0 or less has no tax and is quoted
/// zero without asking.
pub async fn quote(service: &dyn TaxService, request: TaxRequest) -> Result<TaxQuote, TaxError> {
    if request.amount <= 0 {
        return Ok(TaxQuote::zero(request));
    }
    service.quote(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(amount: i64) -> TaxRequest {
        TaxRequest::new(
            amount,
            "usd",
            chrono::NaiveDate::from_ymd_opt(2026, 1, 1).expect("a date"),
        )
    }

    #[actix_web::test]
    async fn the_default_service_quotes_zero() {
        let q = quote(&NoTax, request(1000)).await.expect("a quote");
        assert_eq!((q.tax_amount, q.net_amount()), (0, 1000));
        assert!(q.breakdown.is_empty() && !q.reverse_charge());
        assert!(q.answers(&request(1000)));
    }

    /// A service that must not be asked.
    struct Refuses;

    impl TaxService for Refuses {
        fn quote(&self, _: TaxRequest) -> TaxFuture {
            Box::pin(async { Err(TaxError::failed("down")) })
        }
    }

    #[actix_web::test]
    async fn nothing_to_tax_is_not_asked() {
        let q = quote(&Refuses, request(0)).await.expect("zero, unasked");
        assert_eq!(q.tax_amount, 0);
        assert!(quote(&Refuses, request(1)).await.is_err());
    }
}
