//! Organization access tokens in Polar's shapes
//! (`server/polar/organization_access_token/schemas.py`): the create and update bodies,
//! `OrganizationAccessToken` and the create answer with the token (shown once), and the
//! reading of `expires_in` as Polar's pydantic `timedelta`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::domain::ids::OrganizationId;
use crate::domain::organization_access_token::{
    NewOrganizationAccessToken, OrganizationAccessToken, OrganizationAccessTokenChange,
};
use crate::domain::scope::{Scope, ScopeSet};
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::validate::Validator;

/// Creates a token of one organization (required unless the request names it with
/// `Polar-Organization`).
#[derive(Debug, Deserialize, ToSchema)]
pub struct OrganizationAccessTokenCreate {
    pub organization_id: Option<Uuid>,
    pub comment: String,
    /// The token's lifetime, as Polar's `timedelta`: an ISO 8601 duration (`P30D`,
    /// `PT12H`), `[D days, ]HH:MM:SS`, or a number of seconds; from 1 second to ten years.
    /// None: the token does not expire.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = Duration, example = "P30D")]
    pub expires_in: Option<Value>,
    /// Scopes a personal access token may hold, within the caller's own, except
    /// `organization_access_tokens:*`.
    pub scopes: Vec<String>,
}

/// Changes a token's comment or scopes; a key left out (or `null`) is unchanged.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct OrganizationAccessTokenUpdate {
    pub comment: Option<String>,
    pub scopes: Option<Vec<String>>,
}

/// A token, without its secret.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = OrganizationAccessToken)]
pub struct OrganizationAccessTokenView {
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub id: Uuid,
    pub scopes: Vec<String>,
    pub expires_at: Option<DateTime<Utc>>,
    pub comment: String,
    /// When it was last used (to the minute).
    pub last_used_at: Option<DateTime<Utc>>,
    pub organization_id: Uuid,
}

impl From<&OrganizationAccessToken> for OrganizationAccessTokenView {
    fn from(t: &OrganizationAccessToken) -> Self {
        Self {
            created_at: t.created_at,
            modified_at: t.modified_at,
            id: t.id.uuid(),
            scopes: t.scopes.iter().map(|s| s.as_str().to_string()).collect(),
            expires_at: t.expires_at,
            comment: t.comment.clone(),
            last_used_at: t.last_used_at,
            organization_id: t.organization_id.0,
        }
    }
}

/// The new token: `token` (`polar_oat_…`) is shown this once.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OrganizationAccessTokenCreateResponse {
    pub organization_access_token: OrganizationAccessTokenView,
    pub token: String,
}

impl OrganizationAccessTokenCreateResponse {
    pub fn new(t: &OrganizationAccessToken, token: String) -> Self {
        Self {
            organization_access_token: t.into(),
            token,
        }
    }
}

/// Why an `expires_in` is not a duration: pydantic's error type and message.
#[derive(Debug, Clone, PartialEq)]
pub struct NotADuration {
    pub kind: &'static str,
    pub msg: String,
}

/// Seconds in a year and a month of an ISO 8601 duration, as pydantic counts them.
const YEAR_SECS: f64 = 365.0 * 86_400.0;
const MONTH_SECS: f64 = 30.0 * 86_400.0;

/// `expires_in` in seconds, read as pydantic reads a `timedelta`: a JSON number of seconds,
/// or a string that is an ISO 8601 duration (`P1Y2M3W4DT5H6M7.5S`, signed; a year is 365
/// days and a month 30) or `[-][D day[s][,] ]HH:MM:SS[.ffffff]` (`1d,01:02:03` too).
pub fn duration_seconds(v: &Value) -> Result<f64, NotADuration> {
    let parsing = |why: &str| NotADuration {
        kind: "time_delta_parsing",
        msg: format!("Input should be a valid timedelta, {why}"),
    };
    match v {
        Value::Number(n) => n.as_f64().ok_or_else(|| parsing("invalid number")),
        Value::String(s) => {
            let (negative, rest) = match s.as_bytes().first() {
                Some(b'-') => (true, &s[1..]),
                Some(b'+') => (false, &s[1..]),
                _ => (false, s.as_str()),
            };
            let secs = match rest.strip_prefix('P') {
                Some(iso) => iso_8601(iso).map_err(parsing)?,
                None => clock(rest).map_err(parsing)?,
            };
            Ok(if negative { -secs } else { secs })
        }
        _ => Err(NotADuration {
            kind: "time_delta_type",
            msg: "Input should be a valid timedelta".into(),
        }),
    }
}

