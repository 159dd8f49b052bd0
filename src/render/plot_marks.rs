//! How the series of a chart differ by more than colour, so they read in greyscale and to
//! colour-blind readers: the i-th series of points gets the i-th marker shape, and the i-th
//! series of bars the i-th fill pattern (lines get dashes in plots.rs).

use plotters::prelude::*;

/// The marker shapes, in the order series get them.
pub const SHAPES: [&str; 8] = [
    "circle",
    "triangle",
    "square",
    "cross",
    "diamond",
    "ring",
    "hollow triangle",
    "hollow square",
];

/// Draws `points` as the i-th series' markers (its shape and colour `c`), named `label`
/// in the legend by the same marker (None: no legend entry).
pub fn draw_markers<'a, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    i: usize,
    points: &[(f64, f64)],
    c: RGBColor,
    label: Option<String>,
) -> anyhow::Result<()> {
    marked(chart, i, points, c, label.map(|l| (l, false)))
}

/// Draws `points` as the i-th series' markers, named `label` in the legend by a short line
/// with the marker on it: for series drawn as a line with markers (the line is the
/// caller's, drawn without a label).
pub fn draw_markers_on_line<'a, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    i: usize,
    points: &[(f64, f64)],
    c: RGBColor,
    label: String,
) -> anyhow::Result<()> {
    marked(chart, i, points, c, Some((label, true)))
}

/// The markers and their legend entry (its label, and whether a line goes under it).
fn marked<'a, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    i: usize,
    points: &[(f64, f64)],
    c: RGBColor,
    legend: Option<(String, bool)>,
) -> anyhow::Result<()> {
    let (fill, line, wide) = (c.filled(), c.stroke_width(2), c.stroke_width(3));
    // One arm per shape, drawn relative to its point: the data points and the legend's
    // pixel point take the same shape, each with its own coordinate type.
    macro_rules! shaped {
        ($shape:expr) => {{
            let drawn = chart.draw_series(points.iter().map(|&p| EmptyElement::at(p) + $shape))?;
            match legend {
                Some((label, false)) => {
                    drawn
                        .label(label)
                        .legend(move |(x, y)| EmptyElement::at((x + 9, y)) + $shape);
                }
                Some((label, true)) => {
                    drawn.label(label).legend(move |(x, y)| {
                        EmptyElement::at((x + 9, y))
                            + PathElement::new(vec![(-9, 0), (9, 0)], wide)
                            + $shape
                    });
                }
                None => {}
            }
        }};
    }
    let square = [(-4, -4), (4, 4)];
    let diamond = vec![(0, -5), (5, 0), (0, 5), (-5, 0)];
    match i % SHAPES.len() {
        0 => shaped!(Circle::new((0, 0), 4, fill)),
        1 => shaped!(TriangleMarker::new((0, 0), 5, fill)),
        2 => shaped!(Rectangle::new(square, fill)),
        3 => shaped!(Cross::new((0, 0), 4, line)),
        4 => shaped!(Polygon::new(diamond.clone(), fill)),
        5 => shaped!(Circle::new((0, 0), 4, line)),
        6 => shaped!(TriangleMarker::new((0, 0), 5, line)),
        _ => shaped!(Rectangle::new(square, line)),
    }
    Ok(())
}

/// The i-th series' marker drawn at pixel `(x, y)` in colour `hex` as SVG (legends drawn
/// beside the chart): the shapes `marked` draws through plotters, at the same sizes.
pub fn marker_svg(i: usize, (x, y): (f64, f64), hex: &str) -> String {
    let filled = format!("fill=\"{hex}\" stroke=\"none\"");
    let hollow = format!("fill=\"none\" stroke=\"{hex}\" stroke-width=\"2\"");
    let triangle = |style: &str| {
        let pts: Vec<String> = [-90f64, -210.0, -330.0]
            .iter()
            .map(|d| {
                let r = d.to_radians();
                format!("{:.1},{:.1}", x + 5.0 * r.cos(), y + 5.0 * r.sin())
            })
            .collect();
        format!("<polygon points=\"{}\" {style}/>", pts.join(" "))
    };
    let square = |style: &str| {
        format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\" {style}/>",
            x - 4.0,
            y - 4.0
        )
    };
    match i % SHAPES.len() {
        0 => format!("<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\" {filled}/>"),
        1 => triangle(&filled),
        2 => square(&filled),
        3 => format!(
            "<path d=\"M{:.1},{:.1}L{:.1},{:.1}M{:.1},{:.1}L{:.1},{:.1}\" {hollow}/>",
            x - 4.0,
            y - 4.0,
            x + 4.0,
            y + 4.0,
            x - 4.0,
            y + 4.0,
            x + 4.0,
            y - 4.0
        ),
        4 => format!(
            "<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" {filled}/>",
            x,
            y - 5.0,
            x + 5.0,
            y,
            x,
            y + 5.0,
            x - 5.0,
            y
        ),
        5 => format!("<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\" {hollow}/>"),
        6 => triangle(&hollow),
        _ => square(&hollow),
    }
}

