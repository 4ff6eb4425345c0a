//! E-mail's way out (`[email]`): a message of the outbox built to RFC 5322 with `lettre`
//! (a plain-text and an HTML part, encoded headers, a stable `Message-ID`) and handed to
//! the transport: an SMTP server, an `.eml` file under `<data_dir>/mail/`, or nowhere.
//! A message with files ([`File`]: the sender renders them, e.g. an invoice's PDF, and
//! hands the bytes here) is `multipart/mixed`: the same text-and-HTML alternative first,
//! then one attachment part per file.
//!
//! One attempt answers a [`Delivery`]: accepted (with the server's answer, or the file
//! written), refused for now (a 4xx answer, no connection, a timeout), refused for good (a
//! 5xx answer, an address that is not one), or skipped (`none`). The outbox record keeps
//! every answer ([`crate::domain::mail::MailMessage::record_attempt`]).
//!
//! A message that cannot be built (a header that would not be one, e.g. a name with a line
//! break stored by an older build) is refused for good, never a panic. The SMTP
//! conversation is bounded as a whole by `smtp_timeout_secs` (a server that greets and
//! then never answers holds a worker that long, no longer). The `.eml` files hold what the
//! messages hold (sign-in codes, license keys): the directory is made 0700 and each file
//! 0600, whatever the umask. [`SenderHealth`] is what the sender's workers report, read by
//! `/readyz` and `/metrics`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use lettre::message::header::ContentType;
use lettre::message::{Attachment, Mailbox, MultiPart};
use lettre::transport::smtp::AsyncSmtpTransport;
use lettre::{AsyncTransport, Message, Tokio1Executor};
use tokio::sync::watch;

use crate::config::{redacted_url, EmailSettings, EmailTransport};
use crate::domain::mail::{Delivery, MailMessage, RetryPolicy};
use crate::validate::is_header_safe;

