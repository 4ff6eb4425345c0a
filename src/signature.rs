//! Signed license-key answers: RFC 9421 HTTP Message Signatures (ed25519) over an RFC 9530
//! `Content-Digest` of the body.
//!
//! A client asks with `Accept-Signature` (RFC 9421 §5.1), e.g.
//! `sig1=("@status" "content-digest" "@method";req "@path";req);nonce="n-123"`, or the
//! organization signs every answer (`sign_every_answer`). The answer then carries
//! `Content-Digest: sha-256=:…:`, `Signature-Input` and `Signature` under the label asked
//! for (`sig1` otherwise). A signature always covers [`MANDATORY`] (`@status`,
//! `content-digest`, the request's method and path) besides what was asked, and carries
//! `created`, `keyid` (the key's RFC 7638 thumbprint), `alg="ed25519"` and the echoed
//! `nonce` and `tag`. The body is untouched: exactly Polar's shape.
//!
//! Components a request may ask for: `@status`; `@method`, `@path`, `@query`,
//! `@authority` of the request (`;req`); the response's `content-digest` and `content-type`;
//! any field of the request (`;req`). Anything else, or an algorithm other than `ed25519`,
//! is a 400 (RFC 9421 lets a signer refuse what it cannot do).

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::body::{BoxBody, MessageBody};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, Responder};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use ed25519_dalek::Signer as _;
use sfv::{BareItem, KeyRef, ListEntry, StringRef};
use sha2::{Digest, Sha256};

use crate::domain::ids::OrganizationId;
use crate::error::ApiError;

/// What every signature covers, asked for or not.
pub const MANDATORY: [(&str, bool); 4] = [
    ("@status", false),
    ("content-digest", false),
    ("@method", true),
    ("@path", true),
];

/// Bounds on one `Accept-Signature`: signatures asked for, components each, nonce length.
const MAX_LABELS: usize = 4;
const MAX_COMPONENTS: usize = 16;
const MAX_NONCE: usize = 256;

/// An organization's signing key, ready to sign.
pub struct Signer {
    pub kid: String,
    key: ed25519_dalek::SigningKey,
}

impl Signer {
    /// The signer of a 32-byte ed25519 seed (`None`: not 32 bytes).
    pub fn from_seed(kid: String, seed: &[u8]) -> Option<Self> {
        let seed: [u8; 32] = seed.try_into().ok()?;
        Some(Self {
            kid,
            key: ed25519_dalek::SigningKey::from_bytes(&seed),
        })
    }

    /// A fresh key pair: (seed, public key, kid).
    pub fn generate() -> ([u8; 32], [u8; 32], String) {
        let mut seed = [0u8; 32];
        rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut seed);
        let public = ed25519_dalek::SigningKey::from_bytes(&seed)
            .verifying_key()
            .to_bytes();
        (seed, public, thumbprint(&public))
    }

    /// The ed25519 signature of `message`.
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.key.sign(message).to_bytes()
    }

    pub fn public_key(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }
}

/// The RFC 7638 thumbprint of an Ed25519 public key's JWK (RFC 8037): the key's id.
pub fn thumbprint(public: &[u8; 32]) -> String {
    let jwk = format!(
        r#"{{"crv":"Ed25519","kty":"OKP","x":"{}"}}"#,
        URL_SAFE_NO_PAD.encode(public)
    );
    URL_SAFE_NO_PAD.encode(Sha256::digest(jwk.as_bytes()))
}

/// One component a signature covers: a derived `@name` or a field name, of the request
/// (`;req`) or of the response.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Component {
    name: String,
    req: bool,
}

/// One signature a client asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requested {
    label: String,
    components: Vec<Component>,
    nonce: Option<String>,
    tag: Option<String>,
}

impl Requested {
    /// The signature an organization that signs every answer adds unasked.
    fn unasked() -> Self {
        Self::with_mandatory("sig1".into(), Vec::new(), None, None)
    }

