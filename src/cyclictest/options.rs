//! What each of cyclictest 2.4's options asks for, read in the order given with
//! cyclictest's meanings (its process_options): numbers read as C's atoi reads them
//! (a note says when text was dropped), `--policy` by prefix with unknown names falling
//! back to other, CPU sets in libnuma's syntax (`!` inverts, `+` counts within the CPUs
//! this process may use). plan.rs turns the result into a run; what no machine here can
//! honour is refused in one line naming the option and why.

use super::format::CyclictestOutput;
use crate::cyclictest::args::GivenOption;
use crate::error::UserError;
use crate::plan::common::{invalid, out_of_range};
use crate::probe::timer::{Method, StartAlignment};
use std::path::PathBuf;

/// cyclictest's default interval, µs.
const DEFAULT_INTERVAL_US: u64 = 1000;
/// cyclictest's largest histogram (HIST_MAX).
const MAX_HISTOGRAM_BUCKETS: u64 = 1_000_000;
/// cyclictest's default number of `--spike` lines.
const DEFAULT_SPIKE_NODES: usize = 1024;

/// The policy as cyclictest's `policy` variable holds it: batch and idle are names only
/// (cyclictest 2.4 runs a thread without an RT priority at SCHED_OTHER, whatever the name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyAsked {
    Other,
    Batch,
    Idle,
    Fifo,
    Rr,
}

impl PolicyAsked {
    pub fn name(self) -> &'static str {
        match self {
            PolicyAsked::Other => "other",
            PolicyAsked::Batch => "batch",
            PolicyAsked::Idle => "idle",
            PolicyAsked::Fifo => "fifo",
            PolicyAsked::Rr => "rr",
        }
    }
    pub fn is_realtime(self) -> bool {
        matches!(self, PolicyAsked::Fifo | PolicyAsked::Rr)
    }
}

/// A CPU set as typed (`-a`, `--mainaffinity`), resolved against the machine later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSetTyped {
    pub typed: String,
    pub text: String,
}

/// What the options asked for, before anything is resolved (cyclictest's defaults).
pub struct Asked {
    pub out: CyclictestOutput,
    pub help: bool,
    pub interval_us: u64,
    pub distance_us: Option<u64>,
    pub loops: u64,
    pub duration_s: u64,
    pub priority: i64,
    pub policy: PolicyAsked,
    /// The last `--policy` named other (or a name cyclictest reads as other).
    pub typed_other: bool,
    /// `--policy other` (or normal) was typed before a `-p` (the FIFO 2 case).
    pub other_then_p: bool,
    pub smp: bool,
    pub threads: Option<Option<u64>>,
    pub affinity: Option<Option<CpuSetTyped>>,
    pub main_affinity: Option<CpuSetTyped>,
    pub method: Method,
    pub start: StartAlignment,
    pub latency_us: i32,
    pub tune_power: bool,
    pub spike_nodes: usize,
    pub breaktrace: Option<u64>,
    pub spike: Option<u64>,
    pub realtime_clock: bool,
    pub priospread: bool,
    pub system: bool,
    pub posix: bool,
    pub relative: bool,
    pub smi: bool,
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
            policy: PolicyAsked::Other,
            typed_other: false,
            other_then_p: false,
            smp: false,
            threads: None,
            affinity: None,
            main_affinity: None,
            method: Method::ClockNanosleep,
            start: StartAlignment::AtRelease,
            latency_us: 0,
            tune_power: true,
            spike_nodes: DEFAULT_SPIKE_NODES,
            breaktrace: None,
            spike: None,
            realtime_clock: false,
            priospread: false,
            system: false,
            posix: false,
            relative: false,
            smi: false,
        }
    }
}

/// Every option in the order given.
pub fn read_options(given: &[GivenOption]) -> Result<Asked, UserError> {
    let mut asked = Asked::defaults();
    for option in given {
        if !output_option(&mut asked, option)? && !live_option(&mut asked, option)? {
            run_option(&mut asked, option)?;
        }
    }
    Ok(asked)
}

