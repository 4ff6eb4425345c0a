//! RSA keys that sign id_tokens, and the JWKS that publishes them.
//!
//! A key is generated the first time one is needed (the first token response or JWKS read),
//! stored, and reloaded on later starts, so tokens stay verifiable across restarts. Key
//! generation is lazy rather than at start-up: it costs a second or more of CPU, which a
//! service (or a test) that never issues an id_token should not pay.
//! [`Keyring::rotate`] makes a new key the signer and keeps the old one published until
//! `retire_after`, when every id_token it signed has expired.

use std::sync::RwLock;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::{DateTime, Duration, Utc};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey};
use rsa::traits::PublicKeyParts;
use rsa::RsaPrivateKey;
use serde::Serialize;
use tollgate_storage::{Batch, Expect, StorageError, Store};

use crate::api::oauth2::{Jwk, JwkSet};
use crate::domain::oauth2::SigningKey;

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("storage: {0}")]
    Storage(#[from] StorageError),
    #[error("key: {0}")]
    Key(String),
}

struct LoadedKey {
    record: SigningKey,
    encoding: EncodingKey,
    n: String,
    e: String,
}

impl LoadedKey {
    fn from_record(record: SigningKey) -> Result<Self, KeyError> {
        let private = RsaPrivateKey::from_pkcs1_der(&record.private_der)
            .map_err(|e| KeyError::Key(e.to_string()))?;
        let encoding = EncodingKey::from_rsa_der(&record.private_der);
        Ok(Self {
            n: URL_SAFE_NO_PAD.encode(private.n().to_bytes_be()),
            e: URL_SAFE_NO_PAD.encode(private.e().to_bytes_be()),
            record,
            encoding,
        })
    }

    fn jwk(&self) -> Jwk {
        Jwk::rs256(&self.record.kid, &self.n, &self.e)
    }
}

/// Generates a new RSA key record (CPU-heavy: call from a blocking thread).
pub fn generate_key(bits: usize, now: DateTime<Utc>) -> Result<SigningKey, KeyError> {
    let mut rng = rand::rngs::OsRng;
    let private = RsaPrivateKey::new(&mut rng, bits).map_err(|e| KeyError::Key(e.to_string()))?;
    let der = private
        .to_pkcs1_der()
        .map_err(|e| KeyError::Key(e.to_string()))?;
    Ok(SigningKey {
        kid: crate::auth::tokens::generate("", 16),
        private_der: der.as_bytes().to_vec(),
        created_at: now,
        retire_after: None,
    })
}

/// How long a node on a shared database trusts its copy of the keys: another node may
/// rotate them.
const SHARED_KEYS_FRESH_FOR: std::time::Duration = std::time::Duration::from_secs(30);

/// The signing keys, loaded from the store on first use (and again every
/// [`SHARED_KEYS_FRESH_FOR`] when other nodes share the store).
#[derive(Default)]
pub struct Keyring {
    keys: RwLock<Option<Vec<LoadedKey>>>,
    /// When `keys` was read from the store.
    loaded_at: RwLock<Option<std::time::Instant>>,
    /// Serialises key generation, so concurrent first uses create one key.
    generating: tokio::sync::Mutex<()>,
    /// How many keys this ring generated: a refresh read before the last of them was
    /// stored would lose it (see [`Keyring::install`]).
    added: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keyring(..)")
    }
}

impl Keyring {
    async fn load(&self, store: &Store) -> Result<(), KeyError> {
        let fresh = self
            .loaded_at
            .read()
            .ok()
            .and_then(|at| *at)
            .is_some_and(|at| !store.is_shared() || at.elapsed() < SHARED_KEYS_FRESH_FOR);
        if fresh && self.keys.read().map(|k| k.is_some()).unwrap_or(false) {
            return Ok(());
        }
        let before = self.added.load(std::sync::atomic::Ordering::SeqCst);
        let loaded = Self::read(store).await?;
        self.install(loaded, before, store.is_shared());
        Ok(())
    }

    /// Every stored key, oldest first.
    async fn read(store: &Store) -> Result<Vec<LoadedKey>, KeyError> {
        let mut loaded = Vec::new();
        for record in store.scan::<SigningKey>().await? {
            loaded.push(LoadedKey::from_record(record.value)?);
        }
        loaded.sort_by_key(|k| k.record.created_at);
        Ok(loaded)
    }

