//! Tests of the checkout renderings and bodies (`checkout.rs`), and the sample checkouts
//! the OpenAPI tests render.

use super::*;
use serde_json::json;
use std::collections::BTreeSet;

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// Polar's 2026 keys (issue 27), beside the seed's.
const NEW_KEYS: [&str; 22] = [
    "return_url",
    "locale",
    "seats",
    "min_seats",
    "max_seats",
    "units",
    "min_units",
    "max_units",
    "discount_amount",
    "net_amount",
    "tax_behavior",
    // Tollgate's additive breakdown.
    "tax_breakdown",
    "allow_trial",
    "active_trial_interval",
    "active_trial_interval_count",
    "trial_end",
    "organization_id",
    "require_billing_address",
    "is_business_customer",
    "customer_billing_name",
    "payment_method_type",
    "billing_address_fields",
];

const BASE_KEYS: [&str; 37] = [
    "id",
    "created_at",
    "modified_at",
    "payment_processor",
    "status",
    "client_secret",
    "url",
    "expires_at",
    "success_url",
    "embed_origin",
    "amount",
    "tax_amount",
    "currency",
    "subtotal_amount",
    "total_amount",
    "product_id",
    "product_price_id",
    "discount_id",
    "allow_discount_codes",
    "is_discount_applicable",
    "is_free_product_price",
    "is_payment_required",
    "is_payment_setup_required",
    "is_payment_form_required",
    "customer_id",
    "customer_name",
    "customer_email",
    "customer_ip_address",
    "customer_billing_address",
    "customer_tax_id",
    "payment_processor_metadata",
    "custom_field_data",
    "product",
    "product_price",
    "products",
    "prices",
    "discount",
];

#[test]
fn the_renderings_have_every_key_of_the_sdk_models() {
    let base: BTreeSet<String> = BASE_KEYS
        .into_iter()
        .chain(NEW_KEYS)
        .chain(["attached_custom_fields"])
        .map(String::from)
        .collect();
    let with = |extra: &[&str]| -> BTreeSet<String> {
        let mut k = base.clone();
        k.extend(extra.iter().map(|s| s.to_string()));
        k
    };
    let mut seen = BTreeSet::new();
    for (name, v) in samples() {
        let expected = match name {
            "Checkout" => with(&[
                "metadata",
                "customer_metadata",
                "subscription_id",
                "external_customer_id",
                "trial_interval",
                "trial_interval_count",
            ]),
            "CheckoutPublic" => with(&["organization"]),
            "CheckoutPublicConfirmed" => with(&["organization", "customer_session_token"]),
            other => panic!("unexpected sample {other}"),
        };
        assert_eq!(keys(&v), expected, "{name}");
        assert_eq!(v["payment_processor"], "stripe");
        seen.insert(name);
    }
    assert_eq!(seen.len(), 3);
}

#[test]
fn a_bought_checkout_renders_its_buyer_discount_and_answers() {
    let samples = samples();
    let succeeded = samples
        .iter()
        .map(|(_, v)| v)
        .find(|v| v["status"] == "succeeded" && v.get("metadata").is_some())
        .cloned()
        .unwrap_or_default();
    assert_eq!(succeeded["customer_billing_address"]["country"], "FR");
    assert_eq!(succeeded["customer_billing_address"]["line2"], Value::Null);
    assert_eq!(succeeded["discount"]["duration"], "once");
    assert_eq!(succeeded["discount_id"], succeeded["discount"]["id"]);
    // The empty optional answer is left out, as in `custom_field_data_json`.
    assert_eq!(succeeded["custom_field_data"], json!({"seats": 3}));
    assert_eq!(succeeded["metadata"], json!({"campaign": "spring"}));
    assert_eq!(succeeded["customer_metadata"], json!({"vip": true}));
    assert_eq!(
        succeeded["payment_processor_metadata"],
        json!({"intent_id": "pi_sample", "intent_status": "succeeded"})
    );
    assert_eq!(succeeded["subscription_id"], json!(Uuid::from_u128(0x5000)));
    assert_eq!(
        succeeded["success_url"],
        format!(
            "https://example.com/thanks?checkout={}",
            Uuid::from_u128(0xc410)
        )
    );
    let confirmed: Vec<&Value> = samples
        .iter()
        .filter(|(n, _)| *n == "CheckoutPublicConfirmed")
        .map(|(_, v)| v)
        .collect();
    assert_eq!(confirmed.len(), 1);
    assert_eq!(confirmed[0]["status"], "confirmed");
    assert_eq!(confirmed[0]["customer_session_token"], "polar_cst_sample");
    assert_eq!(confirmed[0]["organization"]["slug"], "acme");
    let open = samples
        .iter()
        .map(|(_, v)| v)
        .find(|v| v["status"] == "open")
        .cloned()
        .unwrap_or_default();
    assert_eq!(open["customer_billing_address"], Value::Null);
    assert_eq!(open["discount"], Value::Null);
    assert_eq!(open["custom_field_data"], json!({}));
    assert_eq!(
        open["url"],
        format!(
            "https://tollgate.example.com/checkout/{}",
            open["client_secret"].as_str().unwrap_or("")
        )
    );
}

