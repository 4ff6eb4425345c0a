//! Bar charts as inline SVG, drawn on the server (no script): one bar per day, stacked when
//! a chart has several series, each bar with a tooltip (`<title>`) giving its values.

use std::fmt::Write;

/// One series of a chart: a name, a colour and one value per day.
pub struct Series {
    pub name: &'static str,
    pub color: &'static str,
    pub values: Vec<f64>,
}

// A small canvas, so that text stays readable when a phone scales the chart down.
const W: f64 = 420.0;
const H: f64 = 180.0;
const LEFT: f64 = 58.0;
const BOTTOM: f64 = 24.0;
const TOP: f64 = 10.0;
const FONT: f64 = 13.0;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The SVG of a chart over `labels` (one per day); `format` prints a value (axis and
/// tooltips). Values below zero are drawn as zero.
pub fn bars(
    title: &str,
    labels: &[String],
    series: &[Series],
    format: &dyn Fn(f64) -> String,
) -> String {
    let n = labels.len().max(1);
    let totals: Vec<f64> = (0..n)
        .map(|i| {
            series
                .iter()
                .map(|s| s.values.get(i).copied().unwrap_or(0.0).max(0.0))
                .sum()
        })
        .collect();
    let max = totals.iter().copied().fold(0.0_f64, f64::max);
    let top = nice_ceiling(max);
    let plot_w = W - LEFT - 4.0;
    let plot_h = H - TOP - BOTTOM;
    let slot = plot_w / n as f64;
    let bar = (slot * 0.8).max(1.0);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg class="chart" viewBox="0 0 {W} {H}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg">"#,
        escape(title)
    );
    // Grid: zero, half and top, labelled.
    for frac in [0.0, 0.5, 1.0] {
        let y = TOP + plot_h * (1.0 - frac);
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e3e5e8"/><text x="{:.1}" y="{:.1}" font-size="{FONT}" text-anchor="end" fill="#5f6670">{}</text>"##,
            W - 4.0,
            LEFT - 4.0,
            y + 4.0,
            escape(&format(top * frac))
        );
    }
    for (i, label) in labels.iter().enumerate() {
        let x = LEFT + slot * i as f64 + (slot - bar) / 2.0;
        let mut base = TOP + plot_h;
        let mut tip = label.clone();
        for s in series {
            let v = s.values.get(i).copied().unwrap_or(0.0).max(0.0);
            let _ = write!(tip, " · {}: {}", s.name, format(v));
        }
        let _ = write!(svg, "<g><title>{}</title>", escape(&tip));
        for s in series {
            let v = s.values.get(i).copied().unwrap_or(0.0).max(0.0);
            let h = if top > 0.0 { plot_h * v / top } else { 0.0 };
            if h > 0.0 {
                base -= h;
                let _ = write!(
                    svg,
                    r#"<rect x="{x:.1}" y="{base:.1}" width="{bar:.1}" height="{h:.1}" fill="{}" data-series="{}" data-value="{v}"/>"#,
                    s.color, s.name
                );
            }
        }
        // An invisible full-height target keeps the tooltip reachable on empty days.
        let _ = write!(
            svg,
            r#"<rect x="{x:.1}" y="{TOP}" width="{bar:.1}" height="{plot_h:.1}" fill="transparent"/></g>"#
        );
    }
    // Dates under the first, middle and last bars.
    let mut marks = vec![0, n / 2, n - 1];
    marks.dedup();
    for i in marks {
        if let Some(label) = labels.get(i) {
            let x = LEFT + slot * i as f64 + slot / 2.0;
            let anchor = if i == 0 {
                "start"
            } else if i == n - 1 {
                "end"
            } else {
                "middle"
            };
            let x = match anchor {
                "start" => x - slot / 2.0,
                "end" => x + slot / 2.0,
                _ => x,
            };
            let _ = write!(
                svg,
                r##"<text x="{x:.1}" y="{:.1}" font-size="{FONT}" text-anchor="{anchor}" fill="#5f6670">{}</text>"##,
                H - 6.0,
                escape(label)
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

/// The smallest of 1, 2, 2.5, 5 × 10^k at or above `v` (1 for 0).
fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let exp = v.log10().floor();
    let base = 10f64.powf(exp);
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * base >= v - 1e-9 {
            return m * base;
        }
    }
    10.0 * base
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_ends_on_a_round_number() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(7.0), 10.0);
        assert_eq!(nice_ceiling(3.0), 5.0);
        assert_eq!(nice_ceiling(120.0), 200.0);
        assert_eq!(nice_ceiling(2.0), 2.0);
    }

    #[test]
    fn bars_stack_series_scale_to_the_axis_and_escape_text() {
        let labels = vec!["11-24".to_string(), "<11-25>".to_string()];
        let svg = bars(
            "Validations & more",
            &labels,
            &[
                Series {
                    name: "succeeded",
                    color: "#2f9e44",
                    values: vec![3.0, 0.0],
                },
                Series {
                    name: "refused",
                    color: "#d6336c",
                    values: vec![1.0, 0.0],
                },
            ],
            &|v| format!("{v}"),
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("aria-label=\"Validations &amp; more\""));
        assert!(svg.contains("&lt;11-25&gt;") && !svg.contains("<11-25>"));
        assert!(svg.contains(r#"data-series="succeeded" data-value="3""#));
        assert!(svg.contains(r#"data-series="refused" data-value="1""#));
        // 3 + 1 = 4 reaches the axis top (5) at 80%: bars of 3/5 and 1/5 of the plot.
        let plot_h = H - TOP - BOTTOM;
        assert!(svg.contains(&format!("height=\"{:.1}\" fill=\"#2f9e44\"", plot_h * 0.6)));
        // An empty day draws no coloured bar but keeps its tooltip.
        assert!(svg.contains("<title>&lt;11-25&gt; · succeeded: 0 · refused: 0</title>"));
    }
}
