//! Issue 39's long-term picture and its monitoring parts, on real interval files
//! (tests/fixtures/long_term, recorded by its record.sh: twelve `timer -D 5s` runs of this
//! machine a day apart, one stopped for 3 s, one day missing): `latscope report DIR` gives a
//! row per interval from each file's own values, the gap, the plot's points and the worst
//! case over the whole period from the concatenated per-second maxima; the one-file report
//! and the many-files comparison are unchanged; the Grafana dashboard queries only the
//! metrics a running `latscope watch` exports (scraped once: a rename breaks it).

use crate::common;
use common::{fixture, latscope};
use latscope::result::Run;

fn dir() -> std::path::PathBuf {
    fixture("long_term")
}

/// The fixture files in name order (= time order) with their runs.
fn files() -> Vec<(std::path::PathBuf, Run)> {
    let mut paths: Vec<_> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    assert_eq!(paths.len(), 12, "{paths:?}");
    paths
        .into_iter()
        .map(|p| {
            let run = Run::load(&p).unwrap();
            (p, run)
        })
        .collect()
}

/// What a row of the table must say of `run`: samples of every CPU, the largest p99 and
/// max of its CPUs, the missed periods of all.
fn expected_row(run: &Run) -> (u64, u64, u64, u64) {
    let threads = || run.scenarios.iter().flat_map(|s| &s.threads);
    (
        threads().map(|t| t.summary.samples).sum(),
        threads().map(|t| t.summary.p99_ns).max().unwrap(),
        threads().map(|t| t.summary.max_ns).max().unwrap(),
        threads().map(|t| t.summary.missed).sum(),
    )
}

fn a_directory_is_one_row_per_interval_in_time_order() {
    let out = latscope()
        .args(["report", "--ns"])
        .arg(dir())
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("12 intervals, 2026-11-01 to 2026-11-13"),
        "{text}"
    );
    let rows: Vec<&str> = text.lines().filter(|l| l.contains(" ┆ ")).skip(1).collect();
    assert_eq!(rows.len(), 12, "{text}");
    for ((path, run), row) in files().iter().zip(&rows) {
        let cells: Vec<&str> = row.trim_matches('│').split('┆').map(str::trim).collect();
        let (samples, p99, max, missed) = expected_row(run);
        let start = run.started_at.replace('T', " ").replace('Z', "");
        assert!(cells[0].starts_with(&start), "{row} {start}");
        assert_eq!(
            cells[1],
            path.file_name().unwrap().to_string_lossy(),
            "{row}"
        );
        let numbers: Vec<u64> = cells[2..].iter().map(|c| c.parse().unwrap()).collect();
        assert_eq!(numbers, [samples, p99, max, missed], "{row}");
    }
    // The stopped run: seconds of latency in its row, its periods missed.
    let stalled = expected_row(&files()[6].1);
    assert!(stalled.2 > 2_500_000_000, "{stalled:?}");
    assert!(stalled.3 > 1000, "{stalled:?}");
    assert!(
        text.contains("gap: nothing measured from 2026-11-09T") && text.contains("to 2026-11-11T"),
        "the missing 10th: {text}"
    );
    assert_eq!(text.matches("gap: ").count(), 1, "one gap only: {text}");
}

/// The whole period's estimate reads every CPU's per-second maxima of all twelve files in
/// time order: the same estimate as the estimator given that series itself.
fn the_worst_case_reads_the_concatenated_per_second_maxima() {
    use latscope::stats::worst_case::{estimate, Input, Options};
    let files = files();
    let named = files
        .iter()
        .map(|(p, r)| (p.display().to_string(), r.clone()))
        .collect();
    let view = latscope::report::long_term::build(named, Some(Options::default()), None).unwrap();
    let cpus: Vec<usize> = files[0].1.scenarios[0]
        .threads
        .iter()
        .map(|t| t.cpu)
        .collect();
    assert_eq!(view.whole_period.len(), cpus.len());
    for w in &view.whole_period {
        let threads = || {
            files
                .iter()
                .flat_map(|(_, r)| &r.scenarios[0].threads)
                .filter(|t| t.cpu == w.cpu)
        };
        let maxima: Vec<u64> = threads()
            .flat_map(|t| t.per_second_max_ns.iter().copied())
            .collect();
        let samples = threads().map(|t| t.summary.samples).sum();
        assert_eq!((w.seconds, w.samples), (maxima.len(), samples));
        assert!(
            maxima.len() >= 50,
            "60 seconds: an estimate no single file allows"
        );
        let opts = Options {
            period_ns: Some(view.period_ns),
            ..Options::default()
        };
        let reference = estimate(
            Input::BlockMaxima {
                maxima: &maxima,
                samples,
            },
            &opts,
        );
        assert_eq!(w.worst_case.observed_max_ns, reference.observed_max_ns);
        assert_eq!(w.worst_case.estimates, reference.estimates, "CPU {}", w.cpu);
        assert_eq!(w.worst_case.refused, reference.refused, "CPU {}", w.cpu);
        assert_eq!(
            w.worst_case.observed_max_ns,
            threads().map(|t| t.summary.max_ns).max().unwrap()
        );
    }
    let text = latscope().arg("report").arg(dir()).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("add --worst-case") && !text.contains("Worst case"),
        "{text}"
    );
    // With --worst-case the words are written: every_format_and_the_refused_ones.
}

