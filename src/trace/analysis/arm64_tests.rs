//! The analysis on traces recorded in the arm64 lab's guests (QEMU virt, Cortex-A57,
//! Debian 6.1 stock and PREEMPT_RT; tests/fixtures/trace/arm64_timer_*.txt with their
//! `--raw` samples): no irq_vectors, the arch timer an ordinary IRQ, IPIs as
//! ipi:ipi_entry/ipi_exit. A timer run is split as far as these events allow, and the
//! recorder asks this kernel for what it has.

use super::account::CauseKind;
use super::attribution::{attribute, AttributionConfig};
use super::split::{split_timer, SplitConfig, TimerMethod, TimerSample};
use super::tests::load;
use super::threshold::Threshold;
use super::timeline::Timeline;
use crate::result::ProbeKind;
use crate::trace::event::{EventKind, ARM_IPI};
use crate::trace::record::instance::{missing_events_note, probe_events, resolve_events};

/// (trace, raw samples, the timer thread's tid) of each guest.
const RUNS: [(&str, &str, i32); 2] = [
    ("arm64_timer_stock.txt", "arm64_timer_stock.csv", 483),
    ("arm64_timer_rt.txt", "arm64_timer_rt.csv", 530),
];

fn samples(csv: &str) -> Vec<TimerSample> {
    let path = format!("{}/tests/fixtures/trace/{csv}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            TimerSample {
                deadline_ns: f[5].parse().unwrap(),
                latency_ns: f[6].parse().unwrap(),
            }
        })
        .collect()
}

#[test]
fn arm_ipis_are_read_as_ipis_with_their_reason() {
    let events = load("arm64_timer_rt.txt");
    let ipis: Vec<(&str, bool)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::VectorEntry { name, vector } if *vector == ARM_IPI => {
                Some((name.as_str(), true))
            }
            EventKind::VectorExit { name, vector } if *vector == ARM_IPI => {
                Some((name.as_str(), false))
            }
            _ => None,
        })
        .collect();
    assert_eq!(ipis.len(), 16, "8 ipi_entry and 8 ipi_exit in the excerpt");
    assert!(ipis.contains(&("reschedule", true)));
    assert!(ipis.contains(&("call_function", false)));
    assert!(!ipis.iter().any(|(n, _)| *n == "ipi"), "{ipis:?}");
    // Read back from its own rendering.
    let e = events
        .iter()
        .find(|e| matches!(&e.kind, EventKind::VectorEntry { vector, .. } if *vector == ARM_IPI))
        .unwrap();
    assert_eq!(e.kind.tracepoint(), "ipi:ipi_entry");
    let again = super::text::parse_text_line(&super::text::render_text_line_ns(e)).unwrap();
    assert_eq!(again.kind, e.kind);
}

/// Every sample inside the excerpt joins; its parts sum to its latency; the arch timer's
/// expiry gives irq_latency on both kernels (threaded or not).
#[test]
fn a_timer_run_splits_on_both_arm64_kernels() {
    for (trace, csv, tid) in RUNS {
        let events = load(trace);
        let tl = Timeline::new(&events);
        let samples = samples(csv);
        let split = split_timer(
            &tl,
            tid,
            1,
            TimerMethod::ClockNanosleep,
            &samples,
            &SplitConfig::default(),
        );
        assert_eq!(split.counts.total, 60, "{trace}");
        assert_eq!(split.counts.joined, 60, "{trace}: {:?}", split.counts);
        for s in &split.samples {
            assert_eq!(
                s.parts().iter().sum::<i64>(),
                s.latency_ns as i64,
                "{trace}: {s:?}"
            );
            assert!(s.irq_latency_ns > 0, "{trace}: {s:?}");
            assert!(s.expire_entry_ns.is_some(), "{trace}: {s:?}");
        }
    }
}

/// The RT guest's 2.97 ms and 12.9 ms samples received a reschedule IPI on the measured
/// CPU: the spike names it as an IPI, as x86's reschedule vector is named.
#[test]
fn an_ipi_in_a_spike_is_named() {
    let (trace, csv, tid) = RUNS[1];
    let events = load(trace);
    let tl = Timeline::new(&events);
    let split = split_timer(
        &tl,
        tid,
        1,
        TimerMethod::ClockNanosleep,
        &samples(csv),
        &SplitConfig::default(),
    );
    let cfg = AttributionConfig {
        threshold: Threshold::Fixed(2_000_000),
        ..Default::default()
    };
    let a = attribute(&tl, &split, &cfg);
    let with_ipi: Vec<_> = a
        .spikes
        .iter()
        .filter(|s| {
            s.causes
                .iter()
                .any(|c| c.kind == CauseKind::Ipi && c.name == "reschedule")
        })
        .collect();
    assert!(!with_ipi.is_empty(), "{:#?}", a.spikes);
    for s in &a.spikes {
        let explained: u64 = s.causes.iter().map(|c| c.duration_ns).sum();
        assert_eq!(
            explained + s.unexplained_ns,
            s.window_end_ns - s.deadline_ns
        );
        assert!(
            s.causes
                .iter()
                .any(|c| c.kind == CauseKind::Irq && c.name == "arch_timer"),
            "{s:#?}"
        );
    }
}

/// What the recorder enables on these kernels' available_events: each probe gets its
/// events or their Arm stand-ins; only x86's page-fault events are missing, and the
/// user is told once what that means, not a list of x86 names.
#[test]
fn the_recorder_asks_an_arm64_kernel_for_what_it_has() {
    for file in [
        "arm64-6.1-available_events",
        "arm64-6.1-rt-available_events",
    ] {
        let path = format!("{}/tests/fixtures/trace/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).unwrap();
        let have: Vec<&str> = text.lines().collect();
        for kind in [
            ProbeKind::Timer,
            ProbeKind::Wake,
            ProbeKind::Noise,
            ProbeKind::Gpio,
        ] {
            let (enabled, missing) = resolve_events(&probe_events(kind), |e| have.contains(&e));
            assert_eq!(
                missing,
                ["exceptions:page_fault_user", "exceptions:page_fault_kernel"],
                "{file} {kind:?}"
            );
            assert!(enabled.iter().any(|e| e == "ipi:ipi_entry"), "{enabled:?}");
            assert!(enabled.iter().all(|e| !e.starts_with("irq_vectors:")));
            let note = missing_events_note(&missing, &enabled).unwrap();
            assert!(note.contains("this Arm kernel"), "{note}");
            assert!(!note.contains("irq_vectors"), "{note}");
        }
    }
    // An x86 kernel (every event there): nothing missing, no stand-in, no note.
    let all = probe_events(ProbeKind::Gpio);
    let (enabled, missing) = resolve_events(&all, |e| !e.starts_with("ipi:ipi_e"));
    assert!(missing.is_empty());
    assert_eq!(enabled.len(), all.len());
    assert_eq!(missing_events_note(&missing, &enabled), None);
}
