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
        percent(self.rate_ppm)
    }
}

/// A rate in parts per million as people write the percentage: `19`, `25.5`, `9.975`.
pub fn percent(rate_ppm: u32) -> String {
    let whole = rate_ppm / 10_000;
    let frac = rate_ppm % 10_000;
    if frac == 0 {
        whole.to_string()
    } else {
        let s = format!("{whole}.{frac:04}");
        s.trim_end_matches('0').to_string()
    }
}

/// The part of `breakdown` (an order's) that a refund of `net` before tax and `tax` gives
/// back: each line's taxable amount in proportion to its share of the order's net, each
/// line's tax in proportion to its share of the order's tax, rounded so that the lines add
/// up to exactly `net` and `tax` (largest remainder: the parts rounded down furthest get
/// the leftover units, earlier lines first on ties). Rates, countries and reasons are the
/// order's: a credit note and the reports print what the order printed.
pub fn refund_share(breakdown: &[TaxBreakdown], net: i64, tax: i64) -> Vec<TaxBreakdown> {
    let taxable = split(
        &breakdown
            .iter()
            .map(|b| b.taxable_amount)
            .collect::<Vec<_>>(),
        net,
    );
    let taxes = split(&breakdown.iter().map(|b| b.amount).collect::<Vec<_>>(), tax);
    breakdown
        .iter()
        .zip(taxable.into_iter().zip(taxes))
        .map(|(b, (taxable_amount, amount))| TaxBreakdown {
            taxable_amount,
            amount,
            ..b.clone()
        })
        .collect()
}

/// `total` split in proportion to `weights` (all of it to the first part when the weights
/// add up to nothing), the parts adding up to `total`.
fn split(weights: &[i64], total: i64) -> Vec<i64> {
    if weights.is_empty() {
        return Vec::new();
    }
    let sum: i128 = weights.iter().map(|w| i128::from(*w)).sum();
    if sum == 0 {
        let mut parts = vec![0; weights.len()];
        parts[0] = total;
        return parts;
    }
    let mut parts = Vec::with_capacity(weights.len());
    let mut remainders = Vec::with_capacity(weights.len());
    for (i, w) in weights.iter().enumerate() {
        let exact = i128::from(total) * i128::from(*w);
        parts.push(exact.div_euclid(sum));
        remainders.push((exact.rem_euclid(sum), i));
    }
    let mut left = i128::from(total) - parts.iter().sum::<i128>();
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, i) in remainders.iter().cycle() {
        if left <= 0 {
            break;
        }
        parts[*i] += 1;
        left -= 1;
    }
    parts
        .into_iter()
        .map(|p| i64::try_from(p).unwrap_or(if p < 0 { i64::MIN } else { i64::MAX }))
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn line(country: &str, taxable: i64, tax: i64) -> TaxBreakdown {
        TaxBreakdown {
            country: country.into(),
            subdivision: None,
            name: "VAT".into(),
            rate_ppm: 190_000,
            taxable_amount: taxable,
            amount: tax,
            reason: TaxabilityReason::StandardRated,
            regime: Regime::EuOss,
        }
    }

    fn amounts(b: &[TaxBreakdown]) -> Vec<(i64, i64)> {
        b.iter().map(|l| (l.taxable_amount, l.amount)).collect()
    }

    #[test]
    fn a_full_refund_gives_back_every_line() {
        let order = [line("DE", 1000, 190), line("AT", 500, 100)];
        assert_eq!(
            amounts(&refund_share(&order, 1500, 290)),
            [(1000, 190), (500, 100)]
        );
    }

    #[test]
    fn a_partial_refund_splits_in_proportion_and_adds_up() {
        let order = [line("DE", 1000, 190)];
        assert_eq!(amounts(&refund_share(&order, 333, 63)), [(333, 63)]);
        // Thirds of 100 between three equal lines: the first gets the leftover unit.
        let three = [line("DE", 10, 1), line("FR", 10, 1), line("AT", 10, 1)];
        let share = refund_share(&three, 100, 2);
        assert_eq!(amounts(&share), [(34, 1), (33, 1), (33, 0)]);
        assert_eq!(share.iter().map(|l| l.taxable_amount).sum::<i64>(), 100);
        assert_eq!(share[1].country, "FR");
    }

    #[test]
    fn largest_remainders_get_the_leftover_units() {
        // 10 split 1:2 is 3.33 and 6.67: the second line rounds up.
        let order = [line("DE", 100, 0), line("FR", 200, 0)];
        assert_eq!(amounts(&refund_share(&order, 10, 0)), [(3, 0), (7, 0)]);
    }

    #[test]
    fn nothing_taxed_and_no_lines() {
        assert!(refund_share(&[], 500, 0).is_empty());
        let zero = [line("US", 0, 0), line("DE", 0, 0)];
        assert_eq!(amounts(&refund_share(&zero, 500, 0)), [(500, 0), (0, 0)]);
    }
}
