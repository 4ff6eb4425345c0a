//! The hosted checkout page a checkout session's `url` points to, its confirmation page
//! (the default `success_url`), and the page's script.
//!
//! The pages are rendered on the server from the stored checkout; the script only talks to
//! the client-secret endpoints (`PATCH …/client/{secret}` for a discount code, `POST
//! …/client/{secret}/confirm` to pay), so the API stays the one place that validates. An
//! unknown or expired client secret is a 404 page, never JSON.

use std::sync::OnceLock;

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use chrono::DateTime;
use tollgate_actors::checkout::{Checkout, CheckoutStatus};
use tollgate_actors::domain::money::Money;
use tollgate_actors::ids::derived_uuid;
use tollgate_actors::license_key::{KeyStatus, LicenseKey};

use crate::app::catalog::custom_fields::attached_custom_fields;
use crate::app::views::product_benefits;
use crate::domain::benefit::BenefitProperties;
use crate::domain::custom_field::{CustomFieldData, CustomFieldProperties, FieldValue};
use crate::domain::customer::{CA_SUBDIVISIONS, COUNTRIES, US_STATES};
use crate::domain::ids::{CheckoutId, LicenseKeyId};
use crate::domain::organization::Organization;
use crate::domain::product::{PriceKind, Product};
use crate::error::{ApiError, ApiResult};
use crate::i18n::I18n;
use crate::payments::{PageSources, ProcessorClient};
use crate::state::AppState;
use crate::web::error_page;

pub const SCRIPT_PATH: &str = "/checkout/assets/checkout.js";
const SCRIPT: &str = include_str!("../../templates/checkout.js");

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::resource!(cfg, SCRIPT_PATH, { get => script });
    crate::resource!(cfg, "/checkout/{client_secret}", { get => checkout_page });
    crate::resource!(cfg, "/checkout/{client_secret}/confirmation", { get => confirmation_page });
}

// ---------------------------------------------------------------------------------------
// Reading the checkout.

/// The checkout of a client secret, from the store (no actor is started for a page view).
async fn by_secret(state: &AppState, secret: &str) -> ApiResult<Option<Checkout>> {
    let Some(id) = state
        .store
        .lookup_unique(&Checkout::secret_key(secret))
        .await?
    else {
        return Ok(None);
    };
    let Some(id) = CheckoutId::from_key(&id) else {
        return Err(ApiError::internal("bad checkout id in the secret index"));
    };
    Ok(state
        .store
        .get::<Checkout>(&id.key())
        .await?
        .map(|s| s.value))
}

fn not_found(i18n: &I18n) -> ApiError {
    error_page(
        404,
        &i18n.t("checkout-not-found"),
        &i18n.t("checkout-not-found-text"),
    )
}

async fn product_of(state: &AppState, c: &Checkout) -> ApiResult<Product> {
    state
        .store
        .get::<Product>(&c.product_id.key())
        .await?
        .map(|p| p.value)
        .ok_or_else(|| ApiError::internal("a checkout's product is missing"))
}

struct Seller {
    name: String,
    avatar_url: Option<String>,
    /// The organization's language for buyers (a BCP 47 tag).
    default_locale: String,
}

async fn seller(state: &AppState, c: &Checkout) -> ApiResult<Seller> {
    let org = state
        .store
        .get::<Organization>(&c.organization_id.key())
        .await?
        .map(|o| o.value);
    Ok(Seller {
        name: org.as_ref().map(|o| o.name.clone()).unwrap_or_default(),
        default_locale: org
            .as_ref()
            .map(|o| o.default_locale.clone())
            .unwrap_or_default(),
        avatar_url: org
            .and_then(|o| o.avatar_url)
            .filter(|u| u.starts_with("https://")),
    })
}

async fn benefit_descriptions(state: &AppState, p: &Product) -> ApiResult<Vec<String>> {
    Ok(product_benefits(state, p)
        .await?
        .into_iter()
        .filter(|b| b.deleted_at.is_none())
        .map(|b| b.description)
        .collect())
}

fn redirect(location: String) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

#[path = "checkout_frame.rs"]
mod frame;
#[path = "checkout_labels.rs"]
pub(crate) mod labels;
use frame::{frame_ancestor, framed_page, PageQuery};
use labels::{
    browser_lang, interval_of, page_lang, price_label, seats_view, tax_label, tax_note, trial_note,
    SeatsView, TrialNote,
};

fn render<T: Template>(t: &T) -> ApiResult<String> {
    t.render().map_err(ApiError::internal)
}

