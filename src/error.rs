//! The one place where errors become HTTP responses.
//!
//! Every error body has the same shape, Polar's: `{"error": "<Kind>", "detail": <message>}`.
//! Validation errors are 422 with `detail` a list of `{type, loc, msg, input}` (FastAPI's
//! shape, which Polar's SDKs parse). Bearer-token errors keep the RFC 6750 names in
//! `error` and also carry `error_description`, plus a `WWW-Authenticate` header.
//! 5xx bodies are generic; the cause goes to the log only.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use serde_json::Value;
use tollgate_storage::StorageError;
use utoipa::ToSchema;

mod refusal;
pub use refusal::{AppError, Given, Invalid, Step};

/// One item of a 422 body (FastAPI's `ValidationError`). `input` and `ctx` are free-form:
/// whatever was sent, and the rule's parameters.
#[derive(Debug, Clone, Serialize, PartialEq, ToSchema)]
#[schema(as = ValidationError)]
pub struct FieldError {
    #[serde(rename = "type")]
    pub kind: String,
    /// Where the problem is: `["body", "prices", 0, "price_amount"]`.
    #[schema(value_type = Vec<LocItem>)]
    pub loc: Vec<Value>,
    pub msg: String,
    pub input: Value,
    /// Sent only by the rules that have parameters (pydantic's `ctx`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(ignore)]
    pub ctx: Option<Value>,
}

/// One step of a `loc` path: an object key or an array index.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
pub enum LocItem {
    Key(String),
    Index(i64),
}

/// `Error`: the body of every error but a 422 and the OAuth endpoints' own.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Error)]
pub struct ErrorBody {
    /// E.g. `ResourceNotFound`, `NotPermitted`, `Unauthorized`, `invalid_token`.
    pub error: String,
    pub detail: String,
    /// Bearer-token refusals only (RFC 6750): the same text as `detail`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(ignore)]
    pub error_description: Option<String>,
    /// License-key refusals only (validate, activate, deactivate, rotate): why, as one of
    /// a stable table a program can test (`not_found`, `revoked`, `disabled`, `expired`,
    /// `activation_not_found`, `conditions_mismatch`, `benefit_mismatch`,
    /// `customer_mismatch`, `usage_limit_reached`, `usage_out_of_range`,
    /// `activation_not_required`, `activation_limit_reached`, `rotation_not_permitted`);
    /// see the README. Left out elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub code: Option<&'static str>,
}

impl ErrorBody {
    pub fn new(error: &str, detail: impl Into<String>) -> Self {
        ErrorBody {
            error: error.into(),
            detail: detail.into(),
            error_description: None,
            code: None,
        }
    }
}

/// `HTTPValidationError`: a 422 with every problem found in the request.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = HTTPValidationError)]
pub struct ValidationErrorBody {
    /// Always `RequestValidationError`.
    pub error: String,
    pub detail: Vec<FieldError>,
}

/// One instance of each error body, for the document test in `crate::openapi`.
#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    let field = FieldError::new(
        "string_too_short",
        crate::loc!["body", "prices", 0, "name"],
        "String should have at least 1 character",
        Value::from(""),
    )
    .with_ctx(serde_json::json!({"min_length": 1}));
    let bearer = ErrorBody {
        error_description: Some("The access token is invalid.".into()),
        ..ErrorBody::new("invalid_token", "The access token is invalid.")
    };
    let coded = ErrorBody {
        code: Some("revoked"),
        ..ErrorBody::new("ResourceNotFound", "License key is no longer active.")
    };
    [
        ("Error", serde_json::to_value(coded)),
        (
            "Error",
            serde_json::to_value(ErrorBody::new("ResourceNotFound", "Not found")),
        ),
        ("Error", serde_json::to_value(bearer)),
        (
            "HTTPValidationError",
            serde_json::to_value(ValidationErrorBody {
                error: "RequestValidationError".into(),
                detail: vec![field],
            }),
        ),
    ]
    .into_iter()
    .map(|(name, v)| (name, v.unwrap_or_default()))
    .collect()
}

