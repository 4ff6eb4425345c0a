//! Tax on a checkout's subtotal, behind a trait so a real tax service can replace it.

/// Computes tax in the currency's minor unit.
pub trait TaxCalculator: Send + Sync + 'static {
    fn tax(&self, subtotal: i64, currency: &str, country: Option<&str>) -> i64;
}

/// The default: no tax (`tax_amount: 0`).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoTax;

impl TaxCalculator for NoTax {
    fn tax(&self, _subtotal: i64, _currency: &str, _country: Option<&str>) -> i64 {
        0
    }
}
