//! The connection wrapper that gives the few responses actix-http writes by itself the
//! documented JSON error body.
//!
//! actix-http answers three kinds of request before any service or middleware sees them,
//! with an empty body: 431 for a head over its fixed limits (128 KiB, 96 headers), 400
//! for a head it cannot parse, and 408 for a head not sent within
//! `server.request_head_timeout_ms`. Each is written as one bodyless head with
//! `content-length: 0` and `connection: close`, and the connection is closed after it.
//! Tollgate's own responses never look like that (every 4xx the application gives has a
//! JSON body), so [`ShapedIo`] recognises exactly those writes and sends the same status
//! with `{"error": …, "detail": …}` instead. Everything else passes through untouched.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use actix_web::rt::net::TcpStream;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A connection whose dispatcher-made error responses get JSON bodies.
pub struct ShapedIo<T> {
    inner: T,
    /// A rewritten response still to be written, and how much of it is.
    pending: Vec<u8>,
    written: usize,
}

impl<T> ShapedIo<T> {
    pub fn new(inner: T) -> Self {
        Self {
            inner,
            pending: Vec::new(),
            written: 0,
        }
    }

    pub fn get_ref(&self) -> &T {
        &self.inner
    }
}

impl ShapedIo<TcpStream> {
    pub fn peer_addr(&self) -> Option<std::net::SocketAddr> {
        self.inner.peer_addr().ok()
    }
}

impl<T: AsyncWrite + Unpin> ShapedIo<T> {
    /// Writes what is left of a rewritten response.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.pending.len() {
            let n =
                ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.pending.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ShapedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ShapedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        ready!(this.poll_drain(cx))?;
        if let Some(shaped) = shape(buf) {
            this.pending = shaped;
            this.written = 0;
            // The caller's bytes are taken: what goes out instead is written here and by
            // the next flush.
            if let Poll::Ready(Err(e)) = this.poll_drain(cx) {
                return Poll::Ready(Err(e));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

/// The JSON replacement of one of actix-http's own error responses, or `None` for
/// anything else.
pub fn shape(buf: &[u8]) -> Option<Vec<u8>> {
    let rest = buf
        .strip_prefix(b"HTTP/1.1 ")
        .or_else(|| buf.strip_prefix(b"HTTP/1.0 "))?;
    let (error, detail) = match rest.get(..4)? {
        b"431 " => (
            "RequestHeaderFieldsTooLarge",
            "The request's headers are too large (at most 96 headers and 128 KiB).",
        ),
        b"400 " => ("BadRequest", "The request is not valid HTTP."),
        b"408 " => (
            "RequestTimeout",
            "The request's headers were not received in time.",
        ),
        _ => return None,
    };
    // One whole head and nothing after it.
    let end = find(buf, b"\r\n\r\n")? + 4;
    if end != buf.len() {
        return None;
    }
    let head = std::str::from_utf8(&buf[..end - 2]).ok()?;
    let lines: Vec<&str> = head.split("\r\n").filter(|l| !l.is_empty()).collect();
    let has = |name: &str, value: &str| {
        lines.iter().skip(1).any(|l| {
            l.split_once(':').is_some_and(|(k, v)| {
                k.trim().eq_ignore_ascii_case(name) && v.trim().eq_ignore_ascii_case(value)
            })
        })
    };
    if !has("content-length", "0") || !has("connection", "close") {
        return None;
    }
    let body = serde_json::to_string(&crate::error::ErrorBody::new(error, detail)).ok()?;
    let mut out = String::with_capacity(end + body.len() + 64);
    out.push_str(lines.first()?);
    out.push_str("\r\n");
    for line in lines.iter().skip(1) {
        let is_length = line
            .split_once(':')
            .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"));
        if !is_length {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str("content-type: application/json\r\n");
    out.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    out.push_str(&body);
    Some(out.into_bytes())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> (String, Vec<String>, serde_json::Value) {
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        let mut lines = head.split("\r\n").map(str::to_string);
        let status = lines.next().unwrap();
        let headers: Vec<String> = lines.collect();
        let length: usize = headers
            .iter()
            .find_map(|h| h.strip_prefix("content-length: "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(length, body.len());
        (status, headers, serde_json::from_str(body).unwrap())
    }

    #[test]
    fn the_dispatchers_own_errors_get_json_bodies() {
        for (raw, status, error) in [
            (
                "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\ndate: Tue, 24 Nov 2026 12:40:00 GMT\r\n\r\n",
                "HTTP/1.1 431 Request Header Fields Too Large",
                "RequestHeaderFieldsTooLarge",
            ),
            (
                "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\ndate: Tue, 24 Nov 2026 12:40:00 GMT\r\n\r\n",
                "HTTP/1.1 400 Bad Request",
                "BadRequest",
            ),
            (
                "HTTP/1.0 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                "HTTP/1.0 408 Request Timeout",
                "RequestTimeout",
            ),
        ] {
            let shaped = shape(raw.as_bytes()).unwrap();
            let (line, headers, body) = parse(&shaped);
            assert_eq!(line, status);
            assert!(headers.contains(&"content-type: application/json".to_string()));
            assert!(headers.iter().any(|h| h.eq_ignore_ascii_case("connection: close")));
            assert_eq!(body["error"], error);
            assert!(body["detail"].as_str().unwrap().len() > 10);
        }
    }

    #[test]
    fn everything_else_passes_untouched() {
        for raw in [
            // The application's own errors have bodies.
            "HTTP/1.1 400 Bad Request\r\ncontent-length: 40\r\ncontent-type: application/json\r\n\r\n",
            "HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
            // Kept-alive bodyless answers, other statuses, parts of a body.
            "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n",
            "HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n",
            "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            "{\"error\": \"x\"}",
            "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\n",
        ] {
            assert_eq!(shape(raw.as_bytes()), None, "{raw}");
        }
    }
}
