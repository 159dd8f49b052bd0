//! The terminal table: the headline (what ran, the worst value), then one row per
//! scenario × thread, latencies in µs with two decimals (or ns), fitted to the terminal.

use super::Reporter;
use crate::render::table::{fit_table, terminal_width, wrap, Fit};
use crate::result::{metric_label, Run};
use crate::stats::Stat;
use crate::units::latency_cell;

pub struct TableReporter {
    pub in_ns: bool,
}

/// The table's header, its rows (one per scenario × thread) and the first numeric
/// column, shared by the terminal table and the Markdown export.
pub fn header_and_rows(run: &Run, in_ns: bool) -> (Vec<String>, Vec<Vec<String>>, usize) {
    let unit = if in_ns { "ns" } else { "µs" };
    let multi = run.scenarios.len() > 1;
    let mut header: Vec<String> = Vec::new();
    if multi {
        header.push("scenario".into());
    }
    header.extend(["cpu", "method", "samples"].map(String::from));
    const STATS: [Stat; 9] = [
        Stat::Min,
        Stat::Avg,
        Stat::P50,
        Stat::P99,
        Stat::P999,
        Stat::Max,
        Stat::Stddev,
        Stat::Overruns,
        Stat::Missed,
    ];
    header.extend(STATS.map(|s| s.header(unit)));
    let mut rows = Vec::new();
    for sc in &run.scenarios {
        for th in &sc.threads {
            let s = &th.summary;
            let mut row: Vec<String> = Vec::new();
            if multi {
                row.push(sc.name.clone());
            }
            let partial = if sc.partial { " (partial)" } else { "" };
            row.extend([
                th.cpu.to_string(),
                metric_label(&th.method, th.metric) + partial,
                s.samples.to_string(),
            ]);
            for stat in STATS {
                row.push(if super::stat_unknown(th, stat) {
                    "–".into()
                } else if stat.is_count() {
                    format!("{}", s.stat(stat) as u64)
                } else {
                    latency_cell(s.stat(stat).round() as u64, in_ns)
                });
            }
            rows.push(row);
        }
    }
    (header, rows, if multi { 3 } else { 2 })
}

/// Columns the terminal leaves out first when the table is wider than the terminal, in
/// that order (the headline keeps the worst value and p99 in view).
const DROP_ORDER: [&str; 6] = ["stddev", "min", "avg", "p50", "overruns", "samples"];

impl TableReporter {
    /// The terminal table fitted to `width` (render::table::fit_table): the method column
    /// gone when every row has the same (the headline names it), units and other constant
    /// labels said once above, and columns of `DROP_ORDER` left out until the table fits
    /// (said below it).
    pub fn fitted(&self, run: &Run, width: usize) -> String {
        let (mut header, mut rows, mut first_numeric) = header_and_rows(run, self.in_ns);
        let unit = if self.in_ns { "ns" } else { "µs" };
        // The headline names the method when every row has the same.
        let method = header.iter().position(|h| h == "method");
        if let (Some(i), Some(first)) = (method, rows.first().cloned()) {
            if rows.iter().all(|r| r[i] == first[i]) && !first[i].contains("(partial)") {
                header.remove(i);
                rows.iter_mut().for_each(|r| {
                    r.remove(i);
                });
                first_numeric -= 1;
            }
        }
        for h in header.iter_mut() {
            *h = h.replace(&format!(" ({unit})"), "");
        }
        let fit = Fit {
            optional: &DROP_ORDER,
            left_out_hint: "--export-csv has all",
            above: Some(format!("latencies in {unit}")),
            ..Fit::new(header, rows, first_numeric)
        };
        fit_table(fit, width)
    }
}

impl Reporter<Run> for TableReporter {
    fn render(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let width = terminal_width();
        // A suite's run is shown as its study table.
        let mut out = match &run.suite {
            Some(suite) => String::from_utf8(
                super::study::StudyTableReporter {
                    title: suite.title.clone(),
                    columns: suite.columns.clone(),
                    study: suite.study,
                    in_ns: self.in_ns,
                }
                .table_text(run, width),
            )?,
            None => self.fitted(run, width),
        };
        out.insert_str(0, &super::headline::lines(run));
        out.push_str(&super::extras::extra_lines(run));
        out.push_str(&super::loads::run_loads_table(run, width));
        out.push_str(&super::trace::trace_lines(run, self.in_ns, width));
        out.push_str(&super::worst_case::render_run(run, self.in_ns, width));
        if run.interrupted {
            out.push_str("interrupted: the statistics cover what was measured until then\n");
        }
        out.push_str(&crate::result::journal::partial_lines(run));
        // Prose (headline, notes, per-probe lines) wrapped; the tables fit already.
        Ok(wrap(&out, width).into_bytes())
    }
}

/// The run's warnings as lines for stderr: `warning:` ones first (SCHED_OTHER before the
/// rest), then the `note:` ones; scenario warnings before the run's within each level.
pub fn warning_lines(run: &Run) -> String {
    use crate::warning::WarningCode;
    let mut lines: Vec<(u8, String)> = Vec::new();
    let rank = |code: &WarningCode| match code {
        WarningCode::SchedOther => 0,
        c if c.is_note() => 2,
        _ => 1,
    };
    let level = |r: u8| if r == 2 { "note" } else { "warning" };
    // A message several scenarios share (a suite's loads on the measured CPUs) is said
    // once, with how many scenarios it concerns.
    let mut shared: Vec<(u8, &str, Vec<&str>)> = Vec::new();
    for sc in &run.scenarios {
        for w in &sc.warnings {
            let r = rank(&w.code);
            match shared
                .iter_mut()
                .find(|(q, m, _)| *q == r && *m == w.message)
            {
                Some((_, _, names)) => names.push(&sc.name),
                None => shared.push((r, &w.message, vec![&sc.name])),
            }
        }
    }
    let total = run.scenarios.len();
    for (r, message, names) in shared {
        let which = match names.as_slice() {
            [one] => one.to_string(),
            _ if names.len() == total => format!("all {total} scenarios"),
            _ => format!("{} of {total} scenarios", names.len()),
        };
        lines.push((r, format!("{} [{which}]: {message}\n", level(r))));
    }
    for w in &run.warnings {
        let r = rank(&w.code);
        lines.push((r, format!("{}: {}\n", level(r), w.message)));
    }
    lines.sort_by_key(|(r, _)| *r);
    lines.into_iter().map(|(_, l)| l).collect()
}
