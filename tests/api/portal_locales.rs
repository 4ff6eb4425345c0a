//! The customer portal in the buyer's language (`locales/<lang>/portal.ftl`): a buyer
//! signed in with each of the eight languages as its browser's `Accept-Language` reads
//! the overview, an order and a license key in that language (`<html lang>`, headings,
//! statuses), with amounts and dates written that language's way and no message id left
//! raw; without `Accept-Language`, the organization's default language decides. Screenshots
//! of the overview in German and Japanese (phone and desktop).

use std::collections::BTreeSet;

use serde_json::json;

use crate::benefit_grants::{buy, key_of, order_of};
use crate::helpers::{spawn_app_with, TestApp};
use crate::oauth::{Browser, Page};
use crate::portal_pages::{ask_code, roomy, type_code};

/// Per language: tag, the overview's "Orders" heading, the order page's "Invoice number",
/// the key page's "Usage", the paid status, and €19.00 written the language's way.
const LANGS: [(&str, &str, &str, &str, &str, &str); 8] = [
    ("en", "Orders", "Invoice number", "Usage", "Paid", "€19.00"),
    (
        "de",
        "Bestellungen",
        "Rechnungsnummer",
        "Nutzung",
        "Bezahlt",
        "19,00\u{a0}€",
    ),
    (
        "fr",
        "Commandes",
        "Numéro de facture",
        "Utilisation",
        "Payée",
        "19,00\u{a0}€",
    ),
    (
        "es",
        "Pedidos",
        "Número de factura",
        "Uso",
        "Pagado",
        "19,00\u{a0}€",
    ),
    (
        "it",
        "Ordini",
        "Numero di fattura",
        "Utilizzo",
        "Pagato",
        "19,00\u{a0}€",
    ),
    (
        "pt",
        "Encomendas",
        "Número da fatura",
        "Utilização",
        "Pago",
        "€\u{a0}19,00",
    ),
    (
        "nl",
        "Bestellingen",
        "Factuurnummer",
        "Gebruik",
        "Betaald",
        "€\u{a0}19,00",
    ),
    (
        "ja",
        "注文",
        "請求書番号",
        "使用回数",
        "支払い済み",
        "€19.00",
    ),
];

fn lang_of(html: &str) -> &str {
    let at = html.find("<html lang=\"").expect("<html lang>") + "<html lang=\"".len();
    let end = html[at..].find('"').expect("the closing quote");
    &html[at..at + end]
}

/// Every message id of the portal's English file: none may show on a page.
fn portal_ids() -> BTreeSet<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/locales/en/portal.ftl");
    std::fs::read_to_string(path)
        .expect("locales/en/portal.ftl")
        .lines()
        .filter_map(|l| l.split_once(" = ").map(|(id, _)| id.trim().to_string()))
        .filter(|id| id.starts_with("portal-"))
        .collect()
}

fn no_raw_id(page: &Page, ids: &BTreeSet<String>) {
    for id in ids {
        assert!(
            !page.body.contains(id.as_str()),
            "{id} shows raw in: {}",
            page.body
        );
    }
}

fn ok(page: &Page) {
    assert_eq!(page.status.as_u16(), 200, "{}", page.body);
}

/// A shop selling "Handbuch" (€19.00 once, with a license key).
struct Shop {
    org: String,
    slug: String,
    product: String,
    benefit: String,
}

async fn shop(app: &TestApp, slug: &str) -> Shop {
    let token = Some(app.token.as_str());
    let org = app.created_org_as(&app.token, "Verlag", slug).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Sold in euros.
    app.patch_json(
        &format!("/v1/organizations/{org}"),
        token,
        &json!({"default_presentment_currency": "eur"}),
    )
    .await
    .expect(200);
    let b = app
        .post_json(
            "/v1/benefits/",
            token,
            &json!({"type": "license_keys", "description": "Handbuch-Lizenz",
                    "organization_id": org, "properties": {"prefix": "HB"}}),
        )
        .await;
    b.expect(201);
    let benefit = b.id();
    let p = app
        .post_json(
            "/v1/products/",
            token,
            &json!({"name": "Handbuch", "organization_id": org, "prices": [
                {"type": "one_time", "amount_type": "fixed", "price_amount": 1900,
                 "price_currency": "eur"}]}),
        )
        .await;
    p.expect(201);
    let product = p.id();
    app.post_json(
        &format!("/v1/products/{product}/benefits"),
        token,
        &json!({ "benefits": [benefit] }),
    )
    .await
    .expect(200);
    Shop {
        org,
        slug: slug.to_string(),
        product,
        benefit,
    }
}

