//! A customer's saved payment methods (Polar's `PaymentMethod`): what the processor keeps
//! for later charges (Stripe's `pm_…`, a test token), with what a buyer needs to tell
//! them apart. One record per customer and processor reference: its id derives from
//! both, so saving the same method again (a retried add, a subscription's card found
//! again) writes the same record.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record};

use super::ids::{CustomerId, OrganizationId, PaymentMethodId};
use crate::ids::derived_uuid;

/// A customer's methods, by creation (read backwards: newest first). Tenant: the customer.
pub const PAYMENT_METHOD_OF_CUSTOMER: &str = "payment_method_of_customer";

/// What the processor says a payment method is (Polar's `method_metadata`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MethodDetails {
    /// `card`, or the processor's own type for anything else.
    pub kind: String,
    pub brand: Option<String>,
    pub last4: Option<String>,
    pub exp_month: Option<u32>,
    pub exp_year: Option<u32>,
    /// The wallet the card came through (`apple_pay`, `google_pay`, …), if any.
    pub wallet: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentMethod {
    pub id: PaymentMethodId,
    pub organization_id: OrganizationId,
    pub customer_id: CustomerId,
    /// What the processor charges (`pm_…`, or a test token).
    pub processor_ref: String,
    pub details: MethodDetails,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
}

impl PaymentMethod {
    /// The id of the method `processor_ref` of `customer` (the same for every save).
    pub fn id_for(customer: CustomerId, processor_ref: &str) -> PaymentMethodId {
        PaymentMethodId(derived_uuid(customer.0, &format!("pm:{processor_ref}")))
    }

    pub fn new(
        organization_id: OrganizationId,
        customer_id: CustomerId,
        processor_ref: String,
        details: MethodDetails,
        now: DateTime<Utc>,
    ) -> PaymentMethod {
        PaymentMethod {
            id: PaymentMethod::id_for(customer_id, &processor_ref),
            organization_id,
            customer_id,
            processor_ref,
            details,
            created_at: now,
            modified_at: None,
        }
    }
}

impl Record for PaymentMethod {
    crate::record_v1!(PaymentMethod, "payment_method");
    const INDEXES: &'static [&'static str] = &[PAYMENT_METHOD_OF_CUSTOMER];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![IndexEntry::new(
            PAYMENT_METHOD_OF_CUSTOMER,
            self.customer_id.key(),
            KeyBuf::new()
                .i64(self.created_at.timestamp_micros())
                .into_vec(),
        )]
    }
}

/// A buyer's new payment method for the portal's add (Polar's
/// `CustomerPaymentMethodCreate`, its fields' shapes checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddPaymentMethod {
    /// The processor's token of the card (Stripe's `ctoken_…` or `pm_…`, a test token).
    pub token: String,
    pub set_default: bool,
    /// Where the processor sends the buyer back after an authentication (http(s)).
    pub return_url: String,
}

/// A setup the buyer finished (Polar's `CustomerPaymentMethodConfirm`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmPaymentMethod {
    pub setup_intent_id: String,
    pub set_default: bool,
}

/// What an add or a confirm did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupAnswer {
    /// The method is saved.
    Saved(PaymentMethod),
    /// The buyer must authenticate the card (3-D Secure) with the processor's client
    /// secret, then confirm the setup.
    RequiresAction { client_secret: String },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::{at, hex, uuid};

    fn method() -> PaymentMethod {
        PaymentMethod::new(
            OrganizationId(uuid(1)),
            CustomerId(uuid(2)),
            "pm_1Qabc".into(),
            MethodDetails {
                kind: "card".into(),
                brand: Some("visa".into()),
                last4: Some("4242".into()),
                exp_month: Some(12),
                exp_year: Some(2030),
                wallet: Some("apple_pay".into()),
            },
            at(1_700_000_000),
        )
    }

    #[test]
    fn the_id_derives_from_the_customer_and_the_reference() {
        let m = method();
        assert_eq!(m.id, PaymentMethod::id_for(CustomerId(uuid(2)), "pm_1Qabc"));
        assert_ne!(m.id, PaymentMethod::id_for(CustomerId(uuid(3)), "pm_1Qabc"));
        assert_ne!(m.id, PaymentMethod::id_for(CustomerId(uuid(2)), "pm_1Qabd"));
    }

    #[test]
    fn round_trip_golden_bytes_and_index() {
        let mut m = method();
        m.modified_at = Some(at(1_700_000_060));
        let bytes = m.encode().unwrap();
        assert_eq!(PaymentMethod::decode(1, &bytes).unwrap(), m);
        assert!(PaymentMethod::decode(2, &bytes).is_err());
        assert_eq!(hex(&bytes), GOLDEN_V1, "payment method format v1 changed");
        let entries = m.index_entries();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].tenant, m.customer_id.key());
    }

    const GOLDEN_V1: &str = "10500ded9db1694b269a7d292b274512771000000000000000000000000000000001100000000000000000000000000000000208706d5f31516162630463617264010476697361010434323432010c01fbee0701096170706c655f70617914323032332d31312d31345432323a31333a32305a0114323032332d31312d31345432323a31343a32305a";
}
