//! `latscope gpio` (issue 24). Here (no gpiolib): the one-line refusal and its exit code.
//! In the GPIO lab (contrib/gpio-lab/run.sh: Debian's stock and PREEMPT_RT kernels under
//! QEMU with gpio-sim built for them), one boot per kernel runs contrib/gpio-lab/checks.sh
//! and this judges what it printed: N stimuli give N samples and 0 missed, a stopped
//! reader's exact missed count, ordered positive stages (per sample, from --raw), the
//! response line read back through gpio-sim, the IRQ thread found with its priority set
//! and restored, and PREEMPT_RT on the RT guest. Counts and order only: under emulation
//! the figures are emulation noise.

use crate::common::lab_output::{assert_preempt_rt, boot_lab, lab_unavailable, LabOutput};

const LAB: &str = "gpio-lab";
use crate::common::*;
use serde_json::Value;

pub fn cases() -> Vec<Case> {
    vec![
        case("refuses_without_gpio", refuses_without_gpio).unless(has_gpio()),
        case("bad_input_names_the_value", bad_input_names_the_value),
        case("lab_stock_kernel", lab_stock_kernel).unless(lab_unavailable(LAB, "stock")),
        case("lab_rt_kernel", lab_rt_kernel).unless(lab_unavailable(LAB, "rt")),
    ]
}

fn has_gpio() -> Option<String> {
    latscope::sys::gpio::chip_paths().first().map(|p| {
        format!(
            "this machine has GPIO chips ({}): the refusal is for machines without",
            p.display()
        )
    })
}

fn refuses_without_gpio() {
    for args in [
        &["gpio", "--list"][..],
        &["gpio", "--in", "GPIO17", "--out", "GPIO27"],
    ] {
        let out = latscope().args(args).output().expect("run latscope");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(8), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains("no /dev/gpiochip*"), "{stderr}");
    }
}

