//! The buyer's country from their IP address, read offline from a MaxMind-format database
//! the seller provides (`[checkout] geoip_database`: a GeoLite2/GeoIP2 country or city
//! file, or any compatible one). None by default: then no address has a country, and a
//! checkout's currency comes from its explicit `currency` or the organization's default
//! (Polar's `_get_currencies`).

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

/// The database, opened once at start-up (`None`: no lookup).
#[derive(Clone, Default)]
pub struct GeoIp {
    reader: Option<Arc<maxminddb::Reader<Vec<u8>>>>,
}

impl std::fmt::Debug for GeoIp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeoIp")
            .field("database", &self.reader.is_some())
            .finish()
    }
}

/// The part of a country or city record that names a country.
#[derive(Deserialize)]
struct Record<'a> {
    #[serde(borrow, default)]
    country: Option<Country<'a>>,
    #[serde(borrow, default)]
    registered_country: Option<Country<'a>>,
}

#[derive(Deserialize)]
struct Country<'a> {
    #[serde(borrow, default)]
    iso_code: Option<&'a str>,
}

impl GeoIp {
    /// No database: every lookup finds nothing.
    pub fn none() -> GeoIp {
        GeoIp::default()
    }

    /// The database at `path` (an empty path: none). A file that cannot be read or is not
    /// a MaxMind database is an error naming the path.
    pub fn open(path: &Path) -> Result<GeoIp, String> {
        if path.as_os_str().is_empty() {
            return Ok(GeoIp::none());
        }
        let reader = maxminddb::Reader::open_readfile(path).map_err(|e| {
            format!(
                "checkout.geoip_database: cannot open {} as a MaxMind database: {e}",
                path.display()
            )
        })?;
        Ok(GeoIp {
            reader: Some(Arc::new(reader)),
        })
    }

    /// The database in `bytes` (tests).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<GeoIp, String> {
        let reader = maxminddb::Reader::from_source(bytes)
            .map_err(|e| format!("not a MaxMind database: {e}"))?;
        Ok(GeoIp {
            reader: Some(Arc::new(reader)),
        })
    }

    /// Whether a database is configured.
    pub fn is_configured(&self) -> bool {
        self.reader.is_some()
    }

    /// The ISO 3166-1 alpha-2 country (uppercase) of `ip`: the country the database
    /// places it in, else where its block is registered; `None` without a database, for
    /// an address it does not know, or a record it cannot read (logged).
    pub fn country(&self, ip: IpAddr) -> Option<String> {
        let reader = self.reader.as_ref()?;
        let found = match reader.lookup(ip) {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(%ip, error = %e, "GeoIP lookup failed");
                return None;
            }
        };
        let record: Record<'_> = match found.decode() {
            Ok(Some(r)) => r,
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!(%ip, error = %e, "GeoIP record unreadable");
                return None;
            }
        };
        [record.country, record.registered_country]
            .into_iter()
            .flatten()
            .filter_map(|c| c.iso_code)
            .map(|c| c.trim().to_ascii_uppercase())
            .find(|c| c.len() == 2 && c.bytes().all(|b| b.is_ascii_alphabetic()))
    }

    /// The country of an address as text (`customer_ip_address`); `None` for anything that
    /// is not an IP address.
    pub fn country_of(&self, ip: &str) -> Option<String> {
        ip.trim()
            .parse::<IpAddr>()
            .ok()
            .and_then(|ip| self.country(ip))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mmdb_writer::{Value, Writer};

    fn database() -> Vec<u8> {
        let mut w = Writer::new("Test-Country");
        let country = |iso: &str| {
            Value::map([(
                "country",
                Value::map([("iso_code", Value::String(iso.into()))]),
            )])
        };
        w.insert_value("81.0.0.0/8".parse::<ipnet::IpNet>().unwrap(), country("FR"))
            .unwrap();
        w.insert_value(
            "126.0.0.0/8".parse::<ipnet::IpNet>().unwrap(),
            country("jp"),
        )
        .unwrap();
        w.insert_value(
            "5.0.0.0/8".parse::<ipnet::IpNet>().unwrap(),
            Value::map([(
                "registered_country",
                Value::map([("iso_code", Value::String("DE".into()))]),
            )]),
        )
        .unwrap();
        w.to_bytes().unwrap()
    }

    #[test]
    fn countries_of_addresses() {
        let g = GeoIp::from_bytes(database()).unwrap();
        assert!(g.is_configured());
        assert_eq!(g.country_of("81.2.3.4").as_deref(), Some("FR"));
        assert_eq!(g.country_of(" 126.1.1.1 ").as_deref(), Some("JP"));
        assert_eq!(g.country_of("5.6.7.8").as_deref(), Some("DE"));
        assert_eq!(g.country_of("8.8.8.8"), None);
        assert_eq!(g.country_of("not an ip"), None);
    }

    #[test]
    fn no_database_no_country() {
        let g = GeoIp::none();
        assert!(!g.is_configured());
        assert_eq!(g.country_of("81.2.3.4"), None);
        assert!(GeoIp::open(Path::new("")).unwrap().reader.is_none());
    }

    #[test]
    fn a_bad_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.mmdb");
        std::fs::write(&path, b"not a database").unwrap();
        let e = GeoIp::open(&path).unwrap_err();
        assert!(e.contains("bad.mmdb"), "{e}");
        let e = GeoIp::open(&dir.path().join("missing.mmdb")).unwrap_err();
        assert!(e.contains("missing.mmdb"), "{e}");
    }
}