/// An RFC 6749 error of the OAuth endpoints; `error_description` is left out when there is
/// none (RFC 6749 5.2).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = OAuth2Error)]
pub struct OAuthErrorBody<'a> {
    /// E.g. `invalid_grant`, `invalid_client`, `invalid_request`, `unsupported_grant_type`.
    pub error: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub error_description: Option<&'a str>,
}

impl FieldError {
    pub fn new(kind: &str, loc: Vec<Value>, msg: impl Into<String>, input: Value) -> Self {
        Self {
            kind: kind.into(),
            loc,
            msg: msg.into(),
            input,
            ctx: None,
        }
    }

    pub fn with_ctx(mut self, ctx: Value) -> Self {
        self.ctx = Some(ctx);
        self
    }
}

/// Builds a `loc` array: `loc!["body", "slug"]`.
#[macro_export]
macro_rules! loc {
    ($($part:expr),* $(,)?) => {
        vec![$(serde_json::Value::from($part)),*]
    };
}

/// Why a bearer credential was refused (RFC 6750 error codes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BearerError {
    /// The token is unknown, expired or revoked.
    InvalidToken,
    /// The token's subject type is not allowed on this endpoint.
    InvalidSubject { allowed: String },
    /// The token lacks every scope the endpoint accepts.
    InsufficientScope { required: String },
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// No credentials where some are required.
    #[error("unauthorized")]
    Unauthorized,
    #[error("bearer token refused: {0:?}")]
    Bearer(BearerError),
    #[error("not permitted: {0}")]
    NotPermitted(String),
    #[error("not found: {0}")]
    NotFound(String),
    /// An update or confirm of a checkout that is not open (Polar's 403 `NotOpenCheckout`).
    #[error("checkout {id} is not open: {status}")]
    NotOpenCheckout { id: String, status: String },
    /// The payment processor declined (Polar's 400 `PaymentError`).
    #[error("payment failed: {0}")]
    PaymentError(String),
    #[error("bad request: {0}")]
    BadRequest(String),
    /// A license key rotated in a status that does not allow it (Polar's 400
    /// `RotateNotPermitted`).
    #[error("rotate not permitted: {0}")]
    RotateNotPermitted(String),
    /// A refund of an order refunded in full already (Polar's 403 `RefundedAlready`).
    #[error("refunded already: {0}")]
    RefundedAlready(String),
    /// `revoke_benefits` on a subscription's order (Polar's 400
    /// `RevokeSubscriptionBenefitsProhibited`).
    #[error("{0}")]
    RevokeSubscriptionBenefitsProhibited(String),
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    #[error("conflict: {0}")]
    Conflict(String),
    /// An external customer id that several customers of the caller's organizations hold
    /// (Polar's 409 `AmbiguousExternalCustomerID`).
    #[error("ambiguous external customer id")]
    AmbiguousExternalCustomerId,
    #[error("request body too large")]
    PayloadTooLarge { limit: usize },
    #[error("method not allowed")]
    MethodNotAllowed,
    #[error("too many requests")]
    TooManyRequests { retry_after_secs: u64 },
    /// A rate limit ran out: 429 with `Retry-After`, `RateLimit-Policy` and `RateLimit`.
    #[error("rate limited")]
    RateLimited(Box<crate::limits::Denied>),
    /// An actor did not answer in time, or its mailbox was full or closed.
    #[error("temporarily unavailable")]
    Unavailable,
    /// The store cannot write now (see `tollgate_storage::StoreHealth`); the cause is
    /// logged, the client gets a generic 503.
    #[error("storage unavailable: {0}")]
    StorageUnavailable(String),
    #[error("internal error: {0}")]
    Internal(String),
    /// An RFC 6749 error of an OAuth endpoint: `{"error", "error_description"}`.
    #[error("oauth error {error}")]
    OAuth {
        status: u16,
        error: &'static str,
        description: Option<String>,
    },
    /// One of Polar's named errors, with its status: `{"error": error, "detail": detail}`
    /// (`CustomerSessionCodeInvalidOrExpired`, `ResourceUnavailable`, …).
    #[error("{error}: {detail}")]
    Named {
        status: u16,
        error: &'static str,
        detail: String,
    },
    /// A browser page that reports an error (the authorization pages), already rendered.
    #[error("page error {status}")]
    Page { status: u16, html: String },
    /// An error with a machine-readable `code` in its body (license-key refusals): the
    /// status and the rest of the body are `inner`'s.
    #[error("{inner}")]
    Coded {
        inner: Box<ApiError>,
        code: &'static str,
    },
}

