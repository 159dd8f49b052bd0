//! `latscope suite` beyond the timer: the wake-competitors, rt-cost and irq-response
//! presets run scaled down and print their study tables (layout pinned with insta,
//! numbers redacted); the wake-competitors plan as the kernel runs it; plans with other
//! probes, the command line's --load applied to every scenario; and bad plans refused
//! before anything runs, naming the block and the key.

use crate::common;
use common::*;

/// Runs a suite to a JSON file; returns the result and the Markdown of its study.
fn run_suite(args: &[&str], json: &std::path::Path) -> (serde_json::Value, String) {
    let out = latscope()
        .arg("suite")
        .args(args)
        .arg("--export-json")
        .arg(json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "suite {args:?} failed: {stderr}");
    // The size and estimate come first, before any scenario runs.
    assert!(
        stderr.starts_with("latscope suite: ") && stderr.contains("scenario(s), about"),
        "{stderr}"
    );
    let run = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let md = latscope()
        .arg("report")
        .arg(json)
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    assert!(md.status.success());
    (run, String::from_utf8_lossy(&md.stdout).into_owned())
}

/// The study part of a Markdown report with every number replaced by `N` and what
/// depends on tracing being available here made neutral, so only the layout is pinned.
fn layout(markdown: &str) -> String {
    let start = markdown.find("### ").expect("a study title");
    let end = markdown.find("**Warnings**").unwrap_or(markdown.len());
    markdown[start..end]
        .lines()
        .filter(|l| !l.starts_with("*Note"))
        .map(|l| {
            let l = l
                .replace("timer IRQ (trace)", "[source]")
                .replace("timer latency (no trace)", "[source]")
                .replace("timer IRQ latency", "[timer]")
                .replace("timer latency", "[timer]");
            redact_numbers(&l)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with every number (`12`, `3.45`) replaced by `N`.
fn redact_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars
                .peek()
                .is_some_and(|n| n.is_ascii_digit() || *n == '.')
            {
                chars.next();
            }
            out.push('N');
        } else {
            out.push(c);
        }
    }
    out
}

fn assert_layout(name: &str, markdown: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    let value = layout(markdown);
    settings.bind(|| insta::assert_snapshot!(format!("suite_studies__{name}"), value));
}

fn wake_competitors_preset_prints_its_table() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("wc.json");
    let (run, md) = run_suite(
        &[
            "--preset",
            "wake-competitors",
            "--samples",
            "2",
            "--warmup",
            "0",
        ],
        &json,
    );
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(
        scenarios.len(),
        2 * 7 * 2 * 2,
        "2 mechanisms × 7 counts × 2 policies × 2 placements"
    );
    assert_eq!(run["suite"]["study"], "wake-competitors");
    for s in scenarios {
        assert_eq!(s["probe"], "wake");
        assert_eq!(s["params"]["period_ns"], 16_000_000);
    }
    // Every competitor count has a row in each of the four tables.
    for count in ["0", "1", "2", "4", "8", "16", "32"] {
        let rows = md
            .lines()
            .filter(|l| l.starts_with(&format!("| {count} |")))
            .count();
        assert_eq!(rows, 4, "rows for {count} competitors:\n{md}");
    }
    assert_layout("wake_competitors", &md);
}

fn rt_cost_preset_prints_its_table() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("rt.json");
    let html = dir.path().join("rt.html");
    let (run, md) = run_suite(
        &[
            "--preset",
            "rt-cost",
            "--samples",
            "200",
            "--warmup",
            "0",
            "--export-html",
            html.to_str().unwrap(),
        ],
        &json,
    );
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 3 + 3, "3 sizes + timer idle, net, io");
    for size in ["56", "4000", "8192"] {
        assert!(
            md.contains(&format!("UDP round trip {size} B (flood)")),
            "{md}"
        );
    }
    // The loads' throughput beside the latency, in their units.
    for load in ["net", "io"] {
        let row = md
            .lines()
            .find(|l| l.contains(&format!("under {load} |")))
            .unwrap_or_else(|| panic!("no row under {load}:\n{md}"));
        assert!(
            row.contains(&format!("{load} ")) && row.contains("MB/s"),
            "{row}"
        );
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("latency per item") && page.contains("<svg"),
        "html"
    );
    assert_layout("rt_cost", &md);
}

fn irq_response_preset_prints_its_table() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("irq.json");
    let (run, md) = run_suite(
        &[
            "--preset",
            "irq-response",
            "--samples",
            "200",
            "--warmup",
            "0",
        ],
        &json,
    );
    let scenarios = run["scenarios"].as_array().unwrap();
    assert!(
        scenarios.len() >= 3,
        "idle, net, io (and serial once merged)"
    );
    for load in ["none (idle)", "net", "io", "serial:115200"] {
        assert!(
            md.lines().any(|l| l.starts_with(&format!("| {load} |"))),
            "no row for {load}:\n{md}"
        );
    }
    assert_layout("irq_response", &md);
}

