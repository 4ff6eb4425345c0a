//! Every response the integration tests receive through `TestApp::send` is checked against
//! the OpenAPI document: the operation is found by method and path template, the status
//! must be one the operation documents, and a JSON body must validate against the
//! documented schema (JSON Schema 2020-12, formats such as `uuid` and `date-time`
//! checked). So the whole suite doubles as a conformance test of `/openapi.json`, and of
//! `/{version}/openapi.json` for requests that name a version.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::Validator;
use serde_json::{json, Value};

use tollgate::api::version::ApiVersion;

use crate::helpers::Reply;

struct Operation {
    method: String,
    segments: Vec<String>,
    responses: Value,
}

struct Checker {
    operations: Vec<Operation>,
    components: Value,
    validators: Mutex<HashMap<String, Arc<Validator>>>,
}

/// The checker of the default shape (`None`) or of one API version.
fn checker(version: Option<ApiVersion>) -> &'static Checker {
    static CHECKERS: [OnceLock<Checker>; ApiVersion::ALL.len() + 1] =
        [const { OnceLock::new() }; ApiVersion::ALL.len() + 1];
    let slot = version
        .and_then(|v| ApiVersion::ALL.iter().position(|w| *w == v))
        .map_or(0, |i| i + 1);
    CHECKERS[slot].get_or_init(|| {
        let doc = tollgate::openapi::document_for(version);
        let mut operations = Vec::new();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("a path item") {
                operations.push(Operation {
                    method: method.to_uppercase(),
                    segments: path.split('/').map(String::from).collect(),
                    responses: op["responses"].clone(),
                });
            }
        }
        Checker {
            operations,
            components: doc["components"].clone(),
            validators: Mutex::new(HashMap::new()),
        }
    })
}

/// The documented operation for a request: same method, same number of segments, literal
/// segments equal; the one with the most literal segments wins.
fn operation_for<'a>(c: &'a Checker, method: &str, path: &str) -> Option<&'a Operation> {
    let segments: Vec<&str> = path.split('/').collect();
    c.operations
        .iter()
        .filter(|op| op.method == method && op.segments.len() == segments.len())
        .filter_map(|op| {
            let mut literal = 0;
            for (want, got) in op.segments.iter().zip(&segments) {
                if want.starts_with('{') && want.ends_with('}') {
                    if got.is_empty() {
                        return None;
                    }
                } else if want == got {
                    literal += 1;
                } else {
                    return None;
                }
            }
            Some((literal, op))
        })
        .max_by_key(|(literal, _)| *literal)
        .map(|(_, op)| op)
}

fn validator(c: &Checker, schema: &Value) -> Arc<Validator> {
    let key = schema.to_string();
    let mut cache = c.validators.lock().unwrap();
    cache
        .entry(key)
        .or_insert_with(|| {
            let mut root = schema.clone();
            if let Some(obj) = root.as_object_mut() {
                obj.insert("components".into(), c.components.clone());
            } else {
                root = json!({"allOf": [schema], "components": c.components});
            }
            Arc::new(
                jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft202012)
                    .should_validate_formats(true)
                    .build(&root)
                    .unwrap_or_else(|e| panic!("schema {schema} does not compile: {e}")),
            )
        })
        .clone()
}

/// Asserts that `reply` is what the document of `version` (the request's `Polar-Version`;
/// `None`: the default) says `method path` answers.
#[track_caller]
pub fn check(method: &str, path: &str, version: Option<ApiVersion>, reply: &Reply) {
    let c = checker(version);
    let Some(op) = operation_for(c, method, path) else {
        return; // Not an operation of the API (unknown routes, wrong methods).
    };
    let status = reply.status.as_u16();
    let documented = &op.responses[status.to_string()];
    assert!(
        documented.is_object(),
        "{method} {path} answered {status}, which its OpenAPI operation does not document; \
         body: {}",
        reply.body
    );
    let Some(schema) = documented["content"]["application/json"].get("schema") else {
        return;
    };
    let validator = validator(c, schema);
    let errors: Vec<String> = validator
        .iter_errors(&reply.body)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{method} {path} {status}: the body does not match the OpenAPI schema {schema}:\n{}\nbody: {}",
        errors.join("\n"),
        reply.body
    );
}