impl ApiError {
    /// The error's code in the table (its status and name); a named, OAuth or page error
    /// carries its own status.
    pub fn code(&self) -> Code {
        match self {
            ApiError::Unauthorized => Code::Unauthorized,
            ApiError::Bearer(BearerError::InsufficientScope { .. }) => Code::InsufficientScope,
            ApiError::Bearer(_) => Code::InvalidToken,
            ApiError::NotPermitted(_) => Code::NotPermitted,
            ApiError::NotFound(_) => Code::NotFound,
            ApiError::NotOpenCheckout { .. } => Code::NotOpenCheckout,
            ApiError::PaymentError(_) => Code::PaymentError,
            ApiError::BadRequest(_) | ApiError::Page { .. } => Code::BadRequest,
            ApiError::RotateNotPermitted(_) => Code::RotateNotPermitted,
            ApiError::RefundedAlready(_) => Code::RefundedAlready,
            ApiError::RevokeSubscriptionBenefitsProhibited(_) => {
                Code::RevokeSubscriptionBenefitsProhibited
            }
            ApiError::Validation(_) => Code::Invalid,
            ApiError::Conflict(_) => Code::AlreadyExists,
            ApiError::AmbiguousExternalCustomerId => Code::AmbiguousExternalCustomerId,
            ApiError::PayloadTooLarge { .. } => Code::PayloadTooLarge,
            ApiError::MethodNotAllowed => Code::MethodNotAllowed,
            ApiError::TooManyRequests { .. } | ApiError::RateLimited(_) => Code::TooManyRequests,
            ApiError::Unavailable => Code::Unavailable,
            ApiError::StorageUnavailable(_) => Code::StorageUnavailable,
            ApiError::Internal(_) => Code::Internal,
            ApiError::OAuth { error, .. } | ApiError::Named { error, .. } => Code::ALL
                .iter()
                .copied()
                .find(|c| c.name() == *error)
                .unwrap_or(Code::BadRequest),
            ApiError::Coded { inner, .. } => inner.code(),
        }
    }

    pub fn not_found() -> Self {
        ApiError::NotFound("Not found".into())
    }

    /// This error with the machine-readable `code` in its body.
    pub fn with_code(self, code: &'static str) -> Self {
        ApiError::Coded {
            inner: Box::new(self),
            code,
        }
    }

    /// The error without its code (what it is, for callers that match on it).
    pub fn uncoded(self) -> Self {
        match self {
            ApiError::Coded { inner, .. } => inner.uncoded(),
            other => other,
        }
    }

    pub fn validation(error: FieldError) -> Self {
        ApiError::Validation(vec![error])
    }

    /// A 422 for one field, with Polar's `value_error` type.
    pub fn invalid(loc: Vec<Value>, msg: impl Into<String>, input: Value) -> Self {
        ApiError::validation(FieldError::new("value_error", loc, msg, input))
    }

    /// An OAuth error with status 400 (or 401 for `invalid_client`).
    pub fn oauth(error: &'static str, description: impl Into<String>) -> Self {
        let status = if error == "invalid_client" { 401 } else { 400 };
        ApiError::OAuth {
            status,
            error,
            description: Some(description.into()),
        }
    }

    pub fn internal(e: impl std::fmt::Display) -> Self {
        ApiError::Internal(e.to_string())
    }
}

