//! E-mail: which messages a change of the store stands for, rendered when decided, and the
//! messages asked for (a buyer's keys sent again, a receipt sent again from the dashboard).
//!
//! The fan-out (`crate::webhooks::dispatch`) calls [`messages_of`] for each change-feed
//! entry and writes the messages in the transaction that consumes the entry; the sender
//! (`crate::mail`) sends what is pending. A message's id is derived from the fact it tells,
//! and a fact already told is not told again ([`MailMessage`]).
//!
//! | message | to | when |
//! |---|---|---|
//! | order receipt | buyer | an order of a purchase or a subscription's first payment is paid; for an organization that invoices on payment, when the order's invoice is issued instead, with it attached |
//! | renewal receipt | buyer | a renewal order is paid (the same rule for invoices) |
//! | credit note | buyer | a refund's credit note is issued, with it attached (besides the refund's message) |
//! | renewal payment failed | buyer | a subscription becomes past due, and at each failed retry; with a one-use link that opens the portal on it, signed in (`crate::app::portal::recovery_link`) |
//! | subscription canceled | buyer | it is set to end at the period's end |
//! | subscription ended | buyer | it ends (canceled now, revoked, or dunning gave up) |
//! | trial ending | buyer | 3 days before a paid trial's first charge (1 day for a trial shorter than 3 days) |
//! | subscription changed | buyer | it moved to another product or price |
//! | license key revoked / disabled | buyer | the seller revokes or disables a key (not the keys of an ended subscription: that message says so) |
//! | your license keys | buyer | asked for on the resend page or `POST /v1/customer-portal/license-keys/resend` |
//! | customer portal sign-in code | buyer | asked for on the portal's sign-in page or `POST /v1/customer-portal/customer-session/request` |
//! | new order (copy) | the organization's e-mail | with each order, when `notification_settings.new_order` is on |

mod email_change;
mod invoice;
mod render;

use chrono::{DateTime, Utc};
use tollgate_storage::{Batch, Change, Direction, Expect};

use crate::domain::benefit::{Benefit, BenefitProperties};
use crate::domain::customer::{customer_by_email, Customer};
use crate::domain::ids::{MailMessageId, OrderId, OrganizationId, SubscriptionId};
use crate::domain::invoice::{Invoice, InvoiceKind};
use crate::domain::locale::resolve;
use crate::domain::mail::{Attachment, MailKind, MailMessage, MailState, MAIL_BY_ORDER};
use crate::domain::order::{BillingReason, Order};
use crate::domain::organization::Organization;
use crate::domain::product::Product;
use crate::error::AppError;
use crate::i18n::I18n;
use crate::state::AppState;
use tollgate_actors::checkout::Checkout;
use tollgate_actors::ids::derived_uuid;
use tollgate_actors::license_key::{KeyStatus, LicenseKey, LICENSE_KEY_BY_CUSTOMER};
use tollgate_actors::subscription::{Subscription, SubscriptionStatus, DUNNING_PERIOD};

pub use email_change::{email_change_code, email_changed_notice};
#[cfg(test)]
pub(crate) use invoice::tests::document as test_document;
pub use invoice::{invoice_messages, order_paid_messages};
pub use render::{date, Brand, KeyLine, Recovery, Rendered};

