//! The OAuth2 / OIDC server end to end over HTTP: registration, the browser pages (driven
//! by form posts with a cookie-keeping client that does not follow redirects), the token,
//! introspection, revocation and userinfo endpoints, discovery and the JWKS, and OAuth
//! access tokens on the API.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{Datelike, TimeZone, Utc};
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use reqwest::StatusCode;
use serde_json::{json, Value};
use tollgate::auth::password;
use tollgate::auth::service::{create_user, new_user};
use tollgate::auth::Scope;
use tollgate::config::Settings;
use tollgate::startup::Application;
use tollgate_actors::ManualClock;

use crate::helpers::{client, send_checked, spawn_app, Reply, TestApp, CLIENT_TIMEOUT};

pub const REDIRECT: &str = "http://localhost:8000/callback";
pub const PASSWORD: &str = "correct horse battery";

/// A browser: keeps cookies, never follows redirects.
pub struct Browser {
    http: reqwest::Client,
    base: String,
    cookies: HashMap<String, String>,
    /// Headers sent with every request (`X-Forwarded-For`, `Origin`, ...).
    headers: Vec<(String, String)>,
}

pub struct Page {
    pub status: StatusCode,
    pub location: String,
    pub content_type: String,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Page {
    /// The value of a hidden or text input named `name`.
    pub fn input(&self, name: &str) -> Option<String> {
        let needle = format!("name=\"{name}\" value=\"");
        let start = self.body.find(&needle)? + needle.len();
        let end = self.body[start..].find('"')?;
        Some(self.body[start..start + end].to_string())
    }

    pub fn csrf(&self) -> String {
        self.input("csrf_token")
            .unwrap_or_else(|| panic!("no csrf_token in page:\n{}", self.body))
    }

    /// A query parameter of the `Location` header.
    pub fn location_param(&self, name: &str) -> Option<String> {
        let url = url::Url::parse(&self.location).ok()?;
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    }
}

impl Browser {
    pub fn new(app: &TestApp) -> Self {
        Self {
            http: reqwest::Client::builder()
                .timeout(CLIENT_TIMEOUT)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            base: app.address.clone(),
            cookies: HashMap::new(),
            headers: Vec::new(),
        }
    }

    /// This browser, sending `name: value` with every request.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Sets (or replaces) a cookie, as another site's script or a planted cookie would.
    pub fn set_cookie(&mut self, name: &str, value: &str) {
        self.cookies.insert(name.to_string(), value.to_string());
    }

    /// The `Cookie` header this browser sends.
    pub fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    async fn send(&mut self, mut req: reqwest::RequestBuilder) -> Page {
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let cookie: Vec<String> = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let req = if cookie.is_empty() {
            req
        } else {
            req.header(COOKIE, cookie.join("; "))
        };
        let resp = req.send().await.unwrap();
        for value in resp.headers().get_all(SET_COOKIE) {
            let value = value.to_str().unwrap();
            assert!(
                value.contains("HttpOnly"),
                "cookie without HttpOnly: {value}"
            );
            assert!(
                value.contains("SameSite=Lax"),
                "cookie without SameSite: {value}"
            );
            let pair = value.split(';').next().unwrap();
            let (k, v) = pair.split_once('=').unwrap();
            if v.is_empty() {
                self.cookies.remove(k);
            } else {
                self.cookies.insert(k.to_string(), v.to_string());
            }
        }
        let status = resp.status();
        let header = |n| {
            resp.headers()
                .get(n)
                .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        let location = header(LOCATION);
        let content_type = header(reqwest::header::CONTENT_TYPE);
        let headers = resp.headers().clone();
        Page {
            status,
            location,
            content_type,
            headers,
            body: resp.text().await.unwrap(),
        }
    }

    pub async fn get(&mut self, path: &str) -> Page {
        let url = if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{}", self.base, path)
        };
        let req = self.http.get(url);
        self.send(req).await
    }

    pub async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let req = self.http.post(format!("{}{}", self.base, path)).form(form);
        self.send(req).await
    }

    /// A request to `path` carrying this browser's cookies (its session).
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let mut req = self.http.request(method, format!("{}{}", self.base, path));
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let cookie: Vec<String> = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if cookie.is_empty() {
            req
        } else {
            req.header(COOKIE, cookie.join("; "))
        }
    }

    /// A JSON API call carrying this browser's cookies (its session), as the pages' own
    /// scripts make it: `Content-Type: application/json` on anything but a GET. Checked
    /// against the OpenAPI document like every other API call.
    pub async fn api(&self, method: reqwest::Method, path: &str, body: Option<&Value>) -> Reply {
        let get = method == reqwest::Method::GET;
        let mut req = self.request(method, path);
        if let Some(body) = body {
            req = req.json(body);
        } else if !get {
            req = req.header(reqwest::header::CONTENT_TYPE, "application/json");
        }
        send_checked(req).await
    }

    /// Signs in through the sign-in page.
    pub async fn sign_in(&mut self, email: &str, password: &str) -> Page {
        let page = self.get("/oauth2/login").await;
        let csrf = page.csrf();
        self.post(
            "/oauth2/login",
            &[
                ("csrf_token", &csrf),
                ("email", email),
                ("password", password),
                ("next", "/settings/tokens"),
            ],
        )
        .await
    }
}

/// A user who can sign in with [`PASSWORD`].
pub async fn user_with_password(app: &TestApp, email: &str) -> tollgate::domain::ids::UserId {
    let hash = password::hash(PASSWORD).unwrap();
    let user = new_user(email, Some(hash), false, Utc::now());
    create_user(&app.state.store, &user).await.unwrap();
    user.id
}

/// The user who registers the test clients.
pub const OWNER: &str = "owner@example.com";

/// A browser signed in as `email` (a user created with [`PASSWORD`] if there is none yet).
pub async fn signed_in(app: &TestApp, email: &str) -> Browser {
    let exists = app
        .state
        .store
        .lookup_unique(&tollgate::domain::user::User::email_key(email))
        .await
        .unwrap()
        .is_some();
    if !exists {
        user_with_password(app, email).await;
    }
    let mut b = Browser::new(app);
    let page = b.sign_in(email, PASSWORD).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    b
}

/// Registers a client from the browser session of [`OWNER`] (registration takes a web
/// session only); returns the registration response.
pub async fn register(app: &TestApp, body: Value) -> Reply {
    let owner = signed_in(app, OWNER).await;
    owner
        .api(reqwest::Method::POST, "/v1/oauth2/register", Some(&body))
        .await
}

/// `at_hash` computed independently of the server.
fn at_hash(token: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    let d = sha2::Sha256::digest(token.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&d[..16])
}

/// Verifies an id_token against the published JWKS and returns its claims.
async fn verified_claims(app: &TestApp, id_token: &str, aud: &str) -> Value {
    use jsonwebtoken::{decode, decode_header, Algorithm, DecodingKey, Validation};
    let kid = decode_header(id_token).unwrap().kid.expect("kid");
    let jwks = app.get("/.well-known/jwks.json", None).await;
    jwks.expect(200);
    let key = jwks.body["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kid"] == kid.as_str())
        .expect("kid published")
        .clone();
    assert!(key.get("d").is_none());
    let dk =
        DecodingKey::from_rsa_components(key["n"].as_str().unwrap(), key["e"].as_str().unwrap())
            .unwrap();
    let mut v = Validation::new(Algorithm::RS256);
    v.set_audience(&[aud]);
    v.set_issuer(&[app.address.as_str()]);
    decode::<Value>(id_token, &dk, &v).unwrap().claims
}

pub async fn registered(app: &TestApp, auth_method: &str, scope: &str) -> Value {
    let r = register(
        app,
        json!({
            "client_name": "Acme <Reader>",
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": auth_method,
            "scope": scope,
            "client_uri": "https://acme.example",
            "tos_uri": "https://acme.example/tos",
            "policy_uri": "https://acme.example/privacy",
        }),
    )
    .await;
    r.expect(200);
    r.body
}

pub fn authorize_path(client_id: &str, scope: &str, extra: &[(&str, &str)]) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    s.append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", REDIRECT)
        .append_pair("scope", scope)
        .append_pair("state", "st-1");
    for (k, v) in extra {
        s.append_pair(k, v);
    }
    format!("/oauth2/authorize?{}", s.finish())
}

/// The hidden fields of a consent page plus `action` (and optional extras).
pub fn consent_form(page: &Page, action: &str, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut form: Vec<(String, String)> = [
        "csrf_token",
        "response_type",
        "client_id",
        "redirect_uri",
        "scope",
        "state",
        "nonce",
        "prompt",
        "sub_type",
        "code_challenge",
        "code_challenge_method",
    ]
    .iter()
    .filter_map(|n| page.input(n).map(|v| (n.to_string(), v)))
    .collect();
    form.push(("action".into(), action.into()));
    for (k, v) in extra {
        form.push((k.to_string(), v.to_string()));
    }
    form
}

pub async fn post_consent(b: &mut Browser, form: &[(String, String)]) -> Page {
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    b.post("/oauth2/authorize", &pairs).await
}

/// Signs in, consents, and returns the code.
pub async fn obtain_code(
    app: &TestApp,
    b: &mut Browser,
    client_id: &str,
    scope: &str,
    extra: &[(&str, &str)],
) -> String {
    let _ = app;
    let page = b.get(&authorize_path(client_id, scope, extra)).await;
    if page.status == StatusCode::FOUND {
        return page.location_param("code").expect("code in redirect");
    }
    assert_eq!(page.status, 200, "{}", page.body);
    let consent = post_consent(b, &consent_form(&page, "allow", &[])).await;
    assert_eq!(consent.status, StatusCode::FOUND, "{}", consent.body);
    assert!(
        consent.location.starts_with(REDIRECT),
        "{}",
        consent.location
    );
    assert_eq!(consent.location_param("state").as_deref(), Some("st-1"));
    consent.location_param("code").expect("code")
}

