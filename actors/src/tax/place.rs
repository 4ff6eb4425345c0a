//! Where a sale is taxed and under which scheme: the built-in rules' jurisdiction decision
//! ([`decide`]) for electronically supplied services, from the seller's establishment and
//! registrations, the buyer's billing address and business number, and the tax point.
//!
//! The rules, in order (issue 48 plan §2; EU VAT Directive 2006/112/EC art. 58, 59c, 196):
//! 0. No billing address: no placement (the caller answers no tax).
//! 1. A territory outside the VAT area of its country (see [`Territory`]): not subject to
//!    tax, whoever sells.
//! 2. Domestic (the seller's country is the buyer's): the home rate if the seller has a tax
//!    number, else not collecting (a small business not registered at home).
//! 3. An EU buyer of an EU seller established in another member state: a business with a
//!    usable number → reverse charge; a consumer → under the micro threshold the seller's
//!    home rate (origin, as a domestic sale), else with `eu_oss` the buyer's rate, else not
//!    collecting.
//! 4. An EU buyer of a seller established outside the EU: a business with a usable number →
//!    reverse charge; a consumer with `non_eu_oss` → the buyer's rate, else not collecting.
//! 5. GB, NO, CH (Liechtenstein with it), AU: a consumer → that country's rate if the seller
//!    holds its registration, else not collecting; a business with a usable number → GB and
//!    CH reverse charge, NO and AU not subject to tax (VOEC and the simplified GST
//!    registration are for consumer sales only).
//! 6. CA with `ca`: see [`canada`]; a business with a number → not subject to tax.
//! 7. The United States and everywhere else: not collecting (US states need a provider).
//!
//! Countries that share a tax area are taxed as it: Monaco as France, the Isle of Man and
//! Northern Ireland (`XI`, EU rules apply there for goods only) as the United Kingdom,
//! Liechtenstein as Switzerland (the same rows). Country codes are compared without regard
//! to case. A seller without a country is established nowhere the rules know: rules 2 and
//! 3 never apply to it, its registrations still do.
//!
//! A standard-rated placement with no rate in force on the tax point (a date before the
//! table's first row for that place, e.g. Canada before 2021-07-01 or the Azores before
//! 2021-07-01) answers [`TaxabilityReason::NotSupported`]: the table cannot say.

use chrono::NaiveDate;

use super::rates::{self, Rate, EU_MEMBER_STATES};
use super::{Buyer, Regime, SellerTax, TaxabilityReason};
use crate::domain::customer::Address;
use crate::domain::tax_settings::Registration;

/// Where and how a sale is taxed: what [`decide`] answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The jurisdiction (ISO 3166-1 alpha-2, upper case): the tax area's country (`FR` for a
    /// buyer in Monaco, `GB` for the Isle of Man and Northern Ireland, `CH` for
    /// Liechtenstein), the seller's for a sale under the micro threshold.
    pub country: String,
    /// ISO 3166-2 when the rate is a subdivision's (`CA-ON`, `PT-30`).
    pub subdivision: Option<String>,
    /// The rate applied: `Some` exactly when the reason is `StandardRated`.
    pub rate: Option<Rate>,
    /// What the buyer reads (`VAT`, `GST`, `HST`, `Sales tax`).
    pub name: &'static str,
    pub reason: TaxabilityReason,
    pub regime: Regime,
}

/// Where a place lies for tax: its tax area's country, its subdivision with a rate of its
/// own, or outside its country's VAT area.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Territory {
    /// Taxed as `country` (upper case), at `subdivision`'s rate if it has rows.
    In {
        country: String,
        subdivision: Option<String>,
    },
    /// Outside the VAT area of `country` (upper case), although inside the country (or the
    /// EU's geography): the Canary Islands (ES postal codes 35xxx and 38xxx, or the state
    /// `ES-CN`), Ceuta (51xxx), Melilla (52xxx), Åland (`AX`, or FI postal codes 22xxx),
    /// Heligoland (DE 27498), Büsingen (DE 78266), Livigno (IT 23041), Campione d'Italia
    /// (IT 22061; 22060 is shared with other towns of the province of Como and is not
    /// used), Mount Athos (GR 63086).
    Outside { country: String },
}