/// The thread wake-up study's plan at a modest scale (16 competitors, the waker on another
/// CPU), watched in /proc while it runs: each scenario's wakee runs under its policy on its
/// CPU, with 16 SCHED_OTHER competitors pinned beside it, and the study table shows each
/// scenario's median. How far RR then beats OTHER is the scheduler's doing: printed, not
/// judged.
fn wake_competitors_study_runs_its_plan() {
    use common::sched_seen::{sched_of, watch_threads, SCHED_OTHER, SCHED_RR};
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("finding.toml");
    std::fs::write(
        &plan,
        "study = \"wake-competitors\"\ncolumns = [\"p50\", \"p99\", \"max\"]\nduration = \"1s\"\n\n\
         [[matrix]]\nprobe = \"wake\"\nmechanisms = [\"pipe\"]\ncompetitors = [16]\n\
         placements = [\"other-cpu\"]\npolicies = [\"rr:1\", \"other\"]\nintervals = [\"1ms\"]\n",
    )
    .unwrap();
    let json = dir.path().join("finding.json");
    let child = latscope_command()
        .args([
            "suite",
            "--plan",
            plan.to_str().unwrap(),
            "--warmup",
            "0.3s",
        ])
        .arg("--export-json")
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (seen, out) = watch_threads(child);
    assert_success(out);
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let response = |policy: &str| {
        let s = run["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["params"]["policy"] == policy)
            .unwrap_or_else(|| panic!("no {policy} scenario"));
        s["threads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["metric"] == "response")
            .unwrap()
            .clone()
    };
    let (rr, other) = (response("rr"), response("other"));
    let cpu = rr["cpu"].as_u64().unwrap();
    assert_eq!(other["cpu"].as_u64(), Some(cpu), "one wakee CPU");
    let (wakee, _) = sched_of(&seen, &format!("latscope-cpu{cpu}"));
    assert_eq!(
        wakee,
        [
            (SCHED_RR, 1, cpu.to_string()),
            (SCHED_OTHER, 0, cpu.to_string())
        ],
        "the wakee as rr:1, then as other, on its CPU"
    );
    let (competitors, most) = sched_of(&seen, "latscope-compet*");
    assert_eq!(most, 16, "16 competitors at once");
    assert_eq!(competitors, [(SCHED_OTHER, 0, cpu.to_string())]);
    assert_study_p50s(&json, &rr, &other);
}

/// The wake-competitors study table of `json` shows each policy's p50 (to the 10 ns of its
/// two decimals in µs) in the row of 16 competitors.
fn assert_study_p50s(json: &std::path::Path, rr: &serde_json::Value, other: &serde_json::Value) {
    let md = latscope()
        .arg("report")
        .arg(json)
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&assert_success(md).stdout).into_owned();
    let row = md
        .lines()
        .find(|l| l.starts_with("| 16 |"))
        .unwrap_or_else(|| panic!("no row for 16 competitors:\n{md}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let (rr_p50, other_p50) = (
        rr["p50_ns"].as_u64().unwrap(),
        other["p50_ns"].as_u64().unwrap(),
    );
    eprintln!(
        "16 competitors, waker on another CPU: rr1 p50 {rr_p50} ns, other p50 {other_p50} ns\n{md}"
    );
    for (cell, ns) in [(cells[2], rr_p50), (cells[5], other_p50)] {
        let us: f64 = cell.parse().unwrap_or_else(|_| panic!("{cell:?} in {row}"));
        assert!(
            (us * 1000.0 - ns as f64).abs() <= 5.5,
            "the table's p50 {cell} µs is not the run's {ns} ns: {row}"
        );
    }
}

fn other_probes_and_command_line_loads_run_in_one_suite() {
    let _lock = common::latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("mixed.toml");
    std::fs::write(
        &plan,
        "samples = 50\n\n[[matrix]]\nprobe = \"timer\"\npolicies = [\"other\"]\n\n\
         [[matrix]]\nprobe = \"net\"\nsizes = [56, \"1K\"]\nintervals = [\"flood\"]\npolicies = [\"other\"]\n\n\
         [[matrix]]\nprobe = \"noise\"\nthresholds = [\"1us\", \"5us\"]\npolicies = [\"other\"]\n",
    )
    .unwrap();
    let json = dir.path().join("mixed.json");
    let (run, md) = run_suite(
        &[
            "--plan",
            plan.to_str().unwrap(),
            "--warmup",
            "0",
            "--load",
            "cpu:10%",
        ],
        &json,
    );
    let scenarios = run["scenarios"].as_array().unwrap();
    let probes: Vec<&str> = scenarios
        .iter()
        .map(|s| s["probe"].as_str().unwrap())
        .collect();
    assert_eq!(probes, ["timer", "net", "net", "noise", "noise"]);
    for s in scenarios {
        assert_eq!(
            s["params"]["loads"],
            serde_json::json!(["cpu:10%"]),
            "{}",
            s["name"]
        );
        assert_eq!(s["loads"].as_array().unwrap().len(), 1, "{}", s["name"]);
    }
    let names: std::collections::BTreeSet<&str> = scenarios
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), scenarios.len(), "unique names: {names:?}");
    assert!(
        md.contains("56 B flood") && md.contains("threshold 5 µs"),
        "{md}"
    );
}

