use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record, UniqueKey};

use super::ids::{CheckoutId, CustomerId, CustomerSessionId, OrganizationId};

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
    /// A session minted by a checkout's confirm: it opens nothing until that checkout's
    /// payment succeeded, and may reach that purchase only.
    pub purchase: Option<SessionPurchase>,
}

/// The checkout a confirm's session was minted by, and how far it reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionPurchase {
    pub checkout_id: CheckoutId,
    /// The buyer's address named a customer that neither this checkout created nor the
    /// seller named: the session reaches this checkout's order, subscription and grants,
    /// never the rest of the customer's records, and changes nothing.
    pub limited: bool,
}

/// Version 1 of [`CustomerSession`]: no `purchase`.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct CustomerSessionV1 {
    id: CustomerSessionId,
    customer_id: CustomerId,
    organization_id: OrganizationId,
    token_hash: Vec<u8>,
    created_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
}

impl From<CustomerSessionV1> for CustomerSession {
    fn from(v: CustomerSessionV1) -> Self {
        CustomerSession {
            id: v.id,
            customer_id: v.customer_id,
            organization_id: v.organization_id,
            token_hash: v.token_hash,
            created_at: v.created_at,
            expires_at: v.expires_at,
            purchase: None,
        }
    }
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
            purchase: None,
        }
    }

    /// Whether the session reaches one purchase only (see [`SessionPurchase::limited`]).
    pub fn is_limited(&self) -> bool {
        self.purchase.is_some_and(|p| p.limited)
    }

    pub fn token_key(hash: &[u8]) -> UniqueKey {
        UniqueKey::new(CUSTOMER_SESSION_TOKEN, Vec::new(), hash.to_vec())
    }
}

impl Record for CustomerSession {
    const COLLECTION: &'static str = "customer_session";
    /// 2: the checkout a confirm's session was minted by (version 1 decodes without one).
    const VERSION: u16 = 2;

    fn encode(&self) -> Result<Vec<u8>, tollgate_storage::StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, tollgate_storage::StorageError> {
        match version {
            1 => tollgate_storage::codec::decode::<CustomerSessionV1>(Self::COLLECTION, 1, payload)
                .map(CustomerSession::from),
            2 => tollgate_storage::codec::decode(Self::COLLECTION, 2, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }
    const UNIQUES: &'static [&'static str] = &[CUSTOMER_SESSION_TOKEN];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![CustomerSession::token_key(&self.token_hash)]
    }
}

/// A one-time code e-mailed to a buyer who asked to sign in to the customer portal
/// (Polar's `CustomerSessionCode`): [`CustomerSessionCode::LENGTH`] characters of A–Z and
/// 0–9, valid [`CustomerSessionCode::TTL`]. Only its keyed hash is stored, and it is the
/// record's id: the code is found by what was typed, and a sign-in deletes it. Wrong codes
/// typed for the address count against every code it holds: after
/// [`CustomerSessionCode::MAX_FAILURES`] none of them works any more.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomerSessionCode {
    pub code_hash: Vec<u8>,
    pub organization_id: OrganizationId,
    pub customer_id: CustomerId,
    /// The address the code was sent to, as the customer lookup normalises it.
    pub email: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// Wrong codes typed for this address while this one was live.
    pub failures: u8,
}

/// The codes sent to one address of one organization, oldest first.
pub const CODE_BY_ADDRESS: &str = "customer_session_code_by_address";

impl CustomerSessionCode {
    /// How long a code works (Polar's `CUSTOMER_SESSION_CODE_TTL`).
    pub const TTL: Duration = Duration::minutes(30);
    /// Characters in a code (Polar's `CUSTOMER_SESSION_CODE_LENGTH`).
    pub const LENGTH: usize = 6;
    /// The alphabet of codes: upper-case letters and digits.
    pub const ALPHABET: &'static [u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    /// Wrong codes an address may be sent before its codes stop working.
    pub const MAX_FAILURES: u8 = 5;

    /// A code for `customer`, sent to `email` at `now`, whose keyed hash is `code_hash`.
    pub fn open(
        code_hash: Vec<u8>,
        organization_id: OrganizationId,
        customer_id: CustomerId,
        email: String,
        now: DateTime<Utc>,
    ) -> CustomerSessionCode {
        CustomerSessionCode {
            code_hash,
            organization_id,
            customer_id,
            email,
            created_at: now,
            expires_at: now + Self::TTL,
            failures: 0,
        }
    }

