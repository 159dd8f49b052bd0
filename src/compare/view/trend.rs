//! The `--by date` trend chart: max and p99 of each run at the real time it started (UTC),
//! on a time axis whose ticks read as clock times (`21:00`, `01:45:30` for runs minutes
//! apart) with each day's date written once under them, or as dates when the runs span
//! weeks (after OSADL's latency plots); latency on a log axis, so a max of seconds leaves
//! the p99 readable.

use crate::render::axis::{latency_label, nice_ceil, nice_floor};
use crate::render::canvas::Canvas;
use crate::render::legend::{Entry, Swatch};
use crate::render::time_axis::{time_latency_axes, time_latency_svg, DAY_S};
use plotters::prelude::*;

/// The range of the x axis: the runs' starts with a margin (6 % of the span, at least 30 s;
/// 5 minutes either side of a single run).
pub fn x_range(starts_s: &[f64]) -> (f64, f64) {
    let (lo, hi) = starts_s
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), &d| (l.min(d), h.max(d)));
    let pad = if hi - lo < 1.0 {
        300.0
    } else {
        ((hi - lo) * 0.06).max(30.0)
    };
    (lo - pad, hi + pad)
}

/// A trend chart: x = the runs' starts (seconds since the epoch, UTC), one line with
/// markers per series (µs values; None: no point) on a log latency axis, so a max of
/// seconds leaves a p99 of µs readable; each series' largest value in its legend entry.
pub fn trend_svg(
    title: &str,
    starts_s: &[f64],
    series: &[(String, Vec<Option<f64>>)],
    c: Canvas,
) -> anyhow::Result<String> {
    let (x0, x1) = x_range(starts_s);
    let values = || {
        series
            .iter()
            .flat_map(|s| s.1.iter().flatten().copied())
            .filter(|&v| v > 0.0)
    };
    let max = values().fold(1.0, f64::max);
    let min = values().fold(max, f64::min);
    let (y_lo, y_hi) = (nice_floor(min / 1.5), nice_ceil(max * 1.5));
    let entries: Vec<Entry> = series
        .iter()
        .enumerate()
        .map(|(i, (name, v))| {
            let top = v.iter().flatten().copied().fold(0.0, f64::max);
            Entry {
                swatch: Swatch::Line(i),
                label: format!("{name} — largest {}", latency_label(top)),
            }
        })
        .collect();
    let (step, mut axes) = time_latency_axes(&c, "00:00:00", (x0, x1), (y_lo, y_hi));
    axes.x_title = if step < DAY_S {
        "start of the run (UTC)"
    } else {
        "start of the run (UTC date)"
    }
    .into();
    time_latency_svg(
        &c,
        title,
        &entries,
        &axes,
        (x0, x1),
        (y_lo, y_hi),
        |chart| {
            for (i, (_, values)) in series.iter().enumerate() {
                let mut points: Vec<(f64, f64)> = starts_s
                    .iter()
                    .zip(values)
                    .filter_map(|(&d, v)| v.filter(|&v| v > 0.0).map(|v| (d, v)))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                let col = crate::render::plots::color(i);
                chart.draw_series(LineSeries::new(points.iter().copied(), col.stroke_width(2)))?;
                crate::render::plot_marks::draw_markers(chart, i, &points, col, None)?;
            }
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::time_axis::{tick_label, ticks_within};

    const DAY: f64 = 86_400.0;
    /// 2026-11-23T00:00:00Z.
    const NOV23: f64 = 20_780.0 * DAY;

    #[test]
    fn runs_two_minutes_apart_get_an_axis_of_minutes_not_an_hour() {
        // The review's runs: 01:45 to 01:47.
        let starts = [NOV23 + 6300.0, NOV23 + 6360.0, NOV23 + 6420.0];
        let (x0, x1) = x_range(&starts);
        assert!(x1 - x0 < 300.0, "{}", x1 - x0);
        let (step, t) = ticks_within(x0, x1, 8.0);
        assert_eq!(step, 30);
        let labels: Vec<String> = t.iter().map(|&t| tick_label(step, t)).collect();
        assert_eq!(labels[0], "01:44:30");
        assert!(labels.contains(&"01:47:00".to_string()), "{labels:?}");
    }
}
