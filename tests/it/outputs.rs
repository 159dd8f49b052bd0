//! Issue 34's output reproducers: every output of every command is locked as a run's are
//! (item 3: `--host`, `report -o`, `report` and `compare --export-*`, doctor's exports,
//! a saved doctor file's), and a pipe nobody reads ends at the first signal (item 4:
//! `timer --export-json - | sleep 600` ignored SIGTERM, a second SIGTERM and SIGINT).

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Every command that writes a file, with `OUT` where the file goes.
fn writers(dir: &Path) -> Vec<Vec<String>> {
    let run = fixture("run.json").display().to_string();
    let tree = fixture("doctor/this-vm").display().to_string();
    let series = dir.join("series.txt");
    let values: String = (0..5000)
        .map(|i| format!("{}\n", 20 + (i * 7919) % 97))
        .collect();
    std::fs::write(&series, values).unwrap();
    let doctor_file = dir.join("doctor.json");
    let saved = latscope()
        .args(["doctor", "--root", &tree, "--export-json"])
        .arg(&doctor_file)
        .output()
        .unwrap();
    assert!(doctor_file.exists(), "{saved:?}");
    let series = series.display().to_string();
    let doctor_file = doctor_file.display().to_string();
    let line = |words: &[&str]| words.iter().map(|w| w.to_string()).collect();
    vec![
        line(&["report", &run, "-f", "json", "-o", "OUT"]),
        line(&["report", &run, "--export-csv", "OUT"]),
        line(&["report", &run, &run, "--export-markdown", "OUT"]),
        line(&[
            "report",
            &series,
            "--worst-case",
            "--unit",
            "us",
            "-o",
            "OUT",
        ]),
        line(&["report", &doctor_file, "--export-html", "OUT"]),
        line(&["compare", &run, &run, "--export-html", "OUT"]),
        line(&["doctor", "--root", &tree, "--export-json", "OUT"]),
        line(&["doctor", "--root", &tree, "--export-html", "OUT"]),
        line(&[
            "timer",
            "-D",
            "1",
            "--host",
            "root@127.0.0.1",
            "--export-json",
            "OUT",
        ]),
    ]
}

/// `args` with OUT replaced by `out`.
fn with_out(args: &[String], out: &Path) -> Vec<String> {
    args.iter()
        .map(|a| {
            if a == "OUT" {
                out.display().to_string()
            } else {
                a.clone()
            }
        })
        .collect()
}

/// Item 3: while another latscope holds an output's lock, every command naming that file
/// is refused with exit 5 (and writes nothing there); a FIFO at the lock's name is refused
/// at once with exit 2. Each command writes its file when the lock is free.
fn item34_03_every_command_locks_its_outputs() {
    let dir = tempfile::tempdir().unwrap();
    for args in writers(dir.path()) {
        let out: PathBuf = dir.path().join("out.file");
        let lock = dir.path().join(".out.file.lock");
        let args = with_out(&args, &out);
        {
            let _held = latscope::sys::filelock::FileLock::try_exclusive(&lock)
                .unwrap()
                .unwrap();
            let run = latscope().args(&args).output().unwrap();
            let stderr = String::from_utf8_lossy(&run.stderr);
            assert_eq!(run.status.code(), Some(5), "{args:?}: {stderr}");
            assert!(
                stderr.contains("is being written by another latscope run"),
                "{args:?}: {stderr}"
            );
            assert!(!out.exists(), "{args:?} wrote its file");
        }
        std::fs::remove_file(&lock).unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(&lock)
            .status()
            .unwrap()
            .success());
        let start = Instant::now();
        let run = latscope().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("named pipe (FIFO)"), "{args:?}: {stderr}");
        assert!(start.elapsed() < Duration::from_secs(5), "{args:?}");
        std::fs::remove_file(&lock).unwrap();
        if !args.contains(&"--host".to_string()) {
            let run = latscope().args(&args).output().unwrap();
            assert!(out.exists(), "{args:?}: {run:?}");
            assert!(!lock.exists(), "{args:?} left its lock");
            std::fs::remove_file(&out).unwrap();
        }
    }
}

/// Item 4: `timer --export-json -` (with `--trace` where it can, as the audit ran it) into
/// a pipe that is full and never read: the first SIGTERM, once the run waits to write its
/// result, ends it within 2 s with exit 130, saying the output stopped.
fn item34_04_a_pipe_nobody_reads_ends_within_2_s_of_sigterm() {
    use std::io::{BufRead, Write};
    use std::os::unix::fs::OpenOptionsExt;
    let _lock = latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // This test holds the reading end and never reads; the pipe is full before the run.
    let mut held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    while held.write(&[b'x'; 4096]).is_ok() {}
    let stdout = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    let cpu = test_cpu().to_string();
    let mut c = latscope_command();
    c.args([
        "timer",
        "-D",
        "2s",
        "--warmup",
        "0",
        "-a",
        &cpu,
        "--export-json",
        "-",
    ]);
    if no_tracing().is_none() {
        c.arg("--trace");
    }
    let mut child = c
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The table goes to stderr before the result goes to stdout.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("clock-nanosleep") {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            panic!("it ended first: {seen}");
        }
        seen.push_str(&line);
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "it did not wait: {seen}"
    );
    let start = Instant::now();
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(2) {
            let _ = child.kill();
            panic!("still running 2 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let code = child.wait().unwrap().code();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert_eq!(code, Some(130), "{seen}{rest}");
    assert!(
        rest.contains("output stopped") && rest.contains("SIGTERM"),
        "{seen}{rest}"
    );
    drop(held);
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    let root = (latscope::sys::process::effective_uid() != 0)
        .then(|| "needs root (doctor reads the fixture tree as root does)".to_string());
    vec![
        common::case(
            "item34_03_every_command_locks_its_outputs",
            item34_03_every_command_locks_its_outputs,
        )
        .unless(root),
        common::case(
            "item34_04_a_pipe_nobody_reads_ends_within_2_s_of_sigterm",
            item34_04_a_pipe_nobody_reads_ends_within_2_s_of_sigterm,
        ),
    ]
}
