//! License-key search by fragment, without a scan: what a seller would type of a key,
//! written as uncounted index entries ([`LICENSE_KEY_SEARCH`]) in the key's own
//! transaction.
//!
//! Keys look like `[PREFIX-]XXXXXXXX-XXXX-4XXX-XXXX-XXXXXXXXXXXX`, and the dashboard shows
//! `****-` and the last six characters. A fragment (case-insensitive; a leading `****-` as
//! the dashboard shows it, or any leading `*`, is dropped) finds a key when it is at least
//! [`FRAGMENT_MIN`] characters long and the key starts with it at the beginning of one of
//! its hyphen-separated segments (the whole key, a segment, the start of a segment, several
//! segments), or ends with it (the tail shown). Each key has one term per segment start
//! (`^` and the 4 characters there) and one for its end (`$` and its last 4 characters):
//! six or seven entries, and a fragment probes two terms.

use std::collections::BTreeSet;

use crate::domain::ids::OrganizationId;

/// The uncounted index of key fragments: tenant `organization | term`, sort the creation
/// time (then the id), as `LICENSE_KEY_BY_CREATED`.
pub const LICENSE_KEY_SEARCH: &str = "ks";

/// Fragments shorter than this find no key.
pub const FRAGMENT_MIN: usize = 4;

/// A fragment as the search compares it: trimmed, upper-cased, without the dashboard's
/// mask (`****-`).
pub fn normalize_fragment(query: &str) -> String {
    let upper = query.trim().to_uppercase();
    let unmasked = upper.trim_start_matches('*');
    if unmasked.len() != upper.len() {
        unmasked.trim_start_matches('-').to_string()
    } else {
        upper
    }
}

/// The index tenant of `term` in an organization.
pub fn fragment_tenant(org: OrganizationId, term: &str) -> Vec<u8> {
    let mut tenant = org.key();
    tenant.extend_from_slice(term.as_bytes());
    tenant
}

/// Where the key's segments start (character positions).
fn segment_starts(chars: &[char]) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(0).chain(
        chars
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == '-')
            .map(|(i, _)| i + 1),
    )
}

/// The terms a key is found by.
pub fn key_terms(key: &str) -> BTreeSet<String> {
    let chars: Vec<char> = key.to_uppercase().chars().collect();
    let mut out = BTreeSet::new();
    for p in segment_starts(&chars) {
        if let Some(w) = chars.get(p..p + FRAGMENT_MIN) {
            out.insert(format!("^{}", w.iter().collect::<String>()));
        }
    }
    if let Some(tail) = chars.len().checked_sub(FRAGMENT_MIN).map(|s| &chars[s..]) {
        out.insert(format!("${}", tail.iter().collect::<String>()));
    }
    out
}

/// The two terms a (normalized) fragment probes (its start at a segment's, its end at the
/// key's): every key it finds is under one of them. `None`: too short to find any key.
pub fn fragment_terms(fragment: &str) -> Option<[String; 2]> {
    let chars: Vec<char> = fragment.chars().collect();
    if chars.len() < FRAGMENT_MIN {
        return None;
    }
    let head: String = chars[..FRAGMENT_MIN].iter().collect();
    let tail: String = chars[chars.len() - FRAGMENT_MIN..].iter().collect();
    Some([format!("^{head}"), format!("${tail}")])
}

/// Whether the key matches the (normalized) fragment.
pub fn matches_fragment(key: &str, fragment: &str) -> bool {
    if fragment.chars().count() < FRAGMENT_MIN {
        return false;
    }
    let upper = key.to_uppercase();
    let chars: Vec<char> = upper.chars().collect();
    upper.ends_with(fragment)
        || segment_starts(&chars)
            .any(|p| chars[p..].iter().collect::<String>().starts_with(fragment))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "ACME-1F3A9C2E-7B4D-4E8F-9A0B-C1D2E3F4A5B6";

    /// Found: it matches and it carries one of the probed terms.
    fn found(key: &str, query: &str) -> bool {
        let fragment = normalize_fragment(query);
        let terms = key_terms(key);
        let under = fragment_terms(&fragment).is_some_and(|t| t.iter().any(|t| terms.contains(t)));
        let matches = matches_fragment(key, &fragment);
        assert!(
            !matches || under,
            "{query} matches but no probed term holds {key}"
        );
        matches
    }

    #[test]
    fn what_a_seller_types_finds_the_key() {
        for query in [
            KEY,
            "acme-1f3a9c2e-7b4d-4e8f-9a0b-c1d2e3f4a5b6",
            "ACME",
            "1F3A9C2E",
            "1f3a",
            "7B4D-4E8F",
            "9A0B-C1",
            "C1D2E3F4A5B6",
            "****-F4A5B6",
            "*F4A5B6",
            "A5B6",
            "  acme-1f3a ",
        ] {
            assert!(found(KEY, query), "{query}");
        }
        for query in ["F3A9", "CME-", "B6", "A5B", "****-", "E-1F3", "4A5B"] {
            assert!(!found(KEY, query), "{query}");
        }
    }

    #[test]
    fn a_key_has_a_term_per_segment_and_its_tail() {
        let terms = key_terms(KEY);
        assert_eq!(
            terms,
            ["^ACME", "^1F3A", "^7B4D", "^4E8F", "^9A0B", "^C1D2", "$A5B6"]
                .iter()
                .map(|s| s.to_string())
                .collect()
        );
        // A short segment's term reaches into the next one.
        assert!(key_terms("AB-CDEF").contains("^AB-C"));
        assert!(found("AB-CDEF", "ab-cd"));
        assert!(key_terms("ABC").is_empty());
    }
}
