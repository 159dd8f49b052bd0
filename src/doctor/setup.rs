//! The planned run judged before it runs: `latscope doctor -- timer --cpus 3 --policy
//! other` reads the options the way that command would and says what they measure
//! (SCHED_OTHER measures the scheduler's fairness; cyclictest without -p does too).

use super::finding::{CheckId, Finding, Status};
use super::Inputs;
use crate::cli::{Cli, Command};
use crate::error::UserError;
use crate::sys::sched::Policy;
use clap::Parser;

/// What the planned run would do, as far as readiness goes.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedRun {
    /// The command line after `--`, for the checklist's heading.
    pub text: String,
    /// `None`: the command's default (fifo when permitted, else other).
    pub policy: Option<Policy>,
    pub priority: Option<i32>,
    /// The CPU list as typed (`None`: every online CPU).
    pub cpus: Option<String>,
    pub dma_latency_us: Option<i32>,
    /// `latscope cyclictest`'s own defaults apply (SCHED_OTHER without -p, dma 0).
    pub cyclictest: bool,
}

/// Reads the words after `--` as the latscope command line they are.
pub fn parse(words: &[String]) -> Result<Option<PlannedRun>, UserError> {
    if words.is_empty() {
        return Ok(None);
    }
    let text = words.join(" ");
    let argv = std::iter::once("latscope".to_string()).chain(words.iter().cloned());
    let cli = Cli::try_parse_from(argv).map_err(|e| UserError::InvalidValue {
        option: "the planned run after --".into(),
        value: text.clone(),
        reason: format!(
            "{}; give a latscope command line, e.g. `-- timer --cpus 3 --policy fifo`",
            e.kind()
        ),
    })?;
    if let Command::Cyclictest(a) = &cli.command {
        let planned = crate::cyclictest::plan::cyclictest_plan(&a.args)?;
        let sp = planned.plan.scenarios.first();
        return Ok(Some(PlannedRun {
            text,
            policy: sp.map(|s| s.settings.policy),
            priority: sp.map(|s| s.settings.priority),
            cpus: sp.map(|s| crate::units::format_cpu_list(&s.settings.cpus)),
            dma_latency_us: sp.and_then(|s| s.dma_latency_us),
            cyclictest: true,
        }));
    }
    let Some(run) = cli.command.run_args() else {
        return Err(UserError::InvalidValue {
            option: "the planned run after --".into(),
            value: text,
            reason: "not a measuring command; give timer, wake, noise, net, suite or cyclictest"
                .into(),
        });
    };
    let common = &run.common;
    Ok(Some(PlannedRun {
        text,
        policy: common.policy,
        priority: common.priority,
        cpus: common.cpus.clone(),
        dma_latency_us: common
            .dma_latency
            .as_deref()
            .map(crate::plan::common::dma_latency_us)
            .transpose()?,
        cyclictest: false,
    }))
}

fn policy_check(plan: &PlannedRun, fifo_ok: bool) -> (Finding, Policy) {
    let id = CheckId::SetupPolicy;
    let policy = plan
        .policy
        .unwrap_or(if fifo_ok { Policy::Fifo } else { Policy::Other });
    let f = if policy.is_realtime() {
        Finding::pass(
            id,
            format!("measures at SCHED_{}", policy.name().to_uppercase()),
        )
    } else {
        let how = if plan.cyclictest {
            "cyclictest without -p"
        } else if plan.policy.is_some() {
            "--policy other"
        } else {
            "no permission for SCHED_FIFO, so"
        };
        Finding::warn(
            id,
            format!("{how} measures at SCHED_OTHER: the scheduler's fairness (CFS/EEVDF slices, timer slack), not RT latency; expect thousands of µs under load"),
            if plan.cyclictest { "add -p 95 (cyclictest's -p sets SCHED_FIFO)" } else { "--policy fifo --priority 95 (as root or with CAP_SYS_NICE)" },
        )
    };
    (f, policy)
}

/// The highest RT priority of the kernel threads an RT task competes with.
fn top_kernel_priority(inputs: &Inputs) -> Option<(i32, String)> {
    inputs
        .processes()
        .into_iter()
        .filter(|(_, s)| s.kernel_thread && s.is_realtime())
        .filter(|(_, s)| {
            ["irq/", "ksoftirqd/", "rcuc/", "ktimers/"]
                .iter()
                .any(|p| s.comm.starts_with(p))
        })
        .map(|(_, s)| (s.rt_priority, s.comm))
        .max()
}

