//! What a webhook URL may point at: `https://` anywhere public, `http://` only on
//! localhost; never an address outside the public internet (server-side request forgery)
//! unless `webhooks.allow_private_targets`, and never Tollgate itself.
//!
//! - **Public** means: not in any range of IANA's IPv4 and IPv6 special-purpose address
//!   registries (loopback, private, shared, link-local, documentation, benchmarking,
//!   protocol assignments, AS112, AMT, 6to4, Teredo, ORCHID, discard-only, site-local,
//!   unique-local, multicast, reserved), and for IPv6 inside global unicast `2000::/3`. An
//!   IPv4 address embedded in IPv6 (v4-mapped, NAT64 `64:ff9b::/96`) is judged as that IPv4
//!   address; the deprecated embeddings (v4-compatible `::a.b.c.d`, 6to4 `2002::/16`,
//!   Teredo `2001::/32`, local-use NAT64 `64:ff9b:1::/48`) are refused outright.
//! - **Tollgate itself** is refused by address and port, not by name: an address of this
//!   machine (loopback, unspecified, or one a socket can bind) on a port Tollgate serves
//!   (the bound one, the public URL's). The public URL's host name is refused too.
//! - The URL is checked when it is saved; every delivery checks again on the addresses its
//!   name resolves to at that moment, and the connection uses exactly those, so a name
//!   cannot be re-pointed between check and use.
//! - Deliveries never use a proxy from the environment (`HTTPS_PROXY` would resolve the
//!   name itself and bypass the address check). With `webhooks.proxy` set, the proxy
//!   connects: Tollgate still refuses literal addresses and names that resolve to refused
//!   addresses just before sending, but the proxy's own resolution is what counts, so the
//!   proxy must refuse non-public destinations itself (`docs/operating.md`, "Webhook egress").

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;

use url::Url;

/// Polar's limit on endpoint URLs.
pub const MAX_URL_LEN: usize = 2083;

/// The rules, from the settings and the address Tollgate serves on.
#[derive(Debug, Clone)]
pub struct TargetPolicy {
    pub allow_private: bool,
    /// Host names that are Tollgate itself: (lower-case host, port).
    own_names: Vec<(String, u16)>,
    /// The ports Tollgate serves on: any address of this machine on one of them is
    /// Tollgate itself.
    own_ports: Vec<u16>,
}

/// Why an address is refused, as a delivery log or a 422 says it.
const PRIVATE: &str =
    "Webhook URLs cannot point to a private, loopback, link-local or other non-public address.";
const ITSELF: &str = "Webhook URLs cannot point to Tollgate itself.";

impl TargetPolicy {
    pub fn new(allow_private: bool, public_url: &str, bound: Option<SocketAddr>) -> Self {
        let mut own_names = Vec::new();
        let mut own_ports = Vec::new();
        if let Ok(u) = Url::parse(public_url) {
            if let (Some(host), Some(port)) = (u.host_str(), u.port_or_known_default()) {
                own_names.push((host.to_ascii_lowercase(), port));
                own_ports.push(port);
            }
        }
        if let Some(addr) = bound {
            for host in ["localhost", "127.0.0.1", "[::1]", "0.0.0.0"] {
                own_names.push((host.to_string(), addr.port()));
            }
            own_names.push((addr.ip().to_string(), addr.port()));
            own_ports.push(addr.port());
        }
        own_ports.sort_unstable();
        own_ports.dedup();
        Self {
            allow_private,
            own_names,
            own_ports,
        }
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
        if self.own_names.iter().any(|(h, p)| *h == host && *p == port) {
            return Err(ITSELF.into());
        }
        if local && !self.allow_private {
            return Err("Webhook URLs cannot point to localhost.".into());
        }
        if let Some(ip) = literal_ip(&url) {
            self.address_allowed(SocketAddr::new(ip, port))
                .map_err(str::to_string)?;
        }
        Ok(url)
    }

