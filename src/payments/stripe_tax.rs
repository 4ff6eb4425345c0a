//! Stripe Tax: the alternative tax provider (an organization's `tax.provider = "stripe"`),
//! through Stripe's Tax Calculations and Tax Transactions APIs with the payments' Stripe key.
//!
//! - A quote is a calculation (`POST /v1/tax/calculations`, one line item of the request's
//!   amount and behaviour, the buyer's billing address and, for a business, its tax number):
//!   its `tax_breakdown` becomes the quote's breakdown ([`Regime::Provider`]) and its id
//!   (`taxcalc_…`) the quote's `provider_ref`.
//! - After payment the calculation is recorded as a transaction
//!   (`POST /v1/tax/transactions/create_from_calculation`, reference = the order id), and a
//!   refund reverses it (`POST /v1/tax/transactions/create_reversal`, reference = the
//!   refund id): see `crate::app::tax_transactions`.
//!
//! Each call has a timeout; every failure (no answer in time, a non-2xx answer, a body that
//! does not parse or does not add up) is a [`TaxError`] naming its cause. A buyer without a
//! billing address is quoted zero without asking (Stripe cannot locate them; the checkout
//! asks again once the address is given).

use std::time::Duration;

use chrono::NaiveDate;
use serde::Deserialize;
use sha2::Digest;

use super::tax::{TaxError, TaxFuture, TaxService};
use crate::config::PaymentSettings;
use tollgate_actors::tax::{
    Regime, TaxBehavior, TaxBreakdown, TaxQuote, TaxRequest, TaxabilityReason,
};

// Stripe's API version these requests and the parsed objects follow (the processor's).
use super::stripe::STRIPE_VERSION;

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a whole call may take: a buyer waits on a calculation.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// The one line item's `reference` (unique within its calculation).
pub const LINE_REFERENCE: &str = "sale";

/// Stripe Tax with the server's Stripe key.
#[derive(Clone)]
pub struct StripeTax {
    http: reqwest::Client,
    api_base: String,
    secret_key: String,
}

/// How a refund reverses a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reversal {
    /// The whole transaction (the refund is the whole order).
    Full,
    /// `flat_amount` (negative: what goes back, tax included) spread over the
    /// transaction's lines in proportion.
    Partial { flat_amount: i64 },
}

/// A failed call: Stripe's answer when it gave one (status, its error's `param` and
/// message), so a caller can tell "already done" from "down".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    pub status: Option<u16>,
    pub param: Option<String>,
    /// Stripe's error `code` (`customer_tax_location_invalid`, …).
    pub code: Option<String>,
    /// Stripe's own message (the buyer may read it).
    pub said: Option<String>,
    pub message: String,
}

impl CallError {
    fn cause(path: &str, cause: String) -> CallError {
        CallError {
            status: None,
            param: None,
            code: None,
            said: None,
            message: format!("Stripe Tax {path}: {cause}"),
        }
    }

    /// Stripe refused a reference it has seen (a transaction recorded already).
    pub fn is_reference_reused(&self) -> bool {
        self.status == Some(400) && self.param.as_deref() == Some("reference")
    }
}

/// Stripe's code for an address it cannot place for tax.
pub const LOCATION_INVALID: &str = "customer_tax_location_invalid";

impl From<CallError> for TaxError {
    /// Stripe could not place the buyer (400 `customer_tax_location_invalid`): a location
    /// error in Stripe's words; anything else: a failure.
    fn from(e: CallError) -> TaxError {
        match (e.status, e.code.as_deref(), e.said) {
            (Some(400), Some(LOCATION_INVALID), Some(said)) => TaxError::location(e.message, said),
            (Some(400), Some(LOCATION_INVALID), None) => TaxError::location(
                e.message,
                "The customer's location could not be determined.",
            ),
            _ => TaxError::failed(e.message),
        }
    }
}

