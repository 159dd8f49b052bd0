//! Reads the test cases out of a LAVA job log, every sighting of each: real `lava-run`
//! (lava-dispatcher 2023.01) logs a case three times, in an order that varies: the
//! target's echo (`<LAVA_SIGNAL_TESTCASE ...>`), a `Received signal: <TESTCASE> ...` debug
//! line, and a `results` entry (LAVA's own record, with the test set). Each log line is a
//! YAML flow mapping (`{"dt": ..., "lvl": ..., "msg": ...}`, `- ` before it in output.yaml,
//! with tags such as `! "65.01"`), read by a YAML parser; plain text lines (the log as
//! LAVA's web page shows it, or `--export-lava`'s own script) are read as they are.
//! lava.rs decides between the sightings. A line with a YAML alias is read as plain text:
//! LAVA never writes one, and an alias expanded in full is how 353 bytes became 17 GB.

use std::collections::BTreeMap;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;
use yaml_rust2::{Yaml, YamlLoader};

/// Where a test case was seen; the order is the preference (LAVA's own record first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Sighting {
    /// A `lvl: results` entry: what LAVA recorded.
    Results,
    /// LAVA's `Received signal: <TESTCASE> ...` debug line.
    Signal,
    /// The target's echo of the signal, `<LAVA_SIGNAL_TESTCASE ...>`.
    Echo,
    /// A `lava-test-case NAME --result ...` command line.
    Command,
}

impl Sighting {
    pub fn describe(self) -> &'static str {
        match self {
            Sighting::Results => "results entry",
            Sighting::Signal => "received signal",
            Sighting::Echo => "target's signal echo",
            Sighting::Command => "lava-test-case line",
        }
    }
}

/// One sighting of a test case.
#[derive(Debug, Clone, PartialEq)]
pub struct LavaCase {
    /// The test set it was reported in (`lava-test-set start NAME`), if any.
    pub set: Option<String>,
    pub name: String,
    pub result: String,
    /// The measurement as written (read by the importer, so an unreadable one is seen).
    pub measurement: Option<String>,
    pub units: Option<String>,
    pub seen: Sighting,
}