/// The part of an ISO 8601 duration after `P`.
fn iso_8601(s: &str) -> Result<f64, &'static str> {
    if s.is_empty() {
        return Err("input is too short");
    }
    let mut total = 0.0;
    let mut in_time = false;
    let mut number = String::new();
    for c in s.chars() {
        match c {
            '0'..='9' | '.' => number.push(c),
            ',' => number.push('.'),
            'T' if !in_time && number.is_empty() => in_time = true,
            _ => {
                let unit = match (in_time, c) {
                    (false, 'Y') => YEAR_SECS,
                    (false, 'M') => MONTH_SECS,
                    (false, 'W') => 7.0 * 86_400.0,
                    (false, 'D') => 86_400.0,
                    (true, 'H') => 3_600.0,
                    (true, 'M') => 60.0,
                    (true, 'S') => 1.0,
                    _ => return Err("invalid character in duration"),
                };
                let n: f64 = number.parse().map_err(|_| "invalid digit in duration")?;
                total += n * unit;
                number.clear();
            }
        }
    }
    if !number.is_empty() {
        return Err("expected a unit after a number in duration");
    }
    Ok(total)
}

/// `[D day[s][,] ]HH:MM:SS[.ffffff]`, or `Dd[,]HH:MM:SS`.
fn clock(s: &str) -> Result<f64, &'static str> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let (days, time) = match s[digits..].trim_start().strip_prefix(['d', 'D']) {
        Some(after) if digits > 0 => {
            let days: f64 = s[..digits].parse().map_err(|_| "invalid day")?;
            let after = after
                .strip_prefix("ays")
                .or_else(|| after.strip_prefix("ay"))
                .unwrap_or(after);
            let after = after.trim_start();
            (days, after.strip_prefix(',').unwrap_or(after).trim_start())
        }
        _ => (0.0, s),
    };
    let mut parts = time.split(':');
    let (Some(h), Some(m), Some(sec), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("expected a duration as HH:MM:SS or an ISO 8601 duration");
    };
    let whole = |p: &str, max: u32| -> Result<f64, &'static str> {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err("invalid character in time");
        }
        match p.parse::<u32>() {
            Ok(n) if n < max => Ok(f64::from(n)),
            _ => Err("time value out of range"),
        }
    };
    let (sec_whole, fraction) = sec.split_once('.').unwrap_or((sec, ""));
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return Err("invalid character in second fraction");
    }
    let fraction: f64 = if fraction.is_empty() {
        0.0
    } else {
        format!("0.{fraction}").parse().unwrap_or(0.0)
    };
    Ok(days * 86_400.0
        + whole(h, u32::MAX)? * 3_600.0
        + whole(m, 60)? * 60.0
        + whole(sec_whole, 60)?
        + fraction)
}

/// The longest lifetime a token may be given: ten years, as personal access tokens.
const MAX_EXPIRES_IN_SECS: f64 = 3650.0 * 86_400.0;

/// The scopes a body names: each one a token may hold (not reserved, not
/// `organization_access_tokens:*`), else a 422 at its index.
fn parse_scopes(v: &mut Validator, names: &[String]) -> ScopeSet {
    let mut set = ScopeSet::empty();
    for (i, name) in names.iter().enumerate() {
        match Scope::parse(name) {
            Some(s) if s.manages_organization_tokens() => v.push(FieldError::new(
                "value_error",
                loc!["body", "scopes", i],
                "Organization access tokens cannot hold this scope.",
                Value::from(name.as_str()),
            )),
            Some(s) if !s.is_reserved() => set.insert(s),
            _ => v.push(FieldError::new(
                "value_error",
                loc!["body", "scopes", i],
                "Input should be a supported scope",
                Value::from(name.as_str()),
            )),
        }
    }
    set
}

/// Polar's rule: a token holds no scope its creator lacks.
fn within_caller(v: &mut Validator, requested: ScopeSet, caller: ScopeSet) {
    let excess: Vec<Value> = requested
        .iter()
        .filter(|s| !caller.contains(*s))
        .map(|s| Value::from(s.as_str()))
        .collect();
    if !excess.is_empty() {
        v.push(FieldError::new(
            "value_error",
            loc!["body", "scopes"],
            "Requested scopes exceed the caller's own scopes.",
            Value::Array(excess),
        ));
    }
}

/// A token's lifetime: 1 second to ten years.
fn lifetime(v: &mut Validator, input: &Value) -> Option<chrono::TimeDelta> {
    let at = loc!["body", "expires_in"];
    let secs = match duration_seconds(input) {
        Ok(secs) => secs,
        Err(e) => {
            v.push(FieldError::new(e.kind, at, e.msg, input.clone()));
            return None;
        }
    };
    let refuse = |v: &mut Validator, msg: &str| {
        v.push(FieldError::new(
            "value_error",
            at.clone(),
            msg,
            input.clone(),
        ));
        None
    };
    if secs.is_nan() || secs < 1.0 {
        return refuse(v, "Input should be at least 1 second");
    }
    if secs > MAX_EXPIRES_IN_SECS {
        return refuse(v, "Input should be at most 3650 days");
    }
    // Within ten years: the microseconds fit an i64.
    Some(chrono::TimeDelta::microseconds((secs * 1e6).round() as i64))
}

