use super::*;
use serde_json::json;

#[test]
fn organization_settings_leave_out_unset_keys() {
    let samples = samples();
    let full = &samples[0].1;
    assert_eq!(
        full["profile_settings"],
        json!({"enabled": true, "description": "Tools for makers",
               "links": ["https://example.com"],
               "subscribe": {"promote": true, "show_count": false, "count_free": true}})
    );
    assert_eq!(
        full["feature_settings"],
        json!({"issue_funding_enabled": false})
    );
    let bare = &samples[1].1;
    assert_eq!(bare["profile_settings"], json!({}));
    assert_eq!(bare["feature_settings"], json!({}));
    assert_eq!(bare["modified_at"], serde_json::Value::Null);
    assert_eq!(
        bare["subscription_settings"],
        json!({"allow_multiple_subscriptions": false, "allow_customer_updates": true,
               "proration_behavior": "prorate", "benefit_revocation_grace_period": 0,
               "prevent_trial_abuse": true})
    );
    // Polar's 2026 fields, from the same settings.
    assert_eq!(bare["proration_behavior"], "prorate");
    assert_eq!(bare["allow_customer_updates"], true);
    assert_eq!(bare["status"], "active");
    assert_eq!(bare["default_presentment_currency"], "usd");
}

#[test]
fn the_portal_settings_are_the_organization_s() {
    let at = chrono::DateTime::<Utc>::UNIX_EPOCH;
    let mut org = Organization::new(
        crate::domain::ids::OrganizationId::new(),
        "Acme".into(),
        "acme".into(),
        at,
    );
    let shown = |o: &Organization| {
        serde_json::to_value(OrganizationView::from(o)).unwrap_or_default()
            ["customer_portal_settings"]
            .clone()
    };
    assert_eq!(
        shown(&org),
        json!({"usage": {"show": false},
               "subscription": {"update_seats": false, "update_plan": true}})
    );
    org.customer_portal_settings = crate::domain::organization::CustomerPortalSettings {
        usage_show: true,
        update_seats: true,
        update_plan: false,
    };
    assert_eq!(
        shown(&org),
        json!({"usage": {"show": true},
               "subscription": {"update_seats": true, "update_plan": false}})
    );
}

#[test]
fn an_update_sets_the_portal_settings_or_leaves_them() {
    let at = chrono::DateTime::<Utc>::UNIX_EPOCH;
    let mut org = Organization::new(
        crate::domain::ids::OrganizationId::new(),
        "Acme".into(),
        "acme".into(),
        at,
    );
    let change = |body: Value| {
        serde_json::from_value::<OrganizationUpdate>(body)
            .map_err(|e| e.to_string())
            .and_then(|u| u.into_command(&org).map_err(|e| format!("{e:?}")))
    };
    let off = change(json!({"customer_portal_settings": {"usage": {"show": true},
        "subscription": {"update_seats": false, "update_plan": false}}}))
    .unwrap();
    assert_eq!(
        off.customer_portal_settings,
        Some(crate::domain::organization::CustomerPortalSettings {
            usage_show: true,
            update_seats: false,
            update_plan: false,
        })
    );
    assert_eq!(
        change(json!({"customer_portal_settings": null}))
            .unwrap()
            .customer_portal_settings,
        None
    );
    assert_eq!(
        change(json!({"name": "Acme 2"}))
            .unwrap()
            .customer_portal_settings,
        None
    );
    assert!(change(json!({"customer_portal_settings": {"usage": {"show": true}}})).is_err());
    off.apply(&mut org);
    assert!(!org.customer_portal_settings.update_plan);
}
