//! The drop-in's output fed to the rules of the public programs that read cyclictest's
//! output, each with the command line that program runs: the rule is applied to
//! cyclictest's own output (proving it is the rule) and to `latscope cyclictest`'s, whose
//! numbers must be its own (its --json file of the same run). Each rule is restated
//! here from the file named above it (read, not copied); none of these programs is
//! packaged for this machine (Debian has no rteval; labgrid's is an example test).

use crate::common;

use common::{case, missing, usable_cpu};
use regex::Regex;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// Where a program reads the output: stdout alone (stderr dropped or kept apart), or
/// both streams in one file (`2>&1`, `| tee`, a serial console).
#[derive(Clone, Copy, PartialEq)]
enum Streams {
    Stdout,
    Merged,
}

/// Runs `cyclictest ARGS` or `latscope cyclictest ARGS` (with `--json=` into `dir`
/// when `json`), stopped by SIGINT after `sigint_after` if given, and returns what the
/// consumer reads.
fn run(
    latscope: bool,
    args: &[&str],
    streams: Streams,
    dir: &Path,
    sigint_after: Option<std::time::Duration>,
) -> (String, Option<Value>) {
    let name = if latscope { "latscope" } else { "cyclictest" };
    let json = dir.join(format!("{name}.json"));
    let mut cmd = if latscope {
        let mut c = common::latscope_command();
        c.arg("cyclictest");
        c
    } else {
        Command::new("cyclictest")
    };
    cmd.args(args);
    if sigint_after.is_none() {
        cmd.arg(format!("--json={}", json.display()));
    }
    let out_path = dir.join(format!("{name}.out"));
    let file = std::fs::File::create(&out_path).unwrap();
    cmd.stdout(file.try_clone().unwrap()).stdin(Stdio::null());
    match streams {
        Streams::Merged => cmd.stderr(file),
        Streams::Stdout => cmd.stderr(Stdio::null()),
    };
    let mut child = cmd.spawn().unwrap();
    if let Some(after) = sigint_after {
        std::thread::sleep(after);
        let kill = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "{name} {args:?}: {status}");
    let text = std::fs::read_to_string(&out_path).unwrap();
    let json = std::fs::read_to_string(&json)
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap());
    (text, json)
}

/// Both tools with the same arguments: [(cyclictest's, its json), (latscope's, its json)].
fn both(args: &[&str], streams: Streams) -> [(String, Option<Value>); 2] {
    let dir = tempfile::tempdir().unwrap();
    [false, true].map(|latscope| run(latscope, args, streams, dir.path(), None))
}

/// A thread's figure from a --json file.
fn json_f64(json: &Option<Value>, thread: usize, key: &str) -> f64 {
    json.as_ref().expect("a --json file")["thread"][thread.to_string()][key]
        .as_f64()
        .unwrap_or_else(|| panic!("thread {thread} {key}"))
}

fn json_of(json: &Option<Value>, thread: usize, key: &str) -> u64 {
    json_f64(json, thread, key) as u64
}

/// Min, avg and max as a consumer read them agree with the --json file's (the printed
/// average is the mean truncated, the file's the mean rounded to two decimals: the file's
/// is at most 1.005 above the printed one, never more than 0.005 below).
fn assert_min_avg_max(read: [u64; 3], json: &Option<Value>, thread: usize, context: &str) {
    assert_eq!(read[0], json_of(json, thread, "min"), "min: {context}");
    assert_eq!(read[2], json_of(json, thread, "max"), "max: {context}");
    let avg = json_f64(json, thread, "avg");
    assert!(
        (-0.01..=1.01).contains(&(avg - read[1] as f64)),
        "avg {} vs {avg}: {context}",
        read[1]
    );
}

/// Linaro test-definitions, automated/lib/parse_rt_tests_results.py (parse_cyclictest):
/// the lines after the last ESC (all of them with -q), those starting with `T:`, split on
/// `[ :\n]+`, the word after `t`, `min`, `avg`, `max`.
fn linaro(text: &str) -> Vec<[u64; 4]> {
    let split = Regex::new(r"[ :\n]+").unwrap();
    let tail = text.rsplit('\x1b').next().unwrap();
    tail.lines()
        .filter(|l| l.starts_with("T:"))
        .map(|l| {
            let words: Vec<String> = split.split(l).map(str::to_lowercase).collect();
            let after = |key: &str| -> u64 {
                let at = words.iter().position(|w| w == key).expect(key);
                words[at + 1].parse().unwrap()
            };
            [after("t"), after("min"), after("avg"), after("max")]
        })
        .collect()
}

