//! Reads the JSON that `cyclictest --json` (rt-tests 2.x) writes and converts it into a
//! Run (probe `timer`, method `clock-nanosleep (cyclictest)`), so `report` and `compare`
//! can set latscope results beside data people already have. Percentiles come from
//! cyclictest's histogram (`-h`/`--histogram`) when present; otherwise they are marked
//! unknown and never judged.

use crate::error::UserError;
use crate::result::{Run, Scenario, ScenarioParams, ThreadExtra, ThreadResult};
use crate::stats::{Stat, Summary};
use crate::sysinfo::SystemInfo;
use crate::warning::{Warning, WarningCode};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

/// The method name imported scenarios get; compare aligns it with `clock-nanosleep`.
pub const METHOD: &str = "clock-nanosleep (cyclictest)";

/// Loads a latscope result file or a cyclictest --json file, naming the file and what
/// is wrong when it is neither.
pub fn load_any(path: &Path) -> Result<Run, UserError> {
    // Read once, size-checked first (issue 12, item 12).
    from_text(path, crate::result::read_input_file(path)?)
}

/// `load_any` of a text already read from `path` (named in errors): its kind from its
/// top-level keys, then read straight into that kind's types (no `Value` tree).
pub fn from_text(path: &Path, text: String) -> Result<Run, UserError> {
    let bad = |reason: String| UserError::BadInputFile {
        path: crate::result::input_name(path),
        reason,
    };
    if crate::result::journal::is_journal(&text) {
        return crate::result::journal::parse(path, &text);
    }
    let keys = crate::result::sniff::top_keys(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    if keys.is_cyclictest() {
        let file: CtFile =
            serde_json::from_str(&text).map_err(|e| bad(format!("cyclictest --json file: {e}")))?;
        drop(text);
        return from_cyclictest(file).map_err(|r| bad(format!("cyclictest --json file: {r}")));
    }
    Run::from_json_text(path, &text, &keys)
}

/// A cyclictest `--json` file as read: the fields latscope uses, each thread's values as
/// small `Value`s (so a wrong one is quoted in the error) and its histogram as buckets.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct CtFile {
    #[serde(rename = "rt_test_version:")]
    version: Option<Value>,
    num_threads: Option<Value>,
    resolution_in_ns: Option<Value>,
    #[serde(rename = "cmdline:")]
    cmdline: Option<Value>,
    start_time: Option<Value>,
    end_time: Option<Value>,
    sysinfo: Option<CtSysinfo>,
    thread: Option<CtThreads>,
}

/// cyclictest's `sysinfo`: the strings latscope shows.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CtSysinfo {
    nodename: Option<Value>,
    release: Option<Value>,
    version: Option<Value>,
    realtime: Option<Value>,
}

/// A thread entry. A field that is present, even `null`, is `Some` (so `"cpu": null` is
/// refused, never read as CPU 0).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CtThread {
    #[serde(deserialize_with = "present")]
    cycles: Option<Value>,
    #[serde(deserialize_with = "present")]
    min: Option<Value>,
    #[serde(deserialize_with = "present")]
    max: Option<Value>,
    #[serde(deserialize_with = "present")]
    avg: Option<Value>,
    #[serde(deserialize_with = "present")]
    cpu: Option<Value>,
    histogram: Option<CtHistogram>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The most threads an imported cyclictest file may have. A thread takes ~1.5 KB as a
/// `ThreadResult` but ~50 bytes of JSON: 500 000 threads (52 MB) took 3 GB (issue 34,
/// item 7); 65 536 take ~100 MB, and no cyclictest run measures more.
pub const MAX_THREADS: u64 = 65_536;

/// The `thread` object's entries in file order (no map of them: one entry a thread), at
/// most MAX_THREADS of them.
#[derive(Debug, Default)]
struct CtThreads(Vec<(String, CtThread)>);

impl<'de> Deserialize<'de> for CtThreads {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = CtThreads;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of thread number: thread entry")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<CtThreads, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<String, CtThread>()? {
                    if out.len() as u64 == MAX_THREADS {
                        return Err(serde::de::Error::custom(format!(
                            "more than {MAX_THREADS} thread entries, more than latscope reads from a cyclictest file"
                        )));
                    }
                    out.push(entry);
                }
                Ok(CtThreads(out))
            }
        }
        d.deserialize_map(Entries)
    }
}

