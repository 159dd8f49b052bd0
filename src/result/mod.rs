//! The serialized result of a run (schema documented in docs/result-schema.md): what was
//! asked, on which system, and what each measuring thread saw. Every report, suite,
//! comparison and verdict reads this, so fields are only ever added.

pub mod extras;
pub mod journal;
pub mod limits;
pub mod metric;
pub mod probe_kind;
pub mod sniff;
pub mod study;
pub mod trace;
pub mod worst_case;

use crate::stats::Summary;
use crate::sysinfo::SystemInfo;
use crate::warning::Warning;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use extras::{GpioIrqThread, ParamsExtra, ThreadExtra};
pub use metric::Metric;
pub use probe_kind::ProbeKind;
pub use study::Study;

/// Bumped when a field changes meaning or disappears (adding fields keeps the version).
/// 2: `params.extra` and `threads[].extra` are typed fields (result/extras.rs), and
/// `params.extra.method` (timer, noise: the same as `params.method`) is gone.
pub const SCHEMA_VERSION: u32 = 2;

/// The oldest schema this latscope reads: a version-1 file reads as version 2 (its
/// `params.extra.method` is dropped; every other key of its extras is a typed field).
pub const OLDEST_READ_SCHEMA_VERSION: u32 = 1;

/// One invocation of latscope: one or more scenarios on one system.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    pub schema_version: u32,
    pub tool: String,
    pub tool_version: String,
    /// The command line as typed.
    pub command_line: Vec<String>,
    /// Wall-clock start, RFC 3339.
    pub started_at: String,
    /// Wall-clock end, RFC 3339 (updated after every scenario).
    pub finished_at: String,
    /// True when the run was stopped (Ctrl-C, SIGTERM) before it finished its plan.
    pub interrupted: bool,
    /// The signal that stopped the run (`SIGINT`, `SIGTERM`, `SIGHUP`, `SIGQUIT`,
    /// `SIGPIPE`); absent when no signal did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_by: Option<String>,
    /// A hash of the plan's scenarios (names and parameters, in order): `--resume`
    /// refuses a file written by another plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_hash: Option<String>,
    /// The scenario that was running when this file was written (`--checkpoint`): what
    /// it had measured so far. Absent once the scenario (or the run) is over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<Checkpoint>,
    pub system: SystemInfo,
    /// Warnings about the whole run (settings that make results less trustworthy).
    pub warnings: Vec<Warning>,
    pub scenarios: Vec<Scenario>,
    /// Present when the run is a suite: how its study table is laid out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<SuiteInfo>,
}

/// A running scenario's partial result, from the atomics its progress line reads (the
/// measuring threads' histograms are theirs alone until the scenario ends).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The running scenario's name.
    pub scenario: String,
    /// Always true: the statistics are counts and maxima so far, not a finished result.
    pub partial: bool,
    /// When the scenario started, RFC 3339.
    pub started_at: String,
    /// When this checkpoint was written, RFC 3339.
    pub written_at: String,
    /// Time since the scenario started, ns.
    pub elapsed_ns: u64,
    pub threads: Vec<CheckpointThread>,
}

/// One measuring thread in a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointThread {
    pub cpu: usize,
    /// Samples recorded so far (after warm-up).
    pub samples: u64,
    /// The largest sample so far, ns.
    pub max_ns: u64,
    /// Missed periods so far.
    pub missed: u64,
}

/// The study-table layout of a suite run (`latscope suite`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteInfo {
    pub title: String,
    /// Statistics shown, as `Stat::parse` names them.
    pub columns: Vec<String>,
    /// The study's table shape (`wake-competitors`, `rt-cost`, `irq-response`); absent:
    /// one row per scenario × CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study: Option<Study>,
}

/// One measured configuration: probe × method × period × load × isolation × policy.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scenario {
    /// A readable label, unique within the run (e.g. `timer clock-nanosleep 1 ms`).
    pub name: String,
    /// `timer`, `wake`, `net` or `noise`.
    pub probe: ProbeKind,
    pub params: ScenarioParams,
    /// True when this scenario was cut short; its statistics cover what was measured.
    pub interrupted: bool,
    pub started_at: String,
    /// Measuring time after warm-up, in ns.
    pub elapsed_ns: u64,
    /// One entry per measuring thread (and per metric, for probes with several).
    pub threads: Vec<ThreadResult>,
    /// What each load achieved while this scenario ran.
    #[serde(default)]
    pub loads: Vec<LoadResult>,
    /// What the isolation did (moved tasks/IRQs, what could not be moved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<serde_json::Value>,
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// When it measured, on the clock of every `--raw` timestamp (absent in files of
    /// other tools and in results written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<TimeWindow>,
    /// `--trace`: the kernel-side split and spike attribution (see result/trace.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<trace::TraceResult>,
    /// `--break-above` stopped the run at this sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broke: Option<BreakSample>,
    /// A checkpoint of a scenario that was still running: its statistics cover what it
    /// had measured when the file was last written (a `kill -9` left it so).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

