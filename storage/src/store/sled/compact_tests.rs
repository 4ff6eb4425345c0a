//! `tollgate compact` on the embedded engine: the rewrite keeps every key and the feed's
//! numbering, turns compression on, and a swap interrupted at any step is finished (or an
//! unfinished copy thrown away) when the store opens next.

use super::compact::{persisted, recover};
use crate::store_tests::{item, Fed, Item};
use crate::*;

fn config(dir: &std::path::Path, compression: bool) -> StoreConfig {
    let mut c = StoreConfig::new(dir);
    c.compression = compression;
    c
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A store in `dir` holding `n` items (tenant 1), one meta key and two feed entries.
fn fill(dir: &std::path::Path, compression: bool, n: u64) {
    runtime().block_on(async {
        let store = Store::open(&config(dir, compression)).unwrap();
        for chunk in (0..n).collect::<Vec<_>>().chunks(500) {
            let mut b = Batch::new();
            for &i in chunk {
                b.put(&item(i, 1, &format!("item {i}"), i as i64), Expect::Absent)
                    .unwrap();
            }
            store.commit(&b).await.unwrap();
        }
        let mut b = Batch::new();
        b.put_meta("secret", vec![7; 3]);
        b.put(
            &Fed {
                id: 1,
                status: "active".into(),
                hits: 0,
            },
            Expect::Absent,
        )
        .unwrap();
        store.commit_durable(&b).await.unwrap();
        let mut b = Batch::new();
        b.put(
            &Fed {
                id: 1,
                status: "revoked".into(),
                hits: 0,
            },
            Expect::Rev(1),
        )
        .unwrap();
        store.commit_durable(&b).await.unwrap();
    });
}

/// Asserts the store in `dir` holds what [`fill`] wrote, and gives its feed's numbers.
fn assert_filled(dir: &std::path::Path, compression: bool, n: u64) -> Vec<u64> {
    runtime().block_on(async {
        let store = Store::open(&config(dir, compression)).unwrap();
        assert_eq!(store.count("item_by_rank", &[1]).await.unwrap(), n);
        let last = (n - 1).to_be_bytes();
        let got = store.get::<Item>(&last).await.unwrap().unwrap();
        assert_eq!(got.value.name, format!("item {}", n - 1));
        assert_eq!(store.get_meta("secret").await.unwrap(), Some(vec![7; 3]));
        let report = store.verify_indexes::<Item>().await.unwrap();
        assert!(
            report.is_clean(),
            "indexes damaged after compaction: {report:?}"
        );
        store
            .changes(None, 100)
            .await
            .unwrap()
            .iter()
            .map(|c| c.seq)
            .collect()
    })
}

#[test]
fn compaction_keeps_every_key_compresses_and_numbers_the_feed_after_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path(), false, 3_000);
    // Churn: every item rewritten twice, as counters and feeds do to a live store.
    runtime().block_on(async {
        let store = Store::open(&config(dir.path(), false)).unwrap();
        for round in 0..2 {
            for chunk in (0..3_000u64).collect::<Vec<_>>().chunks(500) {
                let mut b = Batch::new();
                for &i in chunk {
                    b.put(
                        &item(i, 1, &format!("item {i}"), i as i64),
                        Expect::Rev(1 + round),
                    )
                    .unwrap();
                }
                store.commit(&b).await.unwrap();
            }
        }
        store.flush_blocking().unwrap();
    });
    let seqs_before = assert_filled(dir.path(), false, 3_000);
    assert_eq!(seqs_before.len(), 2);
    assert_eq!(persisted(dir.path()).map(|p| p.0), Some(false));

    let report = Store::compact(&config(dir.path(), true)).unwrap();
    assert!(report.compressed);
    assert!(report.entries > 3_000 * 4, "{report:?}");
    assert!(
        report.after_bytes < report.before_bytes,
        "a rewrite of a churned store is smaller: {report:?}"
    );
    assert_eq!(persisted(dir.path()).map(|p| p.0), Some(true));
    for leftover in [".compact-new", ".compact-old", ".compact-swap"] {
        assert!(
            !dir.path().join(leftover).exists(),
            "{leftover} left behind"
        );
    }
    assert_eq!(assert_filled(dir.path(), true, 3_000), seqs_before);

    // New feed entries are numbered after every number the old store gave.
    runtime().block_on(async {
        let store = Store::open(&config(dir.path(), true)).unwrap();
        let mut b = Batch::new();
        b.delete::<Fed>(&1u64.to_be_bytes(), Expect::Rev(2));
        store.commit_durable(&b).await.unwrap();
        let seqs: Vec<u64> = store
            .changes(None, 100)
            .await
            .unwrap()
            .iter()
            .map(|c| c.seq)
            .collect();
        assert_eq!(seqs.len(), 3);
        assert!(seqs[2] > seqs_before[1], "{seqs:?}");
    });
}

