//! Table tests of the rate table (`rates.rs`): its shape (sorted, no duplicate key, every
//! EU member state), every row pinned against a second transcription of the plan's table
//! (in percent, as published), every row applying on its first day and not the day before,
//! the changes issue 48 names, the subdivision fallback and the Portuguese postal codes.

use super::*;

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

/// "25.5" → 255_000, "9.975" → 99_750: the percent as published, converted on its digits
/// (no floats), so a zero too many or too few in the table shows.
fn ppm(percent: &str) -> u32 {
    let (int, frac) = percent.split_once('.').unwrap_or((percent, ""));
    assert!(frac.len() <= 4, "{percent}: more than 4 decimals");
    let frac = format!("{frac:0<4}");
    int.parse::<u32>().unwrap() * 10_000 + frac.parse::<u32>().unwrap()
}

/// The plan's §R with the research pass's corrections, as written there (percent, ISO date).
const EXPECTED: &[(&str, &str, &str, &str, &str)] = &[
    ("AT", "", "20", "1984-01-01", "VAT"),
    // The territorial rows of issue 48's second pass (Jungholz, Mittelberg, the French
    // overseas departments, the Greek islands): their sources are beside them in rates.rs.
    ("AT", "AT-7", "19", "1995-01-01", "VAT"),
    ("AT", "AT-8", "19", "1995-01-01", "VAT"),
    ("AU", "", "10", "2000-07-01", "GST"),
    ("BE", "", "21", "1996-01-01", "VAT"),
    ("BG", "", "20", "1999-01-01", "VAT"),
    ("CA", "", "5", "2021-07-01", "GST"),
    ("CA", "CA-NB", "15", "2021-07-01", "HST"),
    ("CA", "CA-NL", "15", "2021-07-01", "HST"),
    ("CA", "CA-NS", "15", "2021-07-01", "HST"),
    ("CA", "CA-NS", "14", "2025-04-01", "HST"),
    ("CA", "CA-ON", "13", "2021-07-01", "HST"),
    ("CA", "CA-PE", "15", "2021-07-01", "HST"),
    ("CA", "CA-QC", "9.975", "2021-07-01", "QST"),
    ("CH", "", "8", "2011-01-01", "VAT"),
    ("CH", "", "7.7", "2018-01-01", "VAT"),
    ("CH", "", "8.1", "2024-01-01", "VAT"),
    ("CY", "", "19", "2014-01-13", "VAT"),
    ("CZ", "", "21", "2013-01-01", "VAT"),
    ("DE", "", "19", "2007-01-01", "VAT"),
    ("DE", "", "16", "2020-07-01", "VAT"),
    ("DE", "", "19", "2021-01-01", "VAT"),
    ("DK", "", "25", "1992-01-01", "VAT"),
    ("EE", "", "20", "2009-07-01", "VAT"),
    ("EE", "", "22", "2024-01-01", "VAT"),
    ("EE", "", "24", "2025-07-01", "VAT"),
    ("ES", "", "21", "2012-09-01", "VAT"),
    ("FI", "", "24", "2013-01-01", "VAT"),
    ("FI", "", "25.5", "2024-09-01", "VAT"),
    ("FR", "", "20", "2014-01-01", "VAT"),
    ("FR", "FR-971", "8.5", "2015-01-01", "VAT"),
    ("FR", "FR-972", "8.5", "2015-01-01", "VAT"),
    ("FR", "FR-974", "8.5", "2015-01-01", "VAT"),
    ("GB", "", "20", "2011-01-04", "VAT"),
    ("GR", "", "24", "2016-06-01", "VAT"),
    ("GR", "GR-K", "17", "2016-06-01", "VAT"),
    ("GR", "GR-L", "17", "2016-06-01", "VAT"),
    ("HR", "", "25", "2012-03-01", "VAT"),
    ("HU", "", "27", "2012-01-01", "VAT"),
    ("IE", "", "23", "2012-01-01", "VAT"),
    ("IE", "", "21", "2020-09-01", "VAT"),
    ("IE", "", "23", "2021-03-01", "VAT"),
    ("IT", "", "22", "2013-10-01", "VAT"),
    ("LT", "", "21", "2009-09-01", "VAT"),
    ("LU", "", "17", "2015-01-01", "VAT"),
    ("LU", "", "16", "2023-01-01", "VAT"),
    ("LU", "", "17", "2024-01-01", "VAT"),
    ("LV", "", "21", "2012-07-01", "VAT"),
    ("MT", "", "18", "2004-01-01", "VAT"),
    ("NL", "", "21", "2012-10-01", "VAT"),
    ("NO", "", "25", "2005-01-01", "VAT"),
    ("PL", "", "23", "2011-01-01", "VAT"),
    ("PT", "", "23", "2011-01-01", "VAT"),
    ("PT", "PT-20", "16", "2021-07-01", "VAT"),
    ("PT", "PT-30", "22", "2012-04-01", "VAT"),
    ("RO", "", "19", "2017-01-01", "VAT"),
    ("RO", "", "21", "2025-08-01", "VAT"),
    ("SE", "", "25", "1990-07-01", "VAT"),
    ("SI", "", "22", "2013-07-01", "VAT"),
    ("SK", "", "20", "2011-01-01", "VAT"),
    ("SK", "", "23", "2025-01-01", "VAT"),
];

