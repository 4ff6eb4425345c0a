//! The update feeds a license key reads (Tollgate's extension): electron-updater's
//! generic provider, Tauri's dynamic endpoint and Sparkle's appcast, each listing the
//! releases the key may have, with signed links to their files.
//!
//! A key may read a product's feed when it is granted (not revoked or disabled) and of a
//! benefit the product grants now. An expired key still reads it but sees only what was
//! published (or backdated) by its expiry. Reading a feed is not a validation: nothing is
//! counted. A missing or unknown key is 401, a key of another product 404.
//!
//! A customer portal session (`polar_cst_`) reads a product's feed through the license
//! keys of the product its customer holds now (granted; a limited session: those of its
//! purchase): a release is shown when any of them may have it (the most permissive). A
//! customer without such a key, or of another organization, gets 404. The links given to a
//! session name its customer (never the session's token), and each download checks the
//! customer's keys again.

use std::collections::BTreeMap;

use chrono::{Duration, SecondsFormat};
use tollgate_storage::Direction;

use crate::api::releases::TauriUpdate;
use crate::app::license_keys::entitlements_of;
use crate::app::portal::purchase::PurchaseScope;
use crate::auth::signed_link::{self, Checked};
use crate::domain::file::StoredFile;
use crate::domain::ids::{BenefitId, CheckoutId, CustomerId, LicenseKeyId, ProductId, ReleaseId};
use crate::domain::product::Product;
use crate::domain::release::{
    os_of, Bundle, Channel, KeyAccess, Release, ReleaseArtifact, ReleaseStatus, RELEASE_OF_PRODUCT,
};
use crate::error::{AppError, Code};
use crate::files::Delivery;
use crate::state::AppState;
use crate::updates::feeds::{
    appcast, electron_yaml, AppcastItem, Listed, TauriPlatform, TauriStatic,
};
use tollgate_actors::license_key::{KeyStatus, LicenseKey, LICENSE_KEY_BY_CUSTOMER};

/// Who reads a feed: one license key, or a portal session's customer (limited to one
/// checkout's purchase for a limited session), through the keys of the product it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    Key(LicenseKeyId),
    Customer(CustomerId, Option<CheckoutId>),
}

/// A key, or a customer, allowed to read a product's feed, with what it may see.
pub struct Reader {
    pub product: Product,
    pub holder: Holder,
    /// What each of the reader's keys lets it see (one for a key; one per granted key of
    /// the product for a customer, never none): a release is shown when any allows it.
    pub access: Vec<KeyAccess>,
}

impl Reader {
    /// Whether the reader sees `release` on the feed of `channel`.
    pub fn sees(&self, release: &Release, channel: Channel) -> bool {
        self.access.iter().any(|a| release.visible_to(channel, a))
    }
}

/// The credential a feed or a download was read with: a license key (`None`: none sent),
/// or a customer portal session's customer (already resolved; a limited session names its
/// checkout).
pub enum Credential {
    Key(Option<String>),
    Customer(CustomerId, Option<CheckoutId>),
}

fn unauthorized(detail: &str) -> AppError {
    AppError::new(Code::Unauthorized, detail)
}

/// What `key` lets its holder see: its expiry and its purchase's entitlements now.
async fn access_of(state: &AppState, key: &LicenseKey) -> Result<KeyAccess, AppError> {
    let entitlements = entitlements_of(state, key, false).await?;
    Ok(KeyAccess {
        expires_at: key.expires_at,
        entitlements: entitlements
            .iter()
            .map(|e| BenefitId(e.benefit_id))
            .collect(),
    })
}

/// Whether `key` may read `product`'s feed now, and what it sees.
async fn reader_of(
    state: &AppState,
    product: Product,
    key: LicenseKey,
) -> Result<Reader, AppError> {
    if key.organization_id != product.organization_id
        || !product.benefit_ids.contains(&key.benefit_id)
    {
        return Err(AppError::not_found());
    }
    match key.status {
        KeyStatus::Granted => {}
        KeyStatus::Revoked | KeyStatus::Disabled => {
            return Err(AppError::not_permitted(format!(
                "This license key is {}.",
                key.status.as_str()
            )))
        }
    }
    let access = access_of(state, &key).await?;
    Ok(Reader {
        product,
        holder: Holder::Key(key.id),
        access: vec![access],
    })
}

