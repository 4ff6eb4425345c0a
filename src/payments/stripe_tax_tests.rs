use super::*;
use tollgate_actors::domain::customer::{validate_tax_id, Address};
use tollgate_actors::tax::{Buyer, TaxIdStatus};

fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).expect("a date")
}

fn address(country: &str, state: Option<&str>) -> Address {
    Address {
        line1: Some("Unter den Linden 1".into()),
        line2: None,
        postal_code: Some("10117".into()),
        city: Some("Berlin".into()),
        state: state.map(Into::into),
        country: country.into(),
    }
}

fn request(amount: i64, behavior: TaxBehavior) -> TaxRequest {
    let mut r = TaxRequest::new(amount, "eur", day(2026, 11, 29));
    r.behavior = behavior;
    r.buyer = Buyer::at(Some(address("DE", None)));
    r
}

fn get<'a>(form: &'a [(String, String)], key: &str) -> Option<&'a str> {
    form.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// A calculation as Stripe's API reference shows one (`tax.calculation`, an exclusive
/// line of 10.00 EUR for a consumer in Germany), trimmed of nothing a quote reads.
const CALC_DE_EXCLUSIVE: &str = r#"{
  "id": "taxcalc_1NaS5xLkdIwHu7ix8wD0wVvw",
  "object": "tax.calculation",
  "amount_total": 1190,
  "currency": "eur",
  "customer": null,
  "customer_details": {
    "address": {"city": "Berlin", "country": "DE", "line1": "Unter den Linden 1",
                "line2": null, "postal_code": "10117", "state": null},
    "address_source": "billing",
    "ip_address": null,
    "tax_ids": [],
    "taxability_override": "none"
  },
  "expires_at": 1803686400,
  "line_items": {"object": "list", "data": [], "has_more": false,
                 "url": "/v1/tax/calculations/taxcalc_1NaS5xLkdIwHu7ix8wD0wVvw/line_items"},
  "livemode": false,
  "ship_from_details": null,
  "shipping_cost": null,
  "tax_amount_exclusive": 190,
  "tax_amount_inclusive": 0,
  "tax_breakdown": [
    {
      "amount": 190,
      "inclusive": false,
      "tax_rate_details": {"country": "DE", "percentage_decimal": "19.0", "state": null,
                           "tax_type": "vat"},
      "taxability_reason": "standard_rated",
      "taxable_amount": 1000
    }
  ],
  "tax_date": 1795910400
}"#;

/// A US calculation: New York sales tax inside an inclusive price, and a line Stripe does
/// not collect (a state where the seller is not registered).
const CALC_US_INCLUSIVE: &str = r#"{
  "id": "taxcalc_1OvFWbLkdIwHu7ixn0MaxRdw",
  "object": "tax.calculation",
  "amount_total": 10000,
  "currency": "usd",
  "tax_amount_exclusive": 0,
  "tax_amount_inclusive": 816,
  "tax_breakdown": [
    {
      "amount": 816,
      "inclusive": true,
      "tax_rate_details": {"country": "US", "percentage_decimal": "8.875", "state": "NY",
                           "tax_type": "sales_tax"},
      "taxability_reason": "standard_rated",
      "taxable_amount": 9184
    },
    {
      "amount": 0,
      "inclusive": true,
      "tax_rate_details": {"country": "US", "percentage_decimal": "0.0", "state": "NY",
                           "tax_type": "sales_tax"},
      "taxability_reason": "not_collecting",
      "taxable_amount": 0
    }
  ],
  "tax_date": 1795910400
}"#;

/// An EU business with a number of another member state: reverse charge.
const CALC_REVERSE_CHARGE: &str = r#"{
  "id": "taxcalc_1PqRsTLkdIwHu7ixAbCdEfGh",
  "object": "tax.calculation",
  "amount_total": 1000,
  "currency": "eur",
  "tax_amount_exclusive": 0,
  "tax_amount_inclusive": 0,
  "tax_breakdown": [
    {
      "amount": 0,
      "inclusive": false,
      "tax_rate_details": {"country": "FR", "percentage_decimal": "0.0", "state": null,
                           "tax_type": "vat"},
      "taxability_reason": "reverse_charge",
      "taxable_amount": 1000
    }
  ]
}"#;

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).expect("a fixture")
}

