//! Meters in Polar's shapes (`polar-2026.md` §7.3): `MeterCreate` / `MeterUpdate` bodies
//! read from the raw JSON (every problem reported at once, pydantic's types and locs), the
//! `Meter` view, and the quantities' query and answer.

use chrono::{DateTime, FixedOffset, Utc};
use serde::Serialize;
use serde_json::{json, Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use super::metadata::{metadata_map, parse_metadata, MetadataMap};
use crate::domain::meter::{
    Aggregation, Clause, ClauseValue, Conjunction, Filter, FilterNode, Func, Interval, Meter,
    MeterChange, MeterUnit, NewMeter, Operator, QuantitiesQuery,
};
use crate::error::{ApiError, FieldError};
use crate::loc;

/// `Meter`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Meter)]
pub struct MeterView {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    #[schema(value_type = crate::api::free_form::Metadata)]
    pub metadata: MetadataMap,
    pub name: String,
    /// `scalar`, `token` or `custom`.
    pub unit: String,
    pub custom_label: Option<String>,
    pub custom_multiplier: Option<i32>,
    /// `{conjunction, clauses: [{property, operator, value} | filter]}`.
    #[schema(value_type = Object)]
    pub filter: Value,
    /// `{func}` or `{func, property}`.
    #[schema(value_type = Object)]
    pub aggregation: Value,
    pub organization_id: Uuid,
    pub archived_at: Option<DateTime<Utc>>,
}

/// The filter as JSON.
pub fn filter_json(f: &Filter) -> Value {
    let clauses: Vec<Value> = f
        .clauses
        .iter()
        .map(|n| match n {
            FilterNode::Clause(c) => json!({
                "property": c.property,
                "operator": c.operator.as_str(),
                "value": match &c.value {
                    ClauseValue::Str(s) => Value::from(s.as_str()),
                    ClauseValue::Int(i) => Value::from(*i),
                    ClauseValue::Bool(b) => Value::from(*b),
                },
            }),
            FilterNode::Filter(f) => filter_json(f),
        })
        .collect();
    json!({
        "conjunction": match f.conjunction { Conjunction::And => "and", Conjunction::Or => "or" },
        "clauses": clauses,
    })
}

/// The aggregation as JSON.
pub fn aggregation_json(a: &Aggregation) -> Value {
    match a.property() {
        None => json!({"func": a.func()}),
        Some(p) => json!({"func": a.func(), "property": p}),
    }
}

impl From<&Meter> for MeterView {
    fn from(m: &Meter) -> Self {
        MeterView {
            id: m.id.uuid(),
            created_at: m.created_at,
            modified_at: m.modified_at,
            metadata: metadata_map(&m.metadata),
            name: m.name.clone(),
            unit: m.unit.as_str().to_string(),
            custom_label: m.custom_label.clone(),
            custom_multiplier: m.custom_multiplier,
            filter: filter_json(&m.filter),
            aggregation: aggregation_json(&m.aggregation),
            organization_id: m.organization_id.uuid(),
            archived_at: m.archived_at,
        }
    }
}

/// The meter as the portal shows it (`CustomerCustomerMeterMeter`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = CustomerCustomerMeterMeter)]
pub struct PortalMeterView {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub name: String,
}

impl From<&Meter> for PortalMeterView {
    fn from(m: &Meter) -> Self {
        PortalMeterView {
            id: m.id.uuid(),
            created_at: m.created_at,
            modified_at: m.modified_at,
            name: m.name.clone(),
        }
    }
}

/// `MeterQuantity`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MeterQuantity {
    pub timestamp: DateTime<Utc>,
    pub quantity: f64,
}

/// `MeterQuantities`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MeterQuantities {
    pub quantities: Vec<MeterQuantity>,
    pub total: f64,
}

/// `MeterCreate` (documented shape).
#[derive(Debug, Clone, ToSchema)]
pub struct MeterCreate {
    pub name: String,
    #[schema(required = false)]
    pub unit: Option<String>,
    pub custom_label: Option<String>,
    pub custom_multiplier: Option<i32>,
    #[schema(value_type = Object)]
    pub filter: Value,
    #[schema(value_type = Object)]
    pub aggregation: Value,
    #[schema(value_type = Option<crate::api::free_form::Metadata>)]
    pub metadata: Option<Value>,
    pub organization_id: Option<Uuid>,
}