pub async fn token_request(app: &TestApp, form: &[(&str, &str)]) -> Reply {
    // Polar's SDK sends its bearer token on the token endpoint too; it must be ignored.
    app.send(
        app.client
            .post(app.url("/v1/oauth2/token"))
            .bearer_auth("polar_pat_ignored")
            .form(form),
    )
    .await
}

fn oauth_error(r: &Reply, status: u16, error: &str) {
    assert_eq!(r.status.as_u16(), status, "body: {}", r.body);
    assert_eq!(r.body["error"], error, "body: {}", r.body);
    assert!(r.body["error_description"].is_string(), "body: {}", r.body);
}

struct Flow {
    client_id: String,
    secret: String,
    registration_token: String,
    browser: Browser,
}

async fn signed_in_flow(app: &TestApp, email: &str, method: &str, scope: &str) -> Flow {
    let client = registered(app, method, scope).await;
    user_with_password(app, email).await;
    let mut browser = Browser::new(app);
    let signed = browser.sign_in(email, PASSWORD).await;
    assert_eq!(signed.status, StatusCode::SEE_OTHER, "{}", signed.body);
    Flow {
        client_id: client["client_id"].as_str().unwrap().to_string(),
        secret: client["client_secret"].as_str().unwrap().to_string(),
        registration_token: client["registration_access_token"]
            .as_str()
            .unwrap()
            .to_string(),
        browser,
    }
}

async fn exchange(app: &TestApp, f: &Flow, code: &str) -> Reply {
    token_request(
        app,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("client_id", &f.client_id),
            ("client_secret", &f.secret),
        ],
    )
    .await
}

// ---------------------------------------------------------------- registration

#[actix_web::test]
async fn registration_validates_redirect_uris_and_scopes() {
    let app = spawn_app().await;
    for bad in ["http://example.com", "foobar", "https://example.com/cb#x"] {
        let r = register(&app, json!({"client_name": "x", "redirect_uris": [bad]})).await;
        r.expect_invalid_at(json!(["body", "redirect_uris", 0]));
    }
    let r = register(&app, json!({"client_name": "x", "redirect_uris": ["https://a.example/cb"], "scope": "openid admin"})).await;
    r.expect_invalid_at(json!(["body", "scope"]));
    let r = register(&app, json!({"client_name": "x", "redirect_uris": ["https://a.example/cb"], "scope": "openid bogus:read"})).await;
    r.expect_invalid_at(json!(["body", "scope"]));

    for ok in [
        "https://example.com",
        "http://localhost:8000/callback",
        "http://127.0.0.1:8000/callback",
    ] {
        let r = register(
            &app,
            json!({"client_name": "x", "redirect_uris": [ok], "scope": "openid email"}),
        )
        .await;
        r.expect(200);
        assert_eq!(r.body["token_endpoint_auth_method"], "client_secret_post");
        assert_eq!(r.body["scope"], "openid email");
        assert!(r.body["client_id"]
            .as_str()
            .unwrap()
            .starts_with("polar_ci_"));
        assert!(r.body["client_secret"]
            .as_str()
            .unwrap()
            .starts_with("polar_cs_"));
        assert!(r.body["registration_access_token"]
            .as_str()
            .unwrap()
            .starts_with("polar_crt_"));
        assert_eq!(r.body["client_secret_expires_at"], 0);
    }
    // The SDK's default scope list: the usage scopes are served, so kept.
    let r = register(&app, json!({"client_name": "x", "redirect_uris": ["https://a.example"], "scope": "openid events:read"})).await;
    r.expect(200);
    assert_eq!(r.body["scope"], "openid events:read");

    // Anonymous and organization tokens cannot register.
    let r = app
        .post_json(
            "/v1/oauth2/register",
            None,
            &json!({"client_name": "x", "redirect_uris": ["https://a.example"]}),
        )
        .await;
    assert_eq!(r.expect_error(401), "Unauthorized");
}

#[actix_web::test]
async fn client_configuration_needs_the_owner_or_the_registration_token() {
    use reqwest::Method;
    let app = spawn_app().await;
    let c = registered(&app, "client_secret_post", "openid email").await;
    let id = c["client_id"].as_str().unwrap();
    let rat = c["registration_access_token"].as_str().unwrap();
    let path = format!("/v1/oauth2/register/{id}");
    let owner = signed_in(&app, OWNER).await;

    let r = app.get(&path, None).await;
    oauth_error(&r, 400, "access_denied");
    let r = app.get(&path, Some("polar_crt_wrong")).await;
    oauth_error(&r, 401, "invalid_client");
    let r = app
        .get("/v1/oauth2/register/polar_ci_unknown", Some(rat))
        .await;
    oauth_error(&r, 401, "invalid_client");
    // A non-owner's browser session is refused.
    let other = signed_in(&app, "browser@example.com").await;
    let r = other.api(Method::GET, &path, None).await;
    oauth_error(&r, 401, "invalid_client");
    // The registration token and the owner's session are accepted.
    let r = app.get(&path, Some(rat)).await;
    r.expect(200);
    assert_eq!(r.body["client_id"], id);
    assert_eq!(r.body["client_secret"], "");
    let r = owner.api(Method::GET, &path, None).await;
    r.expect(200);
    assert_eq!(r.body["client_id"], id);

    let update = json!({"client_id": id, "client_name": "Renamed", "redirect_uris": ["https://new.example/cb"]});
    let r = app
        .send(app.request(Method::PUT, &path, Some(rat)).json(&update))
        .await;
    r.expect(200);
    assert_eq!(r.body["client_name"], "Renamed");
    assert_eq!(r.body["redirect_uris"], json!(["https://new.example/cb"]));
    let r = other.api(Method::PUT, &path, Some(&update)).await;
    oauth_error(&r, 401, "invalid_client");
    let r = owner
        .api(
            Method::PUT,
            &path,
            Some(&json!({"client_id": id, "client_name": "By the owner", "redirect_uris": ["https://new.example/cb"]})),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["client_name"], "By the owner");

    // The owner's list shows it; another user's list is empty; deleted clients are hidden.
    let r = owner.api(Method::GET, "/v1/oauth2/", None).await;
    r.expect(200);
    assert_eq!(r.total_count(), 1);
    assert_eq!(r.items()[0]["client_id"], id);
    let r = other.api(Method::GET, "/v1/oauth2/", None).await;
    r.expect(200);
    assert_eq!(r.total_count(), 0);
    let r = app.get("/v1/oauth2/", None).await;
    assert_eq!(r.expect_error(401), "Unauthorized");
    let r = other.api(Method::DELETE, &path, None).await;
    oauth_error(&r, 401, "invalid_client");
    let r = app
        .send(app.request(Method::DELETE, &path, Some(rat)))
        .await;
    assert_eq!(r.status, 204);
    let r = owner.api(Method::GET, "/v1/oauth2/", None).await;
    assert_eq!(r.total_count(), 0);
    let r = app.get(&path, Some(rat)).await;
    oauth_error(&r, 401, "invalid_client");
}

/// Personal access tokens (even the owner's, with every scope) and OAuth2 access tokens
/// manage no clients: registration and the list are web-session only (403
/// `insufficient_scope`), a client's configuration takes only the owner's session or that
/// client's registration token (401 `invalid_client`).
#[actix_web::test]
async fn tokens_cannot_manage_clients_only_sessions_and_registration_tokens_can() {
    use reqwest::Method;
    let app = spawn_app().await;
    let owner_id = user_with_password(&app, OWNER).await;
    let owner = signed_in(&app, OWNER).await;
    let body = json!({"client_name": "x", "redirect_uris": [REDIRECT], "scope": "openid email"});
    let r = owner
        .api(Method::POST, "/v1/oauth2/register", Some(&body))
        .await;
    r.expect(200);
    let id = r.body["client_id"].as_str().unwrap().to_string();
    let rat = r.body["registration_access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/v1/oauth2/register/{id}");
    let second = owner
        .api(Method::POST, "/v1/oauth2/register", Some(&body))
        .await;
    second.expect(200);
    let second_id = second.body["client_id"].as_str().unwrap().to_string();

    let secret = r.body["client_secret"].as_str().unwrap().to_string();

    // The owner's PAT with every grantable scope, the bootstrap admin's token, and an
    // OAuth2 access token of the owner.
    let all: Vec<Scope> = tollgate::auth::ScopeSet::all_grantable().iter().collect();
    let pat = app.issue_token(owner_id, &all).await;
    let mut flow_browser = signed_in(&app, OWNER).await;
    let code = obtain_code(&app, &mut flow_browser, &id, "openid email", &[]).await;
    let r = token_request(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &id),
            ("client_secret", &secret),
        ],
    )
    .await;
    r.expect(200);
    let access = r.body["access_token"].as_str().unwrap().to_string();
    for token in [pat.as_str(), app.token.as_str(), access.as_str()] {
        let r = app
            .post_json("/v1/oauth2/register", Some(token), &body)
            .await;
        assert_eq!(r.status, 403, "{}", r.body);
        assert_eq!(r.body["error"], "insufficient_scope", "{}", r.body);
        let r = app.get("/v1/oauth2/", Some(token)).await;
        assert_eq!(r.status, 403, "{}", r.body);
        assert_eq!(r.body["error"], "insufficient_scope", "{}", r.body);
        let r = app.get(&path, Some(token)).await;
        oauth_error(&r, 401, "invalid_client");
        let update = json!({"client_id": id, "client_name": "Hijacked", "redirect_uris": ["https://evil.example/cb"]});
        let r = app
            .send(app.request(Method::PUT, &path, Some(token)).json(&update))
            .await;
        oauth_error(&r, 401, "invalid_client");
        let r = app
            .send(app.request(Method::DELETE, &path, Some(token)))
            .await;
        oauth_error(&r, 401, "invalid_client");
    }
    // A registration token manages its own client only.
    let r = app
        .get(&format!("/v1/oauth2/register/{second_id}"), Some(&rat))
        .await;
    oauth_error(&r, 401, "invalid_client");
    let r = app
        .send(app.request(
            Method::DELETE,
            &format!("/v1/oauth2/register/{second_id}"),
            Some(&rat),
        ))
        .await;
    oauth_error(&r, 401, "invalid_client");
    let r = app.get(&path, Some(&rat)).await;
    r.expect(200);
    assert_eq!(r.body["client_name"], "x");
    // Nothing was changed by the refused calls; the owner's session sees both clients.
    let r = owner.api(Method::GET, "/v1/oauth2/", None).await;
    r.expect(200);
    assert_eq!(r.total_count(), 2);
}

