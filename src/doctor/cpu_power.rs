//! CPU power checks: C-states and their exit latencies against cpu_dma_latency, the
//! frequency governor, and SMT siblings of the measured CPUs.

use super::finding::{CheckId, Finding};
use super::Inputs;
use crate::units::format_cpu_list;

/// "no limit" as /dev/cpu_dma_latency reports it (PM_QOS_CPU_LATENCY_DEFAULT_VALUE).
pub const DMA_NO_LIMIT_US: i32 = 2_000_000_000;

fn dma_text(us: i32) -> String {
    if us >= DMA_NO_LIMIT_US {
        "no limit".into()
    } else {
        format!("{us} µs")
    }
}

/// Exit latencies up to this are not worth a WARN (a C1 halt's 1-2 µs).
const DEEP_US: u64 = 10;

/// The fix for deep C-states, and what the cpu_dma_latency A/B recommends when it
/// measured better.
pub const HOLD_DMA_LATENCY: &str = "hold /dev/cpu_dma_latency at 0 while the RT work runs (latscope: --dma-latency 0; cyclictest does by default)";

/// An idle state of one CPU: name, exit latency, whether disabled.
struct IdleState {
    name: String,
    latency_us: u64,
    disabled: bool,
}

fn idle_states(inputs: &Inputs, cpu: usize) -> Vec<IdleState> {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle");
    inputs
        .files
        .list(&dir)
        .into_iter()
        .filter(|n| n.starts_with("state"))
        .filter_map(|state| {
            let read = |f: &str| inputs.files.read_trim(&format!("{dir}/{state}/{f}"));
            Some(IdleState {
                name: read("name")?,
                latency_us: read("latency")?.parse().ok()?,
                disabled: read("disable").as_deref() == Some("1"),
            })
        })
        .collect()
}

pub fn cstates(inputs: &Inputs) -> Finding {
    let id = CheckId::CpusCstates;
    let driver = inputs
        .files
        .read_trim("/sys/devices/system/cpu/cpuidle/current_driver")
        .unwrap_or_else(|| "none".into());
    let dma = inputs.files.read_i32("/dev/cpu_dma_latency");
    let dma_line = match &dma {
        Ok(us) => format!("/dev/cpu_dma_latency: {}", dma_text(*us)),
        Err(e) => format!(
            "/dev/cpu_dma_latency: {}",
            crate::sys::host_files::why_unreadable(e)
        ),
    };
    let limit = dma.as_ref().copied().unwrap_or(DMA_NO_LIMIT_US).max(0) as u64;
    let mut deep = Vec::new();
    let mut excluded = Vec::new();
    let mut seen = Vec::new();
    for &cpu in &inputs.cpus {
        for s in idle_states(inputs, cpu) {
            seen.push(format!(
                "cpu{cpu} {} {} µs{}",
                s.name,
                s.latency_us,
                if s.disabled { " (disabled)" } else { "" }
            ));
            if s.disabled || s.latency_us <= DEEP_US {
                continue;
            }
            // The governor never picks a state whose exit latency is above the limit.
            if s.latency_us > limit {
                excluded.push(format!("cpu{cpu} {} ({} µs)", s.name, s.latency_us));
            } else {
                deep.push(format!("cpu{cpu} {} ({} µs)", s.name, s.latency_us));
            }
        }
    }
    let driver_line = format!("/sys/devices/system/cpu/cpuidle/current_driver: {driver}");
    if seen.is_empty() {
        return Finding::pass(
            id,
            format!(
                "no cpuidle states on CPU {} (driver {driver}): idle is a plain halt",
                format_cpu_list(&inputs.cpus)
            ),
        )
        .with(driver_line)
        .with(dma_line);
    }
    let mut f = if !deep.is_empty() && dma.is_err() {
        Finding::warn(id, format!("idle states with exit latencies above {DEEP_US} µs: {}; cpu_dma_latency unreadable", deep.join(", ")), "run as root to read /dev/cpu_dma_latency; hold it at 0 during RT work (latscope: --dma-latency 0)")
    } else if !deep.is_empty() {
        Finding::warn(
            id,
            format!("{} allowed while cpu_dma_latency is {}: waking from them adds their exit latency", deep.join(", "), dma_text(limit as i32)),
            format!("{HOLD_DMA_LATENCY}; or `cpupower idle-set -D {DEEP_US}`, or processor.max_cstate=1 intel_idle.max_cstate=1 at boot"),
        )
    } else if !excluded.is_empty() {
        Finding::pass(
            id,
            format!(
                "{} excluded: cpu_dma_latency is {} (a request holds it)",
                excluded.join(", "),
                dma_text(limit as i32)
            ),
        )
    } else {
        Finding::pass(
            id,
            format!("no idle state with an exit latency above {DEEP_US} µs is allowed"),
        )
    };
    f.evidence = vec![driver_line, dma_line];
    f.evidence.extend(seen);
    f
}

