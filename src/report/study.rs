//! The study table of a suite: one row per scenario × CPU, labelled by what varies
//! (method, period, load, isolation, policy), with the statistics the study printed.

use crate::result::{metric_label, Run, Scenario};
use crate::stats::{Stat, Summary};
use crate::units::{compact_ns, latency_cell};
use comfy_table::Table;

/// The study shapes a suite's `study` key can name.
pub const STUDIES: [&str; 3] = ["wake-competitors", "rt-cost", "irq-response"];

pub struct StudyTableReporter {
    pub title: String,
    /// Statistic names as `Stat::parse` knows them.
    pub columns: Vec<String>,
    pub in_ns: bool,
}

fn load_label(sc: &Scenario) -> String {
    if sc.params.loads.is_empty() {
        "none".into()
    } else {
        sc.params.loads.join(" + ")
    }
}

fn cell(summary: &Summary, column: &str, in_ns: bool) -> String {
    match Stat::parse(column) {
        Some(Stat::Samples) => summary.samples.to_string(),
        Some(stat) if stat.is_count() => format!("{:.0}", summary.stat(stat)),
        Some(stat) => latency_cell(summary.stat(stat).round() as u64, in_ns),
        None => "?".into(),
    }
}

/// The study table's header, rows and first numeric column (shared by the terminal
/// table and the HTML report).
pub fn header_and_rows(
    run: &Run,
    columns: &[String],
    in_ns: bool,
) -> (Vec<String>, Vec<Vec<String>>, usize) {
    let unit = if in_ns { "ns" } else { "µs" };
    let mut header: Vec<String> = ["method", "period", "load", "isolated", "policy", "cpu"]
        .map(String::from)
        .to_vec();
    for c in columns {
        header.push(match Stat::parse(c) {
            Some(stat) if stat.is_count() => c.clone(),
            _ => format!("{c} ({unit})"),
        });
    }
    let mut rows = Vec::new();
    for sc in &run.scenarios {
        for th in &sc.threads {
            let mut method = metric_label(&th.method, &th.metric);
            if sc.interrupted {
                method.push_str(" (interrupted)");
            }
            let mut row = vec![
                method,
                compact_ns(sc.params.period_ns),
                load_label(sc),
                if sc.params.isolate.is_empty() {
                    "no"
                } else {
                    "yes"
                }
                .to_string(),
                format!("{} {}", sc.params.policy, sc.params.priority),
                th.cpu.to_string(),
            ];
            row.extend(columns.iter().map(|c| cell(&th.summary, c, in_ns)));
            rows.push(row);
        }
    }
    (header, rows, 6)
}

impl StudyTableReporter {
    pub fn table(&self, run: &Run) -> Table {
        let (header, rows, first_numeric) = header_and_rows(run, &self.columns, self.in_ns);
        super::terminal_table::condensed_table(header, rows, first_numeric)
    }
}

impl StudyTableReporter {
    /// The title and the table, without the interruption note.
    pub fn table_text(&self, run: &Run) -> Vec<u8> {
        let mut out = String::new();
        if !self.title.is_empty() {
            out.push_str(&self.title);
            out.push('\n');
        }
        out.push_str(&self.table(run).to_string());
        out.push('\n');
        out.into_bytes()
    }
}