/// A number as cyclictest's atoi reads it: leading blanks, a sign, digits; whatever
/// follows is dropped (noted), no digits at all reads as 0 (noted).
pub fn atoi(option: &GivenOption, notes: &mut Vec<String>) -> i64 {
    let text = option.value.clone().unwrap_or_default();
    let t = text.trim_start();
    let (sign, digits_from) = match t.as_bytes().first() {
        Some(b'-') => (-1, 1),
        Some(b'+') => (1, 1),
        _ => (1, 0),
    };
    let digits: String = t[digits_from..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let n: i64 = digits
        .parse()
        .unwrap_or(if digits.is_empty() { 0 } else { i64::MAX });
    // Leading blanks are atoi's too (rteval passes "-h 3500" as one word).
    if digits.is_empty() || digits.len() + digits_from != t.len() {
        notes.push(format!("{} '{text}' read as {}", option.typed, sign * n));
    }
    sign * n
}

/// `atoi`, then a check that it is not negative (the option's range in the message).
fn whole(option: &GivenOption, notes: &mut Vec<String>, range: &str) -> Result<u64, UserError> {
    let n = atoi(option, notes);
    u64::try_from(n)
        .map_err(|_| out_of_range(&option.typed, option.value.as_deref().unwrap_or(""), range))
}

/// The options of what is printed and kept (false: not one of them).
fn output_option(asked: &mut Asked, option: &GivenOption) -> Result<bool, UserError> {
    let mut noted = Vec::new();
    let notes = &mut noted;
    let out = &mut asked.out;
    match option.name {
        "help" => asked.help = true,
        "breaktrace" => asked.breaktrace = Some(whole(option, notes, "0 or more µs")?),
        "histogram" | "histofall" => {
            let n = whole(option, notes, "1 or more µs")?;
            if n == 0 {
                return Err(out_of_range(
                    &option.typed,
                    option.value.as_deref().unwrap_or(""),
                    "1 or more µs",
                ));
            }
            out.histogram = Some(n.min(MAX_HISTOGRAM_BUCKETS) as usize);
            out.histofall |= option.name == "histofall";
        }
        "histfile" => out.histfile = option.value.clone().map(PathBuf::from),
        "json" => out.json = option.value.clone().map(PathBuf::from),
        "fifo" => out.fifo = option.value.clone().map(PathBuf::from),
        "laptop" => {
            out.notices
                .push("WARN: not setting cpu_dma_latency to save battery power".into());
            asked.tune_power = false;
        }
        "mainaffinity" => {
            asked.main_affinity = option.value.clone().map(|text| CpuSetTyped {
                typed: option.typed.clone(),
                text,
            })
        }
        "mlockall" => {} // latscope always locks its memory (mlockall, MCL_ONFAULT)
        "nsecs" => out.nsecs = true,
        "oscope" => out.oscope = u64::try_from(atoi(option, notes)).unwrap_or(0),
        "quiet" => out.quiet = true,
        "spike" => asked.spike = Some(whole(option, notes, "0 or more µs")?),
        "spike-nodes" => {
            // cyclictest takes the count only after --spike.
            if asked.spike.is_some() {
                let n = whole(option, notes, "1 or more")?;
                asked.spike_nodes = n.clamp(1, 1 << 20) as usize;
            }
        }
        "verbose" => out.verbose = true,
        "tracemark" => out.tracemark = true,
        _ => return Ok(false),
    }
    asked.out.notes.extend(noted);
    Ok(true)
}

/// The options of the live output: refresh, buffering, debugging, the clock check.
fn live_option(asked: &mut Asked, option: &GivenOption) -> Result<bool, UserError> {
    match option.name {
        "refresh_on_max" => asked.out.refresh_on_max = true,
        // latscope writes each batch of output at once: unbuffered already.
        "unbuffered" | "dbg_cyclictest" => {}
        "resolution" => asked.out.resolution_check = true,
        "smi" => asked.smi = true,
        _ => return Ok(false),
    }
    Ok(true)
}

/// The options of how, where and how long the threads measure.
fn run_option(asked: &mut Asked, option: &GivenOption) -> Result<(), UserError> {
    let mut noted = Vec::new();
    let notes = &mut noted;
    match option.name {
        "affinity" => {
            asked.affinity = Some(option.value.clone().map(|text| CpuSetTyped {
                typed: option.typed.clone(),
                text,
            }))
        }
        "aligned" | "secaligned" => {
            let offset_ns = match option.value {
                Some(_) => whole(option, notes, "0 or more µs")? * 1000,
                None => 0,
            };
            asked.start = if option.name == "aligned" {
                StartAlignment::Staggered { offset_ns }
            } else {
                StartAlignment::NextSecond { offset_ns }
            };
            asked.out.alignments += 1;
        }
        "clock" => asked.realtime_clock = clock(option, notes)?,
        "default-system" => {
            asked
                .out
                .notices
                .push("WARN: not setting cpu_dma_latency from cyclictest".into());
            asked.tune_power = false;
        }
        "distance" => asked.distance_us = Some(whole(option, notes, "0 or more µs")?),
        "duration" => asked.duration_s = duration_seconds(option)?,
        "latency" => asked.latency_us = atoi(option, notes).clamp(0, i32::MAX as i64) as i32,
        "interval" => asked.interval_us = whole(option, notes, "10 µs to 10 s")?,
        "loops" => asked.loops = whole(option, notes, "0 (endless) or more")?,
        "nanosleep" => {}
        "priority" => priority(asked, option)?,
        "policy" => policy_option(asked, option),
        "relative" => asked.relative = true,
        "system" => asked.system = true,
        "posix_timers" => asked.posix = true,
        "priospread" => asked.priospread = true,
        "smp" => asked.smp = true,
        "threads" => threads(asked, option)?,
        other => {
            return Err(UserError::Other(format!(
                "latscope cyclictest: {other} is not handled (a latscope bug)"
            )))
        }
    }
    asked.out.notes.extend(noted);
    Ok(())
}

/// `-p`: cyclictest sets SCHED_FIFO unless FIFO or RR was asked for already.
fn priority(asked: &mut Asked, option: &GivenOption) -> Result<(), UserError> {
    let p = atoi(option, &mut asked.out.notes);
    if !(0..=99).contains(&p) {
        return Err(out_of_range(
            &option.typed,
            option.value.as_deref().unwrap_or(""),
            "0-99",
        ));
    }
    asked.priority = p;
    if asked.policy == PolicyAsked::Other && asked.typed_other {
        asked.other_then_p = true;
    }
    if !asked.policy.is_realtime() {
        asked.policy = PolicyAsked::Fifo;
    }
    Ok(())
}

/// `-t [N]`: ignored after `-S` (with cyclictest's warning).
fn threads(asked: &mut Asked, option: &GivenOption) -> Result<(), UserError> {
    if asked.smp {
        asked
            .out
            .notices
            .push("WARN: -t ignored due to smp mode".into());
        return Ok(());
    }
    asked.threads = Some(match &option.value {
        Some(_) => Some(whole(option, &mut asked.out.notes, "1 to 4096 threads")?),
        None => None,
    });
    Ok(())
}

/// `-c`: 0 CLOCK_MONOTONIC (true: CLOCK_REALTIME).
fn clock(option: &GivenOption, notes: &mut Vec<String>) -> Result<bool, UserError> {
    match atoi(option, notes) {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(out_of_range(
            &option.typed,
            option.value.as_deref().unwrap_or(""),
            "0 (CLOCK_MONOTONIC) or 1 (CLOCK_REALTIME)",
        )),
    }
}

/// `-D`: seconds, or with a suffix m, h or d, as cyclictest's parse_time_string reads
/// it (the first character after the number; any other is seconds).
pub fn duration_seconds(option: &GivenOption) -> Result<u64, UserError> {
    let text = option.value.clone().unwrap_or_default();
    let t = text.trim();
    let at = t
        .char_indices()
        .find(|(_, c)| !c.is_ascii_digit())
        .map_or(t.len(), |(at, _)| at);
    let (digits, unit) = t.split_at(at);
    let scale = match unit.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('m') => 60,
        Some('h') => 3600,
        Some('d') => 86_400,
        _ => 1,
    };
    let n: u64 = digits.parse().map_err(|_| {
        invalid(
            &option.typed,
            &text,
            "not a number of seconds (use e.g. 30, 10m, 2h or 1d)",
        )
    })?;
    Ok(n.saturating_mul(scale))
}

