use chrono::Duration;
use tollgate_storage::{Batch, Expect};

use super::*;
use crate::app::testing::{app, paid_order, seller};
use crate::domain::ids::{OrderId, RefundId};
use crate::domain::order::OrderStatus;
use crate::domain::refund::RefundReason;

fn at(y: i32, m: u32, d: u32) -> DateTime<Utc> {
    midnight(NaiveDate::from_ymd_opt(y, m, d).unwrap()) + Duration::hours(10)
}

fn line(
    country: &str,
    rate_ppm: u32,
    taxable: i64,
    tax: i64,
    reason: TaxabilityReason,
    regime: Regime,
) -> TaxBreakdown {
    TaxBreakdown {
        country: country.into(),
        subdivision: None,
        name: "VAT".into(),
        rate_ppm,
        taxable_amount: taxable,
        amount: tax,
        reason,
        regime,
    }
}

fn oss(country: &str, rate_ppm: u32, taxable: i64, tax: i64) -> TaxBreakdown {
    line(
        country,
        rate_ppm,
        taxable,
        tax,
        TaxabilityReason::StandardRated,
        Regime::EuOss,
    )
}

/// A sale of `org` at `when` with `breakdown` (amount and tax its totals), stored.
async fn sale(
    state: &AppState,
    org: OrganizationId,
    when: DateTime<Utc>,
    breakdown: Vec<TaxBreakdown>,
    status: OrderStatus,
) -> Order {
    let template = paid_order(state, org, 0, 0, &format!("pi_{}", uuid::Uuid::new_v4())).await;
    let o = Order {
        id: OrderId::new(),
        created_at: when,
        status,
        amount: breakdown.iter().map(|b| b.taxable_amount).sum(),
        tax_amount: breakdown.iter().map(|b| b.amount).sum(),
        tax: crate::domain::order::OrderTax {
            breakdown,
            ..Default::default()
        },
        ..template
    };
    let mut batch = Batch::new();
    batch.put(&o, Expect::Absent).unwrap();
    state.store.commit_durable(&batch).await.unwrap();
    o
}

async fn refund(
    state: &AppState,
    o: &Order,
    when: DateTime<Utc>,
    amount: i64,
    tax: i64,
    status: RefundStatus,
) {
    let r = Refund {
        id: RefundId::new(),
        organization_id: o.organization_id,
        created_at: when,
        modified_at: None,
        status,
        reason: RefundReason::CustomerRequest,
        amount,
        tax_amount: tax,
        currency: o.currency.clone(),
        order_id: o.id,
        subscription_id: None,
        customer_id: o.customer_id,
        revoke_benefits: false,
        comment: None,
        metadata: Default::default(),
        processor_id: None,
        failure: None,
    };
    let mut batch = Batch::new();
    batch.put(&r, Expect::Absent).unwrap();
    state.store.commit_durable(&batch).await.unwrap();
}

fn row(country: &str, rate_ppm: u32, taxable: i64, tax: i64) -> ReportRow {
    ReportRow {
        country: country.into(),
        rate_ppm,
        taxable_amount: taxable,
        tax_amount: tax,
        currency: "USD".into(),
    }
}

