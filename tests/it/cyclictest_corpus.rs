//! Issue 35: the invocation corpus (tests/fixtures/cyclictest_corpus/corpus.json, real
//! cyclictest command lines from public projects, each with its repository and file) run
//! through `latscope cyclictest` and compared with what the real cyclictest 2.4 did with
//! the same lines on this machine (recorded.json, written by
//! contrib/dev/record-cyclictest-corpus.py, never by hand): the exit code, the line
//! structure of stdout (its first and last lines by kind: live frames, `T:` lines,
//! histogram rows and trailer, `-v` samples, break lines), stderr (cyclictest's lines and
//! at most one `# latscope:` line of 80 columns, none with -q), the files written (JSON
//! keys, histogram layout), when it stopped, and each thread's cycles, within a
//! tolerance. Lines the README's table of differences names (`differs`) are checked to
//! run instead. Every difference found is listed before the test fails.

use crate::common;

use regex::Regex;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Lines kept from each end of an output, as the recording script keeps them.
const KEEP: usize = 40;

/// An output as the recording script summarises it.
#[derive(Debug, Default)]
struct TextRecord {
    lines: usize,
    head: Vec<String>,
    tail: Vec<String>,
}

impl TextRecord {
    fn of(text: &str) -> Self {
        let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
        if lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        let tail = if lines.len() > KEEP {
            lines[lines.len() - KEEP..].to_vec()
        } else {
            Vec::new()
        };
        Self {
            lines: lines.len(),
            head: lines.iter().take(KEEP).cloned().collect(),
            tail,
        }
    }

    fn recorded(v: &Value) -> Self {
        let strings = |key: &str| -> Vec<String> {
            v[key]
                .as_array()
                .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
                .unwrap_or_default()
        };
        Self {
            lines: v["lines"].as_u64().unwrap() as usize,
            head: strings("head"),
            tail: strings("tail"),
        }
    }

    /// The last lines: the tail, or the whole output when it is short.
    fn last(&self) -> &[String] {
        if self.tail.is_empty() {
            &self.head
        } else {
            &self.tail
        }
    }
}

/// One run: exit code, time, stdout, stderr, files written.
struct Observed {
    exit_code: Option<i32>,
    elapsed_ms: u64,
    stdout: TextRecord,
    stderr: Vec<String>,
    files: Vec<(String, String)>,
}

/// Runs `latscope cyclictest ARGS` in a fresh directory, SIGINT after `stop_ms`.
fn run_latscope(args: &[String], stop_ms: Option<u64>) -> Observed {
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{dir}", &dir.path().display().to_string()))
        .collect();
    let (out_path, err_path) = (dir.path().join(".stdout"), dir.path().join(".stderr"));
    let started = Instant::now();
    let mut child = common::latscope_command()
        .arg("cyclictest")
        .args(&args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let limit = Duration::from_millis(stop_ms.unwrap_or(30_000));
    while child.try_wait().unwrap().is_none() && started.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(5));
    }
    if child.try_wait().unwrap().is_none() {
        let signal = if stop_ms.is_some() { "-INT" } else { "-KILL" };
        let pid = child.id().to_string();
        Command::new("kill").args([signal, &pid]).status().unwrap();
    }
    let status = child.wait().unwrap();
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).to_string();
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| !n.starts_with('.'))
        .map(|n| (n.clone(), read(&dir.path().join(&n))))
        .collect();
    files.sort();
    Observed {
        exit_code: status.code(),
        elapsed_ms,
        stdout: TextRecord::of(&read(&out_path)),
        stderr: read(&err_path).lines().map(String::from).collect(),
        files,
    }
}

