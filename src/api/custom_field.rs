//! Custom fields in Polar's shapes: `CustomFieldCreate` / `CustomFieldUpdate` (discriminated
//! unions on `type`) and the `CustomField` / `AttachedCustomField` views.
//!
//! Bodies are read from the raw JSON rather than through serde, so that every problem is
//! reported at once with pydantic's error types, and with pydantic's `loc` for tagged unions:
//! the tag follows `body` (`["body", "text", "slug"]`). Polar's own checks (organization,
//! duplicate slug, type change) use `["body", <field>]`, as Polar raises them. The parsed
//! bodies derive only their schema: its keys are the ones the parser reads.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use super::custom_field_data::{lax_bool, lax_int, strict_str, Rejection};
use super::metadata::{metadata_map, MetadataMap};
use crate::domain::custom_field::{
    CustomField, CustomFieldChange, CustomFieldProperties, CustomFieldType, FormProperties,
    NewCustomField, SelectOption,
};
use crate::domain::metadata::Metadata;
use crate::error::{ApiError, FieldError};

/// Polar's slug pattern (`custom_field/schemas.py`). pydantic checks it before lowercasing,
/// so upper-case letters are refused.
pub const SLUG_PATTERN: &str = "^[a-z0-9-_]+$";

/// Creates a custom field; `type` picks the keys of `properties`.
// The parsed, schema-valid body (read by [`parse_create`]).
#[derive(Debug, Clone, PartialEq, ToSchema)]
pub struct CustomFieldCreate {
    #[serde(rename = "type")]
    #[schema(value_type = CustomFieldTypeView)]
    pub kind: CustomFieldType,
    pub slug: String,
    pub name: String,
    #[schema(value_type = crate::api::free_form::Metadata, required = false)]
    pub metadata: Metadata,
    // The keys of the field's `type` (those of `CustomFieldProperties`).
    #[schema(value_type = Object)]
    pub properties: CustomFieldProperties,
    #[schema(nullable = false)]
    pub organization_id: Option<Uuid>,
}

/// Updates a custom field; `type` must be the field's. A field left out or `null` is
/// unchanged.
// The parsed, schema-valid body (read by [`parse_update`]).
#[derive(Debug, Clone, PartialEq, ToSchema)]
pub struct CustomFieldUpdate {
    #[serde(rename = "type")]
    #[schema(value_type = CustomFieldTypeView)]
    pub kind: CustomFieldType,
    pub slug: Option<String>,
    pub name: Option<String>,
    #[schema(value_type = Option<crate::api::free_form::Metadata>)]
    pub metadata: Option<Metadata>,
    #[schema(value_type = Option<Object>)]
    pub properties: Option<CustomFieldProperties>,
}

/// Collects errors while reading one body.
struct Reader {
    errors: Vec<FieldError>,
}

fn at(base: &[Value], key: impl Into<Value>) -> Vec<Value> {
    let mut loc = base.to_vec();
    loc.push(key.into());
    loc
}

impl Reader {
    fn new() -> Self {
        Self { errors: Vec::new() }
    }

    fn reject(&mut self, (kind, msg): Rejection, loc: Vec<Value>, input: &Value) {
        self.errors
            .push(FieldError::new(kind, loc, msg, input.clone()));
    }

    fn missing(&mut self, loc: Vec<Value>, container: &Value) {
        self.errors.push(FieldError::new(
            "missing",
            loc,
            "Field required",
            container.clone(),
        ));
    }

    fn too_short(&mut self, loc: Vec<Value>, input: &str, min: usize) {
        let unit = if min == 1 { "character" } else { "characters" };
        self.errors.push(
            FieldError::new(
                "string_too_short",
                loc,
                format!("String should have at least {min} {unit}"),
                Value::from(input),
            )
            .with_ctx(json!({ "min_length": min })),
        );
    }

    /// A string of at least `min` characters.
    fn string(&mut self, loc: Vec<Value>, v: &Value, min: usize) -> Option<String> {
        match strict_str(v) {
            Ok(s) if s.chars().count() < min => {
                self.too_short(loc, s, min);
                None
            }
            Ok(s) => Some(s.to_string()),
            Err(r) => {
                self.reject(r, loc, v);
                None
            }
        }
    }