/// `PUT /v1/oauth2/register/{client_id}` merges: fields left out keep their values (the
/// scope is not widened to every scope, the method not reset, links not cleared).
#[actix_web::test]
async fn client_update_merges_into_the_stored_configuration() {
    use reqwest::Method;
    let app = spawn_app().await;
    let c = registered(&app, "client_secret_basic", "openid email").await;
    let id = c["client_id"].as_str().unwrap();
    let rat = c["registration_access_token"].as_str().unwrap();
    let path = format!("/v1/oauth2/register/{id}");
    let put = |body: Value| app.send(app.request(Method::PUT, &path, Some(rat)).json(&body));
    let r = put(json!({"client_id": id, "client_name": "Renamed"})).await;
    r.expect(200);
    assert_eq!(r.body["client_name"], "Renamed");
    assert_eq!(r.body["redirect_uris"], json!([REDIRECT]));
    assert_eq!(r.body["token_endpoint_auth_method"], "client_secret_basic");
    assert_eq!(r.body["scope"], "openid email");
    assert_eq!(
        r.body["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(r.body["response_types"], json!(["code"]));
    assert_eq!(r.body["client_uri"], "https://acme.example");
    assert_eq!(r.body["tos_uri"], "https://acme.example/tos");
    assert_eq!(r.body["policy_uri"], "https://acme.example/privacy");
    assert!(r.body["modified_at"].is_string(), "{}", r.body);
    // Only the fields sent change; an empty link clears it; null keeps it.
    let r =
        put(json!({"client_id": id, "scope": "openid", "client_uri": "", "tos_uri": null})).await;
    r.expect(200);
    assert_eq!(r.body["client_name"], "Renamed");
    assert_eq!(r.body["scope"], "openid");
    assert_eq!(r.body["client_uri"], Value::Null);
    assert_eq!(r.body["tos_uri"], "https://acme.example/tos");
    // The read agrees with what the update answered.
    let r = app.get(&path, Some(rat)).await;
    r.expect(200);
    assert_eq!(r.body["scope"], "openid");
    assert_eq!(r.body["token_endpoint_auth_method"], "client_secret_basic");
    // Merged values are validated like a registration; client_id stays required.
    let r = put(json!({"client_id": id, "redirect_uris": ["http://example.com/cb"]})).await;
    r.expect_invalid_at(json!(["body", "redirect_uris", 0]));
    let r = put(json!({"client_id": id, "scope": "openid admin"})).await;
    r.expect_invalid_at(json!(["body", "scope"]));
    let r = put(json!({"client_name": "No id"})).await;
    r.expect_invalid_at(json!(["body", "client_id"]));
    let r = put(json!({"client_id": "polar_ci_other", "client_name": "Wrong id"})).await;
    r.expect_invalid_at(json!(["body", "client_id"]));
    let r = app.get(&path, Some(rat)).await;
    assert_eq!(r.body["client_name"], "Renamed");
    assert_eq!(r.body["redirect_uris"], json!([REDIRECT]));
}

/// Changing a client's redirect URIs or authentication method forgets the consents given
/// to it: the next authorization shows the consent page instead of redirecting silently.
#[actix_web::test]
async fn changing_redirect_uris_or_auth_method_asks_for_consent_again() {
    use reqwest::Method;
    let app = spawn_app().await;
    let f = signed_in_flow(
        &app,
        "consent@example.com",
        "client_secret_post",
        "openid email",
    )
    .await;
    let mut b = f.browser;
    let rat = f.registration_token.clone();
    let path = format!("/v1/oauth2/register/{}", f.client_id);
    obtain_code(&app, &mut b, &f.client_id, "openid email", &[]).await;
    // Consented: the next request redirects at once.
    let page = b
        .get(&authorize_path(&f.client_id, "openid email", &[]))
        .await;
    assert_eq!(page.status, StatusCode::FOUND, "{}", page.body);
    // A rename keeps the consent.
    let r = app
        .send(app.request(Method::PUT, &path, Some(&rat)).json(&json!({
            "client_id": f.client_id, "client_name": "Renamed", "redirect_uris": [REDIRECT],
        })))
        .await;
    r.expect(200);
    let page = b
        .get(&authorize_path(&f.client_id, "openid email", &[]))
        .await;
    assert_eq!(page.status, StatusCode::FOUND, "{}", page.body);
    // A new redirect URI list forgets it.
    let r = app
        .send(app.request(Method::PUT, &path, Some(&rat)).json(&json!({
            "client_id": f.client_id, "client_name": "Renamed",
            "redirect_uris": [REDIRECT, "https://other.example/cb"],
        })))
        .await;
    r.expect(200);
    let page = b
        .get(&authorize_path(&f.client_id, "openid email", &[]))
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.location);
    assert!(page.body.contains("csrf_token"), "{}", page.body);
    // Consent again, then change the authentication method: asked again.
    obtain_code(&app, &mut b, &f.client_id, "openid email", &[]).await;
    let page = b
        .get(&authorize_path(&f.client_id, "openid email", &[]))
        .await;
    assert_eq!(page.status, StatusCode::FOUND, "{}", page.body);
    let r = app
        .send(app.request(Method::PUT, &path, Some(&rat)).json(&json!({
            "client_id": f.client_id, "client_name": "Renamed",
            "redirect_uris": [REDIRECT, "https://other.example/cb"],
            "token_endpoint_auth_method": "client_secret_basic",
        })))
        .await;
    r.expect(200);
    assert_eq!(r.body["token_endpoint_auth_method"], "client_secret_basic");
    let page = b
        .get(&authorize_path(&f.client_id, "openid email", &[]))
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.location);
}

