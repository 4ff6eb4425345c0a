//! Unit tests of `stripe.rs`: the intents' forms, statuses and signatures.

use super::*;

fn request(token: Option<&str>) -> ChargeRequest {
    ChargeRequest {
        idempotency_key: "k".into(),
        amount: 1500,
        currency: "USD".into(),
        confirmation_token: token.map(Into::into),
        setup_future_usage: false,
        off_session: false,
        customer_id: CustomerId::new(),
        customer_email: "buyer@example.com".into(),
        customer_name: None,
        metadata: vec![("checkout_id".into(), "c-1".into())],
    }
}

fn value<'a>(form: &'a [(String, String)], key: &str) -> Option<&'a str> {
    form.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

#[test]
fn the_page_allows_stripe_js_origin_and_no_other_script() {
    let s = page_sources("https://js.stripe.com/v3/", "https://api.stripe.com");
    assert_eq!(s.script, ["https://js.stripe.com"]);
    assert_eq!(
        s.connect,
        ["https://js.stripe.com", "https://api.stripe.com"]
    );
    assert_eq!(
        s.frame,
        [
            "https://js.stripe.com",
            "https://*.js.stripe.com",
            "https://hooks.stripe.com"
        ]
    );
    // A fake serving both: its origin, once.
    let s = page_sources(
        "http://127.0.0.1:8420/js.stripe.com/v3/",
        "http://127.0.0.1:8420",
    );
    assert_eq!(s.script, ["http://127.0.0.1:8420"]);
    assert_eq!(s.connect, ["http://127.0.0.1:8420"]);
    assert_eq!(s.frame, ["http://127.0.0.1:8420"]);
    // Nothing usable: nothing allowed.
    assert_eq!(
        page_sources("data:text/javascript,1", "https://api.stripe.com"),
        PageSources::default()
    );
}

#[test]
fn a_confirmation_token_is_sent_as_one_and_a_payment_method_as_payment_method() {
    let form = intent_form(&request(Some("ctoken_123")), "cus_1", None);
    assert_eq!(value(&form, "confirmation_token"), Some("ctoken_123"));
    assert_eq!(value(&form, "payment_method"), None);
    let form = intent_form(&request(Some("pm_123")), "cus_1", None);
    assert_eq!(value(&form, "payment_method"), Some("pm_123"));
    assert_eq!(value(&form, "confirmation_token"), None);
    assert_eq!(value(&form, "amount"), Some("1500"));
    assert_eq!(value(&form, "currency"), Some("usd"));
    assert_eq!(value(&form, "customer"), Some("cus_1"));
    assert_eq!(value(&form, "confirm"), Some("true"));
    assert_eq!(value(&form, "metadata[checkout_id]"), Some("c-1"));
}

#[test]
fn recurring_prices_keep_the_method_and_renewals_charge_it_off_session() {
    let mut r = request(Some("ctoken_1"));
    assert_eq!(
        value(&intent_form(&r, "cus_1", None), "setup_future_usage"),
        None
    );
    r.setup_future_usage = true;
    let form = intent_form(&r, "cus_1", None);
    assert_eq!(value(&form, "setup_future_usage"), Some("off_session"));
    assert_eq!(value(&form, "off_session"), None);
    r.off_session = true;
    r.confirmation_token = Some("pm_saved".into());
    let form = intent_form(&r, "cus_1", None);
    assert_eq!(value(&form, "off_session"), Some("true"));
    assert_eq!(value(&form, "payment_method"), Some("pm_saved"));
    // Stripe refuses setup_future_usage together with off_session.
    assert_eq!(value(&form, "setup_future_usage"), None);
}

#[test]
fn a_trial_saves_a_card_for_off_session_use_by_the_customer() {
    let form = setup_form(&request(Some("pm_123")), "cus_1", None);
    assert_eq!(value(&form, "customer"), Some("cus_1"));
    assert_eq!(value(&form, "usage"), Some("off_session"));
    assert_eq!(
        value(&form, "automatic_payment_methods[enabled]"),
        Some("true")
    );
    // No page to come back to: no redirect-based method.
    assert_eq!(
        value(&form, "automatic_payment_methods[allow_redirects]"),
        Some("never")
    );
    assert_eq!(value(&form, "payment_method_types[]"), None);
    assert_eq!(value(&form, "metadata[checkout_id]"), Some("c-1"));
    // Nothing to charge, and the method goes with the confirmation.
    for key in ["amount", "confirm", "payment_method", "setup_future_usage"] {
        assert_eq!(value(&form, key), None, "{key}");
    }
}