/// `MeterUpdate` (documented shape): a field left out is unchanged.
#[derive(Debug, Clone, ToSchema)]
pub struct MeterUpdate {
    pub name: Option<String>,
    pub unit: Option<String>,
    pub custom_label: Option<String>,
    pub custom_multiplier: Option<i32>,
    #[schema(value_type = Option<Object>)]
    pub filter: Option<Value>,
    #[schema(value_type = Option<Object>)]
    pub aggregation: Option<Value>,
    pub is_archived: Option<bool>,
    #[schema(value_type = Option<crate::api::free_form::Metadata>)]
    pub metadata: Option<Value>,
}

fn missing(loc: Vec<Value>) -> FieldError {
    FieldError::new("missing", loc, "Field required", Value::Null)
}

fn with(mut base: Vec<Value>, more: &[Value]) -> Vec<Value> {
    base.extend(more.iter().cloned());
    base
}

/// Strips Polar's optional `metadata.` prefix of a property.
fn property_name(p: &str) -> String {
    p.strip_prefix("metadata.").unwrap_or(p).to_string()
}

fn string_at(errors: &mut Vec<FieldError>, loc: Vec<Value>, v: Option<&Value>) -> Option<String> {
    match v {
        None => {
            errors.push(missing(loc));
            None
        }
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            errors.push(FieldError::new(
                "string_type",
                loc,
                "Input should be a valid string",
                other.clone(),
            ));
            None
        }
    }
}

/// Reads a filter (`Filter`) at `loc`.
pub fn parse_filter(v: &Value, loc: Vec<Value>, errors: &mut Vec<FieldError>) -> Option<Filter> {
    let Value::Object(map) = v else {
        errors.push(FieldError::new(
            "model_type",
            loc,
            "Input should be a valid dictionary or instance of Filter",
            v.clone(),
        ));
        return None;
    };
    let before = errors.len();
    let conjunction = match map.get("conjunction") {
        None => {
            errors.push(missing(with(loc.clone(), &[Value::from("conjunction")])));
            None
        }
        Some(Value::String(s)) if s == "and" => Some(Conjunction::And),
        Some(Value::String(s)) if s == "or" => Some(Conjunction::Or),
        Some(other) => {
            errors.push(
                FieldError::new(
                    "enum",
                    with(loc.clone(), &[Value::from("conjunction")]),
                    "Input should be 'and' or 'or'",
                    other.clone(),
                )
                .with_ctx(json!({"expected": "'and' or 'or'"})),
            );
            None
        }
    };
    let mut clauses = Vec::new();
    match map.get("clauses") {
        None => errors.push(missing(with(loc.clone(), &[Value::from("clauses")]))),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let at = with(loc.clone(), &[Value::from("clauses"), Value::from(i)]);
                if item.get("conjunction").is_some() || item.get("clauses").is_some() {
                    if let Some(f) = parse_filter(item, at, errors) {
                        clauses.push(FilterNode::Filter(f));
                    }
                } else if let Some(c) = parse_clause(item, at, errors) {
                    clauses.push(FilterNode::Clause(c));
                }
            }
        }
        Some(other) => errors.push(FieldError::new(
            "list_type",
            with(loc.clone(), &[Value::from("clauses")]),
            "Input should be a valid list",
            other.clone(),
        )),
    }
    if errors.len() > before {
        return None;
    }
    Some(Filter {
        conjunction: conjunction?,
        clauses,
    })
}