impl StripeTax {
    pub fn new(settings: &PaymentSettings) -> anyhow::Result<StripeTax> {
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(CALL_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(StripeTax {
            http,
            api_base: settings.stripe_api_base.trim_end_matches('/').to_string(),
            secret_key: settings.stripe_secret_key.clone(),
        })
    }

    /// One call: the answer's object on 2xx, else a [`CallError`] naming the cause.
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        form: &[(String, String)],
        idempotency_key: Option<&str>,
    ) -> Result<serde_json::Value, CallError> {
        let mut req = self
            .http
            .request(method.clone(), format!("{}{path}", self.api_base))
            .bearer_auth(&self.secret_key)
            .header("Stripe-Version", STRIPE_VERSION);
        if let Some(key) = idempotency_key {
            req = req.header("Idempotency-Key", key);
        }
        if method == reqwest::Method::POST {
            req = req.form(form);
        }
        let resp = req.send().await.map_err(|e| {
            let cause = if e.is_timeout() {
                format!("no answer within {}s", CALL_TIMEOUT.as_secs())
            } else {
                format!("unreachable: {}", e.without_url())
            };
            CallError::cause(path, cause)
        })?;
        let status = resp.status();
        let text = resp
            .text()
            .await
            .map_err(|e| CallError::cause(path, format!("answer cut short ({status}): {e}")))?;
        let body: Option<serde_json::Value> = serde_json::from_str(&text).ok();
        if status.is_success() {
            return body.ok_or_else(|| {
                CallError::cause(path, format!("unreadable answer ({status}): not JSON"))
            });
        }
        let error = body
            .as_ref()
            .and_then(|b| b.get("error"))
            .cloned()
            .and_then(|e| serde_json::from_value::<ApiError>(e).ok())
            .unwrap_or_default();
        Err(CallError {
            status: Some(status.as_u16()),
            param: error.param,
            code: error.code,
            message: format!(
                "Stripe Tax {path}: {status} {}",
                error.message.as_deref().unwrap_or("(no message)")
            ),
            said: error.message,
        })
    }

    /// The quote of `request` as Stripe calculates it.
    pub async fn calculate(&self, request: TaxRequest) -> Result<TaxQuote, TaxError> {
        if request.buyer.address.is_none() {
            return Ok(TaxQuote::zero(request));
        }
        let form = calculation_form(&request, chrono::Utc::now().date_naive());
        let key = idempotency_key("taxcalc", &form);
        let path = "/v1/tax/calculations";
        let body = self
            .call(reqwest::Method::POST, path, &form, Some(&key))
            .await?;
        quote_from(request, body)
    }

    /// Records `calculation` as a transaction with `reference` (the order id); answers the
    /// transaction's id. Retried with the same reference, Stripe answers the first
    /// transaction (the idempotency key derives from the reference).
    pub async fn record(&self, calculation: &str, reference: &str) -> Result<String, CallError> {
        let form = vec![
            ("calculation".to_string(), calculation.to_string()),
            ("reference".to_string(), reference.to_string()),
        ];
        let path = "/v1/tax/transactions/create_from_calculation";
        let key = format!("tollgate-tax-record-{reference}");
        let body = self
            .call(reqwest::Method::POST, path, &form, Some(&key))
            .await?;
        transaction_id(path, &body, "transaction")
    }

    /// Reverses the transaction `original` for the refund `reference`; answers the
    /// reversal's id.
    pub async fn reverse(
        &self,
        original: &str,
        reference: &str,
        reversal: Reversal,
    ) -> Result<String, CallError> {
        let form = reversal_form(original, reference, reversal);
        let path = "/v1/tax/transactions/create_reversal";
        let key = format!("tollgate-tax-reversal-{reference}");
        let body = self
            .call(reqwest::Method::POST, path, &form, Some(&key))
            .await?;
        transaction_id(path, &body, "reversal")
    }

    /// The transaction `id` as Stripe holds it.
    pub async fn transaction(&self, id: &str) -> Result<serde_json::Value, CallError> {
        let path = format!("/v1/tax/transactions/{id}");
        self.call(reqwest::Method::GET, &path, &[], None).await
    }
}

impl TaxService for StripeTax {
    fn quote(&self, request: TaxRequest) -> TaxFuture {
        let this = self.clone();
        Box::pin(async move { this.calculate(request).await })
    }
}

#[derive(Debug, Default, Deserialize)]
struct ApiError {
    message: Option<String>,
    param: Option<String>,
    code: Option<String>,
}

/// A key for Stripe's `Idempotency-Key` from what is sent: the same calculation asked
/// twice is answered once.
fn idempotency_key(prefix: &str, form: &[(String, String)]) -> String {
    let mut h = sha2::Sha256::new();
    for (k, v) in form {
        h.update(k.as_bytes());
        h.update([0]);
        h.update(v.as_bytes());
        h.update([0]);
    }
    let digest = h.finalize();
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("tollgate-{prefix}-{hex}")
}

