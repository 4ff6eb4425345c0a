//! `/portal/{slug}/subscriptions/{id}/plan`: the buyer moves a subscription to another
//! recurring product of the seller, when the seller lets buyers
//! (`customer_portal_settings.subscription.update_plan`). Each product is shown with what
//! the change charges now and what the next renewal charges (the preview of
//! `crate::app::portal::plan`, the same numbers the change then uses); one button per
//! product confirms. With the setting off the page is not there (404) and a posted form
//! is refused (403); another customer's subscription is a 404 page.

use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;

use super::account::path_id;
use super::{see_other, view, Fail, Frame, PageResult, Seller, Signed};
use crate::app::portal::{self, plan};
use crate::domain::ids::{ProductId, SubscriptionId};
use crate::state::AppState;

/// A product the subscription may move to, as the page shows it.
pub struct PlanRow {
    pub product_id: String,
    pub name: String,
    /// Charged at once, tax included ("$0.00" when the difference waits for the renewal).
    pub now: String,
    /// What the renewal charges, before tax, and when.
    pub renewal: String,
    pub renewal_date: String,
}

#[derive(Template)]
#[template(path = "portal/plan.html")]
struct PlanPage {
    seller: Seller,
    frame: Frame,
    id: String,
    product: String,
    price: String,
    options: Vec<PlanRow>,
    error: Option<String>,
    notice: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Done {
    done: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PlanForm {
    product_id: String,
}

/// The page, or a 404 page when the seller does not let buyers change plans.
async fn plan_page(state: &AppState, s: &Signed, id: SubscriptionId) -> Result<PlanPage, Fail> {
    if !plan::allowed(&s.portal.org) {
        // Another customer's subscription is a 404 too, whatever the setting.
        portal::subscription(state, &s.customer, id).await?;
        return Err(super::not_found().into());
    }
    let (current, options, error) = match plan::options(state, &s.customer, id).await {
        Ok((current, options)) => (current, options, None),
        // A canceled subscription keeps its plan: the page says why.
        Err(e) if e.code() == crate::error::Code::AlreadyCanceledSubscription => (
            portal::subscription(state, &s.customer, id).await?,
            Vec::new(),
            Some(e.messages().join(" ")),
        ),
        Err(e) => return Err(e.into()),
    };
    let i18n = &s.portal.seller.i18n;
    let rows = options
        .iter()
        .map(|o| PlanRow {
            product_id: o.product.id.to_string(),
            name: o.product.name.clone(),
            now: view::money(i18n, o.preview.due_amount, &o.preview.currency),
            renewal: view::money(i18n, o.preview.next_amount, &o.preview.currency),
            renewal_date: view::date(i18n, &o.preview.period_end),
        })
        .collect();
    Ok(PlanPage {
        seller: s.seller(),
        frame: s.frame(),
        id: current.id.to_string(),
        product: current.product_name.clone(),
        price: view::subscription_price(i18n, &current),
        options: rows,
        error,
        notice: None,
    })
}

/// `GET /portal/{slug}/subscriptions/{id}/plan`.
pub async fn page(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let (slug, id) = path.into_inner();
    let s = Signed::of(&state, &req, &slug).await?;
    let r: PageResult = async {
        let id: SubscriptionId = path_id(&id)?;
        let mut page = plan_page(&state, &s, id).await?;
        let q: Done = serde_html_form::from_str(req.query_string()).unwrap_or_default();
        if q.done == "changed" {
            page.notice = Some(s.portal.seller.i18n.t1(
                "portal-plan-changed",
                "product",
                &page.product,
            ));
        }
        s.portal.page(200, &page, Vec::new())
    }
    .await;
    s.portal.branded(r)
}

/// `POST /portal/{slug}/subscriptions/{id}/plan`: `product_id`, the product to move to.
pub async fn change(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> PageResult {
    let (slug, id) = path.into_inner();
    let s = Signed::posted(&state, &req, &slug, &body).await?;
    let r: PageResult = async {
        let id: SubscriptionId = path_id(&id)?;
        let f: PlanForm = serde_html_form::from_bytes(&body).unwrap_or_default();
        let product: Option<ProductId> = f.product_id.trim().parse().ok();
        let answer = match product {
            Some(product) => plan::change_plan(&state, &s.customer, id, product)
                .await
                .map(|_| ()),
            None => Err(crate::error::AppError::invalid(
                crate::field!["product_id"],
                s.portal.seller.i18n.t("portal-choose-plan"),
                f.product_id.clone(),
            )),
        };
        match answer {
            Ok(()) => Ok(see_other(
                &s.seller()
                    .at(&format!("/subscriptions/{id}/plan?done=changed")),
                Vec::new(),
            )),
            Err(e) => match e.code().status() {
                403 if e.code() == crate::error::Code::UpdateSubscriptionPlanNotAllowed => {
                    Err(e.into())
                }
                status @ (402 | 403 | 409 | 410 | 422) => {
                    let mut page = plan_page(&state, &s, id).await?;
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
