//! What an order keeps of its tax and its buyer's billing identity (format version 5 of the
//! order record), and where its invoice stands.

use serde::{Deserialize, Serialize};

use super::customer::TaxId;
use super::tax_breakdown::{TaxBreakdown, TaxIdStatus};
use super::tax_settings::TaxBehavior;

/// The tax of an order as it was charged: the quote's behaviour and breakdown, and the
/// buyer's billing name and tax number (copied, so a later change of the customer does not
/// rewrite a sale).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderTax {
    /// Whether the price included the tax (the order's `amount` is the net either way).
    pub behavior: TaxBehavior,
    /// One line per jurisdiction and rate (empty: no tax, or an order from before).
    pub breakdown: Vec<TaxBreakdown>,
    /// The name to bill (a business's; `None`: the customer's name).
    pub billing_name: Option<String>,
    pub is_business: bool,
    pub tax_id: Option<TaxId>,
    pub tax_id_status: Option<TaxIdStatus>,
    /// The tax provider's calculation (Stripe Tax `taxcalc_…`) to record after payment.
    pub provider_ref: Option<String>,
}

/// Where an order's invoice stands.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum InvoiceState {
    /// No invoice asked for (every order from before invoices).
    #[default]
    None,
    /// An invoice is to be issued: the issuer numbers it.
    Due,
    /// Issued under `number`, the `seq`-th of its organization.
    Issued { number: String, seq: u64 },
}
