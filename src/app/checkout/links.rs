//! Checkout links (Polar's `checkout_link/service.py`): create, list, read, change and
//! delete a seller's links, and follow one: a fresh checkout of the link's products,
//! created as its organization would with a token, prefilled from the link's query.

use std::cmp::Ordering;

use tollgate_actors::checkout::{
    ChangeCheckout, Checkout, CheckoutTarget, CreateCheckout, CustomFieldInput,
};
use tollgate_storage::{Batch, Expect, Stored};

use crate::api::checkout_link::{CheckoutLinkView, CHECKOUT_LINK_SECRET_PREFIX};
use crate::api::discount::DiscountBase;
use crate::app::access::{can_access, organizations_for_list};
use crate::app::listing::{compare_times, directed, sorted_page_of};
use crate::app::paging::{ListParams, SortField, Sorting};
use crate::app::views::product_view;
use crate::auth::tokens::generate;
use crate::auth::Subject;
use crate::domain::checkout_link::{
    CheckoutLink, CheckoutLinkChange, CheckoutLinkId, LinkOffer, NewCheckoutLink,
    CHECKOUT_LINK_BY_CREATED, CHECKOUT_LINK_PRODUCT_BY_CREATED,
};
use crate::domain::discount::{discount_by_code, discount_by_id, Discount};
use crate::domain::ids::{DiscountId, OrganizationId, PriceId, ProductId};
use crate::domain::metadata::{
    MetaValue, Metadata, MetadataIssue, MAX_KEY_CHARS, MAX_PAIRS, MAX_VALUE_CHARS,
};
use crate::domain::organization::Organization;
use crate::domain::product::Product;
use crate::error::{AppError, Code, Given, Invalid};
use crate::field;
use crate::state::AppState;
use crate::validate::{embed_hosts, is_header_safe, HEADER_SAFE_PATTERN};

use super::fields::products_for_create;

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

