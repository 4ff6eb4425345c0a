//! Issue 54, part 3: the buyer's pages in English, German, French, Spanish, Italian,
//! Portuguese, Dutch and Japanese. The language comes from the checkout's `locale` (Polar's
//! field, checked as a BCP 47 tag), else the browser's `Accept-Language`, else the
//! organization's default, else English; amounts are written the language's way.
//! Screenshots of the German and Japanese pages: `<CARGO_TARGET_TMPDIR>/locale-screenshots`
//! (copied to `/work/notes/shots-i18n` when that directory exists).

use reqwest::Method;
use serde_json::{json, Value};

use crate::checkouts::{create_org, id_of, product, secret, Api};
use crate::helpers::spawn_app;

const CHECKOUTS: &str = "/v1/checkouts/";

/// Each language: its tag, a translated heading of the checkout page, and how it writes
/// 19.00 EUR (U+00A0 where CLDR puts one).
const LANGS: [(&str, &str, &str); 8] = [
    ("en", "<h2>Contact</h2>", "€19.00"),
    ("de", "<h2>Kontakt</h2>", "19,00\u{a0}€"),
    ("fr", "<h2>Coordonnées</h2>", "19,00\u{a0}€"),
    ("es", "<h2>Contacto</h2>", "19,00\u{a0}€"),
    ("it", "<h2>Contatto</h2>", "19,00\u{a0}€"),
    ("pt", "<h2>Contato</h2>", "€\u{a0}19,00"),
    ("nl", "<h2>Contact</h2>", "€\u{a0}19,00"),
    ("ja", "<h2>連絡先</h2>", "€19.00"),
];

/// A one-time price in `currency` beside the organization's default (USD) one.
fn one_time(currency: &str, amount: i64) -> Value {
    json!([
        {"type": "one_time", "amount_type": "fixed", "price_amount": 2000, "price_currency": "usd"},
        {"type": "one_time", "amount_type": "fixed", "price_amount": amount, "price_currency": currency},
    ])
}

/// A checkout of the product's price in its second currency (the first in `extra`).
async fn checkout(api: Api<'_>, product: &(String, &str), extra: Value) -> Value {
    let mut body = json!({"product_id": product.0, "currency": product.1});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    api.posted(CHECKOUTS, &body, 201).await
}

/// The hosted page of a checkout, as a browser asking for `accept` sees it.
async fn page(api: Api<'_>, c: &Value, accept: Option<&str>) -> String {
    let mut req = api.request(Method::GET, &format!("/checkout/{}", secret(c)), None);
    if let Some(a) = accept {
        req = req.header("Accept-Language", a);
    }
    let r = api.send(req).await;
    r.expect(200);
    r.body.as_str().unwrap().to_string()
}

fn lang_of(html: &str) -> &str {
    let at = html.find("<html lang=\"").unwrap() + "<html lang=\"".len();
    let end = html[at..].find('"').unwrap();
    &html[at..at + end]
}

