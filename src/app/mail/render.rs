//! The messages as people read them: askama templates (`templates/mail/`), each with a
//! plain-text part and an HTML part (inline styles only, one narrow column: readable in
//! any mail client and on a phone), the organization's name and avatar, and amounts in
//! the one `Money` format of the pages.

use askama::Template;
use chrono::{DateTime, Utc};

use crate::error::AppError;
use crate::i18n::I18n;
use tollgate_actors::license_key::{KeyStatus, LicenseKey};

/// A message's three rendered parts.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// The organization a message speaks for.
#[derive(Debug, Clone)]
pub struct Brand {
    pub name: String,
    pub avatar_url: Option<String>,
    pub email: Option<String>,
}

impl Brand {
    /// The avatar's stand-in: the name's first letter.
    pub fn initial(&self) -> String {
        self.name
            .chars()
            .next()
            .map(|c| c.to_uppercase().to_string())
            .unwrap_or_default()
    }
}

/// One license key as a message lists it.
#[derive(Debug, Clone)]
pub struct KeyLine {
    pub key: String,
    pub benefit: String,
    /// `granted`, `revoked` or `disabled`.
    pub status: &'static str,
    /// "Up to 3 activations", "1,000 uses".
    pub limits: Vec<String>,
    pub expires: Option<String>,
    /// The language of the message it is in.
    pub i18n: I18n,
}

impl KeyLine {
    pub fn of(i18n: I18n, k: &LicenseKey, benefit: String) -> Self {
        let mut limits = Vec::new();
        if let Some(n) = k.limit_activations {
            limits.push(i18n.t1("key-limit-activations", "count", n));
        }
        if let Some(n) = k.limit_usage {
            limits.push(i18n.t1("key-limit-uses", "count", n));
        }
        Self {
            key: k.key.clone(),
            benefit,
            status: match k.status {
                KeyStatus::Granted => "granted",
                KeyStatus::Revoked => "revoked",
                KeyStatus::Disabled => "disabled",
            },
            limits,
            expires: k.expires_at.map(|t| i18n.date(t.date_naive())),
            i18n,
        }
    }

    /// "up to 3 activations · valid until November 26, 2027", or "does not expire".
    pub fn terms(&self) -> String {
        let mut parts = self.limits.clone();
        parts.push(match &self.expires {
            Some(e) => self.i18n.t1("valid-until", "date", e),
            None => self.i18n.t("key-no-expiry"),
        });
        parts.join(" · ")
    }

    /// Its status when not `granted`, in the message's language.
    pub fn status_word(&self) -> String {
        match self.status {
            "revoked" => self.i18n.t("key-status-revoked"),
            "disabled" => self.i18n.t("key-status-disabled"),
            s => s.to_string(),
        }
    }
}

/// `November 26, 2026` (English; a message in another language uses its [`I18n::date`]).
pub fn date(t: DateTime<Utc>) -> String {
    t.format("%B %-d, %Y").to_string()
}

fn render_err(e: askama::Error) -> AppError {
    AppError::internal(format!("rendering an e-mail: {e}"))
}

// ---------------------------------------------------------------------------------------
// Receipts

/// A receipt: of an order, of a renewal, or the seller's copy of either.
pub struct Receipt {
    /// The language it is written in.
    pub i18n: I18n,
    pub brand: Brand,
    pub renewal: bool,
    /// For the seller's copy: the buyer's address.
    pub seller_copy: Option<String>,
    pub product_name: String,
    pub interval: Option<String>,
    pub date: String,
    pub order_ref: String,
    pub currency: String,
    pub subtotal: i64,
    pub discount: i64,
    pub tax: i64,
    /// The tax line's label (`VAT 19%`, `VAT reverse charge`; `None`: `Tax`).
    pub tax_label: Option<String>,
    /// What the tax requires the receipt to say (the reverse-charge mention, the buyer's tax
    /// number).
    pub tax_notes: Vec<String>,
    pub total: i64,
    pub keys: Vec<KeyLine>,
    pub benefits: Vec<String>,
    /// Where the purchase is shown (the confirmation page; the dashboard for the seller).
    pub link: Option<String>,
    /// When the purchase grants files to download: the customer portal's page that lists
    /// them (the buyer signs in there; the links themselves expire in minutes).
    pub downloads: Option<String>,
    /// The page that sends the keys again.
    pub resend: String,
    /// The order's invoice, attached: its number and the attachment's name.
    pub invoice: Option<(String, String)>,
}

