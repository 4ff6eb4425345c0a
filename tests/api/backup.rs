//! `tollgate backup`, `restore` and `check` with the real binary: a backup taken while
//! writes go on holds everything acknowledged before it started, restores into a new data
//! directory (never into one with data), serves, and verifies clean; `check` finds a
//! deliberately broken index and `--repair` fixes it.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tollgate::bootstrap::TOKEN_FILE;
use tollgate_storage::{Record, Store, StoreConfig};

use crate::disk_full::Server;

/// Runs the CLI with a deadline (killed past it: a hang fails the test).
pub(crate) fn cli(root: &Path, data: &Path, args: &[&str]) -> Output {
    cli_with(root, data, &[], args, Duration::from_secs(60))
}

/// [`cli`] with more settings in the environment and another deadline.
pub(crate) fn cli_with(
    root: &Path,
    data: &Path,
    env: &[(&str, &str)],
    args: &[&str],
    deadline: Duration,
) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .current_dir(root)
        .env_remove("RUST_LOG")
        .env("TOLLGATE__STORAGE__DATA_DIR", data)
        .envs(env.iter().copied())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting the CLI");
    let started = std::time::Instant::now();
    while child.try_wait().expect("polling").is_none() {
        if started.elapsed() > deadline {
            let _ = child.kill();
            panic!("tollgate {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("the CLI's output")
}

pub(crate) fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[actix_web::test]
async fn a_backup_under_write_load_restores_everything_acknowledged_and_checks_clean() {
    let first = tempfile::tempdir().unwrap();
    let root = first.path();
    std::fs::create_dir_all(root.join("data")).unwrap();
    let server = Server::start(root, "server.log").await;
    let token = std::fs::read_to_string(root.join("data").join(TOKEN_FILE))
        .unwrap()
        .trim()
        .to_string();

    let mut before = Vec::new();
    for n in 0..30 {
        let (status, body, _) = server.create(&token, &format!("before-{n}")).await.unwrap();
        assert_eq!(status, 201, "{body}");
        before.push(body["id"].as_str().unwrap().to_string());
    }

    // Concurrent creates while the backup runs.
    let stop = Arc::new(AtomicBool::new(false));
    let server = Arc::new(server);
    let mut load = Vec::new();
    for w in 0..4 {
        let (server, token, stop) = (server.clone(), token.clone(), stop.clone());
        load.push(actix_web::rt::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                let (status, body, _) = server
                    .create(&token, &format!("during-{w}-{n}"))
                    .await
                    .expect("an answer");
                assert_eq!(status, 201, "{body}");
                n += 1;
            }
            n
        }));
    }
    actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    let backup_dir = root.join("backup");
    let (address, cli_root, data) = (
        server.address.clone(),
        root.to_path_buf(),
        root.join("data"),
    );
    let bdir = backup_dir.clone();
    let out = actix_web::rt::task::spawn_blocking(move || {
        cli(
            &cli_root,
            &data,
            &["backup", "--to", bdir.to_str().unwrap(), "--url", &address],
        )
    })
    .await
    .unwrap();
    stop.store(true, Ordering::SeqCst);
    let mut during = 0;
    for l in load {
        during += l.await.unwrap();
    }
    assert!(out.status.success(), "backup failed: {}", text(&out));
    assert!(text(&out).contains("backed up"), "{}", text(&out));
    // The service wrote the snapshot to a file without a name: nothing left behind.
    let left: Vec<String> = std::fs::read_dir(root.join("data"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".backup-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // A second backup into the same directory is refused (nothing is overwritten).
    let again = cli(
        root,
        &root.join("data"),
        &[
            "backup",
            "--to",
            backup_dir.to_str().unwrap(),
            "--url",
            &server.address,
        ],
    );
    assert!(!again.status.success());
    assert!(text(&again).contains("already exists"), "{}", text(&again));

    // A token that is not an admin's PAT is refused by the service.
    let refused = reqwest::Client::new()
        .get(format!("{}/v1/admin/backup", server.address))
        .bearer_auth("polar_pat_not-a-token")
        .timeout(Duration::from_secs(20))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);

    // Restore: never into a directory with data.
    let restore_into_existing = cli(
        root,
        &root.join("data"),
        &["restore", "--from", backup_dir.to_str().unwrap()],
    );
    assert!(!restore_into_existing.status.success());
    assert!(
        text(&restore_into_existing).contains("not empty"),
        "{}",
        text(&restore_into_existing)
    );
    drop(server);

    let second = tempfile::tempdir().unwrap();
    let root2 = second.path();
    let data2 = root2.join("data");
    // A damaged copy (its end cut off) is refused before anything is written.
    let damaged = root2.join("damaged");
    std::fs::create_dir_all(&damaged).unwrap();
    let whole = std::fs::read(backup_dir.join("tollgate.snapshot")).unwrap();
    std::fs::write(
        damaged.join("tollgate.snapshot"),
        &whole[..whole.len() - 100],
    )
    .unwrap();
    let out = cli(
        root2,
        &data2,
        &["restore", "--from", damaged.to_str().unwrap()],
    );
    assert!(!out.status.success());
    assert!(text(&out).contains("snapshot"), "{}", text(&out));
    assert!(
        !data2.exists() || std::fs::read_dir(&data2).unwrap().next().is_none(),
        "a refused restore wrote into the data directory"
    );
    let out = cli(
        root2,
        &data2,
        &["restore", "--from", backup_dir.to_str().unwrap()],
    );
    assert!(out.status.success(), "restore failed: {}", text(&out));
    let out = cli(root2, &data2, &["check"]);
    assert!(
        out.status.success(),
        "check of the restored store: {}",
        text(&out)
    );
    assert!(text(&out).contains("organization: ok"), "{}", text(&out));

    let server = Server::start(root2, "server.log").await;
    for id in &before {
        assert_eq!(
            server.get_org(&token, id).await,
            Some(200),
            "organization {id}, acknowledged before the backup, is missing"
        );
    }
    let (status, body, _) = server.create(&token, "after-restore").await.unwrap();
    assert_eq!(status, 201, "{body}");
    println!(
        "backup: {} created before, {during} during the backup",
        before.len()
    );
}

