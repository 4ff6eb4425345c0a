//! One jurisdiction and rate of a tax quote ([`TaxBreakdown`]), with why it is what it is
//! and under which scheme it is owed: a domain value, since orders, refunds and invoices
//! store it (`crate::tax` re-exports it beside the quote types).

use serde::{Deserialize, Serialize};

/// Why a jurisdiction's tax is what it is (Stripe's `taxability_reason`, the values the
/// built-in rules answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaxabilityReason {
    /// The standard rate applies.
    StandardRated,
    /// A business buyer accounts for the tax: nothing is collected, the invoice says so.
    ReverseCharge,
    /// The seller is not registered there: nothing is collected.
    NotCollecting,
    /// The supply is outside the tax (a territory outside the VAT area, a business buyer
    /// under a consumer-only scheme).
    NotSubjectToTax,
    /// The provider could not say (Stripe's `not_supported`).
    NotSupported,
}

impl TaxabilityReason {
    pub fn as_str(self) -> &'static str {
        match self {
            TaxabilityReason::StandardRated => "standard_rated",
            TaxabilityReason::ReverseCharge => "reverse_charge",
            TaxabilityReason::NotCollecting => "not_collecting",
            TaxabilityReason::NotSubjectToTax => "not_subject_to_tax",
            TaxabilityReason::NotSupported => "not_supported",
        }
    }
}

/// Under which scheme the tax is owed and reported (decides the reports: the EU OSS return
/// has the `EuOss` and `NonEuOss` rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Regime {
    /// The seller's home tax (a domestic sale, or an EU sale under the micro threshold).
    Domestic,
    EuOss,
    NonEuOss,
    Gb,
    No,
    Ch,
    Au,
    Ca,
    /// Computed by an external provider (Stripe Tax).
    Provider,
    /// Nothing owed by the seller.
    None,
}

/// One jurisdiction and rate of a quote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxBreakdown {
    /// ISO 3166-1 alpha-2.
    pub country: String,
    /// ISO 3166-2 (`CA-ON`, `PT-30`) when the rate is a subdivision's.
    pub subdivision: Option<String>,
    /// What the buyer reads: `VAT`, `GST`, `HST`, `QST`, `Sales tax`.
    pub name: String,
    /// Parts per million (19 % = 190_000).
    pub rate_ppm: u32,
    /// The net amount this line taxes (minor units).
    pub taxable_amount: i64,
    /// The tax (minor units).
    pub amount: i64,
    pub reason: TaxabilityReason,
    pub regime: Regime,
}

impl TaxBreakdown {
    /// The rate as people write it: `19`, `25.5`, `9.975`.
    pub fn rate_percent(&self) -> String {
        let whole = self.rate_ppm / 10_000;
        let frac = self.rate_ppm % 10_000;
        if frac == 0 {
            whole.to_string()
        } else {
            let s = format!("{whole}.{frac:04}");
            s.trim_end_matches('0').to_string()
        }
    }
}

/// How far a buyer's tax number was checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaxIdStatus {
    /// Format and check digits pass, and no register was asked (none configured) or the
    /// register did not answer in time: the sale goes on as if valid, flagged.
    #[default]
    Unverified,
    /// The register (VIES, HMRC) confirms the number.
    Valid,
    /// The register says the number is not registered: the buyer is taxed as a consumer.
    Invalid,
}

impl TaxIdStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaxIdStatus::Unverified => "unverified",
            TaxIdStatus::Valid => "valid",
            TaxIdStatus::Invalid => "invalid",
        }
    }
}
