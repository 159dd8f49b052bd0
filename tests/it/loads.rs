//! Each load runs about a second and shows its effect on a counter it does not control
//! (getrusage, /proc/self/io, /proc/net/dev, the SIGSEGV handler's count, /proc CPU
//! time); loads stop on request, on Ctrl-C and with the probe, leaving nothing behind.

use crate::common;

use latscope::load::{self, RunningLoads};
use latscope::result::LoadResult;
use latscope::sys::process;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn start(spec: &str) -> RunningLoads {
    let specs = load::parse_specs(&[spec.to_string()]).expect("valid spec");
    load::start(&specs, &[], Arc::new(AtomicBool::new(false))).expect("load starts")
}

/// Runs one load for `ms` and returns its result.
fn run_for(spec: &str, ms: u64) -> LoadResult {
    let running = start(spec);
    std::thread::sleep(Duration::from_millis(ms));
    let mut results = running.stop();
    assert_eq!(results.len(), 1);
    let r = results.remove(0);
    assert!(!r.extra.contains_key("error"), "{spec}: {:?}", r.extra);
    r
}

fn extra(r: &LoadResult, key: &str) -> u64 {
    r.extra
        .get(key)
        .and_then(|v| v.as_u64())
        .unwrap_or_else(|| panic!("{} has no counter {key}: {:?}", r.spec, r.extra))
}

fn elapsed_s(r: &LoadResult) -> f64 {
    extra(r, "elapsed_ns") as f64 / 1e9
}

/// Load threads of this process still alive (named `ld-…`).
fn load_threads() -> usize {
    load_thread_states().len()
}

/// Each load thread of this process: its name, state and what it waits in (for messages).
fn load_thread_states() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter_map(|t| {
            let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
            let comm = comm.trim();
            if !comm.starts_with("ld-") {
                return None;
            }
            let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
            let state = stat.rsplit(") ").next().unwrap_or("").split(' ').next();
            let wchan = std::fs::read_to_string(t.path().join("wchan")).unwrap_or_default();
            Some(format!("{comm} state {} in {wchan}", state.unwrap_or("?")))
        })
        .collect()
}

fn proc_io_write_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("write_bytes:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap()
}

