//! Products (with their prices in major units) and the benefits they grant.

use serde::Deserialize;

use crate::api::benefit::{
    metadata_from_lines, metadata_lines, BenefitAdsUpdate, BenefitCreate, BenefitCustomUpdate,
    BenefitDownloadablesCreate, BenefitDownloadablesUpdate, BenefitFeatureFlagCreate,
    BenefitFeatureFlagProperties, BenefitFeatureFlagUpdate, BenefitLicenseKeyActivationProperties,
    BenefitLicenseKeyExpirationProperties, BenefitLicenseKeysCreate, BenefitLicenseKeysProperties,
    BenefitLicenseKeysUpdate, BenefitUpdate, Timeframe as TimeframeInput,
};
use crate::api::benefit_downloadables::BenefitDownloadablesProperties;
use crate::api::price::{
    amount_bounds_error, check_new_prices, seat_tiers_of, SeatTierInput, TAX_BEHAVIOR_EXPECTED,
};
use crate::api::product::{ProductBenefitsUpdate, NAME_MIN_CHARS};
use crate::api::Maybe;
use crate::app::catalog::{benefits, products};
use crate::auth::Subject;
use crate::domain::benefit::{Benefit, BenefitProperties, KeyQuantity, Timeframe};
use crate::domain::currency::Currency;
use crate::domain::ids::{OrganizationId, ProductId};
use crate::domain::product::{
    NewPrice, NewProduct, PriceChange, PriceKind, Product, ProductChange, RecurringInterval,
};
use crate::domain::tax_settings::TaxBehaviorOption;
use crate::error::{ApiError, Invalid};
use crate::field;
use crate::loc;
use crate::state::AppState;
use crate::validate::Validator;

use super::{opt_string, text, ticked, Typed};

#[path = "catalog_currencies.rs"]
mod currencies;
#[path = "catalog_metered.rs"]
mod metered;
use currencies::OTHER_PRICES;

// ---------------------------------------------------------------------------------------
// Products
// ---------------------------------------------------------------------------------------

/// A product and its pricing: billing (`one_time`, `month`, `year` or `month_year`),
/// amount type (`fixed`, `custom`, `free`, `seat_based`) and the amounts, in major units;
/// a seat-based price's tiers one a line (`1-4 10.00`, the last one open-ended: `5+ 8.00`).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ProductForm {
    pub name: String,
    pub description: String,
    pub billing: String,
    pub amount_type: String,
    pub amount: String,
    pub yearly_amount: String,
    pub minimum_amount: String,
    pub maximum_amount: String,
    pub preset_amount: String,
    /// A seat-based price's tiers, one a line: `1-4 10.00` (seats from and to, the price of
    /// a seat), the last one may be open-ended (`5+ 8.00` or `5- 8.00`).
    pub seat_tiers: String,
    /// `volume` (every seat at its tier's rate) or `graduated`.
    pub seat_tier_type: String,
    /// The prices' tax behaviour: `location`, `inclusive`, `exclusive` or empty (the
    /// organization's default).
    pub tax_behavior: String,
    pub is_archived: Option<String>,
    /// On an edit: replace the prices with the ones of the form.
    pub replace_prices: Option<String>,
    /// The currency of the prices above (a code; empty: the organization's default).
    pub currency: String,
    /// The same prices in other currencies, one currency a line (see
    /// [`ProductForm::other_currencies`]).
    pub other_prices: String,
    /// A metered price beside the others (`catalog_metered.rs`): its meter's id (empty:
    /// none), the price of a unit in cents (a decimal), an optional cap per period.
    pub metered_meter_id: String,
    pub metered_unit_amount: String,
    pub metered_cap: String,
}

impl Default for ProductForm {
    fn default() -> Self {
        ProductForm {
            name: String::new(),
            description: String::new(),
            billing: "one_time".into(),
            amount_type: "fixed".into(),
            amount: String::new(),
            yearly_amount: String::new(),
            minimum_amount: String::new(),
            maximum_amount: String::new(),
            preset_amount: String::new(),
            seat_tiers: String::new(),
            seat_tier_type: "volume".into(),
            tax_behavior: String::new(),
            is_archived: None,
            replace_prices: None,
            currency: String::new(),
            other_prices: String::new(),
            metered_meter_id: String::new(),
            metered_unit_amount: String::new(),
            metered_cap: String::new(),
        }
    }
}