fn parse_clause(v: &Value, loc: Vec<Value>, errors: &mut Vec<FieldError>) -> Option<Clause> {
    let Value::Object(map) = v else {
        errors.push(FieldError::new(
            "model_type",
            loc,
            "Input should be a valid dictionary or instance of FilterClause",
            v.clone(),
        ));
        return None;
    };
    let before = errors.len();
    let property = string_at(
        errors,
        with(loc.clone(), &[Value::from("property")]),
        map.get("property"),
    );
    let operator = match map.get("operator") {
        None => {
            errors.push(missing(with(loc.clone(), &[Value::from("operator")])));
            None
        }
        Some(Value::String(s)) if Operator::parse(s).is_some() => Operator::parse(s),
        Some(other) => {
            let expected = "'eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'like' or 'not_like'";
            errors.push(
                FieldError::new(
                    "enum",
                    with(loc.clone(), &[Value::from("operator")]),
                    format!("Input should be {expected}"),
                    other.clone(),
                )
                .with_ctx(json!({"expected": expected})),
            );
            None
        }
    };
    let vloc = with(loc.clone(), &[Value::from("value")]);
    let value = match map.get("value") {
        None => {
            errors.push(missing(vloc));
            None
        }
        Some(Value::String(s)) if s.chars().count() <= 1000 => Some(ClauseValue::Str(s.clone())),
        Some(Value::String(s)) => {
            errors.push(
                FieldError::new(
                    "string_too_long",
                    with(vloc, &[Value::from("str")]),
                    "String should have at most 1000 characters",
                    Value::from(s.as_str()),
                )
                .with_ctx(json!({"max_length": 1000})),
            );
            None
        }
        Some(Value::Bool(b)) => Some(ClauseValue::Bool(*b)),
        Some(Value::Number(n)) if n.as_i64().and_then(|i| i32::try_from(i).ok()).is_some() => n
            .as_i64()
            .and_then(|i| i32::try_from(i).ok())
            .map(ClauseValue::Int),
        Some(other) => {
            errors.push(FieldError::new(
                "int_type",
                with(vloc, &[Value::from("int")]),
                "Input should be a valid integer",
                other.clone(),
            ));
            None
        }
    };
    if errors.len() > before {
        return None;
    }
    Some(Clause {
        property: property_name(&property?),
        operator: operator?,
        value: value?,
    })
}

/// Reads an aggregation (discriminated by `func`) at `loc`.
pub fn parse_aggregation(
    v: &Value,
    loc: Vec<Value>,
    errors: &mut Vec<FieldError>,
) -> Option<Aggregation> {
    let tags = "'count', 'sum', 'max', 'min', 'avg', 'unique'";
    let Value::Object(map) = v else {
        errors.push(FieldError::new(
            "model_attributes_type",
            loc,
            "Input should be a valid dictionary or object to extract fields from",
            v.clone(),
        ));
        return None;
    };
    let func = match map.get("func") {
        None => {
            errors.push(
                FieldError::new(
                    "union_tag_not_found",
                    loc,
                    "Unable to extract tag using discriminator 'func'",
                    v.clone(),
                )
                .with_ctx(json!({"discriminator": "'func'"})),
            );
            return None;
        }
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let Some(f) = Func::parse(&func) else {
        errors.push(
            FieldError::new(
                "union_tag_invalid",
                loc,
                format!("Input tag '{func}' found using 'func' does not match any of the expected tags: {tags}"),
                v.clone(),
            )
            .with_ctx(json!({"discriminator": "'func'", "tag": func, "expected_tags": tags})),
        );
        return None;
    };
    if f == Func::Count {
        return Some(Aggregation::Count);
    }
    let ploc = with(loc, &[Value::from(func.as_str()), Value::from("property")]);
    let property = property_name(&string_at(errors, ploc, map.get("property"))?);
    Some(match f {
        Func::Sum => Aggregation::Sum(property),
        Func::Max => Aggregation::Max(property),
        Func::Min => Aggregation::Min(property),
        Func::Avg => Aggregation::Avg(property),
        Func::Unique => Aggregation::Unique(property),
        Func::Count => Aggregation::Count,
    })
}

fn parse_unit(v: &Value, errors: &mut Vec<FieldError>) -> Option<MeterUnit> {
    match v {
        Value::String(s) if MeterUnit::parse(s).is_some() => MeterUnit::parse(s),
        other => {
            errors.push(
                FieldError::new(
                    "enum",
                    loc!["body", "unit"],
                    "Input should be 'scalar', 'token' or 'custom'",
                    other.clone(),
                )
                .with_ctx(json!({"expected": "'scalar', 'token' or 'custom'"})),
            );
            None
        }
    }
}

fn parse_multiplier(v: &Value, errors: &mut Vec<FieldError>) -> Option<Option<i32>> {
    match v {
        Value::Null => Some(None),
        Value::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
            Some(i) if i > 0 => Some(Some(i)),
            Some(i) => {
                errors.push(
                    FieldError::new(
                        "greater_than",
                        loc!["body", "custom_multiplier"],
                        "Input should be greater than 0",
                        Value::from(i),
                    )
                    .with_ctx(json!({"gt": 0})),
                );
                None
            }
            None => {
                errors.push(FieldError::new(
                    "int_type",
                    loc!["body", "custom_multiplier"],
                    "Input should be a valid integer",
                    v.clone(),
                ));
                None
            }
        },
        other => {
            errors.push(FieldError::new(
                "int_type",
                loc!["body", "custom_multiplier"],
                "Input should be a valid integer",
                other.clone(),
            ));
            None
        }
    }
}

