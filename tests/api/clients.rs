//! Polar's official clients against a fresh server: the journeys of `tests/clients/`, run
//! with each pinned generation of `polar-sdk` (Python: the seed-era 0.13.5, and 1.0.2 in
//! each API version) and `@polar-sh/sdk` (Node: 0.22.2, 0.47.1, and 1.0.1 in each API
//! version), must end with `N passed, 0 failed`. The packages are installed on first use
//! (see `tools.rs`). The 1.0 journeys also buy 3 seats of a seat-based plan and read the
//! order, subscription and customer state back with `seats: 3` (in 2027-01 the price is
//! created and read in that version's `tiers` shape). @polar-sh/sdk 1.0.1 also runs issue
//! 46's journey: a feature flag bought
//! and read in the customer's state, and every new event, as delivered, through the SDK's
//! `validateEvent` and payload types.

use std::process::{Command, Output};
use std::time::Duration;

use crate::helpers::{spawn_app, spawn_app_with};
use crate::tools;

/// A whole journey takes seconds; this only stops a hung one.
const JOURNEY_TIMEOUT: Duration = Duration::from_secs(300);

/// Fewer checks than this means the script stopped early or lost checks.
const MIN_CHECKS: u32 = 50;

fn report(suite: &str, out: &Output) -> String {
    format!(
        "{suite} suite ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[track_caller]
fn assert_all_passed(suite: &str, out: &Output) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let tally = tools::tally(&stdout);
    let report = report(suite, out);
    match tally {
        Some((passed, 0)) => {
            assert!(
                passed >= MIN_CHECKS,
                "only {passed} checks ran (expected at least {MIN_CHECKS})\n{report}"
            );
            assert!(
                out.status.success(),
                "non-zero exit with 0 failed\n{report}"
            );
        }
        _ => panic!("tally {tally:?}\n{report}"),
    }
    // Shown with --nocapture, and by the harness when a later assertion fails.
    println!("{report}");
}

#[actix_web::test]
async fn the_python_client_runs_the_whole_journey() {
    let python = tools::python_venv("tests/clients/python/requirements.txt");
    let app = spawn_app().await;
    let mut cmd = Command::new(python);
    cmd.arg(tools::repo_root().join("tests/clients/python/journey.py"))
        .env("TOLLGATE_URL", &app.address)
        .env("TOLLGATE_TOKEN", &app.token)
        .env("PYTHONUNBUFFERED", "1");
    let out = tools::run_async(cmd, JOURNEY_TIMEOUT).await;
    assert_all_passed("python", &out);
}

#[actix_web::test]
async fn the_node_client_runs_the_whole_journey() {
    let packages = tools::node_packages("tests/clients/node");
    let script = tools::node_script(&packages, "tests/clients/node/journey.mjs");
    let app = spawn_app().await;
    let mut cmd = Command::new("node");
    cmd.arg(script)
        .current_dir(&packages)
        .env("TOLLGATE_URL", &app.address)
        .env("TOLLGATE_TOKEN", &app.token);
    let out = tools::run_async(cmd, JOURNEY_TIMEOUT).await;
    assert_all_passed("node", &out);
}

/// polar-sdk 1.0.2 in one API version (`v2026_04`, `v2026_10`, `v2027_01`): the client of
/// that version's module, which sends `Polar-Version` on every request.
async fn python_1_0_journey(version: &str) {
    let python = tools::python_venv("tests/clients/python-1.0/requirements.txt");
    let app = spawn_app().await;
    let mut cmd = Command::new(python);
    cmd.arg(tools::repo_root().join("tests/clients/python-1.0/journey.py"))
        .env("TOLLGATE_URL", &app.address)
        .env("TOLLGATE_TOKEN", &app.token)
        .env("TOLLGATE_API_VERSION", version)
        .env("PYTHONUNBUFFERED", "1");
    let out = tools::run_async(cmd, JOURNEY_TIMEOUT).await;
    assert_all_passed(&format!("python 1.0 {version}"), &out);
}

#[actix_web::test]
async fn polar_sdk_1_0_runs_the_whole_journey_in_2026_04() {
    python_1_0_journey("v2026_04").await;
}

#[actix_web::test]
async fn polar_sdk_1_0_runs_the_whole_journey_in_2026_10() {
    python_1_0_journey("v2026_10").await;
}

#[actix_web::test]
async fn polar_sdk_1_0_runs_the_whole_journey_in_2027_01() {
    python_1_0_journey("v2027_01").await;
}

/// Issue 50 (files, stage 1) through polar-sdk 1.0.2 (`tests/clients/python-1.0/files.py`)
/// in the three API versions: `files.create`, the parts PUT with httpx to the returned
/// URLs and headers, `files.uploaded`, `files.list`, `files.update`, `files.delete`, and
/// the 422 of a whole-file checksum that differs, every answer loaded into the SDK's models.
#[actix_web::test]
async fn polar_sdk_1_0_uploads_lists_renames_and_deletes_a_file_in_every_version() {
    let python = tools::python_venv("tests/clients/python-1.0/requirements.txt");
    let app = spawn_app().await;
    for version in ["v2026_04", "v2026_10", "v2027_01"] {
        let mut cmd = Command::new(&python);
        cmd.arg(tools::repo_root().join("tests/clients/python-1.0/files.py"))
            .env("TOLLGATE_URL", &app.address)
            .env("TOLLGATE_TOKEN", &app.token)
            .env("TOLLGATE_API_VERSION", version)
            .env("PYTHONUNBUFFERED", "1");
        let out = tools::run_async(cmd, Duration::from_secs(120)).await;
        let suite = format!("polar-sdk 1.0.2 files {version}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            tools::tally(&stdout),
            Some((4, 0)),
            "{}",
            report(&suite, &out)
        );
        assert!(out.status.success(), "{}", report(&suite, &out));
    }
}

/// A JavaScript journey of `dir` (package.json, package-lock.json, journey.mjs), with
/// `version` as `TOLLGATE_API_VERSION` when given.
async fn node_journey(dir: &str, version: Option<&str>) {
    let packages = tools::node_packages(dir);
    let script = tools::node_script(&packages, &format!("{dir}/journey.mjs"));
    if dir == NODE_1_0 {
        tools::node_script(&packages, &format!("{dir}/types.mjs"));
    }
    let app = spawn_app().await;
    let mut cmd = Command::new("node");
    cmd.arg(script)
        .current_dir(&packages)
        .env("TOLLGATE_URL", &app.address)
        .env("TOLLGATE_TOKEN", &app.token);
    if let Some(v) = version {
        cmd.env("TOLLGATE_API_VERSION", v);
    }
    let out = tools::run_async(cmd, JOURNEY_TIMEOUT).await;
    assert_all_passed(&format!("{dir} {version:?}"), &out);
}

/// @polar-sh/sdk 0.47 (the generation of Polar's framework adapters): no version header,
/// every answer validated by its zod models, exact statuses.
#[actix_web::test]
async fn polar_sh_sdk_0_47_runs_the_whole_journey() {
    node_journey("tests/clients/node-0.47", None).await;
}

const NODE_1_0: &str = "tests/clients/node-1.0";

#[actix_web::test]
async fn polar_sh_sdk_1_0_runs_the_whole_journey_in_2026_04() {
    node_journey(NODE_1_0, Some("2026-04")).await;
}

#[actix_web::test]
async fn polar_sh_sdk_1_0_runs_the_whole_journey_in_2026_10() {
    node_journey(NODE_1_0, Some("2026-10")).await;
}

#[actix_web::test]
async fn polar_sh_sdk_1_0_runs_the_whole_journey_in_2027_01() {
    node_journey(NODE_1_0, Some("2027-01")).await;
}

/// The checks of `feature_flags.mjs`: 15 named ones and one per new event type (6).
const FEATURE_FLAG_CHECKS: u32 = 21;

/// Issue 46 with @polar-sh/sdk 1.0.1 (`tests/clients/node-1.0/feature_flags.mjs`), in one API
/// version: a feature flag created with metadata, bought, read in the customer's state by id
/// and by external id; every new event type delivered to the script's receiver passes
/// `validateEvent` and the package's payload type. The server delivers to loopback and gives
/// a checkout 10 seconds (swept every second), so the one the script leaves open expires
/// while it runs.
async fn node_feature_flags(version: &str) {
    let packages = tools::node_packages(NODE_1_0);
    let script = tools::node_script(&packages, &format!("{NODE_1_0}/feature_flags.mjs"));
    tools::node_script(&packages, &format!("{NODE_1_0}/types.mjs"));
    let dir = tempfile::tempdir().unwrap();
    let mut settings = tollgate::config::Settings::for_tests(dir.path());
    settings.webhooks.allow_private_targets = true;
    settings.rate_limits.enabled = false;
    settings.checkout.ttl_secs = 10;
    settings.jobs.sweep_interval_secs = 1;
    let app =
        crate::helpers::spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let mut cmd = Command::new("node");
    cmd.arg(script)
        .current_dir(&packages)
        .env("TOLLGATE_URL", &app.address)
        .env("TOLLGATE_TOKEN", &app.token)
        .env("TOLLGATE_API_VERSION", version);
    let out = tools::run_async(cmd, Duration::from_secs(240)).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        tools::tally(&stdout),
        Some((FEATURE_FLAG_CHECKS, 0)),
        "{}",
        report(&format!("node 1.0 feature flags {version}"), &out)
    );
    assert!(out.status.success(), "{}", report(version, &out));
}