/// The messages `change` stands for that were not decided before (none for most changes).
pub async fn messages_of(state: &AppState, change: &Change) -> Result<Vec<MailMessage>, AppError> {
    let decided = if change.is::<Order>() {
        match (change.before::<Order>()?, change.after::<Order>()?) {
            // The receipt goes when the order is paid: at once, or (a pending renewal)
            // when a retry pays it; or, for an organization that invoices on payment,
            // with the order's invoice (below).
            (before, Some(order)) => order_paid_messages(state, before.as_ref(), &order).await?,
            _ => Vec::new(),
        }
    } else if change.is::<Invoice>() {
        // A document is told once, when it is issued (written: it never changes after).
        match (change.before::<Invoice>()?, change.after::<Invoice>()?) {
            (None, Some(invoice)) => invoice_messages(state, &invoice).await?,
            _ => Vec::new(),
        }
    } else if change.is::<Subscription>() {
        match (
            change.before::<Subscription>()?,
            change.after::<Subscription>()?,
        ) {
            (Some(before), Some(after)) => {
                subscription_messages(state, change.seq, &before, &after).await?
            }
            _ => Vec::new(),
        }
    } else if change.is::<crate::domain::refund::Refund>() {
        refund_messages(
            state,
            change.after::<crate::domain::refund::Refund>()?.as_ref(),
        )
        .await?
    } else if change.is::<LicenseKey>() {
        match (
            change.before::<LicenseKey>()?,
            change.after::<LicenseKey>()?,
        ) {
            (Some(before), Some(after)) => key_messages(state, change.seq, &before, &after).await?,
            _ => Vec::new(),
        }
    } else {
        Vec::new()
    };
    let mut new = Vec::with_capacity(decided.len());
    for m in decided {
        if state.store.get::<MailMessage>(&m.id.key()).await?.is_none() {
            new.push(m);
        }
    }
    Ok(new)
}

/// Everything a message needs about its organization.
async fn brand(state: &AppState, org: OrganizationId) -> Result<(Brand, Organization), AppError> {
    let o = state
        .store
        .get::<Organization>(&org.key())
        .await?
        .ok_or_else(|| AppError::internal(format!("organization {org} is gone")))?
        .value;
    Ok((
        Brand {
            name: o.name.clone(),
            avatar_url: o
                .avatar_url
                .clone()
                .filter(|u| u.starts_with("https://") || u.starts_with("http://")),
            email: o.email.clone().filter(|e| e.contains('@')),
        },
        o,
    ))
}

/// A new pending message, due now.
fn message(
    id: uuid::Uuid,
    brand: &Brand,
    kind: MailKind,
    to: &str,
    rendered: Rendered,
    now: DateTime<Utc>,
) -> MailMessage {
    MailMessage {
        id: MailMessageId(id),
        organization_id: OrganizationId(uuid::Uuid::nil()),
        created_at: now,
        modified_at: None,
        kind,
        to: to.to_string(),
        reply_to: brand.email.clone(),
        from_name: brand.name.clone(),
        subject: rendered.subject,
        text: rendered.text,
        html: rendered.html,
        order_id: None,
        subscription_id: None,
        customer_id: None,
        state: MailState::Pending,
        attempts: Vec::new(),
        next_attempt_at: Some(now),
        attachments: Vec::new(),
    }
}

/// The name an invoice's or a credit note's PDF is sent under: `Invoice-ACME-0001.pdf`,
/// `CreditNote-ACME-CN-0001.pdf`.
pub fn attachment_name(invoice: &Invoice) -> String {
    invoice.file_name()
}

async fn product_of(state: &AppState, id: crate::domain::ids::ProductId) -> Option<Product> {
    state
        .store
        .get::<Product>(&id.key())
        .await
        .ok()
        .flatten()
        .map(|p| p.value)
}

async fn benefits_of(state: &AppState, product: Option<&Product>) -> Vec<Benefit> {
    match product {
        Some(p) => crate::app::views::product_benefits(state, p)
            .await
            .unwrap_or_default(),
        None => Vec::new(),
    }
}

/// Where the buyer finds the purchase again: the checkout's confirmation page (until the
/// customer portal).
async fn purchase_link(
    state: &AppState,
    checkout: Option<crate::domain::ids::CheckoutId>,
) -> Option<String> {
    let id = checkout?;
    let c = state.store.get::<Checkout>(&id.key()).await.ok()??.value;
    Some(format!(
        "{}/checkout/{}/confirmation",
        state.public_url.trim_end_matches('/'),
        c.client_secret
    ))
}

/// The customer portal's downloads, when one of `benefits` is a downloadables benefit: the
/// portal's sign-in page (a code by e-mail), which shows the downloads once signed in. No
/// download token goes into a mail: they expire in minutes.
fn downloads_link(state: &AppState, slug: &str, benefits: &[Benefit]) -> Option<String> {
    benefits
        .iter()
        .any(|b| {
            b.deleted_at.is_none() && matches!(b.properties, BenefitProperties::Downloadables(_))
        })
        .then(|| {
            format!(
                "{}/portal/{slug}#downloads",
                state.public_url.trim_end_matches('/')
            )
        })
}

