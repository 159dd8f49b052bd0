//! The worst-case estimate's diagnostics in the HTML report: the threshold diagnostics of
//! peaks over threshold (mean residual life, and ξ and σ* against the threshold, each with
//! its 95 % band and the chosen threshold marked) and the 10⁻⁶ estimate against the number
//! of samples, so a reader judges the threshold and sees whether the estimate settled.

use crate::render::canvas::Canvas;
use crate::render::figure::{charts_figure, Chart};
use crate::render::plots::{axis_number, chart_builder, color, draw_legend, with_svg};
use crate::stats::worst_case::{Convergence, WorstCase};
use plotters::prelude::*;

fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    if lo > hi {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(1e-3);
    (lo - pad, hi + pad)
}

/// A fitted line (legend `label`) with its 95 % band dashed on either side, from rows of
/// [x, value, low, high] in the chart's units (the return levels, the threshold diagnostics).
pub(super) fn draw_line_and_band<'a>(
    chart: &mut ChartContext<
        'a,
        SVGBackend<'a>,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    rows: &[[f64; 4]],
    label: &str,
) -> anyhow::Result<()> {
    let fit = color(0);
    let line = |i: usize| rows.iter().map(move |r| (r[0], r[i]));
    chart
        .draw_series(LineSeries::new(line(1), fit.stroke_width(2)))?
        .label(label)
        .legend(move |(a, b)| PathElement::new(vec![(a, b), (a + 18, b)], fit.stroke_width(3)));
    let band = fit.mix(0.5).stroke_width(1);
    for i in [2, 3] {
        let series = chart.draw_series(DashedLineSeries::new(line(i), 6, 4, band))?;
        if i == 2 {
            series
                .label("95 % interval")
                .legend(move |(a, b)| PathElement::new(vec![(a, b), (a + 18, b)], band));
        }
    }
    Ok(())
}

/// A line of `rows[i][mid]` against `rows[i][0]` (µs on x), its band `lo`/`hi` dashed, and
/// the chosen threshold as a vertical line. `scale_y` turns the y values into the axis' unit.
struct Panel<'a> {
    title: String,
    y_desc: &'a str,
    rows: Vec<[f64; 4]>,
    scale_y: f64,
    threshold_ns: Option<u64>,
}

