//! Tallies (`tally.rs`) against a real database, through the [`Store`] API: the row moves
//! with its record's puts and deletes, reads merge it, counting is exact under a limit
//! across two engines on one schema, a stale revision counts nothing, deltas add up from
//! several writers, and a copied store is backfilled once. The embedded store's tallies
//! tree has its own tests (`sled/tally_tests.rs`); here, its import.
//! Skipped without a database, as `tests.rs` (`crate::testing`).

use super::tally::classify_miss;
use crate::store::layout::record_key;
use crate::store::tally_fixture::{get, id, key, put, Key};
use crate::store_tests::test_db::{client, fresh_schema, Dropper};
use crate::{Batch, Counted, Expect, Record, StorageError, Store, Tally};

/// A store over a fresh schema; `None` (skipped) without a test database.
async fn store(test: &str) -> Option<(Store, Dropper)> {
    let schema = fresh_schema(test)?;
    let store = Store::postgres(&schema.url, &schema.schema, 8)
        .await
        .unwrap_or_else(|e| panic!("cannot reach the test database at {}: {e}", schema.url));
    Some((store, schema))
}

/// A second engine (another node) on the schema of `schema`.
async fn other_node(schema: &Dropper) -> Store {
    Store::postgres(&schema.url, &schema.schema, 8)
        .await
        .unwrap()
}

/// The tally row as stored: (usage, limit, validations, last_at).
async fn row(schema: &Dropper, n: u64) -> Option<(i64, Option<i64>, i64, Option<i64>)> {
    let c = client(&schema.url).await;
    let k = record_key(Key::COLLECTION, &id(n));
    c.query_opt(
        &format!(
            "SELECT usage, limit_usage, validations, last_at FROM {}.tallies WHERE k = $1",
            schema.schema
        ),
        &[&k],
    )
    .await
    .unwrap()
    .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
}

