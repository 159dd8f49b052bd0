//! The exit-path matrix (issues 12 and 22): every workload that changes the system or
//! starts something × every way a run ends (normal, an error mid-run — an `--export-csv`
//! directory removed —, SIGINT, two SIGINTs, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGKILL +
//! `latscope restore`) leaves the system as it was (cpusets, IRQ and workqueue masks,
//! cpu_dma_latency, RT throttling, tracefs instances, state files, load processes and
//! scratch directories, the termios of a serial load's terminal), a valid JSON file with
//! what was measured (after SIGKILL: up to the last checkpoint; after two SIGINTs: the
//! scenarios with their samples, which `latscope report` shows) and the documented exit
//! code. Prints its table, "N of N clean". The regression tests per item: exit_items.rs.

use crate::common;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Markers in the exec load's grandchildren's command lines (`sleep 7301`, `sleep 7302`).
pub(crate) const EXEC_LOAD: &str = "exec:\"sh -c 'sleep 7301 & sleep 7302'\"";
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

/// Terminals whose settings `system_state` includes (the serial workload's pty).
static WATCHED_TERMINALS: std::sync::Mutex<Vec<std::path::PathBuf>> =
    std::sync::Mutex::new(Vec::new());

/// A terminal's settings as `system_state` records them.
pub(crate) fn termios_text(path: &Path) -> String {
    latscope::sys::tty::open_tty(path)
        .map_err(|e| e.to_string())
        .and_then(|fd| latscope::sys::tty::get_termios(&fd).map_err(|e| e.to_string()))
        .map_or_else(|e| format!("<{e}>"), |t| format!("{:?}", t.fields()))
}

