//! Tests of the checkout's stored record (`mod.rs`): its encoding, pinned by golden bytes.

use std::collections::BTreeMap;

use super::*;
use crate::domain::discount::{DiscountDuration, DiscountKind};
use crate::domain::ids::{
    CustomerId, DiscountId, OrganizationId, PriceId, ProductId, SubscriptionId,
};
use crate::domain::product::{Price, PriceKind, RecurringInterval, Trial};
use crate::golden::{address, at, custom_field_data, hex, metadata, tax_id, uuid};

/// Every optional field set: a confirmed checkout of a custom price with all its bounds,
/// a repeating percentage discount, a resolved customer with address and tax id, a
/// pending payment intent, and metadata and custom field data of every value kind.
fn full_checkout() -> Checkout {
    Checkout {
        id: CheckoutId(uuid(1)),
        organization_id: OrganizationId(uuid(2)),
        created_at: at(0),
        modified_at: Some(at(60)),
        status: CheckoutStatus::Confirmed,
        client_secret: "polar_c_secret".into(),
        expires_at: at(3600),
        success_url: Some("https://shop.test/done/{CHECKOUT_ID}".into()),
        embed_origin: Some("https://shop.test".into()),
        product_id: ProductId(uuid(3)),
        price: Price {
            id: PriceId(uuid(4)),
            created_at: at(0),
            modified_at: Some(at(30)),
            is_archived: true,
            kind: PriceKind::OneTimeCustom {
                currency: "usd".into(),
                minimum_amount: Some(500),
                maximum_amount: Some(9000),
                preset_amount: Some(1500),
            },
        },
        amount: Some(1500),
        currency: Some("usd".into()),
        tax_amount: Some(300),
        discount: Some(AppliedDiscount {
            id: DiscountId(uuid(5)),
            name: "Launch".into(),
            code: Some("LAUNCH".into()),
            kind: DiscountKind::Percentage { basis_points: 2500 },
            duration: DiscountDuration::Repeating { months: 3 },
        }),
        allow_discount_codes: true,
        customer_id: Some(CustomerId(uuid(6))),
        customer_name: Some("Jane".into()),
        customer_email: Some("jane@example.com".into()),
        customer_ip_address: Some("192.0.2.1".into()),
        customer_billing_address: Some(address()),
        customer_tax_id: Some(tax_id()),
        customer_metadata: metadata(),
        metadata: metadata(),
        custom_field_data: custom_field_data(),
        payment_processor_metadata: BTreeMap::from([
            ("intent_id".to_string(), "pi_1".to_string()),
            ("intent_status".to_string(), "processing".to_string()),
        ]),
        subscription_id: Some(SubscriptionId(uuid(7))),
        confirmation_token: Some("tok_visa".into()),
        customer_id_before_confirm: Some(CustomerId(uuid(8))),
        products: vec![ProductId(uuid(9)), ProductId(uuid(3))],
        require_billing_address: true,
        allow_trial: false,
        external_customer_id: Some("ext-42".into()),
        return_url: Some("https://shop.test/back".into()),
        payment_method_type: Some("card".into()),
        trial: Some(Trial {
            interval: RecurringInterval::Week,
            count: 2,
        }),
        product_trial: Some(Trial {
            interval: RecurringInterval::Day,
            count: 14,
        }),
        trial_end: Some(at(600)),
        seats: None,
        min_seats: None,
        max_seats: None,
        is_business_customer: false,
        customer_billing_name: None,
        tax_behavior: None,
        tax_breakdown: Vec::new(),
        tax_id_status: None,
        tax_provider_ref: None,
        locale: None,
    }
}

