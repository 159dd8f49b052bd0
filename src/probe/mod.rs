//! Probes: each measures one kind of latency with its own measuring loops. This module
//! holds what they share: the Probe trait, the settings every probe takes, and what a
//! probe hands back to the runner.

pub mod gpio;
pub mod harness;
pub mod net;
pub mod noise;
pub mod timer;
pub mod wake;

use crate::result::{RawSeries, ThreadResult};
use crate::stats::{LiveStats, Recorder};
use crate::sys::sched::Policy;
use crate::warning::{Warning, WarningCode};
use harness::ThreadPlacement;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What every probe is told, validated by `plan`.
#[derive(Debug, Clone, PartialEq)]
pub struct CommonSettings {
    /// Measured CPUs (one measuring thread each, unless the probe says otherwise).
    pub cpus: Vec<usize>,
    pub policy: Policy,
    pub priority: i32,
    pub warmup_ns: u64,
    /// Sample target; None = bounded by duration only.
    pub samples: Option<u64>,
    /// Duration bound; None = bounded by samples only.
    pub duration_ns: Option<u64>,
    /// Keep every sample in order for `--raw`.
    pub keep_raw: bool,
    /// `--worst-case`: estimate the worst case from the kept samples at the end.
    pub worst_case: bool,
    /// The timer slack every thread of the scenario sets (`--timer-slack`), ns; None
    /// leaves the inherited slack (`latscope cyclictest`, as cyclictest).
    pub timer_slack_ns: Option<u64>,
}

impl CommonSettings {
    /// Seconds of per-second maxima to preallocate for a run at `period_ns`.
    pub fn series_seconds(&self, period_ns: u64) -> usize {
        let by_duration = self.duration_ns.map(|d| d / 1_000_000_000 + 2);
        let by_samples = self
            .samples
            .map(|s| (s.saturating_mul(period_ns.max(1)) / 1_000_000_000).saturating_mul(2) + 10);
        let secs = match (by_duration, by_samples) {
            (Some(d), Some(s)) => d.min(s),
            (Some(d), None) => d,
            (None, Some(s)) => s,
            (None, None) => 12,
        };
        secs.min(7 * 24 * 3600) as usize
    }

    /// Samples to preallocate for `--raw` at `period_ns` (0 when not asked for).
    pub fn raw_capacity(&self, period_ns: u64) -> usize {
        if !self.keep_raw {
            return 0;
        }
        let by_duration = self.duration_ns.map(|d| d / period_ns.max(1) + 1);
        match (self.samples, by_duration) {
            (Some(s), Some(d)) => s.min(d),
            (Some(s), None) => s,
            (None, Some(d)) => d,
            (None, None) => 0,
        }
        .min(MAX_RAW_SAMPLES) as usize
    }
}

/// One measuring thread per CPU of `settings`, each at its policy and priority.
pub fn placements(settings: &CommonSettings) -> Vec<ThreadPlacement> {
    settings
        .cpus
        .iter()
        .map(|&cpu| ThreadPlacement {
            cpu,
            policy: settings.policy,
            priority: settings.priority,
            timer_slack_ns: settings.timer_slack_ns,
        })
        .collect()
}

/// Starts the progress line of one measuring thread per CPU of `settings`.
pub fn start_progress(
    ctx: &ProbeContext,
    settings: &CommonSettings,
    lives: &[Arc<LiveStats>],
) -> crate::progress::Progress {
    ctx.publish_live(&settings.cpus, lives);
    crate::progress::Progress::start(
        ctx.progress,
        &ctx.label,
        settings.cpus.clone(),
        lives.to_vec(),
        settings.samples,
        settings.duration_ns.map(|d| d + settings.warmup_ns),
        settings.warmup_ns,
    )
}

/// Names a recorder's `--raw` series, and its values in the dropped-values warning.
pub struct RawLabel<'a> {
    pub cpu: usize,
    pub method: &'a str,
    pub metric: crate::result::Metric,
    /// The stamp's column (CLOCK_MONOTONIC ns) and the value's.
    pub columns: [&'a str; 2],
    /// Whose values (e.g. `CPU 3`) and what they are (samples, gaps).
    pub subject: &'a str,
    pub what: &'a str,
}

