//! The envelope every registry message travels in, and the per-entity mailbox bound.
//!
//! Two facts about actix 0.13 shape this module (both read in `actix-0.13.5/src/address/`):
//!
//! * The mailbox capacity is enforced *per sender*: every `Addr` clone gets its own parking
//!   flag, and `send`/`try_send` on an unparked sender always enqueue. With one clone per
//!   request (which is how a shared registry hands out addresses), `set_mailbox_capacity`
//!   bounds nothing. The real bound is therefore [`Slot`]: a counter of queued, unhandled
//!   messages per entity, checked before enqueueing; over the limit the caller gets
//!   `Unavailable::MailboxFull` at once.
//! * `Addr::send` drops the message when the mailbox is closed, so a caller cannot retry it.
//!   [`Mail`] keeps the message until the entity takes it: if the entity is passivated, or
//!   the mail is dropped unhandled (closed mailbox, stopped actor), the message is
//!   *bounced* back to the caller, which can then retry safely; it was never applied.
//!   The reply travels in the mail's own oneshot, and the registry awaits it with the send
//!   timeout, exactly like `addr.send(msg).timeout(d)`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use actix::Message;
use tokio::sync::oneshot;

/// One queued message's claim on its entity's mailbox; frees it when dropped (when the
/// entity starts handling the message, or when the message is dropped unhandled).
pub(crate) struct Slot(Arc<AtomicUsize>);

impl Slot {
    pub(crate) fn acquire(queued: &Arc<AtomicUsize>, capacity: usize) -> Option<Slot> {
        let before = queued.fetch_add(1, Ordering::AcqRel);
        if before >= capacity {
            queued.fetch_sub(1, Ordering::AcqRel);
            None
        } else {
            Some(Slot(queued.clone()))
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A message on its way to an entity, with its reply channel and its way back.
/// Internal to the registry; public only because it appears in `Handler` impls.
#[doc(hidden)]
pub struct Mail<M: Message> {
    msg: Option<M>,
    reply: Option<oneshot::Sender<M::Result>>,
    bounce: Option<oneshot::Sender<M>>,
    slot: Option<Slot>,
}

impl<M: Message> Mail<M> {
    pub(crate) fn new(
        msg: M,
        reply: oneshot::Sender<M::Result>,
        bounce: oneshot::Sender<M>,
        slot: Slot,
    ) -> Self {
        Self {
            msg: Some(msg),
            reply: Some(reply),
            bounce: Some(bounce),
            slot: Some(slot),
        }
    }

    /// Frees the mailbox slot: the entity has taken this mail off its queue.
    pub(crate) fn release_slot(&mut self) {
        self.slot = None;
    }

    /// Takes the message and the reply channel out: from now on the message is the
    /// entity's, and dropping the mail no longer bounces it.
    pub(crate) fn open(&mut self) -> Option<(M, oneshot::Sender<M::Result>)> {
        match (self.msg.take(), self.reply.take()) {
            (Some(msg), Some(reply)) => Some((msg, reply)),
            _ => None,
        }
    }

    /// The message, taken back by the sender (the mail was never enqueued).
    pub(crate) fn into_message(mut self) -> Option<M> {
        self.msg.take()
    }
}

impl<M: Message> Message for Mail<M> {
    type Result = ();
}

impl<M: Message> Drop for Mail<M> {
    fn drop(&mut self) {
        // Still holding the message: nobody handled it. Send it back before the reply
        // channel is dropped (fields drop after this body), so that the waiting caller sees
        // the bounce as soon as its reply channel closes.
        if let (Some(msg), Some(bounce)) = (self.msg.take(), self.bounce.take()) {
            let _ = bounce.send(msg);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Ping;
    impl Message for Ping {
        type Result = u8;
    }

    #[test]
    fn slots_bound_the_queue_and_free_on_drop() {
        let queued = Arc::new(AtomicUsize::new(0));
        let a = Slot::acquire(&queued, 2).unwrap();
        let b = Slot::acquire(&queued, 2).unwrap();
        assert!(Slot::acquire(&queued, 2).is_none());
        drop(a);
        let c = Slot::acquire(&queued, 2).unwrap();
        drop((b, c));
        assert_eq!(queued.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn dropped_mail_bounces_its_message() {
        let queued = Arc::new(AtomicUsize::new(0));
        let (reply_tx, mut reply_rx) = oneshot::channel();
        let (bounce_tx, mut bounce_rx) = oneshot::channel();
        let mail = Mail::new(
            Ping,
            reply_tx,
            bounce_tx,
            Slot::acquire(&queued, 1).unwrap(),
        );
        drop(mail);
        assert!(reply_rx.try_recv().is_err());
        assert!(bounce_rx.try_recv().is_ok());
        assert_eq!(queued.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn opened_mail_does_not_bounce() {
        let queued = Arc::new(AtomicUsize::new(0));
        let (reply_tx, _reply_rx) = oneshot::channel();
        let (bounce_tx, mut bounce_rx) = oneshot::channel();
        let mut mail = Mail::new(
            Ping,
            reply_tx,
            bounce_tx,
            Slot::acquire(&queued, 1).unwrap(),
        );
        let (_msg, _reply) = mail.open().unwrap();
        drop(mail);
        assert!(bounce_rx.try_recv().is_err());
    }
}
