//! Issue 54: Polar's own embed script, `@polar-sh/checkout` 0.4.1 installed from npm
//! (pinned in `tests/clients/polar-checkout/`), opens Tollgate's checkout in its overlay on
//! a seller's page in headless Chromium (`tests/clients/browser/embed_npm.py`). The
//! published build trusts Polar's origins only, so the script checks the installed
//! `dist/embed.global.js` against its SHA-256 and rewrites that one list to Tollgate's
//! origin, as a seller building it with `POLAR_CHECKOUT_EMBED_SCRIPT_ALLOWED_ORIGINS` would.
//! From a page whose origin the organization's `embed_hosts` list, a checkout link
//! (`data-polar-checkout`) and an API checkout (`Polar.EmbedCheckout.create`) open, load,
//! are paid in the frame with the test processor, and tell the page `confirmed` then
//! `success`; from an unlisted page the link is 403 and the browser refuses to frame the
//! API checkout. Screenshots go to `<CARGO_TARGET_TMPDIR>/embed-npm-screenshots`.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use crate::browser::{ensure_chromium, run_script};
use crate::checkouts::{by_price, created, seed, with, Api};
use crate::helpers::spawn_app;
use crate::tools;

/// Seconds of work; this only stops a hung browser.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);
/// The script runs 31 checks; fewer means it stopped early.
const MIN_CHECKS: u32 = 28;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

#[actix_web::test]
async fn polar_s_npm_embed_script_opens_and_pays_a_checkout_on_a_listed_page_only() {
    ensure_chromium();
    let packages = tools::node_packages("tests/clients/polar-checkout");
    let script = packages.join("node_modules/@polar-sh/checkout/dist/embed.global.js");
    assert!(script.exists(), "{} is not installed", script.display());

    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = seed(api, "browser-embed-npm").await;
    // Two seller pages on other origins than the server's: one listed, one not.
    let parent = free_port();
    let foreign = loop {
        let p = free_port();
        if p != parent {
            break p;
        }
    };
    let r = api
        .patch(
            &format!("/v1/organizations/{}", cat.org),
            Some(api.token),
            &json!({"embed_hosts": [format!("127.0.0.1:{parent}")]}),
        )
        .await;
    r.expect(200);
    assert_eq!(
        r.body["embed_hosts"],
        json!([format!("127.0.0.1:{parent}")])
    );
    let link = api
        .posted(
            "/v1/checkout-links/",
            &json!({"payment_processor": "stripe", "products": [cat.ebook]}),
            201,
        )
        .await;
    let checkout = created(
        api,
        &with(
            by_price(&cat.ebook_price),
            json!({"embed_origin": format!("http://127.0.0.1:{parent}"),
                   "success_url": "https://shop.example/thanks"}),
        ),
    )
    .await;
    let text = |v: &serde_json::Value| v.as_str().expect("a url").to_string();
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("embed-npm-screenshots");
    run_script(
        "embed_npm.py",
        &shots,
        &[
            ("LINK_URL", text(&link["url"]).as_str()),
            ("API_URL", text(&checkout["url"]).as_str()),
            ("PARENT_PORT", parent.to_string().as_str()),
            ("FOREIGN_PORT", foreign.to_string().as_str()),
            ("NPM_EMBED_SCRIPT", script.to_string_lossy().as_ref()),
        ],
        SCRIPT_TIMEOUT,
        MIN_CHECKS,
    )
    .await;
}
