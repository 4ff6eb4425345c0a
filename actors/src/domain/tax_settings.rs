//! The seller's tax settings (the organization's additive `tax` object, behaviour.md,
//! decisions of 2026-11-28) and the tax behaviour of prices (Polar's
//! `default_tax_behavior` and price `tax_behavior`, polar-2026.md §2.1).
//!
//! Pure values: stored inside the organization record (format version 5) and handed to the
//! tax service in each request ([`SellerTax`]).

use serde::{Deserialize, Serialize};

use crate::domain::customer::Address;
use crate::domain::customer::TaxId;

/// Whether a price includes tax, as the seller chose it: Polar's `TaxBehaviorOption`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaxBehaviorOption {
    /// Exclusive for a buyer in the United States, Canada or India, inclusive elsewhere.
    #[default]
    Location,
    Inclusive,
    Exclusive,
}

/// The countries where `location` means tax-exclusive prices (Polar's
/// `TAX_EXCLUSIVE_COUNTRIES`).
pub const TAX_EXCLUSIVE_COUNTRIES: [&str; 3] = ["US", "CA", "IN"];

impl TaxBehaviorOption {
    pub const ALL: [TaxBehaviorOption; 3] = [
        TaxBehaviorOption::Location,
        TaxBehaviorOption::Inclusive,
        TaxBehaviorOption::Exclusive,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaxBehaviorOption::Location => "location",
            TaxBehaviorOption::Inclusive => "inclusive",
            TaxBehaviorOption::Exclusive => "exclusive",
        }
    }

    pub fn parse(s: &str) -> Option<TaxBehaviorOption> {
        Self::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// The behaviour for a buyer whose billing country is `country` (`None`: not known yet,
    /// which `location` reads as inclusive, the rule outside the three countries).
    pub fn resolve(self, country: Option<&str>) -> TaxBehavior {
        match self {
            TaxBehaviorOption::Inclusive => TaxBehavior::Inclusive,
            TaxBehaviorOption::Exclusive => TaxBehavior::Exclusive,
            TaxBehaviorOption::Location => match country {
                Some(c)
                    if TAX_EXCLUSIVE_COUNTRIES
                        .iter()
                        .any(|x| x.eq_ignore_ascii_case(c)) =>
                {
                    TaxBehavior::Exclusive
                }
                _ => TaxBehavior::Inclusive,
            },
        }
    }
}

/// Whether an amount includes its tax: Polar's `TaxBehavior`, the resolved option.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaxBehavior {
    /// The price is the gross: the tax is inside it.
    Inclusive,
    /// The tax is added to the price (what every amount before tax settings meant).
    #[default]
    Exclusive,
}

impl TaxBehavior {
    pub fn as_str(self) -> &'static str {
        match self {
            TaxBehavior::Inclusive => "inclusive",
            TaxBehavior::Exclusive => "exclusive",
        }
    }
}

/// Who computes the tax of the organization's sales.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaxProvider {
    /// No tax (what every organization had before tax settings).
    #[default]
    None,
    /// Tollgate's own rules and dated rate table.
    Builtin,
    /// Stripe Tax (its Tax Calculations and Transactions API).
    Stripe,
}

impl TaxProvider {
    pub const ALL: [TaxProvider; 3] =
        [TaxProvider::None, TaxProvider::Builtin, TaxProvider::Stripe];

    pub fn as_str(self) -> &'static str {
        match self {
            TaxProvider::None => "none",
            TaxProvider::Builtin => "builtin",
            TaxProvider::Stripe => "stripe",
        }
    }

    pub fn parse(s: &str) -> Option<TaxProvider> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// A registration the seller holds to collect tax abroad.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Registration {
    /// The EU's Union One-Stop-Shop (a seller established in the EU).
    EuOss,
    /// The EU's non-Union One-Stop-Shop (a seller established outside the EU).
    NonEuOss,
    /// UK VAT.
    Gb,
    /// Norway's VOEC scheme.
    No,
    /// Swiss VAT (also Liechtenstein).
    Ch,
    /// Australia's simplified GST registration.
    Au,
    /// Canada's simplified GST/HST registration.
    Ca,
    /// A US state's sales tax (`us_ca`): collected through a provider only.
    UsState(String),
}

impl Registration {
    /// The wire name (`eu_oss`, `gb`, `us_ca`, …).
    pub fn as_string(&self) -> String {
        match self {
            Registration::EuOss => "eu_oss".into(),
            Registration::NonEuOss => "non_eu_oss".into(),
            Registration::Gb => "gb".into(),
            Registration::No => "no".into(),
            Registration::Ch => "ch".into(),
            Registration::Au => "au".into(),
            Registration::Ca => "ca".into(),
            Registration::UsState(s) => format!("us_{}", s.to_ascii_lowercase()),
        }
    }

    /// The registration named `s`; `None` for an unknown name.
    pub fn parse(s: &str) -> Option<Registration> {
        Some(match s {
            "eu_oss" => Registration::EuOss,
            "non_eu_oss" => Registration::NonEuOss,
            "gb" => Registration::Gb,
            "no" => Registration::No,
            "ch" => Registration::Ch,
            "au" => Registration::Au,
            "ca" => Registration::Ca,
            _ => {
                let state = s.strip_prefix("us_")?;
                if state.len() == 2 && state.bytes().all(|b| b.is_ascii_lowercase()) {
                    Registration::UsState(state.to_ascii_uppercase())
                } else {
                    return None;
                }
            }
        })
    }
}

/// When an organization's invoices are issued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum InvoiceTiming {
    /// Every paid order gets its invoice (and the receipt carries it).
    OnPayment,
    /// Only when the seller or the buyer asks (`POST /v1/orders/{id}/invoice`): Polar's flow.
    #[default]
    OnRequest,
}

