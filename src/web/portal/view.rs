//! How the portal's pages show records: dates, amounts (the one `Money` formatter),
//! statuses in words, and the rows of the overview's lists. Typed: the templates get
//! these strings and the records' ids, nothing else.

use chrono::{DateTime, Utc};
use tollgate_actors::domain::money::Money;
use tollgate_actors::license_key::{KeyStatus, LicenseKey};
use tollgate_actors::subscription::{Subscription, SubscriptionStatus};

use crate::domain::order::{Order, OrderStatus};
use crate::i18n::I18n;

/// "November 25, 2026", "25. November 2026": the language's long date.
pub fn date(i18n: &I18n, t: &DateTime<Utc>) -> String {
    i18n.date(t.date_naive())
}

/// "November 25, 2026, 06:22 UTC" (the time the same in every language).
pub fn date_time(i18n: &I18n, t: &DateTime<Utc>) -> String {
    i18n.t2(
        "portal-date-time",
        "date",
        date(i18n, t),
        "time",
        t.format("%H:%M"),
    )
}

/// An amount with its currency, the language's way ("$12.50", "12,50 €").
pub fn money(i18n: &I18n, amount: i64, currency: &str) -> String {
    Money::new(amount, currency).localized(i18n.lang)
}

/// A status in words and the badge's class (`ok`, `warn`, `off`).
pub struct Status {
    pub label: String,
    pub class: &'static str,
}

fn status(i18n: &I18n, id: &str, class: &'static str) -> Status {
    Status {
        label: i18n.t(id),
        class,
    }
}

pub fn order_status(i18n: &I18n, s: OrderStatus) -> Status {
    match s {
        OrderStatus::Paid => status(i18n, "portal-status-paid", "ok"),
        OrderStatus::PartiallyRefunded => status(i18n, "portal-status-partially-refunded", "warn"),
        OrderStatus::Refunded => status(i18n, "portal-status-refunded", "off"),
        OrderStatus::Pending => status(i18n, "portal-status-payment-due", "warn"),
    }
}

/// Whether the subscription will end at its period's end (and has not yet).
pub fn canceling(s: &Subscription) -> bool {
    s.ended_at.is_none() && (s.cancel_at_period_end || s.ends_at.is_some())
}

pub fn subscription_status(i18n: &I18n, s: &Subscription) -> Status {
    if s.ended_at.is_some() {
        return status(i18n, "portal-status-ended", "off");
    }
    if canceling(s) {
        return status(i18n, "portal-status-canceling", "warn");
    }
    match s.status {
        SubscriptionStatus::Active => status(i18n, "portal-status-active", "ok"),
        SubscriptionStatus::Trialing => status(i18n, "portal-status-trial", "ok"),
        SubscriptionStatus::PastDue => status(i18n, "portal-status-payment-due", "warn"),
        SubscriptionStatus::Unpaid => status(i18n, "portal-status-unpaid", "warn"),
        SubscriptionStatus::Canceled => status(i18n, "portal-status-canceled", "off"),
        SubscriptionStatus::Incomplete | SubscriptionStatus::IncompleteExpired => {
            status(i18n, "portal-status-incomplete", "off")
        }
    }
}

/// "$9.00 / month", "$20.00 / 2 weeks", "Free / month".
pub fn subscription_price(i18n: &I18n, s: &Subscription) -> String {
    let per = i18n.per(
        s.recurring_interval.as_str(),
        s.recurring_interval_count.max(1),
    );
    match (s.amount, &s.currency) {
        (Some(a), Some(c)) => i18n.t2(
            "portal-price-per",
            "amount",
            money(i18n, a, c),
            "period",
            per,
        ),
        _ => i18n.t1("portal-free-per", "period", per),
    }
}

