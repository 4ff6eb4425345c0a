//! Amounts of money as people read them: one formatter for every page and message
//! (the hosted checkout, the dashboard, e-mails), so the same amount never reads two ways.
//!
//! Amounts are integers in the currency's minor unit (cents), as the API carries them;
//! currencies without a minor unit (Stripe's zero-decimal list: JPY, KRW, ...) have none.

use std::fmt;

use super::currency::Currency;
use super::locale::Lang;

/// No-break space (U+00A0), between an amount and its symbol where a language puts one.
const NBSP: char = '\u{a0}';
/// Narrow no-break space (U+202F), French's group separator.
const NNBSP: char = '\u{202f}';

/// How a language writes an amount (CLDR's standard currency pattern and symbols for it).
struct Style {
    decimal: char,
    group: char,
    /// Digits before the first group separator is used: 4 groups `1,234`; 5 (Spanish's
    /// minimum grouping of 2) leaves `1234` alone and groups `12.345`.
    group_from: usize,
    /// The symbol after the number (`19,00 €`), else before it.
    symbol_after: bool,
    /// A no-break space between a symbol before the number and the number (`€ 19,00`).
    space_before: bool,
    /// The minus sign after the symbol (`€ -19,00`), else before everything.
    minus_inside: bool,
}

impl Style {
    fn of(lang: Lang) -> Style {
        let (decimal, group, group_from) = match lang {
            Lang::En | Lang::Ja => ('.', ',', 4),
            Lang::Fr => (',', NNBSP, 4),
            Lang::Es => (',', '.', 5),
            Lang::De | Lang::It | Lang::Pt | Lang::Nl => (',', '.', 4),
        };
        Style {
            decimal,
            group,
            group_from,
            symbol_after: matches!(lang, Lang::De | Lang::Fr | Lang::Es | Lang::It),
            space_before: matches!(lang, Lang::Pt | Lang::Nl),
            minus_inside: lang == Lang::Nl,
        }
    }
}

/// An amount in a currency: 123450 US dollar cents read `$1,234.50`; a currency
/// without a symbol here reads `CHF 1,234.50`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Money<'a> {
    /// In the currency's minor unit.
    pub amount: i64,
    /// ISO 4217, any case.
    pub currency: &'a str,
}

impl<'a> Money<'a> {
    pub fn new(amount: i64, currency: &'a str) -> Self {
        Self { amount, currency }
    }

    /// Digits of the minor unit: 0 or 2.
    pub fn minor_digits(currency: &str) -> u32 {
        Self::currency_of(currency).map_or(2, Currency::minor_digits)
    }

    /// The currency an ISO code of any case names.
    fn currency_of(code: &str) -> Option<Currency> {
        Currency::from_code(&code.to_ascii_lowercase())
    }

    /// The amount in major units without grouping or symbol, as a number input shows it
    /// (`4242` → `42.42`, `-5` → `-0.05`).
    pub fn major(&self) -> String {
        let sign = if self.amount < 0 { "-" } else { "" };
        let abs = self.amount.unsigned_abs();
        match Self::minor_digits(self.currency) {
            0 => format!("{sign}{abs}"),
            _ => format!("{sign}{}.{:02}", abs / 100, abs % 100),
        }
    }

    fn symbol(&self) -> &'static str {
        Self::currency_of(self.currency).map_or("", Currency::symbol)
    }

    /// The amount as `lang` writes it (CLDR's standard currency format):
    /// `19,00 €` in German, `€ 19,00` in Dutch, `1 234,50 €` in French (a narrow no-break
    /// space between groups), `¥1,900` in Japanese. The yen keeps its halfwidth sign
    /// (U+00A5) in Japanese, where CLDR has the fullwidth `￥`. English is [`Display`]'s
    /// form (a currency without a symbol of its own reads `CHF 9.90`).
    pub fn localized(&self, lang: Lang) -> String {
        if lang == Lang::En {
            return self.to_string();
        }
        let st = Style::of(lang);
        let abs = self.amount.unsigned_abs();
        let number = match Self::minor_digits(self.currency) {
            0 => group_with(abs, st.group, st.group_from),
            _ => format!(
                "{}{}{:02}",
                group_with(abs / 100, st.group, st.group_from),
                st.decimal,
                abs % 100
            ),
        };
        let minus = if self.amount < 0 { "-" } else { "" };
        let code;
        let symbol = match self.symbol() {
            "" => {
                code = self.currency.to_ascii_uppercase();
                code.as_str()
            }
            s => s,
        };
        // A code (`CHF`) is always set apart from the number.
        let spaced = st.space_before || self.symbol().is_empty();
        if st.symbol_after {
            format!("{minus}{number}{NBSP}{symbol}")
        } else {
            let gap = if spaced {
                NBSP.to_string()
            } else {
                String::new()
            };
            if st.minus_inside {
                format!("{symbol}{gap}{minus}{number}")
            } else {
                format!("{minus}{symbol}{gap}{number}")
            }
        }
    }
}

