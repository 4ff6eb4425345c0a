use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::{Record, UniqueKey};

use super::ids::{CustomerId, CustomerSessionId, OrganizationId};

/// A `polar_cst_` token: lets a buyer use the customer portal for one hour, after a
/// checkout or when the seller opens a session for them (`POST /v1/customer-sessions/`).
/// Only the token's keyed hash is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomerSession {
    pub id: CustomerSessionId,
    pub customer_id: CustomerId,
    pub organization_id: OrganizationId,
    pub token_hash: Vec<u8>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

pub const CUSTOMER_SESSION_TOKEN: &str = "customer_session_token";

impl CustomerSession {
    /// How long a session's token works (Polar's `CUSTOMER_SESSION_TTL`).
    pub const TTL: Duration = Duration::hours(1);

    /// A session of `customer` opened `now`, for the token whose keyed hash is
    /// `token_hash`, until [`CustomerSession::TTL`] later.
    pub fn open(
        customer_id: CustomerId,
        organization_id: OrganizationId,
        token_hash: Vec<u8>,
        now: DateTime<Utc>,
    ) -> CustomerSession {
        CustomerSession {
            id: CustomerSessionId::new(),
            customer_id,
            organization_id,
            token_hash,
            created_at: now,
            expires_at: now + Self::TTL,
        }
    }

    pub fn token_key(hash: &[u8]) -> UniqueKey {
        UniqueKey::new(CUSTOMER_SESSION_TOKEN, Vec::new(), hash.to_vec())
    }
}

impl Record for CustomerSession {
    crate::record_v1!(CustomerSession, "customer_session");
    const UNIQUES: &'static [&'static str] = &[CUSTOMER_SESSION_TOKEN];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![CustomerSession::token_key(&self.token_hash)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn a_session_lasts_an_hour_and_is_found_by_its_hash() {
        let now = Utc.timestamp_opt(1_000, 0).single().unwrap_or_default();
        let s = CustomerSession::open(CustomerId::new(), OrganizationId::new(), vec![7; 32], now);
        assert_eq!(s.created_at, now);
        assert_eq!(s.expires_at - now, Duration::hours(1));
        assert_eq!(s.unique_keys(), vec![CustomerSession::token_key(&[7; 32])]);
    }
}
