//! The dated table of standard VAT/GST rates for electronically supplied services sold to
//! consumers, and its lookup: [`rate_on`] answers the rate in force on a tax point.
//!
//! One row per change: (country, subdivision, rate, first day it applies, tax name). A rate
//! applies from its row's date until the next row of the same country and subdivision. The
//! rates are in parts per million (25.5 % = 255_000; Québec's 9.975 % = 99_750), which
//! basis points cannot hold.
//!
//! - Countries are ISO 3166-1 alpha-2 (Greece is `GR`, although its VAT prefix is `EL`);
//!   subdivisions are ISO 3166-2 (`PT-30` Madeira, `PT-20` Azores, `CA-ON` Ontario).
//! - A subdivision with rows of its own is answered from them only (before its first row:
//!   none); any other subdivision is answered from its country's rows (`CA-AB` → GST 5 %).
//! - Canada: a province's HST replaces the GST, but Québec's QST comes on top of it: the
//!   `CA-QC` row is the QST alone, the GST is `rate_on("CA", None, ..)`. The Canadian rows
//!   start on 2021-07-01, when non-resident digital suppliers first had to register and
//!   collect GST/HST (canada.ca "GST/HST for digital economy businesses"); each gives the
//!   rate in force on that date. (QST for non-residents began on 2019-01-01; the `CA-QC` row
//!   still starts with the others.)
//! - NO, CH and AU rows give the dates of the rates; foreign sellers of digital services
//!   owe them only later (NO 2011-07-01, AU 2017-07-01, CH by the worldwide-turnover rule of
//!   2018). This table answers rates, not obligations.
//! - Territorial rates, rows of a subdivision that only some of its postal codes map to (see
//!   `place::territory_on`; each row's code is its region's ISO 3166-2 code, although the
//!   rate is not the whole region's): Jungholz (`AT-7`, Tyrol, only the postal code 6691)
//!   and Mittelberg (`AT-8`, Vorarlberg, only 6991–6993) at Austria's 19 %; Guadeloupe
//!   (`FR-971`), Martinique (`FR-972`) and Réunion (`FR-974`) at the French overseas
//!   departments' 8.5 %, which only a seller established in France charges (they are outside
//!   the EU VAT area); the Greek islands' standard rate lowered by 30 % (17 %): `GR-K` (North
//!   Aegean) and `GR-L` (South Aegean) for Lesbos, Chios, Samos, Kos and Leros since the
//!   table's first Greek row, and from 2026-01-01 for every North Aegean island and the
//!   Dodecanese but Rhodes (Samothraki, in East Macedonia and Thrace, which has it too, is
//!   not mapped: its postal code is not settled).
//! - Not in the table: reduced rates (e-books, press), the territories outside a VAT area
//!   (Canary Islands, Åland, Mount Athos, French Guiana, Mayotte, …: `place::Territory`) and
//!   changes not yet enacted (CH 8.5 %).
//!
//! Sources, cited per row: the issue 48 research pass of 2026-11-29 (notes/issue48-plan.md,
//! "Rate table verification"). `kd` is kdeldycke/vat-rates `vat_rates.csv` (commit 7585c28)
//! and `ib` ibericode/vat-rates `vat-rates.json` (commit 5abb1e1), both dated tables used
//! as a second source; the other sources are tax authorities' and firms' publications.

use chrono::NaiveDate;

/// A rate in force: what [`rate_on`] answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// Parts per million of the taxable amount (20 % = 200_000).
    pub ppm: u32,
    /// The first day this rate applies.
    pub from: NaiveDate,
    /// What the buyer reads: `VAT`, `GST`, `HST` or `QST`.
    pub name: &'static str,
}

/// The 27 member states of the European Union (ISO 3166-1 alpha-2, sorted).
pub const EU_MEMBER_STATES: [&str; 27] = [
    "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU", "IE", "IT",
    "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK",
];

