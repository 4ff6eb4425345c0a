//! The dashboard's Webhooks section over HTTP, as a browser that keeps cookies and never
//! follows redirects: endpoints listed, created (the signing secret shown once, never on a
//! reload), edited, disabled and enabled, its secret rotated (the new one shown once),
//! deleted after a confirmation; an endpoint's
//! deliveries after a purchase, each attempt with the receiver's answer, and a redelivery
//! that makes a new attempt; 422 with the API's messages, 403 without the CSRF token, 404
//! for another organization's endpoints and events.

use crate::dashboard::{assert_status, main_of, unescape};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tollgate::api::webhook::WebhookEventType;
use tollgate::config::Settings;
use tollgate::domain::ids::WebhookEndpointId;
use tollgate::domain::webhook::WebhookEndpoint;
use tollgate::web::dashboard::ROUTES;

use crate::checkouts::{buyer, confirm, Api};
use crate::helpers::{spawn_app_with, TestApp};
use crate::oauth::{signed_in, Browser, Page};

/// A CSRF token of the right length that is not the browser's.
const FORGED: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const UNKNOWN: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";
/// How long a test waits for a delivery.
const DEADLINE: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------
// The app and a receiver

/// An app whose webhooks may reach loopback receivers, retrying fast.
async fn app() -> TestApp {
    let dir = tempfile::tempdir().expect("a data directory");
    let mut s = Settings::for_tests(dir.path());
    s.webhooks.allow_private_targets = true;
    s.webhooks.retry_delays_secs = vec![0.2, 0.2];
    s.webhooks.timeout_secs = 5.0;
    s.rate_limits.enabled = false;
    spawn_app_with(dir, s, tollgate_actors::SystemClock::shared()).await
}

/// A receiver on a loopback port that answers each request `200` with the body
/// `thanks <n>` (n counting from 1); returns its URL and the count.
fn receiver() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binding");
    let port = listener.local_addr().expect("an address").port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            // The headers, then the body its Content-Length announces.
            while let Ok(n) = s.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).to_lowercase();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    if buf.len() >= end + 4 + len {
                        break;
                    }
                }
            }
            let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
            let body = format!("thanks {n}");
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(answer.as_bytes());
        }
    });
    (format!("http://127.0.0.1:{port}/hook"), hits)
}

// ---------------------------------------------------------------------------------------
// Reading pages (as `dashboard.rs` does)

#[track_caller]
fn assert_html(page: &Page, status: u16) {
    assert_status(page, status);
    assert!(page.content_type.starts_with("text/html"));
    let cache = page
        .headers
        .get("cache-control")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    assert_eq!(cache, "no-store");
}

#[track_caller]
fn redirected(page: &Page) -> String {
    assert_status(page, 303);
    page.location.clone()
}

#[track_caller]
fn assert_not_found(page: &Page) {
    assert_status(page, 404);
    assert!(page.location.is_empty());
    assert!(page.content_type.starts_with("text/html"));
}

/// The text of the element with `id`, up to its first child element.
#[track_caller]
fn text_of(page: &Page, id: &str) -> String {
    let needle = format!("id=\"{id}\"");
    let at = page
        .body
        .find(&needle)
        .unwrap_or_else(|| panic!("no element #{id} in\n{}", main_of(page)));
    let rest = &page.body[at..];
    let start = rest.find('>').unwrap() + 1;
    let end = rest[start..].find('<').unwrap();
    unescape(rest[start..start + end].trim())
}

/// The lines of the form's error list.
fn errors(page: &Page) -> Vec<String> {
    let Some(at) = page.body.find(r#"<div class="error" role="alert"><ul>"#) else {
        return Vec::new();
    };
    let list = &page.body[at..];
    let list = &list[..list.find("</ul>").unwrap_or(list.len())];
    list.split("<li>")
        .skip(1)
        .map(|li| unescape(li.split("</li>").next().unwrap_or("")))
        .collect()
}

#[track_caller]
fn checked(page: &Page, id: &str) -> bool {
    let needle = format!("id=\"{id}\"");
    let at = page
        .body
        .find(&needle)
        .unwrap_or_else(|| panic!("no checkbox #{id} in\n{}", main_of(page)));
    let tag = &page.body[at..];
    tag[..tag.find('>').unwrap()].contains(" checked")
}

