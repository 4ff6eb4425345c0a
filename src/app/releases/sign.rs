//! The organization's update-signing key (made on first use, never rotated) and the
//! signatures of an artifact, computed once at publish from the file's bytes as the file
//! backend streams them: a blocking task signs, asking this task for each pass's chunks
//! through a bounded channel, so memory stays a few chunks whatever the file's size.

use std::io;

use actix_web::web::Bytes;
use futures_util::StreamExt;
use rand::RngCore;
use tokio::sync::mpsc;
use tollgate_storage::{Batch, Expect, StorageError};

use crate::domain::file::StoredFile;
use crate::domain::ids::OrganizationId;
use crate::domain::organization::Organization;
use crate::domain::release::{ArtifactSignatures, UpdateSigningKey};
use crate::error::AppError;
use crate::state::AppState;
use crate::updates::{SignError, UpdateSigner};

/// Chunks in flight between the reader and the signer.
const IN_FLIGHT: usize = 4;

/// The signer of a stored key.
pub fn signer_of(key: &UpdateSigningKey) -> Result<UpdateSigner, AppError> {
    let seed: [u8; 32] = key
        .seed
        .as_slice()
        .try_into()
        .map_err(|_| AppError::internal("update signing key: not a 32-byte seed"))?;
    Ok(UpdateSigner::new(&seed, key.keynum))
}

/// The organization's update-signing key, made on first use (`None`: no such
/// organization).
pub async fn ensure_key(
    state: &AppState,
    org: OrganizationId,
) -> Result<Option<UpdateSigningKey>, AppError> {
    if let Some(k) = state.store.get::<UpdateSigningKey>(&org.key()).await? {
        return Ok(Some(k.value));
    }
    let exists = state
        .store
        .get::<Organization>(&org.key())
        .await?
        .is_some_and(|o| o.value.deleted_at.is_none());
    if !exists {
        return Ok(None);
    }
    let mut seed = [0u8; 32];
    let mut keynum = [0u8; 8];
    rand::rngs::OsRng.fill_bytes(&mut seed);
    rand::rngs::OsRng.fill_bytes(&mut keynum);
    let public = UpdateSigner::new(&seed, keynum).public();
    let key = UpdateSigningKey {
        organization_id: org,
        seed: seed.to_vec(),
        public: public.to_vec(),
        keynum,
        created_at: state.now(),
    };
    let mut batch = Batch::new();
    batch.put(&key, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) => Ok(Some(key)),
        // Made by another request (or node) first: theirs, for good.
        Err(StorageError::Conflict { .. }) => Ok(state
            .store
            .get::<UpdateSigningKey>(&org.key())
            .await?
            .map(|k| k.value)),
        Err(e) => Err(e.into()),
    }
}

/// The signatures of uploaded file `file` as artifact of `version`, its bytes read twice
/// through the file backend, in chunks.
pub async fn sign_file(
    state: &AppState,
    key: &UpdateSigningKey,
    file: &StoredFile,
    version: &str,
) -> Result<ArtifactSignatures, AppError> {
    let signer = signer_of(key)?;
    let object = crate::app::files::object_of(file);
    let (name, version) = (file.name.clone(), version.to_string());
    let timestamp = state.now().timestamp();
    let (passes, mut asked) = mpsc::unbounded_channel::<mpsc::Sender<io::Result<Bytes>>>();
    let signing = tokio::task::spawn_blocking(move || {
        let pass = |sink: &mut dyn FnMut(&[u8])| -> io::Result<()> {
            let (tx, mut rx) = mpsc::channel(IN_FLIGHT);
            passes
                .send(tx)
                .map_err(|_| io::Error::other("the reader stopped"))?;
            while let Some(chunk) = rx.blocking_recv() {
                sink(&chunk?);
            }
            Ok(())
        };
        signer.sign_file(pass, timestamp, &name, &version)
    });
    let backend = state.files.backend.clone();
    let reader = async move {
        // One pass per request, until the signer is done (its sender dropped).
        while let Some(tx) = asked.recv().await {
            match backend.read(object.clone()).await {
                Ok(mut chunks) => {
                    while let Some(chunk) = chunks.next().await {
                        let failed = chunk.is_err();
                        if tx.send(chunk).await.is_err() || failed {
                            break;
                        }
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                }
            }
        }
    };
    let (signed, ()) = tokio::join!(signing, reader);
    match signed {
        Ok(Ok(s)) => Ok(s),
        Ok(Err(SignError::Read(e))) => Err(AppError::internal(format!(
            "file {}: not readable to sign: {e}",
            file.id
        ))),
        Ok(Err(SignError::Unstable)) => Err(AppError::internal(format!(
            "file {}: its bytes changed while being signed",
            file.id
        ))),
        Err(e) => Err(AppError::internal(e)),
    }
}
