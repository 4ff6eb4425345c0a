//! Unit tests of `order.rs`: the first order of a settled checkout, one-time and
//! recurring.

use super::*;
use crate::checkout::AppliedDiscount;
use crate::domain::discount::{DiscountDuration, DiscountKind};
use crate::domain::ids::DiscountId;
use crate::domain::order::tests::{checkout, customer, t0};
use crate::domain::product::{PriceKind, RecurringInterval};
use crate::subscription::{Purchase, Subscription};

#[test]
fn a_one_time_checkout_makes_a_purchase_order() {
    let c = checkout(
        PriceKind::OneTimeFixed {
            currency: "usd".into(),
            amount: 2000,
        },
        Some(AppliedDiscount {
            id: DiscountId::new(),
            name: "Launch".into(),
            code: None,
            kind: DiscountKind::Fixed {
                amount: 500,
                currency: "usd".into(),
            },
            duration: DiscountDuration::Once,
        }),
    );
    let cu = customer(&c);
    let id = OrderId::new();
    let o = Order::from_checkout(id, &c, &cu, "Widget", Some(SubscriptionId::new()), t0());
    assert_eq!(o.id, id);
    assert_eq!(
        (o.amount, o.tax_amount, o.currency.as_str()),
        (1500, 0, "usd")
    );
    assert_eq!(o.billing_reason, BillingReason::Purchase);
    assert!(!o.recurring);
    assert_eq!(
        o.subscription_id, None,
        "a one-time order has no subscription"
    );
    assert_eq!(o.checkout_id, Some(c.id));
    assert_eq!(o.discount_name.as_deref(), Some("Launch"));
    assert_eq!(
        o.billing_address, None,
        "the checkout gave none, and its customer was found by the address typed"
    );
    assert_eq!(o.customer_email, "jane@example.com");
    // A customer the seller named: its stored address is the order's.
    let mut named = c.clone();
    named.customer_id_before_confirm = Some(cu.id);
    let o = Order::from_checkout(id, &named, &cu, "Widget", None, t0());
    assert_eq!(o.billing_address.map(|a| a.country), Some("FR".into()));
}

#[test]
fn a_recurring_checkout_makes_a_subscription_and_its_first_order() {
    let c = checkout(
        PriceKind::RecurringFixed {
            interval: RecurringInterval::Month,
            currency: "usd".into(),
            amount: 1500,
        },
        None,
    );
    let cu = customer(&c);
    let sid = SubscriptionId::new();
    let s = Subscription::new_from_purchase(
        sid,
        Purchase::from_checkout(
            &c,
            cu.id,
            &cu.email,
            "Pro",
            Some("tok_visa".into()),
            vec![],
            1,
            None,
        ),
        t0(),
    )
    .unwrap();
    assert_eq!((s.amount, s.checkout_id), (Some(1500), Some(c.id)));
    assert_eq!(s.payment_token.as_deref(), Some("tok_visa"));
    let o = Order::from_checkout(OrderId::new(), &c, &cu, "Pro", Some(sid), t0());
    assert_eq!(o.billing_reason, BillingReason::SubscriptionCreate);
    assert_eq!(o.subscription_id, Some(sid));
    assert!(o.recurring);
    assert_eq!(o.amount, s.amount.unwrap());
}