#[test]
fn a_consumer_calculation_is_one_exclusive_line_with_the_billing_address() {
    let r = request(1000, TaxBehavior::Exclusive);
    let form = calculation_form(&r, day(2026, 11, 29));
    assert_eq!(get(&form, "currency"), Some("eur"));
    assert_eq!(get(&form, "line_items[0][amount]"), Some("1000"));
    assert_eq!(get(&form, "line_items[0][reference]"), Some(LINE_REFERENCE));
    assert_eq!(get(&form, "line_items[0][tax_behavior]"), Some("exclusive"));
    assert_eq!(get(&form, "line_items[0][tax_code]"), None);
    assert_eq!(
        get(&form, "customer_details[address][line1]"),
        Some("Unter den Linden 1")
    );
    assert_eq!(get(&form, "customer_details[address][line2]"), None);
    assert_eq!(
        get(&form, "customer_details[address][city]"),
        Some("Berlin")
    );
    assert_eq!(
        get(&form, "customer_details[address][postal_code]"),
        Some("10117")
    );
    assert_eq!(get(&form, "customer_details[address][country]"), Some("DE"));
    assert_eq!(
        get(&form, "customer_details[address_source]"),
        Some("billing")
    );
    assert_eq!(get(&form, "customer_details[tax_ids][0][type]"), None);
    // Today's date is Stripe's default: not sent.
    assert_eq!(get(&form, "tax_date"), None);
}

#[test]
fn behaviour_code_state_and_an_earlier_tax_date_are_sent() {
    let mut r = request(10_000, TaxBehavior::Inclusive);
    r.currency = "USD".into();
    r.tax_code = Some("txcd_10103001".into());
    r.buyer = Buyer::at(Some(address("US", Some("US-NY"))));
    let form = calculation_form(&r, day(2026, 11, 30));
    assert_eq!(get(&form, "currency"), Some("usd"));
    assert_eq!(get(&form, "line_items[0][tax_behavior]"), Some("inclusive"));
    assert_eq!(get(&form, "line_items[0][tax_code]"), Some("txcd_10103001"));
    assert_eq!(get(&form, "customer_details[address][state]"), Some("NY"));
    // 2026-11-29T00:00:00Z
    assert_eq!(get(&form, "tax_date"), Some("1795910400"));
    // A state without the country's prefix is sent as given.
    r.buyer = Buyer::at(Some(address("US", Some("ca"))));
    let form = calculation_form(&r, day(2026, 11, 29));
    assert_eq!(get(&form, "customer_details[address][state]"), Some("CA"));
}

#[test]
fn a_business_number_is_sent_with_stripe_s_type_unless_refuted() {
    let mut r = request(1000, TaxBehavior::Exclusive);
    let id = validate_tax_id("FR40303265045", "FR").expect("a valid number");
    r.buyer = Buyer {
        address: Some(address("FR", None)),
        is_business: true,
        tax_id: Some((id, TaxIdStatus::Unverified)),
    };
    let form = calculation_form(&r, day(2026, 11, 29));
    assert_eq!(
        get(&form, "customer_details[tax_ids][0][type]"),
        Some("eu_vat")
    );
    assert_eq!(
        get(&form, "customer_details[tax_ids][0][value]"),
        Some("FR40303265045")
    );
    let gb = validate_tax_id("GB980780684", "GB").expect("a valid number");
    r.buyer.tax_id = Some((gb, TaxIdStatus::Valid));
    let form = calculation_form(&r, day(2026, 11, 29));
    assert_eq!(
        get(&form, "customer_details[tax_ids][0][type]"),
        Some("gb_vat")
    );
    // Refuted by the register, or not a business: taxed as a consumer.
    r.buyer.tax_id.as_mut().expect("set").1 = TaxIdStatus::Invalid;
    let form = calculation_form(&r, day(2026, 11, 29));
    assert_eq!(get(&form, "customer_details[tax_ids][0][type]"), None);
    r.buyer.tax_id.as_mut().expect("set").1 = TaxIdStatus::Valid;
    r.buyer.is_business = false;
    let form = calculation_form(&r, day(2026, 11, 29));
    assert_eq!(get(&form, "customer_details[tax_ids][0][value]"), None);
}

#[test]
fn the_same_calculation_has_the_same_idempotency_key() {
    let r = request(1000, TaxBehavior::Exclusive);
    let a = idempotency_key("taxcalc", &calculation_form(&r, day(2026, 11, 29)));
    let b = idempotency_key("taxcalc", &calculation_form(&r, day(2026, 11, 29)));
    assert_eq!(a, b);
    let c = idempotency_key(
        "taxcalc",
        &calculation_form(&request(1001, TaxBehavior::Exclusive), day(2026, 11, 29)),
    );
    assert_ne!(a, c);
}

