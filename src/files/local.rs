//! The local backend: the bytes under `{data_dir}/files/`.
//!
//! ```text
//! files/uploads/{file_id}/{n:05}.part      received parts (each written *.tmp, fsynced, renamed)
//! files/tmp/{file_id}.{random}             the object while it is assembled
//! files/objects/{org_id}/{file_id}          the object, never rewritten
//! ```
//! Parts arrive at Tollgate's own signed URLs ([`super::signed`]); completion concatenates
//! them in a blocking task with one streaming pass that hashes too.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use actix_web::web::Bytes;
use chrono::{DateTime, Utc};
use futures_util::future::{BoxFuture, FutureExt, LocalBoxFuture};
use futures_util::stream::{BoxStream, LocalBoxStream, StreamExt};
use rand::RngCore;
use sha2::{Digest, Sha256, Sha512};
use tokio::io::AsyncWriteExt;

use super::{
    hex, Assembled, CompleteError, Expected, FileBackend, ObjectRef, PartRefused, PartUrl,
};
use crate::auth::tokens::TokenHasher;
use crate::domain::file::PartPlan;

/// Read and write in 1 MiB blocks when assembling.
const BLOCK: usize = 1024 * 1024;
/// Chunks of a read stream.
const READ_CHUNK: usize = 64 * 1024;

/// An open file's bytes from where it stands to its end, in chunks: a response body.
pub fn stream_file(file: tokio::fs::File) -> BoxStream<'static, io::Result<Bytes>> {
    futures_util::stream::unfold(Some(file), |file| async move {
        use tokio::io::AsyncReadExt;
        let mut file = file?;
        let mut buf = vec![0u8; READ_CHUNK];
        match file.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok(Bytes::from(buf)), Some(file)))
            }
            Err(e) => Some((Err(e), None)),
        }
    })
    .boxed()
}

/// Files in a directory of this node's disk.
pub struct LocalFiles {
    root: PathBuf,
    hasher: TokenHasher,
    public_url: String,
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    hex(&buf)
}

/// fsyncs a directory, so a rename into it survives a crash.
fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

