//! `/v1/checkout-links/` (issue 27): create, list, read, change and delete a seller's
//! links as polar-sdk 1.0.2 and @polar-sh/sdk 0.47 call them, and following a link
//! (`GET /v1/checkout-links/{client_secret}/redirect`): a fresh checkout of its products,
//! prefilled from the query, and a 307 to its page.

use reqwest::Method;
use serde_json::{json, Value};
use tollgate::auth::Scope;

use crate::checkouts::{id_of, seed, Api, Catalog};
use crate::helpers::{spawn_app, Reply, TestApp};

const LINKS: &str = "/v1/checkout-links/";

fn link_of(products: &[&str]) -> Value {
    json!({"payment_processor": "stripe", "products": products})
}

fn ids(r: &Reply) -> Vec<String> {
    r.items().iter().map(id_of).collect()
}

/// Follows a link without following the redirect; returns the reply.
async fn follow(app: &TestApp, url: &str) -> Reply {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(crate::helpers::CLIENT_TIMEOUT)
        .build()
        .unwrap();
    app.send(http.get(url)).await
}

/// The client secret of the checkout a followed link opened.
fn opened(r: &Reply) -> String {
    assert_eq!(r.status, 307, "{}", r.body);
    let location = r.header("location");
    let secret = location
        .rsplit('/')
        .next()
        .filter(|s| s.starts_with("polar_c_"))
        .unwrap_or_else(|| panic!("no checkout in {location}"));
    secret.to_string()
}

async fn public(api: Api<'_>, secret: &str) -> Value {
    let r = api
        .get(&format!("/v1/checkouts/client/{secret}"), None)
        .await;
    r.expect(200);
    r.body
}

