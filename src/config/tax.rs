//! `[tax]`: whether business buyers' tax numbers are asked of the registers that keep them
//! (the EU Commission's VIES, HMRC's "Check a UK VAT number"), and how long a lookup may
//! take. Off by default: numbers are then checked for format and check digits only.

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// The Commission's VIES REST API.
pub const VIES_URL: &str = "https://ec.europa.eu/taxation_customs/vies/rest-api";

/// HMRC's API platform (production).
pub const HMRC_URL: &str = "https://api.service.hmrc.gov.uk";

#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TaxConfig {
    /// Ask VIES whether an EU VAT number is registered.
    pub vies: bool,
    /// The client id of an HMRC application subscribed to "Check a UK VAT number" v2.0;
    /// with `hmrc_client_secret`, GB numbers are asked of HMRC. Both or neither.
    pub hmrc_client_id: String,
    pub hmrc_client_secret: String,
    /// Milliseconds one lookup may take, whole (HMRC's token included); past it the number
    /// stays unverified and the sale goes on.
    pub lookup_timeout_ms: u64,
    /// Base URL of VIES's REST API (tests point it at a local fake).
    pub vies_url: String,
    /// Base URL of HMRC's API platform (`https://test-api.service.hmrc.gov.uk` is the
    /// sandbox; tests point it at a local fake).
    pub hmrc_url: String,
}

impl Default for TaxConfig {
    fn default() -> Self {
        Self {
            vies: false,
            hmrc_client_id: String::new(),
            hmrc_client_secret: String::new(),
            lookup_timeout_ms: 3000,
            vies_url: VIES_URL.into(),
            hmrc_url: HMRC_URL.into(),
        }
    }
}

impl TaxConfig {
    /// Whether GB numbers are asked of HMRC (both credentials set).
    pub fn hmrc(&self) -> bool {
        !self.hmrc_client_id.trim().is_empty() && !self.hmrc_client_secret.trim().is_empty()
    }

    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, why: &str| Err(ConfigError::Invalid(format!("tax.{key}: {why}")));
        if self.hmrc_client_id.trim().is_empty() != self.hmrc_client_secret.trim().is_empty() {
            return bad(
                "hmrc_client_secret",
                "hmrc_client_id and hmrc_client_secret go together (set both, or neither)",
            );
        }
        if !(1..=60_000).contains(&self.lookup_timeout_ms) {
            return bad("lookup_timeout_ms", "must be between 1 and 60000");
        }
        for (key, url) in [("vies_url", &self.vies_url), ("hmrc_url", &self.hmrc_url)] {
            match url::Url::parse(url) {
                Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
                _ => return bad(key, "expected an http(s) URL"),
            }
        }
        Ok(())
    }
}

/// The HMRC secret never reaches a log line.
impl std::fmt::Debug for TaxConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secret = if self.hmrc_client_secret.is_empty() {
            "<unset>"
        } else {
            "<redacted>"
        };
        f.debug_struct("TaxConfig")
            .field("vies", &self.vies)
            .field("hmrc_client_id", &self.hmrc_client_id)
            .field("hmrc_client_secret", &secret)
            .field("lookup_timeout_ms", &self.lookup_timeout_ms)
            .field("vies_url", &self.vies_url)
            .field("hmrc_url", &self.hmrc_url)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use figment::providers::{Format, Serialized, Toml};
    use figment::Figment;

    use super::super::Settings;
    use super::*;

    fn load(toml: &str) -> Result<Settings, ConfigError> {
        Settings::from_figment(
            Figment::from(Serialized::defaults(Settings::default())).merge(Toml::string(toml)),
        )
    }

    #[test]
    fn off_by_default_and_read_from_the_file() {
        let s = load("").unwrap();
        assert!(!s.tax.vies);
        assert!(!s.tax.hmrc());
        assert_eq!(s.tax.lookup_timeout_ms, 3000);
        assert_eq!(s.tax.vies_url, VIES_URL);
        assert_eq!(s.tax.hmrc_url, HMRC_URL);

        let s = load(
            "[tax]\nvies = true\nhmrc_client_id = \"id\"\nhmrc_client_secret = \"hunter2\"\n\
             lookup_timeout_ms = 200\nvies_url = \"http://127.0.0.1:9/vies\"\n\
             hmrc_url = \"http://127.0.0.1:9\"\n",
        )
        .unwrap();
        assert!(s.tax.vies && s.tax.hmrc());
        assert_eq!(s.tax.lookup_timeout_ms, 200);
        assert_eq!(s.tax.vies_url, "http://127.0.0.1:9/vies");
        let printed = format!("{s:?}");
        assert!(!printed.contains("hunter2"), "{printed}");
        assert!(printed.contains("<redacted>"), "{printed}");
    }

    #[test]
    #[allow(clippy::result_large_err)] // figment::Error is large; the closure signature is fixed.
    fn the_environment_overrides_the_file() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("config.toml", "[tax]\nvies = false\n")?;
            jail.set_env("TOLLGATE__TAX__VIES", "true");
            jail.set_env("TOLLGATE__TAX__LOOKUP_TIMEOUT_MS", "1500");
            let s = Settings::load(std::path::Path::new("config.toml"), true).unwrap();
            assert!(s.tax.vies);
            assert_eq!(s.tax.lookup_timeout_ms, 1500);
            Ok(())
        });
    }

    #[test]
    fn bad_values_are_refused_by_name() {
        for (toml, key) in [
            ("[tax]\nhmrc_client_id = \"id\"\n", "tax.hmrc_client_secret"),
            (
                "[tax]\nhmrc_client_secret = \"s\"\n",
                "tax.hmrc_client_secret",
            ),
            ("[tax]\nlookup_timeout_ms = 0\n", "tax.lookup_timeout_ms"),
            (
                "[tax]\nlookup_timeout_ms = 60001\n",
                "tax.lookup_timeout_ms",
            ),
            ("[tax]\nvies_url = \"ftp://x\"\n", "tax.vies_url"),
            ("[tax]\nhmrc_url = \"not a url\"\n", "tax.hmrc_url"),
            ("[tax]\nvies_uri = \"http://x\"\n", "vies_uri"),
        ] {
            let err = load(toml).unwrap_err().to_string();
            assert!(err.contains(key), "{toml}: {err}");
        }
    }
}