/// One line of the amounts.
pub struct Line {
    pub label: String,
    pub value: String,
    pub total: bool,
}

impl Receipt {
    pub fn lines(&self) -> Vec<Line> {
        let i18n = self.i18n;
        let m = |a| i18n.money(a, &self.currency);
        let per = self
            .interval
            .as_ref()
            .map(|i| format!(" / {i}"))
            .unwrap_or_default();
        let mut out = vec![Line {
            label: i18n.t("subtotal"),
            value: m(self.subtotal),
            total: false,
        }];
        if self.discount > 0 {
            out.push(Line {
                label: i18n.t("discount"),
                value: m(-self.discount),
                total: false,
            });
        }
        out.push(Line {
            label: self.tax_label.clone().unwrap_or_else(|| i18n.t("tax")),
            value: m(self.tax),
            total: false,
        });
        out.push(Line {
            label: i18n.t("total-paid"),
            value: format!("{}{per}", m(self.total)),
            total: true,
        });
        out
    }

    pub fn subject(&self) -> String {
        let i = self.i18n;
        let amount = i.money(self.total, &self.currency);
        match (&self.seller_copy, self.renewal) {
            (Some(buyer), _) => i.ta(
                "receipt-subject-seller",
                &[
                    ("buyer", buyer),
                    ("product", &self.product_name),
                    ("amount", &amount),
                ],
            ),
            (None, true) => i.t2(
                "receipt-subject-renewal",
                "product",
                &self.product_name,
                "amount",
                amount,
            ),
            (None, false) => i.t2(
                "receipt-subject",
                "seller",
                &self.brand.name,
                "product",
                &self.product_name,
            ),
        }
    }

    pub fn heading(&self) -> String {
        self.i18n.t(match (&self.seller_copy, self.renewal) {
            (Some(_), _) => "receipt-heading-seller",
            (None, true) => "receipt-heading-renewal",
            (None, false) => "receipt-heading",
        })
    }

    /// The first sentence: what was bought, when (and by whom, for the seller), as text.
    pub fn intro(&self) -> String {
        let (id, vars) = self.intro_parts();
        self.i18n.ta(id, &vars)
    }

    /// [`Receipt::intro`] as HTML, the product in bold.
    pub fn intro_html(&self) -> String {
        let (id, vars) = self.intro_parts();
        let others: Vec<(&str, &dyn std::fmt::Display)> =
            vars.into_iter().filter(|(k, _)| *k != "product").collect();
        self.i18n
            .strong_with(id, "product", &self.product_name, &others)
    }

    fn intro_parts(&self) -> (&'static str, Vec<(&str, &dyn std::fmt::Display)>) {
        match (&self.seller_copy, self.renewal) {
            (Some(buyer), _) => (
                "receipt-text-seller",
                vec![
                    ("buyer", buyer as &dyn std::fmt::Display),
                    ("product", &self.product_name),
                    ("date", &self.date),
                ],
            ),
            (None, true) => (
                "receipt-text-renewal",
                vec![("product", &self.product_name), ("date", &self.date)],
            ),
            (None, false) => (
                "receipt-text",
                vec![
                    ("product", &self.product_name),
                    ("seller", &self.brand.name),
                    ("date", &self.date),
                ],
            ),
        }
    }

    pub fn render(&self) -> Result<Rendered, AppError> {
        Ok(Rendered {
            subject: self.subject(),
            text: ReceiptText { r: self }.render().map_err(render_err)?,
            html: ReceiptHtml { r: self }.render().map_err(render_err)?,
        })
    }
}

#[derive(Template)]
#[template(path = "mail/receipt.txt")]
struct ReceiptText<'a> {
    r: &'a Receipt,
}

