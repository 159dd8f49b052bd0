//! The plan of `latscope suite`: every `[[matrix]]` block checked as typed (its probe,
//! that probe's own axes and no other's, policies, trace), the matrix size counted and
//! bounded before anything is expanded, then every scenario resolved on this machine
//! through the same builders as `latscope timer`/`wake`/`net`/`noise` (policy, shield,
//! loads, CPUs, RT safety), so a suite is refused before its first scenario runs; errors
//! name the block and the key.

use super::common::busy_checked_scenarios;
use super::common::{
    add_warnings, check_common, check_output, check_raw_capacity, check_trace, duration_in_range,
    invalid, parse_policy_spec, resolve_common, resolve_isolate, resolve_loads, resolve_output,
    resolve_policy, resolve_trace, scenarios_of, CommonPlan, CommonRequest, CpuList, Machine,
    MAX_PERIOD_NS, MIN_PERIOD_NS,
};
use super::gpio::{check_gpio_probe, resolve_gpio_probe, GpioTyped};
use super::net::{default_net_timing, net_scenarios, net_sizes, NetSweep};
use super::timer::RAW_BYTES_PER_SAMPLE;
use super::wake::{
    parse_competitors, wake_scenarios, WakeSweep, RAW_BYTES_PER_ITERATION as WAKE_RAW_BYTES,
};
use super::{Plan, ScenarioPlan, TraceSettings};
use crate::cli::{CommonArgs, SuiteArgs, TraceArgs};
use crate::error::UserError;
use crate::load::LoadSpec;
use crate::probe::gpio::{Bias, DriveKind, Edge, EventClock};
use crate::probe::noise::NoiseProbe;
use crate::probe::timer::{Method, TimerProbe};
use crate::probe::wake::mechanism::Mechanism;
use crate::suite::{MatrixEntry, SuiteSpec, TraceChoice};
use crate::sys::sched::Policy;
use crate::warning::{Warning, WarningCode};

/// The most scenarios a suite runs without `--yes`.
pub const MAX_SCENARIOS_WITHOUT_YES: u128 = 10_000;

/// The probes a block can name, in the order documented.
pub const PROBES: [&str; 5] = ["timer", "wake", "net", "noise", "gpio"];

/// Each probe-specific axis and the probes that have it.
const PROBE_AXES: [(&str, &[&str]); 11] = [
    ("methods", &["timer"]),
    ("periods", &["timer", "gpio"]),
    ("mechanisms", &["wake"]),
    ("competitors", &["wake"]),
    ("placements", &["wake"]),
    ("intervals", &["wake", "net"]),
    ("sizes", &["net"]),
    ("thresholds", &["noise"]),
    ("gpio_in", &["gpio"]),
    ("gpio_out", &["gpio"]),
    ("drive", &["gpio"]),
];

/// A guess of one flood round trip over loopback, for the duration estimate only.
const FLOOD_ROUND_TRIP_GUESS_NS: u64 = 40_000;
/// Per-scenario cost beside measuring (threads, results), for the estimate only.
const SCENARIO_OVERHEAD_NS: u64 = 100_000_000;
/// Loads start this long before the probe (runner), for the estimate only.
const LOAD_LEAD_NS: u64 = 200_000_000;

/// Where a wake block puts the waker relative to the wakee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Waker and wakee on one CPU (the study's single CPU).
    SameCpu,
    /// The waker on another online CPU.
    OtherCpu,
}

impl Placement {
    fn parse(text: &str) -> Result<Placement, UserError> {
        match text.trim() {
            "same-cpu" => Ok(Placement::SameCpu),
            "other-cpu" => Ok(Placement::OtherCpu),
            _ => Err(invalid("placements", text, "use same-cpu or other-cpu")),
        }
    }
}

/// A block's probe and its own axes, checked as typed.
#[derive(Debug, Clone)]
enum Axes {
    Timer {
        methods: Vec<Method>,
        periods_ns: Vec<u64>,
    },
    Wake {
        mechanisms: Vec<Mechanism>,
        competitors: Vec<usize>,
        placements: Vec<Placement>,
        intervals_ns: Vec<u64>,
    },
    Net {
        sizes: Vec<usize>,
        /// 0 = flood.
        intervals_ns: Vec<u64>,
    },
    Noise {
        thresholds_ns: Vec<u64>,
    },
    Gpio {
        typed: Box<GpioTyped>,
        periods_ns: Vec<u64>,
    },
}

