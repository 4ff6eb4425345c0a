use crate::helpers::spawn_app;

#[actix_web::test]
async fn healthz_answers_200_with_json() {
    let app = spawn_app().await;
    let r = app.get("/healthz", None).await;
    r.expect(200);
    assert!(r.content_type().starts_with("application/json"));
    assert_eq!(r.body["status"], "ok");
}

#[actix_web::test]
async fn readyz_answers_200_with_json_once_started() {
    let app = spawn_app().await;
    let r = app.get("/readyz", None).await;
    r.expect(200);
    assert!(r.content_type().starts_with("application/json"));
    assert_eq!(r.body["status"], "ready");
}

#[actix_web::test]
async fn health_endpoints_need_no_credentials_and_ignore_bad_ones() {
    let app = spawn_app().await;
    app.get("/healthz", Some("garbage")).await.expect(200);
    app.get("/readyz", Some("garbage")).await.expect(200);
}

#[actix_web::test]
async fn the_bootstrap_token_file_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let app = spawn_app().await;
    let path = app.data_dir().join(tollgate::bootstrap::TOKEN_FILE);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "mode {mode:o}");
}