#[actix_web::test]
async fn a_seller_creates_lists_changes_and_deletes_links() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "links-crud").await;
    let mut body = link_of(&[&cat.ebook, &cat.plan]);
    body["label"] = json!("Compat link");
    body["metadata"] = json!({"campaign": "compat"});
    // What 0.47 always sends.
    body["allow_discount_codes"] = json!(true);
    body["require_billing_address"] = json!(false);
    let link = api.posted(LINKS, &body, 201).await;
    let id = id_of(&link);
    let secret = link["client_secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("polar_cl_"), "{secret}");
    assert_eq!(
        link["url"],
        format!("{}/v1/checkout-links/{secret}/redirect", app.address)
    );
    assert_eq!(link["organization_id"], cat.org.as_str());
    assert_eq!(link["label"], "Compat link");
    assert_eq!(link["metadata"], json!({"campaign": "compat"}));
    assert_eq!(link["payment_processor"], "stripe");
    assert_eq!(
        link["products"]
            .as_array()
            .unwrap()
            .iter()
            .map(id_of)
            .collect::<Vec<_>>(),
        [cat.ebook.clone(), cat.plan.clone()]
    );
    assert_eq!(link["products"][1]["prices"].as_array().unwrap().len(), 2);
    for null in [
        "discount",
        "discount_id",
        "seats",
        "units",
        "trial_interval",
        "success_url",
    ] {
        assert_eq!(link[null], Value::Null, "{null}");
    }

    let got = api.read(&format!("{LINKS}{id}")).await;
    got.expect(200);
    assert_eq!(got.body["url"], link["url"]);
    let r = api
        .read(&format!("{LINKS}?organization_id={}", cat.org))
        .await;
    r.expect(200);
    assert_eq!(ids(&r), vec![id.clone()]);

    // One product, or the product of a price.
    let by_product = api
        .posted(
            LINKS,
            &json!({"payment_processor": "stripe", "product_id": cat.tip}),
            201,
        )
        .await;
    assert_eq!(by_product["products"][0]["id"], cat.tip.as_str());
    let by_price = api
        .posted(
            LINKS,
            &json!({"payment_processor": "stripe", "product_price_id": cat.yearly}),
            201,
        )
        .await;
    assert_eq!(by_price["products"][0]["id"], cat.plan.as_str());
    // Oldest first; by product; by label; paged.
    let r = api
        .read(&format!("{LINKS}?organization_id={}", cat.org))
        .await;
    assert_eq!(ids(&r), [id.clone(), id_of(&by_product), id_of(&by_price)]);
    let r = api.read(&format!("{LINKS}?product_id={}", cat.plan)).await;
    assert_eq!(ids(&r), [id.clone(), id_of(&by_price)]);
    let r = api
        .read(&format!(
            "{LINKS}?product_id={}&product_id={}",
            cat.plan, cat.ebook
        ))
        .await;
    assert_eq!(ids(&r), [id.clone(), id_of(&by_price)]);
    assert_eq!(r.total_count(), 2);
    let r = api
        .read(&format!("{LINKS}?sorting=-created_at&limit=1&page=2"))
        .await;
    assert_eq!(ids(&r), [id_of(&by_product)]);
    assert_eq!((r.total_count(), r.max_page()), (3, 3));
    let r = api.read(&format!("{LINKS}?sorting=label")).await;
    assert_eq!(ids(&r)[0], id);
    // `tollgate check` knows the links: their index entries and secrets are consistent.
    let lines = tollgate::admin::check(&app.state.store, false)
        .await
        .unwrap();
    let line = lines
        .iter()
        .find(|l| l.collection == "checkout_link")
        .expect("checkout links are checked");
    assert!(line.report.is_clean(), "{:?}", line.report);

    // Changes.
    let path = format!("{LINKS}{id}");
    let r = api
        .patch(
            &path,
            Some(api.token),
            &json!({"label": "Renamed", "products": [cat.tip], "discount_id": cat.discount,
                    "success_url": "https://shop.example.com/thanks", "require_billing_address": true,
                    "allow_discount_codes": false, "metadata": {"round": 2}}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["label"], "Renamed");
    assert_eq!(r.body["products"][0]["id"], cat.tip.as_str());
    assert_eq!(r.body["discount_id"], cat.discount.as_str());
    assert_eq!(r.body["discount"]["id"], cat.discount.as_str());
    assert_eq!(r.body["success_url"], "https://shop.example.com/thanks");
    assert_eq!(r.body["require_billing_address"], true);
    assert_eq!(r.body["allow_discount_codes"], false);
    assert_eq!(r.body["metadata"], json!({"round": 2}));
    assert_eq!(r.body["client_secret"], secret.as_str());
    let r = api.read(&format!("{LINKS}?product_id={}", cat.ebook)).await;
    assert_eq!(r.total_count(), 0, "the link no longer offers the ebook");
    let r = api
        .patch(
            &path,
            Some(api.token),
            &json!({"discount_id": null, "label": null}),
        )
        .await;
    assert_eq!(
        (&r.body["discount_id"], &r.body["label"]),
        (&Value::Null, &Value::Null)
    );

    // Deleted: gone from reads and lists, and no longer followed.
    let r = app
        .send(app.request(Method::DELETE, &path, Some(&app.token)))
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(r.body, Value::String(String::new()));
    api.read(&path).await.expect_error(404);
    let r = api
        .read(&format!("{LINKS}?organization_id={}", cat.org))
        .await;
    assert!(!ids(&r).contains(&id));
    follow(&app, link["url"].as_str().unwrap())
        .await
        .expect_error(404);
    let r = app
        .send(app.request(Method::DELETE, &path, Some(&app.token)))
        .await;
    r.expect_error(404);
}

#[actix_web::test]
async fn following_a_link_opens_a_fresh_checkout_of_its_products() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "links-follow").await;
    let mut body = link_of(&[&cat.ebook, &cat.plan]);
    body["metadata"] = json!({"campaign": "spring", "reference_id": "from-link"});
    body["success_url"] = json!("https://shop.example.com/thanks");
    body["require_billing_address"] = json!(true);
    let link = api.posted(LINKS, &body, 201).await;
    let url = link["url"].as_str().unwrap().to_string();

    let r = follow(&app, &url).await;
    let secret = opened(&r);
    assert!(r
        .header("location")
        .starts_with(&format!("{}/checkout/polar_c_", app.address)));
    // The page it leads to.
    let page = app.send(app.client.get(r.header("location"))).await;
    assert_eq!(page.status, 200);
    assert!(page.content_type().starts_with("text/html"));
    let c = public(api, &secret).await;
    assert_eq!(c["status"], "open");
    assert_eq!(c["product"]["id"], cat.ebook.as_str());
    assert_eq!(
        c["products"]
            .as_array()
            .unwrap()
            .iter()
            .map(id_of)
            .collect::<Vec<_>>(),
        [cat.ebook.clone(), cat.plan.clone()]
    );
    assert_eq!(c["require_billing_address"], true);
    assert_eq!(c["success_url"], "https://shop.example.com/thanks");
    let seller_view = api.read(&format!("/v1/checkouts/{}", id_of(&c))).await;
    assert_eq!(
        seller_view.body["metadata"],
        json!({"campaign": "spring", "reference_id": "from-link"})
    );
    // Each follow is a new checkout.
    assert_ne!(opened(&follow(&app, &url).await), secret);

    // Prefilled from the query.
    let r = follow(
        &app,
        &format!(
            "{url}?product_id={}&customer_email=ada%40example.com&customer_name=Ada%20Lovelace\
             &discount_code=launch&reference_id=ignored&utm_source=newsletter",
            cat.plan
        ),
    )
    .await;
    let c = public(api, &opened(&r)).await;
    assert_eq!(c["product_id"], cat.plan.as_str());
    assert_eq!(c["amount"], 1500);
    assert_eq!(c["customer_email"], "ada@example.com");
    assert_eq!(c["customer_name"], "Ada Lovelace");
    assert_eq!(c["discount"]["code"], "LAUNCH");
    assert_eq!(c["discount_amount"], 500);
    let seller_view = api.read(&format!("/v1/checkouts/{}", id_of(&c))).await;
    assert_eq!(
        seller_view.body["metadata"],
        json!({"campaign": "spring", "reference_id": "from-link", "utm_source": "newsletter"})
    );
    // What does not fit is ignored, as Polar ignores it.
    let r = follow(
        &app,
        &format!(
            "{url}?product_id={}&customer_email=not-an-address&discount_code=NOPE",
            cat.tip
        ),
    )
    .await;
    let c = public(api, &opened(&r)).await;
    assert_eq!(c["product_id"], cat.ebook.as_str());
    assert_eq!(c["customer_email"], Value::Null);
    assert_eq!(c["discount"], Value::Null);

    // The link's discount applies while it can; an archived product is left out.
    let discounted = api
        .posted(
            LINKS,
            &json!({"payment_processor": "stripe", "products": [cat.tip, cat.ebook],
                    "discount_id": cat.discount}),
            201,
        )
        .await;
    api.patch(
        &format!("/v1/products/{}", cat.tip),
        Some(api.token),
        &json!({"is_archived": true}),
    )
    .await
    .expect(200);
    let r = follow(&app, discounted["url"].as_str().unwrap()).await;
    let c = public(api, &opened(&r)).await;
    assert_eq!(c["product_id"], cat.ebook.as_str());
    assert_eq!(c["products"].as_array().unwrap().len(), 1);
    assert_eq!(c["discount_id"], cat.discount.as_str());
    // Nothing left on sale.
    let only_tip = api
        .posted(
            LINKS,
            &json!({"payment_processor": "stripe", "product_id": cat.ebook}),
            201,
        )
        .await;
    api.patch(
        &format!("/v1/products/{}", cat.ebook),
        Some(api.token),
        &json!({"is_archived": true}),
    )
    .await
    .expect(200);
    follow(&app, only_tip["url"].as_str().unwrap())
        .await
        .expect_invalid_at(json!(["body", "products"]));
    // An unknown link.
    follow(
        &app,
        &format!(
            "{}/v1/checkout-links/polar_cl_unknown/redirect",
            app.address
        ),
    )
    .await
    .expect_error(404);
}

