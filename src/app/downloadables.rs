//! The `downloadables` benefit's downloads (issue 50): what a customer may download is
//! DERIVED from the grants the purchases make now (`crate::app::benefit_grants`), never
//! stored: a refund that revokes the benefits, a subscription that ended, a deleted benefit,
//! customer or file take the downloads away at once. Only the counts are stored
//! ([`DownloadStat`] per downloadable, [`FileDownloads`] per file).
//!
//! A download link is `{public_url}/v1/customer-portal/downloadables/{token}`: the token
//! names the purchase, the benefit, the file and the expiry (ids only: no customer data)
//! and carries the server's keyed hash over them (`crate::auth::signed_link`). Following it
//! checks the signature (forged 404, malformed 400, expired 410), derives the grant again
//! (gone: 404), applies the rate limits, counts the download, then hands over the bytes
//! (`crate::app::files::delivery`). Polar checks neither the grant nor the file at that
//! point; Tollgate does.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::{DateTime, Duration, Utc};
use tollgate_storage::{Batch, Expect, StorageError};

use crate::app::benefit_grants::{granted_to, Grants};
use crate::app::paging::ListParams;
use crate::app::portal::purchase::PurchaseScope;
use crate::auth::signed_link::{self, Checked};
use crate::domain::benefit::{Benefit, BenefitProperties};
use crate::domain::benefit_grant::{BenefitGrant, GrantSource};
use crate::domain::customer::Customer;
use crate::domain::download::{downloadable_id, DownloadStat, FileDownloads};
use crate::domain::file::{FileService, StoredFile};
use crate::domain::ids::{BenefitId, FileId, OrderId, SubscriptionId};
use crate::domain::order::Order;
use crate::error::{AppError, Code};
use crate::state::AppState;
use tollgate_actors::subscription::Subscription;

/// One file a customer may download now, through one grant.
#[derive(Debug, Clone)]
pub struct Downloadable {
    /// [`downloadable_id`] of the grant and the file.
    pub id: uuid::Uuid,
    pub grant: BenefitGrant,
    pub file: StoredFile,
    /// Its downloads so far, if any were counted.
    pub stat: Option<DownloadStat>,
}

/// A file of a benefit as a grant holds it: the file, if it is (still) a `downloadable`
/// file of the grant's organization, uploaded.
async fn usable_file(
    state: &AppState,
    grant: &BenefitGrant,
    id: FileId,
) -> Result<Option<StoredFile>, AppError> {
    Ok(state
        .store
        .get::<StoredFile>(&id.key())
        .await?
        .map(|f| f.value)
        .filter(|f| {
            f.organization_id == grant.organization_id
                && f.service == FileService::Downloadable
                && f.is_uploaded()
        }))
}

/// The files `grant` of `benefit` gives now: none unless it is granted and of a live
/// downloadables benefit; else the benefit's files not archived before the grant was made,
/// that still exist.
pub async fn files_of(
    state: &AppState,
    grant: &BenefitGrant,
    benefit: &Benefit,
) -> Result<Vec<StoredFile>, AppError> {
    let BenefitProperties::Downloadables(p) = &benefit.properties else {
        return Ok(Vec::new());
    };
    if !grant.is_granted() || benefit.deleted_at.is_some() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for id in p.files_for(grant.created_at) {
        if let Some(f) = usable_file(state, grant, id).await? {
            out.push(f);
        }
    }
    Ok(out)
}

/// Everything `customer` may download now (of the purchase `scope` only, when the session
/// is limited to one; of `benefit` only, when given), newest grant first (Polar orders by
/// the downloadable's creation), each grant's files in the benefit's order.
pub async fn of_customer(
    state: &AppState,
    customer: &Customer,
    scope: Option<PurchaseScope>,
    benefit: Option<BenefitId>,
) -> Result<Vec<Downloadable>, AppError> {
    state.store.read_barrier().await?;
    let mut grants = granted_to(state, customer).await?;
    grants.retain(|g| {
        scope.is_none_or(|s| s.has_grant(g)) && benefit.is_none_or(|b| g.benefit_id == b)
    });
    // Newest first; `granted_to` gives them oldest first, ties by id.
    grants.reverse();
    let mut out = Vec::new();
    for g in grants {
        let Some(b) = state.store.get::<Benefit>(&g.benefit_id.key()).await? else {
            continue;
        };
        for file in files_of(state, &g, &b.value).await? {
            let id = downloadable_id(g.id, file.id);
            let stat = state
                .store
                .get::<DownloadStat>(id.as_bytes())
                .await?
                .map(|s| s.value);
            out.push(Downloadable {
                id,
                grant: g.clone(),
                file,
                stat,
            });
        }
    }
    Ok(out)
}

