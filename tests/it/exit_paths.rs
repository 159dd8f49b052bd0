//! The exit-path matrix (issue 12): every workload that changes the system or starts
//! something × every way a run ends (normal, an error mid-run — an `--export-csv`
//! directory removed —, SIGINT, two SIGINTs, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGKILL +
//! `latscope restore`) leaves the system as it was (cpusets, IRQ and workqueue masks,
//! cpu_dma_latency, RT throttling, tracefs instances, state files, load processes and
//! scratch directories), a valid JSON file with what was measured (after SIGKILL: up to
//! the last checkpoint) and the documented exit code. Prints its table, "N of N clean".
//! Beside it, one regression test per item (3-7, 15) and a closed stdout pipe.

use crate::common;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Markers in the exec load's grandchildren's command lines (`sleep 7301`, `sleep 7302`).
const EXEC_LOAD: &str = "exec:\"sh -c 'sleep 7301 & sleep 7302'\"";
const MARKERS: [&str; 2] = ["7301", "7302"];

pub(crate) type Snapshot = BTreeMap<String, String>;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| format!("<{e}>"))
}

fn dir_names(path: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(path)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Every cpuset's CPUs, memory nodes and balancing flags (v1), and latscope's v2 cgroups.
fn cpusets(dir: &Path, rel: &str, out: &mut Snapshot) {
    for knob in [
        "cpuset.cpus",
        "cpuset.mems",
        "cpuset.cpu_exclusive",
        "cpuset.sched_load_balance",
    ] {
        let p = dir.join(knob);
        if p.exists() {
            out.insert(format!("cpuset {rel}/{knob}"), read(&p));
        }
    }
    for name in dir_names(dir) {
        let child = dir.join(&name);
        if child.is_dir() {
            cpusets(&child, &format!("{rel}/{name}"), out);
        }
    }
}

/// The global state a run may change.
pub(crate) fn system_state() -> Snapshot {
    let mut s = Snapshot::new();
    cpusets(Path::new("/sys/fs/cgroup/cpuset"), "", &mut s);
    for name in dir_names(Path::new("/sys/fs/cgroup/unified")) {
        if name.starts_with("latscope") {
            s.insert(format!("cgroup v2 {name}"), "present".into());
        }
    }
    for name in dir_names(Path::new("/proc/irq")) {
        let p = Path::new("/proc/irq").join(&name).join("smp_affinity_list");
        if p.exists() {
            s.insert(format!("irq {name}"), read(&p));
        }
    }
    s.insert(
        "irq default_smp_affinity".into(),
        read(Path::new("/proc/irq/default_smp_affinity")),
    );
    s.insert(
        "workqueue cpumask".into(),
        read(Path::new("/sys/devices/virtual/workqueue/cpumask")),
    );
    s.insert(
        "cpu_dma_latency".into(),
        format!("{:?}", latscope::sys::dma_latency::current_us()),
    );
    s.insert(
        "sched_rt_runtime_us".into(),
        read(Path::new("/proc/sys/kernel/sched_rt_runtime_us")),
    );
    s
}

pub(crate) fn diff(before: &Snapshot, after: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in before {
        match after.get(k) {
            Some(a) if a == v => {}
            Some(a) => out.push(format!("{k}: {} -> {}", v.trim(), a.trim())),
            None => out.push(format!("{k} gone")),
        }
    }
    for k in after.keys() {
        if !before.contains_key(k) {
            out.push(format!("{k} appeared"));
        }
    }
    out
}

/// What run `pid` may have left: its tracefs instance, isolation state file, io scratch
/// directories, and processes of the exec load.
fn leftovers_of(pid: u32) -> Vec<String> {
    let mut out = Vec::new();
    let instance = format!("latscope-{pid}");
    for root in [
        "/sys/kernel/tracing/instances",
        "/sys/kernel/debug/tracing/instances",
    ] {
        if dir_names(Path::new(root)).contains(&instance) {
            out.push(format!("tracefs instance {root}/{instance}"));
        }
    }
    for dir in ["/run/latscope", "/var/tmp/latscope"] {
        for name in dir_names(Path::new(dir)) {
            if name.contains(&format!("-{pid}.")) {
                out.push(format!("state file {dir}/{name}"));
            }
        }
    }
    let prefix = format!("latscope-io-{pid}-");
    for name in dir_names(&std::env::temp_dir()) {
        if name.starts_with(&prefix) {
            out.push(format!("scratch directory {name}"));
        }
    }
    for name in dir_names(Path::new("/proc")) {
        if name.parse::<u32>().is_err() {
            continue;
        }
        let cmdline = std::fs::read(format!("/proc/{name}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.starts_with("sleep ") && MARKERS.iter().any(|m| cmdline.contains(m)) {
            out.push(format!("process {name} ({})", cmdline.trim()));
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Ending {
    Normal,
    /// An `--export-csv` directory removed while the run measures: the save after the
    /// scenario fails (exit 1) after the JSON beside it was written.
    ErrorMidRun,
    Sigint,
    TwoSigints,
    Sigterm,
    Sighup,
    Sigquit,
    Sigpipe,
    SigkillRestore,
}

impl Ending {
    const ALL: [Ending; 9] = [
        Ending::Normal,
        Ending::ErrorMidRun,
        Ending::Sigint,
        Ending::TwoSigints,
        Ending::Sigterm,
        Ending::Sighup,
        Ending::Sigquit,
        Ending::Sigpipe,
        Ending::SigkillRestore,
    ];

    fn label(self) -> &'static str {
        match self {
            Ending::Normal => "normal",
            Ending::ErrorMidRun => "error mid-run",
            Ending::Sigint => "SIGINT",
            Ending::TwoSigints => "2×SIGINT",
            Ending::Sigterm => "SIGTERM",
            Ending::Sighup => "SIGHUP",
            Ending::Sigquit => "SIGQUIT",
            Ending::Sigpipe => "SIGPIPE",
            Ending::SigkillRestore => "SIGKILL+restore",
        }
    }
}

fn signal(child: &Child, sig: &str) {
    Command::new("kill")
        .args([&format!("-{sig}"), &child.id().to_string()])
        .status()
        .unwrap();
}

/// Waits for a checkpoint with at least one sample (the run is measuring) or the end.
fn wait_for_checkpoint(child: &mut Child, path: &Path) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            let mut stderr = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut stderr);
            }
            return Err(format!("ended before measuring: {status}: {stderr}"));
        }
        if let Ok(text) = std::fs::read_to_string(path) {
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                let measuring = v["checkpoint"]["threads"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t["samples"].as_u64() > Some(0)));
                if measuring {
                    return Ok(());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err("no checkpoint with samples within 20 s".into())
}

fn wait_with_timeout(child: &mut Child, limit: Duration) -> Result<Option<i32>, String> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(status.code());
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("did not end within {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The samples a result file holds: finished scenarios' threads, else the checkpoint's.
fn measured_samples(v: &Value) -> u64 {
    let finished: u64 = v["scenarios"]
        .as_array()
        .map(|s| {
            s.iter()
                .flat_map(|s| s["threads"].as_array().cloned().unwrap_or_default())
                .map(|t| t["samples"].as_u64().unwrap_or(0))
                .sum()
        })
        .unwrap_or(0);
    let partial: u64 = v["checkpoint"]["threads"]
        .as_array()
        .map(|t| t.iter().map(|t| t["samples"].as_u64().unwrap_or(0)).sum())
        .unwrap_or(0);
    finished.max(partial)
}

/// Runs one cell; `Err` says what was not clean.
fn run_cell(args: &[String], ending: Ending, dir: &Path) -> Result<(), String> {
    let json = dir.join(format!(
        "{}.json",
        ending.label().replace(['×', '+', ' '], "_")
    ));
    let _ = std::fs::remove_file(&json);
    let csv_dir = dir.join("csv");
    let mut csv_args: Vec<std::ffi::OsString> = Vec::new();
    if ending == Ending::ErrorMidRun {
        std::fs::create_dir_all(&csv_dir).map_err(|e| e.to_string())?;
        csv_args.push("--export-csv".into());
        csv_args.push(csv_dir.join("run.csv").into());
    }
    let before = system_state();
    let duration = match ending {
        Ending::Normal => "1s",
        Ending::ErrorMidRun => "2s",
        _ => "30s",
    };
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("latscope"))
        .args(args)
        .args(&csv_args)
        .args(["-D", duration, "--warmup", "0", "-q"])
        .args(["--checkpoint", "200ms", "--export-json"])
        .arg(&json)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let pid = child.id();
    let mut problems = Vec::new();
    if ending != Ending::Normal {
        if let Err(e) = wait_for_checkpoint(&mut child, &json) {
            let _ = child.kill();
            let _ = child.wait();
            let _ = latscope().arg("restore").output();
            return Err(e);
        }
    }
    match ending {
        Ending::Normal => {}
        Ending::ErrorMidRun => {
            let _ = std::fs::remove_dir_all(&csv_dir);
        }
        Ending::Sigint => signal(&child, "INT"),
        Ending::TwoSigints => {
            signal(&child, "INT");
            std::thread::sleep(Duration::from_millis(30));
            signal(&child, "INT");
        }
        Ending::Sigterm => signal(&child, "TERM"),
        Ending::Sighup => signal(&child, "HUP"),
        Ending::Sigquit => signal(&child, "QUIT"),
        Ending::Sigpipe => signal(&child, "PIPE"),
        Ending::SigkillRestore => signal(&child, "KILL"),
    }
    let code = wait_with_timeout(&mut child, Duration::from_secs(30))?;
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    let want = match ending {
        Ending::Normal => Some(0),
        Ending::ErrorMidRun => Some(1),
        Ending::SigkillRestore => None,
        _ => Some(130),
    };
    if code != want {
        problems.push(format!(
            "exit code {code:?}, expected {want:?}: {}",
            stderr.lines().last().unwrap_or("")
        ));
    }
    if ending == Ending::ErrorMidRun && !(stderr.contains("writing") && stderr.contains("run.csv"))
    {
        problems.push(format!("the error does not name the CSV: {stderr}"));
    }
    if ending == Ending::SigkillRestore {
        let out = latscope()
            .arg("restore")
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            problems.push(format!(
                "restore failed: {}",
                String::from_utf8_lossy(&out.stdout)
            ));
        }
    }
    // Whatever the run left is judged after a moment for the kernel to reap.
    std::thread::sleep(Duration::from_millis(200));
    problems.extend(diff(&before, &system_state()));
    problems.extend(leftovers_of(pid));
    match std::fs::read_to_string(&json)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string()))
    {
        Err(e) => problems.push(format!("no valid JSON: {e}")),
        Ok(v) => {
            if measured_samples(&v) == 0 {
                problems.push("the JSON holds no samples".into());
            }
            let interrupted = v["interrupted"].as_bool();
            let expected = Some(ending != Ending::Normal);
            // After an error the file is the last save: complete (one scenario) or
            // between scenarios (a suite, marked interrupted); either is honest.
            if ending != Ending::ErrorMidRun && interrupted != expected {
                problems.push(format!("interrupted: {interrupted:?}"));
            }
            let by = v["interrupted_by"].as_str();
            let expected_by = match ending {
                Ending::Sigint | Ending::TwoSigints => Some("SIGINT"),
                Ending::Sigterm => Some("SIGTERM"),
                Ending::Sighup => Some("SIGHUP"),
                Ending::Sigquit => Some("SIGQUIT"),
                Ending::Sigpipe => Some("SIGPIPE"),
                _ => None,
            };
            // Two SIGINTs abort before the final save: the checkpoint has no signal name.
            if ending != Ending::TwoSigints && by != expected_by {
                problems.push(format!("interrupted_by: {by:?}"));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

fn exit_path_matrix_leaves_the_system_as_it_was() {
    if latscope::sys::process::effective_uid() != 0 {
        eprintln!("SKIPPED: the exit-path matrix needs root");
        return;
    }
    let _lock = latency_lock();
    let cpu = test_cpu().to_string();
    let mut workloads: Vec<(&str, Vec<String>)> = Vec::new();
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    workloads.push(("plain timer", owned(&["timer", "-a", &cpu])));
    if latscope::isolate::check_available().is_ok() && cpu != "0" {
        workloads.push((
            "--isolate",
            owned(&["timer", "-a", &cpu, "--isolate", &cpu]),
        ));
    }
    workloads.push((
        "--dma-latency 0",
        owned(&["timer", "-a", &cpu, "--dma-latency", "0"]),
    ));
    workloads.push((
        "exec grandchildren + io",
        owned(&[
            "timer",
            "-a",
            &cpu,
            "--load",
            EXEC_LOAD,
            "--load",
            "io:10%,n=1,size=4M",
        ]),
    ));
    workloads.push((
        "wake --competitors 8",
        owned(&["wake", "--competitors", "8"]),
    ));
    workloads.push(("noise", owned(&["noise", "-a", &cpu])));
    workloads.push(("net (loopback)", owned(&["net"])));
    workloads.push((
        "suite --preset quick",
        owned(&["suite", "--preset", "quick", "--cpus", &cpu]),
    ));
    if no_tracing().is_none() {
        workloads.push(("--trace", owned(&["timer", "-a", &cpu, "--trace"])));
    }
    let dir = tempfile::tempdir().unwrap();
    // Nothing of an earlier killed run may count against this one.
    let _ = latscope().arg("restore").output();
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for (name, args) in &workloads {
        let mut cells = Vec::new();
        for ending in Ending::ALL {
            let started = Instant::now();
            let outcome = run_cell(args, ending, dir.path());
            cells.push(if outcome.is_ok() { "clean" } else { "DIRTY" });
            if let Err(e) = outcome {
                failures.push(format!("{name} × {}: {e}", ending.label()));
                let _ = latscope().arg("restore").output();
            }
            eprintln!(
                "{name} × {}: {:.1} s",
                ending.label(),
                started.elapsed().as_secs_f64()
            );
        }
        rows.push((name.to_string(), cells));
    }
    let total = rows.len() * Ending::ALL.len();
    let clean = total - failures.len();
    let mut table = format!("{:<26}", "workload \\ ending");
    for e in Ending::ALL {
        table.push_str(&format!("{:>16}", e.label()));
    }
    table.push('\n');
    for (name, cells) in &rows {
        table.push_str(&format!("{name:<26}"));
        for c in cells {
            table.push_str(&format!("{c:>16}"));
        }
        table.push('\n');
    }
    println!("{table}{clean} of {total} clean");
    for f in &failures {
        println!("  {f}");
    }
    assert!(
        failures.is_empty(),
        "{clean} of {total} clean:\n{}",
        failures.join("\n")
    );
}

fn spawn_timer(extra: &[&str], json: &Path) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("latscope"))
        .args([
            "timer",
            "-a",
            &test_cpu().to_string(),
            "--warmup",
            "0",
            "-q",
        ])
        .args(extra)
        .args(["--checkpoint", "200ms", "--export-json"])
        .arg(json)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn load_processes() -> Vec<String> {
    leftovers_of(0)
        .into_iter()
        .filter(|l| l.starts_with("process"))
        .collect()
}

/// Item 4: the exec load's grandchildren die with a SIGKILLed latscope (PID namespace).
fn item4_exec_grandchildren_die_with_a_sigkilled_run() {
    if latscope::sys::process::effective_uid() != 0 {
        eprintln!("SKIPPED: needs root (PID namespace)");
        return;
    }
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut child = spawn_timer(&["-D", "30s", "--load", EXEC_LOAD], &json);
    wait_for_checkpoint(&mut child, &json).unwrap();
    assert_eq!(load_processes().len(), 2, "{:?}", load_processes());
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while !load_processes().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(load_processes(), Vec::<String>::new());
}

/// Item 5: `latscope restore` removes the io load's scratch directories of dead runs and
/// says so; a live run's are kept.
fn item5_restore_removes_scratch_directories_of_dead_runs() {
    // Another test's `latscope restore` would remove the planted directory first.
    let _lock = latency_lock();
    let mut dead = Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let tmp = std::env::temp_dir();
    let stale = tmp.join(format!("latscope-io-{dead_pid}-test"));
    let live = tmp.join(format!("latscope-io-{}-test", std::process::id()));
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("io-0"), b"scratch").unwrap();
    std::fs::create_dir_all(&live).unwrap();
    let out = latscope().arg("restore").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let _ = std::fs::remove_dir_all(&live);
    assert!(!stale.exists(), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "removed io load scratch directory {}",
            stale.display()
        )),
        "{stdout}"
    );
    assert!(!stdout.contains(&live.display().to_string()), "{stdout}");
}

