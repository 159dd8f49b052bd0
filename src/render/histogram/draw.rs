//! What both distribution charts draw alike: each line's runs of bins (a lone bin a marker),
//! the log count ticks, the legend's entries (each line with its max, the deadline).

use super::{legend_label, Distribution};
use crate::render::axis::{log_ticks, number_label};
use crate::render::legend::{Entry, Swatch};
use crate::render::plot_marks::draw_markers;
use crate::render::plots::color;
use plotters::prelude::*;

/// The legend's entries: each line with its max, then the deadline.
pub fn entries(d: &Distribution, deadline: Option<u64>) -> Vec<Entry> {
    let mut out: Vec<Entry> = d
        .lines
        .iter()
        .enumerate()
        .map(|(i, l)| Entry {
            swatch: Swatch::Line(i),
            label: legend_label(l),
        })
        .collect();
    if let Some(dl) = deadline {
        out.push(Entry {
            swatch: Swatch::Deadline,
            label: format!("deadline {}", crate::units::human_ns(dl)),
        });
    }
    out
}

/// Log-count ticks from 1 to `y_max` (1, 10, 100, ... or every few decades).
pub fn count_ticks(y_max: f64, max_ticks: usize) -> Vec<(f64, String)> {
    log_ticks(1.0, y_max, max_ticks)
        .into_iter()
        .filter(|v| v.log10().fract().abs() < 1e-9)
        .map(|v| (v, number_label(v)))
        .collect()
}

/// Draws the i-th line's runs of adjacent bins: a run a line, a lone bin a marker (every bin
/// a marker when the line has few).
pub fn draw_runs<'a, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    i: usize,
    runs: &[Vec<(f64, f64)>],
) -> anyhow::Result<()> {
    let c = color(i);
    for run in runs.iter().filter(|r| r.len() > 1) {
        chart.draw_series(LineSeries::new(run.iter().copied(), c.stroke_width(2)))?;
    }
    let few = runs.iter().map(Vec::len).sum::<usize>() <= 8;
    let points: Vec<(f64, f64)> = runs
        .iter()
        .filter(|r| few || r.len() == 1)
        .flatten()
        .copied()
        .collect();
    draw_markers(chart, i, &points, c, None)
}
