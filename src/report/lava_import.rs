//! Reads a LAVA job's output as a result, so `report` and `compare` take board-farm runs
//! directly: the `lava-test-case` lines `--export-lava` writes, as they appear in a LAVA
//! job log (`<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=... MEASUREMENT=... UNITS=us>`, the
//! `lvl: results` entries of `lava-run`'s output.yaml, or the lines themselves). The
//! result JSON attached to a job is an ordinary result file and is read as one.
//! Case names carry the scenario, CPU, metric and statistic (report/lava.rs); only the
//! statistics present are known, the others are marked unknown and never judged.

use crate::error::UserError;
use crate::result::{Run, Scenario, ScenarioParams, ThreadResult, UNKNOWN_STATS_KEY};
use crate::stats::{Stat, Summary};
use crate::sysinfo::SystemInfo;
use std::collections::BTreeMap;
use std::path::Path;

/// Loads a result file, a cyclictest --json file or a LAVA job log (`-`: standard input,
/// read once).
pub fn load_result(path: &Path) -> Result<Run, UserError> {
    let text = crate::result::read_input_file(path)?;
    if looks_like_lava_log(&text) {
        let stem = match path.file_stem() {
            Some(s) if path.as_os_str() != "-" => s.to_string_lossy().into_owned(),
            _ => "lava".into(),
        };
        return from_lava_log(&text, &stem).map_err(|reason| UserError::BadInputFile {
            path: crate::result::input_name(path),
            reason: format!("LAVA job log: {reason}"),
        });
    }
    super::cyclictest_import::from_text(path, text)
}

/// Whether a text is a LAVA log (or `--export-lava` lines) rather than JSON. `lava-run`'s
/// own stdout is a log too: one `{"dt": ..., "lvl": ...}` object a line.
pub fn looks_like_lava_log(text: &str) -> bool {
    let start = text.trim_start();
    (!start.starts_with('{') || start.starts_with("{\"dt\": "))
        && (text.contains("lava-test-case ")
            || text.contains("TEST_CASE_ID=")
            || text.contains("\"lvl\": \"results\""))
}

/// One test case as LAVA recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct LavaCase {
    pub name: String,
    pub result: String,
    pub measurement: Option<f64>,
    pub units: Option<String>,
}

/// `KEY=VALUE` words of a LAVA signal (`<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=x RESULT=pass>`).
fn signal_case(line: &str) -> Option<LavaCase> {
    let start = line.find("TEST_CASE_ID=")?;
    let rest = &line[start..];
    let end = rest.find('>').unwrap_or(rest.len());
    let mut fields = BTreeMap::new();
    for word in rest[..end].split_whitespace() {
        if let Some((k, v)) = word.split_once('=') {
            fields.insert(k, v.trim_matches(|c| c == '"' || c == '\''));
        }
    }
    Some(LavaCase {
        name: fields.get("TEST_CASE_ID")?.to_string(),
        result: fields.get("RESULT").unwrap_or(&"unknown").to_string(),
        measurement: fields.get("MEASUREMENT").and_then(|m| m.parse().ok()),
        units: fields.get("UNITS").map(|u| u.to_string()),
    })
}

/// A `lava-test-case NAME --result R [--measurement M --units U]` command line.
fn command_case(line: &str) -> Option<LavaCase> {
    let start = line.find("lava-test-case ")?;
    let words = shlex::split(line[start..].trim_end_matches(['"', '\'', '}', ',']))?;
    let name = words.get(1)?.clone();
    if name.starts_with('-') || name.contains('$') {
        return None;
    }
    let opt = |flag: &str| {
        words
            .iter()
            .position(|w| w == flag)
            .and_then(|i| words.get(i + 1))
            .cloned()
    };
    Some(LavaCase {
        name,
        result: opt("--result")?,
        measurement: opt("--measurement").and_then(|m| m.parse().ok()),
        units: opt("--units"),
    })
}

/// The text after `"key": ` in a JSON-like line, unquoted, up to its end.
fn json_field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("\"{key}\": ");
    let rest = &line[line.find(&pat)? + pat.len()..];
    if let Some(quoted) = rest.strip_prefix('"') {
        Some(&quoted[..quoted.find('"')?])
    } else {
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        Some(rest[..end].trim())
    }
}