impl Axes {
    /// Scenarios per policy × shield × load set.
    fn count(&self) -> u128 {
        match self {
            Axes::Timer {
                methods,
                periods_ns,
            } => methods.len() as u128 * periods_ns.len() as u128,
            Axes::Wake {
                mechanisms,
                competitors,
                placements,
                intervals_ns,
            } => {
                mechanisms.len() as u128
                    * competitors.len() as u128
                    * placements.len() as u128
                    * intervals_ns.len() as u128
            }
            Axes::Net {
                sizes,
                intervals_ns,
            } => sizes.len() as u128 * intervals_ns.len() as u128,
            Axes::Noise { thresholds_ns } => thresholds_ns.len() as u128,
            Axes::Gpio { periods_ns, .. } => periods_ns.len() as u128,
        }
    }

    /// The estimated measuring time of each of this block's scenarios (one per entry of
    /// `count`, summed), warm-up excluded.
    fn measuring_ns(&self, request: &CommonRequest) -> u128 {
        let per = |period_ns: u64| -> u128 {
            let by_samples = request
                .samples
                .map(|s| s as u128 * period_ns.max(1) as u128);
            let by_time = request.run_bound_ns().map(u128::from);
            match (by_samples, by_time) {
                (Some(s), Some(t)) => s.min(t),
                (Some(s), None) => s,
                (None, Some(t)) => t,
                (None, None) => 0,
            }
        };
        match self {
            Axes::Timer {
                methods,
                periods_ns,
            } => methods.len() as u128 * periods_ns.iter().map(|&p| per(p)).sum::<u128>(),
            Axes::Wake {
                mechanisms,
                competitors,
                placements,
                intervals_ns,
            } => {
                (mechanisms.len() * competitors.len() * placements.len()) as u128
                    * intervals_ns.iter().map(|&p| per(p)).sum::<u128>()
            }
            Axes::Net {
                sizes,
                intervals_ns,
            } => {
                sizes.len() as u128
                    * intervals_ns
                        .iter()
                        .map(|&p| per(if p == 0 { FLOOD_ROUND_TRIP_GUESS_NS } else { p }))
                        .sum::<u128>()
            }
            // Noise counts gaps, not periods: a sample bound is a guess of one per ms.
            Axes::Noise { thresholds_ns } => thresholds_ns.len() as u128 * per(1_000_000),
            Axes::Gpio { periods_ns, .. } => periods_ns.iter().map(|&p| per(p)).sum::<u128>(),
        }
    }
}

/// `trace` of a block as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TraceWish {
    Off,
    On,
    /// Trace where this machine can (root and tracefs), say so where not.
    Auto,
}

fn trace_wish(choice: &TraceChoice) -> Result<TraceWish, UserError> {
    match choice {
        TraceChoice::Flag(false) => Ok(TraceWish::Off),
        TraceChoice::Flag(true) => Ok(TraceWish::On),
        TraceChoice::Word(w) if w == "auto" => Ok(TraceWish::Auto),
        TraceChoice::Word(w) => Err(invalid("trace", w, "use true, false or \"auto\"")),
    }
}

/// One `[[matrix]]` block, checked as typed.
struct BlockRequest {
    /// Where errors point: `PLAN, [[matrix]] block N`.
    place: String,
    axes: Axes,
    policies: Vec<(Policy, Option<i32>)>,
    isolate: Vec<bool>,
    /// Load sets as typed (`none`, `a + b`); `{cpus}` is known only once CPUs are resolved.
    loads: Vec<String>,
    trace: TraceWish,
}

impl BlockRequest {
    /// Names this block and `key` in an error.
    fn at(&self, key: &str) -> impl Fn(UserError) -> UserError {
        in_plan(&self.place, key)
    }

    /// Its scenarios; `isolate_axis` is false when the command line's --isolate replaces
    /// the block's `isolate` list.
    fn count(&self, isolate_axis: bool) -> u128 {
        let shields = if isolate_axis { self.isolate.len() } else { 1 };
        self.axes
            .count()
            .saturating_mul(self.policies.len() as u128)
            .saturating_mul(shields as u128)
            .saturating_mul(self.loads.len() as u128)
    }

    fn estimated_ns(&self, request: &CommonRequest, isolate_axis: bool) -> u128 {
        let shields = if isolate_axis { self.isolate.len() } else { 1 } as u128;
        let combos = self.policies.len() as u128 * shields;
        let per_load_set: u128 = self
            .loads
            .iter()
            .map(|l| {
                let lead = if l.trim() == "none" && request.loads.is_empty() {
                    0
                } else {
                    LOAD_LEAD_NS
                };
                self.axes.count() * (request.warmup_ns + SCENARIO_OVERHEAD_NS + lead) as u128
                    + self.axes.measuring_ns(request)
            })
            .sum();
        combos.saturating_mul(per_load_set)
    }
}

/// Wraps an error with the place in the plan it comes from (`place`, then `key`).
fn in_plan(place: &str, key: &str) -> impl Fn(UserError) -> UserError {
    let place = format!("{place}, {key}");
    move |e| UserError::InPlan {
        place: place.clone(),
        source: Box::new(e),
    }
}

