//! `compare` beyond two runs of one machine: the RT-cost study's percent-change table on
//! two hand-made rt-cost runs (every figure checked exactly), the loads' throughput change
//! of any two runs, and the many-results view (`--by host|kernel|date|file`): one table
//! with a column per machine, one HTML report, a date trend chart and LAVA job logs read
//! directly.

use crate::common;

use common::{fixture, latscope};

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The row of `item` and `stat` in a terminal table: its cells, trimmed.
fn row_cells(text: &str, item: &str, stat: &str) -> Vec<String> {
    let mut current = String::new();
    for line in text.lines().filter(|l| l.starts_with('│')) {
        let cells: Vec<String> = line
            .trim_matches('│')
            .split('┆')
            .map(|c| c.trim().to_string())
            .collect();
        if !cells[0].is_empty() {
            current = cells[0].clone();
        }
        if current == item && cells.get(1).is_some_and(|c| c == stat) {
            return cells;
        }
    }
    panic!("no row {item} / {stat} in:\n{text}");
}

/// The rows of rt_cost_a/b.json's comparison, exact: item, statistic, A, B, change, judged.
const RT_COST_ROWS: [(&str, &str, &str, &str, &str, &str); 8] = [
    (
        "UDP round trip 56 B flood",
        "avg (µs)",
        "100.00",
        "109.00",
        "+9.0 %",
        "worse",
    ),
    (
        "UDP round trip 56 B flood",
        "max (µs)",
        "200.00",
        "150.00",
        "\u{2212}25.0 %",
        "better",
    ),
    (
        "UDP round trip 4000 B flood",
        "avg (µs)",
        "200.00",
        "230.00",
        "+15.0 %",
        "worse",
    ),
    (
        "UDP round trip 8192 B flood",
        "avg (µs)",
        "400.00",
        "440.00",
        "+10.0 %",
        "worse",
    ),
    (
        "timer clock-nanosleep irq part",
        "max (µs)",
        "10.00",
        "12.00",
        "+20.0 %",
        "worse",
    ),
    (
        "timer clock-nanosleep irq part",
        "min (µs)",
        "1.00",
        "1.00",
        "0.0 %",
        "",
    ),
    (
        "net load throughput",
        "throughput (MB/s)",
        "1000",
        "910",
        "\u{2212}9.0 %",
        "worse",
    ),
    (
        "io load throughput",
        "throughput (MB/s)",
        "500",
        "550",
        "+10.0 %",
        "better",
    ),
];

fn rt_cost_compare_prints_the_percent_change_table_with_exact_figures() {
    let out = latscope()
        .arg("compare")
        .arg(fixture("rt_cost_a.json"))
        .arg(fixture("rt_cost_b.json"))
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("Latency: higher is worse, so + is worse. Throughput: lower is worse, so \u{2212} is worse."),
        "the header states the sign convention:\n{text}"
    );
    for (item, stat, a, b, change, judged) in RT_COST_ROWS {
        let cells = row_cells(&text, item, stat);
        assert_eq!(
            cells[2..6],
            [a, b, change, judged],
            "{item} {stat}:\n{text}"
        );
    }
    assert!(
        text.contains("B (PREEMPT_RT) costs 9.0 % of net load throughput (1000 \u{2192} 910 MB/s)"),
        "{text}"
    );
    assert!(
        text.contains("B (PREEMPT_RT) gains 10.0 % of io load throughput (500 \u{2192} 550 MB/s)"),
        "{text}"
    );
}

fn rt_cost_compare_exports_the_table_to_markdown_and_html() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("cmp.md");
    let html = dir.path().join("cmp.html");
    let out = latscope()
        .arg("compare")
        .arg(fixture("rt_cost_a.json"))
        .arg(fixture("rt_cost_b.json"))
        .arg("--export-markdown")
        .arg(&md)
        .arg("--export-html")
        .arg(&html)
        .arg("-q")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("### RT cost"), "{md}");
    assert!(
        md.contains(
            "| net load throughput | throughput (MB/s) | 1000 | 910 | \u{2212}9.0 % | worse |"
        ),
        "{md}"
    );
    let html = std::fs::read_to_string(html).unwrap();
    assert!(
        html.contains("<h2>RT cost</h2>"),
        "the HTML has the study's table"
    );
    assert!(html.contains("<td class=\"num\" data-label=\"change\">\u{2212}9.0 %</td>"));
}

fn two_runs_with_loads_show_the_throughput_change() {
    // Any two runs (not only rt-cost): the loads both ran, with their throughput change;
    // the latency tables stay as they were.
    let out = latscope()
        .arg("compare")
        .arg(fixture("run.json"))
        .arg(fixture("run_regressed.json"))
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("\nLoad throughput, B against A (lower is worse)\n"),
        "{text}"
    );
    assert!(
        text.contains("latencies in µs; samples, overruns and missed are counts\n"),
        "{text}"
    );
    assert!(!text.contains("RT cost"), "{text}");
}

