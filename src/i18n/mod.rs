//! The buyer's pages and e-mails in their language: the translations of `locales/<lang>/*.ftl`
//! (Project Fluent files a translator edits, embedded at compile time), and [`I18n`], the
//! value each template gets to look its strings up and to write amounts and dates the
//! language's way.
//!
//! Which language a page or a message speaks is [`crate::domain::locale::resolve`]'s
//! choice; English is the reference every other language is checked against (the test
//! below and `tests/api/locales.rs`). A message missing in a language reads in English,
//! and one missing in English reads as its id: a page is never refused for a string.

use std::fmt::Display;
use std::sync::OnceLock;

use chrono::NaiveDate;
use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};

use crate::domain::dates::long_date;
use crate::domain::locale::Lang;
use crate::domain::money::Money;

/// The translation files of a language, in the order they are added to its bundle.
const FILES: [&str; 3] = ["checkout", "mail", "portal"];

macro_rules! sources {
    ($($lang:literal),*) => {
        [$(
            (
                $lang,
                [
                    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/locales/", $lang, "/checkout.ftl")),
                    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/locales/", $lang, "/mail.ftl")),
                    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/locales/", $lang, "/portal.ftl")),
                ],
            ),
        )*]
    };
}

/// Every language's files as the binary carries them: `(tag, [checkout, mail, portal])`.
pub const SOURCES: [(&str, [&str; FILES.len()]); 8] =
    sources!("en", "de", "fr", "es", "it", "pt", "nl", "ja");

type Bundle = FluentBundle<FluentResource>;

fn bundle(tag: &str, files: &[&str]) -> Bundle {
    let id: unic_langid::LanguageIdentifier = tag.parse().unwrap_or_default();
    let mut bundle = FluentBundle::new_concurrent(vec![id]);
    // No Unicode isolation marks around placeables: HTML and mail, all left to right.
    bundle.set_use_isolating(false);
    for source in files {
        // A file that does not parse keeps what it could read (the test refuses it).
        let resource = match FluentResource::try_new((*source).to_string()) {
            Ok(r) => r,
            Err((r, errors)) => {
                tracing::error!(lang = tag, ?errors, "a translation file does not parse");
                r
            }
        };
        if let Err(errors) = bundle.add_resource(resource) {
            tracing::error!(lang = tag, ?errors, "a translation file repeats a message");
        }
    }
    bundle
}

fn bundles() -> &'static Vec<(Lang, Bundle)> {
    static BUNDLES: OnceLock<Vec<(Lang, Bundle)>> = OnceLock::new();
    BUNDLES.get_or_init(|| {
        SOURCES
            .iter()
            .filter_map(|(tag, files)| Some((Lang::from_tag(tag)?, bundle(tag, files))))
            .collect()
    })
}

fn bundle_of(lang: Lang) -> Option<&'static Bundle> {
    bundles().iter().find(|(l, _)| *l == lang).map(|(_, b)| b)
}

/// A variable's value: a whole number as a Fluent number (for plural forms), anything
/// else as text.
fn value(v: String) -> FluentValue<'static> {
    match v.parse::<i64>() {
        Ok(n) if n.to_string() == v => FluentValue::from(n),
        _ => FluentValue::from(v),
    }
}

/// `id` formatted in `lang` (English when the language lacks it, the id when English does).
fn format(lang: Lang, id: &str, args: Option<&FluentArgs>) -> String {
    for l in [lang, Lang::En] {
        let Some(bundle) = bundle_of(l) else { continue };
        let Some(pattern) = bundle.get_message(id).and_then(|m| m.value()) else {
            continue;
        };
        let mut errors = Vec::new();
        let out = bundle.format_pattern(pattern, args, &mut errors);
        if !errors.is_empty() {
            tracing::warn!(lang = l.tag(), id, ?errors, "a translation did not format");
        }
        return out.into_owned();
    }
    tracing::warn!(lang = lang.tag(), id, "no such message");
    id.to_string()
}

/// HTML-escapes text (the translations and values put around markup by [`I18n::strong`]).
fn escape(s: &str) -> String {
    // askama's escaper, the one every template's output goes through.
    let Ok(escaped) = askama::filters::escape(s, askama::filters::Html);
    escaped.to_string()
}

/// The strings, amounts and dates of one language, as a template asks for them:
/// `{{ i18n.t("checkout-pay") }}`, `{{ i18n.t1("pay", "amount", total) }}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct I18n {
    pub lang: Lang,
}

impl I18n {
    pub fn new(lang: Lang) -> Self {
        I18n { lang }
    }

    /// The language's tag, for `<html lang>` and `Content-Language`.
    pub fn tag(&self) -> &'static str {
        self.lang.tag()
    }

    /// A message without variables.
    pub fn t(&self, id: &str) -> String {
        format(self.lang, id, None)
    }

    /// A message with one variable.
    pub fn t1(&self, id: &str, name: &str, v: impl Display) -> String {
        let mut args = FluentArgs::new();
        args.set(name.to_string(), value(v.to_string()));
        format(self.lang, id, Some(&args))
    }

    /// A message with two variables.
    pub fn t2(&self, id: &str, n1: &str, v1: impl Display, n2: &str, v2: impl Display) -> String {
        let mut args = FluentArgs::new();
        args.set(n1.to_string(), value(v1.to_string()));
        args.set(n2.to_string(), value(v2.to_string()));
        format(self.lang, id, Some(&args))
    }

    /// A message with any number of variables.
    pub fn ta(&self, id: &str, vars: &[(&str, &dyn Display)]) -> String {
        let mut args = FluentArgs::new();
        for (name, v) in vars {
            args.set(name.to_string(), value(v.to_string()));
        }
        format(self.lang, id, Some(&args))
    }

    /// A message with one variable, as HTML: the text escaped, the value in `<strong>`
    /// (write it with `|safe`).
    pub fn strong(&self, id: &str, name: &str, v: impl Display) -> String {
        self.strong_with(id, name, &v, &[])
    }

    /// [`I18n::strong`] with more (plain) variables.
    pub fn strong_with(
        &self,
        id: &str,
        name: &str,
        v: &dyn Display,
        others: &[(&str, &dyn Display)],
    ) -> String {
        const MARK: &str = "\u{1}";
        let mut vars: Vec<(&str, &dyn Display)> = vec![(name, &MARK)];
        vars.extend_from_slice(others);
        let text = self.ta(id, &vars);
        let value = format!("<strong>{}</strong>", escape(&v.to_string()));
        escape(&text).replace(MARK, &value)
    }

    /// An amount in the currency's minor unit, the language's way (`19,00 €`).
    pub fn money(&self, amount: i64, currency: &str) -> String {
        Money::new(amount, currency).localized(self.lang)
    }

    /// A date the language's long way (`2. August 2026`).
    pub fn date(&self, date: NaiveDate) -> String {
        long_date(self.lang, date)
    }

    /// A recurring period: `month`, `3 months` (`unit`: day, week, month or year).
    pub fn per(&self, unit: &str, count: u32) -> String {
        self.t1(&format!("per-{unit}"), "count", count.max(1))
    }

    /// A length of time: `1 day`, `14 days`.
    pub fn length(&self, unit: &str, count: u32) -> String {
        self.t1(&format!("length-{unit}"), "count", count.max(1))
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