impl From<StorageError> for ApiError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::Conflict { .. } => ApiError::Conflict(
                "The resource was modified concurrently; retry the request.".into(),
            ),
            // A full disk, a read-only file system, a flush that did not finish in time:
            // the request may succeed later (and /readyz says when).
            StorageError::Io(_) | StorageError::Unavailable(_) | StorageError::Closed => {
                ApiError::StorageUnavailable(e.to_string())
            }
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl ApiError {
    /// What the error says to a person, one line per problem (a 422 names each field by
    /// its path after `body`): what a page shows next to a form.
    pub fn messages(&self) -> Vec<String> {
        match self {
            ApiError::Validation(errors) => errors
                .iter()
                .map(|f| {
                    let path: Vec<String> = f
                        .loc
                        .iter()
                        .skip(1)
                        .map(|l| match l {
                            Value::String(s) => s.replace('_', " "),
                            other => other.to_string(),
                        })
                        .collect();
                    if path.is_empty() {
                        f.msg.clone()
                    } else {
                        format!("{}: {}", path.join(" › "), f.msg)
                    }
                })
                .collect(),
            ApiError::NotPermitted(m)
            | ApiError::NotFound(m)
            | ApiError::Conflict(m)
            | ApiError::BadRequest(m)
            | ApiError::PaymentError(m)
            | ApiError::Named { detail: m, .. } => vec![m.clone()],
            ApiError::Coded { inner, .. } => inner.messages(),
            ApiError::Bearer(BearerError::InsufficientScope { .. }) => {
                vec!["Your session may not do this.".into()]
            }
            ApiError::Unavailable | ApiError::StorageUnavailable(_) => {
                vec!["The service is busy; try again in a moment.".into()]
            }
            ApiError::RateLimited(_) | ApiError::TooManyRequests { .. } => {
                vec!["Too many requests; wait a little and try again.".into()]
            }
            other => vec![other
                .status_code()
                .canonical_reason()
                .unwrap_or("Error")
                .to_string()],
        }
    }

    /// Whether the error is about a path segment alone (a malformed id in a page's path:
    /// a page that does not exist).
    pub fn is_about_the_path(&self) -> bool {
        matches!(self, ApiError::Validation(errors)
            if !errors.is_empty()
                && errors
                    .iter()
                    .all(|f| f.loc.first().and_then(Value::as_str) == Some("path")))
    }
}

/// A compare-and-swap change ([`tollgate_storage::Store::update`]): the decision's own
/// refusal as it is, the store's failure as any other.
impl From<tollgate_storage::UpdateError<ApiError>> for ApiError {
    fn from(e: tollgate_storage::UpdateError<ApiError>) -> Self {
        match e {
            tollgate_storage::UpdateError::Rejected(e) => e,
            tollgate_storage::UpdateError::Storage(e) => e.into(),
        }
    }
}

/// The one table of error codes: each code's name (the `error` of the body) and status.
/// Use cases refuse with a [`Code`] ([`AppError`]); the adapters' own refusals (bearer
/// tokens, OAuth, limits) have theirs here too.
macro_rules! code_table {
    ($($(#[$doc:meta])* $code:ident => ($name:literal, $status:literal),)*) => {
        /// A stable error code (see the table in `crate::error`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $($(#[$doc])* $code,)*
        }

        impl Code {
            /// Every code, in the table's order.
            pub const ALL: &'static [Code] = &[$(Code::$code,)*];

            /// The `error` name of the body.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Code::$code => $name,)*
                }
            }

            /// The HTTP status.
            pub const fn status(self) -> u16 {
                match self {
                    $(Code::$code => $status,)*
                }
            }
        }

        /// Every error name with its status, for documentation and tests.
        pub const ERROR_TABLE: &[(&str, u16)] = &[$(($name, $status),)*];
    };
}

