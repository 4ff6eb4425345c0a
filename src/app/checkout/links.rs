//! Checkout links (Polar's `checkout_link/service.py`): create, list, read, change and
//! delete a seller's links, and follow one: a fresh checkout of the link's products,
//! created as its organization would with a token, prefilled from the link's query.

use std::cmp::Ordering;

use serde_json::Value;
use tollgate_actors::checkout::Checkout;
use tollgate_storage::{Batch, Expect, Stored};
use uuid::Uuid;

use crate::api::checkout::create::check_link_prefill;
use crate::api::checkout::{ChangeCheckout, CheckoutTarget, CreateCheckout};
use crate::api::checkout_link::{
    CheckoutLinkCreate, CheckoutLinkUpdate, CheckoutLinkView, CHECKOUT_LINK_SECRET_PREFIX,
};
use crate::api::custom_field_data::CustomFieldInput;
use crate::api::discount::DiscountBase;
use crate::api::Maybe;
use crate::app::access::{can_access, organizations_for_list};
use crate::app::listing::{compare_times, directed, sorted_page_of};
use crate::app::paging::{ListParams, SortField, Sorting};
use crate::app::views::product_view;
use crate::auth::tokens::generate;
use crate::auth::Subject;
use crate::domain::checkout_link::{
    CheckoutLink, CheckoutLinkId, CHECKOUT_LINK_BY_CREATED, CHECKOUT_LINK_PRODUCT_BY_CREATED,
};
use crate::domain::discount::{discount_by_code, discount_by_id, Discount};
use crate::domain::ids::{DiscountId, OrganizationId, PriceId, ProductId};
use crate::domain::metadata::MetaValue;
use crate::domain::product::Product;
use crate::error::{ApiError, AppError, FieldError};
use crate::loc;
use crate::state::AppState;
use crate::validate::Validator;

use super::fields::products_for_create;
use crate::api::checkout::create::{metadata_field, optional_string, product_list, trial_fields};

// ---------------------------------------------------------------------------------------
// Reading links.

/// The link if the subject reaches its organization, else 404.
pub async fn link_for(
    state: &AppState,
    subject: Subject,
    id: CheckoutLinkId,
) -> Result<Stored<CheckoutLink>, AppError> {
    match state.store.get::<CheckoutLink>(&id.key()).await? {
        Some(l) if can_access(state, subject, l.value.organization_id).await? => Ok(l),
        _ => Err(AppError::not_found()),
    }
}

/// The link as the subject reads it (its organization's), with the writes so far durable
/// (a link just created is found), else 404.
pub async fn read_link(
    state: &AppState,
    subject: Subject,
    id: CheckoutLinkId,
) -> Result<CheckoutLink, AppError> {
    state.store.read_barrier().await?;
    Ok(link_for(state, subject, id).await?.value)
}

/// `CheckoutLink`: the link with its products and discount as they are now.
pub async fn link_view(
    state: &AppState,
    link: &CheckoutLink,
) -> Result<CheckoutLinkView, AppError> {
    let keys: Vec<Vec<u8>> = link.products.iter().map(|p| p.key()).collect();
    let found: Vec<Product> = state
        .store
        .get_many::<Product>(&keys)
        .await?
        .into_iter()
        .map(|p| p.value)
        .collect();
    let mut products = Vec::with_capacity(found.len());
    for id in &link.products {
        if let Some(p) = found.iter().find(|p| p.id == *id) {
            products.push(product_view(state, p).await?);
        }
    }
    let discount = match link.discount_id {
        Some(id) => discount_by_id(&state.store, id)
            .await?
            .map(|d| DiscountBase::from(&d.value)),
        None => None,
    };
    Ok(CheckoutLinkView::new(
        link,
        products,
        discount,
        &state.public_url,
    ))
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CheckoutLinkSort {
    CreatedAt,
    Label,
    SuccessUrl,
    AllowDiscountCodes,
}

impl SortField for CheckoutLinkSort {
    const FIELDS: &'static [(&'static str, CheckoutLinkSort)] = &[
        ("created_at", CheckoutLinkSort::CreatedAt),
        ("label", CheckoutLinkSort::Label),
        ("success_url", CheckoutLinkSort::SuccessUrl),
        ("allow_discount_codes", CheckoutLinkSort::AllowDiscountCodes),
    ];
}

/// Which links a list shows, and in what order (Polar's default: oldest first).
#[derive(Debug, Clone)]
pub struct CheckoutLinkFilter {
    pub organization_id: Vec<OrganizationId>,
    /// Offering one of these products.
    pub product_id: Vec<ProductId>,
    pub sorting: Sorting<CheckoutLinkSort>,
}

