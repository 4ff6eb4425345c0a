//! Signed license-key answers and offline license files (issue 32, parts 2 and 3), checked
//! over HTTP by a verifier written here from the RFCs rather than from the server's code:
//! the JWKS (RFC 8037 keys named by their RFC 7638 thumbprint), `Content-Digest` (RFC 9530)
//! over the exact body bytes, and the RFC 9421 signature base rebuilt from `Signature-Input`
//! and what the client sent; the verifier is shown to refuse a changed body, status, nonce,
//! path, request field or key, so its acceptances mean something. License files are opened
//! as Keygen's verifiers do (armour, `"license/" + enc` signed, AES-256-GCM under SHA-256 of
//! the key, `meta.expiry`).

use aes_gcm::aead::{Aead, KeyInit};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use chrono::{DateTime, Duration, SubsecRound, Utc};
use ed25519_dalek::{Signature, VerifyingKey};
use reqwest::header::HeaderMap;
use reqwest::Method;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tollgate::auth::Scope;
use tollgate::config::Settings;
use tollgate_actors::ManualClock;

use crate::helpers::{spawn_app, spawn_app_with, Reply, TestApp};
use crate::versions::{sell_key, Sale};

const PORTAL: &str = "/v1/customer-portal/license-keys";
const USERS: &str = "/v1/users/license-keys";
const TOKEN: &str = "/v1/license-keys";
const SIGNING: &str = "/v1/license-keys/signing";
const ROTATE: &str = "/v1/license-keys/signing/rotate";
pub(crate) const LICENSE_FILE: &str = "/v1/customer-portal/license-keys/license-file";
const UNKNOWN: &str = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";
/// What every signature must cover (RFC 9421 names, `;req` for the request's).
const MANDATORY: [&str; 4] = [
    "\"@status\"",
    "\"content-digest\"",
    "\"@method\";req",
    "\"@path\";req",
];

// ---------------------------------------------------------------------------------------
// The client side: what was sent and what came back, byte for byte.
// ---------------------------------------------------------------------------------------

/// A request as the client sent it (what `;req` components are taken from).
#[derive(Debug, Clone)]
struct Sent {
    method: String,
    path: String,
    query: Option<String>,
    authority: String,
    headers: Vec<(String, String)>,
}

/// One request and its answer, the body as raw bytes.
#[derive(Debug, Clone)]
pub(crate) struct Exchange {
    sent: Sent,
    pub(crate) status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Exchange {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().expect("an ASCII header").to_string())
    }

    #[track_caller]
    pub(crate) fn expect(&self, status: u16) -> &Self {
        assert_eq!(
            self.status,
            status,
            "{} {}: {}",
            self.sent.method,
            self.sent.path,
            String::from_utf8_lossy(&self.body)
        );
        self
    }

    /// Neither signed nor digested.
    #[track_caller]
    fn assert_unsigned(&self) {
        for name in ["signature", "signature-input", "content-digest"] {
            assert!(
                self.headers.get(name).is_none(),
                "{} {} ({}) carries {name}: {:?}",
                self.sent.method,
                self.sent.path,
                self.status,
                self.headers.get(name)
            );
        }
    }

    /// A refusal with Polar's `error` and Tollgate's `code`.
    #[track_caller]
    fn assert_refused(&self, status: u16, error: &str, code: &str) {
        self.expect(status);
        let body = self.json();
        assert_eq!(body["error"], error, "{body}");
        assert_eq!(body["code"], code, "{body}");
        assert!(body["detail"].is_string(), "{body}");
    }
}

/// Sends a request with these extra headers and reads the answer as bytes; the answer is
/// also checked against the OpenAPI document, as every helper's is.
async fn exchange(
    app: &TestApp,
    method: Method,
    path_and_query: &str,
    token: Option<&str>,
    body: Option<&Value>,
    headers: &[(&str, &str)],
) -> Exchange {
    let mut req = app.request(method.clone(), path_and_query, token);
    let mut sent_headers = Vec::new();
    if let Some(body) = body {
        req = req
            .header("content-type", "application/json")
            .body(serde_json::to_vec(body).unwrap());
        sent_headers.push(("content-type".to_string(), "application/json".to_string()));
    }
    for (name, value) in headers {
        req = req.header(*name, *value);
        sent_headers.push((name.to_ascii_lowercase(), value.to_string()));
    }
    let (path, query) = match path_and_query.split_once('?') {
        Some((p, q)) => (p.to_string(), Some(q.to_string())),
        None => (path_and_query.to_string(), None),
    };
    let resp = req.send().await.expect("sending the request");
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = resp.bytes().await.expect("reading the body").to_vec();
    let reply = Reply {
        status,
        headers: headers.clone(),
        body: serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into())),
    };
    crate::schema::check(method.as_str(), &path, None, &reply);
    Exchange {
        sent: Sent {
            method: method.as_str().to_string(),
            path,
            query,
            authority: app.address.trim_start_matches("http://").to_string(),
            headers: sent_headers,
        },
        status: status.as_u16(),
        headers,
        body: bytes,
    }
}

pub(crate) async fn post(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    body: &Value,
    headers: &[(&str, &str)],
) -> Exchange {
    exchange(app, Method::POST, path, token, Some(body), headers).await
}

