//! The study table of a suite: one row per scenario × CPU, labelled by what varies
//! (method, period, load, isolation, policy), with the statistics the study printed.

use super::Reporter;
use crate::result::{Run, Scenario};
use crate::stats::Summary;
use crate::units::{compact_ns, latency_cell};
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};

pub struct StudyTableReporter {
    pub title: String,
    /// Statistic names as `Summary::stat` knows them.
    pub columns: Vec<String>,
    pub in_ns: bool,
}

/// Counts, not times: shown without a unit.
fn is_count(stat: &str) -> bool {
    matches!(stat, "overruns" | "missed" | "samples")
}

fn load_label(sc: &Scenario) -> String {
    if sc.params.loads.is_empty() {
        "none".into()
    } else {
        sc.params.loads.join(" + ")
    }
}

fn cell(summary: &Summary, stat: &str, in_ns: bool) -> String {
    if stat == "samples" {
        return summary.samples.to_string();
    }
    match summary.stat(stat) {
        Some(v) if is_count(stat) => format!("{v:.0}"),
        Some(v) => latency_cell(v.round() as u64, in_ns),
        None => "?".into(),
    }
}

impl StudyTableReporter {
    pub fn table(&self, run: &Run) -> Table {
        let unit = if self.in_ns { "ns" } else { "µs" };
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        let mut header: Vec<String> = ["method", "period", "load", "isolated", "policy", "cpu"]
            .map(String::from)
            .to_vec();
        for c in &self.columns {
            header.push(if is_count(c) {
                c.clone()
            } else {
                format!("{c} ({unit})")
            });
        }
        t.set_header(header);
        for sc in &run.scenarios {
            for th in &sc.threads {
                let mut row = vec![
                    th.method.clone(),
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
                row.extend(
                    self.columns
                        .iter()
                        .map(|c| cell(&th.summary, c, self.in_ns)),
                );
                if sc.interrupted {
                    row[0].push_str(" (interrupted)");
                }
                t.add_row(row);
            }
        }
        for i in 6..t.column_count() {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        t
    }
}

impl Reporter for StudyTableReporter {
    fn render(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let mut out = String::new();
        if !self.title.is_empty() {
            out.push_str(&self.title);
            out.push('\n');
        }
        out.push_str(&self.table(run).to_string());
        out.push('\n');
        if run.interrupted {
            out.push_str("interrupted: the statistics cover what was measured until then; --resume continues\n");
        }
        Ok(out.into_bytes())
    }
}
