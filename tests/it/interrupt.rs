//! Ctrl-C stops cleanly: what was measured is printed and saved, marked interrupted, and
//! the exit code says so; no measuring thread is left behind.

use crate::common;
use common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn sigint(pid: u32) {
    Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
}

fn ctrl_c_saves_what_was_measured_marked_interrupted() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    let raw = dir.path().join("raw.csv");
    let bin = common::latscope_path();
    let spawned_ns = latscope::sys::clock::monotonic_ns();
    let child = Command::new(bin)
        .args([
            "timer",
            "--method",
            "clock-nanosleep,timerfd",
            "-a",
            &test_cpu().to_string(),
        ])
        .args(["-D", "60s", "--warmup", "0", "--export-json"])
        .arg(&path)
        .arg("--raw")
        .arg(&raw)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    sigint(child.id());
    let sent_ns = latscope::sys::clock::monotonic_ns();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("clock-nanosleep") && stdout.contains("interrupted"),
        "{stdout}"
    );
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(run["interrupted"], true);
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(
        scenarios.len(),
        1,
        "the second method must not start after Ctrl-C"
    );
    assert_eq!(scenarios[0]["interrupted"], true);
    // Every sample is saved, and none was taken after the interrupt: each `--raw`
    // deadline lies between the start and the signal (plus the 1 ms period the measuring
    // thread may still be asleep for, and the host's stops of up to 20 ms).
    let samples = scenarios[0]["threads"][0]["samples"].as_u64().unwrap();
    let deadlines: Vec<u64> = common::raw_samples(&raw).iter().map(|r| r[0]).collect();
    assert!(samples > 0, "nothing measured in 1.5 s");
    assert_eq!(deadlines.len() as u64, samples, "every sample in --raw");
    let (first, last) = (deadlines[0], deadlines[deadlines.len() - 1]);
    assert!(
        first > spawned_ns && last <= sent_ns + 100_000_000,
        "deadlines {first}..{last} ns, started at {spawned_ns}, interrupted by {sent_ns}"
    );
}

/// The second Ctrl-C gives the measuring threads `ABORT_GRACE_NS` to come back, then
/// aborts without them: here the thread sleeps for a 10 s period, so latscope exits after
/// the grace and long before that thread's first deadline.
fn second_ctrl_c_aborts_at_once() {
    let _lock = common::latency_lock();
    let bin = common::latscope_path();
    // A 10 s period keeps the measuring thread asleep, so the first Ctrl-C cannot finish.
    let spawned = Instant::now();
    let mut child = Command::new(bin)
        .args([
            "timer", "--period", "10s", "-a", "0", "-D", "60s", "--warmup", "0", "-q",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    sigint(child.id());
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "first Ctrl-C should wait for the loop"
    );
    let sent = Instant::now();
    sigint(child.id());
    let out = child.wait_with_output().unwrap();
    let grace = Duration::from_nanos(latscope::interrupt::ABORT_GRACE_NS);
    assert!(sent.elapsed() >= grace, "exited before the grace was over");
    assert!(
        spawned.elapsed() < Duration::from_secs(9),
        "waited for the sleeping thread ({:?})",
        spawned.elapsed()
    );
    assert_eq!(out.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&out.stderr).contains("aborting"));
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    common::test_cases![
        ctrl_c_saves_what_was_measured_marked_interrupted,
        second_ctrl_c_aborts_at_once
    ]
}
