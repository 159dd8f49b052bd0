//! A value per category for several series (a study's max and avg per load and period,
//! response percentiles per number of competitors) that holds a 3 s maximum beside 30 µs
//! averages: values spanning more than a factor of 20 go on a log axis, the largest value
//! is written on its bar, labels are fitted (`labels::fit`: shared parts said once,
//! families grouped, wrapped, or a key), the legend sits above the plot. On a phone, bars
//! turn sideways: a row per category, its label at the left, the values along the width.

use crate::render::axis::{
    fitting, latency_label, linear_ticks, log_ticks, nice_ceil, nice_floor, number_label,
};
use crate::render::canvas::{text_width, Anchor, Canvas, Layer};
use crate::render::figure::Chart;
use crate::render::frame::{self, Axes, Rect};
use crate::render::labels::{self, Fitted};
use crate::render::legend::{self, Entry, Swatch};
use crate::render::plot_marks::draw_markers;
use crate::render::plots::color;
use plotters::prelude::*;

/// How a category chart draws its series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Grouped bars, for unordered categories (loads, methods).
    Bars,
    /// Lines with markers, for ordered categories (number of competitors).
    Lines,
}

/// What a category chart shows.
pub struct Categories<'a> {
    pub style: Style,
    pub title: &'a str,
    pub x_desc: &'a str,
    /// The value axis' title; for latencies without its unit (the ticks carry it).
    pub y_desc: &'a str,
    pub categories: &'a [String],
    /// Per series its name and a value per category (None: no value).
    pub series: &'a [(String, Vec<Option<f64>>)],
    /// Values are latencies in µs: ticks and the max's label are written with their unit.
    pub latency: bool,
}

impl Categories<'_> {
    fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.series
            .iter()
            .flat_map(|s| s.1.iter().flatten().copied())
    }

    fn label(&self, v: f64) -> String {
        if self.latency {
            latency_label(v)
        } else {
            number_label((v * 100.0).round() / 100.0)
        }
    }

    /// The largest value: (category, series, value).
    fn max(&self) -> Option<(usize, usize, f64)> {
        let mut best: Option<(usize, usize, f64)> = None;
        for (i, (_, values)) in self.series.iter().enumerate() {
            for (j, v) in values.iter().enumerate() {
                if let Some(v) = *v {
                    if best.is_none_or(|b| v > b.2) {
                        best = Some((j, i, v));
                    }
                }
            }
        }
        best
    }
}

/// The chart at both sizes.
pub fn chart(cat: &Categories) -> anyhow::Result<Chart> {
    Chart::drawn(cat.title, |c| category_svg(cat, c))
}

/// The chart at one size: sideways bars on a phone, else upright bars or lines.
pub fn category_svg(cat: &Categories, c: Canvas) -> anyhow::Result<String> {
    if c.narrow && cat.style == Style::Bars {
        sideways(cat, c)
    } else {
        upright(cat, c)
    }
}

/// The value axis: logarithmic when the positive values span more than a factor of 20.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueAxis {
    pub log: bool,
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<(f64, String)>,
}

/// The value axis of `cat` with at most `max_ticks` ticks, headroom above the max for its label.
pub fn value_axis(cat: &Categories, max_ticks: usize) -> ValueAxis {
    let max = cat.values().fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let min = cat
        .values()
        .filter(|&v| v > 0.0)
        .fold(f64::MAX, f64::min)
        .min(max);
    let log = cat.style == Style::Bars && max / min > 20.0
        || cat.style == Style::Lines && max / min > 50.0;
    let (lo, hi) = if log {
        // Room above the largest bar for its value: a factor of 4 on a log axis.
        (nice_floor(min / 1.5), nice_ceil(max * 4.0))
    } else {
        (0.0, (max * 1.15).max(1e-9))
    };
    let values = if log {
        log_ticks(lo, hi, max_ticks)
    } else {
        linear_ticks(lo, hi, max_ticks)
    };
    ValueAxis {
        log,
        lo,
        hi,
        ticks: values.into_iter().map(|v| (v, cat.label(v))).collect(),
    }
}

/// The y title: the description, its "(µs)" dropped when the ticks carry units.
fn value_title(cat: &Categories, axis: &ValueAxis) -> String {
    let scale = if axis.log { " (log axis)" } else { "" };
    let desc = if cat.latency {
        cat.y_desc.replace(" (µs)", "")
    } else {
        cat.y_desc.to_string()
    };
    format!("{desc}{scale}")
}

fn x_title(cat: &Categories, fitted: &Fitted) -> String {
    match &fitted.common {
        Some(common) => format!("{} (each {common})", cat.x_desc),
        None => cat.x_desc.to_string(),
    }
}

