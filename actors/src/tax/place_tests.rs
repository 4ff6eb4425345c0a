//! Table tests of the jurisdiction decision (`place.rs`): each rule of plan §2 for EU, UK,
//! Norwegian, Swiss, Australian, Canadian and US buyers, consumers and businesses, sellers
//! with and without registrations, the micro threshold, the territories outside the VAT
//! area and the countries taxed as another.

use super::*;
use crate::domain::customer::{TaxId, TaxIdFormat};
use crate::tax::TaxIdStatus;

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

fn day() -> NaiveDate {
    d(2026, 3, 1)
}

fn seller(country: &str, has_tax_id: bool, regs: &[&str], micro: bool) -> SellerTax {
    SellerTax {
        country: (!country.is_empty()).then(|| country.to_string()),
        has_tax_id,
        registrations: regs
            .iter()
            .map(|r| Registration::parse(r).unwrap())
            .collect(),
        eu_micro_threshold: micro,
    }
}

fn address(country: &str, postal: Option<&str>, state: Option<&str>) -> Address {
    Address {
        postal_code: postal.map(str::to_string),
        state: state.map(str::to_string),
        country: country.to_string(),
        ..Address::default()
    }
}

fn consumer(country: &str) -> Buyer {
    Buyer::at(Some(address(country, None, None)))
}

fn at(country: &str, postal: &str) -> Buyer {
    Buyer::at(Some(address(country, Some(postal), None)))
}

fn in_state(country: &str, state: &str) -> Buyer {
    Buyer::at(Some(address(country, None, Some(state))))
}

fn business(country: &str, status: TaxIdStatus) -> Buyer {
    let format = match country {
        "GB" => TaxIdFormat::GbVat,
        "NO" => TaxIdFormat::NoVat,
        "CH" => TaxIdFormat::ChVat,
        "AU" => TaxIdFormat::AuAbn,
        "CA" => TaxIdFormat::CaGstHst,
        _ => TaxIdFormat::EuVat,
    };
    Buyer {
        address: Some(address(country, None, None)),
        is_business: true,
        tax_id: Some((
            TaxId {
                value: format!("{country}123456789"),
                format,
            },
            status,
        )),
    }
}

use TaxabilityReason::*;

/// What a case expects: (country, subdivision, ppm or 0, reason, regime).
type Want<'a> = (&'a str, Option<&'a str>, u32, TaxabilityReason, Regime);

/// (country, subdivision, ppm or 0, reason, regime) of a decision.
fn decided(
    s: &SellerTax,
    b: &Buyer,
    date: NaiveDate,
) -> (String, Option<String>, u32, TaxabilityReason, Regime) {
    let p = decide(s, b, date).expect("an address");
    assert_eq!(
        p.rate.is_some(),
        p.reason == StandardRated,
        "a rate exactly when standard-rated: {p:?}"
    );
    (
        p.country,
        p.subdivision,
        p.rate.map_or(0, |r| r.ppm),
        p.reason,
        p.regime,
    )
}

fn expect(s: &SellerTax, b: &Buyer, date: NaiveDate, want: Want, case: &str) {
    let (c, sub, ppm, reason, regime) = decided(s, b, date);
    assert_eq!(
        (c.as_str(), sub.as_deref(), ppm, reason, regime),
        want,
        "{case}"
    );
}

