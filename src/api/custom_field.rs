//! Custom fields in Polar's shapes: `CustomFieldCreate` / `CustomFieldUpdate` (discriminated
//! unions on `type`) and the `CustomField` / `AttachedCustomField` views.
//!
//! Bodies are read from the raw JSON rather than through serde, so that every problem is
//! reported at once with pydantic's error types, and with pydantic's `loc` for tagged unions:
//! the tag follows `body` (`["body", "text", "slug"]`). Polar's own checks (organization,
//! duplicate slug, type change) use `["body", <field>]`, as Polar raises them. The body
//! structs derive only their schema: its keys are the ones the parser reads.
//!
//! Two steps: a body is read into a typed [`CustomFieldInput`] / [`CustomFieldChangeInput`]
//! (each value of its type, pydantic's coercions), and that input's `into_command` holds
//! every rule and message. The dashboard's forms build the input directly and call the same
//! rules; over JSON, the problems of both steps are told together in the body's order.

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
use crate::error::{ApiError, AppError, FieldError, Given, Invalid, Step};
use crate::field;

/// Polar's slug pattern (`custom_field/schemas.py`). pydantic checks it before lowercasing,
/// so upper-case letters are refused.
pub const SLUG_PATTERN: &str = "^[a-z0-9-_]+$";

/// Creates a custom field; `type` picks the keys of `properties`.
// The schema of the body (read into a [`CustomFieldInput`] by [`new_custom_field`]).
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
// The schema of the body (read into a [`CustomFieldChangeInput`] by [`custom_field_change`]).
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

// ---------------------------------------------------------------------------------------
// A custom field as given (typed, not yet checked) and its rules
// ---------------------------------------------------------------------------------------

/// The properties of a field as given, before their rules: each key with the value it was
/// given (`None`: not given). The keys that the field's type does not have are ignored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PropertiesInput {
    pub form_label: Option<String>,
    pub form_help_text: Option<String>,
    pub form_placeholder: Option<String>,
    pub textarea: Option<bool>,
    pub min_length: Option<i64>,
    pub max_length: Option<i64>,
    pub ge: Option<i64>,
    pub le: Option<i64>,
    /// A select's options (required for one).
    pub options: Option<Vec<OptionInput>>,
}

/// One option of a select as given (both keys are required).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OptionInput {
    pub value: Option<String>,
    pub label: Option<String>,
}

/// A new custom field as given (what a body reads as, or what a form typed), before the
/// rules of [`CustomFieldInput::into_command`]. `slug`, `name` and `properties` are required.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomFieldInput {
    pub kind: CustomFieldType,
    pub slug: Option<String>,
    pub name: Option<String>,
    pub metadata: Option<Metadata>,
    pub organization_id: Option<Uuid>,
    pub properties: Option<PropertiesInput>,
}

/// A change of a custom field as given (`None`: unchanged), before the rules of
/// [`CustomFieldChangeInput::into_command`].
#[derive(Debug, Clone, PartialEq)]
pub struct CustomFieldChangeInput {
    pub kind: CustomFieldType,
    pub slug: Option<String>,
    pub name: Option<String>,
    pub metadata: Option<Metadata>,
    pub properties: Option<PropertiesInput>,
}

const TAGS: &str = "'text', 'number', 'date', 'checkbox', 'select'";

/// The type a `type` tag names, or the problem (at the body itself: the tag picks the
/// body's shape).
pub fn field_type(tag: &str) -> Result<CustomFieldType, Invalid> {
    match CustomFieldType::ALL.iter().find(|(n, _)| *n == tag) {
        Some((_, kind)) => Ok(*kind),
        None => Err(Invalid::new(
            Vec::new(),
            format!(
                "Input tag '{tag}' found using 'type' does not match any of the expected tags: {TAGS}"
            ),
            tag,
        )
        .kind("union_tag_invalid")
        .with_ctx("discriminator", "'type'")
        .with_ctx("tag", tag)
        .with_ctx("expected_tags", TAGS)),
    }
}

