//! Retention: dead short-lived records are purged with their index entries and unique
//! keys once the grace period has passed, live ones never; and the per-user caps on OAuth
//! clients and personal access tokens hold, also under concurrent creates.

use chrono::{DateTime, Duration, Utc};
use reqwest::Method;
use serde_json::json;
use tollgate::auth::service::new_pat;
use tollgate::config::Settings;
use tollgate::domain::customer_session::CustomerSession;
use tollgate::domain::ids::{
    BrowserSessionId, CustomerId, CustomerSessionId, OAuth2TokenId, OrganizationId, TokenFamilyId,
    UserId,
};
use tollgate::domain::oauth2::{AuthorizationCode, BrowserSession, OAuth2Token, OAuthSub};
use tollgate::domain::pat::PersonalAccessToken;
use tollgate::domain::scope::ScopeSet;
use tollgate::retention::purge;
use tollgate_actors::ManualClock;
use tollgate_storage::{Batch, Expect, Record};

use crate::helpers::{spawn_app_with, TestApp};
use crate::oauth::{signed_in, REDIRECT};

fn code(expires_at: DateTime<Utc>, user: UserId, n: u8) -> AuthorizationCode {
    AuthorizationCode {
        code_hash: vec![n; 32],
        client_id: "client".into(),
        redirect_uri: REDIRECT.into(),
        redirect_uri_sent: true,
        scopes: ScopeSet::empty(),
        sub: OAuthSub::User(user),
        user_id: user,
        nonce: None,
        code_challenge: None,
        auth_time: expires_at - Duration::minutes(5),
        created_at: expires_at - Duration::minutes(5),
        expires_at,
    }
}

fn session(expires_at: DateTime<Utc>, user: UserId, n: u8) -> BrowserSession {
    BrowserSession {
        id: BrowserSessionId::new(),
        token_hash: vec![n; 32],
        user_id: user,
        auth_time: expires_at - Duration::days(7),
        expires_at,
    }
}

fn token(now: DateTime<Utc>, user: UserId, n: u8) -> OAuth2Token {
    OAuth2Token {
        id: OAuth2TokenId::new(),
        family: TokenFamilyId::new(),
        client_id: "client".into(),
        sub: OAuthSub::User(user),
        user_id: user,
        scopes: ScopeSet::empty(),
        access_token_hash: vec![n; 32],
        refresh_token_hash: Some(vec![n.wrapping_add(100); 32]),
        issued_at: now,
        expires_at: now + Duration::hours(1),
        auth_time: now,
        access_revoked_at: None,
        refresh_revoked_at: None,
        rotated_at: None,
    }
}

async fn put<R: Record>(app: &TestApp, records: &[R]) {
    let mut batch = Batch::new();
    for r in records {
        batch.put(r, Expect::Absent).unwrap();
    }
    app.state.store.commit_durable(&batch).await.unwrap();
}

async fn exists<R: Record>(app: &TestApp, r: &R) -> bool {
    app.state
        .store
        .get::<R>(&r.id_key())
        .await
        .unwrap()
        .is_some()
}

