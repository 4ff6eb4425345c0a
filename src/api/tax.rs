//! Tax on the wire beside Polar's fields: the breakdown of a checkout's or an order's tax
//! (Tollgate's additive `tax_breakdown`), one entry per jurisdiction and rate.

use serde::Serialize;
use utoipa::ToSchema;

use tollgate_actors::tax::TaxBreakdown;

/// One jurisdiction and rate of a tax.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaxBreakdownView {
    /// ISO 3166-1 alpha-2.
    pub country: String,
    /// ISO 3166-2, when the rate is a subdivision's (`CA-ON`, `PT-30`).
    pub subdivision: Option<String>,
    /// `VAT`, `GST`, `HST`, `QST`.
    pub name: String,
    /// The rate in percent (`19`, `25.5`).
    pub rate: f64,
    /// The amount taxed, in the currency's minor unit.
    pub taxable_amount: i64,
    /// The tax, in the currency's minor unit.
    pub amount: i64,
    /// `standard_rated`, `reverse_charge`, `not_collecting`, `not_subject_to_tax`,
    /// `not_supported` (Stripe's `taxability_reason` values).
    pub taxability_reason: &'static str,
}

impl From<&TaxBreakdown> for TaxBreakdownView {
    fn from(b: &TaxBreakdown) -> Self {
        TaxBreakdownView {
            country: b.country.clone(),
            subdivision: b.subdivision.clone(),
            name: b.name.clone(),
            rate: f64::from(b.rate_ppm) / 10_000.0,
            taxable_amount: b.taxable_amount,
            amount: b.amount,
            taxability_reason: b.reason.as_str(),
        }
    }
}

/// The views of `breakdown`.
pub fn breakdown_view(breakdown: &[TaxBreakdown]) -> Vec<TaxBreakdownView> {
    breakdown.iter().map(TaxBreakdownView::from).collect()
}