impl LavaCase {
    /// The set and case joined (`timer_clock-nanosleep_1ms` + `cpu1_max`), the name a
    /// case had before latscope used test sets.
    pub fn full_name(&self) -> String {
        match &self.set {
            Some(set) => format!("{set}_{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// What a log says: its cases (every sighting, in log order), the kernel and the start.
#[derive(Debug, Default)]
pub struct LavaLog {
    pub cases: Vec<LavaCase>,
    /// The release of `latscope kernel release: R` (the export's line), else the boot line's.
    pub kernel_release: String,
    /// `latscope preemption model: M` (the model latscope read), else the boot line's.
    pub preemption_model: String,
    /// The first `dt` stamp, as `YYYY-MM-DDTHH:MM:SSZ`.
    pub started_at: String,
}

/// The test set each kind of line is in: every kind is in log order in itself, while
/// the kinds interleave in any order.
#[derive(Default)]
struct Sets {
    current: BTreeMap<Sighting, String>,
}

/// The line `--export-lava`'s script prints with the kernel release (report/lava.rs).
pub const KERNEL_LINE: &str = "latscope kernel release: ";
/// The line `--export-lava`'s script prints with the preemption model latscope read.
pub const MODEL_LINE: &str = "latscope preemption model: ";

/// Reads every test case sighting, the kernel and the first stamp of a log.
pub fn read_log(text: &str) -> LavaLog {
    let mut log = LavaLog::default();
    let mut sets = Sets::default();
    let mut boot = (String::new(), String::new());
    for line in text.lines() {
        match log_entry(line) {
            Some((dt, lvl, msg)) => {
                if log.started_at.is_empty() {
                    log.started_at = format!("{}Z", dt.get(..19).unwrap_or(&dt));
                }
                match msg {
                    Yaml::Hash(_) if lvl == "results" => log.cases.extend(results_entry(&msg)),
                    Yaml::String(s) => read_text(&s, &mut sets, &mut log, &mut boot),
                    _ => {}
                }
            }
            None => read_text(line, &mut sets, &mut log, &mut boot),
        }
    }
    if log.kernel_release.is_empty() {
        log.kernel_release = boot.0;
    }
    if log.preemption_model.is_empty() {
        log.preemption_model = boot.1;
    }
    log
}

/// A line of lava-run's log (`{"dt": ...}`, or `- {"dt": ...}` in output.yaml): its
/// stamp, level and message; None for any other line.
fn log_entry(line: &str) -> Option<(String, String, Yaml)> {
    let start = line.trim_start();
    let body = start.strip_prefix("- ").unwrap_or(start);
    if !body.starts_with("{\"dt\"") {
        return None;
    }
    let Yaml::Hash(mut entry) = without_aliases(body)? else {
        return None;
    };
    let mut take = |k: &str| entry.remove(&Yaml::String(k.into()));
    let dt = take("dt")?.into_string()?;
    let lvl = take("lvl")?.into_string()?;
    Some((dt, lvl, take("msg")?))
}

/// YAML's loader with aliases refused: it copies the node an alias names at every use,
/// so nine levels of nine aliases in 353 bytes expand to 9^9 nodes (issue 34, item 2).
/// Events after the first alias are dropped, so a line costs time and memory linear in
/// its length.
#[derive(Default)]
struct NoAliases {
    loader: YamlLoader,
    alias: bool,
}

impl MarkedEventReceiver for NoAliases {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        if matches!(ev, Event::Alias(_)) {
            self.alias = true;
        }
        if !self.alias {
            self.loader.on_event(ev, mark);
        }
    }
}

/// The one document of a log line, or None when it does not parse or uses an alias.
fn without_aliases(body: &str) -> Option<Yaml> {
    let mut receiver = NoAliases::default();
    Parser::new_from_str(body).load(&mut receiver, false).ok()?;
    if receiver.alias {
        return None;
    }
    receiver.loader.documents().last().cloned()
}

/// A scalar of a results entry as text (LAVA writes them quoted, `! "65.01"`).
fn scalar(map: &Yaml, key: &str) -> Option<String> {
    match &map[key] {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        _ => None,
    }
}

/// A `lvl: results` entry of a test definition's case (LAVA's own, of definition
/// `lava`, are not test cases of the definition).
fn results_entry(msg: &Yaml) -> Option<LavaCase> {
    if scalar(msg, "definition").as_deref() == Some("lava") {
        return None;
    }
    Some(LavaCase {
        set: scalar(msg, "set"),
        name: scalar(msg, "case")?,
        result: scalar(msg, "result").unwrap_or_else(|| "unknown".into()),
        measurement: scalar(msg, "measurement"),
        units: scalar(msg, "units"),
        seen: Sighting::Results,
    })
}

/// One message or plain line: signals and their echoes, test sets, `lava-test-case`
/// lines, the kernel lines.
fn read_text(text: &str, sets: &mut Sets, log: &mut LavaLog, boot: &mut (String, String)) {
    if let Some(rest) = after(text, "Received signal: <TESTCASE> ") {
        log.cases.extend(signal_case(rest, Sighting::Signal, sets));
    } else if let Some(rest) = after(text, "Received signal: <TESTSET> ") {
        set_signal(rest, Sighting::Signal, sets);
    } else if let Some(rest) = after(text, "<LAVA_SIGNAL_TESTCASE ") {
        let rest = &rest[..rest.find('>').unwrap_or(rest.len())];
        log.cases.extend(signal_case(rest, Sighting::Echo, sets));
    } else if let Some(rest) = after(text, "<LAVA_SIGNAL_TESTSET ") {
        set_signal(
            &rest[..rest.find('>').unwrap_or(rest.len())],
            Sighting::Echo,
            sets,
        );
    } else if let Some(rest) = after(text, "lava-test-set ") {
        let words: Vec<&str> = rest.split_whitespace().collect();
        match words.as_slice() {
            ["start", name, ..] => sets.start(Sighting::Command, name),
            ["stop", ..] => sets.stop(Sighting::Command),
            _ => {}
        }
    } else if text.contains("lava-test-case ") {
        log.cases.extend(command_case(text, sets));
    } else if let Some(rest) = text.trim_start().strip_prefix(KERNEL_LINE) {
        log.kernel_release = unquoted(rest);
    } else if let Some(rest) = text.trim_start().strip_prefix(MODEL_LINE) {
        log.preemption_model = unquoted(rest);
    } else if boot.0.is_empty() {
        if let Some(kernel) = boot_line(text) {
            *boot = kernel;
        }
    }
}

fn after<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    text.find(marker).map(|i| &text[i + marker.len()..])
}

/// The rest of a line without the quotes a shell trace may put around it.
fn unquoted(rest: &str) -> String {
    rest.trim().trim_matches(['\'', '"']).to_string()
}

impl Sets {
    fn start(&mut self, kind: Sighting, name: &str) {
        self.current.insert(kind, name.to_string());
    }
    fn stop(&mut self, kind: Sighting) {
        self.current.remove(&kind);
    }
    fn of(&self, kind: Sighting) -> Option<String> {
        self.current.get(&kind).cloned()
    }
}

/// `START NAME` or `STOP` of a test set signal.
fn set_signal(words: &str, kind: Sighting, sets: &mut Sets) {
    let words: Vec<&str> = words.split_whitespace().collect();
    match words.as_slice() {
        ["START", name, ..] => sets.start(kind, name),
        ["STOP", ..] => sets.stop(kind),
        _ => {}
    }
}

/// The `KEY=VALUE` words of a test case signal (`TEST_CASE_ID=x RESULT=pass UNITS=us
/// MEASUREMENT=65.01`).
fn signal_case(words: &str, seen: Sighting, sets: &Sets) -> Option<LavaCase> {
    let mut fields = BTreeMap::new();
    for word in words.split_whitespace() {
        if let Some((k, v)) = word.split_once('=') {
            fields.insert(k, v.trim_matches(['"', '\'']));
        }
    }
    Some(LavaCase {
        set: sets.of(seen),
        name: fields.get("TEST_CASE_ID")?.to_string(),
        result: fields.get("RESULT").unwrap_or(&"unknown").to_string(),
        measurement: fields.get("MEASUREMENT").map(|m| m.to_string()),
        units: fields.get("UNITS").map(|u| u.to_string()),
        seen,
    })
}

/// A `lava-test-case NAME --result R [--measurement M --units U]` command line.
fn command_case(line: &str, sets: &Sets) -> Option<LavaCase> {
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
        set: sets.of(Sighting::Command),
        name,
        result: opt("--result")?,
        measurement: opt("--measurement"),
        units: opt("--units"),
        seen: Sighting::Command,
    })
}