    fn int(&mut self, loc: Vec<Value>, v: &Value, min: Option<i64>) -> Option<i64> {
        match lax_int(v) {
            Ok(i) => match min {
                Some(m) if i < m => {
                    self.errors.push(
                        FieldError::new(
                            "greater_than_equal",
                            loc,
                            format!("Input should be greater than or equal to {m}"),
                            v.clone(),
                        )
                        .with_ctx(json!({ "ge": m })),
                    );
                    None
                }
                _ => Some(i),
            },
            Err(r) => {
                self.reject(r, loc, v);
                None
            }
        }
    }

    fn bool(&mut self, loc: Vec<Value>, v: &Value) -> Option<bool> {
        match lax_bool(v) {
            Ok(b) => Some(b),
            Err(r) => {
                self.reject(r, loc, v);
                None
            }
        }
    }

    fn slug(&mut self, loc: Vec<Value>, v: &Value) -> Option<String> {
        let s = self.string(loc.clone(), v, 1)?;
        let ok = s
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !ok {
            self.errors.push(
                FieldError::new(
                    "string_pattern_mismatch",
                    loc,
                    format!("String should match pattern '{SLUG_PATTERN}'"),
                    v.clone(),
                )
                .with_ctx(json!({ "pattern": SLUG_PATTERN })),
            );
            return None;
        }
        Some(s.to_lowercase())
    }

    fn metadata(&mut self, base: &[Value], v: &Value) -> Option<Metadata> {
        match super::metadata::parse_metadata("metadata", v) {
            Ok(m) => Some(m),
            Err(items) => {
                // parse_metadata names ["body", "metadata", ...]; put the tag after "body".
                for mut e in items {
                    let rest: Vec<Value> = e.loc.iter().skip(1).cloned().collect();
                    let mut loc = base.to_vec();
                    loc.extend(rest);
                    e.loc = loc;
                    self.errors.push(e);
                }
                None
            }
        }
    }

    fn organization_id(&mut self, loc: Vec<Value>, v: &Value) -> Option<uuid::Uuid> {
        match v {
            Value::Null => None,
            Value::String(s) => match uuid::Uuid::parse_str(s) {
                Ok(id) if id.get_version_num() == 4 => Some(id),
                Ok(_) => {
                    self.errors.push(
                        FieldError::new("uuid_version", loc, "UUID version 4 expected", v.clone())
                            .with_ctx(json!({"expected_version": 4})),
                    );
                    None
                }
                Err(e) => {
                    self.errors.push(FieldError::new(
                        "uuid_parsing",
                        loc,
                        format!("Input should be a valid UUID, {e}"),
                        v.clone(),
                    ));
                    None
                }
            },
            _ => {
                self.errors.push(FieldError::new(
                    "uuid_type",
                    loc,
                    "UUID input should be a string, bytes or UUID object",
                    v.clone(),
                ));
                None
            }
        }
    }

    /// The `properties` TypedDict of a field type. Unknown keys are ignored.
    fn properties(
        &mut self,
        kind: CustomFieldType,
        base: &[Value],
        v: &Value,
    ) -> Option<CustomFieldProperties> {
        let Value::Object(map) = v else {
            self.errors.push(FieldError::new(
                "dict_type",
                base.to_vec(),
                "Input should be a valid dictionary",
                v.clone(),
            ));
            return None;
        };
        let before = self.errors.len();
        let mut form = FormProperties::default();
        for (key, slot) in [
            ("form_label", &mut form.form_label),
            ("form_help_text", &mut form.form_help_text),
            ("form_placeholder", &mut form.form_placeholder),
        ] {
            if let Some(x) = map.get(key) {
                *slot = self.string(at(base, key), x, 1);
            }
        }
        let int = |r: &mut Reader, key: &str, min: Option<i64>| {
            map.get(key).and_then(|x| r.int(at(base, key), x, min))
        };
        let properties = match kind {
            CustomFieldType::Text => {
                let textarea = map
                    .get("textarea")
                    .and_then(|x| self.bool(at(base, "textarea"), x));
                let min_length = int(self, "min_length", Some(0));
                let max_length = int(self, "max_length", Some(0));
                CustomFieldProperties::Text {
                    form,
                    textarea,
                    min_length,
                    max_length,
                }
            }
            CustomFieldType::Number | CustomFieldType::Date => {
                let ge = int(self, "ge", None);
                let le = int(self, "le", None);
                if kind == CustomFieldType::Number {
                    CustomFieldProperties::Number { form, ge, le }
                } else {
                    CustomFieldProperties::Date { form, ge, le }
                }
            }
            CustomFieldType::Checkbox => CustomFieldProperties::Checkbox { form },
            CustomFieldType::Select => {
                let options = match map.get("options") {
                    None => {
                        self.missing(at(base, "options"), v);
                        Vec::new()
                    }
                    Some(list) => self.options(&at(base, "options"), list),
                };
                CustomFieldProperties::Select { form, options }
            }
        };
        (self.errors.len() == before).then_some(properties)
    }

