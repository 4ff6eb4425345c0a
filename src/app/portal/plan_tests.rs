//! The buyer's plan change called with commands: the organization's setting, tenancy, the
//! products a subscription may move to.

use tollgate_storage::{Batch, Expect};

use super::*;
use crate::app::testing;
use crate::domain::ids::{CustomerId, OrganizationId, PriceId};
use crate::domain::product::{Price, PriceKind, RecurringInterval};

async fn put<R: tollgate_storage::Record>(state: &AppState, r: &R) {
    let mut batch = Batch::new();
    batch.put(r, Expect::Any).unwrap();
    state.store.commit_durable(&batch).await.unwrap();
}

/// A product of `org` at `amount` a month (`None`: one-time at 500).
fn product(org: OrganizationId, name: &str, amount: Option<i64>) -> Product {
    let mut p = crate::api::product::sample_products().remove(0);
    p.id = ProductId::new();
    p.organization_id = org;
    p.name = name.into();
    p.is_archived = false;
    p.is_recurring = amount.is_some();
    p.benefit_ids = Vec::new();
    p.prices = vec![Price {
        id: PriceId::new(),
        created_at: p.created_at,
        modified_at: None,
        is_archived: false,
        kind: match amount {
            Some(amount) => PriceKind::RecurringFixed {
                interval: RecurringInterval::Month,
                currency: "usd".into(),
                amount,
            },
            None => PriceKind::OneTimeFixed {
                currency: "usd".into(),
                amount: 500,
            },
        },
    }];
    p
}

struct Shop {
    org: OrganizationId,
    ada: Customer,
    sub: SubscriptionId,
    team: Product,
}

/// Ada's live $10.00 subscription to Basic; Team ($30.00), an archived product and a
/// one-time product beside it.
async fn shop(state: &AppState) -> Shop {
    let (org, _) = testing::seller(state).await;
    let ada = Customer::new(
        CustomerId::new(),
        org,
        "ada@example.com".into(),
        state.now(),
    );
    put(state, &ada).await;
    let basic = product(org, "Basic", Some(1000));
    let team = product(org, "Team", Some(3000));
    let mut archived = product(org, "Old", Some(2000));
    archived.is_archived = true;
    let one_time = product(org, "Once", None);
    for p in [&basic, &team, &archived, &one_time] {
        put(state, p).await;
    }
    let mut s = crate::api::subscription::sample_subscriptions().remove(0);
    s.id = SubscriptionId::new();
    s.organization_id = org;
    s.customer_id = ada.id;
    s.product_id = basic.id;
    s.product_name = basic.name.clone();
    s.price_id = basic.prices[0].id;
    s.amount = Some(1000);
    s.currency = Some("usd".into());
    s.discount_id = None;
    s.seats = None;
    s.status = tollgate_actors::subscription::SubscriptionStatus::Active;
    (s.cancel_at_period_end, s.ends_at, s.ended_at) = (false, None, None);
    s.started_at = Some(state.now());
    s.current_period_start = state.now();
    s.current_period_end = Some(state.now() + chrono::Duration::days(30));
    s.payment_token = Some("tok_visa".into());
    s.checkout_id = None;
    s.license_key_ids = Vec::new();
    put(state, &s).await;
    Shop {
        org,
        ada,
        sub: s.id,
        team,
    }
}

async fn set_update_plan(state: &AppState, org: OrganizationId, on: bool) {
    let mut o = state
        .store
        .get::<Organization>(&org.key())
        .await
        .unwrap()
        .unwrap()
        .value;
    o.customer_portal_settings.update_plan = on;
    put(state, &o).await;
}

#[actix_web::test]
async fn a_plan_change_is_refused_when_the_organization_does_not_allow_it() {
    let app = testing::app().await;
    let shop = shop(&app).await;
    set_update_plan(&app, shop.org, false).await;
    let e = preview(&app, &shop.ada, shop.sub, shop.team.id)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::UpdateSubscriptionPlanNotAllowed);
    assert_eq!(
        e.messages(),
        vec!["Updating subscription plan is not allowed."]
    );
    let e = change_plan(&app, &shop.ada, shop.sub, shop.team.id)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::UpdateSubscriptionPlanNotAllowed);
    assert_eq!(
        options(&app, &shop.ada, shop.sub).await.unwrap_err().code(),
        Code::UpdateSubscriptionPlanNotAllowed
    );
}

