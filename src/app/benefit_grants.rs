//! Benefit grants, derived from the purchases that made them (see
//! `crate::domain::benefit_grant`): each one-time order and each started subscription
//! grants its customer every benefit of the product bought; the grant of a license-key
//! benefit is the key that purchase created; a subscription's grants are revoked when it
//! ends, every grant of a benefit when the benefit is deleted and every grant of a customer
//! when the customer is deleted (Polar's rules). The
//! `benefit_grant.*` webhooks derive the same grants (same ids).
//!
//! Lists read the purchases in scope through their indexes (an organization's, a
//! customer's, or the products granting one benefit) and select the page in memory: the
//! cost grows with the purchases in scope, not with the store.

use std::cmp::Ordering;
use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap, HashSet};

use tollgate_storage::{Direction, Record};

use crate::app::access::organizations_for_list;
use crate::app::listing::{compare_times, directed, nulls_last, select_page};
use crate::app::paging::{ListParams, SortField, Sorting};
use crate::auth::Subject;
use crate::domain::benefit::{Benefit, BenefitType};
use crate::domain::benefit_grant::{BenefitGrant, GrantSource, GrantedKey};
use crate::domain::customer::{customer_by_external_id, Customer};
use crate::domain::ids::{BenefitId, CustomerId, FileId, OrganizationId, ProductId};
use crate::domain::order::{Order, ORDER_BY_CREATED, ORDER_OF_CUSTOMER, ORDER_OF_PRODUCT};
use crate::domain::product::{Product, PRODUCT_BY_BENEFIT};
use crate::domain::refund::{Refund, RefundStatus, REFUND_OF_ORDER};
use crate::error::AppError;
use crate::state::AppState;
use tollgate_actors::license_key::{LicenseKey, LICENSE_KEY_BY_CUSTOMER};
use tollgate_actors::subscription::{
    Subscription, SubscriptionSort, SUBSCRIPTION_OF_CUSTOMER, SUBSCRIPTION_OF_PRODUCT,
};

/// Polar's `BenefitGrantSortProperty`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GrantSort {
    CreatedAt,
    GrantedAt,
    RevokedAt,
}

impl SortField for GrantSort {
    const FIELDS: &'static [(&'static str, GrantSort)] = &[
        ("created_at", GrantSort::CreatedAt),
        ("granted_at", GrantSort::GrantedAt),
        ("revoked_at", GrantSort::RevokedAt),
    ];
}

/// One criterion, as PostgreSQL orders it (no value last ascending, first descending).
fn compare(field: GrantSort, descending: bool, a: &BenefitGrant, b: &BenefitGrant) -> Ordering {
    let micros = |t: Option<chrono::DateTime<chrono::Utc>>| t.map(|t| t.timestamp_micros());
    let ordering = match field {
        GrantSort::CreatedAt => compare_times(&a.created_at, &b.created_at),
        GrantSort::GrantedAt => nulls_last(micros(a.granted_at), micros(b.granted_at)),
        GrantSort::RevokedAt => nulls_last(micros(a.revoked_at), micros(b.revoked_at)),
    };
    directed(ordering, descending)
}

/// Which grants a list shows, and in what order.
#[derive(Debug, Clone)]
pub struct GrantFilter {
    /// Of these organizations (all the subject reaches when empty).
    pub organization_id: Vec<OrganizationId>,
    /// Of these customers (any when empty).
    pub customer_id: Vec<CustomerId>,
    /// Of the customers with these external ids (any when empty).
    pub external_customer_id: Vec<String>,
    /// Granted (`true`) or revoked (`false`) ones only.
    pub is_granted: Option<bool>,
    /// Of this benefit only.
    pub benefit_id: Option<BenefitId>,
    pub sorting: Sorting<GrantSort>,
}

impl Default for GrantFilter {
    fn default() -> Self {
        GrantFilter {
            organization_id: Vec::new(),
            customer_id: Vec::new(),
            external_customer_id: Vec::new(),
            is_granted: None,
            benefit_id: None,
            sorting: Sorting::by(GrantSort::CreatedAt, true),
        }
    }
}