/// The script's URL, versioned by its content so it can be cached for a year.
fn script_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(SCRIPT.as_bytes());
        let v: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
        format!("{SCRIPT_PATH}?v={v}")
    })
}

async fn script() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "public, max-age=31536000, immutable"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .content_type("text/javascript; charset=utf-8")
        .body(SCRIPT)
}

// ---------------------------------------------------------------------------------------
// The checkout page.

struct FieldView {
    slug: String,
    label: String,
    /// `text`, `textarea`, `number`, `date`, `checkbox` or `select`.
    kind: &'static str,
    required: bool,
    help: Option<String>,
    placeholder: String,
    options: Vec<(String, String)>,
    min: String,
    max: String,
    /// What the checkout already holds for the field.
    value: String,
    checked: bool,
}

/// A product the buyer may switch to (checkouts of several products).
struct ProductChoice {
    id: String,
    name: String,
    /// Its price as the page shows it (the selected price for the selected product).
    price: String,
    selected: bool,
}

/// The products of a checkout of several, each with its price; empty for one product.
async fn product_choices(
    state: &AppState,
    i18n: &I18n,
    c: &Checkout,
) -> ApiResult<Vec<ProductChoice>> {
    if c.products.len() < 2 {
        return Ok(Vec::new());
    }
    let products = crate::app::views::checkout_products(state, c).await?;
    Ok(products
        .iter()
        .filter(|p| p.id == c.product_id || !p.is_archived)
        .filter_map(|p| {
            let selected = p.id == c.product_id;
            let price = if selected {
                price_label(i18n, &c.price.kind, c.amount, p.recurring_interval_count)
            } else {
                // Another product's price in the checkout's currency (which the product
                // keeps when chosen), else the one it would fall back to.
                let in_currency = c
                    .currency
                    .as_deref()
                    .and_then(crate::domain::currency::Currency::from_code)
                    .and_then(|cur| p.first_active_price_in(cur));
                price_label(
                    i18n,
                    &in_currency.or_else(|| p.first_active_price())?.kind,
                    None,
                    p.recurring_interval_count,
                )
            };
            Some(ProductChoice {
                id: p.id.to_string(),
                name: p.name.clone(),
                price,
                selected,
            })
        })
        .collect())
}

struct Processor {
    /// `test`, `stripe` or `none` (nothing to pay).
    kind: &'static str,
    publishable_key: String,
    js_url: String,
}

#[derive(Template)]
#[template(path = "checkout.html")]
struct CheckoutPage {
    /// The buyer's language.
    i18n: I18n,
    /// The language the page is shown in, for the confirm to keep on a checkout that has
    /// none of its own, so that the buyer's e-mails speak it too (`None`: it has one).
    keep_locale: Option<&'static str>,
    secret: String,
    script_url: &'static str,
    /// In the overlay of the checkout's embedding page: that page's origin, which the
    /// page's messages go to.
    embed_origin: Option<String>,
    seller: Seller,
    /// The products to choose between, when the checkout offers several.
    choices: Vec<ProductChoice>,
    /// The seller's page to go back to (`return_url`, http or https only).
    return_url: Option<String>,
    product_name: String,
    product_description: Option<String>,
    benefits: Vec<String>,
    currency: String,
    factor: i64,
    interval: Option<String>,
    price_label: String,
    /// The product's metered prices, billed at the end of each period ("$0.005 per unit ·
    /// API calls").
    metered: Vec<String>,
    /// The free trial the buyer gets, told in words (`None`: none).
    trial: Option<TrialNote>,
    /// `pay`, `subscribe` or `free`.
    mode: &'static str,
    button_label: String,
    custom: bool,
    custom_value: String,
    custom_min: String,
    custom_max: String,
    custom_hint: String,
    /// The seats of a seat-based price (`None` for other prices).
    seats: Option<SeatsView>,
    discount_box: bool,
    discount_code: String,
    amount: String,
    discount: Option<String>,
    subtotal: String,
    tax: Option<String>,
    /// The tax row's label (`VAT 19%`, `Includes VAT 19%`, `VAT reverse charge`, `Tax`).
    tax_label: String,
    /// What the buyer is told under the tax number (a reverse charge, a refuted number).
    tax_note: String,
    /// Buying as a business, and its billing name.
    business: bool,
    billing_name: String,
    total: String,
    form_required: bool,
    /// The billing address is asked for (a payment form, or a full address required).
    address_shown: bool,
    /// Line 1, postal code and city are required (`require_billing_address`).
    full_address: bool,
    email: String,
    name: String,
    country: String,
    state: String,
    line1: String,
    line2: String,
    postal_code: String,
    city: String,
    tax_id: String,
    countries: &'static [&'static str],
    us_states: &'static [&'static str],
    ca_subdivisions: &'static [&'static str],
    fields: Vec<FieldView>,
    processor: Processor,
}

