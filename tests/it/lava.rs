//! A real LAVA job (issues 13, 21): contrib/lava/local/run.sh has lava-run boot Debian's
//! stock and PREEMPT_RT kernels under QEMU (TCG) with a ramdisk holding this build of
//! latscope, run contrib/lava/latscope.yaml there and record LAVA's results (results.tsv,
//! from LAVA's own results entries). Each kernel's job must end well, with a test set per
//! scenario and a case per statistic; every statistic `latscope report` reads from the job
//! log must equal the measurement LAVA recorded, exactly, and none may be missing; the
//! preemption model must be a line of the log naming the kernel that booted (the case
//! name carries none); the JSON, HTML and JUnit files must be test references to the
//! uploaded files; no progress-line escape codes on the serial console; then
//! `latscope compare --by kernel` reads the two jobs' logs.

use crate::common::*;
use latscope::result::Run;
use latscope::stats::Stat;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Why the job cannot run here (None: it can).
fn unavailable() -> Option<String> {
    if latscope::sys::process::effective_uid() != 0 {
        return Some("lava-run needs root".into());
    }
    let busybox_static = Command::new("file")
        .args(["-L", "/bin/busybox"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("statically linked"));
    missing("lava-run", "lava-dispatcher")
        .or_else(|| missing("qemu-system-x86_64", "qemu-system-x86"))
        .or_else(|| missing("cpio", "cpio"))
        .or_else(|| {
            (!busybox_static).then(|| "no static busybox (apt-get install busybox-static)".into())
        })
        .or_else(|| {
            let known = Command::new("apt-cache")
                .args(["depends", "linux-image-rt-amd64"])
                .output()
                .is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
            (!known).then(|| "apt knows no linux-image-rt-amd64 (apt-get update)".into())
        })
}

/// One row of run.sh's results.tsv (LAVA's results entries).
pub struct LavaResult {
    pub result: String,
    /// As LAVA logged it (`1638.4`, `47.0`).
    pub measurement: String,
    pub units: String,
    pub reference: String,
}

pub type Results = BTreeMap<String, BTreeMap<String, LavaResult>>;

pub fn read_results(tsv: &str) -> Results {
    let mut kernels = Results::new();
    for line in tsv.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 6, "a results.tsv row: {line:?}");
        kernels.entry(f[0].to_string()).or_default().insert(
            f[1].to_string(),
            LavaResult {
                result: f[2].to_string(),
                measurement: f[3].to_string(),
                units: f[4].to_string(),
                reference: f[5].to_string(),
            },
        );
    }
    kernels
}

