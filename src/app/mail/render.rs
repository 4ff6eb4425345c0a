//! The messages as people read them: askama templates (`templates/mail/`), each with a
//! plain-text part and an HTML part (inline styles only, one narrow column: readable in
//! any mail client and on a phone), the organization's name and avatar, and amounts in
//! the one `Money` format of the pages.

use askama::Template;
use chrono::{DateTime, Utc};

use crate::domain::money::Money;
use crate::error::AppError;
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
}

impl KeyLine {
    pub fn of(k: &LicenseKey, benefit: String) -> Self {
        let mut limits = Vec::new();
        if let Some(n) = k.limit_activations {
            limits.push(format!(
                "up to {n} activation{}",
                if n == 1 { "" } else { "s" }
            ));
        }
        if let Some(n) = k.limit_usage {
            limits.push(format!("{n} use{}", if n == 1 { "" } else { "s" }));
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
            expires: k.expires_at.map(date),
        }
    }

    /// "up to 3 activations · valid until November 26, 2027", or "no limits".
    pub fn terms(&self) -> String {
        let mut parts = self.limits.clone();
        parts.push(match &self.expires {
            Some(e) => format!("valid until {e}"),
            None => "does not expire".into(),
        });
        parts.join(" · ")
    }
}

/// `November 26, 2026`.
pub fn date(t: DateTime<Utc>) -> String {
    t.format("%B %-d, %Y").to_string()
}

pub fn money(amount: i64, currency: &str) -> String {
    Money::new(amount, currency).to_string()
}

fn render_err(e: askama::Error) -> AppError {
    AppError::internal(format!("rendering an e-mail: {e}"))
}

// ---------------------------------------------------------------------------------------
// Receipts

