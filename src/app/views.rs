//! Every typed view the API, the webhooks and the pages render, built from records: the
//! wire shapes of `crate::api` filled with what they embed (a product's benefits and
//! custom fields, an order's customer, product and discount, a key's customer...).
//! Views read the store; they never write and never check access (callers did).

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use tollgate_actors::checkout::{Checkout, CheckoutStatus};
use tollgate_actors::license_key::LicenseKey;
use tollgate_actors::subscription::Subscription;

use crate::api::checkout::{
    CheckoutContext, CheckoutPublic, CheckoutPublicConfirmed, CheckoutView,
};
use crate::api::custom_field::AttachedCustomFieldView;
use crate::api::discount::DiscountView;
use crate::api::license_key::LicenseKeyRead;
use crate::api::order::{OrderRefs, OrderView};
use crate::api::organization::OrganizationView;
use crate::api::product::{
    self as view, CheckoutProduct, ProductPrice, ProductPriceRecurring, ProductView,
};
use crate::api::subscription::SubscriptionView;
use crate::api::{ListResource, Pagination};
use crate::app::paging::ListParams;
use crate::domain::benefit::Benefit;
use crate::domain::custom_field::CustomField;
use crate::domain::customer::Customer;
use crate::domain::discount::{discount_products, Discount};
use crate::domain::ids::CustomerId;
use crate::domain::meter::Meter;
use crate::domain::order::Order;
use crate::domain::organization::Organization;
use crate::domain::product::Product;
use crate::error::AppError;
use crate::state::AppState;

/// The benefit records a product refers to (deleted ones included; renderers skip them).
pub async fn product_benefits(state: &AppState, p: &Product) -> Result<Vec<Benefit>, AppError> {
    let keys: Vec<Vec<u8>> = p.benefit_ids.iter().map(|b| b.key()).collect();
    Ok(state
        .store
        .get_many::<Benefit>(&keys)
        .await?
        .into_iter()
        .map(|s| s.value)
        .collect())
}

/// The meters of a product's metered prices (archived prices included), which its
/// renderings show.
pub async fn product_meters(state: &AppState, p: &Product) -> Result<Vec<Meter>, AppError> {
    let mut keys: Vec<Vec<u8>> = p
        .prices
        .iter()
        .filter_map(|price| price.kind.meter_id())
        .map(|m| m.key())
        .collect();
    keys.dedup();
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    Ok(state
        .store
        .get_many::<Meter>(&keys)
        .await?
        .into_iter()
        .map(|s| s.value)
        .collect())
}

/// The custom field records a product refers to.
pub async fn product_custom_fields(
    state: &AppState,
    p: &Product,
) -> Result<Vec<CustomField>, AppError> {
    let keys: Vec<Vec<u8>> = p
        .attached_custom_fields
        .iter()
        .map(|a| a.custom_field_id.key())
        .collect();
    Ok(state
        .store
        .get_many::<CustomField>(&keys)
        .await?
        .into_iter()
        .map(|s| s.value)
        .collect())
}

/// The full `Product` (with metadata, prices, benefits, medias and attached custom fields),
/// as products and subscriptions render it.
pub async fn product_view(state: &AppState, p: &Product) -> Result<ProductView, AppError> {
    let benefits = product_benefits(state, p).await?;
    let fields = product_custom_fields(state, p).await?;
    let meters = product_meters(state, p).await?;
    Ok(ProductView::new(p, &benefits, &fields, &meters))
}

/// `CheckoutProduct`: prices, benefits (`BenefitBase`) and medias, no metadata.
pub async fn checkout_product_view(
    state: &AppState,
    p: &Product,
) -> Result<CheckoutProduct, AppError> {
    let benefits = product_benefits(state, p).await?;
    let meters = product_meters(state, p).await?;
    Ok(CheckoutProduct::new(p, &benefits, &meters))
}

