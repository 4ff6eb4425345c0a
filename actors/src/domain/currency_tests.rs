use super::*;

#[test]
fn parse_accepts_the_presentment_lowercase_codes_only() {
    assert_eq!(Currency::parse("usd"), Ok(Currency::USD));
    assert_eq!(Currency::parse("eur"), Ok(Currency::EUR));
    assert_eq!(Currency::parse("jpy"), Ok(Currency::JPY));
    let xau = Currency::from_code("xau").unwrap();
    assert_eq!(Currency::parse("xau"), Err(CurrencyError::NotOffered(xau)));
    assert_eq!(Currency::parse("USD"), Err(CurrencyError::Malformed));
    assert_eq!(Currency::parse("us"), Err(CurrencyError::Malformed));
    assert_eq!(Currency::parse("usdx"), Err(CurrencyError::Malformed));
    assert_eq!(Currency::parse("u$d"), Err(CurrencyError::Malformed));
    assert_eq!(Currency::from_code("jpy"), Some(Currency::JPY));
    assert_eq!(Currency::default(), Currency::DEFAULT);
    let expected = CurrencyError::expected();
    assert!(expected.starts_with("'aed', 'all', "), "{expected}");
    assert!(expected.ends_with(", 'zar' or 'zmw'"), "{expected}");
    assert_eq!(expected.matches('\'').count(), 2 * 126);
}

#[test]
fn minor_digits_follow_stripes_zero_decimal_list() {
    assert_eq!(Currency::USD.minor_digits(), 2);
    assert_eq!(Currency::EUR.minor_digits(), 2);
    assert_eq!(Currency::JPY.minor_digits(), 0);
    assert_eq!(Currency::from_code("krw").unwrap().minor_digits(), 0);
}

#[test]
fn amounts_typed_in_major_units_use_the_minor_digits() {
    assert_eq!(Currency::USD.to_minor("12"), Some(1200));
    assert_eq!(Currency::USD.to_minor("12.5"), Some(1250));
    assert_eq!(Currency::USD.to_minor("12.05"), Some(1205));
    assert_eq!(Currency::USD.to_minor("0.05"), Some(5));
    for bad in [
        "",
        ".5",
        "-1",
        "1.234",
        "1e3",
        "12,50",
        " 1",
        "99999999999999999999",
    ] {
        assert_eq!(Currency::USD.to_minor(bad), None, "{bad}");
    }
    // A zero-decimal currency: "1200" yen is 1200, not 120000.
    assert_eq!(Currency::JPY.to_minor("1200"), Some(1200));
    assert_eq!(Currency::JPY.to_minor("1200.5"), None);
    assert_eq!(Currency::JPY.to_minor("1200."), None);
    assert_eq!(Currency::USD.major(4242), "42.42");
    assert_eq!(Currency::USD.major(-5), "-0.05");
    assert_eq!(Currency::JPY.major(1500), "1500");
}

#[test]
fn display_is_the_code() {
    assert_eq!(Currency::USD.to_string(), "usd");
    assert_eq!(format!("{:?}", Currency::JPY), "Currency(jpy)");
    assert_eq!(Currency::USD.symbol(), "$");
    assert_eq!(Currency::from_code("chf").unwrap().symbol(), "");
    assert!(Currency::USD == "usd");
}

#[test]
fn stored_as_the_string_it_replaces() {
    // A record field that was a `String` keeps its bytes as a `Currency`.
    let old = tollgate_storage::codec::encode(&"usd".to_string()).unwrap();
    let new = tollgate_storage::codec::encode(&Currency::USD).unwrap();
    assert_eq!(old, new);
    let decoded: Currency = tollgate_storage::codec::decode("test", 1, &old).unwrap();
    assert_eq!(decoded, Currency::USD);
    assert_eq!(serde_json::to_string(&Currency::JPY).unwrap(), "\"jpy\"");
    let parsed: Currency = serde_json::from_str("\"eur\"").unwrap();
    assert_eq!(parsed, Currency::EUR);
    assert!(serde_json::from_str::<Currency>("\"euro\"").is_err());
}

