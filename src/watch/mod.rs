//! `latscope watch`: long-running monitoring. The timer probe measures through the runner
//! as `latscope timer` does (same guards, restored on every exit path) but until stopped;
//! the measuring threads publish into their preallocated live atomics as always, and a
//! reader thread (never on a measured CPU, never real-time) turns those into interval
//! files (rotation, restarts, gaps), alerts and, with `--listen`, an OpenMetrics endpoint.

pub mod alert;
pub mod files;
pub mod interval;
pub mod metrics;
pub mod reader;
pub mod server;
pub mod settings;

use crate::cli::WatchArgs;
use crate::error::{UserError, EXIT_OK};
use anyhow::Context;
use metrics::{PerCpu, WatchMetrics};
use reader::{Reader, ReaderSetup};
use std::sync::Arc;

/// Blocks of at least this size are mapped apart and unmapped when freed (glibc's
/// default threshold, made fixed): an interval's histogram, its JSON, its rows.
const LARGE_BLOCK_BYTES: usize = 128 * 1024;

/// `latscope watch`: measures until SIGINT/SIGTERM (or `--duration`); exit 0 then.
pub fn run(mut args: WatchArgs, command_line: Vec<String>) -> anyhow::Result<i32> {
    settings::merge_config(&mut args)?;
    let ws = settings::check(&args)?;
    let plan = watch_plan(&args)?;
    prepare_dir(&ws.dir)?;
    // Under mlockall the arenas never shrink (see the function): the reader's large,
    // short-lived blocks get mappings of their own, so memory stays flat for months.
    crate::sys::memlock::large_allocations_mapped(LARGE_BLOCK_BYTES);
    let sp = plan
        .scenarios
        .first()
        .context("the watch's plan has no scenario")?;
    let measured = sp.settings.cpus.clone();
    let online = crate::sys::affinity::online_cpus();
    let helper_cpus: Vec<usize> = online
        .iter()
        .copied()
        .filter(|c| !measured.contains(c))
        .collect();
    if helper_cpus.is_empty() {
        eprintln!(
            "latscope watch: warning: every online CPU is measured, so the reader and the \
             endpoint share them (at SCHED_OTHER); leave one out with --cpus"
        );
    }
    let params = crate::runner::params_of(sp);
    let system = crate::sysinfo::SystemInfo::collect();
    let registry = plan.output.live_view.clone().unwrap_or_default();
    let metrics = watch_metrics(&ws, &params, &system.hostname, &measured, registry.clone());
    let endpoint = match ws.listen {
        Some(addr) => Some(server::Endpoint::start(
            addr,
            metrics.clone(),
            helper_cpus.clone(),
        )?),
        None => None,
    };
    let setup = ReaderSetup {
        registry,
        settings: ws,
        host: system.hostname.clone(),
        template: crate::result::Run::new(system, command_line.clone()),
        name: crate::runner::scenario_name(sp),
        params,
        per_cpu: metrics.per_cpu.clone(),
        helper_cpus,
    };
    let reader = Reader::start(setup).context("starting the watch's reader")?;
    let stop = crate::interrupt::install().context("installing the Ctrl-C handler")?;
    let outcome = crate::runner::execute(&plan, command_line, stop, None);
    let written = reader.finish();
    drop(endpoint);
    let outcome = outcome?;
    let written = written?;
    for w in crate::report::table::warning_lines(&outcome.run).lines() {
        eprintln!("{w}");
    }
    eprintln!(
        "latscope watch: stopped; {} interval file(s) written, the last {}",
        written.count,
        written
            .last
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "none".into())
    );
    Ok(EXIT_OK)
}

/// The plan of `timer` with watch's options: unbounded unless --duration/--samples,
/// quiet, the live atomics and histograms published for the reader.
fn watch_plan(args: &WatchArgs) -> Result<crate::plan::Plan, UserError> {
    let mut plan = crate::plan::timer_plan(&settings::timer_args(args))?;
    if args.common.duration.is_none() && args.common.samples.is_none() {
        for sp in &mut plan.scenarios {
            sp.settings.duration_ns = None;
        }
    }
    plan.output.live_view = Some(crate::probe::LiveRegistry::default());
    plan.output.quiet = true;
    plan.output.live_histograms = true;
    Ok(plan)
}

/// What the endpoint serves: labels, the alert's limit, doctor's verdict when asked.
fn watch_metrics(
    ws: &settings::WatchSettings,
    params: &crate::result::ScenarioParams,
    host: &str,
    measured: &[usize],
    live: crate::probe::LiveRegistry,
) -> Arc<WatchMetrics> {
    let period = crate::units::glued_durations(&crate::units::name_ns(params.period_ns));
    let labels = [
        ("host", host),
        ("probe", "timer"),
        ("method", &params.method),
        ("period", &period),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let readiness = ws.readiness.then(|| {
        let cpus = crate::units::format_cpu_list(measured);
        let verdict = crate::doctor::readiness_verdict(&cpus, params.priority.max(1));
        verdict.unwrap_or("unknown").to_string()
    });
    Arc::new(WatchMetrics {
        live,
        per_cpu: measured
            .iter()
            .map(|&cpu| {
                Arc::new(PerCpu {
                    cpu,
                    ..Default::default()
                })
            })
            .collect(),
        labels,
        fail_above_ns: ws.fail_above_ns,
        readiness,
        start_time_s: crate::sys::clock::realtime_ns() as f64 / 1e9,
    })
}

/// The interval directory, made and checked writable before measuring.
fn prepare_dir(dir: &std::path::Path) -> Result<(), UserError> {
    let unwritable = |reason: String| UserError::Unwritable {
        path: dir.display().to_string(),
        reason,
    };
    std::fs::create_dir_all(dir).map_err(|e| unwritable(e.to_string()))?;
    let probe = dir.join(".latscope-watch-write-check");
    crate::output::atomic::write_atomically(&probe, b"").map_err(|e| unwritable(e.to_string()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}
