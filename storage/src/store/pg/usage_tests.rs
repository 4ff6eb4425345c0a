//! The usage store on PostgreSQL across nodes: two [`Store`] handles (two pools, as two
//! nodes) on one schema receive the same events at once, and each event counts once.
//! The contract itself is tested on both engines in `store/usage_tests.rs`.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::store::usage::tests::{add, distinct, window};
use crate::store::usage::{Agg, Delta, IngestEvent};
use crate::store::Engine;
use crate::Store;

/// Two nodes on one fresh schema; `None` (skipped) without a test database.
async fn two_nodes(test: &str) -> Option<(Store, Store, crate::testing::Dropper)> {
    let schema = crate::testing::fresh_schema(test)?;
    let a = Store::postgres(&schema.url, &schema.schema, 8)
        .await
        .unwrap();
    let b = Store::postgres(&schema.url, &schema.schema, 8)
        .await
        .unwrap();
    Some((a, b, schema))
}

/// Transactions run again, and transactions committed, by `store`'s usage task.
fn counts(store: &Store) -> (u64, u64) {
    match &store.engine {
        Engine::Postgres(pg) => pg.usage_counts(),
        Engine::Embedded(_) => (0, 0),
    }
}

fn retries(store: &Store) -> u64 {
    counts(store).0
}

/// Event `i` of the exactly-once test: its key derived from `i`, values that sum exactly,
/// hot rows every event shares (the total, the distinct count) and cooler ones.
fn event(i: u32) -> IngestEvent {
    IngestEvent {
        key: format!("ev/{i:05}").into_bytes(),
        value: i.to_be_bytes().to_vec(),
        index: vec![format!("ix/{i:05}").into_bytes()],
        deltas: vec![
            add("agg/total", f64::from(i % 97)),
            add(&format!("agg/c{}", i % 10), f64::from(i % 13) - 6.0),
            distinct("agg/users", &format!("user-{}", i % 1234)),
            window(
                &format!("win/{:02}", i % 50),
                f64::from(i % 11),
                2,
                Some(&format!("{}", i % 7)),
            ),
        ],
    }
}

const EVENTS: u32 = 10_000;
const BATCH: usize = 100;

