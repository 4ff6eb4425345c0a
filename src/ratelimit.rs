//! Rate limits (`[rate_limits]`): GCRA limiters keyed by client address, account, OAuth
//! client, license key or token, from the `governor` crate (each a sharded `DashMap`, so
//! different keys never contend on one lock), plus the per-account delay after failed
//! sign-ins.
//!
//! A denial is [`Denied`], which `crate::error` answers as 429 `TooManyRequests` with
//! `Retry-After` and the `RateLimit-Policy` / `RateLimit` fields of
//! draft-ietf-httpapi-ratelimit-headers-10 (named policies: `"<name>";q=<quota>;w=<window>`
//! and `"<name>";r=<remaining>;t=<seconds until full>`).
//!
//! Keys other than addresses are 64-bit SipHash values under a key drawn at start-up, so a
//! limiter never holds a secret (a license key, a token, an e-mail address), a check
//! allocates nothing, and nobody can aim two keys at one bucket. Idle keys are purged by
//! [`RateLimits::purge`], which `startup` runs every minute.

use std::hash::{BuildHasher, Hasher};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use dashmap::DashMap;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};

use crate::config::{Limit, RateLimitSettings};

type Keyed<K> = RateLimiter<K, DashMapStateStore<K>, DefaultClock, StateInformationMiddleware>;

/// The state of one policy as the `RateLimit` fields report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PolicyState {
    /// The policy's name in the fields (`ip`, `account`, `client`, `key`, `token`).
    pub name: &'static str,
    /// Requests per window (`q`).
    pub quota: u32,
    /// The window in seconds (`w`).
    pub window_secs: u64,
    /// Requests left now (`r`).
    pub remaining: u32,
    /// Seconds until the quota is whole again (`t`).
    pub reset_secs: u64,
}

/// The policies that applied to a request (at most two), for the response fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Report {
    policies: [Option<PolicyState>; 2],
}

