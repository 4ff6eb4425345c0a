//! Unit tests of `product.rs`.

use super::*;
use chrono::TimeZone;

fn price(kind: PriceKind, archived: bool) -> Price {
    Price {
        id: PriceId::new(),
        created_at: Utc
            .timestamp_opt(1_700_000_000, 0)
            .single()
            .unwrap_or_default(),
        modified_at: None,
        is_archived: archived,
        kind,
    }
}

fn product(name: &str, secs: i64, prices: Vec<Price>) -> Product {
    Product {
        id: ProductId::new(),
        organization_id: OrganizationId::new(),
        created_at: Utc.timestamp_opt(secs, 0).single().unwrap_or_default(),
        modified_at: None,
        name: name.into(),
        description: None,
        is_recurring: false,
        is_archived: false,
        is_tax_applicable: true,
        metadata: Metadata::default(),
        prices,
        benefit_ids: Vec::new(),
        media_ids: Vec::new(),
        attached_custom_fields: Vec::new(),
        recurring_interval_count: 1,
        trial: None,
        price_tax_behavior: Vec::new(),
        free_price_currency: Vec::new(),
    }
}

fn fixed(amount: i64) -> PriceKind {
    PriceKind::OneTimeFixed {
        currency: "usd".into(),
        amount,
    }
}

fn order(products: &[Product], field: ProductSort) -> Vec<String> {
    let mut keyed: Vec<(Vec<u8>, String)> = products
        .iter()
        .map(|p| (p.sort_key(field), p.name.clone()))
        .collect();
    keyed.sort();
    keyed.into_iter().map(|(_, n)| n).collect()
}

#[test]
fn price_amount_uses_the_first_active_price_and_puts_none_last() {
    let products = vec![
        product("big", 1, vec![price(fixed(9000), false)]),
        product(
            "archived-first",
            2,
            vec![price(fixed(1), true), price(fixed(5000), false)],
        ),
        product("free", 3, vec![price(PriceKind::OneTimeFree, false)]),
        product(
            "custom",
            4,
            vec![price(
                PriceKind::OneTimeCustom {
                    currency: "usd".into(),
                    minimum_amount: None,
                    maximum_amount: None,
                    preset_amount: None,
                },
                false,
            )],
        ),
        product("none", 5, vec![price(fixed(10), true)]),
    ];
    assert_eq!(
        order(&products, ProductSort::PriceAmount),
        vec!["free", "custom", "archived-first", "big", "none"]
    );
    assert_eq!(
        order(&products, ProductSort::PriceAmountType),
        vec!["free", "custom", "big", "archived-first", "none"]
    );
}

#[test]
fn names_sort_case_insensitively_then_by_creation() {
    let products = [
        product("beta", 1, vec![]),
        product("Alpha", 3, vec![]),
        product("alpha", 2, vec![]),
    ];
    let mut keyed: Vec<(Vec<u8>, i64)> = products
        .iter()
        .map(|p| (p.sort_key(ProductSort::Name), p.created_at.timestamp()))
        .collect();
    keyed.sort();
    let got: Vec<i64> = keyed.into_iter().map(|(_, t)| t).collect();
    assert_eq!(got, vec![2, 3, 1]);
}

/// A product written by a build of format version 1 reads with single intervals and no
/// trial; version 2 keeps both.
#[test]
fn version_1_products_decode_with_single_intervals_and_no_trial() {
    let mut p = product("x", 1, vec![price(fixed(100), false)]);
    let v1 = ProductV1 {
        id: p.id,
        organization_id: p.organization_id,
        created_at: p.created_at,
        modified_at: p.modified_at,
        name: p.name.clone(),
        description: p.description.clone(),
        is_recurring: p.is_recurring,
        is_archived: p.is_archived,
        is_tax_applicable: p.is_tax_applicable,
        metadata: p.metadata.clone(),
        prices: p.prices.clone(),
        benefit_ids: p.benefit_ids.clone(),
        media_ids: p.media_ids.clone(),
        attached_custom_fields: p.attached_custom_fields.clone(),
    };
    let bytes = tollgate_storage::codec::encode(&v1).unwrap_or_default();
    assert_eq!(Product::decode(1, &bytes).ok(), Some(p.clone()));
    assert!(Product::decode(2, &bytes).is_err());
    p.recurring_interval_count = 3;
    p.trial = Some(Trial {
        interval: RecurringInterval::Week,
        count: 2,
    });
    let bytes = tollgate_storage::codec::encode(&v3_of(&p)).unwrap_or_default();
    assert_eq!(Product::decode(2, &bytes).ok(), Some(p.clone()));
    assert_eq!(Product::decode(3, &bytes).ok(), Some(p));
    assert!(Product::decode(4, &bytes).is_err());
}