async fn field_views(
    state: &AppState,
    p: &Product,
    data: &CustomFieldData,
) -> ApiResult<Vec<FieldView>> {
    let mut out = Vec::new();
    for (field, attached) in attached_custom_fields(state, &p.attached_custom_fields).await? {
        let (kind, form, options, min, max) = match &field.properties {
            CustomFieldProperties::Text {
                form,
                textarea,
                min_length: _,
                max_length: _,
            } => (
                if textarea.unwrap_or(false) {
                    "textarea"
                } else {
                    "text"
                },
                form,
                Vec::new(),
                String::new(),
                String::new(),
            ),
            CustomFieldProperties::Number { form, ge, le } => (
                "number",
                form,
                Vec::new(),
                ge.map(|v| v.to_string()).unwrap_or_default(),
                le.map(|v| v.to_string()).unwrap_or_default(),
            ),
            CustomFieldProperties::Date { form, ge, le } => {
                let day = |b: &Option<i64>| {
                    b.and_then(|t| DateTime::from_timestamp(t, 0))
                        .map(|d| d.format("%Y-%m-%d").to_string())
                        .unwrap_or_default()
                };
                ("date", form, Vec::new(), day(ge), day(le))
            }
            CustomFieldProperties::Checkbox { form } => {
                ("checkbox", form, Vec::new(), String::new(), String::new())
            }
            CustomFieldProperties::Select { form, options } => (
                "select",
                form,
                options
                    .iter()
                    .map(|o| (o.value.clone(), o.label.clone()))
                    .collect(),
                String::new(),
                String::new(),
            ),
        };
        let (value, checked) = match data.0.get(&field.slug) {
            Some(FieldValue::Str(s)) => (s.clone(), false),
            Some(FieldValue::Int(i)) => (i.to_string(), false),
            Some(FieldValue::Bool(b)) => (String::new(), *b),
            Some(FieldValue::Date(d)) => (d.chars().take(10).collect(), false),
            _ => (String::new(), false),
        };
        out.push(FieldView {
            value,
            checked,
            slug: field.slug.clone(),
            label: form
                .form_label
                .clone()
                .unwrap_or_else(|| field.name.clone()),
            kind,
            required: attached.required,
            help: form.form_help_text.clone(),
            placeholder: form.form_placeholder.clone().unwrap_or_default(),
            options,
            min,
            max,
        });
    }
    Ok(out)
}