/// The page where a buyer asks for their keys again.
fn resend_link(state: &AppState, org: OrganizationId) -> String {
    format!(
        "{}/license-keys/resend?organization_id={org}",
        state.public_url.trim_end_matches('/')
    )
}

/// Every key the customer holds from the organization, oldest first.
async fn customer_keys(state: &AppState, customer: &Customer) -> Result<Vec<LicenseKey>, AppError> {
    let tenants = [customer.id.key()];
    let ids: Vec<Vec<u8>> = state
        .store
        .index_iter(LICENSE_KEY_BY_CUSTOMER, &tenants, Direction::Asc)?
        .take(1_000)
        .await?;
    let mut keys = Vec::new();
    for id in ids {
        if let Some(k) = state.store.get::<LicenseKey>(&id).await? {
            if k.value.organization_id == customer.organization_id {
                keys.push(k.value);
            }
        }
    }
    Ok(keys)
}

/// The language of a message to a buyer: the language of the checkout it follows from
/// (its `locale`, if Tollgate speaks it), else the organization's default, else English.
/// (The browser's language is not known when a message is decided.)
pub(crate) async fn lang_of(
    state: &AppState,
    checkout: Option<crate::domain::ids::CheckoutId>,
    org: &Organization,
) -> I18n {
    let locale = match checkout {
        Some(id) => state
            .store
            .get::<Checkout>(&id.key())
            .await
            .ok()
            .flatten()
            .and_then(|c| c.value.locale),
        None => None,
    };
    I18n::new(resolve(locale.as_deref(), None, Some(&org.default_locale)))
}

/// The lines of keys, with their benefit's description.
async fn key_lines(state: &AppState, i18n: I18n, keys: &[LicenseKey]) -> Vec<KeyLine> {
    let mut out = Vec::with_capacity(keys.len());
    for k in keys {
        let benefit = state
            .store
            .get::<Benefit>(&k.benefit_id.key())
            .await
            .ok()
            .flatten()
            .map(|b| b.value.description)
            .unwrap_or_else(|| "License key".into());
        out.push(KeyLine::of(i18n, k, benefit));
    }
    out
}

// ---------------------------------------------------------------------------------------
// Orders: the receipt, and the seller's copy.

/// The customer a message is for, and the address it goes to: the customer's as it is now,
/// else the one the record kept.
async fn recipient(
    state: &AppState,
    id: crate::domain::ids::CustomerId,
    kept: &str,
) -> Result<(Option<Customer>, String), AppError> {
    let customer = state
        .store
        .get::<Customer>(&id.key())
        .await?
        .map(|c| c.value);
    let to = customer
        .as_ref()
        .map_or_else(|| kept.to_string(), |c| c.email.clone());
    Ok((customer, to))
}

/// An order just paid: the buyer's receipt (unless `with_receipt` is false: it waits for
/// the order's invoice) and the seller's copy when asked for.
async fn order_messages(
    state: &AppState,
    order: &Order,
    with_receipt: bool,
) -> Result<Vec<MailMessage>, AppError> {
    let mut out = Vec::new();
    if with_receipt {
        let (customer, to) = recipient(state, order.customer_id, &order.customer_email).await?;
        out.push(receipt(state, order, &to, customer.as_ref()).await?);
    }
    let to = match out.first() {
        Some(m) => m.to.clone(),
        None => {
            recipient(state, order.customer_id, &order.customer_email)
                .await?
                .1
        }
    };
    let (brand, org) = brand(state, order.organization_id).await?;
    if org.notification_settings.new_order {
        if let Some(seller) = brand.email.clone() {
            out.push(seller_copy(state, order, &seller, &to).await?);
        }
    }
    Ok(out)
}

