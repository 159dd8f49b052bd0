//! The two lines every rendering for people opens with (terminal, Markdown, HTML): what
//! ran (probe, method, period, policy, CPUs, time, load; a policy fallback said there)
//! and the worst value (where, against the deadline, missed, p99), so nobody has to find
//! the max in column 11 or learn from the third warning that the run was not real-time.

use crate::result::{metric_label, Run, Scenario, ThreadResult};
use crate::stats::Stat;
use crate::sys::cpu_list::format_cpu_list;
use crate::warning::WarningCode;

use crate::units::spaced_ns;

/// True when the scenario's threads ran at SCHED_OTHER although nobody asked for it
/// (or as asked): the numbers then include time-sharing delays.
fn sched_other(sc: &Scenario) -> bool {
    sc.warnings
        .iter()
        .any(|w| w.code == WarningCode::SchedOther)
}

/// `FIFO 95`, or `SCHED_OTHER (not real-time: ...)` when the run fell back.
fn policy_text(sc: &Scenario) -> String {
    let p = &sc.params;
    if sched_other(sc) || p.policy.eq_ignore_ascii_case("other") {
        let why = sc
            .warnings
            .iter()
            .find(|w| w.code == WarningCode::SchedOther && w.message.contains("CAP_SYS_NICE"))
            .map(|_| " — fell back, no permission for FIFO")
            .unwrap_or("");
        return format!("SCHED_OTHER, not real-time{why}");
    }
    format!("{} {}", p.policy.to_uppercase(), p.priority)
}

/// One line: `timer clock-nanosleep 1 ms · FIFO 95 · CPUs 0-1 · 3 s + 1 s warm-up · no load`.
pub fn what_ran(sc: &Scenario) -> String {
    let p = &sc.params;
    let mut parts = vec![format!(
        "{} {} {}",
        sc.probe,
        p.method,
        spaced_ns(p.period_ns)
    )];
    parts.push(policy_text(sc));
    let cpus = format_cpu_list(&p.cpus);
    parts.push(if p.cpus.len() == 1 {
        format!("CPU {cpus}")
    } else {
        format!("CPUs {cpus}")
    });
    let measured = if sc.elapsed_ns > 0 {
        spaced_ns(sc.elapsed_ns)
    } else if p.duration_ns > 0 {
        spaced_ns(p.duration_ns)
    } else {
        format!("{} samples", p.samples)
    };
    parts.push(if p.warmup_ns > 0 {
        format!("{measured} + {} warm-up", spaced_ns(p.warmup_ns))
    } else {
        measured
    });
    if !p.isolate.is_empty() {
        parts.push(format!("isolated {}", format_cpu_list(&p.isolate)));
    }
    parts.push(if p.loads.is_empty() {
        "no load".into()
    } else {
        format!("load {}", p.loads.join(", "))
    });
    parts.join(" · ")
}

/// The run's "what ran" line: the scenario's own, or for several a count and the suite.
pub fn run_what_ran(run: &Run) -> String {
    match run.scenarios.as_slice() {
        [sc] => what_ran(sc),
        scs => {
            // A plan without a name has an empty title: no ": 4 scenarios".
            let title = run.suite.as_ref().map(|s| s.title.as_str());
            let title = title.filter(|t| !t.trim().is_empty());
            let head = title.map(|t| format!("{t}: ")).unwrap_or_default();
            let fallback = scs.iter().any(sched_other);
            let note = if fallback {
                " · SCHED_OTHER in some scenarios, not real-time"
            } else {
                ""
            };
            format!("{head}{} scenarios{note}", scs.len())
        }
    }
}

/// The worst thread of the run: the largest max among threads whose max is known.
fn worst_thread(run: &Run) -> Option<(&Scenario, &ThreadResult)> {
    run.scenarios
        .iter()
        .flat_map(|sc| sc.threads.iter().map(move |th| (sc, th)))
        .filter(|(_, th)| th.summary.samples > 0 && !super::stat_unknown(th, Stat::Max))
        .max_by_key(|(_, th)| th.summary.max_ns)
}

/// One line: `worst 1.4 ms on CPU 0 (1.4× the 1 ms deadline) · 2 missed · p99 26.9 µs`.
pub fn worst(run: &Run) -> String {
    let Some((sc, th)) = worst_thread(run) else {
        return "worst: no samples".into();
    };
    let s = &th.summary;
    let mut line = format!("worst {} on CPU {}", spaced_ns(s.max_ns), th.cpu);
    if th.metric != crate::result::metric::Metric::Latency {
        line.push_str(&format!(" ({})", metric_label(&th.method, th.metric)));
    }
    if run.scenarios.len() > 1 {
        line.push_str(&format!(" in {}", sc.name));
    }
    let deadline = sc.params.deadline_ns;
    if deadline > 0 {
        let ratio = s.max_ns as f64 / deadline as f64;
        line.push_str(&format!(
            " ({ratio:.2}× the {} deadline)",
            spaced_ns(deadline)
        ));
    }
    let missed: u64 = run
        .scenarios
        .iter()
        .flat_map(|sc| &sc.threads)
        .map(|t| t.summary.stat(Stat::Missed) as u64)
        .sum();
    line.push_str(&format!(" · {missed} missed"));
    if !super::stat_unknown(th, Stat::P99) {
        line.push_str(&format!(
            " · p99 {}",
            spaced_ns(s.stat(Stat::P99).round() as u64)
        ));
    }
    line
}

/// Both lines, each ending in a newline (terminal and Markdown open with them).
pub fn lines(run: &Run) -> String {
    format!("{}\n{}\n", run_what_ran(run), worst(run))
}

#[cfg(test)]
mod tests {
    use super::spaced_ns;

    #[test]
    fn one_unit_style() {
        assert_eq!(spaced_ns(300_000), "300 µs");
        assert_eq!(spaced_ns(1_000_000), "1 ms");
        assert_eq!(spaced_ns(1_404_120), "1.4 ms");
        assert_eq!(spaced_ns(8_973_000), "8.97 ms");
        assert_eq!(spaced_ns(26_860), "26.9 µs");
        assert_eq!(spaced_ns(3_000_000_000), "3 s");
        assert_eq!(spaced_ns(500), "500 ns");
    }
}
