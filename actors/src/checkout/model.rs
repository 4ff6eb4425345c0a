//! The checkout session's pure state machine: no actor, no storage, no clock. Time and
//! every resolved catalog record come in as arguments; the HTTP layer has already checked
//! that references exist and belong to the right organization and product.
//!
//! Statuses: `open` → `confirmed` (confirm) → `succeeded` (payment approved, records
//! created) or back to `open` (payment declined at once, as Polar ignores such failures);
//! `confirmed` → `failed` (payment failed later); `open` → `expired` (past `expires_at`,
//! seen on every read and write, persisted by a sweep).
//!
//! The amounts, the price selection and the validation rules the transitions apply live
//! in `amounts.rs`; the unit tests of both in `model_tests.rs`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::custom_field::CustomFieldData;
use crate::domain::customer::{Address, TaxId};
use crate::domain::discount::{Discount, DiscountDuration, DiscountKind};
use crate::domain::ids::{
    CheckoutId, CustomerId, DiscountId, OrganizationId, ProductId, SubscriptionId,
};
use crate::domain::metadata::Metadata;
use crate::domain::product::{AmountType, Price};
use crate::tax::TaxCalculator;

pub use super::amounts::DEFAULT_CUSTOM_AMOUNT;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CheckoutStatus {
    Open,
    Expired,
    Confirmed,
    Succeeded,
    Failed,
}

impl CheckoutStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckoutStatus::Open => "open",
            CheckoutStatus::Expired => "expired",
            CheckoutStatus::Confirmed => "confirmed",
            CheckoutStatus::Succeeded => "succeeded",
            CheckoutStatus::Failed => "failed",
        }
    }
}

/// A discount as it was when the checkout applied it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedDiscount {
    pub id: DiscountId,
    pub name: String,
    pub code: Option<String>,
    pub kind: DiscountKind,
    pub duration: DiscountDuration,
}

