//! `latscope doctor` for real: the read-only checklist on this machine and on a fixture
//! tree (exit codes, JSON with every check ID), a run as `nobody` (SKIPs and a note, no
//! crash), a planned run judged, bad input, and the measured A/B as root: a number
//! printed and cpu_dma_latency what it was before, and the traced window's host stops
//! on platform.hypervisor (the numbers themselves are not judged).

use crate::common::{self, latscope};
use serde_json::Value;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/doctor");

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn finding<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("{id} missing: {doc}"))
}

/// The exit code the verdict documents.
fn code_of(doc: &Value) -> i32 {
    match doc["verdict"].as_str().unwrap() {
        "ready" => 0,
        "warnings" => 1,
        "not_ready" => 7,
        v => panic!("verdict {v}"),
    }
}

fn quick_checklist_on_this_machine() {
    let started = std::time::Instant::now();
    let out = latscope()
        .args(["doctor", "--quick", "--export-json", "-"])
        .output()
        .unwrap();
    let doc = json_of(&out);
    assert_eq!(out.status.code(), Some(code_of(&doc)));
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    assert_eq!(doc["schema"], "latscope-doctor/2");
    assert_eq!(doc["measured"], false);
    let n = doc["findings"].as_array().unwrap().len();
    assert_eq!(n, 36, "every check but the planned run's: {doc}");
    for f in doc["findings"].as_array().unwrap() {
        let status = f["status"].as_str().unwrap();
        assert!(
            ["pass", "warn", "fail", "skip", "info"].contains(&status),
            "{f}"
        );
        assert!(
            ["read", "measured"].contains(&f["basis"].as_str().unwrap()),
            "{f}"
        );
        if status == "warn" || status == "fail" {
            assert!(f["fix"].as_str().is_some_and(|s| !s.is_empty()), "{f}");
        }
    }
    let text = latscope().args(["doctor", "--quick"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.starts_with("latscope doctor: "),
        "verdict first: {text}"
    );
    for group in [
        "Kernel",
        "CPUs",
        "Memory",
        "Scheduling",
        "Clock and platform",
        "Permissions",
        "Priorities",
    ] {
        assert!(text.contains(&format!("\n{group}\n")), "{group}: {text}");
    }
}

fn fixture_tree_exit_code_and_json() {
    let out = latscope()
        .args([
            "doctor",
            "--root",
            &format!("{FIXTURES}/this-vm"),
            "--export-json",
            "-",
        ])
        .output()
        .unwrap();
    let doc = json_of(&out);
    assert_eq!(out.status.code(), Some(7), "{doc}");
    assert_eq!(doc["verdict"], "not_ready");
    assert_eq!(finding(&doc, "kernel.preempt_rt")["status"], "warn");
    assert_eq!(finding(&doc, "platform.hypervisor")["status"], "warn");
    assert_eq!(finding(&doc, "sched.rt_throttling")["status"], "warn");
    assert_eq!(finding(&doc, "cpus.isolation")["status"], "warn");
    let out = latscope()
        .args([
            "doctor",
            "--root",
            &format!("{FIXTURES}/rt-4.19-renamed-config"),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The trees recorded in the arm64 lab's guests (issue 38): the hypervisor from the
/// device tree, no per-CPU IRQ advised on, ttyAMA0 in the console's fix, PREEMPT_RT on
/// the RT guest; the saved JSON rendered again by `report`, the user's next command.
fn arm64_guest_trees_read_as_the_guests_were() {
    let dir = tempfile::tempdir().unwrap();
    for (tree, rt) in [("arm64-virt-6.1", "warn"), ("arm64-virt-6.1-rt", "pass")] {
        let saved = dir.path().join(format!("{tree}.json"));
        let out = latscope()
            .args([
                "doctor",
                "--cpus",
                "1",
                "--root",
                &format!("{FIXTURES}/{tree}"),
            ])
            .arg("--export-json")
            .arg(&saved)
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
        assert_eq!(out.status.code(), Some(code_of(&doc)), "{doc}");
        assert_eq!(finding(&doc, "kernel.preempt_rt")["status"], rt, "{tree}");
        let hv = finding(&doc, "platform.hypervisor");
        assert_eq!(hv["status"], "warn");
        assert!(hv["summary"]
            .as_str()
            .unwrap()
            .contains("QEMU virt machine"));
        assert_eq!(
            finding(&doc, "cpus.irq_affinity")["status"],
            "pass",
            "{tree}"
        );
        let console = finding(&doc, "kernel.serial_console")["fix"]
            .as_str()
            .unwrap();
        assert!(console.contains("console=ttyAMA0") && !console.contains("ttyS"));
        let again = latscope().arg("report").arg(&saved).output().unwrap();
        let text = String::from_utf8_lossy(&again.stdout);
        assert!(text.contains("QEMU virt machine"), "{text}");
    }
}

/// The checklist on a pipe fits `COLUMNS` (80 when 0 or unset, as a serial console).
fn checklist_fits_columns() {
    for (columns, fits) in [("80", 80), ("200", 200), ("0", 80)] {
        let out = latscope()
            .env("COLUMNS", columns)
            .args(["doctor", "-v", "--root", &format!("{FIXTURES}/this-vm")])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.starts_with("latscope doctor: NOT READY"), "{text}");
        for line in text.lines() {
            assert!(line.chars().count() <= fits, "COLUMNS={columns}: {line}");
        }
    }
}

fn planned_sched_other_run_is_warned_about() {
    let out = latscope()
        .args([
            "doctor",
            "--quick",
            "--export-json",
            "-",
            "--",
            "timer",
            "--cpus",
            "1",
            "--policy",
            "other",
        ])
        .output()
        .unwrap();
    let doc = json_of(&out);
    assert_eq!(doc["planned_run"], "timer --cpus 1 --policy other");
    let policy = finding(&doc, "setup.policy");
    assert_eq!(policy["status"], "warn", "{policy}");
    assert!(
        policy["summary"].as_str().unwrap().contains("fairness"),
        "{policy}"
    );
    assert_eq!(
        doc["cpus"],
        serde_json::json!([1]),
        "the planned run's CPUs are judged"
    );
}

fn bad_input_names_value_and_range() {
    for (args, needles) in [
        (vec!["--priority", "0"], vec!["0", "1..=99"]),
        (vec!["--cpus", "7"], vec!["CPU 7 is not online", "--cpus"]),
        (
            vec!["--root", "/nonexistent-doctor-root"],
            vec!["--root", "not a directory"],
        ),
        (vec!["--try", "reboot"], vec!["reboot", "isolate"]),
        (
            vec!["--", "report", "x.json"],
            vec!["not a measuring command"],
        ),
    ] {
        let out = latscope()
            .arg("doctor")
            .arg("--quick")
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        for n in needles {
            assert!(stderr.contains(n), "{args:?}: lacks '{n}': {stderr}");
        }
    }
}

fn cannot_switch_to_nobody() -> Option<String> {
    if latscope::sys::process::effective_uid() != 0 {
        return Some("needs root to become nobody".into());
    }
    common::missing("setpriv", "util-linux")
}

/// Without root: every check answers (a SKIP where a file is root's), nothing is
/// measured, and the note says why; never a crash.
fn as_nobody_it_skips_and_says_why() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("latscope-doctor-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = dir.path().join("latscope");
    std::fs::copy(common::latscope_path(), &bin).unwrap();
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(&bin)
        .args(["doctor", "--export-json", "-"])
        .current_dir("/")
        .output()
        .unwrap();
    let doc = json_of(&out);
    assert_eq!(out.status.code(), Some(code_of(&doc)));
    assert_eq!(doc["measured"], false);
    assert!(
        doc["notes"][0].as_str().unwrap().starts_with("not root"),
        "{doc}"
    );
    let fifo = finding(&doc, "perm.sched_fifo");
    assert_eq!(
        fifo["status"], "fail",
        "nobody has no RT rights here: {fifo}"
    );
    assert!(
        finding(&doc, "cpus.cstates")["evidence"]
            .to_string()
            .contains("not readable without root"),
        "{doc}"
    );
}

fn no_dma_device() -> Option<String> {
    if latscope::sys::process::effective_uid() != 0 {
        return Some("needs root (holds /dev/cpu_dma_latency)".into());
    }
    (!std::path::Path::new("/dev/cpu_dma_latency").exists())
        .then(|| "no /dev/cpu_dma_latency".into())
}

/// The real A/B: one pair, a number printed, the knob as it was.
fn dma_latency_ab_restores_the_knob_and_prints_a_number() {
    let _lock = common::latency_lock();
    let before = latscope::sys::dma_latency::current_us();
    let out = latscope()
        .args(["doctor", "--pairs", "1", "--export-json", "-"])
        .output()
        .unwrap();
    let after = latscope::sys::dma_latency::current_us();
    // The value is the aggregate of every open request: another run (another worktree's
    // test) may hold one. Equal, or someone else holds a request now.
    let others = latscope::sys::dma_latency::holders();
    assert!(
        before == after || !others.is_empty(),
        "cpu_dma_latency {before:?} -> {after:?}, held by nobody"
    );
    let doc = json_of(&out);
    assert_eq!(out.status.code(), Some(code_of(&doc)));
    assert_eq!(doc["measured"], true, "{doc}");
    let cstates = finding(&doc, "cpus.cstates");
    let m = &cstates["measured"][0];
    let summary = m["summary"].as_str().unwrap();
    // One pair cannot decide: the verdict and its test are printed and in the JSON.
    assert!(
        summary.starts_with("cpu_dma_latency 0: p99 ")
            && summary.contains(" → ")
            && summary.contains("): within noise (sign test: lower in ")
            && summary.contains(" of 1 pair, p = ")
            && summary.ends_with("; 1 pair cannot decide: 6 at least)"),
        "{summary}"
    );
    let test = &m["test"];
    assert_eq!(test["method"], "sign test", "{m}");
    assert_eq!(
        (test["pairs"].as_u64(), test["verdict"].as_str()),
        (Some(1), Some("within_noise")),
        "{m}"
    );
    assert_eq!(test["stopped"], "cap", "{m}");
    assert!(m.get("bearing").is_none(), "one pair bears on nothing: {m}");
    assert_eq!(m["restored"], true, "{m}");
    let pair = m["pairs_ns"][0].as_array().unwrap();
    assert!(pair.iter().all(|v| v.as_u64().unwrap() > 0), "{m}");
    // The observation window: interrupts counted on the CPU.
    let iso = finding(&doc, "cpus.isolation");
    assert!(
        iso["measured"][0]["summary"]
            .as_str()
            .unwrap()
            .contains("local timer interrupts"),
        "{iso}"
    );
    // ... and the kernel threads that ran there, counted and named (or none).
    assert!(
        iso["measured"].as_array().unwrap().iter().any(|m| {
            let s = m["summary"].as_str().unwrap_or_default();
            s.starts_with("kernel threads ran ") && s.contains(" on CPU ") && s.contains(" ×")
                || s.starts_with("no kernel thread ran on CPU ")
        }),
        "{iso}"
    );
    // The traced window: the host's stops counted on platform.hypervisor, with evidence
    // (the number is not judged: it is the host's, not latscope's).
    let hv = finding(&doc, "platform.hypervisor");
    let line = hv["measured"][0]["summary"].as_str().unwrap_or_default();
    assert!(
        line.contains("with --trace:")
            && (line.contains("had no guest event")
                || line.contains("was without a guest event")
                || line.contains("no gap of 10 µs")),
        "{hv}"
    );
    assert!(
        hv["evidence"].as_array().unwrap().iter().any(|e| e
            .as_str()
            .unwrap()
            .starts_with("traced noise window on CPU")),
        "{hv}"
    );
}

/// Puts the console log level back when dropped (the test lowers it as `dmesg -n 1`).
struct PrintkBack(String);

impl Drop for PrintkBack {
    fn drop(&mut self) {
        let level = self.0.split_whitespace().next().unwrap_or("4").to_string();
        let _ = std::fs::write("/proc/sys/kernel/printk", level);
    }
}

fn quick_json() -> Value {
    let out = latscope()
        .args(["doctor", "--quick", "--export-json", "-"])
        .output()
        .unwrap();
    json_of(&out)
}

/// The wrong verdicts of issue 36 where this machine shows them: cpu_dma_latency held at 0
/// by another process (cpus.cstates warned a 1 µs haltpoll state "allowed while
/// cpu_dma_latency is 0 µs"), the console after `dmesg -n 1` (it warned the same), and
/// the hypervisor the kernel log and CPUID name (it said "unidentified").
fn this_machine_held_dma_latency_printk_and_hypervisor() {
    let _lock = common::latency_lock();
    {
        let _held = latscope::sys::dma_latency::DmaLatencyGuard::hold(0).unwrap();
        let doc = quick_json();
        let c = finding(&doc, "cpus.cstates");
        let summary = c["summary"].as_str().unwrap();
        assert!(
            !summary.contains("allowed while cpu_dma_latency is 0 µs"),
            "{c}"
        );
        assert!(
            c["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e == "/dev/cpu_dma_latency: 0 µs"),
            "{c}"
        );
    }
    let printk = std::fs::read_to_string("/proc/sys/kernel/printk").unwrap();
    {
        let _back = PrintkBack(printk.clone());
        std::fs::write("/proc/sys/kernel/printk", "1").unwrap();
        let doc = quick_json();
        let c = finding(&doc, "kernel.serial_console");
        assert_eq!(c["status"], "pass", "after `dmesg -n 1`: {c}");
    }
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/printk").unwrap(),
        printk
    );
    let doc = quick_json();
    let hv = finding(&doc, "platform.hypervisor");
    let evidence: Vec<&str> = hv["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    if let Some(sig) = latscope::sys::cpuid::hypervisor_signature() {
        let line = format!("CPUID 0x40000000 signature: {sig}");
        assert!(evidence.contains(&line.as_str()), "{hv}");
        assert!(
            !hv["summary"].as_str().unwrap().contains("unidentified"),
            "{hv}"
        );
    }
    let log = latscope::sys::kmsg::messages().unwrap_or_default();
    if let Some(line) = log.lines().find(|l| l.contains("Hypervisor detected: ")) {
        assert!(
            evidence.contains(&format!("kernel log: {}", line.trim()).as_str()),
            "{hv}"
        );
    }
}

/// The user's next command after `doctor --export-json`: `report` of that file as the
/// checklist, Markdown and HTML; run-only options refused naming what it offers.
fn report_renders_a_saved_doctor_file() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("doctor.json");
    let out = latscope()
        .args([
            "doctor",
            "--root",
            &format!("{FIXTURES}/this-vm"),
            "--cpus",
            "1",
        ])
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    let (md, html) = (dir.path().join("d.md"), dir.path().join("d.html"));
    let out = latscope()
        .arg("report")
        .arg(&json)
        .arg("--export-markdown")
        .arg(&md)
        .arg("--export-html")
        .arg(&html)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        stdout.starts_with("latscope doctor: NOT READY ("),
        "{stdout}"
    );
    assert!(stdout.contains("WARN sched.rt_throttling"), "{stdout}");
    assert!(
        stdout.contains("· /proc/sys/kernel/sched_rt_runtime_us: 950000"),
        "{stdout}"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.starts_with("# latscope doctor: NOT READY\n"), "{md}");
    assert!(
        md.contains("\n| WARN | `sched.rt_throttling` | RT throttling on"),
        "{md}"
    );
    assert!(
        md.contains("<br>**fix:** `sysctl kernel.sched_rt_runtime_us=-1"),
        "{md}"
    );
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(
        html.contains("<h1>latscope doctor: NOT READY</h1>"),
        "{html}"
    );
    assert!(html.contains("<code>sched.rt_throttling</code>"), "{html}");
    let out = latscope()
        .arg("report")
        .arg(&json)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("csv") && stderr.contains("markdown"),
        "{stderr}"
    );
}

pub fn cases() -> Vec<common::Case> {
    let mut cases = common::test_cases![
        quick_checklist_on_this_machine,
        fixture_tree_exit_code_and_json,
        arm64_guest_trees_read_as_the_guests_were,
        report_renders_a_saved_doctor_file,
        checklist_fits_columns,
        planned_sched_other_run_is_warned_about,
        bad_input_names_value_and_range,
    ];
    cases.push(
        common::case(
            "as_nobody_it_skips_and_says_why",
            as_nobody_it_skips_and_says_why,
        )
        .unless(cannot_switch_to_nobody()),
    );
    cases.push(
        common::case(
            "this_machine_held_dma_latency_printk_and_hypervisor",
            this_machine_held_dma_latency_printk_and_hypervisor,
        )
        .unless(no_dma_device()),
    );
    cases.push(
        common::case(
            "dma_latency_ab_restores_the_knob_and_prints_a_number",
            dma_latency_ab_restores_the_knob_and_prints_a_number,
        )
        .unless(no_dma_device()),
    );
    cases
}
