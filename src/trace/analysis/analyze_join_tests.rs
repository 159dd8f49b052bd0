//! The join (`analyze`: a recording and the probe's `--raw` series into `scenario.trace`
//! and the split columns) on traces recorded on this project's VM (tests/fixtures/trace/),
//! so it runs without root or tracefs: the right series reaches the right thread, the
//! counts and parts add up, spikes name their causes, the worst spike's events are its own.

use super::analyze::analyze;
use super::split::TimerMethod;
use super::tests::{load, timer_samples, TIMER_TID};
use super::text::parse_text_line;
use crate::probe::ProbeOutput;
use crate::result::trace::{TraceResult, TraceThread};
use crate::result::ProbeKind;
use crate::result::{Metric, RawSeries};
use crate::trace::Recording;

/// A probe's output with one raw series of `columns` on `cpu`, `method` as its parameter.
fn output(
    cpu: usize,
    method: &str,
    metric: Metric,
    columns: &[&str],
    rows: &[Vec<i64>],
) -> ProbeOutput {
    let out = ProbeOutput {
        raw: vec![RawSeries {
            cpu,
            method: method.into(),
            metric,
            columns: columns.iter().map(|c| c.to_string()).collect(),
            values: rows.concat(),
        }],
        ..ProbeOutput::default()
    };
    out
}

/// The analysis' input as the runner hands it over: the thread(s), a fixed threshold.
fn result(threads: Vec<TraceThread>, threshold_ns: u64) -> TraceResult {
    TraceResult {
        threshold_ns,
        threshold_source: "--trace-threshold".into(),
        threads,
        ..TraceResult::default()
    }
}

fn thread(cpu: usize, tid: i32, role: &str) -> TraceThread {
    TraceThread {
        cpu,
        tid,
        role: role.into(),
        ..TraceThread::default()
    }
}

fn recording(name: &str) -> Recording {
    Recording {
        events: load(name),
        ..Recording::default()
    }
}

#[test]
fn a_timer_run_is_joined_into_counts_parts_columns_and_its_stall() {
    let rows: Vec<Vec<i64>> = timer_samples()
        .iter()
        .map(|s| vec![s.deadline_ns as i64, s.latency_ns as i64])
        .collect();
    let cols = ["deadline_ns", "latency_ns"];
    let mut out = output(1, "clock-nanosleep", Metric::Latency, &cols, &rows);
    let mut res = result(vec![thread(1, TIMER_TID, "timer")], 1_000_000);
    analyze(
        ProbeKind::Timer,
        "clock-nanosleep",
        Some(TimerMethod::ClockNanosleep),
        &recording("timer_stall.txt"),
        &mut out,
        &mut res,
    );

    let t = &res.threads[0];
    assert_eq!((t.samples_total, t.samples_joined), (6, 5));
    assert_eq!(t.not_joined.get("outside the trace window"), Some(&1));
    let names: Vec<&str> = t.parts.iter().map(|p| p.metric.name()).collect();
    assert_eq!(
        names,
        ["irq_latency", "wake_to_run", "to_user", "remainder"]
    );
    assert!(
        t.parts.iter().all(|p| p.summary.samples == 5),
        "{:?}",
        t.parts
    );
    assert_eq!(t.switch_in_inferred, 4);

    // --raw gains the split columns: empty where not joined, summing to the latency.
    let raw = &out.raw[0];
    assert_eq!(raw.columns.len(), 6);
    let split: Vec<&[i64]> = raw.rows().collect();
    assert_eq!(split.len(), 6);
    assert!(split[0][2..].iter().all(|&v| v == RawSeries::EMPTY));
    for (row, input) in split.iter().zip(&rows).skip(1) {
        assert_eq!(&row[..2], &input[..], "the sample's own columns kept");
        assert_eq!(row[2..].iter().sum::<i64>(), row[1], "{row:?}");
    }
    // The part's maximum is the stall's sample (495): its wake_to_run.
    let wake_to_run = &t.parts[1];
    assert_eq!(wake_to_run.summary.max_ns, split[3][3] as u64);

    // One spike above 1 ms: the stall, named by the injector that held the CPU.
    assert_eq!(res.threshold_ns, 1_000_000);
    assert_eq!(res.spikes.len(), 1);
    let spike = &res.spikes[0];
    assert_eq!((spike.cpu, spike.at_ns), (1, 563_318_783_323));
    assert_eq!(spike.latency_ns, 2_150_018);
    let top = &spike.causes[0];
    assert_eq!(top["pid"], 16118);
    assert_eq!(top["label"], "stall-inj/16118 FIFO/RR 99");
    assert!(top["ran_ns"].as_u64().unwrap() >= top["duration_ns"].as_u64().unwrap());
    assert!(
        spike.line.starts_with("2.15 ms: stall-inj/16118"),
        "{}",
        spike.line
    );
    let summary = &res.cause_summary[0];
    assert_eq!(
        (summary.cause.as_str(), summary.spikes),
        ("stall-inj/16118", 1)
    );

    // The worst spike's events: its own window (100 µs before the deadline to the wake-up).
    assert!(!res.worst_spike_events.is_empty());
    for line in &res.worst_spike_events {
        let e = parse_text_line(line).unwrap_or_else(|| panic!("{line:?}"));
        assert!(e.ts_ns + 100_000 >= spike.at_ns, "{line}");
        assert!(e.ts_ns <= spike.at_ns + spike.latency_ns, "{line}");
    }
    assert!(!res.worst_spike_spans.is_empty());
}

