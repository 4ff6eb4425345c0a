//! The test harness: a real `Application` on a free port with its own data directory, a
//! reqwest client with a timeout, and typed helpers for the calls the tests make.

use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::web;
use chrono::{DateTime, Utc};
use reqwest::header::{HeaderMap, CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde_json::{json, Value};
use tempfile::TempDir;
use tollgate::auth::service::{create_user, issue_pat, new_user};
use tollgate::auth::{Scope, ScopeSet};
use tollgate::bootstrap::TOKEN_FILE;
use tollgate::config::Settings;
use tollgate::domain::ids::UserId;
use tollgate::startup::Application;
use tollgate::state::AppState;

/// Sends a request and reads the reply, which must be what the OpenAPI document says the
/// operation answers (`crate::schema::check`). Every test harness sends through this.
pub async fn send_checked(req: RequestBuilder) -> Reply {
    let (client, request) = req.build_split();
    let request = request.expect("building the request");
    let method = request.method().to_string();
    let path = request.url().path().to_string();
    let version = request
        .headers()
        .get("polar-version")
        .and_then(|v| v.to_str().ok())
        .and_then(tollgate::api::version::ApiVersion::parse);
    let reply = Reply::read(client.execute(request).await.expect("sending the request")).await;
    crate::schema::check(&method, &path, version, &reply);
    reply
}

/// Every request a test makes gives up after this long, so a stuck server fails the test
/// instead of hanging it.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct TestApp {
    /// `http://127.0.0.1:<port>`
    pub address: String,
    pub client: reqwest::Client,
    /// The bootstrap admin's token (every grantable scope).
    pub token: String,
    pub state: web::Data<AppState>,
    pub handle: ServerHandle,
    _dir: TempDir,
}