    /// Whether the code still signs in at `now`: not expired, not worn out by wrong tries.
    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        now < self.expires_at && self.failures < Self::MAX_FAILURES
    }

    /// The code with one more wrong try for its address.
    pub fn failed(mut self) -> CustomerSessionCode {
        self.failures = self.failures.saturating_add(1);
        self
    }

    /// A well-formed code: [`Self::LENGTH`] characters of [`Self::ALPHABET`]. Typed codes
    /// are upper-cased and trimmed first ([`Self::normalize`]).
    pub fn is_well_formed(code: &str) -> bool {
        code.len() == Self::LENGTH && code.bytes().all(|b| Self::ALPHABET.contains(&b))
    }

    /// A typed code as it was sent: surrounding and inner blanks dropped, upper case.
    pub fn normalize(typed: &str) -> String {
        typed
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '-')
            .collect::<String>()
            .to_ascii_uppercase()
    }

    /// The index tenant of an address of an organization.
    pub fn address_tenant(organization_id: OrganizationId, email: &str) -> Vec<u8> {
        let mut t = organization_id.key();
        t.extend_from_slice(email.as_bytes());
        t
    }
}

impl Record for CustomerSessionCode {
    crate::record_v1!(CustomerSessionCode, "customer_session_code");
    const INDEXES: &'static [&'static str] = &[CODE_BY_ADDRESS];

    fn id_key(&self) -> Vec<u8> {
        self.code_hash.clone()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![IndexEntry::new(
            CODE_BY_ADDRESS,
            CustomerSessionCode::address_tenant(self.organization_id, &self.email),
            KeyBuf::new()
                .i64(self.created_at.timestamp_micros())
                .into_vec(),
        )]
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

    #[test]
    fn a_version_1_session_reads_as_a_full_one_and_a_confirms_keeps_its_purchase() {
        let now = Utc.timestamp_opt(1_000, 0).single().unwrap_or_default();
        let v1 = CustomerSessionV1 {
            id: CustomerSessionId::new(),
            customer_id: CustomerId::new(),
            organization_id: OrganizationId::new(),
            token_hash: vec![3; 32],
            created_at: now,
            expires_at: now + Duration::hours(1),
        };
        let bytes = tollgate_storage::codec::encode(&v1).expect("encode");
        let read = CustomerSession::decode(1, &bytes).expect("a version 1 session decodes");
        assert_eq!(read.customer_id, v1.customer_id);
        assert_eq!(read.purchase, None);
        assert!(!read.is_limited());

        let mut confirmed = read.clone();
        confirmed.purchase = Some(SessionPurchase {
            checkout_id: CheckoutId::new(),
            limited: true,
        });
        let bytes = confirmed.encode().expect("encode");
        let back = CustomerSession::decode(CustomerSession::VERSION, &bytes).expect("decode");
        assert_eq!(back, confirmed);
        assert!(back.is_limited());
    }

    #[test]
    fn a_code_lasts_thirty_minutes_and_five_wrong_tries() {
        let now = Utc.timestamp_opt(1_000, 0).single().unwrap_or_default();
        let org = OrganizationId::new();
        let mut c =
            CustomerSessionCode::open(vec![1; 32], org, CustomerId::new(), "a@b.co".into(), now);
        assert_eq!(c.id_key(), vec![1; 32]);
        assert!(c.is_live(now));
        assert!(c.is_live(now + Duration::minutes(30) - Duration::seconds(1)));
        assert!(!c.is_live(now + Duration::minutes(30)));
        for _ in 0..4 {
            c = c.failed();
            assert!(c.is_live(now));
        }
        c = c.failed();
        assert!(!c.is_live(now), "the fifth wrong try ends it");
        let entries = c.index_entries();
        assert_eq!(entries.len(), 1);
    }

    #[test]
    fn typed_codes_are_normalized_and_checked() {
        assert_eq!(CustomerSessionCode::normalize(" ab c-12 3 "), "ABC123");
        assert!(CustomerSessionCode::is_well_formed("ABC123"));
        assert!(!CustomerSessionCode::is_well_formed("ABC12"));
        assert!(!CustomerSessionCode::is_well_formed("ABC12é"));
        assert!(!CustomerSessionCode::is_well_formed("abc123"));
    }
}

/// Which customer a seller opens a session for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionCustomer {
    Id(CustomerId),
    /// The seller's own id for the customer.
    External(String),
}

/// A seller's command to open a customer session (its `return_url` already checked to be
/// an http(s) URL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCustomerSession {
    pub customer: SessionCustomer,
    pub return_url: Option<String>,
}
