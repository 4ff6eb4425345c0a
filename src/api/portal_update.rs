//! What a buyer sends to change things in the customer portal (Polar's
//! `customer_portal/schemas`): a subscription's update, picked among Polar's shapes by its
//! keys (each shape forbids the others' keys), the plan-change preview, the customer's
//! billing details and the e-mail change. Each body becomes its command here, or a 422
//! in Polar's shape.

use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use super::customer::{parse_address, parse_tax_id_input};
use super::subscription::CustomerCancellationReason;
use super::Maybe;
use crate::domain::customer::Address;
use crate::domain::ids::{PaymentMethodId, ProductId};
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::validate::Validator;

/// Polar's update shapes of a portal subscription, in the order its union tries them, with
/// their keys. `seats`, `units`, pausing and resuming are not offered by Tollgate: their
/// keys are unknown here.
/// What the buyer's `PATCH` of a subscription asks for: one of Polar's update shapes.
#[derive(Debug, Clone)]
pub enum PortalSubscriptionUpdate {
    /// `{product_id}`: move to another product.
    Plan(ProductId),
    /// `{cancel_at_period_end, cancellation_reason, cancellation_comment}` (all optional):
    /// `Some(true)` cancels at the period's end, `Some(false)` takes it back.
    Cancel {
        cancel_at_period_end: Option<bool>,
        reason: Option<CustomerCancellationReason>,
        comment: Option<String>,
    },
    /// `{pending_update: null}`: drop a scheduled change. Tollgate applies plan changes at
    /// once, so there is never one: the subscription as it is.
    DropPendingUpdate,
}

/// The buyer's change of its billing details (`None`: left as is).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PortalCustomerUpdate {
    /// Set when given (a blank or null name leaves it as it is).
    pub billing_name: Option<String>,
    pub billing_address: Option<Address>,
    /// `Some(None)` clears the tax id; a number is checked against the resulting country.
    pub tax_id: Option<Option<String>>,
    pub default_payment_method_id: Option<PaymentMethodId>,
}

const SHAPES: &[(&str, &[&str])] = &[
    ("CustomerSubscriptionUpdateProduct", &["product_id"]),
    (
        "CustomerSubscriptionCancel",
        &[
            "cancel_at_period_end",
            "cancellation_reason",
            "cancellation_comment",
        ],
    ),
    (
        "CustomerSubscriptionUpdatePendingUpdate",
        &["pending_update"],
    ),
];

fn extra(key: &str, value: &Value) -> FieldError {
    FieldError::new(
        "extra_forbidden",
        loc!["body", key],
        "Extra inputs are not permitted",
        value.clone(),
    )
}

/// The keys of `raw` that are not among `allowed`: each a 422 `extra_forbidden`.
fn forbid_extra(raw: &Map<String, Value>, allowed: &[&str]) -> Result<(), ApiError> {
    let errors: Vec<FieldError> = raw
        .iter()
        .filter(|(k, _)| !allowed.contains(&k.as_str()))
        .map(|(k, v)| extra(k, v))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::Validation(errors))
    }
}

fn object(raw: &Value) -> Result<&Map<String, Value>, ApiError> {
    raw.as_object().ok_or_else(|| {
        ApiError::validation(FieldError::new(
            "model_attributes_type",
            loc!["body"],
            "Input should be a valid dictionary or object to extract fields from",
            raw.clone(),
        ))
    })
}

/// `PATCH /v1/customer-portal/subscriptions/{id}` (Polar's `CustomerSubscriptionUpdate`
/// union): `{product_id}` moves to another product; `{cancel_at_period_end,
/// cancellation_reason, cancellation_comment}` cancels at the period's end (`true`) or
/// takes the cancellation back (`false`); `{pending_update: null}` drops a scheduled
/// change. One shape per body: a key of another shape, or an unknown one, is a 422.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct CustomerSubscriptionUpdate {
    /// The product to move to: another recurring product of the organization (when its
    /// `customer_portal_settings.subscription.update_plan` is on).
    #[serde(default)]
    pub product_id: Option<Uuid>,
    #[serde(default)]
    pub cancel_at_period_end: Option<bool>,
    #[serde(default)]
    pub cancellation_reason: Option<CustomerCancellationReason>,
    #[serde(default)]
    pub cancellation_comment: Option<String>,
    /// `null` only: Tollgate applies plan changes at once, so there is never one pending.
    #[serde(default)]
    #[schema(value_type = Option<Object>, nullable)]
    pub pending_update: Option<Value>,
}

