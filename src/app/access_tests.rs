//! Tenancy rules called directly (no HTTP server).

use super::*;
use crate::app::testing;
use crate::field;

fn invalid(err: &AppError) -> (&'static str, Vec<crate::error::Step>) {
    match err {
        AppError::Invalid(items) => (items[0].kind, items[0].path.clone()),
        other => panic!("not invalid fields: {other:?}"),
    }
}

#[actix_web::test]
async fn a_created_record_goes_to_an_organization_the_subject_reaches() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let (other, _) = testing::seller(&app).await;
    assert_eq!(
        organization_for_create(&app, subject, None).await.unwrap(),
        org
    );
    let err = organization_for_create(&app, subject, Some(other.0))
        .await
        .expect_err("another organization");
    assert_eq!(invalid(&err), ("value_error", field!["organization_id"]));
    let err = organization_for_create(&app, Subject::Organization(org), Some(org.0))
        .await
        .expect_err("a token names none");
    assert_eq!(
        invalid(&err),
        ("organization_token", field!["organization_id"])
    );
    let err = organization_for_create(&app, Subject::Anonymous, Some(org.0))
        .await
        .expect_err("no one");
    assert_eq!(err.code(), Code::Unauthorized);
    let err = organization_for(&app, subject, other)
        .await
        .expect_err("not a member");
    assert_eq!(err.code(), Code::NotFound);
}
