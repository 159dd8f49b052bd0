//! Reads a LAVA job's output as a result, so `report` and `compare` take board-farm runs
//! directly: the test sets and cases `--export-lava` writes, as a LAVA job log holds them
//! (lava_log.rs reads every sighting of a case). Per statistic, LAVA's own results entry
//! wins; sightings that disagree with it, and measurements that cannot be read, become
//! warnings of the result. The result JSON attached to a job is an ordinary result file
//! and is read as one. Set and case name carry the scenario, CPU, metric and statistic
//! (report/lava.rs); only the statistics present are known, the others are marked
//! unknown and never judged.

use crate::error::UserError;
use crate::import::lava_log::{read_log, LavaCase, Sighting};
use crate::result::{Metric, ProbeKind, Run, Scenario, ScenarioParams, ThreadResult};
use crate::stats::{Stat, Summary};
use crate::sysinfo::SystemInfo;
use crate::warning::{Warning, WarningCode};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Loads a result file, a cyclictest --json file or a LAVA job log (`-`: standard input,
/// read once).
pub fn load_result(path: &Path) -> Result<Run, UserError> {
    result_from_text(path, crate::result::read_input_file(path)?)
}

/// `load_result` of the text already read from `path` (named in errors): its kind is
/// decided by what it holds.
pub fn result_from_text(path: &Path, text: String) -> Result<Run, UserError> {
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
    crate::import::cyclictest::from_text(path, text)
}

/// The code of the warnings a LAVA log's reading leaves (a sighting that disagrees, a
/// measurement that cannot be read).
pub const UNREADABLE_CODE: &str = "lava_unreadable_case";

/// Prints, on stderr, what reading each LAVA log left unread or in doubt, for commands
/// that show no input's warnings of their own (`compare`, a report of several files):
/// a statistic a verdict cannot judge is never left unsaid.
pub fn print_reading_warnings(runs: &[Run], paths: &[std::path::PathBuf]) {
    use crate::output::terminal::escape_controls;
    for (run, path) in runs.iter().zip(paths) {
        for line in crate::result::journal::partial_lines(run).lines() {
            eprintln!("warning: {}: {}", path.display(), escape_controls(line));
        }
        for w in &run.warnings {
            if w.code == WarningCode::Other(UNREADABLE_CODE.into()) {
                let message = escape_controls(&w.message);
                eprintln!("warning: {}: {message}", path.display());
            }
        }
    }
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

/// What a case name (`timer_clock-nanosleep_1ms_cpu0_round_trip_p99.9`) says: scenario
/// name (words), CPU, metric and statistic; None for cases that are not latscope's (an
/// unknown metric included).
pub fn parse_case_name(name: &str) -> Option<(String, usize, Metric, Stat)> {
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
        Metric::Latency
    } else {
        Metric::from_name(&metric)?
    };
    Some((words[..cpu_at].join(" "), cpu, metric, stat))
}

/// A measurement as written, in its units, as ns (or a count), exactly where the text
/// has no more decimals than a nanosecond (`185.95` µs is 185 950 ns, not 185 950.000…03).
/// None when the text is no number or the units are unknown.
pub fn measurement_ns(stat: Stat, text: &str, units: Option<&str>) -> Option<f64> {
    let digits: u32 = if stat.is_count() {
        0
    } else {
        match units.unwrap_or("us") {
            "ns" => 0,
            "us" | "µs" => 3,
            "ms" => 6,
            "s" => 9,
            _ => return None,
        }
    };
    let text = text.trim();
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let decimal = |t: &str| !t.is_empty() && t.len() <= 15 && t.bytes().all(|b| b.is_ascii_digit());
    if decimal(int) && (frac.is_empty() || decimal(frac)) && frac.len() <= digits as usize {
        let scale = 10u64.pow(digits);
        let int: u64 = int.parse().ok()?;
        let frac_ns: u64 = if frac.is_empty() {
            0
        } else {
            frac.parse::<u64>().ok()? * 10u64.pow(digits - frac.len() as u32)
        };
        let ns = int.checked_mul(scale)?.checked_add(frac_ns)?;
        return (ns < 1 << 53).then_some(ns as f64);
    }
    let v: f64 = text.parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * 10f64.powi(digits as i32)).round())
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

