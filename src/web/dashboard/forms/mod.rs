//! The dashboard's forms: what a seller types (amounts in major units, dates as days,
//! checkboxes, one option per line), read here and turned into the use cases' commands, so
//! the rules, the tenancy and every 422's message are the API's.
//!
//! Each form is a typed struct the pages deserialize a posted body into; `of(&record)` fills
//! one from a stored record for editing; the functions below read what was typed and build
//! the command: through the API's typed wire struct and its `into_command` where that struct
//! is typed (the same checks and messages as over HTTP), else directly with the API's
//! validators. What does not read as a value is named by its field: an amount by its label
//! ("Price: Enter an amount like 19 or 19.99"), after the API's other problems.

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use serde::Deserialize;

use crate::api::organization::{OrganizationCreate, OrganizationUpdate, OrganizationView};
use crate::api::Maybe;
use crate::app::catalog::organizations;
use crate::auth::Subject;
use crate::domain::currency::Currency;
use crate::domain::locale::Lang;
use crate::domain::organization::{Organization, OrganizationChange};
use crate::error::{ApiError, AppError, Invalid, Step};
use crate::field;
use crate::state::AppState;

mod catalog;
mod offers;
mod sales;

pub use catalog::*;
pub use offers::*;
pub use sales::*;

#[cfg(test)]
#[path = "forms_tests.rs"]
mod tests;

// ---------------------------------------------------------------------------------------
// Reading typed-in values
// ---------------------------------------------------------------------------------------

/// Whether a checkbox was ticked (a browser sends `on`; `false` is unticked).
pub fn ticked(v: &Option<String>) -> bool {
    v.as_deref().is_some_and(|v| v != "false")
}

/// A text field: trimmed, or `None` when blank.
fn text(v: &str) -> Option<String> {
    Some(v.trim()).filter(|v| !v.is_empty()).map(str::to_string)
}

/// A text field as a PATCH field: trimmed, or `null` (clear) when blank.
fn maybe_text(v: &str) -> Maybe<String> {
    text(v).map_or(Maybe::Null, Maybe::Value)
}

/// The problems found in what was typed (a value that does not read as one), reported
/// after the command's own.
#[derive(Debug, Default)]
struct Typed(Vec<Invalid>);

impl Typed {
    /// A value that does not read as one.
    fn push(&mut self, problem: Invalid) {
        self.0.push(problem);
    }

    /// An integer field at `path`: `None` when blank; what does not read is a problem
    /// (`strict`: the message of a typed field, else pydantic's lax one).
    fn int(&mut self, path: Vec<Step>, v: &str, strict: bool) -> Option<i64> {
        let v = v.trim();
        if v.is_empty() {
            return None;
        }
        match v.parse::<i64>() {
            Ok(n) => Some(n),
            Err(_) => {
                self.0.push(if strict {
                    Invalid::new(path, "Input should be a valid integer", v).kind("int_type")
                } else {
                    Invalid::new(
                        path,
                        "Input should be a valid integer, unable to parse string as an integer",
                        v,
                    )
                    .kind("int_parsing")
                });
                None
            }
        }
    }

    /// An amount typed in `currency`'s major units, as its minor unit: `None` when blank;
    /// what does not read is named by `label`.
    fn amount(&mut self, v: &str, currency: Currency, label: &str) -> Option<i64> {
        let v = v.trim();
        if v.is_empty() {
            return None;
        }
        let minor = currency.to_minor(v);
        if minor.is_none() {
            self.0.push(
                Invalid::new(field![label], "Enter an amount like 19 or 19.99", v)
                    .kind("decimal_parsing"),
            );
        }
        minor
    }

    /// A day input (`YYYY-MM-DD`) at `time` UTC: `None` when blank.
    fn day(&mut self, path: Vec<Step>, v: &str, time: NaiveTime) -> Option<DateTime<Utc>> {
        let v = v.trim();
        if v.is_empty() {
            return None;
        }
        match NaiveDate::parse_from_str(v, "%Y-%m-%d") {
            Ok(date) => Some(date.and_time(time).and_utc()),
            Err(_) => {
                self.0.push(
                    Invalid::new(path, "Enter a day like 2031-01-31", v).kind("date_parsing"),
                );
                None
            }
        }
    }

    /// A list of ids (ticked boxes): what is not a UUID is a problem at `name`'s index.
    fn ids(&mut self, name: &str, ids: &[String]) -> Vec<uuid::Uuid> {
        let mut out = Vec::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate() {
            match uuid::Uuid::parse_str(id) {
                Ok(id) => out.push(id),
                Err(e) => self.0.push(
                    Invalid::new(
                        field![name, i],
                        format!("Input should be a valid UUID, {e}"),
                        id,
                    )
                    .kind("uuid_parsing"),
                ),
            }
        }
        out
    }