/// The value of the `<select name=…>`'s selected option.
#[track_caller]
fn selected(page: &Page, name: &str) -> String {
    let at = page
        .body
        .find(&format!("<select id=\"{name}\" name=\"{name}\">"))
        .unwrap_or_else(|| panic!("no select {name}"));
    let select = &page.body[at..];
    let select = &select[..select.find("</select>").unwrap()];
    let option = select
        .split("<option ")
        .find(|o| o.contains(" selected>"))
        .unwrap_or_else(|| panic!("nothing selected in {select}"));
    let start = option.find("value=\"").unwrap() + "value=\"".len();
    option[start..start + option[start..].find('"').unwrap()].to_string()
}

fn notice(page: &Page) -> Option<String> {
    let at = page.body.find(r#"<p class="notice" role="status">"#)?;
    let rest = &page.body[at..];
    let start = rest.find('>').unwrap() + 1;
    Some(unescape(&rest[start..rest.find("</p>").unwrap()]))
}

/// The endpoint ids a page links to, once each.
fn endpoint_links(page: &Page, org: &str) -> Vec<String> {
    let needle = format!("href=\"/dashboard/{org}/webhooks/");
    let mut ids: Vec<String> = Vec::new();
    for part in page.body.split(&needle).skip(1) {
        let id: String = part
            .chars()
            .take_while(|c| c.is_ascii_hexdigit() || *c == '-')
            .collect();
        if id.len() == 36 && !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// The attempts a delivery log shows for `event`.
fn attempts_of(page: &Page, event: &str) -> usize {
    page.body
        .matches(&format!("data-event=\"{event}\""))
        .count()
}

/// The ids of the events a delivery log shows, in order.
fn events_of(page: &Page) -> Vec<String> {
    page.body
        .split("<tr id=\"event-")
        .skip(1)
        .map(|p| p[..36].to_string())
        .collect()
}

fn next_link(page: &Page) -> Option<String> {
    let at = page.body.find(r#"rel="next""#)?;
    let before = &page.body[..at];
    let start = before.rfind("href=\"")? + "href=\"".len();
    let end = before[start..].find('"')?;
    Some(unescape(&before[start..start + end]))
}

// ---------------------------------------------------------------------------------------
// Driving the browser

async fn csrf_of(b: &mut Browser) -> String {
    b.get("/oauth2/login").await.csrf()
}

async fn form_post(b: &mut Browser, path: &str, fields: &[(&str, &str)]) -> Page {
    let csrf = csrf_of(b).await;
    let mut form = vec![("csrf_token", csrf.as_str())];
    form.extend_from_slice(fields);
    b.post(path, &form).await
}

/// A forged token, then none: 403 before anything is read.
async fn assert_csrf_refused(b: &mut Browser, path: &str, fields: &[(&str, &str)]) {
    let mut forged = vec![("csrf_token", FORGED)];
    forged.extend_from_slice(fields);
    for form in [forged.as_slice(), fields] {
        let page = b.post(path, form).await;
        assert_status(&page, 403);
        assert!(page.location.is_empty());
        assert!(page.body.contains("CSRF"), "{}", main_of(&page));
    }
}

/// A browser signed in as `email` with a new organization: (browser, organization id).
async fn seller(app: &TestApp, email: &str, name: &str) -> (Browser, String) {
    let mut b = signed_in(app, email).await;
    let org = new_org(&mut b, name).await;
    (b, org)
}

async fn new_org(b: &mut Browser, name: &str) -> String {
    let page = form_post(b, "/dashboard/organizations/new", &[("name", name)]).await;
    redirected(&page)
        .strip_prefix("/dashboard/")
        .expect("the new organization's page")
        .to_string()
}

/// Creates an endpoint through the form: (its id, the secret its page showed).
async fn new_endpoint(
    b: &mut Browser,
    org: &str,
    url: &str,
    events: &[&str],
    enabled: bool,
) -> (String, String) {
    let mut form = vec![("url", url), ("name", "Backend"), ("format", "raw")];
    form.extend(events.iter().map(|e| ("events", *e)));
    if enabled {
        form.push(("enabled", "on"));
    }
    let page = form_post(b, &format!("/dashboard/{org}/webhooks/new"), &form).await;
    assert_html(&page, 201);
    let ids = endpoint_links(&page, org);
    assert_eq!(ids.len(), 1, "{}", main_of(&page));
    (ids[0].clone(), text_of(&page, "webhook-secret"))
}

async fn stored(app: &TestApp, id: &str) -> Option<WebhookEndpoint> {
    let id: WebhookEndpointId = id.parse().unwrap();
    app.state
        .store
        .get::<WebhookEndpoint>(&id.key())
        .await
        .unwrap()
        .map(|s| s.value)
}

/// GETs `path` until `done` holds for the page; fails after [`DEADLINE`].
async fn poll(b: &mut Browser, path: &str, what: &str, done: impl Fn(&Page) -> bool) -> Page {
    let start = Instant::now();
    loop {
        let page = b.get(path).await;
        assert_html(&page, 200);
        if done(&page) {
            return page;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no {what} on {path} within {DEADLINE:?}:\n{}",
            main_of(&page)
        );
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
}

// ---------------------------------------------------------------------------------------
// Endpoints: list, create, edit, enable, disable, delete

#[actix_web::test]
async fn endpoints_are_created_with_the_secret_shown_once_then_edited_paused_and_deleted() {
    let app = app().await;
    let (mut b, org) = seller(&app, "hooks@example.com", "Hook Shop").await;
    let list = format!("/dashboard/{org}/webhooks");

    // The section is in the navigation, and empty.
    let page = b.get(&format!("/dashboard/{org}")).await;
    assert!(page
        .body
        .contains(&format!("<a href=\"{list}\">Webhooks</a>")));
    let page = b.get(&list).await;
    assert_html(&page, 200);
    assert!(page.body.contains(&format!(
        "<a href=\"{list}\" class=\"on\" aria-current=\"page\">Webhooks</a>"
    )));
    assert!(page.body.contains("No webhook endpoints yet."));

    // The form offers every event type, none ticked; enabled by default.
    let page = b.get(&format!("{list}/new")).await;
    assert_html(&page, 200);
    for t in WebhookEventType::ALL {
        assert!(!checked(&page, &format!("event-{}", t.as_str())), "{t:?}");
    }
    assert_eq!(
        page.body.matches("name=\"events\"").count(),
        WebhookEventType::ALL.len()
    );
    assert!(checked(&page, "enabled"));
    assert_eq!(selected(&page, "format"), "raw");

    // A bad URL: 422 with the API's message, what was typed kept, nothing created.
    let page = form_post(
        &mut b,
        &format!("{list}/new"),
        &[
            ("url", "ftp://hooks.example.com/x"),
            ("name", "Kept"),
            ("format", "slack"),
            ("events", "order.paid"),
            ("enabled", "on"),
        ],
    )
    .await;
    assert_html(&page, 422);
    let errs = errors(&page);
    assert!(errs.iter().any(|e| e.starts_with("url: ")), "{errs:?}");
    assert_eq!(page.input("name").as_deref(), Some("Kept"));
    assert_eq!(
        page.input("url").as_deref(),
        Some("ftp://hooks.example.com/x")
    );
    assert_eq!(selected(&page, "format"), "slack");
    assert!(checked(&page, "event-order.paid"));
    assert!(!checked(&page, "event-order.created"));
    assert!(b
        .get(&list)
        .await
        .body
        .contains("No webhook endpoints yet."));

    // Created: the secret is shown on the answer to the form, this once.
    let (id, secret) = new_endpoint(
        &mut b,
        &org,
        "https://hooks.example.com/tollgate",
        &["order.paid", "license_key.created"],
        true,
    )
    .await;
    assert!(secret.starts_with("whsec_"), "{secret}");
    let e = stored(&app, &id).await.expect("the endpoint is stored");
    assert_eq!(e.secret, secret);
    assert_eq!(e.url, "https://hooks.example.com/tollgate");
    assert_eq!(e.events, vec!["order.paid", "license_key.created"]);
    assert!(e.enabled);
    assert_eq!(e.name.as_deref(), Some("Backend"));

    // Never again: not on its page, not in the list.
    let path = format!("{list}/{id}");
    let page = b.get(&path).await;
    assert_html(&page, 200);
    assert!(!page.body.contains(&secret), "the secret is shown again");
    assert!(!page.body.contains("webhook-secret"));
    assert_eq!(text_of(&page, "endpoint-status"), "enabled");
    assert_eq!(
        text_of(&page, "endpoint-url"),
        "https://hooks.example.com/tollgate"
    );
    assert!(checked(&page, "event-order.paid"));
    assert!(checked(&page, "event-license_key.created"));
    assert!(!checked(&page, "event-order.created"));
    assert!(checked(&page, "enabled"));
    assert!(page.body.contains("No deliveries yet."));
    let page = b.get(&list).await;
    assert_html(&page, 200);
    assert!(!page.body.contains(&secret));
    assert_eq!(endpoint_links(&page, &org), vec![id.clone()]);
    assert!(page.body.contains("https://hooks.example.com/tollgate"));
    assert!(page.body.contains("order.paid, license_key.created"));
    assert!(page
        .body
        .contains(r#"<span class="badge active">enabled</span>"#));

    // Edited: URL, format, events, and unticked "enabled" pauses it.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("url", "https://hooks.example.com/v2"),
            ("name", ""),
            ("format", "slack"),
            ("events", "order.created"),
            ("events", "subscription.canceled"),
        ],
    )
    .await;
    assert_eq!(redirected(&page), format!("{path}?done=saved"));
    let page = b.get(&format!("{path}?done=saved")).await;
    assert_html(&page, 200);
    assert_eq!(notice(&page).as_deref(), Some("Saved."));
    assert_eq!(
        text_of(&page, "endpoint-url"),
        "https://hooks.example.com/v2"
    );
    assert_eq!(text_of(&page, "endpoint-status"), "disabled");
    assert_eq!(selected(&page, "format"), "slack");
    assert!(checked(&page, "event-order.created"));
    assert!(checked(&page, "event-subscription.canceled"));
    assert!(!checked(&page, "event-order.paid"));
    assert!(!checked(&page, "enabled"));
    let e = stored(&app, &id).await.unwrap();
    assert!(!e.enabled);
    assert_eq!(e.name, None);
    assert_eq!(e.secret, secret, "editing keeps the secret");

    // A bad URL on the edit form: 422, the typed values kept, nothing changed.
    let page = form_post(
        &mut b,
        &path,
        &[("url", "not a url"), ("format", "raw"), ("enabled", "on")],
    )
    .await;
    assert_html(&page, 422);
    assert!(
        errors(&page).iter().any(|e| e.starts_with("url: ")),
        "{:?}",
        errors(&page)
    );
    assert_eq!(page.input("url").as_deref(), Some("not a url"));
    assert_eq!(
        stored(&app, &id).await.unwrap().url,
        "https://hooks.example.com/v2"
    );

    // Enabled, then disabled again, with the buttons.
    let page = form_post(&mut b, &format!("{path}/enabled"), &[("enabled", "true")]).await;
    assert_eq!(redirected(&page), format!("{path}?done=enabled"));
    let page = b.get(&format!("{path}?done=enabled")).await;
    assert_eq!(text_of(&page, "endpoint-status"), "enabled");
    assert!(page.body.contains("id=\"disable\""));
    assert!(stored(&app, &id).await.unwrap().enabled);
    let page = form_post(&mut b, &format!("{path}/enabled"), &[("enabled", "false")]).await;
    assert_eq!(redirected(&page), format!("{path}?done=disabled"));
    let page = b.get(&path).await;
    assert_eq!(text_of(&page, "endpoint-status"), "disabled");
    assert!(page.body.contains("id=\"enable\""));
    assert!(!stored(&app, &id).await.unwrap().enabled);

    // Created unticked: paused from the start.
    let (paused, _) = new_endpoint(&mut b, &org, "https://hooks.example.com/p", &[], false).await;
    assert!(!stored(&app, &paused).await.unwrap().enabled);
    let page = b.get(&list).await;
    assert_eq!(
        endpoint_links(&page, &org),
        vec![paused.clone(), id.clone()]
    );

    // Deleted after a confirmation.
    let page = b.get(&format!("{path}/delete")).await;
    assert_html(&page, 200);
    assert!(page.body.contains("https://hooks.example.com/v2"));
    assert!(page
        .body
        .contains(&format!("<form method=\"post\" action=\"{path}/delete\">")));
    assert!(stored(&app, &id).await.is_some(), "asking deletes nothing");
    let page = form_post(&mut b, &format!("{path}/delete"), &[]).await;
    assert_eq!(redirected(&page), format!("{list}?done=deleted"));
    let page = b.get(&format!("{list}?done=deleted")).await;
    assert_eq!(notice(&page).as_deref(), Some("The endpoint was deleted."));
    assert_eq!(endpoint_links(&page, &org), vec![paused]);
    assert!(stored(&app, &id).await.is_none());
    assert_not_found(&b.get(&path).await);
    assert_not_found(&form_post(&mut b, &format!("{path}/delete"), &[]).await);
}

// ---------------------------------------------------------------------------------------
// Deliveries and redelivery

#[actix_web::test]
async fn a_purchase_is_shown_with_its_attempt_and_a_redelivery_makes_another() {
    let app = app().await;
    let (url, hits) = receiver();
    let (mut b, org) = seller(&app, "deliveries@example.com", "Delivery Shop").await;
    let (id, _) = new_endpoint(&mut b, &org, &url, &["order.paid"], true).await;
    let path = format!("/dashboard/{org}/webhooks/{id}");

    // A purchase through a checkout link.
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/products/new"),
        &[
            ("name", "Field Guide"),
            ("billing", "one_time"),
            ("amount_type", "fixed"),
            ("amount", "25"),
        ],
    )
    .await;
    let product = redirected(&page)
        .rsplit('/')
        .next()
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_string();
    let page = Browser::new(&app).get(&format!("/buy/{product}")).await;
    let to = redirected(&page);
    let secret = to.split_once("/checkout/").expect("to the checkout").1;
    confirm(Api::of(&app), secret, &buyer("ada@example.com"))
        .await
        .expect(200);

    // The order.paid event and its attempt: HTTP 200 and the answer as stored.
    let page = poll(&mut b, &path, "delivery", |p| !events_of(p).is_empty()).await;
    let events = events_of(&page);
    assert_eq!(events.len(), 1, "{}", main_of(&page));
    let event = events[0].clone();
    assert_eq!(attempts_of(&page, &event), 1);
    let main = main_of(&page);
    assert!(main.contains("<b>order.paid</b>"), "{main}");
    assert!(main.contains("HTTP 200"), "{main}");
    assert!(main.contains("thanks 1</pre>"), "{main}");
    assert_eq!(
        text_of(&page, &format!("event-status-{event}")),
        "delivered"
    );
    assert!(main.contains("Page 1 of 1 · 1 in all"), "{main}");
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    // Redelivery: refused without the CSRF token, then a new attempt, shown first.
    let redeliver = format!("{path}/events/{event}/redeliver");
    assert_csrf_refused(&mut b, &redeliver, &[]).await;
    let page = form_post(&mut b, &redeliver, &[]).await;
    assert_eq!(redirected(&page), format!("{path}?done=redelivered"));
    let page = poll(&mut b, &path, "second attempt", |p| {
        attempts_of(p, &event) == 2
    })
    .await;
    let main = main_of(&page);
    let second = main.find("thanks 2</pre>").expect("the second answer");
    let first = main.find("thanks 1</pre>").expect("the first answer");
    assert!(second < first, "newest first:\n{main}");
    assert_eq!(
        events_of(&page),
        vec![event.clone()],
        "one event, two attempts"
    );
    assert!(main.contains("Page 1 of 1 · 2 in all"), "{main}");
    assert_eq!(hits.load(Ordering::SeqCst), 2);

    // An unknown event, or a malformed id: 404.
    assert_not_found(&form_post(&mut b, &format!("{path}/events/{UNKNOWN}/redeliver"), &[]).await);
    assert_not_found(&form_post(&mut b, &format!("{path}/events/nope/redeliver"), &[]).await);
    // The event under another endpoint of the same organization: 404, nothing sent.
    let (other, _) = new_endpoint(&mut b, &org, &url, &[], true).await;
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/webhooks/{other}/events/{event}/redeliver"),
        &[],
    )
    .await;
    assert_not_found(&page);
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[actix_web::test]
async fn the_delivery_log_pages_through_next_links() {
    let app = app().await;
    let (url, hits) = receiver();
    let (mut b, org) = seller(&app, "pages@example.com", "Paged Shop").await;
    let (id, _) = new_endpoint(&mut b, &org, &url, &["organization.updated"], true).await;
    let path = format!("/dashboard/{org}/webhooks/{id}");

    // 21 changes of the organization: 21 events, one attempt each.
    for n in 0..21 {
        let page = form_post(
            &mut b,
            &format!("/dashboard/{org}/settings"),
            &[("name", &format!("Paged Shop {n}"))],
        )
        .await;
        redirected(&page);
    }
    let page = poll(&mut b, &path, "21 attempts", |p| {
        main_of(p).contains("Page 1 of 2 · 21 in all")
    })
    .await;
    assert_eq!(hits.load(Ordering::SeqCst), 21);
    let first = events_of(&page);
    assert_eq!(first.len(), 20);
    assert!(main_of(&page).contains("thanks 21</pre>"), "newest first");
    let next = next_link(&page).expect("a next link");
    assert_eq!(next, format!("{path}?page=2"));
    let page = b.get(&next).await;
    assert_html(&page, 200);
    let second = events_of(&page);
    assert_eq!(second.len(), 1);
    assert!(!first.contains(&second[0]));
    assert!(main_of(&page).contains("thanks 1</pre>"), "the oldest last");
    assert!(next_link(&page).is_none());
}

// ---------------------------------------------------------------------------------------
// Who may do what

/// A form: (its route as `ROUTES` names it, a path to it, the fields posted).
type FormCase = (&'static str, String, Vec<(&'static str, &'static str)>);

/// Every webhook route of `ROUTES` with `method`, checked against `covered`.
fn assert_covers(method: &str, covered: &[&str]) {
    for (m, route, _) in ROUTES {
        if *m == method && route.starts_with("/dashboard/{org}/webhooks") {
            assert!(
                covered.contains(route),
                "{method} {route} is not exercised by this test"
            );
        }
    }
}

#[actix_web::test]
async fn another_organizations_endpoints_are_not_found_and_forms_need_the_csrf_token() {
    let app = app().await;
    let (url, hits) = receiver();
    let (mut a, org_a) = seller(&app, "first@example.com", "First Shop").await;
    let (id, secret) = new_endpoint(&mut a, &org_a, &url, &["organization.updated"], true).await;
    // An event with its attempt, to try redelivering from elsewhere.
    let page = form_post(
        &mut a,
        &format!("/dashboard/{org_a}/settings"),
        &[("name", "First Shop Renamed")],
    )
    .await;
    redirected(&page);
    let at = format!("/dashboard/{org_a}/webhooks/{id}");
    let page = poll(&mut a, &at, "delivery", |p| !events_of(p).is_empty()).await;
    let event = events_of(&page).remove(0);
    let before = stored(&app, &id).await.unwrap();

    let pages: Vec<(&str, String)> = vec![
        (
            "/dashboard/{org}/webhooks",
            format!("/dashboard/{org_a}/webhooks"),
        ),
        (
            "/dashboard/{org}/webhooks/new",
            format!("/dashboard/{org_a}/webhooks/new"),
        ),
        ("/dashboard/{org}/webhooks/{id}", at.clone()),
        (
            "/dashboard/{org}/webhooks/{id}/delete",
            format!("{at}/delete"),
        ),
    ];
    let forms: Vec<FormCase> = vec![
        (
            "/dashboard/{org}/webhooks/new",
            format!("/dashboard/{org_a}/webhooks/new"),
            vec![("url", "https://intruder.example/x"), ("format", "raw")],
        ),
        (
            "/dashboard/{org}/webhooks/{id}",
            at.clone(),
            vec![("url", "https://intruder.example/x"), ("format", "raw")],
        ),
        (
            "/dashboard/{org}/webhooks/{id}/enabled",
            format!("{at}/enabled"),
            vec![("enabled", "false")],
        ),
        (
            "/dashboard/{org}/webhooks/{id}/secret",
            format!("{at}/secret"),
            vec![],
        ),
        (
            "/dashboard/{org}/webhooks/{id}/delete",
            format!("{at}/delete"),
            vec![],
        ),
        (
            "/dashboard/{org}/webhooks/{id}/events/{event_id}/redeliver",
            format!("{at}/events/{event}/redeliver"),
            vec![],
        ),
    ];
    assert_covers("get", &pages.iter().map(|p| p.0).collect::<Vec<_>>());
    assert_covers("post", &forms.iter().map(|f| f.0).collect::<Vec<_>>());

    // The owner's own browser, without the token: 403 on every form, nothing changed.
    for (_, path, fields) in &forms {
        assert_csrf_refused(&mut a, path, fields).await;
    }

    // Another seller: every page and form of the first one's is 404.
    let (mut b, org_b) = seller(&app, "second@example.com", "Second Shop").await;
    for (route, path) in &pages {
        let page = b.get(path).await;
        assert_not_found(&page);
        assert!(!page.body.contains(&url), "{route}");
    }
    for (route, path, fields) in &forms {
        let page = form_post(&mut b, path, fields).await;
        assert_status(&page, 404);
        assert!(page.location.is_empty(), "{route}");
    }
    // The first one's endpoint under the second's organization: 404 too.
    let under_b = format!("/dashboard/{org_b}/webhooks/{id}");
    assert_not_found(&b.get(&under_b).await);
    assert_not_found(&form_post(&mut b, &format!("{under_b}/events/{event}/redeliver"), &[]).await);
    // And the second's list shows none of it.
    let page = b.get(&format!("/dashboard/{org_b}/webhooks")).await;
    assert_html(&page, 200);
    assert!(endpoint_links(&page, &org_b).is_empty());
    assert!(!page.body.contains(&url));

    // A member of two organizations: the endpoint and its event are not found under the
    // other one's pages.
    let org_c = new_org(&mut a, "Third Shop").await;
    let under_c = format!("/dashboard/{org_c}/webhooks/{id}");
    assert_not_found(&a.get(&under_c).await);
    assert_not_found(&a.get(&format!("{under_c}/delete")).await);
    for (route, path, fields) in &forms {
        if !route.contains("{id}") {
            continue;
        }
        let path = path.replace(&org_a, &org_c);
        assert_not_found(&form_post(&mut a, &path, fields).await);
    }
    let (other, _) = new_endpoint(&mut a, &org_c, &url, &[], true).await;
    assert_not_found(
        &form_post(
            &mut a,
            &format!("/dashboard/{org_c}/webhooks/{other}/events/{event}/redeliver"),
            &[],
        )
        .await,
    );

    // Nothing of the first endpoint changed, its secret was never shown, nothing resent.
    assert_eq!(stored(&app, &id).await.unwrap(), before);
    let page = a.get(&at).await;
    assert_html(&page, 200);
    assert!(!page.body.contains(&secret));
    assert_eq!(attempts_of(&page, &event), 1);
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

/// "Rotate secret" on an endpoint's page: a CSRF-protected form whose answer shows the new
/// secret this once; the old one is gone from the store, the new one never shown again.
#[actix_web::test]
async fn the_rotate_secret_button_shows_a_new_secret_once() {
    let app = app().await;
    let (mut b, org) = seller(&app, "rotate@example.com", "Rotate Shop").await;
    let (id, old) = new_endpoint(
        &mut b,
        &org,
        "https://hooks.example.com/tollgate",
        &["order.paid"],
        true,
    )
    .await;
    let at = format!("/dashboard/{org}/webhooks/{id}");
    let page = b.get(&at).await;
    assert_html(&page, 200);
    assert!(page.body.contains(&format!(r#"action="{at}/secret""#)));
    assert!(page.body.contains(r#"id="rotate-secret""#));

    let page = form_post(&mut b, &format!("{at}/secret"), &[]).await;
    assert_html(&page, 200);
    assert!(
        page.body.contains("Signing secret rotated"),
        "{}",
        main_of(&page)
    );
    let new = text_of(&page, "webhook-secret");
    assert_ne!(new, old);
    assert!(new.starts_with("whsec_") && new.len() == 49, "{new}");
    let e = stored(&app, &id).await.expect("still stored");
    assert_eq!(e.secret, new);
    assert_eq!(e.url, "https://hooks.example.com/tollgate");
    assert!(e.enabled);

    // Never shown again.
    let page = b.get(&at).await;
    assert_html(&page, 200);
    assert!(!page.body.contains(&new));
    assert!(!page.body.contains(&old));
}
