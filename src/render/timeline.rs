//! The largest latency of each second of a run (per CPU), on a log axis laid out by
//! render/frame.rs: a host's stop of seconds beside maxima of tens of µs.

use crate::render::canvas::Canvas;
use crate::render::frame;
use crate::render::plot_marks::draw_markers;
use crate::render::plots::{color, deadline_style};
use plotters::prelude::*;

/// The most marks a per-second timeline draws for one CPU (a chart ~800 px wide shows no
/// more): past it, each mark is the largest of `timeline_step` consecutive seconds, placed
/// at their middle (three million marks took 1.1 GB to render, issue 34 item 7).
pub const TIMELINE_MARKS: usize = 2000;

/// How many seconds one mark of a timeline `seconds` long stands for.
pub fn timeline_step(seconds: usize) -> usize {
    seconds.div_ceil(TIMELINE_MARKS).max(1)
}

/// The marks of one series: the largest nonzero value of each `step` seconds (exactly
/// each second's when `step` is 1) at the middle of its seconds, in µs.
fn timeline_marks(values: &[u64], step: usize) -> Vec<(f64, f64)> {
    values
        .chunks(step)
        .enumerate()
        .filter_map(|(i, chunk)| {
            let max = chunk.iter().copied().max().filter(|&v| v > 0)?;
            Some((
                (i * step) as f64 + chunk.len() as f64 / 2.0,
                max as f64 / 1e3,
            ))
        })
        .collect()
}

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
        let step = timeline_step(seconds);
        for (i, (_, values)) in lines.iter().enumerate() {
            let points = timeline_marks(values, step);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each second's largest latency as it was while a run is short enough; past
    /// TIMELINE_MARKS seconds the largest of each step, so no peak is lost and three
    /// million seconds draw 2 000 marks (the audit's 1.1 GB HTML).
    #[test]
    fn a_long_timeline_keeps_every_peak_in_few_marks() {
        assert_eq!(
            timeline_marks(&[5_000, 0, 7_000], 1),
            [(0.5, 5.0), (2.5, 7.0)]
        );
        let mut long = vec![1_000u64; 3_000_000];
        long[2_345_678] = 90_000;
        let step = timeline_step(long.len());
        assert_eq!(step, 1500);
        let marks = timeline_marks(&long, step);
        assert_eq!(marks.len(), TIMELINE_MARKS);
        assert_eq!(marks.iter().map(|m| m.1).fold(0.0, f64::max), 90.0);
        let series = [("CPU 0".to_string(), &long[..])];
        let svg = timeline_svg("t", &series, None, crate::render::canvas::WIDE).unwrap();
        assert!(svg.len() < 2 << 20, "{} bytes of SVG", svg.len());
    }
}
