//! Query strings as Polar's clients send them: repeated keys for lists
//! (`organization_id=a&organization_id=b`, `sorting=-created_at&sorting=name`), `true`/`false`
//! booleans, and `page`/`limit` on every list call. Errors name `["query", key, (index)]`.

use serde_json::Value;

use crate::error::{ApiError, FieldError};

pub use crate::app::paging::{Compare, ListParams, SortField, Sorting};

/// The raw query string of a request (the dashboard passes one it built itself).
#[derive(Debug, Clone, Default)]
pub struct RawQuery(pub String);

impl actix_web::FromRequest for RawQuery {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &actix_web::HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        std::future::ready(Ok(RawQuery(req.query_string().to_string())))
    }
}

pub struct QueryParams {
    pairs: Vec<(String, String)>,
    errors: Vec<FieldError>,
}

impl QueryParams {
    pub fn parse(query: &str) -> Self {
        Self {
            pairs: form_urlencoded::parse(query.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
            errors: Vec::new(),
        }
    }

    fn values(&self, key: &str) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .collect()
    }

    fn error(&mut self, kind: &str, loc: Vec<Value>, msg: String, input: &str) {
        self.errors.push(FieldError::new(
            kind,
            loc,
            msg,
            Value::String(input.to_string()),
        ));
    }

    /// Every value of a repeatable string parameter.
    pub fn strings(&mut self, key: &str) -> Vec<String> {
        self.values(key)
    }

    /// The last value of a single-valued parameter.
    pub fn string(&mut self, key: &str) -> Option<String> {
        self.values(key).pop()
    }

    pub fn int(&mut self, key: &str) -> Option<i64> {
        let raw = self.string(key)?;
        match raw.trim().parse::<i64>() {
            Ok(v) => Some(v),
            Err(_) => {
                self.error(
                    "int_parsing",
                    crate::loc!["query", key],
                    "Input should be a valid integer, unable to parse string as an integer".into(),
                    &raw,
                );
                None
            }
        }
    }

    pub fn bool(&mut self, key: &str) -> Option<bool> {
        let raw = self.string(key)?;
        match raw.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" | "t" | "y" => Some(true),
            "false" | "0" | "no" | "off" | "f" | "n" => Some(false),
            _ => {
                self.error(
                    "bool_parsing",
                    crate::loc!["query", key],
                    "Input should be a valid boolean, unable to interpret input".into(),
                    &raw,
                );
                None
            }
        }
    }

    /// Every value of a repeatable UUID parameter.
    pub fn ids<T: std::str::FromStr<Err = uuid::Error>>(&mut self, key: &str) -> Vec<T> {
        let mut out = Vec::new();
        let values = self.values(key);
        let many = values.len() > 1;
        for (i, raw) in values.iter().enumerate() {
            match T::from_str(raw) {
                Ok(v) => out.push(v),
                Err(e) => {
                    let loc = if many {
                        crate::loc!["query", key, i]
                    } else {
                        crate::loc!["query", key]
                    };
                    self.error(
                        "uuid_parsing",
                        loc,
                        format!("Input should be a valid UUID, {e}"),
                        raw,
                    );
                }
            }
        }
        out
    }

    /// A required single UUID parameter (the last one given wins); a `missing` error
    /// when absent.
    pub fn required_id<T: std::str::FromStr<Err = uuid::Error>>(&mut self, key: &str) -> Option<T> {
        if self.values(key).is_empty() {
            self.errors.push(FieldError::new(
                "missing",
                crate::loc!["query", key],
                "Field required",
                serde_json::Value::Null,
            ));
            return None;
        }
        self.ids(key).pop()
    }

    /// Every value of a repeatable enum parameter.
    pub fn enums<T: Copy>(&mut self, key: &str, allowed: &[(&str, T)]) -> Vec<T> {
        let mut out = Vec::new();
        for (i, raw) in self.values(key).iter().enumerate() {
            match allowed.iter().find(|(name, _)| name == raw) {
                Some((_, v)) => out.push(*v),
                None => {
                    let names: Vec<String> =
                        allowed.iter().map(|(n, _)| format!("'{n}'")).collect();
                    self.error(
                        "enum",
                        crate::loc!["query", key, i],
                        format!("Input should be {}", join_or(&names)),
                        raw,
                    );
                }
            }
        }
        out
    }

    /// Ends parsing: every error found so far, in one 422.
    pub fn finish(self) -> Result<(), ApiError> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::Validation(self.errors))
        }
    }

    pub fn push_error(&mut self, e: FieldError) {
        self.errors.push(e);
    }
}

