//! API versions, as Polar serves them: a request may name one in its `Polar-Version:
//! YYYY-MM` header, and every answer says which one it was served in.
//!
//! - No header: the default shape, one that every client without a version header parses
//!   (Polar's seed-era SDKs and `@polar-sh/sdk` 0.47): Polar's default version
//!   ([`DEFAULT`]) where it only adds fields, the seed's shape where the two conflict
//!   (`docs/differences.md`). Answers carry `Polar-Version: 2026-04`.
//! - A supported version ([`ApiVersion::ALL`]): that version's shape.
//! - Any other value, malformed or unknown: 404 `{"detail": "Not Found"}` on every path,
//!   without a `Polar-Version` header (`crate::middleware::api_version`).
//!
//! The version a request is served in is active while its handler runs and its answer is
//! serialized ([`serve`], a task-local value, as Polar's context variable), so a view
//! declares a field's versions next to it: `#[serde(skip_serializing_if =
//! "version::before_2026_10")]` leaves it out of older versions, and [`VersionedFields`]
//! lists the same ranges for the per-version OpenAPI documents (a test holds the two
//! equal).

use std::fmt;
use std::future::Future;

/// The response (and request) header.
pub const HEADER: &str = "Polar-Version";

/// A supported API version, oldest first (the order compares them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ApiVersion {
    V2026_04,
    V2026_10,
    V2027_01,
}

/// The version answers without a header are labelled with (Polar's default).
pub const DEFAULT: ApiVersion = ApiVersion::V2026_04;

impl ApiVersion {
    pub const ALL: [ApiVersion; 3] = [
        ApiVersion::V2026_04,
        ApiVersion::V2026_10,
        ApiVersion::V2027_01,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApiVersion::V2026_04 => "2026-04",
            ApiVersion::V2026_10 => "2026-10",
            ApiVersion::V2027_01 => "2027-01",
        }
    }

    /// A header value naming a supported version (`YYYY-MM` exactly); `None` otherwise.
    pub fn parse(value: &str) -> Option<ApiVersion> {
        ApiVersion::ALL.into_iter().find(|v| v.as_str() == value)
    }
}

impl fmt::Display for ApiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

tokio::task_local! {
    static ACTIVE: Option<ApiVersion>;
}

/// Runs `fut` (a request's handling, its answer's serialization included) in `version`:
/// `None` is the default shape, requested without a header.
pub async fn serve<F: Future>(version: Option<ApiVersion>, fut: F) -> F::Output {
    ACTIVE.scope(version, fut).await
}

/// The version being served: `None` for the default shape, and outside any request (a
/// webhook's payload, a page): webhooks and pages are not versioned.
pub fn active() -> Option<ApiVersion> {
    ACTIVE.try_with(|v| *v).ok().flatten()
}

/// Whether a field that exists from `since` on is served now (never in the default
/// shape).
pub fn serves_since(since: ApiVersion) -> bool {
    active().is_some_and(|v| v >= since)
}

/// `skip_serializing_if` of a field that exists from 2026-10 on.
pub fn before_2026_10<T>(_: &T) -> bool {
    !serves_since(ApiVersion::V2026_10)
}

/// `skip_serializing_if` of a field that exists from 2027-01 on.
pub fn before_2027_01<T>(_: &T) -> bool {
    !serves_since(ApiVersion::V2027_01)
}

/// The versions a field exists in: from `since` (inclusive; `None`: from the first) up to
/// `until` (inclusive; `None`: still current). A field with a `since` is not in the
/// default shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Versions {
    pub since: Option<ApiVersion>,
    pub until: Option<ApiVersion>,
}

impl Versions {
    pub const fn since(v: ApiVersion) -> Versions {
        Versions {
            since: Some(v),
            until: None,
        }
    }

    /// Whether the field is served in `version` (`None`: the default shape).
    pub fn includes(&self, version: Option<ApiVersion>) -> bool {
        match version {
            None => self.since.is_none(),
            Some(v) => self.since.is_none_or(|s| v >= s) && self.until.is_none_or(|u| v <= u),
        }
    }
}

/// A wire type whose fields are not all in every version: the OpenAPI document of each
/// version leaves out the fields it does not serve.
pub trait VersionedFields {
    /// The schema's name in the OpenAPI document.
    const SCHEMA: &'static str;
    /// (field, the versions it exists in).
    const FIELDS: &'static [(&'static str, Versions)];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_supported_versions_parse() {
        assert_eq!(ApiVersion::parse("2026-04"), Some(ApiVersion::V2026_04));
        assert_eq!(ApiVersion::parse("2027-01"), Some(ApiVersion::V2027_01));
        for bad in [
            "",
            "2026-4",
            "2025-10",
            "2026-04-01",
            "latest",
            " 2026-04",
            "2026-07",
        ] {
            assert_eq!(ApiVersion::parse(bad), None, "{bad:?}");
        }
        assert!(ApiVersion::V2026_04 < ApiVersion::V2026_10);
    }

    #[actix_web::test]
    async fn the_served_version_is_active_inside_its_request_only() {
        assert_eq!(active(), None);
        let inside = serve(Some(ApiVersion::V2026_10), async {
            (active(), before_2026_10(&()), before_2027_01(&()))
        })
        .await;
        assert_eq!(inside, (Some(ApiVersion::V2026_10), false, true));
        let default = serve(None, async { before_2026_10(&()) }).await;
        assert!(default, "the default shape has no versioned field");
        assert_eq!(active(), None);
    }

    #[test]
    fn ranges_include_their_versions() {
        let new = Versions::since(ApiVersion::V2026_10);
        assert!(!new.includes(None));
        assert!(!new.includes(Some(ApiVersion::V2026_04)));
        assert!(new.includes(Some(ApiVersion::V2027_01)));
        let old = Versions {
            since: None,
            until: Some(ApiVersion::V2026_10),
        };
        assert!(old.includes(None) && old.includes(Some(ApiVersion::V2026_10)));
        assert!(!old.includes(Some(ApiVersion::V2027_01)));
    }
}
