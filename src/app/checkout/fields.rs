//! Resolving the fields of checkout requests into domain values: amounts, addresses,
//! metadata, custom field data, discounts and the price a checkout is created for, with
//! every reference checked here; shared by the organizer and client endpoints and by
//! confirmation.

use tollgate_actors::checkout::{AppliedDiscount, Changes, Checkout};
use tollgate_storage::StorageError;

use crate::api::custom_field_data::CheckCustomFields;
use crate::app::access::can_access;
use crate::app::catalog::custom_fields::attached_custom_fields;
use crate::auth::Subject;
use crate::domain::custom_field::CustomFieldData;
use crate::domain::discount::{discount_by_code, discount_by_id, Discount};
use crate::domain::ids::{DiscountId, OrganizationId, PriceId, ProductId};
use crate::domain::product::{Price, Product};
use crate::error::{AppError, Given, Invalid};
use crate::field;
use crate::state::AppState;
use tollgate_actors::checkout::{ChangeCheckout, CheckoutTarget, CustomFieldInput};

use crate::app::views::product_of;

use super::currency;
use crate::domain::currency::Currency;
use crate::domain::product::AmountType;

// ---------------------------------------------------------------------------------------
// Resolving request fields into domain values (every reference checked here).

/// Polar's refusal of a discount without an amount in the checkout's currency: as if it
/// did not exist.
fn not_applicable(field: &'static str, given: &str) -> Invalid {
    let msg = match field {
        "discount_code" => "This discount code does not exist or is no longer available.",
        _ => "Discount does not exist.",
    };
    Invalid::new(field![field], msg, given)
}

async fn custom_fields_of(
    state: &AppState,
    product: &Product,
) -> Result<Vec<(crate::domain::custom_field::CustomField, bool)>, AppError> {
    Ok(
        attached_custom_fields(state, &product.attached_custom_fields)
            .await?
            .into_iter()
            .map(|(cf, a)| (cf, a.required))
            .collect(),
    )
}

/// The custom field data of a create command checked against the product's fields: what
/// is stored, or the fields that break them.
pub(super) async fn custom_field_data_for_create(
    state: &AppState,
    product: &Product,
    input: &CustomFieldInput,
) -> Result<Result<CustomFieldData, Vec<Invalid>>, AppError> {
    let fields = custom_fields_of(state, product).await?;
    Ok(input.check(&fields))
}

/// A discount given by id, if it is the organization's, applies to the product and is
/// redeemable now.
pub(super) async fn discount_for_checkout(
    state: &AppState,
    org: OrganizationId,
    product: ProductId,
    id: DiscountId,
) -> Result<Option<Discount>, StorageError> {
    Ok(discount_by_id(&state.store, id)
        .await?
        .map(|d| d.value)
        .filter(|d| {
            d.organization_id == org && d.applies_to(product) && d.is_redeemable(state.now())
        }))
}

/// A discount given by id on an update, else the field that names it.
async fn discount_for_update(
    state: &AppState,
    org: OrganizationId,
    product: ProductId,
    id: DiscountId,
) -> Result<Result<Discount, Invalid>, AppError> {
    let found = discount_for_checkout(state, org, product, id).await?;
    Ok(found.ok_or_else(|| Invalid::new(field!["discount_id"], "Discount does not exist.", id.0)))
}

async fn discount_for_code(
    state: &AppState,
    org: OrganizationId,
    product: ProductId,
    code: &str,
) -> Result<Result<Discount, Invalid>, AppError> {
    let found = discount_by_code(&state.store, org, code)
        .await?
        .map(|d| d.value)
        .filter(|d| d.applies_to(product) && d.is_redeemable(state.now()));
    Ok(found.ok_or_else(|| {
        Invalid::new(
            field!["discount_code"],
            "This discount code does not exist or is no longer available.",
            code,
        )
    }))
}

