//! Webhook endpoints' use cases called directly, with commands (no HTTP server).

use super::*;
use crate::app::testing;
use crate::domain::webhook::WebhookFormat;
use crate::error::Code;

fn new_endpoint(url: &str, secret: Option<&str>) -> NewWebhookEndpoint {
    NewWebhookEndpoint {
        organization_id: None,
        url: url.into(),
        name: None,
        secret: secret.map(str::to_string),
        format: WebhookFormat::Raw,
        events: vec!["customer.created".into()],
        api_version: None,
    }
}

fn invalid_at(err: &AppError) -> Vec<crate::error::Step> {
    match err {
        AppError::Invalid(items) => items[0].path.clone(),
        other => panic!("not invalid fields: {other:?}"),
    }
}

#[actix_web::test]
async fn an_endpoint_needs_a_reachable_url_and_a_long_secret() {
    let app = testing::app().await;
    let (_, seller) = testing::seller(&app).await;
    let err = create(&app, seller, new_endpoint("ftp://example.com/hooks", None))
        .await
        .expect_err("not http");
    assert_eq!(invalid_at(&err), field!["url"]);
    let err = create(
        &app,
        seller,
        new_endpoint("https://example.com/hooks", Some("short")),
    )
    .await
    .expect_err("a short secret");
    assert_eq!(invalid_at(&err), field!["secret"]);
    let endpoint = create(
        &app,
        seller,
        new_endpoint("https://example.com/hooks", None),
    )
    .await
    .expect("created");
    assert!(endpoint.secret.starts_with("whsec_"));
    let (_, stranger) = testing::seller(&app).await;
    let err = get(&app, stranger, endpoint.id)
        .await
        .expect_err("not theirs");
    assert_eq!(err.code(), Code::NotFound);
    let paused = update(
        &app,
        seller,
        endpoint.id,
        WebhookEndpointChange {
            enabled: Some(false),
            ..WebhookEndpointChange::default()
        },
    )
    .await
    .expect("paused");
    assert!(!paused.enabled);
}
