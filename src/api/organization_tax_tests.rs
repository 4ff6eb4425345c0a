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

// ---------------------------------------------------------------------------------------
// The dashboard's form

fn org() -> Organization {
    Organization::new(
        crate::domain::ids::OrganizationId(uuid::Uuid::from_u128(0x7a)),
        "Tax Shop".into(),
        "tax-shop".into(),
        chrono::Utc::now(),
    )
}

fn french_form() -> TaxForm {
    TaxForm {
        country: "FR".into(),
        tax_id: " FR40303265045 ".into(),
        legal_name: "Tax Shop SAS".into(),
        address_line1: "1 rue de la Paix".into(),
        address_postal_code: "75002".into(),
        address_city: "Paris".into(),
        address_country: "FR".into(),
        registrations: vec!["eu_oss".into(), "gb".into()],
        provider: "builtin".into(),
        default_tax_behavior: "exclusive".into(),
        invoice_prefix: "TAXS".into(),
        invoice_timing: "on_payment".into(),
        ..TaxForm::default()
    }
}

#[test]
fn a_form_reads_as_the_settings_it_shows() {
    let t = parse_tax_form(&french_form(), &TaxSettings::none()).expect("valid");
    assert_eq!(t.country.as_deref(), Some("FR"));
    assert_eq!(
        t.tax_id.as_ref().map(|i| i.value.as_str()),
        Some("FR40303265045")
    );
    assert_eq!(t.registrations, vec![Registration::EuOss, Registration::Gb]);
    assert_eq!(t.provider, TaxProvider::Builtin);
    assert!(!t.eu_micro_threshold);
    assert_eq!(t.legal_name.as_deref(), Some("Tax Shop SAS"));
    let a = t.address.clone().expect("an address");
    assert_eq!(
        (
            a.line1.as_deref(),
            a.line2.as_deref(),
            a.city.as_deref(),
            a.country.as_str()
        ),
        (Some("1 rue de la Paix"), None, Some("Paris"), "FR")
    );
    assert_eq!(t.invoice_prefix.as_deref(), Some("TAXS"));
    assert_eq!(t.invoice_timing, InvoiceTiming::OnPayment);

    // The form filled from the stored settings reads back as the same settings, a US
    // state's registration (no box on the page) kept.
    let mut o = org();
    o.tax = t;
    let again = parse_tax_form(&TaxForm::of(&o), &o.tax).expect("valid");
    assert_eq!(again, o.tax);
    let us = parse_tax(
        &json!({"country": "US", "registrations": ["us_ca", "gb"], "provider": "stripe"}),
        &TaxSettings::none(),
    )
    .expect("valid");
    o.tax = us;
    let form = TaxForm::of(&o);
    assert_eq!(form.registrations, vec!["gb", "us_ca"]);
    assert_eq!(parse_tax_form(&form, &o.tax).expect("valid"), o.tax);
}

#[test]
fn a_blank_form_turns_tax_off_and_offers_builtin_first() {
    let mut o = org();
    let blank = TaxForm::of(&o);
    assert_eq!(
        (blank.country.as_str(), blank.provider.as_str()),
        ("", "builtin")
    );
    assert_eq!(blank.default_tax_behavior, "location");
    o.tax = parse_tax_form(&french_form(), &TaxSettings::none()).expect("valid");
    let mut off = TaxForm::of(&o);
    off.country.clear();
    off.tax_id.clear();
    off.registrations.clear();
    off.legal_name.clear();
    off.address_line1.clear();
    off.address_postal_code.clear();
    off.address_city.clear();
    off.address_country.clear();
    off.invoice_prefix.clear();
    let t = parse_tax_form(&off, &o.tax).expect("valid");
    assert_eq!(
        (t.country, t.tax_id, t.provider, t.registrations.len()),
        (None, None, TaxProvider::None, 0)
    );
    assert_eq!(
        (t.legal_name, t.address, t.invoice_prefix),
        (None, None, None)
    );
    // A ticked micro threshold with a country: on.
    let mut micro = french_form();
    micro.eu_micro_threshold = Some("on".into());
    assert!(
        parse_tax_form(&micro, &TaxSettings::none())
            .expect("valid")
            .eu_micro_threshold
    );
}

#[test]
fn a_forms_problems_are_named_by_its_fields() {
    let field_of = |form: &TaxForm| {
        let e = parse_tax_form(form, &TaxSettings::none()).unwrap_err();
        form_problems(&e)
    };
    let mut bad_id = french_form();
    bad_id.tax_id = "FR123".into();
    assert_eq!(
        field_of(&bad_id),
        vec![("tax_id".to_string(), "Invalid tax ID.".to_string())]
    );
    let mut us = french_form();
    us.country = "US".into();
    us.tax_id.clear();
    us.registrations = vec!["eu_oss".into()];
    let p = field_of(&us);
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].0, "registrations");
    assert!(p[0]
        .1
        .starts_with("eu_oss is for a seller established in the EU"));
    let mut no_country = french_form();
    no_country.address_country.clear();
    let p = field_of(&no_country);
    assert!(p.iter().any(|(f, _)| f == "address_country"), "{p:?}");
    let mut prefix = french_form();
    prefix.invoice_prefix = "taxs".into();
    prefix.registrations = vec!["vat".into()];
    let fields: Vec<String> = field_of(&prefix).into_iter().map(|(f, _)| f).collect();
    assert_eq!(fields, vec!["registrations", "invoice_prefix"]);
}

#[test]
fn a_form_saves_through_the_organization_update() {
    let o = org();
    let change = french_form().update().into_command(&o).expect("valid");
    assert_eq!(
        change.default_tax_behavior,
        Some(TaxBehaviorOption::Exclusive)
    );
    let tax = change.tax.expect("the tax object");
    assert_eq!(tax.country.as_deref(), Some("FR"));
    assert!(change.name.is_none());
    // No behaviour chosen: unchanged; a wrong one: the API's 422 at its key.
    let mut form = french_form();
    form.default_tax_behavior.clear();
    let change = form.update().into_command(&o).expect("valid");
    assert_eq!(change.default_tax_behavior, None);
    form.default_tax_behavior = "gross".into();
    let refused = form.update().into_command(&o).map(|_| ()).unwrap_err();
    let crate::error::ApiError::Validation(e) = refused.uncoded() else {
        panic!("a 422");
    };
    assert_eq!(form_problems(&e)[0].0, "default_tax_behavior");
}
