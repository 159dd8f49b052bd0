//! `latscope suite`: both study presets run scaled down and print their full tables; an
//! interrupted suite keeps what it measured and `--resume` completes it.

use crate::common;
use common::*;
use std::process::{Command, Stdio};
use std::time::Duration;

fn suite_stdout(args: &[&str], json: &std::path::Path) -> (String, serde_json::Value) {
    let out = latscope()
        .arg("suite")
        .args(args)
        .args(["--warmup", "100ms", "--export-json"])
        .arg(json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "suite {args:?} failed: {stderr}");
    let run = common::read_result(json).unwrap();
    (String::from_utf8_lossy(&out.stdout).into_owned(), run)
}

fn memory_load_preset_prints_the_study_table() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("mem.json");
    let (table, run) = suite_stdout(&["--preset", "memory-load", "--samples", "2000"], &json);
    // The unit is said once above the table (render/table.rs), not in every heading.
    for header in [
        "latencies in µs",
        "avg",
        "max",
        "stddev",
        "overruns",
        "period",
        "load",
    ] {
        assert!(table.contains(header), "{header} missing:\n{table}");
    }
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 3 * 9, "3 periods × 9 loads");
    for period in ["300 µs", "500 µs", "1 ms"] {
        for load in [
            "none",
            "cpu:50%",
            "cpu:100%",
            "mem-churn:50%",
            "prot-fault:100%",
            "mem-access:100%",
        ] {
            assert!(
                table
                    .lines()
                    .any(|l| l.contains(period) && l.contains(load)),
                "no row for {period} {load}:\n{table}"
            );
        }
    }
    for s in scenarios {
        let t = &s["threads"][0];
        assert_eq!(t["samples"], 2000);
        assert_summary_sane(t);
        // Every load ran on the measured CPU, as on the study's single-CPU machine.
        let specs = s["params"]["loads"].as_array().unwrap();
        let loads = s["loads"].as_array().unwrap();
        assert_eq!(specs.len(), loads.len(), "{}", s["name"]);
        for l in loads {
            assert_eq!(l["cpus"], s["params"]["cpus"], "{}", s["name"]);
            assert!(l["throughput"].as_f64().unwrap() > 0.0, "{l}");
        }
    }
    // The run remembers its study layout: `report` prints the same table again.
    assert_eq!(
        run["suite"]["columns"],
        serde_json::json!(["avg", "max", "stddev", "overruns"])
    );
    let again = latscope().arg("report").arg(&json).output().unwrap();
    let again = String::from_utf8_lossy(&again.stdout);
    assert!(
        again.contains("stddev") && again.contains("prot-fault:100%"),
        "{again}"
    );
}

fn wake_methods_preset_prints_the_study_table() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("wake.json");
    let (table, run) = suite_stdout(&["--preset", "wake-methods", "--samples", "2000"], &json);
    for header in ["latencies in µs", "max", "min", "avg", "isolated"] {
        assert!(table.contains(header), "{header} missing:\n{table}");
    }
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(
        scenarios.len(),
        3 * 2 * 2,
        "3 methods × isolated or not × 2 loads"
    );
    // What every row shares is said once above the table (render/table.rs).
    assert!(table.contains("policy fifo 95"), "{table}");
    for method in ["clock-nanosleep", "timerfd", "busy"] {
        assert_eq!(
            // Rows of the study table, whose first cell is the method (the loads table
            // below names whole scenarios, "clock-nanosleep 1 ms").
            table
                .lines()
                .filter(|l| {
                    let first = l.split('┆').next().unwrap_or("");
                    first.trim_start_matches('│').trim() == method
                })
                .count(),
            4,
            "{method} rows:\n{table}"
        );
    }
    assert!(scenarios
        .iter()
        .any(|s| !s["params"]["isolate"].as_array().unwrap().is_empty()));
}

fn interrupted_suite_resumes_where_it_stopped() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        "title = \"resume test\"\ncolumns = [\"avg\", \"max\"]\nduration = \"1s\"\n\n\
         [[matrix]]\nmethods = [\"clock-nanosleep\", \"nanosleep\", \"timerfd\", \"posix-timer\"]\n\
         periods = [\"1ms\"]\n",
    )
    .unwrap();
    let json = dir.path().join("run.json");
    let bin = common::latscope_path();
    let common = ["--warmup", "0", "-q", "--cpus", "0"];
    let child = Command::new(&bin)
        .args(["suite", "--plan"])
        .arg(&plan)
        .args(common)
        .arg("--export-json")
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1600));
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait_with_output().unwrap().status;
    assert_eq!(status.code(), Some(130));
    let first: serde_json::Value = common::read_result(&json).unwrap();
    assert_eq!(first["interrupted"], true);
    let kept = first["scenarios"].as_array().unwrap().len();
    assert!(
        (1..4).contains(&kept),
        "{kept} scenarios before the interrupt"
    );

    latscope()
        .args(["suite", "--plan"])
        .arg(&plan)
        .args(common)
        .arg("--export-json")
        .arg(&json)
        .arg("--resume")
        .assert()
        .success();
    assert_resumed_completes(&first, &json);
}