fn bad_input_names_the_value() {
    for (args, needle) in [
        (&["gpio", "--in", "gpiochip0:"][..], "'gpiochip0:'"),
        (
            &["gpio", "--in", "GPIO17", "--event-buffer", "0"],
            "1 to 4096",
        ),
        (
            &["gpio", "--in", "GPIO17", "--irq-priority", "100"],
            "1 to 99",
        ),
        (&["gpio", "--in", "GPIO17", "--mode", "loopback"], "--out"),
        (&["gpio", "--in", "GPIO17", "--period", "5us"], "--period"),
    ] {
        let out = latscope().args(args).output().expect("run latscope");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

fn boot(kernel: &str) -> LabOutput {
    boot_lab(LAB, kernel, &latscope_path())
}

fn lab_stock_kernel() {
    let lab = boot("stock");
    judge(&lab);
    assert_preempt_rt(&lab, false, "counts");
}

fn lab_rt_kernel() {
    let lab = boot("rt");
    judge(&lab);
    assert_preempt_rt(&lab, true, "counts");
}

fn judge(lab: &LabOutput) {
    assert_eq!(lab.fact("list_rc"), "0");
    let list = &lab.sections["list"];
    assert!(
        list.contains("sim-in") && list.contains("sim-out"),
        "{list}"
    );
    counts_and_order(lab);
    stopped_reader(lab);
    response_line(lab);
    irq_thread(lab);
    killed(lab);
    traced(lab);
    hte_refused(lab);
    study(lab);
}

/// `--event-clock hte` on Debian's kernels (CONFIG_HTE off): refused, naming the value,
/// why and the fix.
fn hte_refused(lab: &LabOutput) {
    // 8: the machine lacks what the probe needs (not a runtime failure, not bad input).
    assert_eq!(lab.fact("hte_rc"), "8", "{}", lab.console);
    let text = &lab.sections["hte"];
    for part in ["--event-clock hte", "EOPNOTSUPP", "--event-clock monotonic"] {
        assert!(text.contains(part), "{part}: {text}");
    }
}

/// `gpio --trace`: every one of the 30 edges joined, or (the only other outcomes here)
/// read without the reader going to sleep: `NoWakeup` (the event was queued before its
/// read; seen once in 30 on the RT guest) or `NotAsleep` (woken while still on its CPU,
/// before it switched out; once in CI); every part measured on each joined edge (to_user
/// where the reader's rseq_update was traced); the
/// parts' sum within irq_to_user's sum (what the unjoined edges add) and above it less
/// their largest possible share.
fn traced(lab: &LabOutput) {
    assert_eq!(lab.fact("traced_rc"), "0", "{}", lab.console);
    let run = lab.json("traced");
    let th = &run["scenarios"][0]["trace"]["threads"][0];
    assert_eq!(th["samples_total"], 30, "{th}");
    let joined = th["samples_joined"].as_u64().unwrap();
    let not_slept = |why: &str| th["not_joined"][why].as_u64().unwrap_or(0);
    let no_wakeup = not_slept("NoWakeup") + not_slept("NotAsleep");
    assert_eq!(joined + no_wakeup, 30, "{th}");
    // How many readers slept depends on the host's speed (10 of 30 did not at a 2 ms
    // period while another build ran); at 20 ms most do. Counted exactly, never judged.
    assert!(joined >= 15, "{th}");
    let parts = th["parts"].as_array().expect("parts");
    let names: Vec<&str> = parts
        .iter()
        .map(|p| p["metric"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["irq_thread", "to_wakeup", "switch", "to_user", "remainder"],
        "{th}"
    );
    // to_user needs the reader's rseq_update; an edge without one (once in 27 on the RT
    // guest) has that time in remainder, counted in no_rseq and said in a note.
    let no_rseq = th["no_rseq"].as_u64().unwrap_or(0);
    for p in parts {
        let expected = match p["metric"].as_str() {
            Some("to_user") => joined - no_rseq,
            _ => joined,
        };
        assert_eq!(
            p["samples"], expected,
            "every part measured on every joined edge: {p}"
        );
    }
    if no_rseq > 0 {
        let notes = th["notes"].to_string();
        assert!(notes.contains("to_user not measured for"), "{th}");
    }
    let sum = |t: &Value| t["mean_ns"].as_f64().unwrap() * t["samples"].as_f64().unwrap();
    let i2u = lab.thread("traced", "irq_to_user");
    let (total, max) = (sum(&i2u), i2u["max_ns"].as_f64().unwrap());
    let parts_sum: f64 = parts.iter().map(sum).sum();
    assert!(parts_sum <= total + 30.0, "{total} vs {parts_sum}: {th}");
    assert!(
        parts_sum + no_wakeup as f64 * max >= total - 30.0,
        "{total} vs {parts_sum}: {th}"
    );
}

/// SIGKILL during a run with --checkpoint: `report` shows the partial scenario (its
/// samples so far, ordered percentiles, marked partial).
fn killed(lab: &LabOutput) {
    assert_eq!(lab.fact("killed_rc"), "137", "{}", lab.console);
    assert_eq!(lab.fact("killed_report_rc"), "0", "{}", lab.console);
    let run = lab.json("killed");
    let part = &run["scenarios"][0];
    assert_eq!(part["partial"], true, "{part}");
    assert_eq!(part["probe"], "gpio", "{part}");
    let th = &part["threads"][0];
    // Labelled as the finished loopback labels its live thread: total.
    assert_eq!(th["metric"], "total", "{th}");
    let samples = th["samples"].as_u64().unwrap();
    assert!(samples > 0, "{th}");
    let p = |k: &str| th[k].as_u64().unwrap();
    assert!(
        p("min_ns") <= p("p50_ns") && p("p50_ns") <= p("max_ns"),
        "{th}"
    );
    let table = &lab.sections["killed_table"];
    assert!(table.contains("(partial)"), "{table}");
    assert!(table.contains(&samples.to_string()), "{table}");
}

/// `suite --preset irq-response --gpio-in sim-in --gpio-drive sim`: a row per load, each
/// the simulated GPIO loopback's total, and no note saying the timer was used.
fn study(lab: &LabOutput) {
    assert_eq!(lab.fact("study_rc"), "0", "{}", lab.console);
    let md = &lab.sections["study"];
    for load in ["none (idle)", "net", "io", "serial:115200"] {
        assert!(
            md.lines()
                .any(|l| l.starts_with(&format!("| {load} | GPIO loopback-simulated total |"))),
            "no gpio row for {load}:\n{md}"
        );
    }
    assert!(!md.contains("the interrupt is the timer's"), "{md}");
}

/// 300 driven edges: 300 samples per stage, 0 missed, and per sample t0 < t1 < t2.
fn counts_and_order(lab: &LabOutput) {
    assert_eq!(lab.fact("counts_rc"), "0", "{}", lab.console);
    let run = lab.json("counts");
    assert_eq!(
        run["scenarios"][0]["params"]["method"], "loopback-simulated",
        "labelled simulated"
    );
    for metric in ["drive_to_irq", "irq_to_user", "total"] {
        let t = lab.thread("counts", metric);
        assert_eq!(t["samples"], 300, "{metric}: {t}");
        assert_eq!(t["missed"], 0, "{metric}: {t}");
        assert_eq!(t["extra"]["missed_edges"], 0, "{metric}: {t}");
        assert_eq!(t["extra"]["timeouts"], 0, "{metric}: {t}");
        assert!(t["min_ns"].as_u64().unwrap() > 0, "{metric}: {t}");
    }
    // The probe's warnings are the scenario's; the run's are the machine's.
    let warnings = format!("{}{}", run["warnings"], run["scenarios"][0]["warnings"]);
    assert!(warnings.contains("gpio_simulated"), "{warnings}");
    let raw = lab.sections.get("counts_raw").expect("raw section");
    let path = std::env::temp_dir().join(format!("gpio-raw-{}.csv", std::process::id()));
    // The section ends with the blank line checks.sh prints after every file.
    std::fs::write(&path, raw.trim_end()).unwrap();
    let d2i = raw_rows(&path, "drive_to_irq");
    let i2u = raw_rows(&path, "irq_to_user");
    let total = raw_rows(&path, "total");
    let _ = std::fs::remove_file(&path);
    assert_eq!((d2i.len(), i2u.len(), total.len()), (300, 300, 300));
    for ((a, b), t) in d2i.iter().zip(&i2u).zip(&total) {
        assert_eq!(a[0], t[0], "one edge per row (same drive stamp)");
        assert!(a[1] > 0 && b[1] > 0, "stages positive: {a:?} {b:?}");
        assert_eq!(a[1] + b[1], t[1], "drive→irq + irq→user = total");
    }
}

/// 130 edges: 20 read, 100 while stopped into a buffer of 8, 10 after: 38 samples, 92
/// missed, when the kernel saw every edge. Judged against the edges the kernel saw in each
/// phase (the line's IRQ count): under a loaded host the simulator merges two edges before
/// any event exists, which no reader can count (the guest saw 128 of 130 beside a full test
/// run), so the test judges latscope's count, not the host's pace.
fn stopped_reader(lab: &LabOutput) {
    assert_eq!(lab.fact("stopped_rc"), "130", "{}", lab.console);
    let t = lab.thread("stopped", "irq_to_user");
    let samples = t["samples"].as_u64().unwrap();
    let missed = t["extra"]["missed_edges"].as_u64().unwrap();
    let seen: Vec<u64> = lab
        .fact("stopped_irqs")
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect();
    let [before, stopped, after] = seen[..] else {
        panic!("three phases: {seen:?}")
    };
    assert!(before <= 20 && stopped <= 100 && after <= 10, "{seen:?}");
    if before + stopped + after < 130 {
        eprintln!("gpio lab: the kernel saw {seen:?} of 20, 100 and 10 edges (merged under load)");
    }
    let kept = stopped.min(8);
    assert_eq!(
        (samples, missed),
        (before + kept + after, stopped - kept),
        "every edge the kernel saw counted ({seen:?} per phase): {t}"
    );
    assert_eq!(t["missed"], missed, "{t}");
}

/// The answer follows the input (both edges): gpio-sim's value of sim-out read back.
fn response_line(lab: &LabOutput) {
    assert_eq!(lab.fact("respond_rc"), "130", "{}", lab.console);
    assert_eq!(lab.fact("respond_values"), "1010");
    let t = lab.thread("respond", "user_to_output");
    assert_eq!(t["samples"], 4, "{t}");
}

/// The IRQ thread: found, FIFO 70 while measuring (seen in /proc), put back after.
fn irq_thread(lab: &LabOutput) {
    assert_eq!(lab.fact("irq_rc"), "130", "{}", lab.console);
    // policy 1 = SCHED_FIFO, rt_priority 70.
    assert_eq!(lab.fact("irq_thread_during"), "1 70");
    let t = lab.thread("irq", "total");
    let e = &t["extra"]["irq_thread"];
    assert!(e["name"].as_str().unwrap().starts_with("irq/"), "{e}");
    assert_eq!(e["priority"], 70, "{e}");
    assert_eq!(e["policy"], "fifo", "{e}");
    assert_eq!(e["priority_restored"], e["priority_original"], "{e}");
    assert!(
        e["priority_original"].as_str().unwrap().starts_with("fifo"),
        "{e}"
    );
}
