//! From what the user typed to a validated Plan: every range checked and every value
//! resolved against this machine (online CPUs, permissions, RT throttling) before
//! anything is measured, so a long run never fails at its end.

pub mod wake;

use crate::cli::{CommonArgs, NetArgs, NoiseArgs, OutputArgs, TimerArgs, TraceArgs};
use crate::error::UserError;
use crate::probe::net::{packet, NetProbe};
use crate::probe::noise::NoiseProbe;
use crate::probe::timer::{Method, TimerProbe};
use crate::probe::{CommonSettings, Probe, MAX_RAW_SAMPLES};
use crate::result::Warning;
use crate::sys::sched::{self, Policy};
use crate::units;
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

/// One scenario to run.
pub struct ScenarioPlan {
    pub probe: Box<dyn Probe>,
    pub settings: CommonSettings,
    pub dma_latency_us: Option<i32>,
    pub loads: Vec<String>,
    pub isolate: Vec<usize>,
    /// `--trace`: record and analyse the kernel side (None: no tracing).
    pub trace: Option<TraceSettings>,
}

/// What `--trace` was asked to do, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceSettings {
    /// Samples above this are spikes; None = the scenario's p99.9.
    pub threshold_ns: Option<u64>,
    /// Ring buffer per traced CPU, KiB.
    pub buffer_kb_per_cpu: u64,
}

/// Default `--trace-buffer`: per traced CPU.
pub const DEFAULT_TRACE_BUFFER_BYTES: u64 = 8 << 20;

/// Validates the `--trace` options of a probe (`probe` names it in errors): the values
/// first, then this machine (root, tracefs, our instance name free). Nothing is created.
pub fn resolve_trace(args: &TraceArgs) -> Result<Option<TraceSettings>, UserError> {
    if !args.trace {
        for (given, option) in [
            (args.trace_threshold.is_some(), "--trace-threshold"),
            (args.trace_buffer.is_some(), "--trace-buffer"),
        ] {
            if given {
                return Err(UserError::Other(format!(
                    "{option} only applies with --trace; add --trace or leave {option} out"
                )));
            }
        }
        return Ok(None);
    }
    let threshold_ns = match &args.trace_threshold {
        Some(t) => Some(duration_in_range(
            "--trace-threshold",
            t,
            1_000,
            1,
            60_000_000_000,
        )?),
        None => None,
    };
    let buffer_bytes = match &args.trace_buffer {
        Some(t) => {
            let b = units::parse_size_bytes(t).map_err(|r| invalid("--trace-buffer", t, r))?;
            if !(64 << 10..=1 << 30).contains(&b) {
                return Err(out_of_range("--trace-buffer", t, "64K to 1G per CPU"));
            }
            b
        }
        None => DEFAULT_TRACE_BUFFER_BYTES,
    };
    check_trace_available()?;
    Ok(Some(TraceSettings {
        threshold_ns,
        buffer_kb_per_cpu: buffer_bytes >> 10,
    }))
}

/// Refuses `--trace` where it cannot record: not root, no tracefs. (An instance left under
/// our reused PID by a killed run is removed by the recorder; one in use is refused there.)
pub fn check_trace_available() -> Result<(), UserError> {
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
    Ok(())
}
#[derive(Debug, Clone, Default)]
pub struct OutputSettings {
    pub export_json: Option<PathBuf>,
    pub raw: Option<PathBuf>,
    pub quiet: bool,
    pub ns: bool,
    /// `--export-*` destinations besides the JSON.
    pub exports: Vec<crate::report::exports::Export>,
    /// `--fail-above` limits.
    pub limits: Vec<crate::report::limits::Limit>,
    /// `--checkpoint`: how often a running scenario's partial result is saved.
    pub checkpoint_ns: u64,
}

/// A validated run.
pub struct Plan {
    pub scenarios: Vec<ScenarioPlan>,
    pub output: OutputSettings,
    /// Warnings found while resolving the options (e.g. SCHED_OTHER fallback).
    pub warnings: Vec<Warning>,
    /// The study-table layout when the plan is a suite.
    pub suite: Option<crate::result::SuiteInfo>,
}

pub(crate) fn invalid(option: &str, value: &str, reason: impl Into<String>) -> UserError {
    UserError::InvalidValue {
        option: option.into(),
        value: value.into(),
        reason: reason.into(),
    }
}

pub(crate) fn out_of_range(option: &str, value: &str, range: &str) -> UserError {
    UserError::OutOfRange {
        option: option.into(),
        value: value.into(),
        range: range.into(),
    }
}

