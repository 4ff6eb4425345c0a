//! Customers: the buyers of an organization, one per e-mail address (case-insensitive),
//! with an optional billing address, a tax id validated against its country, and the
//! seller's own id for them (`external_id`, unique in the organization, never changed once
//! set).

mod address;
mod search;
mod tax;
mod tax_checks;

pub use address::{
    is_country, non_blank, Address, AddressIssue, CA_SUBDIVISIONS, COUNTRIES, US_STATES,
};
pub use search::{
    customer_terms, matches_search, probe, search_tenant, Probe, CUSTOMER_SEARCH, SHORT_NEEDLE,
};
pub use tax::{country_formats, validate_tax_id, TaxId, TaxIdError, TaxIdFormat};

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record, StorageError, Store, Stored, UniqueKey};

use super::ids::{CustomerId, OrganizationId, PaymentMethodId};
use super::metadata::Metadata;
use super::time_key;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Customer {
    pub id: CustomerId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    /// Unique per organization, case-insensitively, while the customer is not deleted.
    pub email: String,
    pub email_verified: bool,
    pub name: Option<String>,
    pub billing_address: Option<Address>,
    pub tax_id: Option<TaxId>,
    pub metadata: Metadata,
    pub deleted_at: Option<DateTime<Utc>>,
    /// The seller's id for this customer (Polar's `external_id`): unique per organization
    /// among customers that are not deleted; once set, never changed. A deleted customer
    /// keeps it (Polar shows it still) but frees it for a new customer.
    pub external_id: Option<String>,
    // Format version 3.
    /// The name on invoices, when the customer gave one apart from `name` (Polar's
    /// `billing_name`; readers fall back to `name`).
    pub billing_name: Option<String>,
    /// The saved payment method future charges use first (Polar's
    /// `default_payment_method_id`).
    pub default_payment_method_id: Option<PaymentMethodId>,
}

/// Format version 2, before `billing_name` and `default_payment_method_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct CustomerV2 {
    id: CustomerId,
    organization_id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    email: String,
    email_verified: bool,
    name: Option<String>,
    billing_address: Option<Address>,
    tax_id: Option<TaxId>,
    metadata: Metadata,
    deleted_at: Option<DateTime<Utc>>,
    external_id: Option<String>,
}

impl From<CustomerV2> for Customer {
    fn from(v2: CustomerV2) -> Customer {
        Customer {
            id: v2.id,
            organization_id: v2.organization_id,
            created_at: v2.created_at,
            modified_at: v2.modified_at,
            email: v2.email,
            email_verified: v2.email_verified,
            name: v2.name,
            billing_address: v2.billing_address,
            tax_id: v2.tax_id,
            metadata: v2.metadata,
            deleted_at: v2.deleted_at,
            external_id: v2.external_id,
            billing_name: None,
            default_payment_method_id: None,
        }
    }
}

/// Format version 1, before `external_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct CustomerV1 {
    id: CustomerId,
    organization_id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    email: String,
    email_verified: bool,
    name: Option<String>,
    billing_address: Option<Address>,
    tax_id: Option<TaxId>,
    metadata: Metadata,
    deleted_at: Option<DateTime<Utc>>,
}

impl From<CustomerV1> for Customer {
    fn from(v1: CustomerV1) -> Customer {
        Customer {
            id: v1.id,
            organization_id: v1.organization_id,
            created_at: v1.created_at,
            modified_at: v1.modified_at,
            email: v1.email,
            email_verified: v1.email_verified,
            name: v1.name,
            billing_address: v1.billing_address,
            tax_id: v1.tax_id,
            metadata: v1.metadata,
            deleted_at: v1.deleted_at,
            external_id: None,
            billing_name: None,
            default_payment_method_id: None,
        }
    }
}

const COLLECTION: &str = "customer";

pub const CUSTOMER_BY_CREATED: &str = "customer_by_created";
pub const CUSTOMER_BY_EMAIL: &str = "customer_by_email";
pub const CUSTOMER_BY_NAME: &str = "customer_by_name";
pub const CUSTOMER_EMAIL: &str = "customer_email";
/// The organization's live customer with an external id.
pub const CUSTOMER_EXTERNAL_ID: &str = "customer_external_id";

pub use super::email::normalize_email;

impl Customer {
    /// A new customer with an unverified e-mail address and nothing else.
    pub fn new(
        id: CustomerId,
        organization_id: OrganizationId,
        email: String,
        now: DateTime<Utc>,
    ) -> Customer {
        Customer {
            id,
            organization_id,
            created_at: now,
            modified_at: None,
            email,
            email_verified: false,
            name: None,
            billing_address: None,
            tax_id: None,
            metadata: Metadata::default(),
            deleted_at: None,
            external_id: None,
            billing_name: None,
            default_payment_method_id: None,
        }
    }

