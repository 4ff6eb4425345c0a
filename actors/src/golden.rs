//! Fixed values shared by the golden-bytes tests of the stored records (checkout sessions,
//! orders, subscriptions, license keys): deterministic ids and times, and fully populated
//! metadata, custom field data, billing address and tax id, so that each record's test
//! sets every optional field without repeating these blocks.

use std::collections::BTreeMap;

use chrono::{DateTime, TimeZone, Utc};

use crate::domain::custom_field::{CustomFieldData, FieldValue};
use crate::domain::customer::{Address, TaxId, TaxIdFormat};
use crate::domain::metadata::{MetaValue, Metadata};

/// The UUID `n`, so that ids are the same on every run.
pub fn uuid(n: u128) -> uuid::Uuid {
    uuid::Uuid::from_u128(n)
}

/// `secs` seconds after the epoch.
pub fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(secs, 0).unwrap()
}

/// One pair of each value kind.
pub fn metadata() -> Metadata {
    Metadata(BTreeMap::from([
        ("plan".to_string(), MetaValue::Str("pro".into())),
        ("seats".to_string(), MetaValue::Int(-3)),
        ("trial".to_string(), MetaValue::Bool(true)),
    ]))
}

/// One field of each value kind, the empty one included.
pub fn custom_field_data() -> CustomFieldData {
    CustomFieldData(BTreeMap::from([
        ("agree".to_string(), FieldValue::Bool(false)),
        (
            "born".to_string(),
            FieldValue::Date("2024-05-01T00:00:00Z".into()),
        ),
        ("count".to_string(), FieldValue::Int(7)),
        ("empty".to_string(), FieldValue::Null),
        ("note".to_string(), FieldValue::Str("hi".into())),
    ]))
}

/// Every line of the address set.
pub fn address() -> Address {
    Address {
        line1: Some("1 Main St".into()),
        line2: Some("Apt 2".into()),
        postal_code: Some("H2X 1Y4".into()),
        city: Some("Montreal".into()),
        state: Some("CA-QC".into()),
        country: "CA".into(),
    }
}

pub fn tax_id() -> TaxId {
    TaxId {
        value: "123456782".into(),
        format: TaxIdFormat::CaBn,
    }
}

/// The bytes as lower-case hex, as the golden constants are written.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
