//! What every probe's plan shares, in two steps: `check_*` turns what was typed into a
//! typed request (syntax and ranges only, nothing on the machine is read), and `resolve_*`
//! settles that request against this machine (online CPUs, RT permission and throttling,
//! /dev/cpu_dma_latency, the cpuset hierarchy, tracefs, writable outputs).

use super::{OutputSettings, ScenarioPlan, TraceSettings};
use crate::cli::{CommonArgs, OutputArgs};
use crate::error::UserError;
use crate::load::LoadSpec;
use crate::probe::{CommonSettings, Probe, MAX_RAW_SAMPLES};
use crate::sys::sched::{self, Policy};
use crate::units;
use crate::warning::{Warning, WarningCode};
use std::path::PathBuf;

/// Shortest period accepted.
pub const MIN_PERIOD_NS: u64 = 10_000;
/// Longest period accepted.
pub const MAX_PERIOD_NS: u64 = 10_000_000_000;
/// Longest run accepted.
pub const MAX_DURATION_NS: u64 = 7 * 24 * 3600 * 1_000_000_000;
/// Default run length when neither --samples nor --duration is given.
pub const DEFAULT_DURATION_NS: u64 = 10_000_000_000;
/// Default real-time priority (cyclictest users' habit for the measuring thread).
pub const DEFAULT_RT_PRIORITY: i32 = 95;
pub use super::trace::check_trace;

pub(crate) use crate::error::invalid;

pub(crate) use super::range::{duration_in_range, out_of_range};

/// A CPU list as typed: `all` is settled against the online CPUs when resolving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuList {
    All,
    These(Vec<usize>),
}

impl CpuList {
    /// Parses `1`, `0-3,6` or `all`; the error names `option`.
    pub fn parse(option: &str, text: &str) -> Result<CpuList, UserError> {
        if text.trim() == "all" {
            return Ok(CpuList::All);
        }
        units::parse_cpu_list_plain(text)
            .map(CpuList::These)
            .map_err(|r| invalid(option, text, r))
    }

    /// The CPUs it names on this machine.
    pub fn on(&self, online: &[usize]) -> Vec<usize> {
        match self {
            CpuList::All => online.to_vec(),
            CpuList::These(cpus) => cpus.clone(),
        }
    }
}

/// The options every probe shares, checked as typed.
#[derive(Debug, Clone)]
pub struct CommonRequest {
    /// `--cpus`; None = the probe's default (the shield under `--isolate`).
    pub cpus: Option<CpuList>,
    pub policy: Option<Policy>,
    pub priority: Option<i32>,
    pub samples: Option<u64>,
    /// `--duration` as given; see [`CommonRequest::run_bound_ns`] for the default.
    pub duration_ns: Option<u64>,
    pub warmup_ns: u64,
    pub dma_latency_us: Option<i32>,
    /// `--timer-slack` (DEFAULT_TIMER_SLACK_NS when not given); None: leave the inherited
    /// slack (only `latscope cyclictest` asks for that).
    pub timer_slack_ns: Option<u64>,
    /// `--raw FILE`: every sample is kept in order.
    pub raw: Option<PathBuf>,
    /// `--worst-case`: every sample kept in order for the estimate at the end.
    pub worst_case: bool,
    pub force: bool,
    pub isolate: Option<CpuList>,
    pub loads: Vec<LoadSpec>,
}

impl CommonRequest {
    /// The duration bound of a run: as given, else 10 s unless `--samples` bounds it.
    pub fn run_bound_ns(&self) -> Option<u64> {
        match self.duration_ns {
            Some(d) => Some(d),
            None if self.samples.is_none() => Some(DEFAULT_DURATION_NS),
            None => None,
        }
    }
}