/// What kind of line cyclictest printed (the structure compared, not the numbers).
fn kind(line: &str) -> String {
    let up = Regex::new(r"^\x1b\[(\d+)A").unwrap();
    if let Some(c) = up.captures(line) {
        return format!("up{}+{}", &c[1], kind(&line[c[0].len()..]));
    }
    let patterns: [(&str, &str); 22] = [
        (r"^$", "blank"),
        (r"^# /dev/cpu_dma_latency set to \d+us$", "dma"),
        (r"^policy: \w+(/other)?: loadavg: [\d. /]+ {10}$", "header"),
        (
            r"^T:\s*\d+ \(\s*\d+\) P:\s*\d+ I:\d+ C:\s*\d+ Min:\s*\d+ Act:\s*\d+ Avg:\s*\d+ Max:\s*\d+$",
            "T",
        ),
        (r"^\s*\d+:\s*\d+:\s*\d+$", "v"),
        (r"^\d{6} \d{6}(\t\d{6})*$", "row"),
        (r"^# Histogram$", "#Histogram"),
        (r"^# Total:( \d{9})+$", "#Total"),
        (r"^# Min Latencies:( \d{5,})+$", "#Min"),
        (r"^# Avg Latencies:( \d{5,})+$", "#Avg"),
        (r"^# Max Latencies:( \d{5,})+$", "#Max"),
        (r"^# Histogram Overflows:( \d{5,})+$", "#Overflows"),
        (r"^# Histogram Overflow at cycle number:$", "#OverflowAt"),
        (r"^# Thread \d+:( \d{5,})*( # \d{5,} others)?$", "#Thread"),
        (r"^# Thread Ids:( \d{5,})+$", "#ThreadIds"),
        (r"^# Break thread: \d+$", "#BreakThread"),
        (r"^# Break value: \d+$", "#BreakValue"),
        (r"^T:\s*\d+ Spike:\s*\d+: TS:\s*\d+$", "spike"),
        (r"^spikes = \d+$", "spikes"),
        (r"^(Max|Online) CPUs = \d+$", "cpus"),
        (r"^Thread \d+ Interval: \d+$", "interval"),
        (
            r"^(Thread \d+ using cpu \d+\.|Using \d+ cpus\.)$",
            "affinity",
        ),
    ];
    for (pattern, name) in patterns {
        if Regex::new(pattern).unwrap().is_match(line) {
            return name.to_string();
        }
    }
    format!("other:{line}")
}

/// The kinds of `lines`; where the machine's CPU count is not the recording's, runs of
/// `T` lines and of `-v` lines count as one (the thread count follows the CPUs).
fn kinds(lines: &[String], cpus_differ: bool) -> Vec<String> {
    let mut out: Vec<String> = lines.iter().map(|l| kind(l)).collect();
    if cpus_differ {
        out.dedup_by(|a, b| a == b && (a == "T" || a == "v" || a == "#Thread"));
    }
    out
}

