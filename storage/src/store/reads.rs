//! The types of paginated index reads, shared by both engines: a page of an index merged
//! over several tenants ([`PageQuery`], [`Page`], [`Direction`]), whose cost grows with the
//! page, never with the size of the store. Each engine reads them its own way
//! (`sled/read.rs`, `pg/read.rs`), as it does records, unique keys and counts.

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