/// Runs `suite --plan` on `text`; returns the exit code, stderr and the time it took.
fn refused(text: &str, extra: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("bad.toml");
    std::fs::write(&plan, text).unwrap();
    let json = dir.path().join("run.json");
    let out = latscope()
        .args(["suite", "--plan"])
        .arg(&plan)
        .args(extra)
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap();
    // A result is written after every scenario: none, so nothing ran.
    assert!(!json.exists(), "a scenario ran");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn bad_plans_are_refused_naming_block_and_key() {
    let ok = "duration = \"30s\"\n\n[[matrix]]\nprobe = \"timer\"\npolicies = [\"other\"]\n\n";
    for (second, key, needle) in [
        (
            "[[matrix]]\nprobe = \"disk\"\n",
            "probe",
            "choose from timer, wake, net, noise",
        ),
        (
            "[[matrix]]\nprobe = \"timer\"\nmechanisms = [\"pipe\"]\n",
            "mechanisms",
            "no `mechanisms` axis",
        ),
        (
            "[[matrix]]\nprobe = \"net\"\nthresholds = [\"1us\"]\n",
            "thresholds",
            "belongs to noise",
        ),
        (
            "[[matrix]]\nprobe = \"wake\"\nplacements = [\"beside\"]\n",
            "placements",
            "same-cpu or other-cpu",
        ),
        (
            "[[matrix]]\nprobe = \"net\"\ntrace = true\n",
            "trace",
            "no --trace",
        ),
        (
            "[[matrix]]\nprobe = \"wake\"\ncompetitors = [5000]\n",
            "competitors",
            "0 to 1024",
        ),
        (
            "[[matrix]]\nprobe = \"timer\"\nloads = [\"none\", \"serial:9600,dev=/dev/latscope-no-such-tty\"]\n",
            "loads",
            "/dev/latscope-no-such-tty",
        ),
    ] {
        let (code, err) = refused(&format!("{ok}{second}"), &[]);
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("bad.toml, [[matrix]] block 2, ") && err.contains(key),
            "the error should name block 2 and `{key}`: {err}"
        );
        assert!(err.contains(needle), "{err}");
    }
}

fn huge_matrices_are_counted_and_refused_unbuilt() {
    // 1000 periods × 1000 loads × 1000 policies = 10^9 scenarios, far more than memory
    // could hold: refused at all, it was refused from the count, not built.
    let list = |f: &dyn Fn(usize) -> String| (0..1000).map(f).collect::<Vec<_>>().join(",");
    let text = format!(
        "samples = 10\n\n[[matrix]]\nperiods = [{}]\nloads = [{}]\npolicies = [{}]\n",
        list(&|i| format!("\"{}us\"", 100 + i)),
        list(&|i| format!("\"cpu:{}%\"", 1 + i % 100)),
        list(&|i| format!("\"fifo:{}\"", 1 + i % 99)),
    );
    let (code, err) = refused(&text, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("1000000000 scenarios") && err.contains("--yes"),
        "{err}"
    );
    // Just over the bound: 10 001 scenarios need --yes too.
    let periods: Vec<String> = (0..10_001).map(|i| format!("\"{}us\"", 100 + i)).collect();
    let text = format!(
        "samples = 10\n\n[[matrix]]\nperiods = [{}]\n",
        periods.join(",")
    );
    let (code, err) = refused(&text, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("10001 scenarios") && err.contains("--yes"),
        "{err}"
    );
}

fn list_shows_every_preset_with_its_runtime() {
    let out = latscope().args(["suite", "--list"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for preset in [
        "memory-load",
        "wake-methods",
        "wake-competitors",
        "rt-cost",
        "irq-response",
        "quick",
    ] {
        assert!(
            text.lines()
                .any(|l| l.contains(preset) && l.contains(" min")
                    || l.contains(preset) && l.contains(" s ")
                    || l.contains(preset) && l.contains(" h ")),
            "{preset}:\n{text}"
        );
    }
    assert!(text.contains("--samples 1000"), "{text}");
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    let mut cases = common::test_cases![
        wake_competitors_preset_prints_its_table,
        rt_cost_preset_prints_its_table,
        irq_response_preset_prints_its_table,
        other_probes_and_command_line_loads_run_in_one_suite,
        bad_plans_are_refused_naming_block_and_key,
        huge_matrices_are_counted_and_refused_unbuilt,
        list_shows_every_preset_with_its_runtime
    ];
    let one_cpu = (std::thread::available_parallelism().map_or(1, |n| n.get()) < 2)
        .then(|| "needs two online CPUs (waker and wakee apart)".to_string());
    cases.push(
        common::case(
            "wake_competitors_study_runs_its_plan",
            wake_competitors_study_runs_its_plan,
        )
        .unless(one_cpu),
    );
    cases
}
