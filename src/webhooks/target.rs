//! What a webhook URL may point at: `https://` anywhere public, `http://` only on
//! localhost; never a loopback, private, link-local or otherwise non-public address
//! (server-side request forgery) unless `webhooks.allow_private_targets`, and never
//! Tollgate itself. The URL is checked when it is saved; every delivery checks again on
//! the addresses its name resolves to at that moment (the connection uses exactly those,
//! so a name cannot be re-pointed between check and use).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;

use url::Url;

/// Polar's limit on endpoint URLs.
pub const MAX_URL_LEN: usize = 2083;

/// The rules, from the settings and the address Tollgate serves on.
#[derive(Debug, Clone)]
pub struct TargetPolicy {
    pub allow_private: bool,
    /// Origins that are Tollgate itself: (lower-case host, port).
    pub own: Vec<(String, u16)>,
}

impl TargetPolicy {
    pub fn new(allow_private: bool, public_url: &str, bound: Option<SocketAddr>) -> Self {
        let mut own = Vec::new();
        if let Ok(u) = Url::parse(public_url) {
            if let (Some(host), Some(port)) = (u.host_str(), u.port_or_known_default()) {
                own.push((host.to_ascii_lowercase(), port));
            }
        }
        if let Some(addr) = bound {
            for host in ["localhost", "127.0.0.1", "[::1]", "0.0.0.0"] {
                own.push((host.to_string(), addr.port()));
            }
            own.push((addr.ip().to_string(), addr.port()));
        }
        Self { allow_private, own }
    }

    /// Checks a URL a seller submits; the error says why in a sentence.
    pub fn check(&self, raw: &str) -> Result<Url, String> {
        let raw = raw.trim();
        if raw.len() > MAX_URL_LEN {
            return Err(format!("URL should have at most {MAX_URL_LEN} characters"));
        }
        let url = Url::parse(raw).map_err(|e| format!("Input should be a valid URL, {e}"))?;
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or("URL host required")?
            .to_ascii_lowercase();
        if !url.username().is_empty() || url.password().is_some() {
            return Err("URL must not contain credentials".into());
        }
        let local = is_local_name(&host);
        match url.scheme() {
            "https" => {}
            "http" if local => {}
            "http" => return Err("URL scheme should be 'https' ('http' only on localhost)".into()),
            _ => return Err("URL scheme should be 'https'".into()),
        }
        let port = url.port_or_known_default().unwrap_or(443);
        if self.own.iter().any(|(h, p)| *h == host && *p == port) {
            return Err("Webhook URLs cannot point to Tollgate itself.".into());
        }
        if !self.allow_private {
            if local {
                return Err("Webhook URLs cannot point to localhost.".into());
            }
            if let Some(ip) = literal_ip(&url) {
                if !is_public(ip) {
                    return Err(
                        "Webhook URLs cannot point to a private, loopback or link-local address."
                            .into(),
                    );
                }
            }
        }
        Ok(url)
    }

    /// The resolver deliveries connect through: it drops every address the policy refuses
    /// (and fails when none is left).
    pub fn resolver(&self) -> Arc<GuardedResolver> {
        Arc::new(GuardedResolver {
            allow_private: self.allow_private,
        })
    }
}

fn is_local_name(host: &str) -> bool {
    let host = host.trim_end_matches('.');
    host == "localhost"
        || host.ends_with(".localhost")
        || host == "127.0.0.1"
        || host == "[::1]"
        || host == "0.0.0.0"
}

fn literal_ip(url: &Url) -> Option<IpAddr> {
    match url.host()? {
        url::Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
        url::Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
        url::Host::Domain(_) => None,
    }
}

/// Whether an address is on the public internet (not loopback, private, link-local,
/// shared, documentation, benchmarking, multicast, reserved or unspecified).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // unique local
        || (s[0] & 0xffc0) == 0xfe80 // link-local
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || (s[0] == 0x0064 && s[1] == 0xff9b && !is_public_v4(Ipv4Addr::new(
            (s[6] >> 8) as u8,
            s[6] as u8,
            (s[7] >> 8) as u8,
            s[7] as u8,
        )))) // NAT64 of a non-public v4
}

