//! Customers: the buyers of an organization, one per e-mail address (case-insensitive),
//! with an optional billing address and a tax id validated against its country.

mod address;
mod tax;

pub use address::{
    is_country, non_blank, Address, AddressIssue, CA_SUBDIVISIONS, COUNTRIES, US_STATES,
};
pub use tax::{country_formats, validate_tax_id, TaxId, TaxIdError, TaxIdFormat};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record, StorageError, Store, Stored, UniqueKey};

use super::ids::{CustomerId, OrganizationId};
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
}

pub const CUSTOMER_BY_CREATED: &str = "customer_by_created";
pub const CUSTOMER_BY_EMAIL: &str = "customer_by_email";
pub const CUSTOMER_BY_NAME: &str = "customer_by_name";
pub const CUSTOMER_EMAIL: &str = "customer_email";

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
        }
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

    fn created_sort(&self) -> KeyBuf {
        KeyBuf::new().i64(self.created_at.timestamp_micros())
    }
}

impl Record for Customer {
    crate::record_v1!(Customer, "customer");
    /// Its changes are webhook events.
    const FEED: bool = true;
    const INDEXES: &'static [&'static str] =
        &[CUSTOMER_BY_CREATED, CUSTOMER_BY_EMAIL, CUSTOMER_BY_NAME];
    const UNIQUES: &'static [&'static str] = &[CUSTOMER_EMAIL];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    /// One index per sortable field, split by organization; ties sort by creation time
    /// (then id). Deleted customers leave every list.
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
        vec![
            IndexEntry::new(
                CUSTOMER_BY_CREATED,
                tenant.clone(),
                time_key(self.created_at),
            ),
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
        ]
    }

    /// A deleted customer frees its e-mail address, so that a later purchase with it
    /// creates a new customer.
    fn unique_keys(&self) -> Vec<UniqueKey> {
        if self.is_deleted() {
            return Vec::new();
        }
        vec![Customer::email_key(self.organization_id, &self.email)]
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
        assert_eq!(c.index_entries().len(), 3);
        c.deleted_at = Some(c.created_at);
        assert!(c.unique_keys().is_empty());
        assert!(c.index_entries().is_empty());
    }

    #[test]
    fn round_trip_and_golden_bytes() {
        let mut c = customer();
        c.name = Some("Jane".into());
        c.billing_address = Address::new(None, None, None, None, Some("QC"), "CA").ok();
        c.tax_id = Some(TaxId {
            value: "123456782".into(),
            format: TaxIdFormat::CaBn,
        });
        let bytes = c.encode().unwrap_or_default();
        assert_eq!(Customer::decode(1, &bytes).ok(), Some(c));
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, GOLDEN_V1, "customer format v1 changed");
    }

    const GOLDEN_V1: &str = "1000000000000000000000000000000001100000000000000000000000000000000214313937302d30312d30315430303a30303a30305a00144a616e652e446f65404578616d706c652e636f6d0001044a616e650100000000010543412d514302434101093132333435363738320a0000";
}