/// Item 5: SIGKILL loses at most one `--checkpoint`: the file holds the running
/// scenario's counts, marked partial, and says interrupted.
fn item5_sigkill_keeps_the_last_checkpoint() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut child = spawn_timer(&["-D", "30s"], &json);
    wait_for_checkpoint(&mut child, &json).unwrap();
    std::thread::sleep(Duration::from_millis(700));
    child.kill().unwrap();
    child.wait().unwrap();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["checkpoint"]["partial"], true);
    assert_eq!(v["checkpoint"]["scenario"], "timer clock-nanosleep 1ms");
    let samples = v["checkpoint"]["threads"][0]["samples"].as_u64().unwrap();
    // At 1 ms, ~0.9 s measured before the kill; the last checkpoint is ≤ 200 ms older.
    assert!(samples >= 300, "{samples} samples in the last checkpoint");
}

/// Item 6: `--resume` refuses a file written by another plan, naming it.
fn item6_resume_refuses_another_plans_file() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut child = spawn_timer(&["-D", "300ms"], &json);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let out = latscope()
        .args([
            "suite",
            "--preset",
            "quick",
            "--samples",
            "100",
            "--resume",
            "-q",
        ])
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&json.display().to_string()) && stderr.contains("another plan"),
        "{stderr}"
    );
}

