//! Customer search without a scan: the terms a customer is found by, written as uncounted
//! index entries ([`CUSTOMER_SEARCH`]) in the customer's own transaction, and the terms a
//! needle probes.
//!
//! Polar's `query` keeps its meaning for needles of 3 characters or more: the e-mail
//! address or the name contains it, or the external id starts with it (case-insensitively).
//! Every trigram of the lower-cased e-mail, name and external id is a term, so a customer
//! that matches carries every trigram of the needle: the customers under the needle's
//! rarest trigram are the candidates, and [`matches_search`] keeps the ones that match.
//!
//! A needle of 1 or 2 characters has no trigram. It matches a customer when a word of its
//! e-mail address or of its name starts with it, or its external id does ("words": runs of
//! letters and digits; `jo` finds `john.smith@x.com`, `Mary Jones` and external id
//! `jo-1`, not `major@x.com`). The 1- and 2-character beginnings of those words are terms,
//! so the answer is read from one term's entries, never from a scan of all customers.

use std::collections::BTreeSet;

use super::Customer;
use crate::domain::ids::OrganizationId;

/// The uncounted index of customer search terms: tenant `organization | term`, sort the
/// creation time (then the id), as `CUSTOMER_BY_CREATED`. A short name: it starts each of
/// a customer's few dozen entries.
pub const CUSTOMER_SEARCH: &str = "cs";

/// A needle shorter than this many characters (after lower-casing) matches word beginnings
/// (see the module's documentation).
pub const SHORT_NEEDLE: usize = 3;

/// At most this many of a needle's trigrams are probed (spread over the needle): any of
/// them gives every candidate, more only help find a rarer one.
const PROBED_TRIGRAMS: usize = 8;

/// The index tenant of `term` in an organization.
pub fn search_tenant(org: OrganizationId, term: &str) -> Vec<u8> {
    let mut tenant = org.key();
    tenant.extend_from_slice(term.as_bytes());
    tenant
}

/// Every distinct run of three characters of `text`.
fn trigrams(text: &str, out: &mut BTreeSet<String>) {
    let chars: Vec<char> = text.chars().collect();
    for w in chars.windows(3) {
        out.insert(w.iter().collect());
    }
}

/// The words of `text`: runs of letters and digits.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// The first 1 and 2 characters of `word` (fewer for a shorter word).
fn beginnings(word: &str, out: &mut BTreeSet<String>) {
    for n in 1..SHORT_NEEDLE {
        if word.chars().count() >= n {
            out.insert(word.chars().take(n).collect());
        }
    }
}

/// The terms a customer is found by (none for a deleted one).
pub fn customer_terms(c: &Customer) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if c.is_deleted() {
        return out;
    }
    let email = c.email.to_lowercase();
    let name = c.name.as_deref().map(str::to_lowercase);
    let external = c.external_id.as_deref().map(str::to_lowercase);
    for text in [Some(&email), name.as_ref(), external.as_ref()]
        .into_iter()
        .flatten()
    {
        trigrams(text, &mut out);
    }
    for text in [Some(&email), name.as_ref()].into_iter().flatten() {
        for word in words(text) {
            beginnings(word, &mut out);
        }
    }
    if let Some(external) = &external {
        beginnings(external, &mut out);
    }
    out
}

/// What a needle asks of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// No needle (empty): every customer.
    Everyone,
    /// The customers that match are all under each of these terms; read the rarest.
    Terms(Vec<String>),
}

/// The terms a (lower-cased) needle probes.
pub fn probe(needle: &str) -> Probe {
    let count = needle.chars().count();
    if count == 0 {
        return Probe::Everyone;
    }
    if count < SHORT_NEEDLE {
        return Probe::Terms(vec![needle.to_string()]);
    }
    let mut grams = BTreeSet::new();
    trigrams(needle, &mut grams);
    // In the needle's order, then spread: the first, the last and evenly between.
    let chars: Vec<char> = needle.chars().collect();
    let mut ordered: Vec<String> = Vec::new();
    for w in chars.windows(3) {
        let g: String = w.iter().collect();
        if !ordered.contains(&g) {
            ordered.push(g);
        }
    }
    if ordered.len() > PROBED_TRIGRAMS {
        let n = ordered.len();
        ordered = (0..PROBED_TRIGRAMS)
            .map(|i| ordered[i * (n - 1) / (PROBED_TRIGRAMS - 1)].clone())
            .collect();
    }
    Probe::Terms(ordered)
}

