//! The hosts an organization lets embed its checkout links (Polar's `embed_hosts`, its
//! `organization/embed_hosts.py` rules): parsing an entry, checking it as Polar's
//! `EmbedHostsInput` does, and matching an embedding page's origin against the list.
//!
//! An entry is a web host with an optional port and no scheme (`shop.example`,
//! `*.example.com`, `localhost:3000`, `192.168.1.43:5500`): HTTPS always, HTTP too for a
//! local host (`localhost`, `*.localhost`, `*.local`, loopback and private addresses).
//! `*.example.com` admits the subdomains only. An app origin has no host to match on and
//! is written whole (`chrome-extension://abcdef`). The port must match exactly (the
//! scheme's default when the entry names none). Pure: no I/O, no clock.

use std::fmt;
use std::net::IpAddr;

const WILDCARD: &str = "*.";
/// Stands in for the wildcard so that an entry goes through the URL parser whole.
const WILDCARD_LABEL: &str = "wildcard";
const MAX_HOST_LEN: usize = 253;

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

fn is_web(scheme: &str) -> bool {
    default_port(scheme).is_some()
}

/// The origin of an embedding page: scheme, host, and port (the scheme's default when
/// the URL names none). Written as `postMessage` and CSP read it, without the default port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.port {
            Some(p) if Some(p) != default_port(&self.scheme) => {
                write!(f, "{}://{}:{p}", self.scheme, self.host)
            }
            _ => write!(f, "{}://{}", self.scheme, self.host),
        }
    }
}

/// The origin of `value`, a URL: its path, query, fragment and credentials dropped (a
/// `postMessage` target compares the origin alone). `None` for what has no host (`null`,
/// `file:///…`, not a URL at all) or a host with a `*`.
pub fn parse_origin(value: &str) -> Option<Origin> {
    let url = url::Url::parse(value.trim()).ok()?;
    let host = url.host_str()?;
    if host.is_empty() || host.contains('*') {
        return None;
    }
    Some(Origin {
        scheme: url.scheme().to_string(),
        host: host.to_string(),
        port: url.port_or_known_default(),
    })
}

/// One entry of `embed_hosts`, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    /// `None` for a web host (HTTPS, and HTTP when local); an app origin's scheme.
    scheme: Option<String>,
    host: String,
    port: Option<u16>,
    wildcard: bool,
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.scheme {
            write!(f, "{s}://")?;
        }
        if self.wildcard {
            f.write_str(WILDCARD)?;
        }
        f.write_str(&self.host)?;
        let default = default_port(self.scheme.as_deref().unwrap_or("https"));
        match self.port {
            Some(p) if Some(p) != default => write!(f, ":{p}"),
            _ => Ok(()),
        }
    }
}

impl HostPattern {
    /// Whether a page at `origin` may embed under this entry.
    pub fn matches(&self, origin: &Origin) -> bool {
        let scheme_ok = match &self.scheme {
            None => match origin.scheme.as_str() {
                "https" => true,
                "http" => is_local_host(&origin.host),
                _ => false,
            },
            Some(s) => *s == origin.scheme,
        };
        if !scheme_ok {
            return false;
        }
        let expected = self.port.or_else(|| default_port(&origin.scheme));
        if origin.port != expected {
            return false;
        }
        if self.wildcard {
            origin
                .host
                .strip_suffix(&self.host)
                .is_some_and(|rest| rest.len() > 1 && rest.ends_with('.'))
        } else {
            origin.host == self.host
        }
    }
}

fn ip_address(host: &str) -> Option<IpAddr> {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// Not reachable from the internet: a web page there is the developer's own machine or
/// network, so plain HTTP is allowed for it.
fn is_local_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation()
                || a == 0
                // 100.64.0.0/10 (shared), 192.0.0.0/24, 198.18.0.0/15, 240.0.0.0/4
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && c == 0)
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_local_ip(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (first == 0x2001 && v6.segments()[1] == 0x0db8) // documentation
        }
    }
}

/// `localhost`, a `.localhost` or `.local` name, or an address that is not global.
pub fn is_local_host(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host.ends_with(".local")
        || ip_address(host).is_some_and(is_local_ip)
}

fn is_host_part(host: &str) -> bool {
    if ip_address(host).is_some() {
        return true;
    }
    host.strip_suffix('.')
        .unwrap_or(host)
        .split('.')
        .all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// The port written at the end of `written` (`host:8080`), `Ok(None)` without one;
/// `Err` for a colon that is not a port's (`data:`, `a:b:c`, a port over 65535).
fn written_port(written: &str) -> Result<Option<u16>, ()> {
    // An IPv6 address keeps its colons inside its brackets.
    let tail = match written.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map_or("", |(_, after)| after),
        None => written,
    };
    let Some((before, digits)) = tail.rsplit_once(':') else {
        return Ok(None);
    };
    if before.contains(':') || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(());
    }
    digits.parse().map(Some).map_err(|_| ())
}

