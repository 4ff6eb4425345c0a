//! No string is missing in any language: every `.ftl` parses without error or junk and has
//! exactly English's messages, attributes and variables; every id the templates and the
//! code look up is one of English's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use fluent_syntax::ast::{Entry, Expression, InlineExpression, Pattern, PatternElement};

use super::*;

/// A message's shape: its attributes and the variables it (or an attribute) uses.
#[derive(Debug, PartialEq, Eq)]
struct Shape {
    attributes: BTreeSet<String>,
    variables: BTreeSet<String>,
}

fn inline_vars(e: &InlineExpression<&str>, out: &mut BTreeSet<String>) {
    match e {
        InlineExpression::VariableReference { id } => {
            out.insert(id.name.to_string());
        }
        InlineExpression::Placeable { expression } => expression_vars(expression, out),
        InlineExpression::FunctionReference { arguments, .. }
        | InlineExpression::TermReference {
            arguments: Some(arguments),
            ..
        } => {
            for a in &arguments.positional {
                inline_vars(a, out);
            }
            for a in &arguments.named {
                inline_vars(&a.value, out);
            }
        }
        _ => {}
    }
}

fn expression_vars(e: &Expression<&str>, out: &mut BTreeSet<String>) {
    match e {
        Expression::Inline(i) => inline_vars(i, out),
        Expression::Select { selector, variants } => {
            inline_vars(selector, out);
            for v in variants {
                pattern_vars(&v.value, out);
            }
        }
    }
}

fn pattern_vars(p: &Pattern<&str>, out: &mut BTreeSet<String>) {
    for el in &p.elements {
        if let PatternElement::Placeable { expression } = el {
            expression_vars(expression, out);
        }
    }
}

/// The messages of one file, by id, or what is wrong with it.
fn shapes(lang: &str, file: &str, source: &str) -> BTreeMap<String, Shape> {
    let resource = match fluent_syntax::parser::parse(source) {
        Ok(r) => r,
        Err((_, errors)) => panic!("locales/{lang}/{file}.ftl does not parse: {errors:?}"),
    };
    let mut out = BTreeMap::new();
    for entry in &resource.body {
        match entry {
            Entry::Message(m) => {
                let mut variables = BTreeSet::new();
                if let Some(v) = &m.value {
                    pattern_vars(v, &mut variables);
                }
                let mut attributes = BTreeSet::new();
                for a in &m.attributes {
                    attributes.insert(a.id.name.to_string());
                    pattern_vars(&a.value, &mut variables);
                }
                let shape = Shape {
                    attributes,
                    variables,
                };
                let id = m.id.name.to_string();
                assert!(
                    out.insert(id.clone(), shape).is_none(),
                    "locales/{lang}/{file}.ftl repeats {id}"
                );
                assert!(
                    m.value.is_some(),
                    "locales/{lang}/{file}.ftl: {id} has no value"
                );
            }
            Entry::Junk { content } => {
                panic!("locales/{lang}/{file}.ftl has junk: {content:?}")
            }
            _ => {}
        }
    }
    out
}

#[test]
fn every_language_has_exactly_the_english_messages_and_variables() {
    let (_, english) = SOURCES[0];
    for (i, file) in FILES.iter().enumerate() {
        let reference = shapes("en", file, english[i]);
        assert!(
            !reference.is_empty() || *file == "mail",
            "en/{file}.ftl is empty"
        );
        for (lang, sources) in &SOURCES[1..] {
            let theirs = shapes(lang, file, sources[i]);
            let missing: Vec<_> = reference
                .keys()
                .filter(|k| !theirs.contains_key(*k))
                .collect();
            let extra: Vec<_> = theirs
                .keys()
                .filter(|k| !reference.contains_key(*k))
                .collect();
            assert!(
                missing.is_empty() && extra.is_empty(),
                "locales/{lang}/{file}.ftl: missing {missing:?}, not in English {extra:?}"
            );
            for (id, shape) in &reference {
                assert_eq!(
                    theirs.get(id),
                    Some(shape),
                    "locales/{lang}/{file}.ftl: {id} differs from English in attributes or variables"
                );
            }
        }
    }
    // One bundle holds all of a language's files: no id in two of them.
    let mut seen = BTreeSet::new();
    for (i, file) in FILES.iter().enumerate() {
        for id in shapes("en", file, english[i]).into_keys() {
            assert!(
                seen.insert(id.clone()),
                "{id} is in two files of locales/en"
            );
        }
    }
    // Every language the pages offer has its files.
    assert_eq!(SOURCES.len(), Lang::ALL.len());
    for (l, (tag, _)) in Lang::ALL.iter().zip(SOURCES.iter()) {
        assert_eq!(l.tag(), *tag);
    }
}