code_table! {
    /// No credentials where some are required.
    Unauthorized => ("Unauthorized", 401),
    InvalidToken => ("invalid_token", 401),
    InsufficientScope => ("insufficient_scope", 403),
    NotPermitted => ("NotPermitted", 403),
    NotFound => ("ResourceNotFound", 404),
    /// An update or confirm of a checkout that is not open.
    NotOpenCheckout => ("NotOpenCheckout", 403),
    /// The payment processor declined.
    PaymentError => ("PaymentError", 400),
    BadRequest => ("BadRequest", 400),
    /// A license key rotated in a status that does not allow it.
    RotateNotPermitted => ("RotateNotPermitted", 400),
    /// A refund of an order refunded in full already.
    RefundedAlready => ("RefundedAlready", 403),
    /// `revoke_benefits` on a subscription's order.
    RevokeSubscriptionBenefitsProhibited => ("RevokeSubscriptionBenefitsProhibited", 400),
    /// Fields of a command that break a rule.
    Invalid => ("RequestValidationError", 422),
    /// A record that exists already, or one changed concurrently.
    AlreadyExists => ("ResourceAlreadyExists", 409),
    /// An external customer id several customers of the caller's organizations hold.
    AmbiguousExternalCustomerId => ("AmbiguousExternalCustomerID", 409),
    /// A change of a subscription canceled already.
    AlreadyCanceledSubscription => ("AlreadyCanceledSubscription", 403),
    /// A customer-session code that is wrong, used or expired.
    CustomerSessionCodeInvalidOrExpired => ("CustomerSessionCodeInvalidOrExpired", 401),
    /// A generated license key someone claimed already.
    LicenseKeyAlreadyClaimed => ("LicenseKeyAlreadyClaimed", 409),
    /// A charge for a plan change that the processor declined.
    PaymentFailed => ("PaymentFailed", 402),
    /// A plan change that needs a charge, with no card on file.
    PaymentMethodRequired => ("PaymentMethodRequired", 409),
    /// A record that is gone for good (an expired purchase link).
    ResourceUnavailable => ("ResourceUnavailable", 410),
    /// A subscription with a payment in flight.
    SubscriptionLocked => ("SubscriptionLocked", 409),
    /// A trial of a product the customer had one of already.
    TrialAlreadyRedeemed => ("TrialAlreadyRedeemed", 403),
    /// A checkout link followed from a page whose origin the organization's `embed_hosts`
    /// do not list.
    EmbedHostNotAllowed => ("EmbedHostNotAllowed", 403),
    /// A card the processor refused to save (the portal's add of a payment method).
    PaymentMethodSetupFailed => ("PaymentMethodSetupFailed", 400),
    /// A removal of the last saved card a live paid subscription is billed with.
    PaymentMethodInUseByActiveSubscription => ("PaymentMethodInUseByActiveSubscription", 400),
    /// A portal operation that needs the customer known to the processor first.
    CustomerNotReady => ("CustomerNotReady", 403),
    /// "Pay now" of an order that is not a past-due renewal.
    OrderNotEligibleForRetry => ("OrderNotEligibleForRetry", 422),
    /// "Pay now" with a payment method that is not the customer's.
    PaymentRetryValidationError => ("PaymentRetryValidationError", 422),
    /// "Pay now" while another payment of the subscription is in flight.
    PaymentAlreadyInProgress => ("PaymentAlreadyInProgress", 409),
    /// "Pay now" tried too many times for one renewal.
    ManualRetryLimitExceeded => ("ManualRetryLimitExceeded", 429),
    /// A plan change by the buyer where the organization does not allow it.
    UpdateSubscriptionPlanNotAllowed => ("UpdateSubscriptionPlanNotAllowed", 403),
    /// An e-mail change code that is wrong, used or expired.
    InvalidCustomerEmailUpdate => ("InvalidCustomerEmailUpdate", 401),
    /// An accept of a dispute that does not need a response (any more).
    DisputeNotOpenError => ("DisputeNotOpenError", 409),
    /// The invoice of an order asked for before it is issued (Polar's).
    InvoiceDoesNotExist => ("InvoiceDoesNotExist", 404),
    /// An invoice asked for an order that is not paid (Polar's).
    OrderNotEligibleForInvoice => ("OrderNotEligibleForInvoice", 409),
    /// An invoice asked for an order without a billing name and address (Polar's).
    MissingInvoiceBillingDetails => ("MissingInvoiceBillingDetails", 422),
    /// A change of the billing details of an order whose invoice is issued.
    InvoiceAlreadyIssued => ("InvoiceAlreadyIssued", 409),
    /// The credit note of a refund asked for before it is issued.
    CreditNoteDoesNotExist => ("CreditNoteDoesNotExist", 404),
    /// The organization's tax provider (Stripe Tax) failed to compute the tax: nothing was
    /// charged.
    TaxCalculationFailed => ("TaxCalculationFailed", 502),
    PayloadTooLarge => ("PayloadTooLarge", 413),
    MethodNotAllowed => ("MethodNotAllowed", 405),
    TooManyRequests => ("TooManyRequests", 429),
    /// Busy (an actor that did not answer in time).
    Unavailable => ("ServiceUnavailable", 503),
    /// The store cannot write now (the cause is logged, not shown).
    StorageUnavailable => ("ServiceUnavailable", 503),
    /// A failure of ours (the cause is logged, not shown).
    Internal => ("InternalServerError", 500),
    OAuthInvalidRequest => ("invalid_request", 400),
    OAuthInvalidClient => ("invalid_client", 401),
    OAuthInvalidGrant => ("invalid_grant", 400),
    OAuthUnauthorizedClient => ("unauthorized_client", 400),
    OAuthUnsupportedGrantType => ("unsupported_grant_type", 400),
    OAuthInvalidScope => ("invalid_scope", 400),
    OAuthUnsupportedTokenType => ("unsupported_token_type", 400),
    OAuthAccessDenied => ("access_denied", 400),
    OAuthInvalidSub => ("invalid_sub", 400),
}

