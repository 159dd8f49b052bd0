//! The plan of `latscope timer`: one scenario per method at one period, checked as typed
//! (methods, period, deadline, `--break-above`), then resolved with the shared options;
//! suites and `latscope cyclictest` build their timer scenarios through
//! [`busy_checked_scenarios`](super::common::busy_checked_scenarios) too.

use super::common::{
    busy_checked_scenarios, check_common, check_output, check_raw_capacity, check_trace,
    command_plan, duration_in_range, invalid, CommonRequest, Machine, MAX_PERIOD_NS, MIN_PERIOD_NS,
};
use super::range::duration_in_range_bare;
use super::{OutputSettings, Plan, TraceSettings};
use crate::cli::TimerArgs;
use crate::error::UserError;
use crate::probe::timer::{Method, TimerProbe};

/// Bytes `--raw` keeps per timer sample.
pub const RAW_BYTES_PER_SAMPLE: u64 = 16;

/// `latscope timer` as typed, checked.
pub struct TimerRequest {
    /// One probe per method, in the order given.
    pub probes: Vec<TimerProbe>,
    pub common: CommonRequest,
    pub trace: Option<TraceSettings>,
    pub output: OutputSettings,
}

/// A number without a unit (and not zero, which the range check names): `--period 100`
/// would silently mean 100 µs, so it is refused with the fix.
fn bare_nonzero(text: &str) -> bool {
    text.trim().parse::<f64>().is_ok_and(|v| v != 0.0)
}

/// Checks `latscope timer`'s options as typed; reads nothing from the machine.
pub fn check_timer(args: &TimerArgs) -> Result<TimerRequest, UserError> {
    let methods =
        Method::parse_list(&args.method).map_err(|r| invalid("--method", &args.method, r))?;
    if let Some(p) = args.period.as_deref().filter(|p| bare_nonzero(p)) {
        return Err(invalid(
            "--period",
            p,
            format!(
                "a bare number has no unit; write {}us (or -i {} for µs, as cyclictest)",
                p.trim(),
                p.trim()
            ),
        ));
    }
    let period_ns = match (&args.period, &args.interval_us) {
        (Some(p), _) => duration_in_range("--period", p, 1_000, MIN_PERIOD_NS, MAX_PERIOD_NS)?,
        (None, Some(i)) => {
            duration_in_range_bare("--interval", i, 1_000, MIN_PERIOD_NS, MAX_PERIOD_NS)?
        }
        (None, None) => 1_000_000,
    };
    let deadline_ns = match &args.deadline {
        Some(d) => duration_in_range("--deadline", d, 1_000, 1, 60_000_000_000)?,
        None => period_ns,
    };
    let break_above_ns = match &args.break_above {
        Some(b) => Some(duration_in_range(
            "--break-above",
            b,
            1_000,
            1,
            60_000_000_000,
        )?),
        None => None,
    };
    let common = check_common(&args.run.common)?;
    let trace = check_trace(&args.trace)?;
    check_raw_capacity(
        &common,
        common.raw.is_some() || common.worst_case || trace.is_some(),
        period_ns,
        RAW_BYTES_PER_SAMPLE,
        "samples per thread",
    )?;
    let output = check_output(&args.run.output, &args.run.common.raw)?;
    let probes = methods
        .into_iter()
        .map(|method| TimerProbe {
            method,
            period_ns,
            deadline_ns,
            break_above_ns,
            distance_ns: 0,
            start: Default::default(),
            cyclictest: None,
        })
        .collect();
    Ok(TimerRequest {
        probes,
        common,
        trace,
        output,
    })
}

/// Resolves a checked `latscope timer` on this machine (default CPUs: every online one).
pub fn resolve_timer(request: TimerRequest, machine: &Machine) -> Result<Plan, UserError> {
    let force = request.common.force;
    command_plan(
        &request.common,
        &machine.online,
        request.trace,
        request.output,
        machine,
        |common, trace, warnings| {
            busy_checked_scenarios(request.probes, common, force, trace, machine, warnings)
        },
    )
}

/// Builds the plan of `latscope timer`.
pub fn timer_plan(args: &TimerArgs) -> Result<Plan, UserError> {
    let request = check_timer(args)?;
    resolve_timer(request, &Machine::read())
}
