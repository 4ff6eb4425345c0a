//! The README's quick start, run as written: `tests/readme/quickstart.py` takes the
//! commands of its section "Your first sale in five minutes" and runs them against the real
//! binary, started as the README's first command starts it (the repository's `config.toml`,
//! data under `./data` of its working directory, the test payment processor, rate limits
//! on), on a free port. Each command must succeed and print what the README says it prints;
//! the Python snippet runs with Polar's SDK pinned in `tests/clients/python-1.0/`. It must end
//! with `N passed, 0 failed`.

use std::process::Command;
use std::time::Duration;

use crate::binary::Binary;
use crate::tools;

/// The whole quick start takes seconds; this only stops a hung one.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);
/// A fresh store is ready in well under a second; this allows for a loaded machine.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// Fewer checks than this means commands were lost from the section.
const MIN_CHECKS: u32 = 10;

#[actix_web::test]
async fn the_readme_quick_start_runs_as_written() {
    let python = tools::python_venv("tests/clients/python-1.0/requirements.txt");
    let root = tempfile::tempdir().expect("a working directory");
    std::fs::copy(
        tools::repo_root().join("config.toml"),
        root.path().join("config.toml"),
    )
    .expect("copying config.toml");
    let data = root.path().join("data");
    let server = Binary::start(
        root.path(),
        &data,
        "tollgate.log",
        &[("TOLLGATE__RATE_LIMITS__ENABLED", "true")],
        READY_TIMEOUT,
    )
    .await;

    let mut cmd = Command::new("python3");
    cmd.current_dir(root.path())
        .arg(tools::repo_root().join("tests/readme/quickstart.py"))
        .arg(tools::repo_root().join("README.md"))
        .arg("--base")
        .arg(&server.address)
        .arg("--python")
        .arg(&python);
    let out = tools::run_async(cmd, SCRIPT_TIMEOUT).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = format!(
        "quick start ({}):\n--- stdout\n{stdout}\n--- stderr\n{}\n--- server log\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        server.log_text()
    );
    match tools::tally(&stdout) {
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
        _ => panic!("{report}"),
    }
}
