//! Every wake-up method runs for real on one CPU and produces a sane, complete result.

use crate::common;
use common::*;

fn every_method_produces_a_sane_result() {
    let _lock = common::latency_lock();
    let cpu = test_cpu().to_string();
    let run = run_json(&[
        "timer", "--method", "all", "--cpus", &cpu, "-D", "2s", "--warmup", "200ms", "--policy",
        "fifo", "-p", "80", "--force",
    ]);
    assert_eq!(run["schema_version"], 2);
    assert_eq!(run["interrupted"], false);
    let scenarios = run["scenarios"].as_array().unwrap();
    let methods = scenario_methods(&run);
    assert_eq!(
        methods,
        [
            "clock-nanosleep",
            "nanosleep",
            "timerfd",
            "posix-timer",
            "busy"
        ]
    );
    for s in scenarios {
        let threads = s["threads"].as_array().unwrap();
        assert_eq!(threads.len(), 1);
        let t = &threads[0];
        assert_eq!(t["cpu"].as_u64().unwrap().to_string(), cpu);
        assert_summary_sane(t);
        // 2 s at 1 ms: every period is either a sample or counted as missed.
        let accounted = t["samples"].as_u64().unwrap() + t["missed"].as_u64().unwrap();
        assert!(
            (1900..=2002).contains(&accounted),
            "{}: {accounted} periods in 2 s",
            s["name"]
        );
        let series = t["per_second_max_ns"].as_array().unwrap();
        assert!(
            (2..=3).contains(&series.len()),
            "per-second series: {series:?}"
        );
        let series_max = series.iter().map(|v| v.as_u64().unwrap()).max().unwrap();
        assert_eq!(series_max, t["max_ns"].as_u64().unwrap());
    }
    // The system context is there.
    let sys = &run["system"];
    assert!(!sys["kernel_release"].as_str().unwrap().is_empty());
    assert!(!sys["preemption_model"].as_str().unwrap().is_empty());
    assert!(!sys["online_cpus"].as_array().unwrap().is_empty());
}

fn samples_bound_the_run_and_raw_keeps_every_sample() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw.csv");
    let cpu = test_cpu().to_string();
    let run = run_json(&[
        "timer",
        "-a",
        &cpu,
        "-i",
        "500",
        "-l",
        "1000",
        "--warmup",
        "0",
        "--raw",
        raw.to_str().unwrap(),
    ]);
    let t = &run["scenarios"][0]["threads"][0];
    assert_eq!(t["samples"], 1000);
    assert_eq!(run["scenarios"][0]["params"]["period_ns"], 500_000);
    let text = std::fs::read_to_string(&raw).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "scenario,cpu,method,metric,iteration,deadline_ns,latency_ns"
    );
    let values: Vec<u64> = lines
        .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(values.len(), 1000);
    assert_eq!(*values.iter().max().unwrap(), t["max_ns"].as_u64().unwrap());
    assert_eq!(*values.iter().min().unwrap(), t["min_ns"].as_u64().unwrap());
}

fn json_file_is_written_and_other_policy_warns() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    latscope()
        .args([
            "timer", "-a", "0", "-D", "1s", "--warmup", "0", "--policy", "other", "-q",
        ])
        .arg("--export-json")
        .arg(&path)
        .assert()
        .success();
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(run["scenarios"][0]["params"]["policy"], "other");
    assert!(run["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "sched_other"));
    // No temporary file is left beside the result.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1);
}

fn dma_latency_is_held_during_the_run_and_released_after() {
    let _lock = common::latency_lock();
    let before = latscope::sys::dma_latency::current_us().expect("checked before");
    let bin = common::latscope_path();
    let child = std::process::Command::new(bin)
        .args([
            "timer",
            "-a",
            "0",
            "-D",
            "2s",
            "--warmup",
            "0",
            "-q",
            "--dma-latency",
            "0",
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let during = latscope::sys::dma_latency::current_us();
    let status = child.wait_with_output().unwrap().status;
    assert!(status.success());
    assert_eq!(during, Some(0), "not held at 0 during the run");
    assert_eq!(
        latscope::sys::dma_latency::current_us(),
        Some(before),
        "not released"
    );
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    vec![
        case(
            "every_method_produces_a_sane_result",
            every_method_produces_a_sane_result,
        ),
        case(
            "samples_bound_the_run_and_raw_keeps_every_sample",
            samples_bound_the_run_and_raw_keeps_every_sample,
        ),
        case(
            "json_file_is_written_and_other_policy_warns",
            json_file_is_written_and_other_policy_warns,
        ),
        case(
            "dma_latency_is_held_during_the_run_and_released_after",
            dma_latency_is_held_during_the_run_and_released_after,
        )
        .unless(
            latscope::sys::dma_latency::current_us()
                .is_none()
                .then(|| "/dev/cpu_dma_latency is not readable here".to_string()),
        ),
    ]
}