/// `Accept-Signature` asking for the mandatory components under `sig1`, with `nonce`.
pub(crate) fn ask(nonce: &str) -> String {
    format!(r#"sig1=("@status" "content-digest" "@method";req "@path";req);nonce="{nonce}""#)
}

fn key_body(sale: &Sale) -> Value {
    json!({"key": sale.key, "organization_id": sale.org})
}

// ---------------------------------------------------------------------------------------
// The verifier: JWKS, Content-Digest, RFC 9421 signature base, ed25519.
// ---------------------------------------------------------------------------------------

/// A public key from the organization's JWKS.
#[derive(Debug, Clone)]
pub(crate) struct Jwk {
    kid: String,
    key: VerifyingKey,
}

/// The RFC 7638 thumbprint of an OKP key: SHA-256 of its required members in
/// lexicographic order, without whitespace, base64url.
fn thumbprint(x: &str) -> String {
    let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

/// Checks one JWK's shape (RFC 8037) and returns it as a key.
#[track_caller]
fn parse_jwk(jwk: &Value) -> Jwk {
    let obj = jwk.as_object().expect("a JWK is an object");
    assert_eq!(jwk["kty"], "OKP", "{jwk}");
    assert_eq!(jwk["crv"], "Ed25519", "{jwk}");
    assert_eq!(jwk["use"], "sig", "{jwk}");
    assert_eq!(jwk["alg"], "EdDSA", "{jwk}");
    assert!(obj.get("d").is_none(), "a private part is published: {jwk}");
    let x = jwk["x"].as_str().expect("x");
    let raw = URL_SAFE_NO_PAD
        .decode(x)
        .expect("x is base64url without padding");
    let raw: [u8; 32] = raw.try_into().expect("x is 32 bytes");
    let kid = jwk["kid"].as_str().expect("kid").to_string();
    assert_eq!(kid, thumbprint(x), "kid is the RFC 7638 thumbprint: {jwk}");
    Jwk {
        kid,
        key: VerifyingKey::from_bytes(&raw).expect("an ed25519 point"),
    }
}

/// The organization's JWKS, fetched as an app would: no token.
pub(crate) async fn jwks(app: &TestApp, org: &str) -> Vec<Jwk> {
    let r = app
        .get(&format!("{PORTAL}/jwks?organization_id={org}"), None)
        .await;
    r.expect(200);
    let keys = r.body["keys"].as_array().expect("keys").clone();
    assert!(!keys.is_empty(), "{}", r.body);
    keys.iter().map(parse_jwk).collect()
}

/// What a verified signature said.
#[derive(Debug)]
pub(crate) struct Verified {
    kid: String,
    created: i64,
    tag: Option<String>,
    /// The covered components as serialized (`"@path";req`), in order.
    components: Vec<String>,
}

fn sf_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn sf_bare(v: &sfv::BareItem) -> Result<String, String> {
    if let Some(s) = v.as_string() {
        return Ok(sf_string(s.as_str()));
    }
    if let Some(i) = v.as_integer() {
        return Ok(i64::from(i).to_string());
    }
    if let Some(b) = v.as_boolean() {
        return Ok(if b { "?1" } else { "?0" }.to_string());
    }
    if let Some(t) = v.as_token() {
        return Ok(t.as_str().to_string());
    }
    if let Some(bytes) = v.as_byte_sequence() {
        return Ok(format!(":{}:", STANDARD.encode(bytes)));
    }
    Err(format!("unexpected parameter value {v:?}"))
}

/// RFC 8941 §4.1.1.2 parameters.
fn sf_params(params: &sfv::Parameters) -> Result<String, String> {
    let mut out = String::new();
    for (key, value) in params {
        out.push(';');
        out.push_str(key.as_str());
        if value.as_boolean() != Some(true) {
            out.push('=');
            out.push_str(&sf_bare(value)?);
        }
    }
    Ok(out)
}

/// A response or request field's value per RFC 9421 §2.1: lines trimmed, joined by ", ".
fn field(values: Vec<&str>) -> Option<String> {
    if values.is_empty() {
        return None;
    }
    Some(
        values
            .iter()
            .map(|v| v.trim())
            .collect::<Vec<_>>()
            .join(", "),
    )
}

fn parse_dict(ex: &Exchange, name: &str) -> Result<sfv::Dictionary, String> {
    let lines: Vec<&str> = ex
        .headers
        .get_all(name)
        .iter()
        .map(|v| v.to_str().map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    if lines.is_empty() {
        return Err(format!("no {name}"));
    }
    sfv::Parser::new(lines.join(", ").as_str())
        .parse::<sfv::Dictionary>()
        .map_err(|e| format!("{name} is no dictionary: {e}"))
}

/// Verifies the signature `label` of `ex` with one of `keys` (by `keyid`), expecting
/// `nonce` (`None`: the signature must carry none).
pub(crate) fn verify(
    ex: &Exchange,
    keys: &[Jwk],
    label: &str,
    nonce: Option<&str>,
) -> Result<Verified, String> {
    // RFC 9530: the digest is of the body as received.
    let digests = parse_dict(ex, "content-digest")?;
    let digest = digests
        .iter()
        .find(|(k, _)| k.as_str() == "sha-256")
        .and_then(|(_, v)| match v {
            sfv::ListEntry::Item(i) => i.bare_item.as_byte_sequence().map(<[u8]>::to_vec),
            sfv::ListEntry::InnerList(_) => None,
        })
        .ok_or("no sha-256 byte sequence in Content-Digest")?;
    if digest != Sha256::digest(&ex.body).to_vec() {
        return Err("Content-Digest does not match the body".into());
    }

    let inputs = parse_dict(ex, "signature-input")?;
    let input = match inputs.iter().find(|(k, _)| k.as_str() == label) {
        Some((_, sfv::ListEntry::InnerList(list))) => list.clone(),
        Some(_) => return Err(format!("{label} is not an inner list")),
        None => return Err(format!("no signature labelled {label}")),
    };

    let mut base = String::new();
    let mut components = Vec::new();
    for item in &input.items {
        let name = item
            .bare_item
            .as_string()
            .ok_or("a component is not a string")?
            .as_str()
            .to_string();
        let mut req = false;
        for (k, v) in &item.params {
            match (k.as_str(), v.as_boolean()) {
                ("req", Some(b)) => req = b,
                (other, _) => return Err(format!("unknown component parameter {other}")),
            }
        }
        let value = match (name.as_str(), req) {
            ("@status", false) => ex.status.to_string(),
            ("@method", true) => ex.sent.method.clone(),
            ("@path", true) => ex.sent.path.clone(),
            ("@query", true) => format!("?{}", ex.sent.query.clone().unwrap_or_default()),
            ("@authority", true) => ex.sent.authority.to_ascii_lowercase(),
            (n, true) if !n.starts_with('@') => field(
                ex.sent
                    .headers
                    .iter()
                    .filter(|(k, _)| k.eq_ignore_ascii_case(n))
                    .map(|(_, v)| v.as_str())
                    .collect(),
            )
            .ok_or(format!("the request had no {n}"))?,
            (n, false) if !n.starts_with('@') => field(
                ex.headers
                    .get_all(n)
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                    .collect(),
            )
            .ok_or(format!("the response has no {n}"))?,
            (n, r) => return Err(format!("cannot rebuild component {n} (req: {r})")),
        };
        let serialized = format!("{}{}", sf_string(&name), if req { ";req" } else { "" });
        if components.contains(&serialized) {
            return Err(format!("{serialized} covered twice"));
        }
        base.push_str(&serialized);
        base.push_str(": ");
        base.push_str(&value);
        base.push('\n');
        components.push(serialized);
    }
    for m in MANDATORY {
        if !components.iter().any(|c| c == m) {
            return Err(format!("{m} is not covered"));
        }
    }
    let param = |name: &str| input.params.iter().find(|(k, _)| k.as_str() == name);
    let string_param = |name: &str| -> Result<Option<String>, String> {
        match param(name) {
            None => Ok(None),
            Some((_, v)) => v
                .as_string()
                .map(|s| Some(s.as_str().to_string()))
                .ok_or(format!("{name} is not a string")),
        }
    };
    if string_param("alg")?.as_deref() != Some("ed25519") {
        return Err("alg is not ed25519".into());
    }
    let kid = string_param("keyid")?.ok_or("no keyid")?;
    let created = param("created")
        .and_then(|(_, v)| v.as_integer())
        .map(i64::from)
        .ok_or("no integer created")?;
    let got_nonce = string_param("nonce")?;
    if got_nonce.as_deref() != nonce {
        return Err(format!("nonce {got_nonce:?}, expected {nonce:?}"));
    }
    let tag = string_param("tag")?;
    let item_list: Vec<String> = input
        .items
        .iter()
        .map(|i| {
            Ok(format!(
                "{}{}",
                sf_bare(&i.bare_item)?,
                sf_params(&i.params)?
            ))
        })
        .collect::<Result<_, String>>()?;
    base.push_str("\"@signature-params\": (");
    base.push_str(&item_list.join(" "));
    base.push(')');
    base.push_str(&sf_params(&input.params)?);

    let key = keys
        .iter()
        .find(|k| k.kid == kid)
        .ok_or(format!("keyid {kid} is not a trusted key"))?;
    let signatures = parse_dict(ex, "signature")?;
    let signature = match signatures.iter().find(|(k, _)| k.as_str() == label) {
        Some((_, sfv::ListEntry::Item(i))) => i
            .bare_item
            .as_byte_sequence()
            .ok_or("the signature is not a byte sequence")?
            .to_vec(),
        _ => return Err(format!("no Signature {label}")),
    };
    let signature: [u8; 64] = signature
        .try_into()
        .map_err(|_| "the signature is not 64 bytes")?;
    key.key
        .verify_strict(base.as_bytes(), &Signature::from_bytes(&signature))
        .map_err(|e| format!("the signature does not verify: {e}"))?;
    Ok(Verified {
        kid,
        created,
        tag,
        components,
    })
}

/// Verifies and checks the echoed parameters, then shows that the same check refuses the
/// answer changed in each way an attacker could change it.
#[track_caller]
fn verify_and_tamper(ex: &Exchange, keys: &[Jwk], label: &str, nonce: &str) -> Verified {
    let v = verify(ex, keys, label, Some(nonce))
        .unwrap_or_else(|e| panic!("{} {} ({}): {e}", ex.sent.method, ex.sent.path, ex.status));
    assert_eq!(v.kid, keys[0].kid, "signed with the current key");
    let now = Utc::now().timestamp();
    assert!(
        (now - 3600..=now + 3600).contains(&v.created),
        "created {} is not about now",
        v.created
    );

    // A changed body: the digest no longer matches; with a recomputed digest, the
    // signature (which covers it) fails.
    let mut forged = ex.clone();
    if forged.body.is_empty() {
        forged.body = b"{}".to_vec();
    } else {
        forged.body[0] ^= 0x01;
    }
    assert!(verify(&forged, keys, label, Some(nonce)).is_err());
    let digest = format!(
        "sha-256=:{}:",
        STANDARD.encode(Sha256::digest(&forged.body))
    );
    forged
        .headers
        .insert("content-digest", digest.parse().unwrap());
    let refused = verify(&forged, keys, label, Some(nonce)).expect_err("a forged body");
    assert!(refused.contains("does not verify"), "{refused}");
    // Another status.
    let mut forged = ex.clone();
    forged.status = if ex.status == 200 { 404 } else { 200 };
    assert!(verify(&forged, keys, label, Some(nonce)).is_err());
    // Another nonce (a replayed answer).
    assert!(verify(ex, keys, label, Some("another-nonce")).is_err());
    assert!(verify(ex, keys, label, None).is_err());
    // Another path or method.
    let mut forged = ex.clone();
    forged.sent.path = format!("{}x", ex.sent.path);
    assert!(verify(&forged, keys, label, Some(nonce)).is_err());
    let mut forged = ex.clone();
    forged.sent.method = "PUT".into();
    assert!(verify(&forged, keys, label, Some(nonce)).is_err());
    // A key that is not the organization's.
    let stranger = ed25519_dalek::SigningKey::from_bytes(&[9; 32]).verifying_key();
    let impostor = [Jwk {
        kid: v.kid.clone(),
        key: stranger,
    }];
    assert!(verify(ex, &impostor, label, Some(nonce)).is_err());
    v
}

// ---------------------------------------------------------------------------------------
// JWKS
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn the_jwks_is_public_and_names_its_key_by_thumbprint() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "jwks").await;
    let path = format!("{PORTAL}/jwks?organization_id={}", sale.org);

    let r = app.get(&path, None).await;
    r.expect(200);
    let keys = r.body["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1, "{}", r.body);
    let jwk = parse_jwk(&keys[0]);
    // Made once: the same key on every read.
    let again = jwks(&app, &sale.org).await;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].kid, jwk.kid);
    assert_eq!(again[0].key, jwk.key);

    // The seller's view shows the same key.
    let seller = app
        .get(
            &format!("{SIGNING}?organization_id={}", sale.org),
            Some(&app.token),
        )
        .await;
    seller.expect(200);
    assert_eq!(seller.body["keys"][0]["kid"], jwk.kid.as_str());
    let hex: String = jwk
        .key
        .to_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(seller.body["keys"][0]["public_key_hex"], hex.as_str());
    assert_eq!(seller.body["keys"][0]["jwk"], keys[0]);

    // Any origin may read it, and the signature headers of the answers it verifies.
    let r = app
        .send(
            app.request(Method::GET, &path, None)
                .header("Origin", "https://app.example"),
        )
        .await;
    r.expect(200);
    assert_eq!(r.header("access-control-allow-origin"), "*");
    let exposed = r
        .header("access-control-expose-headers")
        .to_ascii_lowercase();
    for name in ["signature", "signature-input", "content-digest"] {
        assert!(
            exposed.split(',').any(|h| h.trim() == name),
            "{name} not exposed: {exposed}"
        );
    }
    // A browser may ask for a signature: preflights allow Accept-Signature, here and on
    // the routes that sign.
    for (route, method) in [
        (path.as_str(), "GET"),
        ("/v1/customer-portal/license-keys/validate", "POST"),
        ("/v1/customer-portal/license-keys/activate", "POST"),
        ("/v1/customer-portal/license-keys/deactivate", "POST"),
    ] {
        let resp = app
            .client
            .request(Method::OPTIONS, app.url(route))
            .header("Origin", "https://app.example")
            .header("Access-Control-Request-Method", method)
            .header(
                "Access-Control-Request-Headers",
                "accept-signature, content-type",
            )
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 204, "{route}");
        let h = |n: &str| {
            resp.headers()
                .get(n)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_ascii_lowercase()
        };
        assert_eq!(h("access-control-allow-origin"), "*", "{route}");
        assert!(
            h("access-control-allow-headers")
                .split(',')
                .any(|x| x.trim() == "accept-signature"),
            "{route}: {}",
            h("access-control-allow-headers")
        );
        assert!(h("access-control-allow-methods").contains(&method.to_ascii_lowercase()));
    }
    // A signed answer from a browser exposes its signature headers too.
    let ex = post(
        &app,
        &format!("{PORTAL}/validate"),
        None,
        &key_body(&sale),
        &[
            ("Origin", "https://app.example"),
            ("Accept-Signature", &*ask("cors")),
        ],
    )
    .await;
    ex.expect(200);
    assert_eq!(
        ex.header("access-control-allow-origin").as_deref(),
        Some("*")
    );
    verify(&ex, &again, "sig1", Some("cors")).unwrap();

    // No such organization: 404, and no keys are made for it.
    let r = app
        .get(&format!("{PORTAL}/jwks?organization_id={UNKNOWN}"), None)
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app.get(&format!("{PORTAL}/jwks"), None).await;
    r.expect_invalid_at(json!(["query", "organization_id"]));
    let r = app
        .get(&format!("{PORTAL}/jwks?organization_id=not-a-uuid"), None)
        .await;
    r.expect_validation();
}

