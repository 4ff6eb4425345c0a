//! The usage store on PostgreSQL (`store::usage`): not landed yet.

use super::PgEngine;
use crate::store::reads::Direction;
use crate::store::usage::{Agg, Answer, WindowState, Work};
use crate::StorageError;

fn not_yet() -> StorageError {
    StorageError::Unavailable("the usage store is not on PostgreSQL yet".into())
}

impl PgEngine {
    pub(crate) async fn usage_submit(&self, _work: Work) -> Result<Answer, StorageError> {
        Err(not_yet())
    }

    pub(crate) async fn usage_events(
        &self,
        _keys: &[Vec<u8>],
    ) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        Err(not_yet())
    }

    pub(crate) async fn usage_index(
        &self,
        _start: &[u8],
        _end: &[u8],
        _direction: Direction,
        _limit: usize,
    ) -> Result<Vec<Vec<u8>>, StorageError> {
        Err(not_yet())
    }

    pub(crate) async fn aggregates(
        &self,
        _start: &[u8],
        _end: &[u8],
    ) -> Result<Vec<(Vec<u8>, Agg)>, StorageError> {
        Err(not_yet())
    }

    pub(crate) async fn members(
        &self,
        _start: &[u8],
        _end: &[u8],
    ) -> Result<Vec<Vec<u8>>, StorageError> {
        Err(not_yet())
    }

    pub(crate) async fn windows(
        &self,
        _start: &[u8],
        _end: &[u8],
    ) -> Result<Vec<(Vec<u8>, WindowState)>, StorageError> {
        Err(not_yet())
    }
}
