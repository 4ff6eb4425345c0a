use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use sled::transaction::{ConflictableTransactionError, TransactionError, TransactionalTree};
use sled::Transactional;

use crate::codec;
use crate::flusher::{DurabilityMode, DurableFuture, Flusher, StoreHealth, DEFAULT_FLUSH_DEADLINE};
use crate::keys::push_len_prefixed;
use crate::record::{Expect, IndexEntry, Record, Stored, UniqueKey};
use crate::StorageError;

/// Settings for opening a [`Store`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// Directory of the store's files.
    pub data_dir: PathBuf,
    /// What an acknowledged write survives.
    #[serde(default)]
    pub durability: DurabilityMode,
    /// Size of the engine's page cache, in MiB.
    #[serde(default = "default_cache_mb")]
    pub cache_capacity_mb: u64,
    /// How long a write or read barrier may wait for its flush (not a setting: tests
    /// shorten it).
    #[serde(skip, default = "default_flush_deadline")]
    pub flush_deadline: std::time::Duration,
}

fn default_flush_deadline() -> std::time::Duration {
    DEFAULT_FLUSH_DEADLINE
}

fn default_cache_mb() -> u64 {
    128
}

impl StoreConfig {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            durability: DurabilityMode::Process,
            cache_capacity_mb: default_cache_mb(),
            flush_deadline: DEFAULT_FLUSH_DEADLINE,
        }
    }
}

/// The handle to the store. Cheap to clone; every clone shares one engine and one flusher.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    db: sled::Db,
    records: sled::Tree,
    index: sled::Tree,
    counters: sled::Tree,
    uniques: sled::Tree,
    meta: sled::Tree,
    flusher: Flusher,
    /// Commits share it; [`Store::snapshot`] takes it alone, for a consistent copy.
    gate: std::sync::RwLock<()>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.flusher.shutdown();
    }
}

/// The result of a committed batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committed {
    /// Sequence number to pass to [`Store::durable`].
    pub seq: u64,
    /// The new revision of each record written, in the order of the batch's operations
    /// (0 for deletes and meta writes).
    pub revs: Vec<u64>,
}

/// Sort direction of a page read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Asc,
    Desc,
}

/// One page of an index, possibly merged over several tenants.
#[derive(Debug, Clone)]
pub struct PageQuery<'a> {
    pub index: &'static str,
    pub tenants: &'a [Vec<u8>],
    pub direction: Direction,
    pub offset: u64,
    pub limit: u64,
}

/// Ids (primary keys) of one page, and the entry count over all the tenants queried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub ids: Vec<Vec<u8>>,
    pub total: u64,
}

/// What [`Store::verify_indexes`] found: entries that should exist and do not, and entries
/// that exist and should not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexReport {
    pub missing: Vec<Vec<u8>>,
    pub extra: Vec<Vec<u8>>,
    pub wrong_counters: Vec<Vec<u8>>,
}

impl IndexReport {
    pub fn is_clean(&self) -> bool {
        self.missing.is_empty() && self.extra.is_empty() && self.wrong_counters.is_empty()
    }
}

type TxResult<T> = Result<T, ConflictableTransactionError<StorageError>>;

fn abort<T>(e: StorageError) -> TxResult<T> {
    Err(ConflictableTransactionError::Abort(e))
}

struct Tx<'a> {
    records: &'a TransactionalTree,
    index: &'a TransactionalTree,
    counters: &'a TransactionalTree,
    uniques: &'a TransactionalTree,
    meta: &'a TransactionalTree,
}

/// The operations of one atomic write. Build it, then [`Store::commit`] it.
#[derive(Default)]
pub struct Batch {
    ops: Vec<Box<dyn Op>>,
}

