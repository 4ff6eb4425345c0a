//! The currency a checkout is presented in (Polar's `_get_currencies`): an explicit
//! `currency`, else the currency of the country of the buyer's IP address (a GeoIP
//! lookup, when a database is configured), else the organization's default; the first of
//! these the product sells in. The billing-address country never picks it.

use crate::domain::currency::Currency;
use crate::domain::customer::Address;
use crate::domain::product::{Price, Product};
use crate::state::AppState;
use tollgate_actors::checkout::Checkout;

/// Polar's refusal of a currency the product has no prices in.
pub(super) const NOT_AVAILABLE: &str = "Product is not available in the specified currency.";

/// The currencies to try, in order: only `explicit` when given; else the currency of
/// `ip_country` (when it has one), then the organization's `default`.
pub(super) fn preferred(
    explicit: Option<Currency>,
    ip_country: Option<&str>,
    default: Currency,
) -> Vec<Currency> {
    if let Some(c) = explicit {
        return vec![c];
    }
    let mut out: Vec<Currency> = ip_country
        .and_then(Currency::for_country)
        .into_iter()
        .collect();
    if !out.contains(&default) {
        out.push(default);
    }
    out
}

/// The currency `product` is sold in for `preferred` and its first price in it (what a
/// checkout by product sells); `None` when it sells in none of them.
pub(super) fn price_in(product: &Product, preferred: &[Currency]) -> Option<(Currency, Price)> {
    let currency = product.pick_currency(preferred)?;
    let price = product.first_active_price_in(currency)?.clone();
    Some((currency, price))
}

/// The country of an IP address as text, from the configured GeoIP database.
pub(super) fn ip_country(state: &AppState, ip: Option<&str>) -> Option<String> {
    ip.and_then(|ip| state.geoip.country_of(ip))
}

/// The currency checkout `c` is in: its own, else (a record from before currencies, of a
/// free price) its price's in `product`.
pub(super) fn of_checkout(c: &Checkout, product: &Product) -> Currency {
    c.currency
        .as_deref()
        .and_then(Currency::from_code)
        .unwrap_or_else(|| product.currency_of(&c.price))
}

/// The billing address the IP country pre-fills when none is set (Polar: the country only).
pub(super) fn prefilled_address(country: Option<String>) -> Option<Address> {
    country.map(|country| Address {
        line1: None,
        line2: None,
        postal_code: None,
        city: None,
        state: None,
        country,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_currency_is_the_only_one_tried() {
        assert_eq!(
            preferred(Some(Currency::JPY), Some("FR"), Currency::USD),
            vec![Currency::JPY]
        );
    }

    #[test]
    fn the_ip_country_then_the_default() {
        assert_eq!(
            preferred(None, Some("FR"), Currency::USD),
            vec![Currency::EUR, Currency::USD]
        );
        assert_eq!(
            preferred(None, Some("jp"), Currency::EUR),
            vec![Currency::JPY, Currency::EUR]
        );
        // The country's currency is the default: tried once.
        assert_eq!(
            preferred(None, Some("DE"), Currency::EUR),
            vec![Currency::EUR]
        );
        // No country, or one without a presentment currency: the default.
        assert_eq!(preferred(None, None, Currency::EUR), vec![Currency::EUR]);
        assert_eq!(
            preferred(None, Some("ZZ"), Currency::USD),
            vec![Currency::USD]
        );
    }

    #[test]
    fn a_prefilled_address_has_the_country_only() {
        let a = prefilled_address(Some("FR".into())).unwrap();
        assert_eq!(a.country, "FR");
        assert!(a.line1.is_none() && a.city.is_none() && a.postal_code.is_none());
        assert!(prefilled_address(None).is_none());
    }
}
