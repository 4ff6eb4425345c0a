//! Currencies: an ISO 4217 code (lowercase, as Stripe writes it) and the digits of its minor
//! unit. Amounts everywhere are integers in that minor unit (cents for USD, yen for JPY).
//!
//! [`Currency::parse`] is the one check of a currency a caller names (prices, discounts,
//! checkouts); [`Currency::DEFAULT`] is the currency of a record that names none. Records
//! that store a currency keep it as a string: a `Currency` serializes as its code, so its
//! bytes (bincode, JSON) are those of the `String` it replaces.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[path = "currency_tables.rs"]
mod tables;

use tables::ZERO_DECIMAL;

/// The position of `key` in a table sorted by its first column.
fn find<T: Copy>(table: &[(&str, T)], key: &str) -> Option<T> {
    table
        .binary_search_by(|(k, _)| (*k).cmp(key))
        .ok()
        .map(|i| table[i].1)
}

/// An ISO 4217 currency: three lowercase ASCII letters.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Currency([u8; 3]);

/// Why a currency was refused: not a code, or not one Tollgate sells in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CurrencyError {
    /// Not three lowercase ASCII letters.
    Malformed,
    /// A currency, but not one of Polar's presentment currencies.
    NotOffered(Currency),
}

impl CurrencyError {
    /// What pydantic's `enum` error of Polar's `PresentmentCurrency` expects: every code,
    /// quoted, `'aed', 'all', … or 'zmw'`.
    pub fn expected() -> String {
        let quoted: Vec<String> = tables::PRESENTMENT
            .iter()
            .map(|c| format!("'{c}'"))
            .collect();
        match quoted.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            Some((last, _)) => last.clone(),
            None => String::new(),
        }
    }
}

impl Currency {
    pub const USD: Currency = Currency(*b"usd");
    pub const EUR: Currency = Currency(*b"eur");
    pub const JPY: Currency = Currency(*b"jpy");

    /// The currency of a price, a discount, a checkout or an order that names none.
    pub const DEFAULT: Currency = Currency::USD;

    /// Any ISO 4217 code in lowercase (`"usd"`, `"jpy"`); `None` for anything else.
    pub fn from_code(code: &str) -> Option<Currency> {
        let bytes: [u8; 3] = code.as_bytes().try_into().ok()?;
        bytes
            .iter()
            .all(u8::is_ascii_lowercase)
            .then_some(Currency(bytes))
    }

    /// A currency a caller names for something sold (a price, a discount, a checkout):
    /// a lowercase ISO code among Polar's presentment currencies.
    pub fn parse(code: &str) -> Result<Currency, CurrencyError> {
        let currency = Currency::from_code(code).ok_or(CurrencyError::Malformed)?;
        if currency.is_offered() {
            Ok(currency)
        } else {
            Err(CurrencyError::NotOffered(currency))
        }
    }

    /// Whether prices, discounts and checkouts may be sold in this currency (one of
    /// Polar's presentment currencies).
    pub fn is_offered(self) -> bool {
        self.is_presentment()
    }

    /// The lowercase ISO code.
    pub const fn code(&self) -> &str {
        // Only ASCII letters are ever stored.
        match std::str::from_utf8(&self.0) {
            Ok(code) => code,
            Err(_) => "",
        }
    }

    /// Whether prices, discounts and checkouts may be in this currency anywhere Polar
    /// sells: one of its 126 presentment currencies.
    pub fn is_presentment(self) -> bool {
        tables::PRESENTMENT.binary_search(&self.code()).is_ok()
    }

    /// Polar's presentment currencies, in code order.
    pub fn presentment() -> impl Iterator<Item = Currency> {
        tables::PRESENTMENT
            .iter()
            .filter_map(|c| Currency::from_code(c))
    }