/// Parses a duration option and checks it against an inclusive range.
pub fn duration_in_range(
    option: &str,
    text: &str,
    bare_unit_ns: u64,
    min_ns: u64,
    max_ns: u64,
) -> Result<u64, UserError> {
    let ns = units::parse_duration_ns_with_default(text, bare_unit_ns)
        .map_err(|reason| invalid(option, text, reason))?;
    if ns < min_ns || ns > max_ns {
        return Err(out_of_range(
            option,
            text,
            &format!("{} to {}", units::human_ns(min_ns), units::human_ns(max_ns)),
        ));
    }
    Ok(ns)
}

/// Resolves the options every probe shares.
pub fn resolve_common(
    args: &CommonArgs,
    default_cpus: &[usize],
) -> Result<(CommonSettings, Option<i32>, Vec<Warning>), UserError> {
    let online = crate::sys::affinity::online_cpus();
    let mut warnings = Vec::new();
    let isolate = resolve_isolate(args, &mut warnings)?;
    let cpus = match &args.cpus {
        Some(text) => {
            units::parse_cpu_list(text, &online).map_err(|r| invalid("--cpus", text, r))?
        }
        None if !isolate.is_empty() => isolate,
        None => default_cpus.to_vec(),
    };
    for &cpu in &cpus {
        if !online.contains(&cpu) {
            return Err(UserError::CpuNotOnline {
                cpu,
                online: units::format_cpu_list(&online),
            });
        }
    }
    let (policy, priority) = resolve_policy(args.policy, args.priority, &mut warnings)?;
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
        None if samples.is_none() => Some(DEFAULT_DURATION_NS),
        None => None,
    };
    let warmup_ns = duration_in_range(
        "--warmup",
        &args.warmup,
        1_000_000_000,
        0,
        3_600_000_000_000,
    )?;
    if let Some(us) = args.dma_latency {
        if us < 0 {
            return Err(out_of_range(
                "--dma-latency",
                &us.to_string(),
                "0 to 2000000000 µs",
            ));
        }
        if std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")
            .is_err()
        {
            return Err(UserError::Permission {
                what: "--dma-latency (writing /dev/cpu_dma_latency)".into(),
                capability: "root".into(),
                fix: "no --dma-latency".into(),
            });
        }
    }
    let settings = CommonSettings {
        cpus,
        policy,
        priority,
        warmup_ns,
        samples,
        duration_ns,
        keep_raw: args.raw.is_some(),
    };
    Ok((settings, args.dma_latency, warnings))
}

