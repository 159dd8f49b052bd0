//! The measured half of `doctor`: short A/Bs on this machine through the existing
//! probes and knobs, each in alternating runs (A B, B A, ...) until the sign test on the
//! pairs decides (paired.rs) or the cap, with the knob restored afterwards on every exit
//! path (the runner's guards); and the noise probe's plan the observation windows share.

use super::finding::{Bearing, CheckId, Finding, Measured};
use super::paired::{measure_pairs, AbVerdict, Sequential, SignTest, Stopped, FIRST_LOOK};
use crate::cli::{Cli, Command};
use crate::isolate::tunable::{read_setting, Change, TunableGuard};
use anyhow::Context;
use clap::Parser;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// One timer run: a 500 ms warm-up and 2 s measured.
pub const RUN: &str = "2s";
/// The time a pair (two runs, with the runner's start and stop: 5.0 s here) may take on
/// average before the A/B stops for time: what the time said up front is made of.
pub const PAIR_BUDGET: Duration = Duration::from_millis(5_500);

/// How the measured part runs.
pub struct AbSettings {
    pub cpu: usize,
    /// `fifo` at the priority when SCHED_FIFO was granted, else `other`.
    pub policy_args: Vec<String>,
    /// At most this many pairs per A/B (`--pairs`); fewer when the test decides sooner.
    pub max_pairs: u32,
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
    /// What A is: the fix tried (`true`), or the problem provoked (`false`: the SMT
    /// sibling loaded), which turns what "worse" says about the finding around.
    pub a_is_fix: bool,
    /// The fix to recommend when A measured better (a finding that passed on its
    /// reading gets it).
    pub fix: String,
    /// Why A may measure worse here, where known (the measured line says it).
    pub why_worse: Option<String>,
}

impl Ab {
    /// An A/B of a fix applied through timer options (`a`) or files (`changes`).
    pub fn of_fix(finding: CheckId, label: String, fix: String) -> Self {
        Self {
            finding,
            label,
            a: Vec::new(),
            b: Vec::new(),
            knob: no_knob,
            changes: Vec::new(),
            a_is_fix: true,
            fix,
            why_worse: None,
        }
    }

