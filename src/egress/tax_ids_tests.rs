//! The checker against the fake VIES and HMRC of `crate::egress::tax_id`'s tests (a
//! loopback actix server counting the requests it receives; no network).

use super::*;
use crate::domain::customer::validate_tax_id;
use crate::egress::tax_id::tests::FakeRegisters;

/// A number as the checkout has it: validated for `country`.
fn id(number: &str, country: &str) -> TaxId {
    validate_tax_id(number, country).unwrap_or_else(|e| panic!("{number}: {e:?}"))
}

#[actix_web::test]
async fn eu_numbers_are_asked_of_vies_and_the_answer_is_kept() {
    let fake = FakeRegisters::start();
    let checker = TaxIdChecker::from_config(&fake.config()).unwrap();

    let registered = id("DE136695976", "DE");
    assert_eq!(
        checker.verdict(&registered, "DE").await,
        TaxIdVerdict {
            status: TaxIdStatus::Valid,
            register: Some(TaxIdRegister::Vies),
            consultation: Some("WAPIAAAAZ1234567".into()),
            name: Some("ACME GMBH".into()),
        }
    );
    assert_eq!(fake.vies_requests(), 1);
    // Asked again: the kept answer, VIES not asked.
    assert_eq!(checker.check(&registered, "de").await, TaxIdStatus::Valid);
    assert_eq!(fake.vies_requests(), 1);

    // Not registered: Invalid, kept too.
    let unregistered = id("DE118619592", "DE");
    assert_eq!(
        checker.check(&unregistered, "DE").await,
        TaxIdStatus::Invalid
    );
    assert_eq!(
        checker.check(&unregistered, "DE").await,
        TaxIdStatus::Invalid
    );
    assert_eq!(fake.vies_requests(), 2);

    // Another member state's number given by a buyer in Germany; Greece asked as EL.
    assert_eq!(
        checker.check(&id("FR40303265045", "FR"), "DE").await,
        TaxIdStatus::Valid
    );
    assert_eq!(
        checker.check(&id("EL094259216", "GR"), "GR").await,
        TaxIdStatus::Valid
    );
    assert_eq!(fake.vies_requests(), 4);
    fake.stop().await;
}

#[actix_web::test]
async fn no_answer_leaves_the_number_unverified_and_is_not_kept() {
    let fake = FakeRegisters::start();
    let checker = TaxIdChecker::from_config(&fake.config()).unwrap();

    // MS_UNAVAILABLE (as a 500), GLOBAL_MAX_CONCURRENT_REQ (as a 200).
    for number in ["DE125014955", "DE168347747"] {
        let down = id(number, "DE");
        assert_eq!(checker.check(&down, "DE").await, TaxIdStatus::Unverified);
        assert_eq!(checker.check(&down, "DE").await, TaxIdStatus::Unverified);
    }
    assert_eq!(fake.vies_requests(), 4);

    // Slower than the 200 ms timeout: it returns, unverified.
    let verdict = checker.verdict(&id("DE129304291", "DE"), "DE").await;
    assert_eq!(verdict.status, TaxIdStatus::Unverified);
    assert_eq!(verdict.register, None);
    fake.stop().await;
}

#[actix_web::test]
async fn gb_numbers_are_asked_of_hmrc() {
    let fake = FakeRegisters::start();
    let checker = TaxIdChecker::from_config(&fake.config()).unwrap();

    let verdict = checker.verdict(&id("GB980780684", "GB"), "GB").await;
    assert_eq!(verdict.status, TaxIdStatus::Valid);
    assert_eq!(verdict.register, Some(TaxIdRegister::Hmrc));
    assert_eq!(verdict.name.as_deref(), Some("ACME LTD"));
    assert_eq!(
        checker.check(&id("GB 100 1908 74", "GB"), "GB").await,
        TaxIdStatus::Invalid
    );
    assert_eq!(
        checker.check(&id("GB653599494", "GB"), "GB").await,
        TaxIdStatus::Unverified
    );
    assert_eq!(
        checker.check(&id("GB260311213", "GB"), "GB").await,
        TaxIdStatus::Unverified
    );
    // Kept: asked again, HMRC is not.
    assert_eq!(
        checker.check(&id("GB980780684", "GB"), "GB").await,
        TaxIdStatus::Valid
    );
    assert_eq!(fake.lookup_requests(), 4);
    assert_eq!(fake.token_requests(), 1);
    // A government department's number is not in HMRC's register: format only.
    assert_eq!(
        checker.check(&id("GD100", "GB"), "GB").await,
        TaxIdStatus::Unverified
    );
    assert_eq!(fake.lookup_requests(), 4);
    fake.stop().await;
}

