//! Meters (`/v1/meters`, Polar's `Meter`, `polar-2026.md` §7.3): which events count (a
//! filter: conjunctions of clauses on an event's name, source, timestamp or metadata) and
//! how they count (an aggregation: count, or sum/max/min/avg/unique over a property).
//!
//! This file holds the stored record and its parts; what an event's matching and the
//! aggregates mean is the application's usage module (evaluation, ingestion, quantities,
//! customer meters).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record};

use super::ids::{MeterId, OrganizationId};
use super::metadata::Metadata;

/// The meters of an organization, oldest first.
pub const METER_OF_ORG: &str = "meter_of_org";

/// What a meter's quantities are counted in (Polar's `MeterUnit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MeterUnit {
    Scalar,
    Token,
    Custom,
}

impl MeterUnit {
    pub const ALL: [MeterUnit; 3] = [MeterUnit::Scalar, MeterUnit::Token, MeterUnit::Custom];

    pub fn as_str(self) -> &'static str {
        match self {
            MeterUnit::Scalar => "scalar",
            MeterUnit::Token => "token",
            MeterUnit::Custom => "custom",
        }
    }

    pub fn parse(s: &str) -> Option<MeterUnit> {
        MeterUnit::ALL.into_iter().find(|u| u.as_str() == s)
    }
}

/// A filter's conjunction: every clause (`and`) or any (`or`); an empty list matches
/// every event either way, as in Polar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Conjunction {
    And,
    Or,
}

/// A clause's operator (Polar's `FilterOperator`); `like` is "contains".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Operator {
    Eq,
    Ne,
    Gt,
    Gte,
    Lt,
    Lte,
    Like,
    NotLike,
}

impl Operator {
    pub const ALL: [Operator; 8] = [
        Operator::Eq,
        Operator::Ne,
        Operator::Gt,
        Operator::Gte,
        Operator::Lt,
        Operator::Lte,
        Operator::Like,
        Operator::NotLike,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Eq => "eq",
            Operator::Ne => "ne",
            Operator::Gt => "gt",
            Operator::Gte => "gte",
            Operator::Lt => "lt",
            Operator::Lte => "lte",
            Operator::Like => "like",
            Operator::NotLike => "not_like",
        }
    }

    pub fn parse(s: &str) -> Option<Operator> {
        Operator::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

/// A clause's value: a string (≤ 1000 characters), a 32-bit integer or a boolean.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClauseValue {
    Str(String),
    Int(i32),
    Bool(bool),
}

/// One test on an event: `property operator value`. `property` is `name`, `source`,
/// `timestamp` (epoch seconds) or a dotted path into the metadata (stored without
/// Polar's optional `metadata.` prefix).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clause {
    pub property: String,
    pub operator: Operator,
    pub value: ClauseValue,
}

/// An element of a filter's clauses: a clause or a nested filter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum FilterNode {
    Clause(Clause),
    Filter(Filter),
}

/// Which events a meter counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filter {
    pub conjunction: Conjunction,
    pub clauses: Vec<FilterNode>,
}

/// How a meter counts its events (Polar's `aggregation`, discriminated by `func`); the
/// property is stored without the `metadata.` prefix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Aggregation {
    Count,
    Sum(String),
    Max(String),
    Min(String),
    Avg(String),
    /// The number of distinct values of the property.
    Unique(String),
}

impl Aggregation {
    /// Polar's `func`.
    pub fn func(&self) -> &'static str {
        match self {
            Aggregation::Count => "count",
            Aggregation::Sum(_) => "sum",
            Aggregation::Max(_) => "max",
            Aggregation::Min(_) => "min",
            Aggregation::Avg(_) => "avg",
            Aggregation::Unique(_) => "unique",
        }
    }

    /// The property it reads, if any.
    pub fn property(&self) -> Option<&str> {
        match self {
            Aggregation::Count => None,
            Aggregation::Sum(p)
            | Aggregation::Max(p)
            | Aggregation::Min(p)
            | Aggregation::Avg(p)
            | Aggregation::Unique(p) => Some(p),
        }
    }
}

