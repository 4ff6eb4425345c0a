//! Update feeds' signatures and formats: an organization's update-signing key signs each
//! artifact once, at publish, as minisign does (Tauri's `signature`) and as plain ed25519
//! over the bytes (Sparkle's `edSignature`), reading the bytes twice in chunks, never
//! whole; [`feeds`] writes electron-updater's YAML and Sparkle's appcast.

pub mod feeds;

use std::sync::Mutex;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use blake2::{Blake2b512, Digest};
use ed25519_dalek::hazmat::{raw_sign_byupdate, ExpandedSecretKey};
use ed25519_dalek::{Signer as _, SigningKey};
use sha2::Sha512;

use crate::domain::release::ArtifactSignatures;

/// What the two passes over a file disagreed on, or the reader's failure.
#[derive(Debug)]
pub enum SignError<E> {
    /// The reader failed.
    Read(E),
    /// The two passes did not read the same bytes (the file changed underneath).
    Unstable,
}

/// The signing half of an organization's update-signing key.
pub struct UpdateSigner {
    key: SigningKey,
    keynum: [u8; 8],
}

/// minisign's key id as its public key file names it: the key number as a little-endian
/// integer, in upper-case hex.
fn key_id(keynum: &[u8; 8]) -> String {
    format!("{:016X}", u64::from_le_bytes(*keynum))
}

impl UpdateSigner {
    pub fn new(seed: &[u8; 32], keynum: [u8; 8]) -> Self {
        Self {
            key: SigningKey::from_bytes(seed),
            keynum,
        }
    }

