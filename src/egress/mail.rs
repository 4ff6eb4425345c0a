//! E-mail's way out (`[email]`): a message of the outbox built to RFC 5322 with `lettre`
//! (a plain-text and an HTML part, encoded headers, a stable `Message-ID`) and handed to
//! the transport: an SMTP server, an `.eml` file under `<data_dir>/mail/`, or nowhere.
//!
//! One attempt answers a [`Delivery`]: accepted (with the server's answer, or the file
//! written), refused for now (a 4xx answer, no connection, a timeout), refused for good (a
//! 5xx answer, an address that is not one), or skipped (`none`). The outbox record keeps
//! every answer ([`crate::domain::mail::MailMessage::record_attempt`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::AsyncSmtpTransport;
use lettre::{AsyncTransport, Message, Tokio1Executor};
use tokio::sync::Notify;

use crate::config::{redacted_url, EmailSettings, EmailTransport};
use crate::domain::mail::{Delivery, MailMessage, RetryPolicy};

enum Transport {
    File(PathBuf),
    Smtp(AsyncSmtpTransport<Tokio1Executor>),
    None,
}

/// The configured transport, the sender's address, the retry policy, and the outbox's
/// wake-up; owned by `AppState`.
pub struct Mailer {
    transport: Transport,
    from: Mailbox,
    /// The right-hand side of every `Message-ID`: the sending address's domain.
    domain: String,
    pub policy: RetryPolicy,
    wake: Notify,
}

impl Mailer {
    /// The transport of `settings`; a URL lettre cannot use stops start-up naming the key.
    pub fn new(settings: &EmailSettings, data_dir: &Path) -> anyhow::Result<Self> {
        let from: Mailbox = settings
            .from
            .parse()
            .map_err(|e| anyhow::anyhow!("email.from: {e}"))?;
        let transport = match settings.transport {
            EmailTransport::None => Transport::None,
            EmailTransport::File => Transport::File(data_dir.join("mail")),
            EmailTransport::Smtp => {
                let smtp = AsyncSmtpTransport::<Tokio1Executor>::from_url(&settings.smtp_url)
                    .map_err(|e| {
                        anyhow::anyhow!(
                            "email.smtp_url: {} cannot be used: {e}",
                            redacted_url(&settings.smtp_url)
                        )
                    })?
                    .timeout(Some(Duration::from_secs(settings.smtp_timeout_secs)))
                    .build();
                Transport::Smtp(smtp)
            }
        };
        let domain = from.email.domain().to_string();
        Ok(Self {
            transport,
            from,
            domain,
            policy: RetryPolicy {
                base: chrono::Duration::milliseconds(
                    i64::try_from(settings.retry_base_ms).unwrap_or(i64::MAX),
                ),
                max_attempts: settings.max_attempts,
            },
            wake: Notify::new(),
        })
    }

    /// Tells the sender that messages are waiting.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Waits until woken, or `at_most`.
    pub async fn woken(&self, at_most: Duration) {
        let _ = tokio::time::timeout(at_most, self.wake.notified()).await;
    }

    /// The `Message-ID` of a message.
    pub fn message_id(&self, m: &MailMessage) -> String {
        m.message_id(&self.domain)
    }

    /// Builds the message as it goes out.
    pub fn build(&self, m: &MailMessage) -> Result<Message, String> {
        let to: Mailbox =
            m.to.parse()
                .map_err(|e| format!("not an address: {:?}: {e}", m.to))?;
        let from = Mailbox::new(
            Some(m.from_name.clone()).filter(|n| !n.trim().is_empty()),
            self.from.email.clone(),
        );
        let mut builder = Message::builder()
            .from(from)
            .to(to)
            .subject(m.subject.clone())
            .date(SystemTime::from(m.created_at))
            .message_id(Some(self.message_id(m)));
        if let Some(reply_to) = m
            .reply_to
            .as_deref()
            .and_then(|r| r.parse::<Mailbox>().ok())
        {
            builder = builder.reply_to(reply_to);
        }
        builder
            .multipart(MultiPart::alternative_plain_html(
                m.text.clone(),
                m.html.clone(),
            ))
            .map_err(|e| format!("cannot build the message: {e}"))
    }

    /// One attempt to send `m`.
    pub async fn send(&self, m: &MailMessage) -> Delivery {
        if matches!(self.transport, Transport::None) {
            return Delivery::Skipped;
        }
        let message = match self.build(m) {
            Ok(message) => message,
            Err(e) => return Delivery::Permanent(e),
        };
        match &self.transport {
            Transport::None => Delivery::Skipped,
            Transport::File(dir) => write_file(dir, m, &message).await,
            Transport::Smtp(smtp) => match smtp.send(message).await {
                Ok(response) => Delivery::Accepted(
                    format!(
                        "{} {}",
                        response.code(),
                        response.message().collect::<Vec<_>>().join(" ")
                    )
                    .trim()
                    .to_string(),
                ),
                // Refused credentials are the operator's to fix, not the recipient's: the
                // message waits for the next attempt instead of failing for good.
                Err(e) if e.is_permanent() && !is_auth_refusal(&e) => {
                    Delivery::Permanent(e.to_string())
                }
                Err(e) => Delivery::Transient(e.to_string()),
            },
        }
    }
}

/// 530 (authentication required), 534 (mechanism too weak), 535 (credentials invalid),
/// 538 (encryption required for the mechanism).
fn is_auth_refusal(e: &lettre::transport::smtp::Error) -> bool {
    e.status()
        .is_some_and(|code| matches!(u16::from(code), 530 | 534 | 535 | 538))
}

/// Writes the message as `<dir>/<id>.eml`, whole or not at all (a temporary file renamed).
async fn write_file(dir: &Path, m: &MailMessage, message: &Message) -> Delivery {
    let path = dir.join(format!("{}.eml", m.id.uuid()));
    let tmp = dir.join(format!(".{}.eml.tmp", m.id.uuid()));
    let bytes = message.formatted();
    let written = async {
        tokio::fs::create_dir_all(dir).await?;
        tokio::fs::write(&tmp, &bytes).await?;
        tokio::fs::rename(&tmp, &path).await
    }
    .await;
    match written {
        Ok(()) => {
            tracing::info!(to = %m.to, kind = m.kind.as_str(), path = %path.display(), "e-mail written");
            Delivery::Accepted(format!("written to {}", path.display()))
        }
        Err(e) => Delivery::Transient(format!("cannot write {}: {e}", path.display())),
    }
}
