//! Where the bytes of `/v1/files` live: a [`FileBackend`] behind [`FileStore`]. The
//! embedded default is [`local::LocalFiles`], a directory under the data dir; an
//! S3-compatible store slots in behind the same trait (its part URLs presigned by the
//! store, parts sent to it directly).

pub mod backup;
pub mod local;
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
    ) -> PartUrl;
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

/// A part's ETag: its SHA-256 in hex, quoted.
pub fn part_etag(sha256: &[u8; 32]) -> String {
    format!("\"{}\"", hex(sha256))
}
