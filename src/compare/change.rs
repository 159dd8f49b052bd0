//! Percent changes between two runs (the RT-cost study's "RT costs 9 % of network
//! throughput"): for every aligned scenario × CPU the chosen latency statistics, the
//! `--trace` irq part where both traced, and every load both scenarios ran with its
//! throughput. Latency: higher is worse; throughput: lower is worse.

use super::Comparison;
use crate::result::{stat_unknown, Metric, ProbeKind, Run, Scenario, ThreadResult};
use crate::stats::Stat;

/// What a changed value measures, and so which direction is worse.
#[derive(Debug, Clone, PartialEq)]
pub enum ChangeKind {
    /// A latency statistic (ns, or a count): higher is worse.
    Latency(Stat),
    /// A load's throughput in its unit: lower is worse.
    Throughput(String),
}

/// Where an item sits in the RT-cost table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChangeGroup {
    /// UDP round trips (the study's `ping -f`).
    Network,
    /// Timer latency and its irq part.
    Timer,
    /// Other probes' latencies (wake, noise).
    Other,
    /// Load throughput (the study's netperf and hdparm).
    Throughput,
}

/// One compared value of one item.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeItem {
    pub group: ChangeGroup,
    /// What it is, for people: `UDP round trip 56 B flood cpu1`, `net load throughput`.
    pub item: String,
    pub kind: ChangeKind,
    pub base: f64,
    pub new: f64,
}

impl ChangeItem {
    /// `(new − base) / base` in %, None when the baseline is 0.
    pub fn percent(&self) -> Option<f64> {
        percent_change(self.base, self.new)
    }

    /// Whether the change is for the worse (latency up, throughput down); None when
    /// there is no change to judge.
    pub fn worse(&self) -> Option<bool> {
        let p = self.percent()?;
        if p == 0.0 {
            return None;
        }
        Some(match self.kind {
            ChangeKind::Latency(_) => p > 0.0,
            ChangeKind::Throughput(_) => p < 0.0,
        })
    }
}

/// `(new − base) / base` in %; None when the baseline is 0 (or either is not finite).
pub fn percent_change(base: f64, new: f64) -> Option<f64> {
    if base == 0.0 || !base.is_finite() || !new.is_finite() {
        return None;
    }
    Some((new - base) / base * 100.0)
}

/// A change as printed: `+9.0 %`, `−9.0 %` (a real minus sign), `–` without one.
pub fn percent_text(p: Option<f64>) -> String {
    match p {
        None => "–".into(),
        Some(p) if p.abs() < 0.05 => "0.0 %".into(),
        Some(p) if p > 0.0 => format!("+{p:.1} %"),
        Some(p) => format!("\u{2212}{:.1} %", -p),
    }
}

/// The suite title words that mark the RT-cost study (the `rt-cost` preset's title).
const RT_COST_TITLE_WORDS: [&str; 4] = ["rt cost", "rt-cost", "rt patch", "rt-patch"];

/// Whether a run is the RT-cost study (`latscope suite --preset rt-cost`): its suite
/// says `study = "rt-cost"`, or (a plan without `study`) its title names it.
pub fn is_rt_cost(run: &Run) -> bool {
    run.suite.as_ref().is_some_and(|s| match &s.study {
        Some(study) => *study == crate::result::Study::RtCost,
        None => {
            let t = s.title.to_lowercase();
            RT_COST_TITLE_WORDS.iter().any(|w| t.contains(w))
        }
    })
}

/// The latency statistics a change table shows: the baseline suite's columns when it
/// has them, else avg, p99 and max.
pub fn chosen_stats(run: &Run) -> Vec<Stat> {
    let from_suite: Vec<Stat> = run
        .suite
        .iter()
        .flat_map(|s| s.columns.iter())
        .filter_map(|c| Stat::parse(c))
        .filter(|s| *s != Stat::Samples)
        .collect();
    if from_suite.is_empty() {
        vec![Stat::Avg, Stat::P99, Stat::Max]
    } else {
        from_suite
    }
}

/// What a scenario is in words: `UDP round trip 56 B flood`, `timer clock-nanosleep 1ms
/// under net`, else its name.
pub fn item_label(sc: &Scenario) -> String {
    let base = match sc.probe {
        ProbeKind::Net => {
            let size = sc.params.extra.size_bytes;
            let flood = sc.params.extra.flood == Some(true) || sc.params.period_ns == 0;
            match size {
                Some(s) => format!("UDP round trip {s} B{}", if flood { " flood" } else { "" }),
                None => sc.name.clone(),
            }
        }
        ProbeKind::Timer => {
            let mut s = format!("timer {}", sc.params.method);
            if !sc.params.loads.is_empty() {
                s.push_str(&format!(" under {}", sc.params.loads.join(" + ")));
            }
            s
        }
        _ => sc.name.clone(),
    };
    if sc.params.isolate.is_empty() {
        base
    } else {
        format!("{base} isolated")
    }
}

fn group_of(sc: &Scenario) -> ChangeGroup {
    match sc.probe {
        ProbeKind::Net => ChangeGroup::Network,
        ProbeKind::Timer => ChangeGroup::Timer,
        _ => ChangeGroup::Other,
    }
}

