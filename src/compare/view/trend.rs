//! The `--by date` trend chart: max and p99 of each run at the real time it started (UTC),
//! on a time axis whose ticks read as clock times (`21:00`) with each day's date written
//! once under them, or as dates when the runs span weeks (after OSADL's latency plots).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Tick steps in seconds, the smallest that gives at most `MAX_TICKS` ticks is used. Every
/// step under a day divides a day, so each midnight in range is a tick.
const STEPS_S: [u64; 18] = [
    60, 300, 600, 900, 1_800, 3_600, 7_200, 10_800, 21_600, 43_200, 86_400, 172_800, 604_800,
    1_209_600, 2_419_200, 7_862_400, 15_724_800, 31_449_600,
];
const MAX_TICKS: f64 = 8.0;
const DAY_S: u64 = 86_400;

/// `2026-11-23T21:15:00Z` of `epoch_s` (UTC).
fn rfc3339(epoch_s: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(epoch_s);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// The date (`2026-11-23`) of `epoch_s`.
pub fn date_text(epoch_s: u64) -> String {
    rfc3339(epoch_s)[..10].to_string()
}

/// The clock time (`21:15`) of `epoch_s`.
fn clock_text(epoch_s: u64) -> String {
    rfc3339(epoch_s)[11..16].to_string()
}

/// The x axis of a trend over `[x0, x1]` seconds: the step and the ticks (multiples of it).
pub fn ticks(x0: f64, x1: f64) -> (u64, Vec<u64>) {
    let span = (x1 - x0).max(1.0);
    let step = STEPS_S
        .into_iter()
        .find(|&s| span / s as f64 <= MAX_TICKS)
        .unwrap_or(STEPS_S[STEPS_S.len() - 1]);
    let first = (x0.max(0.0) as u64).div_ceil(step) * step;
    let ticks = (0..)
        .map(|k| first + k * step)
        .take_while(|&t| t as f64 <= x1)
        .collect();
    (step, ticks)
}

/// A tick's label: the clock time for steps under a day, the date otherwise.
pub fn tick_label(step: u64, tick: u64) -> String {
    if step < DAY_S {
        clock_text(tick)
    } else {
        date_text(tick)
    }
}

/// Where each day in `[x0, x1]` gets its date written once (steps under a day): at its first
/// tick, or at `x0` for a day that starts before the range and has no tick in it.
pub fn day_marks(x0: f64, x1: f64, ticks: &[u64]) -> Vec<(f64, String)> {
    let mut marks: Vec<(f64, String)> = Vec::new();
    let first_day = x0.max(0.0) as u64 / DAY_S;
    if ticks.first().is_none_or(|&t| t / DAY_S != first_day) {
        marks.push((x0, date_text(first_day * DAY_S)));
    }
    for &t in ticks {
        let date = date_text(t);
        if marks.last().is_none_or(|m| m.1 != date) && t as f64 <= x1 {
            marks.push((t as f64, date));
        }
    }
    marks
}

/// The range of the x axis: the runs' starts with a margin (at least 30 minutes).
fn x_range(starts_s: &[f64]) -> (f64, f64) {
    let (lo, hi) = starts_s
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), &d| (l.min(d), h.max(d)));
    let pad = ((hi - lo) * 0.06).max(1_800.0);
    (lo - pad, hi + pad)
}

/// A trend chart: x = the runs' starts (seconds since the epoch, UTC), one line with
/// markers per series (µs values; None: no point).
pub fn trend_svg(
    title: &str,
    starts_s: &[f64],
    series: &[(String, Vec<Option<f64>>)],
) -> anyhow::Result<String> {
    let (x0, x1) = x_range(starts_s);
    let (step, tick_list) = ticks(x0, x1);
    let y_max = series
        .iter()
        .flat_map(|s| s.1.iter().flatten().copied())
        .fold(1.0f64, f64::max)
        * 1.15;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 400)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(64)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, 0f64..y_max)?;
        chart
            .configure_mesh()
            .x_labels(0)
            .x_desc(if step < DAY_S {
                "start of the run (UTC)"
            } else {
                "start of the run (UTC date)"
            })
            .y_desc("latency (µs)")
            .y_label_formatter(&|v| format!("{v:.1}"))
            .draw()?;
        draw_time_axis(&root, &chart, (x0, x1), step, &tick_list)?;
        for (i, (label, values)) in series.iter().enumerate() {
            let mut points: Vec<(f64, f64)> = starts_s
                .iter()
                .zip(values)
                .filter_map(|(&d, v)| v.map(|v| (d, v)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            crate::render::plots::draw_line_with_dots(&mut chart, &points, label, i)?;
        }
        crate::render::plots::draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        root.present()?;
    }
    Ok(crate::render::plots::finish_svg(&svg))
}

