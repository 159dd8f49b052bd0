//! The plan of `latscope cyclictest ARGS`: cyclictest's options with cyclictest's
//! meanings (rt-tests 2.4), mapped onto the timer probe. Threads, CPUs, intervals,
//! policy and priority follow cyclictest's rules (including `-S`, `-t`, `-a`, `-d`,
//! `-h` setting the distance to 0); what latscope cannot honour is refused in one line
//! naming the option and why. The output side is `cyclictest::format`.

use crate::cyclictest::args::{parse, GivenOption};
pub use crate::cyclictest::format::CyclictestOutput;
use crate::error::UserError;
use crate::plan::common::busy_checked_scenarios;
use crate::plan::common::{
    check_raw_capacity, duration_in_range, invalid, out_of_range, resolve_common, CommonRequest,
    CpuList, Machine, MAX_DURATION_NS, MAX_PERIOD_NS, MIN_PERIOD_NS,
};
use crate::plan::timer::RAW_BYTES_PER_SAMPLE;
use crate::plan::{OutputSettings, Plan};
use crate::probe::timer::{CyclictestExtras, Method, StartAlignment, TimerProbe};
use crate::sys::sched::Policy;
use std::path::PathBuf;

/// cyclictest's default interval, µs.
const DEFAULT_INTERVAL_US: u64 = 1000;
/// cyclictest's default distance between the threads' intervals, µs.
const DEFAULT_DISTANCE_US: u64 = 500;
/// cyclictest's largest histogram (HIST_MAX).
const MAX_HISTOGRAM_BUCKETS: u64 = 1_000_000;
/// cyclictest's default number of `--spike` lines.
const DEFAULT_SPIKE_NODES: usize = 1024;

/// A checked and resolved `latscope cyclictest`.
pub struct CyclictestPlan {
    pub plan: Plan,
    pub output: CyclictestOutput,
    /// `--help`: print the option list and run nothing.
    pub help: bool,
    /// `-d` as applied (0 with `-h`), µs.
    pub distance_us: u64,
}

/// Options latscope refuses, with why (one line each).
fn refusal(name: &str) -> Option<&'static str> {
    Some(match name {
        "fifo" => "latscope has no named-pipe live statistics; read the summary lines or --json at the end",
        "priospread" => "latscope runs every measuring thread at one priority; give -p and compare runs instead",
        "resolution" => "latscope does not calibrate clock_gettime; it measures CLOCK_MONOTONIC as cyclictest's default",
        "smi" => "latscope does not read the SMI counter MSRs; `latscope timer --trace` shows time no guest event explains (SMIs, the hypervisor)",
        "tracemark" => "latscope does not write the global trace_marker nor turn tracing_on off; `latscope timer --trace --break-above USEC` records its own trace and names what delayed the spike",
        _ => return None,
    })
}

/// Parses, checks and resolves `latscope cyclictest ARGS` on this machine.
pub fn cyclictest_plan(args: &[String]) -> Result<CyclictestPlan, UserError> {
    let given = parse(args)?;
    let machine = Machine::read();
    let available =
        crate::sys::affinity::get_affinity(0).unwrap_or_else(|_| machine.online.clone());
    resolve(&given, &machine, &available)
}

/// A whole number for `typed` (cyclictest's atoi, but strict).
fn number(option: &GivenOption) -> Result<u64, UserError> {
    let text = option.value.clone().unwrap_or_default();
    text.trim()
        .parse()
        .map_err(|_| invalid(&option.typed, &text, "not a whole number"))
}

/// `-D`: seconds, or with a suffix s, m, h, d (cyclictest's parse_time_string).
fn duration_seconds(option: &GivenOption) -> Result<u64, UserError> {
    let text = option.value.clone().unwrap_or_default();
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => t.split_at(at),
        None => (t, ""),
    };
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => {
            return Err(invalid(
                &option.typed,
                &text,
                "use seconds or a number with m, h or d",
            ))
        }
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| invalid(&option.typed, &text, "not a number of seconds"))?;
    Ok(n.saturating_mul(scale))
}

/// A CPU set as `-a`/`--mainaffinity` take it: `1`, `0-3,6`, `all`.
fn cpu_set(option: &GivenOption, online: &[usize]) -> Result<Vec<usize>, UserError> {
    let text = option.value.clone().unwrap_or_default();
    if text.starts_with('!') || text.starts_with('+') {
        return Err(invalid(
            &option.typed,
            &text,
            "latscope takes plain CPU lists (1, 0-3,6 or all), not libnuma's ! and + forms",
        ));
    }
    let cpus = CpuList::parse(&option.typed, &text)?.on(online);
    if cpus.is_empty() {
        return Err(invalid(&option.typed, &text, "names no CPU"));
    }
    Ok(cpus)
}