#[derive(Template)]
#[template(path = "mail/receipt.html")]
struct ReceiptHtml<'a> {
    r: &'a Receipt,
}

// ---------------------------------------------------------------------------------------
// Notices

/// What a notice asks the reader to do: a sentence, the link (a button in the HTML part),
/// and what to know about it.
#[derive(Debug, Clone)]
pub struct Action {
    pub lead: String,
    pub url: String,
    pub label: String,
    pub after: Vec<String>,
}

/// The one-use link of a "payment failed" message (`crate::app::portal::recovery_link`)
/// and the day it stops working, which is the day access stops.
#[derive(Debug, Clone)]
pub struct Recovery {
    pub url: String,
    /// `November 26, 2026`.
    pub until: String,
}

/// A message that says one thing, with the keys it is about and a link.
pub struct Notice {
    /// The language it is written in.
    pub i18n: I18n,
    pub brand: Brand,
    pub subject: String,
    pub heading: String,
    pub paragraphs: Vec<String>,
    pub keys: Vec<KeyLine>,
    pub keys_heading: String,
    pub link: Option<String>,
    pub link_label: String,
    /// A one-time code, shown large, then more paragraphs.
    pub code: Option<String>,
    pub paragraphs_after: Vec<String>,
    /// What to do, after the paragraphs (before the keys).
    pub action: Option<Action>,
}

impl Notice {
    fn new(i18n: I18n, subject: String, heading: &str, paragraphs: Vec<String>) -> Self {
        Self {
            i18n,
            brand: Brand {
                name: String::new(),
                avatar_url: None,
                email: None,
            },
            subject,
            heading: i18n.t(heading),
            paragraphs,
            keys: Vec::new(),
            keys_heading: i18n.t1("your-license-keys", "count", 2),
            link: None,
            link_label: i18n.t("view-purchase"),
            code: None,
            paragraphs_after: Vec::new(),
            action: None,
        }
    }

    /// The customer portal's sign-in code (Polar's `customer_session_code` e-mail).
    pub fn sign_in_code(
        i18n: I18n,
        organization: &str,
        code: &str,
        minutes: i64,
        link: String,
    ) -> Self {
        let mut n = Self::new(
            i18n,
            i18n.t1("sign-in-subject", "seller", organization),
            "sign-in-heading",
            vec![i18n.t1("sign-in-text", "seller", organization)],
        );
        n.code = Some(code.to_string());
        n.paragraphs_after = vec![
            i18n.t1("code-expires", "minutes", minutes),
            i18n.t("sign-in-ignore"),
        ];
        n.link = Some(link);
        n.link_label = i18n.t("open-portal");
        n
    }

    /// A renewal was declined: when it is tried again, when dunning gives up, and, with
    /// `recovery`, the link that pays now or takes another card (Polar's
    /// `subscription_past_due`: "Update payment method") and the day access stops.
    /// Without one (the customer is gone), the reader is asked to reply.
    pub fn renewal_failed(
        i18n: I18n,
        product: &str,
        amount: Option<&str>,
        retry: Option<String>,
        gives_up: Option<String>,
        keys_until: Option<String>,
        recovery: Option<Recovery>,
    ) -> Self {
        let mut p = vec![match amount {
            Some(a) => i18n.t2(
                "renewal-failed-text-amount",
                "product",
                product,
                "amount",
                a,
            ),
            None => i18n.t1("renewal-failed-text", "product", product),
        }];
        if let Some(retry) = retry {
            p.push(match &keys_until {
                Some(until) => i18n.t2("retry-keys-until", "retry", &retry, "until", until),
                None => i18n.t1("retry-keys", "retry", &retry),
            });
        }
        if let Some(end) = gives_up {
            p.push(i18n.t1("gives-up", "date", end));
        }
        let action = match recovery {
            Some(r) => Some(Action {
                lead: i18n.t("recovery-lead"),
                url: r.url,
                label: i18n.t("recovery-label"),
                after: vec![
                    i18n.t1("recovery-until", "date", &r.until),
                    i18n.t("questions-reply"),
                ],
            }),
            None => {
                p.push(i18n.t("card-advice"));
                None
            }
        };
        let mut n = Self::new(
            i18n,
            i18n.t1("renewal-failed-subject", "product", product),
            "renewal-failed-heading",
            p,
        );
        n.action = action;
        n
    }