/// `attached_custom_fields` of a product, as checkouts render them.
pub async fn attached_custom_fields_view(
    state: &AppState,
    p: &Product,
) -> Result<Vec<AttachedCustomFieldView>, AppError> {
    let fields = product_custom_fields(state, p).await?;
    Ok(view::attached_custom_fields(p, &fields))
}

fn missing(what: &str, id: impl std::fmt::Display) -> AppError {
    AppError::internal(format!("{what} {id} is missing"))
}

/// The `Order` rendering with the records it embeds.
pub async fn order_view(state: &AppState, o: &Order) -> Result<OrderView, AppError> {
    let customer = state
        .store
        .get::<Customer>(&o.customer_id.key())
        .await?
        .ok_or_else(|| missing("customer", o.customer_id))?
        .value;
    let product = state
        .store
        .get::<Product>(&o.product_id.key())
        .await?
        .ok_or_else(|| missing("product", o.product_id))?
        .value;
    let price = product
        .price(o.product_price_id)
        .ok_or_else(|| missing("price", o.product_price_id))?;
    let discount = match o.discount_id {
        Some(id) => state
            .store
            .get::<Discount>(&id.key())
            .await?
            .map(|d| d.value),
        None => None,
    };
    let subscription = match o.subscription_id {
        Some(id) => state
            .store
            .get::<Subscription>(&id.key())
            .await?
            .map(|s| s.value),
        None => None,
    };
    Ok(OrderView::new(
        o,
        &OrderRefs {
            meters: &product_meters(state, &product).await?,
            customer: &customer,
            product: &product,
            price,
            discount: discount.as_ref(),
            subscription: subscription.as_ref(),
        },
    ))
}

/// The `Subscription` rendering with the records it embeds.
pub async fn subscription_view(
    state: &AppState,
    s: &Subscription,
) -> Result<SubscriptionView, AppError> {
    let customer = state
        .store
        .get::<Customer>(&s.customer_id.key())
        .await?
        .ok_or_else(|| missing("customer", s.customer_id))?
        .value;
    let product = state
        .store
        .get::<Product>(&s.product_id.key())
        .await?
        .ok_or_else(|| missing("product", s.product_id))?
        .value;
    let price = product
        .price(s.price_id)
        .ok_or_else(|| missing("price", s.price_id))?;
    // Subscriptions are only ever made of recurring prices.
    let meters = product_meters(state, &product).await?;
    let price = ProductPriceRecurring::new(&product, price, &meters).ok_or_else(|| {
        AppError::internal(format!(
            "subscription {}: price {} is not recurring",
            s.id, s.price_id
        ))
    })?;
    let discount = match s.discount_id {
        Some(id) => state
            .store
            .get::<Discount>(&id.key())
            .await?
            .map(|d| d.value),
        None => None,
    };
    let usage =
        crate::app::usage_billing::running_usage(state, s, &customer, &product, &meters).await?;
    Ok(SubscriptionView::new(
        s,
        &customer,
        product_view(state, &product).await?,
        price.clone(),
        discount.as_ref(),
    )
    .with_usage(subscription_prices(s, &product, price, &meters), usage))
}