/// A thread's `histogram` as `[latency in the file's unit, count]` pairs with a count, or
/// why it cannot be read (said when the thread is read, after its other fields).
#[derive(Debug)]
struct CtHistogram(Result<Vec<[u64; 2]>, String>);

impl<'de> Deserialize<'de> for CtHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Buckets)
    }
}

/// Reads a histogram's buckets; anything but an object is kept as its error.
struct Buckets;

impl Buckets {
    fn not_an_object() -> CtHistogram {
        CtHistogram(Err(
            "a thread's 'histogram' is not an object of latency: count".into(),
        ))
    }
}

impl<'de> serde::de::Visitor<'de> for Buckets {
    type Value = CtHistogram;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object of latency: count")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<CtHistogram, A::Error> {
        let mut buckets = Vec::new();
        let mut error = None;
        while let Some((k, c)) = map.next_entry::<String, Value>()? {
            if error.is_some() {
                continue;
            }
            let Ok(key) = k.parse::<u64>() else {
                error = Some(format!(
                    "histogram key '{}' is not a latency (a whole number of µs)",
                    crate::error::clip(&k)
                ));
                continue;
            };
            match c.as_u64() {
                Some(0) => {}
                Some(count) => buckets.push([key, count]),
                None => {
                    error = Some(format!(
                        "histogram count {} for '{key}' is not a count",
                        crate::error::clip(&c.to_string())
                    ))
                }
            }
        }
        Ok(CtHistogram(error.map_or(Ok(buckets), Err)))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<CtHistogram, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Self::not_an_object())
    }
    fn visit_bool<E>(self, _: bool) -> Result<CtHistogram, E> {
        Ok(Self::not_an_object())
    }
    fn visit_i64<E>(self, _: i64) -> Result<CtHistogram, E> {
        Ok(Self::not_an_object())
    }
    fn visit_u64<E>(self, _: u64) -> Result<CtHistogram, E> {
        Ok(Self::not_an_object())
    }
    fn visit_f64<E>(self, _: f64) -> Result<CtHistogram, E> {
        Ok(Self::not_an_object())
    }
    fn visit_str<E>(self, _: &str) -> Result<CtHistogram, E> {
        Ok(Self::not_an_object())
    }
    fn visit_unit<E>(self) -> Result<CtHistogram, E> {
        Ok(Self::not_an_object())
    }
}

/// The value of a cyclictest option in a command line (`-i 500`, `-i500`, `--interval=500`).
fn option_value(args: &[&str], short: &str, long: &str) -> Option<String> {
    for (i, a) in args.iter().enumerate() {
        if *a == short || *a == long {
            return args.get(i + 1).map(|s| s.to_string());
        }
        if let Some(v) = a.strip_prefix(&format!("{long}=")) {
            return Some(v.to_string());
        }
        if a.len() > 2 && a.starts_with(short) && !a.starts_with("--") {
            return Some(a[short.len()..].trim_start_matches('=').to_string());
        }
    }
    None
}

/// A thread's field `key` (its value `v`, None when absent) as a number.
fn num(v: Option<&Value>, key: &str) -> Result<f64, String> {
    v.and_then(Value::as_f64)
        .ok_or_else(|| format!("thread entry has no numeric '{key}'"))
}

// Values out of range are errors, never clamped (issue 22, item 8): cyclictest writes
// `cycles` and `cpu` as whole numbers and its latencies as 0 or more, so anything else
// is a damaged or edited file, and a guessed value would misreport it: a clamped `cycles`
// misstates every statistic, a clamped `cpu` aligns the thread with another CPU's in
// compare, a clamped latency becomes a min or max that was never measured.

/// A value quoted for an error (a huge value stays short).
fn quoted(v: Option<&Value>) -> String {
    crate::error::clip(&v.unwrap_or(&Value::Null).to_string()).into_owned()
}