/// Each thread's cycles in the last `T:` block of an output, else from the histogram's
/// Total and Overflows.
fn cycles(lines: &[String]) -> Vec<u64> {
    let t = Regex::new(r"^T:\s*(\d+) \(.*C:\s*(\d+) ").unwrap();
    let mut found: Vec<(u64, u64)> = Vec::new();
    for line in lines {
        if let Some(c) = t.captures(line) {
            let (thread, count) = (c[1].parse().unwrap(), c[2].parse().unwrap());
            if thread == 0 {
                found.clear();
            }
            found.push((thread, count));
        }
    }
    if !found.is_empty() {
        return found.into_iter().map(|(_, c)| c).collect();
    }
    let numbers = |label: &str| -> Vec<u64> {
        lines
            .iter()
            .find_map(|l| l.strip_prefix(label))
            .map(|rest| {
                rest.split_whitespace()
                    .filter_map(|v| v.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    };
    let (total, overflows) = (numbers("# Total:"), numbers("# Histogram Overflows:"));
    total.iter().zip(&overflows).map(|(t, o)| t + o).collect()
}

/// Whether two counts agree within the corpus' tolerance: `percent` of cyclictest's, at
/// least 12 (cyclictest's main loop stops the threads up to 60 ms after the first).
fn close(latscope: u64, cyclictest: u64, percent: u64) -> bool {
    latscope.abs_diff(cyclictest) <= (cyclictest * percent / 100).max(12)
}

/// The differences of one run from its recording (empty: it behaves as under cyclictest).
fn compare(entry: &Value, recorded: &Value, ours: &Observed, cpus_differ: bool) -> Vec<String> {
    let mut found = Vec::new();
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let quiet = args
        .iter()
        .any(|a| *a == "-q" || *a == "--quiet" || a.starts_with("-q"));
    let theirs_out = TextRecord::recorded(&recorded["stdout"]);
    let code = recorded["exit_code"].as_i64().map(|c| c as i32);
    if ours.exit_code != code {
        found.push(format!(
            "exit code {:?}, cyclictest's {code:?}",
            ours.exit_code
        ));
    }
    let n = ours.stdout.head.len().min(theirs_out.head.len());
    let (a, b) = (
        kinds(&ours.stdout.head[..n], cpus_differ),
        kinds(&theirs_out.head[..n], cpus_differ),
    );
    if a != b {
        found.push(format!("first lines {a:?}, cyclictest's {b:?}"));
    }
    let (a, b) = (
        last_kinds(&ours.stdout, cpus_differ),
        last_kinds(&theirs_out, cpus_differ),
    );
    if a != b {
        found.push(format!("last lines {a:?}, cyclictest's {b:?}"));
    }
    // A run stopped by SIGINT after a fixed time measured for as long as it was up: a
    // slower start (a loaded machine) counts fewer cycles and frames there.
    let percent = if entry["stop_ms"].is_u64() { 35 } else { 15 };
    if !close(ours.stdout.lines as u64, theirs_out.lines as u64, percent) && !cpus_differ {
        found.push(format!(
            "{} stdout lines, cyclictest's {}",
            ours.stdout.lines, theirs_out.lines
        ));
    }
    found.extend(compare_stderr(recorded, ours, quiet));
    found.extend(compare_files(recorded, ours, cpus_differ));
    let their_ms = recorded["elapsed_ms"].as_u64().unwrap();
    if ours.elapsed_ms > their_ms + 700 + their_ms / 5 || ours.elapsed_ms + 300 < their_ms {
        found.push(format!(
            "ran {} ms, cyclictest {their_ms} ms",
            ours.elapsed_ms
        ));
    }
    let (ours_c, theirs_c) = (cycles(ours.stdout.last()), cycles(theirs_out.last()));
    let pairs = if cpus_differ {
        1
    } else {
        ours_c.len().max(theirs_c.len())
    };
    for t in 0..pairs {
        match (ours_c.get(t), theirs_c.get(t)) {
            (Some(&a), Some(&b)) if close(a, b, percent) => {}
            (a, b) => found.push(format!("thread {t}: {a:?} cycles, cyclictest's {b:?}")),
        }
    }
    found
}

/// The kinds of an output's last lines, from its first `T:`/histogram line on when its
/// tail starts mid-frame.
fn last_kinds(record: &TextRecord, cpus_differ: bool) -> Vec<String> {
    let lines = record.last();
    let k = kinds(lines, cpus_differ);
    if record.tail.is_empty() {
        return k;
    }
    // Align both tails at the last frame or block start cyclictest and latscope share.
    let starts = ["#Histogram", "#Total"];
    let from = k
        .iter()
        .rposition(|x| x.starts_with("up") || starts.contains(&x.as_str()))
        .unwrap_or(0);
    k[from..].to_vec()
}

/// cyclictest's stderr lines all appear in latscope's; latscope adds at most one
/// `# latscope:` line of at most 80 columns, and none with -q.
fn compare_stderr(recorded: &Value, ours: &Observed, quiet: bool) -> Vec<String> {
    let theirs = TextRecord::recorded(&recorded["stderr"]).head;
    let mut found = Vec::new();
    for line in &theirs {
        if !ours.stderr.contains(line) {
            found.push(format!("stderr lacks cyclictest's {line:?}"));
        }
    }
    let extra: Vec<&String> = ours.stderr.iter().filter(|l| !theirs.contains(l)).collect();
    let notes_ok = match extra.as_slice() {
        [] => true,
        [one] => !quiet && one.starts_with("# latscope: ") && one.chars().count() <= 80,
        _ => false,
    };
    if !notes_ok {
        found.push(format!(
            "stderr has {extra:?} beyond cyclictest's (quiet: {quiet})"
        ));
    }
    found
}

/// The same files, a `--json` file with the same keys, a `--histfile` with the same layout.
fn compare_files(recorded: &Value, ours: &Observed, cpus_differ: bool) -> Vec<String> {
    let theirs = recorded["files"].as_object().unwrap();
    let names: Vec<&String> = ours.files.iter().map(|(n, _)| n).collect();
    let mut found = Vec::new();
    if names
        .iter()
        .map(|n| n.as_str())
        .ne(theirs.keys().map(String::as_str))
    {
        found.push(format!(
            "files {names:?}, cyclictest's {:?}",
            theirs.keys().collect::<Vec<_>>()
        ));
        return found;
    }
    for (name, text) in &ours.files {
        let record = TextRecord::recorded(&theirs[name]);
        if name.ends_with(".json") {
            let whole = theirs[name]["text"].as_str().unwrap_or_default();
            let keys = |t: &str| json_keys(&serde_json::from_str(t).unwrap_or(Value::Null));
            if keys(text) != keys(whole) {
                found.push(format!(
                    "{name}: keys {:?}, cyclictest's {:?}",
                    keys(text),
                    keys(whole)
                ));
            }
        } else {
            let ours_record = TextRecord::of(text);
            let (a, b) = (
                last_kinds(&ours_record, cpus_differ),
                last_kinds(&record, cpus_differ),
            );
            if a != b || ours_record.lines != record.lines {
                found.push(format!(
                    "{name}: {} lines ending {a:?}, cyclictest's {} ending {b:?}",
                    ours_record.lines, record.lines
                ));
            }
        }
    }
    found
}

/// A JSON file's key paths (thread numbers made `N`).
fn json_keys(v: &Value) -> std::collections::BTreeSet<String> {
    let mut keys = std::collections::BTreeSet::new();
    fn walk(v: &Value, prefix: &str, keys: &mut std::collections::BTreeSet<String>) {
        if let Some(map) = v.as_object() {
            for (k, child) in map {
                let k = if k.parse::<u64>().is_ok() {
                    "N"
                } else {
                    k.as_str()
                };
                let path = format!("{prefix}/{k}");
                if prefix.ends_with("/histogram") {
                    continue;
                }
                keys.insert(path.clone());
                walk(child, &path, keys);
            }
        }
    }
    walk(v, "", &mut keys);
    keys
}

/// `--tracemark` stops the kernel's tracing (tracing_on 0), as cyclictest does: the
/// test puts tracing_on back as it found it (tracefs mounted for that in a scratch
/// directory, as it may be mounted nowhere).
fn with_tracing_on_restored<T>(run: impl FnOnce() -> T) -> T {
    let dir = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tracefs", "nodev"])
        .arg(dir.path())
        .status()
        .is_ok_and(|s| s.success());
    let path = dir.path().join("tracing_on");
    let before = mounted
        .then(|| std::fs::read_to_string(&path).ok())
        .flatten();
    let result = run();
    if let Some(value) = before {
        std::fs::write(&path, value).unwrap();
    }
    if mounted {
        Command::new("umount").arg(dir.path()).status().unwrap();
    }
    result
}

/// Every line of the corpus through `latscope cyclictest`, against its recording.
fn every_line_behaves_as_under_cyclictest() {
    let _lock = common::latency_lock();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cyclictest_corpus");
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
    };
    let (corpus, recorded) = (read("corpus.json"), read("recorded.json"));
    let online = latscope::sys::affinity::online_cpus().len() as u64;
    let cpus_differ = recorded["machine"]["online_cpus"].as_u64() != Some(online);
    let mut report = Vec::new();
    for entry in corpus["runs"].as_array().unwrap() {
        let id = entry["id"].as_str().unwrap();
        let args: Vec<String> = entry["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        let stop_ms = entry["stop_ms"].as_u64();
        let run = || run_latscope(&args, stop_ms);
        let ours = if args.iter().any(|a| a == "--tracemark") {
            with_tracing_on_restored(run)
        } else {
            run()
        };
        let differences = if entry.get("differs").is_some() {
            runs_instead(&ours)
        } else {
            compare(entry, &recorded["runs"][id], &ours, cpus_differ)
        };
        for d in differences {
            report.push(format!("{id} (cyclictest {}): {d}", args.join(" ")));
        }
    }
    assert!(
        report.is_empty(),
        "{} differences:\n{}",
        report.len(),
        report.join("\n")
    );
}

/// A line the README's table says latscope runs where cyclictest 2.4 prints its usage
/// (`-n`): it runs, ends on its own and prints `T:` lines or a histogram.
fn runs_instead(ours: &Observed) -> Vec<String> {
    let measured = !cycles(ours.stdout.last()).is_empty();
    if ours.exit_code == Some(0) && measured {
        Vec::new()
    } else {
        vec![format!("exit {:?}, measured: {measured}", ours.exit_code)]
    }
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    vec![common::case(
        "every_line_behaves_as_under_cyclictest",
        every_line_behaves_as_under_cyclictest,
    )]
}
