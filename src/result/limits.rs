//! `--fail-above p99=50us,max=100us`: limits on statistics, checked against every
//! scenario × thread of a run, and the one-line verdicts CI logs show when one fails.

use crate::result::{metric_label, Run, Scenario, ThreadResult};
use crate::stats::Stat;

/// One `STAT=VALUE` limit: the statistic must not exceed `limit`.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    pub stat: Stat,
    /// ns for latency statistics, a plain count for `overruns`/`missed`.
    pub limit: f64,
}

/// A limit that a thread's statistic exceeded.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitFailure {
    pub scenario: String,
    pub cpu: usize,
    pub metric: crate::result::Metric,
    pub stat: Stat,
    pub value: f64,
    pub limit: f64,
    /// Where the run came from, when several are judged at once (compare).
    pub source: Option<String>,
}

/// Parses `p99=50us,max=100us,overruns=0`. Latency limits need a unit (ns, us, ms, s).
pub fn parse_limits(text: &str) -> Result<Vec<Limit>, String> {
    let mut limits = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (stat, value) = part
            .split_once('=')
            .ok_or_else(|| format!("'{part}' is not STAT=VALUE; write e.g. p99=50us,max=100us"))?;
        let stat = Stat::parse_judged(stat.trim())?;
        let value = value.trim();
        let limit = if stat.is_count() {
            value
                .parse::<u64>()
                .map_err(|_| format!("'{value}' for {stat} is not a count; write e.g. {stat}=0"))?
                as f64
        } else {
            if value.chars().all(|c| c.is_ascii_digit() || c == '.') {
                return Err(format!(
                    "'{value}' for {stat} has no unit; write e.g. {stat}={value}us"
                ));
            }
            crate::units::parse_duration_ns(value, "us")? as f64
        };
        limits.push(Limit { stat, limit });
    }
    if limits.is_empty() {
        return Err("no limit given; write e.g. p99=50us,max=100us".into());
    }
    Ok(limits)
}

/// The limits that one thread of one scenario exceeds.
pub fn thread_failures(sc: &Scenario, th: &ThreadResult, limits: &[Limit]) -> Vec<LimitFailure> {
    limits
        .iter()
        .filter_map(|l| {
            let value = th.summary.stat(l.stat);
            if crate::result::stat_unknown(th, l.stat) || value <= l.limit {
                return None;
            }
            Some(LimitFailure {
                scenario: sc.name.clone(),
                cpu: th.cpu,
                metric: th.metric,
                stat: l.stat,
                value,
                limit: l.limit,
                source: None,
            })
        })
        .collect()
}

/// Every limit failure in a run, in scenario and thread order.
pub fn check_run(run: &Run, limits: &[Limit]) -> Vec<LimitFailure> {
    run.scenarios
        .iter()
        .flat_map(|sc| {
            sc.threads
                .iter()
                .flat_map(move |th| thread_failures(sc, th, limits))
        })
        .collect()
}

impl std::fmt::Display for LimitFailure {
    /// `timer clock-nanosleep 1ms cpu1 p99 63.20 µs > 50.00 µs`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(src) = &self.source {
            write!(f, "{src}: ")?;
        }
        let place = format!("{} cpu{}", self.scenario, self.cpu);
        write!(
            f,
            "{} {} {} > {}",
            metric_label(&place, self.metric),
            self.stat,
            self.stat.format_value(self.value),
            self.stat.format_value(self.limit)
        )
    }
}

/// Prints one `FAIL:` line per failure to stderr (and a PASS line when `say_pass` and
/// none failed); returns whether any failed.
pub fn print_verdict(failures: &[LimitFailure], say_pass: bool) -> bool {
    for f in failures {
        // A scenario name read from a file may hold control sequences (issue 34, item 9).
        eprintln!(
            "FAIL: {}",
            crate::output::terminal::escape_controls(&f.to_string())
        );
    }
    if failures.is_empty() && say_pass {
        eprintln!("PASS: every scenario and CPU is within the --fail-above limits");
    }
    !failures.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_limits_with_units() {
        let l = parse_limits("p99=50us, max=1ms,overruns=0").unwrap();
        assert_eq!(l[0].stat, Stat::P99);
        assert_eq!(l[0].limit, 50_000.0);
        assert_eq!(l[1].limit, 1_000_000.0);
        assert_eq!(l[2].limit, 0.0);
        assert!(parse_limits("p99=50").unwrap_err().contains("no unit"));
        assert!(parse_limits("p42=50us")
            .unwrap_err()
            .contains("unknown statistic"));
        assert!(parse_limits("max").unwrap_err().contains("STAT=VALUE"));
        assert!(parse_limits("").is_err());
    }
}