fn loopback_rx_bytes() -> u64 {
    std::fs::read_to_string("/proc/net/dev")
        .unwrap()
        .lines()
        .find_map(|l| l.trim().strip_prefix("lo:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("loopback in /proc/net/dev")
}

fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

fn mem_churn_raises_minor_faults() {
    let _lock = common::latency_lock();
    let before = process::usage_self().unwrap();
    let r = run_for("mem-churn:100%,size=16M,cpus=0", 1000);
    let after = process::usage_self().unwrap();
    let faults = after.minor_faults - before.minor_faults;
    let pages = (r.throughput * elapsed_s(&r)) as u64;
    assert!(pages > 4096, "mem-churn touched only {pages} pages");
    assert!(
        faults as f64 >= pages as f64 * 0.9,
        "{pages} pages written but only {faults} minor faults"
    );
    assert_eq!(r.unit, "faults/s");
}

fn prot_fault_raises_the_sigsegv_count() {
    let _lock = common::latency_lock();
    let segv_before = latscope::sys::memory::handled_prot_faults();
    let usage_before = process::usage_self().unwrap();
    let r = run_for("prot-fault:100%,size=4M,cpus=0", 1000);
    let segv = latscope::sys::memory::handled_prot_faults() - segv_before;
    let faults = process::usage_self().unwrap().minor_faults - usage_before.minor_faults;
    assert!(segv > 1000, "only {segv} SIGSEGVs handled");
    assert_eq!(segv, extra(&r, "sigsegv_handled"));
    // Every handled SIGSEGV is followed by a minor fault when the write is retried.
    assert!(
        faults as f64 >= segv as f64 * 0.9,
        "{segv} SIGSEGVs, {faults} faults"
    );
    let pages = (r.throughput * elapsed_s(&r)).round() as u64;
    assert!(pages.abs_diff(segv) <= segv / 100 + 2, "{pages} vs {segv}");
}

fn switch_raises_voluntary_context_switches() {
    let _lock = common::latency_lock();
    let before = process::usage_self().unwrap();
    let r = run_for("switch:1,cpus=0", 1000);
    let after = process::usage_self().unwrap();
    let switches = after.voluntary_switches - before.voluntary_switches;
    let reported = (r.throughput * elapsed_s(&r)) as u64;
    assert!(reported > 1000, "only {reported} switches reported");
    assert!(
        switches as f64 >= reported as f64 * 0.5,
        "{reported} switches reported, {switches} voluntary switches counted"
    );
}

fn io_writes_and_fsyncs_and_cleans_up() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let before = proc_io_write_bytes();
    let r = run_for(
        &format!("io:100%,size=4M,cpus=0,dir={}", dir.path().display()),
        1000,
    );
    let written_to_disk = proc_io_write_bytes() - before;
    let written = extra(&r, "bytes_written");
    assert!(written >= 4 << 20, "only {written} bytes written");
    assert!(extra(&r, "fsyncs") >= 1);
    assert!(
        written_to_disk as f64 >= written as f64 * 0.5,
        "{written} bytes written, /proc/self/io write_bytes rose by {written_to_disk}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "the io load left files behind"
    );
}

fn net_moves_bytes_over_loopback() {
    let _lock = common::latency_lock();
    let before = loopback_rx_bytes();
    let r = run_for("net:1,cpus=0", 1000);
    let on_wire = loopback_rx_bytes() - before;
    let received = extra(&r, "bytes_received");
    assert!(received > 1 << 20, "only {received} bytes received");
    assert!(received <= extra(&r, "bytes_sent"));
    assert!(
        on_wire >= received,
        "{received} bytes received, loopback counted {on_wire}"
    );
    assert_eq!(r.unit, "MB/s");
}

/// `cpu:50%` asks for half of each 10 ms slice: its thread takes 5 ms of CPU time, then
/// sleeps to the slice's end (or goes on at once when a busy CPU made the 5 ms take the
/// whole slice). By the kernel's schedstat of that thread it ran at most about half the
/// time, and ran or waited to run at least about half the time: what latscope asked for,
/// whatever share the host then granted. The load's own /proc figure is the kernel's.
fn cpu_at_half_duty_asks_for_half_a_cpu() {
    let _lock = common::latency_lock();
    let running = start("cpu:50%,cpus=0");
    std::thread::sleep(Duration::from_millis(1500));
    let seen = common::sched_seen::threads_of(std::process::id());
    let mut results = running.stop();
    let r = results.remove(0);
    let ld: Vec<_> = seen
        .iter()
        .filter(|t| t.comm.starts_with("ld-cpu"))
        .collect();
    assert_eq!(ld.len(), 1, "one cpu load thread: {seen:?}");
    let elapsed_ns = extra(&r, "elapsed_ns") as f64;
    let ran = ld[0].run_ns as f64 / elapsed_ns * 100.0;
    let wanted = (ld[0].run_ns + ld[0].wait_ns) as f64 / elapsed_ns * 100.0;
    eprintln!(
        "cpu:50%: ran {ran:.1}%, ran or waited {wanted:.1}% of {:.2} s (load average {})",
        elapsed_ns / 1e9,
        load_average()
    );
    assert!(ran <= 55.0, "cpu:50% ran {ran:.1}% of the time");
    assert!(
        wanted >= 45.0,
        "cpu:50% ran or waited to run only {wanted:.1}% of the time"
    );
    assert!(
        (r.cpu_percent - ran).abs() < 5.0,
        "load's own /proc figure {:.1}% vs the kernel's schedstat {ran:.1}%",
        r.cpu_percent
    );
}

fn the_other_loads_run_and_report() {
    let _lock = common::latency_lock();
    for (spec, unit) in [
        ("mem-access:100%,size=8M,cpus=0", "MB/s"),
        ("sleepers:4,cpus=0", "wakeups/s"),
        ("syscall:cpus=0", "syscalls/s"),
        ("fork:cpus=0", "forks/s"),
    ] {
        let r = run_for(spec, 400);
        assert_eq!(r.unit, unit);
        assert!(r.throughput > 0.0, "{spec}: {r:?}");
        assert!(r.cpu_percent > 0.0, "{spec}: {r:?}");
        if spec.starts_with("syscall") {
            assert!(extra(&r, "signals_handled") > 0);
        }
    }
}

fn loads_stop_on_request_and_on_ctrl_c_leaving_no_thread() {
    let _lock = common::latency_lock();
    // Threads of earlier tests have been joined, but the kernel may list an exiting
    // one for a moment longer.
    assert!(
        threads_settle_at(0),
        "load threads left over: {}",
        load_threads()
    );
    let running = start("switch:1,cpus=0");
    assert_eq!(load_threads(), 2);
    drop(running);
    assert!(
        threads_settle_at(0),
        "{} load threads after drop",
        load_threads()
    );

    // The stop flag (set by Ctrl-C) ends every worker, pairs included.
    let stop = Arc::new(AtomicBool::new(false));
    let specs = load::parse_specs(&["cpu:cpus=0".into(), "net:1,cpus=0".into()]).unwrap();
    let running = load::start(&specs, &[], stop.clone()).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::SeqCst);
    assert!(
        threads_settle_at(0),
        "workers still running after stop: {:?}",
        load_thread_states()
    );
    assert_eq!(running.stop().len(), 2);
}