/// A file sent with a message, as the sender rendered it for this attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// The name the recipient sees (`Invoice-ACME-0001.pdf`).
    pub name: String,
    /// Its MIME type (`application/pdf`).
    pub content_type: String,
    pub bytes: Vec<u8>,
}

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
    /// The whole SMTP conversation's bound.
    timeout: Duration,
    /// Bumped by [`Mailer::wake`]; each worker watches it.
    wake: watch::Sender<u64>,
    pub health: SenderHealth,
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
            timeout: Duration::from_secs(settings.smtp_timeout_secs),
            wake: watch::channel(0).0,
            health: SenderHealth::new(
                settings.workers + 1,
                Duration::from_secs(settings.stuck_after_secs),
            ),
        })
    }

    /// Removes what the transport kept of a message the retention purged: its `.eml` file
    /// (file transport); nothing elsewhere. A file already gone is no error.
    pub async fn forget(&self, id: crate::domain::ids::MailMessageId) -> std::io::Result<()> {
        let Transport::File(dir) = &self.transport else {
            return Ok(());
        };
        match tokio::fs::remove_file(dir.join(format!("{}.eml", id.uuid()))).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Tells the sender's workers that messages are waiting (each worker sees it, even one
    /// busy when it was said).
    pub fn wake(&self) {
        self.wake.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// What a worker watches to learn it was woken ([`Mailer::woken`]).
    pub fn wake_signal(&self) -> watch::Receiver<u64> {
        self.wake.subscribe()
    }

    /// Waits until woken since `signal` last looked, or `at_most`.
    pub async fn woken(signal: &mut watch::Receiver<u64>, at_most: Duration) {
        let _ = tokio::time::timeout(at_most, signal.changed()).await;
    }

    /// Whether messages leave at all (the transport is not `none`).
    pub fn sends(&self) -> bool {
        !matches!(self.transport, Transport::None)
    }

    /// The `Message-ID` of a message.
    pub fn message_id(&self, m: &MailMessage) -> String {
        m.message_id(&self.domain)
    }

    /// Builds the message as it goes out, with `files` attached (none: the text-and-HTML
    /// alternative alone, as every message without attachments).
    pub fn build(&self, m: &MailMessage, files: &[File]) -> Result<Message, String> {
        for f in files {
            if !is_header_safe(&f.name) || f.name.trim().is_empty() {
                return Err(format!(
                    "cannot build the message: an attachment's name is not one: {:?}",
                    f.name
                ));
            }
        }
        for (header, value) in [
            ("From name", m.from_name.as_str()),
            ("Subject", m.subject.as_str()),
            ("To", m.to.as_str()),
            ("Reply-To", m.reply_to.as_deref().unwrap_or("")),
        ] {
            if !is_header_safe(value) {
                return Err(format!(
                    "cannot build the message: its {header} holds a control character: {value:?}"
                ));
            }
        }
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
        // The language the message is written in: its HTML part's `<html lang>`.
        if let Some(lang) = content_language(&m.html) {
            builder = builder.header(ContentLanguage(lang.to_string()));
        }
        let body = MultiPart::alternative_plain_html(m.text.clone(), m.html.clone());
        let body = if files.is_empty() {
            body
        } else {
            let mut mixed = MultiPart::mixed().multipart(body);
            for f in files {
                let content_type = ContentType::parse(&f.content_type).map_err(|e| {
                    format!(
                        "cannot build the message: {:?} is not a content type: {e}",
                        f.content_type
                    )
                })?;
                mixed = mixed.singlepart(
                    Attachment::new(f.name.clone()).body(f.bytes.clone(), content_type),
                );
            }
            mixed
        };
        builder
            .multipart(body)
            .map_err(|e| format!("cannot build the message: {e}"))
    }

    /// One attempt to send `m`, with `files` attached.
    pub async fn send(&self, m: &MailMessage, files: &[File]) -> Delivery {
        if matches!(self.transport, Transport::None) {
            return Delivery::Skipped;
        }
        let message = match self.build(m, files) {
            Ok(message) => message,
            Err(e) => return Delivery::Permanent(e),
        };
        match &self.transport {
            Transport::None => Delivery::Skipped,
            Transport::File(dir) => write_file(dir, m, &message).await,
            Transport::Smtp(smtp) => {
                match tokio::time::timeout(self.timeout, smtp.send(message)).await {
                    Err(_) => Delivery::Transient(format!(
                        "the SMTP conversation took more than {}s (email.smtp_timeout_secs)",
                        self.timeout.as_secs()
                    )),
                    Ok(Ok(response)) => Delivery::Accepted(
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
                    Ok(Err(e)) if e.is_permanent() && !is_auth_refusal(&e) => {
                        Delivery::Permanent(e.to_string())
                    }
                    Ok(Err(e)) => Delivery::Transient(e.to_string()),
                }
            }
        }
    }
}

/// 530 (authentication required), 534 (mechanism too weak), 535 (credentials invalid),
/// 538 (encryption required for the mechanism).
fn is_auth_refusal(e: &lettre::transport::smtp::Error) -> bool {
    e.status()
        .is_some_and(|code| matches!(u16::from(code), 530 | 534 | 535 | 538))
}

/// Writes the message as `<dir>/<id>.eml`, whole or not at all (a temporary file renamed):
/// the directory 0700, the file 0600, whatever the umask.
async fn write_file(dir: &Path, m: &MailMessage, message: &Message) -> Delivery {
    let path = dir.join(format!("{}.eml", m.id.uuid()));
    let tmp = dir.join(format!(".{}.eml.tmp", m.id.uuid()));
    let bytes = message.formatted();
    let written = {
        let (dir, path, tmp) = (dir.to_path_buf(), path.clone(), tmp);
        tokio::task::spawn_blocking(move || write_private(&dir, &tmp, &path, &bytes))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())))
    };
    match written {
        Ok(()) => {
            tracing::info!(to = %m.to, kind = m.kind.as_str(), path = %path.display(), "e-mail written");
            Delivery::Accepted(format!("written to {}", path.display()))
        }
        Err(e) => Delivery::Transient(format!("cannot write {}: {e}", path.display())),
    }
}

/// The blocking part of [`write_file`]: `dir` created (or narrowed) to 0700, `tmp` created
/// 0600, written, synced and renamed to `path`.
fn write_private(dir: &Path, tmp: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    // An existing directory (or one an umask narrowed differently) is set as it must be.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let _ = std::fs::remove_file(tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(tmp)?;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(tmp, path)
}

/// What the sender's workers report: when each last came back to its loop, and how often a
/// worker was restarted or a message panicked. A worker that has not come back for
/// `stuck_after` is stuck (or dead): `/readyz` answers 503 and `/metrics` counts it.
pub struct SenderHealth {
    origin: Instant,
    stuck_after: Duration,
    started: AtomicBool,
    /// Per worker: milliseconds since `origin` of its last beat.
    beats: Vec<AtomicU64>,
    restarts: AtomicU64,
    panics: AtomicU64,
}

/// The sender's state as `/metrics` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SenderReport {
    pub started: bool,
    pub workers: usize,
    pub stuck: usize,
    pub restarts: u64,
    pub panics: u64,
}

