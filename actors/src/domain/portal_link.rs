//! What the customer portal remembers between two requests of a buyer:
//!
//! - [`PaymentSetup`]: a card setup the processor asked the buyer to confirm (3-D
//!   Secure), so that `/payment-methods/confirm` accepts only a setup this customer
//!   started;
//! - [`RecoveryLink`]: the one-use link of a "payment failed" e-mail, stored by the keyed
//!   hash of its token; a used link keeps its record (`used_at`), so that replaying the
//!   mail never revives it;
//! - [`EmailChange`]: a change of the customer's address waiting for the code sent to
//!   the new one, stored by the keyed hash of the code.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record};

use super::ids::{CustomerId, OrganizationId, SubscriptionId};

/// Setups by creation (tenant: empty): what retention walks.
pub const PAYMENT_SETUP_BY_CREATED: &str = "payment_setup_by_created";
/// Recovery links by expiry (tenant: empty): what retention walks.
pub const RECOVERY_LINK_BY_EXPIRY: &str = "recovery_link_by_expiry";
/// Address changes by expiry (tenant: empty): what retention walks.
pub const EMAIL_CHANGE_BY_EXPIRY: &str = "email_change_by_expiry";

fn time_sort(t: DateTime<Utc>) -> Vec<u8> {
    KeyBuf::new().i64(t.timestamp_micros()).into_vec()
}

/// A card setup waiting for the buyer (Polar keeps none: it asks Stripe whose setup it
/// is). Its id is the processor's setup id (`seti_…`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentSetup {
    pub setup_intent_id: String,
    pub organization_id: OrganizationId,
    pub customer_id: CustomerId,
    /// Whether the method becomes the customer's default once confirmed.
    pub set_default: bool,
    pub created_at: DateTime<Utc>,
}

impl PaymentSetup {
    pub fn key_of(setup_intent_id: &str) -> Vec<u8> {
        setup_intent_id.as_bytes().to_vec()
    }
}

impl Record for PaymentSetup {
    crate::record_v1!(PaymentSetup, "payment_setup");
    const INDEXES: &'static [&'static str] = &[PAYMENT_SETUP_BY_CREATED];

    fn id_key(&self) -> Vec<u8> {
        PaymentSetup::key_of(&self.setup_intent_id)
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![IndexEntry::new(
            PAYMENT_SETUP_BY_CREATED,
            Vec::new(),
            time_sort(self.created_at),
        )]
    }
}

/// The link of a "payment failed" e-mail: opens the portal on the subscription once,
/// until the day access stops. Only the keyed hash of its token is stored (the id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecoveryLink {
    pub token_hash: Vec<u8>,
    pub organization_id: OrganizationId,
    pub customer_id: CustomerId,
    pub subscription_id: SubscriptionId,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// When the link was opened: it never opens again.
    pub used_at: Option<DateTime<Utc>>,
}

impl RecoveryLink {
    /// Whether the link still opens the portal at `now`.
    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        self.used_at.is_none() && now < self.expires_at
    }
}

impl Record for RecoveryLink {
    crate::record_v1!(RecoveryLink, "recovery_link");
    const INDEXES: &'static [&'static str] = &[RECOVERY_LINK_BY_EXPIRY];

    fn id_key(&self) -> Vec<u8> {
        self.token_hash.clone()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![IndexEntry::new(
            RECOVERY_LINK_BY_EXPIRY,
            Vec::new(),
            time_sort(self.expires_at),
        )]
    }
}

/// A change of a customer's e-mail address, waiting for the code sent to the new address
/// (Polar's e-mail update). Only the keyed hash of the code is stored (the id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmailChange {
    pub code_hash: Vec<u8>,
    pub organization_id: OrganizationId,
    pub customer_id: CustomerId,
    /// Normalized.
    pub new_email: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl EmailChange {
    /// How long a code works (Polar's e-mail update link: 30 minutes).
    pub const TTL: Duration = Duration::minutes(30);
    /// Characters in a code: A–Z and 0–9.
    pub const LENGTH: usize = 8;

    pub fn open(
        code_hash: Vec<u8>,
        organization_id: OrganizationId,
        customer_id: CustomerId,
        new_email: String,
        now: DateTime<Utc>,
    ) -> EmailChange {
        EmailChange {
            code_hash,
            organization_id,
            customer_id,
            new_email,
            created_at: now,
            expires_at: now + Self::TTL,
        }
    }

    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        now < self.expires_at
    }
}