/// What the options asked for, before anything is resolved (cyclictest's defaults).
struct Asked {
    out: CyclictestOutput,
    help: bool,
    interval_us: u64,
    distance_us: Option<u64>,
    loops: u64,
    duration_s: u64,
    priority: i64,
    policy: Policy,
    policy_typed: Option<String>,
    smp: bool,
    threads: Option<Option<u64>>,
    affinity: Option<Option<Vec<usize>>>,
    method: Method,
    start: StartAlignment,
    latency_us: i32,
    tune_power: bool,
    spike_nodes: usize,
    breaktrace: Option<u64>,
    spike: Option<u64>,
}

impl Asked {
    fn defaults() -> Self {
        Asked {
            out: CyclictestOutput {
                oscope: 1,
                dma_latency_us: Some(0),
                ..CyclictestOutput::default()
            },
            help: false,
            interval_us: DEFAULT_INTERVAL_US,
            distance_us: None,
            loops: 0,
            duration_s: 0,
            priority: 0,
            policy: Policy::Other,
            policy_typed: None,
            smp: false,
            threads: None,
            affinity: None,
            method: Method::ClockNanosleep,
            start: StartAlignment::AtRelease,
            latency_us: 0,
            tune_power: true,
            spike_nodes: DEFAULT_SPIKE_NODES,
            breaktrace: None,
            spike: None,
        }
    }
}

/// Every option in the order given, refusals first.
fn read_options(given: &[GivenOption], machine: &Machine) -> Result<Asked, UserError> {
    let mut asked = Asked::defaults();
    for option in given {
        if let Some(why) = refusal(option.name) {
            return Err(UserError::Other(format!(
                "latscope cyclictest: {} is not supported: {why}",
                option.typed
            )));
        }
        if !output_option(&mut asked, option, machine)? {
            run_option(&mut asked, option, machine)?;
        }
    }
    Ok(asked)
}

/// The options of what is printed and kept (false: not one of them).
fn output_option(
    asked: &mut Asked,
    option: &GivenOption,
    machine: &Machine,
) -> Result<bool, UserError> {
    let out = &mut asked.out;
    match option.name {
        "help" => asked.help = true,
        "breaktrace" => asked.breaktrace = Some(number(option)?),
        "histogram" | "histofall" => {
            let n = number(option)?;
            if n == 0 {
                return Err(out_of_range(&option.typed, "0", "1 or more µs"));
            }
            out.histogram = Some(n.min(MAX_HISTOGRAM_BUCKETS) as usize);
            out.histofall |= option.name == "histofall";
        }
        "histfile" => out.histfile = option.value.clone().map(PathBuf::from),
        "json" => out.json = option.value.clone().map(PathBuf::from),
        "laptop" => {
            out.notices
                .push("WARN: not setting cpu_dma_latency to save battery power".into());
            asked.tune_power = false;
        }
        "mainaffinity" => out.main_affinity = Some(cpu_set(option, &machine.online)?),
        "mlockall" => {} // latscope always locks its memory (mlockall, MCL_ONFAULT)
        "refresh_on_max" | "unbuffered" | "dbg_cyclictest" => {} // live-display knobs
        "nsecs" => out.nsecs = true,
        "oscope" => {
            out.oscope = number(option)?;
            if out.oscope < 1 {
                return Err(out_of_range(&option.typed, "0", "1 or more"));
            }
        }
        "quiet" => out.quiet = true,
        "spike" => asked.spike = Some(number(option)?),
        "spike-nodes" => asked.spike_nodes = number(option)?.clamp(1, 1 << 20) as usize,
        "verbose" => out.verbose = true,
        _ => return Ok(false),
    }
    Ok(true)
}

