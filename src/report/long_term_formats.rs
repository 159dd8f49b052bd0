//! The long-term view (report/long_term.rs) in every format a report of several files
//! writes: the terminal table fitted to the width with the estimate in words under it,
//! Markdown, CSV (a row per interval, ns), JSON (the view), and HTML (the long-term plot,
//! the table and the estimate's plots).

use super::long_term::{IntervalRow, LongTermView};
use crate::output::exports::Format;
use crate::render::escape::esc;
use crate::render::figure::{charts_figure, Chart};
use std::fmt::Write;

/// The title of a CPU's whole-period estimate: its seconds, and the blocks they were merged
/// into when there were too many.
fn whole_title(w: &super::long_term::WholePeriod) -> String {
    let merged = match w.block_s {
        Some(b) => format!(", merged into blocks of {b} s"),
        None => String::new(),
    };
    format!(
        "the whole period, CPU {} ({} seconds{merged})",
        w.cpu, w.seconds
    )
}

/// The formats the view is written in (JUnit and LAVA list one run's scenarios).
pub fn writes(format: Format) -> bool {
    !matches!(format, Format::Junit | Format::Lava)
}

/// The header of the interval table (latencies in µs or ns as the line above says).
fn header() -> Vec<String> {
    [
        "interval start (UTC)",
        "file",
        "samples",
        "p99",
        "max",
        "missed",
    ]
    .map(String::from)
    .to_vec()
}

/// One interval's cells; an interrupted one (a stop inside it) is marked.
fn cells(r: &IntervalRow, in_ns: bool) -> Vec<String> {
    let cell = |ns| crate::units::latency_cell(ns, in_ns);
    let start = r
        .started_at
        .replace('T', " ")
        .trim_end_matches('Z')
        .to_string();
    let start = match r.gaps.len() {
        0 => start,
        1 => format!("{start} (1 gap)"),
        n => format!("{start} ({n} gaps)"),
    };
    vec![
        if r.interrupted {
            format!("{start} (interrupted)")
        } else {
            start
        },
        r.file.clone(),
        r.samples.to_string(),
        cell(r.p99_ns),
        cell(r.max_ns),
        r.missed.to_string(),
    ]
}

fn rows(v: &LongTermView, in_ns: bool) -> Vec<Vec<String>> {
    v.intervals.iter().map(|r| cells(r, in_ns)).collect()
}

fn unit_line(in_ns: bool) -> String {
    format!("latencies in {}", if in_ns { "ns" } else { "µs" })
}

/// The gaps, a line each.
fn gap_lines(v: &LongTermView) -> Vec<String> {
    let text = |s: f64| {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(s.max(0.0) as u64);
        humantime::format_rfc3339_seconds(t).to_string()
    };
    v.gaps
        .iter()
        .map(|g| {
            let long = super::long_term::span_text(g.to - g.from);
            format!(
                "gap: nothing measured from {} to {} ({long})",
                text(g.from),
                text(g.to)
            )
        })
        .collect()
}

/// The terminal rendering: title, coverage, the table fitted to `width` (the file column
/// goes first when it does not fit), the gaps, each CPU's whole-period estimate in words.
pub fn text(v: &LongTermView, in_ns: bool, width: usize) -> String {
    use crate::render::table::{fit_table, wrap, Fit};
    let mut out = String::new();
    let _ = writeln!(out, "{}", wrap(&v.title(), width));
    let _ = writeln!(out, "{}", wrap(&v.coverage_line(), width));
    let fit = Fit {
        optional: &["file", "missed"],
        left_out_hint: "--export-csv has every column",
        above: Some(unit_line(in_ns)),
        ..Fit::new(header(), rows(v, in_ns), 2)
    };
    out.push_str(&fit_table(fit, width));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    for line in gap_lines(v) {
        let _ = writeln!(out, "{}", wrap(&line, width));
    }
    if v.whole_period.is_empty() {
        let hint = "worst case over the whole period: add --worst-case (a fit of every CPU's per-second maxima of all the files)";
        let _ = writeln!(out, "{}", wrap(hint, width));
    }
    let period = (v.period_ns > 0).then_some(v.period_ns);
    for w in &v.whole_period {
        let title = whole_title(w);
        out.push('\n');
        let words = super::worst_case::render_one(&title, &w.worst_case, period, in_ns, width);
        for line in words.lines() {
            let _ = writeln!(out, "{}", wrap(line, width));
        }
    }
    out
}