fn parse_label(v: &Value, errors: &mut Vec<FieldError>) -> Option<Option<String>> {
    match v {
        Value::Null => Some(None),
        Value::String(s) => Some(Some(s.clone())),
        other => {
            errors.push(FieldError::new(
                "string_type",
                loc!["body", "custom_label"],
                "Input should be a valid string",
                other.clone(),
            ));
            None
        }
    }
}

fn name_ok(name: &str, errors: &mut Vec<FieldError>) -> bool {
    if name.chars().count() < 3 {
        errors.push(
            FieldError::new(
                "string_too_short",
                loc!["body", "name"],
                "String should have at least 3 characters",
                Value::from(name),
            )
            .with_ctx(json!({"min_length": 3})),
        );
        return false;
    }
    true
}

fn object(body: &Value) -> Result<&Map<String, Value>, ApiError> {
    match body {
        Value::Object(m) => Ok(m),
        other => Err(ApiError::Validation(vec![FieldError::new(
            "model_attributes_type",
            loc!["body"],
            "Input should be a valid dictionary or object to extract fields from",
            other.clone(),
        )])),
    }
}

/// `MeterCreate` → a new meter.
pub fn new_meter(body: &Value) -> Result<NewMeter, ApiError> {
    let map = object(body)?;
    let mut errors = Vec::new();
    let name = string_at(&mut errors, loc!["body", "name"], map.get("name"))
        .filter(|n| name_ok(n, &mut errors));
    let unit = match map.get("unit") {
        None => Some(MeterUnit::Scalar),
        Some(v) => parse_unit(v, &mut errors),
    };
    let custom_label = map
        .get("custom_label")
        .map_or(Some(None), |v| parse_label(v, &mut errors));
    let custom_multiplier = map
        .get("custom_multiplier")
        .map_or(Some(None), |v| parse_multiplier(v, &mut errors));
    let filter = match map.get("filter") {
        None => {
            errors.push(missing(loc!["body", "filter"]));
            None
        }
        Some(v) => parse_filter(v, loc!["body", "filter"], &mut errors),
    };
    let aggregation = match map.get("aggregation") {
        None => {
            errors.push(missing(loc!["body", "aggregation"]));
            None
        }
        Some(v) => parse_aggregation(v, loc!["body", "aggregation"], &mut errors),
    };
    let metadata = match map.get("metadata") {
        None | Some(Value::Null) => Some(Default::default()),
        Some(v) => match parse_metadata("metadata", v) {
            Ok(m) => Some(m),
            Err(e) => {
                errors.extend(e);
                None
            }
        },
    };
    let organization_id = match map.get("organization_id") {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(s)) => match s.parse::<Uuid>() {
            Ok(u) => Some(Some(u)),
            Err(e) => {
                errors.push(FieldError::new(
                    "uuid_parsing",
                    loc!["body", "organization_id"],
                    format!("Input should be a valid UUID, {e}"),
                    Value::from(s.as_str()),
                ));
                None
            }
        },
        Some(other) => {
            errors.push(FieldError::new(
                "uuid_type",
                loc!["body", "organization_id"],
                "UUID input should be a string, bytes or UUID object",
                other.clone(),
            ));
            None
        }
    };
    if let (Some(MeterUnit::Custom), Some(None)) = (unit, &custom_label) {
        errors.push(FieldError::new(
            "value_error",
            loc!["body"],
            "Value error, custom_label is required when unit is 'custom'.",
            body.clone(),
        ));
    }
    if let (Some(MeterUnit::Scalar | MeterUnit::Token), Some(Some(_))) = (unit, &custom_label) {
        errors.push(FieldError::new(
            "value_error",
            loc!["body"],
            "Value error, custom_label and custom_multiplier are only allowed when unit is 'custom'.",
            body.clone(),
        ));
    }
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    match (
        name,
        unit,
        custom_label,
        custom_multiplier,
        filter,
        aggregation,
        metadata,
        organization_id,
    ) {
        (
            Some(name),
            Some(unit),
            Some(custom_label),
            Some(custom_multiplier),
            Some(filter),
            Some(aggregation),
            Some(metadata),
            Some(organization_id),
        ) => Ok(NewMeter {
            name,
            unit,
            custom_label,
            custom_multiplier,
            filter,
            aggregation,
            metadata,
            organization_id,
        }),
        _ => Err(ApiError::internal("meter body parsed without its fields")),
    }
}

