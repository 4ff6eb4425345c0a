//! The big-shop generator (`tollgate bench-fill`, hidden from `--help`): fills the
//! configured store (sled or PostgreSQL, as `serve` opens it) with N sales spread over
//! months, so that the figures of `benches/bigshop.sh` can be measured at the size a
//! successful shop reaches (issue 52).
//!
//! It runs the real service in-process on a manual clock and writes the purchases
//! directly through the store's write path, many per transaction:
//! - the catalog (organizations, a license-key benefit, a one-time and a monthly product,
//!   webhook endpoints pointing at a receiver in this process that answers 200) and one
//!   real checkout per product are made through the HTTP API, as a seller and a buyer
//!   would;
//! - every other sale is a copy of its product's real, succeeded checkout with its own ids,
//!   buyer and dates, completed by the checkout's own completion planner
//!   (`app::checkout::completion`: license keys, subscription, order), with its customer
//!   (new, or a returning one), `--chunk` sales per durable commit;
//! - the service's own jobs run beside it: the fan-out turns the change feed into events,
//!   the event log, deliveries (settled by the receiver), e-mail (sent by the configured
//!   transport) and the dashboard's day counters, with the clock at the chunk's time;
//! - the subscription sweep runs once per simulated day (renewal orders, ends of the
//!   subscriptions canceled at their period's end), and so does the retention pass (the
//!   webhook history and e-mail of the days past their retention go, as they would in a
//!   shop that ran that long); a few sales are refunded or their subscription canceled
//!   through the same functions the API calls.
//!
//! What it skips of a real purchase: the checkout's intermediate revisions (open,
//! confirmed: the copy is written succeeded) and the customer session of each confirm
//! (it expires within the hour and is purged).

use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use anyhow::{bail, Context};
use chrono::{DateTime, Duration, DurationRound, Utc};
use serde_json::{json, Value};
use tollgate_actors::checkout::{Checkout, CheckoutStatus};
use tollgate_actors::ManualClock;
use tollgate_storage::{Batch, Expect};

use crate::app::portal::purchase::{
    customer_of_checkout, order_of_checkout, subscription_of_checkout,
};
use crate::auth::tokens::{generate, CHECKOUT_SECRET_PREFIX};
use crate::auth::Subject;
use crate::config::Settings;
use crate::domain::customer::Customer;
use crate::domain::ids::{CheckoutId, CustomerId, OrganizationId, SubscriptionId};
use crate::domain::order::Order;
use crate::state::AppState;

/// What to generate.
#[derive(Debug, Clone)]
pub struct FillOptions {
    pub sales: u64,
    pub seed: u64,
    /// The sales are spread evenly over this many months (of 30 days) up to now.
    pub months: u32,
    pub organizations: u32,
    /// Webhook endpoints per organization (0, 1 or 2: the first takes every event, the
    /// second the order events).
    pub endpoints: u32,
    /// Sales per transaction (at most a day's: fewer when the sales are few per day).
    pub chunk: usize,
    /// Per mille of sales that are returning customers' (a new purchase by one who bought).
    pub returning_permille: u32,
    /// Per mille of sales that are of the monthly product.
    pub subscription_permille: u32,
    /// Per mille of sales refunded (in full, the day they were made).
    pub refund_permille: u32,
    /// Per mille of subscriptions canceled at their period's end (the day they started).
    pub cancel_permille: u32,
    /// A password for the bootstrap admin (`bootstrap.admin_email`), so that a benchmark
    /// can sign in to the dashboard (it has none otherwise).
    pub dashboard_password: Option<String>,
}

impl Default for FillOptions {
    fn default() -> Self {
        FillOptions {
            sales: 1000,
            seed: 1,
            months: 12,
            organizations: 1,
            endpoints: 2,
            chunk: 1000,
            returning_permille: 200,
            subscription_permille: 400,
            refund_permille: 30,
            cancel_permille: 100,
            dashboard_password: None,
        }
    }
}

