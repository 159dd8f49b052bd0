//! The plan of `latscope net`: payload sizes, interval or flood, timeout, deadline and
//! target checked as typed; then the sender's CPU (first of --cpus, default the last
//! online CPU) and the in-process reflector's CPU (another one when there is one) resolved
//! on this machine, one scenario per size. Also the plan of `latscope net --serve`.

use super::common::{
    check_common, check_output, command_plan, duration_in_range, invalid, out_of_range,
    resolve_common, scenarios_of, CommonPlan, CommonRequest, Machine, MAX_PERIOD_NS, MIN_PERIOD_NS,
};
use super::{OutputSettings, Plan, ScenarioPlan};
use crate::cli::NetArgs;
use crate::error::UserError;
use crate::probe::harness::ThreadPlacement;
use crate::probe::net::{packet, NetProbe};
use crate::probe::Probe;
use crate::units;
use crate::warning::Warning;
use std::net::SocketAddr;

/// Parses `ADDR:PORT` for --target/--serve, naming the option when it is not one.
pub fn socket_addr(option: &str, text: &str) -> Result<SocketAddr, UserError> {
    text.parse().map_err(|_| {
        invalid(
            option,
            text,
            "expected ADDR:PORT, e.g. 127.0.0.1:9750 or [::1]:9750",
        )
    })
}

/// Parses the --size list of `latscope net`.
pub fn net_sizes(text: &str) -> Result<Vec<usize>, UserError> {
    let mut sizes = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let n = units::parse_size_bytes(part).map_err(|r| invalid("--size", part, r))?;
        if n < packet::MIN_SIZE as u64 || n > packet::MAX_SIZE as u64 {
            return Err(out_of_range(
                "--size",
                part,
                &format!(
                    "{} to {} bytes (UDP payload, header included)",
                    packet::MIN_SIZE,
                    packet::MAX_SIZE
                ),
            ));
        }
        if !sizes.contains(&(n as usize)) {
            sizes.push(n as usize);
        }
    }
    if sizes.is_empty() {
        return Err(invalid(
            "--size",
            text,
            "no size given; e.g. --size 64,4000,8192",
        ));
    }
    Ok(sizes)
}

/// `latscope net` (not --serve) as typed, checked.
pub struct NetRequest {
    pub sizes: Vec<usize>,
    pub interval_ns: u64,
    pub timeout_ns: u64,
    pub deadline_ns: u64,
    pub target: Option<SocketAddr>,
    pub reflector_cpu: Option<usize>,
    pub common: CommonRequest,
    pub output: OutputSettings,
}

/// Checks `latscope net`'s options as typed; reads nothing from the machine.
pub fn check_net(args: &NetArgs) -> Result<NetRequest, UserError> {
    if args.trace {
        return Err(UserError::Other(
            "--trace is not available for net (its split uses kernel receive timestamps already); it works with timer, wake and noise".into(),
        ));
    }
    let sizes = net_sizes(&args.size)?;
    let interval_ns = match (&args.interval, args.flood) {
        (_, true) => 0,
        (Some(i), false) => {
            duration_in_range("--interval", i, 1_000, MIN_PERIOD_NS, MAX_PERIOD_NS)?
        }
        (None, false) => 1_000_000,
    };
    let (default_timeout_ns, default_deadline_ns) = default_net_timing(interval_ns);
    let timeout_ns = match &args.timeout {
        Some(t) => duration_in_range("--timeout", t, 1_000_000, 100_000, 60_000_000_000)?,
        None => default_timeout_ns,
    };
    let deadline_ns = match &args.deadline {
        Some(d) => duration_in_range("--deadline", d, 1_000, 1, 60_000_000_000)?,
        None => default_deadline_ns,
    };
    let target = match &args.target {
        Some(t) => Some(socket_addr("--target", t)?),
        None => None,
    };
    Ok(NetRequest {
        sizes,
        interval_ns,
        timeout_ns,
        deadline_ns,
        target,
        reflector_cpu: args.reflector_cpu,
        common: check_common(&args.run.common)?,
        output: check_output(&args.run.output, &args.run.common.raw)?,
    })
}