#[test]
fn the_table_is_the_plans_table_row_for_row() {
    let expected: Vec<Row> = EXPECTED
        .iter()
        .map(|&(country, subdivision, percent, from, name)| Row {
            country,
            subdivision,
            ppm: ppm(percent),
            from: from.parse().unwrap(),
            name,
        })
        .collect();
    assert_eq!(RATES, expected.as_slice());
}

#[test]
fn percent_converts_to_parts_per_million() {
    assert_eq!(
        [
            ppm("25.5"),
            ppm("9.975"),
            ppm("8.1"),
            ppm("5"),
            ppm("0.0001")
        ],
        [255_000, 99_750, 81_000, 50_000, 1]
    );
}

#[test]
fn the_table_is_sorted_by_country_subdivision_and_date_without_a_duplicate_key() {
    for pair in RATES.windows(2) {
        let key = |r: &Row| (r.country, r.subdivision, r.from);
        assert!(
            key(&pair[0]) < key(&pair[1]),
            "{:?} then {:?}",
            pair[0],
            pair[1]
        );
    }
}

#[test]
fn codes_are_upper_case_iso_and_subdivisions_belong_to_their_country() {
    for r in RATES {
        assert!(
            r.country.len() == 2 && r.country.bytes().all(|b| b.is_ascii_uppercase()),
            "{r:?}"
        );
        assert!(
            r.subdivision.is_empty() || r.subdivision.starts_with(&format!("{}-", r.country)),
            "{r:?}"
        );
        assert!(["VAT", "GST", "HST", "QST"].contains(&r.name), "{r:?}");
        assert!(r.ppm > 0 && r.ppm < 1_000_000, "{r:?}");
    }
}

#[test]
fn every_eu_member_state_has_a_row_and_the_list_is_sorted() {
    assert!(EU_MEMBER_STATES.windows(2).all(|p| p[0] < p[1]));
    for state in EU_MEMBER_STATES {
        assert!(
            RATES
                .iter()
                .any(|r| r.country == state && r.subdivision.is_empty()),
            "{state} has no row"
        );
    }
    assert!(!EU_MEMBER_STATES.contains(&"GB") && !EU_MEMBER_STATES.contains(&"EL"));
}

#[test]
fn every_row_applies_on_its_first_day_and_the_previous_one_the_day_before() {
    for (i, r) in RATES.iter().enumerate() {
        let sub = (!r.subdivision.is_empty()).then_some(r.subdivision);
        let as_rate = |r: &Row| Rate {
            ppm: r.ppm,
            from: r.from,
            name: r.name,
        };
        assert_eq!(rate_on(r.country, sub, r.from), Some(as_rate(r)), "{r:?}");
        let previous = i
            .checked_sub(1)
            .map(|p| &RATES[p])
            .filter(|p| p.country == r.country && p.subdivision == r.subdivision);
        let day_before = r.from.pred_opt().unwrap();
        assert_eq!(
            rate_on(r.country, sub, day_before),
            previous.map(as_rate),
            "{r:?}"
        );
    }
}

