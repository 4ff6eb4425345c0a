//! The organization use cases called directly, with commands (no HTTP server).

use super::*;
use crate::app::testing;
use crate::error::{AppError, Code};
use crate::field;

fn new_org(slug: &str) -> NewOrganization {
    NewOrganization {
        name: "Another Org".into(),
        slug: slug.into(),
        avatar_url: None,
        issue_funding_enabled: None,
        subscription_settings: None,
        default_presentment_currency: None,
    }
}

fn invalid_at(err: &AppError) -> Vec<crate::error::Step> {
    match err {
        AppError::Invalid(items) => items[0].path.clone(),
        other => panic!("not invalid fields: {other:?}"),
    }
}

#[actix_web::test]
async fn a_taken_slug_is_an_invalid_slug() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let taken = get(&app, subject, org)
        .await
        .expect("its own organization")
        .slug;
    let err = create(&app, subject, new_org(&taken))
        .await
        .expect_err("the slug is taken");
    assert_eq!(err.code(), Code::Invalid);
    assert_eq!(invalid_at(&err), field!["slug"]);
    let created = create(&app, subject, new_org("a-free-slug"))
        .await
        .expect("a free slug");
    assert_eq!(created.slug, "a-free-slug");
}

#[actix_web::test]
async fn only_a_user_creates_and_only_a_member_changes() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let err = create(&app, Subject::Organization(org), new_org("token-made"))
        .await
        .expect_err("an organization token creates no organization");
    assert_eq!(err.code(), Code::Unauthorized);
    let (_, stranger) = testing::seller(&app).await;
    let change = OrganizationChange {
        name: Some("Hijacked".into()),
        ..OrganizationChange::default()
    };
    let err = update(&app, stranger, org, change.clone())
        .await
        .expect_err("not a member");
    assert_eq!(err.code(), Code::NotFound);
    let changed = update(&app, subject, org, change).await.expect("a member");
    assert_eq!(changed.name, "Hijacked");
}

#[actix_web::test]
async fn a_per_user_limit_needs_a_total_one_at_least_as_high() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let per_user_alone = OrganizationChange {
        per_user_monthly_spending_limit: Some(Some(100)),
        ..OrganizationChange::default()
    };
    let err = update(&app, subject, org, per_user_alone.clone())
        .await
        .expect_err("no total limit");
    assert_eq!(invalid_at(&err), field!["per_user_monthly_spending_limit"]);
    let total = OrganizationChange {
        total_monthly_spending_limit: Some(Some(1000)),
        ..OrganizationChange::default()
    };
    update(&app, subject, org, total).await.expect("a total");
    let changed = update(&app, subject, org, per_user_alone)
        .await
        .expect("fits the stored total");
    assert_eq!(changed.per_user_monthly_spending_limit, Some(100));
}