/// The buyer's receipt of `order`, rendered now; with the order's invoice (its number, and
/// its PDF attached) once it is issued.
pub async fn receipt(
    state: &AppState,
    order: &Order,
    to: &str,
    customer: Option<&Customer>,
) -> Result<MailMessage, AppError> {
    let invoice = state
        .store
        .get::<Invoice>(&Invoice::id_for_order(order.id).key())
        .await?
        .map(|i| i.value);
    receipt_with(state, order, to, customer, invoice.as_ref()).await
}

/// The buyer's receipt of `order` with `invoice` (an order's invoice: a credit note is not
/// one), rendered now.
async fn receipt_with(
    state: &AppState,
    order: &Order,
    to: &str,
    customer: Option<&Customer>,
    invoice: Option<&Invoice>,
) -> Result<MailMessage, AppError> {
    let invoice = invoice.filter(|i| i.kind == InvoiceKind::Invoice && i.order_id == order.id);
    let (brand, org) = brand(state, order.organization_id).await?;
    let view = crate::app::views::order_view(state, order).await?;
    let product = product_of(state, order.product_id).await;
    let benefits = benefits_of(state, product.as_ref()).await;
    // The keys this order granted, or for a renewal the subscription's keys.
    let keys: Vec<LicenseKey> = match customer {
        Some(c) => customer_keys(state, c)
            .await?
            .into_iter()
            .filter(|k| {
                k.order_id == Some(order.id)
                    || (order.subscription_id.is_some()
                        && k.subscription_id == order.subscription_id)
            })
            .collect(),
        None => Vec::new(),
    };
    let renewal = order.billing_reason == BillingReason::SubscriptionCycle;
    let subscription = match order.subscription_id {
        Some(s) if renewal => state.store.get::<Subscription>(&s.key()).await?,
        _ => None,
    };
    let checkout = match &subscription {
        Some(s) => s.value.checkout_id,
        None if renewal => None,
        None => order.checkout_id,
    };
    // A renewal's keys as they stand once told of the period paid for: the mail may be
    // rendered before the keys follow their subscription (`follow_keys`), and must not
    // show the old end of their validity.
    let mut keys = keys;
    if let Some((s, end)) = subscription
        .as_ref()
        .and_then(|s| Some((s, s.value.current_period_end?)))
    {
        for k in keys
            .iter_mut()
            .filter(|k| k.subscription_id == Some(s.value.id))
        {
            let benefit = state
                .store
                .get::<crate::domain::benefit::Benefit>(&k.benefit_id.key())
                .await?;
            let term = crate::domain::grants::renewal(benefit.as_ref().map(|b| &b.value), end);
            if k.expires_at.is_some_and(|e| e < term.expires_at) {
                k.expires_at = Some(term.expires_at);
            }
        }
    }
    let interval = product
        .as_ref()
        .and_then(|p| p.price(order.product_price_id))
        .and_then(|p| p.kind.interval())
        .map(|i| i.as_str().to_string());
    let i18n = lang_of(state, checkout, &org).await;
    let r = render::Receipt {
        i18n,
        brand: brand.clone(),
        renewal,
        seller_copy: None,
        product_name: order.product_name.clone(),
        interval,
        date: i18n.date(order.created_at.date_naive()),
        order_ref: order.id.to_string(),
        currency: order.currency.clone(),
        subtotal: view.subtotal_amount,
        discount: view.discount_amount,
        tax: view.tax_amount,
        tax_label: tax_label(order),
        tax_notes: tax_notes(i18n, order),
        total: view.total_amount,
        keys: key_lines(state, i18n, &keys).await,
        benefits: benefits
            .iter()
            .filter(|b| {
                !matches!(b.properties, BenefitProperties::LicenseKeys(_)) || keys.is_empty()
            })
            .map(|b| b.description.clone())
            .collect(),
        link: purchase_link(state, checkout).await,
        downloads: downloads_link(state, &org.slug, &benefits),
        resend: resend_link(state, order.organization_id),
        invoice: invoice.map(|i| (i.number.clone(), attachment_name(i))),
    }
    .render()?;
    let kind = if renewal {
        MailKind::RenewalReceipt
    } else {
        MailKind::OrderReceipt
    };
    let mut m = message(
        derived_uuid(order.id.0, "mail:receipt"),
        &brand,
        kind,
        to,
        r,
        state.now(),
    );
    m.organization_id = order.organization_id;
    m.order_id = Some(order.id);
    m.subscription_id = order.subscription_id;
    m.customer_id = Some(order.customer_id);
    m.attachments = invoice.iter().map(|i| Attachment::Invoice(i.id)).collect();
    Ok(m)
}

