use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tollgate_storage::{Record, UniqueKey};

use super::currency::Currency;
use super::ids::OrganizationId;
use super::tax_settings::{TaxBehaviorOption, TaxSettings};

/// A seller. Slugs are unique across all organizations (deleted ones included),
/// case-insensitively.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Organization {
    pub id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub name: String,
    pub slug: String,
    pub avatar_url: Option<String>,
    pub bio: Option<String>,
    pub company: Option<String>,
    pub blog: Option<String>,
    pub location: Option<String>,
    pub email: Option<String>,
    pub twitter_username: Option<String>,
    pub pledge_minimum_amount: i64,
    pub pledge_badge_show_amount: bool,
    pub default_upfront_split_to_contributors: Option<i64>,
    pub billing_email: Option<String>,
    pub default_badge_custom_content: Option<String>,
    pub total_monthly_spending_limit: Option<i64>,
    pub per_user_monthly_spending_limit: Option<i64>,
    pub profile_settings: ProfileSettings,
    pub feature_settings: FeatureSettings,
    pub subscription_settings: SubscriptionSettings,
    pub blocked_at: Option<DateTime<Utc>>,
    pub deleted_at: Option<DateTime<Utc>>,
    /// Which e-mails about sales the organization's address gets (format version 2).
    pub notification_settings: NotificationSettings,
    /// What a refund does beyond the money (format version 2).
    pub refund_settings: RefundSettings,
    /// Polar's `subscription_settings.prevent_trial_abuse` (format version 3): one trial
    /// per customer and product. On unless the seller turns it off.
    pub prevent_trial_abuse: bool,
    /// What buyers may do themselves in the customer portal (format version 4; Polar's
    /// `customer_portal_settings`).
    pub customer_portal_settings: CustomerPortalSettings,
    /// The seller's tax settings (format version 5; earlier versions: no tax).
    pub tax: TaxSettings,
    /// Polar's `default_tax_behavior` (format version 5; earlier versions: `location`, what
    /// the API answered).
    pub default_tax_behavior: TaxBehaviorOption,
    /// Polar's `default_presentment_currency` (format version 6; earlier versions: US
    /// dollars): the currency every active product has a price in, and a checkout's when
    /// neither the request nor the buyer's country picks one.
    pub default_presentment_currency: Currency,
    /// Polar's `embed_hosts` (format version 7; earlier versions: none): the hosts whose
    /// pages may embed the organization's checkout links, as host patterns
    /// (`shop.example.com`, `*.example.com`, `localhost:3000`), normalized.
    pub embed_hosts: Vec<String>,
    /// The language of the buyer-facing pages and e-mails when neither the checkout nor
    /// the buyer's browser names one Tollgate speaks (format version 7; earlier versions:
    /// `en`): a BCP 47 language tag.
    pub default_locale: String,
}

/// The language of organizations stored before [`Organization::default_locale`].
pub const DEFAULT_LOCALE: &str = "en";

/// Polar's `customer_portal_settings`: `usage.show`, `subscription.update_seats`,
/// `subscription.update_plan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomerPortalSettings {
    pub usage_show: bool,
    pub update_seats: bool,
    /// Buyers may switch their subscription to another recurring product.
    pub update_plan: bool,
}

impl CustomerPortalSettings {
    /// A new organization's: plan changes by the buyer on (Polar's default), the rest off.
    pub const NEW: CustomerPortalSettings = CustomerPortalSettings {
        usage_show: false,
        update_seats: false,
        update_plan: true,
    };

    /// An organization stored before the settings existed: everything off, as the API
    /// answered for it until then.
    pub const UPGRADED: CustomerPortalSettings = CustomerPortalSettings {
        usage_show: false,
        update_seats: false,
        update_plan: false,
    };
}

