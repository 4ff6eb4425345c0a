//! The seller's dashboard in a real browser: `tests/clients/browser/dashboard.py` drives
//! headless Chromium (Debian's `chromium` and `chromium-driver`, as `browser.rs` does) with
//! pinned selenium through a seller's day against a fresh server: sign up and sign in,
//! create an organization, a license-key benefit and a product, copy the product's checkout
//! link, buy through it as a buyer in the same browser, then find the order, the customer
//! and the key in the dashboard, watch validations reach the overview's chart, and revoke
//! the key. It must end with `N passed, 0 failed`. Screenshots of every page at phone and
//! desktop sizes are left under `<CARGO_TARGET_TMPDIR>/dashboard-screenshots`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::browser::{ensure_chromium, CHROMEDRIVER, CHROMIUM};
use crate::helpers::spawn_app;
use crate::tools;

/// The whole script takes well under a minute; this only stops a hung browser.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);

/// Fewer checks than this means the script stopped early.
const MIN_CHECKS: u32 = 100;

fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dashboard-screenshots")
}

#[actix_web::test]
async fn a_seller_runs_the_shop_from_the_dashboard_in_a_real_browser() {
    ensure_chromium();
    let python = tools::python_venv("tests/clients/browser/requirements.txt");
    let app = spawn_app().await;

    let shots = screenshot_dir();
    let _ = std::fs::remove_dir_all(&shots);
    std::fs::create_dir_all(&shots).expect("creating the screenshot directory");

    let mut cmd = Command::new(python);
    cmd.arg(tools::repo_root().join("tests/clients/browser/dashboard.py"))
        .env("TOLLGATE_URL", &app.address)
        .env("SCREENSHOT_DIR", &shots)
        .env("CHROMIUM", CHROMIUM)
        .env("CHROMEDRIVER", CHROMEDRIVER)
        .env("PYTHONUNBUFFERED", "1");
    let out = tools::run_async(cmd, SCRIPT_TIMEOUT).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = format!(
        "dashboard browser suite ({}):\n--- stdout\n{stdout}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{report}");
    println!("screenshots: {}", shots.display());
    match tools::tally(&stdout) {
        Some((passed, 0)) => {
            assert!(passed >= MIN_CHECKS, "only {passed} checks ran\n{report}");
            assert!(
                out.status.success(),
                "non-zero exit with 0 failed\n{report}"
            );
        }
        tally => panic!("tally {tally:?}\n{report}"),
    }
}