    /// Polar's `subscription_trial_conversion_reminder`: the trial ends soon, and what
    /// the first charge will be.
    pub fn trial_ending(
        i18n: I18n,
        product: &str,
        amount: Option<&str>,
        charge_on: String,
    ) -> Self {
        let mut p = vec![match amount {
            Some(a) => i18n.ta(
                "trial-ending-text-amount",
                &[("product", &product), ("date", &charge_on), ("amount", &a)],
            ),
            None => i18n.t2("trial-ending-text", "product", product, "date", &charge_on),
        }];
        p.push(i18n.t("trial-ending-keep"));
        Self::new(
            i18n,
            i18n.t1("trial-ending-subject", "product", product),
            "trial-ending-heading",
            p,
        )
    }

    /// Polar's `subscription_updated`: the subscription now sells another product.
    pub fn plan_changed(
        i18n: I18n,
        product: &str,
        amount: Option<&str>,
        next_charge: Option<String>,
        dropped_keys: bool,
    ) -> Self {
        let mut p = vec![i18n.t1("plan-changed-text", "product", product)];
        match (amount, next_charge) {
            (Some(a), Some(on)) => p.push(i18n.t2("plan-renews-at", "amount", a, "date", on)),
            (None, Some(on)) => p.push(i18n.t1("plan-renews-on", "date", on)),
            _ => {}
        }
        if dropped_keys {
            p.push(i18n.t("plan-dropped-keys"));
        }
        p.push(i18n.t("plan-keys-below"));
        Self::new(
            i18n,
            i18n.t1("plan-changed-subject", "product", product),
            "plan-changed-heading",
            p,
        )
    }

    pub fn canceled(i18n: I18n, product: &str, ends: Option<String>) -> Self {
        let mut p = vec![i18n.t1("canceled-text", "product", product)];
        p.push(match ends {
            Some(end) => i18n.t1("canceled-until", "date", end),
            None => i18n.t("not-charged-again"),
        });
        Self::new(
            i18n,
            i18n.t1("canceled-subject", "product", product),
            "canceled-heading",
            p,
        )
    }

    pub fn ended(i18n: I18n, product: &str, had_keys: bool) -> Self {
        let mut p = vec![i18n.t1("ended-text", "product", product)];
        if had_keys {
            p.push(i18n.t("ended-keys"));
        }
        p.push(i18n.t("ended-again"));
        let mut n = Self::new(
            i18n,
            i18n.t1("ended-subject", "product", product),
            "ended-heading",
            p,
        );
        n.keys_heading = i18n.t("revoked-keys");
        n
    }

    pub fn key(i18n: I18n, revoked: bool) -> Self {
        let (subject, text) = if revoked {
            ("key-revoked-subject", "key-revoked-text")
        } else {
            ("key-disabled-subject", "key-disabled-text")
        };
        let mut n = Self::new(
            i18n,
            i18n.t(subject),
            subject,
            vec![i18n.t(text), i18n.t("key-mistake")],
        );
        n.keys_heading = i18n.t("license-key");
        n
    }

    pub fn refunded(i18n: I18n, product: &str, amount: &str, revoked: bool, in_full: bool) -> Self {
        let id = if in_full {
            "refund-text-full"
        } else {
            "refund-text"
        };
        let mut p = vec![i18n.t2(id, "amount", amount, "product", product)];
        p.push(i18n.t("refund-timing"));
        if revoked {
            p.push(i18n.t("refund-keys"));
        }
        let mut n = Self::new(
            i18n,
            i18n.t1("refund-subject", "product", product),
            "refund-heading",
            p,
        );
        n.keys_heading = i18n.t("revoked-keys");
        n
    }

    pub fn resent(i18n: I18n) -> Self {
        Self::new(
            i18n,
            i18n.t("resent-heading"),
            "resent-heading",
            vec![i18n.t("resent-text")],
        )
    }

