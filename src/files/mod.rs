//! Where the bytes of `/v1/files` live: a [`FileBackend`] behind [`FileStore`]. The
//! embedded default is [`local::LocalFiles`], a directory under the data dir; with
//! `[files.s3]` it is [`s3::S3Files`], an S3-compatible store (its part URLs presigned by
//! the store, parts sent to it directly, downloads redirected to presigned GETs).

pub mod backup;
pub mod local;
pub mod s3;
pub mod signed;

use std::io;
use std::sync::Arc;

use actix_web::web::Bytes;
use chrono::{DateTime, Utc};
use futures_util::future::{BoxFuture, LocalBoxFuture};
use futures_util::stream::{BoxStream, LocalBoxStream};

use crate::domain::file::PartPlan;
use crate::domain::ids::{FileId, OrganizationId};

/// The object a file's bytes are (or will be) stored as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef {
    pub organization_id: OrganizationId,
    pub file_id: FileId,
    /// Polar's key, `{service}/{organization_id}/{id}/{name}`.
    pub path: String,
    /// The file's MIME type (an object store keeps it as the object's `Content-Type`).
    pub mime_type: String,
}

/// Where and how a client sends one part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartUrl {
    pub url: String,
    /// Headers the client must send with it (the part's checksum, when one was declared).
    pub headers: Vec<(String, String)>,
}

/// Why a part was refused (nothing of it kept).
#[derive(Debug)]
pub enum PartRefused {
    /// The body was longer or shorter than the part's `chunk_end - chunk_start`.
    Length {
        expected: u64,
        received: u64,
    },
    /// The bytes' SHA-256 differs from the part's declared checksum.
    Checksum,
    /// The client's body broke off.
    Body(String),
    /// This backend takes no parts itself (the client sends them to the object store).
    Unsupported,
    Io(io::Error),
}

/// What completion checks against before the object is kept.
#[derive(Debug, Clone, Default)]
pub struct Expected {
    /// The whole-file SHA-256 declared at creation.
    pub sha256: Option<[u8; 32]>,
    /// The ETags the client collected, one per part, in order (quotes stripped).
    pub etags: Vec<String>,
}

/// The object as assembled: its digests, computed in one pass over its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assembled {
    pub sha256: [u8; 32],
    pub sha512: Vec<u8>,
    /// `"<hex sha256 of the part digests>-<parts>"`, S3's multipart ETag shape.
    pub etag: String,
}

/// Why completion failed.
#[derive(Debug)]
pub enum CompleteError {
    /// Part `number` was never received (its part is kept for a retry... there is none).
    MissingPart(u32),
    /// The ETag given for the part at this position is not the received part's.
    WrongEtag(usize),
    /// The bytes' SHA-256 is not the declared one: parts and object are gone.
    Digest,
    Io(io::Error),
}

impl From<io::Error> for CompleteError {
    fn from(e: io::Error) -> Self {
        CompleteError::Io(e)
    }
}

/// What a check of the stored objects found (`tollgate check`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectReport {
    pub missing: Vec<String>,
    pub wrong_size: Vec<String>,
    pub orphans: Vec<String>,
}

/// How a download reaches the client.
pub enum Delivery {
    /// Presigned by the object store: the client is redirected there (`302`).
    Redirect(String),
    /// Streamed by Tollgate, in bounded chunks.
    Stream(BoxStream<'static, io::Result<Bytes>>),
}

/// What a download is served as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadAs {
    /// The name the client saves it as (`Content-Disposition: attachment`).
    pub name: String,
    pub mime_type: String,
    /// Until when a presigned URL works (a streamed download ignores it).
    pub expires: DateTime<Utc>,
}