/// Format version 5: before `default_presentment_currency` (US dollars).
#[derive(Deserialize)]
struct OrganizationV5 {
    id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    name: String,
    slug: String,
    avatar_url: Option<String>,
    bio: Option<String>,
    company: Option<String>,
    blog: Option<String>,
    location: Option<String>,
    email: Option<String>,
    twitter_username: Option<String>,
    pledge_minimum_amount: i64,
    pledge_badge_show_amount: bool,
    default_upfront_split_to_contributors: Option<i64>,
    billing_email: Option<String>,
    default_badge_custom_content: Option<String>,
    total_monthly_spending_limit: Option<i64>,
    per_user_monthly_spending_limit: Option<i64>,
    profile_settings: ProfileSettings,
    feature_settings: FeatureSettings,
    subscription_settings: SubscriptionSettings,
    blocked_at: Option<DateTime<Utc>>,
    deleted_at: Option<DateTime<Utc>>,
    notification_settings: NotificationSettings,
    refund_settings: RefundSettings,
    prevent_trial_abuse: bool,
    customer_portal_settings: CustomerPortalSettings,
    tax: TaxSettings,
    default_tax_behavior: TaxBehaviorOption,
}

impl From<OrganizationV5> for Organization {
    fn from(v5: OrganizationV5) -> Self {
        Self {
            id: v5.id,
            created_at: v5.created_at,
            modified_at: v5.modified_at,
            name: v5.name,
            slug: v5.slug,
            avatar_url: v5.avatar_url,
            bio: v5.bio,
            company: v5.company,
            blog: v5.blog,
            location: v5.location,
            email: v5.email,
            twitter_username: v5.twitter_username,
            pledge_minimum_amount: v5.pledge_minimum_amount,
            pledge_badge_show_amount: v5.pledge_badge_show_amount,
            default_upfront_split_to_contributors: v5.default_upfront_split_to_contributors,
            billing_email: v5.billing_email,
            default_badge_custom_content: v5.default_badge_custom_content,
            total_monthly_spending_limit: v5.total_monthly_spending_limit,
            per_user_monthly_spending_limit: v5.per_user_monthly_spending_limit,
            profile_settings: v5.profile_settings,
            feature_settings: v5.feature_settings,
            subscription_settings: v5.subscription_settings,
            blocked_at: v5.blocked_at,
            deleted_at: v5.deleted_at,
            notification_settings: v5.notification_settings,
            refund_settings: v5.refund_settings,
            prevent_trial_abuse: v5.prevent_trial_abuse,
            customer_portal_settings: v5.customer_portal_settings,
            tax: v5.tax,
            default_tax_behavior: v5.default_tax_behavior,
            default_presentment_currency: Currency::DEFAULT,
            embed_hosts: Vec::new(),
            default_locale: DEFAULT_LOCALE.to_string(),
        }
    }
}

/// Format version 4: before the tax settings.
#[derive(Deserialize)]
struct OrganizationV4 {
    id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    name: String,
    slug: String,
    avatar_url: Option<String>,
    bio: Option<String>,
    company: Option<String>,
    blog: Option<String>,
    location: Option<String>,
    email: Option<String>,
    twitter_username: Option<String>,
    pledge_minimum_amount: i64,
    pledge_badge_show_amount: bool,
    default_upfront_split_to_contributors: Option<i64>,
    billing_email: Option<String>,
    default_badge_custom_content: Option<String>,
    total_monthly_spending_limit: Option<i64>,
    per_user_monthly_spending_limit: Option<i64>,
    profile_settings: ProfileSettings,
    feature_settings: FeatureSettings,
    subscription_settings: SubscriptionSettings,
    blocked_at: Option<DateTime<Utc>>,
    deleted_at: Option<DateTime<Utc>>,
    notification_settings: NotificationSettings,
    refund_settings: RefundSettings,
    prevent_trial_abuse: bool,
    customer_portal_settings: CustomerPortalSettings,
}

