//! The latency histogram that survives an outlier: the body of the distribution at 1 µs
//! bins (or ~1 % of p99.9) over most of the width, far outliers on their own log-scaled
//! panel to the right, each marked and labelled, empty bins never drawn, and each line's
//! max in the legend (OSADL style).

use crate::render::plots::{
    axis_number, chart_builder, color, deadline_style, draw_legend, with_svg,
};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Most bins a histogram line is drawn with (keeps the file small).
const MAX_BINS: u64 = 600;
/// The count axis is logarithmic and has no zero; stems start here.
const FLOOR: f64 = 0.5;
/// Outliers labelled with their value, at most (the largest first).
const MAX_LABELS: usize = 6;

/// One line of a histogram: a label, sparse `[value_ns, count]` buckets and the exact max.
pub struct HistogramLine<'a> {
    pub label: String,
    pub buckets: &'a [[u64; 2]],
    /// The exact largest sample (the buckets hold upper bounds); 0: unknown.
    pub max_ns: u64,
}

/// How a histogram is laid out: the body's bins and end, and where outliers start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Bin width of the body, a whole number of µs.
    pub bin_ns: u64,
    /// The largest value drawn in the body (the body's axis ends a little after it).
    pub body_end_ns: u64,
    /// Samples above this go to the outlier panel; `None`: no outliers.
    pub outliers_above_ns: Option<u64>,
}

/// The value below which `q` of a line's samples fall (bucket upper bounds).
fn quantile(buckets: &[[u64; 2]], q: f64) -> u64 {
    let total: u64 = buckets.iter().map(|b| b[1]).sum();
    let want = (total as f64 * q).ceil() as u64;
    let mut seen = 0;
    for &[v, c] in buckets {
        seen += c;
        if seen >= want.max(1) {
            return v;
        }
    }
    buckets.last().map_or(0, |b| b[0])
}

/// Splits the lines into body and outliers. An outlier lies beyond five times the
/// largest p99.9 of the lines (and at least 50 µs beyond it): a far sample that would
/// otherwise squeeze the body into the first few percent of a linear axis.
pub fn layout(lines: &[HistogramLine]) -> Layout {
    let tail = lines
        .iter()
        .map(|l| quantile(l.buckets, 0.999))
        .max()
        .unwrap_or(0);
    let cut = (tail.saturating_mul(5)).max(tail + 50_000);
    let values = || lines.iter().flat_map(|l| l.buckets.iter().map(|b| b[0]));
    let has_outliers = values().any(|v| v > cut);
    let body_end_ns = values()
        .filter(|&v| !has_outliers || v <= cut)
        .max()
        .unwrap_or(1000)
        .max(1000);
    let bin_ns = (tail / 100_000 * 1000)
        .max(body_end_ns.div_ceil(MAX_BINS).div_ceil(1000) * 1000)
        .max(1000);
    Layout {
        bin_ns,
        body_end_ns,
        outliers_above_ns: has_outliers.then_some(cut),
    }
}

/// Re-bins sparse HDR buckets up to `limit_ns` into equal bins; returns the runs of
/// adjacent non-empty bins as `(bin centre µs, count)`, so no line is drawn where a
/// bin is empty.
pub fn rebin_runs(buckets: &[[u64; 2]], bin_ns: u64, limit_ns: u64) -> Vec<Vec<(f64, f64)>> {
    let mut bins: std::collections::BTreeMap<u64, u64> = Default::default();
    for &[value, count] in buckets.iter().filter(|b| b[0] <= limit_ns && b[1] > 0) {
        *bins.entry(value / bin_ns).or_default() += count;
    }
    let centre = |b: u64| ((b as f64) + 0.5) * bin_ns as f64 / 1e3;
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut prev: Option<u64> = None;
    for (b, c) in bins {
        if prev.is_none_or(|p| b != p + 1) {
            runs.push(Vec::new());
        }
        runs.last_mut().expect("pushed").push((centre(b), c as f64));
        prev = Some(b);
    }
    runs
}

/// A line's label with its max, as OSADL's legends have it ("CPU 0 — max 8.97 ms").
fn legend_label(l: &HistogramLine) -> String {
    let max = if l.max_ns > 0 {
        l.max_ns
    } else {
        l.buckets.iter().map(|b| b[0]).max().unwrap_or(0)
    };
    format!("{} — max {}", l.label, crate::units::human_ns(max))
}