/// Which probe-specific keys a block gave.
fn given_axes(entry: &MatrixEntry) -> [(&'static str, bool); 11] {
    let given = [
        entry.methods.is_some(),
        entry.periods.is_some(),
        entry.mechanisms.is_some(),
        entry.competitors.is_some(),
        entry.placements.is_some(),
        entry.intervals.is_some(),
        entry.sizes.is_some(),
        entry.thresholds.is_some(),
        entry.gpio_in.is_some(),
        entry.gpio_out.is_some(),
        entry.drive.is_some(),
    ];
    let mut out = [("", false); 11];
    for (i, (key, _)) in PROBE_AXES.iter().enumerate() {
        out[i] = (key, given[i]);
    }
    out
}

fn axes_of(probe: &str) -> Vec<&'static str> {
    PROBE_AXES
        .iter()
        .filter(|(_, owners)| owners.contains(&probe))
        .map(|(k, _)| *k)
        .collect()
}

/// The values of a list key, or its default.
fn list_or<'a>(given: &'a Option<Vec<String>>, default: &'a [&'a str]) -> Vec<String> {
    match given {
        Some(list) => list.clone(),
        None => default.iter().map(|s| s.to_string()).collect(),
    }
}

/// Refuses an empty axis (it would make the block run nothing).
fn non_empty<T>(key: &str, list: Vec<T>) -> Result<Vec<T>, UserError> {
    if list.is_empty() {
        return Err(invalid(
            key,
            "[]",
            "an empty list makes no scenario; give at least one value or leave the key out",
        ));
    }
    Ok(list)
}

/// Checks one block's own axes as typed.
fn check_axes(
    probe: &str,
    entry: &MatrixEntry,
    common: &CommonRequest,
    keep_raw: bool,
    place: &str,
) -> Result<Axes, UserError> {
    let at = |key: &str| in_plan(place, key);
    Ok(match probe {
        "timer" => {
            let mut methods = Vec::new();
            for m in list_or(&entry.methods, &["clock-nanosleep"]) {
                for method in
                    Method::parse_list(&m).map_err(|r| at("methods")(invalid("methods", &m, r)))?
                {
                    if !methods.contains(&method) {
                        methods.push(method);
                    }
                }
            }
            let mut periods_ns = Vec::new();
            for text in list_or(&entry.periods, &["1ms"]) {
                let period_ns =
                    duration_in_range("periods", &text, 1_000, MIN_PERIOD_NS, MAX_PERIOD_NS)
                        .map_err(at("periods"))?;
                check_raw_capacity(
                    common,
                    keep_raw,
                    period_ns,
                    RAW_BYTES_PER_SAMPLE,
                    "samples per thread",
                )
                .map_err(at("periods"))?;
                periods_ns.push(period_ns);
            }
            Axes::Timer {
                methods: non_empty("methods", methods).map_err(at("methods"))?,
                periods_ns: non_empty("periods", periods_ns).map_err(at("periods"))?,
            }
        }
        "wake" => {
            let mut mechanisms = Vec::new();
            for m in list_or(&entry.mechanisms, &["eventfd"]) {
                for mechanism in Mechanism::parse_list(&m)
                    .map_err(|r| at("mechanisms")(invalid("mechanisms", &m, r)))?
                {
                    if !mechanisms.contains(&mechanism) {
                        mechanisms.push(mechanism);
                    }
                }
            }
            let counts = entry.competitors.clone().unwrap_or_else(|| vec![0]);
            let text = counts
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(",");
            let competitors = non_empty("competitors", counts)
                .and_then(|_| parse_competitors(&text))
                .map_err(at("competitors"))?;
            let mut placements = Vec::new();
            for p in list_or(&entry.placements, &["same-cpu"]) {
                let placement = Placement::parse(&p).map_err(at("placements"))?;
                if !placements.contains(&placement) {
                    placements.push(placement);
                }
            }
            let mut intervals_ns = Vec::new();
            for text in list_or(&entry.intervals, &["1ms"]) {
                let ns = duration_in_range("intervals", &text, 1_000, MIN_PERIOD_NS, MAX_PERIOD_NS)
                    .map_err(at("intervals"))?;
                check_raw_capacity(common, keep_raw, ns, WAKE_RAW_BYTES, "iterations")
                    .map_err(at("intervals"))?;
                intervals_ns.push(ns);
            }
            Axes::Wake {
                mechanisms: non_empty("mechanisms", mechanisms).map_err(at("mechanisms"))?,
                competitors,
                placements: non_empty("placements", placements).map_err(at("placements"))?,
                intervals_ns: non_empty("intervals", intervals_ns).map_err(at("intervals"))?,
            }
        }
        "net" => {
            let sizes = match &entry.sizes {
                Some(list) => {
                    let texts: Vec<String> = list.iter().map(|s| s.text()).collect();
                    non_empty("sizes", texts.clone())
                        .and_then(|_| net_sizes(&texts.join(",")))
                        .map_err(|e| {
                            at("sizes")(match e {
                                UserError::InvalidValue { value, reason, .. } => {
                                    invalid("sizes", &value, reason)
                                }
                                other => other,
                            })
                        })?
                }
                None => vec![64],
            };
            let mut intervals_ns = Vec::new();
            for text in list_or(&entry.intervals, &["1ms"]) {
                let ns = if text.trim() == "flood" {
                    0
                } else {
                    duration_in_range("intervals", &text, 1_000, MIN_PERIOD_NS, MAX_PERIOD_NS)
                        .map_err(at("intervals"))?
                };
                if !intervals_ns.contains(&ns) {
                    intervals_ns.push(ns);
                }
            }
            Axes::Net {
                sizes,
                intervals_ns: non_empty("intervals", intervals_ns).map_err(at("intervals"))?,
            }
        }
        "noise" => {
            let mut thresholds_ns = Vec::new();
            for text in list_or(&entry.thresholds, &["1us"]) {
                thresholds_ns.push(
                    duration_in_range("thresholds", &text, 1_000, 0, 1_000_000_000)
                        .map_err(at("thresholds"))?,
                );
            }
            Axes::Noise {
                thresholds_ns: non_empty("thresholds", thresholds_ns).map_err(at("thresholds"))?,
            }
        }
        "gpio" => check_gpio_axes(entry, place)?,
        other => {
            return Err(at("probe")(invalid(
                "probe",
                other,
                format!("choose from {}", PROBES.join(", ")),
            )))
        }
    })
}