/// The `--raw` part of a finished recorder: values that did not fit the buffer noted in
/// `tr`'s extras and in a warning (they are in every statistic), and with `--raw` the
/// series taken out of the recorder without a copy.
pub fn finish_raw(
    label: RawLabel,
    rec: &mut Recorder,
    keep_raw: bool,
    tr: &mut ThreadResult,
    out: &mut ProbeOutput,
) {
    let dropped = rec.raw_dropped();
    if dropped > 0 {
        tr.extra.raw_dropped = Some(dropped);
        out.warnings.push(Warning::new(WarningCode::RawDropped, format!(
                "{}: {dropped} {} did not fit the --raw buffer and are missing from the raw file (they are in every statistic)",
                label.subject, label.what
            )));
    }
    if keep_raw {
        out.raw.push(RawSeries {
            cpu: label.cpu,
            method: label.method.into(),
            metric: label.metric,
            columns: label.columns.iter().map(|c| c.to_string()).collect(),
            values: crate::sys::flat_vec::flatten_pairs(rec.take_raw()),
        });
    }
}

/// The most samples `--raw` keeps per thread (8 bytes each: 800 MB).
pub const MAX_RAW_SAMPLES: u64 = 100_000_000;

/// What the runner hands a probe besides its settings.
#[derive(Clone)]
pub struct ProbeContext {
    /// Set by Ctrl-C/SIGTERM: measuring loops stop at their next wake-up.
    pub stop: Arc<AtomicBool>,
    /// Show a live progress line (a TTY and not `--quiet`).
    pub progress: bool,
    /// Label for the progress line.
    pub label: String,
    /// The measuring threads' live atomics (CPU, stats), published by the probe when it
    /// starts its progress line, read by the runner's checkpoints.
    pub live: LiveRegistry,
}

impl ProbeContext {
    /// Publishes the measuring threads' live atomics (one per CPU in `cpus`) for the
    /// runner's checkpoints; called when the probe starts its progress line.
    pub fn publish_live(&self, cpus: &[usize], lives: &[Arc<LiveStats>]) {
        if let Ok(mut live) = self.live.lock() {
            *live = cpus.iter().copied().zip(lives.iter().cloned()).collect();
        }
    }
}

/// Where a probe publishes its measuring threads' live atomics (see ProbeContext::live).
pub type LiveRegistry = Arc<std::sync::Mutex<Vec<(usize, Arc<LiveStats>)>>>;

/// What a probe measured in one scenario.
#[derive(Debug, Clone, Default)]
pub struct ProbeOutput {
    pub threads: Vec<ThreadResult>,
    pub elapsed_ns: u64,
    /// The measured phase on CLOCK_MONOTONIC: [start_ns, end_ns] (see result::TimeWindow).
    pub window_ns: [u64; 2],
    pub interrupted: bool,
    pub warnings: Vec<Warning>,
    pub raw: Vec<RawSeries>,
    /// Probe-specific parameters to record in the scenario.
    pub extra_params: crate::result::ParamsExtra,
    /// Every measuring thread's kernel thread id, for `--trace` to find it in sched events.
    pub tids: Vec<MeasuringThread>,
    /// `--break-above` stopped the run at this sample.
    pub broke: Option<BreakSample>,
}

/// A measuring thread as the kernel knows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MeasuringThread {
    pub cpu: usize,
    /// gettid(): the pid in sched events.
    pub tid: i32,
    /// `timer`, `noise`, `waker`, `wakee`, `sender`.
    pub role: String,
}

pub use crate::result::BreakSample;

/// A measurement the runner can execute as a scenario.
pub trait Probe: Send + Sync {
    /// `timer`, `wake`, `net` or `noise`.
    fn kind(&self) -> crate::result::ProbeKind;
    /// The method or mechanism measured, as the result names it.
    fn method(&self) -> String;
    /// The timer probe's method (how `--trace` joins its samples to hrtimers).
    fn timer_method(&self) -> Option<timer::Method> {
        None
    }
    /// The period or interval in ns (0 where it does not apply).
    fn period_ns(&self) -> u64;
    /// The latency above which a sample counts as an overrun.
    fn deadline_ns(&self) -> u64;
    /// Words that tell scenarios of one run apart beyond kind, method and period
    /// (e.g. `cpu1 competitors=8`), appended to the scenario name.
    fn name_suffix(&self) -> Option<String> {
        None
    }
    /// Whether the measuring threads spin instead of sleeping (at an RT policy they can
    /// starve the machine, so the plan checks RT throttling first).
    fn busy_waits(&self) -> bool {
        false
    }
    /// Probe-specific parameters for the result file.
    fn extra_params(&self) -> crate::result::ParamsExtra {
        crate::result::ParamsExtra::default()
    }
    /// Runs the measurement.
    fn run(&self, settings: &CommonSettings, ctx: &ProbeContext) -> anyhow::Result<ProbeOutput>;
}