/// `MeterUpdate` → a change (a field absent or `null` is unchanged).
pub fn meter_change(body: &Value) -> Result<MeterChange, ApiError> {
    let map = object(body)?;
    let mut errors = Vec::new();
    let present = |k: &str| map.get(k).filter(|v| !v.is_null());
    let mut change = MeterChange::default();
    if let Some(v) = present("name") {
        change.name = string_at(&mut errors, loc!["body", "name"], Some(v))
            .filter(|n| name_ok(n, &mut errors));
    }
    if let Some(v) = present("unit") {
        change.unit = parse_unit(v, &mut errors);
    }
    if let Some(v) = present("custom_label") {
        change.custom_label = parse_label(v, &mut errors);
    }
    if let Some(v) = present("custom_multiplier") {
        change.custom_multiplier = parse_multiplier(v, &mut errors);
    }
    if let Some(v) = present("filter") {
        change.filter = parse_filter(v, loc!["body", "filter"], &mut errors);
    }
    if let Some(v) = present("aggregation") {
        change.aggregation = parse_aggregation(v, loc!["body", "aggregation"], &mut errors);
    }
    if let Some(v) = present("is_archived") {
        match v {
            Value::Bool(b) => change.is_archived = Some(*b),
            other => errors.push(FieldError::new(
                "bool_type",
                loc!["body", "is_archived"],
                "Input should be a valid boolean",
                other.clone(),
            )),
        }
    }
    if let Some(v) = present("metadata") {
        match parse_metadata("metadata", v) {
            Ok(m) => change.metadata = Some(m),
            Err(e) => errors.extend(e),
        }
    }
    if errors.is_empty() {
        Ok(change)
    } else {
        Err(ApiError::Validation(errors))
    }
}

/// The earliest `start_timestamp` Polar accepts.
pub const QUANTITIES_FLOOR: &str = "2023-01-01T00:00:00Z";

/// Parses an aware datetime of a query parameter (`None` with its error pushed).
pub fn query_datetime(
    raw: &str,
    key: &str,
    errors: &mut Vec<FieldError>,
) -> Option<DateTime<FixedOffset>> {
    let s = raw.trim().replace(' ', "+");
    if let Ok(t) = DateTime::parse_from_rfc3339(&s) {
        return Some(t);
    }
    if chrono::NaiveDateTime::parse_from_str(&s, "%Y-%m-%dT%H:%M:%S%.f").is_ok()
        || chrono::NaiveDate::parse_from_str(&s, "%Y-%m-%d").is_ok()
    {
        errors.push(FieldError::new(
            "timezone_aware",
            loc!["query", key],
            "Input should have timezone info",
            Value::from(raw),
        ));
    } else {
        errors.push(FieldError::new(
            "datetime_from_date_parsing",
            loc!["query", key],
            "Input should be a valid datetime or date, invalid character in year",
            Value::from(raw),
        ));
    }
    None
}

/// The raw values of the quantities' query, as the route read them.
#[derive(Debug, Clone, Default)]
pub struct QuantitiesParams {
    pub start_timestamp: Option<String>,
    pub end_timestamp: Option<String>,
    pub interval: Option<String>,
    pub timezone: Option<String>,
    pub customer_ids: Vec<Uuid>,
    pub external_customer_ids: Vec<String>,
    pub customer_aggregation_function: Option<String>,
    pub metadata: Vec<(String, String)>,
}

