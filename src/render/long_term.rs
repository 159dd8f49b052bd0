//! OSADL's long-term latency plot for `latscope report` of many interval files (a month
//! of `latscope watch`'s daily files): over real time (UTC), each interval's maximum and
//! p99 on a log axis, each second's maximum as faint dots, the spans without measurement
//! shaded and left unjoined, the `--fail-above` limit as a dashed line.

use crate::render::axis::{nice_ceil, nice_floor};
use crate::render::canvas::Canvas;
use crate::render::frame::Axes;
use crate::render::legend::{Entry, Swatch};
use crate::render::plots::{color, deadline_style};
use crate::render::time_axis::{time_latency_axes, time_latency_svg};
use plotters::prelude::*;

/// The most faint per-second dots the plot draws (a chart ~900 px wide shows no more): past
/// it, each dot is the largest of consecutive seconds (a month is 2.6 million seconds).
pub const SECOND_DOTS: usize = 2000;

/// One interval (one file) as the plot draws it.
#[derive(Debug, Clone, Default)]
pub struct Interval<'a> {
    /// Its start and end, seconds since the Unix epoch (UTC).
    pub start_s: f64,
    pub end_s: f64,
    pub max_ns: u64,
    pub p99_ns: u64,
    /// The largest latency of each measured second in time order from `start_s` (0: none).
    pub second_maxima_ns: &'a [u64],
}

/// The plot's data: the intervals in time order, the spans without measurement (from, to;
/// seconds since the epoch) and the limit.
#[derive(Debug, Clone, Default)]
pub struct LongTerm<'a> {
    pub intervals: Vec<Interval<'a>>,
    pub gaps: Vec<(f64, f64)>,
    pub fail_above_ns: Option<u64>,
}

/// The faint dots: each interval's per-second maxima, the largest of every `step` seconds at
/// their middle, in (seconds since the epoch, µs).
pub fn second_dots(lt: &LongTerm) -> Vec<(f64, f64)> {
    let seconds: usize = lt.intervals.iter().map(|i| i.second_maxima_ns.len()).sum();
    let step = seconds.div_ceil(SECOND_DOTS).max(1);
    let mut dots = Vec::new();
    for iv in &lt.intervals {
        for (k, chunk) in iv.second_maxima_ns.chunks(step).enumerate() {
            if let Some(max) = chunk.iter().copied().max().filter(|&v| v > 0) {
                let x = iv.start_s + (k * step) as f64 + chunk.len() as f64 / 2.0;
                dots.push((x, max as f64 / 1e3));
            }
        }
    }
    dots
}

/// The intervals' points of one statistic (at each interval's middle, µs) in runs that no
/// gap separates: a line joins the points of a run, never two across a gap.
pub fn joined_runs(lt: &LongTerm, value_ns: impl Fn(&Interval) -> u64) -> Vec<Vec<(f64, f64)>> {
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut previous_end = f64::MIN;
    for iv in &lt.intervals {
        let gap_between = lt
            .gaps
            .iter()
            .any(|&(from, to)| from >= previous_end - 1.0 && to <= iv.start_s + 1.0);
        if runs.is_empty() || gap_between {
            runs.push(Vec::new());
        }
        previous_end = iv.end_s;
        let v = value_ns(iv);
        if v > 0 {
            let point = ((iv.start_s + iv.end_s) / 2.0, v as f64 / 1e3);
            runs.last_mut().expect("a run").push(point);
        }
    }
    runs
}

/// The x range: the first start to the last end, 2 % of the span either side (at least a
/// minute).
fn x_range(lt: &LongTerm) -> (f64, f64) {
    let lo = lt
        .intervals
        .iter()
        .map(|i| i.start_s)
        .fold(f64::MAX, f64::min);
    let hi = lt
        .intervals
        .iter()
        .map(|i| i.end_s)
        .fold(f64::MIN, f64::max);
    if lo > hi {
        return (0.0, 60.0);
    }
    let pad = ((hi - lo) * 0.02).max(60.0);
    (lo - pad, hi + pad)
}

