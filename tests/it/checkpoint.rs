//! A killed run's next command: `latscope timer -D 60s --export-json k.json` killed with
//! SIGKILL, then `latscope report k.json` shows the samples so far (count, percentiles,
//! max) marked partial, and `--resume` continues that single scenario. The statistics of
//! the checkpoint are checked against the samples the continuation did not repeat.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn timer(json: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(latscope_path());
    cmd.args(["timer", "--cpus", &test_cpu().to_string(), "--warmup", "0"])
        .args(["-q", "--checkpoint", "200ms", "--export-json"])
        .arg(json)
        .args(extra);
    cmd
}

/// Waits until the file holds a checkpoint with at least `samples` samples.
fn wait_for_samples(child: &mut Child, json: &Path, samples: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before its checkpoint"
        );
        if let Some(v) = read_result(json) {
            if v["checkpoint"]["threads"][0]["samples"].as_u64() >= Some(samples) {
                return v;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no checkpoint of {samples} samples"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGKILL, then `report` prints the partial scenario's statistics; `--resume` runs the
/// samples left and keeps the checkpoint as the scenario's first part.
fn killed_timer_reports_its_checkpoint_and_resumes() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("k.json");
    let mut child = timer(&json, &["-D", "60s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_samples(&mut child, &json, 500);
    child.kill().unwrap();
    child.wait().unwrap();
    let out = latscope().arg("report").arg(&json).output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}");
    let saved = read_result(&json).unwrap();
    let part = &saved["scenarios"][0];
    assert_eq!(part["partial"], true, "{part}");
    let th = &part["threads"][0];
    let samples = th["samples"].as_u64().unwrap();
    assert_eq!(saved["checkpoint"]["threads"][0]["samples"], samples);
    // The histogram holds every sample and its percentiles are ordered within min/max.
    let counted: u64 = th["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[1].as_u64().unwrap())
        .sum();
    assert_eq!(counted, samples);
    let p = |k: &str| th[k].as_u64().unwrap();
    assert!(p("min_ns") <= p("p50_ns") && p("p50_ns") <= p("p99_ns") && p("p99_ns") <= p("max_ns"));
    assert!(p("min_ns") > 0, "{th}");
    // The user's table: the samples so far, the percentiles and the max, marked partial.
    assert!(table.contains("(partial)"), "{table}");
    assert!(
        table.contains("partial: 'timer clock-nanosleep 1 ms'"),
        "{table}"
    );
    assert!(table.contains(&samples.to_string()), "{table}");
    let max_us = format!("{:.2}", p("max_ns") as f64 / 1000.0);
    assert!(table.contains(&max_us), "max {max_us} not in\n{table}");

    summaries_of_the_killed_run_mark_it_partial(&json, samples);

    // --resume: the 60 s less what the checkpoint measured would take long; a sample
    // bound shows the continuation counts on from the checkpoint.
    let status = timer(&json, &["-D", "60s", "--resume"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(|mut c| {
            std::thread::sleep(Duration::from_millis(1500));
            signal_int(&c);
            c.wait().unwrap()
        })
        .unwrap();
    assert_eq!(status.code(), Some(130));
    let done = read_result(&json).unwrap();
    let s = done["scenarios"].as_array().unwrap();
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(
        s[0]["name"],
        "timer clock-nanosleep 1 ms (interrupted part 1)"
    );
    assert_eq!(s[0]["partial"], true);
    assert_eq!(s[0]["threads"][0]["samples"], samples);
    assert_eq!(s[1]["params"]["extra"]["resumed_after_samples"], samples);
    assert!(s[1]["threads"][0]["samples"].as_u64().unwrap() > 0);
    assert_eq!(
        s[1]["params"]["duration_ns"].as_u64().unwrap(),
        60_000_000_000 - s[0]["elapsed_ns"].as_u64().unwrap()
    );
}

/// The user's next command after the kill: `latscope report k.json --export-html
/// --export-markdown --export-junit` renders the journal, each file showing the scenario
/// with its samples so far, marked partial.
fn summaries_of_the_killed_run_mark_it_partial(json: &Path, samples: u64) {
    let dir = tempfile::tempdir().unwrap();
    let file = |ext: &str| dir.path().join(format!("k.{ext}"));
    let out = latscope()
        .arg("report")
        .arg(json)
        .arg("--export-html")
        .arg(file("html"))
        .arg("--export-markdown")
        .arg(file("md"))
        .arg("--export-junit")
        .arg(file("xml"))
        .output()
        .unwrap();
    assert_success(out);
    let read = |ext: &str| std::fs::read_to_string(file(ext)).unwrap();
    let (html, md, junit) = (read("html"), read("md"), read("xml"));
    let count = samples.to_string();
    assert!(html.contains("clock-nanosleep (partial)"), "{html}");
    assert!(
        html.contains("<dt>partial</dt><dd>yes: still measuring"),
        "{html}"
    );
    assert!(
        html.contains(&format!(">{count}<")),
        "{count} samples not in the HTML"
    );
    assert!(
        md.contains(&format!("clock-nanosleep (partial) | {count} |")),
        "{md}"
    );
    assert!(
        md.contains("*partial: 'timer clock-nanosleep 1 ms' was still measuring"),
        "{md}"
    );
    assert!(
        junit.contains("<property name=\"partial\" value=\"checkpoint after"),
        "{junit}"
    );
    assert!(
        junit.contains(&format!("<property name=\"samples\" value=\"{count}\"/>")),
        "{junit}"
    );
}

/// A killed wake run: `report` labels the partial thread as the finished run labels the
/// wakee's (`response`, not the timer's `latency`), in its table and its JSON.
fn killed_wake_labels_its_partial_thread_response() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("w.json");
    let cpu = test_cpu().to_string();
    let mut child = Command::new(latscope_path())
        .args(["wake", "--mechanism", "eventfd", "--waker-cpu", "0"])
        .args(["--wakee-cpu", &cpu, "-D", "60s", "--warmup", "0", "-q"])
        .args(["--checkpoint", "200ms", "--export-json"])
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_samples(&mut child, &json, 100);
    child.kill().unwrap();
    child.wait().unwrap();
    let again = dir.path().join("again.json");
    let out = latscope()
        .arg("report")
        .arg(&json)
        .arg("--export-json")
        .arg(&again)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}");
    let run = read_result(&again).unwrap();
    let th = &run["scenarios"][0]["threads"][0];
    assert_eq!(run["scenarios"][0]["partial"], true, "{th}");
    assert_eq!(th["metric"], "response", "{th}");
    assert!(table.contains("response"), "{table}");
    assert!(!table.contains("latency (partial)"), "{table}");
}

fn signal_int(child: &Child) {
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
}

pub fn cases() -> Vec<common::Case> {
    common::test_cases![
        killed_timer_reports_its_checkpoint_and_resumes,
        killed_wake_labels_its_partial_thread_response
    ]
}