#[test]
fn statuses_are_the_domains_names() {
    use domain::CheckoutStatus as S;
    for s in [S::Open, S::Expired, S::Confirmed, S::Succeeded, S::Failed] {
        assert_eq!(
            serde_json::to_value(CheckoutStatus::from(s)).unwrap(),
            json!(s.as_str())
        );
    }
    assert_eq!(
        serde_json::to_value(CheckoutStatusConfirmed::Confirmed).unwrap(),
        json!("confirmed")
    );
}

#[test]
fn each_body_keeps_only_its_own_fields() {
    let organizer: CheckoutUpdate = serde_json::from_value(json!({
        "metadata": {"a": 1}, "discount_code": "IGNORED", "customer_name": null
    }))
    .unwrap();
    let changes = CheckoutChanges::from(organizer);
    assert!(changes.metadata.as_value().is_some());
    assert!(changes.discount_code.is_absent());
    assert_eq!(changes.customer_name, Maybe::Null);
    let public: CheckoutUpdatePublic = serde_json::from_value(json!({
        "metadata": {"a": 1}, "discount_code": "SPRING"
    }))
    .unwrap();
    let changes = CheckoutChanges::from(public);
    assert!(changes.metadata.is_absent());
    assert_eq!(changes.discount_code, Maybe::Value("SPRING".into()));
    let confirm: CheckoutConfirm = serde_json::from_value(json!({
        "confirmation_token_id": "ctoken", "customer_email": "a@b.co"
    }))
    .unwrap();
    let (changes, token) = confirm.split();
    assert_eq!(token.as_deref(), Some("ctoken"));
    assert_eq!(changes.customer_email, Maybe::Value("a@b.co".into()));
    let (_, token) = CheckoutConfirm::default().split();
    assert_eq!(token, None);
}

