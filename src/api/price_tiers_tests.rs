//! Unit tests of `price_tiers.rs`: the 2027-01 shape of a seat-based price.

use serde_json::{json, Value};

use super::super::tests::product_of;
use super::super::{parse_price, PriceInput, ProductPrice};
use super::*;
use crate::api::version::{serve, ApiVersion};
use crate::domain::ids::PriceId;
use crate::domain::product::{Price, PriceKind};
use crate::error::ApiError;

fn read(raw: Value) -> Result<domain::SeatTiers, Vec<FieldError>> {
    let mut v = Validator::new();
    let loc = crate::loc!["body", "prices", 0];
    let out = seat_tiers_2027(&mut v, &raw, &loc);
    match v.finish() {
        Ok(()) => Ok(out.expect("no error, so tiers")),
        Err(ApiError::Validation(items)) => Err(items),
        Err(e) => panic!("{e:?}"),
    }
}

fn refused(raw: Value) -> (String, Value, String) {
    let errors = read(raw.clone()).expect_err(&format!("refused: {raw}"));
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = serde_json::to_value(&errors[0]).unwrap_or_default();
    (
        e["type"].as_str().unwrap_or_default().to_string(),
        e["loc"].clone(),
        e["msg"].as_str().unwrap_or_default().to_string(),
    )
}

fn ranges(t: &domain::SeatTiers) -> Vec<(u32, Option<u32>, i64)> {
    t.tiers()
        .iter()
        .map(|t| (t.min_seats, t.max_seats, t.price_per_seat))
        .collect()
}

#[test]
fn each_tier_starts_after_the_previous_bound_and_the_first_at_minimum_units() {
    let t = read(json!({"tiers": {"type": "volume", "tiers": [
        {"bound": 4, "unit_amount": "1000"}, {"bound": null, "unit_amount": 800}]}}))
    .expect("valid");
    assert_eq!(t.tier_type, domain::SeatTierType::Volume);
    assert_eq!(ranges(&t), vec![(1, Some(4), 1000), (5, None, 800)]);

    let t = read(
        json!({"minimum_units": 2, "tiers": {"type": "graduated", "tiers": [
        {"bound": 2, "unit_amount": 1500.0}, {"bound": 10, "unit_amount": "1200.00"},
        {"unit_amount": "900"}]}}),
    )
    .expect("valid");
    assert_eq!(t.tier_type, domain::SeatTierType::Graduated);
    assert_eq!(
        ranges(&t),
        vec![(2, Some(2), 1500), (3, Some(10), 1200), (11, None, 900)]
    );
    assert_eq!((t.minimum_seats(), t.maximum_seats()), (2, None));
}

#[test]
fn a_rate_is_whole_cents_within_stripes_bounds() {
    let with =
        |amount: Value| json!({"tiers": {"type": "volume", "tiers": [{"unit_amount": amount}]}});
    let at = json!(["body", "prices", 0, "tiers", "tiers", 0, "unit_amount"]);
    for fractional in [json!(10.5), json!("10.5"), json!("0.001")] {
        let (kind, loc, msg) = refused(with(fractional.clone()));
        assert_eq!((kind.as_str(), &loc), ("value_error", &at), "{fractional}");
        assert!(msg.contains("whole cents"), "{msg}");
    }
    assert_eq!(refused(with(json!("ten"))).0, "decimal_parsing");
    assert_eq!(refused(with(json!("."))).0, "decimal_parsing");
    assert_eq!(refused(with(json!(true))).0, "decimal_type");
    assert_eq!(refused(with(json!(-1))).0, "greater_than_equal");
    assert_eq!(refused(with(json!("-1"))).0, "greater_than_equal");
    assert_eq!(refused(with(json!(100_000_000))).0, "less_than_equal");
    assert_eq!(refused(with(json!("1e400"))).0, "decimal_parsing");
    for whole in [
        json!(0),
        json!("0.00"),
        json!(" 700 "),
        json!("+700"),
        json!(700.0),
    ] {
        assert!(read(with(whole.clone())).is_ok(), "{whole}");
    }
}

#[test]
fn bounds_must_rise_and_only_the_last_tier_may_be_unbounded() {
    let list = json!(["body", "prices", 0, "tiers", "tiers"]);
    let (kind, loc, msg) = refused(json!({"tiers": {"type": "volume", "tiers": [
        {"bound": null, "unit_amount": 1}, {"bound": 5, "unit_amount": 1}]}}));
    assert_eq!((kind.as_str(), &loc), ("value_error", &list));
    assert!(msg.contains("Only the last tier can be unbounded"), "{msg}");

    let (_, loc, msg) = refused(json!({"tiers": {"type": "volume", "tiers": [
        {"bound": 5, "unit_amount": 1}, {"bound": 5, "unit_amount": 1}]}}));
    assert_eq!(loc, list);
    assert!(msg.contains("tier 1 ends at 5, not after 5"), "{msg}");

    let (_, loc, msg) = refused(json!({"minimum_units": 3, "tiers": {"type": "volume",
        "tiers": [{"bound": 2, "unit_amount": 1}]}}));
    assert_eq!(loc, list);
    assert!(
        msg.contains("bound (2) is below minimum_units (3)"),
        "{msg}"
    );

    let (kind, loc, _) = refused(json!({"tiers": {"type": "volume", "tiers": [
        {"bound": 0, "unit_amount": 1}]}}));
    assert_eq!(kind, "greater_than_equal");
    assert_eq!(
        loc,
        json!(["body", "prices", 0, "tiers", "tiers", 0, "bound"])
    );
    let (kind, loc, _) = refused(json!({"minimum_units": 0, "tiers": {"type": "volume",
        "tiers": [{"unit_amount": 1}]}}));
    assert_eq!(kind, "greater_than_equal");
    assert_eq!(loc, json!(["body", "prices", 0, "minimum_units"]));
}