impl Batch {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Number of operations (the position of each write's revision in [`Committed::revs`]).
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Moves every operation of `other` to the end of this batch.
    pub fn append(&mut self, mut other: Batch) -> &mut Self {
        self.ops.append(&mut other.ops);
        self
    }

    /// Writes `record` (creating or replacing it) if its current revision matches `expect`.
    pub fn put<R: Record>(
        &mut self,
        record: &R,
        expect: Expect,
    ) -> Result<&mut Self, StorageError> {
        let id = record.id_key();
        let mut index = record.index_entries();
        index.sort();
        index.dedup();
        let mut uniques = record.unique_keys();
        uniques.sort();
        uniques.dedup();
        self.ops.push(Box::new(PutOp::<R> {
            key: record_key(R::COLLECTION, &id),
            payload: record.encode()?,
            index: encode_index_entries(&index, &id)?,
            uniques: encode_uniques(&uniques)?,
            id,
            expect,
            _r: std::marker::PhantomData,
        }));
        Ok(self)
    }

    /// Removes the record with this id (and all its index entries and unique keys).
    pub fn delete<R: Record>(&mut self, id: &[u8], expect: Expect) -> &mut Self {
        self.ops.push(Box::new(DeleteOp::<R> {
            key: record_key(R::COLLECTION, id),
            expect,
            _r: std::marker::PhantomData,
        }));
        self
    }

    /// Writes a small system value (a generated secret, a bootstrap marker).
    pub fn put_meta(&mut self, key: &str, value: Vec<u8>) -> &mut Self {
        self.ops.push(Box::new(MetaOp {
            key: key.as_bytes().to_vec(),
            value,
        }));
        self
    }
}

trait Op: Send + Sync {
    fn apply(&self, tx: &Tx<'_>) -> TxResult<u64>;

    /// Applies the operation without a transaction when it touches nothing but its own
    /// record (no index entry, unique key or counter changes): one compare-and-swap.
    /// `None`: it needs a transaction.
    fn apply_alone(&self, _records: &sled::Tree) -> Result<Option<u64>, StorageError> {
        Ok(None)
    }
}

struct EncodedIndex {
    key: Vec<u8>,
    counter: Vec<u8>,
}

struct PutOp<R> {
    key: Vec<u8>,
    id: Vec<u8>,
    payload: Vec<u8>,
    index: Vec<EncodedIndex>,
    uniques: Vec<Vec<u8>>,
    expect: Expect,
    _r: std::marker::PhantomData<fn() -> R>,
}

impl<R: Record> Op for PutOp<R> {
    fn apply_alone(&self, records: &sled::Tree) -> Result<Option<u64>, StorageError> {
        let Some(old) = records.get(&self.key)? else {
            return Ok(None);
        };
        let (rev, same) = self.same_keys_as(&old)?;
        if !same {
            return Ok(None);
        }
        self.expect.check(R::COLLECTION, Some(rev))?;
        let new = codec::seal(rev + 1, R::VERSION, &self.payload);
        match records.compare_and_swap(&self.key, Some(old), Some(new))? {
            Ok(()) => Ok(Some(rev + 1)),
            // Changed under us: let the transaction decide (it reports the conflict).
            Err(_) => Ok(None),
        }
    }