    /// The 32-byte public key.
    pub fn public(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// Sparkle's `SUPublicEDKey`: the public key in base64.
    pub fn sparkle_public_key(&self) -> String {
        STANDARD.encode(self.public())
    }

    /// minisign's public key file: `Ed`, the key number and the key, in base64, after an
    /// untrusted comment naming the key id.
    pub fn minisign_public_key(&self) -> String {
        let mut raw = Vec::with_capacity(42);
        raw.extend_from_slice(b"Ed");
        raw.extend_from_slice(&self.keynum);
        raw.extend_from_slice(&self.public());
        format!(
            "untrusted comment: minisign public key {}\n{}\n",
            key_id(&self.keynum),
            STANDARD.encode(raw)
        )
    }

    /// Tauri's `pubkey`: the minisign public key file in base64.
    pub fn tauri_public_key(&self) -> String {
        STANDARD.encode(self.minisign_public_key())
    }

    /// minisign's signature file for a file whose BLAKE2b-512 is `prehash` (the `ED`
    /// form), with the trusted comment `timestamp:<t>\tfile:<name>\tversion:<v>`.
    pub fn minisign(&self, prehash: &[u8], timestamp: i64, file: &str, version: &str) -> String {
        let sig = self.key.sign(prehash).to_bytes();
        let mut raw = Vec::with_capacity(74);
        raw.extend_from_slice(b"ED");
        raw.extend_from_slice(&self.keynum);
        raw.extend_from_slice(&sig);
        // The comment is one line: no tab or line break of a name may break its fields.
        let clean = |s: &str| s.replace(['\t', '\r', '\n'], " ");
        let trusted = format!(
            "timestamp:{timestamp}\tfile:{}\tversion:{}",
            clean(file),
            clean(version)
        );
        let mut global = Vec::with_capacity(64 + trusted.len());
        global.extend_from_slice(&sig);
        global.extend_from_slice(trusted.as_bytes());
        let global = self.key.sign(&global).to_bytes();
        format!(
            "untrusted comment: signature from tollgate update key {}\n{}\ntrusted comment: {trusted}\n{}\n",
            key_id(&self.keynum),
            STANDARD.encode(raw),
            STANDARD.encode(global)
        )
    }

    /// Both signatures of a file whose bytes `pass` feeds to its sink, in chunks, each time
    /// it is called (twice: ed25519 hashes the message twice). Each pass also hashes the
    /// bytes with BLAKE2b-512 (minisign's prehash); passes that disagree sign nothing.
    pub fn sign_file<E>(
        &self,
        pass: impl Fn(&mut dyn FnMut(&[u8])) -> Result<(), E>,
        timestamp: i64,
        file: &str,
        version: &str,
    ) -> Result<ArtifactSignatures, SignError<E>> {
        let prehashes: Mutex<Vec<[u8; 64]>> = Mutex::new(Vec::new());
        let failure: Mutex<Option<E>> = Mutex::new(None);
        let esk = ExpandedSecretKey::from(self.key.as_bytes());
        let signed = raw_sign_byupdate::<Sha512, _>(
            &esk,
            |digest: &mut Sha512| {
                let mut blake = Blake2b512::new();
                let read = pass(&mut |chunk: &[u8]| {
                    Digest::update(digest, chunk);
                    blake.update(chunk);
                });
                match read {
                    Ok(()) => {
                        if let Ok(mut p) = prehashes.lock() {
                            p.push(blake.finalize().into());
                        }
                        Ok(())
                    }
                    Err(e) => {
                        if let Ok(mut f) = failure.lock() {
                            f.get_or_insert(e);
                        }
                        Err(ed25519_dalek::SignatureError::new())
                    }
                }
            },
            &self.key.verifying_key(),
        );
        if let Some(e) = failure.into_inner().ok().flatten() {
            return Err(SignError::Read(e));
        }
        let prehashes = prehashes.into_inner().unwrap_or_default();
        let (Ok(sig), [first, second]) = (signed, prehashes.as_slice()) else {
            return Err(SignError::Unstable);
        };
        if first != second {
            return Err(SignError::Unstable);
        }
        Ok(ArtifactSignatures {
            minisign: self.minisign(first, timestamp, file, version),
            ed25519: sig.to_bytes().to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signature, Verifier, VerifyingKey};

    fn signer() -> UpdateSigner {
        UpdateSigner::new(&[7; 32], [1, 2, 3, 4, 5, 6, 7, 8])
    }

    type Sink<'a> = &'a mut dyn FnMut(&[u8]);

    /// A reader that feeds `data` in chunks of 5 bytes.
    fn chunks(data: &[u8]) -> impl Fn(Sink<'_>) -> Result<(), String> + '_ {
        move |sink| {
            data.chunks(5).for_each(&mut *sink);
            Ok(())
        }
    }

    fn b64(s: &str) -> Vec<u8> {
        STANDARD.decode(s).unwrap()
    }

    #[test]
    fn the_sparkle_signature_is_plain_ed25519_over_the_bytes() {
        let s = signer();
        let data = b"the application archive, 40-odd bytes long".to_vec();
        let sigs = s
            .sign_file(chunks(&data), 1_700_000_000, "App.zip", "1.2.0")
            .unwrap();
        let pk =
            VerifyingKey::from_bytes(&b64(&s.sparkle_public_key()).try_into().unwrap()).unwrap();
        let sig = Signature::from_slice(&sigs.ed25519).unwrap();
        assert!(pk.verify(&data, &sig).is_ok());
        // Another byte: refused.
        let mut other = data.clone();
        other[0] ^= 1;
        assert!(pk.verify(&other, &sig).is_err());
        // The same as signing the bytes whole.
        assert_eq!(s.key.sign(&data).to_bytes().to_vec(), sigs.ed25519);
    }

    #[test]
    fn the_minisign_signature_verifies_as_tauri_reads_it() {
        let s = signer();
        let data = vec![42u8; 1000];
        let sigs = s
            .sign_file(chunks(&data), 1_700_000_000, "App.AppImage", "1.2.0")
            .unwrap();
        // Tauri's pubkey: base64 of the public key file; its second line is base64 of
        // "Ed" | keynum | key.
        let pub_text = String::from_utf8(b64(&s.tauri_public_key())).unwrap();
        let lines: Vec<&str> = pub_text.lines().collect();
        assert_eq!(
            lines[0],
            "untrusted comment: minisign public key 0807060504030201"
        );
        let praw = b64(lines[1]);
        assert_eq!(&praw[..2], b"Ed");
        let pk = VerifyingKey::from_bytes(&praw[10..42].try_into().unwrap()).unwrap();
        // The signature file: 4 lines.
        let lines: Vec<&str> = sigs.minisign.lines().collect();
        assert_eq!(lines.len(), 4);
        let raw = b64(lines[1]);
        assert_eq!(&raw[..2], b"ED");
        assert_eq!(raw[2..10], praw[2..10], "the key numbers match");
        let sig = Signature::from_slice(&raw[10..74]).unwrap();
        let prehash = Blake2b512::digest(&data);
        assert!(pk.verify(&prehash, &sig).is_ok());
        let trusted = lines[2].strip_prefix("trusted comment: ").unwrap();
        assert_eq!(
            trusted,
            "timestamp:1700000000\tfile:App.AppImage\tversion:1.2.0"
        );
        let mut global = raw[10..74].to_vec();
        global.extend_from_slice(trusted.as_bytes());
        let gsig = Signature::from_slice(&b64(lines[3])).unwrap();
        assert!(pk.verify(&global, &gsig).is_ok());
        // A changed trusted comment no longer verifies.
        let mut forged = raw[10..74].to_vec();
        forged.extend_from_slice(b"timestamp:1700000000\tfile:App.AppImage\tversion:9.9.9");
        assert!(pk.verify(&forged, &gsig).is_err());
    }

    #[test]
    fn passes_that_read_different_bytes_or_fail_sign_nothing() {
        let s = signer();
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let changing = |sink: &mut dyn FnMut(&[u8])| -> Result<(), String> {
            let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            sink(&[n as u8; 10]);
            Ok(())
        };
        assert!(matches!(
            s.sign_file(changing, 0, "f", "1.0.0"),
            Err(SignError::Unstable)
        ));
        let failing = |_: &mut dyn FnMut(&[u8])| -> Result<(), String> { Err("gone".into()) };
        assert!(matches!(
            s.sign_file(failing, 0, "f", "1.0.0"),
            Err(SignError::Read(e)) if e == "gone"
        ));
    }

    #[test]
    fn tabs_and_line_breaks_cannot_add_trusted_fields() {
        let sig = signer().minisign(&[0; 64], 5, "a\tversion:9.9.9", "1.0.0\nx");
        let trusted = sig.lines().nth(2).unwrap();
        assert_eq!(
            trusted,
            "trusted comment: timestamp:5\tfile:a version:9.9.9\tversion:1.0.0 x"
        );
    }
}