/// The digits of a postal code: `35001`, `E-35001` and `35 001` → `35001`; a code with
/// anything else in it → `None`.
fn postal_digits(address: &Address) -> Option<String> {
    let code = address.postal_code.as_deref()?.trim();
    // A country prefix as in `D-27498` or `AX-22100`.
    let code = match code.split_once('-') {
        Some((p, rest)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphabetic()) => rest,
        _ => code,
    };
    let digits: String = code.chars().filter(|c| *c != ' ').collect();
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(digits)
}

/// The place of `address` for tax (see [`Territory`]).
pub fn territory(address: &Address) -> Territory {
    let country = address.country.trim().to_ascii_uppercase();
    let postal = postal_digits(address);
    let postal = postal.as_deref().unwrap_or("");
    let state = address.state.as_deref().unwrap_or("").trim();
    let outside = match country.as_str() {
        "AX" => true,
        "ES" => {
            ["35", "38", "51", "52"]
                .iter()
                .any(|p| postal.starts_with(p))
                || state.eq_ignore_ascii_case("ES-CN")
        }
        "FI" => postal.starts_with("22"),
        "DE" => postal == "27498" || postal == "78266",
        "IT" => postal == "23041" || postal == "22061",
        "GR" => postal == "63086",
        _ => false,
    };
    if outside {
        return Territory::Outside { country };
    }
    let (country, subdivision) = match country.as_str() {
        "MC" => ("FR".to_string(), None),
        "IM" | "XI" => ("GB".to_string(), None),
        "LI" => ("CH".to_string(), None),
        "PT" => {
            let region = address
                .postal_code
                .as_deref()
                .and_then(rates::portugal_region);
            (country, region.map(str::to_string))
        }
        "CA" => {
            let sub = (!state.is_empty()).then(|| {
                let s = state.to_ascii_uppercase();
                if s.starts_with("CA-") {
                    s
                } else {
                    format!("CA-{s}")
                }
            });
            (country, sub)
        }
        _ => (country, None),
    };
    Territory::In {
        country,
        subdivision,
    }
}

/// The tax area of a seller's country (`MC` → `FR`, …), upper case.
fn seller_area(country: &str) -> String {
    let c = country.trim().to_ascii_uppercase();
    match c.as_str() {
        "MC" => "FR".into(),
        "IM" | "XI" => "GB".into(),
        "LI" => "CH".into(),
        _ => c,
    }
}

fn is_eu(country: &str) -> bool {
    EU_MEMBER_STATES.contains(&country)
}

/// What a country's tax is called when no rate says it.
fn tax_name(country: &str) -> &'static str {
    if let Some(r) = rates::rate_on(country, None, NaiveDate::MAX) {
        return r.name;
    }
    match country {
        "US" => "Sales tax",
        "IN" | "NZ" | "SG" | "MY" => "GST",
        _ => "VAT",
    }
}

/// A placement that collects nothing, for `reason`.
fn nothing(country: &str, reason: TaxabilityReason) -> Placement {
    Placement {
        country: country.to_string(),
        subdivision: None,
        rate: None,
        name: tax_name(country),
        reason,
        regime: Regime::None,
    }
}

/// The standard rate of `country` (at `subdivision`'s rows if it has any) on `date` under
/// `regime`; a country without any row in the table is not collected (the built-in rules
/// know no rate there), a date before the rows is not supported.
fn standard(
    country: &str,
    subdivision: Option<&str>,
    date: NaiveDate,
    regime: Regime,
) -> Placement {
    match rates::rate_on(country, subdivision, date) {
        Some(rate) => Placement {
            country: country.to_string(),
            subdivision: subdivision
                .filter(|s| rates::has_rows(country, Some(s)))
                .map(str::to_string),
            name: rate.name,
            rate: Some(rate),
            reason: TaxabilityReason::StandardRated,
            regime,
        },
        None if !rates::has_rows(country, None) => {
            nothing(country, TaxabilityReason::NotCollecting)
        }
        None => Placement {
            subdivision: subdivision.map(str::to_string),
            ..nothing(country, TaxabilityReason::NotSupported)
        },
    }
}