impl LocalFiles {
    /// The backend over `{data_dir}/files`.
    pub fn new(data_dir: &Path, hasher: TokenHasher, public_url: String) -> Self {
        Self {
            root: data_dir.join("files"),
            hasher,
            public_url,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn uploads(&self, object: &ObjectRef) -> PathBuf {
        self.root.join("uploads").join(object.file_id.to_string())
    }

    fn part_path(&self, object: &ObjectRef, number: u32) -> PathBuf {
        self.uploads(object).join(format!("{number:05}.part"))
    }

    /// Where the object of `object` is kept.
    pub fn object_path(&self, object: &ObjectRef) -> PathBuf {
        self.root
            .join("objects")
            .join(object.organization_id.to_string())
            .join(object.file_id.to_string())
    }

    async fn write_part(
        &self,
        object: &ObjectRef,
        part: &PartPlan,
        mut body: LocalBoxStream<'_, Result<Bytes, String>>,
    ) -> Result<[u8; 32], PartRefused> {
        let dir = self.uploads(object);
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(PartRefused::Io)?;
        let tmp = dir.join(format!("{:05}.{}.tmp", part.number, random_hex(8)));
        let result = self.stream_into(&tmp, part, &mut body).await;
        match result {
            Ok(digest) => {
                let target = self.part_path(object, part.number);
                tokio::fs::rename(&tmp, &target)
                    .await
                    .map_err(PartRefused::Io)?;
                let d = dir.clone();
                tokio::task::spawn_blocking(move || sync_dir(&d))
                    .await
                    .map_err(|e| PartRefused::Io(io::Error::other(e)))?
                    .map_err(PartRefused::Io)?;
                Ok(digest)
            }
            Err(e) => {
                let _ = tokio::fs::remove_file(&tmp).await;
                Err(e)
            }
        }
    }

    async fn stream_into(
        &self,
        tmp: &Path,
        part: &PartPlan,
        body: &mut LocalBoxStream<'_, Result<Bytes, String>>,
    ) -> Result<[u8; 32], PartRefused> {
        let expected = part.len();
        let mut file = tokio::fs::File::create(tmp)
            .await
            .map_err(PartRefused::Io)?;
        let mut sha = Sha256::new();
        let mut received = 0u64;
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(PartRefused::Body)?;
            received += chunk.len() as u64;
            if received > expected {
                return Err(PartRefused::Length { expected, received });
            }
            sha.update(&chunk);
            file.write_all(&chunk).await.map_err(PartRefused::Io)?;
        }
        if received != expected {
            return Err(PartRefused::Length { expected, received });
        }
        let digest: [u8; 32] = sha.finalize().into();
        if part.sha256.is_some_and(|d| d != digest) {
            return Err(PartRefused::Checksum);
        }
        file.flush().await.map_err(PartRefused::Io)?;
        file.sync_all().await.map_err(PartRefused::Io)?;
        Ok(digest)
    }

    /// Concatenates the parts into the object (blocking).
    fn assemble(
        &self,
        object: &ObjectRef,
        parts: &[PartPlan],
        expected: &Expected,
    ) -> Result<Assembled, CompleteError> {
        for p in parts {
            if !self.part_path(object, p.number).is_file() {
                return Err(CompleteError::MissingPart(p.number));
            }
        }
        let tmp_dir = self.root.join("tmp");
        fs::create_dir_all(&tmp_dir)?;
        let tmp = tmp_dir.join(format!("{}.{}", object.file_id, random_hex(8)));
        let outcome = self.concatenate(object, parts, expected, &tmp);
        let assembled = match outcome {
            Ok(a) => a,
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                if matches!(e, CompleteError::Digest) {
                    // Nothing of a file whose bytes are not the declared ones is kept.
                    let _ = fs::remove_dir_all(self.uploads(object));
                }
                return Err(e);
            }
        };
        let target = self.object_path(object);
        let dir = target.parent().map(Path::to_path_buf).unwrap_or_default();
        fs::create_dir_all(&dir)?;
        fs::rename(&tmp, &target)?;
        sync_dir(&dir)?;
        let _ = fs::remove_dir_all(self.uploads(object));
        Ok(assembled)
    }

    fn concatenate(
        &self,
        object: &ObjectRef,
        parts: &[PartPlan],
        expected: &Expected,
        tmp: &Path,
    ) -> Result<Assembled, CompleteError> {
        let mut out = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(tmp)?;
        let mut sha256 = Sha256::new();
        let mut sha512 = Sha512::new();
        let mut of_parts = Sha256::new();
        let mut buf = vec![0u8; BLOCK];
        for (i, p) in parts.iter().enumerate() {
            let mut input = fs::File::open(self.part_path(object, p.number))?;
            let mut part_sha = Sha256::new();
            let mut len = 0u64;
            loop {
                let n = input.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                let block = &buf[..n];
                sha256.update(block);
                sha512.update(block);
                part_sha.update(block);
                out.write_all(block)?;
                len += n as u64;
            }
            let part_digest: [u8; 32] = part_sha.finalize().into();
            if len != p.len() {
                return Err(CompleteError::MissingPart(p.number));
            }
            if let Some(given) = expected.etags.get(i) {
                if given.trim_matches('"') != hex(&part_digest) {
                    return Err(CompleteError::WrongEtag(i));
                }
            }
            of_parts.update(part_digest);
        }
        out.flush()?;
        out.sync_all()?;
        let sha256: [u8; 32] = sha256.finalize().into();
        if expected.sha256.is_some_and(|d| d != sha256) {
            return Err(CompleteError::Digest);
        }
        Ok(Assembled {
            sha256,
            sha512: sha512.finalize().to_vec(),
            etag: format!("\"{}-{}\"", hex(&of_parts.finalize()), parts.len()),
        })
    }

