//! The usage store's key layout (`tollgate_storage::store::usage`: the store knows bytes
//! only). Every key starts with the organization, so that one organization's data is one
//! range; timestamps are µs since the epoch, order-preserving.
//!
//! | Space | Key | What |
//! |---|---|---|
//! | event | org ‖ event id | the event (`UsageEvent::encode`) |
//! | index | `T` ‖ org ‖ ts ‖ id | the organization's events by time |
//! | index | `S` ‖ org ‖ scope ‖ ts ‖ id | a customer scope's events by time |
//! | index | `N` ‖ org ‖ name ‖ ts ‖ id | the events of a name by time |
//! | index | `G` ‖ org ‖ generation ‖ id | the events by the meter generation they were counted at |
//! | aggregate | `M` ‖ org ‖ meter ‖ scope ‖ bucket | a meter's 15-minute bucket |
//! | aggregate | `E` ‖ org ‖ bucket | the organization's events in a 15-minute bucket |
//! | window | `W` ‖ org ‖ meter ‖ scope | a customer meter's window |
//! | meta | `G` ‖ org | the organization's meter generation (`backfill`) |
//! | meta | `B` ‖ org ‖ meter | a meter's state: pending, live from a generation, backfilled |
//!
//! A scope is `*` (every customer), `c:<customer uuid>` (events given a `customer_id`) or
//! `x:<external id>` (events given an `external_customer_id`); a customer's reads merge
//! its `c:` and `x:` scopes. Buckets are 15 minutes of UTC, in seconds since the epoch of
//! their start: every time-zone offset since 2023 is a multiple of 15 minutes, so they
//! compose into any zone's hours, days, weeks, months and years.

use chrono::{DateTime, Utc};
use tollgate_storage::keys::KeyBuf;

use crate::domain::ids::{CustomerId, EventId, MeterId, OrganizationId};

/// Seconds in a bucket.
pub const BUCKET_SECS: i64 = 15 * 60;

/// The scope of every customer.
pub const ALL: &str = "*";

/// The scope of events given this customer id.
pub fn customer_scope(id: CustomerId) -> String {
    format!("c:{}", id.uuid())
}

/// The scope of events given this external customer id.
pub fn external_scope(external_id: &str) -> String {
    format!("x:{external_id}")
}

/// The start (epoch seconds) of the 15-minute bucket holding `t`.
pub fn bucket_of(t: DateTime<Utc>) -> i64 {
    t.timestamp().div_euclid(BUCKET_SECS) * BUCKET_SECS
}

fn us(t: DateTime<Utc>) -> i64 {
    t.timestamp_micros()
}

/// The stored event's key.
pub fn event(org: OrganizationId, id: EventId) -> Vec<u8> {
    KeyBuf::new()
        .fixed(org.uuid().as_bytes())
        .fixed(id.uuid().as_bytes())
        .into_vec()
}

/// The organization's event-by-time index key.
pub fn by_time(org: OrganizationId, ts: DateTime<Utc>, id: EventId) -> Vec<u8> {
    by_time_prefix(org)
        .i64(us(ts))
        .fixed(id.uuid().as_bytes())
        .into_vec()
}

fn by_time_prefix(org: OrganizationId) -> KeyBuf {
    KeyBuf::new().u8(b'T').fixed(org.uuid().as_bytes())
}

/// A scope's event-by-time index key.
pub fn by_scope(org: OrganizationId, scope: &str, ts: DateTime<Utc>, id: EventId) -> Vec<u8> {
    by_scope_prefix(org, scope)
        .i64(us(ts))
        .fixed(id.uuid().as_bytes())
        .into_vec()
}

fn by_scope_prefix(org: OrganizationId, scope: &str) -> KeyBuf {
    KeyBuf::new()
        .u8(b'S')
        .fixed(org.uuid().as_bytes())
        .str(scope)
}

/// A name's event-by-time index key.
pub fn by_name(org: OrganizationId, name: &str, ts: DateTime<Utc>, id: EventId) -> Vec<u8> {
    by_name_prefix(org, name)
        .i64(us(ts))
        .fixed(id.uuid().as_bytes())
        .into_vec()
}

fn by_name_prefix(org: OrganizationId, name: &str) -> KeyBuf {
    KeyBuf::new()
        .u8(b'N')
        .fixed(org.uuid().as_bytes())
        .str(name)
}