/// `p` in the layout of format versions 2 and 3.
fn v3_of(p: &Product) -> ProductV3 {
    ProductV3 {
        id: p.id,
        organization_id: p.organization_id,
        created_at: p.created_at,
        modified_at: p.modified_at,
        name: p.name.clone(),
        description: p.description.clone(),
        is_recurring: p.is_recurring,
        is_archived: p.is_archived,
        is_tax_applicable: p.is_tax_applicable,
        metadata: p.metadata.clone(),
        prices: p.prices.clone(),
        benefit_ids: p.benefit_ids.clone(),
        media_ids: p.media_ids.clone(),
        attached_custom_fields: p.attached_custom_fields.clone(),
        recurring_interval_count: p.recurring_interval_count,
        trial: p.trial,
    }
}

/// A version-3 product (written before prices chose a tax behaviour) reads with every
/// price on the organization's default; version 4 keeps each price's own behaviour.
#[test]
fn version_3_products_decode_without_price_tax_behaviors_and_version_4_keeps_them() {
    let mut p = product("x", 1, vec![price(fixed(100), false)]);
    p.recurring_interval_count = 2;
    let bytes = tollgate_storage::codec::encode(&v3_of(&p)).unwrap_or_default();
    let read = Product::decode(3, &bytes).ok();
    assert_eq!(read, Some(p.clone()));
    assert_eq!(
        read.and_then(|r| r.price_tax_behavior(r.prices[0].id)),
        None
    );
    assert!(Product::decode(4, &bytes).is_err());

    let now = p.created_at;
    let inclusive = p.add_price(
        NewPrice::new(
            fixed(200),
            Currency::DEFAULT,
            Some(TaxBehaviorOption::Inclusive),
        ),
        now,
    );
    let default = p.add_price(fixed(300).into(), now);
    let bytes = p.encode().unwrap_or_default();
    let read = Product::decode(Product::VERSION, &bytes).ok();
    assert_eq!(read.as_ref(), Some(&p));
    let read = read.unwrap_or_else(|| p.clone());
    assert_eq!(
        read.price_tax_behavior(inclusive),
        Some(TaxBehaviorOption::Inclusive)
    );
    assert_eq!(read.price_tax_behavior(default), None);
    assert_eq!(read.price_tax_behavior(read.prices[0].id), None);
    assert!(Product::decode(3, &bytes).is_err());
}

fn tier(min: u32, max: Option<u32>, price: i64) -> SeatTier {
    SeatTier {
        min_seats: min,
        max_seats: max,
        price_per_seat: price,
    }
}

/// A version-2 record (every price kind it knew) reads as version 3, and a product
/// with seat-based prices round-trips through version 3.
#[test]
fn version_3_adds_seat_based_prices_and_reads_version_2() {
    let v2 = product(
        "old",
        1,
        vec![
            price(fixed(100), true),
            price(PriceKind::OneTimeFree, true),
            price(
                PriceKind::RecurringFree {
                    interval: RecurringInterval::Week,
                },
                false,
            ),
        ],
    );
    let bytes = tollgate_storage::codec::encode(&v3_of(&v2)).unwrap_or_default();
    assert_eq!(Product::decode(2, &bytes).ok(), Some(v2));
    let tiers = SeatTiers::new(
        SeatTierType::Graduated,
        vec![tier(1, Some(4), 1000), tier(5, None, 800)],
    );
    let Ok(tiers) = tiers else {
        panic!("valid tiers refused: {tiers:?}");
    };
    let seats = product(
        "seats",
        2,
        vec![
            price(
                PriceKind::OneTimeSeatBased {
                    currency: "usd".into(),
                    seat_tiers: tiers.clone(),
                },
                true,
            ),
            price(
                PriceKind::RecurringSeatBased {
                    interval: RecurringInterval::Month,
                    currency: "eur".into(),
                    seat_tiers: tiers,
                },
                false,
            ),
        ],
    );
    let bytes = seats.encode().unwrap_or_default();
    assert_eq!(Product::decode(Product::VERSION, &bytes).ok(), Some(seats));
}