/// What was generated.
#[derive(Debug, Clone, Default)]
pub struct FillReport {
    /// Sales written (the real checkouts of the set-up included).
    pub sales: u64,
    pub customers: u64,
    pub subscriptions: u64,
    pub refunds: u64,
    pub cancellations: u64,
    /// Orders the subscription sweeps made (renewals).
    pub renewals: u64,
    /// Records the daily retention passes purged or slimmed.
    pub purged: u64,
    pub seconds: f64,
}

impl FillReport {
    pub fn describe(&self) -> String {
        format!(
            "generated {} sales ({} customers, {} subscriptions, {} renewals, {} refunds, \
             {} cancellations; {} records purged or slimmed by retention) in {:.1} s: \
             {:.0} sales/s",
            self.sales,
            self.customers,
            self.subscriptions,
            self.renewals,
            self.refunds,
            self.cancellations,
            self.purged,
            self.seconds,
            self.sales as f64 / self.seconds.max(0.001)
        )
    }
}

/// The settings the generator runs the service with: no listener on the configured
/// address, no background sweep or retention (it runs both itself, on its own clock), and
/// webhook deliveries allowed to its receiver on 127.0.0.1.
pub fn fill_settings(mut settings: Settings) -> Settings {
    settings.server.bind = "127.0.0.1:0".into();
    settings.server.public_url = String::new();
    settings.jobs.sweep_interval_secs = 1_000_000;
    settings.retention.interval_secs = 1_000_000;
    settings.webhooks.allow_private_targets = true;
    settings
}

/// Runs the service on the configured store and fills it (see the module's comment).
pub async fn fill(settings: Settings, options: &FillOptions) -> anyhow::Result<FillReport> {
    let settings = fill_settings(settings);
    let months = options.months.max(1);
    let end = Utc::now()
        .duration_trunc(Duration::seconds(1))
        .unwrap_or_else(|_| Utc::now());
    let start = end - Duration::days(30 * i64::from(months));
    let (clock, shared) = ManualClock::shared(start);
    let app = crate::startup::Application::build_with_clock(settings, shared).await?;
    let port = app.port();
    let state = app.state();
    let handle = app.handle();
    let server = actix_web::rt::spawn(app.run_until_stopped());
    let filled = Filler::new(&state, clock, options, start, end)
        .run(port)
        .await;
    handle.stop(true).await;
    let stopped = server.await;
    let report = filled?;
    stopped.context("the service's task failed")??;
    Ok(report)
}

/// A small deterministic generator (splitmix64): the same seed makes the same shop shape.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn permille(&mut self, p: u32) -> bool {
        self.below(1000) < u64::from(p)
    }
}

const FIRST: &[&str] = &[
    "Ada", "Alan", "Grace", "Linus", "Margaret", "Ken", "Barbara", "Dennis", "Frances", "Edsger",
    "Radia", "Donald", "Hedy", "John", "Sophie", "Tim", "Karen", "Niklaus", "Shafi", "Leslie",
];
const LAST: &[&str] = &[
    "Lovelace",
    "Turing",
    "Hopper",
    "Torvalds",
    "Hamilton",
    "Thompson",
    "Liskov",
    "Ritchie",
    "Allen",
    "Dijkstra",
    "Perlman",
    "Knuth",
    "Lamarr",
    "McCarthy",
    "Wilson",
    "Berners-Lee",
    "Jones",
    "Wirth",
    "Goldwasser",
    "Lamport",
];
const DOMAINS: &[&str] = &[
    "gmail.com",
    "outlook.com",
    "proton.me",
    "fastmail.com",
    "example.org",
    "corp.example",
    "mail.example",
    "studio.example",
];

/// The buyer numbered `n`: name and e-mail address (unique per `n`).
fn buyer(n: u64) -> (String, String) {
    let len = |s: &[&str]| s.len() as u64;
    let first = FIRST[(n % len(FIRST)) as usize];
    let last = LAST[((n / len(FIRST)) % len(LAST)) as usize];
    let domain = DOMAINS[((n / 7) % len(DOMAINS)) as usize];
    let email = format!(
        "{}.{}{n}@{domain}",
        first.to_lowercase(),
        last.to_lowercase()
    );
    (format!("{first} {last}"), email)
}

