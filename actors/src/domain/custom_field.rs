use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record, UniqueKey};

use super::ids::{CustomFieldId, OrganizationId};
use super::metadata::Metadata;

/// A question a checkout asks the buyer, attached to products. Unset property keys are
/// omitted from responses, as Polar stores them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomField {
    pub id: CustomFieldId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    /// Unique per organization, case-insensitively.
    pub slug: String,
    pub name: String,
    pub metadata: Metadata,
    pub properties: CustomFieldProperties,
    pub deleted_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FormProperties {
    pub form_label: Option<String>,
    pub form_help_text: Option<String>,
    pub form_placeholder: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectOption {
    pub value: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum CustomFieldProperties {
    Text {
        form: FormProperties,
        textarea: Option<bool>,
        min_length: Option<i64>,
        max_length: Option<i64>,
    },
    Number {
        form: FormProperties,
        ge: Option<i64>,
        le: Option<i64>,
    },
    /// `ge`/`le` are Unix timestamps (seconds), as in Polar.
    Date {
        form: FormProperties,
        ge: Option<i64>,
        le: Option<i64>,
    },
    Checkbox {
        form: FormProperties,
    },
    Select {
        form: FormProperties,
        options: Vec<SelectOption>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CustomFieldType {
    Text,
    Number,
    Date,
    Checkbox,
    Select,
}

impl CustomFieldType {
    pub const ALL: &'static [(&'static str, CustomFieldType)] = &[
        ("text", CustomFieldType::Text),
        ("number", CustomFieldType::Number),
        ("date", CustomFieldType::Date),
        ("checkbox", CustomFieldType::Checkbox),
        ("select", CustomFieldType::Select),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CustomFieldType::Text => "text",
            CustomFieldType::Number => "number",
            CustomFieldType::Date => "date",
            CustomFieldType::Checkbox => "checkbox",
            CustomFieldType::Select => "select",
        }
    }
}

impl CustomFieldProperties {
    pub fn kind(&self) -> CustomFieldType {
        match self {
            CustomFieldProperties::Text { .. } => CustomFieldType::Text,
            CustomFieldProperties::Number { .. } => CustomFieldType::Number,
            CustomFieldProperties::Date { .. } => CustomFieldType::Date,
            CustomFieldProperties::Checkbox { .. } => CustomFieldType::Checkbox,
            CustomFieldProperties::Select { .. } => CustomFieldType::Select,
        }
    }
}

impl CustomFieldType {
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// Unique per organization: the lowercased slug. Kept after a soft delete, as Polar's
/// uniqueness check looks at deleted fields too.
pub const CUSTOM_FIELD_SLUG: &str = "custom_field_slug";

// One index per sortable property (Polar's `created_at`, `slug`, `name`, `type`), per
// organization; the `_OF_TYPE` twins are split by type for the `type` filter. Every sort key
// ends with the slug, so ties break the way the default sort orders.
pub const CUSTOM_FIELD_BY_SLUG: &str = "custom_field_by_slug";
pub const CUSTOM_FIELD_BY_CREATED: &str = "custom_field_by_created";
pub const CUSTOM_FIELD_BY_NAME: &str = "custom_field_by_name";
pub const CUSTOM_FIELD_BY_TYPE: &str = "custom_field_by_type";
pub const CUSTOM_FIELD_OF_TYPE_BY_SLUG: &str = "custom_field_of_type_by_slug";
pub const CUSTOM_FIELD_OF_TYPE_BY_CREATED: &str = "custom_field_of_type_by_created";
pub const CUSTOM_FIELD_OF_TYPE_BY_NAME: &str = "custom_field_of_type_by_name";
pub const CUSTOM_FIELD_OF_TYPE_BY_TYPE: &str = "custom_field_of_type_by_type";

/// A property custom field lists sort by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CustomFieldSort {
    CreatedAt,
    Slug,
    Name,
    Type,
}

impl CustomFieldSort {
    /// The index serving this order: over organizations, or over (organization, type) pairs.
    pub fn index_name(self, by_type: bool) -> &'static str {
        match (self, by_type) {
            (CustomFieldSort::Slug, false) => CUSTOM_FIELD_BY_SLUG,
            (CustomFieldSort::CreatedAt, false) => CUSTOM_FIELD_BY_CREATED,
            (CustomFieldSort::Name, false) => CUSTOM_FIELD_BY_NAME,
            (CustomFieldSort::Type, false) => CUSTOM_FIELD_BY_TYPE,
            (CustomFieldSort::Slug, true) => CUSTOM_FIELD_OF_TYPE_BY_SLUG,
            (CustomFieldSort::CreatedAt, true) => CUSTOM_FIELD_OF_TYPE_BY_CREATED,
            (CustomFieldSort::Name, true) => CUSTOM_FIELD_OF_TYPE_BY_NAME,
            (CustomFieldSort::Type, true) => CUSTOM_FIELD_OF_TYPE_BY_TYPE,
        }
    }
}