/// Resolves `--isolate CPUS`: online CPUs only, never all of them, and a writable
/// cpuset hierarchy; notes CPUs already isolated at boot. Empty without `--isolate`.
pub fn resolve_isolate(
    args: &CommonArgs,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<usize>, UserError> {
    let Some(text) = &args.isolate else {
        return Ok(Vec::new());
    };
    let online = crate::sys::affinity::online_cpus();
    let cpus = units::parse_cpu_list(text, &online).map_err(|r| invalid("--isolate", text, r))?;
    crate::isolate::validate_cpus(&cpus, &online)?;
    crate::isolate::check_available()?;
    let boot: Vec<usize> = std::fs::read_to_string("/sys/devices/system/cpu/isolated")
        .ok()
        .and_then(|s| units::parse_cpu_list_plain(s.trim()).ok())
        .unwrap_or_default();
    let overlap: Vec<usize> = cpus.iter().copied().filter(|c| boot.contains(c)).collect();
    if !overlap.is_empty() {
        warnings.push(Warning {
            code: "isolate_overlaps_isolcpus".into(),
            message: format!(
                "CPU {} is already isolated at boot (isolcpus={}); --isolate adds the cpuset shield and IRQ moves on top",
                units::format_cpu_list(&overlap),
                units::format_cpu_list(&boot)
            ),
        });
    }
    Ok(cpus)
}

/// Resolves policy and priority: FIFO 95 by default when permitted, otherwise
/// SCHED_OTHER with a warning; an explicit RT policy without permission is an error.
pub fn resolve_policy(
    policy: Option<Policy>,
    priority: Option<i32>,
    warnings: &mut Vec<Warning>,
) -> Result<(Policy, i32), UserError> {
    let permitted = sched::can_use_realtime();
    let policy = match policy {
        Some(p) if p.is_realtime() && !permitted => {
            return Err(UserError::Permission {
                what: format!("--policy {p}"),
                capability: "CAP_SYS_NICE (or an RLIMIT_RTPRIO allowance)".into(),
                fix: "--policy other".into(),
            })
        }
        Some(p) => p,
        None if priority == Some(0) => Policy::Other,
        None if permitted => Policy::Fifo,
        None => {
            warnings.push(Warning {
                code: "sched_other".into(),
                message: "measuring at SCHED_OTHER: real-time policies need CAP_SYS_NICE (run as root for SCHED_FIFO 95); results include time-sharing delays".into(),
            });
            Policy::Other
        }
    };
    let (min, max) = policy.priority_range();
    let priority = priority.unwrap_or(if policy.is_realtime() {
        DEFAULT_RT_PRIORITY
    } else {
        0
    });
    if priority < min || priority > max {
        return Err(out_of_range(
            "--priority",
            &priority.to_string(),
            &format!("{min}-{max} for --policy {policy}"),
        ));
    }
    if policy == Policy::Other && permitted {
        warnings.push(Warning {
            code: "sched_other".into(),
            message: "measuring at SCHED_OTHER as asked: results include time-sharing delays"
                .into(),
        });
    }
    Ok((policy, priority))
}

/// Checks an output path before measuring.
pub fn check_output_path(option: &str, path: &Option<PathBuf>) -> Result<(), UserError> {
    if let Some(p) = path {
        crate::result::check_writable(p).map_err(|e| UserError::Unwritable {
            path: format!("{} ({option})", p.display()),
            reason: e.to_string(),
        })?;
    }
    Ok(())
}

/// Validates output options.
pub fn resolve_output(
    out: &OutputArgs,
    raw: &Option<PathBuf>,
) -> Result<OutputSettings, UserError> {
    check_output_path("--export-json", &out.export_json)?;
    check_output_path("--raw", raw)?;
    let limits = crate::report::exports::limits_from_args(out)?;
    let mut all = crate::report::exports::from_args(out);
    crate::report::exports::check(&all)?;
    all.retain(|e| e.format != crate::report::Format::Json);
    Ok(OutputSettings {
        export_json: out.export_json.clone(),
        raw: raw.clone(),
        quiet: out.quiet,
        ns: out.ns,
        exports: all,
        limits,
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

/// Refuses RT busy-waiting where it could stall the machine, and warns about RT
/// throttling where it will show up as latency.
pub fn check_busy_safety(
    settings: &CommonSettings,
    force: bool,
    warnings: &mut Vec<Warning>,
) -> Result<(), UserError> {
    if !settings.policy.is_realtime() {
        return Ok(());
    }
    let online = crate::sys::affinity::online_cpus();
    let throttling = sched::rt_throttling();
    let throttling_off = throttling.is_some_and(|(runtime, _)| runtime < 0);
    if !force && online.len() <= 1 {
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
            warnings.push(Warning {
                code: "busy_rt_throttled".into(),
                message: format!(
                    "busy-waiting at {}: RT throttling will stop the spinning thread for {} every {}, which shows up as latency",
                    settings.policy,
                    units::human_ns((period - runtime) as u64 * 1000),
                    units::human_ns(period as u64 * 1000)
                ),
            });
        }
    }
    Ok(())
}

/// Refuses a `--raw` run whose samples (`unit`, `bytes_per_sample` each, one per
/// `period_ns`) would exceed what is preallocated at most.
pub fn check_raw_capacity(
    settings: &CommonSettings,
    period_ns: u64,
    bytes_per_sample: u64,
    unit: &str,
) -> Result<(), UserError> {
    if !settings.keep_raw {
        return Ok(());
    }
    // The run ends at whichever bound comes first, so that one sizes the buffer.
    let asked = match (
        settings.samples,
        settings.duration_ns.map(|d| d / period_ns.max(1)),
    ) {
        (Some(s), Some(d)) => s.min(d),
        (Some(s), None) => s,
        (None, Some(d)) => d,
        (None, None) => 0,
    };
    if asked > MAX_RAW_SAMPLES {
        return Err(out_of_range(
            "--raw",
            &format!("{asked} {unit}"),
            &format!("at most {MAX_RAW_SAMPLES} ({bytes_per_sample} bytes each, preallocated); shorten --duration or --samples"),
        ));
    }
    Ok(())
}

/// A plan of one scenario per probe, in order, all sharing the settings, the DMA
/// latency request, the loads and the `--isolate` shield.
pub fn plan_of(
    probes: Vec<Box<dyn Probe>>,
    settings: CommonSettings,
    dma_latency_us: Option<i32>,
    loads: Vec<String>,
    isolate: Vec<usize>,
    output: OutputSettings,
    warnings: Vec<Warning>,
) -> Plan {
    let scenarios = probes
        .into_iter()
        .map(|probe| ScenarioPlan {
            probe,
            settings: settings.clone(),
            dma_latency_us,
            loads: loads.clone(),
            isolate: isolate.clone(),
            trace: None,
        })
        .collect();
    Plan {
        scenarios,
        output,
        warnings,
        suite: None,
    }
}

/// Turns tracing on for every scenario of `plan` (the join needs every sample, so they are
/// kept in order as for `--raw`).
pub fn with_trace(mut plan: Plan, trace: Option<TraceSettings>) -> Plan {
    if trace.is_some() {
        for sp in &mut plan.scenarios {
            sp.settings.keep_raw = true;
            sp.trace = trace.clone();
        }
    }
    plan
}

/// Builds the plan of `latscope timer`.
pub fn timer_plan(args: &TimerArgs) -> Result<Plan, UserError> {
    let methods =
        Method::parse_list(&args.method).map_err(|r| invalid("--method", &args.method, r))?;
    let period_ns = match (&args.period, &args.interval_us) {
        (Some(p), _) => duration_in_range("--period", p, 1_000, MIN_PERIOD_NS, MAX_PERIOD_NS)?,
        (None, Some(i)) => duration_in_range("--interval", i, 1_000, MIN_PERIOD_NS, MAX_PERIOD_NS)?,
        (None, None) => 1_000_000,
    };
    let deadline_ns = match &args.deadline {
        Some(d) => duration_in_range("--deadline", d, 1_000, 1, 60_000_000_000)?,
        None => period_ns,
    };
    let break_above_ns = match &args.break_above {
        Some(b) => Some(duration_in_range(
            "--break-above",
            b,
            1_000,
            1,
            60_000_000_000,
        )?),
        None => None,
    };
    let online = crate::sys::affinity::online_cpus();
    let (settings, dma, mut warnings) = resolve_common(&args.common, &online)?;
    let (loads, isolate) = resolve_loads_and_isolation(&args.common)?;
    let trace = resolve_trace(&args.trace)?;
    let mut sized = settings.clone();
    sized.keep_raw |= trace.is_some();
    check_raw_capacity(&sized, period_ns, 16, "samples per thread")?;
    if methods.contains(&Method::Busy) {
        check_busy_safety(&settings, args.common.force, &mut warnings)?;
    }
    let output = resolve_output(&args.output, &args.common.raw)?;
    let probes = methods
        .into_iter()
        .map(|method| {
            Box::new(TimerProbe {
                method,
                period_ns,
                deadline_ns,
                break_above_ns,
            }) as Box<dyn Probe>
        })
        .collect();
    Ok(with_trace(
        plan_of(probes, settings, dma, loads, isolate, output, warnings),
        trace,
    ))
}

/// Builds the plan of `latscope noise`: every online CPU but the first by default (it
/// keeps the machine's housekeeping), busy at the chosen policy like the timer's busy
/// method, so the same RT safety checks apply.
pub fn noise_plan(args: &NoiseArgs) -> Result<Plan, UserError> {
    let threshold_ns = duration_in_range("--threshold", &args.threshold, 1_000, 0, 1_000_000_000)?;
    let deadline_ns = duration_in_range("--deadline", &args.deadline, 1_000, 1, 60_000_000_000)?;
    let online = crate::sys::affinity::online_cpus();
    let default_cpus: Vec<usize> = if online.len() > 1 {
        online[1..].to_vec()
    } else {
        online.clone()
    };
    let (settings, dma, mut warnings) = resolve_common(&args.common, &default_cpus)?;
    check_busy_safety(&settings, args.common.force, &mut warnings)?;
    let (loads, isolate) = resolve_loads_and_isolation(&args.common)?;
    let trace = resolve_trace(&args.trace)?;
    let output = resolve_output(&args.output, &args.common.raw)?;
    let probe = Box::new(NoiseProbe {
        threshold_ns,
        deadline_ns,
    });
    Ok(with_trace(
        plan_of(vec![probe], settings, dma, loads, isolate, output, warnings),
        trace,
    ))
}

/// Parses `ADDR:PORT` for --target/--serve, naming the option when it is not one.
pub fn socket_addr(option: &str, text: &str) -> Result<std::net::SocketAddr, UserError> {
    text.parse().map_err(|_| {
        invalid(
            option,
            text,
            "expected ADDR:PORT, e.g. 127.0.0.1:9750 or [::1]:9750",
        )
    })
}

/// Parses the --size list of `latscope net`.
pub fn net_sizes(text: &str) -> Result<Vec<usize>, UserError> {
    let mut sizes = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let n = units::parse_size_bytes(part).map_err(|r| invalid("--size", part, r))?;
        if n < packet::MIN_SIZE as u64 || n > packet::MAX_SIZE as u64 {
            return Err(out_of_range(
                "--size",
                part,
                &format!(
                    "{} to {} bytes (UDP payload, header included)",
                    packet::MIN_SIZE,
                    packet::MAX_SIZE
                ),
            ));
        }
        if !sizes.contains(&(n as usize)) {
            sizes.push(n as usize);
        }
    }
    if sizes.is_empty() {
        return Err(invalid(
            "--size",
            text,
            "no size given; e.g. --size 64,4000,8192",
        ));
    }
    Ok(sizes)
}

/// Builds the plan of `latscope net` (not --serve): one scenario per payload size; the
/// sender runs on the first CPU of --cpus (default: the last online CPU) and the
/// in-process reflector on another CPU when there is one.
pub fn net_plan(args: &NetArgs) -> Result<Plan, UserError> {
    if args.trace {
        return Err(UserError::Other(
            "--trace is not available for net (its split uses kernel receive timestamps already); it works with timer, wake and noise".into(),
        ));
    }
    let sizes = net_sizes(&args.size)?;
    let interval_ns = match (&args.interval, args.flood) {
        (_, true) => 0,
        (Some(i), false) => {
            duration_in_range("--interval", i, 1_000, MIN_PERIOD_NS, MAX_PERIOD_NS)?
        }
        (None, false) => 1_000_000,
    };
    let timeout_ns = match &args.timeout {
        Some(t) => duration_in_range("--timeout", t, 1_000_000, 100_000, 60_000_000_000)?,
        None => (interval_ns * 10).max(100_000_000),
    };
    let deadline_ns = match &args.deadline {
        Some(d) => duration_in_range("--deadline", d, 1_000, 1, 60_000_000_000)?,
        None if interval_ns > 0 => interval_ns,
        None => 1_000_000,
    };
    let target = match &args.target {
        Some(t) => Some(socket_addr("--target", t)?),
        None => None,
    };
    let online = crate::sys::affinity::online_cpus();
    let last = *online.last().unwrap_or(&0);
    let (mut settings, dma, warnings) = resolve_common(&args.common, &[last])?;
    settings.cpus.truncate(1);
    let sender_cpu = settings.cpus[0];
    let reflector_cpu = match args.reflector_cpu {
        Some(c) if online.contains(&c) => c,
        Some(c) => {
            return Err(UserError::CpuNotOnline {
                cpu: c,
                online: units::format_cpu_list(&online),
            })
        }
        None => online
            .iter()
            .copied()
            .find(|&c| c != sender_cpu)
            .unwrap_or(sender_cpu),
    };
    let output = resolve_output(&args.output, &args.common.raw)?;
    let (loads, isolate) = resolve_loads_and_isolation(&args.common)?;
    let probes = sizes
        .into_iter()
        .map(|size| {
            Box::new(NetProbe {
                size,
                interval_ns,
                timeout_ns,
                deadline_ns,
                target,
                reflector_cpu,
            }) as Box<dyn Probe>
        })
        .collect();
    Ok(plan_of(
        probes, settings, dma, loads, isolate, output, warnings,
    ))
}

/// Validates `--load` specs (syntax, fields, CPUs online) before anything runs; the
/// runner starts them from the same texts.
pub fn resolve_loads(texts: &[String]) -> Result<Vec<String>, UserError> {
    let specs = crate::load::parse_specs(texts)?;
    crate::load::engine::check_cpus(&specs, &crate::sys::affinity::online_cpus())?;
    Ok(specs.into_iter().map(|s| s.text).collect())
}

/// The `--load` specs and the `--isolate` CPUs of a probe, with loads kept off the shield.
pub fn resolve_loads_and_isolation(
    args: &CommonArgs,
) -> Result<(Vec<String>, Vec<usize>), UserError> {
    let loads = resolve_loads(&args.loads)?;
    let isolate = resolve_isolate(args, &mut Vec::new())?;
    check_loads_outside(&loads, &isolate)?;
    Ok((loads, isolate))
}

/// Refuses loads pinned (`cpus=`) to a CPU that `--isolate` shields: they could not run
/// there, and the shield exists to keep them out.
pub fn check_loads_outside(loads: &[String], isolate: &[usize]) -> Result<(), UserError> {
    for spec in crate::load::parse_specs(loads)? {
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
    Ok(())
}
