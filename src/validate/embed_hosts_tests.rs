use super::*;

fn origin(s: &str) -> Origin {
    parse_origin(s).unwrap_or_else(|| panic!("{s} is an origin"))
}

fn admits(hosts: &[&str], page: &str) -> Option<String> {
    match_origin(&origin(page), hosts)
}

#[test]
fn an_origin_keeps_its_scheme_host_and_port_only() {
    assert_eq!(
        origin("https://Shop.Example/buy?x=1#top").to_string(),
        "https://shop.example"
    );
    assert_eq!(
        origin("https://user:pw@shop.example:443/").to_string(),
        "https://shop.example"
    );
    assert_eq!(
        origin("http://127.0.0.1:8080/page").to_string(),
        "http://127.0.0.1:8080"
    );
    assert_eq!(
        origin("chrome-extension://abcdef/popup.html").to_string(),
        "chrome-extension://abcdef"
    );
    for nothing in [
        "null",
        "",
        "file:///tmp/x.html",
        "not a url",
        "https://*.example.com",
    ] {
        assert_eq!(parse_origin(nothing), None, "{nothing}");
    }
}

#[test]
fn entries_are_normalized() {
    let ok = |v: &str| validate_host_pattern(v).unwrap_or_else(|e| panic!("{v}: {e}"));
    assert_eq!(ok("  Shop.Example  "), "shop.example");
    assert_eq!(ok("shop.example:443"), "shop.example");
    assert_eq!(ok("shop.example:8443"), "shop.example:8443");
    assert_eq!(ok("*.Example.com"), "*.example.com");
    assert_eq!(ok("localhost:3000"), "localhost:3000");
    assert_eq!(ok("192.168.1.43:5500"), "192.168.1.43:5500");
    assert_eq!(ok("[::1]:3000"), "[::1]:3000");
    assert_eq!(ok("bücher.example"), "xn--bcher-kva.example");
    assert_eq!(ok("chrome-extension://abcdef"), "chrome-extension://abcdef");
    assert_eq!(ok("Chrome-Extension://abcdef"), "chrome-extension://abcdef");
    // A private suffix is the seller's to weigh, as in Polar.
    assert_eq!(ok("*.vercel.app"), "*.vercel.app");
    assert_eq!(
        validate_embed_hosts(&["a.example", "A.example:443", "b.example"]),
        Ok(vec!["a.example".to_string(), "b.example".to_string()])
    );
}

#[test]
fn entries_are_refused_with_polar_s_messages() {
    let refused = |v: &str| match validate_host_pattern(v) {
        Ok(h) => panic!("{v:?} accepted as {h}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(refused(""), "'' is not a valid embed host: it is empty");
    assert_eq!(
        refused("   "),
        "'   ' is not a valid embed host: it is empty"
    );
    for bare in ["*", "*.", "*.*", " * "] {
        assert_eq!(
            refused(bare),
            format!(
                "{} is not a valid embed host: a bare wildcard would let any page embed",
                py_repr(bare)
            )
        );
    }
    let scheme = "is not a valid embed host: write the host on its own. HTTPS is always \
                  allowed, and HTTP as well for localhost and private addresses";
    assert_eq!(
        refused("https://shop.example"),
        format!("'https://shop.example' {scheme}")
    );
    assert_eq!(
        refused("HTTP://localhost:3000"),
        format!("'HTTP://localhost:3000' {scheme}")
    );
    let shape = "is not a valid embed host: write a host and an optional port, with no path. \
                 A host is made of letters, digits and hyphens";
    for bad in [
        "shop.example/buy",
        "shop.example?x=1",
        "shop.example#x",
        "user@shop.example",
        "shop_example.com",
        "data:",
        "a:b:c",
        "shop.example:99999",
        "shop.example:",
        "*example.com",
        "**.example.com",
        "shop.*.example",
        "chrome-extension://",
    ] {
        assert_eq!(refused(bad), format!("{} {shape}", py_repr(bad)), "{bad}");
    }
    assert_eq!(
        refused("*.co.uk"),
        "'*.co.uk' is not a valid embed host: co.uk is a domain suffix, so this would admit \
         every site registered under it. Name your own site, like myshop.co.uk"
    );
    assert!(refused("*.com").contains("com is a domain suffix"));
    assert_eq!(
        validate_embed_hosts(&["ok.example", "*", "bad/"])
            .map_err(|e| e.to_string())
            .unwrap_err(),
        "'*' is not a valid embed host: a bare wildcard would let any page embed"
    );
}

#[test]
fn python_s_repr_picks_its_quotes() {
    assert_eq!(py_repr("a'b"), "\"a'b\"");
    assert_eq!(py_repr("a'b\""), "'a\\'b\"'");
    assert_eq!(py_repr("a\\b\n"), "'a\\\\b\\n'");
}

#[test]
fn a_web_host_admits_https_and_http_only_when_local() {
    assert_eq!(
        admits(&["shop.example"], "https://shop.example/page"),
        Some("https://shop.example".into())
    );
    assert_eq!(admits(&["shop.example"], "http://shop.example"), None);
    assert_eq!(admits(&["shop.example"], "https://www.shop.example"), None);
    assert_eq!(admits(&["shop.example"], "https://shop.example:8443"), None);
    assert_eq!(
        admits(&["shop.example:8443"], "https://shop.example:8443"),
        Some("https://shop.example:8443".into())
    );
    assert_eq!(admits(&["shop.example:8443"], "https://shop.example"), None);
    for local in [
        "http://localhost",
        "http://app.localhost",
        "http://printer.local",
        "http://127.0.0.1",
        "http://10.1.2.3",
        "http://192.168.1.43",
        "http://[::1]",
        "http://[fd00::1]",
    ] {
        let host = url::Url::parse(local)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        assert!(admits(&[host.as_str()], local).is_some(), "{local}");
    }
    assert_eq!(admits(&["8.8.8.8"], "http://8.8.8.8"), None);
    assert!(admits(&["8.8.8.8"], "https://8.8.8.8").is_some());
    assert_eq!(
        admits(&["127.0.0.1:5500"], "http://127.0.0.1:5500/"),
        Some("http://127.0.0.1:5500".into())
    );
    assert_eq!(admits(&["127.0.0.1:5500"], "http://127.0.0.1:5501"), None);
    assert_eq!(admits(&["localhost"], "http://localhost:3000"), None);
}

#[test]
fn a_wildcard_admits_subdomains_only() {
    let hosts = ["*.example.com"];
    assert!(admits(&hosts, "https://shop.example.com").is_some());
    assert!(admits(&hosts, "https://a.b.example.com").is_some());
    assert_eq!(admits(&hosts, "https://example.com"), None);
    assert_eq!(admits(&hosts, "https://badexample.com"), None);
    assert_eq!(admits(&hosts, "https://example.com.evil.test"), None);
}

#[test]
fn an_app_origin_matches_its_scheme_and_id() {
    let hosts = ["chrome-extension://abcdef"];
    assert_eq!(
        admits(&hosts, "chrome-extension://abcdef"),
        Some("chrome-extension://abcdef".into())
    );
    assert_eq!(admits(&hosts, "chrome-extension://other"), None);
    assert_eq!(admits(&hosts, "https://abcdef"), None);
    assert_eq!(admits(&["abcdef"], "chrome-extension://abcdef"), None);
}

#[test]
fn nothing_is_admitted_by_an_empty_list_or_unparsable_entries() {
    assert_eq!(admits(&[], "https://shop.example"), None);
    assert_eq!(
        admits(&["", "*", "https://shop.example"], "https://shop.example"),
        None
    );
}
