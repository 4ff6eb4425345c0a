//! Paged lists: pages served from secondary indexes, and pages selected in memory where
//! no index serves the whole order (several `sorting` criteria, or a filter index).

use std::cmp::Ordering;
use std::collections::HashSet;

use chrono::{DateTime, Utc};
use tollgate_storage::{Direction, PageQuery, Record};

use crate::api::{ListResource, Pagination};
use crate::app::paging::Compare;
use crate::app::paging::ListParams;
use crate::error::AppError;
use crate::state::AppState;

/// One page of records from an index over several tenants.
///
/// Without a filter the page is a range read and `total_count` comes from the index's
/// counters, so the cost grows with `page × limit`, never with the store. With a filter
/// (a predicate no index serves), the tenants' entries are scanned in order and counted,
/// so the cost grows with the size of those tenants only.
pub async fn page_of<R: Record>(
    state: &AppState,
    index: &'static str,
    tenants: &[Vec<u8>],
    descending: bool,
    params: ListParams,
    filter: Option<&dyn Fn(&R) -> bool>,
) -> Result<(Vec<R>, u64), AppError> {
    let Some(filter) = filter else {
        let page = state
            .store
            .page(&PageQuery {
                index,
                tenants,
                direction: direction(descending),
                offset: params.offset(),
                limit: params.limit,
            })
            .await?;
        let items = state
            .store
            .get_many::<R>(&page.ids)
            .await?
            .into_iter()
            .map(|s| s.value)
            .collect();
        return Ok((items, page.total));
    };
    let mut items = Vec::new();
    let mut total = 0u64;
    let start = params.offset();
    let end = start.saturating_add(params.limit);
    each_record(state, index, tenants, descending, filter, |record| {
        if total >= start && total < end {
            items.push(record);
        }
        total += 1;
    })
    .await?;
    Ok((items, total))
}

/// One page of records from an index over several tenants, in the order of the list's
/// `sorting` criteria.
///
/// `index` serves the first criterion (read backwards if `backwards`). With one criterion
/// (`several` is `None`) that is the whole order, and the page is [`page_of`]'s. With
/// several, the tenants' records that `filter` keeps (the set [`page_of`]'s filtered scan
/// reads) are read from the index and the page is selected by `several`, ties keeping the
/// index order: the cost grows with those tenants' records, the memory with the page's end.
pub async fn sorted_page_of<R: Record>(
    state: &AppState,
    index: &'static str,
    tenants: &[Vec<u8>],
    backwards: bool,
    params: ListParams,
    filter: Option<&dyn Fn(&R) -> bool>,
    several: Option<&Compare<'_, R>>,
) -> Result<(Vec<R>, u64), AppError> {
    let Some(several) = several else {
        return page_of(state, index, tenants, backwards, params, filter).await;
    };
    let all = |_: &R| true;
    let keep = filter.unwrap_or(&all);
    let mut selector = Selector::new(several, params);
    each_record(state, index, tenants, backwards, keep, |record| {
        selector.push(record)
    })
    .await?;
    Ok(selector.finish())
}

/// The order of a page gathered from a filter index: the index key of the first criterion
/// (the store appends the record's id to it), read backwards or not, refined by all the
/// criteria when the list asks for several.
pub struct KeyOrder<'a, R> {
    pub key: &'a dyn Fn(&R) -> Vec<u8>,
    pub backwards: bool,
    pub several: Option<&'a Compare<'a, R>>,
}

/// One page of the records reachable through a filter index (`tenants`: the filter's
/// values; a record reached through several counts once), kept by `keep`, in `order`. The
/// cost grows with the number of records carrying those filter values, not with the
/// store; the memory with the page's end.
pub async fn filtered_page<R: Record>(
    state: &AppState,
    index: &'static str,
    tenants: &[Vec<u8>],
    keep: &dyn Fn(&R) -> bool,
    order: KeyOrder<'_, R>,
    params: ListParams,
) -> Result<(Vec<R>, u64), AppError> {
    let mut seen = HashSet::new();
    let compare = |a: &(Vec<u8>, R), b: &(Vec<u8>, R)| {
        order
            .several
            .map_or(Ordering::Equal, |several| several(&a.1, &b.1))
            .then_with(|| directed(a.0.cmp(&b.0), order.backwards))
    };
    let mut selector = Selector::new(&compare, params);
    let mut ids = state.store.index_iter(index, tenants, Direction::Asc)?;
    while let Some(id) = ids.next().await {
        let id = id?;
        if !seen.insert(id.clone()) {
            continue;
        }
        if let Some(record) = state.store.get::<R>(&id).await? {
            if keep(&record.value) {
                let mut key = (order.key)(&record.value);
                key.extend_from_slice(&id);
                selector.push((key, record.value));
            }
        }
    }
    let (items, total) = selector.finish();
    Ok((items.into_iter().map(|(_, r)| r).collect(), total))
}

