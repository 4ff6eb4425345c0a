//! The product form's prices in other currencies: one currency a line, with the amounts
//! the form's billing and price type need, in that currency's major units.
//!
//! | price type | line |
//! |---|---|
//! | fixed | `EUR 18.00` (monthly and yearly: `EUR 9.00 90.00`) |
//! | pay what you want | `EUR 1.00 50.00 5.00` (minimum, maximum, suggested; `-` for none) |
//! | free | `EUR` |
//! | per seat | `EUR 1-4 9.00, 5+ 7.00` (the tiers, separated by commas) |
//!
//! Each line becomes a copy of the form with those amounts, read by the same rules as
//! the form's own prices (Polar: every currency has the same types of prices).

use crate::domain::currency::Currency;
use crate::error::Invalid;
use crate::field;

use super::super::Typed;
use super::ProductForm;

/// The name the form's problems with these lines are reported under.
pub(super) const OTHER_PRICES: &str = "Prices in other currencies";

impl ProductForm {
    /// The lines of `other_prices`, each as its currency and a copy of the form holding
    /// that line's amounts; `None` when a line does not read (named by its number, in
    /// `typed`).
    pub(super) fn other_currencies(
        &self,
        typed: &mut Typed,
    ) -> Option<Vec<(Currency, ProductForm)>> {
        let mut out: Vec<(Currency, ProductForm)> = Vec::new();
        let mut ok = true;
        for (n, line) in self.other_prices.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            match self.line(n + 1, line) {
                Ok((currency, _)) if out.iter().any(|(c, _)| *c == currency) => {
                    typed.push(problem(
                        n + 1,
                        line,
                        &format!("{} is listed twice", currency.code().to_ascii_uppercase()),
                    ));
                    ok = false;
                }
                Ok(pair) => out.push(pair),
                Err(e) => {
                    typed.push(e);
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// Line `n`: its currency and the form with its amounts.
    fn line(&self, n: usize, line: &str) -> Result<(Currency, ProductForm), Invalid> {
        let (code, rest) = match line.split_once(char::is_whitespace) {
            Some((code, rest)) => (code, rest.trim()),
            None => (line, ""),
        };
        let Ok(currency) = Currency::parse(&code.to_ascii_lowercase()) else {
            return Err(problem(
                n,
                line,
                &format!("{code} is not a currency Tollgate sells in (a code like EUR or JPY)"),
            ));
        };
        let mut form = self.clone();
        form.other_prices = String::new();
        form.currency = currency.code().to_string();
        let words: Vec<&str> = rest.split_whitespace().collect();
        let amount_type = match self.amount_type.trim() {
            "" => "fixed",
            t => t,
        };
        let dash = |w: Option<&&str>| match w {
            None | Some(&"-") => String::new(),
            Some(w) => w.to_string(),
        };
        match amount_type {
            "free" if words.is_empty() => {}
            "free" => return Err(problem(n, line, "a free price takes no amount")),
            "fixed" => {
                let wanted = if self.billing.trim() == "month_year" {
                    2
                } else {
                    1
                };
                if words.len() != wanted {
                    let what = match wanted {
                        2 => "the monthly and the yearly price, like EUR 9.00 90.00",
                        _ => "one price, like EUR 18.00",
                    };
                    return Err(problem(n, line, &format!("write the currency and {what}")));
                }
                form.amount = words[0].to_string();
                form.yearly_amount = dash(words.get(1));
            }
            "custom" => {
                if words.len() > 3 {
                    return Err(problem(
                        n,
                        line,
                        "write the currency, then the minimum, maximum and suggested amounts \
                         (- for none), like EUR 1.00 50.00 5.00",
                    ));
                }
                form.minimum_amount = dash(words.first());
                form.maximum_amount = dash(words.get(1));
                form.preset_amount = dash(words.get(2));
            }
            "seat_based" => {
                if rest.is_empty() {
                    return Err(problem(
                        n,
                        line,
                        "write the currency, then the tiers, like EUR 1-4 9.00, 5+ 7.00",
                    ));
                }
                form.seat_tiers = rest
                    .split(',')
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join("\n");
            }
            // The form's own reading names a type that is not one.
            _ => {}
        }
        Ok((currency, form))
    }
}

fn problem(n: usize, line: &str, what: &str) -> Invalid {
    Invalid::new(field![OTHER_PRICES], format!("Line {n}: {what}"), line).kind("value_error")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(billing: &str, amount_type: &str, other: &str) -> ProductForm {
        ProductForm {
            billing: billing.into(),
            amount_type: amount_type.into(),
            other_prices: other.into(),
            ..ProductForm::default()
        }
    }

    #[test]
    fn each_line_holds_the_amounts_of_the_price_type() {
        let mut typed = Typed::default();
        let f = form("month_year", "fixed", "EUR 9.00 90.00\n\n jpy 1500 15000 ");
        let got = f.other_currencies(&mut typed).unwrap_or_default();
        assert!(typed.0.is_empty(), "{:?}", typed.0);
        let read: Vec<(Currency, String, String)> = got
            .iter()
            .map(|(c, f)| (*c, f.amount.clone(), f.yearly_amount.clone()))
            .collect();
        assert_eq!(
            read,
            vec![
                (Currency::EUR, "9.00".into(), "90.00".into()),
                (Currency::JPY, "1500".into(), "15000".into()),
            ]
        );
        let f = form("one_time", "custom", "EUR 1.00 - 5.00");
        let got = f.other_currencies(&mut typed).unwrap_or_default();
        assert_eq!(got[0].1.minimum_amount, "1.00");
        assert_eq!(got[0].1.maximum_amount, "");
        assert_eq!(got[0].1.preset_amount, "5.00");
        let f = form("month", "seat_based", "EUR 1-4 9.00, 5+ 7.00");
        let got = f.other_currencies(&mut typed).unwrap_or_default();
        assert_eq!(got[0].1.seat_tiers, "1-4 9.00\n5+ 7.00");
        let f = form("one_time", "free", "EUR\nGBP");
        assert_eq!(f.other_currencies(&mut typed).map(|v| v.len()), Some(2));
        assert!(typed.0.is_empty());
    }

    #[test]
    fn a_line_that_does_not_read_is_named_by_its_number() {
        for (billing, amount_type, other, said) in [
            (
                "one_time",
                "fixed",
                "XAU 10",
                "Line 1: XAU is not a currency",
            ),
            (
                "one_time",
                "fixed",
                "EUR",
                "Line 1: write the currency and one price",
            ),
            (
                "month_year",
                "fixed",
                "EUR 9.00",
                "the monthly and the yearly price",
            ),
            (
                "one_time",
                "fixed",
                "EUR 1\nEUR 2",
                "Line 2: EUR is listed twice",
            ),
            ("one_time", "free", "EUR 5", "a free price takes no amount"),
            (
                "one_time",
                "custom",
                "EUR 1 2 3 4",
                "minimum, maximum and suggested",
            ),
        ] {
            let mut typed = Typed::default();
            let f = form(billing, amount_type, other);
            assert!(f.other_currencies(&mut typed).is_none(), "{other}");
            assert!(typed.0[0].msg.contains(said), "{other}: {:?}", typed.0);
        }
    }
}
