//! CI verdicts: `--fail-above` on a real short run (exit 3 with a FAIL line naming the
//! scenario, CPU and statistic; 0 with a generous limit), on `report`, and `compare`
//! verdicts (regressed / improved / unchanged) on the fixtures with the default and
//! custom rules.

use crate::common;

use common::{fixture, latency_lock, latscope, usable_cpu};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn fail_above_fails_a_real_run_with_exit_3_and_a_verdict_line() {
    let _lock = latency_lock();
    let cpu = usable_cpu().to_string();
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    let out = latscope()
        .args([
            "timer",
            "-D",
            "1s",
            "--warmup",
            "0",
            "--cpus",
            &cpu,
            "--fail-above",
            "max=1ns",
            "-q",
        ])
        .arg("--export-junit")
        .arg(&junit)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let line = err.lines().find(|l| l.starts_with("FAIL: ")).expect(&err);
    assert!(
        line.starts_with("FAIL: timer clock-nanosleep")
            && line.contains(&format!(" cpu{cpu} max "))
            && line.ends_with("> 1 ns"),
        "{line}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<failure"),
        "the JUnit export marks the failure"
    );
}

fn fail_above_passes_a_real_run_with_a_generous_limit() {
    let _lock = latency_lock();
    let cpu = usable_cpu().to_string();
    let out = latscope()
        .args([
            "timer",
            "-D",
            "1s",
            "--warmup",
            "0",
            "--cpus",
            &cpu,
            "--fail-above",
            "max=10s,p99=5s",
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("PASS"), "{err}");
    assert!(!err.contains("FAIL"), "{err}");
}

fn fail_above_rejects_bad_limits_before_measuring() {
    for (limits, reason) in [
        ("p99=50", "no unit"),
        ("p42=1us", "unknown statistic"),
        ("max", "STAT=VALUE"),
    ] {
        let out = latscope()
            .args(["timer", "-D", "1s", "--fail-above", limits])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(reason), "{}", stderr(&out));
    }
}

