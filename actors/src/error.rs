//! Errors of the actor runtime.
//!
//! [`ActorError<E>`] is what a caller of the registry gets back. `E` is the aggregate's own
//! domain error (e.g. `CheckoutError`); the runtime's own failures need no domain error and
//! use the default `E = Infallible`. An aggregate's messages reply with
//! `Result<View, ActorError<DomainError>>`, and [`crate::Registry::call`] flattens the
//! runtime layer into the same type, so an HTTP handler matches on one enum and
//! `src/error.rs` maps it once.

use std::convert::Infallible;

use tollgate_storage::StorageError;

/// Why an entity could not take a message. Every variant maps to `503` + `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    /// The entity's mailbox holds `mailbox_capacity` unprocessed messages.
    #[error("the entity's mailbox is full")]
    MailboxFull,
    /// No reply within the configured send timeout. The command may still be applied.
    #[error("the entity did not reply in time")]
    Timeout,
    /// The entity (or the spawner) is gone and could not be replaced.
    #[error("the entity's mailbox is closed")]
    Closed,
    /// The message came back unhandled twice: the fresh incarnation was passivated (or
    /// stopped) too before it took the message.
    #[error("the entity was passivated")]
    Passivated,
    /// The entity took the message but dropped the reply (it stopped or restarted while
    /// the reply was pending): the outcome is unknown, so the message is not retried.
    #[error("the entity stopped before replying")]
    ReplyLost,
    /// The record kept changing under concurrent writers: the command lost its conditional
    /// write [`crate::entity::MAX_DECIDES`] times in a row on a local store
    /// (`REMOTE_MAX_DECIDES` on a shared one), decided again each time on the newest
    /// snapshot. Nothing was written; retrying is safe.
    #[error("the record kept changing under concurrent writers")]
    Contended,
}

impl Unavailable {
    /// Every reason, in a fixed order (metrics).
    pub const ALL: [Unavailable; 6] = [
        Unavailable::MailboxFull,
        Unavailable::Timeout,
        Unavailable::Closed,
        Unavailable::Passivated,
        Unavailable::ReplyLost,
        Unavailable::Contended,
    ];

    /// A short name (a metrics label).
    pub fn reason(self) -> &'static str {
        match self {
            Unavailable::MailboxFull => "mailbox_full",
            Unavailable::Timeout => "timeout",
            Unavailable::Closed => "closed",
            Unavailable::Passivated => "passivated",
            Unavailable::ReplyLost => "reply_lost",
            Unavailable::Contended => "contended",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// The error of a command sent through the registry.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ActorError<E = Infallible> {
    /// No stored snapshot for this id (and the caller did not create one).
    #[error("not found")]
    NotFound,
    /// [`crate::Registry::create`] for an id that already exists.
    #[error("already exists")]
    AlreadyExists,
    /// The entity cannot take the message now; the caller may retry later.
    #[error("unavailable: {0}")]
    Unavailable(Unavailable),
    /// The store failed to read, write or flush.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The aggregate's own rule rejected the command.
    #[error(transparent)]
    Domain(E),
}

impl<E> ActorError<E> {
    pub fn domain(e: E) -> Self {
        ActorError::Domain(e)
    }

    /// The domain error, if this is one.
    pub fn as_domain(&self) -> Option<&E> {
        match self {
            ActorError::Domain(e) => Some(e),
            _ => None,
        }
    }
}

impl ActorError<Infallible> {
    /// A runtime error as the error of any aggregate (it has no domain variant to convert).
    pub fn widen<E>(self) -> ActorError<E> {
        match self {
            ActorError::NotFound => ActorError::NotFound,
            ActorError::AlreadyExists => ActorError::AlreadyExists,
            ActorError::Unavailable(u) => ActorError::Unavailable(u),
            ActorError::Storage(e) => ActorError::Storage(e),
            ActorError::Domain(never) => match never {},
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq, thiserror::Error)]
    #[error("limit reached")]
    struct LimitReached;

    #[test]
    fn widen_keeps_the_variant() {
        let e: ActorError<LimitReached> = ActorError::Unavailable(Unavailable::Timeout).widen();
        assert_eq!(e, ActorError::Unavailable(Unavailable::Timeout));
        let e: ActorError<LimitReached> =
            ActorError::<Infallible>::from(StorageError::Closed).widen();
        assert_eq!(e, ActorError::Storage(StorageError::Closed));
    }

    #[test]
    fn display_is_the_domain_message() {
        let e = ActorError::domain(LimitReached);
        assert_eq!(e.to_string(), "limit reached");
        assert_eq!(e.as_domain(), Some(&LimitReached));
    }
}