impl From<OrganizationV4> for Organization {
    fn from(v4: OrganizationV4) -> Self {
        Self {
            id: v4.id,
            created_at: v4.created_at,
            modified_at: v4.modified_at,
            name: v4.name,
            slug: v4.slug,
            avatar_url: v4.avatar_url,
            bio: v4.bio,
            company: v4.company,
            blog: v4.blog,
            location: v4.location,
            email: v4.email,
            twitter_username: v4.twitter_username,
            pledge_minimum_amount: v4.pledge_minimum_amount,
            pledge_badge_show_amount: v4.pledge_badge_show_amount,
            default_upfront_split_to_contributors: v4.default_upfront_split_to_contributors,
            billing_email: v4.billing_email,
            default_badge_custom_content: v4.default_badge_custom_content,
            total_monthly_spending_limit: v4.total_monthly_spending_limit,
            per_user_monthly_spending_limit: v4.per_user_monthly_spending_limit,
            profile_settings: v4.profile_settings,
            feature_settings: v4.feature_settings,
            subscription_settings: v4.subscription_settings,
            blocked_at: v4.blocked_at,
            deleted_at: v4.deleted_at,
            notification_settings: v4.notification_settings,
            refund_settings: v4.refund_settings,
            prevent_trial_abuse: v4.prevent_trial_abuse,
            customer_portal_settings: v4.customer_portal_settings,
            tax: TaxSettings::none(),
            default_tax_behavior: TaxBehaviorOption::Location,
            default_presentment_currency: Currency::DEFAULT,
            embed_hosts: Vec::new(),
            default_locale: DEFAULT_LOCALE.to_string(),
        }
    }
}

/// Format version 3: before `customer_portal_settings`.
#[derive(Deserialize)]
struct OrganizationV3 {
    id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    name: String,
    slug: String,
    avatar_url: Option<String>,
    bio: Option<String>,
    company: Option<String>,
    blog: Option<String>,
    location: Option<String>,
    email: Option<String>,
    twitter_username: Option<String>,
    pledge_minimum_amount: i64,
    pledge_badge_show_amount: bool,
    default_upfront_split_to_contributors: Option<i64>,
    billing_email: Option<String>,
    default_badge_custom_content: Option<String>,
    total_monthly_spending_limit: Option<i64>,
    per_user_monthly_spending_limit: Option<i64>,
    profile_settings: ProfileSettings,
    feature_settings: FeatureSettings,
    subscription_settings: SubscriptionSettings,
    blocked_at: Option<DateTime<Utc>>,
    deleted_at: Option<DateTime<Utc>>,
    notification_settings: NotificationSettings,
    refund_settings: RefundSettings,
    prevent_trial_abuse: bool,
}

impl From<OrganizationV3> for Organization {
    fn from(v3: OrganizationV3) -> Self {
        Self {
            id: v3.id,
            created_at: v3.created_at,
            modified_at: v3.modified_at,
            name: v3.name,
            slug: v3.slug,
            avatar_url: v3.avatar_url,
            bio: v3.bio,
            company: v3.company,
            blog: v3.blog,
            location: v3.location,
            email: v3.email,
            twitter_username: v3.twitter_username,
            pledge_minimum_amount: v3.pledge_minimum_amount,
            pledge_badge_show_amount: v3.pledge_badge_show_amount,
            default_upfront_split_to_contributors: v3.default_upfront_split_to_contributors,
            billing_email: v3.billing_email,
            default_badge_custom_content: v3.default_badge_custom_content,
            total_monthly_spending_limit: v3.total_monthly_spending_limit,
            per_user_monthly_spending_limit: v3.per_user_monthly_spending_limit,
            profile_settings: v3.profile_settings,
            feature_settings: v3.feature_settings,
            subscription_settings: v3.subscription_settings,
            blocked_at: v3.blocked_at,
            deleted_at: v3.deleted_at,
            notification_settings: v3.notification_settings,
            refund_settings: v3.refund_settings,
            prevent_trial_abuse: v3.prevent_trial_abuse,
            customer_portal_settings: CustomerPortalSettings::UPGRADED,
            tax: TaxSettings::none(),
            default_tax_behavior: TaxBehaviorOption::Location,
            default_presentment_currency: Currency::DEFAULT,
            embed_hosts: Vec::new(),
            default_locale: DEFAULT_LOCALE.to_string(),
        }
    }
}