impl ProductForm {
    pub fn of(p: &Product) -> Self {
        ProductForm {
            name: p.name.clone(),
            description: opt_string(&p.description),
            is_archived: p.is_archived.then(|| "on".to_string()),
            // What the prices on sale chose (the form sets one behaviour for them all).
            tax_behavior: p
                .first_active_price()
                .and_then(|price| p.price_tax_behavior(price.id))
                .map_or_else(String::new, |b| b.as_str().to_string()),
            ..ProductForm::default()
        }
        .with_metered_of(p)
    }

    /// The prices of the form: in its currency (`default`, the organization's, when none
    /// is chosen), then the same prices in each other currency it lists. `None` if one is
    /// not a price: the problems are in `v`, or in `typed` for an amount that does not
    /// read; the API's rules apply to each amount.
    pub(super) fn prices(
        &self,
        v: &mut Validator,
        typed: &mut Typed,
        default: Currency,
    ) -> Option<Vec<NewPrice>> {
        let currency = match self.currency.trim() {
            "" => default,
            code => match Currency::parse(&code.to_ascii_lowercase()) {
                Ok(c) => c,
                Err(_) => {
                    typed.push(
                        Invalid::new(field!["currency"], "Choose a currency from the list", code)
                            .kind("enum"),
                    );
                    return None;
                }
            },
        };
        let others = self.other_currencies(typed);
        let mut all = self.prices_in(v, typed, currency, 0);
        for (c, form) in others? {
            if c == currency {
                typed.push(
                    Invalid::new(
                        field![OTHER_PRICES],
                        format!(
                            "{} is the currency of the prices above",
                            c.code().to_ascii_uppercase()
                        ),
                        c.code(),
                    )
                    .kind("value_error"),
                );
                all = None;
                continue;
            }
            let offset = all.as_ref().map_or(0, Vec::len);
            match (all.as_mut(), form.prices_in(v, typed, c, offset)) {
                (Some(all), Some(more)) => all.extend(more),
                _ => all = None,
            }
        }
        all
    }

