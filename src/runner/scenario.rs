//! One scenario, start to end: its guards (isolation, cpu_dma_latency) set and restored,
//! its loads brought up and stopped, `--trace` around the probe, checkpoints while it
//! measures, and the finished `Scenario` with its warnings.

use super::checkpoint::{CheckpointSource, Checkpointer};
use super::naming::params_of;
use super::resume::MeasuredBefore;
use crate::plan::{Plan, ScenarioPlan};
use crate::probe::{CommonSettings, ProbeContext, ProbeOutput};
use crate::result::{LoadResult, RawSeries, Scenario, TimeWindow};
use crate::sys::dma_latency::DmaLatencyGuard;
use crate::warning::{Warning, WarningCode};
use anyhow::Context;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What one scenario needs from the run around it.
pub struct ScenarioRun<'a> {
    pub plan: &'a Plan,
    pub sp: &'a ScenarioPlan,
    pub name: String,
    pub settings: CommonSettings,
    pub before: Option<&'a MeasuredBefore>,
    pub ctx: ProbeContext,
    pub stop: &'a Arc<AtomicBool>,
}

/// A measured scenario: its result, its raw series, run-wide warnings it raised and the
/// journal file a checkpoint left (the runner appends there).
pub struct Measured {
    pub scenario: Scenario,
    pub raw: Vec<RawSeries>,
    pub run_warnings: Vec<Warning>,
    pub journal: Option<std::fs::File>,
}

/// Runs one scenario under its guards and returns what it measured.
pub fn run_scenario(
    r: ScenarioRun<'_>,
    journal: Option<(std::path::PathBuf, std::fs::File)>,
) -> anyhow::Result<Measured> {
    let (sp, name) = (r.sp, r.name.as_str());
    let started_at = crate::result::rfc3339_now();
    // Isolation first, so loads see current_system_cpus() and measuring threads
    // enter the shield; restored right after the probe, before the next scenario.
    let mut isolation = match sp.isolate.is_empty() {
        true => None,
        false => Some(
            crate::isolate::IsolationGuard::apply(&sp.isolate).with_context(|| {
                format!(
                    "isolating CPU {}",
                    crate::units::format_cpu_list(&sp.isolate)
                )
            })?,
        ),
    };
    let dma = match sp.dma_latency_us {
        Some(us) => Some(DmaLatencyGuard::hold(us).context("holding /dev/cpu_dma_latency")?),
        None => None,
    };
    let loads = start_loads(sp, r.stop).with_context(|| format!("scenario '{name}'"))?;
    let realtime_offset_ns = crate::sys::clock::realtime_offset_ns();
    let template = scenario_of(&r, started_at.clone(), Default::default());
    let (mut output, trace, trace_warnings, journal) = measure(&r, template, journal)?;
    let (load_results, load_warnings) = stop_loads(loads);
    drop(dma);
    let (isolation_report, isolation_warnings, run_warnings) = end_isolation(&mut isolation);
    let mut scenario = scenario_of(&r, started_at, std::mem::take(&mut output.extra_params));
    scenario.interrupted = output.interrupted;
    scenario.elapsed_ns = output.elapsed_ns;
    scenario.threads = std::mem::take(&mut output.threads);
    scenario.loads = load_results;
    scenario.isolation = isolation_report;
    scenario.warnings = std::mem::take(&mut output.warnings)
        .into_iter()
        .chain(isolation_warnings)
        .chain(load_warnings)
        .chain(trace_warnings)
        .collect();
    scenario.time = Some(TimeWindow::monotonic(
        output.window_ns[0],
        output.window_ns[1],
        realtime_offset_ns,
    ));
    scenario.trace = trace;
    scenario.broke = output.broke;
    if sp.settings.worst_case {
        // --worst-case: the tail estimated from the samples, kept for it alone when
        // there is no --raw (not written).
        crate::result::worst_case::attach_to_scenario(&mut scenario, &output.raw);
        if r.plan.output.raw.is_none() {
            output.raw.clear();
        }
    }
    Ok(Measured {
        scenario,
        raw: output.raw,
        run_warnings,
        journal,
    })
}

type Traced = (
    ProbeOutput,
    Option<crate::result::trace::TraceResult>,
    Vec<Warning>,
    Option<std::fs::File>,
);

