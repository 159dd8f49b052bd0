//! Issue 25's one unit style, as a user reads it: a real run's terminal output, its
//! Markdown and HTML, the `report` of its file with limits and a `compare` of it write
//! every duration as a number, a space and the unit (`300 µs`, `1.5 ms`), never glued
//! (`300us`, `1.00ms`). Left aside: code spans and the recorded command line (input
//! syntax), and the scenarios' names, which are identifiers in the syntax users type
//! (`timer clock-nanosleep 1 ms`, as `--resume` and LAVA's test sets match them).

use crate::common;
use serde_json::Value;
use std::path::Path;

/// A number glued to a duration unit.
const GLUED: &str = r"\d(ns|us|µs|ms|s)\b";

/// What a reader sees of `text` (HTML without tags, code, scripts and styles; Markdown
/// without code spans), with the identifiers and the command line taken out.
fn prose(text: &str, html: bool, identifiers: &[String]) -> String {
    let mut text = text.to_string();
    if html {
        let code =
            regex::Regex::new(r"(?s)<(code|script|style)\b.*?</(code|script|style)>").unwrap();
        text = code.replace_all(&text, " ").into_owned();
        text = regex::Regex::new(r"(?s)<[^>]+>")
            .unwrap()
            .replace_all(&text, " ")
            .replace("&gt;", ">")
            .replace("&lt;", "<")
            .replace("&amp;", "&");
    } else {
        text = regex::Regex::new(r"`[^`\n]*`")
            .unwrap()
            .replace_all(&text, " ")
            .into_owned();
    }
    for id in identifiers {
        text = text.replace(id.as_str(), " ");
    }
    text
}

/// Asserts no glued duration in `text`, naming `what` and the line.
fn assert_spaced(what: &str, text: &str, html: bool, identifiers: &[String]) {
    let glued = regex::Regex::new(GLUED).unwrap();
    let seen = prose(text, html, identifiers);
    let bad: Vec<&str> = seen.lines().filter(|l| glued.is_match(l)).collect();
    assert!(
        bad.is_empty(),
        "{what}: a number glued to its unit in {bad:#?}"
    );
}

/// The command line of a result file (input syntax, as typed).
fn identifiers(json: &Path) -> Vec<String> {
    let run: Value = common::read_result(json).expect("a result");
    vec![run["command_line"].as_str().unwrap_or_default().to_string()]
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn every_printed_duration_is_a_number_a_space_and_the_unit() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let run = common::latscope()
        .args([
            "timer", "-D", "1s", "--warmup", "200ms", "--period", "500us",
        ])
        .args(["--fail-above", "max=100ms", "--export-json"])
        .arg(p("run.json"))
        .arg("--export-html")
        .arg(p("run.html"))
        .arg("--export-markdown")
        .arg(p("run.md"))
        .output()
        .unwrap();
    let run = common::assert_success(run);
    let ids = identifiers(&p("run.json"));
    let json = read(&p("run.json"));
    assert!(
        json.contains("\"name\": \"timer clock-nanosleep 500 µs\""),
        "the name in the printed style: {json}"
    );
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert_spaced("timer's stdout", &text(&run.stdout), false, &ids);
    assert_spaced("timer's stderr", &text(&run.stderr), false, &ids);
    assert_spaced("the HTML", &read(&p("run.html")), true, &ids);
    assert_spaced("the Markdown", &read(&p("run.md")), false, &ids);
    // The user's next commands: report with a limit that fails, compare with itself.
    let report = common::latscope()
        .arg("report")
        .env_remove("COLUMNS")
        .arg(p("run.json"))
        .args(["--fail-above", "p99=1us", "--export-html"])
        .arg(p("report.html"))
        .output()
        .unwrap();
    let stderr = text(&report.stderr);
    assert!(
        stderr.contains("FAIL: ") && stderr.contains(" > 1 µs"),
        "{stderr}"
    );
    assert_spaced("report's stderr", &stderr, false, &ids);
    assert_spaced("report's stdout", &text(&report.stdout), false, &ids);
    assert_spaced("report's HTML", &read(&p("report.html")), true, &ids);
    let compare = common::latscope()
        .arg("compare")
        .env_remove("COLUMNS")
        .args([p("run.json"), p("run.json")])
        .arg("--export-html")
        .arg(p("compare.html"))
        .output()
        .unwrap();
    let compare = common::assert_success(compare);
    assert_spaced("compare's stdout", &text(&compare.stdout), false, &ids);
    assert_spaced("compare's HTML", &read(&p("compare.html")), true, &ids);
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    common::test_cases![every_printed_duration_is_a_number_a_space_and_the_unit]
}
