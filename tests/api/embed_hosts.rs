//! Issue 54: an organization's `embed_hosts` (Polar's list of the hosts whose pages may
//! embed its checkout links) through `PATCH /v1/organizations/{id}`, with Polar's rules
//! and messages, and the checkout link followed from an embedding page
//! (`/v1/checkout-links/{client_secret}/redirect?embed=true&embed_origin=…`): a listed
//! origin's checkout is framed by that origin only, an unlisted one is 403
//! `EmbedHostNotAllowed`, and what is no origin frames nothing.

use serde_json::{json, Value};
use tollgate::auth::Scope;

use crate::checkouts::{by_price, create_org, created, seed, with, Api};
use crate::helpers::{spawn_app, Reply, TestApp};

fn org_path(id: &str) -> String {
    format!("/v1/organizations/{id}")
}

async fn patched(api: Api<'_>, org: &str, body: Value) -> Reply {
    api.patch(&org_path(org), Some(api.token), &body).await
}

async fn hosts(api: Api<'_>, org: &str) -> Value {
    let r = api.read(&org_path(org)).await;
    r.expect(200);
    r.body["embed_hosts"].clone()
}

#[actix_web::test]
async fn embed_hosts_are_stored_normalized_and_sent_back() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = create_org(api, "embed-hosts").await;
    let r = api.read(&org_path(&org)).await;
    r.expect(200);
    assert_eq!(r.body["embed_hosts"], json!([]));
    assert_eq!(r.body["embed_hosts_enforced"], true);

    let r = patched(
        api,
        &org,
        json!({"embed_hosts": ["Shop.Example:443", " *.Example.com ", "localhost:3000",
                               "shop.example", "192.168.1.43:5500", "chrome-extension://abcdef"]}),
    )
    .await;
    r.expect(200);
    let normalized = json!([
        "shop.example",
        "*.example.com",
        "localhost:3000",
        "192.168.1.43:5500",
        "chrome-extension://abcdef"
    ]);
    assert_eq!(r.body["embed_hosts"], normalized);
    assert_eq!(hosts(api, &org).await, normalized);

    // Left out or null: unchanged; another field changed alone leaves them too.
    patched(api, &org, json!({"name": "Renamed org"}))
        .await
        .expect(200);
    patched(api, &org, json!({"embed_hosts": null}))
        .await
        .expect(200);
    assert_eq!(hosts(api, &org).await, normalized);
    // An empty list clears them.
    let r = patched(api, &org, json!({"embed_hosts": []})).await;
    r.expect(200);
    assert_eq!(r.body["embed_hosts"], json!([]));
}

#[actix_web::test]
async fn each_refused_entry_is_polar_s_422() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = create_org(api, "embed-422").await;
    patched(api, &org, json!({"embed_hosts": ["keep.example"]}))
        .await
        .expect(200);
    let shape = "write a host and an optional port, with no path. A host is made of \
                 letters, digits and hyphens";
    let scheme = "write the host on its own. HTTPS is always allowed, and HTTP as well for \
                  localhost and private addresses";
    let cases: Vec<(Value, String)> = vec![
        (
            json!([""]),
            "'' is not a valid embed host: it is empty".into(),
        ),
        (
            json!(["ok.example", "*"]),
            "'*' is not a valid embed host: a bare wildcard would let any page embed".into(),
        ),
        (
            json!(["https://shop.example"]),
            format!("'https://shop.example' is not a valid embed host: {scheme}"),
        ),
        (
            json!(["http://localhost:3000"]),
            format!("'http://localhost:3000' is not a valid embed host: {scheme}"),
        ),
        (
            json!(["shop.example/checkout"]),
            format!("'shop.example/checkout' is not a valid embed host: {shape}"),
        ),
        (
            json!(["shop.example:99999"]),
            format!("'shop.example:99999' is not a valid embed host: {shape}"),
        ),
        (
            json!(["*.co.uk"]),
            "'*.co.uk' is not a valid embed host: co.uk is a domain suffix, so this would \
             admit every site registered under it. Name your own site, like myshop.co.uk"
                .into(),
        ),
        (
            json!(["*.com"]),
            "'*.com' is not a valid embed host: com is a domain suffix, so this would admit \
             every site registered under it. Name your own site, like myshop.com"
                .into(),
        ),
    ];
    for (input, msg) in cases {
        let r = patched(api, &org, json!({"embed_hosts": input})).await;
        let items = r.expect_validation();
        assert_eq!(items.len(), 1, "{}", r.body);
        assert_eq!(items[0]["type"], "value_error", "{}", r.body);
        assert_eq!(items[0]["loc"], json!(["body", "embed_hosts"]));
        assert_eq!(items[0]["msg"], format!("Value error, {msg}"));
        assert_eq!(items[0]["input"], input);
    }
    let r = patched(api, &org, json!({"embed_hosts": "shop.example"})).await;
    let items = r.expect_validation();
    assert_eq!(items[0]["type"], "list_type");
    assert_eq!(items[0]["loc"], json!(["body", "embed_hosts"]));
    let r = patched(api, &org, json!({"embed_hosts": ["shop.example", 7]})).await;
    let items = r.expect_validation();
    assert_eq!(items[0]["type"], "string_type");
    assert_eq!(items[0]["loc"], json!(["body", "embed_hosts", 1]));
    // Nothing was stored by any of them.
    assert_eq!(hosts(api, &org).await, json!(["keep.example"]));
}

