use serde::{Deserialize, Serialize};

use crate::keys::KeyBuf;
use crate::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Item {
    pub(crate) id: u64,
    pub(crate) tenant: u8,
    pub(crate) name: String,
    pub(crate) rank: i64,
}

impl Record for Item {
    const COLLECTION: &'static str = "item";
    const VERSION: u16 = 1;
    const INDEXES: &'static [&'static str] = &["item_by_rank", "item_by_name"];
    const UNIQUES: &'static [&'static str] = &["item_name"];

    fn id_key(&self) -> Vec<u8> {
        self.id.to_be_bytes().to_vec()
    }
    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        codec::encode(self)
    }
    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        match version {
            1 => codec::decode(Self::COLLECTION, version, payload),
            v => Err(codec::unknown_version(Self::COLLECTION, v)),
        }
    }
    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![
            IndexEntry::new(
                "item_by_rank",
                vec![self.tenant],
                KeyBuf::new().i64(self.rank),
            ),
            IndexEntry::new(
                "item_by_name",
                vec![self.tenant],
                KeyBuf::new().str(&self.name),
            ),
        ]
    }
    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![UniqueKey::new(
            "item_name",
            vec![self.tenant],
            self.name.to_lowercase(),
        )]
    }
}

pub(crate) fn item(id: u64, tenant: u8, name: &str, rank: i64) -> Item {
    Item {
        id,
        tenant,
        name: name.into(),
        rank,
    }
}

fn put(store: &Store, i: &Item, expect: Expect) -> Result<Committed, StorageError> {
    let mut b = Batch::new();
    b.put(i, expect)?;
    store.commit(&b)
}

fn ids(page: &Page) -> Vec<u64> {
    page.ids
        .iter()
        .map(|k| u64::from_be_bytes(k.as_slice().try_into().unwrap()))
        .collect()
}

fn page(
    store: &Store,
    index: &'static str,
    tenants: &[Vec<u8>],
    direction: Direction,
    offset: u64,
    limit: u64,
) -> Page {
    store
        .page(&PageQuery {
            index,
            tenants,
            direction,
            offset,
            limit,
        })
        .unwrap()
}

#[test]
fn put_get_and_revisions() {
    let store = Store::temporary().unwrap();
    let a = item(1, 1, "alpha", 5);
    let c = put(&store, &a, Expect::Absent).unwrap();
    assert_eq!(c.revs, vec![1]);
    let got = store.get::<Item>(&a.id_key()).unwrap().unwrap();
    assert_eq!(
        got,
        Stored {
            rev: 1,
            value: a.clone()
        }
    );
    let b = Item {
        rank: 6,
        ..a.clone()
    };
    assert_eq!(put(&store, &b, Expect::Rev(1)).unwrap().revs, vec![2]);
    assert_eq!(store.get::<Item>(&a.id_key()).unwrap().unwrap().rev, 2);
    assert!(store.get::<Item>(&9u64.to_be_bytes()).unwrap().is_none());
}

#[test]
fn conditional_writes_detect_conflicts() {
    let store = Store::temporary().unwrap();
    let a = item(1, 1, "alpha", 5);
    put(&store, &a, Expect::Absent).unwrap();
    assert!(matches!(
        put(&store, &a, Expect::Absent),
        Err(StorageError::Conflict { found: Some(1), .. })
    ));
    assert!(matches!(
        put(&store, &a, Expect::Rev(7)),
        Err(StorageError::Conflict { found: Some(1), .. })
    ));
    let missing = item(2, 1, "beta", 1);
    assert!(matches!(
        put(&store, &missing, Expect::Rev(1)),
        Err(StorageError::Conflict { found: None, .. })
    ));
    // A failed write leaves the record as it was.
    assert_eq!(store.get::<Item>(&a.id_key()).unwrap().unwrap().rev, 1);
}

#[test]
fn a_batch_is_all_or_nothing() {
    let store = Store::temporary().unwrap();
    put(&store, &item(1, 1, "alpha", 1), Expect::Absent).unwrap();
    let mut b = Batch::new();
    b.put(&item(2, 1, "beta", 2), Expect::Absent).unwrap();
    // Same name in the same tenant: violates the unique key, so the whole batch aborts.
    b.put(&item(3, 1, "ALPHA", 3), Expect::Absent).unwrap();
    assert_eq!(
        store.commit(&b),
        Err(StorageError::Unique {
            constraint: "item_name"
        })
    );
    assert!(store.get::<Item>(&2u64.to_be_bytes()).unwrap().is_none());
    assert_eq!(store.count("item_by_rank", &[1]).unwrap(), 1);
    assert!(store.verify_indexes::<Item>().unwrap().is_clean());
}

