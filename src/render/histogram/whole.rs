//! Every sample on a logarithmic latency axis: log-spaced bins (20 to a decade, each 12 %
//! wider than the last, as HdrHistogram stores them) against a log count, so the body at
//! tens of µs and a multi-second stall are both in view and neither flattens the other. The
//! part beyond the body is shaded: the body chart under it shows the rest at 1 µs bins.

use super::draw::{count_ticks, draw_runs, entries};
use super::{body_end_ns, deadline_on_axis, extent, log_runs, Distribution};
use crate::render::axis::{self, fitting, latency_label, log_ticks};
use crate::render::canvas::{text_width, Anchor, Canvas};
use crate::render::frame::{self, Axes};
use crate::render::plots::deadline_style;
use plotters::prelude::*;

/// Log bins to a factor of ten.
const PER_DECADE: f64 = 20.0;
/// The count axis is logarithmic and has no zero; lines start here.
const FLOOR: f64 = 0.5;

/// The chart: one line per entry (a lone bin a marker), the deadline a dashed line, the
/// part beyond the body shaded and named.
pub fn whole_svg(d: &Distribution, c: Canvas) -> anyhow::Result<String> {
    let (lo_ns, hi_ns) = extent(d.lines);
    let (deadline, _) = deadline_on_axis(d);
    let end_us = body_end_ns(d.lines) as f64 / 1e3;
    let x_lo = axis::nice_floor(lo_ns as f64 / 1e3 / 1.1);
    let x_hi = axis::nice_ceil(hi_ns.max(deadline.unwrap_or(0)) as f64 / 1e3 * 1.15);
    let runs: Vec<Vec<Vec<(f64, f64)>>> = d
        .lines
        .iter()
        .map(|l| log_runs(l.buckets, PER_DECADE))
        .collect();
    let y_max = runs
        .iter()
        .flatten()
        .flatten()
        .map(|p| p.1)
        .fold(1.0, f64::max)
        * 2.5;
    let entries = entries(d, deadline);
    let title = format!("{} — every sample, log latency axis", d.name);
    let head = frame::head_height(&c, &title, &entries);
    let widest = text_width("500 ms", c.font);
    let x_ticks = log_ticks(x_lo, x_hi, fitting(f64::from(c.width) - 120.0, widest))
        .into_iter()
        .map(|v| (v, vec![latency_label(v)]))
        .collect();
    let axes = Axes {
        x_groups: Vec::new(),
        x_ticks,
        y_ticks: count_ticks(y_max, 6),
        x_title: "latency (log axis, bins 12 % wide)".into(),
        y_title: "samples per bin".into(),
        x_centred: false,
    };
    let r = frame::plot_rect(&c, (0.0, f64::from(c.height)), head, &axes, 0.0);
    frame::svg(&c, |root, layer| {
        frame::draw_head(layer, &c, 0.0, &title, &entries);
        let area = frame::area(root, &c, r);
        let mut chart = ChartBuilder::on(&area)
            .build_cartesian_2d((x_lo..x_hi).log_scale(), (FLOOR..y_max).log_scale())?;
        let px = |x: f64| f64::from(chart.backend_coord(&(x, FLOOR)).0);
        let py = |y: f64| f64::from(chart.backend_coord(&(x_lo, y)).1);
        if end_us * 1.02 < x_hi && d.lines.iter().any(|l| l.max() as f64 / 1e3 > end_us) {
            let x0 = px(end_us * 1.02);
            layer.back_rect((x0, r.top), (r.right - x0, r.bottom - r.top), "#f3f1e7");
            let label = "beyond the body";
            if r.right - x0 > text_width(label, c.font) + 8.0 {
                let at = (x0 + 4.0, r.top + c.font * 0.8);
                layer.styled_text(at, c.font, Anchor::Start, label, "#555", "class=\"zone\"");
            }
        }
        frame::draw_axes(layer, &c, r, &axes, &px, &py);
        for (i, line_runs) in runs.iter().enumerate() {
            draw_runs(&mut chart, i, line_runs)?;
        }
        if let Some(dl) = deadline {
            let x = dl as f64 / 1e3;
            chart.draw_series(LineSeries::new([(x, FLOOR), (x, y_max)], deadline_style()))?;
        }
        Ok(())
    })
}