/// Words of a scenario name as a timer/wake/net/noise scenario's probe, method and
/// period (`timer clock-nanosleep 1ms`), so it aligns with the same scenario's JSON.
fn params_of(name: &str) -> (ProbeKind, ScenarioParams) {
    let words: Vec<&str> = name.split(' ').collect();
    let probe = words
        .first()
        .and_then(|w| ProbeKind::parse(w))
        .unwrap_or(ProbeKind::Lava);
    let method = words.get(1).unwrap_or(&"").to_string();
    let period_ns = words
        .get(2)
        .and_then(|w| crate::units::parse_duration_ns(w, "us").ok())
        .unwrap_or(0);
    let params = ScenarioParams {
        method,
        period_ns,
        ..ScenarioParams::default()
    };
    (probe, params)
}

/// The value a statistic takes from its sightings: the most trusted one that can be read
/// (LAVA's results entry first), and the result it was reported with; notes (warnings)
/// for every sighting that cannot be read or disagrees.
fn choose(
    stat: Stat,
    name: &str,
    seen: &[&LavaCase],
    notes: &mut Vec<String>,
) -> Option<(f64, String)> {
    let mut seen = seen.to_vec();
    seen.sort_by_key(|c| c.seen);
    let mut values = Vec::new();
    for c in &seen {
        let Some(text) = &c.measurement else { continue };
        match measurement_ns(stat, text, c.units.as_deref()) {
            Some(v) => values.push((v, *c)),
            None => notes.push(format!(
                "LAVA case {name}: the {} has a measurement that cannot be read ({text:?} {})",
                c.seen.describe(),
                c.units.as_deref().unwrap_or("")
            )),
        }
    }
    let Some(&(value, chosen)) = values.first() else {
        notes.push(format!(
            "LAVA case {name}: no readable measurement in {} sighting(s): {stat} is unknown",
            seen.len()
        ));
        return None;
    };
    for (v, c) in &values[1..] {
        if *v != value {
            notes.push(format!(
                "LAVA case {name}: the {} says {} but the {} says {}; the {} is taken",
                chosen.seen.describe(),
                chosen.measurement.as_deref().unwrap_or(""),
                c.seen.describe(),
                c.measurement.as_deref().unwrap_or(""),
                chosen.seen.describe()
            ));
        }
    }
    if chosen.seen != Sighting::Results && seen.iter().any(|c| c.seen == Sighting::Results) {
        notes.push(format!(
            "LAVA case {name}: taken from the {} (LAVA's results entry has no readable one)",
            chosen.seen.describe()
        ));
    }
    Some((value, chosen.result.clone()))
}