/// The options of how, where and how long the threads measure.
fn run_option(asked: &mut Asked, option: &GivenOption, machine: &Machine) -> Result<(), UserError> {
    let alignment_ns = |option: &GivenOption| -> Result<u64, UserError> {
        Ok(option.value.as_ref().map_or(Ok(0), |_| number(option))? * 1000)
    };
    match option.name {
        "affinity" => {
            asked.affinity = Some(match &option.value {
                Some(_) => Some(cpu_set(option, &machine.online)?),
                None => None,
            })
        }
        "aligned" => {
            asked.start = StartAlignment::Staggered {
                offset_ns: alignment_ns(option)?,
            }
        }
        "secaligned" => {
            asked.start = StartAlignment::NextSecond {
                offset_ns: alignment_ns(option)?,
            }
        }
        "clock" => clock(option)?,
        "default-system" => asked.tune_power = false,
        "distance" => asked.distance_us = Some(number(option)?),
        "duration" => asked.duration_s = duration_seconds(option)?,
        "latency" => asked.latency_us = number(option)?.min(i32::MAX as u64) as i32,
        "interval" => asked.interval_us = number(option)?,
        "loops" => asked.loops = number(option)?,
        "nanosleep" => asked.method = Method::ClockNanosleep,
        "priority" => {
            let p = number(option)?;
            if p > 99 {
                return Err(out_of_range(&option.typed, &p.to_string(), "0-99"));
            }
            asked.priority = p as i64;
            if asked.policy == Policy::Other {
                asked.policy = Policy::Fifo;
            }
        }
        "policy" => {
            let (policy, lower) = policy_option(option)?;
            asked.policy = policy;
            asked.policy_typed = Some(lower);
        }
        "relative" | "system" => {
            asked.method = Method::Nanosleep;
            asked.out.differences.push(format!(
                "{}: relative sleeps for the time left to each deadline (the schedule stays absolute; cyclictest's drifts by each wake-up's latency)",
                option.typed
            ));
        }
        "smp" => asked.smp = true,
        "threads" => {
            asked.threads = Some(match &option.value {
                Some(_) => Some(number(option)?),
                None => None,
            })
        }
        "posix_timers" => asked.method = Method::PosixTimer,
        other => {
            return Err(UserError::Other(format!(
                "latscope cyclictest: {other} is not handled (a latscope bug)"
            )))
        }
    }
    Ok(())
}

/// `-c`: only 0 (CLOCK_MONOTONIC), cyclictest's default.
fn clock(option: &GivenOption) -> Result<(), UserError> {
    match number(option)? {
        0 => Ok(()),
        1 => Err(UserError::Other(format!(
            "latscope cyclictest: {} 1 (CLOCK_REALTIME) is not supported: latscope measures on CLOCK_MONOTONIC only (CLOCK_REALTIME jumps with NTP and settimeofday); leave -c out",
            option.typed
        ))),
        _ => Err(out_of_range(
            &option.typed,
            option.value.as_deref().unwrap_or(""),
            "0 (CLOCK_MONOTONIC) or 1 (CLOCK_REALTIME)",
        )),
    }
}

/// `--policy NAME` by its prefix, as cyclictest reads it; with the name lowercased.
fn policy_option(option: &GivenOption) -> Result<(Policy, String), UserError> {
    let name = option.value.clone().unwrap_or_default();
    let lower = name.to_ascii_lowercase();
    let policy = if lower.starts_with("other") || lower.starts_with("normal") {
        Policy::Other
    } else if lower.starts_with("fifo") {
        Policy::Fifo
    } else if lower.starts_with("rr") {
        Policy::Rr
    } else if lower.starts_with("batch") || lower.starts_with("idle") {
        return Err(UserError::Other(format!(
            "latscope cyclictest: {} {name} is not supported: latscope measures at SCHED_OTHER, SCHED_FIFO or SCHED_RR; use --policy other",
            option.typed
        )));
    } else {
        return Err(invalid(
            &option.typed,
            &name,
            "use other, normal, fifo or rr (cyclictest would fall back to other)",
        ));
    };
    Ok((policy, lower))
}

/// Options that exclude each other.
fn check_combinations(asked: &Asked, given: &[GivenOption]) -> Result<(), UserError> {
    if asked.out.oscope > 1 && !asked.out.verbose {
        return Err(UserError::Other(
            "latscope cyclictest: -o is only meaningful with -v (as cyclictest says)".into(),
        ));
    }
    if matches!(asked.start, StartAlignment::Staggered { .. })
        && given.iter().any(|g| g.name == "secaligned")
    {
        return Err(UserError::Other(
            "latscope cyclictest: -A and --secaligned exclude each other (as in cyclictest)".into(),
        ));
    }
    Ok(())
}

/// The schedule and bounds of a run: interval, distance, loops, duration.
struct Timing {
    /// 1 with `-N`, else 1000.
    unit_ns: u64,
    period_ns: u64,
    /// `-d` as applied (0 with `-h`), µs.
    distance_us: u64,
    distance_ns: u64,
    duration_ns: Option<u64>,
    samples: Option<u64>,
}

