//! Tallies (`tally.rs`) against a real database, through the [`Store`] API: the row moves
//! with its record's puts and deletes, and reads merge it. The embedded store keeps none.
//! Skipped without a database, as `tests.rs` (`crate::testing`).

use serde::{Deserialize, Serialize};

use crate::store_tests::test_db::{client, fresh_schema, Dropper};
use crate::{codec, Batch, Expect, Record, StorageError, Store, Tally};

/// A record whose counters are tallied, as a license key's are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Key {
    id: u64,
    note: String,
    limit: Option<i64>,
    usage: i64,
    validations: i64,
    last_at: Option<i64>,
}

impl Record for Key {
    const COLLECTION: &'static str = "tkey";
    const VERSION: u16 = 1;
    const TALLIED: bool = true;

    fn id_key(&self) -> Vec<u8> {
        self.id.to_be_bytes().to_vec()
    }
    fn encode(&self) -> Result<Vec<u8>, StorageError> {
        codec::encode(self)
    }
    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError> {
        codec::decode(Self::COLLECTION, version, payload)
    }
    fn tally(&self) -> (Tally, Option<i64>) {
        (
            Tally {
                usage: self.usage,
                validations: self.validations,
                last_at_us: self.last_at,
            },
            self.limit,
        )
    }
    fn set_tally(&mut self, t: &Tally) {
        self.usage = t.usage;
        self.validations = t.validations;
        self.last_at = t.last_at_us;
    }
}

fn key(id: u64, limit: Option<i64>) -> Key {
    Key {
        id,
        note: "new".into(),
        limit,
        usage: 0,
        validations: 0,
        last_at: None,
    }
}

fn id(n: u64) -> Vec<u8> {
    n.to_be_bytes().to_vec()
}

/// A store over a fresh schema; `None` (skipped) without a test database.
async fn store(test: &str) -> Option<(Store, Dropper)> {
    let schema = fresh_schema(test)?;
    let store = Store::postgres(&schema.url, &schema.schema, 8)
        .await
        .unwrap_or_else(|e| panic!("cannot reach the test database at {}: {e}", schema.url));
    Some((store, schema))
}

async fn put(store: &Store, k: &Key, expect: Expect) -> u64 {
    let mut b = Batch::new();
    b.put(k, expect).unwrap();
    store.commit(&b).await.unwrap().revs[0]
}

async fn get(store: &Store, n: u64) -> (u64, Key) {
    let s = store.get::<Key>(&id(n)).await.unwrap().unwrap();
    (s.rev, s.value)
}

/// The tally row as stored: (usage, limit, validations, last_at).
async fn row(schema: &Dropper, n: u64) -> Option<(i64, Option<i64>, i64, Option<i64>)> {
    let c = client(&schema.url).await;
    let mut k = b"tkey\0".to_vec();
    k.extend_from_slice(&id(n));
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

/// Adds `n` to the usage of key `n`'s tally row, one validation, at `at` (the latest).
async fn count(schema: &Dropper, n: u64, usage: i64, at: i64) {
    let c = client(&schema.url).await;
    let mut k = b"tkey\0".to_vec();
    k.extend_from_slice(&id(n));
    c.execute(
        &format!(
            "UPDATE {}.tallies SET usage = usage + $2, validations = validations + 1,
             last_at = GREATEST(last_at, $3) WHERE k = $1",
            schema.schema
        ),
        &[&k, &usage, &at],
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tally_row_moves_with_its_record_and_reads_merge_it() {
    let Some((store, schema)) = store("tally_row").await else {
        return;
    };
    assert!(store.keeps_tallies());
    // The first put creates the row from the payload's counters.
    let mut k = key(1, Some(10));
    k.usage = 2;
    k.validations = 7;
    assert_eq!(put(&store, &k, Expect::Absent).await, 1);
    assert_eq!(row(&schema, 1).await, Some((2, Some(10), 7, None)));
    // Counts move the row, not the record's revision; every read merges it.
    count(&schema, 1, 3, 50).await;
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
        .set_tally_usage::<Key>(&id(1), 1);
    store.commit(&b).await.unwrap();
    assert_eq!(row(&schema, 1).await, Some((1, Some(20), 8, Some(50))));
    // A delete takes the row; a record created again with that id starts afresh.
    let mut b = Batch::new();
    b.delete::<Key>(&id(1), Expect::Rev(4));
    store.commit(&b).await.unwrap();
    assert_eq!(row(&schema, 1).await, None);
    let mut b = Batch::new();
    b.set_tally_usage::<Key>(&id(1), 3);
    assert!(matches!(
        store.commit(&b).await,
        Err(StorageError::Conflict { .. })
    ));
    put(&store, &key(1, None), Expect::Absent).await;
    assert_eq!(row(&schema, 1).await, Some((0, None, 0, None)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_store_keeps_no_tallies() {
    let store = Store::temporary().unwrap();
    assert!(!store.keeps_tallies());
    let mut k = key(1, Some(5));
    k.usage = 4;
    put(&store, &k, Expect::Absent).await;
    // Its payload carries the counters: a usage set as a tally changes nothing.
    let mut b = Batch::new();
    b.set_tally_usage::<Key>(&id(1), 0);
    store.commit(&b).await.unwrap();
    k.usage = 5;
    let mut b = Batch::new();
    b.put_keeping_keys(&k, Expect::Rev(1)).unwrap();
    store.commit(&b).await.unwrap();
    assert_eq!(get(&store, 1).await, (2, k));
}
