//! The plan of `latscope wake`: mechanisms × competitor counts, each a scenario; the
//! interval, counts and shared options checked as typed, then the two threads' CPUs
//! resolved on this machine.

use super::common::{
    check_common, check_output, check_raw_capacity, check_trace, command_plan, duration_in_range,
    invalid, out_of_range, scenarios_of, CommonPlan, CommonRequest, Machine, MAX_PERIOD_NS,
    MIN_PERIOD_NS,
};
use super::{OutputSettings, Plan, ScenarioPlan, TraceSettings};
use crate::cli::WakeArgs;
use crate::error::UserError;
use crate::probe::wake::{mechanism::Mechanism, WakeProbe};
use crate::probe::Probe;

/// The most competitors accepted per scenario.
pub const MAX_COMPETITORS: usize = 1024;

/// Bytes `--raw` keeps per wake iteration.
pub const RAW_BYTES_PER_ITERATION: u64 = 24;

/// Parses `--competitors`: a comma list of counts, each 0 to MAX_COMPETITORS, kept in
/// the order given without repeats.
pub fn parse_competitors(text: &str) -> Result<Vec<usize>, UserError> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        let n: usize = part.parse().map_err(|_| {
            invalid(
                "--competitors",
                text,
                format!("'{part}' is not a count; give whole numbers like 0,1,2,4,8"),
            )
        })?;
        if n > MAX_COMPETITORS {
            return Err(out_of_range(
                "--competitors",
                part,
                &format!("0 to {MAX_COMPETITORS}"),
            ));
        }
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

/// `latscope wake` as typed, checked.
pub struct WakeRequest {
    pub mechanisms: Vec<Mechanism>,
    pub interval_ns: u64,
    pub deadline_ns: u64,
    pub competitors: Vec<usize>,
    pub waker_cpu: Option<usize>,
    pub wakee_cpu: Option<usize>,
    pub common: CommonRequest,
    pub trace: Option<TraceSettings>,
    pub output: OutputSettings,
}

/// Checks `latscope wake`'s options as typed; reads nothing from the machine.
pub fn check_wake(args: &WakeArgs) -> Result<WakeRequest, UserError> {
    let mechanisms = Mechanism::parse_list(&args.mechanism)
        .map_err(|r| invalid("--mechanism", &args.mechanism, r))?;
    let interval_ns = duration_in_range(
        "--interval",
        &args.interval,
        1_000,
        MIN_PERIOD_NS,
        MAX_PERIOD_NS,
    )?;
    let deadline_ns = match &args.deadline {
        Some(d) => duration_in_range("--deadline", d, 1_000, 1, 60_000_000_000)?,
        None => interval_ns,
    };
    let competitors = parse_competitors(&args.competitors)?;
    if let Some(cpus) = &args.run.common.cpus {
        return Err(invalid(
            "--cpus",
            cpus,
            "latscope wake places two threads: use --waker-cpu and --wakee-cpu",
        ));
    }
    let common = check_common(&args.run.common)?;
    check_raw_capacity(
        &common,
        common.raw.is_some() || common.worst_case,
        interval_ns,
        RAW_BYTES_PER_ITERATION,
        "iterations",
    )?;
    Ok(WakeRequest {
        mechanisms,
        interval_ns,
        deadline_ns,
        competitors,
        waker_cpu: args.waker_cpu,
        wakee_cpu: args.wakee_cpu,
        common,
        trace: check_trace(&args.trace)?,
        output: check_output(&args.run.output, &args.run.common.raw)?,
    })
}

/// The wake probe's own axes: one scenario per competitor count × mechanism.
#[derive(Debug, Clone)]
pub struct WakeSweep {
    pub mechanisms: Vec<Mechanism>,
    pub interval_ns: u64,
    pub deadline_ns: u64,
    pub competitors: Vec<usize>,
}

/// The scenarios of `sweep` on resolved shared options (`latscope wake` and suites): the
/// wakee defaults to the last online CPU, or under --isolate to the (last) shielded one,
/// the waker to the wakee's CPU; the common CPUs become those two.
pub fn wake_scenarios(
    sweep: &WakeSweep,
    waker_cpu: Option<usize>,
    wakee_cpu: Option<usize>,
    common: &CommonPlan,
    trace: &Option<TraceSettings>,
    machine: &Machine,
) -> Result<Vec<ScenarioPlan>, UserError> {
    let last = common.isolate.last().copied().unwrap_or(machine.last_cpu());
    let wakee_cpu = machine.online_cpu(wakee_cpu.unwrap_or(last))?;
    let waker_cpu = machine.online_cpu(waker_cpu.unwrap_or(wakee_cpu))?;
    let mut cpus = vec![waker_cpu, wakee_cpu];
    cpus.dedup();
    let mut common = common.clone();
    common.settings.cpus = cpus;
    let mut probes = Vec::new();
    for &count in &sweep.competitors {
        for &mechanism in &sweep.mechanisms {
            probes.push(Box::new(WakeProbe {
                mechanism,
                interval_ns: sweep.interval_ns,
                deadline_ns: sweep.deadline_ns,
                waker_cpu,
                wakee_cpu,
                competitors: count,
            }) as Box<dyn Probe>);
        }
    }
    Ok(scenarios_of(probes, &common, trace))
}

/// Resolves a checked `latscope wake` on this machine: both threads default to the last
/// online CPU, or under --isolate to the (last) shielded one.
pub fn resolve_wake(request: WakeRequest, machine: &Machine) -> Result<Plan, UserError> {
    let sweep = WakeSweep {
        mechanisms: request.mechanisms,
        interval_ns: request.interval_ns,
        deadline_ns: request.deadline_ns,
        competitors: request.competitors,
    };
    let (waker_cpu, wakee_cpu) = (request.waker_cpu, request.wakee_cpu);
    command_plan(
        &request.common,
        &[],
        request.trace,
        request.output,
        machine,
        |common, trace, _| wake_scenarios(&sweep, waker_cpu, wakee_cpu, common, trace, machine),
    )
}

/// Builds the plan of `latscope wake`.
pub fn wake_plan(args: &WakeArgs) -> Result<Plan, UserError> {
    let request = check_wake(args)?;
    resolve_wake(request, &Machine::read())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn competitors_parse_and_reject() {
        assert_eq!(
            parse_competitors("0,1,2,4,8,16,32").unwrap(),
            vec![0, 1, 2, 4, 8, 16, 32]
        );
        assert_eq!(parse_competitors("4, 4,2").unwrap(), vec![4, 2]);
        assert!(parse_competitors("").is_err());
        assert!(parse_competitors("1,x").is_err());
        assert!(parse_competitors("-1").is_err());
        assert!(parse_competitors("5000").is_err());
    }

    #[test]
    fn mechanisms_parse() {
        assert_eq!(Mechanism::parse_list("all").unwrap().len(), 7);
        assert_eq!(
            Mechanism::parse_list("futex,pipe,futex").unwrap(),
            vec![Mechanism::Futex, Mechanism::Pipe]
        );
        assert!(Mechanism::parse_list("carrier-pigeon").is_err());
        assert!(Mechanism::parse_list("").is_err());
    }
}
