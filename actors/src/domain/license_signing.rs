//! An organization's ed25519 key pairs for signed license-key answers (RFC 9421) and
//! offline license files. Generated on first use; a rotation puts a new pair first and keeps
//! the old ones (retired) so answers and files signed before still verify against the
//! published JWKS. Only the first, live pair signs.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::Record;

use super::ids::OrganizationId;

/// At most this many pairs are kept: a rotation beyond it forgets the oldest retired one.
pub const MAX_SIGNING_KEYS: usize = 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LicenseSigning {
    pub organization_id: OrganizationId,
    /// Every validate/activate/deactivate answer is signed, asked for or not.
    pub sign_every_answer: bool,
    /// Newest first; the first signs, the others are retired.
    pub keys: Vec<LicenseSigningKey>,
    pub modified_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LicenseSigningKey {
    /// The key's id (`keyid`, JWK `kid`): its RFC 7638 thumbprint.
    pub kid: String,
    /// The ed25519 private key (RFC 8032 seed, 32 bytes).
    pub seed: Vec<u8>,
    /// The ed25519 public key (32 bytes).
    pub public: Vec<u8>,
    pub created_at: DateTime<Utc>,
    /// When a newer pair replaced it; it signs nothing since.
    pub retired_at: Option<DateTime<Utc>>,
}

impl LicenseSigning {
    /// The pair that signs.
    pub fn current(&self) -> Option<&LicenseSigningKey> {
        self.keys.first()
    }

    /// `key` becomes the signing pair at `now`; the previous ones are retired (the oldest
    /// forgotten beyond [`MAX_SIGNING_KEYS`]).
    pub fn rotate(&mut self, key: LicenseSigningKey, now: DateTime<Utc>) {
        for k in &mut self.keys {
            k.retired_at.get_or_insert(now);
        }
        self.keys.insert(0, key);
        self.keys.truncate(MAX_SIGNING_KEYS);
        self.modified_at = now;
    }
}

impl Record for LicenseSigning {
    crate::record_v1!(LicenseSigning, "license_signing");

    fn id_key(&self) -> Vec<u8> {
        self.organization_id.key()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::{at, hex, uuid};

    fn key(n: u8, at_secs: i64) -> LicenseSigningKey {
        LicenseSigningKey {
            kid: format!("k{n}"),
            seed: vec![n; 32],
            public: vec![n + 100; 32],
            created_at: at(at_secs),
            retired_at: None,
        }
    }

    #[test]
    fn rotation_retires_the_previous_pairs_and_keeps_at_most_the_limit() {
        let mut keys = LicenseSigning {
            organization_id: OrganizationId(uuid(1)),
            sign_every_answer: false,
            keys: vec![key(1, 0)],
            modified_at: at(0),
        };
        keys.rotate(key(2, 60), at(60));
        assert_eq!(keys.current().map(|k| k.kid.as_str()), Some("k2"));
        assert_eq!(keys.keys[1].retired_at, Some(at(60)));
        keys.rotate(key(3, 120), at(120));
        // Retired once: the first retirement time stays.
        assert_eq!(keys.keys[2].retired_at, Some(at(60)));
        assert_eq!(keys.keys[1].retired_at, Some(at(120)));
        for n in 4..40 {
            keys.rotate(key(n, 60 * i64::from(n)), at(60 * i64::from(n)));
        }
        assert_eq!(keys.keys.len(), MAX_SIGNING_KEYS);
        assert_eq!(keys.current().map(|k| k.kid.as_str()), Some("k39"));
        assert_eq!(keys.current().and_then(|k| k.retired_at), None);
    }

    #[test]
    fn round_trip_golden_bytes() {
        let keys = LicenseSigning {
            organization_id: OrganizationId(uuid(1)),
            sign_every_answer: true,
            keys: vec![key(1, 0)],
            modified_at: at(60),
        };
        let bytes = keys.encode().unwrap_or_default();
        assert_eq!(LicenseSigning::decode(1, &bytes).ok(), Some(keys.clone()));
        assert_eq!(hex(&bytes), GOLDEN_V1, "license signing format v1 changed");
    }

    const GOLDEN_V1: &str = "\
        10000000000000000000000000000000010101026b31200101010101010101010101010101010101010101\
        01010101010101010101010120656565656565656565656565656565656565656565656565656565656565\
        656514313937302d30312d30315430303a30303a30305a0014313937302d30312d30315430303a30313a30\
        305a";
}
