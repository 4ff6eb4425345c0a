//! Signing in to the customer portal by e-mailed code (Polar's
//! `customer_portal/service/customer_session.py`): a buyer asks for a code for an address
//! ([`request_code`]); if the address is a customer of the organization, a one-time code
//! is written with its message in one transaction, and the sender mails it. The answer is
//! the same whether or not a code was sent. The code opens a customer session
//! ([`authenticate`]): single use (deleted in the transaction that opens the session),
//! valid `CustomerSessionCode::TTL`. On the sign-in page, where the address is known,
//! `CustomerSessionCode::MAX_FAILURES` wrong codes typed for an address *from one client
//! address* stop every code of that address from working from there (until that client
//! asks for a new code); other clients, the buyer among them, are not concerned, so a
//! stranger's guesses never kill the buyer's live code (36^6 codes: per-client limits
//! suffice). The count is kept in memory (`crate::ratelimit`), per node.
//!
//! A code request answers no sooner than `rate_limits.mail_request_min_answer_ms` after
//! it arrived, known address or not ([`pad_answer`]), so its timing does not tell who
//! bought.

use rand::Rng;
use tollgate_storage::{Batch, Expect, StorageError, Stored};

use crate::auth::tokens::{generate, CUSTOMER_SESSION_PREFIX};
use crate::domain::customer::{customer_by_email, normalize_email, Customer};
use crate::domain::customer_session::{CustomerSession, CustomerSessionCode};
use crate::domain::ids::{CustomerId, OrganizationId};
use crate::domain::organization::Organization;
use crate::error::{AppError, Code};
use crate::state::AppState;

/// A session opened: the token (shown once) and its record.
#[derive(Debug, Clone)]
pub struct Opened {
    pub token: String,
    pub session: CustomerSession,
}

/// Polar's 401 for a code that does not sign in.
pub fn invalid_code() -> AppError {
    AppError::new(
        Code::CustomerSessionCodeInvalidOrExpired,
        "This customer session code is invalid or has expired.",
    )
}

/// A fresh code: [`CustomerSessionCode::LENGTH`] characters of its alphabet.
fn new_code() -> String {
    let mut rng = rand::rngs::OsRng;
    (0..CustomerSessionCode::LENGTH)
        .map(|_| {
            let i = rng.gen_range(0..CustomerSessionCode::ALPHABET.len());
            char::from(CustomerSessionCode::ALPHABET[i])
        })
        .collect()
}

/// The keyed hash a code is stored under (its own domain: never a token's).
fn code_hash(state: &AppState, code: &str) -> Vec<u8> {
    state
        .hasher
        .hash(&format!("customer-session-code\0{code}"))
        .to_vec()
}

/// The portal's sign-in page of an organization.
pub fn sign_in_url(state: &AppState, slug: &str) -> String {
    format!("{}/portal/{slug}", state.public_url.trim_end_matches('/'))
}

/// Opens a session of `customer` now: a new `polar_cst_` token, `CustomerSession::TTL`.
pub fn new_session(state: &AppState, customer: &Customer) -> Opened {
    let token = generate(CUSTOMER_SESSION_PREFIX, 32);
    let session = CustomerSession::open(
        customer.id,
        customer.organization_id,
        state.hasher.hash(&token).to_vec(),
        state.now(),
    );
    Opened { token, session }
}

/// Waits until `rate_limits.mail_request_min_answer_ms` have passed since `started`: an
/// answer about an address (a code request, a key resend) takes the same time whether or
/// not the address is a customer, as long as the work fits in that time (a slower answer
/// is logged).
pub async fn pad_answer(state: &AppState, started: std::time::Instant) {
    let floor =
        std::time::Duration::from_millis(state.settings.rate_limits.mail_request_min_answer_ms);
    let spent = started.elapsed();
    if spent < floor {
        actix_web::rt::time::sleep(floor - spent).await;
    } else if !floor.is_zero() {
        tracing::info!(
            spent_ms = u64::try_from(spent.as_millis()).unwrap_or(u64::MAX),
            "an answer about an address took longer than rate_limits.mail_request_min_answer_ms"
        );
    }
}

