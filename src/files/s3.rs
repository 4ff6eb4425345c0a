//! The S3-compatible backend (`[files.s3]`): the bytes live in a bucket that every node
//! reaches. Clients send parts straight to the store through URLs it presigns (SigV4,
//! `partNumber` and `uploadId` signed, the part's `x-amz-checksum-sha256` too when one was
//! declared); `/uploaded` completes the multipart upload, then reads the object back once,
//! streamed, to compute its SHA-256 and SHA-512 and compare them with what was declared;
//! downloads are redirected to a presigned GET naming the file.
//!
//! Through Apache Arrow's object_store (`aws-base` + `ring`), its HTTP over Tollgate's
//! reqwest client ([`http::Reqwest12`]).

mod http;

use std::io;
use std::time::Duration;

use actix_web::web::Bytes;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use futures_util::future::{BoxFuture, FutureExt, LocalBoxFuture};
use futures_util::stream::{BoxStream, LocalBoxStream, StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3, AmazonS3Builder, Checksum};
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::signer::{SignedUrlOptions, Signer};
use object_store::{
    Attribute, AttributeValue, Attributes, ObjectStore, ObjectStoreExt, PutMultipartOptions,
    RetryConfig,
};
use sha2::{Digest, Sha256, Sha512};

use super::{
    attachment, Assembled, CompleteError, Delivery, DownloadAs, Expected, FileBackend, ObjectRef,
    PartRefused, PartUrl,
};
use crate::config::S3Settings;
use crate::domain::file::PartPlan;

/// SigV4's longest presigned URL: 7 days.
const MAX_PRESIGN_SECS: u64 = 7 * 24 * 3600;

/// Files in an S3-compatible bucket.
#[derive(Debug)]
pub struct S3Files {
    store: AmazonS3,
    /// `endpoint/bucket`, to name the store in logs (never the keys).
    name: String,
}

impl S3Files {
    /// The store `settings` name (already validated: see `S3Settings::validate`). Nothing
    /// is sent yet; an endpoint the client cannot use is an error naming the key.
    pub fn new(settings: &S3Settings) -> Result<S3Files, String> {
        let mut endpoint = url::Url::parse(settings.endpoint.trim())
            .map_err(|e| format!("files.s3.endpoint: {e}"))?;
        if !settings.path_style {
            // Virtual-hosted style: object_store expects the bucket in the endpoint's host.
            let host = endpoint
                .host_str()
                .ok_or("files.s3.endpoint: names no host")?
                .to_string();
            endpoint
                .set_host(Some(&format!("{}.{host}", settings.bucket)))
                .map_err(|e| format!("files.s3.endpoint: {e}"))?;
        }
        let store = AmazonS3Builder::new()
            .with_endpoint(endpoint.as_str().trim_end_matches('/'))
            .with_region(settings.region.trim())
            .with_bucket_name(&settings.bucket)
            .with_access_key_id(settings.access_key_id.trim())
            .with_secret_access_key(&settings.secret_access_key)
            .with_virtual_hosted_style_request(!settings.path_style)
            .with_allow_http(settings.allow_http)
            // As Polar: multipart uploads declare SHA-256 part checksums.
            .with_checksum_algorithm(Checksum::SHA256)
            .with_retry(RetryConfig {
                max_retries: 3,
                retry_timeout: Duration::from_secs(60),
                ..RetryConfig::default()
            })
            .with_http_connector(http::Reqwest12 {
                allow_http: settings.allow_http,
            })
            .build()
            .map_err(|e| format!("files.s3.endpoint: {e}"))?;
        Ok(S3Files {
            store,
            name: format!(
                "{}/{}",
                settings.endpoint.trim_end_matches('/'),
                settings.bucket
            ),
        })
    }

    /// Asks the store for the bucket (a listing of a prefix no file has): an unreachable
    /// endpoint, a missing bucket or keys the store refuses stop start-up here rather than
    /// the first upload.
    pub async fn probe(&self) -> Result<(), String> {
        let prefix = Path::from("tollgate-start-up-probe");
        let listed = tokio::time::timeout(
            Duration::from_secs(30),
            self.store.list_with_delimiter(Some(&prefix)),
        )
        .await;
        match listed {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(format!(
                "files.s3: the bucket {} cannot be listed (endpoint, bucket, keys?): {}",
                self.name,
                error_text(&e)
            )),
            Err(_) => Err(format!(
                "files.s3: the store {} did not answer within 30 s (endpoint?)",
                self.name
            )),
        }
    }

