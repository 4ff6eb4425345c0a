//! The dashboard's Signing section (on the License keys page) over HTTP, as a browser that
//! keeps cookies and never follows redirects: the JWKS URL and the keys the public JWKS
//! publishes (each key's public key in hex and its JWK); turning "sign every answer" on
//! makes a validation asked without `Accept-Signature` come back signed by the key the page
//! shows (verified here), and off again unsigned; rotating publishes a second key first and
//! shows the old one retired. A user who is not a member gets the dashboard's 404 and changes
//! nothing; a form without the CSRF token is refused with 403.

use crate::dashboard::{assert_status, main_of, text_of};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use ed25519_dalek::{Signature, VerifyingKey};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tollgate::auth::Scope;
use tollgate::web::dashboard::ROUTES;

use crate::helpers::{spawn_app, Reply, TestApp};
use crate::oauth::{signed_in, user_with_password, Browser, Page};

/// A CSRF token of the right length that is not the browser's.
const FORGED: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const UNKNOWN: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";
const VALIDATE: &str = "/v1/customer-portal/license-keys/validate";
const SELLER: &str = "signer@example.com";
/// The components every signature covers, as `Signature-Input` lists them.
const MANDATORY: &str = r#"("@status" "content-digest" "@method";req "@path";req)"#;

// ---------------------------------------------------------------------------------------
// Reading pages (as `dashboard.rs` does)

/// A dashboard page: 200, HTML, not cached.
#[track_caller]
fn assert_html(page: &Page) {
    assert_status(page, 200);
    assert!(page.content_type.starts_with("text/html"));
    let cache = page
        .headers
        .get("cache-control")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    assert_eq!(cache, "no-store");
}

/// A 404 page (HTML, not a redirect).
#[track_caller]
fn assert_not_found(page: &Page) {
    assert_status(page, 404);
    assert!(page.location.is_empty());
    assert!(page.content_type.starts_with("text/html"));
}

/// The CSRF token of the browser's forms.
async fn csrf_of(b: &mut Browser) -> String {
    b.get("/oauth2/login").await.csrf()
}

/// Posts a form with the browser's CSRF token.
async fn form_post(b: &mut Browser, path: &str, fields: &[(&str, &str)]) -> Page {
    let csrf = csrf_of(b).await;
    let mut form = vec![("csrf_token", csrf.as_str())];
    form.extend_from_slice(fields);
    b.post(path, &form).await
}

// ---------------------------------------------------------------------------------------
// A seller with a sold key

struct Shop {
    browser: Browser,
    org: String,
    key: String,
    key_id: String,
    /// The seller's own token (every scope).
    token: String,
}