/// The reader of product `product_id`'s feed holding license key `secret` (sent by the
/// updater; `None`: none sent).
async fn key_reader(
    state: &AppState,
    product_id: ProductId,
    secret: Option<&str>,
) -> Result<Reader, AppError> {
    let secret = secret
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| unauthorized("A license key is required (Authorization: Bearer <key>)."))?;
    let Some(product) = state.store.get::<Product>(&product_id.key()).await? else {
        return Err(unauthorized("Unknown license key."));
    };
    let id = state
        .store
        .lookup_unique(&LicenseKey::value_key(
            product.value.organization_id,
            secret,
        ))
        .await?
        .and_then(|bytes| LicenseKeyId::from_key(&bytes));
    let key = match id {
        Some(id) => state.store.get::<LicenseKey>(&id.key()).await?,
        None => None,
    };
    match key {
        // The unique index is exact: the stored key holds this value.
        Some(k) if k.value.key == secret => reader_of(state, product.value, k.value).await,
        _ => Err(unauthorized("Unknown license key.")),
    }
}

/// The reader of product `product_id`'s feed that is customer `customer` (of a portal
/// session; `checkout`: a limited session's purchase): what its granted keys of the
/// product allow together. 404 for a deleted customer, a customer of another
/// organization, or one without such a key (the product's existence is not told).
async fn customer_reader(
    state: &AppState,
    product_id: ProductId,
    customer: CustomerId,
    checkout: Option<CheckoutId>,
) -> Result<Reader, AppError> {
    let Some(product) = state.store.get::<Product>(&product_id.key()).await? else {
        return Err(AppError::not_found());
    };
    let product = product.value;
    let Some(owner) = crate::app::portal::sign_in::customer_of(state, customer).await? else {
        return Err(AppError::not_found());
    };
    if owner.organization_id != product.organization_id {
        return Err(AppError::not_found());
    }
    let scope = checkout.map(PurchaseScope::of);
    let tenants = [customer.key()];
    let mut ids = state
        .store
        .index_iter(LICENSE_KEY_BY_CUSTOMER, &tenants, Direction::Asc)?;
    let mut access = Vec::new();
    while let Some(id) = ids.next().await {
        let Some(key) = state.store.get::<LicenseKey>(&id?).await? else {
            continue;
        };
        let key = key.value;
        let holds = key.customer_id == customer
            && key.organization_id == product.organization_id
            && product.benefit_ids.contains(&key.benefit_id)
            && key.status == KeyStatus::Granted
            && scope.is_none_or(|s| s.has_key(&key));
        if holds {
            access.push(access_of(state, &key).await?);
        }
    }
    if access.is_empty() {
        return Err(AppError::not_found());
    }
    Ok(Reader {
        product,
        holder: Holder::Customer(customer, checkout),
        access,
    })
}

/// The reader of product `product_id`'s feed with `credential`.
pub async fn reader(
    state: &AppState,
    product_id: ProductId,
    credential: &Credential,
) -> Result<Reader, AppError> {
    match credential {
        Credential::Key(secret) => key_reader(state, product_id, secret.as_deref()).await,
        Credential::Customer(customer, checkout) => {
            customer_reader(state, product_id, *customer, *checkout).await
        }
    }
}

/// The releases `reader` sees on channel `channel` that `usable` accepts, newest version
/// first (as `visible_newest_first`, for any of the reader's keys).
fn shown<'a>(
    releases: &'a [Release],
    channel: Channel,
    reader: &Reader,
    usable: impl Fn(&Release) -> bool,
) -> Vec<&'a Release> {
    let mut shown: Vec<(semver::Version, &Release)> = releases
        .iter()
        .filter(|r| reader.sees(r, channel) && usable(r))
        .map(|r| (r.semver(), r))
        .collect();
    shown.sort_by(|a, b| b.0.cmp(&a.0));
    shown.into_iter().map(|(_, r)| r).collect()
}

