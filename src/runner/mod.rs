//! Executes a Plan, one job per function: `start` (locks, the run's header, warnings),
//! then per scenario `scenario::run_scenario` (guards, loads, trace, probe, checkpoints)
//! and `Store::append` (written once, then only its summary stays in memory), and
//! `finish` (the result file and the summary formats rendered once, from the journal).
//! A later failure or an interruption loses nothing that was measured.

mod checkpoint;
mod eta;
mod finish;
mod naming;
mod resume;
mod scenario;
mod start;
mod store;
mod trace;

pub use naming::{params_of, plan_hash, scenario_name};
pub use resume::check_resumable;

use crate::plan::Plan;
use crate::probe::ProbeContext;
use crate::result::{Run, Scenario};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A finished (or interrupted) run: its summaries in memory, every scenario's whole
/// result in the journal it was written to.
pub struct RunOutcome {
    /// The run with each scenario's summary (histograms and per-second series left out:
    /// `full_run` and `write_document` read them back).
    pub run: Run,
    store: store::Store,
}

impl RunOutcome {
    /// The whole run, every histogram included, read back from the journal.
    pub fn full_run(&self) -> anyhow::Result<Run> {
        let mut scenarios = Vec::new();
        self.store.each_scenario(&mut |s| {
            scenarios.push(s);
            Ok(())
        })?;
        Ok(Run {
            scenarios,
            ..self.run.clone()
        })
    }

    /// Writes the result file's JSON document, streamed from the journal.
    pub fn write_document(&self, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
        finish::write_document(&self.run, &self.store, out)
    }

    /// Writes one export (HTML streamed from the journal, the others from the summaries).
    pub fn write_export(
        &self,
        e: &crate::output::exports::Export,
        opts: &crate::report::RenderOptions,
    ) -> anyhow::Result<()> {
        finish::write_export(e, &self.run, &self.store, opts)
    }
}

/// Runs every scenario of `plan` in order; stops early (marking the run interrupted)
/// when `stop` is set.
pub fn execute(
    plan: &Plan,
    command_line: Vec<String>,
    stop: Arc<AtomicBool>,
    previous: Option<Run>,
) -> anyhow::Result<RunOutcome> {
    let mut started = start::start(plan, command_line, previous)?;
    let broke = run_scenarios(plan, &stop, &mut started)?;
    let start::Started {
        mut run, mut store, ..
    } = started;
    if stop.load(Ordering::Relaxed) && !broke {
        run.interrupted = true;
    }
    if run.interrupted {
        run.interrupted_by = crate::interrupt::received_signal().map(str::to_string);
    }
    run.finished_at = crate::result::rfc3339_now();
    finish::finish(plan, &run, &mut store)?;
    if std::env::var_os("LATSCOPE_PRINT_WRITE_TIMES").is_some() {
        // bench/suite-scaling.sh: the time each scenario's save took, in order.
        for (i, ns) in store.write_ns.iter().enumerate() {
            eprintln!("latscope: write {} {ns} ns", i + 1);
        }
    }
    crate::sys::memlock::unlock_all_memory();
    Ok(RunOutcome { run, store })
}

/// The scenario loop: each one not done yet runs and is saved once; true when
/// `--break-above` ended the run.
fn run_scenarios(
    plan: &Plan,
    stop: &Arc<AtomicBool>,
    started: &mut start::Started,
) -> anyhow::Result<bool> {
    let total = plan.scenarios.len();
    let mut eta = eta::Eta::default();
    for (index, sp) in plan.scenarios.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            started.run.interrupted = true;
            break;
        }
        crate::interrupt::measuring();
        let name = scenario_name(sp);
        if started.done.contains(&name) {
            continue;
        }
        let before = started.measured_before.get(&name);
        let Some(settings) = resume::remaining_settings(&sp.settings, before) else {
            continue; // its parts already reached the bound
        };
        let later = plan.scenarios[index + 1..]
            .iter()
            .filter(|later| !started.done.contains(&scenario_name(later)))
            .map(|later| eta::estimate_ns(later, &later.settings));
        let estimated_ns = eta::estimate_ns(sp, &settings);
        let ctx = ProbeContext {
            stop: stop.clone(),
            progress: started.show_progress,
            label: eta::label(&name, index, total, eta.left_ns(later)),
            live: plan.output.live_view.clone().unwrap_or_default(),
        };
        let began = std::time::Instant::now();
        let r = scenario::ScenarioRun {
            plan,
            sp,
            name,
            settings,
            before,
            ctx,
            stop,
        };
        let measured = scenario::run_scenario(r, started.store.checkpoint_target())?;
        eta.finished(estimated_ns, began.elapsed().as_nanos() as u64);
        if save(plan, started, measured)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Saves a measured scenario (journal, `--raw`) and keeps its summary; true when it
/// crossed `--break-above` (the run ends there, not interrupted).
fn save(
    plan: &Plan,
    started: &mut start::Started,
    measured: scenario::Measured,
) -> anyhow::Result<bool> {
    let scenario::Measured {
        scenario,
        raw: series,
        run_warnings,
        journal,
    } = measured;
    if let Some(file) = journal {
        started.store.replace_journal(file);
    }
    started.run.warnings.extend(run_warnings);
    let broke = scenario.broke.is_some();
    // `latscope cyclictest` prints its own break lines, cyclictest's.
    if let Some(b) = scenario
        .broke
        .as_ref()
        .filter(|_| !plan.output.own_break_lines)
    {
        eprintln!(
            "latscope: --break-above {}: CPU {} was {} late at deadline {} ns; run stopped",
            crate::units::human_ns(b.break_above_ns),
            b.cpu,
            crate::units::human_ns(b.latency_ns),
            b.deadline_ns
        );
    }
    let series = if plan.output.raw.is_some() {
        series
    } else {
        Vec::new()
    };
    started.store.append(&scenario, series)?;
    started.run.interrupted |= scenario.interrupted;
    started.run.scenarios.push(summary_of(scenario));
    Ok(broke)
}

/// What stays in memory of a saved scenario: everything but its histograms and
/// per-second series (the journal holds them).
fn summary_of(mut scenario: Scenario) -> Scenario {
    for th in &mut scenario.threads {
        th.histogram = Vec::new();
        th.per_second_max_ns = Vec::new();
    }
    scenario
}