    /// Holds `loaded`, read from the store when this ring had generated `before` keys: on a
    /// first load; on a `shared` store's refresh (this node's own keys are in the store
    /// too), unless a key was generated since the read began: the read may miss it, so
    /// the ring keeps what it has and reads again at its next use.
    fn install(&self, loaded: Vec<LoadedKey>, before: u64, shared: bool) {
        let mut fresh = true;
        if let Ok(mut guard) = self.keys.write() {
            let added_since = self.added.load(std::sync::atomic::Ordering::SeqCst) != before;
            if guard.is_none() || (shared && !added_since) {
                *guard = Some(loaded);
            } else if shared {
                fresh = false;
            }
        }
        if fresh {
            if let Ok(mut at) = self.loaded_at.write() {
                *at = Some(std::time::Instant::now());
            }
        }
    }

    fn has_signer(&self) -> bool {
        self.keys
            .read()
            .map(|k| {
                k.as_ref()
                    .is_some_and(|keys| keys.iter().any(|k| k.record.retire_after.is_none()))
            })
            .unwrap_or(false)
    }

    /// Makes sure a signing key exists, generating and storing one if needed.
    pub async fn ensure(
        &self,
        store: &Store,
        bits: usize,
        now: DateTime<Utc>,
    ) -> Result<(), KeyError> {
        self.load(store).await?;
        if self.has_signer() {
            return Ok(());
        }
        let _guard = self.generating.lock().await;
        if self.has_signer() {
            return Ok(());
        }
        self.add_new_key(store, bits, now).await
    }

