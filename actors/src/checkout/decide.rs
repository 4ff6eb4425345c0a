//! The checkout's rules as pure functions: no actor, no storage, no clock. Each takes the
//! checkout as it is, the command and `now` (and every resolved catalog record: the HTTP
//! layer has already checked that references exist and belong to the right organization
//! and product), and returns the checkout as it must become, or why not. The amounts,
//! the price selection and the validation rules they apply are in `amounts.rs`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::model::{
    Attempt, Changes, Checkout, CheckoutError, CheckoutStatus, CheckoutTerms, ConfirmContext,
    Issue, NewCheckout, Settlement,
};
use crate::domain::ids::{CustomerId, SubscriptionId};
use crate::domain::product::AmountType;
use crate::tax::TaxQuote;

impl Checkout {
    /// A checkout of one product (`n.product_id`) with Polar's default terms.
    pub fn create(
        n: NewCheckout,
        now: DateTime<Utc>,
        tax: Option<&TaxQuote>,
    ) -> Result<Checkout, CheckoutError> {
        let terms = CheckoutTerms::for_product(n.product_id);
        Checkout::create_with(n, terms, now, tax)
    }

    /// A checkout on the seller's `terms`: its products (`n.product_id` selected, and put
    /// first when the list lacks it), whether a full address is required, and so on.
    pub fn create_with(
        n: NewCheckout,
        terms: CheckoutTerms,
        now: DateTime<Utc>,
        tax: Option<&TaxQuote>,
    ) -> Result<Checkout, CheckoutError> {
        let mut products = terms.products;
        if !products.contains(&n.product_id) {
            products.insert(0, n.product_id);
        }
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
            products,
            require_billing_address: terms.require_billing_address,
            allow_trial: terms.allow_trial,
            external_customer_id: terms.external_customer_id,
            return_url: terms.return_url,
            payment_method_type: None,
            trial: terms.trial,
            product_trial: n.product_trial,
            trial_end: None,
            seats: None,
            min_seats: terms.min_seats,
            max_seats: terms.max_seats,
            is_business_customer: n.is_business_customer,
            customer_billing_name: n.customer_billing_name,
            tax_behavior: None,
            tax_breakdown: Vec::new(),
            tax_id_status: None,
            tax_provider_ref: None,
            locale: terms.locale,
        };
        let mut issues = Vec::new();
        c.check_seat_bounds(&mut issues);
        if !issues.is_empty() {
            return Err(CheckoutError::Invalid(issues));
        }
        c.select_price(n.price, n.amount, n.seats, &mut issues);
        if let Some(d) = n.discount {
            c.apply_discount(Some(d), "discount_id", &mut issues);
        }
        if !issues.is_empty() {
            return Err(CheckoutError::Invalid(issues));
        }
        c.apply_tax(tax)?;
        c.trial_end = c.active_trial().map(|t| t.end(now));
        Ok(c)
    }

    /// Applies an update (organizer or client side). Refused unless the checkout is open.
    pub fn update(
        &self,
        ch: Changes,
        now: DateTime<Utc>,
        tax: Option<&TaxQuote>,
    ) -> Result<Checkout, CheckoutError> {
        let status = self.effective_status(now);
        if status != CheckoutStatus::Open {
            return Err(CheckoutError::NotOpen(status));
        }
        let mut c = self.clone();
        let mut issues = Vec::new();
        if let Some(product) = ch.product {
            if !c.products.contains(&product) {
                issues.push(Issue::new(
                    &["product_id"],
                    "value_error",
                    "Product is not available in this checkout.",
                ));
            } else if ch.price.is_none() {
                issues.push(Issue::new(
                    &["product_id"],
                    "value_error",
                    "Product has no active price.",
                ));
            } else {
                c.product_id = product;
                if let Some(trial) = ch.product_trial {
                    c.product_trial = trial;
                }
            }
        }
        if let Some(currency) = ch.currency {
            c.currency = Some(currency.code().to_string());
        }
        match ch.price {
            Some(p) => c.select_price(p, ch.amount, ch.seats, &mut issues),
            None => {
                // Only custom prices take an amount (ignored for others); seats are
                // priced (or refused) by the current price.
                let amount = ch.amount.filter(|_| c.amount_type() == AmountType::Custom);
                if amount.is_some() || ch.seats.is_some() {
                    let price = c.price.clone();
                    c.select_price(price, amount, ch.seats, &mut issues);
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
        if let Some(b) = ch.is_business_customer {
            c.is_business_customer = b;
        }
        if let Some(name) = ch.customer_billing_name {
            c.customer_billing_name = name.filter(|n| !n.trim().is_empty());
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
        if let Some(r) = ch.require_billing_address {
            c.require_billing_address = r;
        }
        if let Some(a) = ch.allow_trial {
            c.allow_trial = a;
        }
        if let Some(u) = ch.return_url {
            c.return_url = u;
        }
        if let Some(m) = ch.payment_method_type {
            c.payment_method_type = m;
        }
        if let Some(t) = ch.trial {
            c.trial = t;
        }
        if let Some(l) = ch.locale {
            c.locale = l;
        }
        if !issues.is_empty() {
            return Err(CheckoutError::Invalid(issues));
        }
        c.apply_tax(tax)?;
        // Polar counts the trial from the checkout's last change.
        c.trial_end = c.active_trial().map(|t| t.end(now));
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
        tax: Option<&TaxQuote>,
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

    /// Applies the processor's answer about the payment `attempt` (the settler read it
    /// before asking). A decline or an intent's progress for an attempt the checkout has
    /// moved on from is refused with [`CheckoutError::Superseded`]; a success is applied
    /// whatever the attempt: money was taken for this checkout.
    pub fn settle(
        &self,
        settlement: &Settlement,
        attempt: &Attempt,
        now: DateTime<Utc>,
    ) -> Result<Checkout, CheckoutError> {
        let current = match settlement {
            Settlement::Succeeded { .. } => true,
            Settlement::AwaitPayment { intent, .. } => {
                self.is_attempt(attempt) || self.pending_intent() == Some(intent.as_str())
            }
            Settlement::Reopen | Settlement::Failed => self.is_attempt(attempt),
        };
        if !current && self.status == CheckoutStatus::Confirmed {
            return Err(CheckoutError::Superseded);
        }
        match settlement {
            Settlement::Succeeded {
                intent,
                subscription,
            } => self.succeed(intent.as_deref(), *subscription, now),
            Settlement::Reopen => self.reopen(now),
            Settlement::AwaitPayment {
                intent,
                status,
                client_secret,
            } => self.await_payment(intent, status, client_secret.as_deref(), now),
            Settlement::Failed => self.fail(now),
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
#[path = "decide_tests.rs"]
pub(crate) mod tests;