/// mmtests, bin/lib/MMTests/ExtractCyclictest.pm (parseTraditional): lines matching
/// `^T: ([0-9+]) .*Avg:\s+([0-9]+).*Max:\s+([0-9]+)` give thread, Avg and Max.
fn mmtests(text: &str) -> Vec<[u64; 3]> {
    let re = Regex::new(r"^T: ([0-9+]) .*Avg:\s+([0-9]+).*Max:\s+([0-9]+)").unwrap();
    text.lines()
        .filter_map(|l| re.captures(l))
        .map(|c| [1, 2, 3].map(|i| c[i].parse().unwrap()))
        .collect()
}

/// The `T:` lines' readings: Linaro's (stdout, `-q` as its cyclictest.sh runs it) and
/// mmtests' (`2>&1 | tee`, as its cyclictest-bench runs it) find every thread with the
/// numbers of latscope's --json file.
fn linaro_and_mmtests_read_the_t_lines() {
    let _lock = common::latency_lock();
    let cpu = usable_cpu().to_string();
    let linaro_args = ["-q", "-p98", "-i1000", "-t1", "-a", &cpu, "-D1", "-m"];
    let [(ct, _), (ls, ls_json)] = both(&linaro_args, Streams::Merged);
    assert_eq!(linaro(&ct).len(), 1, "{ct}");
    let read = linaro(&ls);
    assert_eq!(read.len(), 1, "{ls}");
    let [t, min, avg, max] = read[0];
    assert_eq!(t, 0);
    assert_min_avg_max([min, avg, max], &ls_json, 0, &ls);

    let mmtests_args = [
        "--mlockall",
        "-p98",
        "--threads",
        "--distance=0",
        "--duration=1",
        "--quiet",
    ];
    let [(ct, _), (ls, ls_json)] = both(&mmtests_args, Streams::Merged);
    let threads = mmtests(&ct).len();
    assert!(threads >= 1, "{ct}");
    let read = mmtests(&ls);
    assert_eq!(read.len(), threads, "{ls}");
    for (i, [t, avg, max]) in read.into_iter().enumerate() {
        assert_eq!(t, i as u64);
        let min = json_of(&ls_json, i, "min");
        assert_min_avg_max([min, avg, max], &ls_json, i, &ls);
    }
}

/// labgrid, examples/shell/test_rt.py: `cyclictest -SN -D 5 -q` over the target's
/// console (stdout and stderr on one tty), then the last line,
/// `Min: (\w+) Act:\s+\w+\s+Avg:\s+(\w+)\s+Max:\s+(\w+)`. That regex wants one space
/// after `Min:`, which cyclictest's `Min:%7ld` gives only for 6-digit values (and `\s+`
/// after `Max:`, which `%8ld` in ns drops from 100 ms on), so here the rule is the last
/// line with `\s*` in those places.
fn labgrid_reads_the_last_console_line() {
    let _lock = common::latency_lock();
    let re = Regex::new(r"Min:\s*(\w+) Act:\s*\w+\s+Avg:\s*(\w+)\s+Max:\s*(\w+)").unwrap();
    let [(ct, _), (ls, ls_json)] = both(&["-SN", "-D", "1", "-q"], Streams::Merged);
    let last = |text: &str| text.lines().last().unwrap_or_default().trim().to_string();
    assert!(re.is_match(&last(&ct)), "{ct}");
    let line = last(&ls);
    let c = re.captures(&line).unwrap_or_else(|| panic!("{ls}"));
    let threads = ls_json.as_ref().unwrap()["num_threads"].as_u64().unwrap() as usize;
    let lastthread = threads - 1;
    let read = [1, 2, 3].map(|i| c[i].parse::<u64>().unwrap());
    assert_min_avg_max(read, &ls_json, lastthread, &ls);
}

/// OSADL's mklatencyplot.bash: `cyclictest -l N -m -Sp90 -i200 -h400 -q >output`; the
/// data rows are `grep -v -e "^#" -e "^$"` (spaces made tabs: bucket then a column per
/// CPU), the maximum the largest number on the `Max Latencies` line.
fn osadl_reads_rows_and_max() {
    let _lock = common::latency_lock();
    let args = ["-l1000", "-m", "-Sp90", "-i200", "-h400", "-q"];
    let [(ct, _), (ls, ls_json)] = both(&args, Streams::Stdout);
    let rows = |text: &str| -> Vec<Vec<u64>> {
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(|l| {
                l.replace(' ', "\t")
                    .split('\t')
                    .map(|v| v.parse().unwrap_or_else(|_| panic!("{l:?}")))
                    .collect()
            })
            .collect()
    };
    let max = |text: &str| -> u64 {
        let line = text.lines().find(|l| l.contains("Max Latencies")).unwrap();
        line.split(' ')
            .filter_map(|w| w.parse().ok())
            .max()
            .unwrap()
    };
    let (c, l) = (rows(&ct), rows(&ls));
    assert_eq!((c.len(), l.len()), (400, 400));
    assert!(c.iter().chain(&l).all(|r| r.len() == c[0].len()));
    max(&ct);
    let threads = l[0].len() - 1;
    let truth = (0..threads).map(|t| json_of(&ls_json, t, "max")).max();
    assert_eq!(Some(max(&ls)), truth);
}

