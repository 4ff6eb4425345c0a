//! `GET /v1/benefit-grants/` and `GET /v1/benefits/{id}/grants`: the benefits purchases
//! granted (a one-time order's, a subscription's until it ends), in Polar's
//! `BenefitGrant` shape, with their filters, sorting, pagination, scopes and tenancy.
//! Also the shop this file and `customer_state`, `customer_sessions` sell from.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{json, Value};
use tollgate::auth::Scope;

use crate::helpers::{assert_utc_timestamp, Reply, TestApp};

pub const GRANTS: &str = "/v1/benefit-grants/";

/// An organization selling a license-key benefit (prefix `TG`) and a custom one, in a
/// one-time product (both benefits) and a monthly one (the license-key benefit).
pub struct Shop {
    pub org: String,
    pub keys: String,
    pub note: String,
    pub one_time: String,
    pub monthly: String,
}

/// A purchase: the buyer's customer id and what it bought with.
pub struct Bought {
    pub customer: String,
    pub checkout: String,
}

fn id(r: &Reply) -> String {
    r.id()
}

pub async fn shop(app: &TestApp, slug: &str) -> Shop {
    let token = Some(app.token.as_str());
    let org = app.created_org_as(&app.token, slug, slug).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let benefit = |body: Value| async move {
        let r = app.post_json("/v1/benefits/", token, &body).await;
        r.expect(201);
        id(&r)
    };
    let keys = benefit(
        json!({"type": "license_keys", "description": "Key", "organization_id": org,
                              "properties": {"prefix": "TG"}}),
    )
    .await;
    let note = benefit(
        json!({"type": "custom", "description": "Thanks", "organization_id": org,
                              "properties": {"note": "Welcome aboard"}}),
    )
    .await;
    let product = |body: Value, benefits: Vec<String>| async move {
        let r = app.post_json("/v1/products/", token, &body).await;
        r.expect(201);
        let product = id(&r);
        app.post_json(
            &format!("/v1/products/{product}/benefits"),
            token,
            &json!({ "benefits": benefits }),
        )
        .await
        .expect(200);
        product
    };
    let one_time = product(
        json!({"name": "Pro", "organization_id": org,
               "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 1900}]}),
        vec![keys.clone(), note.clone()],
    )
    .await;
    let monthly = product(
        json!({"name": "Monthly", "organization_id": org,
               "prices": [{"type": "recurring", "amount_type": "fixed", "price_amount": 900,
                           "price_currency": "usd", "recurring_interval": "month"}]}),
        vec![keys.clone()],
    )
    .await;
    Shop {
        org,
        keys,
        note,
        one_time,
        monthly,
    }
}

/// A checkout of `product` paid by `email` with the test processor.
pub async fn buy(app: &TestApp, product: &str, email: &str) -> Bought {
    let checkout = app
        .post_json(
            "/v1/checkouts/custom/",
            Some(&app.token),
            &json!({"product_id": product}),
        )
        .await;
    checkout.expect(201);
    let secret = checkout.body["client_secret"].as_str().unwrap().to_string();
    let r = app
        .post_json(
            &format!("/v1/checkouts/custom/client/{secret}/confirm"),
            None,
            &json!({"customer_name": "Ada Lovelace", "customer_email": email,
                    "customer_billing_address": {"country": "FR"}, "confirmation_token_id": "tok_visa"}),
        )
        .await;
    r.expect(200);
    let checkout = id(&checkout);
    for _ in 0..100 {
        let c = app
            .get(
                &format!("/v1/checkouts/custom/{checkout}"),
                Some(&app.token),
            )
            .await;
        if c.body["status"] == "succeeded" {
            return Bought {
                customer: c.body["customer_id"].as_str().unwrap().to_string(),
                checkout,
            };
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the checkout did not succeed");
}

/// The id of the only subscription of a customer.
pub async fn subscription_of(app: &TestApp, customer: &str) -> String {
    let r = app
        .get(
            &format!("/v1/subscriptions/?customer_id={customer}"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    r.items()[0]["id"].as_str().unwrap().to_string()
}

/// The id of the one-time order of a checkout.
pub async fn order_of(app: &TestApp, checkout: &str) -> String {
    let r = app
        .get(
            &format!("/v1/orders/?checkout_id={checkout}"),
            Some(&app.token),
        )
        .await;
    r.expect(200);
    let items = r.items();
    assert_eq!(items.len(), 1, "{}", r.body);
    items[0]["id"].as_str().unwrap().to_string()
}

/// Ends a subscription now (Polar's revoke).
pub async fn revoke(app: &TestApp, subscription: &str) {
    app.patch_json(
        &format!("/v1/subscriptions/{subscription}"),
        Some(&app.token),
        &json!({"revoke": true}),
    )
    .await
    .expect(200);
}

/// The granted key of a customer for a benefit (and which purchase it came from).
pub async fn key_of(app: &TestApp, customer: &str, benefit: &str) -> Vec<Value> {
    let r = app
        .get(
            &format!("/v1/license-keys/?benefit_id={benefit}&limit=100"),
            Some(&app.token),
        )
        .await;
    r.items()
        .into_iter()
        .filter(|k| k["customer_id"] == customer)
        .collect()
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

const GRANT_KEYS: &[&str] = &[
    "created_at",
    "modified_at",
    "id",
    "granted_at",
    "is_granted",
    "revoked_at",
    "is_revoked",
    "subscription_id",
    "order_id",
    "customer_id",
    "benefit_id",
    "customer",
    "benefit",
    "properties",
];

async fn grants(app: &TestApp, token: &str, query: &str) -> Reply {
    let r = app.get(&format!("{GRANTS}?{query}"), Some(token)).await;
    r.expect(200);
    r
}

/// (benefit, source) of each grant listed, in order.
fn summary(r: &Reply) -> Vec<(String, String, bool)> {
    r.items()
        .iter()
        .map(|g| {
            let source = if g["order_id"].is_string() {
                "order"
            } else {
                "subscription"
            };
            (
                g["benefit_id"].as_str().unwrap().to_string(),
                source.to_string(),
                g["is_granted"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[actix_web::test]
async fn purchases_grant_their_products_benefits() {
    let app = crate::helpers::spawn_app().await;
    let shop = shop(&app, "grants").await;
    let ada = buy(&app, &shop.one_time, "ada@grants.example").await;
    let order = order_of(&app, &ada.checkout).await;

    let r = grants(&app, &app.token, &format!("organization_id={}", shop.org)).await;
    assert_eq!(r.total_count(), 2);
    let items = r.items();
    for g in &items {
        assert_eq!(keys(g), GRANT_KEYS.iter().map(|k| k.to_string()).collect());
        assert_eq!(g["order_id"], order.as_str());
        assert!(g["subscription_id"].is_null());
        assert_eq!(g["customer_id"], ada.customer.as_str());
        assert_eq!(g["customer"]["id"], ada.customer.as_str());
        assert_eq!(g["customer"]["type"], "individual");
        assert_eq!(g["benefit"]["id"], g["benefit_id"]);
        assert_eq!(
            (g["is_granted"].clone(), g["is_revoked"].clone()),
            (json!(true), json!(false))
        );
        assert_utc_timestamp(&g["created_at"]);
        assert_eq!(g["granted_at"], g["created_at"]);
        assert!(g["revoked_at"].is_null() && g["modified_at"].is_null());
    }
    let key = &key_of(&app, &ada.customer, &shop.keys).await[0];
    let by_benefit = |b: &str| items.iter().find(|g| g["benefit_id"] == b).unwrap().clone();
    // The license-key grant names its key; the custom one has no properties (keys left
    // out, never null: @polar-sh/sdk 0.47).
    assert_eq!(
        by_benefit(&shop.keys)["properties"],
        json!({"license_key_id": key["id"], "display_key": key["display_key"]})
    );
    assert_eq!(by_benefit(&shop.note)["properties"], json!({}));
    // Ids are stable.
    let again = grants(&app, &app.token, "").await;
    let ids = |r: &Reply| -> BTreeSet<String> {
        r.items()
            .iter()
            .map(|g| g["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&again), ids(&r));
}

#[actix_web::test]
async fn a_subscriptions_grants_end_with_it_and_the_lists_filter_and_sort() {
    let app = crate::helpers::spawn_app().await;
    let shop = shop(&app, "subs").await;
    let ada = buy(&app, &shop.one_time, "ada@subs.example").await;
    let bob = buy(&app, &shop.monthly, "bob@subs.example").await;
    let sub = subscription_of(&app, &bob.customer).await;
    let org = format!("organization_id={}", shop.org);

    let r = grants(&app, &app.token, &org).await;
    assert_eq!(r.total_count(), 3);
    let bobs = grants(&app, &app.token, &format!("customer_id={}", bob.customer)).await;
    assert_eq!(
        summary(&bobs),
        vec![(shop.keys.clone(), "subscription".into(), true)]
    );
    assert_eq!(bobs.items()[0]["subscription_id"], sub.as_str());
    assert!(bobs.items()[0]["order_id"].is_null());
    let key = &key_of(&app, &bob.customer, &shop.keys).await[0];
    assert_eq!(bobs.items()[0]["properties"]["license_key_id"], key["id"]);

    // The subscription ends: its grant is revoked (Polar clears granted_at), the one-time
    // purchase's stay.
    revoke(&app, &sub).await;
    let bobs = grants(&app, &app.token, &format!("customer_id={}", bob.customer)).await;
    let g = &bobs.items()[0];
    assert_eq!(
        (g["is_granted"].clone(), g["is_revoked"].clone()),
        (json!(false), json!(true))
    );
    assert!(g["granted_at"].is_null());
    assert_utc_timestamp(&g["revoked_at"]);
    assert_eq!(g["modified_at"], g["revoked_at"]);

    let r = grants(&app, &app.token, &format!("{org}&is_granted=true")).await;
    assert_eq!(r.total_count(), 2);
    assert!(r
        .items()
        .iter()
        .all(|g| g["customer_id"] == ada.customer.as_str()));
    let r = grants(&app, &app.token, &format!("{org}&is_granted=false")).await;
    assert_eq!(r.total_count(), 1);
    assert_eq!(r.items()[0]["customer_id"], bob.customer.as_str());

    // Newest first by default; `created_at` ascending puts Ada's first; no `revoked_at`
    // sorts last ascending and first descending, as PostgreSQL's NULL does.
    let r = grants(&app, &app.token, &org).await;
    assert_eq!(r.items()[0]["customer_id"], bob.customer.as_str());
    let r = grants(&app, &app.token, &format!("{org}&sorting=created_at")).await;
    assert_eq!(r.items()[2]["customer_id"], bob.customer.as_str());
    let r = grants(&app, &app.token, &format!("{org}&sorting=-revoked_at")).await;
    assert_eq!(r.items()[0]["customer_id"], ada.customer.as_str());
    let r = grants(&app, &app.token, &format!("{org}&sorting=revoked_at")).await;
    assert_eq!(r.items()[0]["customer_id"], bob.customer.as_str());
    assert_eq!(r.items()[2]["customer_id"], ada.customer.as_str());
    let r = app
        .get(&format!("{GRANTS}?sorting=amount"), Some(&app.token))
        .await;
    r.expect_invalid_at(json!(["query", "sorting", 0]));

    // Pages.
    let r = grants(&app, &app.token, &format!("{org}&limit=2&page=2")).await;
    assert_eq!((r.items().len(), r.total_count(), r.max_page()), (1, 3, 2));

    // By external id: both filters together name the customers both match.
    app.patch_json(
        &format!("/v1/customers/{}", ada.customer),
        Some(&app.token),
        &json!({"external_id": "ext-ada"}),
    )
    .await
    .expect(200);
    let r = grants(&app, &app.token, "external_customer_id=ext-ada").await;
    assert_eq!(r.total_count(), 2);
    let r = grants(
        &app,
        &app.token,
        "external_customer_id=ext-ada&external_customer_id=nobody",
    )
    .await;
    assert_eq!(r.total_count(), 2);
    let r = grants(&app, &app.token, "external_customer_id=nobody").await;
    assert_eq!(r.total_count(), 0);
    let r = grants(
        &app,
        &app.token,
        &format!("external_customer_id=ext-ada&customer_id={}", bob.customer),
    )
    .await;
    assert_eq!(r.total_count(), 0);

    // Of one benefit.
    let of = |b: &str| format!("/v1/benefits/{b}/grants");
    let r = app.get(&of(&shop.keys), Some(&app.token)).await;
    r.expect(200);
    assert_eq!(r.total_count(), 2);
    assert!(r
        .items()
        .iter()
        .all(|g| g["benefit_id"] == shop.keys.as_str()));
    assert_eq!(
        r.items()[0]["customer_id"],
        bob.customer.as_str(),
        "newest first"
    );
    let r = app
        .get(
            &format!("{}?is_granted=true", of(&shop.keys)),
            Some(&app.token),
        )
        .await;
    assert_eq!(r.total_count(), 1);
    let r = app
        .get(
            &format!("{}?customer_id={}", of(&shop.keys), bob.customer),
            Some(&app.token),
        )
        .await;
    assert_eq!(
        summary(&r),
        vec![(shop.keys.clone(), "subscription".into(), false)]
    );
    let r = app.get(&of(&shop.note), Some(&app.token)).await;
    assert_eq!(r.total_count(), 1);
}

#[actix_web::test]
async fn grants_are_read_with_benefits_read_within_the_callers_organizations() {
    let app = crate::helpers::spawn_app().await;
    let shop = shop(&app, "mine").await;
    buy(&app, &shop.one_time, "ada@mine.example").await;
    let of = format!("/v1/benefits/{}/grants", shop.keys);

    for path in [GRANTS.to_string(), of.clone()] {
        let r = app.get(&path, None).await;
        assert_eq!(r.expect_error(401), "Unauthorized");
    }
    let (user, rival) = app
        .new_user_with_scopes(
            "rival@example.com",
            &[Scope::BenefitsRead, Scope::OrganizationsWrite],
        )
        .await;
    let theirs = app.created_org_as(&rival, "Theirs", "theirs").await;
    let r = grants(&app, &rival, "").await;
    assert_eq!(r.total_count(), 0);
    let r = grants(&app, &rival, &format!("organization_id={}", shop.org)).await;
    assert_eq!(r.total_count(), 0);
    let r = app.get(&of, Some(&rival)).await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app
        .get(
            &format!("/v1/benefits/{}/grants", uuid::Uuid::new_v4()),
            Some(&app.token),
        )
        .await;
    assert_eq!(r.expect_error(404), "ResourceNotFound");
    let r = app.get("/v1/benefits/nope/grants", Some(&app.token)).await;
    r.expect_invalid_at(json!(["path", "id"]));
    assert_eq!(theirs["slug"], "theirs");

    let no_scope = app.issue_token(user, &[Scope::CustomersRead]).await;
    for path in [GRANTS.to_string(), of.clone()] {
        let r = app.get(&path, Some(&no_scope)).await;
        assert_eq!(r.expect_error(403), "insufficient_scope");
    }
    let r = app
        .get(
            &format!("{GRANTS}?is_granted=maybe&customer_id=x"),
            Some(&app.token),
        )
        .await;
    let locs: Vec<Value> = r
        .expect_validation()
        .iter()
        .map(|e| e["loc"].clone())
        .collect();
    assert!(locs.contains(&json!(["query", "is_granted"])), "{locs:?}");
    assert!(locs.contains(&json!(["query", "customer_id"])), "{locs:?}");
    // A deleted benefit is not found, and its grants are revoked.
    app.send(app.request(
        Method::DELETE,
        &format!("/v1/benefits/{}", shop.note),
        Some(&app.token),
    ))
    .await
    .expect(204);
    let r = app
        .get(
            &format!("/v1/benefits/{}/grants", shop.note),
            Some(&app.token),
        )
        .await;
    r.expect_error(404);
    let r = grants(&app, &app.token, "is_granted=false").await;
    assert_eq!(
        summary(&r),
        vec![(shop.note.clone(), "order".into(), false)]
    );
}

/// Deleting a customer revokes every grant of theirs, as Polar does.
#[actix_web::test]
async fn a_deleted_customers_grants_are_revoked() {
    let app = crate::helpers::spawn_app().await;
    let shop = shop(&app, "grants-deleted").await;
    let ada = buy(&app, &shop.one_time, "ada@deleted.example").await;
    let grace = buy(&app, &shop.one_time, "grace@deleted.example").await;
    let r = app
        .request(
            reqwest::Method::DELETE,
            &format!("/v1/customers/{}", ada.customer),
            Some(&app.token),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let r = grants(&app, &app.token, &format!("organization_id={}", shop.org)).await;
    assert_eq!(r.total_count(), 4);
    for g in r.items() {
        let revoked = g["customer_id"] == ada.customer.as_str();
        assert_eq!(g["is_revoked"], revoked, "{g}");
        assert_eq!(g["is_granted"], !revoked, "{g}");
        if revoked {
            assert_utc_timestamp(&g["revoked_at"]);
        } else {
            assert_eq!(g["customer_id"], grace.customer.as_str());
        }
    }
    let r = grants(
        &app,
        &app.token,
        &format!("organization_id={}&is_granted=true", shop.org),
    )
    .await;
    assert_eq!(r.total_count(), 2);
}
