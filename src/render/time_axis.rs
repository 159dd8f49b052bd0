//! The time axis of the charts over real time (the `--by date` trend, the long-term plot of
//! many interval files): ticks at round clock times or dates (UTC) that fit the width, each
//! day's date written once under clock-time ticks.

use crate::render::axis::{fitting, latency_label, log_ticks};
use crate::render::canvas::Canvas;
use crate::render::frame::{self, Axes};
use crate::render::legend::Entry;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

/// A chart of latency (µs, log axis) over real time (epoch seconds), in SVG.
pub type TimeLatencyChart<'a> =
    ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, LogCoord<f64>>>;

/// Tick steps in seconds, the smallest that gives at most the ticks the axis holds is used.
/// Every step under a day divides a day, so each midnight in range is a tick.
const STEPS_S: [u64; 21] = [
    10, 15, 30, 60, 300, 600, 900, 1_800, 3_600, 7_200, 10_800, 21_600, 43_200, 86_400, 172_800,
    604_800, 1_209_600, 2_419_200, 7_862_400, 15_724_800, 31_449_600,
];
pub const DAY_S: u64 = 86_400;

/// The axes of a latency chart over real time, and their tick step in seconds: ticks that
/// fit `c`'s width for labels as wide as `widest_label`, each day marked under clock-time
/// ticks, latency on a log axis from `y_lo` to `y_hi`. The caller names x (`x_title`).
pub fn time_latency_axes(
    c: &Canvas,
    widest_label: &str,
    (x0, x1): (f64, f64),
    (y_lo, y_hi): (f64, f64),
) -> (u64, Axes) {
    let label_w = c.text_width(widest_label, c.font);
    let (step, ticks) = ticks_within(x0, x1, fitting(f64::from(c.width) - 120.0, label_w) as f64);
    let axes = Axes {
        x_ticks: ticks
            .iter()
            .map(|&t| (t as f64, vec![tick_label(step, t)]))
            .collect(),
        x_groups: if step < DAY_S {
            day_marks(x0, x1)
        } else {
            Vec::new()
        },
        y_ticks: log_ticks(y_lo, y_hi, 6)
            .into_iter()
            .map(|v| (v, latency_label(v)))
            .collect(),
        x_title: String::new(),
        y_title: "latency (log axis)".into(),
        x_centred: false,
    };
    (step, axes)
}

/// The SVG of a latency-over-time chart: `title` and the legend `entries` above, `axes`
/// (from `time_latency_axes`) drawn around a plot of `x` (epoch s) by `y` (µs, log), then
/// `draw` puts the series on the chart.
pub fn time_latency_svg(
    c: &Canvas,
    title: &str,
    entries: &[Entry],
    axes: &Axes,
    (x0, x1): (f64, f64),
    (y_lo, y_hi): (f64, f64),
    draw: impl for<'a> FnOnce(&mut TimeLatencyChart<'a>) -> anyhow::Result<()>,
) -> anyhow::Result<String> {
    let head = frame::head_height(c, title, entries);
    let r = frame::plot_rect(c, (0.0, f64::from(c.height)), head, axes, 0.0);
    frame::svg(c, |root, layer| {
        frame::draw_head(layer, c, 0.0, title, entries);
        let area = frame::area(root, c, r);
        let mut chart =
            ChartBuilder::on(&area).build_cartesian_2d(x0..x1, (y_lo..y_hi).log_scale())?;
        let px = |x: f64| f64::from(chart.backend_coord(&(x, y_lo)).0);
        let py = |y: f64| f64::from(chart.backend_coord(&(x0, y)).1);
        frame::draw_axes(layer, c, r, axes, &px, &py);
        draw(&mut chart)
    })
}

/// `2026-11-23T21:15:00Z` of `epoch_s` (UTC).
fn rfc3339(epoch_s: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(epoch_s);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// The date (`2026-11-23`) of `epoch_s`.
pub fn date_text(epoch_s: u64) -> String {
    rfc3339(epoch_s)[..10].to_string()
}

/// The x axis of a trend over `[x0, x1]` seconds with at most `max_ticks` ticks: the step
/// and the ticks (multiples of it).
pub fn ticks_within(x0: f64, x1: f64, max_ticks: f64) -> (u64, Vec<u64>) {
    let span = (x1 - x0).max(1.0);
    let step = STEPS_S
        .into_iter()
        .find(|&s| span / s as f64 <= max_ticks)
        .unwrap_or(STEPS_S[STEPS_S.len() - 1]);
    let first = (x0.max(0.0) as u64).div_ceil(step) * step;
    let ticks = (0..)
        .map(|k| first + k * step)
        .take_while(|&t| t as f64 <= x1)
        .collect();
    (step, ticks)
}

/// A tick's label: the clock time (with seconds for steps under a minute) for steps under a
/// day, the date otherwise.
pub fn tick_label(step: u64, tick: u64) -> String {
    let text = rfc3339(tick);
    match step {
        s if s < 60 => text[11..19].to_string(),
        s if s < DAY_S => text[11..16].to_string(),
        _ => date_text(tick),
    }
}

/// Each day in `[x0, x1]` (steps under a day): the part of the range it covers and its date,
/// written once under the ticks.
pub fn day_marks(x0: f64, x1: f64) -> Vec<(f64, f64, String)> {
    let (d0, d1) = (x0.max(0.0) as u64 / DAY_S, x1.max(0.0) as u64 / DAY_S);
    (d0..=d1)
        .map(|d| {
            let from = (d * DAY_S) as f64;
            (
                from.max(x0),
                (from + DAY_S as f64).min(x1),
                date_text(d * DAY_S),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: f64 = 86_400.0;
    /// 2026-11-23T00:00:00Z.
    const NOV23: f64 = 20_780.0 * DAY;

    #[test]
    fn one_evening_is_ticked_by_clock_time_and_dated_once() {
        let (x0, x1) = (NOV23 + 20.5 * 3600.0, NOV23 + 23.0 * 3600.0);
        let (step, t) = ticks_within(x0, x1, 8.0);
        assert_eq!(step, 1_800);
        let labels: Vec<String> = t.iter().map(|&t| tick_label(step, t)).collect();
        assert_eq!(
            labels,
            ["20:30", "21:00", "21:30", "22:00", "22:30", "23:00"]
        );
        let marks = day_marks(x0, x1);
        assert_eq!(marks.len(), 1);
        assert_eq!(marks[0].2, "2026-11-23");
    }

    #[test]
    fn two_days_get_each_date_once_under_their_part_of_the_axis() {
        let (x0, x1) = (NOV23 + 7.5 * 3600.0, NOV23 + DAY + 10.0 * 3600.0);
        let (step, t) = ticks_within(x0, x1, 8.0);
        assert_eq!(step, 21_600);
        assert_eq!(t.len(), 4, "12:00, 18:00, 00:00, 06:00");
        let marks = day_marks(x0, x1);
        let dates: Vec<&str> = marks.iter().map(|m| m.2.as_str()).collect();
        assert_eq!(dates, ["2026-11-23", "2026-11-24"]);
        assert_eq!(marks[1].0, NOV23 + DAY, "the 24th starts at its midnight");
        assert_eq!(
            (marks[0].0, marks[1].1),
            (x0, x1),
            "each day's part of the range"
        );
    }

    #[test]
    fn weeks_are_ticked_by_date() {
        let (step, t) = ticks_within(NOV23, NOV23 + 60.0 * DAY, 8.0);
        assert!(step >= 7 * DAY_S, "{step}");
        assert!(t.len() <= 8);
        assert_eq!(tick_label(step, t[0]).len(), "2026-11-23".len());
    }
}
