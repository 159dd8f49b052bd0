//! Issue 33's pictures as a person sees them, in headless chromium at 1400 and 420 px, on
//! the field fixtures recorded on this machine (tests/fixtures/field/record.sh): the timer
//! run with 13 spikes of up to 14.5 ms, the 27-scenario memory-load suite with its 3 s
//! stall, the idle and loaded runs compared, and the three timer runs by date. In every
//! chart shown no two texts overlap and none is cut off; the body of the distribution (the
//! worst CPU's p50 to p99, read off the body chart's own tick labels) spans a third of its
//! plot at least; each chart's max is written where it can be read; the page never scrolls
//! sideways; at 420 px the summary cells p99 and max lie on the screen.

use crate::common;
use crate::html_browser::{chromium, chromium_cmd};
use common::{case, fixture};
use serde_json::Value;
use std::path::Path;

/// Measures every visible chart and the summary cells, written into the DOM for
/// `--dump-dom`. A chart is an `<svg>` with a non-empty box (the page shows each chart's
/// wide or narrow drawing, never both).
const PROBE: &str = r#"<script>
addEventListener('load', () => {
  const W = document.documentElement.clientWidth;
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const out = {overflow: document.documentElement.scrollWidth - W, width: W, charts: 0,
    overlaps: [], clipped: [], bodies: [], texts: [], cells: []};
  for (const svg of document.querySelectorAll('svg')) {
    if (!shown(svg)) continue;
    out.charts++;
    const s = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim() && shown(t))
      .map(t => ({text: t.textContent.trim(), cls: t.getAttribute('class') || '',
                  r: t.getBoundingClientRect()}));
    for (let i = 0; i < texts.length; i++) {
      const a = texts[i];
      out.texts.push({text: a.text, cls: a.cls, left: a.r.left, right: a.r.right});
      if (a.r.left < Math.max(s.left, 0) - 1 || a.r.right > Math.min(s.right, W) + 1)
        out.clipped.push(a.text);
      for (let j = i + 1; j < texts.length; j++) {
        const b = texts[j];
        const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
        const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
        if (w > 1 && h > 1) out.overlaps.push(a.text + ' / ' + b.text);
      }
    }
    const title = texts.filter(t => t.cls == 'title').map(t => t.text).join(' ');
    if (!title.includes('body of the distribution')) continue;
    // The body's x axis is the first; its tick labels sit just under it.
    const axis = svg.querySelector('line.x-axis').getBoundingClientRect();
    const ticks = texts.filter(t => t.cls == 'tick-x' && Math.abs(t.r.top - axis.bottom) < 30)
      .map(t => [parseFloat(t.text), (t.r.left + t.r.right) / 2]).filter(t => !isNaN(t[0]));
    out.bodies.push({title: title, left: axis.left, right: axis.right, ticks: ticks});
  }
  for (const td of document.querySelectorAll('td[data-label]')) {
    if (!shown(td)) continue;
    const r = td.getBoundingClientRect();
    out.cells.push({label: td.dataset.label, text: td.textContent, left: r.left, right: r.right});
  }
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  // Measured in a frame of the width asked (see `measure`): the answer goes to the page.
  parent.document.body.appendChild(parent.document.importNode(pre, true));
});
</script>"#;

/// The page measured `width` px wide.
fn measure(browser: &str, page: &Path, width: u32) -> Value {
    let json = framed_probe(browser, page, PROBE, width);
    let m: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let seen = m["width"].as_f64().unwrap();
    assert!(
        seen <= f64::from(width) && seen >= f64::from(width) - 20.0,
        "measured {seen} px wide, not {width}"
    );
    m
}