/// The fill patterns: white marks over the colour (bars after the first take them in
/// order; other charts name one by its index, see `pattern_rects`).
pub const PATTERNS: [&str; 7] = [
    // 0: diagonal stripes /
    r#"patternTransform="rotate(45)"><rect width="8" height="8" fill="C"/><line x1="0" y1="0" x2="0" y2="8" stroke="white" stroke-width="3"/>"#,
    // 1: dots
    r#"><rect width="8" height="8" fill="C"/><circle cx="4" cy="4" r="1.8" fill="white"/>"#,
    // 2: diagonal stripes \
    r#"patternTransform="rotate(-45)"><rect width="8" height="8" fill="C"/><line x1="0" y1="0" x2="0" y2="8" stroke="white" stroke-width="3"/>"#,
    // 3: horizontal stripes
    r#"><rect width="8" height="8" fill="C"/><line x1="0" y1="4" x2="8" y2="4" stroke="white" stroke-width="2.5"/>"#,
    // 4: cross-hatch
    r#"patternTransform="rotate(45)"><rect width="8" height="8" fill="C"/><line x1="0" y1="0" x2="0" y2="8" stroke="white" stroke-width="2"/><line x1="0" y1="0" x2="8" y2="0" stroke="white" stroke-width="2"/>"#,
    // 5: vertical stripes
    r#"><rect width="8" height="8" fill="C"/><line x1="4" y1="0" x2="4" y2="8" stroke="white" stroke-width="2.5"/>"#,
    // 6: checks
    r#"><rect width="8" height="8" fill="C"/><rect width="4" height="4" fill="white"/><rect x="4" y="4" width="4" height="4" fill="white"/>"#,
];

pub fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// A filled shape's pattern: its `<pattern>` id (one per colour and pattern, so charts on
/// one page share identical definitions), the colour its rectangles are drawn in, and
/// the index into `PATTERNS`.
pub struct PatternFill {
    pub id: String,
    pub color: RGBColor,
    pub pattern: usize,
}

/// Fills every rectangle (the shapes and their legend boxes) drawn solid in a fill's
/// colour with its pattern, outlined in that colour; other rectangles stay as drawn.
pub fn pattern_rects(svg: &str, fills: &[PatternFill]) -> String {
    let mut defs = String::from("<defs>");
    let mut swaps: Vec<(String, String)> = Vec::new();
    for f in fills {
        let (id, c) = (&f.id, hex(f.color));
        defs.push_str(&format!(
            r#"<pattern id="{id}" patternUnits="userSpaceOnUse" width="8" height="8" {}</pattern>"#,
            PATTERNS[f.pattern % PATTERNS.len()].replace("fill=\"C\"", &format!("fill=\"{c}\""))
        ));
        swaps.push((
            format!("fill=\"{c}\" stroke=\"none\""),
            format!("fill=\"url(#{id})\" stroke=\"{c}\""),
        ));
    }
    defs.push_str("</defs>");
    let mut out = String::with_capacity(svg.len() + defs.len());
    for line in svg.split_inclusive('\n') {
        let mut line = line.to_string();
        if line.starts_with("<rect") {
            for (from, to) in &swaps {
                line = line.replace(from, to);
            }
        }
        out.push_str(&line);
        if line.starts_with("<svg") {
            out.push_str(&defs);
            out.push('\n');
        }
    }
    out
}

