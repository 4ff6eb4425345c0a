//! The one-use link of a "payment failed" e-mail (issue 47): it opens the customer portal
//! on the past-due subscription, signed in, so that the buyer can pay now or give another
//! card without asking for a sign-in code.
//!
//! - **The token** is 32 bytes derived from the message's id with the server's keyed
//!   hasher ([`token_of`]): nobody without the server secret can guess it, and a fan-out
//!   that decides the same message again makes the same link. Only its keyed hash is
//!   stored, as the id of a `RecoveryLink` ([`issue`], put `Expect::Absent`: a link is
//!   never written over, so a replay never revives one that was used).
//! - **It lives** until the day access stops ([`access_stops`]): the end of the keys'
//!   grace when the subscription has keys in their grace, else the period's end plus the
//!   dunning period (when the subscription is canceled and its keys revoked).
//! - **Opening it** ([`open`]) compare-and-swaps `used_at` and writes a new customer
//!   session (the one a sign-in code gives) in one batch: of two concurrent opens one
//!   wins. A link used, expired, unknown, of another organization, or of a customer who
//!   can no longer sign in is refused alike (401 `Unauthorized`, [`dead_link`]). The used
//!   record stays until it would have expired (`crate::retention` then purges it).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::{DateTime, Utc};
use tollgate_storage::{Batch, Expect, StorageError, Stored};

use super::sign_in::{customer_of, new_session, Opened};
use crate::domain::ids::{MailMessageId, OrganizationId, SubscriptionId};
use crate::domain::portal_link::RecoveryLink;
use crate::error::{AppError, Code};
use crate::state::AppState;
use tollgate_actors::subscription::{Subscription, DUNNING_PERIOD};

/// Characters of a token: 32 bytes in unpadded base64url.
pub const TOKEN_LENGTH: usize = 43;

/// What a link answers when it does not open the portal, whatever the reason.
pub fn dead_link() -> AppError {
    AppError::new(
        Code::Unauthorized,
        "This link has expired or was already used.",
    )
}

/// The token of the link in the message `mail`: derived, never stored.
pub fn token_of(state: &AppState, mail: MailMessageId) -> String {
    URL_SAFE_NO_PAD.encode(
        state
            .hasher
            .derive(&[b"recovery-link".as_slice(), mail.0.as_bytes().as_slice()]),
    )
}

/// The keyed hash a token is stored under (its own domain: never a session's or a code's).
fn token_hash(state: &AppState, token: &str) -> Vec<u8> {
    state
        .hasher
        .hash(&format!("recovery-link\0{token}"))
        .to_vec()
}

/// Whether `token` can be a token at all (read nothing for anything else).
fn is_well_formed(token: &str) -> bool {
    token.len() == TOKEN_LENGTH
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The path of a link on the organization's portal.
pub fn path(slug: &str, token: &str) -> String {
    format!("/portal/{slug}/recover/{token}")
}

/// The link as mailed.
pub fn url(state: &AppState, slug: &str, token: &str) -> String {
    format!(
        "{}{}",
        state.public_url.trim_end_matches('/'),
        path(slug, token)
    )
}

/// The day access stops for a past-due subscription: `keys_until` (the end of its keys'
/// grace) while its keys are in their grace, else (no keys, or their grace is over: a
/// later retry) the day dunning gives up, the period's end plus the dunning period (`now`
/// plus it for a subscription without a period, which a renewal always has).
pub fn access_stops(
    subscription: &Subscription,
    keys_until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> DateTime<Utc> {
    keys_until
        .filter(|t| *t > now)
        .unwrap_or_else(|| subscription.current_period_end.unwrap_or(now) + DUNNING_PERIOD)
}

/// Stores the link of the message `mail` about `subscription`, working until
/// `expires_at`; answers its token. A link stored already (the message decided again) is
/// left as it is, used or not.
pub async fn issue(
    state: &AppState,
    mail: MailMessageId,
    subscription: &Subscription,
    expires_at: DateTime<Utc>,
) -> Result<String, AppError> {
    let token = token_of(state, mail);
    let link = RecoveryLink {
        token_hash: token_hash(state, &token),
        organization_id: subscription.organization_id,
        customer_id: subscription.customer_id,
        subscription_id: subscription.id,
        created_at: state.now(),
        expires_at,
        used_at: None,
    };
    let mut batch = Batch::new();
    batch.put(&link, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) | Err(StorageError::Conflict { .. }) => Ok(token),
        Err(e) => Err(e.into()),
    }
}

/// A link opened: the new session, and the subscription to show.
#[derive(Debug, Clone)]
pub struct Recovered {
    pub opened: Opened,
    pub subscription_id: SubscriptionId,
}

/// Opens the link `token` on the portal of `organization`: its `used_at` and a new
/// session of its customer in one batch. Anything but a live link of this organization
/// and a customer who can sign in is [`dead_link`], and nothing changes.
pub async fn open(
    state: &AppState,
    organization: OrganizationId,
    token: &str,
) -> Result<Recovered, AppError> {
    if !is_well_formed(token) {
        return Err(dead_link());
    }
    let now = state.now();
    let Some(Stored { value: link, rev }) = state
        .store
        .get::<RecoveryLink>(&token_hash(state, token))
        .await?
        .filter(|l| l.value.is_live(now) && l.value.organization_id == organization)
    else {
        return Err(dead_link());
    };
    let Some(customer) = customer_of(state, link.customer_id)
        .await?
        .filter(|c| c.organization_id == organization)
    else {
        return Err(dead_link());
    };
    let opened = new_session(state, &customer);
    let mut used = link.clone();
    used.used_at = Some(now);
    let mut batch = Batch::new();
    // One use: a concurrent open of the same link loses this compare-and-swap.
    batch.put(&used, Expect::Rev(rev))?;
    batch.put(&opened.session, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) => Ok(Recovered {
            opened,
            subscription_id: link.subscription_id,
        }),
        Err(StorageError::Conflict { .. }) => Err(dead_link()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
#[path = "recovery_link_tests.rs"]
mod tests;