/// The products a checkout is created for (Polar's `CheckoutProductsCreate`; at least
/// one, unique: parsed so): each readable by the subject, not archived and with an active
/// price, all of one organization. The first one is selected, at its first active price.
pub(super) async fn products_for_create(
    state: &AppState,
    subject: Subject,
    ids: &[ProductId],
) -> Result<(Product, Price, Vec<ProductId>), AppError> {
    let mut invalid = Vec::new();
    let mut products = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let found = state.store.get::<Product>(&id.key()).await?;
        let problem = match accessible(state, subject, found).await? {
            None => Some("Product does not exist."),
            Some(p) if p.is_archived => Some("Product is archived."),
            Some(p) if p.first_active_price().is_none() => Some("Product has no active price."),
            Some(p) => {
                products.push(p);
                None
            }
        };
        if let Some(msg) = problem {
            invalid.push(Invalid::new(field!["products", i], msg, id.0));
        }
    }
    let organizations: std::collections::HashSet<_> =
        products.iter().map(|p| p.organization_id).collect();
    if organizations.len() > 1 {
        let list: Vec<String> = ids.iter().map(|id| id.0.to_string()).collect();
        invalid.push(Invalid::new(
            field!["products"],
            "Products must all belong to the same organization.",
            Given::of(&list),
        ));
    }
    if !invalid.is_empty() {
        return Err(AppError::Invalid(invalid));
    }
    let first = products
        .into_iter()
        .next()
        .ok_or_else(|| AppError::internal("no product left after validation"))?;
    let price = first
        .first_active_price()
        .cloned()
        .ok_or_else(|| AppError::internal("a validated product has no active price"))?;
    Ok((first, price, ids.to_vec()))
}

/// The product and price a checkout is created for, and the products it offers: a list of
/// products (the first one selected), a price or a product (its first active price),
/// readable by the subject, neither archived (reference 1.2 steps 1–2).
pub(super) async fn price_for_create(
    state: &AppState,
    subject: Subject,
    target: &CheckoutTarget,
) -> Result<(Product, Price, Vec<ProductId>), AppError> {
    match *target {
        CheckoutTarget::Products(ref ids) => products_for_create(state, subject, ids).await,
        CheckoutTarget::Price(price_id) => {
            let refused =
                |msg: &str| AppError::invalid(field!["product_price_id"], msg, price_id.0);
            let found = crate::domain::product::product_for_price(&state.store, price_id).await?;
            let product = accessible(state, subject, found)
                .await?
                .ok_or_else(|| refused("Price does not exist."))?;
            let price = product
                .price(price_id)
                .cloned()
                .ok_or_else(|| refused("Price does not exist."))?;
            if price.is_archived {
                return Err(refused("Price is archived."));
            }
            if product.is_archived {
                return Err(refused("Product is archived."));
            }
            let products = vec![product.id];
            Ok((product, price, products))
        }
        CheckoutTarget::Product(product_id) => {
            let refused = |msg: &str| AppError::invalid(field!["product_id"], msg, product_id.0);
            let found = state.store.get::<Product>(&product_id.key()).await?;
            let product = accessible(state, subject, found)
                .await?
                .ok_or_else(|| refused("Product does not exist."))?;
            if product.is_archived {
                return Err(refused("Product is archived."));
            }
            let price = product
                .first_active_price()
                .cloned()
                .ok_or_else(|| refused("Product has no active price."))?;
            let products = vec![product.id];
            Ok((product, price, products))
        }
    }
}