/// The SVG's max markers: one per interval, at the interval's middle, highest for the
/// stopped run; the line broken at the gap; the --fail-above line drawn.
fn the_plot_holds_each_interval_and_breaks_at_the_gap() {
    let files = files();
    let named = files
        .iter()
        .map(|(p, r)| (p.display().to_string(), r.clone()))
        .collect();
    let opts = latscope::stats::worst_case::Options::default();
    let view = latscope::report::long_term::build(named, Some(opts), Some(200_000)).unwrap();
    let plot = view.plot();
    let runs = latscope::render::long_term::joined_runs(&plot, |i| i.max_ns);
    assert_eq!(
        runs.iter().map(Vec::len).collect::<Vec<_>>(),
        [9, 3],
        "split at the 10th"
    );
    let points: Vec<(f64, f64)> = runs.concat();
    for ((_, run), (x, y)) in files.iter().zip(&points) {
        let (s, e) = (
            latscope::result::epoch_s(&run.started_at).unwrap(),
            latscope::result::epoch_s(&run.finished_at).unwrap(),
        );
        assert_eq!(*x, (s + e) / 2.0);
        assert_eq!(*y, expected_row(run).2 as f64 / 1e3);
    }
    let svg = view.svg(latscope::render::canvas::WIDE).unwrap();
    // The max series' markers: plotters' filled circles of radius 4 (the p99's are
    // triangles, the per-second dots radius 2, the legend's circle has no opacity).
    let circles: Vec<f64> = svg
        .split("<circle")
        .skip(1)
        .filter(|c| c.contains("r=\"4\" opacity="))
        .map(|c| {
            let at = c.find("cy=\"").unwrap() + 4;
            c[at..].split('"').next().unwrap().parse().unwrap()
        })
        .collect();
    assert_eq!(circles.len(), 12, "{svg}");
    let highest = circles.iter().copied().fold(f64::MAX, f64::min);
    assert_eq!(
        circles[6], highest,
        "the stopped 7th run is the top of the plot"
    );
    assert!(
        svg.contains("fail above 200 µs") && svg.contains("(1 gap)"),
        "{svg}"
    );
    assert!(svg.contains("grey dots"), "per-second maxima drawn");
}

/// Every format a report of several files writes, and the formats refused with a reason.
fn every_format_and_the_refused_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let (html, md, csv, json) = (
        tmp.path().join("m.html"),
        tmp.path().join("m.md"),
        tmp.path().join("m.csv"),
        tmp.path().join("m.json"),
    );
    latscope()
        .arg("report")
        .arg(dir())
        .args(["-q", "--worst-case", "--export-html"])
        .arg(&html)
        .arg("--export-markdown")
        .arg(&md)
        .arg("--export-csv")
        .arg(&csv)
        .arg("--export-json")
        .arg(&json)
        .assert()
        .success();
    let html = std::fs::read_to_string(html).unwrap();
    assert!(html.matches("<svg").count() >= 2, "the plot at both sizes");
    assert!(html.contains("Long-term latency of"));
    assert!(html.contains("Worst case beyond the samples: the whole period, CPU"));
    let csv = std::fs::read_to_string(csv).unwrap();
    assert_eq!(csv.lines().count(), 13, "{csv}");
    let md = std::fs::read_to_string(md).unwrap();
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| 2026-11-")).count(),
        12,
        "{md}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(json["intervals"].as_array().unwrap().len(), 12);
    assert_eq!(json["gaps"].as_array().unwrap().len(), 1);
    let out = latscope()
        .arg("report")
        .arg(dir())
        .args(["--export-junit", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--export-junit") && err.contains("report each file alone"),
        "{err}"
    );
}

