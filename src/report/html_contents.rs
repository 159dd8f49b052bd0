//! The HTML page's table of contents for runs of several scenarios (a suite's page is
//! long): one summary row per scenario, its name linked to its section
//! (`#scenario-N`), with the worst CPU's max, p99.9 and missed periods, so the row to
//! read next is found before scrolling.

use crate::render::escape::esc;
use crate::result::{Run, Scenario};
use crate::stats::Stat;
use std::fmt::Write;

/// The contents, or nothing for a run of one scenario.
pub fn contents(run: &Run) -> String {
    if run.scenarios.len() < 2 {
        return String::new();
    }
    let mut out = String::from(
        "<nav aria-label=\"Contents\">\n<h2>Contents</h2>\n<table class=\"contents\">\n\
<tr><th>scenario</th><th>max (µs)</th><th>p99.9 (µs)</th><th>missed</th></tr>\n",
    );
    for (index, sc) in run.scenarios.iter().enumerate() {
        let cell = |stat: Stat, scale: f64, digits: usize| match worst(sc, stat) {
            Some(v) => format!("{:.digits$}", v / scale),
            None => "–".to_string(),
        };
        let _ = writeln!(
            out,
            "<tr><td><a href=\"#scenario-{index}\">{}</a></td><td class=\"num\">{}</td>\
<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(&sc.name),
            cell(Stat::Max, 1e3, 2),
            cell(Stat::P999, 1e3, 2),
            cell(Stat::Missed, 1.0, 0),
        );
    }
    out.push_str("</table>\n</nav>\n");
    out
}

/// The largest value of `stat` over the scenario's threads of its first metric.
fn worst(sc: &Scenario, stat: Stat) -> Option<f64> {
    let metric = &sc.threads.first()?.metric;
    sc.threads
        .iter()
        .filter(|t| &t.metric == metric && !super::stat_unknown(t, stat))
        .map(|t| t.summary.stat(stat))
        .reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_linked_row_per_scenario_and_none_for_one_scenario() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/run.json"
        ))
        .unwrap();
        let mut run: Run = serde_json::from_str(&text).unwrap();
        let html = contents(&run);
        for i in 0..run.scenarios.len() {
            assert!(html.contains(&format!("href=\"#scenario-{i}\"")), "{html}");
        }
        assert_eq!(html.matches("<tr><td><a ").count(), run.scenarios.len());
        run.scenarios.truncate(1);
        assert!(contents(&run).is_empty());
    }
}