#[test]
fn an_eu_seller_with_oss_taxes_eu_consumers_at_their_rate_and_businesses_by_reverse_charge() {
    let fr = seller("FR", true, &["eu_oss"], false);
    let cases: &[(&str, Buyer, Want)] = &[
        (
            "DE consumer",
            consumer("DE"),
            ("DE", None, 190_000, StandardRated, Regime::EuOss),
        ),
        (
            "FR consumer",
            consumer("FR"),
            ("FR", None, 200_000, StandardRated, Regime::Domestic),
        ),
        (
            "fr consumer, lower case",
            consumer("fr"),
            ("FR", None, 200_000, StandardRated, Regime::Domestic),
        ),
        (
            "FI consumer",
            consumer("FI"),
            ("FI", None, 255_000, StandardRated, Regime::EuOss),
        ),
        (
            "DE business, valid",
            business("DE", TaxIdStatus::Valid),
            ("DE", None, 0, ReverseCharge, Regime::None),
        ),
        (
            "DE business, unverified",
            business("DE", TaxIdStatus::Unverified),
            ("DE", None, 0, ReverseCharge, Regime::None),
        ),
        (
            "DE business, invalid: a consumer",
            business("DE", TaxIdStatus::Invalid),
            ("DE", None, 190_000, StandardRated, Regime::EuOss),
        ),
        (
            "FR business at home: home VAT",
            business("FR", TaxIdStatus::Valid),
            ("FR", None, 200_000, StandardRated, Regime::Domestic),
        ),
        (
            "Monaco as France",
            consumer("MC"),
            ("FR", None, 200_000, StandardRated, Regime::Domestic),
        ),
        (
            "Madeira",
            at("PT", "9000-018"),
            ("PT", Some("PT-30"), 220_000, StandardRated, Regime::EuOss),
        ),
        (
            "Azores",
            at("PT", "9500-150"),
            ("PT", Some("PT-20"), 160_000, StandardRated, Regime::EuOss),
        ),
        (
            "Lisbon",
            at("PT", "1100-148"),
            ("PT", None, 230_000, StandardRated, Regime::EuOss),
        ),
        (
            "GB consumer, no gb",
            consumer("GB"),
            ("GB", None, 0, NotCollecting, Regime::None),
        ),
        (
            "US consumer",
            in_state("US", "US-NY"),
            ("US", None, 0, NotCollecting, Regime::None),
        ),
        (
            "JP consumer",
            consumer("JP"),
            ("JP", None, 0, NotCollecting, Regime::None),
        ),
    ];
    for (case, buyer, want) in cases {
        expect(&fr, buyer, day(), *want, case);
    }
    // A business buyer without a number is a consumer.
    let mut no_number = business("DE", TaxIdStatus::Valid);
    no_number.tax_id = None;
    expect(
        &fr,
        &no_number,
        day(),
        ("DE", None, 190_000, StandardRated, Regime::EuOss),
        "no number",
    );
}

#[test]
fn without_oss_or_a_home_number_nothing_is_collected() {
    let none = seller("FR", true, &[], false);
    for c in ["DE", "GB", "NO", "CH", "AU", "CA", "US"] {
        expect(
            &none,
            &consumer(c),
            day(),
            (c, None, 0, NotCollecting, Regime::None),
            c,
        );
    }
    expect(
        &none,
        &consumer("FR"),
        day(),
        ("FR", None, 200_000, StandardRated, Regime::Domestic),
        "home",
    );
    // A seller not registered at home (a small business) charges nothing at home either.
    let small = seller("DE", false, &["eu_oss"], false);
    expect(
        &small,
        &consumer("DE"),
        day(),
        ("DE", None, 0, NotCollecting, Regime::None),
        "home, no number",
    );
    expect(
        &small,
        &consumer("AT"),
        day(),
        ("AT", None, 200_000, StandardRated, Regime::EuOss),
        "OSS still applies",
    );
}

#[test]
fn under_the_micro_threshold_eu_consumers_pay_the_sellers_home_rate() {
    let micro = seller("FR", true, &["eu_oss"], true);
    expect(
        &micro,
        &consumer("DE"),
        day(),
        ("FR", None, 200_000, StandardRated, Regime::Domestic),
        "DE consumer at FR 20 %",
    );
    expect(
        &micro,
        &consumer("FR"),
        day(),
        ("FR", None, 200_000, StandardRated, Regime::Domestic),
        "the buyer's own state",
    );
    expect(
        &micro,
        &business("DE", TaxIdStatus::Valid),
        day(),
        ("DE", None, 0, ReverseCharge, Regime::None),
        "B2B unaffected",
    );
    expect(
        &micro,
        &consumer("GB"),
        day(),
        ("GB", None, 0, NotCollecting, Regime::None),
        "outside the EU unaffected",
    );
    // The threshold is an EU rule: a non-EU seller with the flag is not under it.
    let us = seller("US", true, &["non_eu_oss"], true);
    expect(
        &us,
        &consumer("DE"),
        day(),
        ("DE", None, 190_000, StandardRated, Regime::NonEuOss),
        "non-EU seller",
    );
    // A micro seller without a home number charges no VAT at all.
    let small = seller("FR", false, &[], true);
    expect(
        &small,
        &consumer("DE"),
        day(),
        ("FR", None, 0, NotCollecting, Regime::None),
        "no home number",
    );
}

