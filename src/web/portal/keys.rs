//! A license key of the signed-in buyer: the key in full (copy), status, usage,
//! validations, expiry; its activations, each with **Deactivate** when the seller lets
//! customers manage them (`activations.enable_customer_admin`), and **Move to a new device**
//! when every activation is taken and the seller allows replacement
//! (`activations.allow_replacement`; see [`move_activation`]); **Rotate** behind a
//! confirmation step, when the seller lets customers rotate (`allow_customer_rotation`).
//! Another customer's key or activation is a 404 page.

use actix_web::{web, HttpRequest, ResponseError};
use askama::Template;
use serde::Deserialize;
use tollgate_actors::license_key::{KeyStatus, LicenseKey};

use super::account::{benefit_names, path_id};
use super::view::{self, Status};
use super::{see_other, Fail, Frame, PageResult, Seller, Signed};
use crate::app::portal;
use crate::domain::ids::{ActivationId, LicenseKeyId};
use crate::state::AppState;

/// An activation as the page lists it.
pub struct ActivationRow {
    pub id: String,
    pub label: String,
    pub created: String,
    /// The JSON the program sent (`meta`, `conditions`), when not empty.
    pub meta: Option<String>,
    pub conditions: Option<String>,
}

#[derive(Template)]
#[template(path = "portal/license_key.html")]
struct KeyPage {
    seller: Seller,
    frame: Frame,
    id: String,
    benefit: String,
    key: String,
    status: Status,
    usage: String,
    validations: String,
    last_validated: String,
    expires: String,
    /// "1 of 2", "3 (no limit)"; `None` when the key takes no activations.
    activations_used: Option<String>,
    activations: Vec<ActivationRow>,
    /// The buyer may deactivate (the seller's setting).
    customer_admin: bool,
    /// Every activation is taken and the key may replace one: each offers "Move to a new
    /// device".
    can_move: bool,
    /// How many moves (replacements) a key may make a day.
    moves_per_day: usize,
    /// The key takes a new value (its status and the seller's setting allow it).
    can_rotate: bool,
    error: Option<String>,
    notice: Option<String>,
}

/// JSON text worth showing: not empty, not `{}`.
fn shown_json(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty() && t != "{}" && t != "null").then(|| t.to_string())
}

