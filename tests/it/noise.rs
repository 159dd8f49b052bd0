//! `latscope noise` finds a stall of known length: a FIFO 99 thread named `stall-inj` on the
//! measured CPU spins 2 ms every 250 ms while noise measures there. Each stall is matched by
//! timestamp to the gap it made (`--raw` gap starts against the injector's own record);
//! gaps no stall made are the host's (this VM's host stops its CPUs for 1-20 ms several
//! times a second): counted and printed, never judged.

use crate::common;
use common::matching::{match_events, unmatched, SampleSpan};
use common::*;
use latscope::sys::{affinity, sched};

const STALL_NS: u64 = 2_000_000;
const STALL_EVERY_NS: u64 = 250_000_000;
const MEASURE_S: u64 = 3;

fn noise_finds_an_injected_fifo_stall() {
    if !sched::can_use_realtime() {
        panic!("needs SCHED_FIFO for the stall injector: run the tests as root");
    }
    let online = affinity::online_cpus();
    assert!(online.len() >= 2, "needs 2 CPUs (one stays free)");
    let _lock = latency_lock();
    let cpu = *online.last().unwrap();
    let raw = tempfile::NamedTempFile::new().unwrap();
    let injector = StallInjector::start(cpu, STALL_NS, STALL_EVERY_NS, 10_000_000);
    // SCHED_OTHER: a FIFO measuring thread that spins is stopped by RT throttling for
    // 50 ms each second, and the injector (also RT) would wait behind that window.
    // At nice -20 (kept by --policy other) other SCHED_OTHER tasks seldom get the CPU first
    // when the injector ends.
    let out = std::process::Command::new("nice")
        .args(["-n", "-20"])
        .arg(common::latscope_path())
        .args(["noise", "--cpus", &cpu.to_string(), "--policy", "other"])
        .args(["-D", &format!("{MEASURE_S}s"), "--warmup", "0.3s", "-q"])
        .arg("--raw")
        .arg(raw.path())
        .args(["--export-json", "-"])
        .output()
        .unwrap();
    let stalls = injector.finish();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sc = &run["scenarios"][0];
    assert_eq!(sc["probe"], "noise");
    let t = &sc["threads"][0];
    assert_eq!(t["metric"], "gap");
    let (start, end) = (
        sc["time"]["start_ns"].as_u64().unwrap(),
        sc["time"]["end_ns"].as_u64().unwrap(),
    );
    let rows = raw_rows(raw.path(), "gap");
    assert_eq!(rows.len() as u64, t["samples"].as_u64().unwrap());
    let inside: Vec<(u64, u64)> = stalls
        .iter()
        .copied()
        .filter(|&(s, e)| s > start && e < end)
        .collect();
    assert!(
        inside.len() as u64 + 2 >= MEASURE_S * 1_000_000_000 / STALL_EVERY_NS,
        "only {} stalls inside the window: {stalls:?}",
        inside.len()
    );
    let spans: Vec<SampleSpan> = rows.iter().copied().map(SampleSpan::of_row).collect();
    let matched = match_events(&spans, &inside);
    let loop_cost = t["extra"]["loop_cost_ns"].as_u64().unwrap();
    let excesses = judge_gaps(cpu, &inside, &matched, &rows, loop_cost);
    print_stall_excess(&excesses, "its gap outlasted it by");
    assert_one_sample_per_stall(&matched);
    let host: Vec<u64> = unmatched(rows.len(), &matched)
        .into_iter()
        .map(|i| rows[i][1])
        .filter(|&g| g >= 500_000)
        .collect();
    eprintln!(
        "{} stalls matched; gaps of 0.5 ms or more no stall made (the host's): {}, largest {} µs",
        inside.len(),
        host.len(),
        host.iter().max().copied().unwrap_or(0) / 1000
    );
    assert_noise_extras(t);
}

/// Judges each stall's gap: it contains the stall. Returns each undisturbed stall's excess
/// (its gap outlasted it by); stalls a logged noise-maker stall overlapped are not judged.
fn judge_gaps(
    cpu: usize,
    inside: &[(u64, u64)],
    matched: &[Option<usize>],
    rows: &[[u64; 2]],
    loop_cost: u64,
) -> Vec<(usize, u64)> {
    let known = known_disturbances();
    let mut excesses = Vec::new();
    for (n, (&(s, e), m)) in inside.iter().zip(matched).enumerate() {
        let i = m.unwrap_or_else(|| panic!("stall {n} [{s}, {e}] made no gap"));
        let [gap_start, gap] = rows[i];
        let gap_end = gap_start + gap + loop_cost;
        eprintln!(
            "stall {n}: {} µs injected, gap {} µs from {} µs before it to {} µs after it",
            (e - s) / 1000,
            gap / 1000,
            s.saturating_sub(gap_start) / 1000,
            gap_end.saturating_sub(e) / 1000
        );
        assert!(
            gap_start <= s && gap_end >= e,
            "stall {n}: the gap [{gap_start}, {gap_end}] does not contain the stall [{s}, {e}]"
        );
        if disturbed(&known, cpu, gap_start, gap_end) {
            eprintln!("stall {n}: overlapped by a logged noise-maker stall: length not judged");
            continue;
        }
        excesses.push((n, gap - (e - s).min(gap)));
    }
    excesses
}

/// The noise figures every run reports beside the gaps.
fn assert_noise_extras(t: &serde_json::Value) {
    for key in [
        "noise_ns_total",
        "noise_percent",
        "gaps_per_second",
        "loop_cost_ns",
        "threshold_ns",
    ] {
        assert!(
            t["extra"].get(key).is_some(),
            "extra.{key} missing: {}",
            t["extra"]
        );
    }
    assert_eq!(t["extra"]["threshold_ns"], 1000);
    // The stalls alone are 0.8 % of the time: a lower bound the host can only raise.
    assert!(t["extra"]["noise_percent"].as_f64().unwrap() >= 0.7);
}

fn noise_rejects_a_bad_threshold() {
    let out = common::latscope()
        .args(["noise", "--threshold", "2s", "-D", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--threshold"), "{err}");
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    common::test_cases![
        noise_finds_an_injected_fifo_stall,
        noise_rejects_a_bad_threshold
    ]
}