#[test]
fn seat_tiers_are_sorted_contiguous_and_open_only_at_the_end() {
    let t = SeatTiers::new(
        SeatTierType::Volume,
        vec![tier(11, None, 500), tier(1, Some(10), 1000)],
    );
    let Ok(t) = t else {
        panic!("valid tiers refused: {t:?}");
    };
    assert_eq!(t.tiers()[0].min_seats, 1);
    assert_eq!((t.minimum_seats(), t.maximum_seats()), (1, None));
    let problem = |tiers: Vec<SeatTier>| SeatTiers::new(SeatTierType::Volume, tiers).err();
    assert_eq!(problem(vec![]), Some(SeatTiersProblem::Empty));
    assert_eq!(
        problem(vec![tier(1, None, 1), tier(2, None, 1)]),
        Some(SeatTiersProblem::UnlimitedBeforeLast)
    );
    assert_eq!(
        problem(vec![tier(1, Some(5), 1), tier(7, None, 1)]),
        Some(SeatTiersProblem::GapOrOverlap {
            ending_at: 5,
            starting_at: 7
        })
    );
    assert_eq!(
        problem(vec![tier(1, Some(5), 1), tier(5, None, 1)]),
        Some(SeatTiersProblem::GapOrOverlap {
            ending_at: 5,
            starting_at: 5
        })
    );
    assert_eq!(
        problem(vec![tier(3, Some(2), 1)]),
        Some(SeatTiersProblem::EndsBeforeStart {
            min_seats: 3,
            max_seats: 2
        })
    );
    assert_eq!(
        SeatTiersProblem::GapOrOverlap {
            ending_at: 5,
            starting_at: 7
        }
        .message(),
        "Gap or overlap between tiers: tier ending at 5 and tier starting at 7"
    );
}

#[test]
fn seat_amounts_volume_and_graduated() {
    let tiers = vec![
        tier(2, Some(4), 1000),
        tier(5, Some(9), 800),
        tier(10, Some(20), 0),
    ];
    let volume = SeatTiers::new(SeatTierType::Volume, tiers.clone());
    let graduated = SeatTiers::new(SeatTierType::Graduated, tiers);
    let (Ok(volume), Ok(graduated)) = (volume, graduated) else {
        panic!("valid tiers refused");
    };
    assert_eq!(
        (volume.minimum_seats(), volume.maximum_seats()),
        (2, Some(20))
    );
    // The count picks the tier, every seat at its rate.
    assert_eq!(volume.amount(3), Some(3000));
    assert_eq!(volume.amount(5), Some(4000));
    assert_eq!(volume.amount(12), Some(0));
    // Each tier's seats at its own rate, the first tier from the first seat:
    // 4 × 10.00 + 2 × 8.00 for 6.
    assert_eq!(graduated.amount(3), Some(3000));
    assert_eq!(graduated.amount(6), Some(4 * 1000 + 2 * 800));
    assert_eq!(graduated.amount(12), Some(4 * 1000 + 5 * 800));
    for outside in [0, 1, 21] {
        assert_eq!(volume.amount(outside), None);
        assert_eq!(graduated.amount(outside), None);
        assert!(!volume.allows(outside));
    }
}

#[test]
fn every_price_claims_a_unique_key() {
    let p = product(
        "x",
        1,
        vec![price(fixed(100), true), price(fixed(200), false)],
    );
    let keys = p.unique_keys();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0], Product::price_key(p.prices[0].id));
}

fn v4_of(p: &Product) -> ProductV4 {
    let v3 = v3_of(p);
    ProductV4 {
        id: v3.id,
        organization_id: v3.organization_id,
        created_at: v3.created_at,
        modified_at: v3.modified_at,
        name: v3.name,
        description: v3.description,
        is_recurring: v3.is_recurring,
        is_archived: v3.is_archived,
        is_tax_applicable: v3.is_tax_applicable,
        metadata: v3.metadata,
        prices: v3.prices,
        benefit_ids: v3.benefit_ids,
        media_ids: v3.media_ids,
        attached_custom_fields: v3.attached_custom_fields,
        recurring_interval_count: v3.recurring_interval_count,
        trial: v3.trial,
        price_tax_behavior: p.price_tax_behavior.clone(),
    }
}

fn in_currency(code: &str, amount: i64) -> PriceKind {
    PriceKind::OneTimeFixed {
        currency: code.into(),
        amount,
    }
}

