use super::*;

#[test]
fn parse_accepts_the_offered_lowercase_codes_only() {
    assert_eq!(Currency::parse("usd"), Ok(Currency::USD));
    assert_eq!(
        Currency::parse("eur"),
        Err(CurrencyError::NotOffered(Currency::EUR))
    );
    assert_eq!(Currency::parse("USD"), Err(CurrencyError::Malformed));
    assert_eq!(Currency::parse("us"), Err(CurrencyError::Malformed));
    assert_eq!(Currency::parse("usdx"), Err(CurrencyError::Malformed));
    assert_eq!(Currency::parse("u$d"), Err(CurrencyError::Malformed));
    assert_eq!(Currency::from_code("jpy"), Some(Currency::JPY));
    assert_eq!(Currency::default(), Currency::DEFAULT);
    assert_eq!(CurrencyError::PATTERN, Currency::DEFAULT.code());
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
