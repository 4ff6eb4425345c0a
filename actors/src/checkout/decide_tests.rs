//! Unit tests of the checkout's rules (`decide.rs`) and of its amounts and validation
//! rules (`amounts.rs`): creation, updates, confirm, settlement and expiry.

use super::*;
use crate::checkout::model::{AppliedDiscount, CheckoutTerms, FieldMode};
use crate::checkout::DEFAULT_CUSTOM_AMOUNT;
use crate::domain::custom_field::CustomFieldData;
use crate::domain::customer::Address;
use crate::domain::discount::{DiscountDuration, DiscountKind};
use crate::domain::ids::{CheckoutId, DiscountId, OrganizationId, PriceId, ProductId};
use crate::domain::metadata::Metadata;
use crate::domain::product::{Price, PriceKind, RecurringInterval};
use chrono::{Duration, TimeZone};

pub(crate) fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 1, 1, 12, 0, 0).unwrap()
}

fn price(kind: PriceKind) -> Price {
    Price {
        id: PriceId::new(),
        created_at: t0(),
        modified_at: None,
        is_archived: false,
        kind,
    }
}

pub(crate) fn fixed(amount: i64) -> Price {
    price(PriceKind::OneTimeFixed {
        currency: "usd".into(),
        amount,
    })
}

fn monthly(amount: i64) -> Price {
    price(PriceKind::RecurringFixed {
        interval: RecurringInterval::Month,
        currency: "usd".into(),
        amount,
    })
}

fn custom(min: Option<i64>, max: Option<i64>, preset: Option<i64>) -> Price {
    price(PriceKind::OneTimeCustom {
        currency: "usd".into(),
        minimum_amount: min,
        maximum_amount: max,
        preset_amount: preset,
    })
}

fn new(p: Price) -> NewCheckout {
    NewCheckout {
        id: CheckoutId::new(),
        organization_id: OrganizationId::new(),
        client_secret: "polar_c_x".into(),
        expires_at: t0() + Duration::minutes(30),
        product_id: ProductId::new(),
        price: p,
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
    }
}

pub(crate) fn create(p: Price) -> Checkout {
    Checkout::create(new(p), t0(), None).unwrap()
}

fn discount_fixed(amount: i64) -> AppliedDiscount {
    AppliedDiscount {
        id: DiscountId::new(),
        name: "Launch".into(),
        code: Some("LAUNCH".into()),
        kind: DiscountKind::Fixed {
            amount,
            currency: "usd".into(),
        },
        duration: DiscountDuration::Once,
    }
}

fn percent(bp: i64) -> AppliedDiscount {
    AppliedDiscount {
        kind: DiscountKind::Percentage { basis_points: bp },
        ..discount_fixed(0)
    }
}

fn address(country: &str) -> Address {
    Address {
        line1: None,
        line2: None,
        postal_code: None,
        city: None,
        state: None,
        country: country.into(),
    }
}

pub(crate) fn ready() -> Changes {
    Changes {
        customer_name: Some(Some("Ada".into())),
        customer_email: Some(Some("ada@example.com".into())),
        customer_billing_address: Some(Some(address("FR"))),
        ..Changes::default()
    }
}

pub(crate) fn ctx(token: Option<&str>) -> ConfirmContext<'_> {
    ConfirmContext {
        confirmation_token: token,
        discount_redeemable: true,
        price_archived: false,
    }
}

