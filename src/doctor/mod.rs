//! `latscope doctor`: is this machine ready for real-time work? Reads every setting that
//! decides it (kernel, CPUs, memory, scheduling, clock and platform, permissions,
//! priorities, and a planned run's options), then measures what can be measured on the
//! spot (A/Bs through the timer and noise probes, knobs restored), and answers with a
//! verdict, a checklist and an exit code.

pub mod ab;
pub mod cpu_power;
pub mod cpus;
pub mod finding;
pub mod host_stops;
pub mod html;
pub mod inputs;
pub mod judge;
pub mod kernel;
pub mod kthreads;
pub mod markdown;
pub mod memory;
pub mod observe;
pub mod paired;
pub mod permissions;
pub mod platform;
pub mod priorities;
pub mod report;
pub mod saved;
pub mod scheduling;
pub mod setup;
pub mod timers;
pub mod try_fix;

use crate::cli::{DoctorArgs, TryFix};
use crate::error::{UserError, EXIT_INTERRUPTED};
use crate::sys::host_files::HostFiles;
use anyhow::Context;
use finding::{CheckId, Finding, Status};
pub use inputs::Inputs;
use report::{DoctorReport, Verdict};

/// Every read-only check, in the checklist's order.
pub fn read_checks(inputs: &Inputs) -> Vec<Finding> {
    let config = kernel::load_config(inputs);
    let mut findings = vec![
        kernel::preempt_rt(inputs, config.as_ref()),
        kernel::preempt_mode(inputs, config.as_ref()),
        kernel::debug_options(config.as_ref()),
        kernel::tracers(inputs),
        kernel::serial_console(inputs),
        timers::hrtimers(inputs, config.as_ref()),
        timers::nohz(inputs, config.as_ref()),
        timers::skew_tick(inputs),
        timers::watchdog(inputs),
        cpus::isolation(inputs, config.as_ref()),
        cpus::irq_affinity(inputs),
        cpus::irqbalance(inputs),
        cpus::workqueues(inputs),
        cpu_power::cstates(inputs),
        cpu_power::governor(inputs),
        cpu_power::energy_bias(inputs),
        cpu_power::smt(inputs),
        memory::thp(inputs),
        memory::numa_balancing(inputs),
        memory::ksm(inputs),
        memory::swappiness(inputs),
        memory::stat_interval(inputs),
        scheduling::timer_migration(inputs),
        scheduling::rt_throttling(inputs),
        scheduling::nmi_watchdog(inputs),
        platform::clocksource(inputs),
        platform::tsc_reliable(inputs, config.as_ref()),
        platform::hypervisor_check(inputs),
        platform::mitigations(inputs),
        permissions::rtprio(inputs),
        permissions::memlock(inputs),
        permissions::sched_fifo(inputs),
    ];
    findings.extend(priorities::all(inputs));
    findings
}

/// The read-only checks' verdict for `cpus` at `priority` (`latscope watch --readiness`):
/// `ready`, `warnings` or `not ready` (None: the CPUs are not online).
pub fn readiness_verdict(cpus: &str, priority: i32) -> Option<&'static str> {
    let inputs = Inputs::new(HostFiles::real(), Some(cpus), priority).ok()?;
    Some(match Verdict::of(&read_checks(&inputs)) {
        Verdict::Ready => "ready",
        Verdict::Warnings => "warnings",
        Verdict::NotReady => "not ready",
    })
}

fn status_of(findings: &[Finding], id: CheckId) -> Option<Status> {
    findings.iter().find(|f| f.id == id).map(|f| f.status)
}

