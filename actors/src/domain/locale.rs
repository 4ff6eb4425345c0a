//! The languages Tollgate's buyer-facing pages and e-mails are written in.
//!
//! A checkout's `locale` (Polar's field) may be any BCP 47 tag; the pages speak the
//! language of its first subtag when Tollgate has it, English otherwise.

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

#[cfg(test)]
mod tests {
    use super::*;

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