/// A seller's choice about refunds (Tollgate's; set in the dashboard's settings).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefundSettings {
    /// A refund that gives back all of a one-time purchase revokes its benefits, even
    /// without `revoke_benefits`.
    pub revoke_benefits_on_full_refund: bool,
}

/// Copies of sales to the organization's e-mail: off until the seller asks (Polar's
/// `notification_settings`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotificationSettings {
    pub new_order: bool,
    pub new_subscription: bool,
}

/// Format version 2: before `prevent_trial_abuse`.
#[derive(Deserialize)]
struct OrganizationV2 {
    id: OrganizationId,
    created_at: DateTime<Utc>,
    modified_at: Option<DateTime<Utc>>,
    name: String,
    slug: String,
    avatar_url: Option<String>,
    bio: Option<String>,
    company: Option<String>,
    blog: Option<String>,
    location: Option<String>,
    email: Option<String>,
    twitter_username: Option<String>,
    pledge_minimum_amount: i64,
    pledge_badge_show_amount: bool,
    default_upfront_split_to_contributors: Option<i64>,
    billing_email: Option<String>,
    default_badge_custom_content: Option<String>,
    total_monthly_spending_limit: Option<i64>,
    per_user_monthly_spending_limit: Option<i64>,
    profile_settings: ProfileSettings,
    feature_settings: FeatureSettings,
    subscription_settings: SubscriptionSettings,
    blocked_at: Option<DateTime<Utc>>,
    deleted_at: Option<DateTime<Utc>>,
    notification_settings: NotificationSettings,
    refund_settings: RefundSettings,
}

impl From<OrganizationV2> for Organization {
    fn from(v2: OrganizationV2) -> Self {
        Self {
            id: v2.id,
            created_at: v2.created_at,
            modified_at: v2.modified_at,
            name: v2.name,
            slug: v2.slug,
            avatar_url: v2.avatar_url,
            bio: v2.bio,
            company: v2.company,
            blog: v2.blog,
            location: v2.location,
            email: v2.email,
            twitter_username: v2.twitter_username,
            pledge_minimum_amount: v2.pledge_minimum_amount,
            pledge_badge_show_amount: v2.pledge_badge_show_amount,
            default_upfront_split_to_contributors: v2.default_upfront_split_to_contributors,
            billing_email: v2.billing_email,
            default_badge_custom_content: v2.default_badge_custom_content,
            total_monthly_spending_limit: v2.total_monthly_spending_limit,
            per_user_monthly_spending_limit: v2.per_user_monthly_spending_limit,
            profile_settings: v2.profile_settings,
            feature_settings: v2.feature_settings,
            subscription_settings: v2.subscription_settings,
            blocked_at: v2.blocked_at,
            deleted_at: v2.deleted_at,
            notification_settings: v2.notification_settings,
            refund_settings: v2.refund_settings,
            prevent_trial_abuse: true,
            customer_portal_settings: CustomerPortalSettings::UPGRADED,
            tax: TaxSettings::none(),
            default_tax_behavior: TaxBehaviorOption::Location,
            default_presentment_currency: Currency::DEFAULT,
            embed_hosts: Vec::new(),
            default_locale: DEFAULT_LOCALE.to_string(),
        }
    }
}

