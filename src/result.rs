//! The serialized result of a run (schema documented in docs/result-schema.md): what was
//! asked, on which system, and what each measuring thread saw. Every report, suite,
//! comparison and verdict reads this, so fields are only ever added.

use crate::stats::Summary;
use crate::sysinfo::SystemInfo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped when a field changes meaning or disappears (adding fields keeps the version).
pub const SCHEMA_VERSION: u32 = 1;

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
    pub system: SystemInfo,
    /// Warnings about the whole run (settings that make results less trustworthy).
    pub warnings: Vec<Warning>,
    pub scenarios: Vec<Scenario>,
    /// Present when the run is a suite: how its study table is laid out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<SuiteInfo>,
}

/// The study-table layout of a suite run (`latscope suite`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteInfo {
    pub title: String,
    /// Statistics shown, as `Summary::stat` names them.
    pub columns: Vec<String>,
}

/// A warning with a stable code for scripts and a message for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    pub code: String,
    pub message: String,
}

/// One measured configuration: probe × method × period × load × isolation × policy.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scenario {
    /// A readable label, unique within the run (e.g. `timer clock-nanosleep 1ms`).
    pub name: String,
    /// `timer`, `wake`, `net` or `noise`.
    pub probe: String,
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
    /// `--trace`: the kernel-side split and spike attribution (see crate::trace::result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::trace::result::TraceResult>,
    /// `--break-above` stopped the run at this sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broke: Option<crate::probe::BreakSample>,
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
    #[serde(default)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// One measuring thread's statistics and distribution.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThreadResult {
    pub cpu: usize,
    pub method: String,
    /// What the series measures: `latency` (timer), `response`/`call` (wake),
    /// `round_trip`/`kernel_to_user` (net), `gap` (noise).
    #[serde(default = "default_metric")]
    pub metric: String,
    #[serde(flatten)]
    pub summary: Summary,
    /// Sparse histogram: `[value_ns, count]` pairs, value = the bucket's upper bound.
    pub histogram: Vec<[u64; 2]>,
    /// The largest value of each second of the run, ns.
    pub per_second_max_ns: Vec<u64>,
    /// Probe-specific counters (e.g. merged wake-ups, lost packets, noise per second).
    /// `unknown_stats` lists statistics an imported file did not provide (shown as `–`,
    /// never judged; see report::cyclictest_import).
    #[serde(default)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

fn default_metric() -> String {
    "latency".into()
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
        metric: &str,
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
            metric: metric.to_string(),
            summary: Summary::from_recorder(rec),
            histogram,
            per_second_max_ns: rec.series().values().to_vec(),
            extra: BTreeMap::new(),
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
            system,
            warnings: Vec::new(),
            scenarios: Vec::new(),
            suite: None,
        }
    }

    /// Reads a saved run, naming the file and what is wrong when it cannot.
    pub fn load(path: &std::path::Path) -> Result<Self, crate::error::UserError> {
        use crate::error::UserError;
        let text = std::fs::read_to_string(path).map_err(|e| UserError::BadInputFile {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| UserError::BadInputFile {
                path: path.display().to_string(),
                reason: format!("not JSON: {e}"),
            })?;
        match value.get("schema_version").and_then(|v| v.as_u64()) {
            Some(v) if v == SCHEMA_VERSION as u64 => {}
            Some(v) => {
                return Err(UserError::BadInputFile {
                    path: path.display().to_string(),
                    reason: format!(
                        "schema_version {v} is not supported (this latscope reads {SCHEMA_VERSION}); re-run with this version"
                    ),
                })
            }
            None => {
                return Err(UserError::BadInputFile {
                    path: path.display().to_string(),
                    reason: "no schema_version: not a latscope result file".into(),
                })
            }
        }
        serde_json::from_value(value).map_err(|e| UserError::BadInputFile {
            path: path.display().to_string(),
            reason: format!("does not match the latscope result schema: {e}"),
        })
    }
}

/// One series kept in order for `--raw` (not in the JSON file: report/raw.rs writes it as
/// CSV). Time columns (names ending in `_ns` other than the value) are CLOCK_MONOTONIC
/// nanoseconds.
#[derive(Debug, Clone)]
pub struct RawSeries {
    pub cpu: usize,
    pub method: String,
    pub metric: String,
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

/// Writes bytes to `path` atomically: a temporary file beside it, fsync, rename.
/// `-` writes to stdout.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)?;
        return out.flush();
    }
    // A device, FIFO or socket (e.g. /dev/null, /dev/stdout, a named pipe) is written in
    // place: renaming a file over it would replace the device node itself.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
        return f.write_all(bytes);
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "result".into());
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Checks before measuring that `path` can be written (so a long run does not end in
/// an error): creates and removes a probe file in its directory.
pub fn check_writable(path: &std::path::Path) -> std::io::Result<()> {
    if path.as_os_str() == "-" {
        return Ok(());
    }
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        // A device or FIFO is written in place; opening it is the check.
        return std::fs::OpenOptions::new().write(true).open(path).map(drop);
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    if path.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    let probe = dir.join(format!(".latscope-write-check.{}", std::process::id()));
    std::fs::File::create(&probe)?;
    std::fs::remove_file(&probe)
}
