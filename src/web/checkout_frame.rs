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
}

impl PageQuery {
    pub(super) fn embedded(&self) -> bool {
        self.embed.as_deref() == Some("true")
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
    if framed_by.is_none() {
        response.insert_header((header::X_FRAME_OPTIONS, "DENY"));
    }
    response.content_type("text/html; charset=utf-8").body(body)
}