#[actix_web::test]
async fn polar_sh_sdk_1_0_buys_a_feature_flag_and_validates_the_new_events_in_2026_04() {
    node_feature_flags("2026-04").await;
}

#[actix_web::test]
async fn polar_sh_sdk_1_0_buys_a_feature_flag_and_validates_the_new_events_in_2026_10() {
    node_feature_flags("2026-10").await;
}

#[actix_web::test]
async fn polar_sh_sdk_1_0_buys_a_feature_flag_and_validates_the_new_events_in_2027_01() {
    node_feature_flags("2027-01").await;
}

/// The checks of `tax_invoices.py` and `tax_invoices.mjs`.
const INVOICE_CHECKS: u32 = 3;

/// Issue 48's invoices through polar-sdk 1.0.2 and @polar-sh/sdk 1.0.1 (`tests/clients/
/// python-1.0/tax_invoices.py`, `tests/clients/node-1.0/tax_invoices.mjs`), each in the three
/// API versions against one server (each run its own German seller invoicing on request):
/// the seller's `orders.update` / `generate_invoice` / `invoice` and the portal's with a
/// customer session load into the SDK's models (`Order`, `null`, `OrderInvoice`,
/// `CustomerOrder`, `CustomerOrderInvoice`), the PDF behind the link answers, and the 404
/// `InvoiceDoesNotExist`, 409 `InvoiceAlreadyIssued`, 422 `MissingInvoiceBillingDetails` and
/// a country change's 422 are the SDK's errors with the body readable.
#[actix_web::test]
async fn polar_sdks_parse_the_invoice_answers_in_every_version() {
    let python = tools::python_venv("tests/clients/python-1.0/requirements.txt");
    let packages = tools::node_packages(NODE_1_0);
    let script = tools::node_script(&packages, &format!("{NODE_1_0}/tax_invoices.mjs"));
    tools::node_script(&packages, &format!("{NODE_1_0}/types.mjs"));
    let app = spawn_app().await;
    let mut runs = Vec::new();
    for version in ["v2026_04", "v2026_10", "v2027_01"] {
        let mut cmd = Command::new(&python);
        cmd.arg(tools::repo_root().join("tests/clients/python-1.0/tax_invoices.py"))
            .env("PYTHONUNBUFFERED", "1")
            .env("TOLLGATE_API_VERSION", version);
        runs.push((format!("polar-sdk 1.0.2 {version}"), cmd));
    }
    for version in ["2026-04", "2026-10", "2027-01"] {
        let mut cmd = Command::new("node");
        cmd.arg(&script)
            .current_dir(&packages)
            .env("TOLLGATE_API_VERSION", version);
        runs.push((format!("@polar-sh/sdk 1.0.1 {version}"), cmd));
    }
    for (suite, mut cmd) in runs {
        cmd.env("TOLLGATE_URL", &app.address)
            .env("TOLLGATE_TOKEN", &app.token);
        let out = tools::run_async(cmd, Duration::from_secs(120)).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            tools::tally(&stdout),
            Some((INVOICE_CHECKS, 0)),
            "{}",
            report(&suite, &out)
        );
        assert!(out.status.success(), "{}", report(&suite, &out));
    }
}

