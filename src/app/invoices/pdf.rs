//! The PDF of an invoice or a credit note: A4, the content of Polar's invoice
//! (`polar-2026.md` §3.4) plus the date of supply, the seller's and the buyer's tax
//! numbers and the mentions, written with `krilla` in DejaVu Sans (embedded and subset,
//! with a ToUnicode map, so every character extracts: "Müller", "Łódź", "€").
//!
//! Pure: the document is laid out from the [`Invoice`] snapshot alone, into pages of
//! positioned text and rules ([`layout`]), then drawn. Nothing varies between two renders
//! (the creation date is the date of issue, the document id the invoice's id), so the same
//! invoice renders the same bytes and a PDF can be rendered on demand instead of stored.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use krilla::color::rgb;
use krilla::geom::{PathBuilder, Point};
use krilla::metadata::{DateTime as PdfDate, Metadata};
use krilla::num::NormalizedF32;
use krilla::page::PageSettings;
use krilla::paint::{Fill, Stroke};
use krilla::surface::Surface;
use krilla::text::{Font, TextDirection};
use krilla::Document;

use crate::domain::customer::Address;
use crate::domain::invoice::{Invoice, InvoiceKind};
use crate::domain::money::Money;
use tollgate_actors::tax::{TaxBreakdown, TaxabilityReason};

#[path = "pdf_countries.rs"]
mod countries;
#[path = "pdf_font.rs"]
mod font;

pub use countries::{country_name, subdivision_name};

static REGULAR: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
static BOLD: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans-Bold.ttf");

static REGULAR_METRICS: LazyLock<font::Metrics> = LazyLock::new(|| font::Metrics::parse(REGULAR));
static BOLD_METRICS: LazyLock<font::Metrics> = LazyLock::new(|| font::Metrics::parse(BOLD));

/// A4 in points.
const PAGE_W: f32 = 595.28;
const PAGE_H: f32 = 841.89;
const LEFT: f32 = 50.0;
const RIGHT: f32 = PAGE_W - 50.0;
/// The second column of the parties (the buyer) and of the totals' labels.
const MIDDLE: f32 = 310.0;
/// No content below this line (the footer is under it).
const BOTTOM: f32 = PAGE_H - 60.0;
const FOOTER_Y: f32 = PAGE_H - 32.0;
/// The right edges of the items table's number columns.
const QUANTITY_R: f32 = 370.0;
const UNIT_R: f32 = 455.0;
/// The items table's description is cut to end before the quantity column.
const DESCRIPTION_W: f32 = QUANTITY_R - 55.0 - LEFT;

const BODY: f32 = 9.5;
const SMALL: f32 = 8.0;
const ROW: f32 = 13.0;

/// Why a PDF could not be written (the embedded fonts are checked by the tests, so this
/// is an internal error when it happens).
#[derive(Debug, thiserror::Error)]
#[error("invoice PDF: {0}")]
pub struct PdfError(String);

/// The PDF of `invoice`.
pub fn render(invoice: &Invoice) -> Result<Vec<u8>, PdfError> {
    let regular = Font::new(REGULAR.into(), 0)
        .ok_or_else(|| PdfError("DejaVuSans.ttf does not load".into()))?;
    let bold = Font::new(BOLD.into(), 0)
        .ok_or_else(|| PdfError("DejaVuSans-Bold.ttf does not load".into()))?;
    let size = PageSettings::from_wh(PAGE_W, PAGE_H)
        .ok_or_else(|| PdfError("A4 is not a page size".into()))?;
    let pages = layout(invoice);
    let mut document = Document::new();
    for ops in &pages {
        let mut page = document.start_page_with(size.clone());
        let mut surface = page.surface();
        for op in ops {
            draw(&mut surface, op, &regular, &bold);
        }
        surface.finish();
        page.finish();
    }
    document.set_metadata(metadata(invoice));
    document
        .finish()
        .map_err(|e| PdfError(format!("krilla: {e:?}")))
}

/// Title "Invoice <number>" (a credit note's "Credit note <number>"), creator Tollgate,
/// created on the date of issue.
fn metadata(invoice: &Invoice) -> Metadata {
    let at = invoice.issued_at;
    let date = PdfDate::new(u16::try_from(chrono::Datelike::year(&at)).unwrap_or(0))
        .month(chrono::Datelike::month(&at) as u8)
        .day(chrono::Datelike::day(&at) as u8)
        .hour(chrono::Timelike::hour(&at) as u8)
        .minute(chrono::Timelike::minute(&at) as u8)
        .second(chrono::Timelike::second(&at) as u8)
        .utc_offset_hour(0)
        .utc_offset_minute(0);
    Metadata::new()
        .title(format!("{} {}", title(invoice), invoice.number))
        .creator("Tollgate".into())
        .creation_date(date)
        .document_id(invoice.id.to_string())
        .language("en".into())
}