#[test]
fn unique_keys_are_per_tenant_and_move_with_the_record() {
    let store = Store::temporary().unwrap();
    put(&store, &item(1, 1, "alpha", 1), Expect::Absent).unwrap();
    // Another tenant may use the same name.
    put(&store, &item(2, 2, "alpha", 1), Expect::Absent).unwrap();
    let key = UniqueKey::new("item_name", vec![1], "alpha");
    assert_eq!(
        store.lookup_unique(&key).unwrap(),
        Some(1u64.to_be_bytes().to_vec())
    );
    // Renaming frees the old name.
    put(&store, &item(1, 1, "gamma", 1), Expect::Rev(1)).unwrap();
    assert_eq!(store.lookup_unique(&key).unwrap(), None);
    put(&store, &item(3, 1, "alpha", 1), Expect::Absent).unwrap();
    assert_eq!(
        store.lookup_unique(&key).unwrap(),
        Some(3u64.to_be_bytes().to_vec())
    );
}

#[test]
fn pages_are_sorted_counted_and_offset() {
    let store = Store::temporary().unwrap();
    for n in 0..25u64 {
        let rank = (n as i64 * 7) % 25 - 12; // a permutation of -12..=12
        put(
            &store,
            &item(n, 1, &format!("n{n:02}"), rank),
            Expect::Absent,
        )
        .unwrap();
    }
    put(&store, &item(100, 2, "other", 0), Expect::Absent).unwrap();
    let t1 = vec![vec![1u8]];
    let p = page(&store, "item_by_rank", &t1, Direction::Asc, 0, 10);
    assert_eq!(p.total, 25);
    let all: Vec<Item> = store
        .get_many::<Item>(&page(&store, "item_by_rank", &t1, Direction::Asc, 0, 100).ids)
        .unwrap()
        .into_iter()
        .map(|s| s.value)
        .collect();
    let ranks: Vec<i64> = all.iter().map(|i| i.rank).collect();
    assert_eq!(ranks, (-12..=12).collect::<Vec<_>>());
    assert_eq!(p.ids.len(), 10);
    // Third page of 10 has the last 5.
    let p3 = page(&store, "item_by_rank", &t1, Direction::Asc, 20, 10);
    assert_eq!(p3.ids.len(), 5);
    assert_eq!(p3.total, 25);
    // Descending is the reverse.
    let desc = page(&store, "item_by_name", &t1, Direction::Desc, 0, 3);
    assert_eq!(ids(&desc), vec![24, 23, 22]);
    // Past the end: empty, same total.
    let past = page(&store, "item_by_name", &t1, Direction::Asc, 50, 10);
    assert!(past.ids.is_empty());
    assert_eq!(past.total, 25);
}

#[test]
fn pages_merge_several_tenants() {
    let store = Store::temporary().unwrap();
    for (id, tenant, rank) in [
        (1u64, 1u8, 5i64),
        (2, 2, 1),
        (3, 1, 3),
        (4, 3, 2),
        (5, 2, 4),
    ] {
        put(
            &store,
            &item(id, tenant, &format!("i{id}"), rank),
            Expect::Absent,
        )
        .unwrap();
    }
    let tenants = vec![vec![1u8], vec![2u8]];
    let p = page(&store, "item_by_rank", &tenants, Direction::Asc, 0, 10);
    assert_eq!(ids(&p), vec![2, 3, 5, 1]);
    assert_eq!(p.total, 4);
    let p = page(&store, "item_by_rank", &tenants, Direction::Desc, 1, 2);
    assert_eq!(ids(&p), vec![5, 3]);
}

