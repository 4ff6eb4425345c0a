//! The re-check pass against a fake register (the test application has none configured,
//! so its own pass does not run and its fan-out queues nothing); the fan-out's queueing
//! against an application with VIES on (pointed at a closed port: it never answers). The
//! whole path over HTTP, with a fake VIES, is `tests/api/tax_id_recheck.rs`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tollgate_actors::ManualClock;

use super::*;
use crate::app::testing::{self, TestApp};
use crate::domain::customer::{validate_tax_id, TaxIdFormat};
use crate::domain::ids::{OrderId, OrganizationId};
use crate::domain::order::OrderStatus;

/// A register for EU numbers (and GB ones with `hmrc`) answering `answer`, counting the
/// questions.
struct FakeRegister {
    hmrc: bool,
    answer: Mutex<TaxIdStatus>,
    asked: AtomicUsize,
}

impl FakeRegister {
    fn answering(answer: TaxIdStatus) -> FakeRegister {
        FakeRegister {
            hmrc: false,
            answer: Mutex::new(answer),
            asked: AtomicUsize::new(0),
        }
    }

    fn asked(&self) -> usize {
        self.asked.load(Ordering::SeqCst)
    }
}

impl Registers for FakeRegister {
    fn register_for(&self, id: &TaxId) -> Option<TaxIdRegister> {
        match id.format {
            TaxIdFormat::EuVat => Some(TaxIdRegister::Vies),
            TaxIdFormat::GbVat if self.hmrc => Some(TaxIdRegister::Hmrc),
            _ => None,
        }
    }

    fn ask<'a>(
        &'a self,
        _id: &'a TaxId,
        _country: &'a str,
    ) -> impl Future<Output = TaxIdStatus> + 'a {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let answer = *self.answer.lock().unwrap();
        async move { answer }
    }
}

const FR_NUMBER: &str = "FR40303265045";
const GB_NUMBER: &str = "GB980780684";

/// A paid order of `org` (1000 and 0 tax) bought by a business with `number` (given in
/// `country`) whose status is `status`.
fn business_order(
    base: &Order,
    number: &str,
    country: &str,
    status: TaxIdStatus,
    created_at: DateTime<Utc>,
) -> Order {
    let mut order = Order {
        id: OrderId::new(),
        created_at,
        ..base.clone()
    };
    order.tax.is_business = true;
    order.tax.billing_name = Some("Acme SAS".into());
    order.tax.tax_id = Some(validate_tax_id(number, country).expect("a valid number"));
    order.tax.tax_id_status = Some(status);
    order
}

async fn put<R: tollgate_storage::Record>(app: &AppState, record: &R) {
    let mut batch = Batch::new();
    batch.put(record, Expect::Any).expect("a record");
    app.store.commit_durable(&batch).await.expect("stored");
}

/// A stored business order of a new seller, unverified, with its re-check queued.
async fn queued(app: &TestApp, number: &str, country: &str) -> Order {
    let (org, _) = testing::seller(app).await;
    queued_of(app, org, number, country).await
}

async fn queued_of(app: &TestApp, org: OrganizationId, number: &str, country: &str) -> Order {
    let base = testing::paid_order(app, org, 1000, 0, "pi_1").await;
    let order = business_order(&base, number, country, TaxIdStatus::Unverified, app.now());
    put(app, &order).await;
    put(
        app,
        &TaxIdCheck::new(order.organization_id, order.id, app.now()),
    )
    .await;
    order
}

async fn order(app: &AppState, id: OrderId) -> Order {
    app.store
        .get::<Order>(&id.key())
        .await
        .expect("the store")
        .expect("the order")
        .value
}

async fn entry(app: &AppState, order: OrderId) -> Option<TaxIdCheck> {
    app.store
        .get::<TaxIdCheck>(&TaxIdCheck::id_for(order).key())
        .await
        .expect("the store")
        .map(|s| s.value)
}

#[actix_web::test]
async fn an_unverified_number_the_register_confirms_becomes_valid() {
    let app = testing::app().await;
    let sold = queued(&app, FR_NUMBER, "FR").await;
    let register = FakeRegister::answering(TaxIdStatus::Valid);

    assert_eq!(pass(&app, &register).await.unwrap(), None, "nothing left");
    assert_eq!(register.asked(), 1);
    let now = order(&app, sold.id).await;
    assert_eq!(now.tax.tax_id_status, Some(TaxIdStatus::Valid));
    assert_eq!(
        entry(&app, sold.id).await,
        None,
        "settled in the same write"
    );
    // Amounts and everything else stand as sold.
    assert_eq!(
        (now.amount, now.tax_amount, &now.tax.breakdown, now.status),
        (
            sold.amount,
            sold.tax_amount,
            &sold.tax.breakdown,
            sold.status
        )
    );
    // Asked again: nothing is due, the register is not asked.
    pass(&app, &register).await.unwrap();
    assert_eq!(register.asked(), 1);
}