/// Nulls last in ascending order, as PostgreSQL sorts them for Polar.
fn compare_optional(a: &Option<String>, b: &Option<String>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.cmp(b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// One page of the links `subject` reaches, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &CheckoutLinkFilter,
    params: ListParams,
) -> Result<(Vec<CheckoutLink>, u64), AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let (index, tenants): (&'static str, Vec<Vec<u8>>) = if filter.product_id.is_empty() {
        (
            CHECKOUT_LINK_BY_CREATED,
            orgs.iter().map(|o| o.key()).collect(),
        )
    } else {
        let mut tenants = Vec::new();
        for p in &filter.product_id {
            if let Some(product) = state.store.get::<Product>(&p.key()).await? {
                if orgs.contains(&product.value.organization_id) {
                    tenants.push(p.key());
                }
            }
        }
        (CHECKOUT_LINK_PRODUCT_BY_CREATED, tenants)
    };
    let sorting = &filter.sorting;
    let by = |field, desc, a: &CheckoutLink, b: &CheckoutLink| {
        let ordering = match field {
            CheckoutLinkSort::CreatedAt => compare_times(&a.created_at, &b.created_at),
            CheckoutLinkSort::Label => compare_optional(&a.label, &b.label),
            CheckoutLinkSort::SuccessUrl => compare_optional(&a.success_url, &b.success_url),
            CheckoutLinkSort::AllowDiscountCodes => {
                a.allow_discount_codes.cmp(&b.allow_discount_codes)
            }
        };
        directed(ordering, desc)
    };
    // The index serves the creation order; any other is sorted in memory.
    let (field, desc) = sorting.primary();
    let in_memory = Box::new(move |a: &CheckoutLink, b: &CheckoutLink| sorting.compare(a, b, by))
        as Box<crate::app::paging::Compare<'_, CheckoutLink>>;
    let several = sorting
        .several(by)
        .or_else(|| (field != CheckoutLinkSort::CreatedAt).then_some(in_memory));
    // A link offering several of the products is listed once.
    let seen = std::sync::Mutex::new(std::collections::HashSet::new());
    let once = |l: &CheckoutLink| seen.lock().map(|mut s| s.insert(l.id)).unwrap_or(true);
    let filter_once: Option<&dyn Fn(&CheckoutLink) -> bool> =
        (filter.product_id.len() > 1).then_some(&once);
    let backwards = field == CheckoutLinkSort::CreatedAt && desc;
    sorted_page_of::<CheckoutLink>(
        state,
        index,
        &tenants,
        backwards,
        params,
        filter_once,
        several.as_deref(),
    )
    .await
}

// ---------------------------------------------------------------------------------------
// Creating and changing links.

fn refuse(v: &mut Validator, field: &str, msg: &str, input: Value) {
    v.push(FieldError::new(
        "value_error",
        loc!["body", field],
        msg,
        input,
    ));
}

/// Seats and units: not sold by Tollgate.
fn refuse_unsupported(v: &mut Validator, seats: Option<i64>, units: Option<i64>) {
    if let Some(n) = seats {
        refuse(
            v,
            "seats",
            "Seats can only be preconfigured when all products use seat-based pricing.",
            Value::from(n),
        );
    }
    if let Some(n) = units {
        refuse(
            v,
            "units",
            "Units can only be preconfigured when all products use unit-based pricing.",
            Value::from(n),
        );
    }
}

fn check_url(v: &mut Validator, field: &str, url: &Option<String>) {
    if let Some(u) = url {
        v.http_url(loc!["body", field], u);
    }
}

/// The product of a price, for a link made from one (Polar's `_get_validated_price`).
async fn product_of_price(
    state: &AppState,
    subject: Subject,
    price_id: Uuid,
) -> Result<ProductId, ApiError> {
    let problem = |msg: &str| {
        ApiError::invalid(
            loc!["body", "product_price_id"],
            msg,
            Value::from(price_id.to_string()),
        )
    };
    let found = crate::domain::product::product_for_price(&state.store, PriceId(price_id)).await?;
    let product = match found {
        Some(p) if can_access(state, subject, p.value.organization_id).await? => p.value,
        _ => return Err(problem("Price does not exist.")),
    };
    match product.price(PriceId(price_id)) {
        None => Err(problem("Price does not exist.")),
        Some(p) if p.is_archived => Err(problem("Price is archived.")),
        Some(_) if product.is_archived => Err(problem("Product is archived.")),
        Some(_) => Ok(product.id),
    }
}