/// A meter of an organization.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meter {
    pub id: MeterId,
    pub organization_id: OrganizationId,
    pub name: String,
    pub unit: MeterUnit,
    /// Required exactly when `unit` is `Custom`.
    pub custom_label: Option<String>,
    pub custom_multiplier: Option<i32>,
    pub filter: Filter,
    pub aggregation: Aggregation,
    pub metadata: Metadata,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    /// Archived meters count no new event and are hidden from the customer meters.
    pub archived_at: Option<DateTime<Utc>>,
    /// Set once the meter has counted an event: from then on its filter and aggregation
    /// are frozen (Polar: "the meter is already aggregating events").
    pub aggregating: bool,
}

impl Meter {
    pub fn is_archived(&self) -> bool {
        self.archived_at.is_some()
    }

    pub fn created_key(&self) -> Vec<u8> {
        KeyBuf::new()
            .i64(self.created_at.timestamp_micros())
            .str(&self.id.to_string())
            .into_vec()
    }
}

impl Record for Meter {
    crate::record_v1!(Meter, "meter");
    const INDEXES: &'static [&'static str] = &[METER_OF_ORG];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        vec![IndexEntry::new(
            METER_OF_ORG,
            self.organization_id.key(),
            self.created_key(),
        )]
    }
}

/// Polar's `TimeInterval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interval {
    Year,
    Month,
    Week,
    Day,
    Hour,
}

impl Interval {
    pub const ALL: [Interval; 5] = [
        Interval::Year,
        Interval::Month,
        Interval::Week,
        Interval::Day,
        Interval::Hour,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Interval::Year => "year",
            Interval::Month => "month",
            Interval::Week => "week",
            Interval::Day => "day",
            Interval::Hour => "hour",
        }
    }

    pub fn parse(s: &str) -> Option<Interval> {
        Interval::ALL.into_iter().find(|i| i.as_str() == s)
    }

    /// The longest span (in calendar days) a request may cover at this interval.
    pub fn max_days(self) -> i64 {
        match self {
            Interval::Hour => 7,
            Interval::Day => 366,
            Interval::Week => 371,
            Interval::Month => 1460,
            Interval::Year => 3650,
        }
    }
}

/// Polar's `is_under_limits`: start not after end, and the calendar days between the two
/// datetimes as given (not in the request's zone) at most the interval's limit.
pub fn under_limits(
    start: DateTime<chrono::FixedOffset>,
    end: DateTime<chrono::FixedOffset>,
    interval: Interval,
) -> bool {
    if start > end {
        return false;
    }
    let days = chrono::Datelike::num_days_from_ce(&end.date_naive())
        - chrono::Datelike::num_days_from_ce(&start.date_naive());
    i64::from(days) <= interval.max_days()
}

/// The six functions of an aggregation (the meter's, or `customer_aggregation_function`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Count,
    Sum,
    Max,
    Min,
    Avg,
    Unique,
}

impl Func {
    pub const ALL: [Func; 6] = [
        Func::Count,
        Func::Sum,
        Func::Max,
        Func::Min,
        Func::Avg,
        Func::Unique,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Func::Count => "count",
            Func::Sum => "sum",
            Func::Max => "max",
            Func::Min => "min",
            Func::Avg => "avg",
            Func::Unique => "unique",
        }
    }

    pub fn parse(s: &str) -> Option<Func> {
        Func::ALL.into_iter().find(|f| f.as_str() == s)
    }

    pub fn of(aggregation: &Aggregation) -> Func {
        use Aggregation as A;
        match aggregation {
            A::Count => Func::Count,
            A::Sum(_) => Func::Sum,
            A::Max(_) => Func::Max,
            A::Min(_) => Func::Min,
            A::Avg(_) => Func::Avg,
            A::Unique(_) => Func::Unique,
        }
    }
}

