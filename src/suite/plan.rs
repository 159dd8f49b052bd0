//! The plan of `latscope suite`, first step: every `[[matrix]]` block checked as typed
//! (its probe, that probe's own axes and no other's, policies, trace) and the matrix size
//! counted and bounded before anything is expanded; expand.rs then resolves every
//! scenario on this machine. Errors name the block and the key.

use crate::cli::{CommonArgs, TraceArgs};
use crate::error::UserError;
use crate::load::LoadSpec;
use crate::plan::common::{
    check_common, check_raw_capacity, check_trace, duration_in_range, invalid, parse_policy_spec,
    CommonRequest, MAX_PERIOD_NS, MIN_PERIOD_NS,
};
use crate::plan::gpio::GpioTyped;
use crate::plan::net::net_sizes;
use crate::plan::timer::RAW_BYTES_PER_SAMPLE;
use crate::plan::wake::{parse_competitors, RAW_BYTES_PER_ITERATION as WAKE_RAW_BYTES};
use crate::plan::TraceSettings;
use crate::probe::timer::Method;
use crate::probe::wake::mechanism::Mechanism;
use crate::result::ProbeKind;
use crate::suite::{MatrixEntry, SuiteSpec, TraceChoice};
use crate::sys::sched::Policy;

/// The most scenarios a suite runs without `--yes`.
pub const MAX_SCENARIOS_WITHOUT_YES: u128 = 10_000;