#[actix_web::test]
async fn only_a_member_with_organizations_write_sets_embed_hosts() {
    let app = spawn_app().await;
    let (user, writer) = app
        .new_user_with_scopes("owner@example.com", &[Scope::OrganizationsWrite])
        .await;
    let org = app.created_org_as(&writer, "Embedding", "embedding").await;
    let id = org["id"].as_str().unwrap();
    let body = json!({"embed_hosts": ["evil.example"]});

    let (_, stranger) = app
        .new_user_with_scopes("stranger@example.com", &[Scope::OrganizationsWrite])
        .await;
    let r = app.patch_org(id, &stranger, &body).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    // Not found is told before the body's errors.
    let r = app
        .patch_org(id, &stranger, &json!({"embed_hosts": ["*"]}))
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let reader = app.issue_token(user, &[Scope::OrganizationsRead]).await;
    let r = app.patch_org(id, &reader, &body).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    let r = app.patch_org(id, "", &body).await;
    assert_eq!(r.status, 401, "{}", r.body);

    let r = app.get_org(id, &writer).await;
    r.expect(200);
    assert_eq!(r.body["embed_hosts"], json!([]));
}

/// Follows a link without following the redirect.
pub(crate) async fn follow(app: &TestApp, url: &str) -> Reply {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(crate::helpers::CLIENT_TIMEOUT)
        .build()
        .unwrap();
    app.send(http.get(url)).await
}

fn enc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// The checkout a followed link opened, from its `Location`: its client secret and the
/// query the page was sent with.
pub(crate) fn opened(r: &Reply) -> (String, String) {
    assert_eq!(r.status, 307, "{}", r.body);
    let location = r.header("location");
    let (path, query) = location.split_once('?').unwrap_or((&location, ""));
    let secret = path.rsplit('/').next().unwrap_or_default();
    assert!(secret.starts_with("polar_c_"), "{location}");
    (secret.to_string(), query.to_string())
}

async fn stored_embed_origin(api: Api<'_>, secret: &str) -> Value {
    let r = api
        .get(&format!("/v1/checkouts/client/{secret}"), None)
        .await;
    r.expect(200);
    r.body["embed_origin"].clone()
}