fn priority_check(inputs: &Inputs, plan: &PlannedRun, policy: Policy) -> Finding {
    let id = CheckId::SetupPriority;
    if !policy.is_realtime() {
        return Finding::skip(id, "SCHED_OTHER has no RT priority to judge");
    }
    let p = plan.priority.unwrap_or(crate::plan::DEFAULT_RT_PRIORITY);
    match top_kernel_priority(inputs) {
        Some((top, name)) if top >= p => Finding::warn(
            id,
            format!("priority {p} is not above {name} (FIFO {top}): that thread's work delays the measurement"),
            format!("--priority {}", (top + 1).min(99)),
        ),
        Some((top, name)) => Finding::pass(id, format!("priority {p} above every IRQ/softirq thread (highest: {name} at {top})")),
        None => Finding::pass(id, format!("priority {p}; no RT IRQ or softirq threads to compete with")),
    }
}

fn cpus_check(inputs: &Inputs, plan: &PlannedRun) -> Finding {
    let id = CheckId::SetupCpus;
    let typed = plan.cpus.clone().unwrap_or_else(|| "all".into());
    let cpus = match super::inputs::online_cpu_list(&typed, &inputs.online) {
        Ok(c) => c,
        Err(e) => {
            return Finding::fail(
                id,
                format!("CPUs '{typed}': {e}"),
                format!(
                    "--cpus from the online CPUs {}",
                    crate::units::format_cpu_list(&inputs.online)
                ),
            );
        }
    };
    let isolated = inputs.cpu_list("/sys/devices/system/cpu/isolated");
    let mut problems = Vec::new();
    if cpus.contains(&0) && inputs.online.len() > 1 {
        problems.push(
            "CPU 0 takes housekeeping work (boot-time IRQs, timers, unbound work)".to_string(),
        );
    }
    let outside: Vec<usize> = cpus
        .iter()
        .copied()
        .filter(|c| !isolated.contains(c))
        .collect();
    if !isolated.is_empty() && !outside.is_empty() {
        problems.push(format!(
            "CPU {} not among the isolated {}",
            crate::units::format_cpu_list(&outside),
            crate::units::format_cpu_list(&isolated)
        ));
    }
    if problems.is_empty() {
        Finding::pass(
            id,
            format!("measures on CPU {}", crate::units::format_cpu_list(&cpus)),
        )
    } else {
        let fix = if isolated.is_empty() {
            "--cpus without CPU 0, and --isolate them (or isolcpus= at boot)".to_string()
        } else {
            format!("--cpus {}", crate::units::format_cpu_list(&isolated))
        };
        Finding::warn(id, problems.join("; "), fix)
    }
}

fn dma_check(plan: &PlannedRun, deep_states: bool) -> Finding {
    let id = CheckId::SetupDmaLatency;
    match plan.dma_latency_us {
        Some(0) => Finding::pass(id, "holds cpu_dma_latency at 0"),
        _ if !deep_states => Finding::pass(
            id,
            "no idle state deeper than 10 µs: cpu_dma_latency has nothing to hold back",
        ),
        Some(us) => Finding::warn(
            id,
            format!(
                "holds cpu_dma_latency at {us} µs: states up to that exit latency stay allowed"
            ),
            "--dma-latency 0",
        ),
        None => Finding::warn(
            id,
            "leaves cpu_dma_latency as the system has it: deep C-states stay allowed",
            if plan.cyclictest {
                "drop --laptop / --default-system"
            } else {
                "--dma-latency 0"
            },
        ),
    }
}

/// The planned run's findings; `fifo_ok`: whether SCHED_FIFO was granted here.
pub fn check(inputs: &Inputs, plan: &PlannedRun, fifo_ok: bool, deep_states: bool) -> Vec<Finding> {
    let (policy_finding, policy) = policy_check(plan, fifo_ok);
    vec![
        policy_finding,
        priority_check(inputs, plan, policy),
        cpus_check(inputs, plan),
        dma_check(plan, deep_states),
    ]
}

/// Whether the checks found idle states deeper than 10 µs (the cstates finding warned).
pub fn has_deep_states(findings: &[Finding]) -> bool {
    findings
        .iter()
        .any(|f| f.id == CheckId::CpusCstates && f.status == Status::Warn)
}