/// A use case's refusal as the HTTP error it is: the code's name and status from the
/// table, invalid fields as a 422 located in the body.
impl From<AppError> for ApiError {
    fn from(e: AppError) -> Self {
        match e {
            AppError::Limited(d) => ApiError::RateLimited(d),
            AppError::Invalid(items) => ApiError::Validation(
                items
                    .into_iter()
                    .map(|i| {
                        let mut loc = vec![Value::from("body")];
                        loc.extend(i.path.into_iter().map(|s| match s {
                            Step::Field(f) => Value::from(f),
                            Step::Index(n) => Value::from(n),
                        }));
                        let field = FieldError::new(i.kind, loc, i.msg, i.input.0);
                        if i.ctx.is_empty() {
                            field
                        } else {
                            field.with_ctx(Value::Object(
                                i.ctx
                                    .into_iter()
                                    .map(|(name, value)| (name.to_string(), value.0))
                                    .collect(),
                            ))
                        }
                    })
                    .collect(),
            ),
            AppError::Refused {
                code,
                detail,
                reason,
            } => {
                let e = match code {
                    Code::Unauthorized => ApiError::Unauthorized,
                    Code::NotPermitted => ApiError::NotPermitted(detail),
                    Code::NotFound => ApiError::NotFound(detail),
                    Code::PaymentError => ApiError::PaymentError(detail),
                    Code::BadRequest => ApiError::BadRequest(detail),
                    Code::RotateNotPermitted => ApiError::RotateNotPermitted(detail),
                    Code::RefundedAlready => ApiError::RefundedAlready(detail),
                    Code::RevokeSubscriptionBenefitsProhibited => {
                        ApiError::RevokeSubscriptionBenefitsProhibited(detail)
                    }
                    Code::AlreadyExists => ApiError::Conflict(detail),
                    Code::AmbiguousExternalCustomerId => ApiError::AmbiguousExternalCustomerId,
                    Code::Unavailable => ApiError::Unavailable,
                    Code::StorageUnavailable => ApiError::StorageUnavailable(detail),
                    Code::Internal => ApiError::Internal(detail),
                    Code::Invalid => {
                        ApiError::Internal(format!("invalid without fields: {detail}"))
                    }
                    other => ApiError::Named {
                        status: other.status(),
                        error: other.name(),
                        detail,
                    },
                };
                match reason {
                    Some(r) => e.with_code(r),
                    None => e,
                }
            }
        }
    }
}

impl AppError {
    /// What the refusal says to a person, one line per problem (what a page shows next to
    /// a form).
    pub fn messages(self) -> Vec<String> {
        ApiError::from(self).messages()
    }
}

const INVALID_TOKEN: &str =
    "The access token provided is expired, revoked, malformed, or invalid for other reasons.";