#[actix_web::test]
async fn check_reports_a_broken_index_and_repair_fixes_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("data")).unwrap();
    let server = Server::start(root, "server.log").await;
    let token = std::fs::read_to_string(root.join("data").join(TOKEN_FILE))
        .unwrap()
        .trim()
        .to_string();
    for n in 0..3 {
        let (status, _, _) = server.create(&token, &format!("org-{n}")).await.unwrap();
        assert_eq!(status, 201);
    }
    drop(server);
    // Damage one index entry of the stopped service's store.
    let index = tollgate::domain::membership::Membership::INDEXES[0];
    {
        let store = Store::open(&StoreConfig::new(root.join("data"))).unwrap();
        assert!(store.damage_index_for_tests(index).unwrap());
    }
    let out = cli(root, &root.join("data"), &["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("membership: 1 missing"),
        "{}",
        text(&out)
    );
    let out = cli(root, &root.join("data"), &["check", "--repair"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("(repaired)"), "{}", text(&out));
    let out = cli(root, &root.join("data"), &["check"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!text(&out).contains("missing"), "{}", text(&out));
}

#[actix_web::test]
async fn storage_copy_moves_a_stopped_store_into_postgresql_and_verifies_it() {
    // A fresh schema on the test database, dropped at the end.
    let Some(db) = tollgate_storage::testing::fresh_schema("storage_copy") else {
        return;
    };
    let (url, schema) = (db.url.clone(), db.schema.clone());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("data")).unwrap();
    let server = Server::start(root, "server.log").await;
    let token = std::fs::read_to_string(root.join("data").join(TOKEN_FILE))
        .unwrap()
        .trim()
        .to_string();
    let mut orgs = Vec::new();
    for n in 0..5 {
        let (status, body, _) = server.create(&token, &format!("moving-{n}")).await.unwrap();
        assert_eq!(status, 201, "{body}");
        orgs.push(body["id"].as_str().unwrap().to_string());
    }
    // Not while the service holds the store.
    let out = cli(
        root,
        &root.join("data"),
        &["storage", "copy", "--to", &url, "--schema", &schema],
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("stop it first"), "{}", text(&out));
    drop(server);

    let out = cli(
        root,
        &root.join("data"),
        &["storage", "copy", "--to", &url, "--schema", &schema],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("every index verified"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("organization: ok"), "{}", text(&out));

    // What the database holds: the same records at the same revisions.
    let store = Store::open(&StoreConfig::new(root.join("data"))).unwrap();
    let pg = Store::postgres(&url, &schema, 1).await.unwrap();
    for id in &orgs {
        let id: tollgate::domain::ids::OrganizationId = id.parse().unwrap();
        let local = store
            .get::<tollgate::domain::organization::Organization>(&id.key())
            .await
            .unwrap()
            .unwrap();
        let copied = pg
            .get::<tollgate::domain::organization::Organization>(&id.key())
            .await
            .unwrap()
            .unwrap();
        assert_eq!((copied.rev, copied.value), (local.rev, local.value));
    }
    drop(store);
    // Only into an empty schema: a second copy is refused and changes nothing.
    let out = cli(
        root,
        &root.join("data"),
        &["storage", "copy", "--to", &url, "--schema", &schema],
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("an empty schema"), "{}", text(&out));
}

#[actix_web::test]
async fn compact_rewrites_a_stopped_store_that_keeps_every_record_and_refuses_a_running_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let data = root.join("data");
    std::fs::create_dir_all(&data).unwrap();
    // A store created uncompressed, as every store before this build.
    let server = Server::start_with(
        root,
        "server.log",
        &[("TOLLGATE__STORAGE__COMPRESSION", "false")],
    )
    .await;
    let token = std::fs::read_to_string(data.join(TOKEN_FILE))
        .unwrap()
        .trim()
        .to_string();
    let mut ids = Vec::new();
    for n in 0..20 {
        let (status, body, _) = server.create(&token, &format!("org-{n}")).await.unwrap();
        assert_eq!(status, 201, "{body}");
        ids.push(body["id"].as_str().unwrap().to_string());
    }
    // Refused while the service holds the store.
    let out = cli(root, &data, &["compact"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("still running"), "{}", text(&out));
    drop(server);

    std::fs::write(data.join("keep.txt"), "not sled's").unwrap();
    let out = cli(root, &data, &["compact"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("(compressed)"), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(data.join("keep.txt")).unwrap(),
        "not sled's"
    );
    let out = cli(root, &data, &["check"]);
    assert!(out.status.success(), "check after compact: {}", text(&out));

    let server = Server::start(root, "server-2.log").await;
    for id in &ids {
        assert_eq!(server.get_org(&token, id).await, Some(200), "{id} lost");
    }
    let (status, body, _) = server.create(&token, "after-compact").await.unwrap();
    assert_eq!(status, 201, "{body}");
}
