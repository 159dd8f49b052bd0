//! `latscope cyclictest` as a drop-in: the same argument lists run through the real
//! cyclictest (rt-tests) and through latscope, and one parser of cyclictest's output
//! (written here: the `T:` summary line, the histogram dump and its trailer, the --json
//! keys) reads both with the same structure. `compare` reads latscope's --json as it
//! reads cyclictest's.

use crate::common;

use common::{case, missing, usable_cpu};
use regex::Regex;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// One `T:` line.
#[derive(Debug)]
struct Summary {
    thread: u64,
    priority: u64,
    interval_us: u64,
    cycles: u64,
    min: u64,
    avg: u64,
    max: u64,
}

/// Every `T:` line of a cyclictest output (the `-q` summary or the last live frame).
fn summary_lines(text: &str) -> Vec<Summary> {
    let re = Regex::new(
        r"^T:\s*(\d+) \(\s*(\d+)\) P:\s*(\d+) I:(\d+) C:\s*(\d+) Min:\s*(\d+) Act:\s*(\d+) Avg:\s*(\d+) Max:\s*(\d+)$",
    )
    .unwrap();
    text.lines()
        .filter_map(|l| re.captures(l))
        .map(|c| {
            let n = |i: usize| c[i].parse::<u64>().unwrap();
            Summary {
                thread: n(1),
                priority: n(3),
                interval_us: n(4),
                cycles: n(5),
                min: n(6),
                avg: n(8),
                max: n(9),
            }
        })
        .collect()
}

/// The `-h`/`-H` dump as a parser of cyclictest's output reads it.
#[derive(Debug)]
struct HistogramDump {
    /// Per bucket, the columns (a thread each, then the sum column with -H).
    rows: Vec<Vec<u64>>,
    total: Vec<u64>,
    min: Vec<u64>,
    avg: Vec<u64>,
    max: Vec<u64>,
    overflows: Vec<u64>,
    /// Per thread: the logged cycle numbers and the `# N others` count.
    overflow_cycles: Vec<(Vec<u64>, u64)>,
}

fn numbers_after(line: &str, label: &str) -> Vec<u64> {
    line.strip_prefix(label)
        .unwrap_or_else(|| panic!("expected '{label}', got '{line}'"))
        .split_whitespace()
        .map(|v| v.parse().unwrap_or_else(|_| panic!("'{v}' in '{line}'")))
        .collect()
}

/// Parses the dump strictly: `# Histogram`, rows `NNNNNN CCCCCC\tCCCCCC…` numbered from
/// 0, then the trailer lines in cyclictest's order.
fn histogram_dump(text: &str) -> HistogramDump {
    let mut lines = text
        .lines()
        .skip_while(|l| *l != "# Histogram")
        .skip(1)
        .peekable();
    let row = Regex::new(r"^(\d{6}) (\d{6}(?:\t\d{6})*)$").unwrap();
    let mut rows = Vec::new();
    while let Some(c) = lines.peek().and_then(|l| row.captures(l)) {
        assert_eq!(c[1].parse::<usize>().unwrap(), rows.len(), "rows in order");
        rows.push(c[2].split('\t').map(|v| v.parse().unwrap()).collect());
        lines.next();
    }
    let mut next = |label: &str| numbers_after(lines.next().expect(label), label);
    let total = next("# Total:");
    let min = next("# Min Latencies:");
    let avg = next("# Avg Latencies:");
    let max = next("# Max Latencies:");
    let overflows = next("# Histogram Overflows:");
    assert_eq!(lines.next(), Some("# Histogram Overflow at cycle number:"));
    let thread_line =
        Regex::new(r"^# Thread (\d+):((?: \d{5,})*)(?: # (\d{5,}) others)?$").unwrap();
    let mut overflow_cycles = Vec::new();
    while let Some(c) = lines.peek().and_then(|l| thread_line.captures(l)) {
        assert_eq!(c[1].parse::<usize>().unwrap(), overflow_cycles.len());
        let cycles = c[2]
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        let others = c.get(3).map_or(0, |m| m.as_str().parse().unwrap());
        overflow_cycles.push((cycles, others));
        lines.next();
    }
    assert_eq!(lines.next(), Some(""), "a blank line ends the dump");
    HistogramDump {
        rows,
        total,
        min,
        avg,
        max,
        overflows,
        overflow_cycles,
    }
}