    /// The name on invoices: the billing name, else the name (Polar's fallback).
    pub fn invoice_name(&self) -> Option<&str> {
        self.billing_name.as_deref().or(self.name.as_deref())
    }

    pub fn is_deleted(&self) -> bool {
        self.deleted_at.is_some()
    }

    /// Gravatar's URL for the address (blank image when there is none).
    pub fn avatar_url(&self) -> String {
        let hash = Sha256::digest(self.email.to_lowercase().as_bytes());
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        format!("https://www.gravatar.com/avatar/{hex}?d=blank")
    }

    pub fn email_key(org: OrganizationId, email: &str) -> UniqueKey {
        UniqueKey::new(CUSTOMER_EMAIL, org.key(), normalize_email(email))
    }

    /// External ids compare exactly (Polar's `external_id` column).
    pub fn external_id_key(org: OrganizationId, external_id: &str) -> UniqueKey {
        UniqueKey::new(
            CUSTOMER_EXTERNAL_ID,
            org.key(),
            external_id.as_bytes().to_vec(),
        )
    }

    /// Gives the customer `external_id` unless it already has one (Polar never changes
    /// it once set). Whether the customer now holds that id; uniqueness in the
    /// organization is the store's (`CUSTOMER_EXTERNAL_ID`, `StorageError::Unique`).
    pub fn adopt_external_id(&mut self, external_id: &str) -> bool {
        match &self.external_id {
            Some(own) => own == external_id,
            None => {
                self.external_id = Some(external_id.to_string());
                true
            }
        }
    }

    fn created_sort(&self) -> KeyBuf {
        KeyBuf::new().i64(self.created_at.timestamp_micros())
    }
}

impl Record for Customer {
    const COLLECTION: &'static str = COLLECTION;
    /// 2: `external_id`; 3: `billing_name`, `default_payment_method_id`.
    const VERSION: u16 = 3;
    /// Its changes are webhook events.
    const FEED: bool = true;
    const INDEXES: &'static [&'static str] = &[
        CUSTOMER_BY_CREATED,
        CUSTOMER_BY_EMAIL,
        CUSTOMER_BY_NAME,
        CUSTOMER_SEARCH,
    ];
    const UNIQUES: &'static [&'static str] = &[CUSTOMER_EMAIL, CUSTOMER_EXTERNAL_ID];

    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        match version {
            1 => tollgate_storage::codec::decode::<CustomerV1>(COLLECTION, version, payload)
                .map(Customer::from),
            2 => tollgate_storage::codec::decode::<CustomerV2>(COLLECTION, version, payload)
                .map(Customer::from),
            3 => tollgate_storage::codec::decode(COLLECTION, version, payload),
            v => Err(tollgate_storage::codec::unknown_version(COLLECTION, v)),
        }
    }

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    /// One index per sortable field, split by organization; ties sort by creation time
    /// (then id); and the uncounted search terms ([`CUSTOMER_SEARCH`]), in creation order.
    /// Deleted customers leave every list.
    fn index_entries(&self) -> Vec<IndexEntry> {
        if self.is_deleted() {
            return Vec::new();
        }
        let tenant = self.organization_id.key();
        let name = match &self.name {
            // Nulls last in ascending order, as PostgreSQL sorts them.
            Some(n) => KeyBuf::new().u8(0).str(&n.to_lowercase()),
            None => KeyBuf::new().u8(1),
        };
        let created = time_key(self.created_at);
        let mut entries: Vec<IndexEntry> = customer_terms(self)
            .iter()
            .map(|term| {
                IndexEntry::uncounted(
                    CUSTOMER_SEARCH,
                    search_tenant(self.organization_id, term),
                    created.clone(),
                )
            })
            .collect();
        entries.extend([
            IndexEntry::new(CUSTOMER_BY_CREATED, tenant.clone(), created),
            IndexEntry::new(
                CUSTOMER_BY_EMAIL,
                tenant.clone(),
                KeyBuf::new()
                    .str(&normalize_email(&self.email))
                    .fixed(self.created_sort().as_slice())
                    .into_vec(),
            ),
            IndexEntry::new(
                CUSTOMER_BY_NAME,
                tenant,
                name.fixed(self.created_sort().as_slice()).into_vec(),
            ),
        ]);
        entries
    }

    /// A deleted customer frees its e-mail address and external id, so that a later
    /// purchase with them creates a new customer.
    fn unique_keys(&self) -> Vec<UniqueKey> {
        if self.is_deleted() {
            return Vec::new();
        }
        let mut keys = vec![Customer::email_key(self.organization_id, &self.email)];
        if let Some(external_id) = &self.external_id {
            keys.push(Customer::external_id_key(self.organization_id, external_id));
        }
        keys
    }
}

