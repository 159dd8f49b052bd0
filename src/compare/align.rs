//! Lines up the scenarios of several runs: the same probe, method (without a
//! parenthesized source such as `(cyclictest)`), period, loads, probe parameters, CPU and
//! metric are one row of the comparison. `--ignore AXIS` leaves an axis out of that key
//! (idle against loaded: `--ignore load`), and `differences` says which axes kept two runs
//! apart when nothing lined up.

use crate::result::{ProbeKind, Run, Scenario, ThreadResult};

/// An axis of the key `compare --ignore` may leave out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum IgnoreAxis {
    /// The loads run beside the probe (`--load`): idle lines up with loaded.
    Load,
    /// The timer or wake method (`--method`).
    Method,
    /// The period (`--period`, `-i`).
    Period,
    /// The probe's own parameters (`competitors=4`, packet size, ...).
    Params,
    /// The CPU: threads line up by their order in the scenario (`cpu0` with `cpu1`).
    Cpu,
}

impl IgnoreAxis {
    pub fn name(self) -> &'static str {
        match self {
            IgnoreAxis::Load => "load",
            IgnoreAxis::Method => "method",
            IgnoreAxis::Period => "period",
            IgnoreAxis::Params => "params",
            IgnoreAxis::Cpu => "cpu",
        }
    }
}

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
    /// The CPU, or with `--ignore cpu` the thread's place among its scenario's threads.
    pub cpu: usize,
    pub metric: crate::result::Metric,
    /// The axes left out of the key (`--ignore`), named in the label.
    pub ignored: Vec<IgnoreAxis>,
}

impl AlignKey {
    pub fn label(&self) -> String {
        let mut s = self.probe.to_string();
        if !self.method.is_empty() {
            s.push(' ');
            s.push_str(&self.method);
        }
        if self.period_ns > 0 {
            s.push(' ');
            s.push_str(&crate::units::name_ns(self.period_ns));
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
        if self.ignored.contains(&IgnoreAxis::Cpu) {
            s.push_str(&format!(" thread{}", self.cpu));
        } else {
            s.push_str(&format!(" cpu{}", self.cpu));
        }
        let mut s = crate::result::metric_label(&s, self.metric);
        if !self.ignored.is_empty() {
            let names: Vec<&str> = self.ignored.iter().map(|a| a.name()).collect();
            s.push_str(&format!(" (any {})", names.join(", ")));
        }
        s
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

type ScenarioKey = (ProbeKind, String, u64, Vec<String>, String);

/// A scenario's part of the key, with the ignored axes blanked.
fn scenario_key(sc: &Scenario, ignore: &[IgnoreAxis]) -> ScenarioKey {
    let kept = |a: IgnoreAxis| !ignore.contains(&a);
    (
        sc.probe,
        if kept(IgnoreAxis::Method) {
            base_method(&sc.params.method)
        } else {
            String::new()
        },
        if kept(IgnoreAxis::Period) {
            sc.params.period_ns
        } else {
            0
        },
        if kept(IgnoreAxis::Load) {
            sc.params.loads.clone()
        } else {
            Vec::new()
        },
        if kept(IgnoreAxis::Params) {
            extra_text(sc)
        } else {
            String::new()
        },
    )
}

/// Aligns every thread of every run, leaving the `ignore` axes out of the key; keys in
/// order of first appearance.
pub fn align<'a>(runs: &'a [Run], ignore: &[IgnoreAxis]) -> Vec<Aligned<'a>> {
    let mut ignore = ignore.to_vec();
    ignore.sort();
    ignore.dedup();
    let mut out: Vec<Aligned> = Vec::new();
    for (r, run) in runs.iter().enumerate() {
        let mut seen: Vec<ScenarioKey> = Vec::new();
        for sc in &run.scenarios {
            let base = scenario_key(sc, &ignore);
            let ordinal = seen.iter().filter(|s| **s == base).count();
            seen.push(base.clone());
            for (place, th) in sc.threads.iter().enumerate() {
                let place = sc.threads[..place]
                    .iter()
                    .filter(|t| t.metric == th.metric)
                    .count();
                let key = AlignKey {
                    probe: base.0,
                    method: base.1.clone(),
                    period_ns: base.2,
                    loads: base.3.clone(),
                    extra: base.4.clone(),
                    ordinal,
                    cpu: if ignore.contains(&IgnoreAxis::Cpu) {
                        place
                    } else {
                        th.cpu
                    },
                    metric: th.metric,
                    ignored: ignore.clone(),
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

/// An axis on which two runs' scenarios differ: its name, the values in each run, and
/// the `--ignore` that lines them up anyway (None: probe and metric cannot be ignored).
pub struct Difference {
    pub axis: &'static str,
    pub first: String,
    pub second: String,
    pub ignore: Option<IgnoreAxis>,
}

/// The values of one axis over a run's threads, sorted and unique, as text.
fn axis_values(run: &Run, of: &dyn Fn(&Scenario, &ThreadResult) -> String) -> String {
    let mut v: Vec<String> = run
        .scenarios
        .iter()
        .flat_map(|sc| sc.threads.iter().map(move |th| of(sc, th)))
        .collect();
    v.sort();
    v.dedup();
    v.join(", ")
}

/// The axes on which the scenarios of `a` and `b` differ (why nothing lined up).
pub fn differences(a: &Run, b: &Run) -> Vec<Difference> {
    let none = |s: String| if s.is_empty() { "none".to_string() } else { s };
    type Of = Box<dyn Fn(&Scenario, &ThreadResult) -> String>;
    let axes: Vec<(&'static str, Option<IgnoreAxis>, Of)> = vec![
        ("probe", None, Box::new(|sc, _| sc.probe.to_string())),
        (
            "method",
            Some(IgnoreAxis::Method),
            Box::new(|sc, _| base_method(&sc.params.method)),
        ),
        (
            "period",
            Some(IgnoreAxis::Period),
            Box::new(move |sc, _| match sc.params.period_ns {
                0 => "none".into(),
                p => crate::units::human_ns(p),
            }),
        ),
        (
            "load",
            Some(IgnoreAxis::Load),
            Box::new(move |sc, _| none(sc.params.loads.join("+"))),
        ),
        (
            "params",
            Some(IgnoreAxis::Params),
            Box::new(move |sc, _| none(extra_text(sc))),
        ),
        (
            "cpu",
            Some(IgnoreAxis::Cpu),
            Box::new(|_, th| th.cpu.to_string()),
        ),
        ("metric", None, Box::new(|_, th| th.metric.to_string())),
    ];
    axes.into_iter()
        .filter_map(|(axis, ignore, of)| {
            let (first, second) = (axis_values(a, &*of), axis_values(b, &*of));
            (first != second).then_some(Difference {
                axis,
                first,
                second,
                ignore,
            })
        })
        .collect()
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
