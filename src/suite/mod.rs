//! `latscope suite`: a matrix of scenarios (any probe × its own axes × load × isolation ×
//! policy) from a preset or a TOML plan: the plan format and where it is read from. The
//! plan layer (suite/plan.rs, then suite/expand.rs) checks and expands it into one validated
//! Plan.

pub mod expand;
pub mod gpio;
pub mod plan;
pub mod presets;

pub use expand::suite_plan;

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
    /// `timer`, `wake`, `net`, `noise` or `gpio`.
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
    /// gpio: the input line (`GPIO17`, `gpiochip0:17`).
    pub gpio_in: Option<String>,
    /// gpio: the output line (loopback: wired to `gpio_in`; respond: the answer).
    pub gpio_out: Option<String>,
    /// gpio: `wire` (default) or `sim` (gpio-sim's pull file, simulated).
    pub drive: Option<String>,
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
                        format!(
                            "choose from {}{}",
                            presets::NAMES.join(", "),
                            crate::choice_list::did_you_mean(name, presets::NAMES)
                        ),
                    )
                })?
                .to_string(),
        ),
        // Size-checked before reading, as result files are (issue 22, item 4).
        (None, Some(path)) => (
            path.display().to_string(),
            crate::result::read_bounded_text(path, "a suite plan")?,
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
        reason: format!("not a valid suite plan: {}", toml_error(&text, &e)),
    })?;
    if spec.matrix.is_empty() {
        return Err(UserError::BadInputFile {
            path: origin,
            reason: "the plan has no [[matrix]] entry".into(),
        });
    }
    Ok((origin, spec))
}

/// A TOML error in one line that quotes little of the plan: the parser's message with
/// each `quoted` part clipped, and where it is with a short excerpt of that line (the
/// toml crate's own text quotes the whole line, 100 MB for a line of NUL bytes).
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    use crate::error::clip;
    let message: String = e
        .message()
        .trim()
        .split('`')
        .map(clip)
        .collect::<Vec<_>>()
        .join("`");
    let Some(span) = e.span() else {
        return message;
    };
    let at = span.start.min(text.len());
    let at = (0..=at)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..at].matches('\n').count() + 1;
    let column = text[line_start..at].chars().count() + 1;
    let rest = text[at..].split('\n').next().unwrap_or("");
    format!(
        "{message} (line {line}, column {column}, at `{}`)",
        clip(rest)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_errors_quote_a_bounded_part_of_the_plan() {
        let key = "x".repeat(5 << 20);
        let text = format!("[[matrix]]\nprobe = \"timer\"\n{key} = 1\n");
        let e = toml::from_str::<SuiteSpec>(&text).unwrap_err();
        let shown = toml_error(&text, &e);
        assert!(
            shown.len() < 1000,
            "{} bytes: {}",
            shown.len(),
            &shown[..300]
        );
        assert!(shown.contains("line 3, column 1"), "{shown}");
        let nul = "\0".repeat(10 << 20);
        let e = toml::from_str::<SuiteSpec>(&nul).unwrap_err();
        let shown = toml_error(&nul, &e);
        assert!(
            shown.len() < 1000 && shown.contains("line 1, column 1"),
            "{shown}"
        );
    }
}