/// The global state a run may change.
pub(crate) fn system_state() -> Snapshot {
    let mut s = Snapshot::new();
    for path in WATCHED_TERMINALS.lock().unwrap().iter() {
        s.insert(format!("termios {}", path.display()), termios_text(path));
    }
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
pub(crate) fn leftovers_of(pid: u32) -> Vec<String> {
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
            if name.contains(&format!("-{pid}.")) || name.starts_with(&format!("terminal-{pid}-")) {
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

pub(crate) fn signal(child: &Child, sig: &str) {
    Command::new("kill")
        .args([&format!("-{sig}"), &child.id().to_string()])
        .status()
        .unwrap();
}

/// Waits for a checkpoint with at least one sample (the run is measuring) or the end.
pub(crate) fn wait_for_checkpoint(child: &mut Child, path: &Path) -> Result<(), String> {
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
        {
            if let Some(v) = crate::common::read_result(path) {
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

pub(crate) fn wait_with_timeout(child: &mut Child, limit: Duration) -> Result<Option<i32>, String> {
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

/// Ends the run the way `ending` says (an error mid-run: its CSV directory removed).
fn end_run(child: &Child, ending: Ending, csv_dir: &Path) {
    match ending {
        Ending::Normal => {}
        Ending::ErrorMidRun => {
            let _ = std::fs::remove_dir_all(csv_dir);
        }
        Ending::Sigint => signal(child, "INT"),
        Ending::TwoSigints => {
            signal(child, "INT");
            std::thread::sleep(Duration::from_millis(30));
            signal(child, "INT");
        }
        Ending::Sigterm => signal(child, "TERM"),
        Ending::Sighup => signal(child, "HUP"),
        Ending::Sigquit => signal(child, "QUIT"),
        Ending::Sigpipe => signal(child, "PIPE"),
        Ending::SigkillRestore => signal(child, "KILL"),
    }
}

/// What is wrong with the exit code and the error message after `ending`.
fn judge_exit(code: Option<i32>, ending: Ending, stderr: &str) -> Vec<String> {
    let mut problems = Vec::new();
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
    problems
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
    end_run(&child, ending, &csv_dir);
    let code = wait_with_timeout(&mut child, Duration::from_secs(30))?;
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    problems.extend(judge_exit(code, ending, &stderr));
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
    problems.extend(judge_result(&json, ending));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// What is wrong with the result file `json` after `ending`.
fn judge_result(json: &Path, ending: Ending) -> Vec<String> {
    let mut problems = Vec::new();
    match crate::common::read_result(json).ok_or("not readable by latscope report") {
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
            if by != expected_by {
                problems.push(format!("interrupted_by: {by:?}"));
            }
            if ending == Ending::TwoSigints {
                problems.extend(kept_after_abort(&v, json));
            }
        }
    }
    problems
}

/// Two SIGINTs (issue 22, item 6): the scenarios measured until then are in the file
/// with their samples, marked interrupted, and `latscope report FILE` shows them.
fn kept_after_abort(v: &Value, json: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let scenarios = v["scenarios"].as_array().cloned().unwrap_or_default();
    let measured = scenarios.iter().any(|s| {
        s["threads"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["samples"].as_u64() > Some(0)))
    });
    if !measured {
        problems.push(format!(
            "no scenario with samples after two SIGINTs ({} scenarios)",
            scenarios.len()
        ));
    }
    if scenarios.last().is_some_and(|s| s["interrupted"] != true) {
        problems.push("the last scenario is not marked interrupted".into());
    }
    let out = latscope().arg("report").arg(json).output();
    let table = out
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    // A table row per measured thread: its method and sample count.
    let rows = |s: &Value| {
        s["threads"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|t| {
                let method = t["method"].as_str().unwrap_or("?").to_string();
                (method, t["samples"].as_u64().unwrap_or(0).to_string())
            })
    };
    // The suite's study view has no samples column: its rows are named by method.
    let counted = table.contains("samples");
    for (method, samples) in scenarios.iter().flat_map(rows).filter(|(_, n)| n != "0") {
        // A table whose rows all share one method says it once, in its headline.
        let headline_names_it = table.lines().next().is_some_and(|h| h.contains(&method));
        let shown = |l: &str| match counted {
            true => l.contains(&samples) && (l.contains(&method) || headline_names_it),
            false => l.contains(&method),
        };
        if !table.lines().any(shown) {
            problems.push(format!(
                "`latscope report` has no row {method} {samples}: {table}"
            ));
        }
    }
    problems
}

/// Which rows of the matrix a case runs: the rows that need isolation or tracing are
/// cases of their own, ignored with the reason where they cannot run.
#[derive(Clone, Copy)]
enum Rows {
    Plain,
    Isolate,
    Trace,
}

/// The matrix's rows: a name and the command line of each workload.
fn workloads(cpu: &str, serial: &str, rows: Rows) -> Vec<(&'static str, Vec<String>)> {
    let mut workloads: Vec<(&'static str, Vec<String>)> = Vec::new();
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match rows {
        Rows::Isolate => {
            return vec![("--isolate", owned(&["timer", "-a", cpu, "--isolate", cpu]))]
        }
        Rows::Trace => return vec![("--trace", owned(&["timer", "-a", cpu, "--trace"]))],
        Rows::Plain => {}
    }
    workloads.push(("plain timer", owned(&["timer", "-a", cpu])));
    workloads.push((
        "--dma-latency 0",
        owned(&["timer", "-a", cpu, "--dma-latency", "0"]),
    ));
    workloads.push((
        "exec grandchildren + io",
        owned(&[
            "timer",
            "-a",
            cpu,
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
    workloads.push(("noise", owned(&["noise", "-a", cpu])));
    workloads.push(("net (loopback)", owned(&["net"])));
    workloads.push((
        "suite --preset quick",
        owned(&["suite", "--preset", "quick", "--cpus", cpu]),
    ));
    workloads.push((
        "serial load (pty)",
        owned(&["timer", "-a", cpu, "--load", serial]),
    ));
    workloads
}

fn exit_path_matrix_leaves_the_system_as_it_was() {
    exit_path_matrix(Rows::Plain);
}

fn exit_path_matrix_under_isolate_leaves_the_system_as_it_was() {
    exit_path_matrix(Rows::Isolate);
}

fn exit_path_matrix_with_trace_leaves_the_system_as_it_was() {
    exit_path_matrix(Rows::Trace);
}

fn exit_path_matrix(rows: Rows) {
    let _lock = latency_lock();
    let cpu = test_cpu().to_string();
    // A pty the test holds stands in for a serial device: its settings must come back
    // on every ending, SIGKILL included (through `latscope restore`).
    let pty = latscope::sys::tty::open_pty().unwrap();
    WATCHED_TERMINALS
        .lock()
        .unwrap()
        .push(pty.terminal_path.clone());
    let serial = format!("serial:115200,dev={}", pty.terminal_path.display());
    let workloads = workloads(&cpu, &serial, rows);
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
    WATCHED_TERMINALS.lock().unwrap().clear();
    drop(pty);
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

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    let not_root = (latscope::sys::process::effective_uid() != 0)
        .then(|| "the exit-path matrix needs root".to_string());
    let no_isolation = not_root.clone().or_else(|| {
        let cpu = test_cpu();
        latscope::isolate::check_available()
            .err()
            .map(|e| format!("no isolation here: {e}"))
            .or_else(|| (cpu == 0).then(|| "needs a second CPU to isolate".to_string()))
    });
    vec![
        case(
            "exit_path_matrix_leaves_the_system_as_it_was",
            exit_path_matrix_leaves_the_system_as_it_was,
        )
        .unless(not_root.clone()),
        case(
            "exit_path_matrix_under_isolate_leaves_the_system_as_it_was",
            exit_path_matrix_under_isolate_leaves_the_system_as_it_was,
        )
        .unless(no_isolation),
        case(
            "exit_path_matrix_with_trace_leaves_the_system_as_it_was",
            exit_path_matrix_with_trace_leaves_the_system_as_it_was,
        )
        .unless(not_root.or_else(no_tracing)),
    ]
}
