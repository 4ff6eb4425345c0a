//! The checkout session's state machine, as types: its states ([`Checkout`] and its
//! [`CheckoutStatus`]), the commands it takes ([`NewCheckout`], [`Changes`] with a
//! [`ConfirmContext`], a [`Settlement`] of an [`Attempt`]), why it refuses them
//! ([`CheckoutError`], [`Issue`]), and what a state says about itself (its status as seen
//! now, the payment attempt it is at). How a command is decided is in `decide.rs`.
//!
//! Statuses: `open` → `confirmed` (confirm) → `succeeded` (payment approved, records
//! created) or back to `open` (payment declined at once, as Polar ignores such failures);
//! `confirmed` → `failed` (payment failed later); `open` → `expired` (past `expires_at`,
//! seen on every read and write, persisted by a sweep).

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
use crate::domain::product::{Price, Trial};
use crate::tax::{TaxBehavior, TaxBreakdown, TaxIdStatus};

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

impl AppliedDiscount {
    /// `d` as a checkout in `currency` applies it; `None` when it has no amount in that
    /// currency (a fixed discount: see [`Discount::kind_in`]).
    pub fn in_currency(d: &Discount, currency: crate::domain::currency::Currency) -> Option<Self> {
        Some(AppliedDiscount {
            id: d.id,
            name: d.name.clone(),
            code: d.code.clone(),
            kind: d.kind_in(currency)?,
            duration: d.duration,
        })
    }
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
    // Format version 2 (Polar's `CheckoutProductsCreate` and the 2026 checkout fields).
    /// The products the buyer may choose between, in the seller's order; the selected one
    /// (`product_id`) is always among them.
    pub products: Vec<ProductId>,
    /// The buyer must give a full billing address (line 1, postal code, city), not only
    /// the country.
    pub require_billing_address: bool,
    /// Whether a trial may apply (Tollgate's products have no trial, so none does).
    pub allow_trial: bool,
    /// The buyer's id in the seller's system, handed to the customer the checkout creates.
    pub external_customer_id: Option<String>,
    /// Where the page's back link leads.
    pub return_url: Option<String>,
    /// The payment method the buyer chose on the page (`card`).
    pub payment_method_type: Option<String>,
    // Format version 3 (`v2.rs` decodes version 2).
    /// The checkout's own trial (Polar's `trial_interval` and `trial_interval_count` on
    /// checkout create and update), instead of the product's.
    pub trial: Option<Trial>,
    /// The selected product's trial, as it was when selected.
    pub product_trial: Option<Trial>,
    /// When the trial the buyer gets ends, counted from the last change of the checkout
    /// (Polar's `trial_end`); `None`: no trial, the first period is paid now.
    pub trial_end: Option<DateTime<Utc>>,
    // Format version 4 (`v3.rs` decodes version 3).
    /// The seats bought at a seat-based price (`None` for any other price).
    pub seats: Option<u32>,
    // Format version 5 (`v4.rs` decodes version 4).
    /// The seller's bounds on the seats (Polar's `min_seats` and `max_seats` of checkout
    /// create): they narrow a seat-based price's own ([`Checkout::seat_range`]).
    pub min_seats: Option<u32>,
    pub max_seats: Option<u32>,
    // Format version 6 (`v5.rs` decodes version 5).
    /// Buying as a business (Polar's `is_business_customer`): a billing name and a full
    /// address are required, and a valid tax number of another state is reverse-charged.
    pub is_business_customer: bool,
    /// The business's name on the invoice (Polar's `customer_billing_name`).
    pub customer_billing_name: Option<String>,
    /// The behaviour of the quote applied (`None`: no quote yet, or a record from before
    /// tax behaviours, whose tax was added on top).
    pub tax_behavior: Option<TaxBehavior>,
    /// The applied quote's jurisdictions and rates (empty: no tax anywhere).
    pub tax_breakdown: Vec<TaxBreakdown>,
    /// How far the tax number was checked when the quote was made.
    pub tax_id_status: Option<TaxIdStatus>,
    /// The tax provider's id of the applied calculation (Stripe Tax `taxcalc_…`).
    pub tax_provider_ref: Option<String>,
    // Format version 7 (version 6 reads with none).
    /// Polar's `locale`: the language the buyer's pages and e-mails are in, a BCP 47 tag
    /// (`None`: the buyer's browser, then the organization's default, decide).
    pub locale: Option<String>,
}

/// Whether the hosted page asks for a line of the billing address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldMode {
    Required,
    Optional,
    Disabled,
}

