//! Unit tests of the checkout link use cases called with commands (no HTTP server): what
//! they refuse, as codes and command fields.

use super::*;
use crate::app::testing;
use crate::domain::product::{Price, PriceKind};
use crate::error::{ApiError, Code, Step};
use crate::validate::Validator;

/// A one-time product of `org` at 10 dollars, stored.
async fn product(state: &AppState, org: OrganizationId) -> Product {
    let now = state.now();
    let product = Product {
        id: ProductId::new(),
        organization_id: org,
        created_at: now,
        modified_at: None,
        name: "Pro licence".into(),
        description: None,
        is_recurring: false,
        is_archived: false,
        is_tax_applicable: true,
        metadata: Default::default(),
        prices: vec![Price {
            id: PriceId::new(),
            created_at: now,
            modified_at: None,
            is_archived: false,
            kind: PriceKind::OneTimeFixed {
                currency: crate::api::checkout::DEFAULT_CURRENCY.into(),
                amount: 1000,
            },
        }],
        benefit_ids: Vec::new(),
        media_ids: Vec::new(),
        attached_custom_fields: Vec::new(),
        recurring_interval_count: 1,
        trial: None,
        price_tax_behavior: Vec::new(),
        free_price_currency: Vec::new(),
    };
    let mut batch = Batch::new();
    batch.put(&product, Expect::Absent).expect("product");
    state.store.commit_durable(&batch).await.expect("stored");
    product
}

/// A link offering `offer`, nothing else said.
fn command(offer: LinkOffer) -> NewCheckoutLink {
    NewCheckoutLink {
        offer,
        label: None,
        allow_discount_codes: true,
        require_billing_address: false,
        discount_id: None,
        success_url: None,
        return_url: None,
        metadata: Default::default(),
        trial: None,
        seats: None,
    }
}

fn paths(e: &AppError) -> Vec<Vec<Step>> {
    match e {
        AppError::Invalid(items) => items.iter().map(|i| i.path.clone()).collect(),
        other => panic!("expected invalid fields, got {other}"),
    }
}

fn localhost() -> std::net::IpAddr {
    std::net::IpAddr::from([127, 0, 0, 1])
}

#[actix_web::test]
async fn a_link_to_what_the_seller_does_not_reach_is_refused_by_command_fields() {
    let app = testing::app().await;
    let (_, subject) = testing::seller(&app).await;
    let (other, _) = testing::seller(&app).await;
    let theirs = product(&app, other).await;

    let err = create(&app, subject, command(LinkOffer::Products(vec![theirs.id])))
        .await
        .expect_err("not the seller's product");
    assert_eq!(err.code(), Code::Invalid);
    assert_eq!(paths(&err), vec![field!["products", 0]]);
    // A single product is told as the first of a list, as Polar tells it.
    let err = create(&app, subject, command(LinkOffer::Product(theirs.id)))
        .await
        .expect_err("not the seller's product");
    assert_eq!(paths(&err), vec![field!["products", 0]]);
    let price = theirs.prices[0].id;
    let err = create(&app, subject, command(LinkOffer::Price(price)))
        .await
        .expect_err("not the seller's price");
    assert_eq!(paths(&err), vec![field!["product_price_id"]]);

    // A discount that does not exist.
    let (org, subject) = testing::seller(&app).await;
    let ours = product(&app, org).await;
    let mut cmd = command(LinkOffer::Product(ours.id));
    cmd.discount_id = Some(DiscountId::new());
    let err = create(&app, subject, cmd).await.expect_err("no discount");
    assert_eq!(paths(&err), vec![field!["discount_id"]]);
}

#[actix_web::test]
async fn a_link_is_created_changed_and_deleted_by_its_seller_only() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let ours = product(&app, org).await;
    let mut cmd = command(LinkOffer::Products(vec![ours.id]));
    cmd.label = Some("Spring".into());
    let link = create(&app, subject, cmd).await.expect("created");
    assert_eq!(link.organization_id, org);
    assert_eq!(link.products, vec![ours.id]);
    assert!(link.client_secret.starts_with(CHECKOUT_LINK_SECRET_PREFIX));

    let change = CheckoutLinkChange {
        label: Some(None),
        allow_discount_codes: Some(false),
        ..CheckoutLinkChange::default()
    };
    let changed = update(&app, subject, link.id, change)
        .await
        .expect("changed");
    assert_eq!(changed.label, None);
    assert!(!changed.allow_discount_codes);
    assert!(changed.modified_at.is_some());

    // An unknown discount, another seller, an unknown link.
    let change = CheckoutLinkChange {
        discount_id: Some(Some(DiscountId::new())),
        ..CheckoutLinkChange::default()
    };
    let err = update(&app, subject, link.id, change)
        .await
        .expect_err("no discount");
    assert_eq!(paths(&err), vec![field!["discount_id"]]);
    let (_, stranger) = testing::seller(&app).await;
    let err = update(&app, stranger, link.id, CheckoutLinkChange::default())
        .await
        .expect_err("not theirs");
    assert_eq!(err.code(), Code::NotFound);
    let err = delete(&app, stranger, link.id)
        .await
        .expect_err("not theirs");
    assert_eq!(err.code(), Code::NotFound);

    delete(&app, subject, link.id).await.expect("deleted");
    let err = delete(&app, subject, link.id).await.expect_err("gone");
    assert_eq!(err.code(), Code::NotFound);
}

