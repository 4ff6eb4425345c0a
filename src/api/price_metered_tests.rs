//! Unit tests of `price_metered.rs`: reading a `metered_unit` price and rendering it.

use serde_json::json;

use super::super::{parse_price, PriceInput, ProductPrice, ProductPriceRecurring};
use super::*;
use crate::domain::product::{Price, RecurringInterval};
use crate::error::ApiError;

const METER: &str = "4e7e0000-0000-4000-8000-000000000001";

fn parse(raw: Value, cadence: Option<Cadence>) -> Result<Option<PriceInput>, Vec<FieldError>> {
    let mut v = Validator::new();
    let loc = crate::loc!["body", "prices", 1];
    let out = parse_price(&mut v, &loc, &raw, true, cadence);
    match v.finish() {
        Ok(()) => Ok(out),
        Err(ApiError::Validation(items)) => Err(items),
        Err(e) => panic!("{e:?}"),
    }
}

fn monthly() -> Option<Cadence> {
    Some(Cadence::Every(RecurringInterval::Month))
}

fn errors(raw: Value, cadence: Option<Cadence>) -> Vec<(String, Value, String)> {
    parse(raw, cadence)
        .err()
        .unwrap_or_default()
        .into_iter()
        .map(|e| (e.kind, Value::from(e.loc), e.msg))
        .collect()
}

#[test]
fn reads_a_metered_price_with_its_products_interval() {
    let got = parse(
        json!({"amount_type": "metered_unit", "price_currency": "eur", "meter_id": METER,
               "unit_amount": "0.50", "cap_amount": 10000, "tax_behavior": "inclusive"}),
        monthly(),
    );
    let Ok(Some(PriceInput::New(p))) = got else {
        panic!("refused: {got:?}");
    };
    assert_eq!(p.currency.code(), "eur");
    assert_eq!(p.tax_behavior, Some(TaxBehaviorOption::Inclusive));
    let PriceKind::RecurringMeteredUnit {
        interval,
        meter_id,
        unit_amount,
        cap_amount,
        ..
    } = p.kind
    else {
        panic!("not metered: {:?}", p.kind);
    };
    assert_eq!(interval, RecurringInterval::Month);
    assert_eq!(meter_id.0.to_string(), METER);
    assert_eq!(unit_amount.to_string(), "0.5");
    assert_eq!(cap_amount, Some(10_000));
    // A JSON number is read as its decimal; no cap is `None`; a legacy item names its
    // interval.
    let got = parse(
        json!({"type": "recurring", "recurring_interval": "year", "amount_type": "metered_unit",
               "meter_id": METER, "unit_amount": 0.005, "cap_amount": null}),
        None,
    );
    let Ok(Some(PriceInput::New(p))) = got else {
        panic!("refused: {got:?}");
    };
    assert!(matches!(p.kind, PriceKind::RecurringMeteredUnit {
        interval: RecurringInterval::Year, cap_amount: None, unit_amount, ..
    } if unit_amount.to_string() == "0.005"));
}

#[test]
fn refuses_bad_fields_with_pydantics_errors() {
    let at = |f: &str| json!(["body", "prices", 1, f]);
    assert_eq!(
        errors(json!({"amount_type": "metered_unit"}), monthly()),
        vec![
            ("missing".into(), at("meter_id"), "Field required".into()),
            ("missing".into(), at("unit_amount"), "Field required".into()),
        ]
    );
    let bad = errors(
        json!({"amount_type": "metered_unit", "meter_id": "nope", "unit_amount": "0",
               "cap_amount": -1}),
        monthly(),
    );
    let kinds: Vec<&str> = bad.iter().map(|(k, _, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        ["uuid_parsing", "greater_than", "greater_than_equal"]
    );
    assert_eq!(bad[1].2, "Input should be greater than 0");
    for (amount, kind) in [
        (json!("0.0000000000001"), "decimal_max_places"),
        (json!("123456"), "decimal_whole_digits"),
        (json!("12345.1234567890123"), "decimal_max_digits"),
        (json!("abc"), "decimal_parsing"),
        (json!(true), "decimal_type"),
        (json!(-0.5), "greater_than"),
    ] {
        let got = errors(
            json!({"amount_type": "metered_unit", "meter_id": METER, "unit_amount": amount}),
            monthly(),
        );
        assert_eq!(
            got.iter()
                .map(|(k, l, _)| (k.as_str(), l.clone()))
                .collect::<Vec<_>>(),
            vec![(kind, at("unit_amount"))],
            "{amount}"
        );
    }
    let v1 = errors(
        json!({"amount_type": "metered_unit", "meter_id": "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
               "unit_amount": "1"}),
        monthly(),
    );
    assert_eq!(v1[0].0, "uuid_version");
    let cap = errors(
        json!({"amount_type": "metered_unit", "meter_id": METER, "unit_amount": "1",
               "cap_amount": 2_147_483_648_i64}),
        monthly(),
    );
    assert_eq!(cap[0].0, "less_than_equal");
}

#[test]
fn a_one_time_product_has_no_metered_price() {
    let raw = json!({"amount_type": "metered_unit", "meter_id": METER, "unit_amount": "1"});
    assert_eq!(
        errors(raw.clone(), Some(Cadence::OneTime)),
        vec![(
            "value_error".into(),
            json!(["body", "prices", 1]),
            ONE_TIME_METERED.into()
        )]
    );
    let mut legacy = raw.clone();
    legacy["type"] = json!("one_time");
    assert_eq!(errors(legacy, monthly())[0].2, ONE_TIME_METERED);
    // Field errors come first, alone (Polar's schema, before its service).
    let mut broken = raw;
    broken["unit_amount"] = json!("x");
    assert_eq!(
        errors(broken, Some(Cadence::OneTime))
            .iter()
            .map(|(k, _, _)| k.as_str())
            .collect::<Vec<_>>(),
        ["decimal_parsing"]
    );
}

#[test]
fn renders_polars_metered_unit_price_with_its_meter() {
    let meters = sample_meters();
    let price = Price {
        id: crate::domain::ids::PriceId(Uuid::from_u128(0x9009)),
        created_at: meters[0].created_at,
        modified_at: None,
        is_archived: false,
        kind: sample_metered_kind(),
    };
    let product = super::super::tests::product_of(&price);
    let out = serde_json::to_value(ProductPrice::new(&product, &price, &meters)).unwrap();
    assert_eq!(out["amount_type"], "metered_unit");
    assert_eq!(out["type"], "recurring");
    assert_eq!(out["recurring_interval"], "month");
    assert_eq!(out["unit_amount"], "0.5");
    assert_eq!(out["cap_amount"], 10_000);
    assert_eq!(out["price_currency"], "usd");
    assert_eq!(out["meter_id"], meters[0].id.0.to_string());
    assert_eq!(
        out["meter"],
        json!({"id": meters[0].id.0.to_string(), "name": "API calls", "unit": "scalar",
               "custom_label": null, "custom_multiplier": null})
    );
    assert_eq!(out["source"], "catalog");
    assert_eq!(out["tax_behavior"], Value::Null);
    let recurring = ProductPriceRecurring::new(&product, &price, &meters);
    assert!(matches!(
        recurring,
        Some(ProductPriceRecurring::MeteredUnit(_))
    ));
}
