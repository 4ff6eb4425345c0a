//! What a rate limit reports (foundation, below `crate::error`, which answers a refusal
//! with it): the policies that applied to a request and a refusal, [`Denied`]. The
//! limiters themselves are `crate::ratelimit`, which re-exports these types.

/// The state of one policy as the `RateLimit` fields report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PolicyState {
    /// The policy's name in the fields (`ip`, `account`, `client`, `key`, `token`).
    pub name: &'static str,
    /// Requests per window (`q`).
    pub quota: u32,
    /// The window in seconds (`w`).
    pub window_secs: u32,
    /// Requests left now (`r`).
    pub remaining: u32,
    /// Seconds until the quota is whole again (`t`).
    pub reset_secs: u32,
}

/// The policies that applied to a request (at most three), for the response fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Report {
    policies: [Option<PolicyState>; 3],
}

impl Report {
    pub(crate) fn push(&mut self, p: PolicyState) {
        if let Some(slot) = self.policies.iter_mut().find(|s| s.is_none()) {
            *slot = Some(p);
        }
    }

    pub fn policies(&self) -> impl Iterator<Item = &PolicyState> {
        self.policies.iter().flatten()
    }

    /// `RateLimit-Policy`, e.g. `"ip";q=100;w=1, "key";q=50;w=1`.
    pub fn policy_header(&self) -> String {
        self.policies()
            .map(|p| format!("\"{}\";q={};w={}", p.name, p.quota, p.window_secs))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `RateLimit`, e.g. `"ip";r=99;t=1, "key";r=0;t=1`.
    pub fn state_header(&self) -> String {
        self.policies()
            .map(|p| format!("\"{}\";r={};t={}", p.name, p.remaining, p.reset_secs))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn is_empty(&self) -> bool {
        self.policies().next().is_none()
    }
}

/// A request over a limit: 429 with these fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Denied {
    pub retry_after_secs: u64,
    pub report: Report,
}