/// Derives grants from purchases, reading each product, benefit and customer's keys once.
pub struct Grants<'a> {
    state: &'a AppState,
    benefits_of: HashMap<ProductId, Vec<BenefitId>>,
    benefits: HashMap<BenefitId, Option<Benefit>>,
    keys_of: HashMap<CustomerId, Vec<LicenseKey>>,
    /// When each customer was deleted (`None`: live, or gone without a trace).
    customer_deleted: HashMap<CustomerId, Option<chrono::DateTime<chrono::Utc>>>,
}

impl<'a> Grants<'a> {
    pub fn new(state: &'a AppState) -> Self {
        Grants {
            state,
            benefits_of: HashMap::new(),
            benefits: HashMap::new(),
            keys_of: HashMap::new(),
            customer_deleted: HashMap::new(),
        }
    }

    /// When the customer was deleted, if it was.
    async fn deleted_at(
        &mut self,
        id: CustomerId,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, AppError> {
        if let Some(at) = self.customer_deleted.get(&id) {
            return Ok(*at);
        }
        let at = self
            .state
            .store
            .get::<crate::domain::customer::Customer>(&id.key())
            .await?
            .and_then(|c| c.value.deleted_at);
        self.customer_deleted.insert(id, at);
        Ok(at)
    }

    /// A benefit, if it exists (deleted ones included).
    pub async fn benefit(&mut self, id: BenefitId) -> Result<Option<&Benefit>, AppError> {
        if !self.benefits.contains_key(&id) {
            let b = self.state.store.get::<Benefit>(&id.key()).await?;
            self.benefits.insert(id, b.map(|b| b.value));
        }
        Ok(self.benefits.get(&id).and_then(Option::as_ref))
    }

    /// The benefits a product grants (none for a product that is gone).
    async fn benefit_ids(&mut self, product: ProductId) -> Result<Vec<BenefitId>, AppError> {
        if let Some(ids) = self.benefits_of.get(&product) {
            return Ok(ids.clone());
        }
        let ids = self
            .state
            .store
            .get::<Product>(&product.key())
            .await?
            .map(|p| p.value.benefit_ids)
            .unwrap_or_default();
        self.benefits_of.insert(product, ids.clone());
        Ok(ids)
    }

    /// The key a purchase created for a benefit, if any.
    async fn key_of(
        &mut self,
        customer: CustomerId,
        benefit: BenefitId,
        source: GrantSource,
    ) -> Result<Option<GrantedKey>, AppError> {
        if !self.keys_of.contains_key(&customer) {
            let tenants = [customer.key()];
            let mut ids =
                self.state
                    .store
                    .index_iter(LICENSE_KEY_BY_CUSTOMER, &tenants, Direction::Asc)?;
            let mut keys = Vec::new();
            while let Some(id) = ids.next().await {
                if let Some(key) = self.state.store.get::<LicenseKey>(&id?).await? {
                    keys.push(key.value);
                }
            }
            self.keys_of.insert(customer, keys);
        }
        let keys = self
            .keys_of
            .get(&customer)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        Ok(keys
            .iter()
            .find(|k| {
                k.benefit_id == benefit
                    && match source {
                        GrantSource::Order(id) => k.order_id == Some(id),
                        GrantSource::Subscription(id) => k.subscription_id == Some(id),
                    }
            })
            .map(|k| GrantedKey {
                id: k.id,
                display_key: k.display_key(),
            }))
    }

    async fn of_purchase(
        &mut self,
        organization_id: OrganizationId,
        customer_id: CustomerId,
        product_id: ProductId,
        source: GrantSource,
        created_at: chrono::DateTime<chrono::Utc>,
        revoked_at: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<Vec<BenefitGrant>, AppError> {
        let mut grants = Vec::new();
        // A deleted customer's grants are revoked then (Polar's rule), like a deleted
        // benefit's.
        let earliest = |a: Option<chrono::DateTime<chrono::Utc>>, b| match (a, b) {
            (Some(a), Some(b)) => Some(std::cmp::min(a, b)),
            (a, b) => a.or(b),
        };
        let revoked_at = earliest(revoked_at, self.deleted_at(customer_id).await?);
        for benefit_id in self.benefit_ids(product_id).await? {
            let Some(benefit) = self.benefit(benefit_id).await? else {
                continue;
            };
            // A deleted benefit's grants are revoked then (unless revoked before).
            let revoked_at = earliest(revoked_at, benefit.deleted_at);
            let mut g = BenefitGrant::new(
                organization_id,
                customer_id,
                benefit_id,
                source,
                created_at,
                revoked_at,
            );
            g.license_key = self.key_of(customer_id, benefit_id, source).await?;
            grants.push(g);
        }
        Ok(grants)
    }

    /// The grants of an order: a one-time purchase's (a subscription's orders grant
    /// nothing themselves; the subscription does).
    pub async fn of_order(&mut self, o: &Order) -> Result<Vec<BenefitGrant>, AppError> {
        if o.subscription_id.is_some() {
            return Ok(Vec::new());
        }
        let revoked_at = self.revoked_by_refund(o).await?;
        self.of_purchase(
            o.organization_id,
            o.customer_id,
            o.product_id,
            GrantSource::Order(o.id),
            o.created_at,
            revoked_at,
        )
        .await
    }

    /// When a refund of the order that revokes its benefits succeeded (the earliest), if
    /// one did: the order's grants end then.
    async fn revoked_by_refund(
        &mut self,
        o: &Order,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, AppError> {
        let tenants = [o.id.key()];
        let mut ids = self
            .state
            .store
            .index_iter(REFUND_OF_ORDER, &tenants, Direction::Asc)?;
        let mut earliest: Option<chrono::DateTime<chrono::Utc>> = None;
        while let Some(id) = ids.next().await {
            let Some(r) = self.state.store.get::<Refund>(&id?).await? else {
                continue;
            };
            let r = r.value;
            if r.revoke_benefits && r.status == RefundStatus::Succeeded {
                let at = r.modified_at.unwrap_or(r.created_at);
                earliest = Some(earliest.map_or(at, |e| e.min(at)));
            }
        }
        Ok(earliest)
    }

    /// The grants of a subscription that started, revoked once it ended.
    pub async fn of_subscription(
        &mut self,
        s: &Subscription,
    ) -> Result<Vec<BenefitGrant>, AppError> {
        if s.started_at.is_none() {
            return Ok(Vec::new());
        }
        self.of_purchase(
            s.organization_id,
            s.customer_id,
            s.product_id,
            GrantSource::Subscription(s.id),
            s.created_at,
            s.ended_at,
        )
        .await
    }
}

/// The `feature_flag` benefits purchase `source` grants its customer now (the grants
/// [`Grants::of_order`] and [`Grants::of_subscription`] derive, without their keys): none
/// once the order's benefits are revoked by a refund or the subscription has ended, and
/// the flags of the product it is on now (a plan change moves them). Tollgate's
/// entitlements of a license key (`crate::app::license_keys::entitlements_of`).
pub async fn feature_flags_of(
    state: &AppState,
    source: GrantSource,
) -> Result<Vec<Benefit>, AppError> {
    let mut grants = Grants::new(state);
    let (product_id, revoked_at) = match source {
        GrantSource::Order(id) => {
            let Some(o) = state.store.get::<Order>(&id.key()).await? else {
                return Ok(Vec::new());
            };
            if o.value.subscription_id.is_some() {
                return Ok(Vec::new());
            }
            let revoked = grants.revoked_by_refund(&o.value).await?;
            (o.value.product_id, revoked)
        }
        GrantSource::Subscription(id) => {
            let Some(s) = state.store.get::<Subscription>(&id.key()).await? else {
                return Ok(Vec::new());
            };
            if s.value.started_at.is_none() {
                return Ok(Vec::new());
            }
            (s.value.product_id, s.value.ended_at)
        }
    };
    if revoked_at.is_some() {
        return Ok(Vec::new());
    }
    let mut flags = Vec::new();
    for benefit_id in grants.benefit_ids(product_id).await? {
        if let Some(b) = grants.benefit(benefit_id).await? {
            if b.deleted_at.is_none() && b.kind() == BenefitType::FeatureFlag {
                flags.push(b.clone());
            }
        }
    }
    Ok(flags)
}

/// The records of an index over `tenants`, each once.
async fn records<R: Record>(
    state: &AppState,
    index: &'static str,
    tenants: &[Vec<u8>],
) -> Result<Vec<R>, AppError> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut ids = state.store.index_iter(index, tenants, Direction::Asc)?;
    while let Some(id) = ids.next().await {
        let id = id?;
        if seen.insert(id.clone()) {
            if let Some(r) = state.store.get::<R>(&id).await? {
                out.push(r.value);
            }
        }
    }
    Ok(out)
}

/// Every grant of the purchases found through the order index `orders` and the
/// subscription index `subscriptions` over `tenants`.
async fn grants_through(
    grants: &mut Grants<'_>,
    orders: &'static str,
    subscriptions: &'static str,
    tenants: &[Vec<u8>],
) -> Result<Vec<BenefitGrant>, AppError> {
    let state = grants.state;
    let mut out = Vec::new();
    for o in records::<Order>(state, orders, tenants).await? {
        out.extend(grants.of_order(&o).await?);
    }
    for s in records::<Subscription>(state, subscriptions, tenants).await? {
        out.extend(grants.of_subscription(&s).await?);
    }
    Ok(out)
}

/// The customers the filter names (`None`: any), within `orgs`.
async fn named_customers(
    state: &AppState,
    filter: &GrantFilter,
    orgs: &[OrganizationId],
) -> Result<Option<BTreeSet<CustomerId>>, AppError> {
    let mut named: Option<BTreeSet<CustomerId>> = None;
    if !filter.customer_id.is_empty() {
        named = Some(filter.customer_id.iter().copied().collect());
    }
    if !filter.external_customer_id.is_empty() {
        let mut by_external = BTreeSet::new();
        for external_id in &filter.external_customer_id {
            for org in orgs {
                if let Some(c) = customer_by_external_id(&state.store, *org, external_id).await? {
                    by_external.insert(c.value.id);
                }
            }
        }
        // Both filters: the customers both name (Polar applies both conditions).
        named = Some(match named {
            Some(ids) => ids.intersection(&by_external).copied().collect(),
            None => by_external,
        });
    }
    Ok(named)
}

/// One page of the grants `subject` reaches that `filter` keeps, and their total.
pub async fn list(
    state: &AppState,
    subject: Subject,
    filter: &GrantFilter,
    params: ListParams,
) -> Result<(Vec<BenefitGrant>, u64), AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let customers = named_customers(state, filter, &orgs).await?;
    let mut grants = Grants::new(state);
    let found = if let Some(benefit) = filter.benefit_id {
        // The purchases of the products granting the benefit.
        let products: Vec<Vec<u8>> =
            records::<Product>(state, PRODUCT_BY_BENEFIT, &[benefit.key()])
                .await?
                .iter()
                .map(|p| p.id.key())
                .collect();
        grants_through(
            &mut grants,
            ORDER_OF_PRODUCT,
            SUBSCRIPTION_OF_PRODUCT,
            &products,
        )
        .await?
    } else if let Some(customers) = &customers {
        let tenants: Vec<Vec<u8>> = customers.iter().map(|c| c.key()).collect();
        grants_through(
            &mut grants,
            ORDER_OF_CUSTOMER,
            SUBSCRIPTION_OF_CUSTOMER,
            &tenants,
        )
        .await?
    } else {
        let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
        let (started, _) = SubscriptionSort::StartedAt.index(false);
        grants_through(&mut grants, ORDER_BY_CREATED, started, &tenants).await?
    };
    let kept = found.into_iter().filter(|g| {
        orgs.contains(&g.organization_id)
            && filter.benefit_id.is_none_or(|b| g.benefit_id == b)
            && customers
                .as_ref()
                .is_none_or(|ids| ids.contains(&g.customer_id))
            && filter.is_granted.is_none_or(|want| g.is_granted() == want)
    });
    let sorting = &filter.sorting;
    let order = |a: &BenefitGrant, b: &BenefitGrant| {
        sorting.compare(a, b, compare).then_with(|| a.id.cmp(&b.id))
    };
    select_page(kept.map(Ok), &order, params)
}

/// `GET /v1/benefits/{id}/grants`: one page of the grants of a benefit `subject` sees
/// (else 404), that `filter` keeps.
pub async fn of_benefit(
    state: &AppState,
    subject: Subject,
    id: BenefitId,
    filter: GrantFilter,
    params: ListParams,
) -> Result<(Vec<BenefitGrant>, u64), AppError> {
    state.store.read_barrier().await?;
    let benefit = crate::app::catalog::benefits::benefit_for(state, subject, id).await?;
    let filter = GrantFilter {
        organization_id: vec![benefit.value.organization_id],
        benefit_id: Some(id),
        ..filter
    };
    list(state, subject, &filter, params).await
}

/// A customer's grants that are granted now, oldest first.
pub async fn granted_to(
    state: &AppState,
    customer: &Customer,
) -> Result<Vec<BenefitGrant>, AppError> {
    let mut grants = Grants::new(state);
    let tenants = [customer.id.key()];
    let mut found = grants_through(
        &mut grants,
        ORDER_OF_CUSTOMER,
        SUBSCRIPTION_OF_CUSTOMER,
        &tenants,
    )
    .await?;
    found.retain(|g| g.is_granted() && g.organization_id == customer.organization_id);
    found.sort_by(|a, b| compare_times(&a.created_at, &b.created_at).then(a.id.cmp(&b.id)));
    Ok(found)
}

/// The customers and benefits a page of grants shows, read once each.
pub async fn parts(
    state: &AppState,
    page: &[BenefitGrant],
) -> Result<(HashMap<CustomerId, Customer>, HashMap<BenefitId, Benefit>), AppError> {
    let mut customers = HashMap::new();
    let mut benefits = HashMap::new();
    for g in page {
        if let Entry::Vacant(e) = customers.entry(g.customer_id) {
            if let Some(c) = state.store.get::<Customer>(&g.customer_id.key()).await? {
                e.insert(c.value);
            }
        }
        if let Entry::Vacant(e) = benefits.entry(g.benefit_id) {
            if let Some(b) = state.store.get::<Benefit>(&g.benefit_id.key()).await? {
                e.insert(b.value);
            }
        }
    }
    Ok((customers, benefits))
}

/// The `files` of a grant's properties (Polar's `BenefitGrantDownloadablesProperties`):
/// `None` unless it is a granted grant of a downloadables benefit (Polar's revocation
/// leaves `{}`), else the files it gives now, exactly the portal's downloads of it
/// ([`crate::app::downloadables::files_of`]: files archived after the grant included, gone
/// ones left out).
pub async fn granted_files(
    state: &AppState,
    grant: &BenefitGrant,
    benefit: &Benefit,
) -> Result<Option<Vec<FileId>>, AppError> {
    if benefit.kind() != BenefitType::Downloadables || !grant.is_granted() {
        return Ok(None);
    }
    let files = crate::app::downloadables::files_of(state, grant, benefit).await?;
    Ok(Some(files.into_iter().map(|f| f.id).collect()))
}

/// [`granted_files`] of each grant of a page (by grant id), the benefits as [`parts`]
/// read them; grants without files are left out.
pub async fn files_of_grants(
    state: &AppState,
    page: &[BenefitGrant],
    benefits: &HashMap<BenefitId, Benefit>,
) -> Result<HashMap<uuid::Uuid, Vec<FileId>>, AppError> {
    let mut out = HashMap::new();
    for g in page {
        let Some(b) = benefits.get(&g.benefit_id) else {
            continue;
        };
        if let Some(files) = granted_files(state, g, b).await? {
            out.insert(g.id, files);
        }
    }
    Ok(out)
}

/// The subscriptions of a customer (started ones).
pub async fn subscriptions_of(
    state: &AppState,
    customer: &Customer,
) -> Result<Vec<Subscription>, AppError> {
    let tenants = [customer.id.key()];
    records::<Subscription>(state, SUBSCRIPTION_OF_CUSTOMER, &tenants).await
}