/// The measured phase of a scenario on the clock of `--raw` timestamps and trace events,
/// with what turns those into wall-clock time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeWindow {
    /// The clock of every timestamp: `CLOCK_MONOTONIC`.
    pub clock: String,
    /// The measured phase's start (timer: its first deadline; wake: its first wake-up).
    pub start_ns: u64,
    /// When the last measuring thread stopped.
    pub end_ns: u64,
    /// CLOCK_REALTIME − CLOCK_MONOTONIC at the scenario's start: add it to a timestamp
    /// for nanoseconds since the Unix epoch.
    pub realtime_offset_ns: i64,
}

impl TimeWindow {
    /// The window [start_ns, end_ns] on CLOCK_MONOTONIC.
    pub fn monotonic(start_ns: u64, end_ns: u64, realtime_offset_ns: i64) -> Self {
        Self {
            clock: "CLOCK_MONOTONIC".into(),
            start_ns,
            end_ns,
            realtime_offset_ns,
        }
    }
}

/// The knobs of a scenario. Probe-specific fields live in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScenarioParams {
    /// Wake-up method or mechanism (`clock-nanosleep`, `eventfd`, ...).
    pub method: String,
    /// Period or interval in ns.
    pub period_ns: u64,
    /// `other`, `fifo` or `rr`.
    pub policy: String,
    pub priority: i32,
    /// Latency above which a sample counts as an overrun, ns.
    pub deadline_ns: u64,
    pub warmup_ns: u64,
    /// Sample target (0 = bounded by duration only).
    pub samples: u64,
    /// Duration bound in ns (0 = bounded by samples only).
    pub duration_ns: u64,
    pub cpus: Vec<usize>,
    /// The cpu_dma_latency value held during the scenario (None: left as it was).
    pub dma_latency_us: Option<i32>,
    /// Load specs as given.
    #[serde(default)]
    pub loads: Vec<String>,
    /// Isolated CPUs (empty: none).
    #[serde(default)]
    pub isolate: Vec<usize>,
    /// The timer slack the scenario's threads ran with, ns: `--timer-slack`, or for
    /// `latscope cyclictest` the slack they inherited (see `timer_slack_inherited`).
    /// Absent in files written before it existed and in imported ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_slack_ns: Option<u64>,
    /// latscope left the inherited slack alone (`latscope cyclictest`, as cyclictest).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timer_slack_inherited: bool,
    /// Probe-specific parameters (result/extras.rs, docs/probes.md).
    #[serde(default)]
    pub extra: ParamsExtra,
}

/// Hands each whole scenario, in order, to the function given (a run's scenarios, or the
/// runner's journal read back one at a time).
pub type EachScenario<'a> =
    dyn FnMut(&mut dyn FnMut(&Scenario) -> anyhow::Result<()>) -> anyhow::Result<()> + 'a;

/// One measuring thread's statistics and distribution.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThreadResult {
    pub cpu: usize,
    pub method: String,
    /// What the series measures: `latency` (timer), `response`/`call` (wake),
    /// `round_trip`/`kernel_to_user` (net), `gap` (noise).
    #[serde(default)]
    pub metric: Metric,
    #[serde(flatten)]
    pub summary: Summary,
    /// Sparse histogram: `[value_ns, count]` pairs, value = the bucket's upper bound.
    pub histogram: Vec<[u64; 2]>,
    /// The largest value of each second of the run, ns.
    pub per_second_max_ns: Vec<u64>,
    /// Probe-specific counters (e.g. merged wake-ups, lost packets, noise per second).
    /// `unknown_stats` lists statistics an imported file did not provide (shown as `–`,
    /// never judged; see import::cyclictest).
    #[serde(default)]
    pub extra: ThreadExtra,
    /// `--worst-case`: the estimate beyond the samples (docs/result-schema.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_case: Option<crate::stats::worst_case::WorstCase>,
}

/// A thread's label with its metric (`eventfd response`, `cpu1 round_trip`); the default
/// `latency` metric adds nothing (`clock-nanosleep`, `cpu1`).
pub fn metric_label(base: &str, metric: Metric) -> String {
    if metric == Metric::Latency {
        base.to_string()
    } else {
        format!("{base} {metric}")
    }
}

