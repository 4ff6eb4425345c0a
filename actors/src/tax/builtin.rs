//! The built-in tax rules: a [`super::TaxQuote`] from the seller's registrations, the
//! buyer and the dated rate table, without calling out.
//!
//! [`place::decide`] says where and how the sale is taxed; [`rounding`] computes the amount.
//! The quote has one breakdown line for that placement, also when it collects nothing (a
//! reverse charge, not collecting, not subject to tax, not supported: a line of 0 whose
//! reason the invoice and the order show); no line at all when the buyer has no billing
//! address or the amount is 0. Canada: one line, the province's HST or the federal GST.
//!
//! Inclusive prices: the tax is inside the amount and the net is what is left; a line that
//! collects nothing leaves the buyer paying the same gross with a tax of 0 (Polar's rule: an
//! inclusive price does not drop for a reverse-charged business). Exclusive prices: the tax
//! is added. A negative amount (a credit, as a plan change can produce) is taxed
//! symmetrically: its tax is the negated tax of its opposite.

use super::{place, rounding, TaxBreakdown, TaxQuote, TaxRequest, TaxabilityReason};

/// The quote of `request` by the built-in rules.
pub fn quote(request: TaxRequest) -> TaxQuote {
    if request.amount == 0 {
        return TaxQuote::zero(request);
    }
    let Some(placement) = place::decide(&request.seller, &request.buyer, request.tax_date) else {
        return TaxQuote::zero(request);
    };
    let rate_ppm = match (placement.reason, placement.rate) {
        (TaxabilityReason::StandardRated, Some(rate)) => rate.ppm,
        _ => 0,
    };
    let tax = rounding::tax(request.amount, rate_ppm, request.behavior);
    let net = match request.behavior {
        super::TaxBehavior::Exclusive => request.amount,
        super::TaxBehavior::Inclusive => request.amount - tax,
    };
    let line = TaxBreakdown {
        country: placement.country,
        subdivision: placement.subdivision,
        name: placement.name.to_string(),
        rate_ppm,
        taxable_amount: net,
        amount: tax,
        reason: placement.reason,
        regime: placement.regime,
    };
    TaxQuote {
        tax_amount: line.amount,
        breakdown: vec![line],
        request,
        provider_ref: None,
    }
}

#[cfg(test)]
#[path = "builtin_tests.rs"]
mod tests;