/// The form of a calculation of `request` (`today`: the tax date is sent only when it is
/// another day, Stripe's default being now).
pub fn calculation_form(request: &TaxRequest, today: NaiveDate) -> Vec<(String, String)> {
    let mut form: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: String| form.push((k.to_string(), v));
    put("currency", request.currency.to_ascii_lowercase());
    put("line_items[0][amount]", request.amount.to_string());
    put("line_items[0][reference]", LINE_REFERENCE.to_string());
    put(
        "line_items[0][tax_behavior]",
        match request.behavior {
            TaxBehavior::Exclusive => "exclusive",
            TaxBehavior::Inclusive => "inclusive",
        }
        .to_string(),
    );
    if let Some(code) = &request.tax_code {
        put("line_items[0][tax_code]", code.clone());
    }
    if let Some(a) = &request.buyer.address {
        let country = a.country.to_ascii_uppercase();
        let fields = [
            ("line1", a.line1.clone()),
            ("line2", a.line2.clone()),
            ("city", a.city.clone()),
            ("state", a.state.as_deref().map(|s| state_code(&country, s))),
            ("postal_code", a.postal_code.clone()),
        ];
        for (name, value) in fields {
            if let Some(v) = value.filter(|v| !v.trim().is_empty()) {
                put(&format!("customer_details[address][{name}]"), v);
            }
        }
        put("customer_details[address][country]", country);
        put("customer_details[address_source]", "billing".to_string());
    }
    if request.buyer.has_business_number() {
        if let Some((id, _)) = &request.buyer.tax_id {
            put(
                "customer_details[tax_ids][0][type]",
                id.format.as_str().to_string(),
            );
            put("customer_details[tax_ids][0][value]", id.value.clone());
        }
    }
    if request.tax_date != today {
        if let Some(t) = request.tax_date.and_hms_opt(0, 0, 0) {
            put("tax_date", t.and_utc().timestamp().to_string());
        }
    }
    form
}

/// A subdivision as Stripe takes it: `CA` for `US-CA` (ours are ISO 3166-2).
fn state_code(country: &str, state: &str) -> String {
    let s = state.trim().to_ascii_uppercase();
    s.strip_prefix(&format!("{country}-"))
        .map(str::to_string)
        .unwrap_or(s)
}

/// The form of a reversal of `original` for the refund `reference`.
pub fn reversal_form(original: &str, reference: &str, reversal: Reversal) -> Vec<(String, String)> {
    let mut form = vec![
        ("original_transaction".to_string(), original.to_string()),
        ("reference".to_string(), reference.to_string()),
    ];
    match reversal {
        Reversal::Full => form.push(("mode".into(), "full".into())),
        Reversal::Partial { flat_amount } => {
            form.push(("mode".into(), "partial".into()));
            form.push(("flat_amount".into(), flat_amount.to_string()));
        }
    }
    form
}

fn transaction_id(path: &str, body: &serde_json::Value, kind: &str) -> Result<String, CallError> {
    match (
        body.get("id").and_then(|v| v.as_str()),
        body.get("type").and_then(|v| v.as_str()),
    ) {
        (Some(id), Some(t)) if t == kind && id.starts_with("tax_") => Ok(id.to_string()),
        _ => Err(CallError::cause(
            path,
            format!("unreadable answer: not a tax.transaction of type {kind}"),
        )),
    }
}

/// Stripe's `tax.calculation`, as far as a quote reads it.
#[derive(Debug, Deserialize)]
struct Calculation {
    id: String,
    amount_total: i64,
    currency: String,
    tax_amount_exclusive: i64,
    tax_amount_inclusive: i64,
    tax_breakdown: Vec<CalculationBreakdown>,
}

#[derive(Debug, Deserialize)]
struct CalculationBreakdown {
    amount: i64,
    taxable_amount: i64,
    taxability_reason: String,
    tax_rate_details: RateDetails,
}

#[derive(Debug, Deserialize)]
struct RateDetails {
    country: Option<String>,
    state: Option<String>,
    tax_type: Option<String>,
    percentage_decimal: String,
}