/// The probe itself, with `--trace` around it and checkpoints while it measures.
fn measure(
    r: &ScenarioRun<'_>,
    template: Scenario,
    journal: Option<(std::path::PathBuf, std::fs::File)>,
) -> anyhow::Result<Traced> {
    let sp = r.sp;
    // Tracing starts with the loads at speed and stops right after the probe; on any
    // error the session is dropped, which removes its instance.
    let session = match &sp.trace {
        Some(ts) => Some(super::trace::start(ts, sp)?),
        None => None,
    };
    let checkpoints = Checkpointer::start(CheckpointSource {
        template,
        live: r.ctx.live.clone(),
        journal,
        interval_ns: r.plan.output.checkpoint_ns,
    });
    let output = sp.probe.run(&r.settings, &r.ctx);
    // The samples are back: a second Ctrl-C from here on lets this thread save them.
    crate::interrupt::finishing();
    let journal = checkpoints.finish();
    let mut output = output.with_context(|| format!("scenario '{}'", r.name))?;
    let (trace, trace_warnings) = super::trace::stop(session, sp, &mut output)?;
    if r.plan.output.raw.is_none() && sp.trace.is_some() && !sp.settings.worst_case {
        // Kept only for the trace's join: not written. (Without --raw and --trace,
        // samples are kept only when the plan asked for them in memory, as
        // `latscope cyclictest -v` does.)
        output.raw.clear();
    }
    Ok((output, trace, trace_warnings, journal))
}

/// The scenario's record before its measurements: name, parameters (the continuation's
/// bounds and what earlier parts measured, on `--resume`), start.
fn scenario_of(
    r: &ScenarioRun<'_>,
    started_at: String,
    extra: crate::result::ParamsExtra,
) -> Scenario {
    let mut params = params_of(r.sp);
    params.samples = r.settings.samples.unwrap_or(0);
    params.duration_ns = r.settings.duration_ns.unwrap_or(0);
    params.extra.merge(extra);
    if let Some(b) = r.before {
        params.extra.merge(b.extra());
    }
    Scenario::new(r.name.clone(), r.sp.probe.kind(), params, started_at)
}

/// Stops the loads (if any) and returns what they achieved and their warnings.
fn stop_loads(loads: Option<crate::load::RunningLoads>) -> (Vec<LoadResult>, Vec<Warning>) {
    match loads {
        Some(running) => {
            let warnings = running.warnings.clone();
            (running.stop(), warnings)
        }
        None => (Vec::new(), Vec::new()),
    }
}

type IsolationEnd = (Option<serde_json::Value>, Vec<Warning>, Vec<Warning>);

/// Restores the isolation: its report, the scenario's warnings about it and the run's
/// (a setting that could not be restored).
fn end_isolation(isolation: &mut Option<crate::isolate::IsolationGuard>) -> IsolationEnd {
    let Some(guard) = isolation.as_mut() else {
        return (None, Vec::new(), Vec::new());
    };
    let removed_under_run = guard.removed_under_run();
    let report = Some(guard.report_json());
    let mut warnings = guard.report().warnings();
    if removed_under_run {
        warnings.push(Warning::new(
            WarningCode::IsolationRemovedDuringRun,
            "`latscope restore --force` undid this scenario's isolation while it ran: samples after that were not measured on a shielded CPU",
        ));
    }
    let run_warnings = guard
        .restore()
        .into_iter()
        .map(|problem| {
            Warning::new(
                WarningCode::IsolationNotRestored,
                format!("{problem}; run `latscope restore`"),
            )
        })
        .collect();
    *isolation = None;
    (report, warnings, run_warnings)
}

/// How long loads run before the probe starts, so they are at speed when it measures.
pub const LOAD_LEAD_NS: u64 = 200_000_000;

/// Starts the scenario's loads (none: None) and lets them come up to speed.
fn start_loads(
    sp: &ScenarioPlan,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<Option<crate::load::RunningLoads>> {
    if sp.loads.is_empty() {
        return Ok(None);
    }
    let running = crate::load::start(&sp.loads, &sp.settings.cpus, stop.clone())?;
    crate::sys::clock::sleep_for_ns(LOAD_LEAD_NS);
    Ok(Some(running))
}