/// The rules on a custom field's values; problems are located under the field's type
/// (`["text", "slug"]`), as pydantic locates them in a tagged union.
struct Rules {
    base: Vec<Step>,
    wrong: Vec<Invalid>,
}

impl Rules {
    fn new(kind: CustomFieldType) -> Self {
        Rules {
            base: field![kind.as_str()],
            wrong: Vec::new(),
        }
    }

    fn at(&self, rest: Vec<Step>) -> Vec<Step> {
        let mut path = self.base.clone();
        path.extend(rest);
        path
    }

    fn missing(&mut self, path: Vec<Step>) {
        let wrong = Invalid::new(path, "Field required", Given::none()).kind("missing");
        self.wrong.push(wrong);
    }

    /// A string of at least one character.
    fn string(&mut self, path: Vec<Step>, s: String) -> Option<String> {
        if s.is_empty() {
            self.wrong.push(
                Invalid::new(path, "String should have at least 1 character", s.as_str())
                    .kind("string_too_short")
                    .with_ctx("min_length", 1u32),
            );
            return None;
        }
        Some(s)
    }

    /// A required string of at least one character.
    fn required(&mut self, path: Vec<Step>, s: Option<String>) -> Option<String> {
        match s {
            None => {
                self.missing(path);
                None
            }
            Some(s) => self.string(path, s),
        }
    }

    /// A slug: [`SLUG_PATTERN`] (checked before lowercasing, as pydantic does), lowercased.
    fn slug(&mut self, path: Vec<Step>, s: String) -> Option<String> {
        let s = self.string(path.clone(), s)?;
        let ok = s
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !ok {
            self.wrong.push(
                Invalid::new(
                    path,
                    format!("String should match pattern '{SLUG_PATTERN}'"),
                    s.as_str(),
                )
                .kind("string_pattern_mismatch")
                .with_ctx("pattern", SLUG_PATTERN),
            );
            return None;
        }
        Some(s.to_lowercase())
    }

    /// A length: at least 0.
    fn length(&mut self, path: Vec<Step>, n: i64) -> Option<i64> {
        if n < 0 {
            self.wrong.push(
                Invalid::new(path, "Input should be greater than or equal to 0", n)
                    .kind("greater_than_equal")
                    .with_ctx("ge", 0i64),
            );
            return None;
        }
        Some(n)
    }

    /// The properties of a field of type `kind`.
    fn properties(
        &mut self,
        kind: CustomFieldType,
        p: PropertiesInput,
    ) -> Option<CustomFieldProperties> {
        let before = self.wrong.len();
        let at = |r: &Rules, key: &str| r.at(field!["properties", key]);
        let text =
            |r: &mut Rules, key: &str, v: Option<String>| v.and_then(|s| r.string(at(r, key), s));
        let form = FormProperties {
            form_label: text(self, "form_label", p.form_label),
            form_help_text: text(self, "form_help_text", p.form_help_text),
            form_placeholder: text(self, "form_placeholder", p.form_placeholder),
        };
        let properties = match kind {
            CustomFieldType::Text => CustomFieldProperties::Text {
                form,
                textarea: p.textarea,
                min_length: p
                    .min_length
                    .and_then(|n| self.length(at(self, "min_length"), n)),
                max_length: p
                    .max_length
                    .and_then(|n| self.length(at(self, "max_length"), n)),
            },
            CustomFieldType::Number => CustomFieldProperties::Number {
                form,
                ge: p.ge,
                le: p.le,
            },
            CustomFieldType::Date => CustomFieldProperties::Date {
                form,
                ge: p.ge,
                le: p.le,
            },
            CustomFieldType::Checkbox => CustomFieldProperties::Checkbox { form },
            CustomFieldType::Select => {
                let mut options = Vec::new();
                match p.options {
                    None => self.missing(at(self, "options")),
                    Some(given) => {
                        for (i, o) in given.into_iter().enumerate() {
                            let path = |key: &str| field!["properties", "options", i, key];
                            let value = self.required(self.at(path("value")), o.value);
                            let label = self.required(self.at(path("label")), o.label);
                            if let (Some(value), Some(label)) = (value, label) {
                                options.push(SelectOption { value, label });
                            }
                        }
                    }
                }
                CustomFieldProperties::Select { form, options }
            }
        };
        (self.wrong.len() == before).then_some(properties)
    }

