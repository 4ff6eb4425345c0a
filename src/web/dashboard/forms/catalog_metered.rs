//! The product form's metered price (issue 51, Polar's `metered_unit`): a meter of the
//! organization, the price of one unit in cents (a decimal with up to 12 places, as the
//! API's `unit_amount`) and an optional cap per period in the currency's major units.
//!
//! It is added beside the form's other prices, once per billing period (a one-time
//! product cannot have one: the API's message), and in each other currency with the same
//! numbers in that currency's units (Polar: every currency has the same types of prices).
//! Whether the meter is one of the organization's live meters is the products' use case's
//! check, as for the API.

use crate::api::price::ONE_TIME_METERED;
use crate::domain::currency::Currency;
use crate::domain::ids::MeterId;
use crate::domain::product::{
    NewPrice, PriceKind, Product, RecurringInterval, UnitAmount, UnitAmountProblem,
    UNIT_AMOUNT_DECIMALS, UNIT_AMOUNT_DIGITS, UNIT_AMOUNT_WHOLE_DIGITS,
};
use crate::domain::tax_settings::TaxBehaviorOption;
use crate::error::Invalid;
use crate::field;

use super::super::Typed;
use super::ProductForm;

/// The API's message for a unit amount that breaks a rule of `Decimal(gt=0,
/// max_digits=17, decimal_places=12)`.
fn unit_amount_message(problem: UnitAmountProblem) -> (String, &'static str) {
    match problem {
        UnitAmountProblem::Parsing => ("Input should be a valid decimal".into(), "decimal_parsing"),
        UnitAmountProblem::MaxDigits => (
            format!("Decimal input should have no more than {UNIT_AMOUNT_DIGITS} digits in total"),
            "decimal_max_digits",
        ),
        UnitAmountProblem::MaxPlaces => (
            format!("Decimal input should have no more than {UNIT_AMOUNT_DECIMALS} decimal places"),
            "decimal_max_places",
        ),
        UnitAmountProblem::WholeDigits => (
            format!(
                "Decimal input should have no more than {UNIT_AMOUNT_WHOLE_DIGITS} digits before \
                 the decimal point"
            ),
            "decimal_whole_digits",
        ),
        UnitAmountProblem::NotPositive => ("Input should be greater than 0".into(), "greater_than"),
    }
}

impl ProductForm {
    /// Whether the form asks for a metered price.
    pub fn has_metered(&self) -> bool {
        !self.metered_meter_id.trim().is_empty()
    }

    /// The metered prices of the form in `currency`, one per billing period of
    /// `intervals`, numbered from `at`; none when no meter is chosen. `Err` when a field
    /// does not read (the problem is in `typed`).
    pub(super) fn metered_prices(
        &self,
        typed: &mut Typed,
        intervals: &[Option<RecurringInterval>],
        (currency, at): (Currency, usize),
        tax_behavior: Option<TaxBehaviorOption>,
    ) -> Result<Vec<NewPrice>, ()> {
        if !self.has_metered() {
            return Ok(Vec::new());
        }
        let raw = self.metered_meter_id.trim();
        let meter = raw.parse::<uuid::Uuid>().map(MeterId).map_err(|_| {
            typed.push(
                Invalid::new(
                    field!["prices", at, "meter_id"],
                    "Choose a meter from the list",
                    raw,
                )
                .kind("uuid_parsing"),
            );
        });
        let text = self.metered_unit_amount.trim();
        let unit_amount = if text.is_empty() {
            typed.push(
                Invalid::new(
                    field!["prices", at, "unit_amount"],
                    "Field required",
                    None::<&str>,
                )
                .kind("missing"),
            );
            Err(())
        } else {
            UnitAmount::parse(text).map_err(|problem| {
                let (msg, kind) = unit_amount_message(problem);
                typed.push(Invalid::new(field!["prices", at, "unit_amount"], msg, text).kind(kind));
            })
        };
        let cap = match self.metered_cap.trim() {
            "" => Ok(None),
            cap => match typed.amount(cap, currency, "Cap") {
                Some(c) if (0..=i64::from(i32::MAX)).contains(&c) => Ok(Some(c)),
                Some(c) => {
                    typed.push(
                        Invalid::new(
                            field!["prices", at, "cap_amount"],
                            format!("Input should be between 0 and {}", i32::MAX),
                            c.to_string(),
                        )
                        .kind("less_than_equal"),
                    );
                    Err(())
                }
                None => Err(()),
            },
        };
        let (meter_id, unit_amount, cap_amount) = (meter?, unit_amount?, cap?);
        let mut out = Vec::new();
        for interval in intervals {
            let Some(interval) = *interval else {
                typed.push(
                    Invalid::new(
                        field!["prices", at, "amount_type"],
                        ONE_TIME_METERED,
                        "metered_unit",
                    )
                    .kind("value_error"),
                );
                return Err(());
            };
            out.push(NewPrice::new(
                PriceKind::RecurringMeteredUnit {
                    interval,
                    currency: currency.to_string(),
                    meter_id,
                    unit_amount,
                    cap_amount,
                },
                currency,
                tax_behavior,
            ));
        }
        Ok(out)
    }

    /// The metered fields of a product's first metered price on sale (kept when its
    /// prices are replaced from the form).
    pub(super) fn with_metered_of(mut self, p: &Product) -> Self {
        let metered = p
            .prices
            .iter()
            .filter(|pr| !pr.is_archived)
            .find_map(|pr| match &pr.kind {
                PriceKind::RecurringMeteredUnit {
                    currency,
                    meter_id,
                    unit_amount,
                    cap_amount,
                    ..
                } => Some((currency, meter_id, unit_amount, cap_amount)),
                _ => None,
            });
        if let Some((currency, meter_id, unit_amount, cap_amount)) = metered {
            self.metered_meter_id = meter_id.0.to_string();
            self.metered_unit_amount = unit_amount.to_string();
            self.metered_cap = match (cap_amount, Currency::from_code(currency)) {
                (Some(c), Some(cur)) => cur.major(*c),
                (Some(c), None) => c.to_string(),
                (None, _) => String::new(),
            };
        }
        self
    }
}
