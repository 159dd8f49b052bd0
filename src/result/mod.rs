//! The serialized result of a run (schema documented in docs/result-schema.md): what was
//! asked, on which system, and what each measuring thread saw. Every report, suite,
//! comparison and verdict reads this, so fields are only ever added.

pub mod journal;
pub mod timer_extra;
pub mod trace;

use crate::stats::Summary;
use crate::sysinfo::SystemInfo;
use crate::warning::Warning;
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
    pub study: Option<String>,
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
    #[serde(default)]
    pub extra: BTreeMap<String, serde_json::Value>,
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

/// The metric of the timer and of imported cyclictest files: labels leave it out.
pub const LATENCY_METRIC: &str = "latency";

fn default_metric() -> String {
    LATENCY_METRIC.into()
}

/// A thread's label with its metric (`eventfd response`, `cpu1 round_trip`); the default
/// `latency` metric adds nothing (`clock-nanosleep`, `cpu1`).
pub fn metric_label(base: &str, metric: &str) -> String {
    if metric == LATENCY_METRIC {
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
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| crate::error::UserError::BadInputFile {
                path: path.display().to_string(),
                reason: format!("not JSON: {e}"),
            })?;
        Self::from_json_value(path, value)
    }

    /// A saved run from its parsed JSON (read from `path`, named in errors).
    pub fn from_json_value(
        path: &std::path::Path,
        value: serde_json::Value,
    ) -> Result<Self, crate::error::UserError> {
        use crate::error::UserError;
        match value.get("schema_version").and_then(|v| v.as_u64()) {
            Some(v) if v == SCHEMA_VERSION as u64 => {}
            Some(v) => {
                return Err(UserError::BadInputFile {
                    path: input_name(path),
                    reason: format!(
                        "schema_version {v} is not supported (this latscope reads {SCHEMA_VERSION}); re-run with this version"
                    ),
                })
            }
            None => {
                return Err(UserError::BadInputFile {
                    path: input_name(path),
                    reason: "no schema_version: not a latscope result file".into(),
                })
            }
        }
        serde_json::from_value(value).map_err(|e| UserError::BadInputFile {
            path: input_name(path),
            reason: format!("does not match the latscope result schema: {e}"),
        })
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

/// How a final output path is written.
enum WriteTarget {
    Stdout,
    /// A device, FIFO or socket (e.g. /dev/null, /dev/stdout, a named pipe) is written in
    /// place: renaming a file over it would replace the device node itself.
    InPlace,
    /// A regular file or nothing yet: a new temporary file renamed over it.
    Replace,
    /// `--force` and `path` is a link: the file it points to, replaced as above.
    Through(std::path::PathBuf),
}

/// Set by `--force`: a symbolic link at an output path is written through.
static WRITE_THROUGH_SYMLINKS: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// `--force`: from now on an output path that is a symbolic link is written through (the
/// file it points to is replaced atomically) instead of refused.
pub fn write_through_symlinks() {
    WRITE_THROUGH_SYMLINKS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Where a link points, relative targets taken from the link's directory; a chain of
/// links is followed (at most 8).
fn resolve_link(path: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..8 {
        let target = std::fs::read_link(&current)?;
        current = directory_of(&current).join(target);
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => continue,
            _ => return Ok(current),
        }
    }
    Err(std::io::Error::other("more than 8 symbolic links in a row"))
}

/// Decides how `path` is written, refusing a directory and a symbolic link (which an
/// unprivileged user owning the directory may have planted to redirect a root-owned
/// write, issue 12 item 1). A link to a device owned by root or by this user (/dev/stdout,
/// /proc/self/fd/1) is followed: that is how a terminal or pipe is named.
fn write_target(path: &std::path::Path) -> std::io::Result<WriteTarget> {
    use std::io::{Error, ErrorKind};
    use std::os::unix::fs::MetadataExt;
    if path.as_os_str() == "-" {
        return Ok(WriteTarget::Stdout);
    }
    let link = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(WriteTarget::Replace),
        Err(e) => return Err(e),
        Ok(m) => m,
    };
    let is_special = |m: &std::fs::Metadata| !m.is_file() && !m.is_dir();
    if link.file_type().is_symlink() {
        let trusted_owner = link.uid() == 0 || link.uid() == crate::sys::process::effective_uid();
        if trusted_owner && std::fs::metadata(path).is_ok_and(|m| is_special(&m)) {
            return Ok(WriteTarget::InPlace);
        }
        if WRITE_THROUGH_SYMLINKS.load(std::sync::atomic::Ordering::Relaxed) {
            // The link resolved now, once: its target's directory gets the temporary
            // file, and the target (a regular file or nothing yet) is replaced.
            let target = resolve_link(path)?;
            return match write_target(&target)? {
                WriteTarget::Replace => Ok(WriteTarget::Through(target)),
                other => Ok(other),
            };
        }
        let target = std::fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".into());
        return Err(Error::other(format!(
            "it is a symbolic link (to {target}) and latscope neither writes through nor replaces \
             a link, which another user may have planted to redirect the write; remove the link, \
             give the path of the file itself, or add --force to write through it"
        )));
    }
    if link.is_dir() {
        return Err(Error::new(ErrorKind::IsADirectory, "is a directory"));
    }
    Ok(if is_special(&link) {
        WriteTarget::InPlace
    } else {
        WriteTarget::Replace
    })
}

