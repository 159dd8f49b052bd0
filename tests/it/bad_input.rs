//! Every bad input gets a one-line error naming the value, the allowed range and the
//! fix, with the documented exit code, before anything is measured.

use crate::common;
use common::*;
use predicates::prelude::*;

fn fails_with(args: &[&str], code: i32, needles: &[&str]) {
    let assert = latscope().args(args).assert().failure().code(code);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    for n in needles {
        assert!(
            stderr.contains(n),
            "stderr for {args:?} lacks '{n}':\n{stderr}"
        );
    }
    assert!(stderr.lines().count() <= 2, "error is not short:\n{stderr}");
}

fn zero_negative_and_huge_periods() {
    fails_with(
        &["timer", "--period", "0"],
        2,
        &["--period", "'0'", "10 µs to 10 s"],
    );
    fails_with(&["timer", "--period", "-5ms"], 2, &["--period", "negative"]);
    fails_with(
        &["timer", "--period", "1h"],
        2,
        &["--period", "10 µs to 10 s"],
    );
    fails_with(&["timer", "-i", "5"], 2, &["--interval", "'5'"]);
    // A bare number has no unit: refused with the fix (issue 25, item 2).
    fails_with(
        &["timer", "--period", "100"],
        2,
        &["--period", "'100'", "no unit", "100us", "-i 100"],
    );
    fails_with(&["timer", "--period", "1 parsec"], 2, &["unknown unit"]);
}

/// Issue 33's one unit rule: every duration option of every command refuses a bare number
/// with the fix (the unit its users mean), instead of reading it in a unit of its own
/// (`--deadline 5` was 5 µs, `-D 5` 5 s, `--timer-slack 5` 5 ns); sizes read two ways too.
fn every_duration_option_needs_its_unit() {
    let cases: [(&[&str], &str, &str); 13] = [
        (&["timer", "--deadline", "5"], "--deadline", "write 5us"),
        (&["timer", "-D", "10"], "--duration", "write 10s"),
        (&["timer", "--warmup", "2"], "--warmup", "write 2s"),
        (&["timer", "--checkpoint", "5"], "--checkpoint", "write 5s"),
        (
            &["timer", "--break-above", "500"],
            "--break-above",
            "write 500us",
        ),
        (
            &["timer", "--timer-slack", "50"],
            "--timer-slack",
            "write 50ns",
        ),
        (
            &["timer", "--dma-latency", "10"],
            "--dma-latency",
            "write 10us",
        ),
        (
            &["timer", "--trace", "--trace-buffer", "4096"],
            "--trace-buffer",
            "write 4096K",
        ),
        (
            &["timer", "--trace", "--trace-threshold", "50"],
            "--trace-threshold",
            "write 50us",
        ),
        (&["wake", "-i", "1000"], "--interval", "write 1000us"),
        (&["net", "--timeout", "100"], "--timeout", "write 100ms"),
        (&["noise", "--threshold", "5"], "--threshold", "write 5us"),
        (&["load", "cpu:50%", "-D", "5"], "--duration", "write 5s"),
    ];
    for (args, option, fix) in cases {
        let value = args.last().unwrap();
        fails_with(args, 2, &[option, &format!("'{value}'"), "no unit", fix]);
    }
    fails_with(
        &["timer", "--dma-latency", "1500ns"],
        2,
        &["--dma-latency", "whole µs"],
    );
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("bare.toml");
    std::fs::write(
        &plan,
        "[[matrix]]\nprobe = \"timer\"\nperiods = [\"300\"]\n",
    )
    .unwrap();
    fails_with(
        &["suite", "--plan", plan.to_str().unwrap()],
        2,
        &["periods", "'300'", "no unit", "write 300us"],
    );
}

fn unknown_method() {
    fails_with(
        &["timer", "--method", "sleepy"],
        2,
        &["'sleepy'", "clock-nanosleep", "busy"],
    );
}

fn cpus_that_are_not_online() {
    fails_with(
        &["timer", "--cpus", "4095"],
        2,
        &["CPU 4095 is not online", "--cpus"],
    );
    fails_with(&["timer", "--cpus", "x"], 2, &["--cpus", "'x'"]);
}

