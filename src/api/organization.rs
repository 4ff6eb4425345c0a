use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Maybe;
use crate::domain::organization::{Organization, ProrationBehavior, SubscriptionSettings};

#[derive(Debug, Deserialize)]
pub struct OrganizationCreate {
    pub name: String,
    pub slug: String,
    #[serde(default)]
    pub avatar_url: Option<String>,
    #[serde(default)]
    pub feature_settings: Option<FeatureSettingsInput>,
    #[serde(default)]
    pub subscription_settings: Option<SubscriptionSettingsInput>,
}

#[derive(Debug, Deserialize)]
pub struct OrganizationUpdate {
    #[serde(default)]
    pub name: Maybe<String>,
    #[serde(default)]
    pub avatar_url: Maybe<String>,
    #[serde(default)]
    pub default_upfront_split_to_contributors: Maybe<i64>,
    #[serde(default)]
    pub pledge_badge_show_amount: Maybe<bool>,
    #[serde(default)]
    pub pledge_minimum_amount: Maybe<i64>,
    #[serde(default)]
    pub billing_email: Maybe<String>,
    #[serde(default)]
    pub default_badge_custom_content: Maybe<String>,
    #[serde(default)]
    pub total_monthly_spending_limit: Maybe<i64>,
    #[serde(default)]
    pub per_user_monthly_spending_limit: Maybe<i64>,
    #[serde(default)]
    pub profile_settings: Maybe<ProfileSettingsInput>,
    #[serde(default)]
    pub feature_settings: Maybe<FeatureSettingsUpdate>,
    #[serde(default)]
    pub subscription_settings: Maybe<SubscriptionSettingsInput>,
    // Public profile fields Polar shows but edits elsewhere; accepted here so they can be set.
    #[serde(default)]
    pub bio: Maybe<String>,
    #[serde(default)]
    pub company: Maybe<String>,
    #[serde(default)]
    pub blog: Maybe<String>,
    #[serde(default)]
    pub location: Maybe<String>,
    #[serde(default)]
    pub email: Maybe<String>,
    #[serde(default)]
    pub twitter_username: Maybe<String>,
}

#[derive(Debug, Deserialize)]
pub struct FeatureSettingsInput {
    #[serde(default)]
    pub issue_funding_enabled: bool,
}

#[derive(Debug, Deserialize)]
pub struct FeatureSettingsUpdate {
    #[serde(default)]
    pub issue_funding_enabled: Maybe<bool>,
}

#[derive(Debug, Deserialize)]
pub struct SubscriptionSettingsInput {
    pub allow_multiple_subscriptions: bool,
    pub allow_customer_updates: bool,
    pub proration_behavior: ProrationBehavior,
}

impl From<SubscriptionSettingsInput> for SubscriptionSettings {
    fn from(s: SubscriptionSettingsInput) -> Self {
        SubscriptionSettings {
            allow_multiple_subscriptions: s.allow_multiple_subscriptions,
            allow_customer_updates: s.allow_customer_updates,
            proration_behavior: s.proration_behavior,
        }
    }
}

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
    pub subscribe: Maybe<SubscribeInput>,
    #[serde(default)]
    pub accent_color: Maybe<String>,
}

#[derive(Debug, Deserialize)]
pub struct SubscribeInput {
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

/// The Organization schema.
#[derive(Debug, Serialize)]
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
    pub profile_settings: Value,
    pub feature_settings: Value,
    pub subscription_settings: SubscriptionSettings,
}

/// A settings object with its unset keys left out, as Polar stores and returns them.
fn without_nulls<T: Serialize>(value: &T) -> Value {
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .collect::<Map<_, _>>(),
        ),
        _ => Value::Object(Map::new()),
    }
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
            profile_settings: without_nulls(&o.profile_settings),
            feature_settings: without_nulls(&o.feature_settings),
            subscription_settings: o.subscription_settings.clone(),
        }
    }
}