fn timing(asked: &mut Asked, thread_count: u64) -> Result<Timing, UserError> {
    let out = &mut asked.out;
    let period_ns = duration_in_range(
        "-i",
        &format!("{}us", asked.interval_us),
        1000,
        MIN_PERIOD_NS,
        MAX_PERIOD_NS,
    )?;
    let distance_us = if out.histogram.is_some() {
        if asked.distance_us.is_some() {
            out.notices
                .push("WARN: distance is ignored and set to 0, if histogram enabled".into());
        }
        0
    } else {
        asked.distance_us.unwrap_or(DEFAULT_DISTANCE_US)
    };
    let distance_ns = distance_us.saturating_mul(1000);
    if period_ns + distance_ns * (thread_count - 1) > MAX_PERIOD_NS {
        return Err(out_of_range(
            "-d",
            &distance_us.to_string(),
            "intervals up to 10 s for every thread",
        ));
    }
    let duration_ns = match asked.duration_s {
        0 => None,
        s => Some(s.saturating_mul(1_000_000_000)),
    };
    if duration_ns.is_some_and(|d| d > MAX_DURATION_NS) {
        return Err(out_of_range(
            "-D",
            &format!("{}s", asked.duration_s),
            "up to 7 days",
        ));
    }
    Ok(Timing {
        unit_ns: if out.nsecs { 1 } else { 1000 },
        period_ns,
        distance_us,
        distance_ns,
        duration_ns,
        samples: (asked.loops > 0).then_some(asked.loops),
    })
}

/// cpu_dma_latency: cyclictest writes --latency (default 0) unless told not to, and only
/// warns when it cannot.
fn dma_latency(asked: &mut Asked) -> Option<i32> {
    if !asked.tune_power {
        return None;
    }
    let writable = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .is_ok();
    if writable {
        Some(asked.latency_us.max(0))
    } else {
        asked.out.notices.push(
            "WARN: open /dev/cpu_dma_latency: Permission denied (latscope leaves it as it is)"
                .into(),
        );
        None
    }
}

/// Resolves the given options on `machine`, with `available` the CPUs this process may
/// run on (cyclictest's "current" affinity).
pub fn resolve(
    given: &[GivenOption],
    machine: &Machine,
    available: &[usize],
) -> Result<CyclictestPlan, UserError> {
    let mut asked = read_options(given, machine)?;
    if asked.help {
        return Ok(CyclictestPlan {
            plan: Plan {
                scenarios: Vec::new(),
                output: OutputSettings::default(),
                warnings: Vec::new(),
                suite: None,
            },
            output: asked.out,
            help: true,
            distance_us: 0,
        });
    }
    check_combinations(&asked, given)?;
    let cpus = place_threads(
        asked.smp,
        asked.threads,
        &asked.affinity,
        available,
        &mut asked.out,
    )?;
    let thread_count = cpus.len() as u64;
    let asked_other = asked
        .policy_typed
        .as_deref()
        .is_some_and(|p| p.starts_with("other") || p.starts_with("normal"));
    let p_given = given.iter().any(|g| g.name == "priority");
    let (policy, priority) = policy_and_priority(
        asked.policy,
        asked.priority,
        asked_other && p_given,
        thread_count,
        &mut asked.out,
    );
    let timing = timing(&mut asked, thread_count)?;
    // cyclictest runs until Ctrl-C without -l or -D; so does this.
    let unbounded = timing.samples.is_none() && timing.duration_ns.is_none();
    asked.out.breaktrace = asked.breaktrace;
    asked.out.spike = asked.spike.map(|s| (s, asked.spike_nodes));
    let keep_raw = asked.out.verbose || asked.spike.is_some();
    if keep_raw && unbounded {
        return Err(UserError::Other(format!(
            "latscope cyclictest: {} needs -l or -D: latscope keeps every sample in memory (preallocated) and prints them at the end",
            if asked.out.verbose { "-v" } else { "--spike" }
        )));
    }
    asked.out.dma_latency_us = dma_latency(&mut asked);
    if asked.out.verbose {
        let online = machine.online.len();
        asked.out.preamble.push(format!("Max CPUs = {online}"));
        asked.out.preamble.push(format!("Online CPUs = {online}"));
    }
    let request = CommonRequest {
        cpus: Some(CpuList::These(cpus)),
        policy: Some(policy),
        priority: Some(if policy.is_realtime() { priority } else { 0 }),
        samples: timing.samples,
        duration_ns: timing.duration_ns,
        warmup_ns: 0,
        worst_case: false,
        dma_latency_us: asked.out.dma_latency_us,
        // cyclictest never sets the timer slack: its threads keep the inherited one.
        timer_slack_ns: None,
        raw: None,
        force: false,
        isolate: None,
        loads: Vec::new(),
    };
    timer_plan(asked, &request, &timing, keep_raw, machine)
}

