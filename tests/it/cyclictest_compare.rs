//! latscope beside cyclictest: the real cyclictest (rt-tests) and latscope measure the
//! same CPU, and `compare` reads cyclictest's --json output (with and without its
//! histogram) and aligns it with latscope's scenario.

use crate::common;

use common::{case, missing, usable_cpu};

fn cyclictest(cpu: usize, histogram: bool, json: &std::path::Path) {
    let mut cmd = std::process::Command::new("cyclictest");
    cmd.args([
        "-m", "-q", "-l", "1000", "-i", "1000", "-p", "95", "-t", "1",
    ])
    .arg(format!("-a{cpu}"))
    .arg(format!("--json={}", json.display()));
    if histogram {
        cmd.args(["-h", "1000"]);
    }
    let out = cmd.output().expect("running cyclictest");
    assert!(
        out.status.success(),
        "cyclictest: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The converted run of a cyclictest JSON with a histogram: timer probe, method marked as
/// cyclictest, histogram kept. Returns its minimum (ns).
fn assert_imported(ct: &std::path::Path, cpu: usize) -> u64 {
    let run = latscope::import::cyclictest::load_any(ct).unwrap();
    let sc = &run.scenarios[0];
    assert_eq!(sc.probe, latscope::result::ProbeKind::Timer);
    assert_eq!(sc.params.method, "clock-nanosleep (cyclictest)");
    assert_eq!(sc.params.period_ns, 1_000_000);
    let th = &sc.threads[0];
    assert_eq!(th.cpu, cpu);
    assert_eq!(th.summary.samples, 1000);
    assert!(!th.histogram.is_empty());
    let counted: u64 = th.histogram.iter().map(|b| b[1]).sum();
    assert_eq!(
        counted, 1000,
        "every cycle in the histogram (overflows at the max)"
    );
    assert!(th.summary.min_ns <= th.summary.p50_ns && th.summary.p50_ns <= th.summary.p99_ns);
    assert!(th.summary.p99_ns <= th.summary.max_ns);
    // The median is inside the histogram; percentiles beyond it would be marked unknown.
    assert!(!latscope::report::stat_unknown(
        th,
        latscope::stats::Stat::P50
    ));
    th.summary.min_ns
}

fn compare_reads_real_cyclictest_output_beside_latscope_on_the_same_cpu() {
    let _lock = common::latency_lock();
    let cpu = usable_cpu();
    let dir = tempfile::tempdir().unwrap();
    let ct = dir.path().join("cyclictest.json");
    let ct_plain = dir.path().join("cyclictest-nohist.json");
    let ls = dir.path().join("latscope.json");
    cyclictest(cpu, true, &ct);
    cyclictest(cpu, false, &ct_plain);
    common::latscope()
        .args([
            "timer",
            "-l",
            "1000",
            "--warmup",
            "0",
            "-q",
            "--cpus",
            &cpu.to_string(),
        ])
        .arg("--export-json")
        .arg(&ls)
        .assert()
        .success();

    let ct_min = assert_imported(&ct, cpu) as f64;

    let out = common::latscope()
        .arg("compare")
        .args([&ls, &ct, &ct_plain])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One aligned scenario with all three runs in it (one table under its label, a column
    // per file), and a verdict for each.
    let label = format!("timer clock-nanosleep 1 ms cpu{cpu}");
    assert!(text.contains(&format!("\n{label}\n")), "{text}");
    assert!(!text.contains("not compared:"), "all three align: {text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.contains(&format!("{label} in cyclictest")))
            .count(),
        2,
        "{text}"
    );
    // Without a histogram cyclictest has no percentiles: shown as – and not judged.
    let p99_row = text.lines().find(|l| l.contains(" p99 ")).expect(&text);
    assert!(p99_row.contains('–'), "{p99_row}");
    // Both tools see the same machine: minima within an order of magnitude.
    let latscope_run = latscope::result::Run::load(&ls).unwrap();
    let ls_min = latscope_run.scenarios[0].threads[0].summary.min_ns as f64;
    assert!(
        ls_min / ct_min < 10.0 && ct_min / ls_min < 10.0,
        "min {ls_min} vs {ct_min}"
    );
}

/// A `cyclictest -t 2` file (tests/fixtures/cyclictest_t2_distance.json, recorded with
/// rt-tests 2.4: `cyclictest -m -q -t 2 -a 1 -l 1000 -p 95 --json=FILE`): cyclictest's
/// default `-d 500` runs thread 1 at 1.5 ms, so `report` and `compare` show each thread
/// at its own interval (and both threads, though they share CPU 1).
fn import_labels_each_thread_with_its_own_interval() {
    let path = common::fixture("cyclictest_t2_distance.json");
    let run = latscope::import::cyclictest::load_any(&path).unwrap();
    let threads: Vec<(u64, usize, u64)> = run
        .scenarios
        .iter()
        .flat_map(|sc| {
            sc.threads
                .iter()
                .map(move |t| (sc.params.period_ns, t.cpu, t.summary.samples))
        })
        .collect();
    assert_eq!(
        threads,
        vec![(1_000_000, 1, 1000), (1_500_000, 1, 671)],
        "the recorded T: lines: I:1000 C:1000 and I:1500 C:671"
    );
    let second = &run.scenarios[1];
    assert_eq!(second.elapsed_ns, 671 * 1_500_000);
    assert_eq!(second.threads[0].extra.period_ns, Some(1_500_000));
    let report = common::assert_success(
        common::latscope_command()
            .arg("report")
            .arg(&path)
            .output()
            .unwrap(),
    );
    let text = String::from_utf8_lossy(&report.stdout);
    for name in ["(cyclictest) 1 ms", "(cyclictest) 1.5 ms"] {
        assert!(text.contains(name), "{name}: {text}");
    }
    let compare = common::assert_success(
        common::latscope_command()
            .arg("compare")
            .args([&path, &path])
            .output()
            .unwrap(),
    );
    let text = String::from_utf8_lossy(&compare.stdout);
    for label in [
        "timer clock-nanosleep 1 ms cpu1",
        "timer clock-nanosleep 1.5 ms cpu1",
    ] {
        assert!(text.contains(label), "{label}: {text}");
    }
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    vec![
        case(
            "import_labels_each_thread_with_its_own_interval",
            import_labels_each_thread_with_its_own_interval,
        ),
        case(
            "compare_reads_real_cyclictest_output_beside_latscope_on_the_same_cpu",
            compare_reads_real_cyclictest_output_beside_latscope_on_the_same_cpu,
        )
        .unless(missing("cyclictest", "rt-tests")),
    ]
}