/// Canada under the simplified GST/HST registration: the province's HST where it has one
/// (ON, NB, NL, NS, PE: a `CA-xx` HST row), else the federal GST 5 % (also without a
/// province). Québec's QST and the PST of British Columbia, Manitoba and Saskatchewan are
/// separate provincial regimes with registrations of their own, which the seller's settings
/// cannot hold yet: they are **not collected**, and only the GST is (one line).
pub fn canada(subdivision: Option<&str>, date: NaiveDate, regime: Regime) -> Placement {
    if let Some(sub) = subdivision {
        if rates::rate_on("CA", Some(sub), date).is_some_and(|r| r.name == "HST") {
            return standard("CA", Some(sub), date, regime);
        }
    }
    standard("CA", None, date, regime)
}

/// The seller's home tax on a sale at `country`/`subdivision` (a domestic sale, or an EU
/// sale under the micro threshold, taxed at the seller's rate): the rate if the seller has a
/// tax number, else not collecting.
fn home(
    seller: &SellerTax,
    country: &str,
    subdivision: Option<&str>,
    date: NaiveDate,
) -> Placement {
    if !seller.has_tax_id {
        return nothing(country, TaxabilityReason::NotCollecting);
    }
    if country == "CA" {
        return canada(subdivision, date, Regime::Domestic);
    }
    standard(country, subdivision, date, Regime::Domestic)
}

/// Where and how the sale of `seller` to `buyer` on `date` (the tax point) is taxed; `None`
/// when the buyer has no billing address. See the module doc for the rules.
pub fn decide(seller: &SellerTax, buyer: &Buyer, date: NaiveDate) -> Option<Placement> {
    let address = buyer.address.as_ref()?;
    let (country, subdivision) = match territory(address) {
        Territory::Outside { country } => {
            return Some(nothing(&country, TaxabilityReason::NotSubjectToTax));
        }
        Territory::In {
            country,
            subdivision,
        } => (country, subdivision),
    };
    let sub = subdivision.as_deref();
    let home_country = seller.country.as_deref().map(seller_area);
    let business = buyer.has_business_number();
    if home_country.as_deref() == Some(country.as_str()) {
        return Some(home(seller, &country, sub, date));
    }
    let registered = |r: Registration, regime: Regime| {
        if !seller.holds(&r) {
            nothing(&country, TaxabilityReason::NotCollecting)
        } else if regime == Regime::Ca {
            canada(sub, date, regime)
        } else {
            standard(&country, sub, date, regime)
        }
    };
    let placement = if is_eu(&country) {
        let seller_in_eu = home_country.as_deref().is_some_and(is_eu);
        if business {
            nothing(&country, TaxabilityReason::ReverseCharge)
        } else if seller_in_eu && seller.eu_micro_threshold {
            let home_country = home_country.as_deref().unwrap_or_default();
            home(seller, home_country, None, date)
        } else if seller_in_eu {
            registered(Registration::EuOss, Regime::EuOss)
        } else {
            registered(Registration::NonEuOss, Regime::NonEuOss)
        }
    } else {
        match country.as_str() {
            "GB" | "CH" if business => nothing(&country, TaxabilityReason::ReverseCharge),
            "NO" | "AU" | "CA" if business => nothing(&country, TaxabilityReason::NotSubjectToTax),
            "GB" => registered(Registration::Gb, Regime::Gb),
            "NO" => registered(Registration::No, Regime::No),
            "CH" => registered(Registration::Ch, Regime::Ch),
            "AU" => registered(Registration::Au, Regime::Au),
            "CA" => registered(Registration::Ca, Regime::Ca),
            _ => nothing(&country, TaxabilityReason::NotCollecting),
        }
    };
    Some(placement)
}

#[cfg(test)]
#[path = "place_tests.rs"]
mod tests;