fn done(usage: i64, validations: i64, last: i64) -> Counted {
    Counted::Done(Tally {
        bounded: usage,
        hits: validations,
        last_hit_us: Some(last),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tally_row_moves_with_its_record_and_reads_merge_it() {
    let Some((store, schema)) = store("tally_row").await else {
        return;
    };
    assert!(store.counters_apart() && store.is_shared());
    // The first put creates the row from the payload's counters.
    let mut k = key(1, Some(10));
    k.usage = 2;
    k.validations = 7;
    assert_eq!(put(&store, &k, Expect::Absent).await, 1);
    assert_eq!(row(&schema, 1).await, Some((2, Some(10), 7, None)));
    // Counting moves the row, not the record's revision; every read merges it.
    assert_eq!(
        store.count_hit::<Key>(&id(1), 1, 3, 50).await,
        Ok(done(5, 8, 50))
    );
    let (rev, read) = get(&store, 1).await;
    assert_eq!(
        (rev, read.usage, read.validations, read.last_at),
        (1, 5, 8, Some(50))
    );
    assert_eq!(store.revision::<Key>(&id(1)).await, Ok(Some(1)));
    put(&store, &key(2, None), Expect::Absent).await;
    let many = store.get_many::<Key>(&[id(2), id(1), id(3)]).await.unwrap();
    assert_eq!(many.len(), 2);
    assert_eq!((many[0].value.id, many[1].value.usage), (2, 5));
    let all = store.scan::<Key>().await.unwrap();
    assert_eq!(all[0].value, read);
    let (held, holding) = store.hold::<Key>(&id(1)).await.unwrap().unwrap();
    assert_eq!(held.unwrap().value, read);
    holding.release().await;
    // A later put with stale counters and a new limit: the limit is mirrored, the
    // counters stay the row's, also through a lone put keeping its keys.
    let mut stale = k.clone();
    stale.limit = Some(6);
    stale.note = "patched".into();
    assert_eq!(put(&store, &stale, Expect::Rev(1)).await, 2);
    assert_eq!(row(&schema, 1).await, Some((5, Some(6), 8, Some(50))));
    let mut b = Batch::new();
    stale.limit = Some(20);
    b.put_keeping_keys(&stale, Expect::Rev(2)).unwrap();
    assert_eq!(store.commit(&b).await.unwrap().revs, vec![3]);
    assert_eq!(row(&schema, 1).await, Some((5, Some(20), 8, Some(50))));
    let (_, read) = get(&store, 1).await;
    assert_eq!(
        (read.note.as_str(), read.usage, read.limit),
        ("patched", 5, Some(20))
    );
    // An explicit usage, in the batch of its put.
    let mut b = Batch::new();
    b.put(&read, Expect::Rev(3))
        .unwrap()
        .set_bounded::<Key>(&id(1), 1);
    store.commit(&b).await.unwrap();
    assert_eq!(row(&schema, 1).await, Some((1, Some(20), 8, Some(50))));
    // A delete takes the row; a record created again with that id starts afresh.
    let mut b = Batch::new();
    b.delete::<Key>(&id(1), Expect::Rev(4));
    store.commit(&b).await.unwrap();
    assert_eq!(row(&schema, 1).await, None);
    let mut b = Batch::new();
    b.set_bounded::<Key>(&id(1), 3);
    assert!(matches!(
        store.commit(&b).await,
        Err(StorageError::Conflict { .. })
    ));
    put(&store, &key(1, None), Expect::Absent).await;
    assert_eq!(row(&schema, 1).await, Some((0, None, 0, None)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tallied_increments_never_pass_the_limit_across_engines() {
    let Some((a, schema)) = store("tally_limit").await else {
        return;
    };
    let b = other_node(&schema).await;
    put(&a, &key(1, Some(500)), Expect::Absent).await;
    let tasks: Vec<_> = (0..1000i64)
        .map(|n| {
            let node = if n % 2 == 0 { a.clone() } else { b.clone() };
            tokio::spawn(async move { node.count_hit::<Key>(&id(1), 1, 1, n).await })
        })
        .collect();
    let (mut counted, mut refused) = (0, 0);
    for t in tasks {
        match t.await.unwrap().unwrap() {
            Counted::Done(_) => counted += 1,
            Counted::Limit {
                limit: 500,
                bounded: usage,
            } if usage >= 500 => refused += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((counted, refused), (500, 500));
    let (rev, k) = get(&b, 1).await;
    assert_eq!((rev, k.usage, k.validations), (1, 500, 500));
    // A plain validation (no usage) still counts at the limit.
    assert!(matches!(
        a.count_hit::<Key>(&id(1), 1, 0, 0).await,
        Ok(Counted::Done(Tally {
            bounded: 500,
            hits: 501,
            ..
        }))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_revision_is_refused_not_counted() {
    let Some((store, schema)) = store("tally_stale").await else {
        return;
    };
    put(&store, &key(1, Some(5)), Expect::Absent).await;
    let mut patched = key(1, Some(5));
    patched.note = "revoked".into();
    put(&store, &patched, Expect::Rev(1)).await;
    let before = row(&schema, 1).await;
    assert_eq!(
        store.count_hit::<Key>(&id(1), 1, 1, 9).await,
        Ok(Counted::Stale)
    );
    assert_eq!(
        store.count_hit::<Key>(&id(1), 1, 0, 9).await,
        Ok(Counted::Stale)
    );
    assert_eq!(
        store.count_hit::<Key>(&id(2), 1, 1, 9).await,
        Ok(Counted::Stale)
    );
    assert_eq!(row(&schema, 1).await, before);
    assert_eq!(
        store.count_hit::<Key>(&id(1), 2, 1, 9).await,
        Ok(done(1, 1, 9))
    );
    // A record without a row (written before its type kept tallies) counts nothing.
    client(&schema.url)
        .await
        .batch_execute(&format!("DELETE FROM {}.tallies", schema.schema))
        .await
        .unwrap();
    assert_eq!(
        store.count_hit::<Key>(&id(1), 2, 1, 9).await,
        Ok(Counted::Stale)
    );
}

/// The tally row's copy of its record's revision, as stored (`None`: no row).
async fn mirrored(schema: &Dropper, n: u64) -> Option<Option<u64>> {
    let c = client(&schema.url).await;
    let k = record_key(Key::COLLECTION, &id(n));
    c.query_opt(
        &format!("SELECT rev FROM {}.tallies WHERE k = $1", schema.schema),
        &[&k],
    )
    .await
    .unwrap()
    .map(|r| {
        r.get::<_, Option<Vec<u8>>>(0)
            .map(|b| u64::from_be_bytes(b.try_into().unwrap()))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tally_row_mirrors_its_records_revision_whoever_writes_it() {
    let Some((store, schema)) = store("tally_mirror").await else {
        return;
    };
    let sql = |q: &str| q.replace("{s}", &schema.schema);
    let k = record_key(Key::COLLECTION, &id(1));
    put(&store, &key(1, None), Expect::Absent).await;
    assert_eq!(mirrored(&schema, 1).await, Some(Some(1)));
    put(&store, &key(1, Some(4)), Expect::Rev(1)).await;
    assert_eq!(mirrored(&schema, 1).await, Some(Some(2)));
    // A writer that knows nothing of tallies (an older build, a hand edit) moves it too:
    // a copy read at revision 2 no longer counts.
    let c = client(&schema.url).await;
    c.execute(
        &sql("UPDATE {s}.records SET v = int8send(3) || substring(v from 9) WHERE k = $1"),
        &[&k],
    )
    .await
    .unwrap();
    assert_eq!(mirrored(&schema, 1).await, Some(Some(3)));
    assert_eq!(
        store.count_hit::<Key>(&id(1), 2, 1, 5).await,
        Ok(Counted::Stale)
    );
    assert_eq!(
        store.count_hit::<Key>(&id(1), 3, 1, 5).await,
        Ok(done(1, 1, 5))
    );
    // A row without the copy (made before the column) checks the record instead.
    clear_rev(&schema, 1).await;
    assert_eq!(
        store.count_hit::<Key>(&id(1), 2, 1, 6).await,
        Ok(Counted::Stale)
    );
    assert_eq!(
        store.count_hit::<Key>(&id(1), 3, 1, 6).await,
        Ok(done(2, 2, 6))
    );
    // ensure_tallies gives it back; the rows it creates carry it from the start.
    c.execute(&sql("DELETE FROM {s}.tallies"), &[])
        .await
        .unwrap();
    put(&store, &key(2, None), Expect::Absent).await;
    clear_rev(&schema, 2).await;
    assert_eq!(store.ensure_tallies::<Key>().await, Ok(1));
    assert_eq!(mirrored(&schema, 1).await, Some(Some(3)));
    assert_eq!(mirrored(&schema, 2).await, Some(Some(1)));
    // A record deleted behind the store's back leaves a row that counts nothing.
    c.execute(&sql("DELETE FROM {s}.records WHERE k = $1"), &[&k])
        .await
        .unwrap();
    assert_eq!(mirrored(&schema, 1).await, Some(None));
    assert_eq!(
        store.count_hit::<Key>(&id(1), 3, 1, 7).await,
        Ok(Counted::Stale)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tallies_of_an_older_build_gain_the_revision_at_start() {
    let Some(schema) = crate::testing::fresh_schema("tally_upgrade") else {
        return;
    };
    // The table as builds before the revision column made it, with a row in it.
    let s = &schema.schema;
    client(&schema.url)
        .await
        .batch_execute(&format!(
            "CREATE SCHEMA {s};
             CREATE TABLE {s}.records (k bytea PRIMARY KEY, v bytea NOT NULL);
             CREATE TABLE {s}.tallies (k bytea PRIMARY KEY, usage bigint NOT NULL,
                 limit_usage bigint, validations bigint NOT NULL, last_at bigint);"
        ))
        .await
        .unwrap();
    let store = Store::postgres(&schema.url, s, 4).await.unwrap();
    put(&store, &key(1, None), Expect::Absent).await;
    clear_rev(&schema, 1).await;
    // Opened again (another node starting): nothing to add, the row keeps working.
    let again = other_node(&schema).await;
    assert_eq!(again.ensure_tallies::<Key>().await, Ok(0));
    assert_eq!(mirrored(&schema, 1).await, Some(Some(1)));
    assert_eq!(
        again.count_hit::<Key>(&id(1), 1, 1, 3).await,
        Ok(done(1, 1, 3))
    );
}

/// Clears the revision copy of key `n`'s row, as a row from before the column has none.
async fn clear_rev(schema: &Dropper, n: u64) {
    client(&schema.url)
        .await
        .execute(
            &format!(
                "UPDATE {}.tallies SET rev = NULL WHERE k = $1",
                schema.schema
            ),
            &[&record_key(Key::COLLECTION, &id(n))],
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_and_ranges_are_refused_without_counting() {
    let Some((store, schema)) = store("tally_range").await else {
        return;
    };
    let mut k = key(1, Some(3));
    k.usage = 3;
    k.last_at = Some(100);
    put(&store, &k, Expect::Absent).await;
    assert_eq!(
        store.count_hit::<Key>(&id(1), 1, 1, 200).await,
        Ok(Counted::Limit {
            bounded: 3,
            limit: 3
        })
    );
    // Going down is within the limit; an earlier time leaves the latest as it was.
    assert_eq!(
        store.count_hit::<Key>(&id(1), 1, -2, 50).await,
        Ok(done(1, 1, 100))
    );
    let mut big = key(2, None);
    big.usage = i64::MAX - 1;
    put(&store, &big, Expect::Absent).await;
    assert_eq!(
        store.count_hit::<Key>(&id(2), 1, 2, 1).await,
        Ok(Counted::OutOfRange)
    );
    assert_eq!(row(&schema, 2).await, Some((i64::MAX - 1, None, 0, None)));
    assert_eq!(
        store.count_hit::<Key>(&id(2), 1, 1, 1).await,
        Ok(done(i64::MAX, 1, 1))
    );
}

#[test]
fn misses_are_told_apart() {
    assert_eq!(classify_miss(None, 1), Counted::Stale);
    assert_eq!(
        classify_miss(Some((5, Some(5))), 1),
        Counted::Limit {
            bounded: 5,
            limit: 5
        }
    );
    // Raced: the snapshot had room, the newer row had none.
    assert_eq!(
        classify_miss(Some((2, Some(5))), 2),
        Counted::Limit {
            bounded: 4,
            limit: 5
        }
    );
    assert_eq!(
        classify_miss(Some((i64::MAX, None)), 1),
        Counted::OutOfRange
    );
    // No limit, room in the snapshot: the row went meanwhile (a delete).
    assert_eq!(classify_miss(Some((1, None)), 1), Counted::Stale);
    assert_eq!(classify_miss(Some((9, Some(5))), 0), Counted::Stale);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_add_up_from_two_writers_and_keep_the_latest_time() {
    let Some((a, schema)) = store("tally_counts").await else {
        return;
    };
    let b = other_node(&schema).await;
    for n in 1..=50 {
        put(&a, &key(n, Some(1)), Expect::Absent).await;
    }
    // Each writer sends its keys in its own order, some twice in one call, and one key
    // that does not exist: 40 rounds of both at once.
    let writer = |store: Store, reverse: bool| {
        tokio::spawn(async move {
            for round in 0..40i64 {
                let mut counts: Vec<(Vec<u8>, i64, i64)> = (1..=51u64)
                    .map(|n| (id(n), 1, round * 10 + n as i64 + i64::from(reverse)))
                    .collect();
                counts.push((id(7), 2, 0));
                if reverse {
                    counts.reverse();
                }
                let after = store.add_hits::<Key>(&counts).await.unwrap();
                assert_eq!(after.len(), 50);
                assert!(after.iter().all(|(id, t)| id.len() == 8 && t.bounded == 0));
            }
        })
    };
    let (x, y) = tokio::join!(writer(a.clone(), false), writer(b.clone(), true));
    x.unwrap();
    y.unwrap();
    for n in 1..=50u64 {
        let (rev, k) = get(&a, n).await;
        let expected = if n == 7 { 240 } else { 80 };
        assert_eq!((rev, k.validations), (1, expected), "key {n}");
        assert_eq!(k.last_at, Some(390 + n as i64 + 1), "key {n}");
    }
    assert_eq!(row(&schema, 51).await, None);
    // Nothing to add: nothing sent.
    assert_eq!(a.add_hits::<Key>(&[]).await, Ok(vec![]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ensure_tallies_backfills_copied_keys_once() {
    let Some((pg, schema)) = store("tally_backfill").await else {
        return;
    };
    // Keys counted on the embedded store (their payloads carry the counters), copied.
    let sled = Store::temporary().unwrap();
    for n in 1..=2500u64 {
        let mut k = key(n, (n % 2 == 0).then_some(100));
        k.usage = n as i64 % 7;
        k.validations = n as i64;
        k.last_at = Some(n as i64 * 10);
        let mut b = Batch::new();
        b.put(&k, Expect::Absent).unwrap();
        sled.commit(&b).await.unwrap();
    }
    // As a build that kept the counters in payloads copied them: no tallies tree.
    let mut copied = sled.snapshot().unwrap();
    copied.trees.retain(|(name, _)| name != "tallies");
    pg.restore(&copied).await.unwrap();
    assert_eq!(row(&schema, 1).await, None);
    // Reads without a row give the payload's counters; counting needs the row.
    assert_eq!(get(&pg, 9).await.1.validations, 9);
    assert_eq!(
        pg.count_hit::<Key>(&id(9), 1, 0, 1).await,
        Ok(Counted::Stale)
    );
    // One node creates the rows while another may already have written one.
    put(&pg, &key(3000, None), Expect::Absent).await;
    let other = other_node(&schema).await;
    let (x, y) = tokio::join!(pg.ensure_tallies::<Key>(), other.ensure_tallies::<Key>());
    assert_eq!(x.unwrap() + y.unwrap(), 2500);
    assert_eq!(pg.ensure_tallies::<Key>().await, Ok(0));
    assert_eq!(row(&schema, 8).await, Some((1, Some(100), 8, Some(80))));
    // Rows made before the revision column get it, over several chunks.
    let c = client(&schema.url).await;
    let unset = format!(
        "SELECT count(*) FROM {}.tallies WHERE rev IS NULL",
        schema.schema
    );
    c.execute(
        &format!("UPDATE {}.tallies SET rev = NULL", schema.schema),
        &[],
    )
    .await
    .unwrap();
    assert_eq!(
        c.query_one(&unset, &[]).await.unwrap().get::<_, i64>(0),
        2501
    );
    assert_eq!(pg.ensure_tallies::<Key>().await, Ok(0));
    assert_eq!(c.query_one(&unset, &[]).await.unwrap().get::<_, i64>(0), 0);
    assert_eq!(mirrored(&schema, 2500).await, Some(Some(1)));
    assert_eq!(
        row(&schema, 2500).await,
        Some((1, Some(100), 2500, Some(25_000)))
    );
    assert_eq!(
        pg.count_hit::<Key>(&id(9), 1, 1, 1).await,
        Ok(done(3, 10, 90))
    );
    // A type that is not tallied has nothing to backfill.
    assert_eq!(pg.ensure_tallies::<crate::store_tests::Item>().await, Ok(0));
}

/// A backup of the embedded store (snapshot, its file, restore) keeps a tallied record's
/// counters, and so does the copy of that backup into PostgreSQL once the rows are made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_survive_a_backup_and_its_restore() {
    let sled = Store::temporary().unwrap();
    let mut k = key(1, Some(9));
    k.usage = 4;
    k.validations = 17;
    k.last_at = Some(1_234);
    put(&sled, &k, Expect::Absent).await;
    let mut file = Vec::new();
    sled.snapshot().unwrap().write_to(&mut file).unwrap();
    let backup = crate::Snapshot::read_from(&mut file.as_slice()).unwrap();
    let restored = Store::temporary().unwrap();
    restored.restore(&backup).await.unwrap();
    assert_eq!(get(&restored, 1).await, (1, k.clone()));
    let Some((pg, schema)) = store("tally_backup").await else {
        return;
    };
    pg.restore(&backup).await.unwrap();
    // Counters never moved apart on the embedded store: no entry, the payload's counters
    // are the truth, and the record's row comes from them.
    assert_eq!(pg.ensure_tallies::<Key>().await, Ok(1));
    assert_eq!(row(&schema, 1).await, Some((4, Some(9), 17, Some(1_234))));
    assert_eq!(get(&pg, 1).await, (1, k));
    assert_eq!(
        pg.count_hit::<Key>(&id(1), 1, 5, 2_000).await,
        Ok(done(9, 18, 2_000))
    );
}

/// Counters moved on the embedded store, in its tallies tree only (the payload is stale),
/// reach PostgreSQL's tally rows through the import of a backup.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_moved_apart_survive_the_import_into_postgres() {
    let sled = Store::temporary().unwrap();
    put(&sled, &key(1, Some(9)), Expect::Absent).await;
    put(&sled, &key(2, None), Expect::Absent).await;
    put(&sled, &key(3, None), Expect::Absent).await;
    assert_eq!(
        sled.count_hit::<Key>(&id(1), 1, 4, 1_000).await,
        Ok(done(4, 1, 1_000))
    );
    let mut counted = key(2, None);
    (counted.validations, counted.last_at) = (40, Some(7));
    let mut b = Batch::new();
    b.write_tally(&counted, 1);
    sled.commit(&b).await.unwrap();
    // Key 3's entry goes stale: its record is rewritten (its payload carries the counters).
    assert_eq!(
        sled.count_hit::<Key>(&id(3), 1, 0, 5).await,
        Ok(done(0, 1, 5))
    );
    let mut rewritten = key(3, None);
    (rewritten.note, rewritten.validations) = ("rewritten".into(), 8);
    put(&sled, &rewritten, Expect::Rev(1)).await;
    let Some((pg, schema)) = store("tally_import").await else {
        return;
    };
    pg.restore(&sled.snapshot().unwrap()).await.unwrap();
    assert_eq!(row(&schema, 1).await, Some((4, Some(9), 1, Some(1_000))));
    assert_eq!(row(&schema, 2).await, Some((0, None, 40, Some(7))));
    assert_eq!(mirrored(&schema, 1).await, Some(Some(1)));
    // The stale entry made no row: the payload gives it one.
    assert_eq!(row(&schema, 3).await, None);
    assert_eq!(pg.ensure_tallies::<Key>().await, Ok(1));
    assert_eq!(row(&schema, 3).await, Some((0, None, 8, None)));
    assert_eq!(get(&pg, 2).await.1.validations, 40);
    assert_eq!(get(&pg, 3).await, (2, rewritten));
    assert_eq!(
        pg.count_hit::<Key>(&id(1), 1, 6, 2_000).await,
        Ok(Counted::Limit {
            bounded: 4,
            limit: 9
        })
    );
    assert!(pg.verify_indexes::<Key>().await.unwrap().is_clean());
}

/// Waits (at most 10 s) until `f` holds.
async fn until(what: &str, f: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !f() {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_are_heard_in_commit_order_and_the_listener_resumes_after_being_killed() {
    let Some((a, schema)) = store("tally_listen").await else {
        return;
    };
    let b = other_node(&schema).await;
    let window = std::time::Duration::from_millis(100);
    let watch = a.listen(window).expect("postgres listens");
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let h = heard.clone();
    watch.subscribe(move |c, id, seq| h.lock().unwrap().push((c.to_string(), id.to_vec(), seq)));
    until("caught up", || watch.trusted_epoch().is_some()).await;
    let epoch = watch.epoch();
    assert!(epoch.is_multiple_of(2));
    // A create is not a change anyone holds; later puts (and usage set) are, in order.
    let mut k = key(1, None);
    let rev = put(&b, &k, Expect::Absent).await;
    k.note = "changed".into();
    let rev = put(&b, &k, Expect::Rev(rev)).await;
    let mut batch = Batch::new();
    batch.set_bounded::<Key>(&id(1), 7);
    b.commit(&batch).await.unwrap();
    k.note = "again".into();
    put(&b, &k, Expect::Rev(rev)).await;
    until("three changes heard", || heard.lock().unwrap().len() == 3).await;
    let seen = heard.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            (Key::COLLECTION.to_string(), id(1), 1),
            (Key::COLLECTION.to_string(), id(1), 2),
            (Key::COLLECTION.to_string(), id(1), 3)
        ]
    );
    // Counting is no change: nothing heard.
    let (rev, _) = get(&b, 1).await;
    b.count_hit::<Key>(&id(1), rev, 1, 5).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(heard.lock().unwrap().len(), 3);

    // The listener's connection killed from the database's side: untrusted at once (an
    // odd epoch), then connected again in a newer epoch, and changes are heard again.
    let c = client(&schema.url).await;
    let killed = c
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
            &[&format!("tollgate-listen {}", schema.schema)],
        )
        .await
        .unwrap();
    assert_eq!(killed.len(), 1);
    until("the loss noticed", || watch.epoch() > epoch).await;
    until("caught up again", || watch.trusted_epoch().is_some()).await;
    assert!(watch.epoch() >= epoch + 2);
    assert_eq!(watch.reconnects(), 1);
    let (rev, mut k) = get(&b, 1).await;
    k.note = "after".into();
    put(&b, &k, Expect::Rev(rev)).await;
    until("the change after the reconnect heard", || {
        heard.lock().unwrap().len() == 4
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notifying_write_answers_a_window_after_its_commit() {
    let Some((a, _schema)) = store("tally_wait").await else {
        return;
    };
    let window = std::time::Duration::from_millis(300);
    let _watch = a.listen(window).expect("postgres listens");
    let k = key(1, None);
    let rev = put(&a, &k, Expect::Absent).await;
    // (A lower bound only: how much longer the machine takes says nothing.)
    let started = std::time::Instant::now();
    put(&a, &k, Expect::Rev(rev)).await;
    assert!(started.elapsed() >= window, "a change waits the window");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_plain_counts_of_one_key_share_statements_and_all_count() {
    let Some((store, schema)) = store("tally_riders").await else {
        return;
    };
    let other = other_node(&schema).await;
    let k = key(1, Some(3));
    let rev = put(&store, &k, Expect::Absent).await;
    // 300 plain counts and 10 increments (limit 3) of one key, over two nodes at once.
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..310i64 {
        let node = if i % 2 == 0 {
            store.clone()
        } else {
            other.clone()
        };
        let n = i64::from(i >= 300);
        tasks.spawn(async move { (n, node.count_hit::<Key>(&id(1), rev, n, i).await) });
    }
    let (mut plain_done, mut inc_done, mut inc_limited) = (0, 0, 0);
    while let Some(joined) = tasks.join_next().await {
        match joined.unwrap() {
            (0, Ok(Counted::Done(_))) => plain_done += 1,
            (1, Ok(Counted::Done(_))) => inc_done += 1,
            (1, Ok(Counted::Limit { .. })) => inc_limited += 1,
            other => panic!("unexpected: {other:?}"),
        }
    }
    assert_eq!((plain_done, inc_done, inc_limited), (300, 3, 7));
    let (usage, limit, validations, last) = row(&schema, 1).await.unwrap();
    assert_eq!((usage, limit, validations), (3, Some(3), 303));
    assert!(last.is_some_and(|l| l >= 299), "{last:?}");
}

/// The counting function locks its rows in the order of its entries (the callers' key
/// order), whatever the rows' places in the table: with row B held elsewhere, a call over
/// [A, B] holds A while it waits for B, a call over [B, A] holds nothing yet. That order
/// is what keeps two nodes' statements over shared rows from deadlocking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counting_locks_rows_in_the_order_of_its_entries() {
    let Some((store, schema)) = store("tally_lock_order").await else {
        return;
    };
    // Many rows, written in an order unlike the keys' and analyzed, so that a plan that
    // went by the table (a hash join over it) would not follow the entries.
    put(&store, &key(1, None), Expect::Absent).await;
    let s = &schema.schema;
    let setup = client(&schema.url).await;
    setup
        .batch_execute(&format!(
            "INSERT INTO {s}.tallies (k, usage, validations)
             SELECT 'tkey'::bytea || '\\x00'::bytea || int8send(n), 0, 0
             FROM generate_series(5000, 2, -1) AS n;
             ANALYZE {s}.tallies;"
        ))
        .await
        .unwrap();
    let k = |n: u64| record_key(Key::COLLECTION, &id(n));
    // A thousand entries from A to B; the table holds B before A.
    let (a, b) = (k(2), k(1001));
    let up: Vec<Vec<u8>> = (2..=1001).map(k).collect();
    let down: Vec<Vec<u8>> = up.iter().rev().cloned().collect();
    for (entries, a_held) in [(up, true), (down, false)] {
        // Row B held by another transaction.
        let mut holder = client(&schema.url).await;
        let tx = holder.transaction().await.unwrap();
        tx.execute(
            &format!("SELECT 1 FROM {s}.tallies WHERE k = $1 FOR UPDATE"),
            &[&b],
        )
        .await
        .unwrap();
        // The call, waiting for B.
        let caller = client(&schema.url).await;
        // A session whose plans are made once, for any arrays (as a busy one's are): the
        // function's own settings must still keep the order.
        caller
            .batch_execute("SET plan_cache_mode = force_generic_plan")
            .await
            .unwrap();
        let pid: i32 = caller
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .unwrap()
            .get(0);
        let sql = format!("SELECT o_k, o_counted FROM {s}.count_validations($1, $2, $3, $4, $5)");
        let call = tokio::spawn({
            let entries = entries.clone();
            async move {
                let n = entries.len();
                let none: Vec<Option<Vec<u8>>> = vec![None; n];
                let rows = caller
                    .query(
                        &sql,
                        &[
                            &entries,
                            &none,
                            &vec![0i64; n],
                            &vec![7i64; n],
                            &vec![1i64; n],
                        ],
                    )
                    .await
                    .unwrap();
                rows.iter().filter(|r| r.get::<_, bool>(1)).count()
            }
        });
        let watcher = client(&schema.url).await;
        let mut waited = 0;
        loop {
            let waiting: bool = watcher
                .query_one(
                    "SELECT coalesce(bool_or(wait_event_type = 'Lock'), false)
                     FROM pg_stat_activity WHERE pid = $1",
                    &[&pid],
                )
                .await
                .unwrap()
                .get(0);
            if waiting {
                break;
            }
            waited += 1;
            assert!(waited < 500, "the call never waited for row B");
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        // Is row A held (by the waiting call)?
        let mut probe = client(&schema.url).await;
        let ptx = probe.transaction().await.unwrap();
        let taken = ptx
            .execute(
                &format!("SELECT 1 FROM {s}.tallies WHERE k = $1 FOR UPDATE NOWAIT"),
                &[&a],
            )
            .await;
        let held = match taken {
            Ok(_) => false,
            Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE) => {
                true
            }
            Err(e) => panic!("probe: {e}"),
        };
        ptx.rollback().await.unwrap();
        assert_eq!(
            held, a_held,
            "ascending: {a_held}: row A held while waiting for B"
        );
        tx.rollback().await.unwrap();
        assert_eq!(
            call.await.unwrap(),
            1000,
            "every entry counts once B is free"
        );
    }
    assert_eq!(row(&schema, 2).await.map(|r| r.2), Some(2));
    assert_eq!(row(&schema, 1001).await.map(|r| r.2), Some(2));
}
