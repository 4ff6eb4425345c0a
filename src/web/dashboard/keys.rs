//! License keys: found by key or by customer, with the organization's signing keys
//! (`signing`); one key's status, usage, activations and validations, with its changes
//! (status, expiry, limits) and deactivations.

use actix_web::{web, HttpRequest};
use askama::Template;

use super::{
    fmt, form_problem, of_org, posted, see_other, signing, Dash, Fail, Layout, ListQuery,
    PageResult, Pager,
};
use crate::api::license_signing::LicenseKeySigning;
use crate::app::catalog::customers::{self, CustomerFilter, CustomerSort};
use crate::app::license_keys::{self, directory, key_for, live_key};
use crate::app::views::{key_customer, with_customers};
use crate::domain::customer::Customer;
use crate::domain::ids::LicenseKeyId;
use crate::extract::{path_id, ListParams, Sorting};
use crate::state::AppState;
use crate::web::dashboard::forms::{self, LicenseKeyForm};
use tollgate_actors::license_key::{Activation, LicenseKey};

/// Customers a key search shows at most.
const CUSTOMER_MATCHES: u64 = 20;

#[derive(Template)]
#[template(path = "dashboard/license_keys.html")]
struct KeysPage {
    layout: Layout,
    q: ListQuery,
    /// Each key with its customer (the ones a search found, with a search).
    keys: Vec<(LicenseKey, Customer)>,
    /// The customers a search matched.
    customers: Vec<Customer>,
    /// The search, when there was one.
    searched: Option<String>,
    pager: Pager,
    /// The organization's signing keys and settings (the Signing section).
    signing: LicenseKeySigning,
}

/// `?query=`: a whole key goes straight to it; otherwise the keys it finds (a fragment of
/// the key, or their customer's e-mail, name, external id or id: `license_keys::search`),
/// newest first, and the customers whose e-mail or name match, with links to their keys.
/// Without a query: every key, newest first.
pub async fn license_keys(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path, "license-keys", "License keys").await?;
    let q = ListQuery::of(&req);
    let searched = q.search();
    let params = q.params();
    let (keys, customers, total) = match &searched {
        Some(needle) => {
            if let Some(id) = directory()
                .resolve(&state.store, layout.org, needle)
                .await?
            {
                return Ok(see_other(&layout.at(&format!("/license-keys/{id}"))));
            }
            let filter = CustomerFilter {
                organization_id: vec![layout.org],
                query: Some(needle.clone()),
                sorting: Sorting::by(CustomerSort::CreatedAt, true),
                ..CustomerFilter::default()
            };
            let first = ListParams {
                page: 1,
                limit: CUSTOMER_MATCHES,
            };
            let (found, _) = customers::list(&state, dash.subject(), &filter, first).await?;
            let key_filter = license_keys::KeyFilter {
                orgs: &[layout.org],
                ..license_keys::KeyFilter::default()
            };
            let records =
                license_keys::search(&state, dash.subject(), &key_filter, needle, true, params)
                    .await;
            let (keys, total) = license_keys::durable_answer(&state, records)
                .await
                .map_err(crate::error::ApiError::from)?;
            (with_customers(&state, keys).await?, found, total)
        }
        None => {
            let records =
                license_keys::records(&state, dash.subject(), &[layout.org], &[], true, params)
                    .await;
            let (keys, total) = license_keys::durable_answer(&state, records)
                .await
                .map_err(crate::error::ApiError::from)?;
            (with_customers(&state, keys).await?, Vec::new(), total)
        }
    };
    let pager = Pager::new(total, params, &layout.at("/license-keys"), &req);
    let signing = signing::of(&dash, &layout).await?;
    dash.page(
        200,
        &KeysPage {
            keys,
            customers,
            searched,
            pager,
            signing,
            layout,
            q,
        },
    )
}

#[derive(Template)]
#[template(path = "dashboard/license_key.html")]
struct KeyPage {
    layout: Layout,
    key: LicenseKey,
    customer: Customer,
    form: LicenseKeyForm,
    errors: Vec<String>,
    saved: bool,
}

impl KeyPage {
    /// Where the key's forms post.
    fn action(&self) -> String {
        self.layout.at(&format!("/license-keys/{}", self.key.id))
    }

    /// The activations in use (deactivated ones are kept on the key, not shown).
    fn activations(&self) -> Vec<&Activation> {
        self.key
            .activations
            .iter()
            .filter(|a| a.deleted_at.is_none())
            .collect()
    }
}

/// A key of the page's organization (else 404), as its actor holds it: with the
/// validations answered so far, which the store may receive only later.
async fn key_of(dash: &Dash, layout: &Layout, id: &str) -> Result<(LicenseKey, Customer), Fail> {
    let id: LicenseKeyId = path_id("id", id)?;
    let stored = key_for(&dash.state, dash.subject(), id).await;
    let stored = license_keys::durable_answer(&dash.state, stored)
        .await
        .map_err(crate::error::ApiError::from)?;
    of_org(layout, stored.organization_id, ())?;
    let key = live_key(&dash.state, id)
        .await
        .map_err(crate::error::ApiError::from)?;
    let customer = key_customer(&dash.state, &key).await?;
    Ok((key, customer))
}

pub async fn license_key(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let dash = Dash::of(&state, &req).await?;
    let layout = dash.layout(&path.0, "license-keys", "License key").await?;
    let (key, customer) = key_of(&dash, &layout, &path.1).await?;
    dash.page(
        200,
        &KeyPage {
            form: LicenseKeyForm::of(&key),
            key,
            customer,
            layout,
            errors: Vec::new(),
            saved: ListQuery::of(&req).saved(),
        },
    )
}

/// A quick action (`quick` with `status` alone: disable, revoke, grant again) or the whole
/// form.
pub async fn license_key_save(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let form: LicenseKeyForm = posted(&bytes)?;
    let (org, id) = path.into_inner();
    let layout = dash.layout(&org, "license-keys", "License key").await?;
    let (key, customer) = key_of(&dash, &layout, &id).await?;
    match forms::update_license_key(&state, dash.subject(), &key, &form).await {
        Ok(_) => Ok(see_other(
            &layout.at(&format!("/license-keys/{id}?saved=1")),
        )),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            dash.page(
                status,
                &KeyPage {
                    layout,
                    key,
                    customer,
                    form,
                    errors,
                    saved: false,
                },
            )
        }
    }
}

/// Deactivates one activation of a key of the page's organization, as the key's holder
/// would through `POST /v1/customer-portal/license-keys/deactivate`.
pub async fn deactivate(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String, String)>,
    bytes: web::Bytes,
) -> PageResult {
    let dash = Dash::posted(&state, &req, &bytes).await?;
    let (org, id, activation) = path.into_inner();
    let layout = dash.layout(&org, "license-keys", "License key").await?;
    let (key, customer) = key_of(&dash, &layout, &id).await?;
    match forms::deactivate(&state, &key, &activation).await {
        Ok(()) => Ok(see_other(&layout.at(&format!("/license-keys/{id}")))),
        Err(e) => {
            let (status, errors) = form_problem(e)?;
            dash.page(
                status,
                &KeyPage {
                    form: LicenseKeyForm::of(&key),
                    layout,
                    key,
                    customer,
                    errors,
                    saved: false,
                },
            )
        }
    }
}
