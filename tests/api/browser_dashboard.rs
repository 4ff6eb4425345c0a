//! The seller's dashboard in a real browser: `tests/clients/browser/dashboard.py` drives
//! headless Chromium (Debian's `chromium` and `chromium-driver`, as `browser.rs` does) with
//! pinned selenium through a seller's day against a fresh server: sign up and sign in,
//! create an organization, a license-key benefit and a product, copy the product's checkout
//! link, buy through it as a buyer in the same browser, then find the order, the customer
//! and the key in the dashboard, watch validations reach the overview's chart, and revoke
//! the key; then refunds part of the order, creates a feature flag with the benefits page's
//! form, rotates a webhook endpoint's secret with its "Rotate secret" button, and creates a
//! seat-based product (a gap between tiers refused first, with the API's message). It must
//! end with `N passed, 0 failed`. Screenshots of every page at phone and
//! desktop sizes are left under `<CARGO_TARGET_TMPDIR>/dashboard-screenshots`.

use std::path::PathBuf;
use std::time::Duration;

use crate::browser::{ensure_chromium, run_script};
use crate::helpers::spawn_app;

/// The whole script takes well under a minute; this only stops a hung browser.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);

/// Fewer checks than this means the script stopped early.
const MIN_CHECKS: u32 = 200;

fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dashboard-screenshots")
}

#[actix_web::test]
async fn a_seller_runs_the_shop_from_the_dashboard_in_a_real_browser() {
    ensure_chromium();
    let app = spawn_app().await;
    run_script(
        "dashboard.py",
        &screenshot_dir(),
        &[("TOLLGATE_URL", app.address.as_str())],
        SCRIPT_TIMEOUT,
        MIN_CHECKS,
    )
    .await;
}