/// One of the event indexes, for range reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexOf {
    Time,
    Scope(String),
    Name(String),
}

impl IndexOf {
    fn prefix(&self, org: OrganizationId) -> KeyBuf {
        match self {
            IndexOf::Time => by_time_prefix(org),
            IndexOf::Scope(s) => by_scope_prefix(org, s),
            IndexOf::Name(n) => by_name_prefix(org, n),
        }
    }

    /// The `[start, end)` of the index's keys with a timestamp in `[from, to)` (µs; the
    /// whole index when `None`).
    pub fn range(
        &self,
        org: OrganizationId,
        from: Option<i64>,
        to: Option<i64>,
    ) -> (Vec<u8>, Vec<u8>) {
        let start = self.prefix(org).i64(from.unwrap_or(i64::MIN)).into_vec();
        let end = match to {
            Some(t) => self.prefix(org).i64(t).into_vec(),
            None => prefix_end(self.prefix(org).into_vec()),
        };
        (start, end)
    }

    /// The event id at the end of one of the index's keys.
    pub fn event_id(key: &[u8]) -> Option<EventId> {
        let tail = key.get(key.len().checked_sub(16)?..)?;
        uuid::Uuid::from_slice(tail).ok().map(EventId::from_uuid)
    }
}

/// A meter's bucket row of a scope.
pub fn meter_bucket(org: OrganizationId, meter: MeterId, scope: &str, bucket: i64) -> Vec<u8> {
    meter_scope_prefix(org, meter, scope).i64(bucket).into_vec()
}

fn meter_scope_prefix(org: OrganizationId, meter: MeterId, scope: &str) -> KeyBuf {
    KeyBuf::new()
        .u8(b'M')
        .fixed(org.uuid().as_bytes())
        .fixed(meter.uuid().as_bytes())
        .str(scope)
}

/// The `[start, end)` of a meter's bucket rows of a scope for buckets in `[from, to)`.
pub fn meter_buckets(
    org: OrganizationId,
    meter: MeterId,
    scope: &str,
    from: i64,
    to: i64,
) -> (Vec<u8>, Vec<u8>) {
    (
        meter_bucket(org, meter, scope, from),
        meter_bucket(org, meter, scope, to),
    )
}

/// The `[start, end)` of all a meter's rows (every scope).
pub fn meter_rows(org: OrganizationId, meter: MeterId) -> (Vec<u8>, Vec<u8>) {
    let p = KeyBuf::new()
        .u8(b'M')
        .fixed(org.uuid().as_bytes())
        .fixed(meter.uuid().as_bytes());
    (p.clone().into_vec(), prefix_end(p.into_vec()))
}

/// The scope and bucket of a meter's row key (the inverse of [`meter_bucket`]).
pub fn parse_meter_bucket(key: &[u8]) -> Option<(String, i64)> {
    let rest = key.get(1 + 16 + 16..)?;
    let (scope, tail) = read_str(rest)?;
    let bytes: [u8; 8] = tail.get(..8)?.try_into().ok()?;
    Some((scope, (u64::from_be_bytes(bytes) ^ (1 << 63)) as i64))
}

/// The scope, bucket and member of a [`tollgate_storage::Store::members`] entry (the row
/// key, then the member).
pub fn parse_member(entry: &[u8]) -> Option<(String, i64, &[u8])> {
    let rest = entry.get(1 + 16 + 16..)?;
    let (scope, tail) = read_str(rest)?;
    let bytes: [u8; 8] = tail.get(..8)?.try_into().ok()?;
    Some((
        scope,
        (u64::from_be_bytes(bytes) ^ (1 << 63)) as i64,
        tail.get(8..)?,
    ))
}

/// Reads one escaped, terminated string component (`KeyBuf::str`) and what follows.
fn read_str(bytes: &[u8]) -> Option<(String, &[u8])> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let b = *bytes.get(i)?;
        if b == 0 {
            match *bytes.get(i + 1)? {
                0 => return Some((String::from_utf8(out).ok()?, bytes.get(i + 2..)?)),
                0xFF => {
                    out.push(0);
                    i += 2;
                }
                _ => return None,
            }
        } else {
            out.push(b);
            i += 1;
        }
    }
}