/// Checks one block as typed; `keep_raw` (`--raw` or `trace`) sizes raw buffers per period.
fn check_block(
    place: String,
    entry: &MatrixEntry,
    spec_trace: &TraceChoice,
    common: &CommonRequest,
    keep_raw: bool,
) -> Result<BlockRequest, UserError> {
    let at = |key: &str| in_plan(&place, key);
    let probe = entry.probe.trim();
    if !PROBES.contains(&probe) {
        return Err(at("probe")(invalid(
            "probe",
            &entry.probe,
            format!("choose from {}", PROBES.join(", ")),
        )));
    }
    for (key, given) in given_axes(entry) {
        if given && !axes_of(probe).contains(&key) {
            let owners: Vec<&str> = PROBE_AXES
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, o)| o.to_vec())
                .unwrap_or_default();
            return Err(at(key)(UserError::Other(format!(
                "the {probe} probe has no `{key}` axis (it belongs to {}); {probe}'s own axes are {}, and every probe has loads, isolate, policies{}",
                owners.join(" and "),
                axes_of(probe).join(", "),
                if probe == "net" { "" } else { ", trace" }
            ))));
        }
    }
    let axes = check_axes(probe, entry, common, keep_raw, &place)?;
    let policies = entry
        .policies
        .iter()
        .map(|text| parse_policy_spec("policies", text))
        .collect::<Result<Vec<_>, _>>()
        .map_err(at("policies"))?;
    let trace = trace_wish(entry.trace.as_ref().unwrap_or(spec_trace)).map_err(at("trace"))?;
    if probe == "net" && trace == TraceWish::On {
        return Err(at("trace")(UserError::Other(
            "the net probe has no --trace (its split uses kernel receive timestamps already); set trace = false or \"auto\" for this block".into(),
        )));
    }
    Ok(BlockRequest {
        place: place.clone(),
        axes,
        policies: non_empty("policies", policies).map_err(at("policies"))?,
        isolate: non_empty("isolate", entry.isolate.clone()).map_err(at("isolate"))?,
        loads: non_empty("loads", entry.loads.clone()).map_err(at("loads"))?,
        trace,
    })
}

/// Parses one load set of a block: `none`, or specs joined by `+`, with `{cpus}` replaced
/// by the measured CPUs.
fn parse_load_set(text: &str, cpus_text: &str) -> Result<Vec<LoadSpec>, UserError> {
    if text.trim() == "none" {
        return Ok(Vec::new());
    }
    let texts: Vec<String> = text
        .split('+')
        .map(|l| l.trim().replace("{cpus}", cpus_text))
        .filter(|l| !l.is_empty())
        .collect();
    crate::load::parse_specs(&texts)
}

/// A suite as typed: the shared options (command line over the plan's own), the trace
/// settings and every block.
struct SuiteRequest {
    origin: String,
    common: CommonRequest,
    trace: Option<TraceSettings>,
    blocks: Vec<BlockRequest>,
}

impl SuiteRequest {
    fn isolate_axis(&self) -> bool {
        self.common.isolate.is_none()
    }
}