fn entries(cat: &Categories) -> Vec<Entry> {
    cat.series
        .iter()
        .enumerate()
        .map(|(i, (name, _))| Entry {
            swatch: if cat.style == Style::Bars {
                Swatch::Bar(i)
            } else {
                Swatch::Line(i)
            },
            label: name.clone(),
        })
        .collect()
}

/// The key of lettered categories as legend entries ("A: none").
fn key_entries(fitted: &Fitted) -> Vec<Entry> {
    fitted
        .key
        .iter()
        .map(|(k, label)| Entry {
            swatch: Swatch::Text,
            label: format!("{k}: {label}"),
        })
        .collect()
}

/// Upright bars or lines: categories along the x axis.
fn upright(cat: &Categories, c: Canvas) -> anyhow::Result<String> {
    let n = cat.categories.len().max(1);
    let entries = entries(cat);
    let head = frame::head_height(&c, cat.title, &entries);
    let axis = value_axis(cat, 6);
    let slot = (f64::from(c.width) - 120.0) / n as f64;
    let fitted = labels::fit(cat.categories, slot, c.font, 3);
    let key = key_entries(&fitted);
    let key_h = legend::height(&c, &key, f64::from(c.width) - 16.0);
    let c = c.with_height(c.height + key_h.round() as u32);
    let axes = Axes {
        x_ticks: fitted
            .lines
            .iter()
            .enumerate()
            .map(|(j, l)| (j as f64, l.clone()))
            .collect(),
        x_groups: fitted
            .groups
            .iter()
            .map(|g| (g.0 as f64, g.1 as f64, g.2.clone()))
            .collect(),
        y_ticks: axis.ticks.clone(),
        x_title: x_title(cat, &fitted),
        y_title: value_title(cat, &axis),
        x_centred: true,
    };
    let bottom = f64::from(c.height) - key_h;
    let r = frame::plot_rect(&c, (0.0, bottom), head, &axes, 0.0);
    frame::svg(&c, |root, layer| {
        frame::draw_head(layer, &c, 0.0, cat.title, &entries);
        legend::draw(layer, &c, &key, (8.0, bottom), f64::from(c.width) - 16.0);
        let area = frame::area(root, &c, r);
        let x = -0.5f64..(n as f64 - 0.5);
        if axis.log {
            let mut chart =
                ChartBuilder::on(&area).build_cartesian_2d(x, (axis.lo..axis.hi).log_scale())?;
            upright_series(cat, &c, layer, r, &axes, &axis, &mut chart)
        } else {
            let mut chart = ChartBuilder::on(&area).build_cartesian_2d(x, axis.lo..axis.hi)?;
            upright_series(cat, &c, layer, r, &axes, &axis, &mut chart)
        }
    })
    .map(|svg| patterned(cat, &svg, c.narrow))
}

/// Each series' bars (patterned after the first) or lines, the axes, the max written on its bar.
fn upright_series<'a, CT: CoordTranslate<From = (f64, f64)>>(
    cat: &Categories,
    c: &Canvas,
    layer: &mut Layer,
    r: Rect,
    axes: &Axes,
    axis: &ValueAxis,
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
) -> anyhow::Result<()> {
    let px = |x: f64| f64::from(chart.as_coord_spec().translate(&(x, axis.hi)).0);
    let py = |y: f64| f64::from(chart.as_coord_spec().translate(&(0.0, y)).1);
    frame::draw_axes(layer, c, r, axes, &px, &py);
    let k = cat.series.len().max(1) as f64;
    let w = 0.8 / k;
    let centre = |j: usize, i: usize| match cat.style {
        Style::Bars => j as f64 - 0.4 + (i as f64 + 0.45) * w,
        Style::Lines => j as f64,
    };
    if let Some((j, i, v)) = cat.max() {
        let text = cat.label(v);
        let half = text_width(&text, c.font) / 2.0;
        let x = px(centre(j, i)).clamp(r.left + half, f64::from(c.width) - 4.0 - half);
        let y = (py(v) - c.font * 0.8).max(r.top + c.font * 0.5);
        layer.styled_text(
            (x, y),
            c.font,
            Anchor::Middle,
            &text,
            "#222",
            "class=\"value-max\" font-weight=\"bold\"",
        );
    }
    for (i, (_, values)) in cat.series.iter().enumerate() {
        let col = color(i);
        let points: Vec<(f64, f64)> = values
            .iter()
            .enumerate()
            .filter_map(|(j, v)| v.filter(|&v| v > axis.lo).map(|v| (j as f64, v)))
            .collect();
        if cat.style == Style::Lines {
            chart.draw_series(LineSeries::new(points.iter().copied(), col.stroke_width(2)))?;
            draw_markers(chart, i, &points, col, None)?;
            continue;
        }
        chart.draw_series(points.iter().map(|&(j, v)| {
            let x0 = j - 0.4 + i as f64 * w;
            Rectangle::new([(x0, axis.lo), (x0 + w * 0.9, v)], col.filled())
        }))?;
    }
    Ok(())
}