    fn apply(&self, tx: &Tx<'_>) -> TxResult<u64> {
        let old = tx.records.get(&self.key)?;
        let (old_rev, old_index, old_uniques) = match old {
            Some(bytes) => {
                let (rev, version, payload) = match codec::open(&bytes) {
                    Ok(v) => v,
                    Err(e) => return abort(e),
                };
                let previous = match R::decode(version, payload) {
                    Ok(p) => p,
                    Err(e) => return abort(e),
                };
                let id = previous.id_key();
                let derived = derived_keys(&previous, &id);
                match derived {
                    Ok((i, u)) => (Some(rev), i, u),
                    Err(e) => return abort(e),
                }
            }
            None => (None, Vec::new(), Vec::new()),
        };
        if let Err(e) = self.expect.check(R::COLLECTION, old_rev) {
            return abort(e);
        }
        let rev = old_rev.unwrap_or(0) + 1;
        tx.records.insert(
            self.key.as_slice(),
            codec::seal(rev, R::VERSION, &self.payload),
        )?;
        let old_keys: BTreeSet<&[u8]> = old_index.iter().map(|e| e.key.as_slice()).collect();
        let new_keys: BTreeSet<&[u8]> = self.index.iter().map(|e| e.key.as_slice()).collect();
        for e in &old_index {
            if !new_keys.contains(e.key.as_slice()) {
                tx.index.remove(e.key.as_slice())?;
                add_to_counter(tx, &e.counter, -1)?;
            }
        }
        for e in &self.index {
            if !old_keys.contains(e.key.as_slice()) {
                tx.index.insert(e.key.as_slice(), self.id.as_slice())?;
                add_to_counter(tx, &e.counter, 1)?;
            }
        }
        for u in &old_uniques {
            if !self.uniques.contains(u) {
                tx.uniques.remove(u.as_slice())?;
            }
        }
        for u in &self.uniques {
            if old_uniques.contains(u) {
                continue;
            }
            if let Some(holder) = tx.uniques.get(u.as_slice())? {
                if holder.as_ref() != self.id.as_slice() {
                    return abort(StorageError::Unique {
                        constraint: unique_name::<R>(u),
                    });
                }
            }
            tx.uniques.insert(u.as_slice(), self.id.as_slice())?;
        }
        Ok(rev)
    }
}

impl<R: Record> PutOp<R> {
    /// The stored record's revision and whether this write keeps its index entries and
    /// unique keys exactly as they are.
    fn same_keys_as(&self, old: &[u8]) -> Result<(u64, bool), StorageError> {
        let (rev, version, payload) = codec::open(old)?;
        let previous = R::decode(version, payload)?;
        let (index, uniques) = derived_keys(&previous, &previous.id_key())?;
        let same_index = index.len() == self.index.len()
            && index.iter().zip(&self.index).all(|(a, b)| a.key == b.key);
        Ok((rev, same_index && uniques == self.uniques))
    }
}

/// The static name of the unique constraint an encoded unique key belongs to.
fn unique_name<R: Record>(encoded: &[u8]) -> &'static str {
    R::UNIQUES
        .iter()
        .find(|n| encoded.starts_with(n.as_bytes()) && encoded.get(n.len()) == Some(&0))
        .copied()
        .unwrap_or("unique")
}

struct DeleteOp<R> {
    key: Vec<u8>,
    expect: Expect,
    _r: std::marker::PhantomData<fn() -> R>,
}

impl<R: Record> Op for DeleteOp<R> {
    fn apply(&self, tx: &Tx<'_>) -> TxResult<u64> {
        let Some(bytes) = tx.records.get(&self.key)? else {
            if let Err(e) = self.expect.check(R::COLLECTION, None) {
                return abort(e);
            }
            return Ok(0);
        };
        let (rev, version, payload) = match codec::open(&bytes) {
            Ok(v) => v,
            Err(e) => return abort(e),
        };
        if let Err(e) = self.expect.check(R::COLLECTION, Some(rev)) {
            return abort(e);
        }
        let previous = match R::decode(version, payload) {
            Ok(p) => p,
            Err(e) => return abort(e),
        };
        let id = previous.id_key();
        let (index, uniques) = match derived_keys(&previous, &id) {
            Ok(v) => v,
            Err(e) => return abort(e),
        };
        tx.records.remove(self.key.as_slice())?;
        for e in &index {
            tx.index.remove(e.key.as_slice())?;
            add_to_counter(tx, &e.counter, -1)?;
        }
        for u in &uniques {
            tx.uniques.remove(u.as_slice())?;
        }
        Ok(0)
    }
}

struct MetaOp {
    key: Vec<u8>,
    value: Vec<u8>,
}

impl Op for MetaOp {
    fn apply(&self, tx: &Tx<'_>) -> TxResult<u64> {
        tx.meta.insert(self.key.as_slice(), self.value.as_slice())?;
        Ok(0)
    }
}

fn add_to_counter(tx: &Tx<'_>, key: &[u8], delta: i64) -> TxResult<()> {
    let current = match tx.counters.get(key)? {
        Some(v) => match decode_counter(&v) {
            Ok(c) => c,
            Err(e) => return abort(e),
        },
        None => 0,
    };
    let next = current.saturating_add_signed(delta);
    if next == 0 {
        tx.counters.remove(key)?;
    } else {
        tx.counters.insert(key, &next.to_be_bytes())?;
    }
    Ok(())
}

fn decode_counter(bytes: &[u8]) -> Result<u64, StorageError> {
    let arr: [u8; 8] = bytes
        .try_into()
        .map_err(|_| StorageError::Corrupt("counter is not 8 bytes".into()))?;
    Ok(u64::from_be_bytes(arr))
}

fn record_key(collection: &str, id: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(collection.len() + 1 + id.len());
    k.extend_from_slice(collection.as_bytes());
    k.push(0);
    k.extend_from_slice(id);
    k
}

fn tenant_prefix(name: &str, tenant: &[u8]) -> Result<Vec<u8>, StorageError> {
    let mut k = Vec::with_capacity(name.len() + 2 + tenant.len());
    k.extend_from_slice(name.as_bytes());
    k.push(0);
    push_len_prefixed(&mut k, tenant)?;
    Ok(k)
}

fn encode_index_entries(
    entries: &[IndexEntry],
    id: &[u8],
) -> Result<Vec<EncodedIndex>, StorageError> {
    entries
        .iter()
        .map(|e| {
            let counter = tenant_prefix(e.index, &e.tenant)?;
            let mut key = counter.clone();
            key.extend_from_slice(&e.sort);
            key.extend_from_slice(id);
            Ok(EncodedIndex { key, counter })
        })
        .collect()
}

fn encode_uniques(keys: &[UniqueKey]) -> Result<Vec<Vec<u8>>, StorageError> {
    keys.iter()
        .map(|u| {
            let mut k = tenant_prefix(u.name, &u.tenant)?;
            k.extend_from_slice(&u.value);
            Ok(k)
        })
        .collect()
}

fn derived_keys<R: Record>(
    record: &R,
    id: &[u8],
) -> Result<(Vec<EncodedIndex>, Vec<Vec<u8>>), StorageError> {
    let mut index = record.index_entries();
    index.sort();
    index.dedup();
    let mut uniques = record.unique_keys();
    uniques.sort();
    uniques.dedup();
    Ok((encode_index_entries(&index, id)?, encode_uniques(&uniques)?))
}

impl Store {
    /// Opens (or creates) the store in `config.data_dir`.
    pub fn open(config: &StoreConfig) -> Result<Self, StorageError> {
        std::fs::create_dir_all(&config.data_dir).map_err(|e| {
            StorageError::Io(format!("cannot create {}: {e}", config.data_dir.display()))
        })?;
        let db = sled::Config::new()
            .path(&config.data_dir)
            .cache_capacity(config.cache_capacity_mb.saturating_mul(1024 * 1024))
            .mode(sled::Mode::HighThroughput)
            .open()?;
        Self::from_db(
            db,
            config.durability,
            Some(config.data_dir.clone()),
            config.flush_deadline,
        )
    }

