//! Asking for tax: the one place a [`TaxRequest`] is completed with what its aggregate does
//! not know (the seller's settings, the behaviour its prices resolve to) and sent to the
//! service of the seller's provider (`none`: no tax, `builtin`, `stripe`).

use tollgate_actors::domain::tax_settings::{TaxBehavior, TaxBehaviorOption, TaxProvider};
use tollgate_actors::tax::{TaxQuote, TaxRequest};

use crate::domain::ids::OrganizationId;
use crate::domain::organization::Organization;
use crate::error::{AppError, Code, Given, Invalid};
use crate::payments::TaxServices;
use crate::state::AppState;

/// The behaviour a sale of `org` at a price of `price_option` resolves to for a buyer in
/// `country`: the price's own option, else the organization's default; an organization
/// that collects no tax keeps prices exclusive (nothing is added).
pub fn behavior_of(
    org: &Organization,
    price_option: Option<TaxBehaviorOption>,
    country: Option<&str>,
) -> TaxBehavior {
    if org.tax.provider == TaxProvider::None {
        return TaxBehavior::Exclusive;
    }
    price_option
        .unwrap_or(org.default_tax_behavior)
        .resolve(country)
}

/// `request` completed for a sale of `org` (its seller settings and the behaviour), as the
/// quote's service will get it.
pub fn complete(
    org: &Organization,
    price_option: Option<TaxBehaviorOption>,
    mut request: TaxRequest,
) -> TaxRequest {
    let country = request.buyer.address.as_ref().map(|a| a.country.clone());
    request.behavior = behavior_of(org, price_option, country.as_deref());
    request.seller = org.tax.seller();
    request
}

/// The quote of `request` for a sale of `org`: zero for an organization without tax, else
/// its provider's answer. A provider that does not answer refuses the step before anything
/// is charged, with the cause logged: Stripe Tax with `TaxCalculationFailed` (502), the
/// others (and Stripe Tax on a server without it) as unavailable (503).
pub async fn quote_for(
    state: &AppState,
    org: &Organization,
    price_option: Option<TaxBehaviorOption>,
    request: TaxRequest,
) -> Result<TaxQuote, AppError> {
    quote_with(&state.tax, org, price_option, request).await
}

/// The message of a Stripe Tax failure: the buyer can try again, nothing was taken.
pub const CALCULATION_FAILED: &str =
    "Tax could not be calculated: the tax provider did not answer. Nothing was charged.";

/// [`quote_for`] with the services `tax`.
pub async fn quote_with(
    tax: &TaxServices,
    org: &Organization,
    price_option: Option<TaxBehaviorOption>,
    request: TaxRequest,
) -> Result<TaxQuote, AppError> {
    let request = complete(org, price_option, request);
    let service = tax.for_provider(org.tax.provider).map_err(|e| {
        tracing::warn!(organization = %org.id, error = %e, "tax provider unavailable");
        AppError::unavailable()
    })?;
    let Some(service) = service else {
        return Ok(TaxQuote::zero(request));
    };
    let address = request.buyer.address.clone();
    crate::payments::tax::quote(service, request)
        .await
        .map_err(|e| {
            if let Some(said) = e.location {
                tracing::info!(organization = %org.id, error = %e.message, "tax: the buyer's address cannot be placed");
                return location_refusal(said, Given::of(&address));
            }
            tracing::warn!(organization = %org.id, provider = ?org.tax.provider, error = %e, "tax quote failed");
            match org.tax.provider {
                TaxProvider::Stripe => AppError::new(Code::TaxCalculationFailed, CALCULATION_FAILED),
                TaxProvider::Builtin | TaxProvider::None => AppError::unavailable(),
            }
        })
}

/// Where a quote's location refusal points: the checkout's billing address.
const LOCATION_FIELD: &str = "customer_billing_address";

/// The provider could not place the buyer from their address (Stripe's
/// `customer_tax_location_invalid`): Polar's 422 at `customer_billing_address` with the
/// provider's words, the buyer's to correct.
fn location_refusal(said: String, address: Given) -> AppError {
    AppError::Invalid(vec![Invalid::new(
        crate::field![LOCATION_FIELD],
        said,
        address,
    )])
}

/// Whether `e` is [`location_refusal`]'s: a checkout being filled in goes on without a
/// quote (Polar's create and update), its confirmation is refused with it.
pub fn is_location_refusal(e: &AppError) -> bool {
    matches!(e, AppError::Invalid(v) if v.len() == 1 && v[0].path == crate::field![LOCATION_FIELD])
}

/// [`quote_for`] of the organization `org` as stored.
pub async fn quote(
    state: &AppState,
    org: OrganizationId,
    price_option: Option<TaxBehaviorOption>,
    request: TaxRequest,
) -> Result<TaxQuote, AppError> {
    let Some(org) = state.store.get::<Organization>(&org.key()).await? else {
        // An organization deleted under a sale: no tax, as before settings existed (the
        // request's defaults: no seller settings, exclusive).
        return Ok(TaxQuote::zero(request));
    };
    quote_for(state, &org.value, price_option, request).await
}

#[cfg(test)]
#[path = "tax_tests.rs"]
mod tests;