#[test]
fn the_changes_the_issue_names_apply_on_their_dates() {
    let cases: &[(&str, Option<&str>, NaiveDate, u32)] = &[
        ("FI", None, d(2024, 8, 31), 240_000),
        ("FI", None, d(2024, 9, 1), 255_000),
        ("SK", None, d(2024, 12, 31), 200_000),
        ("SK", None, d(2025, 1, 1), 230_000),
        ("EE", None, d(2025, 6, 30), 220_000),
        ("EE", None, d(2025, 7, 1), 240_000),
        ("RO", None, d(2025, 7, 31), 190_000),
        ("RO", None, d(2025, 8, 1), 210_000),
        ("DE", None, d(2020, 6, 30), 190_000),
        ("DE", None, d(2020, 7, 1), 160_000),
        ("DE", None, d(2020, 11, 15), 160_000),
        ("DE", None, d(2020, 12, 31), 160_000),
        ("DE", None, d(2021, 1, 1), 190_000),
        ("LU", None, d(2023, 6, 1), 160_000),
        ("LU", None, d(2024, 6, 1), 170_000),
        ("IE", None, d(2021, 2, 28), 210_000),
        ("CH", None, d(2023, 12, 31), 77_000),
        ("CH", None, d(2024, 1, 1), 81_000),
        ("CA", Some("CA-NS"), d(2025, 3, 31), 150_000),
        ("CA", Some("CA-NS"), d(2025, 4, 1), 140_000),
        ("CA", Some("CA-QC"), d(2026, 1, 1), 99_750),
        ("PT", Some("PT-30"), d(2026, 1, 1), 220_000),
        ("PT", Some("PT-20"), d(2026, 1, 1), 160_000),
        ("PT", None, d(2026, 1, 1), 230_000),
    ];
    for &(country, sub, date, expected) in cases {
        assert_eq!(
            rate_on(country, sub, date).map(|r| r.ppm),
            Some(expected),
            "{country} {sub:?} {date}"
        );
    }
}

#[test]
fn the_territorial_rates_apply_from_their_first_day_and_not_before() {
    let cases: &[(&str, &str, NaiveDate, Option<u32>)] = &[
        // Jungholz and Mittelberg: 19 % since the UStG 1994, still in 2026.
        ("AT", "AT-7", d(1994, 12, 31), None),
        ("AT", "AT-7", d(1995, 1, 1), Some(190_000)),
        ("AT", "AT-7", d(2026, 3, 1), Some(190_000)),
        ("AT", "AT-8", d(1994, 12, 31), None),
        ("AT", "AT-8", d(1995, 1, 1), Some(190_000)),
        ("AT", "AT-8", d(2026, 3, 1), Some(190_000)),
        // Guadeloupe, Martinique, Réunion: 8.5 % from the 2015 place-of-supply change.
        ("FR", "FR-971", d(2014, 12, 31), None),
        ("FR", "FR-971", d(2015, 1, 1), Some(85_000)),
        ("FR", "FR-972", d(2015, 1, 1), Some(85_000)),
        ("FR", "FR-974", d(2014, 12, 31), None),
        ("FR", "FR-974", d(2026, 3, 1), Some(85_000)),
        // French Guiana and Mayotte have no VAT: no rows, France's rate if ever asked (the
        // rules never ask: they are outside the VAT area).
        ("FR", "FR-973", d(2026, 3, 1), Some(200_000)),
        // The Greek islands: 17 % with Greece's 24 %; the rest of Greece at 24 %.
        ("GR", "GR-K", d(2016, 5, 31), None),
        ("GR", "GR-K", d(2016, 6, 1), Some(170_000)),
        ("GR", "GR-K", d(2026, 3, 1), Some(170_000)),
        ("GR", "GR-L", d(2016, 6, 1), Some(170_000)),
        ("GR", "GR-L", d(2025, 12, 31), Some(170_000)),
        ("GR", "GR-A", d(2026, 1, 1), Some(240_000)),
        ("GR", "GR-I", d(2026, 3, 1), Some(240_000)),
    ];
    for &(country, sub, date, expected) in cases {
        assert_eq!(
            rate_on(country, Some(sub), date).map(|r| r.ppm),
            expected,
            "{country} {sub} {date}"
        );
    }
    // The countries' own rows are untouched.
    assert_eq!(
        rate_on("AT", None, d(2026, 3, 1)).map(|r| r.ppm),
        Some(200_000)
    );
    assert_eq!(
        rate_on("GR", None, d(2026, 3, 1)).map(|r| r.ppm),
        Some(240_000)
    );
    assert_eq!(
        rate_on("FR", None, d(2026, 3, 1)).map(|r| r.ppm),
        Some(200_000)
    );
}

