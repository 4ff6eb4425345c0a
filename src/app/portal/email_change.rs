//! A buyer changes its e-mail address (Polar's `customers/me/email-update`): the new
//! address gets a code ([`request`]); the code, typed back ([`verify`]), swaps the address
//! (verified, since the code reached it), opens a new session, ends the customer's other
//! sessions and its pending sign-in codes, and tells the old address. Until then nothing
//! changes. Codes are [`EmailChange::LENGTH`] characters of A–Z and 0–9, single use,
//! valid [`EmailChange::TTL`]; only their keyed hash is stored. Polar mails a link with
//! a token; Tollgate mails a code (the wording), which is the `token` of `check`
//! and `verify`.
//!
//! The address is checked free when the code is used, not when it is asked for (Polar's
//! order: asking tells nobody whether an address is a customer's). The rate limits are the
//! sign-in code's, applied by the adapters.

use rand::Rng;
use tollgate_storage::{Batch, Expect, StorageError, Stored};

use super::sign_in::{new_session, Opened};
use crate::domain::customer::{customer_by_email, normalize_email, Customer};
use crate::domain::customer_session::{CustomerSession, CustomerSessionCode};
use crate::domain::ids::CustomerId;
use crate::domain::organization::Organization;
use crate::domain::portal_link::EmailChange;
use crate::error::{AppError, Code};
use crate::field;
use crate::state::AppState;

/// Polar's 401 for a code that does not change the address.
pub fn invalid() -> AppError {
    AppError::new(
        Code::InvalidCustomerEmailUpdate,
        "This email update request is invalid or has expired.",
    )
}

/// The alphabet of codes.
const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

fn new_code() -> String {
    let mut rng = rand::rngs::OsRng;
    (0..EmailChange::LENGTH)
        .map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]))
        .collect()
}

