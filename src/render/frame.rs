//! A chart's frame, laid out from the sizes of its texts before anything is drawn: the
//! title, the legend in rows under it, the y tick labels and axis title at the left, the x
//! tick labels (one or more lines each) and the axis title under the plot, so no text
//! touches another and the plot takes what is left. Used by the charts that must survive
//! real data (histograms, study and suite bars, per-second maxima, trends).

use crate::render::canvas::{text_width, Anchor, Canvas, Layer};
use crate::render::legend::{self, Entry};
use plotters::coord::Shift;
use plotters::prelude::*;

/// The texts around a plot: tick labels (value, lines; a y label's lines split at `\n`),
/// families written once under their neighbours' x labels, and axis titles.
#[derive(Debug, Clone, Default)]
pub struct Axes {
    pub x_ticks: Vec<(f64, Vec<String>)>,
    /// (first value, last value, label): a bracket under the x labels from one to the other.
    pub x_groups: Vec<(f64, f64, String)>,
    pub y_ticks: Vec<(f64, String)>,
    pub x_title: String,
    pub y_title: String,
    /// The x labels sit in the middle of slots (categories): none sticks out at the right.
    pub x_centred: bool,
}

/// The plot's rectangle in SVG units: left, top, right, bottom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub left: f64,
    pub top: f64,
    pub right: f64,
    pub bottom: f64,
}

impl Rect {
    pub fn width(&self) -> f64 {
        self.right - self.left
    }
}

const PAD: f64 = 8.0;

impl Axes {
    /// Lines of the tallest x tick label, and the groups' line.
    fn x_lines(&self) -> usize {
        let ticks = self.x_ticks.iter().map(|t| t.1.len()).max().unwrap_or(0);
        ticks + usize::from(!self.x_groups.is_empty())
    }

    /// The widest y tick label.
    pub fn y_label_width(&self, c: &Canvas) -> f64 {
        self.y_ticks
            .iter()
            .flat_map(|t| t.1.split('\n'))
            .map(|l| text_width(l, c.font))
            .fold(0.0, f64::max)
    }
}

/// Where the plot goes in the band `[top, bottom]` of the canvas, under `head` units of
/// title and legend, with room for the axes' texts (`right`: units kept free at the right).
pub fn plot_rect(
    c: &Canvas,
    (top, bottom): (f64, f64),
    head: f64,
    axes: &Axes,
    right: f64,
) -> Rect {
    let lh = c.line_height();
    let y_title = if axes.y_title.is_empty() {
        0.0
    } else {
        lh + 4.0
    };
    let left = PAD + y_title + axes.y_label_width(c) + 8.0;
    let x_title = if axes.x_title.is_empty() {
        0.0
    } else {
        lh + 2.0
    };
    let below = 6.0 + axes.x_lines() as f64 * lh + x_title + PAD;
    // Half the widest last x label may stick out right of the plot.
    let last = match axes.x_ticks.last() {
        Some(t) if !axes.x_centred => {
            t.1.iter()
                .map(|l| text_width(l, c.font))
                .fold(0.0, f64::max)
                / 2.0
        }
        _ => 0.0,
    };
    Rect {
        left,
        top: top + head + c.font * 0.6,
        right: f64::from(c.width) - PAD - right.max(last),
        bottom: bottom - below,
    }
}

/// The title's lines, wrapped at the canvas' width.
fn title_lines(c: &Canvas, title: &str) -> Vec<String> {
    if title.is_empty() {
        return Vec::new();
    }
    crate::render::canvas::wrap(title, c.title_font, legend_width(c))
}

/// The title (centred, at the band's top, wrapped) and the legend under it: their height.
pub fn head_height(c: &Canvas, title: &str, entries: &[Entry]) -> f64 {
    let lines = title_lines(c, title).len() as f64;
    let t = if lines > 0.0 {
        c.title_font * (1.25 * lines + 0.25)
    } else {
        0.0
    };
    t + legend::height(c, entries, legend_width(c))
}

fn legend_width(c: &Canvas) -> f64 {
    f64::from(c.width) - 2.0 * PAD
}

/// Draws the title and the legend at the band's top `top`.
pub fn draw_head(layer: &mut Layer, c: &Canvas, top: f64, title: &str, entries: &[Entry]) {
    let mut y = top + c.title_font * 0.25;
    for line in title_lines(c, title) {
        let at = (f64::from(c.width) / 2.0, y + c.title_font * 0.625);
        layer.styled_text(
            at,
            c.title_font,
            Anchor::Middle,
            &line,
            "#222",
            "class=\"title\"",
        );
        y += c.title_font * 1.25;
    }
    legend::draw(layer, c, entries, (PAD, y), legend_width(c));
}