#[test]
fn a_seller_outside_the_eu_needs_non_union_oss() {
    let us = seller("US", true, &["non_eu_oss"], false);
    expect(
        &us,
        &consumer("DE"),
        day(),
        ("DE", None, 190_000, StandardRated, Regime::NonEuOss),
        "consumer",
    );
    expect(
        &us,
        &business("IT", TaxIdStatus::Unverified),
        day(),
        ("IT", None, 0, ReverseCharge, Regime::None),
        "business",
    );
    expect(
        &us,
        &consumer("US"),
        day(),
        ("US", None, 0, NotCollecting, Regime::None),
        "domestic US: a provider's",
    );
    let union = seller("US", true, &["eu_oss"], false);
    expect(
        &union,
        &consumer("DE"),
        day(),
        ("DE", None, 0, NotCollecting, Regime::None),
        "the Union scheme is not theirs",
    );
    let nowhere = seller("", false, &["non_eu_oss"], false);
    expect(
        &nowhere,
        &consumer("AT"),
        day(),
        ("AT", None, 200_000, StandardRated, Regime::NonEuOss),
        "no country",
    );
}

#[test]
fn uk_norway_switzerland_and_australia_tax_consumers_of_registered_sellers() {
    let all = seller("US", true, &["gb", "no", "ch", "au"], false);
    let cases: &[(&str, Buyer, Want)] = &[
        (
            "GB",
            consumer("GB"),
            ("GB", None, 200_000, StandardRated, Regime::Gb),
        ),
        (
            "XI as GB",
            consumer("XI"),
            ("GB", None, 200_000, StandardRated, Regime::Gb),
        ),
        (
            "Isle of Man as GB",
            consumer("im"),
            ("GB", None, 200_000, StandardRated, Regime::Gb),
        ),
        (
            "NO",
            consumer("NO"),
            ("NO", None, 250_000, StandardRated, Regime::No),
        ),
        (
            "CH",
            consumer("CH"),
            ("CH", None, 81_000, StandardRated, Regime::Ch),
        ),
        (
            "LI as CH",
            consumer("LI"),
            ("CH", None, 81_000, StandardRated, Regime::Ch),
        ),
        (
            "AU",
            consumer("AU"),
            ("AU", None, 100_000, StandardRated, Regime::Au),
        ),
        (
            "GB business",
            business("GB", TaxIdStatus::Valid),
            ("GB", None, 0, ReverseCharge, Regime::None),
        ),
        (
            "CH business",
            business("CH", TaxIdStatus::Unverified),
            ("CH", None, 0, ReverseCharge, Regime::None),
        ),
        (
            "NO business",
            business("NO", TaxIdStatus::Valid),
            ("NO", None, 0, NotSubjectToTax, Regime::None),
        ),
        (
            "AU business",
            business("AU", TaxIdStatus::Valid),
            ("AU", None, 0, NotSubjectToTax, Regime::None),
        ),
        (
            "GB business, invalid",
            business("GB", TaxIdStatus::Invalid),
            ("GB", None, 200_000, StandardRated, Regime::Gb),
        ),
        (
            "DE: no OSS",
            consumer("DE"),
            ("DE", None, 0, NotCollecting, Regime::None),
        ),
    ];
    for (case, buyer, want) in cases {
        expect(&all, buyer, day(), *want, case);
    }
    let none = seller("US", true, &[], false);
    for (c, area) in [
        ("GB", "GB"),
        ("XI", "GB"),
        ("NO", "NO"),
        ("CH", "CH"),
        ("AU", "AU"),
    ] {
        expect(
            &none,
            &consumer(c),
            day(),
            (area, None, 0, NotCollecting, Regime::None),
            c,
        );
    }
    // Switzerland on the day before its 8.1 %.
    expect(
        &all,
        &consumer("CH"),
        d(2023, 12, 31),
        ("CH", None, 77_000, StandardRated, Regime::Ch),
        "CH 2023",
    );
    // A seller established in the UK sells to the UK as a domestic sale.
    let gb = seller("GB", true, &[], false);
    expect(
        &gb,
        &consumer("GB"),
        day(),
        ("GB", None, 200_000, StandardRated, Regime::Domestic),
        "GB at home",
    );
    expect(
        &gb,
        &consumer("XI"),
        day(),
        ("GB", None, 200_000, StandardRated, Regime::Domestic),
        "XI at home",
    );
}

