//! Uncounted index entries ([`IndexEntry::uncounted`]), on both engines: written and
//! removed with their record in its transaction like any other entry, read in order, but
//! with no (index, tenant) counter; checked and rebuilt by `verify_indexes` /
//! `rebuild_indexes`.

use serde::{Deserialize, Serialize};

use super::{test_db, Raw};
use crate::keys::KeyBuf;
use crate::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Tagged {
    pub(crate) id: u64,
    pub(crate) tags: Vec<String>,
}

impl Record for Tagged {
    const COLLECTION: &'static str = "tagged";
    const VERSION: u16 = 1;
    const INDEXES: &'static [&'static str] = &["tg_all", "tg_tag"];

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
        let sort = KeyBuf::new().u64(self.id % 10).into_vec();
        let mut out = vec![IndexEntry::new("tg_all", vec![1], sort.clone())];
        for tag in &self.tags {
            out.push(IndexEntry::uncounted(
                "tg_tag",
                tag.as_bytes().to_vec(),
                sort.clone(),
            ));
        }
        out
    }
}

fn tagged(id: u64, tags: &[&str]) -> Tagged {
    Tagged {
        id,
        tags: tags.iter().map(|t| t.to_string()).collect(),
    }
}

async fn put_tagged(store: &Store, t: &Tagged, expect: Expect) {
    let mut b = Batch::new();
    b.put(t, expect).unwrap();
    store.commit(&b).await.unwrap();
}

async fn ids_tagged(store: &Store, tag: &str, direction: Direction) -> Vec<u64> {
    store
        .index_iter("tg_tag", &[tag.as_bytes().to_vec()], direction)
        .unwrap()
        .collect()
        .await
        .unwrap()
        .iter()
        .map(|k| u64::from_be_bytes(k.as_slice().try_into().unwrap()))
        .collect()
}

both_engines!(uncounted_entries_move_with_their_record_and_no_counter, raw);
async fn uncounted_entries_move_with_their_record_and_no_counter(store: Store, raw: Raw) {
    // A batch of several records, then single writes.
    let mut b = Batch::new();
    for n in 1..=5u64 {
        b.put(&tagged(n, &["hot", &format!("t{n}")]), Expect::Absent)
            .unwrap();
    }
    store.commit(&b).await.unwrap();
    put_tagged(&store, &tagged(16, &["hot", "rare"]), Expect::Absent).await;
    // In sort order (id % 10, then id), and no counter: the counted index counts.
    assert_eq!(
        ids_tagged(&store, "hot", Direction::Asc).await,
        vec![1, 2, 3, 4, 5, 16]
    );
    assert_eq!(
        ids_tagged(&store, "hot", Direction::Desc).await,
        vec![16, 5, 4, 3, 2, 1]
    );
    assert_eq!(store.count("tg_tag", b"hot").await.unwrap(), 0);
    assert_eq!(store.count("tg_all", &[1]).await.unwrap(), 6);
    // An update removes the terms it no longer carries and adds the new ones.
    put_tagged(&store, &tagged(3, &["cold"]), Expect::Any).await;
    assert_eq!(
        ids_tagged(&store, "hot", Direction::Asc).await,
        vec![1, 2, 4, 5, 16]
    );
    assert!(ids_tagged(&store, "t3", Direction::Asc).await.is_empty());
    assert_eq!(ids_tagged(&store, "cold", Direction::Asc).await, vec![3]);
    // A delete removes them all.
    let mut b = Batch::new();
    b.delete::<Tagged>(&16u64.to_be_bytes(), Expect::Any);
    store.commit(&b).await.unwrap();
    assert!(ids_tagged(&store, "rare", Direction::Asc).await.is_empty());
    assert_eq!(
        ids_tagged(&store, "hot", Direction::Asc).await,
        vec![1, 2, 4, 5]
    );
    assert_eq!(store.count("tg_all", &[1]).await.unwrap(), 5);
    assert!(store.verify_indexes::<Tagged>().await.unwrap().is_clean());
    // Damage: an entry lost, a stray one; no counter is expected for them.
    let lost = raw
        .index_keys()
        .await
        .into_iter()
        .find(|k| k.starts_with(b"tg_tag\0"))
        .unwrap();
    raw.remove_index(&lost).await;
    let mut stray = b"tg_tag\0\x03hot".to_vec();
    stray.extend_from_slice(&KeyBuf::new().u64(9).into_vec());
    stray.extend_from_slice(&0u64.to_be_bytes());
    raw.insert_index(stray.clone()).await;
    let report = store.verify_indexes::<Tagged>().await.unwrap();
    assert_eq!(report.missing, vec![lost]);
    assert_eq!(report.extra, vec![stray]);
    assert!(report.wrong_counters.is_empty());
    store.rebuild_indexes::<Tagged>().await.unwrap();
    assert!(store.verify_indexes::<Tagged>().await.unwrap().is_clean());
    assert_eq!(
        ids_tagged(&store, "hot", Direction::Asc).await,
        vec![1, 2, 4, 5]
    );
    assert_eq!(store.count("tg_tag", b"hot").await.unwrap(), 0);
    assert_eq!(store.count("tg_all", &[1]).await.unwrap(), 5);
}