/// A discount for a link: the organization's, applicable to one of its products (Polar
/// does not ask that it be redeemable now).
async fn discount_for_link(
    state: &AppState,
    org: OrganizationId,
    products: &[ProductId],
    id: Uuid,
) -> Result<Option<Discount>, ApiError> {
    Ok(discount_by_id(&state.store, DiscountId(id))
        .await?
        .map(|d| d.value)
        .filter(|d| d.organization_id == org && products.iter().any(|p| d.applies_to(*p))))
}

fn no_discount(id: Uuid) -> ApiError {
    ApiError::invalid(
        loc!["body", "discount_id"],
        "Discount does not exist or is not applicable to this product.",
        Value::from(id.to_string()),
    )
}

/// Creates a link for `subject`, who must reach its products' organization.
pub async fn create(
    state: &AppState,
    subject: Subject,
    input: CheckoutLinkCreate,
) -> Result<CheckoutLink, ApiError> {
    let mut v = Validator::new();
    if input.payment_processor != "stripe" {
        v.push(FieldError::new(
            "literal_error",
            loc!["body", "payment_processor"],
            "Input should be 'stripe'",
            Value::from(input.payment_processor.as_str()),
        ));
    }
    let metadata = input
        .metadata
        .as_ref()
        .and_then(|m| metadata_field(&mut v, "metadata", m))
        .unwrap_or_default();
    check_url(&mut v, "success_url", &input.success_url);
    check_url(&mut v, "return_url", &input.return_url);
    refuse_unsupported(&mut v, input.seats, input.units);
    let trial = trial_fields(
        &mut v,
        input.trial_interval.as_deref().map(Some),
        input.trial_interval_count.map(Some),
    )
    .flatten();
    v.finish()?;
    let products: Vec<ProductId> = match (&input.products, input.product_id, input.product_price_id)
    {
        (Some(ids), _, _) => {
            products_for_create(state, subject, &product_list(ids)?)
                .await?
                .2
        }
        (None, Some(id), _) => {
            products_for_create(state, subject, &[ProductId(id)])
                .await?
                .2
        }
        (None, None, Some(price)) => vec![product_of_price(state, subject, price).await?],
        (None, None, None) => {
            return Err(ApiError::validation(FieldError::new(
                "missing",
                loc!["body", "products"],
                "Field required",
                Value::Null,
            )))
        }
    };
    let org = first_organization(state, &products).await?;
    if let Some(id) = input.discount_id {
        if discount_for_link(state, org, &products, id)
            .await?
            .is_none()
        {
            return Err(no_discount(id));
        }
    }
    let link = CheckoutLink {
        id: CheckoutLinkId::new(),
        organization_id: org,
        created_at: state.now(),
        modified_at: None,
        client_secret: generate(CHECKOUT_LINK_SECRET_PREFIX, 32),
        label: optional_string(input.label),
        products,
        allow_discount_codes: input.allow_discount_codes.unwrap_or(true),
        require_billing_address: input.require_billing_address.unwrap_or(false),
        discount_id: input.discount_id.map(DiscountId),
        success_url: input.success_url,
        return_url: input.return_url,
        metadata,
        trial,
    };
    let mut batch = Batch::new();
    batch.put(&link, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    Ok(link)
}

/// The organization of the first of validated products.
async fn first_organization(
    state: &AppState,
    products: &[ProductId],
) -> Result<OrganizationId, ApiError> {
    let first = products
        .first()
        .ok_or_else(|| ApiError::internal("a link without products"))?;
    state
        .store
        .get::<Product>(&first.key())
        .await?
        .map(|p| p.value.organization_id)
        .ok_or_else(|| ApiError::internal("a validated product is missing"))
}

/// Changes link `id` as `subject`.
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: CheckoutLinkId,
    input: CheckoutLinkUpdate,
) -> Result<CheckoutLink, ApiError> {
    let current = link_for(state, subject, id).await?.value;
    let mut v = Validator::new();
    let metadata = match &input.metadata {
        Maybe::Value(m) => metadata_field(&mut v, "metadata", m),
        _ => None,
    };
    check_url(
        &mut v,
        "success_url",
        &input.success_url.as_value().cloned(),
    );
    check_url(&mut v, "return_url", &input.return_url.as_value().cloned());
    refuse_unsupported(
        &mut v,
        input.seats.as_value().copied(),
        input.units.as_value().copied(),
    );
    let interval = match &input.trial_interval {
        Maybe::Absent => None,
        Maybe::Null => Some(None),
        Maybe::Value(i) => Some(Some(i.as_str())),
    };
    let count = match input.trial_interval_count {
        Maybe::Absent => None,
        Maybe::Null => Some(None),
        Maybe::Value(n) => Some(Some(n)),
    };
    let trial = trial_fields(&mut v, interval, count);
    v.finish()?;
    let products = match &input.products {
        Maybe::Value(ids) => {
            let (_, _, products) = products_for_create(state, subject, &product_list(ids)?).await?;
            if first_organization(state, &products).await? != current.organization_id {
                return Err(ApiError::invalid(
                    loc!["body", "products"],
                    "Products don't belong to the checkout link's organization.",
                    Value::from(ids.iter().map(|i| i.to_string()).collect::<Vec<_>>()),
                ));
            }
            Some(products)
        }
        Maybe::Null => {
            return Err(ApiError::invalid(
                loc!["body", "products"],
                "Input should be a valid list",
                Value::Null,
            ))
        }
        Maybe::Absent => None,
    };
    if let Maybe::Value(d) = input.discount_id {
        let offered = products.as_deref().unwrap_or(&current.products);
        if discount_for_link(state, current.organization_id, offered, d)
            .await?
            .is_none()
        {
            return Err(no_discount(d));
        }
    }
    let now = state.now();
    let updated = state
        .store
        .update::<CheckoutLink, ApiError>(&id.key(), async |link| {
            let mut l = link.clone();
            if let Some(p) = &products {
                l.products = p.clone();
            }
            if let Some(label) = input.label.clone().into_update() {
                l.label = optional_string(label);
            }
            if let Maybe::Value(a) = input.allow_discount_codes {
                l.allow_discount_codes = a;
            }
            if let Maybe::Value(r) = input.require_billing_address {
                l.require_billing_address = r;
            }
            if let Some(d) = input.discount_id.clone().into_update() {
                l.discount_id = d.map(DiscountId);
            }
            if let Some(u) = input.success_url.clone().into_update() {
                l.success_url = u;
            }
            if let Some(u) = input.return_url.clone().into_update() {
                l.return_url = u;
            }
            if let Some(m) = &metadata {
                l.metadata = m.clone();
            }
            if let Some(t) = trial {
                l.trial = t;
            }
            l.modified_at = Some(now);
            Ok(Some(l))
        })
        .await?
        .ok_or_else(ApiError::not_found)?;
    Ok(updated)
}

