//! Exports: every order, subscription, customer and license key a subject reaches, read
//! page by page from the store's indexes (newest first) for a CSV download (Polar's
//! `order/export.py`, `subscription/export.py`, `customers/export`; the license-key export
//! is Tollgate's own). The rows are typed; how they are written (CSV, time zone, column
//! choice) is the adapter's.
//!
//! An export is a cursor over an index read lazily (`Store::index_iter`): each
//! [`next_page`](OrderExport::next_page) reads at most [`PAGE`] entries and the records they
//! name, so the memory never grows with the store, and a download that is dropped stops
//! reading.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use tollgate_storage::{Direction, IndexIter, Record};

use crate::app::access::organizations_for_list;
use crate::app::views::order_view;
use crate::auth::Subject;
use crate::domain::benefit::Benefit;
use crate::domain::customer::{Address, Customer, CUSTOMER_BY_CREATED};
use crate::domain::discount::Discount;
use crate::domain::ids::{BenefitId, CustomerId, OrganizationId, ProductId};
use crate::domain::metadata::Metadata;
use crate::domain::order::{Order, ORDER_BY_CREATED};
use crate::domain::product::Product;
use crate::error::AppError;
use crate::state::AppState;
use tollgate_actors::license_key::{LicenseKey, LICENSE_KEY_BY_CREATED};
use tollgate_actors::subscription::{Subscription, SUBSCRIPTION_BY_STARTED};

/// Index entries read per page.
pub const PAGE: usize = 100;

/// Index entries of `tenants` newest first, the records they name kept by `keep`, until
/// `stop` says the rest are out of range (the index is in time order).
struct Cursor<R> {
    ids: Option<IndexIter>,
    keep: Box<dyn Fn(&R) -> bool>,
    stop: Box<dyn Fn(&R) -> bool>,
}

impl<R: Record> Cursor<R> {
    fn new(
        state: &AppState,
        index: &'static str,
        tenants: &[Vec<u8>],
        keep: Box<dyn Fn(&R) -> bool>,
        stop: Box<dyn Fn(&R) -> bool>,
    ) -> Result<Self, AppError> {
        let ids = if tenants.is_empty() {
            None
        } else {
            Some(state.store.index_iter(index, tenants, Direction::Desc)?)
        };
        Ok(Cursor { ids, keep, stop })
    }

    /// The next records kept (possibly none while more follow), or `None` at the end.
    async fn next(&mut self, state: &AppState) -> Result<Option<Vec<R>>, AppError> {
        let Some(ids) = self.ids.as_mut() else {
            return Ok(None);
        };
        let mut keys = Vec::with_capacity(PAGE);
        while keys.len() < PAGE {
            match ids.next().await {
                Some(id) => keys.push(id?),
                None => break,
            }
        }
        if keys.len() < PAGE {
            self.ids = None;
        }
        if keys.is_empty() {
            return Ok(None);
        }
        let mut out = Vec::with_capacity(keys.len());
        for record in state.store.get_many::<R>(&keys).await? {
            if (self.stop)(&record.value) {
                self.ids = None;
                break;
            }
            if (self.keep)(&record.value) {
                out.push(record.value);
            }
        }
        Ok(Some(out))
    }
}

/// Whether `at` lies after `after` and before `before` (each bound exclusive, as Polar's
/// `created_after` / `created_before` compare).
fn within(at: DateTime<Utc>, after: Option<DateTime<Utc>>, before: Option<DateTime<Utc>>) -> bool {
    after.is_none_or(|a| at > a) && before.is_none_or(|b| at < b)
}

/// Records looked up once per export (customers, products, discounts, benefits).
struct Lookup<K, V> {
    seen: HashMap<K, Option<V>>,
}

impl<K: std::hash::Hash + Eq + Copy, V: Record + Clone> Lookup<K, V> {
    fn new() -> Self {
        Lookup {
            seen: HashMap::new(),
        }
    }

    async fn get(&mut self, state: &AppState, id: K, key: Vec<u8>) -> Result<Option<V>, AppError> {
        if let Some(v) = self.seen.get(&id) {
            return Ok(v.clone());
        }
        // Bounded: an export meets as many as the organization has; cleared past 10,000.
        if self.seen.len() > 10_000 {
            self.seen.clear();
        }
        let v = state.store.get::<V>(&key).await?.map(|s| s.value);
        self.seen.insert(id, v.clone());
        Ok(v)
    }
}

// ---------------------------------------------------------------------------- orders

/// Which orders an export holds (Polar's `GET /v1/orders/export` filters).
#[derive(Debug, Clone, Default)]
pub struct OrderExportFilter {
    /// Of these organizations (all the subject reaches when empty).
    pub organization_id: Vec<OrganizationId>,
    pub product_id: Vec<ProductId>,
    /// Polar's status names (`paid`, `refunded`, …); any when empty.
    pub status: Vec<String>,
    pub created_after: Option<DateTime<Utc>>,
    pub created_before: Option<DateTime<Utc>>,
}