/// A thread's sample count: a whole number from 0 to 2^64 - 1.
fn cycles_of(t: &CtThread) -> Result<u64, String> {
    let v = t.cycles.as_ref();
    num(v, "cycles")?;
    v.and_then(Value::as_u64).ok_or_else(|| {
        format!(
            "a thread's 'cycles' {} is not a sample count (a whole number from 0 to {})",
            quoted(v),
            u64::MAX
        )
    })
}

/// A thread's `min`, `max` or `avg` in ns (`scale` ns a unit): 0 or more, and not past
/// 2^64 ns.
fn latency_of(v: Option<&Value>, key: &str, scale: u64) -> Result<f64, String> {
    let ns = num(v, key)? * scale as f64;
    if !(0.0..u64::MAX as f64).contains(&ns) {
        return Err(format!(
            "a thread's '{key}' {} is not a latency: cyclictest writes 0 to {} {}",
            quoted(v),
            u64::MAX / scale,
            if scale == 1 { "ns" } else { "µs" }
        ));
    }
    Ok(ns)
}

/// A thread's CPU: a whole number below the kernel's 8192 CPUs (0 when absent, as
/// before: cyclictest has always written it).
fn cpu_of(t: &CtThread) -> Result<usize, String> {
    let max = crate::sys::cpu_list::MAX_CPUS;
    match &t.cpu {
        None => Ok(0),
        Some(v) => v
            .as_u64()
            .filter(|&cpu| cpu < max as u64)
            .map(|cpu| cpu as usize)
            .ok_or_else(|| {
                format!(
                    "a thread's 'cpu' {} is not a CPU number (0 to {})",
                    quoted(t.cpu.as_ref()),
                    max - 1
                )
            }),
    }
}

/// The value of the sample at 1-based `rank` in sorted `[value, count]` buckets.
fn value_at_rank(buckets: &[[u64; 2]], rank: u64) -> u64 {
    let mut seen: u64 = 0;
    for &[v, c] in buckets {
        seen = seen.saturating_add(c);
        if seen >= rank {
            return v;
        }
    }
    buckets.last().map_or(0, |b| b[0])
}

/// The rank of the p-th percentile among `total` samples.
fn rank_of(p: f64, total: u64) -> u64 {
    crate::stats::summary::nearest_rank(p, total)
}

/// The longest interval (`-i`, µs) an imported command line may give: latscope's own
/// longest period, 10 s.
const MAX_INTERVAL_US: u64 = 10_000_000;

/// What cyclictest's recorded command line says about the run.
struct CommandLine {
    text: String,
    interval_us: u64,
    priority: i32,
    policy: String,
    distance_us: u64,
}

fn command_line_of(f: &CtFile) -> Result<CommandLine, String> {
    let text = f
        .cmdline
        .as_ref()
        .and_then(Value::as_str)
        .unwrap_or("cyclictest")
        .to_string();
    let args: Vec<&str> = text.split_whitespace().collect();
    let interval_us: u64 = match option_value(&args, "-i", "--interval") {
        None => 1000,
        Some(value) => value
            .parse()
            .ok()
            .filter(|us| (1..=MAX_INTERVAL_US).contains(us))
            .ok_or_else(|| {
                format!(
                    "its command line's interval -i '{value}' is not a number of µs in 1-{MAX_INTERVAL_US}"
                )
            })?,
    };
    let priority: i32 = option_value(&args, "-p", "--priority")
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let policy = option_value(&args, "-y", "--policy")
        .unwrap_or_else(|| if priority > 0 { "fifo" } else { "other" }.to_string());
    let distance_us = distance_of(&args);
    Ok(CommandLine {
        text,
        interval_us,
        priority,
        policy,
        distance_us,
    })
}

/// A thread's histogram as sorted `[upper bound ns, count]` buckets (empty when absent).
fn histogram_of(t: &mut CtThread, scale: u64) -> Result<Vec<[u64; 2]>, String> {
    let Some(CtHistogram(buckets)) = t.histogram.take() else {
        return Ok(Vec::new());
    };
    let mut histogram = buckets?;
    for bucket in &mut histogram {
        let key = bucket[0];
        bucket[0] = key
            .checked_mul(scale)
            .and_then(|ns| ns.checked_add(scale - 1))
            .ok_or_else(|| {
                format!("histogram key '{key}' is not a latency (a whole number of µs)")
            })?;
    }
    histogram.sort_unstable();
    Ok(histogram)
}