/// The log's error lines, to show when a job went wrong.
fn log_errors(dir: &Path, kernel: &str) -> String {
    std::fs::read_to_string(dir.join(format!("{kernel}.log")))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("\"lvl\": \"error\"") || l.contains("\"lvl\": \"exception\""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `latscope report FILE --format json`, read back as a Run.
pub fn report_json(file: &Path) -> Run {
    let out = latscope()
        .arg("report")
        .arg(file)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "report {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("report's JSON is a Run")
}

/// Every statistic `report` reads from a kernel's job log is the measurement LAVA recorded
/// for its case, to the ns (counts exactly), and every latscope case LAVA recorded is read.
pub fn log_reads_what_lava_recorded(kernel: &str, log: &Run, cases: &BTreeMap<String, LavaResult>) {
    let unreadable: Vec<&String> = log
        .warnings
        .iter()
        .filter(|w| w.code.to_string() != "lava_failed_cases")
        .map(|w| &w.message)
        .collect();
    assert!(unreadable.is_empty(), "{kernel}: {unreadable:#?}");
    let mut read = 0;
    for sc in &log.scenarios {
        let set = latscope::report::lava::lava_name(&sc.name);
        for th in &sc.threads {
            let cpu = latscope::result::metric_label(&format!("cpu{}", th.cpu), th.metric);
            for &stat in Stat::ALL
                .iter()
                .filter(|&&s| !latscope::result::stat_unknown(th, s))
            {
                let case = latscope::report::lava::lava_name(&format!("{cpu} {stat}"));
                let path = format!("0_latscope/{set}/{case}");
                let lava = cases
                    .get(&path)
                    .unwrap_or_else(|| panic!("{kernel}: report read {path}, LAVA has none"));
                let m: f64 = lava.measurement.parse().expect("LAVA's measurement");
                let (expected, unit) = if stat.is_count() {
                    (m, "count")
                } else {
                    ((m * 1e3).round(), "us")
                };
                assert_eq!(lava.units, unit, "{kernel}: {path}");
                assert_eq!(
                    th.summary.stat(stat),
                    expected,
                    "{kernel}: {path}: report read {} ns, LAVA recorded {} {unit}",
                    th.summary.stat(stat),
                    lava.measurement
                );
                read += 1;
            }
        }
    }
    let recorded = cases
        .iter()
        .filter(|(path, r)| path.matches('/').count() == 2 && !r.measurement.is_empty())
        .count();
    assert!(read >= 6, "{kernel}: {read} statistics read");
    assert_eq!(
        read, recorded,
        "{kernel}: every measurement LAVA recorded is read"
    );
}

fn stock_and_rt_kernels_run_latscope_under_lava() {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/lava/local/run.sh");
    // Two QEMU guests under TCG keep both CPUs busy: never beside a latency test.
    let _lock = latency_lock();
    let out = Command::new(&script)
        .arg(dir.path())
        .env("LATSCOPE", latscope_path())
        .env("DURATION", "2s")
        .output()
        .expect("run.sh runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("{stdout}");
    let tsv = std::fs::read_to_string(dir.path().join("results.tsv")).unwrap_or_default();
    let kernels = read_results(&tsv);
    assert!(out.status.success(), "run.sh failed:\n{stdout}{stderr}");
    assert_eq!(kernels.len(), 2, "two kernels' results: {tsv}");
    for (kernel, cases) in &kernels {
        let passed = |case: &str| cases.get(case).is_some_and(|r| r.result == "pass");
        for case in [
            "lava/job",
            "lava/0_latscope",
            "0_latscope/latscope-ran",
            "0_latscope/latscope-preemption",
        ] {
            let errors = log_errors(dir.path(), kernel);
            assert!(
                passed(case),
                "{kernel}: {case} did not pass\n{tsv}\n{errors}"
            );
        }
        let set = "0_latscope/timer_clock-nanosleep_1ms";
        let us: Vec<f64> = ["min", "avg", "p99", "max"]
            .iter()
            .map(|stat| {
                cases[&format!("{set}/cpu1_{stat}")]
                    .measurement
                    .parse()
                    .unwrap()
            })
            .collect();
        assert!(
            us.windows(2).all(|w| w[0] <= w[1]) && us[0] > 0.0,
            "{kernel}: min, avg, p99, max = {us:?} µs"
        );
        // The job's limit is max=1s: the verdicts LAVA recorded follow latscope's figure
        // (a TCG guest's maximum is the emulation's, so either verdict may be right).
        let verdict = if us[3] <= 1_000_000.0 { "pass" } else { "fail" };
        for case in [
            format!("{set}/cpu1_max"),
            "0_latscope/latscope-limits".into(),
        ] {
            let got = cases.get(&case).map(|r| r.result.as_str());
            assert_eq!(got, Some(verdict), "{kernel}: {case} with max {} µs", us[3]);
        }
        let log_file = dir.path().join(format!("{kernel}.log"));
        let log = report_json(&log_file);
        log_reads_what_lava_recorded(kernel, &log, cases);
        // The model is a line of the log, as latscope read it on the guest.
        let rt = kernel.ends_with("-rt-amd64");
        assert_eq!(log.system.kernel_release, *kernel);
        assert_eq!(
            log.system.preemption_model == "PREEMPT_RT",
            rt,
            "{kernel}: {}",
            log.system.preemption_model
        );
        artefacts_are_references(dir.path(), kernel, cases, &log);
        let text = std::fs::read_to_string(&log_file).unwrap();
        for escape in ["\\e[", "\\x1B", "\u{1b}", "[2K", "\\u2801"] {
            assert!(
                !text.contains(escape),
                "{kernel}: {escape:?} in the job log"
            );
        }
    }
    compare_by_kernel(dir.path(), &kernels);
}

/// The JSON, HTML and JUnit files are test references to the uploaded files, whole: the
/// JSON's statistics are the log's to the 10 ns the LAVA cases carry.
fn artefacts_are_references(
    dir: &Path,
    kernel: &str,
    cases: &BTreeMap<String, LavaResult>,
    log: &Run,
) {
    for file in ["latscope.json", "latscope.html", "latscope-junit.xml"] {
        let r = &cases[&format!("0_latscope/{file}")];
        assert_eq!(r.result, "pass", "{kernel}: {file}");
        assert!(
            r.reference
                .ends_with(&format!("/artefacts/{kernel}/{file}")),
            "{kernel}: {file} refers to {}",
            r.reference
        );
    }
    let json = dir.join(format!("artefacts/{kernel}/latscope.json"));
    let run = report_json(&json);
    let (a, b) = (&run.scenarios[0].threads[0], &log.scenarios[0].threads[0]);
    for stat in [Stat::Min, Stat::Avg, Stat::P99, Stat::P999, Stat::Max] {
        let (full, lava) = (a.summary.stat(stat), b.summary.stat(stat));
        assert!(
            (full - lava).abs() <= 5.0,
            "{kernel}: {stat} {full} ns in the JSON, {lava} ns in the log"
        );
    }
    let html = std::fs::read_to_string(dir.join(format!("artefacts/{kernel}/latscope.html")));
    assert!(
        html.is_ok_and(|h| h.trim_end().ends_with("</html>")),
        "{kernel}: whole HTML"
    );
}

/// The two jobs' logs, as lava-run wrote them, compared by kernel.
fn compare_by_kernel(dir: &Path, kernels: &Results) {
    let logs: Vec<std::path::PathBuf> = kernels
        .keys()
        .map(|k| dir.join(format!("{k}.log")))
        .collect();
    let out = latscope()
        .arg("compare")
        .args(&logs)
        .args(["--by", "kernel"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{table}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for column in ["PREEMPT_RT", "PREEMPT_DYNAMIC", "timer clock-nanosleep"] {
        assert!(table.contains(column), "{column} in\n{table}");
    }
}

pub fn cases() -> Vec<Case> {
    cases_unless(
        unavailable(),
        &[(
            "stock_and_rt_kernels_run_latscope_under_lava",
            stock_and_rt_kernels_run_latscope_under_lava,
        )],
    )
}
