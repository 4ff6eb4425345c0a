//! The PostgreSQL engine against a real database: `TOLLGATE_TEST_DATABASE_URL`, or the
//! `PG*` variables `pg_virtualenv` sets (`.ci/run` starts one). Without a database a test
//! says "skipped" on a developer machine and fails under `CI=true`. Each test works in a
//! schema of its own, dropped at the end (`crate::store_tests::test_db`, which the store's
//! own suite shares to run on this engine too).

use std::sync::Arc;
use std::time::Duration;

use super::PgEngine;
use crate::store_tests::test_db::{database_url, fresh_schema, Dropper};
use crate::store_tests::{item, Fed, Item};
use crate::{Batch, Expect, Record, StorageError, Store};

/// A fresh schema on the test database, with the engine's tables; `None` (skipped) on a
/// developer machine without one. Under `CI=true` a missing database fails the test.
async fn engine(test: &str) -> Option<(PgEngine, Dropper)> {
    let schema = fresh_schema(test)?;
    let engine = PgEngine::connect(&schema.url, &schema.schema, 8)
        .await
        .unwrap_or_else(|e| panic!("cannot reach the test database at {}: {e}", schema.url));
    Some((engine, schema))
}

async fn put(engine: &PgEngine, i: &Item, expect: Expect) -> Result<u64, StorageError> {
    let mut b = Batch::new();
    b.put(i, expect)?;
    Ok(engine.commit(&b).await?[0])
}

/// How long a call that must not be stuck gets.
const WAIT: Duration = Duration::from_secs(5);