#[test]
fn round_trip_and_golden_bytes() {
    let c = Checkout {
        min_seats: Some(2),
        max_seats: Some(9),
        ..full_checkout()
    };
    assert_eq!((Checkout::COLLECTION, Checkout::VERSION), ("checkout", 7));
    let bytes = c.encode().unwrap_or_default();
    assert_eq!(Checkout::decode(7, &bytes).ok(), Some(c.clone()));
    assert_eq!(
        hex(&bytes),
        format!(
            "{GOLDEN_V2}{GOLDEN_V3_TAIL}{GOLDEN_V4_TAIL}{GOLDEN_V5_TAIL}{GOLDEN_V6_EMPTY}{GOLDEN_V7_EMPTY}"
        ),
        "checkout format v7 changed"
    );
    // A version-6 record (the same bytes without the locale) reads without one.
    let v6 = unhex(&format!(
        "{GOLDEN_V2}{GOLDEN_V3_TAIL}{GOLDEN_V4_TAIL}{GOLDEN_V5_TAIL}{GOLDEN_V6_EMPTY}"
    ));
    assert_eq!(Checkout::decode(6, &v6).ok(), Some(c.clone()));
    // A German buyer's checkout.
    let german = Checkout {
        locale: Some("de-AT".into()),
        ..c.clone()
    };
    let g = german.encode().unwrap_or_default();
    assert_eq!(Checkout::decode(7, &g).ok(), Some(german));
    assert_eq!(
        hex(&g),
        format!(
            "{GOLDEN_V2}{GOLDEN_V3_TAIL}{GOLDEN_V4_TAIL}{GOLDEN_V5_TAIL}{GOLDEN_V6_EMPTY}{GOLDEN_V7_TAIL}"
        ),
        "checkout format v7 changed"
    );
    // A business buyer's checkout with a reverse-charged quote.
    let business = Checkout {
        is_business_customer: true,
        customer_billing_name: Some("Acme SAS".into()),
        tax_behavior: Some(crate::tax::TaxBehavior::Inclusive),
        tax_breakdown: vec![crate::tax::TaxBreakdown {
            country: "FR".into(),
            subdivision: None,
            name: "VAT".into(),
            rate_ppm: 200_000,
            taxable_amount: 1500,
            amount: 0,
            reason: crate::tax::TaxabilityReason::ReverseCharge,
            regime: crate::tax::Regime::None,
        }],
        tax_id_status: Some(crate::tax::TaxIdStatus::Valid),
        tax_provider_ref: Some("taxcalc_1".into()),
        ..c.clone()
    };
    let b = business.encode().unwrap_or_default();
    assert_eq!(Checkout::decode(7, &b).ok(), Some(business));
    assert_eq!(
        hex(&b),
        format!(
            "{GOLDEN_V2}{GOLDEN_V3_TAIL}{GOLDEN_V4_TAIL}{GOLDEN_V5_TAIL}{GOLDEN_V6_TAIL}{GOLDEN_V7_EMPTY}"
        ),
        "checkout format v7 changed"
    );
    // A version-5 record (the same bytes without the business and tax fields) reads as a
    // consumer's, without a breakdown.
    let v5 = unhex(&format!(
        "{GOLDEN_V2}{GOLDEN_V3_TAIL}{GOLDEN_V4_TAIL}{GOLDEN_V5_TAIL}"
    ));
    assert_eq!(Checkout::decode(5, &v5).ok(), Some(c.clone()));
    // A version-4 record (the same bytes without the bounds) reads without bounds.
    let v4 = unhex(&format!("{GOLDEN_V2}{GOLDEN_V3_TAIL}{GOLDEN_V4_TAIL}"));
    assert_eq!(Checkout::decode(4, &v4).ok(), Some(full_checkout()));
    assert!(Checkout::decode(5, &v4).is_err());
    // A version-3 record (the same bytes without the seats) reads without seats.
    let v3 = unhex(&format!("{GOLDEN_V2}{GOLDEN_V3_TAIL}"));
    assert_eq!(Checkout::decode(3, &v3).ok(), Some(full_checkout()));
}

/// Format version 7 appends the locale (none here) to version 6's layout.
const GOLDEN_V7_EMPTY: &str = "00";

/// The same with the locale `de-AT`.
const GOLDEN_V7_TAIL: &str = "010564652d4154";

/// Format version 6 appends the business buyer and the applied quote (none here) to
/// version 5's layout.
const GOLDEN_V6_EMPTY: &str = "000000000000";

/// The same with a business buyer's reverse-charged quote.
const GOLDEN_V6_TAIL: &str =
    "01010841636d65205341530100010246520003564154fc400d0300fbb80b0001090101010974617863616c635f31";

/// Format version 5 appends the seller's bounds on the seats (2 to 9 here) to version 4's
/// layout.
const GOLDEN_V5_TAIL: &str = "01020109";

/// Format version 4 appends the seats (none here) to version 3's layout.
const GOLDEN_V4_TAIL: &str = "00";

/// Format version 3 appends the trial fields to version 2's layout: these are their bytes.
const GOLDEN_V3_TAIL: &str = "01030201020e0114313937302d30312d30315430303a31303a30305a";

/// A record written by a build of format version 2 reads as a checkout without a trial of
/// its own (its product's is looked up when it is next updated).
#[test]
fn version_2_records_decode_without_trials() {
    let expected = Checkout {
        trial: None,
        product_trial: None,
        trial_end: None,
        ..full_checkout()
    };
    assert_eq!(Checkout::decode(2, &unhex(GOLDEN_V2)).ok(), Some(expected));
    assert!(Checkout::decode(3, &unhex(GOLDEN_V2)).is_err());
}

/// The bytes of a hex string (the golden fixtures).
fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .filter_map(|i| s.get(i..i + 2))
        .filter_map(|b| u8::from_str_radix(b, 16).ok())
        .collect()
}