struct Shop {
    org: OrganizationId,
    /// The real succeeded checkouts every sale of the product copies.
    one_time: Checkout,
    monthly: Checkout,
    /// Customers made so far (to draw returning buyers from).
    customers: Vec<CustomerId>,
    /// How many of `customers` are stored (those of earlier transactions).
    stored: usize,
}

struct Filler<'a> {
    state: &'a AppState,
    clock: Arc<ManualClock>,
    options: &'a FillOptions,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    dice: Dice,
    next_buyer: u64,
    report: FillReport,
}

impl<'a> Filler<'a> {
    fn new(
        state: &'a AppState,
        clock: Arc<ManualClock>,
        options: &'a FillOptions,
        start: DateTime<Utc>,
        end: DateTime<Utc>,
    ) -> Self {
        Filler {
            state,
            clock,
            options,
            start,
            end,
            dice: Dice(options.seed),
            next_buyer: 0,
            report: FillReport::default(),
        }
    }

    async fn run(mut self, port: u16) -> anyhow::Result<FillReport> {
        let began = Instant::now();
        let hook = receiver().await?;
        let api = Api::new(self.state, port)?;
        let mut shops = Vec::new();
        for k in 0..self.options.organizations.max(1) {
            let shop = self.shop(&api, k, &hook).await?;
            shops.push(shop);
        }
        self.settle_fanout(0).await?;
        if let Some(password) = &self.options.dashboard_password {
            self.admin_password(password).await?;
        }
        let total = self.options.sales.saturating_sub(self.report.sales);
        let span = (self.end - self.start)
            .num_microseconds()
            .unwrap_or(i64::MAX);
        // A chunk spans at most a day, so that the daily jobs run on their day.
        let days = (self.end - self.start).num_days().max(1) as u64;
        let chunk = (self.options.chunk.max(1) as u64).min(total.div_ceil(days).max(1));
        let mut last_sweep = self.start;
        let mut done = 0u64;
        while done < total {
            let n = chunk.min(total - done);
            // Sale `i` happens at start + span * i / total.
            let begin = self.start;
            let at = |i: u64| {
                begin
                    + Duration::microseconds(
                        (i128::from(span) * i128::from(i) / i128::from(total.max(1))) as i64,
                    )
            };
            let first = at(done);
            if first - last_sweep >= Duration::days(1) {
                self.clock.set(first);
                self.sweep().await?;
                last_sweep = first;
            }
            let times: Vec<DateTime<Utc>> = (done..done + n).map(at).collect();
            self.chunk(&mut shops, &times).await?;
            done += n;
            if done.is_multiple_of(chunk * 10) || done == total {
                tracing::info!(done, total, "bench-fill progress");
            }
        }
        self.clock.set(self.end);
        self.sweep().await?;
        self.settle_fanout(0).await?;
        self.report.seconds = began.elapsed().as_secs_f64();
        Ok(self.report)
    }