type Chart<'a> = ChartContext<
    'a,
    SVGBackend<'a>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The ticks, their grid lines and labels, and (steps under a day) each day's date once
/// on a second row.
fn draw_time_axis<'a>(
    root: &DrawingArea<SVGBackend<'a>, plotters::coord::Shift>,
    chart: &Chart<'a>,
    (x0, x1): (f64, f64),
    step: u64,
    tick_list: &[u64],
) -> anyhow::Result<()> {
    let (_, y_top) = chart.plotting_area().get_pixel_range();
    let (y_plot_top, y_axis) = (y_top.start, y_top.end);
    let grid = BLACK.mix(0.1).stroke_width(1);
    let font = |h| {
        ("sans-serif", 13)
            .into_font()
            .into_text_style(root)
            .pos(Pos::new(h, VPos::Top))
    };
    for &t in tick_list {
        let (px, _) = chart.backend_coord(&(t as f64, 0.0));
        root.draw(&PathElement::new(
            vec![(px, y_plot_top), (px, y_axis)],
            grid,
        ))?;
        root.draw(&PathElement::new(
            vec![(px, y_axis), (px, y_axis + 6)],
            BLACK.stroke_width(1),
        ))?;
        root.draw_text(&tick_label(step, t), &font(HPos::Center), (px, y_axis + 8))?;
    }
    if step < DAY_S {
        for (x, date) in day_marks(x0, x1, tick_list) {
            let (px, _) = chart.backend_coord(&(x, 0.0));
            let h = if x <= x0 { HPos::Left } else { HPos::Center };
            root.draw_text(&date, &font(h), (px, y_axis + 28))?;
        }
    }
    Ok(())
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
        let (step, t) = ticks(x0, x1);
        assert_eq!(step, 1_800);
        let labels: Vec<String> = t.iter().map(|&t| tick_label(step, t)).collect();
        assert_eq!(
            labels,
            ["20:30", "21:00", "21:30", "22:00", "22:30", "23:00"]
        );
        let marks = day_marks(x0, x1, &t);
        assert_eq!(marks.len(), 1);
        assert_eq!(marks[0].1, "2026-11-23");
    }

    #[test]
    fn two_days_get_each_date_once_at_their_first_tick() {
        let (x0, x1) = (NOV23 + 7.5 * 3600.0, NOV23 + DAY + 10.0 * 3600.0);
        let (step, t) = ticks(x0, x1);
        assert_eq!(step, 21_600);
        let marks = day_marks(x0, x1, &t);
        let dates: Vec<&str> = marks.iter().map(|m| m.1.as_str()).collect();
        assert_eq!(dates, ["2026-11-23", "2026-11-24"]);
        assert_eq!(
            marks[1].0,
            NOV23 + DAY,
            "the 24th is written at its midnight"
        );
        // A range that starts after the day's last tick still names that day, at its left.
        let marks = day_marks(
            NOV23 + 23.5 * 3600.0,
            NOV23 + DAY + 3600.0,
            &[(NOV23 + DAY) as u64],
        );
        assert_eq!(marks[0], (NOV23 + 23.5 * 3600.0, "2026-11-23".to_string()));
        assert_eq!(marks.len(), 2);
    }

    #[test]
    fn weeks_are_ticked_by_date() {
        let (step, t) = ticks(NOV23, NOV23 + 60.0 * DAY);
        assert!(step >= 7 * DAY_S, "{step}");
        assert!(t.len() <= MAX_TICKS as usize);
        assert_eq!(tick_label(step, t[0]).len(), "2026-11-23".len());
    }
}