#[actix_web::test]
async fn the_oss_return_has_the_quarters_eu_sales_with_refunds_netted() {
    let app = app().await;
    let (org, subject) = seller(&app).await;
    // A French seller's first quarter of 2026.
    let de1 = sale(
        &app,
        org,
        at(2026, 1, 5),
        vec![oss("DE", 190_000, 1000, 190)],
        OrderStatus::Paid,
    )
    .await;
    sale(
        &app,
        org,
        at(2026, 2, 5),
        vec![oss("DE", 190_000, 1000, 190)],
        OrderStatus::Paid,
    )
    .await;
    sale(
        &app,
        org,
        at(2026, 3, 31),
        vec![oss("AT", 200_000, 1000, 200)],
        OrderStatus::Paid,
    )
    .await;
    // A domestic sale, a reverse-charged business, a sale not paid, and the next quarter.
    sale(
        &app,
        org,
        at(2026, 2, 6),
        vec![line(
            "FR",
            200_000,
            1000,
            200,
            TaxabilityReason::StandardRated,
            Regime::Domestic,
        )],
        OrderStatus::Paid,
    )
    .await;
    sale(
        &app,
        org,
        at(2026, 2, 7),
        vec![line(
            "DE",
            0,
            5000,
            0,
            TaxabilityReason::ReverseCharge,
            Regime::None,
        )],
        OrderStatus::Paid,
    )
    .await;
    sale(
        &app,
        org,
        at(2026, 2, 8),
        vec![oss("DE", 190_000, 1000, 190)],
        OrderStatus::Pending,
    )
    .await;
    let april = sale(
        &app,
        org,
        at(2026, 4, 1),
        vec![oss("DE", 190_000, 1000, 190)],
        OrderStatus::Paid,
    )
    .await;
    // Half of a German sale refunded in the quarter; a failed refund; a refund in April of
    // a March sale corrects the second quarter.
    refund(&app, &de1, at(2026, 3, 1), 500, 95, RefundStatus::Succeeded).await;
    refund(&app, &de1, at(2026, 3, 2), 500, 95, RefundStatus::Failed).await;
    refund(
        &app,
        &april,
        at(2026, 4, 2),
        1000,
        190,
        RefundStatus::Succeeded,
    )
    .await;

    let q1 = super::oss(&app, subject, org, 2026, 1).await.unwrap();
    assert_eq!(
        q1,
        vec![row("AT", 200_000, 1000, 200), row("DE", 190_000, 1500, 285)]
    );
    let q2 = super::oss(&app, subject, org, 2026, 2).await.unwrap();
    assert_eq!(q2, vec![row("DE", 190_000, 0, 0)]);

    // The summary keeps every line of the period: the domestic sale and the reverse charge.
    let all = summary(&app, subject, org, at(2026, 1, 1), at(2026, 4, 1))
        .await
        .unwrap();
    assert_eq!(
        all,
        vec![
            row("AT", 200_000, 1000, 200),
            row("DE", 0, 5000, 0),
            row("DE", 190_000, 1500, 285),
            row("FR", 200_000, 1000, 200),
        ]
    );
}

#[actix_web::test]
async fn the_periods_are_checked_and_the_reports_are_the_sellers_own() {
    let app = app().await;
    let (org, subject) = seller(&app).await;
    let (_, stranger) = seller(&app).await;
    let e = super::oss(&app, subject, org, 2026, 5).await.unwrap_err();
    assert!(matches!(e, AppError::Invalid(_)), "{e:?}");
    let e = super::oss(&app, subject, org, 1999, 1).await.unwrap_err();
    assert!(matches!(e, AppError::Invalid(_)), "{e:?}");
    let e = summary(&app, subject, org, at(2026, 2, 1), at(2026, 1, 1))
        .await
        .unwrap_err();
    assert!(matches!(e, AppError::Invalid(_)), "{e:?}");
    let e = super::oss(&app, stranger, org, 2026, 1).await.unwrap_err();
    assert_eq!(e.code(), crate::error::Code::NotFound);
    assert_eq!(
        super::oss(&app, subject, org, 2026, 1).await.unwrap(),
        vec![]
    );
}

#[test]
fn quarters_start_on_their_first_day() {
    let (s, e) = quarter_bounds(2026, 4).unwrap();
    assert_eq!(
        (s.to_rfc3339(), e.to_rfc3339()),
        (
            "2026-10-01T00:00:00+00:00".into(),
            "2027-01-01T00:00:00+00:00".into()
        )
    );
    assert_eq!(current_quarter(at(2026, 11, 29)), (2026, 4));
    assert_eq!(current_quarter(at(2026, 1, 1)), (2026, 1));
}