const INVALID_SUBJECT: &str = "The subject of this access token is not valid for this endpoint.";
const INSUFFICIENT_SCOPE: &str =
    "The request requires higher privileges than provided by the access token.";

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        let status = match self {
            ApiError::OAuth { status, .. }
            | ApiError::Page { status, .. }
            | ApiError::Named { status, .. } => *status,
            ApiError::Coded { inner, .. } => return inner.status_code(),
            other => other.code().status(),
        };
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST)
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        let mut res = HttpResponse::build(status);
        let body = match self {
            ApiError::Unauthorized => {
                res.insert_header((
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"polar\""),
                ));
                ErrorBody::new("Unauthorized", "Unauthorized")
            }
            ApiError::Bearer(b) => {
                let (code, description, extra) = match b {
                    BearerError::InvalidToken => ("invalid_token", INVALID_TOKEN, String::new()),
                    BearerError::InvalidSubject { allowed } => (
                        "invalid_token",
                        INVALID_SUBJECT,
                        format!(", allowed_subjects=\"{allowed}\""),
                    ),
                    BearerError::InsufficientScope { required } => (
                        "insufficient_scope",
                        INSUFFICIENT_SCOPE,
                        format!(", scope=\"{required}\""),
                    ),
                };
                let header = format!(
                    "Bearer realm=\"polar\"{extra}, error=\"{code}\", error_description=\"{description}\""
                );
                if let Ok(v) = HeaderValue::from_str(&header) {
                    res.insert_header((header::WWW_AUTHENTICATE, v));
                }
                ErrorBody {
                    error_description: Some(description.into()),
                    ..ErrorBody::new(code, description)
                }
            }
            ApiError::NotPermitted(m) => ErrorBody::new("NotPermitted", m),
            ApiError::NotFound(m) => ErrorBody::new("ResourceNotFound", m),
            ApiError::NotOpenCheckout { id, status } => ErrorBody::new(
                "NotOpenCheckout",
                format!("Checkout {id} is not open: {status}"),
            ),
            ApiError::PaymentError(m) => ErrorBody::new("PaymentError", m),
            ApiError::BadRequest(m) => ErrorBody::new("BadRequest", m),
            ApiError::RotateNotPermitted(m) => ErrorBody::new("RotateNotPermitted", m),
            ApiError::Named { error, detail, .. } => ErrorBody::new(error, detail),
            ApiError::Coded { inner, code } => {
                let mut body = match inner.as_ref() {
                    ApiError::NotPermitted(m) => ErrorBody::new("NotPermitted", m),
                    ApiError::NotFound(m) => ErrorBody::new("ResourceNotFound", m),
                    ApiError::BadRequest(m) => ErrorBody::new("BadRequest", m),
                    ApiError::RotateNotPermitted(m) => ErrorBody::new("RotateNotPermitted", m),
                    ApiError::Named { error, detail, .. } => ErrorBody::new(error, detail),
                    // Other errors carry no code (none is made so).
                    other => return other.error_response(),
                };
                body.code = Some(code);
                body
            }
            ApiError::RefundedAlready(m) => ErrorBody::new("RefundedAlready", m),
            ApiError::RevokeSubscriptionBenefitsProhibited(m) => {
                ErrorBody::new("RevokeSubscriptionBenefitsProhibited", m)
            }
            ApiError::Validation(items) => {
                return res.json(ValidationErrorBody {
                    error: "RequestValidationError".into(),
                    detail: items.clone(),
                });
            }
            ApiError::Conflict(m) => ErrorBody::new("ResourceAlreadyExists", m),
            ApiError::AmbiguousExternalCustomerId => ErrorBody::new(
                "AmbiguousExternalCustomerID",
                "Several customers across your organizations share this external customer ID. \
                 Use an organization-scoped token, the Polar customer ID, or a unique external \
                 ID to disambiguate.",
            ),
            ApiError::PayloadTooLarge { limit } => ErrorBody::new(
                "PayloadTooLarge",
                format!("The request body is larger than the limit of {limit} bytes."),
            ),
            ApiError::MethodNotAllowed => ErrorBody::new("MethodNotAllowed", "Method Not Allowed"),
            ApiError::TooManyRequests { retry_after_secs } => {
                res.insert_header((header::RETRY_AFTER, retry_after_secs.to_string()));
                ErrorBody::new("TooManyRequests", "Too many requests; retry later.")
            }
            ApiError::RateLimited(denied) => {
                let secs = denied.retry_after_secs;
                res.insert_header((header::RETRY_AFTER, secs.to_string()));
                rate_limit_headers(&mut res, &denied.report);
                ErrorBody::new(
                    "TooManyRequests",
                    format!("Too many requests; retry in {secs} s."),
                )
            }
            ApiError::Unavailable => {
                res.insert_header((header::RETRY_AFTER, "1"));
                ErrorBody::new("ServiceUnavailable", "The service is busy; retry shortly.")
            }
            ApiError::StorageUnavailable(cause) => {
                warn_unavailable(cause);
                res.insert_header((header::RETRY_AFTER, "5"));
                ErrorBody::new(
                    "ServiceUnavailable",
                    "The service cannot store or read data right now (a storage failure such as \
                     a full disk, or its database unreachable during a switch-over); retry later.",
                )
            }
            ApiError::Internal(cause) => {
                tracing::error!(%cause, "internal error");
                ErrorBody::new("InternalServerError", "An internal error occurred.")
            }
            ApiError::OAuth {
                error, description, ..
            } => {
                res.insert_header((header::CACHE_CONTROL, "no-store"));
                res.insert_header((header::PRAGMA, "no-cache"));
                if *error == "invalid_client" {
                    res.insert_header((
                        header::WWW_AUTHENTICATE,
                        HeaderValue::from_static("Basic realm=\"polar\""),
                    ));
                }
                return res.json(OAuthErrorBody {
                    error,
                    error_description: description.as_deref(),
                });
            }
            ApiError::Page { html, .. } => {
                page_headers(&mut res);
                return res
                    .content_type("text/html; charset=utf-8")
                    .body(html.clone());
            }
        };
        res.json(body)
    }
}