#[test]
fn a_store_opened_with_another_compression_keeps_its_own() {
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path(), false, 10);
    // Configured compressed, created not: it opens (as it was created) instead of failing.
    assert_filled(dir.path(), true, 10);
    assert_eq!(persisted(dir.path()).map(|p| p.0), Some(false));
}

#[test]
fn compaction_of_a_directory_without_a_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = Store::compact(&config(dir.path(), true)).unwrap_err();
    assert!(err.to_string().contains("no store"), "{err}");
}

/// A data directory holding store "old" (10 items) and, in `.compact-new`, store "new"
/// (20 items), with other files of the service beside them.
fn interrupted(dir: &std::path::Path) {
    fill(dir, false, 10);
    fill(&dir.join(".compact-new"), true, 20);
    std::fs::create_dir_all(dir.join("mail")).unwrap();
    std::fs::write(dir.join("mail").join("m.eml"), "kept").unwrap();
}

fn move_in(dir: &std::path::Path, name: &str) {
    std::fs::rename(dir.join(".compact-new").join(name), dir.join(name)).unwrap();
}

#[test]
fn an_unfinished_copy_is_thrown_away() {
    let dir = tempfile::tempdir().unwrap();
    interrupted(dir.path());
    recover(dir.path()).unwrap();
    assert!(!dir.path().join(".compact-new").exists());
    assert_filled(dir.path(), false, 10);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("mail/m.eml")).unwrap(),
        "kept"
    );
}

#[test]
fn a_swap_interrupted_while_moving_the_old_files_out_is_finished() {
    let dir = tempfile::tempdir().unwrap();
    interrupted(dir.path());
    std::fs::write(dir.path().join(".compact-swap"), "out").unwrap();
    // Part of the old store had moved out already.
    std::fs::create_dir_all(dir.path().join(".compact-old")).unwrap();
    std::fs::rename(
        dir.path().join("conf"),
        dir.path().join(".compact-old/conf"),
    )
    .unwrap();
    // Opening the store finishes the swap.
    assert_filled(dir.path(), true, 20);
    assert!(!dir.path().join(".compact-swap").exists());
    assert!(!dir.path().join(".compact-old").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("mail/m.eml")).unwrap(),
        "kept"
    );
}

#[test]
fn a_swap_interrupted_while_moving_the_new_files_in_is_finished() {
    let dir = tempfile::tempdir().unwrap();
    interrupted(dir.path());
    std::fs::create_dir_all(dir.path().join(".compact-old")).unwrap();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name == "conf" || name == "db" || name == "blobs" || name.starts_with("snap.") {
            std::fs::rename(
                dir.path().join(&name),
                dir.path().join(".compact-old").join(&name),
            )
            .unwrap();
        }
    }
    std::fs::write(dir.path().join(".compact-swap"), "in").unwrap();
    move_in(dir.path(), "conf");
    assert_filled(dir.path(), true, 20);
    assert!(!dir.path().join(".compact-new").exists());
}

/// Values shorter and longer than what sled stores raw (`vendor/sled`'s `RAW_BELOW`,
/// 512 bytes) and sled's own page fragments: written with compression on, read back after
/// the store is closed and opened again (from the file, not the cache).
#[test]
fn values_of_every_size_read_back_from_a_compressed_store() {
    let dir = tempfile::tempdir().unwrap();
    let sizes = [
        0usize, 1, 100, 400, 500, 511, 512, 513, 600, 2_000, 9_000, 70_000,
    ];
    let named = |n: usize| -> String {
        (0..n)
            .map(|i| char::from(b'a' + ((i * 7 + n) % 26) as u8))
            .collect()
    };
    runtime().block_on(async {
        let store = Store::open(&config(dir.path(), true)).unwrap();
        for (i, n) in sizes.iter().enumerate() {
            let mut b = Batch::new();
            b.put(&item(i as u64, 1, &named(*n), 0), Expect::Absent)
                .unwrap();
            store.commit_durable(&b).await.unwrap();
        }
    });
    runtime().block_on(async {
        let store = Store::open(&config(dir.path(), true)).unwrap();
        for (i, n) in sizes.iter().enumerate() {
            let got = store
                .get::<Item>(&(i as u64).to_be_bytes())
                .await
                .unwrap()
                .expect("the item");
            assert_eq!(got.value.name, named(*n), "{n} bytes");
        }
        assert!(store.verify_indexes::<Item>().await.unwrap().is_clean());
    });
}
