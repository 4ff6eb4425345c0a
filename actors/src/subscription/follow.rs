//! The outbox of a paid period: [`KeysPaidUntil`], written with the renewal that paid it,
//! tells the subscription's license keys how long they are now paid for. The keys are
//! changed through their own actors by the caller (the renewal sweep), which then deletes
//! the record; a crash in between leaves it for the next sweep. One record per
//! subscription: a later paid period overwrites it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::Record;

use crate::domain::ids::{LicenseKeyId, SubscriptionId};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeysPaidUntil {
    pub subscription_id: SubscriptionId,
    /// The end of the period the subscription has now paid for.
    pub paid_until: DateTime<Utc>,
    pub keys: Vec<LicenseKeyId>,
    pub created_at: DateTime<Utc>,
}

impl Record for KeysPaidUntil {
    crate::record_v1!(KeysPaidUntil, "subscription_keys_paid_until");

    fn id_key(&self) -> Vec<u8> {
        self.subscription_id.key()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::{at, hex, uuid};

    /// The subscription id, `paid_until`, one key, `created_at`.
    const GOLDEN_V1: &str = "\
        100000000000000000000000000000000114313937302d30312d30325430303a30303a30305a0110\
        0000000000000000000000000000000214313937302d30312d30315430303a30313a30305a";

    #[test]
    fn round_trip_and_golden_bytes() {
        let r = KeysPaidUntil {
            subscription_id: SubscriptionId(uuid(1)),
            paid_until: at(86_400),
            keys: vec![LicenseKeyId(uuid(2))],
            created_at: at(60),
        };
        let bytes = r.encode().unwrap_or_default();
        assert_eq!(KeysPaidUntil::decode(1, &bytes).ok(), Some(r.clone()));
        assert_eq!(r.id_key(), SubscriptionId(uuid(1)).key());
        assert_eq!(hex(&bytes), GOLDEN_V1, "format v1 changed");
    }
}
