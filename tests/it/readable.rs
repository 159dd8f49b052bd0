//! Issue 25 as a person sees it: the headline opens the terminal output, the Markdown and
//! the HTML; terminal tables fit 80 and 200 columns without a wrapped row; the HTML of a
//! run with a far outlier, in headless chromium at 1400 and 420 px, has no horizontal
//! overflow, no chart text under 11 px and the headline as its first text; `--help`
//! headings hold their own options.

use crate::common;
use crate::html_browser::chromium;
use common::{case, fixture};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// run.json's first scenario alone, with one far outlier (8.97 ms) on its CPU 0 beside a
/// body under 1 ms: the moment the issue's review found the pictures failing.
fn outlier_run(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture("run.json")).unwrap();
    let mut run: Value = serde_json::from_str(&text).unwrap();
    let scenarios = run["scenarios"].as_array_mut().unwrap();
    scenarios.truncate(1);
    let th = &mut scenarios[0]["threads"][0];
    th["histogram"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!([8_973_000u64, 1]));
    th["max_ns"] = 8_973_000u64.into();
    th["samples"] = (th["samples"].as_u64().unwrap() + 1).into();
    th["per_second_max_ns"][3] = 8_973_000u64.into();
    run["suite"] = Value::Null;
    let path = dir.join("outlier.json");
    std::fs::write(&path, serde_json::to_string(&run).unwrap()).unwrap();
    path
}

