//! Redirect URI rules: absolute `https` URLs without a fragment; plain `http` only when the
//! host is `localhost` (also `*.localhost`, `localhostNN`) or a loopback address.

use url::{Host, Url};

pub fn check_redirect_uri(raw: &str) -> Result<Url, &'static str> {
    let url = Url::parse(raw).map_err(|_| "A valid URL is required.")?;
    if url.fragment().is_some() {
        return Err("A redirect URI must not contain a fragment.");
    }
    match url.scheme() {
        "https" if url.host().is_some() => Ok(url),
        "http" if url.host().is_some_and(|h| is_local(&h)) => Ok(url),
        "http" | "https" => Err("An HTTPS URL is required."),
        _ => Err("An HTTPS URL is required."),
    }
}

fn is_local(host: &Host<&str>) -> bool {
    match host {
        Host::Ipv4(ip) => ip.is_loopback(),
        Host::Ipv6(ip) => ip.is_loopback(),
        Host::Domain(d) => {
            let d = d.to_ascii_lowercase();
            let last = d.rsplit('.').next().unwrap_or("");
            // `localhost`, `localhost8000`, `app.localhost`.
            last.strip_prefix("localhost")
                .is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_digit()))
                && (d == last || d.matches('.').count() == 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_or_local_http_only() {
        for ok in [
            "https://example.com/cb",
            "https://example.com",
            "http://localhost:8000/callback",
            "http://127.0.0.1:8000/callback",
            "http://[::1]/cb",
            "http://app.localhost/cb",
            "http://localhost3000/cb",
        ] {
            assert!(check_redirect_uri(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://example.com",
            "foobar",
            "http://localhost.evil.com/cb",
            "http://10.0.0.1/cb",
            "https://example.com/cb#frag",
            "ftp://example.com/cb",
            "javascript:alert(1)",
        ] {
            assert!(check_redirect_uri(bad).is_err(), "{bad}");
        }
    }
}
