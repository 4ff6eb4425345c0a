//! Customer sessions (Polar's `POST /v1/customer-sessions/`): a seller opens the customer
//! portal for one of its customers, named by id or by external id, with a `polar_cst_…`
//! token valid one hour.

use chrono::{DateTime, Utc};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::customer::CustomerView;
use crate::domain::customer::Customer;
use crate::domain::customer_session::{CustomerSession, NewCustomerSession, SessionCustomer};
use crate::domain::ids::CustomerId;
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::validate::Validator;

/// `customer_id`, or `external_customer_id` (also spelled `customer_external_id`), names
/// the customer; `return_url` is where the portal's back button leads.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CustomerSessionCreate {
    #[serde(default)]
    pub customer_id: Option<Uuid>,
    #[serde(default, alias = "customer_external_id")]
    pub external_customer_id: Option<String>,
    /// An http(s) URL.
    #[serde(default)]
    pub return_url: Option<String>,
    /// Accepted and ignored: Tollgate has no members (Polar's member model).
    #[serde(default)]
    #[schema(value_type = Option<Uuid>)]
    pub member_id: Option<IgnoredAny>,
    /// Accepted and ignored, as `member_id`.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub external_member_id: Option<IgnoredAny>,
}

impl CustomerSessionCreate {
    /// The command the body asks for: a 422 for a `return_url` that is no http(s) URL,
    /// then for a body that names no customer.
    pub fn into_command(self) -> Result<NewCustomerSession, ApiError> {
        let mut v = Validator::new();
        if let Some(url) = &self.return_url {
            v.http_url(loc!["body", "return_url"], url);
        }
        v.finish()?;
        let customer = match (self.customer_id, self.external_customer_id) {
            (Some(id), _) => SessionCustomer::Id(CustomerId(id)),
            (None, Some(external)) => SessionCustomer::External(external),
            (None, None) => {
                return Err(ApiError::validation(FieldError::new(
                    "missing",
                    loc!["body", "customer_id"],
                    "Field required",
                    serde_json::Value::Null,
                )))
            }
        };
        Ok(NewCustomerSession {
            customer,
            return_url: self.return_url,
        })
    }
}

/// A customer session (Polar's `CustomerSession`): its token is shown once, here.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = CustomerSession)]
pub struct CustomerSessionView {
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub id: Uuid,
    /// `polar_cst_…`: a bearer token for `/v1/customer-portal/*`, until `expires_at`.
    pub token: String,
    pub expires_at: DateTime<Utc>,
    pub return_url: Option<String>,
    /// Polar's portal address for the session (`{public_url}/{organization slug}/portal?…`).
    pub customer_portal_url: String,
    pub customer_id: Uuid,
    pub customer: CustomerView,
}

impl CustomerSessionView {
    pub fn new(
        session: &CustomerSession,
        token: String,
        return_url: Option<String>,
        customer_portal_url: String,
        customer: &Customer,
    ) -> Self {
        CustomerSessionView {
            created_at: session.created_at,
            modified_at: None,
            id: session.id.uuid(),
            token,
            expires_at: session.expires_at,
            return_url,
            customer_portal_url,
            customer_id: session.customer_id.uuid(),
            customer: CustomerView::from(customer),
        }
    }
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    use chrono::{Duration, TimeZone};

    use crate::domain::ids::CustomerSessionId;

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let customer = crate::api::subscription::sample_customer();
    let session = CustomerSession {
        id: CustomerSessionId(Uuid::from_u128(0x5e)),
        customer_id: customer.id,
        organization_id: customer.organization_id,
        token_hash: vec![0; 32],
        created_at: now,
        expires_at: now + Duration::hours(1),
        purchase: None,
    };
    let token = "polar_cst_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG".to_string();
    let url = format!("https://tollgate.example/shop/portal?customer_session_token={token}");
    [None, Some("https://example.com/account".to_string())]
        .into_iter()
        .map(|return_url| {
            (
                "CustomerSession",
                serde_json::to_value(CustomerSessionView::new(
                    &session,
                    token.clone(),
                    return_url,
                    url.clone(),
                    &customer,
                ))
                .unwrap_or_default(),
            )
        })
        .collect()
}
