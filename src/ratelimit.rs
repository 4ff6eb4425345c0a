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
//! Sign-in is throttled per client address, per (account, client address) with a growing
//! delay after each failure, and account-wide only far above what one address may do and
//! never for a browser that has signed in to the account before (its device cookie, see
//! `crate::web::account`): failures from elsewhere never hold back the owner at their own
//! address (OWASP's "Blocking Brute Force Attacks", device cookies).
//!
//! An IPv6 client counts by its /64 (one subscriber's prefix): rotating addresses within it
//! gains nothing.
//!
//! Keys other than addresses are 64-bit SipHash values under a key drawn at start-up, so a
//! limiter never holds a secret (a license key, a token, an e-mail address), a check
//! allocates nothing, and nobody can aim two keys at one bucket. Idle keys are purged by
//! [`RateLimits::purge`], which `crate::jobs` runs every minute.

use std::hash::{BuildHasher, Hash, Hasher};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use dashmap::DashMap;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};

use tollgate_actors::domain::customer_session::CustomerSessionCode;

use crate::config::{Limit, RateLimitSettings};

type Keyed<K> = RateLimiter<K, DashMapStateStore<K>, DefaultClock, StateInformationMiddleware>;

pub use crate::limits::{Denied, PolicyState, Report};

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

fn secs_u32(d: Duration) -> u32 {
    u32::try_from(secs_ceil(d)).unwrap_or(u32::MAX)
}

/// One policy's check: takes a request from its bucket, or says how long until one is free.
type Check<'a> = &'a dyn Fn(&mut Report) -> Result<(), Duration>;

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
            window_secs: u32::try_from(self.limit.per_secs).unwrap_or(u32::MAX),
            remaining,
            reset_secs: secs_u32(per_request * self.limit.requests.saturating_sub(remaining)),
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
                state.reset_secs = state.reset_secs.max(secs_u32(wait));
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

/// Failed sign-ins of one account from one address, and until when its next attempt from
/// there waits.
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
    /// Per (account, address).
    sign_in_account: Policy<u64>,
    /// Per account, for browsers without its device cookie.
    sign_in_account_total: Policy<u64>,
    sign_up_ip: Policy<IpAddr>,
    authorization_codes: Policy<u64>,
    idempotency_keys: Policy<u64>,
    checkout_link_ip: Policy<IpAddr>,
    oauth_ip: Policy<IpAddr>,
    oauth_client: Policy<u64>,
    license_keys_ip: Policy<IpAddr>,
    license_keys_key: Policy<u64>,
    key_resends_ip: Policy<IpAddr>,
    /// Per (e-mail address, client address).
    key_resends_pair: Policy<u64>,
    key_resends_address: Policy<u64>,
    portal_codes_ip: Policy<IpAddr>,
    /// Per (e-mail address, client address).
    portal_codes_pair: Policy<u64>,
    portal_codes_address: Policy<u64>,
    portal_sign_ins_ip: Policy<IpAddr>,
    deactivations_by_label: Policy<u64>,
    subscription_cancels: Policy<u64>,
    receipts_address: Policy<u64>,
    api_token: Policy<u64>,
    /// Downloads through the portal's links (`[files]`): per customer, per client address.
    downloads_customer: Policy<u64>,
    downloads_ip: Policy<IpAddr>,
    backoff_base: Duration,
    backoff_max: Duration,
    /// Keyed by (account, address).
    backoffs: DashMap<u64, Backoff>,
    /// Wrong portal codes typed for an e-mail address from one client address, keyed by
    /// (organization, e-mail address, client address). Not a rate limit: always on.
    code_failures: DashMap<u64, CodeFailures>,
}

/// Wrong codes typed for one address from one client, and until when they count.
#[derive(Debug, Clone, Copy)]
struct CodeFailures {
    failures: u8,
    until: Instant,
}

/// The key of a client address: an IPv6 address by its /64.
fn addr_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_none() => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(std::net::Ipv6Addr::from(bits))
        }
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

