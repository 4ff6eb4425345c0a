//! The benefit and custom-field use cases called with commands, without a server.

use super::*;
use crate::app::catalog::custom_fields;
use crate::app::testing;
use crate::domain::benefit::LicenseKeyProperties;
use crate::domain::custom_field::{
    CustomFieldChange, CustomFieldProperties, FormProperties, NewCustomField,
};
use crate::error::{Code, Step};

fn license_keys(grace_days: u32) -> NewBenefit {
    NewBenefit {
        organization_id: None,
        description: "Pro license".into(),
        properties: BenefitProperties::LicenseKeys(LicenseKeyProperties {
            grace_days,
            ..Default::default()
        }),
        metadata: Default::default(),
        visibility: Default::default(),
    }
}

#[actix_web::test]
async fn a_change_keeps_the_grace_it_does_not_name_and_never_changes_the_type() {
    let app = testing::app().await;
    let (_, subject) = testing::seller(&app).await;
    let benefit = create(&app, subject, license_keys(7)).await.unwrap();

    let change = BenefitChange {
        kind: BenefitType::LicenseKeys,
        description: Some("Pro license, renamed".into()),
        properties: Some(BenefitProperties::LicenseKeys(
            LicenseKeyProperties::default(),
        )),
        rotation_given: false,
        grace_given: false,
        quantity_given: false,
        metadata: None,
        visibility: None,
    };
    let changed = update(&app, subject, benefit.id, change.clone())
        .await
        .unwrap();
    assert_eq!(changed.description, "Pro license, renamed");
    let BenefitProperties::LicenseKeys(keys) = &changed.properties else {
        panic!("a license-key benefit");
    };
    assert_eq!(keys.grace_days, 7, "not named: kept");

    let other_type = BenefitChange {
        kind: BenefitType::Custom,
        ..change
    };
    let err = update(&app, subject, benefit.id, other_type.clone())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::BadRequest);
    let err = changeable(&app, subject, benefit.id, other_type.kind)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::BadRequest);

    let (_, stranger) = testing::seller(&app).await;
    let err = get(&app, stranger, benefit.id).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
}

fn text_field(slug: &str) -> NewCustomField {
    NewCustomField {
        slug: slug.into(),
        name: "Company".into(),
        metadata: Default::default(),
        properties: CustomFieldProperties::Text {
            form: FormProperties::default(),
            textarea: None,
            min_length: None,
            max_length: None,
        },
        organization_id: None,
    }
}

#[actix_web::test]
async fn a_slug_already_held_is_an_invalid_slug() {
    let app = testing::app().await;
    let (_, subject) = testing::seller(&app).await;
    custom_fields::create(&app, subject, text_field("company"))
        .await
        .unwrap();
    let err = custom_fields::create(&app, subject, text_field("company"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Invalid);
    let AppError::Invalid(fields) = err else {
        panic!("an invalid command");
    };
    assert_eq!(fields[0].path, vec![Step::Field("slug".into())]);

    let other = custom_fields::create(&app, subject, text_field("vat"))
        .await
        .unwrap();
    let change = CustomFieldChange {
        kind: other.kind(),
        slug: Some("company".into()),
        name: None,
        metadata: None,
        properties: None,
    };
    let err = custom_fields::update(&app, subject, other.id, change)
        .await
        .unwrap_err();
    let AppError::Invalid(fields) = err else {
        panic!("an invalid command");
    };
    assert_eq!(fields[0].path, vec![Step::Field("slug".into())]);
    assert_eq!(fields[0].msg, "Custom field with this slug already exists.");
}

#[actix_web::test]
async fn only_a_feature_flag_keeps_a_visibility_other_than_public() {
    let app = testing::app().await;
    let (_, subject) = testing::seller(&app).await;
    let flag = create(
        &app,
        subject,
        NewBenefit {
            organization_id: None,
            description: "Beta features".into(),
            properties: BenefitProperties::FeatureFlag,
            metadata: Default::default(),
            visibility: Visibility::Private,
        },
    )
    .await
    .unwrap();
    assert_eq!(flag.visibility, Visibility::Private);
    assert_eq!(flag.kind(), BenefitType::FeatureFlag);
    // A command for another type that names one (the adapter refuses it) stays public.
    let keys = create(
        &app,
        subject,
        NewBenefit {
            visibility: Visibility::Draft,
            ..license_keys(3)
        },
    )
    .await
    .unwrap();
    assert_eq!(keys.visibility, Visibility::Public);

    let change = |kind, visibility| BenefitChange {
        kind,
        description: None,
        properties: None,
        rotation_given: false,
        grace_given: false,
        quantity_given: false,
        metadata: None,
        visibility: Some(visibility),
    };
    let changed = update(
        &app,
        subject,
        flag.id,
        change(BenefitType::FeatureFlag, Visibility::Draft),
    )
    .await
    .unwrap();
    assert_eq!(changed.visibility, Visibility::Draft);
    let kept = update(
        &app,
        subject,
        keys.id,
        change(BenefitType::LicenseKeys, Visibility::Private),
    )
    .await
    .unwrap();
    assert_eq!(kept.visibility, Visibility::Public);
    let err = update(
        &app,
        subject,
        flag.id,
        change(BenefitType::Custom, Visibility::Public),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), Code::BadRequest);
}
