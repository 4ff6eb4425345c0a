//! `[email]`: how e-mail leaves, and how the sender behaves.

use serde::{Deserialize, Serialize};

use super::{redacted_url, ConfigError};

/// How e-mail leaves: receipts with license keys, subscription notices, keys sent again.
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EmailSettings {
    /// `file` (each message an `.eml` file under `<data_dir>/mail/`), `smtp` or `none`.
    pub transport: EmailTransport,
    /// With `transport = "smtp"`: `smtp://host:25` (plain, or `?tls=required` for
    /// STARTTLS), `smtps://host:465` (TLS), with `user:password@` when the server asks.
    pub smtp_url: String,
    /// The sender: `Name <address>`; the organization's name replaces the name.
    pub from: String,
    /// The wait after a first failed attempt; it doubles after each (at most 6 hours).
    pub retry_base_ms: u64,
    /// Attempts before a message is given up as failed.
    pub max_attempts: u32,
    /// How long one SMTP conversation may take, whole: connecting, the greeting, every
    /// command and answer, the data.
    pub smtp_timeout_secs: u64,
    /// Messages sent at once (each worker holds one conversation); sign-in codes have one
    /// more worker of their own.
    pub workers: usize,
    /// `/readyz` answers 503 (and `/metrics` counts the worker stuck) when a sender worker
    /// has not come back for this long; keep it above `smtp_timeout_secs`.
    pub stuck_after_secs: u64,
    /// A cancellation notice waits this long before it is sent: one undone meanwhile is not
    /// sent, and repeats within it are one notice.
    pub notice_window_secs: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmailTransport {
    #[default]
    File,
    Smtp,
    None,
}

impl Default for EmailSettings {
    fn default() -> Self {
        Self {
            transport: EmailTransport::File,
            smtp_url: String::new(),
            from: "Tollgate <noreply@localhost>".into(),
            retry_base_ms: 30_000,
            max_attempts: 12,
            smtp_timeout_secs: 30,
            workers: 4,
            stuck_after_secs: 120,
            notice_window_secs: 30,
        }
    }
}

/// The SMTP password never reaches a log line.
impl std::fmt::Debug for EmailSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmailSettings")
            .field("transport", &self.transport)
            .field("smtp_url", &redacted_url(&self.smtp_url))
            .field("from", &self.from)
            .field("retry_base_ms", &self.retry_base_ms)
            .field("max_attempts", &self.max_attempts)
            .field("smtp_timeout_secs", &self.smtp_timeout_secs)
            .field("workers", &self.workers)
            .field("stuck_after_secs", &self.stuck_after_secs)
            .field("notice_window_secs", &self.notice_window_secs)
            .finish()
    }
}

impl EmailSettings {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, why: &str| Err(ConfigError::Invalid(format!("email.{key}: {why}")));
        if self.from.parse::<lettre::message::Mailbox>().is_err() {
            return bad("from", "expected an address, or `Name <address>`");
        }
        if self.max_attempts == 0 {
            return bad("max_attempts", "must be > 0");
        }
        if self.retry_base_ms == 0 {
            return bad("retry_base_ms", "must be > 0");
        }
        if self.smtp_timeout_secs == 0 {
            return bad("smtp_timeout_secs", "must be > 0");
        }
        if self.workers == 0 || self.workers > 64 {
            return bad("workers", "must be between 1 and 64");
        }
        if self.stuck_after_secs == 0 {
            return bad("stuck_after_secs", "must be > 0");
        }
        // A notice is due at its window's end: a window longer than a day would let a
        // cancellation told after the notice left share its id, and never be told.
        if self.notice_window_secs > 86_400 {
            return bad("notice_window_secs", "must be at most 86400 (a day)");
        }
        if self.transport != EmailTransport::Smtp {
            return Ok(());
        }
        match url::Url::parse(&self.smtp_url) {
            Ok(u) if matches!(u.scheme(), "smtp" | "smtps") && u.host_str().is_some() => Ok(()),
            _ => bad(
                "smtp_url",
                "expected smtp://host[:port] or smtps://host[:port] (needed with email.transport = \"smtp\")",
            ),
        }
    }
}