    /// What the test's verdict says about the finding.
    pub fn bearing(&self, verdict: AbVerdict) -> Bearing {
        match (verdict, self.a_is_fix) {
            (AbVerdict::Better, true) | (AbVerdict::Worse, false) => Bearing::Confirms,
            _ => Bearing::Refutes,
        }
    }
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
        "latscope", "timer", "--quiet", "--warmup", "500ms", "-D", RUN, "--cpus",
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

/// Microseconds with one decimal, signed (`+1.2`, `−3.0`).
fn signed_us(ns: i64) -> String {
    let sign = if ns < 0 { "−" } else { "+" };
    format!("{sign}{:.1}", ns.unsigned_abs() as f64 / 1000.0)
}

/// Why the pairs stopped, as the line ends (nothing when the test decided).
fn stop_text(t: &SignTest) -> String {
    match t.stopped {
        Stopped::Decided => String::new(),
        Stopped::CannotDecide => "; stopped: no later look could decide".into(),
        Stopped::Cap if t.pairs < FIRST_LOOK => format!(
            "; {} pair{} cannot decide: {FIRST_LOOK} at least",
            t.pairs,
            if t.pairs == 1 { "" } else { "s" }
        ),
        Stopped::Cap => "; stopped at the cap (--pairs, or the time said up front)".into(),
        Stopped::Interrupted => "; interrupted".into(),
    }
}

/// "cpu_dma_latency 0: p99 62 → 31 µs (−50 %): better (sign test: lower in 8 of 8
/// pairs, p = 0.008, decides at ≤ 0.031; median difference −30.1 µs, 96 % interval
/// −33.0 … −28.2 µs)": B's median p99 first (the machine as it is), then A's (with the
/// change), the verdict, the test behind it, and why the pairs stopped if undecided.
pub fn summary(label: &str, pairs: &[[u64; 2]], t: &SignTest) -> String {
    let a = median(pairs.iter().map(|p| p[0]).collect());
    let b = median(pairs.iter().map(|p| p[1]).collect());
    let pct = if b > 0 {
        (a as f64 - b as f64) / b as f64 * 100.0
    } else {
        0.0
    };
    let us = |ns: u64| format!("{:.0}", ns as f64 / 1000.0);
    let sign = if pct < 0.0 { "−" } else { "+" };
    let ties = match t.ties {
        0 => String::new(),
        k => format!(", {k} tied"),
    };
    format!(
        "{label}: p99 {} → {} µs ({sign}{:.0} %): {} (sign test: lower in {} of {} pair{}{ties}, p = {:.3}, decides at ≤ {:.3}; median difference {} µs, {:.0} % interval {} … {} µs{})",
        us(b),
        us(a),
        pct.abs(),
        t.verdict.text(),
        t.lower,
        t.pairs,
        if t.pairs == 1 { "" } else { "s" },
        t.p_value,
        t.level,
        signed_us(t.median_diff_ns),
        t.interval_confidence * 100.0,
        signed_us(t.interval_ns[0]),
        signed_us(t.interval_ns[1]),
        stop_text(t),
    )
}

/// Runs `ab` in alternating pairs until the sign test decides, the cap or the time said
/// up front (`PAIR_BUDGET` a pair); `tick` before each run (the progress bar).
pub fn run_ab(ab: &Ab, s: &AbSettings, tick: &dyn Fn(&str)) -> anyhow::Result<Measured> {
    let before = read_knob(ab);
    let seq = Sequential::new(s.max_pairs);
    let budget = PAIR_BUDGET * s.max_pairs;
    let (pairs, test) = measure_pairs(&seq, &s.stop, Some(budget), |a_turn| {
        tick(&format!(
            "{} ({})",
            ab.label,
            if a_turn { "with" } else { "without" }
        ));
        if a_turn && !ab.changes.is_empty() {
            with_changes(ab, s)
        } else {
            timer_p99(s, if a_turn { &ab.a } else { &ab.b })
        }
    })?;
    let after = read_knob(ab);
    let mut text = summary(&ab.label, &pairs, &test);
    if test.verdict == AbVerdict::Worse {
        if let Some(why) = &ab.why_worse {
            text.push_str(&format!(": {why}"));
        }
    }
    let restored = restored_line(&before, &after, &mut text);
    let bearing = could_decide(&test).then(|| ab.bearing(test.verdict));
    Ok(Measured {
        summary: text,
        pairs_ns: pairs,
        restored,
        test: Some(test),
        bearing,
    })
}

/// Whether the test had its chance: it decided, no later look could have, or it reached
/// a cap at which a look can decide. Too few pairs (`--pairs 1`) or Ctrl-C: no verdict
/// bears on the finding.
fn could_decide(t: &SignTest) -> bool {
    match t.stopped {
        Stopped::Decided | Stopped::CannotDecide => true,
        Stopped::Cap => t.level > 0.0 && t.pairs >= FIRST_LOOK,
        Stopped::Interrupted => false,
    }
}

/// Whether the knob is as before (another process' request changes an aggregate such as
/// cpu_dma_latency: what latscope restores is its own), saying who moved it if it moved.
pub fn restored_line(before: &Knob, after: &Knob, text: &mut String) -> bool {
    let mut others = before.others.clone();
    others.extend(after.others.iter().filter(|p| !before.others.contains(p)));
    let restored = !after.held_here && (before.value == after.value || !others.is_empty());
    if before.value != after.value && restored {
        let pids: Vec<String> = others.iter().map(u32::to_string).collect();
        text.push_str(&format!(
            " (the value moved from {} to {} while pid{} {} held requests of their own, not latscope's)",
            before.value,
            after.value,
            if pids.len() == 1 { "" } else { "s" },
            pids.join(", ")
        ));
    }
    restored
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

#[cfg(test)]
mod tests {
    use super::*;

    fn knob(value: &str, others: &[u32], held_here: bool) -> Knob {
        Knob {
            value: value.into(),
            others: others.to_vec(),
            held_here,
        }
    }

    /// The "requests of pid []": a value that moved with nobody else holding a
    /// request is not restored and names no pid; one moved by others names them.
    #[test]
    fn a_moved_knob_names_who_moved_it_or_is_not_restored() {
        let mut text = String::new();
        let same = knob("0 µs", &[], false);
        assert!(restored_line(&same, &same, &mut text));
        assert_eq!(text, "");
        let moved = knob("2000000000 µs", &[], false);
        assert!(!restored_line(&same, &moved, &mut text));
        assert_eq!(text, "", "no pid to name: nothing said, not restored");
        let by_others = knob("no limit", &[4242], false);
        assert!(restored_line(
            &knob("0 µs", &[17], false),
            &by_others,
            &mut text
        ));
        assert_eq!(
            text,
            " (the value moved from 0 µs to no limit while pids 17, 4242 held requests of their own, not latscope's)"
        );
        let mut text = String::new();
        assert!(restored_line(&same, &knob("1 µs", &[99], false), &mut text));
        assert!(text.contains(" while pid 99 held requests"), "{text}");
        // Still held by this process afterwards: never restored.
        let mut text = String::new();
        assert!(!restored_line(&same, &knob("0 µs", &[], true), &mut text));
    }
}
