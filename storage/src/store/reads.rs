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

impl Direction {
    pub fn reversed(self) -> Direction {
        match self {
            Direction::Asc => Direction::Desc,
            Direction::Desc => Direction::Asc,
        }
    }
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

impl<'a> PageQuery<'a> {
    /// The page as ascending positions of one tenant of `total` entries: the first, and
    /// how many.
    pub fn ascending_span(&self, total: u64) -> (u64, u64) {
        let end = self.offset.saturating_add(self.limit).min(total);
        let count = end.saturating_sub(self.offset);
        match self.direction {
            Direction::Asc => (self.offset.min(total), count),
            Direction::Desc => (total - end, count),
        }
    }

    /// The same page read from the index's other end, when that end is nearer (a page
    /// past the middle of `total` entries): its ids come in the reverse order. A read skips
    /// the entries before its offset one by one (on the embedded engine, those past its
    /// nearest mark: `sled::marks`), so the last pages cost
    /// what the first do. One tenant only (a merge over several breaks ties of equal sort
    /// keys by tenant, which reversing would not keep).
    pub fn from_nearer_end(&self, total: u64) -> Option<PageQuery<'a>> {
        if self.tenants.len() != 1 || self.limit == 0 || self.offset >= total {
            return None;
        }
        let end = self.offset.saturating_add(self.limit).min(total);
        let after = total - end;
        (after < self.offset).then(|| PageQuery {
            index: self.index,
            tenants: self.tenants,
            direction: self.direction.reversed(),
            offset: after,
            limit: end - self.offset,
        })
    }
}

/// Ids (primary keys) of one page, and the entry count over all the tenants queried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub ids: Vec<Vec<u8>>,
    pub total: u64,
}