impl Record for EmailChange {
    crate::record_v1!(EmailChange, "email_change");
    const INDEXES: &'static [&'static str] = &[EMAIL_CHANGE_BY_EXPIRY];

    fn id_key(&self) -> Vec<u8> {
        self.code_hash.clone()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![IndexEntry::new(
            EMAIL_CHANGE_BY_EXPIRY,
            Vec::new(),
            time_sort(self.expires_at),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::{at, hex, uuid};

    #[test]
    fn a_payment_setup_is_found_by_its_setup_id_and_pinned() {
        let s = PaymentSetup {
            setup_intent_id: "seti_1Qabc".into(),
            organization_id: OrganizationId(uuid(1)),
            customer_id: CustomerId(uuid(2)),
            set_default: true,
            created_at: at(1_700_000_000),
        };
        assert_eq!(s.id_key(), b"seti_1Qabc".to_vec());
        let bytes = s.encode().unwrap();
        assert_eq!(PaymentSetup::decode(1, &bytes).unwrap(), s);
        assert!(PaymentSetup::decode(2, &bytes).is_err());
        assert_eq!(
            hex(&bytes),
            GOLDEN_SETUP_V1,
            "payment setup format v1 changed"
        );
    }

    #[test]
    fn a_recovery_link_opens_once_until_it_expires_and_is_pinned() {
        let mut l = RecoveryLink {
            token_hash: vec![9; 32],
            organization_id: OrganizationId(uuid(1)),
            customer_id: CustomerId(uuid(2)),
            subscription_id: SubscriptionId(uuid(3)),
            created_at: at(1_700_000_000),
            expires_at: at(1_700_100_000),
            used_at: None,
        };
        assert!(l.is_live(at(1_700_000_000)));
        assert!(l.is_live(at(1_700_099_999)));
        assert!(!l.is_live(at(1_700_100_000)), "expired at expires_at");
        l.used_at = Some(at(1_700_000_100));
        assert!(!l.is_live(at(1_700_000_200)), "used once");
        assert_eq!(l.id_key(), vec![9; 32]);
        let bytes = l.encode().unwrap();
        assert_eq!(RecoveryLink::decode(1, &bytes).unwrap(), l);
        assert!(RecoveryLink::decode(2, &bytes).is_err());
        assert_eq!(
            hex(&bytes),
            GOLDEN_LINK_V1,
            "recovery link format v1 changed"
        );
        assert_eq!(l.index_entries()[0].sort, time_sort(l.expires_at));
    }

    #[test]
    fn an_email_change_lasts_thirty_minutes_and_is_pinned() {
        let c = EmailChange::open(
            vec![5; 32],
            OrganizationId(uuid(1)),
            CustomerId(uuid(2)),
            "new@example.com".into(),
            at(1_700_000_000),
        );
        assert_eq!(c.expires_at - c.created_at, Duration::minutes(30));
        assert!(c.is_live(at(1_700_000_000 + 30 * 60 - 1)));
        assert!(!c.is_live(at(1_700_000_000 + 30 * 60)));
        let bytes = c.encode().unwrap();
        assert_eq!(EmailChange::decode(1, &bytes).unwrap(), c);
        assert!(EmailChange::decode(2, &bytes).is_err());
        assert_eq!(
            hex(&bytes),
            GOLDEN_CHANGE_V1,
            "e-mail change format v1 changed"
        );
    }

    const GOLDEN_SETUP_V1: &str = "0a736574695f3151616263100000000000000000000000000000000110000000000000000000000000000000020114323032332d31312d31345432323a31333a32305a";
    const GOLDEN_LINK_V1: &str = "20090909090909090909090909090909090909090909090909090909090909090910000000000000000000000000000000011000000000000000000000000000000002100000000000000000000000000000000314323032332d31312d31345432323a31333a32305a14323032332d31312d31365430323a30303a30305a0114323032332d31312d31345432323a31353a30305a";
    const GOLDEN_CHANGE_V1: &str = "200505050505050505050505050505050505050505050505050505050505050505100000000000000000000000000000000110000000000000000000000000000000020f6e6577406578616d706c652e636f6d14323032332d31312d31345432323a31333a32305a14323032332d31312d31345432323a34333a32305a";
}
