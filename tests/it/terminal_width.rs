//! Every command's terminal output as a terminal shows it (a real pseudo-terminal through
//! `script`, sized with `stty`): at 80 and 200 columns, and at 0 columns as a serial
//! console reports (then 80), no line of stdout or stderr (tables, headlines, warnings
//! and notes) is wider than the terminal, on the field's recorded runs (issue 33); and a
//! short timer, wake and suite run at 80 and 0 columns, progress line included.

use crate::common;

/// The rows a terminal shows of `pty`'s output: escape sequences taken out, trailing
/// blanks dropped.
fn rows(pty: &str) -> Vec<String> {
    let escape = regex::Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").unwrap();
    pty.split(['\r', '\n'])
        .map(|r| escape.replace_all(r, "").trim_end().to_string())
        .filter(|r| !r.is_empty())
        .collect()
}

/// `latscope ARGS` on a terminal of `columns` columns: both streams, as the user sees them.
fn on_terminal(columns: usize, args: &str) -> Vec<String> {
    let command = format!(
        "stty cols {columns} rows 50; exec {} {args} 2>&1",
        common::latscope_path().display()
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("TERM", "xterm-256color")
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    let pty = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{args}: {pty}");
    rows(&pty)
}

fn every_line_fits_80_200_and_0_columns() {
    let field = |name: &str| {
        common::fixture(&format!("field/{name}"))
            .display()
            .to_string()
    };
    let (spikes, suite) = (field("spikes.json"), field("suite.json"));
    let (idle, loaded) = (field("idle.json"), field("loaded.json"));
    let commands = [
        format!("report {spikes}"),
        format!("report {suite}"),
        format!("report --worst-case {spikes}"),
        format!("compare --ignore load {idle} {loaded}"),
        format!("compare --by date --ignore load {idle} {loaded}"),
        format!("compare {idle} {suite}"),
        "suite --list".to_string(),
    ];
    for args in &commands {
        let mut widest = [0; 3];
        for (i, columns) in [80, 200, 0].into_iter().enumerate() {
            let width = if columns == 0 { 80 } else { columns };
            let lines = on_terminal(columns, args);
            assert!(!lines.is_empty(), "{args}: no output");
            for line in &lines {
                let n = line.chars().count();
                assert!(n <= width, "{columns} columns, {args}: {n} wide: {line:?}");
                widest[i] = widest[i].max(n);
            }
        }
        // 0 columns is read as 80, not as "no limit" or "nothing fits".
        assert!(
            widest[2] <= 80 && widest[2] + 10 >= widest[0].min(80),
            "{args}: {widest:?}"
        );
    }
    // The width is the terminal's: 200 columns show what 80 leave out or split.
    let list = on_terminal(200, "suite --list");
    assert!(list.iter().any(|l| l.chars().count() > 80), "{list:#?}");
}

fn measuring_commands_fit_80_and_0_columns() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        "[[matrix]]\nperiods = [\"1ms\", \"500us\"]\nloads = [\"cpu:50%\"]\n",
    )
    .unwrap();
    let commands = [
        "timer -D 1s --warmup 200ms -a 0-1 --method clock-nanosleep,timerfd".to_string(),
        "wake -D 1s --warmup 200ms".to_string(),
        format!(
            "suite --plan {} -D 1s --warmup 200ms -a 0-1",
            plan.display()
        ),
    ];
    for args in &commands {
        for columns in [80, 0] {
            let lines = on_terminal(columns, args);
            let is_progress = |l: &str| l.starts_with(|c| ('\u{2800}'..='\u{28ff}').contains(&c));
            let shown: Vec<&String> = lines.iter().filter(|l| !is_progress(l)).collect();
            assert!(shown.len() > 3, "{args}: {lines:#?}");
            for line in &lines {
                let n = line.chars().count();
                assert!(n <= 80, "{columns} columns, {args}: {n} wide: {line:?}");
            }
            // A plan without a name: its headline is no ": 2 scenarios".
            assert!(shown.iter().all(|l| !l.starts_with(": ")), "{shown:#?}");
            if args.starts_with("suite") {
                // The loads share the measured CPUs in both scenarios: said once.
                let shared: Vec<_> = shown
                    .iter()
                    .filter(|l| l.contains("every online CPU"))
                    .collect();
                assert_eq!(shared.len(), 1, "{shown:#?}");
                let said = shown
                    .iter()
                    .any(|l| l.starts_with("warning [all 2 scenarios]: "));
                assert!(said, "{shown:#?}");
            }
        }
    }
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    let no_script = || common::missing("script", "bsdutils");
    vec![
        common::case(
            "every_line_fits_80_200_and_0_columns",
            every_line_fits_80_200_and_0_columns,
        )
        .unless(no_script()),
        common::case(
            "measuring_commands_fit_80_and_0_columns",
            measuring_commands_fit_80_and_0_columns,
        )
        .unless(no_script()),
    ]
}
