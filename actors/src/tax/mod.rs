//! Tax as a quote: what the application asks a tax service ([`TaxRequest`]) and what the
//! service answers ([`TaxQuote`]). The application asks before a checkout is confirmed
//! (and whenever its amounts change), before a renewal is charged and before a plan change
//! is applied, and hands the quote to the pure rules as data: no rule calls a service. The
//! services themselves (`TaxService`: none, the built-in rules of [`builtin`], Stripe Tax)
//! are the server's (`src/payments/tax.rs`).
//!
//! Amounts: a request carries one amount in the currency's minor unit, after discounts,
//! and whether it includes its tax ([`TaxBehavior`]). The quote answers the tax and the
//! breakdown per jurisdiction and rate; [`TaxQuote::net_amount`] and
//! [`TaxQuote::total_amount`] say what that makes of the amount (inclusive: the total is
//! the amount and the net is what is left after the tax; exclusive: the tax is added).

pub mod builtin;
pub mod place;
pub mod rates;
pub mod rounding;

use chrono::NaiveDate;

use crate::domain::customer::{Address, TaxId};
pub use crate::domain::tax_breakdown::{Regime, TaxBreakdown, TaxIdStatus, TaxabilityReason};
pub use crate::domain::tax_settings::{SellerTax, TaxBehavior};

/// The buyer as a tax rule sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Buyer {
    /// The billing address: its country (and for some countries its subdivision or postal
    /// code) decides the jurisdiction. `None`: no tax can be computed.
    pub address: Option<Address>,
    /// Buying as a business (Polar's `is_business_customer`).
    pub is_business: bool,
    /// The business's tax number, already validated for its country, and how far it was
    /// checked. A business with a number that is not `Invalid` may be reverse-charged.
    pub tax_id: Option<(TaxId, TaxIdStatus)>,
}

impl Buyer {
    /// A consumer at `address`.
    pub fn at(address: Option<Address>) -> Buyer {
        Buyer {
            address,
            ..Buyer::default()
        }
    }

    /// A business with a usable tax number (valid or not refuted).
    pub fn has_business_number(&self) -> bool {
        self.is_business && matches!(&self.tax_id, Some((_, s)) if *s != TaxIdStatus::Invalid)
    }
}

/// What to quote tax for: one amount of one currency, for one buyer, by one seller, on one
/// day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxRequest {
    /// The amount to tax, in the currency's minor unit, after discounts.
    pub amount: i64,
    /// ISO 4217, lower case, as prices store it.
    pub currency: String,
    /// Whether `amount` includes its tax.
    pub behavior: TaxBehavior,
    pub buyer: Buyer,
    pub seller: SellerTax,
    /// The tax point: the rate in force on this day applies.
    pub tax_date: NaiveDate,
    /// The product's tax code, if the seller gave one (none can be given yet).
    pub tax_code: Option<String>,
}

impl TaxRequest {
    /// A request for `amount` in `currency`, tax-exclusive, for an unknown buyer of a seller
    /// without tax settings, dated `tax_date`; the fields are public to set the rest.
    pub fn new(amount: i64, currency: &str, tax_date: NaiveDate) -> TaxRequest {
        TaxRequest {
            amount,
            currency: currency.to_string(),
            behavior: TaxBehavior::Exclusive,
            buyer: Buyer::default(),
            seller: SellerTax::default(),
            tax_date,
            tax_code: None,
        }
    }

    /// The buyer's billing address.
    pub fn billing_address(&self) -> Option<&Address> {
        self.buyer.address.as_ref()
    }
}

/// A tax service's answer to one [`TaxRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxQuote {
    /// What was quoted: the rules apply a quote only to the amounts it was made for.
    pub request: TaxRequest,
    /// One line per jurisdiction and rate (a reverse charge is a line of 0 with its reason;
    /// no line at all: no tax anywhere).
    pub breakdown: Vec<TaxBreakdown>,
    /// The sum of the breakdown's amounts.
    pub tax_amount: i64,
    /// The provider's id of this calculation (Stripe Tax `taxcalc_…`), to record the
    /// transaction after payment.
    pub provider_ref: Option<String>,
}

impl TaxQuote {
    /// No tax on `request`: what the default service answers, and what an amount of 0 is
    /// quoted without asking.
    pub fn zero(request: TaxRequest) -> TaxQuote {
        TaxQuote {
            request,
            breakdown: Vec::new(),
            tax_amount: 0,
            provider_ref: None,
        }
    }

    /// Whether this quote was made for `request`.
    pub fn answers(&self, request: &TaxRequest) -> bool {
        self.request == *request
    }

    /// Whether this quote was made for the sale `request` describes: the same amount,
    /// currency and buyer (how far the buyer's number was checked is the quote's to say). (The seller's settings, the behaviour and the tax point are the
    /// application's to fill; an aggregate that builds a request knows only the sale.)
    pub fn is_for_sale(&self, request: &TaxRequest) -> bool {
        let (a, b) = (&self.request.buyer, &request.buyer);
        self.request.amount == request.amount
            && self.request.currency == request.currency
            && a.address == b.address
            && a.is_business == b.is_business
            && a.tax_id.as_ref().map(|t| &t.0) == b.tax_id.as_ref().map(|t| &t.0)
    }

    pub fn behavior(&self) -> TaxBehavior {
        self.request.behavior
    }

    /// The amount before tax: the request's amount when exclusive, the amount less the
    /// tax inside it when inclusive.
    pub fn net_amount(&self) -> i64 {
        match self.request.behavior {
            TaxBehavior::Exclusive => self.request.amount,
            TaxBehavior::Inclusive => self.request.amount - self.tax_amount,
        }
    }

