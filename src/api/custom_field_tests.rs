//! The custom field bodies' reading and rules, and their views.

use super::*;

/// A `CustomFieldCreate` body as its schema struct, or every problem (for the tests).
fn parse_create(body: &Value) -> Result<CustomFieldCreate, Vec<FieldError>> {
    let c = new_custom_field(body).map_err(test_items)?;
    Ok(CustomFieldCreate {
        kind: c.properties.kind(),
        slug: c.slug,
        name: c.name,
        metadata: c.metadata,
        properties: c.properties,
        organization_id: c.organization_id,
    })
}

/// A `CustomFieldUpdate` body as its schema struct, or every problem (for the tests).
fn parse_update(body: &Value) -> Result<CustomFieldUpdate, Vec<FieldError>> {
    let u = custom_field_change(body).map_err(test_items)?;
    Ok(CustomFieldUpdate {
        kind: u.kind,
        slug: u.slug,
        name: u.name,
        metadata: u.metadata,
        properties: u.properties,
    })
}

fn test_items(e: ApiError) -> Vec<FieldError> {
    match e {
        ApiError::Validation(items) => items,
        other => panic!("{other:?}"),
    }
}

fn base(extra: Value) -> Value {
    let mut b = json!({"type": "text", "slug": "my-field", "name": "My field", "properties": {}});
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

/// The rules, called with a typed input as the dashboard builds one (no JSON).
#[test]
fn typed_input_breaks_the_same_rules() {
    let input = CustomFieldInput {
        kind: CustomFieldType::Text,
        slug: Some("Upper".into()),
        name: Some(String::new()),
        metadata: None,
        organization_id: None,
        properties: Some(PropertiesInput {
            min_length: Some(-1),
            ..PropertiesInput::default()
        }),
    };
    let Err(ApiError::Validation(e)) = input.into_command() else {
        panic!("should fail");
    };
    let got: Vec<(&str, Value, Value)> = e
        .iter()
        .map(|e| {
            (
                e.kind.as_str(),
                Value::Array(e.loc.clone()),
                e.input.clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "string_pattern_mismatch",
                json!(["body", "text", "slug"]),
                json!("Upper")
            ),
            (
                "string_too_short",
                json!(["body", "text", "name"]),
                json!("")
            ),
            (
                "greater_than_equal",
                json!(["body", "text", "properties", "min_length"]),
                json!(-1)
            ),
        ]
    );
    let change = CustomFieldChangeInput {
        kind: CustomFieldType::Select,
        slug: Some("Size".into()),
        name: None,
        metadata: None,
        properties: Some(PropertiesInput::default()),
    };
    let Err(ApiError::Validation(e)) = change.into_command() else {
        panic!("should fail");
    };
    assert_eq!(e[0].loc, crate::loc!["body", "select", "slug"]);
    assert_eq!(
        e[1].loc,
        crate::loc!["body", "select", "properties", "options"]
    );
}

/// Over JSON, a rule quotes what was sent there (a lax integer as its string, a missing
/// key its container), and a value that did not read is not also called missing.
#[test]
fn json_rules_quote_the_body() {
    let e = errors(base(json!({"properties": {"min_length": "-1"}})));
    assert_eq!(e[0].input, json!("-1"));
    let body = json!({"type": "select", "slug": "a", "name": "A",
        "properties": {"options": [{"value": 1}, 2, {"value": "v", "label": ""}]}});
    let e = errors(body.clone());
    let locs: Vec<Value> = e.iter().map(|e| Value::Array(e.loc.clone())).collect();
    assert_eq!(
        locs,
        vec![
            json!(["body", "select", "properties", "options", 0, "value"]),
            json!(["body", "select", "properties", "options", 0, "label"]),
            json!(["body", "select", "properties", "options", 1]),
            json!(["body", "select", "properties", "options", 2, "label"]),
        ]
    );
    assert_eq!(e[0].kind, "string_type");
    assert_eq!(
        (e[1].kind.as_str(), &e[1].input),
        ("missing", &json!({"value": 1}))
    );
    assert_eq!(e[3].input, json!(""));
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
