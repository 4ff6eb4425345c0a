//! The API reference page (`GET /docs`): the OpenAPI document rendered as one
//! self-contained HTML page (no scripts, no external assets), grouped by tag, with every
//! operation's parameters, body and responses, and every schema's properties.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

/// Escapes text for HTML element content and attribute values.
fn esc(s: &str) -> String {
    // askama's escaper, the one every template's output goes through.
    let Ok(escaped) = askama::filters::escape(s, askama::filters::Html);
    escaped.to_string()
}

/// `` `code` `` spans of a description as `<code>`; everything else escaped.
fn prose(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in s.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", esc(part));
        } else {
            out.push_str(&esc(part));
        }
    }
    out
}

/// A short human form of a schema: a link for a reference, `[T]` for arrays, `T | null`.
fn type_of(schema: &Value) -> String {
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.rsplit('/').next().unwrap_or(r);
        return format!("<a href=\"#schema-{0}\">{0}</a>", esc(name));
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(options) = schema[key].as_array() {
            return options.iter().map(type_of).collect::<Vec<_>>().join(" | ");
        }
    }
    if let Some(parts) = schema["allOf"].as_array() {
        return parts.iter().map(type_of).collect::<Vec<_>>().join(" & ");
    }
    if let Some(values) = schema["enum"].as_array() {
        let shown: Vec<String> = values
            .iter()
            .map(|v| format!("<code>{}</code>", esc(&v.to_string())))
            .collect();
        return shown.join(" | ");
    }
    let types: Vec<String> = match &schema["type"] {
        Value::String(t) => vec![t.clone()],
        Value::Array(ts) => ts
            .iter()
            .filter_map(|t| t.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    };
    let shown: Vec<String> = types
        .iter()
        .map(|t| match t.as_str() {
            "array" => format!("[{}]", type_of(&schema["items"])),
            "object" if schema["additionalProperties"].is_object() => {
                format!("{{string: {}}}", type_of(&schema["additionalProperties"]))
            }
            "string" => match schema["format"].as_str() {
                Some(f) => format!("string ({})", esc(f)),
                None => "string".to_string(),
            },
            other => esc(other),
        })
        .collect();
    if shown.is_empty() {
        "any".to_string()
    } else {
        shown.join(" | ")
    }
}

const STYLE: &str = "body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;\
margin:0;color:#1a1a1a;background:#fafafa}main{max-width:960px;margin:0 auto;padding:1rem}\
h1{margin:.5rem 0}h2{border-bottom:2px solid #ddd;padding-bottom:.25rem;margin-top:2.5rem}\
section.op{background:#fff;border:1px solid #e3e3e3;border-radius:6px;padding:.75rem 1rem;\
margin:1rem 0}.m{display:inline-block;min-width:4.2rem;font-weight:700;font-family:monospace}\
.get{color:#0a6b2f}.post{color:#0b57a4}.patch{color:#8a5a00}.put{color:#6b2fa0}\
.delete{color:#a40b0b}code{font-family:ui-monospace,monospace;font-size:.92em;\
background:#f0f0f0;padding:0 .2em;border-radius:3px}table{border-collapse:collapse;\
width:100%;margin:.5rem 0;display:block;overflow-x:auto}th,td{text-align:left;\
padding:.3rem .5rem;border-bottom:1px solid #eee;vertical-align:top}nav a{margin-right:.8rem}\
.req{color:#a40b0b;font-size:.85em}";

/// Renders the whole page.
pub fn render(doc: &Value) -> String {
    let mut by_tag: BTreeMap<String, Vec<(String, String, &Value)>> = BTreeMap::new();
    if let Some(paths) = doc["paths"].as_object() {
        for (path, item) in paths {
            if let Some(item) = item.as_object() {
                for (method, op) in item {
                    let tag = op["tags"][0].as_str().unwrap_or("other").to_string();
                    by_tag
                        .entry(tag)
                        .or_default()
                        .push((method.clone(), path.clone(), op));
                }
            }
        }
    }

    let mut h = String::new();
    let title = esc(doc["info"]["title"].as_str().unwrap_or("API"));
    let _ = write!(
        h,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} API reference</title><style>{STYLE}</style></head><body><main>\
         <h1>{title} API reference</h1><p>{} Version {}. The machine-readable form is \
         <a href=\"/openapi.json\">/openapi.json</a> (OpenAPI {}).</p><nav>",
        prose(doc["info"]["description"].as_str().unwrap_or("")),
        esc(doc["info"]["version"].as_str().unwrap_or("")),
        esc(doc["openapi"].as_str().unwrap_or("")),
    );
    for tag in by_tag.keys() {
        let _ = write!(h, "<a href=\"#tag-{0}\">{0}</a>", esc(tag));
    }
    h.push_str("<a href=\"#schemas\">schemas</a></nav>");

    for (tag, ops) in &by_tag {
        let _ = write!(h, "<h2 id=\"tag-{0}\">{0}</h2>", esc(tag));
        for (method, path, op) in ops {
            render_operation(&mut h, method, path, op);
        }
    }

    h.push_str("<h2 id=\"schemas\">Schemas</h2>");
    if let Some(schemas) = super::schema_map(doc) {
        for (name, schema) in schemas {
            render_schema(&mut h, name, schema);
        }
    }
    h.push_str("</main></body></html>");
    h
}

