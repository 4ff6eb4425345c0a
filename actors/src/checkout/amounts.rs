//! What a checkout costs and what it requires, and the validation rules behind its 422s.
//!
//! The selected price and its amount (custom amounts within their bounds), the applied
//! discount, tax, subtotal and total, whether a payment (or a payment method) is needed,
//! and the validation rules behind the 422 issues of an update or a confirm (amount
//! bounds, discount applicability, tax id, the fields a confirm requires). The rules that
//! use them are in [`super::decide`].

use crate::domain::currency::Currency;
use crate::domain::customer::validate_tax_id;
use crate::domain::discount::amount_off;
use crate::domain::product::{AmountType, Price, PriceKind, SeatTiers};
use crate::tax::{Buyer, TaxBehavior, TaxIdStatus, TaxQuote, TaxRequest};

use super::model::{
    AppliedDiscount, BillingAddressFields, Checkout, CheckoutError, FieldMode, Issue,
};

/// Custom prices without a preset start at this amount (Polar's default).
pub const DEFAULT_CUSTOM_AMOUNT: i64 = 1000;

impl Checkout {
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

    /// Whether the applied quote's tax is inside the amount.
    pub fn tax_inclusive(&self) -> bool {
        self.tax_behavior == Some(TaxBehavior::Inclusive)
    }

    /// The amount before tax: the subtotal, less the tax inside it for an inclusive price.
    pub fn net_amount(&self) -> Option<i64> {
        let tax = self.tax_amount.unwrap_or(0);
        self.subtotal_amount()
            .map(|s| if self.tax_inclusive() { s - tax } else { s })
    }

    /// What the buyer pays: the net plus the tax (for an inclusive price, the subtotal).
    pub fn total_amount(&self) -> Option<i64> {
        self.net_amount().map(|n| n + self.tax_amount.unwrap_or(0))
    }

    /// Whether the buyer pays now: a positive total without a trial (with one, the
    /// payment method is only saved for the charge at the trial's end: Polar's
    /// `total_amount > 0 and trial_end is None`).
    pub fn is_payment_required(&self) -> bool {
        self.trial_end.is_none() && self.total_amount().is_some_and(|t| t > 0)
    }

    pub fn is_payment_setup_required(&self) -> bool {
        self.price.kind.is_recurring() && !self.is_free_product_price()
    }

    /// Whether the payment method is saved even when nothing is charged now: a trial's
    /// first charge, or the usage a metered price bills at the end of the period (Polar:
    /// metered prices "still require a payment on next cycle").
    pub fn saves_payment_method(&self) -> bool {
        (self.trial_end.is_some() || self.price.kind.is_metered())
            && self.is_payment_setup_required()
    }

    pub fn is_payment_form_required(&self) -> bool {
        self.is_payment_required() || self.is_payment_setup_required()
    }

    /// Which lines of the billing address the hosted page asks for: the country always;
    /// the state of a US or Canadian address (the only ones the page offers states for);
    /// line 1, postal code and city when a full address is required, else optionally;
    /// line 2 optionally. Confirm requires the lines marked required when a full address
    /// is required.
    pub fn billing_address_fields(&self) -> BillingAddressFields {
        let country = self
            .customer_billing_address
            .as_ref()
            .map(|a| a.country.as_str());
        let full = if self.require_billing_address || self.is_business_customer {
            FieldMode::Required
        } else {
            FieldMode::Optional
        };
        BillingAddressFields {
            country: FieldMode::Required,
            state: if matches!(country, Some("US" | "CA")) {
                FieldMode::Required
            } else {
                FieldMode::Disabled
            },
            line1: full,
            line2: FieldMode::Optional,
            postal_code: full,
            city: full,
        }
    }

    /// The seats this checkout sells at its seat-based price (`None` for any other): the
    /// fewest and the most (`None`: no limit), the price's own narrowed by the seller's
    /// `min_seats` and `max_seats`.
    pub fn seat_range(&self) -> Option<(u32, Option<u32>)> {
        self.price.kind.seat_tiers().map(|t| self.narrow(t))
    }

    fn narrow(&self, tiers: &SeatTiers) -> (u32, Option<u32>) {
        let min = tiers.minimum_seats().max(self.min_seats.unwrap_or(0));
        let max = match (tiers.maximum_seats(), self.max_seats) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        (min, max)
    }

