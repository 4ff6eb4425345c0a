//! The client's address, as rate limits see it.
//!
//! The TCP peer, unless the peer is one of `server.trusted_proxies` (addresses or CIDR
//! ranges): then the right-most address of `X-Forwarded-For` that is not a trusted proxy
//! (each proxy appends the address it received the request from, so everything left of the
//! first untrusted hop may be forged by the client). With no trusted proxies (the default)
//! `X-Forwarded-For` is never read.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use actix_web::HttpRequest;
use ipnet::IpNet;

/// The parsed `server.trusted_proxies`.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Parses each entry (`10.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`); an entry that is
    /// neither is named in the error.
    pub fn parse(entries: &[String]) -> Result<Self, String> {
        entries
            .iter()
            .map(|e| {
                let e = e.trim();
                e.parse::<IpNet>()
                    .or_else(|_| e.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        format!(
                            "server.trusted_proxies: {e:?} is neither an IP address nor a CIDR range"
                        )
                    })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(TrustedProxies)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client of a request that arrived from `peer` with these `X-Forwarded-For` values.
    pub fn client<'a>(&self, peer: IpAddr, forwarded_for: impl Iterator<Item = &'a str>) -> IpAddr {
        let peer = canonical(peer);
        if !self.contains(peer) {
            return peer;
        }
        // Every hop, left to right, across repeated headers; walked from the right.
        let hops: Vec<&str> = forwarded_for
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        let mut client = peer;
        for hop in hops.iter().rev() {
            let Some(ip) = parse_hop(hop) else {
                // Garbage left of a trusted hop: the last trusted address is all we know.
                break;
            };
            client = ip;
            if !self.contains(ip) {
                break;
            }
        }
        client
    }
}

/// `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1`, `[2001:db8::1]:443`.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    hop.parse::<IpAddr>()
        .ok()
        .or_else(|| hop.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .map(canonical)
}

/// IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`) are their IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

/// The client address of `req` (see the module documentation).
pub fn client_ip(trusted: &TrustedProxies, req: &HttpRequest) -> IpAddr {
    let peer = req
        .peer_addr()
        .map(|a| a.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    if trusted.is_empty() {
        return canonical(peer);
    }
    trusted.client(
        peer,
        req.headers()
            .get_all("x-forwarded-for")
            .filter_map(|v| v.to_str().ok()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn entries_are_parsed_and_a_bad_one_is_named() {
        let t = TrustedProxies::parse(&["10.0.0.0/8".into(), "::1".into(), "192.168.1.7".into()])
            .unwrap();
        assert!(t.contains(ip("10.1.2.3")) && t.contains(ip("::1")));
        assert!(t.contains(ip("192.168.1.7")) && !t.contains(ip("192.168.1.8")));
        assert!(
            t.contains(ip("::ffff:10.0.0.1")),
            "IPv4-mapped addresses match"
        );
        let err = TrustedProxies::parse(&["10.0.0.0/8".into(), "proxy.local".into()]).unwrap_err();
        assert!(err.contains("\"proxy.local\""), "{err}");
        assert!(TrustedProxies::parse(&["10.0.0.0/33".into()]).is_err());
    }

    #[test]
    fn forwarded_for_is_ignored_unless_the_peer_is_trusted() {
        let none = TrustedProxies::default();
        assert_eq!(
            none.client(ip("1.1.1.1"), ["9.9.9.9"].into_iter()),
            ip("1.1.1.1")
        );
        let t = TrustedProxies::parse(&["10.0.0.0/8".into()]).unwrap();
        assert_eq!(
            t.client(ip("1.1.1.1"), ["9.9.9.9"].into_iter()),
            ip("1.1.1.1")
        );
    }

    #[test]
    fn the_right_most_untrusted_hop_is_the_client() {
        let t = TrustedProxies::parse(&["10.0.0.0/8".into()]).unwrap();
        let peer = ip("10.0.0.1");
        // A forged left part is skipped: 7.7.7.7 is what the first proxy saw.
        assert_eq!(
            t.client(peer, ["6.6.6.6, 7.7.7.7", "10.0.0.2"].into_iter()),
            ip("7.7.7.7")
        );
        assert_eq!(
            t.client(peer, ["[2001:db8::1]:443"].into_iter()),
            ip("2001:db8::1")
        );
        assert_eq!(t.client(peer, ["8.8.8.8:1234"].into_iter()), ip("8.8.8.8"));
        // No header, or only trusted hops: the left-most trusted address.
        assert_eq!(t.client(peer, std::iter::empty()), peer);
        assert_eq!(t.client(peer, ["10.0.0.9"].into_iter()), ip("10.0.0.9"));
        // Garbage: the last trusted hop.
        assert_eq!(
            t.client(peer, ["garbage, 10.0.0.3"].into_iter()),
            ip("10.0.0.3")
        );
    }
}