#[test]
fn reversals_are_full_or_a_negative_flat_amount() {
    assert_eq!(
        reversal_form("tax_1", "ref_1", Reversal::Full),
        vec![
            ("original_transaction".to_string(), "tax_1".to_string()),
            ("reference".to_string(), "ref_1".to_string()),
            ("mode".to_string(), "full".to_string()),
        ]
    );
    let partial = reversal_form("tax_1", "ref_2", Reversal::Partial { flat_amount: -595 });
    assert_eq!(get(&partial, "mode"), Some("partial"));
    assert_eq!(get(&partial, "flat_amount"), Some("-595"));
}

#[test]
fn an_exclusive_calculation_becomes_the_quote() {
    let q = quote_from(
        request(1000, TaxBehavior::Exclusive),
        json(CALC_DE_EXCLUSIVE),
    )
    .expect("a quote");
    assert_eq!(q.tax_amount, 190);
    assert_eq!((q.net_amount(), q.total_amount()), (1000, 1190));
    assert_eq!(
        q.provider_ref.as_deref(),
        Some("taxcalc_1NaS5xLkdIwHu7ix8wD0wVvw")
    );
    assert_eq!(
        q.breakdown,
        vec![TaxBreakdown {
            country: "DE".into(),
            subdivision: None,
            name: "VAT".into(),
            rate_ppm: 190_000,
            taxable_amount: 1000,
            amount: 190,
            reason: TaxabilityReason::StandardRated,
            regime: Regime::Provider,
        }]
    );
    assert!(q.answers(&request(1000, TaxBehavior::Exclusive)));
}

#[test]
fn an_inclusive_calculation_keeps_the_tax_inside_and_every_line() {
    let mut r = request(10_000, TaxBehavior::Inclusive);
    r.currency = "usd".into();
    let q = quote_from(r, json(CALC_US_INCLUSIVE)).expect("a quote");
    assert_eq!(q.tax_amount, 816);
    assert_eq!((q.net_amount(), q.total_amount()), (9184, 10_000));
    let lines: Vec<_> = q
        .breakdown
        .iter()
        .map(|b| {
            (
                b.subdivision.as_deref(),
                b.name.as_str(),
                b.rate_ppm,
                b.amount,
                b.reason,
            )
        })
        .collect();
    assert_eq!(
        lines,
        vec![
            (
                Some("US-NY"),
                "Sales tax",
                88_750,
                816,
                TaxabilityReason::StandardRated
            ),
            (
                Some("US-NY"),
                "Sales tax",
                0,
                0,
                TaxabilityReason::NotCollecting
            ),
        ]
    );
    assert_eq!(q.breakdown[0].rate_percent(), "8.875");
}

#[test]
fn a_reverse_charge_is_a_line_of_nothing_with_its_reason() {
    let q = quote_from(
        request(1000, TaxBehavior::Exclusive),
        json(CALC_REVERSE_CHARGE),
    )
    .expect("a quote");
    assert_eq!(q.tax_amount, 0);
    assert!(q.reverse_charge());
    assert_eq!(q.breakdown[0].country, "FR");
}

#[test]
fn answers_that_do_not_answer_the_request_are_errors() {
    let fixture = json(CALC_DE_EXCLUSIVE);
    // Another amount: the total does not add up.
    let e = quote_from(request(999, TaxBehavior::Exclusive), fixture.clone()).unwrap_err();
    assert!(e.message.contains("do not add up"), "{e}");
    // Inclusive asked, exclusive answered.
    let e = quote_from(request(1000, TaxBehavior::Inclusive), fixture.clone()).unwrap_err();
    assert!(e.message.contains("do not add up"), "{e}");
    // Another currency.
    let mut r = request(1000, TaxBehavior::Exclusive);
    r.currency = "usd".into();
    let e = quote_from(r, fixture.clone()).unwrap_err();
    assert!(e.message.contains("answered in eur"), "{e}");
    // A breakdown that does not add up to the tax.
    let mut v = fixture.clone();
    v["tax_breakdown"][0]["amount"] = 189.into();
    let e = quote_from(request(1000, TaxBehavior::Exclusive), v).unwrap_err();
    assert!(e.message.contains("breakdown adds up to 189"), "{e}");
    // A rate that is not a decimal.
    let mut v = fixture.clone();
    v["tax_breakdown"][0]["tax_rate_details"]["percentage_decimal"] = "1e2".into();
    let e = quote_from(request(1000, TaxBehavior::Exclusive), v).unwrap_err();
    assert!(e.message.contains("rate"), "{e}");
    // Not a calculation at all.
    let e = quote_from(
        request(1000, TaxBehavior::Exclusive),
        serde_json::json!({"error": {"message": "x"}}),
    )
    .unwrap_err();
    assert!(e.message.contains("unreadable answer"), "{e}");
    let mut v = fixture;
    v["id"] = "pi_123".into();
    let e = quote_from(request(1000, TaxBehavior::Exclusive), v).unwrap_err();
    assert!(e.message.contains("not a calculation id"), "{e}");
}

