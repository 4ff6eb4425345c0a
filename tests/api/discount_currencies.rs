//! Fixed discounts with an amount per currency (Polar 2026, spec §1.5): `amounts` on create,
//! update and output, the deprecated `amount` + `currency`, the both/neither refusals, the
//! `amount`/`currency` shown in the organization's default currency, and no change of the
//! amounts or months once redeemed.

use serde_json::{json, Value};
use tollgate::domain::discount::Discount;
use tollgate_storage::{Batch, Expect};

use crate::helpers::{spawn_app, Reply, TestApp};

const DISCOUNTS: &str = "/v1/discounts/";
const REDEEMED: &str =
    "This field cannot be changed because the discount has already been redeemed.";

async fn org(app: &TestApp, slug: &str) -> String {
    app.created_org_as(&app.token, "Seller", slug).await["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn fixed(org: &str, extra: Value) -> Value {
    let mut body =
        json!({"type": "fixed", "duration": "once", "name": "Launch", "organization_id": org});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

async fn create(app: &TestApp, body: &Value) -> Reply {
    app.post_json(DISCOUNTS, Some(&app.token), body).await
}

async fn patch(app: &TestApp, id: &str, body: Value) -> Reply {
    app.patch_json(&format!("{DISCOUNTS}{id}"), Some(&app.token), &body)
        .await
}

#[track_caller]
fn assert_invalid(r: &Reply, loc: Value, kind: &str, msg: &str) -> Value {
    let item = r.expect_invalid_at(loc);
    assert_eq!(item["type"], kind, "{item}");
    assert_eq!(item["msg"], msg, "{item}");
    item
}

/// Counts one redemption (they only happen through checkouts).
async fn redeem(app: &TestApp, id: &str) {
    let key = uuid::Uuid::parse_str(id).unwrap().as_bytes().to_vec();
    let stored = app
        .state
        .store
        .get::<Discount>(&key)
        .await
        .unwrap()
        .unwrap();
    let mut d = stored.value;
    d.record_redemption();
    let mut batch = Batch::new();
    batch.put(&d, Expect::Rev(stored.rev)).unwrap();
    app.state.store.commit_durable(&batch).await.unwrap();
}

#[actix_web::test]
async fn creates_with_amounts_in_several_currencies() {
    let app = spawn_app().await;
    let org = org(&app, "multi").await;
    let r = create(
        &app,
        &fixed(
            &org,
            json!({"code": "LAUNCH", "amounts": {"usd": 1000, "eur": 900, "jpy": 1500}}),
        ),
    )
    .await;
    r.expect(201);
    let d = &r.body;
    assert_eq!(d["amounts"], json!({"usd": 1000, "eur": 900, "jpy": 1500}));
    // The organization's default (usd) has an amount: it is the one shown.
    assert_eq!(d["amount"], 1000);
    assert_eq!(d["currency"], "usd");
    let g = app
        .get(&format!("{DISCOUNTS}{}", r.id()), Some(&app.token))
        .await;
    g.expect(200);
    assert_eq!(g.body, r.body);

    // Without the default among them: the first key.
    let r = create(
        &app,
        &fixed(&org, json!({"amounts": {"eur": 700, "gbp": 600}})),
    )
    .await;
    r.expect(201);
    assert_eq!(r.body["amount"], 700);
    assert_eq!(r.body["currency"], "eur");
    assert_eq!(r.body["amounts"], json!({"eur": 700, "gbp": 600}));

    // Repeating, with amounts.
    let r = create(
        &app,
        &fixed(
            &org,
            json!({"duration": "repeating", "duration_in_months": 3, "amounts": {"chf": 990}}),
        ),
    )
    .await;
    r.expect(201);
    assert_eq!(r.body["duration_in_months"], 3);
    assert_eq!(r.body["amounts"], json!({"chf": 990}));
}

#[actix_web::test]
async fn the_deprecated_amount_and_currency_become_amounts() {
    let app = spawn_app().await;
    let org = org(&app, "legacy").await;
    let r = create(
        &app,
        &fixed(&org, json!({"amount": 500, "currency": "eur"})),
    )
    .await;
    r.expect(201);
    assert_eq!(r.body["amounts"], json!({"eur": 500}));
    assert_eq!(r.body["amount"], 500);
    assert_eq!(r.body["currency"], "eur");
    // `currency` defaults to US dollars.
    let r = create(&app, &fixed(&org, json!({"amount": 300}))).await;
    r.expect(201);
    assert_eq!(r.body["amounts"], json!({"usd": 300}));
    assert_eq!(r.body["currency"], "usd");
}

#[actix_web::test]
async fn both_neither_and_bad_amounts_are_refused() {
    let app = spawn_app().await;
    let org = org(&app, "refusals").await;
    let both = fixed(&org, json!({"amount": 500, "amounts": {"usd": 500}}));
    let r = create(&app, &both).await;
    let item = assert_invalid(
        &r,
        json!(["body"]),
        "value_error",
        "Value error, Cannot specify both `amount` and `amounts`.",
    );
    assert_eq!(item["input"], both);
    let r = create(&app, &fixed(&org, json!({}))).await;
    assert_invalid(
        &r,
        json!(["body"]),
        "value_error",
        "Value error, Must specify either `amount` or `amounts`.",
    );

    let r = create(&app, &fixed(&org, json!({"amounts": {}}))).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "amounts"]))["type"],
        "too_short"
    );
    let r = create(&app, &fixed(&org, json!({"amounts": {"xau": 100}}))).await;
    let item = r.expect_invalid_at(json!(["body", "amounts", "xau", "[key]"]));
    assert_eq!(item["type"], "enum");
    assert_eq!(item["input"], "xau");
    let r = create(
        &app,
        &fixed(
            &org,
            json!({"amounts": {"usd": -1, "eur": 1_000_000_000_000_i64}}),
        ),
    )
    .await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "amounts", "usd"]))["type"],
        "greater_than_equal"
    );
    assert_eq!(
        r.expect_invalid_at(json!(["body", "amounts", "eur"]))["type"],
        "less_than_equal"
    );
    // The bounds hold for the deprecated amount too; 0 and the maximum are fine.
    let r = create(&app, &fixed(&org, json!({"amount": 1_000_000_000_000_i64}))).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "amount"]))["type"],
        "less_than_equal"
    );
    create(
        &app,
        &fixed(
            &org,
            json!({"amounts": {"usd": 0, "eur": 999_999_999_999_i64}}),
        ),
    )
    .await
    .expect(201);
    // A percentage needs none.
    create(
        &app,
        &json!({"type": "percentage", "duration": "once", "basis_points": 1000, "name": "Pct", "organization_id": org}),
    )
    .await
    .expect(201);
}