    /// The prices of the form in `currency`, the first one numbered `offset`.
    fn prices_in(
        &self,
        v: &mut Validator,
        typed: &mut Typed,
        currency: Currency,
        offset: usize,
    ) -> Option<Vec<NewPrice>> {
        let tax_behavior = match self.tax_behavior.trim() {
            "" => None,
            t => match TaxBehaviorOption::parse(t) {
                Some(b) => Some(b),
                None => {
                    typed.0.push(
                        Invalid::new(
                            field!["prices", 0, "tax_behavior"],
                            format!("Input should be {TAX_BEHAVIOR_EXPECTED}"),
                            t,
                        )
                        .kind("enum")
                        .with_ctx("expected", TAX_BEHAVIOR_EXPECTED),
                    );
                    return None;
                }
            },
        };
        let amount_type = match self.amount_type.trim() {
            "" => "fixed",
            t => t,
        };
        let intervals: Vec<(Option<RecurringInterval>, &str, &str)> = match self.billing.trim() {
            "month" => vec![(Some(RecurringInterval::Month), &self.amount, "Price")],
            "year" => vec![(Some(RecurringInterval::Year), &self.amount, "Price")],
            "month_year" => vec![
                (Some(RecurringInterval::Month), &self.amount, "Price"),
                (
                    Some(RecurringInterval::Year),
                    &self.yearly_amount,
                    "Yearly price",
                ),
            ],
            "" | "one_time" => vec![(None, &self.amount, "Price")],
            other => {
                typed.0.push(
                    Invalid::new(
                        field!["prices", 0, "type"],
                        "Input should be 'recurring' or 'one_time'",
                        other,
                    )
                    .kind("literal_error")
                    .with_ctx("expected", "'recurring' or 'one_time'"),
                );
                return None;
            }
        };
        let cadences: Vec<Option<RecurringInterval>> = intervals.iter().map(|c| c.0).collect();
        let mut kinds = Vec::with_capacity(intervals.len());
        let mut ok = true;
        for (i, (interval, typed_in, label)) in intervals.into_iter().enumerate() {
            let i = i + offset;
            let allowed: &[&str] = match interval {
                Some(_) => &["fixed", "free", "seat_based"],
                None => &["fixed", "custom", "free", "seat_based"],
            };
            if amount_type == "seat_based" && i > offset {
                typed.0.push(
                    Invalid::new(
                        field!["prices", i, "amount_type"],
                        "A seat-based price has one billing period: choose monthly or yearly",
                        amount_type,
                    )
                    .kind("value_error"),
                );
                ok = false;
                continue;
            }
            if !allowed.contains(&amount_type) {
                let expected = match interval {
                    Some(_) => "'fixed', 'free' or 'seat_based'",
                    None => "'fixed', 'custom', 'free' or 'seat_based'",
                };
                typed.0.push(
                    Invalid::new(
                        field!["prices", i, "amount_type"],
                        format!("Input should be {expected}"),
                        amount_type,
                    )
                    .kind("literal_error")
                    .with_ctx("expected", expected),
                );
                ok = false;
                continue;
            }
            let code = currency.to_string();
            let at = (i, currency);
            let kind = match (interval, amount_type) {
                (_, "seat_based") => self.seat_price(v, typed, at, interval),
                (Some(interval), "fixed") => {
                    amount_at(v, typed, (at, "price_amount"), (typed_in, label), true).map(|a| {
                        PriceKind::RecurringFixed {
                            interval,
                            currency: code,
                            amount: a.unwrap_or_default(),
                        }
                    })
                }
                (Some(interval), _) => Ok(PriceKind::RecurringFree { interval }),
                (None, "fixed") => {
                    amount_at(v, typed, (at, "price_amount"), (typed_in, label), true).map(|a| {
                        PriceKind::OneTimeFixed {
                            currency: code,
                            amount: a.unwrap_or_default(),
                        }
                    })
                }
                (None, "custom") => {
                    let min = amount_at(
                        v,
                        typed,
                        (at, "minimum_amount"),
                        (&self.minimum_amount, "Minimum"),
                        false,
                    );
                    let max = amount_at(
                        v,
                        typed,
                        (at, "maximum_amount"),
                        (&self.maximum_amount, "Maximum"),
                        false,
                    );
                    let preset = amount_at(
                        v,
                        typed,
                        (at, "preset_amount"),
                        (&self.preset_amount, "Suggested"),
                        false,
                    );
                    match (min, max, preset) {
                        (Ok(minimum_amount), Ok(maximum_amount), Ok(preset_amount)) => {
                            Ok(PriceKind::OneTimeCustom {
                                currency: code,
                                minimum_amount,
                                maximum_amount,
                                preset_amount,
                            })
                        }
                        _ => Err(()),
                    }
                }
                (None, _) => Ok(PriceKind::OneTimeFree),
            };
            match kind {
                Ok(kind) => kinds.push(NewPrice::new(kind, currency, tax_behavior)),
                Err(()) => ok = false,
            }
        }
        let at = offset + cadences.len();
        match self.metered_prices(typed, &cadences, (currency, at), tax_behavior) {
            Ok(metered) => kinds.extend(metered),
            Err(()) => ok = false,
        }
        ok.then_some(kinds)
    }
}

impl ProductForm {
    /// The seat-based price `i` of the form: the tiers read from their lines, then checked
    /// by the API's own reading of `seat_tiers` (seat counts, amounts, gaps and overlaps,
    /// the open-ended last tier), so the rules and messages are the API's.
    fn seat_price(
        &self,
        v: &mut Validator,
        typed: &mut Typed,
        (i, currency): (usize, Currency),
        interval: Option<RecurringInterval>,
    ) -> Result<PriceKind, ()> {
        let tier_type = match self.seat_tier_type.trim() {
            "" => "volume",
            t => t,
        };
        let tiers = self.seat_tier_lines(typed, currency)?;
        let seat_tiers = seat_tiers_of(v, loc!["body", "prices", i], tier_type, &tiers).ok_or(())?;
        let currency = currency.to_string();
        Ok(match interval {
            Some(interval) => PriceKind::RecurringSeatBased {
                interval,
                currency,
                seat_tiers,
            },
            None => PriceKind::OneTimeSeatBased {
                currency,
                seat_tiers,
            },
        })
    }

