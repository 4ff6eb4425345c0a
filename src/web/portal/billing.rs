//! `/portal/{slug}/account`: the signed-in buyer's billing details (name, address, tax
//! id: `crate::app::portal::billing`) and e-mail address (a code sent to the new address,
//! typed back on this page: `crate::app::portal::email_change`). One page, three forms
//! (`action` = `details`, `email`, `code`), CSRF-checked like every portal form; a form's
//! problems show next to it (422, 401 for a wrong code, 429 past the sign-in code's rate
//! limits). A verified change ends every session of the buyer and opens a new one (its
//! cookie set here).

use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;

use super::{
    retry_text, see_other, session_cookie, with_retry_after, Frame, PageResult, Seller, Signed,
};
use crate::api::portal_update::PortalCustomerUpdate;
use crate::app::portal::{billing, email_change};
use crate::domain::customer::{Address, AddressIssue, Customer};
use crate::domain::portal_link::EmailChange;
use crate::error::Code;
use crate::i18n::I18n;
use crate::state::AppState;

#[derive(Template)]
#[template(path = "portal/account.html")]
struct AccountPage {
    seller: Seller,
    frame: Frame,
    email: String,
    billing_name: String,
    line1: String,
    line2: String,
    postal_code: String,
    city: String,
    region: String,
    country: String,
    tax_id: String,
    /// The address a code was sent to (the code form shows).
    pending_email: String,
    error: Option<String>,
    email_error: Option<String>,
    notice: Option<String>,
}

fn text(v: &Option<String>) -> String {
    v.clone().unwrap_or_default()
}

