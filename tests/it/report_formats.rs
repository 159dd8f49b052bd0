//! Every export format rendered from the fixed fixture run (tests/fixtures/run.json,
//! written by make_fixtures.py) and pinned with insta snapshots; the JUnit XML checked
//! against the structure Jenkins and GitLab read; escaping of system and user strings;
//! clear errors for bad or older input files.

use crate::common;

use common::{fixture, latscope};
use latscope::output::exports::Format;
use latscope::report::{reporter, RenderOptions};
use latscope::result::limits::parse_limits;
use latscope::result::Run;

/// Asserts `value` equals tests/snapshots/report_formats__NAME.snap, the name insta gave it
/// when this file was its own test binary (in tests/it the module path would add `it__`).
fn assert_snapshot(name: &str, value: String) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(format!("report_formats__{name}"), value));
}

fn render(format: Format, limits: &str) -> String {
    let run = Run::load(&fixture("run.json")).unwrap();
    let opts = RenderOptions {
        in_ns: false,
        limits: if limits.is_empty() {
            Vec::new()
        } else {
            parse_limits(limits).unwrap()
        },
    };
    String::from_utf8(reporter(format, &opts).render(&run).unwrap()).unwrap()
}

fn table_snapshot() {
    assert_snapshot("table_snapshot", render(Format::Table, ""));
}

fn csv_snapshot() {
    let csv = render(Format::Csv, "");
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(
        rows.len(),
        1 + 11,
        "a header and one row per scenario × thread"
    );
    assert_snapshot("csv_snapshot", csv);
}

fn markdown_snapshot() {
    assert_snapshot("markdown_snapshot", render(Format::Markdown, ""));
}

fn lava_snapshot() {
    let lava = render(Format::Lava, "max=500us");
    let cases = lava.lines().filter(|l| l.starts_with("lava-test-case "));
    assert!(cases.clone().count() > 0);
    assert!(cases.clone().all(|l| (l.contains(" --result pass ")
        || l.contains(" --result fail "))
        && l.contains(" --measurement ")
        && l.contains(" --units ")));
    // A test set per scenario, case names without data (the kernel is echoed).
    assert!(lava.contains(
        "lava-test-set start timer_clock-nanosleep_1ms\nlava-test-case cpu0_min --result pass"
    ));
    assert!(lava.contains("lava-test-case cpu0_max --result fail --measurement 700.00 --units us"));
    assert!(lava.contains("\necho 'latscope preemption model: "));
    assert_eq!(
        lava.matches("lava-test-set start ").count(),
        lava.matches("lava-test-set stop\n").count()
    );
    assert_snapshot("lava_snapshot", lava);
}

fn junit_snapshot() {
    assert_snapshot("junit_snapshot", render(Format::Junit, "max=500us"));
}

fn html_snapshot() {
    assert_snapshot("html_snapshot", render(Format::Html, "max=500us"));
}

fn json_round_trips() {
    let json = render(Format::Json, "");
    let back: Run = serde_json::from_str(&json).unwrap();
    assert_eq!(back.scenarios.len(), 7);
}

