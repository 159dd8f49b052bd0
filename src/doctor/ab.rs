//! The measured half of `doctor`: short A/Bs on this machine through the existing
//! probes and knobs, each in alternating runs (A B, B A, ...) with the knob restored
//! afterwards on every exit path (the runner's guards), and an observation window:
//! interrupts and ticks on the measured CPU and RT throttling's stops of a spinning
//! FIFO thread (the noise probe).

use super::finding::{CheckId, Finding, Measured};
use crate::cli::{Cli, Command};
use crate::isolate::tunable::{read_setting, Change, TunableGuard};
use anyhow::Context;
use clap::Parser;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How the measured part runs.
pub struct AbSettings {
    pub cpu: usize,
    /// `fifo` at the priority when SCHED_FIFO was granted, else `other`.
    pub policy_args: Vec<String>,
    pub pairs: u32,
    /// Length of one timer run (after a 500 ms warm-up).
    pub run: &'static str,
    pub stop: Arc<AtomicBool>,
}

/// One A/B: the finding it measures, what A is, the timer options of A and of B, and
/// how to read the knob before and after (`Knob`).
pub struct Ab {
    pub finding: CheckId,
    pub label: String,
    pub a: Vec<String>,
    pub b: Vec<String>,
    pub knob: fn() -> Knob,
    /// Files set for each "with" run only (`--try rt-throttling`, ...), through a
    /// `TunableGuard` restored right after it; empty for the others.
    pub changes: Vec<Change>,
}

/// A knob as read before and after an A/B: its value, and the other processes that
/// may change it (cpu_dma_latency is an aggregate of every open request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Knob {
    pub value: String,
    /// Requests of other processes (pids); empty when nobody else can change it.
    pub others: Vec<u32>,
    /// Whether this process still holds a change (must be false afterwards).
    pub held_here: bool,
}

/// Runs one timer scenario with `extra` options; its p99 in ns.
fn timer_p99(s: &AbSettings, extra: &[String]) -> anyhow::Result<u64> {
    let mut argv: Vec<String> = [
        "latscope", "timer", "--quiet", "--warmup", "500ms", "-D", s.run, "--cpus",
    ]
    .iter()
    .map(|w| w.to_string())
    .collect();
    argv.push(s.cpu.to_string());
    argv.extend(s.policy_args.iter().cloned());
    argv.extend(extra.iter().cloned());
    let Command::Timer(args) = Cli::try_parse_from(&argv)?.command else {
        anyhow::bail!("internal: not a timer command line");
    };
    let plan = crate::plan::timer_plan(&args)?;
    let outcome = crate::runner::execute(&plan, argv, s.stop.clone(), None)?;
    outcome
        .run
        .scenarios
        .first()
        .and_then(|sc| sc.threads.first())
        .map(|t| t.summary.p99_ns)
        .context("the timer run returned no samples")
}

/// The noise probe's plan on `s.cpu` for `seconds` after a 200 ms warm-up, with `extra`
/// options, at the doctor's priority when `fifo` (else SCHED_OTHER), and its command line
/// (the run's record of what ran).
pub fn noise_plan(
    s: &AbSettings,
    seconds: u64,
    fifo: bool,
    extra: &[String],
) -> anyhow::Result<(crate::plan::Plan, Vec<String>)> {
    let mut argv: Vec<String> = ["latscope", "noise", "--quiet", "--warmup", "200ms"]
        .iter()
        .map(|w| w.to_string())
        .collect();
    argv.extend(extra.iter().cloned());
    argv.extend([
        "--cpus".into(),
        s.cpu.to_string(),
        "-D".into(),
        format!("{seconds}s"),
    ]);
    if fifo {
        argv.extend(s.policy_args.iter().cloned());
    } else {
        argv.extend(["--policy".into(), "other".into()]);
    }
    let Command::Noise(args) = Cli::try_parse_from(&argv)?.command else {
        anyhow::bail!("internal: not a noise command line");
    };
    Ok((crate::plan::noise_plan(&args)?, argv))
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    match v.len() {
        0 => 0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2,
    }
}

/// "cpu_dma_latency 0: p99 62 → 31 µs (−50 %) in 6 pairs, lower in 5": B's median p99
/// first (the machine as it is), then A's (with the change), and in how many pairs A's
/// p99 was the lower one (a noisy machine shows as a split).
pub fn summary(label: &str, pairs: &[[u64; 2]]) -> String {
    let a = median(pairs.iter().map(|p| p[0]).collect());
    let b = median(pairs.iter().map(|p| p[1]).collect());
    let pct = if b > 0 {
        (a as f64 - b as f64) / b as f64 * 100.0
    } else {
        0.0
    };
    let us = |ns: u64| format!("{:.0}", ns as f64 / 1000.0);
    let sign = if pct < 0.0 { "−" } else { "+" };
    let lower = pairs.iter().filter(|p| p[0] < p[1]).count();
    format!(
        "{label}: p99 {} → {} µs ({sign}{:.0} %) in {} pair{}, lower in {lower}",
        us(b),
        us(a),
        pct.abs(),
        pairs.len(),
        if pairs.len() == 1 { "" } else { "s" }
    )
}

