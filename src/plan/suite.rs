//! The plan of `latscope suite`: every `[[matrix]]` block checked as typed (probe,
//! methods, periods, policies), then every scenario resolved on this machine through the
//! same builders as `latscope timer` (policy, shield, loads, RT safety), so a suite is
//! refused before its first scenario runs; errors name the block and the key.

use super::common::{
    add_warnings, check_common, check_output, check_raw_capacity, check_trace, duration_in_range,
    invalid, parse_policy_spec, resolve_common, resolve_isolate, resolve_loads, resolve_output,
    resolve_policy, resolve_trace, CommonPlan, CpuList, Machine, MAX_PERIOD_NS, MIN_PERIOD_NS,
};
use super::timer::{timer_scenarios, RAW_BYTES_PER_SAMPLE};
use super::Plan;
use crate::cli::{SuiteArgs, TraceArgs};
use crate::error::UserError;
use crate::load::LoadSpec;
use crate::probe::timer::{Method, TimerProbe};
use crate::suite::{MatrixEntry, SuiteSpec};
use crate::sys::sched::Policy;

/// One `[[matrix]]` block, checked as typed.
struct BlockRequest {
    /// Where errors point: `PLAN, [[matrix]] block N`.
    place: String,
    methods: Vec<Method>,
    periods_ns: Vec<u64>,
    policies: Vec<(Policy, Option<i32>)>,
    isolate: Vec<bool>,
    /// Load sets as typed (`none`, `a + b`); `{cpus}` is known only once CPUs are resolved.
    loads: Vec<String>,
}

impl BlockRequest {
    /// Names this block and `key` in an error.
    fn at(&self, key: &str) -> impl Fn(UserError) -> UserError {
        in_plan(&self.place, key)
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

/// Checks one block as typed; `keep_raw` (`--raw` or `trace`) sizes raw buffers per period.
fn check_block(
    place: String,
    entry: &MatrixEntry,
    common: &super::CommonRequest,
    keep_raw: bool,
) -> Result<BlockRequest, UserError> {
    let at = |key: &str| in_plan(&place, key);
    if entry.probe != "timer" {
        return Err(at("probe")(invalid(
            "probe",
            &entry.probe,
            "suites run the timer probe",
        )));
    }
    let mut methods = Vec::new();
    for m in &entry.methods {
        for method in Method::parse_list(m).map_err(|r| at("methods")(invalid("methods", m, r)))? {
            if !methods.contains(&method) {
                methods.push(method);
            }
        }
    }
    let mut periods_ns = Vec::new();
    for text in &entry.periods {
        let period_ns = duration_in_range("periods", text, 1_000, MIN_PERIOD_NS, MAX_PERIOD_NS)
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
    let policies = entry
        .policies
        .iter()
        .map(|text| parse_policy_spec("policies", text))
        .collect::<Result<Vec<_>, _>>()
        .map_err(at("policies"))?;
    Ok(BlockRequest {
        place,
        methods,
        periods_ns,
        policies,
        isolate: entry.isolate.clone(),
        loads: entry.loads.clone(),
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

/// Expands the suite into a validated plan. `--samples`/`--duration` on the command line
/// override (scale down) every scenario.
pub fn suite_plan(args: &SuiteArgs) -> Result<(Plan, SuiteSpec), UserError> {
    let (origin, spec) = crate::suite::load_spec(args)?;
    // What was typed: the command line over the plan's own settings, then every block.
    let mut common_args = args.run.common.clone();
    if common_args.cpus.is_none() {
        common_args.cpus = spec.cpus.clone();
    }
    if common_args.samples.is_none() && common_args.duration.is_none() {
        common_args.samples = spec.samples;
        common_args.duration = spec.duration.clone();
    }
    let request = check_common(&common_args)?;
    let trace = check_trace(&TraceArgs {
        trace: spec.trace,
        trace_threshold: spec.trace_threshold.clone(),
        trace_buffer: None,
    })?;
    let keep_raw = request.raw.is_some() || trace.is_some();
    let blocks = spec
        .matrix
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            check_block(
                format!("{origin}, [[matrix]] block {}", i + 1),
                entry,
                &request,
                keep_raw,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let output = check_output(&args.run.output, &args.run.common.raw)?;

    // This machine: the shared options once, then every scenario of every block.
    let machine = Machine::read();
    let base = resolve_common(&request, &[machine.last_cpu()], &machine)?;
    let trace = resolve_trace(trace)?;
    let mut warnings = base.warnings.clone();
    let cpus = base.settings.cpus.clone();
    let cpus_text = crate::units::format_cpu_list(&cpus);
    let shield = CpuList::These(cpus.clone());
    let mut scenarios = Vec::new();
    for block in &blocks {
        let mut found = Vec::new();
        let policies = block
            .policies
            .iter()
            .map(|&(policy, priority)| resolve_policy(Some(policy), priority, &machine, &mut found))
            .collect::<Result<Vec<_>, _>>()
            .map_err(block.at("policies"))?;
        let shields = block
            .isolate
            .iter()
            .map(|&isolated| resolve_isolate(isolated.then_some(&shield), &machine, &mut found))
            .collect::<Result<Vec<_>, _>>()
            .map_err(block.at("isolate"))?;
        let load_sets = block
            .loads
            .iter()
            .map(|text| parse_load_set(text, &cpus_text))
            .collect::<Result<Vec<_>, _>>()
            .map_err(block.at("loads"))?;
        add_warnings(&mut warnings, found);
        for &(policy, priority) in &policies {
            let mut settings = base.settings.clone();
            settings.policy = policy;
            settings.priority = priority;
            for &method in &block.methods {
                for &period_ns in &block.periods_ns {
                    for isolate in &shields {
                        for loads in &load_sets {
                            let common = CommonPlan {
                                settings: settings.clone(),
                                dma_latency_us: base.dma_latency_us,
                                loads: resolve_loads(loads, isolate, &machine.online)
                                    .map_err(block.at("loads"))?,
                                isolate: isolate.clone(),
                                warnings: Vec::new(),
                            };
                            let probe = TimerProbe {
                                method,
                                period_ns,
                                deadline_ns: period_ns,
                                break_above_ns: None,
                            };
                            let mut found = Vec::new();
                            scenarios.extend(
                                timer_scenarios(
                                    vec![probe],
                                    &common,
                                    request.force,
                                    &trace,
                                    &machine,
                                    &mut found,
                                )
                                .map_err(block.at("methods"))?,
                            );
                            add_warnings(&mut warnings, found);
                        }
                    }
                }
            }
        }
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
            }),
        },
        spec,
    ))
}