/// The percentiles and standard deviation a thread's histogram gives (those it cannot
/// give go to `unknown`; samples beyond it become one bucket at the maximum).
fn distribution(
    cpu: usize,
    histogram: &mut Vec<[u64; 2]>,
    summary: &mut Summary,
    scale: u64,
    extra: &mut ThreadExtra,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Stat>, String> {
    let mut unknown: Vec<Stat> = vec![Stat::Overruns, Stat::Missed];
    let cycles = summary.samples;
    let (min_ns, max_ns, mean_ns) = (summary.min_ns, summary.max_ns, summary.mean_ns);
    let in_hist: u64 = histogram
        .iter()
        .try_fold(0u64, |sum, b| sum.checked_add(b[1]))
        .ok_or("the histogram's counts add up to more than 2^64")?;
    if in_hist > cycles {
        // cyclictest counts every sample in both (issue 34, item 10): a standard
        // deviation of 999 874 868 µs came from 5 million samples under `cycles: 10`.
        return Err(format!(
            "CPU {cpu}: its histogram holds {in_hist} samples, more than its 'cycles' {cycles} (cyclictest counts each sample in both)"
        ));
    }
    if histogram.is_empty() || cycles == 0 {
        let percentiles = Stat::ALL.into_iter().filter(|s| s.percentile().is_some());
        unknown.push(Stat::Stddev);
        unknown.extend(percentiles);
        return Ok(unknown);
    }
    let overflow = cycles.saturating_sub(in_hist);
    if overflow > 0 {
        extra.histogram_overflows = Some(overflow);
        warnings.push(Warning::new(WarningCode::CyclictestHistogramOverflow, format!(
                "CPU {cpu}: {overflow} samples were beyond cyclictest's histogram (-h); percentiles that fall there and the standard deviation are unknown (raise -h)"
            )));
    }
    let total = in_hist.saturating_add(overflow);
    let fields: [(Stat, f64, &mut u64); 6] = [
        (Stat::P50, 50.0, &mut summary.p50_ns),
        (Stat::P90, 90.0, &mut summary.p90_ns),
        (Stat::P99, 99.0, &mut summary.p99_ns),
        (Stat::P999, 99.9, &mut summary.p999_ns),
        (Stat::P9999, 99.99, &mut summary.p9999_ns),
        (Stat::P99999, 99.999, &mut summary.p99999_ns),
    ];
    for (name, q, field) in fields {
        let rank = rank_of(q, total);
        if rank > in_hist {
            // Only known to lie between the histogram's end and the maximum.
            *field = max_ns;
            unknown.push(name);
        } else {
            *field = value_at_rank(histogram, rank).clamp(min_ns, max_ns);
        }
    }
    if overflow > 0 {
        unknown.push(Stat::Stddev);
        summary.stddev_ns = 0.0;
        histogram.push([max_ns, overflow]);
    } else {
        let var = histogram
            .iter()
            .map(|&[v, c]| {
                let mid = v.saturating_sub(scale / 2) as f64;
                c as f64 * (mid - mean_ns).powi(2)
            })
            .sum::<f64>()
            / total as f64;
        summary.stddev_ns = var.sqrt();
    }
    Ok(unknown)
}

/// One thread of the file (`period_ns` its own interval) as a ThreadResult.
fn thread_of(
    mut t: CtThread,
    scale: u64,
    period_ns: u64,
    warnings: &mut Vec<Warning>,
) -> Result<ThreadResult, String> {
    let cycles = cycles_of(&t)?;
    let min_ns = latency_of(t.min.as_ref(), "min", scale)? as u64;
    let max_ns = latency_of(t.max.as_ref(), "max", scale)? as u64;
    let mean_ns = latency_of(t.avg.as_ref(), "avg", scale)?;
    let cpu = cpu_of(&t)?;
    // A thread without cycles keeps cyclictest's initial min (1000000) and max (0);
    // the average may be rounded by up to one unit.
    let (low, high) = (min_ns as f64 - scale as f64, max_ns as f64 + scale as f64);
    if cycles > 0 && (min_ns > max_ns || mean_ns < low || mean_ns > high) {
        return Err(format!(
            "a thread's min {}, avg {} and max {} are not in order (min <= avg <= max)",
            quoted(t.min.as_ref()),
            quoted(t.avg.as_ref()),
            quoted(t.max.as_ref())
        ));
    }
    let mut histogram = histogram_of(&mut t, scale)?;
    let mut extra = ThreadExtra {
        period_ns: Some(period_ns),
        ..ThreadExtra::default()
    };
    let mut summary = Summary {
        samples: cycles,
        min_ns,
        mean_ns,
        max_ns,
        ..Summary::default()
    };
    let unknown = distribution(
        cpu,
        &mut histogram,
        &mut summary,
        scale,
        &mut extra,
        warnings,
    )?;
    extra.unknown_stats = Some(unknown.iter().map(|s| s.name().to_string()).collect());
    Ok(ThreadResult {
        cpu,
        method: METHOD.into(),
        metric: crate::result::Metric::Latency,
        summary,
        histogram,
        per_second_max_ns: Vec::new(),
        extra,
        worst_case: None,
    })
}

/// A value's text when it is a string (cyclictest writes strings there), else empty.
fn text_of(v: &Option<Value>) -> String {
    v.as_ref().and_then(Value::as_str).unwrap_or("").to_string()
}

/// The system cyclictest's `sysinfo` describes.
fn system_of(sys: Option<&CtSysinfo>) -> SystemInfo {
    let empty = CtSysinfo::default();
    let sys = sys.unwrap_or(&empty);
    let version = text_of(&sys.version);
    let realtime = sys.realtime.as_ref().and_then(Value::as_i64) == Some(1);
    let preemption_model = if realtime || version.contains("PREEMPT_RT") {
        "PREEMPT_RT"
    } else if version.contains("PREEMPT_DYNAMIC") {
        "PREEMPT_DYNAMIC"
    } else if version.contains("PREEMPT") {
        "PREEMPT"
    } else {
        "unknown"
    };
    SystemInfo {
        hostname: text_of(&sys.nodename),
        kernel_release: text_of(&sys.release),
        kernel_version: version.clone(),
        preemption_model: preemption_model.into(),
        ..SystemInfo::default()
    }
}

/// The file's threads by number, in order; a key that is no thread number is refused
/// (issue 34, item 10: `99999999999999999999` became a 2.05 s period): a whole number
/// below the file's `num_threads` (below 8192 when it has none), each once.
fn numbered_threads(f: &mut CtFile) -> Result<Vec<(u64, CtThread)>, String> {
    let CtThreads(entries) = f.thread.take().ok_or("no 'thread' object")?;
    let limit = match &f.num_threads {
        None => crate::sys::cpu_list::MAX_CPUS as u64,
        Some(v) => v.as_u64().filter(|&n| n <= MAX_THREADS).ok_or_else(|| {
            format!(
                "'num_threads' {} is not a thread count (0 to {MAX_THREADS})",
                quoted(Some(v))
            )
        })?,
    };
    let mut numbered = Vec::with_capacity(entries.len());
    for (key, t) in entries {
        match key.parse::<u64>() {
            Ok(n) if n < limit => numbered.push((n, t)),
            _ => {
                return Err(format!(
                    "thread key '{}' is not a thread number (0 to {} for num_threads {limit})",
                    crate::error::clip(&key),
                    limit.saturating_sub(1)
                ))
            }
        }
    }
    numbered.sort_by_key(|e| e.0);
    if let Some(twice) = numbered.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(format!("thread key '{}' appears twice", twice[0].0));
    }
    Ok(numbered)
}