/// The releases of the reader's product.
async fn releases_of(state: &AppState, product: ProductId) -> Result<Vec<Release>, AppError> {
    let keys = state
        .store
        .index_range(RELEASE_OF_PRODUCT, &product.key(), &[], None)
        .await?;
    Ok(state
        .store
        .get_many::<Release>(&keys)
        .await?
        .into_iter()
        .map(|r| r.value)
        .collect())
}

/// What a signed artifact link grants: one file of one release, to one key or to one
/// customer (limited to a checkout's purchase, or not).
fn link_message(release: ReleaseId, name: &str, holder: Holder, expires: i64) -> String {
    match holder {
        Holder::Key(key) => format!("update-artifact\0{release}\0{name}\0{key}\0{expires}"),
        Holder::Customer(customer, checkout) => {
            let checkout = checkout.map(|c| c.to_string()).unwrap_or_default();
            format!(
                "update-artifact-customer\0{release}\0{name}\0{customer}\0{checkout}\0{expires}"
            )
        }
    }
}

/// A path segment, percent-encoded.
fn segment(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'_' | b'~' => {
                (b as char).to_string()
            }
            b => format!("%{b:02X}"),
        })
        .collect()
}

/// The signed link to `artifact` of `release` for `holder`, valid
/// `updates.link_ttl_secs`: `key_id=` for a key, `customer_id=` (and `checkout_id=` for a
/// limited session) for a customer. Its path ends with the file's name (electron-updater
/// picks files by extension).
pub fn artifact_link(
    state: &AppState,
    release: &Release,
    artifact: &ReleaseArtifact,
    holder: Holder,
) -> String {
    let ttl = i64::try_from(state.settings.updates.link_ttl_secs).unwrap_or(3600);
    let expires = (state.now() + Duration::seconds(ttl)).timestamp();
    let signature = signed_link::signature(
        &state.hasher,
        &link_message(release.id, &artifact.name, holder, expires),
    );
    let who = match holder {
        Holder::Key(key) => format!("key_id={key}"),
        Holder::Customer(customer, None) => format!("customer_id={customer}"),
        Holder::Customer(customer, Some(checkout)) => {
            format!("customer_id={customer}&checkout_id={checkout}")
        }
    };
    format!(
        "{}/v1/updates/download/{}/{}?{who}&expires={expires}&signature={signature}",
        state.public_url.trim_end_matches('/'),
        release.id,
        segment(&artifact.name)
    )
}

fn listed<'a>(
    state: &AppState,
    reader: &Reader,
    release: &Release,
    artifact: &'a ReleaseArtifact,
) -> Listed<'a> {
    Listed {
        artifact,
        url: artifact_link(state, release, artifact, reader.holder),
    }
}

/// The artifacts of `release` matching `platforms` and `bundles`, in the order of
/// `bundles` (the preferred first), then of `platforms`.
fn matching<'a>(
    release: &'a Release,
    platforms: &[&str],
    bundles: &[Bundle],
) -> Vec<&'a ReleaseArtifact> {
    let mut out = Vec::new();
    for b in bundles {
        for p in platforms {
            out.extend(
                release
                    .artifacts
                    .iter()
                    .filter(|a| a.bundle == *b && a.platform == *p && a.signatures.is_some()),
            );
        }
    }
    out
}