/// Item 6: a suite killed after its first scenario leaves a file that says interrupted.
fn item6_killed_suite_says_interrupted() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("suite.json");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("latscope"))
        .args(["suite", "--preset", "quick", "--samples", "300", "-q"])
        .args(["--cpus", &test_cpu().to_string(), "--export-json"])
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let saved = loop {
        let v: Option<Value> = std::fs::read_to_string(&json)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        if let Some(v) = v.filter(|v| v["scenarios"].as_array().is_some_and(|s| !s.is_empty())) {
            break v;
        }
        assert!(Instant::now() < deadline, "no scenario saved in 30 s");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(saved["interrupted"], true, "saved between scenarios");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    assert!(v["plan_hash"].is_string());
}

/// Item 7: a second run on the same `--export-json` refuses to start, naming the path.
fn item7_second_run_on_the_same_export_json_refuses() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut first = spawn_timer(&["-D", "30s"], &json);
    wait_for_checkpoint(&mut first, &json).unwrap();
    let out = latscope()
        .args(["timer", "-a", &test_cpu().to_string(), "-D", "1s", "-q"])
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap();
    signal(&first, "INT");
    let first_code = first.wait().unwrap().code();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains(&json.display().to_string())
            && errors[0].contains("another latscope run"),
        "{stderr}"
    );
    assert_eq!(first_code, Some(130));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        v["interrupted_by"], "SIGINT",
        "the first run's result is intact"
    );
}