#[test]
fn updates_and_deletes_maintain_indexes_and_counters() {
    let store = Store::temporary().unwrap();
    put(&store, &item(1, 1, "a", 1), Expect::Absent).unwrap();
    put(&store, &item(2, 1, "b", 2), Expect::Absent).unwrap();
    // Move item 1 to tenant 2 and change its rank.
    put(&store, &item(1, 2, "a", 9), Expect::Rev(1)).unwrap();
    assert_eq!(store.count("item_by_rank", &[1]).unwrap(), 1);
    assert_eq!(store.count("item_by_rank", &[2]).unwrap(), 1);
    let mut b = Batch::new();
    b.delete::<Item>(&2u64.to_be_bytes(), Expect::Rev(1));
    store.commit(&b).unwrap();
    assert_eq!(store.count("item_by_rank", &[1]).unwrap(), 0);
    assert!(store.get::<Item>(&2u64.to_be_bytes()).unwrap().is_none());
    assert!(
        page(&store, "item_by_rank", &[vec![1]], Direction::Asc, 0, 10)
            .ids
            .is_empty()
    );
    assert!(store.verify_indexes::<Item>().unwrap().is_clean());
    // Deleting with a stale revision is refused.
    let mut b = Batch::new();
    b.delete::<Item>(&1u64.to_be_bytes(), Expect::Rev(1));
    assert!(matches!(
        store.commit(&b),
        Err(StorageError::Conflict { .. })
    ));
}

#[test]
fn index_range_reads_a_window() {
    let store = Store::temporary().unwrap();
    for n in 0..10u64 {
        put(
            &store,
            &item(n, 1, &format!("n{n}"), n as i64),
            Expect::Absent,
        )
        .unwrap();
    }
    let from = KeyBuf::new().i64(3).into_vec();
    let to = KeyBuf::new().i64(6).into_vec();
    let got = store
        .index_range("item_by_rank", &[1], &from, Some(&to))
        .unwrap();
    let got: Vec<u64> = got
        .iter()
        .map(|k| u64::from_be_bytes(k.as_slice().try_into().unwrap()))
        .collect();
    assert_eq!(got, vec![3, 4, 5]);
}

#[test]
fn verify_detects_damage_and_rebuild_repairs_it() {
    let store = Store::temporary().unwrap();
    for n in 0..20u64 {
        put(
            &store,
            &item(n, (n % 3) as u8, &format!("n{n}"), n as i64),
            Expect::Absent,
        )
        .unwrap();
    }
    assert!(store.verify_indexes::<Item>().unwrap().is_clean());
    // Damage: drop one index entry, add a stray one, break a counter.
    let some_key = store.inner_index_keys().into_iter().next().unwrap();
    store.inner_remove_index(&some_key);
    store.inner_insert_index(b"item_by_rank\0\x01\x07stray".to_vec());
    store.inner_set_counter(b"item_by_name\0\x01\x00".to_vec(), 99);
    let report = store.verify_indexes::<Item>().unwrap();
    assert_eq!(report.missing, vec![some_key]);
    assert_eq!(report.extra.len(), 1);
    assert!(!report.wrong_counters.is_empty());
    store.rebuild_indexes::<Item>().unwrap();
    assert!(store.verify_indexes::<Item>().unwrap().is_clean());
    assert_eq!(
        page(&store, "item_by_rank", &[vec![0]], Direction::Asc, 0, 100).total,
        7
    );
}

/// How a record lies on disk, whatever its type: key `collection 0 id`, value
/// `[u64 revision][u16 format version][payload]`, big-endian (`codec::seal`). The golden
/// tests of each record type pin its payload and version; this pins what surrounds them.
#[test]
fn a_record_is_stored_in_its_envelope_golden() {
    let store = Store::temporary().unwrap();
    let a = item(1, 2, "ab", -3);
    put(&store, &a, Expect::Absent).unwrap();
    put(&store, &a, Expect::Rev(1)).unwrap();
    let hex = |b: &[u8]| -> String { b.iter().map(|b| format!("{b:02x}")).collect() };
    let rows: Vec<(String, String)> = store
        .inner_records()
        .iter()
        .map(|(k, v)| (hex(k), hex(v)))
        .collect();
    assert_eq!(
        rows,
        vec![(
            // "item" 0, then the id (8 bytes, big-endian).
            "6974656d000000000000000001".to_string(),
            // Revision 2, format version 1, then bincode: id 1, tenant 2, "ab", rank -3.
            "00000000000000020001010202616205".to_string(),
        )]
    );
    assert_eq!(
        store.get::<Item>(&a.id_key()).unwrap(),
        Some(Stored { rev: 2, value: a })
    );
}