async fn key_page(state: &AppState, s: &Signed, id: LicenseKeyId) -> Result<KeyPage, Fail> {
    let k: LicenseKey = portal::key(state, &s.customer, id).await?;
    let customer_admin = portal::customer_admin(state, &k).await?;
    let i18n = &s.portal.seller.i18n;
    let names = benefit_names(
        state,
        std::iter::once(k.benefit_id),
        &i18n.t("portal-license-key"),
    )
    .await?;
    let now = state.now();
    let live: Vec<_> = k
        .activations
        .iter()
        .filter(|a| a.deleted_at.is_none())
        .collect();
    let activations_used = match k.limit_activations {
        Some(limit) => Some(i18n.t2("portal-n-of-limit", "count", live.len(), "limit", limit)),
        None if !live.is_empty() => Some(i18n.t1("portal-n-no-limit", "count", live.len())),
        None => None,
    };
    let at_limit = k
        .limit_activations
        .is_some_and(|limit| limit > 0 && i64::try_from(live.len()).unwrap_or(i64::MAX) >= limit);
    let can_move = at_limit
        && k.allow_replacement
        && k.status == KeyStatus::Granted
        && k.expires_at.is_none_or(|at| at > now);
    Ok(KeyPage {
        seller: s.seller(),
        frame: s.frame(),
        id: k.id.to_string(),
        benefit: names.get(&k.benefit_id).cloned().unwrap_or_default(),
        key: k.key.clone(),
        status: view::key_status(i18n, &k, now),
        usage: match k.limit_usage {
            Some(limit) => i18n.t2("portal-n-of-limit", "count", k.usage, "limit", limit),
            None => i18n.t1("portal-n-no-limit", "count", k.usage),
        },
        validations: k.validations.to_string(),
        last_validated: k
            .last_validated_at
            .as_ref()
            .map(|t| view::date_time(i18n, t))
            .unwrap_or_else(|| i18n.t("portal-never")),
        expires: k
            .expires_at
            .as_ref()
            .map(|t| view::date(i18n, t))
            .unwrap_or_else(|| i18n.t("portal-never")),
        activations_used,
        activations: live
            .iter()
            .map(|a| ActivationRow {
                id: a.id.to_string(),
                label: a.label.clone(),
                created: view::date_time(i18n, &a.created_at),
                meta: shown_json(&a.meta),
                conditions: shown_json(&a.conditions),
            })
            .collect(),
        customer_admin,
        can_move,
        moves_per_day: tollgate_actors::license_key::REPLACEMENTS_PER_WINDOW,
        can_rotate: matches!(k.status, KeyStatus::Granted | KeyStatus::Disabled)
            && crate::app::license_keys::customer_may_rotate(state, &k)
                .await
                .map_err(crate::error::ApiError::from)?,
        error: None,
        notice: None,
    })
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Done {
    done: String,
}

/// `GET /portal/{slug}/license-keys/{id}`.
pub async fn key(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> PageResult {
    let (slug, id) = path.into_inner();
    let s = Signed::of(&state, &req, &slug).await?;
    let r: PageResult = async {
        let id: LicenseKeyId = path_id(&id)?;
        let mut page = key_page(&state, &s, id).await?;
        let q: Done = serde_html_form::from_str(req.query_string()).unwrap_or_default();
        let i18n = &s.portal.seller.i18n;
        page.notice = match q.done.as_str() {
            "rotated" => Some(i18n.t("portal-key-rotated")),
            "deactivated" => Some(i18n.t("portal-activation-removed")),
            "moved" => Some(i18n.t("portal-device-moved")),
            _ => None,
        };
        s.portal.page(200, &page, Vec::new())
    }
    .await;
    s.portal.branded(r)
}

/// A refusal of the app shown on the key's page (its status), or the failure page.
async fn refused(
    state: &AppState,
    s: &Signed,
    id: LicenseKeyId,
    e: crate::error::ApiError,
) -> PageResult {
    let status = e.status_code().as_u16();
    match status {
        400 | 403 | 409 | 422 | 429 => {
            let mut page = key_page(state, s, id).await?;
            page.error = Some(e.messages().join(" "));
            s.portal.page(status, &page, Vec::new())
        }
        _ => Err(e.into()),
    }
}

/// `POST /portal/{slug}/license-keys/{id}/rotate`.
pub async fn rotate(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> PageResult {
    let (slug, id) = path.into_inner();
    let s = Signed::posted(&state, &req, &slug, &body).await?;
    let r: PageResult = async {
        let id: LicenseKeyId = path_id(&id)?;
        match portal::rotate(&state, &s.customer, id).await {
            Ok(_) => Ok(see_other(
                &s.portal
                    .seller
                    .at(&format!("/license-keys/{id}?done=rotated")),
                Vec::new(),
            )),
            Err(e) => refused(&state, &s, id, e.into()).await,
        }
    }
    .await;
    s.portal.branded(r)
}

/// `POST /portal/{slug}/license-keys/{id}/activations/{activation_id}/deactivate`.
pub async fn deactivate(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String, String)>,
    body: web::Bytes,
) -> PageResult {
    on_activation(state, req, path, body, ActivationAction::Deactivate).await
}

/// `POST /portal/{slug}/license-keys/{id}/activations/{activation_id}/move`: "Move to a new
/// device". The page runs in a browser, not in the application, so it cannot know which
/// device "this" one is: it frees the chosen activation (counted as a replacement), and the
/// application activates on the new device when it next starts there. The portal offers no
/// `replace` of its own: the activation call with `"replace"` stays the application's.
pub async fn move_activation(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String, String)>,
    body: web::Bytes,
) -> PageResult {
    on_activation(state, req, path, body, ActivationAction::Move).await
}

/// What a button of an activation asks for.
#[derive(Debug, Clone, Copy)]
enum ActivationAction {
    Deactivate,
    Move,
}

/// The activation of the path, deactivated or moved for the signed-in customer: back to
/// the key's page with the notice of what was done, or its refusal shown there.
async fn on_activation(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String, String)>,
    body: web::Bytes,
    action: ActivationAction,
) -> PageResult {
    let (slug, id, activation) = path.into_inner();
    let s = Signed::posted(&state, &req, &slug, &body).await?;
    let r: PageResult = async {
        let id: LicenseKeyId = path_id(&id)?;
        let activation: ActivationId = path_id(&activation)?;
        let (done, result) = match action {
            ActivationAction::Deactivate => (
                "deactivated",
                portal::deactivate(&state, &s.customer, id, activation).await,
            ),
            ActivationAction::Move => (
                "moved",
                crate::app::license_keys::move_activation(&state, &s.customer, id, activation)
                    .await
                    .map(|_| ()),
            ),
        };
        match result {
            Ok(()) => Ok(see_other(
                &s.portal
                    .seller
                    .at(&format!("/license-keys/{id}?done={done}")),
                Vec::new(),
            )),
            Err(e) => refused(&state, &s, id, e.into()).await,
        }
    }
    .await;
    s.portal.branded(r)
}