/// Waits up to 2 s for the number of load threads to become `n`.
fn threads_settle_at(n: usize) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while load_threads() != n {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

fn exec_child_is_killed_when_the_load_stops() {
    let _lock = common::latency_lock();
    let running = start("exec:\"sleep 100\",cpus=0");
    std::thread::sleep(Duration::from_millis(200));
    let results = running.stop();
    let pid = extra(&results[0], "pid") as i32;
    assert!(
        !process::process_exists(pid),
        "sleep 100 (pid {pid}) still runs"
    );
    assert_eq!(extra(&results[0], "processes_at_stop"), 1);
}

fn timer_with_a_load_records_it_and_leaves_nothing_behind() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    common::latscope()
        .args([
            "timer",
            "--load",
            "cpu:100%",
            "--load",
            "exec:\"sleep 100\"",
        ])
        .args([
            "--cpus",
            "1",
            "-D",
            "2s",
            "--warmup",
            "0",
            "-q",
            "--export-json",
        ])
        .arg(&json)
        .assert()
        .success();
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let loads = run["scenarios"][0]["loads"].as_array().unwrap();
    assert_eq!(loads.len(), 2);
    assert_eq!(loads[0]["spec"], "cpu:100%");
    assert_eq!(loads[0]["cpus"], serde_json::json!([0]));
    assert!(loads[0]["throughput"].as_f64().unwrap() > 0.0);
    assert!(loads[0]["cpu_percent"].as_f64().unwrap() > 0.0);
    let pid = loads[1]["extra"]["pid"].as_i64().unwrap() as i32;
    assert!(
        !process::process_exists(pid),
        "the exec child outlived latscope"
    );
    // The loads ran beside the measurement, not after it.
    let elapsed = loads[0]["extra"]["elapsed_ns"].as_u64().unwrap();
    assert!(elapsed >= 2_000_000_000, "load ran {elapsed} ns");
}

fn ctrl_c_stops_latscope_load_and_its_child() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("pid");
    let bin = common::latscope_path();
    // The child writes its pid, then sleeps; SIGINT to latscope must end both.
    // `$$` is the shell's pid inside the load's PID namespace: find it by its arguments.
    let script = format!("echo $$ > {} && exec sleep 100.25", marker.display());
    let mut latscope = std::process::Command::new(bin)
        .args(["load", "-D", "30s", "--json"])
        .arg(format!("exec:\"sh -c '{script}'\""))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !marker.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    let child: i32 = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == b"sleep\x00100.25\x00")
        })
        .expect("the load's sleep 100.25 runs");
    assert!(process::process_exists(child));
    const SIGINT: i32 = 2; // as Ctrl-C sends it
    process::signal_process(latscope.id() as i32, SIGINT).unwrap();
    let status = latscope.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(!process::process_exists(child), "sleep survived Ctrl-C");
}

