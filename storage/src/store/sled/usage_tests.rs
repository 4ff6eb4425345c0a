//! The usage store on the embedded engine: what only it has (its durability waits for the
//! group-commit flush, its data survives a reopen). The contract itself is tested on both
//! engines in `store/usage_tests.rs`.

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::store::usage::tests::{add, agg, distinct, event, window, window_of};
use crate::store::usage::WindowState;
use crate::{Store, StoreConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingest_and_close_return_only_once_durable() {
    let store = Store::temporary().unwrap();
    let hooks = store.embedded().test_hooks();
    hooks.stall.store(true, Ordering::SeqCst);
    let s = store.clone();
    let mut ingest =
        tokio::spawn(async move { s.ingest(vec![event("a", vec![add("x", 1.0)])], 1).await });
    let s = store.clone();
    let mut close = tokio::spawn(async move { s.close_window(b"w", b"t", 1).await });
    // Not acknowledged while the flush does not happen (visible, but not durable yet).
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut ingest)
            .await
            .is_err()
    );
    assert!(tokio::time::timeout(Duration::from_millis(100), &mut close)
        .await
        .is_err());
    store
        .embedded()
        .test_hooks()
        .stall
        .store(false, Ordering::SeqCst);
    let inserted = tokio::time::timeout(Duration::from_secs(10), ingest)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(inserted.unwrap(), vec![true]);
    let closed = tokio::time::timeout(Duration::from_secs(10), close)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(closed.unwrap(), WindowState::empty(0, 1));
    assert!(store.is_durable(store.last_committed()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_data_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::new(dir.path());
    {
        let store = Store::open(&config).unwrap();
        let got = store
            .ingest(
                vec![
                    event(
                        "1",
                        vec![
                            add("a", 2.0),
                            distinct("d", "m"),
                            window("w", 1.0, 5, Some("m")),
                        ],
                    ),
                    event("2", vec![add("a", 3.0), window("w", 4.0, 0, Some("n"))]),
                ],
                10,
            )
            .await
            .unwrap();
        assert_eq!(got, vec![true, true]);
        store.close_window(b"w", b"renewal", 20).await.unwrap();
    }
    let store = Store::open(&config).unwrap();
    assert_eq!(
        store.usage_event(b"e/1").await.unwrap(),
        Some(b"value of 1".to_vec())
    );
    let a = agg(&store, "a").await.unwrap();
    assert_eq!((a.n, a.sum, a.min, a.max), (2, 5.0, 2.0, 3.0));
    assert_eq!(agg(&store, "d").await.unwrap().n, 1);
    assert_eq!(
        window_of(&store, "w").await.unwrap(),
        WindowState::empty(1, 20)
    );
    // The same close again answers the closed window; the events are still known.
    let closed = store.close_window(b"w", b"renewal", 30).await.unwrap();
    assert_eq!(
        (
            closed.window,
            closed.consumed.n,
            closed.distinct,
            closed.credited
        ),
        (0, 2, 2, 5)
    );
    let got = store
        .ingest(
            vec![
                event("2", vec![add("a", 100.0)]),
                event("3", vec![distinct("d", "m")]),
            ],
            40,
        )
        .await
        .unwrap();
    assert_eq!(got, vec![false, true]);
    assert_eq!(agg(&store, "a").await.unwrap().n, 2);
    assert_eq!(agg(&store, "d").await.unwrap().n, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_flush_fails_the_ingest_and_every_later_one() {
    let store = Store::temporary().unwrap();
    *store.embedded().test_hooks().fail_next.lock().unwrap() = Some("disk full".into());
    let first = store.ingest(vec![event("a", vec![add("x", 1.0)])], 1).await;
    assert!(first.is_err(), "{first:?}");
    let later = store.ingest(vec![event("b", vec![add("x", 1.0)])], 1).await;
    assert!(
        matches!(later, Err(crate::StorageError::Unavailable(_))),
        "{later:?}"
    );
}