/// The checkout page's framing headers: CSP `frame-ancestors`, X-Frame-Options,
/// Permissions-Policy.
async fn framing(app: &TestApp, secret: &str) -> (String, String, String) {
    let r = follow(
        app,
        &format!("{}/checkout/{secret}?embed=true", app.address),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let csp = r.header("content-security-policy");
    let ancestors = csp
        .split(';')
        .map(str::trim)
        .find_map(|d| d.strip_prefix("frame-ancestors "))
        .unwrap_or_default()
        .to_string();
    (
        ancestors,
        r.header("x-frame-options"),
        r.header("permissions-policy"),
    )
}

#[actix_web::test]
async fn a_link_opened_from_a_listed_host_is_framed_there_only() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "embed-links").await;
    patched(
        api,
        &cat.org,
        json!({"embed_hosts": ["shop.example", "127.0.0.1:5500"]}),
    )
    .await
    .expect(200);
    let link = api
        .posted(
            "/v1/checkout-links/",
            &json!({"payment_processor": "stripe", "products": [cat.ebook]}),
            201,
        )
        .await;
    let url = link["url"].as_str().unwrap().to_string();

    // Listed: the checkout keeps the normalized origin and its page is framed by it; the
    // page keeps `embed` and `theme`, not `embed_origin`.
    let r = follow(
        &app,
        &format!(
            "{url}?embed=true&theme=dark&embed_origin={}",
            enc("https://Shop.Example/pricing?plan=pro")
        ),
    )
    .await;
    let (secret, query) = opened(&r);
    assert_eq!(query, "embed=true&theme=dark");
    assert_eq!(
        stored_embed_origin(api, &secret).await,
        "https://shop.example"
    );
    let (ancestors, xfo, policy) = framing(&app, &secret).await;
    assert_eq!(ancestors, "https://shop.example");
    assert_eq!(xfo, "");
    assert!(policy.starts_with("payment=(self"), "{policy}");

    let r = follow(
        &app,
        &format!(
            "{url}?embed=true&embed_origin={}",
            enc("http://127.0.0.1:5500")
        ),
    )
    .await;
    let (secret, _) = opened(&r);
    assert_eq!(
        stored_embed_origin(api, &secret).await,
        "http://127.0.0.1:5500"
    );
    assert_eq!(framing(&app, &secret).await.0, "http://127.0.0.1:5500");

    // Not listed (another host, plain HTTP on a public host, another port): 403.
    for (origin, normalized) in [
        ("https://evil.example", "https://evil.example"),
        ("http://shop.example/x", "http://shop.example"),
        ("https://shop.example:8443", "https://shop.example:8443"),
        ("https://www.shop.example", "https://www.shop.example"),
        ("http://127.0.0.1:5501", "http://127.0.0.1:5501"),
    ] {
        let r = follow(
            &app,
            &format!("{url}?embed=true&embed_origin={}", enc(origin)),
        )
        .await;
        assert_eq!(r.expect_error(403), "EmbedHostNotAllowed", "{origin}");
        assert_eq!(
            r.body["detail"],
            format!("{normalized} is not allowed to embed this checkout."),
        );
    }

    // No origin at all (`null` from a file page, garbage, empty, none): a checkout
    // nobody may frame.
    for query in [
        "embed=true&embed_origin=null",
        "embed=true&embed_origin=not%20a%20url",
        "embed=true&embed_origin=file%3A%2F%2F%2Ftmp%2Fx.html",
        "embed=true&embed_origin=",
        "embed=true",
        "",
    ] {
        let r = follow(&app, &format!("{url}?{query}")).await;
        let (secret, _) = opened(&r);
        assert_eq!(
            stored_embed_origin(api, &secret).await,
            Value::Null,
            "{query}"
        );
        let (ancestors, xfo, policy) = framing(&app, &secret).await;
        assert_eq!(ancestors, "'none'", "{query}");
        assert_eq!(xfo, "DENY");
        assert_eq!(policy, "");
    }
}

#[actix_web::test]
async fn an_organization_without_embed_hosts_refuses_every_embedding_page() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "embed-none").await;
    let link = api
        .posted(
            "/v1/checkout-links/",
            &json!({"payment_processor": "stripe", "products": [cat.ebook]}),
            201,
        )
        .await;
    let url = link["url"].as_str().unwrap();
    let r = follow(
        &app,
        &format!(
            "{url}?embed=true&embed_origin={}",
            enc("https://shop.example")
        ),
    )
    .await;
    assert_eq!(r.expect_error(403), "EmbedHostNotAllowed");
    assert_eq!(
        r.body["detail"],
        "https://shop.example is not allowed to embed this checkout."
    );
    // Opened as a plain link, it still works.
    opened(&follow(&app, url).await);

    // A checkout created through the API keeps the seller's `embed_origin` unchecked, as
    // in Polar, and is framed by it.
    let c = created(
        api,
        &with(
            by_price(&cat.ebook_price),
            json!({"embed_origin": "https://elsewhere.example"}),
        ),
    )
    .await;
    assert_eq!(c["embed_origin"], "https://elsewhere.example");
    let secret = c["client_secret"].as_str().unwrap();
    assert_eq!(framing(&app, secret).await.0, "https://elsewhere.example");
}

