//! Usage billing (issue 51, `polar-2026.md` §7): events ingested exactly once, meters that
//! count them, quantities over time and the customers' meters.
//!
//! * [`eval`]: whether an event matches a meter and what it adds (Polar's Python rules).
//! * [`keys`]: the usage store's key layout.
//! * [`series`]: the quantities' arithmetic (series points, zone buckets, folding).
//! * [`ingest`]: `POST /v1/events/ingest` and the events' reads.
//! * [`meters`]: the meters' CRUD and their quantities.
//! * [`backfill`]: every meter counts every event once, whenever it was created.
//! * [`customer_meters`]: the customer meters, merchant and portal.

pub mod backfill;
pub mod customer_meters;
pub mod eval;
pub mod ingest;
pub mod keys;
pub mod meters;
pub mod quantities;
pub mod series;
