//! Signed answers and license files checked by implementations that share no code with
//! Tollgate (issue 32, "How it is checked"):
//!
//! * answers: `http-message-signatures` from PyPI (`tests/clients/signatures/answers.py`)
//!   and the `http-message-signatures` npm package (`answers.mjs`), each with keys from the
//!   organization's JWKS, accept a fresh answer and refuse a tampered body, a wrong nonce,
//!   an old answer (made while the server's clock was hours back) and, once the key is
//!   rotated, an answer of the old key for a verifier pinned to the new one;
//! * license files: `keygen-py` and `keygen-sdk` from PyPI (`license_files.py`) and the
//!   documented examples `docs/examples/verify_license_file.{py,mjs}` accept fresh files
//!   and refuse a tampered file, another organization's file, an expired file and a wrong
//!   license key; and keygen-sdk reads the feature flags a key's purchase grants as the
//!   file's Keygen entitlements (keygen-py accepts the same file), none once revoked.
//!
//! The scripts print one JSON line per case; the verdict each case must get (and the
//! reason a refusal must give) is decided here.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use chrono::{DateTime, Utc};
use reqwest::Method;
use serde_json::{json, Value};
use tempfile::TempDir;
use tollgate::config::Settings;
use tollgate_actors::ManualClock;

use crate::helpers::{spawn_app_with, Reply, TestApp};
use crate::tools;
use crate::versions::{sell_key, Sale};

const REQUIREMENTS: &str = "tests/clients/signatures/requirements.txt";
const NODE_PACKAGES: &str = "tests/clients/signatures";
const VALIDATE: &str = "/v1/customer-portal/license-keys/validate";
const LICENSE_FILE: &str = "/v1/customer-portal/license-keys/license-file";
/// A script takes seconds; this only stops a hung one.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);
/// How far back the server's clock is when it makes the old answer and the expired files.
const HOURS_BACK: i64 = 2;

/// A server whose clock starts `HOURS_BACK` hours ago and moves only when told.
async fn spawn_in_the_past() -> (TestApp, Arc<ManualClock>, DateTime<Utc>) {
    let dir = tempfile::tempdir().expect("creating the data directory");
    let mut settings = Settings::for_tests(dir.path());
    // The sweep stays out of the way when the clock jumps.
    settings.jobs.sweep_interval_secs = 24 * 3600;
    let past = Utc::now() - chrono::Duration::hours(HOURS_BACK);
    let (clock, shared) = ManualClock::shared(past);
    (spawn_app_with(dir, settings, shared).await, clock, past)
}