#[actix_web::test]
async fn each_language_is_chosen_by_locale_or_the_browser_and_writes_amounts_its_way() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = create_org(api, "locales").await;
    let eur = (
        id_of(&product(api, &org, "Handbuch", one_time("eur", 1900)).await),
        "eur",
    );
    let jpy = (
        id_of(&product(api, &org, "Manga", one_time("jpy", 1900)).await),
        "jpy",
    );

    for (tag, heading, amount) in LANGS {
        // Chosen by `locale` on create (a region too), whatever the browser asks for.
        let region = format!("{tag}-XX");
        let c = checkout(api, &eur, json!({"locale": region})).await;
        assert_eq!(c["locale"], json!(format!("{tag}-XX")), "stored normalized");
        let html = page(api, &c, Some("ja, en;q=0.5")).await;
        assert_eq!(lang_of(&html), tag);
        assert!(html.contains(heading), "{tag}: no {heading}");
        assert!(
            html.contains(&format!("id=\"summary-total\">{amount}<")),
            "{tag}: no {amount} total in\n{html}"
        );
        assert!(html.contains("id=\"i18n\""), "{tag}: the script's strings");

        // Chosen by the browser when the checkout has none.
        let c = checkout(api, &eur, json!({})).await;
        assert_eq!(c["locale"], Value::Null);
        let html = page(api, &c, Some(&format!("sv, {tag};q=0.8, en;q=0.1"))).await;
        assert_eq!(lang_of(&html), tag, "from Accept-Language");
        assert!(html.contains(heading), "{tag}: no {heading}");
    }

    // Yen: no decimals, the halfwidth sign in Japanese as in English.
    let c = checkout(api, &jpy, json!({"locale": "ja"})).await;
    let html = page(api, &c, None).await;
    assert!(html.contains("id=\"summary-total\">¥1,900<"), "{html}");
    assert!(html.contains("¥1,900 を支払う"), "the button: {html}");
    let c = checkout(api, &jpy, json!({"locale": "de"})).await;
    assert!(page(api, &c, None).await.contains("1.900\u{a0}¥"));

    // A valid tag of a language Tollgate does not speak: English (no browser preference).
    let c = checkout(api, &eur, json!({"locale": "sv"})).await;
    assert_eq!(c["locale"], json!("sv"));
    let html = page(api, &c, None).await;
    assert_eq!(lang_of(&html), "en");
    assert!(html.contains("<h2>Contact</h2>") && html.contains("€19.00"));

    // Changed by the organizer's update and by the buyer's.
    let r = api
        .patch(
            &format!("{CHECKOUTS}{}", id_of(&c)),
            Some(api.token),
            &json!({"locale": "fr"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["locale"], json!("fr"));
    assert_eq!(lang_of(&page(api, &c, None).await), "fr");
    let r = api
        .patch(
            &format!("{CHECKOUTS}client/{}", secret(&c)),
            None,
            &json!({"locale": "NL-be"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["locale"], json!("nl-BE"));
    assert_eq!(lang_of(&page(api, &c, None).await), "nl");
    let r = api
        .patch(
            &format!("{CHECKOUTS}client/{}", secret(&c)),
            None,
            &json!({"locale": null}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["locale"], Value::Null);
    assert_eq!(lang_of(&page(api, &c, Some("it")).await), "it");
}

#[actix_web::test]
async fn an_invalid_tag_is_a_422_as_polar_gives_it() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = create_org(api, "locales-422").await;
    let eur = (
        id_of(&product(api, &org, "Book", one_time("eur", 1900)).await),
        "eur",
    );
    for bad in ["english", "x", "de--AT", "123"] {
        let r = api
            .post(
                CHECKOUTS,
                Some(api.token),
                &json!({"product_id": eur.0, "locale": bad}),
            )
            .await;
        let item = r.expect_invalid_at(json!(["body", "locale"]));
        assert_eq!(item["type"], "value_error", "{bad}");
        assert_eq!(
            item["msg"], "Value error, Invalid IETF BCP 47 language tag",
            "{bad}"
        );
    }
    let c = checkout(api, &eur, json!({})).await;
    for path in [
        format!("{CHECKOUTS}{}", id_of(&c)),
        format!("{CHECKOUTS}client/{}", secret(&c)),
    ] {
        let r = api
            .patch(&path, Some(api.token), &json!({"locale": "not a tag"}))
            .await;
        r.expect_invalid_at(json!(["body", "locale"]));
    }
}

#[actix_web::test]
async fn the_organizations_default_then_english_when_nothing_else_says() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = create_org(api, "locales-default").await;
    let eur = (
        id_of(&product(api, &org, "Book", one_time("eur", 1900)).await),
        "eur",
    );
    let c = checkout(api, &eur, json!({})).await;
    assert_eq!(lang_of(&page(api, &c, None).await), "en");
    // The default a dashboard setting keeps (written here as the use case would).
    let id = tollgate::domain::ids::OrganizationId(uuid::Uuid::parse_str(&org).unwrap());
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
    let html = page(api, &c, None).await;
    assert_eq!(lang_of(&html), "de");
    assert!(html.contains("19,00\u{a0}€"));
    // The browser's language goes first; one Tollgate does not speak does not count.
    assert_eq!(lang_of(&page(api, &c, Some("es")).await), "es");
    assert_eq!(lang_of(&page(api, &c, Some("sv")).await), "de");
}

#[actix_web::test]
async fn screenshots_of_the_german_and_japanese_pages() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = create_org(api, "locales-shots").await;
    let eur = (
        id_of(&product(api, &org, "Handbuch", one_time("eur", 1900)).await),
        "eur",
    );
    let jpy = (
        id_of(&product(api, &org, "Manga", one_time("jpy", 1900)).await),
        "jpy",
    );
    for (name, product, tag) in [("checkout-de", &eur, "de"), ("checkout-ja", &jpy, "ja")] {
        let c = checkout(api, product, json!({"locale": tag})).await;
        let html = page(api, &c, None).await;
        crate::tools::render_page("locale-screenshots", name, &html);
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("locale-screenshots");
        for width in [390, 1280] {
            let png = dir.join(format!("{name}-{width}.png"));
            assert!(png.exists(), "{} missing", png.display());
            let notes = std::path::Path::new("/work/notes/shots-i18n");
            if notes.is_dir() {
                let _ = std::fs::copy(&png, notes.join(format!("{name}-{width}.png")));
            }
        }
    }
}

/// Each language's receipt subject opening, and the receipt's total line.
const RECEIPTS: [(&str, &str, &str); 8] = [
    (
        "en",
        "Your receipt from Org locales-mail",
        "Total paid: €19.00",
    ),
    (
        "de",
        "Ihre Quittung von Org locales-mail",
        "Bezahlt: 19,00\u{a0}€",
    ),
    (
        "fr",
        "Votre reçu de Org locales-mail",
        "Total payé: 19,00\u{a0}€",
    ),
    (
        "es",
        "Su recibo de Org locales-mail",
        "Total pagado: 19,00\u{a0}€",
    ),
    (
        "it",
        "La tua ricevuta da Org locales-mail",
        "Totale pagato: 19,00\u{a0}€",
    ),
    (
        "pt",
        "O seu recibo de Org locales-mail",
        "Total pago: €\u{a0}19,00",
    ),
    (
        "nl",
        "Uw bon van Org locales-mail",
        "Totaal betaald: €\u{a0}19,00",
    ),
    (
        "ja",
        "Org locales-mail からの領収書",
        "お支払い合計: €19.00",
    ),
];

#[actix_web::test]
async fn each_receipt_is_mailed_in_the_language_of_its_checkout() {
    let smtp = crate::mail::SmtpServer::start(0, 0);
    let dir = tempfile::tempdir().unwrap();
    let settings = crate::mail::mail_settings(dir.path(), &smtp.url());
    let app =
        crate::helpers::spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let api = Api::of(&app);
    let org = create_org(api, "locales-mail").await;
    let eur = (
        id_of(&product(api, &org, "Handbuch", one_time("eur", 1900)).await),
        "eur",
    );
    for (tag, _, _) in RECEIPTS {
        let c = checkout(api, &eur, json!({"locale": tag})).await;
        let r = crate::checkouts::confirm(
            api,
            &secret(&c),
            &crate::checkouts::buyer(&format!("buyer-{tag}@example.com")),
        )
        .await;
        r.expect(200);
    }
    let all = smtp.wait_for(RECEIPTS.len()).await;
    for (tag, subject, total) in RECEIPTS {
        let to = format!("buyer-{tag}@example.com");
        let mine = crate::mail::to(&all, &to);
        assert_eq!(mine.len(), 1, "{tag}: {all:#?}");
        let m = mine[0];
        assert_eq!(crate::mail::header(m, "Content-Language"), tag);
        let got = crate::mail::header(m, "Subject");
        assert!(got.starts_with(subject), "{tag}: {got}");
        let text = m["text"].as_str().unwrap();
        assert!(text.contains(total), "{tag}: no {total:?} in\n{text}");
        let html = m["html"].as_str().unwrap();
        assert!(html.contains(&format!("<html lang=\"{tag}\">")), "{tag}");
        // No message id leaks into the mail (every one found its text).
        for id in ["receipt-", "order-ref", "payments-by", "mail-sent-by"] {
            assert!(
                !text.contains(id) && !html.contains(id),
                "{tag}: {id} in\n{text}"
            );
        }
    }
}

/// The `data-locale` the page's script sends with the confirm.
fn kept_locale(html: &str) -> &str {
    let at = html.find("data-locale=\"").unwrap() + "data-locale=\"".len();
    let end = html[at..].find('"').unwrap();
    &html[at..at + end]
}

#[actix_web::test]
async fn a_link_s_locale_is_the_checkout_s_and_a_page_keeps_its_language_for_the_mails() {
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = create_org(api, "locales-links").await;
    let eur = product(api, &org, "Handbuch", one_time("eur", 1900)).await;
    let link = api
        .posted(
            "/v1/checkout-links/",
            &json!({"payment_processor": "stripe", "products": [id_of(&eur)]}),
            201,
        )
        .await;
    let url = link["url"].as_str().unwrap().to_string();

    // `?locale=` (Polar's prefill): stored normalized, not passed on to the page's URL.
    let r = crate::embed_hosts::follow(&app, &format!("{url}?locale=de-at&theme=dark")).await;
    let (secret, query) = crate::embed_hosts::opened(&r);
    assert_eq!(query, "theme=dark");
    let c = api
        .get(&format!("/v1/checkouts/client/{secret}"), None)
        .await;
    c.expect(200);
    assert_eq!(c.body["locale"], json!("de-AT"));
    let html = page(api, &c.body, Some("fr")).await;
    assert_eq!(lang_of(&html), "de");
    // It has a language of its own: the page's script sends none with the confirm.
    assert_eq!(kept_locale(&html), "");

    // Not a tag: ignored, as Polar ignores a prefill that does not fit.
    let r = crate::embed_hosts::follow(&app, &format!("{url}?locale=%3Cb%3E")).await;
    let (secret, _) = crate::embed_hosts::opened(&r);
    let c = api
        .get(&format!("/v1/checkouts/client/{secret}"), None)
        .await;
    assert_eq!(c.body["locale"], Value::Null);
    // The browser's language decides the page, and the confirm keeps it.
    let html = page(api, &c.body, Some("fr-CA, en;q=0.5")).await;
    assert_eq!(lang_of(&html), "fr");
    assert_eq!(kept_locale(&html), "fr");
    let mut body = crate::checkouts::buyer("buyer@example.com");
    body["locale"] = json!(kept_locale(&html));
    let r = crate::checkouts::confirm(api, &secret, &body).await;
    r.expect(200);
    assert_eq!(r.body["locale"], json!("fr"));
}