async fn seller_copy(
    state: &AppState,
    order: &Order,
    seller: &str,
    buyer: &str,
) -> Result<MailMessage, AppError> {
    let (brand, org) = brand(state, order.organization_id).await?;
    let view = crate::app::views::order_view(state, order).await?;
    // To the seller: the organization's language.
    let i18n = lang_of(state, None, &org).await;
    let r = render::Receipt {
        i18n,
        brand: brand.clone(),
        renewal: order.billing_reason == BillingReason::SubscriptionCycle,
        seller_copy: Some(buyer.to_string()),
        product_name: order.product_name.clone(),
        interval: None,
        date: i18n.date(order.created_at.date_naive()),
        order_ref: order.id.to_string(),
        currency: order.currency.clone(),
        subtotal: view.subtotal_amount,
        discount: view.discount_amount,
        tax: view.tax_amount,
        tax_label: tax_label(order),
        tax_notes: tax_notes(i18n, order),
        total: view.total_amount,
        keys: Vec::new(),
        benefits: Vec::new(),
        link: Some(format!(
            "{}/dashboard/{}/orders/{}",
            state.public_url.trim_end_matches('/'),
            order.organization_id,
            order.id
        )),
        downloads: None,
        resend: String::new(),
        invoice: None,
    }
    .render()?;
    let mut m = message(
        derived_uuid(order.id.0, "mail:seller_copy"),
        &brand,
        MailKind::SellerOrderCopy,
        seller,
        r,
        state.now(),
    );
    // The seller answers the buyer.
    m.reply_to = Some(buyer.to_string());
    m.organization_id = order.organization_id;
    m.order_id = Some(order.id);
    m.subscription_id = order.subscription_id;
    m.customer_id = Some(order.customer_id);
    Ok(m)
}

// ---------------------------------------------------------------------------------------
// Subscriptions and keys.

