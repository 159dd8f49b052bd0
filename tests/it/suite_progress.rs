//! A suite's live progress line as a terminal shows it (a real pseudo-terminal through
//! `script`, its size set with `stty`): at 80 and 200 columns every redraw of the line
//! fits the width (a wrapped line leaves its second row behind at the next redraw) and
//! says the time left, the suite's (`[1/2, ~2 s after this]`) and the scenario's
//! (`38% 1 s left`); the warm-up shows no counts, and at 80 columns a CPU's part (the
//! worst first) stays whole.

use crate::common;

/// The rows a terminal shows of `pty`'s output: split at carriage returns and newlines,
/// escape sequences taken out, trailing blanks dropped.
fn rows(pty: &str) -> Vec<String> {
    let escape = regex::Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").unwrap();
    pty.split(['\r', '\n'])
        .map(|r| escape.replace_all(r, "").trim_end().to_string())
        .filter(|r| !r.is_empty())
        .collect()
}

/// Whether a row is a redraw of the progress line (it opens with indicatif's spinner).
fn is_progress(row: &str) -> bool {
    row.chars()
        .next()
        .is_some_and(|c| ('\u{2800}'..='\u{28ff}').contains(&c))
}

fn suite_progress_shows_the_time_left_and_fits_80_and_200_columns() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    // Two tiny scenarios whose names and two CPUs make the line longer than 80 columns.
    std::fs::write(
        &plan,
        "[[matrix]]\nperiods = [\"1ms\", \"500us\"]\nloads = [\"cpu:50%\"]\n",
    )
    .unwrap();
    let left = regex::Regex::new(r" \d+% \d+ s left").unwrap();
    let cpu_part = regex::Regex::new(r"\| cpu\d: (max|\d+ max) \d").unwrap();
    for columns in [80, 200] {
        let json = dir.path().join(format!("run{columns}.json"));
        let command = format!(
            "stty cols {columns} rows 24; exec {} suite --plan {} -D 1s --warmup 300ms -a 0-1 \
             --export-json {} >/dev/null",
            common::latscope_path().display(),
            plan.display(),
            json.display()
        );
        let out = std::process::Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .env("TERM", "xterm-256color")
            .env_remove("COLUMNS")
            .output()
            .unwrap();
        let pty = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{pty}");
        let run = common::read_result(&json).expect("the suite's result");
        assert_eq!(run["scenarios"].as_array().unwrap().len(), 2, "{pty}");
        let progress: Vec<String> = rows(&pty).into_iter().filter(|r| is_progress(r)).collect();
        assert!(progress.len() >= 4, "redraws of the progress line:\n{pty}");
        for row in &progress {
            let width = row.chars().count();
            assert!(width <= columns, "{columns} columns: {width} wide: {row:?}");
        }
        assert!(
            progress
                .iter()
                .any(|r| r.contains("[1/2, ~") && r.contains(" after this]")),
            "the suite's time left: {progress:#?}"
        );
        assert!(
            progress.iter().any(|r| left.is_match(r)),
            "the scenario's time left: {progress:#?}"
        );
        // The first redraw comes within the 300 ms warm-up: labelled, not counted.
        assert!(
            progress
                .iter()
                .any(|r| r.contains(" warm-up (1 s left, not recorded)")),
            "the warm-up labelled: {progress:#?}"
        );
        // The warm-up's counts are never shown as measured (they were: "cpu1: 1962/1000").
        for row in progress.iter().filter(|r| r.contains("warm-up")) {
            assert!(!row.contains("| cpu"), "warm-up counts shown: {row:?}");
        }
        // At 80 columns too, a CPU's measured part (the worst one first) fits whole.
        assert!(
            progress.iter().any(|r| cpu_part.is_match(r)),
            "{columns} columns: no CPU's part: {progress:#?}"
        );
        if columns == 200 {
            assert!(
                progress.iter().any(|r| r.contains("| cpu1: ")),
                "at 200 columns the whole line: {progress:#?}"
            );
        }
    }
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    vec![common::case(
        "suite_progress_shows_the_time_left_and_fits_80_and_200_columns",
        suite_progress_shows_the_time_left_and_fits_80_and_200_columns,
    )
    .unless(common::missing("script", "bsdutils"))]
}
