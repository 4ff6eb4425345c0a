//! `/portal/{slug}/payment-methods`: the signed-in buyer's saved cards (the card each
//! subscription is billed with among them), the default marked; make one the default,
//! remove one (its subscriptions move to another card; never the last card of a live paid
//! subscription: the page says why), and add one: with Stripe, in Stripe's card Element
//! (`payments.js` turns it into a payment method the form posts; a card whose bank asks
//! the buyer to authenticate it (3-D Secure) comes back with Stripe.js's dialog, then the
//! confirm form); with the test processor, by its token (a plain form, no script).
//! `crate::app::payment_methods` does the work; another customer's card is a 404 page.

use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;

use super::account::path_id;
use super::{see_other, Frame, PageResult, Seller, Signed};
use crate::app::paging::ListParams;
use crate::app::payment_methods;
use crate::domain::ids::PaymentMethodId;
use crate::domain::payment_method::{
    AddPaymentMethod, ConfirmPaymentMethod, PaymentMethod, SetupAnswer,
};
use crate::error::AppError;
use crate::i18n::I18n;
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
    pub(super) fn new(
        i18n: &I18n,
        m: &PaymentMethod,
        default: Option<PaymentMethodId>,
    ) -> MethodRow {
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
            _ => match d.kind.as_str() {
                "sepa_debit" => i18n.t("portal-sepa-debit"),
                "ideal" => "iDEAL".to_string(),
                "bancontact" => "Bancontact".to_string(),
                "us_bank_account" => i18n.t("portal-us-bank-account"),
                other => other.replace('_', " "),
            },
        };
        let label = match d.last4.as_deref() {
            Some(l) => format!("{brand} •••• {l}"),
            None => brand,
        };
        let expires = match (d.exp_month, d.exp_year) {
            (Some(m), Some(y)) => i18n.t1("portal-card-expires", "date", format!("{m:02}/{y}")),
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
    /// Stripe's card Element (with Stripe); the token field otherwise (the test processor).
    stripe: Option<CardStripe>,
    script: &'static str,
    error: Option<String>,
    notice: Option<String>,
}

/// What the Stripe card Element needs, and a setup waiting for the buyer (3-D Secure).
struct CardStripe {
    publishable_key: String,
    js_url: String,
    /// The setup's client secret while the buyer authenticates the card.
    client_secret: Option<String>,
    /// The setup's id (`seti_…`), with `client_secret`.
    setup_intent: String,
    set_default: bool,
}

