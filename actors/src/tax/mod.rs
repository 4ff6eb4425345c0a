//! Tax as a quote: what the application asks a tax service ([`TaxRequest`]) and what the
//! service answers ([`TaxQuote`]). The application asks before a checkout is confirmed
//! (and whenever its amounts change), before a renewal is charged and before a plan change
//! is applied, and hands the quote to the pure rules as data: no rule computes tax, and
//! none calls a service. The service itself (`TaxService`) is the server's
//! (`src/payments/tax.rs`).

pub mod rates;

use crate::domain::customer::Address;

/// What to quote tax for: one amount of one currency, for one buyer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxRequest {
    /// The amount to tax, in the currency's minor unit, after discounts.
    pub amount: i64,
    /// ISO 4217, lower case, as prices store it.
    pub currency: String,
    /// The buyer's billing address (the country decides the jurisdiction).
    pub billing_address: Option<Address>,
    /// The product's tax code, if the seller gave one (none can be given yet).
    pub tax_code: Option<String>,
    /// Whether `amount` already includes tax (no such seller setting yet: always `false`).
    pub tax_inclusive: bool,
}

/// One tax of a quote (a country's VAT, a state's sales tax, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxLine {
    /// In the currency's minor unit.
    pub amount: i64,
    /// In basis points (2000: 20 %).
    pub rate_bps: u32,
    /// Where the tax is owed (`FR`, `US-CA`, …).
    pub jurisdiction: String,
    /// What the buyer reads (`VAT`, `Sales tax`).
    pub name: String,
}

/// A tax service's answer to one [`TaxRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxQuote {
    /// What was quoted: the rules apply a quote only to the amounts it was made for.
    pub request: TaxRequest,
    pub lines: Vec<TaxLine>,
    /// The part of the amount that is taxed.
    pub taxable_amount: i64,
    /// The sum of the lines.
    pub tax_amount: i64,
    /// The tax is inside the amount (not added to it).
    pub tax_included: bool,
    /// The buyer accounts for the tax (a business buyer across a border): nothing is
    /// collected, and the invoice says so.
    pub reverse_charge: bool,
}

impl TaxQuote {
    /// No tax on `request`: what the default service answers, and what an amount of 0 is
    /// quoted without asking.
    pub fn zero(request: TaxRequest) -> TaxQuote {
        TaxQuote {
            taxable_amount: request.amount,
            tax_included: request.tax_inclusive,
            request,
            lines: Vec::new(),
            tax_amount: 0,
            reverse_charge: false,
        }
    }

    /// Whether this quote was made for `request`.
    pub fn answers(&self, request: &TaxRequest) -> bool {
        self.request == *request
    }

    /// What the buyer pays on top of the amount: the tax, unless it is included in the
    /// amount already or reverse-charged. (The records keep the added tax only, so an
    /// inclusive quote adds nothing to a total.)
    pub fn added_tax(&self) -> i64 {
        if self.tax_included || self.reverse_charge {
            0
        } else {
            self.tax_amount
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(amount: i64) -> TaxRequest {
        TaxRequest {
            amount,
            currency: "usd".into(),
            billing_address: None,
            tax_code: None,
            tax_inclusive: false,
        }
    }

    #[test]
    fn a_zero_quote_adds_nothing_and_answers_its_request_only() {
        let q = TaxQuote::zero(request(1500));
        assert_eq!(
            (q.tax_amount, q.added_tax(), q.taxable_amount),
            (0, 0, 1500)
        );
        assert!(q.answers(&request(1500)) && !q.answers(&request(1600)));
    }

    #[test]
    fn included_or_reverse_charged_tax_is_not_added() {
        let mut q = TaxQuote::zero(request(1000));
        q.tax_amount = 200;
        assert_eq!(q.added_tax(), 200);
        q.tax_included = true;
        assert_eq!(q.added_tax(), 0);
        q.tax_included = false;
        q.reverse_charge = true;
        assert_eq!(q.added_tax(), 0);
    }
}