fn thread_label(sc: &Scenario, th: &ThreadResult, cpus_differ: bool) -> String {
    let mut s = item_label(sc);
    if th.metric != Metric::Latency && th.metric != Metric::RoundTrip {
        s.push(' ');
        s.push_str(&th.metric.name().replace('_', " "));
    }
    if cpus_differ {
        s.push_str(&format!(" cpu{}", th.cpu));
    }
    s
}

/// The `--trace` irq part of a scenario's thread on `cpu`, when it was traced.
fn irq_part(sc: &Scenario, cpu: usize) -> Option<&ThreadResult> {
    sc.trace
        .as_ref()?
        .threads
        .iter()
        .find(|t| t.cpu == cpu)?
        .parts
        .iter()
        .find(|p| p.metric == Metric::IrqLatency)
}

fn stat_value(th: &ThreadResult, stat: Stat) -> Option<f64> {
    (!stat_unknown(th, stat)).then(|| th.summary.stat(stat))
}

/// Every change of run `r` against the baseline (run 0) of `cmp`: latency statistics
/// per aligned scenario × CPU (and its irq part), then the throughput of every load
/// both scenarios ran. Items keep the comparison's order within their group.
pub fn changes(cmp: &Comparison, r: usize, stats: &[Stat]) -> Vec<ChangeItem> {
    let mut out = Vec::new();
    let mut scenario_pairs: Vec<(&Scenario, &Scenario)> = Vec::new();
    for a in &cmp.aligned {
        let (Some((sa, ta)), Some((sb, tb))) = (a.entries[0], a.entries[r]) else {
            continue;
        };
        let cpus_differ =
            sa.threads.len() > 1 && sa.threads.iter().filter(|t| t.metric == ta.metric).count() > 1;
        let label = thread_label(sa, ta, cpus_differ);
        for &stat in stats {
            if let (Some(base), Some(new)) = (stat_value(ta, stat), stat_value(tb, stat)) {
                out.push(ChangeItem {
                    group: group_of(sa),
                    item: label.clone(),
                    kind: ChangeKind::Latency(stat),
                    base,
                    new,
                });
            }
        }
        if let (Some(ia), Some(ib)) = (irq_part(sa, ta.cpu), irq_part(sb, tb.cpu)) {
            for &stat in stats {
                if let (Some(base), Some(new)) = (stat_value(ia, stat), stat_value(ib, stat)) {
                    out.push(ChangeItem {
                        group: group_of(sa),
                        item: format!("{label} irq part"),
                        kind: ChangeKind::Latency(stat),
                        base,
                        new,
                    });
                }
            }
        }
        if !scenario_pairs
            .iter()
            .any(|(x, y)| std::ptr::eq(*x, sa) && std::ptr::eq(*y, sb))
        {
            scenario_pairs.push((sa, sb));
        }
    }
    for (sa, sb) in scenario_pairs {
        out.extend(throughput_changes(sa, sb));
    }
    out.sort_by_key(|c| c.group);
    out
}

/// The throughput change of every load `a` and `b` both ran (matched by spec; loads
/// without a throughput, unit `-`, left out).
pub fn throughput_changes(a: &Scenario, b: &Scenario) -> Vec<ChangeItem> {
    let alone = a.loads.len() == 1;
    a.loads
        .iter()
        .filter(|l| l.unit != "-" && !l.unit.is_empty())
        .filter_map(|la| {
            let lb = b
                .loads
                .iter()
                .find(|lb| lb.spec == la.spec && lb.unit == la.unit)?;
            let mut item = format!("{} load throughput", la.kind);
            if la.spec != la.kind {
                item = format!("{item} ({})", la.spec);
            }
            if !alone {
                item.push_str(&format!(" in {}", a.name));
            }
            Some(ChangeItem {
                group: ChangeGroup::Throughput,
                item,
                kind: ChangeKind::Throughput(la.unit.clone()),
                base: la.throughput,
                new: lb.throughput,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_change_and_its_text() {
        assert_eq!(percent_change(100.0, 109.0), Some(9.0));
        assert_eq!(percent_text(percent_change(1000.0, 910.0)), "\u{2212}9.0 %");
        assert_eq!(percent_text(percent_change(100.0, 109.0)), "+9.0 %");
        assert_eq!(percent_text(percent_change(0.0, 5.0)), "–");
        assert_eq!(percent_text(Some(0.01)), "0.0 %");
    }

    #[test]
    fn direction_of_worse() {
        let lat = ChangeItem {
            group: ChangeGroup::Timer,
            item: "t".into(),
            kind: ChangeKind::Latency(Stat::Max),
            base: 100.0,
            new: 109.0,
        };
        assert_eq!(lat.worse(), Some(true));
        let thr = ChangeItem {
            kind: ChangeKind::Throughput("MB/s".into()),
            base: 1000.0,
            new: 910.0,
            ..lat.clone()
        };
        assert_eq!(thr.worse(), Some(true));
        let better = ChangeItem { new: 1100.0, ..thr };
        assert_eq!(better.worse(), Some(false));
    }
}
