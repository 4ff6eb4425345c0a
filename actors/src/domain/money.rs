//! Amounts of money as people read them: one formatter for every page and message
//! (the hosted checkout, the dashboard, e-mails), so the same amount never reads two ways.
//!
//! Amounts are integers in the currency's minor unit (cents), as the API carries them;
//! currencies without a minor unit (Stripe's zero-decimal list: JPY, KRW, ...) have none.

use std::fmt;

use super::currency::Currency;

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

    #[test]
    fn major_units_for_inputs() {
        assert_eq!(Money::new(4242, "usd").major(), "42.42");
        assert_eq!(Money::new(-5, "usd").major(), "-0.05");
        assert_eq!(Money::new(1500, "jpy").major(), "1500");
    }
}
