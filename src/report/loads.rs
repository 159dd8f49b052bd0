//! The loads' table: what each load achieved (throughput in its unit, CPU share from
//! /proc), printed by `latscope load` and under the latency table of a probe run.

use crate::result::{LoadResult, Run};

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

/// A table of load results, grouped by scenario (an empty name hides the column),
/// fitted to `width` (a CPU list the same in every row said once above it).
pub fn loads_table(groups: &[(&str, &[LoadResult])], width: usize) -> String {
    use crate::render::table::{fit_table, Fit};
    let with_scenario = groups.iter().any(|(name, _)| !name.is_empty());
    let mut header = Vec::new();
    if with_scenario {
        header.push("scenario".to_string());
    }
    header.extend(["load", "cpus", "throughput", "unit", "cpu share (%)"].map(String::from));
    let mut rows = Vec::new();
    for (name, results) in groups {
        for r in results.iter() {
            let mut row = Vec::new();
            if with_scenario {
                row.push(name.to_string());
            }
            // The cpus column says where it ran: `cpu:50%,cpus=1` is `cpu:50%` there.
            let cpus = crate::units::format_cpu_list(&r.cpus);
            let mut spec = r
                .spec
                .strip_suffix(&format!(",cpus={cpus}"))
                .unwrap_or(&r.spec)
                .to_string();
            if r.extra.contains_key("error") {
                spec.push_str(" (stopped early)");
            }
            row.push(spec);
            row.push(cpus);
            row.push(if r.unit == "-" {
                "-".into()
            } else {
                throughput_cell(r.throughput)
            });
            row.push(r.unit.clone());
            row.push(format!("{:.1}", r.cpu_percent));
            rows.push(row);
        }
    }
    let first_numeric = if with_scenario { 3 } else { 2 };
    fit_table(Fit::new(header, rows, first_numeric), width)
}

/// The loads of every scenario of a run, or nothing when no scenario had loads. Each
/// load is printed once: the scenario column names what else tells the scenarios apart
/// (`300 µs`), the words every scenario shares (`timer clock-nanosleep`) said in the title.
pub fn run_loads_table(run: &Run, width: usize) -> String {
    let multi = run.scenarios.len() > 1;
    let with_loads: Vec<_> = run
        .scenarios
        .iter()
        .filter(|s| !s.loads.is_empty())
        .collect();
    if with_loads.is_empty() {
        return String::new();
    }
    let names: Vec<String> = with_loads
        .iter()
        .map(|s| match s.name.find(" load=") {
            Some(i) => s.name[..i].to_string(),
            None => s.name.clone(),
        })
        .collect();
    let shared = shared_words(&names);
    let labels: Vec<String> = names
        .iter()
        .map(|n| {
            n.split(' ')
                .skip(shared.len())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    // Scenarios that differ only in their loads need no scenario column.
    let named = multi && labels.iter().any(|l| !l.is_empty());
    let groups: Vec<(&str, &[LoadResult])> = with_loads
        .iter()
        .zip(&labels)
        .map(|(s, l)| (if named { l.as_str() } else { "" }, s.loads.as_slice()))
        .collect();
    let title = if multi && !shared.is_empty() {
        format!("Loads ({})", shared.join(" "))
    } else {
        "Loads".into()
    };
    format!("{title}\n{}", loads_table(&groups, width))
}

/// The leading words every name shares, when every name has a word left after them.
fn shared_words(names: &[String]) -> Vec<&str> {
    let Some(first) = names.first() else {
        return Vec::new();
    };
    let mut shared: Vec<&str> = first.split(' ').collect();
    for n in names {
        let words: Vec<&str> = n.split(' ').collect();
        let same = shared
            .iter()
            .zip(&words)
            .take_while(|(a, b)| a == b)
            .count();
        shared.truncate(same.min(words.len().saturating_sub(1)));
    }
    shared
}
