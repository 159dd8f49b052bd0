//! The body of the distribution as OSADL draws it (samples per equal bin on a linear
//! latency axis, log count), cut where the body ends (`body_end_ns`), and under it the tail
//! strip: every sample beyond the body on a log axis, a row per line, each marker its count,
//! each row's max written out. The body keeps its bins a whole µs however far the max is.

use super::draw::{count_ticks, draw_runs, entries};
use super::{body_end_ns, body_range, deadline_on_axis, extent, rebin_runs, tail, Distribution};
use crate::render::axis::{self, fitting, latency_label, linear_ticks, log_ticks, number_label};
use crate::render::canvas::{text_width, Anchor, Canvas, Layer};
use crate::render::frame::{self, Axes, Rect};
use crate::render::plot_marks::{hex, marker_svg};
use crate::render::plots::{color, deadline_style};
use crate::units::human_ns;
use plotters::prelude::*;

const FLOOR: f64 = 0.5;
/// Tail rows drawn one per line up to this many lines; more share one row.
const MAX_ROWS: usize = 4;

/// The body's bin: a whole number of µs (1, 2, 5, 10, ...) giving at most `max_bins`.
pub fn bin_ns(span_us: f64, max_bins: usize) -> u64 {
    let step = axis::nice_step(span_us, max_bins).max(1.0);
    (step.round() as u64).max(1) * 1000
}

/// A row of the tail strip: its label, its values beyond the body as (value ns, count)
/// largest first (40 log bins to a decade, each shown at its largest value), and the line
/// whose marker and colour it takes (None: the row all lines share).
type TailRow = (String, Vec<(u64, u64)>, Option<usize>);

/// Tail values within 6 % of each other share a marker.
const STRIP_PER_DECADE: f64 = 40.0;

fn binned(values: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut last_bin = None;
    for (v, n) in values {
        let b = super::log_bin(v, STRIP_PER_DECADE);
        match out.last_mut() {
            Some(last) if last_bin == Some(b) => last.1 += n,
            _ => out.push((v, n)),
        }
        last_bin = Some(b);
    }
    out
}

fn tail_rows(d: &Distribution, end_ns: u64) -> Vec<TailRow> {
    let tails: Vec<Vec<(u64, u64)>> = d.lines.iter().map(|l| tail(l, end_ns)).collect();
    if tails.iter().all(Vec::is_empty) {
        return Vec::new();
    }
    if d.lines.len() <= MAX_ROWS {
        return d
            .lines
            .iter()
            .zip(tails)
            .enumerate()
            .map(|(i, (l, t))| (l.label.clone(), binned(t), Some(i)))
            .collect();
    }
    let mut all: Vec<(u64, u64)> = tails.concat();
    all.sort_by_key(|t| std::cmp::Reverse(t.0));
    vec![("all".into(), binned(all), None)]
}

/// The tail strip under the body chart: its rows, heading, plot rectangle, axes and range.
struct Strip {
    rows: Vec<TailRow>,
    heading: Vec<String>,
    rect: Rect,
    axes: Axes,
    /// The log axis' range, µs.
    x: (f64, f64),
    height: f64,
}