/// `--fail-above max=…` judges each interval, names its file, and draws the limit.
fn fail_above_names_the_interval() {
    let out = latscope()
        .arg("report")
        .arg(dir())
        .args(["--fail-above", "max=1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("FAIL") && err.contains("2026-11-07"), "{err}");
}

/// The one-file report and the comparison of files not named `watch-*` are as before;
/// files named `watch-*.json` get the long-term view without a flag.
fn other_reports_are_unchanged() {
    let files = files();
    let one = latscope().arg("report").arg(&files[0].0).output().unwrap();
    let one = String::from_utf8_lossy(&one.stdout);
    assert!(!one.contains("Long-term") && one.contains("p99"), "{one}");
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a.json"), tmp.path().join("b.json"));
    std::fs::copy(&files[0].0, &a).unwrap();
    std::fs::copy(&files[1].0, &b).unwrap();
    let many = latscope().arg("report").arg(&a).arg(&b).output().unwrap();
    let many = String::from_utf8_lossy(&many.stdout);
    assert!(!many.contains("Long-term"), "{many}");
    let watch = latscope()
        .arg("report")
        .arg(&files[0].0)
        .arg(&files[1].0)
        .output()
        .unwrap();
    let watch = String::from_utf8_lossy(&watch.stdout);
    assert!(
        watch.contains("Long-term latency of") && watch.contains("2 intervals"),
        "{watch}"
    );
    let flagged = latscope()
        .args(["report", "--long-term"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&flagged.stdout).contains("2 intervals"));
    let empty = tempfile::tempdir().unwrap();
    let out = latscope().arg("report").arg(empty.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no result files (*.json)"));
}

/// The metric names a running `latscope watch` exports (its samples' names: a histogram's
/// `_bucket`, `_count`, `_sum`, a counter's `_total`), scraped once from `--listen` with
/// `--fail-above` and `--readiness` so that every metric is there.
fn exported_metrics() -> std::collections::BTreeSet<String> {
    use crate::watch::{free_port, http_get, stop, watch};
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _lock = common::latency_lock();
    let listen = format!("127.0.0.1:{port}");
    let w = watch(
        dir.path(),
        &["--listen", &listen, "--fail-above", "1ms", "--readiness"],
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut body = String::new();
    while !body.contains("latscope_latency_seconds_count{") {
        assert!(std::time::Instant::now() < deadline, "no samples: {body}");
        std::thread::sleep(std::time::Duration::from_millis(200));
        body = http_get(port, "/metrics").unwrap_or_default();
    }
    std::thread::sleep(std::time::Duration::from_millis(1_100));
    let body = http_get(port, "/metrics").expect("GET /metrics");
    stop(w);
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.split(['{', ' ']).next())
        .map(String::from)
        .collect()
}

/// Every string of the JSON value under the keys `expr`, `query` and `definition`.
fn queries(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("expr" | "query" | "definition", serde_json::Value::String(s)) => {
                        out.push(s.clone())
                    }
                    _ => queries(x, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| queries(x, out)),
        _ => {}
    }
}

fn the_dashboard_queries_only_what_a_running_watch_exports() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/grafana/latscope.json");
    let dash: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut texts = Vec::new();
    queries(&dash, &mut texts);
    let exported = exported_metrics();
    let name = regex::Regex::new(r"latscope_[a-z0-9_]+").unwrap();
    let mut used = std::collections::BTreeSet::new();
    for t in &texts {
        for m in name.find_iter(t) {
            assert!(
                exported.contains(m.as_str()),
                "{} in {t:?} is not exported by latscope watch: {exported:?}",
                m.as_str()
            );
            used.insert(m.as_str().to_string());
        }
    }
    for panel in [
        "latscope_latency_seconds_bucket",
        "latscope_latency_max_seconds",
        "latscope_missed_periods_total",
        "latscope_overruns_total",
        "latscope_fail_above_intervals_total",
    ] {
        assert!(used.contains(panel), "no panel queries {panel}: {used:?}");
    }
    for level in ["0.5", "0.99", "0.999"] {
        let q = format!("histogram_quantile({level}, sum by (le, host, cpu) (rate(latscope_latency_seconds_bucket");
        assert!(texts.iter().any(|t| t.starts_with(&q)), "p{level} panel");
    }
    let vars = dash["templating"]["list"].as_array().unwrap();
    let var = |n: &str| {
        vars.iter()
            .find(|v| v["name"] == n)
            .unwrap_or_else(|| panic!("variable {n}"))
    };
    assert_eq!(var("datasource")["type"], "datasource");
    assert_eq!(var("datasource")["query"], "prometheus");
    assert_eq!(var("host")["type"], "query");
    assert_eq!(var("cpu")["type"], "query");
    for p in dash["panels"].as_array().unwrap() {
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{}", p["title"]);
        for t in p["targets"].as_array().unwrap() {
            let e = t["expr"].as_str().unwrap();
            assert!(
                e.contains("host=~\"$host\""),
                "{e}: filtered by the host variable"
            );
        }
    }
}

pub fn cases() -> Vec<common::Case> {
    vec![
        common::case(
            "a_directory_is_one_row_per_interval_in_time_order",
            a_directory_is_one_row_per_interval_in_time_order,
        ),
        common::case(
            "the_worst_case_reads_the_concatenated_per_second_maxima",
            the_worst_case_reads_the_concatenated_per_second_maxima,
        ),
        common::case(
            "the_plot_holds_each_interval_and_breaks_at_the_gap",
            the_plot_holds_each_interval_and_breaks_at_the_gap,
        ),
        common::case(
            "every_format_and_the_refused_ones",
            every_format_and_the_refused_ones,
        ),
        common::case(
            "fail_above_names_the_interval",
            fail_above_names_the_interval,
        ),
        common::case("other_reports_are_unchanged", other_reports_are_unchanged),
        common::case(
            "the_dashboard_queries_only_what_a_running_watch_exports",
            the_dashboard_queries_only_what_a_running_watch_exports,
        ),
    ]
}
