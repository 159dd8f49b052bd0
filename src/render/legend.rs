//! A chart's legend outside its plot: entries in rows between the title and the plot,
//! wrapped at the chart's width, so it never covers a bar, a line or the max (plotters'
//! legend box sits inside the plot area). Each entry shows its series the way the chart
//! draws it: a line with its marker, a marker, a bar (patterned like the bars), the deadline.

use crate::render::canvas::{Anchor, Canvas, Layer};
use crate::render::plot_marks::{hex, marker_svg};
use crate::render::plots::{color, deadline_color};

/// How an entry's series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swatch {
    /// The i-th series as a line with its marker on it.
    Line(usize),
    /// The i-th series' marker alone.
    Marker(usize),
    /// The i-th series' bar (filled, patterned after the first).
    Bar(usize),
    /// The deadline: a dashed near-black line.
    Deadline,
    /// No swatch: the label alone (a key's letter and what it stands for).
    Text,
}

/// One entry: its swatch and its label.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub swatch: Swatch,
    pub label: String,
}

const SWATCH: f64 = 26.0;
const GAP: f64 = 6.0;
const SPACING: f64 = 22.0;

fn swatch_width(e: &Entry) -> f64 {
    if e.swatch == Swatch::Text {
        0.0
    } else {
        SWATCH + GAP
    }
}

fn entry_width(c: &Canvas, e: &Entry) -> f64 {
    swatch_width(e) + c.text_width(&e.label, c.font)
}

/// The rows the entries take within `width` units: each row's entries with their x offsets.
fn rows(c: &Canvas, entries: &[Entry], width: f64) -> Vec<Vec<(usize, f64)>> {
    let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new()];
    let mut x = 0.0;
    for (i, e) in entries.iter().enumerate() {
        let w = entry_width(c, e);
        if x > 0.0 && x + w > width {
            rows.push(Vec::new());
            x = 0.0;
        }
        rows.last_mut().expect("a row").push((i, x));
        x += w + SPACING;
    }
    rows
}

/// The height the legend takes within `width` units (0 without entries).
pub fn height(c: &Canvas, entries: &[Entry], width: f64) -> f64 {
    if entries.is_empty() {
        return 0.0;
    }
    rows(c, entries, width).len() as f64 * c.line_height() + 6.0
}

/// Draws the legend with its top left at `(x0, y0)` within `width` units; returns its height.
pub fn draw(
    layer: &mut Layer,
    c: &Canvas,
    entries: &[Entry],
    (x0, y0): (f64, f64),
    width: f64,
) -> f64 {
    for (r, row) in rows(c, entries, width).iter().enumerate() {
        let y = y0 + (r as f64 + 0.5) * c.line_height();
        for &(i, dx) in row {
            let e = &entries[i];
            let x = x0 + dx;
            swatch(layer, e.swatch, (x, y));
            let at = (x + swatch_width(e), y);
            layer.classed_text(at, c.font, Anchor::Start, &e.label, "legend");
        }
    }
    height(c, entries, width)
}

fn swatch(layer: &mut Layer, s: Swatch, (x, y): (f64, f64)) {
    let mid = (x + SWATCH / 2.0, y);
    match s {
        Swatch::Line(i) => {
            layer.line((x, y), (x + SWATCH, y), &hex(color(i)), 3.0);
            layer.raw(&marker_svg(i, mid, &hex(color(i))));
        }
        Swatch::Marker(i) => layer.raw(&marker_svg(i, mid, &hex(color(i)))),
        Swatch::Bar(i) => layer.rect(
            (x + 4.0, y - 6.0),
            (SWATCH - 8.0, 12.0),
            &hex(color(i)),
            "none",
        ),
        Swatch::Deadline => layer.line((x, y), (x + SWATCH, y), &hex(deadline_color()), 2.0),
        Swatch::Text => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::canvas::{NARROW, WIDE};

    fn entries(n: usize) -> Vec<Entry> {
        (0..n)
            .map(|i| Entry {
                swatch: Swatch::Line(i),
                label: format!("CPU {i} — max 8.97 ms"),
            })
            .collect()
    }

    #[test]
    fn entries_wrap_into_rows_within_the_width() {
        let e = entries(4);
        for c in [WIDE, NARROW] {
            let width = f64::from(c.width) - 20.0;
            for row in rows(&c, &e, width) {
                let &(last, x) = row.last().unwrap();
                assert!(x + entry_width(&c, &e[last]) <= width, "{c:?}");
            }
        }
        assert_eq!(rows(&WIDE, &e, 940.0).len(), 2);
        assert_eq!(rows(&NARROW, &e, 420.0).len(), 2);
        assert_eq!(rows(&NARROW, &e, 300.0).len(), 4);
        assert_eq!(height(&WIDE, &[], 900.0), 0.0);
    }
}
