//! The words and amounts the checkout pages put together from a checkout (its price,
//! period, trial, seats and tax), in the buyer's language.

use actix_web::HttpRequest;
use tollgate_actors::checkout::Checkout;

use crate::domain::locale::{resolve, Lang};
use crate::domain::product::{PriceKind, SeatTier, SeatTierType, SeatTiers, UnitAmount};
use crate::i18n::I18n;

/// The language of a checkout's pages: its `locale` if Tollgate speaks it, else the
/// browser's `Accept-Language`, else the organization's default, else English.
pub(super) fn page_lang(req: &HttpRequest, locale: Option<&str>, org_default: &str) -> I18n {
    let accept = req
        .headers()
        .get(actix_web::http::header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok());
    I18n::new(resolve(locale, accept, Some(org_default)))
}

/// The language of a page without a checkout (an unknown link): the browser's, else
/// English.
pub(super) fn browser_lang(req: &HttpRequest) -> I18n {
    page_lang(req, None, Lang::En.tag())
}

/// The period a recurring price is per: "month", or "3 months" for a count of 3.
pub(super) fn interval_of(i18n: &I18n, kind: &PriceKind, count: u32) -> Option<String> {
    match kind {
        PriceKind::RecurringFixed { interval, .. }
        | PriceKind::RecurringFree { interval }
        | PriceKind::RecurringSeatBased { interval, .. }
        | PriceKind::RecurringMeteredUnit { interval, .. } => {
            Some(i18n.per(interval.as_str(), count))
        }
        _ => None,
    }
}

/// How the page tells a trial: "Free for 14 days, then $10.00/month: the first charge is
/// on August 2, 2026." (counted from now, as the checkout's `trial_end` is). The amount
/// is its own part, which the page's script updates when a discount changes it.
pub(super) struct TrialNote {
    /// "Free for 14 days, then" or "Free for 14 days."
    pub(super) lead: String,
    /// "$10.00"; empty for a free price.
    pub(super) amount: String,
    /// "/month: the first charge is on August 2, 2026."
    pub(super) rest: String,
}

pub(super) fn trial_note(
    i18n: &I18n,
    c: &Checkout,
    per: &str,
    currency: &str,
) -> Option<TrialNote> {
    let trial = c.active_trial()?;
    let end = c.trial_end?;
    let length = i18n.length(trial.interval.as_str(), trial.count);
    Some(match c.total_amount() {
        Some(t) if t > 0 => TrialNote {
            lead: i18n.t1("trial-then", "length", &length),
            amount: i18n.money(t, currency),
            rest: format!(
                "{per}{}",
                i18n.t1("trial-first-charge", "date", i18n.date(end.date_naive()))
            ),
        },
        _ => TrialNote {
            lead: i18n.t1("trial-free", "length", &length),
            amount: String::new(),
            rest: String::new(),
        },
    })
}

/// How the page shows a price: "Free", "Pay what you want" or the amount (per interval).
pub(super) fn price_label(
    i18n: &I18n,
    kind: &PriceKind,
    amount: Option<i64>,
    count: u32,
) -> String {
    let interval = interval_of(i18n, kind, count);
    match kind {
        PriceKind::OneTimeFree | PriceKind::RecurringFree { .. } => format!(
            "{}{}",
            i18n.t("price-free"),
            interval.map(|i| format!(" / {i}")).unwrap_or_default()
        ),
        PriceKind::OneTimeCustom { .. } => i18n.t("price-pay-what-you-want"),
        PriceKind::OneTimeFixed {
            currency,
            amount: a,
        }
        | PriceKind::RecurringFixed {
            currency,
            amount: a,
            ..
        } => format!(
            "{}{}",
            i18n.money(amount.unwrap_or(*a), currency),
            interval.map(|i| format!("/{i}")).unwrap_or_default()
        ),
        PriceKind::OneTimeSeatBased {
            currency,
            seat_tiers,
        }
        | PriceKind::RecurringSeatBased {
            currency,
            seat_tiers,
            ..
        } => seat_label(i18n, seat_tiers, currency, interval.as_deref()),
        PriceKind::RecurringMeteredUnit {
            currency,
            unit_amount,
            ..
        } => metered_label(i18n, *unit_amount, currency, None),
    }
}