/// API calls authenticated by the session cookie that may change something need
/// `Content-Type: application/json` and, when the browser names them, the service's own
/// origin: a cross-site form or script gets 403 `NotPermitted`. Bearer calls are unaffected.
#[actix_web::test]
async fn cookie_authenticated_writes_must_be_same_origin_json() {
    use reqwest::header::{CONTENT_TYPE, ORIGIN};
    use reqwest::Method;
    let app = spawn_app().await;
    let b = signed_in(&app, OWNER).await;
    let pat_body = json!({"comment": "x", "scopes": ["organizations:read"]});
    let raw = serde_json::to_string(&pat_body).unwrap();
    let not_permitted = |r: &Reply| {
        assert_eq!(r.status, 403, "{}", r.body);
        assert_eq!(r.body["error"], "NotPermitted", "{}", r.body);
        assert!(r.body["detail"].is_string(), "{}", r.body);
    };
    let pats = "/v1/personal_access_tokens/";
    // No content type (a form or `fetch` with a string body), or a form's type.
    let r = send_checked(b.request(Method::POST, pats).body(raw.clone())).await;
    not_permitted(&r);
    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let r = send_checked(
            b.request(Method::POST, pats)
                .header(CONTENT_TYPE, ct)
                .body(raw.clone()),
        )
        .await;
        not_permitted(&r);
    }
    // JSON from another origin, or a browser that says the call is cross-site.
    for origin in ["https://evil.example", "null", "http://127.0.0.1:1"] {
        let r = send_checked(
            b.request(Method::POST, pats)
                .header(ORIGIN, origin)
                .json(&pat_body),
        )
        .await;
        not_permitted(&r);
    }
    for site in ["cross-site", "same-site"] {
        let r = send_checked(
            b.request(Method::POST, pats)
                .header("sec-fetch-site", site)
                .json(&pat_body),
        )
        .await;
        not_permitted(&r);
    }
    let reg = json!({"client_name": "x", "redirect_uris": [REDIRECT]});
    let r = send_checked(
        b.request(Method::POST, "/v1/oauth2/register")
            .header(ORIGIN, "https://evil.example")
            .json(&reg),
    )
    .await;
    not_permitted(&r);
    assert_eq!(b.api(Method::GET, pats, None).await.total_count(), 0);

    // Same-origin JSON works (with or without the browser's headers).
    let r = send_checked(
        b.request(Method::POST, pats)
            .header(ORIGIN, app.address.as_str())
            .header("sec-fetch-site", "same-origin")
            .json(&pat_body),
    )
    .await;
    r.expect(201);
    let pat_id = r.body["personal_access_token"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = b.api(Method::POST, "/v1/oauth2/register", Some(&reg)).await;
    r.expect(200);
    let client_path = format!(
        "/v1/oauth2/register/{}",
        r.body["client_id"].as_str().unwrap()
    );
    let update =
        json!({"client_id": r.body["client_id"], "client_name": "y", "redirect_uris": [REDIRECT]});
    // Client configuration by the owner's session follows the same rule.
    let r = send_checked(
        b.request(Method::PUT, &client_path)
            .header(ORIGIN, "https://evil.example")
            .json(&update),
    )
    .await;
    not_permitted(&r);
    let r = send_checked(b.request(Method::DELETE, &client_path)).await;
    not_permitted(&r);
    b.api(Method::PUT, &client_path, Some(&update))
        .await
        .expect(200);
    // A DELETE without a content type is refused too; with JSON it works.
    let pat_path = format!("{pats}{pat_id}");
    let r = send_checked(b.request(Method::DELETE, &pat_path)).await;
    not_permitted(&r);
    let r = b.api(Method::DELETE, &pat_path, None).await;
    assert_eq!(r.status, 204, "{}", r.body);
    // Reads need nothing more.
    let r = send_checked(
        b.request(Method::GET, pats)
            .header(ORIGIN, "https://evil.example"),
    )
    .await;
    r.expect(200);

    // Bearer calls are unaffected: no content type (read as JSON) and a foreign origin.
    let r = app
        .send(
            app.request(Method::POST, "/v1/organizations/", Some(&app.token))
                .header(ORIGIN, "https://evil.example")
                .body(r#"{"name": "Bearer Org", "slug": "bearer-org"}"#),
        )
        .await;
    r.expect(201);
}

// ---------------------------------------------------------------- pages

/// `next` after sign-in stays on these pages: tabs (`/%09/evil.com`), backslashes, `//host`
/// and absolute URLs fall back to the settings page.
#[actix_web::test]
async fn sign_in_never_redirects_off_site() {
    let app = spawn_app().await;
    user_with_password(&app, "next@example.com").await;
    for bad in [
        "/%09/evil.com",
        "/%5C/evil.com",
        "/%5Cevil.com",
        "//evil.com",
        "https://evil.com",
        "/%0a/evil.com",
    ] {
        let mut b = Browser::new(&app);
        let page = b.get(&format!("/oauth2/login?next={bad}")).await;
        assert_eq!(page.status, 200);
        assert_eq!(page.input("next").as_deref(), Some("/dashboard"), "{bad}");
        let decoded: String = form_urlencoded::parse(format!("n={bad}").as_bytes())
            .map(|(_, v)| v.into_owned())
            .collect();
        let csrf = page.csrf();
        let signed = b
            .post(
                "/oauth2/login",
                &[
                    ("csrf_token", csrf.as_str()),
                    ("email", "next@example.com"),
                    ("password", PASSWORD),
                    ("next", decoded.as_str()),
                ],
            )
            .await;
        assert_eq!(signed.status, StatusCode::SEE_OTHER, "{}", signed.body);
        assert_eq!(signed.location, "/dashboard", "{bad}");
    }
    let mut b = Browser::new(&app);
    let page = b
        .get("/oauth2/login?next=%2Foauth2%2Fauthorize%3Fx%3D1")
        .await;
    assert_eq!(page.input("next").as_deref(), Some("/oauth2/authorize?x=1"));
}

/// An HTML page may not be framed, cached or run anything (error pages included).
fn assert_page_headers(page: &Page) {
    let h = |n: &str| {
        page.headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(h("x-frame-options"), "DENY", "{:?}", page.headers);
    assert_eq!(h("cache-control"), "no-store", "{:?}", page.headers);
    let csp = h("content-security-policy");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(csp.contains("default-src 'none'"), "{csp}");
}

fn assert_html(page: &Page) {
    assert!(
        page.content_type.starts_with("text/html"),
        "{}",
        page.content_type
    );
    assert_page_headers(page);
    assert!(page.body.contains("name=\"viewport\""));
    // Crude well-formedness: every opened container element is closed.
    for tag in [
        "html", "head", "body", "main", "form", "ul", "p", "select", "label", "h1",
    ] {
        let opened = page.body.matches(&format!("<{tag}>")).count()
            + page.body.matches(&format!("<{tag} ")).count();
        let closed = page.body.matches(&format!("</{tag}>")).count();
        assert_eq!(opened, closed, "unbalanced <{tag}> in\n{}", page.body);
    }
}

#[actix_web::test]
async fn pages_render_sign_in_consent_and_organization_picker() {
    let app = spawn_app().await;
    let c = registered(
        &app,
        "client_secret_post",
        "openid email organizations:read",
    )
    .await;
    let id = c["client_id"].as_str().unwrap();
    let mut b = Browser::new(&app);

    // Not signed in: the sign-in page, returning to the request afterwards.
    let page = b.get(&authorize_path(id, "openid email", &[])).await;
    assert_eq!(page.status, 200);
    assert_html(&page);
    assert!(page.body.contains("name=\"email\""));
    assert!(page.body.contains("name=\"password\""));
    assert_eq!(page.csrf().len(), 43);
    assert!(page
        .input("next")
        .unwrap()
        .starts_with("/oauth2/authorize?"));

    let uid = user_with_password(&app, "picker@example.com").await;
    let _ = uid;
    let signed = b.sign_in("picker@example.com", PASSWORD).await;
    assert_eq!(signed.status, StatusCode::SEE_OTHER);
    let page = b.get(&authorize_path(id, "openid email", &[])).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_html(&page);
    assert!(
        page.body.contains("Acme &#60;Reader&#62;"),
        "client name escaped: {}",
        page.body
    );
    assert!(page.body.contains("https://acme.example/tos"));
    assert!(page.body.contains("https://acme.example/privacy"));
    assert!(page.body.contains("<code>openid</code>") && page.body.contains("<code>email</code>"));
    assert!(page.body.contains("value=\"allow\"") && page.body.contains("value=\"deny\""));
    assert_eq!(page.input("client_id").as_deref(), Some(id));

    // The organization picker lists the user's organizations.
    let (_, token) = app.new_user_with_scopes("x@example.com", &[]).await;
    let _ = token;
    let pat = app.issue_token(uid, &[Scope::OrganizationsWrite]).await;
    let org = app.created_org_as(&pat, "Picked", "picked-org").await;
    let page = b
        .get(&authorize_path(
            id,
            "openid",
            &[("sub_type", "organization")],
        ))
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_html(&page);
    assert!(page.body.contains("name=\"sub\""));
    assert!(page.body.contains(org["id"].as_str().unwrap()));
    assert!(page.body.contains("picked-org"));
}

/// Error pages (a refused CSRF check, a bad authorization request) carry the same
/// anti-framing and content-security headers as the pages themselves.
#[actix_web::test]
async fn error_pages_cannot_be_framed() {
    let app = spawn_app().await;
    let mut b = signed_in(&app, "frames@example.com").await;
    let page = b
        .post("/settings/tokens", &[("csrf_token", "x"), ("comment", "c")])
        .await;
    assert_eq!(page.status, 403, "{}", page.body);
    assert!(
        page.content_type.starts_with("text/html"),
        "{}",
        page.content_type
    );
    assert_page_headers(&page);
    let page = b
        .get("/oauth2/authorize?response_type=code&client_id=polar_ci_unknown")
        .await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(
        page.content_type.starts_with("text/html"),
        "{}",
        page.content_type
    );
    assert_page_headers(&page);
}

#[actix_web::test]
async fn consent_without_a_matching_csrf_token_is_refused() {
    let app = spawn_app().await;
    let mut f = signed_in_flow(&app, "csrf@example.com", "client_secret_post", "openid").await;
    let page = f
        .browser
        .get(&authorize_path(&f.client_id, "openid", &[]))
        .await;
    let mut form = consent_form(&page, "allow", &[]);
    for (k, v) in form.iter_mut() {
        if k == "csrf_token" {
            *v = "A".repeat(43);
        }
    }
    let r = post_consent(&mut f.browser, &form).await;
    assert_eq!(r.status, 403);
    assert!(r.content_type.starts_with("text/html"));
    assert!(r.body.contains("CSRF"));
    assert!(r.location.is_empty());
    // Without the field at all, and on the sign-in form too.
    form.retain(|(k, _)| k != "csrf_token");
    assert_eq!(post_consent(&mut f.browser, &form).await.status, 403);
    let r = f
        .browser
        .post(
            "/oauth2/login",
            &[("email", "csrf@example.com"), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(r.status, 403);
}

#[actix_web::test]
async fn authorize_prompts_grants_and_denials() {
    let app = spawn_app().await;
    let mut f = signed_in_flow(
        &app,
        "prompt@example.com",
        "client_secret_post",
        "openid email",
    )
    .await;
    let id = f.client_id.clone();

    // Unregistered redirect URI: an error page, never a redirect.
    let page = f
        .browser
        .get(&authorize_path(&id, "openid", &[]).replace("localhost%3A8000", "evil.example"))
        .await;
    assert_eq!(page.status, 400);
    assert!(page.location.is_empty());
    assert!(page.body.contains("redirect_uri"));
    // Scope outside the client's list, missing scope, sub_type=foo, plain PKCE.
    let page = f
        .browser
        .get(&authorize_path(&id, "openid orders:read", &[]))
        .await;
    assert_eq!(page.status, StatusCode::FOUND);
    assert_eq!(
        page.location_param("error").as_deref(),
        Some("invalid_scope")
    );
    assert_eq!(page.location_param("state").as_deref(), Some("st-1"));
    let page = f
        .browser
        .get(&format!(
            "/oauth2/authorize?response_type=code&client_id={id}"
        ))
        .await;
    assert_eq!(
        page.location_param("error").as_deref(),
        Some("invalid_scope")
    );
    let page = f
        .browser
        .get(&authorize_path(&id, "openid", &[("sub_type", "foo")]))
        .await;
    assert_eq!(page.status, 400);
    assert!(page.body.contains("sub_type"));
    let verifier = "A".repeat(43);
    let page = f
        .browser
        .get(&authorize_path(
            &id,
            "openid",
            &[
                ("code_challenge", &verifier),
                ("code_challenge_method", "plain"),
            ],
        ))
        .await;
    assert_eq!(
        page.location_param("error").as_deref(),
        Some("invalid_request")
    );
    assert!(page
        .location_param("error_description")
        .unwrap()
        .contains("code_challenge_method"));

    // prompt=none without a grant: consent_required; deny: access_denied.
    let page = f
        .browser
        .get(&authorize_path(&id, "openid", &[("prompt", "none")]))
        .await;
    assert_eq!(
        page.location_param("error").as_deref(),
        Some("consent_required")
    );
    let page = f.browser.get(&authorize_path(&id, "openid", &[])).await;
    let denied = post_consent(&mut f.browser, &consent_form(&page, "deny", &[])).await;
    assert_eq!(denied.status, StatusCode::FOUND);
    assert_eq!(
        denied.location_param("error").as_deref(),
        Some("access_denied")
    );

    // Allow, then the grant covers narrower requests: automatic redirect, also with
    // prompt=none; prompt=consent shows the page again.
    obtain_code(&app, &mut f.browser, &id, "openid email", &[]).await;
    let page = f.browser.get(&authorize_path(&id, "openid", &[])).await;
    assert_eq!(page.status, StatusCode::FOUND);
    assert!(page
        .location_param("code")
        .unwrap()
        .starts_with("polar_ac_"));
    let page = f
        .browser
        .get(&authorize_path(&id, "openid", &[("prompt", "none")]))
        .await;
    assert!(page.location_param("code").is_some());
    let page = f
        .browser
        .get(&authorize_path(&id, "openid", &[("prompt", "consent")]))
        .await;
    assert_eq!(page.status, 200);
    // prompt=login asks for the password again.
    let page = f
        .browser
        .get(&authorize_path(&id, "openid", &[("prompt", "login")]))
        .await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("name=\"password\""));
    assert!(!page.input("next").unwrap().contains("prompt"));

    // A new browser without a session: prompt=none gives login_required.
    let mut anon = Browser::new(&app);
    let page = anon
        .get(&authorize_path(&id, "openid", &[("prompt", "none")]))
        .await;
    assert_eq!(
        page.location_param("error").as_deref(),
        Some("login_required")
    );
    // A wrong password is refused.
    let r = anon.sign_in("prompt@example.com", "wrong password").await;
    assert_eq!(r.status, 401);
    assert!(r.body.contains("Invalid e-mail or password"));
}

// ---------------------------------------------------------------- token endpoint

#[actix_web::test]
async fn code_exchange_issues_tokens_with_an_id_token_and_is_single_use() {
    let app = spawn_app().await;
    let mut f = signed_in_flow(
        &app,
        "code@example.com",
        "client_secret_post",
        "openid email organizations:read",
    )
    .await;
    let code = obtain_code(
        &app,
        &mut f.browser,
        &f.client_id.clone(),
        "openid email organizations:read",
        &[("nonce", "n-0S6")],
    )
    .await;
    assert!(code.starts_with("polar_ac_"));

    // Wrong secret, wrong redirect URI (which also burns the code), replay.
    let r = token_request(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &f.client_id),
            ("client_secret", "polar_cs_wrong"),
        ],
    )
    .await;
    oauth_error(&r, 401, "invalid_client");
    let r = exchange(&app, &f, &code).await;
    r.expect(200);
    assert_eq!(r.header("cache-control"), "no-store");
    assert_eq!(r.header("pragma"), "no-cache");
    let access = r.body["access_token"].as_str().unwrap().to_string();
    assert!(access.starts_with("polar_at_u_"));
    assert!(r.body["refresh_token"]
        .as_str()
        .unwrap()
        .starts_with("polar_rt_u_"));
    assert_eq!(r.body["token_type"], "Bearer");
    assert_eq!(r.body["expires_in"], 864000);
    assert_eq!(r.body["scope"], "openid email organizations:read");
    let claims = verified_claims(&app, r.body["id_token"].as_str().unwrap(), &f.client_id).await;
    assert_eq!(claims["nonce"], "n-0S6");
    assert_eq!(claims["at_hash"], at_hash(&access));
    assert_eq!(claims["email"], "code@example.com");
    assert!(claims["auth_time"].as_i64().unwrap() <= claims["iat"].as_i64().unwrap());

    let first_code = code;
    let refresh = r.body["refresh_token"].as_str().unwrap().to_string();

    let code = obtain_code(&app, &mut f.browser, &f.client_id.clone(), "openid", &[]).await;
    let r = token_request(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", "http://localhost:8000/other"),
            ("client_id", &f.client_id),
            ("client_secret", &f.secret),
        ],
    )
    .await;
    oauth_error(&r, 400, "invalid_grant");
    assert_eq!(
        r.body["error_description"],
        "Invalid \"redirect_uri\" in request."
    );
    oauth_error(&exchange(&app, &f, &code).await, 400, "invalid_grant");

    // The access token works on the API with its scopes, and on userinfo.
    let r = app.list_orgs(&access, "").await;
    r.expect(200);
    let r = app.get("/v1/oauth2/userinfo", Some(&access)).await;
    r.expect(200);
    assert_eq!(r.body["email"], "code@example.com");
    assert_eq!(r.body["email_verified"], false);
    let r = app
        .send(app.request(reqwest::Method::POST, "/v1/oauth2/userinfo", Some(&access)))
        .await;
    r.expect(200);
    // PATs are not OAuth tokens: userinfo refuses them.
    let r = app.get("/v1/oauth2/userinfo", Some(&app.token)).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body["error"], "invalid_token");

    // The first code presented again: refused, and the tokens issued from it are revoked
    // (RFC 6749 4.1.2: one of the two presenters stole it).
    let replay = exchange(&app, &f, &first_code).await;
    oauth_error(&replay, 400, "invalid_grant");
    assert_eq!(
        replay.body["error_description"],
        "Invalid \"code\" in request."
    );
    let r = app.list_orgs(&access, "").await;
    assert_eq!(r.status, 401, "{}", r.body);
    let r = token_request(
        &app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", &f.client_id),
            ("client_secret", &f.secret),
        ],
    )
    .await;
    oauth_error(&r, 400, "invalid_grant");
}