/// Bars after the first filled with their patterns (ids of their own on a phone's drawing:
/// a pattern defined in the hidden wide drawing would not paint the narrow one).
fn patterned(cat: &Categories, svg: &str, narrow: bool) -> String {
    if cat.style == Style::Lines {
        return svg.to_string();
    }
    let colors: Vec<RGBColor> = (0..cat.series.len()).map(color).collect();
    crate::render::plot_marks::pattern_bars(
        svg,
        &colors,
        if narrow {
            "latscope-nbars"
        } else {
            "latscope-bars"
        },
    )
}

/// A phone's bars: a row per category (its label at the left, wrapped), the values along
/// the width, the largest written right of its bar.
fn sideways(cat: &Categories, c: Canvas) -> anyhow::Result<String> {
    let n = cat.categories.len().max(1);
    let k = cat.series.len().max(1);
    let entries = entries(cat);
    let head = frame::head_height(&c, cat.title, &entries);
    let fitted = labels::fit_rows(cat.categories, f64::from(c.width) * 0.4, c.font);
    let lines = fitted.lines.iter().map(Vec::len).max().unwrap_or(1) as f64;
    let row_h = (k as f64 * 10.0 + 8.0).max(lines * c.line_height() + 4.0);
    let key = key_entries(&fitted);
    let key_h = legend::height(&c, &key, f64::from(c.width) - 16.0);
    let axis = value_axis(
        cat,
        fitting(f64::from(c.width) * 0.5, text_width("500 ms", c.font)),
    );
    let axes = Axes {
        x_ticks: axis
            .ticks
            .iter()
            .map(|(v, l)| (*v, vec![l.clone()]))
            .collect(),
        y_ticks: fitted
            .lines
            .iter()
            .enumerate()
            .map(|(j, l)| ((n - j) as f64 - 0.5, l.join("\n")))
            .collect(),
        x_title: value_title(cat, &axis),
        y_title: x_title(cat, &fitted),
        ..Axes::default()
    };
    let plot_h = n as f64 * row_h;
    let below = 6.0 + c.line_height() * 2.0 + 10.0;
    let height = head + c.font * 0.6 + plot_h + below + key_h;
    let c = c.with_height(height.ceil() as u32);
    let max_label = cat
        .max()
        .map_or(0.0, |m| text_width(&cat.label(m.2), c.font));
    let r = frame::plot_rect(&c, (0.0, height - key_h), head, &axes, max_label + 10.0);
    frame::svg(&c, |root, layer| {
        frame::draw_head(layer, &c, 0.0, cat.title, &entries);
        legend::draw(
            layer,
            &c,
            &key,
            (8.0, height - key_h),
            f64::from(c.width) - 16.0,
        );
        let area = frame::area(root, &c, r);
        let y = 0f64..n as f64;
        if axis.log {
            let mut chart =
                ChartBuilder::on(&area).build_cartesian_2d((axis.lo..axis.hi).log_scale(), y)?;
            sideways_series(cat, &c, layer, r, &axes, &axis, &mut chart)
        } else {
            let mut chart = ChartBuilder::on(&area).build_cartesian_2d(axis.lo..axis.hi, y)?;
            sideways_series(cat, &c, layer, r, &axes, &axis, &mut chart)
        }
    })
    .map(|svg| patterned(cat, &svg, true))
}

