//! The HTML reports in a real browser: Debian's chromium renders them headless, the
//! screenshot must not be blank, the DOM must hold the report's structure and the
//! console must show no errors. Skipped with a message when chromium is absent.

use crate::common;

use common::{case, fixture};
use std::path::Path;

pub(crate) fn chromium() -> Option<&'static str> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

pub(crate) fn chromium_cmd(browser: &str, profile: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(browser);
    // No D-Bus session: without this chromium waits seconds for one.
    cmd.env("DBUS_SESSION_BUS_ADDRESS", "disabled:")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

/// Standard deviation of the grey values of a PNG's pixels.
fn pixel_spread(png_path: &Path) -> f64 {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let bytes = &buf[..info.buffer_size()];
    let greys: Vec<f64> = bytes
        .chunks(channels)
        .map(|p| p.iter().take(3).map(|&v| v as f64).sum::<f64>() / 3.0_f64.min(channels as f64))
        .collect();
    let mean = greys.iter().sum::<f64>() / greys.len() as f64;
    (greys.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / greys.len() as f64).sqrt()
}

fn check_in_browser(browser: &str, html: &Path, needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("out.png");
    let out = chromium_cmd(browser, &dir.path().join("profile"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1200,2000")
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {log}");
    for bad in [
        "Uncaught",
        "ERROR:CONSOLE",
        ":CONSOLE",
        "Failed to load resource",
    ] {
        assert!(!log.contains(bad), "console error ({bad}): {log}");
    }
    let spread = pixel_spread(&shot);
    assert!(
        spread > 10.0,
        "the screenshot is blank (grey spread {spread:.1})"
    );

    let out = chromium_cmd(browser, &dir.path().join("profile2"))
        .arg("--dump-dom")
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    for n in needles {
        assert!(dom.contains(n), "DOM lacks {n}");
    }
    assert!(
        dom.matches("<svg").count() >= 2,
        "charts rendered into the DOM"
    );
}

fn html_reports_render_in_chromium() {
    let browser = chromium().expect("checked before");
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.html");
    common::latscope()
        .args([
            "report",
            fixture("run.json").to_str().unwrap(),
            "-f",
            "html",
            "-q",
            "-o",
        ])
        .arg(&report)
        .assert()
        .success();
    check_in_browser(
        browser,
        &report,
        &[
            "id=\"scenario-0\"",
            "id=\"system\"",
            "id=\"wake\"",
            "class=\"suite\"",
            "latency histogram",
        ],
    );
    let cmp = dir.path().join("compare.html");
    common::latscope()
        .args(["compare", "-q"])
        .args([fixture("run.json"), fixture("run_regressed.json")])
        .arg("--export-html")
        .arg(&cmp)
        .assert()
        .success();
    check_in_browser(browser, &cmp, &["histograms overlaid", "REGRESSED"]);
    // A traced run: the --trace section and its timeline render too.
    let traced = dir.path().join("trace.html");
    common::latscope()
        .args(["report", fixture("run_trace.json").to_str().unwrap()])
        .args(["-f", "html", "-q", "-o"])
        .arg(&traced)
        .assert()
        .success();
    check_in_browser(
        browser,
        &traced,
        &[
            "Why was it late (--trace)",
            "Causes over all spikes",
            "the worst spike",
            "switch-in / wake",
        ],
    );
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    vec![case(
        "html_reports_render_in_chromium",
        html_reports_render_in_chromium,
    )
    .unless(chromium().is_none().then(|| {
        "chromium not installed (apt-get install chromium): HTML not checked in a browser"
            .to_string()
    }))]
}