/// Each probe-specific axis and the probes that have it.
const PROBE_AXES: [(&str, &[ProbeKind]); 11] = [
    ("methods", &[ProbeKind::Timer]),
    ("periods", &[ProbeKind::Timer, ProbeKind::Gpio]),
    ("mechanisms", &[ProbeKind::Wake]),
    ("competitors", &[ProbeKind::Wake]),
    ("placements", &[ProbeKind::Wake]),
    ("intervals", &[ProbeKind::Wake, ProbeKind::Net]),
    ("sizes", &[ProbeKind::Net]),
    ("thresholds", &[ProbeKind::Noise]),
    ("gpio_in", &[ProbeKind::Gpio]),
    ("gpio_out", &[ProbeKind::Gpio]),
    ("drive", &[ProbeKind::Gpio]),
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
pub(super) enum Axes {
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
    /// suite/gpio.rs: the lines and options as `latscope gpio` checks them.
    Gpio {
        typed: Box<GpioTyped>,
        periods_ns: Vec<u64>,
    },
}

impl Axes {
    /// Scenarios per policy × shield × load set.
    pub(super) fn count(&self) -> u128 {
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
    pub(super) fn measuring_ns(&self, request: &CommonRequest) -> u128 {
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
pub(super) enum TraceWish {
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
pub(super) struct BlockRequest {
    /// Where errors point: `PLAN, [[matrix]] block N`.
    pub(super) place: String,
    pub(super) axes: Axes,
    pub(super) policies: Vec<(Policy, Option<i32>)>,
    pub(super) isolate: Vec<bool>,
    /// Load sets as typed (`none`, `a + b`); `{cpus}` is known only once CPUs are resolved.
    pub(super) loads: Vec<String>,
    pub(super) trace: TraceWish,
}

impl BlockRequest {
    /// Names this block and `key` in an error.
    pub(super) fn at(&self, key: &str) -> impl Fn(UserError) -> UserError {
        in_plan(&self.place, key)
    }

    /// Its scenarios; `isolate_axis` is false when the command line's --isolate replaces
    /// the block's `isolate` list.
    pub(super) fn count(&self, isolate_axis: bool) -> u128 {
        let shields = if isolate_axis { self.isolate.len() } else { 1 };
        self.axes
            .count()
            .saturating_mul(self.policies.len() as u128)
            .saturating_mul(shields as u128)
            .saturating_mul(self.loads.len() as u128)
    }

    pub(super) fn estimated_ns(&self, request: &CommonRequest, isolate_axis: bool) -> u128 {
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

fn axes_of(probe: ProbeKind) -> Vec<&'static str> {
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
    probe: ProbeKind,
    entry: &MatrixEntry,
    common: &CommonRequest,
    keep_raw: bool,
    place: &str,
) -> Result<Axes, UserError> {
    match probe {
        ProbeKind::Timer => timer_axes(entry, common, keep_raw, place),
        ProbeKind::Wake => wake_axes(entry, common, keep_raw, place),
        ProbeKind::Net => net_axes(entry, place),
        ProbeKind::Noise => noise_axes(entry, place),
        ProbeKind::Gpio => gpio_axes(entry, place),
        ProbeKind::Lava => Err(in_plan(place, "probe")(invalid(
            "probe",
            probe.name(),
            format!("choose from {}", ProbeKind::names()),
        ))),
    }
}

/// A timer block's methods and periods.
fn timer_axes(
    entry: &MatrixEntry,
    common: &CommonRequest,
    keep_raw: bool,
    place: &str,
) -> Result<Axes, UserError> {
    let at = |key: &str| in_plan(place, key);
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
        let period_ns = duration_in_range("periods", &text, 1_000, MIN_PERIOD_NS, MAX_PERIOD_NS)
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
    Ok(Axes::Timer {
        methods: non_empty("methods", methods).map_err(at("methods"))?,
        periods_ns: non_empty("periods", periods_ns).map_err(at("periods"))?,
    })
}

/// A wake block's mechanisms, competitor counts, placements and intervals.
fn wake_axes(
    entry: &MatrixEntry,
    common: &CommonRequest,
    keep_raw: bool,
    place: &str,
) -> Result<Axes, UserError> {
    let at = |key: &str| in_plan(place, key);
    let mut mechanisms = Vec::new();
    for m in list_or(&entry.mechanisms, &["eventfd"]) {
        for mechanism in
            Mechanism::parse_list(&m).map_err(|r| at("mechanisms")(invalid("mechanisms", &m, r)))?
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
    Ok(Axes::Wake {
        mechanisms: non_empty("mechanisms", mechanisms).map_err(at("mechanisms"))?,
        competitors,
        placements: non_empty("placements", placements).map_err(at("placements"))?,
        intervals_ns: non_empty("intervals", intervals_ns).map_err(at("intervals"))?,
    })
}

/// A net block's sizes and intervals (`flood` is 0).
fn net_axes(entry: &MatrixEntry, place: &str) -> Result<Axes, UserError> {
    let at = |key: &str| in_plan(place, key);
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
    Ok(Axes::Net {
        sizes,
        intervals_ns: non_empty("intervals", intervals_ns).map_err(at("intervals"))?,
    })
}

/// A noise block's thresholds.
fn noise_axes(entry: &MatrixEntry, place: &str) -> Result<Axes, UserError> {
    let at = |key: &str| in_plan(place, key);
    let mut thresholds_ns = Vec::new();
    for text in list_or(&entry.thresholds, &["1us"]) {
        thresholds_ns.push(
            duration_in_range("thresholds", &text, 1_000, 0, 1_000_000_000)
                .map_err(at("thresholds"))?,
        );
    }
    Ok(Axes::Noise {
        thresholds_ns: non_empty("thresholds", thresholds_ns).map_err(at("thresholds"))?,
    })
}

/// A gpio block's lines (suite/gpio.rs) and periods.
fn gpio_axes(entry: &MatrixEntry, place: &str) -> Result<Axes, UserError> {
    let at = |key: &str| in_plan(place, key);
    let typed = super::gpio::gpio_block(entry).map_err(|(key, e)| at(key)(e))?;
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

/// Checks one block as typed; `keep_raw` (`--raw` or `trace`) sizes raw buffers per period.
fn check_block(
    place: String,
    entry: &MatrixEntry,
    spec_trace: &TraceChoice,
    common: &CommonRequest,
    keep_raw: bool,
) -> Result<BlockRequest, UserError> {
    let at = |key: &str| in_plan(&place, key);
    let Some(probe) = ProbeKind::parse(entry.probe.trim()) else {
        return Err(at("probe")(invalid(
            "probe",
            &entry.probe,
            format!("choose from {}", ProbeKind::names()),
        )));
    };
    for (key, given) in given_axes(entry) {
        if given && !axes_of(probe).contains(&key) {
            let owners: Vec<&str> = PROBE_AXES
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, o)| o.iter().map(|p| p.name()).collect())
                .unwrap_or_default();
            return Err(at(key)(UserError::Other(format!(
                "the {probe} probe has no `{key}` axis (it belongs to {}); {probe}'s own axes are {}, and every probe has loads, isolate, policies{}",
                owners.join(" and "),
                axes_of(probe).join(", "),
                if probe == ProbeKind::Net { "" } else { ", trace" }
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
    if probe == ProbeKind::Net && trace == TraceWish::On {
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
pub(super) fn parse_load_set(text: &str, cpus_text: &str) -> Result<Vec<LoadSpec>, UserError> {
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
pub(super) struct SuiteRequest {
    pub(super) origin: String,
    pub(super) common: CommonRequest,
    pub(super) trace: Option<TraceSettings>,
    pub(super) blocks: Vec<BlockRequest>,
}

impl SuiteRequest {
    pub(super) fn isolate_axis(&self) -> bool {
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
    pub(super) fn size(&self) -> SuiteSize {
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
pub(super) fn check_suite(
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
        if crate::result::Study::parse(study).is_none() {
            return Err(UserError::BadInputFile {
                path: origin,
                reason: format!(
                    "unknown study '{study}': choose from {} (or leave `study` out for one row per scenario)",
                    crate::result::Study::names()
                ),
            });
        }
    }
    // --worst-case keeps every sample in time order, as --raw does.
    let keep_raw = common.raw.is_some() || common.worst_case || any_trace;
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
pub(super) fn check_size(origin: &str, size: SuiteSize, yes: bool) -> Result<(), UserError> {
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

    /// A matrix too large to build (10^9 scenarios would take hundreds of GB) is counted
    /// exactly, so it is refused from its size alone.
    #[test]
    fn a_billion_scenarios_are_counted_not_built() {
        let list = |f: &dyn Fn(usize) -> String| (0..1000).map(f).collect::<Vec<_>>().join(",");
        let text = format!(
            "[[matrix]]\nperiods = [{}]\nloads = [{}]\npolicies = [{}]\n",
            list(&|i| format!("\"{}us\"", 100 + i)),
            list(&|i| format!("\"cpu:{}%\"", 1 + i % 100)),
            list(&|i| format!("\"fifo:{}\"", 1 + i % 99)),
        );
        let s = size(&text, Some(10)).unwrap();
        assert_eq!(s.scenarios, 1_000_000_000);
        let err = check_size("plan.toml", s, false).unwrap_err().to_string();
        assert!(
            err.contains("1000000000 scenarios") && err.contains("--yes"),
            "{err}"
        );
        assert!(check_size("plan.toml", s, true).is_ok());
    }

    /// --worst-case keeps every sample in order (as --raw): a suite asking more than the
    /// preallocated buffer holds is refused naming --worst-case, before anything runs.
    #[test]
    fn the_sample_buffer_check_counts_worst_case() {
        let text = "[[matrix]]\nperiods = [\"1ms\"]\n";
        let asked = crate::probe::MAX_RAW_SAMPLES + 1;
        let args = |worst_case| CommonArgs {
            samples: Some(asked),
            warmup: "1s".into(),
            worst_case,
            ..CommonArgs::default()
        };
        assert!(check_suite("plan.toml".into(), &spec(text), &args(false)).is_ok());
        let Err(err) = check_suite("plan.toml".into(), &spec(text), &args(true)) else {
            panic!("a suite keeping {asked} samples per thread was accepted");
        };
        let err = err.to_string();
        assert!(
            err.contains("--worst-case") && err.contains(&format!("at most {}", asked - 1)),
            "{err}"
        );
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