#[test]
fn a_subdivision_without_rows_of_its_own_falls_back_to_its_country() {
    let day = d(2025, 9, 1);
    let gst = rate_on("CA", None, day);
    assert_eq!(gst.map(|r| (r.ppm, r.name)), Some((50_000, "GST")));
    for province in ["CA-AB", "CA-BC", "CA-MB", "CA-SK", "CA-YT", ""] {
        assert_eq!(rate_on("CA", Some(province), day), gst, "{province}");
    }
    assert_eq!(
        rate_on("CA", Some("CA-ON"), day).map(|r| (r.ppm, r.name)),
        Some((130_000, "HST"))
    );
    assert_eq!(
        rate_on("PT", Some("PT-11"), day).map(|r| r.ppm),
        Some(230_000)
    );
    assert_eq!(
        rate_on("DE", Some("DE-BY"), day).map(|r| r.ppm),
        Some(190_000)
    );
}

#[test]
fn a_subdivision_with_rows_does_not_fall_back_before_its_first_row() {
    // The Azores' 18 % before 2021-07-01 is not in the table: no answer, not the mainland's.
    assert_eq!(rate_on("PT", Some("PT-20"), d(2021, 6, 30)), None);
    assert_eq!(
        rate_on("PT", None, d(2021, 6, 30)).map(|r| r.ppm),
        Some(230_000)
    );
}

#[test]
fn an_unknown_country_or_a_date_before_the_first_row_has_no_rate() {
    let day = d(2025, 9, 1);
    for country in ["US", "ZZ", "XI", "EL", "", "FIN"] {
        assert_eq!(rate_on(country, None, day), None, "{country}");
    }
    assert_eq!(rate_on("US", Some("US-CA"), day), None);
    assert_eq!(rate_on("FI", None, d(2012, 12, 31)), None);
    assert_eq!(rate_on("CA", None, d(2021, 6, 30)), None);
    assert_eq!(rate_on("CA", Some("CA-ON"), d(2021, 6, 30)), None);
}

#[test]
fn codes_are_matched_without_regard_to_case() {
    let day = d(2025, 9, 1);
    assert_eq!(rate_on("fi", None, day), rate_on("FI", None, day));
    assert_eq!(
        rate_on("ca", Some("ca-on"), day).map(|r| r.ppm),
        Some(130_000)
    );
}

#[test]
fn portuguese_postal_codes_map_to_their_autonomous_region() {
    let cases: &[(&str, Option<&str>)] = &[
        ("8999", None),
        ("8999-999", None),
        ("9000", Some("PT-30")),
        ("9000-001", Some("PT-30")),
        ("9050-123", Some("PT-30")),
        ("9050123", Some("PT-30")),
        ("9050 123", Some("PT-30")),
        (" 9050-123 ", Some("PT-30")),
        ("9400-001", Some("PT-30")),
        ("9499", Some("PT-30")),
        ("9500", Some("PT-20")),
        ("9500-000", Some("PT-20")),
        ("9999", Some("PT-20")),
        ("9999-999", Some("PT-20")),
        ("1000-001", None),
        ("0999", None),
        ("", None),
        ("905", None),
        ("9050-12", None),
        ("9050-1234", None),
        ("9050--123", None),
        ("90a0-123", None),
        ("+950", None),
        ("9050-abc", None),
        ("95000", None),
        ("9ä00", None),
    ];
    for &(code, region) in cases {
        assert_eq!(portugal_region(code), region, "{code:?}");
    }
}
