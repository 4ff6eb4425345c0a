//! The pinned updaters against Tollgate's feeds (`tests/clients/updaters/`, issue 50 item
//! 4): electron-updater 6.8.10 from npm run headless, and Tauri's JSON and Sparkle's appcast
//! verified in Python with pyca/cryptography, independent of Tollgate's code.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::{Duration, Utc};
use serde_json::json;
use sha2::{Digest, Sha512};
use tollgate::config::Settings;
use tollgate_actors::ManualClock;

use crate::helpers::spawn_app_with;
use crate::releases::{data, published, set_key, signing_key, upload};
use crate::versions::sell_key;

/// The pinned updaters against a real server (`tests/clients/updaters/`): electron-updater
/// 6.8.10 headless (AppImage and NSIS) picks the newest version the key may have and
/// downloads it, sha512-checked; a key expired before the newest release gets the older
/// one; Tauri's JSON and Sparkle's appcast, read and verified in Python with pyca's Ed25519.
#[actix_web::test]
async fn electron_updater_tauri_and_sparkle_clients_read_the_feeds() {
    const DIR: &str = "tests/clients/updaters";
    const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);
    let packages = crate::tools::node_packages(DIR);
    let script = crate::tools::node_script(&packages, &format!("{DIR}/electron.cjs"));
    let python = crate::tools::python_venv(&format!("{DIR}/requirements.txt"));

    let dir = tempfile::tempdir().unwrap();
    let s = Settings::for_tests(dir.path());
    let start = Utc::now();
    let (clock, shared) = ManualClock::shared(start);
    let app = spawn_app_with(dir, s, shared).await;
    let sale = sell_key(&app, "feed-clients").await;
    let p = sale.product.clone();
    let mut shas = std::collections::HashMap::new();
    for (i, (v, channel)) in [
        ("1.0.0", "stable"),
        ("1.1.0", "stable"),
        ("1.2.0-beta.1", "beta"),
    ]
    .into_iter()
    .enumerate()
    {
        clock.set(start + Duration::days(10 * i as i64));
        let (lin, win, mac) = (
            data(70_000 + i, i),
            data(50_000 + i, 20 + i),
            data(60_000 + i, 40 + i),
        );
        shas.insert((v, "linux"), STANDARD.encode(Sha512::digest(&lin)));
        shas.insert((v, "windows"), STANDARD.encode(Sha512::digest(&win)));
        let fl = upload(
            &app,
            &sale.org,
            &format!("TollgateTestApp-{v}.AppImage"),
            &lin,
        )
        .await;
        let fw = upload(
            &app,
            &sale.org,
            &format!("TollgateTestApp-Setup-{v}.exe"),
            &win,
        )
        .await;
        let fm = upload(
            &app,
            &sale.org,
            &format!("TollgateTestApp-{v}-mac.zip"),
            &mac,
        )
        .await;
        published(
            &app,
            &p,
            v,
            channel,
            &[
                ("linux-x86_64", "appimage", &fl),
                ("windows-x86_64", "nsis", &fw),
                ("darwin-universal", "zip", &fm),
            ],
            json!({}),
        )
        .await;
    }
    clock.set(start + Duration::days(30));
    let keys = signing_key(&app, &sale.org).await;
    let feed_base = app.url(&format!("/v1/updates/{p}/"));

    let electron = |current: &str, expect: &'static str| {
        let mut cmd = std::process::Command::new("node");
        cmd.arg(&script)
            .current_dir(&packages)
            .env("FEED_URL", format!("{feed_base}stable/"))
            .env("LICENSE_KEY", &sale.key)
            .env("CURRENT_VERSION", current)
            .env("EXPECT_VERSION", expect)
            .env("EXPECT_SHA512_LINUX", &shas[&(expect, "linux")])
            .env("EXPECT_SHA512_WINDOWS", &shas[&(expect, "windows")]);
        cmd
    };
    let expect_all_passed = |suite: &str, out: &std::process::Output, min: u32| {
        let stdout = String::from_utf8_lossy(&out.stdout);
        let report = format!(
            "{suite} ({}):\n{stdout}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        match crate::tools::tally(&stdout) {
            Some((n, 0)) if n >= min && out.status.success() => println!("{report}"),
            other => panic!("tally {other:?}\n{report}"),
        }
    };
    // A key without expiry: the newest stable, 1.1.0.
    let out = crate::tools::run_async(electron("1.0.0", "1.1.0"), TIMEOUT).await;
    expect_all_passed("electron-updater", &out, 12);

    let mut cmd = std::process::Command::new(&python);
    cmd.arg(crate::tools::repo_root().join(format!("{DIR}/verify.py")))
        .env("FEED_URL", &feed_base)
        .env("LICENSE_KEY", &sale.key)
        .env("TAURI_PUBKEY", keys["tauri_pubkey"].as_str().unwrap())
        .env(
            "SPARKLE_PUBLIC_ED_KEY",
            keys["sparkle_public_ed_key"].as_str().unwrap(),
        )
        .env("CURRENT_VERSION", "1.0.0")
        .env("EXPECT_VERSION", "1.1.0")
        .env("SPARKLE_NEWEST", "1.2.0-beta.1");
    let out = crate::tools::run_async(cmd, TIMEOUT).await;
    expect_all_passed("tauri and sparkle (python)", &out, 30);

    // The key expired between 1.0.0 and 1.1.0: electron-updater gets 1.0.0.
    set_key(
        &app,
        &sale.key_id,
        json!({"expires_at": (start + Duration::days(5)).to_rfc3339()}),
    )
    .await;
    let out = crate::tools::run_async(electron("0.9.0", "1.0.0"), TIMEOUT).await;
    expect_all_passed("electron-updater, expired key", &out, 12);
}