/// The net probe's own axes and timing: one scenario per size.
#[derive(Debug, Clone)]
pub struct NetSweep {
    pub sizes: Vec<usize>,
    /// 0 = flood.
    pub interval_ns: u64,
    pub timeout_ns: u64,
    pub deadline_ns: u64,
    pub target: Option<SocketAddr>,
}

/// Timeout and deadline of a net run at `interval_ns` (0 = flood) when not given: 100 ms
/// or ten intervals; the interval, or 1 ms with flood.
pub fn default_net_timing(interval_ns: u64) -> (u64, u64) {
    let timeout_ns = (interval_ns * 10).max(100_000_000);
    let deadline_ns = if interval_ns > 0 {
        interval_ns
    } else {
        1_000_000
    };
    (timeout_ns, deadline_ns)
}

/// The scenarios of `sweep` on resolved shared options (`latscope net` and suites): the
/// sender on the first common CPU, the reflector on `reflector_cpu` or another online CPU
/// when there is one.
pub fn net_scenarios(
    sweep: &NetSweep,
    reflector_cpu: Option<usize>,
    common: &CommonPlan,
    machine: &Machine,
) -> Result<Vec<ScenarioPlan>, UserError> {
    let mut common = common.clone();
    common.settings.cpus.truncate(1);
    let sender_cpu = common.settings.cpus[0];
    let reflector_cpu = match reflector_cpu {
        Some(c) => machine.online_cpu(c)?,
        None => machine
            .online
            .iter()
            .copied()
            .find(|&c| c != sender_cpu)
            .unwrap_or(sender_cpu),
    };
    let probes = sweep
        .sizes
        .iter()
        .map(|&size| {
            Box::new(NetProbe {
                size,
                interval_ns: sweep.interval_ns,
                timeout_ns: sweep.timeout_ns,
                deadline_ns: sweep.deadline_ns,
                target: sweep.target,
                reflector_cpu,
            }) as Box<dyn Probe>
        })
        .collect();
    Ok(scenarios_of(probes, &common, &None))
}

/// Resolves a checked `latscope net` on this machine.
pub fn resolve_net(request: NetRequest, machine: &Machine) -> Result<Plan, UserError> {
    let sweep = NetSweep {
        sizes: request.sizes,
        interval_ns: request.interval_ns,
        timeout_ns: request.timeout_ns,
        deadline_ns: request.deadline_ns,
        target: request.target,
    };
    let reflector_cpu = request.reflector_cpu;
    command_plan(
        &request.common,
        &[machine.last_cpu()],
        None,
        request.output,
        machine,
        |common, _, _| net_scenarios(&sweep, reflector_cpu, common, machine),
    )
}

/// Builds the plan of `latscope net` (not --serve).
pub fn net_plan(args: &NetArgs) -> Result<Plan, UserError> {
    let request = check_net(args)?;
    resolve_net(request, &Machine::read())
}

/// What `latscope net --serve` runs: the reflector alone.
pub struct ServePlan {
    pub addr: SocketAddr,
    /// The reflector's CPU, policy and priority with --cpus; None: wherever it runs.
    pub placement: Option<ThreadPlacement>,
    /// `--duration`; None = until Ctrl-C.
    pub duration_ns: Option<u64>,
    pub warnings: Vec<Warning>,
}

/// Builds the plan of `latscope net --serve ADDR` (`addr` is that value).
pub fn serve_plan(args: &NetArgs, addr: &str) -> Result<ServePlan, UserError> {
    let addr = socket_addr("--serve", addr)?;
    let request = check_common(&args.run.common)?;
    let (placement, warnings) = match &request.cpus {
        Some(_) => {
            let common = resolve_common(&request, &[], &Machine::read())?;
            let settings = common.settings;
            let placement = settings.cpus.first().map(|&cpu| ThreadPlacement {
                cpu,
                policy: settings.policy,
                priority: settings.priority,
                timer_slack_ns: settings.timer_slack_ns,
            });
            (placement, common.warnings)
        }
        None => (None, Vec::new()),
    };
    Ok(ServePlan {
        addr,
        placement,
        duration_ns: request.duration_ns,
        warnings,
    })
}