#[test]
fn canada_is_gst_or_the_provinces_hst() {
    let ca = seller("US", true, &["ca"], false);
    let cases: &[(&str, Buyer, Want)] = &[
        (
            "ON HST",
            in_state("CA", "CA-ON"),
            ("CA", Some("CA-ON"), 130_000, StandardRated, Regime::Ca),
        ),
        (
            "on, unprefixed",
            in_state("ca", "on"),
            ("CA", Some("CA-ON"), 130_000, StandardRated, Regime::Ca),
        ),
        (
            "NS HST 14 %",
            in_state("CA", "CA-NS"),
            ("CA", Some("CA-NS"), 140_000, StandardRated, Regime::Ca),
        ),
        (
            "QC: GST only",
            in_state("CA", "CA-QC"),
            ("CA", None, 50_000, StandardRated, Regime::Ca),
        ),
        (
            "BC: GST only",
            in_state("CA", "CA-BC"),
            ("CA", None, 50_000, StandardRated, Regime::Ca),
        ),
        (
            "AB: GST",
            in_state("CA", "CA-AB"),
            ("CA", None, 50_000, StandardRated, Regime::Ca),
        ),
        (
            "no province: GST",
            consumer("CA"),
            ("CA", None, 50_000, StandardRated, Regime::Ca),
        ),
        (
            "business",
            business("CA", TaxIdStatus::Valid),
            ("CA", None, 0, NotSubjectToTax, Regime::None),
        ),
    ];
    for (case, buyer, want) in cases {
        expect(&ca, buyer, day(), *want, case);
    }
    expect(
        &ca,
        &in_state("CA", "CA-NS"),
        d(2025, 3, 31),
        ("CA", Some("CA-NS"), 150_000, StandardRated, Regime::Ca),
        "NS before",
    );
    // Before the simplified regime the table has no rate: the rules cannot say.
    expect(
        &ca,
        &in_state("CA", "CA-ON"),
        d(2021, 6, 30),
        ("CA", None, 0, NotSupported, Regime::None),
        "2021-06-30",
    );
    let none = seller("US", true, &[], false);
    expect(
        &none,
        &in_state("CA", "CA-ON"),
        day(),
        ("CA", None, 0, NotCollecting, Regime::None),
        "no ca",
    );
    // A Canadian seller: the buyer's province, as a domestic sale.
    let home = seller("CA", true, &[], false);
    expect(
        &home,
        &in_state("CA", "CA-NB"),
        day(),
        (
            "CA",
            Some("CA-NB"),
            150_000,
            StandardRated,
            Regime::Domestic,
        ),
        "domestic",
    );
}

