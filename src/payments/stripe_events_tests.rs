//! Each Stripe event Tollgate handles becomes its typed event; any other is ignored.

use serde_json::json;

use super::*;

fn event(kind: &str, object: serde_json::Value) -> ProcessorEvent {
    let body = json!({"id": "evt_1", "type": kind, "data": {"object": object}});
    parse_event(body.to_string().as_bytes()).expect("an event")
}

const CHECKOUT: &str = "7b0c6f7e-3f5e-4a53-9d44-2d1c0c3a9e11";
const REFUND: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

fn intent(status: &str) -> serde_json::Value {
    json!({"id": "pi_1", "status": status, "client_secret": null,
           "payment_method": "pm_1", "metadata": {"checkout_id": CHECKOUT},
           "last_payment_error": {"message": "Your card was declined."}})
}

#[test]
fn a_succeeded_intent_is_a_payment_succeeded() {
    let e = event("payment_intent.succeeded", intent("succeeded"));
    assert_eq!(e.id, "evt_1");
    assert_eq!(
        e.kind,
        EventKind::PaymentSucceeded(PaymentUpdate {
            payment_id: "pi_1".into(),
            checkout_id: Some(CheckoutId(CHECKOUT.parse().unwrap())),
            order_id: None,
            outcome: ChargeOutcome::Succeeded {
                intent_id: "pi_1".into(),
                payment_method: Some("pm_1".into()),
            },
        })
    );
    let e = event("setup_intent.succeeded", intent("succeeded"));
    assert!(matches!(e.kind, EventKind::PaymentSucceeded(_)));
}

/// A buyer's "pay now" charge names the past-due order it pays, and no checkout.
#[test]
fn a_pay_now_intent_names_its_order() {
    let order = "7e000000-0000-4000-8000-0000000000a1";
    let object = json!({"id": "pi_2", "status": "succeeded", "client_secret": null,
                        "payment_method": "pm_2",
                        "metadata": {"order_id": order, "subscription_id": CHECKOUT}});
    let EventKind::PaymentSucceeded(update) = event("payment_intent.succeeded", object).kind else {
        panic!("not a payment");
    };
    assert_eq!(update.checkout_id, None);
    assert_eq!(update.order_id, Some(OrderId(order.parse().unwrap())));
    let EventKind::PaymentSucceeded(update) =
        event("payment_intent.succeeded", intent("succeeded")).kind
    else {
        panic!("not a payment");
    };
    assert_eq!(update.order_id, None);
}

#[test]
fn failed_and_canceled_intents_are_a_payment_failed() {
    for kind in [
        "payment_intent.payment_failed",
        "payment_intent.canceled",
        "setup_intent.setup_failed",
        "setup_intent.canceled",
    ] {
        let e = event(kind, intent("requires_payment_method"));
        let EventKind::PaymentFailed(p) = e.kind else {
            panic!("{kind}: not a failure");
        };
        assert_eq!(
            p.outcome,
            ChargeOutcome::Declined {
                message: Some("Your card was declined.".into())
            },
            "{kind}"
        );
    }
}

/// A delayed method (SEPA Direct Debit) accepted: under way, not paid.
#[test]
fn a_processing_intent_is_a_payment_processing() {
    let e = event("payment_intent.processing", intent("processing"));
    let EventKind::PaymentProcessing(p) = e.kind else {
        panic!("not processing: {e:?}");
    };
    assert_eq!(p.checkout_id, Some(CheckoutId(CHECKOUT.parse().unwrap())));
    assert_eq!(
        p.outcome,
        ChargeOutcome::Pending {
            intent_id: "pi_1".into(),
            status: "processing".into(),
            client_secret: None,
        }
    );
}

#[test]
fn an_intent_event_without_an_intent_is_refused() {
    let body = json!({"id": "evt_1", "type": "payment_intent.succeeded", "data": {"object": {}}});
    assert!(matches!(
        parse_event(body.to_string().as_bytes()),
        Err(EventError::NotAnIntent(_))
    ));
    assert!(matches!(parse_event(b"{}"), Err(EventError::NotAnEvent(_))));
}

#[test]
fn a_refund_event_is_a_refund_updated() {
    let e = event(
        "refund.updated",
        json!({"id": "re_1", "status": "succeeded", "amount": 1200, "currency": "usd",
               "payment_intent": "pi_1", "reason": "duplicate",
               "metadata": {"refund_id": REFUND}}),
    );
    assert_eq!(
        e.kind,
        EventKind::RefundUpdated(vec![RefundUpdate {
            processor_id: "re_1".into(),
            refund_id: Some(RefundId(REFUND.parse().unwrap())),
            payment_id: Some("pi_1".into()),
            amount: 1200,
            currency: "usd".into(),
            status: RefundState::Succeeded,
            reason: RefundReason::Duplicate,
        }])
    );
    for (status, state) in [
        ("failed", RefundState::Failed),
        ("canceled", RefundState::Failed),
        ("pending", RefundState::Pending),
    ] {
        let e = event("refund.failed", json!({"id": "re_1", "status": status}));
        let EventKind::RefundUpdated(r) = e.kind else {
            panic!("not a refund");
        };
        assert_eq!(r[0].status, state);
        assert_eq!(r[0].reason, RefundReason::Other);
    }
}

#[test]
fn a_refunded_charge_is_each_of_its_refunds_on_its_payment() {
    let e = event(
        "charge.refunded",
        json!({"id": "ch_1", "payment_intent": "pi_9", "refunds": {"data": [
            {"id": "re_1", "status": "succeeded", "amount": 500,
             "reason": "requested_by_customer"},
            {"id": "re_2", "status": "succeeded", "amount": 300, "payment_intent": "pi_8"},
            {"status": "succeeded", "amount": 1}
        ]}}),
    );
    let EventKind::RefundUpdated(r) = e.kind else {
        panic!("not refunds");
    };
    assert_eq!(r.len(), 2, "a refund without an id is left out");
    assert_eq!(r[0].payment_id.as_deref(), Some("pi_9"));
    assert_eq!(r[0].reason, RefundReason::CustomerRequest);
    assert_eq!(r[1].payment_id.as_deref(), Some("pi_8"));
}

#[test]
fn a_dispute_event_is_a_dispute_changed() {
    for kind in [
        "charge.dispute.created",
        "charge.dispute.updated",
        "charge.dispute.closed",
    ] {
        let e = event(
            kind,
            json!({"id": "dp_1", "status": "needs_response", "amount": 2400,
                   "currency": "usd", "payment_intent": "pi_1", "reason": "fraudulent",
                   "evidence_details": {"due_by": 1_700_000_000}}),
        );
        assert_eq!(
            e.kind,
            EventKind::DisputeChanged(DisputeUpdate {
                processor_id: "dp_1".into(),
                payment_id: Some("pi_1".into()),
                status: DisputeStatus::NeedsResponse,
                amount: 2400,
                currency: "usd".into(),
                reason: Some("fraudulent".into()),
                evidence_due_by: DateTime::from_timestamp(1_700_000_000, 0),
            }),
            "{kind}"
        );
    }
    let e = event(
        "charge.dispute.updated",
        json!({"id": "dp_1", "status": "something_new"}),
    );
    assert_eq!(e.kind, EventKind::Ignored, "a status Stripe does not send");
}

#[test]
fn an_unknown_type_is_ignored() {
    let e = event("customer.created", json!({"id": "cus_1"}));
    assert_eq!(e.kind, EventKind::Ignored);
    assert_eq!(e.id, "evt_1");
}
