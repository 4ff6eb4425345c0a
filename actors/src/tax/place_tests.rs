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
