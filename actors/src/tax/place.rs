//! Where a sale is taxed and under which scheme: the built-in rules' jurisdiction decision
//! ([`decide`]) for electronically supplied services, from the seller's establishment and
//! registrations, the buyer's billing address and business number, and the tax point.
//!
//! The rules, in order (issue 48 plan §2; EU VAT Directive 2006/112/EC art. 58, 59c, 196):
//! 0. No billing address: no placement (the caller answers no tax).
//! 1. A territory outside the VAT area of its country (see [`Territory`]): not subject to
//!    tax, whoever sells.
//! 2. Domestic (the seller's country is the buyer's): the home rate if the seller has a tax
//!    number, else not collecting (a small business not registered at home). Also for a
//!    seller established in France and a buyer in Guadeloupe, Martinique or Réunion, at
//!    their 8.5 % (`FR-971`, `FR-972`, `FR-974`), consumer or business alike (the supplier
//!    owes the tax: impots.gouv.fr, BOI-TVA-GEO-20-40 § 30).
//!    Any other seller and a buyer in those three departments: not subject to tax. They
//!    are outside the EU VAT area (Directive art. 6(1)(c): the French territories of TFEU
//!    art. 349 and 355(1); the Commission's "Territorial status of EU countries and certain
//!    territories": Guadeloupe, French Guiana, Martinique, Réunion, Mayotte, Saint-Martin,
//!    EU VAT rules "no"), as the Canary Islands: no EU scheme reaches them and, as for the
//!    Canaries' IGIC, the built-in rules collect no local tax there.
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
///
/// Subdivisions with a rate of their own, from the postal code (the rows of `rates.rs`):
/// Madeira (`PT-30`) and the Azores (`PT-20`); Jungholz (AT 6691 → `AT-7`) and Mittelberg
/// (AT 6991, 6992, 6993 → `AT-8`); Guadeloupe (FR 971xx or `GP` → `FR-971`), Martinique
/// (972xx or `MQ` → `FR-972`) and Réunion (974xx or `RE` → `FR-974`), taxed as France
/// (see the module's rule 2); the Greek islands with the lower rate: Lesbos (811xx),
/// Chios (821xx–823xx but Oinousses 82101 and Psara 82104) and Samos (831xx, 832xx) →
/// `GR-K`, Kos (85300–85302; 85303 is Nisyros) and Leros (85400) → `GR-L`, and from
/// 2026-01-01 every North Aegean postal code (81xxx–83xxx) → `GR-K`, the Dodecanese but
/// Rhodes (85xxx but 851xx; Chalki 85110 and Megisti 85111 are in) → `GR-L`. Samothraki
/// (Evros), which has the rate from 2026 too, is not mapped (see `greek_island`).
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
    /// used), Mount Athos (GR 63086); France's overseas places outside the French VAT area
    /// (country `FR`): French Guiana (`GF`, FR 973xx) and Mayotte (`YT`, 976xx), where French
    /// VAT does not apply (CGI art. 294-1), Saint-Martin (`MF`, 97150), Saint-Barthélemy
    /// (`BL`, 97133), Saint-Pierre-et-Miquelon (`PM`, 975xx), the French Southern Lands
    /// (`TF`, 984xx), Wallis-et-Futuna (`WF`, 986xx), French Polynesia (`PF`, 987xx) and New
    /// Caledonia (`NC`, 988xx), with taxes of their own or none, which the rules do not know.
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

/// The day the Greek islands' lower rate was extended beyond Lesbos, Chios, Samos, Kos and
/// Leros (see `rates.rs`, `GR-K`).
const GREEK_ISLANDS_EXTENDED: NaiveDate = match NaiveDate::from_ymd_opt(2026, 1, 1) {
    Some(day) => day,
    None => NaiveDate::MAX,
};