/// A seller signed in to the dashboard, whose organization (made with the seller's own
/// token, so the seller is its member) sold one license key through a checkout.
async fn shop(app: &TestApp) -> Shop {
    let user = user_with_password(app, SELLER).await;
    let own = app.issue_token(user, Scope::ALL).await;
    let token = Some(own.as_str());
    let org = app
        .create_org_as(&own, "Signing Shop", "signing-shop")
        .await;
    org.expect(201);
    let org = org.body["id"].as_str().unwrap().to_string();
    let benefit = app
        .post_json(
            "/v1/benefits/",
            token,
            &json!({"type": "license_keys", "description": "Key", "organization_id": org,
                    "properties": {"prefix": "SG", "activations": {"limit": 3, "enable_customer_admin": true}}}),
        )
        .await;
    benefit.expect(201);
    let benefit = benefit.body["id"].as_str().unwrap().to_string();
    let product = app
        .post_json(
            "/v1/products/",
            token,
            &json!({"name": "Pro", "organization_id": org,
                    "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 1900}]}),
        )
        .await;
    product.expect(201);
    let product = product.body["id"].as_str().unwrap().to_string();
    app.post_json(
        &format!("/v1/products/{product}/benefits"),
        token,
        &json!({"benefits": [benefit]}),
    )
    .await
    .expect(200);
    let checkout = app
        .post_json(
            "/v1/checkouts/custom/",
            token,
            &json!({"product_id": product}),
        )
        .await;
    checkout.expect(201);
    let secret = checkout.body["client_secret"].as_str().unwrap().to_string();
    app.post_json(
        &format!("/v1/checkouts/custom/client/{secret}/confirm"),
        None,
        &json!({"customer_name": "Ada Lovelace", "customer_email": "ada@signing.example",
                "customer_billing_address": {"country": "FR"}, "confirmation_token_id": "tok_visa"}),
    )
    .await
    .expect(200);
    let mut keys = Vec::new();
    for _ in 0..100 {
        let list = app
            .get(&format!("/v1/license-keys/?organization_id={org}"), token)
            .await;
        list.expect(200);
        keys = list.body["items"].as_array().cloned().unwrap_or_default();
        if !keys.is_empty() {
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let key = keys.first().expect("the sale granted a key");
    Shop {
        browser: signed_in(app, SELLER).await,
        org,
        key: key["key"].as_str().unwrap().to_string(),
        key_id: key["id"].as_str().unwrap().to_string(),
        token: own.clone(),
    }
}

fn keys_page(org: &str) -> String {
    format!("/dashboard/{org}/license-keys")
}

fn every_answer_form(org: &str) -> String {
    format!("/dashboard/{org}/license-keys/signing")
}

fn rotate_form(org: &str) -> String {
    format!("/dashboard/{org}/license-keys/signing/rotate")
}

/// The public JWKS of `org`: its keys' ids, the signing one first, and the keys.
async fn jwks(app: &TestApp, org: &str) -> (Vec<String>, Vec<Value>) {
    let r = app
        .get(
            &format!("/v1/customer-portal/license-keys/jwks?organization_id={org}"),
            None,
        )
        .await;
    r.expect(200);
    let keys = r.body["keys"].as_array().cloned().unwrap_or_default();
    let kids = keys
        .iter()
        .map(|k| k["kid"].as_str().unwrap().to_string())
        .collect();
    (kids, keys)
}

/// A validation of the shop's key without `Accept-Signature`, read whole (the signature
/// covers its exact bytes) and checked against the OpenAPI document like every answer.
async fn validate(app: &TestApp, s: &Shop) -> (Reply, Vec<u8>) {
    let req = app
        .request(Method::POST, VALIDATE, None)
        .json(&json!({"key": s.key, "organization_id": s.org}));
    let res = req.send().await.expect("sending the validation");
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = res.bytes().await.expect("reading the answer").to_vec();
    let reply = Reply {
        status,
        headers,
        body: serde_json::from_slice(&bytes).expect("a JSON answer"),
    };
    crate::schema::check("POST", VALIDATE, None, &reply);
    reply.expect(200);
    assert_eq!(reply.body["id"], s.key_id.as_str());
    (reply, bytes)
}

fn unhex(hex: &str) -> Vec<u8> {
    assert_eq!(hex.len() % 2, 0, "{hex}");
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digits"))
        .collect()
}

/// Checks the `sig1` signature of a validation's answer (RFC 9421 over the mandatory
/// components, RFC 9530 digest of the body) with the public key `public_hex`; its `keyid`,
/// or why it does not verify.
fn verify(reply: &Reply, body: &[u8], public_hex: &str) -> Result<String, String> {
    let digest = reply.header("content-digest");
    if digest != format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(body))) {
        return Err(format!("Content-Digest {digest}"));
    }
    let input = reply.header("signature-input");
    let params = input
        .strip_prefix("sig1=")
        .filter(|p| p.starts_with(MANDATORY) && !p.contains("nonce="))
        .ok_or_else(|| format!("Signature-Input {input}"))?;
    let header = reply.header("signature");
    let signature = header
        .strip_prefix("sig1=:")
        .and_then(|s| s.strip_suffix(':'))
        .and_then(|s| STANDARD.decode(s).ok())
        .and_then(|s| Signature::from_slice(&s).ok())
        .ok_or_else(|| format!("Signature {header}"))?;
    let base = format!(
        "\"@status\": 200\n\"content-digest\": {digest}\n\"@method\";req: POST\n\"@path\";req: {VALIDATE}\n\"@signature-params\": {params}"
    );
    let public: [u8; 32] = unhex(public_hex).try_into().expect("32 bytes");
    VerifyingKey::from_bytes(&public)
        .map_err(|e| format!("not an ed25519 key: {e}"))?
        .verify_strict(base.as_bytes(), &signature)
        .map_err(|e| format!("does not verify: {e}"))?;
    params
        .split(";keyid=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .map(str::to_string)
        .ok_or_else(|| format!("no keyid in {params}"))
}

#[track_caller]
fn assert_unsigned(reply: &Reply) {
    for h in ["signature", "signature-input", "content-digest"] {
        assert!(reply.headers.get(h).is_none(), "{h}: {}", reply.header(h));
    }
}

// ---------------------------------------------------------------------------------------
// The section

/// The page shows the JWKS URL (as the API gives it, publishing the organization's keys)
/// and each key the JWKS publishes: its kid, state, hex and JWK, made on the first view
/// and the same afterwards.
#[actix_web::test]
async fn the_section_shows_the_jwks_url_and_the_published_keys() {
    let app = spawn_app().await;
    let mut s = shop(&app).await;
    let page = s.browser.get(&keys_page(&s.org)).await;
    assert_html(&page);
    assert!(page.body.contains(r#"<section id="signing">"#));
    assert!(page.body.contains("<h2>Signing</h2>"));

    let url = text_of(&page, "jwks-url");
    let suffix = format!(
        "/v1/customer-portal/license-keys/jwks?organization_id={}",
        s.org
    );
    assert!(url.ends_with(&suffix), "{url}");
    assert!(url.starts_with("http"), "{url}");
    // The URL is the API's own, and it publishes what the page shows.
    let (kids, keys) = jwks(&app, &s.org).await;
    assert_eq!(kids.len(), 1, "{keys:?}");
    let kid = &kids[0];
    assert_eq!(text_of(&page, &format!("key-state-{kid}")), "signing");
    let hex = text_of(&page, &format!("key-hex-{kid}"));
    let x = URL_SAFE_NO_PAD
        .decode(keys[0]["x"].as_str().unwrap())
        .expect("base64url");
    assert_eq!(unhex(&hex), x);
    assert_eq!(hex.len(), 64);
    let jwk: Value =
        serde_json::from_str(&text_of(&page, &format!("key-jwk-{kid}"))).expect("JWK JSON");
    assert_eq!(jwk, keys[0]);
    assert_eq!(text_of(&page, "sign-every-answer"), "no, only when asked");
    assert!(page.body.contains(r#"id="sign-every""#));
    assert!(page.body.contains(r#"id="rotate-key""#));
    assert!(!page.body.contains("retired</span>"));

    // The seller's API view agrees (same URL, same key).
    let api = app
        .get(
            &format!("/v1/license-keys/signing?organization_id={}", s.org),
            Some(&s.token),
        )
        .await;
    api.expect(200);
    assert_eq!(api.body["jwks_url"], url.as_str());
    assert_eq!(api.body["keys"][0]["kid"], kid.as_str());
    assert_eq!(api.body["keys"][0]["public_key_hex"], hex.as_str());

    // Seen again: the same key (made once).
    let again = s.browser.get(&keys_page(&s.org)).await;
    assert_html(&again);
    assert_eq!(text_of(&again, &format!("key-hex-{kid}")), hex);
    assert_eq!(jwks(&app, &s.org).await.0, kids);

    // The key's own page is still its page (`signing` takes no key's place).
    let key_page = s
        .browser
        .get(&format!("/dashboard/{}/license-keys/{}", s.org, s.key_id))
        .await;
    assert_html(&key_page);
    assert_eq!(text_of(&key_page, "key-value"), s.key);
}

/// "Sign every answer" from the page: a validation asked without `Accept-Signature` comes
/// back signed by the key the page shows, and unsigned again once turned off.
#[actix_web::test]
async fn every_answer_is_signed_once_turned_on_and_unsigned_once_off() {
    let app = spawn_app().await;
    let mut s = shop(&app).await;
    let page = s.browser.get(&keys_page(&s.org)).await;
    assert_html(&page);
    let (kids, _) = jwks(&app, &s.org).await;
    let kid = kids[0].clone();
    let hex = text_of(&page, &format!("key-hex-{kid}"));
    let (reply, _) = validate(&app, &s).await;
    assert_unsigned(&reply);

    let done = form_post(
        &mut s.browser,
        &every_answer_form(&s.org),
        &[("sign_every_answer", "true")],
    )
    .await;
    assert_status(&done, 303);
    assert_eq!(
        done.location,
        format!("/dashboard/{}/license-keys#signing", s.org)
    );
    let page = s.browser.get(&keys_page(&s.org)).await;
    assert_html(&page);
    assert_eq!(text_of(&page, "sign-every-answer"), "yes");
    assert!(page.body.contains(r#"id="sign-when-asked""#));
    assert!(!page.body.contains(r#"id="sign-every""#));
    let api = app
        .get(
            &format!("/v1/license-keys/signing?organization_id={}", s.org),
            Some(&s.token),
        )
        .await;
    api.expect(200);
    assert_eq!(api.body["sign_every_answer"], true);

    let (reply, body) = validate(&app, &s).await;
    assert_eq!(verify(&reply, &body, &hex), Ok(kid.clone()));
    // Another key does not verify it (the check can fail).
    let other: String = ed25519_dalek::SigningKey::from_bytes(&[7; 32])
        .verifying_key()
        .as_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(verify(&reply, &body, &other).is_err());

    let done = form_post(
        &mut s.browser,
        &every_answer_form(&s.org),
        &[("sign_every_answer", "false")],
    )
    .await;
    assert_status(&done, 303);
    let page = s.browser.get(&keys_page(&s.org)).await;
    assert_eq!(text_of(&page, "sign-every-answer"), "no, only when asked");
    let (reply, _) = validate(&app, &s).await;
    assert_unsigned(&reply);

    // A form that is not one (no value, or not a boolean): refused, nothing changed.
    for fields in [vec![], vec![("sign_every_answer", "maybe")]] {
        let page = form_post(&mut s.browser, &every_answer_form(&s.org), &fields).await;
        assert_status(&page, 400);
        assert!(page.content_type.starts_with("text/html"));
    }
    let (reply, _) = validate(&app, &s).await;
    assert_unsigned(&reply);
}

/// "Rotate key": the JWKS publishes a new key first and keeps the old one; the page shows
/// the old one retired and the new one signing, and answers are signed by the new one.
#[actix_web::test]
async fn rotating_publishes_a_new_key_first_and_shows_the_old_one_retired() {
    let app = spawn_app().await;
    let mut s = shop(&app).await;
    let page = s.browser.get(&keys_page(&s.org)).await;
    assert_html(&page);
    let (before, _) = jwks(&app, &s.org).await;
    assert_eq!(before.len(), 1);
    let old = before[0].clone();
    let old_hex = text_of(&page, &format!("key-hex-{old}"));

    let done = form_post(&mut s.browser, &rotate_form(&s.org), &[]).await;
    assert_status(&done, 303);
    assert_eq!(
        done.location,
        format!("/dashboard/{}/license-keys#signing", s.org)
    );

    let (kids, keys) = jwks(&app, &s.org).await;
    assert_eq!(kids.len(), 2, "{keys:?}");
    assert_eq!(kids[1], old);
    let new = kids[0].clone();
    assert_ne!(new, old);

    let page = s.browser.get(&keys_page(&s.org)).await;
    assert_html(&page);
    assert_eq!(text_of(&page, &format!("key-state-{new}")), "signing");
    assert_eq!(text_of(&page, &format!("key-state-{old}")), "retired");
    assert_eq!(text_of(&page, &format!("key-hex-{old}")), old_hex);
    let new_hex = text_of(&page, &format!("key-hex-{new}"));
    assert_ne!(new_hex, old_hex);
    // The new key is listed first, the retired one with its date.
    let at_new = page.body.find(&format!(r#"id="key-{new}""#)).unwrap();
    let at_old = page.body.find(&format!(r#"id="key-{old}""#)).unwrap();
    assert!(at_new < at_old);
    assert!(page.body[at_old..].contains("<dt>Retired</dt>"));
    assert!(!page.body[at_new..at_old].contains("<dt>Retired</dt>"));
    for (i, kid) in kids.iter().enumerate() {
        let jwk: Value =
            serde_json::from_str(&text_of(&page, &format!("key-jwk-{kid}"))).expect("JWK JSON");
        assert_eq!(jwk, keys[i]);
    }

    // Answers are signed by the new key from now on.
    let done = form_post(
        &mut s.browser,
        &every_answer_form(&s.org),
        &[("sign_every_answer", "true")],
    )
    .await;
    assert_status(&done, 303);
    let (reply, body) = validate(&app, &s).await;
    assert_eq!(verify(&reply, &body, &new_hex), Ok(new.clone()));
    assert!(verify(&reply, &body, &old_hex).is_err());

    // Rotated again: three keys, newest first.
    let done = form_post(&mut s.browser, &rotate_form(&s.org), &[]).await;
    assert_status(&done, 303);
    let (again, _) = jwks(&app, &s.org).await;
    assert_eq!(again.len(), 3);
    assert_eq!(&again[1..], &kids[..]);
    let page = s.browser.get(&keys_page(&s.org)).await;
    assert_eq!(page.body.matches(">retired</span>").count(), 2);
    assert_eq!(page.body.matches(">signing</span>").count(), 1);
}

// ---------------------------------------------------------------------------------------
// Who may do what

/// A signed-in user who is not a member: the page and both forms are the dashboard's 404
/// (nothing of the organization's keys shown), and nothing changes; an organization that
/// does not exist is a 404 too; without a session, the page sends to sign in.
#[actix_web::test]
async fn a_user_who_is_not_a_member_is_not_found_and_changes_nothing() {
    let app = spawn_app().await;
    let mut s = shop(&app).await;
    let page = s.browser.get(&keys_page(&s.org)).await;
    assert_html(&page);
    let (kids, _) = jwks(&app, &s.org).await;
    let kid = kids[0].clone();

    let mut other = signed_in(&app, "mallory@example.com").await;
    let page = other.get(&keys_page(&s.org)).await;
    assert_not_found(&page);
    assert!(!page.body.contains(&kid));
    assert!(!page.body.contains("jwks-url"));
    for (path, fields) in [
        (
            every_answer_form(&s.org),
            vec![("sign_every_answer", "true")],
        ),
        (rotate_form(&s.org), vec![]),
    ] {
        let page = form_post(&mut other, &path, &fields).await;
        assert_not_found(&page);
        assert!(!page.body.contains(&kid), "{path}");
    }
    for (path, fields) in [
        (keys_page(UNKNOWN), None),
        (
            every_answer_form(UNKNOWN),
            Some(vec![("sign_every_answer", "true")]),
        ),
        (rotate_form(UNKNOWN), Some(vec![])),
    ] {
        let page = match fields {
            None => other.get(&path).await,
            Some(f) => form_post(&mut other, &path, &f).await,
        };
        assert_not_found(&page);
    }
    // Nothing changed: one key, the same, and answers unsigned.
    assert_eq!(jwks(&app, &s.org).await.0, vec![kid.clone()]);
    let (reply, _) = validate(&app, &s).await;
    assert_unsigned(&reply);
    let page = s.browser.get(&keys_page(&s.org)).await;
    assert_eq!(text_of(&page, "sign-every-answer"), "no, only when asked");
    assert_eq!(text_of(&page, &format!("key-state-{kid}")), "signing");

    // Without a session: to sign in, back to the page.
    let mut anonymous = Browser::new(&app);
    let page = anonymous.get(&keys_page(&s.org)).await;
    assert_status(&page, 303);
    assert!(
        page.location.starts_with("/oauth2/login?next="),
        "{}",
        page.location
    );
    assert!(page.location.contains("license-keys"), "{}", page.location);
}

/// Both forms without the right CSRF token (a forged one, none at all) are refused with 403
/// before anything is read, even for a member; nothing changes.
#[actix_web::test]
async fn the_forms_without_the_csrf_token_are_refused() {
    let app = spawn_app().await;
    let mut s = shop(&app).await;
    let page = s.browser.get(&keys_page(&s.org)).await;
    assert_html(&page);
    let (kids, _) = jwks(&app, &s.org).await;
    for (path, fields) in [
        (
            every_answer_form(&s.org),
            vec![("sign_every_answer", "true")],
        ),
        (rotate_form(&s.org), vec![]),
    ] {
        let mut forged = vec![("csrf_token", FORGED)];
        forged.extend_from_slice(&fields);
        for form in [forged.as_slice(), fields.as_slice()] {
            let page = s.browser.post(&path, form).await;
            assert_status(&page, 403);
            assert!(page.location.is_empty());
            assert!(page.content_type.starts_with("text/html"));
            assert!(page.body.contains("CSRF"), "{}", main_of(&page));
        }
    }
    assert_eq!(jwks(&app, &s.org).await.0, kids);
    let (reply, _) = validate(&app, &s).await;
    assert_unsigned(&reply);
    // With the token, the same form goes through (the refusal was the token's).
    let done = form_post(&mut s.browser, &rotate_form(&s.org), &[]).await;
    assert_status(&done, 303);
    assert_eq!(jwks(&app, &s.org).await.0.len(), 2);
}

/// Both forms are dashboard routes with a description, which the OpenAPI document lists.
#[actix_web::test]
async fn the_forms_are_described_routes() {
    let app = spawn_app().await;
    for route in [
        "/dashboard/{org}/license-keys/signing",
        "/dashboard/{org}/license-keys/signing/rotate",
    ] {
        let (_, _, what) = ROUTES
            .iter()
            .find(|(m, r, _)| *m == "post" && *r == route)
            .unwrap_or_else(|| panic!("post {route} is not in ROUTES"));
        assert!(!what.is_empty());
        let doc = app.get("/openapi.json", None).await;
        doc.expect(200);
        let op = &doc.body["paths"][route]["post"];
        assert_eq!(op["summary"], *what, "{route}");
        assert!(op["responses"]["403"].is_object(), "{route}");
    }
    let (_, _, page) = ROUTES
        .iter()
        .find(|(m, r, _)| *m == "get" && *r == "/dashboard/{org}/license-keys")
        .expect("the License keys page");
    assert!(page.contains("signing"), "{page}");
}
