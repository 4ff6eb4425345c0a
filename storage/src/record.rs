use crate::StorageError;

/// A type the store can persist: a collection of records keyed by id, each with the
/// secondary index entries and unique keys derived from it.
///
/// The store writes the record, removes the index entries and unique keys of the previous
/// revision, writes the new ones and adjusts the per-tenant counters, all in one
/// transaction (garage's `TableSchema::updated` idea).
pub trait Record: Sized + Send + Sync + 'static {
    /// Collection name: the key prefix of this type's records. Unique per type.
    const COLLECTION: &'static str;
    /// Format version that [`Record::encode`] writes.
    const VERSION: u16;
    /// Index names this type writes; used to verify and rebuild them.
    const INDEXES: &'static [&'static str] = &[];
    /// Unique constraint names this type writes; used to verify and rebuild them.
    const UNIQUES: &'static [&'static str] = &[];

    /// Whether writes of this type are recorded in the store's change feed (see
    /// [`crate::Store::changes`]): its creation, its deletion, and every change of
    /// [`Record::feed_digest`].
    const FEED: bool = false;

    /// The part of the record whose change is worth a feed entry: a write that leaves it
    /// as it was records nothing (a counter, a timestamp of last use). `None`
    /// (the default): every change of the stored payload counts.
    fn feed_digest(&self) -> Option<Vec<u8>> {
        None
    }

    /// Whether the record has counters ([`Tally`]) kept apart from its payload
    /// ([`crate::Store::counters_apart`]): they live in a row of their own (PostgreSQL: a
    /// tally row; embedded: an entry of the tallies tree), moved by
    /// [`crate::Store::count_hit`] and [`crate::Store::add_hits`] without rewriting the
    /// record, and reads merge them back ([`Record::set_tally`]). On PostgreSQL the row is
    /// created from the payload's counters (the record's first put, or
    /// [`crate::Store::ensure_tallies`]) and later puts never write them (several nodes
    /// count). On the embedded store the record has a single writer: its puts carry the
    /// counters in the payload, and an entry (written by [`crate::Batch::write_tally`] or
    /// counting) is read only while the record is at the revision it names.
    const TALLIED: bool = false;

    /// For a [`Record::TALLIED`] type: the counters the payload carries, and the limit of
    /// its bounded counter ([`Tally::bounded`]; `None`: no limit). The limit stays the
    /// payload's truth; PostgreSQL mirrors it into the tally row with every put, the
    /// embedded engine copies it into the entries it writes.
    fn tally(&self) -> (Tally, Option<i64>) {
        (Tally::default(), None)
    }

    /// For a [`Record::TALLIED`] type: replaces the payload's counters with the stored
    /// ones (a read merging its counters' row).
    fn set_tally(&mut self, _tally: &Tally) {}

    /// The primary key inside the collection (usually the 16 bytes of a UUID).
    fn id_key(&self) -> Vec<u8>;
    /// The payload for format version [`Record::VERSION`].
    fn encode(&self) -> Result<Vec<u8>, StorageError>;
    /// Reads a payload of any format version this build supports (migrating old ones).
    fn decode(version: u16, payload: &[u8]) -> Result<Self, StorageError>;
    /// The secondary index entries of this revision.
    fn index_entries(&self) -> Vec<IndexEntry> {
        Vec::new()
    }
    /// The unique keys this revision claims.
    fn unique_keys(&self) -> Vec<UniqueKey> {
        Vec::new()
    }
}

/// The counters of a [`Record::TALLIED`] record, moved by [`crate::Store::count_hit`] (a
/// hit) and [`crate::Store::add_hits`] (hits counted elsewhere). What they mean is the
/// record type's business.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// The counter a hit may raise only within the record's limit ([`Record::tally`]):
    /// [`crate::Store::count_hit`] adds its `add_bounded` unless that passes the limit.
    pub bounded: i64,
    /// How many hits were counted: one per [`crate::Store::count_hit`] that counted, `n` per
    /// entry of [`crate::Store::add_hits`]. Never limited.
    pub hits: i64,
    /// The latest hit, in microseconds since the Unix epoch (`None`: never).
    pub last_hit_us: Option<i64>,
}

/// One entry in a sorted secondary index: `index | tenant | sort | id`.
/// Each (index, tenant) pair of a counted entry ([`IndexEntry::new`]) has a counter of its
/// entries, so lists know `total_count` without scanning. An uncounted entry
/// ([`IndexEntry::uncounted`]) moves no counter: a search term's entry, whose (index,
/// tenant) pairs are many and some hot ("gma" of every Gmail address), so a counter would
/// be a point of contention for every write carrying the term, and nothing reads it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IndexEntry {
    pub index: &'static str,
    pub tenant: Vec<u8>,
    pub sort: Vec<u8>,
    /// Whether the (index, tenant) pair has a counter ([`crate::Store::count`]).
    pub counted: bool,
}

impl IndexEntry {
    pub fn new(index: &'static str, tenant: impl Into<Vec<u8>>, sort: impl Into<Vec<u8>>) -> Self {
        Self {
            index,
            tenant: tenant.into(),
            sort: sort.into(),
            counted: true,
        }
    }

    /// An entry whose (index, tenant) pair has no counter: written and removed with its
    /// record like any other, read in order by [`crate::Store::index_iter`], but
    /// [`crate::Store::count`] and the totals of [`crate::Store::page`] do not see it. An
    /// index's entries must be all counted or all uncounted.
    pub fn uncounted(
        index: &'static str,
        tenant: impl Into<Vec<u8>>,
        sort: impl Into<Vec<u8>>,
    ) -> Self {
        Self {
            counted: false,
            ..Self::new(index, tenant, sort)
        }
    }
}

/// A value that at most one record may hold within a tenant (a slug, an e-mail address,
/// a token hash). Doubles as a lookup from the value to the record's id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UniqueKey {
    pub name: &'static str,
    pub tenant: Vec<u8>,
    pub value: Vec<u8>,
}

impl UniqueKey {
    pub fn new(name: &'static str, tenant: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Self {
        Self {
            name,
            tenant: tenant.into(),
            value: value.into(),
        }
    }
}

/// A record as stored, with the revision that conditional writes compare against.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored<R> {
    pub rev: u64,
    pub value: R,
}

/// The condition a write puts on the record's current revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Write whatever is there.
    Any,
    /// The record must not exist yet (a create).
    Absent,
    /// The record must be at exactly this revision (compare-and-swap).
    Rev(u64),
}

impl Expect {
    pub(crate) fn check(
        self,
        collection: &'static str,
        found: Option<u64>,
    ) -> Result<(), StorageError> {
        let ok = match self {
            Expect::Any => true,
            Expect::Absent => found.is_none(),
            Expect::Rev(r) => found == Some(r),
        };
        if ok {
            Ok(())
        } else {
            Err(StorageError::Conflict {
                collection,
                expected: match self {
                    Expect::Any => "any".into(),
                    Expect::Absent => "absent".into(),
                    Expect::Rev(r) => format!("revision {r}"),
                },
                found,
            })
        }
    }
}