/// The chart: the body on top, the tail strip under it when a sample lies beyond the body.
pub fn body_svg(d: &Distribution, c: Canvas) -> anyhow::Result<String> {
    let end_ns = body_end_ns(d.lines);
    let (deadline, _) = deadline_on_axis(d);
    let in_body = deadline.filter(|&dl| dl <= end_ns + end_ns / 2);
    let (lo_ns, _) = extent(d.lines);
    let (x_lo, x_hi) = body_range(lo_ns, end_ns.max(in_body.unwrap_or(0)));
    let bin = bin_ns(x_hi - x_lo, if c.narrow { 100 } else { 200 });
    let runs: Vec<Vec<Vec<(f64, f64)>>> = d
        .lines
        .iter()
        .map(|l| rebin_runs(l.buckets, bin, end_ns))
        .collect();
    let y_max = runs
        .iter()
        .flatten()
        .flatten()
        .map(|p| p.1)
        .fold(1.0, f64::max)
        * 2.5;
    let bins = match bin {
        1000 => "1 µs bins".to_string(),
        b => format!("{} µs bins", b / 1000),
    };
    let title = format!("{} — body of the distribution, linear axis", d.name);
    let legend = entries(d, in_body);
    let head = frame::head_height(&c, &title, &legend);
    let widest = text_width(&number_label(x_hi.round()), c.font);
    let axes = Axes {
        x_groups: Vec::new(),
        x_ticks: linear_ticks(x_lo, x_hi, fitting(f64::from(c.width) - 120.0, widest))
            .into_iter()
            .map(|v| (v, vec![number_label(v)]))
            .collect(),
        y_ticks: count_ticks(y_max, 6),
        x_title: format!("latency (µs, {bins}), the body: up to {}", human_ns(end_ns)),
        y_title: "samples per bin".into(),
        x_centred: false,
    };
    let body_height = f64::from(c.height) - 30.0;
    let mut strip = strip_layout(&c, d, end_ns, deadline, body_height);
    let mut r = frame::plot_rect(&c, (0.0, body_height), head, &axes, 0.0);
    if let Some(s) = strip.as_mut() {
        r.left = r.left.max(s.rect.left);
        s.rect.left = r.left;
    }
    let total =
        c.with_height((body_height + strip.as_ref().map_or(0.0, |s| s.height)).round() as u32);
    frame::svg(&total, |root, layer| {
        frame::draw_head(layer, &c, 0.0, &title, &legend);
        let area = frame::area(root, &total, r);
        let mut chart =
            ChartBuilder::on(&area).build_cartesian_2d(x_lo..x_hi, (FLOOR..y_max).log_scale())?;
        let px = |x: f64| f64::from(chart.backend_coord(&(x, FLOOR)).0);
        let py = |y: f64| f64::from(chart.backend_coord(&(x_lo, y)).1);
        frame::draw_axes(layer, &c, r, &axes, &px, &py);
        for (i, line_runs) in runs.iter().enumerate() {
            draw_runs(&mut chart, i, line_runs)?;
        }
        if let Some(dl) = in_body {
            let x = dl as f64 / 1e3;
            chart.draw_series(LineSeries::new([(x, FLOOR), (x, y_max)], deadline_style()))?;
        }
        if let Some(s) = &strip {
            draw_strip(&c, layer, s, deadline);
        }
        Ok(())
    })
}

/// The tail strip's layout under a body chart `top` units high, or None without a tail.
fn strip_layout(
    c: &Canvas,
    d: &Distribution,
    end_ns: u64,
    deadline: Option<u64>,
    top: f64,
) -> Option<Strip> {
    let rows = tail_rows(d, end_ns);
    if rows.is_empty() {
        return None;
    }
    let (_, hi_ns) = extent(d.lines);
    let x_lo = end_ns as f64 / 1e3;
    let top_ns = hi_ns.max(deadline.filter(|&dl| dl > end_ns).unwrap_or(0));
    let x_hi = (top_ns as f64 / 1e3 * 1.06).max(x_lo * 1.5);
    let widest = text_width("500 ms", c.font);
    let x_ticks = log_ticks(x_lo, x_hi, fitting(f64::from(c.width) - 160.0, widest))
        .into_iter()
        .filter(|&v| v > x_lo * 1.02)
        .map(|v| (v, vec![latency_label(v)]))
        .collect();
    let axes = Axes {
        x_groups: Vec::new(),
        x_ticks,
        y_ticks: rows
            .iter()
            .enumerate()
            .map(|(k, row)| (k as f64 + 0.5, row.0.clone()))
            .collect(),
        x_title: String::new(),
        y_title: String::new(),
        x_centred: false,
    };
    let n: u64 = rows.iter().flat_map(|r| r.1.iter().map(|t| t.1)).sum();
    let text = format!(
        "Beyond the body (over {}): {n} sample{}, each marked on a log axis",
        human_ns(end_ns),
        if n == 1 { "" } else { "s" },
    );
    let heading = crate::render::canvas::wrap(&text, c.font, f64::from(c.width) - 16.0);
    let head = c.line_height() * heading.len() as f64 + c.font * 0.6;
    let rows_h = rows.len() as f64 * c.font * 2.4;
    let height = head + rows_h + c.line_height() + 20.0;
    // Room right of the largest marker for its value.
    let max_label = rows
        .iter()
        .filter_map(|r| r.1.first())
        .map(|&(v, _)| text_width(&human_ns(v), c.font))
        .fold(0.0, f64::max);
    let mut rect = frame::plot_rect(c, (top, top + height), head, &axes, max_label + 12.0);
    rect.top = top + head;
    rect.bottom = rect.top + rows_h;
    Some(Strip {
        rows,
        heading,
        rect,
        axes,
        x: (x_lo, x_hi),
        height,
    })
}

