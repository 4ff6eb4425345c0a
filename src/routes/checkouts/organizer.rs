//! The organizer endpoints, `/v1/checkouts/custom/` and `/v1/checkouts/custom/{id}`:
//! list, read, create and update checkouts with an access token.

use actix_web::{web, HttpRequest};
use tollgate_actors::checkout::{
    Checkout, CHECKOUT_BY_CREATED, CHECKOUT_BY_EXPIRES, CHECKOUT_PRODUCT_BY_CREATED,
    CHECKOUT_PRODUCT_BY_EXPIRES,
};

use crate::api::checkout::{CheckoutCreate, CheckoutUpdate, CheckoutView};
use crate::api::{Created, ListResource, Pagination};
use crate::app::access::organizations_for_list;
use crate::app::listing::{compare_times, directed, sorted_page_of};
use crate::app::views::checkout_view;
use crate::domain::ids::{CheckoutId, OrganizationId, ProductId};
use crate::domain::product::Product;
use crate::error::ApiResult;
use crate::extract::auth::{CheckoutsRead, CheckoutsWrite};
use crate::extract::{path_id, Auth, ListParams, QueryParams, SortField, Sorting, ValidJson};
use crate::state::AppState;

use crate::app;
use crate::app::checkout::checkout_for;

// ---------------------------------------------------------------------------------------
// Organizer endpoints.

#[derive(Debug, Clone, Copy, PartialEq)]
enum CheckoutSort {
    CreatedAt,
    ExpiresAt,
}

impl SortField for CheckoutSort {
    const FIELDS: &'static [(&'static str, CheckoutSort)] = &[
        ("created_at", CheckoutSort::CreatedAt),
        ("expires_at", CheckoutSort::ExpiresAt),
    ];
}

pub(super) async fn list(
    auth: Auth<CheckoutsRead>,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> ApiResult<web::Json<ListResource<CheckoutView>>> {
    let mut q = QueryParams::parse(req.query_string());
    let params = ListParams::from_query(&mut q);
    let orgs: Vec<OrganizationId> = q.ids("organization_id");
    let products: Vec<ProductId> = q.ids("product_id");
    let sorting = Sorting::<CheckoutSort>::from_query(&mut q, (CheckoutSort::CreatedAt, true));
    q.finish()?;
    state.store.read_barrier().await?;
    let orgs = organizations_for_list(&state, auth.subject(), &orgs).await?;
    // The first criterion is served by an index (equal values follow the id), the others
    // in memory.
    let (field, desc) = sorting.primary();
    let (index, tenants): (&'static str, Vec<Vec<u8>>) = if products.is_empty() {
        let index = match field {
            CheckoutSort::CreatedAt => CHECKOUT_BY_CREATED,
            CheckoutSort::ExpiresAt => CHECKOUT_BY_EXPIRES,
        };
        (index, orgs.iter().map(|o| o.key()).collect())
    } else {
        // Only products of the organizations the subject reaches.
        let mut tenants = Vec::new();
        for p in &products {
            if let Some(product) = state.store.get::<Product>(&p.key()).await? {
                if orgs.contains(&product.value.organization_id) {
                    tenants.push(p.key());
                }
            }
        }
        let index = match field {
            CheckoutSort::CreatedAt => CHECKOUT_PRODUCT_BY_CREATED,
            CheckoutSort::ExpiresAt => CHECKOUT_PRODUCT_BY_EXPIRES,
        };
        (index, tenants)
    };
    let several = sorting.several(|field, desc, a: &Checkout, b: &Checkout| {
        let ordering = match field {
            CheckoutSort::CreatedAt => compare_times(&a.created_at, &b.created_at),
            CheckoutSort::ExpiresAt => compare_times(&a.expires_at, &b.expires_at),
        };
        directed(ordering, desc)
    });
    let (items, total) = sorted_page_of::<Checkout>(
        &state,
        index,
        &tenants,
        desc,
        params,
        None,
        several.as_deref(),
    )
    .await?;
    let items =
        futures_util::future::try_join_all(items.iter().map(|c| checkout_view(&state, c))).await?;
    Ok(web::Json(ListResource {
        items,
        pagination: Pagination::new(total, params.limit),
    }))
}

pub(super) async fn get(
    auth: Auth<CheckoutsRead>,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> ApiResult<web::Json<CheckoutView>> {
    let id: CheckoutId = path_id("id", &id)?;
    let checkout = checkout_for(&state, auth.subject(), id).await?;
    Ok(web::Json(checkout_view(&state, &checkout).await?))
}

pub(crate) async fn create(
    auth: Auth<CheckoutsWrite>,
    state: web::Data<AppState>,
    body: ValidJson<CheckoutCreate>,
) -> ApiResult<Created<CheckoutView>> {
    let checkout = app::checkout::create(&state, auth.subject(), body.into_inner()).await?;
    Ok(Created(checkout_view(&state, &checkout).await?))
}

pub(super) async fn update(
    auth: Auth<CheckoutsWrite>,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: ValidJson<CheckoutUpdate>,
) -> ApiResult<web::Json<CheckoutView>> {
    let id: CheckoutId = path_id("id", &id)?;
    let updated =
        app::checkout::update(&state, auth.subject(), id, body.into_inner().into()).await?;
    Ok(web::Json(checkout_view(&state, &updated).await?))
}