/// A `lvl: results` entry of lava-run's output.yaml.
fn results_entry(line: &str) -> Option<LavaCase> {
    if !line.contains("\"lvl\": \"results\"") {
        return None;
    }
    Some(LavaCase {
        name: json_field(line, "case")?.to_string(),
        result: json_field(line, "result").unwrap_or("unknown").to_string(),
        measurement: json_field(line, "measurement").and_then(|m| m.parse().ok()),
        units: json_field(line, "units").map(str::to_string),
    })
}

/// Every test case in a log, each name once (the first seen: a signal and its results
/// entry say the same).
pub fn lava_cases(text: &str) -> Vec<LavaCase> {
    let mut out: Vec<LavaCase> = Vec::new();
    for line in text.lines() {
        let case = results_entry(line)
            .or_else(|| signal_case(line))
            .or_else(|| command_case(line));
        if let Some(c) = case {
            if !out.iter().any(|o| o.name == c.name) {
                out.push(c);
            }
        }
    }
    out
}

/// What a case name (`timer_clock-nanosleep_1ms_cpu0_round_trip_p99.9`) says: scenario
/// name (words), CPU, metric and statistic; None for cases that are not latscope's.
pub fn parse_case_name(name: &str) -> Option<(String, usize, String, Stat)> {
    let words: Vec<&str> = name.split('_').collect();
    let stat = Stat::parse(words.last()?)?;
    let cpu_at = (0..words.len() - 1).rev().find(|&i| {
        words[i]
            .strip_prefix("cpu")
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    })?;
    if cpu_at == 0 {
        return None;
    }
    let cpu = words[cpu_at][3..].parse().ok()?;
    let metric = words[cpu_at + 1..words.len() - 1].join("_");
    let metric = if metric.is_empty() {
        crate::result::LATENCY_METRIC.to_string()
    } else {
        metric
    };
    Some((words[..cpu_at].join(" "), cpu, metric, stat))
}

/// A measurement in its units as ns (or a count).
fn value_ns(stat: Stat, measurement: f64, units: Option<&str>) -> f64 {
    if stat.is_count() {
        return measurement;
    }
    match units.unwrap_or("us") {
        "ns" => measurement,
        "ms" => measurement * 1e6,
        "s" => measurement * 1e9,
        _ => measurement * 1e3,
    }
}

fn set_stat(s: &mut Summary, stat: Stat, v: f64) {
    let n = v.round().max(0.0) as u64;
    match stat {
        Stat::Samples => s.samples = n,
        Stat::Min => s.min_ns = n,
        Stat::Avg => s.mean_ns = v,
        Stat::Stddev => s.stddev_ns = v,
        Stat::P50 => s.p50_ns = n,
        Stat::P90 => s.p90_ns = n,
        Stat::P99 => s.p99_ns = n,
        Stat::P999 => s.p999_ns = n,
        Stat::P9999 => s.p9999_ns = n,
        Stat::P99999 => s.p99999_ns = n,
        Stat::Max => s.max_ns = n,
        Stat::Overruns => s.overruns = n,
        Stat::Missed => s.missed = n,
    }
}

/// The kernel release and preemption model of the board's boot line (`Linux version
/// 6.1.0-rt-amd64 (...) #1 SMP PREEMPT_RT ...`), if the log has it.
fn kernel_of(text: &str) -> (String, String) {
    for line in text.lines() {
        if let Some(i) = line.find("Linux version ") {
            let rest = &line[i + "Linux version ".len()..];
            let release = rest.split_whitespace().next().unwrap_or("").to_string();
            // LAVA's own lines name the pattern it waits for (`'Linux version [0-9]'`).
            if !release.starts_with(|c: char| c.is_ascii_digit()) {
                continue;
            }
            let model = if rest.contains("PREEMPT_RT") {
                "PREEMPT_RT"
            } else if rest.contains("PREEMPT_DYNAMIC") {
                "PREEMPT_DYNAMIC"
            } else if rest.contains("PREEMPT") {
                "PREEMPT"
            } else {
                "unknown"
            };
            return (release, model.to_string());
        }
    }
    (String::new(), "unknown".into())
}

