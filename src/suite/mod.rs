//! `latscope suite`: a matrix of scenarios (any probe × its own axes × load × isolation ×
//! policy) from a preset or a TOML plan: the plan format and where it is read from. The
//! plan layer (plan/suite.rs) expands it into one validated Plan.

pub mod presets;

use crate::cli::SuiteArgs;
use crate::error::invalid;
use crate::error::UserError;
use serde::Deserialize;

/// A suite as written in TOML (presets are the same format, in src/suite/presets/).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteSpec {
    /// Shown above the study table.
    #[serde(default)]
    pub title: String,
    /// Statistics shown in the study table (`avg`, `min`, `max`, `stddev`, `p99`, `p99.9`,
    /// `overruns`, `missed`, ...).
    #[serde(default = "default_columns")]
    pub columns: Vec<String>,
    /// Samples per scenario (the studies used 100 000).
    pub samples: Option<u64>,
    /// Duration bound per scenario (`60s`).
    pub duration: Option<String>,
    /// Measured CPUs (`1`, `0-3`); default: the last online CPU.
    pub cpus: Option<String>,
    /// The timer slack of every scenario's threads (`50us`; as `--timer-slack`, which
    /// wins when given); default 1ns.
    pub timer_slack: Option<String>,
    /// The study table's shape: `wake-competitors`, `rt-cost`, `irq-response` (default:
    /// one row per scenario × CPU).
    pub study: Option<String>,
    /// Record and analyse the kernel side of every scenario (`--trace`; needs root):
    /// `true`, `false` or `"auto"` (trace where this machine can; say so where not).
    #[serde(default)]
    pub trace: TraceChoice,
    /// Spike threshold with `trace` (`50us`); default: each scenario's p99.9.
    pub trace_threshold: Option<String>,
    pub matrix: Vec<MatrixEntry>,
}

fn default_columns() -> Vec<String> {
    use crate::stats::Stat;
    [
        Stat::Min,
        Stat::Avg,
        Stat::P99,
        Stat::Max,
        Stat::Stddev,
        Stat::Overruns,
        Stat::Missed,
    ]
    .map(|s| s.name().to_string())
    .to_vec()
}

/// One block of the matrix: every combination of its lists is a scenario. Each probe has
/// its own axes (a key another probe owns is refused, naming the block); `loads`,
/// `isolate`, `policies` and `trace` are shared.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixEntry {
    /// `timer`, `wake`, `net` or `noise`.
    #[serde(default = "default_probe")]
    pub probe: String,
    /// timer: wake-up methods (default `["clock-nanosleep"]`).
    pub methods: Option<Vec<String>>,
    /// timer: periods (default `["1ms"]`).
    pub periods: Option<Vec<String>>,
    /// wake: mechanisms (default `["eventfd"]`).
    pub mechanisms: Option<Vec<String>>,
    /// wake: competitor counts on the wakee's CPU (default `[0]`).
    pub competitors: Option<Vec<u64>>,
    /// wake: where the waker runs: `same-cpu` as the wakee, or `other-cpu` (default
    /// `["same-cpu"]`).
    pub placements: Option<Vec<String>>,
    /// wake: time between wake-ups; net: time between sends or `flood` (default `["1ms"]`).
    pub intervals: Option<Vec<String>>,
    /// net: UDP payload sizes in bytes (`56`, `"4K"`; default `[64]`).
    pub sizes: Option<Vec<SizeValue>>,
    /// noise: gap thresholds (default `["1us"]`).
    pub thresholds: Option<Vec<String>>,
    /// Load specs; `none` = no load; `a + b` = several loads at once; `{cpus}` is
    /// replaced by the measured CPUs.
    #[serde(default = "default_loads")]
    pub loads: Vec<String>,
    /// Measure on an isolated (shielded) CPU, a non-isolated one, or both.
    #[serde(default = "default_isolate")]
    pub isolate: Vec<bool>,
    /// `fifo:95`, `rr:1`, `other`.
    #[serde(default = "default_policies")]
    pub policies: Vec<String>,
    /// `--trace` for this block's scenarios (timer, wake, noise): `true`, `false` or
    /// `"auto"` (where this machine can trace). Default: the plan's `trace`.
    pub trace: Option<TraceChoice>,
}

/// A payload size as a number of bytes or a text with a unit (`4K`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum SizeValue {
    Bytes(u64),
    Text(String),
}

impl SizeValue {
    pub fn text(&self) -> String {
        match self {
            SizeValue::Bytes(n) => n.to_string(),
            SizeValue::Text(t) => t.clone(),
        }
    }
}

/// `trace = true | false | "auto"` as written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum TraceChoice {
    Flag(bool),
    /// Only `"auto"` is accepted (checked by the plan, which names the block).
    Word(String),
}

impl Default for TraceChoice {
    fn default() -> Self {
        TraceChoice::Flag(false)
    }
}

fn default_probe() -> String {
    "timer".into()
}
fn default_loads() -> Vec<String> {
    vec!["none".into()]
}
fn default_isolate() -> Vec<bool> {
    vec![false]
}
fn default_policies() -> Vec<String> {
    vec!["fifo:95".into()]
}

/// Loads the spec from `--preset` or `--plan`, with where it came from (`preset NAME` or
/// the file's path) for error messages.
pub fn load_spec(args: &SuiteArgs) -> Result<(String, SuiteSpec), UserError> {
    let (origin, text) = match (&args.preset, &args.plan) {
        (Some(name), None) => (
            format!("preset {name}"),
            presets::text(name)
                .ok_or_else(|| {
                    invalid(
                        "--preset",
                        name,
                        format!("choose from {}", presets::NAMES.join(", ")),
                    )
                })?
                .to_string(),
        ),
        (None, Some(path)) => (
            path.display().to_string(),
            std::fs::read_to_string(path).map_err(|e| UserError::BadInputFile {
                path: path.display().to_string(),
                reason: e.to_string(),
            })?,
        ),
        (None, None) => (
            "preset quick".into(),
            presets::text("quick").unwrap_or_default().into(),
        ),
        (Some(_), Some(_)) => {
            return Err(UserError::Other(
                "give either --preset or --plan, not both".into(),
            ))
        }
    };
    let spec: SuiteSpec = toml::from_str(&text).map_err(|e| UserError::BadInputFile {
        path: origin.clone(),
        reason: format!("not a valid suite plan: {e}"),
    })?;
    if spec.matrix.is_empty() {
        return Err(UserError::BadInputFile {
            path: origin,
            reason: "the plan has no [[matrix]] entry".into(),
        });
    }
    Ok((origin, spec))
}
