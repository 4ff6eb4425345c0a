//! Parsing a checkout update or confirm body ([`CheckoutChanges`], from the organizer's
//! `CheckoutUpdate` or the buyer's `CheckoutUpdatePublic`/`CheckoutConfirm`) into the
//! command the application acts on ([`ChangeCheckout`]): every check that needs no store,
//! with the 422 and its locations as Polar gives them. What the body names (products,
//! prices, discounts, the product's custom fields) is checked by the use case.

use serde_json::Value;
use tollgate_actors::checkout::{ChangeCheckout, Changes, CustomFieldInput};

use super::create::{
    address_field, check_amount, check_billing_name, check_ip, currency_field, email_field,
    locale_field, metadata_field, optional_string, refuse, refuse_counts, seats_field,
    trial_fields,
};
use super::{CheckoutBuyerUpdate, CheckoutChanges, CheckoutTermsUpdate};
use super::{CheckoutUpdate, CheckoutUpdatePublic};
use crate::api::Maybe;
use crate::domain::ids::{DiscountId, PriceId, ProductId};
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::validate::Validator;

impl CheckoutUpdate {
    /// The organizer's command, or the 422 of its fields.
    pub fn into_command(self) -> Result<ChangeCheckout, ApiError> {
        CheckoutChanges::from(self).into_command(false)
    }
}

impl CheckoutUpdatePublic {
    /// The buyer's command, or the 422 of its fields.
    pub fn into_command(self) -> Result<ChangeCheckout, ApiError> {
        CheckoutChanges::from(self).into_command(true)
    }
}

impl CheckoutChanges {
    /// The command these fields ask for, or the 422 of their fields (in the order Polar
    /// lists them). `public`: the buyer's body (no organizer fields, discount by code).
    pub fn into_command(self, public: bool) -> Result<ChangeCheckout, ApiError> {
        let input = self;
        let mut v = Validator::new();
        let mut ch = Changes::default();
        if let Maybe::Value(a) = input.amount {
            if check_amount(&mut v, a) {
                ch.amount = Some(a);
            }
        }
        if let Some(name) = input.customer_name.into_update() {
            // The buyer's name becomes a customer's, which may reach a message header.
            if name
                .as_deref()
                .is_none_or(|n| v.header_safe(loc!["body", "customer_name"], n))
            {
                ch.customer_name = Some(optional_string(name));
            }
        }
        match input.customer_email {
            Maybe::Value(e) => {
                let e = e.trim().to_string();
                if e.is_empty() {
                    ch.customer_email = Some(None);
                } else if let Some(e) = email_field(&mut v, "customer_email", &e) {
                    ch.customer_email = Some(Some(e));
                }
            }
            Maybe::Null => ch.customer_email = Some(None),
            Maybe::Absent => {}
        }
        match input.customer_billing_address {
            Maybe::Value(a) if !a.is_null() => {
                if let Some(a) = address_field(&mut v, &a) {
                    ch.customer_billing_address = Some(Some(a));
                }
            }
            Maybe::Value(_) | Maybe::Null => ch.customer_billing_address = Some(None),
            Maybe::Absent => {}
        }
        if let Some(t) = input.customer_tax_id.into_update() {
            ch.customer_tax_id = Some(t);
        }
        let custom_field_data = match input.custom_field_data {
            Maybe::Value(data) => {
                let non_empty = data.as_object().is_some_and(|m| !m.is_empty());
                (non_empty || !data.is_object()).then(|| CustomFieldInput::new(data))
            }
            Maybe::Null | Maybe::Absent => None,
        };
        let mut discount_id = None;
        let mut discount_code = None;
        if public {
            discount_code = input.discount_code.into_update();
        } else {
            discount_id = input.discount_id.into_update().map(|d| d.map(DiscountId));
            if let Maybe::Value(a) = input.allow_discount_codes {
                ch.allow_discount_codes = Some(a);
            }
            if let Maybe::Value(m) = &input.metadata {
                ch.metadata = metadata_field(&mut v, "metadata", m);
            }
            if let Maybe::Value(m) = &input.customer_metadata {
                ch.customer_metadata = metadata_field(&mut v, "customer_metadata", m);
            }
            match input.customer_ip_address {
                Maybe::Value(ip) => {
                    if check_ip(&mut v, &ip) {
                        ch.customer_ip_address = Some(Some(ip));
                    }
                }
                Maybe::Null => ch.customer_ip_address = Some(None),
                Maybe::Absent => {}
            }
            match input.success_url {
                Maybe::Value(u) => {
                    if v.http_url(loc!["body", "success_url"], &u) {
                        ch.success_url = Some(Some(u));
                    }
                }
                Maybe::Null => ch.success_url = Some(None),
                Maybe::Absent => {}
            }
            if let Some(o) = input.embed_origin.into_update() {
                ch.embed_origin = Some(o);
            }
        }
        parse_2026_fields(&mut v, &mut ch, input.terms, input.buyer, public);
        v.finish()?;
        // The currency asked for: the use case decides the checkout's.
        let currency = ch.currency.take();
        Ok(ChangeCheckout {
            product_id: input.product_id.as_value().copied().map(ProductId),
            price_id: input.product_price_id.as_value().copied().map(PriceId),
            discount_id,
            discount_code,
            custom_field_data,
            currency,
            changes: ch,
        })
    }
}

// ---------------------------------------------------------------------------------------
// What Tollgate does not sell: a clear 422 naming the field, never a silent ignore.

