//! Tax numbers asked of the registers that keep them: the EU Commission's VIES (the VAT
//! numbers of every member state, and Northern Ireland's `XI`) and HMRC's "Check a UK VAT
//! number" v2.0 (GB). Each lookup is bounded by `tax.lookup_timeout_ms`, and answers
//! [`RegisterAnswer`]: registered, not registered, or no answer (with the reason). Nothing
//! here fails: a register that is down, slow or refuses us is `Unknown`, never an error
//! that could stop a sale.
//!
//! VIES: `POST {vies_url}/check-vat-number` with `{"countryCode", "vatNumber"}` answers
//! `{"valid", "requestDate", "requestIdentifier"?, "name"?, "address"?}`; its errors
//! (`MS_UNAVAILABLE`, `TIMEOUT`, `SERVICE_UNAVAILABLE`, `GLOBAL_MAX_CONCURRENT_REQ`, …) come
//! as `{"actionSucceed": false, "errorWrappers": [{"error", "message"?}]}`.
//! HMRC: a token from `POST {hmrc_url}/oauth/token` (`grant_type=client_credentials`; the
//! API is application-restricted), then `GET {hmrc_url}/organisations/vat/check-vat-number/
//! lookup/{vrn}` with `Accept: application/vnd.hmrc.2.0+json`: 200 `{"target": {"name",
//! "vatNumber", "address"}, "processingDate", "consultationNumber"?}` is registered, 404
//! `{"code": "NOT_FOUND"}` is not (hmrc/vat-registered-companies-api,
//! `VatRegCoLookupController.scala`).

use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::sync::Mutex;

use crate::config::TaxConfig;

/// What a register says of a number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegisterAnswer {
    /// Registered. `consultation`: the register's reference for this check (VIES's
    /// `requestIdentifier`, HMRC's `consultationNumber`), kept as evidence; `name`: the
    /// registered name, when the register discloses it.
    Valid {
        consultation: Option<String>,
        name: Option<String>,
    },
    /// Not registered.
    Invalid,
    /// No answer: the register is down, busy, slow or refused the request.
    Unknown(String),
}

/// The two registers, each present when configured.
pub struct TaxIdLookup {
    http: reqwest::Client,
    timeout: Duration,
    /// VIES's base URL, when `tax.vies` is on.
    vies: Option<String>,
    hmrc: Option<Hmrc>,
}

struct Hmrc {
    base: String,
    client_id: String,
    client_secret: String,
    /// The bearer token and when it stops being used.
    token: Mutex<Option<(String, Instant)>>,
}

/// HMRC's media type of "Check a UK VAT number" v2.0.
const HMRC_ACCEPT: &str = "application/vnd.hmrc.2.0+json";

impl TaxIdLookup {
    pub fn new(config: &TaxConfig) -> anyhow::Result<Self> {
        let timeout = Duration::from_millis(config.lookup_timeout_ms);
        let http = reqwest::Client::builder()
            .connect_timeout(timeout)
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("Tollgate/", env!("CARGO_PKG_VERSION")))
            .build()?;
        let base = |url: &str| url.trim().trim_end_matches('/').to_string();
        Ok(Self {
            http,
            timeout,
            vies: config.vies.then(|| base(&config.vies_url)),
            hmrc: config.hmrc().then(|| Hmrc {
                base: base(&config.hmrc_url),
                client_id: config.hmrc_client_id.trim().to_string(),
                client_secret: config.hmrc_client_secret.trim().to_string(),
                token: Mutex::new(None),
            }),
        })
    }

    /// Whether VIES is asked.
    pub fn has_vies(&self) -> bool {
        self.vies.is_some()
    }

    /// Whether HMRC is asked.
    pub fn has_hmrc(&self) -> bool {
        self.hmrc.is_some()
    }

    /// Asks VIES about `number` (without its prefix) of the member state `country_code`
    /// (VIES's code: `EL` for Greece, `XI` for Northern Ireland).
    pub async fn vies(&self, country_code: &str, number: &str) -> RegisterAnswer {
        let Some(base) = &self.vies else {
            return RegisterAnswer::Unknown("VIES is not configured".into());
        };
        let call = async {
            let response = self
                .http
                .post(format!("{base}/check-vat-number"))
                .json(&serde_json::json!({"countryCode": country_code, "vatNumber": number}))
                .send()
                .await
                .map_err(|e| format!("VIES: {}", e.without_url()))?;
            let status = response.status();
            let body = response
                .bytes()
                .await
                .map_err(|e| format!("VIES: {status}: {}", e.without_url()))?;
            Ok::<_, String>(vies_answer(status, &body))
        };
        self.bounded("VIES", call).await
    }

    /// Asks HMRC about the GB VAT registration number `vrn` (nine or twelve digits).
    pub async fn hmrc(&self, vrn: &str) -> RegisterAnswer {
        let Some(hmrc) = &self.hmrc else {
            return RegisterAnswer::Unknown("HMRC is not configured".into());
        };
        let call = async {
            let (token, fresh) = self.hmrc_token(hmrc).await?;
            let first = self.hmrc_lookup(hmrc, &token, vrn).await?;
            // A token HMRC no longer takes (revoked, or its clock ahead of ours): once more
            // with a new one.
            if first.is_none() && !fresh {
                let (token, _) = self.hmrc_token(hmrc).await?;
                if let Some(answer) = self.hmrc_lookup(hmrc, &token, vrn).await? {
                    return Ok(answer);
                }
            }
            Ok(first.unwrap_or_else(|| RegisterAnswer::Unknown("HMRC: 401 Unauthorized".into())))
        };
        self.bounded("HMRC", call).await
    }

    /// `call` within the lookup timeout; its error or the timeout as `Unknown`.
    async fn bounded(
        &self,
        register: &str,
        call: impl std::future::Future<Output = Result<RegisterAnswer, String>>,
    ) -> RegisterAnswer {
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(reason)) => RegisterAnswer::Unknown(reason),
            Err(_) => RegisterAnswer::Unknown(format!(
                "{register}: no answer within {} ms",
                self.timeout.as_millis()
            )),
        }
    }

    /// The cached bearer token, or a new one (then `true`).
    async fn hmrc_token(&self, hmrc: &Hmrc) -> Result<(String, bool), String> {
        let mut slot = hmrc.token.lock().await;
        if let Some((token, until)) = slot.as_ref() {
            if Instant::now() < *until {
                return Ok((token.clone(), false));
            }
        }
        let response = self
            .http
            .post(format!("{}/oauth/token", hmrc.base))
            .form(&[
                ("grant_type", "client_credentials"),
                ("client_id", hmrc.client_id.as_str()),
                ("client_secret", hmrc.client_secret.as_str()),
            ])
            .send()
            .await
            .map_err(|e| format!("HMRC token: {}", e.without_url()))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("HMRC token: {status}"));
        }
        #[derive(Deserialize)]
        struct Token {
            access_token: String,
            #[serde(default)]
            expires_in: Option<u64>,
        }
        let token: Token = response
            .json()
            .await
            .map_err(|e| format!("HMRC token: unreadable answer: {}", e.without_url()))?;
        // HMRC's tokens last 4 hours; one is dropped a minute before it expires.
        let lasts = Duration::from_secs(token.expires_in.unwrap_or(3600).saturating_sub(60));
        *slot = Some((token.access_token.clone(), Instant::now() + lasts));
        Ok((token.access_token, true))
    }

    /// One lookup; `None` on 401 (the token was refused; the cached one is dropped).
    async fn hmrc_lookup(
        &self,
        hmrc: &Hmrc,
        token: &str,
        vrn: &str,
    ) -> Result<Option<RegisterAnswer>, String> {
        let response = self
            .http
            .get(format!(
                "{}/organisations/vat/check-vat-number/lookup/{vrn}",
                hmrc.base
            ))
            .header(reqwest::header::ACCEPT, HMRC_ACCEPT)
            .bearer_auth(token)
            .send()
            .await
            .map_err(|e| format!("HMRC: {}", e.without_url()))?;
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED {
            *hmrc.token.lock().await = None;
            return Ok(None);
        }
        let body = response
            .bytes()
            .await
            .map_err(|e| format!("HMRC: {status}: {}", e.without_url()))?;
        Ok(Some(hmrc_answer(status, &body)))
    }
}

