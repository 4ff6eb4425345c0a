//! What a metered price charges for a period's usage, and how its order line reads
//! (Polar's `ProductPriceMeteredUnit.get_amount_and_label`, `polar-2026.md` §7.5).
//!
//! The price per unit is a decimal number of minor units (cents) with up to 12 decimals
//! (`"0.5"`: half a cent per unit). The billable units are the consumed ones less the
//! credited ones, never negative; the amount is their product rounded half away from zero
//! to a whole minor unit, then capped. The label reads
//! `"API calls — (1,250 consumed units) × $0.005"`, with `" — Capped at $100.00"` when the
//! cap applied (Polar's English formatting: grouped units with at most three decimals, the
//! unit price in major units with all its digits).

use super::currency::Currency;

/// A non-negative decimal: `mantissa × 10^-scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    pub mantissa: u128,
    pub scale: u32,
}

impl Decimal {
    /// Reads `"12"`, `"0.005"`, `"1250.75"`: digits with at most one point, no sign, no
    /// exponent, at most 38 significant digits.
    pub fn parse(s: &str) -> Option<Decimal> {
        let (whole, fraction) = s.split_once('.').unwrap_or((s, ""));
        if (whole.is_empty() && fraction.is_empty())
            || !whole.bytes().all(|b| b.is_ascii_digit())
            || !fraction.bytes().all(|b| b.is_ascii_digit())
            || whole.len() + fraction.len() > 38
        {
            return None;
        }
        let digits = format!("{whole}{fraction}");
        Some(Decimal {
            mantissa: if digits.is_empty() {
                0
            } else {
                digits.parse().ok()?
            },
            scale: u32::try_from(fraction.len()).ok()?,
        })
    }

    /// A finite non-negative float as its shortest decimal (Rust prints the shortest
    /// digits that read back as the same float): `1250.0` is 1250, `0.1` is 0.1.
    pub fn from_f64(v: f64) -> Option<Decimal> {
        if !v.is_finite() || v < 0.0 {
            return None;
        }
        let text = format!("{v}");
        if text.contains('e') {
            // Rust never prints an exponent with `{}`, but stay safe.
            return None;
        }
        Decimal::parse(&text)
    }

    /// `self × other`, rounded half away from zero to an integer; `None` on overflow.
    pub fn mul_round(self, other: Decimal) -> Option<u128> {
        let product = self.mantissa.checked_mul(other.mantissa)?;
        let scale = self.scale.checked_add(other.scale)?;
        if scale == 0 {
            return Some(product);
        }
        let Some(divisor) = 10u128.checked_pow(scale) else {
            // Below one half of a unit whatever the digits (at most 38 of them).
            return Some(0);
        };
        let (q, r) = (product / divisor, product % divisor);
        Some(if r.checked_mul(2)? >= divisor {
            q + 1
        } else {
            q
        })
    }

    /// Its digits with the point `shift` places further left (`shift` ≥ 0), trailing
    /// zeros of the fraction dropped but `min_fraction` kept: 0.5 cents shifted by 2 is
    /// `0.005`, 50 cents `0.50` with `min_fraction` 2.
    fn shifted(self, shift: u32, min_fraction: u32) -> String {
        let scale = self.scale + shift;
        let digits = self.mantissa.to_string();
        let scale_len = scale as usize;
        let padded = if digits.len() <= scale_len {
            format!("{}{digits}", "0".repeat(scale_len + 1 - digits.len()))
        } else {
            digits
        };
        let (whole, fraction) = padded.split_at(padded.len() - scale_len);
        let mut fraction = fraction.trim_end_matches('0').to_string();
        while fraction.len() < min_fraction as usize {
            fraction.push('0');
        }
        if fraction.is_empty() {
            whole.to_string()
        } else {
            format!("{whole}.{fraction}")
        }
    }
}

/// What a metered price charges for `units` (consumed less credited; negative bills
/// nothing): the amount in minor units and whether `cap` cut it. `None` when the
/// price is not a decimal or the product overflows.
pub fn usage_charge(unit_amount: &str, units: f64, cap: Option<i64>) -> Option<(i64, bool)> {
    if !units.is_finite() {
        return None;
    }
    let unit = Decimal::parse(unit_amount)?;
    let billable = Decimal::from_f64(units.max(0.0))?;
    let amount = i64::try_from(unit.mul_round(billable)?).ok()?;
    Some(match cap {
        Some(cap) if amount > cap.max(0) => (cap.max(0), true),
        _ => (amount, false),
    })
}