/// A version-4 product (written before free prices named a currency) reads with its free
/// prices in US dollars; version 5 keeps the currency each was created in.
#[test]
fn version_4_products_decode_with_free_prices_in_dollars_and_version_5_keeps_theirs() {
    let mut p = product("x", 1, vec![price(PriceKind::OneTimeFree, false)]);
    let bytes = tollgate_storage::codec::encode(&v4_of(&p)).unwrap_or_default();
    let read = Product::decode(4, &bytes).ok();
    assert_eq!(read, Some(p.clone()));
    assert_eq!(p.currency_of(&p.prices[0]), Currency::USD);

    let euro = p.add_price(
        NewPrice::new(PriceKind::OneTimeFree, Currency::EUR, None),
        p.created_at,
    );
    let bytes = p.encode().unwrap_or_default();
    let read = Product::decode(Product::VERSION, &bytes).unwrap_or_else(|_| p.clone());
    assert_eq!(read, p);
    let euro = read.price(euro).map(|e| read.currency_of(e));
    assert_eq!(euro, Some(Currency::EUR));
}

#[test]
fn a_product_sold_in_several_currencies_finds_its_price_in_each() {
    let mut p = product(
        "x",
        1,
        vec![
            price(in_currency("usd", 2000), false),
            price(in_currency("eur", 1800), false),
            price(in_currency("jpy", 3000), true),
        ],
    );
    assert_eq!(p.currencies(), vec![Currency::USD, Currency::EUR]);
    assert!(p.sells_in(Currency::EUR));
    // An archived price sells nothing.
    assert!(!p.sells_in(Currency::JPY));
    let eur = p
        .first_active_price_in(Currency::EUR)
        .map(|x| x.kind.clone());
    assert_eq!(eur, Some(in_currency("eur", 1800)));
    assert_eq!(
        p.pick_currency(&[Currency::JPY, Currency::EUR, Currency::USD]),
        Some(Currency::EUR)
    );
    assert_eq!(p.pick_currency(&[Currency::JPY]), None);
    let yen = p.add_price(in_currency("jpy", 3500).into(), p.created_at);
    assert_eq!(
        p.active_prices_in(Currency::JPY)
            .map(|x| x.id)
            .collect::<Vec<_>>(),
        vec![yen]
    );
}

#[test]
fn every_currency_has_the_same_types_of_prices_and_the_default_is_among_them() {
    let month = |c: &str| PriceKind::RecurringFixed {
        interval: RecurringInterval::Month,
        currency: c.into(),
        amount: 1000,
    };
    let year = |c: &str| PriceKind::RecurringFixed {
        interval: RecurringInterval::Year,
        currency: c.into(),
        amount: 10000,
    };
    let free = PriceKind::RecurringFree {
        interval: RecurringInterval::Month,
    };
    let (usd, eur, jpy) = (Currency::USD, Currency::EUR, Currency::JPY);
    let (mu, yu, me, ye) = (month("usd"), year("usd"), month("eur"), year("eur"));
    // One-time prices: one per currency.
    let (ou, oe, oj) = (
        in_currency("usd", 100),
        in_currency("eur", 100),
        in_currency("jpy", 100),
    );
    assert_eq!(
        price_sets_problem(&[(usd, &ou), (eur, &oe), (jpy, &oj)], Some(usd)),
        None
    );
    assert_eq!(
        price_sets_problem(&[(usd, &ou), (usd, &ou), (eur, &oe)], None),
        Some((PriceSetProblem::TooLong { max: 1 }, 2))
    );
    // Monthly and yearly in both, in any order.
    assert_eq!(
        price_sets_problem(&[(usd, &mu), (eur, &ye), (usd, &yu), (eur, &me)], Some(eur)),
        None
    );
    assert_eq!(
        price_sets_problem(&[(usd, &mu), (usd, &yu), (eur, &me)], None),
        Some((PriceSetProblem::DifferentStructure, 3))
    );
    // A free price has the type of a fixed one (Polar's fixed 0).
    assert_eq!(price_sets_problem(&[(usd, &mu), (eur, &free)], None), None);
    assert_eq!(
        price_sets_problem(&[(eur, &me)], Some(usd)),
        Some((PriceSetProblem::DefaultCurrencyMissing, 1))
    );
    assert_eq!(
        price_sets_problem(&[], Some(usd)),
        Some((PriceSetProblem::TooShort { min: 1 }, 0))
    );
    assert_eq!(
        price_sets_problem(&[(usd, &mu), (eur, &oe)], None),
        Some((PriceSetProblem::DifferentStructure, 2))
    );
}