    fn finish<T>(self, value: Option<T>) -> Result<T, Vec<Invalid>> {
        match value {
            Some(v) if self.wrong.is_empty() => Ok(v),
            _ => Err(self.wrong),
        }
    }
}

/// A refusal of the rules as the 422 it is.
fn refused(wrong: Vec<Invalid>) -> ApiError {
    ApiError::from(AppError::Invalid(wrong))
}

impl CustomFieldInput {
    /// The command, or every rule it breaks (a 422 located in the body).
    pub fn into_command(self) -> Result<NewCustomField, ApiError> {
        self.check().map_err(refused)
    }

    fn check(self) -> Result<NewCustomField, Vec<Invalid>> {
        let mut r = Rules::new(self.kind);
        let slug = match self.slug {
            None => {
                r.missing(r.at(field!["slug"]));
                None
            }
            Some(s) => r.slug(r.at(field!["slug"]), s),
        };
        let name = r.required(r.at(field!["name"]), self.name);
        let properties = match self.properties {
            None => {
                r.missing(r.at(field!["properties"]));
                None
            }
            Some(p) => r.properties(self.kind, p),
        };
        let new = match (slug, name, properties) {
            (Some(slug), Some(name), Some(properties)) => Some(NewCustomField {
                slug,
                name,
                metadata: self.metadata.unwrap_or_default(),
                properties,
                organization_id: self.organization_id,
            }),
            _ => None,
        };
        r.finish(new)
    }
}

impl CustomFieldChangeInput {
    /// The command, or every rule it breaks (a 422 located in the body).
    pub fn into_command(self) -> Result<CustomFieldChange, ApiError> {
        self.check().map_err(refused)
    }

    fn check(self) -> Result<CustomFieldChange, Vec<Invalid>> {
        let mut r = Rules::new(self.kind);
        let name = self.name.and_then(|s| r.string(r.at(field!["name"]), s));
        let slug = self.slug.and_then(|s| r.slug(r.at(field!["slug"]), s));
        let properties = self.properties.and_then(|p| r.properties(self.kind, p));
        r.finish(Some(CustomFieldChange {
            kind: self.kind,
            slug,
            name,
            metadata: self.metadata,
            properties,
        }))
    }
}

// ---------------------------------------------------------------------------------------
// Reading a JSON body as the input
// ---------------------------------------------------------------------------------------