    fn options(&mut self, base: &[Value], v: &Value) -> Vec<SelectOption> {
        let Value::Array(items) = v else {
            self.errors.push(FieldError::new(
                "list_type",
                base.to_vec(),
                "Input should be a valid list",
                v.clone(),
            ));
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let loc = at(base, i);
            let Value::Object(o) = item else {
                self.errors.push(FieldError::new(
                    "dict_type",
                    loc,
                    "Input should be a valid dictionary",
                    item.clone(),
                ));
                continue;
            };
            let mut read = |key: &str| match o.get(key) {
                None => {
                    self.missing(at(&loc, key), item);
                    None
                }
                Some(x) => self.string(at(&loc, key), x, 1),
            };
            let value = read("value");
            let label = read("label");
            if let (Some(value), Some(label)) = (value, label) {
                out.push(SelectOption { value, label });
            }
        }
        out
    }

    fn finish<T>(self, value: Option<T>) -> Result<T, Vec<FieldError>> {
        match value {
            Some(v) if self.errors.is_empty() => Ok(v),
            _ => Err(self.errors),
        }
    }
}

const TAGS: &str = "'text', 'number', 'date', 'checkbox', 'select'";

/// The discriminator: `type` must name a field type.
fn tag(body: &Value) -> Result<CustomFieldType, Vec<FieldError>> {
    let Value::Object(map) = body else {
        return Err(vec![FieldError::new(
            "model_attributes_type",
            crate::loc!["body"],
            "Input should be a valid dictionary or object to extract fields from",
            body.clone(),
        )]);
    };
    let Some(raw) = map.get("type") else {
        return Err(vec![FieldError::new(
            "union_tag_not_found",
            crate::loc!["body"],
            "Unable to extract tag using discriminator 'type'",
            body.clone(),
        )
        .with_ctx(json!({"discriminator": "'type'"}))]);
    };
    let text = match raw {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match CustomFieldType::ALL.iter().find(|(n, _)| *n == text) {
        Some((_, kind)) => Ok(*kind),
        None => Err(vec![FieldError::new(
            "union_tag_invalid",
            crate::loc!["body"],
            format!(
                "Input tag '{text}' found using 'type' does not match any of the expected tags: {TAGS}"
            ),
            body.clone(),
        )
        .with_ctx(json!({"discriminator": "'type'", "tag": text, "expected_tags": TAGS}))]),
    }
}

/// The command of a create body, or its 422.
pub fn new_custom_field(body: &Value) -> Result<NewCustomField, ApiError> {
    let c = parse_create(body).map_err(ApiError::Validation)?;
    Ok(NewCustomField {
        slug: c.slug,
        name: c.name,
        metadata: c.metadata,
        properties: c.properties,
        organization_id: c.organization_id,
    })
}

/// The command of an update body, or its 422.
pub fn custom_field_change(body: &Value) -> Result<CustomFieldChange, ApiError> {
    let u = parse_update(body).map_err(ApiError::Validation)?;
    Ok(CustomFieldChange {
        kind: u.kind,
        slug: u.slug,
        name: u.name,
        metadata: u.metadata,
        properties: u.properties,
    })
}

/// Parses a `CustomFieldCreate` body, reporting every schema error.
pub fn parse_create(body: &Value) -> Result<CustomFieldCreate, Vec<FieldError>> {
    let kind = tag(body)?;
    let base = crate::loc!["body", kind.as_str()];
    let mut r = Reader::new();
    let field = |k: &str| body.get(k);
    let metadata = match field("metadata") {
        None => Some(Metadata::default()),
        Some(v) => r.metadata(&base, v),
    };
    let slug = match field("slug") {
        None => {
            r.missing(at(&base, "slug"), body);
            None
        }
        Some(v) => r.slug(at(&base, "slug"), v),
    };
    let name = match field("name") {
        None => {
            r.missing(at(&base, "name"), body);
            None
        }
        Some(v) => r.string(at(&base, "name"), v, 1),
    };
    let organization_id =
        field("organization_id").and_then(|v| r.organization_id(at(&base, "organization_id"), v));
    let properties = match field("properties") {
        None => {
            r.missing(at(&base, "properties"), body);
            None
        }
        Some(v) => r.properties(kind, &at(&base, "properties"), v),
    };
    let parsed = match (metadata, slug, name, properties) {
        (Some(metadata), Some(slug), Some(name), Some(properties)) => Some(CustomFieldCreate {
            kind,
            slug,
            name,
            organization_id,
            metadata,
            properties,
        }),
        _ => None,
    };
    r.finish(parsed)
}

/// Parses a `CustomFieldUpdate` body, reporting every schema error.
pub fn parse_update(body: &Value) -> Result<CustomFieldUpdate, Vec<FieldError>> {
    let kind = tag(body)?;
    let base = crate::loc!["body", kind.as_str()];
    let mut r = Reader::new();
    let sent = |k: &str| body.get(k).filter(|v| !v.is_null());
    let metadata = sent("metadata").and_then(|v| r.metadata(&base, v));
    let name = sent("name").and_then(|v| r.string(at(&base, "name"), v, 1));
    let slug = sent("slug").and_then(|v| r.slug(at(&base, "slug"), v));
    let properties =
        sent("properties").and_then(|v| r.properties(kind, &at(&base, "properties"), v));
    r.finish(Some(CustomFieldUpdate {
        kind,
        slug,
        name,
        metadata,
        properties,
    }))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = CustomFieldType)]