/// One order as an export shows it (amounts in the currency's minor unit).
#[derive(Debug, Clone, PartialEq)]
pub struct OrderRow {
    pub email: String,
    pub created_at: DateTime<Utc>,
    /// The order's description (the product's name).
    pub product: String,
    pub net_amount: i64,
    pub currency: String,
    pub status: &'static str,
    pub invoice_number: String,
    pub customer_name: Option<String>,
    pub billing_name: Option<String>,
    pub billing_country: Option<String>,
    pub subtotal_amount: i64,
    pub discount_amount: i64,
    pub tax_amount: i64,
    pub total_amount: i64,
    pub refunded_amount: i64,
    pub billing_reason: &'static str,
}

/// The orders of an export, newest first.
pub struct OrderExport {
    cursor: Cursor<Order>,
}

/// Starts an export of the orders `subject` reaches.
pub async fn orders(
    state: &AppState,
    subject: Subject,
    filter: OrderExportFilter,
) -> Result<OrderExport, AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
    let after = filter.created_after;
    let keep = move |o: &Order| {
        orgs.contains(&o.organization_id)
            && (filter.product_id.is_empty() || filter.product_id.contains(&o.product_id))
            && (filter.status.is_empty() || filter.status.iter().any(|s| s == o.status.as_str()))
            && within(o.created_at, filter.created_after, filter.created_before)
    };
    let stop = move |o: &Order| after.is_some_and(|a| o.created_at <= a);
    Ok(OrderExport {
        cursor: Cursor::new(
            state,
            ORDER_BY_CREATED,
            &tenants,
            Box::new(keep),
            Box::new(stop),
        )?,
    })
}

impl OrderExport {
    /// The next rows (possibly none while more follow), `None` once every order is read.
    pub async fn next_page(&mut self, state: &AppState) -> Result<Option<Vec<OrderRow>>, AppError> {
        let Some(orders) = self.cursor.next(state).await? else {
            return Ok(None);
        };
        let mut rows = Vec::with_capacity(orders.len());
        for o in &orders {
            let view = order_view(state, o).await?;
            rows.push(OrderRow {
                email: view.customer.email,
                created_at: o.created_at,
                product: view.description,
                net_amount: view.net_amount,
                currency: o.currency.clone(),
                status: o.status.as_str(),
                invoice_number: view.invoice_number,
                customer_name: view.customer.name,
                billing_name: view.billing_name,
                billing_country: country(o.billing_address.as_ref()),
                subtotal_amount: view.subtotal_amount,
                discount_amount: view.discount_amount,
                tax_amount: o.tax_amount,
                total_amount: view.total_amount,
                refunded_amount: o.refunded_amount,
                billing_reason: o.billing_reason.as_str(),
            });
        }
        Ok(Some(rows))
    }
}

fn country(address: Option<&Address>) -> Option<String> {
    address.map(|a| a.country.clone())
}

// ---------------------------------------------------------------------- subscriptions

/// Which subscriptions an export holds (Polar's `GET /v1/subscriptions/export` filters).
#[derive(Debug, Clone, Default)]
pub struct SubscriptionExportFilter {
    pub organization_id: Vec<OrganizationId>,
    pub product_id: Vec<ProductId>,
    /// Polar's status names (`active`, `canceled`, …); any when empty.
    pub status: Vec<String>,
    pub cancel_at_period_end: Option<bool>,
    pub started_after: Option<DateTime<Utc>>,
    pub started_before: Option<DateTime<Utc>>,
}

/// One subscription as an export shows it (amounts in the currency's minor unit).
#[derive(Debug, Clone, PartialEq)]
pub struct SubscriptionRow {
    pub email: String,
    pub started_at: Option<DateTime<Utc>>,
    pub product: String,
    /// Per period, after any discount, before tax (Tollgate's subscription amount).
    pub amount: i64,
    pub currency: String,
    pub status: &'static str,
    pub recurring_interval: &'static str,
    pub recurring_interval_count: u32,
    pub customer_name: Option<String>,
    pub billing_name: Option<String>,
    pub billing_country: Option<String>,
    /// The discount's code, else its name.
    pub discount: Option<String>,
    /// The seats of a seat-based subscription (none for other prices).
    pub seats: Option<u32>,
    pub current_period_start: DateTime<Utc>,
    pub current_period_end: Option<DateTime<Utc>>,
    pub cancel_at_period_end: bool,
    pub canceled_at: Option<DateTime<Utc>>,
    pub ends_at: Option<DateTime<Utc>>,
    pub ended_at: Option<DateTime<Utc>>,
    pub cancellation_reason: Option<String>,
    pub trial_start: Option<DateTime<Utc>>,
    pub trial_end: Option<DateTime<Utc>>,
}