impl Report {
    fn push(&mut self, p: PolicyState) {
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

/// One configured policy: a keyed limiter, or nothing when its `requests` is 0 or limits are
/// off.
struct Policy<K: std::hash::Hash + Eq + Clone> {
    name: &'static str,
    limit: Limit,
    limiter: Option<Keyed<K>>,
}

fn secs_ceil(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

impl<K: std::hash::Hash + Eq + Clone> Policy<K> {
    fn new(name: &'static str, limit: Limit, enabled: bool) -> Self {
        let quota = NonZeroU32::new(limit.requests).and_then(|n| {
            Quota::with_period(Duration::from_secs(limit.per_secs.max(1)) / n.get())
                .map(|q| q.allow_burst(n))
        });
        Self {
            name,
            limit,
            limiter: quota
                .filter(|_| enabled)
                .map(|q| RateLimiter::dashmap(q).with_middleware::<StateInformationMiddleware>()),
        }
    }

    fn state(&self, remaining: u32) -> PolicyState {
        let per_request =
            Duration::from_secs(self.limit.per_secs.max(1)) / self.limit.requests.max(1);
        PolicyState {
            name: self.name,
            quota: self.limit.requests,
            window_secs: self.limit.per_secs,
            remaining,
            reset_secs: secs_ceil(per_request * self.limit.requests.saturating_sub(remaining)),
        }
    }

    /// Takes one request from `key`'s bucket; `Err` holds how long until one is free.
    fn check(&self, key: &K, report: &mut Report) -> Result<(), Duration> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        match limiter.check_key(key) {
            Ok(snapshot) => {
                report.push(self.state(snapshot.remaining_burst_capacity()));
                Ok(())
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(limiter.clock().now());
                let mut state = self.state(0);
                state.reset_secs = state.reset_secs.max(secs_ceil(wait));
                report.push(state);
                Err(wait)
            }
        }
    }

    fn purge(&self) {
        if let Some(l) = &self.limiter {
            l.retain_recent();
            l.shrink_to_fit();
        }
    }

    fn len(&self) -> usize {
        self.limiter.as_ref().map_or(0, |l| l.len())
    }
}

/// Failed sign-ins of one account, and until when its next attempt waits.
#[derive(Debug, Clone, Copy)]
struct Backoff {
    failures: u32,
    until: Instant,
}

/// Every limit of the service, held in `AppState`.
pub struct RateLimits {
    enabled: bool,
    hasher: std::hash::RandomState,
    sign_in_ip: Policy<IpAddr>,
    sign_in_account: Policy<u64>,
    sign_up_ip: Policy<IpAddr>,
    checkout_link_ip: Policy<IpAddr>,
    oauth_ip: Policy<IpAddr>,
    oauth_client: Policy<u64>,
    license_keys_ip: Policy<IpAddr>,
    license_keys_key: Policy<u64>,
    api_token: Policy<u64>,
    backoff_base: Duration,
    backoff_max: Duration,
    backoffs: DashMap<u64, Backoff>,
}

impl RateLimits {
    pub fn new(s: &RateLimitSettings) -> Self {
        let on = s.enabled;
        Self {
            enabled: on,
            hasher: std::hash::RandomState::new(),
            sign_in_ip: Policy::new("ip", s.sign_in_per_ip, on),
            sign_in_account: Policy::new("account", s.sign_in_per_account, on),
            sign_up_ip: Policy::new("ip", s.sign_up_per_ip, on),
            checkout_link_ip: Policy::new("ip", s.checkout_links_per_ip, on),
            oauth_ip: Policy::new("ip", s.oauth_per_ip, on),
            oauth_client: Policy::new("client", s.oauth_per_client, on),
            license_keys_ip: Policy::new("ip", s.license_keys_per_ip, on),
            license_keys_key: Policy::new("key", s.license_keys_per_key, on),
            api_token: Policy::new("token", s.api_per_token, on),
            backoff_base: Duration::from_millis(s.sign_in_backoff_base_ms),
            backoff_max: Duration::from_millis(s.sign_in_backoff_max_ms),
            backoffs: DashMap::new(),
        }
    }

    /// The key of an e-mail address: case-insensitive (ASCII), without allocating.
    fn account_key(&self, email: &str) -> u64 {
        let mut h = self.hasher.build_hasher();
        h.write_u8(b'a');
        for b in email.trim().bytes() {
            h.write_u8(b.to_ascii_lowercase());
        }
        h.finish()
    }

    fn string_key(&self, tag: u8, s: &str) -> u64 {
        let mut h = self.hasher.build_hasher();
        h.write_u8(tag);
        h.write(s.as_bytes());
        h.finish()
    }

    fn two<A, B>(
        &self,
        first: (&Policy<A>, &A),
        second: Option<(&Policy<B>, &B)>,
    ) -> Result<Report, Denied>
    where
        A: std::hash::Hash + Eq + Clone,
        B: std::hash::Hash + Eq + Clone,
    {
        let mut report = Report::default();
        let mut wait = first.0.check(first.1, &mut report).err();
        if wait.is_none() {
            if let Some((policy, key)) = second {
                wait = policy.check(key, &mut report).err();
            }
        }
        match wait {
            None => Ok(report),
            Some(w) => Err(Denied {
                retry_after_secs: secs_ceil(w).max(1),
                report,
            }),
        }
    }

    /// A sign-in attempt from `ip` for `email`: the address's and the account's quotas, and
    /// the account's delay after failures.
    pub fn sign_in(&self, ip: IpAddr, email: &str) -> Result<Report, Denied> {
        let account = self.account_key(email);
        if self.enabled {
            if let Some(b) = self.backoffs.get(&account).map(|b| *b) {
                let now = Instant::now();
                if b.until > now {
                    let mut report = Report::default();
                    let mut state = self.sign_in_account.state(0);
                    state.reset_secs = secs_ceil(b.until - now);
                    report.push(state);
                    return Err(Denied {
                        retry_after_secs: secs_ceil(b.until - now).max(1),
                        report,
                    });
                }
            }
        }
        self.two(
            (&self.sign_in_ip, &ip),
            Some((&self.sign_in_account, &account)),
        )
    }

    /// A failed sign-in of `email`: its next attempt waits `base × 2^(failures-1)`, at
    /// most `max`.
    pub fn sign_in_failed(&self, email: &str) {
        if !self.enabled || self.backoff_base.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut entry = self
            .backoffs
            .entry(self.account_key(email))
            .or_insert(Backoff {
                failures: 0,
                until: now,
            });
        entry.failures = entry.failures.saturating_add(1);
        let delay = self
            .backoff_base
            .checked_mul(1u32 << (entry.failures - 1).min(20))
            .unwrap_or(self.backoff_max)
            .min(self.backoff_max);
        entry.until = now + delay;
    }

    /// A successful sign-in of `email` ends its delay.
    pub fn sign_in_succeeded(&self, email: &str) {
        self.backoffs.remove(&self.account_key(email));
    }

    /// A sign-up from `ip` for `email` (the account's quota is the sign-in one).
    pub fn sign_up(&self, ip: IpAddr, email: &str) -> Result<Report, Denied> {
        let account = self.account_key(email);
        self.two(
            (&self.sign_up_ip, &ip),
            Some((&self.sign_in_account, &account)),
        )
    }

    /// A checkout link followed from `ip` (it creates a checkout).
    pub fn checkout_link(&self, ip: IpAddr) -> Result<Report, Denied> {
        self.two::<IpAddr, IpAddr>((&self.checkout_link_ip, &ip), None)
    }

    /// A token, introspection or revocation request from `ip`, for `client_id` when the
    /// request names one.
    pub fn oauth(&self, ip: IpAddr, client_id: Option<&str>) -> Result<Report, Denied> {
        let client = client_id.map(|c| self.string_key(b'c', c));
        self.two(
            (&self.oauth_ip, &ip),
            client.as_ref().map(|c| (&self.oauth_client, c)),
        )
    }

    /// A public license-key call from `ip` for `key` of `organization`.
    pub fn license_key(
        &self,
        ip: IpAddr,
        organization: &impl std::hash::Hash,
        key: &str,
    ) -> Result<Report, Denied> {
        if !self.enabled {
            return Ok(Report::default());
        }
        let mut h = self.hasher.build_hasher();
        h.write_u8(b'k');
        organization.hash(&mut h);
        h.write(key.as_bytes());
        let key = h.finish();
        self.two(
            (&self.license_keys_ip, &ip),
            Some((&self.license_keys_key, &key)),
        )
    }

    /// An authenticated API call with the bearer token `token`.
    pub fn api_token(&self, token: &str) -> Result<Report, Denied> {
        if !self.enabled {
            return Ok(Report::default());
        }
        let key = self.string_key(b't', token);
        self.two::<u64, u64>((&self.api_token, &key), None)
    }

    /// Forgets keys whose buckets are full again and delays that ran out long ago, so the
    /// limiters' memory follows the recent traffic, not all traffic ever seen.
    pub fn purge(&self) {
        self.sign_in_ip.purge();
        self.sign_in_account.purge();
        self.sign_up_ip.purge();
        self.checkout_link_ip.purge();
        self.oauth_ip.purge();
        self.oauth_client.purge();
        self.license_keys_ip.purge();
        self.license_keys_key.purge();
        self.api_token.purge();
        let now = Instant::now();
        // A delay is forgotten once it ran out and a maximal delay more has passed: after a
        // quiet spell, an account starts again from the base delay.
        let keep = self.backoff_max;
        self.backoffs.retain(|_, b| b.until + keep > now);
        self.backoffs.shrink_to_fit();
    }

    /// Keys held across all limiters (for tests and diagnostics).
    pub fn tracked_keys(&self) -> usize {
        self.sign_in_ip.len()
            + self.sign_in_account.len()
            + self.sign_up_ip.len()
            + self.checkout_link_ip.len()
            + self.oauth_ip.len()
            + self.oauth_client.len()
            + self.license_keys_ip.len()
            + self.license_keys_key.len()
            + self.api_token.len()
            + self.backoffs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> RateLimitSettings {
        RateLimitSettings {
            sign_in_per_ip: Limit::new(3, 60),
            sign_in_per_account: Limit::new(2, 60),
            license_keys_per_ip: Limit::new(5, 1),
            license_keys_per_key: Limit::new(2, 1),
            sign_in_backoff_base_ms: 1000,
            sign_in_backoff_max_ms: 4000,
            ..RateLimitSettings::default()
        }
    }

    const IP: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    #[test]
    fn a_quota_runs_out_and_reports_both_policies() {
        let l = RateLimits::new(&settings());
        let ok = l.license_key(IP, &1u8, "K").unwrap();
        assert_eq!(ok.policy_header(), "\"ip\";q=5;w=1, \"key\";q=2;w=1");
        assert_eq!(ok.state_header(), "\"ip\";r=4;t=1, \"key\";r=1;t=1");
        l.license_key(IP, &1u8, "K").unwrap();
        let denied = l.license_key(IP, &1u8, "K").unwrap_err();
        assert_eq!(denied.retry_after_secs, 1);
        assert!(denied.report.state_header().ends_with("\"key\";r=0;t=1"));
        // Another key of the same organization, or the same key of another one, is apart.
        l.license_key(IP, &1u8, "L").unwrap();
        l.license_key(IP, &2u8, "K").unwrap();
    }

    #[test]
    fn accounts_are_case_insensitive_and_backoff_doubles_up_to_max_and_resets() {
        let l = RateLimits::new(&settings());
        l.sign_in(IP, "A@x.io").unwrap();
        l.sign_in_failed("a@x.io");
        let d = l.sign_in(IP, "a@X.io").unwrap_err();
        assert_eq!(d.retry_after_secs, 1);
        l.sign_in_failed("a@x.io");
        assert_eq!(l.sign_in(IP, "a@x.io").unwrap_err().retry_after_secs, 2);
        l.sign_in_failed("a@x.io");
        l.sign_in_failed("a@x.io");
        l.sign_in_failed("a@x.io");
        assert_eq!(l.sign_in(IP, "a@x.io").unwrap_err().retry_after_secs, 4);
        l.sign_in_succeeded("a@x.io");
        // The delay is gone; the account's quota (2 a minute) still counts.
        l.sign_in(IP, "a@x.io").unwrap();
        assert!(l.sign_in(IP, "a@x.io").is_err());
    }

    #[test]
    fn disabled_limits_never_deny_and_zero_requests_means_no_limit() {
        let mut s = settings();
        s.enabled = false;
        let l = RateLimits::new(&s);
        for _ in 0..100 {
            l.license_key(IP, &1u8, "K").unwrap();
            l.sign_in(IP, "a@x.io").unwrap();
            l.sign_in_failed("a@x.io");
        }
        let mut s = settings();
        s.license_keys_per_key = Limit::new(0, 1);
        let l = RateLimits::new(&s);
        for _ in 0..5 {
            l.license_key(IP, &1u8, "K").unwrap();
        }
        assert!(
            l.license_key(IP, &1u8, "K").is_err(),
            "the address quota still applies"
        );
    }

    #[test]
    fn purge_forgets_full_buckets() {
        let l = RateLimits::new(&settings());
        for i in 0..50u32 {
            let _ = l.api_token(&format!("t{i}"));
        }
        assert_eq!(l.tracked_keys(), 50);
        std::thread::sleep(Duration::from_millis(20));
        l.purge();
        assert_eq!(
            l.tracked_keys(),
            0,
            "a bucket refilled in 10 ms is forgotten"
        );
    }
}