/// Checkouts of the sample products: open with no buyer yet (the first price of each
/// product), and for the first product one with a buyer, a discount, custom-field answers
/// and metadata, confirmed and then succeeded.
pub(crate) fn sample_checkouts() -> Vec<Checkout> {
    use chrono::{Duration, TimeZone};

    use crate::domain::custom_field::{CustomFieldData, FieldValue};
    use crate::domain::customer::Address;
    use crate::domain::ids::{CheckoutId, CustomerId, SubscriptionId};
    use crate::domain::metadata::{MetaValue, Metadata};
    use tollgate_actors::checkout::{
        AppliedDiscount, Changes, CheckoutTerms, ConfirmContext, NewCheckout,
    };

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let new = |n: u128, p: &crate::domain::product::Product| {
        let price = p.prices.first().cloned()?;
        Some(NewCheckout {
            id: CheckoutId(Uuid::from_u128(0xc400 + n)),
            organization_id: p.organization_id,
            client_secret: format!("polar_c_sample{n}"),
            expires_at: now + Duration::hours(1),
            product_id: p.id,
            price,
            amount: None,
            discount: None,
            allow_discount_codes: true,
            customer_id: None,
            customer_name: None,
            customer_email: None,
            customer_ip_address: None,
            customer_billing_address: None,
            customer_tax_id: None,
            customer_metadata: Metadata::default(),
            metadata: Metadata::default(),
            custom_field_data: CustomFieldData::default(),
            success_url: None,
            embed_origin: None,
            subscription_id: None,
            product_trial: None,
            seats: None,
            is_business_customer: false,
            customer_billing_name: None,
        })
    };
    let mut out = Vec::new();
    let products = crate::api::product::sample_products();
    for (n, p) in products.iter().enumerate() {
        if let Some(c) = new(n as u128, p).and_then(|c| Checkout::create(c, now, None).ok()) {
            out.push(c);
        }
    }
    let Some(mut bought) = products.first().and_then(|p| new(0x10, p)) else {
        return out;
    };
    bought.discount = crate::api::discount::sample_discounts()
        .first()
        .map(AppliedDiscount::from);
    bought.customer_name = Some("Jane Doe".into());
    bought.customer_email = Some("jane@example.com".into());
    bought.customer_ip_address = Some("203.0.113.7".into());
    bought.customer_billing_address = Address::new(
        Some("1 rue de la Paix"),
        None,
        Some("75002"),
        Some("Paris"),
        None,
        "FR",
    )
    .ok();
    bought.metadata = Metadata(
        [("campaign".to_string(), MetaValue::Str("spring".into()))]
            .into_iter()
            .collect(),
    );
    bought.customer_metadata = Metadata(
        [("vip".to_string(), MetaValue::Bool(true))]
            .into_iter()
            .collect(),
    );
    bought.custom_field_data = CustomFieldData(
        [
            ("seats".to_string(), FieldValue::Int(3)),
            ("notes".to_string(), FieldValue::Null),
        ]
        .into_iter()
        .collect(),
    );
    bought.success_url = Some("https://example.com/thanks?checkout={CHECKOUT_ID}".into());
    bought.embed_origin = Some("https://example.com".into());
    let confirm = ConfirmContext {
        confirmation_token: Some("ctoken_sample"),
        discount_redeemable: true,
        price_archived: false,
    };
    // It offers every product of its organization, asks for a full address and was made
    // for a buyer the seller knows.
    let terms = CheckoutTerms {
        products: products
            .iter()
            .filter(|p| p.organization_id == bought.organization_id)
            .map(|p| p.id)
            .collect(),
        require_billing_address: true,
        allow_trial: false,
        external_customer_id: Some("ext-jane".into()),
        return_url: Some("https://example.com/pricing".into()),
        trial: None,
        min_seats: None,
        max_seats: None,
        locale: None,
    };
    let Ok(confirmed) = Checkout::create_with(bought, terms, now, None)
        .and_then(|c| c.confirm(Changes::default(), confirm, now, None))
        .map(|c| c.with_customer(CustomerId(Uuid::from_u128(0xc0))))
    else {
        return out;
    };
    let subscription = SubscriptionId(Uuid::from_u128(0x5000));
    if let Ok(succeeded) = confirmed.succeed(Some("pi_sample"), Some(subscription), now) {
        out.push(succeeded);
    }
    out.push(confirmed);
    out
}

pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    use chrono::TimeZone;

    use crate::domain::organization::Organization;

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let products = crate::api::product::sample_products();
    let benefits = crate::api::benefit::sample_benefits();
    let fields = crate::api::custom_field::sample_custom_fields();
    let org = Organization::new(
        crate::domain::ids::OrganizationId(Uuid::from_u128(0x0a)),
        "Acme Inc.".into(),
        "acme".into(),
        now,
    );
    let to_value = |v: Result<Value, serde_json::Error>| v.unwrap_or_default();
    let mut out = Vec::new();
    for c in sample_checkouts() {
        let Some(product) = products.iter().find(|p| p.id == c.product_id) else {
            continue;
        };
        let base = "https://tollgate.example.com";
        let ctx = CheckoutContext {
            url: format!("{base}/checkout/{}", c.client_secret),
            success_url: c
                .success_url(&format!("{base}/checkout/{}/confirmation", c.client_secret)),
            product: CheckoutProduct::new(product, &benefits, &[]),
            product_price: ProductPrice::new(product, &c.price, &[]),
            products: c
                .products
                .iter()
                .filter_map(|id| products.iter().find(|p| p.id == *id))
                .map(|p| CheckoutProduct::new(p, &benefits, &[]))
                .collect(),
            attached_custom_fields: crate::api::product::attached_custom_fields(product, &fields),
        };
        out.push((
            "Checkout",
            to_value(serde_json::to_value(CheckoutView::new(
                &c,
                c.status,
                ctx.clone(),
            ))),
        ));
        out.push((
            "CheckoutPublic",
            to_value(serde_json::to_value(CheckoutPublic::new(
                &c,
                c.status,
                ctx.clone(),
                OrganizationView::from(&org),
            ))),
        ));
        if c.status == domain::CheckoutStatus::Confirmed {
            out.push((
                "CheckoutPublicConfirmed",
                to_value(serde_json::to_value(CheckoutPublicConfirmed::new(
                    &c,
                    ctx,
                    OrganizationView::from(&org),
                    "polar_cst_sample".into(),
                ))),
            ));
        }
    }
    out
}

