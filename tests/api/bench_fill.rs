//! The big-shop generator (`tollgate bench-fill`, `tollgate::bench_fill`): a generated
//! shop holds what production makes, passes `check`, and its backup restores to the same
//! records; `tollgate storage stats` reports it.

use std::process::Output;
use std::time::Duration;

use tollgate::config::{Settings, StorageBackend};
use tollgate_storage::{StorageStats, Store};

use crate::backup::text;
use crate::helpers::spawn_app_with;

/// The settings of a generated shop in `dir` (as the binary reads them from `env`).
fn settings_in(dir: &std::path::Path) -> Settings {
    Settings::for_tests(dir)
}

/// Runs the binary with `args` and `env` in `dir` (no configuration file: the defaults,
/// e-mail written to files), at most 10 minutes.
fn cli(dir: &std::path::Path, env: &[(String, String)], args: &[&str]) -> Output {
    let mut all: Vec<(&str, &str)> = vec![("TOLLGATE__LOG__LEVEL", "warn")];
    all.extend(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    crate::backup::cli_with(dir, dir, &all, args, Duration::from_secs(600))
}

/// Fills the store of `settings` (in `dir`, with `env`) through `tollgate bench-fill`,
/// checks it and reads `tollgate storage stats`: answers its stats.
fn fill_and_check_env(dir: &std::path::Path, env: &[(String, String)]) -> String {
    let out = cli(
        dir,
        env,
        &[
            "bench-fill",
            "--sales",
            "300",
            "--months",
            "3",
            "--chunk",
            "100",
            "--seed",
            "5",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    // The report's line (the log may share standard output).
    let report = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.starts_with("generated "))
        .unwrap_or_default()
        .to_string();
    // "generated 300 sales (C customers, S subscriptions, R renewals, F refunds,
    // X cancellations; P records purged or slimmed by retention) in …"
    let n: Vec<u64> = report
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(report.starts_with("generated 300 sales ("), "{report}");
    let (customers, subscriptions, renewals, refunds, cancellations) =
        (n[1], n[2], n[3], n[4], n[5]);
    assert!(customers < 300, "some buyers return: {report}");
    assert!(subscriptions > 0 && renewals > 0, "{report}");
    assert!(refunds > 0 && cancellations > 0, "{report}");
    // The daily retention pass ran on the generator's clock (at least the bodies of the
    // e-mail sent more than a day before the end were emptied).
    assert!(n[6] > 0, "{report}");
    let out = cli(dir, env, &["storage", "stats"]);
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).to_string()
}

async fn fill_and_check(settings: &Settings, env: &[(String, String)]) -> StorageStats {
    let stats_text = fill_and_check_env(&settings.storage.data_dir, env);
    assert!(stats_text.contains("orders: "), "{stats_text}");
    assert!(stats_text.contains("data_dir mail: "), "{stats_text}");
    let config = settings.storage.store_config();
    let before = {
        let store = Store::connect(&config).await.unwrap();
        let lines = tollgate::admin::check(&store, false).await.unwrap();
        let (text, clean) = tollgate::admin::describe(&lines);
        assert!(clean, "{text}");
        store.storage_stats().await.unwrap()
    };
    // What production makes: every purchase's records, its events and their deliveries
    // (delivered), the e-mails (sent), the dashboard's counters.
    for collection in [
        "checkout",
        "customer",
        "order",
        "license_key",
        "subscription",
        "refund",
        "webhook_event",
        "webhook_delivery",
        "mail_message",
        "stats_sales_day",
    ] {
        assert!(
            before.records_of(collection) > 0,
            "no {collection}: {:?}",
            before.lines()
        );
    }
    assert_eq!(before.records_of("checkout"), 300);
    // Every event was delivered to the receiver: none is left pending.
    let pending: u64 = before
        .areas
        .iter()
        .filter(|a| a.area == "index" || a.area == "idx")
        .flat_map(|a| a.groups.iter())
        .filter(|g| g.name == "webhook_event_pending")
        .map(|g| g.keys)
        .sum();
    assert_eq!(pending, 0, "{:?}", before.lines());
    // Renewals are orders too.
    assert!(before.records_of("order") > 300);
    before
}

/// Backs the embedded store `settings` names up through the service and restores the
/// backup into an empty data directory: answers the restored copy's stats.
async fn backup_and_restore(dir: tempfile::TempDir, settings: &Settings) -> StorageStats {
    // A backup through the running service, restored into an empty data directory.
    let mut serving = settings.clone();
    serving.jobs.sweep_interval_secs = 3600;
    serving.retention.interval_secs = 3600;
    let app = spawn_app_with(dir, serving, tollgate_actors::SystemClock::shared()).await;
    let backups = tempfile::tempdir().unwrap();
    tollgate::admin::backup_to(&app.address, &app.token, backups.path())
        .await
        .unwrap();
    drop(app);
    let target = tempfile::tempdir().unwrap();
    let restored_config = Settings::for_tests(target.path()).storage.store_config();
    tollgate::admin::restore_from(backups.path(), &restored_config)
        .await
        .unwrap();
    let restored = Store::open(&restored_config).unwrap();
    let lines = tollgate::admin::check(&restored, false).await.unwrap();
    let (text, clean) = tollgate::admin::describe(&lines);
    assert!(clean, "{text}");
    restored.storage_stats().await.unwrap()
}

/// The records, by collection: how many and their bytes (but the personal access tokens',
/// whose last use the backup's own request records).
fn records(stats: &StorageStats) -> Vec<(String, u64, u64)> {
    let mut out: Vec<(String, u64, u64)> = stats
        .areas
        .iter()
        .filter(|a| a.area == "records")
        .flat_map(|a| a.groups.iter())
        .filter(|g| g.name != "pat")
        .map(|g| (g.name.clone(), g.keys, g.value_bytes))
        .collect();
    out.sort();
    out
}

#[actix_web::test]
async fn a_generated_shop_passes_check_and_its_backup_restores_the_same_records() {
    let dir = tempfile::tempdir().unwrap();
    let settings = settings_in(dir.path());
    let data = dir.path().to_path_buf();
    let before = fill_and_check(&settings, &[]).await;
    // The e-mails were written as files beside the store.
    assert!(tollgate_storage::bytes_under(&data.join("mail")) > 0);
    let after = backup_and_restore(dir, &settings).await;
    assert_eq!(records(&before), records(&after));
    assert_eq!(before.engine, "embedded");
    assert!(before.on_disk > 0);
}

#[actix_web::test]
async fn a_generated_shop_on_postgresql_passes_check_and_reports_its_tables() {
    let Some(db) = tollgate_storage::testing::fresh_schema("bench_fill") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut settings = settings_in(dir.path());
    settings.storage.backend = StorageBackend::Postgres;
    settings.storage.url = db.url.clone().into();
    settings.storage.schema = db.schema.clone();
    let env = [
        (
            "TOLLGATE__STORAGE__BACKEND".to_string(),
            "postgres".to_string(),
        ),
        ("TOLLGATE__STORAGE__URL".to_string(), db.url.clone()),
        ("TOLLGATE__STORAGE__SCHEMA".to_string(), db.schema.clone()),
    ];
    let before = fill_and_check(&settings, &env).await;
    assert_eq!(before.engine, "postgres");
    // PostgreSQL's tables, by heap, index and TOAST bytes.
    let table = |name: &str| before.tables.iter().find(|t| t.table == name).cloned();
    let records_table = table("records").expect("the records table");
    assert!(records_table.heap_bytes > 0 && records_table.index_bytes > 0);
    assert!(table("idx").is_some_and(|t| t.total_bytes > 0));
    assert_eq!(
        before.on_disk,
        before.tables.iter().map(|t| t.total_bytes).sum::<u64>()
    );
    // The records by collection, as on the embedded store (PostgreSQL is backed up with
    // pg_dump: `tollgate backup` is the embedded store's).
    assert_eq!(before.records_of("checkout"), 300);
    drop(dir);
}
