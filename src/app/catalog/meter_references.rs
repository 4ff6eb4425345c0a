//! What the catalog holds of meters: the meters metered prices and `meter_credit`
//! benefits name must be meters of their organization ([`meter_of`],
//! [`metered_price_refusals`]), and a meter they still reference can't be archived
//! ([`meter_references`], which the meters' use case asks).

use std::collections::{HashMap, HashSet};

use crate::domain::benefit::{Benefit, BenefitProperties, BenefitType, BENEFIT_OF_TYPE};
use crate::domain::currency::Currency;
use crate::domain::ids::{MeterId, OrganizationId};
use crate::domain::meter::Meter;
use crate::domain::product::{PriceKind, Product, PRODUCT_BY_CREATED};
use crate::error::{AppError, Invalid};
use crate::field;
use crate::state::AppState;

/// Polar's refusal of archiving a meter a metered price of an active product still bills.
pub const ATTACHED_TO_PRODUCTS: &str =
    "Cannot archive meter that is still attached to active products";
/// Polar's refusal of archiving a meter a (non-deleted) `meter_credit` benefit credits.
pub const REFERENCED_BY_BENEFITS: &str =
    "Cannot archive meter that is still referenced by active benefits";

/// Why `meter` can't be archived, if it can't: a non-archived metered price of a
/// non-archived product of its organization bills it, or a non-deleted `meter_credit`
/// benefit credits it (Polar's checks and messages, in its order). `None`: it may be.
///
/// Reads every product and every `meter_credit` benefit of the organization (the index
/// of each, then the records): the cost grows with the catalog, which is small next to
/// the events.
pub async fn meter_references(
    state: &AppState,
    meter: &Meter,
) -> Result<Option<&'static str>, AppError> {
    state.store.read_barrier().await?;
    let org = meter.organization_id;
    let ids = state
        .store
        .index_range(PRODUCT_BY_CREATED, &org.key(), &[], None)
        .await?;
    for chunk in ids.chunks(100) {
        let products = state.store.get_many::<Product>(chunk).await?;
        let attached = products.iter().any(|p| {
            !p.value.is_archived
                && p.value
                    .active_metered_prices()
                    .any(|price| price.kind.meter_id() == Some(meter.id))
        });
        if attached {
            return Ok(Some(ATTACHED_TO_PRODUCTS));
        }
    }
    let tenant = Benefit::type_tenant(org, BenefitType::MeterCredit);
    let ids = state
        .store
        .index_range(BENEFIT_OF_TYPE, &tenant, &[], None)
        .await?;
    for chunk in ids.chunks(100) {
        let benefits = state.store.get_many::<Benefit>(chunk).await?;
        let referenced = benefits.iter().any(|b| {
            b.value.deleted_at.is_none()
                && matches!(&b.value.properties,
                    BenefitProperties::MeterCredit(m) if m.meter_id == meter.id)
        });
        if referenced {
            return Ok(Some(REFERENCED_BY_BENEFITS));
        }
    }
    Ok(None)
}

/// Meter `id` if it is one of `org`'s (archived or not).
pub async fn meter_of(
    state: &AppState,
    org: OrganizationId,
    id: MeterId,
) -> Result<Option<Meter>, AppError> {
    Ok(state
        .store
        .get::<Meter>(&id.key())
        .await?
        .map(|m| m.value)
        .filter(|m| m.organization_id == org))
}

/// One price of a product's resulting price set: its index in the body's `prices`, its
/// currency, its kind, and whether the body adds it (a kept price's meter was checked
/// when it was added).
pub struct PriceAt<'a> {
    pub index: usize,
    pub currency: Currency,
    pub kind: &'a PriceKind,
    pub added: bool,
}

/// The refusals of the metered prices of a price set of `org`, in Polar's order: each
/// added one must name a meter of the organization that is not archived ("Meter does not
/// exist." at its `meter_id`); then, per currency, a meter may be billed by one price only
/// ("Meter is already used for another price." at the later one's `meter_id`).
pub async fn metered_price_refusals(
    state: &AppState,
    org: OrganizationId,
    prices: &[PriceAt<'_>],
) -> Result<Vec<Invalid>, AppError> {
    let mut invalid = Vec::new();
    let mut known: HashMap<MeterId, bool> = HashMap::new();
    for p in prices.iter().filter(|p| p.added) {
        let Some(meter_id) = p.kind.meter_id() else {
            continue;
        };
        let usable = match known.get(&meter_id) {
            Some(u) => *u,
            None => {
                let u = meter_of(state, org, meter_id)
                    .await?
                    .is_some_and(|m| !m.is_archived());
                known.insert(meter_id, u);
                u
            }
        };
        if !usable {
            invalid.push(Invalid::new(
                field!["prices", p.index, "meter_id"],
                "Meter does not exist.",
                meter_id.0,
            ));
        }
    }
    if !invalid.is_empty() {
        return Ok(invalid);
    }
    let mut seen: HashSet<(Currency, MeterId)> = HashSet::new();
    for p in prices {
        if let Some(meter_id) = p.kind.meter_id() {
            if !seen.insert((p.currency, meter_id)) {
                invalid.push(Invalid::new(
                    field!["prices", p.index, "meter_id"],
                    "Meter is already used for another price.",
                    meter_id.0,
                ));
            }
        }
    }
    Ok(invalid)
}