/// The 2026 fields of an update or confirm body: the supported ones as changes, the
/// others refused. `public`: the buyer's body (`allow_trial` may only turn a trial off,
/// `payment_method_type` is the buyer's, the seller's terms are not in it).
fn parse_2026_fields(
    v: &mut Validator,
    ch: &mut Changes,
    terms: CheckoutTermsUpdate,
    buyer: CheckoutBuyerUpdate,
    public: bool,
) {
    refuse_counts(v, &[("units", buyer.units.as_value().copied())]);
    if let Some(n) = buyer.seats.as_value().copied() {
        ch.seats = seats_field(v, n);
    }
    match buyer.is_business_customer {
        Maybe::Value(b) => ch.is_business_customer = Some(b),
        Maybe::Null => ch.is_business_customer = Some(false),
        Maybe::Absent => {}
    }
    check_billing_name(
        v,
        buyer.customer_billing_name.as_value().map(String::as_str),
    );
    match buyer.customer_billing_name {
        Maybe::Value(n) => ch.customer_billing_name = Some(Some(n.trim().to_string())),
        Maybe::Null => ch.customer_billing_name = Some(None),
        Maybe::Absent => {}
    }
    // The buyer's language (organizer and buyer alike, as Polar's `CheckoutUpdateBase`).
    match &buyer.locale {
        Maybe::Value(l) => {
            if let Some(l) = locale_field(v, l) {
                ch.locale = Some(Some(l));
            }
        }
        Maybe::Null => ch.locale = Some(None),
        Maybe::Absent => {}
    }
    match (buyer.allow_trial, public) {
        (Maybe::Value(true), true) => v.push(FieldError::new(
            "literal_error",
            loc!["body", "allow_trial"],
            "Input should be False",
            Value::Bool(true),
        )),
        (Maybe::Value(allow), _) => ch.allow_trial = Some(allow),
        (Maybe::Null | Maybe::Absent, _) => {}
    }
    if public {
        match buyer.payment_method_type {
            Maybe::Value(m) if m.trim().is_empty() => ch.payment_method_type = Some(None),
            // What Stripe's Payment Element reports as the chosen method's `value.type`
            // (`card`, `ideal`, `sepa_debit`, `bancontact`, …).
            Maybe::Value(m) if is_payment_method_type(m.trim()) => {
                ch.payment_method_type = Some(Some(m.trim().to_string()))
            }
            Maybe::Value(m) => refuse(
                v,
                "payment_method_type",
                "Not a payment method type the checkout offers (such as card, ideal or sepa_debit).",
                Value::from(m),
            ),
            Maybe::Null => ch.payment_method_type = Some(None),
            Maybe::Absent => {}
        }
        return;
    }
    ch.currency = currency_field(v, terms.currency.as_value().map(String::as_str));
    let maybe_str = |m: &Maybe<String>| match m {
        Maybe::Absent => None,
        Maybe::Null => Some(None),
        Maybe::Value(s) => Some(Some(s.clone())),
    };
    let maybe_int = |m: &Maybe<i64>| match m {
        Maybe::Absent => None,
        Maybe::Null => Some(None),
        Maybe::Value(n) => Some(Some(*n)),
    };
    let interval = maybe_str(&terms.trial_interval);
    if let Some(trial) = trial_fields(
        v,
        interval.as_ref().map(|i| i.as_deref()),
        maybe_int(&terms.trial_interval_count),
    ) {
        ch.trial = Some(trial);
    }
    if let Maybe::Value(r) = terms.require_billing_address {
        ch.require_billing_address = Some(r);
    }
    match terms.return_url {
        Maybe::Value(u) => {
            if v.http_url(loc!["body", "return_url"], &u) {
                ch.return_url = Some(Some(u));
            }
        }
        Maybe::Null => ch.return_url = Some(None),
        Maybe::Absent => {}
    }
}

/// The payment method types a buyer can pick in Stripe's Payment Element, as its `change`
/// events report them (`value.type`): the online PaymentMethod types of the Stripe API
/// version Tollgate speaks (2024-06-20; in-person ones left out), and the wallets the
/// Element names on their own (`apple_pay`, `google_pay`).
const PAYMENT_METHOD_TYPES: &[&str] = &[
    "acss_debit",
    "affirm",
    "afterpay_clearpay",
    "alipay",
    "amazon_pay",
    "apple_pay",
    "au_becs_debit",
    "bacs_debit",
    "bancontact",
    "blik",
    "boleto",
    "card",
    "cashapp",
    "customer_balance",
    "eps",
    "fpx",
    "giropay",
    "google_pay",
    "grabpay",
    "ideal",
    "klarna",
    "konbini",
    "link",
    "mobilepay",
    "multibanco",
    "oxxo",
    "p24",
    "paynow",
    "paypal",
    "pix",
    "promptpay",
    "revolut_pay",
    "sepa_debit",
    "sofort",
    "swish",
    "twint",
    "us_bank_account",
    "wechat_pay",
    "zip",
];

/// Whether `s` is one of [`PAYMENT_METHOD_TYPES`].
pub(crate) fn is_payment_method_type(s: &str) -> bool {
    PAYMENT_METHOD_TYPES.contains(&s)
}

#[cfg(test)]
mod payment_method_type_tests {
    use super::{is_payment_method_type, PAYMENT_METHOD_TYPES};

    #[test]
    fn the_payment_element_s_types_are_accepted_and_nothing_else() {
        for ok in [
            "card",
            "ideal",
            "sepa_debit",
            "bancontact",
            "apple_pay",
            "p24",
        ] {
            assert!(is_payment_method_type(ok), "{ok}");
        }
        // In-person methods, types of later API versions, other spellings.
        for bad in [
            "",
            "card_present",
            "upi",
            "Card",
            "sepa-debit",
            "card ",
            "ideal;",
        ] {
            assert!(!is_payment_method_type(bad), "{bad:?}");
        }
        let mut sorted = PAYMENT_METHOD_TYPES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, PAYMENT_METHOD_TYPES, "sorted, once each");
    }
}
