//! Checkout sessions: the organizer endpoints (token), the client endpoints (client
//! secret only; any `Authorization` header is ignored), and the purchase itself:
//! confirm → charge → one atomic write of the checkout, order, subscription and license keys.
//!
//! This file holds the routes, the checkout aggregate's errors as HTTP errors, and reading
//! and rendering a checkout, which every part shares. The endpoints live in `organizer`
//! (`/v1/checkouts/custom/`, token) and `client` (`/v1/checkouts/custom/client/{secret}`);
//! `fields` resolves request fields into domain values; `completion` confirms, charges and
//! settles a purchase, and holds the start-up recovery and the expiry sweep.

mod client;
mod completion;
mod fields;
pub(crate) mod organizer;

pub use client::FAULT_AFTER_CONFIRM;
pub use completion::{
    apply_outcome, complete_stale_confirmed, key_expiry, period_end, recover, settle, sweep_expired,
};

use actix_web::web;
use serde_json::Value;
use tollgate_actors::checkout::{Checkout, CheckoutError, CheckoutStatus, GetCheckout, Issue};
use tollgate_actors::ActorError;

use crate::api::checkout::{
    CheckoutContext, CheckoutPublic, CheckoutPublicConfirmed, CheckoutView,
};
use crate::api::organization::OrganizationView;
use crate::api::product::ProductPrice;
use crate::domain::ids::CheckoutId;
use crate::domain::organization::Organization;
use crate::domain::product::Product;
use crate::error::{ApiError, FieldError};
use crate::extract::Subject;
use crate::routes::access::can_access;
use crate::routes::products::{render_attached_custom_fields, render_checkout_product};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/checkouts/custom/", { get => organizer::list, post => organizer::create });
    crate::resource!(cfg, "/v1/checkouts/custom/client/{client_secret}", {
        get => client::client_get,
        patch => client::client_update,
    });
    crate::resource!(cfg, "/v1/checkouts/custom/client/{client_secret}/confirm", {
        post => client::client_confirm,
    });
    crate::resource!(cfg, "/v1/checkouts/custom/{id}", { get => organizer::get, patch => organizer::update });
}

// ---------------------------------------------------------------------------------------
// Errors of the checkout aggregate, as HTTP errors.

fn issues_to_error(issues: Vec<Issue>) -> ApiError {
    ApiError::Validation(
        issues
            .into_iter()
            .map(|i| {
                let mut loc = vec![Value::from("body")];
                loc.extend(i.loc.into_iter().map(Value::from));
                FieldError::new(i.kind, loc, i.msg, Value::Null)
            })
            .collect(),
    )
}

fn checkout_error(e: ActorError<CheckoutError>) -> ApiError {
    match e {
        ActorError::Domain(CheckoutError::NotOpen(status)) => ApiError::NotOpenCheckout {
            id: String::new(),
            status: status.as_str().to_string(),
        },
        ActorError::Domain(CheckoutError::Invalid(issues)) => issues_to_error(issues),
        ActorError::Domain(CheckoutError::WrongStatus { expected, found }) => {
            ApiError::Internal(format!(
                "checkout transition expected {} but found {}",
                expected.as_str(),
                found.as_str()
            ))
        }
        ActorError::Domain(CheckoutError::Superseded) => ApiError::Conflict(
            "The checkout's payment attempt changed meanwhile; retry the request.".into(),
        ),
        ActorError::NotFound => ApiError::not_found(),
        ActorError::AlreadyExists => ApiError::Conflict("The checkout already exists.".into()),
        ActorError::Unavailable(_) => ApiError::Unavailable,
        ActorError::Storage(s) => s.into(),
    }
}

fn not_open(c: &Checkout, status: CheckoutStatus) -> ApiError {
    ApiError::NotOpenCheckout {
        id: c.id.to_string(),
        status: status.as_str().to_string(),
    }
}

/// Names the checkout in a `NotOpenCheckout` raised inside the actor.
fn with_id(e: ApiError, id: CheckoutId) -> ApiError {
    match e {
        ApiError::NotOpenCheckout { status, .. } => ApiError::NotOpenCheckout {
            id: id.to_string(),
            status,
        },
        other => other,
    }
}

