//! Signed part URLs of the local backend: `PUT {public_url}/v1/files/{id}/parts/{n}
//! ?upload_id=…&expires=…&signature=…`. The URL is the credential, as a presigned S3 URL:
//! its MAC (the server's keyed hash) covers the file, the upload, the part number and the
//! expiry, so none of them can be changed.

use chrono::{DateTime, Utc};

use crate::auth::signed_link;
pub use crate::auth::signed_link::Checked;
use crate::auth::tokens::TokenHasher;
use crate::domain::ids::FileId;

fn message(id: FileId, upload_id: &str, number: u32, expires: i64) -> String {
    format!("file-part\0{id}\0{upload_id}\0{number}\0{expires}")
}

/// The signature of part `number` of upload `upload_id` of file `id`, expiring at `expires`.
pub fn signature(
    hasher: &TokenHasher,
    id: FileId,
    upload_id: &str,
    number: u32,
    expires: i64,
) -> String {
    signed_link::signature(hasher, &message(id, upload_id, number, expires))
}

/// The query of a part URL (after `?`).
pub fn query(
    hasher: &TokenHasher,
    id: FileId,
    upload_id: &str,
    number: u32,
    expires: i64,
) -> String {
    let sig = signature(hasher, id, upload_id, number, expires);
    let mut q = form_urlencoded::Serializer::new(String::new());
    q.append_pair("upload_id", upload_id)
        .append_pair("expires", &expires.to_string())
        .append_pair("signature", &sig);
    q.finish()
}

/// Whether `given` signs this part URL, and whether it still works at `now`.
pub fn check(
    hasher: &TokenHasher,
    id: FileId,
    upload_id: &str,
    number: u32,
    expires: i64,
    given: &str,
    now: DateTime<Utc>,
) -> Checked {
    signed_link::check(
        hasher,
        &message(id, upload_id, number, expires),
        expires,
        given,
        now,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hasher() -> TokenHasher {
        TokenHasher::new(b"0123456789abcdef0123456789abcdef")
    }

    #[test]
    fn a_signed_part_url_checks_until_it_expires() {
        let h = hasher();
        let id = FileId::new();
        let now = Utc::now();
        let exp = now.timestamp() + 60;
        let sig = signature(&h, id, "up", 1, exp);
        assert_eq!(check(&h, id, "up", 1, exp, &sig, now), Checked::Good);
        let later = now + chrono::Duration::seconds(61);
        assert_eq!(check(&h, id, "up", 1, exp, &sig, later), Checked::Expired);
    }

    #[test]
    fn changing_any_signed_part_forges_it() {
        let h = hasher();
        let id = FileId::new();
        let now = Utc::now();
        let exp = now.timestamp() + 60;
        let sig = signature(&h, id, "up", 1, exp);
        assert_eq!(check(&h, id, "up", 2, exp, &sig, now), Checked::Forged);
        assert_eq!(check(&h, id, "other", 1, exp, &sig, now), Checked::Forged);
        assert_eq!(check(&h, id, "up", 1, exp + 1, &sig, now), Checked::Forged);
        assert_eq!(
            check(&h, FileId::new(), "up", 1, exp, &sig, now),
            Checked::Forged
        );
        assert_eq!(
            check(&h, id, "up", 1, exp, "garbage!", now),
            Checked::Forged
        );
        let other = TokenHasher::new(b"another-secret-another-secret-xx");
        assert_eq!(check(&other, id, "up", 1, exp, &sig, now), Checked::Forged);
    }
}