impl OrganizationAccessTokenCreate {
    /// The command this body asks for of a caller holding `caller`'s scopes, or a 422
    /// naming every field that breaks a rule.
    pub fn into_command(self, caller: ScopeSet) -> Result<NewOrganizationAccessToken, ApiError> {
        let mut v = Validator::new();
        let scopes = parse_scopes(&mut v, &self.scopes);
        within_caller(&mut v, scopes, caller);
        let expires_in = match &self.expires_in {
            None | Some(Value::Null) => None,
            Some(given) => lifetime(&mut v, given),
        };
        v.finish()?;
        Ok(NewOrganizationAccessToken {
            organization_id: self.organization_id.map(OrganizationId),
            comment: self.comment,
            scopes,
            expires_in,
        })
    }
}

impl OrganizationAccessTokenUpdate {
    /// The command this body asks for of a caller holding `caller`'s scopes, or a 422.
    pub fn into_command(self, caller: ScopeSet) -> Result<OrganizationAccessTokenChange, ApiError> {
        let mut v = Validator::new();
        let scopes = self.scopes.as_deref().map(|names| {
            let set = parse_scopes(&mut v, names);
            within_caller(&mut v, set, caller);
            set
        });
        v.finish()?;
        Ok(OrganizationAccessTokenChange {
            comment: self.comment,
            scopes,
        })
    }
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    use chrono::TimeZone;

    use crate::auth::{Scope, ScopeSet};
    use crate::domain::ids::OrganizationId;
    use crate::domain::organization_access_token::OrganizationAccessTokenId;

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let fresh = OrganizationAccessToken {
        id: OrganizationAccessTokenId(Uuid::from_u128(0x0a7_0001)),
        organization_id: OrganizationId(Uuid::from_u128(0x0a7_1000)),
        token_hash: vec![1; 32],
        scopes: [Scope::ProductsRead, Scope::LicenseKeysWrite]
            .into_iter()
            .collect(),
        comment: "Server".into(),
        expires_at: None,
        last_used_at: None,
        created_at: now,
        modified_at: None,
        deleted_at: None,
    };
    let used = OrganizationAccessToken {
        id: OrganizationAccessTokenId(Uuid::from_u128(0x0a7_0002)),
        scopes: ScopeSet::empty(),
        expires_at: Some(now + chrono::Duration::days(30)),
        last_used_at: Some(now),
        modified_at: Some(now),
        ..fresh.clone()
    };
    let to_value = |v: Result<Value, serde_json::Error>| v.unwrap_or_default();
    vec![
        (
            "OrganizationAccessToken",
            to_value(serde_json::to_value(OrganizationAccessTokenView::from(
                &used,
            ))),
        ),
        (
            "OrganizationAccessTokenCreateResponse",
            to_value(serde_json::to_value(
                OrganizationAccessTokenCreateResponse::new(&fresh, "polar_oat_sample".into()),
            )),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn secs(v: Value) -> Result<f64, NotADuration> {
        duration_seconds(&v)
    }

    #[test]
    fn durations_read_as_pydantic_reads_them() {
        let ok = [
            (json!(3600), 3600.0),
            (json!(3600.5), 3600.5),
            (json!("P30D"), 30.0 * 86_400.0),
            (json!("PT1H"), 3600.0),
            (json!("P1W"), 7.0 * 86_400.0),
            (json!("P1Y"), 365.0 * 86_400.0),
            (json!("P1M"), 30.0 * 86_400.0),
            (json!("P1Y2M"), 425.0 * 86_400.0),
            (json!("PT36H"), 36.0 * 3600.0),
            (json!("P1.5D"), 1.5 * 86_400.0),
            (json!("P1DT2H3M4.5S"), 86_400.0 + 7384.5),
            (json!("+P1D"), 86_400.0),
            (json!("-P1D"), -86_400.0),
            (json!("P0D"), 0.0),
            (json!("01:02:03"), 3723.0),
            (json!("1d,01:02:03"), 86_400.0 + 3723.0),
            (json!("1D01:02:03"), 86_400.0 + 3723.0),
            (json!("1 day, 01:02:03"), 86_400.0 + 3723.0),
            (json!("2 days, 0:00:00"), 2.0 * 86_400.0),
            (json!("00:00:01.25"), 1.25),
        ];
        for (input, want) in ok {
            assert_eq!(secs(input.clone()), Ok(want), "{input}");
        }
        for bad in [
            json!(""),
            json!("P"),
            json!("3600"),
            json!("1e3"),
            json!(" P1D"),
            json!("p1d"),
            json!("P1H"),
            json!("PT1D"),
            json!("P1"),
            json!("P1D2"),
            json!("01:60:00"),
            json!("01:02"),
            json!("1:2:3:4"),
            json!("xx:00:00"),
            json!("00:00:01.x"),
            json!("P1.2.3D"),
        ] {
            let e = secs(bad.clone()).expect_err(&bad.to_string());
            assert_eq!(e.kind, "time_delta_parsing", "{bad}");
            assert!(e.msg.starts_with("Input should be a valid timedelta, "));
        }
        for wrong in [json!(true), json!([1]), json!({"days": 1})] {
            assert_eq!(secs(wrong).map_err(|e| e.kind), Err("time_delta_type"));
        }
    }
}