/// An entry of `embed_hosts` as written (surrounding blanks ignored), or `None` when it is
/// not a host with an optional port, nor an app origin. Hosts are normalized as the URL
/// parser does for origins (lower case, punycode), so both compare alike.
pub fn parse_host_pattern(value: &str) -> Option<HostPattern> {
    let entry = value.trim();
    let (scheme, rest) = match entry.split_once("://") {
        Some((s, rest)) => {
            let s = s.to_ascii_lowercase();
            if is_web(&s) {
                return None;
            }
            (Some(s), rest)
        }
        None => (None, entry),
    };
    let (wildcard, host) = match rest.strip_prefix(WILDCARD) {
        Some(h) => (true, h),
        None => (false, rest),
    };
    if host.is_empty() || host.contains('*') {
        return None;
    }
    let port = written_port(host).ok()?;
    let probe_scheme = scheme.as_deref().unwrap_or("https");
    let probe_host = if wildcard {
        format!("{WILDCARD_LABEL}.{host}")
    } else {
        host.to_string()
    };
    let url = url::Url::parse(&format!("{probe_scheme}://{probe_host}")).ok()?;
    // A host alone: what a URL may carry besides (a path, a query, credentials) is a slip.
    if !matches!(url.path(), "" | "/")
        || url.query().is_some()
        || url.fragment().is_some()
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return None;
    }
    let parsed = url.host_str()?;
    let parsed = if wildcard {
        parsed.strip_prefix(&format!("{WILDCARD_LABEL}."))?
    } else {
        parsed
    };
    if parsed.is_empty() || parsed.len() > MAX_HOST_LEN || !is_host_part(parsed) {
        return None;
    }
    Some(HostPattern {
        scheme,
        host: parsed.to_string(),
        port,
        wildcard,
    })
}

/// Whether `host` is itself a suffix under which the public registers names (`com`,
/// `co.uk`), by the ICANN part of the Public Suffix List (not the private part: `*.vercel.app`
/// is the seller's own risk, as in Polar).
fn is_public_suffix(host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host);
    use psl::Psl;
    psl::List.suffix(host.as_bytes()).is_some_and(|s| {
        s.is_known() && s.typ() == Some(psl::Type::Icann) && s.as_bytes() == host.as_bytes()
    })
}

/// Why an entry is refused (Polar's `InvalidEmbedHost`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidEmbedHost {
    value: String,
    reason: String,
}

impl fmt::Display for InvalidEmbedHost {
    /// Polar's message: the entry as Python's `repr` writes it, then the reason.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is not a valid embed host: {}",
            py_repr(&self.value),
            self.reason
        )
    }
}

/// A string as Python's `repr` writes it (the value in Polar's messages).
fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// An entry checked as Polar's `validate_host_pattern` checks it: its normalized form
/// (`Shop.Example:443` → `shop.example`), or why it is refused.
pub fn validate_host_pattern(value: &str) -> Result<String, InvalidEmbedHost> {
    let refuse = |reason: String| InvalidEmbedHost {
        value: value.to_string(),
        reason,
    };
    let entry = value.trim();
    if entry.is_empty() {
        return Err(refuse("it is empty".into()));
    }
    if matches!(
        entry.strip_prefix(WILDCARD).unwrap_or(entry).trim(),
        "" | "*"
    ) {
        return Err(refuse("a bare wildcard would let any page embed".into()));
    }
    let scheme = entry.split_once("://").map_or(entry, |(s, _)| s);
    if is_web(&scheme.to_ascii_lowercase()) {
        return Err(refuse(
            "write the host on its own. HTTPS is always allowed, and HTTP as well for \
             localhost and private addresses"
                .into(),
        ));
    }
    let Some(pattern) = parse_host_pattern(value) else {
        return Err(refuse(
            "write a host and an optional port, with no path. A host is made of letters, \
             digits and hyphens"
                .into(),
        ));
    };
    if pattern.wildcard && is_public_suffix(&pattern.host) {
        let host = &pattern.host;
        return Err(refuse(format!(
            "{host} is a domain suffix, so this would admit every site registered under it. \
             Name your own site, like myshop.{host}"
        )));
    }
    Ok(pattern.to_string())
}

/// Every entry checked and normalized, duplicates dropped (the first kept), or the first
/// refusal (Polar's `validate_embed_hosts`).
pub fn validate_embed_hosts<S: AsRef<str>>(values: &[S]) -> Result<Vec<String>, InvalidEmbedHost> {
    let mut hosts: Vec<String> = Vec::new();
    for value in values {
        let host = validate_host_pattern(value.as_ref())?;
        if !hosts.contains(&host) {
            hosts.push(host);
        }
    }
    Ok(hosts)
}

/// The normalized origin of `origin` when an entry of `hosts` admits it (Polar's
/// `match_origin`); `None` otherwise.
pub fn match_origin<S: AsRef<str>>(origin: &Origin, hosts: &[S]) -> Option<String> {
    hosts
        .iter()
        .filter_map(|h| parse_host_pattern(h.as_ref()))
        .any(|p| p.matches(origin))
        .then(|| origin.to_string())
}

#[cfg(test)]
#[path = "embed_hosts_tests.rs"]
mod tests;
