//! Stops the guest cannot explain (`platform.hypervisor`, measured): the noise probe spins
//! on the CPU with `--trace`, and every gap of at least 10 µs is classified by the trace:
//! a gap with no guest event at all (no IRQ, softirq, NMI or other task on the CPU) was
//! the host's (a hypervisor or SMM stopping the CPU). Reported with its evidence: the
//! host's share, its longest stop and the worst gaps as the trace names them.

use super::ab::AbSettings;
use super::finding::Measured;
use crate::result::trace::TraceResult;
use anyhow::Context;

/// The noise threshold and `--trace-threshold`: every gap above it is classified.
pub const GAP_NS: u64 = 10_000;
/// The class the trace analysis gives a gap with no guest event.
const HOST_KIND: &str = "hypervisor";
/// Gaps named in the evidence, worst first.
const EVIDENCE_GAPS: usize = 5;

/// What the traced window saw on one CPU.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostStops {
    /// Gaps above the threshold, and how many the trace could classify.
    pub gaps: u64,
    pub classified: u64,
    /// Gaps whose time was mostly the host's, their host time and the longest one.
    pub host_gaps: u64,
    pub host_ns: u64,
    pub longest_host_ns: u64,
    /// The host's worst gaps as the trace renders them (`24.02 µs: no guest activity: ...`).
    pub worst: Vec<String>,
}

/// Counts the host's stops in a noise run's trace (pure: tested on a saved trace).
pub fn host_stops(trace: &TraceResult) -> HostStops {
    let mut s = HostStops {
        gaps: trace.threads.iter().map(|t| t.samples_total).sum(),
        classified: trace.threads.iter().map(|t| t.samples_joined).sum(),
        ..HostStops::default()
    };
    let host_ns_of = |causes: &[serde_json::Value]| -> u64 {
        causes
            .iter()
            .filter(|c| c["kind"] == HOST_KIND)
            .filter_map(|c| c["duration_ns"].as_u64())
            .sum()
    };
    for spike in &trace.spikes {
        let host = host_ns_of(&spike.causes);
        // Causes come largest first: the host's gap is one it dominates.
        if spike.causes.first().is_some_and(|c| c["kind"] == HOST_KIND) {
            s.host_gaps += 1;
            s.longest_host_ns = s.longest_host_ns.max(host);
        }
        s.host_ns += host;
    }
    // Spikes are stored worst first: the host's worst gaps.
    s.worst = trace
        .spikes
        .iter()
        .filter(|sp| sp.causes.first().is_some_and(|c| c["kind"] == HOST_KIND))
        .take(EVIDENCE_GAPS)
        .map(|sp| sp.line.clone())
        .collect();
    s
}

/// The measured line: the host's share of the gaps and of the time.
pub fn summary(s: &HostStops, cpu: usize, secs: f64) -> String {
    let ms = |ns: u64| format!("{:.2} ms", ns as f64 / 1e6);
    if s.gaps == 0 {
        return format!(
            "a thread spinning {secs:.1} s on CPU {cpu} with --trace: no gap of {} µs or more",
            GAP_NS / 1000
        );
    }
    format!(
        "a thread spinning {secs:.1} s on CPU {cpu} with --trace: {} of {} gaps ≥ {} µs had no guest event (the host stopped the CPU: hypervisor/SMI), {} in all ({:.2} % of the time), longest {}; {} explained by the guest's own IRQs, softirqs or tasks{}",
        s.host_gaps,
        s.gaps,
        GAP_NS / 1000,
        ms(s.host_ns),
        s.host_ns as f64 / (secs * 1e9) * 100.0,
        ms(s.longest_host_ns),
        s.classified.saturating_sub(s.host_gaps),
        match s.gaps - s.classified.min(s.gaps) {
            0 => String::new(),
            n => format!(", {n} not classified (outside the trace or lost events)"),
        }
    )
}

/// Spins the noise probe with `--trace` on `s.cpu` for `seconds`, at SCHED_FIFO when
/// `fifo` (RT throttling on: the spin cannot starve the CPU; other tasks then do not
/// preempt it, so the gaps left are interrupts and the host's), else SCHED_OTHER; the
/// measured line and the evidence lines.
pub fn window(s: &AbSettings, seconds: u64, fifo: bool) -> anyhow::Result<(Measured, Vec<String>)> {
    let threshold = format!("{}us", GAP_NS / 1000);
    let extra = [
        "--threshold",
        &threshold,
        "--trace",
        "--trace-threshold",
        &threshold,
    ];
    let extra: Vec<String> = extra.iter().map(|w| w.to_string()).collect();
    let (plan, argv) = super::ab::noise_plan(s, seconds, fifo, &extra)?;
    let outcome = crate::runner::execute(&plan, argv, s.stop.clone(), None)?;
    let trace = outcome
        .run
        .scenarios
        .first()
        .and_then(|sc| sc.trace.as_ref())
        .context("the noise run recorded no trace")?;
    let stops = host_stops(trace);
    let mut evidence = vec![format!(
        "traced noise window on CPU {} ({}): {} gaps ≥ {} µs, the host's worst first:",
        s.cpu,
        if fifo { "SCHED_FIFO" } else { "SCHED_OTHER" },
        stops.gaps,
        GAP_NS / 1000
    )];
    evidence.extend(stops.worst.iter().map(|l| format!("  {l}")));
    let measured = Measured {
        summary: summary(&stops, s.cpu, seconds as f64),
        pairs_ns: Vec::new(),
        restored: true,
    };
    Ok((measured, evidence))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::trace::{TraceSpike, TraceThread};

    fn spike(latency_ns: u64, causes: &[(&str, u64)], line: &str) -> TraceSpike {
        TraceSpike {
            cpu: 1,
            at_ns: 0,
            latency_ns,
            causes: causes
                .iter()
                .map(|(k, d)| serde_json::json!({"kind": k, "duration_ns": d}))
                .collect(),
            unexplained_ns: 0,
            line: line.into(),
        }
    }

    #[test]
    fn gaps_without_a_guest_event_are_the_hosts() {
        // Worst first, as the analysis stores them: a 3 ms host stop, an IRQ gap with a
        // short silent stretch inside, a 40 µs host stop.
        let trace = TraceResult {
            threads: vec![TraceThread {
                cpu: 1,
                samples_total: 4,
                samples_joined: 3,
                ..TraceThread::default()
            }],
            spikes: vec![
                spike(3_000_000, &[("hypervisor", 2_990_000)], "3.00 ms: host"),
                spike(
                    60_000,
                    &[("irq", 45_000), ("hypervisor", 12_000)],
                    "60 µs: irq",
                ),
                spike(40_000, &[("hypervisor", 39_000)], "40 µs: host"),
            ],
            ..TraceResult::default()
        };
        let s = host_stops(&trace);
        assert_eq!(
            s,
            HostStops {
                gaps: 4,
                classified: 3,
                host_gaps: 2,
                host_ns: 2_990_000 + 12_000 + 39_000,
                longest_host_ns: 2_990_000,
                worst: vec!["3.00 ms: host".into(), "40 µs: host".into()],
            }
        );
        let line = summary(&s, 1, 3.0);
        assert!(
            line.contains("2 of 4 gaps ≥ 10 µs had no guest event")
                && line.contains("3.04 ms in all (0.10 % of the time), longest 2.99 ms")
                && line.contains("1 explained by the guest")
                && line.contains("1 not classified"),
            "{line}"
        );
    }

    #[test]
    fn a_quiet_window_says_so() {
        let s = host_stops(&TraceResult::default());
        assert!(summary(&s, 2, 3.0).contains("no gap of 10 µs or more"));
    }
}