    /// An organization with its catalog, its endpoints and one real sale per product.
    async fn shop(&mut self, api: &Api, k: u32, hook: &str) -> anyhow::Result<Shop> {
        let slug = format!("bigshop-{}-{k}", self.options.seed);
        let org = api
            .post(
                "/v1/organizations/",
                json!({"name": format!("Big shop {k}"), "slug": slug}),
            )
            .await?;
        let org = id_of(&org)?;
        let benefit = api
            .post(
                "/v1/benefits/",
                json!({"type": "license_keys", "description": "Big shop license",
                       "organization_id": org, "properties": {"prefix": "BIG"}}),
            )
            .await?;
        let benefit = id_of(&benefit)?;
        let product = |body: Value| {
            let api = &api;
            let benefit = benefit.clone();
            async move {
                let p = id_of(&api.post("/v1/products/", body).await?)?;
                api.post(
                    &format!("/v1/products/{p}/benefits"),
                    json!({"benefits": [benefit]}),
                )
                .await?;
                anyhow::Ok(p)
            }
        };
        let one_time = product(json!({"name": "Desktop app", "organization_id": org,
            "prices": [{"type": "one_time", "amount_type": "fixed", "price_amount": 4900}]}))
        .await?;
        let monthly = product(json!({"name": "Pro monthly", "organization_id": org,
            "prices": [{"type": "recurring", "amount_type": "fixed", "price_amount": 900,
                        "recurring_interval": "month"}]}))
        .await?;
        let events: Vec<&str> = crate::api::webhook::WebhookEventType::ALL
            .iter()
            .map(|e| e.as_str())
            .collect();
        for e in 0..self.options.endpoints.min(2) {
            let listened: Vec<&str> = if e == 0 {
                events.clone()
            } else {
                events
                    .iter()
                    .copied()
                    .filter(|e| e.starts_with("order."))
                    .collect()
            };
            api.post(
                "/v1/webhooks/endpoints",
                json!({"url": format!("{hook}/{k}/{e}"), "format": "raw", "events": listened,
                       "organization_id": org}),
            )
            .await?;
        }
        let org_id = OrganizationId::from_key(&uuid_key(&org)?)
            .context("the organization's id does not parse")?;
        let mut customers = Vec::new();
        let one_time = self.real_sale(api, &one_time, &mut customers).await?;
        let monthly = self.real_sale(api, &monthly, &mut customers).await?;
        Ok(Shop {
            org: org_id,
            one_time,
            monthly,
            stored: customers.len(),
            customers,
        })
    }

    /// A sale made through the API (checkout, confirm with the test processor's card),
    /// answered as its succeeded checkout.
    async fn real_sale(
        &mut self,
        api: &Api,
        product: &str,
        customers: &mut Vec<CustomerId>,
    ) -> anyhow::Result<Checkout> {
        self.clock.set(self.start);
        let checkout = api
            .post("/v1/checkouts/custom/", json!({"product_id": product}))
            .await?;
        let secret = checkout["client_secret"]
            .as_str()
            .context("a checkout without client_secret")?
            .to_string();
        let (name, email) = buyer(self.next_buyer);
        self.next_buyer += 1;
        api.post_anonymous(
            &format!("/v1/checkouts/custom/client/{secret}/confirm"),
            json!({"customer_name": name, "customer_email": email,
                   "customer_billing_address": {"country": "US", "state": "NY"},
                   "confirmation_token_id": "tok_visa"}),
        )
        .await?;
        let id = CheckoutId::from_key(&uuid_key(&id_of(&checkout)?)?)
            .context("the checkout's id does not parse")?;
        let stored = self
            .state
            .store
            .get::<Checkout>(&id.key())
            .await?
            .context("the real checkout is not stored")?
            .value;
        if stored.status != CheckoutStatus::Succeeded {
            bail!("the real checkout is {:?}, not succeeded", stored.status);
        }
        if let Some(c) = stored.customer_id {
            customers.push(c);
            self.report.customers += 1;
        }
        self.report.sales += 1;
        if stored.price.kind.is_recurring() {
            self.report.subscriptions += 1;
        }
        Ok(stored)
    }

