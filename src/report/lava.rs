//! `--export-lava`: `lava-test-case` lines for LAVA board farms (run them with `sh` inside
//! a LAVA test, see contrib/lava/latscope.yaml). One line per scenario × CPU × key
//! statistic, in µs; a line fails when a `--fail-above` limit on that statistic fails.

use super::limits::{thread_failures, Limit};
use super::Reporter;
use crate::result::{metric_label, Run};
use crate::stats::Stat;
use std::fmt::Write;

pub struct LavaReporter {
    pub limits: Vec<Limit>,
}

/// The statistics reported when no limit names others.
const DEFAULT_STATS: [Stat; 6] = [
    Stat::Min,
    Stat::Avg,
    Stat::P99,
    Stat::P999,
    Stat::Max,
    Stat::Overruns,
];

/// A LAVA test case name: letters, digits, `.`, `_` and `-` only.
pub fn lava_name(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

impl Reporter for LavaReporter {
    fn render(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let mut out = String::from("#!/bin/sh\n# latscope results as LAVA test cases\n");
        let mut stats = DEFAULT_STATS.to_vec();
        for l in &self.limits {
            if !stats.contains(&l.stat) {
                stats.push(l.stat);
            }
        }
        for sc in &run.scenarios {
            for th in &sc.threads {
                let failures = thread_failures(sc, th, &self.limits);
                let base = metric_label(&format!("{} cpu{}", sc.name, th.cpu), &th.metric);
                for &stat in &stats {
                    if super::stat_unknown(th, stat) {
                        continue;
                    }
                    let value = th.summary.stat(stat);
                    let failed = failures.iter().any(|f| f.stat == stat);
                    let (measurement, units) = if stat.is_count() {
                        (format!("{value:.0}"), "count")
                    } else {
                        (format!("{:.2}", value / 1e3), "us")
                    };
                    let _ = writeln!(
                        out,
                        "lava-test-case {} --result {} --measurement {measurement} --units {units}",
                        lava_name(&format!("{base} {stat}")),
                        if failed { "fail" } else { "pass" },
                    );
                }
            }
        }
        Ok(out.into_bytes())
    }
}