#[test]
fn territories_outside_the_vat_area_are_not_subject_to_tax() {
    let es = seller("ES", true, &["eu_oss"], false);
    let fr = seller("FR", true, &["eu_oss"], false);
    let cases: &[(&str, Buyer, &str)] = &[
        ("Canary Islands, Las Palmas", at("ES", "35001"), "ES"),
        ("Canary Islands, Tenerife", at("ES", "38001"), "ES"),
        (
            "Canary Islands by state",
            Buyer::at(Some(address("ES", None, Some("es-cn")))),
            "ES",
        ),
        ("Ceuta", at("ES", "51001"), "ES"),
        ("Melilla", at("ES", "52001"), "ES"),
        ("Åland", consumer("AX"), "AX"),
        ("Åland by postal code", at("FI", "22100"), "FI"),
        ("Åland, prefixed code", at("FI", "AX-22100"), "FI"),
        ("Heligoland", at("DE", "27498"), "DE"),
        ("Büsingen", at("DE", "78266"), "DE"),
        ("Livigno", at("IT", "23041"), "IT"),
        ("Campione d'Italia", at("IT", "22061"), "IT"),
        ("Mount Athos", at("GR", "63086"), "GR"),
    ];
    for (case, buyer, country) in cases {
        let want = (*country, None, 0, NotSubjectToTax, Regime::None);
        expect(&fr, buyer, day(), want, case);
        // Also for a seller of the same country (no domestic VAT there) and for a business.
        expect(&es, buyer, day(), want, case);
        let mut b = business(country, TaxIdStatus::Valid);
        b.address = buyer.address.clone();
        expect(&fr, &b, day(), want, case);
    }
    // The rest of those countries is inside.
    for (buyer, ppm) in [
        (at("ES", "28001"), 210_000),
        (at("FI", "00100"), 255_000),
        (at("DE", "27499"), 190_000),
        (at("IT", "22060"), 220_000),
        (at("GR", "10431"), 240_000),
    ] {
        let (_, _, got, reason, _) = decided(&fr, &buyer, day());
        assert_eq!((got, reason), (ppm, StandardRated), "{buyer:?}");
    }
}

#[test]
fn a_rate_change_applies_from_its_day() {
    let fr = seller("FR", true, &["eu_oss"], false);
    for (c, date, ppm) in [
        ("FI", d(2024, 8, 31), 240_000),
        ("FI", d(2024, 9, 1), 255_000),
        ("EE", d(2025, 6, 30), 220_000),
        ("EE", d(2025, 7, 1), 240_000),
        ("DE", d(2020, 7, 1), 160_000),
    ] {
        expect(
            &fr,
            &consumer(c),
            date,
            (c, None, ppm, StandardRated, Regime::EuOss),
            c,
        );
    }
    // The Azores' row starts on 2021-07-01: before it the table cannot say.
    let (_, sub, _, reason, _) = decided(&fr, &at("PT", "9500-150"), d(2021, 6, 30));
    assert_eq!((sub.as_deref(), reason), (Some("PT-20"), NotSupported));
}

#[test]
fn no_address_no_placement_and_names_follow_the_country() {
    let fr = seller("FR", true, &["eu_oss"], false);
    assert_eq!(decide(&fr, &Buyer::default(), day()), None);
    let name = |b: &Buyer| decide(&fr, b, day()).unwrap().name;
    assert_eq!(name(&consumer("DE")), "VAT");
    assert_eq!(name(&consumer("AU")), "GST");
    assert_eq!(name(&consumer("US")), "Sales tax");
    let ca = seller("US", true, &["ca"], false);
    assert_eq!(
        decide(&ca, &in_state("CA", "CA-ON"), day()).unwrap().name,
        "HST"
    );
    assert_eq!(
        decide(&ca, &in_state("CA", "CA-QC"), day()).unwrap().name,
        "GST"
    );
}

/// The territory of an address with `country` and `postal` (or none) on `date`.
fn place(country: &str, postal: Option<&str>, date: NaiveDate) -> Territory {
    territory_on(&address(country, postal, None), date)
}

fn inside(country: &str, sub: Option<&str>) -> Territory {
    Territory::In {
        country: country.into(),
        subdivision: sub.map(str::to_string),
    }
}

fn outside(country: &str) -> Territory {
    Territory::Outside {
        country: country.into(),
    }
}

