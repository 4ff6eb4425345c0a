//! JSON request and response types in Polar's shapes. Serde attributes live here only.

pub mod benefit;
pub mod benefit_downloadables;
pub mod benefit_grant;
pub mod checkout;
pub mod checkout_link;
pub mod custom_field;
pub mod custom_field_data;
pub mod customer;
pub mod customer_meter;
pub mod customer_portal;
pub mod customer_portal_downloadables;
pub mod customer_session;
pub mod customer_state;
pub mod discount;
pub mod dispute;
pub mod event;
pub mod files;
pub mod free_form;
pub mod health;
pub mod invoice;
pub mod invoice_form;
pub mod license_key;
pub mod license_key_import;
pub mod license_signing;
pub mod metadata;
pub mod meter;
pub mod oauth2;
pub mod order;
pub mod organization;
pub mod organization_access_token;
pub mod organization_tax;
pub mod payment_method;
pub mod portal_update;
pub mod price;
pub mod product;
pub mod recovery;
pub mod refund;
pub mod releases;
pub mod subscription;
pub mod tax;
pub mod version;
pub mod webhook;

use actix_web::body::BoxBody;
use actix_web::{HttpRequest, HttpResponse, Responder};
use serde::{Deserialize, Deserializer, Serialize};

/// Every wire type with fields that exist in some API versions only
/// ([`version::VersionedFields`]): `(schema, [(field, versions)])`, which the OpenAPI
/// document of each version leaves out where the version does not serve them.
pub fn versioned_schemas() -> Vec<(&'static str, &'static [(&'static str, version::Versions)])> {
    fn of<T: version::VersionedFields>(
    ) -> (&'static str, &'static [(&'static str, version::Versions)]) {
        (T::SCHEMA, T::FIELDS)
    }
    vec![
        of::<license_key::LicenseKeyRead>(),
        of::<license_key::LicenseKeyWithActivations>(),
        of::<license_key::ValidatedLicenseKey>(),
        of::<license_key::RotatedLicenseKey>(),
        of::<license_key::GrantedLicenseKey>(),
        of::<price::ProductPriceRecurringSeatBased>(),
        of::<price::ProductPriceOneTimeSeatBased>(),
    ]
}

/// A PATCH field: absent (leave as is), explicit `null` (clear), or a value.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Maybe<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Maybe<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(d)? {
            Some(v) => Maybe::Value(v),
            None => Maybe::Null,
        })
    }
}

impl<T> Maybe<T> {
    pub fn is_absent(&self) -> bool {
        matches!(self, Maybe::Absent)
    }

    /// `Some(new value)` when the field was sent (`Some(None)` for an explicit null).
    pub fn into_update(self) -> Option<Option<T>> {
        match self {
            Maybe::Absent => None,
            Maybe::Null => Some(None),
            Maybe::Value(v) => Some(Some(v)),
        }
    }

    pub fn as_value(&self) -> Option<&T> {
        match self {
            Maybe::Value(v) => Some(v),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Pagination {
    pub total_count: u64,
    pub max_page: u64,
}

impl Pagination {
    /// Polar's numbers: `max_page = ceil(total / limit)`, 0 when there is nothing.
    pub fn new(total_count: u64, limit: u64) -> Self {
        let max_page = if limit == 0 {
            0
        } else {
            total_count.div_ceil(limit)
        };
        Self {
            total_count,
            max_page,
        }
    }
}

/// `{items, pagination}`: the body of every list response.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ListResource<T> {
    pub items: Vec<T>,
    pub pagination: Pagination,
}

/// A `201 Created` answer whose body is the typed view `T` (the 200 answers are
/// `actix_web::web::Json<T>`).
#[derive(Debug, Clone)]
pub struct Created<T>(pub T);

impl<T: Serialize> Responder for Created<T> {
    type Body = BoxBody;

    fn respond_to(self, _req: &HttpRequest) -> HttpResponse<BoxBody> {
        HttpResponse::Created().json(self.0)
    }
}

/// A `200 OK` JSON answer serialized into a buffer of `CAP` bytes reserved up front (the
/// hot path's answers have a known size: no reallocation while writing them).
#[derive(Debug, Clone)]
pub struct PresizedJson<T, const CAP: usize>(pub T);

impl<T: Serialize, const CAP: usize> Responder for PresizedJson<T, CAP> {
    type Body = BoxBody;

    fn respond_to(self, _req: &HttpRequest) -> HttpResponse<BoxBody> {
        let mut body = Vec::with_capacity(CAP);
        match serde_json::to_writer(&mut body, &self.0) {
            Ok(()) => HttpResponse::Ok()
                .insert_header((
                    actix_web::http::header::CONTENT_TYPE,
                    actix_web::http::header::HeaderValue::from_static("application/json"),
                ))
                .body(body),
            Err(e) => actix_web::ResponseError::error_response(&crate::error::ApiError::internal(
                format!("serializing an answer: {e}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_page_is_polars() {
        assert_eq!(Pagination::new(0, 10).max_page, 0);
        assert_eq!(Pagination::new(1, 10).max_page, 1);
        assert_eq!(Pagination::new(10, 10).max_page, 1);
        assert_eq!(Pagination::new(11, 10).max_page, 2);
        assert_eq!(Pagination::new(250, 100).max_page, 3);
    }

    #[derive(Deserialize)]
    struct P {
        #[serde(default)]
        a: Maybe<i64>,
    }

    #[test]
    fn maybe_tells_absent_from_null() {
        let p: P = serde_json::from_str("{}").unwrap();
        assert_eq!(p.a, Maybe::Absent);
        let p: P = serde_json::from_str("{\"a\": null}").unwrap();
        assert_eq!(p.a, Maybe::Null);
        let p: P = serde_json::from_str("{\"a\": 3}").unwrap();
        assert_eq!(p.a, Maybe::Value(3));
    }
}