#[actix_web::test]
async fn an_unverified_number_the_register_does_not_know_becomes_invalid_amounts_unchanged() {
    let app = testing::app().await;
    let sold = queued(&app, FR_NUMBER, "FR").await;
    let register = FakeRegister::answering(TaxIdStatus::Invalid);

    pass(&app, &register).await.unwrap();
    let now = order(&app, sold.id).await;
    assert_eq!(now.tax.tax_id_status, Some(TaxIdStatus::Invalid));
    assert_eq!(
        (now.amount, now.tax_amount, now.refunded_amount),
        (1000, 0, 0)
    );
    assert_eq!(now.tax.tax_id, sold.tax.tax_id);
    assert_eq!(entry(&app, sold.id).await, None);
}

#[actix_web::test]
async fn no_answer_again_reschedules_with_a_doubling_wait() {
    let app = testing::app().await;
    let sold = queued(&app, FR_NUMBER, "FR").await;
    let register = FakeRegister::answering(TaxIdStatus::Unverified);
    let start = app.now();

    // First attempt: no answer; the next one in a minute, and the pass says so.
    let next = pass(&app, &register).await.unwrap();
    assert_eq!(next, Some(Duration::from_secs(60)));
    let waiting = entry(&app, sold.id).await.expect("still queued");
    assert_eq!(waiting.attempts, 1);
    assert_eq!(
        waiting.next_attempt_at,
        Some(start + chrono::Duration::minutes(1))
    );
    assert!(waiting.last_error.is_some());
    assert_eq!(
        order(&app, sold.id).await.tax.tax_id_status,
        Some(TaxIdStatus::Unverified)
    );
    // Not due yet: not asked.
    app.clock.advance(chrono::Duration::seconds(59));
    pass(&app, &register).await.unwrap();
    assert_eq!(register.asked(), 1);
    // Due: asked, no answer again; now two minutes.
    app.clock.advance(chrono::Duration::seconds(1));
    let asked_at = app.now();
    pass(&app, &register).await.unwrap();
    assert_eq!(register.asked(), 2);
    let waiting = entry(&app, sold.id).await.expect("still queued");
    assert_eq!(waiting.attempts, 2);
    assert_eq!(
        waiting.next_attempt_at,
        Some(asked_at + chrono::Duration::minutes(2))
    );
    // Then the register answers.
    *register.answer.lock().unwrap() = TaxIdStatus::Valid;
    app.clock.advance(chrono::Duration::minutes(2));
    assert_eq!(pass(&app, &register).await.unwrap(), None);
    assert_eq!(
        order(&app, sold.id).await.tax.tax_id_status,
        Some(TaxIdStatus::Valid)
    );
    assert_eq!(entry(&app, sold.id).await, None);
}

#[actix_web::test]
async fn an_order_older_than_thirty_days_is_dropped_without_asking() {
    let app = testing::app().await;
    let sold = queued(&app, FR_NUMBER, "FR").await;
    let register = FakeRegister::answering(TaxIdStatus::Invalid);
    app.clock
        .advance(chrono::Duration::days(MAX_AGE_DAYS) + chrono::Duration::minutes(1));

    assert_eq!(pass(&app, &register).await.unwrap(), None);
    assert_eq!(register.asked(), 0);
    assert_eq!(entry(&app, sold.id).await, None, "dropped");
    assert_eq!(
        order(&app, sold.id).await.tax.tax_id_status,
        Some(TaxIdStatus::Unverified),
        "left as it was"
    );
}

#[actix_web::test]
async fn only_the_queued_order_changes_not_another_organizations() {
    let app = testing::app().await;
    let sold = queued(&app, FR_NUMBER, "FR").await;
    // Another organization's unverified order, not queued.
    let (other, _) = testing::seller(&app).await;
    let base = testing::paid_order(&app, other, 500, 0, "pi_2").await;
    let theirs = business_order(&base, FR_NUMBER, "FR", TaxIdStatus::Unverified, app.now());
    put(&app, &theirs).await;
    let before = app
        .store
        .get::<Order>(&theirs.id.key())
        .await
        .unwrap()
        .unwrap();
    // An entry naming the first organization but another organization's order (a
    // corrupt entry) writes nothing on that order.
    let crossed = TaxIdCheck {
        organization_id: sold.organization_id,
        ..TaxIdCheck::new(sold.organization_id, theirs.id, app.now())
    };
    put(&app, &crossed).await;
    let register = FakeRegister::answering(TaxIdStatus::Invalid);

    pass(&app, &register).await.unwrap();
    assert_eq!(
        order(&app, sold.id).await.tax.tax_id_status,
        Some(TaxIdStatus::Invalid)
    );
    let after = app
        .store
        .get::<Order>(&theirs.id.key())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        after.rev, before.rev,
        "the other organization's order untouched"
    );
    assert_eq!(after.value.tax.tax_id_status, Some(TaxIdStatus::Unverified));
    assert_eq!(
        entry(&app, theirs.id).await,
        None,
        "the crossed entry dropped"
    );
}

