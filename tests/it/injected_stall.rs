//! An injected stall of known length must show up with its length and its count: a
//! SCHED_FIFO 99 thread pinned to the measured CPU spins 3 ms every 500 ms while latscope
//! measures there at FIFO 50 with a 100 µs period. Each stall is matched to the sample it
//! made by timestamp (`--raw` deadlines against the injector's own CLOCK_MONOTONIC record);
//! samples no stall made are the host's (this VM's host stops its CPUs for 1-20 ms several
//! times a second): they are counted and printed, never judged.

use crate::common;
use common::matching::{match_events, unmatched, SampleSpan};
use common::*;

const STALL_NS: u64 = 3_000_000;
const EVERY_NS: u64 = 500_000_000;
const PERIOD_NS: u64 = 100_000;

fn injected_3ms_stall_is_seen_with_its_length_and_count() {
    let _lock = latency_lock();
    let cpu = test_cpu();
    let raw = tempfile::NamedTempFile::new().unwrap();
    let injector = StallInjector::start(cpu, STALL_NS, EVERY_NS, EVERY_NS / 5);
    let run = run_json(&[
        "timer",
        "--raw",
        raw.path().to_str().unwrap(),
        "--cpus",
        &cpu.to_string(),
        "--policy",
        "fifo",
        "--priority",
        "50",
        "--period",
        "100us",
        "--duration",
        "4s",
        "--warmup",
        "300ms",
        "--dma-latency",
        "0",
    ]);
    let stalls = injector.finish();

    let sc = &run["scenarios"][0];
    let t = &sc["threads"][0];
    assert_summary_sane(t);
    let (start, end) = (
        sc["time"]["start_ns"].as_u64().unwrap(),
        sc["time"]["end_ns"].as_u64().unwrap(),
    );
    let rows = raw_rows(raw.path(), "latency");
    assert_eq!(rows.len() as u64, t["samples"].as_u64().unwrap());

    let skipped = skipped_periods(&rows, t);

    // The stalls that fell wholly inside the measured window.
    let inside: Vec<(u64, u64)> = stalls
        .iter()
        .copied()
        .filter(|&(s, e)| s >= start && e + 1_000_000 < end)
        .collect();
    assert!(
        inside.len() >= 6,
        "only {} stalls inside the 4 s window: {stalls:?}",
        inside.len()
    );
    let spans: Vec<SampleSpan> = rows.iter().copied().map(SampleSpan::of_row).collect();
    let matched = match_events(&spans, &inside);

    // The wake cost: what a wake-up costs when nothing stalls it (median of the rest).
    let rest = unmatched(rows.len(), &matched);
    let rest_latency: Vec<u64> = rest.iter().map(|&i| rows[i][1]).collect();
    let wake_cost = quantile(&rest_latency, 0.5);
    let (excesses, disturbed_count) = judge_stalls(cpu, &inside, &matched, &rows, &skipped);
    print_stall_excess(&excesses, "woke after its end by");
    assert_one_sample_per_stall(&matched);
    let host: Vec<u64> = rest_latency
        .iter()
        .copied()
        .filter(|&l| l >= 500_000)
        .collect();
    eprintln!(
        "{} stalls matched ({disturbed_count} overlapped by the noise maker); wake cost (median of the {} other samples) {} µs; samples of 0.5 ms or more that no stall made (the host's): {}, largest {} µs",
        inside.len(),
        rest.len(),
        wake_cost / 1000,
        host.len(),
        host.iter().max().copied().unwrap_or(0) / 1000
    );
}

/// The periods each row's deadline skipped after it (`--raw` rows are on the period's grid),
/// checked to sum to the run's missed count: the missed periods are those the deadlines
/// skipped, and nothing else.
fn skipped_periods(rows: &[[u64; 2]], thread: &serde_json::Value) -> Vec<u64> {
    let skipped: Vec<u64> = rows.iter().map(|r| r[1] / PERIOD_NS).collect();
    for (k, w) in rows.windows(2).enumerate() {
        assert_eq!(
            w[1][0] - w[0][0],
            (1 + skipped[k]) * PERIOD_NS,
            "row {k}: deadlines off the grid"
        );
    }
    assert_eq!(
        skipped.iter().sum::<u64>(),
        thread["missed"].as_u64().unwrap(),
        "missed = the periods the deadlines skipped"
    );
    skipped
}

