//! The dashboard's Meters section (issue 51) over HTTP: a seller signed in to the
//! dashboard creates, edits and archives meters through its forms, events are ingested
//! through the API on a manual clock, and the pages are checked for their numbers (this
//! month's totals, a meter's chart and range totals, for one customer or all, a customer's
//! meters and last events), their refusals (422 next to the form, the archive refused while
//! a price uses the meter) and their tenancy (404 for another organization's meter or
//! customer, 403 without the CSRF token, sign-in without a session).

use chrono::{DateTime, Datelike, Duration, TimeZone, Utc};
use serde_json::{json, Value};
use tollgate::config::Settings;
use tollgate::domain::ids::{MeterId, ProductId, UserId};
use tollgate::domain::meter::{Aggregation, ClauseValue, FilterNode, Meter};
use tollgate::domain::product::{PriceKind, Product};
use tollgate::web::dashboard::ROUTES;
use tollgate_actors::ManualClock;

use crate::dashboard::{
    assert_csrf_refused, assert_not_found, assert_status, form_post, main_of, redirected, text_of,
    unescape,
};
use crate::events::{customer, ingested, USAGE_SCOPES};
use crate::helpers::{spawn_app_with, TestApp};
use crate::oauth::{signed_in, user_with_password, Browser, Page};

/// The service's clock: now, or three hours into the month when the month began less
/// than that ago (so that events an hour or two old fall in this month).
fn clock_start() -> DateTime<Utc> {
    let now = Utc::now();
    let month = Utc
        .with_ymd_and_hms(now.year(), now.month(), 1, 0, 0, 0)
        .unwrap();
    now.max(month + Duration::hours(3))
}

async fn app() -> (TestApp, DateTime<Utc>) {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings::for_tests(dir.path());
    let now = clock_start();
    let (_clock, shared) = ManualClock::shared(now);
    (spawn_app_with(dir, settings, shared).await, now)
}

/// A seller signed in to the dashboard with an organization made through the API, and
/// a token of theirs to ingest events: (browser, token, organization id, user).
async fn seller(app: &TestApp, email: &str, slug: &str) -> (Browser, String, String, UserId) {
    let user = user_with_password(app, email).await;
    let token = app.issue_token(user, USAGE_SCOPES).await;
    let org = app.created_org_as(&token, slug, slug).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    (signed_in(app, email).await, token, org, user)
}