#[actix_web::test]
async fn amount_and_currency_follow_the_organizations_default() {
    let app = spawn_app().await;
    let org = org(&app, "euro-default").await;
    app.patch_org(
        &org,
        &app.token,
        &json!({"default_presentment_currency": "eur"}),
    )
    .await
    .expect(200);
    let r = create(
        &app,
        &fixed(&org, json!({"amounts": {"usd": 1000, "eur": 900}})),
    )
    .await;
    r.expect(201);
    assert_eq!(r.body["amount"], 900);
    assert_eq!(r.body["currency"], "eur");
    assert_eq!(r.body["amounts"], json!({"usd": 1000, "eur": 900}));
    let list = app
        .get(
            &format!("{DISCOUNTS}?organization_id={org}"),
            Some(&app.token),
        )
        .await;
    list.expect(200);
    assert_eq!(list.items()[0]["currency"], "eur");
}

#[actix_web::test]
async fn updates_amounts_until_redeemed() {
    let app = spawn_app().await;
    let org = org(&app, "updates").await;
    let r = create(
        &app,
        &fixed(
            &org,
            json!({"duration": "repeating", "duration_in_months": 2, "amounts": {"usd": 1000, "eur": 900}}),
        ),
    )
    .await;
    r.expect(201);
    let id = r.id();

    let r = patch(&app, &id, json!({"amounts": {"eur": 800, "jpy": 1200}})).await;
    r.expect(200);
    assert_eq!(r.body["amounts"], json!({"eur": 800, "jpy": 1200}));
    assert_eq!(r.body["currency"], "eur");
    // The deprecated pair: one amount, in the currency given (else the first one).
    let r = patch(&app, &id, json!({"amount": 700})).await;
    r.expect(200);
    assert_eq!(r.body["amounts"], json!({"eur": 700}));
    let r = patch(&app, &id, json!({"amount": 650, "currency": "usd"})).await;
    r.expect(200);
    assert_eq!(r.body["amounts"], json!({"usd": 650}));
    let r = patch(&app, &id, json!({"amount": 1, "amounts": {"usd": 1}})).await;
    assert_invalid(
        &r,
        json!(["body"]),
        "value_error",
        "Value error, Cannot specify both `amount` and `amounts`.",
    );
    let r = patch(&app, &id, json!({"amounts": {"zzz": 1}})).await;
    assert_eq!(
        r.expect_invalid_at(json!(["body", "amounts", "zzz", "[key]"]))["type"],
        "enum"
    );

    redeem(&app, &id).await;
    for (body, field) in [
        (json!({"amounts": {"usd": 600}}), "amounts"),
        (json!({"amount": 600}), "amount"),
        (json!({"currency": "eur"}), "currency"),
        (json!({"duration_in_months": 4}), "duration_in_months"),
    ] {
        let r = patch(&app, &id, body).await;
        assert_invalid(&r, json!(["body", field]), "value_error", REDEEMED);
    }
    // The same values, and the other fields, still go through.
    let r = patch(
        &app,
        &id,
        json!({"amounts": {"usd": 650}, "duration_in_months": 2, "name": "Renamed"}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["name"], "Renamed");
    assert_eq!(r.body["redemptions_count"], 1);
}
