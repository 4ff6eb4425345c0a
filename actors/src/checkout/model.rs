//! The checkout session's pure state machine: no actor, no storage, no clock. Time and
//! every resolved catalog record come in as arguments; the HTTP layer has already checked
//! that references exist and belong to the right organization and product.
//!
//! Statuses: `open` → `confirmed` (confirm) → `succeeded` (payment approved, records
//! created) or back to `open` (payment declined at once, as Polar ignores such failures);
//! `confirmed` → `failed` (payment failed later); `open` → `expired` (past `expires_at`,
//! seen on every read and write, persisted by a sweep).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::custom_field::CustomFieldData;
use crate::domain::customer::{validate_tax_id, Address, TaxId};
use crate::domain::discount::{amount_off, Discount, DiscountDuration, DiscountKind};
use crate::domain::ids::{
    CheckoutId, CustomerId, DiscountId, OrganizationId, ProductId, SubscriptionId,
};
use crate::domain::metadata::Metadata;
use crate::domain::product::{AmountType, Price, PriceKind};
use crate::tax::TaxCalculator;

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

/// Custom prices without a preset start at this amount (Polar's default).
pub const DEFAULT_CUSTOM_AMOUNT: i64 = 1000;

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
    fn new(loc: &[&str], kind: &'static str, msg: impl Into<String>) -> Self {
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

    pub fn amount_type(&self) -> AmountType {
        self.price.kind.amount_type()
    }

    pub fn is_free_product_price(&self) -> bool {
        self.amount_type() == AmountType::Free
    }

    pub fn is_discount_applicable(&self) -> bool {
        self.amount_type() == AmountType::Fixed
    }

    pub fn discount_amount(&self) -> i64 {
        match (&self.discount, self.amount) {
            (Some(d), Some(amount)) if self.is_discount_applicable() => amount_off(&d.kind, amount),
            _ => 0,
        }
    }

    pub fn subtotal_amount(&self) -> Option<i64> {
        self.amount.map(|a| a - self.discount_amount())
    }

    pub fn total_amount(&self) -> Option<i64> {
        self.subtotal_amount()
            .map(|s| s + self.tax_amount.unwrap_or(0))
    }

    pub fn is_payment_required(&self) -> bool {
        self.total_amount().is_some_and(|t| t > 0)
    }

    pub fn is_payment_setup_required(&self) -> bool {
        self.price.kind.is_recurring() && !self.is_free_product_price()
    }

    pub fn is_payment_form_required(&self) -> bool {
        self.is_payment_required() || self.is_payment_setup_required()
    }

    /// `success_url` with `{CHECKOUT_ID}` replaced; other placeholders stay as they are.
    pub fn success_url(&self, default: &str) -> String {
        self.success_url
            .as_deref()
            .unwrap_or(default)
            .replace("{CHECKOUT_ID}", &self.id.to_string())
    }

    fn select_price(
        &mut self,
        price: Price,
        amount: Option<i64>,
        issues: &mut Vec<Issue>,
        _field: &str,
    ) {
        match &price.kind {
            PriceKind::RecurringFixed {
                currency,
                amount: a,
                ..
            }
            | PriceKind::OneTimeFixed {
                currency,
                amount: a,
            } => {
                self.amount = Some(*a);
                self.currency = Some(currency.clone());
            }
            PriceKind::OneTimeCustom {
                currency,
                minimum_amount,
                maximum_amount,
                preset_amount,
            } => {
                let chosen = amount
                    .or(self
                        .amount
                        .filter(|_| self.price.kind.amount_type() == AmountType::Custom))
                    .or(*preset_amount)
                    .unwrap_or(DEFAULT_CUSTOM_AMOUNT);
                if minimum_amount.is_some_and(|m| chosen < m) {
                    issues.push(Issue::new(
                        &["amount"],
                        "greater_than_equal",
                        "Amount is below minimum.",
                    ));
                } else if maximum_amount.is_some_and(|m| chosen > m) {
                    issues.push(Issue::new(
                        &["amount"],
                        "less_than_equal",
                        "Amount is above maximum.",
                    ));
                }
                self.amount = Some(chosen);
                self.currency = Some(currency.clone());
            }
            PriceKind::RecurringFree { .. } | PriceKind::OneTimeFree => {
                self.amount = None;
                self.currency = None;
            }
        }
        self.price = price;
        if !self.is_discount_applicable() {
            self.discount = None;
        }
    }

    fn apply_discount(
        &mut self,
        discount: Option<AppliedDiscount>,
        field: &'static str,
        issues: &mut Vec<Issue>,
    ) {
        match discount {
            None => self.discount = None,
            Some(d) => {
                if self.is_discount_applicable() {
                    self.discount = Some(d);
                } else {
                    issues.push(Issue::new(
                        &[field],
                        "value_error",
                        "Discounts are only applicable to fixed prices.",
                    ));
                }
            }
        }
    }

    fn recompute_tax(&mut self, tax: &dyn TaxCalculator) {
        self.tax_amount = match (self.subtotal_amount(), &self.currency) {
            (Some(subtotal), Some(currency)) => Some(
                tax.tax(
                    subtotal,
                    currency,
                    self.customer_billing_address
                        .as_ref()
                        .map(|a| a.country.as_str()),
                ),
            ),
            _ => None,
        };
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
        let tax_input = match ch.customer_tax_id {
            Some(None) => {
                c.customer_tax_id = None;
                None
            }
            Some(Some(raw)) if raw.trim().is_empty() => {
                c.customer_tax_id = None;
                None
            }
            Some(Some(raw)) => Some(raw),
            None if country_changed => c.customer_tax_id.as_ref().map(|t| t.value.clone()),
            None => None,
        };
        if let Some(raw) = tax_input {
            match c
                .customer_billing_address
                .as_ref()
                .map(|a| a.country.clone())
            {
                None => issues.push(Issue::new(
                    &["customer_billing_address"],
                    "missing",
                    "Country is required to validate tax ID.",
                )),
                Some(country) => match validate_tax_id(&raw, &country) {
                    Ok(t) => c.customer_tax_id = Some(t),
                    Err(_) => issues.push(Issue::new(
                        &["customer_tax_id"],
                        "value_error",
                        "Invalid tax ID.",
                    )),
                },
            }
        }
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
        let mut issues = Vec::new();
        if c.amount_type() == AmountType::Custom && c.amount.is_none() {
            issues.push(Issue::new(
                &["amount"],
                "missing",
                "Amount is required for custom prices.",
            ));
        }
        if ctx.price_archived {
            issues.push(Issue::new(
                &["product_price_id"],
                "value_error",
                "Price is archived.",
            ));
        }
        if c.customer_email.is_none() {
            issues.push(Issue::new(
                &["customer_email"],
                "missing",
                "Field is required.",
            ));
        }
        if c.is_payment_form_required() {
            if c.customer_name.is_none() {
                issues.push(Issue::new(
                    &["customer_name"],
                    "missing",
                    "Field is required.",
                ));
            }
            if c.customer_billing_address.is_none() {
                issues.push(Issue::new(
                    &["customer_billing_address"],
                    "missing",
                    "Field is required.",
                ));
            }
        }
        let token = ctx.confirmation_token.filter(|t| !t.is_empty());
        if c.is_payment_required() && token.is_none() {
            issues.push(Issue::new(
                &["confirmation_token_id"],
                "missing",
                "Confirmation token is required.",
            ));
        }
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
mod tests {
    use super::*;
    use crate::domain::ids::PriceId;
    use crate::domain::product::RecurringInterval;
    use crate::tax::NoTax;
    use chrono::{Duration, TimeZone};

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 1, 1, 12, 0, 0).unwrap()
    }

    fn price(kind: PriceKind) -> Price {
        Price {
            id: PriceId::new(),
            created_at: t0(),
            modified_at: None,
            is_archived: false,
            kind,
        }
    }

    fn fixed(amount: i64) -> Price {
        price(PriceKind::OneTimeFixed {
            currency: "usd".into(),
            amount,
        })
    }

    fn monthly(amount: i64) -> Price {
        price(PriceKind::RecurringFixed {
            interval: RecurringInterval::Month,
            currency: "usd".into(),
            amount,
        })
    }

    fn custom(min: Option<i64>, max: Option<i64>, preset: Option<i64>) -> Price {
        price(PriceKind::OneTimeCustom {
            currency: "usd".into(),
            minimum_amount: min,
            maximum_amount: max,
            preset_amount: preset,
        })
    }

    fn new(p: Price) -> NewCheckout {
        NewCheckout {
            id: CheckoutId::new(),
            organization_id: OrganizationId::new(),
            client_secret: "polar_c_x".into(),
            expires_at: t0() + Duration::minutes(30),
            product_id: ProductId::new(),
            price: p,
            amount: None,
            discount: None,
            allow_discount_codes: true,
            customer_id: None,
            customer_name: None,
            customer_email: None,
            customer_ip_address: None,
            customer_billing_address: None,
            customer_tax_id: None,
            customer_metadata: Metadata::default(),
            metadata: Metadata::default(),
            custom_field_data: CustomFieldData::default(),
            success_url: None,
            embed_origin: None,
            subscription_id: None,
        }
    }

    fn create(p: Price) -> Checkout {
        Checkout::create(new(p), t0(), &NoTax).unwrap()
    }

    fn discount_fixed(amount: i64) -> AppliedDiscount {
        AppliedDiscount {
            id: DiscountId::new(),
            name: "Launch".into(),
            code: Some("LAUNCH".into()),
            kind: DiscountKind::Fixed {
                amount,
                currency: "usd".into(),
            },
            duration: DiscountDuration::Once,
        }
    }

    fn percent(bp: i64) -> AppliedDiscount {
        AppliedDiscount {
            kind: DiscountKind::Percentage { basis_points: bp },
            ..discount_fixed(0)
        }
    }

    fn address(country: &str) -> Address {
        Address {
            line1: None,
            line2: None,
            postal_code: None,
            city: None,
            state: None,
            country: country.into(),
        }
    }

    fn ready() -> Changes {
        Changes {
            customer_name: Some(Some("Ada".into())),
            customer_email: Some(Some("ada@example.com".into())),
            customer_billing_address: Some(Some(address("FR"))),
            ..Changes::default()
        }
    }

    fn ctx(token: Option<&str>) -> ConfirmContext<'_> {
        ConfirmContext {
            confirmation_token: token,
            discount_redeemable: true,
            price_archived: false,
        }
    }

    fn invalid(r: Result<Checkout, CheckoutError>) -> Vec<(String, &'static str, String)> {
        match r {
            Err(CheckoutError::Invalid(issues)) => issues
                .into_iter()
                .map(|i| (i.loc.join("."), i.kind, i.msg))
                .collect(),
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn create_fixed_price_takes_the_price_amount() {
        let mut n = new(fixed(1500));
        n.amount = Some(99);
        let c = Checkout::create(n, t0(), &NoTax).unwrap();
        assert_eq!(c.status, CheckoutStatus::Open);
        assert_eq!((c.amount, c.currency.as_deref()), (Some(1500), Some("usd")));
        assert_eq!(
            (c.subtotal_amount(), c.tax_amount, c.total_amount()),
            (Some(1500), Some(0), Some(1500))
        );
        assert!(
            c.is_payment_required() && c.is_discount_applicable() && !c.is_free_product_price()
        );
        assert!(!c.is_payment_setup_required());
    }

    #[test]
    fn create_free_price_has_no_amount() {
        let c = create(price(PriceKind::OneTimeFree));
        assert_eq!(
            (c.amount, c.currency.clone(), c.tax_amount, c.total_amount()),
            (None, None, None, None)
        );
        assert!(
            c.is_free_product_price() && !c.is_payment_required() && !c.is_payment_form_required()
        );
        let c = create(price(PriceKind::RecurringFree {
            interval: RecurringInterval::Month,
        }));
        assert!(!c.is_payment_setup_required());
    }

    #[test]
    fn create_custom_price_uses_amount_then_preset_then_default() {
        assert_eq!(create(custom(None, None, Some(4242))).amount, Some(4242));
        assert_eq!(
            create(custom(None, None, None)).amount,
            Some(DEFAULT_CUSTOM_AMOUNT)
        );
        let mut n = new(custom(Some(1000), Some(5000), Some(4242)));
        n.amount = Some(1000);
        assert_eq!(
            Checkout::create(n, t0(), &NoTax).unwrap().amount,
            Some(1000)
        );
    }

    #[test]
    fn create_custom_price_out_of_bounds_is_refused() {
        for (amount, kind, msg) in [
            (500, "greater_than_equal", "Amount is below minimum."),
            (10000, "less_than_equal", "Amount is above maximum."),
        ] {
            let mut n = new(custom(Some(1000), Some(5000), None));
            n.amount = Some(amount);
            assert_eq!(
                invalid(Checkout::create(n, t0(), &NoTax)),
                vec![("amount".to_string(), kind, msg.to_string())]
            );
        }
    }

    #[test]
    fn discounts_reduce_the_subtotal() {
        let mut n = new(fixed(1000));
        n.discount = Some(discount_fixed(300));
        let c = Checkout::create(n, t0(), &NoTax).unwrap();
        assert_eq!(
            (c.subtotal_amount(), c.total_amount()),
            (Some(700), Some(700))
        );
        // A fixed discount never takes more than the amount.
        let mut n = new(fixed(200));
        n.discount = Some(discount_fixed(300));
        assert_eq!(
            Checkout::create(n, t0(), &NoTax).unwrap().subtotal_amount(),
            Some(0)
        );
        // Percentages round half up.
        let mut n = new(fixed(1005));
        n.discount = Some(percent(5000));
        assert_eq!(
            Checkout::create(n, t0(), &NoTax).unwrap().subtotal_amount(),
            Some(502)
        );
    }

    #[test]
    fn discounts_need_a_fixed_price() {
        let mut n = new(custom(None, None, None));
        n.discount = Some(discount_fixed(100));
        assert_eq!(
            invalid(Checkout::create(n, t0(), &NoTax)),
            vec![(
                "discount_id".to_string(),
                "value_error",
                "Discounts are only applicable to fixed prices.".to_string()
            )]
        );
    }

    #[test]
    fn a_full_percentage_discount_on_a_subscription_still_needs_setup() {
        let mut n = new(monthly(1000));
        n.discount = Some(percent(10000));
        let c = Checkout::create(n, t0(), &NoTax).unwrap();
        assert_eq!(c.total_amount(), Some(0));
        assert!(!c.is_payment_required());
        assert!(c.is_payment_setup_required() && c.is_payment_form_required());
    }

    #[test]
    fn expiry_is_seen_at_once_and_persisted_by_expire() {
        let c = create(fixed(1000));
        assert_eq!(
            c.effective_status(t0() + Duration::minutes(29)),
            CheckoutStatus::Open
        );
        let later = t0() + Duration::minutes(30);
        assert_eq!(c.effective_status(later), CheckoutStatus::Expired);
        assert!(c.expire(t0()).is_none());
        assert_eq!(c.expire(later).unwrap().status, CheckoutStatus::Expired);
        assert_eq!(
            c.update(Changes::default(), later, &NoTax),
            Err(CheckoutError::NotOpen(CheckoutStatus::Expired))
        );
    }

    #[test]
    fn update_changes_price_amount_and_fields() {
        let c = create(fixed(1000));
        let other = fixed(2500);
        let u = c
            .update(
                Changes {
                    price: Some(other.clone()),
                    customer_name: Some(Some("  ".into())),
                    ..Changes::default()
                },
                t0(),
                &NoTax,
            )
            .unwrap();
        assert_eq!((u.price.id, u.amount), (other.id, Some(2500)));
        assert_eq!(u.customer_name, None);
        assert_eq!(u.modified_at, Some(t0()));
        // An amount on a fixed price is ignored; on a custom price it applies, with bounds.
        let u2 = u
            .update(
                Changes {
                    amount: Some(1),
                    ..Changes::default()
                },
                t0(),
                &NoTax,
            )
            .unwrap();
        assert_eq!(u2.amount, Some(2500));
        let c = create(custom(Some(1000), None, None));
        let u = c
            .update(
                Changes {
                    amount: Some(3000),
                    ..Changes::default()
                },
                t0(),
                &NoTax,
            )
            .unwrap();
        assert_eq!(u.amount, Some(3000));
        assert_eq!(
            invalid(c.update(
                Changes {
                    amount: Some(10),
                    ..Changes::default()
                },
                t0(),
                &NoTax
            ))[0]
                .0,
            "amount"
        );
        // Switching to a free price clears the amount and any discount.
        let mut n = new(fixed(1000));
        n.discount = Some(discount_fixed(100));
        let c = Checkout::create(n, t0(), &NoTax).unwrap();
        let u = c
            .update(
                Changes {
                    price: Some(price(PriceKind::OneTimeFree)),
                    ..Changes::default()
                },
                t0(),
                &NoTax,
            )
            .unwrap();
        assert_eq!((u.amount, u.discount.clone()), (None, None));
    }

    #[test]
    fn email_of_a_checkout_with_a_customer_is_kept() {
        let mut n = new(fixed(1000));
        n.customer_id = Some(CustomerId::new());
        n.customer_email = Some("owner@example.com".into());
        let c = Checkout::create(n, t0(), &NoTax).unwrap();
        let u = c
            .update(
                Changes {
                    customer_email: Some(Some("other@example.com".into())),
                    ..Changes::default()
                },
                t0(),
                &NoTax,
            )
            .unwrap();
        assert_eq!(u.customer_email.as_deref(), Some("owner@example.com"));
    }

    #[test]
    fn tax_ids_are_checked_against_the_country() {
        let c = create(fixed(1000));
        let issues = invalid(c.update(
            Changes {
                customer_tax_id: Some(Some("123".into())),
                ..Changes::default()
            },
            t0(),
            &NoTax,
        ));
        assert_eq!(issues[0].0, "customer_billing_address");
        assert_eq!(issues[0].2, "Country is required to validate tax ID.");
        let u = c
            .update(
                Changes {
                    customer_billing_address: Some(Some(address("FR"))),
                    customer_tax_id: Some(Some("FR61954506077".into())),
                    ..Changes::default()
                },
                t0(),
                &NoTax,
            )
            .unwrap();
        assert_eq!(
            u.customer_tax_id.as_ref().map(|t| t.value.as_str()),
            Some("FR61954506077")
        );
        // Changing the country alone revalidates the stored tax id.
        let issues = invalid(u.update(
            Changes {
                customer_billing_address: Some(Some(address("US"))),
                ..Changes::default()
            },
            t0(),
            &NoTax,
        ));
        assert_eq!(
            issues[0],
            (
                "customer_tax_id".into(),
                "value_error",
                "Invalid tax ID.".into()
            )
        );
        // An explicit null clears it.
        let cleared = u
            .update(
                Changes {
                    customer_tax_id: Some(None),
                    ..Changes::default()
                },
                t0(),
                &NoTax,
            )
            .unwrap();
        assert_eq!(cleared.customer_tax_id, None);
    }

    #[test]
    fn confirm_reports_every_missing_field() {
        let c = create(monthly(1000));
        let issues = invalid(c.confirm(Changes::default(), ctx(None), t0(), &NoTax));
        let locs: Vec<&str> = issues.iter().map(|i| i.0.as_str()).collect();
        assert_eq!(
            locs,
            vec![
                "customer_email",
                "customer_name",
                "customer_billing_address",
                "confirmation_token_id"
            ]
        );
        assert!(issues.iter().all(|i| i.1 == "missing"));
        assert_eq!(issues[3].2, "Confirmation token is required.");
    }

    #[test]
    fn confirm_moves_to_confirmed_and_keeps_the_token() {
        let c = create(fixed(1000));
        let confirmed = c
            .confirm(ready(), ctx(Some("tok_visa")), t0(), &NoTax)
            .unwrap();
        assert_eq!(confirmed.status, CheckoutStatus::Confirmed);
        assert_eq!(confirmed.confirmation_token.as_deref(), Some("tok_visa"));
        // Not open any more.
        assert_eq!(
            confirmed.confirm(ready(), ctx(Some("tok_visa")), t0(), &NoTax),
            Err(CheckoutError::NotOpen(CheckoutStatus::Confirmed))
        );
        assert_eq!(
            confirmed.update(Changes::default(), t0(), &NoTax),
            Err(CheckoutError::NotOpen(CheckoutStatus::Confirmed))
        );
    }

    #[test]
    fn a_free_checkout_confirms_with_an_email_only() {
        let c = create(price(PriceKind::OneTimeFree));
        let confirmed = c
            .confirm(
                Changes {
                    customer_email: Some(Some("a@b.co".into())),
                    ..Changes::default()
                },
                ctx(None),
                t0(),
                &NoTax,
            )
            .unwrap();
        assert_eq!(confirmed.status, CheckoutStatus::Confirmed);
    }

    #[test]
    fn confirm_rechecks_discount_price_and_amount() {
        let mut n = new(fixed(1000));
        n.discount = Some(discount_fixed(100));
        let c = Checkout::create(n, t0(), &NoTax).unwrap();
        let mut x = ctx(Some("tok_visa"));
        x.discount_redeemable = false;
        assert_eq!(
            invalid(c.confirm(ready(), x, t0(), &NoTax)),
            vec![(
                "discount_id".to_string(),
                "value_error",
                "Discount is no longer redeemable.".to_string()
            )]
        );
        let mut x = ctx(Some("tok_visa"));
        x.price_archived = true;
        assert_eq!(
            invalid(c.confirm(ready(), x, t0(), &NoTax))[0].2,
            "Price is archived."
        );
    }

    #[test]
    fn settle_transitions() {
        let confirmed = create(monthly(1000))
            .confirm(ready(), ctx(Some("tok_visa")), t0(), &NoTax)
            .unwrap();
        let sub = SubscriptionId::new();
        let ok = confirmed.succeed(Some("pi_1"), Some(sub), t0()).unwrap();
        assert_eq!(
            (ok.status, ok.subscription_id, ok.confirmation_token.clone()),
            (CheckoutStatus::Succeeded, Some(sub), None)
        );
        assert_eq!(
            ok.payment_processor_metadata
                .get("intent_status")
                .map(String::as_str),
            Some("succeeded")
        );
        assert!(matches!(
            ok.succeed(None, None, t0()),
            Err(CheckoutError::WrongStatus { .. })
        ));
        let reopened = confirmed.reopen(t0()).unwrap();
        assert_eq!(
            (reopened.status, reopened.confirmation_token.clone()),
            (CheckoutStatus::Open, None)
        );
        assert_eq!(confirmed.fail(t0()).unwrap().status, CheckoutStatus::Failed);
        assert!(matches!(
            reopened.fail(t0()),
            Err(CheckoutError::WrongStatus { .. })
        ));
        assert!(matches!(
            reopened.reopen(t0()),
            Err(CheckoutError::WrongStatus { .. })
        ));
    }

    #[test]
    fn each_confirmation_has_its_own_charge_key_and_keeps_it() {
        let open = create(fixed(1000));
        let first = open
            .confirm(ready(), ctx(Some("pm_1")), t0(), &NoTax)
            .unwrap();
        let key = first.charge_key();
        assert!(key.starts_with(&first.id.to_string()), "{key}");
        assert_eq!(
            first.clone().with_customer(CustomerId::new()).charge_key(),
            key
        );
        // Declined, then confirmed again with the same card: a new attempt, a new key.
        let later = t0() + Duration::seconds(5);
        let second = first
            .reopen(later)
            .unwrap()
            .confirm(ready(), ctx(Some("pm_1")), later, &NoTax)
            .unwrap();
        assert_ne!(second.charge_key(), key);
    }

    #[test]
    fn awaiting_a_payment_keeps_the_checkout_confirmed_with_its_intent() {
        let confirmed = create(fixed(1000))
            .confirm(ready(), ctx(Some("pm_card")), t0(), &NoTax)
            .unwrap();
        assert_eq!(confirmed.pending_intent(), None);
        let waiting = confirmed
            .await_payment("pi_3ds", "requires_action", Some("pi_3ds_secret"), t0())
            .unwrap();
        assert_eq!(waiting.status, CheckoutStatus::Confirmed);
        assert_eq!(waiting.pending_intent(), Some("pi_3ds"));
        let meta = |c: &Checkout, k: &str| c.payment_processor_metadata.get(k).cloned();
        assert_eq!(
            meta(&waiting, "intent_status").as_deref(),
            Some("requires_action")
        );
        assert_eq!(
            meta(&waiting, "intent_client_secret").as_deref(),
            Some("pi_3ds_secret")
        );
        // Settled later: the secret is dropped once paid; a decline reopens afresh.
        let paid = waiting.succeed(Some("pi_3ds"), None, t0()).unwrap();
        assert_eq!(paid.status, CheckoutStatus::Succeeded);
        assert_eq!(paid.pending_intent(), None);
        assert_eq!(meta(&paid, "intent_client_secret"), None);
        assert_eq!(meta(&paid, "intent_status").as_deref(), Some("succeeded"));
        let reopened = waiting.reopen(t0()).unwrap();
        assert_eq!(reopened.status, CheckoutStatus::Open);
        assert!(reopened.payment_processor_metadata.is_empty());
        // Only a confirmed checkout can wait on a payment.
        assert!(matches!(
            reopened.await_payment("pi_x", "processing", None, t0()),
            Err(CheckoutError::WrongStatus { .. })
        ));
        assert!(matches!(
            paid.await_payment("pi_x", "processing", None, t0()),
            Err(CheckoutError::WrongStatus { .. })
        ));
    }

    #[test]
    fn success_url_substitutes_the_checkout_id_only() {
        let mut n = new(fixed(1000));
        n.success_url =
            Some("https://x.test/ok?checkout_id={CHECKOUT_ID}&s={CHECKOUT_SESSION_ID}".into());
        let c = Checkout::create(n, t0(), &NoTax).unwrap();
        assert_eq!(
            c.success_url("unused"),
            format!(
                "https://x.test/ok?checkout_id={}&s={{CHECKOUT_SESSION_ID}}",
                c.id
            )
        );
        assert_eq!(
            create(fixed(1)).success_url("https://d.test/"),
            "https://d.test/"
        );
    }
}
