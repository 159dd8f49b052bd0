//! Executes a Plan: for each scenario it sets up the system guards, runs the probe,
//! collects the result and writes the JSON file atomically right away, so a later
//! failure or an interruption loses nothing that was measured.

mod trace;

use crate::plan::{Plan, ScenarioPlan};
use crate::probe::ProbeContext;
use crate::result::{RawSeries, Run, Scenario, ScenarioParams, TimeWindow};
use crate::sys::{dma_latency::DmaLatencyGuard, memlock};
use crate::sysinfo::SystemInfo;
use crate::warning::{Warning, WarningCode};
use anyhow::Context;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A finished (or interrupted) run and the raw series it kept (already written beside
/// it; `latscope cyclictest -v` prints them).
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
        name.push_str(&format!(" load={}", sp.load_texts().join("+")));
    }
    if !sp.isolate.is_empty() {
        name.push_str(&format!(
            " isolated={}",
            crate::units::format_cpu_list(&sp.isolate)
        ));
    }
    if let Some(ns) = sp
        .settings
        .timer_slack_ns
        .filter(|&ns| ns != crate::plan::DEFAULT_TIMER_SLACK_NS)
    {
        name.push_str(&format!(" slack={}", crate::units::compact_ns(ns)));
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
        loads: sp.load_texts(),
        isolate: sp.isolate.clone(),
        // Unset, the measuring threads inherit this (the runner's) thread's slack.
        timer_slack_ns: Some(
            sp.settings
                .timer_slack_ns
                .unwrap_or_else(crate::sys::sched::timer_slack_ns),
        ),
        timer_slack_inherited: sp.settings.timer_slack_ns.is_none(),
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
    // Two runs writing the same file would silently replace each other's work.
    let _output_locks = lock_outputs(plan)?;
    let system = SystemInfo::collect();
    let mut run = Run::new(system.clone(), command_line);
    run.suite = plan.suite.clone();
    run.plan_hash = Some(plan_hash(plan));
    // Resuming: keep the previous run's scenarios; complete ones are done, interrupted
    // ones are kept as measured parts and continued for what is left of their bound.
    let mut done: Vec<String> = Vec::new();
    let mut measured_before = std::collections::BTreeMap::new();
    if let Some(prev) = previous {
        run.started_at = prev.started_at.clone();
        (run.scenarios, done, measured_before) = resume_from(prev);
    }
    run.warnings.extend(system.warnings());
    run.warnings.extend(plan.warnings.iter().cloned());
    if let Err(e) = memlock::lock_all_memory() {
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
            run.warnings.push(Warning::new(WarningCode::DmaLatencyUntouched, format!("/dev/cpu_dma_latency left as the system had it ({what}); cyclictest holds it at 0 by default, so compare with --dma-latency 0")));
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
        crate::interrupt::measuring();
        let name = scenario_name(sp);
        if done.contains(&name) {
            continue;
        }
        let before: Option<&MeasuredBefore> = measured_before.get(&name);
        let Some(settings) = remaining_settings(&sp.settings, before) else {
            continue; // its parts already reached the bound
        };
        let ctx = ProbeContext {
            stop: stop.clone(),
            progress: show_progress,
            label: if total > 1 {
                format!("[{}/{}] {name}", index + 1, total)
            } else {
                name.clone()
            },
            live: Default::default(),
        };
        let started_at = crate::result::rfc3339_now();
        // Isolation first, so loads see current_system_cpus() and measuring threads
        // enter the shield; restored right after the probe, before the next scenario.
        let mut isolation = if sp.isolate.is_empty() {
            None
        } else {
            let cpus = crate::units::format_cpu_list(&sp.isolate);
            Some(
                crate::isolate::IsolationGuard::apply(&sp.isolate)
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
            Some(ts) => Some(trace::start(ts, sp)?),
            None => None,
        };
        let checkpoints = Checkpointer::start(plan, &run, &name, &started_at, &ctx.live);
        // On a probe error, `loads` is dropped here, which stops every load.
        let output = sp.probe.run(&settings, &ctx);
        // The samples are back: a second Ctrl-C from here on lets this thread save them.
        crate::interrupt::finishing();
        checkpoints.finish();
        let mut output = output.with_context(|| format!("scenario '{name}'"))?;
        let (trace, trace_warnings) = trace::stop(session, sp, &mut output)?;
        if plan.output.raw.is_none() && sp.trace.is_some() {
            // Kept only for the trace's join: not written. (Without --raw and --trace,
            // samples are kept only when the plan asked for them in memory, as
            // `latscope cyclictest -v` does.)
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
        let removed_under_run = isolation.as_mut().is_some_and(|g| g.removed_under_run());
        let isolation_report = isolation.as_ref().map(|g| g.report_json());
        let mut isolation_warnings = isolation
            .as_ref()
            .map(|g| g.report().warnings())
            .unwrap_or_default();
        if removed_under_run {
            isolation_warnings.push(Warning::new(
                WarningCode::IsolationRemovedDuringRun,
                "`latscope restore --force` undid this scenario's isolation while it ran: samples after that were not measured on a shielded CPU",
            ));
        }
        if let Some(guard) = isolation.as_mut() {
            for problem in guard.restore() {
                run.warnings.push(Warning::new(
                    WarningCode::IsolationNotRestored,
                    format!("{problem}; run `latscope restore`"),
                ));
            }
        }
        drop(isolation);
        let mut params = params_of(sp);
        params.samples = settings.samples.unwrap_or(0);
        params.duration_ns = settings.duration_ns.unwrap_or(0);
        params.extra.merge(output.extra_params);
        if let Some(b) = before {
            params.extra.merge(b.extra());
        }
        let scenario = Scenario {
            name: name.clone(),
            probe: sp.probe.kind(),
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
        let mut scenario = scenario;
        if sp.settings.worst_case {
            crate::result::worst_case::attach_to_scenario(&mut scenario, &output.raw);
            if plan.output.raw.is_none() {
                output.raw.clear(); // kept for the estimate only, not written
            }
        }
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
        if broke || index + 1 == total {
            break;
        }
        // Saved as interrupted: if latscope dies now (SIGKILL, a second Ctrl-C) the file
        // says the plan was not finished; the final save below says how it ended.
        save(plan, &in_progress(&run), &raw)?;
    }
    if stop.load(Ordering::Relaxed) && !broke {
        run.interrupted = true;
    }
    if run.interrupted {
        run.interrupted_by = crate::interrupt::received_signal().map(str::to_string);
    }
    save(plan, &run, &raw)?;
    memlock::unlock_all_memory();
    Ok(RunOutcome { run, raw })
}

/// What earlier attempts measured of an interrupted scenario (`--resume`).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct MeasuredBefore {
    /// Samples every measuring thread had at least, over the kept parts and a checkpoint.
    pub samples: u64,
    /// Measuring time of those parts, ns.
    pub elapsed_ns: u64,
    /// The kept parts' names (`NAME (interrupted part N)`).
    pub parts: Vec<String>,
    /// A `kill -9`ed attempt's last checkpoint (its counts and maxima; its samples are
    /// not in any kept part).
    pub checkpoint: Option<crate::result::Checkpoint>,
}

impl MeasuredBefore {
    /// What the continuation records in `params.extra`.
    fn extra(&self) -> crate::result::ParamsExtra {
        crate::result::ParamsExtra {
            resumed_after_samples: Some(self.samples),
            resumed_after_ns: Some(self.elapsed_ns),
            resumed_parts: Some(self.parts.clone()),
            resumed_checkpoint: self.checkpoint.clone(),
            ..crate::result::ParamsExtra::default()
        }
    }
}

const PART_MARK: &str = " (interrupted part ";

/// `--resume`: the previous run's scenarios to keep (an interrupted one renamed
/// `NAME (interrupted part N)`, as measured), the names that are done, and per
/// interrupted scenario what was measured of it, so only the rest of its samples (or of
/// its duration) runs, as a continuation marked `resumed_after_samples`.
pub fn resume_from(
    prev: Run,
) -> (
    Vec<Scenario>,
    Vec<String>,
    std::collections::BTreeMap<String, MeasuredBefore>,
) {
    let mut kept = Vec::new();
    let mut done = Vec::new();
    let mut before: std::collections::BTreeMap<String, MeasuredBefore> = Default::default();
    for mut s in prev.scenarios {
        if !s.interrupted {
            done.push(s.name.clone());
            kept.push(s);
            continue;
        }
        let base = match s.name.find(PART_MARK) {
            Some(i) => s.name[..i].to_string(),
            None => s.name.clone(),
        };
        let entry = before.entry(base.clone()).or_default();
        if !s.name.contains(PART_MARK) {
            s.name = format!("{base}{PART_MARK}{})", entry.parts.len() + 1);
        }
        entry.samples += s
            .threads
            .iter()
            .map(|t| t.summary.samples)
            .min()
            .unwrap_or(0);
        entry.elapsed_ns += s.elapsed_ns;
        entry.parts.push(s.name.clone());
        kept.push(s);
    }
    if let Some(c) = prev.checkpoint {
        if !done.contains(&c.scenario) {
            let entry = before.entry(c.scenario.clone()).or_default();
            entry.samples += c.threads.iter().map(|t| t.samples).min().unwrap_or(0);
            entry.elapsed_ns += c.elapsed_ns;
            entry.checkpoint = Some(c);
        }
    }
    (kept, done, before)
}

/// The settings of a scenario's continuation: its sample count and duration less what
/// earlier parts measured; None when nothing is left.
fn remaining_settings(
    settings: &crate::probe::CommonSettings,
    before: Option<&MeasuredBefore>,
) -> Option<crate::probe::CommonSettings> {
    let mut left = settings.clone();
    let Some(b) = before else {
        return Some(left);
    };
    if let Some(n) = settings.samples {
        left.samples = Some(n.checked_sub(b.samples).filter(|&n| n > 0)?);
    }
    if let Some(d) = settings.duration_ns {
        left.duration_ns = Some(d.checked_sub(b.elapsed_ns).filter(|&d| d > 0)?);
    }
    Some(left)
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

/// A stable hash (FNV-1a, hex) of the plan's scenarios: names and parameters, in order.
pub fn plan_hash(plan: &Plan) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for sp in &plan.scenarios {
        let text = format!(
            "{}\n{}\n",
            scenario_name(sp),
            serde_json::to_string(&params_of(sp)).unwrap_or_default()
        );
        for b in text.bytes() {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// `--resume`: refuses a result file written by another plan (or by a latscope that did
/// not record its plan), and one holding a scenario this plan does not have or with other
/// parameters (the hash alone would keep a forged one, issue 22 item 7), naming the file.
pub fn check_resumable(
    plan: &Plan,
    previous: &Run,
    path: &std::path::Path,
) -> Result<(), crate::error::UserError> {
    let bad = |reason: String| crate::error::UserError::BadInputFile {
        path: path.display().to_string(),
        reason,
    };
    let want = plan_hash(plan);
    match &previous.plan_hash {
        Some(h) if *h == want => {}
        found => return Err(bad(format!(
            "written by another plan (plan hash {}, this plan's is {want}); --resume continues only the same plan: drop --resume or choose another --export-json",
            found.as_deref().unwrap_or("absent")
        ))),
    }
    let mut complete = std::collections::BTreeSet::new();
    for s in &previous.scenarios {
        if let Some(why) = foreign_scenario(plan, s, &mut complete) {
            return Err(bad(format!(
                "its scenario '{}' {why}; --resume keeps only this plan's scenarios as they were measured: drop --resume or choose another --export-json",
                crate::error::clip(&s.name)
            )));
        }
    }
    if let Some(c) = &previous.checkpoint {
        if !plan
            .scenarios
            .iter()
            .any(|sp| scenario_name(sp) == c.scenario)
        {
            return Err(bad(format!(
                "its checkpoint is of scenario '{}', which is not in this plan; drop --resume or choose another --export-json",
                crate::error::clip(&c.scenario)
            )));
        }
    }
    Ok(())
}

/// Why a scenario of a file to resume does not belong to `plan` (None: it does): its
/// name (without ` (interrupted part N)`) is no scenario of the plan, its parameters
/// differ from that scenario's, or a complete one is there twice (`complete` collects
/// the complete ones' names).
fn foreign_scenario(
    plan: &Plan,
    s: &Scenario,
    complete: &mut std::collections::BTreeSet<String>,
) -> Option<String> {
    let base = match s.name.find(PART_MARK) {
        Some(i) if s.interrupted => &s.name[..i],
        _ => s.name.as_str(),
    };
    let Some(sp) = plan.scenarios.iter().find(|sp| scenario_name(sp) == base) else {
        return Some("is not in this plan".into());
    };
    let want = params_of(sp);
    let p = &s.params;
    let same = s.probe == sp.probe.kind()
        && p.method == want.method
        && p.period_ns == want.period_ns
        && p.policy == want.policy
        && p.priority == want.priority
        && p.deadline_ns == want.deadline_ns
        && p.cpus == want.cpus
        && p.loads == want.loads
        && p.isolate == want.isolate;
    if !same {
        return Some("has parameters other than this plan's scenario of that name".into());
    }
    if !s.interrupted && !complete.insert(s.name.clone()) {
        return Some("is there twice".into());
    }
    None
}

/// Rewrites the JSON result every `--checkpoint` while a scenario runs, with what its
/// measuring threads' atomics say so far (marked partial); stopped when the probe returns.
struct Checkpointer {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    fn start(
        plan: &Plan,
        run: &Run,
        name: &str,
        started_at: &str,
        live: &crate::probe::LiveRegistry,
    ) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        let path = match &plan.output.export_json {
            Some(p) if p.as_os_str() != "-" => p.clone(),
            _ => return Self { done, thread: None },
        };
        let interval_ns = plan.output.checkpoint_ns;
        let mut base = in_progress(run);
        let scenario = name.to_string();
        let started_at = started_at.to_string();
        let live = live.clone();
        let flag = done.clone();
        let thread = std::thread::Builder::new()
            .name("latscope-checkpoint".into())
            .spawn(move || {
                let start_ns = crate::sys::clock::monotonic_ns();
                let mut next_ns = start_ns + interval_ns;
                while !flag.load(Ordering::Relaxed) {
                    let now = crate::sys::clock::monotonic_ns();
                    if now < next_ns {
                        crate::sys::clock::sleep_for_ns((next_ns - now).min(50_000_000));
                        continue;
                    }
                    next_ns = now + interval_ns;
                    let threads = live
                        .lock()
                        .map(|l| {
                            l.iter()
                                .map(|(cpu, s)| crate::result::CheckpointThread {
                                    cpu: *cpu,
                                    samples: s.samples.load(Ordering::Relaxed),
                                    max_ns: s.max_ns.load(Ordering::Relaxed),
                                    missed: s.missed.load(Ordering::Relaxed),
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    base.checkpoint = Some(crate::result::Checkpoint {
                        scenario: scenario.clone(),
                        partial: true,
                        started_at: started_at.clone(),
                        written_at: crate::result::rfc3339_now(),
                        elapsed_ns: now - start_ns,
                        threads,
                    });
                    base.finished_at = crate::result::rfc3339_now();
                    if let Ok(bytes) = crate::report::json::JsonReporter.render(&base) {
                        // Best effort: the scenario's own save reports write errors.
                        let _ = crate::output::atomic::write_atomically(&path, &bytes);
                    }
                }
            })
            .ok();
        Self { done, thread }
    }

    fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The run as saved between scenarios: marked interrupted until the plan is done.
fn in_progress(run: &Run) -> Run {
    let mut saved = run.clone();
    saved.interrupted = true;
    saved
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

/// Writes the JSON result and the raw file (atomically) as they are now.
fn save(plan: &Plan, run: &Run, raw: &[(String, RawSeries)]) -> anyhow::Result<()> {
    if let Some(path) = &plan.output.export_json {
        if path.as_os_str() != "-" {
            let bytes = crate::report::json::JsonReporter.render(run)?;
            crate::output::atomic::write_atomically(path, &bytes)
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    let opts = crate::report::RenderOptions {
        in_ns: plan.output.ns,
        limits: plan.output.limits.clone(),
    };
    crate::report::write_exports(&plan.output.exports, run, &opts, false)?;
    if let Some(path) = &plan.output.raw {
        crate::output::atomic::write_atomically_with(path, |out| {
            crate::report::raw::write_raw(raw, out)
        })
        .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

use crate::report::Reporter;