/// The y range in µs (log axis): every value drawn, the limit among them.
fn y_range(lt: &LongTerm, dots: &[(f64, f64)]) -> (f64, f64) {
    let values = lt
        .intervals
        .iter()
        .flat_map(|i| [i.max_ns, i.p99_ns])
        .chain(lt.fail_above_ns)
        .filter(|&v| v > 0)
        .map(|v| v as f64 / 1e3)
        .chain(dots.iter().map(|d| d.1));
    let (lo, hi) = values.fold((f64::MAX, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
    if hi <= 0.0 {
        return (1.0, 1000.0);
    }
    (nice_floor(lo / 1.5), nice_ceil(hi * 1.5))
}

/// The legend: the two statistics (each with its largest value), the dots, the gaps and the
/// limit when there are any.
fn entries(lt: &LongTerm, dots: bool) -> Vec<Entry> {
    let top = |f: fn(&Interval) -> u64| lt.intervals.iter().map(f).max().unwrap_or(0);
    let mut e = vec![
        Entry {
            swatch: Swatch::Line(0),
            label: format!(
                "max per interval — largest {}",
                crate::units::human_ns(top(|i| i.max_ns))
            ),
        },
        Entry {
            swatch: Swatch::Line(1),
            label: format!(
                "p99 per interval — largest {}",
                crate::units::human_ns(top(|i| i.p99_ns))
            ),
        },
    ];
    if dots {
        e.push(Entry {
            swatch: Swatch::Text,
            label: "grey dots: the largest of each second".into(),
        });
    }
    if !lt.gaps.is_empty() {
        e.push(Entry {
            swatch: Swatch::Text,
            label: match lt.gaps.len() {
                1 => "shaded: no measurement (1 gap)".to_string(),
                n => format!("shaded: no measurement ({n} gaps)"),
            },
        });
    }
    if let Some(limit) = lt.fail_above_ns {
        e.push(Entry {
            swatch: Swatch::Deadline,
            label: format!("fail above {}", crate::units::human_ns(limit)),
        });
    }
    e
}

/// The axes' texts: clock times with each day's date under them for a span under a few
/// days, dates beyond.
fn axes(c: &Canvas, x: (f64, f64), y: (f64, f64)) -> Axes {
    let (_, mut axes) = time_latency_axes(c, "2026-11-28", x, y);
    axes.x_title = "time (UTC)".into();
    axes
}

/// The long-term plot of `lt` (intervals in time order) titled `title`.
pub fn long_term_svg(title: &str, lt: &LongTerm, c: Canvas) -> anyhow::Result<String> {
    let dots = second_dots(lt);
    let (x0, x1) = x_range(lt);
    let (y_lo, y_hi) = y_range(lt, &dots);
    let entries = entries(lt, !dots.is_empty());
    let axes = axes(&c, (x0, x1), (y_lo, y_hi));
    time_latency_svg(
        &c,
        title,
        &entries,
        &axes,
        (x0, x1),
        (y_lo, y_hi),
        |chart| {
            let shade = RGBColor(228, 228, 228).filled();
            chart.draw_series(lt.gaps.iter().map(|&(from, to)| {
                Rectangle::new([(from.max(x0), y_lo), (to.min(x1), y_hi)], shade)
            }))?;
            let faint = RGBColor(175, 175, 175).filled();
            chart.draw_series(dots.iter().map(|&p| Circle::new(p, 2, faint)))?;
            let stats: [fn(&Interval) -> u64; 2] = [|i| i.max_ns, |i| i.p99_ns];
            for (s, value) in stats.into_iter().enumerate() {
                let col = color(s);
                for points in joined_runs(lt, value) {
                    chart.draw_series(LineSeries::new(
                        points.iter().copied(),
                        col.stroke_width(2),
                    ))?;
                    crate::render::plot_marks::draw_markers(chart, s, &points, col, None)?;
                }
            }
            if let Some(limit) = lt.fail_above_ns.filter(|&l| l > 0) {
                let y = limit as f64 / 1e3;
                chart.draw_series(LineSeries::new([(x0, y), (x1, y)], deadline_style()))?;
            }
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-01T00:00:00Z.
    const NOV1: f64 = 20_758.0 * 86_400.0;

    fn day(d: f64, max_ns: u64, seconds: &[u64]) -> Interval<'_> {
        Interval {
            start_s: NOV1 + d * 86_400.0,
            end_s: NOV1 + (d + 1.0) * 86_400.0,
            max_ns,
            p99_ns: max_ns / 4,
            second_maxima_ns: seconds,
        }
    }

    #[test]
    fn a_gap_splits_the_lines_and_a_month_of_seconds_draws_few_dots() {
        let mut month = vec![20_000u64; 86_400];
        month[40_000] = 3_000_000;
        let lt = LongTerm {
            intervals: vec![
                day(0.0, 50_000, &month),
                day(1.0, 3_000_000, &month),
                day(3.0, 60_000, &month),
            ],
            gaps: vec![(NOV1 + 2.0 * 86_400.0, NOV1 + 3.0 * 86_400.0)],
            fail_above_ns: Some(200_000),
        };
        let runs = joined_runs(&lt, |i| i.max_ns);
        assert_eq!(runs.len(), 2, "{runs:?}");
        assert_eq!(
            runs[0],
            [(NOV1 + 43_200.0, 50.0), (NOV1 + 129_600.0, 3000.0)]
        );
        let dots = second_dots(&lt);
        assert!(dots.len() <= SECOND_DOTS + 3, "{}", dots.len());
        assert_eq!(dots.iter().map(|d| d.1).fold(0.0, f64::max), 3000.0);
        let svg = long_term_svg("t", &lt, crate::render::canvas::WIDE).unwrap();
        assert!(svg.contains("fail above 200 µs"), "{svg}");
        assert!(svg.contains("2026-11-0"), "dates on the axis");
        crate::render::svg_check::assert_no_overlap(&svg, "long-term plot");
    }
}