impl From<&Discount> for AppliedDiscount {
    fn from(d: &Discount) -> Self {
        AppliedDiscount {
            id: d.id,
            name: d.name.clone(),
            code: d.code.clone(),
            kind: d.kind.clone(),
            duration: d.duration,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkout {
    pub id: CheckoutId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub status: CheckoutStatus,
    /// `polar_c_…`: the only credential of the client-side endpoints.
    pub client_secret: String,
    pub expires_at: DateTime<Utc>,
    /// As given, with `{CHECKOUT_ID}` still in it.
    pub success_url: Option<String>,
    pub embed_origin: Option<String>,
    pub product_id: ProductId,
    /// The price being sold, as it was when selected.
    pub price: Price,
    pub amount: Option<i64>,
    pub currency: Option<String>,
    pub tax_amount: Option<i64>,
    pub discount: Option<AppliedDiscount>,
    pub allow_discount_codes: bool,
    pub customer_id: Option<CustomerId>,
    pub customer_name: Option<String>,
    pub customer_email: Option<String>,
    pub customer_ip_address: Option<String>,
    pub customer_billing_address: Option<Address>,
    pub customer_tax_id: Option<TaxId>,
    pub customer_metadata: Metadata,
    pub metadata: Metadata,
    pub custom_field_data: CustomFieldData,
    pub payment_processor_metadata: BTreeMap<String, String>,
    /// The subscription this checkout created (or upgrades).
    pub subscription_id: Option<SubscriptionId>,
    /// Kept from confirm until the charge is settled, so recovery can charge again.
    pub confirmation_token: Option<String>,
    /// The customer before confirm resolved one: restored if the payment is declined, so
    /// the buyer can still correct the e-mail address.
    pub customer_id_before_confirm: Option<CustomerId>,
}

/// One rule a request broke, before it becomes a 422 item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub loc: Vec<String>,
    pub kind: &'static str,
    pub msg: String,
}

impl Issue {
    pub(super) fn new(loc: &[&str], kind: &'static str, msg: impl Into<String>) -> Self {
        Issue {
            loc: loc.iter().map(|s| s.to_string()).collect(),
            kind,
            msg: msg.into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckoutError {
    /// 403 `NotOpenCheckout`.
    NotOpen(CheckoutStatus),
    /// 422 with these items.
    Invalid(Vec<Issue>),
    /// An internal transition was asked from the wrong status (a bug or a race).
    WrongStatus {
        expected: CheckoutStatus,
        found: CheckoutStatus,
    },
    /// A processor's answer about one payment attempt arrived after the checkout moved on
    /// to another (declined, reopened, confirmed again): it no longer applies.
    Superseded,
}

/// Which payment attempt of a confirmed checkout an answer of the processor is about: the
/// attempt's charge key and, once the processor reported the payment under way, its
/// intent. See [`Checkout::is_attempt`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub charge_key: String,
    pub intent: Option<String>,
}

/// A new checkout, every reference resolved.
#[derive(Debug, Clone)]
pub struct NewCheckout {
    pub id: CheckoutId,
    pub organization_id: OrganizationId,
    pub client_secret: String,
    pub expires_at: DateTime<Utc>,
    pub product_id: ProductId,
    pub price: Price,
    pub amount: Option<i64>,
    pub discount: Option<AppliedDiscount>,
    pub allow_discount_codes: bool,
    pub customer_id: Option<CustomerId>,
    pub customer_name: Option<String>,
    pub customer_email: Option<String>,
    pub customer_ip_address: Option<String>,
    pub customer_billing_address: Option<Address>,
    pub customer_tax_id: Option<TaxId>,
    pub customer_metadata: Metadata,
    pub metadata: Metadata,
    pub custom_field_data: CustomFieldData,
    pub success_url: Option<String>,
    pub embed_origin: Option<String>,
    pub subscription_id: Option<SubscriptionId>,
}

/// Field changes of an update or a confirm. `None`: leave as is; `Some(None)`: clear.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub price: Option<Price>,
    pub amount: Option<i64>,
    pub customer_name: Option<Option<String>>,
    pub customer_email: Option<Option<String>>,
    pub customer_ip_address: Option<Option<String>>,
    pub customer_billing_address: Option<Option<Address>>,
    /// The raw tax id; validated here against the (new or current) country.
    pub customer_tax_id: Option<Option<String>>,
    pub custom_field_data: Option<CustomFieldData>,
    /// A discount to apply (`Some(Some)`) or remove (`Some(None)`), and the request field
    /// that named it (`discount_id` or `discount_code`), for error locations.
    pub discount: Option<(Option<AppliedDiscount>, &'static str)>,
    pub allow_discount_codes: Option<bool>,
    pub metadata: Option<Metadata>,
    pub customer_metadata: Option<Metadata>,
    pub success_url: Option<Option<String>>,
    pub embed_origin: Option<Option<String>>,
}

/// What confirm needs to know about the world at that moment.
#[derive(Debug, Clone, Copy)]
pub struct ConfirmContext<'a> {
    pub confirmation_token: Option<&'a str>,
    /// The applied discount can still be redeemed (dates, max redemptions).
    pub discount_redeemable: bool,
    /// The selected price was archived since it was selected.
    pub price_archived: bool,
}

impl Checkout {
    pub fn create(
        n: NewCheckout,
        now: DateTime<Utc>,
        tax: &dyn TaxCalculator,
    ) -> Result<Checkout, CheckoutError> {
        let mut c = Checkout {
            id: n.id,
            organization_id: n.organization_id,
            created_at: now,
            modified_at: None,
            status: CheckoutStatus::Open,
            client_secret: n.client_secret,
            expires_at: n.expires_at,
            success_url: n.success_url,
            embed_origin: n.embed_origin,
            product_id: n.product_id,
            price: n.price.clone(),
            amount: None,
            currency: None,
            tax_amount: None,
            discount: None,
            allow_discount_codes: n.allow_discount_codes,
            customer_id: n.customer_id,
            customer_name: n.customer_name,
            customer_email: n.customer_email,
            customer_ip_address: n.customer_ip_address,
            customer_billing_address: n.customer_billing_address,
            customer_tax_id: n.customer_tax_id,
            customer_metadata: n.customer_metadata,
            metadata: n.metadata,
            custom_field_data: n.custom_field_data,
            payment_processor_metadata: BTreeMap::new(),
            subscription_id: n.subscription_id,
            confirmation_token: None,
            customer_id_before_confirm: None,
        };
        let mut issues = Vec::new();
        c.select_price(n.price, n.amount, &mut issues, "product_price_id");
        if let Some(d) = n.discount {
            c.apply_discount(Some(d), "discount_id", &mut issues);
        }
        if !issues.is_empty() {
            return Err(CheckoutError::Invalid(issues));
        }
        c.recompute_tax(tax);
        Ok(c)
    }

    /// The status as seen now: an open checkout past its expiry is expired.
    pub fn effective_status(&self, now: DateTime<Utc>) -> CheckoutStatus {
        if self.status == CheckoutStatus::Open && now >= self.expires_at {
            CheckoutStatus::Expired
        } else {
            self.status
        }
    }
    /// `success_url` with `{CHECKOUT_ID}` replaced; other placeholders stay as they are.
    pub fn success_url(&self, default: &str) -> String {
        self.success_url
            .as_deref()
            .unwrap_or(default)
            .replace("{CHECKOUT_ID}", &self.id.to_string())
    }

    /// Applies an update (organizer or client side). Refused unless the checkout is open.
    pub fn update(
        &self,
        ch: Changes,
        now: DateTime<Utc>,
        tax: &dyn TaxCalculator,
    ) -> Result<Checkout, CheckoutError> {
        let status = self.effective_status(now);
        if status != CheckoutStatus::Open {
            return Err(CheckoutError::NotOpen(status));
        }
        let mut c = self.clone();
        let mut issues = Vec::new();
        match ch.price {
            Some(p) => c.select_price(p, ch.amount, &mut issues, "product_price_id"),
            None => {
                if let Some(amount) = ch.amount {
                    // Only custom prices take an amount; for others it is ignored.
                    if c.amount_type() == AmountType::Custom {
                        let price = c.price.clone();
                        c.select_price(price, Some(amount), &mut issues, "amount");
                    }
                }
            }
        }
        if let Some(name) = ch.customer_name {
            c.customer_name = name.filter(|n| !n.trim().is_empty());
        }
        // The e-mail of a checkout tied to a customer is the customer's.
        if let Some(email) = ch.customer_email {
            if c.customer_id.is_none() {
                c.customer_email = email;
            }
        }
        if let Some(ip) = ch.customer_ip_address {
            c.customer_ip_address = ip;
        }
        let country_changed = ch.customer_billing_address.is_some();
        if let Some(address) = ch.customer_billing_address {
            c.customer_billing_address = address;
        }
        c.apply_tax_id(ch.customer_tax_id, country_changed, &mut issues);
        if let Some(data) = ch.custom_field_data {
            c.custom_field_data = data;
        }
        if let Some((discount, field)) = ch.discount {
            c.apply_discount(discount, field, &mut issues);
        }
        if let Some(allow) = ch.allow_discount_codes {
            c.allow_discount_codes = allow;
        }
        if let Some(m) = ch.metadata {
            c.metadata = m;
        }
        if let Some(m) = ch.customer_metadata {
            c.customer_metadata = m;
        }
        if let Some(u) = ch.success_url {
            c.success_url = u;
        }
        if let Some(o) = ch.embed_origin {
            c.embed_origin = o;
        }
        if !issues.is_empty() {
            return Err(CheckoutError::Invalid(issues));
        }
        c.recompute_tax(tax);
        c.modified_at = Some(now);
        Ok(c)
    }

    /// Applies the confirm body, checks that the checkout can be paid, and moves it to
    /// `confirmed`. Every missing field is reported at once (reference 1.7).
    pub fn confirm(
        &self,
        ch: Changes,
        ctx: ConfirmContext<'_>,
        now: DateTime<Utc>,
        tax: &dyn TaxCalculator,
    ) -> Result<Checkout, CheckoutError> {
        let mut c = self.update(ch, now, tax)?;
        if c.discount.is_some() && !ctx.discount_redeemable {
            return Err(CheckoutError::Invalid(vec![Issue::new(
                &["discount_id"],
                "value_error",
                "Discount is no longer redeemable.",
            )]));
        }
        let token = ctx.confirmation_token.filter(|t| !t.is_empty());
        let issues = c.confirm_issues(ctx.price_archived, token.is_some());
        if !issues.is_empty() {
            return Err(CheckoutError::Invalid(issues));
        }
        c.status = CheckoutStatus::Confirmed;
        c.confirmation_token = token.map(str::to_string);
        c.modified_at = Some(now);
        Ok(c)
    }

    /// The idempotency key of this confirmation's charge: the checkout id and the moment
    /// it was confirmed (`modified_at`, which nothing changes while a charge is due: the
    /// next transition is the settlement). A charge retried after a crash is the same
    /// request, never a second payment; an attempt after a decline is a new one.
    pub fn charge_key(&self) -> String {
        let at = self.modified_at.unwrap_or(self.created_at);
        format!("{}:{}", self.id, at.timestamp_micros())
    }

    /// The payment attempt this confirmed checkout is at (see [`Attempt`]).
    pub fn attempt(&self) -> Attempt {
        Attempt {
            charge_key: self.charge_key(),
            intent: self.pending_intent().map(str::to_string),
        }
    }

    /// Whether `attempt` is still this checkout's: nothing moved it on since (the same
    /// charge key), or it still waits on the same intent (recording the intent changed the
    /// charge key, not the attempt). A decline of an earlier attempt, answered while the
    /// buyer confirmed again, is not.
    pub fn is_attempt(&self, attempt: &Attempt) -> bool {
        self.charge_key() == attempt.charge_key
            || (attempt.intent.is_some() && self.pending_intent() == attempt.intent.as_deref())
    }

    /// Ties the confirmed checkout to the customer it resolved or created.
    pub fn with_customer(mut self, customer: CustomerId) -> Checkout {
        self.customer_id_before_confirm = self.customer_id;
        self.customer_id = Some(customer);
        self
    }

    fn expect(&self, expected: CheckoutStatus) -> Result<(), CheckoutError> {
        if self.status == expected {
            Ok(())
        } else {
            Err(CheckoutError::WrongStatus {
                expected,
                found: self.status,
            })
        }
    }

    /// Payment approved (or none needed): `confirmed` → `succeeded`.
    pub fn succeed(
        &self,
        intent: Option<&str>,
        subscription: Option<SubscriptionId>,
        now: DateTime<Utc>,
    ) -> Result<Checkout, CheckoutError> {
        self.expect(CheckoutStatus::Confirmed)?;
        let mut c = self.clone();
        c.status = CheckoutStatus::Succeeded;
        c.confirmation_token = None;
        if let Some(intent) = intent {
            c.payment_processor_metadata
                .insert("intent_status".into(), "succeeded".into());
            c.payment_processor_metadata
                .insert("intent_id".into(), intent.to_string());
        }
        c.payment_processor_metadata.remove("intent_client_secret");
        if let Some(s) = subscription {
            c.subscription_id = Some(s);
        }
        c.modified_at = Some(now);
        Ok(c)
    }

    /// The payment is under way (the buyer must authenticate, or it settles later): the
    /// checkout stays `confirmed`, with the processor's intent in
    /// `payment_processor_metadata` (`intent_id`, `intent_status` and, for the page's next
    /// action, `intent_client_secret`), as Polar does. Recovery and the processor's
    /// webhook settle it from there.
    pub fn await_payment(
        &self,
        intent: &str,
        status: &str,
        client_secret: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Checkout, CheckoutError> {
        self.expect(CheckoutStatus::Confirmed)?;
        let mut c = self.clone();
        let m = &mut c.payment_processor_metadata;
        m.insert("intent_id".into(), intent.to_string());
        m.insert("intent_status".into(), status.to_string());
        match client_secret {
            Some(secret) => m.insert("intent_client_secret".into(), secret.to_string()),
            None => m.remove("intent_client_secret"),
        };
        c.modified_at = Some(now);
        Ok(c)
    }

    /// The processor's intent this confirmed checkout waits on, if any.
    pub fn pending_intent(&self) -> Option<&str> {
        (self.status == CheckoutStatus::Confirmed)
            .then(|| self.payment_processor_metadata.get("intent_id"))
            .flatten()
            .map(String::as_str)
    }

    /// Payment declined while confirming: back to `open`, as if confirm never happened.
    pub fn reopen(&self, now: DateTime<Utc>) -> Result<Checkout, CheckoutError> {
        self.expect(CheckoutStatus::Confirmed)?;
        let mut c = self.clone();
        c.status = CheckoutStatus::Open;
        c.confirmation_token = None;
        c.customer_id = c.customer_id_before_confirm;
        // A new attempt makes a new intent.
        c.payment_processor_metadata.clear();
        c.modified_at = Some(now);
        Ok(c)
    }

    /// Payment failed after confirmation: `confirmed` → `failed`.
    pub fn fail(&self, now: DateTime<Utc>) -> Result<Checkout, CheckoutError> {
        self.expect(CheckoutStatus::Confirmed)?;
        let mut c = self.clone();
        c.status = CheckoutStatus::Failed;
        c.confirmation_token = None;
        c.modified_at = Some(now);
        Ok(c)
    }

    /// Persists expiry (the sweep): only an open checkout past `expires_at` changes.
    pub fn expire(&self, now: DateTime<Utc>) -> Option<Checkout> {
        if self.effective_status(now) == CheckoutStatus::Expired
            && self.status == CheckoutStatus::Open
        {
            let mut c = self.clone();
            c.status = CheckoutStatus::Expired;
            c.modified_at = Some(now);
            Some(c)
        } else {
            None
        }
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
pub(crate) mod tests;