/// `--dma-latency` as typed: a duration in whole µs (the kernel's PM QoS value is an
/// i32 of µs), `0` or `0us` included.
pub fn dma_latency_us(text: &str) -> Result<i32, UserError> {
    const MAX_US: u64 = 2_000_000_000;
    let ns = duration_in_range("--dma-latency", text, 1_000, 0, MAX_US * 1_000)?;
    if ns % 1_000 != 0 {
        return Err(invalid(
            "--dma-latency",
            text,
            "/dev/cpu_dma_latency holds whole µs; write e.g. 0us, 10us or 1ms",
        ));
    }
    Ok((ns / 1_000) as i32)
}

/// Checks the shared options as typed: CPU lists, ranges, load specs. Reads nothing.
pub fn check_common(args: &CommonArgs) -> Result<CommonRequest, UserError> {
    let isolate = match &args.isolate {
        Some(text) => Some(CpuList::parse("--isolate", text)?),
        None => None,
    };
    let cpus = match &args.cpus {
        Some(text) => Some(CpuList::parse("--cpus", text)?),
        None => None,
    };
    if let (Some(policy), Some(priority)) = (args.policy, args.priority) {
        check_priority(policy, priority)?;
    }
    let samples = match args.samples {
        Some(0) => return Err(out_of_range("--samples", "0", "1 or more")),
        s => s,
    };
    let duration_ns = match &args.duration {
        Some(t) => Some(duration_in_range(
            "--duration",
            t,
            1_000_000_000,
            1_000_000,
            MAX_DURATION_NS,
        )?),
        None => None,
    };
    let warmup_ns = duration_in_range(
        "--warmup",
        &args.warmup,
        1_000_000_000,
        0,
        3_600_000_000_000,
    )?;
    let dma_latency_us = match &args.dma_latency {
        Some(text) => Some(dma_latency_us(text)?),
        None => None,
    };
    let loads = crate::load::parse_specs(&args.loads)?;
    Ok(CommonRequest {
        cpus,
        policy: args.policy,
        priority: args.priority,
        samples,
        duration_ns,
        warmup_ns,
        dma_latency_us,
        timer_slack_ns: Some(super::timer_slack::check(args.timer_slack.as_deref())?),
        raw: args.raw.clone(),
        worst_case: args.worst_case,
        force: args.force,
        isolate,
        loads,
    })
}

/// Parses a suite's `fifo:95`, `rr`, `other` (`option` names the key in errors).
pub fn parse_policy_spec(option: &str, text: &str) -> Result<(Policy, Option<i32>), UserError> {
    let (name, priority) = match text.split_once(':') {
        Some((n, p)) => (
            n,
            Some(
                p.trim()
                    .parse::<i32>()
                    .map_err(|_| invalid(option, text, "priority is not a number"))?,
            ),
        ),
        None => (text, None),
    };
    let policy = match name.trim() {
        "fifo" => Policy::Fifo,
        "rr" => Policy::Rr,
        "other" => Policy::Other,
        _ => return Err(invalid(option, text, "use fifo:PRIO, rr:PRIO or other")),
    };
    if let Some(priority) = priority {
        check_priority(policy, priority)?;
    }
    Ok((policy, priority))
}

/// Checks a priority against its policy's range.
pub fn check_priority(policy: Policy, priority: i32) -> Result<(), UserError> {
    let (min, max) = policy.priority_range();
    if priority < min || priority > max {
        // SCHED_OTHER has one priority: say so, and where the real-time ones are.
        let range = match min == max {
            true => format!(
                "only {min} for --policy {policy} (priorities 1-99 need --policy fifo or rr)"
            ),
            false => format!("{min}-{max} for --policy {policy}"),
        };
        return Err(out_of_range("--priority", &priority.to_string(), &range));
    }
    Ok(())
}

/// Checks the output options as typed: `--fail-above`, at most one export to stdout.
/// Whether the paths can be written is [`resolve_output`]'s part.
pub fn check_output(out: &OutputArgs, raw: &Option<PathBuf>) -> Result<OutputSettings, UserError> {
    let limits = crate::plan::output::limits_from_args(out)?;
    let mut exports = crate::plan::output::exports_from_args(out);
    crate::output::exports::check_destinations(&exports)?;
    exports.retain(|e| e.format != crate::output::exports::Format::Json);
    Ok(OutputSettings {
        export_json: out.export_json.clone(),
        raw: raw.clone(),
        quiet: out.quiet,
        ns: out.ns,
        exports,
        limits,
        resume: out.resume,
        live_view: None,
        live_histograms: false,
        own_break_lines: false,
        checkpoint_ns: duration_in_range(
            "--checkpoint",
            if out.checkpoint.is_empty() {
                "10s"
            } else {
                &out.checkpoint
            },
            1_000_000_000,
            100_000_000,
            MAX_DURATION_NS,
        )?,
    })
}