    async fn add_new_key(
        &self,
        store: &Store,
        bits: usize,
        now: DateTime<Utc>,
    ) -> Result<(), KeyError> {
        let record = tokio::task::spawn_blocking(move || generate_key(bits, now))
            .await
            .map_err(|e| KeyError::Key(e.to_string()))??;
        let mut batch = Batch::new();
        batch.put(&record, Expect::Absent)?;
        store.commit_durable(&batch).await?;
        let loaded = LoadedKey::from_record(record)?;
        if let Ok(mut guard) = self.keys.write() {
            guard.get_or_insert_with(Vec::new).push(loaded);
            // Under the same lock as the push, so a refresh sees one with the other.
            self.added.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        Ok(())
    }

    /// Retires every current signer (published until `now + keep_published`) and makes a
    /// new key the signer.
    pub async fn rotate(
        &self,
        store: &Store,
        bits: usize,
        now: DateTime<Utc>,
        keep_published: Duration,
    ) -> Result<(), KeyError> {
        self.load(store).await?;
        let _guard = self.generating.lock().await;
        let to_retire: Vec<SigningKey> = self
            .keys
            .read()
            .map(|k| {
                k.iter()
                    .flatten()
                    .filter(|k| k.record.retire_after.is_none())
                    .map(|k| k.record.clone())
                    .collect()
            })
            .unwrap_or_default();
        let mut batch = Batch::new();
        for mut record in to_retire.clone() {
            record.retire_after = Some(now + keep_published);
            batch.put(&record, Expect::Any)?;
        }
        store.commit_durable(&batch).await?;
        if let Ok(mut guard) = self.keys.write() {
            for k in guard.iter_mut().flatten() {
                if to_retire.iter().any(|r| r.kid == k.record.kid) {
                    k.record.retire_after = Some(now + keep_published);
                }
            }
        }
        self.add_new_key(store, bits, now).await
    }

    /// Signs `claims` with the newest unretired key (RS256, with its `kid`).
    pub fn sign<T: Serialize>(&self, claims: &T) -> Result<String, KeyError> {
        let guard = self
            .keys
            .read()
            .map_err(|_| KeyError::Key("keyring lock poisoned".into()))?;
        let key = guard
            .iter()
            .flatten()
            .rev()
            .find(|k| k.record.retire_after.is_none())
            .ok_or_else(|| KeyError::Key("no signing key".into()))?;
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some(key.record.kid.clone());
        jsonwebtoken::encode(&header, claims, &key.encoding)
            .map_err(|e| KeyError::Key(e.to_string()))
    }

    /// The published public keys, newest first; no private parts.
    pub fn jwk_set(&self, now: DateTime<Utc>) -> JwkSet {
        let keys: Vec<Jwk> = self
            .keys
            .read()
            .map(|k| {
                k.iter()
                    .flatten()
                    .rev()
                    .filter(|k| k.record.is_published(now))
                    .map(LoadedKey::jwk)
                    .collect()
            })
            .unwrap_or_default();
        JwkSet { keys }
    }

    /// [`Keyring::jwk_set`] as the JSON document `/.well-known/jwks.json` sends
    /// (`{"keys": [...]}`), for tools and tests that read it as JSON.
    pub fn jwks(&self, now: DateTime<Utc>) -> serde_json::Value {
        serde_json::to_value(self.jwk_set(now)).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{decode, decode_header, DecodingKey, Validation};
    use serde_json::{json, Value};

    #[actix_web::test]
    async fn keys_are_created_once_rotated_and_retired() {
        let store = Store::temporary().unwrap();
        let ring = Keyring::default();
        let t0 = Utc::now();
        ring.ensure(&store, 1024, t0).await.unwrap();
        ring.ensure(&store, 1024, t0).await.unwrap();
        let jwks = ring.jwks(t0);
        assert_eq!(jwks["keys"].as_array().unwrap().len(), 1);
        let first_kid = jwks["keys"][0]["kid"].as_str().unwrap().to_string();
        assert!(jwks["keys"][0].get("d").is_none());

        // A token signed now verifies with the published key.
        let claims = json!({"sub": "x", "exp": (t0 + Duration::hours(1)).timestamp()});
        let token = ring.sign(&claims).unwrap();
        assert_eq!(
            decode_header(&token).unwrap().kid.as_deref(),
            Some(first_kid.as_str())
        );
        let k = &jwks["keys"][0];
        let dk =
            DecodingKey::from_rsa_components(k["n"].as_str().unwrap(), k["e"].as_str().unwrap())
                .unwrap();
        let mut v = Validation::new(Algorithm::RS256);
        v.validate_aud = false;
        assert!(decode::<Value>(&token, &dk, &v).is_ok());

        // Rotation: a new signer, the old key still published until it retires.
        ring.rotate(&store, 1024, t0, Duration::hours(1))
            .await
            .unwrap();
        let jwks = ring.jwks(t0);
        assert_eq!(jwks["keys"].as_array().unwrap().len(), 2);
        let token2 = ring.sign(&claims).unwrap();
        assert_ne!(
            decode_header(&token2).unwrap().kid.as_deref(),
            Some(first_kid.as_str())
        );
        let later = ring.jwks(t0 + Duration::hours(2));
        assert_eq!(later["keys"].as_array().unwrap().len(), 1);
        assert_ne!(later["keys"][0]["kid"], first_kid.as_str());

        // A fresh keyring over the same store loads both, without generating.
        let again = Keyring::default();
        again.ensure(&store, 1024, t0).await.unwrap();
        assert_eq!(again.jwks(t0)["keys"].as_array().unwrap().len(), 2);
        assert_eq!(store.scan::<SigningKey>().await.unwrap().len(), 2);
    }

    #[actix_web::test]
    async fn a_refresh_read_before_a_new_key_was_stored_does_not_drop_it() {
        let store = Store::temporary().unwrap();
        let ring = Keyring::default();
        let t0 = Utc::now();
        ring.ensure(&store, 1024, t0).await.unwrap();
        // Another path of this node reads the keys for a refresh …
        let before = ring.added.load(std::sync::atomic::Ordering::SeqCst);
        let read_then = Keyring::read(&store).await.unwrap();
        assert_eq!(read_then.len(), 1);
        // … this one rotates meanwhile …
        ring.rotate(&store, 1024, t0, Duration::hours(1))
            .await
            .unwrap();
        let signer = decode_header(ring.sign(&json!({"sub": "x"})).unwrap())
            .unwrap()
            .kid;
        // … and the refresh lands last: the new key stays, and signs.
        ring.install(read_then, before, true);
        assert_eq!(ring.jwks(t0)["keys"].as_array().unwrap().len(), 2);
        let after = decode_header(ring.sign(&json!({"sub": "x"})).unwrap())
            .unwrap()
            .kid;
        assert_eq!(after, signer);
        // A refresh read after the rotation is held as it is.
        let before = ring.added.load(std::sync::atomic::Ordering::SeqCst);
        let now_stored = Keyring::read(&store).await.unwrap();
        ring.install(now_stored, before, true);
        assert_eq!(ring.jwks(t0)["keys"].as_array().unwrap().len(), 2);
        assert_eq!(store.scan::<SigningKey>().await.unwrap().len(), 2);
    }
}