/// Keys are only made for an organization that exists: asking for a signature about any
/// other id is answered unsigned and publishes nothing.
#[actix_web::test]
async fn no_keys_for_an_organization_that_does_not_exist() {
    let app = spawn_app().await;
    let ex = post(
        &app,
        &format!("{PORTAL}/validate"),
        None,
        &json!({"key": "TG-NOPE", "organization_id": UNKNOWN}),
        &[("Accept-Signature", &*ask("ghost"))],
    )
    .await;
    ex.assert_refused(404, "ResourceNotFound", "not_found");
    ex.assert_unsigned();
    let r = app
        .get(&format!("{PORTAL}/jwks?organization_id={UNKNOWN}"), None)
        .await;
    r.expect_error(404);
}

// ---------------------------------------------------------------------------------------
// Signed answers
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn answers_are_signed_when_asked_and_refuse_every_tampering() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "signed").await;
    let validate = format!("{PORTAL}/validate");

    // Not asked: Polar's answer, nothing more.
    let ex = post(&app, &validate, None, &key_body(&sale), &[]).await;
    ex.expect(200);
    ex.assert_unsigned();
    let unsigned_body = ex.json();

    let keys = jwks(&app, &sale.org).await;
    let accept = r#"sig1=("@status" "content-digest" "@method";req "@path";req);nonce="n-validate-1";tag="desktop-app""#;
    let ex = post(
        &app,
        &validate,
        None,
        &key_body(&sale),
        &[("Accept-Signature", accept)],
    )
    .await;
    ex.expect(200);
    // The body is Polar's, untouched.
    let body = ex.json();
    assert_eq!(body["id"], sale.key_id.as_str());
    assert_eq!(body["key"], sale.key.as_str());
    let fields = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(fields(&body), fields(&unsigned_body));
    // RFC 9530, by hand.
    assert_eq!(
        ex.header("content-digest").unwrap(),
        format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(&ex.body)))
    );
    let input = ex.header("signature-input").unwrap();
    assert!(input.starts_with("sig1=("), "{input}");
    assert!(input.contains(r#"nonce="n-validate-1""#), "{input}");
    assert!(input.contains(r#"tag="desktop-app""#), "{input}");
    assert!(input.contains(r#"alg="ed25519""#), "{input}");
    assert!(
        input.contains(&format!(r#"keyid="{}""#, keys[0].kid)),
        "{input}"
    );
    let v = verify_and_tamper(&ex, &keys, "sig1", "n-validate-1");
    assert_eq!(v.tag.as_deref(), Some("desktop-app"));
    assert_eq!(v.components, MANDATORY);
    // Not another label.
    assert!(verify(&ex, &keys, "sig2", Some("n-validate-1")).is_err());

    // Activate (200) and deactivate (204, an empty body) are signed too.
    let ex = post(
        &app,
        &format!("{PORTAL}/activate"),
        None,
        &json!({"key": sale.key, "organization_id": sale.org, "label": "laptop"}),
        &[("Accept-Signature", &*ask("n-activate"))],
    )
    .await;
    ex.expect(200);
    verify_and_tamper(&ex, &keys, "sig1", "n-activate");
    let activation = ex.json()["id"].as_str().unwrap().to_string();
    let ex = post(
        &app,
        &format!("{PORTAL}/deactivate"),
        None,
        &json!({"key": sale.key, "organization_id": sale.org, "activation_id": activation}),
        &[("Accept-Signature", &*ask("n-deactivate"))],
    )
    .await;
    ex.expect(204);
    assert!(ex.body.is_empty());
    assert_eq!(
        ex.header("content-digest").unwrap(),
        format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(b"")))
    );
    verify_and_tamper(&ex, &keys, "sig1", "n-deactivate");

    // Refusals are signed: a proxy cannot turn a 404 into a 200, nor a 200 into a 404.
    let ex = post(
        &app,
        &validate,
        None,
        &json!({"key": "TG-NOT-A-KEY", "organization_id": sale.org}),
        &[("Accept-Signature", &*ask("n-unknown"))],
    )
    .await;
    ex.assert_refused(404, "ResourceNotFound", "not_found");
    verify_and_tamper(&ex, &keys, "sig1", "n-unknown");
    let ex = post(
        &app,
        &validate,
        None,
        &json!({"key": sale.key, "organization_id": sale.org, "activation_id": UNKNOWN}),
        &[("Accept-Signature", &*ask("n-no-activation"))],
    )
    .await;
    ex.assert_refused(404, "ResourceNotFound", "activation_not_found");
    verify_and_tamper(&ex, &keys, "sig1", "n-no-activation");

    app.patch_json(
        &format!("/v1/license-keys/{}", sale.key_id),
        Some(&app.token),
        &json!({"status": "revoked"}),
    )
    .await
    .expect(200);
    let ex = post(
        &app,
        &format!("{PORTAL}/activate"),
        None,
        &json!({"key": sale.key, "organization_id": sale.org, "label": "late"}),
        &[("Accept-Signature", &*ask("n-revoked"))],
    )
    .await;
    ex.assert_refused(403, "NotPermitted", "revoked");
    verify_and_tamper(&ex, &keys, "sig1", "n-revoked");
    let ex = post(
        &app,
        &validate,
        None,
        &key_body(&sale),
        &[("Accept-Signature", &*ask("n-revoked-validate"))],
    )
    .await;
    ex.assert_refused(404, "ResourceNotFound", "revoked");
    verify_and_tamper(&ex, &keys, "sig1", "n-revoked-validate");
    // A body-parse 422 is not an answer about a key: unsigned.
    let ex = post(
        &app,
        &validate,
        None,
        &json!({"organization_id": sale.org}),
        &[("Accept-Signature", &*ask("n-422"))],
    )
    .await;
    ex.expect(422);
    ex.assert_unsigned();
}

#[actix_web::test]
async fn extra_components_and_several_signatures_are_covered() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "components").await;
    let keys = jwks(&app, &sale.org).await;

    let accept =
        r#"app=("@query";req "@authority";req "x-app";req "content-type" "@status");nonce="q-1""#;
    let ex = post(
        &app,
        &format!("{PORTAL}/validate?build=42&channel=beta"),
        None,
        &key_body(&sale),
        &[("Accept-Signature", accept), ("X-App", "desktop/1.2.3")],
    )
    .await;
    ex.expect(200);
    let v = verify_and_tamper(&ex, &keys, "app", "q-1");
    // What was asked first, in its order, then the mandatory ones not already asked.
    assert_eq!(
        v.components,
        [
            "\"@query\";req",
            "\"@authority\";req",
            "\"x-app\";req",
            "\"content-type\"",
            "\"@status\"",
            "\"content-digest\"",
            "\"@method\";req",
            "\"@path\";req",
        ]
    );
    assert!(ex.header("signature-input").unwrap().starts_with("app=("));
    assert!(
        verify(&ex, &keys, "sig1", Some("q-1")).is_err(),
        "only `app`"
    );
    // Each extra component counts: another query, host, request field or content type
    // fails.
    let mut forged = ex.clone();
    forged.sent.query = Some("build=43&channel=beta".into());
    assert!(verify(&forged, &keys, "app", Some("q-1")).is_err());
    let mut forged = ex.clone();
    forged.sent.authority = "evil.example".into();
    assert!(verify(&forged, &keys, "app", Some("q-1")).is_err());
    let mut forged = ex.clone();
    forged.sent.headers = vec![("x-app".into(), "desktop/9.9.9".into())];
    assert!(verify(&forged, &keys, "app", Some("q-1")).is_err());
    let mut forged = ex.clone();
    forged
        .headers
        .insert("content-type", "text/plain".parse().unwrap());
    assert!(verify(&forged, &keys, "app", Some("q-1")).is_err());

    // Two signatures at once, each with its nonce; an empty list is the mandatory set.
    let ex = post(
        &app,
        &format!("{PORTAL}/validate"),
        None,
        &key_body(&sale),
        &[(
            "Accept-Signature",
            r#"sig1=("@authority";req);nonce="a", sig2=();nonce="b""#,
        )],
    )
    .await;
    ex.expect(200);
    let one = verify_and_tamper(&ex, &keys, "sig1", "a");
    let two = verify_and_tamper(&ex, &keys, "sig2", "b");
    assert_eq!(one.components[0], "\"@authority\";req");
    assert_eq!(two.components, MANDATORY);
    assert!(verify(&ex, &keys, "sig1", Some("b")).is_err());
    // `alg="ed25519"` and `created`/`keyid` asked for are fine; no nonce, none echoed.
    let ex = post(
        &app,
        &format!("{PORTAL}/validate"),
        None,
        &key_body(&sale),
        &[(
            "Accept-Signature",
            r#"sig1=("@status");alg="ed25519";created;keyid="whatever""#,
        )],
    )
    .await;
    ex.expect(200);
    let v = verify(&ex, &keys, "sig1", None).unwrap();
    assert_eq!(v.kid, keys[0].kid);
    assert!(verify(&ex, &keys, "sig1", Some("")).is_err());
}

#[actix_web::test]
async fn an_accept_signature_that_cannot_be_honoured_is_a_400() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "bad-accept").await;
    let long_nonce = format!(r#"sig1=("@status");nonce="{}""#, "n".repeat(300));
    let many_labels = (1..=5)
        .map(|i| format!("s{i}=()"))
        .collect::<Vec<_>>()
        .join(", ");
    let many_components = format!(
        "sig1=({})",
        (0..17)
            .map(|i| format!("\"x-h{i}\";req"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let cases: Vec<(&str, String)> = vec![
        (
            "an algorithm other than ed25519",
            r#"sig1=("@status");alg="rsa-pss-sha512""#.into(),
        ),
        ("hmac", r#"sig1=("@status");alg="hmac-sha256""#.into()),
        ("not an inner list", r#"sig1="@status""#.into()),
        ("not a dictionary", "((garbage".into()),
        ("a token, not a string", "sig1=(status)".into()),
        ("a component that is not a string", "sig1=(1)".into()),
        ("@method of the response", r#"sig1=("@method")"#.into()),
        ("@status of the request", r#"sig1=("@status";req)"#.into()),
        (
            "an unknown derived component",
            r#"sig1=("@request-target";req)"#.into(),
        ),
        ("@target-uri", r#"sig1=("@target-uri";req)"#.into()),
        (
            "a response field Tollgate does not set",
            r#"sig1=("x-custom")"#.into(),
        ),
        (
            "a request field that was not sent",
            r#"sig1=("x-missing";req)"#.into(),
        ),
        ("an uppercase field name", r#"sig1=("X-App";req)"#.into()),
        (
            "an unknown component parameter",
            r#"sig1=("@status";sf)"#.into(),
        ),
        (
            "a nonce that is not a string",
            r#"sig1=("@status");nonce=123"#.into(),
        ),
        (
            "a tag that is not a string",
            r#"sig1=("@status");tag=?1"#.into(),
        ),
        ("a nonce too long", long_nonce),
        ("too many signatures", many_labels),
        ("too many components", many_components),
    ];
    let before = app
        .get(
            &format!("/v1/license-keys/{}", sale.key_id),
            Some(&app.token),
        )
        .await;
    for route in [
        format!("{PORTAL}/validate"),
        format!("{USERS}/validate"),
        format!("{PORTAL}/activate"),
    ] {
        for (what, header) in &cases {
            let mut body = key_body(&sale);
            if route.ends_with("activate") {
                body["label"] = json!("never");
            }
            let ex = post(
                &app,
                &route,
                None,
                &body,
                &[("Accept-Signature", header.as_str()), ("X-App", "desktop")],
            )
            .await;
            assert_eq!(ex.status, 400, "{route}, {what}: {header}: {:?}", ex.json());
            let json = ex.json();
            assert_eq!(json["error"], "BadRequest", "{what}: {json}");
            assert!(
                json["detail"]
                    .as_str()
                    .is_some_and(|d| d.starts_with("Accept-Signature")),
                "{what}: {json}"
            );
            ex.assert_unsigned();
        }
    }
    // The token route refuses them the same way.
    let ex = post(
        &app,
        &format!("{TOKEN}/validate"),
        Some(&app.token),
        &key_body(&sale),
        &[(
            "Accept-Signature",
            r#"sig1=("@status");alg="rsa-v1_5-sha256""#,
        )],
    )
    .await;
    ex.expect(400);
    assert_eq!(ex.json()["error"], "BadRequest");
    // None of them validated the key or took an activation.
    let after = app
        .get(
            &format!("/v1/license-keys/{}", sale.key_id),
            Some(&app.token),
        )
        .await;
    after.expect(200);
    assert_eq!(after.body["validations"], before.body["validations"]);
    assert_eq!(after.body["activations"], json!([]), "{}", after.body);
}

#[actix_web::test]
async fn every_validation_route_signs_for_its_own_path() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "routes").await;
    let keys = jwks(&app, &sale.org).await;
    for (prefix, token) in [
        (USERS, None),
        (PORTAL, None),
        (TOKEN, Some(app.token.as_str())),
    ] {
        let validate = format!("{prefix}/validate");
        let ex = post(&app, &validate, token, &key_body(&sale), &[]).await;
        ex.expect(200);
        ex.assert_unsigned();
        let nonce = format!("{prefix}-validate");
        let ex = post(
            &app,
            &validate,
            token,
            &key_body(&sale),
            &[("Accept-Signature", &*ask(&nonce))],
        )
        .await;
        ex.expect(200);
        verify_and_tamper(&ex, &keys, "sig1", &nonce);
        // An answer of one route is no answer of another.
        for other in [USERS, PORTAL, TOKEN].iter().filter(|p| **p != prefix) {
            let mut moved = ex.clone();
            moved.sent.path = format!("{other}/validate");
            assert!(verify(&moved, &keys, "sig1", Some(&nonce)).is_err());
        }

        let nonce = format!("{prefix}-activate");
        let ex = post(
            &app,
            &format!("{prefix}/activate"),
            token,
            &json!({"key": sale.key, "organization_id": sale.org, "label": prefix}),
            &[("Accept-Signature", &*ask(&nonce))],
        )
        .await;
        ex.expect(200);
        verify_and_tamper(&ex, &keys, "sig1", &nonce);
        let activation = ex.json()["id"].as_str().unwrap().to_string();

        let nonce = format!("{prefix}-deactivate");
        let ex = post(
            &app,
            &format!("{prefix}/deactivate"),
            token,
            &json!({"key": sale.key, "organization_id": sale.org, "activation_id": activation}),
            &[("Accept-Signature", &*ask(&nonce))],
        )
        .await;
        ex.expect(204);
        verify_and_tamper(&ex, &keys, "sig1", &nonce);

        let nonce = format!("{prefix}-refused");
        let ex = post(
            &app,
            &validate,
            token,
            &json!({"key": "TG-NOPE", "organization_id": sale.org}),
            &[("Accept-Signature", &*ask(&nonce))],
        )
        .await;
        ex.assert_refused(404, "ResourceNotFound", "not_found");
        verify_and_tamper(&ex, &keys, "sig1", &nonce);
    }
}

// ---------------------------------------------------------------------------------------
// The seller's settings
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn an_organization_may_sign_every_answer() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "every").await;
    let t = Some(app.token.as_str());
    let validate = format!("{PORTAL}/validate");

    let r = app
        .get(&format!("{SIGNING}?organization_id={}", sale.org), t)
        .await;
    r.expect(200);
    assert_eq!(r.body["organization_id"], sale.org.as_str());
    assert_eq!(r.body["sign_every_answer"], false);
    let jwks_url = r.body["jwks_url"].as_str().unwrap();
    assert!(
        jwks_url.ends_with(&format!(
            "/v1/customer-portal/license-keys/jwks?organization_id={}",
            sale.org
        )),
        "{jwks_url}"
    );
    assert!(jwks_url.starts_with("http"), "{jwks_url}");
    let keys = r.body["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    assert!(keys[0]["retired_at"].is_null());
    crate::helpers::assert_utc_timestamp(&keys[0]["created_at"]);
    let published = jwks(&app, &sale.org).await;
    assert_eq!(keys[0]["kid"], published[0].kid.as_str());

    let r = app
        .patch_json(
            SIGNING,
            t,
            &json!({"organization_id": sale.org, "sign_every_answer": true}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["sign_every_answer"], true);
    assert_eq!(r.body["keys"][0]["kid"], published[0].kid.as_str());
    let r = app
        .get(&format!("{SIGNING}?organization_id={}", sale.org), t)
        .await;
    assert_eq!(r.body["sign_every_answer"], true);

    // Unasked: `sig1`, the mandatory components, no nonce.
    for (path, token) in [
        (validate.clone(), None),
        (format!("{USERS}/validate"), None),
        (format!("{TOKEN}/validate"), t),
    ] {
        let ex = post(&app, &path, token, &key_body(&sale), &[]).await;
        ex.expect(200);
        let v = verify(&ex, &published, "sig1", None).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(v.components, MANDATORY);
        assert!(v.tag.is_none());
        assert!(!ex.header("signature-input").unwrap().contains("nonce"));
        assert!(verify(&ex, &published, "sig1", Some("x")).is_err());
        let mut forged = ex.clone();
        forged.status = 404;
        assert!(verify(&forged, &published, "sig1", None).is_err());
    }
    let ex = post(
        &app,
        &validate,
        None,
        &json!({"key": "TG-NOPE", "organization_id": sale.org}),
        &[],
    )
    .await;
    ex.assert_refused(404, "ResourceNotFound", "not_found");
    verify(&ex, &published, "sig1", None).unwrap();
    // Asked for: what was asked, under its label, and nothing else.
    let ex = post(
        &app,
        &validate,
        None,
        &key_body(&sale),
        &[("Accept-Signature", r#"mine=();nonce="m""#)],
    )
    .await;
    ex.expect(200);
    verify_and_tamper(&ex, &published, "mine", "m");
    assert!(verify(&ex, &published, "sig1", None).is_err());

    // Off again: unsigned unless asked.
    let r = app
        .patch_json(
            SIGNING,
            t,
            &json!({"organization_id": sale.org, "sign_every_answer": false}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["sign_every_answer"], false);
    let ex = post(&app, &validate, None, &key_body(&sale), &[]).await;
    ex.expect(200);
    ex.assert_unsigned();
    let ex = post(
        &app,
        &validate,
        None,
        &key_body(&sale),
        &[("Accept-Signature", &*ask("still"))],
    )
    .await;
    verify_and_tamper(&ex, &published, "sig1", "still");

    // Bodies are checked.
    let r = app
        .patch_json(SIGNING, t, &json!({"organization_id": sale.org}))
        .await;
    r.expect_invalid_at(json!(["body", "sign_every_answer"]));
    let r = app
        .patch_json(
            SIGNING,
            t,
            &json!({"organization_id": sale.org, "sign_every_answer": "yes please"}),
        )
        .await;
    r.expect_validation();
    let r = app.post_json(ROTATE, t, &json!({})).await;
    r.expect_invalid_at(json!(["body", "organization_id"]));
    let r = app
        .get(&format!("{SIGNING}?organization_id={UNKNOWN}"), t)
        .await;
    r.expect_error(404);
    let r = app.get(SIGNING, t).await;
    r.expect_invalid_at(json!(["query", "organization_id"]));
}

#[actix_web::test]
async fn the_seller_routes_need_their_scopes_and_stay_in_their_tenancy() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "tenancy").await;
    let get_path = format!("{SIGNING}?organization_id={}", sale.org);
    let patch = json!({"organization_id": sale.org, "sign_every_answer": true});
    let rotate = json!({"organization_id": sale.org});

    // No token.
    app.get(&get_path, None).await.expect_error(401);
    app.patch_json(SIGNING, None, &patch)
        .await
        .expect_error(401);
    app.post_json(ROTATE, None, &rotate).await.expect_error(401);

    // A member with a read-only token reads, but neither changes nor rotates.
    let (owner, writer) = app
        .new_user_with_scopes(
            "owner@tenancy.example",
            &[
                Scope::OrganizationsWrite,
                Scope::LicenseKeysRead,
                Scope::LicenseKeysWrite,
            ],
        )
        .await;
    let own = app.created_org_as(&writer, "Own", "tenancy-own").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let reader = app.issue_token(owner, &[Scope::LicenseKeysRead]).await;
    let r = app
        .get(&format!("{SIGNING}?organization_id={own}"), Some(&reader))
        .await;
    r.expect(200);
    let own_kid = r.body["keys"][0]["kid"].as_str().unwrap().to_string();
    let own_patch = json!({"organization_id": own, "sign_every_answer": true});
    let own_rotate = json!({"organization_id": own});
    let r = app.patch_json(SIGNING, Some(&reader), &own_patch).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    let r = app.post_json(ROTATE, Some(&reader), &own_rotate).await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    // Nothing changed.
    let r = app
        .get(&format!("{SIGNING}?organization_id={own}"), Some(&writer))
        .await;
    assert_eq!(r.body["sign_every_answer"], false);
    assert_eq!(r.body["keys"].as_array().unwrap().len(), 1);
    assert_eq!(r.body["keys"][0]["kid"], own_kid.as_str());
    // A token without license-key scopes reads nothing either.
    let orgs_only = app.issue_token(owner, &[Scope::OrganizationsRead]).await;
    let r = app
        .get(
            &format!("{SIGNING}?organization_id={own}"),
            Some(&orgs_only),
        )
        .await;
    assert_eq!(r.expect_error(403), "insufficient_scope");
    // The writer may.
    let r = app.patch_json(SIGNING, Some(&writer), &own_patch).await;
    r.expect(200);
    assert_eq!(r.body["sign_every_answer"], true);

    // Another organization's seller: 404 everywhere, and nothing changes.
    let before = jwks(&app, &sale.org).await;
    for token in [&writer, &reader] {
        let r = app.get(&get_path, Some(token)).await;
        assert_eq!(r.expect_error(404), "ResourceNotFound");
    }
    let r = app.patch_json(SIGNING, Some(&writer), &patch).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app.post_json(ROTATE, Some(&writer), &rotate).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let after = jwks(&app, &sale.org).await;
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].kid, before[0].kid);
    let ex = post(
        &app,
        &format!("{PORTAL}/validate"),
        None,
        &key_body(&sale),
        &[],
    )
    .await;
    ex.expect(200);
    ex.assert_unsigned();

    // The token route: for an organization the token does not reach, a 404 that is not
    // signed (it would sign for someone else's organization); for its own, signed.
    let ex = post(
        &app,
        &format!("{TOKEN}/validate"),
        Some(&writer),
        &key_body(&sale),
        &[("Accept-Signature", &*ask("foreign"))],
    )
    .await;
    ex.expect(404);
    assert_eq!(ex.json()["error"], "ResourceNotFound");
    ex.assert_unsigned();
    let own_keys = jwks(&app, &own).await;
    let ex = post(
        &app,
        &format!("{TOKEN}/validate"),
        Some(&writer),
        &json!({"key": "TG-NOPE", "organization_id": own}),
        &[("Accept-Signature", &*ask("own"))],
    )
    .await;
    ex.assert_refused(404, "ResourceNotFound", "not_found");
    verify_and_tamper(&ex, &own_keys, "sig1", "own");
    // Another organization's keys do not verify it.
    assert!(verify(&ex, &before, "sig1", Some("own")).is_err());
    // `own` signs every answer now: its refusals are signed unasked, the foreign org's
    // answers are not.
    let ex = post(
        &app,
        &format!("{TOKEN}/validate"),
        Some(&writer),
        &json!({"key": "TG-NOPE", "organization_id": own}),
        &[],
    )
    .await;
    ex.expect(404);
    verify(&ex, &own_keys, "sig1", None).unwrap();
}

// ---------------------------------------------------------------------------------------
// Rotation
// ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn a_rotated_key_keeps_old_answers_verifiable_and_new_ones_use_the_new_key() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "rotate").await;
    let t = Some(app.token.as_str());
    let validate = format!("{PORTAL}/validate");
    let old_keys = jwks(&app, &sale.org).await;
    let old_kid = old_keys[0].kid.clone();
    let old_answer = post(
        &app,
        &validate,
        None,
        &key_body(&sale),
        &[("Accept-Signature", &*ask("before"))],
    )
    .await;
    old_answer.expect(200);
    assert_eq!(
        verify(&old_answer, &old_keys, "sig1", Some("before"))
            .unwrap()
            .kid,
        old_kid
    );
    let old_file = app.post_json(LICENSE_FILE, None, &key_body(&sale)).await;
    old_file.expect(200);
    assert_eq!(old_file.body["kid"], old_kid.as_str());

    let r = app
        .post_json(ROTATE, t, &json!({"organization_id": sale.org}))
        .await;
    r.expect(200);
    let keys = r.body["keys"].as_array().unwrap().clone();
    assert_eq!(keys.len(), 2, "{}", r.body);
    let new_kid = keys[0]["kid"].as_str().unwrap().to_string();
    assert_ne!(new_kid, old_kid);
    assert!(keys[0]["retired_at"].is_null(), "{}", r.body);
    assert_eq!(keys[1]["kid"], old_kid.as_str());
    crate::helpers::assert_utc_timestamp(&keys[1]["retired_at"]);
    let seller = app
        .get(&format!("{SIGNING}?organization_id={}", sale.org), t)
        .await;
    assert_eq!(seller.body["keys"], json!(keys));

    // The JWKS: the new key first, the old one kept.
    let published = jwks(&app, &sale.org).await;
    assert_eq!(published.len(), 2);
    assert_eq!(published[0].kid, new_kid);
    assert_eq!(published[1].kid, old_kid);
    assert_eq!(published[1].key, old_keys[0].key);

    // New answers carry the new key (at once: this node rotated).
    let new_answer = post(
        &app,
        &validate,
        None,
        &key_body(&sale),
        &[("Accept-Signature", &*ask("after"))],
    )
    .await;
    new_answer.expect(200);
    let v = verify_and_tamper(&new_answer, &published, "sig1", "after");
    assert_eq!(v.kid, new_kid);
    assert!(new_answer
        .header("signature-input")
        .unwrap()
        .contains(&format!(r#"keyid="{new_kid}""#)));
    // The old key does not verify the new answer.
    assert!(verify(&new_answer, &old_keys, "sig1", Some("after")).is_err());

    // The old answer still verifies with the published keys...
    let v = verify(&old_answer, &published, "sig1", Some("before")).unwrap();
    assert_eq!(v.kid, old_kid);
    // ...but not for a client that trusts only the current key.
    let current_only = &published[..1];
    let refused = verify(&old_answer, current_only, "sig1", Some("before"))
        .expect_err("an old answer under a retired key");
    assert!(refused.contains("not a trusted key"), "{refused}");
    verify(&new_answer, current_only, "sig1", Some("after")).unwrap();
    // Nor does renaming the old answer's key make it pass.
    let mut renamed = old_answer.clone();
    let input = renamed
        .header("signature-input")
        .unwrap()
        .replace(&old_kid, &new_kid);
    renamed
        .headers
        .insert("signature-input", input.parse().unwrap());
    assert!(verify(&renamed, current_only, "sig1", Some("before")).is_err());

    // License files follow: the old file verifies with the old key, new files use the
    // new one.
    let at = Utc::now();
    open_license_file(
        old_file.body["certificate"].as_str().unwrap(),
        &published,
        &sale.key,
        at,
    )
    .unwrap();
    let new_file = app.post_json(LICENSE_FILE, None, &key_body(&sale)).await;
    new_file.expect(200);
    assert_eq!(new_file.body["kid"], new_kid.as_str());
    let opened = open_license_file(
        new_file.body["certificate"].as_str().unwrap(),
        &published[..1],
        &sale.key,
        at,
    )
    .unwrap();
    assert_eq!(opened.kid, new_kid);
    assert!(open_license_file(
        old_file.body["certificate"].as_str().unwrap(),
        &published[..1],
        &sale.key,
        at
    )
    .is_err());

    // A second rotation keeps both older keys, newest first.
    let r = app
        .post_json(ROTATE, t, &json!({"organization_id": sale.org}))
        .await;
    r.expect(200);
    let again = jwks(&app, &sale.org).await;
    assert_eq!(again.len(), 3);
    assert_eq!(again[1].kid, new_kid);
    assert_eq!(again[2].kid, old_kid);
    verify(&old_answer, &again, "sig1", Some("before")).unwrap();
}

// ---------------------------------------------------------------------------------------
// License files
// ---------------------------------------------------------------------------------------

/// A license file opened as an offline verifier would.
#[derive(Debug)]
pub(crate) struct Opened {
    alg: String,
    kid: String,
    pub(crate) data: Value,
}

/// Keygen's verification: the armour, `{enc, sig, alg}`, the ed25519 signature of
/// `"license/" + enc` by one of `keys`, then the data (decrypted with SHA-256 of
/// `license_key` for `aes-256-gcm+ed25519`), refused past its `meta.expiry` at `now`.
pub(crate) fn open_license_file(
    certificate: &str,
    keys: &[Jwk],
    license_key: &str,
    now: DateTime<Utc>,
) -> Result<Opened, String> {
    let inner = certificate
        .strip_prefix("-----BEGIN LICENSE FILE-----\n")
        .and_then(|s| s.strip_suffix("-----END LICENSE FILE-----\n"))
        .ok_or("not armoured as a license file")?;
    let lines: Vec<&str> = inner.split_terminator('\n').collect();
    let (last, full) = lines.split_last().ok_or("an empty license file")?;
    if full.iter().any(|l| l.len() != 60) || last.is_empty() || last.len() > 60 {
        return Err("lines are not of 60".into());
    }
    let doc = STANDARD
        .decode(lines.concat())
        .map_err(|e| format!("not base64: {e}"))?;
    let doc: Value = serde_json::from_slice(&doc).map_err(|e| format!("not JSON: {e}"))?;
    let enc = doc["enc"].as_str().ok_or("no enc")?;
    let alg = doc["alg"].as_str().ok_or("no alg")?;
    let sig = STANDARD
        .decode(doc["sig"].as_str().ok_or("no sig")?)
        .map_err(|e| format!("sig is not base64: {e}"))?;
    let sig: [u8; 64] = sig.try_into().map_err(|_| "sig is not 64 bytes")?;
    let signed = format!("license/{enc}");
    let key = keys
        .iter()
        .find(|k| {
            k.key
                .verify_strict(signed.as_bytes(), &Signature::from_bytes(&sig))
                .is_ok()
        })
        .ok_or("the signature does not verify with any trusted key")?;
    let plain = match alg {
        "base64+ed25519" => STANDARD
            .decode(enc)
            .map_err(|e| format!("enc is not base64: {e}"))?,
        "aes-256-gcm+ed25519" => {
            let parts: Vec<Vec<u8>> = enc
                .split('.')
                .map(|p| STANDARD.decode(p))
                .collect::<Result<_, _>>()
                .map_err(|e| format!("enc parts are not base64: {e}"))?;
            let [ciphertext, iv, tag] = parts.as_slice() else {
                return Err("enc is not ciphertext.iv.tag".into());
            };
            if iv.len() != 12 || tag.len() != 16 {
                return Err("iv or tag of the wrong size".into());
            }
            let cipher =
                aes_gcm::Aes256Gcm::new_from_slice(&Sha256::digest(license_key.as_bytes()))
                    .map_err(|e| e.to_string())?;
            let mut sealed = ciphertext.clone();
            sealed.extend_from_slice(tag);
            cipher
                .decrypt(aes_gcm::Nonce::from_slice(iv), sealed.as_slice())
                .map_err(|_| "does not decrypt with this license key".to_string())?
        }
        other => return Err(format!("unknown alg {other}")),
    };
    let data: Value = serde_json::from_slice(&plain).map_err(|e| format!("data: {e}"))?;
    let expiry = data["meta"]["expiry"]
        .as_str()
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .ok_or("no meta.expiry")?;
    if expiry < now {
        return Err("expired".into());
    }
    Ok(Opened {
        alg: alg.to_string(),
        kid: key.kid.clone(),
        data,
    })
}

fn time(v: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("not a time: {v}")))
        .unwrap_or_else(|e| panic!("{v}: {e}"))
        .with_timezone(&Utc)
}

/// The file's data matches the answer and the key.
#[track_caller]
fn assert_file_data(answer: &Value, opened: &Opened, sale: &Sale) {
    let data = &opened.data;
    let meta = &data["meta"];
    assert_eq!(data["data"]["type"], "licenses");
    assert_eq!(data["data"]["id"], sale.key_id.as_str());
    assert_eq!(data["data"]["attributes"]["key"], sale.key.as_str());
    assert_eq!(data["data"]["attributes"]["status"], "ACTIVE");
    assert_eq!(meta["license_key"]["id"], sale.key_id.as_str());
    assert_eq!(meta["license_key"]["key"], sale.key.as_str());
    assert_eq!(meta["organization_id"], sale.org.as_str());
    assert_eq!(meta["kid"], answer["kid"]);
    assert_eq!(opened.kid, answer["kid"].as_str().unwrap());
    assert_eq!(opened.alg, answer["algorithm"].as_str().unwrap());
    for stamp in [&meta["issued"], &meta["expiry"]] {
        let s = stamp.as_str().unwrap();
        assert!(s.ends_with('Z') && s.len() == 24, "millis and Z: {s}");
    }
    let issued = time(&meta["issued"]);
    let expiry = time(&meta["expiry"]);
    assert_eq!(issued, time(&answer["issued_at"]));
    assert_eq!(expiry, time(&answer["expires_at"]));
    assert_eq!(meta["ttl"], answer["ttl"]);
    assert_eq!(
        (expiry - issued).num_seconds(),
        answer["ttl"].as_i64().unwrap()
    );
}

#[actix_web::test]
async fn license_files_verify_offline_signed_or_encrypted() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "files").await;

    // Signed only, the default month.
    let r = app.post_json(LICENSE_FILE, None, &key_body(&sale)).await;
    r.expect(200);
    assert_eq!(r.body["algorithm"], "base64+ed25519");
    assert_eq!(r.body["ttl"], 2_629_746);
    let keys = jwks(&app, &sale.org).await;
    assert_eq!(r.body["kid"], keys[0].kid.as_str());
    let cert = r.body["certificate"].as_str().unwrap();
    assert!(cert.starts_with("-----BEGIN LICENSE FILE-----\n"), "{cert}");
    assert!(cert.ends_with("\n-----END LICENSE FILE-----\n"), "{cert}");
    assert!(!cert.ends_with("\n\n"));
    let opened = open_license_file(cert, &keys, &sale.key, Utc::now()).unwrap();
    assert_file_data(&r.body, &opened, &sale);
    assert_eq!(opened.data["included"], json!([]));
    let issued = time(&r.body["issued_at"]);
    assert!((Utc::now() - issued).num_minutes().abs() < 60, "issued now");
    // The data names the key's limits as Keygen's do.
    assert_eq!(opened.data["data"]["attributes"]["maxMachines"], 3);
    assert_eq!(
        opened.data["data"]["attributes"]["uses"],
        opened.data["meta"]["license_key"]["usage"]
    );
    // Any change to the file, and another organization's key, fail.
    let tampered = tamper_license_file(cert);
    assert!(open_license_file(&tampered, &keys, &sale.key, Utc::now()).is_err());
    let other = sell_key(&app, "files-other").await;
    let other_keys = jwks(&app, &other.org).await;
    let refused = open_license_file(cert, &other_keys, &sale.key, Utc::now()).unwrap_err();
    assert!(refused.contains("does not verify"), "{refused}");
    // Past its expiry a verifier refuses it.
    let later = time(&r.body["expires_at"]) + Duration::seconds(1);
    assert_eq!(
        open_license_file(cert, &keys, &sale.key, later).unwrap_err(),
        "expired"
    );

    // Encrypted, an hour.
    let r = app
        .post_json(
            LICENSE_FILE,
            None,
            &json!({"key": sale.key, "organization_id": sale.org, "encrypt": true, "ttl": 3600}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["algorithm"], "aes-256-gcm+ed25519");
    assert_eq!(r.body["ttl"], 3600);
    let cert = r.body["certificate"].as_str().unwrap();
    let opened = open_license_file(cert, &keys, &sale.key, Utc::now()).unwrap();
    assert_file_data(&r.body, &opened, &sale);
    // The content is not readable without the key.
    let plain_key = sale.key.as_bytes();
    let doc = STANDARD
        .decode(
            cert.lines()
                .filter(|l| !l.starts_with("-----"))
                .collect::<String>(),
        )
        .unwrap();
    assert!(!doc.windows(plain_key.len()).any(|w| w == plain_key));
    let refused = open_license_file(cert, &keys, "TG-WRONG-KEY", Utc::now()).unwrap_err();
    assert_eq!(refused, "does not decrypt with this license key");
    assert!(open_license_file(&tamper_license_file(cert), &keys, &sale.key, Utc::now()).is_err());

    // For an activation: the machine is included.
    let activation = app
        .post_json(
            &format!("{PORTAL}/activate"),
            None,
            &json!({"key": sale.key, "organization_id": sale.org, "label": "workstation",
                    "meta": {"os": "linux"}}),
        )
        .await;
    activation.expect(200);
    let activation_id = activation.id();
    let r = app
        .post_json(
            LICENSE_FILE,
            None,
            &json!({"key": sale.key, "organization_id": sale.org,
                    "activation_id": activation_id, "encrypt": true}),
        )
        .await;
    r.expect(200);
    let opened = open_license_file(
        r.body["certificate"].as_str().unwrap(),
        &keys,
        &sale.key,
        Utc::now(),
    )
    .unwrap();
    assert_file_data(&r.body, &opened, &sale);
    let included = opened.data["included"].as_array().unwrap();
    assert_eq!(included.len(), 1, "{}", opened.data);
    assert_eq!(included[0]["type"], "machines");
    assert_eq!(included[0]["id"], activation_id.as_str());
    assert_eq!(included[0]["attributes"]["name"], "workstation");
    assert_eq!(
        opened.data["data"]["relationships"]["machines"]["data"][0]["id"],
        activation_id.as_str()
    );
    assert_eq!(
        opened.data["meta"]["license_key"]["activation"]["id"],
        activation_id.as_str()
    );
}

/// The file with one character of its signed content changed (re-armoured, still valid
/// base64 and JSON).
fn tamper_license_file(cert: &str) -> String {
    let body: String = cert.lines().filter(|l| !l.starts_with("-----")).collect();
    let mut doc: Value = serde_json::from_slice(&STANDARD.decode(body).unwrap()).unwrap();
    let enc = doc["enc"].as_str().unwrap().to_string();
    // Swap the first two different characters: same length, same alphabet.
    let mut chars: Vec<char> = enc.chars().collect();
    let j = (1..chars.len())
        .find(|&j| chars[j] != chars[0] && chars[j] != '.')
        .unwrap();
    chars.swap(0, j);
    doc["enc"] = json!(chars.into_iter().collect::<String>());
    let encoded = STANDARD.encode(serde_json::to_vec(&doc).unwrap());
    let mut out = String::from("-----BEGIN LICENSE FILE-----\n");
    for line in encoded.as_bytes().chunks(60) {
        out.push_str(std::str::from_utf8(line).unwrap());
        out.push('\n');
    }
    out.push_str("-----END LICENSE FILE-----\n");
    out
}

#[actix_web::test]
async fn license_files_are_refused_as_validations_are() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "file-refusals").await;

    let body = |extra: Value| {
        let mut b = key_body(&sale);
        b.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        b
    };
    let refused = |r: &Reply, status: u16, error: &str, code: &str| {
        assert_eq!(r.status.as_u16(), status, "{}", r.body);
        assert_eq!(r.body["error"], error, "{}", r.body);
        assert_eq!(r.body["code"], code, "{}", r.body);
    };

    let r = app
        .post_json(
            LICENSE_FILE,
            None,
            &json!({"key": "TG-NOPE", "organization_id": sale.org}),
        )
        .await;
    refused(&r, 404, "ResourceNotFound", "not_found");
    let r = app
        .post_json(
            LICENSE_FILE,
            None,
            &json!({"key": sale.key, "organization_id": UNKNOWN}),
        )
        .await;
    refused(&r, 404, "ResourceNotFound", "not_found");
    let r = app
        .post_json(LICENSE_FILE, None, &body(json!({"activation_id": UNKNOWN})))
        .await;
    refused(&r, 404, "ResourceNotFound", "activation_not_found");

    // The life of a file: an hour to a year.
    for (ttl, kind) in [
        (10, "greater_than_equal"),
        (3599, "greater_than_equal"),
        (31_556_953, "less_than_equal"),
    ] {
        let r = app
            .post_json(LICENSE_FILE, None, &body(json!({"ttl": ttl})))
            .await;
        let item = r.expect_invalid_at(json!(["body", "ttl"]));
        assert_eq!(item["type"], kind, "{item}");
        assert_eq!(item["input"], ttl);
    }
    for ttl in [3600, 31_556_952] {
        let r = app
            .post_json(LICENSE_FILE, None, &body(json!({"ttl": ttl})))
            .await;
        r.expect(200);
        assert_eq!(r.body["ttl"], ttl);
    }
    let r = app
        .post_json(LICENSE_FILE, None, &json!({"organization_id": sale.org}))
        .await;
    r.expect_invalid_at(json!(["body", "key"]));
    let r = app
        .post_json(LICENSE_FILE, None, &body(json!({"ttl": "forever"})))
        .await;
    r.expect_validation();

    // A key that expires in two hours: a file of a month ends with the key.
    let expires = (Utc::now() + Duration::hours(2)).trunc_subsecs(0);
    app.patch_json(
        &format!("/v1/license-keys/{}", sale.key_id),
        Some(&app.token),
        &json!({"expires_at": expires.to_rfc3339()}),
    )
    .await
    .expect(200);
    let r = app.post_json(LICENSE_FILE, None, &key_body(&sale)).await;
    r.expect(200);
    assert_eq!(time(&r.body["expires_at"]), expires);
    let ttl = r.body["ttl"].as_i64().unwrap();
    assert!(ttl <= 7200 && ttl > 3600, "{ttl}");
    let keys = jwks(&app, &sale.org).await;
    let opened = open_license_file(
        r.body["certificate"].as_str().unwrap(),
        &keys,
        &sale.key,
        Utc::now(),
    )
    .unwrap();
    assert_file_data(&r.body, &opened, &sale);
    assert_eq!(time(&opened.data["meta"]["expiry"]), expires);
    assert_eq!(time(&opened.data["data"]["attributes"]["expiry"]), expires);
    assert_eq!(
        time(&opened.data["meta"]["license_key"]["expires_at"]),
        expires
    );
    // A file shorter than what is left of the key keeps its own ttl.
    let r = app
        .post_json(LICENSE_FILE, None, &body(json!({"ttl": 3600})))
        .await;
    r.expect(200);
    assert_eq!(r.body["ttl"], 3600);
    assert!(time(&r.body["expires_at"]) < expires);

    // Expired, disabled, revoked keys: refused exactly as their validation is.
    let validate = format!("{PORTAL}/validate");
    for change in [
        json!({"expires_at": "2020-01-01T00:00:00Z"}),
        json!({"expires_at": null, "status": "disabled"}),
        json!({"status": "revoked"}),
    ] {
        app.patch_json(
            &format!("/v1/license-keys/{}", sale.key_id),
            Some(&app.token),
            &change,
        )
        .await
        .expect(200);
        let v = app.post_json(&validate, None, &key_body(&sale)).await;
        let f = app.post_json(LICENSE_FILE, None, &key_body(&sale)).await;
        assert!(v.status.is_client_error(), "{change}: {}", v.body);
        assert_eq!(f.status, v.status, "{change}: {} vs {}", f.body, v.body);
        assert_eq!(f.body["error"], v.body["error"], "{change}");
        assert_eq!(f.body["code"], v.body["code"], "{change}");
        assert_eq!(f.body["detail"], v.body["detail"], "{change}");
    }
    let f = app.post_json(LICENSE_FILE, None, &key_body(&sale)).await;
    assert_eq!(f.body["code"], "revoked", "{}", f.body);
}

/// A file made when the server's clock said it was three days ago is expired now: an app
/// cannot keep an old file alive.
#[actix_web::test]
async fn a_file_issued_in_the_past_is_expired_now() {
    let start = (Utc::now() - Duration::days(3)).trunc_subsecs(0);
    let (_clock, shared) = ManualClock::shared(start);
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings::for_tests(dir.path());
    let app = spawn_app_with(dir, settings, shared).await;
    // The clock stands still at `start` throughout.
    let sale = sell_key(&app, "file-clock").await;
    let r = app
        .post_json(
            LICENSE_FILE,
            None,
            &json!({"key": sale.key, "organization_id": sale.org, "ttl": 3600, "encrypt": true}),
        )
        .await;
    r.expect(200);
    assert_eq!(time(&r.body["issued_at"]), start);
    assert_eq!(time(&r.body["expires_at"]), start + Duration::hours(1));
    let keys = jwks(&app, &sale.org).await;
    let cert = r.body["certificate"].as_str().unwrap();
    // Valid at the time it was issued...
    let opened = open_license_file(cert, &keys, &sale.key, start).unwrap();
    assert_file_data(&r.body, &opened, &sale);
    assert!(time(&opened.data["meta"]["expiry"]) < Utc::now());
    // ...refused by a verifier now.
    assert_eq!(
        open_license_file(cert, &keys, &sale.key, Utc::now()).unwrap_err(),
        "expired"
    );
}

/// Issue 46: the entitlements (the feature flags of the key's purchase) ride in the signed
/// answer, covered by its signature, and in the license file's data, covered by its
/// signature; a flag removed from the product leaves the next of both.
#[actix_web::test]
async fn entitlements_are_signed_in_the_answer_and_in_the_license_file() {
    let app = spawn_app().await;
    let sale = sell_key(&app, "entitled-files").await;
    let flag = app
        .post_json(
            "/v1/benefits/",
            Some(&app.token),
            &json!({"type": "feature_flag", "description": "Pro features",
                    "organization_id": sale.org, "properties": {},
                    "metadata": {"export": true, "max_projects": 10}}),
        )
        .await;
    flag.expect(201);
    let flag = flag.id();
    let set_benefits = |benefits: Value| {
        let app = &app;
        let product = sale.product.clone();
        async move {
            app.post_json(
                &format!("/v1/products/{product}/benefits"),
                Some(&app.token),
                &json!({ "benefits": benefits }),
            )
            .await
            .expect(200);
        }
    };
    set_benefits(json!([sale.benefit, flag])).await;
    let expected = json!([{"benefit_id": flag, "description": "Pro features",
                           "metadata": {"export": true, "max_projects": 10}}]);

    let keys = jwks(&app, &sale.org).await;
    let ex = post(
        &app,
        &format!("{PORTAL}/validate"),
        None,
        &key_body(&sale),
        &[("Accept-Signature", &*ask("n-entitled"))],
    )
    .await;
    ex.expect(200);
    assert_eq!(ex.json()["entitlements"], expected);
    // The verifier refuses any change to the body: the entitlements are signed.
    verify_and_tamper(&ex, &keys, "sig1", "n-entitled");

    for encrypt in [false, true] {
        let r = app
            .post_json(
                LICENSE_FILE,
                None,
                &json!({"key": sale.key, "organization_id": sale.org, "encrypt": encrypt}),
            )
            .await;
        r.expect(200);
        let cert = r.body["certificate"].as_str().unwrap();
        let opened = open_license_file(cert, &keys, &sale.key, Utc::now()).unwrap();
        assert_file_data(&r.body, &opened, &sale);
        assert_eq!(
            opened.data["meta"]["license_key"]["entitlements"], expected,
            "encrypted: {encrypt}"
        );
        assert!(
            open_license_file(&tamper_license_file(cert), &keys, &sale.key, Utc::now()).is_err()
        );
    }

    // Removed from the product: the next answer and the next file carry none.
    set_benefits(json!([sale.benefit])).await;
    let ex = post(
        &app,
        &format!("{PORTAL}/validate"),
        None,
        &key_body(&sale),
        &[("Accept-Signature", &*ask("n-revoked"))],
    )
    .await;
    ex.expect(200);
    assert_eq!(ex.json()["entitlements"], json!([]));
    verify(&ex, &keys, "sig1", Some("n-revoked")).unwrap();
    let r = app.post_json(LICENSE_FILE, None, &key_body(&sale)).await;
    r.expect(200);
    let opened = open_license_file(
        r.body["certificate"].as_str().unwrap(),
        &keys,
        &sale.key,
        Utc::now(),
    )
    .unwrap();
    assert_eq!(
        opened.data["meta"]["license_key"]["entitlements"],
        json!([])
    );
}