#[test]
fn a_page_s_charge_takes_the_dashboard_s_methods_and_comes_back_to_the_page() {
    let url = "https://shop.example/checkout/cs_1/confirmation";
    let form = intent_form(&request(Some("ctoken_1")), "cus_1", Some(url));
    assert_eq!(
        value(&form, "automatic_payment_methods[enabled]"),
        Some("true")
    );
    assert_eq!(
        value(&form, "automatic_payment_methods[allow_redirects]"),
        None
    );
    assert_eq!(value(&form, "return_url"), Some(url));
    // Stripe refuses payment_method_types next to automatic_payment_methods.
    assert_eq!(value(&form, "payment_method_types[]"), None);
    // Without a page (renewals, off-session): nothing that redirects, no return_url.
    let mut r = request(Some("pm_saved"));
    r.off_session = true;
    let form = intent_form(&r, "cus_1", None);
    assert_eq!(
        value(&form, "automatic_payment_methods[enabled]"),
        Some("true")
    );
    assert_eq!(
        value(&form, "automatic_payment_methods[allow_redirects]"),
        Some("never")
    );
    assert_eq!(value(&form, "return_url"), None);
    // A SetupIntent's confirmation: the token, and where a redirect comes back.
    let confirm = setup_confirm_form(&request(Some("ctoken_2")), Some(url));
    assert_eq!(value(&confirm, "confirmation_token"), Some("ctoken_2"));
    assert_eq!(value(&confirm, "return_url"), Some(url));
    let confirm = setup_confirm_form(&request(Some("pm_2")), None);
    assert_eq!(value(&confirm, "payment_method"), Some("pm_2"));
    assert_eq!(value(&confirm, "return_url"), None);
}

fn intent(status: &str) -> PaymentIntent {
    serde_json::from_value(serde_json::json!({
        "id": "pi_1", "status": status, "client_secret": "pi_1_secret_x",
        "payment_method": "pm_1",
        "last_payment_error": {"message": "Your card was declined.", "type": "card_error"}
    }))
    .unwrap()
}

#[test]
fn intent_statuses_map_to_outcomes() {
    assert_eq!(
        intent("succeeded").outcome(),
        ChargeOutcome::Succeeded {
            intent_id: "pi_1".into(),
            payment_method: Some("pm_1".into())
        }
    );
    assert_eq!(
        intent("requires_action").outcome(),
        ChargeOutcome::Pending {
            intent_id: "pi_1".into(),
            status: "requires_action".into(),
            client_secret: Some("pi_1_secret_x".into())
        }
    );
    assert!(matches!(
        intent("processing").outcome(),
        ChargeOutcome::Pending { .. }
    ));
    assert_eq!(
        intent("requires_payment_method").outcome(),
        ChargeOutcome::Declined {
            message: Some("Your card was declined.".into())
        }
    );
    assert!(matches!(
        intent("canceled").outcome(),
        ChargeOutcome::Declined { .. }
    ));
}

#[test]
fn signatures_verify_and_everything_else_is_refused() {
    let now = Utc::now();
    let body = br#"{"id":"evt_1"}"#;
    let header = sign(body, "whsec_abc", now.timestamp());
    assert_eq!(
        verify_signature(Some(&header), body, "whsec_abc", now),
        Ok(())
    );
    // Another secret, another body.
    assert_eq!(
        verify_signature(Some(&header), body, "whsec_other", now),
        Err(SignatureError::Mismatch)
    );
    assert_eq!(
        verify_signature(Some(&header), b"{}", "whsec_abc", now),
        Err(SignatureError::Mismatch)
    );
    // Too old, or from the future.
    let old = sign(
        body,
        "whsec_abc",
        now.timestamp() - SIGNATURE_TOLERANCE_SECS - 1,
    );
    assert_eq!(
        verify_signature(Some(&old), body, "whsec_abc", now),
        Err(SignatureError::Stale)
    );
    let future = sign(
        body,
        "whsec_abc",
        now.timestamp() + SIGNATURE_TOLERANCE_SECS + 1,
    );
    assert_eq!(
        verify_signature(Some(&future), body, "whsec_abc", now),
        Err(SignatureError::Stale)
    );
    assert_eq!(
        verify_signature(None, body, "whsec_abc", now),
        Err(SignatureError::Missing)
    );
    assert_eq!(
        verify_signature(Some("v1=zz"), body, "whsec_abc", now),
        Err(SignatureError::Malformed)
    );
    // One good signature among several (secret rotation) is enough.
    let good = header.split(",v1=").nth(1).unwrap();
    let t = now.timestamp();
    let rotated = format!("t={t},v1={},v1={good}", "00".repeat(32));
    assert_eq!(
        verify_signature(Some(&rotated), body, "whsec_abc", now),
        Ok(())
    );
}