    fn with_mandatory(
        label: String,
        mut components: Vec<Component>,
        nonce: Option<String>,
        tag: Option<String>,
    ) -> Self {
        for (name, req) in MANDATORY {
            let c = Component {
                name: name.into(),
                req,
            };
            if !components.contains(&c) {
                components.push(c);
            }
        }
        Self {
            label,
            components,
            nonce,
            tag,
        }
    }
}

fn bad(detail: impl Into<String>) -> ApiError {
    ApiError::BadRequest(format!("Accept-Signature: {}", detail.into()))
}

/// The signatures the request asks for in `Accept-Signature` (none: not asked); a 400 for a
/// header that is no RFC 9421 request for signatures Tollgate can make.
pub fn requested(req: &HttpRequest) -> Result<Vec<Requested>, ApiError> {
    let mut lines = req.headers().get_all("accept-signature").peekable();
    if lines.peek().is_none() {
        return Ok(Vec::new());
    }
    let mut joined = String::new();
    for line in lines {
        let line = line.to_str().map_err(|_| bad("the header is not ASCII"))?;
        if !joined.is_empty() {
            joined.push_str(", ");
        }
        joined.push_str(line);
    }
    let dict: sfv::Dictionary = sfv::Parser::new(joined.as_str())
        .parse()
        .map_err(|e| bad(format!("not a structured-field dictionary ({e})")))?;
    if dict.len() > MAX_LABELS {
        return Err(bad(format!("at most {MAX_LABELS} signatures")));
    }
    dict.iter()
        .map(|(label, entry)| requested_one(req, label.as_str(), entry))
        .collect()
}

fn requested_one(req: &HttpRequest, label: &str, entry: &ListEntry) -> Result<Requested, ApiError> {
    let ListEntry::InnerList(list) = entry else {
        return Err(bad(format!("{label} is not a list of components")));
    };
    if list.items.len() > MAX_COMPONENTS {
        return Err(bad(format!("at most {MAX_COMPONENTS} components")));
    }
    let mut components = Vec::with_capacity(list.items.len() + MANDATORY.len());
    for item in &list.items {
        let Some(name) = item.bare_item.as_string() else {
            return Err(bad("a component is not a string"));
        };
        let name = name.as_str();
        let mut req_flag = false;
        for (key, value) in &item.params {
            match (key.as_str(), value) {
                ("req", BareItem::Boolean(b)) => req_flag = *b,
                (other, _) => return Err(bad(format!("unsupported parameter {other} on {name}"))),
            }
        }
        let supported = match (name, req_flag) {
            ("@status", false) => true,
            ("@method" | "@path" | "@query" | "@authority", true) => true,
            ("content-digest" | "content-type", false) => true,
            (field, true) if !field.starts_with('@') => {
                if field.bytes().any(|b| b.is_ascii_uppercase()) {
                    return Err(bad(format!("{field}: field names are lowercase")));
                }
                if !req.headers().contains_key(field) {
                    return Err(bad(format!("{field} is not in the request")));
                }
                true
            }
            _ => false,
        };
        if !supported {
            let suffix = if req_flag { ";req" } else { "" };
            return Err(bad(format!("cannot cover \"{name}\"{suffix}")));
        }
        let c = Component {
            name: name.to_owned(),
            req: req_flag,
        };
        if !components.contains(&c) {
            components.push(c);
        }
    }
    let mut nonce = None;
    let mut tag = None;
    for (key, value) in &list.params {
        match (key.as_str(), value) {
            ("alg", BareItem::String(s)) if s.as_str() != "ed25519" => {
                return Err(bad(format!("alg {} (only ed25519)", s.as_str())))
            }
            ("nonce", BareItem::String(s)) if s.as_str().len() <= MAX_NONCE => {
                nonce = Some(s.as_str().to_owned())
            }
            ("nonce", _) => return Err(bad(format!("nonce: a string of at most {MAX_NONCE}"))),
            ("tag", BareItem::String(s)) if s.as_str().len() <= MAX_NONCE => {
                tag = Some(s.as_str().to_owned())
            }
            ("tag", _) => return Err(bad(format!("tag: a string of at most {MAX_NONCE}"))),
            // `created`, `keyid`, `expires`: Tollgate always sets `created` and signs with
            // the organization's current key.
            _ => {}
        }
    }
    Ok(Requested::with_mandatory(
        label.to_owned(),
        components,
        nonce,
        tag,
    ))
}