/// Converts cyclictest's JSON into a Run with one timer scenario per interval.
pub fn from_cyclictest(mut f: CtFile) -> Result<Run, String> {
    let scale: u64 = if f.resolution_in_ns.as_ref().and_then(Value::as_u64) == Some(1) {
        1
    } else {
        1000
    };
    let cmd = command_line_of(&f)?;
    let entries = numbered_threads(&mut f)?;
    let mut threads = Vec::with_capacity(entries.len());
    let mut warnings = vec![Warning::new(
        WarningCode::ImportedCyclictest,
        format!("imported from cyclictest --json ({})", cmd.text),
    )];
    let mut periods_ns = Vec::with_capacity(entries.len());
    for (index, t) in entries {
        // Thread N sleeps -i + N × -d (cyclictest's "I:"); the keys are 0, 1, ...
        let period_us = cmd
            .interval_us
            .saturating_add(index.min(4096).saturating_mul(cmd.distance_us));
        let period_ns = period_us.min(MAX_INTERVAL_US) * 1000;
        periods_ns.push(period_ns);
        threads.push(thread_of(t, scale, period_ns, &mut warnings)?);
    }
    let started = text_of(&f.start_time);
    let scenarios = scenarios_by_interval(
        threads,
        &periods_ns,
        Meta {
            policy: cmd.policy,
            priority: cmd.priority,
            started: started.clone(),
            warnings,
        },
    );
    let args = cmd.text.split_whitespace().map(str::to_string).collect();
    let mut run = Run::new(system_of(f.sysinfo.as_ref()), args);
    run.tool = "cyclictest".into();
    run.tool_version = text_of(&f.version);
    run.started_at = started;
    run.finished_at = text_of(&f.end_time);
    run.scenarios = scenarios;
    Ok(run)
}

