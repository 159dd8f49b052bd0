//! The worst `--trace` spike as a timeline, one lane per CPU, where each kind of span
//! (task, idle, IRQ handler, softirq) differs by more than colour: its band in the lane
//! and its fill pattern, the legend alike; the deadline dashed, the switch-in solid.

use crate::render::canvas::Canvas;
use crate::render::plot_marks::{pattern_rects, PatternFill};
use crate::render::plots::{
    axis_number, chart_builder, color, deadline_style, draw_legend, with_svg,
};
use crate::result::trace::TimelineSpan;
use anyhow::Result;
use plotters::prelude::*;

/// IRQ handlers: vermillion, cross-hatched (pattern 4), high in the lane.
const IRQ: RGBColor = RGBColor(213, 94, 0);
/// Softirqs: orange, striped / (pattern 0), high in the lane.
const SOFTIRQ: RGBColor = RGBColor(230, 159, 0);
/// The idle task: light grey, solid, low in the lane.
const IDLE: RGBColor = RGBColor(220, 220, 220);
/// The switch-in / wake line: solid blue (the deadline's is near-black and dashed).
const SWITCH_IN: RGBColor = RGBColor(31, 119, 180);
/// Other tasks, first seen first: (palette colour, pattern; `None`: solid). The palette's
/// vermillion and orange are the IRQs' and softirqs'; patterns 0 and 4 are theirs too.
const TASKS: [(usize, Option<usize>); 6] = [
    (0, None),
    (2, Some(1)),
    (3, Some(2)),
    (4, Some(3)),
    (7, Some(5)),
    (6, Some(6)),
];
/// Tasks named in the legend, at most.
const MAX_TASKS: usize = 8;

/// What a span is drawn as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Irq,
    Softirq,
    Idle,
    /// The k-th task seen (by label).
    Task(usize),
}

impl Kind {
    fn color(self) -> RGBColor {
        match self {
            Kind::Irq => IRQ,
            Kind::Softirq => SOFTIRQ,
            Kind::Idle => IDLE,
            Kind::Task(k) => color(TASKS[k % TASKS.len()].0),
        }
    }

    /// The band of the lane it fills (from, to), IRQs and softirqs above the tasks.
    fn band(self) -> (f64, f64) {
        match self {
            Kind::Irq | Kind::Softirq => (0.55, 0.95),
            _ => (0.1, 0.5),
        }
    }

    /// Its fill pattern (a `<pattern>` over its colour), `None`: solid.
    fn fill(self) -> Option<PatternFill> {
        let (id, pattern) = match self {
            Kind::Irq => ("latscope-span-irq".to_string(), 4),
            Kind::Softirq => ("latscope-span-softirq".to_string(), 0),
            Kind::Idle => return None,
            Kind::Task(k) => {
                let pattern = TASKS[k % TASKS.len()].1?;
                (format!("latscope-span-task-{}", k % TASKS.len()), pattern)
            }
        };
        Some(PatternFill {
            id,
            color: self.color(),
            pattern,
        })
    }
}

/// Each span's kind (in `spans`' order; markers, on `usize::MAX`, get none) and the task
/// labels in the order seen.
fn kinds(spans: &[TimelineSpan]) -> (Vec<Option<Kind>>, Vec<String>) {
    let mut tasks: Vec<String> = Vec::new();
    let kinds = spans
        .iter()
        .map(|s| {
            if s.cpu == usize::MAX {
                return None;
            }
            Some(match s.kind.as_str() {
                "irq" => Kind::Irq,
                "softirq" => Kind::Softirq,
                _ if s.label.starts_with("swapper") || s.label.ends_with("/0") => Kind::Idle,
                _ => Kind::Task(match tasks.iter().position(|l| *l == s.label) {
                    Some(k) => k,
                    None => {
                        tasks.push(s.label.clone());
                        tasks.len() - 1
                    }
                }),
            })
        })
        .collect();
    (kinds, tasks)
}