/// One page of [`of_customer`] and the total.
pub fn page(items: Vec<Downloadable>, params: ListParams) -> (Vec<Downloadable>, u64) {
    let total = items.len() as u64;
    let offset = usize::try_from(params.offset()).unwrap_or(usize::MAX);
    let limit = usize::try_from(params.limit).unwrap_or(usize::MAX);
    (items.into_iter().skip(offset).take(limit).collect(), total)
}

/// What a download link names: the purchase, the benefit, the file, and until when it
/// works (Unix seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkClaim {
    pub source: GrantSource,
    pub benefit_id: BenefitId,
    pub file_id: FileId,
    pub expires: i64,
}

const CLAIM_LEN: usize = 1 + 16 + 16 + 16 + 8;

impl LinkClaim {
    fn encode(&self) -> String {
        let mut b = Vec::with_capacity(CLAIM_LEN);
        let (kind, parent) = match self.source {
            GrantSource::Order(id) => (0u8, id.uuid()),
            GrantSource::Subscription(id) => (1u8, id.uuid()),
        };
        b.push(kind);
        b.extend_from_slice(parent.as_bytes());
        b.extend_from_slice(self.benefit_id.uuid().as_bytes());
        b.extend_from_slice(self.file_id.uuid().as_bytes());
        b.extend_from_slice(&self.expires.to_be_bytes());
        URL_SAFE_NO_PAD.encode(b)
    }

    fn decode(s: &str) -> Option<LinkClaim> {
        let b = URL_SAFE_NO_PAD.decode(s).ok()?;
        if b.len() != CLAIM_LEN {
            return None;
        }
        let id = |at: usize| -> Option<uuid::Uuid> {
            Some(uuid::Uuid::from_bytes(b.get(at..at + 16)?.try_into().ok()?))
        };
        let parent = id(1)?;
        let source = match b.first()? {
            0 => GrantSource::Order(OrderId(parent)),
            1 => GrantSource::Subscription(SubscriptionId(parent)),
            _ => return None,
        };
        let expires = i64::from_be_bytes(b.get(49..57)?.try_into().ok()?);
        Some(LinkClaim {
            source,
            benefit_id: BenefitId(id(17)?),
            file_id: FileId(id(33)?),
            expires,
        })
    }

    fn message(claim: &str) -> String {
        format!("downloadable\0{claim}")
    }
}

/// The token of a link to `d`, expiring at `expires`.
pub fn token(state: &AppState, d: &Downloadable, expires: DateTime<Utc>) -> String {
    let claim = LinkClaim {
        source: d.grant.source,
        benefit_id: d.grant.benefit_id,
        file_id: d.file.id,
        expires: expires.timestamp(),
    }
    .encode();
    let sig = signed_link::signature(&state.hasher, &LinkClaim::message(&claim));
    format!("{claim}.{sig}")
}

/// The link to `d` and until when it works (`files.download_link_ttl_secs`).
pub fn link(state: &AppState, d: &Downloadable) -> (String, DateTime<Utc>) {
    let ttl = i64::try_from(state.settings.files.download_link_ttl_secs).unwrap_or(600);
    let expires = state.now() + Duration::seconds(ttl);
    let url = format!(
        "{}/v1/customer-portal/downloadables/{}",
        state.public_url.trim_end_matches('/'),
        token(state, d, expires)
    );
    (url, expires)
}

/// What a link's token names, checked: 400 when it is not a token, 404 when this server
/// did not sign it, 410 when it expired (Polar's `BadRequest`, `ResourceNotFound`,
/// `ResourceUnavailable`).
pub fn check_token(state: &AppState, token: &str) -> Result<LinkClaim, AppError> {
    let malformed = || AppError::bad_request("Not a download link.");
    let (claim, sig) = token.split_once('.').ok_or_else(malformed)?;
    let parsed = LinkClaim::decode(claim).ok_or_else(malformed)?;
    match signed_link::check(
        &state.hasher,
        &LinkClaim::message(claim),
        parsed.expires,
        sig,
        state.now(),
    ) {
        Checked::Good => Ok(parsed),
        Checked::Forged => Err(AppError::not_found()),
        Checked::Expired => Err(AppError::new(
            Code::ResourceUnavailable,
            "The download link has expired.",
        )),
    }
}