/// Checks the quantities' query (Polar's types, the 2023 floor, the range limits).
pub fn quantities_query(p: QuantitiesParams) -> Result<QuantitiesQuery, ApiError> {
    let mut errors = Vec::new();
    let start = match &p.start_timestamp {
        None => {
            errors.push(missing(loc!["query", "start_timestamp"]));
            None
        }
        Some(raw) => query_datetime(raw, "start_timestamp", &mut errors),
    };
    if let Some(s) = start {
        let floor = DateTime::parse_from_rfc3339(QUANTITIES_FLOOR).ok();
        if floor.is_some_and(|f| s < f) {
            errors.push(
                FieldError::new(
                    "greater_than_equal",
                    loc!["query", "start_timestamp"],
                    "Input should be greater than or equal to 2023-01-01T00:00:00Z",
                    Value::from(p.start_timestamp.clone().unwrap_or_default()),
                )
                .with_ctx(json!({"ge": "2023-01-01T00:00:00Z"})),
            );
        }
    }
    let end = match &p.end_timestamp {
        None => {
            errors.push(missing(loc!["query", "end_timestamp"]));
            None
        }
        Some(raw) => query_datetime(raw, "end_timestamp", &mut errors),
    };
    let intervals = "'year', 'month', 'week', 'day' or 'hour'";
    let interval = match &p.interval {
        None => {
            errors.push(missing(loc!["query", "interval"]));
            None
        }
        Some(raw) => match Interval::parse(raw) {
            Some(i) => Some(i),
            None => {
                errors.push(
                    FieldError::new(
                        "enum",
                        loc!["query", "interval"],
                        format!("Input should be {intervals}"),
                        Value::from(raw.as_str()),
                    )
                    .with_ctx(json!({"expected": intervals})),
                );
                None
            }
        },
    };
    let timezone = p.timezone.clone().unwrap_or_else(|| "UTC".into());
    if timezone.parse::<chrono_tz::Tz>().is_err() {
        errors.push(FieldError::new(
            "TimeZoneName",
            loc!["query", "timezone"],
            "Invalid timezone name.",
            Value::from(timezone.as_str()),
        ));
    }
    let funcs = "'count', 'sum', 'max', 'min', 'avg' or 'unique'";
    let per_customer = match &p.customer_aggregation_function {
        None => None,
        Some(raw) => match Func::parse(raw) {
            Some(f) => Some(f),
            None => {
                errors.push(
                    FieldError::new(
                        "enum",
                        loc!["query", "customer_aggregation_function"],
                        format!("Input should be {funcs}"),
                        Value::from(raw.as_str()),
                    )
                    .with_ctx(json!({"expected": funcs})),
                );
                None
            }
        },
    };
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let (Some(start), Some(end), Some(interval)) = (start, end, interval) else {
        return Err(ApiError::internal(
            "quantities query parsed without its fields",
        ));
    };
    if !crate::domain::meter::under_limits(start, end, interval) {
        return Err(ApiError::Validation(vec![FieldError::new(
            "value_error",
            loc!["query"],
            "The interval is too small for the given date range. Use a larger interval or reduce the date range.",
            Value::Null,
        )]));
    }
    Ok(QuantitiesQuery {
        start: start.with_timezone(&Utc),
        end: end.with_timezone(&Utc),
        interval,
        timezone,
        customer_ids: p.customer_ids,
        external_customer_ids: p.external_customer_ids,
        customer_aggregation_function: per_customer,
        metadata: p.metadata,
    })
}

/// The `metadata[key]=value` pairs of a raw query string.
pub fn metadata_pairs(raw_query: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(raw_query.as_bytes())
        .filter_map(|(k, v)| {
            k.strip_prefix("metadata[")
                .and_then(|r| r.strip_suffix(']'))
                .map(|key| (key.to_string(), v.into_owned()))
        })
        .collect()
}