fn invalid(r: Result<Checkout, CheckoutError>) -> Vec<(String, &'static str, String)> {
    match r {
        Err(CheckoutError::Invalid(issues)) => issues
            .into_iter()
            .map(|i| (i.loc.join("."), i.kind, i.msg))
            .collect(),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn create_fixed_price_takes_the_price_amount() {
    let mut n = new(fixed(1500));
    n.amount = Some(99);
    let c = Checkout::create(n, t0(), None).unwrap();
    assert_eq!(c.status, CheckoutStatus::Open);
    assert_eq!((c.amount, c.currency.as_deref()), (Some(1500), Some("usd")));
    assert_eq!(
        (c.subtotal_amount(), c.tax_amount, c.total_amount()),
        (Some(1500), Some(0), Some(1500))
    );
    assert!(c.is_payment_required() && c.is_discount_applicable() && !c.is_free_product_price());
    assert!(!c.is_payment_setup_required());
}

#[test]
fn create_free_price_has_no_amount() {
    let c = create(price(PriceKind::OneTimeFree));
    assert_eq!(
        (c.amount, c.currency.clone(), c.tax_amount, c.total_amount()),
        (None, None, None, None)
    );
    assert!(c.is_free_product_price() && !c.is_payment_required() && !c.is_payment_form_required());
    let c = create(price(PriceKind::RecurringFree {
        interval: RecurringInterval::Month,
    }));
    assert!(!c.is_payment_setup_required());
}

#[test]
fn create_custom_price_uses_amount_then_preset_then_default() {
    assert_eq!(create(custom(None, None, Some(4242))).amount, Some(4242));
    assert_eq!(
        create(custom(None, None, None)).amount,
        Some(DEFAULT_CUSTOM_AMOUNT)
    );
    let mut n = new(custom(Some(1000), Some(5000), Some(4242)));
    n.amount = Some(1000);
    assert_eq!(Checkout::create(n, t0(), None).unwrap().amount, Some(1000));
}

#[test]
fn create_custom_price_out_of_bounds_is_refused() {
    for (amount, kind, msg) in [
        (500, "greater_than_equal", "Amount is below minimum."),
        (10000, "less_than_equal", "Amount is above maximum."),
    ] {
        let mut n = new(custom(Some(1000), Some(5000), None));
        n.amount = Some(amount);
        assert_eq!(
            invalid(Checkout::create(n, t0(), None)),
            vec![("amount".to_string(), kind, msg.to_string())]
        );
    }
}

#[test]
fn discounts_reduce_the_subtotal() {
    let mut n = new(fixed(1000));
    n.discount = Some(discount_fixed(300));
    let c = Checkout::create(n, t0(), None).unwrap();
    assert_eq!(
        (c.subtotal_amount(), c.total_amount()),
        (Some(700), Some(700))
    );
    // A fixed discount never takes more than the amount.
    let mut n = new(fixed(200));
    n.discount = Some(discount_fixed(300));
    assert_eq!(
        Checkout::create(n, t0(), None).unwrap().subtotal_amount(),
        Some(0)
    );
    // Percentages round half up.
    let mut n = new(fixed(1005));
    n.discount = Some(percent(5000));
    assert_eq!(
        Checkout::create(n, t0(), None).unwrap().subtotal_amount(),
        Some(502)
    );
}

#[test]
fn discounts_need_a_fixed_price() {
    let mut n = new(custom(None, None, None));
    n.discount = Some(discount_fixed(100));
    assert_eq!(
        invalid(Checkout::create(n, t0(), None)),
        vec![(
            "discount_id".to_string(),
            "value_error",
            "Discounts are only applicable to fixed prices.".to_string()
        )]
    );
}

#[test]
fn a_full_percentage_discount_on_a_subscription_still_needs_setup() {
    let mut n = new(monthly(1000));
    n.discount = Some(percent(10000));
    let c = Checkout::create(n, t0(), None).unwrap();
    assert_eq!(c.total_amount(), Some(0));
    assert!(!c.is_payment_required());
    assert!(c.is_payment_setup_required() && c.is_payment_form_required());
}

#[test]
fn expiry_is_seen_at_once_and_persisted_by_expire() {
    let c = create(fixed(1000));
    assert_eq!(
        c.effective_status(t0() + Duration::minutes(29)),
        CheckoutStatus::Open
    );
    let later = t0() + Duration::minutes(30);
    assert_eq!(c.effective_status(later), CheckoutStatus::Expired);
    assert!(c.expire(t0()).is_none());
    assert_eq!(c.expire(later).unwrap().status, CheckoutStatus::Expired);
    assert_eq!(
        c.update(Changes::default(), later, None),
        Err(CheckoutError::NotOpen(CheckoutStatus::Expired))
    );
}

#[test]
fn update_changes_price_amount_and_fields() {
    let c = create(fixed(1000));
    let other = fixed(2500);
    let u = c
        .update(
            Changes {
                price: Some(other.clone()),
                customer_name: Some(Some("  ".into())),
                ..Changes::default()
            },
            t0(),
            None,
        )
        .unwrap();
    assert_eq!((u.price.id, u.amount), (other.id, Some(2500)));
    assert_eq!(u.customer_name, None);
    assert_eq!(u.modified_at, Some(t0()));
    // An amount on a fixed price is ignored; on a custom price it applies, with bounds.
    let u2 = u
        .update(
            Changes {
                amount: Some(1),
                ..Changes::default()
            },
            t0(),
            None,
        )
        .unwrap();
    assert_eq!(u2.amount, Some(2500));
    let c = create(custom(Some(1000), None, None));
    let u = c
        .update(
            Changes {
                amount: Some(3000),
                ..Changes::default()
            },
            t0(),
            None,
        )
        .unwrap();
    assert_eq!(u.amount, Some(3000));
    assert_eq!(
        invalid(c.update(
            Changes {
                amount: Some(10),
                ..Changes::default()
            },
            t0(),
            None
        ))[0]
            .0,
        "amount"
    );
    // Switching to a free price clears the amount and any discount.
    let mut n = new(fixed(1000));
    n.discount = Some(discount_fixed(100));
    let c = Checkout::create(n, t0(), None).unwrap();
    let u = c
        .update(
            Changes {
                price: Some(price(PriceKind::OneTimeFree)),
                ..Changes::default()
            },
            t0(),
            None,
        )
        .unwrap();
    assert_eq!((u.amount, u.discount.clone()), (None, None));
}

#[test]
fn email_of_a_checkout_with_a_customer_is_kept() {
    let mut n = new(fixed(1000));
    n.customer_id = Some(CustomerId::new());
    n.customer_email = Some("owner@example.com".into());
    let c = Checkout::create(n, t0(), None).unwrap();
    let u = c
        .update(
            Changes {
                customer_email: Some(Some("other@example.com".into())),
                ..Changes::default()
            },
            t0(),
            None,
        )
        .unwrap();
    assert_eq!(u.customer_email.as_deref(), Some("owner@example.com"));
}

#[test]
fn tax_ids_are_checked_against_the_country() {
    let c = create(fixed(1000));
    let issues = invalid(c.update(
        Changes {
            customer_tax_id: Some(Some("123".into())),
            ..Changes::default()
        },
        t0(),
        None,
    ));
    assert_eq!(issues[0].0, "customer_billing_address");
    assert_eq!(issues[0].2, "Country is required to validate tax ID.");
    let u = c
        .update(
            Changes {
                customer_billing_address: Some(Some(address("FR"))),
                customer_tax_id: Some(Some("FR61954506077".into())),
                ..Changes::default()
            },
            t0(),
            None,
        )
        .unwrap();
    assert_eq!(
        u.customer_tax_id.as_ref().map(|t| t.value.as_str()),
        Some("FR61954506077")
    );
    // Changing the country alone revalidates the stored tax id.
    let issues = invalid(u.update(
        Changes {
            customer_billing_address: Some(Some(address("US"))),
            ..Changes::default()
        },
        t0(),
        None,
    ));
    assert_eq!(
        issues[0],
        (
            "customer_tax_id".into(),
            "value_error",
            "Invalid tax ID.".into()
        )
    );
    // An explicit null clears it.
    let cleared = u
        .update(
            Changes {
                customer_tax_id: Some(None),
                ..Changes::default()
            },
            t0(),
            None,
        )
        .unwrap();
    assert_eq!(cleared.customer_tax_id, None);
}

#[test]
fn confirm_reports_every_missing_field() {
    let c = create(monthly(1000));
    let issues = invalid(c.confirm(Changes::default(), ctx(None), t0(), None));
    let locs: Vec<&str> = issues.iter().map(|i| i.0.as_str()).collect();
    assert_eq!(
        locs,
        vec![
            "customer_email",
            "customer_name",
            "customer_billing_address",
            "confirmation_token_id"
        ]
    );
    assert!(issues.iter().all(|i| i.1 == "missing"));
    assert_eq!(issues[3].2, "Confirmation token is required.");
}

#[test]
fn confirm_moves_to_confirmed_and_keeps_the_token() {
    let c = create(fixed(1000));
    let confirmed = c
        .confirm(ready(), ctx(Some("tok_visa")), t0(), None)
        .unwrap();
    assert_eq!(confirmed.status, CheckoutStatus::Confirmed);
    assert_eq!(confirmed.confirmation_token.as_deref(), Some("tok_visa"));
    // Not open any more.
    assert_eq!(
        confirmed.confirm(ready(), ctx(Some("tok_visa")), t0(), None),
        Err(CheckoutError::NotOpen(CheckoutStatus::Confirmed))
    );
    assert_eq!(
        confirmed.update(Changes::default(), t0(), None),
        Err(CheckoutError::NotOpen(CheckoutStatus::Confirmed))
    );
}

#[test]
fn a_free_checkout_confirms_with_an_email_only() {
    let c = create(price(PriceKind::OneTimeFree));
    let confirmed = c
        .confirm(
            Changes {
                customer_email: Some(Some("a@b.co".into())),
                ..Changes::default()
            },
            ctx(None),
            t0(),
            None,
        )
        .unwrap();
    assert_eq!(confirmed.status, CheckoutStatus::Confirmed);
}

#[test]
fn confirm_rechecks_discount_price_and_amount() {
    let mut n = new(fixed(1000));
    n.discount = Some(discount_fixed(100));
    let c = Checkout::create(n, t0(), None).unwrap();
    let mut x = ctx(Some("tok_visa"));
    x.discount_redeemable = false;
    assert_eq!(
        invalid(c.confirm(ready(), x, t0(), None)),
        vec![(
            "discount_id".to_string(),
            "value_error",
            "Discount is no longer redeemable.".to_string()
        )]
    );
    let mut x = ctx(Some("tok_visa"));
    x.price_archived = true;
    assert_eq!(
        invalid(c.confirm(ready(), x, t0(), None))[0].2,
        "Price is archived."
    );
}

#[test]
fn settle_transitions() {
    let confirmed = create(monthly(1000))
        .confirm(ready(), ctx(Some("tok_visa")), t0(), None)
        .unwrap();
    let sub = SubscriptionId::new();
    let ok = confirmed.succeed(Some("pi_1"), Some(sub), t0()).unwrap();
    assert_eq!(
        (ok.status, ok.subscription_id, ok.confirmation_token.clone()),
        (CheckoutStatus::Succeeded, Some(sub), None)
    );
    assert_eq!(
        ok.payment_processor_metadata
            .get("intent_status")
            .map(String::as_str),
        Some("succeeded")
    );
    assert!(matches!(
        ok.succeed(None, None, t0()),
        Err(CheckoutError::WrongStatus { .. })
    ));
    let reopened = confirmed.reopen(t0()).unwrap();
    assert_eq!(
        (reopened.status, reopened.confirmation_token.clone()),
        (CheckoutStatus::Open, None)
    );
    assert_eq!(confirmed.fail(t0()).unwrap().status, CheckoutStatus::Failed);
    assert!(matches!(
        reopened.fail(t0()),
        Err(CheckoutError::WrongStatus { .. })
    ));
    assert!(matches!(
        reopened.reopen(t0()),
        Err(CheckoutError::WrongStatus { .. })
    ));
}

#[test]
fn each_confirmation_has_its_own_charge_key_and_keeps_it() {
    let open = create(fixed(1000));
    let first = open
        .confirm(ready(), ctx(Some("pm_1")), t0(), None)
        .unwrap();
    let key = first.charge_key();
    assert!(key.starts_with(&first.id.to_string()), "{key}");
    assert_eq!(
        first.clone().with_customer(CustomerId::new()).charge_key(),
        key
    );
    // Declined, then confirmed again with the same card: a new attempt, a new key.
    let later = t0() + Duration::seconds(5);
    let second = first
        .reopen(later)
        .unwrap()
        .confirm(ready(), ctx(Some("pm_1")), later, None)
        .unwrap();
    assert_ne!(second.charge_key(), key);
}

#[test]
fn awaiting_a_payment_keeps_the_checkout_confirmed_with_its_intent() {
    let confirmed = create(fixed(1000))
        .confirm(ready(), ctx(Some("pm_card")), t0(), None)
        .unwrap();
    assert_eq!(confirmed.pending_intent(), None);
    let waiting = confirmed
        .await_payment("pi_3ds", "requires_action", Some("pi_3ds_secret"), t0())
        .unwrap();
    assert_eq!(waiting.status, CheckoutStatus::Confirmed);
    assert_eq!(waiting.pending_intent(), Some("pi_3ds"));
    let meta = |c: &Checkout, k: &str| c.payment_processor_metadata.get(k).cloned();
    assert_eq!(
        meta(&waiting, "intent_status").as_deref(),
        Some("requires_action")
    );
    assert_eq!(
        meta(&waiting, "intent_client_secret").as_deref(),
        Some("pi_3ds_secret")
    );
    // Settled later: the secret is dropped once paid; a decline reopens afresh.
    let paid = waiting.succeed(Some("pi_3ds"), None, t0()).unwrap();
    assert_eq!(paid.status, CheckoutStatus::Succeeded);
    assert_eq!(paid.pending_intent(), None);
    assert_eq!(meta(&paid, "intent_client_secret"), None);
    assert_eq!(meta(&paid, "intent_status").as_deref(), Some("succeeded"));
    let reopened = waiting.reopen(t0()).unwrap();
    assert_eq!(reopened.status, CheckoutStatus::Open);
    assert!(reopened.payment_processor_metadata.is_empty());
    // Only a confirmed checkout can wait on a payment.
    assert!(matches!(
        reopened.await_payment("pi_x", "processing", None, t0()),
        Err(CheckoutError::WrongStatus { .. })
    ));
    assert!(matches!(
        paid.await_payment("pi_x", "processing", None, t0()),
        Err(CheckoutError::WrongStatus { .. })
    ));
}

#[test]
fn success_url_substitutes_the_checkout_id_only() {
    let mut n = new(fixed(1000));
    n.success_url =
        Some("https://x.test/ok?checkout_id={CHECKOUT_ID}&s={CHECKOUT_SESSION_ID}".into());
    let c = Checkout::create(n, t0(), None).unwrap();
    assert_eq!(
        c.success_url("unused"),
        format!(
            "https://x.test/ok?checkout_id={}&s={{CHECKOUT_SESSION_ID}}",
            c.id
        )
    );
    assert_eq!(
        create(fixed(1)).success_url("https://d.test/"),
        "https://d.test/"
    );
}

#[test]
fn an_attempt_is_the_checkouts_until_it_moves_on_to_another() {
    let first = create(fixed(1000))
        .confirm(ready(), ctx(Some("pm_1")), t0(), None)
        .unwrap();
    let attempt = first.attempt();
    assert_eq!(attempt.charge_key, first.charge_key());
    assert_eq!(attempt.intent, None);
    assert!(first.is_attempt(&attempt));
    // The processor reports the payment under way: the same attempt, now by its intent.
    let later = t0() + Duration::seconds(1);
    let waiting = first
        .await_payment("pi_1", "requires_action", None, later)
        .unwrap();
    assert_ne!(waiting.charge_key(), first.charge_key());
    assert!(
        !waiting.is_attempt(&attempt),
        "read before the intent was known"
    );
    let waiting_attempt = waiting.attempt();
    assert_eq!(waiting_attempt.intent.as_deref(), Some("pi_1"));
    let polled = waiting
        .await_payment("pi_1", "processing", None, later + Duration::seconds(1))
        .unwrap();
    assert!(polled.is_attempt(&waiting_attempt), "the same intent");
    // Declined, then confirmed again: the first attempt is no longer the checkout's.
    let again_at = t0() + Duration::seconds(5);
    let second = first
        .reopen(again_at)
        .unwrap()
        .confirm(ready(), ctx(Some("pm_1")), again_at, None)
        .unwrap();
    assert!(!second.is_attempt(&attempt));
    assert!(!second.is_attempt(&waiting_attempt));
    assert!(second.is_attempt(&second.attempt()));
}

fn of_products(p: Price, others: &[ProductId]) -> Checkout {
    let n = new(p);
    let mut products = vec![n.product_id];
    products.extend_from_slice(others);
    let terms = CheckoutTerms {
        products,
        ..CheckoutTerms::for_product(n.product_id)
    };
    Checkout::create_with(n, terms, t0(), None).unwrap()
}

#[test]
fn a_checkout_switches_among_its_products_only() {
    let (second, stranger) = (ProductId::new(), ProductId::new());
    let c = of_products(fixed(1000), &[second]);
    assert_eq!(c.products, [c.product_id, second]);
    // To another of its products, at the price the caller resolved.
    let switched = c
        .update(
            Changes {
                product: Some(second),
                price: Some(monthly(700)),
                ..Changes::default()
            },
            t0(),
            None,
        )
        .unwrap();
    assert_eq!(switched.product_id, second);
    assert_eq!(
        (switched.amount, switched.products.clone()),
        (Some(700), c.products.clone())
    );
    assert!(switched.is_payment_setup_required());
    // Not to a product it does not offer, nor without a price.
    for changes in [
        Changes {
            product: Some(stranger),
            price: Some(fixed(5)),
            ..Changes::default()
        },
        Changes {
            product: Some(second),
            ..Changes::default()
        },
    ] {
        match c.update(changes, t0(), None) {
            Err(CheckoutError::Invalid(issues)) => {
                assert_eq!(issues[0].loc, ["product_id"]);
            }
            other => panic!("{other:?}"),
        }
    }
    // Created for a product missing from its list: that product comes first.
    let n = new(fixed(1));
    let first = n.product_id;
    let terms = CheckoutTerms {
        products: vec![second],
        ..CheckoutTerms::for_product(second)
    };
    let c = Checkout::create_with(n, terms, t0(), None).unwrap();
    assert_eq!(c.products, [first, second]);
}

#[test]
fn a_full_billing_address_is_asked_for_and_required_when_the_seller_wants_it() {
    let c = create(fixed(1000));
    let fields = c.billing_address_fields();
    assert_eq!(
        (fields.country, fields.state, fields.line1, fields.city),
        (
            FieldMode::Required,
            FieldMode::Disabled,
            FieldMode::Optional,
            FieldMode::Optional
        )
    );
    let full = c
        .update(
            Changes {
                require_billing_address: Some(true),
                customer_billing_address: Some(Some(address("US"))),
                ..Changes::default()
            },
            t0(),
            None,
        )
        .unwrap();
    let fields = full.billing_address_fields();
    assert_eq!(
        (
            fields.state,
            fields.line1,
            fields.line2,
            fields.postal_code,
            fields.city
        ),
        (
            FieldMode::Required,
            FieldMode::Required,
            FieldMode::Optional,
            FieldMode::Required,
            FieldMode::Required
        )
    );
    match full.confirm(ready(), ctx(Some("tok")), t0(), None) {
        Err(CheckoutError::Invalid(issues)) => {
            let locs: Vec<Vec<String>> = issues.into_iter().map(|i| i.loc).collect();
            for line in ["line1", "postal_code", "city"] {
                assert!(
                    locs.contains(&vec![
                        "customer_billing_address".to_string(),
                        line.to_string()
                    ]),
                    "{locs:?}"
                );
            }
        }
        other => panic!("{other:?}"),
    }
    let mut changes = ready();
    changes.customer_billing_address = Some(Some(Address {
        line1: Some("1 Main St".into()),
        postal_code: Some("10001".into()),
        city: Some("New York".into()),
        ..address("US")
    }));
    assert!(full.confirm(changes, ctx(Some("tok")), t0(), None).is_ok());
    // A free checkout needs no address, unless a full one is required.
    let free = create(price(PriceKind::OneTimeFree));
    let email_only = Changes {
        customer_email: Some(Some("a@b.co".into())),
        ..Changes::default()
    };
    assert!(free
        .confirm(email_only.clone(), ctx(None), t0(), None)
        .is_ok());
    let strict = free
        .update(
            Changes {
                require_billing_address: Some(true),
                ..Changes::default()
            },
            t0(),
            None,
        )
        .unwrap();
    assert!(strict.confirm(email_only, ctx(None), t0(), None).is_err());
}

/// The tax of a quote for `c` as `changes` and `confirm` would leave it: `rate` percent of
/// its subtotal.
fn quote_for(c: &Checkout, changes: Changes, percent: i64) -> crate::tax::TaxQuote {
    let preview = c.update(changes, t0(), None).unwrap();
    let request = preview.tax_request().expect("a taxable checkout");
    let mut q = crate::tax::TaxQuote::zero(request);
    q.tax_amount = q.request.amount * percent / 100;
    q.breakdown.push(crate::tax::TaxBreakdown {
        country: "FR".into(),
        subdivision: None,
        name: "VAT".into(),
        rate_ppm: u32::try_from(percent * 10_000).unwrap(),
        taxable_amount: q.request.amount,
        amount: q.tax_amount,
        reason: crate::tax::TaxabilityReason::StandardRated,
        regime: crate::tax::Regime::EuOss,
    });
    q
}

#[test]
fn a_quote_given_is_the_checkouts_tax() {
    let c = create(fixed(1000));
    // No quote: no tax (what the default service answers, too).
    assert_eq!((c.tax_amount, c.total_amount()), (Some(0), Some(1000)));
    let q = quote_for(&c, ready(), 20);
    let confirmed = c
        .confirm(ready(), ctx(Some("tok_visa")), t0(), Some(&q))
        .unwrap();
    assert_eq!(
        (
            confirmed.subtotal_amount(),
            confirmed.tax_amount,
            confirmed.total_amount()
        ),
        (Some(1000), Some(200), Some(1200))
    );
    // A zero quote keeps today's amounts.
    let zero = crate::tax::TaxQuote::zero(q.request.clone());
    let confirmed = c
        .confirm(ready(), ctx(Some("tok_visa")), t0(), Some(&zero))
        .unwrap();
    assert_eq!(
        (confirmed.tax_amount, confirmed.total_amount()),
        (Some(0), Some(1000))
    );
    // An inclusive quote adds nothing to the total.
    let mut inclusive = q.clone();
    inclusive.request.behavior = crate::tax::TaxBehavior::Inclusive;
    let confirmed = c
        .confirm(ready(), ctx(Some("tok_visa")), t0(), Some(&inclusive))
        .unwrap();
    assert_eq!(confirmed.total_amount(), Some(1000));
}

#[test]
fn a_quote_for_other_amounts_is_refused_as_stale() {
    let c = create(fixed(1000));
    let q = quote_for(&c, ready(), 20);
    // The buyer moved to another country since the quote.
    let moved = Changes {
        customer_billing_address: Some(Some(address("DE"))),
        ..ready()
    };
    assert_eq!(
        c.confirm(moved, ctx(Some("tok_visa")), t0(), Some(&q)),
        Err(CheckoutError::TaxQuoteStale)
    );
    // A free checkout has nothing to tax: any quote is ignored.
    let free = create(price(PriceKind::OneTimeFree));
    assert_eq!(
        free.update(Changes::default(), t0(), Some(&q))
            .unwrap()
            .tax_amount,
        None
    );
}

fn seat_price(min: u32, max: Option<u32>) -> Price {
    use crate::domain::product::{SeatTier, SeatTierType, SeatTiers};
    let tier = SeatTier {
        min_seats: min,
        max_seats: max,
        price_per_seat: 500,
    };
    let Ok(seat_tiers) = SeatTiers::new(SeatTierType::Volume, vec![tier]) else {
        panic!("tiers refused");
    };
    price(PriceKind::OneTimeSeatBased {
        currency: "usd".into(),
        seat_tiers,
    })
}

/// A checkout of `p` with the seller's bounds on the seats, buying `seats`.
fn bounded(
    p: Price,
    min: Option<u32>,
    max: Option<u32>,
    seats: Option<u32>,
) -> Result<Checkout, CheckoutError> {
    let mut n = new(p);
    n.seats = seats;
    let terms = CheckoutTerms {
        min_seats: min,
        max_seats: max,
        ..CheckoutTerms::for_product(n.product_id)
    };
    Checkout::create_with(n, terms, t0(), None)
}

/// The locations and kinds of a refusal's issues.
fn refused(r: Result<Checkout, CheckoutError>) -> Vec<(String, &'static str, String)> {
    match r {
        Err(CheckoutError::Invalid(issues)) => issues
            .into_iter()
            .map(|i| (i.loc.join("."), i.kind, i.msg))
            .collect(),
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn the_sellers_seat_bounds_narrow_the_prices_own() {
    // 1+ seats narrowed to 3-10: the fewest by default.
    let c = bounded(seat_price(1, None), Some(3), Some(10), None).unwrap();
    assert_eq!(
        (c.seats, c.amount, c.seat_range()),
        (Some(3), Some(1500), Some((3, Some(10))))
    );
    // Looser bounds than the price's own (2-20) change nothing.
    let c = bounded(seat_price(2, Some(20)), Some(1), Some(50), Some(4)).unwrap();
    assert_eq!((c.seats, c.seat_range()), (Some(4), Some((2, Some(20)))));
    // Without bounds, the price's own.
    let c = bounded(seat_price(2, None), None, None, None).unwrap();
    assert_eq!((c.seats, c.seat_range()), (Some(2), Some((2, None))));
    // An update within them is priced; outside them it is refused at `seats`.
    let c = bounded(seat_price(1, None), Some(3), Some(10), Some(5)).unwrap();
    let seats = |n| Changes {
        seats: Some(n),
        ..Changes::default()
    };
    let up = c.update(seats(10), t0(), None).unwrap();
    assert_eq!((up.seats, up.amount), (Some(10), Some(5000)));
    assert_eq!(
        refused(c.update(seats(2), t0(), None)),
        [(
            "seats".into(),
            "greater_than_equal",
            "Input should be greater than or equal to 3".into()
        )]
    );
    assert_eq!(
        refused(c.update(seats(11), t0(), None)),
        [(
            "seats".into(),
            "less_than_equal",
            "Input should be less than or equal to 10".into()
        )]
    );
    // Bounds the price can't meet, and bounds of a price that is not seat-based.
    assert_eq!(
        refused(bounded(seat_price(1, Some(5)), Some(6), None, None)),
        [(
            "min_seats".into(),
            "value_error",
            "The price doesn't sell 6 seats.".into()
        )]
    );
    assert_eq!(
        refused(bounded(seat_price(4, None), None, Some(3), None)),
        [(
            "max_seats".into(),
            "value_error",
            "The price doesn't sell 3 seats.".into()
        )]
    );
    assert_eq!(
        refused(bounded(fixed(1000), Some(1), Some(2), None)),
        [
            (
                "min_seats".into(),
                "value_error",
                "min_seats can only be set for seat-based pricing.".into()
            ),
            (
                "max_seats".into(),
                "value_error",
                "max_seats can only be set for seat-based pricing.".into()
            )
        ]
    );
}