/// Format version 1: before `notification_settings`.
#[derive(Deserialize)]
struct OrganizationV1 {
    pub id: OrganizationId,
    pub created_at: DateTime<Utc>,
    pub modified_at: Option<DateTime<Utc>>,
    pub name: String,
    pub slug: String,
    pub avatar_url: Option<String>,
    pub bio: Option<String>,
    pub company: Option<String>,
    pub blog: Option<String>,
    pub location: Option<String>,
    pub email: Option<String>,
    pub twitter_username: Option<String>,
    pub pledge_minimum_amount: i64,
    pub pledge_badge_show_amount: bool,
    pub default_upfront_split_to_contributors: Option<i64>,
    pub billing_email: Option<String>,
    pub default_badge_custom_content: Option<String>,
    pub total_monthly_spending_limit: Option<i64>,
    pub per_user_monthly_spending_limit: Option<i64>,
    pub profile_settings: ProfileSettings,
    pub feature_settings: FeatureSettings,
    pub subscription_settings: SubscriptionSettings,
    pub blocked_at: Option<DateTime<Utc>>,
    pub deleted_at: Option<DateTime<Utc>>,
}

/// Public profile settings. Unset keys are omitted from responses, as Polar stores them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileSettings {
    pub enabled: Option<bool>,
    pub description: Option<String>,
    pub featured_projects: Option<Vec<uuid::Uuid>>,
    pub featured_organizations: Option<Vec<uuid::Uuid>>,
    pub links: Option<Vec<String>>,
    pub subscribe: Option<SubscribeSettings>,
    pub accent_color: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscribeSettings {
    pub promote: bool,
    pub show_count: bool,
    pub count_free: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FeatureSettings {
    pub issue_funding_enabled: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionSettings {
    pub allow_multiple_subscriptions: bool,
    pub allow_customer_updates: bool,
    pub proration_behavior: ProrationBehavior,
}

impl Default for SubscriptionSettings {
    fn default() -> Self {
        Self {
            allow_multiple_subscriptions: false,
            allow_customer_updates: true,
            proration_behavior: ProrationBehavior::Prorate,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProrationBehavior {
    Invoice,
    Prorate,
}

pub const ORG_SLUG: &str = "org_slug";

/// Slugs no organization may take (Polar's list).
pub const RESERVED_SLUGS: &[&str] = &[
    "benefits",
    "donations",
    "issue-funding",
    "newsletters",
    "products",
    "careers",
    "legal",
    "docs",
    "login",
    "signup",
    "oauth2",
    "checkout",
    "embed",
    "maintainer",
    "dashboard",
    "feed",
    "for-you",
    "posts",
    "purchases",
    "funding",
    "rewards",
    "settings",
    "backoffice",
    "finance",
    ".well-known",
];

/// Why a slug was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlugError {
    TooShort,
    NotASlug,
    Reserved,
}

/// Lowercases and checks a slug: ASCII letters and digits in groups joined by single
/// hyphens, at least 3 characters, not reserved.
pub fn parse_slug(input: &str) -> Result<String, SlugError> {
    let slug = input.to_lowercase();
    if slug.chars().count() < 3 {
        return Err(SlugError::TooShort);
    }
    if RESERVED_SLUGS.contains(&slug.as_str()) {
        return Err(SlugError::Reserved);
    }
    let well_formed = slug.split('-').all(|part| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    });
    if !well_formed {
        return Err(SlugError::NotASlug);
    }
    Ok(slug)
}

impl Organization {
    pub fn new(id: OrganizationId, name: String, slug: String, now: DateTime<Utc>) -> Self {
        Self {
            id,
            created_at: now,
            modified_at: None,
            name,
            slug,
            avatar_url: None,
            bio: None,
            company: None,
            blog: None,
            location: None,
            email: None,
            twitter_username: None,
            pledge_minimum_amount: 2000,
            pledge_badge_show_amount: false,
            default_upfront_split_to_contributors: None,
            billing_email: None,
            default_badge_custom_content: None,
            total_monthly_spending_limit: None,
            per_user_monthly_spending_limit: None,
            profile_settings: ProfileSettings::default(),
            feature_settings: FeatureSettings::default(),
            subscription_settings: SubscriptionSettings::default(),
            blocked_at: None,
            deleted_at: None,
            notification_settings: NotificationSettings::default(),
            refund_settings: RefundSettings::default(),
            prevent_trial_abuse: true,
            customer_portal_settings: CustomerPortalSettings::NEW,
            tax: TaxSettings::none(),
            default_tax_behavior: TaxBehaviorOption::Location,
            default_presentment_currency: Currency::DEFAULT,
            embed_hosts: Vec::new(),
            default_locale: DEFAULT_LOCALE.to_string(),
        }
    }

    pub fn slug_key(slug: &str) -> UniqueKey {
        UniqueKey::new(ORG_SLUG, Vec::new(), slug.to_lowercase())
    }

    pub fn is_visible(&self) -> bool {
        self.deleted_at.is_none() && self.blocked_at.is_none()
    }
}

impl From<OrganizationV1> for Organization {
    fn from(v1: OrganizationV1) -> Self {
        Self {
            id: v1.id,
            created_at: v1.created_at,
            modified_at: v1.modified_at,
            name: v1.name,
            slug: v1.slug,
            avatar_url: v1.avatar_url,
            bio: v1.bio,
            company: v1.company,
            blog: v1.blog,
            location: v1.location,
            email: v1.email,
            twitter_username: v1.twitter_username,
            pledge_minimum_amount: v1.pledge_minimum_amount,
            pledge_badge_show_amount: v1.pledge_badge_show_amount,
            default_upfront_split_to_contributors: v1.default_upfront_split_to_contributors,
            billing_email: v1.billing_email,
            default_badge_custom_content: v1.default_badge_custom_content,
            total_monthly_spending_limit: v1.total_monthly_spending_limit,
            per_user_monthly_spending_limit: v1.per_user_monthly_spending_limit,
            profile_settings: v1.profile_settings,
            feature_settings: v1.feature_settings,
            subscription_settings: v1.subscription_settings,
            blocked_at: v1.blocked_at,
            deleted_at: v1.deleted_at,
            notification_settings: NotificationSettings::default(),
            refund_settings: RefundSettings::default(),
            prevent_trial_abuse: true,
            customer_portal_settings: CustomerPortalSettings::UPGRADED,
            tax: TaxSettings::none(),
            default_tax_behavior: TaxBehaviorOption::Location,
            default_presentment_currency: Currency::DEFAULT,
            embed_hosts: Vec::new(),
            default_locale: DEFAULT_LOCALE.to_string(),
        }
    }
}

impl Record for Organization {
    const COLLECTION: &'static str = "organization";
    /// 3: `prevent_trial_abuse` (versions 1 and 2 decode with it on); 4:
    /// `customer_portal_settings` (earlier versions decode with everything off); 5: `tax` and
    /// `default_tax_behavior` (earlier versions decode with no tax, `location`); 6:
    /// `default_presentment_currency` (earlier versions decode with US dollars); 7:
    /// `embed_hosts` and `default_locale` (earlier versions decode with none and `en`).
    const VERSION: u16 = 7;

    fn encode(&self) -> Result<Vec<u8>, tollgate_storage::StorageError> {
        tollgate_storage::codec::encode(self)
    }

    fn decode(version: u16, payload: &[u8]) -> Result<Self, tollgate_storage::StorageError> {
        match version {
            1 => Ok(tollgate_storage::codec::decode::<OrganizationV1>(
                Self::COLLECTION,
                1,
                payload,
            )?
            .into()),
            2 => Ok(tollgate_storage::codec::decode::<OrganizationV2>(
                Self::COLLECTION,
                2,
                payload,
            )?
            .into()),
            3 => Ok(tollgate_storage::codec::decode::<OrganizationV3>(
                Self::COLLECTION,
                3,
                payload,
            )?
            .into()),
            4 => Ok(tollgate_storage::codec::decode::<OrganizationV4>(
                Self::COLLECTION,
                4,
                payload,
            )?
            .into()),
            5 => Ok(tollgate_storage::codec::decode::<OrganizationV5>(
                Self::COLLECTION,
                5,
                payload,
            )?
            .into()),
            // Version 6 is version 7 without the two fields at the end: bincode is
            // positional, so their defaults are appended and the whole read as version 7.
            6 => {
                let mut bytes = payload.to_vec();
                bytes.extend(tollgate_storage::codec::encode(&(
                    Vec::<String>::new(),
                    DEFAULT_LOCALE,
                ))?);
                tollgate_storage::codec::decode(Self::COLLECTION, 6, &bytes)
            }
            7 => tollgate_storage::codec::decode(Self::COLLECTION, version, payload),
            v => Err(tollgate_storage::codec::unknown_version(
                Self::COLLECTION,
                v,
            )),
        }
    }

    /// Its changes are webhook events.
    const FEED: bool = true;
    const UNIQUES: &'static [&'static str] = &[ORG_SLUG];

    fn id_key(&self) -> Vec<u8> {
        self.id.key()
    }

    /// The slug stays taken after a soft delete, as in Polar.
    fn unique_keys(&self) -> Vec<UniqueKey> {
        vec![Organization::slug_key(&self.slug)]
    }
}

/// A new organization, as its creator asks for it (its fields' shapes checked; whether the
/// slug is free is the use case's to check).
#[derive(Debug, Clone, PartialEq)]
pub struct NewOrganization {
    pub name: String,
    pub slug: String,
    pub avatar_url: Option<String>,
    /// `feature_settings.issue_funding_enabled`, when the settings are given.
    pub issue_funding_enabled: Option<bool>,
    /// The subscription settings and `prevent_trial_abuse`, when given.
    pub subscription_settings: Option<(SubscriptionSettings, bool)>,
    /// `None`: US dollars.
    pub default_presentment_currency: Option<Currency>,
}

/// A change of an organization's profile and settings. `None` leaves a field as it is;
/// for a field that can be unset, `Some(None)` unsets it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrganizationChange {
    pub name: Option<String>,
    pub avatar_url: Option<Option<String>>,
    pub default_upfront_split_to_contributors: Option<Option<i64>>,
    pub pledge_badge_show_amount: Option<bool>,
    pub pledge_minimum_amount: Option<i64>,
    pub billing_email: Option<Option<String>>,
    pub email: Option<Option<String>>,
    pub bio: Option<Option<String>>,
    pub company: Option<Option<String>>,
    pub blog: Option<Option<String>>,
    pub location: Option<Option<String>>,
    pub twitter_username: Option<Option<String>>,
    pub default_badge_custom_content: Option<Option<String>>,
    pub total_monthly_spending_limit: Option<Option<i64>>,
    pub per_user_monthly_spending_limit: Option<Option<i64>>,
    pub profile_settings: Option<ProfileChange>,
    pub issue_funding_enabled: Option<Option<bool>>,
    /// The subscription settings and `prevent_trial_abuse`.
    pub subscription_settings: Option<(SubscriptionSettings, bool)>,
    pub notification_settings: Option<NotificationSettings>,
    pub customer_portal_settings: Option<CustomerPortalSettings>,
    /// The whole `tax` object after the change (the use case merges and validates it).
    pub tax: Option<TaxSettings>,
    pub default_tax_behavior: Option<TaxBehaviorOption>,
    /// The use case refuses it while an active product has no price in it.
    pub default_presentment_currency: Option<Currency>,
    /// Normalized host patterns (checked by the caller).
    pub embed_hosts: Option<Vec<String>>,
    /// A BCP 47 language tag (checked by the caller).
    pub default_locale: Option<String>,
}

/// A change of the public profile's keys (see [`OrganizationChange`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProfileChange {
    pub enabled: Option<Option<bool>>,
    pub description: Option<Option<String>>,
    pub featured_projects: Option<Option<Vec<uuid::Uuid>>>,
    pub featured_organizations: Option<Option<Vec<uuid::Uuid>>>,
    pub links: Option<Option<Vec<String>>>,
    pub accent_color: Option<Option<String>>,
    pub subscribe: Option<Option<SubscribeSettings>>,
}