/// The changes a command asks for, resolved against the checkout's product and
/// organization. `public`: the buyer's command (discount by code only).
pub(super) async fn resolve_changes(
    state: &AppState,
    checkout: &Checkout,
    input: ChangeCheckout,
    public: bool,
) -> Result<Changes, AppError> {
    let mut invalid = Vec::new();
    let mut ch = input.changes;
    let current = product_of(state, checkout).await?;
    let current_currency = currency::of_checkout(checkout, &current);
    // Only the organizer names a currency (Polar's `CheckoutUpdate`, not the public one).
    let requested = input.currency.filter(|_| !public);
    let (product, price) = product_and_price(
        state,
        checkout,
        current,
        Selection {
            product_id: input.product_id,
            price_id: input.price_id,
            requested,
            current_currency,
        },
        &mut invalid,
    )
    .await?;
    let new_currency = price
        .as_ref()
        .map_or(current_currency, |p| product.currency_of(p));
    if price.is_some() {
        ch.currency = Some(new_currency);
    }
    let switched = product.id != checkout.product_id;
    if switched {
        ch.product = Some(product.id);
        ch.product_trial = Some(product.trial);
    }
    // An applied discount is checked again for another product (it must apply to it) or
    // another currency (a fixed discount needs an amount in it; Polar): removed when it no
    // longer applies, its amount in the new currency otherwise.
    if let (Some(applied), None) = (&checkout.discount, &input.discount_id) {
        if switched || new_currency != current_currency {
            let found = discount_by_id(&state.store, applied.id)
                .await?
                .map(|d| d.value)
                .filter(|d| d.applies_to(product.id));
            let fixed = price
                .as_ref()
                .is_some_and(|p| p.kind.amount_type() == AmountType::Fixed);
            match found.and_then(|d| AppliedDiscount::in_currency(&d, new_currency)) {
                None => ch.discount = Some((None, "discount_id")),
                Some(d) if new_currency != current_currency && fixed => {
                    ch.discount = Some((Some(d), "discount_id"))
                }
                Some(_) => {}
            }
        }
    }
    ch.price = price;
    if let Some(data) = &input.custom_field_data {
        match custom_field_data_for_create(state, &product, data).await? {
            Ok(d) => ch.custom_field_data = Some(d),
            Err(problems) => invalid.extend(problems),
        }
    }
    if public {
        // A code is ignored when the checkout does not allow codes (Polar).
        if checkout.allow_discount_codes {
            match input.discount_code {
                Some(Some(code)) => {
                    match discount_for_code(state, checkout.organization_id, product.id, &code)
                        .await?
                    {
                        Ok(d) => match AppliedDiscount::in_currency(&d, new_currency) {
                            Some(d) => ch.discount = Some((Some(d), "discount_code")),
                            None => invalid.push(not_applicable("discount_code", &code)),
                        },
                        Err(e) => invalid.push(e),
                    }
                }
                Some(None) => ch.discount = Some((None, "discount_code")),
                None => {}
            }
        }
    } else {
        match input.discount_id {
            Some(Some(id)) => {
                match discount_for_update(state, checkout.organization_id, product.id, id).await? {
                    Ok(d) => match AppliedDiscount::in_currency(&d, new_currency) {
                        Some(d) => ch.discount = Some((Some(d), "discount_id")),
                        None => invalid.push(not_applicable("discount_id", &id.0.to_string())),
                    },
                    Err(e) => invalid.push(e),
                }
            }
            Some(None) => ch.discount = Some((None, "discount_id")),
            None => {}
        }
    }
    if !invalid.is_empty() {
        return Err(AppError::Invalid(invalid));
    }
    Ok(ch)
}

/// What a change asks to sell: another product, another price, another currency.
struct Selection {
    product_id: Option<ProductId>,
    price_id: Option<PriceId>,
    /// The organizer's `currency`.
    requested: Option<Currency>,
    /// The checkout's currency before the change.
    current_currency: Currency,
}