fn exports_are_checked_for_writability_before_measuring() {
    let start = std::time::Instant::now();
    let out = latscope()
        .args([
            "timer",
            "-D",
            "5s",
            "--export-html",
            "/nonexistent/dir/r.html",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--export-html"), "{}", stderr(&out));
    assert!(start.elapsed().as_secs() < 3, "refused before measuring");
}

fn report_judges_a_saved_run() {
    let out = latscope()
        .args([
            "report",
            fixture("run.json").to_str().unwrap(),
            "-q",
            "--fail-above",
            "max=750us",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let fails: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("FAIL: "))
        .map(String::from)
        .collect();
    assert_eq!(
        fails,
        [
            "FAIL: timer clock-nanosleep 500 µs cpu0 max 800 µs > 750 µs",
            "FAIL: timer clock-nanosleep 500 µs load=memory:cpus=0 cpu0 max 800 µs > 750 µs"
        ]
    );
}

fn compare(files: &[&str], extra: &[&str]) -> (i32, String, String) {
    let mut cmd = latscope();
    cmd.arg("compare");
    for f in files {
        cmd.arg(fixture(f));
    }
    let out = cmd.args(extra).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr(&out),
    )
}

fn verdicts(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| {
            l.starts_with("REGRESSED:") || l.starts_with("improved:") || l.starts_with("unchanged:")
        })
        .collect()
}

fn compare_finds_regressions_improvements_and_no_change() {
    let (code, out, _) = compare(&["run.json", "run_regressed.json"], &[]);
    assert_eq!(
        code, 0,
        "without --fail-on-regression a regression is reported, not failed"
    );
    let v = verdicts(&out);
    assert_eq!(v.len(), 11, "{out}");
    assert!(v.iter().all(|l| l.starts_with("REGRESSED:")), "{out}");
    // The max's interval (37 µs to its 700 µs) cannot tell 700 µs from 1.05 ms: both said.
    assert!(out.contains("REGRESSED: timer clock-nanosleep 1 ms cpu0 in run_regressed.json (p99.9 +16 µs (×1.50), undecidable: max 700 µs → 1.05 ms (×1.50; 95 % intervals 37 µs–700 µs and 55.5 µs–1.05 ms))"), "{out}");

    let (_, out, _) = compare(&["run.json", "run_improved.json"], &[]);
    assert!(
        verdicts(&out).iter().all(|l| l.starts_with("improved:")),
        "{out}"
    );

    let (_, out, _) = compare(&["run.json", "run_unchanged.json"], &[]);
    assert!(
        verdicts(&out).iter().all(|l| l.starts_with("unchanged:")),
        "{out}"
    );

    // The table shows value, change and ratio against the baseline.
    let (_, out, _) = compare(&["run.json", "run_regressed.json"], &[]);
    assert!(
        out.contains("change") && out.contains("ratio") && out.contains("×1.50"),
        "{out}"
    );
    let (_, out, _) = compare(&["run.json", "run_improved.json"], &[]);
    assert!(out.contains("×0.60"), "{out}");
    // Three files: one table with a column per file, verdicts against the first.
    let (_, out, _) = compare(
        &["run.json", "run_regressed.json", "run_improved.json"],
        &[],
    );
    assert!(out.contains("\n3 results by file"), "{out}");
    assert!(
        out.contains("┆ run.json ┆ run_regressed.json ┆ run_improved.json │"),
        "{out}"
    );
}

fn compare_fails_on_regression_only_when_asked() {
    let (code, _, err) = compare(
        &["run.json", "run_regressed.json"],
        &["--fail-on-regression"],
    );
    assert_eq!(code, 3);
    // Each regressed scenario named, one FAIL line each (issue 33).
    assert_eq!(err.matches("FAIL: ").count(), 11, "{err}");
    assert!(
        err.contains("FAIL: timer clock-nanosleep 1 ms cpu0 regressed in run_regressed.json (rule p99.9,max:10%:5µs)"),
        "{err}"
    );
    let (code, _, _) = compare(
        &["run.json", "run_improved.json"],
        &["--fail-on-regression"],
    );
    assert_eq!(code, 0);
}

fn compare_rules_are_configurable() {
    // 50 % worse is within a 60 % rule.
    let (code, out, _) = compare(
        &["run.json", "run_regressed.json"],
        &["--rule", "p99.9,max:60%:1us", "--fail-on-regression"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(verdicts(&out).iter().all(|l| l.starts_with("unchanged:")));
    // ...and the absolute part must also be exceeded: p99 grows by 10-24 µs.
    let (_, out, _) = compare(
        &["run.json", "run_regressed.json"],
        &["--rule", "p99:10%:20us"],
    );
    let v = verdicts(&out);
    assert!(
        v.iter().any(|l| l.starts_with("REGRESSED:"))
            && v.iter().any(|l| l.starts_with("unchanged:")),
        "{out}"
    );
    let (code, _, err) = compare(&["run.json", "run_regressed.json"], &["--rule", "max:10"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--rule") && err.contains("percentage"),
        "{err}"
    );
}

fn compare_applies_fail_above_to_the_compared_runs() {
    let (code, _, err) = compare(
        &["run.json", "run_improved.json"],
        &["-q", "--fail-above", "max=450us"],
    );
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains(
            "FAIL: run_improved.json: timer clock-nanosleep 500 µs cpu0 max 480 µs > 450 µs"
        ),
        "{err}"
    );
    assert!(
        !err.contains("run.json:"),
        "the baseline is not judged: {err}"
    );
}

fn compare_exports_html_markdown_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("c.html");
    let md = dir.path().join("c.md");
    let csv = dir.path().join("c.csv");
    let (code, _, err) = compare(
        &["run.json", "run_regressed.json"],
        &[
            "-q",
            "--export-html",
            html.to_str().unwrap(),
            "--export-markdown",
            md.to_str().unwrap(),
            "--export-csv",
            csv.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(html).unwrap();
    assert!(html.contains("histograms overlaid") && html.contains("run_regressed.json"));
    assert!(std::fs::read_to_string(md)
        .unwrap()
        .contains("### Verdicts"));
    assert!(std::fs::read_to_string(csv)
        .unwrap()
        .lines()
        .any(|l| l.ends_with(",regressed")));
    let (code, _, err) = compare(
        &["run.json", "run_regressed.json"],
        &["--export-junit", "x.xml"],
    );
    // compare offers no JUnit export (`compare --help` does not list it): clap refuses it.
    assert_eq!(code, 2);
    assert!(err.contains("--export-junit"), "{err}");
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    common::test_cases![
        fail_above_fails_a_real_run_with_exit_3_and_a_verdict_line,
        fail_above_passes_a_real_run_with_a_generous_limit,
        fail_above_rejects_bad_limits_before_measuring,
        exports_are_checked_for_writability_before_measuring,
        report_judges_a_saved_run,
        compare_finds_regressions_improvements_and_no_change,
        compare_fails_on_regression_only_when_asked,
        compare_rules_are_configurable,
        compare_applies_fail_above_to_the_compared_runs,
        compare_exports_html_markdown_and_csv
    ]
}
