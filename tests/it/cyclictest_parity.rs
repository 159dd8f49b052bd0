//! The drop-in sets its threads up as cyclictest does and the native probes as they
//! say: the measuring thread's timer slack read from /proc while it runs (the drop-in
//! keeps its parent's, `latscope timer` runs at `--timer-slack`), cpu_dma_latency held at
//! 0 by the drop-in, and the last line of the drop-in's stdout is cyclictest's `T:` line.

use crate::common;

use common::{case, missing, usable_cpu};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A thread's timer slack, ns. The kernel has `timerslack_ns` only at the process level
/// (/proc/PID/task/TID/ lacks it), but /proc/TID/ of any thread serves that thread's.
fn timer_slack_ns(tid: u32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{tid}/timerslack_ns"))
        .unwrap_or_else(|e| panic!("/proc/{tid}/timerslack_ns: {e}"));
    text.trim().parse().unwrap()
}

/// The thread id of `child`'s measuring thread (named `latscope-cpuN`) once it measures:
/// it has slept 100 times (voluntary context switches, one a 1 ms period), so it has
/// long passed its setup. Waits up to 10 s.
fn measuring_thread(child: &mut Child) -> u32 {
    let tid = named_thread(child);
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        let status = std::fs::read_to_string(format!("/proc/{tid}/status")).unwrap_or_default();
        let sleeps: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if sleeps >= 100 {
            return tid;
        }
        assert!(child.try_wait().unwrap().is_none(), "latscope ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the measuring thread did not sleep 100 times in 10 s");
}

/// The thread id of `child`'s thread named `latscope-cpuN`, waiting up to 10 s for it.
fn named_thread(child: &mut Child) -> u32 {
    let pid = child.id();
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the child runs");
        for task in tasks.flatten() {
            let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            if comm.starts_with("latscope-cpu") {
                return task.file_name().to_str().unwrap().parse().unwrap();
            }
        }
        assert!(child.try_wait().unwrap().is_none(), "latscope ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no measuring thread in 10 s");
}

fn spawn(args: &[String]) -> Child {
    common::latscope_command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting latscope")
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(String::from).collect()
}

/// The drop-in's measuring thread (SCHED_OTHER, no -p) keeps the slack it inherits:
/// /proc shows the same value for it as for its process' main thread and this test's
/// thread (the kernel's 50 µs unless someone changed it), not 1 ns; /dev/cpu_dma_latency
/// reads 0 while it runs, as under cyclictest.
fn dropin_keeps_the_parents_timer_slack_and_holds_dma_latency_0() {
    let _lock = common::latency_lock();
    let cpu = usable_cpu();
    let mine = timer_slack_ns(latscope::sys::sched::gettid() as u32);
    let mut child = spawn(&words(&format!(
        "cyclictest -m -q -i1000 -l1500 -t1 -a{cpu}"
    )));
    let tid = measuring_thread(&mut child);
    let (measuring, parent) = (timer_slack_ns(tid), timer_slack_ns(child.id()));
    let dma = latscope::sys::dma_latency::current_us();
    let out = common::assert_success(child.wait_with_output().unwrap());
    assert_eq!(
        (measuring, parent),
        (mine, mine),
        "measuring thread, its main thread, this test's thread"
    );
    assert!(measuring > 1, "the inherited slack, not latscope's 1 ns");
    if std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .is_ok()
    {
        assert_eq!(dma, Some(0), "cyclictest's default --latency 0");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.starts_with("# /dev/cpu_dma_latency set to 0us\n"),
            "{stdout}"
        );
    }
}

/// `latscope timer` at SCHED_OTHER: the measuring thread runs at 1 ns by default and at
/// `--timer-slack` when given, and the result file says so.
fn native_timer_runs_at_its_timer_slack() {
    let _lock = common::latency_lock();
    let cpu = usable_cpu();
    let dir = tempfile::tempdir().unwrap();
    for (given, expected) in [(None, 1u64), (Some("75us"), 75_000)] {
        let json = dir.path().join("run.json");
        let mut args = words(&format!(
            "timer --policy other -D 2s --warmup 0 -q -a {cpu} --export-json {}",
            json.display()
        ));
        if let Some(slack) = given {
            args.extend(["--timer-slack".to_string(), slack.to_string()]);
        }
        let mut child = spawn(&args);
        let tid = measuring_thread(&mut child);
        let measuring = timer_slack_ns(tid);
        common::assert_success(child.wait_with_output().unwrap());
        assert_eq!(measuring, expected, "{given:?}");
        let run = latscope::result::Run::load(&json).unwrap();
        let params = &run.scenarios[0].params;
        assert_eq!(params.timer_slack_ns, Some(expected));
        assert!(!params.timer_slack_inherited);
    }
}

/// The issue's command line through both tools: the last line of stdout is the `T:`
/// line in both (a script taking the last line reads cyclictest's numbers), and with -q
/// latscope writes nothing on stderr that cyclictest does not. With both streams on one
/// terminal (a serial console, `2>&1`) the last line is still the `T:` line.
fn last_stdout_line_is_the_t_line() {
    let _lock = common::latency_lock();
    let cpu = usable_cpu();
    let args = words(&format!("-m -q -i1000 -l300 -a{cpu} -t1"));
    let ct = Command::new("cyclictest").args(&args).output().unwrap();
    let ls = common::assert_success(
        common::latscope_command()
            .arg("cyclictest")
            .args(&args)
            .output()
            .unwrap(),
    );
    let t_line = regex::Regex::new(
        r"^T: 0 \(\s*\d+\) P: 0 I:1000 C:\s+300 Min:\s+\d+ Act:\s+\d+ Avg:\s+\d+ Max:\s+\d+$",
    )
    .unwrap();
    for (who, out) in [("cyclictest", &ct.stdout), ("latscope", &ls.stdout)] {
        let text = String::from_utf8_lossy(out);
        let last = text.lines().last().unwrap_or_default();
        assert!(t_line.is_match(last), "{who}'s last line: {last:?}\n{text}");
        assert!(!text.contains("latscope"), "{who}: {text}");
    }
    assert_eq!(
        String::from_utf8_lossy(&ls.stderr),
        String::from_utf8_lossy(&ct.stderr),
        "stderr as cyclictest's"
    );
    // Both streams into one pipe, as a console shows them.
    let shell = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} cyclictest {} 2>&1",
            common::latscope_path().display(),
            args.join(" ")
        ))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&shell.stdout);
    let last = text.lines().last().unwrap_or_default();
    assert!(t_line.is_match(last), "2>&1, last line: {last:?}\n{text}");
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    vec![
        case(
            "dropin_keeps_the_parents_timer_slack_and_holds_dma_latency_0",
            dropin_keeps_the_parents_timer_slack_and_holds_dma_latency_0,
        ),
        case(
            "native_timer_runs_at_its_timer_slack",
            native_timer_runs_at_its_timer_slack,
        ),
        case(
            "last_stdout_line_is_the_t_line",
            last_stdout_line_is_the_t_line,
        )
        .unless(missing("cyclictest", "rt-tests")),
    ]
}