async fn checkout_page(
    req: HttpRequest,
    state: web::Data<AppState>,
    secret: web::Path<String>,
    query: web::Query<PageQuery>,
) -> ApiResult<HttpResponse> {
    let Some(c) = by_secret(&state, &secret).await? else {
        return Err(not_found(&browser_lang(&req)));
    };
    let seller = seller(&state, &c).await?;
    let i18n = page_lang(&req, c.locale.as_deref(), &seller.default_locale);
    match c.effective_status(state.now()) {
        CheckoutStatus::Open => {}
        CheckoutStatus::Confirmed | CheckoutStatus::Succeeded => {
            return Ok(redirect(format!(
                "/checkout/{}/confirmation{}",
                c.client_secret,
                query.suffix()
            )))
        }
        CheckoutStatus::Expired => return Err(not_found(&i18n)),
        CheckoutStatus::Failed => {
            return Err(error_page(
                404,
                &i18n.t("checkout-closed"),
                &i18n.t("checkout-closed-text"),
            ))
        }
    }
    let product = product_of(&state, &c).await?;
    let currency = c
        .currency
        .clone()
        .unwrap_or_else(|| crate::domain::currency::Currency::DEFAULT.into());
    let interval = interval_of(&i18n, &c.price.kind, product.recurring_interval_count);
    let amount = c.amount.unwrap_or(0);
    let total = c.total_amount().unwrap_or(0);
    let per = interval
        .as_ref()
        .map(|i| format!("/{i}"))
        .unwrap_or_default();
    let trial = trial_note(&i18n, &c, &per, &currency);
    let seats = seats_view(&i18n, &c, &currency, &per);
    let (price_label, custom, custom_min, custom_max, custom_hint) = match &c.price.kind {
        PriceKind::OneTimeFree | PriceKind::RecurringFree { .. } => (
            format!(
                "{}{}",
                i18n.t("price-free"),
                interval
                    .as_ref()
                    .map(|i| format!(" / {i}"))
                    .unwrap_or_default()
            ),
            false,
            String::new(),
            String::new(),
            String::new(),
        ),
        PriceKind::OneTimeCustom {
            minimum_amount,
            maximum_amount,
            ..
        } => {
            // The currency's bounds hold too (Polar's per-currency minimum and maximum).
            let bounds = crate::domain::currency::Currency::from_code(&currency)
                .map(|cur| (cur.minimum_amount(), cur.maximum_amount()));
            let input_min = match (bounds, minimum_amount) {
                (Some((lo, _)), Some(m)) => Some((*m).max(lo)),
                (Some((lo, _)), None) => Some(lo),
                (None, m) => *m,
            };
            let input_max = match (bounds, maximum_amount) {
                (Some((_, hi)), Some(m)) => Some((*m).min(hi)),
                (_, m) => *m,
            };
            let hint = match (minimum_amount, maximum_amount) {
                (Some(lo), Some(hi)) => i18n.t2(
                    "amount-between",
                    "min",
                    i18n.money(*lo, &currency),
                    "max",
                    i18n.money(*hi, &currency),
                ),
                (Some(lo), None) => i18n.t1("amount-at-least", "min", i18n.money(*lo, &currency)),
                (None, Some(hi)) => i18n.t1("amount-at-most", "max", i18n.money(*hi, &currency)),
                (None, None) => String::new(),
            };
            (
                i18n.t("price-pay-what-you-want"),
                true,
                input_min
                    .map(|v| Money::new(v, &currency).major())
                    .unwrap_or_default(),
                input_max
                    .map(|v| Money::new(v, &currency).major())
                    .unwrap_or_default(),
                hint,
            )
        }
        _ if seats.is_some() => (
            seats.as_ref().map(|s| s.1.clone()).unwrap_or_default(),
            false,
            String::new(),
            String::new(),
            String::new(),
        ),
        _ => (
            format!("{}{}", i18n.money(amount, &currency), per),
            false,
            String::new(),
            String::new(),
            String::new(),
        ),
    };
    let mode = if !c.is_payment_form_required() {
        "free"
    } else if interval.is_some() {
        "subscribe"
    } else {
        "pay"
    };
    let button_label = match mode {
        "free" => i18n.t("button-free"),
        "subscribe" if trial.is_some() => i18n.t("button-trial"),
        "subscribe" => i18n.t1(
            "button-subscribe",
            "amount",
            format!("{}{}", i18n.money(total, &currency), per),
        ),
        _ => i18n.t1("button-pay", "amount", i18n.money(total, &currency)),
    };
    let none = |kind| Processor {
        kind,
        publishable_key: String::new(),
        js_url: String::new(),
    };
    let (processor, sources) = if mode == "free" {
        (none("none"), PageSources::default())
    } else {
        match state.processor.client() {
            ProcessorClient::Test => (none("test"), PageSources::default()),
            ProcessorClient::Stripe {
                publishable_key,
                js_url,
                sources,
            } => (
                Processor {
                    kind: "stripe",
                    publishable_key,
                    js_url,
                },
                sources,
            ),
        }
    };
    let address = c.customer_billing_address.clone().unwrap_or_default();
    let discount_amount = c.discount_amount();
    let tax_label = tax_label(&i18n, &c);
    let view = CheckoutPage {
        secret: c.client_secret.clone(),
        script_url: script_url(),
        embed_origin: frame_ancestor(c.embed_origin.as_deref()).filter(|_| query.embedded()),
        choices: product_choices(&state, &i18n, &c).await?,
        seller,
        return_url: c
            .return_url
            .clone()
            .filter(|u| u.starts_with("https://") || u.starts_with("http://")),
        product_name: product.name.clone(),
        product_description: product.description.clone().filter(|d| !d.trim().is_empty()),
        benefits: benefit_descriptions(&state, &product).await?,
        factor: 10_i64.pow(Money::minor_digits(&currency)),
        interval,
        price_label,
        metered: labels::metered_labels(
            &i18n,
            &product,
            &currency,
            &crate::app::views::product_meters(&state, &product).await?,
        ),
        trial,
        mode,
        button_label,
        custom,
        custom_value: if custom {
            Money::new(amount, &currency).major()
        } else {
            String::new()
        },
        custom_min,
        custom_max,
        custom_hint,
        seats: seats.map(|s| s.0),
        discount_box: c.allow_discount_codes && c.is_discount_applicable(),
        discount_code: c
            .discount
            .as_ref()
            .and_then(|d| d.code.clone())
            .unwrap_or_default(),
        amount: i18n.money(amount, &currency),
        discount: (discount_amount > 0).then(|| i18n.money(-discount_amount, &currency)),
        subtotal: i18n.money(c.subtotal_amount().unwrap_or(0), &currency),
        tax: c
            .tax_amount
            .filter(|t| *t > 0 || tax_label.is_some())
            .map(|t| i18n.money(t, &currency)),
        tax_label: tax_label.unwrap_or_else(|| i18n.t("tax")),
        tax_note: tax_note(&i18n, &c),
        business: c.is_business_customer || c.customer_tax_id.is_some(),
        billing_name: c.customer_billing_name.clone().unwrap_or_default(),
        total: i18n.money(total, &currency),
        form_required: c.is_payment_form_required(),
        address_shown: c.is_payment_form_required() || c.require_billing_address,
        full_address: c.require_billing_address,
        email: c.customer_email.clone().unwrap_or_default(),
        name: c.customer_name.clone().unwrap_or_default(),
        country: address.country.clone(),
        state: address
            .state
            .as_deref()
            .and_then(|s| s.split_once('-').map(|(_, s)| s.to_string()))
            .unwrap_or_default(),
        line1: address.line1.clone().unwrap_or_default(),
        line2: address.line2.clone().unwrap_or_default(),
        postal_code: address.postal_code.clone().unwrap_or_default(),
        city: address.city.clone().unwrap_or_default(),
        tax_id: c
            .customer_tax_id
            .as_ref()
            .map(|t| t.value.clone())
            .unwrap_or_default(),
        countries: COUNTRIES,
        us_states: US_STATES,
        ca_subdivisions: CA_SUBDIVISIONS,
        fields: field_views(&state, &product, &c.custom_field_data).await?,
        processor,
        currency,
        keep_locale: c.locale.is_none().then(|| i18n.tag()),
        i18n,
    };
    let framed_by = frame_ancestor(c.embed_origin.as_deref());
    Ok(framed_page(
        200,
        render(&view)?,
        &sources,
        framed_by.as_deref(),
    ))
}