/// The one timer scenario the request and timing make, and the output files checked.
fn timer_plan(
    asked: Asked,
    request: &CommonRequest,
    timing: &Timing,
    keep_raw: bool,
    machine: &Machine,
) -> Result<CyclictestPlan, UserError> {
    let out = asked.out;
    if keep_raw {
        check_raw_capacity(
            request,
            true,
            timing.period_ns,
            RAW_BYTES_PER_SAMPLE,
            "samples per thread",
        )?;
    }
    let mut common = resolve_common(request, &machine.online, machine)?;
    common.settings.keep_raw = keep_raw;
    // The run is bounded by -l/-D only (resolve_common's 10 s default is latscope's).
    common.settings.duration_ns = timing.duration_ns;
    let probe = TimerProbe {
        method: asked.method,
        period_ns: timing.period_ns,
        deadline_ns: timing.period_ns,
        // cyclictest breaks when the truncated value exceeds -b: at (b + 1) units.
        break_above_ns: asked
            .breaktrace
            .map(|b| (b + 1).saturating_mul(timing.unit_ns) - 1),
        distance_ns: timing.distance_ns,
        start: asked.start,
        cyclictest: Some(CyclictestExtras {
            buckets: out.histogram.map(|n| (timing.unit_ns, n)),
        }),
    };
    let mut warnings = common.warnings.clone();
    let scenarios =
        busy_checked_scenarios(vec![probe], &common, false, &None, machine, &mut warnings)?;
    if let Some(path) = &out.json {
        crate::output::exports::check_output_path("--json", &Some(path.clone()))?;
    }
    if let Some(path) = &out.histfile {
        crate::output::exports::check_output_path("--histfile", &Some(path.clone()))?;
    }
    Ok(CyclictestPlan {
        plan: Plan {
            scenarios,
            output: OutputSettings {
                quiet: true,
                checkpoint_ns: MAX_DURATION_NS,
                ..OutputSettings::default()
            },
            warnings,
            suite: None,
        },
        output: out,
        help: false,
        distance_us: timing.distance_us,
    })
}

/// The measuring threads' CPUs as cyclictest places them: `-S` one per allowed CPU,
/// `-t N` round-robin over `-a`'s CPUs (or the allowed ones), one thread by default.
fn place_threads(
    smp: bool,
    threads: Option<Option<u64>>,
    affinity: &Option<Option<Vec<usize>>>,
    available: &[usize],
    out: &mut CyclictestOutput,
) -> Result<Vec<usize>, UserError> {
    if smp {
        if affinity.is_some() {
            out.notices.push("WARN: -a ignored due to smp mode".into());
        }
        if threads.is_some() {
            out.notices.push("WARN: -t ignored due to smp mode".into());
        }
    }
    let mask: Vec<usize> = match (affinity, smp) {
        (Some(Some(list)), false) => list.clone(),
        _ => available.to_vec(),
    };
    let thread_count = if smp {
        available.len() as u64
    } else {
        match threads {
            None => 1,
            Some(Some(n)) => n,
            Some(None) => mask.len() as u64,
        }
    };
    if thread_count == 0 || thread_count > 4096 {
        return Err(out_of_range(
            "-t",
            &thread_count.to_string(),
            "1 to 4096 threads",
        ));
    }
    if mask.is_empty() {
        return Err(UserError::Other(
            "latscope cyclictest: no CPU to run on (-a names none this process may use)".into(),
        ));
    }
    // Without -a cyclictest 2.4 pins thread N to the N-th allowed CPU too (its threads'
    // Cpus_allowed_list in /proc: -t 3 on CPUs 0-1 gives 0, 1, 0).
    Ok((0..thread_count as usize)
        .map(|i| mask[i % mask.len()])
        .collect())
}

