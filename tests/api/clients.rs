//! Polar's official clients against a fresh server: the journeys of `tests/clients/`, run
//! with the pinned `polar-sdk` (Python) and `@polar-sh/sdk` (Node), must end with
//! `N passed, 0 failed`. The packages are installed on first use (see `tools.rs`).

use std::process::{Command, Output};
use std::time::Duration;

use crate::helpers::spawn_app;
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
