//! The terminal table: one row per scenario × thread, latencies in µs with two decimals
//! (or ns), followed by the run's warnings.

use super::terminal_table::condensed_table;
use super::Reporter;
use crate::result::{metric_label, Run};
use crate::stats::Stat;
use crate::units::latency_cell;
use comfy_table::Table;

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

impl TableReporter {
    pub fn table(&self, run: &Run) -> Table {
        let (header, rows, first_numeric) = header_and_rows(run, self.in_ns);
        condensed_table(header, rows, first_numeric)
    }
}

impl Reporter for TableReporter {
    fn render(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        // A suite's run is shown as its study table.
        let mut out = match &run.suite {
            Some(suite) => String::from_utf8(
                super::study::StudyTableReporter {
                    title: suite.title.clone(),
                    columns: suite.columns.clone(),
                    study: suite.study.clone(),
                    in_ns: self.in_ns,
                }
                .table_text(run),
            )?,
            None => self.table(run).to_string() + "\n",
        };
        out.push_str(&super::extras::extra_lines(run));
        out.push_str(&super::loads::run_loads_table(run));
        out.push_str(&super::trace::trace_lines(run, self.in_ns));
        out.push_str(&super::worst_case::render_run(run, self.in_ns));
        if run.interrupted {
            out.push_str("interrupted: the statistics cover what was measured until then\n");
        }
        out.push_str(&crate::result::journal::partial_lines(run));
        Ok(out.into_bytes())
    }
}

/// The run's warnings as lines for stderr, scenario warnings first.
pub fn warning_lines(run: &Run) -> String {
    let mut out = String::new();
    for sc in &run.scenarios {
        for w in &sc.warnings {
            out.push_str(&format!("warning [{}]: {}\n", sc.name, w.message));
        }
    }
    for w in &run.warnings {
        out.push_str(&format!("warning: {}\n", w.message));
    }
    out
}
