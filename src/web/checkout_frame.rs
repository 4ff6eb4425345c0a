//! What the checkout pages send around their body: their headers (never cached, framed
//! only by the checkout's own `embed_origin`) and the `?embed=true` of the overlay of
//! Polar's `@polar-sh/checkout`.

use actix_web::http::header;
use actix_web::HttpResponse;

use crate::payments::PageSources;

/// The query of the checkout pages: `?embed=true` when the page is in the overlay of
/// `@polar-sh/checkout` (Polar's embed protocol) on the checkout's `embed_origin`.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct PageQuery {
    embed: Option<String>,
    /// Stripe's on the way back from a payment method's own page (a bank's): `succeeded`,
    /// `processing` or `failed`.
    redirect_status: Option<String>,
}

impl PageQuery {
    pub(super) fn embedded(&self) -> bool {
        self.embed.as_deref() == Some("true")
    }

    /// Back from a payment method's own page that refused or abandoned the payment.
    pub(super) fn payment_refused(&self) -> bool {
        self.redirect_status.as_deref() == Some("failed")
    }

    /// What a page's links to the other page keep of the query.
    pub(super) fn suffix(&self) -> &'static str {
        if self.embedded() {
            "?embed=true"
        } else {
            ""
        }
    }
}

/// The origin a checkout's page may be framed by: its `embed_origin` when that is an
/// origin (`https://shop.example`, `http://localhost:3000`: a scheme, a host, a port at
/// most), written as a CSP source; `None` (never framed) otherwise.
pub(super) fn frame_ancestor(embed_origin: Option<&str>) -> Option<String> {
    let url = url::Url::parse(embed_origin?.trim()).ok()?;
    if !matches!(url.scheme(), "https" | "http") {
        return None;
    }
    // A host name or an IP address: nothing a CSP would read as a separator.
    let host = url.host_str()?;
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']');
    if host.is_empty() || !host.chars().all(plain) {
        return None;
    }
    // `ascii_serialization` of an http(s) URL is `scheme://host[:port]`: nothing else of
    // what was stored (a path, a query, quotes, a `;`) reaches the header.
    Some(url.origin().ascii_serialization())
}

/// The `Permissions-Policy` of a page that may be framed: payments (the Payment Request
/// API of Apple Pay and Google Pay) and passkeys (`publickey-credentials-get`, 3-D Secure)
/// for the page itself and the processor's frames (`frames`, origins), nothing else
/// delegated; camera, microphone and location for nobody. The embedding page grants the
/// frame these features with its iframe's `allow` attribute (`@polar-sh/checkout` names
/// the origins it trusts there); a page's own header cannot grant its parent anything, so
/// the embedding origin is not listed here.
fn permissions_policy(frames: &[String]) -> String {
    let allow: String = std::iter::once("self".to_string())
        .chain(frames.iter().map(|o| format!("\"{o}\"")))
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "payment=({allow}), publickey-credentials-get=({allow}), camera=(), microphone=(), \
         geolocation=()"
    )
}

/// An HTML page of ours: never cached, no referrer (the URL holds the client secret),
/// scripts from this service only, plus what the payment processor's script needs when
/// the page loads it; framed by nothing, or only by `framed_by` (a checkout's embedding
/// origin, [`frame_ancestor`]).
pub(super) fn framed_page(
    status: u16,
    body: String,
    sources: &PageSources,
    framed_by: Option<&str>,
) -> HttpResponse {
    let list = |extra: &[String], none: &str| {
        if extra.is_empty() {
            none.to_string()
        } else {
            extra.join(" ")
        }
    };
    let csp = format!(
        "default-src 'none'; script-src 'self'{}; connect-src 'self'{}; frame-src {}; \
         style-src 'unsafe-inline'; img-src 'self' https: data:; base-uri 'none'; \
         form-action 'none'; frame-ancestors {}",
        sources
            .script
            .iter()
            .map(|s| format!(" {s}"))
            .collect::<String>(),
        sources
            .connect
            .iter()
            .map(|s| format!(" {s}"))
            .collect::<String>(),
        list(&sources.frame, "'none'"),
        framed_by.unwrap_or("'none'"),
    );
    let mut response = HttpResponse::build(
        actix_web::http::StatusCode::from_u16(status).unwrap_or(actix_web::http::StatusCode::OK),
    );
    response
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::REFERRER_POLICY, "same-origin"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CONTENT_SECURITY_POLICY, csp));
    // X-Frame-Options has no way to name one origin: browsers that know CSP follow its
    // `frame-ancestors`, the rest are refused the frame.
    match framed_by {
        None => {
            response.insert_header((header::X_FRAME_OPTIONS, "DENY"));
        }
        Some(_) => {
            response.insert_header(("permissions-policy", permissions_policy(&sources.frame)));
        }
    }
    response.content_type("text/html; charset=utf-8").body(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header<'a>(r: &'a HttpResponse, name: &str) -> Option<&'a str> {
        r.headers().get(name).and_then(|v| v.to_str().ok())
    }

    #[test]
    fn a_framed_page_delegates_payments_to_itself_and_the_processor_s_frames_only() {
        assert_eq!(
            permissions_policy(&[]),
            "payment=(self), publickey-credentials-get=(self), camera=(), microphone=(), \
             geolocation=()"
        );
        assert_eq!(
            permissions_policy(&["https://js.stripe.com".to_string()]),
            "payment=(self \"https://js.stripe.com\"), publickey-credentials-get=(self \
             \"https://js.stripe.com\"), camera=(), microphone=(), geolocation=()"
        );
    }

    #[test]
    fn a_page_is_framed_by_its_embed_origin_or_by_nobody() {
        let sources = PageSources {
            script: vec![],
            connect: vec![],
            frame: vec!["https://js.stripe.com".to_string()],
        };
        let framed = framed_page(200, String::new(), &sources, Some("https://shop.example"));
        let csp = header(&framed, "content-security-policy").unwrap_or_default();
        assert!(
            csp.ends_with("frame-ancestors https://shop.example"),
            "{csp}"
        );
        assert_eq!(header(&framed, "x-frame-options"), None);
        assert_eq!(
            header(&framed, "permissions-policy"),
            Some(permissions_policy(&sources.frame).as_str())
        );
        let alone = framed_page(200, String::new(), &sources, None);
        let csp = header(&alone, "content-security-policy").unwrap_or_default();
        assert!(csp.ends_with("frame-ancestors 'none'"), "{csp}");
        assert_eq!(header(&alone, "x-frame-options"), Some("DENY"));
        assert_eq!(header(&alone, "permissions-policy"), None);
    }

    #[test]
    fn only_an_origin_frames() {
        assert_eq!(
            frame_ancestor(Some("https://shop.example/buy?x=1")).as_deref(),
            Some("https://shop.example")
        );
        assert_eq!(
            frame_ancestor(Some("http://127.0.0.1:5500")).as_deref(),
            Some("http://127.0.0.1:5500")
        );
        for not in [
            None,
            Some("null"),
            Some("garbage"),
            Some("file:///x"),
            Some("javascript:x"),
        ] {
            assert_eq!(frame_ancestor(not), None, "{not:?}");
        }
    }
}
