//! Order-preserving key encodings: the byte order of an encoded key is the order of the
//! values it encodes, so sled's lexicographic order sorts index entries correctly.
//!
//! - unsigned integers: big-endian;
//! - signed integers: big-endian with the sign bit flipped (negatives sort first);
//! - strings/bytes: `0x00` escaped as `0x00 0xFF`, terminated by `0x00 0x00`, so a prefix
//!   sorts before its extensions and components can follow;
//! - descending components: every byte inverted ([`KeyBuf::desc`]).

/// Builds a composite, order-preserving key.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct KeyBuf(Vec<u8>);

impl KeyBuf {
    pub fn new() -> Self {
        Self(Vec::new())
    }

    pub fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }

    pub fn i64(mut self, v: i64) -> Self {
        self.0
            .extend_from_slice(&((v as u64) ^ (1 << 63)).to_be_bytes());
        self
    }

    /// A nullable integer: `None` sorts after every value (Polar sorts nulls last).
    pub fn opt_i64(self, v: Option<i64>) -> Self {
        match v {
            Some(v) => self.u8(0).i64(v),
            None => self.u8(1),
        }
    }

    pub fn u8(mut self, v: u8) -> Self {
        self.0.push(v);
        self
    }

    /// Fixed-width bytes (e.g. a 16-byte UUID): no terminator needed.
    pub fn fixed(mut self, bytes: &[u8]) -> Self {
        self.0.extend_from_slice(bytes);
        self
    }

    /// Variable-length bytes, escaped and terminated so later components still sort.
    pub fn bytes(mut self, bytes: &[u8]) -> Self {
        for &b in bytes {
            self.0.push(b);
            if b == 0 {
                self.0.push(0xFF);
            }
        }
        self.0.extend_from_slice(&[0, 0]);
        self
    }

    pub fn str(self, s: &str) -> Self {
        self.bytes(s.as_bytes())
    }

    /// Appends `other` with every byte inverted: that component sorts in descending order.
    pub fn desc(mut self, other: KeyBuf) -> Self {
        self.0.extend(other.0.iter().map(|b| !b));
        self
    }

    pub fn into_vec(self) -> Vec<u8> {
        self.0
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }
}

impl From<KeyBuf> for Vec<u8> {
    fn from(k: KeyBuf) -> Self {
        k.0
    }
}

/// Appends a length-prefixed segment; used for tenants, so that one tenant's prefix can
/// never be the prefix of another's.
pub(crate) fn push_len_prefixed(
    out: &mut Vec<u8>,
    bytes: &[u8],
) -> Result<(), crate::StorageError> {
    let len = u8::try_from(bytes.len())
        .map_err(|_| crate::StorageError::Corrupt("tenant longer than 255 bytes".into()))?;
    out.push(len);
    out.extend_from_slice(bytes);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted_by_key<T: Clone>(values: &[T], key: impl Fn(&T) -> KeyBuf) -> Vec<T> {
        let mut pairs: Vec<(Vec<u8>, T)> = values
            .iter()
            .map(|v| (key(v).into_vec(), v.clone()))
            .collect();
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        pairs.into_iter().map(|(_, v)| v).collect()
    }

    #[test]
    fn signed_integers_sort_numerically() {
        let values = [5i64, -1, 0, i64::MIN, i64::MAX, -100, 42];
        let mut expected = values.to_vec();
        expected.sort();
        assert_eq!(sorted_by_key(&values, |v| KeyBuf::new().i64(*v)), expected);
    }

    #[test]
    fn unsigned_integers_sort_numerically() {
        let values = [5u64, 0, u64::MAX, 256, 255];
        let mut expected = values.to_vec();
        expected.sort();
        assert_eq!(sorted_by_key(&values, |v| KeyBuf::new().u64(*v)), expected);
    }

    #[test]
    fn strings_sort_lexicographically_and_prefix_first() {
        let values = ["abc", "ab", "b", "", "ab\0c", "ab\0", "a"];
        let mut expected: Vec<&str> = values.to_vec();
        expected.sort();
        // A following component must not change the order of the strings.
        assert_eq!(
            sorted_by_key(&values, |v| KeyBuf::new().str(v).u64(u64::MAX)),
            expected
        );
    }

    #[test]
    fn descending_components_invert_order() {
        let values = [3i64, 1, 2];
        assert_eq!(
            sorted_by_key(&values, |v| KeyBuf::new().desc(KeyBuf::new().i64(*v))),
            vec![3, 2, 1]
        );
    }

    #[test]
    fn mixed_direction_composite() {
        // (name asc, amount desc)
        let values = [("b", 1i64), ("a", 1), ("a", 5), ("b", 9)];
        let got = sorted_by_key(&values, |(n, a)| {
            KeyBuf::new().str(n).desc(KeyBuf::new().i64(*a))
        });
        assert_eq!(got, vec![("a", 5), ("a", 1), ("b", 9), ("b", 1)]);
    }

    #[test]
    fn nulls_sort_last() {
        let values = [None, Some(3i64), Some(-2)];
        assert_eq!(
            sorted_by_key(&values, |v| KeyBuf::new().opt_i64(*v)),
            vec![Some(-2), Some(3), None]
        );
    }

    #[test]
    fn tenant_prefix_rejects_long_values() {
        let mut out = Vec::new();
        assert!(push_len_prefixed(&mut out, &[0; 256]).is_err());
        assert!(push_len_prefixed(&mut out, &[0; 16]).is_ok());
        assert_eq!(out.len(), 17);
    }
}
