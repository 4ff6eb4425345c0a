use tollgate_actors::domain::customer::Address;
use tollgate_actors::domain::tax_settings::Registration;
use tollgate_actors::tax::{Buyer, TaxabilityReason};

use super::*;
use crate::app::testing;

fn address(country: &str) -> Option<Address> {
    Some(Address {
        country: country.into(),
        ..Address::default()
    })
}

fn request(amount: i64, country: &str) -> TaxRequest {
    let mut r = TaxRequest::new(
        amount,
        "usd",
        chrono::NaiveDate::from_ymd_opt(2026, 3, 1).expect("a date"),
    );
    r.buyer = Buyer::at(address(country));
    r
}

fn german_seller(org: &mut Organization) {
    org.tax.country = Some("DE".into());
    org.tax.tax_id =
        Some(crate::domain::customer::validate_tax_id("DE136695976", "DE").expect("a number"));
    org.tax.registrations = vec![Registration::EuOss];
    org.tax.provider = TaxProvider::Builtin;
}

#[test]
fn prices_are_exclusive_without_tax_and_follow_the_location_with_it() {
    let mut org = Organization::new(
        OrganizationId::new(),
        "Acme".into(),
        "acme".into(),
        chrono::Utc::now(),
    );
    assert_eq!(behavior_of(&org, None, Some("DE")), TaxBehavior::Exclusive);
    german_seller(&mut org);
    assert_eq!(behavior_of(&org, None, Some("DE")), TaxBehavior::Inclusive);
    assert_eq!(behavior_of(&org, None, Some("US")), TaxBehavior::Exclusive);
    assert_eq!(
        behavior_of(&org, Some(TaxBehaviorOption::Exclusive), Some("DE")),
        TaxBehavior::Exclusive
    );
    org.default_tax_behavior = TaxBehaviorOption::Inclusive;
    assert_eq!(behavior_of(&org, None, Some("US")), TaxBehavior::Inclusive);
}

#[actix_web::test]
async fn the_sellers_provider_answers() {
    let app = testing::app().await;
    let mut org = Organization::new(
        OrganizationId::new(),
        "Acme".into(),
        "acme".into(),
        chrono::Utc::now(),
    );
    // No settings: no tax, whoever buys.
    let q = quote_for(&app, &org, None, request(1190, "FR"))
        .await
        .expect("a quote");
    assert_eq!((q.tax_amount, q.total_amount()), (0, 1190));
    // A German seller registered for the OSS: a French consumer pays French VAT, inside
    // the price.
    german_seller(&mut org);
    let q = quote_for(&app, &org, None, request(1200, "FR"))
        .await
        .expect("a quote");
    assert_eq!(
        (q.net_amount(), q.tax_amount, q.total_amount()),
        (1000, 200, 1200)
    );
    assert_eq!(q.breakdown[0].reason, TaxabilityReason::StandardRated);
    assert_eq!(q.request.seller.country.as_deref(), Some("DE"));
    // A US buyer: exclusive, nothing collected.
    let q = quote_for(&app, &org, None, request(1000, "US"))
        .await
        .expect("a quote");
    assert_eq!((q.tax_amount, q.total_amount()), (0, 1000));
    // Stripe Tax on a server without it: refused, nothing quoted.
    org.tax.provider = TaxProvider::Stripe;
    assert!(quote_for(&app, &org, None, request(1000, "FR"))
        .await
        .is_err());
}

/// A provider that never answers in time.
struct Down;

impl crate::payments::TaxService for Down {
    fn quote(&self, _: TaxRequest) -> crate::payments::tax::TaxFuture {
        Box::pin(async { Err(crate::payments::TaxError::failed("no answer within 15s")) })
    }
}

#[actix_web::test]
async fn a_stripe_tax_failure_refuses_as_a_failed_calculation_and_the_builtin_as_unavailable() {
    let mut org = Organization::new(
        OrganizationId::new(),
        "Acme".into(),
        "acme".into(),
        chrono::Utc::now(),
    );
    german_seller(&mut org);
    let services = TaxServices::new(std::sync::Arc::new(Down), Some(std::sync::Arc::new(Down)));
    org.tax.provider = TaxProvider::Stripe;
    let e = quote_with(&services, &org, None, request(1000, "FR"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::TaxCalculationFailed);
    assert_eq!(e.code().status(), 502);
    assert!(e.to_string().contains("Nothing was charged"), "{e}");
    // The built-in path is unchanged: its service failing is unavailability.
    org.tax.provider = TaxProvider::Builtin;
    let e = quote_with(&services, &org, None, request(1000, "FR"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unavailable);
    // Stripe Tax on a server without it: unavailable too (a configuration of the server,
    // not the provider's failure).
    org.tax.provider = TaxProvider::Stripe;
    let e = quote_with(&TaxServices::builtin(), &org, None, request(1000, "FR"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unavailable);
    // Nothing to tax is not asked.
    let services = TaxServices::new(std::sync::Arc::new(Down), Some(std::sync::Arc::new(Down)));
    let q = quote_with(&services, &org, None, request(0, "FR"))
        .await
        .expect("zero, unasked");
    assert_eq!(q.tax_amount, 0);
}

/// A provider that cannot place any buyer (Stripe's `customer_tax_location_invalid`).
struct Nowhere;

impl crate::payments::TaxService for Nowhere {
    fn quote(&self, _: TaxRequest) -> crate::payments::tax::TaxFuture {
        Box::pin(async {
            Err(crate::payments::TaxError::location(
                "Stripe Tax /v1/tax/calculations: 400",
                "The customer's location could not be determined.",
            ))
        })
    }
}

#[actix_web::test]
async fn an_address_the_provider_cannot_place_is_a_422_at_the_billing_address() {
    let mut org = Organization::new(
        OrganizationId::new(),
        "Acme".into(),
        "acme".into(),
        chrono::Utc::now(),
    );
    german_seller(&mut org);
    org.tax.provider = TaxProvider::Stripe;
    let services = TaxServices::new(
        std::sync::Arc::new(Down),
        Some(std::sync::Arc::new(Nowhere)),
    );
    let e = quote_with(&services, &org, None, request(1000, "FR"))
        .await
        .unwrap_err();
    assert!(is_location_refusal(&e), "{e:?}");
    assert_eq!(e.code().status(), 422);
    assert_eq!(
        e.messages(),
        vec!["customer billing address: The customer's location could not be determined."]
    );
    // A failure is not one; nor is another field's 422.
    let down = TaxServices::new(std::sync::Arc::new(Down), Some(std::sync::Arc::new(Down)));
    let e = quote_with(&down, &org, None, request(1000, "FR"))
        .await
        .unwrap_err();
    assert!(!is_location_refusal(&e));
    let other = AppError::invalid(crate::field!["customer_tax_id"], "Invalid tax ID.", "x");
    assert!(!is_location_refusal(&other));
}