/// The directory a new file beside `path` goes into.
fn directory_of(path: &std::path::Path) -> std::path::PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    }
}

/// A new temporary file in `dir` with an unpredictable name, created with
/// `O_CREAT|O_EXCL|O_NOFOLLOW` (never through a symlink planted at its name) and removed
/// when dropped unless persisted.
fn new_temporary_file(
    dir: &std::path::Path,
    prefix: &str,
) -> std::io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(prefix)
        .suffix(".tmp")
        .rand_bytes(12)
        .make_in(dir, crate::sys::new_file::create_exclusive_nofollow)
}

/// Writes bytes to `path` atomically: a new temporary file beside it (unpredictable name,
/// never through a symlink), fsync, rename. `-` writes to stdout; a device or FIFO is
/// written in place; a symbolic link is refused.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically_with(path, |out| out.write_all(bytes))
}

/// `write_atomically` for output produced piece by piece: `fill` writes into a buffered
/// writer on the temporary file (or stdout, or the device), so no whole text is held.
pub fn write_atomically_with(
    path: &std::path::Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::io::Write;
    match write_target(path)? {
        WriteTarget::Stdout => {
            let mut out = std::io::stdout().lock();
            fill(&mut out)?;
            out.flush()
        }
        WriteTarget::InPlace if crate::sys::fifo::is_fifo(path) => {
            // Waits for a reader and for room, but never past a first signal.
            let signalled = crate::interrupt::received_signal();
            let give_up = move || match (signalled, crate::interrupt::received_signal()) {
                (None, Some(signal)) => Some(signal.to_string()),
                _ => None,
            };
            let fifo = crate::sys::fifo::open_writer(path, &give_up)?;
            let mut out = std::io::BufWriter::new(fifo);
            fill(&mut out)?;
            out.flush()
        }
        WriteTarget::InPlace => {
            let f = std::fs::OpenOptions::new().write(true).open(path)?;
            let mut out = std::io::BufWriter::new(f);
            fill(&mut out)?;
            out.flush()
        }
        WriteTarget::Through(target) => replace_file(&target, fill).map(drop),
        WriteTarget::Replace => replace_file(path, fill).map(drop),
    }
}

/// For files that grow (the result journal, `--raw`): when `path` is (or will be) a
/// regular file, writes its first bytes atomically as `write_atomically` does and returns
/// the file, open, for appending (a reader sees a whole prefix, never a torn rename);
/// None, writing nothing, for `-`, a device or a FIFO (written once at the end instead).
pub fn create_growing(
    path: &std::path::Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<Option<std::fs::File>> {
    match write_target(path)? {
        WriteTarget::Replace => replace_file(path, fill).map(Some),
        WriteTarget::Through(target) => replace_file(&target, fill).map(Some),
        WriteTarget::Stdout | WriteTarget::InPlace => Ok(None),
    }
}

/// A new temporary file beside `path`, filled, fsynced and renamed over `path`.
fn replace_file(
    path: &std::path::Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<std::fs::File> {
    use std::io::Write;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "result".into());
    let mut tmp = new_temporary_file(&directory_of(path), &format!(".{name}."))?;
    {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, tmp.as_file_mut());
        fill(&mut out)?;
        out.flush()?;
    }
    tmp.as_file().sync_all()?;
    // rename(2) replaces whatever is at `path` now (even a link planted since the check)
    // without following it; the temporary file is removed on failure.
    tmp.persist(path).map_err(|e| e.error)
}

/// Checks before measuring that `path` can be written (so a long run does not end in
/// an error): creates and removes a probe file in its directory the way the write will.
pub fn check_writable(path: &std::path::Path) -> std::io::Result<()> {
    match write_target(path)? {
        WriteTarget::Stdout => Ok(()),
        // A FIFO is not opened: that would wait for a reader, and closing it would end
        // the reader's input before the run wrote anything.
        WriteTarget::InPlace if crate::sys::fifo::is_fifo(path) => {
            crate::sys::fifo::may_write(path)
        }
        // A device is written in place; opening it is the check.
        WriteTarget::InPlace => std::fs::OpenOptions::new().write(true).open(path).map(drop),
        WriteTarget::Replace => {
            new_temporary_file(&directory_of(path), ".latscope-write-check.").map(drop)
        }
        WriteTarget::Through(target) => {
            new_temporary_file(&directory_of(&target), ".latscope-write-check.").map(drop)
        }
    }
}

/// Key in `ThreadResult::extra` listing statistics the source did not provide (e.g. the
/// percentiles of a cyclictest file without histogram); they are shown as `–` and
/// never judged.
pub const UNKNOWN_STATS_KEY: &str = "unknown_stats";

/// Whether a thread's source did not provide `stat`.
pub fn stat_unknown(th: &ThreadResult, stat: crate::stats::Stat) -> bool {
    th.extra
        .get(UNKNOWN_STATS_KEY)
        .and_then(|v| v.as_array())
        .is_some_and(|a| a.iter().any(|s| s.as_str() == Some(stat.name())))
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