#[test]
fn rates_parse_exactly_without_floats() {
    assert_eq!(rate_ppm("19.0"), Some(190_000));
    assert_eq!(rate_ppm("19"), Some(190_000));
    assert_eq!(rate_ppm("8.875"), Some(88_750));
    assert_eq!(rate_ppm("9.975"), Some(99_750));
    assert_eq!(rate_ppm("7.25"), Some(72_500));
    assert_eq!(rate_ppm("0.0"), Some(0));
    assert_eq!(rate_ppm(".5"), Some(5_000));
    assert_eq!(rate_ppm("100"), Some(1_000_000));
    // A fifth decimal rounds half up.
    assert_eq!(rate_ppm("8.87549"), Some(88_755));
    assert_eq!(rate_ppm("8.87544"), Some(88_754));
    for bad in ["", ".", "-1", "1e2", "abc", "100.1", "1000", "1,5"] {
        assert_eq!(rate_ppm(bad), None, "{bad:?}");
    }
}

#[test]
fn names_and_reasons_read_as_people_and_our_rules_do() {
    assert_eq!(tax_name(Some("vat")), "VAT");
    assert_eq!(tax_name(Some("gst")), "GST");
    assert_eq!(tax_name(Some("hst")), "HST");
    assert_eq!(tax_name(Some("sales_tax")), "Sales tax");
    assert_eq!(tax_name(Some("retail_delivery_fee")), "Retail delivery fee");
    assert_eq!(tax_name(None), "Tax");
    assert_eq!(reason("standard_rated"), TaxabilityReason::StandardRated);
    assert_eq!(reason("reduced_rated"), TaxabilityReason::StandardRated);
    assert_eq!(reason("reverse_charge"), TaxabilityReason::ReverseCharge);
    assert_eq!(reason("not_collecting"), TaxabilityReason::NotCollecting);
    assert_eq!(reason("zero_rated"), TaxabilityReason::NotSubjectToTax);
    assert_eq!(reason("something_new"), TaxabilityReason::NotSupported);
}

#[test]
fn a_reused_reference_is_told_from_other_refusals() {
    let reused = CallError {
        status: Some(400),
        param: Some("reference".into()),
        code: None,
        said: None,
        message: "x".into(),
    };
    assert!(reused.is_reference_reused());
    let other = CallError {
        param: Some("calculation".into()),
        ..reused.clone()
    };
    assert!(!other.is_reference_reused());
    let down = CallError {
        status: Some(500),
        ..reused
    };
    assert!(!down.is_reference_reused());
}

#[test]
fn a_location_stripe_cannot_place_is_the_buyers_to_correct_and_the_rest_are_failures() {
    let location = CallError {
        status: Some(400),
        param: Some("customer_details[address]".into()),
        code: Some(LOCATION_INVALID.into()),
        said: Some("The customer's location could not be determined.".into()),
        message: "Stripe Tax /v1/tax/calculations: 400 …".into(),
    };
    let e = TaxError::from(location.clone());
    assert_eq!(
        e.location.as_deref(),
        Some("The customer's location could not be determined.")
    );
    assert!(e.message.contains("/v1/tax/calculations"), "{e}");
    // Without Stripe's words: ours.
    let silent = TaxError::from(CallError {
        said: None,
        ..location.clone()
    });
    assert!(silent.location.is_some());
    // Another 400, or a 5xx with the code: failures.
    for other in [
        CallError {
            code: Some("parameter_missing".into()),
            ..location.clone()
        },
        CallError {
            status: Some(500),
            ..location
        },
    ] {
        assert_eq!(TaxError::from(other).location, None);
    }
}

#[actix_web::test]
async fn a_buyer_without_an_address_is_quoted_zero_without_asking() {
    let settings = PaymentSettings {
        // Nothing listens there: asking would fail.
        stripe_api_base: "http://127.0.0.1:9".into(),
        ..PaymentSettings::default()
    };
    let tax = StripeTax::new(&settings).expect("a client");
    let mut r = request(1000, TaxBehavior::Exclusive);
    r.buyer.address = None;
    let q = tax.quote(r).await.expect("zero, unasked");
    assert_eq!((q.tax_amount, q.provider_ref), (0, None));
    let e = tax
        .quote(request(1000, TaxBehavior::Exclusive))
        .await
        .unwrap_err();
    assert!(
        e.message.contains("/v1/tax/calculations: unreachable"),
        "{e}"
    );
}
