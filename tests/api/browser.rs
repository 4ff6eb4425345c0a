//! The hosted checkout page in a real browser: `tests/clients/browser/checkout.py` drives
//! headless Chromium (Debian's `chromium` and `chromium-driver`) with pinned selenium
//! through a purchase with a discount code and a declined card, and a purchase of seats at
//! a seat-based price (the count changed, bad counts refused in place), against a fresh
//! server, and must end with `N passed, 0 failed`. Screenshots of the checkout and confirmation pages
//! at phone and desktop sizes are left under `<CARGO_TARGET_TMPDIR>/browser-screenshots`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::checkouts::{by_price, created, seed, Api};
use crate::helpers::spawn_app;
use crate::tools;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// A Japanese font (Debian's `fonts-ipafont-gothic`): without one, the screenshots of the
/// Japanese pages show boxes.
const CJK_FONT: &str = "/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf";

/// The whole script takes seconds; this only stops a hung browser.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(240);
const APT_TIMEOUT: Duration = Duration::from_secs(900);

/// Fewer checks than this means the script stopped early.
const MIN_CHECKS: u32 = 65;

fn is_root() -> bool {
    let out = tools::run_with_timeout(Command::new("id").arg("-u"), Duration::from_secs(10));
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

/// Installs Debian's Chromium and its driver when they are missing (as root), else fails
/// with what to install.
///
/// Both browser tests call this at once on a fresh machine: the tools directory's lock lets
/// one install while the other waits, and apt waits for dpkg's lock held by anything else.
pub(crate) fn ensure_chromium() {
    tools::locked("apt", install_chromium);
}

fn install_chromium() {
    let browser = Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists();
    // The font only makes the Japanese screenshots readable: without root to install it,
    // the tests run without it.
    if browser && (Path::new(CJK_FONT).exists() || !is_root()) {
        return;
    }
    assert!(
        is_root(),
        "the browser test needs {CHROMIUM} and {CHROMEDRIVER}: install them with \
         `apt-get install -y chromium chromium-driver fonts-ipafont-gothic` (as root), then \
         run the test again"
    );
    let install = || {
        tools::run_with_timeout(
            Command::new("apt-get")
                .args([
                    "-o",
                    "DPkg::Lock::Timeout=600",
                    "install",
                    "-y",
                    "--no-install-recommends",
                    "chromium",
                    "chromium-driver",
                    "fonts-ipafont-gothic",
                ])
                .env("DEBIAN_FRONTEND", "noninteractive"),
            APT_TIMEOUT,
        )
    };
    let mut out = install();
    if !out.status.success() {
        let update = tools::run_with_timeout(
            Command::new("apt-get").args(["-o", "DPkg::Lock::Timeout=600", "update"]),
            APT_TIMEOUT,
        );
        assert!(
            update.status.success(),
            "apt-get update failed:\n{}",
            String::from_utf8_lossy(&update.stderr)
        );
        out = install();
    }
    assert!(
        out.status.success() && Path::new(CHROMEDRIVER).exists(),
        "apt-get install chromium chromium-driver fonts-ipafont-gothic failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-screenshots")
}

#[actix_web::test]
async fn a_buyer_pays_on_the_checkout_page_in_a_real_browser() {
    ensure_chromium();
    let app = spawn_app().await;
    let api = Api::of(&app);
    // An organization, a license-key benefit (`ACME-…` keys), a one-time product at $25
    // with that benefit, and the code LAUNCH ($5 off).
    let cat = seed(api, "browser").await;
    let checkout = created(api, &by_price(&cat.ebook_price)).await;
    let declined = created(api, &by_price(&cat.ebook_price)).await;
    // A monthly plan sold by the seat: 1 to 4 seats at $10.00 each, 5 to 10 at $8.00.
    let team = api
        .posted(
            "/v1/products/",
            &serde_json::json!({"name": "Team plan", "organization_id": cat.org,
                "recurring_interval": "month",
                "prices": [{"amount_type": "seat_based", "price_currency": "usd",
                            "seat_tiers": {"tiers": [
                                {"min_seats": 1, "max_seats": 4, "price_per_seat": 1000},
                                {"min_seats": 5, "max_seats": 10, "price_per_seat": 800}]}}]}),
            201,
        )
        .await;
    let seats = created(
        api,
        &by_price(team["prices"][0]["id"].as_str().expect("a price id")),
    )
    .await;
    let url = |c: &serde_json::Value| c["url"].as_str().expect("a checkout url").to_string();

    run_script(
        "checkout.py",
        &screenshot_dir(),
        &[
            ("CHECKOUT_URL", url(&checkout).as_str()),
            ("DECLINE_URL", url(&declined).as_str()),
            ("SEATS_URL", url(&seats).as_str()),
            ("TOLLGATE_URL", app.address.as_str()),
            ("ORG_ID", cat.org.as_str()),
            ("DISCOUNT_CODE", "LAUNCH"),
        ],
        SCRIPT_TIMEOUT,
        MIN_CHECKS,
    )
    .await;
}

/// The currencies script runs 31 checks; fewer than this means it stopped early.
const MIN_CURRENCY_CHECKS: u32 = 24;

/// Issue 49: the hosted checkout in euros and in yen (`tests/clients/browser/currencies.py`):
/// every amount in the checkout's currency (`€18.00`, `¥3,000`), the confirmation too, and a
/// pay-what-you-want amount in whole yen. Screenshots at phone and desktop widths go to
/// `<CARGO_TARGET_TMPDIR>/currency-browser-screenshots`, and are copied to the directory
/// `TOLLGATE_SHOTS_COPY` names, when set.
#[actix_web::test]
async fn a_buyer_pays_in_euros_and_in_yen_on_the_checkout_page_in_a_real_browser() {
    use serde_json::json;
    ensure_chromium();
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = crate::checkouts::create_org(api, "browser-currencies").await;
    let fixed = |c: &str, a: i64| json!({"type": "one_time", "amount_type": "fixed", "price_currency": c, "price_amount": a});
    let custom =
        |c: &str| json!({"type": "one_time", "amount_type": "custom", "price_currency": c});
    let world = api
        .posted(
            "/v1/products/",
            &json!({"name": "World edition", "organization_id": org,
                    "prices": [fixed("usd", 2000), fixed("eur", 1800), fixed("jpy", 3000)]}),
            201,
        )
        .await;
    let tip = api
        .posted(
            "/v1/products/",
            &json!({"name": "Tip jar", "organization_id": org,
                    "prices": [custom("usd"), custom("eur"), custom("jpy")]}),
            201,
        )
        .await;
    let checkout = |product: &serde_json::Value, currency: &str| json!({"products": [product["id"]], "currency": currency});
    let eur = created(api, &checkout(&world, "eur")).await;
    let jpy = created(api, &checkout(&world, "jpy")).await;
    let jpy_tip = created(api, &checkout(&tip, "jpy")).await;
    let url = |c: &serde_json::Value| c["url"].as_str().expect("a checkout url").to_string();
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("currency-browser-screenshots");
    run_script(
        "currencies.py",
        &shots,
        &[
            ("EUR_URL", url(&eur).as_str()),
            ("JPY_URL", url(&jpy).as_str()),
            ("JPY_TIP_URL", url(&jpy_tip).as_str()),
        ],
        SCRIPT_TIMEOUT,
        MIN_CURRENCY_CHECKS,
    )
    .await;
    if let Some(copy) = std::env::var_os("TOLLGATE_SHOTS_COPY") {
        let copy = PathBuf::from(copy);
        std::fs::create_dir_all(&copy).expect("creating the copy directory");
        for entry in std::fs::read_dir(&shots).expect("the screenshots") {
            let path = entry.expect("an entry").path();
            if let Some(name) = path.file_name() {
                std::fs::copy(&path, copy.join(name)).expect("copying a screenshot");
            }
        }
    }
}

/// Runs `tests/clients/browser/<script>` with the pinned selenium, Debian's Chromium and
/// `env`, screenshots into `shots` (emptied first), within `timeout`; it must end with
/// `N passed, 0 failed`, `N` at least `min_checks`, and exit 0.
pub(crate) async fn run_script(
    script: &str,
    shots: &Path,
    env: &[(&str, &str)],
    timeout: Duration,
    min_checks: u32,
) {
    let python = tools::python_venv("tests/clients/browser/requirements.txt");
    let _ = std::fs::remove_dir_all(shots);
    std::fs::create_dir_all(shots).expect("creating the screenshot directory");
    let mut cmd = Command::new(python);
    cmd.arg(
        tools::repo_root()
            .join("tests/clients/browser")
            .join(script),
    )
    .envs(env.iter().copied())
    .env("SCREENSHOT_DIR", shots)
    .env("CHROMIUM", CHROMIUM)
    .env("CHROMEDRIVER", CHROMEDRIVER)
    .env("PYTHONUNBUFFERED", "1");
    let out = tools::run_async(cmd, timeout).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = format!(
        "browser suite {script} ({}):\n--- stdout\n{stdout}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{report}");
    println!("screenshots: {}", shots.display());
    match tools::tally(&stdout) {
        Some((passed, 0)) => {
            assert!(passed >= min_checks, "only {passed} checks ran\n{report}");
            assert!(
                out.status.success(),
                "non-zero exit with 0 failed\n{report}"
            );
        }
        tally => panic!("tally {tally:?}\n{report}"),
    }
}

/// The trial script runs 58 checks; fewer than this means it stopped early.
const MIN_TRIAL_CHECKS: u32 = 50;

fn trial_screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("trial-browser-screenshots")
}

