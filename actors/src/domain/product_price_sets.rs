//! The rules of a product's set of prices, per currency and across currencies.

use super::{AmountType, Currency, PriceKind, RecurringInterval};

/// Why a set of (non-archived) prices can't be a product's: a product has 1–2 recurring
/// fixed prices with distinct intervals, or exactly one recurring free or seat-based
/// price, or exactly one one-time price; beside them (one at most then) any number of
/// metered prices, which alone are a valid set too (Polar's usage-only products).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceSetProblem {
    /// Fewer than `min` prices.
    TooShort { min: usize },
    /// More than `max` prices.
    TooLong { max: usize },
    /// Recurring and one-time prices mixed.
    Mixed,
    /// Two prices of one interval.
    SameInterval,
    /// The currencies' price sets differ in their types (Polar: "All price currencies
    /// must define the same set of price types.").
    DifferentStructure,
    /// No price in the organization's default presentment currency.
    DefaultCurrencyMissing,
}

/// What is wrong with a price set, if anything (see [`PriceSetProblem`]). Whether two
/// metered prices share a meter is the caller's check (its 422 names the price).
pub fn price_set_problem(kinds: &[&PriceKind]) -> Option<PriceSetProblem> {
    if kinds.is_empty() {
        return Some(PriceSetProblem::TooShort { min: 1 });
    }
    let metered = kinds.iter().filter(|k| k.is_metered()).count();
    let kinds: Vec<&PriceKind> = kinds.iter().copied().filter(|k| !k.is_metered()).collect();
    if kinds.is_empty() {
        return None;
    }
    let recurring = kinds.iter().filter(|k| k.is_recurring()).count();
    if recurring != kinds.len() && (recurring != 0 || metered != 0) {
        return Some(PriceSetProblem::Mixed);
    }
    // A seat-based price is sold alone (Polar adds a fixed price to it; Tollgate does not);
    // metered prices go beside one price billed up front.
    let alone = metered > 0
        || kinds.iter().any(|k| {
            matches!(
                k,
                PriceKind::RecurringFree { .. } | PriceKind::RecurringSeatBased { .. }
            )
        });
    if recurring == 0 || alone {
        return (kinds.len() > 1).then_some(PriceSetProblem::TooLong { max: 1 });
    }
    if kinds.len() > 2 {
        return Some(PriceSetProblem::TooLong { max: 2 });
    }
    let mut intervals: Vec<RecurringInterval> = kinds.iter().filter_map(|k| k.interval()).collect();
    intervals.sort_by_key(|i| i.as_str());
    intervals.dedup();
    (intervals.len() != kinds.len()).then_some(PriceSetProblem::SameInterval)
}

/// The shape of a price that must be the same in every currency: one-time or its
/// interval, and its amount type (a free price is a fixed one of 0, as Polar has it).
fn price_type(kind: &PriceKind) -> (Option<RecurringInterval>, bool, &'static str) {
    let amount_type = match kind.amount_type() {
        AmountType::Free | AmountType::Fixed => "fixed",
        other => other.as_str(),
    };
    (kind.interval(), kind.is_recurring(), amount_type)
}

/// What is wrong with the (non-archived) prices of a product sold in several currencies,
/// with the number of prices the problem counted: each currency's prices must be a valid
/// price set ([`price_set_problem`]), every currency must have the same types of prices,
/// and `default` (the organization's default presentment currency, when known) must be
/// among them.
pub fn price_sets_problem(
    prices: &[(Currency, &PriceKind)],
    default: Option<Currency>,
) -> Option<(PriceSetProblem, usize)> {
    if prices.is_empty() {
        return Some((PriceSetProblem::TooShort { min: 1 }, 0));
    }
    let mut currencies: Vec<Currency> = Vec::new();
    for (c, _) in prices {
        if !currencies.contains(c) {
            currencies.push(*c);
        }
    }
    let mut shape: Option<Vec<(Option<RecurringInterval>, bool, &'static str)>> = None;
    for c in &currencies {
        let kinds: Vec<&PriceKind> = prices
            .iter()
            .filter(|(pc, _)| pc == c)
            .map(|(_, k)| *k)
            .collect();
        if let Some(problem) = price_set_problem(&kinds) {
            return Some((problem, kinds.len()));
        }
        let mut types: Vec<_> = kinds.iter().map(|k| price_type(k)).collect();
        types.sort_by_key(|(i, r, a)| (i.map(RecurringInterval::as_str), *r, *a));
        match &shape {
            None => shape = Some(types),
            Some(first) if *first != types => {
                return Some((PriceSetProblem::DifferentStructure, prices.len()))
            }
            Some(_) => {}
        }
    }
    if default.is_some_and(|d| !currencies.contains(&d)) {
        return Some((PriceSetProblem::DefaultCurrencyMissing, prices.len()));
    }
    None
}