/// How the hosted page asks for each line of the billing address
/// ([`Checkout::billing_address_fields`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BillingAddressFields {
    pub country: FieldMode,
    pub state: FieldMode,
    pub line1: FieldMode,
    pub line2: FieldMode,
    pub postal_code: FieldMode,
    pub city: FieldMode,
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
    /// The tax quote given was made for other amounts or another address than the
    /// checkout now has (it changed meanwhile): quote again and retry.
    TaxQuoteStale,
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
    /// The selected product's trial.
    pub product_trial: Option<Trial>,
    /// The seats to buy at a seat-based price (`None`: its fewest).
    pub seats: Option<u32>,
    /// Buying as a business, and its name on the invoice.
    pub is_business_customer: bool,
    pub customer_billing_name: Option<String>,
}

/// What the seller chose for a new checkout beyond its first product and price (format
/// version 2): [`CheckoutTerms::for_product`] is a checkout of one product, as
/// [`Checkout::create`] makes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckoutTerms {
    /// The products the buyer may choose between; the first product of the checkout is
    /// added in front when missing.
    pub products: Vec<ProductId>,
    pub require_billing_address: bool,
    pub allow_trial: bool,
    pub external_customer_id: Option<String>,
    pub return_url: Option<String>,
    /// The checkout's own trial, instead of the product's.
    pub trial: Option<Trial>,
    /// The seller's bounds on the seats, narrowing a seat-based price's own.
    pub min_seats: Option<u32>,
    pub max_seats: Option<u32>,
    /// Polar's `locale`: the buyer's language, a normalized BCP 47 tag.
    pub locale: Option<String>,
}

impl CheckoutTerms {
    /// One product, no full address required, trials allowed (Polar's defaults).
    pub fn for_product(product: ProductId) -> CheckoutTerms {
        CheckoutTerms {
            products: vec![product],
            require_billing_address: false,
            allow_trial: true,
            external_customer_id: None,
            return_url: None,
            trial: None,
            min_seats: None,
            max_seats: None,
            locale: None,
        }
    }
}

/// Field changes of an update or a confirm. `None`: leave as is; `Some(None)`: clear.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    /// Another product of the checkout's list, sold at `price` (which must be given with
    /// it, one of that product's prices).
    pub product: Option<ProductId>,
    pub price: Option<Price>,
    pub amount: Option<i64>,
    /// The seats to buy at the (new or current) seat-based price.
    pub seats: Option<u32>,
    pub customer_name: Option<Option<String>>,
    pub customer_email: Option<Option<String>>,
    pub customer_ip_address: Option<Option<String>>,
    pub customer_billing_address: Option<Option<Address>>,
    /// The raw tax id; validated here against the (new or current) country.
    pub customer_tax_id: Option<Option<String>>,
    pub is_business_customer: Option<bool>,
    pub customer_billing_name: Option<Option<String>>,
    pub custom_field_data: Option<CustomFieldData>,
    /// A discount to apply (`Some(Some)`) or remove (`Some(None)`), and the request field
    /// that named it (`discount_id` or `discount_code`), for error locations.
    pub discount: Option<(Option<AppliedDiscount>, &'static str)>,
    pub allow_discount_codes: Option<bool>,
    pub metadata: Option<Metadata>,
    pub customer_metadata: Option<Metadata>,
    pub success_url: Option<Option<String>>,
    pub embed_origin: Option<Option<String>>,
    pub require_billing_address: Option<bool>,
    pub allow_trial: Option<bool>,
    pub return_url: Option<Option<String>>,
    pub payment_method_type: Option<Option<String>>,
    /// The checkout's own trial: set (`Some(Some)`) or removed (`Some(None)`).
    pub trial: Option<Option<Trial>>,
    /// The trial of the product selected by `product` (given with it).
    pub product_trial: Option<Option<Trial>>,
    /// The checkout's currency (with `price`, a price in it; alone, for a free price, which
    /// names none).
    pub currency: Option<crate::domain::currency::Currency>,
    /// Polar's `locale`: a normalized BCP 47 tag, or none.
    pub locale: Option<Option<String>>,
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

/// How a confirmed checkout's payment ended.
#[derive(Debug, Clone)]
pub enum Settlement {
    Succeeded {
        intent: Option<String>,
        subscription: Option<SubscriptionId>,
    },
    /// Declined while confirming: the checkout is open again.
    Reopen,
    /// The payment is under way: stays confirmed, with the intent recorded.
    AwaitPayment {
        intent: String,
        status: String,
        client_secret: Option<String>,
    },
    Failed,
}

impl Checkout {
    /// The trial the buyer gets (Polar's `active_trial_interval`): the checkout's own, else
    /// the product's; none for a one-time price or when `allow_trial` is off.
    pub fn active_trial(&self) -> Option<Trial> {
        if !self.allow_trial || !self.price.kind.is_recurring() {
            return None;
        }
        self.trial.or(self.product_trial)
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

    /// The processor's intent this confirmed checkout waits on, if any.
    pub fn pending_intent(&self) -> Option<&str> {
        (self.status == CheckoutStatus::Confirmed)
            .then(|| self.payment_processor_metadata.get("intent_id"))
            .flatten()
            .map(String::as_str)
    }
}