/// A second seller with every link scope, in an organization of their own.
async fn other_seller(app: &TestApp) -> String {
    let (_, token) = app
        .new_user_with_scopes(
            "links-other@example.com",
            &[
                Scope::CheckoutLinksRead,
                Scope::CheckoutLinksWrite,
                Scope::OrganizationsWrite,
                Scope::ProductsRead,
            ],
        )
        .await;
    app.create_org_as(&token, "Other", "links-other")
        .await
        .expect(201);
    token
}

#[actix_web::test]
async fn links_are_refused_as_polar_refuses_them() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat: Catalog = seed(api, "links-denied").await;
    let link = api.posted(LINKS, &link_of(&[&cat.ebook]), 201).await;
    let path = format!("{LINKS}{}", id_of(&link));

    // No token, a token without the scopes, another seller.
    for (method, p) in [
        (Method::GET, LINKS.to_string()),
        (Method::POST, LINKS.to_string()),
        (Method::GET, path.clone()),
        (Method::PATCH, path.clone()),
        (Method::DELETE, path.clone()),
    ] {
        let r = app
            .send(app.request(method.clone(), &p, None).json(&json!({})))
            .await;
        assert_eq!(r.status, 401, "{method} {p}");
    }
    let (_, weak) = app
        .new_user_with_scopes(
            "links-weak@example.com",
            &[Scope::CheckoutsWrite, Scope::CheckoutLinksRead],
        )
        .await;
    api.get(&path, Some(&weak)).await.expect_error(404);
    api.post(LINKS, Some(&weak), &link_of(&[&cat.ebook]))
        .await
        .expect_error(403);
    let other = other_seller(&app).await;
    api.get(&path, Some(&other)).await.expect_error(404);
    api.patch(&path, Some(&other), &json!({"label": "mine"}))
        .await
        .expect_error(404);
    let r = app
        .send(app.request(Method::DELETE, &path, Some(&other)))
        .await;
    r.expect_error(404);
    let r = api.get(LINKS, Some(&other)).await;
    assert_eq!(r.total_count(), 0);
    api.post(LINKS, Some(&other), &link_of(&[&cat.ebook]))
        .await
        .expect_invalid_at(json!(["body", "products", 0]));

    // Bodies.
    let unknown = "5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e";
    let refused = [
        (
            json!({"products": [cat.ebook]}),
            json!(["body", "payment_processor"]),
        ),
        (
            json!({"payment_processor": "paypal", "products": [cat.ebook]}),
            json!(["body", "payment_processor"]),
        ),
        (
            json!({"payment_processor": "stripe"}),
            json!(["body", "products"]),
        ),
        (link_of(&[]), json!(["body", "products"])),
        (link_of(&[unknown]), json!(["body", "products", 0])),
        (
            json!({"payment_processor": "stripe", "product_price_id": unknown}),
            json!(["body", "product_price_id"]),
        ),
        (
            json!({"payment_processor": "stripe", "products": [cat.ebook], "discount_id": unknown}),
            json!(["body", "discount_id"]),
        ),
        (
            json!({"payment_processor": "stripe", "products": [cat.ebook], "seats": 3}),
            json!(["body", "seats"]),
        ),
        (
            json!({"payment_processor": "stripe", "products": [cat.ebook], "units": 3}),
            json!(["body", "units"]),
        ),
        (
            json!({"payment_processor": "stripe", "products": [cat.plan], "trial_interval": "month"}),
            json!(["body", "trial_interval_count"]),
        ),
        (
            json!({"payment_processor": "stripe", "products": [cat.ebook], "success_url": "nope"}),
            json!(["body", "success_url"]),
        ),
    ];
    for (body, loc) in refused {
        api.post(LINKS, Some(api.token), &body)
            .await
            .expect_invalid_at(loc);
    }
    // Changes: products of another organization, none at all, unsupported fields.
    let elsewhere = crate::checkouts::create_org(api, "links-denied-two").await;
    let foreign = crate::checkouts::product(
        api,
        &elsewhere,
        "Elsewhere",
        json!([{"type": "one_time", "amount_type": "fixed", "price_amount": 900, "price_currency": "usd"}]),
    )
    .await;
    let r = api
        .patch(
            &path,
            Some(api.token),
            &json!({"products": [id_of(&foreign)]}),
        )
        .await;
    let item = r.expect_invalid_at(json!(["body", "products"]));
    assert_eq!(
        item["msg"],
        "Products don't belong to the checkout link's organization."
    );
    for (body, loc) in [
        (json!({"products": null}), json!(["body", "products"])),
        (json!({"products": []}), json!(["body", "products"])),
        (json!({"seats": 2}), json!(["body", "seats"])),
        (
            json!({"trial_interval": "day"}),
            json!(["body", "trial_interval_count"]),
        ),
        (
            json!({"discount_id": unknown}),
            json!(["body", "discount_id"]),
        ),
        (
            json!({"return_url": "ftp://x"}),
            json!(["body", "return_url"]),
        ),
    ] {
        api.patch(&path, Some(api.token), &body)
            .await
            .expect_invalid_at(loc);
    }
    // Unknown and malformed ids.
    api.read(&format!("{LINKS}{unknown}"))
        .await
        .expect_error(404);
    api.read(&format!("{LINKS}nope"))
        .await
        .expect_invalid_at(json!(["path", "id"]));
    // The link is as it was.
    let r = api.read(&path).await;
    assert_eq!(r.body["products"][0]["id"], cat.ebook.as_str());
}
