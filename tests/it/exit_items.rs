//! One regression test per item of the exit-path issues (12: items 3-7 and 15; 22: the
//! second Ctrl-C, terminal settings after SIGKILL, the serial device checks) and a closed
//! stdout pipe, beside the exit-path matrix (exit_paths.rs) whose helpers they share.

use crate::common;
use crate::exit_paths::{
    diff, leftovers_of, signal, system_state, termios_text, wait_for_checkpoint, wait_with_timeout,
    EXEC_LOAD,
};
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
    let v: Value = common::read_result(&json).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["checkpoint"]["partial"], true);
    assert_eq!(v["checkpoint"]["scenario"], "timer clock-nanosleep 1 ms");
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
        let v: Option<Value> = common::read_result(&json);
        if let Some(v) = v.filter(|v| v["scenarios"].as_array().is_some_and(|s| !s.is_empty())) {
            break v;
        }
        assert!(Instant::now() < deadline, "no scenario saved in 30 s");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(saved["interrupted"], true, "saved between scenarios");
    let v: Value = common::read_result(&json).unwrap();
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
    let v: Value = common::read_result(&json).unwrap();
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
    let v: Value = common::read_result(&json).unwrap();
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
    // The lock beside a result file: DIR/.NAME.lock (output::exports::lock_path).
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
}

/// Item 15, the isolation lock: `--isolate` while another run isolates exits 5.
fn item15_isolating_beside_another_isolating_run_exits_5() {
    let _lock = latency_lock();
    let cpu = test_cpu().to_string();
    let dir = latscope::isolate::state_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let _isolating = latscope::sys::filelock::FileLock::try_exclusive(&dir.join("isolate.lock"))
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

/// Item 15: `latscope restore --force` under a live `--isolate` run restores the system,
/// says so, and the run's result says its isolation was removed under it.
fn item15_restore_force_under_a_live_run_is_recorded_in_its_result() {
    let cpu = test_cpu().to_string();
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
    let v: Value = common::read_result(&json).unwrap();
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
    let v: Value = common::read_result(&json).unwrap();
    assert_eq!(v["scenarios"][0]["threads"][0]["samples"], 300);
}

/// Issue 22, item 6: a second SIGINT still saves every sample taken (not the last
/// checkpoint, not nothing), marked interrupted by SIGINT; `latscope report` shows the
/// scenario; with `--trace` no "could not remove the trace instance" when none is left.
fn issue22_second_sigint_keeps_what_was_measured() {
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let trace: &[&str] = if no_tracing().is_none() {
        &["--trace"]
    } else {
        &[]
    };
    let mut child = spawn_timer(&[&["-D", "30s"][..], trace].concat(), &json);
    wait_for_checkpoint(&mut child, &json).unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    let seen = checkpoint_samples(&json);
    signal(&child, "INT");
    std::thread::sleep(Duration::from_millis(30));
    signal(&child, "INT");
    let code = wait_with_timeout(&mut child, Duration::from_secs(10)).unwrap();
    let stderr = stderr_of(&mut child);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("second interrupt"), "{stderr}");
    assert!(!stderr.contains("could not remove"), "{stderr}");
    assert_eq!(leftovers_of(child.id()), Vec::<String>::new());
    let v: Value = common::read_result(&json).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["interrupted_by"], "SIGINT");
    assert!(
        v["checkpoint"].is_null(),
        "the final save replaces the checkpoint"
    );
    let scenario = &v["scenarios"][0];
    assert_eq!(scenario["interrupted"], true);
    let samples = scenario["threads"][0]["samples"].as_u64().unwrap();
    assert!(
        samples >= seen,
        "{samples} samples saved, {seen} in a checkpoint before the signals"
    );
    let out = latscope().arg("report").arg(&json).output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}");
    let row = table
        .lines()
        .find(|l| l.contains(&samples.to_string()))
        .unwrap_or_else(|| panic!("no row with the {samples} samples: {table}"));
    // The method is in the row, or once in the headline when every row shares it.
    let headline = table.lines().next().unwrap_or_default();
    assert!(
        row.contains("clock-nanosleep") || headline.contains("clock-nanosleep"),
        "{table}"
    );
}

/// The samples of the checkpoint in `json` (0 without one).
fn checkpoint_samples(json: &Path) -> u64 {
    common::read_result(json)
        .and_then(|v| v["checkpoint"]["threads"][0]["samples"].as_u64())
        .unwrap_or(0)
}

fn stderr_of(child: &mut Child) -> String {
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    stderr
}

/// Starts a timer with a serial load on `terminal` and waits until it set 115200 baud.
fn spawn_with_serial_load(terminal: &Path, json: &Path) -> Child {
    let spec = format!("serial:115200,dev={}", terminal.display());
    let mut child = spawn_timer(&["-D", "30s", "--load", &spec], json);
    wait_for_checkpoint(&mut child, json).unwrap();
    let fd = latscope::sys::tty::open_tty(terminal).unwrap();
    let baud = latscope::sys::tty::get_termios(&fd).unwrap().output_baud();
    assert_eq!(baud, Some(115200), "the load did not set its rate");
    child
}