/// Judges each stall's sample: it woke after the stall ended, skipped the periods the stall
/// covered and no more than passed. Returns each undisturbed stall's excess (woke after its
/// end by) and how many a logged noise-maker stall overlapped (their length not judged).
fn judge_stalls(
    cpu: usize,
    inside: &[(u64, u64)],
    matched: &[Option<usize>],
    rows: &[[u64; 2]],
    skipped: &[u64],
) -> (Vec<(usize, u64)>, usize) {
    let known = known_disturbances();
    let mut disturbed_count = 0;
    let mut excesses = Vec::new();
    for (n, (&(s, e), m)) in inside.iter().zip(matched).enumerate() {
        let i = m.unwrap_or_else(|| panic!("stall {n} [{s}, {e}] made no sample"));
        let [deadline, latency] = rows[i];
        let woke = deadline + latency;
        assert!(
            woke >= e,
            "stall {n}: the sample woke at {woke}, before the stall ended at {e}"
        );
        // Deadlines the stall covered after this sample's own were skipped, not sampled.
        let covered = e.saturating_sub(deadline) / PERIOD_NS;
        assert!(
            skipped[i] >= covered,
            "stall {n}: {} periods skipped, the stall covered {covered}",
            skipped[i]
        );
        let excess = woke - e;
        eprintln!(
            "stall {n}: {} µs injected, sample deadline +{} µs into it, latency {} µs, woke {} µs after its end, {} periods skipped",
            (e - s) / 1000,
            deadline.saturating_sub(s) / 1000,
            latency / 1000,
            excess / 1000,
            skipped[i]
        );
        if disturbed(&known, cpu, s, woke) {
            disturbed_count += 1;
            eprintln!("stall {n}: overlapped by a logged noise-maker stall: length not judged");
            continue;
        }
        excesses.push((n, excess));
        assert!(
            skipped[i] <= (woke - deadline) / PERIOD_NS,
            "stall {n}: more periods skipped than passed"
        );
    }
    (excesses, disturbed_count)
}

fn raw_deadlines_are_on_the_grid_and_inside_the_run_window() {
    let _lock = latency_lock();
    let cpu = test_cpu().to_string();
    let raw = tempfile::NamedTempFile::new().unwrap();
    for method in ["clock-nanosleep", "timerfd", "posix-timer"] {
        let run = run_json(&[
            "timer",
            "--method",
            method,
            "--cpus",
            &cpu,
            "-D",
            "1s",
            "--warmup",
            "100ms",
            "--period",
            "500us",
            "--raw",
            raw.path().to_str().unwrap(),
        ]);
        let sc = &run["scenarios"][0];
        let t = &sc["threads"][0];
        let time = &sc["time"];
        assert_eq!(time["clock"], "CLOCK_MONOTONIC");
        let (start, end) = (
            time["start_ns"].as_u64().unwrap(),
            time["end_ns"].as_u64().unwrap(),
        );
        // The offset to wall-clock time: within a minute of the scenario's started_at.
        let offset = time["realtime_offset_ns"].as_i64().unwrap();
        let wall_s = (start as i64 + offset) / 1_000_000_000;
        let now_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        assert!(
            (now_s - wall_s).abs() < 60,
            "{method}: realtime offset {offset}"
        );

        let rows = raw_rows(raw.path(), "latency");
        assert_eq!(rows.len() as u64, t["samples"].as_u64().unwrap());
        assert_eq!(
            rows[0][0], start,
            "{method}: row 0 is the window's first deadline"
        );
        assert_missed_are_the_skipped_periods(method, &rows, start, t);
        for r in &rows {
            assert!(
                r[0] >= start && r[0] + r[1] <= end,
                "{method}: {r:?} outside [{start}, {end}]"
            );
        }
    }
}

/// Row k's deadline = start + (k + periods skipped so far) × period, exactly; the skipped
/// periods of timerfd and posix-timer come from the kernel's expiration count, so their sum
/// must match the JSON's missed count.
fn assert_missed_are_the_skipped_periods(
    method: &str,
    rows: &[[u64; 2]],
    start: u64,
    t: &serde_json::Value,
) {
    let mut skipped_so_far = 0;
    for (k, w) in rows.windows(2).enumerate() {
        assert_eq!(
            w[0][0],
            start + (k as u64 + skipped_so_far) * 500_000,
            "{method}: row {k}"
        );
        skipped_so_far += (w[1][0] - w[0][0]) / 500_000 - 1;
    }
    // The last sample skips the periods it was late for, as far as they were due
    // before the run's end (start + 1 s): there is no next row to show them.
    let [last_deadline, last_latency] = *rows.last().unwrap();
    let due_after_last = (start + 1_000_000_000).saturating_sub(last_deadline + 1) / 500_000;
    if method == "clock-nanosleep" {
        skipped_so_far += (last_latency / 500_000).min(due_after_last);
    } else {
        // The kernel's expiration count says how many; it is at least what passed.
        let counted = t["missed"].as_u64().unwrap() - skipped_so_far;
        assert!(
            counted <= due_after_last,
            "{method}: {counted} missed after the last row"
        );
        assert!(counted + 1 >= (last_latency / 500_000).min(due_after_last));
        skipped_so_far += counted;
    }
    assert_eq!(
        skipped_so_far,
        t["missed"].as_u64().unwrap(),
        "{method}: missed = periods skipped between rows"
    );
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    common::test_cases![
        injected_3ms_stall_is_seen_with_its_length_and_count,
        raw_deadlines_are_on_the_grid_and_inside_the_run_window
    ]
}