/// The organization's event-count row of a bucket.
pub fn event_count(org: OrganizationId, bucket: i64) -> Vec<u8> {
    KeyBuf::new()
        .u8(b'E')
        .fixed(org.uuid().as_bytes())
        .i64(bucket)
        .into_vec()
}

/// The `[start, end)` of the organization's event-count rows.
pub fn event_counts(org: OrganizationId) -> (Vec<u8>, Vec<u8>) {
    let p = KeyBuf::new().u8(b'E').fixed(org.uuid().as_bytes());
    (p.clone().into_vec(), prefix_end(p.into_vec()))
}

/// A customer meter's window key.
pub fn window(org: OrganizationId, meter: MeterId, scope: &str) -> Vec<u8> {
    KeyBuf::new()
        .u8(b'W')
        .fixed(org.uuid().as_bytes())
        .fixed(meter.uuid().as_bytes())
        .str(scope)
        .into_vec()
}

/// The `[start, end)` of all the organization's windows.
pub fn windows_of(org: OrganizationId) -> (Vec<u8>, Vec<u8>) {
    let p = KeyBuf::new().u8(b'W').fixed(org.uuid().as_bytes());
    (p.clone().into_vec(), prefix_end(p.into_vec()))
}

/// The meter and scope of a window key (the inverse of [`window`]).
pub fn parse_window(key: &[u8]) -> Option<(MeterId, String)> {
    let meter = uuid::Uuid::from_slice(key.get(17..33)?).ok()?;
    let (scope, rest) = read_str(key.get(33..)?)?;
    rest.is_empty()
        .then_some((MeterId::from_uuid(meter), scope))
}

/// The first key after every key that starts with `prefix` (the exclusive end of its
/// range): the prefix with its last byte that is not `0xFF` incremented and what follows
/// dropped. Appending `0xFF` instead would leave out keys whose next byte is `0xFF` (a
/// uuid's first byte can be).
pub fn prefix_end(mut prefix: Vec<u8>) -> Vec<u8> {
    while let Some(last) = prefix.pop() {
        if last != 0xFF {
            prefix.push(last + 1);
            return prefix;
        }
    }
    // Every byte 0xFF (no prefix of ours starts so): nothing sorts after all of them but
    // longer keys; a long run of 0xFF bounds them.
    vec![0xFF; 64]
}

/// The `[start, end)` holding exactly the window key of `(org, meter, scope)`.
pub fn window_range(org: OrganizationId, meter: MeterId, scope: &str) -> (Vec<u8>, Vec<u8>) {
    let k = window(org, meter, scope);
    let mut end = k.clone();
    end.push(0);
    (k, end)
}

/// The organization's event-by-generation index key: the meter generation the event's
/// deltas were computed for (`backfill`).
pub fn by_generation(org: OrganizationId, generation: u64, id: EventId) -> Vec<u8> {
    KeyBuf::new()
        .u8(b'G')
        .fixed(org.uuid().as_bytes())
        .fixed(&generation.to_be_bytes())
        .fixed(id.uuid().as_bytes())
        .into_vec()
}

/// The `[start, end)` of the organization's events counted at generations below `below`.
pub fn generations_below(org: OrganizationId, below: u64) -> (Vec<u8>, Vec<u8>) {
    let p = KeyBuf::new().u8(b'G').fixed(org.uuid().as_bytes());
    (
        p.clone().fixed(&0u64.to_be_bytes()).into_vec(),
        p.fixed(&below.to_be_bytes()).into_vec(),
    )
}

/// The meta key of the organization's meter generation.
pub fn generation(org: OrganizationId) -> Vec<u8> {
    KeyBuf::new()
        .u8(b'G')
        .fixed(org.uuid().as_bytes())
        .into_vec()
}

/// The meta key of a meter's state (`backfill::MeterState`).
pub fn meter_state(org: OrganizationId, meter: MeterId) -> Vec<u8> {
    KeyBuf::new()
        .u8(b'B')
        .fixed(org.uuid().as_bytes())
        .fixed(meter.uuid().as_bytes())
        .into_vec()
}

/// The `[start, end)` of every meter state, of every organization.
pub fn meter_states() -> (Vec<u8>, Vec<u8>) {
    (vec![b'B'], vec![b'C'])
}

