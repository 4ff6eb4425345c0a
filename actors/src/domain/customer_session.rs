use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::{Record, UniqueKey};

use super::ids::{CustomerId, CustomerSessionId, OrganizationId};

/// A `polar_cst_` token: lets a buyer use the customer portal for one hour after a checkout.
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
