use super::*;
use crate::app::testing::{app, paid_order, seller};

#[actix_web::test]
async fn an_order_without_an_invoice_shows_none() {
    let app = app().await;
    let (org, _) = seller(&app).await;
    let o = paid_order(&app, org, 1000, 0, "pi_1").await;
    assert_eq!(invoice_if_issued(&app, &o).await.unwrap(), None);
}

#[test]
fn only_the_missing_document_is_none() {
    let missing = AppError::new(Code::InvoiceDoesNotExist, "none");
    assert_eq!(
        unless(Code::InvoiceDoesNotExist, Err(missing)).unwrap(),
        None
    );
    assert_eq!(
        unless(Code::InvoiceDoesNotExist, Ok("u".into())).unwrap(),
        Some("u".to_string())
    );
    // Another refusal (a credit note's code where an invoice's is awaited, a storage
    // failure) stays the page's failure.
    let other = AppError::new(Code::CreditNoteDoesNotExist, "none");
    let e = unless(Code::InvoiceDoesNotExist, Err(other)).unwrap_err();
    assert_eq!(e.code(), Code::CreditNoteDoesNotExist);
    let e = unless(
        Code::CreditNoteDoesNotExist,
        Err(AppError::internal("disk")),
    )
    .unwrap_err();
    assert_eq!(e.code(), Code::Internal);
}