#[test]
fn the_2026_fields_say_what_the_checkout_is() {
    let all = samples();
    let bought = all
        .iter()
        .map(|(_, v)| v)
        .find(|v| v["status"] == "succeeded" && v.get("metadata").is_some())
        .cloned()
        .unwrap_or_default();
    // Amounts: the discount comes off the amount, the tax (none here) on top.
    let amount = bought["amount"].as_i64().unwrap_or_default();
    let discount = bought["discount_amount"].as_i64().unwrap_or_default();
    assert!(amount > 0 && discount > 0, "{bought}");
    assert_eq!(bought["net_amount"], json!(amount - discount));
    assert_eq!(bought["subtotal_amount"], bought["net_amount"]);
    assert_eq!(bought["total_amount"], json!(amount - discount));
    assert_eq!(bought["tax_behavior"], "exclusive");
    assert_eq!(bought["discount"]["amounts"], json!({"usd": 500}));
    // The seller's terms.
    assert_eq!(bought["require_billing_address"], true);
    assert_eq!(bought["allow_trial"], false);
    assert_eq!(bought["external_customer_id"], "ext-jane");
    assert_eq!(bought["return_url"], "https://example.com/pricing");
    assert_eq!(
        bought["billing_address_fields"],
        json!({"country": "required", "state": "disabled", "line1": "required",
               "line2": "optional", "postal_code": "required", "city": "required"})
    );
    assert_eq!(
        bought["organization_id"],
        bought["product"]["organization_id"]
    );
    // Every product of the organization, each with its prices.
    let products = bought["products"].as_array().cloned().unwrap_or_default();
    assert!(products.len() > 1, "{bought}");
    for p in &products {
        let id = p["id"].as_str().unwrap_or_default();
        assert_eq!(bought["prices"][id], p["prices"], "{id}");
    }
    assert!(products.contains(&bought["product"]));
    // What Tollgate does not sell is null, never a placeholder.
    for key in [
        "seats",
        "units",
        "min_units",
        "max_units",
        "active_trial_interval",
        "active_trial_interval_count",
        "trial_end",
        "trial_interval",
        "customer_billing_name",
        "payment_method_type",
    ] {
        assert_eq!(bought[key], Value::Null, "{key}");
    }
    assert_eq!(bought["is_business_customer"], false);
    // A free price costs 0 US dollars.
    let free = all
        .iter()
        .map(|(_, v)| v)
        .find(|v| v["is_free_product_price"] == true)
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (&free["amount"], &free["total_amount"], &free["currency"]),
        (&json!(0), &json!(0), &json!("usd"))
    );
    assert_eq!(free["tax_behavior"], Value::Null);
    assert_eq!(free["allow_trial"], true);
    assert_eq!(free["billing_address_fields"]["line1"], "optional");
}

fn locs(e: crate::error::ApiError) -> Vec<Value> {
    match e {
        crate::error::ApiError::Validation(items) => {
            items.into_iter().map(|i| Value::from(i.loc)).collect()
        }
        other => panic!("expected a 422, got {other:?}"),
    }
}

#[test]
fn an_update_body_parses_into_a_command_or_its_422_in_order() {
    let body: CheckoutUpdate = serde_json::from_value(json!({
        "product_id": "00000000-0000-0000-0000-000000000001",
        "customer_email": "  ",
        "discount_id": null,
        "success_url": "https://example.com/ok",
    }))
    .expect("body");
    let cmd = body.into_command().expect("command");
    assert!(cmd.product_id.is_some());
    assert_eq!(cmd.discount_id, Some(None));
    assert_eq!(cmd.changes.customer_email, Some(None));
    assert_eq!(
        cmd.changes.success_url,
        Some(Some("https://example.com/ok".into()))
    );

    let body: CheckoutUpdate = serde_json::from_value(json!({
        "amount": -1,
        "customer_email": "not an e-mail",
        "success_url": "nope",
        // Seats are priced by the checkout's price; a count below 1 is refused here.
        "seats": 0,
    }))
    .expect("body");
    let err = body.into_command().expect_err("422");
    assert_eq!(
        locs(err),
        vec![
            json!(["body", "amount"]),
            json!(["body", "customer_email"]),
            json!(["body", "success_url"]),
            json!(["body", "seats"]),
        ]
    );

    // The buyer may only turn a trial off.
    let body: CheckoutUpdatePublic =
        serde_json::from_value(json!({"allow_trial": true})).expect("body");
    assert_eq!(
        locs(body.into_command().expect_err("422")),
        vec![json!(["body", "allow_trial"])]
    );
}