/// A DNS resolver for deliveries that only ever yields addresses the policy allows.
#[derive(Debug)]
pub struct GuardedResolver {
    allow_private: bool,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let lookup = host.clone();
            let addrs: Vec<SocketAddr> =
                tokio::task::spawn_blocking(move || (lookup.as_str(), 0).to_socket_addrs())
                    .await
                    .map_err(|e| -> Box<dyn std::error::Error + Send + Sync> { Box::new(e) })??
                    .collect();
            let allowed: Vec<SocketAddr> = addrs
                .into_iter()
                .filter(|a| allow_private || is_public(a.ip()))
                .collect();
            if allowed.is_empty() {
                let e: Box<dyn std::error::Error + Send + Sync> = format!(
                    "{host} resolves to no public address (private targets are not allowed)"
                )
                .into();
                return Err(e);
            }
            let addrs: reqwest::dns::Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

/// Checks a literal-address URL at delivery time (the resolver sees only names).
pub fn literal_allowed(url: &Url, allow_private: bool) -> bool {
    allow_private || literal_ip(url).is_none_or(is_public)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict() -> TargetPolicy {
        TargetPolicy::new(false, "https://pay.example.com", None)
    }

    #[test]
    fn https_to_a_public_name_is_fine() {
        assert!(strict().check("https://hooks.example.org/in?x=1").is_ok());
        assert!(strict().check("  https://93.184.216.34/hook ").is_ok());
    }

    #[test]
    fn refused_urls_say_why() {
        let p = strict();
        for bad in [
            "http://hooks.example.org/in",
            "ftp://hooks.example.org/",
            "not a url",
            "https://",
            "https://user:pw@hooks.example.org/",
            "https://127.0.0.1/hook",
            "https://10.1.2.3/hook",
            "https://192.168.0.1/",
            "https://172.16.5.4/",
            "https://169.254.169.254/latest/meta-data",
            "https://100.64.0.1/",
            "https://0.0.0.0/",
            "https://[::1]/",
            "https://[fe80::1]/",
            "https://[fd00::1]/",
            "https://[::ffff:127.0.0.1]/",
            "http://localhost:9000/hook",
            "https://pay.example.com/v1/anything",
        ] {
            assert!(p.check(bad).is_err(), "{bad} should be refused");
        }
        assert!(p
            .check(&format!("https://e.com/{}", "a".repeat(2100)))
            .is_err());
    }

    #[test]
    fn private_targets_when_allowed_but_never_tollgate_itself() {
        let bound: SocketAddr = "127.0.0.1:8000".parse().unwrap();
        let p = TargetPolicy::new(true, "http://127.0.0.1:8000", Some(bound));
        assert!(p.check("http://localhost:9000/hook").is_ok());
        assert!(p.check("http://127.0.0.1:9000/hook").is_ok());
        assert!(p.check("https://10.0.0.5/hook").is_ok());
        assert!(p.check("http://127.0.0.1:8000/v1/x").is_err());
        assert!(p.check("http://localhost:8000/").is_err());
        // Still only https to anything but localhost.
        assert!(p.check("http://10.0.0.5/hook").is_err());
    }

    /// At delivery time the resolver drops what the policy refuses: a public-looking name
    /// that resolves to loopback (here `localhost`, from /etc/hosts) yields no address.
    #[actix_web::test]
    async fn the_delivery_resolver_refuses_names_that_resolve_to_private_addresses() {
        use reqwest::dns::Resolve;
        use std::str::FromStr;

        let name = || reqwest::dns::Name::from_str("localhost").unwrap();
        let strict = TargetPolicy::new(false, "https://pay.example.com", None).resolver();
        let err = match strict.resolve(name()).await {
            Ok(_) => panic!("localhost must not resolve for a strict policy"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("no public address"), "{err}");
        let lax = TargetPolicy::new(true, "https://pay.example.com", None).resolver();
        let addrs: Vec<SocketAddr> = lax.resolve(name()).await.unwrap().collect();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()) && !addrs.is_empty());
    }

    #[test]
    fn public_addresses() {
        for ok in ["8.8.8.8", "1.1.1.1", "2606:4700::1111"] {
            assert!(is_public(ok.parse().unwrap()), "{ok}");
        }
        for no in [
            "127.0.0.1",
            "10.0.0.1",
            "192.168.1.1",
            "169.254.0.1",
            "::1",
            "fe80::1",
            "fc00::1",
            "::ffff:10.0.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "198.18.0.1",
            "64:ff9b::a00:1",
        ] {
            assert!(!is_public(no.parse().unwrap()), "{no}");
        }
    }
}
