//! Helpers shared by the integration tests: running the real binary, reading its JSON,
//! fixture paths and a CPU this process may use.
#![allow(dead_code)]

pub mod lab_output;
pub mod matching;
pub mod sched_seen;

use assert_cmd::Command;
use serde_json::Value;

/// The width the tests' pipes report (`COLUMNS`): wide, so a test about content finds
/// each line whole; the tests about fitting a width (tests/it/terminal_width.rs) set
/// their own, or remove it for the default of 80.
pub const TEST_COLUMNS: &str = "1000";

/// The latscope binary built by cargo for this test run (`COLUMNS` = `TEST_COLUMNS`).
pub fn latscope() -> Command {
    let mut cmd = Command::cargo_bin("latscope").expect("binary built");
    cmd.env("COLUMNS", TEST_COLUMNS);
    cmd
}

/// The binary's path, for command lines built by hand (`ip netns exec … latscope`).
pub fn latscope_path() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("latscope")
}

/// The binary as a std Command: for children that are spawned, signalled and waited for.
pub fn latscope_command() -> std::process::Command {
    let mut cmd = std::process::Command::new(latscope_path());
    cmd.env("COLUMNS", TEST_COLUMNS);
    cmd
}

/// Runs latscope with `args` plus `--export-json -`, asserts success, returns the JSON.
pub fn run_json(args: &[&str]) -> Value {
    let out = latscope()
        .args(args)
        .args(["--export-json", "-", "--quiet"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "latscope {:?} failed: {}",
        args,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

/// The CPU tests measure on: the last online CPU (CPU 1 on the 2-CPU CI machine).
pub fn test_cpu() -> usize {
    *latscope::sys::affinity::online_cpus()
        .last()
        .expect("at least one CPU")
}

/// Checks the invariants every summary must satisfy.
pub fn assert_summary_sane(t: &Value) {
    let g = |k: &str| {
        t[k].as_u64()
            .unwrap_or_else(|| panic!("{k} missing in {t}"))
    };
    let samples = g("samples");
    assert!(samples > 0, "no samples: {t}");
    assert!(g("min_ns") <= g("p50_ns"), "min > p50: {t}");
    assert!(g("p50_ns") <= g("p90_ns"), "p50 > p90: {t}");
    assert!(g("p90_ns") <= g("p99_ns"), "p90 > p99: {t}");
    assert!(g("p99_ns") <= g("p999_ns"), "p99 > p99.9: {t}");
    assert!(g("p999_ns") <= g("max_ns"), "p99.9 > max: {t}");
    let mean = t["mean_ns"].as_f64().unwrap();
    assert!(
        mean >= g("min_ns") as f64 && mean <= g("max_ns") as f64,
        "mean outside [min,max]: {t}"
    );
    let hist_total: u64 = t["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[1].as_u64().unwrap())
        .sum();
    assert_eq!(
        hist_total, samples,
        "histogram counts != samples (overflow?): {t}"
    );
}

use std::path::PathBuf;

/// A file under tests/fixtures/.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The last CPU this process is allowed to run on (tests may be confined by a cpuset).
pub fn usable_cpu() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .and_then(|list| latscope::units::parse_cpu_list_plain(list.trim()).ok())
        .and_then(|cpus| cpus.last().copied())
        .unwrap_or(0)
}

/// Whether a program is on PATH.
pub fn have(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The cross-process lock every latency-sensitive test holds while it measures, so no two
/// of them ever run at once (tests of one binary run on parallel threads; binaries of other
/// worktrees or sessions may run beside them). Held until dropped.
///
/// It also gives the calling thread every online CPU back. The harness reuses its worker
/// threads, and an `--isolate` test moves them into the shield's system cpuset and back;
/// a CI run once saw a worker keep the system CPUs afterwards, and every child it spawned
/// then could not pin to the test CPU. The cause is not proven; a likely one is a fork
/// racing the restore (the kernel's cpuset_fork, as read, leaves a task forked into the
/// top cpuset with its parent's mask). It was seen here after a crashed test had left an
/// `--isolate` run measuring.
/// That is noted on stderr, so it stays visible, and undone for this test.
#[track_caller]
pub fn latency_lock() -> LatencyLock {
    let at = std::panic::Location::caller();
    let lock = latscope::sys::filelock::FileLock::exclusive(std::path::Path::new(
        "/tmp/latscope-latency-tests.lock",
    ))
    .expect("take /tmp/latscope-latency-tests.lock");
    use latscope::sys::affinity;
    let online = affinity::online_cpus();
    if let Ok(mine) = affinity::get_affinity(0) {
        if mine != online {
            eprintln!(
                "NOTE: this test thread could use only CPUs {mine:?} of {online:?}; given all back"
            );
            affinity::set_affinity(0, &online).expect("give the test thread every online CPU");
        }
    }
    LatencyLock {
        _lock: lock,
        since: std::time::Instant::now(),
        at,
    }
}

/// The latency lock while a test holds it. The latency tests run one after another, so
/// their hold times add up to most of the suite's time: a hold of 10 s or more is printed
/// as `HELD file:line: N s` (the test's `latency_lock()` call), beside `SLOW`, whose time
/// includes the wait for the lock.
pub struct LatencyLock {
    _lock: latscope::sys::filelock::FileLock,
    since: std::time::Instant,
    at: &'static std::panic::Location<'static>,
}

impl Drop for LatencyLock {
    fn drop(&mut self) {
        let held = self.since.elapsed();
        if held.as_secs() >= 10 {
            eprintln!(
                "HELD {}:{}: {:.1} s",
                self.at.file(),
                self.at.line(),
                held.as_secs_f64()
            );
        }
    }
}

/// A FIFO 99 thread named `stall-inj` that spins `stall_ns` on `cpu` every `every_ns`,
/// recording each stall's CLOCK_MONOTONIC start and end as it really happened.
pub struct StallInjector {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<Vec<(u64, u64)>>>,
    /// The injector's thread id (its pid in trace events).
    pub tid: i32,
}

impl StallInjector {
    pub fn start(cpu: usize, stall_ns: u64, every_ns: u64, first_after_ns: u64) -> Self {
        use latscope::sys::{affinity, clock, sched};
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let s = stop.clone();
        let handle = std::thread::Builder::new()
            .name("stall-inj".into())
            .spawn(move || {
                affinity::pin_current_thread(cpu).expect("pin the stall injector");
                sched::set_current_thread(sched::Policy::Fifo, 99).expect("FIFO 99 injector");
                tx.send(sched::gettid()).unwrap();
                let mut stalls = Vec::with_capacity(1024);
                let mut next = clock::monotonic_ns() + first_after_ns;
                while !s.load(Ordering::Relaxed) {
                    clock::sleep_until_ns(next);
                    let start = clock::monotonic_ns();
                    let mut now = start;
                    while now < start + stall_ns {
                        std::hint::spin_loop();
                        now = clock::monotonic_ns();
                    }
                    stalls.push((start, now));
                    next += every_ns;
                    while next <= now {
                        next += every_ns;
                    }
                }
                stalls
            })
            .expect("spawn the stall injector");
        let tid = rx.recv().expect("injector started");
        Self {
            stop,
            handle: Some(handle),
            tid,
        }
    }

    /// Stops the injector; the stalls it made, in order.
    pub fn finish(mut self) -> Vec<(u64, u64)> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.handle.take().unwrap().join().expect("injector")
    }
}

impl Drop for StallInjector {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The rows of a `--raw` file with two value columns (stamp_ns, value_ns) for `metric`.
pub fn raw_rows(path: &std::path::Path, metric: &str) -> Vec<[u64; 2]> {
    let text = std::fs::read_to_string(path).expect("raw file");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    assert!(header.len() >= 7, "two value columns expected: {header:?}");
    lines
        .map(|l| l.rsplitn(4, ',').collect::<Vec<_>>())
        .filter(|f| f[3].ends_with(metric))
        .map(|f| [f[1].parse().unwrap(), f[0].parse().unwrap()])
        .collect()
}

/// Disturbances another tool made on purpose while the tests ran: the stalls logged by
/// bench/noise_maker.rs (`cargo run --release --example noise-maker -- --log FILE`) when
/// LATSCOPE_NOISE_LOG names its log. Each is (cpu, start_ns, end_ns) on CLOCK_MONOTONIC.
pub fn known_disturbances() -> Vec<(usize, u64, u64)> {
    let Ok(path) = std::env::var("LATSCOPE_NOISE_LOG") else {
        return Vec::new();
    };
    std::fs::read_to_string(&path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace().map(|x| x.parse::<u64>().ok());
            Some((f.next()?? as usize, f.next()??, f.next()??))
        })
        .collect()
}

/// Whether a known disturbance on `cpu` overlaps [start_ns, end_ns].
pub fn disturbed(known: &[(usize, u64, u64)], cpu: usize, start_ns: u64, end_ns: u64) -> bool {
    known
        .iter()
        .any(|&(c, s, e)| c == cpu && s < end_ns && e > start_ns)
}

/// Prints how much the samples injected stalls made outlast them (`(stall number,
/// excess_ns)`), never judges it: once the injector ends, when the measured thread runs
/// again is the machine's doing (another task, or the host stopping this VM's CPU; under
/// the builds' load a whole 7-10 ms), not latscope's. What latscope decides is judged
/// instead: each stall lands in a sample that covers it (the callers), and in its own
/// sample (`assert_one_sample_per_stall`).
pub fn print_stall_excess(excess_ns: &[(usize, u64)], what: &str) {
    for (n, x) in excess_ns {
        eprintln!(
            "stall {n}: {what} {} µs (the machine's, not judged)",
            x / 1000
        );
    }
    let values: Vec<u64> = excess_ns.iter().map(|&(_, x)| x).collect();
    eprintln!(
        "stalls: {what} {} µs at the median, {} µs at most",
        quantile(&values, 0.5) / 1000,
        values.iter().max().copied().unwrap_or(0) / 1000
    );
}

/// No two injected stalls were taken into one sample: stalls 250-500 ms apart are always
/// two events, so a latscope that merged them (a gap or a late sample spanning both)
/// fails here whatever the host did.
pub fn assert_one_sample_per_stall(matched: &[Option<usize>]) {
    let mut seen = std::collections::BTreeMap::new();
    for (n, m) in matched.iter().enumerate() {
        if let Some(i) = m {
            if let Some(other) = seen.insert(*i, n) {
                panic!("stalls {other} and {n} both fell into sample {i}");
            }
        }
    }
}

/// The p-quantile (0..=1) of `values` (sorted copy; 0 when empty).
pub fn quantile(values: &[u64], p: f64) -> u64 {
    let mut v = values.to_vec();
    v.sort_unstable();
    if v.is_empty() {
        return 0;
    }
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// One test run by `run_cases` (harness = false): a test whose precondition fails here is
/// reported as `ignored` in the summary with its reason, never passed silently.
pub struct Case {
    name: String,
    run: fn(),
    skip: Option<String>,
}

/// A test that always runs.
pub fn case(name: &str, run: fn()) -> Case {
    Case {
        name: name.to_string(),
        run,
        skip: None,
    }
}

impl Case {
    /// Skips (reported as ignored, the reason printed) when `reason` is Some.
    pub fn unless(mut self, reason: Option<String>) -> Self {
        self.skip = reason;
        self
    }

    /// Names the test `module::name`, as the built-in harness names a module's tests.
    pub fn in_module(mut self, module: &str) -> Self {
        self.name = format!("{module}::{}", self.name);
        self
    }
}

/// `test_cases![a, b]`: a case that always runs for each test function, named after it.
#[allow(unused_macros)]
macro_rules! test_cases {
    ($($test:ident),* $(,)?) => {
        vec![$($crate::common::case(stringify!($test), $test)),*]
    };
}
#[allow(unused_imports)]
pub(crate) use test_cases;

/// Runs `command` to its end with its output collected: the output and the peak
/// resident set of the process in KiB (the kernel's own count, wait4's ru_maxrss). A
/// small python3 parent forks and waits for it: ru_maxrss also counts the memory of the
/// process before its exec, which for a child of this test binary would be this binary's
/// (the other tests' buffers included).
pub fn output_and_peak_rss_kib(command: &mut std::process::Command) -> (std::process::Output, u64) {
    let (out, peak_kib, _) = output_peak_rss_and_cpu(command);
    (out, peak_kib)
}

/// As `output_and_peak_rss_kib`, with the CPU time (user + system) the process took: a
/// measure of its work that other processes on the machine do not inflate, as they do a
/// wall-clock time.
pub fn output_peak_rss_and_cpu(
    command: &mut std::process::Command,
) -> (std::process::Output, u64, std::time::Duration) {
    const WAIT4: &str = "import os, sys\n\
pid = os.fork()\n\
if pid == 0:\n    os.execvp(sys.argv[1], sys.argv[1:])\n\
_, status, usage = os.wait4(pid, 0)\n\
sys.stderr.write('\\nPEAK_RSS_KIB %d %.6f\\n' % (usage.ru_maxrss, usage.ru_utime + usage.ru_stime))\n\
sys.exit(os.waitstatus_to_exitcode(status) % 256)\n";
    let mut wrapped = std::process::Command::new("python3");
    wrapped
        .args(["-c", WAIT4])
        .arg(command.get_program())
        .args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(v) => wrapped.env(key, v),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        wrapped.current_dir(dir);
    }
    let mut out = wrapped.output().expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    let at = text.rfind("\nPEAK_RSS_KIB ").expect("the peak");
    let mut fields = text[at + 14..].split_whitespace();
    let peak = fields
        .next()
        .and_then(|f| f.parse().ok())
        .expect("a number");
    let cpu_s: f64 = fields
        .next()
        .and_then(|f| f.parse().ok())
        .expect("a number");
    out.stderr.truncate(at);
    (out, peak, std::time::Duration::from_secs_f64(cpu_s))
}

/// Runs `cases` like the built-in harness does (filters, --ignored, --test-threads), with
/// runtime skips shown as `ignored` and their reasons printed as `SKIPPED name: reason`.
pub fn run_cases(cases: Vec<Case>) -> ! {
    let args = libtest_mimic::Arguments::from_args();
    let trials = cases
        .into_iter()
        .map(|c| {
            if let Some(reason) = &c.skip {
                eprintln!("SKIPPED {}: {reason}", c.name);
            }
            let run = c.run;
            let name = c.name.clone();
            libtest_mimic::Trial::test(c.name, move || {
                let start = std::time::Instant::now();
                run();
                report_slow(&name, start.elapsed());
                Ok(())
            })
            .with_ignored_flag(c.skip.is_some())
        })
        .collect();
    libtest_mimic::run(&args, trials).exit()
}

/// Prints a test's wall time when it took over 10 s, so a CI log shows where its time goes
/// (`grep '^SLOW'`).
fn report_slow(name: &str, took: std::time::Duration) {
    if took.as_secs() >= 10 {
        eprintln!("SLOW {name}: {:.1} s", took.as_secs_f64());
    }
}

/// Why a program is missing here (None when it is on PATH), with the package to install.
pub fn missing(program: &str, package: &str) -> Option<String> {
    (!have(program)).then(|| format!("{program} not installed (apt-get install {package})"))
}

/// Why `--trace` cannot run here (None when it can): it needs root and a kernel with tracefs.
pub fn no_tracing() -> Option<String> {
    if latscope::sys::process::effective_uid() != 0 {
        return Some("needs root (tracefs)".into());
    }
    let mounted = std::fs::read_to_string("/proc/self/mounts")
        .ok()
        .and_then(|m| latscope::trace::record::tracefs::find_in_mounts(&m))
        .is_some();
    (!mounted && !latscope::trace::record::tracefs::kernel_has_tracefs())
        .then(|| "this kernel has no tracefs (CONFIG_TRACING)".into())
}

/// The tracefs instances that exist now (their directory names; none without tracefs).
pub fn trace_instances() -> Vec<String> {
    std::fs::read_dir("/sys/kernel/tracing/instances")
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Asserts a finished latscope run succeeded (its stderr in the message); returns its output.
pub fn assert_success(out: std::process::Output) -> std::process::Output {
    assert!(
        out.status.success(),
        "latscope failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `--policy fifo --priority 50`: how the latency tests run the measuring thread.
/// The `params.method` of every scenario of a run, in order.
pub fn scenario_methods(run: &serde_json::Value) -> Vec<&str> {
    run["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|s| s["params"]["method"].as_str().expect("params.method"))
        .collect()
}

pub const FIFO_50: [&str; 4] = ["--policy", "fifo", "--priority", "50"];

/// (deadline_ns, latency_ns) of every sample in a `--raw` file, found by column name, so
/// with or without the `--trace` split columns after them (`raw_rows` reads the last two).
pub fn raw_samples(path: &std::path::Path) -> Vec<[u64; 2]> {
    let text = std::fs::read_to_string(path).expect("raw file");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no {name} column: {header:?}"))
    };
    let (d, l) = (col("deadline_ns"), col("latency_ns"));
    lines
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            [f[d].parse().unwrap(), f[l].parse().unwrap()]
        })
        .collect()
}

/// For each injected stall (start_ns, end_ns), the `--trace` spike whose span
/// [at_ns, at_ns + latency_ns] overlaps it most (None when none does), matched by timestamp
/// with `match_events`: a larger spike the host made beside the stall is never taken for it.
pub fn spikes_of_stalls<'a>(spikes: &'a [Value], stalls: &[(u64, u64)]) -> Vec<Option<&'a Value>> {
    use self::matching::{match_events, SampleSpan};
    let mut by_time: Vec<&Value> = spikes.iter().collect();
    by_time.sort_by_key(|s| s["at_ns"].as_u64().unwrap());
    let spans: Vec<SampleSpan> = by_time
        .iter()
        .map(|s| {
            SampleSpan::of_row([
                s["at_ns"].as_u64().unwrap(),
                s["latency_ns"].as_u64().unwrap(),
            ])
        })
        .collect();
    match_events(&spans, stalls)
        .into_iter()
        .map(|m| m.map(|i| by_time[i]))
        .collect()
}

/// The cause of `spike` that is the StallInjector thread `tid`, asserted to be labelled
/// `stall-inj/`.
pub fn injector_cause(spike: &Value, tid: i64) -> &Value {
    let cause = spike["causes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["pid"].as_i64() == Some(tid))
        .unwrap_or_else(|| panic!("stall-inj/{tid} not among the causes: {spike}"));
    assert!(
        cause["label"].as_str().unwrap().starts_with("stall-inj/"),
        "{cause}"
    );
    cause
}

/// Asserts the injector ran for what it recorded (within 5 %) by the trace's `ran_ns`: the
/// whole run slice of the injector (switch-in to switch-out) that overlaps the spike, so
/// the whole stall, also the part before the deadline (`duration_ns` is the part inside
/// the spike's window).
pub fn assert_ran_as_recorded(cause: &Value, spike: &Value, (start, end): (u64, u64)) {
    let ran = cause["ran_ns"].as_u64().unwrap() as f64;
    let recorded = (end - start) as f64;
    assert!(
        (ran - recorded).abs() <= recorded * 0.05,
        "stall-inj ran {ran} ns by the trace, {recorded} ns by the injector: {spike}"
    );
}

/// Cases that all share one precondition: each skipped with `why` when it is Some.
pub fn cases_unless(why: Option<String>, list: &[(&'static str, fn())]) -> Vec<Case> {
    list.iter()
        .map(|&(name, run)| case(name, run).unless(why.clone()))
        .collect()
}

/// A result file as `latscope report` reads it (one JSON document, or the journal of a
/// run still going or killed: its finished scenarios and last checkpoint), as JSON; None
/// while it cannot be read.
pub fn read_result(path: &std::path::Path) -> Option<Value> {
    let run = latscope::result::Run::load(path).ok()?;
    serde_json::to_value(run).ok()
}