/// A store of file bytes. Every method is safe to retry.
pub trait FileBackend: Send + Sync {
    /// Starts a multipart upload; answers its upload id.
    fn create_upload(&self, object: ObjectRef) -> BoxFuture<'_, io::Result<String>>;
    /// The URL (and headers) part `part` of the upload is sent to, valid until `expires`.
    fn part_url(
        &self,
        object: &ObjectRef,
        upload_id: &str,
        part: &PartPlan,
        expires: DateTime<Utc>,
    ) -> io::Result<PartUrl>;
    /// Takes part `part` from `body` (streamed, never held whole): answers its SHA-256,
    /// the part's ETag. Only backends whose part URLs point at Tollgate take parts.
    fn receive_part<'a>(
        &'a self,
        object: &'a ObjectRef,
        part: &'a PartPlan,
        body: LocalBoxStream<'a, Result<Bytes, String>>,
    ) -> LocalBoxFuture<'a, Result<[u8; 32], PartRefused>>;
    /// Assembles the parts in order into the object, checking `expected` first: on a
    /// digest mismatch nothing is kept.
    fn complete(
        &self,
        object: ObjectRef,
        upload_id: String,
        parts: Vec<PartPlan>,
        expected: Expected,
    ) -> BoxFuture<'_, Result<Assembled, CompleteError>>;
    /// The object's bytes, in bounded chunks.
    fn read(
        &self,
        object: ObjectRef,
    ) -> BoxFuture<'_, io::Result<BoxStream<'static, io::Result<Bytes>>>>;
    /// How the object is handed to a client allowed to download it now: the default
    /// streams it through Tollgate; an object store answers a presigned URL instead.
    fn deliver(
        &self,
        object: ObjectRef,
        _download: DownloadAs,
    ) -> BoxFuture<'_, io::Result<Delivery>> {
        let read = self.read(object);
        Box::pin(async move { Ok(Delivery::Stream(read.await?)) })
    }
    /// Removes the object (absent is fine).
    fn delete(&self, object: ObjectRef) -> BoxFuture<'_, io::Result<()>>;
    /// Drops an unfinished upload's parts (absent is fine).
    fn abort(&self, object: ObjectRef, upload_id: String) -> BoxFuture<'_, io::Result<()>>;
}

/// The file backend of this server, as `AppState` holds it.
#[derive(Clone)]
pub struct FileStore {
    pub backend: Arc<dyn FileBackend>,
}

impl FileStore {
    pub fn new(backend: Arc<dyn FileBackend>) -> Self {
        Self { backend }
    }
}

pub use crate::domain::file::hex;

/// `Content-Disposition` for a download saved as `name`: an ASCII `filename` (quotes,
/// backslashes and controls replaced) and, when the name is not plain ASCII, RFC 6266's
/// `filename*` in UTF-8.
pub fn attachment(name: &str) -> String {
    let ascii: String = name
        .chars()
        .map(|c| match c {
            '"' | '\\' => '_',
            c if c.is_ascii() && !c.is_ascii_control() => c,
            _ => '_',
        })
        .collect();
    if ascii == name {
        return format!("attachment; filename=\"{ascii}\"");
    }
    let encoded: String = name
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'_' | b'~' => {
                (b as char).to_string()
            }
            b => format!("%{b:02X}"),
        })
        .collect();
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

/// A part's ETag: its SHA-256 in hex, quoted.
pub fn part_etag(sha256: &[u8; 32]) -> String {
    format!("\"{}\"", hex(sha256))
}

#[cfg(test)]
mod tests {
    use super::attachment;

    #[test]
    fn attachment_names_are_quoted_safely_and_keep_non_ascii_names() {
        assert_eq!(
            attachment("MyApp-1.2.0.AppImage"),
            "attachment; filename=\"MyApp-1.2.0.AppImage\""
        );
        assert_eq!(
            attachment("a\"b\\c\r\n.zip"),
            "attachment; filename=\"a_b_c__.zip\"; filename*=UTF-8''a%22b%5Cc%0D%0A.zip"
        );
        assert_eq!(
            attachment("Überblick.pdf"),
            "attachment; filename=\"_berblick.pdf\"; filename*=UTF-8''%C3%9Cberblick.pdf"
        );
    }
}