/// The product a change sells and the price to select, if it changes: `product_id` must
/// be one of the checkout's products and not archived (then its first active price in the
/// currency asked for, else in the checkout's, else in the organization's default; or
/// `price_id`, which must be that product's); a `price_id` alone may be a price of any of
/// the checkout's products (selecting that product, in its currency); a `currency` alone
/// selects the product's first price in it. Problems go to `invalid` and leave the current
/// product.
async fn product_and_price(
    state: &AppState,
    checkout: &Checkout,
    current: Product,
    selection: Selection,
    invalid: &mut Vec<Invalid>,
) -> Result<(Product, Option<Price>), AppError> {
    let Selection {
        product_id,
        price_id,
        requested,
        current_currency,
    } = selection;
    let mut product = current;
    let mut switched = false;
    if let Some(id) = product_id.filter(|id| *id != checkout.product_id) {
        let listed = checkout.products.contains(&id);
        let found = match listed {
            true => state.store.get::<Product>(&id.key()).await?,
            false => None,
        };
        match found.map(|p| p.value) {
            None => invalid.push(Invalid::new(
                field!["product_id"],
                "Product is not available in this checkout.",
                id.0,
            )),
            Some(p) if p.is_archived => invalid.push(Invalid::new(
                field!["product_id"],
                "Product is archived.",
                id.0,
            )),
            Some(p) => {
                product = p;
                switched = true;
            }
        }
    }
    let Some(id) = price_id else {
        let wanted = requested.unwrap_or(current_currency);
        if !switched {
            // Another currency for the same product: its first price in it.
            let Some(c) = requested.filter(|c| *c != current_currency) else {
                return Ok((product, None));
            };
            return Ok(match product.first_active_price_in(c).cloned() {
                Some(price) => (product, Some(price)),
                None => {
                    invalid.push(Invalid::new(
                        field!["currency"],
                        currency::NOT_AVAILABLE,
                        c.code(),
                    ));
                    (product, None)
                }
            });
        }
        // Another product: in the same currency when it sells in it, else (unless a
        // currency was asked for) in the organization's default.
        let price = match product.first_active_price_in(wanted) {
            Some(p) => Some(p.clone()),
            None if requested.is_some() => {
                invalid.push(Invalid::new(
                    field!["currency"],
                    currency::NOT_AVAILABLE,
                    wanted.code(),
                ));
                return Ok((product, None));
            }
            None => {
                let default = crate::app::catalog::organizations::default_currency(
                    state,
                    checkout.organization_id,
                )
                .await?;
                product
                    .first_active_price_in(default)
                    .or_else(|| product.first_active_price())
                    .cloned()
            }
        };
        return Ok(match price {
            Some(price) => (product, Some(price)),
            None => {
                invalid.push(Invalid::new(
                    field!["product_id"],
                    "Product has no active price.",
                    product.id.0,
                ));
                (product, None)
            }
        });
    };
    let price_problem = |msg: &str| Invalid::new(field!["product_price_id"], msg, id.0);
    if let Some(p) = product.price(id) {
        if p.is_archived {
            invalid.push(price_problem("Price is archived."));
            return Ok((product, None));
        }
        let price = p.clone();
        return Ok((product, Some(price)));
    }
    // Another product's price: one of the checkout's other products (when no product was
    // named), or a price the checkout does not offer.
    let owner = crate::domain::product::product_for_price(&state.store, id)
        .await?
        .map(|p| p.value)
        .filter(|p| p.organization_id == checkout.organization_id);
    match owner {
        Some(other) if !switched && checkout.products.contains(&other.id) => {
            match other.price(id) {
                Some(p) if p.is_archived => invalid.push(price_problem("Price is archived.")),
                Some(_) if other.is_archived => invalid.push(price_problem("Product is archived.")),
                Some(p) => {
                    let price = p.clone();
                    return Ok((other, Some(price)));
                }
                None => invalid.push(price_problem("Price does not exist.")),
            }
        }
        Some(_) => invalid.push(price_problem("Price does not belong to the product.")),
        None => invalid.push(price_problem("Price does not exist.")),
    }
    Ok((product, None))
}

/// The product, if the subject may sell it (another organization's reads as missing). A
/// membership that cannot be read (the store unavailable) is that error, never "missing".
async fn accessible(
    state: &AppState,
    subject: Subject,
    found: Option<tollgate_storage::Stored<Product>>,
) -> Result<Option<Product>, AppError> {
    let Some(p) = found else { return Ok(None) };
    Ok(can_access(state, subject, p.value.organization_id)
        .await?
        .then_some(p.value))
}