/// A new meter, its fields checked (`MeterCreate`); the organization is decided by the
/// service (`organization_id` given, or the token's).
#[derive(Debug, Clone, PartialEq)]
pub struct NewMeter {
    pub name: String,
    pub unit: MeterUnit,
    pub custom_label: Option<String>,
    pub custom_multiplier: Option<i32>,
    pub filter: Filter,
    pub aggregation: Aggregation,
    pub metadata: Metadata,
    pub organization_id: Option<uuid::Uuid>,
}

/// A change of a meter (`MeterUpdate`): `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MeterChange {
    pub name: Option<String>,
    pub unit: Option<MeterUnit>,
    pub custom_label: Option<Option<String>>,
    pub custom_multiplier: Option<Option<i32>>,
    pub filter: Option<Filter>,
    pub aggregation: Option<Aggregation>,
    pub is_archived: Option<bool>,
    pub metadata: Option<Metadata>,
}

/// The sort keys of `GET /v1/meters/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeterSort {
    CreatedAt,
    Name,
}

/// `GET /v1/meters/{id}/quantities`, its parameters checked.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantitiesQuery {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub interval: Interval,
    /// An IANA zone name, checked.
    pub timezone: String,
    pub customer_ids: Vec<uuid::Uuid>,
    pub external_customer_ids: Vec<String>,
    pub customer_aggregation_function: Option<Func>,
    pub metadata: Vec<(String, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::{at, hex, metadata, uuid};

    fn full_meter() -> Meter {
        Meter {
            id: MeterId(uuid(1)),
            organization_id: OrganizationId(uuid(2)),
            name: "API calls".into(),
            unit: MeterUnit::Custom,
            custom_label: Some("calls".into()),
            custom_multiplier: Some(10),
            filter: Filter {
                conjunction: Conjunction::And,
                clauses: vec![
                    FilterNode::Clause(Clause {
                        property: "name".into(),
                        operator: Operator::Eq,
                        value: ClauseValue::Str("api".into()),
                    }),
                    FilterNode::Filter(Filter {
                        conjunction: Conjunction::Or,
                        clauses: vec![
                            FilterNode::Clause(Clause {
                                property: "n".into(),
                                operator: Operator::Gte,
                                value: ClauseValue::Int(-3),
                            }),
                            FilterNode::Clause(Clause {
                                property: "ok".into(),
                                operator: Operator::NotLike,
                                value: ClauseValue::Bool(true),
                            }),
                        ],
                    }),
                ],
            },
            aggregation: Aggregation::Sum("tokens".into()),
            metadata: metadata(),
            created_at: at(0),
            modified_at: Some(at(60)),
            archived_at: Some(at(120)),
            aggregating: true,
        }
    }

    #[test]
    fn round_trip_and_golden_bytes() {
        let meter = full_meter();
        assert_eq!((Meter::COLLECTION, Meter::VERSION), ("meter", 1));
        let bytes = meter.encode().unwrap_or_default();
        assert_eq!(Meter::decode(1, &bytes).ok(), Some(meter));
        assert_eq!(
            hex(&bytes),
            GOLDEN_V1,
            "meter format v1 changed: add a version"
        );
    }

    #[test]
    fn names_round_trip() {
        for u in MeterUnit::ALL {
            assert_eq!(MeterUnit::parse(u.as_str()), Some(u));
        }
        for o in Operator::ALL {
            assert_eq!(Operator::parse(o.as_str()), Some(o));
        }
        assert_eq!(Aggregation::Unique("x".into()).property(), Some("x"));
        assert_eq!(Aggregation::Count.property(), None);
    }

    const GOLDEN_V1: &str = concat!(
        "10000000000000000000000000000000011000000000000000000000000000000002094150492063",
        "616c6c7302010563616c6c730114000200046e616d6500000361706901010200016e03010500026f",
        "6b0702010106746f6b656e730304706c616e000370726f057365617473010505747269616c020114",
        "313937302d30312d30315430303a30303a30305a0114313937302d30312d30315430303a30313a30",
        "305a0114313937302d30312d30315430303a30323a30305a01",
    );
}
