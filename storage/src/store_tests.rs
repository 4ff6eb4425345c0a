//! The store's own test suite. The tests of its contract are written once, as an async
//! function of the [`Store`] under test, and run on both engines by [`both_engines!`]:
//! `<test>::embedded` on a temporary embedded store, `<test>::postgres` on a fresh schema
//! of the test database ([`test_db`]). The tests of the embedded engine's own machinery
//! (the group-commit flusher, durability across a reopen, failed flushes, snapshots, its
//! on-disk bytes) run on it alone.

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

async fn put(store: &Store, i: &Item, expect: Expect) -> Result<Committed, StorageError> {
    let mut b = Batch::new();
    b.put(i, expect)?;
    store.commit(&b).await
}

/// [`put`] through the embedded engine's synchronous commit, for threads outside tokio.
fn put_in_place(store: &Store, i: &Item, expect: Expect) -> Result<Committed, StorageError> {
    let mut b = Batch::new();
    b.put(i, expect)?;
    store
        .commit_in_place(&b)
        .expect("the embedded engine commits in place")
}

fn ids_of(raw: &[Vec<u8>]) -> Vec<u64> {
    raw.iter()
        .map(|k| u64::from_be_bytes(k.as_slice().try_into().unwrap()))
        .collect()
}

fn ids(page: &Page) -> Vec<u64> {
    ids_of(&page.ids)
}

async fn page(
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
        .await
        .unwrap()
}