/// A `code_verifier` sent for a code that was issued without a challenge is refused
/// (`invalid_grant`): an attacker who stripped the challenge from the authorization request
/// cannot pass the exchange off as PKCE-protected. The code is spent.
#[actix_web::test]
async fn a_verifier_for_a_code_without_a_challenge_is_refused() {
    let app = spawn_app().await;
    let mut f = signed_in_flow(
        &app,
        "downgrade@example.com",
        "client_secret_post",
        "openid",
    )
    .await;
    let id = f.client_id.clone();
    let code = obtain_code(&app, &mut f.browser, &id, "openid", &[]).await;
    let form = |code: &str| {
        vec![
            ("grant_type".to_string(), "authorization_code".to_string()),
            ("code".to_string(), code.to_string()),
            ("redirect_uri".to_string(), REDIRECT.to_string()),
            ("client_id".to_string(), f.client_id.clone()),
            ("client_secret".to_string(), f.secret.clone()),
        ]
    };
    let mut with_verifier = form(&code);
    with_verifier.push(("code_verifier".into(), "A".repeat(43)));
    let pairs: Vec<(&str, &str)> = with_verifier
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let r = token_request(&app, &pairs).await;
    oauth_error(&r, 400, "invalid_grant");
    assert!(r.body.get("access_token").is_none());
    // Spent: the same code without the verifier is refused too.
    let r = exchange(&app, &f, &code).await;
    oauth_error(&r, 400, "invalid_grant");
    // A fresh code without a verifier still works for a confidential client.
    let code = obtain_code(&app, &mut f.browser, &id, "openid", &[]).await;
    exchange(&app, &f, &code).await.expect(200);
}

