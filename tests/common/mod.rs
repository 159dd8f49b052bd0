//! Helpers shared by the integration tests: running the real binary, reading its JSON,
//! fixture paths and a CPU this process may use.
#![allow(dead_code)]

use assert_cmd::Command;
use serde_json::Value;

/// The latscope binary built by cargo for this test run.
pub fn latscope() -> Command {
    Command::cargo_bin("latscope").expect("binary built")
}

/// Runs latscope with `args` plus `--export-json -`, asserts success, returns the JSON.
pub fn run_json(args: &[&str]) -> Value {
    let out = latscope()
        .args(args)
        .args(["--export-json", "-", "--quiet"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "latscope {:?} failed: {}",
        args,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

/// The CPU tests measure on: the last online CPU (CPU 1 on the 2-CPU CI machine).
pub fn test_cpu() -> usize {
    *latscope::sys::affinity::online_cpus()
        .last()
        .expect("at least one CPU")
}

/// Checks the invariants every summary must satisfy.
pub fn assert_summary_sane(t: &Value) {
    let g = |k: &str| {
        t[k].as_u64()
            .unwrap_or_else(|| panic!("{k} missing in {t}"))
    };
    let samples = g("samples");
    assert!(samples > 0, "no samples: {t}");
    assert!(g("min_ns") <= g("p50_ns"), "min > p50: {t}");
    assert!(g("p50_ns") <= g("p90_ns"), "p50 > p90: {t}");
    assert!(g("p90_ns") <= g("p99_ns"), "p90 > p99: {t}");
    assert!(g("p99_ns") <= g("p999_ns"), "p99 > p99.9: {t}");
    assert!(g("p999_ns") <= g("max_ns"), "p99.9 > max: {t}");
    let mean = t["mean_ns"].as_f64().unwrap();
    assert!(
        mean >= g("min_ns") as f64 && mean <= g("max_ns") as f64,
        "mean outside [min,max]: {t}"
    );
    let hist_total: u64 = t["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[1].as_u64().unwrap())
        .sum();
    assert_eq!(
        hist_total, samples,
        "histogram counts != samples (overflow?): {t}"
    );
}

use std::path::PathBuf;

/// A file under tests/fixtures/.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The last CPU this process is allowed to run on (tests may be confined by a cpuset).
pub fn usable_cpu() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .and_then(|list| latscope::units::parse_cpu_list_plain(list.trim()).ok())
        .and_then(|cpus| cpus.last().copied())
        .unwrap_or(0)
}

/// Whether a program is on PATH.
pub fn have(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}
