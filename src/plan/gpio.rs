//! The plan of `latscope gpio`: lines, mode, period, edge and knobs checked as typed
//! (`check_gpio`), then resolved on this machine (`resolve_gpio`): the lines found on its
//! chips (a machine without /dev/gpiochip* is refused with exit code 8), gpio-sim's pull
//! file for `--drive sim`, one measuring CPU (the last online one by default).

use super::common::{
    check_common, check_output, check_trace, command_plan, duration_in_range, invalid,
    out_of_range, scenarios_of, CommonRequest, Machine,
};
use super::{OutputSettings, Plan, TraceSettings};
use crate::cli::GpioArgs;
use crate::error::UserError;
use crate::probe::gpio::lines::{self, LineSpec};
use crate::probe::gpio::{Bias, DriveKind, Edge, EventClock, GpioProbe, Mode};
use crate::probe::Probe;

/// `latscope gpio` as typed, checked.
pub struct GpioRequest {
    pub probe: GpioTyped,
    pub common: CommonRequest,
    pub trace: Option<TraceSettings>,
    pub output: OutputSettings,
}

/// The probe's own options, checked; the lines not yet found.
#[derive(Debug, Clone)]
pub struct GpioTyped {
    pub mode: Mode,
    pub drive: DriveKind,
    pub input: LineSpec,
    pub output: Option<LineSpec>,
    pub period_ns: u64,
    pub edge: Edge,
    pub bias: Bias,
    pub debounce_us: u32,
    pub event_buffer: u32,
    pub irq_priority: Option<i32>,
    pub event_clock: EventClock,
    pub deadline_ns: u64,
}

fn line(option: &str, text: &str) -> Result<LineSpec, UserError> {
    LineSpec::parse(text).map_err(|reason| invalid(option, text, reason))
}

/// Checks the probe's options as typed (also for the suite's gpio blocks).
pub fn check_gpio_probe(args: &GpioArgs) -> Result<GpioTyped, UserError> {
    let input = match &args.input {
        Some(t) => line("--in", t)?,
        None => {
            return Err(UserError::Other(
                "latscope gpio needs --in LINE (CHIP:LINE such as gpiochip0:17, or a line name such as GPIO17); latscope gpio --list shows the lines".into(),
            ))
        }
    };
    let output = args
        .output
        .as_deref()
        .map(|t| line("--out", t))
        .transpose()?;
    let mode = args
        .mode
        .unwrap_or(if output.is_some() || args.drive == DriveKind::Sim {
            Mode::Loopback
        } else {
            Mode::Respond
        });
    if mode == Mode::Loopback && args.drive == DriveKind::Wire && output.is_none() {
        return Err(invalid("--mode", "loopback", "loopback drives an output wired to --in: give --out LINE, or --drive sim for a gpio-sim input"));
    }
    if mode == Mode::Respond && args.drive == DriveKind::Sim {
        return Err(invalid("--drive", "sim", "respond mode answers edges from outside; --drive sim belongs to loopback (--mode loopback)"));
    }
    let period_ns = duration_in_range("--period", &args.period, 1_000, 10_000, 10_000_000_000)?;
    let debounce_us = match &args.debounce {
        Some(t) => {
            (duration_in_range("--debounce", t, 1_000, 1_000, 1_000_000_000)? / 1_000) as u32
        }
        None => 0,
    };
    let event_buffer = match args.event_buffer {
        Some(n) if !(1..=4096).contains(&n) => {
            return Err(out_of_range(
                "--event-buffer",
                &n.to_string(),
                "1 to 4096 events",
            ))
        }
        Some(n) => n,
        None => 0,
    };
    if let Some(p) = args.irq_priority {
        if !(1..=99).contains(&p) {
            return Err(out_of_range(
                "--irq-priority",
                &p.to_string(),
                "1 to 99 (SCHED_FIFO)",
            ));
        }
    }
    Ok(GpioTyped {
        mode,
        drive: args.drive,
        input,
        output,
        period_ns,
        edge: args.edge,
        bias: args.bias,
        debounce_us,
        event_buffer,
        irq_priority: args.irq_priority,
        event_clock: args.event_clock,
        deadline_ns: duration_in_range("--deadline", &args.deadline, 1_000, 1, 60_000_000_000)?,
    })
}

/// Checks `latscope gpio`'s options as typed; reads nothing from the machine.
pub fn check_gpio(args: &GpioArgs) -> Result<GpioRequest, UserError> {
    Ok(GpioRequest {
        probe: check_gpio_probe(args)?,
        common: check_common(&args.run.common)?,
        trace: check_trace(&args.trace)?,
        output: check_output(&args.run.output, &args.run.common.raw)?,
    })
}

/// The lines of a checked request found on this machine.
pub fn resolve_gpio_probe(typed: &GpioTyped) -> Result<GpioProbe, UserError> {
    if crate::sys::gpio::chip_paths().is_empty() {
        return Err(UserError::Unsupported(lines::no_gpio_message()));
    }
    let find = |option: &str, spec: &LineSpec| {
        lines::resolve(spec).map_err(|reason| invalid(option, &spec_text(spec), reason))
    };
    let input = find("--in", &typed.input)?;
    let output = typed
        .output
        .as_ref()
        .map(|s| find("--out", s))
        .transpose()?;
    if output.as_ref() == Some(&input) {
        return Err(invalid(
            "--out",
            &input.label(),
            "--out is the --in line; give another line (wired to --in in loopback)",
        ));
    }
    let sim_pull = match (typed.mode, typed.drive) {
        (Mode::Loopback, DriveKind::Sim) => {
            Some(lines::sim_pull_file(&input).map_err(|reason| invalid("--drive", "sim", reason))?)
        }
        _ => None,
    };
    Ok(GpioProbe {
        mode: typed.mode,
        drive: typed.drive,
        input,
        output,
        sim_pull,
        period_ns: typed.period_ns,
        edge: typed.edge,
        bias: typed.bias,
        debounce_us: typed.debounce_us,
        event_buffer: typed.event_buffer,
        irq_priority: typed.irq_priority,
        event_clock: typed.event_clock,
        deadline_ns: typed.deadline_ns,
    })
}

fn spec_text(spec: &LineSpec) -> String {
    match spec {
        LineSpec::OnChip { chip, line } => format!("{chip}:{line}"),
        LineSpec::Named(n) => n.clone(),
    }
}

/// Resolves a checked `latscope gpio` on this machine.
pub fn resolve_gpio(request: GpioRequest, machine: &Machine) -> Result<Plan, UserError> {
    let probe = resolve_gpio_probe(&request.probe)?;
    command_plan(
        &request.common,
        &[machine.last_cpu()],
        request.trace,
        request.output,
        machine,
        |common, trace, _| {
            if common.settings.cpus.len() != 1 {
                return Err(invalid(
                    "--cpus",
                    &crate::units::format_cpu_list(&common.settings.cpus),
                    "latscope gpio measures with one thread: give one CPU",
                ));
            }
            Ok(scenarios_of(
                vec![Box::new(probe) as Box<dyn Probe>],
                common,
                trace,
            ))
        },
    )
}

/// Builds the plan of `latscope gpio`.
pub fn gpio_plan(args: &GpioArgs) -> Result<Plan, UserError> {
    let request = check_gpio(args)?;
    resolve_gpio(request, &Machine::read())
}