fn metered(meter: u128, pico_cents: i64, cap: Option<i64>) -> PriceKind {
    PriceKind::RecurringMeteredUnit {
        interval: RecurringInterval::Month,
        currency: "usd".into(),
        meter_id: crate::domain::ids::MeterId(uuid::Uuid::from_u128(meter)),
        unit_amount: UnitAmount::from_pico_cents(pico_cents).unwrap_or_else(|| panic!("amount")),
        cap_amount: cap,
    }
}

/// Version 6 appends metered prices to [`PriceKind`]: the bytes of one are fixed
/// (golden), and a version-5 record still reads under both versions.
#[test]
fn version_6_keeps_metered_prices_in_golden_bytes() {
    let kind = metered(0x4e7e, 500_000_000_000, Some(10_000));
    assert_eq!((Product::COLLECTION, Product::VERSION), ("product", 6));
    let kind_bytes = tollgate_storage::codec::encode(&kind).unwrap_or_default();
    assert_eq!(
        crate::golden::hex(&kind_bytes),
        GOLDEN_METERED_KIND,
        "metered price layout changed"
    );
    let mut p = product("api", 1, vec![price(fixed(100), false)]);
    p.prices = vec![
        price(
            PriceKind::RecurringFixed {
                interval: RecurringInterval::Month,
                currency: "usd".into(),
                amount: 1000,
            },
            false,
        ),
        price(kind, false),
    ];
    let bytes = p.encode().unwrap_or_default();
    assert_eq!(Product::decode(6, &bytes).ok(), Some(p.clone()));
    let old = product("old", 1, vec![price(fixed(100), false)]);
    let bytes = old.encode().unwrap_or_default();
    assert_eq!(Product::decode(5, &bytes).ok(), Some(old));
}

/// Variant 7 of `PriceKind`, month, "usd", the meter id, 5·10¹¹ pico-cents, `Some(10000)`.
const GOLDEN_METERED_KIND: &str =
    "0700037573641000000000000000000000000000004e7efd0010a5d4e800000001fb204e";

#[test]
fn metered_prices_go_beside_one_price_billed_up_front() {
    let month_fixed = PriceKind::RecurringFixed {
        interval: RecurringInterval::Month,
        currency: "usd".into(),
        amount: 1000,
    };
    let year_fixed = PriceKind::RecurringFixed {
        interval: RecurringInterval::Year,
        currency: "usd".into(),
        amount: 10_000,
    };
    let (m1, m2) = (metered(1, 1, None), metered(2, 1, Some(5)));
    assert_eq!(price_set_problem(&[&month_fixed, &m1, &m2]), None);
    assert_eq!(price_set_problem(&[&m1]), None, "usage only");
    assert_eq!(
        price_set_problem(&[&month_fixed, &year_fixed, &m1]),
        Some(PriceSetProblem::TooLong { max: 1 })
    );
    assert_eq!(
        price_set_problem(&[&fixed(100), &m1]),
        Some(PriceSetProblem::Mixed)
    );
    let free = PriceKind::RecurringFree {
        interval: RecurringInterval::Month,
    };
    assert_eq!(price_set_problem(&[&free, &m1]), None);
    // Beside a free price, the checkout sells the metered one (the card is saved).
    let p = product(
        "free",
        1,
        vec![price(free.clone(), false), price(m1.clone(), false)],
    );
    assert_eq!(
        p.first_active_price().map(|x| x.kind.is_metered()),
        Some(true)
    );
    assert_eq!(
        p.first_active_price_in(Currency::DEFAULT)
            .map(|x| x.kind.is_metered()),
        Some(true)
    );
    // The currencies must agree on their metered prices too.
    let eur = PriceKind::RecurringFixed {
        interval: RecurringInterval::Month,
        currency: "eur".into(),
        amount: 900,
    };
    let usd = Currency::DEFAULT;
    let euro = Currency::from_code("eur").unwrap_or(usd);
    assert_eq!(
        price_sets_problem(&[(usd, &month_fixed), (usd, &m1), (euro, &eur)], None).map(|(p, _)| p),
        Some(PriceSetProblem::DifferentStructure)
    );
    // The checkout sells the price billed up front, whatever the order.
    let mut p = product(
        "api",
        1,
        vec![price(m1.clone(), false), price(month_fixed, false)],
    );
    assert_eq!(
        p.first_active_price().map(|x| x.kind.is_metered()),
        Some(false)
    );
    assert!(p.has_metered_prices());
    assert_eq!(p.recurring_interval(), Some(RecurringInterval::Month));
    p.prices.remove(1);
    assert_eq!(
        p.first_active_price().map(|x| x.kind.is_metered()),
        Some(true)
    );
}
