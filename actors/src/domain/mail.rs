//! E-mail: the outbox. Each message is decided once (from the change feed, or by a
//! request such as "send me my keys again"), rendered when it is decided, and stored with
//! what it takes to send it; the sender in the server crate moves it through its states
//! and logs every attempt on the record ([`MailMessage::record_attempt`], a pure rule).
//!
//! A message's id is derived from the fact it tells (the order it is the receipt of), so a
//! fact decided twice is one message; its `Message-ID` header is derived from the id, so an
//! SMTP server that sees a retry of a message whose answer was lost can tell it is the
//! same message.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::keys::KeyBuf;
use tollgate_storage::{IndexEntry, Record};

use super::ids::{CustomerId, MailMessageId, OrderId, OrganizationId, SubscriptionId};
use super::invoice::InvoiceId;
use super::time_key;

/// No tenant: messages waiting to be sent, by the time of their next attempt.
pub const MAIL_PENDING: &str = "mail_pending";
/// No tenant: sign-in codes waiting to be sent, by the time of their next attempt (also in
/// [`MAIL_PENDING`]): the codes' own queue, never behind notices.
pub const MAIL_PENDING_CODES: &str = "mail_pending_codes";
/// Tenant: an order; its messages by creation time (the dashboard's order page).
pub const MAIL_BY_ORDER: &str = "mail_by_order";
/// No tenant: every message by creation time (retention).
pub const MAIL_BY_CREATED: &str = "mail_by_created";
/// Settled messages still holding their rendered bodies, by when they settled: what the
/// retention empties once `retention.grace_hours` have passed (`src/mail.rs`, `slim`).
pub const MAIL_BODY_KEPT: &str = "mail_body_kept";

/// What a message tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MailKind {
    /// To the buyer: what was bought, the amounts, the license keys.
    OrderReceipt,
    /// To the buyer: a subscription renewed and was charged.
    RenewalReceipt,
    /// To the buyer: a renewal's payment failed; when it is tried again.
    RenewalFailed,
    /// To the buyer: a subscription was canceled (it ends at the period's end) or ended.
    SubscriptionCanceled,
    SubscriptionEnded,
    /// To the buyer: the seller revoked or disabled one of their keys.
    KeyRevoked,
    KeyDisabled,
    /// To the buyer, on request: every key they hold from the organization.
    KeysResent,
    /// To the seller (the organization's e-mail), when it asked for copies: a sale.
    SellerOrderCopy,
    /// To the buyer: money given back.
    RefundConfirmation,
    /// To the buyer, on request: a one-time code that signs in to the customer portal.
    SignInCode,
    /// To the buyer: their free trial ends soon and the first charge follows (appended:
    /// bincode stores the variant's index).
    TrialEnding,
    /// To the buyer: their subscription moved to another product or price.
    PlanChanged,
    /// To a buyer's new address: the code that confirms the change of address.
    EmailChangeCode,
    /// To a buyer's old address: the address was changed.
    EmailChanged,
    /// To the buyer: a credit note was issued for a refund (with the note attached).
    CreditNote,
}

impl MailKind {
    /// A receipt of an order (each counts against the recipient's limit).
    pub fn is_receipt(self) -> bool {
        matches!(self, MailKind::OrderReceipt | MailKind::RenewalReceipt)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MailKind::OrderReceipt => "order_receipt",
            MailKind::RenewalReceipt => "renewal_receipt",
            MailKind::RenewalFailed => "renewal_failed",
            MailKind::SubscriptionCanceled => "subscription_canceled",
            MailKind::SubscriptionEnded => "subscription_ended",
            MailKind::KeyRevoked => "license_key_revoked",
            MailKind::KeyDisabled => "license_key_disabled",
            MailKind::KeysResent => "license_keys_resent",
            MailKind::SellerOrderCopy => "seller_order_copy",
            MailKind::RefundConfirmation => "refund_confirmation",
            MailKind::SignInCode => "customer_session_code",
            MailKind::TrialEnding => "subscription_trial_conversion_reminder",
            MailKind::PlanChanged => "subscription_updated",
            MailKind::EmailChangeCode => "customer_email_update_verification",
            MailKind::EmailChanged => "customer_email_changed_notification",
            MailKind::CreditNote => "credit_note",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MailState {
    /// Waiting for its next attempt.
    Pending,
    /// Accepted by the transport (the SMTP server, or written to its file).
    Sent,
    /// Refused for good (an SMTP 5xx answer), or still not sent after the last attempt.
    Failed,
    /// Not sent: the transport is `none`.
    Skipped,
}

impl MailState {
    pub fn as_str(self) -> &'static str {
        match self {
            MailState::Pending => "pending",
            MailState::Sent => "sent",
            MailState::Failed => "failed",
            MailState::Skipped => "skipped",
        }
    }
}

/// One attempt to hand a message to the transport.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailAttempt {
    pub at: DateTime<Utc>,
    pub ok: bool,
    /// The SMTP server's answer (`250 2.0.0 Ok: queued`), the file written, or what went
    /// wrong (`connection refused`).
    pub answer: String,
}

