//! The lookups against fake registers: one actix server on a loopback port that plays
//! VIES (`/check-vat-number`) and HMRC (`/oauth/token`, `/organisations/vat/check-vat-
//! number/lookup/{vrn}`) and counts the requests each receives. No network.
//! `crate::app::tax_ids`'s tests use the same fake.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::{json, Value};

use super::*;

/// How long the fake sleeps for the "slow" numbers: far past the tests' 200 ms timeout.
const SLOW: Duration = Duration::from_secs(5);

pub(crate) const CLIENT_ID: &str = "tollgate-test-client";
pub(crate) const CLIENT_SECRET: &str = "tollgate-test-secret";

/// The fake registers and what they received.
pub(crate) struct FakeRegisters {
    pub url: String,
    state: Arc<FakeState>,
    handle: actix_web::dev::ServerHandle,
}

#[derive(Default)]
struct FakeState {
    vies: AtomicUsize,
    tokens: AtomicUsize,
    lookups: AtomicUsize,
    /// The one token HMRC takes now (the last issued, until revoked).
    live_token: Mutex<Option<String>>,
}

impl FakeRegisters {
    pub(crate) fn start() -> FakeRegisters {
        let state = Arc::new(FakeState::default());
        let shared = state.clone();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(web::Data::new(shared.clone()))
                .route("/check-vat-number", web::post().to(vies))
                .route("/oauth/token", web::post().to(token))
                .route(
                    "/organisations/vat/check-vat-number/lookup/{vrn}",
                    web::get().to(lookup),
                )
        })
        .workers(1)
        .bind(("127.0.0.1", 0))
        .expect("binding the fake registers");
        let port = server.addrs()[0].port();
        let server = server.run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        FakeRegisters {
            url: format!("http://127.0.0.1:{port}"),
            state,
            handle,
        }
    }

    /// A configuration asking both fakes, with a 200 ms timeout.
    pub(crate) fn config(&self) -> TaxConfig {
        TaxConfig {
            vies: true,
            hmrc_client_id: CLIENT_ID.into(),
            hmrc_client_secret: CLIENT_SECRET.into(),
            lookup_timeout_ms: 200,
            vies_url: self.url.clone(),
            hmrc_url: self.url.clone(),
        }
    }

    pub(crate) fn vies_requests(&self) -> usize {
        self.state.vies.load(Ordering::SeqCst)
    }

    pub(crate) fn token_requests(&self) -> usize {
        self.state.tokens.load(Ordering::SeqCst)
    }

    pub(crate) fn lookup_requests(&self) -> usize {
        self.state.lookups.load(Ordering::SeqCst)
    }

    /// HMRC stops taking the token it issued.
    pub(crate) fn revoke_token(&self) {
        *self.state.live_token.lock().unwrap() = None;
    }

    pub(crate) async fn stop(self) {
        self.handle.stop(false).await;
    }
}

/// VIES, by the number asked: registered (with and without disclosed details), not
/// registered, a member state down (as a 500 and as a 200), a slow one; Greece only
/// under `EL`.
async fn vies(state: web::Data<Arc<FakeState>>, body: web::Json<Value>) -> HttpResponse {
    state.vies.fetch_add(1, Ordering::SeqCst);
    let country = body["countryCode"].as_str().unwrap_or_default().to_string();
    let number = body["vatNumber"].as_str().unwrap_or_default().to_string();
    let error = |code: &str| json!({"actionSucceed": false, "errorWrappers": [{"error": code}]});
    if country == "GR" {
        return HttpResponse::BadRequest().json(error("INVALID_INPUT"));
    }
    let registered = |name: &str, id: Option<&str>| {
        let mut answer = json!({"countryCode": country, "vatNumber": number,
            "requestDate": "2026-11-29T10:00:00.000Z", "valid": true, "name": name,
            "address": "1 Main Street"});
        if let Some(id) = id {
            answer["requestIdentifier"] = json!(id);
        }
        HttpResponse::Ok().json(answer)
    };
    match number.as_str() {
        "136695976" | "094259216" => registered("ACME GMBH", Some("WAPIAAAAZ1234567")),
        "40303265045" => registered("---", None),
        "118619592" => HttpResponse::Ok().json(json!({"countryCode": country,
            "vatNumber": number, "requestDate": "2026-11-29T10:00:00.000Z", "valid": false,
            "name": "---", "address": "---"})),
        "125014955" => HttpResponse::InternalServerError().json(error("MS_UNAVAILABLE")),
        "168347747" => HttpResponse::Ok().json(error("GLOBAL_MAX_CONCURRENT_REQ")),
        "129304291" => {
            actix_web::rt::time::sleep(SLOW).await;
            registered("LATE GMBH", None)
        }
        _ => HttpResponse::InternalServerError().json(error("SERVICE_UNAVAILABLE")),
    }
}