#[test]
fn french_overseas_places_by_postal_code_or_their_own_country_code() {
    let cases: &[(&str, Option<&str>, Territory)] = &[
        ("FR", Some("97100"), inside("FR", Some("FR-971"))),
        ("FR", Some("F-97100"), inside("FR", Some("FR-971"))),
        ("FR", Some("97 110"), inside("FR", Some("FR-971"))),
        ("GP", None, inside("FR", Some("FR-971"))),
        ("gp", Some("97100"), inside("FR", Some("FR-971"))),
        ("FR", Some("97200"), inside("FR", Some("FR-972"))),
        ("MQ", None, inside("FR", Some("FR-972"))),
        ("FR", Some("97400"), inside("FR", Some("FR-974"))),
        ("FR", Some("FR-97490"), inside("FR", Some("FR-974"))),
        ("RE", None, inside("FR", Some("FR-974"))),
        // The postal code says more than the country code.
        ("RE", Some("97600"), outside("FR")),
        ("RE", Some("not a code"), inside("FR", Some("FR-974"))),
        // French Guiana and Mayotte: no VAT.
        ("FR", Some("97300"), outside("FR")),
        ("GF", None, outside("FR")),
        ("FR", Some("97600"), outside("FR")),
        ("YT", None, outside("FR")),
        // Saint-Martin and Saint-Barthélemy share Guadeloupe's 971.
        ("FR", Some("97150"), outside("FR")),
        ("GP", Some("97150"), outside("FR")),
        ("MF", None, outside("FR")),
        ("FR", Some("97133"), outside("FR")),
        ("BL", None, outside("FR")),
        ("FR", Some("97500"), outside("FR")),
        ("PM", None, outside("FR")),
        ("FR", Some("98800"), outside("FR")),
        ("NC", None, outside("FR")),
        ("FR", Some("98714"), outside("FR")),
        ("PF", None, outside("FR")),
        ("FR", Some("98600"), outside("FR")),
        ("WF", None, outside("FR")),
        ("TF", None, outside("FR")),
        // Metropolitan France, Corsica and Monaco are France.
        ("FR", Some("75001"), inside("FR", None)),
        ("FR", Some("20000"), inside("FR", None)),
        ("FR", Some("9710"), inside("FR", None)),
        ("FR", None, inside("FR", None)),
        ("MC", Some("98000"), inside("FR", None)),
    ];
    for (country, postal, want) in cases {
        assert_eq!(
            &place(country, *postal, day()),
            want,
            "{country} {postal:?}"
        );
        assert_eq!(
            &territory(&address(country, *postal, None)),
            want,
            "{country} {postal:?}"
        );
    }
}

#[test]
fn jungholz_and_mittelberg_have_their_own_rows_the_rest_of_austria_does_not() {
    for (postal, sub) in [
        ("6691", Some("AT-7")),
        ("A-6691", Some("AT-7")),
        ("6991", Some("AT-8")),
        ("6992", Some("AT-8")),
        ("AT-6993", Some("AT-8")),
        ("6993", Some("AT-8")),
        ("6900", None),
        ("6020", None),
        ("1010", None),
        ("66910", None),
    ] {
        assert_eq!(
            place("AT", Some(postal), day()),
            inside("AT", sub),
            "{postal}"
        );
    }
    // Austria's codes only: a German 6991x is not Mittelberg.
    assert_eq!(place("DE", Some("6991"), day()), inside("DE", None));
}