#[actix_web::test]
async fn the_settings_page_sets_embed_hosts_and_the_buyers_language() {
    use crate::dashboard::{assert_invalid, form_post, main_of, redirected, seller};
    let app = spawn_app().await;
    let (mut b, org) = seller(&app, "embed-settings@example.com", "Embed Shop").await;
    let path = format!("/dashboard/{org}/settings");
    let stored = || async {
        app.state
            .store
            .get::<tollgate::domain::organization::Organization>(
                &org.parse::<tollgate::domain::ids::OrganizationId>()
                    .unwrap()
                    .key(),
            )
            .await
            .unwrap()
            .unwrap()
            .value
    };

    let page = b.get(&path).await;
    assert_eq!(page.status, 200);
    let main = main_of(&page);
    assert!(
        main.contains(r#"<textarea id="embed_hosts" name="embed_hosts""#),
        "{main}"
    );
    assert!(
        main.contains(r#"<option value="en" lang="en" selected>English</option>"#),
        "{main}"
    );
    for name in [
        "Deutsch",
        "Français",
        "Español",
        "Italiano",
        "Português",
        "Nederlands",
        "日本語",
    ] {
        assert!(main.contains(name), "{name} missing");
    }

    // One host a line, blank lines skipped, stored normalized; the language as its tag.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("name", "Embed Shop"),
            (
                "embed_hosts",
                "Shop.Example\r\n\r\n *.example.org \r\nlocalhost:3000\r\n",
            ),
            ("default_locale", "de"),
        ],
    )
    .await;
    redirected(&page);
    let org_now = stored().await;
    assert_eq!(
        org_now.embed_hosts,
        ["shop.example", "*.example.org", "localhost:3000"]
    );
    assert_eq!(org_now.default_locale, "de");
    let page = b.get(&path).await;
    let main = main_of(&page);
    assert!(
        main.contains("shop.example\n*.example.org\nlocalhost:3000</textarea>"),
        "{main}"
    );
    assert!(
        main.contains(r#"<option value="de" lang="de" selected>Deutsch</option>"#),
        "{main}"
    );
    crate::tools::render_page("embed-settings-screenshots", "settings", &page.body);

    // A refused entry: the API's message with the form, nothing stored.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("name", "Embed Shop"),
            ("embed_hosts", "shop.example\nhttps://other.example"),
            ("default_locale", "xx"),
        ],
    )
    .await;
    assert_invalid(&page, "embed hosts");
    assert_invalid(&page, "default locale");
    let main = main_of(&page);
    assert!(
        main.contains(
            "is not a valid embed host: write the host on its own. HTTPS is always \
                       allowed, and HTTP as well for localhost and private addresses"
        ),
        "{main}"
    );
    assert!(
        main.contains("Input should be one of en, de, fr, es, it, pt, nl, ja"),
        "{main}"
    );
    crate::tools::render_page("embed-settings-screenshots", "settings-refused", &page.body);
    let org_now = stored().await;
    assert_eq!(org_now.embed_hosts.len(), 3);
    assert_eq!(org_now.default_locale, "de");

    // An empty field clears the list.
    let page = form_post(
        &mut b,
        &path,
        &[
            ("name", "Embed Shop"),
            ("embed_hosts", " \n"),
            ("default_locale", "ja"),
        ],
    )
    .await;
    redirected(&page);
    let org_now = stored().await;
    assert!(org_now.embed_hosts.is_empty());
    assert_eq!(org_now.default_locale, "ja");
}