/// When the job started: the first `"dt": "2026-11-23T21:00:00..."` stamp of output.yaml.
fn first_stamp(text: &str) -> String {
    text.lines()
        .find_map(|l| json_field(l, "dt"))
        .map(|dt| {
            let secs = dt.get(..19).unwrap_or(dt);
            format!("{secs}Z")
        })
        .unwrap_or_default()
}

/// Words of a scenario name as a timer/wake/net/noise scenario's probe, method and
/// period (`timer clock-nanosleep 1ms`), so it aligns with the same scenario's JSON.
fn params_of(name: &str) -> (String, ScenarioParams) {
    let words: Vec<&str> = name.split(' ').collect();
    let probe = match words.first().copied() {
        Some(p @ ("timer" | "wake" | "net" | "noise")) => p.to_string(),
        _ => "lava".to_string(),
    };
    let method = words.get(1).unwrap_or(&"").to_string();
    let period_ns = words
        .get(2)
        .and_then(|w| crate::units::parse_duration_ns(w).ok())
        .unwrap_or(0);
    let params = ScenarioParams {
        method,
        period_ns,
        ..ScenarioParams::default()
    };
    (probe, params)
}

/// A Run from a LAVA log's latscope cases (`source` names the host when the log does
/// not).
pub fn from_lava_log(text: &str, source: &str) -> Result<Run, String> {
    let mut scenarios: Vec<Scenario> = Vec::new();
    let mut known: BTreeMap<(String, usize, String), Vec<Stat>> = BTreeMap::new();
    let mut failed = 0usize;
    for case in lava_cases(text) {
        let Some((name, cpu, metric, stat)) = parse_case_name(&case.name) else {
            continue;
        };
        let Some(m) = case.measurement.filter(|m| m.is_finite()) else {
            continue;
        };
        if case.result == "fail" {
            failed += 1;
        }
        let sc = match scenarios.iter().position(|s| s.name == name) {
            Some(i) => &mut scenarios[i],
            None => {
                let (probe, params) = params_of(&name);
                scenarios.push(Scenario {
                    name: name.clone(),
                    probe,
                    params,
                    interrupted: false,
                    started_at: String::new(),
                    elapsed_ns: 0,
                    threads: Vec::new(),
                    loads: Vec::new(),
                    isolation: None,
                    warnings: Vec::new(),
                    time: None,
                    trace: None,
                    broke: None,
                });
                scenarios.last_mut().expect("just pushed")
            }
        };
        let th = match sc
            .threads
            .iter()
            .position(|t| t.cpu == cpu && t.metric == metric)
        {
            Some(i) => &mut sc.threads[i],
            None => {
                sc.threads.push(ThreadResult {
                    cpu,
                    method: sc.params.method.clone(),
                    metric: metric.clone(),
                    summary: Summary::default(),
                    histogram: Vec::new(),
                    per_second_max_ns: Vec::new(),
                    extra: BTreeMap::new(),
                });
                if !sc.params.cpus.contains(&cpu) {
                    sc.params.cpus.push(cpu);
                }
                sc.threads.last_mut().expect("just pushed")
            }
        };
        set_stat(
            &mut th.summary,
            stat,
            value_ns(stat, m, case.units.as_deref()),
        );
        known.entry((name, cpu, metric)).or_default().push(stat);
    }
    if scenarios.is_empty() {
        return Err(
            "no latscope test case with a measurement (names like timer_clock-nanosleep_1ms_cpu0_max, written by --export-lava)"
                .into(),
        );
    }
    for sc in &mut scenarios {
        for th in &mut sc.threads {
            let given = &known[&(sc.name.clone(), th.cpu, th.metric.clone())];
            let unknown: Vec<serde_json::Value> = Stat::ALL
                .iter()
                .filter(|s| !given.contains(s))
                .map(|s| s.name().into())
                .collect();
            th.extra.insert(UNKNOWN_STATS_KEY.into(), unknown.into());
        }
    }
    let (kernel_release, preemption_model) = kernel_of(text);
    let started = first_stamp(text);
    let mut warnings = Vec::new();
    if failed > 0 {
        warnings.push(crate::warning::Warning::new(
            crate::warning::WarningCode::Other("lava_failed_cases".into()),
            format!("{failed} LAVA test case(s) failed (a --fail-above limit on the board)"),
        ));
    }
    Ok(Run {
        schema_version: crate::result::SCHEMA_VERSION,
        tool: "latscope (LAVA job log)".into(),
        tool_version: String::new(),
        command_line: Vec::new(),
        started_at: started.clone(),
        finished_at: started,
        interrupted: false,
        interrupted_by: None,
        plan_hash: None,
        checkpoint: None,
        system: SystemInfo {
            hostname: source.to_string(),
            kernel_release,
            preemption_model,
            ..SystemInfo::default()
        },
        warnings,
        scenarios,
        suite: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Whatever a log holds, reading it never panics.
        #[test]
        fn any_log_text_is_read_or_refused(
            text in prop_oneof![
                "(lava-test-case |TEST_CASE_ID=|\"lvl\": \"results\"|\"case\": \"|\"dt\": \"|cpu[0-9]|_|max|p99.9|--measurement |--result |MEASUREMENT=|Linux version |[a-z0-9 .\"'>=-]){0,40}",
                any::<String>(),
            ]
        ) {
            let _ = lava_cases(&text);
            let _ = from_lava_log(&text, "x");
        }
    }

    #[test]
    fn lava_runs_own_stdout_is_a_log_and_its_prompt_pattern_no_kernel() {
        let text = concat!(
            r#"{"dt": "2026-11-24T19:43:36.1", "lvl": "debug", "msg": "Setting prompt string to ['Linux version [0-9]']"}"#,
            "\n",
            r#"{"dt": "2026-11-24T19:43:40.2", "lvl": "target", "msg": "[    0.000000] Linux version 6.1.0-56-rt-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_RT Debian"}"#,
            "\n",
            r#"{"dt": "2026-11-24T19:43:50.3", "lvl": "results", "msg": {"case": "timer_clock-nanosleep_1ms_cpu1_max", "definition": "0_latscope", "measurement": 4845.6, "result": "pass", "units": "us"}}"#,
            "\n",
        );
        assert!(looks_like_lava_log(text));
        assert_eq!(
            kernel_of(text),
            ("6.1.0-56-rt-amd64".to_string(), "PREEMPT_RT".to_string())
        );
        let run = from_lava_log(text, "job").expect("read");
        assert_eq!(run.scenarios[0].threads[0].summary.max_ns, 4_845_600);
    }

    #[test]
    fn case_names_split_into_scenario_cpu_metric_and_stat() {
        assert_eq!(
            parse_case_name("timer_clock-nanosleep_1ms_cpu0_max"),
            Some((
                "timer clock-nanosleep 1ms".into(),
                0,
                "latency".into(),
                Stat::Max
            ))
        );
        assert_eq!(
            parse_case_name("net_udp-56B_cpu12_round_trip_p99.9"),
            Some(("net udp-56B".into(), 12, "round_trip".into(), Stat::P999))
        );
        assert_eq!(parse_case_name("latscope-ran"), None);
        assert_eq!(parse_case_name("cpu0_max"), None);
    }

    #[test]
    fn every_form_of_a_case_line_is_read() {
        let log = concat!(
            "- {\"dt\": \"2026-03-01T10:00:00.123\", \"lvl\": \"target\", \"msg\": \"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=timer_clock-nanosleep_1ms_cpu1_max RESULT=pass MEASUREMENT=42.50 UNITS=us>\"}\n",
            "- {\"dt\": \"2026-03-01T10:00:01\", \"lvl\": \"results\", \"msg\": {\"case\": \"timer_clock-nanosleep_1ms_cpu1_avg\", \"definition\": \"0_latscope\", \"result\": \"pass\", \"measurement\": \"3.25\", \"units\": \"us\"}}\n",
            "lava-test-case timer_clock-nanosleep_1ms_cpu1_overruns --result fail --measurement 2 --units count\n",
        );
        let run = from_lava_log(log, "board").unwrap();
        assert_eq!(run.started_at, "2026-03-01T10:00:00Z");
        let th = &run.scenarios[0].threads[0];
        assert_eq!(run.scenarios[0].params.period_ns, 1_000_000);
        assert_eq!(th.summary.max_ns, 42_500);
        assert_eq!(th.summary.mean_ns, 3_250.0);
        assert_eq!(th.summary.overruns, 2);
        assert!(crate::result::stat_unknown(th, Stat::P99));
        assert!(!crate::result::stat_unknown(th, Stat::Max));
        assert_eq!(run.warnings.len(), 1);
    }
}