/// electron-updater's channel files: `{channel}.yml` (Windows), `{channel}-mac.yml`,
/// `{channel}-linux.yml` (x64) and `{channel}-linux-{arch}.yml`; the channel named by the
/// file (`latest` is stable; another name than `latest` wins over the path's) and the
/// platforms and bundles it lists, or `None` for another name.
pub fn electron_file(
    path_channel: Channel,
    file: &str,
) -> Option<(Channel, &'static [&'static str], &'static [Bundle])> {
    let stem = file.strip_suffix(".yml")?;
    const SUFFIXES: &[(&str, &[&str], &[Bundle])] = &[
        (
            "-linux-arm64",
            &["linux-aarch64"],
            &[Bundle::AppImage, Bundle::Deb, Bundle::Rpm],
        ),
        (
            "-linux-armv7l",
            &["linux-armv7"],
            &[Bundle::AppImage, Bundle::Deb, Bundle::Rpm],
        ),
        (
            "-linux",
            &["linux-x86_64"],
            &[Bundle::AppImage, Bundle::Deb, Bundle::Rpm],
        ),
        (
            "-mac",
            &["darwin-universal", "darwin-aarch64", "darwin-x86_64"],
            &[Bundle::Zip, Bundle::Dmg],
        ),
    ];
    let (name, platforms, bundles) = SUFFIXES
        .iter()
        .find_map(|(suffix, p, b)| stem.strip_suffix(suffix).map(|n| (n, *p, *b)))
        .unwrap_or((
            stem,
            &["windows-x86_64", "windows-aarch64", "windows-i686"],
            &[Bundle::Nsis, Bundle::Msi, Bundle::Zip],
        ));
    let channel = match name {
        "latest" => path_channel,
        other => Channel::parse(other)?,
    };
    Some((channel, platforms, bundles))
}

/// `GET /v1/updates/{product}/{channel}/{file}.yml`: the newest release the key may have
/// with files for the file's platform; 404 when there is none.
pub async fn electron(
    state: &AppState,
    reader: &Reader,
    channel: Channel,
    platforms: &[&str],
    bundles: &[Bundle],
) -> Result<String, AppError> {
    let releases = releases_of(state, reader.product.id).await?;
    let shown = shown(&releases, channel, reader, |r| {
        !matching(r, platforms, bundles).is_empty()
    });
    let Some(release) = shown.first() else {
        return Err(AppError::not_found());
    };
    let files: Vec<Listed<'_>> = matching(release, platforms, bundles)
        .into_iter()
        .map(|a| listed(state, reader, release, a))
        .collect();
    Ok(electron_yaml(release, &files))
}

/// Tauri's bundles by preference, for a platform's operating system.
fn tauri_bundles(os: &str) -> &'static [Bundle] {
    match os {
        "linux" => &[Bundle::AppImage, Bundle::Deb, Bundle::Rpm],
        "darwin" => &[Bundle::AppTarGz],
        _ => &[Bundle::Nsis, Bundle::Msi],
    }
}

/// `GET /v1/updates/{product}/{channel}/tauri/{target}/{arch}/{current_version}`: the
/// newest release the key may have for `{target}-{arch}` if newer than `current`, else
/// `None` (Tauri's 204).
pub async fn tauri(
    state: &AppState,
    reader: &Reader,
    channel: Channel,
    platform: &str,
    current: &semver::Version,
) -> Result<Option<TauriUpdate>, AppError> {
    let bundles = tauri_bundles(os_of(platform));
    let releases = releases_of(state, reader.product.id).await?;
    let shown = shown(&releases, channel, reader, |r| {
        !matching(r, &[platform], bundles).is_empty()
    });
    let Some(release) = shown.first() else {
        return Ok(None);
    };
    if release.semver() <= *current {
        return Ok(None);
    }
    let Some(artifact) = matching(release, &[platform], bundles).into_iter().next() else {
        return Ok(None);
    };
    let signature = tauri_signature(artifact);
    Ok(Some(TauriUpdate {
        version: release.version.clone(),
        notes: release.notes.clone(),
        pub_date: release
            .published_at
            .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true)),
        url: artifact_link(state, release, artifact, reader.holder),
        signature,
    }))
}

