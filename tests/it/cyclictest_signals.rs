//! Issue 35 items 3-5, with the user's next command after each moment: SIGUSR1 prints
//! cyclictest's status on stderr and the run goes on; rt-tests' get_cyclictest_snapshot
//! finds the run by its /dev/shm status file, sends SIGUSR2 and prints the status; a run
//! killed with SIGKILL leaves the live frames it wrote (streamed, as cyclictest's) and
//! its status file, which `latscope restore` removes so get_cyclictest_snapshot no longer
//! signals that PID; `-F` hands the `T:` lines to a reader of the pipe; `--tracemark`
//! leaves the break's marker in the kernel's trace.

use crate::common;

use common::{case, missing, usable_cpu};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn spawn(args: &[&str], stdout: Stdio, stderr: Stdio) -> Child {
    common::latscope_command()
        .arg("cyclictest")
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// Waits up to 10 s for `cond`.
fn wait_for(what: &str, cond: impl Fn() -> bool) {
    let until = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < until, "waited 10 s for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn status_file(pid: u32) -> std::path::PathBuf {
    Path::new("/dev/shm").join(format!("cyclictest{pid}"))
}

fn t_lines(text: &str) -> usize {
    text.lines().filter(|l| l.starts_with("T: ")).count()
}

/// SIGUSR1 mid-run: the status block on stderr, the run ends at -D with exit 0 and its
/// summary; get_cyclictest_snapshot (SIGUSR2) prints the status of that PID.
fn sigusr1_and_snapshot_report_the_running_threads() {
    let _lock = common::latency_lock();
    let cpu = usable_cpu().to_string();
    let dir = tempfile::tempdir().unwrap();
    let err_path = dir.path().join("stderr");
    let args = [
        "-q", "-p", "80", "-i", "1000", "-t", "2", "-a", &cpu, "-D", "3",
    ];
    let child = spawn(
        &args,
        Stdio::piped(),
        Stdio::from(std::fs::File::create(&err_path).unwrap()),
    );
    let pid = child.id();
    wait_for("the status file", || status_file(pid).exists());
    std::thread::sleep(Duration::from_millis(800));
    Command::new("kill")
        .args(["-USR1", &pid.to_string()])
        .status()
        .unwrap();
    let snapshot = |flag: &str| {
        let out = Command::new("get_cyclictest_snapshot")
            .args([flag, &pid.to_string()])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    snapshot("-s");
    std::thread::sleep(Duration::from_millis(100));
    let printed = snapshot("-p");
    assert!(
        printed.contains("# cyclictest current status:"),
        "{printed}"
    );
    assert_eq!(t_lines(&printed), 2, "{printed}");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "the run goes on after both");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(t_lines(&stdout), 2, "the normal summary: {stdout}");
    let stderr = std::fs::read_to_string(&err_path).unwrap();
    let status: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        status,
        [
            "#---------------------------",
            "# cyclictest current status:",
            status[2],
            status[3],
            "#---------------------------"
        ],
        "{stderr}"
    );
    assert!(status[2].starts_with("T: 0 ") && status[3].starts_with("T: 1 "));
    assert!(!status_file(pid).exists(), "removed at the end");
}