/// A meter of each aggregation, for the document's samples and tests.
#[cfg(test)]
pub(crate) fn sample_meters() -> Vec<Meter> {
    use chrono::TimeZone;

    use crate::domain::ids::{MeterId, OrganizationId};

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let base = Meter {
        id: MeterId(Uuid::from_u128(0xe1)),
        organization_id: OrganizationId(Uuid::from_u128(0x0a)),
        name: "API calls".into(),
        unit: MeterUnit::Scalar,
        custom_label: None,
        custom_multiplier: None,
        filter: Filter {
            conjunction: Conjunction::And,
            clauses: vec![
                FilterNode::Clause(Clause {
                    property: "name".into(),
                    operator: Operator::Eq,
                    value: ClauseValue::Str("api_call".into()),
                }),
                FilterNode::Filter(Filter {
                    conjunction: Conjunction::Or,
                    clauses: vec![FilterNode::Clause(Clause {
                        property: "tokens".into(),
                        operator: Operator::Gt,
                        value: ClauseValue::Int(0),
                    })],
                }),
            ],
        },
        aggregation: Aggregation::Count,
        metadata: Default::default(),
        created_at: now,
        modified_at: None,
        archived_at: None,
        aggregating: false,
    };
    let custom = Meter {
        id: MeterId(Uuid::from_u128(0xe2)),
        unit: MeterUnit::Custom,
        custom_label: Some("tokens".into()),
        custom_multiplier: Some(1000),
        aggregation: Aggregation::Sum("tokens".into()),
        modified_at: Some(now),
        archived_at: Some(now),
        ..base.clone()
    };
    vec![base, custom]
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, Value)> {
    let mut out: Vec<(&'static str, Value)> = sample_meters()
        .iter()
        .map(|m| {
            (
                "Meter",
                serde_json::to_value(MeterView::from(m)).unwrap_or_default(),
            )
        })
        .collect();
    let q = MeterQuantities {
        quantities: vec![MeterQuantity {
            timestamp: DateTime::<Utc>::default(),
            quantity: 1024.0,
        }],
        total: 1024.0,
    };
    out.push((
        "MeterQuantities",
        serde_json::to_value(q).unwrap_or_default(),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_reads_polar_example_and_strips_metadata_prefixes() {
        let body = json!({
            "name": "API calls",
            "filter": {"conjunction": "and", "clauses": [
                {"property": "name", "operator": "eq", "value": "api_call"},
                {"conjunction": "or", "clauses": [{"property": "metadata.endpoint", "operator": "like", "value": "/v1/"}]}
            ]},
            "aggregation": {"func": "sum", "property": "metadata.tokens"}
        });
        let m = new_meter(&body).unwrap();
        assert_eq!(m.unit, MeterUnit::Scalar);
        assert_eq!(m.aggregation, Aggregation::Sum("tokens".into()));
        let f = filter_json(&m.filter);
        assert_eq!(f["clauses"][1]["clauses"][0]["property"], "endpoint");
    }

    #[test]
    fn create_reports_every_problem() {
        let body = json!({
            "name": "ab",
            "unit": "custom",
            "filter": {"conjunction": "xor", "clauses": [{"property": "a", "operator": "eq", "value": 1.5}]},
            "aggregation": {"func": "median"}
        });
        let Err(ApiError::Validation(errors)) = new_meter(&body) else {
            panic!("422 expected");
        };
        let kinds: Vec<&str> = errors.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(
            kinds,
            vec![
                "string_too_short",
                "enum",
                "int_type",
                "union_tag_invalid",
                "value_error"
            ]
        );
        assert_eq!(
            errors[2].loc,
            loc!["body", "filter", "clauses", 0, "value", "int"]
        );
        let Err(ApiError::Validation(errors)) = new_meter(
            &json!({"name": "abc", "filter": {"conjunction": "and", "clauses": []}, "aggregation": {"func": "sum"}}),
        ) else {
            panic!("422 expected");
        };
        assert_eq!(
            errors[0].loc,
            loc!["body", "aggregation", "sum", "property"]
        );
    }

    #[test]
    fn quantities_limits_and_floor() {
        let p = |start: &str, end: &str, interval: &str| QuantitiesParams {
            start_timestamp: Some(start.into()),
            end_timestamp: Some(end.into()),
            interval: Some(interval.into()),
            ..Default::default()
        };
        assert!(
            quantities_query(p("2026-08-01T00:00:00Z", "2026-08-07T00:00:00Z", "hour")).is_ok()
        );
        let Err(ApiError::Validation(e)) =
            quantities_query(p("2026-08-01T00:00:00Z", "2026-08-09T00:00:00Z", "hour"))
        else {
            panic!("422");
        };
        assert_eq!(e[0].loc, loc!["query"]);
        let Err(ApiError::Validation(e)) =
            quantities_query(p("2022-12-31T00:00:00Z", "2023-01-02T00:00:00Z", "day"))
        else {
            panic!("422");
        };
        assert_eq!(e[0].kind, "greater_than_equal");
        let Err(ApiError::Validation(e)) = quantities_query(p(
            "2026-08-01T00:00:00",
            "2026-08-02T00:00:00Z",
            "fortnight",
        )) else {
            panic!("422");
        };
        assert_eq!(e[0].kind, "timezone_aware");
        assert_eq!(e[1].kind, "enum");
    }
}