/// cyclictest's distance between the threads' intervals (`-d`, µs): 500 by default, 0
/// when a histogram (`-h`, `-H`) was asked for, as cyclictest applies it.
fn distance_of(args: &[&str]) -> u64 {
    let histogram = option_value(args, "-h", "--histogram").is_some()
        || option_value(args, "-H", "--histofall").is_some();
    if histogram {
        return 0;
    }
    option_value(args, "-d", "--distance")
        .and_then(|d| d.parse().ok())
        .unwrap_or(500)
}

/// What every scenario of one imported file shares.
struct Meta {
    policy: String,
    priority: i32,
    started: String,
    /// The import's warnings: all go to the first scenario (the one of thread 0).
    warnings: Vec<Warning>,
}

/// One scenario per interval (`-d` gives each thread its own), in thread order, so each
/// thread is shown and aligned at its own interval.
fn scenarios_by_interval(
    threads: Vec<ThreadResult>,
    periods_ns: &[u64],
    meta: Meta,
) -> Vec<Scenario> {
    // Each group's size counted first, so no vector of ~1.5 KB threads is grown twice.
    let mut sizes: Vec<(u64, usize)> = Vec::new();
    let mut group_of: std::collections::HashMap<u64, usize> = Default::default();
    for &period_ns in periods_ns {
        let g = *group_of.entry(period_ns).or_insert_with(|| {
            sizes.push((period_ns, 0));
            sizes.len() - 1
        });
        sizes[g].1 += 1;
    }
    let mut groups: Vec<(u64, Vec<ThreadResult>)> = sizes
        .into_iter()
        .map(|(period_ns, n)| (period_ns, Vec::with_capacity(n)))
        .collect();
    for (thread, period_ns) in threads.into_iter().zip(periods_ns) {
        groups[group_of[period_ns]].1.push(thread);
    }
    let imported: Vec<Warning> = meta
        .warnings
        .iter()
        .filter(|w| w.code == WarningCode::ImportedCyclictest)
        .cloned()
        .collect();
    let mut warnings = Some(meta.warnings);
    groups
        .into_iter()
        .map(|(period_ns, threads)| {
            let max_cycles = threads.iter().map(|t| t.summary.samples).max().unwrap_or(0);
            let mut cpus: Vec<usize> = threads.iter().map(|t| t.cpu).collect();
            cpus.sort_unstable();
            cpus.dedup();
            let warnings = warnings.take().unwrap_or_else(|| imported.clone());
            let name = format!("timer {METHOD} {}", crate::units::name_ns(period_ns));
            let params = ScenarioParams {
                method: METHOD.into(),
                period_ns,
                policy: meta.policy.clone(),
                priority: meta.priority,
                deadline_ns: period_ns,
                samples: max_cycles,
                cpus,
                ..ScenarioParams::default()
            };
            Scenario {
                elapsed_ns: max_cycles.saturating_mul(period_ns),
                threads,
                warnings,
                ..Scenario::new(
                    name,
                    crate::result::ProbeKind::Timer,
                    params,
                    meta.started.clone(),
                )
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_in_all_spellings() {
        let a = ["cyclictest", "-i500", "-p", "95", "--policy=rr"];
        assert_eq!(option_value(&a, "-i", "--interval").as_deref(), Some("500"));
        assert_eq!(option_value(&a, "-p", "--priority").as_deref(), Some("95"));
        assert_eq!(option_value(&a, "-y", "--policy").as_deref(), Some("rr"));
    }

    #[test]
    fn values_out_of_range_are_errors_naming_field_and_value() {
        let thread = |field: &str| {
            let mut t = serde_json::json!({"cycles": 3, "min": 1, "max": 5, "avg": 2, "cpu": 0});
            let (k, v) = field.split_once('=').unwrap();
            t[k] = serde_json::from_str(v).unwrap();
            let file = serde_json::json!({"rt_test_version:": "2.5", "num_threads": 1, "thread": {"0": t}});
            serde_json::from_value::<CtFile>(file).unwrap()
        };
        for (field, needle) in [
            ("cycles=-5", "'cycles' -5 is not a sample count"),
            ("cycles=1e30", "'cycles' 1e+30 is not a sample count"),
            ("cycles=2.5", "'cycles' 2.5"),
            ("cpu=-1", "'cpu' -1 is not a CPU number (0 to 8191)"),
            ("cpu=8192", "'cpu' 8192"),
            ("min=-1", "'min' -1 is not a latency"),
            ("max=1e30", "'max' 1e+30 is not a latency"),
            ("avg=-0.5", "'avg' -0.5"),
        ] {
            let e = from_cyclictest(thread(field)).unwrap_err();
            assert!(e.contains(needle), "{field}: {e}");
        }
        let ok = from_cyclictest(thread("cpu=3")).unwrap();
        assert_eq!(ok.scenarios[0].threads[0].cpu, 3);
    }

    /// Issue 34, item 10: a histogram holding more samples than `cycles`, and a thread
    /// key that is no thread number, are refused naming the field and the value.
    #[test]
    fn inconsistent_counts_and_keys_are_refused_naming_them() {
        let file = |key: &str, t: &Value| {
            let file = serde_json::json!({"rt_test_version:": "2.5", "num_threads": 1, "thread": {key: t}});
            serde_json::from_value::<CtFile>(file).unwrap()
        };
        let ok = serde_json::json!({"cycles": 10, "min": 1, "max": 5, "avg": 2, "cpu": 0, "histogram": {"1": 4, "2": 6}});
        assert!(from_cyclictest(file("0", &ok)).is_ok());
        let mut many = ok.clone();
        many["histogram"]["5"] = 5_000_000.into();
        let e = from_cyclictest(file("0", &many)).unwrap_err();
        assert!(
            e.contains("holds 5000010 samples, more than its 'cycles' 10"),
            "{e}"
        );
        for key in ["99999999999999999999", "1", "-1", "x"] {
            let e = from_cyclictest(file(key, &ok)).unwrap_err();
            assert!(
                e.contains(&format!(
                    "thread key '{key}' is not a thread number (0 to 0"
                )),
                "{e}"
            );
        }
    }

    #[test]
    fn distance_as_cyclictest_applies_it() {
        assert_eq!(distance_of(&["cyclictest", "-t2"]), 500);
        assert_eq!(distance_of(&["cyclictest", "-t2", "-d", "200"]), 200);
        assert_eq!(distance_of(&["cyclictest", "--distance=0", "-t2"]), 0);
        assert_eq!(distance_of(&["cyclictest", "-t2", "-d200", "-h", "400"]), 0);
        assert_eq!(distance_of(&["cyclictest", "-S", "--histofall=50"]), 0);
    }

    #[test]
    fn percentiles_of_buckets() {
        let b = [[10, 50], [20, 49], [30, 1]];
        assert_eq!(value_at_rank(&b, rank_of(50.0, 100)), 10);
        assert_eq!(value_at_rank(&b, rank_of(99.0, 100)), 20);
        assert_eq!(value_at_rank(&b, rank_of(99.9, 100)), 30);
    }
}