/// A receipt: of an order, of a renewal, or the seller's copy of either.
pub struct Receipt {
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
        let m = |a| money(a, &self.currency);
        let per = self
            .interval
            .as_ref()
            .map(|i| format!(" / {i}"))
            .unwrap_or_default();
        let mut out = vec![Line {
            label: "Subtotal".into(),
            value: m(self.subtotal),
            total: false,
        }];
        if self.discount > 0 {
            out.push(Line {
                label: "Discount".into(),
                value: m(-self.discount),
                total: false,
            });
        }
        out.push(Line {
            label: self.tax_label.clone().unwrap_or_else(|| "Tax".into()),
            value: m(self.tax),
            total: false,
        });
        out.push(Line {
            label: "Total paid".into(),
            value: format!("{}{per}", m(self.total)),
            total: true,
        });
        out
    }

    pub fn subject(&self) -> String {
        match (&self.seller_copy, self.renewal) {
            (Some(buyer), _) => format!(
                "New order: {} bought {} ({})",
                buyer,
                self.product_name,
                money(self.total, &self.currency)
            ),
            (None, true) => format!(
                "Your {} subscription renewed: {}",
                self.product_name,
                money(self.total, &self.currency)
            ),
            (None, false) => format!(
                "Your receipt from {}: {}",
                self.brand.name, self.product_name
            ),
        }
    }

    pub fn heading(&self) -> String {
        match (&self.seller_copy, self.renewal) {
            (Some(_), _) => "You have a new order".into(),
            (None, true) => "Your subscription renewed".into(),
            (None, false) => "Thank you for your order".into(),
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
    pub label: &'static str,
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
    pub brand: Brand,
    pub subject: String,
    pub heading: String,
    pub paragraphs: Vec<String>,
    pub keys: Vec<KeyLine>,
    pub keys_heading: &'static str,
    pub link: Option<String>,
    pub link_label: &'static str,
    /// A one-time code, shown large, then more paragraphs.
    pub code: Option<String>,
    pub paragraphs_after: Vec<String>,
    /// What to do, after the paragraphs (before the keys).
    pub action: Option<Action>,
}

impl Notice {
    fn new(subject: String, heading: &str, paragraphs: Vec<String>) -> Self {
        Self {
            brand: Brand {
                name: String::new(),
                avatar_url: None,
                email: None,
            },
            subject,
            heading: heading.to_string(),
            paragraphs,
            keys: Vec::new(),
            keys_heading: "Your license keys",
            link: None,
            link_label: "View your purchase",
            code: None,
            paragraphs_after: Vec::new(),
            action: None,
        }
    }

    /// The customer portal's sign-in code (Polar's `customer_session_code` e-mail).
    pub fn sign_in_code(organization: &str, code: &str, minutes: i64, link: String) -> Self {
        let mut n = Self::new(
            format!("Access your {organization} purchases"),
            "Your sign-in code",
            vec![format!(
                "You can use the following code to access your purchases on the {organization} customer portal."
            )],
        );
        n.code = Some(code.to_string());
        n.paragraphs_after = vec![
            format!("This code expires in {minutes} minutes, and works once."),
            "If you did not ask for it, you can ignore this e-mail: nobody can sign in without the code.".into(),
        ];
        n.link = Some(link);
        n.link_label = "Open the customer portal";
        n
    }

    /// A renewal was declined: when it is tried again, when dunning gives up, and, with
    /// `recovery`, the link that pays now or takes another card (Polar's
    /// `subscription_past_due`: "Update payment method") and the day access stops.
    /// Without one (the customer is gone), the reader is asked to reply.
    pub fn renewal_failed(
        product: &str,
        amount: Option<&str>,
        retry: Option<String>,
        gives_up: Option<String>,
        keys_until: Option<String>,
        recovery: Option<Recovery>,
    ) -> Self {
        let mut p = vec![format!(
            "We could not charge your card for the renewal of {product}{}.",
            amount.map(|a| format!(" ({a})")).unwrap_or_default()
        )];
        if let Some(retry) = retry {
            p.push(match &keys_until {
                Some(until) => format!(
                    "We will try again on {retry}. Your license keys keep working until {until}; once the payment goes through, they work for the new period."
                ),
                None => format!(
                    "We will try again on {retry}. Your license keys keep working meanwhile."
                ),
            });
        }
        if let Some(end) = gives_up {
            p.push(format!(
                "If the payment still fails by {end}, the subscription will be canceled and its license keys revoked."
            ));
        }
        let action = match recovery {
            Some(r) => Some(Action {
                lead: "Pay now, or update your card, in the customer portal:".into(),
                url: r.url,
                label: "Pay now or update your card",
                after: vec![
                    format!(
                        "The link works once, until {}. Access stops on {}.",
                        r.until, r.until
                    ),
                    "Questions? Reply to this e-mail.".into(),
                ],
            }),
            None => {
                p.push(
                    "Make sure your card can be charged, or contact us by replying to this e-mail."
                        .into(),
                );
                None
            }
        };
        let mut n = Self::new(
            format!("Payment failed for your {product} subscription"),
            "Your renewal payment failed",
            p,
        );
        n.action = action;
        n
    }

    /// Polar's `subscription_trial_conversion_reminder`: the trial ends soon, and what
    /// the first charge will be.
    pub fn trial_ending(product: &str, amount: Option<&str>, charge_on: String) -> Self {
        let mut p = vec![format!(
            "Your free trial of {product} ends on {charge_on}. Your subscription then starts, and your card is charged{}.",
            amount.map(|a| format!(" {a}")).unwrap_or_default()
        )];
        p.push(
            "Nothing to do if you want to keep it: your license keys go on working. To stop before the first charge, cancel the subscription before that date in the customer portal."
                .into(),
        );
        Self::new(
            format!("Your {product} trial is ending soon"),
            "Your trial is ending soon",
            p,
        )
    }

    /// Polar's `subscription_updated`: the subscription now sells another product.
    pub fn plan_changed(
        product: &str,
        amount: Option<&str>,
        next_charge: Option<String>,
        dropped_keys: bool,
    ) -> Self {
        let mut p = vec![format!("Your subscription has changed to {product}.")];
        match (amount, next_charge) {
            (Some(a), Some(on)) => p.push(format!(
                "It renews at {a} per period; the next renewal is on {on}, adjusted for the change."
            )),
            (None, Some(on)) => p.push(format!("It renews on {on}.")),
            _ => {}
        }
        if dropped_keys {
            p.push(
                "License keys of your previous plan that the new one does not include no longer work."
                    .into(),
            );
        }
        p.push("Your license keys for the new plan are below.".into());
        Self::new(
            format!("Your subscription has changed to {product}"),
            "Your subscription has changed",
            p,
        )
    }

    pub fn canceled(product: &str, ends: Option<String>) -> Self {
        let mut p = vec![format!("Your subscription to {product} has been canceled.")];
        p.push(match ends {
            Some(end) => format!(
                "It stays active, and your license keys keep working, until {end}. You will not be charged again."
            ),
            None => "You will not be charged again.".into(),
        });
        Self::new(
            format!("Your {product} subscription was canceled"),
            "Your subscription was canceled",
            p,
        )
    }

    pub fn ended(product: &str, had_keys: bool) -> Self {
        let mut p = vec![format!("Your subscription to {product} has ended.")];
        if had_keys {
            p.push("Its license keys below no longer work.".into());
        }
        p.push(
            "You will not be charged again. To subscribe again, visit the seller's site.".into(),
        );
        let mut n = Self::new(
            format!("Your {product} subscription has ended"),
            "Your subscription has ended",
            p,
        );
        n.keys_heading = "Revoked license keys";
        n
    }

    pub fn key(revoked: bool) -> Self {
        let (word, subject) = if revoked {
            ("revoked", "A license key was revoked")
        } else {
            ("disabled", "A license key was disabled")
        };
        let mut n = Self::new(
            subject.into(),
            subject,
            vec![
                format!("The seller has {word} the license key below: it no longer validates."),
                "If you think this is a mistake, reply to this e-mail.".into(),
            ],
        );
        n.keys_heading = "License key";
        n
    }

    pub fn refunded(product: &str, amount: &str, revoked: bool, in_full: bool) -> Self {
        let mut p = vec![format!(
            "We have refunded {amount} of your purchase of {product}{}.",
            if in_full { " (the whole purchase)" } else { "" }
        )];
        p.push("It reaches your card within 5 to 10 business days, depending on your bank.".into());
        if revoked {
            p.push("The license keys of this purchase no longer work.".into());
        }
        let mut n = Self::new(
            format!("Your refund for {product}"),
            "Your refund is on its way",
            p,
        );
        n.keys_heading = "Revoked license keys";
        n
    }

    pub fn resent() -> Self {
        Self::new(
            "Your license keys".into(),
            "Your license keys",
            vec!["You asked for your license keys again. Here they are.".into()],
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
            key: "ACME-1234".into(),
            benefit: "Pro license".into(),
            status: "granted",
            limits: vec!["up to 3 activations".into()],
            expires: Some("November 26, 2027".into()),
        }
    }

    fn receipt() -> Receipt {
        Receipt {
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
        let n = Notice::key(true)
            .with(brand(), vec![key()])
            .render()
            .unwrap();
        assert!(n.text.contains("revoked"), "{}", n.text);
    }
}
