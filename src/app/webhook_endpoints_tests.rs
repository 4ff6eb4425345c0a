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

/// A new endpoint of `seller`'s organization at https://example.com/hooks.
async fn hooked(app: &AppState, seller: Subject) -> WebhookEndpoint {
    create(app, seller, new_endpoint("https://example.com/hooks", None))
        .await
        .expect("created")
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
    let endpoint = hooked(&app, seller).await;
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

/// Polar's `generate_token`: zlib's CRC32 (the check value of "123456789" is 0xCBF43926)
/// in base62, padded to six.
#[test]
fn secrets_have_polars_format() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
    assert_eq!(crc32_base62(0), "000000");
    assert_eq!(crc32_base62(61), "00000z");
    assert_eq!(crc32_base62(62), "000010");
    assert_eq!(crc32_base62(u32::MAX), "4gfFC3");
    let a = generate_secret();
    let b = generate_secret();
    assert_ne!(a, b);
    for s in [&a, &b] {
        assert_eq!(s.len(), 49, "{s}");
        let tail = s.strip_prefix("whsec_").expect("the prefix");
        assert!(tail.chars().all(|c| c.is_ascii_alphanumeric()), "{s}");
        let (token, check) = tail.split_at(37);
        assert_eq!(check, crc32_base62(crc32(token.as_bytes())));
    }
}

#[actix_web::test]
async fn rotating_gives_a_new_secret_only_to_the_owner() {
    let app = testing::app().await;
    let (_, seller) = testing::seller(&app).await;
    let endpoint = hooked(&app, seller).await;
    assert_eq!(endpoint.secret.len(), 49);
    let (_, stranger) = testing::seller(&app).await;
    let err = rotate_secret(&app, stranger, endpoint.id)
        .await
        .expect_err("not theirs");
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(
        get(&app, seller, endpoint.id).await.expect("kept").secret,
        endpoint.secret,
        "a refused rotation changes nothing"
    );
    let rotated = rotate_secret(&app, seller, endpoint.id)
        .await
        .expect("rotated");
    assert_ne!(rotated.secret, endpoint.secret);
    assert_eq!(rotated.secret.len(), 49);
    assert!(rotated.modified_at.is_some());
    assert_eq!(
        get(&app, seller, endpoint.id).await.expect("stored").secret,
        rotated.secret
    );
    assert_eq!(
        (rotated.url, rotated.events, rotated.enabled),
        (endpoint.url, endpoint.events, endpoint.enabled),
        "only the secret changes"
    );
    let err = rotate_secret(&app, seller, WebhookEndpointId::new())
        .await
        .expect_err("unknown");
    assert_eq!(err.code(), Code::NotFound);
}

#[actix_web::test]
async fn a_payload_apart_is_loaded_and_a_missing_one_reads_as_archived() {
    let app = testing::app().await;
    let (org, seller) = testing::seller(&app).await;
    let endpoint = hooked(&app, seller).await;
    let event = |n: u128| WebhookEvent {
        event_type: "customer.created".into(),
        resource: format!("customer:{n}"),
        // Settled: the endpoint's worker leaves it alone (a pending one it would attempt,
        // and rewrite, while the test reads it).
        state: WebhookEventState::Succeeded,
        payload_apart: true,
        ..testing::webhook_event(
            &app,
            org,
            endpoint.id,
            n,
            format!(r#"{{"type":"customer.created","n":{n}}}"#),
        )
    };
    let (kept, lost) = (event(1), event(2));
    let mut batch = Batch::new();
    for e in [&kept, &lost] {
        batch.put(e, Expect::Absent).unwrap();
    }
    batch
        .put(&kept.payload_record().unwrap(), Expect::Absent)
        .unwrap();
    app.store.commit_durable(&batch).await.unwrap();

    let mut read = app
        .store
        .get::<WebhookEvent>(&kept.id.key())
        .await
        .unwrap()
        .unwrap()
        .value;
    assert_eq!(read.payload, "", "not stored with the event");
    load_payload(&app, &mut read).await.unwrap();
    assert_eq!(read, kept);

    let mut read = app
        .store
        .get::<WebhookEvent>(&lost.id.key())
        .await
        .unwrap()
        .unwrap()
        .value;
    load_payload(&app, &mut read).await.unwrap();
    assert!(read.archived);
    assert_eq!(read.payload, "");
}
