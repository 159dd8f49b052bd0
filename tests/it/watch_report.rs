//! Issue 39's two halves end to end: `latscope watch` writes interval files and `latscope
//! report DIR` reads them back as the long-term view (a row per file with the file's own
//! counts; a SIGKILL and restart inside an interval read back as a gap in the table, the
//! plot's data and the per-second maxima on either side of it); the packaged
//! /etc/latscope/watch.toml, every key uncommented, accepted by `latscope watch --config`.

use crate::common;
use crate::watch::{assert_file_consistent, files, samples, stop, unix_s, watch};
use common::*;
use latscope::result::Run;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// `latscope report DIR --export-json` of the directory: the long-term view as JSON, and
/// the terminal text.
fn report(dir: &Path) -> (serde_json::Value, String) {
    let json = tempfile::NamedTempFile::new().unwrap();
    let out = latscope()
        .arg("report")
        .arg(dir)
        .arg("--export-json")
        .arg(json.path())
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let view = serde_json::from_slice(&std::fs::read(json.path()).unwrap()).unwrap();
    (view, text)
}

/// `watch --rotate 2s -D 7s`, then `report DIR`: a row per interval file in time order,
/// each with the file's samples and missed periods.
fn rotated_files_report_a_row_each_with_their_counts() {
    let dir = tempfile::tempdir().unwrap();
    {
        let _lock = latency_lock();
        let w = watch(dir.path(), &["--rotate", "2s", "-D", "7s"]);
        let out = w.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let paths = files(dir.path());
    assert!(paths.len() >= 3, "{paths:?}");
    let (view, text) = report(dir.path());
    let rows = view["intervals"].as_array().unwrap();
    assert_eq!(rows.len(), paths.len(), "a row per file: {text}");
    for (row, path) in rows.iter().zip(&paths) {
        let run = read_result(path).unwrap();
        assert_file_consistent(&run);
        let name = path.file_name().unwrap().to_str().unwrap();
        assert_eq!(row["file"], name, "time order = name order");
        assert_eq!(row["samples"].as_u64(), Some(samples(&run)), "{name}");
        assert_eq!(
            row["missed"],
            crate::watch::thread0(&run)["missed"],
            "{name}"
        );
        assert_eq!(row["started_at"], run["started_at"], "{name}");
        assert!(text.contains(name), "{name} not in {text}");
    }
}

/// SIGKILL inside a 30 s interval, 2 s without a watch, then a new watch: `report DIR`
/// shows the file's gap (its row, the gap line, the plot's gaps), and the per-second maxima
/// of the first life end before the gap, those of the second start after it.
fn a_restart_inside_an_interval_reads_back_with_its_gap() {
    let dir = tempfile::tempdir().unwrap();
    {
        let _lock = latency_lock();
        while now_s() % 30 > 8 {
            std::thread::sleep(Duration::from_millis(200));
        }
        let mut first = watch(dir.path(), &["--rotate", "30s"]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while files(dir.path()).is_empty() {
            assert!(Instant::now() < deadline, "no file after the first samples");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(1_200));
        first.kill().unwrap();
        first.wait().unwrap();
        std::thread::sleep(Duration::from_secs(2));
        let second = watch(dir.path(), &["--rotate", "30s"]);
        std::thread::sleep(Duration::from_secs(4));
        stop(second);
    }
    let paths = files(dir.path());
    assert_eq!(paths.len(), 1, "{paths:?}");
    let raw = read_result(&paths[0]).unwrap();
    let watch_gaps = raw["scenarios"][0]["params"]["extra"]["watch_gaps"].clone();
    let (from, to) = (
        unix_s(watch_gaps[0][0].as_str().unwrap()) as f64,
        unix_s(watch_gaps[0][1].as_str().unwrap()) as f64,
    );
    let (view, text) = report(dir.path());
    assert_eq!(view["gaps"].as_array().unwrap().len(), 1, "{view}");
    assert_eq!(
        (
            view["gaps"][0]["from"].as_f64(),
            view["gaps"][0]["to"].as_f64()
        ),
        (Some(from), Some(to))
    );
    assert_eq!(view["intervals"][0]["gaps"], view["gaps"]);
    assert!(text.contains("(1 gap)"), "the row marks its gap: {text}");
    assert!(text.contains("gap: nothing measured from"), "{text}");
    // The plot's per-second slots: none in the gap, the first life's before it, the
    // second life's after it, every measured second placed once.
    let run = Run::load(&paths[0]).unwrap();
    let per_second = run.scenarios[0].threads[0].per_second_max_ns.clone();
    let name = paths[0].file_name().unwrap().to_string_lossy().to_string();
    let lt = latscope::report::long_term::build(vec![(name, run)], None, None).unwrap();
    let row = &lt.intervals[0];
    let slots: Vec<(f64, u64)> = (row.second_maxima_ns.iter().enumerate())
        .filter(|(_, v)| **v > 0)
        .map(|(k, v)| (row.start_s + k as f64, *v))
        .collect();
    let placed: Vec<u64> = slots.iter().map(|s| s.1).collect();
    assert_eq!(placed, per_second, "every measured second once, in order");
    assert!(
        slots.iter().all(|&(t, _)| t + 1.0 <= from || t >= to),
        "a second inside the gap {from}..{to}: {slots:?}"
    );
    let stored_before = raw["scenarios"][0]["params"]["extra"]["watch_gap_seconds"][0]
        .as_u64()
        .expect("watch_gap_seconds");
    let first_life = slots.iter().filter(|&&(t, _)| t + 1.0 <= from).count();
    assert_eq!(first_life as u64, stored_before, "{slots:?}");
    assert!(slots.iter().any(|&(t, _)| t + 1.0 <= from), "{slots:?}");
    assert!(slots.iter().any(|&(t, _)| t >= to), "{slots:?}");
}

/// The packaged watch.toml with every key uncommented (safe values for the keys naming
/// this machine's CPUs, ports, paths and a hook) is accepted by `watch --config`, which
/// then measures as it says.
fn the_packaged_watch_toml_uncommented_is_accepted() {
    let packaged = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/deb/watch.toml"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("watch");
    let cpu = test_cpu();
    let port = crate::watch::free_port();
    let key = regex::Regex::new(r"^# ([a-z_]+) = (.*)$").unwrap();
    let mut text = String::new();
    let mut keys = Vec::new();
    for line in packaged.lines() {
        let Some(k) = key.captures(line) else {
            continue;
        };
        let value = match &k[1] {
            "cpus" | "isolate" => format!("\"{cpu}\""),
            "load" => format!("[\"cpu:20%,cpus={}\"]", cpu.saturating_sub(1)),
            "dir" => format!("{:?}", data.display().to_string()),
            "listen" => format!("\"127.0.0.1:{port}\""),
            "on_fail" => "[\"true\", \"--from-watch-toml\"]".to_string(),
            _ => k[2].to_string(),
        };
        keys.push(k[1].to_string());
        text.push_str(&format!("{} = {value}\n", &k[1]));
    }
    for wanted in [
        "method",
        "load",
        "isolate",
        "dma_latency",
        "on_fail",
        "readiness",
    ] {
        assert!(keys.iter().any(|k| k == wanted), "{wanted} not in {keys:?}");
    }
    let config = dir.path().join("watch.toml");
    std::fs::write(&config, &text).unwrap();
    let _lock = latency_lock();
    let out = latscope()
        .args(["watch", "--config"])
        .arg(&config)
        .args(["-D", "2s"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}\n{stderr}");
    let paths = files(&data);
    assert_eq!(paths.len(), 1, "{paths:?} {stderr}");
    let run = read_result(&paths[0]).unwrap();
    assert_eq!(
        crate::watch::thread0(&run)["cpu"].as_u64(),
        Some(cpu as u64),
        "{text}"
    );
}

pub fn cases() -> Vec<common::Case> {
    vec![
        common::case(
            "rotated_files_report_a_row_each_with_their_counts",
            rotated_files_report_a_row_each_with_their_counts,
        ),
        common::case(
            "a_restart_inside_an_interval_reads_back_with_its_gap",
            a_restart_inside_an_interval_reads_back_with_its_gap,
        ),
        common::case(
            "the_packaged_watch_toml_uncommented_is_accepted",
            the_packaged_watch_toml_uncommented_is_accepted,
        ),
    ]
}
