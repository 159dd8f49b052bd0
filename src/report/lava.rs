//! `--export-lava`: a shell script of LAVA test sets and cases for board farms (run it
//! with `sh` inside a LAVA test, see contrib/lava/latscope.yaml). A test set per scenario
//! (`timer_clock-nanosleep_1ms`), in it a case per CPU × key statistic (`cpu1_max`) with
//! its measurement in µs; a case fails when a `--fail-above` limit on that statistic
//! fails. Names carry no data: the kernel and its preemption model are lines of the log
//! (`echo`), which import/lava_log.rs reads back.

use super::Reporter;
use crate::import::lava_log::{KERNEL_LINE, MODEL_LINE};
use crate::result::limits::{thread_failures, Limit};
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

/// A LAVA test case name: letters, digits, `.`, `_` and `-` only (durations glued to
/// ASCII units: `timer clock-nanosleep 1 ms` is `timer_clock-nanosleep_1ms`, as before
/// names were spaced, so logs of both read back alike).
pub fn lava_name(text: &str) -> String {
    let mut out = String::new();
    for c in crate::units::glued_durations(text).chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

impl Reporter<Run> for LavaReporter {
    fn render(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let mut out = String::from(
            "#!/bin/sh\n# latscope results as LAVA test cases: a test set per scenario, a case per CPU and statistic\n",
        );
        for (line, value) in [
            (KERNEL_LINE, &run.system.kernel_release),
            (MODEL_LINE, &run.system.preemption_model),
        ] {
            let text = format!("{line}{value}");
            let quoted = shlex::try_quote(&text).map_err(|e| anyhow::anyhow!("{e}: {text:?}"))?;
            let _ = writeln!(out, "echo {quoted}");
        }
        let mut stats = DEFAULT_STATS.to_vec();
        for l in &self.limits {
            if !stats.contains(&l.stat) {
                stats.push(l.stat);
            }
        }
        for sc in &run.scenarios {
            let _ = writeln!(out, "lava-test-set start {}", lava_name(&sc.name));
            for th in &sc.threads {
                let failures = thread_failures(sc, th, &self.limits);
                let base = metric_label(&format!("cpu{}", th.cpu), th.metric);
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
            out.push_str("lava-test-set stop\n");
        }
        Ok(out.into_bytes())
    }
}
