use super::*;
use crate::golden::{at, hex, uuid};

/// Every optional field set, the last variants included.
fn full_transaction() -> TaxTransaction {
    TaxTransaction {
        id: TaxTransactionId(uuid(1)),
        organization_id: OrganizationId(uuid(2)),
        order_id: OrderId(uuid(3)),
        calculation_id: "taxcalc_1".into(),
        transaction_id: Some("tax_1".into()),
        recorded_at: at(60),
        reversals: vec![TaxReversal {
            refund_id: RefundId(uuid(4)),
            transaction_id: Some("tax_2".into()),
            full: false,
            flat_amount: -595,
            reversed_at: at(120),
        }],
    }
}

fn full_due() -> TaxRecordDue {
    TaxRecordDue {
        id: TaxRecordDueId(uuid(5)),
        organization_id: OrganizationId(uuid(2)),
        order_id: OrderId(uuid(3)),
        action: TaxAction::Reverse {
            refund_id: RefundId(uuid(4)),
            full: true,
            flat_amount: -1190,
        },
        created_at: at(30),
        attempts: 2,
        next_attempt_at: Some(at(90)),
        last_error: Some("down".into()),
    }
}

const GOLDEN_TRANSACTION_V1: &str = "1000000000000000000000000000000001100000000000000000000000000000000210000000000000000000000000000000030974617863616c635f3101057461785f3114313937302d30312d30315430303a30313a30305a01100000000000000000000000000000000401057461785f3200fba50414313937302d30312d30315430303a30323a30305a";
const GOLDEN_DUE_V1: &str = "10000000000000000000000000000000051000000000000000000000000000000002100000000000000000000000000000000301100000000000000000000000000000000401fb4b0914313937302d30312d30315430303a30303a33305a020114313937302d30312d30315430303a30313a33305a0104646f776e";

#[test]
fn round_trip_and_golden_bytes() {
    let t = full_transaction();
    assert_eq!(
        (TaxTransaction::COLLECTION, TaxTransaction::VERSION),
        ("tax_transaction", 1)
    );
    let bytes = t.encode().unwrap_or_default();
    assert_eq!(TaxTransaction::decode(1, &bytes).ok(), Some(t.clone()));
    assert_eq!(
        hex(&bytes),
        GOLDEN_TRANSACTION_V1,
        "tax_transaction format v1 changed"
    );
    assert!(TaxTransaction::decode(2, &bytes).is_err());
    let bare = TaxTransaction {
        transaction_id: None,
        reversals: Vec::new(),
        ..t
    };
    let bytes = bare.encode().unwrap_or_default();
    assert_eq!(TaxTransaction::decode(1, &bytes).ok(), Some(bare));

    let d = full_due();
    assert_eq!(
        (TaxRecordDue::COLLECTION, TaxRecordDue::VERSION),
        ("tax_record_due", 1)
    );
    let bytes = d.encode().unwrap_or_default();
    assert_eq!(TaxRecordDue::decode(1, &bytes).ok(), Some(d.clone()));
    assert_eq!(
        hex(&bytes),
        GOLDEN_DUE_V1,
        "tax_record_due format v1 changed"
    );
    assert!(TaxRecordDue::decode(2, &bytes).is_err());
    let first = TaxRecordDue::new(
        d.organization_id,
        d.order_id,
        TaxAction::Record {
            calculation_id: "taxcalc_1".into(),
        },
        at(30),
    );
    let bytes = first.encode().unwrap_or_default();
    assert_eq!(TaxRecordDue::decode(1, &bytes).ok(), Some(first));
}

#[test]
fn ids_derive_from_the_order_and_the_refund() {
    let order = OrderId(uuid(3));
    let record = TaxAction::Record {
        calculation_id: "taxcalc_1".into(),
    };
    let reverse = |refund: u128| TaxAction::Reverse {
        refund_id: RefundId(uuid(refund)),
        full: false,
        flat_amount: -1,
    };
    assert_eq!(TaxTransaction::id_for(order), TaxTransaction::id_for(order));
    assert_ne!(
        TaxTransaction::id_for(order),
        TaxTransaction::id_for(OrderId(uuid(9)))
    );
    // Another calculation of the same order is the same entry: an order is recorded once.
    let again = TaxAction::Record {
        calculation_id: "taxcalc_2".into(),
    };
    assert_eq!(
        TaxRecordDue::id_for(order, &record),
        TaxRecordDue::id_for(order, &again)
    );
    assert_ne!(
        TaxRecordDue::id_for(order, &record),
        TaxRecordDue::id_for(order, &reverse(4))
    );
    assert_ne!(
        TaxRecordDue::id_for(order, &reverse(4)),
        TaxRecordDue::id_for(order, &reverse(5))
    );
    let t = full_transaction();
    assert!(t.reversed(RefundId(uuid(4))) && !t.reversed(RefundId(uuid(5))));
}

#[test]
fn failures_back_off_to_an_hour() {
    let mut d = TaxRecordDue::new(
        OrganizationId(uuid(2)),
        OrderId(uuid(3)),
        TaxAction::Record {
            calculation_id: "taxcalc_1".into(),
        },
        at(0),
    );
    assert!(d.is_due(at(0)));
    d.failed(at(100), "down".into());
    assert_eq!((d.attempts, d.next_attempt_at), (1, Some(at(102))));
    assert!(!d.is_due(at(101)) && d.is_due(at(102)));
    d.failed(at(100), "down".into());
    assert_eq!(d.next_attempt_at, Some(at(104)));
    for _ in 0..20 {
        d.failed(at(100), "still down".into());
    }
    assert_eq!(d.next_attempt_at, Some(at(3700)));
    assert_eq!(d.last_error.as_deref(), Some("still down"));
}
