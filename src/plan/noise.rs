//! The plan of `latscope noise`: threshold and deadline checked as typed, then every
//! online CPU but the first by default (it keeps the machine's housekeeping), busy at the
//! chosen policy like the timer's busy method, so the same RT safety checks apply.

use super::common::{
    busy_checked_scenarios, check_common, check_output, check_trace, command_plan,
    duration_in_range, CommonRequest, Machine,
};
use super::{OutputSettings, Plan, TraceSettings};
use crate::cli::NoiseArgs;
use crate::error::UserError;
use crate::probe::noise::NoiseProbe;

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
    let force = request.common.force;
    command_plan(
        &request.common,
        &default_noise_cpus(machine),
        request.trace,
        request.output,
        machine,
        |common, trace, warnings| {
            busy_checked_scenarios(vec![request.probe], common, force, trace, machine, warnings)
        },
    )
}

/// Builds the plan of `latscope noise`.
pub fn noise_plan(args: &NoiseArgs) -> Result<Plan, UserError> {
    let request = check_noise(args)?;
    resolve_noise(request, &Machine::read())
}
