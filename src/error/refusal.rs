//! What the use cases of `crate::app` answer when they refuse: an [`AppError`], a stable
//! [`Code`] with a message, or the fields of a command that break a rule ([`Invalid`]).
//! Nothing here knows HTTP: the adapters turn an `AppError` into an `ApiError`
//! (`From<AppError> for ApiError` in `crate::error`), which the code table maps to a status
//! and a name.

use serde::Serialize;
use serde_json::Value;
use tollgate_storage::{StorageError, UpdateError};

use super::Code;

/// One step of the path to a field of a command: a field name or a list index, as the wire
/// names them (`["prices", 0, "price_amount"]`). The adapter puts the command's place in the
/// request (`body`) in front.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Field(String),
    Index(usize),
}

impl From<&str> for Step {
    fn from(s: &str) -> Self {
        Step::Field(s.to_string())
    }
}

impl From<String> for Step {
    fn from(s: String) -> Self {
        Step::Field(s)
    }
}

impl From<&String> for Step {
    fn from(s: &String) -> Self {
        Step::Field(s.clone())
    }
}

impl From<usize> for Step {
    fn from(i: usize) -> Self {
        Step::Index(i)
    }
}

/// The path to a field of a command: `field!["prices", i, "price_amount"]`.
#[macro_export]
macro_rules! field {
    ($($part:expr),* $(,)?) => {
        vec![$($crate::error::Step::from($part)),*]
    };
}

/// The value a caller gave for a field, as the refusal reports it back (pydantic's `input`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Given(pub(super) Value);

impl Given {
    /// No value (the field was missing or is reported without its value).
    pub fn none() -> Self {
        Given(Value::Null)
    }

    /// Any serializable value, as it reads on the wire.
    pub fn of(v: &impl Serialize) -> Self {
        Given(serde_json::to_value(v).unwrap_or(Value::Null))
    }
}

macro_rules! given_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Given {
            fn from(v: $t) -> Self {
                Given(Value::from(v))
            }
        }
    )*};
}
given_from!(&str, String, i64, i32, u32, u64, bool, f64);

impl From<&String> for Given {
    fn from(v: &String) -> Self {
        Given(Value::from(v.as_str()))
    }
}

impl From<uuid::Uuid> for Given {
    fn from(v: uuid::Uuid) -> Self {
        Given(Value::from(v.to_string()))
    }
}

impl<T: Into<Given>> From<Option<T>> for Given {
    fn from(v: Option<T>) -> Self {
        v.map(Into::into).unwrap_or_default()
    }
}

/// One field of a command that breaks a rule: pydantic's error type (`value_error`,
/// `greater_than`, …), where, a message, the value given and the rule's parameter if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    pub kind: &'static str,
    pub path: Vec<Step>,
    pub msg: String,
    pub input: Given,
    /// The rule's parameters (pydantic's `ctx`), in order: `("gt", 0)`,
    /// `("expected", "'a' or 'b'")`; none for most rules.
    pub ctx: Vec<(&'static str, Given)>,
}

impl Invalid {
    /// A `value_error` on one field.
    pub fn new(path: Vec<Step>, msg: impl Into<String>, input: impl Into<Given>) -> Self {
        Invalid {
            kind: "value_error",
            path,
            msg: msg.into(),
            input: input.into(),
            ctx: Vec::new(),
        }
    }

    /// Another error type than `value_error`.
    pub fn kind(mut self, kind: &'static str) -> Self {
        self.kind = kind;
        self
    }

    /// Adds a parameter of the rule (several make one `ctx` object, in this order).
    pub fn with_ctx(mut self, name: &'static str, value: impl Into<Given>) -> Self {
        self.ctx.push((name, value.into()));
        self
    }
}

/// The refusal of a use case.
#[derive(Debug)]
pub enum AppError {
    /// Refused for a reason named by `code`; `detail` is the message for the caller
    /// (logged and not shown for `Internal` and `StorageUnavailable`). `reason` is the
    /// license-key refusal's machine-readable `code` (`revoked`, `expired`, …), if any.
    Refused {
        code: Code,
        detail: String,
        reason: Option<&'static str>,
    },
    /// Fields of the command that break a rule (every one found).
    Invalid(Vec<Invalid>),
    /// Over a rate limit (`Code::TooManyRequests`): the policies that applied and when to
    /// try again, which the adapter answers as `Retry-After` and the rate-limit fields.
    Limited(Box<crate::limits::Denied>),
}

