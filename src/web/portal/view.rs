//! How the portal's pages show records: dates, amounts (the one `Money` formatter),
//! statuses in words, and the rows of the overview's lists. Typed: the templates get
//! these strings and the records' ids, nothing else.

use chrono::{DateTime, Utc};
use tollgate_actors::domain::money::Money;
use tollgate_actors::license_key::{KeyStatus, LicenseKey};
use tollgate_actors::subscription::{Subscription, SubscriptionStatus};

use crate::domain::order::{Order, OrderStatus};

/// "Nov 25, 2026".
pub fn date(t: &DateTime<Utc>) -> String {
    t.format("%b %-d, %Y").to_string()
}

/// "Nov 25, 2026, 06:22 UTC".
pub fn date_time(t: &DateTime<Utc>) -> String {
    t.format("%b %-d, %Y, %H:%M UTC").to_string()
}

/// An amount with its currency ("$12.50").
pub fn money(amount: i64, currency: &str) -> String {
    Money::new(amount, currency).to_string()
}

/// A status in words and the badge's class (`ok`, `warn`, `off`).
pub struct Status {
    pub label: &'static str,
    pub class: &'static str,
}

pub fn order_status(s: OrderStatus) -> Status {
    match s {
        OrderStatus::Paid => Status {
            label: "Paid",
            class: "ok",
        },
        OrderStatus::PartiallyRefunded => Status {
            label: "Partially refunded",
            class: "warn",
        },
        OrderStatus::Refunded => Status {
            label: "Refunded",
            class: "off",
        },
        OrderStatus::Pending => Status {
            label: "Payment due",
            class: "warn",
        },
    }
}

/// Whether the subscription will end at its period's end (and has not yet).
pub fn canceling(s: &Subscription) -> bool {
    s.ended_at.is_none() && (s.cancel_at_period_end || s.ends_at.is_some())
}

pub fn subscription_status(s: &Subscription) -> Status {
    if s.ended_at.is_some() {
        return Status {
            label: "Ended",
            class: "off",
        };
    }
    if canceling(s) {
        return Status {
            label: "Canceling",
            class: "warn",
        };
    }
    match s.status {
        SubscriptionStatus::Active => Status {
            label: "Active",
            class: "ok",
        },
        SubscriptionStatus::Trialing => Status {
            label: "Trial",
            class: "ok",
        },
        SubscriptionStatus::PastDue => Status {
            label: "Payment due",
            class: "warn",
        },
        SubscriptionStatus::Unpaid => Status {
            label: "Unpaid",
            class: "warn",
        },
        SubscriptionStatus::Canceled => Status {
            label: "Canceled",
            class: "off",
        },
        SubscriptionStatus::Incomplete | SubscriptionStatus::IncompleteExpired => Status {
            label: "Incomplete",
            class: "off",
        },
    }
}

/// "$9.00 / month", "$20.00 / 2 weeks", "Free / month".
pub fn subscription_price(s: &Subscription) -> String {
    let per = match s.recurring_interval_count {
        0 | 1 => s.recurring_interval.as_str().to_string(),
        n => format!("{n} {}s", s.recurring_interval.as_str()),
    };
    match (s.amount, &s.currency) {
        (Some(a), Some(c)) => format!("{} / {per}", money(a, c)),
        _ => format!("Free / {per}"),
    }
}

/// What comes next: "Renews on …", "Ends on …", "Ended on …".
pub fn subscription_next(s: &Subscription) -> String {
    if let Some(ended) = &s.ended_at {
        return format!("Ended on {}", date(ended));
    }
    if canceling(s) {
        return match s.ends_at.as_ref().or(s.current_period_end.as_ref()) {
            Some(t) => format!("Ends on {}", date(t)),
            None => "Ends at the end of the period".into(),
        };
    }
    match &s.current_period_end {
        Some(t) if s.status.is_active() => format!("Renews on {}", date(t)),
        _ => String::new(),
    }
}

pub fn key_status(k: &LicenseKey, now: DateTime<Utc>) -> Status {
    match k.status {
        KeyStatus::Granted if k.expires_at.is_some_and(|e| e <= now) => Status {
            label: "Expired",
            class: "off",
        },
        KeyStatus::Granted => Status {
            label: "Active",
            class: "ok",
        },
        KeyStatus::Disabled => Status {
            label: "Disabled",
            class: "warn",
        },
        KeyStatus::Revoked => Status {
            label: "Revoked",
            class: "off",
        },
    }
}

/// An order in a list.
pub struct OrderRow {
    pub id: String,
    pub product: String,
    pub date: String,
    pub total: String,
    pub status: Status,
}

impl OrderRow {
    pub fn new(o: &Order) -> OrderRow {
        OrderRow {
            id: o.id.to_string(),
            product: o.product_name.clone(),
            date: date(&o.created_at),
            total: money(o.amount + o.tax_amount, &o.currency),
            status: order_status(o.status),
        }
    }
}

/// A subscription in a list.
pub struct SubscriptionRow {
    pub id: String,
    pub product: String,
    pub price: String,
    pub next: String,
    pub status: Status,
}

impl SubscriptionRow {
    pub fn new(s: &Subscription) -> SubscriptionRow {
        SubscriptionRow {
            id: s.id.to_string(),
            product: s.product_name.clone(),
            price: subscription_price(s),
            next: subscription_next(s),
            status: subscription_status(s),
        }
    }
}

/// A license key in a list: its benefit, the end of the key, its status.
pub struct KeyRow {
    pub id: String,
    pub benefit: String,
    pub display: String,
    pub status: Status,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_amounts_read_as_a_buyer_reads_them() {
        let t = DateTime::parse_from_rfc3339("2026-11-05T06:22:47Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(date(&t), "Nov 5, 2026");
        assert_eq!(date_time(&t), "Nov 5, 2026, 06:22 UTC");
        assert_eq!(money(1900, "usd"), "$19.00");
        assert_eq!(money(1800, "eur"), "€18.00");
        assert_eq!(money(3000, "jpy"), "¥3,000");
    }

    #[test]
    fn a_subscription_reads_in_its_own_currency() {
        let mut s = crate::api::subscription::sample_subscriptions()
            .into_iter()
            .next()
            .expect("a sample subscription");
        s.recurring_interval_count = 1;
        (s.amount, s.currency) = (Some(1500), Some("jpy".into()));
        let per = s.recurring_interval.as_str();
        assert_eq!(subscription_price(&s), format!("¥1,500 / {per}"));
        (s.amount, s.currency) = (Some(900), Some("eur".into()));
        assert_eq!(subscription_price(&s), format!("€9.00 / {per}"));
    }
}
