//! `/portal/{slug}/payment-methods`: the signed-in buyer's saved cards (the card each
//! subscription is billed with among them), the default marked; make one the default,
//! remove one (its subscriptions move to another card; never the last card of a live paid
//! subscription: the page says why), and, with the test processor, add one by its token
//! (a plain form, no script).
//! `crate::app::payment_methods` does the work; another customer's card is a 404 page.

use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;

use super::account::path_id;
use super::{see_other, Frame, PageResult, Seller, Signed};
use crate::app::paging::ListParams;
use crate::app::payment_methods;
use crate::domain::ids::PaymentMethodId;
use crate::domain::payment_method::{AddPaymentMethod, PaymentMethod, SetupAnswer};
use crate::payments::ProcessorClient;
use crate::state::AppState;

/// Cards a page lists (a buyer holds few).
const LISTED: ListParams = ListParams {
    page: 1,
    limit: 100,
};

/// One saved card as the page shows it.
pub struct MethodRow {
    pub id: String,
    /// "Visa •••• 4242".
    pub label: String,
    /// "Expires 12/2030", or empty.
    pub expires: String,
    pub is_default: bool,
}

impl MethodRow {
    pub(super) fn new(m: &PaymentMethod, default: Option<PaymentMethodId>) -> MethodRow {
        let d = &m.details;
        let brand = match d.brand.as_deref() {
            Some("visa") => "Visa".to_string(),
            Some("mastercard") => "Mastercard".to_string(),
            Some("amex") => "American Express".to_string(),
            Some(other) if !other.is_empty() => {
                let mut c = other.chars();
                c.next()
                    .map(|f| f.to_uppercase().chain(c).collect())
                    .unwrap_or_default()
            }
            _ => d.kind.replace('_', " "),
        };
        let label = match d.last4.as_deref() {
            Some(l) => format!("{brand} •••• {l}"),
            None => brand,
        };
        let expires = match (d.exp_month, d.exp_year) {
            (Some(m), Some(y)) => format!("Expires {m:02}/{y}"),
            _ => String::new(),
        };
        MethodRow {
            id: m.id.to_string(),
            label,
            expires,
            is_default: default == Some(m.id),
        }
    }
}

#[derive(Template)]
#[template(path = "portal/payment_methods.html")]
struct MethodsPage {
    seller: Seller,
    frame: Frame,
    methods: Vec<MethodRow>,
    /// The token form (the test processor's; Stripe needs its card field).
    can_add: bool,
    error: Option<String>,
    notice: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Done {
    done: String,
}

async fn methods_page(state: &AppState, s: &Signed) -> Result<MethodsPage, super::Fail> {
    let (methods, _) = payment_methods::list(state, &s.customer, LISTED).await?;
    let default = s.customer.default_payment_method_id;
    Ok(MethodsPage {
        seller: s.seller(),
        frame: s.frame(),
        methods: methods.iter().map(|m| MethodRow::new(m, default)).collect(),
        can_add: matches!(state.processor.client(), ProcessorClient::Test),
        error: None,
        notice: None,
    })
}

/// `GET /portal/{slug}/payment-methods`.
pub async fn page(
    state: web::Data<AppState>,
    req: HttpRequest,
    slug: web::Path<String>,
    q: web::Query<Done>,
) -> PageResult {
    let s = Signed::of(&state, &req, &slug).await?;
    let r: PageResult = async {
        let mut page = methods_page(&state, &s).await?;
        page.notice = match q.done.as_str() {
            "added" => Some("Card added.".into()),
            "default" => Some("Future charges use this card first.".into()),
            "removed" => Some("Card removed.".into()),
            _ => None,
        };
        s.portal.page(200, &page, Vec::new())
    }
    .await;
    s.portal.branded(r)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MethodForm {
    action: String,
    token: String,
    set_default: String,
    method_id: String,
}

/// `POST /portal/{slug}/payment-methods`: `action` = `add` (`token`, `set_default`),
/// `default` or `remove` (`method_id`).
pub async fn change(
    state: web::Data<AppState>,
    req: HttpRequest,
    slug: web::Path<String>,
    body: web::Bytes,
) -> PageResult {
    let s = Signed::posted(&state, &req, &slug, &body).await?;
    let r: PageResult = async {
        let f: MethodForm = serde_html_form::from_bytes(&body).unwrap_or_default();
        let c = &s.customer;
        let done = match f.action.as_str() {
            "add" if matches!(state.processor.client(), ProcessorClient::Test) => {
                let token = f.token.trim();
                if token.is_empty() {
                    let mut page = methods_page(&state, &s).await?;
                    page.error = Some("Enter the card's token.".into());
                    return s.portal.page(422, &page, Vec::new());
                }
                let command = AddPaymentMethod {
                    token: token.to_string(),
                    set_default: !f.set_default.is_empty(),
                    return_url: format!(
                        "{}{}",
                        state.public_url,
                        s.seller().at("/payment-methods")
                    ),
                };
                payment_methods::add(&state, c, command)
                    .await
                    .map(|a| match a {
                        SetupAnswer::Saved(_) => "added",
                        // The test processor never asks for an authentication.
                        SetupAnswer::RequiresAction { .. } => "",
                    })
            }
            "default" => {
                let id: PaymentMethodId = path_id(&f.method_id)?;
                payment_methods::set_default(&state, c, id)
                    .await
                    .map(|_| "default")
            }
            "remove" => {
                let id: PaymentMethodId = path_id(&f.method_id)?;
                payment_methods::remove(&state, c, id)
                    .await
                    .map(|()| "removed")
            }
            _ => {
                let mut page = methods_page(&state, &s).await?;
                page.error = Some("Choose add, make default or remove.".into());
                return s.portal.page(422, &page, Vec::new());
            }
        };
        match done {
            Ok(done) => Ok(see_other(
                &s.seller().at(&format!("/payment-methods?done={done}")),
                Vec::new(),
            )),
            Err(e) => match e.code().status() {
                status @ (400 | 403 | 409 | 422) => {
                    let mut page = methods_page(&state, &s).await?;
                    page.error = Some(e.messages().join(" "));
                    s.portal.page(status, &page, Vec::new())
                }
                _ => Err(e.into()),
            },
        }
    }
    .await;
    s.portal.branded(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{CustomerId, OrganizationId};
    use crate::domain::payment_method::MethodDetails;

    #[test]
    fn a_card_reads_as_its_brand_digits_and_expiry() {
        let m = PaymentMethod::new(
            OrganizationId::new(),
            CustomerId::new(),
            "tok_visa".into(),
            crate::payments::test_method_details("tok_visa"),
            chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
        );
        let row = MethodRow::new(&m, Some(m.id));
        assert_eq!(row.label, "Visa •••• 4242");
        assert_eq!(row.expires, "Expires 12/2030");
        assert!(row.is_default);
        assert!(!MethodRow::new(&m, None).is_default);
        let other = PaymentMethod {
            details: MethodDetails {
                kind: "sepa_debit".into(),
                brand: None,
                last4: None,
                exp_month: None,
                exp_year: None,
                wallet: None,
            },
            ..m
        };
        let row = MethodRow::new(&other, None);
        assert_eq!(
            (row.label.as_str(), row.expires.as_str()),
            ("sepa debit", "")
        );
    }
}