    /// The tiers typed one a line (`1-4 10.00`, `5+ 8.00`, `5- 8.00`, or one count: `3
    /// 9.00`), the price in minor units; `Err` when a line does not read (named by its
    /// number, in `typed`).
    fn seat_tier_lines(
        &self,
        typed: &mut Typed,
        currency: Currency,
    ) -> Result<Vec<SeatTierInput>, ()> {
        let mut tiers = Vec::new();
        let mut ok = true;
        for (n, line) in self.seat_tiers.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let problem = |what: &str| {
                Invalid::new(
                    field!["Seat tiers"],
                    format!(
                        "Line {}: {what}; write each tier as seats from-to and the price of a \
                         seat, like 1-4 10.00 (the last tier may be open-ended: 5+ 8.00)",
                        n + 1
                    ),
                    line,
                )
                .kind("value_error")
            };
            let Some((range, price)) = line.rsplit_once(char::is_whitespace) else {
                typed.push(problem("no price"));
                ok = false;
                continue;
            };
            let range: String = range.chars().filter(|c| !c.is_whitespace()).collect();
            let (min, max) = if let Some(min) = range.strip_suffix(['+', '-']) {
                (min, None)
            } else if let Some((min, max)) = range.split_once('-') {
                (min, Some(max))
            } else {
                (range.as_str(), Some(range.as_str()))
            };
            let count = |s: &str| s.parse::<i64>().ok();
            let max = match max {
                None => Some(None),
                Some(m) => count(m).map(Some),
            };
            let (Some(min_seats), Some(max_seats)) = (count(min), max) else {
                typed.push(problem("the seats are not whole numbers"));
                ok = false;
                continue;
            };
            let Some(price_per_seat) = typed.amount(price, currency, "Seat tiers") else {
                ok = false;
                continue;
            };
            tiers.push(SeatTierInput {
                min_seats,
                max_seats,
                price_per_seat,
            });
        }
        ok.then_some(tiers).ok_or(())
    }
}

/// An amount of price `i` at `field` (`typed_in`, labelled `label`), within the API's
/// bounds; `required`: a fixed price's. `Err` when it is not one (the problem is in `v` or
/// `typed`).
fn amount_at(
    v: &mut Validator,
    typed: &mut Typed,
    ((i, currency), field): ((usize, Currency), &str),
    (typed_in, label): (&str, &str),
    required: bool,
) -> Result<Option<i64>, ()> {
    if typed_in.trim().is_empty() {
        if required {
            typed.0.push(
                Invalid::new(field!["prices", i, field], "Field required", None::<&str>)
                    .kind("missing"),
            );
            return Err(());
        }
        return Ok(None);
    }
    let Some(n) = typed.amount(typed_in, currency, label) else {
        return Err(());
    };
    match amount_bounds_error(loc!["body", "prices", i, field], currency, n) {
        None => Ok(Some(n)),
        Some(e) => {
            v.push(e);
            Err(())
        }
    }
}

/// The API's rules on a product's name.
fn check_name(v: &mut Validator, name: &str) {
    if v.min_chars(loc!["body", "name"], name, NAME_MIN_CHARS) {
        v.header_safe(loc!["body", "name"], name);
    }
}

pub async fn create_product(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
    form: &ProductForm,
) -> Result<Product, ApiError> {
    let (mut v, mut typed) = (Validator::new(), Typed::default());
    let name = form.name.trim().to_string();
    check_name(&mut v, &name);
    let default = crate::app::catalog::organizations::default_currency(state, org).await?;
    let prices = form.prices(&mut v, &mut typed, default);
    if let Some(kinds) = &prices {
        check_new_prices(&mut v, kinds, &Default::default());
    }
    typed.finish(v.finish())?;
    let new = NewProduct {
        organization_id: Some(org.0),
        name,
        description: text(&form.description),
        prices: prices.unwrap_or_default(),
        prices_sent: Default::default(),
        metadata: Default::default(),
        recurring_interval_count: 1,
        trial: None,
        medias: Vec::new(),
        attached_custom_fields: Vec::new(),
    };
    Ok(products::create(state, subject, new).await?)
}

