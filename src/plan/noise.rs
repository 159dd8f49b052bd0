//! The plan of `latscope noise`: threshold and deadline checked as typed, then every
//! online CPU but the first by default (it keeps the machine's housekeeping), busy at the
//! chosen policy like the timer's busy method, so the same RT safety checks apply.

use super::common::{
    check_busy_safety, check_common, check_output, check_trace, duration_in_range, resolve_common,
    resolve_output, resolve_trace, scenarios_of, CommonPlan, CommonRequest, Machine,
};
use super::{OutputSettings, Plan, ScenarioPlan, TraceSettings};
use crate::cli::NoiseArgs;
use crate::error::UserError;
use crate::probe::noise::NoiseProbe;
use crate::probe::Probe;
use crate::warning::Warning;

/// `latscope noise` as typed, checked.
pub struct NoiseRequest {
    pub probe: NoiseProbe,
    pub common: CommonRequest,
    pub trace: Option<TraceSettings>,
    pub output: OutputSettings,
}

/// Checks `latscope noise`'s options as typed; reads nothing from the machine.
pub fn check_noise(args: &NoiseArgs) -> Result<NoiseRequest, UserError> {
    let threshold_ns = duration_in_range("--threshold", &args.threshold, 1_000, 0, 1_000_000_000)?;
    let deadline_ns = duration_in_range("--deadline", &args.deadline, 1_000, 1, 60_000_000_000)?;
    Ok(NoiseRequest {
        probe: NoiseProbe {
            threshold_ns,
            deadline_ns,
        },
        common: check_common(&args.run.common)?,
        trace: check_trace(&args.trace)?,
        output: check_output(&args.run.output, &args.run.common.raw)?,
    })
}

/// The scenarios of `probes` on resolved shared options (`latscope noise` and suites):
/// they busy-wait at the chosen policy, so the RT safety checks apply.
pub fn noise_scenarios(
    probes: Vec<NoiseProbe>,
    common: &CommonPlan,
    force: bool,
    trace: &Option<TraceSettings>,
    machine: &Machine,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<ScenarioPlan>, UserError> {
    check_busy_safety(&common.settings, force, machine, warnings)?;
    let probes = probes
        .into_iter()
        .map(|p| Box::new(p) as Box<dyn Probe>)
        .collect();
    Ok(scenarios_of(probes, common, trace))
}

/// The CPUs noise measures by default: every online CPU but the first (it keeps the
/// machine's housekeeping), or the only one.
pub fn default_noise_cpus(machine: &Machine) -> Vec<usize> {
    let online = &machine.online;
    if online.len() > 1 {
        online[1..].to_vec()
    } else {
        online.clone()
    }
}

/// Resolves a checked `latscope noise` on this machine.
pub fn resolve_noise(request: NoiseRequest, machine: &Machine) -> Result<Plan, UserError> {
    let common = resolve_common(&request.common, &default_noise_cpus(machine), machine)?;
    let mut warnings = common.warnings.clone();
    let trace = resolve_trace(request.trace)?;
    let scenarios = noise_scenarios(
        vec![request.probe],
        &common,
        request.common.force,
        &trace,
        machine,
        &mut warnings,
    )?;
    let output = resolve_output(request.output)?;
    Ok(Plan {
        scenarios,
        output,
        warnings,
        suite: None,
    })
}

/// Builds the plan of `latscope noise`.
pub fn noise_plan(args: &NoiseArgs) -> Result<Plan, UserError> {
    let request = check_noise(args)?;
    resolve_noise(request, &Machine::read())
}