// ---------------------------------------------------------------------------------------
// The confirmation page.

struct KeyView {
    key: String,
    benefit: String,
    status: &'static str,
    expires: Option<String>,
}

#[derive(Template)]
#[template(path = "checkout_confirmation.html")]
struct ConfirmationPage {
    /// The buyer's language.
    i18n: I18n,
    script_url: &'static str,
    /// In the overlay of the checkout's embedding page: that page's origin.
    embed_origin: Option<String>,
    /// Embedded and paid: where the embedding page sends the buyer (`successURL` of the
    /// `success` message) and whether it leaves for it (the seller's own `success_url`).
    embed_success: Option<(String, bool)>,
    seller: Seller,
    /// `processing`, `succeeded` or `failed`.
    state: &'static str,
    product_name: String,
    interval: Option<String>,
    email: String,
    amount: String,
    discount: Option<String>,
    tax: String,
    /// The tax row's label (`VAT 19%`, `Includes VAT 19%`, `VAT reverse charge`, `Tax`).
    tax_label: String,
    total: String,
    keys: Vec<KeyView>,
    benefits: Vec<String>,
    success_url: Option<String>,
    /// Whether a receipt is e-mailed (a transport other than `none`).
    mailed: bool,
    /// The page that sends the keys again.
    resend_url: String,
}

/// The license keys a purchase created: their ids derive from the checkout's.
async fn granted_keys(
    state: &AppState,
    i18n: &I18n,
    c: &Checkout,
    p: &Product,
) -> ApiResult<Vec<KeyView>> {
    let mut out = Vec::new();
    for benefit in product_benefits(state, p).await? {
        if !matches!(benefit.properties, BenefitProperties::LicenseKeys(_)) {
            continue;
        }
        let id = LicenseKeyId(derived_uuid(c.id.0, &format!("license_key:{}", benefit.id)));
        if let Some(k) = state.store.get::<LicenseKey>(&id.key()).await? {
            let k = k.value;
            out.push(KeyView {
                key: k.key,
                benefit: benefit.description.clone(),
                status: match k.status {
                    KeyStatus::Granted => "granted",
                    KeyStatus::Revoked => "revoked",
                    KeyStatus::Disabled => "disabled",
                },
                expires: k.expires_at.map(|e| i18n.date(e.date_naive())),
            });
        }
    }
    Ok(out)
}