/// A record written by a build of format version 1 reads as a checkout of its one
/// product, with Polar's default terms; written again, it is version 3.
#[test]
fn version_1_records_decode_as_checkouts_of_their_one_product() {
    let decoded = Checkout::decode(1, &unhex(GOLDEN_V1));
    let expected = Checkout {
        products: vec![ProductId(uuid(3))],
        require_billing_address: false,
        allow_trial: true,
        external_customer_id: None,
        return_url: None,
        payment_method_type: None,
        trial: None,
        product_trial: None,
        trial_end: None,
        ..full_checkout()
    };
    assert_eq!(decoded.ok(), Some(expected.clone()));
    let again = expected.encode().unwrap_or_default();
    assert_eq!(Checkout::decode(7, &again).ok(), Some(expected));
    // Version 1 bytes are not later versions' bytes, and an unknown version is refused.
    assert!(Checkout::decode(2, &unhex(GOLDEN_V1)).is_err());
    assert!(Checkout::decode(3, &unhex(GOLDEN_V1)).is_err());
    assert!(Checkout::decode(8, &again).is_err());
}

/// A record written by a build of format version 3 (before seats) reads without seats;
/// version 4 keeps them.
#[test]
fn version_3_records_decode_without_seats() {
    let mut c = full_checkout();
    c.seats = None;
    let mut fields = serde_json::to_value(&c).unwrap_or_default();
    if let Some(o) = fields.as_object_mut() {
        o.remove("seats");
    }
    let v3: Result<super::v3::CheckoutV3, _> = serde_json::from_value(fields);
    let Ok(v3) = v3 else {
        panic!("no version-3 layout: {v3:?}");
    };
    let bytes = tollgate_storage::codec::encode(&v3).unwrap_or_default();
    assert_eq!(Checkout::decode(3, &bytes).ok(), Some(c.clone()));
    c.seats = Some(7);
    let bytes = c.encode().unwrap_or_default();
    assert_eq!(Checkout::decode(Checkout::VERSION, &bytes).ok(), Some(c));
}

const GOLDEN_V2: &str = "\
    1000000000000000000000000000000001100000000000000000000000000000000214313937302d30312d30\
    315430303a30303a30305a0114313937302d30312d30315430303a30313a30305a020e706f6c61725f635f73\
    656372657414313937302d30312d30315430313a30303a30305a012468747470733a2f2f73686f702e746573\
    742f646f6e652f7b434845434b4f55545f49447d011168747470733a2f2f73686f702e746573741000000000\
    000000000000000000000003100000000000000000000000000000000414313937302d30312d30315430303a\
    30303a30305a0114313937302d30312d30315430303a30303a33305a01030375736401fbe80301fb504601fb\
    b80b01fbb80b010375736401fb5802011000000000000000000000000000000005064c61756e636801064c41\
    554e434801fb881302060101100000000000000000000000000000000601044a616e6501106a616e65406578\
    616d706c652e636f6d01093139322e302e322e3101010931204d61696e205374010541707420320107483258\
    2031593401084d6f6e747265616c010543412d514302434101093132333435363738320a0304706c616e0003\
    70726f057365617473010505747269616c02010304706c616e000370726f057365617473010505747269616c\
    020105056167726565030004626f726e0414323032342d30352d30315430303a30303a30305a05636f756e74\
    020e05656d70747900046e6f7465010268690209696e74656e745f69640470695f310d696e74656e745f7374\
    617475730a70726f63657373696e670110000000000000000000000000000000070108746f6b5f7669736101\
    1000000000000000000000000000000008021000000000000000000000000000000009100000000000000000\
    0000000000000003010001066578742d3432011668747470733a2f2f73686f702e746573742f6261636b0104\
    63617264";

const GOLDEN_V1: &str = "\
    1000000000000000000000000000000001100000000000000000000000000000000214313937302d30312d30\
    315430303a30303a30305a0114313937302d30312d30315430303a30313a30305a020e706f6c61725f635f73\
    656372657414313937302d30312d30315430313a30303a30305a012468747470733a2f2f73686f702e746573\
    742f646f6e652f7b434845434b4f55545f49447d011168747470733a2f2f73686f702e746573741000000000\
    000000000000000000000003100000000000000000000000000000000414313937302d30312d30315430303a\
    30303a30305a0114313937302d30312d30315430303a30303a33305a01030375736401fbe80301fb504601fb\
    b80b01fbb80b010375736401fb5802011000000000000000000000000000000005064c61756e636801064c41\
    554e434801fb881302060101100000000000000000000000000000000601044a616e6501106a616e65406578\
    616d706c652e636f6d01093139322e302e322e3101010931204d61696e205374010541707420320107483258\
    2031593401084d6f6e747265616c010543412d514302434101093132333435363738320a0304706c616e0003\
    70726f057365617473010505747269616c02010304706c616e000370726f057365617473010505747269616c\
    020105056167726565030004626f726e0414323032342d30352d30315430303a30303a30305a05636f756e74\
    020e05656d70747900046e6f7465010268690209696e74656e745f69640470695f310d696e74656e745f7374\
    617475730a70726f63657373696e670110000000000000000000000000000000070108746f6b5f7669736101\
    1000000000000000000000000000000008";