/// Sends a sign-in code to `email` if it is a live customer of the visible organization
/// `org`; does nothing otherwise. Either way the caller answers the same, and no sooner
/// than [`pad_answer`] allows. The wrong codes `client` typed for the address are
/// forgotten.
pub async fn request_code(
    state: &AppState,
    org: OrganizationId,
    email: &str,
    client: std::net::IpAddr,
) -> Result<(), AppError> {
    let started = std::time::Instant::now();
    state.limits.portal_code_reset(client, &org.uuid(), email);
    let sent = send_code(state, org, email).await;
    pad_answer(state, started).await;
    sent
}

/// "Send me my keys again" (`crate::app::mail::resend_keys`), answered no sooner than
/// [`pad_answer`] allows, so its timing does not tell whether the address holds keys.
pub async fn resend_keys(
    state: &AppState,
    org: OrganizationId,
    email: &str,
) -> Result<(), AppError> {
    let started = std::time::Instant::now();
    let sent = crate::app::mail::resend_keys(state, org, email).await;
    pad_answer(state, started).await;
    sent
}

async fn send_code(state: &AppState, org: OrganizationId, email: &str) -> Result<(), AppError> {
    let Some(organization) = state
        .store
        .get::<Organization>(&org.key())
        .await?
        .map(|o| o.value)
        .filter(Organization::is_visible)
    else {
        return Ok(());
    };
    let Some(customer) = customer_by_email(&state.store, org, email).await? else {
        return Ok(());
    };
    let customer = customer.value;
    if customer.is_deleted() {
        return Ok(());
    }
    // The one in a couple of billions chance that the code is live already: another.
    for _ in 0..3 {
        let code = new_code();
        let record = CustomerSessionCode::open(
            code_hash(state, &code),
            org,
            customer.id,
            normalize_email(&customer.email),
            state.now(),
        );
        let message = crate::app::mail::sign_in_code(
            state,
            &customer,
            &customer.email,
            &code,
            sign_in_url(state, &organization.slug),
        )
        .await?;
        let mut batch = Batch::new();
        batch.put(&record, Expect::Absent)?;
        batch.put(&message, Expect::Absent)?;
        match state.store.commit_durable(&batch).await {
            Ok(_) => {
                state.mailer.wake();
                return Ok(());
            }
            Err(StorageError::Conflict { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(AppError::unavailable())
}

/// Where a typed code must belong: the sign-in page knows the organization and the
/// address it sent the code to, and wrong codes count against that address as typed
/// from `client`.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    pub organization_id: OrganizationId,
    pub email: &'a str,
    pub client: std::net::IpAddr,
}

/// Opens a customer session with a code: 401 `CustomerSessionCodeInvalidOrExpired` for
/// a code that is unknown, expired, worn out, used already, or (with `expected`) of
/// another organization or address, or (with `expected`) typed from a client that typed
/// too many wrong codes for the address. Signing in verifies the customer's address when
/// the code went to it (`customer.updated`).
pub async fn authenticate(
    state: &AppState,
    typed: &str,
    expected: Option<Expected<'_>>,
) -> Result<Opened, AppError> {
    if let Some(e) = expected {
        if state
            .limits
            .portal_code_worn_out(e.client, &e.organization_id.uuid(), e.email)
        {
            return Err(invalid_code());
        }
    }
    let code = CustomerSessionCode::normalize(typed);
    let found = if CustomerSessionCode::is_well_formed(&code) {
        state
            .store
            .get::<CustomerSessionCode>(&code_hash(state, &code))
            .await?
    } else {
        None
    };
    let now = state.now();
    let belongs = |c: &CustomerSessionCode| {
        expected.is_none_or(|e| {
            c.organization_id == e.organization_id && c.email == normalize_email(e.email)
        })
    };
    let Some(Stored { value: found, rev }) =
        found.filter(|c| c.value.is_live(now) && belongs(&c.value))
    else {
        if let Some(e) = expected {
            // The client's failure, not the code's: the code stays alive for its owner.
            state
                .limits
                .portal_code_failed(e.client, &e.organization_id.uuid(), e.email);
        }
        return Err(invalid_code());
    };
    let customer = state
        .store
        .get::<Customer>(&found.customer_id.key())
        .await?
        .filter(|c| !c.value.is_deleted());
    let Some(customer) = customer else {
        return Err(invalid_code());
    };
    let opened = new_session(state, &customer.value);
    let mut batch = Batch::new();
    // Single use: a concurrent sign-in with the same code loses this compare-and-swap.
    batch.delete::<CustomerSessionCode>(&found.code_hash, Expect::Rev(rev));
    batch.put(&opened.session, Expect::Absent)?;
    if !customer.value.email_verified && normalize_email(&customer.value.email) == found.email {
        let mut verified = customer.value.clone();
        verified.email_verified = true;
        verified.modified_at = Some(now);
        batch.put(&verified, Expect::Rev(customer.rev))?;
    }
    match state.store.commit_durable(&batch).await {
        Ok(_) => {
            if let Some(e) = expected {
                state
                    .limits
                    .portal_code_reset(e.client, &e.organization_id.uuid(), e.email);
            }
            Ok(opened)
        }
        Err(StorageError::Conflict { .. }) => Err(invalid_code()),
        Err(e) => Err(e.into()),
    }
}

/// The live session a `polar_cst_` token names, and its live customer; `None` for anything
/// else. The bearer credentials (`crate::credentials::bearer`) and the portal's cookie both
/// resolve through it.
pub async fn session_of(
    state: &AppState,
    token: &str,
) -> Result<Option<(CustomerSession, Customer)>, AppError> {
    if !token.starts_with(CUSTOMER_SESSION_PREFIX) {
        return Ok(None);
    }
    let hash = state.hasher.hash(token);
    let Some(id) = state
        .store
        .lookup_unique(&CustomerSession::token_key(&hash))
        .await?
    else {
        return Ok(None);
    };
    let Some(session) = state.store.get::<CustomerSession>(&id).await? else {
        return Ok(None);
    };
    if session.value.expires_at <= state.now()
        || !state.hasher.verify(token, &session.value.token_hash)
    {
        return Ok(None);
    }
    // A confirm's session opens nothing before its checkout's payment succeeded.
    if let Some(purchase) = session.value.purchase {
        if !crate::app::checkout::has_succeeded(state, purchase.checkout_id).await? {
            return Ok(None);
        }
    }
    // A deleted customer, or one of a deleted or blocked organization, signs in no more
    // (Polar's `Customer.can_authenticate`).
    let customer = customer_of(state, session.value.customer_id).await?;
    Ok(customer.map(|c| (session.value, c)))
}

/// A live customer of a visible organization.
pub async fn customer_of(state: &AppState, id: CustomerId) -> Result<Option<Customer>, AppError> {
    let Some(c) = state.store.get::<Customer>(&id.key()).await? else {
        return Ok(None);
    };
    if c.value.is_deleted() {
        return Ok(None);
    }
    let visible = state
        .store
        .get::<Organization>(&c.value.organization_id.key())
        .await?
        .is_some_and(|o| o.value.is_visible());
    Ok(visible.then_some(c.value))
}

/// Ends a session (the portal's sign-out): its record is deleted.
pub async fn end_session(state: &AppState, session: &CustomerSession) -> Result<(), AppError> {
    let mut batch = Batch::new();
    batch.delete::<CustomerSession>(&session.id.key(), Expect::Any);
    state.store.commit_durable(&batch).await?;
    Ok(())
}

#[cfg(test)]
#[path = "sign_in_tests.rs"]
mod tests;