/// The product of a price, for a link made from one (Polar's `_get_validated_price`).
async fn product_of_price(
    state: &AppState,
    subject: Subject,
    price_id: PriceId,
) -> Result<ProductId, AppError> {
    let problem = |msg: &str| AppError::invalid(field!["product_price_id"], msg, price_id.0);
    let found = crate::domain::product::product_for_price(&state.store, price_id).await?;
    let product = match found {
        Some(p) if can_access(state, subject, p.value.organization_id).await? => p.value,
        _ => return Err(problem("Price does not exist.")),
    };
    match product.price(price_id) {
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
    id: DiscountId,
) -> Result<Option<Discount>, AppError> {
    Ok(discount_by_id(&state.store, id)
        .await?
        .map(|d| d.value)
        .filter(|d| d.organization_id == org && products.iter().any(|p| d.applies_to(*p))))
}

fn no_discount(id: DiscountId) -> AppError {
    AppError::invalid(
        field!["discount_id"],
        "Discount does not exist or is not applicable to this product.",
        id.0,
    )
}

/// Creates a link for `subject`, who must reach its products' organization: its products
/// readable, on sale and of one organization, its discount that organization's and
/// applicable to one of them.
pub async fn create(
    state: &AppState,
    subject: Subject,
    cmd: NewCheckoutLink,
) -> Result<CheckoutLink, AppError> {
    let products: Vec<ProductId> = match cmd.offer {
        LinkOffer::Products(ids) => products_for_create(state, subject, &ids).await?.2,
        LinkOffer::Product(id) => products_for_create(state, subject, &[id]).await?.2,
        LinkOffer::Price(price) => vec![product_of_price(state, subject, price).await?],
    };
    let org = first_organization(state, &products).await?;
    if let Some(n) = cmd.seats {
        check_seats(state, &products, n).await?;
    }
    if let Some(id) = cmd.discount_id {
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
        label: cmd.label,
        products,
        allow_discount_codes: cmd.allow_discount_codes,
        require_billing_address: cmd.require_billing_address,
        discount_id: cmd.discount_id,
        success_url: cmd.success_url,
        return_url: cmd.return_url,
        metadata: cmd.metadata,
        trial: cmd.trial,
        seats: cmd.seats,
    };
    let mut batch = Batch::new();
    batch.put(&link, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    Ok(link)
}

/// Seats preset on a link: every product is sold by the seat (Polar's message
/// otherwise), and sells `seats` of them.
async fn check_seats(state: &AppState, products: &[ProductId], seats: u32) -> Result<(), AppError> {
    for id in products {
        let product = state
            .store
            .get::<Product>(&id.key())
            .await?
            .map(|p| p.value);
        let tiers = product.as_ref().and_then(|p| {
            p.active_prices()
                .find_map(|price| price.kind.seat_tiers().cloned())
        });
        let Some(tiers) = tiers else {
            return Err(AppError::invalid(
                field!["seats"],
                "Seats can only be preconfigured when all products use seat-based pricing.",
                Given::of(&seats),
            ));
        };
        if !tiers.allows(seats) {
            return Err(AppError::invalid(
                field!["seats"],
                format!("The product {id} doesn't sell {seats} seats."),
                Given::of(&seats),
            ));
        }
    }
    Ok(())
}

/// The organization of the first of validated products.
async fn first_organization(
    state: &AppState,
    products: &[ProductId],
) -> Result<OrganizationId, AppError> {
    let first = products
        .first()
        .ok_or_else(|| AppError::internal("a link without products"))?;
    state
        .store
        .get::<Product>(&first.key())
        .await?
        .map(|p| p.value.organization_id)
        .ok_or_else(|| AppError::internal("a validated product is missing"))
}

/// Changes link `id` as `subject`: new products must be the link's organization's, a new
/// discount applicable to one of its products.
pub async fn update(
    state: &AppState,
    subject: Subject,
    id: CheckoutLinkId,
    change: CheckoutLinkChange,
) -> Result<CheckoutLink, AppError> {
    let current = link_for(state, subject, id).await?.value;
    let products = match &change.products {
        Some(ids) => {
            let (_, _, products) = products_for_create(state, subject, ids).await?;
            if first_organization(state, &products).await? != current.organization_id {
                let sent: Vec<String> = ids.iter().map(|i| i.0.to_string()).collect();
                return Err(AppError::invalid(
                    field!["products"],
                    "Products don't belong to the checkout link's organization.",
                    Given::of(&sent),
                ));
            }
            Some(products)
        }
        None => None,
    };
    let seats = match change.seats {
        Some(s) => s,
        // New products must sell the seats already preset.
        None if products.is_some() => current.seats,
        None => None,
    };
    if let Some(n) = seats {
        check_seats(state, products.as_deref().unwrap_or(&current.products), n).await?;
    }
    if let Some(Some(d)) = change.discount_id {
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
        .update::<CheckoutLink, AppError>(&id.key(), async |link| {
            let mut l = link.clone();
            if let Some(p) = &products {
                l.products = p.clone();
            }
            if let Some(label) = &change.label {
                l.label = label.clone();
            }
            if let Some(a) = change.allow_discount_codes {
                l.allow_discount_codes = a;
            }
            if let Some(r) = change.require_billing_address {
                l.require_billing_address = r;
            }
            if let Some(d) = change.discount_id {
                l.discount_id = d;
            }
            if let Some(u) = &change.success_url {
                l.success_url = u.clone();
            }
            if let Some(u) = &change.return_url {
                l.return_url = u.clone();
            }
            if let Some(m) = &change.metadata {
                l.metadata = m.clone();
            }
            if let Some(t) = change.trial {
                l.trial = t;
            }
            if let Some(n) = change.seats {
                l.seats = n;
            }
            l.modified_at = Some(now);
            Ok(Some(l))
        })
        .await?
        .ok_or_else(AppError::not_found)?;
    Ok(updated)
}

/// Deletes link `id`: it no longer opens checkouts; those it opened stay.
pub async fn delete(
    state: &AppState,
    subject: Subject,
    id: CheckoutLinkId,
) -> Result<(), AppError> {
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
    /// `embed_origin`: the page embedding the checkout (`@polar-sh/checkout` sends its
    /// `location.origin`), checked against the organization's `embed_hosts`.
    pub embed_origin: Option<String>,
    /// `locale`: the buyer's language (Polar's prefill), kept normalized when it is a
    /// valid BCP 47 tag, ignored otherwise.
    pub locale: Option<String>,
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
) -> Result<Checkout, AppError> {
    let Some(id) = state
        .store
        .lookup_unique(&CheckoutLink::secret_key(secret))
        .await?
    else {
        return Err(AppError::not_found());
    };
    let Some(link) = state.store.get::<CheckoutLink>(&id).await?.map(|l| l.value) else {
        return Err(AppError::not_found());
    };
    let embed_origin = embed_origin_for(state, link.organization_id, prefill.embed_origin).await?;
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
        let offered: Vec<String> = link.products.iter().map(|p| p.to_string()).collect();
        return Err(AppError::invalid(
            field!["products"],
            "No valid products.",
            Given::of(&offered),
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
    let customer_name = prefill
        .customer_name
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    // What a create body would refuse of what the query filled in.
    check_prefill(&metadata, customer_name.as_deref())?;
    let customer_email = prefill
        .customer_email
        .map(|e| e.trim().to_string())
        .filter(|e| crate::validate::is_email(e));
    let command = CreateCheckout {
        target: CheckoutTarget::Products(on_sale.iter().map(|p| p.id).collect()),
        seats: link.seats,
        min_seats: None,
        max_seats: None,
        amount: None,
        discount_id: discount.as_ref().map(|d| d.id),
        allow_discount_codes: link.allow_discount_codes,
        customer_id: None,
        customer_name,
        customer_email,
        customer_ip_address: Some(ip.to_string()),
        customer_billing_address: None,
        customer_tax_id: None,
        is_business_customer: false,
        customer_billing_name: None,
        customer_metadata: Default::default(),
        metadata,
        custom_field_data: CustomFieldInput::empty(),
        subscription_id: None,
        success_url: link.success_url.clone(),
        embed_origin,
        expires_at: None,
        require_billing_address: link.require_billing_address,
        allow_trial: true,
        external_customer_id: None,
        return_url: link.return_url.clone(),
        trial: link.trial,
        currency: None,
        locale: prefill.locale,
    };
    let checkout = super::create(state, Subject::Organization(org), command).await?;
    if selected.id == on_sale[0].id {
        return Ok(checkout);
    }
    let switch = ChangeCheckout {
        product_id: Some(selected.id),
        ..ChangeCheckout::default()
    };
    super::update(state, Subject::Organization(org), checkout.id, switch).await
}

/// The embedding page's origin a followed link's checkout keeps (Polar's
/// `checkout_link_create`): `None` without one or when `raw` is no origin (`null`, a
/// `file:` URL, garbage: the checkout is then framed by nobody), the normalized origin when
/// the organization's `embed_hosts` list it, else 403 `EmbedHostNotAllowed` (Tollgate
/// enforces the list for every organization).
async fn embed_origin_for(
    state: &AppState,
    org: OrganizationId,
    raw: Option<String>,
) -> Result<Option<String>, AppError> {
    let Some(origin) = raw.as_deref().and_then(embed_hosts::parse_origin) else {
        return Ok(None);
    };
    let hosts = state
        .store
        .get::<Organization>(&org.key())
        .await?
        .map(|o| o.value.embed_hosts)
        .unwrap_or_default();
    match embed_hosts::match_origin(&origin, &hosts) {
        Some(allowed) => Ok(Some(allowed)),
        None => Err(AppError::new(
            Code::EmbedHostNotAllowed,
            format!("{origin} is not allowed to embed this checkout."),
        )),
    }
}

/// What a create body would refuse of what a followed link fills in itself: its metadata
/// (the link's with the query's pairs added) and the prefilled customer name, as a create
/// body's 422 tells it (metadata first).
fn check_prefill(metadata: &Metadata, customer_name: Option<&str>) -> Result<(), AppError> {
    let mut invalid = Vec::new();
    if let Err(issues) = crate::domain::metadata::parse(&metadata.to_json()) {
        invalid.extend(issues.into_iter().map(|i| metadata_invalid(metadata, i)));
    }
    if let Some(name) = customer_name.filter(|n| !is_header_safe(n)) {
        invalid.push(
            Invalid::new(
                field!["customer_name"],
                format!("String should match pattern '{HEADER_SAFE_PATTERN}'"),
                name,
            )
            .kind("string_pattern_mismatch")
            .with_ctx("pattern", HEADER_SAFE_PATTERN),
        );
    }
    if invalid.is_empty() {
        Ok(())
    } else {
        Err(AppError::Invalid(invalid))
    }
}

/// A rule `metadata` breaks, as the metadata of a create body reports it.
fn metadata_invalid(metadata: &Metadata, issue: MetadataIssue) -> Invalid {
    let value = |k: &str| match metadata.0.get(k) {
        Some(MetaValue::Str(s)) => Given::from(s),
        Some(MetaValue::Int(i)) => Given::from(*i),
        Some(MetaValue::Bool(b)) => Given::from(*b),
        None => Given::none(),
    };
    match issue {
        MetadataIssue::NotAnObject => Invalid::new(
            field!["metadata"],
            "Input should be a valid dictionary",
            Given::of(&metadata.to_json()),
        )
        .kind("dict_type"),
        MetadataIssue::TooManyPairs(n) => Invalid::new(
            field!["metadata"],
            format!("Dictionary should have at most {MAX_PAIRS} items after validation, not {n}"),
            Given::of(&metadata.to_json()),
        )
        .kind("too_long")
        .with_ctx("field_type", "Dictionary")
        .with_ctx("max_length", MAX_PAIRS as u64)
        .with_ctx("actual_length", n as u64),
        MetadataIssue::KeyTooShort(k) => Invalid::new(
            field!["metadata", &k, "[key]"],
            "String should have at least 1 character",
            &k,
        )
        .kind("string_too_short")
        .with_ctx("min_length", 1u64),
        MetadataIssue::KeyTooLong(k) => Invalid::new(
            field!["metadata", &k, "[key]"],
            format!("String should have at most {MAX_KEY_CHARS} characters"),
            &k,
        )
        .kind("string_too_long")
        .with_ctx("max_length", MAX_KEY_CHARS as u64),
        MetadataIssue::ValueTooShort(k) => Invalid::new(
            field!["metadata", &k, "str"],
            "String should have at least 1 character",
            value(&k),
        )
        .kind("string_too_short")
        .with_ctx("min_length", 1u64),
        MetadataIssue::ValueTooLong(k) => Invalid::new(
            field!["metadata", &k, "str"],
            format!("String should have at most {MAX_VALUE_CHARS} characters"),
            value(&k),
        )
        .kind("string_too_long")
        .with_ctx("max_length", MAX_VALUE_CHARS as u64),
        MetadataIssue::BadValueType(k) => Invalid::new(
            field!["metadata", &k],
            "Input should be a valid string, integer or boolean",
            value(&k),
        )
        .kind("string_type"),
    }
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
            "embed_origin" => prefill.embed_origin = Some(value),
            "locale" => prefill.locale = crate::domain::locale::normalize_tag(&value),
            k @ ("reference_id" | "utm_source" | "utm_medium" | "utm_campaign" | "utm_term"
            | "utm_content") => prefill.metadata.push((k.to_string(), value)),
            _ => {}
        }
    }
    prefill
}

#[cfg(test)]
#[path = "links_tests.rs"]
mod links_tests;