    /// `endpoint/bucket`, for logs.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A presigned URL for `method` on `path`, valid until `expires` (at least a second,
    /// at most SigV4's 7 days). The store's credentials are static, so signing needs no
    /// I/O: the signer's future is ready at once.
    fn presign(
        &self,
        method: ::http::Method,
        path: &Path,
        expires: DateTime<Utc>,
        options: &SignedUrlOptions,
    ) -> io::Result<String> {
        // Rounded up: a URL never expires before `expires`'s second.
        let ms = (expires - Utc::now()).num_milliseconds();
        let secs = ms.div_euclid(1000) + i64::from(ms.rem_euclid(1000) > 0);
        let secs = secs.clamp(1, MAX_PRESIGN_SECS as i64);
        let ttl = Duration::from_secs(secs.unsigned_abs());
        match self
            .store
            .signed_url_opts(method, path, ttl, options)
            .now_or_never()
        {
            Some(Ok(url)) => Ok(url.to_string()),
            Some(Err(e)) => Err(io_error(e)),
            None => Err(io::Error::other("presigning needed I/O")),
        }
    }

    /// Reads `path` once, streamed: its length and digests.
    async fn digest(&self, path: &Path) -> io::Result<(u64, [u8; 32], Vec<u8>)> {
        let mut stream = self.store.get(path).await.map_err(io_error)?.into_stream();
        let mut sha256 = Sha256::new();
        let mut sha512 = Sha512::new();
        let mut len = 0u64;
        while let Some(chunk) = stream.try_next().await.map_err(io_error)? {
            sha256.update(&chunk);
            sha512.update(&chunk);
            len += chunk.len() as u64;
        }
        Ok((len, sha256.finalize().into(), sha512.finalize().to_vec()))
    }

    async fn complete_upload(
        &self,
        object: ObjectRef,
        upload_id: String,
        parts: Vec<PartPlan>,
        expected: Expected,
    ) -> Result<Assembled, CompleteError> {
        let path = key(&object);
        let mut ids = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            let etag = expected.etags.get(i).map(|e| e.trim().trim_matches('"'));
            match etag {
                Some(etag) if !etag.is_empty() && etag.len() <= 1024 => {
                    ids.push(part_id(etag, part.sha256.as_ref()))
                }
                _ => return Err(CompleteError::WrongEtag(i)),
            }
        }
        let etag = match self
            .store
            .complete_multipart(&path, &upload_id.clone(), ids)
            .await
        {
            Ok(done) => done.e_tag,
            Err(e) => match refusal(&error_text(&e)) {
                // Completed already (a retry after a crash): the object is there.
                Some(Refusal::NoSuchUpload) => match self.store.head(&path).await {
                    Ok(meta) => meta.e_tag,
                    Err(_) => return Err(CompleteError::MissingPart(1)),
                },
                // The store does not say which part: the first is named.
                Some(Refusal::Parts) => return Err(CompleteError::WrongEtag(0)),
                None => return Err(CompleteError::Io(io_error(e))),
            },
        };
        let (len, sha256, sha512) = self.digest(&path).await?;
        let size: u64 = parts.iter().map(PartPlan::len).sum();
        // A part URL does not bind the part's length: a client may have sent other bytes
        // than planned. Either mismatch leaves nothing behind.
        if len != size || expected.sha256.is_some_and(|d| d != sha256) {
            if let Err(e) = self.store.delete(&path).await {
                tracing::warn!(file = %object.file_id, error = %e, "files: rejected object not removed");
            }
            return Err(CompleteError::Digest);
        }
        let etag = etag.unwrap_or_default();
        let etag = if etag.starts_with('"') {
            etag
        } else {
            format!("\"{etag}\"")
        };
        Ok(Assembled {
            sha256,
            sha512,
            etag,
        })
    }
}

/// The object's key: Polar's path, `{service}/{organization_id}/{id}/{name}`.
fn key(object: &ObjectRef) -> Path {
    Path::from(object.path.as_str())
}

/// A completed part as object_store's S3 client takes it: the bare ETag, or with the part's
/// `ChecksumSHA256` (its `PartMetadata`, XML) when one was declared, as Polar completes.
fn part_id(etag: &str, sha256: Option<&[u8; 32]>) -> PartId {
    let content_id = match sha256 {
        None => etag.to_string(),
        Some(d) => format!(
            "<PartMetadata><e_tag>{}</e_tag><checksum_sha256>{}</checksum_sha256></PartMetadata>",
            xml_escape(etag),
            STANDARD.encode(d)
        ),
    };
    PartId { content_id }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// Why a store refused to complete an upload.
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    /// The upload is unknown (never created, aborted, or completed already).
    NoSuchUpload,
    /// A part is missing, too small, out of order, or not of the given ETag.
    Parts,
}