/// One thing drawn on a page, at a baseline `y` from the top.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Text {
        x: f32,
        y: f32,
        size: f32,
        bold: bool,
        gray: bool,
        text: String,
    },
    /// A horizontal rule.
    Rule { x1: f32, x2: f32, y: f32 },
}

fn draw(surface: &mut Surface<'_>, op: &Op, regular: &Font, bold_font: &Font) {
    match op {
        Op::Text {
            x,
            y,
            size,
            bold,
            gray,
            text,
        } => {
            let shade = if *gray { 95 } else { 20 };
            surface.set_stroke(None);
            surface.set_fill(Some(Fill {
                paint: rgb::Color::new(shade, shade, shade).into(),
                opacity: NormalizedF32::ONE,
                rule: Default::default(),
            }));
            let font = if *bold { bold_font } else { regular };
            surface.draw_text(
                Point::from_xy(*x, *y),
                font.clone(),
                *size,
                text,
                false,
                TextDirection::Auto,
            );
        }
        Op::Rule { x1, x2, y } => {
            let mut path = PathBuilder::new();
            path.move_to(*x1, *y);
            path.line_to(*x2, *y);
            if let Some(path) = path.finish() {
                surface.set_fill(None);
                surface.set_stroke(Some(Stroke {
                    paint: rgb::Color::new(180, 180, 180).into(),
                    width: 0.6,
                    ..Default::default()
                }));
                surface.draw_path(&path);
                surface.set_stroke(None);
            }
        }
    }
}

fn title(invoice: &Invoice) -> &'static str {
    if invoice.is_credit_note() {
        "Credit note"
    } else {
        "Invoice"
    }
}

/// `August 1, 2026` (Polar's en_US long date).
fn long_date(at: DateTime<Utc>) -> String {
    at.format("%B %-d, %Y").to_string()
}

fn money(invoice: &Invoice, amount: i64) -> String {
    Money::new(amount, &invoice.currency).to_string()
}

/// The width of `text` in points.
pub fn text_width(text: &str, size: f32, bold: bool) -> f32 {
    let metrics: &font::Metrics = if bold {
        &BOLD_METRICS
    } else {
        &REGULAR_METRICS
    };
    metrics.width(text) * size
}

/// `text` cut (with "…") to fit `width`.
fn fit(text: &str, size: f32, bold: bool, width: f32) -> String {
    if text_width(text, size, bold) <= width {
        return text.to_string();
    }
    let mut out: String = text.to_string();
    while !out.is_empty() && text_width(&format!("{out}…"), size, bold) > width {
        out.pop();
    }
    format!("{}…", out.trim_end())
}

/// `text` broken into lines no wider than `width` (at spaces; a word longer than the line
/// is cut).
fn wrap(text: &str, size: f32, width: f32) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if text_width(&candidate, size, false) <= width || line.is_empty() {
            line = candidate;
        } else {
            lines.push(std::mem::take(&mut line));
            line = word.to_string();
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
        .into_iter()
        .map(|l| fit(&l, size, false, width))
        .collect()
}

/// The label of a tax number in `country` (as Polar's `seller.py`: GST in Australia and
/// New Zealand, GST/HST in Canada, VAT elsewhere; a US number is a tax id).
fn tax_label(country: Option<&str>) -> &'static str {
    match country.map(str::to_ascii_uppercase).as_deref() {
        Some("AU" | "NZ") => "GST",
        Some("CA") => "GST/HST",
        Some("US") => "Tax ID",
        _ => "VAT",
    }
}

/// An address as printed: its lines, then the town line (`City, State 12345` in the United
/// States and Canada as Polar prints it; `12345 City` elsewhere), then the country's name.
pub fn address_lines(address: &Address) -> Vec<String> {
    let mut lines: Vec<String> = [&address.line1, &address.line2]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let city = address.city.clone().unwrap_or_default();
    let postal = address.postal_code.clone().unwrap_or_default();
    let country = address.country.to_ascii_uppercase();
    let town = if country == "US" || country == "CA" {
        let state = address
            .state
            .as_deref()
            .map(|s| subdivision_name(s).map_or_else(|| s.to_string(), str::to_string));
        let region = [state, Some(postal).filter(|p| !p.is_empty())]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        [city, region]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        [postal, city]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    };
    if !town.is_empty() {
        lines.push(town);
    }
    lines.push(country_name(&country).map_or(country.clone(), str::to_string));
    lines
}