pub enum CustomFieldTypeView {
    Text,
    Number,
    Date,
    Checkbox,
    Select,
}

impl From<CustomFieldType> for CustomFieldTypeView {
    fn from(t: CustomFieldType) -> Self {
        match t {
            CustomFieldType::Text => CustomFieldTypeView::Text,
            CustomFieldType::Number => CustomFieldTypeView::Number,
            CustomFieldType::Date => CustomFieldTypeView::Date,
            CustomFieldType::Checkbox => CustomFieldTypeView::Checkbox,
            CustomFieldType::Select => CustomFieldTypeView::Select,
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CustomFieldSelectOption {
    pub value: String,
    pub label: String,
}

/// The properties of a field; which keys appear depends on `type`, unset ones are left
/// out (Polar stores them as a JSON object holding the keys it was given).
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
#[schema(as = CustomFieldProperties)]
pub struct CustomFieldPropertiesView {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub form_label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub form_help_text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub form_placeholder: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub textarea: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub min_length: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub max_length: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub ge: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub le: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub options: Option<Vec<CustomFieldSelectOption>>,
}

impl From<&CustomFieldProperties> for CustomFieldPropertiesView {
    fn from(p: &CustomFieldProperties) -> Self {
        let form = match p {
            CustomFieldProperties::Text { form, .. }
            | CustomFieldProperties::Number { form, .. }
            | CustomFieldProperties::Date { form, .. }
            | CustomFieldProperties::Checkbox { form }
            | CustomFieldProperties::Select { form, .. } => form,
        };
        let view = CustomFieldPropertiesView {
            form_label: form.form_label.clone(),
            form_help_text: form.form_help_text.clone(),
            form_placeholder: form.form_placeholder.clone(),
            ..CustomFieldPropertiesView::default()
        };
        match p {
            CustomFieldProperties::Text {
                textarea,
                min_length,
                max_length,
                ..
            } => CustomFieldPropertiesView {
                textarea: *textarea,
                min_length: *min_length,
                max_length: *max_length,
                ..view
            },
            CustomFieldProperties::Number { ge, le, .. }
            | CustomFieldProperties::Date { ge, le, .. } => CustomFieldPropertiesView {
                ge: *ge,
                le: *le,
                ..view
            },
            CustomFieldProperties::Checkbox { .. } => view,
            CustomFieldProperties::Select { options, .. } => CustomFieldPropertiesView {
                options: Some(
                    options
                        .iter()
                        .map(|o| CustomFieldSelectOption {
                            value: o.value.clone(),
                            label: o.label.clone(),
                        })
                        .collect(),
                ),
                ..view
            },
        }
    }
}

/// The `CustomField` schema. Products and checkouts embed it in `attached_custom_fields`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = CustomField)]
pub struct CustomFieldView {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub metadata: MetadataMap,
    #[serde(rename = "type")]
    pub kind: CustomFieldTypeView,
    pub slug: String,
    pub name: String,
    pub organization_id: Uuid,
    pub properties: CustomFieldPropertiesView,
}

impl From<&CustomField> for CustomFieldView {
    fn from(cf: &CustomField) -> Self {
        CustomFieldView {
            id: cf.id.0,
            created_at: cf.created_at,
            modified_at: cf.modified_at,
            metadata: metadata_map(&cf.metadata),
            kind: cf.kind().into(),
            slug: cf.slug.clone(),
            name: cf.name.clone(),
            organization_id: cf.organization_id.0,
            properties: (&cf.properties).into(),
        }
    }
}

/// The `AttachedCustomField` schema: a field as a product attaches it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = AttachedCustomField)]
pub struct AttachedCustomFieldView {
    pub custom_field_id: Uuid,
    pub custom_field: CustomFieldView,
    pub order: i64,
    pub required: bool,
}

impl AttachedCustomFieldView {
    pub fn new(cf: &CustomField, order: i64, required: bool) -> Self {
        AttachedCustomFieldView {
            custom_field_id: cf.id.0,
            custom_field: cf.into(),
            order,
            required,
        }
    }
}

#[cfg(test)]
pub(crate) fn sample_custom_fields() -> Vec<CustomField> {
    use chrono::TimeZone;

    use crate::domain::ids::{CustomFieldId, OrganizationId};

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let field = |n: u128, slug: &str, properties| CustomField {
        id: CustomFieldId(Uuid::from_u128(0xcf00 + n)),
        organization_id: OrganizationId(Uuid::from_u128(0x0a)),
        created_at: now,
        modified_at: None,
        slug: slug.into(),
        name: slug.to_uppercase(),
        metadata: Metadata::default(),
        properties,
        deleted_at: None,
    };
    let form = FormProperties {
        form_label: Some("Your answer".into()),
        ..FormProperties::default()
    };
    vec![
        field(
            1,
            "company",
            CustomFieldProperties::Text {
                form: form.clone(),
                textarea: Some(false),
                min_length: Some(1),
                max_length: None,
            },
        ),
        field(
            2,
            "seats",
            CustomFieldProperties::Number {
                form: FormProperties::default(),
                ge: Some(1),
                le: Some(100),
            },
        ),
        field(
            3,
            "size",
            CustomFieldProperties::Select {
                form,
                options: vec![SelectOption {
                    value: "s".into(),
                    label: "Small".into(),
                }],
            },
        ),
        field(
            4,
            "terms",
            CustomFieldProperties::Checkbox {
                form: FormProperties::default(),
            },
        ),
    ]
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    for (i, cf) in sample_custom_fields().iter().enumerate() {
        out.push((
            "CustomField",
            serde_json::to_value(CustomFieldView::from(cf)).unwrap_or_default(),
        ));
        out.push((
            "AttachedCustomField",
            serde_json::to_value(AttachedCustomFieldView::new(
                cf,
                i as i64,
                i.is_multiple_of(2),
            ))
            .unwrap_or_default(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(extra: Value) -> Value {
        let mut b =
            json!({"type": "text", "slug": "my-field", "name": "My field", "properties": {}});
        if let (Value::Object(b), Value::Object(extra)) = (&mut b, extra) {
            for (k, v) in extra {
                b.insert(k, v);
            }
        }
        b
    }

    fn errors(body: Value) -> Vec<FieldError> {
        parse_create(&body).expect_err("should fail")
    }

    /// Polar's `test_invalid_create` cases.
    #[test]
    fn custom_field_create_rejects_polars_invalid_cases() {
        for (extra, loc) in [
            (json!({"slug": ""}), crate::loc!["body", "text", "slug"]),
            (
                json!({"slug": "aaa bbb"}),
                crate::loc!["body", "text", "slug"],
            ),
            (json!({"slug": "888!"}), crate::loc!["body", "text", "slug"]),
            (json!({"name": ""}), crate::loc!["body", "text", "name"]),
            (
                json!({"properties": {"form_label": ""}}),
                crate::loc!["body", "text", "properties", "form_label"],
            ),
            (
                json!({"properties": {"form_help_text": ""}}),
                crate::loc!["body", "text", "properties", "form_help_text"],
            ),
            (
                json!({"properties": {"form_placeholder": ""}}),
                crate::loc!["body", "text", "properties", "form_placeholder"],
            ),
            (
                json!({"properties": {"min_length": -1}}),
                crate::loc!["body", "text", "properties", "min_length"],
            ),
            (
                json!({"properties": {"max_length": -1}}),
                crate::loc!["body", "text", "properties", "max_length"],
            ),
            (
                json!({"type": "select", "properties": {}}),
                crate::loc!["body", "select", "properties", "options"],
            ),
            (
                json!({"type": "select", "properties": {"options": [{"k": "a", "v": "b"}]}}),
                crate::loc!["body", "select", "properties", "options", 0, "value"],
            ),
        ] {
            let e = errors(base(extra.clone()));
            assert_eq!(e[0].loc, loc, "{extra}: {e:?}");
        }
    }

    /// Polar's `test_valid_create` cases.
    #[test]
    fn custom_field_create_accepts_polars_valid_cases() {
        for (extra, kind) in [
            (json!({}), CustomFieldType::Text),
            (json!({"type": "number"}), CustomFieldType::Number),
            (json!({"type": "date"}), CustomFieldType::Date),
            (json!({"type": "checkbox"}), CustomFieldType::Checkbox),
            (
                json!({"type": "select", "properties": {"options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}]}}),
                CustomFieldType::Select,
            ),
            (json!({"slug": "valid_slug"}), CustomFieldType::Text),
            (json!({"slug": "_valid_slug2"}), CustomFieldType::Text),
        ] {
            let c = parse_create(&base(extra.clone())).unwrap_or_else(|e| panic!("{extra}: {e:?}"));
            assert_eq!(c.kind, kind);
            assert_eq!(c.properties.kind(), kind);
        }
    }

    #[test]
    fn custom_field_slug_messages() {
        let e = errors(base(json!({"slug": "Upper"})));
        assert_eq!(e[0].kind, "string_pattern_mismatch");
        assert_eq!(e[0].msg, "String should match pattern '^[a-z0-9-_]+$'");
        assert_eq!(e[0].input, json!("Upper"));
        let e = errors(base(json!({"slug": ""})));
        assert_eq!(e[0].kind, "string_too_short");
        assert_eq!(e[0].msg, "String should have at least 1 character");
        let e = errors(base(json!({"slug": 3})));
        assert_eq!(e[0].kind, "string_type");
    }

    #[test]
    fn custom_field_create_reports_every_error() {
        let e = errors(
            json!({"type": "text", "name": "", "properties": {"min_length": "x"}, "metadata": {"k".repeat(41): 1}}),
        );
        let locs: Vec<Value> = e.iter().map(|e| Value::Array(e.loc.clone())).collect();
        assert_eq!(
            locs,
            vec![
                json!(["body", "text", "metadata", "k".repeat(41), "[key]"]),
                json!(["body", "text", "slug"]),
                json!(["body", "text", "name"]),
                json!(["body", "text", "properties", "min_length"]),
            ]
        );
        assert_eq!(e[1].kind, "missing");
        assert_eq!(e[3].kind, "int_parsing");
    }

    #[test]
    fn custom_field_discriminator_errors() {
        let e = errors(json!({"slug": "a"}));
        assert_eq!(e[0].kind, "union_tag_not_found");
        assert_eq!(e[0].loc, crate::loc!["body"]);
        let e = errors(json!({"type": "color", "slug": "a"}));
        assert_eq!(e[0].kind, "union_tag_invalid");
        assert_eq!(
            e[0].msg,
            "Input tag 'color' found using 'type' does not match any of the expected tags: 'text', 'number', 'date', 'checkbox', 'select'"
        );
    }

    #[test]
    fn custom_field_organization_id_rules() {
        let id = uuid::Uuid::new_v4();
        let c = parse_create(&base(json!({"organization_id": id.to_string()}))).unwrap();
        assert_eq!(c.organization_id, Some(id));
        assert_eq!(
            parse_create(&base(json!({"organization_id": null})))
                .unwrap()
                .organization_id,
            None
        );
        assert_eq!(
            errors(base(json!({"organization_id": "nope"})))[0].kind,
            "uuid_parsing"
        );
        assert_eq!(
            errors(base(
                json!({"organization_id": "00000000-0000-0000-0000-000000000001"})
            ))[0]
                .kind,
            "uuid_version"
        );
        assert_eq!(
            errors(base(json!({"organization_id": 5})))[0].kind,
            "uuid_type"
        );
    }

    #[test]
    fn custom_field_update_parsing() {
        let u = parse_update(&json!({"type": "number"})).unwrap();
        assert_eq!(
            u,
            CustomFieldUpdate {
                kind: CustomFieldType::Number,
                slug: None,
                name: None,
                metadata: None,
                properties: None
            }
        );
        let u = parse_update(&json!({"type": "number", "name": null, "slug": "x", "properties": {"ge": 1}, "metadata": {"a": true}})).unwrap();
        assert_eq!(u.slug.as_deref(), Some("x"));
        assert_eq!(u.name, None);
        assert!(u.metadata.is_some());
        assert!(matches!(
            u.properties,
            Some(CustomFieldProperties::Number {
                ge: Some(1),
                le: None,
                ..
            })
        ));
        let e = parse_update(&json!({"type": "text", "name": "", "slug": "A"})).unwrap_err();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].loc, crate::loc!["body", "text", "name"]);
    }

    #[test]
    fn custom_field_renders_only_set_properties() {
        let fields = sample_custom_fields();
        let v = serde_json::to_value(CustomFieldView::from(&fields[0])).unwrap();
        assert_eq!(v["type"], "text");
        assert_eq!(
            v["properties"],
            json!({"form_label": "Your answer", "textarea": false, "min_length": 1})
        );
        assert_eq!(v["metadata"], json!({}));
        assert_eq!(v["modified_at"], Value::Null);
        assert_eq!(v["organization_id"], "00000000-0000-0000-0000-00000000000a");
        let a = serde_json::to_value(AttachedCustomFieldView::new(&fields[0], 3, true)).unwrap();
        assert_eq!(a["custom_field_id"], v["id"]);
        assert_eq!(a["custom_field"], v);
        assert_eq!(
            (a["order"].clone(), a["required"].clone()),
            (json!(3), json!(true))
        );
        let properties = |cf: &CustomField| {
            serde_json::to_value(CustomFieldPropertiesView::from(&cf.properties)).unwrap()
        };
        assert_eq!(properties(&fields[1]), json!({"ge": 1, "le": 100}));
        assert_eq!(
            properties(&fields[2]),
            json!({"form_label": "Your answer", "options": [{"value": "s", "label": "Small"}]})
        );
        assert_eq!(properties(&fields[3]), json!({}));
    }

    #[test]
    fn samples_cover_every_shape() {
        let samples = samples();
        let names: std::collections::BTreeSet<&str> = samples.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            ["AttachedCustomField", "CustomField"].into_iter().collect()
        );
        assert!(samples.iter().all(|(_, v)| v.is_object()));
    }
}
