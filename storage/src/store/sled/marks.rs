//! Where a deep page of a one-tenant index starts, without walking to it from an end.
//!
//! sled has no positions: a page at offset N reads the N entries before it one by one.
//! The first page read deep into an index (one tenant) notes, on its way, the key found
//! at every [`STRIDE`]th position from the start; a later page starts from the mark just
//! before its first position and walks less than a stride. Marks live in memory only, for
//! at most [`MAX_PREFIXES`] indexes' tenants, and stay true as entries come and go: a
//! commit that adds or removes an entry of a tenant drops that tenant's marks at and after
//! the entry's key (what it shifts); an entry added past the last mark (a list sorted by
//! creation time grows at its end) drops none. A walk that a commit's drop overtook keeps
//! none of what it noted ([`Marks::note`]'s generation).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Entries between two marks: a deep page walks at most this many before its first.
pub(crate) const STRIDE: u64 = 1024;

/// Tenants of indexes holding marks, at most; one more forgets them all (the next deep
/// reads note them again).
const MAX_PREFIXES: usize = 256;

/// The marks of one index tenant (its counter key, `layout::tenant_prefix`).
#[derive(Default)]
struct Tenant {
    /// `keys[i]` is the full index key at position `i * STRIDE` from the start.
    keys: Vec<Vec<u8>>,
    /// The walks under way, each with the lowest key a commit touched since it began.
    walks: HashMap<u64, Option<Vec<u8>>>,
}

#[derive(Default)]
pub(crate) struct Marks {
    tenants: Mutex<(HashMap<Vec<u8>, Tenant>, u64)>,
    /// Whether any tenant has marks or a walk: commits skip the lock while none has.
    any: AtomicBool,
}

/// One walk through a tenant's entries, from the closest mark before the position it
/// wants: it notes the marks it passes beyond the known ones ([`Walk::finish`]).
pub(crate) struct Walk<'a> {
    marks: &'a Marks,
    prefix: Vec<u8>,
    id: u64,
    /// The position of the key it starts from (a multiple of [`STRIDE`]), and the key;
    /// `None`: from the tenant's first entry.
    pub from: Option<(u64, Vec<u8>)>,
    /// How many marks are known: the walk notes those at positions from
    /// `known * STRIDE` on.
    pub known: usize,
}

