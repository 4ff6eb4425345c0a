//! Table tests of the built-in quote (`builtin.rs`), through `quote` only: plan §2(d)'s
//! cases (amounts, rates, reasons and schemes per buyer and seller), inclusive and
//! exclusive prices, credits, rounding at x.5, rate changes by tax point, territories, and
//! the shape of the breakdown (one line, zero lines that say why, none without an address).

use chrono::NaiveDate;

use super::*;
use crate::domain::customer::{validate_tax_id, Address};
use crate::domain::tax_settings::Registration;
use crate::tax::{Buyer, Regime, SellerTax, TaxBehavior, TaxIdStatus};
use TaxabilityReason::*;

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

fn seller(country: &str, regs: &[&str], micro: bool) -> SellerTax {
    SellerTax {
        country: Some(country.to_string()),
        has_tax_id: true,
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

fn de_business(status: TaxIdStatus) -> Buyer {
    let id = validate_tax_id("DE136695976", "DE").expect("a valid German VAT number");
    Buyer {
        address: Some(address("DE", None, None)),
        is_business: true,
        tax_id: Some((id, status)),
    }
}

fn request(
    amount: i64,
    behavior: TaxBehavior,
    seller: &SellerTax,
    buyer: Buyer,
    date: NaiveDate,
) -> TaxRequest {
    let mut r = TaxRequest::new(amount, "eur", date);
    r.behavior = behavior;
    r.seller = seller.clone();
    r.buyer = buyer;
    r
}

/// The quote of an exclusive `amount` on 2026-03-01.
fn ex(amount: i64, s: &SellerTax, b: Buyer) -> TaxQuote {
    quote(request(amount, TaxBehavior::Exclusive, s, b, d(2026, 3, 1)))
}

/// What a rule case expects: (country, subdivision, name, ppm, tax, reason, regime).
type Want<'a> = (
    &'a str,
    Option<&'a str>,
    &'a str,
    u32,
    i64,
    TaxabilityReason,
    Regime,
);

/// A line as a tuple: (country, subdivision, name, ppm, taxable, tax, reason, regime).
type Line = (
    String,
    Option<String>,
    String,
    u32,
    i64,
    i64,
    TaxabilityReason,
    Regime,
);

/// The quote's single line: (country, subdivision, name, ppm, taxable, tax, reason, regime).
fn line(q: &TaxQuote) -> Line {
    assert_eq!(q.breakdown.len(), 1, "one line: {q:?}");
    assert_eq!(
        q.tax_amount, q.breakdown[0].amount,
        "the tax is the lines' sum"
    );
    assert_eq!(q.provider_ref, None);
    let l = q.breakdown[0].clone();
    (
        l.country,
        l.subdivision,
        l.name,
        l.rate_ppm,
        l.taxable_amount,
        l.amount,
        l.reason,
        l.regime,
    )
}

fn eu_oss() -> SellerTax {
    seller("FR", &["eu_oss"], false)
}

#[test]
fn the_plans_rule_cases_quote_their_rate_and_reason() {
    let fr = eu_oss();
    let everywhere = seller("US", &["non_eu_oss", "gb", "no", "ch", "au", "ca"], false);
    let micro = seller("FR", &["eu_oss"], true);
    let gb = seller("FR", &["eu_oss", "gb"], false);
    let none = seller("FR", &[], false);
    let ca = |state: &str| Buyer::at(Some(address("CA", None, Some(state))));
    #[rustfmt::skip]
    let cases: Vec<(&str, &SellerTax, Buyer, Want)> = vec![
        ("FR OSS → DE consumer", &fr, consumer("DE"), ("DE", None, "VAT", 190_000, 190, StandardRated, Regime::EuOss)),
        ("FR OSS → FR consumer", &fr, consumer("FR"), ("FR", None, "VAT", 200_000, 200, StandardRated, Regime::Domestic)),
        ("micro → DE consumer at FR 20 %", &micro, consumer("DE"), ("FR", None, "VAT", 200_000, 200, StandardRated, Regime::Domestic)),
        ("micro → the buyer's own state", &micro, consumer("FR"), ("FR", None, "VAT", 200_000, 200, StandardRated, Regime::Domestic)),
        ("FR → DE business, valid", &fr, de_business(TaxIdStatus::Valid), ("DE", None, "VAT", 0, 0, ReverseCharge, Regime::None)),
        ("FR → DE business, invalid", &fr, de_business(TaxIdStatus::Invalid), ("DE", None, "VAT", 190_000, 190, StandardRated, Regime::EuOss)),
        ("UK consumer with gb", &gb, consumer("GB"), ("GB", None, "VAT", 200_000, 200, StandardRated, Regime::Gb)),
        ("UK consumer without gb", &fr, consumer("GB"), ("GB", None, "VAT", 0, 0, NotCollecting, Regime::None)),
        ("XI as GB", &gb, consumer("XI"), ("GB", None, "VAT", 200_000, 200, StandardRated, Regime::Gb)),
        ("NO with no", &everywhere, consumer("NO"), ("NO", None, "VAT", 250_000, 250, StandardRated, Regime::No)),
        ("AU with au", &everywhere, consumer("AU"), ("AU", None, "GST", 100_000, 100, StandardRated, Regime::Au)),
        ("CH with ch", &everywhere, consumer("CH"), ("CH", None, "VAT", 81_000, 81, StandardRated, Regime::Ch)),
        ("CA-ON HST", &everywhere, ca("CA-ON"), ("CA", Some("CA-ON"), "HST", 130_000, 130, StandardRated, Regime::Ca)),
        ("CA-QC GST only", &everywhere, ca("CA-QC"), ("CA", None, "GST", 50_000, 50, StandardRated, Regime::Ca)),
        ("US", &everywhere, consumer("US"), ("US", None, "Sales tax", 0, 0, NotCollecting, Regime::None)),
        ("non-EU seller → DE consumer", &everywhere, consumer("DE"), ("DE", None, "VAT", 190_000, 190, StandardRated, Regime::NonEuOss)),
        ("no registrations → DE", &none, consumer("DE"), ("DE", None, "VAT", 0, 0, NotCollecting, Regime::None)),
        ("no registrations → NO", &none, consumer("NO"), ("NO", None, "VAT", 0, 0, NotCollecting, Regime::None)),
        ("no registrations → AU", &none, consumer("AU"), ("AU", None, "GST", 0, 0, NotCollecting, Regime::None)),
        ("Monaco as France", &fr, consumer("MC"), ("FR", None, "VAT", 200_000, 200, StandardRated, Regime::Domestic)),
        ("Åland", &fr, consumer("AX"), ("AX", None, "VAT", 0, 0, NotSubjectToTax, Regime::None)),
        ("Canary Islands", &fr, Buyer::at(Some(address("ES", Some("38001"), None))), ("ES", None, "VAT", 0, 0, NotSubjectToTax, Regime::None)),
        ("Madeira", &fr, Buyer::at(Some(address("PT", Some("9000-018"), None))), ("PT", Some("PT-30"), "VAT", 220_000, 220, StandardRated, Regime::EuOss)),
    ];
    for (case, s, b, (country, sub, name, ppm, tax, reason, regime)) in cases {
        let q = ex(1000, s, b);
        assert_eq!(
            line(&q),
            (
                country.into(),
                sub.map(Into::into),
                name.into(),
                ppm,
                1000,
                tax,
                reason,
                regime
            ),
            "{case}"
        );
        assert_eq!(
            (q.net_amount(), q.total_amount()),
            (1000, 1000 + tax),
            "{case}"
        );
        assert_eq!(q.reverse_charge(), reason == ReverseCharge, "{case}");
    }
}

#[test]
fn inclusive_prices_hold_their_tax_and_exclusive_prices_add_it() {
    let fr = eu_oss();
    let q = quote(request(
        1200,
        TaxBehavior::Inclusive,
        &fr,
        consumer("DE"),
        d(2026, 3, 1),
    ));
    assert_eq!(line(&q).4, 1008, "the line's taxable amount is the net");
    assert_eq!(
        (
            q.tax_amount,
            q.net_amount(),
            q.total_amount(),
            q.added_tax()
        ),
        (192, 1008, 1200, 0)
    );
    let q = ex(1000, &fr, consumer("DE"));
    assert_eq!(
        (
            q.tax_amount,
            q.net_amount(),
            q.total_amount(),
            q.added_tax()
        ),
        (190, 1000, 1190, 190)
    );
    // Reverse charge and not collecting on an inclusive price: the same gross, no tax.
    for buyer in [
        de_business(TaxIdStatus::Valid),
        consumer("GB"),
        consumer("US"),
    ] {
        let q = quote(request(
            1200,
            TaxBehavior::Inclusive,
            &fr,
            buyer.clone(),
            d(2026, 3, 1),
        ));
        let (_, _, _, ppm, taxable, tax, _, _) = line(&q);
        assert_eq!((ppm, taxable, tax), (0, 1200, 0), "{buyer:?}");
        assert_eq!(
            (q.net_amount(), q.total_amount()),
            (1200, 1200),
            "{buyer:?}"
        );
    }
}

#[test]
fn half_a_cent_rounds_away_from_zero_and_a_credit_mirrors_its_charge() {
    let fr = eu_oss();
    for (amount, behavior, tax, net) in [
        (250, TaxBehavior::Exclusive, 48, 250), // 47.5 → 48
        (-250, TaxBehavior::Exclusive, -48, -250),
        (-1200, TaxBehavior::Inclusive, -192, -1008),
        (-1000, TaxBehavior::Exclusive, -190, -1000),
    ] {
        let q = quote(request(
            amount,
            behavior,
            &fr,
            consumer("DE"),
            d(2026, 3, 1),
        ));
        let (_, _, _, ppm, taxable, got, reason, _) = line(&q);
        assert_eq!(
            (ppm, taxable, got, reason),
            (190_000, net, tax, StandardRated),
            "{amount}"
        );
        assert_eq!(q.net_amount(), net);
    }
}

#[test]
fn many_small_lines_quoted_as_one_group_spread_back_exactly() {
    let q = ex(100, &eu_oss(), consumer("DE"));
    assert_eq!(q.tax_amount, 19, "on the total of 100 × 0.01");
    let per_line = rounding::spread(q.tax_amount, &[1; 100]);
    assert_eq!(per_line.iter().filter(|&&t| t == 1).count(), 19);
    assert_eq!(per_line.iter().sum::<i64>(), 19);
    let alone = ex(1, &eu_oss(), consumer("DE"));
    assert_eq!(alone.tax_amount, 0, "one line of 0.01 alone has no tax");
}

#[test]
fn the_tax_point_picks_the_rate_in_force() {
    let fr = eu_oss();
    for (country, date, tax) in [
        ("FI", d(2024, 8, 31), 240),
        ("FI", d(2024, 9, 1), 255),
        ("EE", d(2025, 6, 30), 220),
        ("EE", d(2025, 7, 1), 240),
        ("SK", d(2024, 12, 31), 200),
        ("SK", d(2025, 1, 1), 230),
    ] {
        let q = quote(request(
            1000,
            TaxBehavior::Exclusive,
            &fr,
            consumer(country),
            date,
        ));
        assert_eq!(q.tax_amount, tax, "{country} on {date}");
    }
    // Before Canada's simplified regime the table has no rate: a zero line that says so.
    let ca = seller("US", &["ca"], false);
    let on = Buyer::at(Some(address("CA", None, Some("CA-ON"))));
    let q = quote(request(
        1000,
        TaxBehavior::Exclusive,
        &ca,
        on,
        d(2021, 6, 30),
    ));
    assert_eq!((line(&q).5, line(&q).6), (0, NotSupported));
}

#[test]
fn no_address_or_no_amount_gives_no_line_at_all() {
    let fr = eu_oss();
    let q = ex(1000, &fr, Buyer::default());
    assert!(q.breakdown.is_empty());
    assert_eq!((q.tax_amount, q.total_amount()), (0, 1000));
    let q = ex(0, &fr, consumer("DE"));
    assert!(q.breakdown.is_empty());
    assert_eq!(q.tax_amount, 0);
    // The quote answers its request.
    let r = request(
        1000,
        TaxBehavior::Exclusive,
        &fr,
        consumer("DE"),
        d(2026, 3, 1),
    );
    assert!(quote(r.clone()).answers(&r));
}

#[test]
fn the_territorial_rules_quote_through_the_whole_quote() {
    let fr = eu_oss();
    let de = seller("DE", &["eu_oss"], false);
    let reunion = || Buyer::at(Some(address("RE", Some("97400"), None)));
    let place = |c: &str, p: &str| Buyer::at(Some(address(c, Some(p), None)));
    #[rustfmt::skip]
    let cases: Vec<(&str, &SellerTax, Buyer, Want)> = vec![
        ("FR seller → a consumer in Réunion", &fr, reunion(), ("FR", Some("FR-974"), "VAT", 85_000, 85, StandardRated, Regime::Domestic)),
        ("DE OSS seller → a consumer in Réunion", &de, reunion(), ("FR", None, "VAT", 0, 0, NotSubjectToTax, Regime::None)),
        ("FR seller → a consumer in French Guiana", &fr, place("FR", "97300"), ("FR", None, "VAT", 0, 0, NotSubjectToTax, Regime::None)),
        ("FR OSS → a consumer in Mittelberg", &fr, place("AT", "6991"), ("AT", Some("AT-8"), "VAT", 190_000, 190, StandardRated, Regime::EuOss)),
        ("FR OSS → a consumer in Jungholz", &fr, place("AT", "6691"), ("AT", Some("AT-7"), "VAT", 190_000, 190, StandardRated, Regime::EuOss)),
        ("FR OSS → a consumer on Lesbos", &fr, place("GR", "81100"), ("GR", Some("GR-K"), "VAT", 170_000, 170, StandardRated, Regime::EuOss)),
        ("FR OSS → a consumer in Athens", &fr, place("GR", "10431"), ("GR", None, "VAT", 240_000, 240, StandardRated, Regime::EuOss)),
    ];
    for (case, s, b, (country, sub, name, ppm, tax, reason, regime)) in cases {
        let q = ex(1000, s, b);
        assert_eq!(
            line(&q),
            (
                country.into(),
                sub.map(Into::into),
                name.into(),
                ppm,
                1000,
                tax,
                reason,
                regime
            ),
            "{case}"
        );
        assert_eq!(q.total_amount(), 1000 + tax, "{case}");
    }
    // An inclusive price on Lesbos holds 17 %: 1170 is 1000 and 170.
    let q = quote(request(
        1170,
        TaxBehavior::Inclusive,
        &fr,
        place("GR", "81100"),
        d(2026, 3, 1),
    ));
    assert_eq!((q.tax_amount, q.net_amount()), (170, 1000));
    // The tax point decides: Lemnos has the lower rate from 2026-01-01 only.
    let lemnos = |date| {
        let q = quote(request(
            1000,
            TaxBehavior::Exclusive,
            &fr,
            place("GR", "81400"),
            date,
        ));
        (line(&q).1, q.tax_amount)
    };
    assert_eq!(lemnos(d(2025, 12, 31)), (None, 240));
    assert_eq!(lemnos(d(2026, 1, 1)), (Some("GR-K".to_string()), 170));
}
