//! `latscope gpio`: how fast Linux answers a signal from outside, through the GPIO
//! character device (uAPI v2). Loopback drives an output wired to an input (or the input
//! itself through gpio-sim, `--drive sim`) and splits each edge into drive→irq (the
//! event's hard-IRQ stamp), irq→user and total; respond answers every input edge on an
//! output for an oscilloscope and reports irq→user and user→output. Lost edges are
//! counted exactly from the events' seqno; the line's IRQ thread is found and shown.

pub mod irq_thread;
pub mod lines;
pub mod loops;

use super::harness::{run_measuring_threads_with_tids, ThreadPlacement};
use super::{CommonSettings, Probe, ProbeContext, ProbeOutput};
use crate::isolate::irq_priority::IrqPriorityGuard;
use crate::result::{GpioIrqThread, ParamsExtra, ProbeKind, ThreadExtra};
use crate::stats::{LiveStats, Recorder, RecorderConfig};
use crate::sys::clock;
use crate::sys::gpio::{flag, Chip, LineRequest, RequestSpec};
use crate::warning::{Warning, WarningCode};
use anyhow::Context;
use lines::Line;
use loops::{Bounds, EdgeCounts, LoopbackRecorders, RespondRecorders, Toggle};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What the probe does with the lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Drive the input (a wire from --out, or gpio-sim) and time each edge.
    Loopback,
    /// Answer each edge from an outside source on --out (for an oscilloscope).
    Respond,
}

/// How loopback drives the input line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DriveKind {
    /// Set --out, wired to --in with a jumper.
    Wire,
    /// Write the input's gpio-sim `pull` file (the kernel's GPIO simulator; simulated).
    Sim,
}

/// Which edges raise events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Edge {
    Rising,
    Falling,
    Both,
}

/// The input line's bias.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Bias {
    /// Leave it as the board has it.
    AsIs,
    Disabled,
    PullUp,
    PullDown,
}

/// Which clock stamps the events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EventClock {
    /// CLOCK_MONOTONIC read in the hard-IRQ handler (the kernel's default).
    Monotonic,
    /// The hardware timestamp engine (Tegra's HTE), where the kernel has one.
    Hte,
}

/// The gpio probe, resolved on this machine.
#[derive(Debug, Clone)]
pub struct GpioProbe {
    pub mode: Mode,
    pub drive: DriveKind,
    pub input: Line,
    pub output: Option<Line>,
    /// gpio-sim's `pull` file of the input (`--drive sim`).
    pub sim_pull: Option<PathBuf>,
    pub period_ns: u64,
    pub edge: Edge,
    pub bias: Bias,
    pub debounce_us: u32,
    /// Kernel event buffer in events (0: the kernel's default, 16 per line).
    pub event_buffer: u32,
    pub irq_priority: Option<i32>,
    pub event_clock: EventClock,
    pub deadline_ns: u64,
}

/// The measuring thread's lines, moved into it.
enum Lines {
    Loopback {
        input: LineRequest,
        drive: DriveLine,
    },
    Respond {
        input: LineRequest,
        output: Option<LineRequest>,
    },
}

enum DriveLine {
    Wire(loops::WireDrive),
    Sim(loops::SimDrive),
}

/// What the measuring thread hands back.
struct Outcome {
    recorders: Vec<(crate::result::Metric, Recorder)>,
    counts: EdgeCounts,
    started_ns: u64,
    ended_ns: u64,
}

impl GpioProbe {
    fn consumer() -> String {
        format!("latscope-{}", std::process::id())
    }

    fn input_flags(&self) -> u64 {
        let mut f = flag::INPUT;
        if matches!(self.edge, Edge::Rising | Edge::Both) {
            f |= flag::EDGE_RISING;
        }
        if matches!(self.edge, Edge::Falling | Edge::Both) {
            f |= flag::EDGE_FALLING;
        }
        f | match self.bias {
            Bias::AsIs => 0,
            Bias::Disabled => flag::BIAS_DISABLED,
            Bias::PullUp => flag::BIAS_PULL_UP,
            Bias::PullDown => flag::BIAS_PULL_DOWN,
        } | match self.event_clock {
            EventClock::Monotonic => 0,
            EventClock::Hte => flag::EVENT_CLOCK_HTE,
        }
    }