/// The totals' line of one breakdown entry: `VAT — Germany (19%)`,
/// `GST — Quebec, Canada (5%)`, `VAT (0% Reverse charge)`; `None` for an entry that is
/// neither taxed nor reverse-charged (nothing to print).
pub fn breakdown_label(line: &TaxBreakdown) -> Option<String> {
    match line.reason {
        TaxabilityReason::ReverseCharge => Some(format!("{} (0% Reverse charge)", line.name)),
        TaxabilityReason::StandardRated => {
            let country = country_name(&line.country)
                .map_or_else(|| line.country.to_ascii_uppercase(), str::to_string);
            let place = match line.subdivision.as_deref().and_then(subdivision_name) {
                Some(sub) => format!("{sub}, {country}"),
                None => country,
            };
            Some(format!(
                "{} — {place} ({}%)",
                line.name,
                line.rate_percent()
            ))
        }
        _ => None,
    }
}

/// Pages of drawing operations, the footer included.
pub fn layout(invoice: &Invoice) -> Vec<Vec<Op>> {
    let mut l = Layout {
        pages: vec![Vec::new()],
        y: 0.0,
    };
    l.first_header(invoice);
    l.items(invoice);
    l.totals(invoice);
    l.mentions(invoice);
    let count = l.pages.len();
    for (i, page) in l.pages.iter_mut().enumerate() {
        page.push(Op::Rule {
            x1: LEFT,
            x2: RIGHT,
            y: FOOTER_Y - 12.0,
        });
        page.push(text_op(
            LEFT,
            FOOTER_Y,
            SMALL,
            false,
            true,
            format!("{} · Page {} of {count}", invoice.number, i + 1),
        ));
    }
    l.pages
}

fn text_op(x: f32, y: f32, size: f32, bold: bool, gray: bool, text: String) -> Op {
    Op::Text {
        x,
        y,
        size,
        bold,
        gray,
        text,
    }
}

struct Layout {
    pages: Vec<Vec<Op>>,
    /// The baseline of the last line written on the last page.
    y: f32,
}

impl Layout {
    fn push(&mut self, op: Op) {
        if let Some(page) = self.pages.last_mut() {
            page.push(op);
        }
    }

    fn text(&mut self, x: f32, size: f32, bold: bool, gray: bool, text: impl Into<String>) {
        let y = self.y;
        self.push(text_op(x, y, size, bold, gray, text.into()));
    }

    /// `text` ending at `right`.
    fn right(&mut self, right: f32, size: f32, bold: bool, text: impl Into<String>) {
        let text = text.into();
        let x = right - text_width(&text, size, bold);
        self.text(x, size, bold, false, text);
    }

    fn rule(&mut self, dy: f32) {
        let y = self.y + dy;
        self.push(Op::Rule {
            x1: LEFT,
            x2: RIGHT,
            y,
        });
    }

    /// Starts a new page when `height` more does not fit on this one; `true` if it did.
    fn room_for(&mut self, height: f32, invoice: &Invoice) -> bool {
        if self.y + height <= BOTTOM {
            return false;
        }
        self.pages.push(Vec::new());
        self.y = 62.0;
        self.text(
            LEFT,
            BODY,
            true,
            false,
            format!("{} {} (continued)", title(invoice), invoice.number),
        );
        self.y += 14.0;
        true
    }

    fn first_header(&mut self, invoice: &Invoice) {
        self.y = 78.0;
        self.text(LEFT, 22.0, true, false, title(invoice));
        self.y += 30.0;
        let number_label = if invoice.is_credit_note() {
            "Credit note number"
        } else {
            "Invoice number"
        };
        let rows = [
            (number_label, invoice.number.clone()),
            ("Date of issue", long_date(invoice.issued_at)),
            ("Date of supply", long_date(invoice.supplied_at)),
        ];
        for (label, value) in rows {
            self.text(LEFT, BODY, false, true, label);
            self.text(LEFT + 110.0, BODY, true, false, value);
            self.y += 14.0;
        }
        if let InvoiceKind::CreditNote { invoice_number, .. } = &invoice.kind {
            self.y += 4.0;
            self.text(
                LEFT,
                BODY,
                false,
                false,
                format!("Credit note for invoice {invoice_number}"),
            );
            self.y += 14.0;
        }
        self.y += 16.0;
        let top = self.y;
        // The seller, left.
        let seller = &invoice.seller;
        let mut left = vec![(true, seller.legal_name.clone())];
        left.extend(
            address_lines(&seller.address)
                .into_iter()
                .map(|l| (false, l)),
        );
        if let Some(id) = &seller.tax_id {
            left.push((
                false,
                format!("{}: {id}", tax_label(Some(&seller.address.country))),
            ));
        }
        // Level with the buyer's lines, under its heading.
        let bottom_left = self.block(LEFT, top + 14.0, None, &left);
        // The buyer, right.
        let buyer = &invoice.buyer;
        let mut right = vec![(true, buyer.name.clone())];
        if let Some(address) = &buyer.address {
            right.extend(address_lines(address).into_iter().map(|l| (false, l)));
        }
        if let Some(id) = &buyer.tax_id {
            let country = buyer.address.as_ref().map(|a| a.country.as_str());
            right.push((false, format!("{}: {id}", tax_label(country))));
        }
        right.push((false, buyer.email.clone()));
        let bottom_right = self.block(MIDDLE, top, Some("Bill to"), &right);
        self.y = bottom_left.max(bottom_right) + 22.0;
    }