/// `latscope doctor`: checks, A/Bs, the checklist and the exit code.
pub fn run(args: &DoctorArgs) -> anyhow::Result<i32> {
    let planned = setup::parse(&args.planned)?;
    let _locked = crate::output::exports::claim_paths(&[
        ("--export-json", &args.export_json),
        ("--export-html", &args.export_html),
    ])?;
    let files = match &args.root {
        Some(root) if !root.is_dir() => {
            return Err(UserError::InvalidValue {
                option: "--root".into(),
                value: root.display().to_string(),
                reason: "not a directory; give a tree laid out like / (tests/fixtures/doctor/*)"
                    .into(),
            }
            .into())
        }
        Some(root) => HostFiles::under(root),
        None => HostFiles::real(),
    };
    let cpus = args
        .cpus
        .clone()
        .or_else(|| planned.as_ref().and_then(|p| p.cpus.clone()));
    let inputs = Inputs::new(files, cpus.as_deref(), args.priority).map_err(|reason| {
        UserError::InvalidValue {
            option: "--cpus".into(),
            value: cpus.clone().unwrap_or_default(),
            reason: format!("{reason}; give online CPUs, e.g. --cpus 1"),
        }
    })?;
    let mut findings = read_checks(&inputs);
    if let Some(plan) = &planned {
        let fifo_ok = status_of(&findings, CheckId::PermSchedFifo) != Some(Status::Fail);
        let deep = setup::has_deep_states(&findings);
        findings.extend(setup::check(&inputs, plan, fifo_ok, deep));
    }
    let mut notes = Vec::new();
    let measured = measure(args, &inputs, &mut findings, &mut notes)?;
    let report = DoctorReport {
        schema: report::SCHEMA.into(),
        verdict: Verdict::of(&findings),
        counts: DoctorReport::counts_of(&findings),
        hostname: inputs
            .files
            .read_trim("/proc/sys/kernel/hostname")
            .unwrap_or_default(),
        kernel_release: inputs
            .files
            .read_trim("/proc/sys/kernel/osrelease")
            .unwrap_or_default(),
        cpus: inputs.cpus.clone(),
        cpus_why: inputs.cpus_why.clone(),
        priority: inputs.priority,
        measured: measured.is_some(),
        planned_run: planned.map(|p| p.text),
        notes,
        findings,
    };
    output(args, &report)?;
    Ok(match measured {
        Some(true) => EXIT_INTERRUPTED,
        _ => report.verdict.exit_code(),
    })
}

fn output(args: &DoctorArgs, report: &DoctorReport) -> anyhow::Result<()> {
    if let Some(path) = &args.export_html {
        crate::output::exports::write_bytes(path, &html::render(report))?;
    }
    if let Some(path) = &args.export_json {
        let bytes = report.json()?;
        if path.as_os_str() == "-" {
            crate::output::pipe::write_stdout(&bytes).context("writing to stdout")?;
            return Ok(());
        }
        crate::output::exports::write_bytes(path, &bytes)?;
    }
    crate::output::pipe::write_stdout(
        report
            .terminal(args.verbose, report::checklist_width())
            .as_bytes(),
    )
    .context("writing to stdout")
}

/// Why nothing is measured here, or `None` when the A/Bs can run.
fn not_measuring(args: &DoctorArgs, inputs: &Inputs) -> Option<String> {
    if args.quick {
        return Some("--quick: read only, nothing measured".into());
    }
    if !inputs.files.is_real() {
        return Some("--root: a fixture tree, nothing measured".into());
    }
    if crate::sys::process::effective_uid() != 0 {
        return Some("not root: nothing measured (the A/Bs hold /dev/cpu_dma_latency, spin at SCHED_FIFO and move IRQs); run with sudo to measure".into());
    }
    None
}

/// The time the two observation windows take (3.2 s and 3 s spinning, the trace's
/// start and analysis), in the time said up front.
const WINDOWS_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