/// The ids under the rarest of several probes of an uncounted index (each probe: a list of
/// tenants, read merged in `direction`), in index order: what a search verifies.
///
/// Uncounted indexes have no counters to say which probe is the rarest, so the probes are
/// read in lockstep, one id from each in turn, until one ends: the cost is the number of
/// probes times the rarest one's length, never the index's size.
pub async fn rarest_probe(
    state: &AppState,
    index: &'static str,
    probes: &[Vec<Vec<u8>>],
    direction: Direction,
) -> Result<Vec<Vec<u8>>, AppError> {
    let mut iters = Vec::with_capacity(probes.len());
    for tenants in probes {
        iters.push((
            state.store.index_iter(index, tenants, direction)?,
            Vec::new(),
        ));
    }
    if iters.is_empty() {
        return Ok(Vec::new());
    }
    loop {
        for (iter, ids) in iters.iter_mut() {
            match iter.next().await {
                Some(id) => ids.push(id?),
                None => return Ok(std::mem::take(ids)),
            }
        }
    }
}

/// The page `params` asks for of `items` in the order `compare`, ties keeping the order
/// the items come in, and how many items there are.
///
/// Only the page's end (`offset + limit` items) is kept: whenever twice that many are held,
/// the first ones are selected (`select_nth_unstable_by`) and the rest dropped, so the
/// memory grows with the page's end and the time, amortized, with the number of items.
pub fn select_page<T>(
    items: impl IntoIterator<Item = Result<T, AppError>>,
    compare: &dyn Fn(&T, &T) -> Ordering,
    params: ListParams,
) -> Result<(Vec<T>, u64), AppError> {
    let mut selector = Selector::new(compare, params);
    for item in items {
        selector.push(item?);
    }
    Ok(selector.finish())
}

/// [`select_page`] fed one item at a time.
pub struct Selector<'a, T> {
    compare: &'a dyn Fn(&T, &T) -> Ordering,
    offset: usize,
    limit: usize,
    end: usize,
    kept: Vec<(u64, T)>,
    total: u64,
}

impl<'a, T> Selector<'a, T> {
    pub fn new(compare: &'a dyn Fn(&T, &T) -> Ordering, params: ListParams) -> Self {
        let offset = usize::try_from(params.offset()).unwrap_or(usize::MAX);
        let limit = usize::try_from(params.limit).unwrap_or(usize::MAX);
        Selector {
            compare,
            offset,
            limit,
            end: offset.saturating_add(limit),
            kept: Vec::new(),
            total: 0,
        }
    }

    pub fn push(&mut self, item: T) {
        self.kept.push((self.total, item));
        self.total += 1;
        if self.end > 0 && self.kept.len() >= self.end.saturating_mul(2) {
            let compare = self.compare;
            let order = |a: &(u64, T), b: &(u64, T)| compare(&a.1, &b.1).then(a.0.cmp(&b.0));
            self.kept.select_nth_unstable_by(self.end, order);
            self.kept.truncate(self.end);
        }
    }

    /// The page and how many items there were.
    pub fn finish(mut self) -> (Vec<T>, u64) {
        let compare = self.compare;
        let order = |a: &(u64, T), b: &(u64, T)| compare(&a.1, &b.1).then(a.0.cmp(&b.0));
        self.kept.sort_unstable_by(order);
        let page = self
            .kept
            .into_iter()
            .skip(self.offset)
            .take(self.limit)
            .map(|(_, item)| item)
            .collect();
        (page, self.total)
    }
}

/// `ordering` as a descending criterion sees it when `descending`.
pub fn directed(ordering: Ordering, descending: bool) -> Ordering {
    if descending {
        ordering.reverse()
    } else {
        ordering
    }
}

/// Compares two times at the precision the indexes keep (microseconds).
pub fn compare_times(a: &DateTime<Utc>, b: &DateTime<Utc>) -> Ordering {
    a.timestamp_micros().cmp(&b.timestamp_micros())
}