/// The S3 error code in an error's text, when it is one completion maps.
fn refusal(text: &str) -> Option<Refusal> {
    if text.contains("NoSuchUpload") {
        Some(Refusal::NoSuchUpload)
    } else if ["InvalidPart", "EntityTooSmall", "InvalidRequest"]
        .iter()
        .any(|code| text.contains(code))
    {
        // `InvalidPart` also matches `InvalidPartOrder`.
        Some(Refusal::Parts)
    } else {
        None
    }
}

/// An error and its sources, in one line.
fn error_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

fn io_error(e: object_store::Error) -> io::Error {
    let kind = match e {
        object_store::Error::NotFound { .. } => io::ErrorKind::NotFound,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, error_text(&e))
}

impl FileBackend for S3Files {
    fn create_upload(&self, object: ObjectRef) -> BoxFuture<'_, io::Result<String>> {
        async move {
            let mut attributes = Attributes::new();
            if !object.mime_type.is_empty() {
                attributes.insert(
                    Attribute::ContentType,
                    AttributeValue::from(object.mime_type.clone()),
                );
            }
            let opts = PutMultipartOptions {
                attributes,
                ..Default::default()
            };
            self.store
                .create_multipart_opts(&key(&object), opts)
                .await
                .map_err(io_error)
        }
        .boxed()
    }

    fn part_url(
        &self,
        object: &ObjectRef,
        upload_id: &str,
        part: &PartPlan,
        expires: DateTime<Utc>,
    ) -> io::Result<PartUrl> {
        let mut options = SignedUrlOptions::default().with_query([
            ("partNumber", part.number.to_string()),
            ("uploadId", upload_id.to_string()),
        ]);
        let mut headers = Vec::new();
        if let Some(d) = &part.sha256 {
            let b64 = STANDARD.encode(d);
            headers = vec![
                ("x-amz-checksum-sha256".to_string(), b64),
                (
                    "x-amz-sdk-checksum-algorithm".to_string(),
                    "SHA256".to_string(),
                ),
            ];
            // Signed: the store refuses the part unless the client sends these values.
            for (name, value) in &headers {
                if let (Ok(n), Ok(v)) = (
                    ::http::HeaderName::try_from(name.as_str()),
                    ::http::HeaderValue::try_from(value.as_str()),
                ) {
                    options = options.with_signed_header(n, v);
                }
            }
        }
        // Fails only with credentials that need I/O, which `new` never builds.
        let url = self.presign(::http::Method::PUT, &key(object), expires, &options)?;
        Ok(PartUrl { url, headers })
    }

    fn receive_part<'a>(
        &'a self,
        _object: &'a ObjectRef,
        _part: &'a PartPlan,
        _body: LocalBoxStream<'a, Result<Bytes, String>>,
    ) -> LocalBoxFuture<'a, Result<[u8; 32], PartRefused>> {
        async { Err(PartRefused::Unsupported) }.boxed_local()
    }

    fn complete(
        &self,
        object: ObjectRef,
        upload_id: String,
        parts: Vec<PartPlan>,
        expected: Expected,
    ) -> BoxFuture<'_, Result<Assembled, CompleteError>> {
        self.complete_upload(object, upload_id, parts, expected)
            .boxed()
    }

    fn read(
        &self,
        object: ObjectRef,
    ) -> BoxFuture<'_, io::Result<BoxStream<'static, io::Result<Bytes>>>> {
        async move {
            let got = self.store.get(&key(&object)).await.map_err(io_error)?;
            Ok(got.into_stream().map_err(io_error).boxed())
        }
        .boxed()
    }

    fn deliver(
        &self,
        object: ObjectRef,
        download: DownloadAs,
    ) -> BoxFuture<'_, io::Result<Delivery>> {
        let options = SignedUrlOptions::default().with_query([
            ("response-content-disposition", attachment(&download.name)),
            ("response-content-type", download.mime_type.clone()),
        ]);
        let url = self.presign(
            ::http::Method::GET,
            &key(&object),
            download.expires,
            &options,
        );
        async move { Ok(Delivery::Redirect(url?)) }.boxed()
    }

    fn delete(&self, object: ObjectRef) -> BoxFuture<'_, io::Result<()>> {
        async move {
            match self.store.delete(&key(&object)).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(io_error(e)),
            }
        }
        .boxed()
    }

    fn abort(&self, object: ObjectRef, upload_id: String) -> BoxFuture<'_, io::Result<()>> {
        async move {
            if upload_id.is_empty() {
                return Ok(());
            }
            match self.store.abort_multipart(&key(&object), &upload_id).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) if refusal(&error_text(&e)) == Some(Refusal::NoSuchUpload) => Ok(()),
                Err(e) => Err(io_error(e)),
            }
        }
        .boxed()
    }
}

#[cfg(test)]
#[path = "s3_tests.rs"]
mod tests;