    /// A store in a temporary directory that is removed when the store is dropped.
    pub fn temporary() -> Result<Self, StorageError> {
        let db = sled::Config::new().temporary(true).open()?;
        Self::from_db(db, DurabilityMode::Process, None, DEFAULT_FLUSH_DEADLINE)
    }

    fn from_db(
        db: sled::Db,
        mode: DurabilityMode,
        dir: Option<PathBuf>,
        deadline: std::time::Duration,
    ) -> Result<Self, StorageError> {
        let records = db.open_tree("records")?;
        let index = db.open_tree("index")?;
        let counters = db.open_tree("counters")?;
        let uniques = db.open_tree("uniques")?;
        let meta = db.open_tree("meta")?;
        let flusher = Flusher::start(db.clone(), mode, dir, deadline)?;
        Ok(Self {
            inner: Arc::new(Inner {
                db,
                records,
                index,
                counters,
                uniques,
                meta,
                flusher,
                gate: std::sync::RwLock::new(()),
            }),
        })
    }

    /// Applies every operation of `batch` atomically, or none of them. The write is visible
    /// to readers at once but not yet durable: await [`Store::durable`] with the returned
    /// sequence number before acknowledging it.
    ///
    /// A batch of one write that changes no index entry, unique key or counter (a counter
    /// update of an aggregate, the hot path) is a single compare-and-swap on its record:
    /// it takes no transaction, so it never waits for a flush in progress (sled's
    /// transactions hold a lock that its flush holds too). Each aggregate has one writer,
    /// its actor, and a transaction excludes every compare-and-swap while it runs, so the
    /// two kinds of write stay serializable.
    ///
    /// Once a flush has failed the store acknowledges nothing more: every commit fails at
    /// once with [`StorageError::Unavailable`] (see [`Store::health`]).
    pub fn commit(&self, batch: &Batch) -> Result<Committed, StorageError> {
        let i = &self.inner;
        i.flusher.check_writable()?;
        let _shared = i.gate.read().unwrap_or_else(|p| p.into_inner());
        self.commit_inner(batch).inspect_err(|e| {
            if let StorageError::Io(cause) = e {
                i.flusher.fail(cause);
            }
        })
    }

    fn commit_inner(&self, batch: &Batch) -> Result<Committed, StorageError> {
        let i = &self.inner;
        if let [op] = batch.ops.as_slice() {
            if let Some(rev) = op.apply_alone(&i.records)? {
                return Ok(Committed {
                    seq: i.flusher.committed(),
                    revs: vec![rev],
                });
            }
        }
        let result = (&i.records, &i.index, &i.counters, &i.uniques, &i.meta).transaction(
            |(records, index, counters, uniques, meta)| {
                let tx = Tx {
                    records,
                    index,
                    counters,
                    uniques,
                    meta,
                };
                batch
                    .ops
                    .iter()
                    .map(|op| op.apply(&tx))
                    .collect::<TxResult<Vec<u64>>>()
            },
        );
        match result {
            Ok(revs) => Ok(Committed {
                seq: i.flusher.committed(),
                revs,
            }),
            Err(TransactionError::Abort(e)) => Err(e),
            Err(TransactionError::Storage(e)) => Err(e.into()),
        }
    }

    /// Resolves once every write up to sequence number `seq` is durable. Writes that were
    /// committed concurrently share one flush.
    pub fn durable(&self, seq: u64) -> DurableFuture {
        self.inner.flusher.wait(seq)
    }

    /// Calls `f` once every write up to `seq` is durable, with the error of the flush if it
    /// failed: at once if they already are, else on the flusher thread right after the
    /// flush, so an answer can be sent without another thread hop. `f` must not block.
    pub fn on_durable(&self, seq: u64, f: impl FnOnce(Result<(), StorageError>) + Send + 'static) {
        self.inner.flusher.on_durable(seq, Box::new(f))
    }