/// The resumed run completes the interrupted one: the scenario cut short stays as its
/// measured part, the rest complete it, and what was measured before is kept.
fn assert_resumed_completes(first: &serde_json::Value, json: &std::path::Path) {
    let done: serde_json::Value = common::read_result(json).unwrap();
    assert_eq!(done["interrupted"], false);
    let all = done["scenarios"].as_array().unwrap();
    // The scenario cut short stays as its measured part; the rest complete it.
    let scenarios: Vec<&serde_json::Value> =
        all.iter().filter(|s| s["interrupted"] == false).collect();
    let methods: Vec<&str> = scenarios
        .iter()
        .map(|s| s["params"]["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        ["clock-nanosleep", "nanosleep", "timerfd", "posix-timer"]
    );
    for part in all.iter().filter(|s| s["interrupted"] == true) {
        let name = part["name"].as_str().unwrap();
        assert!(name.contains(" (interrupted part 1)"), "{name}");
        let continued = scenarios
            .iter()
            .find(|s| s["params"]["extra"]["resumed_parts"][0] == name)
            .unwrap_or_else(|| panic!("no continuation of {name}"));
        assert_eq!(
            continued["params"]["extra"]["resumed_after_ns"],
            part["elapsed_ns"]
        );
    }
    // The first complete scenario is the one measured before the interrupt.
    assert_eq!(
        scenarios[0]["started_at"],
        first["scenarios"][0]["started_at"]
    );
    assert_eq!(
        scenarios[0]["threads"][0]["max_ns"],
        first["scenarios"][0]["threads"][0]["max_ns"]
    );
}

/// Runs a one-scenario suite of 3000 samples at 1 ms with checkpoints, ends it with
/// `signal` once a checkpoint holds samples, and returns the plan and the result path.
fn suite_cut_short(
    dir: &std::path::Path,
    signal: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        "title = \"resume\"\nsamples = 3000\n\n[[matrix]]\nmethods = [\"clock-nanosleep\"]\nperiods = [\"1ms\"]\n",
    )
    .unwrap();
    let json = dir.join("run.json");
    let mut child = Command::new(common::latscope_path())
        .args(["suite", "--plan"])
        .arg(&plan)
        .args(["--warmup", "0", "-q", "--cpus", &test_cpu().to_string()])
        .args(["--checkpoint", "200ms", "--export-json"])
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let v: Option<serde_json::Value> = common::read_result(&json);
        if v.is_some_and(|v| v["checkpoint"]["threads"][0]["samples"].as_u64() > Some(300)) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no checkpoint");
        std::thread::sleep(Duration::from_millis(20));
    }
    Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    child.wait().unwrap();
    (plan, json)
}

fn resume(plan: &std::path::Path, json: &std::path::Path) -> serde_json::Value {
    latscope()
        .args(["suite", "--plan"])
        .arg(plan)
        .args(["--warmup", "0", "-q", "--cpus", &test_cpu().to_string()])
        .arg("--export-json")
        .arg(json)
        .arg("--resume")
        .assert()
        .success();
    common::read_result(json).unwrap()
}

/// `--resume` continues an interrupted scenario: its measured part is kept (renamed,
/// marked interrupted) and only the samples left run, as a continuation that says so.
fn resume_continues_an_interrupted_scenario_from_what_it_measured() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let (plan, json) = suite_cut_short(dir.path(), "INT");
    let first: serde_json::Value = common::read_result(&json).unwrap();
    let measured = first["scenarios"][0]["threads"][0]["samples"]
        .as_u64()
        .unwrap();
    assert!(measured > 300 && measured < 3000, "{measured}");
    let done = resume(&plan, &json);
    assert_eq!(done["interrupted"], false);
    let s = done["scenarios"].as_array().unwrap();
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(
        s[0]["name"],
        "timer clock-nanosleep 1 ms (interrupted part 1)"
    );
    assert_eq!(s[0]["interrupted"], true);
    assert_eq!(s[0]["threads"][0]["samples"], measured);
    assert_eq!(s[1]["name"], "timer clock-nanosleep 1 ms");
    assert_eq!(s[1]["params"]["extra"]["resumed_after_samples"], measured);
    assert_eq!(s[1]["threads"][0]["samples"], 3000 - measured);
    assert_eq!(s[1]["params"]["samples"], 3000 - measured);
    // Done: a second --resume runs nothing more.
    let again = resume(&plan, &json);
    assert_eq!(again["scenarios"].as_array().unwrap().len(), 2);
}