/// Policy and priority by cyclictest 2.4's rules (`-p` sets SCHED_FIFO, an RT policy
/// without a priority gets threads + 1), except that `--policy other -p 0`
/// (`other_with_p0`) runs SCHED_OTHER as asked where cyclictest 2.4 runs SCHED_FIFO 2.
fn policy_and_priority(
    mut policy: Policy,
    mut priority: i64,
    other_with_p0: bool,
    thread_count: u64,
    out: &mut CyclictestOutput,
) -> (Policy, i32) {
    if other_with_p0 && priority == 0 {
        policy = Policy::Other;
        out.differences.push(
            "--policy other -p 0 runs SCHED_OTHER as asked (cyclictest 2.4 silently runs SCHED_FIFO 2 here)"
                .into(),
        );
    } else {
        if priority > 0 && policy == Policy::Other {
            out.notices
                .push("policy and priority don't match: setting policy to SCHED_FIFO".into());
            policy = Policy::Fifo;
        }
        if policy.is_realtime() && priority == 0 {
            priority = thread_count as i64 + 1;
            out.notices
                .push(format!("defaulting realtime priority to {priority}"));
        }
    }
    let priority = if policy.is_realtime() {
        priority.min(99) as i32
    } else {
        0
    };
    out.priority = priority;
    out.policy_name = match policy {
        Policy::Other => "other",
        Policy::Fifo => "fifo",
        Policy::Rr => "rr",
    }
    .into();
    (policy, priority)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Machine {
        Machine {
            online: vec![0, 1, 2, 3],
            realtime_permitted: true,
            rt_throttling: Some((950_000, 1_000_000)),
        }
    }

    fn plan(text: &str) -> Result<CyclictestPlan, UserError> {
        let words: Vec<String> = text.split_whitespace().map(String::from).collect();
        resolve(&parse(&words).unwrap(), &machine(), &[0, 1, 2, 3])
    }

    fn settings(p: &CyclictestPlan) -> &crate::probe::CommonSettings {
        &p.plan.scenarios[0].settings
    }

    #[test]
    fn smp_runs_a_thread_per_cpu_at_one_priority() {
        let p = plan("-m -S -p95 -i1000 -h400 -q -l 10").unwrap();
        assert_eq!(settings(&p).cpus, vec![0, 1, 2, 3]);
        assert_eq!(
            (settings(&p).policy, settings(&p).priority),
            (Policy::Fifo, 95)
        );
        assert_eq!(p.output.histogram, Some(400));
        assert!(p.output.quiet);
    }

    #[test]
    fn threads_and_affinity_go_round_robin() {
        let p = plan("-t 5 -a 1-2 -l 10").unwrap();
        assert_eq!(settings(&p).cpus, vec![1, 2, 1, 2, 1]);
        let p = plan("-t -l 10").unwrap();
        assert_eq!(settings(&p).cpus, vec![0, 1, 2, 3]);
        // cyclictest's default: one SCHED_OTHER thread.
        let p = plan("-l 10").unwrap();
        assert_eq!(settings(&p).cpus, vec![0]);
        assert_eq!(settings(&p).policy, Policy::Other);
    }

    #[test]
    fn duration_units_intervals_and_distance() {
        let p = plan("-D 2m -q -t 2 -i 200").unwrap();
        assert_eq!(settings(&p).duration_ns, Some(120_000_000_000));
        assert_eq!((settings(&p).samples, p.distance_us), (None, 500));
        assert_eq!(p.plan.scenarios[0].probe.period_ns(), 200_000);
        // -h sets the distance to 0 (and says so when -d was given).
        let p = plan("-t 2 -d 100 -h 50 -l 5").unwrap();
        assert_eq!(p.distance_us, 0);
        assert!(p.output.notices[0].contains("distance is ignored"));
        assert!(plan("-D 3x").is_err() && plan("-i 5").is_err());
    }

    #[test]
    fn policy_other_with_p0_stays_other_unlike_cyclictest() {
        let p = plan("--policy=other -p0 -l 10").unwrap();
        assert_eq!(settings(&p).policy, Policy::Other);
        assert!(
            p.output.differences[0].contains("FIFO 2"),
            "{:?}",
            p.output.differences
        );
        let p = plan("--policy=fifo -l 10").unwrap();
        assert_eq!(
            (settings(&p).policy, settings(&p).priority),
            (Policy::Fifo, 2)
        );
    }

    #[test]
    fn refusals_name_the_option_and_why() {
        for (args, named) in [
            ("-F /tmp/f", "-F"),
            ("--smi", "--smi"),
            ("-c 1", "-c"),
            ("--policy batch", "--policy"),
            ("-v", "-v"),
        ] {
            let err = plan(args).err().expect(args).to_string();
            assert!(err.contains(named), "{args}: {err}");
        }
    }
}