/// The checks of `tax_checkout.py` and `tax_checkout.mjs`.
const TAX_CHECKS: u32 = 6;

/// Issue 48 through polar-sdk 1.0.2 and @polar-sh/sdk 1.0.1 (`tests/clients/python-1.0/
/// tax_checkout.py`, `tests/clients/node-1.0/tax_checkout.mjs`), each in the three API
/// versions against one server (each run its own German seller): the organization's
/// `default_tax_behavior`, checkouts with tax (a German consumer, a French business with
/// its number, an exclusive seller, a US buyer), their orders and a refund load into the
/// SDK's models with the tax values asserted; a number whose check digits fail is the
/// SDK's `HTTPValidationError`.
#[actix_web::test]
async fn polar_sdks_parse_checkouts_and_orders_with_tax_in_every_version() {
    let python = tools::python_venv("tests/clients/python-1.0/requirements.txt");
    let packages = tools::node_packages(NODE_1_0);
    let script = tools::node_script(&packages, &format!("{NODE_1_0}/tax_checkout.mjs"));
    tools::node_script(&packages, &format!("{NODE_1_0}/types.mjs"));
    let app = spawn_app().await;
    let mut runs = Vec::new();
    for version in ["v2026_04", "v2026_10", "v2027_01"] {
        let mut cmd = Command::new(&python);
        cmd.arg(tools::repo_root().join("tests/clients/python-1.0/tax_checkout.py"))
            .env("PYTHONUNBUFFERED", "1")
            .env("TOLLGATE_API_VERSION", version);
        runs.push((format!("polar-sdk 1.0.2 {version}"), cmd));
    }
    for version in ["2026-04", "2026-10", "2027-01"] {
        let mut cmd = Command::new("node");
        cmd.arg(&script)
            .current_dir(&packages)
            .env("TOLLGATE_API_VERSION", version);
        runs.push((format!("@polar-sh/sdk 1.0.1 {version}"), cmd));
    }
    for (suite, mut cmd) in runs {
        cmd.env("TOLLGATE_URL", &app.address)
            .env("TOLLGATE_TOKEN", &app.token);
        let out = tools::run_async(cmd, Duration::from_secs(120)).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            tools::tally(&stdout),
            Some((TAX_CHECKS, 0)),
            "{}",
            report(&suite, &out)
        );
        assert!(out.status.success(), "{}", report(&suite, &out));
    }
}