impl From<crate::limits::Denied> for ApiError {
    fn from(d: crate::limits::Denied) -> Self {
        ApiError::RateLimited(Box::new(d))
    }
}

/// `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers-10) for the
/// policies that applied to a request, on a 429 or a successful answer.
pub fn rate_limit_headers(
    res: &mut actix_web::HttpResponseBuilder,
    report: &crate::limits::Report,
) {
    if report.is_empty() {
        return;
    }
    if let Ok(v) = HeaderValue::from_str(&report.policy_header()) {
        res.insert_header(("ratelimit-policy", v));
    }
    if let Ok(v) = HeaderValue::from_str(&report.state_header()) {
        res.insert_header(("ratelimit", v));
    }
}

/// The same fields added to a response already built.
pub fn add_rate_limit_headers(res: &mut HttpResponse, report: &crate::limits::Report) {
    if report.is_empty() {
        return;
    }
    let headers = res.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&report.policy_header()) {
        headers.insert(header::HeaderName::from_static("ratelimit-policy"), v);
    }
    if let Ok(v) = HeaderValue::from_str(&report.state_header()) {
        headers.insert(header::HeaderName::from_static("ratelimit"), v);
    }
}

/// The headers of every HTML page (the sign-in, consent and settings pages and their error
/// pages): never cached, never framed (no clickjacking), no scripts or foreign content.
pub fn page_headers(res: &mut actix_web::HttpResponseBuilder) {
    res.insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; frame-ancestors 'none'",
        ));
}

/// The result of a handler or a use case: its error is an [`ApiError`], which this file
/// alone maps to a status and a body.
pub type ApiResult<T> = Result<T, ApiError>;

/// Logs a request refused because the store is unavailable: the first, then one line per
/// [`UNAVAILABLE_LOG_EVERY_SECS`] with how many were not logged (an outage refuses every
/// request; `/metrics` counts them all).
fn warn_unavailable(cause: &str) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST: AtomicU64 = AtomicU64::new(0);
    static UNLOGGED: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let last = LAST.load(Ordering::Acquire);
    if now >= last.saturating_add(UNAVAILABLE_LOG_EVERY_SECS)
        && LAST
            .compare_exchange(last, now, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    {
        let unlogged = UNLOGGED.swap(0, Ordering::AcqRel);
        tracing::warn!(%cause, unlogged, "storage unavailable");
    } else {
        UNLOGGED.fetch_add(1, Ordering::AcqRel);
    }
}

/// See [`warn_unavailable`].
const UNAVAILABLE_LOG_EVERY_SECS: u64 = 10;