/// The legend's entries after the deadline and switch-in: the kinds present (IRQ handler,
/// softirq, idle) then up to `MAX_TASKS` tasks, each with its kind.
fn legend_entries(kinds: &[Option<Kind>], tasks: &[String]) -> Vec<(String, Kind)> {
    let mut out = Vec::new();
    for (kind, name) in [
        (Kind::Irq, "IRQ handler"),
        (Kind::Softirq, "softirq"),
        (Kind::Idle, "idle"),
    ] {
        if kinds.contains(&Some(kind)) {
            out.push((name.to_string(), kind));
        }
    }
    for (k, label) in tasks.iter().enumerate().take(MAX_TASKS) {
        out.push((label.clone(), Kind::Task(k)));
    }
    out
}

/// The worst `--trace` spike as a timeline: one lane per CPU; IRQs and softirqs high in
/// the lane, tasks low, each kind (and task) its own colour and fill pattern; the deadline
/// and the switch-in as vertical lines. Times in µs from the window's start.
pub fn spike_timeline_svg(title: &str, spans: &[TimelineSpan], c: Canvas) -> Result<String> {
    let lanes = span_lanes(spans);
    let t0 = spans.iter().map(|s| s.start_ns).min().unwrap_or(0);
    let t1 = spans.iter().map(|s| s.end_ns).max().unwrap_or(t0 + 1);
    let t1 = t1.max(t0 + 1);
    let x = |ns: u64| (ns.saturating_sub(t0)) as f64 / 1e3;
    let x_max = x(t1) * 1.02;
    let lane_count = lanes.len().max(1) as f64;
    let (kinds, tasks) = kinds(spans);
    let legend = legend_entries(&kinds, &tasks);
    let headroom = legend_headroom(2 + legend.len(), lane_count);
    let svg = with_svg(c, |root| {
        let mut chart = chart_builder(root, title)
            .build_cartesian_2d(0f64..x_max, 0f64..lane_count + headroom)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc("µs from the window's start")
            .x_label_formatter(&axis_number)
            .draw()?;
        // Lane names left of the axis, at each lane's middle.
        for (i, c) in lanes.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(0.0, i as f64 + 0.5));
            root.draw(&Text::new(
                format!("CPU {c}"),
                (px - 56, py - 7),
                ("sans-serif", 14),
            ))?;
        }
        for (s, kind) in spans.iter().zip(&kinds) {
            let (Some(kind), Some(lane)) = (kind, lanes.iter().position(|&c| c == s.cpu)) else {
                continue;
            };
            let ((lo, hi), y) = (kind.band(), lane as f64);
            let corners = [
                (x(s.start_ns), y + lo),
                (x(s.end_ns.max(s.start_ns)), y + hi),
            ];
            chart.draw_series(std::iter::once(Rectangle::new(
                corners,
                kind.color().filled(),
            )))?;
        }
        for s in spans.iter().filter(|s| s.cpu == usize::MAX) {
            let style = if s.kind == "deadline" {
                deadline_style()
            } else {
                SWITCH_IN.stroke_width(2)
            };
            chart
                .draw_series(LineSeries::new(
                    [(x(s.start_ns), 0.0), (x(s.start_ns), lane_count)],
                    style,
                ))?
                .label(s.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
        }
        for (label, kind) in &legend {
            let c = kind.color();
            chart
                .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())?
                .label(label.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 18, y + 5)], c.filled()));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })?;
    let mut fills: Vec<Kind> = kinds.iter().flatten().copied().collect();
    fills.sort_unstable();
    fills.dedup();
    let fills: Vec<PatternFill> = fills.into_iter().filter_map(Kind::fill).collect();
    Ok(pattern_rects(&svg, &fills))
}

/// The CPUs the spans are on (markers, on `usize::MAX`, have no lane), ascending.
fn span_lanes(spans: &[TimelineSpan]) -> Vec<usize> {
    let mut c: Vec<usize> = spans
        .iter()
        .filter(|s| s.cpu != usize::MAX)
        .map(|s| s.cpu)
        .collect();
    c.sort_unstable();
    c.dedup();
    c
}