/// Markdown: the title, coverage and gaps as text, the interval table, the estimates as a
/// code block (their words are the terminal's).
pub fn markdown(v: &LongTermView, in_ns: bool) -> String {
    use crate::render::markdown::{md_cell, md_table};
    let mut out = format!(
        "## {}\n\n{}\n\n",
        md_cell(&v.title()),
        md_cell(&v.coverage_line())
    );
    for line in gap_lines(v) {
        let _ = writeln!(out, "- {}", md_cell(&line));
    }
    let _ = writeln!(out, "\n{}:\n", unit_line(in_ns));
    out.push_str(&md_table(&header(), &rows(v, in_ns), 2));
    let estimates = text_estimates(v, in_ns);
    if !estimates.is_empty() {
        let _ = write!(out, "\n```text\n{estimates}```\n");
    }
    out
}

/// The estimates' words alone, as wide as they come.
fn text_estimates(v: &LongTermView, in_ns: bool) -> String {
    let period = (v.period_ns > 0).then_some(v.period_ns);
    v.whole_period
        .iter()
        .map(|w| {
            let title = whole_title(w);
            super::worst_case::render_one(&title, &w.worst_case, period, in_ns, usize::MAX)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// CSV: a row per interval, times as written, latencies in ns.
pub fn csv(v: &LongTermView) -> anyhow::Result<Vec<u8>> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record([
        "file",
        "started_at",
        "finished_at",
        "samples",
        "p99_ns",
        "max_ns",
        "missed",
        "overruns",
        "interrupted",
    ])?;
    for r in &v.intervals {
        w.write_record([
            r.file.clone(),
            r.started_at.clone(),
            r.finished_at.clone(),
            r.samples.to_string(),
            r.p99_ns.to_string(),
            r.max_ns.to_string(),
            r.missed.to_string(),
            r.overruns.to_string(),
            r.interrupted.to_string(),
        ])?;
    }
    Ok(w.into_inner()?)
}

/// HTML: the long-term plot (both sizes, its numbers in the figure's table), the interval
/// table, the gaps, and each CPU's whole-period estimate with its plots.
pub fn html(v: &LongTermView, in_ns: bool) -> anyhow::Result<String> {
    let title = v.title();
    let mut body = format!(
        "<h1>{}</h1>\n<p>{}</p>\n",
        esc(&title),
        esc(&v.coverage_line())
    );
    let chart = Chart::drawn(&title, |c| v.svg(c))?;
    let caption = "Each interval's max and p99 (log axis) at its middle, the largest latency of each second as grey dots; shaded spans were not measured";
    body.push_str(&charts_figure(
        &[chart],
        caption,
        &gap_lines(v),
        &header(),
        &rows(v, in_ns),
    ));
    let _ = writeln!(body, "<p class=\"note\">{}</p>", esc(&unit_line(in_ns)));
    body.push_str(&crate::render::html::html_table(
        &header(),
        &rows(v, in_ns),
        2,
    ));
    let period = (v.period_ns > 0).then_some(v.period_ns);
    for w in &v.whole_period {
        let t = whole_title(w);
        let _ = writeln!(body, "<h2>Worst case beyond the samples: {}</h2>", esc(&t));
        body.push_str(&super::worst_case_plots::thread_part(
            &t,
            &w.worst_case,
            period,
        )?);
    }
    Ok(crate::render::html::page(&title, &body))
}

/// The view in `format` (None: a format it is not written in).
pub fn bytes(
    v: &LongTermView,
    format: Format,
    in_ns: bool,
    width: usize,
) -> Option<anyhow::Result<Vec<u8>>> {
    Some(match format {
        Format::Table => Ok(text(v, in_ns, width).into_bytes()),
        Format::Markdown => Ok(markdown(v, in_ns).into_bytes()),
        Format::Csv => csv(v),
        Format::Json => serde_json::to_vec_pretty(v)
            .map(|mut b| {
                b.push(b'\n');
                b
            })
            .map_err(Into::into),
        Format::Html => html(v, in_ns).map(String::into_bytes),
        Format::Junit | Format::Lava => return None,
    })
}
