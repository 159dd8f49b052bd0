//! The plan of `latscope cyclictest ARGS`: cyclictest's options (read by options.rs)
//! mapped onto the timer probe with cyclictest's meanings (rt-tests 2.4): threads, CPUs,
//! intervals, policy and priority by cyclictest's rules (including `-S`, `-t`, `-a`,
//! `-d`, `-h` setting the distance to 0, `--priospread`), the run ending for every
//! thread when the first reaches `-l`, words that are not options ignored. What no
//! machine here can honour is refused in one line naming the option and why. The output
//! side is `cyclictest::format` and `cyclictest::stream`.

use super::options::{cpu_set, read_options, Asked, PolicyAsked};
use crate::cyclictest::args::{parse, Parsed};
pub use crate::cyclictest::format::CyclictestOutput;
use crate::error::UserError;
use crate::plan::common::busy_checked_scenarios;
use crate::plan::common::{
    duration_in_range, out_of_range, resolve_common, CommonRequest, CpuList, Machine,
    MAX_DURATION_NS, MAX_PERIOD_NS, MIN_PERIOD_NS,
};
use crate::plan::{OutputSettings, Plan};
use crate::probe::timer::{CyclictestExtras, Method, TimerProbe};
use crate::sys::sched::Policy;
use std::sync::Arc;

/// cyclictest's default distance between the threads' intervals, µs.
const DEFAULT_DISTANCE_US: u64 = 500;

/// A checked and resolved `latscope cyclictest`.
pub struct CyclictestPlan {
    pub plan: Plan,
    pub output: CyclictestOutput,
    /// `--help`: print the option list and run nothing.
    pub help: bool,
    /// `-d` as applied (0 with `-h`), µs.
    pub distance_us: u64,
    /// `--tracemark`'s marker, opened just before the run (tracefs released after it).
    pub trace_marker: Option<Arc<super::tracemark::TraceMarker>>,
}

impl CyclictestPlan {
    /// Thread N's interval, µs (`I:`).
    pub fn intervals_us(&self) -> Vec<u64> {
        let Some(sp) = self.plan.scenarios.first() else {
            return Vec::new();
        };
        let base = sp.probe.period_ns() / 1000;
        (0..sp.settings.cpus.len() as u64)
            .map(|i| base + i * self.distance_us)
            .collect()
    }
}

/// Parses, checks and resolves `latscope cyclictest ARGS` on this machine.
pub fn cyclictest_plan(args: &[String]) -> Result<CyclictestPlan, UserError> {
    let parsed = parse(args)?;
    let machine = Machine::read();
    let available =
        crate::sys::affinity::get_affinity(0).unwrap_or_else(|_| machine.online.clone());
    let cpus = Cpus {
        available,
        configured: crate::sys::affinity::configured_cpu_count(),
    };
    resolve(&parsed, &machine, &cpus)
}

/// The CPUs cyclictest's CPU sets are read against.
pub struct Cpus {
    /// This process' affinity (cyclictest's "current" CPUs).
    pub available: Vec<usize>,
    /// CPUs 0..configured exist (glibc's _SC_NPROCESSORS_CONF).
    pub configured: usize,
}

/// `--smi`'s refusal: why this machine cannot count SMIs (cyclictest 2.4 reads the Intel
/// SMI counter MSR 0x34 through /dev/cpu/N/msr), or that latscope does not read it.
fn smi_refusal() -> UserError {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        cpuinfo
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split(':').nth(1))
            .map_or(String::from("unknown"), |v| v.trim().to_string())
    };
    let vendor = field("vendor_id");
    let why = if vendor != "GenuineIntel" || field("cpu family") != "6" {
        format!(
            "this CPU ({vendor}, family {}) has no SMI counter; cyclictest 2.4 stops here too",
            field("cpu family")
        )
    } else if !std::path::Path::new("/dev/cpu/0/msr").exists() {
        "/dev/cpu/0/msr is missing (modprobe msr)".to_string()
    } else {
        "latscope reads no MSRs; `latscope timer --trace` shows the time no guest event explains"
            .to_string()
    };
    UserError::Unsupported(format!(
        "latscope cyclictest: --smi is not supported: {why}"
    ))
}

