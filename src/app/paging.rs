//! What a list asks for: a page (`ListParams`) and an order (`Sorting` over a list's
//! `SortField`s). Plain values: the JSON API reads them from a query string
//! (`crate::extract::query`), the pages build them in code.

use std::cmp::Ordering;

/// `page` (default 1) and `limit` (default 10, clamped to 100); both must be > 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListParams {
    pub page: u64,
    pub limit: u64,
}

impl ListParams {
    pub fn offset(&self) -> u64 {
        (self.page - 1).saturating_mul(self.limit)
    }
}

/// A sortable field of one list.
pub trait SortField: Copy + PartialEq + 'static {
    /// (name, field) pairs; `-name` sorts descending.
    const FIELDS: &'static [(&'static str, Self)];

    /// Whether no two records of a list share this field's value, so that the criteria
    /// after it can never break a tie (an organization's slug, for example).
    fn is_unique(self) -> bool {
        false
    }
}

/// An order of records: how `a` compares with `b`.
pub type Compare<'a, R> = dyn Fn(&R, &R) -> Ordering + 'a;

/// The `sorting` parameter: criteria in order, each ascending or descending.
#[derive(Debug, Clone, PartialEq)]
pub struct Sorting<F> {
    /// Never empty: the default applies when the query names no criterion. A criterion
    /// that could never break a tie (a repeated field, or one after a unique field) is
    /// left out, so that one criterion left means the index on it serves the whole order.
    pub criteria: Vec<(F, bool)>,
    pub(crate) default: (F, bool),
}

impl<F: SortField> Sorting<F> {
    /// One criterion, chosen in code (a page's own order): `descending` or not.
    pub fn by(field: F, descending: bool) -> Sorting<F> {
        Sorting {
            criteria: vec![(field, descending)],
            default: (field, descending),
        }
    }

    /// One criterion by its API name (`created_at`, `-amount` for descending), as a page
    /// offers it; `None` for a name the field does not have.
    pub fn named(name: &str) -> Option<Sorting<F>> {
        let (desc, name) = match name.strip_prefix('-') {
            Some(n) => (true, n),
            None => (false, name),
        };
        F::FIELDS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| Sorting::by(*f, desc))
    }
    /// The first criterion, which the index serves.
    pub fn primary(&self) -> (F, bool) {
        self.criteria.first().copied().unwrap_or(self.default)
    }

    /// Compares two records by every criterion in turn: a later criterion decides only
    /// where the earlier ones tie. `by(field, descending, a, b)` compares one field in the
    /// given direction (see `crate::app::listing::directed`).
    pub fn compare<R>(&self, a: &R, b: &R, by: impl Fn(F, bool, &R, &R) -> Ordering) -> Ordering {
        self.criteria
            .iter()
            .map(|&(field, desc)| by(field, desc, a, b))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }

    /// All the criteria as one comparison, for a page sorted in memory, when there are
    /// several; `None` when the first criterion is the whole order, which its index serves.
    pub fn several<'a, R>(
        &'a self,
        by: impl Fn(F, bool, &R, &R) -> Ordering + 'a,
    ) -> Option<Box<Compare<'a, R>>> {
        (self.criteria.len() > 1)
            .then(|| Box::new(move |a: &R, b: &R| self.compare(a, b, &by)) as Box<Compare<'a, R>>)
    }
}