#[test]
fn unknown_format_versions_are_refused() {
    assert!(matches!(
        Item::decode(2, &[]),
        Err(StorageError::Codec { version: 2, .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_committed_together_share_one_flush() {
    let store = Store::temporary().unwrap();
    let before = store.flush_count();
    let mut seqs = Vec::new();
    for n in 0..100u64 {
        seqs.push(
            put(&store, &item(n, 1, &format!("n{n}"), 0), Expect::Absent)
                .unwrap()
                .seq,
        );
    }
    // Every write above finished before any waiter registered, so the first flush that
    // starts covers all of them.
    let waits: Vec<_> = seqs.iter().map(|s| store.durable(*s)).collect();
    for w in waits {
        w.await.unwrap();
    }
    let flushes = store.flush_count() - before;
    assert!(
        (1..=2).contains(&flushes),
        "{flushes} flushes for 100 writes"
    );
    // The histograms count every flush once, each in the bucket of the waiters it
    // answered (how many registered before the flush started is up to the scheduler: a
    // wait registered after it finds the write durable and is no waiter).
    let stats = store.flush_stats();
    assert_eq!(stats.sizes.iter().sum::<u64>(), stats.flushes);
    assert_eq!(stats.durations.iter().sum::<u64>(), stats.flushes);
    if stats.flushes == 1 {
        assert_eq!(
            stats.sizes[bucket_of(&FLUSH_SIZE_BOUNDS, stats.waiters_served as f64)],
            1,
            "{stats:?}"
        );
    }
    assert_eq!(bucket_of(&FLUSH_SIZE_BOUNDS, 100.0), 8);
    assert_eq!(bucket_of(&FLUSH_SIZE_BOUNDS, 0.0), 0);
    assert_eq!(bucket_of(&FLUSH_SIZE_BOUNDS, 1000.0), 9);
    // Already durable: resolves without another flush.
    store.durable(seqs[0]).await.unwrap();
    store.read_barrier().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_durable_writers_all_complete() {
    let store = Store::temporary().unwrap();
    let mut tasks = Vec::new();
    for w in 0..32u64 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            for n in 0..20u64 {
                let id = w * 1000 + n;
                let mut b = Batch::new();
                b.put(
                    &item(id, (w % 4) as u8, &format!("w{id}"), n as i64),
                    Expect::Absent,
                )
                .unwrap();
                store.commit_durable(&b).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let total: u64 = (0..4u8)
        .map(|t| store.count("item_by_rank", &[t]).unwrap())
        .sum();
    assert_eq!(total, 640);
    assert!(store.verify_indexes::<Item>().unwrap().is_clean());
}

#[test]
fn on_durable_calls_back_once_per_write_after_its_flush() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{mpsc, Arc};
    let store = Store::temporary().unwrap();
    let called = Arc::new(AtomicU64::new(0));
    let (tx, rx) = mpsc::channel();
    let writers: Vec<_> = (0..8u64)
        .map(|w| {
            let store = store.clone();
            let called = called.clone();
            let tx = tx.clone();
            std::thread::spawn(move || {
                for n in 0..50u64 {
                    let id = w * 1000 + n;
                    let seq = put(&store, &item(id, 1, &format!("c{id}"), 0), Expect::Absent)
                        .unwrap()
                        .seq;
                    let (called, tx, flusher_store) = (called.clone(), tx.clone(), store.clone());
                    store.on_durable(seq, move |flushed| {
                        flushed.unwrap();
                        // Called only once the write's flush is done: a read barrier now
                        // has nothing left to wait for.
                        assert!(matches!(
                            flusher_store.durable(seq),
                            DurableFuture::Wait(None)
                        ));
                        called.fetch_add(1, Ordering::SeqCst);
                        tx.send(seq).unwrap();
                    });
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let mut seen = std::collections::HashSet::new();
    for _ in 0..400 {
        let seq = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        assert!(seen.insert(seq), "called twice for {seq}");
    }
    assert_eq!(called.load(Ordering::SeqCst), 400);
    // Already durable: called at once, on this thread.
    let here = std::thread::current().id();
    let (tx, rx) = mpsc::channel();
    store.on_durable(1, move |r| {
        r.unwrap();
        tx.send(std::thread::current().id()).unwrap();
    });
    assert_eq!(rx.try_recv().unwrap(), here);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_writes_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::new(dir.path());
    {
        let store = Store::open(&config).unwrap();
        let mut b = Batch::new();
        b.put(&item(1, 1, "kept", 3), Expect::Absent).unwrap();
        b.put_meta("secret", vec![1, 2, 3]);
        store.commit_durable(&b).await.unwrap();
    }
    let store = Store::open(&config).unwrap();
    assert_eq!(
        store
            .get::<Item>(&1u64.to_be_bytes())
            .unwrap()
            .unwrap()
            .value
            .name,
        "kept"
    );
    assert_eq!(store.get_meta("secret").unwrap(), Some(vec![1, 2, 3]));
    assert_eq!(store.count("item_by_rank", &[1]).unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn power_durability_flushes_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = StoreConfig::new(dir.path());
    config.durability = DurabilityMode::Power;
    let store = Store::open(&config).unwrap();
    let mut b = Batch::new();
    b.put(&item(1, 1, "p", 3), Expect::Absent).unwrap();
    store.commit_durable(&b).await.unwrap();
    assert!(store.flush_count() >= 1);
}

#[test]
fn a_write_that_keeps_its_keys_takes_the_fast_path_and_stays_conditional() {
    let store = Store::temporary().unwrap();
    let a = item(1, 1, "alpha", 5);
    put(&store, &a, Expect::Absent).unwrap();
    // Same index entries and unique keys: a compare-and-swap on the record.
    let renamed_payload_only = Item { ..a.clone() };
    assert_eq!(
        put(&store, &renamed_payload_only, Expect::Rev(1))
            .unwrap()
            .revs,
        vec![2]
    );
    assert!(matches!(
        put(&store, &renamed_payload_only, Expect::Rev(1)),
        Err(StorageError::Conflict { found: Some(2), .. })
    ));
    // A change of sort key goes through the transaction and keeps the indexes right.
    put(&store, &item(1, 1, "alpha", 9), Expect::Rev(2)).unwrap();
    assert_eq!(store.get::<Item>(&a.id_key()).unwrap().unwrap().rev, 3);
    assert!(store.verify_indexes::<Item>().unwrap().is_clean());
    assert_eq!(store.count("item_by_rank", &[1]).unwrap(), 1);
}

// ---------------------------------------------------------------------------------------
// Failures: deadlines, failed flushes, a panicking flusher, a disk that fills up.
// ---------------------------------------------------------------------------------------

fn store_with_deadline(dir: &std::path::Path, deadline_ms: u64) -> Store {
    let mut config = StoreConfig::new(dir);
    config.flush_deadline = std::time::Duration::from_millis(deadline_ms);
    Store::open(&config).unwrap()
}

/// Waits (bounded) until the store reports `want`.
fn wait_health(store: &Store, want: fn(&StoreHealth) -> bool) -> StoreHealth {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let h = store.health();
        if want(&h) || std::time::Instant::now() > until {
            return h;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_flush_fails_its_waiters_at_the_deadline_and_the_store_goes_on() {
    use std::sync::atomic::Ordering;
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_deadline(dir.path(), 200);
    store.test_hooks().stall.store(true, Ordering::SeqCst);
    let seq = put(&store, &item(1, 1, "a", 0), Expect::Absent)
        .unwrap()
        .seq;
    // A future and a callback, both bounded by the deadline (the test's own timeout is
    // only a guard against a hang).
    let (tx, rx) = std::sync::mpsc::channel();
    store.on_durable(seq, move |r| tx.send(r).unwrap());
    let r = tokio::time::timeout(std::time::Duration::from_secs(10), store.durable(seq))
        .await
        .expect("the wait has a deadline");
    assert!(matches!(r, Err(StorageError::Unavailable(_))), "{r:?}");
    let r = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
    assert!(matches!(r, Err(StorageError::Unavailable(_))), "{r:?}");
    let r = tokio::time::timeout(std::time::Duration::from_secs(10), store.read_barrier())
        .await
        .expect("the read barrier has a deadline");
    assert!(r.is_err());
    // A slow flush is not a failed one: once it goes on, writes are acknowledged again.
    store.test_hooks().stall.store(false, Ordering::SeqCst);
    assert_eq!(store.health(), StoreHealth::Healthy);
    let mut b = Batch::new();
    b.put(&item(2, 1, "b", 0), Expect::Absent).unwrap();
    store.commit_durable(&b).await.unwrap();
    store.read_barrier().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_flush_fails_safe_and_asks_for_a_restart_once_the_disk_takes_writes() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_deadline(dir.path(), 5_000);
    let mut b = Batch::new();
    b.put(&item(1, 1, "acknowledged", 0), Expect::Absent)
        .unwrap();
    store.commit_durable(&b).await.unwrap();

    *store.test_hooks().fail_next.lock().unwrap() = Some("No space left on device".into());
    let mut b = Batch::new();
    b.put(&item(2, 1, "refused", 0), Expect::Absent).unwrap();
    let r = store.commit_durable(&b).await;
    assert!(
        matches!(&r, Err(StorageError::Io(m)) if m.contains("No space")),
        "{r:?}"
    );
    // From now on nothing is acknowledged, and nothing waits.
    let mut b = Batch::new();
    b.put(&item(3, 1, "later", 0), Expect::Absent).unwrap();
    let r = store.commit(&b);
    assert!(
        matches!(&r, Err(StorageError::Unavailable(m)) if m.contains("No space")),
        "{r:?}"
    );
    assert!(store.read_barrier().await.is_err());
    let (tx, rx) = std::sync::mpsc::channel();
    store.on_durable(u64::MAX, move |r| tx.send(r).unwrap());
    assert!(rx.try_recv().unwrap().is_err(), "called at once");
    // The data directory accepts writes (the fault was injected): restart wanted.
    let h = wait_health(&store, |h| matches!(h, StoreHealth::NeedsRestart { .. }));
    assert!(
        matches!(&h, StoreHealth::NeedsRestart { error } if error.contains("No space")),
        "{h:?}"
    );
    drop(store);
    let store = Store::open(&StoreConfig::new(dir.path())).unwrap();
    assert!(store.get::<Item>(&1u64.to_be_bytes()).unwrap().is_some());
    assert_eq!(store.health(), StoreHealth::Healthy);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_flusher_is_reported_and_no_waiter_hangs() {
    use std::sync::atomic::Ordering;
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_deadline(dir.path(), 5_000);
    store.test_hooks().panic_next.store(true, Ordering::SeqCst);
    let mut b = Batch::new();
    b.put(&item(1, 1, "a", 0), Expect::Absent).unwrap();
    let r = tokio::time::timeout(std::time::Duration::from_secs(10), store.commit_durable(&b))
        .await
        .expect("no hang");
    assert!(r.is_err(), "{r:?}");
    let h = store.health();
    assert!(!h.is_healthy());
    assert!(format!("{h:?}").contains("panicked"), "{h:?}");
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().ok()?;
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        ok.then_some(Tmpfs { dir })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Fills the file system of `path` with a file; returns its path.
fn fill(dir: &std::path::Path) -> std::path::PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let block = vec![0u8; 64 * 1024];
    while f.write_all(&block).is_ok() {}
    let _ = f.sync_all();
    path
}

/// Why a failed flush is sticky: on a real full disk, sled 0.34 keeps failing after space
/// is freed (its "global error" is cleared only by reopening), and a reopened store has
/// everything that was acknowledged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_full_disk_sled_stays_failed_until_reopened_and_loses_nothing_acknowledged() {
    let Some(fs) = Tmpfs::mount("4m") else {
        eprintln!("SKIPPED: a tmpfs cannot be mounted here (this test needs root)");
        return;
    };
    let data = fs.dir.path().join("store");
    let mut config = StoreConfig::new(&data);
    config.cache_capacity_mb = 4;
    config.flush_deadline = std::time::Duration::from_secs(5);
    let store = Store::open(&config).unwrap();
    let mut acknowledged = 0u64;
    for n in 0..50u64 {
        let mut b = Batch::new();
        b.put(&item(n, 1, &format!("before{n}"), 0), Expect::Absent)
            .unwrap();
        store.commit_durable(&b).await.unwrap();
        acknowledged += 1;
    }
    let filler = fill(fs.dir.path());
    let mut failed = false;
    for n in 1000..200_000u64 {
        let mut b = Batch::new();
        b.put(&item(n, 1, &format!("{n:0>2000}"), 0), Expect::Absent)
            .unwrap();
        if store.commit_durable(&b).await.is_err() {
            failed = true;
            break;
        }
    }
    assert!(failed, "the full disk never refused a flush");
    assert!(!store.health().is_healthy());
    std::fs::remove_file(&filler).unwrap();
    // Space is back, sled still refuses.
    assert!(store.flush_blocking().is_err(), "sled recovered by itself");
    let h = wait_health(&store, |h| matches!(h, StoreHealth::NeedsRestart { .. }));
    assert!(matches!(h, StoreHealth::NeedsRestart { .. }), "{h:?}");
    drop(store);
    let store = Store::open(&config).unwrap();
    for n in 0..acknowledged {
        assert!(
            store.get::<Item>(&n.to_be_bytes()).unwrap().is_some(),
            "acknowledged item {n} lost"
        );
    }
    let mut b = Batch::new();
    b.put(&item(999_999, 1, "after", 0), Expect::Absent)
        .unwrap();
    store.commit_durable(&b).await.unwrap();
    assert!(store.verify_indexes::<Item>().unwrap().is_clean());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_under_write_load_is_consistent_and_restores_into_an_empty_store_only() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let store = Store::temporary().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged = Arc::new(AtomicU64::new(0));
    let mut writers = Vec::new();
    for w in 0..4u64 {
        let (store, stop, acknowledged) = (store.clone(), stop.clone(), acknowledged.clone());
        writers.push(tokio::spawn(async move {
            let mut n = 0u64;
            while !stop.load(Ordering::SeqCst) && n < 5_000 {
                let id = w * 1_000_000 + n;
                let mut b = Batch::new();
                b.put(
                    &item(id, (w % 2) as u8, &format!("w{id}"), n as i64),
                    Expect::Absent,
                )
                .unwrap();
                store.commit_durable(&b).await.unwrap();
                acknowledged.fetch_add(1, Ordering::SeqCst);
                n += 1;
                tokio::task::yield_now().await;
            }
            n
        }));
    }
    while acknowledged.load(Ordering::SeqCst) < 200 {
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    let before = acknowledged.load(Ordering::SeqCst);
    let snapshot = store.snapshot().unwrap();
    stop.store(true, Ordering::SeqCst);
    for w in writers {
        w.await.unwrap();
    }
    assert!(snapshot.record_count() as u64 >= before);

    let mut bytes = Vec::new();
    snapshot.write_to(&mut bytes).unwrap();
    let read = Snapshot::read_from(&mut bytes.as_slice()).unwrap();
    assert_eq!(read, snapshot);
    assert!(Snapshot::read_from(&mut &bytes[..bytes.len() - 3]).is_err());

    let restored = Store::temporary().unwrap();
    restored.restore(&read).unwrap();
    assert!(restored.verify_indexes::<Item>().unwrap().is_clean());
    let counted: u64 = (0..2u8)
        .map(|t| restored.count("item_by_rank", &[t]).unwrap())
        .sum();
    assert_eq!(counted, snapshot.record_count() as u64);
    assert!(matches!(
        restored.restore(&read),
        Err(StorageError::Conflict { .. })
    ));
}

/// A record in the change feed whose `hits` counter is not worth an entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Fed {
    pub(crate) id: u64,
    pub(crate) status: String,
    pub(crate) hits: u64,
}

impl Record for Fed {
    const COLLECTION: &'static str = "fed";
    const VERSION: u16 = 1;
    const FEED: bool = true;

    fn id_key(&self) -> Vec<u8> {
        self.id.to_be_bytes().to_vec()
    }
    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        codec::encode(self)
    }
    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        codec::decode(Self::COLLECTION, version, payload)
    }
    fn feed_digest(&self) -> Option<Vec<u8>> {
        Some(self.status.as_bytes().to_vec())
    }
}

fn fed(id: u64, status: &str, hits: u64) -> Fed {
    Fed {
        id,
        status: status.into(),
        hits,
    }
}

#[test]
fn the_feed_records_creations_digest_changes_and_deletions_in_order() {
    let store = Store::temporary().unwrap();
    let mut b = Batch::new();
    b.put(&fed(1, "active", 0), Expect::Absent).unwrap();
    store.commit(&b).unwrap();
    // A counter-only change: no entry, and no transaction needed.
    let mut b = Batch::new();
    b.put(&fed(1, "active", 5), Expect::Rev(1)).unwrap();
    store.commit(&b).unwrap();
    let mut b = Batch::new();
    b.put(&fed(1, "revoked", 5), Expect::Rev(2)).unwrap();
    store.commit(&b).unwrap();
    // Types outside the feed record nothing.
    put(&store, &item(9, 1, "nine", 9), Expect::Absent).unwrap();
    let mut b = Batch::new();
    b.delete::<Fed>(&1u64.to_be_bytes(), Expect::Rev(3));
    store.commit(&b).unwrap();

    let changes = store.changes(None, 10).unwrap();
    assert_eq!(changes.len(), 3);
    assert!(changes.windows(2).all(|w| w[0].seq < w[1].seq));
    assert!(changes.iter().all(|c| c.is::<Fed>() && !c.is::<Item>()));
    assert_eq!(changes[0].before::<Fed>().unwrap(), None);
    assert_eq!(
        changes[0].after::<Fed>().unwrap(),
        Some(fed(1, "active", 0))
    );
    assert_eq!(
        changes[1].before::<Fed>().unwrap(),
        Some(fed(1, "active", 5))
    );
    assert_eq!(
        changes[1].after::<Fed>().unwrap(),
        Some(fed(1, "revoked", 5))
    );
    assert_eq!(
        changes[2].before::<Fed>().unwrap(),
        Some(fed(1, "revoked", 5))
    );
    assert_eq!(changes[2].after::<Fed>().unwrap(), None);
    // Paging after a sequence number.
    let rest = store.changes(Some(changes[0].seq), 10).unwrap();
    assert_eq!(rest, changes[1..].to_vec());
}

#[test]
fn a_failed_write_records_nothing_and_consuming_removes_entries_atomically() {
    let store = Store::temporary().unwrap();
    let mut b = Batch::new();
    b.put(&fed(1, "active", 0), Expect::Absent).unwrap();
    store.commit(&b).unwrap();
    // A conflicting batch aborts whole: neither record nor feed entry.
    let mut b = Batch::new();
    b.put(&fed(2, "active", 0), Expect::Absent).unwrap();
    b.put(&fed(1, "revoked", 0), Expect::Rev(7)).unwrap();
    assert!(store.commit(&b).is_err());
    let changes = store.changes(None, 10).unwrap();
    assert_eq!(changes.len(), 1);

    let mut b = Batch::new();
    b.notice("fed.refused", vec![1], b"{}".to_vec());
    b.consume_changes(&[changes[0].seq]);
    store.commit(&b).unwrap();
    let left = store.changes(None, 10).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].collection, "fed.refused");
    assert_eq!(left[0].notice(), Some(&b"{}"[..]));
    assert_eq!(store.pending_changes(), 1);
}

#[tokio::test]
async fn the_feed_survives_a_snapshot_and_wakes_its_consumer() {
    let store = Store::temporary().unwrap();
    let waiter = {
        let store = store.clone();
        tokio::spawn(async move { store.changes_written().await })
    };
    let mut b = Batch::new();
    b.put(&fed(1, "active", 0), Expect::Absent).unwrap();
    store.commit(&b).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
        .await
        .unwrap()
        .unwrap();
    let copy = Store::temporary().unwrap();
    copy.restore(&store.snapshot().unwrap()).unwrap();
    assert_eq!(
        copy.changes(None, 10).unwrap(),
        store.changes(None, 10).unwrap()
    );
}

#[test]
fn watchers_see_every_write_and_delete_of_their_collection() {
    use std::sync::{Arc, Mutex};
    let store = Store::temporary().unwrap();
    let seen: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let sink = seen.clone();
    store.watch(Item::COLLECTION, move |id| {
        sink.lock().unwrap().push(id.to_vec())
    });
    put(&store, &item(1, 1, "one", 1), Expect::Absent).unwrap();
    // Another collection, and a failed write: nothing.
    let mut b = Batch::new();
    b.put(&fed(5, "x", 0), Expect::Absent).unwrap();
    store.commit(&b).unwrap();
    assert!(put(&store, &item(1, 1, "one", 1), Expect::Absent).is_err());
    // The compare-and-swap path too.
    put(&store, &item(1, 1, "one", 1), Expect::Rev(1)).unwrap();
    let mut b = Batch::new();
    b.delete::<Item>(&1u64.to_be_bytes(), Expect::Any);
    store.commit(&b).unwrap();
    let one = 1u64.to_be_bytes().to_vec();
    assert_eq!(*seen.lock().unwrap(), vec![one.clone(), one.clone(), one]);
}

#[test]
fn a_put_keeping_keys_is_a_plain_compare_and_swap() {
    let store = Store::temporary().unwrap();
    let mut b = Batch::new();
    b.put(&fed(1, "active", 0), Expect::Absent).unwrap();
    store.commit(&b).unwrap();
    let mut b = Batch::new();
    b.put_keeping_keys(&fed(1, "active", 9), Expect::Rev(1))
        .unwrap();
    assert_eq!(store.commit(&b).unwrap().revs, vec![2]);
    assert_eq!(
        store
            .get::<Fed>(&1u64.to_be_bytes())
            .unwrap()
            .unwrap()
            .value
            .hits,
        9
    );
    // The revision is still checked.
    let mut b = Batch::new();
    b.put_keeping_keys(&fed(1, "active", 10), Expect::Rev(1))
        .unwrap();
    assert!(matches!(
        store.commit(&b),
        Err(StorageError::Conflict { .. })
    ));
    assert_eq!(
        store.changes(None, 10).unwrap().len(),
        1,
        "only the creation"
    );
}