/// Tauri's `signature` of an artifact: the base64 of its minisign signature file.
fn tauri_signature(artifact: &ReleaseArtifact) -> String {
    use base64::Engine;
    artifact
        .signatures
        .as_ref()
        .map(|s| base64::engine::general_purpose::STANDARD.encode(&s.minisign))
        .unwrap_or_default()
}
/// Tauri's name of a bundle (`{{bundle_type}}`, the `{os}-{arch}-{bundle}` keys of a static
/// `latest.json`): `app` for the macOS archive.
fn tauri_bundle_name(b: Bundle) -> &'static str {
    match b {
        Bundle::AppTarGz => "app",
        other => other.as_str(),
    }
}

/// Each platform of `release` with files Tauri installs, those files by preference.
fn tauri_files(release: &Release) -> Vec<(String, Vec<&ReleaseArtifact>)> {
    let mut platforms: Vec<&str> = release
        .artifacts
        .iter()
        .map(|a| a.platform.as_str())
        .collect();
    platforms.sort_unstable();
    platforms.dedup();
    platforms
        .into_iter()
        .map(|p| {
            let files = matching(release, &[p], tauri_bundles(os_of(p)));
            (p.to_string(), files)
        })
        .filter(|(_, files)| !files.is_empty())
        .collect()
}

/// `GET /v1/updates/{product}/{channel}/tauri/latest.json`: Tauri's static JSON for the
/// newest release the reader may have with a file Tauri installs: `platforms` keyed
/// `{os}-{arch}` (the preferred bundle, what tauri-plugin-updater before 2.10 looks up)
/// and `{os}-{arch}-{bundle}` (each bundle, tried first by later versions); `None` when no
/// release has such a file (Tauri's 204).
pub async fn tauri_static(
    state: &AppState,
    reader: &Reader,
    channel: Channel,
) -> Result<Option<TauriStatic>, AppError> {
    let releases = releases_of(state, reader.product.id).await?;
    let shown = shown(&releases, channel, reader, |r| !tauri_files(r).is_empty());
    let Some(release) = shown.first() else {
        return Ok(None);
    };
    let mut platforms = BTreeMap::new();
    for (platform, files) in tauri_files(release) {
        for (i, a) in files.into_iter().enumerate() {
            let entry = TauriPlatform {
                url: artifact_link(state, release, a, reader.holder),
                signature: tauri_signature(a),
            };
            if i == 0 {
                platforms.insert(platform.clone(), entry.clone());
            }
            platforms.insert(format!("{platform}-{}", tauri_bundle_name(a.bundle)), entry);
        }
    }
    Ok(Some(TauriStatic {
        version: release.version.clone(),
        notes: release.notes.clone(),
        pub_date: release
            .published_at
            .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true)),
        platforms,
    }))
}

/// `GET /v1/updates/{product}/{channel}/appcast.xml`: every release the key may have with
/// a macOS archive, newest first.
pub async fn sparkle(
    state: &AppState,
    reader: &Reader,
    channel: Channel,
) -> Result<String, AppError> {
    const PLATFORMS: &[&str] = &["darwin-universal", "darwin-aarch64", "darwin-x86_64"];
    const BUNDLES: &[Bundle] = &[Bundle::Zip, Bundle::Dmg, Bundle::AppTarGz];
    let releases = releases_of(state, reader.product.id).await?;
    let shown = shown(&releases, channel, reader, |r| {
        !matching(r, PLATFORMS, BUNDLES).is_empty()
    });
    let items: Vec<AppcastItem<'_>> = shown
        .into_iter()
        .filter_map(|r| {
            let a = matching(r, PLATFORMS, BUNDLES).into_iter().next()?;
            Some(AppcastItem {
                release: r,
                enclosure: listed(state, reader, r, a),
            })
        })
        .collect();
    Ok(appcast(&reader.product.name, &items))
}

/// How a download names its reader: a signed link's key or customer, or the credential
/// itself (the updater's `Authorization` header, or `?key=`).
pub enum DownloadAuth {
    Signed {
        holder: Holder,
        expires: i64,
        signature: String,
    },
    Direct(Credential),
}