/// The rate in force in `country` (and `subdivision`, if it has rows of its own) on `date`,
/// the tax point. `None` for a country not in the table or a date before its first row.
/// Codes are compared without regard to case.
pub fn rate_on(country: &str, subdivision: Option<&str>, date: NaiveDate) -> Option<Rate> {
    let own = subdivision
        .filter(|s| !s.is_empty() && RATES.iter().any(|r| r.is(country, s)))
        .unwrap_or("");
    RATES
        .iter()
        .rfind(|r| r.is(country, own) && r.from <= date)
        .map(|r| Rate {
            ppm: r.ppm,
            from: r.from,
            name: r.name,
        })
}

/// Whether the table has rows for `country` (`subdivision` `None`: its own, country-wide
/// rows; `Some`: rows of that subdivision's own), on any date. Codes without regard to case.
pub fn has_rows(country: &str, subdivision: Option<&str>) -> bool {
    let sub = subdivision.unwrap_or("");
    RATES.iter().any(|r| r.is(country, sub))
}

/// The Portuguese autonomous region of a postal code (`9050-123`, `9050123` or `9050`):
/// Madeira (with Porto Santo) 9000–9499 → `PT-30`, the Azores 9500–9999 → `PT-20`;
/// mainland codes and anything that is not a Portuguese postal code → `None`.
pub fn portugal_region(postal_code: &str) -> Option<&'static str> {
    let code = postal_code.trim();
    let (head, tail) = (code.get(..4)?, code.get(4..)?);
    let tail = tail.strip_prefix(['-', ' ']).unwrap_or(tail);
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(head) || !(tail.is_empty() || (tail.len() == 3 && digits(tail))) {
        return None;
    }
    match head.parse::<u16>().ok()? {
        9000..=9499 => Some("PT-30"),
        9500..=9999 => Some("PT-20"),
        _ => None,
    }
}

/// One change of rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row {
    country: &'static str,
    /// `""` for the whole country.
    subdivision: &'static str,
    ppm: u32,
    from: NaiveDate,
    name: &'static str,
}

impl Row {
    fn is(&self, country: &str, subdivision: &str) -> bool {
        self.country.eq_ignore_ascii_case(country)
            && self.subdivision.eq_ignore_ascii_case(subdivision)
    }
}

const VAT: &str = "VAT";
const GST: &str = "GST";
const HST: &str = "HST";
const QST: &str = "QST";

const fn row(
    country: &'static str,
    subdivision: &'static str,
    ppm: u32,
    from: NaiveDate,
    name: &'static str,
) -> Row {
    Row {
        country,
        subdivision,
        ppm,
        from,
        name,
    }
}

/// Evaluated while compiling only (the table is a `const`): an impossible date is a build
/// error, never a run-time panic.
#[allow(clippy::panic)]
const fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    match NaiveDate::from_ymd_opt(y, m, d) {
        Some(date) => date,
        None => panic!("invalid date in the rate table"),
    }
}

