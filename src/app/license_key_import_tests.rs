//! The import called with a command, without a server.

use tollgate_actors::license_key::model::ActivationToImport;
use tollgate_actors::license_key::KeyStatus;

use super::*;
use crate::app::catalog::benefits;
use crate::app::testing;
use crate::domain::benefit::{BenefitProperties, LicenseKeyProperties, NewBenefit};
use crate::error::Code;

fn key(value: &str, holder: KeyHolder) -> KeyToImport {
    KeyToImport {
        key: value.into(),
        holder,
        customer_name: None,
        status: KeyStatus::Granted,
        expires_at: None,
        limit_activations: None,
        limit_usage: None,
        usage: 0,
        validations: 0,
        activations: Vec::new(),
    }
}

fn activation(label: &str) -> ActivationToImport {
    ActivationToImport {
        label: label.into(),
        meta: Default::default(),
        conditions: Default::default(),
        created_at: None,
    }
}

async fn key_benefit_of(app: &AppState, subject: Subject) -> BenefitId {
    let benefit = benefits::create(
        app,
        subject,
        NewBenefit {
            organization_id: None,
            description: "Imported".into(),
            properties: BenefitProperties::LicenseKeys(LicenseKeyProperties::default()),
            metadata: Default::default(),
            visibility: Default::default(),
        },
    )
    .await
    .unwrap();
    benefit.id
}

#[actix_web::test]
async fn an_organization_out_of_reach_is_not_found_and_an_unknown_benefit_is_invalid() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let (other, _) = testing::seller(&app).await;
    let cmd = |org| ImportKeys {
        organization_id: org,
        benefit_id: BenefitId::new(),
        keys: vec![key("OLD-1", KeyHolder::Email("a@example.com".into()))],
    };
    let err = import(&app, subject, cmd(other)).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let err = import(&app, subject, cmd(org)).await.unwrap_err();
    let AppError::Invalid(fields) = err else {
        panic!("an invalid command");
    };
    assert_eq!(fields[0].path, field!["benefit_id"]);
}

#[actix_web::test]
async fn every_key_s_store_problems_come_in_key_order_then_a_repeat_changes_nothing() {
    let app = testing::app().await;
    let (org, subject) = testing::seller(&app).await;
    let benefit_id = key_benefit_of(&app, subject).await;
    let mut crowded = key("OLD-2", KeyHolder::Email("b@example.com".into()));
    crowded.limit_activations = Some(Some(1));
    crowded.activations = vec![activation("one"), activation("two")];
    let cmd = ImportKeys {
        organization_id: org,
        benefit_id,
        keys: vec![
            key("OLD-1", KeyHolder::Customer(CustomerId::new())),
            crowded,
        ],
    };
    let err = import(&app, subject, cmd).await.unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    let AppError::Invalid(fields) = err else {
        panic!("an invalid command");
    };
    let paths: Vec<_> = fields.iter().map(|f| f.path.clone()).collect();
    assert_eq!(
        paths,
        vec![
            field!["keys", 0, "customer_id"],
            field!["keys", 1, "activations"]
        ]
    );

    let cmd = ImportKeys {
        organization_id: org,
        benefit_id,
        keys: vec![key("OLD-3", KeyHolder::Email("c@example.com".into()))],
    };
    let first = import(&app, subject, cmd.clone()).await.unwrap();
    assert_eq!((first.created, first.customers_created), (1, 1));
    let again = import(&app, subject, cmd).await.unwrap();
    assert_eq!((again.created, again.unchanged), (0, 1));
    assert_eq!(again.items[0].id, first.items[0].id);
}