fn priority_outside_the_policy_range() {
    fails_with(
        &["timer", "--policy", "fifo", "-p", "100"],
        2,
        &["--priority", "1-99"],
    );
    fails_with(
        &["timer", "--policy", "other", "-p", "5"],
        2,
        &[
            "--priority",
            "only 0 for --policy other",
            "--policy fifo or rr",
        ],
    );
    fails_with(
        &["timer", "--policy", "rr", "-p", "0"],
        2,
        &["--priority", "1-99"],
    );
}

fn unwritable_export_path_is_caught_before_measuring() {
    let start = std::time::Instant::now();
    fails_with(
        &[
            "timer",
            "-D",
            "30s",
            "--export-json",
            "/proc/latscope/nope.json",
        ],
        2,
        &["/proc/latscope/nope.json", "--export-json"],
    );
    fails_with(
        &["timer", "-D", "30s", "--raw", "/nonexistent-dir/raw.csv"],
        2,
        &["--raw"],
    );
    assert!(
        start.elapsed().as_secs() < 10,
        "the error came after measuring"
    );
}

fn rt_policy_without_permission_suggests_other() {
    // Drop root's capabilities in a child: setpriv is in util-linux.
    let bin = common::latscope_path();
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(&bin)
        .args(["timer", "--policy", "fifo", "-D", "1s"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("CAP_SYS_NICE") && stderr.contains("--policy other"),
        "{stderr}"
    );
}

fn busy_at_rt_with_throttling_off_is_refused_unless_forced() {
    // Throttling off is system-wide: never while a latency test of this binary measures.
    let _lock = latency_lock();
    let path = "/proc/sys/kernel/sched_rt_runtime_us";
    let original = std::fs::read_to_string(path).expect("checked before");
    // Probe refusal by checking the message only; never leave throttling off.
    struct Restore(String);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = std::fs::write("/proc/sys/kernel/sched_rt_runtime_us", self.0.trim());
        }
    }
    let _restore = Restore(original);
    std::fs::write(path, "-1").expect("checked before: root may change it");
    fails_with(
        &["timer", "--method", "busy", "--cpus", "0", "-D", "1s"],
        2,
        &[
            "refusing busy-waiting",
            "sched_rt_runtime_us = -1",
            "--force",
        ],
    );
}

fn bad_values_of_other_options() {
    fails_with(&["timer", "--samples", "0"], 2, &["--samples", "1 or more"]);
    fails_with(&["timer", "--duration", "0"], 2, &["--duration"]);
    fails_with(&["timer", "--deadline", "0"], 2, &["--deadline"]);
    fails_with(&["timer", "--dma-latency", "-1"], 2, &["--dma-latency"]);
    latscope()
        .args(["timer", "--policy", "sometimes"])
        .assert()
        .failure()
        .code(2)
        .stderr(predicate::str::contains("possible values"));
}

fn raw_buffer_too_large_is_refused_but_the_first_bound_sizes_it() {
    fails_with(
        &["timer", "--raw", "/tmp/latscope-raw.csv", "-l", "200000000"],
        2,
        &["--raw", "at most 100000000"],
    );
    // 2e8 samples asked, but one second at 1 ms ends the run first: fine. Writing to a
    // device writes into it: /dev/null must stay the device, not become a file.
    latscope()
        .args(["timer", "--raw", "/dev/null", "-l", "200000000", "-D", "1s"])
        .args([
            "-a",
            "0",
            "--warmup",
            "0",
            "-q",
            "--export-json",
            "/dev/null",
        ])
        .assert()
        .success();
    use std::os::unix::fs::FileTypeExt;
    let null = std::fs::metadata("/dev/null").unwrap();
    assert!(null.file_type().is_char_device(), "/dev/null was replaced");
}

/// Issue 22 item 8: `--help` lists every exit code of src/error.rs with its meaning.
fn help_lists_every_exit_code() {
    let out = latscope().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for (code, meaning) in latscope::error::EXIT_CODES {
        let meaning = meaning.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            help.contains(&format!("{code} {meaning}")),
            "{code} {meaning}: {help}"
        );
    }
    for code in [5, 6] {
        assert!(help.contains(&format!(", {code} ")), "{code}: {help}");
    }
}

