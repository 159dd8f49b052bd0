//! The loads' table: what each load achieved (throughput in its unit, CPU share from
//! /proc), printed by `latscope load` and under the latency table of a probe run.

use crate::result::{LoadResult, Run};
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};

/// Formats a throughput with three significant digits or more.
fn throughput_cell(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A table of load results, grouped by scenario (an empty name hides the column).
pub fn loads_table(groups: &[(&str, &[LoadResult])]) -> String {
    let with_scenario = groups.iter().any(|(name, _)| !name.is_empty());
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    let mut header = Vec::new();
    if with_scenario {
        header.push("scenario");
    }
    header.extend(["load", "cpus", "throughput", "unit", "cpu share (%)"]);
    t.set_header(header);
    for (name, results) in groups {
        for r in results.iter() {
            let mut row = Vec::new();
            if with_scenario {
                row.push(name.to_string());
            }
            let mut spec = r.spec.clone();
            if r.extra.contains_key("error") {
                spec.push_str(" (stopped early)");
            }
            row.push(spec);
            row.push(crate::units::format_cpu_list(&r.cpus));
            row.push(if r.unit == "-" {
                "-".into()
            } else {
                throughput_cell(r.throughput)
            });
            row.push(r.unit.clone());
            row.push(format!("{:.1}", r.cpu_percent));
            t.add_row(row);
        }
    }
    let first_numeric = if with_scenario { 3 } else { 2 };
    for i in [first_numeric, first_numeric + 2] {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = t.to_string();
    out.push('\n');
    out
}

/// The loads of every scenario of a run, or nothing when no scenario had loads.
pub fn run_loads_table(run: &Run) -> String {
    let multi = run.scenarios.len() > 1;
    let groups: Vec<(&str, &[LoadResult])> = run
        .scenarios
        .iter()
        .filter(|s| !s.loads.is_empty())
        .map(|s| (if multi { s.name.as_str() } else { "" }, s.loads.as_slice()))
        .collect();
    if groups.is_empty() {
        return String::new();
    }
    format!("Loads\n{}", loads_table(&groups))
}
