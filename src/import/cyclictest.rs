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
use serde_json::Value;
use std::path::Path;

/// The method name imported scenarios get; compare aligns it with `clock-nanosleep`.
pub const METHOD: &str = "clock-nanosleep (cyclictest)";

/// Whether a JSON document looks like cyclictest's output.
pub fn is_cyclictest(v: &Value) -> bool {
    v.get("rt_test_version:").is_some()
        || (v.get("thread").is_some() && v.get("num_threads").is_some())
}

/// Loads a latscope result file or a cyclictest --json file, naming the file and what
/// is wrong when it is neither.
pub fn load_any(path: &Path) -> Result<Run, UserError> {
    // Read once, size-checked first (issue 12, item 12).
    from_text(path, crate::result::read_input_file(path)?)
}

/// `load_any` of a text already read from `path` (named in errors).
pub fn from_text(path: &Path, text: String) -> Result<Run, UserError> {
    let bad = |reason: String| UserError::BadInputFile {
        path: crate::result::input_name(path),
        reason,
    };
    if crate::result::journal::is_journal(&text) {
        return crate::result::journal::parse(path, &text);
    }
    let v = serde_json::from_str::<Value>(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    drop(text);
    if is_cyclictest(&v) {
        return from_cyclictest(&v).map_err(|r| bad(format!("cyclictest --json file: {r}")));
    }
    Run::from_json_value(path, v)
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

fn num(v: &Value, key: &str) -> Result<f64, String> {
    v.get(key)
        .and_then(Value::as_f64)
        .ok_or_else(|| format!("thread entry has no numeric '{key}'"))
}

// Values out of range are errors, never clamped (issue 22, item 8): cyclictest writes
// `cycles` and `cpu` as whole numbers and its latencies as 0 or more, so anything else
// is a damaged or edited file, and a guessed value would misreport it: a clamped `cycles`
// misstates every statistic, a clamped `cpu` aligns the thread with another CPU's in
// compare, a clamped latency becomes a min or max that was never measured.

/// A thread's `key` quoted for an error (a huge value stays short).
fn quoted(t: &Value, key: &str) -> String {
    crate::error::clip(&t[key].to_string()).into_owned()
}

/// A thread's sample count: a whole number from 0 to 2^64 - 1.
fn cycles_of(t: &Value) -> Result<u64, String> {
    num(t, "cycles")?;
    t["cycles"].as_u64().ok_or_else(|| {
        format!(
            "a thread's 'cycles' {} is not a sample count (a whole number from 0 to {})",
            quoted(t, "cycles"),
            u64::MAX
        )
    })
}

/// A thread's `min`, `max` or `avg` in ns (`scale` ns a unit): 0 or more, and not past
/// 2^64 ns.
fn latency_of(t: &Value, key: &str, scale: u64) -> Result<f64, String> {
    let ns = num(t, key)? * scale as f64;
    if !(0.0..u64::MAX as f64).contains(&ns) {
        return Err(format!(
            "a thread's '{key}' {} is not a latency: cyclictest writes 0 to {} {}",
            quoted(t, key),
            u64::MAX / scale,
            if scale == 1 { "ns" } else { "µs" }
        ));
    }
    Ok(ns)
}

/// A thread's CPU: a whole number below the kernel's 8192 CPUs (0 when absent, as
/// before: cyclictest has always written it).
fn cpu_of(t: &Value) -> Result<usize, String> {
    let max = crate::sys::cpu_list::MAX_CPUS;
    match t.get("cpu") {
        None => Ok(0),
        Some(v) => v
            .as_u64()
            .filter(|&cpu| cpu < max as u64)
            .map(|cpu| cpu as usize)
            .ok_or_else(|| {
                format!(
                    "a thread's 'cpu' {} is not a CPU number (0 to {})",
                    quoted(t, "cpu"),
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

fn command_line_of(v: &Value) -> Result<CommandLine, String> {
    let text = v
        .get("cmdline:")
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

/// A thread's `histogram` object as sorted `[upper bound ns, count]` buckets (empty when
/// absent).
fn histogram_of(t: &Value, scale: u64) -> Result<Vec<[u64; 2]>, String> {
    let mut histogram: Vec<[u64; 2]> = Vec::new();
    if let Some(h) = t.get("histogram") {
        let h = h
            .as_object()
            .ok_or("a thread's 'histogram' is not an object of latency: count")?;
        for (k, c) in h {
            let bucket = k
                .parse::<u64>()
                .ok()
                .and_then(|k| k.checked_mul(scale)?.checked_add(scale - 1))
                .ok_or_else(|| {
                    format!("histogram key '{k}' is not a latency (a whole number of µs)")
                })?;
            let count = c
                .as_u64()
                .ok_or_else(|| format!("histogram count {c} for '{k}' is not a count"))?;
            if count > 0 {
                histogram.push([bucket, count]);
            }
        }
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
    t: &Value,
    scale: u64,
    period_ns: u64,
    warnings: &mut Vec<Warning>,
) -> Result<ThreadResult, String> {
    let cycles = cycles_of(t)?;
    let min_ns = latency_of(t, "min", scale)? as u64;
    let max_ns = latency_of(t, "max", scale)? as u64;
    let mean_ns = latency_of(t, "avg", scale)?;
    let cpu = cpu_of(t)?;
    // A thread without cycles keeps cyclictest's initial min (1000000) and max (0);
    // the average may be rounded by up to one unit.
    let (low, high) = (min_ns as f64 - scale as f64, max_ns as f64 + scale as f64);
    if cycles > 0 && (min_ns > max_ns || mean_ns < low || mean_ns > high) {
        return Err(format!(
            "a thread's min {}, avg {} and max {} are not in order (min <= avg <= max)",
            t["min"], t["avg"], t["max"]
        ));
    }
    let mut histogram = histogram_of(t, scale)?;
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

/// The system cyclictest's `sysinfo` describes.
fn system_of(v: &Value) -> SystemInfo {
    let sys = v.get("sysinfo").cloned().unwrap_or(Value::Null);
    let s = |k: &str| sys.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let version = s("version");
    let preemption_model = if sys.get("realtime").and_then(Value::as_i64) == Some(1)
        || version.contains("PREEMPT_RT")
    {
        "PREEMPT_RT"
    } else if version.contains("PREEMPT_DYNAMIC") {
        "PREEMPT_DYNAMIC"
    } else if version.contains("PREEMPT") {
        "PREEMPT"
    } else {
        "unknown"
    };
    SystemInfo {
        hostname: s("nodename"),
        kernel_release: s("release"),
        kernel_version: version.clone(),
        preemption_model: preemption_model.into(),
        ..SystemInfo::default()
    }
}

/// Converts cyclictest's JSON into a Run with one timer scenario.
pub fn from_cyclictest(v: &Value) -> Result<Run, String> {
    let scale: u64 = if v.get("resolution_in_ns").and_then(Value::as_u64) == Some(1) {
        1
    } else {
        1000
    };
    let cmd = command_line_of(v)?;
    let threads_obj = v
        .get("thread")
        .and_then(Value::as_object)
        .ok_or("no 'thread' object")?;
    let mut entries: Vec<(u64, &Value)> = threads_obj
        .iter()
        .map(|(k, t)| (k.parse().unwrap_or(u64::MAX), t))
        .collect();
    entries.sort_by_key(|e| e.0);
    let mut threads = Vec::new();
    let mut warnings = vec![Warning::new(
        WarningCode::ImportedCyclictest,
        format!("imported from cyclictest --json ({})", cmd.text),
    )];
    let mut periods_ns = Vec::new();
    for (index, t) in entries {
        // Thread N sleeps -i + N × -d (cyclictest's "I:"); the keys are 0, 1, ...
        let period_us = cmd
            .interval_us
            .saturating_add(index.min(4096).saturating_mul(cmd.distance_us));
        let period_ns = period_us.min(MAX_INTERVAL_US) * 1000;
        periods_ns.push(period_ns);
        threads.push(thread_of(t, scale, period_ns, &mut warnings)?);
    }
    let text = |key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let started = text("start_time");
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
    let mut run = Run::new(system_of(v), args);
    run.tool = "cyclictest".into();
    run.tool_version = text("rt_test_version:");
    run.started_at = started;
    run.finished_at = text("end_time");
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
    let mut groups: Vec<(u64, Vec<ThreadResult>)> = Vec::new();
    for (thread, &period_ns) in threads.into_iter().zip(periods_ns) {
        match groups.iter_mut().find(|g| g.0 == period_ns) {
            Some(group) => group.1.push(thread),
            None => groups.push((period_ns, vec![thread])),
        }
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
            serde_json::json!({"rt_test_version:": "2.5", "num_threads": 1, "thread": {"0": t}})
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
            let e = from_cyclictest(&thread(field)).unwrap_err();
            assert!(e.contains(needle), "{field}: {e}");
        }
        let ok = from_cyclictest(&thread("cpu=3")).unwrap();
        assert_eq!(ok.scenarios[0].threads[0].cpu, 3);
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