    /// A block of lines from `top` at `x` (cut to the column), under an optional gray
    /// heading; answers the baseline after its last line.
    fn block(&mut self, x: f32, top: f32, heading: Option<&str>, lines: &[(bool, String)]) -> f32 {
        self.y = top;
        if let Some(h) = heading {
            self.text(x, SMALL, true, true, h);
            self.y += 14.0;
        }
        let width = MIDDLE - LEFT - 20.0;
        for (bold, line) in lines {
            let size = if *bold { 10.5 } else { BODY };
            self.text(x, size, *bold, false, fit(line, size, *bold, width));
            self.y += if *bold { 14.0 } else { 12.5 };
        }
        self.y
    }

    fn table_header(&mut self) {
        self.text(LEFT, SMALL, true, true, "Description");
        for (right, label) in [
            (QUANTITY_R, "Quantity"),
            (UNIT_R, "Unit price"),
            (RIGHT, "Amount"),
        ] {
            let x = right - text_width(label, SMALL, true);
            self.text(x, SMALL, true, true, label);
        }
        self.rule(5.0);
        self.y += 18.0;
    }

    fn items(&mut self, invoice: &Invoice) {
        self.table_header();
        for line in &invoice.lines {
            let height = if line.period.is_some() {
                ROW + 11.0
            } else {
                ROW
            };
            if self.room_for(height, invoice) {
                self.table_header();
            }
            let description = fit(&line.description, BODY, false, DESCRIPTION_W);
            self.text(LEFT, BODY, false, false, description);
            self.right(QUANTITY_R, BODY, false, line.quantity.to_string());
            self.right(UNIT_R, BODY, false, money(invoice, line.unit_amount));
            self.right(RIGHT, BODY, false, money(invoice, line.amount));
            if let Some((start, end)) = line.period {
                self.y += 11.0;
                let period = format!("{} – {}", long_date(start), long_date(end));
                self.text(LEFT + 8.0, SMALL, false, true, period);
            }
            self.y += ROW;
        }
        self.rule(-8.0);
        self.y += 8.0;
    }

    fn totals(&mut self, invoice: &Invoice) {
        let mut rows: Vec<(String, i64, bool)> = vec![("Subtotal".into(), invoice.subtotal, false)];
        if invoice.discount != 0 {
            rows.push(("Discount".into(), -invoice.discount, false));
        }
        let taxes: Vec<(String, i64)> = invoice
            .tax_breakdown
            .iter()
            .filter_map(|b| breakdown_label(b).map(|label| (label, b.amount)))
            .collect();
        if !taxes.is_empty() {
            // "Total tax" sums several lines (Polar's layout): one line is its own total.
            let several = taxes.len() > 1;
            rows.push(("Total excluding tax".into(), invoice.net, false));
            rows.extend(
                taxes
                    .into_iter()
                    .map(|(label, amount)| (label, amount, false)),
            );
            if several {
                rows.push(("Total tax".into(), invoice.tax(), false));
            }
        }
        rows.push(("Total".into(), invoice.total, true));
        let height = rows.len() as f32 * 16.0 + 8.0;
        self.room_for(height, invoice);
        let label_x = MIDDLE - 20.0;
        let label_w = RIGHT - 95.0 - label_x;
        for (label, amount, bold) in rows {
            if bold {
                self.push(Op::Rule {
                    x1: label_x,
                    x2: RIGHT,
                    y: self.y - 11.0,
                });
                self.y += 3.0;
            }
            let size = if bold { 10.5 } else { BODY };
            self.text(label_x, size, bold, !bold, fit(&label, size, bold, label_w));
            self.right(RIGHT, size, bold, money(invoice, amount));
            self.y += 16.0;
        }
    }

    fn mentions(&mut self, invoice: &Invoice) {
        self.y += 10.0;
        for mention in &invoice.mentions {
            for line in wrap(mention, BODY, RIGHT - LEFT) {
                self.room_for(13.0, invoice);
                self.text(LEFT, BODY, false, false, line);
                self.y += 13.0;
            }
            self.y += 4.0;
        }
    }
}

#[cfg(test)]
#[path = "pdf_tests.rs"]
mod tests;
