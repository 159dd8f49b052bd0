//! The charts of the HTML reports, drawn with plotters' SVG backend into strings: the
//! latency histogram (log count axis, µs axis, one line per CPU or run, OSADL style),
//! the per-second maximum over time, and category charts for suites and wake sweeps.
//! plotters escapes every text it writes into the SVG.

use crate::render::plot_marks::{draw_markers, draw_markers_on_line};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Chart size in SVG pixels.
pub(super) const WIDTH: u32 = 960;
const HEIGHT: u32 = 400;

/// Line colors a colour-blind reader tells apart (Okabe and Ito's palette, its yellow
/// darkened to read on white); the i-th line also gets the i-th dash pattern (`DASHES`),
/// so no two lines differ only by colour.
const COLORS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(102, 102, 102),
    RGBColor(160, 140, 0),
];

/// The dash pattern of the i-th color's lines (SVG `stroke-dasharray`; solid first).
const DASHES: [&str; 8] = [
    "", "9 4", "2 3", "12 3 3 3", "5 5", "1 4", "14 4", "6 2 2 2",
];

/// The deadline's color: near-black and dashed, apart from every line color.
const DEADLINE: RGBColor = RGBColor(17, 17, 17);

/// The color of the i-th line.
pub fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

/// Gives every stroke of a line color its dash pattern, and the deadline's its own.
fn dashed(svg: &str) -> String {
    let hex = |c: RGBColor| format!("stroke=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
    let mut out = svg.to_string();
    for (c, dash) in COLORS.iter().zip(DASHES).skip(1) {
        let key = hex(*c);
        out = out.replace(&key, &format!("{key} stroke-dasharray=\"{dash}\""));
    }
    let key = hex(DEADLINE);
    out.replace(&key, &format!("{key} stroke-dasharray=\"10 6\""))
}

/// Axis numbers: no decimals from 100 on.
pub fn axis_number(v: &f64) -> String {
    if v.abs() >= 100.0 || *v == 0.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub fn with_svg(
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> anyhow::Result<()>,
) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
    }
    Ok(finish_svg(&svg))
}

/// What every chart's SVG gets once drawn: readable fonts and each line colour's dashes.
pub fn finish_svg(svg: &str) -> String {
    dashed(&readable_fonts(svg))
}

/// The smallest font size in the SVG's 960-unit viewBox: the page never draws a chart
/// narrower than 640 px (it scrolls in its box instead), so text stays at least 11 px.
pub(super) const MIN_FONT: f64 = 17.0;

/// The legends' laid-out size: a whole number whose written size (÷ 1.24) is MIN_FONT or more.
const LEGEND_FONT: f64 = 22.0;

/// Scales every `font-size` of plotters' SVG by 1.4, at least to `MIN_FONT` (sizes laid out at
/// `MIN_FONT` or more stay).
pub fn readable_fonts(svg: &str) -> String {
    const KEY: &str = "font-size=\"";
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(i) = rest.find(KEY) {
        out.push_str(&rest[..i + KEY.len()]);
        rest = &rest[i + KEY.len()..];
        let end = rest.find('"').unwrap_or(rest.len());
        match rest[..end].parse::<f64>() {
            // Text laid out at a readable size already (legends) keeps it.
            Ok(size) if size >= MIN_FONT => out.push_str(&format!("{size:.1}")),
            Ok(size) => out.push_str(&format!("{:.1}", (size * 1.4).max(MIN_FONT))),
            Err(_) => out.push_str(&rest[..end]),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// A chart on `root` with the title, margin and axis label areas every chart here has.
pub fn chart_builder<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut b = ChartBuilder::on(root);
    if !title.is_empty() {
        b.caption(title, ("sans-serif", 18));
    }
    b.margin(12).x_label_area_size(52).y_label_area_size(84);
    b
}

/// Draws the series labels in a box at `position`, alike on every chart.
pub fn draw_legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    position: SeriesLabelPosition,
) -> anyhow::Result<()> {
    chart
        .configure_series_labels()
        .position(position)
        // Laid out at the size it is shown at, so the rows and the box fit the text:
        // plotters' SVG backend writes a font's size divided by 1.24 (points to pixels), and
        // the legend's size as a whole number first (21.25 was written as 21 / 1.24 = 16.9,
        // below MIN_FONT, so readable_fonts grew it 1.4× past its box). 22 / 1.24 = 17.7
        // stays as laid out.
        .label_font(("sans-serif", LEGEND_FONT))
        .border_style(BLACK.mix(0.4))
        .background_style(WHITE.mix(0.9))
        .draw()?;
    Ok(())
}

/// The i-th series as a line (dashed after the first) with its marker on each point,
/// named in the legend by the line with the marker on it.
pub fn draw_line_with_dots<'a>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    points: &[(f64, f64)],
    label: &str,
    i: usize,
) -> anyhow::Result<()> {
    let c = color(i);
    chart.draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)))?;
    draw_markers_on_line(chart, i, points, c, label.to_string())
}