/// HMRC's token endpoint: the client-credentials grant with the test application's
/// credentials only.
async fn token(
    state: web::Data<Arc<FakeState>>,
    form: web::Form<HashMap<String, String>>,
) -> HttpResponse {
    let n = state.tokens.fetch_add(1, Ordering::SeqCst) + 1;
    let field = |k: &str| form.get(k).map(String::as_str);
    if field("grant_type") != Some("client_credentials")
        || field("client_id") != Some(CLIENT_ID)
        || field("client_secret") != Some(CLIENT_SECRET)
    {
        return HttpResponse::Unauthorized().json(json!({"error": "invalid_client"}));
    }
    let token = format!("token-{n}");
    *state.live_token.lock().unwrap() = Some(token.clone());
    HttpResponse::Ok().json(json!({"access_token": token, "token_type": "bearer",
        "expires_in": 14400, "scope": "read:vat"}))
}

/// HMRC's lookup: the live bearer token and v2.0's media type, then by number:
/// registered, not registered, down, slow, and a 404 that is not HMRC's "not found".
async fn lookup(
    state: web::Data<Arc<FakeState>>,
    vrn: web::Path<String>,
    request: HttpRequest,
) -> HttpResponse {
    state.lookups.fetch_add(1, Ordering::SeqCst);
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let live = state.live_token.lock().unwrap().clone();
    if live.is_none_or(|t| header("authorization") != format!("Bearer {t}")) {
        return HttpResponse::Unauthorized()
            .json(json!({"code": "INVALID_CREDENTIALS", "message": "Invalid Authentication information provided"}));
    }
    if header("accept") != "application/vnd.hmrc.2.0+json" {
        return HttpResponse::NotAcceptable()
            .json(json!({"code": "ACCEPT_HEADER_INVALID", "message": "The accept header is missing or invalid"}));
    }
    match vrn.as_str() {
        "980780684" => HttpResponse::Ok().json(json!({
            "target": {"name": "ACME LTD", "vatNumber": "980780684",
                "address": {"line1": "1 High Street", "postcode": "SW1A 1AA", "countryCode": "GB"}},
            "processingDate": "2026-11-29T10:00:00+00:00"})),
        "100190874" => HttpResponse::NotFound().json(json!({"code": "NOT_FOUND",
            "message": "targetVrn does not match a registered company"})),
        "432525179" => HttpResponse::NotFound().json(json!({"code": "MATCHING_RESOURCE_NOT_FOUND",
            "message": "A resource with the name in the request can not be found in the API"})),
        "260311213" => {
            actix_web::rt::time::sleep(SLOW).await;
            HttpResponse::NotFound().json(json!({"code": "NOT_FOUND", "message": "late"}))
        }
        _ => HttpResponse::InternalServerError()
            .json(json!({"code": "INTERNAL_SERVER_ERROR", "message": "Unknown error"})),
    }
}

fn unknown(answer: &RegisterAnswer) -> &str {
    match answer {
        RegisterAnswer::Unknown(reason) => reason,
        other => panic!("expected no answer, got {other:?}"),
    }
}

#[actix_web::test]
async fn vies_registered_not_registered_and_down() {
    let fake = FakeRegisters::start();
    let lookup = TaxIdLookup::new(&fake.config()).unwrap();
    assert!(lookup.has_vies() && lookup.has_hmrc());

    assert_eq!(
        lookup.vies("DE", "136695976").await,
        RegisterAnswer::Valid {
            consultation: Some("WAPIAAAAZ1234567".into()),
            name: Some("ACME GMBH".into()),
        }
    );
    // A name VIES does not disclose ("---") and no consultation number: none.
    assert_eq!(
        lookup.vies("FR", "40303265045").await,
        RegisterAnswer::Valid {
            consultation: None,
            name: None
        }
    );
    assert_eq!(
        lookup.vies("DE", "118619592").await,
        RegisterAnswer::Invalid
    );
    let reason = lookup.vies("DE", "125014955").await;
    assert!(unknown(&reason).contains("MS_UNAVAILABLE"), "{reason:?}");
    let reason = lookup.vies("DE", "168347747").await;
    assert!(
        unknown(&reason).contains("GLOBAL_MAX_CONCURRENT_REQ"),
        "{reason:?}"
    );
    // Greece is EL to VIES: the caller maps it; GR is refused like VIES refuses it.
    assert!(matches!(
        lookup.vies("EL", "094259216").await,
        RegisterAnswer::Valid { .. }
    ));
    let reason = lookup.vies("GR", "094259216").await;
    assert!(unknown(&reason).contains("INVALID_INPUT"), "{reason:?}");
    assert_eq!(fake.vies_requests(), 7);
    fake.stop().await;
}

