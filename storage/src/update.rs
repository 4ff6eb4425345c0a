//! [`Store::update`]: the compare-and-swap change of one plain record (an organization, a
//! product, a webhook endpoint...), the same on both engines: read it, let the caller
//! decide its next revision, write that only if the record is still at the revision read,
//! wait until it is durable; when another writer got there first, read again and decide
//! again.

use crate::record::{Expect, Record};
use crate::{Batch, StorageError, Store};

/// How many times [`Store::update`] decides before it gives up with
/// [`StorageError::Conflict`] (each loss means another writer changed the record meanwhile).
pub const UPDATE_ATTEMPTS: usize = 5;

/// Why [`Store::update`] changed nothing.
#[derive(Debug)]
pub enum UpdateError<E> {
    /// The caller's decision refused the change.
    Rejected(E),
    /// The store failed, or the record kept changing under every attempt
    /// ([`StorageError::Conflict`]), or the new revision takes a unique key another record
    /// holds ([`StorageError::Unique`]).
    Storage(StorageError),
}

impl<E> From<StorageError> for UpdateError<E> {
    fn from(e: StorageError) -> Self {
        UpdateError::Storage(e)
    }
}

impl Store {
    /// Changes the record `id` of `R` by compare-and-swap. `decide` gets the record as
    /// stored and returns its next revision (`Ok(None)`: nothing to write); it is called
    /// again, on the record as it is then, whenever another writer won the race, at most
    /// [`UPDATE_ATTEMPTS`] times. Returns the record as it is afterwards, or `None` when
    /// there is no such record. The write is durable when this returns.
    pub async fn update<R, E>(
        &self,
        id: &[u8],
        mut decide: impl AsyncFnMut(&R) -> Result<Option<R>, E>,
    ) -> Result<Option<R>, UpdateError<E>>
    where
        R: Record,
    {
        let mut lost = None;
        for _ in 0..UPDATE_ATTEMPTS {
            let Some(current) = self.get::<R>(id).await? else {
                return Ok(None);
            };
            let Some(next) = decide(&current.value)
                .await
                .map_err(UpdateError::Rejected)?
            else {
                return Ok(Some(current.value));
            };
            let mut batch = Batch::new();
            batch.put(&next, Expect::Rev(current.rev))?;
            match self.commit_durable(&batch).await {
                Ok(_) => return Ok(Some(next)),
                Err(e @ StorageError::Conflict { .. }) => lost = Some(e),
                Err(e) => return Err(e.into()),
            }
        }
        Err(UpdateError::Storage(lost.unwrap_or(
            StorageError::Conflict {
                collection: R::COLLECTION,
                expected: "an unchanged revision".into(),
                found: None,
            },
        )))
    }
}
