//! The snapshot codec: bincode 2 (standard configuration) behind two functions, so that a
//! later move to another format touches this file only.
//!
//! bincode is not self-describing: adding a field changes the bytes, and
//! `#[serde(default)]`/`skip_serializing_if` break round trips. Every stored type therefore
//! carries a format version in its envelope (see [`crate::Record::VERSION`]) and keeps a
//! golden-bytes test of each released version.

use serde::{de::DeserializeOwned, Serialize};

use crate::StorageError;

fn config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// Encodes a value with bincode's standard configuration.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, StorageError> {
    bincode::serde::encode_to_vec(value, config())
        .map_err(|e| StorageError::Corrupt(format!("encode failed: {e}")))
}

/// Decodes a value written by [`encode`]; trailing bytes are an error.
pub fn decode<T: DeserializeOwned>(
    collection: &'static str,
    version: u16,
    bytes: &[u8],
) -> Result<T, StorageError> {
    let (value, read) =
        bincode::serde::decode_from_slice(bytes, config()).map_err(|e| StorageError::Codec {
            collection,
            version,
            reason: e.to_string(),
        })?;
    if read != bytes.len() {
        return Err(StorageError::Codec {
            collection,
            version,
            reason: format!("{} trailing bytes", bytes.len() - read),
        });
    }
    Ok(value)
}

/// The error for a format version this build cannot read.
pub fn unknown_version(collection: &'static str, version: u16) -> StorageError {
    StorageError::Codec {
        collection,
        version,
        reason: "unknown format version".into(),
    }
}

/// Stored form of a record: `[u64 revision][u16 format version][payload]`, big-endian.
pub(crate) fn seal(rev: u64, version: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(10 + payload.len());
    out.extend_from_slice(&rev.to_be_bytes());
    out.extend_from_slice(&version.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// Splits a stored record into (revision, format version, payload).
pub(crate) fn open(bytes: &[u8]) -> Result<(u64, u16, &[u8]), StorageError> {
    let (rev, rest) = bytes
        .split_first_chunk::<8>()
        .ok_or_else(|| StorageError::Corrupt("record shorter than its envelope".into()))?;
    let (version, payload) = rest
        .split_first_chunk::<2>()
        .ok_or_else(|| StorageError::Corrupt("record shorter than its envelope".into()))?;
    Ok((
        u64::from_be_bytes(*rev),
        u16::from_be_bytes(*version),
        payload,
    ))
}

/// A sealed record decoded: its revision and value (on either engine).
pub(crate) fn open_stored<R: crate::Record>(
    bytes: &[u8],
) -> Result<crate::Stored<R>, StorageError> {
    let (rev, version, payload) = open(bytes)?;
    Ok(crate::Stored {
        rev,
        value: R::decode(version, payload)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        id: u32,
        name: String,
        tags: Vec<String>,
        limit: Option<i64>,
    }

    fn sample() -> Sample {
        Sample {
            id: 7,
            name: "tollgate".into(),
            tags: vec!["a".into()],
            limit: Some(-3),
        }
    }

    #[test]
    fn round_trip() {
        let bytes = encode(&sample()).unwrap();
        assert_eq!(decode::<Sample>("sample", 1, &bytes).unwrap(), sample());
    }

    /// The exact bytes of bincode 2's standard configuration: if this changes, every stored
    /// record changes with it, so a dependency bump must not slip through.
    #[test]
    fn golden_bytes() {
        let bytes = encode(&sample()).unwrap();
        assert_eq!(
            bytes,
            vec![7, 8, b't', b'o', b'l', b'l', b'g', b'a', b't', b'e', 1, 1, b'a', 1, 5]
        );
    }

    #[test]
    fn trailing_bytes_are_rejected() {
        let mut bytes = encode(&sample()).unwrap();
        bytes.push(0);
        assert!(matches!(
            decode::<Sample>("sample", 1, &bytes),
            Err(StorageError::Codec { .. })
        ));
    }

    #[test]
    fn truncated_bytes_are_rejected() {
        let bytes = encode(&sample()).unwrap();
        assert!(decode::<Sample>("sample", 1, &bytes[..4]).is_err());
    }

    #[test]
    fn envelope_round_trip_and_golden() {
        let sealed = seal(3, 2, &[9, 9]);
        assert_eq!(sealed, vec![0, 0, 0, 0, 0, 0, 0, 3, 0, 2, 9, 9]);
        let (rev, version, payload) = open(&sealed).unwrap();
        assert_eq!((rev, version, payload), (3, 2, &[9u8, 9][..]));
        assert!(open(&sealed[..9]).is_err());
    }
}