fn render_operation(h: &mut String, method: &str, path: &str, op: &Value) {
    let _ = write!(
        h,
        "<section class=\"op\"><div><span class=\"m {0}\">{1}</span> <code>{2}</code></div>",
        esc(method),
        esc(&method.to_uppercase()),
        esc(path)
    );
    for key in ["summary", "description"] {
        if let Some(text) = op[key].as_str() {
            let _ = write!(h, "<p>{}</p>", prose(text));
        }
    }
    match op["security"][0]["bearer"].as_array() {
        Some(scopes) => {
            let scopes: Vec<String> = scopes
                .iter()
                .filter_map(|s| s.as_str().map(|s| format!("<code>{}</code>", esc(s))))
                .collect();
            let _ = write!(h, "<p>Bearer token with {}.</p>", scopes.join(" or "));
        }
        None => h.push_str("<p>No authentication.</p>"),
    }
    if let Some(params) = op["parameters"].as_array().filter(|p| !p.is_empty()) {
        h.push_str("<table><tr><th>Parameter</th><th>In</th><th>Type</th><th>About</th></tr>");
        for p in params {
            let _ = write!(
                h,
                "<tr><td><code>{}</code>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(p["name"].as_str().unwrap_or("")),
                if p["required"].as_bool() == Some(true) {
                    " <span class=\"req\">required</span>"
                } else {
                    ""
                },
                esc(p["in"].as_str().unwrap_or("")),
                type_of(&p["schema"]),
                prose(p["description"].as_str().unwrap_or("")),
            );
        }
        h.push_str("</table>");
    }
    if let Some(body) = op["requestBody"]["content"]
        .as_object()
        .and_then(|c| c.values().next())
    {
        let _ = write!(h, "<p>Body: {}</p>", type_of(&body["schema"]));
    }
    if let Some(responses) = op["responses"].as_object() {
        h.push_str("<table><tr><th>Status</th><th>Body</th><th>About</th></tr>");
        for (code, r) in responses {
            let body = r["content"]
                .as_object()
                .and_then(|c| c.values().next())
                .map(|c| type_of(&c["schema"]))
                .unwrap_or_else(|| "—".to_string());
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(code),
                body,
                prose(r["description"].as_str().unwrap_or(""))
            );
        }
        h.push_str("</table>");
    }
    h.push_str("</section>");
}

fn render_schema(h: &mut String, name: &str, schema: &Value) {
    let _ = write!(
        h,
        "<section class=\"op\" id=\"schema-{0}\"><div><strong>{0}</strong></div>",
        esc(name)
    );
    if let Some(text) = schema["description"].as_str() {
        let _ = write!(h, "<p>{}</p>", prose(text));
    }
    match schema["properties"].as_object() {
        Some(props) => {
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            h.push_str("<table><tr><th>Field</th><th>Type</th><th>About</th></tr>");
            for (field, p) in props {
                let _ = write!(
                    h,
                    "<tr><td><code>{}</code>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(field),
                    if required.contains(&field.as_str()) {
                        " <span class=\"req\">required</span>"
                    } else {
                        ""
                    },
                    type_of(p),
                    prose(p["description"].as_str().unwrap_or("")),
                );
            }
            h.push_str("</table>");
        }
        None => {
            let _ = write!(h, "<p>{}</p>", type_of(schema));
        }
    }
    h.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_and_links() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&#60;a href=&#34;x&#34;&#62;&#38;&#39;"
        );
        assert_eq!(prose("use `a<b` now"), "use <code>a&#60;b</code> now");
        assert_eq!(
            type_of(&json!({"$ref": "#/components/schemas/Order"})),
            "<a href=\"#schema-Order\">Order</a>"
        );
        assert_eq!(
            type_of(&json!({"type": ["string", "null"], "format": "date-time"})),
            "string (date-time) | null"
        );
        assert_eq!(
            type_of(&json!({"type": "array", "items": {"type": "integer"}})),
            "[integer]"
        );
    }

    #[test]
    fn the_page_lists_every_operation_and_schema() {
        let doc = super::super::document();
        let page = render(doc);
        assert!(page.starts_with("<!doctype html>"));
        assert!(page.contains("<code>/v1/customer-portal/license-keys/validate</code>"));
        assert!(page.contains("id=\"schema-ValidatedLicenseKey\""));
        for (_, path) in super::super::operations(doc) {
            assert!(
                page.contains(&format!("<code>{}</code>", esc(&path))),
                "{path}"
            );
        }
    }
}
