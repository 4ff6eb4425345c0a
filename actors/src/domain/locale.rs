//! The languages Tollgate's buyer-facing pages and e-mails are written in.
//!
//! A checkout's `locale` (Polar's field) may be any BCP 47 tag; the pages speak the
//! language of its first subtag when Tollgate has it, English otherwise.
//!
//! [`normalize_tag`] is the check of a tag a caller gives (Polar's `Locale` type);
//! [`resolve`] picks the language a page or an e-mail is written in.

use icu_locale_core::Locale;

/// A language the buyer-facing pages and e-mails are translated into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    En,
    De,
    Fr,
    Es,
    It,
    Pt,
    Nl,
    Ja,
}

impl Lang {
    /// Every language, English (the one every other is checked against) first.
    pub const ALL: [Lang; 8] = [
        Lang::En,
        Lang::De,
        Lang::Fr,
        Lang::Es,
        Lang::It,
        Lang::Pt,
        Lang::Nl,
        Lang::Ja,
    ];

    /// Its ISO 639-1 code, as `<html lang>` and `Content-Language` carry it.
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::De => "de",
            Lang::Fr => "fr",
            Lang::Es => "es",
            Lang::It => "it",
            Lang::Pt => "pt",
            Lang::Nl => "nl",
            Lang::Ja => "ja",
        }
    }

    /// Its name in itself, as a language menu lists it.
    pub fn native_name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::De => "Deutsch",
            Lang::Fr => "Français",
            Lang::Es => "Español",
            Lang::It => "Italiano",
            Lang::Pt => "Português",
            Lang::Nl => "Nederlands",
            Lang::Ja => "日本語",
        }
    }

    /// The language a BCP 47 tag names by its first subtag, any case (`de`, `de-AT`,
    /// `pt_BR`, `JA-jp`), if Tollgate has it.
    pub fn from_tag(tag: &str) -> Option<Lang> {
        let primary = tag.trim().split(['-', '_']).next()?;
        Lang::ALL
            .into_iter()
            .find(|l| l.tag().eq_ignore_ascii_case(primary))
    }
}

/// A BCP 47 tag as Polar keeps it (`langcodes.standardize_tag`): well-formed, with a
/// language subtag of two or three letters, in canonical case (`de-at` → `de-AT`,
/// `EN_us` → `en-US`); `None` for anything else. Unsupported languages are valid tags:
/// the pages fall back at render time.
pub fn normalize_tag(tag: &str) -> Option<String> {
    let tag = tag.trim().replace('_', "-");
    let locale = Locale::try_from_str(&tag).ok()?;
    let language = locale.id.language.as_str();
    if !(2..=3).contains(&language.len()) || language == "und" {
        return None;
    }
    Some(locale.to_string())
}

/// The languages of an `Accept-Language` header, most wanted first (by `q`, ties in the
/// header's order), without the ones refused (`q=0`) and the wildcard.
pub fn accept_language(header: &str) -> Vec<Lang> {
    let mut ranked: Vec<(u16, usize, Lang)> = Vec::new();
    for (i, item) in header.split(',').enumerate() {
        let mut parts = item.split(';');
        let tag = parts.next().unwrap_or("").trim();
        let mut q = 1000u16;
        for p in parts {
            let Some((k, v)) = p.split_once('=') else {
                continue;
            };
            if k.trim().eq_ignore_ascii_case("q") {
                q = parse_q(v.trim()).unwrap_or(0);
            }
        }
        if q == 0 || tag == "*" {
            continue;
        }
        if let Some(l) = Lang::from_tag(tag) {
            ranked.push((q, i, l));
        }
    }
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out = Vec::new();
    for (_, _, l) in ranked {
        if !out.contains(&l) {
            out.push(l);
        }
    }
    out
}

/// A `q` value (`0`..`1`, up to three decimals) in thousandths.
fn parse_q(v: &str) -> Option<u16> {
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: u16 = match int {
        "0" => 0,
        "1" => 1,
        _ => return None,
    };
    let frac: u16 = format!("{frac:0<3}").parse().ok()?;
    let q = whole * 1000 + frac;
    (q <= 1000).then_some(q)
}

/// The language a buyer's page or e-mail is written in: the checkout's `locale` if
/// Tollgate speaks it, else the first language of `Accept-Language` it speaks, else the
/// organization's default (if it speaks it), else English.
pub fn resolve(locale: Option<&str>, accept: Option<&str>, org_default: Option<&str>) -> Lang {
    locale
        .and_then(Lang::from_tag)
        .or_else(|| accept.and_then(|h| accept_language(h).into_iter().next()))
        .or_else(|| org_default.and_then(Lang::from_tag))
        .unwrap_or(Lang::En)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_checked_and_written_as_polar_keeps_them() {
        assert_eq!(normalize_tag("de").as_deref(), Some("de"));
        assert_eq!(normalize_tag("de-at").as_deref(), Some("de-AT"));
        assert_eq!(normalize_tag("EN_us").as_deref(), Some("en-US"));
        assert_eq!(normalize_tag("pt-BR").as_deref(), Some("pt-BR"));
        assert_eq!(normalize_tag("zh-Hant-TW").as_deref(), Some("zh-Hant-TW"));
        assert_eq!(normalize_tag("sv").as_deref(), Some("sv"));
        for bad in [
            "", "x", "english", "de--AT", "123", "de-", "-de", "und", "de AT", "😀",
        ] {
            assert_eq!(normalize_tag(bad), None, "{bad}");
        }
    }

    #[test]
    fn accept_language_is_ranked_by_q_then_order() {
        assert_eq!(
            accept_language("sv, fr;q=0.8, de-DE;q=0.9, en;q=0.1"),
            vec![Lang::De, Lang::Fr, Lang::En]
        );
        assert_eq!(accept_language("ja, pt-BR"), vec![Lang::Ja, Lang::Pt]);
        assert_eq!(accept_language("de;q=0, *;q=0.5, nl;q=bad"), vec![]);
        assert_eq!(accept_language(""), vec![]);
        assert_eq!(accept_language("it;q=1.0, it-CH"), vec![Lang::It]);
    }

    #[test]
    fn the_checkout_then_the_browser_then_the_organization_then_english() {
        assert_eq!(resolve(Some("fr-CA"), Some("de"), Some("ja")), Lang::Fr);
        assert_eq!(resolve(Some("sv"), Some("de"), Some("ja")), Lang::De);
        assert_eq!(resolve(None, Some("sv, nl;q=0.5"), Some("ja")), Lang::Nl);
        assert_eq!(resolve(None, Some("sv"), Some("ja")), Lang::Ja);
        assert_eq!(resolve(None, None, Some("pt-PT")), Lang::Pt);
        assert_eq!(resolve(None, None, Some("sv")), Lang::En);
        assert_eq!(resolve(Some("sv"), None, None), Lang::En);
    }

    #[test]
    fn a_tag_names_its_language_by_its_first_subtag() {
        assert_eq!(Lang::from_tag("de"), Some(Lang::De));
        assert_eq!(Lang::from_tag("de-AT"), Some(Lang::De));
        assert_eq!(Lang::from_tag("pt_BR"), Some(Lang::Pt));
        assert_eq!(Lang::from_tag("JA-jp"), Some(Lang::Ja));
        assert_eq!(Lang::from_tag("sv"), None);
        assert_eq!(Lang::from_tag(""), None);
        assert_eq!(Lang::from_tag("english"), None);
        for l in Lang::ALL {
            assert_eq!(Lang::from_tag(l.tag()), Some(l));
        }
    }
}