impl CustomerSubscriptionUpdate {
    /// The update the body (`raw`, as sent) asks for.
    pub fn into_command(self, raw: &Value) -> Result<PortalSubscriptionUpdate, ApiError> {
        let map = object(raw)?;
        // The shape: the first whose key the body sends (an empty body cancels nothing).
        let shape = SHAPES
            .iter()
            .find(|(_, keys)| map.keys().any(|k| keys.contains(&k.as_str())))
            .map_or("CustomerSubscriptionCancel", |(name, _)| *name);
        let keys = SHAPES
            .iter()
            .find(|(name, _)| *name == shape)
            .map_or(&[][..], |(_, keys)| *keys);
        forbid_extra(map, keys)?;
        match shape {
            "CustomerSubscriptionUpdateProduct" => match self.product_id {
                Some(id) => Ok(PortalSubscriptionUpdate::Plan(ProductId(id))),
                None => Err(ApiError::validation(FieldError::new(
                    "uuid_type",
                    loc!["body", "product_id"],
                    "UUID input should be a string, bytes or UUID object",
                    Value::Null,
                ))),
            },
            "CustomerSubscriptionUpdatePendingUpdate" => match map.get("pending_update") {
                Some(Value::Null) => Ok(PortalSubscriptionUpdate::DropPendingUpdate),
                other => Err(ApiError::validation(FieldError::new(
                    "none_required",
                    loc!["body", "pending_update"],
                    "Input should be None",
                    other.cloned().unwrap_or(Value::Null),
                ))),
            },
            _ => Ok(PortalSubscriptionUpdate::Cancel {
                cancel_at_period_end: self.cancel_at_period_end,
                reason: self.cancellation_reason,
                comment: self.cancellation_comment,
            }),
        }
    }
}

/// `POST /v1/customer-portal/subscriptions/{id}/change-preview` (Polar's private
/// `CustomerSubscriptionChangePreview`): the product a change would move to.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct CustomerSubscriptionChangePreview {
    pub product_id: Uuid,
}

impl CustomerSubscriptionChangePreview {
    /// The product to price; another key is a 422 (`seats` is not offered).
    pub fn into_command(self, raw: &Value) -> Result<ProductId, ApiError> {
        forbid_extra(object(raw)?, &["product_id"])?;
        Ok(ProductId(self.product_id))
    }
}

/// `PATCH /v1/customer-portal/customers/me` (Polar's `CustomerPortalCustomerUpdate`):
/// every field optional, unknown keys ignored. `billing_name: null` or blank leaves the
/// name as it is; `tax_id: null` or blank clears the tax id; `billing_address` and
/// `default_payment_method_id` cannot be reset to null.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CustomerPortalCustomerUpdate {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub billing_name: Maybe<String>,
    // Parsed with [`parse_address`].
    #[serde(default)]
    #[schema(value_type = Option<crate::api::free_form::AddressInput>)]
    pub billing_address: Maybe<Value>,
    // Parsed with [`parse_tax_id_input`].
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub tax_id: Maybe<Value>,
    #[serde(default)]
    #[schema(value_type = Option<Uuid>)]
    pub default_payment_method_id: Maybe<Uuid>,
}

impl CustomerPortalCustomerUpdate {
    /// The change the body asks for, or a 422 naming every field that breaks a rule.
    pub fn into_command(self) -> Result<PortalCustomerUpdate, ApiError> {
        let mut v = Validator::new();
        let billing_name = match self.billing_name {
            Maybe::Value(name) => {
                let name = name.trim().to_string();
                (!name.is_empty() && v.header_safe(loc!["body", "billing_name"], &name))
                    .then_some(name)
            }
            Maybe::Null | Maybe::Absent => None,
        };
        let billing_address = match &self.billing_address {
            Maybe::Absent => None,
            Maybe::Null => {
                v.push(FieldError::new(
                    "missing",
                    loc!["body", "billing_address"],
                    "Customer billing address cannot be reset to null once set.",
                    Value::Null,
                ));
                None
            }
            Maybe::Value(value) => match parse_address(value, loc!["body", "billing_address"]) {
                Ok(a) => Some(a),
                Err(errors) => {
                    errors.into_iter().for_each(|e| v.push(e));
                    None
                }
            },
        };
        let tax_id = match &self.tax_id {
            Maybe::Absent => None,
            Maybe::Null => Some(None),
            Maybe::Value(value) => match parse_tax_id_input(value, loc!["body", "tax_id"]) {
                Ok(t) => Some(t),
                Err(errors) => {
                    errors.into_iter().for_each(|e| v.push(e));
                    None
                }
            },
        };
        let default_payment_method_id = match self.default_payment_method_id {
            Maybe::Absent => None,
            Maybe::Null => {
                v.push(FieldError::new(
                    "value_error",
                    loc!["body", "default_payment_method_id"],
                    "Default payment method cannot be reset to null.",
                    Value::Null,
                ));
                None
            }
            Maybe::Value(id) => Some(PaymentMethodId(id)),
        };
        v.finish()?;
        Ok(PortalCustomerUpdate {
            billing_name,
            billing_address,
            tax_id,
            default_payment_method_id,
        })
    }
}

