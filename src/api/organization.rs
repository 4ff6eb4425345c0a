//! Organizations in Polar's shapes: the `Organization` view with its settings objects, and
//! the `OrganizationCreate` / `OrganizationUpdate` bodies.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use serde_json::Value;

use super::Maybe;
use crate::domain::organization::{
    self as domain, parse_slug, spending_limits_error, FeatureSettings, NewOrganization,
    Organization, OrganizationChange, ProfileChange, ProfileSettings, SlugError, SubscribeSettings,
};
use crate::error::{ApiError, FieldError};
use crate::loc;
use crate::validate::Validator;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProrationBehavior {
    Invoice,
    Prorate,
}

impl From<domain::ProrationBehavior> for ProrationBehavior {
    fn from(p: domain::ProrationBehavior) -> Self {
        match p {
            domain::ProrationBehavior::Invoice => ProrationBehavior::Invoice,
            domain::ProrationBehavior::Prorate => ProrationBehavior::Prorate,
        }
    }
}

impl From<ProrationBehavior> for domain::ProrationBehavior {
    fn from(p: ProrationBehavior) -> Self {
        match p {
            ProrationBehavior::Invoice => domain::ProrationBehavior::Invoice,
            ProrationBehavior::Prorate => domain::ProrationBehavior::Prorate,
        }
    }
}

/// Sent in every organization, and accepted whole by create and update.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OrganizationSubscriptionSettings {
    pub allow_multiple_subscriptions: bool,
    pub allow_customer_updates: bool,
    pub proration_behavior: ProrationBehavior,
    /// Days a customer keeps the benefits of a subscription whose payment failed: Tollgate
    /// revokes at once, so 0 (another value is a 422).
    #[serde(default)]
    pub benefit_revocation_grace_period: i64,
    /// One trial per customer (by e-mail address) and product: a buyer who already had a
    /// trial of the product is refused another (403 `TrialAlreadyRedeemed`). On unless
    /// turned off (Polar's default is off).
    #[serde(default = "always")]
    pub prevent_trial_abuse: bool,
}

fn always() -> bool {
    true
}

impl From<&domain::SubscriptionSettings> for OrganizationSubscriptionSettings {
    fn from(s: &domain::SubscriptionSettings) -> Self {
        Self {
            allow_multiple_subscriptions: s.allow_multiple_subscriptions,
            allow_customer_updates: s.allow_customer_updates,
            proration_behavior: s.proration_behavior.into(),
            benefit_revocation_grace_period: 0,
            prevent_trial_abuse: true,
        }
    }
}

impl OrganizationSubscriptionSettings {
    /// The settings Tollgate cannot honour, as 422 items under `loc`.
    pub fn check_supported(&self, v: &mut crate::validate::Validator, loc: Vec<serde_json::Value>) {
        let at = |field: &str| {
            let mut l = loc.clone();
            l.push(field.into());
            l
        };
        if self.benefit_revocation_grace_period != 0 {
            v.unsupported(
                at("benefit_revocation_grace_period"),
                self.benefit_revocation_grace_period.into(),
                "A grace period before benefits are revoked",
            );
        }
    }
}

/// A link to one of the organization's profiles elsewhere.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OrganizationSocialLink {
    /// `x`, `github`, `facebook`, `instagram`, `youtube`, `tiktok`, `linkedin`, `threads`,
    /// `discord` or `other`.
    pub platform: &'static str,
    pub url: String,
}