impl RateLimits {
    pub fn new(s: &RateLimitSettings) -> Self {
        let on = s.enabled;
        Self {
            enabled: on,
            hasher: std::hash::RandomState::new(),
            sign_in_ip: Policy::new("ip", s.sign_in_per_ip, on),
            sign_in_account: Policy::new("account", s.sign_in_per_account, on),
            sign_in_account_total: Policy::new("account_total", s.sign_in_per_account_total, on),
            sign_up_ip: Policy::new("ip", s.sign_up_per_ip, on),
            authorization_codes: Policy::new("codes", s.authorization_codes_per_user, on),
            idempotency_keys: Policy::new("idempotency", s.idempotency_keys_per_caller, on),
            checkout_link_ip: Policy::new("ip", s.checkout_links_per_ip, on),
            oauth_ip: Policy::new("ip", s.oauth_per_ip, on),
            oauth_client: Policy::new("client", s.oauth_per_client, on),
            license_keys_ip: Policy::new("ip", s.license_keys_per_ip, on),
            license_keys_key: Policy::new("key", s.license_keys_per_key, on),
            key_resends_ip: Policy::new("ip", s.key_resends_per_ip, on),
            key_resends_pair: Policy::new("address_client", s.key_resends_per_address_client, on),
            key_resends_address: Policy::new("address", s.key_resends_per_address, on),
            portal_codes_ip: Policy::new("ip", s.portal_codes_per_ip, on),
            portal_codes_pair: Policy::new("address_client", s.portal_codes_per_address_client, on),
            portal_codes_address: Policy::new("address", s.portal_codes_per_address, on),
            portal_sign_ins_ip: Policy::new("ip", s.portal_sign_ins_per_ip, on),
            deactivations_by_label: Policy::new("key", s.deactivations_by_label_per_key, on),
            subscription_cancels: Policy::new(
                "subscription",
                s.subscription_cancels_per_subscription,
                on,
            ),
            receipts_address: Policy::new("address", s.receipts_per_address, on),
            api_token: Policy::new("token", s.api_per_token, on),
            downloads_customer: Policy::new("customer", Limit::new(0, 1), false),
            downloads_ip: Policy::new("ip", Limit::new(0, 1), false),
            backoff_base: Duration::from_millis(s.sign_in_backoff_base_ms),
            backoff_max: Duration::from_millis(s.sign_in_backoff_max_ms),
            backoffs: DashMap::new(),
            code_failures: DashMap::new(),
        }
    }

    /// The key of an account: its e-mail address as the account lookup normalises it.
    fn account_key(&self, email: &str) -> u64 {
        self.string_key(
            b'a',
            &tollgate_actors::domain::email::normalize_email(email),
        )
    }

    /// The key of an account seen from one client address.
    fn account_at(&self, email: &str, ip: IpAddr) -> u64 {
        let mut h = self.hasher.build_hasher();
        h.write_u8(b'p');
        h.write(tollgate_actors::domain::email::normalize_email(email).as_bytes());
        addr_key(ip).hash(&mut h);
        h.finish()
    }

    fn string_key(&self, tag: u8, s: &str) -> u64 {
        let mut h = self.hasher.build_hasher();
        h.write_u8(tag);
        h.write(s.as_bytes());
        h.finish()
    }