/// A form: (its route as `ROUTES` names it, a path to it, the fields posted).
type FormCase = (&'static str, String, Vec<(&'static str, &'static str)>);

/// The lines of the error list a form shows.
fn errors(page: &Page) -> Vec<String> {
    let Some(at) = page.body.find(r#"<div class="error" role="alert"><ul>"#) else {
        return Vec::new();
    };
    let list = &page.body[at..];
    let list = &list[..list.find("</ul>").unwrap_or(list.len())];
    list.split("<li>")
        .skip(1)
        .map(|l| unescape(l.split("</li>").next().unwrap_or("").trim()))
        .collect()
}

/// The month totals of the list, by meter id.
fn month_total(page: &Page, meter: &str) -> String {
    let at = page
        .body
        .find(&format!("data-meter=\"{meter}\""))
        .unwrap_or_else(|| panic!("no meter {meter} in\n{}", main_of(page)));
    let row = &page.body[at..];
    let open = "class=\"month-total\">";
    let cell = &row[row.find(open).unwrap() + open.len()..];
    cell[..cell.find('<').unwrap()].to_string()
}

/// The sum of the chart's bars.
fn bars_sum(page: &Page) -> f64 {
    page.body
        .split("data-series=\"quantity\" data-value=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].parse::<f64>().unwrap())
        .sum()
}

/// How many clause rows the meter form shows.
fn clause_rows(page: &Page) -> usize {
    page.body.matches("name=\"property\"").count()
}

async fn stored(app: &TestApp, id: &str) -> Meter {
    app.state
        .store
        .get::<Meter>(&id.parse::<MeterId>().unwrap().key())
        .await
        .unwrap()
        .unwrap()
        .value
}

fn event(name: &str, customer: &str, at: DateTime<Utc>, tokens: i64) -> Value {
    json!({"name": name, "customer_id": customer, "timestamp": at.to_rfc3339(),
           "metadata": {"tokens": tokens, "model": "gpt-5"}})
}

/// [`TOKENS_METER`] with a typo in its filter (corrected by an edit).
fn draft() -> Vec<(&'static str, &'static str)> {
    TOKENS_METER
        .iter()
        .map(|&(k, v)| {
            if v == "api_call" {
                (k, "api_cal")
            } else {
                (k, v)
            }
        })
        .collect()
}

/// Creates a meter through the form; its id.
async fn new_meter(b: &mut Browser, org: &str, fields: &[(&str, &str)]) -> String {
    let page = form_post(b, &format!("/dashboard/{org}/meters/new"), fields).await;
    let to = redirected(&page);
    let prefix = format!("/dashboard/{org}/meters/");
    to.strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{to}"))
        .split('?')
        .next()
        .unwrap()
        .to_string()
}

const TOKENS_METER: &[(&str, &str)] = &[
    ("name", "API tokens"),
    ("conjunction", "and"),
    ("property", "name"),
    ("operator", "eq"),
    ("value", "api_call"),
    ("func", "sum"),
    ("agg_property", "metadata.tokens"),
    ("unit", "token"),
];

#[actix_web::test]
async fn meters_are_made_edited_and_charted_with_their_customers_usage() {
    let (app, now) = app().await;
    let (mut b, token, org, _) = seller(&app, "meter-ada@example.com", "meter-ada").await;
    let list = format!("/dashboard/{org}/meters");
    let page = b.get(&list).await;
    assert_status(&page, 200);
    assert!(
        page.body.contains(&format!("href=\"{list}\"")),
        "a Meters entry"
    );
    assert!(main_of(&page).contains("No meters yet"));

    // Rows are added and removed by the form's buttons, nothing saved.
    let new = format!("/dashboard/{org}/meters/new");
    let page = b.get(&new).await;
    assert_status(&page, 200);
    assert_eq!(clause_rows(&page), 1);
    let mut fields = draft();
    fields.push(("action", "add"));
    let page = form_post(&mut b, &new, &fields).await;
    assert_status(&page, 200);
    assert_eq!(clause_rows(&page), 3, "the typed row and two blank ones");
    assert!(page.body.contains("value=\"api_cal\""));
    fields.pop();
    fields.extend([
        ("property", "metadata.model"),
        ("operator", "like"),
        ("value", "gpt"),
    ]);
    fields.push(("action", "remove-0"));
    let page = form_post(&mut b, &new, &fields).await;
    assert_eq!(clause_rows(&page), 2);
    assert!(!page.body.contains("value=\"api_cal\"") && page.body.contains("value=\"gpt\""));
    let none = b.get(&list).await;
    assert!(main_of(&none).contains("No meters yet"));

    // The form's problems, next to it, what was typed kept.
    let page = form_post(
        &mut b,
        &new,
        &[
            ("name", "ab"),
            ("property", ""),
            ("operator", "eq"),
            ("value", "x"),
            ("func", "avg"),
            ("agg_property", ""),
            ("unit", "scalar"),
        ],
    )
    .await;
    assert_status(&page, 422);
    let errs = errors(&page);
    assert_eq!(errs.len(), 3, "{errs:?}");
    assert!(errs[0].starts_with("Name"), "{errs:?}");
    assert!(errs[1].starts_with("Filter, clause 1"), "{errs:?}");
    assert!(errs[2].starts_with("Aggregation"), "{errs:?}");
    assert!(page.body.contains("value=\"ab\""));
    // The use case's refusal: a custom unit without its label.
    let page = form_post(
        &mut b,
        &new,
        &[("name", "Custom"), ("func", "count"), ("unit", "custom")],
    )
    .await;
    assert_status(&page, 422);
    assert!(
        errors(&page)
            .iter()
            .any(|e| e.contains("custom_label is required")),
        "{:?}",
        errors(&page)
    );

    let id = new_meter(&mut b, &org, &draft()).await;
    let m = stored(&app, &id).await;
    assert_eq!(m.aggregation, Aggregation::Sum("tokens".into()));
    // Not aggregating yet: the filter changes from the edit form.
    let edit = format!("/dashboard/{org}/meters/{id}/edit");
    let page = b.get(&edit).await;
    assert_status(&page, 200);
    assert!(page.body.contains("value=\"api_cal\"") && page.body.contains("id=\"filter-fields\""));
    let mut fields = TOKENS_METER.to_vec();
    fields.extend([
        ("property", "metadata.model"),
        ("operator", "like"),
        ("value", "gpt"),
    ]);
    let page = form_post(&mut b, &edit, &fields).await;
    assert_eq!(redirected(&page), format!("{edit}?saved=1"));
    let m = stored(&app, &id).await;
    assert_eq!(m.filter.clauses.len(), 2);
    match &m.filter.clauses[0] {
        FilterNode::Clause(c) => assert_eq!(c.value, ClauseValue::Str("api_call".into())),
        other => panic!("{other:?}"),
    }
    let logins = new_meter(
        &mut b,
        &org,
        &[
            ("name", "Logins"),
            ("property", "name"),
            ("operator", "eq"),
            ("value", "login"),
            ("func", "count"),
            ("unit", "scalar"),
        ],
    )
    .await;

    // Usage: Ada 10 + 5 this month and 100 forty days ago, Bob 7; an event no meter counts.
    let ada = customer(&app, &token, &org, "ada.customer@example.com", "ada").await;
    let bob = customer(&app, &token, &org, "bob.customer@example.com", "bob").await;
    ingested(
        &app,
        &token,
        &org,
        vec![
            event("api_call", &ada, now - Duration::hours(1), 10),
            event("api_call", &ada, now - Duration::hours(2), 5),
            event("api_call", &ada, now - Duration::days(40), 100),
            event("api_call", &bob, now - Duration::hours(3), 7),
            event("page_view", &bob, now - Duration::hours(1), 1000),
        ],
        (5, 0),
    )
    .await;

    let page = b.get(&list).await;
    assert_status(&page, 200);
    assert_eq!(month_total(&page, &id), "22");
    assert_eq!(month_total(&page, &logins), "0");
    let body = unescape(main_of(&page));
    assert!(body.contains("sum of metadata.tokens"), "{body}");
    assert!(
        body.contains("name = “api_call” and metadata.model contains “gpt”"),
        "{body}"
    );

    // The meter's page: 30 days by day by default, every customer.
    let at = format!("/dashboard/{org}/meters/{id}");
    let page = b.get(&at).await;
    assert_status(&page, 200);
    assert_eq!(text_of(&page, "range-total"), "22");
    assert_eq!(bars_sum(&page), 22.0);
    assert!(page.body.contains("<svg class=\"chart\"") && page.body.contains("role=\"img\""));
    assert_eq!(page.body.matches("<g><title>").count(), 30);
    assert_eq!(
        main_of(&page)
            .split("id=\"meter-values\"")
            .nth(1)
            .unwrap()
            .matches("<tr><td>")
            .count(),
        30
    );
    for (query, total, bars) in [
        ("range=24h", "22", 24),
        ("range=7d", "22", 168),
        ("range=12m", "122", 12),
        (&format!("customer_id={ada}") as &str, "15", 30),
        (&format!("customer_id={ada}&range=12m"), "115", 12),
        (&format!("customer_id={bob}&range=24h"), "7", 24),
    ] {
        let page = b.get(&format!("{at}?{query}")).await;
        assert_status(&page, 200);
        assert_eq!(text_of(&page, "range-total"), total, "{query}");
        assert_eq!(bars_sum(&page), total.parse::<f64>().unwrap(), "{query}");
        assert_eq!(page.body.matches("<g><title>").count(), bars, "{query}");
    }
    // A customer's chart has the customer chosen.
    let page = b.get(&format!("{at}?customer_id={ada}")).await;
    assert!(page
        .body
        .contains(&format!("<option value=\"{ada}\" selected>")));
    // No usage: the empty state, no chart.
    let page = b.get(&format!("/dashboard/{org}/meters/{logins}")).await;
    assert_status(&page, 200);
    assert!(
        page.body.contains("id=\"meter-empty\"") && !page.body.contains("<svg class=\"chart\"")
    );
    assert_eq!(text_of(&page, "range-total"), "0");

    // Aggregating now: filter and aggregation are shown read-only, and a post leaves them.
    let page = b.get(&edit).await;
    assert_status(&page, 200);
    assert!(
        page.body.contains("id=\"definition-frozen\"")
            && !page.body.contains("id=\"filter-fields\"")
    );
    let page = form_post(
        &mut b,
        &edit,
        &[
            ("name", "LLM tokens"),
            ("unit", "token"),
            ("property", "name"),
            ("operator", "eq"),
            ("value", "other"),
            ("func", "count"),
        ],
    )
    .await;
    redirected(&page);
    let after = stored(&app, &id).await;
    assert_eq!(after.name, "LLM tokens");
    assert_eq!(after.filter, m.filter);
    assert_eq!(after.aggregation, m.aggregation);

    // The customer's page: its meters (consumed, credited, balance) and last events.
    let page = b.get(&format!("/dashboard/{org}/customers/{ada}")).await;
    assert_status(&page, 200);
    let usage = main_of(&page)
        .split("id=\"customer-meters\"")
        .nth(1)
        .unwrap();
    let row = usage.split(&format!("data-meter=\"{id}\"")).nth(1).unwrap();
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.contains(&format!(
            "href=\"/dashboard/{org}/meters/{id}?customer_id={ada}\""
        )),
        "{row}"
    );
    assert!(row.contains("<td>115</td><td>0</td><td>-115</td>"), "{row}");
    let events = main_of(&page)
        .split("id=\"customer-events\"")
        .nth(1)
        .unwrap();
    assert_eq!(events.matches("<code>api_call</code>").count(), 3);
    assert!(events.contains("tokens=100") && events.contains("model=gpt-5"));
    let page = b.get(&format!("/dashboard/{org}/customers/{bob}")).await;
    let events = main_of(&page)
        .split("id=\"customer-events\"")
        .nth(1)
        .unwrap();
    assert!(events.contains("<code>page_view</code>"));
    // Newest first.
    assert!(events.find("page_view").unwrap() < events.find("api_call").unwrap());
}

#[actix_web::test]
async fn a_meter_a_price_uses_is_not_archived_until_the_product_is() {
    let (app, _) = app().await;
    let (mut b, _, org, _) = seller(&app, "meter-grace@example.com", "meter-grace").await;
    let id = new_meter(&mut b, &org, TOKENS_METER).await;
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/products/new"),
        &[
            ("name", "API plan"),
            ("billing", "month"),
            ("amount_type", "free"),
            ("metered_meter_id", id.as_str()),
            ("metered_unit_amount", "0.5"),
        ],
    )
    .await;
    let product = redirected(&page).rsplit('/').next().unwrap().to_string();
    let at = format!("/dashboard/{org}/meters/{id}");
    let page = form_post(&mut b, &format!("{at}/archive"), &[("archived", "true")]).await;
    assert_status(&page, 422);
    let errs = errors(&page);
    assert!(
        errs.iter()
            .any(|e| e.contains("still attached to active products")),
        "{errs:?}"
    );
    assert!(stored(&app, &id).await.archived_at.is_none());
    assert!(
        page.body.contains("id=\"range-total\""),
        "the meter's page, with the refusal"
    );

    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/products/{product}"),
        &[("name", "API plan"), ("is_archived", "on")],
    )
    .await;
    redirected(&page);
    let page = form_post(&mut b, &format!("{at}/archive"), &[("archived", "true")]).await;
    assert_eq!(redirected(&page), format!("{at}?saved=1"));
    assert!(stored(&app, &id).await.archived_at.is_some());
    let list = format!("/dashboard/{org}/meters");
    assert!(!b
        .get(&list)
        .await
        .body
        .contains(&format!("data-meter=\"{id}\"")));
    let page = b.get(&format!("{list}?archived=all")).await;
    assert!(
        page.body.contains(&format!("data-meter=\"{id}\"")) && page.body.contains(">archived<")
    );
    let page = b.get(&at).await;
    assert!(page.body.contains("id=\"unarchive-meter\""));
    let page = form_post(&mut b, &format!("{at}/archive"), &[("archived", "false")]).await;
    redirected(&page);
    assert!(stored(&app, &id).await.archived_at.is_none());
}