fn panel_svg(p: &Panel, c: Canvas) -> anyhow::Result<String> {
    let x = |r: &[f64; 4]| r[0] / 1e3;
    let (x0, x1) = range(p.rows.iter().map(x));
    let (y0, y1) = range(
        p.rows
            .iter()
            .flat_map(|r| [r[2], r[3]])
            .map(|v| v / p.scale_y),
    );
    with_svg(c, |root| {
        let mut chart = chart_builder(root, &p.title).build_cartesian_2d(x0..x1, y0..y1)?;
        chart
            .configure_mesh()
            .x_desc("threshold (µs)")
            .y_desc(p.y_desc)
            .x_label_formatter(&axis_number)
            .y_label_formatter(&axis_number)
            .draw()?;
        let rows: Vec<[f64; 4]> = p
            .rows
            .iter()
            .map(|r| [x(r), r[1] / p.scale_y, r[2] / p.scale_y, r[3] / p.scale_y])
            .collect();
        draw_line_and_band(&mut chart, &rows, "estimate")?;
        if let Some(u) = p.threshold_ns {
            let mark = color(1);
            let u = u as f64 / 1e3;
            chart
                .draw_series(LineSeries::new([(u, y0), (u, y1)], mark.stroke_width(2)))?
                .label("chosen threshold")
                .legend(move |(a, b)| {
                    PathElement::new(vec![(a, b), (a + 18, b)], mark.stroke_width(3))
                });
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}

/// The 10⁻⁶ estimate (µs) against the samples it is made from, with its interval; points
/// without an estimate are named in the caption.
pub fn convergence_svg(title: &str, points: &[Convergence], c: Canvas) -> anyhow::Result<String> {
    let usable: Vec<&Convergence> = points.iter().filter(|c| c.value_ns.is_some()).collect();
    let ends = |c: &Convergence| {
        let v = c.value_ns.unwrap_or(0) as f64;
        let lo = c.lower_ns.map_or(v, |l| l as f64);
        let hi = c.upper_ns.map_or(v, |h| h as f64);
        (v / 1e3, lo / 1e3, hi / 1e3)
    };
    let (x0, x1) = range(points.iter().map(|c| c.samples as f64));
    let (y0, y1) = range(usable.iter().flat_map(|c| {
        let (_, lo, hi) = ends(c);
        [lo, hi]
    }));
    with_svg(c, |root| {
        let mut chart = chart_builder(root, title).build_cartesian_2d(x0..x1, y0..y1)?;
        chart
            .configure_mesh()
            .x_desc("samples")
            .y_desc("10⁻⁶ per period (µs)")
            .x_label_formatter(&axis_number)
            .y_label_formatter(&axis_number)
            .draw()?;
        let c = color(0);
        let pts: Vec<(f64, f64)> = usable
            .iter()
            .map(|p| (p.samples as f64, ends(p).0))
            .collect();
        chart
            .draw_series(pts.iter().map(|&(a, b)| Circle::new((a, b), 4, c.filled())))?
            .label("estimate with its 95 % interval")
            .legend(move |(a, b)| Circle::new((a + 9, b), 4, c.filled()));
        chart.draw_series(usable.iter().map(|p| {
            let (_, lo, hi) = ends(p);
            let x = p.samples as f64;
            PathElement::new(vec![(x, lo), (x, hi)], c.stroke_width(2))
        }))?;
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    })
}

/// A panel at both sizes (screen and phone) under its caption.
fn panel_figure(out: &mut String, p: &Panel, caption: &str) -> anyhow::Result<()> {
    let chart = Chart::drawn(&p.title, |c| panel_svg(p, c))?;
    out.push_str(&charts_figure(&[chart], caption, &[], &[], &[]));
    Ok(())
}

/// The threshold diagnostics and the convergence of one thread's estimate (empty without
/// their points).
pub fn part(title: &str, wc: &WorstCase) -> anyhow::Result<String> {
    let mut out = String::new();
    let threshold = wc.fit.as_ref().and_then(|f| f.threshold_ns);
    if let Some(plot) = wc.plot.as_ref().filter(|p| !p.mrl.is_empty()) {
        let mrl = Panel {
            title: format!("Mean residual life: {title}"),
            y_desc: "mean excess (µs)",
            rows: plot.mrl.clone(),
            scale_y: 1e3,
            threshold_ns: threshold,
        };
        panel_figure(&mut out, &mrl, "Above a threshold where the GPD holds, the mean excess is a straight line in the threshold.")?;
    }
    if let Some(plot) = wc.plot.as_ref().filter(|p| !p.stability.is_empty()) {
        let pick = |a: usize| {
            plot.stability
                .iter()
                .map(|r| [r[0], r[a], r[a + 1], r[a + 2]])
                .collect()
        };
        let xi = Panel {
            title: format!("Shape ξ against the threshold: {title}"),
            y_desc: "shape ξ",
            rows: pick(1),
            scale_y: 1.0,
            threshold_ns: threshold,
        };
        let caption = "Above a threshold where the GPD holds, ξ and the modified scale σ* = σ − ξ·threshold stay constant within their bands.";
        panel_figure(&mut out, &xi, caption)?;
        let star = Panel {
            title: format!("Modified scale σ* against the threshold: {title}"),
            y_desc: "σ* (µs)",
            rows: pick(4),
            scale_y: 1e3,
            threshold_ns: threshold,
        };
        panel_figure(&mut out, &star, caption)?;
    }
    if wc.convergence.len() >= 2 {
        let name = format!("The 10⁻⁶ estimate against the samples: {title}");
        let chart = Chart::drawn(&name, |c| convergence_svg(&name, &wc.convergence, c))?;
        let missing: Vec<String> = wc
            .convergence
            .iter()
            .filter(|c| c.value_ns.is_none())
            .map(|c| format!("{} samples: {}", c.samples, c.status))
            .collect();
        let mut caption = "From the first tenth of the run, two tenths, ... to all of it: an estimate that still moves has not settled.".to_string();
        if !missing.is_empty() {
            caption.push_str(&format!(" No estimate from {}.", missing.join("; ")));
        }
        out.push_str(&charts_figure(&[chart], &caption, &[], &[], &[]));
    }
    Ok(out)
}
