//! Customer sessions a seller opens (Polar's `customer_session/service.py`): a
//! `polar_cst_…` token for one customer, valid an hour (`CustomerSession::TTL`), that the
//! customer-portal endpoints accept (`crate::credentials::bearer`). The same record a
//! checkout's confirm writes for its buyer.

use serde_json::Value;
use tollgate_storage::{Batch, Expect, Stored};

use crate::api::customer_session::{CustomerSessionCreate, CustomerSessionView};
use crate::app::access::organizations_for_list;
use crate::app::catalog::customers::customer_for_external;
use crate::auth::tokens::{generate, CUSTOMER_SESSION_PREFIX};
use crate::auth::Subject;
use crate::domain::customer::Customer;
use crate::domain::customer_session::CustomerSession;
use crate::domain::ids::CustomerId;
use crate::domain::organization::Organization;
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::state::AppState;
use crate::validate::Validator;

fn no_such_customer(field: &str, input: Value) -> ApiError {
    ApiError::invalid(loc!["body", field], "Customer does not exist.", input)
}

/// The customer the body names, among the organizations the subject reaches: a 422 at
/// the field that named it when there is none.
async fn named_customer(
    state: &AppState,
    subject: Subject,
    input: &CustomerSessionCreate,
) -> Result<Stored<Customer>, ApiError> {
    if let Some(id) = input.customer_id {
        let orgs = organizations_for_list(state, subject, &[]).await?;
        return match state.store.get::<Customer>(&CustomerId(id).key()).await? {
            Some(c) if !c.value.is_deleted() && orgs.contains(&c.value.organization_id) => Ok(c),
            _ => Err(no_such_customer("customer_id", Value::from(id.to_string()))),
        };
    }
    let Some(external_id) = &input.external_customer_id else {
        return Err(ApiError::validation(FieldError::new(
            "missing",
            loc!["body", "customer_id"],
            "Field required",
            Value::Null,
        )));
    };
    match customer_for_external(state, subject, external_id).await {
        Err(e) if e.code() == crate::error::Code::NotFound => Err(no_such_customer(
            "external_customer_id",
            Value::from(external_id.as_str()),
        )),
        other => Ok(other?),
    }
}

/// The portal page that signs the customer in with the session: Polar's query
/// (`customer_session_token`, `email`) on Tollgate's portal, `{public_url}/portal/{slug}`.
fn portal_url(state: &AppState, org: Option<&Organization>, token: &str, email: &str) -> String {
    let query: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("customer_session_token", token)
        .append_pair("email", email)
        .finish();
    let slug = org.map(|o| o.slug.as_str()).unwrap_or_default();
    format!(
        "{}/portal/{slug}?{query}",
        state.public_url.trim_end_matches('/')
    )
}

/// Opens a customer session for the customer the body names: a new token, valid
/// `CustomerSession::TTL`, shown once in the answer.
pub async fn create(
    state: &AppState,
    subject: Subject,
    input: CustomerSessionCreate,
) -> Result<CustomerSessionView, ApiError> {
    let mut v = Validator::new();
    if let Some(url) = &input.return_url {
        v.http_url(loc!["body", "return_url"], url);
    }
    v.finish()?;
    state.store.read_barrier().await?;
    let customer = named_customer(state, subject, &input).await?.value;
    let token = generate(CUSTOMER_SESSION_PREFIX, 32);
    let session = CustomerSession::open(
        customer.id,
        customer.organization_id,
        state.hasher.hash(&token).to_vec(),
        state.now(),
    );
    let mut batch = Batch::new();
    batch.put(&session, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    let org = state
        .store
        .get::<Organization>(&customer.organization_id.key())
        .await?
        .map(|o| o.value);
    let url = portal_url(state, org.as_ref(), &token, &customer.email);
    Ok(CustomerSessionView::new(
        &session,
        token,
        input.return_url,
        url,
        &customer,
    ))
}