#[test]
fn polars_tables_are_sorted_and_complete() {
    fn sorted<T>(keys: impl Iterator<Item = T>) -> bool
    where
        T: PartialOrd,
    {
        let keys: Vec<T> = keys.collect();
        keys.windows(2).all(|w| w[0] < w[1])
    }
    assert_eq!(tables::PRESENTMENT.len(), 126);
    assert!(sorted(tables::PRESENTMENT.iter()));
    assert_eq!(tables::ZERO_DECIMAL.len(), 15);
    assert!(sorted(tables::ZERO_DECIMAL.iter()));
    assert!(sorted(tables::MINIMUM.iter().map(|r| r.0)));
    assert!(sorted(tables::MAXIMUM.iter().map(|r| r.0)));
    assert!(sorted(tables::BY_COUNTRY.iter().map(|r| r.0)));
    // Every code the tables name is a presentment currency.
    let known = |c: &str| tables::PRESENTMENT.binary_search(&c).is_ok();
    assert!(tables::ZERO_DECIMAL.iter().all(|c| known(c)));
    assert!(tables::MINIMUM.iter().all(|(c, _)| known(c)));
    assert!(tables::MAXIMUM.iter().all(|(c, _)| known(c)));
    assert!(tables::BY_COUNTRY.iter().all(|(_, c)| known(c)));
    assert_eq!(Currency::presentment().count(), 126);
}

#[test]
fn presentment_currencies_and_their_minor_units_are_polars() {
    for code in ["usd", "eur", "jpy", "gbp", "chf", "ugx", "xcg", "zmw"] {
        assert!(
            Currency::from_code(code).unwrap().is_presentment(),
            "{code}"
        );
    }
    // Codes Polar does not sell in.
    for code in ["btc", "rub", "byn", "zwl", "xxx"] {
        assert!(
            !Currency::from_code(code).unwrap().is_presentment(),
            "{code}"
        );
    }
    // Polar's 15 zero-decimal currencies; UGX, HUF, ISK and TWD are two-decimal (Stripe
    // wants UGX in two decimals).
    for code in [
        "bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "vnd", "vuv", "xaf",
        "xof", "xpf",
    ] {
        assert_eq!(
            Currency::from_code(code).unwrap().minor_digits(),
            0,
            "{code}"
        );
    }
    for code in ["ugx", "huf", "isk", "twd", "usd"] {
        assert_eq!(
            Currency::from_code(code).unwrap().minor_digits(),
            2,
            "{code}"
        );
    }
}

#[test]
fn price_bounds_follow_polars_tables_per_currency() {
    let c = |code: &str| Currency::from_code(code).unwrap();
    // The spec's examples.
    for (code, min) in [
        ("usd", 50),
        ("eur", 50),
        ("gbp", 40),
        ("aud", 70),
        ("cad", 70),
        ("chf", 50),
        ("jpy", 80),
        ("krw", 800),
        ("inr", 6000),
        ("brl", 250),
        ("sek", 500),
        ("ugx", 200_000),
    ] {
        assert_eq!(c(code).minimum_amount(), min, "{code}");
    }
    assert_eq!(c("usd").maximum_amount(), 99_999_999);
    assert_eq!(c("jpy").maximum_amount(), 99_999_999);
    assert_eq!(c("idr").maximum_amount(), 1_600_000_000);
    assert_eq!(c("cop").maximum_amount(), 400_000_000);
    // A currency outside the tables gets the defaults.
    assert_eq!(c("xxx").minimum_amount(), 50);
    assert_eq!(c("xxx").maximum_amount(), 99_999_999);
    // Every minimum is below its maximum.
    assert!(Currency::presentment().all(|c| c.minimum_amount() < c.maximum_amount()));
}

#[test]
fn a_country_presents_its_tender_when_polar_sells_in_it() {
    let c = |code: &str| Currency::from_code(code);
    assert_eq!(Currency::for_country("US"), c("usd"));
    assert_eq!(Currency::for_country("de"), c("eur"));
    assert_eq!(Currency::for_country(" FR "), c("eur"));
    assert_eq!(Currency::for_country("JP"), c("jpy"));
    assert_eq!(Currency::for_country("GB"), c("gbp"));
    assert_eq!(Currency::for_country("CH"), c("chf"));
    assert_eq!(Currency::for_country("LI"), c("chf"));
    // Bulgaria's tender is the euro from 2026.
    assert_eq!(Currency::for_country("BG"), c("eur"));
    // Several tenders: the first Polar sells in.
    assert_eq!(Currency::for_country("PA"), c("pab"));
    assert_eq!(Currency::for_country("ZW"), c("usd"));
    // A tender Polar does not sell in, or no country: none (the organization's default).
    for none in ["RU", "BY", "AF", "XX", "", "USA"] {
        assert_eq!(Currency::for_country(none), None, "{none}");
    }
}