async fn subscription_messages(
    state: &AppState,
    seq: u64,
    before: &Subscription,
    after: &Subscription,
) -> Result<Vec<MailMessage>, AppError> {
    let kind = if after.ended_at.is_some() && before.ended_at.is_none() {
        MailKind::SubscriptionEnded
    } else if after.cancel_at_period_end && !before.cancel_at_period_end {
        MailKind::SubscriptionCanceled
    } else if after.status == SubscriptionStatus::PastDue
        && (before.status != SubscriptionStatus::PastDue || after.due_at() > before.due_at())
    {
        MailKind::RenewalFailed
    } else if after.trial_reminded_for.is_some()
        && after.trial_reminded_for != before.trial_reminded_for
    {
        MailKind::TrialEnding
    } else if after.plan_changes > before.plan_changes {
        MailKind::PlanChanged
    } else {
        return Ok(Vec::new());
    };
    let (brand, org) = brand(state, after.organization_id).await?;
    let (customer, to) = recipient(state, after.customer_id, &after.customer_email).await?;
    let keys: Vec<LicenseKey> = match &customer {
        Some(c) => customer_keys(state, c)
            .await?
            .into_iter()
            .filter(|k| k.subscription_id == Some(after.id))
            // After a plan change, the keys of the new plan only.
            .filter(|k| kind != MailKind::PlanChanged || after.license_key_ids.contains(&k.id))
            .collect(),
        None => Vec::new(),
    };
    // A cancellation waits out the notice window: undone meanwhile, it is not sent (the
    // sender checks), and the cancellations of one window are one notice (one id).
    let now = state.now();
    let window = i64::try_from(state.settings.email.notice_window_secs).unwrap_or(i64::MAX);
    let (id, due) = if kind == MailKind::SubscriptionCanceled && window > 0 {
        (
            canceled_notice_id(after.id, notice_bucket(now, window)).0,
            now + chrono::Duration::seconds(window),
        )
    } else {
        (
            derived_uuid(after.id.0, &format!("mail:{}:{seq}", kind.as_str())),
            now,
        )
    };
    let i18n = lang_of(state, after.checkout_id, &org).await;
    let day = |t: DateTime<Utc>| i18n.date(t.date_naive());
    let amount = after.amount.map(|a| {
        i18n.money(
            a,
            after
                .currency
                .as_deref()
                .unwrap_or(crate::domain::currency::Currency::DEFAULT.code()),
        )
    });
    let product = after.product_name.clone();
    let notice = match kind {
        MailKind::RenewalFailed => {
            let retry = after.due_at().map(day);
            let gives_up = after
                .current_period_end
                .map(|end| day(end + DUNNING_PERIOD));
            // The keys validate through their grace (the latest one's end, if any).
            let keys_until = keys
                .iter()
                .filter(|k| k.paid_until.is_some())
                .filter_map(|k| k.expires_at)
                .max();
            let recovery = match customer.as_ref().filter(|c| !c.is_deleted()) {
                Some(_) => Some(
                    recovery(state, i18n, MailMessageId(id), after, &org.slug, keys_until).await?,
                ),
                None => None,
            };
            render::Notice::renewal_failed(
                i18n,
                &product,
                amount.as_deref(),
                retry,
                gives_up,
                keys_until.map(day),
                recovery,
            )
        }
        MailKind::SubscriptionCanceled => render::Notice::canceled(
            i18n,
            &product,
            after.ends_at.or(after.current_period_end).map(day),
        ),
        MailKind::TrialEnding => render::Notice::trial_ending(
            i18n,
            &product,
            amount.as_deref(),
            day(after.trial_end.unwrap_or(after.current_period_start)),
        ),
        MailKind::PlanChanged => render::Notice::plan_changed(
            i18n,
            &product,
            amount.as_deref(),
            after.current_period_end.map(day),
            before
                .license_key_ids
                .iter()
                .any(|k| !after.license_key_ids.contains(k)),
        ),
        _ => render::Notice::ended(i18n, &product, !keys.is_empty()),
    };
    let rendered = notice
        .with(brand.clone(), key_lines(state, i18n, &keys).await)
        .with_link(purchase_link(state, after.checkout_id).await)
        .render()?;
    let mut m = message(id, &brand, kind, &to, rendered, now);
    m.next_attempt_at = Some(due);
    m.organization_id = after.organization_id;
    m.subscription_id = Some(after.id);
    m.customer_id = Some(after.customer_id);
    Ok(vec![m])
}

/// The link of a "payment failed" message (`crate::app::portal::recovery_link`): stored
/// unless the message was decided before (a replayed fan-out never writes it again), and
/// shown with the day access stops.
async fn recovery(
    state: &AppState,
    i18n: I18n,
    mail: MailMessageId,
    subscription: &Subscription,
    slug: &str,
    keys_until: Option<DateTime<Utc>>,
) -> Result<render::Recovery, AppError> {
    use crate::app::portal::recovery_link;
    let until = recovery_link::access_stops(subscription, keys_until, state.now());
    let token = if state.store.get::<MailMessage>(&mail.key()).await?.is_some() {
        recovery_link::token_of(state, mail)
    } else {
        recovery_link::issue(state, mail, subscription, until).await?
    };
    Ok(render::Recovery {
        url: recovery_link::url(state, slug, &token),
        until: i18n.date(until.date_naive()),
    })
}

/// The notice window (`email.notice_window_secs`, > 0) that `at` falls in.
pub fn notice_bucket(at: DateTime<Utc>, window_secs: i64) -> i64 {
    at.timestamp().div_euclid(window_secs.max(1))
}

/// The id of the cancellation notice of `subscription` decided in window `bucket`: the
/// cancellations of one window are one notice.
pub fn canceled_notice_id(subscription: SubscriptionId, bucket: i64) -> MailMessageId {
    MailMessageId(derived_uuid(
        subscription.0,
        &format!("mail:{}:w{bucket}", MailKind::SubscriptionCanceled.as_str()),
    ))
}