/// The metered prices `product` sells in `currency`, as the pages list them beside its
/// price ("$0.005 per unit · API calls"); `meters`: the product's.
pub(crate) fn metered_labels(
    i18n: &I18n,
    product: &crate::domain::product::Product,
    currency: &str,
    meters: &[crate::domain::meter::Meter],
) -> Vec<String> {
    product
        .active_metered_prices()
        .filter_map(|p| match &p.kind {
            PriceKind::RecurringMeteredUnit {
                currency: c,
                meter_id,
                unit_amount,
                ..
            } if c.eq_ignore_ascii_case(currency) => {
                let name = meters
                    .iter()
                    .find(|m| m.id == *meter_id)
                    .map(|m| m.name.as_str());
                Some(metered_label(i18n, *unit_amount, c, name))
            }
            _ => None,
        })
        .collect()
}

/// A metered price as the pages show it: "$0.005 per unit · API calls" (the meter's name
/// when known).
pub(crate) fn metered_label(
    i18n: &I18n,
    unit_amount: UnitAmount,
    currency: &str,
    meter: Option<&str>,
) -> String {
    let rate = i18n.t1(
        "metered-rate",
        "amount",
        unit_money(i18n, unit_amount, currency),
    );
    match meter {
        Some(name) => format!("{rate} · {name}"),
        None => rate,
    }
}

/// A unit amount (cents, with up to 12 decimals) as money the language's way, keeping
/// the digits beyond the currency's minor unit: "0.5" cents is "$0.005", "19,5" cents
/// "0,195 €".
pub(crate) fn unit_money(i18n: &I18n, unit_amount: UnitAmount, currency: &str) -> String {
    const SCALE: i64 = 1_000_000_000_000;
    let pico = unit_amount.pico_cents();
    let (minor, rest) = (pico / SCALE, pico % SCALE);
    let base = i18n.money(minor, currency);
    if rest == 0 {
        return base;
    }
    let digits = format!("{rest:012}");
    let digits = digits.trim_end_matches('0');
    let Some(last) = base.rfind(|c: char| c.is_ascii_digit()) else {
        return base;
    };
    let (head, tail) = base.split_at(last + 1);
    // A currency without a minor unit (the yen) has no separator yet: the language's.
    let separator = if crate::domain::money::Money::minor_digits(currency) == 0 {
        let sample = i18n.money(150, crate::domain::currency::Currency::DEFAULT.code());
        sample
            .chars()
            .rev()
            .find(|c| !c.is_ascii_digit())
            .map(String::from)
            .unwrap_or_else(|| ".".into())
    } else {
        String::new()
    };
    format!("{head}{separator}{digits}{tail}")
}

/// A seat-based price as the page shows it: "From $10.00 per seat/month" (the rate of the
/// fewest seats).
fn seat_label(i18n: &I18n, tiers: &SeatTiers, currency: &str, interval: Option<&str>) -> String {
    let rate = tiers.tiers().first().map_or(0, |t| t.price_per_seat);
    let id = if tiers.tiers().len() > 1 {
        "seat-rate-from"
    } else {
        "seat-rate"
    };
    format!(
        "{}{}",
        i18n.t1(id, "amount", i18n.money(rate, currency)),
        interval.map(|i| format!("/{i}")).unwrap_or_default()
    )
}

/// One tier of a seat-based price as the page lists it; the script picks the label of the
/// tier a seat count falls in.
pub(super) struct SeatTierView {
    pub(super) min: u32,
    /// Empty for the open-ended last tier.
    pub(super) max: String,
    /// "5–10 seats" or "11+ seats".
    pub(super) range: String,
    /// "$8.00 per seat/month".
    pub(super) rate: String,
    pub(super) current: bool,
}

/// The seats input of a seat-based price: the count chosen and the counts on sale.
pub(super) struct SeatsView {
    pub(super) value: u32,
    pub(super) min: u32,
    /// Empty when the last tier has no end.
    pub(super) max: String,
    /// "From 1 to 10 seats." or "At least 3 seats."
    pub(super) hint: String,
    pub(super) tiers: Vec<SeatTierView>,
    pub(super) graduated: bool,
}

