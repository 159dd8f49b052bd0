//! `--export-lava`: `lava-test-case` lines for LAVA board farms (run them with `sh` inside
//! a LAVA test, see contrib/lava/latscope.yaml). One line per scenario × CPU × key
//! statistic, in µs; a line fails when a `--fail-above` limit on that statistic fails.

use super::limits::{is_count_stat, thread_failures, Limit};
use super::Reporter;
use crate::result::Run;
use std::fmt::Write;

pub struct LavaReporter {
    pub limits: Vec<Limit>,
}

/// The statistics reported when no limit names others.
const DEFAULT_STATS: [&str; 6] = ["min", "avg", "p99", "p99.9", "max", "overruns"];

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
        let mut stats: Vec<String> = DEFAULT_STATS.iter().map(|s| s.to_string()).collect();
        for l in &self.limits {
            let canon = super::canonical_stat(&l.stat).to_string();
            if !stats.contains(&canon) {
                stats.push(canon);
            }
        }
        for sc in &run.scenarios {
            for th in &sc.threads {
                let failures = thread_failures(sc, th, &self.limits);
                let mut base = format!("{} cpu{}", sc.name, th.cpu);
                if th.metric != "latency" {
                    base.push(' ');
                    base.push_str(&th.metric);
                }
                for stat in &stats {
                    if super::stat_unknown(th, stat) {
                        continue;
                    }
                    let Some(value) = th.summary.stat(stat) else {
                        continue;
                    };
                    let failed = failures
                        .iter()
                        .any(|f| super::canonical_stat(&f.stat) == stat);
                    let (measurement, units) = if is_count_stat(stat) {
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