/// How an answer is signed: by whom, which signatures, when.
pub struct Signing {
    pub signer: Arc<Signer>,
    pub requested: Vec<Requested>,
    pub created: i64,
}

impl Signing {
    /// `requested`, or the one unasked signature of an organization that signs every answer.
    pub fn new(signer: Arc<Signer>, requested: Vec<Requested>, created: i64) -> Self {
        let requested = if requested.is_empty() {
            vec![Requested::unasked()]
        } else {
            requested
        };
        Self {
            signer,
            requested,
            created,
        }
    }

    /// `res` with `Content-Digest`, `Signature-Input` and `Signature`.
    pub fn sign(&self, req: &HttpRequest, res: HttpResponse<BoxBody>) -> HttpResponse<BoxBody> {
        let (mut res, body) = res.into_parts();
        let body = match body.try_into_bytes() {
            Ok(bytes) => bytes,
            // A streamed body (none of the signed routes answers one): unsigned.
            Err(body) => return res.set_body(body),
        };
        let digest = format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(&body)));
        insert(&mut res, "content-digest", &digest);
        let mut inputs = String::new();
        let mut signatures = String::new();
        for want in &self.requested {
            let Some(params) = self.signature_params(want) else {
                continue;
            };
            let Some(base) = signature_base(req, &res, want, &params) else {
                continue;
            };
            let signature = self.signer.sign(base.as_bytes());
            for (out, value) in [
                (&mut inputs, params),
                (&mut signatures, format!(":{}:", STANDARD.encode(signature))),
            ] {
                if !out.is_empty() {
                    out.push_str(", ");
                }
                out.push_str(&want.label);
                out.push('=');
                out.push_str(&value);
            }
        }
        if !inputs.is_empty() {
            insert(&mut res, "signature-input", &inputs);
            insert(&mut res, "signature", &signatures);
        }
        res.set_body(BoxBody::new(body))
    }

    /// The serialized inner list of covered components and parameters (the value of
    /// `@signature-params` and of the label in `Signature-Input`).
    fn signature_params(&self, want: &Requested) -> Option<String> {
        let mut list = sfv::ListSerializer::new();
        {
            let mut inner = list.inner_list();
            for c in &want.components {
                let item = inner.bare_item(StringRef::from_str(&c.name).ok()?);
                if c.req {
                    let _ = item.parameter(KeyRef::constant("req"), true);
                }
            }
            let mut params = inner
                .finish()
                .parameter(
                    KeyRef::constant("created"),
                    sfv::Integer::try_from(self.created).ok()?,
                )
                .parameter(
                    KeyRef::constant("keyid"),
                    StringRef::from_str(&self.signer.kid).ok()?,
                )
                .parameter(KeyRef::constant("alg"), StringRef::constant("ed25519"));
            if let Some(nonce) = &want.nonce {
                params =
                    params.parameter(KeyRef::constant("nonce"), StringRef::from_str(nonce).ok()?);
            }
            if let Some(tag) = &want.tag {
                let _ = params.parameter(KeyRef::constant("tag"), StringRef::from_str(tag).ok()?);
            }
        }
        list.finish()
    }
}

fn insert<B>(res: &mut HttpResponse<B>, name: &'static str, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        res.headers_mut().insert(HeaderName::from_static(name), v);
    }
}