/// A customer that is not deleted, by id.
pub async fn customer_by_id(
    store: &Store,
    id: CustomerId,
) -> Result<Option<Stored<Customer>>, StorageError> {
    Ok(store
        .get::<Customer>(&id.key())
        .await?
        .filter(|c| !c.value.is_deleted()))
}

/// The organization's customer with this e-mail address (case-insensitive), if any.
pub async fn customer_by_email(
    store: &Store,
    org: OrganizationId,
    email: &str,
) -> Result<Option<Stored<Customer>>, StorageError> {
    let Some(id) = store
        .lookup_unique(&Customer::email_key(org, email))
        .await?
    else {
        return Ok(None);
    };
    let Some(id) = CustomerId::from_key(&id) else {
        return Ok(None);
    };
    Ok(customer_by_id(store, id)
        .await?
        .filter(|c| c.value.organization_id == org))
}

/// The organization's live customer with this external id, if any.
pub async fn customer_by_external_id(
    store: &Store,
    org: OrganizationId,
    external_id: &str,
) -> Result<Option<Stored<Customer>>, StorageError> {
    let Some(id) = store
        .lookup_unique(&Customer::external_id_key(org, external_id))
        .await?
    else {
        return Ok(None);
    };
    let Some(id) = CustomerId::from_key(&id) else {
        return Ok(None);
    };
    Ok(customer_by_id(store, id)
        .await?
        .filter(|c| c.value.organization_id == org))
}

/// The organization's customers with these external ids, in one read of the unique keys
/// and one of the records: `(external id, customer)` for each id a customer holds.
pub async fn customers_by_external_ids(
    store: &Store,
    org: OrganizationId,
    external_ids: &[&str],
) -> Result<Vec<(String, Stored<Customer>)>, StorageError> {
    let keys: Vec<UniqueKey> = external_ids
        .iter()
        .map(|x| Customer::external_id_key(org, x))
        .collect();
    let held: BTreeMap<Vec<u8>, String> = store
        .lookup_unique_many(&keys)
        .await?
        .into_iter()
        .zip(external_ids)
        .filter_map(|(id, x)| Some((id?, (*x).to_string())))
        .collect();
    let ids: Vec<Vec<u8>> = held.keys().cloned().collect();
    Ok(store
        .get_many::<Customer>(&ids)
        .await?
        .into_iter()
        .filter(|c| c.value.organization_id == org)
        .filter_map(|c| {
            let x = held.get(c.value.id.key().as_slice())?.clone();
            Some((x, c))
        })
        .collect())
}

/// A new customer, as the seller asks for it (its fields' shapes checked; the organization,
/// whether the address and the external id are free, and the tax id against the country
/// are the use case's to check).
#[derive(Debug, Clone, PartialEq)]
pub struct NewCustomer {
    /// The organization named by the request, if any.
    pub organization_id: Option<OrganizationId>,
    /// Normalized (the domain lower-cased).
    pub email: String,
    pub name: Option<String>,
    pub billing_address: Option<Address>,
    /// The tax number given (checked against the billing address's country).
    pub tax_number: Option<String>,
    pub metadata: Metadata,
    /// Never blank.
    pub external_id: Option<String>,
}