/// Fills the bars (and legend boxes) of series 1.. in `svg` with their patterns, outlined
/// in their colour; series 0 stays solid. `colors[i]` is the i-th series' colour; the
/// patterns' ids start with `prefix`.
pub fn pattern_bars(svg: &str, colors: &[RGBColor], prefix: &str) -> String {
    // Beyond the palette a colour repeats: those series stay as their first.
    let fills: Vec<PatternFill> = colors
        .iter()
        .enumerate()
        .skip(1)
        .take(PATTERNS.len())
        .map(|(i, &color)| PatternFill {
            id: format!("{prefix}-{i}"),
            color,
            pattern: i - 1,
        })
        .collect();
    pattern_rects(svg, &fills)
}

/// The value of attribute `name` in an SVG tag's text (tests read the SVG they draw).
#[cfg(test)]
pub fn svg_attr<'a>(tag: &'a str, name: &str) -> &'a str {
    let quoted = format!("{name}=\"");
    let from = tag
        .find(&quoted)
        .map(|i| i + quoted.len())
        .expect("attribute");
    tag[from..].split('"').next().unwrap()
}

#[cfg(test)]
mod tests {
    use crate::render::canvas::WIDE;
    use crate::render::category::{category_svg, Categories, Style};
    use crate::render::plots::color;
    use crate::render::timeline::timeline_svg;

    /// The elements (tag names) drawn in `hex`'s colour, fill or stroke, sorted.
    fn tags_of(svg: &str, hex: &str) -> Vec<String> {
        let mut tags: Vec<String> = svg
            .lines()
            .filter(|l| l.contains(&format!("=\"{hex}\"")))
            .filter_map(|l| l.strip_prefix('<'))
            .map(|l| l.split(' ').next().unwrap_or("").to_string())
            .collect();
        tags.sort();
        tags.dedup();
        tags
    }

    fn hex(i: usize) -> String {
        super::hex(color(i))
    }

    #[test]
    fn per_second_maxima_differ_by_marker_shape() {
        let a = [100_000u64, 120_000, 90_000];
        let b = [200_000u64, 210_000, 190_000];
        let c = [300_000u64, 310_000, 290_000];
        let lines = [
            ("CPU 0".to_string(), &a[..]),
            ("CPU 1".to_string(), &b[..]),
            ("CPU 2".to_string(), &c[..]),
        ];
        let svg = timeline_svg("t", &lines, None, WIDE).unwrap();
        let shapes: Vec<Vec<String>> = (0..3).map(|i| tags_of(&svg, &hex(i))).collect();
        assert_eq!(shapes[0], ["circle"], "{svg}");
        assert_eq!(shapes[1], ["polygon"], "a triangle: {svg}");
        assert_eq!(shapes[2], ["rect"], "a square: {svg}");
    }

    #[test]
    fn bar_series_differ_by_fill_pattern() {
        let cats = ["none".to_string(), "cpu".to_string()];
        let series: Vec<(String, Vec<Option<f64>>)> = (0..3)
            .map(|i| (format!("s{i}"), vec![Some(10.0 + i as f64), Some(20.0)]))
            .collect();
        let cat = Categories {
            style: Style::Bars,
            title: "t",
            x_desc: "load",
            y_desc: "µs",
            categories: &cats,
            series: &series,
            latency: true,
        };
        let svg = category_svg(&cat, WIDE).unwrap();
        let fills: Vec<String> = svg
            .lines()
            .filter(|l| l.starts_with("<rect") && l.contains(" fill=\"url(#"))
            .map(|l| super::svg_attr(l, "fill").to_string())
            .collect();
        for i in 1..3 {
            let fill = format!("url(#latscope-bars-{i})");
            // Two bars and the legend's box.
            assert_eq!(fills.iter().filter(|f| **f == fill).count(), 3, "{svg}");
            assert!(svg.contains(&format!("<pattern id=\"latscope-bars-{i}\"")));
        }
        let solid = format!("fill=\"{}\" stroke=\"none\"", hex(0));
        assert_eq!(svg.matches(&solid).count(), 3, "series 0 solid: {svg}");
        let defs: Vec<&str> = svg.split("<pattern").skip(1).collect();
        assert!(
            defs[0].contains("<line") && defs[1].contains("<circle"),
            "stripes, dots"
        );
    }
}