/// Which e-mails Tollgate sends the organization's customers: none yet.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OrganizationCustomerEmailSettings {
    pub order_confirmation: bool,
    pub payment_method_expiration_reminder: bool,
    pub subscription_cancellation: bool,
    pub subscription_confirmation: bool,
    pub subscription_cycled: bool,
    pub subscription_cycled_after_trial: bool,
    pub subscription_past_due: bool,
    pub subscription_paused: bool,
    pub subscription_resumed: bool,
    pub subscription_renewal_reminder: bool,
    pub subscription_revoked: bool,
    pub subscription_trial_conversion_reminder: bool,
    pub subscription_uncanceled: bool,
    pub subscription_updated: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CustomerPortalUsageSettings {
    pub show: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CustomerPortalSubscriptionSettings {
    pub update_seats: bool,
    pub update_plan: bool,
}

/// What the customer portal lets customers do (`subscription.update_plan`: switch their
/// subscription to another recurring product; the other two are stored, not used yet).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OrganizationCustomerPortalSettings {
    pub usage: CustomerPortalUsageSettings,
    pub subscription: CustomerPortalSubscriptionSettings,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OrganizationDisputeSettings {
    /// Disputes under this amount are accepted without a fight; `null`: none is.
    pub auto_accept_below_amount: Option<i64>,
}

/// What the organization may do on Tollgate.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OrganizationCapabilities {
    pub checkout_payments: bool,
    pub subscription_renewals: bool,
    pub payouts: bool,
    pub refunds: bool,
    pub api_access: bool,
    pub dashboard_access: bool,
}

/// Which copies of sales go to the organization's e-mail (`email`): off until set.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OrganizationNotificationSettings {
    pub new_order: bool,
    pub new_subscription: bool,
}

impl From<&OrganizationSubscriptionSettings> for domain::SubscriptionSettings {
    fn from(s: &OrganizationSubscriptionSettings) -> Self {
        Self {
            allow_multiple_subscriptions: s.allow_multiple_subscriptions,
            allow_customer_updates: s.allow_customer_updates,
            proration_behavior: s.proration_behavior.into(),
        }
    }
}

/// The public profile; only the keys that were set are sent (Polar stores the settings as
/// a JSON object holding the keys it was given, hence the left-out keys).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OrganizationProfileSettings {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub enabled: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub featured_projects: Option<Vec<uuid::Uuid>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub featured_organizations: Option<Vec<uuid::Uuid>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub links: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub subscribe: Option<OrganizationSubscribePromoteSettings>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub accent_color: Option<String>,
}

impl From<&ProfileSettings> for OrganizationProfileSettings {
    fn from(p: &ProfileSettings) -> Self {
        Self {
            enabled: p.enabled,
            description: p.description.clone(),
            featured_projects: p.featured_projects.clone(),
            featured_organizations: p.featured_organizations.clone(),
            links: p.links.clone(),
            subscribe: p.subscribe.as_ref().map(Into::into),
            accent_color: p.accent_color.clone(),
        }
    }
}

/// `profile_settings.subscribe`; in a request, a key left out is true.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OrganizationSubscribePromoteSettings {
    #[serde(default = "yes")]
    pub promote: bool,
    #[serde(default = "yes")]
    pub show_count: bool,
    #[serde(default = "yes")]
    pub count_free: bool,
}

fn yes() -> bool {
    true
}

impl From<&SubscribeSettings> for OrganizationSubscribePromoteSettings {
    fn from(s: &SubscribeSettings) -> Self {
        Self {
            promote: s.promote,
            show_count: s.show_count,
            count_free: s.count_free,
        }
    }
}

impl From<&OrganizationSubscribePromoteSettings> for SubscribeSettings {
    fn from(s: &OrganizationSubscribePromoteSettings) -> Self {
        Self {
            promote: s.promote,
            show_count: s.show_count,
            count_free: s.count_free,
        }
    }
}

/// The feature flags; only the keys that were set are sent (see
/// [`OrganizationProfileSettings`]).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OrganizationFeatureSettings {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub issue_funding_enabled: Option<bool>,
}

impl From<&FeatureSettings> for OrganizationFeatureSettings {
    fn from(f: &FeatureSettings) -> Self {
        Self {
            issue_funding_enabled: f.issue_funding_enabled,
        }
    }
}

