//! The plan layer: from what the user typed to a validated Plan, one module per probe
//! (timer, noise, net, wake) and per command that plans (suite, load), plus `common` for
//! what they share. Each goes in two steps, as ripgrep's low/high args: `check_*` turns
//! what was typed into a typed request (syntax and ranges, nothing read from the
//! machine), then `resolve` settles it against this machine (online CPUs, permissions,
//! RT throttling, cpusets, tracefs, writable outputs), so a long run or a suite never
//! fails after it has started measuring.

pub mod common;
pub mod gpio;
pub mod load;
pub mod net;
pub mod noise;
pub mod output;
pub mod range;
pub mod timer;
pub mod timer_slack;
pub mod trace;
pub mod wake;

pub use common::DEFAULT_RT_PRIORITY;
pub use gpio::gpio_plan;
pub use load::load_plan;
pub use net::{net_plan, serve_plan};
pub use noise::noise_plan;
pub use timer::timer_plan;
pub use timer_slack::DEFAULT_TIMER_SLACK_NS;
pub use wake::wake_plan;

use crate::load::LoadSpec;
use crate::probe::{CommonSettings, Probe};
use crate::warning::Warning;
use std::path::PathBuf;

/// One scenario to run.
pub struct ScenarioPlan {
    pub probe: Box<dyn Probe>,
    pub settings: CommonSettings,
    pub dma_latency_us: Option<i32>,
    /// The loads beside the probe, parsed and checked against this machine.
    pub loads: Vec<LoadSpec>,
    /// The `--isolate` shield (empty: none), resolved once.
    pub isolate: Vec<usize>,
    /// `--trace`: record and analyse the kernel side (None: no tracing).
    pub trace: Option<TraceSettings>,
}

impl ScenarioPlan {
    /// The loads as typed, for names and the result's params.
    pub fn load_texts(&self) -> Vec<String> {
        self.loads.iter().map(|l| l.text.clone()).collect()
    }
}

/// What `--trace` was asked to do, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceSettings {
    /// Samples above this are spikes; None = the scenario's p99.9.
    pub threshold_ns: Option<u64>,
    /// Ring buffer per traced CPU, KiB.
    pub buffer_kb_per_cpu: u64,
}

/// Where results go and how they are judged.
#[derive(Debug, Clone, Default)]
pub struct OutputSettings {
    pub export_json: Option<PathBuf>,
    pub raw: Option<PathBuf>,
    pub quiet: bool,
    pub ns: bool,
    /// `--export-*` destinations besides the JSON.
    pub exports: Vec<crate::output::exports::Export>,
    /// `--fail-above` limits.
    pub limits: Vec<crate::result::limits::Limit>,
    /// `--checkpoint`: how often a running scenario's partial result is saved.
    pub checkpoint_ns: u64,
    /// `--resume`: continue the run saved in `export_json`.
    pub resume: bool,
    /// Where the measuring threads' live atomics are published for a reader outside the
    /// runner (`latscope cyclictest`'s live `T:` lines); None: each scenario's own.
    pub live_view: Option<crate::probe::LiveRegistry>,
    /// The measuring threads keep live histograms for a reader outside the runner
    /// (`latscope watch`), whether or not the run checkpoints.
    pub live_histograms: bool,
    /// The caller prints a `--break-above` break itself (`latscope cyclictest`'s `# Break`
    /// lines): the runner's stderr line about it is left out.
    pub own_break_lines: bool,
}

/// A validated run.
pub struct Plan {
    pub scenarios: Vec<ScenarioPlan>,
    pub output: OutputSettings,
    /// Warnings found while resolving the options (e.g. SCHED_OTHER fallback).
    pub warnings: Vec<Warning>,
    /// The study-table layout when the plan is a suite.
    pub suite: Option<crate::result::SuiteInfo>,
}