    /// The seller's bounds on the seats of a new checkout, against its first price: only
    /// for a seat-based price (Polar's message otherwise), and sharing at least one count
    /// with the price's own.
    pub(super) fn check_seat_bounds(&self, issues: &mut Vec<Issue>) {
        let given = [("min_seats", self.min_seats), ("max_seats", self.max_seats)];
        let Some(tiers) = self.price.kind.seat_tiers() else {
            for (field, n) in given {
                if n.is_some() {
                    issues.push(Issue::new(
                        &[field],
                        "value_error",
                        format!("{field} can only be set for seat-based pricing."),
                    ));
                }
            }
            return;
        };
        if let Some(n) = self
            .min_seats
            .filter(|n| tiers.maximum_seats().is_some_and(|m| *n > m))
        {
            issues.push(Issue::new(
                &["min_seats"],
                "value_error",
                format!("The price doesn't sell {n} seats."),
            ));
        }
        if let Some(n) = self.max_seats.filter(|n| *n < tiers.minimum_seats()) {
            issues.push(Issue::new(
                &["max_seats"],
                "value_error",
                format!("The price doesn't sell {n} seats."),
            ));
        }
    }

    /// Sells `price`: its amount (a custom price's `amount` within its bounds; a
    /// seat-based price's for `seats`, else the seats already chosen, else its fewest).
    /// Seats for any other price are refused, as Polar does.
    pub(super) fn select_price(
        &mut self,
        price: Price,
        amount: Option<i64>,
        seats: Option<u32>,
        issues: &mut Vec<Issue>,
    ) {
        let seats_before = self
            .seats
            .filter(|_| self.price.kind.seat_tiers().is_some());
        self.seats = None;
        if seats.is_some() && price.kind.seat_tiers().is_none() {
            issues.push(Issue::new(
                &["seats"],
                "value_error",
                "Seats can only be set for seat-based pricing.",
            ));
        }
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
                // An amount given is first within the currency's bounds (Polar's schema
                // bounds, per currency), then the price's own.
                let bounds =
                    Currency::from_code(currency).map(|c| (c.minimum_amount(), c.maximum_amount()));
                let (min, max) = bounds.unwrap_or((0, i64::MAX));
                let given = amount.unwrap_or(chosen);
                if amount.is_some() && given < min {
                    issues.push(Issue::new(
                        &["amount"],
                        "greater_than_equal",
                        format!("Input should be greater than or equal to {min}"),
                    ));
                } else if amount.is_some() && given > max {
                    issues.push(Issue::new(
                        &["amount"],
                        "less_than_equal",
                        format!("Input should be less than or equal to {max}"),
                    ));
                } else if minimum_amount.is_some_and(|m| chosen < m) {
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
            PriceKind::RecurringSeatBased {
                currency,
                seat_tiers,
                ..
            }
            | PriceKind::OneTimeSeatBased {
                currency,
                seat_tiers,
            } => {
                let (min, max) = self.narrow(seat_tiers);
                let chosen = seats.or(seats_before).unwrap_or(min);
                if chosen < min {
                    issues.push(Issue::new(
                        &["seats"],
                        "greater_than_equal",
                        format!("Input should be greater than or equal to {min}"),
                    ));
                } else if let Some(max) = max.filter(|m| chosen > *m) {
                    issues.push(Issue::new(
                        &["seats"],
                        "less_than_equal",
                        format!("Input should be less than or equal to {max}"),
                    ));
                }
                // Out of range: priced at the nearest count on sale, the update refused.
                let priced = chosen.max(min).min(max.unwrap_or(u32::MAX));
                self.seats = Some(priced);
                self.amount = seat_tiers.amount(priced);
                self.currency = Some(currency.clone());
            }
            // A free price names no currency: the checkout keeps its own.
            PriceKind::RecurringFree { .. } | PriceKind::OneTimeFree => {
                self.amount = None;
            }
            // A metered price (of a product of metered prices only) bills nothing up
            // front: its usage is billed at the end of each period.
            PriceKind::RecurringMeteredUnit { currency, .. } => {
                self.amount = Some(0);
                self.currency = Some(currency.clone());
            }
        }
        self.price = price;
        if !self.is_discount_applicable() {
            self.discount = None;
        }
    }

