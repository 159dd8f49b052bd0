//! A scenario's identity: its label in tables and files, its parameters as the result
//! records them, and the plan's hash that `--resume` checks.

use crate::plan::{Plan, ScenarioPlan};
use crate::result::ScenarioParams;

/// The label of a scenario in tables and progress lines.
pub fn scenario_name(sp: &ScenarioPlan) -> String {
    let mut name = format!("{} {}", sp.probe.kind(), sp.probe.method());
    if sp.probe.period_ns() > 0 {
        name.push(' ');
        name.push_str(&crate::units::name_ns(sp.probe.period_ns()));
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
        name.push_str(&format!(" slack={}", crate::units::name_ns(ns)));
    }
    if sp.settings.policy != crate::sys::sched::Policy::Fifo
        || sp.settings.priority != crate::plan::DEFAULT_RT_PRIORITY
    {
        name.push_str(&format!(" {}{}", sp.settings.policy, sp.settings.priority));
    }
    name
}

/// The scenario's parameters as the result file records them.
pub fn params_of(sp: &ScenarioPlan) -> ScenarioParams {
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

/// A stable hash (FNV-1a, hex) of the plan's scenarios: names (durations glued, as they
/// were first written) and parameters, in order.
pub fn plan_hash(plan: &Plan) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for sp in &plan.scenarios {
        // The name as latscope wrote it before durations were spaced (`300us`), so a
        // run started by that version still resumes.
        let text = format!(
            "{}\n{}\n",
            crate::units::glued_durations(&scenario_name(sp)),
            serde_json::to_string(&params_of(sp)).unwrap_or_default()
        );
        for b in text.bytes() {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}
