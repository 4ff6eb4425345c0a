//! The embedded engine's tallies tree (`tally.rs`) through the [`Store`] API: counting and
//! write-backs write the entry at the record's revision (durably, without moving the
//! record's revision, without a transaction), reads merge it only at that revision, the
//! single writer's puts carry the counters in the payload (the entry goes stale, or a
//! transaction removes it), a delete removes it, a record without an entry reads its
//! payload, `check` reports and repairs strays, and backups carry the counters.

use crate::store::layout::record_key;
use crate::store::tally::Entry;
use crate::store::tally_fixture::{get, id, key, put, Key};
use crate::{codec, Batch, Counted, Expect, Record, StorageError, Store, StoreConfig, Tally};

fn rk(n: u64) -> Vec<u8> {
    record_key(Key::COLLECTION, &id(n))
}

/// The stored payload's own counters (what a read without the tree would give).
fn payload(store: &Store, n: u64) -> (i64, i64) {
    let raw = store.embedded().inner_records();
    let (_, bytes) = raw.iter().find(|(k, _)| *k == rk(n)).unwrap();
    let s: crate::Stored<Key> = codec::open_stored(bytes).unwrap();
    (s.value.usage, s.value.validations)
}

fn tally(bounded: i64, hits: i64, last: Option<i64>) -> Tally {
    Tally {
        bounded,
        hits,
        last_hit_us: last,
    }
}