impl AppError {
    pub fn new(code: Code, detail: impl Into<String>) -> Self {
        AppError::Refused {
            code,
            detail: detail.into(),
            reason: None,
        }
    }

    /// The code the refusal carries (`Code::Invalid` for invalid fields).
    pub fn code(&self) -> Code {
        match self {
            AppError::Refused { code, .. } => *code,
            AppError::Invalid(_) => Code::Invalid,
            AppError::Limited(_) => Code::TooManyRequests,
        }
    }

    /// The message of a refusal (empty for invalid fields).
    pub fn detail(&self) -> &str {
        match self {
            AppError::Refused { detail, .. } => detail,
            AppError::Limited(_) => "Too many requests; retry later.",
            AppError::Invalid(_) => "",
        }
    }

    /// The license-key refusal reason, if any.
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            AppError::Refused { reason, .. } => *reason,
            AppError::Invalid(_) | AppError::Limited(_) => None,
        }
    }

    /// This refusal with a machine-readable reason (license-key refusals).
    pub fn with_reason(self, why: &'static str) -> Self {
        match self {
            AppError::Refused { code, detail, .. } => AppError::Refused {
                code,
                detail,
                reason: Some(why),
            },
            other => other,
        }
    }

    pub fn not_found() -> Self {
        AppError::new(Code::NotFound, "Not found")
    }

    pub fn not_permitted(detail: impl Into<String>) -> Self {
        AppError::new(Code::NotPermitted, detail)
    }

    pub fn bad_request(detail: impl Into<String>) -> Self {
        AppError::new(Code::BadRequest, detail)
    }

    pub fn conflict(detail: impl Into<String>) -> Self {
        AppError::new(Code::AlreadyExists, detail)
    }

    /// Polar's 403 `NotOpenCheckout` for the checkout `id` in `status`.
    pub fn not_open_checkout(id: impl std::fmt::Display, status: &str) -> Self {
        AppError::new(
            Code::NotOpenCheckout,
            format!("Checkout {id} is not open: {status}"),
        )
    }

    /// An external customer id several customers of the caller's organizations hold.
    pub fn ambiguous_external_customer_id() -> Self {
        AppError::new(
            Code::AmbiguousExternalCustomerId,
            "Several customers across your organizations share this external customer ID. \
             Use an organization-scoped token, the Polar customer ID, or a unique external \
             ID to disambiguate.",
        )
    }

    /// An actor or a pool did not answer in time: try again shortly.
    pub fn unavailable() -> Self {
        AppError::new(Code::Unavailable, "The service is busy; retry shortly.")
    }

    /// A failure of ours; `cause` is logged, never shown.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        AppError::new(Code::Internal, cause.to_string())
    }

    /// A `value_error` on one field of the command.
    pub fn invalid(path: Vec<Step>, msg: impl Into<String>, input: impl Into<Given>) -> Self {
        AppError::Invalid(vec![Invalid::new(path, msg, input)])
    }

    /// Whether the service could not answer (busy, storage, a failure of ours), rather than
    /// refusing.
    pub fn is_failure(&self) -> bool {
        matches!(
            self.code(),
            Code::Unavailable | Code::StorageUnavailable | Code::Internal
        )
    }
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AppError::Refused { code, detail, .. } => write!(f, "{}: {detail}", code.name()),
            AppError::Limited(d) => write!(f, "TooManyRequests: retry in {} s", d.retry_after_secs),
            AppError::Invalid(items) => {
                write!(f, "invalid:")?;
                for i in items {
                    write!(f, " {:?} {};", i.path, i.msg)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for AppError {}

impl From<crate::limits::Denied> for AppError {
    fn from(d: crate::limits::Denied) -> Self {
        AppError::Limited(Box::new(d))
    }
}

impl From<Invalid> for AppError {
    fn from(i: Invalid) -> Self {
        AppError::Invalid(vec![i])
    }
}

impl From<Vec<Invalid>> for AppError {
    fn from(items: Vec<Invalid>) -> Self {
        AppError::Invalid(items)
    }
}

impl From<StorageError> for AppError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::Conflict { .. } => {
                AppError::conflict("The resource was modified concurrently; retry the request.")
            }
            // A full disk, a read-only file system, a flush that did not finish in time:
            // the request may succeed later (and /readyz says when).
            StorageError::Io(_) | StorageError::Unavailable(_) | StorageError::Closed => {
                AppError::new(Code::StorageUnavailable, e.to_string())
            }
            other => AppError::internal(other),
        }
    }
}

