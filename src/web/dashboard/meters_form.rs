//! The meter form (name, filter clauses, aggregation, unit) read into the meters' commands
//! with the API's rules (`src/api/meter.rs`), and a meter's filter and aggregation in words.
//!
//! The filter is one conjunction of clause rows (`property`, `operator`, `value`, repeated
//! fields): a row with neither property nor value is left out, so a blank row can always be
//! offered; rows are added and removed by the form's own buttons (`action=add` /
//! `action=remove-<i>`), which show the form again without saving (no script needed).
//! A value reads as the API's JSON would: `true`/`false` a boolean, a 32-bit integer a
//! number, anything else (or anything in double quotes) a string; `name` and `source`
//! take a string, `timestamp` an integer.

use serde::Deserialize;

use crate::domain::meter::{
    Aggregation, Clause, ClauseValue, Conjunction, Filter, FilterNode, Meter, MeterChange,
    MeterUnit, NewMeter, Operator,
};

/// The posted meter form, as typed (kept when the form is shown again).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct MeterForm {
    pub name: String,
    /// `and` (every clause) or `or` (any clause).
    pub conjunction: String,
    pub property: Vec<String>,
    pub operator: Vec<String>,
    pub value: Vec<String>,
    /// The aggregation's function: count, sum, max, min, avg, unique.
    pub func: String,
    /// The property it reads (all but count).
    pub agg_property: String,
    pub unit: String,
    pub custom_label: String,
    pub custom_multiplier: String,
    /// `save` (or none: the Enter key), `add`, `remove-<row>`.
    pub action: String,
}

/// One clause row as the form shows it.
pub struct Row {
    pub property: String,
    pub operator: String,
    pub value: String,
}

/// The operators offered: (value, label).
pub const OPERATORS: &[(&str, &str)] = &[
    ("eq", "equals"),
    ("ne", "does not equal"),
    ("gt", "greater than"),
    ("gte", "at least"),
    ("lt", "less than"),
    ("lte", "at most"),
    ("like", "contains"),
    ("not_like", "does not contain"),
];

/// The aggregation functions offered: (value, label).
pub const FUNCS: &[(&str, &str)] = &[
    ("count", "Count of events"),
    ("sum", "Sum of a property"),
    ("max", "Maximum of a property"),
    ("min", "Minimum of a property"),
    ("avg", "Average of a property"),
    ("unique", "Distinct values of a property"),
];

/// A stored property as a person writes it: the event's own fields by name, any other
/// with its `metadata.` prefix.
pub fn shown_property(p: &str) -> String {
    match p {
        "name" | "source" | "timestamp" => p.to_string(),
        _ => format!("metadata.{p}"),
    }
}

/// A clause value as the form shows it (a string that would read as another type is
/// quoted).
fn shown_value(v: &ClauseValue) -> String {
    match v {
        ClauseValue::Str(s) if reads_as_other(s) => format!("\"{s}\""),
        ClauseValue::Str(s) => s.clone(),
        ClauseValue::Int(i) => i.to_string(),
        ClauseValue::Bool(b) => b.to_string(),
    }
}

fn reads_as_other(s: &str) -> bool {
    s == "true" || s == "false" || s.parse::<i32>().is_ok() || s.starts_with('"')
}

/// Whether the filter is one level of clauses (the form edits only those; a nested group,
/// made through the API, is shown in words and kept).
pub fn flat(f: &Filter) -> bool {
    f.clauses.iter().all(|n| matches!(n, FilterNode::Clause(_)))
}

impl MeterForm {
    /// The form of a stored meter.
    pub fn of(m: &Meter) -> MeterForm {
        let mut form = MeterForm {
            name: m.name.clone(),
            conjunction: match m.filter.conjunction {
                Conjunction::And => "and".into(),
                Conjunction::Or => "or".into(),
            },
            func: m.aggregation.func().to_string(),
            agg_property: m
                .aggregation
                .property()
                .map(shown_property)
                .unwrap_or_default(),
            unit: m.unit.as_str().to_string(),
            custom_label: m.custom_label.clone().unwrap_or_default(),
            custom_multiplier: m
                .custom_multiplier
                .map(|i| i.to_string())
                .unwrap_or_default(),
            ..MeterForm::default()
        };
        for node in &m.filter.clauses {
            if let FilterNode::Clause(c) = node {
                form.property.push(shown_property(&c.property));
                form.operator.push(c.operator.as_str().to_string());
                form.value.push(shown_value(&c.value));
            }
        }
        form
    }

    /// A new meter's form: count of every event, scalar.
    pub fn blank() -> MeterForm {
        MeterForm {
            conjunction: "and".into(),
            func: "count".into(),
            unit: "scalar".into(),
            ..MeterForm::default()
        }
    }