    /// Commits `batch` and waits until it is durable.
    pub async fn commit_durable(&self, batch: &Batch) -> Result<Committed, StorageError> {
        let committed = self.commit(batch)?;
        self.durable(committed.seq).await?;
        Ok(committed)
    }

    /// Resolves once every write committed so far is durable. A reader awaits this before
    /// answering, so that no client is told about a write a crash could still undo.
    pub fn read_barrier(&self) -> DurableFuture {
        self.inner.flusher.wait(self.inner.flusher.last_committed())
    }

    /// Whether the store acknowledges writes; after a failed flush it never does again in
    /// this process (see [`StoreHealth`]).
    pub fn health(&self) -> StoreHealth {
        self.inner.flusher.health()
    }

    /// How many flushes the flusher has run (for benchmarks and tests of group commit).
    pub fn flush_count(&self) -> u64 {
        self.inner.flusher.flush_count()
    }

    /// Flushes everything now and waits for it (used on shutdown).
    pub fn flush_blocking(&self) -> Result<(), StorageError> {
        self.inner.db.flush()?;
        Ok(())
    }

    pub fn get<R: Record>(&self, id: &[u8]) -> Result<Option<Stored<R>>, StorageError> {
        match self.inner.records.get(record_key(R::COLLECTION, id))? {
            Some(bytes) => {
                let (rev, version, payload) = codec::open(&bytes)?;
                Ok(Some(Stored {
                    rev,
                    value: R::decode(version, payload)?,
                }))
            }
            None => Ok(None),
        }
    }

