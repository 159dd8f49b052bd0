//! The plan of `latscope load` (loads alone, nothing measured): the specs and the
//! duration checked as typed, the specs' CPUs resolved on this machine.

use super::common::{duration_in_range, resolve_loads, MAX_DURATION_NS};
use crate::cli::LoadArgs;
use crate::error::UserError;
use crate::load::LoadSpec;

/// What `latscope load` runs.
pub struct LoadPlan {
    pub specs: Vec<LoadSpec>,
    pub duration_ns: u64,
}

/// Builds the plan of `latscope load` (not `--list`).
pub fn load_plan(args: &LoadArgs) -> Result<LoadPlan, UserError> {
    let specs = crate::load::parse_specs(&args.specs)?;
    let duration_ns = duration_in_range(
        "--duration",
        &args.duration,
        1_000_000_000,
        10_000_000,
        MAX_DURATION_NS,
    )?;
    let specs = resolve_loads(&specs, &[], &crate::sys::affinity::online_cpus())?;
    Ok(LoadPlan { specs, duration_ns })
}