#[actix_web::test]
async fn following_an_unknown_link_or_one_with_nothing_on_sale_is_refused() {
    let app = testing::app().await;
    let err = follow(
        &app,
        "polar_cl_unknown",
        LinkPrefill::default(),
        localhost(),
    )
    .await
    .expect_err("unknown");
    assert_eq!(err.code(), Code::NotFound);

    let (org, subject) = testing::seller(&app).await;
    let ours = product(&app, org).await;
    let link = create(&app, subject, command(LinkOffer::Product(ours.id)))
        .await
        .expect("created");
    let checkout = follow(
        &app,
        &link.client_secret,
        LinkPrefill::default(),
        localhost(),
    )
    .await
    .expect("opened");
    assert_eq!(checkout.product_id, ours.id);

    let mut archived = ours.clone();
    archived.is_archived = true;
    let mut batch = Batch::new();
    batch.put(&archived, Expect::Any).expect("product");
    app.store.commit_durable(&batch).await.expect("archived");
    let err = follow(
        &app,
        &link.client_secret,
        LinkPrefill::default(),
        localhost(),
    )
    .await
    .expect_err("nothing on sale");
    assert_eq!(err.code(), Code::Invalid);
    assert_eq!(paths(&err), vec![field!["products"]]);
}

/// What the old check of a followed link's prefill answered: the create body's checks.
fn as_a_create_body_checks(metadata: &Metadata, customer_name: Option<&str>) -> ApiError {
    let mut v = Validator::new();
    if let Err(errors) = crate::api::metadata::parse_metadata("metadata", &metadata.to_json()) {
        for e in errors {
            v.push(e);
        }
    }
    if let Some(name) = customer_name {
        v.header_safe(crate::loc!["body", "customer_name"], name);
    }
    v.finish().expect_err("refused")
}

#[test]
fn what_a_link_fills_in_is_checked_as_a_create_body_would() {
    let mut many = Metadata::default();
    for i in 0..51 {
        many.0.insert(format!("k{i}"), MetaValue::Int(i));
    }
    let name = Some("Ada\nBcc: x@y.z");
    let err = check_prefill(&many, name).expect_err("422");
    assert_eq!(err.code(), Code::Invalid);
    assert_eq!(
        paths(&err),
        vec![field!["metadata"], field!["customer_name"]]
    );
    assert_eq!(
        format!("{:?}", ApiError::from(err)),
        format!("{:?}", as_a_create_body_checks(&many, name))
    );

    // Every rule a metadata object can break, told as the body's parser tells it.
    let mut odd = Metadata::default();
    odd.0.insert("k".repeat(41), MetaValue::Bool(true));
    odd.0.insert("empty".into(), MetaValue::Str(String::new()));
    odd.0.insert("long".into(), MetaValue::Str("v".repeat(501)));
    odd.0.insert(String::new(), MetaValue::Int(1));
    let err = check_prefill(&odd, None).expect_err("422");
    assert_eq!(
        format!("{:?}", ApiError::from(err)),
        format!("{:?}", as_a_create_body_checks(&odd, None))
    );

    check_prefill(&Metadata::default(), Some("Ada Lovelace")).expect("fine");
}

#[test]
fn the_query_fills_what_polar_fills() {
    let p = prefill_from_query(
        "product_id=abc&customer_email=a%40b.co&customer_name=Ada&discount_code=SPRING\
         &reference_id=r-1&utm_source=news&other=x&customer_name=&utm_term=",
    );
    assert_eq!(p.product_id.as_deref(), Some("abc"));
    assert_eq!(p.customer_email.as_deref(), Some("a@b.co"));
    assert_eq!(p.customer_name.as_deref(), Some("Ada"));
    assert_eq!(p.discount_code.as_deref(), Some("SPRING"));
    assert_eq!(
        p.metadata,
        vec![
            ("reference_id".to_string(), "r-1".to_string()),
            ("utm_source".to_string(), "news".to_string())
        ]
    );
    assert_eq!(p.locale, None);
    // The buyer's language: kept normalized when it is a tag, ignored when it is not.
    assert_eq!(
        prefill_from_query("locale=de-at").locale.as_deref(),
        Some("de-AT")
    );
    assert_eq!(prefill_from_query("locale=not%20a%20tag").locale, None);
}