/// `1 min 56 s`, `48 s`.
fn duration_text(d: std::time::Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match (s / 60, s % 60) {
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}

/// What the measurement will take at most, said before it starts (stderr) and kept in
/// the notes beside what it took.
fn time_said_up_front(abs: usize, max_pairs: u32) -> (std::time::Duration, String) {
    let most = ab::PAIR_BUDGET * (abs as u32 * max_pairs) + WINDOWS_BUDGET;
    let stops = if max_pairs < paired::FIRST_LOOK {
        format!("fewer than {} cannot decide", paired::FIRST_LOOK)
    } else {
        "each stops once its sign test decides or can no longer".into()
    };
    let text = format!(
        "{abs} A/B{} of up to {max_pairs} pair{} (5 s a pair; {stops}) and two 3 s observation windows: at most {}",
        if abs == 1 { "" } else { "s" },
        if max_pairs == 1 { "" } else { "s" },
        duration_text(most)
    );
    (most, text)
}

/// The settings every measurement shares: the first judged CPU, FIFO at the priority
/// when granted, the pairs' cap, the Ctrl-C flag.
fn ab_settings(args: &DoctorArgs, inputs: &Inputs, fifo: bool) -> anyhow::Result<ab::AbSettings> {
    Ok(ab::AbSettings {
        cpu: inputs.cpus[0],
        policy_args: if fifo {
            vec![
                "--policy".into(),
                "fifo".into(),
                "--priority".into(),
                inputs.priority.to_string(),
            ]
        } else {
            vec!["--policy".into(), "other".into()]
        },
        max_pairs: args.pairs,
        stop: crate::interrupt::install().context("installing the Ctrl-C handler")?,
    })
}

/// The A/Bs and the observation windows, then what they measured applied to the
/// findings (judge.rs). `None`: nothing measured (the reason in `notes`);
/// `Some(interrupted)` otherwise.
fn measure(
    args: &DoctorArgs,
    inputs: &Inputs,
    findings: &mut [Finding],
    notes: &mut Vec<String>,
) -> anyhow::Result<Option<bool>> {
    if let Some(why) = not_measuring(args, inputs) {
        notes.push(why);
        return Ok(None);
    }
    let fifo = status_of(findings, CheckId::PermSchedFifo) == Some(Status::Pass);
    let settings = ab_settings(args, inputs, fifo)?;
    let abs = planned_abs(args, inputs, findings, notes);
    let (_, said) = time_said_up_front(abs.len(), args.pairs);
    eprintln!("latscope doctor: measuring {said}; Ctrl-C stops, restores and reports");
    let started = std::time::Instant::now();
    let runs_per_ab = u64::from(args.pairs) * 2;
    let bar = progress_bar(abs.len() as u64 * runs_per_ab + 2);
    let tick = |what: &str| {
        bar.set_message(what.to_string());
        bar.inc(1);
    };
    for (i, one) in abs.iter().enumerate() {
        match ab::run_ab(one, &settings, &tick) {
            Ok(m) => ab::attach(findings, one.finding, m),
            Err(e) => notes.push(format!("A/B '{}' failed: {e:#}", one.label)),
        }
        bar.set_position((i as u64 + 1) * runs_per_ab);
    }
    windows(inputs, findings, notes, &settings, fifo, &tick);
    bar.finish_and_clear();
    let tried: Vec<(CheckId, String)> = abs.iter().map(|a| (a.finding, a.fix.clone())).collect();
    judge::apply(findings, &tried);
    notes.push(format!(
        "measured in {} ({said}, said up front)",
        duration_text(started.elapsed())
    ));
    let interrupted = settings.stop.load(std::sync::atomic::Ordering::Relaxed);
    if interrupted {
        notes.push("interrupted: the measurements stopped early (every knob restored)".into());
    }
    Ok(Some(interrupted))
}

/// The observation window (interrupts, ticks, kernel threads, the throttle's stops) and
/// the traced window (the host's stops), unless Ctrl-C came first.
fn windows(
    inputs: &Inputs,
    findings: &mut [Finding],
    notes: &mut Vec<String>,
    settings: &ab::AbSettings,
    fifo: bool,
    tick: &dyn Fn(&str),
) {
    let stopped = || settings.stop.load(std::sync::atomic::Ordering::Relaxed);
    let throttled = status_of(findings, CheckId::SchedRtThrottling) == Some(Status::Warn);
    let throttle_ns = scheduling::throttle_stop_ns(inputs).filter(|_| throttled && fifo);
    if !stopped() {
        tick(if throttle_ns.is_some() {
            "RT throttling and interrupts (FIFO spin)"
        } else {
            "interrupts on the CPU (spin)"
        });
        let nohz = inputs.cpu_list("/sys/devices/system/cpu/nohz_full");
        match observe::window(settings, 3, throttle_ns, nohz.contains(&settings.cpu)) {
            Ok(o) => {
                ab::attach(findings, CheckId::CpusIsolation, o.isolation);
                ab::attach(findings, CheckId::CpusIsolation, o.kthreads);
                if let Some(t) = o.throttling {
                    ab::attach(findings, CheckId::SchedRtThrottling, t);
                }
            }
            Err(e) => notes.push(format!("observation window failed: {e:#}")),
        }
    }
    if !stopped() {
        tick("stops the guest cannot explain (noise with --trace)");
        // SCHED_OTHER: a throttled FIFO spin leaves the CPU idle, and a kernel that records
        // no switch to idle (6.18) makes the throttle's stop a silent stretch: the host's.
        match host_stops::window(settings, 3, false) {
            Ok((m, evidence)) => attach_with_evidence(findings, m, evidence),
            Err(e) => notes.push(format!("traced noise window failed: {e:#}")),
        }
    }
}

/// The host's stops on `platform.hypervisor`, their worst gaps in its evidence.
fn attach_with_evidence(findings: &mut [Finding], m: finding::Measured, evidence: Vec<String>) {
    if let Some(f) = findings
        .iter_mut()
        .find(|f| f.id == CheckId::PlatformHypervisor)
    {
        f.evidence.extend(evidence);
    }
    ab::attach(findings, CheckId::PlatformHypervisor, m);
}

/// Why an isolated CPU measures worse on a VM, said on the `--try isolate` line.
const ISOLATED_VCPU_HALTS: &str = "on a VM an isolated vCPU sits idle between wake-ups and halts to the host, so each wake-up first waits for the host to run the vCPU again";

/// The fix a finding names (the A/B's `fix` when it measured better).
fn fix_of(findings: &[Finding], id: CheckId, otherwise: &str) -> String {
    findings
        .iter()
        .find(|f| f.id == id)
        .and_then(|f| f.fix.clone())
        .unwrap_or_else(|| otherwise.to_string())
}

/// The A/Bs to run: cpu_dma_latency always (when the device exists), the SMT sibling
/// loaded vs idle when a measured CPU has one, and each `--try`.
fn planned_abs(
    args: &DoctorArgs,
    inputs: &Inputs,
    findings: &[Finding],
    notes: &mut Vec<String>,
) -> Vec<ab::Ab> {
    let mut abs = Vec::new();
    if inputs.files.exists("/dev/cpu_dma_latency") {
        let mut dma = ab::Ab::of_fix(
            CheckId::CpusCstates,
            "cpu_dma_latency 0".into(),
            cpu_power::HOLD_DMA_LATENCY.into(),
        );
        dma.a = vec!["--dma-latency".into(), "0".into()];
        dma.knob = ab::dma_knob;
        abs.push(dma);
    }
    if let Some((_, siblings)) = cpu_power::foreign_siblings(inputs).first() {
        let sibling = siblings[0];
        let mut smt = ab::Ab::of_fix(
            CheckId::CpusSmt,
            format!("SMT sibling {sibling} loaded"),
            fix_of(
                findings,
                CheckId::CpusSmt,
                "keep the SMT siblings of the RT CPUs idle (nosmt at boot)",
            ),
        );
        smt.a = vec!["--load".into(), format!("cpu:100%,cpus={sibling}")];
        smt.a_is_fix = false;
        abs.push(smt);
    }
    let hypervisor = status_of(findings, CheckId::PlatformHypervisor) == Some(Status::Warn);
    for fix in &args.try_fix {
        match fix {
            TryFix::DmaLatency => {} // measured anyway
            TryFix::Isolate => {
                let cpu = inputs.cpus[0];
                let fix = fix_of(findings, CheckId::CpusIsolation, "");
                let mut iso =
                    ab::Ab::of_fix(CheckId::CpusIsolation, format!("--isolate {cpu}"), fix);
                iso.a = vec!["--isolate".into(), cpu.to_string()];
                iso.knob = ab::irq_knob;
                iso.why_worse = hypervisor.then(|| ISOLATED_VCPU_HALTS.to_string());
                abs.push(iso);
            }
            _ => match try_fix::tunable(*fix, inputs) {
                Some(Ok(t)) => {
                    let fix = fix_of(findings, t.finding, "");
                    let mut one = ab::Ab::of_fix(t.finding, t.label, fix);
                    one.changes = t.changes;
                    abs.push(one);
                }
                Some(Err(why)) => notes.push(format!("--try {}: {why}", fix_name(*fix))),
                None => {}
            },
        }
    }
    abs
}

/// A fix as typed after `--try`.
fn fix_name(fix: TryFix) -> String {
    clap::ValueEnum::to_possible_value(&fix)
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

fn progress_bar(total: u64) -> indicatif::ProgressBar {
    if !crate::progress::stderr_redraws_in_place() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "measuring [{bar:30}] {pos}/{len} runs, {eta} left: {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar
}

#[cfg(test)]
mod fixture_tests;

#[cfg(test)]
mod fixture_tests_arm64;

#[cfg(test)]
mod timing_tests {
    /// The issue: the timing was said three ways. The one said everywhere (README,
    /// docs/doctor.md, `--help`: 2 min, 1 min 50 s more for each `--try`) is the one
    /// computed before the measurement starts.
    #[test]
    fn the_time_said_up_front_is_the_one_documented() {
        use clap::CommandFactory;
        let said = |abs| super::time_said_up_front(abs, 20).1;
        assert!(said(1).ends_with(": at most 2 min"), "{}", said(1));
        assert!(said(2).ends_with(": at most 3 min 50 s"), "{}", said(2));
        assert!(said(3).ends_with(": at most 5 min 40 s"), "{}", said(3));
        let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut cli = crate::cli::Cli::command();
        let help = cli.find_subcommand_mut("doctor").unwrap().render_help();
        let root = env!("CARGO_MANIFEST_DIR");
        let read = |p: &str| std::fs::read_to_string(format!("{root}/{p}")).unwrap();
        for (name, text) in [
            ("--help", help.to_string()),
            ("README.md", read("README.md")),
            ("docs/doctor.md", read("docs/doctor.md")),
        ] {
            let text = flat(&text);
            assert!(
                text.contains("for one to two minutes")
                    && text.contains("2 min")
                    && text.contains("1 min 50 s more for each"),
                "{name}"
            );
            for other in ["half a minute", "about a minute"] {
                assert!(!text.contains(other), "{name} says {other}");
            }
        }
    }
}