/// [`subscription_view`] of a page of subscriptions: each distinct customer, product
/// (with its rendering and meters) and discount read once, in one batch per kind; the
/// running usage is read per metered subscription (its customer's windows).
pub async fn subscription_views(
    state: &AppState,
    items: &[Subscription],
) -> Result<Vec<SubscriptionView>, AppError> {
    fn keys<I: Iterator<Item = Vec<u8>>>(ids: I) -> Vec<Vec<u8>> {
        let mut k: Vec<Vec<u8>> = ids.collect();
        k.sort();
        k.dedup();
        k
    }
    let customers: HashMap<CustomerId, Customer> = state
        .store
        .get_many::<Customer>(&keys(items.iter().map(|s| s.customer_id.key())))
        .await?
        .into_iter()
        .map(|c| (c.value.id, c.value))
        .collect();
    let discount_keys = keys(items.iter().filter_map(|s| s.discount_id.map(|d| d.key())));
    let discounts: HashMap<_, Discount> = if discount_keys.is_empty() {
        HashMap::new()
    } else {
        state
            .store
            .get_many::<Discount>(&discount_keys)
            .await?
            .into_iter()
            .map(|d| (d.value.id, d.value))
            .collect()
    };
    let mut products: HashMap<_, (Product, ProductView, Vec<Meter>)> = HashMap::new();
    for p in state
        .store
        .get_many::<Product>(&keys(items.iter().map(|s| s.product_id.key())))
        .await?
    {
        let p = p.value;
        let meters = product_meters(state, &p).await?;
        let view = product_view(state, &p).await?;
        products.insert(p.id, (p, view, meters));
    }
    let mut out = Vec::with_capacity(items.len());
    for s in items {
        let customer = customers
            .get(&s.customer_id)
            .ok_or_else(|| missing("customer", s.customer_id))?;
        let (product, view, meters) = products
            .get(&s.product_id)
            .ok_or_else(|| missing("product", s.product_id))?;
        let price = product
            .price(s.price_id)
            .and_then(|p| ProductPriceRecurring::new(product, p, meters))
            .ok_or_else(|| {
                AppError::internal(format!(
                    "subscription {}: price {} is not recurring",
                    s.id, s.price_id
                ))
            })?;
        let usage =
            crate::app::usage_billing::running_usage(state, s, customer, product, meters).await?;
        let discount = s.discount_id.and_then(|d| discounts.get(&d));
        out.push(
            SubscriptionView::new(s, customer, view.clone(), price.clone(), discount)
                .with_usage(subscription_prices(s, product, price, meters), usage),
        );
    }
    Ok(out)
}

/// The prices of subscription `s` as Polar lists them: its own price (`price`, rendered),
/// then the metered prices of its product in its currency (those its usage is billed at).
pub fn subscription_prices(
    s: &Subscription,
    product: &Product,
    price: ProductPriceRecurring,
    meters: &[Meter],
) -> Vec<ProductPriceRecurring> {
    let (_, metered) = crate::app::usage_billing::metered_prices(s, product);
    let mut out = vec![price];
    out.extend(
        metered
            .iter()
            .filter(|p| p.id != s.price_id)
            .filter_map(|p| ProductPriceRecurring::new(product, p, meters)),
    );
    out
}

/// The discount with the products it is restricted to, as the API renders it (a fixed
/// discount's `amount` in its organization's default currency when it has one in it).
pub async fn discount_view(
    state: &AppState,
    discount: &Discount,
) -> Result<DiscountView, AppError> {
    let products = discount_products(&state.store, discount).await?;
    let default = state
        .store
        .get::<Organization>(&discount.organization_id.key())
        .await?
        .map(|o| o.value.default_presentment_currency);
    Ok(DiscountView::new(discount, &products, default))
}

/// The customer a key belongs to (keys always have one; customers are only soft-deleted).
pub async fn key_customer(state: &AppState, key: &LicenseKey) -> Result<Customer, AppError> {
    state
        .store
        .get::<Customer>(&key.customer_id.key())
        .await?
        .map(|c| c.value)
        .ok_or_else(|| {
            AppError::internal(format!(
                "license key {}: customer {} is missing",
                key.id, key.customer_id
            ))
        })
}

/// Each key with its customer, reading each distinct customer once.
pub async fn with_customers(
    state: &AppState,
    keys: Vec<LicenseKey>,
) -> Result<Vec<(LicenseKey, Customer)>, AppError> {
    let mut customers: HashMap<CustomerId, Customer> = HashMap::new();
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        let customer = match customers.entry(key.customer_id) {
            Entry::Occupied(e) => e.get().clone(),
            Entry::Vacant(e) => e.insert(key_customer(state, &key).await?).clone(),
        };
        out.push((key, customer));
    }
    Ok(out)
}