/// A change of a customer. `None` leaves a field as it is; for a field that can be unset,
/// `Some(None)` unsets it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CustomerChange {
    /// `Some(None)`: explicitly none (null or blank).
    pub external_id: Option<Option<String>>,
    pub email: Option<String>,
    pub name: Option<Option<String>>,
    pub billing_address: Option<Option<Address>>,
    /// `Some(None)` clears the tax id.
    pub tax_number: Option<Option<String>>,
    pub metadata: Option<Metadata>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn customer() -> Customer {
        Customer::new(
            CustomerId(uuid::Uuid::from_u128(1)),
            OrganizationId(uuid::Uuid::from_u128(2)),
            "Jane.Doe@Example.com".into(),
            Utc.timestamp_opt(0, 0).single().unwrap_or_default(),
        )
    }

    #[test]
    fn avatar_is_gravatar_of_the_lowercased_email() {
        let c = customer();
        // sha256("jane.doe@example.com")
        let expected = Sha256::digest(b"jane.doe@example.com");
        let hex: String = expected.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            c.avatar_url(),
            format!("https://www.gravatar.com/avatar/{hex}?d=blank")
        );
        assert_eq!(hex.len(), 64);
    }

    #[test]
    fn email_is_unique_case_insensitively_until_deleted() {
        let mut c = customer();
        assert_eq!(
            c.unique_keys(),
            vec![Customer::email_key(
                c.organization_id,
                "jane.doe@example.com"
            )]
        );
        let entries = c.index_entries();
        assert_eq!(entries.iter().filter(|e| e.counted).count(), 3);
        assert_eq!(entries.len(), 3 + customer_terms(&c).len());
        c.deleted_at = Some(c.created_at);
        assert!(c.unique_keys().is_empty());
        assert!(c.index_entries().is_empty());
    }

    fn full() -> Customer {
        let mut c = customer();
        c.name = Some("Jane".into());
        c.billing_address = Address::new(None, None, None, None, Some("QC"), "CA").ok();
        c.tax_id = Some(TaxId {
            value: "123456782".into(),
            format: TaxIdFormat::CaBn,
        });
        c
    }

    fn unhex(hex: &str) -> Vec<u8> {
        (0..hex.len())
            .step_by(2)
            .filter_map(|i| hex.get(i..i + 2))
            .filter_map(|h| u8::from_str_radix(h, 16).ok())
            .collect()
    }

    #[test]
    fn round_trip_and_golden_bytes() {
        let mut c = full();
        c.external_id = Some("usr_1337".into());
        c.billing_name = Some("Doe Inc.".into());
        c.default_payment_method_id = Some(PaymentMethodId(uuid::Uuid::from_u128(3)));
        let bytes = c.encode().unwrap_or_default();
        assert_eq!(Customer::decode(3, &bytes).ok(), Some(c.clone()));
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, GOLDEN_V3, "customer format v3 changed");
        assert_eq!(c.invoice_name(), Some("Doe Inc."));
        c.billing_name = None;
        assert_eq!(
            c.invoice_name(),
            Some("Jane"),
            "the name when none was given"
        );
    }

    #[test]
    fn version_2_reads_without_a_billing_name_or_default_method() {
        let c = Customer::decode(2, &unhex(GOLDEN_V2)).ok();
        let mut expected = full();
        expected.external_id = Some("usr_1337".into());
        assert_eq!(c, Some(expected));
        assert!(
            Customer::decode(3, &unhex(GOLDEN_V2)).is_err(),
            "v2 bytes are not v3"
        );
    }

    #[test]
    fn version_1_reads_without_an_external_id() {
        let bytes = unhex(GOLDEN_V1);
        let c = Customer::decode(1, &bytes).ok();
        assert_eq!(c, Some(full()));
        assert_eq!(c.and_then(|c| c.external_id), None);
        assert!(Customer::decode(4, &bytes).is_err());
    }

    #[test]
    fn external_id_is_unique_while_live_and_never_replaced() {
        let mut c = customer();
        assert!(c.adopt_external_id("usr_1"));
        assert!(c.adopt_external_id("usr_1"));
        assert!(!c.adopt_external_id("usr_2"));
        assert_eq!(c.external_id.as_deref(), Some("usr_1"));
        assert!(c
            .unique_keys()
            .contains(&Customer::external_id_key(c.organization_id, "usr_1")));
        c.deleted_at = Some(c.created_at);
        assert!(c.unique_keys().is_empty());
        assert_eq!(c.external_id.as_deref(), Some("usr_1"), "kept when deleted");
    }

    const GOLDEN_V3: &str = "1000000000000000000000000000000001100000000000000000000000000000000214313937302d30312d30315430303a30303a30305a00144a616e652e446f65404578616d706c652e636f6d0001044a616e650100000000010543412d514302434101093132333435363738320a000001087573725f313333370108446f6520496e632e011000000000000000000000000000000003";
    const GOLDEN_V2: &str = "1000000000000000000000000000000001100000000000000000000000000000000214313937302d30312d30315430303a30303a30305a00144a616e652e446f65404578616d706c652e636f6d0001044a616e650100000000010543412d514302434101093132333435363738320a000001087573725f31333337";
    const GOLDEN_V1: &str = "1000000000000000000000000000000001100000000000000000000000000000000214313937302d30312d30315430303a30303a30305a00144a616e652e446f65404578616d706c652e636f6d0001044a616e650100000000010543412d514302434101093132333435363738320a0000";
}