/// The structure Jenkins' JUnit plugin and GitLab's test report parser read:
/// testsuites > testsuite[name,tests,failures,errors] > testcase[name,classname,time] >
/// properties > property[name,value], and failure[message,type] on failing cases.
fn junit_has_the_structure_ci_servers_read() {
    let xml = render(Format::Junit, "max=500us,p99=1ms");
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
    assert_eq!(suites.len(), 7, "one testsuite per scenario");
    let mut cases = 0;
    let mut failures = 0;
    for suite in &suites {
        assert_eq!(suite.tag_name().name(), "testsuite");
        for attr in ["name", "tests", "failures", "errors"] {
            assert!(suite.attribute(attr).is_some(), "testsuite without {attr}");
        }
        let suite_cases: Vec<_> = suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        assert_eq!(
            suite.attribute("tests").unwrap(),
            suite_cases.len().to_string()
        );
        let mut suite_failures = 0;
        for case in suite_cases {
            cases += 1;
            assert!(case.attribute("name").unwrap().starts_with("cpu"));
            assert!(case
                .attribute("classname")
                .unwrap()
                .starts_with("latscope."));
            assert!(case.attribute("time").unwrap().parse::<f64>().is_ok());
            let props = case
                .children()
                .find(|n| n.has_tag_name("properties"))
                .expect("properties");
            let names: Vec<&str> = props
                .children()
                .filter(|n| n.has_tag_name("property"))
                .map(|p| {
                    assert!(p.attribute("value").is_some());
                    p.attribute("name").unwrap()
                })
                .collect();
            for stat in [
                "min_ns", "avg_ns", "p99_ns", "p99.9_ns", "max_ns", "samples", "overruns",
            ] {
                assert!(names.contains(&stat), "property {stat} missing");
            }
            if let Some(f) = case.children().find(|n| n.has_tag_name("failure")) {
                suite_failures += 1;
                let msg = f.attribute("message").unwrap();
                assert!(msg.contains("max") && msg.contains("> 500 µs"), "{msg}");
                assert!(f.attribute("type").is_some());
            }
        }
        assert_eq!(
            suite.attribute("failures").unwrap(),
            suite_failures.to_string()
        );
        failures += suite_failures;
    }
    assert_eq!(cases, 11);
    assert_eq!(
        failures, 4,
        "CPU 0 of the four timer scenarios exceeds max=500us"
    );
    assert_eq!(root.attribute("failures").unwrap(), "4");
}

fn html_escapes_system_and_user_strings_and_needs_no_network() {
    let html = render(Format::Html, "");
    assert!(
        !html.contains("<script"),
        "a hostile cmdline must not become a script"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("board&lt;7&gt; &amp; &quot;lab&quot;"));
    assert!(html.contains("competitors &lt;ran&gt; at SCHED_OTHER &amp; nice 0"));
    let without_ns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(
        !without_ns.contains("http://") && !without_ns.contains("https://"),
        "no network resources"
    );
    assert!(!html.contains(" src="));
    assert!(
        html.matches("<svg").count() >= 2 * 7,
        "histogram and timeline per scenario"
    );
    assert!(html.contains("Response against competitors"));
    assert!(html.contains("timer: max latency per load"));
}

fn report_rerenders_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    for (format, needle) in [
        ("table", "clock-nanosleep"),
        ("json", "\"schema_version\": 2"),
        ("csv", "scenario,probe,method"),
        ("markdown", "| --- |"),
        ("html", "<!DOCTYPE html>"),
        ("junit", "<testsuites"),
        ("lava", "lava-test-case"),
    ] {
        let out = latscope()
            .args([
                "report",
                fixture("run.json").to_str().unwrap(),
                "--format",
                format,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(needle),
            "{format}"
        );
    }
    let html = dir.path().join("r.html");
    let csv = dir.path().join("r.csv");
    latscope()
        .args([
            "report",
            fixture("run.json").to_str().unwrap(),
            "-f",
            "html",
            "-o",
        ])
        .arg(&html)
        .arg("--export-csv")
        .arg(&csv)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    assert!(std::fs::read_to_string(&csv)
        .unwrap()
        .starts_with("scenario,"));
}

fn report_refuses_two_exports_on_stdout() {
    let out = latscope()
        .args([
            "report",
            fixture("run.json").to_str().unwrap(),
            "--export-csv",
            "-",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("only one export can go to stdout"));
}

fn bad_and_older_files_get_an_error_naming_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let truncated = dir.path().join("truncated.json");
    std::fs::write(&truncated, "{\"schema_version\": 1, \"tool\": \"latscope\"").unwrap();
    let foreign = dir.path().join("foreign.json");
    std::fs::write(&foreign, "{\"hello\": 1}").unwrap();
    let wrong_shape = dir.path().join("shape.json");
    std::fs::write(&wrong_shape, "{\"schema_version\": 1, \"scenarios\": 3}").unwrap();
    let cases = [
        (
            fixture("run_old_schema.json"),
            "schema_version 0 is not supported",
        ),
        (truncated, "not JSON"),
        (foreign, "not a latscope result file"),
        (wrong_shape, "does not match the latscope result schema"),
        (dir.path().join("missing.json"), "No such file"),
    ];
    for (path, reason) in cases {
        for cmd in [
            vec!["report"],
            vec!["compare", fixture("run.json").to_str().unwrap()],
        ] {
            let out = latscope().args(&cmd).arg(&path).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{}", path.display());
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(&path.display().to_string()), "{err}");
            assert!(err.contains(reason), "{err}");
        }
    }
}

