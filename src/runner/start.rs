//! Before the first scenario: every output file locked, the system read once, the run's
//! header (a `--resume`d run's kept scenarios included) written to the journal, and the
//! run-wide settings (memory lock, the timer signal) made and warned about.

use super::resume::{resume_from, MeasuredBefore};
use super::store::Store;
use crate::plan::Plan;
use crate::result::Run;
use crate::sysinfo::SystemInfo;
use crate::warning::{Warning, WarningCode};
use anyhow::Context;
use std::collections::BTreeMap;
use std::io::IsTerminal;

/// A run ready for its scenarios.
pub struct Started {
    pub run: Run,
    pub store: Store,
    /// `--resume`: the scenarios complete in the previous file.
    pub done: Vec<String>,
    /// `--resume`: what earlier attempts measured of each interrupted scenario.
    pub measured_before: BTreeMap<String, MeasuredBefore>,
    pub show_progress: bool,
    /// Every output file's lock, held until the run ends.
    _locks: Vec<crate::output::exports::OutputLock>,
}

/// Locks the outputs, builds the run's header and opens its journal.
pub fn start(
    plan: &Plan,
    command_line: Vec<String>,
    previous: Option<Run>,
) -> anyhow::Result<Started> {
    // Two runs writing the same file would silently replace each other's work.
    let locks = lock_outputs(plan)?;
    let system = SystemInfo::collect();
    let mut run = Run::new(system.clone(), command_line);
    run.suite = plan.suite.clone();
    run.plan_hash = Some(super::plan_hash(plan));
    // Resuming: keep the previous run's scenarios; complete ones are done, interrupted
    // ones are kept as measured parts and continued for what is left of their bound.
    let (mut done, mut measured_before) = (Vec::new(), BTreeMap::new());
    if let Some(prev) = previous {
        run.started_at = prev.started_at.clone();
        (run.scenarios, done, measured_before) = resume_from(prev);
    }
    // RT throttling stops only threads that never sleep: said when one runs.
    let spins = plan
        .scenarios
        .iter()
        .any(|s| s.probe.busy_waits() || s.probe.kind() == crate::result::ProbeKind::Noise);
    run.warnings.extend(
        (system.warnings().into_iter()).filter(|w| spins || w.code != WarningCode::RtThrottling),
    );
    run.warnings.extend(plan.warnings.iter().cloned());
    run_settings(plan, &system, &mut run)?;
    let store = Store::open(plan, &run)?;
    // Checkpoints read the measuring threads' distributions as they grow (a live view
    // reads their exact atomics).
    crate::stats::live_histogram::enable(
        store.checkpoint_target().is_some() || plan.output.live_histograms,
    );
    run.scenarios = run.scenarios.into_iter().map(super::summary_of).collect();
    Ok(Started {
        run,
        store,
        done,
        measured_before,
        show_progress: !plan.output.quiet && std::io::stderr().is_terminal(),
        _locks: locks,
    })
}

/// Memory locked, the timer signal blocked, and what the run should know about them and
/// about /dev/cpu_dma_latency.
fn run_settings(plan: &Plan, system: &SystemInfo, run: &mut Run) -> anyhow::Result<()> {
    if let Err(e) = crate::sys::memlock::lock_all_memory() {
        run.warnings.push(Warning::new(WarningCode::Mlockall, format!("mlockall failed ({e}): page faults may show up as latency; run as root or raise ulimit -l")));
    }
    // The posix-timer method takes its signal with sigwaitinfo: block it everywhere.
    crate::sys::signals::SignalSet::of(&[crate::probe::timer::timer_signal()])
        .block_in_current_thread()
        .context("blocking the timer signal")?;
    if plan.scenarios.iter().all(|s| s.dma_latency_us.is_none()) {
        if let Some(v) = system.cpu_dma_latency_us {
            let what = if v >= 2_000_000_000 {
                "no limit".to_string()
            } else {
                format!("{v} µs")
            };
            let advice = if v == 0 {
                "0 µs, as cyclictest holds it by default".to_string()
            } else {
                format!(
                    "{what}; cyclictest holds it at 0 by default, so compare with --dma-latency 0"
                )
            };
            run.warnings.push(Warning::new(
                WarningCode::DmaLatencyUntouched,
                format!("/dev/cpu_dma_latency left as the system had it ({advice})"),
            ));
        }
    }
    Ok(())
}

/// Takes the lock of every file the run writes (`--export-json`, the other exports,
/// `--raw`); refuses when another run holds one.
fn lock_outputs(plan: &Plan) -> anyhow::Result<Vec<crate::output::exports::OutputLock>> {
    let out = &plan.output;
    let mut outputs: Vec<(&str, &std::path::Path)> = Vec::new();
    if let Some(path) = &out.export_json {
        outputs.push(("--export-json", path));
    }
    outputs.extend(
        out.exports
            .iter()
            .map(|e| (e.format.flag(), e.path.as_path())),
    );
    if let Some(path) = &out.raw {
        outputs.push(("--raw", path));
    }
    crate::output::exports::lock_outputs(&outputs)
}