/// Every case name once, in the order first seen, with all its sightings (a map of the
/// names seen, so a log of 300 000 cases is read in linear time, issue 34 item 7).
fn grouped(cases: &[LavaCase]) -> Vec<(String, Vec<&LavaCase>)> {
    let mut out: Vec<(String, Vec<&LavaCase>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for case in cases {
        let name = case.full_name();
        match index.get(&name) {
            Some(&i) => out[i].1.push(case),
            None => {
                index.insert(name.clone(), out.len());
                out.push((name, vec![case]));
            }
        }
    }
    out
}

/// The scenarios being built, each found by its name and each thread by its scenario,
/// CPU and metric in constant time.
#[derive(Default)]
struct Built {
    scenarios: Vec<Scenario>,
    by_name: HashMap<String, usize>,
    threads: HashMap<(usize, usize, Metric), usize>,
    cpus: std::collections::HashSet<(usize, usize)>,
}

impl Built {
    /// The thread of that scenario, CPU and metric, each added when new.
    fn thread(&mut self, name: &str, cpu: usize, metric: Metric) -> &mut ThreadResult {
        let s = match self.by_name.get(name) {
            Some(&s) => s,
            None => {
                let (probe, params) = params_of(name);
                self.scenarios.push(Scenario::new(
                    name.to_string(),
                    probe,
                    params,
                    String::new(),
                ));
                self.by_name
                    .insert(name.to_string(), self.scenarios.len() - 1);
                self.scenarios.len() - 1
            }
        };
        let sc = &mut self.scenarios[s];
        let t = *self.threads.entry((s, cpu, metric)).or_insert_with(|| {
            sc.threads.push(ThreadResult {
                cpu,
                method: sc.params.method.clone(),
                metric,
                summary: Summary::default(),
                histogram: Vec::new(),
                per_second_max_ns: Vec::new(),
                extra: Default::default(),
                worst_case: None,
            });
            sc.threads.len() - 1
        });
        if self.cpus.insert((s, cpu)) {
            sc.params.cpus.push(cpu);
        }
        &mut sc.threads[t]
    }
}

/// A Run from a LAVA log's latscope cases (`source` names the host when the log does
/// not).
pub fn from_lava_log(text: &str, source: &str) -> Result<Run, String> {
    let log = read_log(text);
    let mut built = Built::default();
    let mut known: BTreeMap<(String, usize, Metric), Vec<Stat>> = BTreeMap::new();
    let mut notes = Vec::new();
    let mut failed = 0usize;
    let mut latscope_cases = 0usize;
    for (full, seen) in grouped(&log.cases) {
        let Some((name, cpu, metric, stat)) = parse_case_name(&full) else {
            continue;
        };
        latscope_cases += 1;
        let Some((value, result)) = choose(stat, &full, &seen, &mut notes) else {
            continue;
        };
        if result == "fail" {
            failed += 1;
        }
        set_stat(&mut built.thread(&name, cpu, metric).summary, stat, value);
        known.entry((name, cpu, metric)).or_default().push(stat);
    }
    let mut scenarios = built.scenarios;
    if scenarios.is_empty() {
        let why = if latscope_cases > 0 {
            format!(
                "{latscope_cases} latscope test case(s) but no readable measurement ({})",
                notes.first().map_or("", String::as_str)
            )
        } else {
            "no latscope test case with a measurement (test sets like timer_clock-nanosleep_1ms with cases like cpu0_max, written by --export-lava)".into()
        };
        return Err(why);
    }
    for sc in &mut scenarios {
        for th in &mut sc.threads {
            let given = &known[&(sc.name.clone(), th.cpu, th.metric)];
            let unknown: Vec<String> = Stat::ALL
                .iter()
                .filter(|s| !given.contains(s))
                .map(|s| s.name().into())
                .collect();
            th.extra.unknown_stats = Some(unknown);
        }
    }
    let mut warnings: Vec<Warning> = notes
        .into_iter()
        .map(|n| Warning::new(WarningCode::Other(UNREADABLE_CODE.into()), n))
        .collect();
    if failed > 0 {
        warnings.push(Warning::new(
            WarningCode::Other("lava_failed_cases".into()),
            format!("{failed} LAVA test case(s) failed (a --fail-above limit on the board)"),
        ));
    }
    Ok(Run {
        schema_version: crate::result::SCHEMA_VERSION,
        tool: "latscope (LAVA job log)".into(),
        tool_version: String::new(),
        command_line: Vec::new(),
        started_at: log.started_at.clone(),
        finished_at: log.started_at,
        interrupted: false,
        interrupted_by: None,
        plan_hash: None,
        checkpoint: None,
        system: SystemInfo {
            hostname: source.to_string(),
            kernel_release: log.kernel_release,
            preemption_model: if log.preemption_model.is_empty() {
                "unknown".into()
            } else {
                log.preemption_model
            },
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
                "(lava-test-case |lava-test-set start |TEST_CASE_ID=|<LAVA_SIGNAL_TESTSET START |Received signal: <TESTCASE> |\\{\"dt\": \"|\"lvl\": \"results\"|\"case\": \"|! \"|cpu[0-9]|_|max|p99.9|--measurement |--result |MEASUREMENT=|Linux version |[a-z0-9 .\"'>=}{-]){0,40}",
                any::<String>(),
            ]
        ) {
            let _ = read_log(&text);
            let _ = from_lava_log(&text, "x");
        }

        /// A measurement `--export-lava` writes (µs, two decimals) is read to the ns.
        #[test]
        fn two_decimal_microseconds_are_exact_nanoseconds(ns in 0u64..10_000_000_000_000) {
            let ten = ns / 10 * 10;
            let text = format!("{}.{:02}", ten / 1000, ten % 1000 / 10);
            prop_assert_eq!(measurement_ns(Stat::Max, &text, Some("us")), Some(ten as f64));
        }
    }

    #[test]
    fn measurements_are_read_exactly_or_not_at_all() {
        assert_eq!(
            measurement_ns(Stat::Avg, "185.95", Some("us")),
            Some(185_950.0)
        );
        assert_eq!(measurement_ns(Stat::Max, "1638.4", None), Some(1_638_400.0));
        assert_eq!(
            measurement_ns(Stat::Max, "2", Some("ms")),
            Some(2_000_000.0)
        );
        assert_eq!(
            measurement_ns(Stat::Overruns, "47.0", Some("count")),
            Some(47.0)
        );
        assert_eq!(
            measurement_ns(Stat::Max, "1e3", Some("us")),
            Some(1_000_000.0)
        );
        assert_eq!(measurement_ns(Stat::Max, "0.0004", Some("us")), Some(0.0));
        for bad in ["65.01\"}", "", "-", "nan", "inf", "-3"] {
            assert_eq!(measurement_ns(Stat::Max, bad, Some("us")), None, "{bad}");
        }
        assert_eq!(measurement_ns(Stat::Max, "5", Some("furlongs")), None);
    }

    /// The three sightings of lava-run 2023.01 in both orders it logged them: every
    /// statistic read, from the results entry.
    #[test]
    fn every_statistic_is_read_whatever_the_order_of_its_sightings() {
        let signal = r#"{"dt": "2026-11-25T19:51:19.5", "lvl": "debug", "msg": "Received signal: <TESTCASE> TEST_CASE_ID=cpu1_STAT RESULT=pass UNITS=us MEASUREMENT=VALUE"}"#;
        let results = r#"{"dt": "2026-11-25T19:51:19.6", "lvl": "results", "msg": {"case": "cpu1_STAT", "definition": "0_latscope", "measurement": ! "VALUE", "result": "pass", "set": "timer_clock-nanosleep_1ms", "units": "us"}}"#;
        let echo = r#"{"dt": "2026-11-25T19:51:19.7", "lvl": "target", "msg": "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=cpu1_STAT RESULT=pass UNITS=us MEASUREMENT=VALUE>"}"#;
        let stats = [
            ("min", "65.01"),
            ("avg", "185.95"),
            ("p99.9", "4007.93"),
            ("max", "7051.15"),
        ];
        let mut log = String::from("<LAVA_SIGNAL_TESTSET START timer_clock-nanosleep_1ms>\nReceived signal: <TESTSET> START timer_clock-nanosleep_1ms\n");
        for (i, (stat, value)) in stats.iter().enumerate() {
            let mut lines = [signal, results, echo];
            lines.rotate_left(i % 3);
            for l in lines {
                log += &l.replace("STAT", stat).replace("VALUE", value);
                log += "\n";
            }
        }
        let run = from_lava_log(&log, "job").expect("read");
        assert!(run.warnings.is_empty(), "{:?}", run.warnings);
        let s = &run.scenarios[0].threads[0].summary;
        assert_eq!(run.scenarios[0].name, "timer clock-nanosleep 1ms");
        assert_eq!(
            (s.min_ns, s.mean_ns, s.p999_ns, s.max_ns),
            (65_010, 185_950.0, 4_007_930, 7_051_150)
        );
    }

    #[test]
    fn disagreeing_and_unreadable_sightings_are_warnings_and_results_win() {
        let log = concat!(
            "{\"dt\": \"2026-03-01T10:00:00\", \"lvl\": \"target\", \"msg\": \"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=timer_x_cpu1_max RESULT=pass MEASUREMENT=42.50 UNITS=us>\"}\n",
            "{\"dt\": \"2026-03-01T10:00:01\", \"lvl\": \"results\", \"msg\": {\"case\": \"timer_x_cpu1_max\", \"definition\": \"0_latscope\", \"measurement\": ! \"43.5\", \"result\": \"fail\", \"units\": \"us\"}}\n",
            "Received signal: <TESTCASE> TEST_CASE_ID=timer_x_cpu1_min RESULT=pass UNITS=us MEASUREMENT=3.25\"}\n",
            "lava-test-case timer_x_cpu1_avg --result pass --measurement 3.5 --units us\n",
            "lava-test-case timer_x_cpu1_p99 --result pass\n",
        );
        let run = from_lava_log(log, "board").unwrap();
        let th = &run.scenarios[0].threads[0];
        assert_eq!(th.summary.max_ns, 43_500, "LAVA's results entry wins");
        assert_eq!(th.summary.mean_ns, 3_500.0);
        assert!(crate::result::stat_unknown(th, Stat::Min));
        assert!(crate::result::stat_unknown(th, Stat::P99));
        let text: Vec<String> = run.warnings.iter().map(|w| w.message.clone()).collect();
        assert_eq!(text.len(), 5, "{text:#?}");
        assert!(
            text[0].contains("says 43.5 but the target's signal echo says 42.50"),
            "{text:#?}"
        );
        assert!(text[1].contains("3.25\\\"}"), "{text:#?}");
        assert!(
            text[2].contains("timer_x_cpu1_min: no readable measurement"),
            "{text:#?}"
        );
        assert!(
            text[3].contains("timer_x_cpu1_p99: no readable measurement"),
            "{text:#?}"
        );
        assert!(text[4].contains("1 LAVA test case(s) failed"), "{text:#?}");
    }

    #[test]
    fn case_names_split_into_scenario_cpu_metric_and_stat() {
        assert_eq!(
            parse_case_name("timer_clock-nanosleep_1ms_cpu0_max"),
            Some((
                "timer clock-nanosleep 1ms".into(),
                0,
                Metric::Latency,
                Stat::Max
            ))
        );
        assert_eq!(
            parse_case_name("net_udp-56B_cpu12_round_trip_p99.9"),
            Some(("net udp-56B".into(), 12, Metric::RoundTrip, Stat::P999))
        );
        assert_eq!(parse_case_name("latscope-ran"), None);
        assert_eq!(parse_case_name("cpu0_max"), None);
    }

    #[test]
    fn a_plain_export_script_is_read_with_its_sets() {
        let log = concat!(
            "lava-test-set start timer_clock-nanosleep_1ms\n",
            "lava-test-case cpu1_overruns --result fail --measurement 2 --units count\n",
            "lava-test-set stop\n",
        );
        let run = from_lava_log(log, "board").unwrap();
        assert_eq!(run.scenarios[0].params.period_ns, 1_000_000);
        assert_eq!(run.scenarios[0].threads[0].summary.overruns, 2);
        assert_eq!(run.system.preemption_model, "unknown");
    }
}