impl SenderHealth {
    fn new(workers: usize, stuck_after: Duration) -> Self {
        Self {
            origin: Instant::now(),
            stuck_after,
            started: AtomicBool::new(false),
            beats: (0..workers).map(|_| AtomicU64::new(0)).collect(),
            restarts: AtomicU64::new(0),
            panics: AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The number of workers (the last one sends sign-in codes).
    pub fn workers(&self) -> usize {
        self.beats.len()
    }

    /// The sender started its workers.
    pub fn start(&self) {
        for b in &self.beats {
            b.store(self.now_ms(), Ordering::Relaxed);
        }
        self.started.store(true, Ordering::Relaxed);
    }

    /// Worker `i` is alive and back at its loop.
    pub fn beat(&self, i: usize) {
        if let Some(b) = self.beats.get(i) {
            b.store(self.now_ms(), Ordering::Relaxed);
        }
    }

    pub fn restarted(&self) {
        self.restarts.fetch_add(1, Ordering::Relaxed);
    }

    pub fn panicked(&self) {
        self.panics.fetch_add(1, Ordering::Relaxed);
    }

    /// Workers that have not beaten for `stuck_after` (0 before the sender starts).
    pub fn stuck(&self) -> usize {
        if !self.started.load(Ordering::Relaxed) {
            return 0;
        }
        let now = self.now_ms();
        let limit = u64::try_from(self.stuck_after.as_millis()).unwrap_or(u64::MAX);
        self.beats
            .iter()
            .filter(|b| now.saturating_sub(b.load(Ordering::Relaxed)) > limit)
            .count()
    }

    pub fn report(&self) -> SenderReport {
        SenderReport {
            started: self.started.load(Ordering::Relaxed),
            workers: self.beats.len(),
            stuck: self.stuck(),
            restarts: self.restarts.load(Ordering::Relaxed),
            panics: self.panics.load(Ordering::Relaxed),
        }
    }
}

/// The language tag of an HTML part's `<html lang="…">` (letters and hyphens only, as the
/// templates write it), for the message's `Content-Language`.
fn content_language(html: &str) -> Option<&str> {
    const OPEN: &str = "<html lang=\"";
    let at = html.find(OPEN)? + OPEN.len();
    let tag = &html[at..at + html[at..].find('"')?];
    let ok = !tag.is_empty()
        && tag.len() <= 35
        && tag.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    ok.then_some(tag)
}

/// RFC 3282's `Content-Language` header.
#[derive(Debug, Clone)]
struct ContentLanguage(String);

impl lettre::message::header::Header for ContentLanguage {
    fn name() -> lettre::message::header::HeaderName {
        lettre::message::header::HeaderName::new_from_ascii_str("Content-Language")
    }

    fn parse(s: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(ContentLanguage(s.trim().to_string()))
    }

    fn display(&self) -> lettre::message::header::HeaderValue {
        lettre::message::header::HeaderValue::new(Self::name(), self.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_that_does_not_come_back_is_stuck() {
        let h = SenderHealth::new(2, Duration::from_millis(50));
        assert_eq!(h.stuck(), 0, "not started");
        h.start();
        assert_eq!(h.stuck(), 0);
        std::thread::sleep(Duration::from_millis(120));
        h.beat(0);
        assert_eq!(h.stuck(), 1);
        h.beat(1);
        assert_eq!(h.report().stuck, 0);
    }

    fn message(from_name: &str, subject: &str) -> MailMessage {
        use crate::domain::ids::{MailMessageId, OrganizationId};
        use crate::domain::mail::{MailKind, MailState};
        MailMessage {
            id: MailMessageId::new(),
            organization_id: OrganizationId::new(),
            created_at: chrono::Utc::now(),
            modified_at: None,
            kind: MailKind::OrderReceipt,
            to: "ada@example.com".into(),
            reply_to: Some("shop@example.com".into()),
            from_name: from_name.into(),
            subject: subject.into(),
            text: "Thanks".into(),
            html: "<p>Thanks</p>".into(),
            order_id: None,
            subscription_id: None,
            customer_id: None,
            state: MailState::Pending,
            attempts: Vec::new(),
            next_attempt_at: None,
            attachments: Vec::new(),
        }
    }

    #[test]
    fn a_header_with_a_line_break_is_refused_not_a_panic() {
        let mailer = Mailer::new(&EmailSettings::default(), Path::new("/nonexistent"))
            .expect("the default settings");
        assert!(mailer.build(&message("Shop", "Your receipt"), &[]).is_ok());
        for (name, subject) in [("Shop\nX", "Hi"), ("Shop", "Hi\r\nBcc: x@example.com")] {
            let e = mailer
                .build(&message(name, subject), &[])
                .expect_err("refused");
            assert!(e.contains("cannot build the message"), "{e}");
        }
    }

    #[test]
    fn eml_files_are_private_whatever_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().expect("a temporary directory");
        let dir = root.path().join("mail");
        std::fs::create_dir(&dir).expect("the directory");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("0777");
        let (tmp, path) = (dir.join(".a.eml.tmp"), dir.join("a.eml"));
        write_private(&dir, &tmp, &path, b"Subject: x\r\n\r\nhi").expect("written");
        let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&path), 0o600);
        assert!(!tmp.exists());
    }

    /// The value of header `name` in a block of headers (unfolded), if any.
    fn header_of(head: &str, name: &str) -> Option<String> {
        let unfolded = head.replace("\r\n ", " ").replace("\r\n\t", " ");
        unfolded.split("\r\n").find_map(|line| {
            let (k, v) = line.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }

    /// A header parameter (`boundary`, `filename`), quoted or not.
    fn param_of(value: &str, name: &str) -> Option<String> {
        value.split(';').skip(1).find_map(|p| {
            let (k, v) = p.trim().split_once('=')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().trim_matches('"').to_string())
        })
    }

    /// The parts of a multipart body: (headers, body) each.
    fn parts_of(body: &str, boundary: &str) -> Vec<(String, String)> {
        let delimiter = format!("--{boundary}");
        body.split(&delimiter)
            .skip(1)
            .take_while(|p| !p.starts_with("--"))
            .filter_map(|p| {
                let p = p.strip_prefix("\r\n")?;
                let (head, body) = p.split_once("\r\n\r\n")?;
                Some((
                    format!("{head}\r\n"),
                    body.trim_end_matches("\r\n").to_string(),
                ))
            })
            .collect()
    }

    #[test]
    fn a_message_with_a_file_is_mixed_the_alternative_then_the_pdf() {
        use base64::Engine;
        let mailer = Mailer::new(&EmailSettings::default(), Path::new("/nonexistent"))
            .expect("the default settings");
        let pdf: Vec<u8> = b"%PDF-1.7\n\x00\xff binary \r\n bytes\n%%EOF"
            .iter()
            .copied()
            .cycle()
            .take(3000)
            .collect();
        let file = File {
            name: "Invoice-ACME-0001.pdf".into(),
            content_type: "application/pdf".into(),
            bytes: pdf.clone(),
        };
        let m = message("Shop", "Your receipt");
        let raw = String::from_utf8(mailer.build(&m, &[file]).expect("built").formatted())
            .expect("7-bit text");
        let (head, body) = raw.split_once("\r\n\r\n").expect("headers, then the body");
        let top = header_of(head, "Content-Type").expect("a content type");
        assert!(top.starts_with("multipart/mixed"), "{top}");
        let parts = parts_of(body, &param_of(&top, "boundary").expect("a boundary"));
        assert_eq!(parts.len(), 2, "the alternative and the file: {raw}");
        // First the text and the HTML, as every message has them.
        let alt = header_of(&parts[0].0, "Content-Type").expect("a content type");
        assert!(alt.starts_with("multipart/alternative"), "{alt}");
        let inner = parts_of(
            &parts[0].1,
            &param_of(&alt, "boundary").expect("a boundary"),
        );
        let types: Vec<String> = inner
            .iter()
            .filter_map(|(h, _)| header_of(h, "Content-Type"))
            .collect();
        assert!(types[0].starts_with("text/plain"), "{types:?}");
        assert!(types[1].starts_with("text/html"), "{types:?}");
        // Then the PDF, attached under its name, the same bytes.
        let (h, b) = &parts[1];
        assert_eq!(
            header_of(h, "Content-Type").as_deref(),
            Some("application/pdf")
        );
        let disposition = header_of(h, "Content-Disposition").expect("a disposition");
        assert!(disposition.starts_with("attachment"), "{disposition}");
        assert_eq!(
            param_of(&disposition, "filename").as_deref(),
            Some("Invoice-ACME-0001.pdf")
        );
        assert_eq!(
            header_of(h, "Content-Transfer-Encoding").as_deref(),
            Some("base64")
        );
        let back = base64::engine::general_purpose::STANDARD
            .decode(b.replace("\r\n", ""))
            .expect("base64");
        assert_eq!(back, pdf);
        // Without files the message is the alternative alone, as before.
        let raw = String::from_utf8(mailer.build(&m, &[]).expect("built").formatted())
            .expect("7-bit text");
        let (head, _) = raw.split_once("\r\n\r\n").expect("headers");
        let top = header_of(head, "Content-Type").expect("a content type");
        assert!(top.starts_with("multipart/alternative"), "{top}");
    }

    #[test]
    fn a_file_whose_name_or_type_is_not_one_is_refused() {
        let mailer = Mailer::new(&EmailSettings::default(), Path::new("/nonexistent"))
            .expect("the default settings");
        let m = message("Shop", "Your receipt");
        let file = |name: &str, content_type: &str| File {
            name: name.into(),
            content_type: content_type.into(),
            bytes: vec![1, 2, 3],
        };
        for f in [
            file("Invoice\r\nBcc: x@example.com.pdf", "application/pdf"),
            file(" ", "application/pdf"),
            file("Invoice-1.pdf", "not a type"),
        ] {
            let e = mailer.build(&m, &[f]).expect_err("refused");
            assert!(e.contains("cannot build the message"), "{e}");
        }
    }
}
