use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::{Record, UniqueKey};

use super::ids::UserId;

/// A person who signs in: the admin created at bootstrap, or a user who signed up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct User {
    pub id: UserId,
    pub email: String,
    pub email_verified: bool,
    /// argon2id PHC string; `None` for users who cannot sign in with a password.
    pub password_hash: Option<String>,
    pub is_admin: bool,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
}

pub const USER_EMAIL: &str = "user_email";

impl User {
    pub fn email_key(email: &str) -> UniqueKey {
        UniqueKey::new(USER_EMAIL, Vec::new(), super::email::normalize_email(email))
    }
}

impl Record for User {
    crate::record_v1!(User, "user");
    const UNIQUES: &'static [&'static str] = &[USER_EMAIL];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![User::email_key(&self.email)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn golden_bytes_v1() {
        let u = User {
            id: UserId(uuid::Uuid::from_u128(1)),
            email: "a@b.c".into(),
            email_verified: true,
            password_hash: None,
            is_admin: false,
            created_at: Utc.timestamp_opt(0, 0).unwrap(),
            modified_at: None,
        };
        let bytes = u.encode().unwrap();
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "1000000000000000000000000000000001056140622e6301000014313937302d30312d30315430303a30303a30305a00"
        );
        assert_eq!(User::decode(1, &bytes).unwrap(), u);
    }
}