#[actix_web::test]
async fn another_organizations_meters_and_customers_are_not_found_and_forms_need_the_token() {
    let (app, now) = app().await;
    let (mut a, token_a, org_a, _) = seller(&app, "meter-first@example.com", "meter-first").await;
    let (mut b, _, org_b, _) = seller(&app, "meter-second@example.com", "meter-second").await;
    let id = new_meter(&mut a, &org_a, TOKENS_METER).await;
    let theirs = new_meter(&mut b, &org_b, TOKENS_METER).await;
    let cust = customer(&app, &token_a, &org_a, "c@example.com", "c").await;
    ingested(
        &app,
        &token_a,
        &org_a,
        vec![event("api_call", &cust, now - Duration::hours(1), 3)],
        (1, 0),
    )
    .await;
    let before = stored(&app, &id).await;

    let at = format!("/dashboard/{org_a}/meters/{id}");
    let pages: Vec<(&str, String)> = vec![
        (
            "/dashboard/{org}/meters",
            format!("/dashboard/{org_a}/meters"),
        ),
        (
            "/dashboard/{org}/meters/new",
            format!("/dashboard/{org_a}/meters/new"),
        ),
        ("/dashboard/{org}/meters/{id}", at.clone()),
        ("/dashboard/{org}/meters/{id}/edit", format!("{at}/edit")),
    ];
    let forms: Vec<FormCase> = vec![
        (
            "/dashboard/{org}/meters/new",
            format!("/dashboard/{org_a}/meters/new"),
            TOKENS_METER.to_vec(),
        ),
        (
            "/dashboard/{org}/meters/{id}/edit",
            format!("{at}/edit"),
            vec![("name", "Taken over"), ("unit", "scalar")],
        ),
        (
            "/dashboard/{org}/meters/{id}/archive",
            format!("{at}/archive"),
            vec![("archived", "true")],
        ),
    ];
    for (m, route, _) in ROUTES {
        if route.starts_with("/dashboard/{org}/meters") {
            let covered = match *m {
                "get" => pages.iter().any(|p| p.0 == *route),
                _ => forms.iter().any(|f| f.0 == *route),
            };
            assert!(covered, "{m} {route} is not exercised by this test");
        }
    }
    // The owner sees them all.
    for (_, path) in &pages {
        assert_status(&a.get(path).await, 200);
    }
    // Another seller: every page and form is a 404, nothing changed.
    for (_, path) in &pages {
        assert_not_found(&b.get(path).await);
    }
    for (_, path, fields) in &forms {
        assert_not_found(&form_post(&mut b, path, fields).await);
    }
    // Their own meter with the other organization's customer, or under the other's path.
    assert_not_found(
        &b.get(&format!(
            "/dashboard/{org_b}/meters/{theirs}?customer_id={cust}"
        ))
        .await,
    );
    assert_not_found(&a.get(&format!("/dashboard/{org_a}/meters/{theirs}")).await);
    assert_not_found(
        &a.get(&format!("/dashboard/{org_a}/meters/not-a-uuid"))
            .await,
    );
    // A member of two organizations reaches a meter, and a customer, under its own
    // organization's pages only.
    let org_a2 = app
        .created_org_as(&token_a, "meter-first-2", "meter-first-2")
        .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let other = new_meter(&mut a, &org_a2, TOKENS_METER).await;
    assert_not_found(&a.get(&format!("/dashboard/{org_a2}/meters/{id}")).await);
    assert_not_found(&a.get(&format!("/dashboard/{org_a}/meters/{other}")).await);
    assert_not_found(
        &a.get(&format!(
            "/dashboard/{org_a2}/meters/{other}?customer_id={cust}"
        ))
        .await,
    );
    assert_not_found(
        &form_post(
            &mut a,
            &format!("/dashboard/{org_a2}/meters/{id}/archive"),
            &[("archived", "true")],
        )
        .await,
    );
    // The owner's own browser without the token: 403 on every form.
    for (_, path, fields) in &forms {
        assert_csrf_refused(&mut a, path, fields).await;
    }
    // No session: to sign in.
    let mut anonymous = Browser::new(&app);
    for (_, path) in &pages {
        let page = anonymous.get(path).await;
        assert!(
            redirected(&page).starts_with("/oauth2/login?next="),
            "{path}"
        );
    }
    let after = stored(&app, &id).await;
    assert_eq!(after.name, before.name);
    assert!(after.archived_at.is_none());
    let page = a.get(&format!("/dashboard/{org_a}/meters")).await;
    assert_eq!(month_total(&page, &id), "3");
}