/// After `kill -9`, `--resume` continues from the last checkpoint: its partial result is
/// kept as the scenario's first part (marked partial, with its statistics), the samples it
/// counted are not run again, and its counts are recorded in the continuation.
fn resume_continues_a_killed_scenario_from_its_checkpoint() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let (plan, json) = suite_cut_short(dir.path(), "KILL");
    let first: serde_json::Value = common::read_result(&json).unwrap();
    let partial = &first["scenarios"].as_array().unwrap()[..];
    assert_eq!(partial.len(), 1, "{partial:?}");
    assert_eq!(partial[0]["partial"], true);
    let checkpointed = first["checkpoint"]["threads"][0]["samples"]
        .as_u64()
        .unwrap();
    assert_eq!(partial[0]["threads"][0]["samples"], checkpointed);
    let done = resume(&plan, &json);
    let s = done["scenarios"].as_array().unwrap();
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(
        s[0]["name"],
        "timer clock-nanosleep 1 ms (interrupted part 1)"
    );
    assert_eq!(s[0]["partial"], true);
    assert_eq!(s[0]["threads"][0]["samples"], checkpointed);
    let extra = &s[1]["params"]["extra"];
    assert_eq!(extra["resumed_after_samples"], checkpointed);
    assert_eq!(
        extra["resumed_checkpoint"]["threads"][0]["samples"],
        checkpointed
    );
    assert_eq!(s[1]["threads"][0]["samples"], 3000 - checkpointed);
    assert!(done["checkpoint"].is_null());
}

fn bad_plans_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("bad.toml");
    std::fs::write(&plan, "[[matrix]]\nmethods = [\"sleepy\"]\n").unwrap();
    let out = latscope()
        .args(["suite", "--plan"])
        .arg(&plan)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'sleepy'"));
    std::fs::write(&plan, "[[matrix]]\nmethod = [\"busy\"]\n").unwrap();
    let out = latscope()
        .args(["suite", "--plan"])
        .arg(&plan)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("bad.toml") && err.contains("method"), "{err}");
    let out = latscope()
        .args(["suite", "--preset", "nope"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("memory-load, wake-methods, wake-competitors, rt-cost, irq-response, quick"));
}

fn a_bad_second_block_is_refused_before_the_first_scenario_runs() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("two-blocks.toml");
    let json = dir.path().join("run.json");
    // Block 1 is fine; block 2 shields every CPU, then (second plan) pins a load to a CPU
    // that does not exist. Each scenario would take 30 s: refusing must take none of it.
    let first = "duration = \"30s\"\ncpus = \"all\"\n\n[[matrix]]\nmethods = [\"clock-nanosleep\"]\npolicies = [\"other\"]\n\n";
    for (second, key, needle) in [
        (
            "[[matrix]]\nmethods = [\"timerfd\"]\npolicies = [\"other\"]\nisolate = [false, true]\n",
            "isolate",
            "nothing would be left",
        ),
        (
            "[[matrix]]\nmethods = [\"timerfd\"]\npolicies = [\"other\"]\nloads = [\"none\", \"cpu:50%,cpus=4095\"]\n",
            "loads",
            "CPU 4095 is not online",
        ),
    ] {
        std::fs::write(&plan, format!("{first}{second}")).unwrap();
        let start = std::time::Instant::now();
        let out = latscope()
            .args(["suite", "--warmup", "0", "--plan"])
            .arg(&plan)
            .arg("--export-json")
            .arg(&json)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("two-blocks.toml, [[matrix]] block 2, ") && err.contains(key),
            "the error should name block 2 and `{key}`: {err}"
        );
        assert!(err.contains(needle), "{err}");
        assert!(start.elapsed() < Duration::from_secs(10), "a scenario ran");
        assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
        assert!(!json.exists(), "a result was written: a scenario ran");
    }
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    common::test_cases![
        memory_load_preset_prints_the_study_table,
        wake_methods_preset_prints_the_study_table,
        interrupted_suite_resumes_where_it_stopped,
        resume_continues_an_interrupted_scenario_from_what_it_measured,
        resume_continues_a_killed_scenario_from_its_checkpoint,
        bad_plans_get_clear_errors,
        a_bad_second_block_is_refused_before_the_first_scenario_runs
    ]
}
