//! The plan of `latscope wake`: mechanisms × competitor counts, each a scenario, with
//! the two threads' CPUs, the interval and the shared options validated up front.

use super::{
    duration_in_range, invalid, out_of_range, resolve_common, resolve_output, Plan, MAX_PERIOD_NS,
    MIN_PERIOD_NS,
};
use crate::cli::WakeArgs;
use crate::error::UserError;
use crate::probe::wake::{mechanism::Mechanism, WakeProbe};
use crate::probe::Probe;
use crate::units;

/// The most competitors accepted per scenario.
pub const MAX_COMPETITORS: usize = 1024;

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

/// Checks that a thread's CPU is online.
fn online_cpu(cpu: usize, online: &[usize]) -> Result<usize, UserError> {
    if online.contains(&cpu) {
        Ok(cpu)
    } else {
        Err(UserError::CpuNotOnline {
            cpu,
            online: units::format_cpu_list(online),
        })
    }
}

/// Builds the plan of `latscope wake`.
pub fn wake_plan(args: &WakeArgs) -> Result<Plan, UserError> {
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
    if let Some(cpus) = &args.common.cpus {
        return Err(invalid(
            "--cpus",
            cpus,
            "latscope wake places two threads: use --waker-cpu and --wakee-cpu",
        ));
    }
    let online = crate::sys::affinity::online_cpus();
    // Under --isolate both threads default to the (last) shielded CPU.
    let (loads, isolate) = super::resolve_loads_and_isolation(&args.common)?;
    let last = *isolate.last().or(online.last()).unwrap_or(&0);
    let wakee_cpu = online_cpu(args.wakee_cpu.unwrap_or(last), &online)?;
    let waker_cpu = online_cpu(args.waker_cpu.unwrap_or(wakee_cpu), &online)?;
    let mut cpus = vec![waker_cpu, wakee_cpu];
    cpus.dedup();
    let (mut settings, dma, warnings) = resolve_common(&args.common, &cpus)?;
    settings.cpus = cpus;
    super::check_raw_capacity(&settings, interval_ns, 24, "iterations")?;
    let output = resolve_output(&args.output, &args.common.raw)?;
    let mut probes = Vec::new();
    for &count in &competitors {
        for &mechanism in &mechanisms {
            probes.push(Box::new(WakeProbe {
                mechanism,
                interval_ns,
                deadline_ns,
                waker_cpu,
                wakee_cpu,
                competitors: count,
            }) as Box<dyn Probe>);
        }
    }
    let trace = super::resolve_trace(&args.trace)?;
    Ok(super::with_trace(
        super::plan_of(probes, settings, dma, loads, isolate, output, warnings),
        trace,
    ))
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