/// What a load achieved during a scenario.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LoadResult {
    pub spec: String,
    pub kind: String,
    pub cpus: Vec<usize>,
    /// Operations per second in the load's own unit.
    pub throughput: f64,
    /// The unit of `throughput` (`ops/s`, `MB/s`, `faults/s`, `switches/s`, ...).
    pub unit: String,
    /// CPU share used, as a percentage of one CPU per CPU given (from /proc).
    pub cpu_percent: f64,
    #[serde(default)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl ThreadResult {
    /// Builds a result from a finished Recorder.
    pub fn from_recorder(
        cpu: usize,
        method: &str,
        metric: Metric,
        rec: &crate::stats::Recorder,
    ) -> Self {
        let histogram = rec
            .histogram()
            .iter_recorded()
            .map(|v| [v.value_iterated_to(), v.count_at_value()])
            .collect();
        Self {
            cpu,
            method: method.to_string(),
            metric,
            summary: Summary::from_recorder(rec),
            histogram,
            per_second_max_ns: rec.series().values().to_vec(),
            extra: ThreadExtra::default(),
            worst_case: None,
        }
    }
}

impl Scenario {
    /// A scenario that has measured nothing yet: no threads, loads, warnings or trace.
    pub fn new(name: String, probe: ProbeKind, params: ScenarioParams, started_at: String) -> Self {
        Self {
            name,
            probe,
            params,
            interrupted: false,
            started_at,
            elapsed_ns: 0,
            threads: Vec::new(),
            loads: Vec::new(),
            isolation: None,
            warnings: Vec::new(),
            time: None,
            trace: None,
            broke: None,
            partial: false,
        }
    }
}

impl Run {
    pub fn new(system: SystemInfo, command_line: Vec<String>) -> Self {
        let now = crate::result::rfc3339_now();
        Self {
            schema_version: SCHEMA_VERSION,
            tool: "latscope".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            command_line,
            started_at: now.clone(),
            finished_at: now,
            interrupted: false,
            interrupted_by: None,
            plan_hash: None,
            checkpoint: None,
            system,
            warnings: Vec::new(),
            scenarios: Vec::new(),
            suite: None,
        }
    }

    /// Reads a saved run, naming the file and what is wrong when it cannot.
    pub fn load(path: &std::path::Path) -> Result<Self, crate::error::UserError> {
        let text = read_input_file(path)?;
        if journal::is_journal(&text) {
            return journal::parse(path, &text);
        }
        let keys = sniff::top_keys(&text).map_err(|e| crate::error::UserError::BadInputFile {
            path: input_name(path),
            reason: format!("not JSON: {e}"),
        })?;
        Self::from_json_text(path, &text, &keys)
    }

    /// A saved run from its JSON text (read from `path`, named in errors) whose top-level
    /// keys were read: its schema version checked, then read straight into the types
    /// (never through a `Value` tree: memory is a small multiple of the text's size).
    pub fn from_json_text(
        path: &std::path::Path,
        text: &str,
        keys: &sniff::TopKeys,
    ) -> Result<Self, crate::error::UserError> {
        use crate::error::UserError;
        match keys.schema_version {
            Some(Some(v))
                if (OLDEST_READ_SCHEMA_VERSION as u64..=SCHEMA_VERSION as u64).contains(&v) => {}
            Some(Some(v)) => {
                return Err(UserError::BadInputFile {
                    path: input_name(path),
                    reason: format!(
                        "schema_version {v} is not supported (this latscope reads {OLDEST_READ_SCHEMA_VERSION} to {SCHEMA_VERSION}); re-run with this version"
                    ),
                })
            }
            _ => {
                return Err(UserError::BadInputFile {
                    path: input_name(path),
                    reason: "no schema_version: not a latscope result file".into(),
                })
            }
        }
        let mut run: Run = serde_json::from_str(text).map_err(|e| UserError::BadInputFile {
            path: input_name(path),
            reason: format!("does not match the latscope result schema: {e}"),
        })?;
        // Read into this version's types, it is this version's run.
        run.schema_version = SCHEMA_VERSION;
        run.respell_old_names();
        Ok(run)
    }

    /// Scenario names written before durations were spaced (`timer clock-nanosleep
    /// 300us`) in today's style (`300 µs`), so an old file's tables read as a new one's.
    pub fn respell_old_names(&mut self) {
        for sc in &mut self.scenarios {
            sc.name = crate::units::spaced_durations(&sc.name);
        }
        if let Some(c) = &mut self.checkpoint {
            c.scenario = crate::units::spaced_durations(&c.scenario);
        }
    }
}