#[actix_web::test]
async fn another_customer_s_subscription_is_not_found_whatever_the_setting() {
    let app = testing::app().await;
    let shop = shop(&app).await;
    let bob = Customer::new(
        CustomerId::new(),
        shop.org,
        "bob@example.com".into(),
        app.now(),
    );
    put(&app, &bob).await;
    for on in [true, false] {
        set_update_plan(&app, shop.org, on).await;
        let e = change_plan(&app, &bob, shop.sub, shop.team.id)
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::NotFound, "update_plan {on}");
    }
    let s = app
        .store
        .get::<Subscription>(&shop.sub.key())
        .await
        .unwrap()
        .unwrap()
        .value;
    assert_eq!(s.product_name, "Basic", "unchanged");
}

#[actix_web::test]
async fn only_the_other_live_recurring_products_are_offered_each_with_its_preview() {
    let app = testing::app().await;
    let shop = shop(&app).await;
    let (current, offered) = options(&app, &shop.ada, shop.sub).await.unwrap();
    assert_eq!(current.id, shop.sub);
    let names: Vec<&str> = offered.iter().map(|o| o.product.name.as_str()).collect();
    assert_eq!(names, vec!["Team"]);
    let direct = preview(&app, &shop.ada, shop.sub, shop.team.id)
        .await
        .unwrap();
    assert_eq!(offered[0].preview.due_amount, direct.due_amount);
    assert_eq!(offered[0].preview.next_amount, direct.next_amount);
    // A month at $30.00 from the renewal on (the organization prorates: the difference
    // for the rest of this period is carried to it).
    assert_eq!(
        direct.next_amount,
        3000 + direct.carried_amount,
        "{direct:?}"
    );
}

#[actix_web::test]
async fn an_archived_one_time_or_foreign_product_is_refused_with_polar_s_messages() {
    let app = testing::app().await;
    let shop = shop(&app).await;
    let mut archived = product(shop.org, "Gone", Some(2000));
    archived.is_archived = true;
    let one_time = product(shop.org, "Once", None);
    let (other_org, _) = testing::seller(&app).await;
    let foreign = product(other_org, "Theirs", Some(2000));
    for p in [&archived, &one_time, &foreign] {
        put(&app, p).await;
    }
    for (p, msg) in [
        (&archived, "Product is archived."),
        (&one_time, "Product is not recurring."),
        (&foreign, "Product does not exist."),
    ] {
        let e = change_plan(&app, &shop.ada, shop.sub, p.id)
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::Invalid, "{}", p.name);
        assert_eq!(
            e.messages(),
            vec![format!("product id: {msg}")],
            "{}",
            p.name
        );
    }
}

#[actix_web::test]
async fn a_euro_subscription_is_offered_only_products_with_a_euro_price() {
    let app = testing::app().await;
    let shop = shop(&app).await;
    // Ada's subscription is in euros (€9.00 a month).
    let mut s = app
        .store
        .get::<Subscription>(&shop.sub.key())
        .await
        .unwrap()
        .unwrap()
        .value;
    (s.amount, s.currency) = (Some(900), Some("eur".into()));
    put(&app, &s).await;
    // Team sells in dollars only; Team+ in dollars and euros.
    let mut both = product(shop.org, "Team+", Some(3000));
    let mut eur = both.prices[0].clone();
    eur.id = PriceId::new();
    eur.kind = PriceKind::RecurringFixed {
        interval: RecurringInterval::Month,
        currency: "eur".into(),
        amount: 2700,
    };
    both.prices.push(eur);
    put(&app, &both).await;

    let (_, offered) = options(&app, &shop.ada, shop.sub).await.unwrap();
    let names: Vec<&str> = offered.iter().map(|o| o.product.name.as_str()).collect();
    assert_eq!(names, vec!["Team+"]);
    assert_eq!(offered[0].preview.currency, "eur");
    // Moving to the dollar-only product anyway: Polar's 422 on product_id.
    let e = change_plan(&app, &shop.ada, shop.sub, shop.team.id)
        .await
        .unwrap_err();
    match e {
        AppError::Invalid(items) => {
            assert_eq!(items[0].path, crate::field!["product_id"]);
            assert_eq!(
                items[0].msg,
                "This product doesn't have a price for the subscription currency."
            );
        }
        other => panic!("not a 422: {other:?}"),
    }
}