    /// Requests the lines; for `--drive sim` the input is pulled low first.
    fn request_lines(&self) -> anyhow::Result<Lines> {
        let consumer = Self::consumer();
        let request_output = |line: &Line| -> anyhow::Result<LineRequest> {
            Chip::open(&line.chip)
                .and_then(|c| {
                    c.request(&RequestSpec {
                        offset: line.offset,
                        consumer: consumer.clone(),
                        flags: flag::OUTPUT,
                        initial: false,
                        event_buffer: 0,
                        debounce_us: 0,
                    })
                })
                .with_context(|| format!("requesting {} as an output", line.label()))
        };
        let mut sim = None;
        if let Some(pull) = &self.sim_pull {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(pull)
                .with_context(|| format!("opening {}", pull.display()))?;
            let mut d = loops::SimDrive(file);
            loops::Drive::drive(&mut d, false)
                .with_context(|| format!("writing {}", pull.display()))?;
            sim = Some(d);
        }
        let output = self.output.as_ref().map(request_output).transpose()?;
        let input = self.request_input(&consumer)?;
        Ok(match (self.mode, sim, output) {
            (Mode::Loopback, Some(d), _) => Lines::Loopback {
                input,
                drive: DriveLine::Sim(d),
            },
            (Mode::Loopback, None, Some(o)) => Lines::Loopback {
                input,
                drive: DriveLine::Wire(loops::WireDrive(o)),
            },
            (Mode::Loopback, None, None) => anyhow::bail!("loopback needs --out or --drive sim"),
            (Mode::Respond, _, output) => Lines::Respond { input, output },
        })
    }

    fn request_input(&self, consumer: &str) -> anyhow::Result<LineRequest> {
        let chip = Chip::open(&self.input.chip)
            .with_context(|| format!("opening {}", self.input.chip.display()))?;
        chip.request(&RequestSpec {
            offset: self.input.offset,
            consumer: consumer.to_string(),
            flags: self.input_flags(),
            initial: false,
            event_buffer: self.event_buffer,
            debounce_us: self.debounce_us,
        })
        .map_err(|e| match (self.event_clock, e.raw_os_error()) {
            (EventClock::Hte, Some(95)) => crate::error::UserError::Unsupported(format!(
                "--event-clock hte: the kernel has no hardware timestamp engine for {} (EOPNOTSUPP); HTE exists on Tegra194/234 with CONFIG_HTE; use --event-clock monotonic",
                self.input.label()
            ))
            .into(),
            _ => anyhow::Error::new(e).context(format!(
                "requesting {} for edge events (is it free? latscope gpio --list)",
                self.input.label()
            )),
        })
    }

    fn recorder_config(&self, settings: &CommonSettings) -> RecorderConfig {
        RecorderConfig {
            deadline_ns: self.deadline_ns,
            series_seconds: settings.series_seconds(self.period_ns),
            raw_capacity: settings.raw_capacity(self.period_ns),
        }
    }

    fn bounds(&self, until_ns: u64, max_samples: u64) -> Bounds {
        let timeout_ms = match self.mode {
            Mode::Loopback => (self.period_ns.saturating_mul(20) / 1_000_000).clamp(100, 10_000),
            Mode::Respond => 100,
        };
        Bounds {
            until_ns,
            max_samples,
            timeout_ms: timeout_ms as i32,
        }
    }

    fn toggle(&self) -> Toggle {
        Toggle {
            rising: matches!(self.edge, Edge::Rising | Edge::Both),
            falling: matches!(self.edge, Edge::Falling | Edge::Both),
        }
    }
}