#[actix_web::test]
async fn without_a_register_numbers_stay_unverified_and_nothing_is_asked() {
    let fake = FakeRegisters::start();
    let none = TaxConfig {
        vies: false,
        hmrc_client_id: String::new(),
        hmrc_client_secret: String::new(),
        ..fake.config()
    };
    let vies_only = TaxConfig {
        hmrc_client_id: String::new(),
        hmrc_client_secret: String::new(),
        ..fake.config()
    };
    let hmrc_only = TaxConfig {
        vies: false,
        ..fake.config()
    };
    for checker in [
        TaxIdChecker::disabled(),
        TaxIdChecker::from_config(&none).unwrap(),
    ] {
        assert_eq!(
            checker.check(&id("DE136695976", "DE"), "DE").await,
            TaxIdStatus::Unverified
        );
        assert_eq!(
            checker.check(&id("GB980780684", "GB"), "GB").await,
            TaxIdStatus::Unverified
        );
    }
    let vies_only = TaxIdChecker::from_config(&vies_only).unwrap();
    assert_eq!(
        vies_only.check(&id("GB980780684", "GB"), "GB").await,
        TaxIdStatus::Unverified
    );
    let hmrc_only = TaxIdChecker::from_config(&hmrc_only).unwrap();
    assert_eq!(
        hmrc_only.check(&id("DE136695976", "DE"), "DE").await,
        TaxIdStatus::Unverified
    );
    // Numbers of no register (a Swiss UID) are never asked.
    assert_eq!(
        TaxIdChecker::from_config(&fake.config())
            .unwrap()
            .check(&id("CHE-109.322.551", "CH"), "CH")
            .await,
        TaxIdStatus::Unverified
    );
    assert_eq!(
        fake.vies_requests() + fake.token_requests() + fake.lookup_requests(),
        0
    );
    fake.stop().await;
}

#[actix_web::test]
async fn the_cache_is_bounded_and_expires() {
    let fake = FakeRegisters::start();
    let lookup = || Some(TaxIdLookup::new(&fake.config()).unwrap());

    // Room for two answers: a third pushes the oldest out, which is then asked again.
    let small = TaxIdChecker::with_cache(lookup(), CACHE_TTL, 2);
    let (a, b, c) = (
        id("DE136695976", "DE"),
        id("DE118619592", "DE"),
        id("FR40303265045", "FR"),
    );
    for n in [&a, &b, &c] {
        small.check(n, "DE").await;
    }
    assert_eq!(fake.vies_requests(), 3);
    assert_eq!(small.cache.lock().unwrap().len(), 2);
    small.check(&c, "DE").await;
    assert_eq!(fake.vies_requests(), 3);
    small.check(&a, "DE").await;
    assert_eq!(fake.vies_requests(), 4);

    // A lifetime of zero: every answer has expired when next asked.
    let expired = TaxIdChecker::with_cache(lookup(), Duration::ZERO, CACHE_CAPACITY);
    assert_eq!(expired.check(&a, "DE").await, TaxIdStatus::Valid);
    assert_eq!(expired.check(&a, "DE").await, TaxIdStatus::Valid);
    assert_eq!(fake.vies_requests(), 6);
    fake.stop().await;
}