pub fn governor(inputs: &Inputs) -> Finding {
    let id = CheckId::CpusGovernor;
    let mut slow = Vec::new();
    let mut evidence = Vec::new();
    for &cpu in &inputs.cpus {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq");
        let Some(gov) = inputs.files.read_trim(&format!("{dir}/scaling_governor")) else {
            continue;
        };
        let cur = inputs
            .files
            .read_trim(&format!("{dir}/scaling_cur_freq"))
            .unwrap_or_default();
        let max = inputs
            .files
            .read_trim(&format!("{dir}/cpuinfo_max_freq"))
            .unwrap_or_default();
        evidence.push(format!("{dir}: {gov}, {cur} of {max} kHz"));
        if gov != "performance" {
            slow.push(format!("cpu{cpu} {gov}"));
        }
    }
    if evidence.is_empty() {
        return Finding::skip(id, format!("no cpufreq on CPU {} (/sys/devices/system/cpu/cpuN/cpufreq missing): the kernel does not scale the frequency here", format_cpu_list(&inputs.cpus)));
    }
    let mut f = if slow.is_empty() {
        Finding::pass(id, "governor performance on every measured CPU")
    } else {
        Finding::warn(id, format!("governor not performance: {}: frequency ramps add latency after idle", slow.join(", ")), "cpupower frequency-set -g performance (or echo performance > /sys/devices/system/cpu/cpuN/cpufreq/scaling_governor)")
    };
    f.evidence = evidence;
    f
}

/// The measured CPUs' SMT siblings that are not measured themselves.
pub fn foreign_siblings(inputs: &Inputs) -> Vec<(usize, Vec<usize>)> {
    inputs
        .cpus
        .iter()
        .map(|&cpu| {
            let siblings = inputs.cpu_list(&format!(
                "/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
            ));
            let foreign: Vec<usize> = siblings
                .into_iter()
                .filter(|s| *s != cpu && !inputs.cpus.contains(s) && inputs.online.contains(s))
                .collect();
            (cpu, foreign)
        })
        .filter(|(_, f)| !f.is_empty())
        .collect()
}

pub fn smt(inputs: &Inputs) -> Finding {
    let id = CheckId::CpusSmt;
    let active = inputs.files.read_trim("/sys/devices/system/cpu/smt/active");
    let line = format!(
        "/sys/devices/system/cpu/smt/active: {}",
        active.as_deref().unwrap_or("missing")
    );
    let shared = foreign_siblings(inputs);
    if shared.is_empty() {
        return Finding::pass(
            id,
            "no measured CPU shares its core with another online CPU",
        )
        .with(line);
    }
    let isolated = inputs.cpu_list("/sys/devices/system/cpu/isolated");
    let texts: Vec<String> = shared
        .iter()
        .map(|(c, s)| format!("cpu{c} with {}", format_cpu_list(s)))
        .collect();
    let all_isolated = shared
        .iter()
        .all(|(_, s)| s.iter().all(|c| isolated.contains(c)));
    let summary = format!(
        "measured CPUs share a core: {} (work there slows them down)",
        texts.join(", ")
    );
    let f = if all_isolated {
        Finding::pass(id, format!("{summary}; the siblings are isolated too"))
    } else {
        Finding::warn(id, summary, "echo off > /sys/devices/system/cpu/smt/control (nosmt at boot), or isolate the siblings too and keep them idle")
    };
    f.with(line)
}

/// The energy/performance hints of one CPU: EPB (0 performance .. 15 power saving) and
/// the cpufreq driver's EPP (intel_pstate, amd-pstate).
fn energy_hints(inputs: &Inputs, cpu: usize) -> (Option<i64>, Option<String>) {
    let base = format!("/sys/devices/system/cpu/cpu{cpu}");
    let epb = inputs
        .files
        .read_trim(&format!("{base}/power/energy_perf_bias"))
        .and_then(|v| v.parse().ok());
    let epp = inputs
        .files
        .read_trim(&format!("{base}/cpufreq/energy_performance_preference"));
    (epb, epp)
}

pub fn energy_bias(inputs: &Inputs) -> Finding {
    let id = CheckId::CpusEnergyBias;
    let pstate = inputs
        .files
        .read_trim("/sys/devices/system/cpu/intel_pstate/status");
    let mut evidence: Vec<String> = pstate
        .iter()
        .map(|s| format!("/sys/devices/system/cpu/intel_pstate/status: {s}"))
        .collect();
    let mut slow = Vec::new();
    for &cpu in &inputs.cpus {
        let (epb, epp) = energy_hints(inputs, cpu);
        if let Some(v) = epb {
            evidence.push(format!("cpu{cpu} power/energy_perf_bias: {v}"));
            if v > 0 {
                slow.push(format!("cpu{cpu} EPB {v}"));
            }
        }
        if let Some(p) = &epp {
            evidence.push(format!(
                "cpu{cpu} cpufreq/energy_performance_preference: {p}"
            ));
            if p != "performance" {
                slow.push(format!("cpu{cpu} EPP {p}"));
            }
        }
    }
    if evidence.is_empty() {
        return Finding::skip(id, format!("no energy-performance bias (EPB) or preference (EPP) on CPU {}: not an Intel or AMD CPU that has them, or a VM", format_cpu_list(&inputs.cpus)));
    }
    let mut f = if slow.is_empty() {
        Finding::pass(
            id,
            "the measured CPUs favour performance (EPB 0, EPP performance where present)",
        )
    } else {
        Finding::warn(
            id,
            format!("{}: the CPU trades wake-up speed and frequency for energy", slow.join(", ")),
            "x86_energy_perf_policy performance (EPB 0), echo performance > /sys/devices/system/cpu/cpuN/cpufreq/energy_performance_preference; or the `performance` governor",
        )
    };
    f.evidence = evidence;
    f
}