/// Runs the measuring thread: a warm-up into throw-away recorders, then the measured phase.
fn measure(
    probe: &GpioProbe,
    lines: &mut Lines,
    config: &RecorderConfig,
    live: Arc<LiveStats>,
    settings: &CommonSettings,
    start_ns: u64,
    stop: &AtomicBool,
) -> Outcome {
    clock::sleep_until_ns(start_ns);
    let warm_end = start_ns + settings.warmup_ns;
    match lines {
        Lines::Loopback {
            input,
            drive: DriveLine::Wire(d),
        } => loopback(probe, d, input, config, live, settings, start_ns, stop),
        Lines::Loopback {
            input,
            drive: DriveLine::Sim(d),
        } => loopback(probe, d, input, config, live, settings, start_ns, stop),
        Lines::Respond { input, output } => respond(
            probe,
            input,
            output.as_ref(),
            config,
            live,
            settings,
            warm_end,
            stop,
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn loopback<D: loops::Drive>(
    probe: &GpioProbe,
    drive: &mut D,
    input: &LineRequest,
    config: &RecorderConfig,
    live: Arc<LiveStats>,
    settings: &CommonSettings,
    start_ns: u64,
    stop: &AtomicBool,
) -> Outcome {
    let (toggle, period) = (probe.toggle(), probe.period_ns);
    let mut level = false;
    let mut counts = EdgeCounts::default();
    let mut warm = LoopbackRecorders {
        drive_to_irq: Recorder::scratch(config, Arc::default()),
        irq_to_user: Recorder::scratch(config, Arc::default()),
        total: Recorder::scratch(config, Arc::default()),
    };
    let warm_bounds = probe.bounds(start_ns + settings.warmup_ns, u64::MAX);
    let next = loops::loopback_phase(
        drive,
        input,
        &mut warm,
        &mut counts,
        toggle,
        &mut level,
        period,
        start_ns,
        warm_bounds,
        stop,
    );
    counts = EdgeCounts {
        last_seqno: counts.last_seqno,
        warmup_events: counts.events,
        ..Default::default()
    };
    let mut recs = LoopbackRecorders {
        drive_to_irq: Recorder::standalone(config),
        irq_to_user: Recorder::standalone(config),
        total: Recorder::new(config, live),
    };
    let started = clock::monotonic_ns();
    recs.drive_to_irq.restart(started);
    recs.irq_to_user.restart(started);
    recs.total.restart(started);
    let until = settings
        .duration_ns
        .map_or(u64::MAX, |d| started.saturating_add(d));
    let bounds = probe.bounds(until, settings.samples.unwrap_or(u64::MAX));
    loops::loopback_phase(
        drive,
        input,
        &mut recs,
        &mut counts,
        toggle,
        &mut level,
        period,
        next,
        bounds,
        stop,
    );
    Outcome {
        recorders: vec![
            (crate::result::Metric::DriveToIrq, recs.drive_to_irq),
            (crate::result::Metric::IrqToUser, recs.irq_to_user),
            (crate::result::Metric::Total, recs.total),
        ],
        counts,
        started_ns: started,
        ended_ns: clock::monotonic_ns(),
    }
}

#[allow(clippy::too_many_arguments)]
fn respond(
    probe: &GpioProbe,
    input: &LineRequest,
    output: Option<&LineRequest>,
    config: &RecorderConfig,
    live: Arc<LiveStats>,
    settings: &CommonSettings,
    warm_end: u64,
    stop: &AtomicBool,
) -> Outcome {
    let follow = probe.edge == Edge::Both;
    let mut counts = EdgeCounts::default();
    let mut warm = RespondRecorders {
        irq_to_user: Recorder::scratch(config, Arc::default()),
        user_to_output: Recorder::scratch(config, Arc::default()),
    };
    loops::respond_phase(
        input,
        output,
        follow,
        &mut warm,
        &mut counts,
        probe.bounds(warm_end, u64::MAX),
        stop,
    );
    counts = EdgeCounts {
        last_seqno: counts.last_seqno,
        warmup_events: counts.events,
        ..Default::default()
    };
    let mut recs = RespondRecorders {
        irq_to_user: Recorder::new(config, live),
        user_to_output: Recorder::standalone(config),
    };
    let started = clock::monotonic_ns();
    recs.irq_to_user.restart(started);
    recs.user_to_output.restart(started);
    let until = settings
        .duration_ns
        .map_or(u64::MAX, |d| started.saturating_add(d));
    let max = settings.samples.unwrap_or(u64::MAX);
    loops::respond_phase(
        input,
        output,
        follow,
        &mut recs,
        &mut counts,
        probe.bounds(until, max),
        stop,
    );
    let mut recorders = vec![(crate::result::Metric::IrqToUser, recs.irq_to_user)];
    if output.is_some() {
        recorders.push((crate::result::Metric::UserToOutput, recs.user_to_output));
    }
    Outcome {
        recorders,
        counts,
        started_ns: started,
        ended_ns: clock::monotonic_ns(),
    }
}

impl Probe for GpioProbe {
    fn kind(&self) -> ProbeKind {
        ProbeKind::Gpio
    }
    fn method(&self) -> String {
        match (self.mode, self.drive) {
            (Mode::Loopback, DriveKind::Sim) => "loopback-simulated".into(),
            (Mode::Loopback, DriveKind::Wire) => "loopback".into(),
            (Mode::Respond, _) => "respond".into(),
        }
    }
    fn period_ns(&self) -> u64 {
        match self.mode {
            Mode::Loopback => self.period_ns,
            Mode::Respond => 0,
        }
    }
    fn deadline_ns(&self) -> u64 {
        self.deadline_ns
    }
    fn extra_params(&self) -> ParamsExtra {
        ParamsExtra {
            edge: Some(format!("{:?}", self.edge).to_lowercase()),
            event_buffer: Some(self.event_buffer.into()),
            gpio_in: Some(self.input.label()),
            gpio_out: self.output.as_ref().map(|o| o.label()),
            mode: Some(format!("{:?}", self.mode).to_lowercase()),
            simulated: Some(self.drive == DriveKind::Sim),
            ..ParamsExtra::default()
        }
    }

    fn run(&self, settings: &CommonSettings, ctx: &ProbeContext) -> anyhow::Result<ProbeOutput> {
        let lines = self.request_lines()?;
        let irq = irq_thread::find(&GpioProbe::consumer());
        let mut guard = match (self.irq_priority, &irq) {
            (Some(p), Some(t)) => Some(IrqPriorityGuard::set(t.tid, p)?),
            (Some(_), None) => anyhow::bail!(
                "--irq-priority: the IRQ thread of {} was not found in /proc/interrupts",
                self.input.label()
            ),
            _ => None,
        };
        let irq_during = irq
            .as_ref()
            .and_then(|t| irq_thread::describe(t.irq, t.tid));
        let cpu = settings.cpus.first().copied().unwrap_or(0);
        // The lines come back held until the IRQ thread's priority is restored:
        // releasing the line ends its IRQ thread.
        let (outcome, held) = self.measure_on(cpu, lines, settings, ctx);
        let restored = guard.as_mut().and_then(|g| g.restore());
        let original = guard.as_ref().map(|g| g.original());
        drop(guard);
        drop(held);
        let (mut outcomes, tids) = outcome?;
        let o = outcomes.pop().context("no measuring thread")?;
        self.check_wired(&o.counts)?;
        let mut out = ProbeOutput {
            interrupted: ctx.stop.load(Ordering::Relaxed),
            elapsed_ns: o.ended_ns.saturating_sub(o.started_ns),
            window_ns: [o.started_ns, o.ended_ns],
            ..Default::default()
        };
        out.tids.push(super::MeasuringThread {
            cpu,
            tid: tids.first().copied().unwrap_or(0),
            role: "gpio".into(),
        });
        let irq_info = IrqReport {
            during: irq_during,
            original,
            restored,
        };
        self.finish(o, cpu, settings, &irq_info, &mut out);
        Ok(out)
    }
}

impl GpioProbe {
    /// Runs the measuring thread on `cpu` with `lines`; its outcome and the lines, kept.
    #[allow(clippy::type_complexity)]
    fn measure_on(
        &self,
        cpu: usize,
        lines: Lines,
        settings: &CommonSettings,
        ctx: &ProbeContext,
    ) -> (anyhow::Result<(Vec<Outcome>, Vec<i32>)>, Option<Lines>) {
        let placement = ThreadPlacement {
            cpu,
            policy: settings.policy,
            priority: settings.priority,
            timer_slack_ns: settings.timer_slack_ns,
        };
        let config = self.recorder_config(settings);
        let live: Arc<LiveStats> = Arc::default();
        let one_cpu = CommonSettings {
            cpus: vec![cpu],
            ..settings.clone()
        };
        let progress = super::start_progress(ctx, &one_cpu, std::slice::from_ref(&live));
        let slot = Mutex::new(Some(lines));
        let held: Mutex<Option<Lines>> = Mutex::new(None);
        let stop = &*ctx.stop;
        let outcome = run_measuring_threads_with_tids(
            &[placement],
            |_| {
                slot.lock()
                    .map_err(|_| anyhow::anyhow!("lines lost"))?
                    .take()
                    .context("lines taken twice")
            },
            |_, mut lines, start_ns| {
                let o = measure(
                    self,
                    &mut lines,
                    &config,
                    live.clone(),
                    settings,
                    start_ns,
                    stop,
                );
                if let Ok(mut held) = held.lock() {
                    *held = Some(lines);
                }
                o
            },
        );
        progress.finish();
        (outcome, held.into_inner().ok().flatten())
    }

    /// Loopback with no event at all after the first drives: no wire (or the wrong line).
    fn check_wired(&self, counts: &EdgeCounts) -> anyhow::Result<()> {
        if self.mode == Mode::Loopback
            && counts.events == 0
            && counts.timeouts >= loops::NO_EDGE_GIVE_UP
        {
            anyhow::bail!(
                "no edge arrived on {} in {} drives: is {} wired to it (a jumper from --out to --in)?",
                self.input.label(),
                counts.timeouts,
                self.output.as_ref().map_or("the drive".into(), |l| l.label())
            );
        }
        Ok(())
    }
}

/// The IRQ thread as found while measuring, and `--irq-priority`'s before and after.
struct IrqReport {
    during: Option<irq_thread::IrqThread>,
    original: Option<(crate::sys::sched::Policy, i32)>,
    restored: Option<(crate::sys::sched::Policy, i32)>,
}

impl GpioProbe {
    fn finish(
        &self,
        mut o: Outcome,
        cpu: usize,
        settings: &CommonSettings,
        irq: &IrqReport,
        out: &mut ProbeOutput,
    ) {
        let method = self.method();
        let extra = self.counts_extra(&o.counts, irq);
        for (metric, rec) in o.recorders.iter_mut() {
            let mut tr = crate::result::ThreadResult::from_recorder(cpu, &method, *metric, rec);
            tr.extra = extra.clone();
            super::finish_raw(
                super::RawLabel {
                    cpu,
                    method: &method,
                    metric: *metric,
                    columns: ["edge_ns", "latency_ns"],
                    subject: &format!("{method} {metric}"),
                    what: "samples",
                },
                rec,
                settings.keep_raw,
                &mut tr,
                out,
            );
            out.threads.push(tr);
        }
        self.warnings(&o.counts, cpu, settings, irq, out);
        out.extra_params.merge(self.extra_params());
    }

    fn counts_extra(&self, c: &EdgeCounts, irq: &IrqReport) -> ThreadExtra {
        let both = |p: Option<(crate::sys::sched::Policy, i32)>| p.map(|(p, n)| format!("{p} {n}"));
        let irq_thread = irq.during.as_ref().map(|t| GpioIrqThread {
            cpu: t.cpu as u64,
            cpus_allowed: t.allowed.clone(),
            irq: t.irq.into(),
            name: t.comm.clone(),
            policy: t.policy.map(|p| p.to_string()).unwrap_or_default(),
            priority: t.priority.into(),
            priority_original: both(irq.original).filter(|_| irq.restored.is_some()),
            priority_restored: both(irq.restored).filter(|_| irq.original.is_some()),
        });
        ThreadExtra {
            drive_errors: Some(c.drive_errors),
            edge_events: Some(c.events),
            edges_driven: Some(c.driven),
            irq_thread,
            missed_edges: Some(c.missed_seqno),
            simulated: Some(self.drive == DriveKind::Sim),
            stale_events: Some(c.stale),
            timeouts: Some(c.timeouts),
            warmup_edge_events: Some(c.warmup_events),
            ..ThreadExtra::default()
        }
    }

    fn warnings(
        &self,
        c: &EdgeCounts,
        cpu: usize,
        settings: &CommonSettings,
        irq: &IrqReport,
        out: &mut ProbeOutput,
    ) {
        if self.drive == DriveKind::Sim && self.mode == Mode::Loopback {
            out.warnings.push(Warning::new(WarningCode::GpioSimulated, format!(
                "{}: simulated: the edges were raised through gpio-sim's pull file, not a wire; drive→irq is the simulator's path (irq_work), not a pin's",
                self.input.label()
            )));
        }
        if c.missed_seqno + c.timeouts > 0 {
            out.warnings.push(Warning::new(WarningCode::GpioMissedEdges, format!(
                "{}: {} edge(s) dropped by the kernel's event buffer (seqno gaps; raise --event-buffer or the measuring thread's priority), {} driven edge(s) without an event in time",
                self.input.label(), c.missed_seqno, c.timeouts
            )));
        }
        let Some(t) = &irq.during else {
            out.warnings.push(Warning::new(
                WarningCode::GpioIrqThread,
                format!(
                    "{}: the line's IRQ thread was not found in /proc/interrupts",
                    self.input.label()
                ),
            ));
            return;
        };
        let rt = t.policy.is_some_and(|p| p.is_realtime());
        let lower = settings.policy.is_realtime() && (!rt || t.priority < settings.priority);
        if lower {
            out.warnings.push(Warning::new(WarningCode::GpioIrqThread, format!(
                "{} runs at {} {}, below the measuring thread's {} {}: the measuring thread can delay its own edges' handling; set --irq-priority {}",
                t.comm, t.policy.map_or("?".into(), |p| p.to_string()), t.priority, settings.policy, settings.priority,
                (settings.priority + 1).min(99)
            )));
        }
        if t.cpu != cpu {
            out.warnings.push(Warning::new(WarningCode::GpioIrqThread, format!(
                "{} last ran on CPU {} (allowed {}), the measuring thread on CPU {cpu}: each edge crosses CPUs; set the IRQ's affinity (/proc/irq/{}/smp_affinity_list) or --cpus",
                t.comm, t.cpu, t.allowed, t.irq
            )));
        }
    }
}