/// `1234567` → `1.234.567` with `sep`, grouped from `from` digits on.
fn group_with(n: u64, sep: char, from: usize) -> String {
    let digits = n.to_string();
    if digits.len() < from {
        return digits;
    }
    let mut out = String::with_capacity(digits.len() * 2);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(sep);
        }
        out.push(ch);
    }
    out
}

/// `1234567` → `1,234,567`.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

impl fmt::Display for Money<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.amount < 0 { "-" } else { "" };
        let abs = self.amount.unsigned_abs();
        let number = match Self::minor_digits(self.currency) {
            0 => group(abs),
            _ => format!("{}.{:02}", group(abs / 100), abs % 100),
        };
        match self.symbol() {
            "" => write!(f, "{sign}{} {number}", self.currency.to_ascii_uppercase()),
            symbol => write!(f, "{sign}{symbol}{number}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_reads_an_amount_the_same_way() {
        assert_eq!(Money::new(1050, "usd").to_string(), "$10.50");
        assert_eq!(Money::new(123450, "USD").to_string(), "$1,234.50");
        assert_eq!(Money::new(-500, "usd").to_string(), "-$5.00");
        assert_eq!(Money::new(100_000_000, "eur").to_string(), "€1,000,000.00");
        assert_eq!(Money::new(1500, "jpy").to_string(), "¥1,500");
        assert_eq!(Money::new(990, "chf").to_string(), "CHF 9.90");
        assert_eq!(Money::new(0, "usd").to_string(), "$0.00");
    }

    /// CLDR 48's `Intl.NumberFormat(lang, {style: "currency"})` (research §3.3), U+00A0
    /// and U+202F included; the yen in Japanese as the issue writes it (U+00A5).
    #[test]
    fn each_language_writes_an_amount_as_cldr_does() {
        let cases: &[(Lang, i64, &str, &str)] = &[
            (Lang::En, 1900, "eur", "€19.00"),
            (Lang::En, 1900, "jpy", "¥1,900"),
            (Lang::De, 1900, "eur", "19,00\u{a0}€"),
            (Lang::De, 1900, "usd", "19,00\u{a0}$"),
            (Lang::De, 990, "chf", "9,90\u{a0}CHF"),
            (Lang::De, 123450, "eur", "1.234,50\u{a0}€"),
            (Lang::Fr, 1900, "eur", "19,00\u{a0}€"),
            (Lang::Fr, 123450, "eur", "1\u{202f}234,50\u{a0}€"),
            (Lang::Es, 1900, "eur", "19,00\u{a0}€"),
            (Lang::Es, 123450, "eur", "1234,50\u{a0}€"),
            (Lang::Es, 1234550, "eur", "12.345,50\u{a0}€"),
            (Lang::It, 1900, "eur", "19,00\u{a0}€"),
            (Lang::Pt, 1900, "eur", "€\u{a0}19,00"),
            (Lang::Nl, 1900, "eur", "€\u{a0}19,00"),
            (Lang::Nl, -1900, "eur", "€\u{a0}-19,00"),
            (Lang::Ja, 1900, "eur", "€19.00"),
            (Lang::Ja, 1900, "jpy", "¥1,900"),
            (Lang::Ja, 1900, "JPY", "¥1,900"),
            (Lang::De, 1900, "jpy", "1.900\u{a0}¥"),
            (Lang::De, -500, "eur", "-5,00\u{a0}€"),
            (Lang::Ja, 990, "chf", "CHF\u{a0}9.90"),
        ];
        for (lang, amount, currency, want) in cases {
            assert_eq!(
                Money::new(*amount, currency).localized(*lang),
                *want,
                "{lang:?} {amount} {currency}"
            );
        }
        // English is Display's.
        assert_eq!(Money::new(990, "chf").localized(Lang::En), "CHF 9.90");
    }

    #[test]
    fn major_units_for_inputs() {
        assert_eq!(Money::new(4242, "usd").major(), "42.42");
        assert_eq!(Money::new(-5, "usd").major(), "-0.05");
        assert_eq!(Money::new(1500, "jpy").major(), "1500");
    }
}