/// What `probe` (a script putting a `<pre id="probe">` of JSON into its parent page) found
/// on `page` shown `width` px wide: in a frame that wide, as headless chromium never makes
/// its window narrower than 500 px (a 420 px window measured 500).
pub(crate) fn framed_probe(browser: &str, page: &Path, probe: &str, width: u32) -> String {
    let dir = tempfile::tempdir().unwrap();
    let html = std::fs::read_to_string(page).unwrap();
    let probed = dir.path().join("probed.html");
    std::fs::write(&probed, html.replace("</body>", &format!("{probe}</body>"))).unwrap();
    let framed = dir.path().join("framed.html");
    let frame = format!(
        "<!doctype html><body style=\"margin:0\"><iframe src=\"probed.html\" \
         style=\"border:0;width:{width}px;height:1000px\"></iframe></body>"
    );
    std::fs::write(&framed, frame).unwrap();
    let out = chromium_cmd(browser, &dir.path().join("profile"))
        .arg(format!("--window-size={},1000", width.max(500) + 40))
        .arg("--allow-file-access-from-files")
        .arg("--dump-dom")
        .arg(format!("file://{}", framed.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom.find("<pre id=\"probe\">").expect("the probe ran") + 16;
    let end = start + dom[start..].find("</pre>").unwrap();
    dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// `latscope ARGS -o DIR/NAME` (or `--export-html` for compare): the page's path.
fn page(dir: &Path, name: &str, args: &[&str]) -> std::path::PathBuf {
    let path = dir.join(name);
    let mut cmd = common::latscope();
    cmd.args(args);
    if args[0] == "compare" {
        cmd.arg("--export-html");
    } else {
        cmd.args(["-f", "html", "-o"]);
    }
    cmd.arg(&path).arg("-q").assert().success();
    path
}

fn field(name: &str) -> String {
    fixture(&format!("field/{name}")).display().to_string()
}

/// The texts every page must show alike at each width: nothing overlaps, nothing is cut
/// off, the page does not scroll sideways.
fn check_common(m: &Value, what: &str) {
    assert!(
        m["charts"].as_u64().unwrap() >= 2,
        "{what}: charts shown: {m}"
    );
    assert!(
        m["overflow"].as_i64().unwrap() <= 0,
        "{what}: scrolls sideways by {}",
        m["overflow"]
    );
    assert_eq!(
        m["overlaps"].as_array().unwrap().len(),
        0,
        "{what}: texts overlap: {}",
        m["overlaps"]
    );
    assert_eq!(
        m["clipped"].as_array().unwrap().len(),
        0,
        "{what}: texts cut off: {}",
        m["clipped"]
    );
}

/// A text of a chart containing `needle`, on the screen.
fn text_shown(m: &Value, needle: &str) -> bool {
    shown_where(m, |t| t.contains(needle))
}

/// A text of a chart for which `pick` holds, on the screen.
fn shown_where(m: &Value, pick: impl Fn(&str) -> bool) -> bool {
    let width = m["width"].as_f64().unwrap();
    m["texts"].as_array().unwrap().iter().any(|t| {
        pick(t["text"].as_str().unwrap())
            && t["left"].as_f64().unwrap() >= 0.0
            && t["right"].as_f64().unwrap() <= width
    })
}

/// The share of the body chart's plot that `p50` to `p99` (µs) take, read off its tick
/// labels (a least-squares line through their values and centres).
fn body_share(body: &Value, p50: f64, p99: f64) -> f64 {
    let ticks: Vec<(f64, f64)> = body["ticks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t[0].as_f64().unwrap(), t[1].as_f64().unwrap()))
        .collect();
    assert!(ticks.len() >= 3, "too few tick labels: {body}");
    let n = ticks.len() as f64;
    let (mx, my) = (
        ticks.iter().map(|t| t.0).sum::<f64>() / n,
        ticks.iter().map(|t| t.1).sum::<f64>() / n,
    );
    let slope = ticks.iter().map(|t| (t.0 - mx) * (t.1 - my)).sum::<f64>()
        / ticks.iter().map(|t| (t.0 - mx).powi(2)).sum::<f64>();
    let width = body["right"].as_f64().unwrap() - body["left"].as_f64().unwrap();
    slope * (p99 - p50) / width
}

/// The worst thread's (largest p99) p50 and p99 in µs, and every thread's max as written.
fn worst(run: &Value) -> (f64, f64, Vec<u64>) {
    let threads: Vec<&Value> = run["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["threads"].as_array().unwrap())
        .collect();
    let w = threads
        .iter()
        .max_by_key(|t| t["p99_ns"].as_u64().unwrap())
        .unwrap();
    let us = |k: &str| w[k].as_f64().unwrap() / 1e3;
    let maxes = threads
        .iter()
        .map(|t| t["max_ns"].as_u64().unwrap())
        .collect();
    (us("p50_ns"), us("p99_ns"), maxes)
}

fn load(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `human_ns` as the pages write it ("14.51 ms").
fn human(ns: u64) -> String {
    latscope::units::human_ns(ns)
}

fn spikes_page_reads_at_1400_and_420_px() {
    let browser = chromium().expect("checked before");
    let dir = tempfile::tempdir().unwrap();
    let file = field("spikes.json");
    let html = page(dir.path(), "spikes.html", &["report", &file]);
    let (p50, p99, maxes) = worst(&load(&file));
    for width in [1400, 420] {
        let m = measure(browser, &html, width);
        let what = format!("spikes.json at {width} px");
        check_common(&m, &what);
        let bodies = m["bodies"].as_array().unwrap();
        assert_eq!(bodies.len(), 1, "{what}: one body chart shown: {m}");
        let share = body_share(&bodies[0], p50, p99);
        assert!(
            share >= 1.0 / 3.0,
            "{what}: p50 {p50} to p99 {p99} µs takes {share:.2} of the body"
        );
        for &max in &maxes {
            let text = format!("max {}", human(max));
            assert!(text_shown(&m, &text), "{what}: {text:?} not on the screen");
            assert!(
                text_shown(&m, &human(max)),
                "{what}: {} not in the tail strip",
                human(max)
            );
        }
        summary_cells_on_screen(&m, &what, &["p99 (µs)", "max (µs)", "missed"]);
    }
}

/// At every width, the cells labelled `labels` are shown and lie on the screen.
fn summary_cells_on_screen(m: &Value, what: &str, labels: &[&str]) {
    let width = m["width"].as_f64().unwrap();
    for label in labels {
        let cells: Vec<&Value> = m["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["label"] == *label)
            .collect();
        assert!(!cells.is_empty(), "{what}: no {label} cell shown");
        for c in cells {
            let (l, r) = (c["left"].as_f64().unwrap(), c["right"].as_f64().unwrap());
            assert!(
                l >= 0.0 && r <= width,
                "{what}: {label} {} at {l}..{r} of {width}",
                c["text"]
            );
        }
    }
}

fn suite_page_reads_at_1400_and_420_px() {
    let browser = chromium().expect("checked before");
    let dir = tempfile::tempdir().unwrap();
    let file = field("suite.json");
    let html = page(dir.path(), "suite.html", &["report", &file]);
    let (_, _, maxes) = worst(&load(&file));
    let stall = human(*maxes.iter().max().unwrap());
    for width in [1400, 420] {
        let m = measure(browser, &html, width);
        let what = format!("suite.json at {width} px");
        check_common(&m, &what);
        let written = shown_where(&m, |t| t == stall || t.ends_with(&format!(" {stall}")));
        assert!(
            written,
            "{what}: the {stall} stall not written on the max chart"
        );
        assert_eq!(
            m["bodies"].as_array().unwrap().len(),
            27,
            "{what}: a body chart per scenario"
        );
        summary_cells_on_screen(&m, &what, &["p99 (µs)", "max (µs)", "missed"]);
    }
}

fn compare_overlay_reads_at_1400_and_420_px() {
    let browser = chromium().expect("checked before");
    let dir = tempfile::tempdir().unwrap();
    let (idle, loaded) = (field("idle.json"), field("loaded.json"));
    let args = ["compare", &idle, &loaded, "--ignore", "load"];
    let html = page(dir.path(), "compare.html", &args);
    let (p50, p99, maxes) = worst(&load(&loaded));
    for width in [1400, 420] {
        let m = measure(browser, &html, width);
        let what = format!("compare at {width} px");
        check_common(&m, &what);
        let bodies = m["bodies"].as_array().unwrap();
        let share = body_share(&bodies[0], p50, p99);
        assert!(
            share >= 1.0 / 3.0,
            "{what}: loaded p50 {p50} to p99 {p99} µs takes {share:.2}"
        );
        assert!(
            text_shown(&m, &format!("max {}", human(maxes[0]))),
            "{what}: max in the legend"
        );
        summary_cells_on_screen(&m, &what, &["loaded.json"]);
    }
}

/// `--by date` over the field's three timer runs, started 04:12:55 to 04:14:06: each
/// scenario's trend reads at both widths, its time axis ticked in clock times of those two
/// minutes (it was 01:15 to 02:15 with "30000.0" ticks for runs 01:45 to 01:47), p99 and
/// max on their log axis with the largest of each written in the legend.
fn trend_reads_at_1400_and_420_px() {
    let browser = chromium().expect("checked before");
    let dir = tempfile::tempdir().unwrap();
    let files = [
        field("spikes.json"),
        field("idle.json"),
        field("loaded.json"),
    ];
    let mut args = vec!["report"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--by", "date"]);
    let html = page(dir.path(), "trend.html", &args);
    let clock = regex::Regex::new(r"^04:1[2-4](:[0-5][05])?$").unwrap();
    for width in [1400, 420] {
        let m = measure(browser, &html, width);
        let what = format!("--by date at {width} px");
        check_common(&m, &what);
        let ticks: Vec<&str> = m["texts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["cls"] == "tick-x")
            .map(|t| t["text"].as_str().unwrap())
            .collect();
        // The trends' time ticks (the histograms beside them tick in µs).
        let times: Vec<&&str> = ticks.iter().filter(|t| t.contains(':')).collect();
        assert!(times.len() >= 6, "{what}: time ticks {ticks:?}");
        assert!(
            times.iter().all(|t| clock.is_match(t)),
            "{what}: x ticks not clock times of the runs' two minutes: {times:?}"
        );
        let bare = |t: &&&str| {
            t.parse::<f64>()
                .is_ok_and(|v| v >= 1000.0 || t.contains('.'))
        };
        assert!(
            !ticks.iter().any(|t| bare(&t)),
            "{what}: a bare number of seconds as a tick: {ticks:?}"
        );
        for text in ["max — largest 14.51 ms", "p99 — largest 53.15 µs"] {
            assert!(text_shown(&m, text), "{what}: {text:?} not on the screen");
        }
    }
}

fn no_chromium() -> Option<String> {
    chromium().is_none().then(|| {
        "chromium not installed (apt-get install chromium): pictures not checked in a browser"
            .to_string()
    })
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    vec![
        case(
            "spikes_page_reads_at_1400_and_420_px",
            spikes_page_reads_at_1400_and_420_px,
        ),
        case(
            "suite_page_reads_at_1400_and_420_px",
            suite_page_reads_at_1400_and_420_px,
        ),
        case(
            "compare_overlay_reads_at_1400_and_420_px",
            compare_overlay_reads_at_1400_and_420_px,
        ),
        case(
            "trend_reads_at_1400_and_420_px",
            trend_reads_at_1400_and_420_px,
        ),
    ]
    .into_iter()
    .map(|c| c.unless(no_chromium()))
    .collect()
}