#[test]
fn the_greek_islands_with_the_lower_rate_by_postal_code_and_date() {
    let before = d(2025, 12, 31);
    let since = d(2026, 1, 1);
    // (postal, before 2026, since 2026)
    let cases: &[(&str, Option<&str>, Option<&str>)] = &[
        ("81100", Some("GR-K"), Some("GR-K")), // Mytilene, Lesbos
        ("81107", Some("GR-K"), Some("GR-K")), // Kalloni, Lesbos
        ("82100", Some("GR-K"), Some("GR-K")), // Chios
        ("82300", Some("GR-K"), Some("GR-K")), // Kardamyla, Chios
        ("83100", Some("GR-K"), Some("GR-K")), // Samos
        ("83200", Some("GR-K"), Some("GR-K")), // Karlovasi, Samos
        ("85300", Some("GR-L"), Some("GR-L")), // Kos
        ("85302", Some("GR-L"), Some("GR-L")), // Antimachia, Kos
        ("85400", Some("GR-L"), Some("GR-L")), // Leros
        ("81400", None, Some("GR-K")),         // Lemnos
        ("83300", None, Some("GR-K")),         // Ikaria
        ("85303", None, Some("GR-L")),         // Nisyros
        ("85200", None, Some("GR-L")),         // Kalymnos
        ("85700", None, Some("GR-L")),         // Karpathos
        ("68001", None, None),                 // Samothraki or Vyssa: not settled
        ("68002", None, None),                 // Samothraki or not: not settled
        ("82101", None, Some("GR-K")),         // Oinousses
        ("82104", None, Some("GR-K")),         // Psara
        ("85110", None, Some("GR-L")),         // Chalki
        ("85111", None, Some("GR-L")),         // Megisti (Kastellorizo)
        ("85100", None, None),                 // Rhodes
        ("85131", None, None),                 // Rhodes
        ("84100", None, None),                 // Syros, Cyclades
        ("10431", None, None),                 // Athens
        ("68100", None, None),                 // Alexandroupoli
        ("8110", None, None),
    ];
    for (postal, old, new) in cases {
        assert_eq!(
            place("GR", Some(postal), before),
            inside("GR", *old),
            "{postal}"
        );
        assert_eq!(
            place("GR", Some(postal), since),
            inside("GR", *new),
            "{postal}"
        );
        // `territory` answers the latest rules.
        assert_eq!(
            territory(&address("GR", Some(postal), None)),
            inside("GR", *new),
            "{postal}"
        );
    }
    assert_eq!(
        place("GR", Some("GR-81100"), before),
        inside("GR", Some("GR-K"))
    );
    // Mount Athos stays outside.
    assert_eq!(place("GR", Some("63086"), since), outside("GR"));
}

#[test]
fn the_french_overseas_departments_rate_is_for_sellers_established_in_france_only() {
    let fr = seller("FR", true, &["eu_oss"], false);
    let fr_home_only = seller("FR", true, &[], false);
    let fr_no_number = seller("FR", false, &[], false);
    let monaco = seller("MC", true, &[], false);
    let de = seller("DE", true, &["eu_oss"], false);
    let de_micro = seller("DE", true, &["eu_oss"], true);
    let us = seller("US", true, &["non_eu_oss"], false);
    let dom = |sub: &'static str| ("FR", Some(sub), 85_000, StandardRated, Regime::Domestic);
    let not_subject = ("FR", None, 0, NotSubjectToTax, Regime::None);
    let mut reunion_business = business("FR", TaxIdStatus::Valid);
    reunion_business.address = Some(address("RE", None, None));
    let cases: Vec<(&str, &SellerTax, Buyer, Want)> = vec![
        ("FR → Réunion", &fr, consumer("RE"), dom("FR-974")),
        ("FR → 97400", &fr, at("FR", "97400"), dom("FR-974")),
        ("FR → Guadeloupe", &fr, consumer("GP"), dom("FR-971")),
        (
            "FR → Martinique",
            &fr_home_only,
            at("FR", "F-97200"),
            dom("FR-972"),
        ),
        (
            "MC seller as French",
            &monaco,
            consumer("RE"),
            dom("FR-974"),
        ),
        // The supplier owes the DOM tax on a business too (no reverse charge in France).
        (
            "FR → Réunion business",
            &fr,
            reunion_business.clone(),
            dom("FR-974"),
        ),
        (
            "FR without a number",
            &fr_no_number,
            consumer("RE"),
            ("FR", None, 0, NotCollecting, Regime::None),
        ),
        ("DE OSS → Réunion", &de, consumer("RE"), not_subject),
        ("DE OSS → 97100", &de, at("FR", "97100"), not_subject),
        ("DE micro → Réunion", &de_micro, consumer("RE"), not_subject),
        ("DE → Réunion business", &de, reunion_business, not_subject),
        (
            "US non-EU OSS → Martinique",
            &us,
            consumer("MQ"),
            not_subject,
        ),
        // No VAT in French Guiana and Mayotte, and the collectivities are outside.
        ("FR → French Guiana", &fr, consumer("GF"), not_subject),
        ("FR → Mayotte", &fr, at("FR", "97600"), not_subject),
        ("FR → Saint-Martin", &fr, at("FR", "97150"), not_subject),
        ("FR → New Caledonia", &fr, consumer("NC"), not_subject),
        ("US → French Polynesia", &us, consumer("PF"), not_subject),
        // Metropolitan France is unchanged.
        (
            "DE OSS → Paris",
            &de,
            at("FR", "75001"),
            ("FR", None, 200_000, StandardRated, Regime::EuOss),
        ),
    ];
    for (case, s, b, want) in cases {
        expect(s, &b, day(), want, case);
    }
    // Before 2015 the table does not say (a French seller charged its own rate then).
    let (_, sub, _, reason, _) = decided(&fr, &consumer("RE"), d(2014, 12, 31));
    assert_eq!((sub.as_deref(), reason), (Some("FR-974"), NotSupported));
    expect(
        &fr,
        &consumer("RE"),
        d(2015, 1, 1),
        dom("FR-974"),
        "first day",
    );
}