/// The checks of `currencies.py` and `currencies.mjs`, with the buyer's-address check (run
/// when `TOLLGATE_GEOIP_JP_IP` names an address the server's GeoIP database places in Japan).
const CURRENCY_CHECKS: u32 = 8;

/// An address in Japan in [`geoip_database`].
const JAPANESE_IP: &str = "126.1.2.3";

/// A GeoIP country database (MaxMind format, built here: none is downloaded) placing 126/8
/// in Japan and 81/8 in France.
fn geoip_database() -> Vec<u8> {
    use mmdb_writer::{Value as V, Writer};
    let mut w = Writer::new("Tollgate-Test-Country");
    for (net, iso) in [("126.0.0.0/8", "JP"), ("81.0.0.0/8", "FR")] {
        let value = V::map([(
            "country",
            V::map([("iso_code", V::String(iso.to_string()))]),
        )]);
        w.insert_value(net.parse::<ipnet::IpNet>().unwrap(), value)
            .unwrap();
    }
    w.to_bytes().unwrap()
}

/// Issue 49 through polar-sdk 1.0.2 and @polar-sh/sdk 1.0.1 (`tests/clients/python-1.0/
/// currencies.py`, `tests/clients/node-1.0/currencies.mjs`), each in the three API versions
/// against one server (each run its own organization): a product in usd, eur and jpy, the
/// organization's default changed to eur, checkouts with an explicit currency and with the
/// default and from the buyer's address (the server given a GeoIP database), the 422 of a
/// currency the product lacks, and the orders, subscriptions and refunds of each in its
/// currency, every answer loaded into the SDK's models.
#[actix_web::test]
async fn polar_sdks_sell_and_refund_in_dollars_euros_and_yen_in_every_version() {
    let python = tools::python_venv("tests/clients/python-1.0/requirements.txt");
    let packages = tools::node_packages(NODE_1_0);
    let script = tools::node_script(&packages, &format!("{NODE_1_0}/currencies.mjs"));
    tools::node_script(&packages, &format!("{NODE_1_0}/types.mjs"));
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("country.mmdb");
    std::fs::write(&database, geoip_database()).unwrap();
    let mut settings = tollgate::config::Settings::for_tests(dir.path());
    settings.checkout.geoip_database = database;
    let app = spawn_app_with(dir, settings, tollgate_actors::SystemClock::shared()).await;
    let mut runs = Vec::new();
    for version in ["v2026_04", "v2026_10", "v2027_01"] {
        let mut cmd = Command::new(&python);
        cmd.arg(tools::repo_root().join("tests/clients/python-1.0/currencies.py"))
            .env("PYTHONUNBUFFERED", "1")
            .env("TOLLGATE_API_VERSION", version);
        runs.push((format!("polar-sdk 1.0.2 {version}"), cmd));
    }
    for version in ["2026-04", "2026-10", "2027-01"] {
        let mut cmd = Command::new("node");
        cmd.arg(&script)
            .current_dir(&packages)
            .env("TOLLGATE_API_VERSION", version);
        runs.push((format!("@polar-sh/sdk 1.0.1 {version}"), cmd));
    }
    for (suite, mut cmd) in runs {
        cmd.env("TOLLGATE_URL", &app.address)
            .env("TOLLGATE_TOKEN", &app.token)
            .env("TOLLGATE_GEOIP_JP_IP", JAPANESE_IP);
        let out = tools::run_async(cmd, Duration::from_secs(120)).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            tools::tally(&stdout),
            Some((CURRENCY_CHECKS, 0)),
            "{}",
            report(&suite, &out)
        );
        assert!(out.status.success(), "{}", report(&suite, &out));
    }
}