/// The organization and meter of a meter state key (the inverse of [`meter_state`]).
pub fn parse_meter_state(key: &[u8]) -> Option<(OrganizationId, MeterId)> {
    if key.len() != 33 || key.first() != Some(&b'B') {
        return None;
    }
    let org = uuid::Uuid::from_slice(key.get(1..17)?).ok()?;
    let meter = uuid::Uuid::from_slice(key.get(17..33)?).ok()?;
    Some((OrganizationId::from_uuid(org), MeterId::from_uuid(meter)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_hold_keys_whose_next_byte_is_ff() {
        let org = OrganizationId::new();
        let meter = MeterId::from_uuid(uuid::Uuid::from_bytes([0xFF; 16]));
        let (start, end) = windows_of(org);
        let k = window(org, meter, "x:usr_1");
        assert!(
            start <= k && k < end,
            "the window of a meter whose id starts with 0xFF"
        );
        let (start, end) = meter_rows(org, meter);
        let row = meter_bucket(org, meter, "*", i64::MAX);
        assert!(start <= row && row < end);
        let (start, end) = event_counts(org);
        let count = event_count(org, i64::MAX);
        assert!(start <= count && count < end);
        assert_eq!(prefix_end(vec![1, 2, 0xFF]), vec![1, 3]);
        assert_eq!(prefix_end(vec![0x57, 0xFF, 0xFF]), vec![0x58]);
        // Another organization's windows stay out.
        let other = window(OrganizationId::new(), meter, "x:usr_1");
        let (start, end) = windows_of(org);
        assert!(!(start <= other && other < end) || other[1..17] == start[1..17]);
    }
    use chrono::TimeZone;

    #[test]
    fn buckets_are_quarter_hours() {
        let t = Utc.with_ymd_and_hms(2026, 8, 1, 11, 59, 59).unwrap();
        assert_eq!(
            bucket_of(t),
            Utc.with_ymd_and_hms(2026, 8, 1, 11, 45, 0)
                .unwrap()
                .timestamp()
        );
        let before_epoch = Utc.with_ymd_and_hms(1969, 12, 31, 23, 59, 0).unwrap();
        assert_eq!(bucket_of(before_epoch), -900);
    }

    #[test]
    fn bucket_keys_sort_by_time_and_parse_back() {
        let org = OrganizationId::new();
        let m = MeterId::new();
        let a = meter_bucket(org, m, "x:a\0b", -900);
        let b = meter_bucket(org, m, "x:a\0b", 0);
        let c = meter_bucket(org, m, "x:a\0b", 900);
        assert!(a < b && b < c);
        assert_eq!(parse_meter_bucket(&c), Some(("x:a\0b".to_string(), 900)));
        let entry = [c.clone(), b"member".to_vec()].concat();
        assert_eq!(
            parse_member(&entry),
            Some(("x:a\0b".to_string(), 900, b"member".as_slice()))
        );
        let (start, end) = meter_rows(org, m);
        assert!(start <= a && c < end);
        // Another scope's rows do not fall in this scope's range.
        let (s, e) = meter_buckets(org, m, "x:a", i64::MIN, i64::MAX);
        assert!(!(s <= a && a < e));
    }

    #[test]
    fn index_ranges_hold_their_keys() {
        let org = OrganizationId::new();
        let id = EventId::new();
        let t = Utc.with_ymd_and_hms(2026, 8, 1, 0, 0, 0).unwrap();
        let k = by_scope(org, "c:1", t, id);
        let (s, e) = IndexOf::Scope("c:1".into()).range(org, None, None);
        assert!(s <= k && k < e);
        let (s, e) = IndexOf::Scope("c:1".into()).range(org, Some(t.timestamp_micros() + 1), None);
        assert!(k < s && s < e);
        assert_eq!(IndexOf::event_id(&k), Some(id));
        let (s, e) = IndexOf::Time.range(org, None, Some(t.timestamp_micros()));
        let k = by_time(org, t, id);
        assert!(s <= k && k >= e);
        let m = MeterId::new();
        let (s, e) = window_range(org, m, "*");
        assert!(s < e);
        assert_eq!(parse_window(&s), Some((m, "*".to_string())));
        let (s2, e2) = windows_of(org);
        assert!(s2 <= s && e < e2);
    }
}