/// A public client (`none`) is issued no secret (an empty `client_secret`); made
/// confidential by an update, it gets one, shown in that response, which then
/// authenticates it; made public again, the secret stops working.
#[actix_web::test]
async fn public_clients_have_no_secret_until_they_become_confidential() {
    use reqwest::Method;
    let app = spawn_app().await;
    let c = registered(&app, "none", "openid").await;
    assert_eq!(c["client_secret"], "");
    assert_eq!(c["token_endpoint_auth_method"], "none");
    let id = c["client_id"].as_str().unwrap();
    let rat = c["registration_access_token"].as_str().unwrap();
    let path = format!("/v1/oauth2/register/{id}");
    let introspect = |secret: String| {
        let form = vec![
            ("token".to_string(), "polar_at_u_unknown".to_string()),
            ("client_id".to_string(), id.to_string()),
            ("client_secret".to_string(), secret),
        ];
        app.send(
            app.client
                .post(app.url("/v1/oauth2/introspect"))
                .form(&form),
        )
    };
    // An empty secret authenticates nothing.
    oauth_error(&introspect(String::new()).await, 401, "invalid_client");
    let r = app
        .send(
            app.request(Method::PUT, &path, Some(rat)).json(
                &json!({"client_id": id, "token_endpoint_auth_method": "client_secret_post"}),
            ),
        )
        .await;
    r.expect(200);
    let secret = r.body["client_secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("polar_cs_"), "{}", r.body);
    let r = introspect(secret.clone()).await;
    r.expect(200);
    assert_eq!(r.body["active"], false);
    // Later reads and updates do not show it again.
    let r = app.get(&path, Some(rat)).await;
    assert_eq!(r.body["client_secret"], "");
    let r = app
        .send(
            app.request(Method::PUT, &path, Some(rat))
                .json(&json!({"client_id": id, "client_name": "Again"})),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["client_secret"], "");
    introspect(secret.clone()).await.expect(200);
    // Public again: the secret is gone.
    let r = app
        .send(
            app.request(Method::PUT, &path, Some(rat))
                .json(&json!({"client_id": id, "token_endpoint_auth_method": "none"})),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["client_secret"], "");
    let r = app
        .send(
            app.request(Method::PUT, &path, Some(rat)).json(
                &json!({"client_id": id, "token_endpoint_auth_method": "client_secret_post"}),
            ),
        )
        .await;
    r.expect(200);
    let newer = r.body["client_secret"].as_str().unwrap().to_string();
    assert_ne!(newer, secret);
    oauth_error(&introspect(secret).await, 401, "invalid_client");
    introspect(newer).await.expect(200);
}

#[actix_web::test]
async fn public_clients_need_s256_pkce() {
    let app = spawn_app().await;
    let mut f = signed_in_flow(&app, "pkce@example.com", "none", "openid").await;
    let id = f.client_id.clone();
    // No challenge at all.
    let page = f.browser.get(&authorize_path(&id, "openid", &[])).await;
    assert_eq!(
        page.location_param("error").as_deref(),
        Some("invalid_request")
    );
    assert_eq!(
        page.location_param("error_description").as_deref(),
        Some("Missing \"code_challenge\"")
    );

    let verifier = "A".repeat(43);
    let challenge = {
        use base64::Engine;
        use sha2::Digest;
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(sha2::Sha256::digest(verifier.as_bytes()))
    };
    let pkce = [
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
    ];
    // Mismatch.
    let code = obtain_code(&app, &mut f.browser, &id, "openid", &pkce).await;
    let r = token_request(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &id),
            ("code_verifier", &"B".repeat(43)),
        ],
    )
    .await;
    oauth_error(&r, 400, "invalid_grant");
    assert_eq!(r.body["error_description"], "Code challenge failed.");
    // Missing verifier.
    let code = obtain_code(&app, &mut f.browser, &id, "openid", &pkce).await;
    let r = token_request(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &id),
        ],
    )
    .await;
    oauth_error(&r, 400, "invalid_request");
    // Right verifier, no secret.
    let code = obtain_code(&app, &mut f.browser, &id, "openid", &pkce).await;
    let r = token_request(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &id),
            ("code_verifier", &verifier),
        ],
    )
    .await;
    r.expect(200);
    assert!(r.body["access_token"]
        .as_str()
        .unwrap()
        .starts_with("polar_at_u_"));
    // A public client may refresh (behaviour.md).
    let r = token_request(
        &app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", r.body["refresh_token"].as_str().unwrap()),
            ("client_id", &id),
        ],
    )
    .await;
    r.expect(200);
}

/// Two refreshes with the same token at once: one may win the race, but the token was
/// used twice, so the family is revoked either way (a rotation conflict counts as reuse):
/// whatever pair the winner got stops working.
#[actix_web::test]
async fn concurrent_refreshes_with_one_token_revoke_the_family() {
    let app = spawn_app().await;
    let mut f = signed_in_flow(
        &app,
        "race@example.com",
        "client_secret_post",
        "openid email",
    )
    .await;
    let code = obtain_code(
        &app,
        &mut f.browser,
        &f.client_id.clone(),
        "openid email",
        &[],
    )
    .await;
    let tokens = exchange(&app, &f, &code).await;
    tokens.expect(200);
    let rt = tokens.body["refresh_token"].as_str().unwrap().to_string();
    let form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", rt.as_str()),
        ("client_id", f.client_id.as_str()),
        ("client_secret", f.secret.as_str()),
    ];
    let (a, b) =
        futures_util::future::join(token_request(&app, &form), token_request(&app, &form)).await;
    let winners: Vec<&Reply> = [&a, &b].into_iter().filter(|r| r.status == 200).collect();
    assert!(winners.len() <= 1, "{} / {}", a.body, b.body);
    for r in [&a, &b].into_iter().filter(|r| r.status != 200) {
        oauth_error(r, 400, "invalid_grant");
    }
    for w in winners {
        let at = w.body["access_token"].as_str().unwrap();
        let r = app.get("/v1/oauth2/userinfo", Some(at)).await;
        assert_eq!(r.status, 401, "{}", r.body);
        let rt2 = w.body["refresh_token"].as_str().unwrap();
        let r = token_request(
            &app,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt2),
                ("client_id", &f.client_id),
                ("client_secret", &f.secret),
            ],
        )
        .await;
        oauth_error(&r, 400, "invalid_grant");
    }
}

#[actix_web::test]
async fn refresh_rotates_narrows_and_reuse_revokes_the_family() {
    let app = spawn_app().await;
    let mut f = signed_in_flow(
        &app,
        "refresh@example.com",
        "client_secret_basic",
        "openid email",
    )
    .await;
    let code = obtain_code(
        &app,
        &mut f.browser,
        &f.client_id.clone(),
        "openid email",
        &[],
    )
    .await;
    let basic = |app: &TestApp, form: &[(&str, &str)]| {
        app.client
            .post(app.url("/v1/oauth2/token"))
            .basic_auth(&f.client_id, Some(&f.secret))
            .form(form)
    };
    // Registered for basic: post is refused.
    oauth_error(&exchange(&app, &f, &code).await, 401, "invalid_client");
    let code = obtain_code(
        &app,
        &mut f.browser,
        &f.client_id.clone(),
        "openid email",
        &[],
    )
    .await;
    let first = app
        .send(basic(
            &app,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
            ],
        ))
        .await;
    first.expect(200);
    let rt1 = first.body["refresh_token"].as_str().unwrap().to_string();
    let at1 = first.body["access_token"].as_str().unwrap().to_string();

    // Widening is refused; narrowing works and rotates.
    let r = app
        .send(basic(
            &app,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &rt1),
                ("scope", "openid email orders:read"),
            ],
        ))
        .await;
    oauth_error(&r, 400, "invalid_scope");
    let second = app
        .send(basic(
            &app,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &rt1),
                ("scope", "openid"),
            ],
        ))
        .await;
    second.expect(200);
    assert_eq!(second.body["scope"], "openid");
    assert_eq!(second.body["expires_in"], 3600);
    assert!(second.body["id_token"].is_string());
    let rt2 = second.body["refresh_token"].as_str().unwrap().to_string();
    let at2 = second.body["access_token"].as_str().unwrap().to_string();
    assert!(rt2.starts_with("polar_rt_u_") && rt2 != rt1);
    // The rotated pair's access token is dead; the new one works.
    assert_eq!(app.get("/v1/oauth2/userinfo", Some(&at1)).await.status, 401);
    app.get("/v1/oauth2/userinfo", Some(&at2)).await.expect(200);

    // Reusing the rotated refresh token revokes the whole family.
    let r = app
        .send(basic(
            &app,
            &[("grant_type", "refresh_token"), ("refresh_token", &rt1)],
        ))
        .await;
    oauth_error(&r, 400, "invalid_grant");
    let r = app.get("/v1/oauth2/userinfo", Some(&at2)).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body["error"], "invalid_token");
    let r = app
        .send(basic(
            &app,
            &[("grant_type", "refresh_token"), ("refresh_token", &rt2)],
        ))
        .await;
    oauth_error(&r, 400, "invalid_grant");
}

/// Deleting a client ends its tokens: the access token gets 401 on the API and userinfo,
/// the refresh token is refused, and introspection no longer reports them active.
#[actix_web::test]
async fn tokens_of_a_deleted_client_stop_working() {
    use reqwest::Method;
    let app = spawn_app().await;
    let mut f = signed_in_flow(
        &app,
        "deleted@example.com",
        "client_secret_post",
        "openid email organizations:read",
    )
    .await;
    let client_id = f.client_id.clone();
    let code = obtain_code(
        &app,
        &mut f.browser,
        &client_id,
        "openid email organizations:read",
        &[],
    )
    .await;
    let tokens = exchange(&app, &f, &code).await;
    tokens.expect(200);
    let at = tokens.body["access_token"].as_str().unwrap().to_string();
    let rt = tokens.body["refresh_token"].as_str().unwrap().to_string();
    app.get("/v1/organizations/", Some(&at)).await.expect(200);
    app.get("/v1/oauth2/userinfo", Some(&at)).await.expect(200);
    let introspect = |token: String| {
        let form = vec![
            ("token".to_string(), token),
            ("client_id".to_string(), f.client_id.clone()),
            ("client_secret".to_string(), f.secret.clone()),
        ];
        app.send(
            app.client
                .post(app.url("/v1/oauth2/introspect"))
                .form(&form),
        )
    };
    let r = introspect(at.clone()).await;
    r.expect(200);
    assert_eq!(r.body["active"], true);

    let path = format!("/v1/oauth2/register/{client_id}");
    let r = app
        .send(app.request(Method::DELETE, &path, Some(&f.registration_token)))
        .await;
    assert_eq!(r.status, 204, "{}", r.body);

    let r = app.get("/v1/organizations/", Some(&at)).await;
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(r.body["error"], "invalid_token", "{}", r.body);
    let r = app.get("/v1/oauth2/userinfo", Some(&at)).await;
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(r.body["error"], "invalid_token", "{}", r.body);
    let r = token_request(
        &app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &rt),
            ("client_id", &f.client_id),
            ("client_secret", &f.secret),
        ],
    )
    .await;
    oauth_error(&r, 401, "invalid_client");
    // The deleted client cannot introspect any more; another client sees the tokens as
    // inactive.
    let r = introspect(at.clone()).await;
    oauth_error(&r, 401, "invalid_client");
    let other = registered(&app, "client_secret_post", "openid").await;
    for token in [&at, &rt] {
        let form = [
            ("token", token.as_str()),
            ("client_id", other["client_id"].as_str().unwrap()),
            ("client_secret", other["client_secret"].as_str().unwrap()),
        ];
        let r = app
            .send(
                app.client
                    .post(app.url("/v1/oauth2/introspect"))
                    .form(&form),
            )
            .await;
        r.expect(200);
        assert_eq!(r.body["active"], false, "{}", r.body);
    }
}