/// SIGKILL: the frames written so far are in the file (each batch written at once);
/// the status file stays until `latscope restore`, after which get_cyclictest_snapshot
/// finds no instance.
fn a_killed_run_leaves_its_frames_and_restore_removes_its_status_file() {
    let _lock = common::latency_lock();
    let cpu = usable_cpu().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out");
    let out = std::fs::File::create(&out_path).unwrap();
    let mut child = spawn(
        &["-p", "80", "-i", "1000", "-a", &cpu],
        Stdio::from(out),
        Stdio::null(),
    );
    let pid = child.id();
    wait_for("frames", || {
        std::fs::read_to_string(&out_path).is_ok_and(|t| t.matches("\x1b[3A").count() >= 20)
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert!(t_lines(&text) >= 20, "the frames of a killed run: {text:?}");
    assert!(
        status_file(pid).exists(),
        "a SIGKILL leaves the status file"
    );
    common::assert_success(common::latscope_command().arg("restore").output().unwrap());
    assert!(!status_file(pid).exists(), "latscope restore removed it");
    let listed = Command::new("get_cyclictest_snapshot")
        .arg("-l")
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(!listed.lines().any(|l| l == pid.to_string()), "{listed}");
}

/// `-F PATH`: a reader of the named pipe gets the `T:` lines; the pipe is gone after.
fn fifo_hands_the_t_lines_to_its_reader() {
    let _lock = common::latency_lock();
    let cpu = usable_cpu().to_string();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("status");
    let fifo_arg = fifo.display().to_string();
    let child = spawn(
        &[
            "-q", "-i", "1000", "-t", "2", "-a", &cpu, "-D", "2", "-F", &fifo_arg,
        ],
        Stdio::piped(),
        Stdio::piped(),
    );
    wait_for("the named pipe", || fifo.exists());
    std::thread::sleep(Duration::from_millis(300));
    let read = Command::new("timeout")
        .args(["5", "cat"])
        .arg(&fifo)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&read.stdout);
    assert!(t_lines(&text) >= 2, "{text:?}");
    assert!(text.lines().all(|l| l.starts_with("T: ")), "{text:?}");
    let out = common::assert_success(child.wait_with_output().unwrap());
    assert_eq!(t_lines(&String::from_utf8_lossy(&out.stdout)), 2);
    assert!(!fifo.exists(), "the pipe is removed at the end");
}

/// `-b 1 --tracemark`: the first sample breaks the run; the kernel's trace has the
/// marker with the break value the output names, and tracing was stopped (put back
/// here afterwards).
fn tracemark_leaves_the_break_in_the_trace() {
    let _lock = common::latency_lock();
    let cpu = usable_cpu().to_string();
    let mnt = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tracefs", "nodev"])
        .arg(mnt.path())
        .status()
        .unwrap();
    assert!(mounted.success());
    let file = |name: &str| mnt.path().join(name);
    let before = std::fs::read_to_string(file("tracing_on")).unwrap();
    std::fs::write(file("tracing_on"), "1\n").unwrap();
    std::fs::write(file("trace"), "").unwrap();
    let out = spawn(
        &[
            "-q",
            "-p",
            "90",
            "-i",
            "1000",
            "-a",
            &cpu,
            "-b",
            "1",
            "--tracemark",
        ],
        Stdio::piped(),
        Stdio::piped(),
    )
    .wait_with_output()
    .unwrap();
    let trace = std::fs::read_to_string(file("trace")).unwrap();
    let tracing_on = std::fs::read_to_string(file("tracing_on")).unwrap();
    std::fs::write(file("tracing_on"), &before).unwrap();
    Command::new("umount").arg(mnt.path()).status().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let value = stdout
        .lines()
        .find_map(|l| l.strip_prefix("# Break value: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        trace.contains(&format!("hit latency threshold ({value} > 1)")),
        "{trace}"
    );
    assert_eq!(tracing_on.trim(), "0", "tracing stopped at the break");
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    vec![
        case(
            "sigusr1_and_snapshot_report_the_running_threads",
            sigusr1_and_snapshot_report_the_running_threads,
        )
        .unless(missing("get_cyclictest_snapshot", "rt-tests")),
        case(
            "a_killed_run_leaves_its_frames_and_restore_removes_its_status_file",
            a_killed_run_leaves_its_frames_and_restore_removes_its_status_file,
        )
        .unless(missing("get_cyclictest_snapshot", "rt-tests")),
        case(
            "fifo_hands_the_t_lines_to_its_reader",
            fifo_hands_the_t_lines_to_its_reader,
        ),
        case(
            "tracemark_leaves_the_break_in_the_trace",
            tracemark_leaves_the_break_in_the_trace,
        )
        .unless(common::no_tracing()),
    ]
}