    /// Takes one request from each policy in turn; the first that is out denies (the ones
    /// after it are not charged).
    fn check_all(&self, checks: &[Check<'_>]) -> Result<Report, Denied> {
        let mut report = Report::default();
        for check in checks {
            if let Err(wait) = check(&mut report) {
                return Err(Denied {
                    retry_after_secs: secs_ceil(wait).max(1),
                    report,
                });
            }
        }
        Ok(report)
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
        match second {
            Some((policy, key)) => self.check_all(&[
                &|r: &mut Report| first.0.check(first.1, r),
                &|r: &mut Report| policy.check(key, r),
            ]),
            None => self.check_all(&[&|r: &mut Report| first.0.check(first.1, r)]),
        }
    }

    /// A sign-in attempt from `ip` for `email`: the address's quota, the quota of the
    /// account from this address and its delay after failures from here, and, unless this
    /// browser holds the account's device cookie (`known_device`), the account-wide
    /// ceiling.
    pub fn sign_in(&self, ip: IpAddr, email: &str, known_device: bool) -> Result<Report, Denied> {
        let pair = self.account_at(email, ip);
        if self.enabled {
            if let Some(b) = self.backoffs.get(&pair).map(|b| *b) {
                let now = Instant::now();
                if b.until > now {
                    let mut report = Report::default();
                    let mut state = self.sign_in_account.state(0);
                    state.reset_secs = secs_u32(b.until - now);
                    report.push(state);
                    return Err(Denied {
                        retry_after_secs: secs_ceil(b.until - now).max(1),
                        report,
                    });
                }
            }
        }
        let ip = addr_key(ip);
        let account = self.account_key(email);
        let ip_check = |r: &mut Report| self.sign_in_ip.check(&ip, r);
        let pair_check = |r: &mut Report| self.sign_in_account.check(&pair, r);
        let total_check = |r: &mut Report| self.sign_in_account_total.check(&account, r);
        if known_device {
            self.check_all(&[&ip_check, &pair_check])
        } else {
            self.check_all(&[&ip_check, &pair_check, &total_check])
        }
    }

    /// A failed sign-in of `email` from `ip`: the next attempt from there waits
    /// `base × 2^(failures-1)`, at most `max`. Other addresses are not delayed.
    pub fn sign_in_failed(&self, ip: IpAddr, email: &str) {
        if !self.enabled || self.backoff_base.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut entry = self
            .backoffs
            .entry(self.account_at(email, ip))
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

    /// A successful sign-in of `email` from `ip` ends that address's delay.
    pub fn sign_in_succeeded(&self, ip: IpAddr, email: &str) {
        self.backoffs.remove(&self.account_at(email, ip));
    }

    /// A sign-up from `ip` for `email` (the account's quota from this address is the
    /// sign-in one).
    pub fn sign_up(&self, ip: IpAddr, email: &str) -> Result<Report, Denied> {
        let pair = self.account_at(email, ip);
        self.two(
            (&self.sign_up_ip, &addr_key(ip)),
            Some((&self.sign_in_account, &pair)),
        )
    }

    /// An authorization code issued to `user` for `client_id`.
    pub fn authorization_code(&self, user: &impl Hash, client_id: &str) -> Result<Report, Denied> {
        if !self.enabled {
            return Ok(Report::default());
        }
        let mut h = self.hasher.build_hasher();
        h.write_u8(b'o');
        user.hash(&mut h);
        h.write(client_id.as_bytes());
        let key = h.finish();
        self.two::<u64, u64>((&self.authorization_codes, &key), None)
    }

    /// A POST carrying an `Idempotency-Key` from `caller` (its subject, or its address when
    /// anonymous: see `crate::idempotency`).
    pub fn idempotency_key(&self, caller: &[u8]) -> Result<Report, Denied> {
        if !self.enabled {
            return Ok(Report::default());
        }
        let mut h = self.hasher.build_hasher();
        h.write_u8(b'i');
        h.write(caller);
        let key = h.finish();
        self.two::<u64, u64>((&self.idempotency_keys, &key), None)
    }

    /// A checkout link followed from `ip` (it creates a checkout).
    /// A request from `ip` to send `email`'s keys of `organization` again.
    pub fn key_resend(
        &self,
        ip: IpAddr,
        organization: &impl Hash,
        email: &str,
    ) -> Result<Report, Denied> {
        let mut h = self.hasher.build_hasher();
        h.write_u8(b'r');
        organization.hash(&mut h);
        h.write(tollgate_actors::domain::email::normalize_email(email).as_bytes());
        let address = h.finish();
        let pair = self.address_at(b's', organization, email, ip);
        let ip = addr_key(ip);
        self.check_all(&[
            &|r: &mut Report| self.key_resends_ip.check(&ip, r),
            &|r: &mut Report| self.key_resends_pair.check(&pair, r),
            &|r: &mut Report| self.key_resends_address.check(&address, r),
        ])
    }

    /// The key of an e-mail address of `organization` seen from the client `ip`.
    fn address_at(&self, tag: u8, organization: &impl Hash, email: &str, ip: IpAddr) -> u64 {
        let mut h = self.hasher.build_hasher();
        h.write_u8(tag);
        organization.hash(&mut h);
        h.write(tollgate_actors::domain::email::normalize_email(email).as_bytes());
        addr_key(ip).hash(&mut h);
        h.finish()
    }

    /// A customer-portal sign-in code asked for from `ip`, to `email` of `organization`:
    /// the client's quota, the quota of the address from this client, then the address's
    /// own ceiling. A client out of its quota for the address is denied before the
    /// address's ceiling is charged, so one stranger never spends what the buyer asks
    /// with (the ceiling, far above the per-client quota, only bounds a distributed flood).
    pub fn portal_code(
        &self,
        ip: IpAddr,
        organization: &impl Hash,
        email: &str,
    ) -> Result<Report, Denied> {
        let mut h = self.hasher.build_hasher();
        h.write_u8(b'c');
        organization.hash(&mut h);
        h.write(tollgate_actors::domain::email::normalize_email(email).as_bytes());
        let address = h.finish();
        let pair = self.address_at(b'q', organization, email, ip);
        let ip = addr_key(ip);
        self.check_all(&[
            &|r: &mut Report| self.portal_codes_ip.check(&ip, r),
            &|r: &mut Report| self.portal_codes_pair.check(&pair, r),
            &|r: &mut Report| self.portal_codes_address.check(&address, r),
        ])
    }

    /// Whether the client `ip` typed [`CustomerSessionCode::MAX_FAILURES`] wrong codes for
    /// `email` of `organization` within a code's lifetime: no code for that address works
    /// from there any more (until it asks for a new one). Other clients are not concerned.
    ///
    /// [`CustomerSessionCode::MAX_FAILURES`]: tollgate_actors::domain::customer_session::CustomerSessionCode
    pub fn portal_code_worn_out(&self, ip: IpAddr, organization: &impl Hash, email: &str) -> bool {
        let key = self.address_at(b'f', organization, email, ip);
        self.code_failures.get(&key).is_some_and(|f| {
            f.until > Instant::now() && f.failures >= CustomerSessionCode::MAX_FAILURES
        })
    }

    /// One more wrong code typed for `email` of `organization` from `ip`; the count lasts a
    /// code's lifetime after the last failure.
    pub fn portal_code_failed(&self, ip: IpAddr, organization: &impl Hash, email: &str) {
        let now = Instant::now();
        let window = CustomerSessionCode::TTL
            .to_std()
            .unwrap_or(Duration::from_secs(1800));
        let key = self.address_at(b'f', organization, email, ip);
        let mut entry = self.code_failures.entry(key).or_insert(CodeFailures {
            failures: 0,
            until: now,
        });
        if entry.until <= now {
            entry.failures = 0;
        }
        entry.failures = entry.failures.saturating_add(1);
        entry.until = now + window;
    }

    /// A new code asked for, or a sign-in, from `ip` for `email` of `organization`: its
    /// wrong codes from there are forgotten.
    pub fn portal_code_reset(&self, ip: IpAddr, organization: &impl Hash, email: &str) {
        self.code_failures
            .remove(&self.address_at(b'f', organization, email, ip));
    }

    /// A cancellation or uncancellation of `subscription` (any caller): a subscription's
    /// state toggled over and over would mail its buyer over and over.
    pub fn subscription_cancel(&self, subscription: &impl Hash) -> Result<Report, Denied> {
        let mut h = self.hasher.build_hasher();
        h.write_u8(b's');
        subscription.hash(&mut h);
        let key = h.finish();
        self.two::<u64, u64>((&self.subscription_cancels, &key), None)
    }

    /// A receipt about to be sent to `email`: `Err` holds how long it waits first (no inbox
    /// gets more receipts than the limit, however many orders name it).
    pub fn receipt_to(&self, email: &str) -> Result<(), Duration> {
        let mut h = self.hasher.build_hasher();
        h.write_u8(b'm');
        h.write(tollgate_actors::domain::email::normalize_email(email).as_bytes());
        let key = h.finish();
        self.receipts_address.check(&key, &mut Report::default())
    }

    /// A customer-portal sign-in code typed from `ip`.
    pub fn portal_sign_in(&self, ip: IpAddr) -> Result<Report, Denied> {
        self.two::<IpAddr, IpAddr>((&self.portal_sign_ins_ip, &addr_key(ip)), None)
    }

    /// A deactivation of `key` of `organization` that names the activation by its label.
    pub fn deactivation_by_label(
        &self,
        organization: &impl Hash,
        key: &str,
    ) -> Result<Report, Denied> {
        let mut h = self.hasher.build_hasher();
        h.write_u8(b'l');
        organization.hash(&mut h);
        h.write(key.as_bytes());
        let key = h.finish();
        self.two::<u64, u64>((&self.deactivations_by_label, &key), None)
    }

    pub fn checkout_link(&self, ip: IpAddr) -> Result<Report, Denied> {
        self.two::<IpAddr, IpAddr>((&self.checkout_link_ip, &addr_key(ip)), None)
    }

    /// A token, introspection or revocation request from `ip`, for `client_id` when the
    /// request names one.
    pub fn oauth(&self, ip: IpAddr, client_id: Option<&str>) -> Result<Report, Denied> {
        let client = client_id.map(|c| self.string_key(b'c', c));
        self.two(
            (&self.oauth_ip, &addr_key(ip)),
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
            (&self.license_keys_ip, &addr_key(ip)),
            Some((&self.license_keys_key, &key)),
        )
    }

    /// These limits with the download policies of `[files]` (each on while limits are on
    /// and its count is not 0).
    pub fn with_downloads(mut self, files: &crate::config::FilesSettings) -> Self {
        let window = files.download_limit_window_secs;
        self.downloads_customer = Policy::new(
            "customer",
            Limit::new(files.download_limit_per_customer, window),
            self.enabled,
        );
        self.downloads_ip = Policy::new(
            "ip",
            Limit::new(files.download_limit_per_address, window),
            self.enabled,
        );
        self
    }

    /// A download from `ip` of a file of `customer` through a portal link: the address's
    /// quota, then the customer's.
    pub fn download(&self, ip: IpAddr, customer: &impl Hash) -> Result<Report, Denied> {
        if !self.enabled {
            return Ok(Report::default());
        }
        let mut h = self.hasher.build_hasher();
        h.write_u8(b'd');
        customer.hash(&mut h);
        let key = h.finish();
        self.two(
            (&self.downloads_ip, &addr_key(ip)),
            Some((&self.downloads_customer, &key)),
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
        self.sign_in_account_total.purge();
        self.sign_up_ip.purge();
        self.authorization_codes.purge();
        self.idempotency_keys.purge();
        self.checkout_link_ip.purge();
        self.oauth_ip.purge();
        self.oauth_client.purge();
        self.license_keys_ip.purge();
        self.license_keys_key.purge();
        self.key_resends_ip.purge();
        self.key_resends_pair.purge();
        self.key_resends_address.purge();
        self.portal_codes_ip.purge();
        self.portal_codes_pair.purge();
        self.portal_codes_address.purge();
        self.portal_sign_ins_ip.purge();
        self.subscription_cancels.purge();
        self.receipts_address.purge();
        self.api_token.purge();
        self.downloads_customer.purge();
        self.downloads_ip.purge();
        let now = Instant::now();
        // A delay is forgotten once it ran out and a maximal delay more has passed: after a
        // quiet spell, an account starts again from the base delay.
        let keep = self.backoff_max;
        self.backoffs.retain(|_, b| b.until + keep > now);
        self.backoffs.shrink_to_fit();
        self.code_failures.retain(|_, f| f.until > now);
        self.code_failures.shrink_to_fit();
    }

    /// Keys held across all limiters (for tests and diagnostics).
    pub fn tracked_keys(&self) -> usize {
        self.sign_in_ip.len()
            + self.sign_in_account.len()
            + self.sign_in_account_total.len()
            + self.sign_up_ip.len()
            + self.authorization_codes.len()
            + self.idempotency_keys.len()
            + self.checkout_link_ip.len()
            + self.oauth_ip.len()
            + self.oauth_client.len()
            + self.license_keys_ip.len()
            + self.license_keys_key.len()
            + self.key_resends_ip.len()
            + self.key_resends_pair.len()
            + self.key_resends_address.len()
            + self.portal_codes_ip.len()
            + self.portal_codes_pair.len()
            + self.portal_codes_address.len()
            + self.portal_sign_ins_ip.len()
            + self.subscription_cancels.len()
            + self.receipts_address.len()
            + self.api_token.len()
            + self.backoffs.len()
            + self.code_failures.len()
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

    const OTHER: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(203, 0, 113, 9));

    #[test]
    fn accounts_are_case_insensitive_and_backoff_doubles_up_to_max_and_resets() {
        let l = RateLimits::new(&settings());
        l.sign_in(IP, "A@x.io", false).unwrap();
        l.sign_in_failed(IP, "a@x.io");
        let d = l.sign_in(IP, "a@X.io", false).unwrap_err();
        assert_eq!(d.retry_after_secs, 1);
        l.sign_in_failed(IP, "a@x.io");
        assert_eq!(
            l.sign_in(IP, "a@x.io", false).unwrap_err().retry_after_secs,
            2
        );
        l.sign_in_failed(IP, "a@x.io");
        l.sign_in_failed(IP, "a@x.io");
        l.sign_in_failed(IP, "a@x.io");
        assert_eq!(
            l.sign_in(IP, "a@x.io", false).unwrap_err().retry_after_secs,
            4
        );
        l.sign_in_succeeded(IP, "a@x.io");
        // The delay is gone; the account's quota from this address (2 a minute) still counts.
        l.sign_in(IP, "a@x.io", false).unwrap();
        assert!(l.sign_in(IP, "a@x.io", false).is_err());
    }

    #[test]
    fn failures_from_another_address_never_hold_back_the_owner() {
        let l = RateLimits::new(&settings());
        // An attacker's address fails again and again: it is delayed and runs out of quota...
        l.sign_in(OTHER, "kate@x.io", false).unwrap();
        l.sign_in_failed(OTHER, "kate@x.io");
        l.sign_in_failed(OTHER, "kate@x.io");
        assert!(l.sign_in(OTHER, "kate@x.io", false).is_err());
        // ...while the owner, at their own address, signs in at once.
        l.sign_in(IP, "kate@x.io", false).unwrap();
    }

    #[test]
    fn one_normalisation_for_unicode_variants_of_an_account() {
        let l = RateLimits::new(&settings());
        l.sign_in_failed(IP, "kate@example.com");
        // KELVIN SIGN lower-cases to 'k': the same account, so the same delay.
        assert!(l.sign_in(IP, "\u{212A}ate@example.com", false).is_err());
        assert!(l.sign_in(IP, " KATE@EXAMPLE.COM", false).is_err());
    }

    #[test]
    fn the_account_wide_ceiling_spares_a_known_device_and_ipv6_counts_by_prefix() {
        let mut s = settings();
        s.sign_in_per_ip = Limit::new(100, 60);
        s.sign_in_per_account = Limit::new(100, 60);
        s.sign_in_per_account_total = Limit::new(3, 60);
        let l = RateLimits::new(&s);
        for i in 0..3u8 {
            let ip = IpAddr::V4(std::net::Ipv4Addr::new(198, 51, 100, i));
            l.sign_in(ip, "kate@x.io", false).unwrap();
        }
        let d = l.sign_in(IP, "kate@x.io", false).unwrap_err();
        assert!(
            d.report.policy_header().contains("\"account_total\";q=3"),
            "{:?}",
            d.report
        );
        // The owner's browser, which signed in to the account before, is not held.
        l.sign_in(IP, "kate@x.io", true).unwrap();

        // Two addresses of one /64 are one client.
        let mut s = settings();
        s.sign_in_per_ip = Limit::new(1, 60);
        let l = RateLimits::new(&s);
        l.sign_in("2001:db8:1:2::1".parse().unwrap(), "a@x.io", false)
            .unwrap();
        assert!(l
            .sign_in("2001:db8:1:2::ffff".parse().unwrap(), "b@x.io", false)
            .is_err());
        l.sign_in("2001:db8:1:3::1".parse().unwrap(), "c@x.io", false)
            .unwrap();
    }

    #[test]
    fn disabled_limits_never_deny_and_zero_requests_means_no_limit() {
        let mut s = settings();
        s.enabled = false;
        let l = RateLimits::new(&s);
        for _ in 0..100 {
            l.license_key(IP, &1u8, "K").unwrap();
            l.sign_in(IP, "a@x.io", false).unwrap();
            l.sign_in_failed(IP, "a@x.io");
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
    fn a_stranger_spends_only_its_own_share_of_an_address_and_its_own_wrong_codes() {
        let mut s = settings();
        s.portal_codes_per_ip = Limit::new(100, 3600);
        s.portal_codes_per_address_client = Limit::new(2, 3600);
        s.portal_codes_per_address = Limit::new(3, 3600);
        let l = RateLimits::new(&s);
        l.portal_code(OTHER, &1u8, "ada@x.io").unwrap();
        l.portal_code(OTHER, &1u8, "ada@x.io").unwrap();
        // Refused at its own share, the address's ceiling is not charged...
        for _ in 0..5 {
            let d = l.portal_code(OTHER, &1u8, "ADA@x.io").unwrap_err();
            assert!(d.report.policy_header().contains("\"address_client\""));
        }
        // ...so the buyer gets its code.
        l.portal_code(IP, &1u8, "ada@x.io").unwrap();

        let max = CustomerSessionCode::MAX_FAILURES;
        for _ in 0..max {
            assert!(!l.portal_code_worn_out(OTHER, &1u8, "ada@x.io"));
            l.portal_code_failed(OTHER, &1u8, "ada@x.io");
        }
        assert!(l.portal_code_worn_out(OTHER, &1u8, "Ada@X.io"));
        assert!(!l.portal_code_worn_out(IP, &1u8, "ada@x.io"), "the buyer");
        assert!(
            !l.portal_code_worn_out(OTHER, &2u8, "ada@x.io"),
            "another shop"
        );
        l.portal_code_reset(OTHER, &1u8, "ada@x.io");
        assert!(!l.portal_code_worn_out(OTHER, &1u8, "ada@x.io"));
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