    /// Whether a delivery may connect to `addr`: never Tollgate itself, and only a public
    /// address unless private targets are allowed.
    pub fn address_allowed(&self, addr: SocketAddr) -> Result<(), &'static str> {
        if self.own_ports.contains(&addr.port()) && is_this_machine(addr.ip()) {
            return Err(ITSELF);
        }
        if !self.allow_private && !is_public(addr.ip()) {
            return Err(PRIVATE);
        }
        Ok(())
    }

    /// The resolver deliveries to `port` connect through: it drops every address the
    /// policy refuses (and fails when none is left).
    pub fn resolver(&self, port: u16) -> Arc<GuardedResolver> {
        Arc::new(GuardedResolver {
            policy: self.clone(),
            port,
        })
    }

    /// The addresses `host` resolves to now, on `port`, each checked; `Ok(None)` when the
    /// name does not resolve here. For deliveries through a proxy, which resolves the name
    /// itself: a name that resolves here to a refused address is refused all the same.
    pub async fn precheck_name(&self, host: &str, port: u16) -> Result<(), String> {
        let lookup = host.to_string();
        let resolved = tokio::task::spawn_blocking(move || {
            (lookup.as_str(), port)
                .to_socket_addrs()
                .map(|a| a.collect::<Vec<_>>())
        })
        .await
        .map_err(|e| e.to_string())?;
        match resolved {
            Ok(addrs) => addrs
                .into_iter()
                .try_for_each(|a| self.address_allowed(a))
                .map_err(str::to_string),
            // Not resolvable here: the proxy's resolver decides (and must refuse).
            Err(_) => Ok(()),
        }
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

pub fn literal_ip(url: &Url) -> Option<IpAddr> {
    match url.host()? {
        url::Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
        url::Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
        url::Host::Domain(_) => None,
    }
}

/// Whether `ip` is an address of this machine: unspecified (connecting to it reaches this
/// host), loopback, or an address a socket can bind here (every local interface's).
pub fn is_this_machine(ip: IpAddr) -> bool {
    let ip = match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped().or_else(|| v4_compatible(v6)) {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    };
    ip.is_unspecified()
        || ip.is_loopback()
        || std::net::UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok()
}

/// The IPv4 address of a v4-compatible IPv6 address (`::a.b.c.d`, deprecated by RFC 4291).
fn v4_compatible(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    (s[..6].iter().all(|x| *x == 0) && (s[6] != 0 || s[7] > 1)).then(|| embedded_v4(s[6], s[7]))
}

fn embedded_v4(hi: u16, lo: u16) -> Ipv4Addr {
    let [a, b] = hi.to_be_bytes();
    let [c, d] = lo.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

/// Whether an address is on the public internet: outside every special-purpose range (see
/// the module doc).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

/// IANA IPv4 Special-Purpose Address Registry (RFC 6890 and later), plus multicast
/// (224.0.0.0/4) and the limited broadcast, as (network, prefix length).
const SPECIAL_V4: &[(u32, u32)] = &[
    (0x0000_0000, 8),  // 0.0.0.0/8 "this network"
    (0x0A00_0000, 8),  // 10.0.0.0/8 private
    (0x6440_0000, 10), // 100.64.0.0/10 shared (CGNAT)
    (0x7F00_0000, 8),  // 127.0.0.0/8 loopback
    (0xA9FE_0000, 16), // 169.254.0.0/16 link-local
    (0xAC10_0000, 12), // 172.16.0.0/12 private
    (0xC000_0000, 24), // 192.0.0.0/24 IETF protocol assignments
    (0xC000_0200, 24), // 192.0.2.0/24 documentation (TEST-NET-1)
    (0xC01F_C400, 24), // 192.31.196.0/24 AS112-v4
    (0xC034_C100, 24), // 192.52.193.0/24 AMT
    (0xC058_6300, 24), // 192.88.99.0/24 deprecated 6to4 relay anycast
    (0xC0A8_0000, 16), // 192.168.0.0/16 private
    (0xC0AF_3000, 24), // 192.175.48.0/24 direct delegation AS112
    (0xC612_0000, 15), // 198.18.0.0/15 benchmarking
    (0xC633_6400, 24), // 198.51.100.0/24 documentation (TEST-NET-2)
    (0xCB00_7100, 24), // 203.0.113.0/24 documentation (TEST-NET-3)
    (0xE000_0000, 4),  // 224.0.0.0/4 multicast
    (0xF000_0000, 4),  // 240.0.0.0/4 reserved, 255.255.255.255 broadcast
];

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let bits = u32::from(ip);
    !SPECIAL_V4
        .iter()
        .any(|(net, len)| bits >> (32 - len) == net >> (32 - len))
}

/// IANA IPv6 Special-Purpose Address Registry ranges inside global unicast `2000::/3`
/// (everything outside it is refused anyway: loopback, unspecified, v4-compatible and
/// v4-translated forms, discard-only `100::/64`, `5f00::/16`, unique-local, site-local,
/// link-local, multicast and the reserved rest), as (network, prefix length).
const SPECIAL_V6_GLOBAL: &[(u128, u32)] = &[
    (0x2001_0000 << 96, 23), // 2001::/23 IETF protocol assignments (Teredo, ORCHID, benchmarking, AMT, AS112...)
    (0x2001_0db8 << 96, 32), // 2001:db8::/32 documentation
    (0x2002 << 112, 16),     // 2002::/16 6to4
    ((0x2620_004f_u128 << 96) | (0x8000 << 80), 48), // 2620:4f:8000::/48 direct delegation AS112
    (0x3fff << 112, 20),     // 3fff::/20 documentation
];

fn in_v6(bits: u128, (net, len): (u128, u32)) -> bool {
    bits >> (128 - len) == net >> (128 - len)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    // Embeddings of an IPv4 address that reach it: judged as that address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    let bits = u128::from(ip);
    // NAT64 well-known prefix 64:ff9b::/96 (the local-use 64:ff9b:1::/48 is refused below).
    if in_v6(bits, (0x0064_ff9b << 96, 96)) {
        return is_public_v4(embedded_v4(s[6], s[7]));
    }
    in_v6(bits, (0x2000 << 112, 3)) && !SPECIAL_V6_GLOBAL.iter().any(|range| in_v6(bits, *range))
}

/// A DNS resolver for deliveries to one port that only ever yields addresses the policy
/// allows on it.
#[derive(Debug)]
pub struct GuardedResolver {
    policy: TargetPolicy,
    port: u16,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        let port = self.port;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let lookup = host.clone();
            let addrs: Vec<SocketAddr> =
                tokio::task::spawn_blocking(move || (lookup.as_str(), port).to_socket_addrs())
                    .await
                    .map_err(|e| -> Box<dyn std::error::Error + Send + Sync> { Box::new(e) })??
                    .collect();
            let mut why = "no address";
            let allowed: Vec<SocketAddr> = addrs
                .into_iter()
                .filter(|a| match policy.address_allowed(*a) {
                    Ok(()) => true,
                    Err(e) => {
                        why = e;
                        false
                    }
                })
                .collect();
            if allowed.is_empty() {
                let e: Box<dyn std::error::Error + Send + Sync> =
                    format!("{host} resolves to no allowed address: {why}").into();
                return Err(e);
            }
            let addrs: reqwest::dns::Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
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
            "https://[::127.0.0.1]/",
            "https://[2002:7f00:1::1]/",
            "https://[fec0::1]/",
            "https://[100::1]/",
            "https://[64:ff9b::10.0.0.1]/",
            "https://[64:ff9b:1::8.8.8.8]/",
            "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
            "https://192.88.99.1/",
            "https://198.51.100.7/",
            "https://[2001:db8::1]/",
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
        // By address and port, not by name: any address of this machine on Tollgate's port.
        assert!(p.check("http://127.0.0.2:8000/").is_err());
        assert!(p.check("https://[::ffff:127.0.0.1]:8000/").is_err());
        assert!(p.check("https://127.0.0.2:8001/").is_ok());
        assert!(p
            .address_allowed("127.0.0.1:8000".parse().unwrap())
            .is_err());
        assert!(p.address_allowed("0.0.0.0:8000".parse().unwrap()).is_err());
        assert!(p.address_allowed("127.0.0.1:8001".parse().unwrap()).is_ok());
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
        let strict = TargetPolicy::new(false, "https://pay.example.com", None).resolver(443);
        let err = match strict.resolve(name()).await {
            Ok(_) => panic!("localhost must not resolve for a strict policy"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("no allowed address"), "{err}");
        let lax = TargetPolicy::new(true, "https://pay.example.com", None).resolver(9000);
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
            // Every special-purpose range of the IANA IPv4 registry...
            "0.1.2.3",
            "100.64.0.1",
            "192.0.0.8",
            "192.0.2.1",
            "192.31.196.1",
            "192.52.193.1",
            "192.88.99.1",
            "192.175.48.1",
            "198.51.100.1",
            "203.0.113.1",
            "240.0.0.1",
            // ...and of the IPv6 one, with every embedding of a private IPv4.
            "::",
            "::127.0.0.1",
            "::8.8.8.8",
            "::ffff:0:8.8.8.8",
            "::ffff:127.0.0.1",
            "2002:7f00:1::1",
            "2002:808:808::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:2::1",
            "2001:20::1",
            "2001:db8::1",
            "2620:4f:8000::1",
            "3fff::1",
            "5f00::1",
            "100::1",
            "100:0:0:1::1",
            "64:ff9b:1::808:808",
            "64:ff9b::7f00:1",
            "fec0::1",
            "fd12:3456::1",
            "ff02::1",
            "4000::1",
        ] {
            assert!(!is_public(no.parse().unwrap()), "{no}");
        }
        // Public IPv4 reached through the embeddings that reach it.
        for ok in [
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2a00:1450::1",
            "2620:4f:7fff::1",
        ] {
            assert!(is_public(ok.parse().unwrap()), "{ok}");
        }
    }
}
