//! Postal addresses: ISO 3166-1 alpha-2 countries, and for the United States and Canada a
//! state written as an ISO 3166-2 subdivision (`US-NY`, `CA-QC`), as Polar stores them.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Address {
    pub line1: Option<String>,
    pub line2: Option<String>,
    pub postal_code: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    /// ISO 3166-1 alpha-2, upper case.
    pub country: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressIssue {
    UnknownCountry,
    InvalidUsState,
    InvalidCaSubdivision,
}

/// Every ISO 3166-1 alpha-2 code (249 entries, the list `pycountry` ships).
pub const COUNTRIES: &[&str] = &[
    "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AX", "AZ",
    "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS",
    "BT", "BV", "BW", "BY", "BZ", "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN",
    "CO", "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE", "DJ", "DK", "DM", "DO", "DZ", "EC", "EE",
    "EG", "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FM", "FO", "FR", "GA", "GB", "GD", "GE", "GF",
    "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GU", "GW", "GY", "HK", "HM",
    "HN", "HR", "HT", "HU", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT", "JE", "JM",
    "JO", "JP", "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ", "LA", "LB", "LC",
    "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD", "ME", "MF", "MG", "MH", "MK",
    "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS", "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA",
    "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP", "NR", "NU", "NZ", "OM", "PA", "PE", "PF", "PG",
    "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT", "PW", "PY", "QA", "RE", "RO", "RS", "RU", "RW",
    "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS",
    "ST", "SV", "SX", "SY", "SZ", "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO",
    "TR", "TT", "TV", "TW", "TZ", "UA", "UG", "UM", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI",
    "VN", "VU", "WF", "WS", "YE", "YT", "ZA", "ZM", "ZW",
];

/// The 50 states and the District of Columbia.
pub const US_STATES: &[&str] = &[
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS",
    "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY",
    "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV",
    "WI", "WY", "DC",
];

/// Canada's provinces and territories.
pub const CA_SUBDIVISIONS: &[&str] = &[
    "AB", "BC", "MB", "NB", "NL", "NS", "NT", "NU", "ON", "PE", "QC", "SK", "YT",
];

/// Whether `code` is an ISO 3166-1 alpha-2 country code (upper case).
pub fn is_country(code: &str) -> bool {
    COUNTRIES.binary_search(&code).is_ok()
}

/// Trimmed, and `None` when blank (Polar's `EmptyStrToNone`).
pub fn non_blank(value: Option<&str>) -> Option<String> {
    value
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl Address {
    /// Builds a checked address: blank lines become `None`, the country is upper-cased and
    /// must exist, and a US or CA state gains its country prefix (`QC` → `CA-QC`) and must
    /// be a real subdivision.
    pub fn new(
        line1: Option<&str>,
        line2: Option<&str>,
        postal_code: Option<&str>,
        city: Option<&str>,
        state: Option<&str>,
        country: &str,
    ) -> Result<Address, AddressIssue> {
        let country = country.trim().to_ascii_uppercase();
        if !is_country(&country) {
            return Err(AddressIssue::UnknownCountry);
        }
        let mut state = non_blank(state);
        if let Some(s) = &state {
            let (list, issue): (&[&str], _) = match country.as_str() {
                "US" => (US_STATES, AddressIssue::InvalidUsState),
                "CA" => (CA_SUBDIVISIONS, AddressIssue::InvalidCaSubdivision),
                _ => (&[], AddressIssue::UnknownCountry),
            };
            if !list.is_empty() {
                let upper = s.to_ascii_uppercase();
                let prefix = format!("{country}-");
                let code = upper.strip_prefix(&prefix).unwrap_or(&upper);
                if !list.contains(&code) {
                    return Err(issue);
                }
                state = Some(format!("{prefix}{code}"));
            }
        }
        Ok(Address {
            line1: non_blank(line1),
            line2: non_blank(line2),
            postal_code: non_blank(postal_code),
            city: non_blank(city),
            state,
            country,
        })
    }

    /// The state without its country prefix (`CA-QC` → `QC`), as tax services want it.
    pub fn unprefixed_state(&self) -> Option<&str> {
        let state = self.state.as_deref()?;
        if self.country == "US" || self.country == "CA" {
            state.split_once('-').map(|(_, s)| s).or(Some(state))
        } else {
            Some(state)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn country_list_is_sorted_and_complete() {
        assert_eq!(COUNTRIES.len(), 249);
        assert!(COUNTRIES.windows(2).all(|w| w[0] < w[1]));
        for c in ["FR", "US", "CA", "GB", "DE", "SE", "AX", "ZW"] {
            assert!(is_country(c), "{c}");
        }
        for c in ["XX", "UK", "EU", "fr", "", "FRA"] {
            assert!(!is_country(c), "{c}");
        }
        assert_eq!(US_STATES.len(), 51);
        assert_eq!(CA_SUBDIVISIONS.len(), 13);
    }

    #[test]
    fn normalizes_lines_and_country() {
        let a = Address::new(
            Some("  1 Main St "),
            Some(""),
            None,
            Some("Paris"),
            None,
            "fr",
        )
        .unwrap_or_default();
        assert_eq!(a.country, "FR");
        assert_eq!(a.line1.as_deref(), Some("1 Main St"));
        assert_eq!(a.line2, None);
        assert_eq!(
            Address::new(None, None, None, None, None, "XX"),
            Err(AddressIssue::UnknownCountry)
        );
    }

    #[test]
    fn us_and_ca_states_are_subdivisions() {
        let qc = Address::new(None, None, None, None, Some("QC"), "CA").unwrap_or_default();
        assert_eq!(qc.state.as_deref(), Some("CA-QC"));
        assert_eq!(qc.unprefixed_state(), Some("QC"));
        let ny = Address::new(None, None, None, None, Some("us-ny"), "US").unwrap_or_default();
        assert_eq!(ny.state.as_deref(), Some("US-NY"));
        assert_eq!(
            Address::new(None, None, None, None, Some("ZZ"), "US"),
            Err(AddressIssue::InvalidUsState)
        );
        assert_eq!(
            Address::new(None, None, None, None, Some("CA-NY"), "CA"),
            Err(AddressIssue::InvalidCaSubdivision)
        );
        // Elsewhere the state is free text.
        let by = Address::new(None, None, None, None, Some("Bayern"), "DE").unwrap_or_default();
        assert_eq!(by.state.as_deref(), Some("Bayern"));
        assert_eq!(by.unprefixed_state(), Some("Bayern"));
    }
}