/// Deletes link `id`: it no longer opens checkouts; those it opened stay.
pub async fn delete(
    state: &AppState,
    subject: Subject,
    id: CheckoutLinkId,
) -> Result<(), ApiError> {
    let current = link_for(state, subject, id).await?;
    let mut batch = Batch::new();
    batch.delete::<CheckoutLink>(&id.key(), Expect::Rev(current.rev));
    state.store.commit_durable(&batch).await?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Following a link.

/// What the query of a followed link may fill in (Polar's `query_prefill` and the query
/// metadata); a value that does not fit is ignored, as Polar ignores it.
#[derive(Debug, Clone, Default)]
pub struct LinkPrefill {
    /// One of the link's products, selected instead of the first.
    pub product_id: Option<String>,
    pub customer_email: Option<String>,
    pub customer_name: Option<String>,
    pub discount_code: Option<String>,
    /// `reference_id` and `utm_*`: added to the checkout's metadata unless the link's
    /// metadata has the key.
    pub metadata: Vec<(String, String)>,
}

/// The longest metadata value (Polar's limit).
const METADATA_VALUE_MAX: usize = 500;

/// Opens a checkout of the link `secret` leads to, as its organization would with a token:
/// the link's products that are still on sale (the prefilled one selected), its terms,
/// its discount while it applies (or a prefilled code), the buyer's prefilled e-mail and
/// name. An unknown link is 404; a link with nothing left on sale is 422.
pub async fn follow(
    state: &AppState,
    secret: &str,
    prefill: LinkPrefill,
    ip: std::net::IpAddr,
) -> Result<Checkout, ApiError> {
    let Some(id) = state
        .store
        .lookup_unique(&CheckoutLink::secret_key(secret))
        .await?
    else {
        return Err(ApiError::not_found());
    };
    let Some(link) = state.store.get::<CheckoutLink>(&id).await?.map(|l| l.value) else {
        return Err(ApiError::not_found());
    };
    let keys: Vec<Vec<u8>> = link.products.iter().map(|p| p.key()).collect();
    let found: Vec<Product> = state
        .store
        .get_many::<Product>(&keys)
        .await?
        .into_iter()
        .map(|p| p.value)
        .collect();
    let on_sale: Vec<&Product> = link
        .products
        .iter()
        .filter_map(|id| found.iter().find(|p| p.id == *id))
        .filter(|p| !p.is_archived && p.first_active_price().is_some())
        .collect();
    if on_sale.is_empty() {
        return Err(ApiError::invalid(
            loc!["body", "products"],
            "No valid products.",
            Value::from(
                link.products
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>(),
            ),
        ));
    }
    let selected = prefill
        .product_id
        .as_deref()
        .and_then(|raw| on_sale.iter().find(|p| p.id.to_string() == raw.trim()))
        .copied()
        .unwrap_or(on_sale[0]);
    let now = state.now();
    let org = link.organization_id;
    // The link's discount while it applies, else a prefilled code that does.
    let usable = |d: &Discount| d.applies_to(selected.id) && d.is_redeemable(now);
    let mut discount = match link.discount_id {
        Some(id) => discount_by_id(&state.store, id)
            .await?
            .map(|d| d.value)
            .filter(|d| usable(d)),
        None => None,
    };
    if let Some(code) = prefill
        .discount_code
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
    {
        if let Some(d) = discount_by_code(&state.store, org, code)
            .await?
            .map(|d| d.value)
            .filter(|d| usable(d))
        {
            discount = Some(d);
        }
    }
    let mut metadata = link.metadata.clone();
    for (key, value) in prefill.metadata {
        if !metadata.0.contains_key(&key) && !value.is_empty() && value.len() <= METADATA_VALUE_MAX
        {
            metadata.0.insert(key, MetaValue::Str(value));
        }
    }
    let customer_name = optional_string(prefill.customer_name);
    // What a create body would refuse of what the query filled in.
    check_link_prefill(&metadata, customer_name.as_deref())?;
    let customer_email = prefill
        .customer_email
        .map(|e| e.trim().to_string())
        .filter(|e| crate::validate::is_email(e));
    let command = CreateCheckout {
        target: CheckoutTarget::Products(on_sale.iter().map(|p| p.id).collect()),
        amount: None,
        discount_id: discount.as_ref().map(|d| d.id),
        allow_discount_codes: link.allow_discount_codes,
        customer_id: None,
        customer_name,
        customer_email,
        customer_ip_address: Some(ip.to_string()),
        customer_billing_address: None,
        customer_tax_id: None,
        customer_metadata: Default::default(),
        metadata,
        custom_field_data: CustomFieldInput::empty(),
        subscription_id: None,
        success_url: link.success_url.clone(),
        embed_origin: None,
        expires_at: None,
        require_billing_address: link.require_billing_address,
        allow_trial: true,
        external_customer_id: None,
        return_url: link.return_url.clone(),
        trial: link.trial,
    };
    let checkout = super::create(state, Subject::Organization(org), command).await?;
    if selected.id == on_sale[0].id {
        return Ok(checkout);
    }
    let switch = ChangeCheckout {
        product_id: Some(selected.id),
        ..ChangeCheckout::default()
    };
    Ok(super::update(state, Subject::Organization(org), checkout.id, switch).await?)
}

/// The prefill of a followed link from its query string.
pub fn prefill_from_query(query: &str) -> LinkPrefill {
    let mut prefill = LinkPrefill::default();
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        let value = value.trim().to_string();
        if value.is_empty() {
            continue;
        }
        match key.as_ref() {
            "product_id" => prefill.product_id = Some(value),
            "customer_email" => prefill.customer_email = Some(value),
            "customer_name" => prefill.customer_name = Some(value),
            "discount_code" => prefill.discount_code = Some(value),
            k @ ("reference_id" | "utm_source" | "utm_medium" | "utm_campaign" | "utm_term"
            | "utm_content") => prefill.metadata.push((k.to_string(), value)),
            _ => {}
        }
    }
    prefill
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_fills_what_polar_fills() {
        let p = prefill_from_query(
            "product_id=abc&customer_email=a%40b.co&customer_name=Ada&discount_code=SPRING\
             &reference_id=r-1&utm_source=news&other=x&customer_name=&utm_term=",
        );
        assert_eq!(p.product_id.as_deref(), Some("abc"));
        assert_eq!(p.customer_email.as_deref(), Some("a@b.co"));
        assert_eq!(p.customer_name.as_deref(), Some("Ada"));
        assert_eq!(p.discount_code.as_deref(), Some("SPRING"));
        assert_eq!(
            p.metadata,
            vec![
                ("reference_id".to_string(), "r-1".to_string()),
                ("utm_source".to_string(), "news".to_string())
            ]
        );
    }
}