    /// Records of the given ids, in order, skipping ids that no longer exist.
    pub fn get_many<R: Record>(&self, ids: &[Vec<u8>]) -> Result<Vec<Stored<R>>, StorageError> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(r) = self.get::<R>(id)? {
                out.push(r);
            }
        }
        Ok(out)
    }

    /// Every record of a type, in primary-key order. For recovery and index rebuilds.
    pub fn scan<R: Record>(&self) -> impl Iterator<Item = Result<Stored<R>, StorageError>> + '_ {
        self.inner
            .records
            .scan_prefix(record_key(R::COLLECTION, &[]))
            .map(|item| {
                let (_, bytes) = item?;
                let (rev, version, payload) = codec::open(&bytes)?;
                Ok(Stored {
                    rev,
                    value: R::decode(version, payload)?,
                })
            })
    }

    /// The id of the record holding a unique key, if any.
    pub fn lookup_unique(&self, key: &UniqueKey) -> Result<Option<Vec<u8>>, StorageError> {
        let k = encode_uniques(std::slice::from_ref(key))?;
        match k.first() {
            Some(k) => Ok(self.inner.uniques.get(k)?.map(|v| v.to_vec())),
            None => Ok(None),
        }
    }

    /// Number of entries of an index for one tenant, from its counter (no scan).
    pub fn count(&self, index: &'static str, tenant: &[u8]) -> Result<u64, StorageError> {
        match self.inner.counters.get(tenant_prefix(index, tenant)?)? {
            Some(v) => decode_counter(&v),
            None => Ok(0),
        }
    }

    /// One page of an index, merged over the given tenants in sort order. Its cost grows with
    /// `offset + limit` and the number of tenants, never with the size of the store.
    pub fn page(&self, q: &PageQuery<'_>) -> Result<Page, StorageError> {
        let mut total = 0u64;
        for tenant in q.tenants {
            total += self.count(q.index, tenant)?;
        }
        let mut ids = Vec::new();
        let wanted = q.offset.saturating_add(q.limit);
        for (n, id) in self
            .index_iter(q.index, q.tenants, q.direction)?
            .enumerate()
        {
            let n = n as u64;
            if n >= wanted {
                break;
            }
            let id = id?;
            if n >= q.offset {
                ids.push(id);
            }
        }
        Ok(Page { ids, total })
    }

    /// Record ids of an index in sort order, merged over the given tenants; lazy, so a caller
    /// that filters can stop as soon as it has what it needs.
    pub fn index_iter(
        &self,
        index: &'static str,
        tenants: &[Vec<u8>],
        direction: Direction,
    ) -> Result<IndexIter, StorageError> {
        let mut heads = Vec::with_capacity(tenants.len());
        for tenant in tenants {
            let prefix = tenant_prefix(index, tenant)?;
            let plen = prefix.len();
            let iter = self.inner.index.scan_prefix(prefix);
            let iter: Box<dyn Iterator<Item = sled::Result<(sled::IVec, sled::IVec)>> + Send> =
                match direction {
                    Direction::Asc => Box::new(iter),
                    Direction::Desc => Box::new(iter.rev()),
                };
            heads.push(Head {
                plen,
                iter,
                peeked: None,
            });
        }
        Ok(IndexIter { heads, direction })
    }

    /// Ids in one tenant of an index whose sort key lies in `[from, to)`, ascending.
    pub fn index_range(
        &self,
        index: &'static str,
        tenant: &[u8],
        from: &[u8],
        to: Option<&[u8]>,
    ) -> Result<Vec<Vec<u8>>, StorageError> {
        let prefix = tenant_prefix(index, tenant)?;
        let mut start = prefix.clone();
        start.extend_from_slice(from);
        let mut out = Vec::new();
        for item in self.inner.index.range(start..) {
            let (k, v) = item?;
            let Some(suffix) = k.strip_prefix(prefix.as_slice()) else {
                break;
            };
            if let Some(to) = to {
                if suffix >= to {
                    break;
                }
            }
            out.push(v.to_vec());
        }
        Ok(out)
    }

    pub fn get_meta(&self, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self.inner.meta.get(key.as_bytes())?.map(|v| v.to_vec()))
    }

    /// Compares the stored index entries, counters and unique keys of `R` with the ones its
    /// records derive.
    pub fn verify_indexes<R: Record>(&self) -> Result<IndexReport, StorageError> {
        let (expected_index, expected_counters, expected_uniques) = self.expected_keys::<R>()?;
        let mut report = IndexReport::default();
        let actual_index = self.keys_under(&self.inner.index, R::INDEXES)?;
        let actual_uniques = self.keys_under(&self.inner.uniques, R::UNIQUES)?;
        report.missing.extend(
            expected_index
                .keys()
                .filter(|k| !actual_index.contains_key(*k))
                .cloned(),
        );
        report.missing.extend(
            expected_uniques
                .keys()
                .filter(|k| !actual_uniques.contains_key(*k))
                .cloned(),
        );
        report.extra.extend(
            actual_index
                .keys()
                .filter(|k| !expected_index.contains_key(*k))
                .cloned(),
        );
        report.extra.extend(
            actual_uniques
                .keys()
                .filter(|k| !expected_uniques.contains_key(*k))
                .cloned(),
        );
        let actual_counters = self.keys_under(&self.inner.counters, R::INDEXES)?;
        for (k, v) in &actual_counters {
            let expected = expected_counters.get(k).copied().unwrap_or(0);
            if decode_counter(v)? != expected {
                report.wrong_counters.push(k.clone());
            }
        }
        for k in expected_counters.keys() {
            if !actual_counters.contains_key(k) {
                report.wrong_counters.push(k.clone());
            }
        }
        Ok(report)
    }

    /// Drops and rewrites every index entry, counter and unique key of `R` from its records.
    pub fn rebuild_indexes<R: Record>(&self) -> Result<(), StorageError> {
        let (index, counters, uniques) = self.expected_keys::<R>()?;
        for (tree, names) in [
            (&self.inner.index, R::INDEXES),
            (&self.inner.counters, R::INDEXES),
            (&self.inner.uniques, R::UNIQUES),
        ] {
            for k in self.keys_under(tree, names)?.keys() {
                tree.remove(k)?;
            }
        }
        for (k, v) in index {
            self.inner.index.insert(k, v)?;
        }
        for (k, v) in counters {
            self.inner.counters.insert(k, &v.to_be_bytes())?;
        }
        for (k, v) in uniques {
            self.inner.uniques.insert(k, v)?;
        }
        self.inner.db.flush()?;
        Ok(())
    }

    #[allow(clippy::type_complexity)]
    fn expected_keys<R: Record>(
        &self,
    ) -> Result<
        (
            std::collections::BTreeMap<Vec<u8>, Vec<u8>>,
            std::collections::BTreeMap<Vec<u8>, u64>,
            std::collections::BTreeMap<Vec<u8>, Vec<u8>>,
        ),
        StorageError,
    > {
        let mut index = std::collections::BTreeMap::new();
        let mut counters = std::collections::BTreeMap::new();
        let mut uniques = std::collections::BTreeMap::new();
        for record in self.scan::<R>() {
            let record = record?.value;
            let id = record.id_key();
            let (i, u) = derived_keys(&record, &id)?;
            for e in i {
                *counters.entry(e.counter).or_insert(0) += 1;
                index.insert(e.key, id.clone());
            }
            for k in u {
                uniques.insert(k, id.clone());
            }
        }
        Ok((index, counters, uniques))
    }

    fn keys_under(
        &self,
        tree: &sled::Tree,
        names: &[&str],
    ) -> Result<std::collections::BTreeMap<Vec<u8>, Vec<u8>>, StorageError> {
        let mut out = std::collections::BTreeMap::new();
        for name in names {
            let mut prefix = name.as_bytes().to_vec();
            prefix.push(0);
            for item in tree.scan_prefix(prefix) {
                let (k, v) = item?;
                out.insert(k.to_vec(), v.to_vec());
            }
        }
        Ok(out)
    }

    /// The directory the store lives in, if it is not temporary.
    pub fn exists(path: &Path) -> bool {
        path.join("db").exists()
    }
}