fn entry(rev: u64, tally: Tally, limit: Option<i64>) -> Option<Entry> {
    Some(Entry { rev, tally, limit })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_entry_is_at_its_records_revision_and_reads_merge_it() {
    let store = Store::temporary().unwrap();
    assert!(store.counters_apart());
    assert!(!store.is_shared());
    let e = store.embedded();
    // A put writes the counters in the payload: no entry.
    let mut k = key(1, Some(10));
    k.usage = 2;
    k.validations = 7;
    assert_eq!(put(&store, &k, Expect::Absent).await, 1);
    assert_eq!(e.inner_tally(&rk(1)), None);
    assert_eq!(get(&store, 1).await, (1, k.clone()));
    // Counting writes the entry, not the record (its revision, its payload), durably.
    assert_eq!(
        store.count_hit::<Key>(&id(1), 1, 3, 50).await,
        Ok(Counted::Done(tally(5, 8, Some(50))))
    );
    assert!(store.is_durable(store.last_committed()));
    assert_eq!(
        e.inner_tally(&rk(1)),
        entry(1, tally(5, 8, Some(50)), Some(10))
    );
    assert_eq!(payload(&store, 1), (2, 7));
    let (rev, read) = get(&store, 1).await;
    assert_eq!(
        (rev, read.usage, read.validations, read.last_at),
        (1, 5, 8, Some(50))
    );
    put(&store, &key(2, None), Expect::Absent).await;
    let many = store.get_many::<Key>(&[id(2), id(1), id(3)]).await.unwrap();
    assert_eq!((many.len(), many[1].value.usage), (2, 5));
    let all = store.scan::<Key>().await.unwrap();
    assert_eq!(all[0].value, read);
    // Misses count nothing.
    assert_eq!(
        store.count_hit::<Key>(&id(1), 1, 6, 60).await,
        Ok(Counted::Limit {
            bounded: 5,
            limit: 10
        })
    );
    assert_eq!(
        store.count_hit::<Key>(&id(1), 2, 0, 60).await,
        Ok(Counted::Stale)
    );
    assert_eq!(
        store.count_hit::<Key>(&id(9), 1, 0, 60).await,
        Ok(Counted::Stale)
    );
    assert_eq!(
        store.count_hit::<Key>(&id(2), 1, i64::MAX, 60).await,
        Ok(Counted::Done(tally(i64::MAX, 1, Some(60))))
    );
    assert_eq!(
        store.count_hit::<Key>(&id(2), 1, 1, 60).await,
        Ok(Counted::OutOfRange)
    );
    // A plain hit counts at the limit; an earlier time keeps the latest.
    assert_eq!(
        store.count_hit::<Key>(&id(1), 1, 0, 40).await,
        Ok(Counted::Done(tally(5, 9, Some(50))))
    );
    // The single writer's put (a lone compare-and-swap on the record) carries its counters
    // in the payload: the entry, at the older revision, is stale and no longer read.
    let mut next = get(&store, 1).await.1;
    next.note = "patched".into();
    next.limit = Some(20);
    next.validations = 9;
    next.usage = 4;
    assert_eq!(put(&store, &next, Expect::Rev(1)).await, 2);
    assert_eq!(
        e.inner_tally(&rk(1)),
        entry(1, tally(5, 9, Some(50)), Some(10))
    );
    assert_eq!(get(&store, 1).await, (2, next.clone()));
    // A put that resets the counters resets them.
    next.usage = 0;
    next.validations = 0;
    next.last_at = None;
    let mut b = Batch::new();
    b.put_keeping_keys(&next, Expect::Rev(2)).unwrap();
    assert_eq!(store.commit(&b).await.unwrap().revs, vec![3]);
    assert_eq!(get(&store, 1).await, (3, next.clone()));
    // Counting goes on from the payload of that revision.
    assert_eq!(
        store.count_hit::<Key>(&id(1), 3, 2, 70).await,
        Ok(Counted::Done(tally(2, 1, Some(70))))
    );
    assert_eq!(
        e.inner_tally(&rk(1)),
        entry(3, tally(2, 1, Some(70)), Some(20))
    );
    // An explicit usage, in the batch of its put (a transaction: the put removes the
    // entry, the usage makes one at the new revision from the payload).
    next.usage = 6;
    let mut b = Batch::new();
    b.put(&next, Expect::Rev(3))
        .unwrap()
        .set_bounded::<Key>(&id(1), 1);
    store.commit(&b).await.unwrap();
    assert_eq!(e.inner_tally(&rk(1)), entry(4, tally(1, 0, None), Some(20)));
    assert_eq!(get(&store, 1).await.1.usage, 1);
    assert_eq!(payload(&store, 1), (6, 0));
    // A write-back of counters: the entry only, the revision unchanged, conditional on it.
    let mut counted = next.clone();
    (counted.usage, counted.validations, counted.last_at) = (3, 30, Some(300));
    let mut b = Batch::new();
    b.write_tally(&counted, 4);
    assert_eq!(store.commit(&b).await.unwrap().revs, vec![4]);
    assert_eq!(
        e.inner_tally(&rk(1)),
        entry(4, tally(3, 30, Some(300)), Some(20))
    );
    assert_eq!(get(&store, 1).await, (4, counted.clone()));
    assert_eq!(payload(&store, 1), (6, 0));
    for stale in [3, 5] {
        let mut b = Batch::new();
        b.write_tally(&counted, stale);
        assert!(matches!(
            store.commit(&b).await,
            Err(StorageError::Conflict { found: Some(4), .. })
        ));
    }
    let mut b = Batch::new();
    b.write_tally(&key(9, None), 1);
    assert!(matches!(
        store.commit(&b).await,
        Err(StorageError::Conflict { found: None, .. })
    ));
    assert!(store.verify_indexes::<Key>().await.unwrap().is_clean());
    // A delete takes the entry; a record created again with that id starts afresh, at
    // revision 1 again, with no entry left to mistake for its own.
    let mut b = Batch::new();
    b.delete::<Key>(&id(1), Expect::Rev(4));
    store.commit(&b).await.unwrap();
    assert_eq!(e.inner_tally(&rk(1)), None);
    let mut b = Batch::new();
    b.set_bounded::<Key>(&id(1), 3);
    assert!(matches!(
        store.commit(&b).await,
        Err(StorageError::Conflict { .. })
    ));
    assert_eq!(e.inner_tally(&rk(1)), None);
    put(&store, &key(1, None), Expect::Absent).await;
    assert_eq!(e.inner_tally(&rk(1)), None);
    assert_eq!(get(&store, 1).await, (1, key(1, None)));
    // Counted, deleted, created anew: the new record (at revision 1 again) does not
    // inherit the counters.
    let mut b = Batch::new();
    b.write_tally(&counted, 1);
    store.commit(&b).await.unwrap();
    let mut b = Batch::new();
    b.delete::<Key>(&id(1), Expect::Rev(1));
    store.commit(&b).await.unwrap();
    put(&store, &key(1, None), Expect::Absent).await;
    assert_eq!(get(&store, 1).await, (1, key(1, None)));
    assert!(store.verify_indexes::<Key>().await.unwrap().is_clean());
}

/// Counter writes acknowledged durable (a write-back committed durably, a counted hit)
/// survive a reopen of the data directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_counter_writes_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::new(dir.path());
    let mut k = key(1, Some(100));
    {
        let store = Store::open(&config).unwrap();
        put(&store, &k, Expect::Absent).await;
        put(&store, &key(2, None), Expect::Absent).await;
        (k.usage, k.validations, k.last_at) = (7, 70, Some(700));
        let mut b = Batch::new();
        b.write_tally(&k, 1);
        store.commit_durable(&b).await.unwrap();
        assert_eq!(
            store.count_hit::<Key>(&id(2), 1, 1, 5).await,
            Ok(Counted::Done(tally(1, 1, Some(5))))
        );
    }
    let store = Store::open(&config).unwrap();
    assert_eq!(get(&store, 1).await, (1, k));
    assert_eq!(get(&store, 2).await.1.usage, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn added_hits_sum_up_in_one_commit_and_keep_the_latest_time() {
    let store = Store::temporary().unwrap();
    put(&store, &key(1, Some(1)), Expect::Absent).await;
    put(&store, &key(2, None), Expect::Absent).await;
    let before = store.last_committed();
    let mut out = store
        .add_hits::<Key>(&[
            (id(1), 3, 100),
            (id(2), 1, 50),
            (id(1), 2, 70),
            (id(9), 4, 10),
        ])
        .await
        .unwrap();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        out,
        vec![
            (id(1), tally(0, 5, Some(100))),
            (id(2), tally(0, 1, Some(50))),
        ]
    );
    // One commit for all of them, durable when it returned.
    assert_eq!(store.last_committed(), before + 1);
    assert!(store.is_durable(before + 1));
    assert_eq!(get(&store, 1).await.0, 1);
    assert_eq!(store.add_hits::<Key>(&[]).await, Ok(vec![]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_without_an_entry_read_their_payload_and_check_sees_strays() {
    let store = Store::temporary().unwrap();
    let e = store.embedded();
    for n in 1..=3 {
        let mut k = key(n, Some(9));
        k.validations = n as i64;
        put(&store, &k, Expect::Absent).await;
    }
    // As a build that kept counters in payloads left them: no entries, nothing to
    // backfill, nothing missing.
    assert_eq!(get(&store, 2).await.1.validations, 2);
    assert!(store.verify_indexes::<Key>().await.unwrap().is_clean());
    assert_eq!(store.ensure_tallies::<Key>().await, Ok(0));
    for n in [1, 3] {
        store.count_hit::<Key>(&id(n), 1, 0, 1).await.unwrap();
    }
    assert_eq!(
        e.inner_tally(&rk(1)),
        entry(1, tally(0, 2, Some(1)), Some(9))
    );
    // An entry without its record is extra; a repair removes it.
    e.inner_remove_record(&rk(3));
    let report = store.verify_indexes::<Key>().await.unwrap();
    assert!(report.missing.is_empty());
    assert!(report.extra.contains(&rk(3)));
    store.rebuild_indexes::<Key>().await.unwrap();
    assert!(store.verify_indexes::<Key>().await.unwrap().is_clean());
    assert_eq!(e.inner_tally(&rk(3)), None);
    assert_eq!(
        e.inner_tally(&rk(1)),
        entry(1, tally(0, 2, Some(1)), Some(9))
    );
    // A type that is not tallied has nothing to backfill.
    assert_eq!(
        store.ensure_tallies::<crate::store_tests::Item>().await,
        Ok(0)
    );
}

/// The sled-only variant of `pg/tally_tests.rs`'s backup test: counters moved in the tree
/// only (the payload is stale) survive a snapshot, its file and its restore; a snapshot
/// of an older build (no tallies tree) restores with the payloads' counters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_in_the_tree_survive_a_backup_and_its_restore() {
    let sled = Store::temporary().unwrap();
    let mut k = key(1, Some(9));
    k.usage = 4;
    k.validations = 17;
    k.last_at = Some(1_234);
    put(&sled, &k, Expect::Absent).await;
    assert_eq!(
        sled.count_hit::<Key>(&id(1), 1, 2, 2_000).await,
        Ok(Counted::Done(tally(6, 18, Some(2_000))))
    );
    let mut file = Vec::new();
    let snapshot = sled.snapshot().unwrap();
    snapshot.write_to(&mut file).unwrap();
    let backup = crate::Snapshot::read_from(&mut file.as_slice()).unwrap();
    assert_eq!(backup, snapshot);
    let restored = Store::temporary().unwrap();
    restored.restore(&backup).await.unwrap();
    let mut counted = k.clone();
    (counted.usage, counted.validations, counted.last_at) = (6, 18, Some(2_000));
    assert_eq!(get(&restored, 1).await, (1, counted.clone()));
    assert!(restored.verify_indexes::<Key>().await.unwrap().is_clean());
    assert_eq!(
        restored.count_hit::<Key>(&id(1), 1, 4, 3_000).await,
        Ok(Counted::Limit {
            bounded: 6,
            limit: 9
        })
    );
    // A backup written by a build without the tree.
    let mut old = backup.clone();
    old.trees.retain(|(name, _)| name != "tallies");
    let restored = Store::temporary().unwrap();
    restored.restore(&old).await.unwrap();
    assert_eq!(get(&restored, 1).await, (1, k.clone()));
    assert_eq!(restored.ensure_tallies::<Key>().await, Ok(0));
    assert_eq!(
        restored.count_hit::<Key>(&id(1), 1, 1, 3_000).await,
        Ok(Counted::Done(tally(5, 18, Some(3_000))))
    );
}