pub async fn update_product(
    state: &AppState,
    subject: Subject,
    id: ProductId,
    form: &ProductForm,
) -> Result<Product, ApiError> {
    let (mut v, mut typed) = (Validator::new(), Typed::default());
    let name = form.name.trim().to_string();
    check_name(&mut v, &name);
    let prices = match ticked(&form.replace_prices) {
        true => {
            let org = products::get(state, subject, id).await?.organization_id;
            let default = crate::app::catalog::organizations::default_currency(state, org).await?;
            form.prices(&mut v, &mut typed, default)
        }
        false => None,
    };
    typed.finish(v.finish())?;
    let change = ProductChange {
        name: Some(name),
        description: text(&form.description),
        is_archived: Some(ticked(&form.is_archived)),
        metadata: None,
        prices: prices.map(|ps| ps.into_iter().map(PriceChange::Add).collect()),
        prices_sent: Default::default(),
        recurring_interval_count: None,
        trial: None,
        medias: None,
        attached_custom_fields: None,
    };
    Ok(products::update(state, subject, id, change).await?)
}

/// The benefits a product grants: the ticked ones, in order.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ProductBenefitsForm {
    pub benefit: Vec<String>,
}

pub async fn set_product_benefits(
    state: &AppState,
    subject: Subject,
    id: ProductId,
    form: &ProductBenefitsForm,
) -> Result<Product, ApiError> {
    let mut typed = Typed::default();
    let benefits = typed.ids("benefits", &form.benefit);
    typed.finish(Ok(()))?;
    let requested = ProductBenefitsUpdate { benefits }.benefit_ids();
    Ok(products::update_benefits(state, subject, id, requested).await?)
}

// ---------------------------------------------------------------------------------------
// Benefits
// ---------------------------------------------------------------------------------------

/// A license-key benefit (or just the description of another type).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct BenefitForm {
    pub description: String,
    pub prefix: String,
    pub limit_usage: String,
    /// Expires after this many `timeframe`s; empty: never.
    pub ttl: String,
    pub timeframe: String,
    /// Activation limit; empty: none.
    pub activations: String,
    pub enable_customer_admin: Option<String>,
    /// At the limit, an activation may replace a live one (`activations.allow_replacement`).
    pub allow_replacement: Option<String>,
    /// `one_key` or `key_per_unit`: what a purchase of several units grants.
    pub quantity: String,
    /// Customers may rotate their keys in the portal.
    pub allow_customer_rotation: Option<String>,
    /// Days a subscription's key keeps working past its paid period; empty: the default.
    pub grace_days: String,
    /// The type a new benefit is of: `license_keys` (the default) or `feature_flag`.
    #[serde(rename = "type")]
    pub kind: String,
    /// A feature flag's metadata: one `key=value` a line (integers and `true`/`false` are
    /// typed, the rest are strings).
    pub metadata: String,
    /// A feature flag's visibility: `draft`, `private` or `public`.
    pub visibility: String,
    /// A downloadables benefit's files (ids, in the page's order).
    pub files: Vec<String>,
    /// Which of its files are archived (granted to earlier buyers only).
    pub archived: Vec<String>,
}

impl Default for BenefitForm {
    fn default() -> Self {
        BenefitForm {
            description: String::new(),
            prefix: String::new(),
            limit_usage: String::new(),
            ttl: String::new(),
            timeframe: "year".into(),
            activations: String::new(),
            enable_customer_admin: None,
            allow_replacement: None,
            quantity: "one_key".into(),
            allow_customer_rotation: None,
            grace_days: String::new(),
            kind: "license_keys".into(),
            metadata: String::new(),
            visibility: "public".into(),
            files: Vec::new(),
            archived: Vec::new(),
        }
    }
}

impl BenefitForm {
    /// The form of a new benefit: customers may rotate their keys, as Polar lets them.
    pub fn blank() -> Self {
        BenefitForm {
            allow_customer_rotation: Some("on".into()),
            ..BenefitForm::default()
        }
    }