    /// The command's outcome with these problems after its own (a 422 if any).
    fn finish<T>(self, built: Result<T, ApiError>) -> Result<T, ApiError> {
        if self.0.is_empty() {
            return built;
        }
        let mine = ApiError::from(AppError::Invalid(self.0));
        match (built, mine) {
            (Err(ApiError::Validation(mut theirs)), ApiError::Validation(mine)) => {
                theirs.extend(mine);
                Err(ApiError::Validation(theirs))
            }
            (Err(e), _) if !matches!(e, ApiError::Validation(_)) => Err(e),
            (_, mine) => Err(mine),
        }
    }
}

/// An amount in the minor unit as a number input shows it ("12.50", "1200" yen).
pub fn major_units(amount: i64, currency: Currency) -> String {
    currency.major(amount)
}

/// A percentage typed with at most two decimals ("12.5") in basis points (1250).
fn basis_points(v: &str) -> Option<i64> {
    let (whole, fraction) = v.split_once('.').unwrap_or((v, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || fraction.len() > 2 || !digits(fraction) {
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    let fraction: i64 = format!("{fraction:0<2}").parse().ok()?;
    whole.checked_mul(100)?.checked_add(fraction)
}

const MIDNIGHT: NaiveTime = NaiveTime::MIN;

/// A timestamp as a day input's value.
fn day_of(t: Option<DateTime<Utc>>) -> String {
    t.map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

fn opt_string(v: &Option<impl ToString>) -> String {
    v.as_ref().map(ToString::to_string).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// Organizations
// ---------------------------------------------------------------------------------------

/// Create an organization.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct OrganizationForm {
    pub name: String,
    /// Empty: from the name.
    pub slug: String,
}

/// A slug from a name: lower-case ASCII letters and digits, runs of anything else as `-`.
pub fn slugify(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

pub async fn create_organization(
    state: &AppState,
    subject: Subject,
    form: &OrganizationForm,
) -> Result<Organization, ApiError> {
    let slug = match form.slug.trim() {
        "" => slugify(&form.name),
        s => s.to_string(),
    };
    let body = OrganizationCreate {
        name: form.name.trim().to_string(),
        slug,
        avatar_url: None,
        feature_settings: None,
        subscription_settings: None,
        default_presentment_currency: None,
    };
    Ok(organizations::create(state, subject, body.into_command()?).await?)
}

/// The refund form of an order's page: the amount in major units (`12.50`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct RefundForm {
    pub amount: String,
    pub reason: String,
    pub revoke_benefits: Option<String>,
    pub comment: String,
    /// For a subscription's order: `""` (keep it), `at_period_end` or `now`.
    pub end_subscription: String,
}

/// Refunds an order from its page, through the same use case as `POST /v1/refunds/`.
pub async fn refund_order(
    state: &AppState,
    subject: Subject,
    order: &crate::domain::order::Order,
    form: &RefundForm,
) -> Result<crate::domain::refund::Refund, ApiError> {
    let currency = Currency::from_code(&order.currency.to_ascii_lowercase()).unwrap_or_default();
    let Some(amount) = currency.to_minor(form.amount.trim()) else {
        let typed = form.amount.as_str();
        return Err(
            AppError::invalid(field!["amount"], "Enter an amount, like 12.50.", typed).into(),
        );
    };
    let body = crate::api::refund::RefundCreate {
        order_id: order.id.0,
        reason: form.reason.trim().to_string(),
        amount,
        comment: text(&form.comment),
        revoke_benefits: ticked(&form.revoke_benefits),
        metadata: None,
        end_subscription: text(&form.end_subscription),
    };
    Ok(crate::app::refunds::create(state, subject, body.into_command()?).await?)
}

/// An organization's settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SettingsForm {
    pub name: String,
    pub avatar_url: String,
    pub bio: String,
    pub company: String,
    pub blog: String,
    pub location: String,
    pub allow_multiple_subscriptions: Option<String>,
    pub allow_customer_updates: Option<String>,
    /// The organization's e-mail: its messages' Reply-To, and where copies of orders go.
    pub email: String,
    /// A copy of each order to `email`.
    pub new_order_emails: Option<String>,
    /// A full refund of a one-time purchase revokes its benefits.
    pub revoke_on_full_refund: Option<String>,
    /// The customer portal's settings (Polar's `customer_portal_settings`): buyers see
    /// their usage, change their seats, change their plan.
    pub portal_usage_show: Option<String>,
    pub portal_update_seats: Option<String>,
    pub portal_update_plan: Option<String>,
    /// The organization's default presentment currency (a code; empty: unchanged).
    pub default_presentment_currency: String,
    /// The hosts that may embed the organization's checkout links (`embed_hosts`), one a
    /// line; blank lines are skipped.
    pub embed_hosts: String,
    /// The language of buyer pages and e-mails when nothing else picks one (a BCP 47 tag
    /// of one of [`Lang::ALL`]; empty: unchanged).
    pub default_locale: String,
}

impl SettingsForm {
    pub fn of(org: &Organization) -> Self {
        let on = |b: bool| b.then(|| "on".to_string());
        SettingsForm {
            name: org.name.clone(),
            avatar_url: opt_string(&org.avatar_url),
            bio: opt_string(&org.bio),
            company: opt_string(&org.company),
            blog: opt_string(&org.blog),
            location: opt_string(&org.location),
            allow_multiple_subscriptions: on(org
                .subscription_settings
                .allow_multiple_subscriptions),
            allow_customer_updates: on(org.subscription_settings.allow_customer_updates),
            email: opt_string(&org.email),
            new_order_emails: on(org.notification_settings.new_order),
            revoke_on_full_refund: on(org.refund_settings.revoke_benefits_on_full_refund),
            portal_usage_show: on(org.customer_portal_settings.usage_show),
            portal_update_seats: on(org.customer_portal_settings.update_seats),
            portal_update_plan: on(org.customer_portal_settings.update_plan),
            default_presentment_currency: org
                .default_presentment_currency
                .code()
                .to_ascii_uppercase(),
            embed_hosts: org.embed_hosts.join("\n"),
            default_locale: org.default_locale.clone(),
        }
    }
}

/// The settings form's language as the stored tag: `None` when empty (unchanged), a 422
/// when it is none of [`Lang::ALL`].
fn default_locale_update(tag: &str) -> Result<Option<String>, AppError> {
    let tag = tag.trim();
    if tag.is_empty() {
        return Ok(None);
    }
    match Lang::ALL.into_iter().find(|l| l.tag() == tag) {
        Some(lang) => Ok(Some(lang.tag().to_string())),
        None => {
            let tags: Vec<&str> = Lang::ALL.iter().map(|l| l.tag()).collect();
            Err(AppError::Invalid(vec![Invalid::new(
                field!["default_locale"],
                format!("Input should be one of {}", tags.join(", ")),
                tag,
            )
            .kind("enum")]))
        }
    }
}

pub async fn update_settings(
    state: &AppState,
    subject: Subject,
    org: &Organization,
    form: &SettingsForm,
) -> Result<Organization, ApiError> {
    // The settings as they are, with the form's two flags.
    let mut subscription_settings = OrganizationView::from(org).subscription_settings;
    subscription_settings.allow_multiple_subscriptions = ticked(&form.allow_multiple_subscriptions);
    subscription_settings.allow_customer_updates = ticked(&form.allow_customer_updates);
    let body = OrganizationUpdate {
        name: Maybe::Value(form.name.trim().to_string()),
        avatar_url: maybe_text(&form.avatar_url),
        default_upfront_split_to_contributors: Maybe::Absent,
        pledge_badge_show_amount: Maybe::Absent,
        pledge_minimum_amount: Maybe::Absent,
        billing_email: Maybe::Absent,
        default_badge_custom_content: Maybe::Absent,
        total_monthly_spending_limit: Maybe::Absent,
        per_user_monthly_spending_limit: Maybe::Absent,
        profile_settings: Maybe::Absent,
        feature_settings: Maybe::Absent,
        subscription_settings: Maybe::Value(subscription_settings),
        notification_settings: Maybe::Value(
            crate::api::organization::OrganizationNotificationSettings {
                new_order: ticked(&form.new_order_emails),
                new_subscription: org.notification_settings.new_subscription,
            },
        ),
        bio: maybe_text(&form.bio),
        company: maybe_text(&form.company),
        blog: maybe_text(&form.blog),
        location: maybe_text(&form.location),
        email: maybe_text(&form.email),
        twitter_username: Maybe::Absent,
        default_tax_behavior: Maybe::Absent,
        default_presentment_currency: crate::api::organization::currency_update(
            &form.default_presentment_currency,
        ),
        tax: Maybe::Absent,
        embed_hosts: crate::api::organization::embed_hosts_lines(&form.embed_hosts),
        customer_portal_settings: Maybe::Value(
            crate::api::organization::OrganizationCustomerPortalSettings {
                usage: crate::api::organization::CustomerPortalUsageSettings {
                    show: ticked(&form.portal_usage_show),
                },
                subscription: crate::api::organization::CustomerPortalSubscriptionSettings {
                    update_seats: ticked(&form.portal_update_seats),
                    update_plan: ticked(&form.portal_update_plan),
                },
            },
        ),
    };
    let locale = default_locale_update(&form.default_locale).map_err(ApiError::from);
    let change = match (body.into_command(org), locale) {
        (Ok(change), Ok(locale)) => OrganizationChange {
            default_locale: locale,
            ..change
        },
        // Every problem at once, the API's first.
        (Err(ApiError::Validation(mut fields)), Err(ApiError::Validation(more))) => {
            fields.extend(more);
            return Err(ApiError::Validation(fields));
        }
        (Err(e), _) | (_, Err(e)) => return Err(e),
    };
    let updated = organizations::update(state, subject, org.id, change).await?;
    let revoke = ticked(&form.revoke_on_full_refund);
    if updated.refund_settings.revoke_benefits_on_full_refund == revoke {
        return Ok(updated);
    }
    Ok(organizations::set_refund_settings(
        state,
        subject,
        org.id,
        crate::domain::organization::RefundSettings {
            revoke_benefits_on_full_refund: revoke,
        },
    )
    .await?)
}