#[test]
fn jungholz_mittelberg_and_the_greek_islands_are_taxed_at_their_rate() {
    let fr = seller("FR", true, &["eu_oss"], false);
    let at_seller = seller("AT", true, &[], false);
    let gr_seller = seller("GR", true, &[], false);
    let us = seller("US", true, &["non_eu_oss"], false);
    let cases: Vec<(&str, &SellerTax, Buyer, NaiveDate, Want)> = vec![
        (
            "FR OSS → Mittelberg",
            &fr,
            at("AT", "6991"),
            day(),
            ("AT", Some("AT-8"), 190_000, StandardRated, Regime::EuOss),
        ),
        (
            "US → Jungholz",
            &us,
            at("AT", "6691"),
            day(),
            ("AT", Some("AT-7"), 190_000, StandardRated, Regime::NonEuOss),
        ),
        (
            "AT → Mittelberg, domestic",
            &at_seller,
            at("AT", "A-6993"),
            day(),
            ("AT", Some("AT-8"), 190_000, StandardRated, Regime::Domestic),
        ),
        (
            "FR OSS → Vienna",
            &fr,
            at("AT", "1010"),
            day(),
            ("AT", None, 200_000, StandardRated, Regime::EuOss),
        ),
        (
            "FR OSS → Lesbos",
            &fr,
            at("GR", "81100"),
            day(),
            ("GR", Some("GR-K"), 170_000, StandardRated, Regime::EuOss),
        ),
        (
            "FR OSS → Kos in 2020",
            &fr,
            at("GR", "85300"),
            d(2020, 3, 1),
            ("GR", Some("GR-L"), 170_000, StandardRated, Regime::EuOss),
        ),
        (
            "GR → Chios, domestic",
            &gr_seller,
            at("GR", "82100"),
            day(),
            ("GR", Some("GR-K"), 170_000, StandardRated, Regime::Domestic),
        ),
        (
            "FR OSS → Lemnos before the extension",
            &fr,
            at("GR", "81400"),
            d(2025, 12, 31),
            ("GR", None, 240_000, StandardRated, Regime::EuOss),
        ),
        (
            "FR OSS → Lemnos after it",
            &fr,
            at("GR", "81400"),
            d(2026, 1, 1),
            ("GR", Some("GR-K"), 170_000, StandardRated, Regime::EuOss),
        ),
        (
            "FR OSS → Rhodes",
            &fr,
            at("GR", "85100"),
            day(),
            ("GR", None, 240_000, StandardRated, Regime::EuOss),
        ),
    ];
    for (case, s, b, date, want) in cases {
        expect(s, &b, date, want, case);
    }
    // A business on Lesbos or in Mittelberg with a usable number: reverse charge.
    for (country, postal) in [("GR", "81100"), ("AT", "6991")] {
        let mut b = business(country, TaxIdStatus::Valid);
        b.address = Some(address(country, Some(postal), None));
        expect(
            &fr,
            &b,
            day(),
            (country, None, 0, ReverseCharge, Regime::None),
            postal,
        );
    }
    // Mittelberg before the UStG 1994: the table cannot say.
    let (_, sub, _, reason, _) = decided(&fr, &at("AT", "6991"), d(1994, 12, 31));
    assert_eq!((sub.as_deref(), reason), (Some("AT-8"), NotSupported));
}