#[test]
fn the_shape_itself_is_checked() {
    let (kind, loc, _) = refused(json!({}));
    assert_eq!(
        (kind.as_str(), loc),
        ("missing", json!(["body", "prices", 0, "tiers"]))
    );
    let (kind, loc, _) = refused(json!({"tiers": {"tiers": [{"unit_amount": 1}]}}));
    assert_eq!(
        (kind.as_str(), loc),
        ("missing", json!(["body", "prices", 0, "tiers", "type"]))
    );
    let (kind, _, msg) = refused(json!({"tiers": {"type": "flat", "tiers": [{"unit_amount": 1}]}}));
    assert_eq!(kind, "literal_error");
    assert_eq!(msg, "Input should be 'volume' or 'graduated'");
    assert_eq!(
        refused(json!({"tiers": {"type": "volume", "tiers": []}})).0,
        "too_short"
    );
    assert_eq!(
        refused(json!({"tiers": {"type": "volume", "tiers": {}}})).0,
        "list_type"
    );
    assert_eq!(refused(json!({"tiers": []})).0, "model_type");
    assert_eq!(
        refused(json!({"tiers": {"type": "volume", "tiers": [{"bound": 3}]}})).0,
        "missing"
    );
}

fn seat_price() -> Price {
    let tiers = read(
        json!({"minimum_units": 2, "tiers": {"type": "volume", "tiers": [
        {"bound": 4, "unit_amount": 1000}, {"unit_amount": 800}]}}),
    )
    .expect("valid");
    Price {
        id: PriceId::new(),
        created_at: chrono::Utc::now(),
        modified_at: None,
        is_archived: false,
        kind: PriceKind::RecurringSeatBased {
            interval: domain::RecurringInterval::Month,
            currency: "usd".into(),
            seat_tiers: tiers,
        },
    }
}

/// 2027-01 renders `tiers`, `minimum_units`, `maximum_units` beside `seat_tiers`; every
/// earlier version, and the default shape, `seat_tiers` only.
#[actix_web::test]
async fn each_version_renders_its_seat_shape() {
    let price = seat_price();
    let render = |version| {
        let price = price.clone();
        serve(version, async move {
            serde_json::to_value(ProductPrice::new(&product_of(&price), &price, &[]))
                .unwrap_or_default()
        })
    };
    let new = render(Some(ApiVersion::V2027_01)).await;
    assert_eq!(new["seat_tiers"]["minimum_seats"], 2, "{new}");
    assert_eq!(
        new["tiers"],
        json!({"type": "volume", "tiers": [{"bound": 4, "unit_amount": "1000"},
                                           {"bound": null, "unit_amount": "800"}]})
    );
    assert_eq!(
        (&new["minimum_units"], &new["maximum_units"]),
        (&json!(2), &Value::Null)
    );
    for version in [None, Some(ApiVersion::V2026_04), Some(ApiVersion::V2026_10)] {
        let old = render(version).await;
        for gone in ["tiers", "minimum_units", "maximum_units"] {
            assert!(old.get(gone).is_none(), "{version:?} {old}");
        }
        assert_eq!(old["seat_tiers"]["minimum_seats"], 2, "{version:?}");
        assert_eq!(old["seat_tiers"]["tiers"][1]["min_seats"], 5, "{version:?}");
    }
}

/// A body is read in the shape of the version it is sent in (2027-01 also reads 2026's).
#[actix_web::test]
async fn a_price_body_is_read_in_its_versions_shape() {
    let new = json!({"type": "recurring", "amount_type": "seat_based",
        "recurring_interval": "month",
        "tiers": {"type": "volume", "tiers": [{"unit_amount": 500}]}});
    let old = json!({"type": "recurring", "amount_type": "seat_based",
        "recurring_interval": "month",
        "seat_tiers": {"tiers": [{"min_seats": 1, "price_per_seat": 500}]}});
    let parse = |version, raw: Value| {
        serve(version, async move {
            let mut v = Validator::new();
            let loc = crate::loc!["body", "prices", 0];
            let out = parse_price(&mut v, &loc, &raw, false, None);
            v.finish().ok().and(out)
        })
    };
    let expected = Some(PriceInput::New(
        PriceKind::RecurringSeatBased {
            interval: domain::RecurringInterval::Month,
            currency: "usd".into(),
            seat_tiers: read(json!({"tiers": {"type": "volume", "tiers": [{"unit_amount": 500}]}}))
                .expect("valid"),
        }
        .into(),
    ));
    assert_eq!(
        parse(Some(ApiVersion::V2027_01), new.clone()).await,
        expected
    );
    assert_eq!(
        parse(Some(ApiVersion::V2026_10), old.clone()).await,
        expected
    );
    assert_eq!(parse(None, old.clone()).await, expected);
    // @polar-sh/sdk 1.0.1 sends `seat_tiers` in 2027-01; `tiers` wins when both are sent.
    assert_eq!(
        parse(Some(ApiVersion::V2027_01), old.clone()).await,
        expected
    );
    let mut both = new.clone();
    both["seat_tiers"] = json!({"tiers": [{"min_seats": 1, "price_per_seat": 9}]});
    assert_eq!(parse(Some(ApiVersion::V2027_01), both).await, expected);
    assert_eq!(parse(Some(ApiVersion::V2026_10), new).await, None);
}
