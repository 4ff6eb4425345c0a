use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

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