/// The subscriptions of an export, the latest started first.
pub struct SubscriptionExport {
    cursor: Cursor<Subscription>,
    customers: Lookup<CustomerId, Customer>,
    products: Lookup<ProductId, Product>,
    discounts: Lookup<crate::domain::ids::DiscountId, Discount>,
}

/// Starts an export of the (started) subscriptions `subject` reaches.
pub async fn subscriptions(
    state: &AppState,
    subject: Subject,
    filter: SubscriptionExportFilter,
) -> Result<SubscriptionExport, AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
    let after = filter.started_after;
    let keep = move |s: &Subscription| {
        s.started_at
            .is_some_and(|at| within(at, filter.started_after, filter.started_before))
            && orgs.contains(&s.organization_id)
            && (filter.product_id.is_empty() || filter.product_id.contains(&s.product_id))
            && (filter.status.is_empty() || filter.status.iter().any(|x| x == s.status.as_str()))
            && filter
                .cancel_at_period_end
                .is_none_or(|c| c == s.cancel_at_period_end)
    };
    let stop =
        move |s: &Subscription| after.is_some_and(|a| s.started_at.is_some_and(|at| at <= a));
    Ok(SubscriptionExport {
        cursor: Cursor::new(
            state,
            SUBSCRIPTION_BY_STARTED,
            &tenants,
            Box::new(keep),
            Box::new(stop),
        )?,
        customers: Lookup::new(),
        products: Lookup::new(),
        discounts: Lookup::new(),
    })
}

impl SubscriptionExport {
    /// The next rows (possibly none while more follow), `None` once every one is read.
    pub async fn next_page(
        &mut self,
        state: &AppState,
    ) -> Result<Option<Vec<SubscriptionRow>>, AppError> {
        let Some(subscriptions) = self.cursor.next(state).await? else {
            return Ok(None);
        };
        let mut rows = Vec::with_capacity(subscriptions.len());
        for s in subscriptions {
            let customer = self
                .customers
                .get(state, s.customer_id, s.customer_id.key())
                .await?;
            let product = self
                .products
                .get(state, s.product_id, s.product_id.key())
                .await?;
            let discount = match s.discount_id {
                Some(id) => self.discounts.get(state, id, id.key()).await?,
                None => None,
            };
            rows.push(SubscriptionRow {
                email: customer
                    .as_ref()
                    .map_or_else(|| s.customer_email.clone(), |c| c.email.clone()),
                started_at: s.started_at,
                product: product.map_or_else(|| s.product_name.clone(), |p| p.name),
                amount: s.amount.unwrap_or(0),
                currency: s
                    .currency
                    .clone()
                    .unwrap_or_else(|| crate::domain::currency::Currency::DEFAULT.into()),
                status: s.status.as_str(),
                recurring_interval: s.recurring_interval.as_str(),
                recurring_interval_count: s.recurring_interval_count,
                customer_name: customer.as_ref().and_then(|c| c.name.clone()),
                billing_name: customer.as_ref().and_then(|c| c.name.clone()),
                billing_country: customer
                    .as_ref()
                    .and_then(|c| country(c.billing_address.as_ref())),
                discount: discount.map(|d| d.code.unwrap_or(d.name)),
                seats: s.seats,
                current_period_start: s.current_period_start,
                current_period_end: s.current_period_end,
                cancel_at_period_end: s.cancel_at_period_end,
                canceled_at: s.canceled_at,
                ends_at: s.ends_at,
                ended_at: s.ended_at,
                cancellation_reason: s.customer_cancellation_reason.clone(),
                trial_start: s.trial_start,
                trial_end: s.trial_end,
            });
        }
        Ok(Some(rows))
    }
}

// -------------------------------------------------------------------------- customers

/// One customer as an export shows it (Polar's fixed columns).
#[derive(Debug, Clone, PartialEq)]
pub struct CustomerRow {
    pub id: CustomerId,
    pub external_id: Option<String>,
    pub created_at: DateTime<Utc>,
    pub email: String,
    pub name: Option<String>,
    pub tax_id: Option<String>,
    pub billing_address: Option<Address>,
    pub metadata: Metadata,
}

/// The customers of an export, newest first (deleted ones left out, as the list does).
pub struct CustomerExport {
    cursor: Cursor<Customer>,
}

