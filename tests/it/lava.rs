//! A real LAVA job (issue 13): contrib/lava/local/run.sh has lava-run boot Debian's stock
//! and PREEMPT_RT kernels under QEMU (TCG) with a ramdisk holding this build of latscope,
//! run contrib/lava/latscope.yaml there and record LAVA's results. Each kernel's job must
//! end well, every statistic must come back as a test case with its measurement in µs,
//! and the preemption model latscope read must name the kernel that booted; then
//! `latscope compare --by kernel` reads the two jobs' logs.

use crate::common::*;
use std::collections::BTreeMap;
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

/// One row of run.sh's results.tsv.
struct LavaResult {
    result: String,
    measurement: Option<f64>,
    units: String,
}

fn stock_and_rt_kernels_run_latscope_under_lava() {
    let dir = tempfile::tempdir().unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/lava/local/run.sh");
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
    let mut kernels: BTreeMap<String, BTreeMap<String, LavaResult>> = BTreeMap::new();
    for line in tsv.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 5, "a results.tsv row: {line:?}");
        kernels.entry(f[0].to_string()).or_default().insert(
            f[1].to_string(),
            LavaResult {
                result: f[2].to_string(),
                measurement: f[3].parse().ok(),
                units: f[4].to_string(),
            },
        );
    }
    let logs = |kernel: &str| {
        std::fs::read_to_string(dir.path().join(format!("{kernel}.log")))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("\"lvl\": \"error\"") || l.contains("\"lvl\": \"exception\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(out.status.success(), "run.sh failed:\n{stdout}{stderr}");
    assert_eq!(kernels.len(), 2, "two kernels' results: {tsv}");
    for (kernel, cases) in &kernels {
        let rt = kernel.ends_with("-rt-amd64");
        let passed = |case: &str| cases.get(case).is_some_and(|r| r.result == "pass");
        for case in ["lava/job", "lava/0_latscope", "0_latscope/latscope-ran"] {
            assert!(
                passed(case),
                "{kernel}: {case} did not pass\n{tsv}\n{}",
                logs(kernel)
            );
        }
        let mut us = Vec::new();
        for stat in ["min", "avg", "p99", "max"] {
            let case = format!("0_latscope/timer_clock-nanosleep_1ms_cpu1_{stat}");
            let r = cases
                .get(&case)
                .unwrap_or_else(|| panic!("{kernel}: no {case}\n{tsv}"));
            assert_eq!(r.units, "us", "{kernel}: {case}");
            let value = r
                .measurement
                .unwrap_or_else(|| panic!("{kernel}: {case} has no measurement"));
            assert!(value > 0.0, "{kernel}: {case} measured {value} µs");
            us.push(value);
        }
        assert!(
            us.windows(2).all(|w| w[0] <= w[1]),
            "{kernel}: min, avg, p99, max = {us:?} µs"
        );
        // The job's limit is max=1s: the verdicts LAVA recorded follow latscope's figure
        // (a TCG guest's maximum is the emulation's, so either verdict may be right).
        let within = us[3] <= 1_000_000.0;
        let verdict = if within { "pass" } else { "fail" };
        for case in [
            "0_latscope/timer_clock-nanosleep_1ms_cpu1_max",
            "0_latscope/latscope-limits",
        ] {
            assert_eq!(
                cases.get(case).map(|r| r.result.as_str()),
                Some(verdict),
                "{kernel}: {case} with max {} µs",
                us[3]
            );
        }
        let preemption: Vec<&String> = cases
            .keys()
            .filter(|c| c.starts_with("0_latscope/latscope-preemption-"))
            .collect();
        assert_eq!(preemption.len(), 1, "{kernel}: {preemption:?}");
        assert_eq!(
            preemption[0].ends_with("-PREEMPT_RT"),
            rt,
            "{kernel}: latscope read {}",
            preemption[0]
        );
    }
    // The two jobs' logs, as lava-run wrote them, compared by kernel.
    let logs: Vec<std::path::PathBuf> = kernels
        .keys()
        .map(|k| dir.path().join(format!("{k}.log")))
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