/// What comes next: "Renews on …", "Ends on …", "Ended on …".
pub fn subscription_next(i18n: &I18n, s: &Subscription) -> String {
    if let Some(ended) = &s.ended_at {
        return i18n.t1("portal-ended-on", "date", date(i18n, ended));
    }
    if canceling(s) {
        return match s.ends_at.as_ref().or(s.current_period_end.as_ref()) {
            Some(t) => i18n.t1("portal-ends-on", "date", date(i18n, t)),
            None => i18n.t("portal-ends-at-period-end"),
        };
    }
    match &s.current_period_end {
        Some(t) if s.status.is_active() => i18n.t1("portal-renews-on", "date", date(i18n, t)),
        _ => String::new(),
    }
}

pub fn key_status(i18n: &I18n, k: &LicenseKey, now: DateTime<Utc>) -> Status {
    match k.status {
        KeyStatus::Granted if k.expires_at.is_some_and(|e| e <= now) => {
            status(i18n, "portal-status-expired", "off")
        }
        KeyStatus::Granted => status(i18n, "portal-status-active", "ok"),
        KeyStatus::Disabled => status(i18n, "portal-status-disabled", "warn"),
        KeyStatus::Revoked => status(i18n, "portal-status-revoked", "off"),
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
    pub fn new(i18n: &I18n, o: &Order) -> OrderRow {
        OrderRow {
            id: o.id.to_string(),
            product: o.product_name.clone(),
            date: date(i18n, &o.created_at),
            total: money(i18n, o.amount + o.tax_amount, &o.currency),
            status: order_status(i18n, o.status),
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
    pub fn new(i18n: &I18n, s: &Subscription) -> SubscriptionRow {
        SubscriptionRow {
            id: s.id.to_string(),
            product: s.product_name.clone(),
            price: subscription_price(i18n, s),
            next: subscription_next(i18n, s),
            status: subscription_status(i18n, s),
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

/// A file the buyer may download (the overview's downloads): its link expires
/// (`files.download_link_ttl_secs`); the page gives a fresh one each time it is shown.
pub struct DownloadRow {
    pub id: String,
    pub name: String,
    pub version: String,
    pub size: String,
    pub url: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::locale::Lang;

    #[test]
    fn dates_and_amounts_read_as_a_buyer_reads_them() {
        let t = DateTime::parse_from_rfc3339("2026-11-05T06:22:47Z")
            .unwrap()
            .with_timezone(&Utc);
        let en = I18n::new(Lang::En);
        assert_eq!(date(&en, &t), "November 5, 2026");
        assert_eq!(date_time(&en, &t), "November 5, 2026, 06:22 UTC");
        assert_eq!(money(&en, 1900, "usd"), "$19.00");
        assert_eq!(money(&en, 1800, "eur"), "€18.00");
        assert_eq!(money(&en, 3000, "jpy"), "¥3,000");
        let de = I18n::new(Lang::De);
        assert_eq!(date(&de, &t), "5. November 2026");
        assert_eq!(money(&de, 1900, "eur"), "19,00\u{a0}€");
        assert_eq!(order_status(&de, OrderStatus::Paid).label, "Bezahlt");
        let ja = I18n::new(Lang::Ja);
        assert_eq!(date(&ja, &t), "2026年11月5日");
    }

    #[test]
    fn a_subscription_reads_in_its_own_currency() {
        let mut s = crate::api::subscription::sample_subscriptions()
            .into_iter()
            .next()
            .expect("a sample subscription");
        s.recurring_interval_count = 1;
        (s.amount, s.currency) = (Some(1500), Some("jpy".into()));
        let en = I18n::new(Lang::En);
        let per = en.per(s.recurring_interval.as_str(), 1);
        assert_eq!(subscription_price(&en, &s), format!("¥1,500 / {per}"));
        (s.amount, s.currency) = (Some(900), Some("eur".into()));
        assert_eq!(subscription_price(&en, &s), format!("€9.00 / {per}"));
        let de = I18n::new(Lang::De);
        let per = de.per(s.recurring_interval.as_str(), 1);
        assert_eq!(subscription_price(&de, &s), format!("9,00\u{a0}€ / {per}"));
    }
}