fn report(what: &str, out: &Output) -> String {
    format!(
        "{what} ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The JSON lines of a script's stdout.
fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

async fn jwks(app: &TestApp, org: &str) -> Vec<Value> {
    let r = app
        .get(
            &format!("/v1/customer-portal/license-keys/jwks?organization_id={org}"),
            None,
        )
        .await;
    r.expect(200);
    r.body["keys"].as_array().expect("keys").clone()
}

// =======================================================================================
// Signed answers.

/// What a verifier must conclude about one case of `answers.{py,mjs}`.
enum Answer {
    /// Verified, with this `@status`, signed by the key current before the rotation.
    Accepted(u16),
    /// Verified, signed by the key the rotation made.
    AcceptedWithNewKey,
    /// Refused, the reason containing these words (Python's, Node's).
    Refused(&'static str, &'static str),
}

const ANSWER_CASES: &[(&str, Answer)] = &[
    ("fresh", Answer::Accepted(200)),
    (
        "tampered_body",
        Answer::Refused(
            "Content-Digest does not match the message body",
            "Content-Digest does not match the body",
        ),
    ),
    (
        "tampered_body_and_digest",
        Answer::Refused(
            "the signature does not match",
            "the signature does not match",
        ),
    ),
    (
        "wrong_nonce",
        Answer::Refused("is not the one sent", "is not the one sent"),
    ),
    (
        "unsigned",
        Answer::Refused(
            "Expected \"Signature-Input\" header field to be present",
            "the answer is not signed",
        ),
    ),
    ("signed_refusal", Answer::Accepted(404)),
    (
        "refusal_status_changed",
        Answer::Refused(
            "the signature does not match",
            "the signature does not match",
        ),
    ),
    (
        "old_answer",
        Answer::Refused(
            "Signature age exceeds maximum allowable age",
            "Signature is too old",
        ),
    ),
    ("old_answer_without_age_limit", Answer::Accepted(200)),
    (
        "rotated_key_old_answer",
        Answer::Refused("unknown key", "unknown key"),
    ),
    ("retired_key_kept", Answer::Accepted(200)),
    ("rotated_key_new_answer", Answer::AcceptedWithNewKey),
];

/// A sold key on a server, an answer captured while its clock was `HOURS_BACK` hours back,
/// and the organization's first key.
struct SignedAnswers {
    app: TestApp,
    sale: Sale,
    kid: String,
    _files: TempDir,
    old_answer: PathBuf,
}

impl SignedAnswers {
    async fn new(slug: &str) -> Self {
        let (app, clock, past) = spawn_in_the_past().await;
        let sale = sell_key(&app, slug).await;
        let nonce = format!("old-{slug}");
        let old = captured_answer(&app, &sale, &nonce).await;
        let input = old["headers"]["signature-input"]
            .as_str()
            .unwrap_or_default();
        assert!(
            input.contains(&format!(";created={};", past.timestamp()))
                && input.contains(&format!("nonce=\"{nonce}\"")),
            "{old}"
        );
        let files = tempfile::tempdir().expect("a folder for the captured answer");
        let old_answer = files.path().join("old-answer.json");
        std::fs::write(&old_answer, old.to_string()).expect("writing the captured answer");
        clock.set(Utc::now());
        let kid = jwks(&app, &sale.org).await[0]["kid"]
            .as_str()
            .expect("a kid")
            .to_string();
        Self {
            app,
            sale,
            kid,
            _files: files,
            old_answer,
        }
    }

    fn envs(&self, cmd: &mut Command) {
        cmd.env("TOLLGATE_URL", &self.app.address)
            .env("TOLLGATE_ORG", &self.sale.org)
            .env("TOLLGATE_KEY", &self.sale.key)
            .env("TOLLGATE_TOKEN", &self.app.token)
            .env("TOLLGATE_OLD_ANSWER", &self.old_answer);
    }

    /// Every case got its verdict, for the reason expected.
    async fn check(&self, suite: &str, python: bool, out: &Output) {
        let report = report(suite, out);
        assert!(out.status.success(), "{report}");
        // The script rotated the key: a new current key, the old one kept.
        let keys = jwks(&self.app, &self.sale.org).await;
        let new_kid = keys[0]["kid"].as_str().unwrap_or_default().to_string();
        assert_ne!(new_kid, self.kid, "{keys:?}");
        assert!(
            keys.iter().any(|k| k["kid"] == self.kid.as_str()),
            "{keys:?}"
        );

        let verdicts: HashMap<String, Value> = json_lines(out)
            .into_iter()
            .map(|v| (v["case"].as_str().unwrap_or_default().to_string(), v))
            .collect();
        assert_eq!(verdicts.len(), ANSWER_CASES.len(), "{report}");
        for (case, expected) in ANSWER_CASES {
            let v = verdicts
                .get(*case)
                .unwrap_or_else(|| panic!("no verdict for {case}\n{report}"));
            let (verdict, reason) = (&v["verdict"], v["reason"].as_str().unwrap_or_default());
            match expected {
                Answer::Accepted(status) => {
                    assert_eq!(verdict, "accepted", "{case}: {v}\n{report}");
                    assert_eq!(v["status"], *status, "{case}: {v}");
                    assert_eq!(v["kid"], self.kid.as_str(), "{case}: {v}");
                }
                Answer::AcceptedWithNewKey => {
                    assert_eq!(verdict, "accepted", "{case}: {v}\n{report}");
                    assert_eq!(v["status"], 200, "{case}: {v}");
                    assert_eq!(v["kid"], new_kid.as_str(), "{case}: {v}");
                }
                Answer::Refused(py, node) => {
                    let why = if python { py } else { node };
                    assert_eq!(verdict, "refused", "{case}: {v}\n{report}");
                    assert!(reason.contains(why), "{case}: {reason:?} lacks {why:?}");
                }
            }
        }
        println!("{report}");
    }
}

/// A signed validate answer, asked with `nonce`, exactly as the client received it (body
/// bytes, headers) with its request: what `TOLLGATE_OLD_ANSWER` holds.
async fn captured_answer(app: &TestApp, sale: &Sale, nonce: &str) -> Value {
    let accept =
        format!(r#"sig1=("@status" "content-digest" "@method";req "@path";req);nonce="{nonce}""#);
    let body = json!({"key": sale.key, "organization_id": sale.org}).to_string();
    let resp = app
        .request(Method::POST, VALIDATE, None)
        .header("content-type", "application/json")
        .header("accept-signature", &accept)
        .body(body.clone())
        .send()
        .await
        .expect("sending the validation");
    let status = resp.status();
    let mut headers = serde_json::Map::new();
    for name in resp.headers().keys() {
        let values: Vec<&str> = resp
            .headers()
            .get_all(name)
            .iter()
            .map(|v| v.to_str().expect("an ASCII header"))
            .collect();
        headers.insert(name.as_str().to_string(), json!(values.join(", ")));
    }
    let bytes = resp.text().await.expect("the body");
    // The answer is still what the OpenAPI document says.
    let reply = Reply {
        status,
        headers: reqwest::header::HeaderMap::new(),
        body: serde_json::from_str(&bytes).expect("a JSON body"),
    };
    crate::schema::check("POST", VALIDATE, None, &reply);
    reply.expect(200);
    assert_eq!(reply.body["status"], "granted", "{}", reply.body);
    json!({
        "method": "POST",
        "url": app.url(VALIDATE),
        "request_headers": {"content-type": "application/json", "accept-signature": accept},
        "request_body": body,
        "status": status.as_u16(),
        "headers": headers,
        "body": bytes,
        "nonce": nonce,
    })
}

#[actix_web::test]
async fn http_message_signatures_from_pypi_verifies_answers_and_refuses_forgeries() {
    let python = tools::python_venv(REQUIREMENTS);
    let s = SignedAnswers::new("sig-py").await;
    let mut cmd = Command::new(python);
    cmd.arg(tools::repo_root().join("tests/clients/signatures/answers.py"))
        .env("PYTHONUNBUFFERED", "1");
    s.envs(&mut cmd);
    let out = tools::run_async(cmd, SCRIPT_TIMEOUT).await;
    s.check("answers.py", true, &out).await;
}

#[actix_web::test]
async fn http_message_signatures_from_npm_verifies_answers_and_refuses_forgeries() {
    let packages = tools::node_packages(NODE_PACKAGES);
    let script = tools::node_script(&packages, "tests/clients/signatures/answers.mjs");
    let s = SignedAnswers::new("sig-node").await;
    let mut cmd = Command::new("node");
    cmd.arg(script).current_dir(&packages);
    s.envs(&mut cmd);
    let out = tools::run_async(cmd, SCRIPT_TIMEOUT).await;
    s.check("answers.mjs", false, &out).await;
}

// =======================================================================================
// License files.

/// A license file of `sale` (`extra`: `ttl`, `encrypt`), checked as the API states it.
async fn license_file(app: &TestApp, sale: &Sale, extra: Value) -> Value {
    let mut body = json!({"key": sale.key, "organization_id": sale.org});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let r = app.post_json(LICENSE_FILE, None, &body).await;
    r.expect(200);
    let encrypted = extra["encrypt"] == true;
    let alg = if encrypted {
        "aes-256-gcm+ed25519"
    } else {
        "base64+ed25519"
    };
    assert_eq!(r.body["algorithm"], alg, "{}", r.body);
    let cert = r.body["certificate"].as_str().expect("a certificate");
    assert!(
        cert.starts_with("-----BEGIN LICENSE FILE-----\n")
            && cert.ends_with("\n-----END LICENSE FILE-----\n"),
        "{cert}"
    );
    r.body.clone()
}

/// The certificate with one character of `enc` changed (and armoured again).
fn tampered(certificate: &str) -> String {
    let mut doc = certificate_doc(certificate);
    let enc = doc["enc"].as_str().expect("enc").to_string();
    let mut chars: Vec<char> = enc.chars().collect();
    chars[10] = if chars[10] == 'A' { 'B' } else { 'A' };
    doc["enc"] = json!(chars.into_iter().collect::<String>());
    let doc = serde_json::to_vec(&doc).expect("the document");
    let b64 = STANDARD.encode(doc);
    let mut out = String::from("-----BEGIN LICENSE FILE-----\n");
    for line in b64.as_bytes().chunks(60) {
        out.push_str(std::str::from_utf8(line).expect("base64"));
        out.push('\n');
    }
    out.push_str("-----END LICENSE FILE-----\n");
    out
}

/// The `{enc, sig, alg}` document of a certificate.
fn certificate_doc(certificate: &str) -> Value {
    let b64: String = certificate
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    serde_json::from_slice(&STANDARD.decode(b64).expect("base64")).expect("a JSON document")
}

/// The organization's current public key in hex, as the seller reads it; the same key as
/// the JWKS's first.
async fn public_key_hex(app: &TestApp, org: &str) -> String {
    let r = app
        .get(
            &format!("/v1/license-keys/signing?organization_id={org}"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    let hex = r.body["keys"][0]["public_key_hex"]
        .as_str()
        .expect("public_key_hex")
        .to_string();
    let x = URL_SAFE_NO_PAD
        .decode(jwks(app, org).await[0]["x"].as_str().expect("x"))
        .expect("base64url");
    let from_jwks: String = x.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, from_jwks);
    hex
}

/// What a verifier must conclude about one license file.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Why {
    Genuine,
    /// One character of `enc` changed.
    Tampered,
    /// Signed by another organization's key.
    OtherOrg,
    Expired,
    /// An encrypted file opened with another license key.
    WrongKey,
    /// A readable file that names another license key (the examples check the key).
    OtherKey,
}

struct FileCase {
    name: &'static str,
    path: PathBuf,
    public_key_hex: String,
    license_key: String,
    encrypted: bool,
    why: Why,
    /// Also for keygen-py and keygen-sdk (they cannot bind an unencrypted file to a key).
    keygen: bool,
}

/// The words a refusal by `verifier` must contain for `why`.
fn reason(verifier: &str, why: Why) -> &'static str {
    match (verifier, why) {
        // keygen-py decrypts before it checks the signature: AES-GCM's tag catches the
        // change first.
        ("keygen-py", Why::Tampered) => "DecryptionError",
        ("keygen-py", Why::OtherOrg) => "LicenseFileNotGenuine",
        ("keygen-py", Why::Expired) => "LicenseFileExpired",
        ("keygen-py", Why::WrongKey) => "DecryptionError",
        ("keygen-sdk", Why::Tampered | Why::OtherOrg) => "LicenseFileNotGenuine",
        ("keygen-sdk", Why::Expired) => "LicenseFileExpired",
        ("keygen-sdk", Why::WrongKey) => "the key is probably wrong",
        // The documented examples say the same in both languages.
        ("example.py" | "example.mjs", Why::Tampered | Why::OtherOrg) => {
            "the signature does not match"
        }
        ("example.py" | "example.mjs", Why::Expired) => "the file expired at",
        ("example.py" | "example.mjs", Why::WrongKey) => {
            "cannot decrypt: the file is for another license key"
        }
        ("example.py" | "example.mjs", Why::OtherKey) => "the file is for another license key",
        _ => panic!("no reason for {verifier} {why:?}"),
    }
}

/// Runs a documented example on one case: exit 0 with the license data, or non-zero with
/// the reason.
async fn run_example(verifier: &str, mut cmd: Command, case: &FileCase, sale: &Sale, kid: &str) {
    cmd.arg(&case.public_key_hex)
        .arg(&case.license_key)
        .arg(&case.path);
    let out = tools::run_async(cmd, SCRIPT_TIMEOUT).await;
    let report = report(&format!("{verifier} {}", case.name), &out);
    if case.why == Why::Genuine {
        assert!(out.status.success(), "{report}");
        let data: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{report}"));
        assert_eq!(
            data["data"]["attributes"]["key"],
            sale.key.as_str(),
            "{report}"
        );
        assert_eq!(data["data"]["id"], sale.key_id.as_str(), "{report}");
        assert_eq!(
            data["meta"]["organization_id"],
            sale.org.as_str(),
            "{report}"
        );
        assert_eq!(data["meta"]["kid"], kid, "{report}");
        assert_eq!(data["meta"]["license_key"]["status"], "granted", "{report}");
    } else {
        assert!(!out.status.success(), "{report}");
        assert_eq!(out.status.code(), Some(1), "{report}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let why = reason(verifier, case.why);
        assert!(
            stderr.contains("license file refused") && stderr.contains(why),
            "{why:?} expected\n{report}"
        );
        assert!(out.stdout.is_empty(), "{report}");
    }
}

#[actix_web::test]
async fn keygen_verifiers_and_the_documented_examples_check_license_files_offline() {
    let python = tools::python_venv(REQUIREMENTS);
    let (app, clock, _) = spawn_in_the_past().await;
    let a = sell_key(&app, "files-a").await;
    let b = sell_key(&app, "files-b").await;

    // Hours ago, files for one hour: expired now.
    let expired_enc = license_file(&app, &a, json!({"ttl": 3600, "encrypt": true})).await;
    let expired_signed = license_file(&app, &a, json!({"ttl": 3600})).await;
    clock.set(Utc::now());
    for f in [&expired_enc, &expired_signed] {
        let expires: DateTime<Utc> = f["expires_at"].as_str().unwrap().parse().unwrap();
        assert!(expires < Utc::now() - chrono::Duration::minutes(30), "{f}");
    }
    let fresh_enc = license_file(&app, &a, json!({"encrypt": true})).await;
    let fresh_signed = license_file(&app, &a, json!({})).await;
    let other_enc = license_file(&app, &b, json!({"encrypt": true})).await;
    let other_signed = license_file(&app, &b, json!({})).await;

    let key_a = public_key_hex(&app, &a.org).await;
    let key_b = public_key_hex(&app, &b.org).await;
    assert_ne!(key_a, key_b);
    let kid_a = fresh_enc["kid"].as_str().unwrap().to_string();
    assert_eq!(jwks(&app, &a.org).await[0]["kid"], kid_a.as_str());

    let dir = tempfile::tempdir().expect("a folder for the files");
    let write = |name: &str, text: &str| -> PathBuf {
        let path = dir.path().join(format!("{name}.lic"));
        std::fs::write(&path, text).expect("writing a license file");
        path
    };
    let cert = |f: &Value| f["certificate"].as_str().unwrap().to_string();
    let case =
        |name: &'static str, text: String, public: &str, key: &str, encrypted: bool, why: Why| {
            FileCase {
                name,
                path: write(name, &text),
                public_key_hex: public.to_string(),
                license_key: key.to_string(),
                encrypted,
                why,
                keygen: why != Why::OtherKey,
            }
        };
    let cases = [
        case(
            "fresh_encrypted",
            cert(&fresh_enc),
            &key_a,
            &a.key,
            true,
            Why::Genuine,
        ),
        case(
            "fresh_signed",
            cert(&fresh_signed),
            &key_a,
            &a.key,
            false,
            Why::Genuine,
        ),
        case(
            "tampered_encrypted",
            tampered(&cert(&fresh_enc)),
            &key_a,
            &a.key,
            true,
            Why::Tampered,
        ),
        case(
            "tampered_signed",
            tampered(&cert(&fresh_signed)),
            &key_a,
            &a.key,
            false,
            Why::Tampered,
        ),
        case(
            "other_org_encrypted",
            cert(&other_enc),
            &key_a,
            &b.key,
            true,
            Why::OtherOrg,
        ),
        case(
            "other_org_signed",
            cert(&other_signed),
            &key_a,
            &b.key,
            false,
            Why::OtherOrg,
        ),
        case(
            "expired_encrypted",
            cert(&expired_enc),
            &key_a,
            &a.key,
            true,
            Why::Expired,
        ),
        case(
            "expired_signed",
            cert(&expired_signed),
            &key_a,
            &a.key,
            false,
            Why::Expired,
        ),
        case(
            "wrong_key_encrypted",
            cert(&fresh_enc),
            &key_a,
            &b.key,
            true,
            Why::WrongKey,
        ),
        case(
            "wrong_key_signed",
            cert(&fresh_signed),
            &key_a,
            &b.key,
            false,
            Why::OtherKey,
        ),
    ];

    // keygen-py (encrypted files only) and keygen-sdk, in one run.
    let listed: Vec<Value> = cases
        .iter()
        .filter(|c| c.keygen)
        .map(|c| {
            json!({"case": c.name, "path": c.path, "public_key_hex": c.public_key_hex,
                   "license_key": c.license_key, "encrypted": c.encrypted})
        })
        .collect();
    let listing = dir.path().join("cases.json");
    std::fs::write(&listing, Value::Array(listed).to_string()).expect("writing the cases");
    let mut cmd = Command::new(&python);
    cmd.arg(tools::repo_root().join("tests/clients/signatures/license_files.py"))
        .arg(&listing);
    let out = tools::run_async(cmd, SCRIPT_TIMEOUT).await;
    let report = report("license_files.py", &out);
    assert!(out.status.success(), "{report}");
    let verdicts: HashMap<(String, String), Value> = json_lines(&out)
        .into_iter()
        .map(|v| {
            let key = (
                v["verifier"].as_str().unwrap_or_default().to_string(),
                v["case"].as_str().unwrap_or_default().to_string(),
            );
            (key, v)
        })
        .collect();
    let mut expected = 0;
    for c in cases.iter().filter(|c| c.keygen) {
        for verifier in ["keygen-py", "keygen-sdk"] {
            if verifier == "keygen-py" && !c.encrypted {
                continue;
            }
            expected += 1;
            let v = verdicts
                .get(&(verifier.to_string(), c.name.to_string()))
                .unwrap_or_else(|| panic!("no verdict of {verifier} for {}\n{report}", c.name));
            if c.why == Why::Genuine {
                assert_eq!(
                    v["verdict"], "accepted",
                    "{verifier} {}: {v}\n{report}",
                    c.name
                );
                assert_eq!(v["key"], a.key.as_str(), "{verifier} {}: {v}", c.name);
            } else {
                let why = reason(verifier, c.why);
                assert_eq!(
                    v["verdict"], "refused",
                    "{verifier} {}: {v}\n{report}",
                    c.name
                );
                let said = v["reason"].as_str().unwrap_or_default();
                assert!(
                    said.contains(why),
                    "{verifier} {}: {said:?} lacks {why:?}",
                    c.name
                );
            }
        }
    }
    assert_eq!(verdicts.len(), expected, "{report}");
    println!("{report}");

    // The documented examples, as a seller's app runs them.
    let examples = tools::repo_root().join("docs/examples");
    for c in &cases {
        let mut py = Command::new(&python);
        py.arg(examples.join("verify_license_file.py"));
        run_example("example.py", py, c, &a, &kid_a).await;
        let mut node = Command::new("node");
        node.arg(examples.join("verify_license_file.mjs"));
        run_example("example.mjs", node, c, &a, &kid_a).await;
    }
}

#[actix_web::test]
async fn keygen_verifiers_read_the_feature_flags_of_a_license_file_as_its_entitlements() {
    use crate::entitlements::{flag_id, set_benefits};
    let python = tools::python_venv(REQUIREMENTS);
    let app = crate::helpers::spawn_app().await;
    let sale = sell_key(&app, "entitled-files").await;
    let beta = flag_id(
        &app,
        &sale.org,
        "Beta features",
        json!({"flag": "beta", "max_projects": 10}),
    )
    .await;
    set_benefits(&app, &sale.product, &[&sale.benefit, &beta]).await;
    let public = public_key_hex(&app, &sale.org).await;
    let dir = tempfile::tempdir().expect("a folder for the files");

    // Run both verifiers over one fresh encrypted file; the verdicts by verifier.
    let verdicts = |name: &'static str| {
        let python = python.clone();
        let (app, sale, public, dir) = (&app, &sale, public.clone(), dir.path().to_path_buf());
        async move {
            let file = license_file(app, sale, json!({"encrypt": true})).await;
            let path = dir.join(format!("{name}.lic"));
            std::fs::write(&path, file["certificate"].as_str().unwrap()).unwrap();
            let listing = dir.join(format!("{name}.json"));
            let case = json!([{"case": name, "path": path, "public_key_hex": public,
                               "license_key": sale.key, "encrypted": true}]);
            std::fs::write(&listing, case.to_string()).unwrap();
            let mut cmd = Command::new(&python);
            cmd.arg(tools::repo_root().join("tests/clients/signatures/license_files.py"))
                .arg(&listing);
            let out = tools::run_async(cmd, SCRIPT_TIMEOUT).await;
            let report = report("license_files.py", &out);
            assert!(out.status.success(), "{report}");
            let by: HashMap<String, Value> = json_lines(&out)
                .into_iter()
                .map(|v| (v["verifier"].as_str().unwrap_or_default().to_string(), v))
                .collect();
            for verifier in ["keygen-py", "keygen-sdk"] {
                assert_eq!(by[verifier]["verdict"], "accepted", "{verifier}: {report}");
                assert_eq!(by[verifier]["key"], sale.key.as_str(), "{report}");
            }
            by
        }
    };

    let by = verdicts("flagged").await;
    assert_eq!(
        by["keygen-sdk"]["entitlements"],
        json!([{"code": beta, "name": "Beta features",
                "metadata": {"flag": "beta", "max_projects": 10}}]),
        "{by:?}"
    );
    // Where keygen-py exposes what it read, it reads the same.
    if let Some(read) = by["keygen-py"].get("entitlements") {
        assert_eq!(read[0]["code"], beta.as_str(), "{by:?}");
    }

    // The flag leaves the product: the next file entitles nothing.
    set_benefits(&app, &sale.product, &[&sale.benefit]).await;
    let by = verdicts("revoked").await;
    assert_eq!(by["keygen-sdk"]["entitlements"], json!([]), "{by:?}");
}