#[cfg(test)]
impl Store {
    pub(crate) fn test_hooks(&self) -> &crate::flusher::TestHooks {
        self.inner.flusher.test_hooks()
    }
    pub(crate) fn inner_index_keys(&self) -> Vec<Vec<u8>> {
        self.inner
            .index
            .iter()
            .keys()
            .map(|k| k.unwrap().to_vec())
            .collect()
    }
    pub(crate) fn inner_remove_index(&self, key: &[u8]) {
        self.inner.index.remove(key).unwrap();
    }
    pub(crate) fn inner_insert_index(&self, key: Vec<u8>) {
        self.inner.index.insert(key, &[0u8; 8]).unwrap();
    }
    pub(crate) fn inner_set_counter(&self, key: Vec<u8>, value: u64) {
        self.inner
            .counters
            .insert(key, &value.to_be_bytes())
            .unwrap();
    }
}

struct Head {
    plen: usize,
    iter: Box<dyn Iterator<Item = sled::Result<(sled::IVec, sled::IVec)>> + Send>,
    /// The next (sort suffix, id) of this tenant, already read.
    peeked: Option<(Vec<u8>, Vec<u8>)>,
}

impl Head {
    fn fill(&mut self) -> Result<(), StorageError> {
        if self.peeked.is_none() {
            if let Some(item) = self.iter.next() {
                let (k, v) = item?;
                let suffix = k.get(self.plen..).unwrap_or_default().to_vec();
                self.peeked = Some((suffix, v.to_vec()));
            }
        }
        Ok(())
    }
}

/// Ids of index entries in sort order over several tenants (see [`Store::index_iter`]).
pub struct IndexIter {
    heads: Vec<Head>,
    direction: Direction,
}

impl Iterator for IndexIter {
    type Item = Result<Vec<u8>, StorageError>;

    fn next(&mut self) -> Option<Self::Item> {
        for head in self.heads.iter_mut() {
            if let Err(e) = head.fill() {
                return Some(Err(e));
            }
        }
        let mut best: Option<(usize, &[u8])> = None;
        for (n, head) in self.heads.iter().enumerate() {
            let Some((suffix, _)) = &head.peeked else {
                continue;
            };
            let better = match best {
                None => true,
                Some((_, b)) => match self.direction {
                    Direction::Asc => suffix.as_slice() < b,
                    Direction::Desc => suffix.as_slice() > b,
                },
            };
            if better {
                best = Some((n, suffix.as_slice()));
            }
        }
        let best = best.map(|(n, _)| n);
        let head = self.heads.get_mut(best?)?;
        head.peeked.take().map(|(_, id)| Ok(id))
    }
}

/// The trees of a store, in the order a [`Snapshot`] holds them.
const TREES: [&str; 5] = ["records", "index", "counters", "uniques", "meta"];
const SNAPSHOT_MAGIC: &[u8] = b"TOLLGATE-SNAPSHOT-1\n";
const SNAPSHOT_END: &[u8] = b"END\n";

/// A consistent copy of every key of a store (see [`Store::snapshot`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    trees: Vec<(String, Vec<KeyValue>)>,
}

type KeyValue = (Vec<u8>, Vec<u8>);

impl Snapshot {
    /// Number of records (not index entries) it holds.
    pub fn record_count(&self) -> usize {
        self.trees
            .iter()
            .find(|(name, _)| name == "records")
            .map_or(0, |(_, entries)| entries.len())
    }

    /// The stable file format: a magic line, then per tree its name, its entry count and
    /// length-prefixed keys and values (big-endian), then an end marker with the total.
    pub fn write_to(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        w.write_all(SNAPSHOT_MAGIC)?;
        let mut total = 0u64;
        for (name, entries) in &self.trees {
            w.write_all(&(name.len() as u32).to_be_bytes())?;
            w.write_all(name.as_bytes())?;
            w.write_all(&(entries.len() as u64).to_be_bytes())?;
            for (k, v) in entries {
                w.write_all(&(k.len() as u32).to_be_bytes())?;
                w.write_all(k)?;
                w.write_all(&(v.len() as u32).to_be_bytes())?;
                w.write_all(v)?;
            }
            total += entries.len() as u64;
        }
        w.write_all(&u32::MAX.to_be_bytes())?;
        w.write_all(SNAPSHOT_END)?;
        w.write_all(&total.to_be_bytes())?;
        Ok(())
    }