/// Everything a store holds of the test's rows.
async fn contents(
    store: &Store,
) -> (
    Vec<(Vec<u8>, Agg)>,
    Vec<Vec<u8>>,
    Vec<(Vec<u8>, crate::store::usage::WindowState)>,
    usize,
) {
    let aggs = store.aggregates(b"agg/", b"agg0").await.unwrap();
    let members = store.members(b"agg/", b"agg0").await.unwrap();
    let windows = store.windows(b"win/", b"win0").await.unwrap();
    let index = store
        .usage_index(b"ix/", b"ix0", crate::Direction::Asc, 100_000)
        .await
        .unwrap();
    (aggs, members, windows, index.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_sending_the_same_events_at_once_count_each_once() {
    let Some((a, b, _schema)) = two_nodes("usage_exactly_once").await else {
        return;
    };
    // What one send makes, on the embedded store.
    let reference = Store::temporary().unwrap();
    let all: Vec<IngestEvent> = (0..EVENTS).map(event).collect();
    for chunk in all.chunks(BATCH) {
        reference.ingest(chunk.to_vec(), 1).await.unwrap();
    }
    // Both nodes send every batch, all batches at once.
    let mut tasks = Vec::new();
    for node in [a.clone(), b.clone()] {
        for chunk in all.chunks(BATCH) {
            let node = node.clone();
            let chunk = chunk.to_vec();
            tasks.push(tokio::spawn(async move {
                let keys: Vec<Vec<u8>> = chunk.iter().map(|e| e.key.clone()).collect();
                (keys, node.ingest(chunk, 1).await)
            }));
        }
    }
    let mut inserted: BTreeMap<Vec<u8>, u32> = BTreeMap::new();
    for t in tasks {
        let (keys, got) = t.await.unwrap();
        let got = got.unwrap_or_else(|e| panic!("an ingest failed: {e}"));
        for (k, new) in keys.into_iter().zip(got) {
            if new {
                *inserted.entry(k).or_default() += 1;
            }
        }
    }
    assert_eq!(inserted.len(), EVENTS as usize);
    assert!(
        inserted.values().all(|&n| n == 1),
        "an event inserted twice"
    );
    let expected = contents(&reference).await;
    for node in [&a, &b] {
        let got = contents(node).await;
        assert_eq!(got.0, expected.0, "aggregates");
        assert_eq!(got.1, expected.1, "members");
        assert_eq!(got.2, expected.2, "windows");
        assert_eq!(got.3, EVENTS as usize, "index keys");
    }
    let users = expected
        .0
        .iter()
        .find(|(k, _)| k == b"agg/users")
        .unwrap()
        .1;
    assert_eq!(users.n, 1234);
    // No transaction was aborted (deadlock, serialization) and run again, and each
    // node gathered its 100 calls into fewer transactions.
    let (ca, cb) = (counts(&a), counts(&b));
    eprintln!("usage exactly once: node a {ca:?}, node b {cb:?} (retries, transactions)");
    assert_eq!((ca.0, cb.0), (0, 0));
    assert!(ca.1 < 100 && cb.1 < 100, "{ca:?} {cb:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_closing_and_ingesting_at_once_put_each_event_in_one_window() {
    let Some((a, b, _schema)) = two_nodes("usage_windows_nodes").await else {
        return;
    };
    let a = Arc::new(a);
    let b = Arc::new(b);
    let mut ingests = Vec::new();
    let mut closes = Vec::new();
    for round in 0..10u32 {
        for node in [a.clone(), b.clone()] {
            let events: Vec<IngestEvent> = (0..50u32)
                .map(|i| IngestEvent {
                    key: format!("w/{round}/{i}").into_bytes(),
                    value: Vec::new(),
                    index: Vec::new(),
                    deltas: vec![Delta::Window {
                        key: b"the window".to_vec(),
                        agg: Agg::one(1.0),
                        credit: 1,
                        rollover_credit: 0,
                        member: None,
                    }],
                })
                .collect();
            let sender = node.clone();
            ingests.push(tokio::spawn(async move { sender.ingest(events, 5).await }));
            // Both nodes close with the round's token: one close per round.
            let token = format!("round {round}");
            closes.push(tokio::spawn(async move {
                node.close_window(b"the window", token.as_bytes(), 6).await
            }));
        }
    }
    let mut total_inserted = 0;
    for t in ingests {
        total_inserted += t.await.unwrap().unwrap().iter().filter(|x| **x).count();
    }
    let mut by_window = BTreeMap::new();
    for t in closes {
        let closed = t.await.unwrap().unwrap();
        by_window.insert(closed.window, closed);
    }
    let open = window_state(&a).await;
    let counted: i64 = by_window.values().map(|c| c.consumed.n).sum::<i64>() + open.consumed.n;
    // Both nodes send each round's events: each counts once, in one window.
    assert_eq!(total_inserted, 500);
    assert_eq!(counted, 500);
    assert!(by_window.values().all(|c| c.credited == c.consumed.n));
    assert_eq!(open.window, by_window.len() as u64);
    assert!(by_window.len() <= 20);
    assert_eq!((retries(&a), retries(&b)), (0, 0));
}

async fn window_state(store: &Store) -> crate::store::usage::WindowState {
    store
        .windows(b"the window", b"the window\0")
        .await
        .unwrap()
        .pop()
        .unwrap()
        .1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_lost_half_way_runs_again_and_answers_from_the_one_that_committed() {
    let Some((store, _schema)) = crate::testing::store("usage_retry").await else {
        return;
    };
    let Engine::Postgres(pg) = &store.engine else {
        unreachable!()
    };
    store.ingest(vec![event(1), event(2)], 1).await.unwrap();
    pg.usage
        .fail_next
        .store(true, std::sync::atomic::Ordering::SeqCst);
    // The first attempt inserted events 2 and 3 and was dropped: the second decides anew.
    let got = store
        .ingest(vec![event(2), event(3), event(3)], 1)
        .await
        .unwrap();
    assert_eq!(got, vec![false, true, false]);
    assert_eq!(counts(&store).0, 1);
    let total = store
        .aggregates(b"agg/total", b"agg/total\0")
        .await
        .unwrap();
    assert_eq!(total[0].1.n, 3);
    let index = store
        .usage_index(b"ix/", b"ix0", crate::Direction::Asc, 10)
        .await
        .unwrap();
    assert_eq!(index.len(), 3);
}

/// Node B ingests, guarded by the generation it read, while node A bumps it: once the
/// bump returned, no ingest computed for the old generation commits any more (those in
/// flight before it committed first), and B's next ones see the new generation.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_bump_on_one_node_orders_the_guarded_ingests_of_another() {
    use crate::store::usage::{Guard, Guarded};
    let Some((a, b, _schema)) = two_nodes("usage_generation").await else {
        return;
    };
    let b = Arc::new(b);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut tasks = Vec::new();
    for t in 0..8u32 {
        let (b, stop) = (b.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = 0u32;
            let mut generation = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let e = IngestEvent {
                    key: format!("ev/{t}/{i}").into_bytes(),
                    value: Vec::new(),
                    index: Vec::new(),
                    deltas: vec![add(&format!("at/{generation}"), 1.0)],
                };
                let guard = Guard {
                    key: b"gen".to_vec(),
                    generation,
                };
                match b.ingest_guarded(vec![e], 1, guard).await.unwrap() {
                    Guarded::Inserted(_) => i += 1,
                    Guarded::Stale(now) => generation = now,
                }
            }
            i
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(a.bump_generation(b"gen", vec![]).await.unwrap(), 1);
    let at_bump = a.aggregates(b"at/0", b"at/0\0").await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut sent = 0;
    for t in tasks {
        sent += t.await.unwrap();
    }
    let old = a.aggregates(b"at/0", b"at/0\0").await.unwrap();
    let new = a.aggregates(b"at/1", b"at/1\0").await.unwrap();
    assert_eq!(
        old, at_bump,
        "an ingest of generation 0 committed after the bump"
    );
    assert!(!new.is_empty(), "no ingest after the bump");
    assert_eq!(old[0].1.n + new[0].1.n, i64::from(sent));
}