/// The quote a calculation answers for `request`: an error when the answer does not parse
/// or does not answer the request (another currency, amounts that do not add up).
pub fn quote_from(request: TaxRequest, body: serde_json::Value) -> Result<TaxQuote, TaxError> {
    let path = "/v1/tax/calculations";
    let c: Calculation = serde_json::from_value(body)
        .map_err(|e| TaxError::failed(format!("Stripe Tax {path}: unreadable answer: {e}")))?;
    let bad = |what: String| TaxError::failed(format!("Stripe Tax {path}: {what} ({})", c.id));
    if !c.id.starts_with("taxcalc_") {
        return Err(bad("not a calculation id".into()));
    }
    if !c.currency.eq_ignore_ascii_case(&request.currency) {
        return Err(bad(format!("answered in {}", c.currency)));
    }
    let (tax, other, total) = match request.behavior {
        TaxBehavior::Exclusive => (
            c.tax_amount_exclusive,
            c.tax_amount_inclusive,
            request.amount.checked_add(c.tax_amount_exclusive),
        ),
        TaxBehavior::Inclusive => (
            c.tax_amount_inclusive,
            c.tax_amount_exclusive,
            Some(request.amount),
        ),
    };
    if other != 0 || tax < 0 || total != Some(c.amount_total) {
        return Err(bad(format!(
            "amounts do not add up: total {}, tax exclusive {}, inclusive {}, for {} {}",
            c.amount_total,
            c.tax_amount_exclusive,
            c.tax_amount_inclusive,
            request.amount,
            match request.behavior {
                TaxBehavior::Exclusive => "exclusive",
                TaxBehavior::Inclusive => "inclusive",
            }
        )));
    }
    let mut breakdown = Vec::with_capacity(c.tax_breakdown.len());
    for b in &c.tax_breakdown {
        let details = &b.tax_rate_details;
        let country = details
            .country
            .as_deref()
            .filter(|c| c.len() == 2)
            .map(str::to_ascii_uppercase)
            .ok_or_else(|| bad("a breakdown line without a country".into()))?;
        let rate_ppm = rate_ppm(&details.percentage_decimal)
            .ok_or_else(|| bad(format!("rate {:?}", details.percentage_decimal)))?;
        breakdown.push(TaxBreakdown {
            subdivision: details
                .state
                .as_deref()
                .filter(|s| !s.is_empty())
                .map(|s| format!("{country}-{}", s.to_ascii_uppercase())),
            country,
            name: tax_name(details.tax_type.as_deref()),
            rate_ppm,
            taxable_amount: b.taxable_amount,
            amount: b.amount,
            reason: reason(&b.taxability_reason),
            regime: Regime::Provider,
        });
    }
    let sum: i64 = breakdown.iter().map(|b| b.amount).sum();
    if sum != tax {
        return Err(bad(format!("breakdown adds up to {sum}, not {tax}")));
    }
    Ok(TaxQuote {
        request,
        breakdown,
        tax_amount: tax,
        provider_ref: Some(c.id),
    })
}

/// What the buyer reads for Stripe's `tax_type`.
pub fn tax_name(tax_type: Option<&str>) -> String {
    match tax_type.unwrap_or("") {
        "vat" => "VAT".into(),
        "gst" => "GST".into(),
        "hst" => "HST".into(),
        "qst" => "QST".into(),
        "pst" => "PST".into(),
        "rst" => "RST".into(),
        "jct" => "JCT".into(),
        "igst" => "IGST".into(),
        "cgst" => "CGST".into(),
        "sgst" => "SGST".into(),
        "sales_tax" => "Sales tax".into(),
        "" => "Tax".into(),
        other => {
            let spaced = other.replace('_', " ");
            let mut chars = spaced.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => "Tax".into(),
            }
        }
    }
}

/// Our reason for Stripe's `taxability_reason`: taxed at a rate (standard, reduced,
/// proportional…), reverse-charged, not collected, outside the tax (exempt, zero-rated),
/// or not supported (anything Stripe adds later).
pub fn reason(taxability_reason: &str) -> TaxabilityReason {
    match taxability_reason {
        "standard_rated"
        | "reduced_rated"
        | "proportionally_rated"
        | "taxable_basis_reduced"
        | "part_exempt" => TaxabilityReason::StandardRated,
        "reverse_charge" => TaxabilityReason::ReverseCharge,
        "not_collecting" => TaxabilityReason::NotCollecting,
        "not_subject_to_tax"
        | "zero_rated"
        | "customer_exempt"
        | "product_exempt"
        | "product_exempt_holiday"
        | "excluded_territory"
        | "jurisdiction_unsupported" => TaxabilityReason::NotSubjectToTax,
        _ => TaxabilityReason::NotSupported,
    }
}

/// Parts per million of a percentage written as a decimal (`"19.0"`, `"8.875"`): exact,
/// without floats; a fifth decimal and beyond rounds half up. `None` for anything else (a
/// sign, an exponent, more than 100 %).
pub fn rate_ppm(percentage_decimal: &str) -> Option<u32> {
    let s = percentage_decimal.trim();
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(frac) || whole.len() > 3 {
        return None;
    }
    let whole: u32 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut ppm = whole.checked_mul(10_000)?;
    let bytes = frac.as_bytes();
    let mut scale = 1_000;
    for b in bytes.iter().take(4) {
        ppm += u32::from(b - b'0') * scale;
        scale /= 10;
    }
    if bytes.get(4).is_some_and(|b| *b >= b'5') {
        ppm += 1;
    }
    (ppm <= 1_000_000).then_some(ppm)
}

#[cfg(test)]
#[path = "stripe_tax_tests.rs"]
mod tests;