/// The grid, the axis lines, the tick labels and the axis titles around `r`; `x_px` and
/// `y_px` map a value to its pixel on each axis.
pub fn draw_axes(
    layer: &mut Layer,
    c: &Canvas,
    r: Rect,
    axes: &Axes,
    x_px: &dyn Fn(f64) -> f64,
    y_px: &dyn Fn(f64) -> f64,
) {
    let lh = c.line_height();
    for (v, lines) in &axes.x_ticks {
        let x = x_px(*v);
        layer.grid_line((x, r.top), (x, r.bottom));
        layer.line((x, r.bottom), (x, r.bottom + 5.0), "#222", 1.0);
        for (k, line) in lines.iter().enumerate() {
            let y = r.bottom + 6.0 + (k as f64 + 0.5) * lh;
            layer.classed_text((x, y), c.font, Anchor::Middle, line, "tick-x");
        }
    }
    let tick_lines = axes.x_ticks.iter().map(|t| t.1.len()).max().unwrap_or(0);
    for (from, to, label) in &axes.x_groups {
        let (a, b) = (x_px(*from), x_px(*to));
        let y = r.bottom + 6.0 + tick_lines as f64 * lh + 2.0;
        layer.line((a - 4.0, y), (b + 4.0, y), "#888", 1.0);
        let at = ((a + b) / 2.0, y + lh / 2.0);
        layer.classed_text(at, c.font, Anchor::Middle, label, "group-x");
    }
    for (v, label) in &axes.y_ticks {
        let y = y_px(*v);
        layer.grid_line((r.left, y), (r.right, y));
        layer.line((r.left - 5.0, y), (r.left, y), "#222", 1.0);
        let lines: Vec<&str> = label.split('\n').collect();
        let first = y - (lines.len() as f64 - 1.0) * lh / 2.0;
        for (k, line) in lines.iter().enumerate() {
            layer.text(
                (r.left - 8.0, first + k as f64 * lh),
                c.font,
                Anchor::End,
                line,
            );
        }
    }
    layer.line((r.left, r.top), (r.left, r.bottom), "#222", 1.0);
    layer.raw(&format!(
        "<line class=\"x-axis\" x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" \
stroke=\"#222\" stroke-width=\"1\"/>",
        r.left, r.bottom, r.right, r.bottom
    ));
    if !axes.x_title.is_empty() {
        let y = r.bottom + 6.0 + axes.x_lines() as f64 * lh + 2.0 + lh / 2.0;
        let mid = (r.left + r.right) / 2.0;
        layer.classed_text(
            (mid, y),
            c.font,
            Anchor::Middle,
            &axes.x_title,
            "axis-title",
        );
    }
    if !axes.y_title.is_empty() {
        let x = PAD + lh / 2.0;
        layer.vertical_text((x, (r.top + r.bottom) / 2.0), c.font, &axes.y_title);
    }
}

/// The drawing area of `r` on `root` (plotters' series go there).
pub fn area<'b>(
    root: &DrawingArea<SVGBackend<'b>, Shift>,
    c: &Canvas,
    r: Rect,
) -> DrawingArea<SVGBackend<'b>, Shift> {
    root.margin(
        r.top.round() as i32,
        (f64::from(c.height) - r.bottom).round() as i32,
        r.left.round() as i32,
        (f64::from(c.width) - r.right).round() as i32,
    )
}

/// An SVG of the canvas' size: white, drawn by `draw` through plotters and the layer, the
/// layer last, each line colour dashed (`plots::finish_svg` without resizing the text,
/// which the layer writes at the size shown).
pub fn svg(
    c: &Canvas,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>, &mut Layer) -> anyhow::Result<()>,
) -> anyhow::Result<String> {
    let mut svg = String::new();
    let mut layer = Layer::default();
    {
        let root = SVGBackend::with_string(&mut svg, (c.width, c.height)).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root, &mut layer)?;
        root.present()?;
    }
    Ok(crate::render::plots::dash_lines(&layer.finish(&svg)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::canvas::{NARROW, WIDE};

    #[test]
    fn the_plot_leaves_room_for_every_text() {
        let axes = Axes {
            x_ticks: vec![
                (0.0, vec!["none".into()]),
                (1.0, vec!["mem-churn".into(), "100%".into()]),
            ],
            x_groups: Vec::new(),
            y_ticks: vec![(1.0, "1 ms".into()), (1000.0, "1 s".into())],
            x_title: "load".into(),
            y_title: "max".into(),
            x_centred: false,
        };
        for c in [WIDE, NARROW] {
            let r = plot_rect(&c, (0.0, f64::from(c.height)), 40.0, &axes, 0.0);
            let lh = c.line_height();
            assert!(r.left >= 8.0 + lh + text_width("1 ms", c.font), "{r:?}");
            assert!(f64::from(c.height) - r.bottom >= 3.0 * lh, "{r:?}");
            assert!(r.top >= 40.0 && r.right <= f64::from(c.width), "{r:?}");
        }
    }
}
