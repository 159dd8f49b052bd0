//! The plan of `latscope suite`, second step: the checked suite (plan.rs) resolved on
//! this machine, every scenario through the same builders as `latscope
//! timer`/`wake`/`net`/`noise` (policy, shield, loads, CPUs, RT safety), so a suite is
//! refused before its first scenario runs.

use super::plan::{
    check_size, check_suite, parse_load_set, Axes, BlockRequest, Placement, SuiteRequest,
    SuiteSize, TraceWish,
};
use crate::cli::SuiteArgs;
use crate::error::UserError;
use crate::load::LoadSpec;
use crate::plan::common::busy_checked_scenarios;
use crate::plan::common::{
    add_warnings, check_output, invalid, resolve_common, resolve_isolate, resolve_loads,
    resolve_output, resolve_policy, resolve_trace, CommonPlan, CpuList, Machine,
};
use crate::plan::net::{default_net_timing, net_scenarios, NetSweep};
use crate::plan::wake::{wake_scenarios, WakeSweep};
use crate::plan::{Plan, ScenarioPlan, TraceSettings};
use crate::probe::noise::NoiseProbe;
use crate::probe::timer::{Method, TimerProbe};
use crate::suite::SuiteSpec;
use crate::sys::sched::Policy;
use crate::warning::{Warning, WarningCode};

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
    let (policies, shields, load_sets) =
        block_dimensions(block, request, suite, &measured, warnings)?;
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

/// A block's shared dimensions resolved: its policies (or the command line's), shields
/// (or the command line's `--isolate`) and load sets (after the command line's loads).
#[allow(clippy::type_complexity)]
fn block_dimensions(
    block: &BlockRequest,
    request: &SuiteRequest,
    suite: &SuiteBase,
    measured: &[usize],
    warnings: &mut Vec<Warning>,
) -> Result<(Vec<(Policy, i32)>, Vec<Vec<usize>>, Vec<Vec<LoadSpec>>), UserError> {
    let machine = &suite.machine;
    let base = &suite.base;
    let cpus_text = crate::units::format_cpu_list(measured);
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
        let shield = CpuList::These(measured.to_vec());
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
    Ok((policies, shields, load_sets))
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
        } => out.extend(timer_scenarios(
            block, methods, periods_ns, common, force, trace, machine, warnings,
        )?),
        Axes::Wake { .. } => out.extend(wake_axes_scenarios(
            block, common, trace, machine, measured,
        )?),
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
        Axes::Gpio { typed, periods_ns } => out.extend(
            super::gpio::gpio_scenarios(typed, periods_ns, common, trace, measured)
                .map_err(block.at("gpio_in"))?,
        ),
    }
    Ok(out)
}

/// A timer block's scenarios on one resolved policy × shield × load set: every method ×
/// period, through the busy-wait check.
#[allow(clippy::too_many_arguments)]
fn timer_scenarios(
    block: &BlockRequest,
    methods: &[Method],
    periods_ns: &[u64],
    common: &CommonPlan,
    force: bool,
    trace: &Option<TraceSettings>,
    machine: &Machine,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<ScenarioPlan>, UserError> {
    let mut out = Vec::new();
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
                busy_checked_scenarios(vec![probe], common, force, trace, machine, warnings)
                    .map_err(block.at("methods"))?,
            );
        }
    }
    Ok(out)
}

/// A wake block's scenarios: per placement and interval, every mechanism × competitor
/// count, the wakee on the first measured CPU.
fn wake_axes_scenarios(
    block: &BlockRequest,
    common: &CommonPlan,
    trace: &Option<TraceSettings>,
    machine: &Machine,
    measured: &[usize],
) -> Result<Vec<ScenarioPlan>, UserError> {
    let Axes::Wake {
        mechanisms,
        competitors,
        placements,
        intervals_ns,
    } = &block.axes
    else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
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
    Ok(out)
}

/// Expands the suite into a validated plan. `--samples`/`--duration` on the command line
/// override (scale down) every scenario; `--isolate` and `--load` apply to every one.
/// The matrix size is checked (more than MAX_SCENARIOS_WITHOUT_YES needs `--yes`) before
/// any scenario is built.
pub fn suite_plan(args: &SuiteArgs) -> Result<(Plan, SuiteSpec, SuiteSize), UserError> {
    let (origin, mut spec) = crate::suite::load_spec(args)?;
    super::gpio::gpio_lines(&mut spec, args);
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
                study: spec.study.as_deref().and_then(crate::result::Study::parse),
            }),
        },
        spec,
        size,
    ))
}