/// The room above the lanes, in lanes: the legend (`entries` rows) gets a band of its own
/// so it never hides a span (its share of the ~310 px plot).
fn legend_headroom(entries: usize, lane_count: f64) -> f64 {
    let legend_share = (entries as f64 * 20.0 + 20.0) / 310.0;
    lane_count * legend_share.min(0.6) / (1.0 - legend_share.min(0.6))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(cpu: usize, from_us: u64, to_us: u64, kind: &str, label: &str) -> TimelineSpan {
        TimelineSpan {
            cpu,
            start_ns: from_us * 1000,
            end_ns: to_us * 1000,
            kind: kind.into(),
            label: label.into(),
        }
    }

    /// The `fill` of every `<rect>` drawn with `stroke` (pattern fills are outlined in
    /// their colour; solid ones have no stroke).
    fn rect_fills(svg: &str, attr: &str) -> Vec<String> {
        svg.lines()
            .filter(|l| l.starts_with("<rect") && l.contains(attr))
            .map(|l| crate::render::plot_marks::svg_attr(l, "fill").to_string())
            .collect()
    }

    /// A pattern's definition with its colours taken out: what tells it apart in grey.
    fn pattern_marks(svg: &str, id: &str) -> String {
        let def = svg
            .split(&format!("<pattern id=\"{id}\""))
            .nth(1)
            .unwrap_or_else(|| panic!("no pattern {id}: {svg}"));
        let def = &def[..def.find("</pattern>").unwrap()];
        let mut parts = def.split("fill=\"#");
        let first = parts.next().unwrap_or("").to_string();
        parts.fold(first, |acc, p| acc + &p[6..])
    }

    #[test]
    fn each_kind_of_span_has_its_own_fill_and_the_legend_the_same() {
        let spans = vec![
            span(usize::MAX, 10, 10, "deadline", "deadline"),
            span(usize::MAX, 90, 90, "switch_in", "switch-in / wake"),
            span(1, 0, 20, "task", "swapper/1/0"),
            span(1, 20, 60, "task", "stress/4242"),
            span(1, 30, 35, "irq", "irq 24 eth0"),
            span(1, 40, 50, "softirq", "softirq TIMER"),
            span(1, 60, 80, "task", "kworker/1:1/77"),
            span(1, 80, 100, "task", "latscope-cpu1/99"),
            span(0, 0, 100, "task", "swapper/0/0"),
        ];
        let svg = spike_timeline_svg("t", &spans, crate::render::canvas::WIDE).unwrap();
        // Each kind drawn (its span(s)) and named in the legend with the same fill.
        let hexed = |c: RGBColor| crate::render::plot_marks::hex(c);
        let idle = format!("fill=\"{}\" stroke=\"none\"", hexed(IDLE));
        assert_eq!(
            svg.matches(&idle).count(),
            3,
            "two idle spans + legend: {svg}"
        );
        for id in [
            "latscope-span-irq",
            "latscope-span-softirq",
            "latscope-span-task-1",
            "latscope-span-task-2",
        ] {
            let fill = format!("url(#{id})");
            let n = rect_fills(&svg, "stroke=\"#")
                .iter()
                .filter(|f| **f == fill)
                .count();
            assert_eq!(n, 2, "{id}: its span and its legend box: {svg}");
        }
        let first_task = format!("fill=\"{}\" stroke=\"none\"", hexed(color(0)));
        assert_eq!(svg.matches(&first_task).count(), 2, "task 0 solid");
        // The patterns differ in their marks, not only in colour.
        let marks: Vec<String> = ["irq", "softirq", "task-1", "task-2"]
            .iter()
            .map(|k| pattern_marks(&svg, &format!("latscope-span-{k}")))
            .collect();
        for (i, a) in marks.iter().enumerate() {
            for b in &marks[i + 1..] {
                assert_ne!(a, b, "two kinds share a pattern");
            }
        }
        for name in [
            "IRQ handler",
            "softirq",
            "idle",
            "stress/4242",
            "kworker/1:1/77",
        ] {
            assert!(svg.contains(name), "{name} not in the legend");
        }
        // The deadline dashed, the switch-in solid.
        let lines: Vec<&str> = svg.lines().filter(|l| l.starts_with("<polyline")).collect();
        let dl = lines
            .iter()
            .filter(|l| l.contains("stroke=\"#111111\""))
            .collect::<Vec<_>>();
        let sw = lines
            .iter()
            .filter(|l| l.contains("stroke=\"#1F77B4\""))
            .collect::<Vec<_>>();
        assert_eq!((dl.len(), sw.len()), (2, 2), "line and legend each: {svg}");
        assert!(dl.iter().all(|l| l.contains("stroke-dasharray")), "{dl:?}");
        assert!(sw.iter().all(|l| !l.contains("stroke-dasharray")), "{sw:?}");
    }
}
