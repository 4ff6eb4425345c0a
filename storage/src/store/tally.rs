//! Tallies: the counters of a [`crate::Record::TALLIED`] record (usage, validations, the latest
//! validation) kept apart from its payload, where the engine can move them without
//! conflicting with the record's writers (issue 33).
//!
//! Design: only PostgreSQL keeps them ([`Store::keeps_tallies`]; `pg/tally.rs` says how).
//! There several nodes count validations of one key, and counters inside the payload would
//! make every validation a conflicting rewrite of the whole record. The embedded engine has
//! one writer per record and keeps the counters in the payload, as before: its callers keep
//! their own path.
//! Batches carry the tally side of their writes themselves (`batch::TallyPlan`,
//! [`crate::Batch::set_tally_usage`]), and reads merge the counters back.

use super::{Engine, Store};

impl Store {
    /// Whether the counters of [`crate::Record::TALLIED`] records are kept apart from their
    /// payloads (PostgreSQL): then puts never write them (after the first) and reads merge
    /// them in. `false` on the embedded store, whose records carry their counters.
    pub fn keeps_tallies(&self) -> bool {
        match &self.engine {
            Engine::Embedded(_) => false,
            Engine::Postgres(_) => true,
        }
    }
}