/// How a transport took one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// Accepted; the answer.
    Accepted(String),
    /// Not now (a 4xx answer, no connection, a timeout): try again later.
    Transient(String),
    /// Never (a 5xx answer: no such mailbox, refused as spam).
    Permanent(String),
    /// The transport sends nothing (`none`).
    Skipped,
    /// Not sent, and never will be: what it told was undone before it left (a cancellation
    /// undone within the notice window, or told by a newer notice); why.
    Withdrawn(String),
}

/// When to try again: `base`, then twice as long after each failure, at most
/// [`MAX_RETRY_DELAY`], for `max_attempts` attempts in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub base: Duration,
    pub max_attempts: u32,
}

/// The longest wait between two attempts.
pub const MAX_RETRY_DELAY: Duration = Duration::hours(6);

impl RetryPolicy {
    /// The wait after the `failures`-th failed attempt (1 for the first).
    pub fn delay(&self, failures: u32) -> Duration {
        let factor = 1_i32
            .checked_shl(failures.saturating_sub(1))
            .unwrap_or(i32::MAX);
        self.base
            .checked_mul(factor)
            .unwrap_or(MAX_RETRY_DELAY)
            .min(MAX_RETRY_DELAY)
    }
}

/// A file sent with a message: a reference to what the sender renders when the message
/// leaves, never the bytes (a document renders the same bytes every time from its
/// immutable record, so the outbox stays small).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Attachment {
    /// The PDF of an invoice or a credit note (`Invoice-<number>.pdf`,
    /// `CreditNote-<number>.pdf`).
    Invoice(InvoiceId),
}

/// One e-mail, as decided and rendered, and its delivery so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MailMessage {
    pub id: MailMessageId,
    pub organization_id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub kind: MailKind,
    /// The recipient's address.
    pub to: String,
    /// The organization's address, where the buyer's answers go.
    pub reply_to: Option<String>,
    /// The name shown with the service's sending address (the organization's name).
    pub from_name: String,
    pub subject: String,
    pub text: String,
    pub html: String,
    pub order_id: Option<OrderId>,
    pub subscription_id: Option<SubscriptionId>,
    pub customer_id: Option<CustomerId>,
    pub state: MailState,
    pub attempts: Vec<MailAttempt>,
    /// Set while pending.
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// Format version 2: the files sent with it, rendered by the sender at each attempt.
    pub attachments: Vec<Attachment>,
}

/// Format version 1: before attachments.
#[derive(Deserialize)]
struct MailMessageV1 {
    id: MailMessageId,
    organization_id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    kind: MailKind,
    to: String,
    reply_to: Option<String>,
    from_name: String,
    subject: String,
    text: String,
    html: String,
    order_id: Option<OrderId>,
    subscription_id: Option<SubscriptionId>,
    customer_id: Option<CustomerId>,
    state: MailState,
    attempts: Vec<MailAttempt>,
    next_attempt_at: Option<DateTime<Utc>>,
}

impl From<MailMessageV1> for MailMessage {
    fn from(v1: MailMessageV1) -> Self {
        Self {
            id: v1.id,
            organization_id: v1.organization_id,
            created_at: v1.created_at,
            modified_at: v1.modified_at,
            kind: v1.kind,
            to: v1.to,
            reply_to: v1.reply_to,
            from_name: v1.from_name,
            subject: v1.subject,
            text: v1.text,
            html: v1.html,
            order_id: v1.order_id,
            subscription_id: v1.subscription_id,
            customer_id: v1.customer_id,
            state: v1.state,
            attempts: v1.attempts,
            next_attempt_at: v1.next_attempt_at,
            attachments: Vec::new(),
        }
    }
}