/// Refuses a `--raw` run whose samples (`unit`, `bytes_per_sample` each, one per
/// `period_ns`) would exceed what is preallocated at most. `keep_raw`: `--raw`,
/// `--worst-case` (it keeps every sample, as --raw) or `--trace`.
pub fn check_raw_capacity(
    request: &CommonRequest,
    keep_raw: bool,
    period_ns: u64,
    bytes_per_sample: u64,
    unit: &str,
) -> Result<(), UserError> {
    if !keep_raw {
        return Ok(());
    }
    // The run ends at whichever bound comes first, so that one sizes the buffer.
    let asked = match (
        request.samples,
        request.run_bound_ns().map(|d| d / period_ns.max(1)),
    ) {
        (Some(s), Some(d)) => s.min(d),
        (Some(s), None) => s,
        (None, Some(d)) => d,
        (None, None) => 0,
    };
    if asked > MAX_RAW_SAMPLES {
        // Name what asked for the buffer: --raw, else --worst-case, else --trace.
        let option = match (request.raw.is_some(), request.worst_case) {
            (true, _) => "--raw",
            (false, true) => "--worst-case",
            _ => "--trace",
        };
        return Err(out_of_range(
            option,
            &format!("{asked} {unit}"),
            &format!("at most {MAX_RAW_SAMPLES} ({bytes_per_sample} bytes each, preallocated); shorten --duration or --samples"),
        ));
    }
    Ok(())
}

/// What resolving needs to know about this machine, read once per plan.
#[derive(Debug, Clone)]
pub struct Machine {
    pub online: Vec<usize>,
    /// May this process use SCHED_FIFO/RR (CAP_SYS_NICE or an RLIMIT_RTPRIO allowance)?
    pub realtime_permitted: bool,
    /// (sched_rt_runtime_us, sched_rt_period_us); runtime -1 = throttling off.
    pub rt_throttling: Option<(i64, i64)>,
}

impl Machine {
    pub fn read() -> Machine {
        Machine {
            online: crate::sys::affinity::online_cpus(),
            realtime_permitted: sched::can_use_realtime(),
            rt_throttling: sched::rt_throttling(),
        }
    }

    /// The last online CPU (the default measured CPU of several probes).
    pub fn last_cpu(&self) -> usize {
        *self.online.last().unwrap_or(&0)
    }

    /// Checks that `cpu` is online.
    pub fn online_cpu(&self, cpu: usize) -> Result<usize, UserError> {
        if self.online.contains(&cpu) {
            Ok(cpu)
        } else {
            Err(UserError::CpuNotOnline {
                cpu,
                online: units::format_cpu_list(&self.online),
            })
        }
    }
}

/// The shared options resolved: what every scenario of a probe's plan starts from.
#[derive(Debug, Clone)]
pub struct CommonPlan {
    pub settings: CommonSettings,
    pub dma_latency_us: Option<i32>,
    pub loads: Vec<LoadSpec>,
    /// The `--isolate` shield (empty: none).
    pub isolate: Vec<usize>,
    pub warnings: Vec<Warning>,
}