#[actix_web::test]
async fn a_register_slower_than_the_timeout_is_no_answer() {
    let fake = FakeRegisters::start();
    let lookup = TaxIdLookup::new(&fake.config()).unwrap();
    let reason = lookup.vies("DE", "129304291").await;
    assert!(unknown(&reason).contains("VIES"), "{reason:?}");
    let reason = lookup.hmrc("260311213").await;
    assert!(unknown(&reason).contains("HMRC"), "{reason:?}");
    assert_eq!(fake.vies_requests(), 1);
    assert_eq!(fake.lookup_requests(), 1);
    fake.stop().await;
}

#[actix_web::test]
async fn an_unreachable_register_is_no_answer() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = format!("http://127.0.0.1:{port}");
    let lookup = TaxIdLookup::new(&TaxConfig {
        vies: true,
        hmrc_client_id: CLIENT_ID.into(),
        hmrc_client_secret: CLIENT_SECRET.into(),
        lookup_timeout_ms: 1000,
        vies_url: closed.clone(),
        hmrc_url: closed,
    })
    .unwrap();
    assert!(unknown(&lookup.vies("DE", "136695976").await).contains("VIES"));
    assert!(unknown(&lookup.hmrc("980780684").await).contains("HMRC token"));
}

#[actix_web::test]
async fn hmrc_token_then_lookup_registered_not_registered_and_down() {
    let fake = FakeRegisters::start();
    let lookup = TaxIdLookup::new(&fake.config()).unwrap();

    assert_eq!(
        lookup.hmrc("980780684").await,
        RegisterAnswer::Valid {
            consultation: None,
            name: Some("ACME LTD".into()),
        }
    );
    assert_eq!(lookup.hmrc("100190874").await, RegisterAnswer::Invalid);
    let reason = lookup.hmrc("653599494").await;
    assert!(unknown(&reason).contains("500"), "{reason:?}");
    // A 404 that is not HMRC's "not registered" (a wrong base URL, the platform's own
    // answer) proves nothing.
    let reason = lookup.hmrc("432525179").await;
    assert!(unknown(&reason).contains("404"), "{reason:?}");
    // One token for the four lookups.
    assert_eq!(fake.token_requests(), 1);
    assert_eq!(fake.lookup_requests(), 4);
    fake.stop().await;
}

#[actix_web::test]
async fn a_refused_token_is_replaced_once() {
    let fake = FakeRegisters::start();
    let lookup = TaxIdLookup::new(&fake.config()).unwrap();
    assert!(matches!(
        lookup.hmrc("980780684").await,
        RegisterAnswer::Valid { .. }
    ));
    fake.revoke_token();
    assert!(matches!(
        lookup.hmrc("980780684").await,
        RegisterAnswer::Valid { .. }
    ));
    assert_eq!(fake.token_requests(), 2);
    assert_eq!(fake.lookup_requests(), 3);
    fake.stop().await;
}

#[actix_web::test]
async fn wrong_hmrc_credentials_are_no_answer() {
    let fake = FakeRegisters::start();
    let lookup = TaxIdLookup::new(&TaxConfig {
        hmrc_client_secret: "not-the-secret".into(),
        ..fake.config()
    })
    .unwrap();
    let reason = lookup.hmrc("980780684").await;
    assert!(unknown(&reason).contains("HMRC token: 401"), "{reason:?}");
    assert_eq!(fake.lookup_requests(), 0);
    fake.stop().await;
}

#[actix_web::test]
async fn registers_not_configured_are_not_asked() {
    let fake = FakeRegisters::start();
    let lookup = TaxIdLookup::new(&TaxConfig {
        vies: false,
        hmrc_client_id: String::new(),
        hmrc_client_secret: String::new(),
        ..fake.config()
    })
    .unwrap();
    assert!(!lookup.has_vies() && !lookup.has_hmrc());
    unknown(&lookup.vies("DE", "136695976").await);
    unknown(&lookup.hmrc("980780684").await);
    assert_eq!(fake.vies_requests() + fake.token_requests(), 0);
    fake.stop().await;
}