/// The key sets of a cyclictest --json file: top level, sysinfo, each thread entry.
fn json_keys(v: &Value) -> (BTreeSet<String>, BTreeSet<String>, Vec<BTreeSet<String>>) {
    let keys = |o: &Value| -> BTreeSet<String> {
        o.as_object().expect("an object").keys().cloned().collect()
    };
    let threads = v["thread"].as_object().expect("thread object");
    let mut entries: Vec<(u64, &Value)> = threads
        .iter()
        .map(|(k, t)| (k.parse().expect("thread keys are numbers"), t))
        .collect();
    entries.sort_by_key(|e| e.0);
    assert_eq!(
        entries.iter().map(|e| e.0).collect::<Vec<_>>(),
        (0..entries.len() as u64).collect::<Vec<_>>()
    );
    (
        keys(v),
        keys(&v["sysinfo"]),
        entries.iter().map(|(_, t)| keys(t)).collect(),
    )
}

/// Runs cyclictest and `latscope cyclictest` with `args` ({json} replaced by each one's
/// file in `dir`); returns (cyclictest stdout, latscope stdout).
fn both(args: &[String], dir: &Path) -> (String, String) {
    let (ct, ls, _) = both_with_stderr(args, dir);
    (ct, ls)
}

/// `both`, also returning latscope's stderr (its `# latscope:` lines).
fn both_with_stderr(args: &[String], dir: &Path) -> (String, String, String) {
    let with_json = |name: &str| -> Vec<String> {
        args.iter()
            .map(|a| a.replace("{json}", &dir.join(name).display().to_string()))
            .collect()
    };
    let ct = std::process::Command::new("cyclictest")
        .args(with_json("cyclictest.json"))
        .output()
        .expect("running cyclictest");
    assert!(
        ct.status.success(),
        "cyclictest {args:?}: {}",
        String::from_utf8_lossy(&ct.stderr)
    );
    let ls = common::latscope()
        .arg("cyclictest")
        .args(with_json("latscope.json"))
        .output()
        .expect("running latscope cyclictest");
    assert!(
        ls.status.success(),
        "latscope cyclictest {args:?}: {}",
        String::from_utf8_lossy(&ls.stderr)
    );
    (
        String::from_utf8(ct.stdout).unwrap(),
        String::from_utf8(ls.stdout).unwrap(),
        String::from_utf8(ls.stderr).unwrap(),
    )
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(String::from).collect()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `-q` summaries of two pinned threads with distance: both tools print one `T:` line a
/// thread with the same priority and intervals, and cycles within -l.
fn quiet_summary_lines_parse_alike() {
    let _lock = common::latency_lock();
    let cpu = usable_cpu();
    let dir = tempfile::tempdir().unwrap();
    let args = words(&format!(
        "-m -q -l 1000 -i 1000 -p 95 -t 2 -a {cpu} --json={{json}}"
    ));
    let (ct, ls) = both(&args, dir.path());
    let (ct, ls) = (summary_lines(&ct), summary_lines(&ls));
    assert_eq!(ct.len(), 2, "{ct:?}");
    assert_eq!(ls.len(), ct.len(), "{ls:?}");
    for (c, l) in ct.iter().zip(&ls) {
        assert_eq!(
            (l.thread, l.priority, l.interval_us),
            (c.thread, c.priority, c.interval_us)
        );
        assert!(c.cycles <= 1000 && l.cycles <= 1000);
        assert!(l.min <= l.avg && l.avg <= l.max, "{l:?}");
    }
    // Thread 0 runs its 1000 loops in both, and both stop the others then (issue 35
    // item 1): thread 1 (I:1500) has about 1000 / 1.5 cycles. cyclictest's main loop
    // notices every 10 ms and stops 50 ms later, so it counts a few more.
    assert_eq!((ct[0].cycles, ls[0].cycles), (1000, 1000));
    for (who, c) in [("cyclictest", ct[1].cycles), ("latscope", ls[1].cycles)] {
        assert!((650..=720).contains(&c), "{who}'s thread 1: {c} cycles");
    }
    // JSON: the same keys everywhere, threads on the CPU asked for.
    let (c, l) = (
        read_json(&dir.path().join("cyclictest.json")),
        read_json(&dir.path().join("latscope.json")),
    );
    assert_eq!(json_keys(&l), json_keys(&c));
    for (i, t) in l["thread"].as_object().unwrap().values().enumerate() {
        assert_eq!(t["cpu"].as_u64(), Some(cpu as u64));
        assert_eq!(t["cycles"].as_u64(), Some(ls[i].cycles));
    }
}

/// `-S -h N`: a column per CPU, N rows, and counts that add up: Total + Overflows =
/// cycles (from the JSON), JSON histogram = the rows, overflow cycle lists as long as
/// cyclictest logs them.
fn smp_histogram_dumps_parse_alike() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let args = words("-m -S -p 95 -i 1000 -h 100 -q -l 1000 --json={json}");
    let (ct, ls) = both(&args, dir.path());
    assert!(summary_lines(&ct).is_empty() && summary_lines(&ls).is_empty());
    let (c, l) = (histogram_dump(&ct), histogram_dump(&ls));
    let cpus = c.total.len();
    for (dump, json_name) in [(&c, "cyclictest.json"), (&l, "latscope.json")] {
        assert_eq!(dump.rows.len(), 100);
        assert!(
            dump.rows.iter().all(|r| r.len() == cpus),
            "a column per thread"
        );
        for list in [
            &dump.total,
            &dump.min,
            &dump.avg,
            &dump.max,
            &dump.overflows,
        ] {
            assert_eq!(list.len(), cpus);
        }
        assert_eq!(dump.overflow_cycles.len(), cpus);
        let json = read_json(&dir.path().join(json_name));
        assert_eq!(json["num_threads"].as_u64(), Some(cpus as u64));
        for t in 0..cpus {
            let column: u64 = dump.rows.iter().map(|r| r[t]).sum();
            assert_eq!(column, dump.total[t]);
            let entry = &json["thread"][t.to_string()];
            let cycles = entry["cycles"].as_u64().unwrap();
            assert_eq!(
                dump.total[t] + dump.overflows[t],
                cycles,
                "{json_name} T{t}"
            );
            let in_json: u64 = entry["histogram"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum();
            assert_eq!(in_json, dump.total[t]);
            let (logged, others) = &dump.overflow_cycles[t];
            assert_eq!(logged.len() as u64 + others, dump.overflows[t]);
            assert!(logged.len() <= 100);
            assert!(logged.windows(2).all(|w| w[0] < w[1]) && logged.iter().all(|&n| n < cycles));
            assert!(dump.min[t] <= dump.avg[t] && dump.avg[t] <= dump.max[t]);
        }
    }
    assert_eq!(l.total.len(), cpus);
    assert_eq!(
        json_keys(&read_json(&dir.path().join("latscope.json"))),
        json_keys(&read_json(&dir.path().join("cyclictest.json")))
    );
}

/// `-H`: the summary column (rows, Total, Max and Overflows) with two threads, and `-N`
/// summaries in ns.
fn histofall_and_nsecs_parse_alike() {
    let _lock = common::latency_lock();
    let cpu = usable_cpu();
    let dir = tempfile::tempdir().unwrap();
    let args = words(&format!("-q -l 300 -i 1000 -p 90 -t 2 -a {cpu} -H 40"));
    let (ct, ls) = both(&args, dir.path());
    for dump in [histogram_dump(&ct), histogram_dump(&ls)] {
        assert!(dump
            .rows
            .iter()
            .all(|r| r.len() == 3 && r[2] == r[0] + r[1]));
        assert_eq!(dump.total.len(), 3);
        assert_eq!(dump.total[2], dump.total[0] + dump.total[1]);
        assert_eq!((dump.min.len(), dump.avg.len()), (2, 2));
        assert_eq!(dump.max.len(), 3);
        assert_eq!(dump.max[2], dump.max[0].max(dump.max[1]));
        assert_eq!(dump.overflows[2], dump.overflows[0] + dump.overflows[1]);
    }
    let args = words(&format!("-q -N -l 300 -i 1000 -p 90 -a {cpu}"));
    let (ct, ls) = both(&args, dir.path());
    let (ct, ls) = (summary_lines(&ct), summary_lines(&ls));
    assert_eq!((ct.len(), ls.len()), (1, 1));
    // In ns: no timer wake-up takes under 100 ns, so µs values would show here.
    assert!(ct[0].min >= 100 && ls[0].min >= 100, "{ct:?} {ls:?}");
}

/// `-n` (clock_nanosleep, older cyclictest) is accepted; rt-tests 2.4 itself refuses it.
/// `--policy=other -p0` runs SCHED_OTHER in latscope where cyclictest 2.4 runs FIFO 2.
fn legacy_n_and_policy_other_p0() {
    let _lock = common::latency_lock();
    let cpu = usable_cpu();
    let ct = std::process::Command::new("cyclictest")
        .args(["-n", "-q", "-l", "10"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&ct.stdout) + String::from_utf8_lossy(&ct.stderr);
    assert!(
        said.contains("invalid option"),
        "cyclictest 2.4 refuses -n: {said}"
    );
    let out = common::assert_success(
        common::latscope_command()
            .args(["cyclictest", "-m", "-n", "-q", "-l", "200", "-p", "95"])
            .arg(format!("-a{cpu}"))
            .output()
            .unwrap(),
    );
    let lines = summary_lines(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(
        (lines.len(), lines[0].cycles, lines[0].priority),
        (1, 200, 95)
    );

    let dir = tempfile::tempdir().unwrap();
    let args = words(&format!("-q -l 100 --policy=other -p0 -a {cpu}"));
    let (ct, ls, ls_err) = both_with_stderr(&args, dir.path());
    assert_eq!(summary_lines(&ct)[0].priority, 2, "cyclictest 2.4's FIFO 2");
    assert_eq!(summary_lines(&ls)[0].priority, 0);
    assert!(
        !ls_err.contains("# latscope"),
        "nothing extra with -q: {ls_err}"
    );
    assert!(
        !ls.contains("# latscope"),
        "stdout is cyclictest's alone: {ls}"
    );
    // Without -q, one line of at most 80 columns says so.
    let out = common::assert_success(
        common::latscope_command()
            .args(["cyclictest", "-l", "100", "--policy=other", "-p0"])
            .arg(format!("-a{cpu}"))
            .output()
            .unwrap(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let notes: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("# latscope:"))
        .collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(notes[0].contains("stays SCHED_OTHER"), "{err}");
    assert!(notes[0].chars().count() <= 80, "{err}");
}

/// `compare` reads `latscope cyclictest --json` as it reads cyclictest's, and aligns them.
fn compare_reads_latscope_cyclictest_json() {
    let _lock = common::latency_lock();
    let cpu = usable_cpu();
    let dir = tempfile::tempdir().unwrap();
    let args = words(&format!(
        "-m -q -l 1000 -i 1000 -p 95 -a {cpu} -h 400 --json={{json}}"
    ));
    both(&args, dir.path());
    let ls = dir.path().join("latscope.json");
    let run = latscope::import::cyclictest::load_any(&ls).unwrap();
    let th = &run.scenarios[0].threads[0];
    assert_eq!((th.cpu, th.summary.samples), (cpu, 1000));
    assert_eq!(th.histogram.iter().map(|b| b[1]).sum::<u64>(), 1000);
    let out = common::assert_success(
        common::latscope_command()
            .arg("compare")
            .arg(dir.path().join("cyclictest.json"))
            .arg(&ls)
            .output()
            .unwrap(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("not compared:"), "both align: {text}");
    assert!(
        text.contains(&format!("timer clock-nanosleep 1 ms cpu{cpu}")),
        "{text}"
    );
}

/// What cannot be honoured is refused in one line naming the option (and bad values
/// naming the value); `timer -h400` points to `latscope cyclictest` while `timer -h`
/// stays help.
fn refusals_and_timer_h() {
    for (args, named, code) in [
        (vec!["cyclictest", "--smi", "-a", "0"], "--smi", 8),
        (vec!["cyclictest", "-c", "2"], "-c", 2),
        (vec!["cyclictest", "-a", "4095"], "4095", 2),
        (vec!["cyclictest", "--bogus"], "--bogus", 2),
        (vec!["timer", "-h400"], "latscope cyclictest", 2),
        (
            vec!["timer", "-m", "-S", "-p95", "-h", "400"],
            "latscope cyclictest",
            2,
        ),
    ] {
        let out = common::latscope_command().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(err.contains(named), "{args:?}: {err}");
    }
    let help = common::latscope_command()
        .args(["timer", "-h"])
        .output()
        .unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("--period"));
}

/// `latscope cyclictest ARGS` on a pseudo-terminal (util-linux `script`): what the
/// terminal received.
fn on_a_terminal(args: &str) -> String {
    let command = format!("{} cyclictest {args}", common::latscope_path().display());
    let out = std::process::Command::new("script")
        .args(["-qefc", &command, "/dev/null"])
        .output()
        .expect("script runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{command}: {text}");
    text
}

/// The live frames of a run: (the frames before the last, the last frame), each frame's
/// text without its cursor-up; the cursor-up is cyclictest's `ESC[NA` for N = threads + 2.
fn frames(text: &str, threads: usize) -> (Vec<String>, String) {
    let up = format!("\x1b[{}A", threads + 2);
    let mut parts: Vec<String> = text
        .replace('\r', "")
        .split(&up)
        .map(str::to_string)
        .collect();
    let last = parts.pop().unwrap_or_default();
    (parts, last)
}

/// Issue 35 item 5 (and issue 25 item 7): without -q, cyclictest's live frames (the
/// policy header, a `T:` line per thread, the cursor moved up over them) are written
/// every 10 ms while it runs, on a terminal and into a pipe alike; the last frame stays,
/// with the exact final values. With -q nothing live.
fn live_frames_on_a_terminal_and_into_a_pipe() {
    let _lock = common::latency_lock();
    let cpu = usable_cpu();
    let live = on_a_terminal(&format!("-m -p 80 -i 1000 -D 2 -a {cpu}"));
    let (during, last) = frames(&live, 1);
    assert!(
        during.len() >= 20,
        "{} frames in 2 s:\n{live:?}",
        during.len()
    );
    let cycles: Vec<u64> = during
        .iter()
        .filter_map(|f| summary_lines(f).first().map(|t| t.cycles))
        .collect();
    assert!(cycles.windows(2).all(|w| w[0] <= w[1]), "{cycles:?}");
    let final_lines = summary_lines(&last);
    assert_eq!(final_lines.len(), 1, "one exact last frame: {last:?}");
    assert!(final_lines[0].cycles >= *cycles.last().unwrap());
    assert!(last.contains("policy: fifo: loadavg: "), "{last:?}");
    let quiet = on_a_terminal(&format!("-m -q -p 80 -i 1000 -D 1 -a {cpu}"));
    assert!(!quiet.contains("\x1b["), "-q draws nothing live: {quiet:?}");
    // Into a pipe: the same frames as cyclictest writes there.
    let args = words(&format!("-m -p 80 -i 1000 -D 1 -a {cpu}"));
    let dir = tempfile::tempdir().unwrap();
    let (ct, ls) = both(&args, dir.path());
    for (who, text) in [("cyclictest", &ct), ("latscope", &ls)] {
        let (during, last) = frames(text, 1);
        assert!(during.len() >= 20, "{who}: {} frames", during.len());
        assert_eq!(summary_lines(&last).len(), 1, "{who}: {last:?}");
    }
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    let no_cyclictest = || missing("cyclictest", "rt-tests");
    vec![
        case(
            "quiet_summary_lines_parse_alike",
            quiet_summary_lines_parse_alike,
        )
        .unless(no_cyclictest()),
        case(
            "smp_histogram_dumps_parse_alike",
            smp_histogram_dumps_parse_alike,
        )
        .unless(no_cyclictest()),
        case(
            "histofall_and_nsecs_parse_alike",
            histofall_and_nsecs_parse_alike,
        )
        .unless(no_cyclictest()),
        case("legacy_n_and_policy_other_p0", legacy_n_and_policy_other_p0).unless(no_cyclictest()),
        case(
            "compare_reads_latscope_cyclictest_json",
            compare_reads_latscope_cyclictest_json,
        )
        .unless(no_cyclictest()),
        case("refusals_and_timer_h", refusals_and_timer_h),
        case(
            "live_frames_on_a_terminal_and_into_a_pipe",
            live_frames_on_a_terminal_and_into_a_pipe,
        )
        .unless(missing("script", "util-linux").or_else(no_cyclictest)),
    ]
}
