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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_queued_behind_the_writer_go_in_one_transaction() {
    let store = Store::temporary().unwrap();
    let embedded = store.embedded().clone();
    // The gate every commit shares, held on a thread of its own as a snapshot would.
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let e = embedded.clone();
    let holder = std::thread::spawn(move || {
        let _gate = e.hold_gate();
        held_tx.send(()).unwrap();
        let _ = release_rx.recv();
    });
    held_rx.recv().unwrap();
    // The first call becomes the writer, takes its own work and waits for the gate.
    let s = store.clone();
    let first =
        tokio::spawn(async move { s.ingest(vec![event("first", vec![add("g", 1.0)])], 1).await });
    let settled = |want: usize| {
        let e = embedded.clone();
        async move {
            for _ in 0..1000 {
                let (_, queued, busy) = e.usage_queue();
                if busy && queued == want {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            panic!("the queue never held {want} calls");
        }
    };
    settled(0).await;
    // 49 more calls queue behind it (every key twice across them).
    let mut calls = Vec::new();
    for c in 0..49u32 {
        let s = store.clone();
        calls.push(tokio::spawn(async move {
            let events = vec![
                event(&format!("{c}"), vec![add("g", 1.0)]),
                event(&format!("{}", (c + 1) % 49), vec![add("g", 1.0)]),
            ];
            s.ingest(events, 2).await
        }));
    }
    settled(49).await;
    release_tx.send(()).unwrap();
    holder.join().unwrap();
    assert_eq!(first.await.unwrap().unwrap(), vec![true]);
    let mut inserted = 0;
    for (c, call) in calls.into_iter().enumerate() {
        let got = call.await.unwrap().unwrap();
        // In queue order each call's first key is new unless the call before it in the
        // turn brought it; at least one of each pair counts, none twice.
        assert_eq!(got.len(), 2, "call {c}");
        inserted += got.iter().filter(|x| **x).count();
    }
    assert_eq!(inserted, 49);
    // One turn for the first call, one for the 49 queued behind it.
    assert_eq!(embedded.usage_queue(), (2, 0, false));
    assert_eq!(agg(&store, "g").await.unwrap().n, 50);
}