/// A free trial on the hosted page: `tests/clients/browser/trial.py` starts a 14-day trial
/// of a $10.00 monthly plan (the note, "Start free trial", the card saved, `trialing`), then
/// the same buyer on a second checkout is refused another trial (403
/// `TrialAlreadyRedeemed`): the page drops it, reloads at `#trial-used`, says so, and the
/// buyer subscribes from the keyboard, paying now (`active`). Screenshots go to
/// `<CARGO_TARGET_TMPDIR>/trial-browser-screenshots`.
#[actix_web::test]
async fn a_buyer_gets_one_free_trial_on_the_checkout_page_in_a_real_browser() {
    ensure_chromium();
    let app = spawn_app().await;
    let api = Api::of(&app);
    let org = crate::checkouts::create_org(api, "browser-trial").await;
    let product = api
        .posted(
            "/v1/products/",
            &serde_json::json!({"name": "Pro", "organization_id": org,
                "recurring_interval": "month", "trial_interval": "day", "trial_interval_count": 14,
                "prices": [{"amount_type": "fixed", "price_amount": 1000, "price_currency": "usd"}]}),
            201,
        )
        .await;
    let product = crate::checkouts::id_of(&product);
    let body = serde_json::json!({"payment_processor": "stripe", "product_id": product});
    let trial = created(api, &body).await;
    let again = created(api, &body).await;
    let url = |c: &serde_json::Value| c["url"].as_str().expect("a checkout url").to_string();

    run_script(
        "trial.py",
        &trial_screenshot_dir(),
        &[
            ("TRIAL_URL", url(&trial).as_str()),
            ("AGAIN_URL", url(&again).as_str()),
            ("PRODUCT_ID", product.as_str()),
            ("TOLLGATE_URL", app.address.as_str()),
            ("TOLLGATE_TOKEN", app.token.as_str()),
        ],
        SCRIPT_TIMEOUT,
        MIN_TRIAL_CHECKS,
    )
    .await;

    // What the seller sees afterwards: one customer, one trial, one paid subscription.
    let r = api
        .read(&format!("/v1/subscriptions/?product_id={product}"))
        .await;
    r.expect(200);
    let subs = r.items();
    assert_eq!(subs.len(), 2, "{subs:?}");
    let of = |c: &serde_json::Value| {
        subs.iter()
            .find(|s| s["checkout_id"] == c["id"])
            .unwrap_or_else(|| panic!("no subscription of {}: {subs:?}", c["id"]))
    };
    let (first, second) = (of(&trial), of(&again));
    assert_eq!(first["status"], "trialing", "{first}");
    // 14 days from the confirm (the checkout's own `trial_end` counted from its creation).
    let at = |v: &serde_json::Value| {
        chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("{v}")))
            .unwrap_or_else(|e| panic!("{v}: {e}"))
    };
    let late = at(&first["trial_end"]) - at(&trial["trial_end"]);
    assert!(
        late >= chrono::Duration::zero() && late < chrono::Duration::minutes(10),
        "{first}"
    );
    assert_eq!(second["status"], "active", "{second}");
    assert!(second["trial_end"].is_null(), "{second}");
    assert_eq!(first["customer_id"], second["customer_id"]);
}

