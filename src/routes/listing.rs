//! Paged lists served from secondary indexes.

use tollgate_storage::{Direction, PageQuery, Record};

use crate::api::{ListResource, Pagination};
use crate::error::ApiError;
use crate::extract::ListParams;
use crate::state::AppState;

/// One page of records from an index over several tenants.
///
/// Without a filter the page is a range read and `total_count` comes from the index's
/// counters, so the cost grows with `page × limit`, never with the store. With a filter
/// (a predicate no index serves), the tenants' entries are scanned in order and counted,
/// so the cost grows with the size of those tenants only.
pub fn page_of<R: Record>(
    state: &AppState,
    index: &'static str,
    tenants: &[Vec<u8>],
    descending: bool,
    params: ListParams,
    filter: Option<&dyn Fn(&R) -> bool>,
) -> Result<(Vec<R>, u64), ApiError> {
    let direction = if descending {
        Direction::Desc
    } else {
        Direction::Asc
    };
    let Some(filter) = filter else {
        let page = state.store.page(&PageQuery {
            index,
            tenants,
            direction,
            offset: params.offset(),
            limit: params.limit,
        })?;
        let items = state
            .store
            .get_many::<R>(&page.ids)?
            .into_iter()
            .map(|s| s.value)
            .collect();
        return Ok((items, page.total));
    };
    let mut items = Vec::new();
    let mut total = 0u64;
    let start = params.offset();
    let end = start.saturating_add(params.limit);
    for id in state.store.index_iter(index, tenants, direction)? {
        let id = id?;
        let Some(record) = state.store.get::<R>(&id)? else {
            continue;
        };
        if !filter(&record.value) {
            continue;
        }
        if total >= start && total < end {
            items.push(record.value);
        }
        total += 1;
    }
    Ok((items, total))
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