/// `POST /v1/customer-portal/customers/me/email-update/request`: the new address, to
/// which a code is sent.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct CustomerEmailUpdateRequest {
    pub email: String,
}

impl CustomerEmailUpdateRequest {
    /// The new address, normalized as a customer's address is, or a 422.
    pub fn into_command(self) -> Result<String, ApiError> {
        let email = super::customer::normalize_email_input(&self.email);
        let mut v = Validator::new();
        v.email(loc!["body", "email"], &email);
        v.finish()?;
        Ok(email)
    }
}

/// `POST /v1/customer-portal/customers/me/email-update/verify`: the code e-mailed to the
/// new address.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct CustomerEmailUpdateVerifyRequest {
    pub token: String,
}

/// The session the verified change opened: `{"token": "polar_cst_…"}`.
#[derive(Debug, Clone, serde::Serialize, ToSchema)]
pub struct CustomerEmailUpdateVerifyResponse {
    pub token: String,
}

/// One instance of each response of this module.
#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    vec![(
        "CustomerEmailUpdateVerifyResponse",
        serde_json::to_value(CustomerEmailUpdateVerifyResponse {
            token: "polar_cst_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG".into(),
        })
        .unwrap_or_default(),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn update(raw: Value) -> Result<PortalSubscriptionUpdate, ApiError> {
        let parsed: CustomerSubscriptionUpdate =
            serde_json::from_value(raw.clone()).unwrap_or_default();
        parsed.into_command(&raw)
    }

    fn locs(e: ApiError) -> Vec<Vec<Value>> {
        match e {
            ApiError::Validation(errors) => errors.into_iter().map(|e| e.loc).collect(),
            other => panic!("not a validation error: {other:?}"),
        }
    }

    #[test]
    fn the_shape_is_picked_by_its_keys() {
        let id = Uuid::from_u128(7);
        assert!(matches!(
            update(json!({"product_id": id})),
            Ok(PortalSubscriptionUpdate::Plan(p)) if p.0 == id
        ));
        assert!(matches!(
            update(json!({"cancel_at_period_end": true, "cancellation_comment": "x"})),
            Ok(PortalSubscriptionUpdate::Cancel { cancel_at_period_end: Some(true), comment: Some(c), .. })
                if c == "x"
        ));
        assert!(matches!(
            update(json!({})),
            Ok(PortalSubscriptionUpdate::Cancel {
                cancel_at_period_end: None,
                ..
            })
        ));
        assert!(matches!(
            update(json!({"pending_update": null})),
            Ok(PortalSubscriptionUpdate::DropPendingUpdate)
        ));
    }

    #[test]
    fn mixing_shapes_or_unknown_keys_is_refused() {
        let id = Uuid::from_u128(7);
        assert_eq!(
            locs(update(json!({"product_id": id, "cancel_at_period_end": true})).unwrap_err()),
            vec![loc!["body", "cancel_at_period_end"]]
        );
        assert_eq!(
            locs(update(json!({"cancel_at_period_end": false, "seats": 3})).unwrap_err()),
            vec![loc!["body", "seats"]]
        );
        assert_eq!(
            locs(update(json!({"product_id": null})).unwrap_err()),
            vec![loc!["body", "product_id"]]
        );
        assert_eq!(
            locs(update(json!({"pending_update": {"x": 1}})).unwrap_err()),
            vec![loc!["body", "pending_update"]]
        );
    }

    #[test]
    fn billing_details_refuse_what_polar_refuses() {
        let parse = |raw: Value| {
            serde_json::from_value::<CustomerPortalCustomerUpdate>(raw)
                .unwrap()
                .into_command()
        };
        let e =
            parse(json!({"billing_address": null, "default_payment_method_id": null})).unwrap_err();
        let messages: Vec<String> = match e {
            ApiError::Validation(errors) => errors.into_iter().map(|e| e.msg).collect(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            messages,
            vec![
                "Customer billing address cannot be reset to null once set.",
                "Default payment method cannot be reset to null."
            ]
        );
        let ok = parse(json!({"billing_name": "  ", "tax_id": "", "unknown": 1})).unwrap();
        assert_eq!(ok.billing_name, None, "blank: left as is");
        assert_eq!(ok.tax_id, Some(None), "blank: cleared");
        let ok = parse(json!({"billing_name": "ACME SAS",
            "billing_address": {"country": "fr", "city": "Paris"}}))
        .unwrap();
        assert_eq!(ok.billing_name.as_deref(), Some("ACME SAS"));
        assert_eq!(
            ok.billing_address.map(|a| a.country),
            Some("FR".to_string())
        );
    }
}
