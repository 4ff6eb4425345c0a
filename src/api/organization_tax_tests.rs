use serde_json::json;

use super::*;

fn locs(e: &[FieldError]) -> Vec<String> {
    e.iter()
        .map(|e| serde_json::to_value(&e.loc).unwrap().to_string())
        .collect()
}

#[test]
fn a_country_first_set_turns_the_builtin_service_on() {
    let t = parse_tax(
        &json!({"country": "fr", "tax_id": "FR40303265045", "registrations": ["eu_oss", "gb", "eu_oss"]}),
        &TaxSettings::none(),
    )
    .expect("valid");
    assert_eq!(t.country.as_deref(), Some("FR"));
    assert_eq!(t.provider, TaxProvider::Builtin);
    assert_eq!(
        t.tax_id.as_ref().map(|i| i.value.as_str()),
        Some("FR40303265045")
    );
    assert_eq!(t.registrations, vec![Registration::EuOss, Registration::Gb]);
    // Keys not sent are kept; a null country turns tax off.
    let kept = parse_tax(&json!({"eu_micro_threshold": true}), &t).expect("valid");
    assert!(kept.eu_micro_threshold && kept.provider == TaxProvider::Builtin);
    assert_eq!(kept.tax_id, t.tax_id);
    let off = parse_tax(
        &json!({"country": null, "tax_id": null, "registrations": [], "eu_micro_threshold": false}),
        &kept,
    )
    .expect("valid");
    assert_eq!((off.country, off.provider), (None, TaxProvider::None));
    // An explicit provider wins.
    let none = parse_tax(
        &json!({"country": "DE", "provider": "none"}),
        &TaxSettings::none(),
    )
    .expect("valid");
    assert_eq!(none.provider, TaxProvider::None);
}

#[test]
fn every_broken_key_is_named() {
    let e = parse_tax(
        &json!({"country": "XX", "registrations": ["vat"], "provider": "avalara", "invoice_prefix": "acme",
                "invoice_timing": "never", "colour": 1, "eu_micro_threshold": "yes"}),
        &TaxSettings::none(),
    )
    .unwrap_err();
    let l = locs(&e);
    for key in [
        "country",
        "registrations\",0",
        "provider",
        "invoice_prefix",
        "invoice_timing",
        "colour",
        "eu_micro_threshold",
    ] {
        assert!(l.iter().any(|x| x.contains(key)), "{key} in {l:?}");
    }
    assert!(parse_tax(&json!("FR"), &TaxSettings::none()).is_err());
}

#[test]
fn the_rules_across_keys_hold() {
    let none = TaxSettings::none();
    let bad = |v: Value| {
        let e = parse_tax(&v, &none).unwrap_err();
        (locs(&e), e[0].msg.clone())
    };
    let (l, m) = bad(json!({"country": "DE", "tax_id": "DE136695970"}));
    assert!(
        l[0].contains("tax_id") && m == "Invalid tax ID.",
        "{l:?} {m}"
    );
    let (l, m) = bad(json!({"tax_id": "DE136695976"}));
    assert!(l[0].contains("tax_id") && m.contains("Country is required"));
    let (l, _) = bad(json!({"country": "US", "registrations": ["eu_oss"]}));
    assert!(l[0].contains("registrations"));
    let (l, _) = bad(json!({"country": "FR", "registrations": ["non_eu_oss"]}));
    assert!(l[0].contains("registrations"));
    let (l, _) = bad(json!({"country": "GB", "eu_micro_threshold": true}));
    assert!(l[0].contains("eu_micro_threshold"));
    let (l, _) = bad(json!({"provider": "builtin"}));
    assert!(l[0].contains("provider"));
    let (l, _) = bad(json!({"country": "US", "registrations": ["us_ca"]}));
    assert!(l[0].contains("registrations"));
    assert!(parse_tax(
        &json!({"country": "US", "registrations": ["us_ca"], "provider": "stripe"}),
        &none
    )
    .is_ok());
    // A new country revalidates the number kept.
    let de = parse_tax(&json!({"country": "DE", "tax_id": "DE136695976"}), &none)
        .map_err(|e| format!("{:?}", locs(&e)))
        .unwrap();
    let (l, _) = {
        let e = parse_tax(&json!({"country": "FR"}), &de).unwrap_err();
        (locs(&e), ())
    };
    assert!(l[0].contains("tax_id"));
}

#[test]
fn invoice_details_are_kept_and_cleared() {
    let t = parse_tax(
        &json!({"country": "DE", "legal_name": "Müller GmbH", "invoice_prefix": "MUE-26",
                "invoice_timing": "on_payment",
                "address": {"line1": "Hauptstr. 1", "postal_code": "10115", "city": "Berlin", "country": "DE"}}),
        &TaxSettings::none(),
    )
    .expect("valid");
    assert_eq!(t.legal_name.as_deref(), Some("Müller GmbH"));
    assert_eq!(t.invoice_prefix.as_deref(), Some("MUE-26"));
    assert_eq!(t.invoice_timing, InvoiceTiming::OnPayment);
    assert_eq!(t.address.as_ref().map(|a| a.country.as_str()), Some("DE"));
    let cleared = parse_tax(
        &json!({"legal_name": null, "address": null, "invoice_prefix": null, "invoice_timing": null}),
        &t,
    )
    .expect("valid");
    assert_eq!(
        (
            cleared.legal_name,
            cleared.address,
            cleared.invoice_prefix,
            cleared.invoice_timing
        ),
        (None, None, None, InvoiceTiming::OnRequest)
    );
}

#[test]
fn default_tax_behavior_takes_polars_three_values() {
    assert_eq!(
        parse_default_tax_behavior(&json!("exclusive")).unwrap(),
        TaxBehaviorOption::Exclusive
    );
    assert!(parse_default_tax_behavior(&json!("gross")).is_err());
    assert!(parse_default_tax_behavior(&json!(null)).is_err());
}