/// The RFC 9421 §2.5 signature base; `None` when a covered response field is absent.
fn signature_base(
    req: &HttpRequest,
    res: &HttpResponse<()>,
    want: &Requested,
    params: &str,
) -> Option<String> {
    let mut base = String::with_capacity(256);
    for c in &want.components {
        let value = match (c.name.as_str(), c.req) {
            ("@status", _) => res.status().as_u16().to_string(),
            ("@method", _) => req.method().as_str().to_owned(),
            ("@path", _) => match req.uri().path() {
                "" => "/".to_owned(),
                p => p.to_owned(),
            },
            ("@query", _) => format!("?{}", req.uri().query().unwrap_or("")),
            ("@authority", _) => req
                .headers()
                .get("host")
                .and_then(|h| h.to_str().ok())
                .or_else(|| req.uri().authority().map(|a| a.as_str()))?
                .to_ascii_lowercase(),
            (field, true) => field_value(req.headers().get_all(field))?,
            (field, false) => field_value(res.headers().get_all(field))?,
        };
        base.push('"');
        base.push_str(&c.name);
        base.push('"');
        if c.req {
            base.push_str(";req");
        }
        base.push_str(": ");
        base.push_str(&value);
        base.push('\n');
    }
    base.push_str("\"@signature-params\": ");
    base.push_str(params);
    Some(base)
}

/// A field's lines, trimmed and joined by `", "` (RFC 9421 §2.1); `None` when absent.
fn field_value<'a>(lines: impl Iterator<Item = &'a HeaderValue>) -> Option<String> {
    let mut out: Option<String> = None;
    for line in lines {
        let line = line.to_str().ok()?.trim();
        match &mut out {
            Some(s) => {
                s.push_str(", ");
                s.push_str(line);
            }
            None => out = Some(line.to_owned()),
        }
    }
    out
}

/// An answer signed when `signing` says so.
pub struct MaybeSigned<R> {
    pub answer: R,
    pub signing: Option<Signing>,
}

impl<R: Responder> Responder for MaybeSigned<R> {
    type Body = BoxBody;

    fn respond_to(self, req: &HttpRequest) -> HttpResponse<BoxBody> {
        let res = self.answer.respond_to(req).map_into_boxed_body();
        match self.signing {
            Some(signing) => signing.sign(req, res),
            None => res,
        }
    }
}

/// Organizations' signers as the hot path needs them: whether one signs every answer, and
/// its current key once it has one. Entries live `ttl` (other nodes may rotate a key or
/// change the setting); this node's changes replace its entry at once.
pub struct Signers {
    entries: dashmap::DashMap<OrganizationId, (Option<OrgSigner>, Instant)>,
    ttl: Duration,
}

/// An organization's signing as cached: `None` in the cache when it has no keys yet (or
/// does not exist).
#[derive(Clone)]
pub struct OrgSigner {
    pub every_answer: bool,
    pub signer: Arc<Signer>,
}

impl Default for Signers {
    fn default() -> Self {
        Self {
            entries: dashmap::DashMap::new(),
            ttl: Duration::from_secs(10),
        }
    }
}

impl Signers {
    /// At most this many organizations are kept (beyond it, the cache is emptied).
    const CAPACITY: usize = 100_000;

    /// The cached entry of `org` (outer `None`: not cached or expired).
    pub fn cached(&self, org: OrganizationId) -> Option<Option<OrgSigner>> {
        let entry = self.entries.get(&org)?;
        let (signer, at) = entry.value();
        (at.elapsed() < self.ttl).then(|| signer.clone())
    }

    pub fn put(&self, org: OrganizationId, signer: Option<OrgSigner>) {
        if self.entries.len() >= Self::CAPACITY {
            self.entries.clear();
        }
        self.entries.insert(org, (signer, Instant::now()));
    }
}

#[cfg(test)]
#[path = "signature_tests.rs"]
mod tests;
