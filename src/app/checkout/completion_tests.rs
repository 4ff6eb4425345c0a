//! Unit tests of the confirm's pure rules (`completion.rs`): how far its session reaches
//! and what it changes of an existing customer.

use super::*;
use crate::domain::customer::Address;

fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default()
}

/// An open checkout of the sample catalog, with a stranger's details typed in.
fn typed(email: &str) -> Checkout {
    let mut c = crate::api::checkout::sample_checkouts().remove(0);
    c.customer_email = Some(email.into());
    c.customer_name = Some("Mallory".into());
    c.customer_billing_address = Address::new(None, None, None, None, None, "DE").ok();
    c.customer_tax_id = None;
    c
}

/// The customer the checkout would create for its address.
fn own(c: &Checkout) -> CustomerId {
    customer_of_checkout(
        c.id,
        &normalize_email(c.customer_email.as_deref().unwrap_or_default()),
    )
}

fn victim(c: &Checkout) -> Customer {
    let mut v = Customer::new(
        CustomerId::new(),
        c.organization_id,
        "v@example.com".into(),
        now(),
    );
    v.name = None;
    v.billing_address = Address::new(
        Some("1 rue"),
        None,
        Some("75002"),
        Some("Paris"),
        None,
        "FR",
    )
    .ok();
    v
}

#[test]
fn an_address_that_names_an_existing_customer_reaches_this_purchase_only_and_changes_nothing() {
    let c = typed("v@example.com");
    let v = victim(&c);
    let reach = session_reach(&c, Some(&v), own(&c));
    assert_eq!(
        reach,
        SessionPurchase {
            checkout_id: c.id,
            limited: true
        }
    );
    assert_eq!(
        updated_customer(&v, &c, reach, None, now()),
        None,
        "neither the name, the address nor the record's time changes: nothing is written"
    );
}

#[test]
fn a_new_customer_and_a_seller_named_one_reach_the_whole_portal() {
    let c = typed("new@example.com");
    assert!(
        !session_reach(&c, None, own(&c)).limited,
        "this checkout's own customer"
    );

    let mut named = typed("v@example.com");
    let v = victim(&named);
    named.customer_id = Some(v.id);
    let reach = session_reach(&named, Some(&v), own(&named));
    assert!(!reach.limited);
    let updated = updated_customer(&v, &named, reach, None, now()).expect("changed");
    assert_eq!(
        updated.name.as_deref(),
        Some("Mallory"),
        "a name it had none of"
    );
    assert_eq!(updated.billing_address, named.customer_billing_address);
    assert_eq!(updated.modified_at, Some(now()));

    // The holder of the checkout's external id is the seller's word too; another
    // customer with the typed address is not.
    let mut external = typed("v@example.com");
    external.external_customer_id = Some("ext-1".into());
    let mut holder = victim(&external);
    assert!(session_reach(&external, Some(&holder), own(&external)).limited);
    holder.external_id = Some("ext-1".into());
    assert!(!session_reach(&external, Some(&holder), own(&external)).limited);
}

#[test]
fn a_limited_purchase_gives_the_customer_neither_the_sellers_external_id_nor_metadata() {
    // A checkout the seller's app made for the stranger (its external id and metadata),
    // with the victim's address typed in.
    let mut c = typed("v@example.com");
    c.external_customer_id = Some("stranger-1".into());
    c.customer_metadata = crate::domain::metadata::Metadata(
        [(
            "plan".to_string(),
            crate::domain::metadata::MetaValue::Str("pro".into()),
        )]
        .into_iter()
        .collect(),
    );
    let v = victim(&c);
    let reach = session_reach(&c, Some(&v), own(&c));
    assert!(reach.limited);
    assert_eq!(
        updated_customer(&v, &c, reach, Some("stranger-1".into()), now()),
        None,
        "the victim's record would later be the stranger's by that external id"
    );
    // The seller's own customer gets them.
    let mut named = c.clone();
    named.customer_id = Some(v.id);
    let reach = session_reach(&named, Some(&v), own(&named));
    let updated =
        updated_customer(&v, &named, reach, Some("stranger-1".into()), now()).expect("changed");
    assert_eq!(updated.external_id.as_deref(), Some("stranger-1"));
    assert_eq!(updated.metadata, named.customer_metadata);
}

#[test]
fn a_customer_an_earlier_attempt_of_this_checkout_created_is_its_own() {
    // The first attempt created the customer, the card was declined, the buyer pays again.
    let c = typed("new@example.com");
    let mut earlier = victim(&c);
    earlier.id = own(&c);
    assert!(!session_reach(&c, Some(&earlier), own(&c)).limited);
    // Another checkout's customer with that address is not.
    let mut other = typed("new@example.com");
    other.id = CheckoutId::new();
    assert!(session_reach(&other, Some(&earlier), own(&other)).limited);
}

#[test]
fn contention_names_the_checkout_only_when_the_checkout_changed() {
    let checkout = StorageError::Conflict {
        collection: "checkout",
        expected: String::new(),
        found: None,
    };
    assert!(contention(&checkout).starts_with("The checkout is being confirmed"));
    let customer = StorageError::Unique {
        constraint: "customer_email",
    };
    assert!(contention(&customer).starts_with("The customer or the discount"));
}

/// A confirmed checkout waiting on intent `pi_1` in `status`.
fn waiting(status: &str) -> Checkout {
    let mut c = typed("ada@example.com");
    c.status = CheckoutStatus::Confirmed;
    c.payment_processor_metadata
        .insert("intent_id".into(), "pi_1".into());
    c.payment_processor_metadata
        .insert("intent_status".into(), status.into());
    c
}

#[test]
fn a_failure_while_the_buyer_is_there_reopens_and_one_after_processing_fails() {
    // Declined at once (no intent recorded), or a 3-D Secure / bank page that failed: the
    // buyer is on the page and may pay again.
    let mut declined = typed("ada@example.com");
    declined.status = CheckoutStatus::Confirmed;
    assert!(matches!(after_decline(&declined), Settlement::Reopen));
    assert!(matches!(
        after_decline(&waiting("requires_action")),
        Settlement::Reopen
    ));
    // A debit accepted for settlement that bounced days later: the checkout fails.
    assert!(matches!(
        after_decline(&waiting("processing")),
        Settlement::Failed
    ));
    // Only a confirmed checkout waits on anything.
    let mut open = waiting("processing");
    open.status = CheckoutStatus::Open;
    assert!(matches!(after_decline(&open), Settlement::Reopen));
}

#[test]
fn a_redirect_comes_back_to_the_checkout_s_confirmation_page() {
    let c = typed("ada@example.com");
    let url = format!(
        "{}/checkout/{}/confirmation",
        "https://pay.example", c.client_secret
    );
    assert_eq!(return_url_of("https://pay.example/", &c), url);
    assert_eq!(return_url_of("https://pay.example", &c), url);
}
