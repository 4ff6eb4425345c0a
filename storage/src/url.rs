//! [`DatabaseUrl`]: a PostgreSQL connection URL that never prints its password.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `postgres://user:password@host:port/database`, as configured. `Debug` and `Display`
/// show it with the password replaced by `***` (so a log line, a panic or a failed test
/// never carries it); [`DatabaseUrl::expose`] gives the whole URL to the driver only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct DatabaseUrl(String);

impl DatabaseUrl {
    pub fn new(url: impl Into<String>) -> Self {
        DatabaseUrl(url.into())
    }

    /// The URL with its password, for the connection only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether it names PostgreSQL (`postgres://` or `postgresql://`).
    pub fn is_postgres(&self) -> bool {
        self.0.starts_with("postgres://") || self.0.starts_with("postgresql://")
    }

    /// The URL with the password (of the userinfo, and of a `password=` parameter)
    /// replaced by `***`.
    pub fn redacted(&self) -> String {
        let url = &self.0;
        let mut out = match url.find("://") {
            Some(scheme_end) => {
                let rest_start = scheme_end + 3;
                let rest = &url[rest_start..];
                let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
                let authority = &rest[..authority_end];
                match (authority.rfind('@'), authority.find(':')) {
                    (Some(at), Some(colon)) if colon < at => format!(
                        "{}{}:***{}",
                        &url[..rest_start],
                        &authority[..colon],
                        &rest[at..]
                    ),
                    _ => url.clone(),
                }
            }
            None => url.clone(),
        };
        // A `password=` parameter (query string or key=value form).
        let lower = out.to_ascii_lowercase();
        if let Some(p) = lower.find("password=") {
            let start = p + "password=".len();
            let end = out[start..]
                .find(['&', ' '])
                .map_or(out.len(), |e| start + e);
            out.replace_range(start..end, "***");
        }
        out
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseUrl({:?})", self.redacted())
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl From<&str> for DatabaseUrl {
    fn from(s: &str) -> Self {
        DatabaseUrl(s.to_string())
    }
}

impl From<String> for DatabaseUrl {
    fn from(s: String) -> Self {
        DatabaseUrl(s)
    }
}

/// Read from the settings as the string it is.
impl<'de> Deserialize<'de> for DatabaseUrl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(DatabaseUrl)
    }
}

/// Written back redacted: settings are serialized to be shown, never to be read again.
impl Serialize for DatabaseUrl {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.redacted())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_never_prints() {
        let url = DatabaseUrl::new("postgres://tollgate:s3cr3t@db.example:5432/shop");
        for shown in [format!("{url}"), format!("{url:?}")] {
            assert!(!shown.contains("s3cr3t"), "{shown}");
            assert!(
                shown.contains("tollgate:***@db.example:5432/shop"),
                "{shown}"
            );
        }
        assert_eq!(
            url.expose(),
            "postgres://tollgate:s3cr3t@db.example:5432/shop"
        );
        let q = DatabaseUrl::new("postgresql://u@h/db?password=hunter2&sslmode=require");
        assert_eq!(
            q.redacted(),
            "postgresql://u@h/db?password=***&sslmode=require"
        );
        let kv = DatabaseUrl::new("host=h user=u password=hunter2 dbname=d");
        assert_eq!(kv.redacted(), "host=h user=u password=*** dbname=d");
        let plain = DatabaseUrl::new("postgres://u@h/db");
        assert_eq!(plain.to_string(), "postgres://u@h/db");
        // An `@` in the path is not a userinfo.
        let odd = DatabaseUrl::new("postgres://h:5432/db@x");
        assert_eq!(odd.to_string(), "postgres://h:5432/db@x");
    }
}
