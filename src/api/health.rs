//! The probes' bodies: `GET /healthz` and `GET /readyz` answer `Health`; a `/readyz` that is
//! not ready answers the `Error` body with 503.

use std::time::Duration;

use serde::Serialize;
use tollgate_storage::DatabaseState;
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

/// What a node on PostgreSQL can do with its database (`/readyz`, `/metrics`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseReadiness {
    /// Connections succeed: everything is served.
    Writable,
    /// No connection can be made, but the license keys this node holds may answer plain
    /// validations from memory for `left` more (`storage.outage_window_secs`).
    ReadOnly {
        down_for: Duration,
        left: Duration,
        reason: String,
    },
    /// No connection can be made, and nothing can be answered without one.
    Down { down_for: Duration, reason: String },
}

impl DatabaseReadiness {
    /// From the store's view of the database and how long the node's copies may still
    /// answer without it.
    pub fn of(state: DatabaseState, outage_left: Option<Duration>) -> Self {
        match (state, outage_left) {
            (DatabaseState::Reachable, _) => Self::Writable,
            (DatabaseState::Unreachable { down_for, reason }, Some(left)) => Self::ReadOnly {
                down_for,
                left,
                reason,
            },
            (DatabaseState::Unreachable { down_for, reason }, None) => {
                Self::Down { down_for, reason }
            }
        }
    }

    /// The label `/metrics` gives it.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Writable => "writable",
            Self::ReadOnly { .. } => "read_only",
            Self::Down { .. } => "down",
        }
    }

    /// The 503 body of `/readyz` while the database cannot be reached (`None`: it can).
    /// Its `code` is `database_read_only` or `database_down`, for a load balancer or a
    /// person to tell them apart.
    pub fn refusal(&self) -> Option<ErrorBody> {
        let (code, detail) = match self {
            Self::Writable => return None,
            Self::ReadOnly {
                down_for,
                left,
                reason,
            } => (
                "database_read_only",
                format!(
                    "Database unreachable for {} s ({reason}): this node is read-only. \
                     Validations of license keys it holds are answered from memory for {} s \
                     more; usage increments, activations and every write answer 503 until a \
                     connection succeeds",
                    down_for.as_secs(),
                    left.as_secs().max(1)
                ),
            ),
            Self::Down { down_for, reason } => (
                "database_down",
                format!(
                    "Database unreachable for {} s ({reason}): everything that needs it \
                     answers 503 (no license key this node holds was proved current within \
                     storage.outage_window_secs)",
                    down_for.as_secs()
                ),
            ),
        };
        let mut body = not_ready(&detail);
        body.code = Some(code);
        Some(body)
    }
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
    fn the_database_is_writable_read_only_or_down() {
        let down = |s| DatabaseState::Unreachable {
            down_for: Duration::from_secs(s),
            reason: "connection refused".into(),
        };
        let writable = DatabaseReadiness::of(DatabaseState::Reachable, None);
        assert_eq!(writable, DatabaseReadiness::Writable);
        assert_eq!(writable.label(), "writable");
        assert!(writable.refusal().is_none());
        let read_only = DatabaseReadiness::of(down(3), Some(Duration::from_secs(57)));
        assert_eq!(read_only.label(), "read_only");
        let body = serde_json::to_value(read_only.refusal().unwrap()).unwrap();
        assert_eq!(body["error"], "ServiceUnavailable");
        assert_eq!(body["code"], "database_read_only");
        let detail = body["detail"].as_str().unwrap();
        assert!(detail.contains("for 3 s (connection refused)"), "{detail}");
        assert!(detail.contains("for 57 s more"), "{detail}");
        let gone = DatabaseReadiness::of(down(90), None);
        assert_eq!(gone.label(), "down");
        let body = serde_json::to_value(gone.refusal().unwrap()).unwrap();
        assert_eq!(body["code"], "database_down");
        assert!(body["detail"].as_str().unwrap().contains("90 s"));
    }

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