/// A non-empty text, without VIES's `---` (not disclosed).
fn disclosed(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s != "---")
}

/// VIES's answer to `check-vat-number`.
fn vies_answer(status: reqwest::StatusCode, body: &[u8]) -> RegisterAnswer {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Answer {
        valid: Option<bool>,
        request_identifier: Option<String>,
        name: Option<String>,
        action_succeed: Option<bool>,
        #[serde(default)]
        error_wrappers: Vec<ErrorWrapper>,
        /// The other REST endpoint's status field (`VALID`, `INVALID`, `MS_UNAVAILABLE`…),
        /// read in case it appears here.
        user_error: Option<String>,
    }
    #[derive(Deserialize)]
    struct ErrorWrapper {
        error: Option<String>,
    }
    let Ok(answer) = serde_json::from_slice::<Answer>(body) else {
        return RegisterAnswer::Unknown(format!("VIES: {status}: unreadable answer"));
    };
    let errors: Vec<String> = answer
        .error_wrappers
        .into_iter()
        .filter_map(|e| e.error)
        .chain(
            answer
                .user_error
                .filter(|e| !matches!(e.as_str(), "VALID" | "INVALID")),
        )
        .collect();
    if !errors.is_empty() || answer.action_succeed == Some(false) {
        return RegisterAnswer::Unknown(format!("VIES: {status}: {}", errors.join(", ")));
    }
    if !status.is_success() {
        return RegisterAnswer::Unknown(format!("VIES: {status}"));
    }
    match answer.valid {
        Some(true) => RegisterAnswer::Valid {
            consultation: disclosed(answer.request_identifier),
            name: disclosed(answer.name),
        },
        Some(false) => RegisterAnswer::Invalid,
        None => RegisterAnswer::Unknown(format!("VIES: {status}: no \"valid\" in the answer")),
    }
}

/// HMRC's answer to a lookup (401 handled by the caller).
fn hmrc_answer(status: reqwest::StatusCode, body: &[u8]) -> RegisterAnswer {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Answer {
        target: Option<Target>,
        consultation_number: Option<String>,
    }
    #[derive(Deserialize)]
    struct Target {
        name: Option<String>,
    }
    #[derive(Deserialize)]
    struct Error {
        code: String,
    }
    match status.as_u16() {
        200 => match serde_json::from_slice::<Answer>(body) {
            Ok(a) => RegisterAnswer::Valid {
                consultation: disclosed(a.consultation_number),
                name: disclosed(a.target.and_then(|t| t.name)),
            },
            Err(_) => RegisterAnswer::Unknown("HMRC: 200: unreadable answer".into()),
        },
        // HMRC's "targetVrn does not match a registered company"; any other 404 (a wrong
        // `hmrc_url`, the platform's MATCHING_RESOURCE_NOT_FOUND) proves nothing.
        404 if serde_json::from_slice::<Error>(body).is_ok_and(|e| e.code == "NOT_FOUND") => {
            RegisterAnswer::Invalid
        }
        _ => RegisterAnswer::Unknown(format!("HMRC: {status}")),
    }
}

#[cfg(test)]
#[path = "tax_id_tests.rs"]
pub(crate) mod tests;