/// Reads a body's values as their types (pydantic's coercions), collecting the values that
/// do not read; the rules come after, on the input.
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

    fn read<T>(
        &mut self,
        loc: Vec<Value>,
        v: &Value,
        read: fn(&Value) -> Result<T, Rejection>,
    ) -> Option<T> {
        match read(v) {
            Ok(x) => Some(x),
            Err(r) => {
                self.reject(r, loc, v);
                None
            }
        }
    }

    fn string(&mut self, loc: Vec<Value>, v: &Value) -> Option<String> {
        self.read(loc, v, |v| strict_str(v).map(str::to_string))
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

    /// The `properties` TypedDict of a field type: the keys of that type, others ignored.
    fn properties(
        &mut self,
        kind: CustomFieldType,
        base: &[Value],
        v: &Value,
    ) -> Option<PropertiesInput> {
        let Value::Object(map) = v else {
            self.errors.push(FieldError::new(
                "dict_type",
                base.to_vec(),
                "Input should be a valid dictionary",
                v.clone(),
            ));
            return None;
        };
        let mut p = PropertiesInput::default();
        for (key, slot) in [
            ("form_label", &mut p.form_label),
            ("form_help_text", &mut p.form_help_text),
            ("form_placeholder", &mut p.form_placeholder),
        ] {
            *slot = map.get(key).and_then(|x| self.string(at(base, key), x));
        }
        let int = |r: &mut Reader, key: &str| {
            map.get(key).and_then(|x| r.read(at(base, key), x, lax_int))
        };
        match kind {
            CustomFieldType::Text => {
                p.textarea = map
                    .get("textarea")
                    .and_then(|x| self.read(at(base, "textarea"), x, lax_bool));
                p.min_length = int(self, "min_length");
                p.max_length = int(self, "max_length");
            }
            CustomFieldType::Number | CustomFieldType::Date => {
                p.ge = int(self, "ge");
                p.le = int(self, "le");
            }
            CustomFieldType::Checkbox => {}
            CustomFieldType::Select => {
                p.options = map
                    .get("options")
                    .and_then(|list| self.options(&at(base, "options"), list));
            }
        }
        Some(p)
    }

    fn options(&mut self, base: &[Value], v: &Value) -> Option<Vec<OptionInput>> {
        let Value::Array(items) = v else {
            self.errors.push(FieldError::new(
                "list_type",
                base.to_vec(),
                "Input should be a valid list",
                v.clone(),
            ));
            return None;
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let loc = at(base, i);
            let mut option = OptionInput::default();
            match item {
                Value::Object(o) => {
                    let mut read =
                        |key: &str| o.get(key).and_then(|x| self.string(at(&loc, key), x));
                    option.value = read("value");
                    option.label = read("label");
                }
                _ => self.errors.push(FieldError::new(
                    "dict_type",
                    loc,
                    "Input should be a valid dictionary",
                    item.clone(),
                )),
            }
            // An option that did not read stands in empty: the problems under it are told.
            out.push(option);
        }
        Some(out)
    }
}

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
    field_type(&text).map_err(|wrong| quoted(body, &[], vec![], vec![wrong]))
}

/// The order in which a body's fields are read (and their problems told).
const CREATE_ORDER: &[&str] = &["metadata", "slug", "name", "organization_id", "properties"];
const UPDATE_ORDER: &[&str] = &["metadata", "name", "slug", "properties"];
const PROPERTIES_ORDER: &[&str] = &[
    "form_label",
    "form_help_text",
    "form_placeholder",
    "textarea",
    "min_length",
    "max_length",
    "ge",
    "le",
    "options",
];

/// Where a problem at `loc` (`["body", tag, field, ...]`) comes in the body's order.
fn rank(order: &[&str], loc: &[Value]) -> [usize; 4] {
    let key = |i: usize, keys: &[&str]| match loc.get(i) {
        None => 0,
        Some(v) => v
            .as_str()
            .and_then(|s| keys.iter().position(|k| *k == s))
            .map_or(keys.len() + 1, |p| p + 1),
    };
    let mut r = [key(2, order), 0, 0, 0];
    if loc.get(2).and_then(Value::as_str) == Some("properties") {
        r[1] = key(3, PROPERTIES_ORDER);
        if loc.get(3).and_then(Value::as_str) == Some("options") {
            r[2] = loc
                .get(4)
                .and_then(Value::as_u64)
                .map_or(0, |i| i as usize + 1);
            r[3] = key(5, &["value", "label"]);
        }
    }
    r
}

/// The value sent at `path` in `body` (`Null` if there is none).
fn sent_at<'a>(body: &'a Value, path: &[Value]) -> &'a Value {
    path.iter()
        .try_fold(body, |v, step| match step {
            Value::String(k) => v.get(k.as_str()),
            Value::Number(i) => i.as_u64().and_then(|i| v.get(i as usize)),
            _ => None,
        })
        .unwrap_or(&Value::Null)
}