/// Sorted by (country, subdivision, from); the tests check it.
const RATES: &[Row] = &[
    // kd (AT 20 % from 1984-01-01, 18 % before); ib
    row("AT", "", 200_000, date(1984, 1, 1), VAT),
    // Jungholz (Tyrol, postal code 6691): UStG 1994 § 10 Abs 4 (19 % for the supplies made
    // in the municipalities of Jungholz and Mittelberg), still in the consolidated text of
    // 2026-08-05 (RIS, as summarised in ThomasMoreAI/legal-skills-open
    // at/tax/skills/steuer-at-clemensjl/references/steuersaetze.md); vatlive.com 2015-03-28
    // "austria-increases-reduced-vat-rates-2016" ("the special 19% rate for Mittelberg and
    // Jungholz" unchanged); vatupdate 2021/04/16 "vat-rates-in-austria" (other rates: 19 %);
    // Stripe Tax's Austria page names both municipalities. From 1995-01-01, when the UStG
    // 1994 took effect with Austria's EU accession; earlier rates are not researched.
    row("AT", "AT-7", 190_000, date(1995, 1, 1), VAT),
    // Mittelberg (Kleinwalsertal, Vorarlberg: 6991 Riezlern, 6992 Hirschegg, 6993
    // Mittelberg): the same § 10 Abs 4 UStG 1994 and sources as Jungholz.
    row("AT", "AT-8", 190_000, date(1995, 1, 1), VAT),
    // ato.gov.au "GST on imported services and digital products" (10 % since 2000-07-01)
    row("AU", "", 100_000, date(2000, 7, 1), GST),
    // kd (20.5 % in 1994–95, 21 % from 1996-01-01)
    row("BE", "", 210_000, date(1996, 1, 1), VAT),
    // kd (22 % from 1996-07-01, 20 % from 1999-01-01)
    row("BG", "", 200_000, date(1999, 1, 1), VAT),
    // gst.gc.ca/fm-mes_e.html (GST 5 % since 2008-01-01); in force on 2021-07-01
    row("CA", "", 50_000, date(2021, 7, 1), GST),
    // avalara "canada-provincial-sales-tax-changes-july-2016" (NB HST 15 % since 2016-07-01)
    row("CA", "CA-NB", 150_000, date(2021, 7, 1), HST),
    // avalara "canada-provincial-sales-tax-changes-july-2016" (NL HST 15 % since 2016-07-01)
    row("CA", "CA-NL", 150_000, date(2021, 7, 1), HST),
    // ryan.com 2010/04 (NS HST 13 → 15 % on 2010-07-01); in force on 2021-07-01
    row("CA", "CA-NS", 150_000, date(2021, 7, 1), HST),
    // CRA GST/HST Notice 342 (SOR/2025-0077); bdo.ca "nova-scotia-hst-rate-reduction"
    row("CA", "CA-NS", 140_000, date(2025, 4, 1), HST),
    // tax-services.ca "hst-for-ontario-british-columbia-effective-july-2010" (ON HST 13 %)
    row("CA", "CA-ON", 130_000, date(2021, 7, 1), HST),
    // avalara vatlive "canada-15-hst-rise-prince-edward-island" (PE 15 % since 2016-10-01)
    row("CA", "CA-PE", 150_000, date(2021, 7, 1), HST),
    // revenuquebec.ca "modifications-regime-tvq" (QST 9.975 % since 2013-01-01; on top of GST)
    row("CA", "CA-QC", 99_750, date(2021, 7, 1), QST),
    // avalara vatlive "switzerland-increases-vat-rate-to-8-from-2011-until-2018" (7.6 → 8 %)
    row("CH", "", 80_000, date(2011, 1, 1), VAT),
    // kd (7.7 % 2018-01-01 → 2024-01-01); vatupdate 2024/01/03
    row("CH", "", 77_000, date(2018, 1, 1), VAT),
    // vatupdate 2024/01/03; brag.ch; ESTV "MWST-Sätze"; kd
    row("CH", "", 81_000, date(2024, 1, 1), VAT),
    // totalserve.eu "increase-of-cyprus-vat-rate-from-18-to-19"; kd (18 % until 2014-01-12)
    row("CY", "", 190_000, date(2014, 1, 13), VAT),
    // gbbusinessglobal.com "czech-republic-increase-vat-rate-effective-jan-1st-2013"; kd; ib
    row("CZ", "", 210_000, date(2013, 1, 1), VAT),
    // kd (19 % from 2007-01-01)
    row("DE", "", 190_000, date(2007, 1, 1), VAT),
    // Zweites Corona-Steuerhilfegesetz (16 % 2020-07-01 to 2020-12-31); kd; ib
    row("DE", "", 160_000, date(2020, 7, 1), VAT),
    // netvat.com "German-Standard-VAT-Rate" 2021-01-04 (back to 19 %); kd; ib
    row("DE", "", 190_000, date(2021, 1, 1), VAT),
    // kd (25 % from 1992-01-01)
    row("DK", "", 250_000, date(1992, 1, 1), VAT),
    // kd (18 % before, 20 % from 2009-07-01)
    row("EE", "", 200_000, date(2009, 7, 1), VAT),
    // tungstenautomation.com (Estonia: 20 → 22 % on 2024-01-01); kd; ib
    row("EE", "", 220_000, date(2024, 1, 1), VAT),
    // companyforbusiness.ee "vat-24-from-july-2025"; tuokko.ee; kd; ib
    row("EE", "", 240_000, date(2025, 7, 1), VAT),
    // multienergia.es "subida-del-iva" (Real Decreto-ley 20/2012, 18 → 21 %); kd
    row("ES", "", 210_000, date(2012, 9, 1), VAT),
    // avalara vatlive "finland-raises-vat-from-23-to-24-in-2013"; kd
    row("FI", "", 240_000, date(2013, 1, 1), VAT),
    // vero.fi "new-vat-rate-from-1-september-2024"; kd; ib
    row("FI", "", 255_000, date(2024, 9, 1), VAT),
    // kd (19.6 % 2000-04-01 → 2014-01-01); ib
    row("FR", "", 200_000, date(2014, 1, 1), VAT),
    // Guadeloupe: CGI art. 296 (taux normal 8.5 % in Guadeloupe, Martinique and Réunion);
    // impots.gouv.fr "je-realise-depuis-la-metropole-une-prestation-de-services-pour-un-
    // client" (8.5 % / 2.1 %; none in French Guiana and Mayotte); BOI-TVA-GEO-20-40 § 20–40
    // (for services these departments are not third territories: the place of supply, CGI
    // art. 259 to 259 D, chooses between the metropolitan and the DOM rates). From
    // 2015-01-01, when electronically supplied services to consumers began to be taxed where
    // the consumer lives (CGI art. 259 D; Directive 2008/8/EC art. 5): before, a French
    // seller charged its own metropolitan rate, which this row does not say.
    row("FR", "FR-971", 85_000, date(2015, 1, 1), VAT),
    // Martinique: as Guadeloupe.
    row("FR", "FR-972", 85_000, date(2015, 1, 1), VAT),
    // Réunion: as Guadeloupe.
    row("FR", "FR-974", 85_000, date(2015, 1, 1), VAT),
    // Thomson Reuters tax blog, 2011 changes (17.5 → 20 % on 2011-01-04); kd; ib
    row("GB", "", 200_000, date(2011, 1, 4), VAT),
    // kd (23 % 2010-07-01 → 2016-06-01); ib
    row("GR", "", 240_000, date(2016, 6, 1), VAT),
    // North Aegean: Lesbos, Chios and Samos kept the islands' 30 % reduction (24 → 17 %) by
    // six-monthly extensions (dinamiki.com "latest-news-about-vat-rates": to 2017-12-31;
    // accordancevat.com 2019-07-08; vatupdate 2020/01/09; popek.gr 2020-07 (AADE decision,
    // 2020-07-01 to 2020-12-31)), permanent from 2021-07-01 (pedmede.gr, AADE decision "από
    // 1.7.2021 και εφεξής"; support.pagero.com "Permanent 30% VAT reduction for five Eastern
    // Aegean islands"; naftemporiki.gr 2021-06-17). From 2026-01-01 also every other island
    // of the North Aegean, Samothraki and the Dodecanese of up to 20,000 inhabitants (VAT
    // Code art. 26; the AADE announcement as pelop.gr 2025-12-31 "deite-se-poia-nisia-o-fpa-
    // tha-einai-meiomenos-kata-30" and reader.gr 2026-01-05 report it; announced by
    // liberal.gr and news247.gr 2025-09-08): a place change, not a rate change (no row).
    row("GR", "GR-K", 170_000, date(2016, 6, 1), VAT),
    // South Aegean: Kos and Leros, as Lesbos (`GR-K`); the other Dodecanese islands but
    // Rhodes from 2026-01-01 (the sources of `GR-K`).
    row("GR", "GR-L", 170_000, date(2016, 6, 1), VAT),
    // tportal.hr "croatia-starts-applying-25-vat-rate-as-of-1-march"; pwc.at 2012/02/16; kd
    row("HR", "", 250_000, date(2012, 3, 1), VAT),
    // vatcalc.com "hungary-raises-vat-rate-to-27-january-2012"; kd
    row("HU", "", 270_000, date(2012, 1, 1), VAT),
    // kd (21 % 2010 → 23 % 2012-01-01)
    row("IE", "", 230_000, date(2012, 1, 1), VAT),
    // Finance Act 2020 / S.I. 327/2020 (21 % from 2020-09-01); ib;
    // avalara vatlive "ireland-cuts-vat-from-23--to-21--till-feb-2021"
    row("IE", "", 210_000, date(2020, 9, 1), VAT),
    // charteredaccountants.ie TaxSource 2020-10 (21 % until 2021-02-28); ib
    row("IE", "", 230_000, date(2021, 3, 1), VAT),
    // accountancyineurope.com "slight-rise-in-italian-vat"; regfollower.com; kd
    row("IT", "", 220_000, date(2013, 10, 1), VAT),
    // news.lt (19 → 21 % on 2009-09-01); meridianglobalservices.de "Lithuania-VAT-Change"; kd
    row("LT", "", 210_000, date(2009, 9, 1), VAT),
    // kd (17 % from 2015-01-01)
    row("LU", "", 170_000, date(2015, 1, 1), VAT),
    // orbitax (law of 26 October 2022: 16 % for 2023); kd; ib
    row("LU", "", 160_000, date(2023, 1, 1), VAT),
    // vatupdate 2024/01/09 (Circular 812-1: 17 % again from 2024-01-01); kd; ib
    row("LU", "", 170_000, date(2024, 1, 1), VAT),
    // euvatrefund.com "latvia-vat-rate" (21 % Jul 2012); kd (22 % 2011-01-01 → 2012-07-01)
    row("LV", "", 210_000, date(2012, 7, 1), VAT),
    // kd (15 % 1995 → 18 % 2004-01-01)
    row("MT", "", 180_000, date(2004, 1, 1), VAT),
    // kd (21 % from 2012-10-01); ib
    row("NL", "", 210_000, date(2012, 10, 1), VAT),
    // skatteetaten.no "endringar-i-meirverdiavgifta-fra-1.-januar-2005" (24 → 25 %)
    row("NO", "", 250_000, date(2005, 1, 1), VAT),
    // Thomson Reuters tax blog, 2011 changes (PL 23 %); kd
    row("PL", "", 230_000, date(2011, 1, 1), VAT),
    // vatcalc.com "portugal-raises-vat-to-23-january-2011"; Thomson Reuters; kd
    row("PT", "", 230_000, date(2011, 1, 1), VAT),
    // Azores: vatupdate 2021/07/12 "standard-vat-rate-in-azores-is-reduced-to-16" (18 → 16 %,
    // Regional Legislative Decree 15-A/2021/A); not kd or ib, which still say 18 %
    row("PT", "PT-20", 160_000, date(2021, 7, 1), VAT),
    // Madeira: tmf-vat.com "madeira-vat-rate-hike"; fliegerlaw.com (16 → 22 % on 2012-04-01)
    row("PT", "PT-30", 220_000, date(2012, 4, 1), VAT),
    // kd (20 % in 2016, 19 % from 2017-01-01); ib
    row("RO", "", 190_000, date(2017, 1, 1), VAT),
    // Law 141/2025 (Official Gazette 699 of 25 July 2025); bdo.ro Tax Flash 121; kd; ib
    row("RO", "", 210_000, date(2025, 8, 1), VAT),
    // kd (23.46 % before, 25 % from 1990-07-01)
    row("SE", "", 250_000, date(1990, 7, 1), VAT),
    // unitedcashback.com (Slovenia 20 → 22 % on 2013-07-01); kd
    row("SI", "", 220_000, date(2013, 7, 1), VAT),
    // vatlive.com "slovakia-raises-vat-1-to-20-in-january-2011"; kd; ib
    row("SK", "", 200_000, date(2011, 1, 1), VAT),
    // Act No. 278/2024 Coll. art. VII (taxopolis.eu); taxnews.ey.com 2024-1947; kd; ib
    row("SK", "", 230_000, date(2025, 1, 1), VAT),
];

#[cfg(test)]
#[path = "rates_tests.rs"]
mod tests;