/// The `Organization` schema.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Organization)]
pub struct OrganizationView {
    pub id: uuid::Uuid,
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
    pub profile_settings: OrganizationProfileSettings,
    pub feature_settings: OrganizationFeatureSettings,
    pub subscription_settings: OrganizationSubscriptionSettings,
    // Polar's 2026 fields (today's SDKs require them), from the same record.
    /// `subscription_settings.proration_behavior`, where Polar now keeps it.
    pub proration_behavior: ProrationBehavior,
    /// `subscription_settings.allow_customer_updates`, where Polar now keeps it.
    pub allow_customer_updates: bool,
    /// The `blog` URL.
    pub website: Option<String>,
    /// From `twitter_username`.
    pub socials: Vec<OrganizationSocialLink>,
    /// `active` (a Tollgate organization sells as soon as it exists), `blocked` when
    /// blocked.
    pub status: &'static str,
    pub details_submitted_at: Option<DateTime<Utc>>,
    pub onboarding_resubmission_requested_at: Option<DateTime<Utc>>,
    pub sso_enforced: bool,
    /// The currency every active product has a price in, and a checkout's when neither
    /// the request nor the buyer's country picks one (`usd` unless changed).
    pub default_presentment_currency: String,
    /// `location` (exclusive in the US, Canada and India, inclusive elsewhere), `inclusive`
    /// or `exclusive`: the behaviour of prices that name none.
    pub default_tax_behavior: &'static str,
    /// The seller's tax settings (Tollgate's additive object).
    pub tax: crate::api::organization_tax::OrganizationTax,
    pub customer_email_settings: OrganizationCustomerEmailSettings,
    pub customer_portal_settings: OrganizationCustomerPortalSettings,
    pub dispute_settings: OrganizationDisputeSettings,
    /// The hosts whose pages may embed the organization's checkout links (normalized: a
    /// host and a port unless the default, `*.` for subdomains, or an app origin).
    pub embed_hosts: Vec<String>,
    /// Whether an embedding page's origin must match `embed_hosts`: always on Tollgate.
    pub embed_hosts_enforced: bool,
    pub account_id: Option<uuid::Uuid>,
    pub payout_account_id: Option<uuid::Uuid>,
    pub capabilities: OrganizationCapabilities,
    pub notification_settings: OrganizationNotificationSettings,
}