/// A body's problems: those of its reading, then those of the rules but none under a value
/// that did not read, each rule's quoting what the body holds at its place (a missing field
/// quotes what holds it), all in the order of the body's fields.
fn quoted(
    body: &Value,
    order: &[&str],
    read: Vec<FieldError>,
    ruled: Vec<Invalid>,
) -> Vec<FieldError> {
    let ApiError::Validation(ruled) = refused(ruled) else {
        return read;
    };
    let mut all = read;
    let told = all.len();
    for mut e in ruled {
        if all[..told].iter().any(|r| e.loc.starts_with(&r.loc)) {
            continue;
        }
        let place = match e.kind.as_str() {
            "missing" => &e.loc[..e.loc.len() - 1],
            _ => &e.loc[..],
        };
        e.input = sent_at(body, place.get(2..).unwrap_or_default()).clone();
        all.push(e);
    }
    all.sort_by_key(|e| rank(order, &e.loc));
    all
}

/// The input of a create body (the values that read) and what did not read.
fn read_create(kind: CustomFieldType, body: &Value) -> (CustomFieldInput, Vec<FieldError>) {
    let base = crate::loc!["body", kind.as_str()];
    let mut r = Reader::new();
    let field = |k: &str| body.get(k);
    let input = CustomFieldInput {
        kind,
        metadata: field("metadata").and_then(|v| r.metadata(&base, v)),
        slug: field("slug").and_then(|v| r.string(at(&base, "slug"), v)),
        name: field("name").and_then(|v| r.string(at(&base, "name"), v)),
        organization_id: field("organization_id")
            .and_then(|v| r.organization_id(at(&base, "organization_id"), v)),
        properties: field("properties")
            .and_then(|v| r.properties(kind, &at(&base, "properties"), v)),
    };
    (input, r.errors)
}

/// The input of an update body (`null` is not given) and what did not read.
fn read_update(kind: CustomFieldType, body: &Value) -> (CustomFieldChangeInput, Vec<FieldError>) {
    let base = crate::loc!["body", kind.as_str()];
    let mut r = Reader::new();
    let sent = |k: &str| body.get(k).filter(|v| !v.is_null());
    let input = CustomFieldChangeInput {
        kind,
        metadata: sent("metadata").and_then(|v| r.metadata(&base, v)),
        name: sent("name").and_then(|v| r.string(at(&base, "name"), v)),
        slug: sent("slug").and_then(|v| r.string(at(&base, "slug"), v)),
        properties: sent("properties")
            .and_then(|v| r.properties(kind, &at(&base, "properties"), v)),
    };
    (input, r.errors)
}

/// The command of a body, or its 422: what did not read and the rules' problems together.
fn settle<T>(
    body: &Value,
    order: &[&str],
    read: Vec<FieldError>,
    ruled: Result<T, Vec<Invalid>>,
) -> Result<T, ApiError> {
    match ruled {
        Ok(command) if read.is_empty() => Ok(command),
        Ok(_) => Err(ApiError::Validation(read)),
        Err(wrong) => Err(ApiError::Validation(quoted(body, order, read, wrong))),
    }
}

/// The command of a create body, or its 422.
pub fn new_custom_field(body: &Value) -> Result<NewCustomField, ApiError> {
    let kind = tag(body).map_err(ApiError::Validation)?;
    let (input, read) = read_create(kind, body);
    settle(body, CREATE_ORDER, read, input.check())
}

/// The command of an update body, or its 422.
pub fn custom_field_change(body: &Value) -> Result<CustomFieldChange, ApiError> {
    let kind = tag(body).map_err(ApiError::Validation)?;
    let (input, read) = read_update(kind, body);
    settle(body, UPDATE_ORDER, read, input.check())
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
#[path = "custom_field_tests.rs"]
mod tests;