    /// One transaction of sales at `times`, spread over the shops; then the refunds and
    /// cancellations among them, and the fan-out of it all.
    async fn chunk(&mut self, shops: &mut [Shop], times: &[DateTime<Utc>]) -> anyhow::Result<()> {
        let last = *times.last().context("an empty chunk")?;
        self.clock.set(last);
        let mut customers = Batch::new();
        let mut sales = Vec::with_capacity(times.len());
        for &at in times {
            let s = self.dice.below(shops.len() as u64) as usize;
            let shop = &mut shops[s];
            let monthly = self.dice.permille(self.options.subscription_permille);
            let template = if monthly {
                &shop.monthly
            } else {
                &shop.one_time
            };
            let mut c = template.clone();
            c.id = CheckoutId::new();
            c.client_secret = generate(CHECKOUT_SECRET_PREFIX, 32);
            c.created_at = at;
            c.modified_at = Some(at);
            c.expires_at = at + Duration::hours(1);
            c.status = CheckoutStatus::Confirmed;
            c.subscription_id = None;
            c.payment_processor_metadata.clear();
            let returning = shop.stored > 0 && self.dice.permille(self.options.returning_permille);
            let customer = if returning {
                let i = self.dice.below(shop.stored as u64) as usize;
                let id = shop.customers[i];
                let stored = self
                    .state
                    .store
                    .get::<Customer>(&id.key())
                    .await?
                    .context("a returning customer is not stored")?;
                c.customer_email = Some(stored.value.email.clone());
                c.customer_name = stored.value.name.clone();
                id
            } else {
                let (name, email) = buyer(self.next_buyer);
                self.next_buyer += 1;
                let id = customer_of_checkout(c.id, &email);
                let mut customer = Customer::new(id, shop.org, email.clone(), at);
                customer.name = Some(name.clone());
                customer.billing_address = c.customer_billing_address.clone();
                customers.put(&customer, Expect::Absent)?;
                c.customer_email = Some(email);
                c.customer_name = Some(name);
                shop.customers.push(id);
                self.report.customers += 1;
                id
            };
            let subscription = monthly.then(|| subscription_of_checkout(c.id));
            let c = c
                .with_customer(customer)
                .succeed(None, subscription, at)
                .map_err(|e| anyhow::anyhow!("a generated checkout: {e:?}"))?;
            sales.push((s, c));
        }
        // The customers first: the completion planner reads its buyer from the store.
        self.state.store.commit(&customers).await?;
        for shop in shops.iter_mut() {
            shop.stored = shop.customers.len();
        }
        let mut batch = Batch::new();
        for (_, c) in &sales {
            let reads = crate::app::checkout::Reads::for_completion(self.state, c).await?;
            let planned = crate::app::checkout::completion(&reads, c, Some("tok_visa".into()))
                .map_err(|e| anyhow::anyhow!("the completion of a generated sale: {e:?}"))?;
            batch.put(c, Expect::Absent)?;
            batch.append(planned);
            self.report.sales += 1;
            if c.subscription_id.is_some() {
                self.report.subscriptions += 1;
            }
        }
        self.state.store.commit_durable(&batch).await?;
        for (s, c) in &sales {
            let org = shops[*s].org;
            if self.dice.permille(self.options.refund_permille) {
                self.refund(org, c).await?;
            }
            if let Some(sub) = c.subscription_id {
                if self.dice.permille(self.options.cancel_permille) {
                    self.cancel(org, sub).await?;
                }
            }
        }
        self.settle_fanout(4 * times.len() as u64).await
    }

    async fn refund(&mut self, org: OrganizationId, c: &Checkout) -> anyhow::Result<()> {
        let order_id = order_of_checkout(c.id);
        let order = self
            .state
            .store
            .get::<Order>(&order_id.key())
            .await?
            .context("a generated order is not stored")?
            .value;
        if order.amount <= 0 {
            return Ok(());
        }
        let request = crate::domain::refund::RefundRequest {
            order_id,
            reason: crate::domain::refund::RefundReason::CustomerRequest,
            amount: order.amount,
            comment: None,
            revoke_benefits: false,
            metadata: Default::default(),
            end_subscription: None,
        };
        retried("a refund", || {
            crate::app::refunds::create(self.state, Subject::Organization(org), request.clone())
        })
        .await?;
        self.report.refunds += 1;
        Ok(())
    }

    async fn cancel(&mut self, org: OrganizationId, id: SubscriptionId) -> anyhow::Result<()> {
        retried("a cancellation", || {
            crate::app::subscription::cancel(
                self.state,
                Subject::Organization(org),
                id,
                crate::app::subscription::CancelSubscription::at_period_end(),
            )
        })
        .await?;
        self.report.cancellations += 1;
        Ok(())
    }