    /// The clause rows to show: those typed (a removed one left out), then one blank row
    /// (two after `add`).
    pub fn rows(&self) -> Vec<Row> {
        let n = self
            .property
            .len()
            .max(self.operator.len())
            .max(self.value.len());
        let removed = self
            .action
            .strip_prefix("remove-")
            .and_then(|i| i.parse::<usize>().ok());
        let at = |v: &Vec<String>, i: usize| v.get(i).cloned().unwrap_or_default();
        let mut rows: Vec<Row> = (0..n)
            .filter(|i| Some(*i) != removed)
            .map(|i| Row {
                property: at(&self.property, i),
                operator: at(&self.operator, i),
                value: at(&self.value, i),
            })
            .filter(|r| !(r.property.trim().is_empty() && r.value.trim().is_empty()))
            .collect();
        let blanks = if self.action == "add" { 2 } else { 1 };
        for _ in 0..blanks {
            rows.push(Row {
                property: String::new(),
                operator: "eq".into(),
                value: String::new(),
            });
        }
        rows
    }

    /// Whether the post only changes the rows shown (add or remove), not a save.
    pub fn edits_rows(&self) -> bool {
        self.action == "add" || self.action.starts_with("remove-")
    }

    /// The filter of the rows; the problems of the rows that do not read in `errors`.
    pub fn filter(&self, errors: &mut Vec<String>) -> Option<Filter> {
        let before = errors.len();
        let conjunction = match self.conjunction.as_str() {
            "" | "and" => Conjunction::And,
            "or" => Conjunction::Or,
            other => {
                errors.push(format!("Filter: “{other}” is neither and nor or."));
                Conjunction::And
            }
        };
        let mut clauses = Vec::new();
        let mut shown = 0;
        for row in self.rows() {
            if row.property.trim().is_empty() && row.value.trim().is_empty() {
                continue;
            }
            shown += 1;
            let what = format!("Filter, clause {shown}");
            let property = row.property.trim();
            let property = property.strip_prefix("metadata.").unwrap_or(property);
            if property.is_empty() {
                errors.push(format!(
                    "{what}: the property is required (name, or metadata.<key>)."
                ));
                continue;
            }
            let Some(operator) = Operator::parse(&row.operator) else {
                errors.push(format!("{what}: choose an operator."));
                continue;
            };
            match clause_value(property, &row.value) {
                Ok(value) => clauses.push(FilterNode::Clause(Clause {
                    property: property.to_string(),
                    operator,
                    value,
                })),
                Err(why) => errors.push(format!("{what}: {why}")),
            }
        }
        (errors.len() == before).then_some(Filter {
            conjunction,
            clauses,
        })
    }

    /// The aggregation; its problem in `errors`.
    pub fn aggregation(&self, errors: &mut Vec<String>) -> Option<Aggregation> {
        let p = self.agg_property.trim();
        let p = p.strip_prefix("metadata.").unwrap_or(p).to_string();
        if self.func != "count" && p.is_empty() {
            errors.push("Aggregation: the property is required (metadata.<key>).".into());
            return None;
        }
        Some(match self.func.as_str() {
            "count" => Aggregation::Count,
            "sum" => Aggregation::Sum(p),
            "max" => Aggregation::Max(p),
            "min" => Aggregation::Min(p),
            "avg" => Aggregation::Avg(p),
            "unique" => Aggregation::Unique(p),
            _ => {
                errors.push("Aggregation: choose a function.".into());
                return None;
            }
        })
    }

    /// Name (at least 3 characters, as the API), unit, label and multiplier.
    fn common(
        &self,
        errors: &mut Vec<String>,
    ) -> Option<(String, MeterUnit, Option<String>, Option<i32>)> {
        let before = errors.len();
        let name = self.name.trim().to_string();
        if name.chars().count() < 3 {
            errors.push("Name: at least 3 characters.".into());
        }
        let unit = MeterUnit::parse(&self.unit);
        if unit.is_none() {
            errors.push("Unit: choose scalar, token or custom.".into());
        }
        let label = Some(self.custom_label.trim().to_string()).filter(|s| !s.is_empty());
        let multiplier = match self.custom_multiplier.trim() {
            "" => None,
            m => match m.parse::<i32>() {
                Ok(i) if i > 0 => Some(i),
                _ => {
                    errors.push("Multiplier: a whole number greater than 0.".into());
                    None
                }
            },
        };
        (errors.len() == before).then_some((name, unit?, label, multiplier))
    }

