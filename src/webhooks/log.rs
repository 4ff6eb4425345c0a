//! The fan-out's bookkeeping for one pass: which `customer.state_changed` tell something
//! new, and the cursor's log (`crate::app::event_log`), numbered per organization in the
//! order the pass consumes the changes. Everything goes into the pass's own write.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use tollgate_storage::{Batch, Expect, StorageError, Store};

use super::events::Event;
use crate::api::webhook::WebhookEventType;
use crate::app::event_log::{CustomerStateDigest, EventLogHead, LoggedEvent};
use crate::domain::ids::{CustomerId, OrganizationId};

/// A value read in this pass, its revision (`None`: absent) and whether it changed.
struct Slot<T> {
    rev: Option<u64>,
    value: T,
    dirty: bool,
}

impl<T> Slot<T> {
    fn expect(&self) -> Expect {
        self.rev.map_or(Expect::Absent, Expect::Rev)
    }
}

/// See the module. One per pass.
#[derive(Default)]
pub struct Logger {
    heads: HashMap<OrganizationId, Slot<u64>>,
    digests: HashMap<CustomerId, Slot<Vec<u8>>>,
}

impl Logger {
    /// The events of one change that are to be sent, each with its log entry, numbered
    /// (for the caller to put in the pass's batch once it knows whether an endpoint
    /// event's payload holds the data); a state equal to the last one told of its
    /// customer is dropped.
    pub async fn keep(
        &mut self,
        store: &Store,
        events: Vec<Event>,
        now: DateTime<Utc>,
    ) -> Result<Vec<(Event, LoggedEvent)>, StorageError> {
        let mut kept = Vec::with_capacity(events.len());
        for event in events {
            let data = event.body["data"].to_string();
            if event.event_type == WebhookEventType::CustomerStateChanged {
                let Some(customer) = event.body["data"]["id"]
                    .as_str()
                    .and_then(|id| uuid::Uuid::parse_str(id).ok())
                    .map(CustomerId)
                else {
                    continue;
                };
                let digest = CustomerStateDigest::of(&data);
                let slot = match self.digests.entry(customer) {
                    std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::hash_map::Entry::Vacant(e) => {
                        let stored = store.get::<CustomerStateDigest>(&customer.key()).await?;
                        e.insert(Slot {
                            rev: stored.as_ref().map(|s| s.rev),
                            value: stored.map(|s| s.value.digest).unwrap_or_default(),
                            dirty: false,
                        })
                    }
                };
                if slot.value == digest {
                    continue;
                }
                slot.value = digest;
                slot.dirty = true;
            }
            let org = event.organization_id;
            let head = match self.heads.entry(org) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let stored = store.get::<EventLogHead>(&org.key()).await?;
                    e.insert(Slot {
                        rev: stored.as_ref().map(|s| s.rev),
                        value: stored.map_or(0, |s| s.value.last),
                        dirty: false,
                    })
                }
            };
            head.value += 1;
            head.dirty = true;
            let timestamp = event.body["timestamp"]
                .as_str()
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map_or(now, |t| t.with_timezone(&Utc));
            let logged = LoggedEvent {
                organization_id: org,
                seq: head.value,
                event_type: event.event_type.as_str().to_string(),
                timestamp,
                data,
                created_at: now,
                data_in: None,
            };
            kept.push((event, logged));
        }
        Ok(kept)
    }

    /// Writes the new heads and digests into the pass's `batch`, compared with what the
    /// pass read (another node's pass in between makes the write fail, and the entries are
    /// read again).
    pub fn finish(self, batch: &mut Batch) -> Result<(), StorageError> {
        for (organization_id, slot) in self.heads {
            if slot.dirty {
                let head = EventLogHead {
                    organization_id,
                    last: slot.value,
                };
                batch.put(&head, slot.expect())?;
            }
        }
        for (customer_id, slot) in self.digests {
            if slot.dirty {
                let expect = slot.expect();
                let digest = CustomerStateDigest {
                    customer_id,
                    digest: slot.value,
                };
                batch.put(&digest, expect)?;
            }
        }
        Ok(())
    }
}
