//! The many-results view of a comparison (`compare|report A B C ... --by AXIS`, or more
//! than two files): one table with a column per machine, kernel, date or file, and in
//! HTML one chart per scenario across them — grouped bars, or for `--by date` a trend
//! chart of max and p99 over time (after OSADL's latency plots).

use crate::compare::multi::{started_epoch_s, Axis};
use crate::compare::view::trend::trend_svg;
use crate::compare::view::verdicts::verdict_lines;
use crate::compare::{Aligned, Comparison};
use crate::render::figure::Chart;
use crate::result::stat_unknown;
use crate::stats::Stat;
use std::fmt::Write;

/// The statistics of the many-results table (OSADL's min/avg/max, and p99).
pub const MULTI_STATS: [Stat; 4] = [Stat::Min, Stat::Avg, Stat::P99, Stat::Max];

/// The statistics the charts draw, one line or bar each.
const CHART_STATS: [Stat; 2] = [Stat::P99, Stat::Max];

fn axis_of(cmp: &Comparison) -> Axis {
    cmp.axis.unwrap_or(Axis::File)
}

fn value(a: &Aligned, r: usize, stat: Stat) -> Option<f64> {
    let (_, th) = a.entries[r]?;
    (!stat_unknown(th, stat)).then(|| th.summary.stat(stat))
}

fn cell(stat: Stat, v: Option<f64>, in_ns: bool) -> String {
    match v {
        None => "–".into(),
        Some(v) if stat.is_count() => format!("{v:.0}"),
        Some(v) => crate::units::latency_cell(v.round() as u64, in_ns),
    }
}

/// One line per column: what it is (`board-a ← a.json: board-a, 6.12.0-rt5 PREEMPT_RT,
/// 2026-03-01T08:00:00Z`).
pub fn column_lines(cmp: &Comparison) -> Vec<String> {
    cmp.runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let file = cmp.files.get(i).map_or("", String::as_str);
            format!(
                "{} \u{2190} {file}: {}, {} {}, {}",
                cmp.labels[i],
                run.system.hostname,
                run.system.kernel_release,
                run.system.preemption_model,
                run.started_at
            )
        })
        .collect()
}

/// The table: a row per aligned scenario × CPU × statistic, a column per run.
pub fn header_and_rows(cmp: &Comparison, in_ns: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let unit = if in_ns { "ns" } else { "µs" };
    let mut header = vec!["scenario".to_string(), format!("statistic ({unit})")];
    header.extend(cmp.labels.iter().cloned());
    let mut rows = Vec::new();
    for row in crate::compare::view::verdicts::printed_rows(cmp) {
        let a = &cmp.aligned[row];
        for (i, stat) in MULTI_STATS.into_iter().enumerate() {
            let mut row = vec![
                if i == 0 { a.key.label() } else { String::new() },
                stat.to_string(),
            ];
            row.extend((0..cmp.runs.len()).map(|r| cell(stat, value(a, r, stat), in_ns)));
            rows.push(row);
        }
    }
    (header, rows)
}

fn intro(cmp: &Comparison) -> String {
    format!(
        "{} results by {} (the first is the baseline of the verdicts)",
        cmp.runs.len(),
        axis_of(cmp).name()
    )
}