/// `GET /v1/updates/download/{release}/{name}`: the file, if the link is good (403
/// forged, 410 expired) and its key (or customer) may still have this release now.
pub async fn download(
    state: &AppState,
    release_id: ReleaseId,
    name: &str,
    auth: DownloadAuth,
) -> Result<(Delivery, StoredFile), AppError> {
    let release = state.store.get::<Release>(&release_id.key()).await?;
    let reader = match auth {
        DownloadAuth::Signed {
            holder,
            expires,
            signature,
        } => {
            let message = link_message(release_id, name, holder, expires);
            match signed_link::check(&state.hasher, &message, expires, &signature, state.now()) {
                Checked::Good => {}
                Checked::Expired => {
                    return Err(AppError::new(
                        Code::ResourceUnavailable,
                        "This download link has expired; read the feed again.",
                    ))
                }
                Checked::Forged => {
                    return Err(AppError::not_permitted("Not a valid download link."))
                }
            }
            let Some(release) = &release else {
                return Err(AppError::not_found());
            };
            match holder {
                Holder::Key(key_id) => {
                    let key = state
                        .store
                        .get::<LicenseKey>(&key_id.key())
                        .await?
                        .ok_or_else(AppError::not_found)?;
                    let product = state
                        .store
                        .get::<Product>(&release.value.product_id.key())
                        .await?
                        .ok_or_else(AppError::not_found)?;
                    reader_of(state, product.value, key.value).await?
                }
                // The customer's keys now, as a session's feed reads them.
                Holder::Customer(customer, checkout) => {
                    customer_reader(state, release.value.product_id, customer, checkout).await?
                }
            }
        }
        DownloadAuth::Direct(credential) => {
            let Some(release) = &release else {
                // No key checked yet: absent and unknown look alike.
                return Err(match credential {
                    Credential::Key(None) => unauthorized("A license key is required."),
                    _ => AppError::not_found(),
                });
            };
            reader(state, release.value.product_id, &credential).await?
        }
    };
    let Some(release) = release.map(|r| r.value) else {
        return Err(AppError::not_found());
    };
    // Any channel: a key that may have the release on some channel may download it.
    if release.status != ReleaseStatus::Published || !reader.sees(&release, Channel::Alpha) {
        return Err(AppError::not_found());
    }
    let artifact = release.artifact(name).ok_or_else(AppError::not_found)?;
    let file = state
        .store
        .get::<StoredFile>(&artifact.file_id.key())
        .await?
        .map(|f| f.value)
        .filter(|f| f.organization_id == release.organization_id)
        .ok_or_else(AppError::not_found)?;
    let delivery = crate::app::files::delivery(state, &file).await?;
    Ok((delivery, file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn electron_files_name_their_platform_and_channel() {
        let (c, p, b) = electron_file(Channel::Stable, "latest-linux.yml").unwrap();
        assert_eq!(
            (c, p, b[0]),
            (Channel::Stable, &["linux-x86_64"][..], Bundle::AppImage)
        );
        let (c, p, _) = electron_file(Channel::Stable, "beta-linux-arm64.yml").unwrap();
        assert_eq!((c, p), (Channel::Beta, &["linux-aarch64"][..]));
        let (c, p, b) = electron_file(Channel::Beta, "latest.yml").unwrap();
        assert_eq!(
            (c, p[0], b[0]),
            (Channel::Beta, "windows-x86_64", Bundle::Nsis)
        );
        let (c, _, b) = electron_file(Channel::Stable, "alpha-mac.yml").unwrap();
        assert_eq!((c, b[0]), (Channel::Alpha, Bundle::Zip));
        assert!(electron_file(Channel::Stable, "nightly-mac.yml").is_none());
        assert!(electron_file(Channel::Stable, "latest-linux.json").is_none());
        assert_eq!(segment("My App 1.0.AppImage"), "My%20App%201.0.AppImage");
    }
}
