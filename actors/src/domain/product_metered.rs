//! The amount of a metered price per unit (Polar's `unit_amount`, a `Numeric(17, 12)` of
//! cents): a positive decimal of at most 17 digits, 12 of them after the point.
//!
//! Stored exactly as a whole number of 10⁻¹² cents (an `i64`: the largest value,
//! 99 999.999999999999 cents, is below 10¹⁷), rendered as Pydantic renders a `Decimal`
//! (`str`): no exponent, no trailing zeros after the point (`"0.5"`, `"12"`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Digits after the point a unit amount keeps.
pub const UNIT_AMOUNT_DECIMALS: u32 = 12;
/// Digits a unit amount may have in all.
pub const UNIT_AMOUNT_DIGITS: u32 = 17;
/// Digits before the point (17 − 12).
pub const UNIT_AMOUNT_WHOLE_DIGITS: u32 = UNIT_AMOUNT_DIGITS - UNIT_AMOUNT_DECIMALS;

const SCALE: i64 = 1_000_000_000_000;

/// A metered price's amount per unit, in 10⁻¹² cents (always > 0 once parsed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UnitAmount(i64);

/// Why a decimal can't be a unit amount (pydantic's errors of `Decimal(gt=0,
/// max_digits=17, decimal_places=12)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitAmountProblem {
    /// Not a finite decimal number (`decimal_parsing`).
    Parsing,
    /// More than 17 digits (`decimal_max_digits`).
    MaxDigits,
    /// More than 12 digits after the point (`decimal_max_places`).
    MaxPlaces,
    /// More than 5 digits before the point (`decimal_whole_digits`).
    WholeDigits,
    /// Zero or negative (`greater_than`).
    NotPositive,
}

impl UnitAmount {
    /// The amount of `pico_cents` 10⁻¹² cents (`None` unless positive and at most 17
    /// digits).
    pub fn from_pico_cents(pico_cents: i64) -> Option<UnitAmount> {
        (pico_cents > 0 && pico_cents < 10_i64.pow(UNIT_AMOUNT_DIGITS))
            .then_some(UnitAmount(pico_cents))
    }

    /// The amount in 10⁻¹² cents.
    pub fn pico_cents(self) -> i64 {
        self.0
    }

    /// Reads a decimal as Python's `Decimal(str)` does (sign, digits, an optional point,
    /// an optional exponent; surrounding spaces allowed), then pydantic's constraints in
    /// its order: digits and places (trailing zeros after the point do not count, as
    /// pydantic normalizes), then `> 0`.
    pub fn parse(text: &str) -> Result<UnitAmount, UnitAmountProblem> {
        let s = text.trim();
        let (negative, s) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let (mantissa, exponent) = match s.find(['e', 'E']) {
            Some(i) => {
                let e: i64 = s[i + 1..].parse().map_err(|_| UnitAmountProblem::Parsing)?;
                (&s[..i], e)
            }
            None => (s, 0),
        };
        let (int_part, frac_part) = match mantissa.split_once('.') {
            Some((i, f)) => (i, f),
            None => (mantissa, ""),
        };
        let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
        if (int_part.is_empty() && frac_part.is_empty())
            || !all_digits(int_part)
            || !all_digits(frac_part)
        {
            return Err(UnitAmountProblem::Parsing);
        }
        // The significant digits and the power of ten of the last one, normalized.
        let digits: String = format!("{int_part}{frac_part}");
        let digits = digits.trim_start_matches('0');
        let mut exp = exponent
            .checked_sub(frac_part.len() as i64)
            .ok_or(UnitAmountProblem::Parsing)?;
        let trimmed = digits.trim_end_matches('0');
        exp += (digits.len() - trimmed.len()) as i64;
        let digits = trimmed;
        if digits.is_empty() {
            return Err(UnitAmountProblem::NotPositive);
        }
        // pydantic: decimals = max(0, -exp); whole = len(digits) + exp when exp ≥ -len.
        let places = (-exp).max(0);
        let total = if exp >= 0 {
            digits.len() as i64 + exp
        } else {
            (digits.len() as i64).max(places)
        };
        let whole = total - places;
        if total > i64::from(UNIT_AMOUNT_DIGITS) {
            return Err(UnitAmountProblem::MaxDigits);
        }
        if places > i64::from(UNIT_AMOUNT_DECIMALS) {
            return Err(UnitAmountProblem::MaxPlaces);
        }
        if whole > i64::from(UNIT_AMOUNT_WHOLE_DIGITS) {
            return Err(UnitAmountProblem::WholeDigits);
        }
        if negative {
            return Err(UnitAmountProblem::NotPositive);
        }
        let mut value: i64 = digits.parse().map_err(|_| UnitAmountProblem::Parsing)?;
        let shift = exp + i64::from(UNIT_AMOUNT_DECIMALS);
        for _ in 0..shift {
            value = value.checked_mul(10).ok_or(UnitAmountProblem::MaxDigits)?;
        }
        Ok(UnitAmount(value))
    }