fn join_or(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

impl ListParams {
    pub fn from_query(q: &mut QueryParams) -> ListParams {
        let positive = |q: &mut QueryParams, key: &str, default: i64| -> u64 {
            match q.int(key) {
                Some(v) if v > 0 => v as u64,
                Some(v) => {
                    q.push_error(
                        FieldError::new(
                            "greater_than",
                            crate::loc!["query", key],
                            "Input should be greater than 0",
                            Value::String(v.to_string()),
                        )
                        .with_ctx(serde_json::json!({"gt": 0})),
                    );
                    default as u64
                }
                None => default as u64,
            }
        };
        let page = positive(q, "page", 1);
        let limit = positive(q, "limit", 10).min(100);
        ListParams { page, limit }
    }
}

impl<F: SortField> Sorting<F> {
    /// Parses `sorting`; `default` applies when none is given. `bool` is "descending".
    pub fn from_query(q: &mut QueryParams, default: (F, bool)) -> Sorting<F> {
        let values = q.values("sorting");
        let mut criteria: Vec<(F, bool)> = Vec::new();
        for (i, raw) in values.iter().enumerate() {
            let (desc, name) = match raw.strip_prefix('-') {
                Some(n) => (true, n),
                None => (false, raw.as_str()),
            };
            match F::FIELDS.iter().find(|(n, _)| *n == name) {
                Some((_, f)) => {
                    let decided = criteria.iter().any(|(c, _)| c == f || c.is_unique());
                    if !decided {
                        criteria.push((*f, desc));
                    }
                }
                None => {
                    let mut names = Vec::new();
                    for (n, _) in F::FIELDS {
                        names.push(format!("'{n}'"));
                        names.push(format!("'-{n}'"));
                    }
                    q.push_error(FieldError::new(
                        "enum",
                        crate::loc!["query", "sorting", i],
                        format!("Input should be {}", join_or(&names)),
                        Value::String(raw.clone()),
                    ));
                }
            }
        }
        if criteria.is_empty() {
            criteria.push(default);
        }
        Sorting { criteria, default }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum F {
        Created,
        Name,
    }

    impl SortField for F {
        const FIELDS: &'static [(&'static str, F)] =
            &[("created_at", F::Created), ("name", F::Name)];
    }

    /// Like `F`, but no two records share a name.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum U {
        Created,
        Name,
    }

    impl SortField for U {
        const FIELDS: &'static [(&'static str, U)] =
            &[("created_at", U::Created), ("name", U::Name)];

        fn is_unique(self) -> bool {
            self == U::Name
        }
    }

    /// (created, name) records, compared field by field.
    fn by(field: F, desc: bool, a: &(u8, &str), b: &(u8, &str)) -> Ordering {
        let o = match field {
            F::Created => a.0.cmp(&b.0),
            F::Name => a.1.cmp(b.1),
        };
        if desc {
            o.reverse()
        } else {
            o
        }
    }

    #[test]
    fn criteria_that_cannot_break_a_tie_are_left_out() {
        let mut q = QueryParams::parse("sorting=name&sorting=-created_at&sorting=-name");
        let s = Sorting::<F>::from_query(&mut q, (F::Created, false));
        assert_eq!(s.criteria, vec![(F::Name, false), (F::Created, true)]);
        let mut q = QueryParams::parse("sorting=-name&sorting=name");
        let s = Sorting::<F>::from_query(&mut q, (F::Created, false));
        assert_eq!(s.criteria, vec![(F::Name, true)]);
        assert!(
            s.several(by).is_none(),
            "one criterion: the index serves it"
        );
        // After a unique field nothing can tie; before it, it still decides first.
        let mut q = QueryParams::parse("sorting=-name&sorting=created_at");
        let s = Sorting::<U>::from_query(&mut q, (U::Created, false));
        assert_eq!(s.criteria, vec![(U::Name, true)]);
        let mut q = QueryParams::parse("sorting=created_at&sorting=name");
        let s = Sorting::<U>::from_query(&mut q, (U::Created, false));
        assert_eq!(s.criteria, vec![(U::Created, false), (U::Name, false)]);
        // A rejected value is reported and does not count as a criterion.
        let mut q = QueryParams::parse("sorting=bogus&sorting=name");
        let s = Sorting::<F>::from_query(&mut q, (F::Created, false));
        assert_eq!(s.criteria, vec![(F::Name, false)]);
        assert!(q.finish().is_err());
    }

    #[test]
    fn later_criteria_break_the_ties_of_earlier_ones() {
        let mut q = QueryParams::parse("sorting=-created_at&sorting=name");
        let s = Sorting::<F>::from_query(&mut q, (F::Created, false));
        let several = s.several(by).expect("two criteria");
        let (old_b, new_a, new_b) = ((1, "b"), (2, "a"), (2, "b"));
        assert_eq!(
            several(&new_a, &old_b),
            Ordering::Less,
            "created descending"
        );
        assert_eq!(
            several(&new_a, &new_b),
            Ordering::Less,
            "then name ascending"
        );
        assert_eq!(several(&new_b, &new_a), Ordering::Greater);
        assert_eq!(several(&new_b, &new_b), Ordering::Equal);
        assert_eq!(s.compare(&old_b, &new_b, by), Ordering::Greater);
    }

    #[test]
    fn pagination_defaults_clamps_and_rejects() {
        let mut q = QueryParams::parse("");
        assert_eq!(
            ListParams::from_query(&mut q),
            ListParams { page: 1, limit: 10 }
        );
        let mut q = QueryParams::parse("page=3&limit=1000");
        let p = ListParams::from_query(&mut q);
        assert_eq!(
            p,
            ListParams {
                page: 3,
                limit: 100
            }
        );
        assert_eq!(p.offset(), 200);
        assert!(q.finish().is_ok());
        let mut q = QueryParams::parse("page=0&limit=-1");
        ListParams::from_query(&mut q);
        match q.finish() {
            Err(ApiError::Validation(items)) => {
                assert_eq!(items.len(), 2);
                assert_eq!(items[0].loc, crate::loc!["query", "page"]);
                assert_eq!(items[0].kind, "greater_than");
            }
            other => panic!("{other:?}"),
        }
        let mut q = QueryParams::parse("page=x");
        ListParams::from_query(&mut q);
        assert!(q.finish().is_err());
    }

    #[test]
    fn sorting_parses_repeated_criteria() {
        let mut q = QueryParams::parse("sorting=-name&sorting=created_at");
        let s = Sorting::<F>::from_query(&mut q, (F::Created, false));
        assert_eq!(s.criteria, vec![(F::Name, true), (F::Created, false)]);
        let mut q = QueryParams::parse("");
        assert_eq!(
            Sorting::<F>::from_query(&mut q, (F::Created, true)).primary(),
            (F::Created, true)
        );
    }

    #[test]
    fn sorting_rejects_unknown_values() {
        let mut q = QueryParams::parse("sorting=bogus");
        Sorting::<F>::from_query(&mut q, (F::Created, false));
        match q.finish() {
            Err(ApiError::Validation(items)) => {
                assert_eq!(items[0].kind, "enum");
                assert_eq!(items[0].loc, crate::loc!["query", "sorting", 0]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ids_and_bools() {
        let id = uuid::Uuid::new_v4();
        let mut q = QueryParams::parse(&format!(
            "organization_id={id}&organization_id=bad&active=true"
        ));
        let ids: Vec<uuid::Uuid> = q.ids("organization_id");
        assert_eq!(ids, vec![id]);
        assert_eq!(q.bool("active"), Some(true));
        match q.finish() {
            Err(ApiError::Validation(items)) => {
                assert_eq!(items[0].loc, crate::loc!["query", "organization_id", 1])
            }
            other => panic!("{other:?}"),
        }
    }
}