/// rteval, rteval/modules/measurement/cyclictest.py: `cyclictest -i100 -qmu "-h 3500"
/// -p95 -tN -aLIST` with stdout in a file and stderr to /dev/null, stopped by SIGINT;
/// `#` lines give `# Max Latencies: ` per core and `# Break value: `; every other
/// non-blank line must start with a bucket number followed by a count per core.
fn rteval_reads_the_histogram_after_sigint() {
    let _lock = common::latency_lock();
    let online = latscope::sys::affinity::online_cpus();
    let list = latscope::units::format_cpu_list(&online);
    let threads = format!("-t{}", online.len());
    let cpus = format!("-a{list}");
    let args = ["-i100", "-qmu", "-h 3500", "-p95", &threads, &cpus];
    let dir = tempfile::tempdir().unwrap();
    let after = Some(std::time::Duration::from_secs(2));
    for latscope in [false, true] {
        let (text, _) = run(latscope, &args, Streams::Stdout, dir.path(), after);
        let mut maxima = None;
        let mut buckets = 0;
        for line in text.lines() {
            if let Some(values) = line.strip_prefix("# Max Latencies: ") {
                let v: Vec<u64> = values
                    .split_whitespace()
                    .map(|x| x.parse().unwrap())
                    .collect();
                maxima = Some(v);
            }
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let vals: Vec<&str> = line.split_whitespace().collect();
            let index: u64 = vals[0]
                .parse()
                .unwrap_or_else(|_| panic!("rteval logs 'unexpected output': {line:?}"));
            assert_eq!(index, buckets);
            assert_eq!(vals.len(), online.len() + 1, "{line:?}");
            buckets += 1;
        }
        assert_eq!(buckets, 3500, "latscope={latscope}");
        let maxima = maxima.unwrap_or_else(|| panic!("no # Max Latencies: {text}"));
        assert_eq!(maxima.len(), online.len());
    }
}

/// Canonical checkbox, run_cyclictest.py: `cyclictest -a2-3 -t2 -m -p99 -i250 -h700 -q
/// -D N` (here on the CPUs there are), stdout apart from stderr; a line containing
/// `# Max Latencies` or `# Histogram Overflows` gives the values after its `:`.
/// yardstick, cyclictest_benchmark.bash: `cyclictest $OPTIONS > file`, then
/// `awk '/# Min Latencies:/{print $4}'` (and Avg, Max): the first thread's value.
fn checkbox_and_yardstick_read_the_trailer() {
    let _lock = common::latency_lock();
    let online = latscope::sys::affinity::online_cpus();
    let cpus = format!("-a{}", latscope::units::format_cpu_list(&online));
    let threads = format!("-t{}", online.len());
    let args = [
        cpus.as_str(),
        threads.as_str(),
        "-m",
        "-p99",
        "-i250",
        "-h700",
        "-q",
        "-D",
        "1",
    ];
    let [(ct, _), (ls, ls_json)] = both(&args, Streams::Stdout);
    let after_colon = |text: &str, key: &str| -> Vec<u64> {
        let line = text.lines().find(|l| l.contains(key)).expect(key);
        let values = line.split(':').nth(1).unwrap();
        values
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect()
    };
    assert_eq!(after_colon(&ct, "# Max Latencies").len(), online.len());
    let maxima = after_colon(&ls, "# Max Latencies");
    let overflows = after_colon(&ls, "# Histogram Overflows");
    for t in 0..online.len() {
        assert_eq!(maxima[t], json_of(&ls_json, t, "max"));
        let json = ls_json.as_ref().unwrap();
        let histogram = json["thread"][t.to_string()]["histogram"]
            .as_object()
            .unwrap();
        let counted: u64 = histogram.values().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(overflows[t], json_of(&ls_json, t, "cycles") - counted);
    }

    let cpu = usable_cpu().to_string();
    let args = [
        "-a", &cpu, "-i", "1000", "-p", "99", "-l", "1000", "-t", "1", "-h", "90", "-m", "-q",
    ];
    let [(ct, _), (ls, ls_json)] = both(&args, Streams::Stdout);
    let awk4 = |text: &str, label: &str| -> String {
        let line = text.lines().find(|l| l.contains(label)).expect(label);
        line.split_whitespace()
            .nth(3)
            .unwrap_or_default()
            .to_string()
    };
    let labels = ["# Min Latencies:", "# Avg Latencies:", "# Max Latencies:"];
    for label in labels {
        awk4(&ct, label).parse::<u64>().unwrap();
    }
    let read = labels.map(|label| awk4(&ls, label).parse::<u64>().unwrap());
    assert_min_avg_max(read, &ls_json, 0, &ls);
}