/// The downloadable a checked link names, derived again now: 404 unless the purchase
/// still grants the benefit and the benefit still gives the file.
pub async fn resolve(state: &AppState, claim: LinkClaim) -> Result<Downloadable, AppError> {
    state.store.read_barrier().await?;
    let mut grants = Grants::new(state);
    let derived = match claim.source {
        GrantSource::Order(id) => match state.store.get::<Order>(&id.key()).await? {
            Some(o) => grants.of_order(&o.value).await?,
            None => Vec::new(),
        },
        GrantSource::Subscription(id) => match state.store.get::<Subscription>(&id.key()).await? {
            Some(s) => grants.of_subscription(&s.value).await?,
            None => Vec::new(),
        },
    };
    let grant = derived
        .into_iter()
        .find(|g| g.benefit_id == claim.benefit_id && g.is_granted())
        .ok_or_else(AppError::not_found)?;
    let benefit = grants
        .benefit(claim.benefit_id)
        .await?
        .cloned()
        .ok_or_else(AppError::not_found)?;
    let file = files_of(state, &grant, &benefit)
        .await?
        .into_iter()
        .find(|f| f.id == claim.file_id)
        .ok_or_else(AppError::not_found)?;
    let id = downloadable_id(grant.id, file.id);
    Ok(Downloadable {
        id,
        grant,
        file,
        stat: None,
    })
}

/// Attempts of the counters' compare-and-swap.
const ATTEMPTS: usize = 16;

/// Counts one download of `d`: its own count and its file's, in one write.
pub async fn count(state: &AppState, d: &Downloadable) -> Result<(), AppError> {
    let now = state.now();
    for _ in 0..ATTEMPTS {
        let stat = state.store.get::<DownloadStat>(d.id.as_bytes()).await?;
        let total = state.store.get::<FileDownloads>(&d.file.id.key()).await?;
        let mut batch = Batch::new();
        let next = DownloadStat {
            id: d.id,
            organization_id: d.grant.organization_id,
            customer_id: d.grant.customer_id,
            benefit_id: d.grant.benefit_id,
            file_id: d.file.id,
            downloaded: stat.as_ref().map_or(0, |s| s.value.downloaded) + 1,
            last_downloaded_at: Some(now),
        };
        batch.put(&next, stat.map_or(Expect::Absent, |s| Expect::Rev(s.rev)))?;
        let next_total = FileDownloads {
            file_id: d.file.id,
            organization_id: d.file.organization_id,
            downloaded: total.as_ref().map_or(0, |t| t.value.downloaded) + 1,
            last_downloaded_at: Some(now),
        };
        batch.put(
            &next_total,
            total.map_or(Expect::Absent, |t| Expect::Rev(t.rev)),
        )?;
        match state.store.commit_durable(&batch).await {
            Ok(_) => return Ok(()),
            Err(StorageError::Conflict { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(AppError::unavailable())
}

/// The downloads of a file so far, all customers together (the dashboard's count).
pub async fn file_downloads(state: &AppState, file: FileId) -> Result<u64, AppError> {
    Ok(state
        .store
        .get::<FileDownloads>(&file.key())
        .await?
        .map_or(0, |t| t.value.downloaded))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_round_trips_and_anything_else_is_malformed() {
        let claim = LinkClaim {
            source: GrantSource::Subscription(SubscriptionId::new()),
            benefit_id: BenefitId::new(),
            file_id: FileId::new(),
            expires: 1_700_000_000,
        };
        let s = claim.encode();
        assert_eq!(LinkClaim::decode(&s), Some(claim));
        let order = LinkClaim {
            source: GrantSource::Order(OrderId::new()),
            ..claim
        };
        assert_eq!(LinkClaim::decode(&order.encode()), Some(order));
        assert_eq!(LinkClaim::decode("not base64!"), None);
        assert_eq!(LinkClaim::decode(&URL_SAFE_NO_PAD.encode([0u8; 10])), None);
        let mut bad_kind = URL_SAFE_NO_PAD.decode(&s).unwrap();
        bad_kind[0] = 7;
        assert_eq!(LinkClaim::decode(&URL_SAFE_NO_PAD.encode(bad_kind)), None);
    }
}
