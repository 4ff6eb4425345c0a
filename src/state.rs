use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tollgate_storage::Store;

use crate::auth::TokenHasher;
use crate::config::Settings;

/// Everything a handler needs, shared by all workers.
pub struct AppState {
    pub store: Store,
    pub hasher: TokenHasher,
    pub settings: Arc<Settings>,
    /// Base URL of this service as clients reach it.
    pub public_url: String,
    ready: AtomicBool,
}

impl AppState {
    pub fn new(
        store: Store,
        hasher: TokenHasher,
        settings: Arc<Settings>,
        public_url: String,
    ) -> Self {
        Self {
            store,
            hasher,
            settings,
            public_url,
            ready: AtomicBool::new(false),
        }
    }

    pub fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }

    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::SeqCst);
    }
}