impl Marks {
    /// Begins a walk of the tenant `prefix` towards `position`: from the closest mark at
    /// or before it.
    pub(crate) fn walk(&self, prefix: &[u8], position: u64) -> Walk<'_> {
        let mut guard = self.lock();
        let (tenants, next) = &mut *guard;
        if !tenants.contains_key(prefix) && tenants.len() >= MAX_PREFIXES {
            tenants.clear();
        }
        *next += 1;
        let id = *next;
        let t = tenants.entry(prefix.to_vec()).or_default();
        t.walks.insert(id, None);
        self.any.store(true, Ordering::Release);
        let at = usize::try_from(position / STRIDE)
            .unwrap_or(usize::MAX)
            .min(t.keys.len().saturating_sub(1));
        Walk {
            marks: self,
            prefix: prefix.to_vec(),
            id,
            from: t.keys.get(at).map(|k| (at as u64 * STRIDE, k.clone())),
            known: t.keys.len(),
        }
    }

    /// Committed writes added or removed these full index keys, each of the tenant
    /// given: the marks at and after a key no longer stand where they did, and no walk
    /// under way may note them.
    pub(crate) fn touched<'k>(&self, keys: impl IntoIterator<Item = (&'k [u8], &'k [u8])>) {
        if !self.any.load(Ordering::Acquire) {
            return;
        }
        let mut guard = self.lock();
        for (prefix, key) in keys {
            let Some(t) = guard.0.get_mut(prefix) else {
                continue;
            };
            let keep = t.keys.partition_point(|k| k.as_slice() < key);
            t.keys.truncate(keep);
            for lowest in t.walks.values_mut() {
                if lowest.as_deref().is_none_or(|l| key < l) {
                    *lowest = Some(key.to_vec());
                }
            }
        }
    }

    /// Forgets every mark (the index tree was rewritten outside commits).
    pub(crate) fn clear(&self) {
        let mut guard = self.lock();
        for t in guard.0.values_mut() {
            t.keys.clear();
            for lowest in t.walks.values_mut() {
                *lowest = Some(Vec::new());
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (HashMap<Vec<u8>, Tenant>, u64)> {
        // The map holds no invariant a panicking holder could break halfway.
        self.tenants
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Walk<'_> {
    /// Ends the walk, keeping the marks it found (`found[i]` at position
    /// `(known + i) * STRIDE`) that lie before every key a commit touched meanwhile, if
    /// the known ones are still as they were.
    pub(crate) fn finish(self, found: Vec<Vec<u8>>) {
        let mut guard = self.marks.lock();
        let Some(t) = guard.0.get_mut(&self.prefix) else {
            return;
        };
        let Some(lowest) = t.walks.remove(&self.id) else {
            return;
        };
        if t.keys.len() != self.known {
            return;
        }
        t.keys.extend(
            found
                .into_iter()
                .take_while(|k| lowest.as_deref().is_none_or(|l| k.as_slice() < l)),
        );
    }
}

impl Drop for Walk<'_> {
    fn drop(&mut self) {
        let mut guard = self.marks.lock();
        if let Some(t) = guard.0.get_mut(&self.prefix) {
            t.walks.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u64) -> Vec<u8> {
        let mut k = b"p\0".to_vec();
        k.extend_from_slice(&n.to_be_bytes());
        k
    }

    #[test]
    fn a_walk_notes_marks_and_a_later_page_starts_from_the_closest() {
        let m = Marks::default();
        let w = m.walk(b"p\0", 5000);
        assert!(w.from.is_none());
        w.finish(vec![key(0), key(1024), key(2048)]);
        assert_eq!(m.walk(b"p\0", 2100).from, Some((2048, key(2048))));
        assert_eq!(m.walk(b"p\0", 1500).from, Some((1024, key(1024))));
        // Past the last mark: from the last; the walk notes the next ones.
        let w = m.walk(b"p\0", 9000);
        assert_eq!((w.from.clone(), w.known), (Some((2048, key(2048))), 3));
        w.finish(vec![key(3072)]);
        assert_eq!(m.walk(b"p\0", 9000).from, Some((3072, key(3072))));
    }

    #[test]
    fn a_write_drops_the_marks_it_shifts_and_a_walk_keeps_only_those_before_it() {
        let m = Marks::default();
        m.walk(b"p\0", 0).finish(vec![key(0), key(1024), key(2048)]);
        // Past the last mark (the list grows at its end): nothing dropped, and a walk
        // under way keeps what it found before that key.
        let w = m.walk(b"p\0", 4000);
        m.touched([(b"p\0".as_slice(), key(5000).as_slice())]);
        assert_eq!(m.walk(b"p\0", 4000).from, Some((2048, key(2048))));
        w.finish(vec![key(3072), key(5500)]);
        assert_eq!(m.walk(b"p\0", 9000).known, 4);
        // Within: the marks at and after it go; before it, they stay.
        let w = m.walk(b"p\0", 9000);
        m.touched([(b"p\0".as_slice(), key(1024).as_slice())]);
        assert_eq!(m.walk(b"p\0", 4000).from, Some((0, key(0))));
        // The walk begun before that write keeps nothing: the marks it built on moved.
        w.finish(vec![key(4096)]);
        assert_eq!(m.walk(b"p\0", 4000).known, 1);
        // Another tenant's write changes nothing here.
        m.touched([(b"q\0".as_slice(), key(0).as_slice())]);
        assert_eq!(m.walk(b"p\0", 4000).known, 1);
        // A walk dropped unfinished leaves nothing behind; clearing forgets every mark.
        drop(m.walk(b"p\0", 4000));
        m.clear();
        assert!(m.walk(b"p\0", 4000).from.is_none());
    }
}