    pub fn of(b: &Benefit) -> Self {
        let mut form = BenefitForm {
            description: b.description.clone(),
            ..BenefitForm::default()
        };
        form.kind = b.kind().as_str().into();
        form.visibility = b.visibility.as_str().into();
        form.metadata = metadata_lines(&b.metadata);
        if let BenefitProperties::Downloadables(p) = &b.properties {
            form.files = p.files.iter().map(|f| f.to_string()).collect();
            form.archived = p.archived.iter().map(|(f, _)| f.to_string()).collect();
        }
        if let BenefitProperties::LicenseKeys(p) = &b.properties {
            form.allow_customer_rotation = p.allow_customer_rotation.then(|| "on".to_string());
            form.grace_days = p.grace_days.to_string();
            form.quantity = p.quantity.as_str().into();
            form.prefix = opt_string(&p.prefix);
            form.limit_usage = opt_string(&p.limit_usage);
            if let Some(e) = &p.expires {
                form.ttl = e.ttl.to_string();
                form.timeframe = match e.timeframe {
                    Timeframe::Day => "day",
                    Timeframe::Month => "month",
                    Timeframe::Year => "year",
                }
                .into();
            }
            if let Some(a) = &p.activations {
                form.activations = a.limit.to_string();
                form.enable_customer_admin = a.enable_customer_admin.then(|| "on".to_string());
                form.allow_replacement = a.allow_replacement.then(|| "on".to_string());
            }
        }
        form
    }

    /// The properties of a license-key benefit (create and update); what does not read is
    /// in `typed`.
    fn license_keys(&self, typed: &mut Typed) -> BenefitLicenseKeysProperties {
        let expires =
            match self.ttl.trim() {
                "" => None,
                ttl => {
                    let ttl = typed.int(field!["properties", "expires", "ttl"], ttl, true);
                    let timeframe = match self.timeframe.as_str() {
                        "year" => Some(TimeframeInput::Year),
                        "month" => Some(TimeframeInput::Month),
                        "day" => Some(TimeframeInput::Day),
                        other => {
                            typed.0.push(
                                Invalid::new(
                                    field!["properties", "expires", "timeframe"],
                                    "Input should be 'year', 'month' or 'day'",
                                    other,
                                )
                                .kind("enum"),
                            );
                            None
                        }
                    };
                    ttl.zip(timeframe).map(|(ttl, timeframe)| {
                        BenefitLicenseKeyExpirationProperties { ttl, timeframe }
                    })
                }
            };
        let activations = match self.activations.trim() {
            "" => None,
            limit => typed
                .int(field!["properties", "activations", "limit"], limit, true)
                .map(|limit| BenefitLicenseKeyActivationProperties {
                    limit,
                    enable_customer_admin: ticked(&self.enable_customer_admin),
                    allow_replacement: ticked(&self.allow_replacement),
                }),
        };
        BenefitLicenseKeysProperties {
            prefix: text(&self.prefix),
            expires,
            activations,
            limit_usage: typed.int(field!["properties", "limit_usage"], &self.limit_usage, true),
            allow_customer_rotation: Some(ticked(&self.allow_customer_rotation)),
            grace_days: typed.int(field!["properties", "grace_days"], &self.grace_days, true),
            quantity: match self.quantity.trim() {
                "" => None,
                q => match KeyQuantity::parse(q) {
                    Some(q) => Some(q.into()),
                    None => {
                        typed.push(
                            Invalid::new(
                                field!["properties", "quantity"],
                                "Input should be 'one_key' or 'key_per_unit'",
                                q,
                            )
                            .kind("enum"),
                        );
                        None
                    }
                },
            },
        }
    }
}

impl BenefitForm {
    /// The metadata lines as the API's `metadata` object (its checks apply); a line
    /// without `=` is a 422 of its own.
    fn metadata(&self, typed: &mut Typed) -> Maybe<crate::api::benefit::MetadataBody> {
        match metadata_from_lines(&self.metadata) {
            Ok(m) => m,
            Err(line) => {
                typed.push(
                    Invalid::new(field!["metadata"], "Write one key=value a line", line)
                        .kind("value_error"),
                );
                Maybe::Absent
            }
        }
    }