impl MethodsPage {
    /// The page answered, with Stripe's sources when it carries the card Element.
    fn answer(&self, state: &AppState, s: &Signed, status: u16) -> PageResult {
        let response = s.portal.page(status, self, Vec::new())?;
        Ok(if self.stripe.is_some() {
            super::with_stripe_sources(state, response)
        } else {
            response
        })
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Done {
    done: String,
}

async fn methods_page(state: &AppState, s: &Signed) -> Result<MethodsPage, super::Fail> {
    let (methods, _) = payment_methods::list(state, &s.customer, LISTED).await?;
    let default = s.customer.default_payment_method_id;
    let stripe = match state.processor.client() {
        ProcessorClient::Test => None,
        ProcessorClient::Stripe {
            publishable_key,
            js_url,
            ..
        } => Some(CardStripe {
            publishable_key,
            js_url,
            client_secret: None,
            setup_intent: String::new(),
            set_default: true,
        }),
    };
    Ok(MethodsPage {
        seller: s.seller(),
        frame: s.frame(),
        methods: methods
            .iter()
            .map(|m| MethodRow::new(&s.portal.seller.i18n, m, default))
            .collect(),
        stripe,
        script: super::account::PAY_SCRIPT_PATH,
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
            "added" => Some(s.portal.seller.i18n.t("portal-card-added")),
            "default" => Some(s.portal.seller.i18n.t("portal-card-default")),
            "removed" => Some(s.portal.seller.i18n.t("portal-card-removed")),
            _ => None,
        };
        page.answer(&state, &s, 200)
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
    setup_intent_id: String,
}

/// The page again, saying `error`, answered with `status`.
async fn refused(state: &AppState, s: &Signed, status: u16, error: String) -> PageResult {
    let mut page = methods_page(state, s).await?;
    page.error = Some(error);
    page.answer(state, s, status)
}

/// `POST /portal/{slug}/payment-methods`: `action` = `add` (`token`: the test processor's
/// token or the payment method Stripe.js made; `set_default`), `confirm` (`setup_intent_id`,
/// `set_default`: after the buyer authenticated the card), `default` or `remove`
/// (`method_id`).
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
            "add" => {
                let token = f.token.trim();
                if token.is_empty() {
                    let msg = if matches!(state.processor.client(), ProcessorClient::Test) {
                        s.portal.seller.i18n.t("portal-enter-token")
                    } else {
                        s.portal.seller.i18n.t("portal-enter-card")
                    };
                    return refused(&state, &s, 422, msg).await;
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
                let answer = payment_methods::add(&state, c, command).await;
                settled(&state, &s, answer, !f.set_default.is_empty()).await
            }
            "confirm" => {
                let command = ConfirmPaymentMethod {
                    setup_intent_id: f.setup_intent_id.trim().to_string(),
                    set_default: !f.set_default.is_empty(),
                };
                let answer = payment_methods::confirm(&state, c, command).await;
                settled(&state, &s, answer, !f.set_default.is_empty()).await
            }
            "default" => {
                let id: PaymentMethodId = path_id(&f.method_id)?;
                Ok(payment_methods::set_default(&state, c, id)
                    .await
                    .map(|_| "default"))
            }
            "remove" => {
                let id: PaymentMethodId = path_id(&f.method_id)?;
                Ok(payment_methods::remove(&state, c, id)
                    .await
                    .map(|()| "removed"))
            }
            _ => {
                return refused(
                    &state,
                    &s,
                    422,
                    s.portal.seller.i18n.t("portal-choose-card-action"),
                )
                .await;
            }
        };
        // A card to authenticate answered the page with its confirm step.
        let done = match done {
            Ok(done) => done,
            Err(page) => return page,
        };
        match done {
            Ok(done) => Ok(see_other(
                &s.seller().at(&format!("/payment-methods?done={done}")),
                Vec::new(),
            )),
            Err(e) => match e.code().status() {
                status @ (400 | 403 | 409 | 422) => {
                    refused(&state, &s, status, e.messages().join(" ")).await
                }
                _ => Err(e.into()),
            },
        }
    }
    .await;
    s.portal.branded(r)
}

/// What an add or a confirm did: `Ok(Ok("added"))` once the card is saved; a card to
/// authenticate (3-D Secure) is the page with the confirm step (`Err`, the page answered).
async fn settled(
    state: &AppState,
    s: &Signed,
    answer: Result<SetupAnswer, AppError>,
    set_default: bool,
) -> Result<Result<&'static str, AppError>, PageResult> {
    match answer {
        Ok(SetupAnswer::Saved(_)) => Ok(Ok("added")),
        Ok(SetupAnswer::RequiresAction { client_secret }) => {
            let page = async {
                let mut page = methods_page(state, s).await?;
                // `seti_…_secret_…`: the setup's id is the secret's first part.
                let id = client_secret
                    .split("_secret_")
                    .next()
                    .unwrap_or_default()
                    .to_string();
                if let Some(st) = page.stripe.as_mut() {
                    st.client_secret = Some(client_secret);
                    st.setup_intent = id;
                    st.set_default = set_default;
                }
                page.notice = Some(s.portal.seller.i18n.t("portal-bank-confirm-card"));
                page.answer(state, s, 200)
            }
            .await;
            Err(page)
        }
        Err(e) => Ok(Err(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{CustomerId, OrganizationId};
    use crate::domain::payment_method::MethodDetails;

    #[test]
    fn a_card_reads_as_its_brand_digits_and_expiry() {
        let en = I18n::new(crate::domain::locale::Lang::En);
        let m = PaymentMethod::new(
            OrganizationId::new(),
            CustomerId::new(),
            "tok_visa".into(),
            crate::payments::test_method_details("tok_visa"),
            chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
        );
        let row = MethodRow::new(&en, &m, Some(m.id));
        assert_eq!(row.label, "Visa •••• 4242");
        assert_eq!(row.expires, "Expires 12/2030");
        assert!(row.is_default);
        assert!(!MethodRow::new(&en, &m, None).is_default);
        let other = PaymentMethod {
            details: MethodDetails {
                kind: "sepa_debit".into(),
                brand: None,
                last4: Some("3201".into()),
                exp_month: None,
                exp_year: None,
                wallet: None,
            },
            ..m
        };
        let row = MethodRow::new(&en, &other, None);
        assert_eq!(
            (row.label.as_str(), row.expires.as_str()),
            ("SEPA Direct Debit •••• 3201", "")
        );
        let mut unknown = other.clone();
        unknown.details.kind = "revolut_pay".into();
        unknown.details.last4 = None;
        assert_eq!(MethodRow::new(&en, &unknown, None).label, "revolut pay");
    }
}