pub fn deadline_style() -> ShapeStyle {
    DEADLINE.stroke_width(2)
}

/// The deadline's colour, for its labels.
pub fn deadline_color() -> RGBColor {
    DEADLINE
}

/// The largest latency of each second (µs) over the run, one series of points per entry
/// on a log axis (no line joins two seconds: no sample took the values between them), and
/// the deadline as a horizontal line when it is within twice the largest value.
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

pub fn timeline_svg(
    title: &str,
    lines: &[(String, &[u64])],
    deadline_ns: Option<u64>,
) -> anyhow::Result<String> {
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
    let y_max = max_ns.max(deadline.unwrap_or(0)) as f64 / 1e3 * 1.6;
    let y_min = (min_ns as f64 / 1e3 / 1.6).min(y_max / 4.0);
    with_svg(|root| {
        let mut chart = chart_builder(root, title)
            .build_cartesian_2d(0f64..(seconds as f64), (y_min..y_max).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("second of the run")
            .y_desc("largest latency (µs, log)")
            .x_label_formatter(&axis_number)
            .y_label_formatter(&axis_number)
            .draw()?;
        let step = timeline_step(seconds);
        for (i, (label, values)) in lines.iter().enumerate() {
            let c = color(i);
            let points = timeline_marks(values, step);
            let max = values.iter().copied().max().unwrap_or(0);
            let label = format!("{label} — max {}", crate::units::human_ns(max));
            draw_markers(&mut chart, i, &points, c, Some(label))?;
        }
        if let Some(d) = deadline {
            let y = d as f64 / 1e3;
            chart
                .draw_series(LineSeries::new(
                    [(0.0, y), (seconds as f64, y)],
                    deadline_style(),
                ))?
                .label(format!("deadline {}", crate::units::human_ns(d)))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], deadline_style()));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}

/// How a category chart draws its series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Grouped bars, for unordered categories (loads, methods).
    Bars,
    /// Lines with markers, for ordered categories (number of competitors).
    Lines,
}

/// A value per category for several series (e.g. max latency per load, one bar per
/// period; or response percentiles per number of competitors). `None`: no value.
pub fn category_svg(
    style: Style,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    categories: &[String],
    series: &[(String, Vec<Option<f64>>)],
) -> anyhow::Result<String> {
    let n = categories.len().max(1);
    let y_max = series
        .iter()
        .flat_map(|s| s.1.iter().flatten().copied())
        .fold(1.0f64, f64::max)
        * if style == Style::Bars { 1.3 } else { 1.15 };
    with_svg(|root| {
        let mut chart = chart_builder(root, title)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..y_max)?;
        let labels = categories.to_vec();
        chart
            .configure_mesh()
            .x_labels(n.min(24))
            .x_label_formatter(&|v| {
                let i = v.round();
                if (v - i).abs() < 0.01 && i >= 0.0 {
                    labels.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc(x_desc)
            .y_desc(y_desc)
            .y_label_formatter(&axis_number)
            .draw()?;
        let k = series.len().max(1) as f64;
        for (i, (label, values)) in series.iter().enumerate() {
            let c = color(i);
            let points: Vec<(f64, f64)> = values
                .iter()
                .enumerate()
                .filter_map(|(x, v)| v.map(|v| (x as f64, v)))
                .collect();
            if style == Style::Bars {
                let w = 0.8 / k;
                chart
                    .draw_series(points.iter().map(|&(x, v)| {
                        let x0 = x - 0.4 + i as f64 * w;
                        Rectangle::new([(x0, 0.0), (x0 + w * 0.9, v)], c.filled())
                    }))?
                    .label(label.as_str())
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled())
                    });
            } else {
                draw_line_with_dots(&mut chart, &points, label, i)?;
            }
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    })
    .map(|svg| match style {
        Style::Bars => {
            let colors: Vec<RGBColor> = (0..series.len()).map(color).collect();
            crate::render::plot_marks::pattern_bars(&svg, &colors)
        }
        Style::Lines => svg,
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
        let svg = timeline_svg("t", &[("CPU 0".to_string(), &long[..])], None).unwrap();
        assert!(svg.len() < 2 << 20, "{} bytes of SVG", svg.len());
    }
}