fn load_command_lists_kinds_and_rejects_bad_specs() {
    let out = common::latscope()
        .args(["load", "--list"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for kind in load::KINDS {
        assert!(text.contains(kind.name), "--list misses {}", kind.name);
    }
    let out = common::latscope()
        .args(["timer", "--load", "mem-churn:size=lots", "-D", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("mem-churn:size=lots") && err.contains("size"),
        "{err}"
    );
    let out = common::latscope()
        .args(["load", "cpu:cpus=4096"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

fn serial_load_writes_baud_over_ten_bytes_per_second() {
    let _lock = common::latency_lock();
    for (baud, ms) in [(115_200u64, 1500), (9600, 1500)] {
        let r = run_for(&format!("serial:{baud},cpus=0"), ms);
        assert_eq!(r.unit, "B/s");
        let expected = baud as f64 / 10.0;
        let off = (r.throughput - expected).abs() / expected;
        assert!(
            off < 0.03,
            "serial:{baud} wrote {:.0} B/s, expected {expected:.0} (8N1) within 3 %: {:?}",
            r.throughput,
            r.extra
        );
        assert_eq!(extra(&r, "baud"), baud);
        // The drainer keeps up with the writer (a pty never throttles on its own).
        let (written, drained) = (extra(&r, "bytes_written"), extra(&r, "bytes_drained"));
        assert!(
            drained as f64 >= written as f64 * 0.95,
            "drained {drained} of {written}"
        );
    }
}

/// A pty standing in for a real tty: its terminal side given as `dev=`.
fn stand_in_tty() -> latscope::sys::tty::Pty {
    latscope::sys::tty::open_pty().expect("a pseudo-terminal opens")
}

fn serial_load_on_a_tty_sets_raw_mode_and_puts_termios_back() {
    use latscope::sys::tty;
    let _lock = common::latency_lock();
    let pty = stand_in_tty();
    let before = tty::get_termios(&pty.terminal).unwrap();
    assert_ne!(before.output_baud(), Some(1200));
    let spec = format!("serial:1200,dev={},cpus=0", pty.terminal_path.display());
    let running = start(&spec);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        tty::get_termios(&pty.terminal).unwrap().output_baud(),
        Some(1200),
        "not set to the spec's rate while running"
    );
    let results = running.stop();
    assert_eq!(extra(&results[0], "workers"), 1, "a tty has no drainer");
    assert!(extra(&results[0], "bytes_written") > 0);
    assert!(
        tty::get_termios(&pty.terminal).unwrap().same_as(&before),
        "termios not put back after the load stopped"
    );
}

/// Every ending of a run with a serial load on a tty but SIGKILL (which nothing survives
/// to undo): its termios as found afterwards. A pty stands in for the tty.
fn serial_tty_termios_is_put_back_on_every_ending_but_sigkill() {
    use latscope::sys::tty;
    const SIGINT: i32 = 2;
    const SIGTERM: i32 = 15;
    const SIGHUP: i32 = 1;
    let _lock = common::latency_lock();
    let cpu = common::test_cpu().to_string();
    for (ending, signals) in [
        ("normal end", &[][..]),
        ("SIGINT", &[SIGINT][..]),
        ("two SIGINTs", &[SIGINT, SIGINT][..]),
        ("SIGTERM", &[SIGTERM][..]),
        ("SIGHUP", &[SIGHUP][..]),
    ] {
        let pty = stand_in_tty();
        let before = tty::get_termios(&pty.terminal).unwrap();
        let spec = format!("serial:2400,dev={}", pty.terminal_path.display());
        let duration = if signals.is_empty() { "1s" } else { "30s" };
        let mut latscope = common::latscope_command()
            .args(["timer", "-q", "-a", &cpu, "-i", "1000", "-D", duration])
            .args(["--load", &spec])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while tty::get_termios(&pty.terminal).unwrap().output_baud() != Some(2400) {
            assert!(
                std::time::Instant::now() < deadline,
                "{ending}: the load never set 2400 baud"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(300));
        for &sig in signals {
            process::signal_process(latscope.id() as i32, sig).unwrap();
            std::thread::sleep(Duration::from_millis(5));
        }
        let status = latscope.wait().unwrap();
        let expected = if signals.is_empty() { 0 } else { 130 };
        assert_eq!(status.code(), Some(expected), "{ending}");
        assert!(
            tty::get_termios(&pty.terminal).unwrap().same_as(&before),
            "{ending}: termios not put back"
        );
    }
}

fn serial_device_that_is_missing_or_no_tty_is_refused_before_running() {
    for (device, why) in [
        ("/dev/latscope-no-such-tty", "no such device"),
        ("/dev/null", "not a terminal"),
    ] {
        let spec = format!("serial:9600,dev={device}");
        for args in [
            vec!["load", spec.as_str(), "-D", "1s"],
            vec!["timer", "--load", spec.as_str(), "-D", "1s"],
        ] {
            let started = std::time::Instant::now();
            let out = common::latscope().args(&args).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            let err = String::from_utf8(out.stderr).unwrap();
            assert!(
                err.contains("--load")
                    && err.contains(&format!("dev={device}"))
                    && err.contains(why),
                "{args:?}: {err}"
            );
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(out.stdout.is_empty(), "something ran: {args:?}");
            assert!(started.elapsed() < Duration::from_secs(1), "{args:?} ran");
        }
    }
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    common::test_cases![
        mem_churn_raises_minor_faults,
        prot_fault_raises_the_sigsegv_count,
        switch_raises_voluntary_context_switches,
        io_writes_and_fsyncs_and_cleans_up,
        net_moves_bytes_over_loopback,
        cpu_at_half_duty_asks_for_half_a_cpu,
        the_other_loads_run_and_report,
        loads_stop_on_request_and_on_ctrl_c_leaving_no_thread,
        exec_child_is_killed_when_the_load_stops,
        timer_with_a_load_records_it_and_leaves_nothing_behind,
        ctrl_c_stops_latscope_load_and_its_child,
        load_command_lists_kinds_and_rejects_bad_specs,
        serial_load_writes_baud_over_ten_bytes_per_second,
        serial_load_on_a_tty_sets_raw_mode_and_puts_termios_back,
        serial_device_that_is_missing_or_no_tty_is_refused_before_running,
        serial_tty_termios_is_put_back_on_every_ending_but_sigkill
    ]
}