    /// What the buyer pays: net plus tax.
    pub fn total_amount(&self) -> i64 {
        self.net_amount() + self.tax_amount
    }

    /// What the buyer pays on top of the amount: the tax when exclusive, 0 when inclusive.
    pub fn added_tax(&self) -> i64 {
        self.total_amount() - self.request.amount
    }

    /// What an order charged on this quote keeps of its tax (a renewal, a plan change, a
    /// retried charge), its buyer as the quote names them.
    pub fn order_tax(&self, billing_name: Option<String>) -> crate::domain::order::OrderTax {
        let buyer = &self.request.buyer;
        crate::domain::order::OrderTax {
            behavior: self.behavior(),
            breakdown: self.breakdown.clone(),
            billing_name: billing_name.filter(|_| buyer.is_business),
            is_business: buyer.is_business,
            tax_id: buyer.tax_id.as_ref().map(|t| t.0.clone()),
            tax_id_status: buyer.tax_id.as_ref().map(|t| t.1),
            provider_ref: self.provider_ref.clone(),
        }
    }

    /// A business buyer accounts for the tax (a line with the reverse-charge reason).
    pub fn reverse_charge(&self) -> bool {
        self.breakdown
            .iter()
            .any(|b| b.reason == TaxabilityReason::ReverseCharge)
    }
}

/// The tax line's label as a buyer reads it, from a breakdown and the price's behaviour:
/// `VAT 19%`, `Includes VAT 19%` (tax inside the price), `VAT reverse charge`; `None` when no
/// tax is shown (none anywhere, not collected, not subject to tax).
pub fn label(breakdown: &[TaxBreakdown], behavior: TaxBehavior) -> Option<String> {
    let b = breakdown.first()?;
    match b.reason {
        TaxabilityReason::ReverseCharge => Some(format!("{} reverse charge", b.name)),
        TaxabilityReason::StandardRated => {
            let l = format!("{} {}%", b.name, b.rate_percent());
            Some(match behavior {
                TaxBehavior::Inclusive => format!("Includes {l}"),
                TaxBehavior::Exclusive => l,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(amount: i64) -> TaxRequest {
        TaxRequest::new(amount, "usd", NaiveDate::from_ymd_opt(2026, 1, 1).unwrap())
    }

    fn line(amount: i64, rate_ppm: u32) -> TaxBreakdown {
        TaxBreakdown {
            country: "DE".into(),
            subdivision: None,
            name: "VAT".into(),
            rate_ppm,
            taxable_amount: 0,
            amount,
            reason: TaxabilityReason::StandardRated,
            regime: Regime::EuOss,
        }
    }

    #[test]
    fn a_zero_quote_adds_nothing_and_answers_its_request_only() {
        let q = TaxQuote::zero(request(1500));
        assert_eq!(
            (
                q.tax_amount,
                q.added_tax(),
                q.net_amount(),
                q.total_amount()
            ),
            (0, 0, 1500, 1500)
        );
        assert!(q.answers(&request(1500)) && !q.answers(&request(1600)));
        assert!(!q.reverse_charge());
    }

    #[test]
    fn exclusive_tax_is_added_and_inclusive_tax_is_inside() {
        let mut q = TaxQuote::zero(request(1000));
        q.tax_amount = 190;
        q.breakdown = vec![line(190, 190_000)];
        assert_eq!(
            (q.net_amount(), q.total_amount(), q.added_tax()),
            (1000, 1190, 190)
        );
        q.request.behavior = TaxBehavior::Inclusive;
        assert_eq!(
            (q.net_amount(), q.total_amount(), q.added_tax()),
            (810, 1000, 0)
        );
    }

    #[test]
    fn the_tax_line_is_labelled_by_its_reason_and_behaviour() {
        assert_eq!(label(&[], TaxBehavior::Exclusive), None);
        let mut b = line(190, 190_000);
        assert_eq!(
            label(&[b.clone()], TaxBehavior::Exclusive).as_deref(),
            Some("VAT 19%")
        );
        assert_eq!(
            label(&[b.clone()], TaxBehavior::Inclusive).as_deref(),
            Some("Includes VAT 19%")
        );
        b.reason = TaxabilityReason::ReverseCharge;
        assert_eq!(
            label(&[b.clone()], TaxBehavior::Inclusive).as_deref(),
            Some("VAT reverse charge")
        );
        b.reason = TaxabilityReason::NotCollecting;
        assert_eq!(label(&[b], TaxBehavior::Exclusive), None);
    }

    #[test]
    fn rates_print_as_people_write_them() {
        assert_eq!(line(0, 190_000).rate_percent(), "19");
        assert_eq!(line(0, 255_000).rate_percent(), "25.5");
        assert_eq!(line(0, 99_750).rate_percent(), "9.975");
        assert_eq!(line(0, 81_000).rate_percent(), "8.1");
        assert_eq!(line(0, 0).rate_percent(), "0");
    }

    #[test]
    fn a_business_number_counts_unless_refuted() {
        let id = crate::domain::customer::validate_tax_id("DE136695976", "DE").expect("valid");
        let mut b = Buyer {
            tax_id: Some((id, TaxIdStatus::Unverified)),
            ..Buyer::default()
        };
        assert!(!b.has_business_number(), "not a business");
        b.is_business = true;
        assert!(b.has_business_number());
        b.tax_id.as_mut().unwrap().1 = TaxIdStatus::Invalid;
        assert!(!b.has_business_number());
    }
}