    fn visibility(&self) -> Option<String> {
        Some(self.visibility.trim().to_string()).filter(|v| !v.is_empty())
    }

    /// Whether the form attaches the file `id`.
    pub fn attaches(&self, id: &str) -> bool {
        self.files.iter().any(|f| f == id)
    }

    /// Whether the form archives the file `id`.
    pub fn archives(&self, id: &str) -> bool {
        self.archived.iter().any(|f| f == id)
    }

    /// A downloadables benefit's properties: the checked files (an id that does not read
    /// names no file: the API's 422 "File not found."), the checked archived ones.
    fn downloadables(&self) -> BenefitDownloadablesProperties {
        let id = |s: &String| s.trim().parse::<uuid::Uuid>().unwrap_or_default();
        BenefitDownloadablesProperties {
            files: self.files.iter().map(id).collect(),
            archived: self
                .archived
                .iter()
                .filter(|a| self.attaches(a))
                .map(|a| (id(a), true))
                .collect(),
        }
    }
}

/// Creates the benefit of the dashboard's form: a license-key benefit, a feature flag
/// (`type=feature_flag`) with its metadata and visibility, or a downloadables benefit
/// (`type=downloadables`) with its files.
pub async fn create_license_key_benefit(
    state: &AppState,
    subject: Subject,
    org: OrganizationId,
    form: &BenefitForm,
) -> Result<Benefit, ApiError> {
    let mut typed = Typed::default();
    let body = if form.kind == "downloadables" {
        BenefitCreate::Downloadables(BenefitDownloadablesCreate {
            description: form.description.trim().to_string(),
            organization_id: Some(org.0),
            properties: form.downloadables(),
            metadata: Maybe::Absent,
            visibility: None,
        })
    } else if form.kind == "feature_flag" {
        BenefitCreate::FeatureFlag(BenefitFeatureFlagCreate {
            description: form.description.trim().to_string(),
            organization_id: Some(org.0),
            properties: BenefitFeatureFlagProperties {},
            metadata: form.metadata(&mut typed),
            visibility: form.visibility(),
        })
    } else {
        BenefitCreate::LicenseKeys(BenefitLicenseKeysCreate {
            description: form.description.trim().to_string(),
            organization_id: Some(org.0),
            properties: form.license_keys(&mut typed),
            metadata: Maybe::Absent,
            visibility: None,
        })
    };
    let new = typed.finish(body.into_command())?;
    Ok(benefits::create(state, subject, new).await?)
}

/// Saves a benefit: a license-key benefit's description and properties (keys already
/// granted keep theirs, as with the API); another type's description.
pub async fn update_benefit(
    state: &AppState,
    subject: Subject,
    benefit: &Benefit,
    form: &BenefitForm,
) -> Result<Benefit, ApiError> {
    let mut typed = Typed::default();
    let description = Some(form.description.trim().to_string());
    let body = match benefit.properties {
        BenefitProperties::LicenseKeys(_) => BenefitUpdate::LicenseKeys(BenefitLicenseKeysUpdate {
            description,
            properties: Some(form.license_keys(&mut typed)),
            metadata: Maybe::Absent,
            visibility: None,
        }),
        BenefitProperties::FeatureFlag => BenefitUpdate::FeatureFlag(BenefitFeatureFlagUpdate {
            description,
            properties: None,
            metadata: form.metadata(&mut typed),
            visibility: form.visibility(),
        }),
        BenefitProperties::Downloadables(_) => {
            BenefitUpdate::Downloadables(BenefitDownloadablesUpdate {
                description,
                properties: Some(form.downloadables()),
                metadata: Maybe::Absent,
                visibility: None,
            })
        }
        BenefitProperties::Ads { .. } => BenefitUpdate::Ads(BenefitAdsUpdate {
            description,
            properties: None,
            metadata: Maybe::Absent,
            visibility: None,
        }),
        _ => BenefitUpdate::Custom(BenefitCustomUpdate {
            description,
            properties: None,
            metadata: Maybe::Absent,
            visibility: None,
        }),
    };
    let change = typed.finish(body.into_command())?;
    Ok(benefits::update(state, subject, benefit.id, change).await?)
}