/// Asserts `value` equals tests/snapshots/compare_many__NAME.snap.
fn assert_snapshot(name: &str, value: String) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(format!("compare_many__{name}"), value));
}

fn three_hosts_compare_into_one_table_and_one_html_report() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("hosts.html");
    let out = latscope()
        .arg("compare")
        .arg(fixture("host_a.json"))
        .arg(fixture("host_b.json"))
        .arg(fixture("host_c.json"))
        .args(["--by", "host", "--export-html"])
        .arg(&html)
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One table per scenario (two), each with a column per host.
    assert_eq!(
        text.matches("┆ board-a ┆ board-b ┆ board-c │").count(),
        2,
        "the three hosts side by side:\n{text}"
    );
    assert_snapshot("three_hosts_table", text);
    let html = std::fs::read_to_string(html).unwrap();
    assert_eq!(html.matches("<html").count(), 1, "one HTML report");
    for host in ["board-a", "board-b", "board-c"] {
        assert!(
            html.contains(&format!("<th>{host}</th>")),
            "a column for {host}"
        );
    }
    // One chart per scenario across the hosts (two scenarios), besides the histograms.
    assert_eq!(
        html.matches("p99 and max per column").count(),
        2,
        "one bar chart per scenario"
    );
}

fn date_axis_orders_the_columns_and_draws_a_trend_chart() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("trend.html");
    let out = latscope()
        .arg("report")
        .arg(fixture("host_a.json"))
        .arg(fixture("host_b.json"))
        .arg(fixture("host_c.json"))
        .args(["--by", "date", "--format", "html", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(html).unwrap();
    let header = html.find("<th>2026-01-01</th><th>2026-02-01</th><th>2026-03-01</th>");
    assert!(
        header.is_some(),
        "columns oldest first (files were given out of date order)"
    );
    assert_eq!(
        html.matches("max and p99 over time").count(),
        2,
        "one trend chart per scenario"
    );
    let dated = regex::Regex::new(r"^2026-0[1-3]-\d\d$").unwrap();
    assert!(
        trend_svgs(&html)
            .iter()
            .all(|svg| svg_texts(svg).iter().any(|t| dated.is_match(t))),
        "runs weeks apart: the x axis is labelled with dates"
    );
    assert!(html.contains("start of the run (UTC date)"));
}

/// The SVGs of the trend charts in a report's HTML.
fn trend_svgs(html: &str) -> Vec<&str> {
    html.split("<figure>")
        .filter(|f| f.contains("max and p99 over time"))
        .map(|f| &f[..f.find("</svg>").expect("an svg")])
        .collect()
}

/// The x of each marker (circle) of an SVG, in drawing order.
fn marker_xs(svg: &str) -> Vec<f64> {
    let cx = regex::Regex::new(r#"<circle cx="([0-9.]+)""#).unwrap();
    cx.captures_iter(svg)
        .map(|c| c[1].parse().unwrap())
        .collect()
}

/// The words of an SVG's `<text>` elements.
fn svg_texts(svg: &str) -> Vec<String> {
    let text = regex::Regex::new(r"(?s)<text[^>]*>\s*(.*?)\s*</text>").unwrap();
    text.captures_iter(svg).map(|c| c[1].to_string()).collect()
}

/// Three runs on one day and one on the next, each a real result file with only its start
/// changed: each run sits at its own time, ticks read as clock times, and each date is
/// written once per chart (not once per run).
fn date_axis_places_same_day_runs_at_their_times() {
    let dir = tempfile::tempdir().unwrap();
    let starts = [
        ("host_a.json", "2026-11-23T08:00:00Z"),
        ("host_b.json", "2026-11-23T12:30:00Z"),
        ("host_c.json", "2026-11-23T17:45:00Z"),
        ("host_a.json", "2026-11-24T10:00:00Z"),
    ];
    let mut cmd = latscope();
    cmd.arg("report");
    for (i, (name, start)) in starts.iter().enumerate() {
        let text = std::fs::read_to_string(fixture(name)).unwrap();
        let mut run: serde_json::Value = serde_json::from_str(&text).unwrap();
        run["started_at"] = serde_json::Value::from(*start);
        let path = dir.path().join(format!("run{i}.json"));
        std::fs::write(&path, serde_json::to_string(&run).unwrap()).unwrap();
        cmd.arg(path);
    }
    let html = dir.path().join("trend.html");
    let out = cmd
        .args(["--by", "date", "--format", "html", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(html).unwrap();
    let svgs = trend_svgs(&html);
    assert_eq!(svgs.len(), 2, "one trend chart per scenario");
    for svg in svgs {
        // The first series' markers (circles; max has triangles), one per run, oldest
        // first: four distinct x, in order, spaced as the times are (4.5 h, 5.25 h, 16.25 h);
        // then the legend's (its line with the marker on it, drawn last).
        let xs = marker_xs(svg);
        assert_eq!(xs.len(), 5, "p99 of four runs and the legend: {xs:?}");
        let gaps: Vec<f64> = xs[..4].windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            gaps.iter().all(|&g| g > 20.0),
            "same-day runs apart: {xs:?}"
        );
        let per_hour = gaps[2] / 16.25;
        for (gap, hours) in gaps.iter().zip([4.5, 5.25]) {
            assert!((gap / hours - per_hour).abs() < 0.5, "real time: {xs:?}");
        }
        let texts = svg_texts(svg);
        for date in ["2026-11-23", "2026-11-24"] {
            let n = texts.iter().filter(|t| *t == date).count();
            assert_eq!(n, 1, "{date} once: {texts:?}");
        }
        for tick in ["12:00", "18:00", "00:00", "06:00"] {
            assert!(texts.iter().any(|t| t == tick), "clock ticks: {texts:?}");
        }
    }
}

/// A job log recorded from real lava-run (tests/fixtures/lava_job_output.md): every
/// statistic `report` reads is the measurement LAVA recorded (its results.tsv rows).
fn a_lava_job_log_is_read_as_a_result() {
    let log = crate::lava::report_json(&fixture("lava_job_output.yaml"));
    let tsv = std::fs::read_to_string(fixture("lava_job_results.tsv")).unwrap();
    let recorded = crate::lava::read_results(&tsv);
    crate::lava::log_reads_what_lava_recorded("fixture", &log, &recorded["6.1.0-56-amd64"]);
    assert_eq!(log.system.kernel_release, "6.1.0-56-amd64");
    assert_eq!(log.system.preemption_model, "PREEMPT_DYNAMIC (voluntary)");
    assert_eq!(log.started_at, "2026-11-25T20:34:10Z");
    let warnings: Vec<&str> = log.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(
        warnings,
        ["2 LAVA test case(s) failed (a --fail-above limit on the board)"]
    );
    let out = latscope()
        .arg("report")
        .arg(fixture("lava_job_output.yaml"))
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("23547.61"),
        "the max from the LAVA log:\n{text}"
    );
    // Beside the JSON of other boards, aligned by scenario name: one table, the LAVA
    // board's kernel (read from its boot line) as a column.
    let out = latscope()
        .arg("compare")
        .arg(fixture("host_b.json"))
        .arg(fixture("lava_job_output.yaml"))
        .args(["--by", "kernel"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("lava_job_output.yaml: lava_job_output, 6.1.0-56-amd64 PREEMPT_DYNAMIC (voluntary), 2026-11-25T20:34:10Z"), "{text}");
    let max = text.lines().find(|l| l.starts_with("│ max ")).expect(&text);
    assert!(max.contains("30.00") && max.contains("23547.61"), "{text}");
    // A measurement that cannot be read is said on stderr, not skipped by the verdicts.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.log");
    let log = std::fs::read_to_string(fixture("lava_job_output.yaml")).unwrap();
    std::fs::write(
        &bad,
        log.replace(
            "\"measurement\": ! \"23547.61\"",
            "\"measurement\": ! \"23547.61 us\"",
        ),
    )
    .unwrap();
    let out = latscope()
        .arg("compare")
        .arg(fixture("lava_job_output.yaml"))
        .arg(&bad)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.log: LAVA case timer_clock-nanosleep_1ms_cpu1_max: the results entry has a measurement that cannot be read (\"23547.61 us\" us)")
            && stderr.contains("cpu1_max: taken from the received signal"),
        "{stderr}"
    );
    let p999_absent = !text
        .lines()
        .filter(|l| l.contains('┆'))
        .any(|l| l.contains("p99.9 "));
    assert!(
        p999_absent,
        "the many-results table shows min, avg, p99, max"
    );
}

pub fn cases() -> Vec<common::Case> {
    common::test_cases![
        rt_cost_compare_prints_the_percent_change_table_with_exact_figures,
        rt_cost_compare_exports_the_table_to_markdown_and_html,
        two_runs_with_loads_show_the_throughput_change,
        three_hosts_compare_into_one_table_and_one_html_report,
        date_axis_orders_the_columns_and_draws_a_trend_chart,
        date_axis_places_same_day_runs_at_their_times,
        a_lava_job_log_is_read_as_a_result,
    ]
}