/// `--policy NAME` by prefix as cyclictest's handlepolicy reads it; any other name is
/// other (noted).
fn policy_option(asked: &mut Asked, option: &GivenOption) {
    let name = option.value.clone().unwrap_or_default();
    let lower = name.to_ascii_lowercase();
    let policy = [
        ("other", PolicyAsked::Other),
        ("batch", PolicyAsked::Batch),
        ("idle", PolicyAsked::Idle),
        ("fifo", PolicyAsked::Fifo),
        ("rr", PolicyAsked::Rr),
    ]
    .into_iter()
    .find(|(prefix, _)| lower.starts_with(prefix))
    .map(|(_, p)| p);
    asked.typed_other = matches!(policy, Some(PolicyAsked::Other) | None);
    asked.policy = policy.unwrap_or_else(|| {
        asked
            .out
            .notes
            .push(format!("{} '{name}' runs as other", option.typed));
        PolicyAsked::Other
    });
}

/// A CPU set in libnuma's syntax (numa_parse_cpustring_all, as cyclictest's -a reads it):
/// `1`, `0-3,6`, `all`; `!LIST` every CPU but those; `+LIST` the LIST-th CPUs this
/// process may use. With `!` or `+` only CPUs this process may use are kept (cyclictest's
/// use_current_cpuset). `configured`: CPUs 0..configured exist.
pub fn cpu_set(
    set: &CpuSetTyped,
    configured: usize,
    available: &[usize],
) -> Result<Vec<usize>, UserError> {
    let text = set.text.trim();
    let (invert, relative, list) = match text.as_bytes().first() {
        Some(b'!') => (true, false, &text[1..]),
        Some(b'+') => (false, true, &text[1..]),
        _ => (false, false, text),
    };
    let (invert, relative, list) = match list.as_bytes().first() {
        Some(b'+') if invert => (true, true, &list[1..]),
        _ => (invert, relative, list),
    };
    let range = format!(
        "CPUs 0-{} (libnuma's syntax: 1, 0-3,6, all, !LIST, +LIST)",
        configured.saturating_sub(1)
    );
    let named: Vec<usize> = if list.trim() == "all" {
        (0..configured).collect()
    } else {
        crate::units::parse_cpu_list_plain(list)
            .map_err(|reason| invalid(&set.typed, &set.text, reason))?
    };
    let mut cpus: Vec<usize> = if relative {
        let mut out = Vec::new();
        for &n in &named {
            match available.get(n) {
                Some(&cpu) => out.push(cpu),
                None => return Err(out_of_range(&set.typed, &set.text, &range)),
            }
        }
        out
    } else {
        if named.iter().any(|&c| c >= configured) {
            return Err(out_of_range(&set.typed, &set.text, &range));
        }
        named
    };
    if invert {
        let base: Vec<usize> = if relative {
            available.to_vec()
        } else {
            (0..configured).collect()
        };
        cpus = base.into_iter().filter(|c| !cpus.contains(c)).collect();
    }
    if invert || relative {
        cpus.retain(|c| available.contains(c));
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(typed: &str, value: &str) -> GivenOption {
        GivenOption {
            name: "x",
            typed: typed.into(),
            value: Some(value.into()),
        }
    }

    #[test]
    fn numbers_are_read_as_atoi_reads_them_and_the_dropped_text_is_noted() {
        let mut notes = Vec::new();
        assert_eq!(atoi(&given("-i", "1000"), &mut notes), 1000);
        assert!(notes.is_empty());
        assert_eq!(atoi(&given("--latency", "PM_QOS"), &mut notes), 0);
        assert_eq!(atoi(&given("-i", "200us"), &mut notes), 200);
        assert_eq!(atoi(&given("-p", "-3"), &mut notes), -3);
        assert_eq!(atoi(&given("-h", " 3500"), &mut notes), 3500);
        assert_eq!(
            notes,
            ["--latency 'PM_QOS' read as 0", "-i '200us' read as 200"]
        );
    }

    #[test]
    fn durations_take_cyclictest_suffixes() {
        for (text, s) in [
            ("30", 30),
            ("10s", 10),
            ("2m", 120),
            ("1H", 3600),
            ("1d", 86_400),
        ] {
            assert_eq!(duration_seconds(&given("-D", text)).unwrap(), s, "{text}");
        }
        assert!(duration_seconds(&given("-D", "x")).is_err());
    }

    #[test]
    fn cpu_sets_read_libnuma_syntax() {
        let set = |text: &str| CpuSetTyped {
            typed: "-a".into(),
            text: text.into(),
        };
        let available = [1, 2, 3];
        let on = |text: &str| cpu_set(&set(text), 4, &available);
        assert_eq!(on("0-1,3").unwrap(), [0, 1, 3]);
        assert_eq!(on("all").unwrap(), [0, 1, 2, 3]);
        assert_eq!(on("!0").unwrap(), [1, 2, 3]);
        assert_eq!(on("!1").unwrap(), [2, 3], "0 is not available");
        assert_eq!(on("+0").unwrap(), [1]);
        assert_eq!(on("+1-2").unwrap(), [2, 3]);
        assert_eq!(on("!+0").unwrap(), [2, 3]);
        let err = on("2-5").unwrap_err().to_string();
        assert!(err.contains("2-5") && err.contains("CPUs 0-3"), "{err}");
        assert!(on("+3").is_err() && on("x").is_err());
    }
}