impl MailMessage {
    /// The `Message-ID` header's value, the same at every attempt: `<id@domain>`.
    pub fn message_id(&self, domain: &str) -> String {
        format!("<{}@{domain}>", self.id.uuid())
    }

    pub fn is_pending(&self) -> bool {
        self.state == MailState::Pending
    }

    /// Whether it still holds its rendered text or HTML.
    pub fn has_body(&self) -> bool {
        !self.text.is_empty() || !self.html.is_empty()
    }

    /// Forgets the rendered text and HTML of a settled message (the retention, once it
    /// has been settled a while): what the dashboard shows (recipient, kind, subject,
    /// state, attempts) stays. Nothing re-reads a settled message's body: keys are sent
    /// again as a new message, rendered anew. A pending message keeps its body.
    pub fn drop_body(&mut self) {
        if !self.is_pending() {
            self.text = String::new();
            self.html = String::new();
        }
    }

    /// Records one attempt made at `at`: accepted → sent; skipped → skipped; refused for
    /// good → failed; refused for now → pending again after the policy's delay, or failed
    /// when that was the last attempt. A message no longer pending is left as it is.
    pub fn record_attempt(&mut self, at: DateTime<Utc>, delivery: Delivery, policy: RetryPolicy) {
        if !self.is_pending() {
            return;
        }
        self.modified_at = Some(at);
        let (ok, answer, state) = match delivery {
            Delivery::Accepted(answer) => (true, answer, MailState::Sent),
            Delivery::Skipped => (
                true,
                "not sent: email.transport is \"none\"".to_string(),
                MailState::Skipped,
            ),
            Delivery::Permanent(answer) => (false, answer, MailState::Failed),
            Delivery::Withdrawn(why) => (true, why, MailState::Skipped),
            Delivery::Transient(answer) => {
                let failures = self.attempts.iter().filter(|a| !a.ok).count() as u32 + 1;
                let state = if failures >= policy.max_attempts.max(1) {
                    MailState::Failed
                } else {
                    MailState::Pending
                };
                (false, answer, state)
            }
        };
        self.attempts.push(MailAttempt { at, ok, answer });
        self.state = state;
        self.next_attempt_at = match state {
            MailState::Pending => {
                let failures = self.attempts.iter().filter(|a| !a.ok).count() as u32;
                Some(at + policy.delay(failures))
            }
            _ => None,
        };
    }
}

impl Record for MailMessage {
    const COLLECTION: &'static str = "mail_message";
    /// 2: the attachments.
    const VERSION: u16 = 2;

