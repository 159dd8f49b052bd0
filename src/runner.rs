//! Executes a Plan: for each scenario it sets up the system guards, runs the probe,
//! collects the result and writes the JSON file atomically right away, so a later
//! failure or an interruption loses nothing that was measured.

use crate::plan::{Plan, ScenarioPlan};
use crate::probe::ProbeContext;
use crate::result::RawSeries;
use crate::result::{Run, Scenario, ScenarioParams, TimeWindow, Warning};
use crate::sys::{dma_latency::DmaLatencyGuard, memlock};
use crate::sysinfo::SystemInfo;
use anyhow::Context;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A finished (or interrupted) run and the raw series it kept.
pub struct RunOutcome {
    pub run: Run,
    pub raw: Vec<(String, RawSeries)>,
}

/// The label of a scenario in tables and progress lines.
pub fn scenario_name(sp: &ScenarioPlan) -> String {
    let mut name = format!("{} {}", sp.probe.kind(), sp.probe.method());
    if sp.probe.period_ns() > 0 {
        name.push(' ');
        name.push_str(&crate::units::compact_ns(sp.probe.period_ns()));
    }
    if let Some(suffix) = sp.probe.name_suffix() {
        name.push(' ');
        name.push_str(&suffix);
    }
    if !sp.loads.is_empty() {
        name.push_str(&format!(" load={}", sp.loads.join("+")));
    }
    if !sp.isolate.is_empty() {
        name.push_str(&format!(
            " isolated={}",
            crate::units::format_cpu_list(&sp.isolate)
        ));
    }
    if sp.settings.policy != crate::sys::sched::Policy::Fifo
        || sp.settings.priority != crate::plan::DEFAULT_RT_PRIORITY
    {
        name.push_str(&format!(" {}{}", sp.settings.policy, sp.settings.priority));
    }
    name
}