/// Ghaf's ci-test-automation, Robot-Framework/lib/output_parser.py with the command
/// lines of its performance.robot (`sh -lc 'cyclictest -q -t1 -p95 -m -i1000 -l30000
/// --histogram=N > out 2>&1'`, and `--spike=N` when overflows are many): `^# Min/Avg/Max
/// Latencies:\s+(.+)$`, the rows between `# Histogram` and `# Total:` (all digits), and
/// `^T:\s*(\d+)\s+Spike:\s*(\d+):\s+TS:\s*(\d+)$` lines with `^spikes\s*=\s*(\d+)$`.
fn ghaf_reads_summary_histogram_and_spikes() {
    let _lock = common::latency_lock();
    let base = ["-q", "-t1", "-p95", "-m", "-i1000", "-l1000"];
    let with = |extra: &'static str| -> Vec<&'static str> {
        let mut args = base.to_vec();
        args.push(extra);
        args
    };
    let [(ct, _), (ls, ls_json)] = both(&with("--histogram=100"), Streams::Merged);
    let summary = |text: &str, label: &str| -> Vec<u64> {
        let re = Regex::new(&format!(r"(?m)^# {label}:\s+(.+)$")).unwrap();
        let c = re
            .captures(text)
            .unwrap_or_else(|| panic!("{label}: {text}"));
        Regex::new(r"\d+")
            .unwrap()
            .find_iter(&c[1])
            .map(|m| m.as_str().parse().unwrap())
            .collect()
    };
    let histogram = |text: &str| -> Vec<u64> {
        let mut started = false;
        let mut buckets = Vec::new();
        for line in text.lines() {
            let s = line.trim();
            if s == "# Histogram" {
                started = true;
                continue;
            }
            if !started || s.is_empty() || s.starts_with('#') {
                if s.starts_with("# Total:") {
                    break;
                }
                continue;
            }
            let parts: Vec<&str> = s.split_whitespace().collect();
            if parts.len() >= 2 && parts.iter().all(|p| p.bytes().all(|b| b.is_ascii_digit())) {
                buckets.push(parts[0].parse().unwrap());
            }
        }
        buckets
    };
    assert_eq!(histogram(&ct), (0..100).collect::<Vec<u64>>());
    assert_eq!(histogram(&ls), (0..100).collect::<Vec<u64>>());
    let labels = ["Min Latencies", "Avg Latencies", "Max Latencies"];
    for label in labels {
        assert_eq!(summary(&ct, label).len(), 1);
    }
    let read = labels.map(|label| summary(&ls, label)[0]);
    assert_min_avg_max(read, &ls_json, 0, &ls);

    let spike_line = Regex::new(r"(?m)^T:\s*(\d+)\s+Spike:\s*(\d+):\s+TS:\s*(\d+)$").unwrap();
    let count = Regex::new(r"(?m)^spikes\s*=\s*(\d+)$").unwrap();
    let [(ct, _), (ls, _)] = both(&with("--spike=100"), Streams::Merged);
    for text in [&ct, &ls] {
        let lines = spike_line.captures_iter(text).count();
        match count.captures(text) {
            Some(c) => assert_eq!(c[1].parse::<usize>().unwrap(), lines, "{text}"),
            None => assert_eq!(lines, 0, "{text}"),
        }
        assert!(spike_line
            .captures_iter(text)
            .all(|c| c[2].parse::<u64>().unwrap() > 100));
    }
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    let list: [(&'static str, fn()); 6] = [
        (
            "linaro_and_mmtests_read_the_t_lines",
            linaro_and_mmtests_read_the_t_lines,
        ),
        (
            "labgrid_reads_the_last_console_line",
            labgrid_reads_the_last_console_line,
        ),
        ("osadl_reads_rows_and_max", osadl_reads_rows_and_max),
        (
            "rteval_reads_the_histogram_after_sigint",
            rteval_reads_the_histogram_after_sigint,
        ),
        (
            "checkbox_and_yardstick_read_the_trailer",
            checkbox_and_yardstick_read_the_trailer,
        ),
        (
            "ghaf_reads_summary_histogram_and_spikes",
            ghaf_reads_summary_histogram_and_spikes,
        ),
    ];
    list.into_iter()
        .map(|(name, run)| case(name, run).unless(missing("cyclictest", "rt-tests")))
        .collect()
}
