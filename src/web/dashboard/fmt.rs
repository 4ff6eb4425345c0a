//! How the dashboard's templates show values: dates, days, amounts (through the one
//! `Money` formatter), prices, optional values. Templates call these by path
//! (`{{ fmt::date(order.created_at) }}`), so what they show is typed end to end.

use chrono::{DateTime, Utc};
use tollgate_actors::domain::money::Money;

use crate::domain::benefit::{BenefitProperties, Timeframe};
use crate::domain::discount::{Discount, DiscountKind};
use crate::domain::product::PriceKind;

/// "2026-11-25 06:22 UTC".
pub fn date(t: &DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// [`date`], "" when absent.
pub fn date_opt(t: &Option<DateTime<Utc>>) -> String {
    t.as_ref().map(date).unwrap_or_default()
}

/// "2026-11-25".
pub fn day(t: &DateTime<Utc>) -> String {
    t.format("%Y-%m-%d").to_string()
}

/// [`day`], "" when absent.
pub fn day_opt(t: &Option<DateTime<Utc>>) -> String {
    t.as_ref().map(day).unwrap_or_default()
}

/// An amount with its currency ("$12.50").
pub fn money(amount: &i64, currency: &str) -> String {
    Money::new(*amount, currency).to_string()
}

/// [`money`] of an optional amount and currency ("" when absent).
pub fn money_opt(amount: &Option<i64>, currency: &Option<String>) -> String {
    match (amount, currency) {
        (Some(a), Some(c)) => money(a, c),
        _ => String::new(),
    }
}

/// A value, or "" when absent.
pub fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map(ToString::to_string).unwrap_or_default()
}

/// A price as a seller reads it: "$12.50 / month", "Pay what you want (min $1.00)", "Free".
pub fn price(kind: &PriceKind) -> String {
    match kind {
        PriceKind::RecurringFixed {
            interval,
            currency,
            amount,
        } => format!("{} / {}", money(amount, currency), interval.as_str()),
        PriceKind::RecurringFree { interval } => format!("Free / {}", interval.as_str()),
        PriceKind::OneTimeFixed { currency, amount } => money(amount, currency),
        PriceKind::OneTimeCustom {
            currency,
            minimum_amount,
            ..
        } => match minimum_amount {
            Some(m) => format!("Pay what you want (min {})", money(m, currency)),
            None => "Pay what you want".into(),
        },
        PriceKind::OneTimeFree => "Free".into(),
        PriceKind::RecurringSeatBased {
            interval,
            currency,
            seat_tiers,
        } => format!("{} / {}", seats(seat_tiers, currency), interval.as_str()),
        PriceKind::OneTimeSeatBased {
            currency,
            seat_tiers,
        } => seats(seat_tiers, currency),
        PriceKind::RecurringMeteredUnit {
            interval,
            currency,
            unit_amount,
            cap_amount,
            ..
        } => {
            let cap = cap_amount
                .map(|c| format!(", capped at {}", money(&c, currency)))
                .unwrap_or_default();
            format!(
                "{} cents per unit (metered){cap} / {}",
                unit_amount,
                interval.as_str()
            )
        }
    }
}

/// Polar's presentment currencies, as codes a seller reads (`EUR`), for a select.
pub fn currency_codes() -> Vec<String> {
    crate::domain::currency::Currency::presentment()
        .map(|c| c.code().to_ascii_uppercase())
        .collect()
}

/// A price of `product` as a seller reads it, a free one with its currency ("Free (EUR)")
/// when the product sells in several.
pub fn product_price(
    product: &crate::domain::product::Product,
    p: &crate::domain::product::Price,
) -> String {
    let text = price(&p.kind);
    if p.kind.currency().is_none() && product.currencies().len() > 1 {
        let code = product.currency_of(p).code().to_ascii_uppercase();
        return format!("{text} ({code})");
    }
    text
}

/// A seat-based price's tiers: "$10.00 per seat (1-4), $8.00 per seat (5+)".
fn seats(tiers: &crate::domain::product::SeatTiers, currency: &str) -> String {
    let parts: Vec<String> = tiers
        .tiers()
        .iter()
        .map(|t| {
            let range = match t.max_seats {
                Some(max) => format!("{}-{max}", t.min_seats),
                None => format!("{}+", t.min_seats),
            };
            format!("{} per seat ({range})", money(&t.price_per_seat, currency))
        })
        .collect();
    parts.join(", ")
}

/// What a discount takes off: "$5.00" or "1250 bp".
pub fn discount_off(kind: &DiscountKind) -> String {
    match kind {
        DiscountKind::Fixed { amount, currency } => money(amount, currency),
        DiscountKind::Percentage { basis_points } => format!("{basis_points} bp"),
    }
}

/// What a discount takes off, each amount in its currency: "$10.00, €9.00" or "1250 bp".
pub fn discount_amounts(d: &Discount) -> String {
    match &d.kind {
        DiscountKind::Fixed { .. } => d
            .fixed_amounts()
            .iter()
            .map(|(c, a)| Money::new(*a, c.code()).to_string())
            .collect::<Vec<_>>()
            .join(", "),
        DiscountKind::Percentage { .. } => discount_off(&d.kind),
    }
}

/// A benefit's details: a license-key benefit's prefix, expiry and limits; nothing for
/// other types.
pub fn benefit_details(p: &BenefitProperties) -> String {
    let BenefitProperties::LicenseKeys(k) = p else {
        return String::new();
    };
    let prefix = k.prefix.clone().unwrap_or_else(|| "none".into());
    let expires = match &k.expires {
        Some(e) => format!(
            "after {} {}(s)",
            e.ttl,
            match e.timeframe {
                Timeframe::Day => "day",
                Timeframe::Month => "month",
                Timeframe::Year => "year",
            }
        ),
        None => "never".into(),
    };
    let activations = match &k.activations {
        Some(a) => format!("≤ {}", a.limit),
        None => "unlimited".into(),
    };
    let usage = match k.limit_usage {
        Some(n) => format!("≤ {n}"),
        None => "unlimited".into(),
    };
    format!("prefix {prefix}\n· expires {expires}\n· activations {activations}\n· usage {usage}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::product::RecurringInterval;

    #[test]
    fn dates_amounts_and_prices_read_as_a_seller_reads_them() {
        let t = DateTime::parse_from_rfc3339("2026-11-25T06:22:47.123Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(date(&t), "2026-11-25 06:22 UTC");
        assert_eq!(day(&t), "2026-11-25");
        assert_eq!(day_opt(&None), "");
        assert_eq!(money(&123450, "usd"), "$1,234.50");
        assert_eq!(
            price(&PriceKind::RecurringFixed {
                interval: RecurringInterval::Month,
                currency: "usd".into(),
                amount: 1250
            }),
            "$12.50 / month"
        );
        assert_eq!(
            price(&PriceKind::OneTimeCustom {
                currency: "usd".into(),
                minimum_amount: Some(500),
                maximum_amount: None,
                preset_amount: None
            }),
            "Pay what you want (min $5.00)"
        );
        assert_eq!(price(&PriceKind::OneTimeFree), "Free");
        assert_eq!(
            discount_off(&DiscountKind::Percentage { basis_points: 1250 }),
            "1250 bp"
        );
    }
}