/// Options that exclude each other (cyclictest prints its usage and exits 1).
fn check_combinations(asked: &Asked) -> Result<(), UserError> {
    if asked.out.oscope > 1 && !asked.out.verbose {
        return Err(UserError::Other(
            "latscope cyclictest: -o is only meaningful with -v (as cyclictest says)".into(),
        ));
    }
    if asked.out.oscope < 1 {
        return Err(out_of_range("-o", "0", "1 or more"));
    }
    if asked.out.alignments > 1 {
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
        // cyclictest's words: it goes on without holding the latency.
        asked
            .out
            .notices
            .push("WARN: open /dev/cpu_dma_latency: Permission denied".into());
        None
    }
}

/// The wake-up method of `-r`, `-s` and `-x` (cyclictest's mode), with its warnings.
fn method(asked: &mut Asked) -> Method {
    if asked.system && asked.posix {
        for line in [
            "WARN: The system option requires clock_nanosleep",
            "WARN: and is not compatible with posix_timers",
            "WARN: Using clock_nanosleep",
        ] {
            asked.out.notices.push(line.into());
        }
    }
    if asked.relative || asked.system {
        let typed = if asked.relative { "-r" } else { "-s" };
        asked
            .out
            .notes
            .push(format!("{typed} sleeps to absolute deadlines (README)"));
        Method::Nanosleep
    } else if asked.posix {
        Method::PosixTimer
    } else {
        Method::ClockNanosleep
    }
}

/// The plan for `--help`: nothing to run.
fn help_plan(asked: Asked) -> CyclictestPlan {
    CyclictestPlan {
        plan: Plan {
            scenarios: Vec::new(),
            output: OutputSettings::default(),
            warnings: Vec::new(),
            suite: None,
        },
        output: asked.out,
        help: true,
        distance_us: 0,
        trace_marker: None,
    }
}

/// `ignored '' '2' (not options)`: the words getopt skipped, for the note line.
fn ignored_note(ignored: &[String]) -> Option<String> {
    if ignored.is_empty() {
        return None;
    }
    let words: Vec<String> = ignored.iter().map(|w| format!("'{w}'")).collect();
    Some(format!("ignored {} (not options)", words.join(" ")))
}

/// Resolves the parsed options on `machine`.
pub fn resolve(
    parsed: &Parsed,
    machine: &Machine,
    cpus: &Cpus,
) -> Result<CyclictestPlan, UserError> {
    let mut asked = read_options(&parsed.options)?;
    if let Some(note) = ignored_note(&parsed.ignored) {
        asked.out.notes.insert(0, note);
    }
    if asked.help {
        return Ok(help_plan(asked));
    }
    if asked.smi {
        return Err(smi_refusal());
    }
    check_combinations(&asked)?;
    let placed = place_threads(&mut asked, cpus)?;
    let thread_count = placed.len() as u64;
    let (policy, priority) = policy_and_priority(&mut asked, thread_count);
    let timing = timing(&mut asked, thread_count)?;
    let method = method(&mut asked);
    asked.out.breaktrace = asked.breaktrace;
    asked.out.spike = asked.spike.map(|s| (s, asked.spike_nodes));
    asked.out.dma_latency_us = dma_latency(&mut asked);
    verbose_preamble(&mut asked, machine, &placed);
    let request = CommonRequest {
        cpus: Some(CpuList::These(placed)),
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
    timer_plan(asked, &request, &timing, method, machine)
}

/// `-v`'s lines before the run: the CPU counts, and with `-a LIST` how many CPUs it
/// names and each thread's CPU.
fn verbose_preamble(asked: &mut Asked, machine: &Machine, placed: &[usize]) {
    if !asked.out.verbose {
        return;
    }
    let online = machine.online.len();
    let configured = crate::sys::affinity::configured_cpu_count();
    asked.out.preamble.push(format!("Max CPUs = {configured}"));
    asked.out.preamble.push(format!("Online CPUs = {online}"));
    if let Some(cpus) = asked.out.affinity_cpus.clone() {
        asked
            .out
            .preamble
            .push(format!("Using {} cpus.", cpus.len()));
        asked.out.thread_cpus = Some(placed.to_vec());
    }
}

/// The one timer scenario the request and timing make, and the output files checked.
fn timer_plan(
    asked: Asked,
    request: &CommonRequest,
    timing: &Timing,
    method: Method,
    machine: &Machine,
) -> Result<CyclictestPlan, UserError> {
    let out = asked.out;
    let mut common = resolve_common(request, &machine.online, machine)?;
    common.settings.keep_raw = false;
    // The run is bounded by -l/-D only (resolve_common's 10 s default is latscope's).
    common.settings.duration_ns = timing.duration_ns;
    let trace_marker = match (asked.breaktrace, out.tracemark) {
        (Some(limit), true) => Some(Arc::new(super::tracemark::TraceMarker::new(
            limit,
            timing.unit_ns,
        ))),
        _ => None,
    };
    let probe = TimerProbe {
        method,
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
            stream_samples: out.verbose || out.spike.is_some(),
            realtime_clock: asked.realtime_clock,
            priority_spread: asked.priospread,
            break_marker: trace_marker
                .clone()
                .map(|m| m as Arc<dyn crate::probe::timer::BreakMarker>),
        }),
    };
    let mut warnings = common.warnings.clone();
    let scenarios =
        busy_checked_scenarios(vec![probe], &common, false, &None, machine, &mut warnings)?;
    for (option, path) in [("--json", &out.json), ("--histfile", &out.histfile)] {
        if let Some(path) = path {
            crate::output::exports::check_output_path(option, &Some(path.clone()))?;
        }
    }
    Ok(CyclictestPlan {
        plan: Plan {
            scenarios,
            output: OutputSettings {
                quiet: true,
                own_break_lines: true,
                checkpoint_ns: MAX_DURATION_NS,
                ..OutputSettings::default()
            },
            warnings,
            suite: None,
        },
        output: out,
        help: false,
        distance_us: timing.distance_us,
        trace_marker,
    })
}