/// The embed script checks fewer than this many: it stopped early.
const MIN_EMBED_CHECKS: u32 = 14;

/// Issue 54: the hosted checkout embedded in a seller's page on another origin
/// (`tests/clients/browser/embed.py`): framed only there, it sends that page Polar's
/// messages (`loaded`, `confirmed`, `success` with the seller's success URL, `close`), and
/// a checkout made for another site is refused the frame by the browser.
#[actix_web::test]
async fn an_embedded_checkout_talks_to_its_seller_page_only() {
    use serde_json::json;
    ensure_chromium();
    let app = spawn_app().await;
    let api = Api::of(&app);
    let cat = crate::checkouts::seed(api, "browser-embed").await;
    // A port for the seller's page: another origin than the server's.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let parent = format!("http://127.0.0.1:{port}");
    let embedded = |origin: &str| {
        crate::checkouts::with(
            crate::checkouts::by_price(&cat.ebook_price),
            json!({"embed_origin": origin, "success_url": "https://shop.example/thanks"}),
        )
    };
    let url = |c: &serde_json::Value| c["url"].as_str().expect("a checkout url").to_string();
    let paid = created(api, &embedded(&parent)).await;
    let closed = created(api, &embedded(&parent)).await;
    let foreign = created(api, &embedded("https://other.example")).await;
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("embed-browser-screenshots");
    run_script(
        "embed.py",
        &shots,
        &[
            ("EMBED_URL", url(&paid).as_str()),
            ("CLOSE_URL", url(&closed).as_str()),
            ("FOREIGN_URL", url(&foreign).as_str()),
            ("PARENT_PORT", port.to_string().as_str()),
        ],
        SCRIPT_TIMEOUT,
        MIN_EMBED_CHECKS,
    )
    .await;
}
