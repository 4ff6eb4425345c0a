//! Sample renderings of the license-key schemas (the OpenAPI tests validate them against
//! the document), built from domain records.

use super::*;

/// A granted key with limits, two live activations and a deactivated one, and a revoked
/// key without any.
pub(crate) fn sample_keys() -> Vec<LicenseKey> {
    use chrono::TimeZone;

    use crate::domain::ids::LicenseKeyId;

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let customer = crate::api::subscription::sample_customer();
    let benefit = crate::api::benefit::sample_benefits()
        .first()
        .map_or(BenefitId(Uuid::nil()), |b| b.id);
    let activation = |n: u128, meta: &str, deleted: bool| Activation {
        id: ActivationId(Uuid::from_u128(0xac00 + n)),
        label: format!("laptop {n}"),
        meta: meta.into(),
        conditions: r#"{"major": 2}"#.into(),
        created_at: now,
        modified_at: deleted.then_some(now),
        deleted_at: deleted.then_some(now),
    };
    let key = |n: u128| LicenseKey {
        id: LicenseKeyId(Uuid::from_u128(0x1c00 + n)),
        organization_id: customer.organization_id,
        customer_id: customer.id,
        benefit_id: benefit,
        created_at: now,
        modified_at: None,
        key: format!("TOLL-0000000{n}-0000-4000-8000-00000000ABCD"),
        status: KeyStatus::Granted,
        limit_activations: None,
        usage: 0,
        limit_usage: None,
        validations: 0,
        last_validated_at: None,
        expires_at: None,
        activations: Vec::new(),
        subscription_id: None,
        order_id: None,
        paid_until: None,
        allow_replacement: false,
        replacements: Vec::new(),
    };
    let mut granted = key(1);
    granted.modified_at = Some(now);
    granted.limit_activations = Some(3);
    granted.usage = 4;
    granted.limit_usage = Some(10);
    granted.validations = 12;
    granted.last_validated_at = Some(now);
    granted.expires_at = Some(now + chrono::Duration::days(365));
    granted.activations = vec![
        activation(1, r#"{"host": "a", "cores": 8}"#, false),
        activation(2, "{}", true),
        activation(3, r#"{"nested": {"ok": true}}"#, false),
    ];
    let mut revoked = key(2);
    revoked.status = KeyStatus::Revoked;
    vec![granted, revoked]
}

pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    let customer = crate::api::subscription::sample_customer();
    let to_value = |v: Result<Value, serde_json::Error>| v.unwrap_or_default();
    let mut out = Vec::new();
    for key in sample_keys() {
        out.push((
            "LicenseKeyRead",
            to_value(serde_json::to_value(LicenseKeyRead::new(&key, &customer))),
        ));
        for hide in [false, true] {
            out.push((
                "LicenseKeyWithActivations",
                to_value(serde_json::to_value(LicenseKeyWithActivations::new(
                    &key, &customer, hide,
                ))),
            ));
        }
        out.push((
            "ValidatedLicenseKey",
            to_value(serde_json::to_value(ValidatedLicenseKey::new(
                &key,
                &CustomerParts::from(&customer),
                None,
            ))),
        ));
        for a in live_activations(&key) {
            out.push((
                "ValidatedLicenseKey",
                to_value(serde_json::to_value(ValidatedLicenseKey::new(
                    &key,
                    &CustomerParts::from(&customer),
                    Some(a),
                ))),
            ));
            out.push((
                "LicenseKeyActivationBase",
                to_value(serde_json::to_value(LicenseKeyActivationBase::new(&key, a))),
            ));
            out.push((
                "LicenseKeyActivationRead",
                to_value(serde_json::to_value(LicenseKeyActivationRead::new(
                    &key, a, &customer,
                ))),
            ));
        }
    }
    for key in sample_keys()
        .iter()
        .filter(|k| tollgate_actors::license_key::ROTATABLE.contains(&k.status))
    {
        out.push((
            "RotatedLicenseKey",
            to_value(serde_json::to_value(RotatedLicenseKey::new(key, &customer))),
        ));
    }
    // Activations answer granted keys only; with and without what granted them.
    let granted: Vec<LicenseKey> = sample_keys()
        .into_iter()
        .filter(|k| k.status == KeyStatus::Granted)
        .collect();
    for (key, purchase) in granted
        .iter()
        .map(|k| (k.clone(), Purchase::default()))
        .chain(sample_purchases(&granted))
    {
        out.push((
            "GrantedLicenseKey",
            to_value(serde_json::to_value(
                GrantedLicenseKey::new(&key, &customer).with_purchase(purchase.clone()),
            )),
        ));
        out.push((
            "ValidatedLicenseKey",
            to_value(serde_json::to_value(
                ValidatedLicenseKey::new(&key, &CustomerParts::from(&customer), None)
                    .with_purchase(purchase.clone()),
            )),
        ));
        for a in live_activations(&key) {
            out.push((
                "LicenseKeyActivationCreated",
                to_value(serde_json::to_value(LicenseKeyActivationCreated::new(
                    &key,
                    a,
                    &customer,
                    purchase.clone(),
                ))),
            ));
        }
    }
    out.push((
        "LicenseKeyResendAccepted",
        to_value(serde_json::to_value(LicenseKeyResendAccepted {
            detail: LicenseKeyResendAccepted::DETAIL,
        })),
    ));
    out
}

/// The sample keys as granted by a subscription (a sample one) and by a one-time order,
/// with what 2027-01 shows of them.
pub(crate) fn sample_purchases(keys: &[LicenseKey]) -> Vec<(LicenseKey, Purchase)> {
    use crate::domain::custom_field::CustomFieldData;
    use crate::domain::ids::{OrderId, PriceId, ProductId};
    use crate::domain::metadata::Metadata;
    use crate::domain::order::{BillingReason, OrderStatus as Status};

    let mut out = Vec::new();
    let Some(key) = keys.first() else {
        return out;
    };
    if let Some(s) = crate::api::subscription::sample_subscriptions().first() {
        let mut k = key.clone();
        k.subscription_id = Some(s.id);
        let purchase = Purchase {
            subscription: Some(LicenseKeySubscription::from(s)),
            order: None,
        };
        out.push((k, purchase));
    }
    let order = Order {
        id: OrderId(Uuid::from_u128(0x0d99)),
        organization_id: key.organization_id,
        created_at: key.created_at,
        modified_at: None,
        status: Status::Refunded,
        amount: 1900,
        tax_amount: 0,
        refunded_amount: 1900,
        refunded_tax_amount: 0,
        currency: crate::domain::currency::Currency::DEFAULT.into(),
        billing_reason: BillingReason::Purchase,
        billing_address: None,
        customer_id: key.customer_id,
        product_id: ProductId(Uuid::from_u128(0x9d)),
        product_price_id: PriceId(Uuid::from_u128(0x9e)),
        recurring: false,
        discount_id: None,
        subscription_id: None,
        checkout_id: None,
        metadata: Metadata::default(),
        custom_field_data: CustomFieldData::default(),
        customer_email: "jane@example.com".into(),
        product_name: "Pro".into(),
        discount_name: None,
        payment_id: None,
        refund_pending_amount: 0,
        refund_pending_tax_amount: 0,
        seats: None,
        next_payment_attempt_at: None,
        last_payment: None,
        tax: crate::domain::order::OrderTax::default(),
        invoice: crate::domain::order::InvoiceState::None,
        usage_lines: Vec::new(),
    };
    let mut k = key.clone();
    k.order_id = Some(order.id);
    let purchase = Purchase {
        subscription: None,
        order: Some(LicenseKeyOrder::from(&order)),
    };
    out.push((k, purchase));
    out
}