/// A traced run (tests/fixtures/run_trace.json: `timer --trace` with a FIFO 99 python3
/// spinning on the measured CPU) as HTML: the parts table, every spike line, the cause
/// summary and the worst spike's timeline are there.
fn html_has_the_trace_section() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("trace.html");
    common::latscope()
        .args(["report", fixture("run_trace.json").to_str().unwrap()])
        .args(["-f", "html", "-q", "-o"])
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    let run = Run::load(&fixture("run_trace.json")).unwrap();
    let t = run.scenarios[0].trace.as_ref().expect("a traced fixture");
    let section = &html[html
        .find("<h3>Why was it late (--trace)</h3>")
        .expect("no trace section")..];
    // Parts table: one row per part and thread.
    assert!(section.contains("<th>part</th>"), "no parts table");
    for part in ["irq_latency", "wake_to_run", "to_user", "remainder"] {
        assert!(
            section.contains(&format!("<td>{part}</td>")),
            "part {part} missing"
        );
    }
    // Spike lines, worst first, each as the terminal shows it.
    assert!(section.contains(&format!(
        "<h4>Spikes ({}, worst first)</h4>",
        t.spikes.len()
    )));
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let mut at = 0;
    for s in &t.spikes {
        let li = format!("<li>CPU {}: {}</li>", s.cpu, esc(&s.line));
        let pos = section[at..]
            .find(&li)
            .unwrap_or_else(|| panic!("spike line missing or out of order: {li}"));
        at += pos + li.len();
    }
    // Cause summary: every cause with its spike count.
    assert!(section.contains("<h4>Causes over all spikes</h4>"));
    for c in &t.cause_summary {
        assert!(
            section.contains(&format!(
                "<tr><td>{}</td><td class=\"num\">{}</td>",
                esc(&c.cause),
                c.spikes
            )),
            "cause {} missing",
            c.cause
        );
    }
    check_the_timeline(section);
    // And the events, in the kernel's format.
    assert!(section.contains(&format!(
        "<summary>The worst spike's events ({})</summary>",
        t.worst_spike_events.len()
    )));
}

/// The worst spike's timeline in the trace section: an SVG with the spike's title, a lane
/// per CPU, the task named, and each kind of span told apart by more than colour.
fn check_the_timeline(section: &str) {
    let title = section.find("the worst spike").expect("no timeline");
    let svg = &section[section[..title].rfind("<svg").expect("timeline is an svg")..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    assert!(svg.contains("CPU 1"), "lane label missing");
    assert!(
        svg.contains("python3/"),
        "the stalling task is not named in the timeline"
    );
    assert!(
        !svg.contains("&lt;...&gt;"),
        "an unnamed task in the timeline"
    );
    assert!(svg.contains("deadline") && svg.contains("switch-in / wake"));
    // Each kind of span by more than colour: the softirq striped, the second task its
    // own pattern, each as its span and its legend box; the deadline dashed.
    for id in ["latscope-span-softirq", "latscope-span-task-1"] {
        assert!(
            svg.contains(&format!("<pattern id=\"{id}\"")),
            "{id}: {svg}"
        );
        assert!(
            svg.matches(&format!("fill=\"url(#{id})\"")).count() >= 2,
            "{id}: span and legend: {svg}"
        );
    }
    assert!(svg.contains("softirq\n"), "softirq in the legend");
    assert!(
        svg.contains("stroke=\"#111111\" stroke-dasharray"),
        "deadline dashed"
    );
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    common::test_cases![
        table_snapshot,
        csv_snapshot,
        markdown_snapshot,
        lava_snapshot,
        junit_snapshot,
        html_snapshot,
        json_round_trips,
        junit_has_the_structure_ci_servers_read,
        html_escapes_system_and_user_strings_and_needs_no_network,
        report_rerenders_in_every_format,
        report_refuses_two_exports_on_stdout,
        bad_and_older_files_get_an_error_naming_the_file_and_the_problem,
        html_has_the_trace_section
    ]
}