/// Runs `ab` in alternating pairs; `tick` after each run (the progress bar).
pub fn run_ab(ab: &Ab, s: &AbSettings, tick: &dyn Fn(&str)) -> anyhow::Result<Measured> {
    let before = read_knob(ab);
    let mut pairs = Vec::new();
    for i in 0..s.pairs {
        if s.stop.load(Ordering::Relaxed) {
            break;
        }
        // A B, then B A: a drift over the runs favours neither side.
        let a_first = i % 2 == 0;
        let mut pair = [0u64; 2];
        for a_turn in [a_first, !a_first] {
            tick(&format!(
                "{} ({})",
                ab.label,
                if a_turn { "with" } else { "without" }
            ));
            let p99 = if a_turn && !ab.changes.is_empty() {
                with_changes(ab, s)?
            } else {
                timer_p99(s, if a_turn { &ab.a } else { &ab.b })?
            };
            pair[if a_turn { 0 } else { 1 }] = p99;
        }
        if !s.stop.load(Ordering::Relaxed) {
            pairs.push(pair);
        }
    }
    let after = read_knob(ab);
    let mut text = summary(&ab.label, &pairs);
    // Another process' request changes the aggregate: what latscope restores is its own.
    let restored = !after.held_here
        && (before.value == after.value || !before.others.is_empty() || !after.others.is_empty());
    if before.value != after.value && restored {
        text.push_str(&format!(
            " (the value moved from {} to {}: requests of pid {:?}, not latscope's)",
            before.value, after.value, after.others
        ));
    }
    Ok(Measured {
        summary: text,
        pairs_ns: pairs,
        restored,
    })
}

/// One "with" run of a tunable fix: the files set, the timer run, the files restored
/// (also when the run fails or panics: the guard's Drop).
fn with_changes(ab: &Ab, s: &AbSettings) -> anyhow::Result<u64> {
    let mut held = TunableGuard::apply(&format!("doctor --try: {}", ab.label), &ab.changes)?;
    let p99 = timer_p99(s, &ab.a);
    let problems = held.restore();
    anyhow::ensure!(
        problems.is_empty(),
        "not restored: {} (run `latscope restore`)",
        problems.join("; ")
    );
    p99
}

/// The knob of `ab` as read now: its files' values for a tunable fix.
fn read_knob(ab: &Ab) -> Knob {
    if ab.changes.is_empty() {
        return (ab.knob)();
    }
    let values: Vec<String> = ab
        .changes
        .iter()
        .map(|c| match read_setting(&c.path) {
            Ok(v) => format!("{}={v}", c.path.display()),
            Err(e) => format!("{}: {e}", c.path.display()),
        })
        .collect();
    Knob {
        value: values.join(" "),
        others: Vec::new(),
        held_here: false,
    }
}

/// cpu_dma_latency as the kernel holds it now, and who holds requests (the knob of the
/// dma A/B).
pub fn dma_knob() -> Knob {
    let me = std::process::id();
    let holders = crate::sys::dma_latency::holders();
    Knob {
        value: match crate::sys::dma_latency::current_us() {
            Some(us) if us >= 2_000_000_000 => "no limit".into(),
            Some(us) => format!("{us} µs"),
            None => "unreadable".into(),
        },
        held_here: holders.contains(&me),
        others: holders.into_iter().filter(|p| *p != me).collect(),
    }
}

/// Every IRQ's affinity and the default one (the knob of the isolate A/B).
pub fn irq_knob() -> Knob {
    let mut text = crate::sys::irq::default_affinity().unwrap_or_default();
    for irq in crate::sys::irq::list() {
        text.push_str(&format!(
            " {irq}:{}",
            crate::sys::irq::affinity_list(irq).unwrap_or_default()
        ));
    }
    Knob {
        value: text,
        others: Vec::new(),
        held_here: false,
    }
}

/// Nothing changed on the machine (a load's threads end with their scenario).
pub fn no_knob() -> Knob {
    Knob {
        value: String::new(),
        others: Vec::new(),
        held_here: false,
    }
}

/// Attaches `measured` to the finding `id`.
pub fn attach(findings: &mut [Finding], id: CheckId, measured: Measured) {
    if let Some(f) = findings.iter_mut().find(|f| f.id == id) {
        f.measured.push(measured);
    }
}
