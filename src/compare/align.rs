//! Lines up the scenarios of several runs: the same probe, method (without a
//! parenthesized source such as `(cyclictest)`), period, loads, probe parameters, CPU and
//! metric are one row of the comparison.

use crate::result::{ProbeKind, Run, Scenario, ThreadResult};

/// What aligns scenarios across runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct AlignKey {
    pub probe: ProbeKind,
    /// The method without a parenthesized suffix (`clock-nanosleep (cyclictest)` aligns
    /// with `clock-nanosleep`).
    pub method: String,
    pub period_ns: u64,
    pub loads: Vec<String>,
    /// Probe-specific parameters (`competitors=4`), without `method`.
    pub extra: String,
    /// The how-many-th scenario with these values in its run (0 for the first).
    pub ordinal: usize,
    pub cpu: usize,
    pub metric: crate::result::Metric,
}

impl AlignKey {
    pub fn label(&self) -> String {
        let mut s = format!("{} {}", self.probe, self.method);
        if self.period_ns > 0 {
            s.push(' ');
            s.push_str(&crate::units::human_ns(self.period_ns).replace(' ', ""));
        }
        if !self.loads.is_empty() {
            s.push_str(&format!(" load={}", self.loads.join("+")));
        }
        if !self.extra.is_empty() {
            s.push(' ');
            s.push_str(&self.extra);
        }
        if self.ordinal > 0 {
            s.push_str(&format!(" #{}", self.ordinal + 1));
        }
        s.push_str(&format!(" cpu{}", self.cpu));
        crate::result::metric_label(&s, self.metric)
    }
}

fn base_method(method: &str) -> String {
    match method.find(" (") {
        Some(i) if method.ends_with(')') => method[..i].to_string(),
        _ => method.to_string(),
    }
}

/// A scenario's probe-specific parameters as `k=v` words.
fn extra_text(sc: &Scenario) -> String {
    sc.params.extra.words().join(" ")
}

/// One aligned scenario × CPU: its entry in each run (None where a run lacks it).
pub struct Aligned<'a> {
    pub key: AlignKey,
    pub entries: Vec<Option<(&'a Scenario, &'a ThreadResult)>>,
}

/// Aligns every thread of every run; keys in order of first appearance.
pub fn align(runs: &[Run]) -> Vec<Aligned<'_>> {
    let mut out: Vec<Aligned> = Vec::new();
    for (r, run) in runs.iter().enumerate() {
        let mut seen: Vec<(ProbeKind, String, u64, Vec<String>, String)> = Vec::new();
        for sc in &run.scenarios {
            let base = (
                sc.probe,
                base_method(&sc.params.method),
                sc.params.period_ns,
                sc.params.loads.clone(),
                extra_text(sc),
            );
            let ordinal = seen.iter().filter(|s| **s == base).count();
            seen.push(base.clone());
            for th in &sc.threads {
                let key = AlignKey {
                    probe: base.0,
                    method: base.1.clone(),
                    period_ns: base.2,
                    loads: base.3.clone(),
                    extra: base.4.clone(),
                    ordinal,
                    cpu: th.cpu,
                    metric: th.metric,
                };
                let idx = match out.iter().position(|a| a.key == key) {
                    Some(i) => i,
                    None => {
                        out.push(Aligned {
                            key,
                            entries: vec![None; runs.len()],
                        });
                        out.len() - 1
                    }
                };
                if out[idx].entries[r].is_none() {
                    out[idx].entries[r] = Some((sc, th));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_align_without_suffix() {
        assert_eq!(
            base_method("clock-nanosleep (cyclictest)"),
            "clock-nanosleep"
        );
        assert_eq!(base_method("timerfd"), "timerfd");
    }
}