impl CustomField {
    pub fn kind(&self) -> CustomFieldType {
        self.properties.kind()
    }

    pub fn slug_key(organization_id: OrganizationId, slug: &str) -> UniqueKey {
        UniqueKey::new(
            CUSTOM_FIELD_SLUG,
            organization_id.key(),
            slug.to_lowercase(),
        )
    }

    pub fn type_tenant(org: OrganizationId, kind: CustomFieldType) -> Vec<u8> {
        let mut t = org.key();
        t.push(kind.code());
        t
    }

    /// The sort key of this field in the index of `sort`.
    pub fn sort_key(&self, sort: CustomFieldSort) -> Vec<u8> {
        let k = KeyBuf::new();
        let k = match sort {
            CustomFieldSort::Slug => k,
            CustomFieldSort::CreatedAt => k.i64(self.created_at.timestamp_micros()),
            // Case-folded first, so "apple" and "Banana" sort as people expect (Postgres'
            // collations do the same), then the exact name.
            CustomFieldSort::Name => k.str(&self.name.to_lowercase()).str(&self.name),
            // Polar stores the type as a string column: alphabetical order.
            CustomFieldSort::Type => k.str(self.kind().as_str()),
        };
        k.str(&self.slug).into_vec()
    }
}

const SORTS: [CustomFieldSort; 4] = [
    CustomFieldSort::Slug,
    CustomFieldSort::CreatedAt,
    CustomFieldSort::Name,
    CustomFieldSort::Type,
];

impl Record for CustomField {
    crate::record_v1!(CustomField, "custom_field");
    const INDEXES: &'static [&'static str] = &[
        CUSTOM_FIELD_BY_SLUG,
        CUSTOM_FIELD_BY_CREATED,
        CUSTOM_FIELD_BY_NAME,
        CUSTOM_FIELD_BY_TYPE,
        CUSTOM_FIELD_OF_TYPE_BY_SLUG,
        CUSTOM_FIELD_OF_TYPE_BY_CREATED,
        CUSTOM_FIELD_OF_TYPE_BY_NAME,
        CUSTOM_FIELD_OF_TYPE_BY_TYPE,
    ];
    const UNIQUES: &'static [&'static str] = &[CUSTOM_FIELD_SLUG];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    /// Deleted fields leave every list.
    fn index_entries(&self) -> Vec<IndexEntry> {
        if self.deleted_at.is_some() {
            return Vec::new();
        }
        let org = self.organization_id.key();
        let typed = CustomField::type_tenant(self.organization_id, self.kind());
        SORTS
            .iter()
            .flat_map(|&s| {
                let sort = self.sort_key(s);
                [
                    IndexEntry::new(s.index_name(false), org.clone(), sort.clone()),
                    IndexEntry::new(s.index_name(true), typed.clone(), sort),
                ]
            })
            .collect()
    }

    /// The slug stays taken after a soft delete, as in Polar.
    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![CustomField::slug_key(self.organization_id, &self.slug)]
    }
}

/// The answers a buyer gave to a product's custom fields, keyed by field slug, as stored in
/// checkouts, orders and subscriptions. A tagged enum, because bincode cannot store
/// `serde_json::Value`; rendered as a plain JSON object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomFieldData(pub BTreeMap<String, FieldValue>);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum FieldValue {
    /// An optional field left empty (Polar stores every attached field's key).
    Null,
    Str(String),
    Int(i64),
    Bool(bool),
    /// A date field's value: an RFC 3339 timestamp in UTC (`2024-05-01T00:00:00Z`).
    Date(String),
}

impl FieldValue {
    pub fn to_json(&self) -> Value {
        match self {
            FieldValue::Null => Value::Null,
            FieldValue::Str(s) | FieldValue::Date(s) => Value::from(s.as_str()),
            FieldValue::Int(i) => Value::from(*i),
            FieldValue::Bool(b) => Value::from(*b),
        }
    }
}

impl CustomFieldData {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, slug: &str) -> Option<&FieldValue> {
        self.0.get(slug)
    }

    pub fn to_json(&self) -> Value {
        Value::Object(
            self.0
                .iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect::<Map<_, _>>(),
        )
    }

    /// Moves a value to a field's new slug (Polar rewrites stored data when a slug changes).
    /// Returns whether anything changed.
    pub fn rename_key(&mut self, from: &str, to: &str) -> bool {
        if from == to {
            return false;
        }
        match self.0.remove(from) {
            Some(v) => {
                self.0.insert(to.to_string(), v);
                true
            }
            None => false,
        }
    }
}

/// A custom field to create (`POST /v1/custom-fields/`), its fields checked by the adapter
/// that read it; its slug must still be free in the organization.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCustomField {
    pub slug: String,
    pub name: String,
    pub metadata: Metadata,
    /// Its type is that of the properties.
    pub properties: CustomFieldProperties,
    /// `None`: the organization of the subject's token.
    pub organization_id: Option<uuid::Uuid>,
}