impl AccountPage {
    fn new(s: &Signed, c: &Customer) -> AccountPage {
        let a = c.billing_address.as_ref();
        AccountPage {
            seller: s.seller(),
            frame: s.portal.frame(Some(c.email.clone())),
            email: c.email.clone(),
            billing_name: c
                .billing_name
                .clone()
                .or(c.name.clone())
                .unwrap_or_default(),
            line1: a.map(|a| text(&a.line1)).unwrap_or_default(),
            line2: a.map(|a| text(&a.line2)).unwrap_or_default(),
            postal_code: a.map(|a| text(&a.postal_code)).unwrap_or_default(),
            city: a.map(|a| text(&a.city)).unwrap_or_default(),
            region: a.map(|a| text(&a.state)).unwrap_or_default(),
            country: a.map(|a| a.country.clone()).unwrap_or_default(),
            tax_id: c
                .tax_id
                .as_ref()
                .map(|t| t.value.clone())
                .unwrap_or_default(),
            pending_email: String::new(),
            error: None,
            email_error: None,
            notice: None,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Done {
    done: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AccountForm {
    action: String,
    billing_name: String,
    line1: String,
    line2: String,
    postal_code: String,
    city: String,
    region: String,
    country: String,
    tax_id: String,
    email: String,
    code: String,
}

fn some(s: &str) -> Option<&str> {
    Some(s.trim()).filter(|s| !s.is_empty())
}

/// Whether `email` reads as an address (the API's own check).
fn is_email(email: &str) -> bool {
    let mut v = crate::validate::Validator::new();
    v.email(crate::loc!["body", "email"], email)
}

/// `GET /portal/{slug}/account`.
pub async fn page(
    state: web::Data<AppState>,
    req: HttpRequest,
    slug: web::Path<String>,
) -> PageResult {
    let s = Signed::of(&state, &req, &slug).await?;
    let r: PageResult = async {
        let mut page = AccountPage::new(&s, &s.customer);
        let q: Done = serde_html_form::from_str(req.query_string()).unwrap_or_default();
        page.notice = match q.done.as_str() {
            "details" => Some(s.portal.seller.i18n.t("portal-details-saved")),
            "email" => Some(s.portal.seller.i18n.t1(
                "portal-email-now",
                "email",
                &s.customer.email,
            )),
            _ => None,
        };
        s.portal.page(200, &page, Vec::new())
    }
    .await;
    s.portal.branded(r)
}

/// The page with the form's own values and `error` beside the details form.
fn details_again(s: &Signed, f: &AccountForm, error: String) -> AccountPage {
    let mut page = AccountPage::new(s, &s.customer);
    page.billing_name = f.billing_name.trim().to_string();
    page.line1 = f.line1.trim().to_string();
    page.line2 = f.line2.trim().to_string();
    page.postal_code = f.postal_code.trim().to_string();
    page.city = f.city.trim().to_string();
    page.region = f.region.trim().to_string();
    page.country = f.country.trim().to_string();
    page.tax_id = f.tax_id.trim().to_string();
    page.error = Some(error);
    page
}

/// The details form as a change: every field given is set (a blank name is left as it
/// is; a blank tax id clears it; the address needs a country once any line is given).
fn details_change(i18n: &I18n, f: &AccountForm) -> Result<PortalCustomerUpdate, String> {
    let any_line = [&f.line1, &f.line2, &f.postal_code, &f.city, &f.region]
        .iter()
        .any(|l| !l.trim().is_empty());
    let billing_address = match (some(&f.country), any_line) {
        (None, false) => None,
        (None, true) => return Err(i18n.t("portal-choose-country")),
        (Some(country), _) => Some(
            Address::new(
                some(&f.line1),
                some(&f.line2),
                some(&f.postal_code),
                some(&f.city),
                some(&f.region),
                country,
            )
            .map_err(|e| match e {
                AddressIssue::UnknownCountry => i18n.t("portal-unknown-country"),
                AddressIssue::InvalidUsState => i18n.t("portal-invalid-us-state"),
                AddressIssue::InvalidCaSubdivision => i18n.t("portal-invalid-ca-subdivision"),
            })?,
        ),
    };
    Ok(PortalCustomerUpdate {
        billing_name: some(&f.billing_name).map(str::to_string),
        billing_address,
        tax_id: Some(some(&f.tax_id).map(str::to_string)),
        default_payment_method_id: None,
    })
}

/// `POST /portal/{slug}/account`: `action` = `details` (the billing details), `email` (a
/// code to the new address) or `code` (the code typed back).
pub async fn change(
    state: web::Data<AppState>,
    req: HttpRequest,
    slug: web::Path<String>,
    body: web::Bytes,
) -> PageResult {
    let s = Signed::posted(&state, &req, &slug, &body).await?;
    let r: PageResult = async {
        let f: AccountForm = serde_html_form::from_bytes(&body).unwrap_or_default();
        let ip = crate::client_ip::client_ip(&state.trusted_proxies, &req);
        match f.action.as_str() {
            "details" => {
                let change = match details_change(&s.portal.seller.i18n, &f) {
                    Ok(c) => c,
                    Err(e) => return s.portal.page(422, &details_again(&s, &f, e), Vec::new()),
                };
                match billing::update_me(&state, &s.customer, change).await {
                    Ok(_) => Ok(see_other(
                        &s.seller().at("/account?done=details"),
                        Vec::new(),
                    )),
                    Err(e) if e.code() == Code::Invalid => {
                        let page = details_again(&s, &f, e.messages().join(" "));
                        s.portal.page(422, &page, Vec::new())
                    }
                    Err(e) => Err(e.into()),
                }
            }
            "email" => {
                let email = crate::api::customer::normalize_email_input(&f.email);
                let mut page = AccountPage::new(&s, &s.customer);
                if !is_email(&email) {
                    page.email_error = Some(s.portal.seller.i18n.t("portal-enter-new-email"));
                    return s.portal.page(422, &page, Vec::new());
                }
                if let Err(denied) = state
                    .limits
                    .portal_code(ip, &s.portal.org.id.uuid(), &email)
                {
                    page.email_error = Some(retry_text(&s.portal.seller.i18n, &denied));
                    return Ok(with_retry_after(
                        s.portal.page(429, &page, Vec::new())?,
                        &denied,
                    ));
                }
                match email_change::request(&state, &s.customer, &email).await {
                    Ok(()) => {
                        page.pending_email = email.clone();
                        page.notice = Some(s.portal.seller.i18n.t2(
                            "portal-email-code-sent",
                            "email",
                            &email,
                            "minutes",
                            EmailChange::TTL.num_minutes(),
                        ));
                        s.portal.page(200, &page, Vec::new())
                    }
                    Err(e) if e.code() == Code::Invalid => {
                        page.email_error = Some(e.messages().join(" "));
                        s.portal.page(422, &page, Vec::new())
                    }
                    Err(e) => Err(e.into()),
                }
            }
            "code" => {
                let mut page = AccountPage::new(&s, &s.customer);
                page.pending_email = f.email.trim().to_string();
                if f.code.trim().is_empty() {
                    page.email_error = Some(s.portal.seller.i18n.t("portal-enter-code"));
                    return s.portal.page(422, &page, Vec::new());
                }
                if let Err(denied) = state.limits.portal_sign_in(ip) {
                    page.email_error = Some(retry_text(&s.portal.seller.i18n, &denied));
                    return Ok(with_retry_after(
                        s.portal.page(429, &page, Vec::new())?,
                        &denied,
                    ));
                }
                // Only a code of this buyer's: another's is as wrong as a made-up one.
                match email_change::verify(&state, &f.code, Some(s.customer.id)).await {
                    Ok((opened, _)) => {
                        let c = session_cookie(&state, opened.token, opened.session.expires_at);
                        Ok(see_other(&s.seller().at("/account?done=email"), vec![c]))
                    }
                    Err(e) if e.code() == Code::InvalidCustomerEmailUpdate => {
                        page.email_error = Some(s.portal.seller.i18n.t("portal-wrong-code"));
                        s.portal.page(401, &page, Vec::new())
                    }
                    Err(e) if e.code() == Code::Invalid => {
                        page.pending_email = String::new();
                        page.email_error = Some(e.messages().join(" "));
                        s.portal.page(422, &page, Vec::new())
                    }
                    Err(e) => Err(e.into()),
                }
            }
            _ => {
                let mut page = AccountPage::new(&s, &s.customer);
                page.error = Some(s.portal.seller.i18n.t("portal-choose-change"));
                s.portal.page(422, &page, Vec::new())
            }
        }
    }
    .await;
    s.portal.branded(r)
}