/// Starts an export of the customers `subject` reaches (of `organization_id` when given).
pub async fn customers(
    state: &AppState,
    subject: Subject,
    organization_id: Vec<OrganizationId>,
) -> Result<CustomerExport, AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &organization_id).await?;
    let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
    let keep = move |c: &Customer| c.deleted_at.is_none() && orgs.contains(&c.organization_id);
    Ok(CustomerExport {
        cursor: Cursor::new(
            state,
            CUSTOMER_BY_CREATED,
            &tenants,
            Box::new(keep),
            Box::new(|_| false),
        )?,
    })
}

impl CustomerExport {
    /// The next rows (possibly none while more follow), `None` once every one is read.
    pub async fn next_page(
        &mut self,
        state: &AppState,
    ) -> Result<Option<Vec<CustomerRow>>, AppError> {
        let Some(customers) = self.cursor.next(state).await? else {
            return Ok(None);
        };
        Ok(Some(
            customers
                .into_iter()
                .map(|c| CustomerRow {
                    id: c.id,
                    external_id: c.external_id,
                    created_at: c.created_at,
                    email: c.email,
                    name: c.name,
                    tax_id: c.tax_id.map(|t| t.value),
                    billing_address: c.billing_address,
                    metadata: c.metadata,
                })
                .collect(),
        ))
    }
}

// ----------------------------------------------------------------------- license keys

/// Which keys an export holds (Tollgate's `GET /v1/license-keys/export`).
#[derive(Debug, Clone, Default)]
pub struct LicenseKeyExportFilter {
    pub organization_id: Vec<OrganizationId>,
    pub benefit_id: Vec<BenefitId>,
    /// `granted`, `revoked` or `disabled`; any when empty.
    pub status: Vec<String>,
}

/// One license key as an export shows it: never the key itself, only its masked form.
#[derive(Debug, Clone, PartialEq)]
pub struct LicenseKeyRow {
    pub id: crate::domain::ids::LicenseKeyId,
    /// `****-` and the key's last six characters.
    pub display_key: String,
    pub email: String,
    /// The benefit's description.
    pub benefit: String,
    pub status: &'static str,
    pub usage: i64,
    pub limit_usage: Option<i64>,
    pub validations: i64,
    pub limit_activations: Option<i64>,
    /// Live activations (not deactivated).
    pub activations: usize,
    pub expires_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub last_validated_at: Option<DateTime<Utc>>,
}

/// The keys of an export, newest first.
pub struct LicenseKeyExport {
    cursor: Cursor<LicenseKey>,
    customers: Lookup<CustomerId, Customer>,
    benefits: Lookup<BenefitId, Benefit>,
}

/// Starts an export of the license keys `subject` reaches.
pub async fn license_keys(
    state: &AppState,
    subject: Subject,
    filter: LicenseKeyExportFilter,
) -> Result<LicenseKeyExport, AppError> {
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(state, subject, &filter.organization_id).await?;
    let tenants: Vec<Vec<u8>> = orgs.iter().map(|o| o.key()).collect();
    let keep = move |k: &LicenseKey| {
        orgs.contains(&k.organization_id)
            && (filter.benefit_id.is_empty() || filter.benefit_id.contains(&k.benefit_id))
            && (filter.status.is_empty() || filter.status.iter().any(|s| s == k.status.as_str()))
    };
    Ok(LicenseKeyExport {
        cursor: Cursor::new(
            state,
            LICENSE_KEY_BY_CREATED,
            &tenants,
            Box::new(keep),
            Box::new(|_| false),
        )?,
        customers: Lookup::new(),
        benefits: Lookup::new(),
    })
}

impl LicenseKeyExport {
    /// The next rows (possibly none while more follow), `None` once every key is read.
    pub async fn next_page(
        &mut self,
        state: &AppState,
    ) -> Result<Option<Vec<LicenseKeyRow>>, AppError> {
        let Some(keys) = self.cursor.next(state).await? else {
            return Ok(None);
        };
        let mut rows = Vec::with_capacity(keys.len());
        for k in keys {
            let customer = self
                .customers
                .get(state, k.customer_id, k.customer_id.key())
                .await?;
            let benefit = self
                .benefits
                .get(state, k.benefit_id, k.benefit_id.key())
                .await?;
            rows.push(LicenseKeyRow {
                id: k.id,
                display_key: k.display_key(),
                email: customer.map(|c| c.email).unwrap_or_default(),
                benefit: benefit.map(|b| b.description).unwrap_or_default(),
                status: k.status.as_str(),
                usage: k.usage,
                limit_usage: k.limit_usage,
                validations: k.validations,
                limit_activations: k.limit_activations,
                activations: k
                    .activations
                    .iter()
                    .filter(|a| a.deleted_at.is_none())
                    .count(),
                expires_at: k.expires_at,
                created_at: k.created_at,
                last_validated_at: k.last_validated_at,
            });
        }
        Ok(Some(rows))
    }
}

#[cfg(test)]
#[path = "exports_tests.rs"]
mod tests;
