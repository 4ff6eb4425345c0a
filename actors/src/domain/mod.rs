//! Plain records written directly through storage (no actor): users, personal access
//! tokens, organizations, organization access tokens and memberships. Each is the current
//! snapshot format of its collection; a golden-bytes test pins it, and an incompatible
//! change adds a version.

pub mod benefit;
pub mod benefit_grant;
pub mod checkout_link;
pub mod claimable_key;
pub mod currency;
pub mod custom_field;
pub mod customer;
pub mod customer_session;
pub mod discount;
pub mod dispute;
pub mod email;
pub mod grants;
pub mod ids;
pub mod license_signing;
pub mod mail;
pub mod membership;
pub mod metadata;
pub mod money;
pub mod oauth2;
pub mod order;
pub mod organization;
pub mod organization_access_token;
pub mod pat;
pub mod product;
pub mod refund;
pub mod retention;
pub mod scope;
pub mod stats;
pub mod subscription_change;
pub mod user;
pub mod webhook;

use chrono::{DateTime, Utc};
use tollgate_storage::keys::KeyBuf;

/// Sort key of a timestamp (microseconds since the epoch, order-preserving).
pub fn time_key(t: DateTime<Utc>) -> Vec<u8> {
    KeyBuf::new().i64(t.timestamp_micros()).into_vec()
}

/// Encodes and decodes a record whose only format so far is version 1.
#[macro_export]
macro_rules! record_v1 {
    ($ty:ty, $collection:literal) => {
        const COLLECTION: &'static str = $collection;
        const VERSION: u16 = 1;
        fn encode(&self) -> Result<Vec<u8>, tollgate_storage::StorageError> {
            tollgate_storage::codec::encode(self)
        }
        fn decode(version: u16, payload: &[u8]) -> Result<Self, tollgate_storage::StorageError> {
            match version {
                1 => tollgate_storage::codec::decode($collection, version, payload),
                v => Err(tollgate_storage::codec::unknown_version($collection, v)),
            }
        }
    };
}