/// How big a suite is, computed from the typed blocks before anything is expanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuiteSize {
    pub scenarios: u128,
    /// Estimated wall time (warm-up, measuring, load lead), ns.
    pub estimated_ns: u128,
}

impl SuiteRequest {
    fn size(&self) -> SuiteSize {
        let axis = self.isolate_axis();
        SuiteSize {
            scenarios: self
                .blocks
                .iter()
                .fold(0u128, |n, b| n.saturating_add(b.count(axis))),
            estimated_ns: self.blocks.iter().fold(0u128, |n, b| {
                n.saturating_add(b.estimated_ns(&self.common, axis))
            }),
        }
    }
}

/// Checks a suite as typed; reads nothing from the machine.
fn check_suite(
    origin: String,
    spec: &SuiteSpec,
    args: &CommonArgs,
) -> Result<SuiteRequest, UserError> {
    let mut common_args = args.clone();
    common_args.cpus = common_args.cpus.or_else(|| spec.cpus.clone());
    common_args.timer_slack = common_args.timer_slack.or_else(|| spec.timer_slack.clone());
    if common_args.samples.is_none() && common_args.duration.is_none() {
        common_args.samples = spec.samples;
        common_args.duration = spec.duration.clone();
    }
    let common = check_common(&common_args)?;
    let any_trace = std::iter::once(&spec.trace)
        .chain(spec.matrix.iter().filter_map(|m| m.trace.as_ref()))
        .any(|t| *t != TraceChoice::Flag(false));
    if !any_trace && spec.trace_threshold.is_some() {
        return Err(UserError::BadInputFile {
            path: origin,
            reason: "trace_threshold only applies with trace; set trace = true or \"auto\", or leave trace_threshold out".into(),
        });
    }
    let trace = check_trace(&TraceArgs {
        trace: any_trace,
        trace_threshold: spec.trace_threshold.clone(),
        trace_buffer: None,
    })?;
    if let Some(study) = &spec.study {
        if !crate::report::study::STUDIES.contains(&study.as_str()) {
            return Err(UserError::BadInputFile {
                path: origin,
                reason: format!(
                    "unknown study '{study}': choose from {} (or leave `study` out for one row per scenario)",
                    crate::report::study::STUDIES.join(", ")
                ),
            });
        }
    }
    let keep_raw = common.raw.is_some() || any_trace;
    let blocks = spec
        .matrix
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            check_block(
                format!("{origin}, [[matrix]] block {}", i + 1),
                entry,
                &spec.trace,
                &common,
                keep_raw,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SuiteRequest {
        origin,
        common,
        trace,
        blocks,
    })
}

/// The size of a suite (scenarios and estimated time) as `args` would run it, without
/// reading the machine: `suite --list` and the line printed before a run.
pub fn suite_size(
    origin: String,
    spec: &SuiteSpec,
    args: &CommonArgs,
) -> Result<SuiteSize, UserError> {
    Ok(check_suite(origin, spec, args)?.size())
}

/// Refuses a suite of more than MAX_SCENARIOS_WITHOUT_YES scenarios unless `yes`.
fn check_size(origin: &str, size: SuiteSize, yes: bool) -> Result<(), UserError> {
    if size.scenarios > MAX_SCENARIOS_WITHOUT_YES && !yes {
        return Err(UserError::BadInputFile {
            path: origin.to_string(),
            reason: format!(
                "the matrix makes {} scenarios (about {}), more than {MAX_SCENARIOS_WITHOUT_YES}; shorten its lists, or add --yes to run them all",
                size.scenarios,
                human_estimate(size.estimated_ns)
            ),
        });
    }
    Ok(())
}

/// An estimated duration for people: `40 s`, `12 min`, `2.5 h`, `3.1 days`.
pub fn human_estimate(ns: u128) -> String {
    let s = ns as f64 / 1e9;
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 2.0 * 3600.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 2.0 * 86400.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} days", s / 86400.0)
    }
}

/// The shared settings of every scenario, resolved once.
struct SuiteBase {
    base: CommonPlan,
    machine: Machine,
    /// The traced settings where `trace = "auto"` can trace here (None: it cannot).
    auto_trace: Option<TraceSettings>,
    warnings: Vec<Warning>,
}

/// Resolves what every block shares on this machine.
fn resolve_base(request: &SuiteRequest) -> Result<SuiteBase, UserError> {
    let machine = Machine::read();
    let base = resolve_common(&request.common, &[machine.last_cpu()], &machine)?;
    let mut warnings = base.warnings.clone();
    let wants_auto = request.blocks.iter().any(|b| b.trace == TraceWish::Auto);
    let auto_trace = match (&request.trace, wants_auto) {
        (Some(settings), true) => match resolve_trace(Some(settings.clone())) {
            Ok(t) => t,
            Err(e) => {
                add_warnings(
                    &mut warnings,
                    [Warning::new(
                        WarningCode::TraceNote,
                        format!("trace = \"auto\": not tracing ({e}); timer rows show the wake-up latency, not its interrupt part"),
                    )],
                );
                None
            }
        },
        _ => None,
    };
    Ok(SuiteBase {
        base,
        machine,
        auto_trace,
        warnings,
    })
}