/// The largest input file `report`, `compare` and `--resume` read (a result with every
/// histogram of a large suite is a few MB; `--raw` files are not inputs).
pub const MAX_INPUT_FILE_BYTES: u64 = 256 << 20;

/// Reads an input file once, refusing it from its size (before reading) when it is larger
/// than `MAX_INPUT_FILE_BYTES` (issue 12, item 12); a pipe is read up to that size, and
/// `-` is standard input (`latscope report -`).
pub fn read_input_file(path: &std::path::Path) -> Result<String, crate::error::UserError> {
    read_bounded_text(path, "a latscope or cyclictest result")
}

/// An input's name in messages: its path, or `- (standard input)`.
pub fn input_name(path: &std::path::Path) -> String {
    if path.as_os_str() == "-" {
        "- (standard input)".into()
    } else {
        path.display().to_string()
    }
}

/// Reads a text input (`what` it should be, for messages: "a suite plan") at most
/// `MAX_INPUT_FILE_BYTES` long, refusing a larger regular file from its size before
/// reading any of it; `-` reads standard input.
pub fn read_bounded_text(
    path: &std::path::Path,
    what: &str,
) -> Result<String, crate::error::UserError> {
    use std::io::Read;
    let bad = |reason: String| crate::error::UserError::BadInputFile {
        path: input_name(path),
        reason,
    };
    let too_large = |size: String| {
        bad(format!(
            "{size} is larger than {what} can be ({} MiB at most)",
            MAX_INPUT_FILE_BYTES >> 20
        ))
    };
    let (input, capacity): (Box<dyn Read>, u64) = if path.as_os_str() == "-" {
        (Box::new(std::io::stdin().lock()), 0)
    } else {
        let file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
        let meta = file.metadata().map_err(|e| bad(e.to_string()))?;
        if meta.is_dir() {
            return Err(bad(format!("is a directory, not {what}")));
        }
        if meta.is_file() && meta.len() > MAX_INPUT_FILE_BYTES {
            return Err(too_large(format!("its size, {} bytes,", meta.len())));
        }
        let capacity = if meta.is_file() { meta.len() } else { 0 };
        (Box::new(file), capacity)
    };
    let mut bytes = Vec::with_capacity(capacity as usize);
    input
        .take(MAX_INPUT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| bad(e.to_string()))?;
    if bytes.len() as u64 > MAX_INPUT_FILE_BYTES {
        return Err(too_large("what it holds".into()));
    }
    String::from_utf8(bytes).map_err(|e| bad(format!("not UTF-8 text: {e}")))
}

/// One series kept in order for `--raw` (not in the JSON file: report/raw.rs writes it as
/// CSV). Time columns (names ending in `_ns` other than the value) are CLOCK_MONOTONIC
/// nanoseconds.
#[derive(Debug, Clone)]
pub struct RawSeries {
    pub cpu: usize,
    pub method: String,
    pub metric: Metric,
    /// The columns of each row (timer: deadline_ns, latency_ns; wake: t0_ns, t1_ns,
    /// response_ns).
    pub columns: Vec<String>,
    /// The rows one after another, `columns.len()` values each (flat: one allocation).
    /// Signed, for the `--trace` split parts (a remainder may be negative); times fit easily.
    pub values: Vec<i64>,
}

impl RawSeries {
    /// An empty cell (a sample the `--trace` split could not join).
    pub const EMPTY: i64 = i64::MIN;

    /// The rows in order.
    pub fn rows(&self) -> std::slice::ChunksExact<'_, i64> {
        self.values.chunks_exact(self.columns.len().max(1))
    }
}

/// The current wall-clock time in RFC 3339, UTC, second precision.
pub fn rfc3339_now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// A time written as `started_at`/`finished_at` are (RFC 3339, `Z` or not) as seconds since
/// the Unix epoch; None when it is not such a time.
pub fn epoch_s(text: &str) -> Option<f64> {
    let t = humantime::parse_rfc3339_weak(text.trim_end_matches('Z'))
        .or_else(|_| humantime::parse_rfc3339(text))
        .ok()?;
    let since = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(since.as_secs_f64())
}

/// Whether a thread's source did not provide `stat` (its `extra.unknown_stats`, e.g. the
/// percentiles of a cyclictest file without histogram): shown as `–`, never judged.
pub fn stat_unknown(th: &ThreadResult, stat: crate::stats::Stat) -> bool {
    th.extra
        .unknown_stats
        .as_ref()
        .is_some_and(|a| a.iter().any(|s| s == stat.name()))
}

/// The sample that crossed `--break-above`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BreakSample {
    pub cpu: usize,
    pub deadline_ns: u64,
    pub latency_ns: u64,
    /// The limit it crossed.
    pub break_above_ns: u64,
}
