use super::*;
use crate::golden::{address, at, hex, uuid};
use crate::tax::rates::EU_MEMBER_STATES;
use crate::tax::Regime;

fn eu(country: &str) -> bool {
    EU_MEMBER_STATES.contains(&country)
}

fn line(country: &str, reason: TaxabilityReason) -> TaxBreakdown {
    TaxBreakdown {
        country: country.into(),
        subdivision: None,
        name: "VAT".into(),
        rate_ppm: 0,
        taxable_amount: 1000,
        amount: 0,
        reason,
        regime: Regime::None,
    }
}

/// Every optional field set: a credit note (the kind's last variant), a buyer with an
/// address and a number, a recurring line.
fn full_credit_note() -> Invoice {
    Invoice {
        id: InvoiceId(uuid(1)),
        organization_id: OrganizationId(uuid(2)),
        order_id: OrderId(uuid(3)),
        kind: InvoiceKind::CreditNote {
            refund_id: RefundId(uuid(4)),
            invoice_number: "AC-0001".into(),
        },
        number: "AC-CN-0001".into(),
        seq: 1,
        issued_at: at(120),
        supplied_at: at(0),
        seller: Seller {
            legal_name: "Acme".into(),
            address: address(),
            tax_id: Some("DE1".into()),
        },
        buyer: BillTo {
            name: "Jo".into(),
            address: Some(address()),
            tax_id: Some("FR2".into()),
            email: "j@x.io".into(),
        },
        lines: vec![InvoiceLine {
            description: "Pro".into(),
            quantity: 2,
            unit_amount: -500,
            amount: -1000,
            tax_amount: -190,
            period: Some((at(0), at(60))),
        }],
        subtotal: -1000,
        discount: 0,
        net: -1000,
        tax_breakdown: vec![TaxBreakdown {
            country: "DE".into(),
            subdivision: Some("DE-BE".into()),
            name: "VAT".into(),
            rate_ppm: 190_000,
            taxable_amount: -1000,
            amount: -190,
            reason: TaxabilityReason::StandardRated,
            regime: Regime::Domestic,
        }],
        total: -1190,
        currency: "eur".into(),
        behavior: TaxBehavior::Inclusive,
        mentions: vec!["M".into()],
    }
}

#[test]
fn round_trip_and_golden_bytes() {
    let c = full_credit_note();
    assert_eq!((Invoice::COLLECTION, Invoice::VERSION), ("invoice", 1));
    let bytes = c.encode().unwrap_or_default();
    assert_eq!(Invoice::decode(1, &bytes).ok(), Some(c.clone()));
    assert_eq!(hex(&bytes), GOLDEN_V1, "invoice format v1 changed");
    assert!(Invoice::decode(2, &bytes).is_err());
    // An invoice (the first kind) without the optional parts.
    let i = Invoice {
        kind: InvoiceKind::Invoice,
        buyer: BillTo {
            address: None,
            tax_id: None,
            ..c.buyer.clone()
        },
        seller: Seller {
            tax_id: None,
            ..c.seller.clone()
        },
        lines: Vec::new(),
        tax_breakdown: Vec::new(),
        mentions: Vec::new(),
        ..c.clone()
    };
    let bytes = i.encode().unwrap_or_default();
    assert_eq!(Invoice::decode(1, &bytes).ok(), Some(i));

    let s = DocumentSequence {
        last: 7,
        ..DocumentSequence::start(OrganizationId(uuid(2)), DocumentKind::CreditNote)
    };
    assert_eq!(
        (DocumentSequence::COLLECTION, DocumentSequence::VERSION),
        ("document_sequence", 1)
    );
    let bytes = s.encode().unwrap_or_default();
    assert_eq!(DocumentSequence::decode(1, &bytes).ok(), Some(s));
    assert_eq!(
        hex(&bytes),
        GOLDEN_SEQUENCE_V1,
        "sequence format v1 changed"
    );
}

#[test]
fn numbers_have_four_digits_at_least_and_credit_notes_their_own_infix() {
    assert_eq!(
        Invoice::number_for("ACME", DocumentKind::Invoice, 1),
        "ACME-0001"
    );
    assert_eq!(
        Invoice::number_for("ACME", DocumentKind::CreditNote, 1),
        "ACME-CN-0001"
    );
    assert_eq!(
        Invoice::number_for("ACME", DocumentKind::Invoice, 9999),
        "ACME-9999"
    );
    assert_eq!(
        Invoice::number_for("ACME", DocumentKind::Invoice, 12345),
        "ACME-12345"
    );
    assert_eq!(
        Invoice::number_for("X", DocumentKind::CreditNote, 420),
        "X-CN-0420"
    );
}

#[test]
fn keys_one_number_per_organization_one_invoice_per_order_one_note_per_refund() {
    let c = full_credit_note();
    assert_eq!(
        c.unique_keys(),
        vec![
            Invoice::number_key(c.organization_id, "AC-CN-0001"),
            Invoice::refund_key(RefundId(uuid(4))),
        ]
    );
    let i = Invoice {
        kind: InvoiceKind::Invoice,
        number: "AC-0001".into(),
        ..c.clone()
    };
    assert_eq!(
        i.unique_keys(),
        vec![
            Invoice::number_key(c.organization_id, "AC-0001"),
            Invoice::order_key(c.order_id),
        ]
    );
    // The number is the organization's: another one may print the same.
    assert_ne!(
        Invoice::number_key(OrganizationId(uuid(9)), "AC-0001"),
        Invoice::number_key(c.organization_id, "AC-0001")
    );
    let entries = c.index_entries();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].index, INVOICE_BY_ISSUED);
    assert_eq!(entries[0].tenant, c.organization_id.key());
    assert_eq!(entries[0].sort, time_key(at(120)));
}