/// The measuring threads' CPUs as cyclictest places them: `-S` one per allowed CPU,
/// `-t N` round-robin over `-a`'s CPUs (or the allowed ones), one thread by default; the
/// main thread on `--mainaffinity`'s CPUs, else on `-a`'s.
fn place_threads(asked: &mut Asked, cpus: &Cpus) -> Result<Vec<usize>, UserError> {
    let available = &cpus.available;
    let listed = match &asked.affinity {
        Some(Some(set)) => Some(cpu_set(set, cpus.configured, available)?),
        _ => None,
    };
    if asked.smp && asked.affinity.is_some() {
        asked
            .out
            .notices
            .push("WARN: -a ignored due to smp mode".into());
    }
    if let Some(set) = &asked.main_affinity {
        asked.out.main_affinity = Some(cpu_set(set, cpus.configured, available)?);
    } else if let (Some(list), false) = (&listed, asked.smp) {
        asked.out.main_affinity = Some(list.clone());
    }
    let mask: Vec<usize> = match (&listed, asked.smp) {
        (Some(list), false) => list.clone(),
        _ => available.to_vec(),
    };
    if !asked.smp {
        asked.out.affinity_cpus = listed;
    }
    let thread_count = if asked.smp {
        available.len() as u64
    } else {
        match asked.threads {
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
/// without a priority gets threads + 1, batch and idle run SCHED_OTHER), except that
/// `--policy other -p 0` runs SCHED_OTHER as asked where cyclictest 2.4 runs FIFO 2.
fn policy_and_priority(asked: &mut Asked, thread_count: u64) -> (Policy, i32) {
    let out = &mut asked.out;
    let mut priority = asked.priority;
    let mut policy = asked.policy;
    if asked.priospread && priority == 0 {
        priority = thread_count as i64 + 1;
        out.notices
            .push(format!("defaulting realtime priority to {priority}"));
    }
    if asked.other_then_p && priority == 0 {
        policy = PolicyAsked::Other;
        out.notes
            .push("--policy other -p 0 stays SCHED_OTHER (README)".into());
    } else {
        if priority > 0 && !policy.is_realtime() {
            out.notices
                .push("policy and priority don't match: setting policy to SCHED_FIFO".into());
            policy = PolicyAsked::Fifo;
        }
        if policy.is_realtime() && priority == 0 {
            priority = thread_count as i64 + 1;
            out.notices
                .push(format!("defaulting realtime priority to {priority}"));
        }
    }
    let priority = priority.min(99) as i32;
    let run_as = match policy {
        PolicyAsked::Fifo if priority > 0 => Policy::Fifo,
        PolicyAsked::Rr if priority > 0 => Policy::Rr,
        _ => Policy::Other,
    };
    out.priority = if run_as.is_realtime() { priority } else { 0 };
    out.priority_spread = asked.priospread && run_as.is_realtime();
    out.policy_name = policy.name().into();
    // cyclictest's header says NAME/other when a thread runs SCHED_OTHER.
    let last_priority = out.thread_priority(thread_count.saturating_sub(1) as usize);
    out.other_shown = !run_as.is_realtime() || last_priority == 0;
    (run_as, out.priority)
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