fn sideways_series<'a, CT: CoordTranslate<From = (f64, f64)>>(
    cat: &Categories,
    c: &Canvas,
    layer: &mut Layer,
    r: Rect,
    axes: &Axes,
    axis: &ValueAxis,
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
) -> anyhow::Result<()> {
    let n = cat.categories.len().max(1);
    let px = |x: f64| f64::from(chart.as_coord_spec().translate(&(x, 0.0)).0);
    let py = |y: f64| f64::from(chart.as_coord_spec().translate(&(axis.hi, y)).1);
    frame::draw_axes(layer, c, r, axes, &px, &py);
    let k = cat.series.len().max(1) as f64;
    let h = 0.8 / k;
    // Row j's top at n - j - 0.1; series i below the one before.
    let top = |j: usize, i: usize| (n - j) as f64 - 0.1 - i as f64 * h;
    if let Some((j, i, v)) = cat.max() {
        let at = (px(v) + 6.0, py(top(j, i) - h * 0.45));
        layer.styled_text(
            at,
            c.font,
            Anchor::Start,
            &cat.label(v),
            "#222",
            "class=\"value-max\" font-weight=\"bold\"",
        );
    }
    for (i, (_, values)) in cat.series.iter().enumerate() {
        let col = color(i);
        chart.draw_series(values.iter().enumerate().filter_map(|(j, v)| {
            let v = v.filter(|&v| v > axis.lo)?;
            let t = top(j, i);
            Some(Rectangle::new(
                [(axis.lo, t - h * 0.9), (v, t)],
                col.filled(),
            ))
        }))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::canvas::{NARROW, WIDE};
    use crate::render::svg_check::{assert_no_overlap, field, text_boxes};

    /// Per series its name and a value per category.
    type Series = Vec<(String, Vec<Option<f64>>)>;

    /// The recorded memory-load suite's worst-CPU `stat` (µs) per load (categories, in
    /// the plan's order) and period (series), as the suite page charts them.
    fn suite(stat: &str) -> (Vec<String>, Series) {
        let run = field("suite.json");
        let (mut loads, mut periods): (Vec<String>, Vec<u64>) = (vec![], vec![]);
        let mut cells: Vec<(String, u64, f64)> = vec![];
        for sc in run["scenarios"].as_array().unwrap() {
            let load = sc["params"]["loads"][0]
                .as_str()
                .unwrap_or("none")
                .to_string();
            let period = sc["params"]["period_ns"].as_u64().unwrap();
            let threads = sc["threads"].as_array().unwrap();
            let worst = threads.iter().map(|t| t[stat].as_f64().unwrap() / 1e3);
            cells.push((load.clone(), period, worst.fold(0.0, f64::max)));
            if !loads.contains(&load) {
                loads.push(load);
            }
            if !periods.contains(&period) {
                periods.push(period);
            }
        }
        let series = periods
            .iter()
            .map(|&p| {
                let values = loads
                    .iter()
                    .map(|l| cells.iter().find(|c| c.0 == *l && c.1 == p).map(|c| c.2))
                    .collect();
                (format!("period {}", crate::units::human_ns(p)), values)
            })
            .collect();
        (loads, series)
    }

    /// Each figure type of the studies (grouped bars per load and period; lines, as the
    /// wake-competitors sweep draws) for max, p99 and avg of the recorded suite, whose
    /// max holds a 3 s stall beside 50 µs and whose avg 3 ms beside 20 µs: a log axis where
    /// the values span over 20x, its top over the largest value, that value written once and
    /// inside the chart, every text inside the chart and none over another, at both sizes.
    #[test]
    fn the_recorded_suites_figures_hold_a_3_s_maximum() {
        for (stat, log) in [("max_ns", true), ("p99_ns", false), ("mean_ns", true)] {
            let (categories, series) = suite(stat);
            assert_eq!((categories.len(), series.len()), (9, 3));
            for style in [Style::Bars, Style::Lines] {
                let cat = Categories {
                    style,
                    title: "timer: latency per load",
                    x_desc: "load",
                    y_desc: "latency (µs)",
                    categories: &categories,
                    series: &series,
                    latency: true,
                };
                let (_, _, max) = cat.max().unwrap();
                let axis = value_axis(&cat, 6);
                let what = format!("{stat} {style:?}");
                assert_eq!(axis.log, log, "{what}");
                assert!(axis.hi >= max && axis.ticks.len() >= 3, "{what}: {axis:?}");
                let labels: Vec<&String> = axis.ticks.iter().map(|t| &t.1).collect();
                let mut unique = labels.clone();
                unique.dedup();
                assert_eq!(labels, unique, "{what}: tick labels repeat");
                for c in [WIDE, NARROW] {
                    let what = format!("{what} at {} units", c.width);
                    let svg = category_svg(&cat, c).unwrap();
                    assert_no_overlap(&svg, &what);
                    let width = f64::from(c.width);
                    for b in text_boxes(&svg) {
                        assert!(b.0 >= -1.0 && b.2 <= width + 1.0, "{what}: {b:?} cut off");
                    }
                    let written = format!(
                        "class=\"value-max\" font-weight=\"bold\">{}<",
                        cat.label(max)
                    );
                    assert_eq!(svg.matches(&written).count(), 1, "{what}: {written}");
                }
            }
        }
    }
}