#[actix_web::test]
async fn introspection_and_revocation() {
    let app = spawn_app().await;
    let mut f = signed_in_flow(
        &app,
        "intro@example.com",
        "client_secret_post",
        "openid email",
    )
    .await;
    let code = obtain_code(
        &app,
        &mut f.browser,
        &f.client_id.clone(),
        "openid email",
        &[],
    )
    .await;
    let tokens = exchange(&app, &f, &code).await;
    let at = tokens.body["access_token"].as_str().unwrap().to_string();
    let rt = tokens.body["refresh_token"].as_str().unwrap().to_string();
    let post = |path: &str, form: &[(&str, &str)]| {
        app.client
            .post(app.url(path))
            .bearer_auth(&app.token)
            .form(form)
    };
    let r = app
        .send(post(
            "/v1/oauth2/introspect",
            &[
                ("token", &at),
                ("client_id", &f.client_id),
                ("client_secret", &f.secret),
            ],
        ))
        .await;
    r.expect(200);
    assert_eq!(r.body["active"], true);
    assert_eq!(r.body["token_type"], "access_token");
    assert_eq!(r.body["sub_type"], "user");
    assert_eq!(r.body["aud"], f.client_id.as_str());
    assert_eq!(r.body["iss"], app.address.as_str());
    assert_eq!(r.body["scope"], "openid email");
    let r = app
        .send(post(
            "/v1/oauth2/introspect",
            &[
                ("token", &rt),
                ("token_type_hint", "refresh_token"),
                ("client_id", &f.client_id),
                ("client_secret", &f.secret),
            ],
        ))
        .await;
    assert_eq!(r.body["token_type"], "refresh_token");
    assert_eq!(r.body["active"], true);
    // Unknown token: inactive, with every field the SDKs require.
    let r = app
        .send(post(
            "/v1/oauth2/introspect",
            &[
                ("token", "polar_at_u_nope"),
                ("client_id", &f.client_id),
                ("client_secret", &f.secret),
            ],
        ))
        .await;
    r.expect(200);
    assert_eq!(r.body["active"], false);
    for k in [
        "client_id",
        "token_type",
        "scope",
        "sub_type",
        "sub",
        "aud",
        "iss",
        "exp",
        "iat",
    ] {
        assert!(r.body.get(k).is_some(), "{k} missing: {}", r.body);
    }
    let r = app
        .send(post(
            "/v1/oauth2/introspect",
            &[
                ("token", &at),
                ("token_type_hint", "bogus"),
                ("client_id", &f.client_id),
                ("client_secret", &f.secret),
            ],
        ))
        .await;
    oauth_error(&r, 400, "unsupported_token_type");
    let r = app
        .send(post(
            "/v1/oauth2/introspect",
            &[
                ("token", &at),
                ("client_id", &f.client_id),
                ("client_secret", "polar_cs_bad"),
            ],
        ))
        .await;
    oauth_error(&r, 401, "invalid_client");

    // Another client can neither see nor revoke it.
    let other = registered(&app, "client_secret_post", "openid").await;
    let (oid, osec) = (
        other["client_id"].as_str().unwrap(),
        other["client_secret"].as_str().unwrap(),
    );
    let r = app
        .send(post(
            "/v1/oauth2/introspect",
            &[("token", &at), ("client_id", oid), ("client_secret", osec)],
        ))
        .await;
    assert_eq!(r.body["active"], false);
    let r = app
        .send(post(
            "/v1/oauth2/revoke",
            &[("token", &at), ("client_id", oid), ("client_secret", osec)],
        ))
        .await;
    oauth_error(&r, 400, "invalid_grant");

    // Revocation: unknown tokens are fine; a revoked token is refused everywhere.
    let r = app
        .send(post(
            "/v1/oauth2/revoke",
            &[
                ("token", "polar_at_u_nope"),
                ("client_id", &f.client_id),
                ("client_secret", &f.secret),
            ],
        ))
        .await;
    r.expect(200);
    assert_eq!(r.body, json!({}));
    let r = app
        .send(post(
            "/v1/oauth2/revoke",
            &[
                ("token", &rt),
                ("client_id", &f.client_id),
                ("client_secret", &f.secret),
            ],
        ))
        .await;
    r.expect(200);
    let r = app.list_orgs(&at, "").await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body["error"], "invalid_token");
    let r = app
        .send(post(
            "/v1/oauth2/introspect",
            &[
                ("token", &at),
                ("client_id", &f.client_id),
                ("client_secret", &f.secret),
            ],
        ))
        .await;
    assert_eq!(r.body["active"], false);
    let r = token_request(
        &app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &rt),
            ("client_id", &f.client_id),
            ("client_secret", &f.secret),
        ],
    )
    .await;
    oauth_error(&r, 400, "invalid_grant");
}

#[actix_web::test]
async fn organization_tokens_act_on_their_organization_only() {
    let app = spawn_app().await;
    let mut f = signed_in_flow(
        &app,
        "orgtok@example.com",
        "client_secret_post",
        "openid organizations:read organizations:write",
    )
    .await;
    let user = app
        .state
        .store
        .lookup_unique(&tollgate::domain::user::User::email_key(
            "orgtok@example.com",
        ))
        .await
        .unwrap()
        .unwrap();
    let user = tollgate::domain::ids::UserId::from_key(&user).unwrap();
    let pat = app.issue_token(user, &[Scope::OrganizationsWrite]).await;
    let mine = app.created_org_as(&pat, "Mine", "mine-org").await;
    app.created_org_as(&pat, "Second", "second-org").await;
    let mine_id = mine["id"].as_str().unwrap();

    // Choosing no organization, or one the user is not a member of: invalid_sub.
    let page = f
        .browser
        .get(&authorize_path(
            &f.client_id,
            "openid organizations:read",
            &[("sub_type", "organization")],
        ))
        .await;
    assert_eq!(page.status, 200);
    let r = post_consent(&mut f.browser, &consent_form(&page, "allow", &[])).await;
    assert_eq!(r.status, 400);
    assert!(r.body.contains("invalid_sub"), "{}", r.body);
    let foreign = app.create_org("Foreign", "foreign-org").await.body;
    let r = post_consent(
        &mut f.browser,
        &consent_form(&page, "allow", &[("sub", foreign["id"].as_str().unwrap())]),
    )
    .await;
    assert_eq!(r.status, 400);

    let r = post_consent(
        &mut f.browser,
        &consent_form(&page, "allow", &[("sub", mine_id)]),
    )
    .await;
    assert_eq!(r.status, StatusCode::FOUND, "{}", r.body);
    let code = r.location_param("code").unwrap();
    let tokens = exchange(&app, &f, &code).await;
    tokens.expect(200);
    let at = tokens.body["access_token"].as_str().unwrap().to_string();
    assert!(at.starts_with("polar_at_o_"));
    assert!(tokens.body["refresh_token"]
        .as_str()
        .unwrap()
        .starts_with("polar_rt_o_"));

    // Lists show that organization only; the other one is 404; creating is user-only.
    let r = app.list_orgs(&at, "").await;
    r.expect(200);
    assert_eq!(r.slugs(), vec!["mine-org"]);
    app.get_org(mine_id, &at).await.expect(200);
    let second = app.list_orgs(&pat, "").await;
    let second_id = second
        .items()
        .iter()
        .find(|o| o["slug"] == "second-org")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        app.get_org(&second_id, &at).await.expect_error(404),
        "ResourceNotFound"
    );
    let r = app.create_org_as(&at, "Nope", "nope-org").await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body["error"], "invalid_token");
    assert!(r.www_authenticate().contains("allowed_subjects=\"user\""));
    // Organization tokens cannot manage clients either.
    let r = app.get("/v1/oauth2/", Some(&at)).await;
    assert_eq!(r.status, 401);
    // Userinfo names the organization.
    let r = app.get("/v1/oauth2/userinfo", Some(&at)).await;
    r.expect(200);
    assert_eq!(r.body["sub"], mine_id);
    assert_eq!(r.body["name"], "mine-org");
    // Refresh keeps the organization prefixes.
    let r = token_request(
        &app,
        &[
            ("grant_type", "refresh_token"),
            (
                "refresh_token",
                tokens.body["refresh_token"].as_str().unwrap(),
            ),
            ("client_id", &f.client_id),
            ("client_secret", &f.secret),
        ],
    )
    .await;
    r.expect(200);
    assert!(r.body["access_token"]
        .as_str()
        .unwrap()
        .starts_with("polar_at_o_"));
}

