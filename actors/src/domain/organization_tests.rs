//! Tests of organizations: slugs, the stored record (golden bytes), changes.

use super::*;
use chrono::TimeZone;

#[test]
fn slugs_polar_accepts() {
    assert_eq!(
        parse_slug("polar-software-inc").unwrap(),
        "polar-software-inc"
    );
    assert_eq!(parse_slug("slug-with-dashes").unwrap(), "slug-with-dashes");
    assert_eq!(parse_slug("Acme-42").unwrap(), "acme-42");
}

#[test]
fn slugs_polar_rejects() {
    assert_eq!(parse_slug(""), Err(SlugError::TooShort));
    assert_eq!(parse_slug("a"), Err(SlugError::TooShort));
    assert_eq!(parse_slug("ab"), Err(SlugError::TooShort));
    assert_eq!(
        parse_slug("Polar Software Inc 🌀"),
        Err(SlugError::NotASlug)
    );
    assert_eq!(parse_slug("slug/with/slashes"), Err(SlugError::NotASlug));
    assert_eq!(parse_slug("-abc"), Err(SlugError::NotASlug));
    assert_eq!(parse_slug("abc-"), Err(SlugError::NotASlug));
    assert_eq!(parse_slug("a--b"), Err(SlugError::NotASlug));
    assert_eq!(parse_slug("café"), Err(SlugError::NotASlug));
    for r in RESERVED_SLUGS {
        assert_eq!(parse_slug(r), Err(SlugError::Reserved), "{r}");
    }
    assert_eq!(parse_slug("Dashboard"), Err(SlugError::Reserved));
}

#[test]
fn round_trip_and_golden_prefix() {
    let org = Organization::new(
        OrganizationId(uuid::Uuid::from_u128(7)),
        "Acme".into(),
        "acme".into(),
        Utc.timestamp_opt(0, 0).unwrap(),
    );
    let v7 = org.encode().unwrap();
    assert_eq!(Organization::decode(7, &v7).unwrap(), org);
    // Version 6 is version 7 without the embed hosts and the default locale at the end
    // (none and `en` when read).
    let tail = tollgate_storage::codec::encode(&(Vec::<String>::new(), DEFAULT_LOCALE))
        .unwrap()
        .len();
    let v6 = v7[..v7.len() - tail].to_vec();
    assert_eq!(Organization::decode(6, &v6).unwrap(), org);
    let framed = Organization {
        embed_hosts: vec!["shop.example.com".into(), "*.example.org".into()],
        default_locale: "de".into(),
        ..org.clone()
    };
    assert_eq!(
        Organization::decode(7, &framed.encode().unwrap()).unwrap(),
        framed
    );
    let mut change = OrganizationChange {
        embed_hosts: Some(vec!["localhost:3000".into()]),
        ..Default::default()
    };
    let mut changed = framed.clone();
    change.apply(&mut changed);
    assert_eq!(changed.embed_hosts, vec!["localhost:3000".to_string()]);
    assert_eq!(changed.default_locale, "de");
    change.default_locale = Some("ja".into());
    change.apply(&mut changed);
    assert_eq!(changed.default_locale, "ja");
    // Version 5 is version 6 without the default presentment currency at the end (US
    // dollars when read).
    let v5 = v6[..v6.len() - 4].to_vec();
    let tail_hex: String = v6[v6.len() - 4..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(tail_hex, "03757364");
    assert_eq!(Organization::decode(5, &v5).unwrap(), org);
    let euro = Organization {
        default_presentment_currency: Currency::EUR,
        ..org.clone()
    };
    assert_eq!(
        Organization::decode(7, &euro.encode().unwrap()).unwrap(),
        euro
    );
    assert!(Organization::decode(5, &euro.encode().unwrap()).is_err());
    // Version 4 is version 5 without the tax settings and the default tax behaviour at
    // the end (no tax, `location` when read).
    let tail = tollgate_storage::codec::encode(&(TaxSettings::none(), TaxBehaviorOption::Location))
        .unwrap()
        .len();
    let bytes = v5[..v5.len() - tail].to_vec();
    let tail_hex: String = v5[v5.len() - tail..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(tail_hex, "00000000000000000100");
    assert_eq!(Organization::decode(4, &bytes).unwrap(), org);
    let mut taxed = org.clone();
    taxed.tax.country = Some("DE".into());
    taxed.tax.registrations = vec![super::super::tax_settings::Registration::EuOss];
    taxed.default_tax_behavior = TaxBehaviorOption::Exclusive;
    assert_eq!(
        Organization::decode(7, &taxed.encode().unwrap()).unwrap(),
        taxed
    );
    assert_eq!(org.customer_portal_settings, CustomerPortalSettings::NEW);
    assert!(org.customer_portal_settings.update_plan);
    // Version 3 is version 4 without the three portal settings at the end (all off
    // when read), version 2 also without `prevent_trial_abuse` (on when read),
    // version 1 also without the notification and refund settings.
    let upgraded = Organization {
        customer_portal_settings: CustomerPortalSettings::UPGRADED,
        ..org.clone()
    };
    let v3 = &bytes[..bytes.len() - 3];
    assert_eq!(Organization::decode(3, v3).unwrap(), upgraded);
    assert!(
        !Organization::decode(3, v3)
            .unwrap()
            .customer_portal_settings
            .update_plan
    );
    let v2 = &bytes[..bytes.len() - 4];
    assert_eq!(Organization::decode(2, v2).unwrap(), upgraded);
    let v1 = &bytes[..bytes.len() - 7];
    assert_eq!(Organization::decode(1, v1).unwrap(), upgraded);
    let mut copies = org.clone();
    copies.notification_settings.new_order = true;
    copies.prevent_trial_abuse = false;
    copies.customer_portal_settings = CustomerPortalSettings {
        usage_show: true,
        update_seats: true,
        update_plan: false,
    };
    let back = Organization::decode(7, &copies.encode().unwrap()).unwrap();
    assert!(back.notification_settings.new_order);
    assert!(!back.prevent_trial_abuse);
    assert_eq!(
        back.customer_portal_settings,
        copies.customer_portal_settings
    );
    // Pin the format: id (len 16 + bytes), then the timestamp string.
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        hex,
        "100000000000000000000000000000000714313937302d30312d30315430303a30303a30305a00\
         0441636d650461636d6500000000000000fba00f0000000000000000000000000000000101000000000001\
         000001"
    );
}