fn ids(raw: &[Vec<u8>]) -> Vec<u64> {
    raw.iter()
        .map(|id| u64::from_be_bytes(id.as_slice().try_into().unwrap()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditional_writes_count_revisions_and_refuse_stale_ones() {
    let Some((pg, _drop)) = engine("conditional").await else {
        return;
    };
    let a = item(1, 0, "alpha", 5);
    assert_eq!(put(&pg, &a, Expect::Absent).await, Ok(1));
    assert!(matches!(
        put(&pg, &a, Expect::Absent).await,
        Err(StorageError::Conflict { found: Some(1), .. })
    ));
    assert_eq!(put(&pg, &a, Expect::Rev(1)).await, Ok(2));
    assert!(matches!(
        put(&pg, &a, Expect::Rev(1)).await,
        Err(StorageError::Conflict { found: Some(2), .. })
    ));
    assert_eq!(put(&pg, &a, Expect::Any).await, Ok(3));
    let stored = pg.get::<Item>(&a.id.to_be_bytes()).await.unwrap().unwrap();
    assert_eq!((stored.rev, stored.value), (3, a.clone()));
    assert!(pg.get::<Item>(&9u64.to_be_bytes()).await.unwrap().is_none());
    // A delete checks its revision too, and takes the record's keys with it.
    let mut b = Batch::new();
    b.delete::<Item>(&a.id.to_be_bytes(), Expect::Rev(2));
    assert!(matches!(
        pg.commit(&b).await,
        Err(StorageError::Conflict { .. })
    ));
    let mut b = Batch::new();
    b.delete::<Item>(&a.id.to_be_bytes(), Expect::Rev(3));
    pg.commit(&b).await.unwrap();
    assert!(pg.get::<Item>(&a.id.to_be_bytes()).await.unwrap().is_none());
    assert_eq!(pg.count("item_by_rank", &[0]).await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexes_counters_and_uniques_move_with_their_record_in_the_embedded_order() {
    let Some((pg, _drop)) = engine("indexes").await else {
        return;
    };
    let sled = Store::temporary().unwrap();
    // Ranks that sort differently as bytes and as text, negative ones included.
    let items = [
        item(1, 0, "delta", -300),
        item(2, 0, "alpha", 70_000),
        item(3, 0, "charlie", 0),
        item(4, 0, "bravo", -1),
        item(5, 1, "alpha", 1),
    ];
    for i in &items {
        put(&pg, i, Expect::Absent).await.unwrap();
        let mut b = Batch::new();
        b.put(i, Expect::Absent).unwrap();
        sled.commit(&b).await.unwrap();
    }
    for index in ["item_by_rank", "item_by_name"] {
        for tenant in [0u8, 1] {
            let on_pg = pg.index_range(index, &[tenant], &[], None).await.unwrap();
            let on_sled = sled.index_range(index, &[tenant], &[], None).await.unwrap();
            assert_eq!(on_pg, on_sled, "{index} of tenant {tenant}");
            assert_eq!(
                pg.count(index, &[tenant]).await.unwrap(),
                sled.count(index, &[tenant]).await.unwrap()
            );
        }
    }
    assert_eq!(
        ids(&pg
            .index_range("item_by_rank", &[0], &[], None)
            .await
            .unwrap()),
        vec![1, 4, 3, 2]
    );
    // A name is unique per tenant: taken in tenant 0, free in tenant 1.
    let clash = item(6, 0, "ALPHA", 9);
    assert_eq!(
        put(&pg, &clash, Expect::Absent).await,
        Err(StorageError::Unique {
            constraint: "item_name"
        })
    );
    // The failed batch wrote nothing: no record, no index entry, no counter change.
    assert!(pg.get::<Item>(&6u64.to_be_bytes()).await.unwrap().is_none());
    assert_eq!(pg.count("item_by_rank", &[0]).await.unwrap(), 4);
    // Renamed, the old name is free again and the index follows.
    let mut renamed = items[1].clone();
    renamed.name = "echo".into();
    renamed.rank = -1_000;
    put(&pg, &renamed, Expect::Rev(1)).await.unwrap();
    put(&pg, &clash, Expect::Absent).await.unwrap();
    assert_eq!(
        ids(&pg
            .index_range("item_by_rank", &[0], &[], None)
            .await
            .unwrap()),
        vec![2, 1, 4, 3, 6]
    );
    let holder = pg
        .lookup_unique(&crate::UniqueKey::new("item_name", vec![0], "alpha"))
        .await
        .unwrap();
    assert_eq!(holder, Some(6u64.to_be_bytes().to_vec()));
    assert_eq!(pg.count("item_by_rank", &[0]).await.unwrap(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_of_one_record_serialize_and_none_is_lost() {
    let Some((pg, _drop)) = engine("concurrent").await else {
        return;
    };
    let pg = Arc::new(pg);
    put(&pg, &item(1, 0, "counter", 0), Expect::Absent)
        .await
        .unwrap();
    // 40 increments from 8 tasks, each a read, then a write conditional on what it read,
    // retried on a conflict: the database decides, every increment lands once.
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let pg = pg.clone();
            tokio::spawn(async move {
                let mut conflicts = 0;
                for _ in 0..5 {
                    loop {
                        let s = pg.get::<Item>(&1u64.to_be_bytes()).await.unwrap().unwrap();
                        let mut next = s.value.clone();
                        next.rank += 1;
                        match put(&pg, &next, Expect::Rev(s.rev)).await {
                            Ok(_) => break,
                            Err(StorageError::Conflict { .. }) => conflicts += 1,
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
                conflicts
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let s = pg.get::<Item>(&1u64.to_be_bytes()).await.unwrap().unwrap();
    assert_eq!((s.value.rank, s.rev), (40, 41));

    // Twelve nodes create the same record at once: exactly one wins.
    let creates: Vec<_> = (0..12)
        .map(|n| {
            let pg = pg.clone();
            tokio::spawn(
                async move { put(&pg, &item(7, 0, &format!("n{n}"), n), Expect::Absent).await },
            )
        })
        .collect();
    let mut won = 0;
    for c in creates {
        match c.await.unwrap() {
            Ok(_) => won += 1,
            Err(StorageError::Conflict { .. }) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(won, 1);
    assert_eq!(pg.count("item_by_name", &[0]).await.unwrap(), 2);
    // Twelve records claim one name at once: exactly one holds it.
    let claims: Vec<_> = (0..12u64)
        .map(|n| {
            let pg = pg.clone();
            tokio::spawn(
                async move { put(&pg, &item(100 + n, 0, "taken", 0), Expect::Absent).await },
            )
        })
        .collect();
    let mut claimed = 0;
    for c in claims {
        match c.await.unwrap() {
            Ok(_) => claimed += 1,
            Err(StorageError::Unique { .. }) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(claimed, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_change_feed_and_meta_are_written_with_the_batch() {
    let Some((pg, _drop)) = engine("feed").await else {
        return;
    };
    let fed = |status: &str, hits: u64| Fed {
        id: 1,
        status: status.into(),
        hits,
    };
    let mut b = Batch::new();
    b.put(&fed("new", 0), Expect::Absent).unwrap();
    b.put_meta("marker", b"1".to_vec());
    pg.commit(&b).await.unwrap();
    assert_eq!(pg.get_meta("marker").await.unwrap(), Some(b"1".to_vec()));
    // A change of the digest (status) is an entry; one of `hits` alone is not.
    let mut b = Batch::new();
    b.put(&fed("new", 5), Expect::Rev(1)).unwrap();
    pg.commit(&b).await.unwrap();
    let mut b = Batch::new();
    b.put(&fed("done", 5), Expect::Rev(2)).unwrap();
    pg.commit(&b).await.unwrap();
    let seqs = pg.feed_seqs(10).await.unwrap();
    assert_eq!(seqs.len(), 2, "{seqs:?}");
    assert!(seqs[0] < seqs[1]);
    // Consumed in the transaction of the consumer's own write.
    let mut b = Batch::new();
    b.consume_changes(&seqs[..1]);
    b.put_meta("consumer", b"done".to_vec());
    pg.commit(&b).await.unwrap();
    assert_eq!(pg.feed_seqs(10).await.unwrap(), seqs[1..].to_vec());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_give_what_the_embedded_engine_gives() {
    let Some((pg, _drop)) = engine("reads").await else {
        return;
    };
    let sled = Store::temporary().unwrap();
    // Three tenants with interleaved ranks, and a record of another collection between.
    let mut all = Vec::new();
    for n in 0..30u64 {
        let i = item(
            n + 1,
            (n % 3) as u8,
            &format!("name{n:02}"),
            ((n * 37) % 11) as i64 - 5,
        );
        all.push(i);
    }
    for i in &all {
        put(&pg, i, Expect::Absent).await.unwrap();
        let mut b = Batch::new();
        b.put(i, Expect::Absent).unwrap();
        sled.commit(&b).await.unwrap();
    }
    let tenants: Vec<Vec<u8>> = vec![vec![0], vec![2]];
    for direction in [crate::Direction::Asc, crate::Direction::Desc] {
        for (offset, limit) in [(0, 5), (3, 7), (18, 10), (0, 100), (25, 5)] {
            let q = crate::PageQuery {
                index: "item_by_rank",
                tenants: &tenants,
                direction,
                offset,
                limit,
            };
            assert_eq!(
                pg.page(&q).await.unwrap(),
                sled.page(&q).await.unwrap(),
                "{direction:?} {offset}+{limit}"
            );
        }
    }
    // get_many keeps the order asked and skips the missing.
    let ask: Vec<Vec<u8>> = [7u64, 99, 3, 1]
        .iter()
        .map(|n| n.to_be_bytes().to_vec())
        .collect();
    let got: Vec<u64> = pg
        .get_many::<Item>(&ask)
        .await
        .unwrap()
        .iter()
        .map(|s| s.value.id)
        .collect();
    assert_eq!(got, vec![7, 3, 1]);
    assert_eq!(
        pg.revision::<Item>(&7u64.to_be_bytes()).await.unwrap(),
        Some(1)
    );
    assert_eq!(
        pg.revision::<Item>(&99u64.to_be_bytes()).await.unwrap(),
        None
    );
    // scan is every record of the type in key order, like the embedded engine's.
    let scanned: Vec<u64> = pg
        .scan::<Item>()
        .await
        .unwrap()
        .iter()
        .map(|s| s.value.id)
        .collect();
    let embedded: Vec<u64> = sled
        .scan::<Item>()
        .await
        .unwrap()
        .iter()
        .map(|s| s.value.id)
        .collect();
    assert_eq!(scanned, embedded);
    assert_eq!(scanned.len(), 30);
    // The derived keys are all there, and nothing else.
    assert!(pg.verify_indexes::<Item>().await.unwrap().is_clean());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_are_read_in_order_with_their_records() {
    let Some((pg, _drop)) = engine("changes").await else {
        return;
    };
    for (n, status) in ["new", "paid", "done"].iter().enumerate() {
        let mut b = Batch::new();
        let fed = Fed {
            id: 1,
            status: status.to_string(),
            hits: 0,
        };
        let expect = if n == 0 {
            Expect::Absent
        } else {
            Expect::Rev(n as u64)
        };
        b.put(&fed, expect).unwrap();
        pg.commit(&b).await.unwrap();
    }
    let changes = pg.changes(None, 10).await.unwrap();
    let statuses: Vec<(Option<String>, Option<String>)> = changes
        .iter()
        .map(|c| {
            (
                c.before::<Fed>().unwrap().map(|f| f.status),
                c.after::<Fed>().unwrap().map(|f| f.status),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        vec![
            (None, Some("new".into())),
            (Some("new".into()), Some("paid".into())),
            (Some("paid".into()), Some("done".into())),
        ]
    );
    assert!(changes.iter().all(|c| c.is::<Fed>()));
    let later = pg.changes(Some(changes[0].seq), 10).await.unwrap();
    assert_eq!(later.len(), 2);
    assert_eq!(pg.changes(None, 1).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_of_the_embedded_store_keeps_revisions_keys_and_the_feed() {
    let Some((pg, _drop)) = engine("import").await else {
        return;
    };
    let sled = Store::temporary().unwrap();
    for n in 0..40u64 {
        let i = item(
            n + 1,
            (n % 4) as u8,
            &format!("copy{n}"),
            (n as i64 * 7) % 13,
        );
        let mut b = Batch::new();
        b.put(&i, Expect::Absent).unwrap();
        sled.commit(&b).await.unwrap();
    }
    // Some records rewritten: their revisions must survive the copy.
    for n in [3u64, 9] {
        let s = sled.get::<Item>(&n.to_be_bytes()).await.unwrap().unwrap();
        let mut b = Batch::new();
        b.put(&s.value, Expect::Rev(s.rev)).unwrap();
        sled.commit(&b).await.unwrap();
    }
    for status in ["new", "paid"] {
        let mut b = Batch::new();
        b.put(
            &Fed {
                id: 1,
                status: status.into(),
                hits: 0,
            },
            Expect::Any,
        )
        .unwrap();
        b.put_meta("marker", status.as_bytes().to_vec());
        sled.commit(&b).await.unwrap();
    }
    let snapshot = sled.snapshot().unwrap();
    assert_eq!(pg.import(&snapshot).await.unwrap(), 41);

    for n in 1..=40u64 {
        let on_pg = pg.get::<Item>(&n.to_be_bytes()).await.unwrap().unwrap();
        let on_sled = sled.get::<Item>(&n.to_be_bytes()).await.unwrap().unwrap();
        assert_eq!((on_pg.rev, on_pg.value), (on_sled.rev, on_sled.value));
    }
    assert_eq!(
        pg.revision::<Item>(&3u64.to_be_bytes()).await.unwrap(),
        Some(2)
    );
    assert!(pg.verify_indexes::<Item>().await.unwrap().is_clean());
    let tenants: Vec<Vec<u8>> = (0..4u8).map(|t| vec![t]).collect();
    let q = crate::PageQuery {
        index: "item_by_name",
        tenants: &tenants,
        direction: crate::Direction::Desc,
        offset: 5,
        limit: 20,
    };
    assert_eq!(pg.page(&q).await.unwrap(), sled.page(&q).await.unwrap());
    assert_eq!(pg.get_meta("marker").await.unwrap(), Some(b"paid".to_vec()));
    let copied: Vec<u64> = pg
        .changes(None, 10)
        .await
        .unwrap()
        .iter()
        .map(|c| c.seq)
        .collect();
    let original: Vec<u64> = sled
        .changes(None, 10)
        .await
        .unwrap()
        .iter()
        .map(|c| c.seq)
        .collect();
    assert_eq!(copied, original);
    // The copy goes on: a write there is numbered after the copied feed entries, and a
    // uniqueness the copy carries is enforced.
    let mut b = Batch::new();
    b.put(
        &Fed {
            id: 1,
            status: "done".into(),
            hits: 0,
        },
        Expect::Rev(2),
    )
    .unwrap();
    pg.commit(&b).await.unwrap();
    let after: Vec<u64> = pg
        .changes(None, 10)
        .await
        .unwrap()
        .iter()
        .map(|c| c.seq)
        .collect();
    assert_eq!(after.len(), copied.len() + 1);
    assert!(after.last() > copied.last());
    assert!(matches!(
        put(&pg, &item(99, 0, "copy0", 1), Expect::Absent).await,
        Err(StorageError::Unique { .. })
    ));
    // Only into an empty schema.
    assert!(matches!(
        pg.import(&snapshot).await,
        Err(StorageError::Conflict { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_node_at_a_time_holds_a_job_lock_and_a_dead_node_frees_it() {
    let Some((a, _drop)) = engine("locks").await else {
        return;
    };
    // Another node: its own pool on the same schema.
    let url = database_url().expect("the same database");
    let b = PgEngine::connect(&url, &_drop.schema, 2).await.unwrap();
    let held = a.try_lock("sweeps").await.unwrap().expect("free at first");
    assert!(b.try_lock("sweeps").await.unwrap().is_none(), "held by a");
    // Another job's lock is its own.
    let other = b
        .try_lock("renewals")
        .await
        .unwrap()
        .expect("a different lock");
    // The holder goes (its connection closes, as when its node dies): free again.
    drop(held);
    let mut taken = None;
    for _ in 0..50 {
        taken = b.try_lock("sweeps").await.unwrap();
        if taken.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(taken.is_some(), "freed when its holder's connection closed");
    assert!(a.try_lock("sweeps").await.unwrap().is_none());
    drop(other);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_locking_records_in_opposite_orders_both_land() {
    let Some((pg, _drop)) = engine("deadlock").await else {
        return;
    };
    let pg = Arc::new(pg);
    put(&pg, &item(1, 0, "left", 0), Expect::Absent)
        .await
        .unwrap();
    put(&pg, &item(2, 0, "right", 0), Expect::Absent)
        .await
        .unwrap();
    // Pairs of batches writing 1 then 2, and 2 then 1: PostgreSQL aborts one of a
    // deadlocked pair; it is run again and lands.
    let tasks: Vec<_> = (0..6)
        .map(|n| {
            let pg = pg.clone();
            tokio::spawn(async move {
                let order: [u64; 2] = if n % 2 == 0 { [1, 2] } else { [2, 1] };
                let mut b = Batch::new();
                for id in order {
                    let s = pg.get::<Item>(&id.to_be_bytes()).await.unwrap().unwrap();
                    let mut next = s.value.clone();
                    next.rank += 1;
                    b.put(&next, Expect::Any).unwrap();
                }
                pg.commit(&b).await
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    for id in [1u64, 2] {
        let s = pg.get::<Item>(&id.to_be_bytes()).await.unwrap().unwrap();
        assert_eq!(s.rev, 7, "six writes of record {id} after its creation");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_index_is_found_and_rebuilt_from_the_records() {
    let Some((pg, drop_schema)) = engine("rebuild").await else {
        return;
    };
    for n in 0..12u64 {
        put(
            &pg,
            &item(n + 1, (n % 3) as u8, &format!("r{n}"), n as i64),
            Expect::Absent,
        )
        .await
        .unwrap();
    }
    assert!(pg.verify_indexes::<Item>().await.unwrap().is_clean());
    // Damage: an index entry and a unique key gone, a counter wrong.
    let url = database_url().expect("the same database");
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let s = &drop_schema.schema;
    client
        .batch_execute(&format!(
            "DELETE FROM {s}.idx WHERE k = (SELECT k FROM {s}.idx ORDER BY k LIMIT 1);
             DELETE FROM {s}.uniques WHERE k = (SELECT k FROM {s}.uniques ORDER BY k DESC LIMIT 1);
             UPDATE {s}.counters SET n = n + 5
              WHERE k = (SELECT k FROM {s}.counters ORDER BY k LIMIT 1);"
        ))
        .await
        .unwrap();
    let report = pg.verify_indexes::<Item>().await.unwrap();
    assert_eq!(
        (
            report.missing.len(),
            report.extra.len(),
            report.wrong_counters.len()
        ),
        (2, 0, 1),
        "{report:?}"
    );
    pg.rebuild_indexes::<Item>().await.unwrap();
    assert!(pg.verify_indexes::<Item>().await.unwrap().is_clean());
    assert_eq!(pg.count("item_by_rank", &[0]).await.unwrap(), 4);
    assert_eq!(
        pg.lookup_unique(&crate::UniqueKey::new("item_name", vec![2], "r11"))
            .await
            .unwrap(),
        Some(12u64.to_be_bytes().to_vec())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_dropped_half_way_leaves_no_transaction_or_lock_behind() {
    let Some((b, schema)) = engine("dropped_hold").await else {
        return;
    };
    // Node a with a single connection: whatever a dropped call leaves on it, its next
    // write would run on it.
    let a = PgEngine::connect(&schema.url, &schema.schema, 1)
        .await
        .unwrap();
    let it = item(1, 0, "held", 0);
    put(&b, &it, Expect::Absent).await.unwrap();
    let key = crate::store::layout::record_key(Item::COLLECTION, &1u64.to_be_bytes());
    let (_, _, held_by_b) = b.hold(&key, false).await.unwrap();
    // a waits for b's lock and gives up: its hold is dropped after BEGIN was sent.
    let waited = tokio::time::timeout(Duration::from_millis(300), a.hold(&key, false)).await;
    assert!(waited.is_err(), "b holds the record");
    b.release(held_by_b).await;
    // a's next write (the hot path: one UPDATE, no transaction of its own) is committed,
    // not left inside the dropped transaction …
    let mut same_keys = Batch::new();
    same_keys.put_keeping_keys(&it, Expect::Rev(1)).unwrap();
    let written = tokio::time::timeout(WAIT, a.commit(&same_keys)).await;
    assert_eq!(written.expect("a's write is not stuck"), Ok(vec![2]));
    // … so the other node sees it, and can hold the record again at once.
    let seen = tokio::time::timeout(WAIT, b.revision::<Item>(&1u64.to_be_bytes()))
        .await
        .expect("the read is not stuck")
        .unwrap();
    assert_eq!(seen, Some(2));
    let (value, _, again) = tokio::time::timeout(WAIT, b.hold(&key, false))
        .await
        .expect("no lock left behind")
        .unwrap();
    assert!(value.is_some());
    b.release(again).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_locks_take_no_pooled_connection_and_a_lost_one_is_noticed() {
    let Some((b, schema)) = engine("lost_lock").await else {
        return;
    };
    let a = PgEngine::connect(&schema.url, &schema.schema, 1)
        .await
        .unwrap();
    let sweeps = a.try_lock("sweeps").await.unwrap().expect("free");
    let webhooks = a.try_lock("webhooks").await.unwrap().expect("free");
    // Both locks held, and the single pooled connection is still there for the store.
    let read = tokio::time::timeout(WAIT, a.get_meta("anything")).await;
    assert_eq!(read.expect("the pool is not used up by locks"), Ok(None));
    assert!(!sweeps.is_lost() && !webhooks.is_lost());
    assert!(b.try_lock("sweeps").await.unwrap().is_none());

    // The database ends the session holding "sweeps" (a restart, a failover, a proxy
    // dropping the connection): its holder notices, and another node takes the job.
    let key = super::lock_key(&schema.schema, "sweeps") as u64;
    let admin = crate::testing::client(&schema.url).await;
    let ended = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_locks
             WHERE locktype = 'advisory' AND classid = $1 AND objid = $2 AND objsubid = 1",
            &[&((key >> 32) as u32), &(key as u32)],
        )
        .await
        .unwrap();
    assert_eq!(ended.len(), 1, "one session held the lock");
    let mut noticed = false;
    for _ in 0..100 {
        if sweeps.is_lost() {
            noticed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(noticed, "the holder sees the lock is gone");
    assert!(
        !webhooks.is_lost(),
        "the other lock is on its own connection"
    );
    assert!(b.try_lock("sweeps").await.unwrap().is_some());
    assert!(b.try_lock("webhooks").await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_of_one_new_record_behave_as_on_the_embedded_store() {
    let Some((pg, _drop)) = engine("racing_creates").await else {
        return;
    };
    let pg = Arc::new(pg);
    let race = |id: u64, expect: Expect| {
        let tasks: Vec<_> = (0..12)
            .map(|n| {
                let pg = pg.clone();
                let name = format!("racer {id}");
                tokio::spawn(async move { put(&pg, &item(id, 0, &name, n), expect).await })
            })
            .collect();
        async move {
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.unwrap());
            }
            out
        }
    };
    // Unconditional writes all land, one after the other.
    let any = race(7, Expect::Any).await;
    assert!(any.iter().all(Result::is_ok), "{any:?}");
    let stored = pg.get::<Item>(&7u64.to_be_bytes()).await.unwrap().unwrap();
    assert_eq!(stored.rev, 12);
    // Creates: one wins, the others conflict with the revision they find.
    let absent = race(8, Expect::Absent).await;
    assert_eq!(absent.iter().filter(|r| r.is_ok()).count(), 1, "{absent:?}");
    for r in absent.iter().filter(|r| r.is_err()) {
        assert!(
            matches!(r, Err(StorageError::Conflict { found: Some(1), .. })),
            "{r:?}"
        );
    }
}

async fn show(pg: &PgEngine, name: &str) -> String {
    let client = pg.client().await.unwrap();
    let row = client
        .query_one(&format!("SHOW {name}"), &[])
        .await
        .unwrap();
    row.get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_have_limits_and_the_url_can_change_them() {
    let Some((pg, schema)) = engine("session_limits").await else {
        return;
    };
    assert_eq!(show(&pg, "statement_timeout").await, "30s");
    assert_eq!(show(&pg, "lock_timeout").await, "10s");
    assert_eq!(
        show(&pg, "idle_in_transaction_session_timeout").await,
        "1min"
    );
    // `options` in the URL come after ours.
    let sep = if schema.url.contains('?') { '&' } else { '?' };
    let url = format!("{}{sep}options=-c%20lock_timeout%3D2000", schema.url);
    let tuned = PgEngine::connect(&url, &schema.schema, 1).await.unwrap();
    assert_eq!(show(&tuned, "lock_timeout").await, "2s");
    assert_eq!(show(&tuned, "statement_timeout").await, "30s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_write_keeps_its_connection_and_whole_collection_work_has_no_time_limit() {
    let Some((_, schema)) = engine("refused_keeps").await else {
        return;
    };
    // One connection: a refusal that closed it would show as a new backend.
    let pg = PgEngine::connect(&schema.url, &schema.schema, 1)
        .await
        .unwrap();
    let backend = || async {
        let client = pg.client().await.unwrap();
        let row = client
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .unwrap();
        row.get::<_, i32>(0)
    };
    let first = backend().await;
    put(&pg, &item(1, 0, "one", 0), Expect::Absent)
        .await
        .unwrap();
    // Refused inside a transaction (two operations, so not the single-UPDATE path).
    let mut b = Batch::new();
    b.put(&item(2, 0, "two", 0), Expect::Absent).unwrap();
    b.put(&item(1, 0, "one", 1), Expect::Rev(7)).unwrap();
    assert!(matches!(
        pg.commit(&b).await,
        Err(StorageError::Conflict { .. })
    ));
    // A unique key held by another record.
    assert!(matches!(
        put(&pg, &item(3, 0, "one", 0), Expect::Absent).await,
        Err(StorageError::Unique { .. })
    ));
    assert_eq!(
        backend().await,
        first,
        "rolled back and returned, not closed"
    );
    assert!(pg.get::<Item>(&2u64.to_be_bytes()).await.unwrap().is_none());

    let mut conn = pg.conn().await.unwrap();
    let tx = pg.unlimited(&mut conn).await.unwrap();
    let shown: String = tx
        .query_one("SHOW statement_timeout", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(shown, "0");
    tx.commit().await.unwrap();
    conn.release();
    assert_eq!(
        show(&pg, "statement_timeout").await,
        "30s",
        "only in that transaction"
    );
    assert_eq!(backend().await, first);
}