/// Issue 22, item 5: after SIGKILL a serial load's terminal stays raw at 115200 (the
/// reproducer) until `latscope restore`, which puts the settings from before back and
/// says so; the record is gone after it.
fn issue22_sigkilled_serial_load_termios_restored_by_restore() {
    let _lock = latency_lock();
    let _ = latscope().arg("restore").output();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let pty = latscope::sys::tty::open_pty().unwrap();
    let before = termios_text(&pty.terminal_path);
    let mut child = spawn_with_serial_load(&pty.terminal_path, &json);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_ne!(
        termios_text(&pty.terminal_path),
        before,
        "SIGKILL left nothing to undo"
    );
    assert_eq!(
        leftovers_of(child.id()).len(),
        1,
        "{:?}",
        leftovers_of(child.id())
    );
    let out = latscope().arg("restore").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(&pty.terminal_path.display().to_string()) && stdout.contains("put back"),
        "{stdout}"
    );
    assert_eq!(termios_text(&pty.terminal_path), before);
    assert_eq!(leftovers_of(child.id()), Vec::<String>::new());
}

/// Issue 22, item 5: settings someone gave the terminal after the kill are not
/// overwritten by `latscope restore` (nor would another pty's that got the same number).
fn issue22_restore_leaves_terminal_settings_changed_since() {
    use latscope::sys::tty;
    let _lock = latency_lock();
    let _ = latscope().arg("restore").output();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let pty = tty::open_pty().unwrap();
    let mut child = spawn_with_serial_load(&pty.terminal_path, &json);
    child.kill().unwrap();
    child.wait().unwrap();
    tty::set_raw_8n1(&pty.terminal, 9600).unwrap();
    let theirs = termios_text(&pty.terminal_path);
    let out = latscope().arg("restore").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("other settings"), "{stdout}");
    assert_eq!(termios_text(&pty.terminal_path), theirs);
    assert_eq!(leftovers_of(child.id()), Vec::<String>::new());
}

/// Issue 22, item 8: `dev=/dev/ptmx` (a new pty master nobody would read) and a terminal
/// named by two serial loads are refused before anything runs.
fn issue22_serial_pty_master_and_a_device_named_twice_are_refused() {
    let pty = latscope::sys::tty::open_pty().unwrap();
    let twice = format!("serial:9600,dev={0}", pty.terminal_path.display());
    for (loads, why) in [
        (vec!["serial:9600,dev=/dev/ptmx".to_string()], "master"),
        (vec![twice.clone(), twice], "another serial load"),
    ] {
        let mut args = vec!["timer".to_string(), "-D".into(), "1s".into()];
        for l in &loads {
            args.extend(["--load".to_string(), l.clone()]);
        }
        let out = latscope().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("--load") && err.contains(why), "{err}");
        assert!(out.stdout.is_empty(), "something ran: {args:?}");
    }
}

fn not_root() -> Option<String> {
    (latscope::sys::process::effective_uid() != 0).then(|| "needs root".to_string())
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    let cpu = test_cpu();
    let no_isolation =
        (not_root().is_some() || latscope::isolate::check_available().is_err() || cpu == 0)
            .then(|| "needs root, a cpuset hierarchy and a second CPU".to_string());
    let mut cases = common::test_cases![
        item5_restore_removes_scratch_directories_of_dead_runs,
        item5_sigkill_keeps_the_last_checkpoint,
        item6_resume_refuses_another_plans_file,
        item6_killed_suite_says_interrupted,
        item7_second_run_on_the_same_export_json_refuses,
        item3_sighup_restores_and_saves_marked_interrupted,
        item15_runtime_conflict_with_another_run_exits_5,
        closed_stdout_pipe_follows_the_sigpipe_exit_path,
        issue22_second_sigint_keeps_what_was_measured,
        issue22_serial_pty_master_and_a_device_named_twice_are_refused,
    ];
    cases.extend([
        case(
            "item4_exec_grandchildren_die_with_a_sigkilled_run",
            item4_exec_grandchildren_die_with_a_sigkilled_run,
        )
        .unless(not_root().map(|r| format!("{r} (PID namespace)"))),
        case(
            "item15_restore_force_under_a_live_run_is_recorded_in_its_result",
            item15_restore_force_under_a_live_run_is_recorded_in_its_result,
        )
        .unless(no_isolation.clone()),
        case(
            "item15_isolating_beside_another_isolating_run_exits_5",
            item15_isolating_beside_another_isolating_run_exits_5,
        )
        .unless(no_isolation),
        case(
            "issue22_sigkilled_serial_load_termios_restored_by_restore",
            issue22_sigkilled_serial_load_termios_restored_by_restore,
        )
        .unless(not_root().map(|r| format!("{r} (the record lives in /run/latscope)"))),
        case(
            "issue22_restore_leaves_terminal_settings_changed_since",
            issue22_restore_leaves_terminal_settings_changed_since,
        )
        .unless(not_root().map(|r| format!("{r} (the record lives in /run/latscope)"))),
    ]);
    cases
}
