//! The subscription record's format version 3, before the recovery of declined renewals
//! was recorded: kept to decode records written by earlier builds.
//!
//! Version 3 is version 2 with the seats at the end (bincode writes a struct as its
//! fields in order, so the nested version 2 reads the same bytes). A version-3
//! subscription that is past due keeps its retry: its last attempt was its `modified_at`
//! (what its retry key was made of, so an in-flight retry keeps its key) and its next
//! attempt is [`RENEWAL_RETRY_DELAY`] after it, never before the period end.

use serde::Deserialize;

use super::model::{Subscription, SubscriptionStatus};
use super::renewal::RENEWAL_RETRY_DELAY;
use super::v2::SubscriptionV2;

/// The layout of version 3.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct SubscriptionV3 {
    pub v2: SubscriptionV2,
    pub seats: Option<u32>,
}

impl From<SubscriptionV3> for Subscription {
    fn from(v: SubscriptionV3) -> Self {
        let mut s = Subscription::from(v.v2);
        s.seats = v.seats;
        s
    }
}

impl Subscription {
    /// The recovery fields of a subscription read from an earlier format (none recorded
    /// them): a past-due one was last charged at its `modified_at`, is retried
    /// [`RENEWAL_RETRY_DELAY`] later (not before its period end), and went past due at its
    /// period end (the first attempt's time is not recorded; it was made then or soon
    /// after).
    pub(super) fn with_recovery_derived(mut self) -> Self {
        if self.status == SubscriptionStatus::PastDue && self.ended_at.is_none() {
            let last = self.modified_at.unwrap_or(self.current_period_start);
            let retry = last + RENEWAL_RETRY_DELAY;
            self.last_attempt_at = self.modified_at;
            self.next_payment_attempt_at =
                Some(self.current_period_end.map_or(retry, |end| retry.max(end)));
            self.past_due_at = Some(self.current_period_end.unwrap_or(last));
        }
        self
    }
}
