//! Customer sessions a seller opens (Polar's `customer_session/service.py`): a
//! `polar_cst_…` token for one customer, valid an hour (`CustomerSession::TTL`), that the
//! customer-portal endpoints accept (`crate::credentials::bearer`). The same record a
//! checkout's confirm writes for its buyer.

use tollgate_storage::{Batch, Expect, Stored};

use crate::api::customer_session::CustomerSessionView;
use crate::app::access::organizations_for_list;
use crate::app::catalog::customers::customer_for_external;
use crate::auth::tokens::{generate, CUSTOMER_SESSION_PREFIX};
use crate::auth::Subject;
use crate::domain::customer::Customer;
use crate::domain::customer_session::{CustomerSession, NewCustomerSession, SessionCustomer};
use crate::domain::organization::Organization;
use crate::error::{AppError, Code, Given};
use crate::field;
use crate::state::AppState;

fn no_such_customer(field: &str, input: impl Into<Given>) -> AppError {
    AppError::invalid(field![field], "Customer does not exist.", input)
}

/// The customer the command names, among the organizations the subject reaches: invalid
/// at the field that named it when there is none.
async fn named_customer(
    state: &AppState,
    subject: Subject,
    named: &SessionCustomer,
) -> Result<Stored<Customer>, AppError> {
    match named {
        SessionCustomer::Id(id) => {
            let orgs = organizations_for_list(state, subject, &[]).await?;
            match state.store.get::<Customer>(&id.key()).await? {
                Some(c) if !c.value.is_deleted() && orgs.contains(&c.value.organization_id) => {
                    Ok(c)
                }
                _ => Err(no_such_customer("customer_id", id.to_string())),
            }
        }
        SessionCustomer::External(external_id) => {
            match customer_for_external(state, subject, external_id).await {
                Err(e) if e.code() == Code::NotFound => {
                    Err(no_such_customer("external_customer_id", external_id))
                }
                other => other,
            }
        }
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

/// Opens a customer session for the customer the command names: a new token, valid
/// `CustomerSession::TTL`, shown once in the answer.
pub async fn create(
    state: &AppState,
    subject: Subject,
    input: NewCustomerSession,
) -> Result<CustomerSessionView, AppError> {
    state.store.read_barrier().await?;
    let customer = named_customer(state, subject, &input.customer).await?.value;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing;
    use crate::error::Step;

    #[actix_web::test]
    async fn a_customer_that_does_not_exist_is_invalid_at_its_field() {
        let app = testing::app().await;
        let (_, subject) = testing::seller(&app).await;
        let command = NewCustomerSession {
            customer: SessionCustomer::Id(crate::domain::ids::CustomerId::new()),
            return_url: None,
        };
        let err = create(&app, subject, command)
            .await
            .expect_err("no customer");
        assert_eq!(err.code(), Code::Invalid);
        let AppError::Invalid(items) = err else {
            panic!("invalid fields expected");
        };
        assert_eq!(items[0].path, vec![Step::Field("customer_id".into())]);
        assert_eq!(items[0].msg, "Customer does not exist.");
    }
}