/// The kernel release and preemption model of a boot line (`Linux version
/// 6.1.0-rt-amd64 (...) #1 SMP PREEMPT_RT ...`).
fn boot_line(text: &str) -> Option<(String, String)> {
    let rest = after(text, "Linux version ")?;
    let release = rest.split_whitespace().next().unwrap_or("").to_string();
    // LAVA's own lines name the pattern it waits for (`'Linux version [0-9]'`).
    if !release.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
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
    Some((release, model.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as lava-run 2023.01 wrote them (tests/fixtures/lava_job_output.yaml has a
    /// whole job): a case's three sightings in the order of that job.
    const THREE_SIGHTINGS: &str = concat!(
        r#"{"dt": "2026-11-25T19:51:19.555621", "lvl": "debug", "msg": "Received signal: <TESTCASE> TEST_CASE_ID=timer_clock-nanosleep_1ms_cpu1_min RESULT=pass UNITS=us MEASUREMENT=65.01"}"#,
        "\n",
        r#"{"dt": "2026-11-25T19:51:19.556115", "lvl": "results", "msg": {"case": "timer_clock-nanosleep_1ms_cpu1_min", "definition": "0_latscope", "endtc": ! "537", "measurement": ! "65.01", "result": "pass", "starttc": ! "537", "units": "us"}}"#,
        "\n",
        r#"{"dt": "2026-11-25T19:51:19.556512", "lvl": "target", "msg": "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=timer_clock-nanosleep_1ms_cpu1_min RESULT=pass UNITS=us MEASUREMENT=65.01>"}"#,
        "\n",
    );

    #[test]
    fn each_sighting_of_lava_run_is_read_with_its_measurement() {
        let log = read_log(THREE_SIGHTINGS);
        let seen: Vec<(Sighting, Option<&str>)> = log
            .cases
            .iter()
            .map(|c| (c.seen, c.measurement.as_deref()))
            .collect();
        assert_eq!(
            seen,
            [
                (Sighting::Signal, Some("65.01")),
                (Sighting::Results, Some("65.01")),
                (Sighting::Echo, Some("65.01")),
            ]
        );
        assert!(log.cases.iter().all(|c| c.result == "pass"
            && c.units.as_deref() == Some("us")
            && c.full_name() == "timer_clock-nanosleep_1ms_cpu1_min"));
        assert_eq!(log.started_at, "2026-11-25T19:51:19Z");
    }

    #[test]
    fn test_sets_are_followed_in_each_kind_of_line() {
        let log = concat!(
            "- {\"dt\": \"2026-03-01T10:00:00\", \"lvl\": \"target\", \"msg\": \"<LAVA_SIGNAL_TESTSET START timer_clock-nanosleep_1ms>\"}\n",
            "- {\"dt\": \"2026-03-01T10:00:01\", \"lvl\": \"target\", \"msg\": \"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=cpu1_max RESULT=pass MEASUREMENT=42.50 UNITS=us>\"}\n",
            "- {\"dt\": \"2026-03-01T10:00:02\", \"lvl\": \"debug\", \"msg\": \"Received signal: <TESTCASE> TEST_CASE_ID=cpu1_max RESULT=pass UNITS=us MEASUREMENT=42.50\"}\n",
            "- {\"dt\": \"2026-03-01T10:00:03\", \"lvl\": \"target\", \"msg\": \"<LAVA_SIGNAL_TESTSET STOP>\"}\n",
            "- {\"dt\": \"2026-03-01T10:00:04\", \"lvl\": \"debug\", \"msg\": \"Received signal: <TESTSET> START timer_clock-nanosleep_1ms\"}\n",
            "- {\"dt\": \"2026-03-01T10:00:05\", \"lvl\": \"results\", \"msg\": {\"case\": \"cpu1_max\", \"definition\": \"0_latscope\", \"measurement\": ! \"42.5\", \"result\": \"pass\", \"set\": \"timer_clock-nanosleep_1ms\", \"units\": \"us\"}}\n",
            "lava-test-set start wake_eventfd\n",
            "lava-test-case cpu0_response_max --result fail --measurement 7 --units us\n",
            "lava-test-set stop\n",
            "lava-test-case latscope-ran --result pass\n",
        );
        let names: Vec<(Sighting, String)> = read_log(log)
            .cases
            .iter()
            .map(|c| (c.seen, c.full_name()))
            .collect();
        let max = "timer_clock-nanosleep_1ms_cpu1_max".to_string();
        assert_eq!(
            names,
            [
                (Sighting::Echo, max.clone()),
                // The signal's set came after it in this log: the debug lines' own order.
                (Sighting::Signal, "cpu1_max".into()),
                (Sighting::Results, max),
                (Sighting::Command, "wake_eventfd_cpu0_response_max".into()),
                (Sighting::Command, "latscope-ran".into()),
            ]
        );
    }

    /// The audit's line: nine levels of nine aliases (9^9 nodes when expanded) is read at
    /// once as plain text; the same line with its anchors alone is read as YAML.
    #[test]
    fn a_line_with_yaml_aliases_is_not_expanded() {
        let mut line = String::from(
            r#"{"dt": "2026-03-01T10:00:00", "lvl": "results", "msg": {"a0": &a0 "x""#,
        );
        for level in 1..10 {
            let refs = vec![format!("*a{}", level - 1); 9].join(", ");
            line.push_str(&format!(", \"a{level}\": &a{level} [{refs}]"));
        }
        line.push_str(r#", "case": "timer_x_cpu0_max", "result": "pass", "measurement": "5"}}"#);
        let start = std::time::Instant::now();
        assert!(without_aliases(&line).is_none());
        let log = read_log(&line);
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        assert!(log.cases.is_empty(), "{:?}", log.cases);
        let anchors_alone = line.replace("*a", "a");
        assert!(without_aliases(&anchors_alone).is_some(), "{anchors_alone}");
    }

    #[test]
    fn the_kernel_is_latscopes_line_else_the_boot_line() {
        let boot = concat!(
            r#"{"dt": "2026-11-24T19:43:36.1", "lvl": "debug", "msg": "Setting prompt string to ['Linux version [0-9]']"}"#,
            "\n",
            r#"{"dt": "2026-11-24T19:43:40.2", "lvl": "target", "msg": "[    0.000000] Linux version 6.1.0-56-rt-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_RT Debian"}"#,
            "\n",
        );
        let log = read_log(boot);
        assert_eq!(
            (log.kernel_release.as_str(), log.preemption_model.as_str()),
            ("6.1.0-56-rt-amd64", "PREEMPT_RT")
        );
        let with_latscope = format!(
            "{boot}{KERNEL_LINE}6.1.0-56-amd64\n{MODEL_LINE}PREEMPT_DYNAMIC (voluntary)\n\
             latscope-limits: pass\nlatscope-preemption: pass\n"
        );
        let log = read_log(&with_latscope);
        assert_eq!(
            (log.kernel_release.as_str(), log.preemption_model.as_str()),
            ("6.1.0-56-amd64", "PREEMPT_DYNAMIC (voluntary)")
        );
    }
}