#[test]
fn noise_gaps_are_joined_into_classes_and_spikes() {
    // Gaps of the recorded run (start, length): IRQ + softirq, nothing traced, RT throttling.
    let gaps = [
        (580_743_805_218, 366_868),
        (580_817_492_809, 46_910),
        (580_817_664_956, 24_016),
    ];
    let rows: Vec<Vec<i64>> = gaps.iter().map(|&(s, g)| vec![s, g]).collect();
    let mut out = output(1, "noise", Metric::Gap, &["start_ns", "gap_ns"], &rows);
    let mut res = result(vec![thread(1, 16725, "noise")], 40_000);
    analyze(
        ProbeKind::Noise,
        "noise",
        None,
        &recording("noise_gaps.txt"),
        &mut out,
        &mut res,
    );

    let t = &res.threads[0];
    assert_eq!((t.samples_total, t.samples_joined), (3, 3));
    assert_eq!(t.classes.values().sum::<u64>(), 3, "{:?}", t.classes);
    assert_eq!(t.classes.get("hypervisor"), Some(&1), "{:?}", t.classes);
    assert_eq!(t.classes.get("rt_throttling"), Some(&1), "{:?}", t.classes);
    // Above 40 µs: the throttled gap and the IRQ's, worst first; the 24 µs one is not.
    let at: Vec<(u64, u64)> = res.spikes.iter().map(|s| (s.at_ns, s.latency_ns)).collect();
    assert_eq!(at, [(580_743_805_218, 366_868), (580_817_492_809, 46_910)]);
    assert!(
        res.spikes[0].line.contains("bash"),
        "{}",
        res.spikes[0].line
    );
    assert!(!res.cause_summary.is_empty());
}

#[test]
fn a_wake_response_is_joined_to_the_wakee_not_the_waker() {
    let (t0, t1) = (579_080_481_190_i64, 579_080_507_353_i64);
    let cols = ["t0_ns", "t1_ns", "response_ns"];
    let mut out = output(
        1,
        "eventfd",
        Metric::Response,
        &cols,
        &[vec![t0, t1, t1 - t0]],
    );
    let threads = vec![thread(0, 16696, "waker"), thread(1, 16697, "wakee")];
    let mut res = result(threads, 1_000_000);
    analyze(
        ProbeKind::Wake,
        "eventfd",
        None,
        &recording("wake_eventfd.txt"),
        &mut out,
        &mut res,
    );

    assert!(res.threads[0].parts.is_empty(), "the waker has no parts");
    let t = &res.threads[1];
    assert_eq!((t.samples_total, t.samples_joined), (1, 1));
    let names: Vec<&str> = t.parts.iter().map(|p| p.metric.name()).collect();
    assert_eq!(names, ["to_wakeup", "switch", "to_user", "remainder"]);
    assert_eq!(t.parts[0].summary.max_ns, 579_080_499_000 - 579_080_481_190);
    let sum: u64 = t.parts.iter().map(|p| p.summary.max_ns).sum();
    assert_eq!(
        sum,
        (t1 - t0) as u64,
        "one sample: the parts add up to its response"
    );
    // The switch-in was not traced: placed at its lower bound and noted.
    assert_eq!(t.switch_in_inferred, 1);
    assert_eq!(
        t.parts[1].extra.bound,
        Some(crate::result::extras::Bound::Lower)
    );
    assert_eq!(t.notes.len(), 1);
    assert!(res.spikes.is_empty(), "26 µs is no spike above 1 ms");
}
