//! Authlib (an OIDC client library nobody here wrote) against the real server: discovery,
//! registration, the authorization-code flow with PKCE through the browser pages, the
//! id_token checked against the JWKS, userinfo, refresh, introspection and revocation.

use std::process::Command;
use std::time::Duration;

use crate::helpers::spawn_app;
use crate::oauth::{user_with_password, PASSWORD};
use crate::tools::{python_venv, run_async, tally};

#[actix_web::test]
async fn authlib_completes_the_oidc_flow() {
    let app = spawn_app().await;
    user_with_password(&app, "authlib@example.com").await;
    let python = python_venv("tests/clients/oidc/requirements.txt");
    let mut cmd = Command::new(python);
    cmd.arg(crate::tools::repo_root().join("tests/clients/oidc/e2e.py"))
        .env("TOLLGATE_URL", &app.address)
        .env("OIDC_EMAIL", "authlib@example.com")
        .env("OIDC_PASSWORD", PASSWORD);
    let out = run_async(cmd, Duration::from_secs(120)).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let counts = tally(&stdout);
    assert!(
        out.status.success() && matches!(counts, Some((n, 0)) if n > 0),
        "authlib e2e failed ({:?}):\n{stdout}\n{stderr}",
        counts
    );
}