/// Runs a test of the store's contract, `async fn $test(store: Store)`, on both engines:
/// `mod $test { embedded, postgres }`. With `raw`, the test also gets the store's [`Raw`]
/// tables: `async fn $test(store: Store, raw: Raw)`. With `ignore_embedded = "why"`, the
/// embedded variant is `#[ignore]`d: a known bug of that engine, kept visible
/// (`cargo test -- --ignored`) until it is fixed.
macro_rules! both_engines {
    ($test:ident $(, ignore_embedded = $why:literal)?) => {
        mod $test {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            $(#[ignore = $why])?
            async fn embedded() {
                super::$test(crate::Store::temporary().unwrap()).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let Some((store, _schema)) = super::test_db::store(stringify!($test)).await else {
                    return;
                };
                super::$test(store).await;
            }
        }
    };
    ($test:ident, raw) => {
        mod $test {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn embedded() {
                let store = crate::Store::temporary().unwrap();
                super::$test(store.clone(), super::Raw::Embedded(store)).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let Some((store, schema)) = super::test_db::store(stringify!($test)).await else {
                    return;
                };
                let raw = super::Raw::postgres(&schema).await;
                super::$test(store, raw).await;
            }
        }
    };
}

/// The PostgreSQL test database, shared by the tests of both engines here and by the
/// engine's own (`store/pg/tests.rs`): `TOLLGATE_TEST_DATABASE_URL`, or the `PG*`
/// variables `pg_virtualenv` sets (`.ci/run` starts one). Without a database a test says
/// "skipped" on a developer machine and fails under `CI=true`. Each test works in a schema
/// of its own, dropped at the end.
pub(crate) use crate::testing as test_db;

/// Beneath a store's API, on either engine: its index entries and counters as stored
/// (both engines hold the same keys and values), to damage them the same way on both.
pub(crate) enum Raw {
    Embedded(Store),
    Postgres {
        client: tokio_postgres::Client,
        schema: String,
    },
}

impl Raw {
    async fn postgres(schema: &test_db::Dropper) -> Raw {
        Raw::Postgres {
            client: test_db::client(&schema.url).await,
            schema: schema.schema.clone(),
        }
    }

    /// Every stored index entry's key, in order.
    async fn index_keys(&self) -> Vec<Vec<u8>> {
        match self {
            Raw::Embedded(store) => store.embedded().inner_index_keys(),
            Raw::Postgres { client, schema } => client
                .query(&format!("SELECT k FROM {schema}.idx ORDER BY k"), &[])
                .await
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect(),
        }
    }

    /// Removes an index entry, leaving its record and counter as they are.
    async fn remove_index(&self, key: &[u8]) {
        match self {
            Raw::Embedded(store) => store.embedded().inner_remove_index(key),
            Raw::Postgres { client, schema } => {
                let removed = client
                    .execute(&format!("DELETE FROM {schema}.idx WHERE k = $1"), &[&key])
                    .await
                    .unwrap();
                assert_eq!(removed, 1);
            }
        }
    }

    /// Adds an index entry no record derives (for id 0).
    async fn insert_index(&self, key: Vec<u8>) {
        match self {
            Raw::Embedded(store) => store.embedded().inner_insert_index(key),
            Raw::Postgres { client, schema } => {
                client
                    .execute(
                        &format!("INSERT INTO {schema}.idx (k, id) VALUES ($1, $2)"),
                        &[&key, &[0u8; 8].as_slice()],
                    )
                    .await
                    .unwrap();
            }
        }
    }

    /// Sets a counter to `value`, whatever it was.
    async fn set_counter(&self, key: Vec<u8>, value: u64) {
        match self {
            Raw::Embedded(store) => store.embedded().inner_set_counter(key, value),
            Raw::Postgres { client, schema } => {
                let value = i64::try_from(value).unwrap();
                client
                    .execute(
                        &format!(
                            "INSERT INTO {schema}.counters (k, n) VALUES ($1, $2)
                             ON CONFLICT (k) DO UPDATE SET n = EXCLUDED.n"
                        ),
                        &[&key, &value],
                    )
                    .await
                    .unwrap();
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The store's contract, on both engines.
// ---------------------------------------------------------------------------------------

both_engines!(put_get_and_revisions);
async fn put_get_and_revisions(store: Store) {
    let a = item(1, 1, "alpha", 5);
    let c = put(&store, &a, Expect::Absent).await.unwrap();
    assert_eq!(c.revs, vec![1]);
    let got = store.get::<Item>(&a.id_key()).await.unwrap().unwrap();
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
    assert_eq!(put(&store, &b, Expect::Rev(1)).await.unwrap().revs, vec![2]);
    assert_eq!(
        store.get::<Item>(&a.id_key()).await.unwrap().unwrap().rev,
        2
    );
    assert_eq!(store.revision::<Item>(&a.id_key()).await.unwrap(), Some(2));
    assert!(store
        .get::<Item>(&9u64.to_be_bytes())
        .await
        .unwrap()
        .is_none());
    assert_eq!(
        store.revision::<Item>(&9u64.to_be_bytes()).await.unwrap(),
        None
    );
}

both_engines!(get_many_gives_one_record_per_id_asked_in_order);
async fn get_many_gives_one_record_per_id_asked_in_order(store: Store) {
    for (id, name) in [(1, "one"), (2, "two"), (3, "three")] {
        put(&store, &item(id, 1, name, 0), Expect::Absent)
            .await
            .unwrap();
    }
    let ids: Vec<Vec<u8>> = [3u64, 1, 9, 3, 2]
        .iter()
        .map(|id| id.to_be_bytes().to_vec())
        .collect();
    let got = store.get_many::<Item>(&ids).await.unwrap();
    let names: Vec<&str> = got.iter().map(|s| s.value.name.as_str()).collect();
    // Missing ids are skipped; a repeated id is given again.
    assert_eq!(names, ["three", "one", "three", "two"]);
}

both_engines!(conditional_writes_detect_conflicts);
async fn conditional_writes_detect_conflicts(store: Store) {
    let a = item(1, 1, "alpha", 5);
    put(&store, &a, Expect::Absent).await.unwrap();
    assert!(matches!(
        put(&store, &a, Expect::Absent).await,
        Err(StorageError::Conflict { found: Some(1), .. })
    ));
    assert!(matches!(
        put(&store, &a, Expect::Rev(7)).await,
        Err(StorageError::Conflict { found: Some(1), .. })
    ));
    let missing = item(2, 1, "beta", 1);
    assert!(matches!(
        put(&store, &missing, Expect::Rev(1)).await,
        Err(StorageError::Conflict { found: None, .. })
    ));
    // A failed write leaves the record as it was.
    assert_eq!(
        store.get::<Item>(&a.id_key()).await.unwrap().unwrap().rev,
        1
    );
}

both_engines!(a_batch_is_all_or_nothing);
async fn a_batch_is_all_or_nothing(store: Store) {
    put(&store, &item(1, 1, "alpha", 1), Expect::Absent)
        .await
        .unwrap();
    let mut b = Batch::new();
    b.put(&item(2, 1, "beta", 2), Expect::Absent).unwrap();
    // Same name in the same tenant: violates the unique key, so the whole batch aborts.
    b.put(&item(3, 1, "ALPHA", 3), Expect::Absent).unwrap();
    assert_eq!(
        store.commit(&b).await,
        Err(StorageError::Unique {
            constraint: "item_name"
        })
    );
    assert!(store
        .get::<Item>(&2u64.to_be_bytes())
        .await
        .unwrap()
        .is_none());
    assert_eq!(store.count("item_by_rank", &[1]).await.unwrap(), 1);
    assert!(store.verify_indexes::<Item>().await.unwrap().is_clean());
}

both_engines!(unique_keys_are_per_tenant_and_move_with_the_record);
async fn unique_keys_are_per_tenant_and_move_with_the_record(store: Store) {
    put(&store, &item(1, 1, "alpha", 1), Expect::Absent)
        .await
        .unwrap();
    // Another tenant may use the same name.
    put(&store, &item(2, 2, "alpha", 1), Expect::Absent)
        .await
        .unwrap();
    let key = UniqueKey::new("item_name", vec![1], "alpha");
    assert_eq!(
        store.lookup_unique(&key).await.unwrap(),
        Some(1u64.to_be_bytes().to_vec())
    );
    // Renaming frees the old name.
    put(&store, &item(1, 1, "gamma", 1), Expect::Rev(1))
        .await
        .unwrap();
    assert_eq!(store.lookup_unique(&key).await.unwrap(), None);
    put(&store, &item(3, 1, "alpha", 1), Expect::Absent)
        .await
        .unwrap();
    assert_eq!(
        store.lookup_unique(&key).await.unwrap(),
        Some(3u64.to_be_bytes().to_vec())
    );
}

both_engines!(unique_keys_are_looked_up_many_at_once_in_order);
async fn unique_keys_are_looked_up_many_at_once_in_order(store: Store) {
    put(&store, &item(1, 1, "alpha", 1), Expect::Absent)
        .await
        .unwrap();
    put(&store, &item(2, 2, "alpha", 1), Expect::Absent)
        .await
        .unwrap();
    put(&store, &item(3, 1, "beta", 1), Expect::Absent)
        .await
        .unwrap();
    let key = |tenant: u8, name: &str| UniqueKey::new("item_name", vec![tenant], name);
    let id = |n: u64| Some(n.to_be_bytes().to_vec());
    // In the keys' order, a missing key as None, a repeated key given again, each tenant
    // its own.
    let got = store
        .lookup_unique_many(&[
            key(1, "beta"),
            key(1, "gamma"),
            key(2, "alpha"),
            key(1, "alpha"),
            key(1, "beta"),
        ])
        .await
        .unwrap();
    assert_eq!(got, vec![id(3), None, id(2), id(1), id(3)]);
    assert!(store.lookup_unique_many(&[]).await.unwrap().is_empty());
}

/// Items 0..25 of tenant 1, named `nNN`, ranked by a permutation of -12..=12.
async fn put_ranked(store: &Store) {
    for n in 0..25u64 {
        let rank = (n as i64 * 7) % 25 - 12;
        put(
            store,
            &item(n, 1, &format!("n{n:02}"), rank),
            Expect::Absent,
        )
        .await
        .unwrap();
    }
}

both_engines!(pages_are_sorted_counted_and_offset);
async fn pages_are_sorted_counted_and_offset(store: Store) {
    put_ranked(&store).await;
    put(&store, &item(100, 2, "other", 0), Expect::Absent)
        .await
        .unwrap();
    let t1 = vec![vec![1u8]];
    let p = page(&store, "item_by_rank", &t1, Direction::Asc, 0, 10).await;
    assert_eq!(p.total, 25);
    let everything = page(&store, "item_by_rank", &t1, Direction::Asc, 0, 100).await;
    let all: Vec<Item> = store
        .get_many::<Item>(&everything.ids)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.value)
        .collect();
    let ranks: Vec<i64> = all.iter().map(|i| i.rank).collect();
    assert_eq!(ranks, (-12..=12).collect::<Vec<_>>());
    assert_eq!(p.ids.len(), 10);
    // Third page of 10 has the last 5.
    let p3 = page(&store, "item_by_rank", &t1, Direction::Asc, 20, 10).await;
    assert_eq!(p3.ids.len(), 5);
    assert_eq!(p3.total, 25);
    // Descending is the reverse.
    let desc = page(&store, "item_by_name", &t1, Direction::Desc, 0, 3).await;
    assert_eq!(ids(&desc), vec![24, 23, 22]);
    // Past the end: empty, same total.
    let past = page(&store, "item_by_name", &t1, Direction::Asc, 50, 10).await;
    assert!(past.ids.is_empty());
    assert_eq!(past.total, 25);
}

both_engines!(a_page_past_the_middle_is_the_same_read_from_the_other_end);
async fn a_page_past_the_middle_is_the_same_read_from_the_other_end(store: Store) {
    put_ranked(&store).await;
    let t1 = vec![vec![1u8]];
    for direction in [Direction::Asc, Direction::Desc] {
        let everything = ids(&page(&store, "item_by_rank", &t1, direction, 0, 100).await);
        assert_eq!(everything.len(), 25);
        // Every offset and a few limits: what the page holds is the same slice of the
        // whole order, whichever end it is read from.
        for limit in [1u64, 3, 7, 10, 25, 30] {
            for offset in 0..=26u64 {
                let p = page(&store, "item_by_rank", &t1, direction, offset, limit).await;
                let from = (offset as usize).min(25);
                let to = ((offset + limit) as usize).min(25);
                assert_eq!(
                    ids(&p),
                    everything[from..to].to_vec(),
                    "{direction:?} offset {offset} limit {limit}"
                );
                assert_eq!(p.total, 25);
            }
        }
    }
    // Only one tenant reads from the other end.
    let q = PageQuery {
        index: "item_by_rank",
        tenants: &t1,
        direction: Direction::Asc,
        offset: 20,
        limit: 10,
    };
    let reversed = q.from_nearer_end(25).unwrap();
    assert_eq!(
        (reversed.direction, reversed.offset, reversed.limit),
        (Direction::Desc, 0, 5)
    );
    assert!(q.from_nearer_end(50).is_none(), "nearer the start");
    let two = vec![vec![1u8], vec![2u8]];
    assert!(PageQuery { tenants: &two, ..q }
        .from_nearer_end(25)
        .is_none());
}

/// Items of tenant 1 named `nNNNNN`, committed many to a batch.
async fn put_named(store: &Store, numbers: impl IntoIterator<Item = u64>) {
    let numbers: Vec<u64> = numbers.into_iter().collect();
    for chunk in numbers.chunks(500) {
        let mut b = Batch::new();
        for n in chunk {
            b.put(&item(*n, 1, &format!("n{n:05}"), 0), Expect::Absent)
                .unwrap();
        }
        store.commit(&b).await.unwrap();
    }
}

/// Every deep page (past the embedded engine's first mark from both ends) against the
/// slice of the whole order it stands for, in both directions and a few limits.
async fn deep_pages_are_slices_of_the_whole(store: &Store, when: &str) {
    let t1 = vec![vec![1u8]];
    for direction in [Direction::Asc, Direction::Desc] {
        let whole = page(store, "item_by_name", &t1, direction, 0, 100_000).await;
        let everything = ids(&whole);
        let n = everything.len() as u64;
        assert_eq!(whole.total, n);
        for offset in [
            0,
            1023,
            1024,
            1025,
            1500,
            2047,
            2048,
            2049,
            2222,
            2900,
            n - 1,
            n,
        ] {
            for limit in [1u64, 10, 100] {
                let p = page(store, "item_by_name", &t1, direction, offset, limit).await;
                let from = (offset.min(n)) as usize;
                let to = ((offset + limit).min(n)) as usize;
                assert_eq!(
                    ids(&p),
                    everything[from..to].to_vec(),
                    "{when}: {direction:?} offset {offset} limit {limit} of {n}"
                );
                assert_eq!(p.total, n);
            }
        }
    }
}

both_engines!(deep_pages_stay_true_as_entries_come_and_go);
async fn deep_pages_stay_true_as_entries_come_and_go(store: Store) {
    // 4,000 entries: a page in the middle is more than a mark's stride from either end.
    put_named(&store, (0..8000).step_by(2)).await;
    deep_pages_are_slices_of_the_whole(&store, "filled").await;
    // Read again: from the marks the first reads noted.
    deep_pages_are_slices_of_the_whole(&store, "again").await;
    // Added past the last mark (a list growing at its end), in the middle (before some
    // marks), removed near the start (before all of them).
    put_named(&store, [9001, 9003]).await;
    deep_pages_are_slices_of_the_whole(&store, "grown at the end").await;
    put_named(&store, [2001, 4001, 4003]).await;
    deep_pages_are_slices_of_the_whole(&store, "added in the middle").await;
    let mut b = Batch::new();
    for n in [10u64, 12, 3000] {
        b.delete::<Item>(&n.to_be_bytes(), Expect::Any);
    }
    store.commit(&b).await.unwrap();
    deep_pages_are_slices_of_the_whole(&store, "removed").await;
}

both_engines!(pages_merge_several_tenants);
async fn pages_merge_several_tenants(store: Store) {
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
        .await
        .unwrap();
    }
    let tenants = vec![vec![1u8], vec![2u8]];
    let p = page(&store, "item_by_rank", &tenants, Direction::Asc, 0, 10).await;
    assert_eq!(ids(&p), vec![2, 3, 5, 1]);
    assert_eq!(p.total, 4);
    let p = page(&store, "item_by_rank", &tenants, Direction::Desc, 1, 2).await;
    assert_eq!(ids(&p), vec![5, 3]);
}

both_engines!(updates_and_deletes_maintain_indexes_and_counters);
async fn updates_and_deletes_maintain_indexes_and_counters(store: Store) {
    put(&store, &item(1, 1, "a", 1), Expect::Absent)
        .await
        .unwrap();
    put(&store, &item(2, 1, "b", 2), Expect::Absent)
        .await
        .unwrap();
    // Move item 1 to tenant 2 and change its rank.
    put(&store, &item(1, 2, "a", 9), Expect::Rev(1))
        .await
        .unwrap();
    assert_eq!(store.count("item_by_rank", &[1]).await.unwrap(), 1);
    assert_eq!(store.count("item_by_rank", &[2]).await.unwrap(), 1);
    let mut b = Batch::new();
    b.delete::<Item>(&2u64.to_be_bytes(), Expect::Rev(1));
    store.commit(&b).await.unwrap();
    assert_eq!(store.count("item_by_rank", &[1]).await.unwrap(), 0);
    assert!(store
        .get::<Item>(&2u64.to_be_bytes())
        .await
        .unwrap()
        .is_none());
    assert!(
        page(&store, "item_by_rank", &[vec![1]], Direction::Asc, 0, 10)
            .await
            .ids
            .is_empty()
    );
    assert!(store.verify_indexes::<Item>().await.unwrap().is_clean());
    // Deleting with a stale revision is refused.
    let mut b = Batch::new();
    b.delete::<Item>(&1u64.to_be_bytes(), Expect::Rev(1));
    assert!(matches!(
        store.commit(&b).await,
        Err(StorageError::Conflict { .. })
    ));
}

both_engines!(index_range_reads_a_window);
async fn index_range_reads_a_window(store: Store) {
    for n in 0..10u64 {
        put(
            &store,
            &item(n, 1, &format!("n{n}"), n as i64),
            Expect::Absent,
        )
        .await
        .unwrap();
    }
    let from = KeyBuf::new().i64(3).into_vec();
    let to = KeyBuf::new().i64(6).into_vec();
    let got = store
        .index_range("item_by_rank", &[1], &from, Some(&to))
        .await
        .unwrap();
    assert_eq!(ids_of(&got), vec![3, 4, 5]);
    // Open-ended: to the end of the tenant.
    let rest = store
        .index_range("item_by_rank", &[1], &from, None)
        .await
        .unwrap();
    assert_eq!(ids_of(&rest), (3..10).collect::<Vec<_>>());
}

both_engines!(scan_chunk_walks_a_type_in_bounded_chunks);
/// `scan_chunk` from the first, then after the last id read, gives every record of the
/// type once, in id order, a chunk at a time, and nothing of another type.
async fn scan_chunk_walks_a_type_in_bounded_chunks(store: Store) {
    for n in 0..25u64 {
        put(&store, &item(n, 1, &format!("n{n}"), 0), Expect::Absent)
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut after: Option<Vec<u8>> = None;
    loop {
        let chunk = store
            .scan_chunk::<Item>(after.as_deref(), 10)
            .await
            .unwrap();
        assert!(chunk.len() <= 10);
        let Some(last) = chunk.last() else { break };
        after = Some(last.value.id_key());
        seen.extend(chunk.iter().map(|s| s.value.id));
    }
    assert_eq!(seen, (0..25).collect::<Vec<_>>());
    let none_after_last = store
        .scan_chunk::<Item>(Some(&24u64.to_be_bytes()), 10)
        .await
        .unwrap();
    assert!(none_after_last.is_empty());
}

both_engines!(index_iter_merges_tenants_in_both_directions_across_chunks);
/// The lazy cursor over several tenants, with more entries per tenant than PostgreSQL's
/// cursor reads per round trip (256): tenants of 300, exactly 256 and 513 entries, an
/// empty one, and one not asked for; sort keys that tie within and across tenants (the id
/// decides). It gives what `page` gives, in both directions.
async fn index_iter_merges_tenants_in_both_directions_across_chunks(store: Store) {
    let mut items = Vec::new();
    let mut id = 0u64;
    for (tenant, n) in [(0u8, 300u64), (1, 256), (2, 513), (9, 20)] {
        for _ in 0..n {
            id += 1;
            // Not negative: see `descending_reads_cross_sort_keys_ending_in_ff_bytes`.
            let rank = (id * 7919 % 200) as i64;
            items.push(item(id, tenant, &format!("it{id:05}"), rank));
        }
    }
    for chunk in items.chunks(100) {
        let mut b = Batch::new();
        for i in chunk {
            b.put(i, Expect::Absent).unwrap();
        }
        store.commit(&b).await.unwrap();
    }
    let tenants: Vec<Vec<u8>> = vec![vec![2], vec![3], vec![0], vec![1]];
    let asked: Vec<&Item> = items.iter().filter(|i| i.tenant != 9).collect();
    for index in ["item_by_rank", "item_by_name"] {
        let mut expected: Vec<&Item> = asked.clone();
        if index == "item_by_rank" {
            expected.sort_by_key(|i| (i.rank, i.id));
        } else {
            expected.sort_by(|a, b| a.name.cmp(&b.name));
        }
        let asc: Vec<u64> = expected.iter().map(|i| i.id).collect();
        for direction in [Direction::Asc, Direction::Desc] {
            let want: Vec<u64> = match direction {
                Direction::Asc => asc.clone(),
                Direction::Desc => asc.iter().rev().copied().collect(),
            };
            let got = store
                .index_iter(index, &tenants, direction)
                .unwrap()
                .collect()
                .await
                .unwrap();
            assert_eq!(ids_of(&got), want, "{index} {direction:?}");
            let whole = page(&store, index, &tenants, direction, 0, 10_000).await;
            assert_eq!(whole.ids, got, "{index} {direction:?}: page and cursor");
            assert_eq!(whole.total, 1069);
            // A window across the cursor's chunk boundaries.
            let window = page(&store, index, &tenants, direction, 250, 300).await;
            assert_eq!(window.ids, got[250..550].to_vec(), "{index} {direction:?}");
            // Lazy: a caller may stop early, and reads one id at a time.
            let mut it = store.index_iter(index, &tenants, direction).unwrap();
            let mut first = Vec::new();
            while let Some(id) = it.next().await {
                first.push(id.unwrap());
                if first.len() == 5 {
                    break;
                }
            }
            assert_eq!(first, got[..5].to_vec());
            // One tenant of exactly one chunk; an empty tenant; no tenant.
            let one = store
                .index_iter(index, &[vec![1]], direction)
                .unwrap()
                .collect()
                .await
                .unwrap();
            assert_eq!(one.len(), 256);
            // Its entries come in the order they have in the merge.
            let from_one: Vec<&Vec<u8>> = got.iter().filter(|id| one.contains(id)).collect();
            assert_eq!(from_one, one.iter().collect::<Vec<_>>());
            let mut empty = store.index_iter(index, &[vec![3]], direction).unwrap();
            assert!(empty.next().await.is_none());
            let none = store.index_iter(index, &[], direction).unwrap();
            assert!(none.collect().await.unwrap().is_empty());
        }
    }
}

both_engines!(descending_reads_cross_sort_keys_ending_in_ff_bytes);
/// Descending reads over sort keys with long runs of `0xFF` bytes (a negative `i64` near
/// -1 is `7F FF FF FF FF FF FF FF` in [`KeyBuf`]), right below the keys of the next sort
/// value (0 is `80 00 …`), in many tenants.
async fn descending_reads_cross_sort_keys_ending_in_ff_bytes(store: Store) {
    let mut items = Vec::new();
    for tenant in 0..100u8 {
        for n in 0..30u64 {
            let id = u64::from(tenant) * 100 + n;
            items.push(item(id, tenant, &format!("ff{id:05}"), (n % 5) as i64 - 3));
        }
    }
    for chunk in items.chunks(100) {
        let mut b = Batch::new();
        for i in chunk {
            b.put(i, Expect::Absent).unwrap();
        }
        store.commit(&b).await.unwrap();
    }
    let tenants: Vec<Vec<u8>> = (0..100u8).map(|t| vec![t]).collect();
    let mut expected: Vec<&Item> = items.iter().collect();
    expected.sort_by_key(|i| std::cmp::Reverse((i.rank, i.id)));
    let want: Vec<u64> = expected.iter().map(|i| i.id).collect();
    let got = store
        .index_iter("item_by_rank", &tenants, Direction::Desc)
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(ids_of(&got), want);
    let p = page(&store, "item_by_rank", &tenants, Direction::Desc, 0, 5_000).await;
    assert_eq!(p.ids, got);
    assert_eq!(p.total, 3_000);
    for tenant in [0u8, 57, 99] {
        let one = page(
            &store,
            "item_by_rank",
            &[vec![tenant]],
            Direction::Desc,
            0,
            100,
        )
        .await;
        let want: Vec<u64> = want
            .iter()
            .copied()
            .filter(|id| id / 100 == u64::from(tenant))
            .collect();
        assert_eq!(ids(&one), want, "tenant {tenant}");
    }
}

both_engines!(verify_detects_damage_and_rebuild_repairs_it, raw);
async fn verify_detects_damage_and_rebuild_repairs_it(store: Store, raw: Raw) {
    for n in 0..20u64 {
        put(
            &store,
            &item(n, (n % 3) as u8, &format!("n{n}"), n as i64),
            Expect::Absent,
        )
        .await
        .unwrap();
    }
    assert!(store.verify_indexes::<Item>().await.unwrap().is_clean());
    // Damage: drop one index entry, add a stray one, break a counter.
    let some_key = raw.index_keys().await.into_iter().next().unwrap();
    raw.remove_index(&some_key).await;
    raw.insert_index(b"item_by_rank\0\x01\x07stray".to_vec())
        .await;
    raw.set_counter(b"item_by_name\0\x01\x00".to_vec(), 99)
        .await;
    let report = store.verify_indexes::<Item>().await.unwrap();
    assert_eq!(report.missing, vec![some_key]);
    assert_eq!(report.extra, vec![b"item_by_rank\0\x01\x07stray".to_vec()]);
    assert_eq!(
        report.wrong_counters,
        vec![b"item_by_name\0\x01\x00".to_vec()]
    );
    store.rebuild_indexes::<Item>().await.unwrap();
    assert!(store.verify_indexes::<Item>().await.unwrap().is_clean());
    assert_eq!(
        page(&store, "item_by_rank", &[vec![0]], Direction::Asc, 0, 100)
            .await
            .total,
        7
    );
    assert_eq!(store.count("item_by_name", &[0]).await.unwrap(), 7);
    assert!(
        page(&store, "item_by_rank", &[vec![7]], Direction::Asc, 0, 100)
            .await
            .ids
            .is_empty()
    );
}

both_engines!(unknown_format_versions_are_refused);
/// A record written in a format version this build does not know (by a newer one) is
/// refused when read, not misread: the store holds it as it is.
async fn unknown_format_versions_are_refused(store: Store) {
    assert!(matches!(
        Item::decode(2, &[]),
        Err(StorageError::Codec { version: 2, .. })
    ));
    // The record of a newer build, loaded the way copies are: a snapshot.
    let newer = item(1, 1, "from the future", 0);
    let mut key = b"item\0".to_vec();
    key.extend_from_slice(&newer.id_key());
    let value = codec::seal(4, 2, &newer.encode().unwrap());
    let mut bytes = b"TOLLGATE-SNAPSHOT-1\n".to_vec();
    bytes.extend_from_slice(&7u32.to_be_bytes());
    bytes.extend_from_slice(b"records");
    bytes.extend_from_slice(&1u64.to_be_bytes());
    for part in [&key, &value] {
        bytes.extend_from_slice(&(part.len() as u32).to_be_bytes());
        bytes.extend_from_slice(part);
    }
    bytes.extend_from_slice(&u32::MAX.to_be_bytes());
    bytes.extend_from_slice(b"END\n");
    bytes.extend_from_slice(&1u64.to_be_bytes());
    let snapshot = Snapshot::read_from(&mut bytes.as_slice()).unwrap();
    store.restore(&snapshot).await.unwrap();
    let id = newer.id_key();
    assert!(matches!(
        store.get::<Item>(&id).await,
        Err(StorageError::Codec { version: 2, .. })
    ));
    assert!(matches!(
        store.get_many::<Item>(std::slice::from_ref(&id)).await,
        Err(StorageError::Codec { version: 2, .. })
    ));
    assert!(matches!(
        store.scan::<Item>().await,
        Err(StorageError::Codec { version: 2, .. })
    ));
    // Its revision needs no decoding.
    assert_eq!(store.revision::<Item>(&id).await.unwrap(), Some(4));
}

both_engines!(concurrent_durable_writers_all_complete);
async fn concurrent_durable_writers_all_complete(store: Store) {
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
    let mut total = 0;
    for t in 0..4u8 {
        total += store.count("item_by_rank", &[t]).await.unwrap();
    }
    assert_eq!(total, 640);
    assert!(store.verify_indexes::<Item>().await.unwrap().is_clean());
    store.read_barrier().await.unwrap();
}

both_engines!(a_write_that_keeps_its_keys_takes_the_fast_path_and_stays_conditional);
/// On the embedded engine such a write takes the fast path (a compare-and-swap on the
/// record); on either engine it is as conditional as any other.
async fn a_write_that_keeps_its_keys_takes_the_fast_path_and_stays_conditional(store: Store) {
    let a = item(1, 1, "alpha", 5);
    put(&store, &a, Expect::Absent).await.unwrap();
    // Same index entries and unique keys: a compare-and-swap on the record.
    let renamed_payload_only = Item { ..a.clone() };
    assert_eq!(
        put(&store, &renamed_payload_only, Expect::Rev(1))
            .await
            .unwrap()
            .revs,
        vec![2]
    );
    assert!(matches!(
        put(&store, &renamed_payload_only, Expect::Rev(1)).await,
        Err(StorageError::Conflict { found: Some(2), .. })
    ));
    // A change of sort key goes through the transaction and keeps the indexes right.
    put(&store, &item(1, 1, "alpha", 9), Expect::Rev(2))
        .await
        .unwrap();
    assert_eq!(
        store.get::<Item>(&a.id_key()).await.unwrap().unwrap().rev,
        3
    );
    assert!(store.verify_indexes::<Item>().await.unwrap().is_clean());
    assert_eq!(store.count("item_by_rank", &[1]).await.unwrap(), 1);
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

both_engines!(the_feed_records_creations_digest_changes_and_deletions_in_order);
async fn the_feed_records_creations_digest_changes_and_deletions_in_order(store: Store) {
    let mut b = Batch::new();
    b.put(&fed(1, "active", 0), Expect::Absent).unwrap();
    store.commit(&b).await.unwrap();
    // A counter-only change: no entry, and no transaction needed.
    let mut b = Batch::new();
    b.put(&fed(1, "active", 5), Expect::Rev(1)).unwrap();
    store.commit(&b).await.unwrap();
    let mut b = Batch::new();
    b.put(&fed(1, "revoked", 5), Expect::Rev(2)).unwrap();
    store.commit(&b).await.unwrap();
    // Types outside the feed record nothing.
    put(&store, &item(9, 1, "nine", 9), Expect::Absent)
        .await
        .unwrap();
    let mut b = Batch::new();
    b.delete::<Fed>(&1u64.to_be_bytes(), Expect::Rev(3));
    store.commit(&b).await.unwrap();

    let changes = store.changes(None, 10).await.unwrap();
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
    let rest = store.changes(Some(changes[0].seq), 10).await.unwrap();
    assert_eq!(rest, changes[1..].to_vec());
    assert_eq!(store.changes(None, 1).await.unwrap(), changes[..1].to_vec());
    assert_eq!(store.pending_changes().await.unwrap(), 3);
}

both_engines!(a_failed_write_records_nothing_and_consuming_removes_entries_atomically);
async fn a_failed_write_records_nothing_and_consuming_removes_entries_atomically(store: Store) {
    let mut b = Batch::new();
    b.put(&fed(1, "active", 0), Expect::Absent).unwrap();
    store.commit(&b).await.unwrap();
    // A conflicting batch aborts whole: neither record nor feed entry.
    let mut b = Batch::new();
    b.put(&fed(2, "active", 0), Expect::Absent).unwrap();
    b.put(&fed(1, "revoked", 0), Expect::Rev(7)).unwrap();
    assert!(store.commit(&b).await.is_err());
    assert!(store
        .get::<Fed>(&2u64.to_be_bytes())
        .await
        .unwrap()
        .is_none());
    let changes = store.changes(None, 10).await.unwrap();
    assert_eq!(changes.len(), 1);

    let mut b = Batch::new();
    b.notice("fed.refused", vec![1], b"{}".to_vec());
    b.consume_changes(&[changes[0].seq]);
    store.commit(&b).await.unwrap();
    let left = store.changes(None, 10).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].collection, "fed.refused");
    assert_eq!(left[0].notice(), Some(&b"{}"[..]));
    assert_eq!(store.pending_changes().await.unwrap(), 1);
}

both_engines!(the_feed_wakes_its_consumer);
async fn the_feed_wakes_its_consumer(store: Store) {
    let waiter = {
        let store = store.clone();
        tokio::spawn(async move { store.changes_written().await })
    };
    let mut b = Batch::new();
    b.put(&fed(1, "active", 0), Expect::Absent).unwrap();
    store.commit(&b).await.unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(store.pending_changes().await.unwrap(), 1);
}

both_engines!(a_snapshot_restores_records_indexes_and_the_feed_into_an_empty_store_only);
/// A snapshot of the embedded store restored into the store under test (an embedded copy,
/// or a PostgreSQL schema): records with their revisions, index entries, counters, unique
/// keys, meta values and the change feed, which goes on after the copied entries.
async fn a_snapshot_restores_records_indexes_and_the_feed_into_an_empty_store_only(copy: Store) {
    let source = Store::temporary().unwrap();
    for n in 0..12u64 {
        put(
            &source,
            &item(n, (n % 3) as u8, &format!("s{n}"), n as i64 % 5),
            Expect::Absent,
        )
        .await
        .unwrap();
    }
    put(&source, &item(4, 1, "s4", 40), Expect::Rev(1))
        .await
        .unwrap();
    let mut b = Batch::new();
    b.put(&fed(1, "active", 0), Expect::Absent).unwrap();
    b.put_meta("marker", b"copied".to_vec());
    source.commit(&b).await.unwrap();
    let mut b = Batch::new();
    b.put(&fed(1, "revoked", 0), Expect::Rev(1)).unwrap();
    source.commit(&b).await.unwrap();

    assert!(copy.is_empty().await.unwrap());
    let snapshot = source.snapshot().unwrap();
    copy.restore(&snapshot).await.unwrap();
    assert!(!copy.is_empty().await.unwrap());
    let feed = copy.changes(None, 10).await.unwrap();
    assert_eq!(feed, source.changes(None, 10).await.unwrap());
    assert_eq!(feed.len(), 2);
    assert_eq!(
        copy.scan::<Item>().await.unwrap(),
        source.scan::<Item>().await.unwrap()
    );
    assert_eq!(
        copy.revision::<Item>(&4u64.to_be_bytes()).await.unwrap(),
        Some(2)
    );
    assert!(copy.verify_indexes::<Item>().await.unwrap().is_clean());
    let tenants: Vec<Vec<u8>> = (0..3u8).map(|t| vec![t]).collect();
    for direction in [Direction::Asc, Direction::Desc] {
        assert_eq!(
            page(&copy, "item_by_rank", &tenants, direction, 2, 7).await,
            page(&source, "item_by_rank", &tenants, direction, 2, 7).await
        );
    }
    assert_eq!(
        copy.get_meta("marker").await.unwrap(),
        Some(b"copied".to_vec())
    );
    assert_eq!(
        copy.lookup_unique(&UniqueKey::new("item_name", vec![2], "s5"))
            .await
            .unwrap(),
        Some(5u64.to_be_bytes().to_vec())
    );
    // The copy goes on: a unique key it carries is enforced.
    assert!(matches!(
        put(&copy, &item(99, 2, "S5", 0), Expect::Absent).await,
        Err(StorageError::Unique { .. })
    ));
    // Only into an empty store.
    assert!(matches!(
        copy.restore(&snapshot).await,
        Err(StorageError::Conflict { .. })
    ));
}

both_engines!(a_restored_feed_goes_on_after_its_copied_entries);
/// After a restore, the change feed numbers new entries after the copied ones, and every
/// copied entry is still there for its consumer.
async fn a_restored_feed_goes_on_after_its_copied_entries(copy: Store) {
    let source = Store::temporary().unwrap();
    for status in ["active", "revoked"] {
        let mut b = Batch::new();
        b.put(&fed(1, status, 0), Expect::Any).unwrap();
        source.commit(&b).await.unwrap();
    }
    let copied = source.changes(None, 10).await.unwrap();
    assert_eq!(copied.len(), 2);
    copy.restore(&source.snapshot().unwrap()).await.unwrap();
    let mut b = Batch::new();
    b.delete::<Fed>(&1u64.to_be_bytes(), Expect::Rev(2));
    copy.commit(&b).await.unwrap();
    let after = copy.changes(None, 10).await.unwrap();
    assert_eq!(
        after[..copied.len().min(after.len())],
        copied[..],
        "{after:?}"
    );
    assert_eq!(after.len(), 3, "{after:?}");
    assert!(after[2].seq > copied[1].seq);
    assert_eq!(
        after[2].before::<Fed>().unwrap(),
        Some(fed(1, "revoked", 0))
    );
    assert_eq!(after[2].after::<Fed>().unwrap(), None);
}

both_engines!(watchers_see_every_write_and_delete_of_their_collection);
async fn watchers_see_every_write_and_delete_of_their_collection(store: Store) {
    use std::sync::{Arc, Mutex};
    let seen: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let sink = seen.clone();
    store.watch(Item::COLLECTION, move |id| {
        sink.lock().unwrap().push(id.to_vec())
    });
    put(&store, &item(1, 1, "one", 1), Expect::Absent)
        .await
        .unwrap();
    // Another collection, and a failed write: nothing.
    let mut b = Batch::new();
    b.put(&fed(5, "x", 0), Expect::Absent).unwrap();
    store.commit(&b).await.unwrap();
    assert!(put(&store, &item(1, 1, "one", 1), Expect::Absent)
        .await
        .is_err());
    // The compare-and-swap path too.
    put(&store, &item(1, 1, "one", 1), Expect::Rev(1))
        .await
        .unwrap();
    let mut b = Batch::new();
    b.delete::<Item>(&1u64.to_be_bytes(), Expect::Any);
    store.commit(&b).await.unwrap();
    let one = 1u64.to_be_bytes().to_vec();
    assert_eq!(*seen.lock().unwrap(), vec![one.clone(), one.clone(), one]);
}

both_engines!(a_put_keeping_keys_is_a_plain_compare_and_swap);
async fn a_put_keeping_keys_is_a_plain_compare_and_swap(store: Store) {
    let mut b = Batch::new();
    b.put(&fed(1, "active", 0), Expect::Absent).unwrap();
    store.commit(&b).await.unwrap();
    let mut b = Batch::new();
    b.put_keeping_keys(&fed(1, "active", 9), Expect::Rev(1))
        .unwrap();
    assert_eq!(store.commit(&b).await.unwrap().revs, vec![2]);
    assert_eq!(
        store
            .get::<Fed>(&1u64.to_be_bytes())
            .await
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
        store.commit(&b).await,
        Err(StorageError::Conflict { .. })
    ));
    assert_eq!(
        store.changes(None, 10).await.unwrap().len(),
        1,
        "only the creation"
    );
}

// ---------------------------------------------------------------------------------------
// The embedded engine alone: its bytes on disk, the group-commit flusher, durability
// across a reopen, snapshots.
// ---------------------------------------------------------------------------------------

/// How a record lies on disk, whatever its type: key `collection 0 id`, value
/// `[u64 revision][u16 format version][payload]`, big-endian (`codec::seal`). The golden
/// tests of each record type pin its payload and version; this pins what surrounds them.
#[tokio::test]
async fn a_record_is_stored_in_its_envelope_golden() {
    let store = Store::temporary().unwrap();
    let a = item(1, 2, "ab", -3);
    put(&store, &a, Expect::Absent).await.unwrap();
    put(&store, &a, Expect::Rev(1)).await.unwrap();
    let hex = |b: &[u8]| -> String { b.iter().map(|b| format!("{b:02x}")).collect() };
    let rows: Vec<(String, String)> = store
        .embedded()
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
        store.get::<Item>(&a.id_key()).await.unwrap(),
        Some(Stored { rev: 2, value: a })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_committed_together_share_one_flush() {
    let store = Store::temporary().unwrap();
    let before = store.flush_count();
    let mut seqs = Vec::new();
    for n in 0..100u64 {
        seqs.push(
            put(&store, &item(n, 1, &format!("n{n}"), 0), Expect::Absent)
                .await
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
                    let seq =
                        put_in_place(&store, &item(id, 1, &format!("c{id}"), 0), Expect::Absent)
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
            .await
            .unwrap()
            .unwrap()
            .value
            .name,
        "kept"
    );
    assert_eq!(store.get_meta("secret").await.unwrap(), Some(vec![1, 2, 3]));
    assert_eq!(store.count("item_by_rank", &[1]).await.unwrap(), 1);
}

#[test]
fn a_data_directory_in_use_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::new(dir.path());
    let open = Store::open(&config).unwrap();
    let err = match Store::open(&config) {
        Ok(_) => panic!("a second store opened the same directory"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("in use by another process"), "{err}");
    drop(open);
    // Once the first is gone, the directory opens again (sled's threads let go of it).
    Store::open(&config).unwrap();
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
    store
        .embedded()
        .test_hooks()
        .stall
        .store(true, Ordering::SeqCst);
    let seq = put(&store, &item(1, 1, "a", 0), Expect::Absent)
        .await
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
    store
        .embedded()
        .test_hooks()
        .stall
        .store(false, Ordering::SeqCst);
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

    *store.embedded().test_hooks().fail_next.lock().unwrap() =
        Some("No space left on device".into());
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
    let r = store.commit(&b).await;
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
    assert!(store
        .get::<Item>(&1u64.to_be_bytes())
        .await
        .unwrap()
        .is_some());
    assert_eq!(store.health(), StoreHealth::Healthy);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_flusher_is_reported_and_no_waiter_hangs() {
    use std::sync::atomic::Ordering;
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_deadline(dir.path(), 5_000);
    store
        .embedded()
        .test_hooks()
        .panic_next
        .store(true, Ordering::SeqCst);
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
            store.get::<Item>(&n.to_be_bytes()).await.unwrap().is_some(),
            "acknowledged item {n} lost"
        );
    }
    let mut b = Batch::new();
    b.put(&item(999_999, 1, "after", 0), Expect::Absent)
        .unwrap();
    store.commit_durable(&b).await.unwrap();
    assert!(store.verify_indexes::<Item>().await.unwrap().is_clean());
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
    // Written as it is read, still under the writers' load: consistent too.
    let (file, streamed) = store.snapshot_to(std::io::Cursor::new(Vec::new())).unwrap();
    stop.store(true, Ordering::SeqCst);
    for w in writers {
        w.await.unwrap();
    }
    assert!(snapshot.record_count() as u64 >= before);
    assert!(streamed >= snapshot.record_count() as u64);
    let file = file.into_inner();
    let from_file = Store::temporary().unwrap();
    assert_eq!(
        from_file
            .restore_from_reader(file.as_slice())
            .await
            .unwrap(),
        streamed
    );
    assert!(from_file.verify_indexes::<Item>().await.unwrap().is_clean());
    assert_eq!(
        Snapshot::read_from(&mut file.as_slice())
            .unwrap()
            .record_count() as u64,
        streamed
    );
    // A truncated file is refused, entry by entry as whole.
    let cut = &file[..file.len() - 3];
    assert!(Store::temporary()
        .unwrap()
        .restore_from_reader(cut)
        .await
        .is_err());
    // Quiet, both ways give the same bytes.
    let (again, _) = store.snapshot_to(std::io::Cursor::new(Vec::new())).unwrap();
    let mut whole = Vec::new();
    store.snapshot().unwrap().write_to(&mut whole).unwrap();
    assert_eq!(again.into_inner(), whole);

    let mut bytes = Vec::new();
    snapshot.write_to(&mut bytes).unwrap();
    let read = Snapshot::read_from(&mut bytes.as_slice()).unwrap();
    assert_eq!(read, snapshot);
    assert!(Snapshot::read_from(&mut &bytes[..bytes.len() - 3]).is_err());

    let restored = Store::temporary().unwrap();
    restored.restore(&read).await.unwrap();
    assert!(restored.verify_indexes::<Item>().await.unwrap().is_clean());
    let mut counted = 0u64;
    for t in 0..2u8 {
        counted += restored.count("item_by_rank", &[t]).await.unwrap();
    }
    assert_eq!(counted, snapshot.record_count() as u64);
    assert!(matches!(
        restored.restore(&read).await,
        Err(StorageError::Conflict { .. })
    ));
}

// ---- Store::update: compare-and-swap of one record -------------------------------------

async fn update_changes_decides_again_and_refuses(store: Store) {
    // No such record: nothing is asked.
    let none = store
        .update::<Item, ()>(&7u64.to_be_bytes(), async |_| panic!("not asked"))
        .await
        .unwrap();
    assert!(none.is_none());
    put(&store, &item(7, 0, "seven", 1), Expect::Absent)
        .await
        .unwrap();
    store.flush_blocking().ok();
    // A change is written, with its index entries.
    let changed = store
        .update::<Item, ()>(&7u64.to_be_bytes(), async |i| {
            Ok(Some(Item {
                rank: i.rank + 1,
                ..i.clone()
            }))
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(changed.rank, 2);
    assert_eq!(
        store
            .get::<Item>(&7u64.to_be_bytes())
            .await
            .unwrap()
            .unwrap()
            .value
            .rank,
        2
    );
    assert!(store.verify_indexes::<Item>().await.unwrap().is_clean());
    // `None`: nothing to write, the record as it is.
    let same = store
        .update::<Item, ()>(&7u64.to_be_bytes(), async |_| Ok(None))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(same, changed);
    // A refusal writes nothing.
    let refused = store
        .update::<Item, &str>(&7u64.to_be_bytes(), async |_| Err("no"))
        .await;
    assert!(matches!(refused, Err(UpdateError::Rejected("no"))));
    // Another writer wins a race: the decision is made again on what it wrote.
    let mut asked = 0;
    let raced = store
        .update::<Item, ()>(&7u64.to_be_bytes(), async |i| {
            asked += 1;
            if asked == 1 {
                put(&store, &item(7, 0, "seven", 100), Expect::Any)
                    .await
                    .unwrap();
            }
            Ok(Some(Item {
                rank: i.rank + 1,
                ..i.clone()
            }))
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!((asked, raced.rank), (2, 101));
    // Losing every race ends in a conflict, after UPDATE_ATTEMPTS decisions.
    let mut asked = 0;
    let lost = store
        .update::<Item, ()>(&7u64.to_be_bytes(), async |i| {
            asked += 1;
            put(&store, &item(7, 0, "seven", asked), Expect::Any)
                .await
                .unwrap();
            Ok(Some(i.clone()))
        })
        .await;
    assert!(matches!(
        lost,
        Err(UpdateError::Storage(StorageError::Conflict { .. }))
    ));
    assert_eq!(asked, UPDATE_ATTEMPTS as i64);
    // A unique key another record holds is the store's refusal, not a retry.
    put(&store, &item(8, 0, "eight", 1), Expect::Absent)
        .await
        .unwrap();
    let taken = store
        .update::<Item, ()>(&7u64.to_be_bytes(), async |i| {
            Ok(Some(Item {
                name: "EIGHT".into(),
                ..i.clone()
            }))
        })
        .await;
    assert!(matches!(
        taken,
        Err(UpdateError::Storage(StorageError::Unique { .. }))
    ));
}
both_engines!(update_changes_decides_again_and_refuses);

async fn concurrent_updates_lose_no_increment(store: Store) {
    put(&store, &item(9, 0, "nine", 0), Expect::Absent)
        .await
        .unwrap();
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                for _ in 0..5 {
                    // Conflicts may exhaust the attempts under contention: retry those.
                    loop {
                        let r = store
                            .update::<Item, ()>(&9u64.to_be_bytes(), async |i| {
                                Ok(Some(Item {
                                    rank: i.rank + 1,
                                    ..i.clone()
                                }))
                            })
                            .await;
                        match r {
                            Ok(_) => break,
                            Err(UpdateError::Storage(StorageError::Conflict { .. })) => continue,
                            Err(e) => panic!("{e:?}"),
                        }
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let stored = store
        .get::<Item>(&9u64.to_be_bytes())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.value.rank, 20);
}
both_engines!(concurrent_updates_lose_no_increment);

#[path = "store_tests_uncounted.rs"]
mod uncounted;