    /// Gives the bootstrap admin `password` (see [`FillOptions::dashboard_password`]).
    async fn admin_password(&self, password: &str) -> anyhow::Result<()> {
        use crate::domain::user::User;
        let store = &self.state.store;
        let email = &self.state.settings.bootstrap.admin_email;
        let id = store
            .lookup_unique(&User::email_key(email))
            .await?
            .with_context(|| format!("no admin user {email}"))?;
        let stored = store
            .get::<User>(&id)
            .await?
            .context("the admin user is not stored")?;
        let mut user = stored.value;
        user.password_hash =
            Some(crate::auth::password::hash(password).map_err(anyhow::Error::msg)?);
        let mut batch = Batch::new();
        batch.put(&user, Expect::Rev(stored.rev))?;
        store.commit_durable(&batch).await?;
        Ok(())
    }

    /// The day's jobs at the clock's time: the subscription sweep (renewals, ends,
    /// revocations), then the retention pass (what a shop's store holds is what its
    /// retention leaves: webhook history and e-mail past `webhooks.retention_days`, e-mail
    /// bodies past `retention.grace_hours`).
    async fn sweep(&mut self) -> anyhow::Result<()> {
        let report = crate::app::subscription::sweep_subscriptions(self.state)
            .await
            .map_err(|e| anyhow::anyhow!("the subscription sweep: {e}"))?;
        self.report.renewals += report.renewed;
        let pass = crate::jobs::retention_pass(self.state).await;
        if pass.failures > 0 {
            bail!("the retention pass failed (see the log)");
        }
        self.report.purged += pass.records;
        Ok(())
    }

    /// Waits until the fan-out consumed the change feed, and until at most `backlog`
    /// webhook events and e-mails wait to be sent (0: all of them sent).
    async fn settle_fanout(&self, backlog: u64) -> anyhow::Result<()> {
        let began = Instant::now();
        let deadline = began + StdDuration::from_secs(600);
        let mut told = began;
        loop {
            let feed = self.state.store.pending_changes().await? as u64;
            let waiting = if feed == 0 { self.waiting().await? } else { 0 };
            if feed == 0 && waiting <= backlog {
                return Ok(());
            }
            if told.elapsed() > StdDuration::from_secs(10) {
                told = Instant::now();
                tracing::info!(
                    feed,
                    waiting,
                    backlog,
                    "bench-fill: waiting for the fan-out"
                );
            }
            if Instant::now() > deadline {
                tracing::warn!(feed, waiting, "bench-fill: the fan-out is stuck");
                bail!(
                    "the fan-out did not keep up: {feed} changes and {waiting} deliveries or \
                     e-mails still waiting after 10 minutes"
                );
            }
            tokio::time::sleep(StdDuration::from_millis(if feed > 0 { 2 } else { 20 })).await;
        }
    }

    /// Webhook events still to send, and e-mails due by the clock (a reminder due later
    /// waits for its day).
    async fn waiting(&self) -> anyhow::Result<u64> {
        use crate::domain::mail::MAIL_PENDING;
        use crate::domain::webhook::{WebhookEndpoint, WEBHOOK_EVENT_PENDING};
        let due = tollgate_storage::keys::KeyBuf::new()
            .i64(self.state.now().timestamp_micros().saturating_add(1))
            .into_vec();
        let mut n = self
            .state
            .store
            .index_range(MAIL_PENDING, &[], &[], Some(&due))
            .await?
            .len() as u64;
        for e in self.state.store.scan::<WebhookEndpoint>().await? {
            n += self
                .state
                .store
                .count(WEBHOOK_EVENT_PENDING, &e.value.id.key())
                .await?;
        }
        Ok(n)
    }
}