fn params_of(sp: &ScenarioPlan) -> ScenarioParams {
    ScenarioParams {
        method: sp.probe.method(),
        period_ns: sp.probe.period_ns(),
        policy: sp.settings.policy.name().into(),
        priority: sp.settings.priority,
        deadline_ns: sp.probe.deadline_ns(),
        warmup_ns: sp.settings.warmup_ns,
        samples: sp.settings.samples.unwrap_or(0),
        duration_ns: sp.settings.duration_ns.unwrap_or(0),
        cpus: sp.settings.cpus.clone(),
        dma_latency_us: sp.dma_latency_us,
        loads: sp.loads.clone(),
        isolate: sp.isolate.clone(),
        extra: sp.probe.extra_params(),
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
    let system = SystemInfo::collect();
    let mut run = Run::new(system.clone(), command_line);
    run.suite = plan.suite.clone();
    // Resuming: keep the previous run's complete scenarios; interrupted ones run again.
    let mut done: Vec<String> = Vec::new();
    if let Some(prev) = previous {
        run.started_at = prev.started_at;
        run.scenarios = prev
            .scenarios
            .into_iter()
            .filter(|s| !s.interrupted)
            .collect();
        done = run.scenarios.iter().map(|s| s.name.clone()).collect();
    }
    run.warnings.extend(system.warnings());
    run.warnings.extend(plan.warnings.iter().cloned());
    if let Err(e) = memlock::lock_all_memory() {
        run.warnings.push(Warning {
            code: "mlockall".into(),
            message: format!("mlockall failed ({e}): page faults may show up as latency; run as root or raise ulimit -l"),
        });
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
            run.warnings.push(Warning {
                code: "dma_latency_untouched".into(),
                message: format!("/dev/cpu_dma_latency left as the system had it ({what}); cyclictest holds it at 0 by default, so compare with --dma-latency 0"),
            });
        }
    }
    let show_progress = !plan.output.quiet && std::io::stderr().is_terminal();
    let mut raw = Vec::new();
    let total = plan.scenarios.len();
    let mut broke = false;
    for (index, sp) in plan.scenarios.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            run.interrupted = true;
            break;
        }
        let name = scenario_name(sp);
        if done.contains(&name) {
            continue;
        }
        let ctx = ProbeContext {
            stop: stop.clone(),
            progress: show_progress,
            label: if total > 1 {
                format!("[{}/{}] {name}", index + 1, total)
            } else {
                name.clone()
            },
        };
        let started_at = crate::result::rfc3339_now();
        // Isolation first, so loads see current_system_cpus() and measuring threads
        // enter the shield; restored right after the probe, before the next scenario.
        let mut isolation = if sp.isolate.is_empty() {
            None
        } else {
            let cpus = crate::units::format_cpu_list(&sp.isolate);
            Some(
                crate::sys::isolate::IsolationGuard::apply(&sp.isolate)
                    .with_context(|| format!("isolating CPU {cpus}"))?,
            )
        };
        let _dma = match sp.dma_latency_us {
            Some(us) => Some(DmaLatencyGuard::hold(us).context("holding /dev/cpu_dma_latency")?),
            None => None,
        };
        let loads = start_loads(sp, &stop).with_context(|| format!("scenario '{name}'"))?;
        let realtime_offset_ns = crate::sys::clock::realtime_offset_ns();
        // Tracing starts with the loads at speed and stops right after the probe; on any
        // error the session is dropped, which removes its instance.
        let session = match &sp.trace {
            Some(ts) => Some(crate::trace::run::start(ts, sp)?),
            None => None,
        };
        // On a probe error, `loads` is dropped here, which stops every load.
        let mut output = sp
            .probe
            .run(&sp.settings, &ctx)
            .with_context(|| format!("scenario '{name}'"))?;
        let (trace, trace_warnings) = match (session, &sp.trace) {
            (Some(session), Some(ts)) => {
                let instance = session.instance_name().to_string();
                let recording = session.stop().context("stopping --trace")?;
                let (t, w) = crate::trace::run::finish(
                    sp.probe.kind(),
                    ts,
                    recording,
                    instance,
                    &mut output,
                );
                (Some(t), w)
            }
            _ => (None, Vec::new()),
        };
        if plan.output.raw.is_none() {
            // Kept only for the trace's join: not written.
            output.raw.clear();
        }
        let (load_results, load_warnings) = match loads {
            Some(running) => {
                let warnings = running.warnings.clone();
                (running.stop(), warnings)
            }
            None => (Vec::new(), Vec::new()),
        };
        drop(_dma);
        let isolation_report = isolation.as_ref().map(|g| g.report_json());
        let isolation_warnings = isolation
            .as_ref()
            .map(|g| g.report().warnings())
            .unwrap_or_default();
        if let Some(guard) = isolation.as_mut() {
            for problem in guard.restore() {
                run.warnings.push(Warning {
                    code: "isolation_not_restored".into(),
                    message: format!("{problem}; run `latscope restore`"),
                });
            }
        }
        drop(isolation);
        let mut params = params_of(sp);
        params.extra.extend(output.extra_params);
        let scenario = Scenario {
            name: name.clone(),
            probe: sp.probe.kind().into(),
            params,
            interrupted: output.interrupted,
            started_at,
            elapsed_ns: output.elapsed_ns,
            threads: output.threads,
            loads: load_results,
            isolation: isolation_report,
            warnings: output
                .warnings
                .into_iter()
                .chain(isolation_warnings)
                .chain(load_warnings)
                .chain(trace_warnings)
                .collect(),
            time: Some(TimeWindow::monotonic(
                output.window_ns[0],
                output.window_ns[1],
                realtime_offset_ns,
            )),
            trace,
            broke: output.broke,
        };
        if let Some(b) = &scenario.broke {
            // --break-above set the shared stop flag: the run ends here, not interrupted.
            broke = true;
            eprintln!(
                "latscope: --break-above {}: CPU {} was {} late at deadline {} ns; run stopped",
                crate::units::human_ns(b.break_above_ns),
                b.cpu,
                crate::units::human_ns(b.latency_ns),
                b.deadline_ns
            );
        }
        run.interrupted |= scenario.interrupted;
        run.scenarios.push(scenario);
        run.finished_at = crate::result::rfc3339_now();
        raw.extend(output.raw.into_iter().map(|r| (name.clone(), r)));
        save(plan, &run, &raw)?;
        if broke {
            break;
        }
    }
    if stop.load(Ordering::Relaxed) && !broke {
        run.interrupted = true;
        save(plan, &run, &raw)?;
    }
    memlock::unlock_all_memory();
    Ok(RunOutcome { run, raw })
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
    let specs = crate::load::parse_specs(&sp.loads)?;
    let running = crate::load::start(&specs, &sp.settings.cpus, stop.clone())?;
    crate::sys::clock::sleep_for_ns(LOAD_LEAD_NS);
    Ok(Some(running))
}

/// Writes the JSON result and the raw file (atomically) as they are now.
fn save(plan: &Plan, run: &Run, raw: &[(String, RawSeries)]) -> anyhow::Result<()> {
    if let Some(path) = &plan.output.export_json {
        if path.as_os_str() != "-" {
            let bytes = crate::report::json::JsonReporter.render(run)?;
            crate::result::write_atomically(path, &bytes)
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    let opts = crate::report::RenderOptions {
        in_ns: plan.output.ns,
        limits: plan.output.limits.clone(),
    };
    crate::report::exports::write(&plan.output.exports, run, &opts, false)?;
    if let Some(path) = &plan.output.raw {
        crate::result::write_atomically(path, &crate::report::raw::render_raw(raw))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

use crate::report::Reporter;
