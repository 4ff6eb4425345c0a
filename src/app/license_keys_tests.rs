//! The license-key use cases called with commands, without a server.

use super::*;
use crate::app::testing;

fn validation(org: OrganizationId, key: &str) -> ValidateKey {
    ValidateKey {
        organization_id: org,
        key: key.into(),
        activation_id: None,
        benefit_id: None,
        customer_id: None,
        increment_usage: None,
        conditions: Default::default(),
    }
}

#[actix_web::test]
async fn validating_an_unknown_key_is_not_found_with_its_reason() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let err = validate(&app, validation(org, "ACME-NOPE"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(err.reason(), Some("not_found"));
    let err = validate_as(&app, subject, validation(org, "ACME-NOPE"))
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some("not_found"));
}

#[actix_web::test]
async fn a_key_of_an_organization_out_of_reach_is_not_found() {
    let app = testing::app().await;
    let (_, subject) = testing::seller(&app).await;
    let (other, _) = testing::seller(&app).await;
    let err = validate_as(&app, subject, validation(other, "ACME-ANY"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(err.reason(), Some("not_found"));
    let err = key_for(&app, subject, LicenseKeyId::new())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
}

#[test]
fn actor_refusals_become_codes_with_the_key_s_reason() {
    let e = key_error(ActorError::Domain(LicenseKeyError::ActivationLimitReached));
    assert_eq!(e.code(), Code::NotPermitted);
    assert_eq!(
        e.reason(),
        Some(LicenseKeyError::ActivationLimitReached.code())
    );
    assert_eq!(key_error(ActorError::NotFound).reason(), Some("not_found"));
    assert_eq!(
        key_error(ActorError::AlreadyExists).code(),
        Code::AlreadyExists
    );
}
