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
    let (brand, _) = brand(state, customer.organization_id).await?;
    let minutes = EmailChange::TTL.num_minutes();
    let mut notice = render::Notice::sign_in_code(&brand.name, code, minutes, link);
    notice.brand = brand.clone();
    notice.subject = "Verify your new email address".into();
    notice.heading = "Confirm your new e-mail address".into();
    notice.paragraphs = vec![format!(
        "Someone asked to use {new_email} for their purchases from {}. Type this code in the customer portal to confirm it:",
        brand.name
    )];
    notice.paragraphs_after = vec![
        format!("This code expires in {minutes} minutes, and works once."),
        "If you did not ask for it, you can ignore this e-mail: nothing changes without the code."
            .into(),
    ];
    notice.link_label = "Open the customer portal";
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
    let link = crate::app::portal::sign_in::sign_in_url(state, &organization.slug);
    let mut notice = render::Notice::sign_in_code(&brand.name, "", 0, link);
    notice.brand = brand.clone();
    notice.code = None;
    notice.subject = "Your email address has been changed".into();
    notice.heading = "Your e-mail address was changed".into();
    // Without a code, the paragraphs after it are not shown: all of them go before.
    notice.paragraphs_after = Vec::new();
    notice.paragraphs = vec![
        format!(
            "The e-mail address of your purchases from {} is now {new_email}. Receipts and sign-in codes go there from now on.",
            brand.name
        ),
        match &brand.email {
        Some(support) => format!(
            "If you did not make this change, contact {} at {support} right away.",
            brand.name
        ),
            None => format!(
                "If you did not make this change, contact {} right away.",
                brand.name
            ),
        },
    ];
    notice.link_label = "Open the customer portal";
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