/// Resolves the shared options on this machine: the shield, the measured CPUs (typed,
/// else the shield, else `default_cpus`), policy and priority, /dev/cpu_dma_latency, and
/// the loads (their CPUs online and off the shield).
pub fn resolve_common(
    request: &CommonRequest,
    default_cpus: &[usize],
    machine: &Machine,
) -> Result<CommonPlan, UserError> {
    let mut warnings = Vec::new();
    let isolate = resolve_isolate(request.isolate.as_ref(), machine, &mut warnings)?;
    let cpus = match &request.cpus {
        Some(list) => list.on(&machine.online),
        None if !isolate.is_empty() => isolate.clone(),
        None => default_cpus.to_vec(),
    };
    for &cpu in &cpus {
        machine.online_cpu(cpu)?;
    }
    let (policy, priority) =
        resolve_policy(request.policy, request.priority, machine, &mut warnings)?;
    if request.dma_latency_us.is_some()
        && std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")
            .is_err()
    {
        return Err(UserError::Permission {
            what: "--dma-latency (writing /dev/cpu_dma_latency)".into(),
            capability:
                "root (the device is root's alone, 0600; no capability of the binary opens it)"
                    .into(),
            fix: "run with sudo, or drop --dma-latency".into(),
        });
    }
    let loads = resolve_loads(&request.loads, &isolate, &machine.online)?;
    let settings = CommonSettings {
        cpus,
        policy,
        priority,
        warmup_ns: request.warmup_ns,
        samples: request.samples,
        duration_ns: request.run_bound_ns(),
        keep_raw: request.raw.is_some() || request.worst_case,
        worst_case: request.worst_case,
        timer_slack_ns: request.timer_slack_ns,
    };
    Ok(CommonPlan {
        settings,
        dma_latency_us: request.dma_latency_us,
        loads,
        isolate,
        warnings,
    })
}