fn set<T>(target: &mut T, change: Option<T>) {
    if let Some(v) = change {
        *target = v;
    }
}

/// Why a per-user spending limit does not fit the total one, if it does not.
pub fn spending_limits_error(total: Option<i64>, per_user: Option<i64>) -> Option<&'static str> {
    match (total, per_user) {
        (None, Some(_)) => {
            Some("Value error, Per user spending limit requires a total spending limit.")
        }
        (Some(t), Some(p)) if p > t => {
            Some("Value error, Per user spending limit cannot exceed the total spending limit.")
        }
        _ => None,
    }
}

impl OrganizationChange {
    /// The spending limits after the change, of an organization that has `current`'s.
    pub fn spending_limits(&self, current: &Organization) -> (Option<i64>, Option<i64>) {
        (
            self.total_monthly_spending_limit
                .unwrap_or(current.total_monthly_spending_limit),
            self.per_user_monthly_spending_limit
                .unwrap_or(current.per_user_monthly_spending_limit),
        )
    }

    /// The organization with the change made (the rules across fields are checked apart).
    pub fn apply(&self, org: &mut Organization) {
        set(&mut org.name, self.name.clone());
        set(&mut org.avatar_url, self.avatar_url.clone());
        set(
            &mut org.default_upfront_split_to_contributors,
            self.default_upfront_split_to_contributors,
        );
        set(
            &mut org.pledge_badge_show_amount,
            self.pledge_badge_show_amount,
        );
        set(&mut org.pledge_minimum_amount, self.pledge_minimum_amount);
        set(&mut org.billing_email, self.billing_email.clone());
        set(&mut org.email, self.email.clone());
        set(&mut org.bio, self.bio.clone());
        set(&mut org.company, self.company.clone());
        set(&mut org.blog, self.blog.clone());
        set(&mut org.location, self.location.clone());
        set(&mut org.twitter_username, self.twitter_username.clone());
        set(
            &mut org.default_badge_custom_content,
            self.default_badge_custom_content.clone(),
        );
        let (total, per_user) = self.spending_limits(org);
        org.total_monthly_spending_limit = total;
        org.per_user_monthly_spending_limit = per_user;
        if let Some(p) = &self.profile_settings {
            let s = &mut org.profile_settings;
            set(&mut s.enabled, p.enabled);
            set(&mut s.description, p.description.clone());
            set(&mut s.featured_projects, p.featured_projects.clone());
            set(
                &mut s.featured_organizations,
                p.featured_organizations.clone(),
            );
            set(&mut s.links, p.links.clone());
            set(&mut s.accent_color, p.accent_color.clone());
            set(&mut s.subscribe, p.subscribe.clone());
        }
        set(
            &mut org.feature_settings.issue_funding_enabled,
            self.issue_funding_enabled,
        );
        if let Some((settings, prevent_trial_abuse)) = &self.subscription_settings {
            org.subscription_settings = settings.clone();
            org.prevent_trial_abuse = *prevent_trial_abuse;
        }
        set(&mut org.notification_settings, self.notification_settings);
        set(
            &mut org.customer_portal_settings,
            self.customer_portal_settings,
        );
        set(&mut org.tax, self.tax.clone());
        set(&mut org.default_tax_behavior, self.default_tax_behavior);
        set(
            &mut org.default_presentment_currency,
            self.default_presentment_currency,
        );
        set(&mut org.embed_hosts, self.embed_hosts.clone());
        set(&mut org.default_locale, self.default_locale.clone());
    }
}

#[cfg(test)]
#[path = "organization_tests.rs"]
mod tests;
