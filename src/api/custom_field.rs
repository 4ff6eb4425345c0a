//! Custom fields in Polar's shapes: `CustomFieldCreate` / `CustomFieldUpdate` (discriminated
//! unions on `type`) and the `CustomField` output schema.
//!
//! Bodies are read from the raw JSON rather than through serde, so that every problem is
//! reported at once with pydantic's error types, and with pydantic's `loc` for tagged unions:
//! the tag follows `body` (`["body", "text", "slug"]`). Polar's own checks (organization,
//! duplicate slug, type change) use `["body", <field>]`, as Polar raises them.

use serde_json::{json, Map, Value};

use super::custom_field_data::{lax_bool, lax_int, strict_str, Rejection};
use crate::domain::custom_field::{
    CustomField, CustomFieldProperties, CustomFieldType, FormProperties, SelectOption,
};
use crate::domain::metadata::Metadata;
use crate::error::FieldError;

/// Polar's slug pattern (`custom_field/schemas.py`). pydantic checks it before lowercasing,
/// so upper-case letters are refused.
pub const SLUG_PATTERN: &str = "^[a-z0-9-_]+$";

/// A parsed, schema-valid `CustomFieldCreate`.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomFieldCreate {
    pub kind: CustomFieldType,
    pub slug: String,
    pub name: String,
    pub organization_id: Option<uuid::Uuid>,
    pub metadata: Metadata,
    pub properties: CustomFieldProperties,
}

/// A parsed, schema-valid `CustomFieldUpdate`: `None` leaves a field unchanged (an explicit
/// `null` counts as not sent).
#[derive(Debug, Clone, PartialEq)]
pub struct CustomFieldUpdate {
    pub kind: CustomFieldType,
    pub slug: Option<String>,
    pub name: Option<String>,
    pub metadata: Option<Metadata>,
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

/// A field's `properties` with only the keys that are set, as Polar stores them.
pub fn properties_json(p: &CustomFieldProperties) -> Value {
    let mut m = Map::new();
    let form = match p {
        CustomFieldProperties::Text { form, .. }
        | CustomFieldProperties::Number { form, .. }
        | CustomFieldProperties::Date { form, .. }
        | CustomFieldProperties::Checkbox { form }
        | CustomFieldProperties::Select { form, .. } => form,
    };
    for (key, value) in [
        ("form_label", &form.form_label),
        ("form_help_text", &form.form_help_text),
        ("form_placeholder", &form.form_placeholder),
    ] {
        if let Some(v) = value {
            m.insert(key.into(), Value::from(v.as_str()));
        }
    }
    let put_int = |m: &mut Map<String, Value>, key: &str, v: &Option<i64>| {
        if let Some(v) = v {
            m.insert(key.into(), Value::from(*v));
        }
    };
    match p {
        CustomFieldProperties::Text {
            textarea,
            min_length,
            max_length,
            ..
        } => {
            if let Some(t) = textarea {
                m.insert("textarea".into(), Value::from(*t));
            }
            put_int(&mut m, "min_length", min_length);
            put_int(&mut m, "max_length", max_length);
        }
        CustomFieldProperties::Number { ge, le, .. }
        | CustomFieldProperties::Date { ge, le, .. } => {
            put_int(&mut m, "ge", ge);
            put_int(&mut m, "le", le);
        }
        CustomFieldProperties::Checkbox { .. } => {}
        CustomFieldProperties::Select { options, .. } => {
            m.insert(
                "options".into(),
                Value::Array(
                    options
                        .iter()
                        .map(|o| json!({"value": o.value, "label": o.label}))
                        .collect(),
                ),
            );
        }
    }
    Value::Object(m)
}

/// The `CustomField` schema (the variant named by `type`). Products and checkouts embed it
/// in `attached_custom_fields`.
pub fn custom_field_json(cf: &CustomField) -> Value {
    json!({
        "created_at": cf.created_at,
        "modified_at": cf.modified_at,
        "id": cf.id.0,
        "metadata": cf.metadata.to_json(),
        "type": cf.kind().as_str(),
        "slug": cf.slug,
        "name": cf.name,
        "organization_id": cf.organization_id.0,
        "properties": properties_json(&cf.properties),
    })
}

/// One `AttachedCustomField`: `{custom_field_id, custom_field, order, required}`.
pub fn attached_custom_field_json(cf: &CustomField, order: i64, required: bool) -> Value {
    json!({
        "custom_field_id": cf.id.0,
        "custom_field": custom_field_json(cf),
        "order": order,
        "required": required,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    use crate::domain::ids::{CustomFieldId, OrganizationId};

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
        let cf = CustomField {
            id: CustomFieldId(uuid::Uuid::from_u128(1)),
            organization_id: OrganizationId(uuid::Uuid::from_u128(2)),
            created_at: Utc.timestamp_opt(0, 0).single().unwrap_or_default(),
            modified_at: None,
            slug: "size".into(),
            name: "Size".into(),
            metadata: Metadata::default(),
            properties: CustomFieldProperties::Text {
                form: FormProperties {
                    form_label: Some("Your size".into()),
                    ..FormProperties::default()
                },
                textarea: None,
                min_length: Some(0),
                max_length: None,
            },
            deleted_at: None,
        };
        let v = custom_field_json(&cf);
        assert_eq!(v["type"], "text");
        assert_eq!(
            v["properties"],
            json!({"form_label": "Your size", "min_length": 0})
        );
        assert_eq!(v["metadata"], json!({}));
        assert_eq!(v["modified_at"], Value::Null);
        assert_eq!(v["organization_id"], "00000000-0000-0000-0000-000000000002");
        let a = attached_custom_field_json(&cf, 3, true);
        assert_eq!(a["custom_field_id"], v["id"]);
        assert_eq!(a["custom_field"], v);
        assert_eq!(
            (a["order"].clone(), a["required"].clone()),
            (json!(3), json!(true))
        );
        let select = CustomFieldProperties::Select {
            form: FormProperties::default(),
            options: vec![SelectOption {
                value: "s".into(),
                label: "S".into(),
            }],
        };
        assert_eq!(
            properties_json(&select),
            json!({"options": [{"value": "s", "label": "S"}]})
        );
        assert_eq!(
            properties_json(&CustomFieldProperties::Checkbox {
                form: FormProperties::default()
            }),
            json!({})
        );
    }
}