#[test]
fn derived_ids_are_stable_and_distinct() {
    let order = OrderId(uuid(3));
    let refund = RefundId(uuid(3));
    assert_eq!(Invoice::id_for_order(order), Invoice::id_for_order(order));
    assert_ne!(Invoice::id_for_order(order), Invoice::id_for_refund(refund));
    let org = OrganizationId(uuid(2));
    let inv = DocumentSequence::id_for(org, DocumentKind::Invoice);
    assert_eq!(inv, DocumentSequence::start(org, DocumentKind::Invoice).id);
    assert_ne!(inv, DocumentSequence::id_for(org, DocumentKind::CreditNote));
    assert_ne!(
        inv,
        DocumentSequence::id_for(OrganizationId(uuid(5)), DocumentKind::Invoice)
    );
    assert_eq!(DocumentSequence::start(org, DocumentKind::Invoice).last, 0);
}

#[test]
fn reverse_charge_mentions_by_the_buyers_country() {
    let de = line("DE", TaxabilityReason::ReverseCharge);
    let gb = line("gb", TaxabilityReason::ReverseCharge);
    assert_eq!(reverse_charge_mention(&de, eu), Some(REVERSE_CHARGE_EU));
    assert_eq!(reverse_charge_mention(&gb, eu), Some(REVERSE_CHARGE_GB));
    assert!(REVERSE_CHARGE_EU.contains("Article 196, Council Directive 2006/112/EC"));
    // Not reverse-charged, or outside the EU and the UK: no mention.
    assert_eq!(
        reverse_charge_mention(&line("DE", TaxabilityReason::StandardRated), eu),
        None
    );
    assert_eq!(
        reverse_charge_mention(&line("NO", TaxabilityReason::ReverseCharge), eu),
        None
    );
    // Each mention once.
    let fr = line("FR", TaxabilityReason::ReverseCharge);
    assert_eq!(
        mentions_for(
            &[de, fr, gb, line("US", TaxabilityReason::NotCollecting)],
            eu
        ),
        vec![REVERSE_CHARGE_EU.to_string(), REVERSE_CHARGE_GB.to_string()]
    );
    assert!(mentions_for(&[], eu).is_empty());
    let c = full_credit_note();
    assert!(c.is_credit_note());
    assert_eq!(c.tax(), -190);
    assert_eq!(c.kind.document_kind(), DocumentKind::CreditNote);
    assert_eq!(DocumentKind::CreditNote.as_str(), "credit_note");
}

const GOLDEN_V1: &str = "\
    10000000000000000000000000000000011000000000000000000000000000000002100000000000000000\
    00000000000000030110000000000000000000000000000000040741432d303030310a41432d434e2d3030\
    30310114313937302d30312d30315430303a30323a30305a14313937302d30312d30315430303a30303a30\
    305a0441636d65010931204d61696e2053740105417074203201074832582031593401084d6f6e74726561\
    6c010543412d51430243410103444531024a6f01010931204d61696e205374010541707420320107483258\
    2031593401084d6f6e747265616c010543412d51430243410103465232066a40782e696f010350726f02fb\
    e703fbcf07fb7b010114313937302d30312d30315430303a30303a30305a14313937302d30312d30315430\
    303a30313a30305afbcf0700fbcf0701024445010544452d424503564154fc30e60200fbcf07fb7b010000\
    fb4b09036575720001014d";

const GOLDEN_SEQUENCE_V1: &str =
    "103d3b8e4cc56b4293943f47b41e5b680f10000000000000000000000000000000020107";

#[test]
fn a_due_document_is_one_entry_per_document() {
    let order = OrderId(uuid(3));
    let refund = RefundId(uuid(4));
    let invoice = DueDocument::Invoice { order_id: order };
    let note = DueDocument::CreditNote {
        refund_id: refund,
        order_id: order,
    };
    assert_eq!(DocumentDue::id_for(invoice), DocumentDue::id_for(invoice));
    assert_ne!(DocumentDue::id_for(invoice), DocumentDue::id_for(note));
    let due = DocumentDue::new(OrganizationId(uuid(2)), note, at(1_796_000_000));
    assert_eq!(due.invoice_id(), Invoice::id_for_refund(refund));
    assert_eq!(
        DocumentDue::new(OrganizationId(uuid(2)), invoice, at(1_796_000_000)).invoice_id(),
        Invoice::id_for_order(order)
    );
    assert_eq!(
        (DocumentDue::COLLECTION, DocumentDue::VERSION),
        ("document_due", 1)
    );
    let bytes = due.encode().unwrap_or_default();
    assert_eq!(DocumentDue::decode(1, &bytes).ok(), Some(due));
    assert_eq!(hex(&bytes), GOLDEN_DUE_V1, "document_due format v1 changed");
}

const GOLDEN_DUE_V1: &str = "1098ff8132596c4dfe8a26ea9a22e676e01000000000000000000000000000000002011000000000000000000000000000000004100000000000000000000000000000000314323032362d31312d33305430303a35333a32305a";
