//! Test support shared by the workspace's PostgreSQL tests (the storage crate's, the
//! actors', the server's): the test database and a fresh schema per test. Not part of the
//! API. The database is `TOLLGATE_TEST_DATABASE_URL`, or the `PG*` variables `pg_virtualenv`
//! sets (`.ci/run` runs the suite inside one); without one a test says "skipped" on a
//! developer machine and fails under `CI=true`.
#![allow(clippy::panic)] // test support: a database that cannot be reached fails the test

use crate::Store;

/// The test database's URL, if there is one.
pub fn database_url() -> Option<String> {
    if let Ok(url) = std::env::var("TOLLGATE_TEST_DATABASE_URL") {
        return Some(url);
    }
    let host = std::env::var("PGHOST").ok()?;
    let var = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
    let password = std::env::var("PGPASSWORD").ok();
    Some(format!(
        "postgres://{}{}@{}:{}/{}",
        var("PGUSER", "postgres"),
        password.map(|p| format!(":{p}")).unwrap_or_default(),
        host,
        var("PGPORT", "5432"),
        var("PGDATABASE", "postgres"),
    ))
}

/// The name of a fresh schema on the test database for `test`, dropped when the
/// returned [`Dropper`] is; `None` (skipped) on a developer machine without a
/// database. Under `CI=true` a missing database fails the test.
pub fn fresh_schema(test: &str) -> Option<Dropper> {
    let Some(url) = database_url() else {
        assert!(
            std::env::var("CI").is_err(),
            "CI=true but no database: set TOLLGATE_TEST_DATABASE_URL or run under pg_virtualenv"
        );
        eprintln!("skipped: {test} needs PostgreSQL (TOLLGATE_TEST_DATABASE_URL or PGHOST)");
        return None;
    };
    let schema = format!(
        "t_{}_{:x}",
        test.chars().take(24).collect::<String>(),
        std::process::id() as u64 * 1_000_003 + rand_suffix()
    );
    Some(Dropper { url, schema })
}

/// A [`Store`] over a fresh schema of the test database (see [`fresh_schema`]).
pub async fn store(test: &str) -> Option<(Store, Dropper)> {
    let schema = fresh_schema(test)?;
    let store = Store::postgres(&schema.url, &schema.schema, 8)
        .await
        .unwrap_or_else(|e| panic!("cannot reach the test database at {}: {e}", schema.url));
    assert_eq!(store.engine_name(), "postgres");
    Some((store, schema))
}

/// A connection of its own to the test database (its task runs on the caller's
/// runtime).
pub async fn client(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot reach the test database at {url}: {e}"));
    tokio::spawn(conn);
    client
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0);
    h.finish() % 1_000_000
}

/// Drops a test's schema when the test ends.
pub struct Dropper {
    pub url: String,
    pub schema: String,
}

impl Drop for Dropper {
    fn drop(&mut self) {
        let (url, schema) = (self.url.clone(), self.schema.clone());
        // On its own thread and runtime: the test's runtime may be shutting down.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            if let Ok(rt) = rt {
                rt.block_on(async move {
                    if let Ok((client, conn)) =
                        tokio_postgres::connect(&url, tokio_postgres::NoTls).await
                    {
                        tokio::spawn(conn);
                        let _ = client
                            .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                            .await;
                    }
                });
            }
        })
        .join();
    }
}
