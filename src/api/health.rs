//! The probes' bodies: `GET /healthz` and `GET /readyz` answer `Health`; a `/readyz` that is
//! not ready answers the `Error` body with 503.

use serde::Serialize;
use utoipa::ToSchema;

use crate::error::ErrorBody;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    /// `/healthz`: the process is up.
    Ok,
    /// `/readyz`: the service takes requests.
    Ready,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Health {
    #[schema(inline)]
    pub status: HealthStatus,
}

impl Health {
    pub fn ok() -> Self {
        Self {
            status: HealthStatus::Ok,
        }
    }

    pub fn ready() -> Self {
        Self {
            status: HealthStatus::Ready,
        }
    }
}

/// The 503 body of a `/readyz` that is not ready.
pub fn not_ready(detail: &str) -> ErrorBody {
    ErrorBody::new("ServiceUnavailable", detail)
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    let to_value = |v: Result<serde_json::Value, serde_json::Error>| v.unwrap_or_default();
    vec![
        ("Health", to_value(serde_json::to_value(Health::ok()))),
        ("Health", to_value(serde_json::to_value(Health::ready()))),
        (
            "Error",
            to_value(serde_json::to_value(not_ready("Starting up"))),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_todays() {
        let v = |h: Health| serde_json::to_value(h).unwrap();
        assert_eq!(v(Health::ok()), serde_json::json!({"status": "ok"}));
        assert_eq!(v(Health::ready()), serde_json::json!({"status": "ready"}));
        assert_eq!(
            serde_json::to_value(not_ready("Starting up")).unwrap(),
            serde_json::json!({"error": "ServiceUnavailable", "detail": "Starting up"})
        );
    }
}