/// Expands one checked block into scenarios on this machine.
fn expand_block(
    block: &BlockRequest,
    request: &SuiteRequest,
    suite: &SuiteBase,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<ScenarioPlan>, UserError> {
    let machine = &suite.machine;
    let base = &suite.base;
    let trace = match block.trace {
        TraceWish::Off => None,
        TraceWish::On => resolve_trace(request.trace.clone()).map_err(block.at("trace"))?,
        TraceWish::Auto if matches!(block.axes, Axes::Net { .. } | Axes::Gpio { .. }) => None,
        TraceWish::Auto => suite.auto_trace.clone(),
    };
    // The CPUs this block's probe measures on (and shields with `isolate = true`).
    let cpus = base.settings.cpus.clone();
    let measured: Vec<usize> = match block.axes {
        Axes::Timer { .. } | Axes::Noise { .. } => cpus.clone(),
        Axes::Wake { .. } | Axes::Gpio { .. } => cpus.last().copied().into_iter().collect(),
        Axes::Net { .. } => cpus.first().copied().into_iter().collect(),
    };
    let cpus_text = crate::units::format_cpu_list(&measured);
    let mut found = Vec::new();
    // `--policy`/`-p` on the command line replace every block's `policies` (as
    // --samples scales every scenario): `suite --policy other` runs as any user.
    let policies = if request.common.policy.is_some() || request.common.priority.is_some() {
        vec![(base.settings.policy, base.settings.priority)]
    } else {
        block
            .policies
            .iter()
            .map(|&(policy, priority)| resolve_policy(Some(policy), priority, machine, &mut found))
            .collect::<Result<Vec<_>, _>>()
            .map_err(block.at("policies"))?
    };
    // The command line's --isolate shields every scenario; else the block's list.
    let shields: Vec<Vec<usize>> = if request.isolate_axis() {
        let shield = CpuList::These(measured.clone());
        block
            .isolate
            .iter()
            .map(|&isolated| resolve_isolate(isolated.then_some(&shield), machine, &mut found))
            .collect::<Result<Vec<_>, _>>()
            .map_err(block.at("isolate"))?
    } else {
        vec![base.isolate.clone()]
    };
    let load_sets = block
        .loads
        .iter()
        .map(|text| {
            parse_load_set(text, &cpus_text).map(|mut set| {
                let mut all = base.loads.clone();
                all.append(&mut set);
                all
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(block.at("loads"))?;
    add_warnings(warnings, found);

    let mut scenarios = Vec::new();
    for &(policy, priority) in &policies {
        for isolate in &shields {
            for loads in &load_sets {
                let mut settings = base.settings.clone();
                settings.policy = policy;
                settings.priority = priority;
                let common = CommonPlan {
                    settings,
                    dma_latency_us: base.dma_latency_us,
                    loads: resolve_loads(loads, isolate, &machine.online)
                        .map_err(block.at("loads"))?,
                    isolate: isolate.clone(),
                    warnings: Vec::new(),
                };
                let mut found = Vec::new();
                scenarios.extend(expand_axes(
                    block,
                    &common,
                    request.common.force,
                    &trace,
                    machine,
                    &measured,
                    &mut found,
                )?);
                add_warnings(warnings, found);
            }
        }
    }
    Ok(scenarios)
}

/// The scenarios of a block's own axes on one resolved policy × shield × load set, each
/// through its probe's builder.
fn expand_axes(
    block: &BlockRequest,
    common: &CommonPlan,
    force: bool,
    trace: &Option<TraceSettings>,
    machine: &Machine,
    measured: &[usize],
    warnings: &mut Vec<Warning>,
) -> Result<Vec<ScenarioPlan>, UserError> {
    let mut out = Vec::new();
    match &block.axes {
        Axes::Timer {
            methods,
            periods_ns,
        } => {
            for &method in methods {
                for &period_ns in periods_ns {
                    let probe = TimerProbe {
                        method,
                        period_ns,
                        deadline_ns: period_ns,
                        break_above_ns: None,
                        distance_ns: 0,
                        start: Default::default(),
                        cyclictest: None,
                    };
                    out.extend(
                        busy_checked_scenarios(
                            vec![probe],
                            common,
                            force,
                            trace,
                            machine,
                            warnings,
                        )
                        .map_err(block.at("methods"))?,
                    );
                }
            }
        }
        Axes::Wake {
            mechanisms,
            competitors,
            placements,
            intervals_ns,
        } => {
            let wakee = measured.first().copied();
            for &placement in placements {
                let waker = match placement {
                    Placement::SameCpu => wakee,
                    Placement::OtherCpu => Some(
                        machine
                            .online
                            .iter()
                            .copied()
                            .find(|&c| Some(c) != wakee)
                            .ok_or_else(|| {
                                block.at("placements")(invalid(
                                    "placements",
                                    "other-cpu",
                                    "this machine has one online CPU; use same-cpu",
                                ))
                            })?,
                    ),
                };
                for &interval_ns in intervals_ns {
                    let sweep = WakeSweep {
                        mechanisms: mechanisms.clone(),
                        interval_ns,
                        deadline_ns: interval_ns,
                        competitors: competitors.clone(),
                    };
                    out.extend(
                        wake_scenarios(&sweep, waker, wakee, common, trace, machine)
                            .map_err(block.at("placements"))?,
                    );
                }
            }
        }
        Axes::Net {
            sizes,
            intervals_ns,
        } => {
            for &interval_ns in intervals_ns {
                let (timeout_ns, deadline_ns) = default_net_timing(interval_ns);
                let sweep = NetSweep {
                    sizes: sizes.clone(),
                    interval_ns,
                    timeout_ns,
                    deadline_ns,
                    target: None,
                };
                let mut common = common.clone();
                common.settings.cpus = measured.to_vec();
                out.extend(
                    net_scenarios(&sweep, None, &common, machine).map_err(block.at("sizes"))?,
                );
            }
        }
        Axes::Noise { thresholds_ns } => {
            let probes = thresholds_ns
                .iter()
                .map(|&threshold_ns| NoiseProbe {
                    threshold_ns,
                    deadline_ns: 100_000,
                })
                .collect();
            out.extend(
                busy_checked_scenarios(probes, common, force, trace, machine, warnings)
                    .map_err(block.at("policies"))?,
            );
        }
        Axes::Gpio { typed, periods_ns } => {
            let mut common = common.clone();
            common.settings.cpus = measured.to_vec();
            for &period_ns in periods_ns {
                let typed = GpioTyped {
                    period_ns,
                    ..(**typed).clone()
                };
                let probe = resolve_gpio_probe(&typed).map_err(block.at("gpio_in"))?;
                out.extend(scenarios_of(vec![Box::new(probe)], &common, trace));
            }
        }
    }
    Ok(out)
}

/// A gpio block's keys as typed: lines, drive, periods (the mode as `latscope gpio`
/// infers it: loopback with `gpio_out` or `drive = "sim"`, else respond).
fn check_gpio_axes(entry: &MatrixEntry, place: &str) -> Result<Axes, UserError> {
    let at = |key: &str| in_plan(place, key);
    let drive = match entry.drive.as_deref().unwrap_or("wire") {
        "wire" => DriveKind::Wire,
        "sim" => DriveKind::Sim,
        other => return Err(at("drive")(invalid("drive", other, "choose wire or sim"))),
    };
    let args = crate::cli::GpioArgs {
        list: false,
        input: Some(entry.gpio_in.clone().ok_or_else(|| {
            at("gpio_in")(invalid(
                "gpio_in",
                "",
                "a gpio block needs gpio_in = \"LINE\" (e.g. \"GPIO17\")",
            ))
        })?),
        output: entry.gpio_out.clone(),
        mode: None,
        drive,
        period: "1ms".into(),
        edge: Edge::Rising,
        bias: Bias::AsIs,
        debounce: None,
        event_buffer: None,
        irq_priority: None,
        event_clock: EventClock::Monotonic,
        deadline: "1ms".into(),
        trace: Default::default(),
        run: Default::default(),
    };
    let typed = check_gpio_probe(&args).map_err(at("gpio_in"))?;
    let mut periods_ns = Vec::new();
    for text in list_or(&entry.periods, &["1ms"]) {
        periods_ns.push(
            duration_in_range("periods", &text, 1_000, 10_000, MAX_PERIOD_NS)
                .map_err(at("periods"))?,
        );
    }
    Ok(Axes::Gpio {
        typed: Box::new(typed),
        periods_ns: non_empty("periods", periods_ns).map_err(at("periods"))?,
    })
}

/// Expands the suite into a validated plan. `--samples`/`--duration` on the command line
/// override (scale down) every scenario; `--isolate` and `--load` apply to every one.
/// The matrix size is checked (more than MAX_SCENARIOS_WITHOUT_YES needs `--yes`) before
/// any scenario is built.
pub fn suite_plan(args: &SuiteArgs) -> Result<(Plan, SuiteSpec, SuiteSize), UserError> {
    let (origin, mut spec) = crate::suite::load_spec(args)?;
    gpio_lines(&mut spec, args);
    let request = check_suite(origin, &spec, &args.run.common)?;
    let size = request.size();
    check_size(&request.origin, size, args.yes)?;
    let output = check_output(&args.run.output, &args.run.common.raw)?;

    let suite = resolve_base(&request)?;
    let mut warnings = suite.warnings.clone();
    let mut scenarios = Vec::new();
    for block in &request.blocks {
        scenarios.extend(expand_block(block, &request, &suite, &mut warnings)?);
    }
    let output = resolve_output(output)?;
    Ok((
        Plan {
            scenarios,
            output,
            warnings,
            suite: Some(crate::result::SuiteInfo {
                title: spec.title.clone(),
                columns: spec.columns.clone(),
                study: spec.study.clone(),
            }),
        },
        spec,
        size,
    ))
}

/// `--gpio-in`/`--gpio-out`/`--gpio-drive`: the irq-response study's timer blocks become
/// gpio blocks on those lines (the same loads), so its table is an external edge's answer.
fn gpio_lines(spec: &mut SuiteSpec, args: &SuiteArgs) {
    let Some(input) = &args.gpio_in else { return };
    for block in spec.matrix.iter_mut().filter(|b| b.probe == "timer") {
        block.probe = "gpio".into();
        block.methods = None;
        block.trace = None;
        block.gpio_in = Some(input.clone());
        block.gpio_out = args.gpio_out.clone();
        block.drive = args.gpio_drive.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> SuiteSpec {
        toml::from_str(text).unwrap()
    }

    fn size(text: &str, samples: Option<u64>) -> Result<SuiteSize, UserError> {
        let args = CommonArgs {
            samples,
            warmup: "1s".into(),
            ..CommonArgs::default()
        };
        suite_size("plan.toml".into(), &spec(text), &args)
    }

    #[test]
    fn every_probe_counts_its_own_axes() {
        let s = size(
            "[[matrix]]\nprobe = \"wake\"\nmechanisms = [\"pipe\", \"eventfd\"]\ncompetitors = [0, 1, 2]\nplacements = [\"same-cpu\", \"other-cpu\"]\npolicies = [\"rr:1\", \"other\"]\n\n[[matrix]]\nprobe = \"net\"\nsizes = [56, \"4K\"]\nintervals = [\"flood\", \"1ms\"]\n\n[[matrix]]\nprobe = \"noise\"\nthresholds = [\"1us\", \"5us\"]\nloads = [\"none\", \"cpu:50%\"]\n",
            Some(1000),
        )
        .unwrap();
        assert_eq!(s.scenarios, 2 * 3 * 2 * 2 + 2 * 2 + 2 * 2);
    }

    #[test]
    fn foreign_axes_and_unknown_probes_name_block_and_key() {
        let err = size(
            "[[matrix]]\nprobe = \"timer\"\n\n[[matrix]]\nprobe = \"timer\"\nmechanisms = [\"pipe\"]\n",
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("[[matrix]] block 2, mechanisms") && err.contains("belongs to wake"),
            "{err}"
        );
        let err = size("[[matrix]]\nprobe = \"disk\"\n", None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("block 1, probe") && err.contains("'disk'"),
            "{err}"
        );
        let err = size("[[matrix]]\nprobe = \"net\"\ntrace = true\n", None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("block 1, trace"), "{err}");
    }

    #[test]
    fn a_million_scenarios_are_counted_not_built() {
        let periods: Vec<String> = (0..1000).map(|i| format!("\"{}us\"", 100 + i)).collect();
        let loads: Vec<String> = (0..1000)
            .map(|i| format!("\"cpu:{}%\"", 1 + i % 100))
            .collect();
        let text = format!(
            "[[matrix]]\nperiods = [{}]\nloads = [{}]\n",
            periods.join(","),
            loads.join(",")
        );
        let start = std::time::Instant::now();
        let s = size(&text, Some(10)).unwrap();
        assert_eq!(s.scenarios, 1_000_000);
        let err = check_size("plan.toml", s, false).unwrap_err().to_string();
        assert!(
            err.contains("1000000 scenarios") && err.contains("--yes"),
            "{err}"
        );
        assert!(check_size("plan.toml", s, true).is_ok());
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn estimates_scale_with_samples() {
        let text = "[[matrix]]\nprobe = \"wake\"\nintervals = [\"16ms\"]\ncompetitors = [0, 1]\n";
        let full = size(text, Some(10_000)).unwrap();
        let small = size(text, Some(100)).unwrap();
        // 2 × (10 000 × 16 ms + 1 s warm-up + overhead)
        assert!(full.estimated_ns > 2 * 160_000_000_000, "{full:?}");
        assert!(small.estimated_ns < full.estimated_ns / 10, "{small:?}");
        assert_eq!(human_estimate(90_000_000_000), "90 s");
        assert_eq!(human_estimate(600_000_000_000), "10 min");
    }
}
