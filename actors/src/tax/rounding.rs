//! How tax amounts are rounded: integer arithmetic only, in the currency's minor unit
//! (cents; units for a zero-decimal currency such as JPY, by the same code), with `i128`
//! inside so no product of an amount and a rate can overflow.
//!
//! The rule:
//! - Tax is computed **per rate group** (the lines of one quote taxed in the same
//!   jurisdiction at the same rate) **on the group's total**, then rounded **half away from
//!   zero** to the minor unit (commercial rounding, the EU member states' usual rule; not
//!   half-even): 250 × 19 % = 47.5 → 48, and a credit line of −250 → −48, so a credit
//!   mirrors its charge exactly.
//! - Exclusive prices: tax = round(net × rate) ([`tax_exclusive`]). Inclusive prices: the
//!   price is the gross, net = round(gross ÷ (1 + rate)) and tax = gross − net
//!   ([`tax_inclusive`]), so net + tax == gross exactly.
//! - The group's tax is then spread back over its lines by the largest-remainder method
//!   ([`spread`]), so the lines' taxes add up exactly to the group's.
//!
//! Why not per line: 100 lines of 0.01 at 19 % are 0.0019 each, which rounds to 0.00 per
//! line, 0.00 in all; on the group's total of 1.00 the tax is 0.19, which is what is owed.
//! Rounding per line would lose (or, at x.5 everywhere, invent) up to half a minor unit per
//! line ([`group_tax`] does it the right way round).
//!
//! Refunds keep their own proportional rule (Polar's `refund_tax`, half-even), not this one.

use super::TaxBehavior;

/// The denominator of a rate in parts per million.
const PPM: i128 = 1_000_000;

/// `num / den` rounded half away from zero; `den` must be positive.
fn div_round(num: i128, den: i128) -> i128 {
    let (q, r) = (num / den, num % den);
    if 2 * r.abs() >= den {
        q + num.signum()
    } else {
        q
    }
}

/// An `i128` result as an amount, saturating at the bounds of `i64` (reached only by rates
/// of thousands of percent on amounts near `i64::MAX`, which no table holds).
fn amount(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// The tax added to a tax-exclusive `net` at `ppm` parts per million: net × rate, rounded
/// half away from zero. A negative `net` (a credit) gives the negated tax of its opposite.
pub fn tax_exclusive(net: i64, ppm: u32) -> i64 {
    amount(div_round(i128::from(net) * i128::from(ppm), PPM))
}

/// The tax inside a tax-inclusive `gross` at `ppm`: gross − round(gross ÷ (1 + rate)),
/// rounded half away from zero, so the net (gross − tax) plus the tax is the gross exactly.
/// Symmetric for a negative `gross`.
pub fn tax_inclusive(gross: i64, ppm: u32) -> i64 {
    let gross = i128::from(gross);
    let net = div_round(gross * PPM, PPM + i128::from(ppm));
    amount(gross - net)
}

/// The tax of `amount` at `ppm` for the given behaviour: added to it (exclusive) or inside
/// it (inclusive).
pub fn tax(amount: i64, ppm: u32, behavior: TaxBehavior) -> i64 {
    match behavior {
        TaxBehavior::Exclusive => tax_exclusive(amount, ppm),
        TaxBehavior::Inclusive => tax_inclusive(amount, ppm),
    }
}

/// The tax of one rate group: computed once on the lines' total, then spread over the lines
/// in proportion to their amounts (see the module doc). The result has one entry per line
/// and sums to the tax of the total.
pub fn group_tax(amounts: &[i64], ppm: u32, behavior: TaxBehavior) -> Vec<i64> {
    let total = amount(amounts.iter().map(|&a| i128::from(a)).sum());
    spread(tax(total, ppm, behavior), amounts)
}

/// `total` split into one share per weight, proportional to the weights, the shares adding
/// up exactly to `total` (the largest-remainder method): each line gets the whole part of
/// its exact share, and the units left over go one each to the lines with the largest
/// remainders, an earlier line first on a tie. A negative `total` is spread as its opposite,
/// negated (symmetric); negative weights (a discount line) get shares of the opposite sign.
/// Weights that sum to zero carry no proportion: the total is then spread evenly. No
/// weights: no shares.
pub fn spread(total: i64, weights: &[i64]) -> Vec<i64> {
    if weights.is_empty() {
        return Vec::new();
    }
    let sum: i128 = weights.iter().map(|&w| i128::from(w)).sum();
    let weights: Vec<i128> = if sum == 0 {
        vec![1; weights.len()]
    } else {
        weights.iter().map(|&w| i128::from(w)).collect()
    };
    let sum: i128 = weights.iter().sum();
    // Make the divisor and the total positive: share_i = total × w_i / sum is unchanged by
    // negating both w_i and sum, and negating the total negates every share.
    let (weights, sum) = if sum < 0 {
        (weights.iter().map(|w| -w).collect(), -sum)
    } else {
        (weights, sum)
    };
    let negative = total < 0;
    let t = i128::from(total).abs();
    let mut shares = Vec::with_capacity(weights.len());
    let mut remainders = Vec::with_capacity(weights.len());
    for &w in &weights {
        let exact = t * w;
        let q = exact.div_euclid(sum);
        shares.push(q);
        remainders.push(exact.rem_euclid(sum));
    }
    // Σq·sum + Σr = t·sum, so the units left are Σr / sum, fewer than the number of lines.
    let left = remainders.iter().sum::<i128>() / sum;
    let mut order: Vec<usize> = (0..weights.len()).collect();
    // Stable: on equal remainders the earlier line stays first.
    order.sort_by(|&a, &b| remainders[b].cmp(&remainders[a]));
    for &i in order
        .iter()
        .take(usize::try_from(left).unwrap_or(usize::MAX))
    {
        shares[i] += 1;
    }
    shares
        .into_iter()
        .map(|s| amount(if negative { -s } else { s }))
        .collect()
}

#[cfg(test)]
#[path = "rounding_tests.rs"]
mod tests;