/// Item 3: SIGHUP (a closed terminal or ssh session) is an exit path like Ctrl-C: the
/// system is restored, what was measured is saved marked interrupted by SIGHUP, exit 130.
fn item3_sighup_restores_and_saves_marked_interrupted() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let before = latscope::sys::dma_latency::current_us();
    let mut child = spawn_timer(&["-D", "30s", "--dma-latency", "0"], &json);
    wait_for_checkpoint(&mut child, &json).unwrap();
    signal(&child, "HUP");
    let code = wait_with_timeout(&mut child, Duration::from_secs(10)).unwrap();
    assert_eq!(code, Some(130));
    assert_eq!(latscope::sys::dma_latency::current_us(), before);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["interrupted_by"], "SIGHUP");
    assert!(
        v["checkpoint"].is_null(),
        "the final save replaces the checkpoint"
    );
    assert!(v["scenarios"][0]["threads"][0]["samples"].as_u64() > Some(0));
}

/// Item 15: a conflict with another run (the `--export-json` lock, the isolation lock) is
/// not bad input: exit 5, one line, before anything is measured.
fn item15_runtime_conflict_with_another_run_exits_5() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    // The lock beside a result file: DIR/.NAME.lock (runner::output_lock_path).
    let held = dir.path().join(".run.json.lock");
    let _other = latscope::sys::filelock::FileLock::try_exclusive(&held)
        .unwrap()
        .unwrap();
    let cpu = test_cpu().to_string();
    let out = latscope()
        .args(["timer", "-a", &cpu, "-l", "10", "-q", "--export-json"])
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("another latscope run"), "{stderr}");
    assert!(!json.exists(), "the refused run wrote a result");
    if latscope::sys::process::effective_uid() == 0
        && latscope::isolate::check_available().is_ok()
        && cpu != "0"
    {
        let dir = latscope::isolate::state_dir();
        std::fs::create_dir_all(&dir).unwrap();
        let _isolating =
            latscope::sys::filelock::FileLock::try_exclusive(&dir.join("isolate.lock"))
                .unwrap()
                .expect("no other run isolates while the latency lock is held");
        let out = latscope()
            .args(["timer", "-a", &cpu, "--isolate", &cpu, "-l", "10", "-q"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(5), "{stderr}");
        assert!(stderr.contains("isolating CPUs right now"), "{stderr}");
    }
}

