//! The queue of business tax numbers to ask their register again.
//!
//! A business buyer's number whose register gave no answer in time at checkout is sold on
//! its format and recorded `Unverified` on the order (`OrderTax::tax_id_status`). The
//! fan-out queues a [`TaxIdCheck`] for such an order when it is paid, in the write that
//! consumes the change, when a register is configured for the number; the re-check pass
//! asks again, writes the answer on the order and deletes the entry in one write, or
//! backs off (a minute, doubling, at most six hours). The id derives from the order, so a
//! change seen twice queues one entry.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::Record;

use super::ids::{OrderId, OrganizationId};
use crate::ids::derived_uuid;

crate::typed_id!(
    /// A number waiting to be asked of its register again (derived from its order: one).
    pub TaxIdCheckId
);

/// The first wait after the register gave no answer again.
pub const FIRST_BACKOFF: Duration = Duration::minutes(1);
/// The longest wait between two attempts.
pub const MAX_BACKOFF: Duration = Duration::hours(6);

/// An order whose buyer's tax number is to be asked of its register again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxIdCheck {
    pub id: TaxIdCheckId,
    pub organization_id: OrganizationId,
    pub order_id: OrderId,
    /// When it was queued.
    pub created_at: DateTime<Utc>,
    /// Attempts the register did not answer so far.
    pub attempts: u32,
    /// Not before this (after an attempt without an answer; `None`: at once).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// Why the last attempt had no answer.
    pub last_error: Option<String>,
}

impl TaxIdCheck {
    pub fn new(
        organization_id: OrganizationId,
        order_id: OrderId,
        created_at: DateTime<Utc>,
    ) -> TaxIdCheck {
        TaxIdCheck {
            id: TaxIdCheck::id_for(order_id),
            organization_id,
            order_id,
            created_at,
            attempts: 0,
            next_attempt_at: None,
            last_error: None,
        }
    }

    /// One entry per order, however often it is queued.
    pub fn id_for(order: OrderId) -> TaxIdCheckId {
        TaxIdCheckId(derived_uuid(order.0, "tax_id_check"))
    }

    /// Whether it may be attempted at `now`.
    pub fn is_due(&self, now: DateTime<Utc>) -> bool {
        self.next_attempt_at.is_none_or(|at| at <= now)
    }

    /// After an attempt at `now` without an answer: the next one waits a minute, doubling
    /// with each attempt, at most six hours.
    pub fn no_answer(&mut self, now: DateTime<Utc>, error: String) {
        self.attempts = self.attempts.saturating_add(1);
        self.next_attempt_at = Some(now + backoff(self.attempts));
        self.last_error = Some(error);
    }
}

/// The wait after the `attempts`-th attempt without an answer (1 → a minute).
pub fn backoff(attempts: u32) -> Duration {
    // 2^9 minutes is past six hours already.
    let doublings = attempts.saturating_sub(1).min(9);
    (FIRST_BACKOFF * (1_i32 << doublings)).min(MAX_BACKOFF)
}

impl Record for TaxIdCheck {
    crate::record_v1!(TaxIdCheck, "tax_id_check");

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_doubles_from_a_minute_to_six_hours() {
        let waits: Vec<i64> = (1..=11).map(|n| backoff(n).num_minutes()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 360, 360]);
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }

    #[test]
    fn an_entry_is_one_per_order_and_waits_after_no_answer() {
        let order = OrderId::new();
        let org = OrganizationId::new();
        let now = Utc::now();
        let mut check = TaxIdCheck::new(org, order, now);
        assert_eq!(check.id, TaxIdCheck::new(org, order, now).id);
        assert_ne!(check.id, TaxIdCheck::id_for(OrderId::new()));
        assert!(check.is_due(now));
        check.no_answer(now, "timeout".into());
        check.no_answer(now, "timeout".into());
        assert_eq!(check.attempts, 2);
        assert_eq!(check.next_attempt_at, Some(now + Duration::minutes(2)));
        assert!(!check.is_due(now + Duration::seconds(119)));
        assert!(check.is_due(now + Duration::minutes(2)));
        assert_eq!(check.last_error.as_deref(), Some("timeout"));
    }

    #[test]
    fn the_record_round_trips() {
        let mut check = TaxIdCheck::new(OrganizationId::new(), OrderId::new(), Utc::now());
        check.no_answer(Utc::now(), "VIES: 503".into());
        let bytes = check.encode().unwrap();
        assert_eq!(
            TaxIdCheck::decode(TaxIdCheck::VERSION, &bytes).unwrap(),
            check
        );
    }
}