/// The seats a checkout sells at a seat-based price, its per-seat label ("$8.00 per
/// seat/month", the tier the count falls in) and the tiers; `None` for other prices.
pub(super) fn seats_view(
    i18n: &I18n,
    c: &Checkout,
    currency: &str,
    per: &str,
) -> Option<(SeatsView, String)> {
    let tiers = c.price.kind.seat_tiers()?;
    // The counts on sale: the price's, narrowed by the seller's bounds.
    let (min, max) = c.seat_range()?;
    let value = c.seats.unwrap_or(min);
    let rate = |t: &SeatTier| {
        format!(
            "{}{per}",
            i18n.t1(
                "seat-rate",
                "amount",
                i18n.money(t.price_per_seat, currency)
            )
        )
    };
    let label = tiers
        .tier_for(value)
        .or_else(|| tiers.tiers().first())
        .map(rate)
        .unwrap_or_default();
    let view = SeatsView {
        value,
        min,
        max: max.map(|m| m.to_string()).unwrap_or_default(),
        hint: match max {
            Some(m) if m == min => i18n.t1("seats-exactly", "count", min),
            Some(m) => i18n.t2("seats-between", "min", min, "max", m),
            None => i18n.t1("seats-at-least", "min", min),
        },
        tiers: tiers
            .tiers()
            .iter()
            .map(|t| SeatTierView {
                min: t.min_seats,
                max: t.max_seats.map(|m| m.to_string()).unwrap_or_default(),
                range: match t.max_seats {
                    Some(m) if m == t.min_seats => i18n.t1("seat-count", "count", m),
                    Some(m) => i18n.t2("seat-range", "min", t.min_seats, "max", m),
                    None => i18n.t1("seat-range-open", "min", t.min_seats),
                },
                rate: rate(t),
                current: tiers.tier_for(value).is_some_and(|x| x == t),
            })
            .collect(),
        graduated: tiers.tier_type == SeatTierType::Graduated,
    };
    Some((view, label))
}

/// What the buyer is told under the tax number: a reverse charge, or a business number its
/// register refuted (VAT is charged).
pub(super) fn tax_note(i18n: &I18n, c: &Checkout) -> String {
    use tollgate_actors::tax::{TaxIdStatus, TaxabilityReason};
    match c.tax_breakdown.first().map(|b| b.reason) {
        Some(TaxabilityReason::ReverseCharge) => i18n.t("tax-note-reverse-charge"),
        Some(TaxabilityReason::StandardRated)
            if c.is_business_customer && c.tax_id_status == Some(TaxIdStatus::Invalid) =>
        {
            i18n.t("tax-note-refuted")
        }
        _ => String::new(),
    }
}

/// The tax row's label: `VAT 19%`, `Includes VAT 19%` for a price with its tax inside,
/// `VAT reverse charge`; `None` when no tax is shown (the page then says `Tax`).
pub(super) fn tax_label(i18n: &I18n, c: &Checkout) -> Option<String> {
    use tollgate_actors::tax::{TaxBehavior, TaxabilityReason};
    let b = c.tax_breakdown.first()?;
    match b.reason {
        TaxabilityReason::ReverseCharge => Some(i18n.t1("tax-reverse-charge", "name", &b.name)),
        TaxabilityReason::StandardRated => {
            let l = format!("{} {}%", b.name, b.rate_percent());
            Some(match c.tax_behavior.unwrap_or_default() {
                TaxBehavior::Inclusive => i18n.t1("tax-includes", "label", l),
                TaxBehavior::Exclusive => l,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod metered_tests {
    use super::*;

    fn amount(s: &str) -> UnitAmount {
        UnitAmount::parse(s).unwrap_or_else(|e| panic!("{s}: {e:?}"))
    }

    #[test]
    fn unit_amounts_keep_their_sub_cent_digits_in_every_language() {
        let en = I18n::new(Lang::En);
        assert_eq!(unit_money(&en, amount("0.5"), "usd"), "$0.005");
        assert_eq!(unit_money(&en, amount("150"), "usd"), "$1.50");
        assert_eq!(unit_money(&en, amount("1234.25"), "usd"), "$12.3425");
        assert_eq!(
            metered_label(&en, amount("0.5"), "usd", Some("API calls")),
            "$0.005 per unit · API calls"
        );
        let de = I18n::new(Lang::De);
        assert_eq!(unit_money(&de, amount("0.5"), "eur"), "0,005\u{a0}€");
        assert_eq!(
            metered_label(&de, amount("0.5"), "eur", None),
            "0,005\u{a0}€ pro Einheit"
        );
        // The yen has no minor unit: the digits after the point are the language's.
        let ja = I18n::new(Lang::Ja);
        assert_eq!(unit_money(&ja, amount("0.5"), "jpy"), "¥0.5");
        assert_eq!(unit_money(&ja, amount("12"), "jpy"), "¥12");
    }
}
