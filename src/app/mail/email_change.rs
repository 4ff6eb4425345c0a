//! The two messages of a buyer's e-mail change (Polar's
//! `customer_email_update_verification` and `customer_email_changed_notification`): the
//! code, to the new address, and the notice, to the old one once the change is made. Both
//! are pending messages for the caller to write in the transaction that makes the
//! change (`crate::app::portal::email_change`).

use super::{brand, message, render};
use crate::domain::customer::Customer;
use crate::domain::mail::{MailKind, MailMessage};
use crate::domain::portal_link::EmailChange;
use crate::error::AppError;
use crate::state::AppState;

/// The code that confirms `customer`'s change to `new_email`, sent to `new_email`.
pub async fn email_change_code(
    state: &AppState,
    customer: &Customer,
    new_email: &str,
    code: &str,
    link: String,
) -> Result<MailMessage, AppError> {
    let (brand, org) = brand(state, customer.organization_id).await?;
    let i18n = super::lang_of(state, None, &org).await;
    let minutes = EmailChange::TTL.num_minutes();
    let mut notice = render::Notice::sign_in_code(i18n, &brand.name, code, minutes, link);
    notice.brand = brand.clone();
    notice.subject = i18n.t("email-change-subject");
    notice.heading = i18n.t("email-change-heading");
    notice.paragraphs = vec![i18n.t2(
        "email-change-text",
        "email",
        new_email,
        "seller",
        &brand.name,
    )];
    notice.paragraphs_after = vec![
        i18n.t1("code-expires", "minutes", minutes),
        i18n.t("email-change-ignore"),
    ];
    notice.link_label = i18n.t("open-portal");
    let mut m = message(
        uuid::Uuid::new_v4(),
        &brand,
        MailKind::EmailChangeCode,
        new_email,
        notice.render()?,
        state.now(),
    );
    m.organization_id = customer.organization_id;
    m.customer_id = Some(customer.id);
    Ok(m)
}

/// The notice to `customer`'s address (the old one) that it changed to `new_email`.
pub async fn email_changed_notice(
    state: &AppState,
    customer: &Customer,
    new_email: &str,
) -> Result<MailMessage, AppError> {
    let (brand, organization) = brand(state, customer.organization_id).await?;
    let i18n = super::lang_of(state, None, &organization).await;
    let link = crate::app::portal::sign_in::sign_in_url(state, &organization.slug);
    let mut notice = render::Notice::sign_in_code(i18n, &brand.name, "", 0, link);
    notice.brand = brand.clone();
    notice.code = None;
    notice.subject = i18n.t("email-changed-subject");
    notice.heading = i18n.t("email-changed-heading");
    // Without a code, the paragraphs after it are not shown: all of them go before.
    notice.paragraphs_after = Vec::new();
    notice.paragraphs = vec![
        i18n.t2(
            "email-changed-text",
            "seller",
            &brand.name,
            "email",
            new_email,
        ),
        match &brand.email {
            Some(support) => i18n.t2(
                "email-changed-contact-at",
                "seller",
                &brand.name,
                "support",
                support,
            ),
            None => i18n.t1("email-changed-contact", "seller", &brand.name),
        },
    ];
    notice.link_label = i18n.t("open-portal");
    let mut m = message(
        uuid::Uuid::new_v4(),
        &brand,
        MailKind::EmailChanged,
        &customer.email,
        notice.render()?,
        state.now(),
    );
    m.organization_id = customer.organization_id;
    m.customer_id = Some(customer.id);
    Ok(m)
}