    /// The smallest amount of a paid price in this currency, in its minor unit (50 for USD
    /// and EUR, 80 for JPY, 200 000 for UGX).
    pub fn minimum_amount(self) -> i64 {
        find(tables::MINIMUM, self.code()).unwrap_or(tables::DEFAULT_MINIMUM)
    }

    /// The largest amount of a price in this currency, in its minor unit (99 999 999 unless
    /// Polar raises it, as for IDR).
    pub fn maximum_amount(self) -> i64 {
        find(tables::MAXIMUM, self.code()).unwrap_or(tables::DEFAULT_MAXIMUM)
    }

    /// The currency a buyer in `country` (ISO 3166-1 alpha-2, any case) is presented:
    /// `None` where the country's tender is not a presentment currency, or for an unknown
    /// country.
    pub fn for_country(country: &str) -> Option<Currency> {
        let country = country.trim().to_ascii_uppercase();
        find(tables::BY_COUNTRY, &country).and_then(Currency::from_code)
    }

    /// Digits of the minor unit: 0 (JPY, KRW, …) or 2.
    pub fn minor_digits(self) -> u32 {
        if ZERO_DECIMAL.binary_search(&self.code()).is_ok() {
            0
        } else {
            2
        }
    }

    /// The symbol pages write before an amount, `""` when they write the code instead.
    pub fn symbol(self) -> &'static str {
        match self.code() {
            "usd" => "$",
            "eur" => "€",
            "gbp" => "£",
            "jpy" => "¥",
            "cad" => "CA$",
            "aud" => "A$",
            _ => "",
        }
    }

    /// An amount typed in major units (`"12.5"`, `"1200"`) in the minor unit: `12.5` USD is
    /// `1250`, `1200` JPY is `1200`. `None` when it is not a plain non-negative number
    /// (digits, then at most the currency's minor digits after a point), or does not fit.
    pub fn to_minor(self, major: &str) -> Option<i64> {
        let digits = self.minor_digits() as usize;
        let (whole, fraction) = match major.split_once('.') {
            Some(_) if digits == 0 => return None,
            Some((w, f)) => (w, f),
            None => (major, ""),
        };
        if whole.is_empty()
            || !whole.bytes().all(|b| b.is_ascii_digit())
            || fraction.len() > digits
            || !fraction.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let whole: i64 = whole.parse().ok()?;
        let fraction: i64 = if fraction.is_empty() {
            0
        } else {
            format!("{fraction:0<digits$}").parse().ok()?
        };
        whole
            .checked_mul(10i64.checked_pow(self.minor_digits())?)?
            .checked_add(fraction)
    }

    /// An amount in the minor unit as major units, without grouping or symbol, as a number
    /// input shows it (`4242` USD → `42.42`, `1500` JPY → `1500`).
    pub fn major(self, amount: i64) -> String {
        let sign = if amount < 0 { "-" } else { "" };
        let abs = amount.unsigned_abs();
        match self.minor_digits() {
            0 => format!("{sign}{abs}"),
            d => {
                let scale = 10u64.pow(d);
                format!("{sign}{}.{:0d$}", abs / scale, abs % scale, d = d as usize)
            }
        }
    }
}

impl Default for Currency {
    fn default() -> Self {
        Currency::DEFAULT
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl fmt::Debug for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Currency({})", self.code())
    }
}

impl PartialEq<str> for Currency {
    fn eq(&self, other: &str) -> bool {
        self.code() == other
    }
}

impl PartialEq<&str> for Currency {
    fn eq(&self, other: &&str) -> bool {
        self.code() == *other
    }
}

impl From<Currency> for String {
    fn from(c: Currency) -> String {
        c.code().to_string()
    }
}

impl Serialize for Currency {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = String::deserialize(deserializer)?;
        Currency::from_code(&code.to_ascii_lowercase())
            .ok_or_else(|| serde::de::Error::custom(format!("not a currency code: {code:?}")))
    }
}

#[cfg(test)]
#[path = "currency_tests.rs"]
mod tests;