    pub fn with(mut self, brand: Brand, keys: Vec<KeyLine>) -> Self {
        self.subject = format!("{} · {}", self.subject, brand.name);
        self.brand = brand;
        self.keys = keys;
        self
    }

    pub fn with_link(mut self, link: Option<String>) -> Self {
        self.link = link;
        self
    }

    pub fn render(&self) -> Result<Rendered, AppError> {
        Ok(Rendered {
            subject: self.subject.clone(),
            text: NoticeText { n: self }.render().map_err(render_err)?,
            html: NoticeHtml { n: self }.render().map_err(render_err)?,
        })
    }
}

#[derive(Template)]
#[template(path = "mail/notice.txt")]
struct NoticeText<'a> {
    n: &'a Notice,
}

#[derive(Template)]
#[template(path = "mail/notice.html")]
struct NoticeHtml<'a> {
    n: &'a Notice,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brand() -> Brand {
        Brand {
            name: "Acme <Tools>".into(),
            avatar_url: None,
            email: Some("shop@example.com".into()),
        }
    }

    fn key() -> KeyLine {
        KeyLine {
            i18n: I18n::new(crate::domain::locale::Lang::En),
            key: "ACME-1234".into(),
            benefit: "Pro license".into(),
            status: "granted",
            limits: vec!["up to 3 activations".into()],
            expires: Some("November 26, 2027".into()),
        }
    }

    fn receipt() -> Receipt {
        Receipt {
            i18n: I18n::new(crate::domain::locale::Lang::En),
            brand: brand(),
            renewal: false,
            seller_copy: None,
            product_name: "Ebook".into(),
            interval: None,
            date: "November 26, 2026".into(),
            order_ref: "o-1".into(),
            currency: "usd".into(),
            subtotal: 2500,
            discount: 500,
            tax: 0,
            tax_label: None,
            tax_notes: Vec::new(),
            total: 2000,
            keys: vec![key()],
            benefits: vec!["Updates for a year".into()],
            link: Some("https://shop.example.com/checkout/s/confirmation".into()),
            downloads: None,
            resend: "https://shop.example.com/license-keys/resend?organization_id=o".into(),
            invoice: None,
        }
    }

    #[test]
    fn a_receipt_with_its_invoice_names_it_and_the_attachment() {
        let plain = receipt().render().unwrap();
        assert!(!plain.text.contains("Invoice"), "{}", plain.text);
        let mut r = receipt();
        r.invoice = Some(("ACME-0007".into(), "Invoice-ACME-0007.pdf".into()));
        let out = r.render().unwrap();
        assert_eq!(out.subject, plain.subject, "the same receipt");
        for part in [&out.text, &out.html] {
            for needle in [
                "Invoice ACME-0007",
                "Invoice-ACME-0007.pdf",
                "$20.00",
                "ACME-1234",
            ] {
                assert!(part.contains(needle), "{needle} missing in\n{part}");
            }
        }
    }

    #[test]
    fn a_receipt_has_the_amounts_the_keys_and_both_parts() {
        let r = receipt().render().unwrap();
        assert_eq!(r.subject, "Your receipt from Acme <Tools>: Ebook");
        for part in [&r.text, &r.html] {
            for needle in [
                "$25.00",
                "-$5.00",
                "$20.00",
                "ACME-1234",
                "up to 3 activations",
                "November 26, 2027",
                "Updates for a year",
                "https://shop.example.com/checkout/s/confirmation",
            ] {
                assert!(part.contains(needle), "{needle} missing in\n{part}");
            }
        }
        // The HTML part escapes what the seller typed; the text part shows it as is.
        assert!(r.html.contains("Acme &#60;Tools&#62;") || r.html.contains("Acme &lt;Tools&gt;"));
        assert!(!r.html.contains("Acme <Tools>"));
        assert!(r.text.contains("Acme <Tools>"));
    }

    #[test]
    fn a_receipt_labels_its_tax_and_says_what_the_tax_requires() {
        let mut r = receipt();
        let plain = r.render().unwrap();
        assert!(plain.text.contains("  Tax: $0.00"), "{}", plain.text);
        r.tax_label = Some("VAT reverse charge".into());
        r.tax_notes = vec![
            crate::domain::invoice::REVERSE_CHARGE_EU.to_string(),
            "Your tax number: FR40303265045".into(),
        ];
        let out = r.render().unwrap();
        for part in [&out.text, &out.html] {
            for needle in [
                "VAT reverse charge",
                "Article 196, Council Directive 2006/112/EC",
                "Your tax number: FR40303265045",
            ] {
                assert!(part.contains(needle), "{needle} missing in\n{part}");
            }
        }
        assert!(!out.text.contains("  Tax: "), "{}", out.text);
    }

    #[test]
    fn no_discount_line_without_a_discount_and_renewals_say_so() {
        let mut r = receipt();
        r.discount = 0;
        r.subtotal = 2000;
        r.renewal = true;
        r.interval = Some("month".into());
        let out = r.render().unwrap();
        assert!(!out.text.contains("Discount"), "{}", out.text);
        assert!(out.text.contains("$20.00 / month"), "{}", out.text);
        assert_eq!(out.subject, "Your Ebook subscription renewed: $20.00");
    }

    #[test]
    fn a_receipt_is_in_its_orders_currency() {
        let mut r = receipt();
        (r.currency, r.subtotal, r.discount, r.total) = ("jpy".into(), 3500, 500, 3000);
        r.renewal = true;
        r.interval = Some("month".into());
        let out = r.render().unwrap();
        for part in [&out.text, &out.html] {
            for needle in ["¥3,500", "-¥500", "¥3,000 / month"] {
                assert!(part.contains(needle), "{needle} missing in\n{part}");
            }
            assert!(!part.contains('$'), "a dollar amount in\n{part}");
        }
        assert_eq!(out.subject, "Your Ebook subscription renewed: ¥3,000");
        let mut r = receipt();
        r.currency = "eur".into();
        let out = r.render().unwrap();
        for needle in ["€25.00", "-€5.00", "€20.00"] {
            assert!(
                out.text.contains(needle),
                "{needle} missing in\n{}",
                out.text
            );
        }
    }

    #[test]
    fn notices_name_what_happens_next() {
        let n = Notice::renewal_failed(
            I18n::new(crate::domain::locale::Lang::En),
            "Pro",
            Some("$15.00"),
            Some("December 1, 2026".into()),
            Some("December 7, 2026".into()),
            Some("December 2, 2026".into()),
            Some(Recovery {
                url: "https://shop.example.com/portal/acme/recover/T0KEN".into(),
                until: "December 2, 2026".into(),
            }),
        )
        .with(brand(), vec![key()])
        .render()
        .unwrap();
        assert!(n
            .subject
            .starts_with("Payment failed for your Pro subscription"));
        for part in [&n.text, &n.html] {
            assert!(part.contains("December 1, 2026"), "{part}");
            assert!(part.contains("December 7, 2026"), "{part}");
            assert!(
                part.contains("keep working until December 2, 2026"),
                "the grace: {part}"
            );
            assert!(part.contains("ACME-1234"), "{part}");
            assert!(
                part.contains("https://shop.example.com/portal/acme/recover/T0KEN"),
                "the link: {part}"
            );
            assert!(
                part.contains("works once, until December 2, 2026"),
                "{part}"
            );
            assert!(part.contains("Access stops on December 2, 2026"), "{part}");
            assert!(!part.contains("Make sure your card"), "{part}");
        }
        // No customer to sign in: no link, the old advice.
        let n = Notice::renewal_failed(
            I18n::new(crate::domain::locale::Lang::En),
            "Pro",
            None,
            None,
            Some("December 7, 2026".into()),
            None,
            None,
        )
        .with(brand(), Vec::new())
        .render()
        .unwrap();
        for part in [&n.text, &n.html] {
            assert!(
                part.contains("Make sure your card can be charged"),
                "{part}"
            );
            assert!(!part.contains("/recover/"), "{part}");
        }
        let n = Notice::key(I18n::new(crate::domain::locale::Lang::En), true)
            .with(brand(), vec![key()])
            .render()
            .unwrap();
        assert!(n.text.contains("revoked"), "{}", n.text);
    }
}