/// Resolves `--isolate`: online CPUs only, never all of them, and a writable cpuset
/// hierarchy; notes CPUs already isolated at boot. Empty without `--isolate`. The one
/// place a plan asks the isolation code whether it can shield these CPUs here.
pub fn resolve_isolate(
    isolate: Option<&CpuList>,
    machine: &Machine,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<usize>, UserError> {
    let Some(list) = isolate else {
        return Ok(Vec::new());
    };
    let cpus = list.on(&machine.online);
    crate::isolate::validate_cpus(&cpus, &machine.online)?;
    crate::isolate::check_available()?;
    let boot: Vec<usize> = std::fs::read_to_string("/sys/devices/system/cpu/isolated")
        .ok()
        .and_then(|s| units::parse_cpu_list_plain(s.trim()).ok())
        .unwrap_or_default();
    let overlap: Vec<usize> = cpus.iter().copied().filter(|c| boot.contains(c)).collect();
    if !overlap.is_empty() {
        warnings.push(Warning::new(
            WarningCode::IsolateOverlapsIsolcpus,
            format!(
                "CPU {} is already isolated at boot (isolcpus={}); --isolate adds the cpuset shield and IRQ moves on top",
                units::format_cpu_list(&overlap),
                units::format_cpu_list(&boot)
            ),
        ));
    }
    Ok(cpus)
}

/// What grants SCHED_FIFO/RR to a user, and the way around it.
const RT_PERMISSION_FIX: &str = "run with sudo, grant it (setcap cap_sys_nice+ep on the binary, or an rtprio line in /etc/security/limits.conf), or use --policy other";

/// Resolves policy and priority: FIFO 95 by default when permitted, otherwise
/// SCHED_OTHER with a warning; an explicit RT policy without permission is an error.
pub fn resolve_policy(
    policy: Option<Policy>,
    priority: Option<i32>,
    machine: &Machine,
    warnings: &mut Vec<Warning>,
) -> Result<(Policy, i32), UserError> {
    let permitted = machine.realtime_permitted;
    let policy = match policy {
        Some(p) if p.is_realtime() && !permitted => {
            return Err(UserError::Permission {
                what: format!("--policy {p}"),
                capability: "CAP_SYS_NICE (or an RLIMIT_RTPRIO allowance)".into(),
                fix: RT_PERMISSION_FIX.into(),
            })
        }
        // `-p 80` alone asks for a real-time priority: say what is missing, not the
        // SCHED_OTHER range the fallback would have.
        None if priority.is_some_and(|p| p > 0) && !permitted => {
            return Err(UserError::Permission {
                what: format!("--priority {}", priority.unwrap_or_default()),
                capability:
                    "a real-time policy, hence CAP_SYS_NICE (or an RLIMIT_RTPRIO allowance)".into(),
                fix: RT_PERMISSION_FIX.into(),
            })
        }
        Some(p) => p,
        None if priority == Some(0) => Policy::Other,
        None if permitted => Policy::Fifo,
        None => {
            warnings.push(Warning::new(
            WarningCode::SchedOther,
            "measuring at SCHED_OTHER: real-time policies need CAP_SYS_NICE (run as root for SCHED_FIFO 95); results include time-sharing delays",
        ));
            Policy::Other
        }
    };
    let priority = priority.unwrap_or(if policy.is_realtime() {
        DEFAULT_RT_PRIORITY
    } else {
        0
    });
    check_priority(policy, priority)?;
    if policy == Policy::Other && permitted {
        warnings.push(Warning::new(
            WarningCode::SchedOther,
            "measuring at SCHED_OTHER as asked: results include time-sharing delays",
        ));
    }
    Ok((policy, priority))
}

/// Resolves parsed `--load` specs: their `cpus=` online, a serial load's `dev=` a
/// terminal that opens, and off the `isolate` shield (loads could not run there, and
/// the shield exists to keep them out).
pub fn resolve_loads(
    loads: &[LoadSpec],
    isolate: &[usize],
    online: &[usize],
) -> Result<Vec<LoadSpec>, UserError> {
    crate::load::engine::check_cpus(loads, online)?;
    crate::load::serial::check_devices(loads)?;
    for spec in loads {
        if let Some(&cpu) = spec.cpus.iter().flatten().find(|c| isolate.contains(c)) {
            return Err(invalid(
                "--load",
                &spec.text,
                format!(
                    "CPU {cpu} is shielded by --isolate {}; give the load other CPUs or leave out cpus=",
                    units::format_cpu_list(isolate)
                ),
            ));
        }
    }
    Ok(loads.to_vec())
}

/// Refuses `--trace` where it cannot record: not root, no tracefs. (An instance left under
/// our reused PID by a killed run is removed by the recorder; one in use is refused there.)
pub fn resolve_trace(trace: Option<TraceSettings>) -> Result<Option<TraceSettings>, UserError> {
    if trace.is_none() {
        return Ok(None);
    }
    if crate::sys::process::effective_uid() != 0 {
        return Err(UserError::NeedsPermission(
            "--trace needs root (CAP_SYS_ADMIN for tracefs): run with sudo".into(),
        ));
    }
    let kernel_has_it = std::fs::read_to_string("/proc/filesystems")
        .map(|f| f.lines().any(|l| l.trim_end().ends_with("tracefs")))
        .unwrap_or(false);
    if !kernel_has_it {
        return Err(UserError::Other(
            "--trace: this kernel has no tracefs (CONFIG_FTRACE off), so nothing can be recorded; use a kernel with tracing, or leave --trace out".into(),
        ));
    }
    Ok(trace)
}

/// Checks that every output can be written, before measuring.
pub fn resolve_output(output: OutputSettings) -> Result<OutputSettings, UserError> {
    use crate::output::exports::check_output_path;
    check_output_path("--export-json", &output.export_json)?;
    check_output_path("--raw", &output.raw)?;
    crate::output::exports::check_writable(&output.exports)?;
    Ok(output)
}

/// The plan of one probe's command (timer, noise, wake, net): the shared options resolved
/// with `default_cpus`, then the trace and the outputs, then the scenarios `build` makes
/// from them (it may add warnings to the shared options' ones).
pub fn command_plan(
    common: &CommonRequest,
    default_cpus: &[usize],
    trace: Option<TraceSettings>,
    output: OutputSettings,
    machine: &Machine,
    build: impl FnOnce(
        &CommonPlan,
        &Option<TraceSettings>,
        &mut Vec<Warning>,
    ) -> Result<Vec<ScenarioPlan>, UserError>,
) -> Result<super::Plan, UserError> {
    let common = resolve_common(common, default_cpus, machine)?;
    let trace = resolve_trace(trace)?;
    let output = resolve_output(output)?;
    let mut warnings = common.warnings.clone();
    let scenarios = build(&common, &trace, &mut warnings)?;
    Ok(super::Plan {
        scenarios,
        output,
        warnings,
        suite: None,
    })
}

/// Refuses RT busy-waiting where it could stall the machine, and warns about RT
/// throttling where it will show up as latency.
pub fn check_busy_safety(
    settings: &CommonSettings,
    force: bool,
    machine: &Machine,
    warnings: &mut Vec<Warning>,
) -> Result<(), UserError> {
    if !settings.policy.is_realtime() {
        return Ok(());
    }
    let throttling = machine.rt_throttling;
    let throttling_off = throttling.is_some_and(|(runtime, _)| runtime < 0);
    if !force && machine.online.len() <= 1 {
        return Err(UserError::Unsafe {
            what: format!(
                "busy-waiting at {} {} on the only online CPU",
                settings.policy, settings.priority
            ),
            why: "nothing else could run on this machine while it spins".into(),
            fix: "use --policy other, another method, or --force if you accept the stall".into(),
        });
    }
    if !force && throttling_off {
        return Err(UserError::Unsafe {
            what: format!("busy-waiting at {} {}", settings.policy, settings.priority),
            why: "RT throttling is off (sched_rt_runtime_us = -1), so a spinning RT thread owns its CPU completely and can starve kernel threads".into(),
            fix: "use --policy other, re-enable throttling (echo 950000 > /proc/sys/kernel/sched_rt_runtime_us), or --force".into(),
        });
    }
    if let Some((runtime, period)) = throttling {
        if runtime >= 0 && runtime < period {
            warnings.push(Warning::new(
            WarningCode::BusyRtThrottled,
            format!(
                    "busy-waiting at {}: RT throttling will stop the spinning thread for {} every {}, which shows up as latency",
                    settings.policy,
                    units::human_ns((period - runtime) as u64 * 1000),
                    units::human_ns(period as u64 * 1000)
                ),
        ));
        }
    }
    Ok(())
}

/// The scenarios of `probes` (timer, noise; the CLI's and the suites'); where one of them
/// busy-waits, the RT safety checks run first on this machine (their warnings go to
/// `warnings`).
pub fn busy_checked_scenarios<P: Probe + 'static>(
    probes: Vec<P>,
    common: &CommonPlan,
    force: bool,
    trace: &Option<TraceSettings>,
    machine: &Machine,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<ScenarioPlan>, UserError> {
    if probes.iter().any(|p| p.busy_waits()) {
        check_busy_safety(&common.settings, force, machine, warnings)?;
    }
    let probes = probes
        .into_iter()
        .map(|p| Box::new(p) as Box<dyn Probe>)
        .collect();
    Ok(scenarios_of(probes, common, trace))
}

/// One scenario per probe, in order, all sharing `common` (settings, DMA latency request,
/// loads, shield) and `trace` (which keeps every sample in order for its join, as `--raw`).
pub fn scenarios_of(
    probes: Vec<Box<dyn Probe>>,
    common: &CommonPlan,
    trace: &Option<TraceSettings>,
) -> Vec<ScenarioPlan> {
    let mut settings = common.settings.clone();
    settings.keep_raw |= trace.is_some();
    probes
        .into_iter()
        .map(|probe| ScenarioPlan {
            probe,
            settings: settings.clone(),
            dma_latency_us: common.dma_latency_us,
            loads: common.loads.clone(),
            isolate: common.isolate.clone(),
            trace: trace.clone(),
        })
        .collect()
}

/// Adds `new` warnings to `all`, each once (a suite resolves the same option many times).
pub fn add_warnings(all: &mut Vec<Warning>, new: impl IntoIterator<Item = Warning>) {
    for w in new {
        if !all
            .iter()
            .any(|seen| seen.code == w.code && seen.message == w.message)
        {
            all.push(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(cpus: usize) -> Machine {
        Machine {
            online: (0..cpus).collect(),
            realtime_permitted: true,
            rt_throttling: Some((950_000, 1_000_000)),
        }
    }

    #[test]
    fn checking_reads_nothing_and_keeps_all_for_later() {
        let args = CommonArgs {
            cpus: Some("all".into()),
            isolate: Some("1-2".into()),
            loads: vec!["cpu:50%,cpus=0".into()],
            warmup: "1s".into(),
            ..CommonArgs::default()
        };
        let request = check_common(&args).unwrap();
        assert_eq!(request.cpus, Some(CpuList::All));
        assert_eq!(request.isolate, Some(CpuList::These(vec![1, 2])));
        assert_eq!(request.loads[0].cpus, Some(vec![0]));
        assert_eq!(request.run_bound_ns(), Some(DEFAULT_DURATION_NS));
        assert_eq!(CpuList::All.on(&[0, 1, 2, 3]), vec![0, 1, 2, 3]);
    }

    #[test]
    fn loads_are_resolved_against_cpus_and_shield() {
        let specs = crate::load::parse_specs(&["cpu:50%,cpus=3".into()]).unwrap();
        assert!(resolve_loads(&specs, &[], &[0, 1, 2, 3]).is_ok());
        assert!(matches!(
            resolve_loads(&specs, &[], &[0, 1]),
            Err(UserError::CpuNotOnline { cpu: 3, .. })
        ));
        let err = resolve_loads(&specs, &[3], &[0, 1, 2, 3]).unwrap_err();
        assert!(err.to_string().contains("shielded by --isolate 3"), "{err}");
    }

    #[test]
    fn policy_defaults_follow_permission() {
        let mut warnings = Vec::new();
        let rt = machine(2);
        assert_eq!(
            resolve_policy(None, None, &rt, &mut warnings).unwrap(),
            (Policy::Fifo, DEFAULT_RT_PRIORITY)
        );
        assert!(warnings.is_empty());
        let plain = Machine {
            realtime_permitted: false,
            ..rt
        };
        assert_eq!(
            resolve_policy(None, None, &plain, &mut warnings).unwrap(),
            (Policy::Other, 0)
        );
        assert_eq!(warnings[0].code, WarningCode::SchedOther);
        assert!(matches!(
            resolve_policy(Some(Policy::Fifo), None, &plain, &mut warnings),
            Err(UserError::Permission { .. })
        ));
    }

    #[test]
    fn suite_policies_parse_and_check_their_range() {
        assert_eq!(
            parse_policy_spec("policies", "fifo:80").unwrap(),
            (Policy::Fifo, Some(80))
        );
        assert_eq!(
            parse_policy_spec("policies", "other").unwrap(),
            (Policy::Other, None)
        );
        assert!(parse_policy_spec("policies", "fifo:x").is_err());
        assert!(parse_policy_spec("policies", "deadline").is_err());
        assert!(parse_policy_spec("policies", "fifo:100").is_err());
    }

    #[test]
    fn busy_safety_needs_a_second_cpu_and_throttling() {
        let settings = CommonSettings {
            cpus: vec![0],
            policy: Policy::Fifo,
            priority: 95,
            warmup_ns: 0,
            samples: None,
            duration_ns: Some(1),
            keep_raw: false,
            worst_case: false,
            timer_slack_ns: Some(1),
        };
        let mut warnings = Vec::new();
        assert!(check_busy_safety(&settings, false, &machine(1), &mut warnings).is_err());
        assert!(check_busy_safety(&settings, true, &machine(1), &mut warnings).is_ok());
        let unthrottled = Machine {
            rt_throttling: Some((-1, 1_000_000)),
            ..machine(2)
        };
        assert!(check_busy_safety(&settings, false, &unthrottled, &mut warnings).is_err());
        warnings.clear();
        check_busy_safety(&settings, false, &machine(2), &mut warnings).unwrap();
        assert_eq!(warnings[0].code, WarningCode::BusyRtThrottled);
    }
}