/// `latscope report FILE` as a terminal of `columns` columns would show it.
fn table_at(file: &Path, columns: &str) -> String {
    let out = common::latscope()
        .arg("report")
        .arg(file)
        .env("COLUMNS", columns)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn terminal_opens_with_the_headline_and_fits_80_and_200_columns() {
    let dir = tempfile::tempdir().unwrap();
    let file = outlier_run(dir.path());
    for (columns, width) in [("80", 80), ("200", 200)] {
        let text = table_at(&file, columns);
        let mut lines = text.lines();
        let what = lines.next().unwrap();
        assert!(
            what.starts_with("timer clock-nanosleep 1 ms · FIFO 95 · CPU"),
            "what ran first: {what}"
        );
        assert!(
            what.contains("warm-up") && what.contains("no load"),
            "{what}"
        );
        let worst = lines.next().unwrap();
        assert!(
            worst.starts_with("worst 8.97 ms on CPU 0 (8.97× the 1 ms deadline)"),
            "{worst}"
        );
        for l in text.lines() {
            assert!(
                l.chars().count() <= width,
                "a line wider than {width} columns:\n{l}\n{text}"
            );
        }
        // The method is in the headline, not on every row.
        assert!(!text.contains("│ clock-nanosleep"), "{text}");
        if width == 200 {
            assert!(
                text.contains("stddev") && !text.contains("left out"),
                "{text}"
            );
        } else {
            assert!(text.contains("left out to fit 80 columns"), "{text}");
            assert!(text.contains("max") && text.contains("p99.9"), "{text}");
        }
    }
    // No COLUMNS and not a terminal (a pipe, a log): 80 columns, as a serial console
    // (issue 33); COLUMNS asks for more.
    let out = common::latscope()
        .arg("report")
        .arg(&file)
        .env_remove("COLUMNS")
        .output();
    let text = String::from_utf8(out.unwrap().stdout).unwrap();
    assert!(text.contains("left out to fit 80 columns"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
}

fn markdown_opens_with_the_headline() {
    let dir = tempfile::tempdir().unwrap();
    let file = outlier_run(dir.path());
    let out = common::latscope()
        .arg("report")
        .arg(&file)
        .args(["-f", "markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    let first = md.lines().find(|l| l.starts_with("**")).unwrap();
    assert!(
        first.starts_with("**timer clock-nanosleep 1 ms · FIFO 95"),
        "{md}"
    );
    assert!(md.contains("**worst 8.97 ms on CPU 0"), "{md}");
}

/// Measures the page in the browser: body overflow, the smallest chart text on screen
/// and the first text, written into the DOM for `--dump-dom`.
const PROBE: &str = r#"<script>
addEventListener('load', () => {
  const de = document.documentElement;
  let min = 1e9, minText = '';
  for (const t of document.querySelectorAll('svg text')) {
    if (!t.textContent.trim()) continue;
    const m = t.getScreenCTM();
    const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
    if (px < min) { min = px; minText = t.textContent; }
  }
  const first = document.body.innerText.trim().split('\n')[0];
  // Texts of a category chart (suite, study, wake sweep: labels, legends) drawn over
  // each other.
  let overlaps = 0, overlap = '';
  for (const svg of document.querySelectorAll('section.suite svg, section.study svg, #wake svg')) {
    const boxes = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim())
      .map(t => [t.textContent, t.getBoundingClientRect()]);
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const [a, r] = boxes[i], [b, q] = boxes[j];
      const w = Math.min(r.right, q.right) - Math.max(r.left, q.left);
      const h = Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top);
      if (w > 1 && h > 1) { overlaps++; overlap = a + ' / ' + b; }
    }
  }
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify({overflow: de.scrollWidth - de.clientWidth,
    min_text_px: min, min_text: minText, first: first, overlaps: overlaps,
    overlap: overlap});
  // Measured in a frame of the width asked (pictures::framed_probe).
  parent.document.body.appendChild(parent.document.importNode(out, true));
});
</script>"#;

fn measure(browser: &str, page: &Path, width: u32) -> Value {
    let json = crate::pictures::framed_probe(browser, page, PROBE, width);
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

fn html_with_an_outlier_reads_at_1400_and_420_px() {
    let browser = chromium().expect("checked before");
    let dir = tempfile::tempdir().unwrap();
    let file = outlier_run(dir.path());
    let page = dir.path().join("outlier.html");
    common::latscope()
        .arg("report")
        .arg(&file)
        .args(["-f", "html", "-o"])
        .arg(&page)
        .assert()
        .success();
    let what = table_at(&file, "200").lines().next().unwrap().to_string();
    for width in [1400, 420] {
        let m = measure(browser, &page, width);
        assert!(
            m["overflow"].as_i64().unwrap() <= 0,
            "{width} px: the body overflows: {m}"
        );
        assert!(
            m["min_text_px"].as_f64().unwrap() >= 11.0,
            "{width} px: chart text under 11 px: {m}"
        );
        assert_eq!(
            m["first"].as_str().unwrap(),
            what,
            "{width} px: headline first"
        );
    }
}

fn help_headings_hold_their_own_options() {
    let out = common::latscope().args(["timer", "-h"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let trace = help.find("Why was it late").expect(&help);
    let after = &help[trace..];
    let next = after[1..].find("\n\n").map_or(after.len(), |i| i + 1);
    let section = &after[..next];
    for everyday in ["--cpus", "--priority", "--duration", "--warmup", "--load"] {
        assert!(
            !section.contains(everyday),
            "{everyday} under the trace heading:\n{section}"
        );
        assert!(help.contains(everyday), "{everyday} missing");
    }
    assert!(help.contains("How to measure:") && help.contains("Results and exports:"));
}

/// Issue 25 item 5: `report -h` and `compare -h` list no option of a running measurement
/// (they would do nothing there), and `report -q` says what it does.
fn report_and_compare_help_list_only_their_options() {
    for command in ["report", "compare"] {
        let out = common::latscope().args([command, "-h"]).output().unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        for lacks in [
            "--checkpoint",
            "--resume",
            "--warmup",
            "--isolate",
            "--trace ",
        ] {
            assert!(!help.contains(lacks), "{command} -h lists {lacks}:\n{help}");
        }
        assert!(help.contains("--fail-above"), "{help}");
    }
    let out = common::latscope().args(["report", "-h"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(!help.contains("No progress line"), "{help}");
}

/// Issue 25 item 9: a suite's page (run.json: seven scenarios of two probes) opens with
/// its headline, lists its scenarios in linked contents, and its charts are images with
/// a title, a description and their data in a table, lines told apart by dashes, a dark
/// scheme; at 1400 and 420 px nothing overflows, no chart text is under 11 px and no two
/// chart texts overlap.
fn suite_page_has_contents_accessible_charts_and_fits_420_px() {
    let browser = chromium().expect("checked before");
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("suite.html");
    common::latscope()
        .arg("report")
        .arg(fixture("run.json"))
        .args(["-f", "html", "-o"])
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    let title = &html[html.find("<title>").unwrap()..html.find("</title>").unwrap()];
    assert!(
        title.contains("7 scenarios"),
        "the title names the whole run: {title}"
    );
    assert!(
        html.contains("<nav aria-label=\"Contents\">"),
        "no contents"
    );
    for i in 0..7 {
        let link = format!("<a href=\"#scenario-{i}\">");
        let target = format!("<section id=\"scenario-{i}\">");
        assert!(
            html.contains(&link) && html.contains(&target),
            "scenario {i} unlinked"
        );
    }
    let charts = html.matches("<svg ").count();
    assert!(charts >= 5, "{charts} charts");
    let count = |tag: &str| html.matches(tag).count();
    assert_eq!(
        count("<svg role=\"img\""),
        charts,
        "an SVG without role=img"
    );
    assert_eq!(count("<title>"), charts + 1, "an SVG without <title>");
    assert_eq!(count("<desc>"), charts, "an SVG without <desc>");
    // Each chart drawn twice (screen and phone), its data once per figure.
    assert!(
        html.matches("<summary>The chart's data</summary>").count() + 1
            >= html.matches("<figure>").count()
    );
    assert!(
        html.contains("stroke-dasharray"),
        "lines differ only by colour"
    );
    assert!(html.contains("prefers-color-scheme:dark"), "no dark scheme");
    let what = table_at(&fixture("run.json"), "200")
        .lines()
        .next()
        .unwrap()
        .to_string();
    for width in [1400, 420] {
        let m = measure(browser, &page, width);
        assert!(
            m["overflow"].as_i64().unwrap() <= 0,
            "{width} px overflows: {m}"
        );
        assert!(
            m["min_text_px"].as_f64().unwrap() >= 11.0,
            "{width} px: {m}"
        );
        assert_eq!(
            m["overlaps"].as_i64(),
            Some(0),
            "{width} px: chart texts overlap: {m}"
        );
        assert_eq!(
            m["first"].as_str().unwrap(),
            what,
            "{width} px: headline first"
        );
    }
}

fn no_chromium() -> Option<String> {
    chromium().is_none().then(|| {
        "chromium not installed (apt-get install chromium): HTML not checked in a browser"
            .to_string()
    })
}

/// `latscope timer -a 0 -D 1s --warmup 0 --policy other ARGS`: (stdout, stderr).
fn short_other_run(args: &[&str]) -> (String, String) {
    let out = common::latscope()
        .args([
            "timer", "-a", "0", "-D", "1s", "--warmup", "0", "--policy", "other",
        ])
        .args(args)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(out.status.success(), "{}", text(&out.stderr));
    (text(&out.stdout), text(&out.stderr))
}

/// Finding 8 as a person reads it: the SCHED_OTHER warning first and said in the
/// headline, `note:`s after every `warning:`, RT throttling noted only where a thread
/// spins, and the dma-latency note without the contradiction when the system holds 0 µs
/// (held here by this test through /dev/cpu_dma_latency, released when it closes).
fn warnings_rank_by_what_they_change() {
    use std::io::Write;
    let _lock = common::latency_lock();
    let mut dma = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .expect("/dev/cpu_dma_latency (tests run as root)");
    dma.write_all(&0i32.to_ne_bytes()).unwrap();
    let (stdout, stderr) = short_other_run(&[]);
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.contains("SCHED_OTHER, not real-time"),
        "headline: {stdout}"
    );
    let levels: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.split(':').next())
        .filter(|w| ["warning", "note"].contains(w) || w.starts_with("warning ["))
        .collect();
    assert!(
        stderr
            .lines()
            .next()
            .unwrap_or_default()
            .contains("SCHED_OTHER"),
        "{stderr}"
    );
    let first_note = levels
        .iter()
        .position(|l| *l == "note")
        .unwrap_or(levels.len());
    assert!(
        levels[first_note..].iter().all(|l| *l == "note"),
        "{stderr}"
    );
    assert!(
        stderr
            .contains("note: /dev/cpu_dma_latency left as the system had it (0 µs, as cyclictest")
            && !stderr.contains("compare with --dma-latency 0"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("RT throttling"),
        "a sleeping method: {stderr}"
    );
    drop(dma);
    let throttling = std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").unwrap();
    let (_, busy) = short_other_run(&["--method", "busy"]);
    let noted = busy
        .lines()
        .any(|l| l.starts_with("note: ") && l.contains("RT throttling"));
    assert_eq!(
        noted,
        throttling.trim() != "-1",
        "a spinning method: {busy}"
    );
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    vec![
        case(
            "terminal_opens_with_the_headline_and_fits_80_and_200_columns",
            terminal_opens_with_the_headline_and_fits_80_and_200_columns,
        ),
        case(
            "markdown_opens_with_the_headline",
            markdown_opens_with_the_headline,
        ),
        case(
            "help_headings_hold_their_own_options",
            help_headings_hold_their_own_options,
        ),
        case(
            "report_and_compare_help_list_only_their_options",
            report_and_compare_help_list_only_their_options,
        ),
        case(
            "warnings_rank_by_what_they_change",
            warnings_rank_by_what_they_change,
        ),
        case(
            "html_with_an_outlier_reads_at_1400_and_420_px",
            html_with_an_outlier_reads_at_1400_and_420_px,
        )
        .unless(no_chromium()),
        case(
            "suite_page_has_contents_accessible_charts_and_fits_420_px",
            suite_page_has_contents_accessible_charts_and_fits_420_px,
        )
        .unless(no_chromium()),
    ]
}