/// The product's prices on sale.
async fn prices_on_sale(app: &TestApp, product: &str) -> Vec<PriceKind> {
    let p = app
        .state
        .store
        .get::<Product>(&product.parse::<ProductId>().unwrap().key())
        .await
        .unwrap()
        .unwrap()
        .value;
    p.prices
        .into_iter()
        .filter(|p| !p.is_archived)
        .map(|p| p.kind)
        .collect()
}

#[actix_web::test]
async fn the_product_form_makes_and_keeps_a_metered_price() {
    let (app, _) = app().await;
    let (mut b, _, org, _) = seller(&app, "meter-price@example.com", "meter-price").await;
    let id = new_meter(&mut b, &org, TOKENS_METER).await;
    let archived = new_meter(
        &mut b,
        &org,
        &[("name", "Old meter"), ("func", "count"), ("unit", "scalar")],
    )
    .await;
    redirected(
        &form_post(
            &mut b,
            &format!("/dashboard/{org}/meters/{archived}/archive"),
            &[("archived", "true")],
        )
        .await,
    );
    let new = format!("/dashboard/{org}/products/new");
    let page = b.get(&new).await;
    assert_status(&page, 200);
    assert!(page
        .body
        .contains(&format!("<option value=\"{id}\">API tokens</option>")));
    assert!(
        !page.body.contains(&archived),
        "an archived meter is not offered"
    );

    let base = [
        ("name", "API plan"),
        ("billing", "month"),
        ("amount_type", "fixed"),
        ("amount", "10.00"),
        ("metered_meter_id", id.as_str()),
    ];
    // The API's rules, next to the fields.
    for (more, want) in [
        (
            vec![("metered_unit_amount", "0.0000000000001")],
            "prices › 1 › unit amount: Decimal input should have no more than 12 decimal places",
        ),
        (
            vec![("metered_unit_amount", "-1")],
            "prices › 1 › unit amount: Input should be greater than 0",
        ),
        (
            vec![("metered_unit_amount", "")],
            "prices › 1 › unit amount: Field required",
        ),
        (
            vec![("metered_unit_amount", "1"), ("metered_cap", "lots")],
            "Cap: Enter an amount like 19 or 19.99",
        ),
    ] {
        let mut fields = base.to_vec();
        fields.extend(more);
        let page = form_post(&mut b, &new, &fields).await;
        assert_status(&page, 422);
        assert!(
            errors(&page).iter().any(|e| e == want),
            "{want}: {:?}",
            errors(&page)
        );
        assert!(
            page.body
                .contains(&format!("<option value=\"{id}\" selected>")),
            "the meter kept"
        );
    }
    let mut fields = base.to_vec();
    fields[1] = ("billing", "one_time");
    fields.push(("metered_unit_amount", "1"));
    let page = form_post(&mut b, &new, &fields).await;
    assert_status(&page, 422);
    assert!(
        errors(&page)
            .iter()
            .any(|e| e.ends_with("Metered pricing is not supported on one-time products.")),
        "{:?}",
        errors(&page)
    );
    // The use case's check: an archived meter is refused as by the API.
    let mut fields = base.to_vec();
    fields[4] = ("metered_meter_id", archived.as_str());
    fields.push(("metered_unit_amount", "1"));
    let page = form_post(&mut b, &new, &fields).await;
    assert_status(&page, 422);
    assert!(!errors(&page).is_empty());

    let mut fields = base.to_vec();
    fields.extend([
        ("metered_unit_amount", "0.000125"),
        ("metered_cap", "50.00"),
    ]);
    let page = form_post(&mut b, &new, &fields).await;
    let to = redirected(&page);
    let product = to
        .rsplit('/')
        .next()
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_string();
    let metered = |kinds: &[PriceKind]| -> Vec<(String, String, Option<i64>)> {
        kinds
            .iter()
            .filter_map(|k| match k {
                PriceKind::RecurringMeteredUnit {
                    meter_id,
                    unit_amount,
                    cap_amount,
                    ..
                } => Some((meter_id.0.to_string(), unit_amount.to_string(), *cap_amount)),
                _ => None,
            })
            .collect()
    };
    let kinds = prices_on_sale(&app, &product).await;
    assert_eq!(kinds.len(), 2);
    assert_eq!(
        metered(&kinds),
        vec![(id.clone(), "0.000125".to_string(), Some(5000))]
    );

    // The product's page shows it, and its form holds it.
    let at = format!("/dashboard/{org}/products/{product}");
    let page = b.get(&at).await;
    assert_status(&page, 200);
    assert!(page.body.contains("0.000125 cents per unit (metered)"));
    assert!(page
        .body
        .contains(&format!("<option value=\"{id}\" selected>")));
    assert!(page.body.contains("value=\"0.000125\"") && page.body.contains("value=\"50.00\""));
    // A save without replacing the prices keeps them; replacing them keeps the metered one.
    redirected(
        &form_post(
            &mut b,
            &at,
            &[
                ("name", "API plan 2"),
                ("metered_meter_id", id.as_str()),
                ("metered_unit_amount", "0.000125"),
            ],
        )
        .await,
    );
    assert_eq!(prices_on_sale(&app, &product).await, kinds);
    let page = form_post(
        &mut b,
        &at,
        &[
            ("name", "API plan 2"),
            ("replace_prices", "on"),
            ("billing", "month"),
            ("amount_type", "fixed"),
            ("amount", "12.00"),
            ("metered_meter_id", id.as_str()),
            ("metered_unit_amount", "0.5"),
            ("metered_cap", ""),
        ],
    )
    .await;
    redirected(&page);
    let kinds = prices_on_sale(&app, &product).await;
    assert_eq!(kinds.len(), 2, "{kinds:?}");
    assert_eq!(metered(&kinds), vec![(id.clone(), "0.5".to_string(), None)]);
    // Now a price uses the meter: archiving it is refused on its page.
    let page = form_post(
        &mut b,
        &format!("/dashboard/{org}/meters/{id}/archive"),
        &[("archived", "true")],
    )
    .await;
    assert_status(&page, 422);
}
