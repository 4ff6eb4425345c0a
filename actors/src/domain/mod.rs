//! The domain's plain records (written directly through storage, no actor), the commands
//! the use cases take, and the pure rules they share. Each record is the current snapshot
//! format of its collection; a golden-bytes test pins it, and an incompatible change adds a
//! version.
//!
//! - records: `benefit`, `benefit_grant`, `checkout_link`, `claimable_key`, `custom_field`,
//!   `customer` (with its address and tax ids), `customer_session`, `discount`, `dispute`,
//!   `license_signing`, `mail`, `membership`, `oauth2`, `order`, `organization`,
//!   `organization_access_token`, `pat`, `payment_method`, `portal_link` (payment setups,
//!   recovery links, e-mail changes), `product`, `refund`, `stats`, `user`, `webhook`;
//! - commands parsed from requests (beside their records: `NewProduct`, `NewDiscount`,
//!   `RefundRequest`, `NewCustomer`, …) and `subscription_change` (`CancelSubscription`,
//!   `PlanRequest`, `SubscriptionChange`);
//! - rules and values: `currency` (`Currency`: the one place a currency code is spelled),
//!   `money` (amounts as people read them, per language), `dates` (long dates per language),
//!   `locale` (the buyer's language), `grants` (what a benefit grants for a purchase,
//!   a renewal, a plan change and a claim), `email`, `metadata`, `retention`, `scope`;
//! - `ids`: the typed ids of every record.

pub mod benefit;
pub mod benefit_grant;
pub mod checkout_link;
pub mod claimable_key;
pub mod currency;
pub mod custom_field;
pub mod customer;
pub mod customer_session;
pub mod dates;
pub mod discount;
pub mod dispute;
pub mod download;
pub mod email;
pub mod file;
pub mod grants;
pub mod ids;
pub mod invoice;
pub mod license_signing;
pub mod locale;
pub mod mail;
pub mod membership;
pub mod metadata;
pub mod meter;
pub mod money;
pub mod oauth2;
pub mod order;
pub mod order_tax;
pub mod organization;
pub mod organization_access_token;
pub mod pat;
pub mod payment_method;
pub mod portal_link;
pub mod product;
pub mod refund;
pub mod release;
pub mod retention;
pub mod scope;
pub mod stats;
pub mod subscription_change;
pub mod tax_breakdown;
pub mod tax_id_check;
pub mod tax_settings;
pub mod tax_transaction;
pub mod usage_event;
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