    /// The new meter of the form, or the problems to show.
    pub fn new_meter(&self, org: uuid::Uuid) -> Result<NewMeter, Vec<String>> {
        let mut errors = Vec::new();
        let common = self.common(&mut errors);
        let filter = self.filter(&mut errors);
        let aggregation = self.aggregation(&mut errors);
        match (common, filter, aggregation) {
            (
                Some((name, unit, custom_label, custom_multiplier)),
                Some(filter),
                Some(aggregation),
            ) if errors.is_empty() => Ok(NewMeter {
                name,
                unit,
                custom_label,
                custom_multiplier,
                filter,
                aggregation,
                metadata: Default::default(),
                organization_id: Some(org),
            }),
            _ => Err(errors),
        }
    }

    /// The change of the form; filter and aggregation only when `definition` (the meter
    /// does not aggregate yet and its filter is flat).
    pub fn change(&self, definition: bool) -> Result<MeterChange, Vec<String>> {
        let mut errors = Vec::new();
        let common = self.common(&mut errors);
        let (filter, aggregation) = if definition {
            (self.filter(&mut errors), self.aggregation(&mut errors))
        } else {
            (None, None)
        };
        let Some((name, unit, label, multiplier)) = common else {
            return Err(errors);
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(MeterChange {
            name: Some(name),
            unit: Some(unit),
            custom_label: Some(label),
            custom_multiplier: Some(multiplier),
            filter,
            aggregation,
            is_archived: None,
            metadata: None,
        })
    }
}

/// A clause value read for `property`: see the module's rules.
fn clause_value(property: &str, raw: &str) -> Result<ClauseValue, String> {
    let raw = raw.trim();
    let quoted = raw.len() >= 2 && raw.starts_with('"') && raw.ends_with('"');
    let value = if quoted {
        ClauseValue::Str(raw[1..raw.len() - 1].to_string())
    } else if raw == "true" || raw == "false" {
        ClauseValue::Bool(raw == "true")
    } else if let Ok(i) = raw.parse::<i32>() {
        ClauseValue::Int(i)
    } else {
        ClauseValue::Str(raw.to_string())
    };
    match (property, value) {
        ("name" | "source", ClauseValue::Str(s)) if s.chars().count() <= 1000 => {
            Ok(ClauseValue::Str(s))
        }
        // An event's name may look like a number: it is still a name.
        ("name" | "source", ClauseValue::Int(_) | ClauseValue::Bool(_)) => {
            Ok(ClauseValue::Str(raw.to_string()))
        }
        ("timestamp", ClauseValue::Int(i)) => Ok(ClauseValue::Int(i)),
        ("timestamp", _) => Err("a timestamp is compared with epoch seconds (an integer).".into()),
        (_, ClauseValue::Str(s)) if s.chars().count() > 1000 => {
            Err("the value has more than 1000 characters.".into())
        }
        (_, v) => Ok(v),
    }
}

fn value_words(v: &ClauseValue) -> String {
    match v {
        ClauseValue::Str(s) => format!("“{s}”"),
        ClauseValue::Int(i) => i.to_string(),
        ClauseValue::Bool(b) => b.to_string(),
    }
}

fn operator_words(o: Operator) -> &'static str {
    match o {
        Operator::Eq => "=",
        Operator::Ne => "≠",
        Operator::Gt => ">",
        Operator::Gte => "≥",
        Operator::Lt => "<",
        Operator::Lte => "≤",
        Operator::Like => "contains",
        Operator::NotLike => "does not contain",
    }
}

/// A filter in words: `name = “api_call” and metadata.model contains “gpt”`; every event
/// when it has no clause.
pub fn filter_words(f: &Filter) -> String {
    if f.clauses.is_empty() {
        return "every event".into();
    }
    let join = match f.conjunction {
        Conjunction::And => " and ",
        Conjunction::Or => " or ",
    };
    f.clauses
        .iter()
        .map(|n| match n {
            FilterNode::Clause(c) => format!(
                "{} {} {}",
                shown_property(&c.property),
                operator_words(c.operator),
                value_words(&c.value)
            ),
            FilterNode::Filter(inner) => format!("({})", filter_words(inner)),
        })
        .collect::<Vec<_>>()
        .join(join)
}

/// An aggregation in words: `count`, `sum of metadata.tokens`.
pub fn aggregation_words(a: &Aggregation) -> String {
    match a.property() {
        Some(p) => format!("{} of {}", a.func(), shown_property(p)),
        None => "count".into(),
    }
}

