//! The charts of the HTML reports, drawn with plotters' SVG backend into strings: the
//! latency histogram (log count axis, µs axis, one line per CPU or run, OSADL style),
//! the per-second maximum over time, and category charts for suites and wake sweeps.
//! plotters escapes every text it writes into the SVG.

use crate::render::canvas::Canvas;
use crate::render::plot_marks::draw_markers_on_line;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

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
pub fn dash_lines(svg: &str) -> String {
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

/// A chart laid out by plotters (its axes, labels and legend) on canvas `c`, its text made
/// readable at the size the page shows `c` at (the trace's and worst case's charts).
pub fn with_svg(
    c: Canvas,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> anyhow::Result<()>,
) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (c.width, c.height)).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
    }
    Ok(finish_svg(&svg, c.font))
}

/// What a plotters chart's SVG gets once drawn: text at `min_font` or more, each line
/// colour's dashes.
pub fn finish_svg(svg: &str, min_font: f64) -> String {
    dash_lines(&readable_fonts(svg, min_font))
}

/// The legends' laid-out size: a whole number whose written size (÷ 1.24) is the wide canvas's font or more.
const LEGEND_FONT: f64 = 22.0;

/// Scales every `font-size` of plotters' SVG by 1.4, at least to `min_font` (sizes laid out
/// at `min_font` or more stay).
pub fn readable_fonts(svg: &str, min_font: f64) -> String {
    const KEY: &str = "font-size=\"";
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(i) = rest.find(KEY) {
        out.push_str(&rest[..i + KEY.len()]);
        rest = &rest[i + KEY.len()..];
        let end = rest.find('"').unwrap_or(rest.len());
        match rest[..end].parse::<f64>() {
            // Text laid out at a readable size already (legends) keeps it.
            Ok(size) if size >= min_font => out.push_str(&format!("{size:.1}")),
            Ok(size) => out.push_str(&format!("{:.1}", (size * 1.4).max(min_font))),
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
        // below the minimum, so readable_fonts grew it 1.4× past its box). 22 / 1.24 = 17.7
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
