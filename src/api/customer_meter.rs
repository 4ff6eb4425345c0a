//! Customer meters in Polar's shapes (`polar-2026.md` §7.4): `CustomerMeter` (the
//! merchant's, with the customer and the full meter) and `CustomerCustomerMeter` (the
//! portal's, with the meter's id, dates and name). `credited_units` is a JSON integer
//! (polar-sdk 1.0.2 refuses `100.0`).

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::customer::CustomerView;
use super::meter::{MeterView, PortalMeterView};
use crate::domain::customer::Customer;
use crate::domain::meter::Meter;

/// The numbers of a customer meter, as the service computed them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub consumed_units: f64,
    pub credited_units: i64,
    pub balance: f64,
}

/// `CustomerMeter`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = CustomerMeter)]
pub struct CustomerMeterView {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub customer_id: Uuid,
    pub meter_id: Uuid,
    pub consumed_units: f64,
    pub credited_units: i64,
    pub balance: f64,
    pub customer: CustomerView,
    pub meter: MeterView,
}

impl CustomerMeterView {
    pub fn new(f: Figures, customer: &Customer, meter: &Meter) -> Self {
        CustomerMeterView {
            id: f.id,
            created_at: f.created_at,
            modified_at: f.modified_at,
            customer_id: customer.id.uuid(),
            meter_id: meter.id.uuid(),
            consumed_units: f.consumed_units,
            credited_units: f.credited_units,
            balance: f.balance,
            customer: CustomerView::from(customer),
            meter: MeterView::from(meter),
        }
    }
}

/// `CustomerCustomerMeter` (the portal's).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = CustomerCustomerMeter)]
pub struct PortalCustomerMeterView {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub customer_id: Uuid,
    pub meter_id: Uuid,
    pub consumed_units: f64,
    pub credited_units: i64,
    pub balance: f64,
    pub meter: PortalMeterView,
}

impl PortalCustomerMeterView {
    pub fn new(f: Figures, customer: &Customer, meter: &Meter) -> Self {
        PortalCustomerMeterView {
            id: f.id,
            created_at: f.created_at,
            modified_at: f.modified_at,
            customer_id: customer.id.uuid(),
            meter_id: meter.id.uuid(),
            consumed_units: f.consumed_units,
            credited_units: f.credited_units,
            balance: f.balance,
            meter: PortalMeterView::from(meter),
        }
    }
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    use crate::domain::ids::{CustomerId, OrganizationId};

    let meters = super::meter::sample_meters();
    let Some(meter) = meters.first() else {
        return Vec::new();
    };
    let customer = Customer::new(
        CustomerId(Uuid::from_u128(0xc0)),
        OrganizationId(Uuid::from_u128(0x0a)),
        "jane@example.com".into(),
        meter.created_at,
    );
    let f = Figures {
        id: Uuid::from_u128(0xce),
        created_at: meter.created_at,
        modified_at: None,
        consumed_units: 25.0,
        credited_units: 100,
        balance: 75.0,
    };
    vec![
        (
            "CustomerMeter",
            serde_json::to_value(CustomerMeterView::new(f, &customer, meter)).unwrap_or_default(),
        ),
        (
            "CustomerCustomerMeter",
            serde_json::to_value(PortalCustomerMeterView::new(f, &customer, meter))
                .unwrap_or_default(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credited_units_is_an_integer() {
        let m = PortalMeterView {
            id: Uuid::nil(),
            created_at: DateTime::<Utc>::default(),
            modified_at: None,
            name: "n".into(),
        };
        let v = PortalCustomerMeterView {
            id: Uuid::nil(),
            created_at: DateTime::<Utc>::default(),
            modified_at: None,
            customer_id: Uuid::nil(),
            meter_id: Uuid::nil(),
            consumed_units: 25.0,
            credited_units: 100,
            balance: 75.0,
            meter: m,
        };
        let s = serde_json::to_string(&v).unwrap_or_default();
        assert!(s.contains("\"credited_units\":100,"), "{s}");
        assert!(s.contains("\"consumed_units\":25.0"), "{s}");
    }
}