/// A compare-and-swap change ([`tollgate_storage::Store::update`]): the decision's own
/// refusal as it is, the store's failure as any other.
impl From<UpdateError<AppError>> for AppError {
    fn from(e: UpdateError<AppError>) -> Self {
        match e {
            UpdateError::Rejected(e) => e,
            UpdateError::Storage(e) => e.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_rides_on_a_refusal_only() {
        let e = AppError::not_found().with_reason("revoked");
        assert_eq!(e.code(), Code::NotFound);
        assert_eq!(e.reason(), Some("revoked"));
        let e = AppError::invalid(crate::field!["x"], "bad", 3).with_reason("revoked");
        assert_eq!(e.reason(), None);
        assert_eq!(e.code(), Code::Invalid);
    }

    #[test]
    fn storage_failures_keep_their_kind() {
        let e: AppError = StorageError::Closed.into();
        assert_eq!(e.code(), Code::StorageUnavailable);
        assert!(e.is_failure());
        let e: AppError = StorageError::Conflict {
            collection: "x",
            expected: "1".into(),
            found: None,
        }
        .into();
        assert_eq!(e.code(), Code::AlreadyExists);
        assert!(!e.is_failure());
    }

    #[test]
    fn refusals_become_the_table_s_status_and_name() {
        use actix_web::ResponseError;
        let e = crate::error::ApiError::from(AppError::new(Code::TrialAlreadyRedeemed, "no"));
        assert_eq!(e.status_code().as_u16(), 403);
        assert!(matches!(
            e,
            crate::error::ApiError::Named {
                error: "TrialAlreadyRedeemed",
                ..
            }
        ));
        for code in Code::ALL {
            let e = crate::error::ApiError::from(AppError::new(*code, "x"));
            if !matches!(code, Code::Invalid) {
                assert_eq!(e.code().status(), code.status(), "{code:?}");
            }
        }
        let e = crate::error::ApiError::from(AppError::not_found().with_reason("revoked"));
        assert!(matches!(
            e,
            crate::error::ApiError::Coded {
                code: "revoked",
                ..
            }
        ));
    }

    #[test]
    fn invalid_fields_are_located_in_the_body() {
        let e = AppError::from(
            Invalid::new(
                crate::field!["prices", 0_usize, "price_amount"],
                "too low",
                0,
            )
            .kind("greater_than")
            .with_ctx("gt", 0),
        );
        let crate::error::ApiError::Validation(items) = crate::error::ApiError::from(e) else {
            panic!("not a 422");
        };
        assert_eq!(
            serde_json::to_value(&items[0]).unwrap(),
            serde_json::json!({"type": "greater_than", "loc": ["body", "prices", 0, "price_amount"],
                "msg": "too low", "input": 0, "ctx": {"gt": 0}})
        );
    }

    #[test]
    fn a_rule_with_several_parameters_reports_them_all() {
        let e = AppError::from(
            Invalid::new(crate::field!["metadata"], "too many", 51)
                .kind("too_long")
                .with_ctx("field_type", "Dictionary")
                .with_ctx("max_length", 50)
                .with_ctx("actual_length", 51),
        );
        let crate::error::ApiError::Validation(items) = crate::error::ApiError::from(e) else {
            panic!("not a 422");
        };
        assert_eq!(
            serde_json::to_value(&items[0]).unwrap()["ctx"],
            serde_json::json!({"field_type": "Dictionary", "max_length": 50, "actual_length": 51})
        );
    }

    #[test]
    fn given_values_read_as_on_the_wire() {
        assert_eq!(Given::from("a").0, Value::from("a"));
        assert_eq!(Given::from(None::<i64>).0, Value::Null);
        assert_eq!(Given::from(Some(5_i64)).0, Value::from(5));
        assert_eq!(Given::of(&vec![1, 2]).0, serde_json::json!([1, 2]));
    }
}