impl From<&Organization> for OrganizationView {
    fn from(o: &Organization) -> Self {
        OrganizationView {
            id: o.id.0,
            created_at: o.created_at,
            modified_at: o.modified_at,
            name: o.name.clone(),
            slug: o.slug.clone(),
            avatar_url: o.avatar_url.clone(),
            bio: o.bio.clone(),
            company: o.company.clone(),
            blog: o.blog.clone(),
            location: o.location.clone(),
            email: o.email.clone(),
            twitter_username: o.twitter_username.clone(),
            pledge_minimum_amount: o.pledge_minimum_amount,
            pledge_badge_show_amount: o.pledge_badge_show_amount,
            default_upfront_split_to_contributors: o.default_upfront_split_to_contributors,
            profile_settings: (&o.profile_settings).into(),
            feature_settings: (&o.feature_settings).into(),
            subscription_settings: OrganizationSubscriptionSettings {
                prevent_trial_abuse: o.prevent_trial_abuse,
                ..(&o.subscription_settings).into()
            },
            proration_behavior: o.subscription_settings.proration_behavior.into(),
            allow_customer_updates: o.subscription_settings.allow_customer_updates,
            website: o.blog.clone(),
            socials: o
                .twitter_username
                .iter()
                .filter(|u| !u.is_empty())
                .map(|u| OrganizationSocialLink {
                    platform: "x",
                    url: format!("https://x.com/{u}"),
                })
                .collect(),
            status: if o.blocked_at.is_some() {
                "blocked"
            } else {
                "active"
            },
            details_submitted_at: None,
            onboarding_resubmission_requested_at: None,
            sso_enforced: false,
            default_presentment_currency: o.default_presentment_currency.to_string(),
            default_tax_behavior: o.default_tax_behavior.as_str(),
            tax: crate::api::organization_tax::OrganizationTax::of(o),
            customer_email_settings: OrganizationCustomerEmailSettings {
                order_confirmation: false,
                payment_method_expiration_reminder: false,
                subscription_cancellation: false,
                subscription_confirmation: false,
                subscription_cycled: false,
                subscription_cycled_after_trial: false,
                subscription_past_due: false,
                subscription_paused: false,
                subscription_resumed: false,
                subscription_renewal_reminder: false,
                subscription_revoked: false,
                subscription_trial_conversion_reminder: false,
                subscription_uncanceled: false,
                subscription_updated: false,
            },
            customer_portal_settings: OrganizationCustomerPortalSettings {
                usage: CustomerPortalUsageSettings {
                    show: o.customer_portal_settings.usage_show,
                },
                subscription: CustomerPortalSubscriptionSettings {
                    update_seats: o.customer_portal_settings.update_seats,
                    update_plan: o.customer_portal_settings.update_plan,
                },
            },
            dispute_settings: OrganizationDisputeSettings {
                auto_accept_below_amount: None,
            },
            embed_hosts: o.embed_hosts.clone(),
            embed_hosts_enforced: true,
            account_id: None,
            payout_account_id: None,
            capabilities: OrganizationCapabilities {
                checkout_payments: o.blocked_at.is_none(),
                subscription_renewals: o.blocked_at.is_none(),
                payouts: false,
                refunds: false,
                api_access: o.blocked_at.is_none(),
                dashboard_access: o.blocked_at.is_none(),
            },
            notification_settings: OrganizationNotificationSettings {
                new_order: o.notification_settings.new_order,
                new_subscription: o.notification_settings.new_subscription,
            },
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct OrganizationCreate {
    /// At least 3 characters.
    pub name: String,
    /// Lower-case letters, digits and dashes; at least 3 characters; not a reserved word.
    pub slug: String,
    #[serde(default)]
    #[schema(nullable = false)]
    pub avatar_url: Option<String>,
    #[serde(default)]
    #[schema(value_type = OrganizationFeatureSettings)]
    pub feature_settings: Option<FeatureSettingsInput>,
    #[serde(default)]
    #[schema(nullable = false)]
    pub subscription_settings: Option<OrganizationSubscriptionSettings>,
    /// One of Polar's presentment currencies (lowercase); `usd` when absent.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub default_presentment_currency: Option<serde_json::Value>,
}

/// Every field optional; an explicit `null` clears the nullable ones.
#[derive(Debug, Deserialize, ToSchema)]
pub struct OrganizationUpdate {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub name: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub avatar_url: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub default_upfront_split_to_contributors: Maybe<i64>,
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub pledge_badge_show_amount: Maybe<bool>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub pledge_minimum_amount: Maybe<i64>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub billing_email: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub default_badge_custom_content: Maybe<String>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub total_monthly_spending_limit: Maybe<i64>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub per_user_monthly_spending_limit: Maybe<i64>,
    #[serde(default)]
    #[schema(value_type = Option<OrganizationProfileSettings>)]
    pub profile_settings: Maybe<ProfileSettingsInput>,
    #[serde(default)]
    #[schema(value_type = Option<OrganizationFeatureSettings>)]
    pub feature_settings: Maybe<FeatureSettingsUpdate>,
    #[serde(default)]
    #[schema(value_type = Option<OrganizationSubscriptionSettings>)]
    pub subscription_settings: Maybe<OrganizationSubscriptionSettings>,
    /// Copies of orders (and new subscriptions) to the organization's e-mail.
    #[serde(default)]
    #[schema(value_type = Option<OrganizationNotificationSettings>)]
    pub notification_settings: Maybe<OrganizationNotificationSettings>,
    /// What buyers may do in the customer portal (all three keys; `null`: unchanged).
    #[serde(default)]
    #[schema(value_type = Option<OrganizationCustomerPortalSettings>)]
    pub customer_portal_settings: Maybe<OrganizationCustomerPortalSettings>,
    /// `location`, `inclusive` or `exclusive`.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub default_tax_behavior: Maybe<serde_json::Value>,
    /// One of Polar's presentment currencies (lowercase); refused while an active product
    /// has no price in it. `null`: unchanged.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub default_presentment_currency: Maybe<serde_json::Value>,
    /// The seller's tax settings (each key optional: absent keys are kept).
    #[serde(default)]
    #[schema(value_type = Option<crate::api::organization_tax::OrganizationTaxUpdate>)]
    pub tax: Maybe<serde_json::Value>,
    /// The hosts whose pages may embed the organization's checkout links, replacing the
    /// list: a host and an optional port, without a scheme (HTTPS always, HTTP too for
    /// `localhost`, `.localhost` and `.local` names and private addresses);
    /// `*.example.com` for its subdomains (not itself); an app origin written whole
    /// (`chrome-extension://abcdef`). Stored normalized. `null`: unchanged.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    pub embed_hosts: Maybe<serde_json::Value>,
    // Public profile fields Polar shows but edits elsewhere (not in its `OrganizationUpdate`
    // schema); accepted here so they can be set.
    #[serde(default)]
    #[schema(ignore)]
    pub bio: Maybe<String>,
    #[serde(default)]
    #[schema(ignore)]
    pub company: Maybe<String>,
    #[serde(default)]
    #[schema(ignore)]
    pub blog: Maybe<String>,
    #[serde(default)]
    #[schema(ignore)]
    pub location: Maybe<String>,
    #[serde(default)]
    #[schema(ignore)]
    pub email: Maybe<String>,
    #[serde(default)]
    #[schema(ignore)]
    pub twitter_username: Maybe<String>,
}

/// `feature_settings` of a create (the document's `OrganizationFeatureSettings`): a flag
/// left out is false.
#[derive(Debug, Deserialize)]
pub struct FeatureSettingsInput {
    #[serde(default)]
    pub issue_funding_enabled: bool,
}

/// `feature_settings` of an update: a flag left out is unchanged, `null` unsets it.
#[derive(Debug, Deserialize)]
pub struct FeatureSettingsUpdate {
    #[serde(default)]
    pub issue_funding_enabled: Maybe<bool>,
}

/// `profile_settings` of an update (the document's `OrganizationProfileSettings`): a key
/// left out is unchanged, `null` unsets it.
#[derive(Debug, Deserialize)]
pub struct ProfileSettingsInput {
    #[serde(default)]
    pub enabled: Maybe<bool>,
    #[serde(default)]
    pub description: Maybe<String>,
    #[serde(default)]
    pub featured_projects: Maybe<Vec<uuid::Uuid>>,
    #[serde(default)]
    pub featured_organizations: Maybe<Vec<uuid::Uuid>>,
    #[serde(default)]
    pub links: Maybe<Vec<String>>,
    #[serde(default)]
    pub subscribe: Maybe<OrganizationSubscribePromoteSettings>,
    #[serde(default)]
    pub accent_color: Maybe<String>,
}

fn slug_error(e: SlugError, input: &str) -> FieldError {
    let msg = match e {
        SlugError::TooShort => {
            return FieldError::new(
                "string_too_short",
                loc!["body", "slug"],
                "String should have at least 3 characters",
                Value::from(input),
            )
            .with_ctx(serde_json::json!({"min_length": 3}))
        }
        SlugError::NotASlug => {
            "Value error, The slug can only contain ASCII letters, numbers and hyphens."
        }
        SlugError::Reserved => "Value error, This slug is reserved.",
    };
    FieldError::new("value_error", loc!["body", "slug"], msg, Value::from(input))
}

impl OrganizationCreate {
    /// The command this body asks for, or a 422 naming every field that breaks a rule.
    pub fn into_command(self) -> Result<NewOrganization, ApiError> {
        let mut v = Validator::new();
        let name = self.name.trim().to_string();
        if v.min_chars(loc!["body", "name"], &name, 3) {
            v.header_safe(loc!["body", "name"], &name);
        }
        let slug = match parse_slug(&self.slug) {
            Ok(s) => Some(s),
            Err(e) => {
                v.push(slug_error(e, &self.slug));
                None
            }
        };
        if let Some(url) = &self.avatar_url {
            v.http_url(loc!["body", "avatar_url"], url);
        }
        if let Some(s) = &self.subscription_settings {
            s.check_supported(&mut v, loc!["body", "subscription_settings"]);
        }
        let currency = match &self.default_presentment_currency {
            Some(c) if !c.is_null() => presentment_currency(&mut v, c),
            _ => None,
        };
        v.finish()?;
        let Some(slug) = slug else {
            return Err(ApiError::internal("slug validated but missing"));
        };
        Ok(NewOrganization {
            name,
            slug,
            avatar_url: self.avatar_url,
            issue_funding_enabled: self.feature_settings.map(|f| f.issue_funding_enabled),
            subscription_settings: self
                .subscription_settings
                .map(|s| ((&s).into(), s.prevent_trial_abuse)),
            default_presentment_currency: currency,
        })
    }
}

/// A form's `default_presentment_currency` as the update's field: a code of any case,
/// empty for unchanged.
pub fn currency_update(code: &str) -> Maybe<Value> {
    match code.trim() {
        "" => Maybe::Absent,
        code => Maybe::Value(Value::from(code.to_ascii_lowercase())),
    }
}

/// A form's embed hosts (one entry a line, blank lines skipped) as the update's
/// `embed_hosts`: an empty form clears the list.
pub fn embed_hosts_lines(lines: &str) -> Maybe<Value> {
    Maybe::Value(
        lines
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(Value::from)
            .collect(),
    )
}

/// `default_presentment_currency`: one of Polar's presentment currencies, else its 422 in
/// `v`.
fn presentment_currency(
    v: &mut Validator,
    value: &Value,
) -> Option<crate::domain::currency::Currency> {
    let loc = loc!["body", "default_presentment_currency"];
    match value.as_str() {
        Some(code) => match crate::domain::currency::Currency::parse(code) {
            Ok(c) => Some(c),
            Err(_) => {
                v.push(crate::api::price::currency_mismatch(loc, code));
                None
            }
        },
        None => {
            v.push(FieldError::new(
                "string_type",
                loc,
                "Input should be a valid string",
                value.clone(),
            ));
            None
        }
    }
}

/// `embed_hosts`: a list of strings, each a host pattern (Polar's `EmbedHostsInput`),
/// normalized and without duplicates; else its 422 in `v` (the first refused entry, at the
/// list, as pydantic's list validator reports it).
fn embed_hosts(v: &mut Validator, value: &Value) -> Option<Vec<String>> {
    let Some(items) = value.as_array() else {
        v.push(FieldError::new(
            "list_type",
            loc!["body", "embed_hosts"],
            "Input should be a valid list",
            value.clone(),
        ));
        return None;
    };
    let mut entries = Vec::with_capacity(items.len());
    let mut typed = true;
    for (i, item) in items.iter().enumerate() {
        match item.as_str() {
            Some(s) => entries.push(s),
            None => {
                typed = false;
                v.push(FieldError::new(
                    "string_type",
                    loc!["body", "embed_hosts", i],
                    "Input should be a valid string",
                    item.clone(),
                ));
            }
        }
    }
    if !typed {
        return None;
    }
    match crate::validate::embed_hosts::validate_embed_hosts(&entries) {
        Ok(hosts) => Some(hosts),
        Err(e) => {
            v.push(FieldError::new(
                "value_error",
                loc!["body", "embed_hosts"],
                format!("Value error, {e}"),
                value.clone(),
            ));
            None
        }
    }
}

/// A text field that can be cleared: `null` or blank unsets it.
fn text_change(value: Maybe<String>) -> Option<Option<String>> {
    value
        .into_update()
        .map(|v| v.filter(|s| !s.trim().is_empty()))
}

impl OrganizationUpdate {
    /// The command this body asks for, or a 422 naming every field that breaks a rule, in
    /// the order of the fields. `stored` is the organization as it is: a per-user spending
    /// limit is checked against the total it will have (the use case checks it again
    /// against the record it changes).
    pub fn into_command(self, stored: &Organization) -> Result<OrganizationChange, ApiError> {
        let mut v = Validator::new();
        let mut change = OrganizationChange::default();
        if let Maybe::Value(name) = &self.name {
            let name = name.trim();
            // A blank name means "unchanged", as in Polar.
            if !name.is_empty()
                && v.min_chars(loc!["body", "name"], name, 3)
                && v.header_safe(loc!["body", "name"], name)
            {
                change.name = Some(name.to_string());
            }
        }
        change.avatar_url = match self.avatar_url {
            Maybe::Value(url) => v
                .http_url(loc!["body", "avatar_url"], &url)
                .then_some(Some(url)),
            Maybe::Null => Some(None),
            Maybe::Absent => None,
        };
        change.default_upfront_split_to_contributors =
            match self.default_upfront_split_to_contributors {
                Maybe::Value(n) => v
                    .int_range(
                        loc!["body", "default_upfront_split_to_contributors"],
                        n,
                        Some(0),
                        Some(100),
                    )
                    .then_some(Some(n)),
                Maybe::Null => Some(None),
                Maybe::Absent => None,
            };
        change.pledge_badge_show_amount = self.pledge_badge_show_amount.as_value().copied();
        if let Maybe::Value(n) = self.pledge_minimum_amount {
            if v.int_range(loc!["body", "pledge_minimum_amount"], n, Some(0), None) {
                change.pledge_minimum_amount = Some(n);
            }
        }
        for (field, value, target) in [
            (
                "billing_email",
                self.billing_email,
                &mut change.billing_email,
            ),
            ("email", self.email, &mut change.email),
        ] {
            *target = match value {
                Maybe::Value(e) => v.email(loc!["body", field], &e).then_some(Some(e)),
                Maybe::Null => Some(None),
                Maybe::Absent => None,
            };
        }
        for (field, value, target, max) in [
            ("bio", self.bio, &mut change.bio, 1000usize),
            ("company", self.company, &mut change.company, 200),
            ("blog", self.blog, &mut change.blog, 500),
            ("location", self.location, &mut change.location, 200),
            (
                "twitter_username",
                self.twitter_username,
                &mut change.twitter_username,
                50,
            ),
            (
                "default_badge_custom_content",
                self.default_badge_custom_content,
                &mut change.default_badge_custom_content,
                500,
            ),
        ] {
            if let Maybe::Value(s) = &value {
                if !v.max_chars(loc!["body", field], s, max) {
                    continue;
                }
            }
            *target = text_change(value);
        }
        for (field, value, target) in [
            (
                "total_monthly_spending_limit",
                self.total_monthly_spending_limit,
                &mut change.total_monthly_spending_limit,
            ),
            (
                "per_user_monthly_spending_limit",
                self.per_user_monthly_spending_limit,
                &mut change.per_user_monthly_spending_limit,
            ),
        ] {
            if let Maybe::Value(n) = value {
                v.int_range(loc!["body", field], n, Some(0), None);
            }
            *target = value.into_update();
        }
        let (total, per_user) = change.spending_limits(stored);
        if let (Some(msg), Some(p)) = (spending_limits_error(total, per_user), per_user) {
            v.push(FieldError::new(
                "value_error",
                loc!["body", "per_user_monthly_spending_limit"],
                msg,
                Value::from(p),
            ));
        }
        if let Maybe::Value(p) = self.profile_settings {
            if let Maybe::Value(d) = &p.description {
                v.max_chars(loc!["body", "profile_settings", "description"], d, 160);
            }
            if let Maybe::Value(links) = &p.links {
                for (i, l) in links.iter().enumerate() {
                    v.http_url(loc!["body", "profile_settings", "links", i], l);
                }
            }
            change.profile_settings = Some(ProfileChange {
                enabled: p.enabled.into_update(),
                description: p.description.into_update(),
                featured_projects: p.featured_projects.into_update(),
                featured_organizations: p.featured_organizations.into_update(),
                links: p.links.into_update(),
                accent_color: p.accent_color.into_update(),
                subscribe: p
                    .subscribe
                    .into_update()
                    .map(|s| s.as_ref().map(SubscribeSettings::from)),
            });
        }
        if let Maybe::Value(f) = self.feature_settings {
            change.issue_funding_enabled = f.issue_funding_enabled.into_update();
        }
        if let Maybe::Value(s) = self.subscription_settings {
            s.check_supported(&mut v, loc!["body", "subscription_settings"]);
            change.subscription_settings = Some(((&s).into(), s.prevent_trial_abuse));
        }
        if let Maybe::Value(n) = self.notification_settings {
            change.notification_settings = Some(domain::NotificationSettings {
                new_order: n.new_order,
                new_subscription: n.new_subscription,
            });
        }
        if let Maybe::Value(p) = self.customer_portal_settings {
            change.customer_portal_settings = Some(domain::CustomerPortalSettings {
                usage_show: p.usage.show,
                update_seats: p.subscription.update_seats,
                update_plan: p.subscription.update_plan,
            });
        }
        match &self.default_tax_behavior {
            Maybe::Value(b) => match crate::api::organization_tax::parse_default_tax_behavior(b) {
                Ok(b) => change.default_tax_behavior = Some(b),
                Err(e) => v.push(*e),
            },
            Maybe::Null => change.default_tax_behavior = Some(Default::default()),
            Maybe::Absent => {}
        }
        if let Maybe::Value(c) = &self.default_presentment_currency {
            change.default_presentment_currency = presentment_currency(&mut v, c);
        }
        if let Maybe::Value(hosts) = &self.embed_hosts {
            change.embed_hosts = embed_hosts(&mut v, hosts);
        }
        if let Maybe::Value(t) = &self.tax {
            match crate::api::organization_tax::parse_tax(t, &stored.tax) {
                Ok(t) => change.tax = Some(t),
                Err(errors) => errors.into_iter().for_each(|e| v.push(e)),
            }
        }
        v.finish()?;
        Ok(change)
    }
}

#[cfg(test)]
pub(crate) fn samples() -> Vec<(&'static str, serde_json::Value)> {
    use chrono::TimeZone;

    use crate::domain::ids::OrganizationId;

    let now = Utc
        .with_ymd_and_hms(2025, 1, 2, 3, 4, 5)
        .single()
        .unwrap_or_default();
    let mut org = Organization::new(
        OrganizationId(uuid::Uuid::from_u128(0x0a)),
        "Acme Inc.".into(),
        "acme".into(),
        now,
    );
    org.modified_at = Some(now);
    org.avatar_url = Some("https://example.com/acme.png".into());
    org.profile_settings = ProfileSettings {
        enabled: Some(true),
        description: Some("Tools for makers".into()),
        links: Some(vec!["https://example.com".into()]),
        subscribe: Some(SubscribeSettings {
            promote: true,
            show_count: false,
            count_free: true,
        }),
        ..ProfileSettings::default()
    };
    org.feature_settings = FeatureSettings {
        issue_funding_enabled: Some(false),
    };
    let bare = Organization::new(
        OrganizationId(uuid::Uuid::from_u128(0x0b)),
        "Bare".into(),
        "bare".into(),
        now,
    );
    let to_value = |o: &Organization| serde_json::to_value(OrganizationView::from(o));
    vec![
        ("Organization", to_value(&org).unwrap_or_default()),
        ("Organization", to_value(&bare).unwrap_or_default()),
    ]
}

#[cfg(test)]
#[path = "organization_tests.rs"]
mod tests;