/// A response read in full: status, headers and the body as JSON (a non-JSON body becomes a
/// JSON string, so assertions can still print it).
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    pub async fn read(resp: Response) -> Reply {
        let status = resp.status();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("reading the response body");
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Reply {
            status,
            headers,
            body,
        }
    }

    pub fn header(&self, name: impl reqwest::header::AsHeaderName) -> String {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    }

    pub fn content_type(&self) -> String {
        self.header(CONTENT_TYPE)
    }

    pub fn www_authenticate(&self) -> String {
        self.header(WWW_AUTHENTICATE)
    }

    /// Asserts the status, printing the body when it differs.
    #[track_caller]
    pub fn expect(&self, status: u16) -> &Self {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.body
        );
        self
    }

    /// Asserts a documented error: the status, a JSON content type, a string `error` and a
    /// `detail`. Returns the `error` value.
    #[track_caller]
    pub fn expect_error(&self, status: u16) -> String {
        self.expect(status);
        assert!(
            self.content_type().starts_with("application/json"),
            "error without a JSON content type: {:?}; body {}",
            self.content_type(),
            self.body
        );
        let error = self.body["error"]
            .as_str()
            .unwrap_or_else(|| panic!("error body without a string `error`: {}", self.body));
        assert!(
            self.body.get("detail").is_some(),
            "error body without `detail`: {}",
            self.body
        );
        error.to_string()
    }

    /// Asserts a 422 validation error and returns its items.
    #[track_caller]
    pub fn expect_validation(&self) -> Vec<Value> {
        let error = self.expect_error(422);
        assert_eq!(error, "RequestValidationError", "body: {}", self.body);
        let items = self.body["detail"]
            .as_array()
            .unwrap_or_else(|| panic!("422 detail is not a list: {}", self.body))
            .clone();
        assert!(!items.is_empty(), "422 with no items: {}", self.body);
        for item in &items {
            assert!(item["type"].is_string(), "item without type: {item}");
            assert!(item["loc"].is_array(), "item without loc: {item}");
            assert!(item["msg"].is_string(), "item without msg: {item}");
            assert!(item.get("input").is_some(), "item without input: {item}");
        }
        items
    }

    /// Asserts a 422 with an item at `loc` and returns that item.
    #[track_caller]
    pub fn expect_invalid_at(&self, loc: Value) -> Value {
        let items = self.expect_validation();
        items
            .iter()
            .find(|i| i["loc"] == loc)
            .cloned()
            .unwrap_or_else(|| panic!("no validation error at {loc}: {}", self.body))
    }

    /// The `items` of a list response.
    #[track_caller]
    pub fn items(&self) -> Vec<Value> {
        self.body["items"]
            .as_array()
            .unwrap_or_else(|| panic!("not a list response: {}", self.body))
            .clone()
    }

    #[track_caller]
    pub fn total_count(&self) -> u64 {
        self.body["pagination"]["total_count"]
            .as_u64()
            .unwrap_or_else(|| panic!("no pagination.total_count: {}", self.body))
    }

    #[track_caller]
    pub fn max_page(&self) -> u64 {
        self.body["pagination"]["max_page"]
            .as_u64()
            .unwrap_or_else(|| panic!("no pagination.max_page: {}", self.body))
    }

    /// The `slug`s of a list response, in order.
    pub fn slugs(&self) -> Vec<String> {
        self.items()
            .iter()
            .map(|o| o["slug"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    #[track_caller]
    pub fn id(&self) -> String {
        self.body["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no id in {}", self.body))
            .to_string()
    }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(CLIENT_TIMEOUT)
        .connect_timeout(Duration::from_secs(5))
        // Below the server's keep-alive (`server.keep_alive_secs`, 5 s): a connection left
        // idle while a test starts a slow helper (a Python receiver on a loaded machine) is
        // dropped by the client, never reused as the server closes it (a request lost with
        // `IncompleteMessage`).
        .pool_idle_timeout(Duration::from_secs(2))
        .build()
        .expect("building the HTTP client")
}

/// The admin's token the first start wrote into `data_dir`.
pub fn bootstrap_token(data_dir: &std::path::Path) -> String {
    std::fs::read_to_string(data_dir.join(TOKEN_FILE))
        .expect("reading the bootstrap token")
        .trim()
        .to_string()
}

/// Starts the real application on a free loopback port over a fresh data directory.
pub async fn spawn_app() -> TestApp {
    let dir = tempfile::tempdir().expect("creating the data directory");
    let settings = Settings::for_tests(dir.path());
    spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await
}

/// Starts the real application with these settings (whose data directory is `dir`) and
/// clock (tests that move time pass a `ManualClock`).
pub async fn spawn_app_with(
    dir: TempDir,
    settings: Settings,
    clock: tollgate_actors::SharedClock,
) -> TestApp {
    let app = Application::build_with_clock(settings, clock)
        .await
        .expect("building the application");
    let port = app.port();
    let state = app.state();
    let handle = app.handle();
    actix_web::rt::spawn(async move {
        if let Err(e) = app.run_until_stopped().await {
            eprintln!("test server stopped with an error: {e:#}");
        }
    });
    let token = bootstrap_token(dir.path());
    TestApp {
        address: format!("http://127.0.0.1:{port}"),
        client: client(),
        token,
        state,
        handle,
        _dir: dir,
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // Sends the stop command now; the returned future only waits for completion.
        drop(self.handle.stop(false));
    }
}

impl TestApp {
    pub fn data_dir(&self) -> &std::path::Path {
        self._dir.path()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    pub fn request(&self, method: Method, path: &str, token: Option<&str>) -> RequestBuilder {
        let req = self.client.request(method, self.url(path));
        match token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    /// Sends a request and reads the reply, which must be what the OpenAPI document says
    /// the operation answers (`crate::schema::check`).
    pub async fn send(&self, req: RequestBuilder) -> Reply {
        send_checked(req).await
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        self.send(self.request(Method::GET, path, token)).await
    }

    pub async fn post_json(&self, path: &str, token: Option<&str>, body: &Value) -> Reply {
        self.send(self.request(Method::POST, path, token).json(body))
            .await
    }

    pub async fn patch_json(&self, path: &str, token: Option<&str>, body: &Value) -> Reply {
        self.send(self.request(Method::PATCH, path, token).json(body))
            .await
    }

    /// Creates an organization as the bootstrap admin.
    pub async fn create_org(&self, name: &str, slug: &str) -> Reply {
        self.create_org_as(&self.token, name, slug).await
    }

    pub async fn create_org_as(&self, token: &str, name: &str, slug: &str) -> Reply {
        self.post_json(
            "/v1/organizations/",
            Some(token),
            &json!({"name": name, "slug": slug}),
        )
        .await
    }

    /// Creates an organization and returns it, failing the test unless it is a 201.
    pub async fn created_org_as(&self, token: &str, name: &str, slug: &str) -> Value {
        let r = self.create_org_as(token, name, slug).await;
        r.expect(201);
        r.body
    }

    pub async fn get_org(&self, id: &str, token: &str) -> Reply {
        self.get(&format!("/v1/organizations/{id}"), Some(token))
            .await
    }

    pub async fn patch_org(&self, id: &str, token: &str, body: &Value) -> Reply {
        self.patch_json(&format!("/v1/organizations/{id}"), Some(token), body)
            .await
    }

    pub async fn list_orgs(&self, token: &str, query: &str) -> Reply {
        self.get(&format!("/v1/organizations/?{query}"), Some(token))
            .await
    }

    /// A new user (not an admin) with one personal access token holding `scopes`.
    pub async fn new_user_with_scopes(&self, email: &str, scopes: &[Scope]) -> (UserId, String) {
        let user = new_user(email, None, false, Utc::now());
        create_user(&self.state.store, &user)
            .await
            .expect("creating a user");
        let token = self.issue_token(user.id, scopes).await;
        (user.id, token)
    }

    /// Another personal access token for an existing user.
    pub async fn issue_token(&self, user: UserId, scopes: &[Scope]) -> String {
        self.issue_token_expiring(user, scopes, None).await
    }

    pub async fn issue_token_expiring(
        &self,
        user: UserId,
        scopes: &[Scope],
        expires_at: Option<DateTime<Utc>>,
    ) -> String {
        let scopes: ScopeSet = scopes.iter().copied().collect();
        let (_, token) = issue_pat(
            &self.state.store,
            &self.state.hasher,
            user,
            scopes,
            "test",
            expires_at,
        )
        .await
        .expect("issuing a personal access token");
        token
    }
}

/// A timestamp as the wire conventions require: RFC 3339, UTC (`Z` or `+00:00`).
#[track_caller]
pub fn assert_utc_timestamp(value: &Value) {
    let s = value
        .as_str()
        .unwrap_or_else(|| panic!("timestamp is not a string: {value}"));
    assert!(
        s.ends_with('Z') || s.ends_with("+00:00"),
        "timestamp not in UTC: {s}"
    );
    DateTime::parse_from_rfc3339(s).unwrap_or_else(|e| panic!("not RFC 3339: {s}: {e}"));
}
