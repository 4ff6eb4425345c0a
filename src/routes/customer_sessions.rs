//! `POST /v1/customer-sessions/`: a seller opens the customer portal for one of its
//! customers (`crate::app::customer_sessions`).

use actix_web::web;

use crate::api::customer_session::{CustomerSessionCreate, CustomerSessionView};
use crate::api::Created;
use crate::app::customer_sessions;
use crate::error::ApiResult;
use crate::extract::auth::CustomerSessionsWrite;
use crate::extract::{Auth, ValidJson};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, "/v1/customer-sessions/", { post => create });
}

pub(crate) async fn create(
    auth: Auth<CustomerSessionsWrite>,
    state: web::Data<AppState>,
    body: ValidJson<CustomerSessionCreate>,
) -> ApiResult<Created<CustomerSessionView>> {
    let command = body.into_inner().into_command()?;
    let session = customer_sessions::create(&state, auth.subject(), command).await?;
    Ok(Created(session))
}