/// The terminal rendering, answers first: the verdicts against the first result, then
/// the columns and the table (a wide one split into column groups), fitted to the width.
pub fn terminal_text(cmp: &Comparison, in_ns: bool) -> String {
    use crate::output::terminal::escape_controls;
    use crate::render::table::{fit_table, terminal_width, wrap, Fit};
    let width = terminal_width();
    let mut verdicts = String::new();
    for (v, line) in verdict_lines(cmp) {
        // Names read from files escaped (issue 34, item 9); the verdicts' own colours kept.
        let line = wrap(&escape_controls(&line), width);
        verdicts.push_str(&crate::compare::view::basis::paint(v, &line));
        verdicts.push('\n');
    }
    let mut out = String::new();
    let mut intro_lines = format!("\n{}\n", intro(cmp));
    for line in column_lines(cmp) {
        let _ = writeln!(intro_lines, "  {line}");
    }
    out.push_str(&wrap(&intro_lines, width));
    let unit = if in_ns { "ns" } else { "µs" };
    let _ = writeln!(out, "\nlatencies in {unit}");
    let (header, rows) = header_and_rows(cmp, in_ns);
    // One table per scenario, its label above it (a label column would take half the
    // width); the columns split into groups when the runs do not fit beside each other.
    let header: Vec<String> = header[1..]
        .iter()
        .map(|h| h.replace(&format!(" ({unit})"), ""))
        .collect();
    for group in rows.chunks(MULTI_STATS.len()) {
        let label = group.first().map_or(String::new(), |r| r[0].clone());
        let rows = group.iter().map(|r| r[1..].to_vec()).collect();
        out.push_str(&wrap(&format!("\n{label}\n"), width));
        out.push_str(&fit_table(Fit::new(header.clone(), rows, 1), width));
    }
    format!("{verdicts}{}", escape_controls(&out))
}

/// Markdown: the same.
pub fn markdown_text(cmp: &Comparison, in_ns: bool) -> String {
    use crate::render::markdown::{md_cell, md_table};
    let mut out = format!("## latscope: {}\n\n", md_cell(&intro(cmp)));
    for line in column_lines(cmp) {
        let _ = writeln!(out, "- {}", md_cell(&line));
    }
    let (header, rows) = header_and_rows(cmp, in_ns);
    out.push('\n');
    out.push_str(&md_table(&header, &rows, 2));
    out.push_str("\n### Verdicts\n\n");
    for (_, line) in verdict_lines(cmp) {
        let _ = writeln!(out, "- {}", md_cell(&line));
    }
    out
}

/// HTML: the columns, the table and one chart per aligned scenario × CPU (a trend over
/// time for `--by date`, grouped bars otherwise).
pub fn html_section(cmp: &Comparison, in_ns: bool) -> anyhow::Result<String> {
    use crate::render::escape::esc;
    let axis = axis_of(cmp);
    let mut out = format!("<section>\n<h2>{}</h2>\n<ul>\n", esc(&intro(cmp)));
    for line in column_lines(cmp) {
        let _ = writeln!(out, "<li>{}</li>", esc(&line));
    }
    out.push_str("</ul>\n");
    let (header, rows) = header_and_rows(cmp, in_ns);
    out.push_str(&crate::compare::view::change::html_table(&header, &rows));
    let starts: Option<Vec<f64>> = cmp.runs.iter().map(started_epoch_s).collect();
    for a in &cmp.aligned {
        let series: Vec<(String, Vec<Option<f64>>)> = CHART_STATS
            .iter()
            .map(|&s| {
                let values = (0..cmp.runs.len())
                    .map(|r| value(a, r, s).map(|v| v / 1e3))
                    .collect();
                (s.to_string(), values)
            })
            .collect();
        let title = a.key.label();
        let (chart, caption) = match (&starts, axis) {
            (Some(starts), Axis::Date) => (
                Chart::drawn(&title, |c| trend_svg(&title, starts, &series, c))?,
                "max and p99 over time (one point per run, OSADL style)",
            ),
            _ => (
                crate::render::category::chart(&crate::render::category::Categories {
                    style: crate::render::category::Style::Bars,
                    title: &title,
                    x_desc: axis.name(),
                    y_desc: "latency",
                    categories: &cmp.labels,
                    series: &series,
                    latency: true,
                })?,
                "p99 and max per column",
            ),
        };
        let caption = format!("{}: {caption}.", a.key.label());
        out.push_str(&crate::render::figure::charts_figure(
            &[chart],
            &caption,
            &[],
            &[],
            &[],
        ));
    }
    out.push_str("</section>\n");
    Ok(out)
}