/// The order line of a metered price: `"<meter> — (<units> consumed units) × <unit
/// price>"`, and `" — Capped at <cap>"` when the cap applied.
pub fn usage_label(
    meter_name: &str,
    units: f64,
    unit_amount: &str,
    currency: &str,
    cap: Option<i64>,
    capped: bool,
) -> String {
    let currency = Currency::from_code(&currency.to_ascii_lowercase()).unwrap_or_default();
    let digits = currency.minor_digits();
    let price = Decimal::parse(unit_amount).map_or_else(
        || unit_amount.to_string(),
        |d| with_symbol(currency, &d.shifted(digits, digits)),
    );
    let mut label = format!(
        "{meter_name} — ({} consumed units) × {price}",
        format_units(units.max(0.0))
    );
    if let (Some(cap), true) = (cap, capped) {
        let cap = Decimal {
            mantissa: u128::try_from(cap.max(0)).unwrap_or(0),
            scale: 0,
        };
        label.push_str(&format!(
            " — Capped at {}",
            with_symbol(currency, &cap.shifted(digits, digits))
        ));
    }
    label
}

fn with_symbol(currency: Currency, number: &str) -> String {
    match currency.symbol() {
        "" => format!("{}\u{a0}{number}", currency.code().to_ascii_uppercase()),
        symbol => format!("{symbol}{number}"),
    }
}

/// `units` as Babel's `en_US` decimal format writes it: grouped by thousands, at most
/// three decimals (rounded half to even, as Babel does), no trailing zeros.
pub fn format_units(units: f64) -> String {
    if !units.is_finite() {
        return "0".into();
    }
    let thousandths = (units * 1000.0).round_ties_even();
    let negative = thousandths < 0.0;
    let thousandths = thousandths.abs();
    // Beyond 2^63 thousandths grouping is moot; saturate.
    let t = if thousandths >= 9.2e18 {
        u64::MAX
    } else {
        thousandths as u64
    };
    let (whole, fraction) = (t / 1000, t % 1000);
    let mut text = group(whole);
    if fraction != 0 {
        let f = format!("{fraction:03}");
        text.push('.');
        text.push_str(f.trim_end_matches('0'));
    }
    if negative {
        format!("-{text}")
    } else {
        text
    }
}

fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_amount_is_rounded_half_away_from_zero_then_capped() {
        assert_eq!(usage_charge("0.5", 1250.0, None), Some((625, false)));
        assert_eq!(usage_charge("0.5", 1.0, None), Some((1, false)));
        assert_eq!(usage_charge("0.5", 0.9, None), Some((0, false)));
        assert_eq!(usage_charge("0.25", 2.0, None), Some((1, false)));
        assert_eq!(usage_charge("0.333333333333", 3.0, None), Some((1, false)));
        assert_eq!(usage_charge("12", 10.5, None), Some((126, false)));
        assert_eq!(usage_charge("0.5", -40.0, None), Some((0, false)));
        assert_eq!(
            usage_charge("0.5", 1_000_000.0, Some(10_000)),
            Some((10_000, true))
        );
        assert_eq!(
            usage_charge("0.5", 20_000.0, Some(10_000)),
            Some((10_000, false))
        );
        assert_eq!(usage_charge("abc", 1.0, None), None);
        assert_eq!(usage_charge("-1", 1.0, None), None);
        assert_eq!(usage_charge("0.1", f64::NAN, None), None);
        // Floats are read as their shortest decimal: 0.1 × 30 is 3 exactly.
        assert_eq!(usage_charge("10", 0.1 * 3.0, None), Some((3, false)));
    }

    #[test]
    fn the_label_reads_as_polars() {
        assert_eq!(
            usage_label("API calls", 1250.0, "0.5", "usd", None, false),
            "API calls — (1,250 consumed units) × $0.005"
        );
        assert_eq!(
            usage_label("Tokens", 1_234_567.25, "50", "eur", Some(10_000), true),
            "Tokens — (1,234,567.25 consumed units) × €0.50 — Capped at €100.00"
        );
        assert_eq!(
            usage_label("Calls", 3.0, "2", "jpy", None, false),
            "Calls — (3 consumed units) × ¥2"
        );
        assert_eq!(
            usage_label("Calls", 0.0, "0.1", "chf", None, false),
            "Calls — (0 consumed units) × CHF\u{a0}0.001"
        );
    }

    #[test]
    fn units_are_grouped_with_at_most_three_decimals() {
        assert_eq!(format_units(0.0), "0");
        assert_eq!(format_units(999.0), "999");
        assert_eq!(format_units(1000.0), "1,000");
        assert_eq!(format_units(1_234_567.891_2), "1,234,567.891");
        assert_eq!(format_units(0.5), "0.5");
        assert_eq!(format_units(2.0004), "2");
    }

    #[test]
    fn decimals_read_and_multiply_exactly() {
        let d = Decimal::parse("0.005").unwrap();
        assert_eq!((d.mantissa, d.scale), (5, 3));
        assert_eq!(Decimal::parse("."), None);
        assert_eq!(Decimal::parse("1e5"), None);
        assert_eq!(Decimal::parse("1.2.3"), None);
        let half = Decimal::parse("0.5").unwrap();
        assert_eq!(half.mul_round(Decimal::parse("3").unwrap()), Some(2));
        assert_eq!(half.mul_round(Decimal::parse("1").unwrap()), Some(1));
        assert_eq!(Decimal::from_f64(1250.0), Decimal::parse("1250"));
        assert_eq!(Decimal::from_f64(-1.0), None);
    }
}