/// `call` until it succeeds, when it fails as a client retries (503: the actor was busy,
/// 409: a concurrent write), at most 20 times. A refusal after such a failure means the
/// earlier attempt went through after all (a refund of what is already refunded, a
/// cancellation of what is canceled): done.
async fn retried<T, F, Fut>(what: &str, mut call: F) -> anyhow::Result<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, crate::error::AppError>>,
{
    let mut attempt = 0u64;
    loop {
        match call().await {
            Ok(_) => return Ok(()),
            Err(e) if attempt < 20 && matches!(e.code().status(), 409 | 429 | 503) => {
                attempt += 1;
                tokio::time::sleep(StdDuration::from_millis(50 * attempt)).await;
            }
            Err(e) if attempt > 0 && e.code().status() < 500 => {
                tracing::info!(error = %e, "{what}: an earlier attempt went through");
                return Ok(());
            }
            Err(e) => bail!("{what}: {e}"),
        }
    }
}

/// The 16 bytes of a UUID given as text (the key of an id).
fn uuid_key(text: &str) -> anyhow::Result<Vec<u8>> {
    Ok(uuid::Uuid::parse_str(text)
        .with_context(|| format!("not a UUID: {text}"))?
        .as_bytes()
        .to_vec())
}

fn id_of(v: &Value) -> anyhow::Result<String> {
    v["id"]
        .as_str()
        .map(str::to_string)
        .with_context(|| format!("an answer without id: {v}"))
}

/// The service's API in this process, as the bootstrap admin.
struct Api {
    client: reqwest::Client,
    base: String,
    token: String,
}

impl Api {
    fn new(state: &AppState, port: u16) -> anyhow::Result<Api> {
        let file = crate::admin::default_token_file(&state.settings);
        let token = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read the admin token from {}", file.display()))?;
        Ok(Api {
            client: reqwest::Client::builder()
                .timeout(StdDuration::from_secs(60))
                .build()?,
            base: format!("http://127.0.0.1:{port}"),
            token: token.trim().to_string(),
        })
    }

    async fn post(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        self.send(path, body, true).await
    }

    async fn post_anonymous(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        self.send(path, body, false).await
    }

    async fn send(&self, path: &str, body: Value, auth: bool) -> anyhow::Result<Value> {
        let mut req = self.client.post(format!("{}{path}", self.base)).json(&body);
        if auth {
            req = req.bearer_auth(&self.token);
        }
        let resp = req.send().await?;
        let status = resp.status();
        let text = resp.text().await?;
        if !status.is_success() {
            bail!("POST {path}: {status} {text}");
        }
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

/// A webhook receiver on 127.0.0.1 that answers every request 200 (keep-alive); returns
/// its base URL.
async fn receiver() -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://127.0.0.1:{}/hook", listener.local_addr()?.port());
    actix_web::rt::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            actix_web::rt::spawn(answer_ok(stream));
        }
    });
    Ok(url)
}

async fn answer_ok(mut stream: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf: Vec<u8> = Vec::new();
    let mut read = [0u8; 16 * 1024];
    loop {
        let Some(head) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            match stream.read(&mut read).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&read[..n]),
            }
            continue;
        };
        let length = String::from_utf8_lossy(&buf[..head])
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.trim()
                    .eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())
                    .flatten()
            })
            .unwrap_or(0);
        let total = head + 4 + length;
        while buf.len() < total {
            match stream.read(&mut read).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&read[..n]),
            }
        }
        buf.drain(..total);
        let reply = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        if stream.write_all(reply).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buyers_are_distinct_and_dice_repeat_with_their_seed() {
        let emails: std::collections::HashSet<String> = (0..5000).map(|n| buyer(n).1).collect();
        assert_eq!(emails.len(), 5000);
        let (mut a, mut b) = (Dice(7), Dice(7));
        let xs: Vec<u64> = (0..10).map(|_| a.below(1000)).collect();
        let ys: Vec<u64> = (0..10).map(|_| b.below(1000)).collect();
        assert_eq!(xs, ys);
        assert!(xs.iter().all(|x| *x < 1000));
        let mut c = Dice(8);
        assert_ne!(xs, (0..10).map(|_| c.below(1000)).collect::<Vec<_>>());
    }
}