/// Item 15: `latscope restore --force` under a live `--isolate` run restores the system,
/// says so, and the run's result says its isolation was removed under it.
fn item15_restore_force_under_a_live_run_is_recorded_in_its_result() {
    let cpu = test_cpu().to_string();
    if latscope::sys::process::effective_uid() != 0
        || latscope::isolate::check_available().is_err()
        || cpu == "0"
    {
        eprintln!("SKIPPED: needs root, a cpuset hierarchy and a second CPU");
        return;
    }
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let before = system_state();
    let mut child = spawn_timer(&["-D", "30s", "--isolate", &cpu], &json);
    wait_for_checkpoint(&mut child, &json).unwrap();
    let out = latscope().args(["restore", "--force"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("still measuring") && stdout.contains("isolation_removed_during_run"),
        "{stdout}"
    );
    signal(&child, "INT");
    assert_eq!(
        wait_with_timeout(&mut child, Duration::from_secs(10)).unwrap(),
        Some(130)
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(diff(&before, &system_state()), Vec::<String>::new());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let scenario = &v["scenarios"][0];
    assert_eq!(
        scenario["isolation"]["removed_during_run"], true,
        "{scenario}"
    );
    let codes: Vec<&str> = scenario["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["code"].as_str())
        .collect();
    assert!(codes.contains(&"isolation_removed_during_run"), "{codes:?}");
}

/// A closed stdout pipe (`latscope timer | head -1`) is the SIGPIPE exit path: one line,
/// exit 130, the system restored and the result saved, not exit 1 with "Broken pipe".
fn closed_stdout_pipe_follows_the_sigpipe_exit_path() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let before = latscope::sys::dma_latency::current_us();
    let dma: &[&str] = if latscope::sys::process::effective_uid() == 0 {
        &["--dma-latency", "0"]
    } else {
        &[]
    };
    let script = format!(
        "{} timer -a {} -l 300 {} --export-json {} | true; echo \"exit=${{PIPESTATUS[0]}}\"",
        latscope_path().display(),
        test_cpu(),
        dma.join(" "),
        json.display()
    );
    let out = Command::new("bash").args(["-c", &script]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("exit=130"), "{stdout}{stderr}");
    assert!(stderr.contains("closed the pipe (SIGPIPE)"), "{stderr}");
    assert!(!stderr.contains("Broken pipe (os error"), "{stderr}");
    assert_eq!(latscope::sys::dma_latency::current_us(), before);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["scenarios"][0]["threads"][0]["samples"], 300);
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    common::test_cases![
        exit_path_matrix_leaves_the_system_as_it_was,
        item4_exec_grandchildren_die_with_a_sigkilled_run,
        item5_restore_removes_scratch_directories_of_dead_runs,
        item5_sigkill_keeps_the_last_checkpoint,
        item6_resume_refuses_another_plans_file,
        item6_killed_suite_says_interrupted,
        item7_second_run_on_the_same_export_json_refuses,
        item3_sighup_restores_and_saves_marked_interrupted,
        item15_runtime_conflict_with_another_run_exits_5,
        item15_restore_force_under_a_live_run_is_recorded_in_its_result,
        closed_stdout_pipe_follows_the_sigpipe_exit_path,
    ]
}
