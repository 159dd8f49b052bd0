//! The largest latency of each second of a run (per CPU), on a log axis laid out by
//! render/frame.rs: a host's stop of seconds beside maxima of tens of µs.

use crate::render::canvas::Canvas;
use crate::render::frame;
use crate::render::plot_marks::draw_markers;
use crate::render::plots::{color, deadline_style};
use plotters::prelude::*;

/// The largest latency of each second over the run, one series of points per entry on a
/// log axis (no line joins two seconds: no sample took the values between them), the
/// deadline a dashed line when it is within twice the largest value; the legend (each
/// line's max in it) above the plot.
pub fn timeline_svg(
    title: &str,
    lines: &[(String, &[u64])],
    deadline_ns: Option<u64>,
    c: Canvas,
) -> anyhow::Result<String> {
    use crate::render::axis::{fitting, latency_label, linear_ticks, log_ticks, number_label};
    use crate::render::legend::{Entry, Swatch};
    let seconds = lines.iter().map(|l| l.1.len()).max().unwrap_or(0).max(2);
    let values = || {
        lines
            .iter()
            .flat_map(|l| l.1.iter().copied())
            .filter(|&v| v > 0)
    };
    let max_ns = values().max().unwrap_or(1000).max(1000);
    let min_ns = values().min().unwrap_or(1000).min(max_ns);
    let deadline = deadline_ns.filter(|&d| d > 0 && d <= max_ns.saturating_mul(2));
    let y_hi = crate::render::axis::nice_ceil(max_ns.max(deadline.unwrap_or(0)) as f64 / 1e3 * 1.2);
    let y_lo = crate::render::axis::nice_floor(min_ns as f64 / 1e3 / 1.2).min(y_hi / 4.0);
    let mut entries: Vec<Entry> = lines
        .iter()
        .enumerate()
        .map(|(i, (label, v))| Entry {
            swatch: Swatch::Marker(i),
            label: format!(
                "{label} — max {}",
                crate::units::human_ns(v.iter().copied().max().unwrap_or(0))
            ),
        })
        .collect();
    if let Some(d) = deadline {
        let label = format!("deadline {}", crate::units::human_ns(d));
        entries.push(Entry {
            swatch: Swatch::Deadline,
            label,
        });
    }
    let head = frame::head_height(&c, title, &entries);
    let x_fit = fitting(f64::from(c.width) - 120.0, c.text_width("0000", c.font));
    let axes = frame::Axes {
        x_groups: Vec::new(),
        x_ticks: linear_ticks(0.0, seconds as f64, x_fit)
            .into_iter()
            .map(|v| (v, vec![number_label(v)]))
            .collect(),
        y_ticks: log_ticks(y_lo, y_hi, 6)
            .into_iter()
            .map(|v| (v, latency_label(v)))
            .collect(),
        x_title: "second of the run".into(),
        y_title: "largest latency (log)".into(),
        x_centred: false,
    };
    let r = frame::plot_rect(&c, (0.0, f64::from(c.height)), head, &axes, 0.0);
    frame::svg(&c, |root, layer| {
        frame::draw_head(layer, &c, 0.0, title, &entries);
        let area = frame::area(root, &c, r);
        let mut chart = ChartBuilder::on(&area)
            .build_cartesian_2d(0f64..(seconds as f64), (y_lo..y_hi).log_scale())?;
        let px = |x: f64| f64::from(chart.backend_coord(&(x, y_lo)).0);
        let py = |y: f64| f64::from(chart.backend_coord(&(0.0, y)).1);
        frame::draw_axes(layer, &c, r, &axes, &px, &py);
        for (i, (_, values)) in lines.iter().enumerate() {
            let points: Vec<(f64, f64)> = values
                .iter()
                .enumerate()
                .filter(|(_, &v)| v > 0)
                .map(|(s, &v)| (s as f64 + 0.5, v as f64 / 1e3))
                .collect();
            draw_markers(&mut chart, i, &points, color(i), None)?;
        }
        if let Some(d) = deadline {
            let y = d as f64 / 1e3;
            let ends = [(0.0, y), (seconds as f64, y)];
            chart.draw_series(LineSeries::new(ends, deadline_style()))?;
        }
        Ok(())
    })
}