    pub(super) fn apply_discount(
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

    /// What a tax service is asked to quote for this checkout as it is: its subtotal in its
    /// currency for its billing address; `None` when there is no amount to tax (a free
    /// price).
    pub fn tax_request(&self) -> Option<TaxRequest> {
        match (self.subtotal_amount(), &self.currency) {
            (Some(amount), Some(currency)) => {
                let mut r = TaxRequest::new(amount, currency, self.created_at.date_naive());
                r.buyer = Buyer {
                    address: self.customer_billing_address.clone(),
                    is_business: self.is_business_customer,
                    tax_id: self
                        .customer_tax_id
                        .clone()
                        .map(|t| (t, self.tax_id_status.unwrap_or(TaxIdStatus::Unverified))),
                };
                Some(r)
            }
            _ => None,
        }
    }

    /// This checkout with the tax of `quote` (see [`Self::apply_tax`]): for a checkout the
    /// application builds before storing it.
    pub fn with_tax(mut self, quote: Option<&TaxQuote>) -> Result<Checkout, CheckoutError> {
        self.apply_tax(quote)?;
        Ok(self)
    }

    /// Takes the tax of `quote`, the quote the application got for this checkout's
    /// [`Self::tax_request`] (`None`: the seller collects no tax here, zero). A quote made
    /// for other amounts or another address (the checkout changed since it was asked) is
    /// refused with [`CheckoutError::TaxQuoteStale`]: the caller asks again.
    pub(super) fn apply_tax(&mut self, quote: Option<&TaxQuote>) -> Result<(), CheckoutError> {
        let applied = match (self.tax_request(), quote) {
            (None, _) => None,
            (Some(_), None) => Some((0, None, Vec::new(), None, None)),
            (Some(request), Some(q)) if q.is_for_sale(&request) => Some((
                q.tax_amount,
                Some(q.behavior()),
                q.breakdown.clone(),
                q.request.buyer.tax_id.as_ref().map(|t| t.1),
                q.provider_ref.clone(),
            )),
            (Some(_), Some(_)) => return Err(CheckoutError::TaxQuoteStale),
        };
        let (tax, behavior, breakdown, status, provider_ref) = match applied {
            Some((t, b, br, s, r)) => (Some(t), b, br, s, r),
            None => (None, None, Vec::new(), None, None),
        };
        self.tax_amount = tax;
        self.tax_behavior = behavior;
        self.tax_breakdown = breakdown;
        self.tax_id_status = status;
        self.tax_provider_ref = provider_ref;
        Ok(())
    }

    /// Applies the tax id of an update (`Some(None)` or blank: clear it), validated
    /// against the billing country; a changed country revalidates the current one.
    pub(super) fn apply_tax_id(
        &mut self,
        change: Option<Option<String>>,
        country_changed: bool,
        issues: &mut Vec<Issue>,
    ) {
        let tax_input = match change {
            Some(None) => {
                self.customer_tax_id = None;
                None
            }
            Some(Some(raw)) if raw.trim().is_empty() => {
                self.customer_tax_id = None;
                None
            }
            Some(Some(raw)) => Some(raw),
            None if country_changed => self.customer_tax_id.as_ref().map(|t| t.value.clone()),
            None => None,
        };
        if let Some(raw) = tax_input {
            match self
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
                    Ok(t) => self.customer_tax_id = Some(t),
                    Err(_) => issues.push(Issue::new(
                        &["customer_tax_id"],
                        "value_error",
                        "Invalid tax ID.",
                    )),
                },
            }
        }
    }

    /// What a confirm still misses (reported all at once, reference 1.7): the amount of a
    /// custom price, a price that is not archived, the e-mail address, the name and billing
    /// address when a payment form is shown, and a confirmation token when a payment is due.
    pub(super) fn confirm_issues(&self, price_archived: bool, has_token: bool) -> Vec<Issue> {
        let mut issues = Vec::new();
        if self.amount_type() == AmountType::Custom && self.amount.is_none() {
            issues.push(Issue::new(
                &["amount"],
                "missing",
                "Amount is required for custom prices.",
            ));
        }
        if price_archived {
            issues.push(Issue::new(
                &["product_price_id"],
                "value_error",
                "Price is archived.",
            ));
        }
        if self.customer_email.is_none() {
            issues.push(Issue::new(
                &["customer_email"],
                "missing",
                "Field is required.",
            ));
        }
        if self.is_payment_form_required() && self.customer_name.is_none() {
            issues.push(Issue::new(
                &["customer_name"],
                "missing",
                "Field is required.",
            ));
        }
        if self.is_business_customer && self.customer_billing_name.is_none() {
            issues.push(Issue::new(
                &["customer_billing_name"],
                "missing",
                "Field is required.",
            ));
        }
        let full = self.require_billing_address || self.is_business_customer;
        if self.is_payment_form_required() || full {
            match &self.customer_billing_address {
                None => issues.push(Issue::new(
                    &["customer_billing_address"],
                    "missing",
                    "Field is required.",
                )),
                Some(a) if full => {
                    for (field, value) in [
                        ("line1", &a.line1),
                        ("postal_code", &a.postal_code),
                        ("city", &a.city),
                    ] {
                        if value.is_none() {
                            issues.push(Issue::new(
                                &["customer_billing_address", field],
                                "missing",
                                "Field is required.",
                            ));
                        }
                    }
                }
                Some(_) => {}
            }
        }
        // A trial of a paid price saves the card for its first charge, a metered price for
        // the usage billed at the period's end: they need one too.
        if (self.is_payment_required() || self.saves_payment_method()) && !has_token {
            issues.push(Issue::new(
                &["confirmation_token_id"],
                "missing",
                "Confirmation token is required.",
            ));
        }
        issues
    }
}