#[actix_web::test]
async fn dead_records_are_purged_after_the_grace_period_and_live_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings.retention.grace_hours = 24;
    let t0 = Utc::now();
    let (clock, shared) = ManualClock::shared(t0);
    let app = spawn_app_with(dir, settings, shared).await;
    let user = UserId::new();

    // Dead from the start: an unused code, an ended session, a revoked token pair, a
    // rotated refresh token whose access token expires within the hour, a deleted and an
    // expired personal access token, an ended customer session.
    let dead_code = code(t0, user, 1);
    let live_code = code(t0 + Duration::days(30), user, 2);
    let dead_session = session(t0, user, 3);
    let live_session = session(t0 + Duration::days(30), user, 4);
    let mut revoked = token(t0, user, 5);
    revoked.refresh_revoked_at = Some(t0);
    let mut rotated = token(t0, user, 6);
    rotated.rotated_at = Some(t0);
    let live_refresh = token(t0, user, 7);
    let hasher = &app.state.hasher;
    let (mut deleted_pat, _) = new_pat(hasher, user, ScopeSet::empty(), "d", None, t0);
    deleted_pat.deleted_at = Some(t0);
    let (expired_pat, _) = new_pat(
        hasher,
        user,
        ScopeSet::empty(),
        "e",
        Some(t0 + Duration::hours(1)),
        t0,
    );
    let (forever_pat, _) = new_pat(hasher, user, ScopeSet::empty(), "f", None, t0);
    let customer_session = CustomerSession {
        id: CustomerSessionId::new(),
        customer_id: CustomerId::new(),
        organization_id: OrganizationId::new(),
        token_hash: vec![9; 32],
        created_at: t0 - Duration::hours(1),
        expires_at: t0,
        purchase: None,
    };
    put(&app, &[dead_code.clone(), live_code.clone()]).await;
    put(&app, &[dead_session.clone(), live_session.clone()]).await;
    put(
        &app,
        &[revoked.clone(), rotated.clone(), live_refresh.clone()],
    )
    .await;
    put(
        &app,
        &[
            deleted_pat.clone(),
            expired_pat.clone(),
            forever_pat.clone(),
        ],
    )
    .await;
    put(&app, std::slice::from_ref(&customer_session)).await;

    // An unexchanged code has no grace period: it goes at the first purge after it
    // expired (nothing can use it; a loop over the consent page must not fill the disk).
    let report = purge(&app.state).await.unwrap();
    assert_eq!(
        (report.authorization_codes, report.total()),
        (1, 1),
        "{report:?}"
    );
    assert!(!exists(&app, &dead_code).await && exists(&app, &live_code).await);

    // Within the grace period nothing else goes.
    clock.advance(Duration::hours(23));
    assert_eq!(purge(&app.state).await.unwrap().total(), 0);

    // One hour into the grace period of everything dead since t0; the expired PAT and
    // the rotated token (dead one hour later) wait one more hour.
    clock.advance(Duration::hours(1));
    let report = purge(&app.state).await.unwrap();
    assert_eq!(report.authorization_codes, 0, "{report:?}");
    assert_eq!(report.browser_sessions, 1, "{report:?}");
    assert_eq!(report.customer_sessions, 1, "{report:?}");
    assert_eq!(report.oauth2_tokens, 1, "{report:?}");
    assert_eq!(report.personal_access_tokens, 1, "{report:?}");
    assert!(!exists(&app, &dead_code).await && exists(&app, &live_code).await);
    assert!(!exists(&app, &dead_session).await && exists(&app, &live_session).await);
    assert!(!exists(&app, &revoked).await && exists(&app, &rotated).await);
    assert!(!exists(&app, &deleted_pat).await && exists(&app, &expired_pat).await);
    assert!(!exists(&app, &customer_session).await);

    clock.advance(Duration::hours(1));
    let report = purge(&app.state).await.unwrap();
    assert_eq!(
        (report.oauth2_tokens, report.personal_access_tokens),
        (1, 1),
        "{report:?}"
    );
    assert!(!exists(&app, &rotated).await && !exists(&app, &expired_pat).await);
    // What may still be used stays, however old.
    clock.advance(Duration::days(365));
    purge(&app.state).await.unwrap();
    assert!(exists(&app, &live_refresh).await && exists(&app, &forever_pat).await);

    // The unique keys and index entries went with the records.
    let store = &app.state.store;
    assert!(store
        .lookup_unique(&BrowserSession::token_key(&dead_session.token_hash))
        .await
        .unwrap()
        .is_none());
    assert!(store
        .lookup_unique(&OAuth2Token::access_key(&revoked.access_token_hash))
        .await
        .unwrap()
        .is_none());
    assert!(store
        .lookup_unique(&PersonalAccessToken::token_key(&expired_pat.token_hash))
        .await
        .unwrap()
        .is_none());
    assert!(store
        .lookup_unique(&OAuth2Token::access_key(&live_refresh.access_token_hash))
        .await
        .unwrap()
        .is_some());
    for report in [
        store.verify_indexes::<OAuth2Token>().await.unwrap(),
        store.verify_indexes::<PersonalAccessToken>().await.unwrap(),
        store.verify_indexes::<BrowserSession>().await.unwrap(),
        store.verify_indexes::<CustomerSession>().await.unwrap(),
    ] {
        assert!(report.is_clean(), "{report:?}");
    }
}

#[actix_web::test]
async fn a_user_cannot_hold_more_personal_access_tokens_or_clients_than_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings.retention.max_personal_access_tokens_per_user = 3;
    settings.retention.max_oauth_clients_per_user = 2;
    let app = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let browser = signed_in(&app, "capped@example.com").await;
    let pats = "/v1/personal_access_tokens/";
    let body = json!({"comment": "ci", "scopes": ["orders:read"]});

    // Ten at once: exactly the cap succeeds.
    let attempts = (0..10).map(|_| browser.api(Method::POST, pats, Some(&body)));
    let replies = futures_util::future::join_all(attempts).await;
    let created = replies.iter().filter(|r| r.status == 201).count();
    let refused: Vec<_> = replies.iter().filter(|r| r.status == 403).collect();
    assert_eq!((created, refused.len()), (3, 7), "{replies:?}");
    assert_eq!(refused[0].body["error"], "NotPermitted");
    assert!(
        refused[0].body["detail"]
            .as_str()
            .unwrap()
            .contains("limit of 3"),
        "{}",
        refused[0].body
    );
    // Deleting one makes room for one.
    let list = browser.api(Method::GET, pats, None).await;
    let id = list.body["items"][0]["id"].as_str().unwrap().to_string();
    browser
        .api(Method::DELETE, &format!("{pats}{id}"), None)
        .await
        .expect(204);
    browser
        .api(Method::POST, pats, Some(&body))
        .await
        .expect(201);
    browser
        .api(Method::POST, pats, Some(&body))
        .await
        .expect(403);

    let client = json!({"client_name": "App", "redirect_uris": [REDIRECT]});
    let attempts = (0..6).map(|_| browser.api(Method::POST, "/v1/oauth2/register", Some(&client)));
    let replies = futures_util::future::join_all(attempts).await;
    let statuses: Vec<u16> = replies.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        2,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 403).count(),
        4,
        "{statuses:?}"
    );

    // The cap is per user: another user is not affected.
    let other = signed_in(&app, "other@example.com").await;
    other.api(Method::POST, pats, Some(&body)).await.expect(201);
    other
        .api(Method::POST, "/v1/oauth2/register", Some(&client))
        .await
        .expect(200);
}

#[actix_web::test]
async fn the_purge_runs_on_its_own_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings.retention.interval_secs = 1;
    settings.retention.grace_hours = 1;
    let t0 = Utc::now();
    let (clock, shared) = ManualClock::shared(t0);
    let app = spawn_app_with(dir, settings, shared).await;
    let dead = session(t0, UserId::new(), 1);
    put(&app, std::slice::from_ref(&dead)).await;
    clock.advance(Duration::hours(2));
    // The background purge (every second here) removes it without being called.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while exists(&app, &dead).await {
        assert!(
            std::time::Instant::now() < deadline,
            "the scheduled purge did not run"
        );
        actix_web::rt::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    app.get("/readyz", None).await.expect(200);
}