/// Whether the customer matches the (lower-cased) needle: Polar's `query` for 3 characters
/// or more, word beginnings below (see the module's documentation).
pub fn matches_search(c: &Customer, needle: &str) -> bool {
    let email = c.email.to_lowercase();
    let name = c.name.as_deref().map(str::to_lowercase);
    let external = c.external_id.as_deref().map(str::to_lowercase);
    if needle.chars().count() >= SHORT_NEEDLE {
        return email.contains(needle)
            || name.as_deref().is_some_and(|n| n.contains(needle))
            || external.as_deref().is_some_and(|e| e.starts_with(needle));
    }
    words(&email)
        .chain(name.as_deref().into_iter().flat_map(words))
        .any(|w| w.starts_with(needle))
        || external.as_deref().is_some_and(|e| e.starts_with(needle))
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::domain::ids::CustomerId;

    fn customer(email: &str, name: Option<&str>, external: Option<&str>) -> Customer {
        let mut c = Customer::new(
            CustomerId::new(),
            OrganizationId::new(),
            email.into(),
            Utc::now(),
        );
        c.name = name.map(Into::into);
        c.external_id = external.map(Into::into);
        c
    }

    /// Every needle a customer matches finds it under each term the needle probes.
    fn found(c: &Customer, needle: &str) -> bool {
        let terms = customer_terms(c);
        let needle = needle.to_lowercase();
        let under_all = match probe(&needle) {
            Probe::Everyone => true,
            Probe::Terms(t) => t.iter().all(|t| terms.contains(t)),
        };
        assert!(
            !matches_search(c, &needle) || under_all,
            "{needle:?} matches {c:?} but a probed term is missing"
        );
        under_all && matches_search(c, &needle)
    }

    #[test]
    fn long_needles_keep_polar_semantics() {
        let c = customer(
            "John.Smith@Example.com",
            Some("John Smith"),
            Some("USR-42x"),
        );
        for needle in [
            "john",
            "SMITH@ex",
            "example.com",
            "n sm",
            "usr-4",
            "USR-42X",
            "n.s",
        ] {
            assert!(found(&c, needle), "{needle}");
        }
        // The external id only by its start; nothing that is not there.
        for needle in ["r-42", "smithe", "johnny", "42x"] {
            assert!(!found(&c, needle), "{needle}");
        }
    }

    #[test]
    fn short_needles_match_word_beginnings() {
        let c = customer("john.smith@example.com", Some("Mary Ödön"), Some("ab-9"));
        for needle in ["j", "jo", "sm", "ex", "co", "ma", "öd", "Ö", "ab", "a"] {
            assert!(found(&c, needle), "{needle}");
        }
        for needle in ["oh", "mi", "@e", ".c", "ry", "b-"] {
            assert!(!found(&c, needle), "{needle}");
        }
    }

    #[test]
    fn terms_are_few_and_deleted_customers_have_none() {
        let mut c = customer("john.smith@gmail.com", Some("John Smith"), None);
        let terms = customer_terms(&c);
        // 18 + 8 trigrams (some shared) and the beginnings of 5 words.
        assert!(terms.len() <= 36, "{}", terms.len());
        assert!(terms.contains("gma") && terms.contains("sm") && terms.contains("j"));
        c.deleted_at = Some(Utc::now());
        assert!(customer_terms(&c).is_empty());
    }

    #[test]
    fn long_needles_probe_at_most_eight_spread_trigrams() {
        assert_eq!(probe(""), Probe::Everyone);
        assert_eq!(probe("ab"), Probe::Terms(vec!["ab".into()]));
        assert_eq!(
            probe("aaaa"),
            Probe::Terms(vec!["aaa".into()]),
            "repeated trigrams once"
        );
        let Probe::Terms(t) = probe("someone.with.a.long@address.example") else {
            panic!("terms expected");
        };
        assert_eq!(t.len(), 8);
        assert_eq!(t.first().map(String::as_str), Some("som"));
        assert_eq!(t.last().map(String::as_str), Some("ple"));
    }
}