/// A change of a custom field (`PATCH /v1/custom-fields/{id}`): what is `None` stays;
/// `kind` must be the field's.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomFieldChange {
    pub kind: CustomFieldType,
    pub slug: Option<String>,
    pub name: Option<String>,
    pub metadata: Option<Metadata>,
    pub properties: Option<CustomFieldProperties>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn field(slug: &str, name: &str, properties: CustomFieldProperties) -> CustomField {
        CustomField {
            id: CustomFieldId(uuid::Uuid::from_u128(9)),
            organization_id: OrganizationId(uuid::Uuid::from_u128(7)),
            created_at: Utc.timestamp_opt(0, 0).single().unwrap_or_default(),
            modified_at: None,
            slug: slug.into(),
            name: name.into(),
            metadata: Metadata::default(),
            properties,
            deleted_at: None,
        }
    }

    fn text() -> CustomFieldProperties {
        CustomFieldProperties::Text {
            form: FormProperties {
                form_label: Some("Label".into()),
                ..FormProperties::default()
            },
            textarea: Some(true),
            min_length: None,
            max_length: Some(10),
        }
    }

    #[test]
    fn round_trips() {
        let f = field(
            "size",
            "Size",
            CustomFieldProperties::Select {
                form: FormProperties::default(),
                options: vec![SelectOption {
                    value: "s".into(),
                    label: "Small".into(),
                }],
            },
        );
        let bytes = f.encode().unwrap();
        assert_eq!(CustomField::decode(1, &bytes).unwrap(), f);
        let t = field("note", "Note", text());
        assert_eq!(CustomField::decode(1, &t.encode().unwrap()).unwrap(), t);
    }

    #[test]
    fn golden_bytes() {
        let f = field("note", "Note", text());
        let hex: String = f
            .encode()
            .unwrap()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        // Pin the format: id and organization id (len 16 + bytes), created_at, no
        // modified_at, slug, name, empty metadata, then Text { form { label }, textarea
        // Some(true), min_length None, max_length Some(10) }, no deleted_at.
        assert_eq!(
            hex,
            "10000000000000000000000000000000091000000000000000000000000000000007\
             14313937302d30312d30315430303a30303a30305a00046e6f7465044e6f7465\
             000001054c6162656c0000010100011400"
        );
    }

    #[test]
    fn keys_and_indexes() {
        let mut f = field("Note", "Note", text());
        assert_eq!(
            f.unique_keys(),
            vec![UniqueKey::new(
                CUSTOM_FIELD_SLUG,
                f.organization_id.key(),
                "note"
            )]
        );
        let entries = f.index_entries();
        assert_eq!(entries.len(), 8);
        for name in CustomField::INDEXES {
            assert_eq!(entries.iter().filter(|e| e.index == *name).count(), 1);
        }
        f.deleted_at = Some(f.created_at);
        assert!(f.index_entries().is_empty());
        assert_eq!(f.unique_keys().len(), 1, "a deleted field keeps its slug");
    }

    #[test]
    fn sort_keys_order() {
        let a = field("b-slug", "apple", text());
        let b = field("a-slug", "Banana", text());
        assert!(a.sort_key(CustomFieldSort::Name) < b.sort_key(CustomFieldSort::Name));
        assert!(b.sort_key(CustomFieldSort::Slug) < a.sort_key(CustomFieldSort::Slug));
        let check = field(
            "z",
            "z",
            CustomFieldProperties::Checkbox {
                form: FormProperties::default(),
            },
        );
        // Alphabetical by type name: checkbox < text.
        assert!(check.sort_key(CustomFieldSort::Type) < a.sort_key(CustomFieldSort::Type));
        let expected = KeyBuf::new().str("b-slug").into_vec();
        assert_eq!(a.sort_key(CustomFieldSort::Slug), expected);
    }

    #[test]
    fn data_renders_and_renames() {
        let mut d = CustomFieldData::default();
        d.0.insert("a".into(), FieldValue::Str("x".into()));
        d.0.insert("b".into(), FieldValue::Int(3));
        d.0.insert("c".into(), FieldValue::Bool(true));
        d.0.insert("d".into(), FieldValue::Date("2024-05-01T00:00:00Z".into()));
        d.0.insert("e".into(), FieldValue::Null);
        assert_eq!(
            d.to_json(),
            serde_json::json!({"a": "x", "b": 3, "c": true, "d": "2024-05-01T00:00:00Z", "e": null})
        );
        assert!(d.rename_key("a", "z"));
        assert!(!d.rename_key("missing", "y"));
        assert_eq!(d.get("z"), Some(&FieldValue::Str("x".into())));
        let bytes = tollgate_storage::codec::encode(&d).unwrap();
        let back: CustomFieldData =
            tollgate_storage::codec::decode("custom_field_data", 1, &bytes).unwrap();
        assert_eq!(back, d);
    }
}