/// Renders a page of keys as `{items, pagination}`, reading each distinct customer once.
pub async fn license_keys_page(
    state: &AppState,
    keys: Vec<LicenseKey>,
    total: u64,
    params: ListParams,
) -> Result<ListResource<LicenseKeyRead>, AppError> {
    let items = with_customers(state, keys)
        .await?
        .iter()
        .map(|(key, customer)| LicenseKeyRead::new(key, customer))
        .collect();
    Ok(ListResource {
        items,
        pagination: Pagination::new(total, params.limit),
    })
}

pub async fn product_of(state: &AppState, c: &Checkout) -> Result<Product, AppError> {
    state
        .store
        .get::<Product>(&c.product_id.key())
        .await?
        .map(|p| p.value)
        .ok_or_else(|| AppError::internal("a checkout's product is missing"))
}

/// The products of a checkout in its order (the selected one among them), as they are now.
pub async fn checkout_products(state: &AppState, c: &Checkout) -> Result<Vec<Product>, AppError> {
    let keys: Vec<Vec<u8>> = c.products.iter().map(|p| p.key()).collect();
    let found: Vec<Product> = state
        .store
        .get_many::<Product>(&keys)
        .await?
        .into_iter()
        .map(|p| p.value)
        .collect();
    let ordered: Vec<Product> = c
        .products
        .iter()
        .filter_map(|id| found.iter().find(|p| p.id == *id).cloned())
        .collect();
    if !ordered.iter().any(|p| p.id == c.product_id) {
        return Err(AppError::internal("a checkout's product is missing"));
    }
    Ok(ordered)
}

/// The products, URLs and custom fields a rendering shows, as they are now.
async fn checkout_context(state: &AppState, c: &Checkout) -> Result<CheckoutContext, AppError> {
    let products = checkout_products(state, c).await?;
    let mut views = Vec::with_capacity(products.len());
    for p in &products {
        views.push(checkout_product_view(state, p).await?);
    }
    let selected = products
        .iter()
        .position(|p| p.id == c.product_id)
        .ok_or_else(|| AppError::internal("a checkout's product is missing"))?;
    let product = &products[selected];
    let base = &state.public_url;
    Ok(CheckoutContext {
        url: format!("{base}/checkout/{}", c.client_secret),
        success_url: c.success_url(&format!("{base}/checkout/{}/confirmation", c.client_secret)),
        product: views[selected].clone(),
        product_price: ProductPrice::new(product, &c.price, &product_meters(state, product).await?),
        products: views,
        attached_custom_fields: attached_custom_fields_view(state, product).await?,
    })
}

async fn organization_of(state: &AppState, c: &Checkout) -> Result<OrganizationView, AppError> {
    state
        .store
        .get::<Organization>(&c.organization_id.key())
        .await?
        .map(|o| OrganizationView::from(&o.value))
        .ok_or_else(|| AppError::internal("a checkout's organization is missing"))
}

/// `Checkout`, with its status as seen now.
pub async fn checkout_view(state: &AppState, c: &Checkout) -> Result<CheckoutView, AppError> {
    let status = c.effective_status(state.now());
    Ok(CheckoutView::new(
        c,
        status,
        checkout_context(state, c).await?,
    ))
}

/// `CheckoutPublic`, showing `status`.
pub async fn checkout_public_view(
    state: &AppState,
    c: &Checkout,
    status: CheckoutStatus,
) -> Result<CheckoutPublic, AppError> {
    Ok(CheckoutPublic::new(
        c,
        status,
        checkout_context(state, c).await?,
        organization_of(state, c).await?,
    ))
}

/// `CheckoutPublicConfirmed`: the confirm answer, with the customer session's token.
pub async fn checkout_confirmed_view(
    state: &AppState,
    c: &Checkout,
    session_token: String,
) -> Result<CheckoutPublicConfirmed, AppError> {
    Ok(CheckoutPublicConfirmed::new(
        c,
        checkout_context(state, c).await?,
        organization_of(state, c).await?,
        session_token,
    ))
}