    /// Reads what [`Snapshot::write_to`] wrote; a truncated or foreign file is an error.
    pub fn read_from(r: &mut impl std::io::Read) -> Result<Snapshot, StorageError> {
        fn bad(what: &str) -> StorageError {
            StorageError::Corrupt(format!("not a complete Tollgate snapshot: {what}"))
        }
        fn exact(r: &mut impl std::io::Read, n: usize) -> Result<Vec<u8>, StorageError> {
            let mut buf = vec![0u8; n];
            r.read_exact(&mut buf).map_err(|_| bad("truncated"))?;
            Ok(buf)
        }
        fn u32_of(r: &mut impl std::io::Read) -> Result<u32, StorageError> {
            let b = exact(r, 4)?;
            Ok(u32::from_be_bytes(b.try_into().map_err(|_| bad("length"))?))
        }
        fn u64_of(r: &mut impl std::io::Read) -> Result<u64, StorageError> {
            let b = exact(r, 8)?;
            Ok(u64::from_be_bytes(b.try_into().map_err(|_| bad("count"))?))
        }
        if exact(r, SNAPSHOT_MAGIC.len())? != SNAPSHOT_MAGIC {
            return Err(bad("wrong header"));
        }
        let mut trees = Vec::new();
        let mut total = 0u64;
        loop {
            let len = u32_of(r)?;
            if len == u32::MAX {
                break;
            }
            let name = String::from_utf8(exact(r, len as usize)?).map_err(|_| bad("tree name"))?;
            if !TREES.contains(&name.as_str()) {
                return Err(bad("unknown tree"));
            }
            let count = u64_of(r)?;
            let mut entries = Vec::new();
            for _ in 0..count {
                let klen = u32_of(r)? as usize;
                let k = exact(r, klen)?;
                let vlen = u32_of(r)? as usize;
                let v = exact(r, vlen)?;
                entries.push((k, v));
            }
            total += count;
            trees.push((name, entries));
        }
        if exact(r, SNAPSHOT_END.len())? != SNAPSHOT_END || u64_of(r)? != total {
            return Err(bad("end marker"));
        }
        Ok(Snapshot { trees })
    }
}

impl Store {
    /// A consistent copy of the whole store: commits wait while it is read (every tree
    /// at one point in time, so records, indexes, counters and unique keys agree).
    /// It holds every committed write, so every acknowledged one. In memory: meant for
    /// stores that fit in RAM.
    pub fn snapshot(&self) -> Result<Snapshot, StorageError> {
        let _exclusive = self.inner.gate.write().unwrap_or_else(|p| p.into_inner());
        let mut trees = Vec::with_capacity(TREES.len());
        for name in TREES {
            let mut entries = Vec::new();
            for item in self.tree(name).iter() {
                let (k, v) = item?;
                entries.push((k.to_vec(), v.to_vec()));
            }
            trees.push((name.to_string(), entries));
        }
        Ok(Snapshot { trees })
    }

    /// Removes the first entry of an index, leaving its record and counter as they are:
    /// deliberate damage, for tests of `tollgate check`. Returns whether one was removed.
    #[doc(hidden)]
    pub fn damage_index_for_tests(&self, index: &str) -> Result<bool, StorageError> {
        let mut prefix = index.as_bytes().to_vec();
        prefix.push(0);
        match self.inner.index.scan_prefix(prefix).next() {
            Some(item) => {
                let (k, _) = item?;
                self.inner.index.remove(k)?;
                self.inner.db.flush()?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Whether the store holds nothing at all.
    pub fn is_empty(&self) -> bool {
        TREES.iter().all(|name| self.tree(name).is_empty())
    }

    /// Loads a snapshot into an empty store and flushes it. Refuses a store with data.
    pub fn restore(&self, snapshot: &Snapshot) -> Result<(), StorageError> {
        if !self.is_empty() {
            return Err(StorageError::Conflict {
                collection: "store",
                expected: "an empty store".into(),
                found: None,
            });
        }
        for (name, entries) in &snapshot.trees {
            let tree = self.tree(name);
            for (k, v) in entries {
                tree.insert(k.as_slice(), v.as_slice())?;
            }
        }
        self.inner.db.flush()?;
        Ok(())
    }

    fn tree(&self, name: &str) -> &sled::Tree {
        let i = &self.inner;
        match name {
            "records" => &i.records,
            "index" => &i.index,
            "counters" => &i.counters,
            "uniques" => &i.uniques,
            _ => &i.meta,
        }
    }
}