async fn key_messages(
    state: &AppState,
    seq: u64,
    before: &LicenseKey,
    after: &LicenseKey,
) -> Result<Vec<MailMessage>, AppError> {
    let kind = match (before.status, after.status) {
        (KeyStatus::Granted, KeyStatus::Revoked) => MailKind::KeyRevoked,
        (KeyStatus::Granted, KeyStatus::Disabled) => MailKind::KeyDisabled,
        _ => return Ok(Vec::new()),
    };
    // The keys of an ended subscription go with it, and those a plan change dropped with
    // the change: their own messages say so.
    if let Some(sub) = after.subscription_id {
        let told = state
            .store
            .get::<Subscription>(&sub.key())
            .await?
            .is_some_and(|s| {
                s.value.ended_at.is_some() || !s.value.license_key_ids.contains(&after.id)
            });
        if told {
            return Ok(Vec::new());
        }
    }
    let Some(customer) = state
        .store
        .get::<Customer>(&after.customer_id.key())
        .await?
        .map(|c| c.value)
    else {
        return Ok(Vec::new());
    };
    let (brand, org) = brand(state, after.organization_id).await?;
    let checkout = match after.order_id {
        Some(o) => state
            .store
            .get::<Order>(&o.key())
            .await?
            .and_then(|o| o.value.checkout_id),
        None => None,
    };
    let i18n = lang_of(state, checkout, &org).await;
    let lines = key_lines(state, i18n, std::slice::from_ref(after)).await;
    let rendered = render::Notice::key(i18n, kind == MailKind::KeyRevoked)
        .with(brand.clone(), lines)
        .render()?;
    let mut m = message(
        derived_uuid(after.id.0, &format!("mail:{}:{seq}", kind.as_str())),
        &brand,
        kind,
        &customer.email,
        rendered,
        state.now(),
    );
    m.organization_id = after.organization_id;
    m.customer_id = Some(customer.id);
    m.subscription_id = after.subscription_id;
    Ok(vec![m])
}

/// A refund that succeeded: the buyer is told how much comes back, and whether access
/// goes with it.
async fn refund_messages(
    state: &AppState,
    refund: Option<&crate::domain::refund::Refund>,
) -> Result<Vec<MailMessage>, AppError> {
    use crate::domain::refund::RefundStatus;
    let Some(r) = refund.filter(|r| r.status == RefundStatus::Succeeded) else {
        return Ok(Vec::new());
    };
    let Some(order) = state
        .store
        .get::<Order>(&r.order_id.key())
        .await?
        .map(|o| o.value)
    else {
        return Ok(Vec::new());
    };
    let (brand, org) = brand(state, r.organization_id).await?;
    let i18n = lang_of(state, order.checkout_id, &org).await;
    let (customer, to) = recipient(state, r.customer_id, &order.customer_email).await?;
    let keys: Vec<LicenseKey> = match customer.as_ref().filter(|_| r.revoke_benefits) {
        Some(c) => customer_keys(state, c)
            .await?
            .into_iter()
            .filter(|k| k.order_id == Some(order.id))
            .collect(),
        None => Vec::new(),
    };
    let rendered = render::Notice::refunded(
        i18n,
        &order.product_name,
        &i18n.money(r.total(), &r.currency),
        r.revoke_benefits,
        order.refunded_amount >= order.amount,
    )
    .with(brand.clone(), key_lines(state, i18n, &keys).await)
    .render()?;
    let mut m = message(
        derived_uuid(r.id.0, "mail:refund"),
        &brand,
        MailKind::RefundConfirmation,
        &to,
        rendered,
        state.now(),
    );
    m.organization_id = r.organization_id;
    m.order_id = Some(r.order_id);
    m.customer_id = Some(r.customer_id);
    m.subscription_id = r.subscription_id;
    Ok(vec![m])
}

// ---------------------------------------------------------------------------------------
// Asked for.