/// A typed code as stored: upper case, no spaces or dashes.
fn normalize(typed: &str) -> String {
    typed
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

fn well_formed(code: &str) -> bool {
    code.len() == EmailChange::LENGTH && code.bytes().all(|b| ALPHABET.contains(&b))
}

/// The keyed hash a code is stored under (its own domain: never a sign-in code's).
fn code_hash(state: &AppState, code: &str) -> Vec<u8> {
    state
        .hasher
        .hash(&format!("customer-email-change\0{code}"))
        .to_vec()
}

/// The portal page where the code is typed.
fn account_url(state: &AppState, slug: &str) -> String {
    format!(
        "{}/portal/{slug}/account",
        state.public_url.trim_end_matches('/')
    )
}

async fn organization_of(state: &AppState, customer: &Customer) -> Result<Organization, AppError> {
    super::organization(state, customer).await
}

/// Sends a code to `new_email` (normalized) for the signed-in customer: 422 when it is the
/// customer's address already. The customer's earlier codes stop working.
pub async fn request(
    state: &AppState,
    customer: &Customer,
    new_email: &str,
) -> Result<(), AppError> {
    let new_email = normalize_email(new_email);
    if new_email == normalize_email(&customer.email) {
        return Err(AppError::invalid(
            field!["email"],
            "New email is the same as your current email.",
            new_email,
        ));
    }
    let organization = organization_of(state, customer).await?;
    let earlier: Vec<Stored<EmailChange>> = state
        .store
        .scan::<EmailChange>()
        .await?
        .into_iter()
        .filter(|c| c.value.customer_id == customer.id)
        .collect();
    for _ in 0..3 {
        let code = new_code();
        let record = EmailChange::open(
            code_hash(state, &code),
            customer.organization_id,
            customer.id,
            new_email.clone(),
            state.now(),
        );
        let message = crate::app::mail::email_change_code(
            state,
            customer,
            &new_email,
            &code,
            account_url(state, &organization.slug),
        )
        .await?;
        let mut batch = Batch::new();
        for e in &earlier {
            batch.delete::<EmailChange>(&e.value.code_hash, Expect::Any);
        }
        batch.put(&record, Expect::Absent)?;
        batch.put(&message, Expect::Absent)?;
        match state.store.commit_durable(&batch).await {
            Ok(_) => {
                state.mailer.wake();
                return Ok(());
            }
            // The one in a trillion chance that the code is live already: another.
            Err(StorageError::Conflict { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(AppError::unavailable())
}

/// The live change a typed code names.
async fn live(state: &AppState, typed: &str) -> Result<Option<Stored<EmailChange>>, AppError> {
    let code = normalize(typed);
    if !well_formed(&code) {
        return Ok(None);
    }
    let now = state.now();
    Ok(state
        .store
        .get::<EmailChange>(&code_hash(state, &code))
        .await?
        .filter(|c| c.value.is_live(now)))
}

/// Whether a code would change an address now (Polar's `check`).
pub async fn check(state: &AppState, typed: &str) -> Result<bool, AppError> {
    Ok(live(state, typed).await?.is_some())
}

fn in_use(email: &str) -> AppError {
    AppError::invalid(
        field!["token"],
        "This email address is already in use.",
        email.to_string(),
    )
}

/// Changes the address a code was sent to: 401 `InvalidCustomerEmailUpdate` for a code
/// that is unknown, expired or used; 422 at `token` when another customer of the
/// organization holds the address by now (the code is spent). The customer's address is
/// the new one, verified; a new session is opened (returned) and every other session of
/// the customer ends, with its pending sign-in codes; the old address is told. With
/// `only_for` (a signed-in page), a code of another customer is as invalid as an unknown
/// one, and stays unspent.
pub async fn verify(
    state: &AppState,
    typed: &str,
    only_for: Option<CustomerId>,
) -> Result<(Opened, Customer), AppError> {
    let Some(Stored { value: change, rev }) = live(state, typed).await? else {
        return Err(invalid());
    };
    if only_for.is_some_and(|c| c != change.customer_id) {
        return Err(invalid());
    }
    let Some(customer) = state
        .store
        .get::<Customer>(&change.customer_id.key())
        .await?
        .filter(|c| !c.value.is_deleted())
    else {
        return Err(invalid());
    };
    let spend = |batch: &mut Batch| {
        batch.delete::<EmailChange>(&change.code_hash, Expect::Rev(rev));
    };
    let held = customer_by_email(&state.store, change.organization_id, &change.new_email)
        .await?
        .is_some_and(|other| other.value.id != customer.value.id);
    if held {
        let mut batch = Batch::new();
        spend(&mut batch);
        // A concurrent use spent it already: the same answer.
        let _ = state.store.commit_durable(&batch).await;
        return Err(in_use(&change.new_email));
    }
    let now = state.now();
    let old = customer.value.clone();
    let mut changed = customer.value.clone();
    changed.email = change.new_email.clone();
    changed.email_verified = true;
    changed.modified_at = Some(now);
    let opened = new_session(state, &changed);
    let notice = crate::app::mail::email_changed_notice(state, &old, &change.new_email).await?;
    let sessions: Vec<Vec<u8>> = state
        .store
        .scan::<CustomerSession>()
        .await?
        .into_iter()
        .filter(|s| s.value.customer_id == old.id)
        .map(|s| s.value.id.key())
        .collect();
    let codes: Vec<Vec<u8>> = state
        .store
        .scan::<CustomerSessionCode>()
        .await?
        .into_iter()
        .filter(|c| c.value.customer_id == old.id)
        .map(|c| c.value.code_hash)
        .collect();
    let mut batch = Batch::new();
    // Single use: a concurrent verify with the same code loses this compare-and-swap.
    spend(&mut batch);
    batch.put(&changed, Expect::Rev(customer.rev))?;
    for id in &sessions {
        batch.delete::<CustomerSession>(id, Expect::Any);
    }
    for hash in &codes {
        batch.delete::<CustomerSessionCode>(hash, Expect::Any);
    }
    batch.put(&opened.session, Expect::Absent)?;
    batch.put(&notice, Expect::Absent)?;
    match state.store.commit_durable(&batch).await {
        Ok(_) => {
            state.mailer.wake();
            Ok((opened, changed))
        }
        // Lost the address to another customer since the check.
        Err(StorageError::Unique { .. }) => Err(in_use(&change.new_email)),
        // The code was used meanwhile, or the customer changed: the code stays for a retry
        // when it is still there.
        Err(StorageError::Conflict { .. }) => Err(invalid()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
#[path = "email_change_tests.rs"]
mod tests;