async fn confirmation_page(
    req: HttpRequest,
    state: web::Data<AppState>,
    secret: web::Path<String>,
    query: web::Query<PageQuery>,
) -> ApiResult<HttpResponse> {
    let Some(mut c) = by_secret(&state, &secret).await? else {
        return Err(not_found(&browser_lang(&req)));
    };
    let seller = seller(&state, &c).await?;
    let i18n = page_lang(&req, c.locale.as_deref(), &seller.default_locale);
    if c.status == CheckoutStatus::Confirmed && c.pending_intent().is_some() {
        // The buyer may just have finished 3-D Secure: ask the processor how it stands
        // (idempotent; an unreachable processor leaves the checkout confirmed).
        match crate::app::checkout::settle(&state, c.id).await {
            Ok(settled) => c = settled,
            Err(e) => tracing::debug!(checkout = %c.id, error = %e, "settle from the page"),
        }
    }
    let page_state = match c.effective_status(state.now()) {
        CheckoutStatus::Open => {
            // Back from a bank's page that did not pay: the reopened checkout says so.
            let told = if query.payment_refused() {
                "#payment-failed"
            } else {
                ""
            };
            return Ok(redirect(format!(
                "/checkout/{}{}{told}",
                c.client_secret,
                query.suffix()
            )));
        }
        CheckoutStatus::Expired => return Err(not_found(&i18n)),
        CheckoutStatus::Confirmed => "processing",
        CheckoutStatus::Succeeded => "succeeded",
        CheckoutStatus::Failed => "failed",
    };
    let product = product_of(&state, &c).await?;
    let currency = c
        .currency
        .clone()
        .unwrap_or_else(|| crate::domain::currency::Currency::DEFAULT.into());
    let discount_amount = c.discount_amount();
    let keys = if page_state == "succeeded" {
        granted_keys(&state, &i18n, &c, &product).await?
    } else {
        Vec::new()
    };
    let embed_origin = frame_ancestor(c.embed_origin.as_deref()).filter(|_| query.embedded());
    // Polar's `success`: the seller's own page when it set one (the parent goes there),
    // else this confirmation, which stays in the overlay.
    let embed_success = embed_origin
        .as_ref()
        .filter(|_| page_state == "succeeded")
        .map(
            |_| match c.success_url.as_ref().map(|_| c.success_url("")) {
                Some(url) if url.starts_with("https://") || url.starts_with("http://") => {
                    (url, true)
                }
                _ => (
                    format!(
                        "{}/checkout/{}/confirmation?embed=true",
                        state.public_url.trim_end_matches('/'),
                        c.client_secret
                    ),
                    false,
                ),
            },
        );
    let view = ConfirmationPage {
        script_url: script_url(),
        embed_origin: embed_origin.clone(),
        embed_success,
        seller,
        state: page_state,
        product_name: product.name.clone(),
        interval: interval_of(&i18n, &c.price.kind, product.recurring_interval_count),
        email: c.customer_email.clone().unwrap_or_default(),
        amount: i18n.money(c.amount.unwrap_or(0), &currency),
        discount: (discount_amount > 0).then(|| i18n.money(-discount_amount, &currency)),
        tax: i18n.money(c.tax_amount.unwrap_or(0), &currency),
        tax_label: tax_label(&i18n, &c).unwrap_or_else(|| i18n.t("tax")),
        total: i18n.money(c.total_amount().unwrap_or(0), &currency),
        keys,
        benefits: benefit_descriptions(&state, &product).await?,
        success_url: c
            .success_url
            .is_some()
            .then(|| c.success_url(""))
            .filter(|u| u.starts_with("https://") || u.starts_with("http://")),
        mailed: state.settings.email.transport != crate::config::EmailTransport::None,
        resend_url: format!(
            "{}?organization_id={}",
            crate::web::resend::PATH,
            c.organization_id
        ),
        i18n,
    };
    let framed_by = frame_ancestor(c.embed_origin.as_deref());
    Ok(framed_page(
        200,
        render(&view)?,
        &PageSources::default(),
        framed_by.as_deref(),
    ))
}