    /// The objects on disk, as `(organization, file id, size)` (for checks and backups).
    pub fn list_objects(&self) -> io::Result<Vec<(String, String, u64)>> {
        let mut out = Vec::new();
        let objects = self.root.join("objects");
        let Ok(orgs) = fs::read_dir(&objects) else {
            return Ok(out);
        };
        for org in orgs {
            let org = org?;
            for f in fs::read_dir(org.path())? {
                let f = f?;
                let meta = f.metadata()?;
                if meta.is_file() {
                    out.push((
                        org.file_name().to_string_lossy().into_owned(),
                        f.file_name().to_string_lossy().into_owned(),
                        meta.len(),
                    ));
                }
            }
        }
        Ok(out)
    }
}

fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> BoxFuture<'static, io::Result<T>> {
    async move {
        tokio::task::spawn_blocking(f)
            .await
            .map_err(io::Error::other)?
    }
    .boxed()
}

fn absent_ok(r: io::Result<()>) -> io::Result<()> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

impl FileBackend for LocalFiles {
    fn create_upload(&self, _object: ObjectRef) -> BoxFuture<'_, io::Result<String>> {
        // The parts' directory is made by the first part.
        async move { Ok(format!("local~{}", random_hex(16))) }.boxed()
    }

    fn part_url(
        &self,
        object: &ObjectRef,
        upload_id: &str,
        part: &PartPlan,
        expires: DateTime<Utc>,
    ) -> io::Result<PartUrl> {
        let query = super::signed::query(
            &self.hasher,
            object.file_id,
            upload_id,
            part.number,
            expires.timestamp(),
        );
        let mut headers = Vec::new();
        if let Some(d) = part.sha256 {
            use base64::Engine;
            headers.push((
                "x-amz-checksum-sha256".to_string(),
                base64::engine::general_purpose::STANDARD.encode(d),
            ));
            headers.push((
                "x-amz-sdk-checksum-algorithm".to_string(),
                "SHA256".to_string(),
            ));
        }
        Ok(PartUrl {
            url: format!(
                "{}/v1/files/{}/parts/{}?{query}",
                self.public_url.trim_end_matches('/'),
                object.file_id,
                part.number
            ),
            headers,
        })
    }

    fn receive_part<'a>(
        &'a self,
        object: &'a ObjectRef,
        part: &'a PartPlan,
        body: LocalBoxStream<'a, Result<Bytes, String>>,
    ) -> LocalBoxFuture<'a, Result<[u8; 32], PartRefused>> {
        self.write_part(object, part, body).boxed_local()
    }

    fn complete(
        &self,
        object: ObjectRef,
        _upload_id: String,
        parts: Vec<PartPlan>,
        expected: Expected,
    ) -> BoxFuture<'_, Result<Assembled, CompleteError>> {
        let me = LocalFiles {
            root: self.root.clone(),
            hasher: self.hasher.clone(),
            public_url: self.public_url.clone(),
        };
        async move {
            tokio::task::spawn_blocking(move || me.assemble(&object, &parts, &expected))
                .await
                .map_err(|e| CompleteError::Io(io::Error::other(e)))?
        }
        .boxed()
    }

    fn read(
        &self,
        object: ObjectRef,
    ) -> BoxFuture<'_, io::Result<BoxStream<'static, io::Result<Bytes>>>> {
        let path = self.object_path(&object);
        async move { Ok(stream_file(tokio::fs::File::open(path).await?)) }.boxed()
    }

    fn delete(&self, object: ObjectRef) -> BoxFuture<'_, io::Result<()>> {
        let path = self.object_path(&object);
        blocking(move || absent_ok(fs::remove_file(path)))
    }

    fn abort(&self, object: ObjectRef, _upload_id: String) -> BoxFuture<'_, io::Result<()>> {
        let dir = self.uploads(&object);
        blocking(move || absent_ok(fs::remove_dir_all(dir)))
    }
}
