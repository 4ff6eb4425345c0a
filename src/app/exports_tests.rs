//! The exports' use cases: every record of the subject's organizations, page after page,
//! newest first, and nothing of another organization.

use crate::app::catalog::customers;
use crate::app::exports;
use crate::app::testing::{app, seller};
use crate::domain::customer::NewCustomer;

fn new_customer(email: &str) -> NewCustomer {
    NewCustomer {
        organization_id: None,
        email: email.into(),
        name: Some(format!("Name of {email}")),
        billing_address: None,
        tax_number: None,
        metadata: Default::default(),
        external_id: None,
    }
}

#[actix_web::test]
async fn a_customer_export_reads_every_page_newest_first_and_only_its_organizations() {
    let app = app().await;
    let (_, subject) = seller(&app).await;
    let (_, other) = seller(&app).await;
    // More than a page, so the cursor goes on past its first read.
    let n = exports::PAGE + 7;
    for i in 0..n {
        app.clock.advance(chrono::Duration::seconds(1));
        customers::create(&app, subject, new_customer(&format!("c{i}@example.com")))
            .await
            .unwrap();
    }
    customers::create(&app, other, new_customer("elsewhere@example.com"))
        .await
        .unwrap();
    let mut export = exports::customers(&app, subject, Vec::new()).await.unwrap();
    let mut emails = Vec::new();
    let mut pages = 0;
    while let Some(rows) = export.next_page(&app).await.unwrap() {
        pages += 1;
        emails.extend(rows.into_iter().map(|r| r.email));
    }
    assert!(pages >= 2, "{pages} pages");
    let expected: Vec<String> = (0..n).rev().map(|i| format!("c{i}@example.com")).collect();
    assert_eq!(emails, expected);

    // An organization the subject does not reach exports nothing.
    let (foreign, _) = seller(&app).await;
    let mut export = exports::customers(&app, subject, vec![foreign])
        .await
        .unwrap();
    assert!(export.next_page(&app).await.unwrap().is_none());
}