/// The Greek region (ISO 3166-2) whose islands' lower rate applies at the postal code
/// `postal` (digits) on `date`; `None` for the rest of Greece (and Rhodes, 851xx).
///
/// The postal codes: the regional units' prefixes 81–83 (Lesbos, Chios, Samos), 85
/// (Dodecanese) and 68 (Evros) (de.wikipedia "Postleitzahl (Griechenland)"; en.wikipedia
/// "Chios (regional unit)": 82x xx); Oinousses 82101 and Psara 82104 (en.wikipedia
/// "Oinousses"; phantis.com "Psara"), which are not Chios island; Kos 85300–85302 and
/// Nisyros 85303 (scm-en.ecer.com's ELTA list for Kos); Chalki 85110 and Megisti 85111
/// inside Rhodes' 851xx (en.wikipedia "Halki (Greece)", "Kastellorizo"). Samothraki, which
/// has the lower rate from 2026 as well, is not mapped: its postal code is not settled
/// (en.wikipedia's Evros table gives 680 01 both to Samothrace and to the mainland Vyssa),
/// and the conservative reading charges Greece's rate rather than the lower one to a code
/// that may be the mainland's.
fn greek_island(postal: &str, date: NaiveDate) -> Option<&'static str> {
    if postal.len() != 5 {
        return None;
    }
    let prefix = |ps: &[&str]| ps.iter().any(|p| postal.starts_with(p));
    let small_chian_islands = ["82101", "82104"].contains(&postal);
    if prefix(&["811", "821", "822", "823", "831", "832"]) && !small_chian_islands {
        return Some("GR-K");
    }
    if ["85300", "85301", "85302", "85400"].contains(&postal) {
        return Some("GR-L");
    }
    if date < GREEK_ISLANDS_EXTENDED {
        return None;
    }
    if prefix(&["81", "82", "83"]) {
        Some("GR-K")
    } else if postal.starts_with("85")
        && (!postal.starts_with("851") || postal == "85110" || postal == "85111")
    {
        Some("GR-L")
    } else {
        None
    }
}

/// Jungholz and Mittelberg, whose rate is their own (see `rates.rs`, `AT-7` and `AT-8`).
fn austrian_enclave(postal: &str) -> Option<&'static str> {
    match postal {
        "6691" => Some("AT-7"),
        "6991" | "6992" | "6993" => Some("AT-8"),
        _ => None,
    }
}

/// A French overseas place (see [`Territory`]) from the country code (`FR` or an overseas
/// code) and the postal code (digits), the postal code first: `Some(Some(department))` for
/// Guadeloupe, Martinique and Réunion, `Some(None)` outside the French VAT area, `None`
/// for metropolitan France and any other country.
fn french_overseas(country: &str, postal: &str) -> Option<Option<&'static str>> {
    const CODES: [(&str, Option<&str>); 12] = [
        ("GP", Some("FR-971")),
        ("MQ", Some("FR-972")),
        ("RE", Some("FR-974")),
        ("GF", None),
        ("YT", None),
        ("MF", None),
        ("BL", None),
        ("PM", None),
        ("TF", None),
        ("WF", None),
        ("PF", None),
        ("NC", None),
    ];
    let by_code = CODES.iter().find(|(c, _)| *c == country).map(|(_, d)| *d);
    if by_code.is_none() && country != "FR" {
        return None;
    }
    let by_postal = match postal.get(..3) {
        _ if postal == "97133" || postal == "97150" => Some(None),
        _ if postal.len() != 5 => None,
        Some("971") => Some(Some("FR-971")),
        Some("972") => Some(Some("FR-972")),
        Some("974") => Some(Some("FR-974")),
        Some("973" | "975" | "976" | "984" | "986" | "987" | "988") => Some(None),
        _ => None,
    };
    by_postal.or(by_code)
}

/// Whether a place taxed as `country`/`subdivision` lies outside the EU VAT area although
/// its country is a member state: Guadeloupe, Martinique and Réunion (module rule 2).
fn outside_the_eu_vat_area(country: &str, subdivision: Option<&str>) -> bool {
    country == "FR" && matches!(subdivision, Some("FR-971" | "FR-972" | "FR-974"))
}

/// The place of `address` for tax (see [`Territory`]) under the latest rules: as
/// [`territory_on`] on the last day the table knows.
pub fn territory(address: &Address) -> Territory {
    territory_on(address, NaiveDate::MAX)
}

/// The place of `address` for tax on `date`, the tax point (see [`Territory`]): the Greek
/// islands with the lower rate changed on 2026-01-01.
pub fn territory_on(address: &Address, date: NaiveDate) -> Territory {
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
    match french_overseas(&country, postal) {
        Some(Some(department)) => {
            return Territory::In {
                country: "FR".into(),
                subdivision: Some(department.into()),
            }
        }
        Some(None) => {
            return Territory::Outside {
                country: "FR".into(),
            }
        }
        None => {}
    }
    let (country, subdivision) = match country.as_str() {
        "AT" => {
            let sub = austrian_enclave(postal);
            (country, sub.map(str::to_string))
        }
        "GR" => {
            let sub = greek_island(postal, date);
            (country, sub.map(str::to_string))
        }
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
    let (country, subdivision) = match territory_on(address, date) {
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
    if outside_the_eu_vat_area(&country, sub) {
        return Some(nothing(&country, TaxabilityReason::NotSubjectToTax));
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