/// Issue 22 item 8: `compare --help` lists only the exports compare writes, and the
/// others are unknown options (no longer listed, then refused).
fn compare_help_lists_only_what_it_writes() {
    let out = latscope().args(["compare", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for has in [
        "--export-html",
        "--export-markdown",
        "--export-csv",
        "--fail-above",
    ] {
        assert!(help.contains(has), "{has}: {help}");
    }
    // As options (the text after the list names --export-lava's lines).
    for lacks in [
        "--export-junit",
        "--export-json",
        "--export-lava",
        "--checkpoint",
    ] {
        assert!(!help.contains(&format!("{lacks} <")), "{lacks}: {help}");
    }
    let run = fixture("run.json");
    let run = run.to_str().unwrap();
    let out = latscope()
        .args(["compare", run, run, "--export-junit", "/tmp/x.xml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("unexpected argument '--export-junit'"),
        "{stderr}"
    );
}

/// Issue 22 item 8: `latscope report -` reads the result from standard input.
fn report_dash_reads_standard_input() {
    let out = latscope()
        .args(["report", "-", "--format", "csv"])
        .write_stdin(std::fs::read(fixture("run.json")).unwrap())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let from_file = latscope()
        .args([
            "report",
            fixture("run.json").to_str().unwrap(),
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    assert_eq!(stdout, String::from_utf8_lossy(&from_file.stdout));
    let out = latscope()
        .args(["report", "-"])
        .write_stdin("no result")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("- (standard input)") && stderr.contains("not JSON"),
        "{stderr}"
    );
}

/// Issue 22 item 3: two options of one run naming one file are refused before measuring.
fn two_outputs_naming_one_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let same = dir.path().join("same.out");
    let same = same.to_str().unwrap();
    fails_with(
        &[
            "timer",
            "-D",
            "30s",
            "--export-csv",
            same,
            "--export-html",
            same,
        ],
        2,
        &["--export-csv and --export-html", same, "its own file"],
    );
    fails_with(
        &["timer", "-D", "30s", "--export-json", same, "--raw", same],
        2,
        &["--export-json and --raw"],
    );
}

/// Why RT throttling cannot be switched off for a moment here (None: it can).
fn rt_runtime_unchangeable() -> Option<String> {
    let path = "/proc/sys/kernel/sched_rt_runtime_us";
    match std::fs::metadata(path) {
        Err(_) => Some(format!("no {path}")),
        Ok(m) if m.permissions().readonly() || latscope::sys::process::effective_uid() != 0 => {
            Some(format!("needs root to change {path}"))
        }
        Ok(_) => None,
    }
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    vec![
        common::case(
            "zero_negative_and_huge_periods",
            zero_negative_and_huge_periods,
        ),
        common::case(
            "every_duration_option_needs_its_unit",
            every_duration_option_needs_its_unit,
        ),
        common::case("unknown_method", unknown_method),
        common::case("cpus_that_are_not_online", cpus_that_are_not_online),
        common::case(
            "priority_outside_the_policy_range",
            priority_outside_the_policy_range,
        ),
        common::case(
            "unwritable_export_path_is_caught_before_measuring",
            unwritable_export_path_is_caught_before_measuring,
        ),
        common::case(
            "rt_policy_without_permission_suggests_other",
            rt_policy_without_permission_suggests_other,
        )
        .unless(common::missing("setpriv", "util-linux")),
        common::case(
            "busy_at_rt_with_throttling_off_is_refused_unless_forced",
            busy_at_rt_with_throttling_off_is_refused_unless_forced,
        )
        .unless(rt_runtime_unchangeable()),
        common::case("bad_values_of_other_options", bad_values_of_other_options),
        common::case(
            "raw_buffer_too_large_is_refused_but_the_first_bound_sizes_it",
            raw_buffer_too_large_is_refused_but_the_first_bound_sizes_it,
        ),
        common::case("help_lists_every_exit_code", help_lists_every_exit_code),
        common::case(
            "compare_help_lists_only_what_it_writes",
            compare_help_lists_only_what_it_writes,
        ),
        common::case(
            "report_dash_reads_standard_input",
            report_dash_reads_standard_input,
        ),
        common::case(
            "two_outputs_naming_one_file_are_refused",
            two_outputs_naming_one_file_are_refused,
        ),
    ]
}