/// A browser signed in as `email`, sending `accept` as its `Accept-Language`.
async fn signed_in(app: &TestApp, slug: &str, email: &str, accept: Option<&str>) -> Browser {
    let mut b = Browser::new(app);
    if let Some(a) = accept {
        b = b.with_header("Accept-Language", a);
    }
    let (page, code) = ask_code(app, &mut b, slug, email).await;
    ok(&page);
    let page = type_code(&mut b, slug, &page, email, &code.expect("a code was sent")).await;
    assert_eq!(page.status.as_u16(), 303, "{}", page.body);
    b
}

async fn roomy_app() -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let settings = roomy(dir.path());
    spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await
}

/// The portal's three pages of `b`'s purchase.
async fn pages(b: &mut Browser, s: &Shop, order: &str, key: &str) -> [Page; 3] {
    let overview = b.get(&format!("/portal/{}/overview", s.slug)).await;
    let order = b.get(&format!("/portal/{}/orders/{order}", s.slug)).await;
    let key = b
        .get(&format!("/portal/{}/license-keys/{key}", s.slug))
        .await;
    for p in [&overview, &order, &key] {
        ok(p);
    }
    [overview, order, key]
}

#[actix_web::test]
async fn each_language_reads_the_portal_in_its_words_amounts_and_dates() {
    let app = roomy_app().await;
    let s = shop(&app, "verlag-sprachen").await;
    let email = "leserin@example.com";
    let bought = buy(&app, &s.product, email).await;
    let order = order_of(&app, &bought.checkout).await;
    let key = key_of(&app, &bought.customer, &s.benefit).await[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let ids = portal_ids();
    assert!(ids.len() > 100, "{ids:?}");
    let today = chrono::Utc::now().date_naive();
    for (tag, orders, invoice_number, usage, paid, subtotal) in LANGS {
        // The language comes first among the browser's, after one Tollgate lacks.
        let accept = format!("sv, {tag};q=0.9, en;q=0.5");
        let mut b = signed_in(&app, &s.slug, email, Some(&accept)).await;
        let [overview, order_page, key_page] = pages(&mut b, &s, &order, &key).await;
        let lang = tollgate::domain::locale::Lang::from_tag(tag).unwrap();
        // The order's date, written as the language writes it (the order is from today,
        // or yesterday across midnight UTC).
        let dates: Vec<String> = [today, today - chrono::Duration::days(1)]
            .iter()
            .map(|d| tollgate::domain::dates::long_date(lang, *d))
            .collect();
        for p in [&overview, &order_page, &key_page] {
            assert_eq!(lang_of(&p.body), tag, "{}", p.body);
            no_raw_id(p, &ids);
            // The footer and the sign-out button are the language's too.
            assert!(
                p.body.contains("id=\"sign-out\""),
                "{tag}: not signed in: {}",
                p.body
            );
        }
        assert!(
            overview
                .body
                .contains(&format!("id=\"orders-h\">{orders}</h2>")),
            "{tag}: {}",
            overview.body
        );
        assert!(
            overview
                .body
                .contains(&format!("<span class=\"amount\">{subtotal}</span>"))
                || overview.body.contains(subtotal),
            "{tag}: no {subtotal} in {}",
            overview.body
        );
        assert!(
            dates.iter().any(|d| overview.body.contains(d.as_str())),
            "{tag}: none of {dates:?} in {}",
            overview.body
        );
        assert!(
            order_page
                .body
                .contains(&format!("<dt>{invoice_number}</dt>")),
            "{tag}: {}",
            order_page.body
        );
        assert!(
            order_page
                .body
                .contains(&format!("id=\"subtotal\">{subtotal}</td>")),
            "{tag}: no {subtotal} in {}",
            order_page.body
        );
        assert!(
            order_page.body.contains(&format!(">{paid}</span>")),
            "{tag}: {}",
            order_page.body
        );
        assert!(
            key_page.body.contains(&format!("<dt>{usage}</dt>")),
            "{tag}: {}",
            key_page.body
        );
        // The script's words and the Payment Element's language come with the page.
        assert!(
            overview
                .body
                .contains(&format!("id=\"i18n\" hidden data-lang=\"{tag}\"")),
            "{tag}: {}",
            overview.body
        );
        if tag != "en" {
            for english in ["Orders</h2>", "Invoice number", "All purchases", "Sign out"] {
                for p in [&overview, &order_page, &key_page] {
                    assert!(!p.body.contains(english), "{tag}: {english} in {}", p.body);
                }
            }
        }
        if tag == "de" || tag == "ja" {
            let name = format!("portal-overview-{tag}");
            crate::tools::render_page("portal-locale-screenshots", &name, &overview.body);
            let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
                .join("portal-locale-screenshots");
            for width in [390, 1280] {
                let png = dir.join(format!("{name}-{width}.png"));
                assert!(png.exists(), "{} missing", png.display());
                let notes = std::path::Path::new("/work/notes/shots-portal");
                if notes.is_dir() {
                    let _ = std::fs::copy(&png, notes.join(format!("{name}-{width}.png")));
                }
            }
        }
    }

    // Without Accept-Language: English, until the organization's default says German.
    let mut b = signed_in(&app, &s.slug, email, None).await;
    let [overview, ..] = pages(&mut b, &s, &order, &key).await;
    assert_eq!(lang_of(&overview.body), "en");
    assert!(overview.body.contains("id=\"orders-h\">Orders</h2>"));
    let id = tollgate::domain::ids::OrganizationId(uuid::Uuid::parse_str(&s.org).unwrap());
    let change = tollgate::domain::organization::OrganizationChange {
        default_locale: Some("de".into()),
        ..Default::default()
    };
    app.state
        .store
        .update::<tollgate::domain::organization::Organization, std::convert::Infallible>(
            &id.key(),
            async |o| {
                let mut o = o.clone();
                change.apply(&mut o);
                Ok(Some(o))
            },
        )
        .await
        .unwrap();
    let [overview, order_page, key_page] = pages(&mut b, &s, &order, &key).await;
    for p in [&overview, &order_page, &key_page] {
        assert_eq!(lang_of(&p.body), "de", "{}", p.body);
        no_raw_id(p, &ids);
    }
    assert!(overview.body.contains("id=\"orders-h\">Bestellungen</h2>"));
    assert!(order_page
        .body
        .contains("id=\"subtotal\">19,00\u{a0}€</td>"));
    // A browser's language Tollgate speaks still comes first.
    let mut fr = signed_in(&app, &s.slug, email, Some("fr-CA")).await;
    let [overview, ..] = pages(&mut fr, &s, &order, &key).await;
    assert_eq!(lang_of(&overview.body), "fr");
    // One it does not speak leaves the organization's.
    let mut sv = signed_in(&app, &s.slug, email, Some("sv")).await;
    let [overview, ..] = pages(&mut sv, &s, &order, &key).await;
    assert_eq!(lang_of(&overview.body), "de");

    // Error pages speak the language too: an order that is not the buyer's (the seller's
    // page, its default), and a portal that does not exist (the browser's only).
    let missing = format!(
        "/portal/{}/orders/5b0a3f7e-3c1a-4c8e-9d55-0f8a7b6c5d4e",
        s.slug
    );
    let page = sv.get(&missing).await;
    assert_eq!(page.status.as_u16(), 404, "{}", page.body);
    assert_eq!(lang_of(&page.body), "de");
    assert!(page.body.contains("Seite nicht gefunden"), "{}", page.body);
    no_raw_id(&page, &ids);
    let mut ja = Browser::new(&app).with_header("Accept-Language", "ja");
    let page = ja.get("/portal/no-such-shop/overview").await;
    assert_eq!(page.status.as_u16(), 404, "{}", page.body);
    assert_eq!(lang_of(&page.body), "ja");
    assert!(
        page.body.contains("ページが見つかりません"),
        "{}",
        page.body
    );
    no_raw_id(&page, &ids);
    let page = Browser::new(&app)
        .get("/portal/no-such-shop/overview")
        .await;
    assert_eq!(lang_of(&page.body), "en");
    assert!(page.body.contains("Page not found"), "{}", page.body);
}