fn widen(e: ActorError) -> ActorError<CheckoutError> {
    match e {
        ActorError::NotFound => ActorError::NotFound,
        ActorError::AlreadyExists => ActorError::AlreadyExists,
        ActorError::Unavailable(u) => ActorError::Unavailable(u),
        ActorError::Storage(s) => ActorError::Storage(s),
        ActorError::Domain(never) => match never {},
    }
}

// ---------------------------------------------------------------------------------------
// Reading and rendering.

async fn load(state: &AppState, id: CheckoutId) -> Result<Checkout, ApiError> {
    state
        .checkouts
        .call(id, GetCheckout)
        .await
        .map_err(checkout_error)
}

/// The checkout if the subject may see it (its organization), else 404.
async fn checkout_for(
    state: &AppState,
    subject: Subject,
    id: CheckoutId,
) -> Result<Checkout, ApiError> {
    // Read the record first so that an unknown id never spawns an actor.
    let Some(stored) = state.store.get::<Checkout>(&id.key()).await? else {
        return Err(ApiError::not_found());
    };
    if !can_access(state, subject, stored.value.organization_id).await? {
        return Err(ApiError::not_found());
    }
    load(state, id).await
}

/// The checkout of a client secret; 404 once it has expired, whatever its status (Polar).
async fn checkout_by_secret(state: &AppState, secret: &str) -> Result<Checkout, ApiError> {
    let Some(id) = state
        .store
        .lookup_unique(&Checkout::secret_key(secret))
        .await?
    else {
        return Err(ApiError::not_found());
    };
    let id = CheckoutId::from_key(&id)
        .ok_or_else(|| ApiError::internal("bad checkout id in the secret index"))?;
    let checkout = load(state, id).await?;
    if state.now() >= checkout.expires_at {
        return Err(ApiError::not_found());
    }
    Ok(checkout)
}

async fn product_of(state: &AppState, c: &Checkout) -> Result<Product, ApiError> {
    state
        .store
        .get::<Product>(&c.product_id.key())
        .await?
        .map(|p| p.value)
        .ok_or_else(|| ApiError::internal("a checkout's product is missing"))
}

/// The product, URLs and custom fields a rendering shows, as they are now.
async fn context(state: &AppState, c: &Checkout) -> Result<CheckoutContext, ApiError> {
    let product = product_of(state, c).await?;
    let base = &state.public_url;
    Ok(CheckoutContext {
        url: format!("{base}/checkout/{}", c.client_secret),
        success_url: c.success_url(&format!("{base}/checkout/{}/confirmation", c.client_secret)),
        product: render_checkout_product(state, &product).await?,
        product_price: ProductPrice::new(product.id, &c.price),
        attached_custom_fields: render_attached_custom_fields(state, &product).await?,
    })
}

async fn organization_of(state: &AppState, c: &Checkout) -> Result<OrganizationView, ApiError> {
    state
        .store
        .get::<Organization>(&c.organization_id.key())
        .await?
        .map(|o| OrganizationView::from(&o.value))
        .ok_or_else(|| ApiError::internal("a checkout's organization is missing"))
}

/// `Checkout`, with its status as seen now.
pub(crate) async fn render(state: &AppState, c: &Checkout) -> Result<CheckoutView, ApiError> {
    let status = c.effective_status(state.now());
    Ok(CheckoutView::new(c, status, context(state, c).await?))
}

/// `CheckoutPublic`, showing `status`.
async fn render_public(
    state: &AppState,
    c: &Checkout,
    status: CheckoutStatus,
) -> Result<CheckoutPublic, ApiError> {
    Ok(CheckoutPublic::new(
        c,
        status,
        context(state, c).await?,
        organization_of(state, c).await?,
    ))
}

/// `CheckoutPublicConfirmed`: the confirm answer, with the customer session's token.
async fn render_confirmed(
    state: &AppState,
    c: &Checkout,
    session_token: String,
) -> Result<CheckoutPublicConfirmed, ApiError> {
    Ok(CheckoutPublicConfirmed::new(
        c,
        context(state, c).await?,
        organization_of(state, c).await?,
        session_token,
    ))
}
