//! Stripe's saved payment methods (a child module of `stripe`, whose client it uses):
//! what a `pm_…` is (`GET /v1/payment_methods/{id}`) and forgetting one (`POST
//! /v1/payment_methods/{id}/detach`).

use super::StripeProcessor;
use crate::payments::{DescribeFuture, DetachFuture, MethodDetails, ProcessorError};

/// Stripe's PaymentMethod as a [`MethodDetails`]: a card's brand, last four digits,
/// expiry and wallet; any other type with its name, and the last four digits of its
/// account when Stripe gives them (SEPA Direct Debit's IBAN, a US bank account, …).
pub fn method_details(pm: &serde_json::Value) -> MethodDetails {
    let kind = pm["type"].as_str().unwrap_or("card").to_string();
    let card = &pm["card"];
    let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
    let number = |v: &serde_json::Value| v.as_u64().and_then(|n| u32::try_from(n).ok());
    MethodDetails {
        kind,
        brand: text(&card["brand"]),
        last4: text(&card["last4"])
            .or_else(|| text(&pm[pm["type"].as_str().unwrap_or("card")]["last4"])),
        exp_month: number(&card["exp_month"]),
        exp_year: number(&card["exp_year"]),
        wallet: text(&card["wallet"]["type"]),
    }
}

pub(super) fn describe(stripe: StripeProcessor, processor_ref: &str) -> DescribeFuture {
    let path = format!("/v1/payment_methods/{processor_ref}");
    Box::pin(async move {
        match stripe.call(reqwest::Method::GET, &path, &[], None).await? {
            Ok(pm) => Ok(method_details(&pm)),
            Err(e) => Err(ProcessorError(format!("{path}: {}", e.describe()))),
        }
    })
}

/// A method Stripe refuses to detach (detached already, or unknown) is forgotten already.
pub(super) fn detach(stripe: StripeProcessor, processor_ref: &str) -> DetachFuture {
    let path = format!("/v1/payment_methods/{processor_ref}/detach");
    Box::pin(async move {
        match stripe.call(reqwest::Method::POST, &path, &[], None).await? {
            Ok(_) => Ok(()),
            Err(e) => {
                tracing::info!(path = %path, error = %e.describe(), "detach refused by Stripe");
                Ok(())
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_card_reads_its_brand_digits_expiry_and_wallet() {
        let pm = serde_json::json!({"id": "pm_1", "type": "card", "card": {
            "brand": "visa", "last4": "4242", "exp_month": 12, "exp_year": 2030,
            "wallet": {"type": "apple_pay"}}});
        assert_eq!(
            method_details(&pm),
            MethodDetails {
                kind: "card".into(),
                brand: Some("visa".into()),
                last4: Some("4242".into()),
                exp_month: Some(12),
                exp_year: Some(2030),
                wallet: Some("apple_pay".into()),
            }
        );
        let sepa = method_details(&serde_json::json!({"id": "pm_2", "type": "sepa_debit",
            "sepa_debit": {"country": "AT", "last4": "3201"}}));
        assert_eq!(sepa.kind, "sepa_debit");
        assert_eq!(sepa.last4.as_deref(), Some("3201"));
        assert_eq!((sepa.brand, sepa.exp_month), (None, None));
        let ideal = method_details(&serde_json::json!({"id": "pm_3", "type": "ideal",
            "ideal": {"bank": "ing"}}));
        assert_eq!((ideal.kind.as_str(), ideal.last4), ("ideal", None));
        let plain = method_details(&serde_json::json!({"type": "card", "card": {
            "brand": "mastercard", "last4": "4444", "exp_month": 1, "exp_year": 2031,
            "wallet": null}}));
        assert_eq!(plain.wallet, None);
    }
}
