//! The `meter_credit` benefit's properties in Polar's shapes (`polar-2026.md` §7.5):
//! `{units, rollover, meter_id}` in the create and update bodies and the seller's and the
//! subscriber's views; `{units, meter_id}` in the public one
//! (`BenefitMeterCreditPublicProperties`). Whether the meter exists in the benefit's
//! organization is the use case's check (it needs the store).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::domain::benefit::{MeterCreditProperties, MAX_METER_CREDIT_UNITS};
use crate::domain::ids::MeterId;
use crate::loc;
use crate::validate::Validator;

/// The message of a `meter_id` that names no meter of the organization.
pub const NO_SUCH_METER: &str = "This meter does not exist.";

/// `{units, rollover, meter_id}`: `units` of the meter credited at each grant and each
/// renewal (1 to 2147483647); with `rollover`, what is left of them at a period's end
/// carries over.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BenefitMeterCreditProperties {
    pub units: i64,
    pub rollover: bool,
    pub meter_id: Uuid,
}

/// `{units, meter_id}`: what a buyer may read of a meter credit (Polar's
/// `BenefitMeterCreditPublicProperties`, no `rollover`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BenefitMeterCreditPublicProperties {
    pub units: i64,
    pub meter_id: Uuid,
}

impl From<&MeterCreditProperties> for BenefitMeterCreditProperties {
    fn from(p: &MeterCreditProperties) -> Self {
        BenefitMeterCreditProperties {
            units: i64::from(p.units),
            rollover: p.rollover,
            meter_id: p.meter_id.0,
        }
    }
}

impl From<&MeterCreditProperties> for BenefitMeterCreditPublicProperties {
    fn from(p: &MeterCreditProperties) -> Self {
        BenefitMeterCreditPublicProperties {
            units: i64::from(p.units),
            meter_id: p.meter_id.0,
        }
    }
}

/// The properties as the record holds them; `units` out of range is refused first by
/// [`check_units`] (the conversion only clamps).
impl From<BenefitMeterCreditProperties> for MeterCreditProperties {
    fn from(p: BenefitMeterCreditProperties) -> Self {
        MeterCreditProperties {
            meter_id: MeterId(p.meter_id),
            units: u32::try_from(p.units.clamp(1, i64::from(MAX_METER_CREDIT_UNITS)))
                .unwrap_or(MAX_METER_CREDIT_UNITS),
            rollover: p.rollover,
        }
    }
}

/// `properties.units`: pydantic's `Int32` with `gt=0`.
pub fn check_units(v: &mut Validator, units: i64) {
    let at = loc!["body", "properties", "units"];
    if units <= 0 {
        v.push(
            crate::error::FieldError::new(
                "greater_than",
                at,
                "Input should be greater than 0",
                Value::from(units),
            )
            .with_ctx(serde_json::json!({"gt": 0})),
        );
    } else {
        v.int_range(at, units, None, Some(i64::from(MAX_METER_CREDIT_UNITS)));
    }
}