/// Draws the strip: its heading, its axes, per row each tail value a marker (its count
/// above it when more than one and there is room) and the row's max written right of it.
fn draw_strip(c: &Canvas, layer: &mut Layer, s: &Strip, deadline: Option<u64>) {
    let (r, (x_lo, x_hi)) = (s.rect, s.x);
    let lh = c.line_height();
    let heading_top = r.top - c.font * 0.6 - lh * s.heading.len() as f64;
    for (k, line) in s.heading.iter().enumerate() {
        let at = (8.0, heading_top + (k as f64 + 0.5) * lh);
        layer.styled_text(
            at,
            c.font,
            Anchor::Start,
            line,
            "#222",
            "class=\"strip-title\"",
        );
    }
    let span = (x_hi / x_lo).ln();
    let px = |x: f64| r.left + (x / x_lo).ln() / span * r.width();
    let row_h = (r.bottom - r.top) / s.rows.len() as f64;
    let py = |y: f64| r.top + y * row_h;
    layer.back_rect((r.left, r.top), (r.width(), r.bottom - r.top), "#f3f1e7");
    frame::draw_axes(layer, c, r, &s.axes, &px, &py);
    if let Some(dl) = deadline
        .map(|dl| dl as f64 / 1e3)
        .filter(|&x| x > x_lo && x < x_hi)
    {
        let colour = hex(crate::render::plots::deadline_color());
        layer.line((px(dl), r.top), (px(dl), r.bottom), &colour, 2.0);
    }
    for (k, (_, values, line)) in s.rows.iter().enumerate() {
        let y = py(k as f64 + 0.5);
        let marker = line.unwrap_or(6);
        let colour = hex(color(marker));
        let Some(&(max, _)) = values.first() else {
            continue;
        };
        let max_at = (px(max as f64 / 1e3) + 9.0, y);
        let class = "class=\"tail-max\"";
        layer.styled_text(
            max_at,
            c.font,
            Anchor::Start,
            &human_ns(max),
            &colour,
            class,
        );
        // Count labels, largest value first, where they touch no other.
        let mut taken: Vec<(f64, f64)> = Vec::new();
        for &(v, n) in values {
            let x = px(v as f64 / 1e3);
            layer.raw(&marker_svg(marker, (x, y), &colour));
            if n > 1 {
                let text = format!("×{n}");
                let w = text_width(&text, c.font);
                let (a, b) = (x - w / 2.0, x + w / 2.0);
                if taken.iter().all(|&(l, h)| b + 4.0 < l || a - 4.0 > h) {
                    taken.push((a, b));
                    layer.text((x, y - c.font * 0.95), c.font, Anchor::Middle, &text);
                }
            }
        }
    }
}