/// The ids in `text` after each of `calls` (`.t("`, `.t1("` …) up to the closing quote.
fn ids_in(text: &str, out: &mut BTreeSet<String>) {
    for call in [
        ".t(\"",
        ".t1(\"",
        ".t2(\"",
        ".ta(\"",
        ".strong(\"",
        ".strong_with(\"",
    ] {
        let mut rest = text;
        while let Some(at) = rest.find(call) {
            rest = &rest[at + call.len()..];
            if let Some(end) = rest.find('"') {
                out.insert(rest[..end].to_string());
            }
        }
    }
}

fn walk(dir: &Path, exts: &[&str], out: &mut BTreeSet<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.ends_with("src/i18n") {
            // This module's own examples and tests are not lookups.
            continue;
        } else if path.is_dir() {
            walk(&path, exts, out);
        } else if path
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| exts.contains(&x))
        {
            if let Ok(text) = std::fs::read_to_string(&path) {
                ids_in(&text, out);
            }
        }
    }
}

#[test]
fn every_id_the_templates_and_code_look_up_is_english() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut used = BTreeSet::new();
    walk(&root.join("templates"), &["html", "txt", "js"], &mut used);
    walk(&root.join("src"), &["rs"], &mut used);
    let english: BTreeSet<String> = FILES
        .iter()
        .enumerate()
        .flat_map(|(i, f)| shapes("en", f, SOURCES[0].1[i]).into_keys())
        .collect();
    assert!(used.len() > 50, "the scan found only {used:?}");
    let unknown: Vec<_> = used.difference(&english).collect();
    assert!(
        unknown.is_empty(),
        "looked up but not in English: {unknown:?}"
    );
    // The periods and lengths [`I18n::per`] and [`I18n::length`] build ids for.
    for unit in ["day", "week", "month", "year"] {
        for kind in ["per", "length"] {
            assert!(english.contains(&format!("{kind}-{unit}")), "{kind}-{unit}");
        }
    }
}

#[test]
fn messages_format_with_their_variables_and_plurals() {
    let de = I18n::new(Lang::De);
    assert_eq!(de.t("total"), "Gesamt");
    assert_eq!(
        de.t1("button-pay", "amount", de.money(1900, "eur")),
        "19,00\u{a0}€ bezahlen"
    );
    assert_eq!(de.per("month", 1), "Monat");
    assert_eq!(de.per("month", 3), "3 Monate");
    assert_eq!(I18n::new(Lang::En).length("day", 14), "14 days");
    assert_eq!(I18n::new(Lang::En).length("day", 1), "1 day");
    let ja = I18n::new(Lang::Ja);
    assert_eq!(ja.per("month", 1), "月");
    assert_eq!(ja.per("month", 3), "3か月");
    assert_eq!(ja.money(1900, "jpy"), "¥1,900");
    // No isolation marks, and the value escaped inside <strong>.
    assert_eq!(
        I18n::new(Lang::En).strong("purchase-complete", "product", "A & <B>"),
        "Your purchase of <strong>A &#38; &#60;B&#62;</strong> is complete."
    );
    // Every language formats every message without a missing variable.
    for lang in Lang::ALL {
        let i = I18n::new(lang);
        assert!(!i.t("checkout-title").is_empty());
        assert_ne!(i.t("checkout-title"), "checkout-title");
    }
    // An unknown id reads as itself, never a panic.
    assert_eq!(de.t("no-such-message"), "no-such-message");
}
