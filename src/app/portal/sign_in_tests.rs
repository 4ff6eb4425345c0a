use super::*;
use crate::app::testing;

#[actix_web::test]
async fn an_unknown_code_is_refused_with_its_code() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let err = authenticate(&app, "ABC123", None).await.unwrap_err();
    assert_eq!(err.code(), Code::CustomerSessionCodeInvalidOrExpired);

    let expected = Expected {
        organization_id: org,
        email: "nobody@example.com",
        client: std::net::IpAddr::from([127, 0, 0, 1]),
    };
    let err = authenticate(&app, "not a code", Some(expected))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::CustomerSessionCodeInvalidOrExpired);
}