impl InvoiceTiming {
    pub fn as_str(self) -> &'static str {
        match self {
            InvoiceTiming::OnPayment => "on_payment",
            InvoiceTiming::OnRequest => "on_request",
        }
    }

    pub fn parse(s: &str) -> Option<InvoiceTiming> {
        [InvoiceTiming::OnPayment, InvoiceTiming::OnRequest]
            .into_iter()
            .find(|t| t.as_str() == s)
    }
}

/// The organization's `tax` object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxSettings {
    /// Where the seller is established (ISO 3166-1 alpha-2); `None`: tax is off.
    pub country: Option<String>,
    /// The seller's own tax number (validated for `country`).
    pub tax_id: Option<TaxId>,
    /// Sorted, no duplicates.
    pub registrations: Vec<Registration>,
    /// An EU seller under the €10,000 threshold charges its own country's VAT to EU
    /// consumers (VAT Directive art. 59c).
    pub eu_micro_threshold: bool,
    pub provider: TaxProvider,
    /// The name printed on invoices (the organization's name when `None`).
    pub legal_name: Option<String>,
    /// The address printed on invoices.
    pub address: Option<Address>,
    /// The invoices' number prefix (`ACME` → `ACME-0001`); the slug in upper case when
    /// `None`. Frozen once the first invoice is issued.
    pub invoice_prefix: Option<String>,
    pub invoice_timing: InvoiceTiming,
}

impl TaxSettings {
    /// What an organization without tax settings has: no tax.
    pub fn none() -> TaxSettings {
        TaxSettings::default()
    }

    pub fn holds(&self, r: &Registration) -> bool {
        self.registrations.contains(r)
    }

    /// Whether every paid order gets its invoice at once (and the receipt waits for it):
    /// an organization that collects tax and issues `on_payment`.
    pub fn invoices_on_payment(&self) -> bool {
        self.provider != TaxProvider::None && self.invoice_timing == InvoiceTiming::OnPayment
    }

    /// The prefix of the organization's document numbers: the one set, else its slug in
    /// upper case (`acme-tools` → `ACME-TOOLS-0001`).
    pub fn prefix_for(&self, slug: &str) -> String {
        self.invoice_prefix
            .clone()
            .unwrap_or_else(|| slug.to_ascii_uppercase())
    }

    /// What the tax service is told of the seller.
    pub fn seller(&self) -> SellerTax {
        SellerTax {
            country: self.country.clone(),
            has_tax_id: self.tax_id.is_some(),
            registrations: self.registrations.clone(),
            eu_micro_threshold: self.eu_micro_threshold,
        }
    }
}

/// The seller as a tax rule sees it: where it is established and what it is registered for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SellerTax {
    pub country: Option<String>,
    /// Registered for VAT/GST at home (a seller without a number is a small business that
    /// does not charge its home tax).
    pub has_tax_id: bool,
    pub registrations: Vec<Registration>,
    pub eu_micro_threshold: bool,
}

impl SellerTax {
    pub fn holds(&self, r: &Registration) -> bool {
        self.registrations.contains(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invoices_on_payment_need_tax_and_the_timing() {
        let mut t = TaxSettings {
            provider: TaxProvider::Builtin,
            invoice_timing: InvoiceTiming::OnPayment,
            ..TaxSettings::none()
        };
        assert!(t.invoices_on_payment());
        t.invoice_timing = InvoiceTiming::OnRequest;
        assert!(!t.invoices_on_payment());
        t.invoice_timing = InvoiceTiming::OnPayment;
        t.provider = TaxProvider::None;
        assert!(!t.invoices_on_payment());
    }

    #[test]
    fn the_prefix_is_the_set_one_else_the_slug() {
        let mut t = TaxSettings::none();
        assert_eq!(t.prefix_for("acme-tools"), "ACME-TOOLS");
        t.invoice_prefix = Some("AC".into());
        assert_eq!(t.prefix_for("acme-tools"), "AC");
    }

    #[test]
    fn location_is_exclusive_in_the_us_canada_and_india_only() {
        let l = TaxBehaviorOption::Location;
        assert_eq!(l.resolve(Some("US")), TaxBehavior::Exclusive);
        assert_eq!(l.resolve(Some("ca")), TaxBehavior::Exclusive);
        assert_eq!(l.resolve(Some("IN")), TaxBehavior::Exclusive);
        assert_eq!(l.resolve(Some("DE")), TaxBehavior::Inclusive);
        assert_eq!(l.resolve(None), TaxBehavior::Inclusive);
        assert_eq!(
            TaxBehaviorOption::Exclusive.resolve(Some("DE")),
            TaxBehavior::Exclusive
        );
        assert_eq!(
            TaxBehaviorOption::Inclusive.resolve(Some("US")),
            TaxBehavior::Inclusive
        );
    }

    #[test]
    fn registrations_round_trip_by_name() {
        for name in [
            "eu_oss",
            "non_eu_oss",
            "gb",
            "no",
            "ch",
            "au",
            "ca",
            "us_ca",
        ] {
            let r = Registration::parse(name).expect(name);
            assert_eq!(r.as_string(), name);
        }
        for bad in ["", "EU_OSS", "us_", "us_cal", "us_C1", "fr"] {
            assert_eq!(Registration::parse(bad), None, "{bad}");
        }
        assert_eq!(TaxProvider::parse("builtin"), Some(TaxProvider::Builtin));
        assert_eq!(TaxProvider::parse("Builtin"), None);
        assert_eq!(
            InvoiceTiming::parse("on_payment"),
            Some(InvoiceTiming::OnPayment)
        );
        assert_eq!(
            TaxBehaviorOption::parse("location"),
            Some(TaxBehaviorOption::Location)
        );
    }
}