    fn encode(&self) -> Result<Vec<u8>, tollgate_storage::StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, tollgate_storage::StorageError> {
        match version {
            1 => {
                Ok(
                    tollgate_storage::codec::decode::<MailMessageV1>(Self::COLLECTION, 1, payload)?
                        .into(),
                )
            }
            2 => tollgate_storage::codec::decode(Self::COLLECTION, version, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }

    const INDEXES: &'static [&'static str] = &[
        MAIL_PENDING,
        MAIL_PENDING_CODES,
        MAIL_BY_ORDER,
        MAIL_BY_CREATED,
        MAIL_BODY_KEPT,
    ];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    fn index_entries(&self) -> Vec<IndexEntry> {
        let created = time_key(self.created_at);
        let mut entries = vec![IndexEntry::new(
            MAIL_BY_CREATED,
            Vec::new(),
            created.clone(),
        )];
        if let Some(order) = self.order_id {
            entries.push(IndexEntry::new(MAIL_BY_ORDER, order.key(), created));
        }
        if let (MailState::Pending, Some(at)) = (self.state, self.next_attempt_at) {
            let due = KeyBuf::new().i64(at.timestamp_micros()).into_vec();
            if self.kind == MailKind::SignInCode {
                entries.push(IndexEntry::new(MAIL_PENDING_CODES, Vec::new(), due.clone()));
            }
            entries.push(IndexEntry::new(MAIL_PENDING, Vec::new(), due));
        }
        if !self.is_pending() && self.has_body() {
            let settled = self.modified_at.unwrap_or(self.created_at);
            entries.push(IndexEntry::new(
                MAIL_BODY_KEPT,
                Vec::new(),
                time_key(settled),
            ));
        }
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::{at, uuid};

    fn message() -> MailMessage {
        MailMessage {
            id: MailMessageId(uuid(1)),
            organization_id: OrganizationId(uuid(2)),
            created_at: at(10),
            modified_at: None,
            kind: MailKind::OrderReceipt,
            to: "ada@example.com".into(),
            reply_to: Some("shop@example.com".into()),
            from_name: "Acme".into(),
            subject: "Your receipt".into(),
            text: "Thanks".into(),
            html: "<p>Thanks</p>".into(),
            order_id: Some(OrderId(uuid(3))),
            subscription_id: None,
            customer_id: Some(CustomerId(uuid(4))),
            state: MailState::Pending,
            attempts: Vec::new(),
            next_attempt_at: Some(at(10)),
            attachments: Vec::new(),
        }
    }

    const POLICY: RetryPolicy = RetryPolicy {
        base: Duration::seconds(30),
        max_attempts: 4,
    };

    fn pending_keys(m: &MailMessage) -> Vec<Vec<u8>> {
        m.index_entries()
            .into_iter()
            .filter(|e| e.index == MAIL_PENDING)
            .map(|e| e.sort)
            .collect()
    }

    #[test]
    fn delays_double_up_to_six_hours() {
        assert_eq!(POLICY.delay(1), Duration::seconds(30));
        assert_eq!(POLICY.delay(2), Duration::seconds(60));
        assert_eq!(POLICY.delay(3), Duration::seconds(120));
        assert_eq!(
            POLICY.delay(12),
            Duration::seconds(30 * 2048).min(MAX_RETRY_DELAY)
        );
        assert_eq!(POLICY.delay(40), MAX_RETRY_DELAY);
        assert_eq!(POLICY.delay(u32::MAX), MAX_RETRY_DELAY);
    }

    #[test]
    fn accepted_is_sent_once_and_leaves_the_pending_index() {
        let mut m = message();
        assert_eq!(pending_keys(&m).len(), 1);
        m.record_attempt(at(11), Delivery::Accepted("250 Ok".into()), POLICY);
        assert_eq!(m.state, MailState::Sent);
        assert_eq!(m.next_attempt_at, None);
        assert!(pending_keys(&m).is_empty());
        assert_eq!(m.attempts.len(), 1);
        assert!(m.attempts[0].ok);
        // A late second answer changes nothing.
        m.record_attempt(at(12), Delivery::Transient("421".into()), POLICY);
        assert_eq!(m.state, MailState::Sent);
        assert_eq!(m.attempts.len(), 1);
    }

    #[test]
    fn transient_failures_back_off_then_give_up() {
        let mut m = message();
        m.record_attempt(
            at(20),
            Delivery::Transient("connection refused".into()),
            POLICY,
        );
        assert_eq!(m.state, MailState::Pending);
        assert_eq!(m.next_attempt_at, Some(at(20) + Duration::seconds(30)));
        assert_eq!(pending_keys(&m).len(), 1);
        m.record_attempt(at(60), Delivery::Transient("451 later".into()), POLICY);
        assert_eq!(m.next_attempt_at, Some(at(60) + Duration::seconds(60)));
        m.record_attempt(at(200), Delivery::Transient("451 later".into()), POLICY);
        assert_eq!(m.state, MailState::Pending);
        m.record_attempt(at(400), Delivery::Transient("451 later".into()), POLICY);
        assert_eq!(m.state, MailState::Failed, "the fourth failure is the last");
        assert_eq!(m.next_attempt_at, None);
        assert!(pending_keys(&m).is_empty());
        assert_eq!(m.attempts.len(), 4);
        assert_eq!(m.attempts[1].answer, "451 later");
    }

    #[test]
    fn a_transient_failure_then_success_is_sent() {
        let mut m = message();
        m.record_attempt(at(20), Delivery::Transient("timeout".into()), POLICY);
        m.record_attempt(at(60), Delivery::Accepted("250 queued".into()), POLICY);
        assert_eq!(m.state, MailState::Sent);
        assert_eq!(m.attempts.len(), 2);
    }

    #[test]
    fn a_permanent_refusal_fails_at_once_and_none_skips() {
        let mut m = message();
        m.record_attempt(
            at(20),
            Delivery::Permanent("550 no such user".into()),
            POLICY,
        );
        assert_eq!(m.state, MailState::Failed);
        assert!(pending_keys(&m).is_empty());
        let mut m = message();
        m.record_attempt(at(20), Delivery::Skipped, POLICY);
        assert_eq!(m.state, MailState::Skipped);
        assert!(pending_keys(&m).is_empty());
    }

    #[test]
    fn sign_in_codes_have_their_own_queue_and_withdrawn_ones_leave_it() {
        let mut m = message();
        m.kind = MailKind::SignInCode;
        let codes = |m: &MailMessage| {
            m.index_entries()
                .into_iter()
                .filter(|e| e.index == MAIL_PENDING_CODES)
                .count()
        };
        assert_eq!(codes(&m), 1);
        assert_eq!(pending_keys(&m).len(), 1, "and in the general queue");
        assert_eq!(codes(&message()), 0, "a receipt is not a code");
        m.record_attempt(at(11), Delivery::Withdrawn("undone".into()), POLICY);
        assert_eq!(m.state, MailState::Skipped);
        assert_eq!(m.attempts[0].answer, "undone");
        assert_eq!(codes(&m), 0);
        assert!(pending_keys(&m).is_empty());
    }

    #[test]
    fn the_message_id_is_stable_and_the_record_round_trips() {
        let m = message();
        assert_eq!(
            m.message_id("example.com"),
            m.clone().message_id("example.com")
        );
        assert!(m.message_id("example.com").starts_with('<'));
        let back = MailMessage::decode(2, &m.encode().unwrap()).unwrap();
        assert_eq!(back, m);
        let by_order: Vec<_> = m
            .index_entries()
            .into_iter()
            .filter(|e| e.index == MAIL_BY_ORDER)
            .collect();
        assert_eq!(by_order.len(), 1);
        assert_eq!(by_order[0].tenant, OrderId(uuid(3)).key());
    }

    /// Every optional field set, one attempt and one attachment.
    fn full() -> MailMessage {
        MailMessage {
            modified_at: Some(at(11)),
            subscription_id: Some(SubscriptionId(uuid(5))),
            attempts: vec![MailAttempt {
                at: at(11),
                ok: false,
                answer: "451 later".into(),
            }],
            attachments: vec![Attachment::Invoice(InvoiceId(uuid(6)))],
            ..message()
        }
    }

    #[test]
    fn format_v2_golden_bytes_and_v1_reads_without_attachments() {
        assert_eq!(
            (MailMessage::COLLECTION, MailMessage::VERSION),
            ("mail_message", 2)
        );
        let m = full();
        let v2 = m.encode().unwrap_or_default();
        assert_eq!(
            crate::golden::hex(&v2),
            format!("{GOLDEN_V1}{GOLDEN_V2_TAIL}"),
            "mail message format v2 changed"
        );
        assert_eq!(MailMessage::decode(2, &v2).ok(), Some(m.clone()));
        // Version 1 (golden bytes) is version 2 without the attachments at the end: it
        // reads with none.
        let v1 = decode_hex(GOLDEN_V1);
        assert_eq!(
            MailMessage::decode(1, &v1).ok(),
            Some(MailMessage {
                attachments: Vec::new(),
                ..m.clone()
            })
        );
        assert!(MailMessage::decode(2, &v1).is_err());
        assert!(MailMessage::decode(3, &v2).is_err());
        // Written again, a version-1 message is version 2 with no attachment (an empty
        // list: 00).
        let again = MailMessage::decode(1, &v1).unwrap().encode().unwrap();
        assert_eq!(crate::golden::hex(&again), format!("{GOLDEN_V1}00"));
        // The new kind is appended: the earlier kinds keep their bytes.
        let kind = tollgate_storage::codec::encode(&MailKind::CreditNote).unwrap_or_default();
        assert_eq!(crate::golden::hex(&kind), "0f");
        assert_eq!(MailKind::CreditNote.as_str(), "credit_note");
        assert!(!MailKind::CreditNote.is_receipt());
    }

    fn decode_hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap_or(0))
            .collect()
    }

    const GOLDEN_V1: &str = "\
        1000000000000000000000000000000001100000000000000000000000000000000214313937302d30312d30\
        315430303a30303a31305a0114313937302d30312d30315430303a30303a31315a000f616461406578616d70\
        6c652e636f6d011073686f70406578616d706c652e636f6d0441636d650c596f757220726563656970740654\
        68616e6b730d3c703e5468616e6b733c2f703e01100000000000000000000000000000000301100000000000\
        0000000000000000000005011000000000000000000000000000000004000114313937302d30312d30315430\
        303a30303a31315a0009343531206c617465720114313937302d30312d30315430303a30303a31305a";
    /// One attachment (`01`), the invoice's (`00`), its id (16 bytes).
    const GOLDEN_V2_TAIL: &str = "01001000000000000000000000000000000006";
}