/// "Send me my keys again": when `email` is a customer of `org` with keys, one message
/// listing them. Says nothing of whether it was (the caller answers the same either way).
pub async fn resend_keys(
    state: &AppState,
    org: OrganizationId,
    email: &str,
) -> Result<(), AppError> {
    let Some(customer) = customer_by_email(&state.store, org, email).await? else {
        return Ok(());
    };
    let customer = customer.value;
    if customer.deleted_at.is_some() {
        return Ok(());
    }
    let keys = customer_keys(state, &customer).await?;
    if keys.is_empty() {
        return Ok(());
    }
    let Ok((brand, organization)) = brand(state, org).await else {
        return Ok(());
    };
    let i18n = lang_of(state, None, &organization).await;
    let rendered = render::Notice::resent(i18n)
        .with(brand.clone(), key_lines(state, i18n, &keys).await)
        .render()?;
    let mut m = message(
        uuid::Uuid::new_v4(),
        &brand,
        MailKind::KeysResent,
        &customer.email,
        rendered,
        state.now(),
    );
    m.organization_id = org;
    m.customer_id = Some(customer.id);
    let mut batch = Batch::new();
    batch.put(&m, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    state.mailer.wake();
    Ok(())
}

/// The customer portal's sign-in code for `customer`, to `to`: a pending message, for the
/// caller to write in the transaction that stores the code (`crate::app::portal`).
pub async fn sign_in_code(
    state: &AppState,
    customer: &Customer,
    to: &str,
    code: &str,
    link: String,
) -> Result<MailMessage, AppError> {
    let (brand, org) = brand(state, customer.organization_id).await?;
    let i18n = lang_of(state, None, &org).await;
    let minutes = crate::domain::customer_session::CustomerSessionCode::TTL.num_minutes();
    let mut notice = render::Notice::sign_in_code(i18n, &brand.name, code, minutes, link);
    notice.brand = brand.clone();
    let mut m = message(
        uuid::Uuid::new_v4(),
        &brand,
        MailKind::SignInCode,
        to,
        notice.render()?,
        state.now(),
    );
    m.organization_id = customer.organization_id;
    m.customer_id = Some(customer.id);
    Ok(m)
}

/// The receipt of an order once more (the dashboard's "send the receipt again"): rendered
/// as the order stands now, a new message.
pub async fn send_receipt_again(state: &AppState, order: &Order) -> Result<MailMessage, AppError> {
    let (customer, to) = recipient(state, order.customer_id, &order.customer_email).await?;
    let mut m = receipt(state, order, &to, customer.as_ref()).await?;
    m.id = MailMessageId(uuid::Uuid::new_v4());
    let mut batch = Batch::new();
    batch.put(&m, Expect::Absent)?;
    state.store.commit_durable(&batch).await?;
    state.mailer.wake();
    Ok(m)
}

/// The messages of an order, newest first.
pub async fn messages_of_order(
    state: &AppState,
    order: OrderId,
) -> Result<Vec<MailMessage>, AppError> {
    let tenants = [order.key()];
    let ids: Vec<Vec<u8>> = state
        .store
        .index_iter(MAIL_BY_ORDER, &tenants, Direction::Desc)?
        .take(100)
        .await?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(m) = state.store.get::<MailMessage>(&id).await? {
            out.push(m.value);
        }
    }
    Ok(out)
}

/// The receipt's tax line label: the subtotal is the net, so the rate is added on top
/// (`VAT 19%`) whatever the price's behaviour.
fn tax_label(order: &Order) -> Option<String> {
    tollgate_actors::tax::label(
        &order.tax.breakdown,
        tollgate_actors::tax::TaxBehavior::Exclusive,
    )
}

/// What the receipt must say of its tax: the reverse-charge mention and the buyer's tax
/// number.
fn tax_notes(i18n: I18n, order: &Order) -> Vec<String> {
    let mut notes = crate::domain::invoice::mentions_for(&order.tax.breakdown, |c| {
        tollgate_actors::tax::rates::EU_MEMBER_STATES.contains(&c)
    });
    if let Some(id) = &order.tax.tax_id {
        notes.push(i18n.t1("your-tax-number", "number", &id.value));
    }
    notes
}