/// The latency histogram: count (log) against latency (µs), one line per entry, far
/// outliers on a log-scaled panel at the right, and the deadline as a vertical line when
/// it falls within three times the largest sample. Returns the SVG and a note when the
/// deadline was left off the axis.
pub fn histogram_svg(
    title: &str,
    lines: &[HistogramLine],
    deadline_ns: Option<u64>,
) -> anyhow::Result<(String, Option<String>)> {
    let lay = layout(lines);
    let max_ns = lines
        .iter()
        .flat_map(|l| l.buckets.iter().map(|b| b[0]).chain([l.max_ns]))
        .max()
        .unwrap_or(1000)
        .max(1000);
    let mut note = None;
    let deadline = deadline_ns.filter(|&d| d > 0);
    if let Some(d) = deadline.filter(|&d| d > max_ns.saturating_mul(3)) {
        note = Some(format!(
            "deadline {} is off the axis: no sample came within a third of it",
            crate::units::human_ns(d)
        ));
    }
    let deadline = deadline.filter(|_| note.is_none());
    // With outliers the deadline joins the body only when it barely widens it.
    let in_body =
        |d: u64| lay.outliers_above_ns.is_none() || d <= lay.body_end_ns + lay.body_end_ns / 2;
    let body_end = deadline
        .filter(|&d| in_body(d))
        .map_or(lay.body_end_ns, |d| d.max(lay.body_end_ns));
    let y_max = lines
        .iter()
        .flat_map(|l| rebin_runs(l.buckets, lay.bin_ns, u64::MAX).concat())
        .map(|p| p.1)
        .fold(1.0f64, f64::max)
        * 2.0;
    let svg = with_svg(|root| {
        let area = root.titled(title, ("sans-serif", 18))?;
        let (body, tail) = match lay.outliers_above_ns {
            Some(_) => {
                let w = area.dim_in_pixel().0;
                let (b, t) = area.split_horizontally(w * 3 / 4);
                (b, Some(t))
            }
            None => (area, None),
        };
        let x_max = body_end as f64 / 1e3 * 1.05;
        draw_body(
            &body,
            lines,
            &lay,
            x_max,
            y_max,
            deadline.filter(|&d| in_body(d)),
        )?;
        if let (Some(t), Some(cut)) = (tail, lay.outliers_above_ns) {
            let top = max_ns.max(deadline.unwrap_or(0));
            let range = x_max..(top as f64 / 1e3 * 1.8);
            draw_outliers(
                &t,
                lines,
                cut,
                range,
                y_max,
                deadline.filter(|&d| !in_body(d)),
            )?;
        }
        Ok(())
    })?;
    Ok((svg, note))
}

/// The body: each run of adjacent bins a line, a lone bin a dot, the deadline a red line.
fn draw_body(
    area: &DrawingArea<SVGBackend, Shift>,
    lines: &[HistogramLine],
    lay: &Layout,
    x_max: f64,
    y_max: f64,
    deadline: Option<u64>,
) -> anyhow::Result<()> {
    let mut chart =
        chart_builder(area, "").build_cartesian_2d(0f64..x_max, (FLOOR..y_max).log_scale())?;
    let bins = if lay.bin_ns == 1000 {
        "1 µs bins".to_string()
    } else {
        format!("bins of {} µs", lay.bin_ns / 1000)
    };
    chart
        .configure_mesh()
        .x_desc(format!("latency (µs, {bins})"))
        .y_desc("samples (log)")
        .x_label_formatter(&axis_number)
        .y_label_formatter(&|v| {
            if *v < 1.0 {
                String::new()
            } else {
                format!("{v:.0}")
            }
        })
        .draw()?;
    let limit = lay.outliers_above_ns.unwrap_or(u64::MAX);
    for (i, l) in lines.iter().enumerate() {
        let c = color(i);
        let runs = rebin_runs(l.buckets, lay.bin_ns, limit);
        for run in &runs {
            if run.len() > 1 {
                chart.draw_series(LineSeries::new(run.iter().copied(), c.stroke_width(2)))?;
            }
        }
        let few = runs.iter().map(Vec::len).sum::<usize>() <= 8;
        let points: Vec<(f64, f64)> = runs
            .iter()
            .filter(|r| few || r.len() == 1)
            .flatten()
            .copied()
            .collect();
        // Its own marker shape: a lone bin (or an outlier) has no line whose dashes tell
        // it apart; the legend shows the line with the marker on it.
        crate::render::plot_marks::draw_markers_on_line(
            &mut chart,
            i,
            &points,
            c,
            legend_label(l),
        )?;
    }
    if let Some(d) = deadline {
        let x = d as f64 / 1e3;
        chart
            .draw_series(LineSeries::new([(x, FLOOR), (x, y_max)], deadline_style()))?
            .label(format!("deadline {}", crate::units::human_ns(d)))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], deadline_style()));
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    Ok(())
}