/// A quantity as the pages print it: whole numbers without decimals, others with up to
/// four.
pub fn quantity(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let s = format!("{v:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// An event's metadata in words: `key=value` pairs, then its cost and LLM tokens.
pub fn event_metadata_words(m: &crate::domain::usage_event::EventMetadata) -> String {
    use crate::domain::usage_event::EventValue;
    let mut parts: Vec<String> = m
        .values
        .iter()
        .map(|(k, v)| match v {
            EventValue::Str(s) => format!("{k}={s}"),
            EventValue::Int(i) => format!("{k}={i}"),
            EventValue::Float(f) => format!("{k}={f}"),
            EventValue::Bool(b) => format!("{k}={b}"),
        })
        .collect();
    if let Some(c) = &m.cost {
        parts.push(format!("_cost={} {}", c.amount, c.currency));
    }
    if let Some(l) = &m.llm {
        parts.push(format!(
            "_llm={} {} ({} tokens)",
            l.vendor, l.model, l.total_tokens
        ));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(rows: &[(&str, &str, &str)]) -> MeterForm {
        MeterForm {
            name: "API calls".into(),
            conjunction: "and".into(),
            property: rows.iter().map(|r| r.0.to_string()).collect(),
            operator: rows.iter().map(|r| r.1.to_string()).collect(),
            value: rows.iter().map(|r| r.2.to_string()).collect(),
            func: "sum".into(),
            agg_property: "metadata.tokens".into(),
            unit: "scalar".into(),
            ..MeterForm::default()
        }
    }

    #[test]
    fn rows_read_as_the_apis_json_values() {
        let f = form(&[
            ("name", "eq", "123"),
            ("metadata.n", "gte", "5"),
            ("metadata.flag", "eq", "true"),
            ("metadata.code", "eq", "\"42\""),
            ("", "eq", ""),
            ("model", "like", "gpt"),
        ]);
        let m = f.new_meter(uuid::Uuid::nil()).unwrap();
        let values: Vec<(String, ClauseValue)> = m
            .filter
            .clauses
            .iter()
            .map(|n| match n {
                FilterNode::Clause(c) => (c.property.clone(), c.value.clone()),
                FilterNode::Filter(_) => unreachable!(),
            })
            .collect();
        assert_eq!(
            values,
            vec![
                ("name".into(), ClauseValue::Str("123".into())),
                ("n".into(), ClauseValue::Int(5)),
                ("flag".into(), ClauseValue::Bool(true)),
                ("code".into(), ClauseValue::Str("42".into())),
                ("model".into(), ClauseValue::Str("gpt".into())),
            ]
        );
        assert_eq!(m.aggregation, Aggregation::Sum("tokens".into()));
        // Shown again, the stored meter gives back what was typed (the quoted string too).
        let stored = Meter {
            id: crate::domain::ids::MeterId::new(),
            organization_id: crate::domain::ids::OrganizationId(uuid::Uuid::nil()),
            name: m.name,
            unit: m.unit,
            custom_label: None,
            custom_multiplier: None,
            filter: m.filter,
            aggregation: m.aggregation,
            metadata: Default::default(),
            created_at: chrono::Utc::now(),
            modified_at: None,
            archived_at: None,
            aggregating: false,
        };
        let again = MeterForm::of(&stored);
        assert_eq!(again.value, vec!["\"123\"", "5", "true", "\"42\"", "gpt"]);
        assert_eq!(again.property[1], "metadata.n");
        assert_eq!(
            filter_words(&stored.filter),
            "name = “123” and metadata.n ≥ 5 and metadata.flag = true and metadata.code = “42” and metadata.model contains “gpt”"
        );
        assert_eq!(
            aggregation_words(&stored.aggregation),
            "sum of metadata.tokens"
        );
    }

    #[test]
    fn bad_rows_are_named_and_rows_are_added_and_removed() {
        let f = form(&[
            ("", "eq", "x"),
            ("timestamp", "gt", "soon"),
            ("a", "??", "1"),
        ]);
        let errors = f.new_meter(uuid::Uuid::nil()).unwrap_err();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].starts_with("Filter, clause 1: the property is required"));
        assert!(errors[1].starts_with("Filter, clause 2: a timestamp"));
        assert!(errors[2].starts_with("Filter, clause 3: choose an operator"));
        let mut f = form(&[("a", "eq", "1"), ("b", "eq", "2")]);
        assert_eq!(f.rows().len(), 3);
        f.action = "add".into();
        assert_eq!(f.rows().len(), 4);
        f.action = "remove-0".into();
        let rows = f.rows();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].property, "b");
        let short = MeterForm {
            name: "ab".into(),
            func: "avg".into(),
            agg_property: String::new(),
            ..MeterForm::blank()
        };
        let errors = short.new_meter(uuid::Uuid::nil()).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
    }

    #[test]
    fn quantities_print_whole_or_with_four_decimals() {
        assert_eq!(quantity(3.0), "3");
        assert_eq!(quantity(2.5), "2.5");
        assert_eq!(quantity(1.0 / 3.0), "0.3333");
        assert_eq!(
            filter_words(&Filter {
                conjunction: Conjunction::Or,
                clauses: vec![]
            }),
            "every event"
        );
    }
}
