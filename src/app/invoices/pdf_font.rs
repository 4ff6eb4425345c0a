//! Advance widths of the embedded fonts, read from their `cmap` (format 4: the Basic
//! Multilingual Plane) and `hmtx` tables, so that amounts can be right-aligned and long
//! texts cut to their column. Kerning is not applied: the widths of digits and currency
//! signs, which are aligned, have none.

/// The advance of each character of the Basic Multilingual Plane, in ems.
pub struct Metrics {
    /// Indexed by code point; the `.notdef` glyph's advance where the font has no glyph.
    advances: Vec<f32>,
}

/// What a character is taken to be wide when the font cannot be read (never for the
/// embedded fonts: the tests check them).
const FALLBACK_EM: f32 = 0.6;

impl Metrics {
    pub fn parse(font: &[u8]) -> Metrics {
        parse(font).unwrap_or_else(|| Metrics {
            advances: vec![FALLBACK_EM; 0x1_0000],
        })
    }

    /// The width of `text` at a size of 1 (multiply by the size in points).
    pub fn width(&self, text: &str) -> f32 {
        text.chars()
            .map(|c| {
                self.advances
                    .get(c as usize)
                    .copied()
                    .unwrap_or(FALLBACK_EM)
            })
            .sum()
    }
}

fn u16_at(data: &[u8], at: usize) -> Option<u16> {
    let bytes = data.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([bytes[0], bytes[1]]))
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    let bytes = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// The offset of a table of the font.
fn table(data: &[u8], tag: &[u8; 4]) -> Option<usize> {
    let count = usize::from(u16_at(data, 4)?);
    (0..count).find_map(|i| {
        let record = 12 + 16 * i;
        (data.get(record..record + 4)? == tag)
            .then(|| u32_at(data, record + 8).map(|o| o as usize))
            .flatten()
    })
}

fn parse(data: &[u8]) -> Option<Metrics> {
    let head = table(data, b"head")?;
    let units_per_em = f32::from(u16_at(data, head + 18)?);
    let hhea = table(data, b"hhea")?;
    let long_metrics = usize::from(u16_at(data, hhea + 34)?);
    let hmtx = table(data, b"hmtx")?;
    let advance = |glyph: u16| -> Option<f32> {
        let index = usize::from(glyph).min(long_metrics.checked_sub(1)?);
        Some(f32::from(u16_at(data, hmtx + 4 * index)?) / units_per_em)
    };
    let cmap = table(data, b"cmap")?;
    let subtables = usize::from(u16_at(data, cmap + 2)?);
    // The Windows Unicode BMP subtable (3, 1), else Unicode BMP (0, 3).
    let sub = (0..subtables)
        .filter_map(|i| {
            let record = cmap + 4 + 8 * i;
            let platform = u16_at(data, record)?;
            let encoding = u16_at(data, record + 2)?;
            let offset = cmap + u32_at(data, record + 4)? as usize;
            (u16_at(data, offset)? == 4).then_some(((platform, encoding), offset))
        })
        .find(|(id, _)| *id == (3, 1) || *id == (0, 3))
        .map(|(_, offset)| offset)?;
    let segments = usize::from(u16_at(data, sub + 6)? / 2);
    let ends = sub + 14;
    let starts = ends + 2 * segments + 2;
    let deltas = starts + 2 * segments;
    let range_offsets = deltas + 2 * segments;
    let notdef = advance(0)?;
    let mut advances = vec![notdef; 0x1_0000];
    for s in 0..segments {
        let end = u16_at(data, ends + 2 * s)?;
        let start = u16_at(data, starts + 2 * s)?;
        let delta = u16_at(data, deltas + 2 * s)?;
        let range_at = range_offsets + 2 * s;
        let range = usize::from(u16_at(data, range_at)?);
        if start > end {
            continue;
        }
        for c in start..=end {
            let glyph = if range == 0 {
                c.wrapping_add(delta)
            } else {
                let at = range_at + range + 2 * usize::from(c - start);
                match u16_at(data, at)? {
                    0 => 0,
                    g => g.wrapping_add(delta),
                }
            };
            if glyph != 0 {
                advances[usize::from(c)] = advance(glyph)?;
            }
        }
    }
    Some(Metrics { advances })
}