#[actix_web::test]
async fn a_number_without_a_register_or_already_decided_is_not_rechecked() {
    let app = testing::app().await;
    let (org, _) = testing::seller(&app).await;
    let base = testing::paid_order(&app, org, 1000, 0, "pi_1").await;
    let now = app.now();
    let register = FakeRegister::answering(TaxIdStatus::Valid);

    let eu = business_order(&base, FR_NUMBER, "FR", TaxIdStatus::Unverified, now);
    assert!(to_recheck(&register, &eu));
    // GB without HMRC: format only, by design.
    let gb = business_order(&base, GB_NUMBER, "GB", TaxIdStatus::Unverified, now);
    assert!(!to_recheck(&register, &gb));
    let with_hmrc = FakeRegister {
        hmrc: true,
        ..FakeRegister::answering(TaxIdStatus::Valid)
    };
    assert!(to_recheck(&with_hmrc, &gb));
    // A number with no register anywhere (Norway's).
    let no = business_order(&base, "NO923609016MVA", "NO", TaxIdStatus::Unverified, now);
    assert!(!to_recheck(&with_hmrc, &no));
    // Decided at checkout.
    for status in [TaxIdStatus::Valid, TaxIdStatus::Invalid] {
        let decided = business_order(&base, FR_NUMBER, "FR", status, now);
        assert!(!to_recheck(&register, &decided));
    }
    // No number.
    assert!(!to_recheck(&register, &base));

    // A GB entry queued when HMRC was set, after its credentials are gone: dropped, not
    // asked.
    put(&app, &gb).await;
    put(&app, &TaxIdCheck::new(org, gb.id, now)).await;
    pass(&app, &register).await.unwrap();
    assert_eq!(register.asked(), 0);
    assert_eq!(entry(&app, gb.id).await, None);
    assert_eq!(
        order(&app, gb.id).await.tax.tax_id_status,
        Some(TaxIdStatus::Unverified)
    );
}

/// The application with VIES on, pointed at a closed port (connection refused: never an
/// answer), and no HMRC.
async fn app_with_vies() -> (
    actix_web::web::Data<AppState>,
    crate::startup::Application,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut settings = crate::config::Settings::for_tests(dir.path());
    settings.tax.vies = true;
    settings.tax.vies_url = "http://127.0.0.1:9".into();
    settings.tax.lookup_timeout_ms = 200;
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let app = crate::startup::Application::build_with_clock(settings, clock)
        .await
        .expect("the application builds");
    (app.state(), app, dir)
}

/// Waits (bounded) until the fan-out has consumed every change written so far.
async fn fanned_out(app: &AppState) {
    let started = Instant::now();
    while app.store.pending_changes().await.expect("the feed") > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the fan-out did not consume the feed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[actix_web::test]
async fn the_fan_out_queues_a_paid_unverified_eu_number_once_and_nothing_else() {
    let (app, _app, _dir) = app_with_vies().await;
    let (org, _) = testing::seller(&app).await;
    let base = testing::paid_order(&app, org, 1000, 0, "pi_1").await;
    let now = app.now();
    let pending = |number: &str, country: &str, status: TaxIdStatus| Order {
        status: OrderStatus::Pending,
        ..business_order(&base, number, country, status, now)
    };
    let eu = pending(FR_NUMBER, "FR", TaxIdStatus::Unverified);
    let gb = pending(GB_NUMBER, "GB", TaxIdStatus::Unverified);
    let valid = pending(FR_NUMBER, "FR", TaxIdStatus::Valid);
    for o in [&eu, &gb, &valid] {
        put(&app, o).await;
    }
    fanned_out(&app).await;
    assert_eq!(entry(&app, eu.id).await, None, "not paid yet");
    for o in [&eu, &gb, &valid] {
        put(
            &app,
            &Order {
                status: OrderStatus::Paid,
                ..o.clone()
            },
        )
        .await;
    }
    fanned_out(&app).await;
    let queued = entry(&app, eu.id).await.expect("the EU number is queued");
    assert_eq!((queued.organization_id, queued.order_id), (org, eu.id));
    assert_eq!(entry(&app, gb.id).await, None, "no HMRC: format only");
    assert_eq!(entry(&app, valid.id).await, None, "confirmed at checkout");
    // Another change of the paid order queues nothing more (the pass's own answer, a
    // refund counted on it).
    let all = app.store.scan::<TaxIdCheck>().await.unwrap();
    assert_eq!(all.len(), 1);
    put(
        &app,
        &Order {
            status: OrderStatus::Paid,
            refunded_amount: 10,
            ..eu.clone()
        },
    )
    .await;
    fanned_out(&app).await;
    assert_eq!(app.store.scan::<TaxIdCheck>().await.unwrap().len(), 1);
}