#[actix_web::test]
async fn expired_tokens_and_codes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings.oauth2.signing_key_bits = 2048;
    let start = Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).unwrap();
    let (clock, shared): (Arc<ManualClock>, _) = ManualClock::shared(start);
    let app = crate::helpers::spawn_app_with(dir, settings, shared).await;

    let mut f = signed_in_flow(&app, "expiry@example.com", "client_secret_post", "openid").await;
    // A code older than 5 minutes is refused.
    let code = obtain_code(&app, &mut f.browser, &f.client_id.clone(), "openid", &[]).await;
    clock.advance(chrono::Duration::seconds(301));
    oauth_error(&exchange(&app, &f, &code).await, 400, "invalid_grant");
    // An access token past expires_in is refused on the API, userinfo and introspection.
    let code = obtain_code(&app, &mut f.browser, &f.client_id.clone(), "openid", &[]).await;
    let tokens = exchange(&app, &f, &code).await;
    tokens.expect(200);
    let at = tokens.body["access_token"].as_str().unwrap().to_string();
    app.get("/v1/oauth2/userinfo", Some(&at)).await.expect(200);
    clock.advance(chrono::Duration::seconds(864_000));
    let r = app.get("/v1/oauth2/userinfo", Some(&at)).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body["error"], "invalid_token");
    let r = app.list_orgs(&at, "").await;
    assert_eq!(r.status, 401);
    let r = app
        .send(app.client.post(app.url("/v1/oauth2/introspect")).form(&[
            ("token", at.as_str()),
            ("client_id", &f.client_id),
            ("client_secret", &f.secret),
        ]))
        .await;
    assert_eq!(r.body["active"], false);
    // The refresh token still works (it does not expire) and gives a fresh pair.
    let r = token_request(
        &app,
        &[
            ("grant_type", "refresh_token"),
            (
                "refresh_token",
                tokens.body["refresh_token"].as_str().unwrap(),
            ),
            ("client_id", &f.client_id),
            ("client_secret", &f.secret),
        ],
    )
    .await;
    r.expect(200);
}

#[actix_web::test]
async fn discovery_and_jwks() {
    let app = spawn_app().await;
    let r = app.get("/.well-known/openid-configuration", None).await;
    r.expect(200);
    assert_eq!(r.body["issuer"], app.address.as_str());
    assert_eq!(
        r.body["authorization_endpoint"],
        format!("{}/oauth2/authorize", app.address)
    );
    assert_eq!(
        r.body["token_endpoint"],
        format!("{}/v1/oauth2/token", app.address)
    );
    assert_eq!(r.body["code_challenge_methods_supported"], json!(["S256"]));
    assert!(!r.body["revocation_endpoint_auth_methods_supported"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(!r.body["introspection_endpoint_auth_methods_supported"]
        .as_array()
        .unwrap()
        .is_empty());
    let scopes = r.body["scopes_supported"].as_array().unwrap();
    assert!(
        scopes.contains(&json!("openid"))
            && !scopes.contains(&json!("admin"))
            && !scopes.contains(&json!("web_default"))
    );
    let jwks = app.get("/.well-known/jwks.json", None).await;
    jwks.expect(200);
    let keys = jwks.body["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    assert!(keys[0]["kid"].is_string());
    assert!(keys[0].get("d").is_none());
    assert_eq!(keys[0]["alg"], "RS256");
}

#[actix_web::test]
async fn personal_access_tokens_from_a_web_session() {
    let app = spawn_app().await;
    user_with_password(&app, "pat@example.com").await;
    let mut b = Browser::new(&app);
    // Not signed in: the settings page sends the browser to sign in.
    let page = b.get("/settings/tokens").await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    b.sign_in("pat@example.com", PASSWORD).await;
    let page = b.get("/settings/tokens").await;
    assert_eq!(page.status, 200);
    assert_html(&page);
    let csrf = page.csrf();
    let page = b
        .post(
            "/settings/tokens",
            &[
                ("csrf_token", &csrf),
                ("comment", "ci"),
                ("scope", "orders:read"),
                ("scope", "organizations:read"),
            ],
        )
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    let start = page.body.find("polar_pat_").expect("new token shown");
    let token = &page.body[start..start + 53];
    app.list_orgs(token, "").await.expect(200);
    // The JSON API takes the web session, not tokens.
    let r = b.get("/v1/personal_access_tokens/").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let list: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(list["pagination"]["total_count"], 1);
    let id = list["items"][0]["id"].as_str().unwrap().to_string();
    let r = app.get("/v1/personal_access_tokens/", Some(token)).await;
    assert_eq!(r.status, 403);
    // Revoke from the page: the token stops working.
    let r = b
        .post(
            &format!("/settings/tokens/{id}/revoke"),
            &[("csrf_token", &csrf)],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(app.list_orgs(token, "").await.status, 401);
    let r = b
        .post(
            &format!("/settings/tokens/{id}/revoke"),
            &[("csrf_token", "x")],
        )
        .await;
    assert_eq!(r.status, 403);
}

/// `expires_in` of a new personal access token: 1 second to ten years; a huge value is a
/// 422 at `["body", "expires_in"]`, not a crash.
#[actix_web::test]
async fn personal_access_token_expiry_is_bounded() {
    use reqwest::Method;
    let app = spawn_app().await;
    let b = signed_in(&app, "expiry@example.com").await;
    let pats = "/v1/personal_access_tokens/";
    for bad in [
        json!(10_000_000_000_000_000_i64),
        json!(i64::MAX),
        json!(315_360_001),
        json!(0),
        json!(-5),
    ] {
        let r = b
            .api(
                Method::POST,
                pats,
                Some(&json!({"comment": "x", "scopes": [], "expires_in": bad})),
            )
            .await;
        let item = r.expect_invalid_at(json!(["body", "expires_in"]));
        assert_eq!(item["input"], bad, "{item}");
    }
    // The service is still up, and the bounds themselves are accepted.
    let r = b
        .api(
            Method::POST,
            pats,
            Some(&json!({"comment": "x", "scopes": [], "expires_in": 315_360_000})),
        )
        .await;
    r.expect(201);
    let expires = r.body["personal_access_token"]["expires_at"]
        .as_str()
        .unwrap();
    assert!(
        expires.starts_with(&(Utc::now().year_ce().1 + 9).to_string())
            || expires.starts_with(&(Utc::now().year_ce().1 + 10).to_string()),
        "{expires}"
    );
    let r = b
        .api(
            Method::POST,
            pats,
            Some(&json!({"comment": "y", "scopes": [], "expires_in": 1})),
        )
        .await;
    r.expect(201);
    assert_eq!(b.api(Method::GET, pats, None).await.total_count(), 2);
}

#[actix_web::test]
async fn sign_up_creates_a_user_and_a_session() {
    let app = spawn_app().await;
    let mut b = Browser::new(&app);
    let page = b.get("/oauth2/signup?next=%2Fsettings%2Ftokens").await;
    assert_eq!(page.status, 200);
    assert_html(&page);
    let csrf = page.csrf();
    let r = b
        .post(
            "/oauth2/signup",
            &[
                ("csrf_token", &csrf),
                ("email", "new@example.com"),
                ("password", "short"),
                ("next", "/settings/tokens"),
            ],
        )
        .await;
    assert_eq!(r.status, 422);
    assert!(r.body.contains("8 to 1024"));
    let r = b
        .post(
            "/oauth2/signup",
            &[
                ("csrf_token", &csrf),
                ("email", "new@example.com"),
                ("password", PASSWORD),
                ("next", "//evil.example/"),
            ],
        )
        .await;
    // Signed up: on to the sign-in page (a taken address answers the same, see
    // tests/api/rate_limits.rs), whose `next` is safe: open redirects are not followed.
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert_eq!(r.location, "/oauth2/login?signed_up=1&next=%2Fdashboard");
    let page = b.get(&r.location).await;
    assert!(page.body.contains("Your account is ready"), "{}", page.body);
    assert_eq!(
        b.sign_in("new@example.com", PASSWORD).await.status,
        StatusCode::SEE_OTHER
    );
    assert_eq!(b.get("/settings/tokens").await.status, 200);
    // Signing out ends the session.
    let page = b.get("/settings/tokens").await;
    let r = b
        .post("/oauth2/logout", &[("csrf_token", &page.csrf())])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(
        b.get("/settings/tokens").await.status,
        StatusCode::SEE_OTHER
    );
}

#[actix_web::test]
async fn listing_clients_validates_its_query_like_every_list() {
    use reqwest::Method;
    let app = spawn_app().await;
    let owner = signed_in(&app, OWNER).await;
    let r = owner
        .api(Method::GET, "/v1/oauth2/?page=null&page=null", None)
        .await;
    let item = r.expect_invalid_at(serde_json::json!(["query", "page"]));
    assert_eq!(item["type"], "int_parsing", "{item}");
    let r = owner.api(Method::GET, "/v1/oauth2/?limit=0", None).await;
    r.expect_invalid_at(serde_json::json!(["query", "limit"]));
    let r = owner
        .api(Method::GET, "/v1/oauth2/?page=1&limit=5", None)
        .await;
    r.expect(200);
    assert_eq!(r.body["pagination"]["total_count"], 0);
}

/// The signing key is made at the first start and stored: a keyring loading the same store
/// (as a restart does) publishes the same key and makes no new one.
#[actix_web::test]
async fn the_signing_key_is_generated_at_first_start_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(dir.path());
    settings.oauth2.generate_signing_key_on_start = true;
    let application = Application::build(settings).await.unwrap();
    let state = application.state();
    let port = application.port();
    let handle = application.handle();
    actix_web::rt::spawn(application.run_until_stopped());
    // Published before any token was asked for.
    let r = client()
        .get(format!("http://127.0.0.1:{port}/.well-known/jwks.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let jwks: Value = r.json().await.unwrap();
    let keys = jwks["keys"].as_array().unwrap().clone();
    assert_eq!(keys.len(), 1, "{jwks}");
    assert_eq!(keys[0]["kty"], "RSA");
    assert!(
        keys[0].get("d").is_none(),
        "private parts published: {jwks}"
    );

    let reloaded = tollgate::auth::keys::Keyring::default();
    reloaded
        .ensure(&state.store, 2048, Utc::now())
        .await
        .unwrap();
    let again = reloaded.jwks(Utc::now());
    assert_eq!(again["keys"].as_array().unwrap().len(), 1, "{again}");
    assert_eq!(again["keys"][0]["kid"], keys[0]["kid"]);
    assert_eq!(again["keys"][0]["n"], keys[0]["n"]);
    handle.stop(true).await;
}