/// The outlier panel: a shaded log-scaled axis, each outlier bucket a stem and its
/// line's marker (shape and colour), the largest ones labelled with their value.
fn draw_outliers(
    area: &DrawingArea<SVGBackend, Shift>,
    lines: &[HistogramLine],
    cut_ns: u64,
    range: std::ops::Range<f64>,
    y_max: f64,
    deadline: Option<u64>,
) -> anyhow::Result<()> {
    area.fill(&RGBColor(246, 246, 240))?;
    let range_start = range.start;
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(8)
        .build_cartesian_2d(range.clone().log_scale(), (FLOOR..y_max).log_scale())?;
    chart
        .configure_mesh()
        .x_desc(format!(
            "outliers beyond {} µs (log µs)",
            axis_number(&range_start)
        ))
        .x_labels(4)
        .x_label_formatter(&axis_number)
        .y_label_formatter(&|_| String::new())
        .draw()?;
    // (line, value µs, count); a line's largest bucket is shown at its exact max.
    let mut points: Vec<(usize, f64, f64)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let top = l.buckets.iter().map(|b| b[0]).max().unwrap_or(0);
        for &[v, c] in l.buckets.iter().filter(|b| b[0] > cut_ns && b[1] > 0) {
            let v = if v == top && l.max_ns > 0 {
                l.max_ns
            } else {
                v
            };
            points.push((i, v as f64 / 1e3, c as f64));
        }
    }
    for &(i, x, n) in &points {
        let c = color(i);
        chart.draw_series(LineSeries::new([(x, FLOOR), (x, n)], c.stroke_width(2)))?;
        // The line's own marker shape, as in the body and the legend.
        crate::render::plot_marks::draw_markers(&mut chart, i, &[(x, n)], c, None)?;
    }
    points.sort_by(|a, b| b.1.total_cmp(&a.1));
    for &(i, x, n) in points.iter().take(MAX_LABELS) {
        let label = crate::units::human_ns((x * 1e3).round() as u64);
        let font = ("sans-serif", 15)
            .into_font()
            .color(&color(i))
            .pos(Pos::new(HPos::Right, VPos::Bottom));
        chart.draw_series(std::iter::once(Text::new(label, (x, n * 1.6), font)))?;
    }
    if let Some(d) = deadline {
        let x = d as f64 / 1e3;
        chart.draw_series(LineSeries::new([(x, FLOOR), (x, y_max)], deadline_style()))?;
        // Half-way up (clear of the legend at the top) on the side of the line with more
        // room (a line in the panel's left half has its label to its right).
        let left_half = (x / range.start).ln() < (range.end / x).ln();
        let (side, dx) = if left_half {
            (HPos::Left, 6)
        } else {
            (HPos::Right, -6)
        };
        let font = ("sans-serif", 15)
            .into_font()
            .color(&crate::render::plots::deadline_color())
            .pos(Pos::new(side, VPos::Center));
        let label = format!("deadline {}", crate::units::human_ns(d));
        let at = (x, (FLOOR * y_max).sqrt());
        chart.draw_series(std::iter::once(
            EmptyElement::at(at) + Text::new(label, (dx, 0), font),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(buckets: &[[u64; 2]]) -> HistogramLine<'_> {
        HistogramLine {
            label: "CPU 0".into(),
            buckets,
            max_ns: 0,
        }
    }

    #[test]
    fn a_far_outlier_leaves_the_body_at_one_microsecond_bins() {
        let mut b: Vec<[u64; 2]> = (5..=210).map(|us| [us * 1000, 1000]).collect();
        b.push([8_973_000, 1]);
        let lay = layout(&[line(&b)]);
        assert_eq!(lay.bin_ns, 2000, "1 % of p99.9 (~210 µs), whole µs");
        assert_eq!(lay.body_end_ns, 210_000);
        assert!(lay.outliers_above_ns.is_some_and(|c| c < 8_973_000));
    }

    #[test]
    fn no_outlier_no_panel() {
        let b: Vec<[u64; 2]> = (5..=60).map(|us| [us * 1000, 10]).collect();
        let lay = layout(&[line(&b)]);
        assert_eq!(lay.outliers_above_ns, None);
        assert_eq!((lay.bin_ns, lay.body_end_ns), (1000, 60_000));
    }

    #[test]
    fn empty_bins_split_the_line() {
        let runs = rebin_runs(&[[1000, 1], [2000, 3], [9000, 2]], 1000, u64::MAX);
        assert_eq!(runs, vec![vec![(1.5, 1.0), (2.5, 3.0)], vec![(9.5, 2.0)]]);
    }

    /// The x extent of the polylines drawn in `stroke` (the SVG's own coordinates).
    fn polyline_x_extent(svg: &str, stroke: &str) -> (f64, f64) {
        let xs: Vec<f64> = svg
            .split("<polyline")
            .skip(1)
            .filter(|p| p.split('>').next().unwrap().contains(stroke))
            .flat_map(|p| {
                let pts = p
                    .split("points=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                pts.split_whitespace()
                    .map(|xy| xy.split(',').next().unwrap().parse::<f64>().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect();
        let lo = xs.iter().copied().fold(f64::MAX, f64::min);
        (lo, xs.iter().copied().fold(f64::MIN, f64::max))
    }

    #[test]
    fn the_body_spans_most_of_the_width_despite_a_far_outlier() {
        // Two CPUs under 210 µs, one sample of CPU 1 at 8.97 ms (the review's run).
        let a: Vec<[u64; 2]> = (5..=120).map(|us| [us * 1000, 5000 / us]).collect();
        let mut b: Vec<[u64; 2]> = (8..=210).map(|us| [us * 1000, 8000 / us]).collect();
        b.push([8_975_000, 1]);
        let lines = [
            HistogramLine {
                label: "CPU 0".into(),
                buckets: &a,
                max_ns: 120_400,
            },
            HistogramLine {
                label: "CPU 1".into(),
                buckets: &b,
                max_ns: 8_973_125,
            },
        ];
        let (svg, _) = histogram_svg("t", &lines, Some(1_000_000)).unwrap();
        let (lo, hi) = polyline_x_extent(&svg, "#E69F00");
        assert!(
            hi - lo > 0.6 * f64::from(crate::render::plots::WIDTH),
            "CPU 1's body spans {lo:.0}..{hi:.0} of {} px",
            crate::render::plots::WIDTH
        );
        assert!(svg.contains("CPU 1 — max 8.97 ms"), "max in the legend");
        assert!(svg.contains("CPU 0 — max 120.4 µs"), "max in the legend");
        assert!(svg.contains("\n8.97 ms\n"), "the outlier labelled");
        assert!(svg.contains("outliers beyond"), "the outlier panel named");
        legend_fits_its_text(&svg, "CPU 0 — max 120.4 µs");
        assert!(
            svg.contains("\ndeadline 1 ms\n") && !svg.contains("#FF0000"),
            "the deadline labelled in its near-black, not red beside orange: {svg}"
        );
    }

    #[test]
    fn each_line_has_its_marker_in_the_outlier_panel_and_the_legend() {
        // Three CPUs, each a body of 40 adjacent bins (a line, no markers) and one far
        // outlier: the outliers differ by shape (circle, triangle, square), as in the
        // legend, not only by colour.
        let bodies: Vec<Vec<[u64; 2]>> = (0..3u64)
            .map(|k| {
                let mut b: Vec<[u64; 2]> = (10..50).map(|us| [us * 1000, 100]).collect();
                b.push([(3000 + 1000 * k) * 1000, 1]);
                b
            })
            .collect();
        let lines: Vec<HistogramLine> = bodies
            .iter()
            .enumerate()
            .map(|(k, b)| HistogramLine {
                label: format!("CPU {k}"),
                buckets: b,
                max_ns: 0,
            })
            .collect();
        let (svg, _) = histogram_svg("t", &lines, None).unwrap();
        let drawn = |tag: &str, k: usize| {
            let c = color(k);
            let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
            svg.lines()
                .filter(|l| l.starts_with(&format!("<{tag} ")) && l.contains(&fill))
                .count()
        };
        for (k, tag) in ["circle", "polygon", "rect"].iter().enumerate() {
            assert_eq!(
                drawn(tag, k),
                2,
                "CPU {k}: its outlier and legend {tag}: {svg}"
            );
            for (other, t) in ["circle", "polygon", "rect"].iter().enumerate() {
                if other != k {
                    assert_eq!(drawn(t, k), 0, "CPU {k} drew a {t}: {svg}");
                }
            }
        }
    }

    /// The legend's text is shown at the size it was laid out at (readable_fonts leaves it),
    /// and its box holds the text at 0.6 em a character (wider than sans-serif's digits and
    /// most letters) beside the 40-unit marker area.
    fn legend_fits_its_text(svg: &str, label: &str) {
        let at = svg
            .find(&format!(">\n{label}\n</text>"))
            .expect("legend label");
        let tag = &svg[svg[..at].rfind("<text").unwrap()..at];
        let attr = |tag: &str, name: &str| -> f64 {
            crate::render::plot_marks::svg_attr(tag, name)
                .parse()
                .unwrap()
        };
        let size = attr(tag, "font-size");
        let min = crate::render::plots::MIN_FONT;
        assert!(
            (min..min * 1.1).contains(&size),
            "legend shown at {size}: {tag}"
        );
        let rect = &svg[svg[..at].rfind("<rect").unwrap()..at];
        let width = attr(rect, "width");
        let needed = 0.6 * size * label.chars().count() as f64 + 40.0;
        assert!(
            width >= needed,
            "legend box {width} < {needed} for {label:?} at {size}"
        );
    }
}