/// Compares optional values the way PostgreSQL sorts NULL: after every value ascending,
/// so before every value descending.
pub fn nulls_last<T: Ord>(a: Option<T>, b: Option<T>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

fn direction(descending: bool) -> Direction {
    if descending {
        Direction::Desc
    } else {
        Direction::Asc
    }
}

/// Calls `f` with the tenants' records that `keep` keeps, in index order (backwards if
/// `descending`), read in chunks.
async fn each_record<R: Record>(
    state: &AppState,
    index: &'static str,
    tenants: &[Vec<u8>],
    descending: bool,
    keep: &dyn Fn(&R) -> bool,
    mut f: impl FnMut(R),
) -> Result<(), AppError> {
    let mut ids = state
        .store
        .index_iter(index, tenants, direction(descending))?;
    while let Some(id) = ids.next().await {
        if let Some(record) = state.store.get::<R>(&id?).await? {
            if keep(&record.value) {
                f(record.value);
            }
        }
    }
    Ok(())
}

/// Renders a page as `{items, pagination}`.
pub fn render<R, V>(
    items: &[R],
    total: u64,
    params: ListParams,
    view: impl Fn(&R) -> V,
) -> ListResource<V> {
    ListResource {
        items: items.iter().map(view).collect(),
        pagination: Pagination::new(total, params.limit),
    }
}

/// A filter served by an index: the index and the filter's values as its tenants.
pub type IndexFilter = (&'static str, Vec<Vec<u8>>);

/// Of several filters served by an index each, the one with the fewest entries (read
/// from the per-tenant counters, no scan); `None` if no filter is given.
pub async fn narrowest_filter(
    state: &AppState,
    filters: &[IndexFilter],
) -> Result<Option<IndexFilter>, AppError> {
    let mut best: Option<(u64, &'static str, Vec<Vec<u8>>)> = None;
    for (index, tenants) in filters {
        if tenants.is_empty() {
            continue;
        }
        let mut count = 0u64;
        for t in tenants {
            count = count.saturating_add(state.store.count(index, t).await?);
        }
        if best.as_ref().is_none_or(|(c, _, _)| count < *c) {
            best = Some((count, index, tenants.clone()));
        }
    }
    Ok(best.map(|(_, index, tenants)| (index, tenants)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{QueryParams, SortField, Sorting};

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Field {
        Status,
        Amount,
        Name,
    }

    impl SortField for Field {
        const FIELDS: &'static [(&'static str, Field)] = &[
            ("status", Field::Status),
            ("amount", Field::Amount),
            ("name", Field::Name),
        ];
    }

    #[derive(Debug, Clone, PartialEq)]
    struct Rec {
        id: usize,
        status: u8,
        amount: Option<i64>,
        name: &'static str,
    }

    fn compare(field: Field, descending: bool, a: &Rec, b: &Rec) -> Ordering {
        let ordering = match field {
            Field::Status => a.status.cmp(&b.status),
            Field::Amount => nulls_last(a.amount, b.amount),
            Field::Name => a.name.cmp(b.name),
        };
        directed(ordering, descending)
    }

    fn sorting(query: &str) -> Sorting<Field> {
        let mut q = QueryParams::parse(query);
        let s = Sorting::from_query(&mut q, (Field::Status, false));
        assert!(q.finish().is_ok());
        s
    }

    /// Records with many ties: ids in arrival (index) order.
    fn records(n: usize) -> Vec<Rec> {
        const NAMES: [&str; 3] = ["ann", "bob", "cid"];
        // A small linear congruential generator: the same records every run.
        let mut seed: u64 = 7;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        (0..n)
            .map(|id| Rec {
                id,
                status: next(3) as u8,
                amount: match next(4) {
                    0 => None,
                    a => Some(a as i64 * 100),
                },
                name: NAMES[next(3) as usize],
            })
            .collect()
    }

    fn page(items: &[Rec], cmp: &Compare<'_, Rec>, page: u64, limit: u64) -> (Vec<usize>, u64) {
        let (items, total) = select_page(
            items.iter().cloned().map(Ok),
            cmp,
            ListParams { page, limit },
        )
        .expect("no error");
        (items.iter().map(|r| r.id).collect(), total)
    }

    fn ids(items: &[Rec]) -> Vec<usize> {
        items.iter().map(|r| r.id).collect()
    }

    #[test]
    fn several_criteria_in_order_then_arrival_order() {
        let recs = vec![
            Rec {
                id: 0,
                status: 1,
                amount: Some(5),
                name: "b",
            },
            Rec {
                id: 1,
                status: 2,
                amount: None,
                name: "a",
            },
            Rec {
                id: 2,
                status: 1,
                amount: Some(9),
                name: "a",
            },
            Rec {
                id: 3,
                status: 2,
                amount: Some(5),
                name: "c",
            },
            Rec {
                id: 4,
                status: 1,
                amount: Some(5),
                name: "a",
            },
            Rec {
                id: 5,
                status: 2,
                amount: Some(5),
                name: "c",
            },
        ];
        let s = sorting("sorting=-status&sorting=amount");
        let cmp = s.several(compare).expect("two criteria");
        // Status descending; then amount ascending, no amount last; then arrival order
        // (3 before 5, 0 before 4).
        assert_eq!(page(&recs, &*cmp, 1, 10), (vec![3, 5, 1, 0, 4, 2], 6));
        let s = sorting("sorting=-status&sorting=-amount&sorting=-name");
        let cmp = s.several(compare).expect("three criteria");
        // Descending amount puts no amount first (PostgreSQL's NULL order).
        assert_eq!(page(&recs, &*cmp, 1, 10), (vec![1, 3, 5, 2, 0, 4], 6));
        let s = sorting("sorting=name&sorting=status");
        let cmp = s.several(compare).expect("two criteria");
        assert_eq!(page(&recs, &*cmp, 1, 10), (vec![2, 4, 1, 0, 3, 5], 6));
    }

    #[test]
    fn pages_match_a_full_stable_sort_at_every_boundary() {
        for query in [
            "sorting=-status&sorting=amount",
            "sorting=amount&sorting=-name&sorting=status",
            "sorting=-name&sorting=-amount",
        ] {
            let s = sorting(query);
            let cmp = s.several(compare).expect("several criteria");
            for n in [0, 1, 5, 17, 64] {
                let recs = records(n);
                let mut expected = recs.clone();
                expected.sort_by(|a, b| cmp(a, b)); // stable: ties keep arrival order
                let expected = ids(&expected);
                for limit in 1..=7u64 {
                    let mut walked = Vec::new();
                    for p in 1..=(n as u64 / limit + 2) {
                        let (got, total) = page(&recs, &*cmp, p, limit);
                        assert_eq!(total, n as u64, "{query} n={n}");
                        let start = ((p - 1) * limit) as usize;
                        let want: Vec<usize> = expected
                            .iter()
                            .skip(start)
                            .take(limit as usize)
                            .copied()
                            .collect();
                        assert_eq!(got, want, "{query} n={n} page={p} limit={limit}");
                        walked.extend(got);
                    }
                    assert_eq!(walked, expected, "pages neither overlap nor skip");
                }
            }
        }
    }

    #[test]
    fn a_far_page_keeps_only_its_end_and_still_counts_everything() {
        let recs = records(1000);
        let s = sorting("sorting=amount&sorting=-status");
        let cmp = s.several(compare).expect("two criteria");
        let mut expected = recs.clone();
        expected.sort_by(|a, b| cmp(a, b));
        let (got, total) = page(&recs, &*cmp, 37, 3);
        assert_eq!(total, 1000);
        assert_eq!(got, ids(&expected[108..111]));
        let (got, total) = page(&recs, &*cmp, 400, 3);
        assert_eq!((got, total), (vec![], 1000));
        let (got, _) = page(&recs, &*cmp, u64::MAX, 100);
        assert!(got.is_empty());
    }

    #[test]
    fn an_error_while_reading_ends_the_page() {
        let items = vec![Ok(1), Err(AppError::not_found()), Ok(2)];
        let r = select_page(
            items,
            &|a: &i32, b: &i32| a.cmp(b),
            ListParams { page: 1, limit: 10 },
        );
        assert!(r.is_err());
    }

    #[test]
    fn directions_and_nulls() {
        assert_eq!(directed(Ordering::Less, false), Ordering::Less);
        assert_eq!(directed(Ordering::Less, true), Ordering::Greater);
        assert_eq!(directed(Ordering::Equal, true), Ordering::Equal);
        assert_eq!(nulls_last(Some(1), None), Ordering::Less);
        assert_eq!(nulls_last(None, Some(1)), Ordering::Greater);
        assert_eq!(nulls_last::<i64>(None, None), Ordering::Equal);
        assert_eq!(nulls_last(Some(2), Some(1)), Ordering::Greater);
        let t = DateTime::from_timestamp(1_700_000_000, 1_000).expect("a time");
        let same_micro = DateTime::from_timestamp(1_700_000_000, 1_999).expect("a time");
        let later = DateTime::from_timestamp(1_700_000_000, 2_000).expect("a time");
        assert_eq!(compare_times(&t, &same_micro), Ordering::Equal);
        assert_eq!(compare_times(&t, &later), Ordering::Less);
    }
}
