//! The runner's side of `--trace`: start the session after the loads are up and before the
//! probe (drain thread on CPUs not measured), stop it after, and turn the recording and the
//! probe's samples into `scenario.trace` with its warnings.

use crate::error::UserError;
use crate::plan::{ScenarioPlan, TraceSettings};
use crate::probe::ProbeOutput;
use crate::result::trace::{TraceResult, TraceThread};
use crate::result::ProbeKind;
use crate::stats::Stat;
use crate::trace::analysis::split::TimerMethod;
use crate::trace::{Recording, TraceConfig, TraceError, TraceSession};
use crate::warning::{Warning, WarningCode};
use anyhow::Context;
use std::collections::BTreeMap;

/// CPUs whose events the analysis needs: the measured ones, for wake both threads', for
/// gpio every CPU (the line's IRQ and its thread may run on any).
pub fn traced_cpus(sp: &ScenarioPlan) -> Vec<usize> {
    if sp.probe.kind() == ProbeKind::Gpio {
        return crate::sys::affinity::online_cpus();
    }
    let mut cpus = sp.settings.cpus.clone();
    let extra = sp.probe.extra_params();
    for c in [extra.waker_cpu, extra.wakee_cpu].into_iter().flatten() {
        cpus.push(c as usize);
    }
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// Starts recording for a scenario. Errors a user can fix come back as `UserError`
/// (exit code 2 or 4), with nothing left in `instances/`.
pub fn start(ts: &TraceSettings, sp: &ScenarioPlan) -> anyhow::Result<TraceSession> {
    let cpus = traced_cpus(sp);
    let online = crate::sys::affinity::online_cpus();
    // Off the traced CPUs; gpio traces every CPU: off the measured ones.
    let avoid = if sp.probe.kind() == ProbeKind::Gpio {
        &sp.settings.cpus
    } else {
        &cpus
    };
    let drain_cpus: Vec<usize> = online
        .iter()
        .copied()
        .filter(|c| !avoid.contains(c))
        .collect();
    let cfg = TraceConfig {
        buffer_kb_per_cpu: ts.buffer_kb_per_cpu,
        cpus,
        drain_cpus,
        events: crate::trace::record::instance::probe_events(sp.probe.kind()),
        ..TraceConfig::default()
    };
    TraceSession::start(&cfg).map_err(|e| match e {
        TraceError::NotRoot => UserError::NeedsPermission(
            "--trace needs root (CAP_SYS_ADMIN for tracefs): run with sudo".into(),
        )
        .into(),
        TraceError::Io { .. } => anyhow::Error::new(e).context("starting --trace"),
        other => UserError::Other(format!("--trace: {other}")).into(),
    })
}

/// The threshold of a scenario: as given, else `--break-above` when the run broke, else the
/// p99.9 of its samples (resolved by the analysis per thread).
fn threshold(ts: &TraceSettings, output: &ProbeOutput) -> (u64, String) {
    match ts.threshold_ns {
        Some(t) => (t, "--trace-threshold".into()),
        // The sample that broke the run must be a spike: it is what the trace kept.
        None if output.broke.is_some() => (
            output.broke.map_or(0, |b| b.break_above_ns),
            "--trace-threshold".into(),
        ),
        None => {
            let p = output
                .threads
                .iter()
                .map(|t| t.summary.stat(Stat::P999) as u64)
                .max()
                .unwrap_or(0);
            (p, Stat::P999.name().into())
        }
    }
}

/// Stops a scenario's recording (none: nothing) and analyses it into `scenario.trace`.
/// After a second Ctrl-C the analysis is skipped, so the samples are saved at once; the
/// session's Drop still removes the instance.
pub fn stop(
    session: Option<TraceSession>,
    sp: &ScenarioPlan,
    output: &mut ProbeOutput,
) -> anyhow::Result<(Option<TraceResult>, Vec<Warning>)> {
    let (Some(session), Some(ts)) = (session, &sp.trace) else {
        return Ok((None, Vec::new()));
    };
    if crate::interrupt::aborting() {
        drop(session);
        let note = "--trace: not analysed: a second interrupt aborted the run";
        return Ok((None, vec![Warning::new(WarningCode::TraceNote, note)]));
    }
    let instance = session.instance_name().to_string();
    let recording = session.stop().context("stopping --trace")?;
    let method = sp.probe.method();
    let (t, w) = finish(
        sp.probe.kind(),
        &method,
        sp.probe.timer_method(),
        ts,
        recording,
        instance,
        output,
    );
    Ok((Some(t), w))
}

/// Turns a recording and the probe's samples into `scenario.trace` and its warnings.
pub fn finish(
    kind: ProbeKind,
    method: &str,
    timer_method: Option<TimerMethod>,
    ts: &TraceSettings,
    recording: Recording,
    instance: String,
    output: &mut ProbeOutput,
) -> (TraceResult, Vec<Warning>) {
    let mut warnings = Vec::new();
    let mut by_type: BTreeMap<String, u64> = BTreeMap::new();
    for e in &recording.events {
        *by_type.entry(e.kind.tracepoint()).or_default() += 1;
    }
    if let Some(note) = crate::trace::record::instance::missing_events_note(
        &recording.missing_events,
        &recording.enabled_events,
    ) {
        warnings.push(Warning::new(WarningCode::TraceMissingEvents, note));
    }
    for c in &recording.losses.per_cpu {
        let lost = c.overrun + c.dropped + c.commit_overrun + c.missed_events;
        if lost > 0 || c.pages_missing_events > 0 {
            warnings.push(Warning::new(WarningCode::TraceLostEvents, format!(
                    "--trace: CPU {} lost {lost} events ({} pages flagged); samples there may not join — raise --trace-buffer",
                    c.cpu, c.pages_missing_events
                )));
        }
    }
    for note in &recording.notes {
        warnings.push(Warning::new(
            WarningCode::TraceNote,
            format!("--trace: {note}"),
        ));
    }
    let (threshold_ns, threshold_source) = threshold(ts, output);
    let mut result = TraceResult {
        instance,
        cpus: recording.cpus.iter().map(|&c| c as usize).collect(),
        started_ns: recording.started_ns,
        ended_ns: recording.ended_ns,
        events_recorded: recording.events.len() as u64,
        events_by_type: by_type,
        losses: recording.losses.clone(),
        missing_events: recording.missing_events.clone(),
        threshold_ns,
        threshold_source,
        ..Default::default()
    };
    result.threads = output
        .tids
        .iter()
        .map(|t| TraceThread {
            cpu: t.cpu,
            tid: t.tid,
            role: t.role.clone(),
            ..Default::default()
        })
        .collect();
    crate::trace::analysis::analyze::analyze(
        kind,
        method,
        timer_method,
        &recording,
        output,
        &mut result,
    );
    (result, warnings)
}