    /// The amount of `units` units in cents, rounded half away from zero (Polar's
    /// `polar_round`), saturating.
    pub fn amount_for(self, units: u64) -> i64 {
        let pico = i128::from(self.0) * i128::from(units);
        let scale = i128::from(SCALE);
        let rounded = (pico + scale / 2) / scale;
        i64::try_from(rounded).unwrap_or(i64::MAX)
    }
}

impl fmt::Display for UnitAmount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, frac) = (self.0 / SCALE, self.0 % SCALE);
        if frac == 0 {
            return write!(f, "{whole}");
        }
        let frac = format!("{frac:012}");
        write!(f, "{whole}.{}", frac.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<String, UnitAmountProblem> {
        UnitAmount::parse(s).map(|a| a.to_string())
    }

    #[test]
    fn parses_and_renders_like_pydantic_decimals() {
        assert_eq!(parse("0.5"), Ok("0.5".into()));
        assert_eq!(parse(" 0.50 "), Ok("0.5".into()));
        assert_eq!(parse("12"), Ok("12".into()));
        assert_eq!(parse("12.000"), Ok("12".into()));
        assert_eq!(parse("+1.25"), Ok("1.25".into()));
        assert_eq!(parse("1e-7"), Ok("0.0000001".into()));
        assert_eq!(parse("1.5E2"), Ok("150".into()));
        assert_eq!(parse(".5"), Ok("0.5".into()));
        assert_eq!(parse("5."), Ok("5".into()));
        assert_eq!(parse("0.000000000001"), Ok("0.000000000001".into()));
        assert_eq!(parse("99999.999999999999"), Ok("99999.999999999999".into()));
        assert_eq!(
            UnitAmount::parse("0.5").map(UnitAmount::pico_cents),
            Ok(500_000_000_000)
        );
    }

    #[test]
    fn refuses_what_pydantic_refuses_in_its_order() {
        use UnitAmountProblem as P;
        assert_eq!(parse("0"), Err(P::NotPositive));
        assert_eq!(parse("0.000"), Err(P::NotPositive));
        assert_eq!(parse("-1"), Err(P::NotPositive));
        assert_eq!(parse("0.0000000000001"), Err(P::MaxPlaces));
        assert_eq!(parse("100000"), Err(P::WholeDigits));
        assert_eq!(parse("123456.123456789012"), Err(P::MaxDigits));
        assert_eq!(parse("1e20"), Err(P::MaxDigits));
        assert_eq!(parse("-0.0000000000001"), Err(P::MaxPlaces));
        for bad in [
            "", "abc", "1.2.3", "1e", "e5", "NaN", "inf", "0x10", "1,5", "- 1",
        ] {
            assert_eq!(parse(bad), Err(P::Parsing), "{bad:?}");
        }
    }

    #[test]
    fn amounts_round_half_away_from_zero() {
        let half_cent = UnitAmount::parse("0.5").unwrap();
        assert_eq!(half_cent.amount_for(0), 0);
        assert_eq!(half_cent.amount_for(1), 1);
        assert_eq!(half_cent.amount_for(3), 2);
        assert_eq!(half_cent.amount_for(1250), 625);
        let tiny = UnitAmount::parse("0.000000000001").unwrap();
        assert_eq!(tiny.amount_for(u64::MAX), 18_446_744);
        assert_eq!(UnitAmount::from_pico_cents(0), None);
        assert_eq!(
            UnitAmount::from_pico_cents(1).map(|a| a.to_string()),
            Some("0.000000000001".into())
        );
    }
}
