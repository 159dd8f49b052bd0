//! `latscope suite`: a matrix of scenarios (probe × method × period × load × isolation ×
//! policy) from a preset or a TOML plan, expanded into one Plan, run with results saved
//! after every scenario, and printed as one study table.

pub mod presets;

use crate::cli::SuiteArgs;
use crate::error::UserError;
use crate::plan::{self, Plan, ScenarioPlan};
use crate::probe::timer::{Method, TimerProbe};
use crate::probe::Probe;
use crate::sys::sched::Policy;
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
    /// Record and analyse the kernel side of every scenario (`--trace`; needs root).
    #[serde(default)]
    pub trace: bool,
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

/// One block of the matrix: every combination of its lists is a scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixEntry {
    /// `timer` (the probe the presets use).
    #[serde(default = "default_probe")]
    pub probe: String,
    pub methods: Vec<String>,
    #[serde(default = "default_periods")]
    pub periods: Vec<String>,
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
}

fn default_probe() -> String {
    "timer".into()
}
fn default_periods() -> Vec<String> {
    vec!["1ms".into()]
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

fn invalid(option: &str, value: &str, reason: impl Into<String>) -> UserError {
    UserError::InvalidValue {
        option: option.into(),
        value: value.into(),
        reason: reason.into(),
    }
}

/// Parses `fifo:95`, `rr`, `other` into a policy and priority.
fn parse_policy(text: &str) -> Result<(Policy, Option<i32>), UserError> {
    let (name, prio) = match text.split_once(':') {
        Some((n, p)) => (
            n,
            Some(
                p.trim()
                    .parse::<i32>()
                    .map_err(|_| invalid("policies", text, "priority is not a number"))?,
            ),
        ),
        None => (text, None),
    };
    let policy = match name.trim() {
        "fifo" => Policy::Fifo,
        "rr" => Policy::Rr,
        "other" => Policy::Other,
        _ => return Err(invalid("policies", text, "use fifo:PRIO, rr:PRIO or other")),
    };
    Ok((policy, prio))
}

/// Loads the spec from `--preset` or `--plan`.
pub fn load_spec(args: &SuiteArgs) -> Result<SuiteSpec, UserError> {
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
    Ok(spec)
}

/// Expands the suite into a validated plan. `--samples`/`--duration` on the command line
/// override (scale down) every scenario.
pub fn suite_plan(args: &SuiteArgs) -> Result<(Plan, SuiteSpec), UserError> {
    let spec = load_spec(args)?;
    let online = crate::sys::affinity::online_cpus();
    let default_cpu = vec![*online.last().unwrap_or(&0)];
    let mut common = args.common.clone();
    if common.cpus.is_none() {
        common.cpus = spec.cpus.clone();
    }
    let cli_bounds = common.samples.is_some() || common.duration.is_some();
    if !cli_bounds {
        common.samples = spec.samples;
        common.duration = spec.duration.clone();
    }
    let (mut base, dma, mut warnings) = plan::resolve_common(&common, &default_cpu)?;
    let trace = plan::resolve_trace(&crate::cli::TraceArgs {
        trace: spec.trace,
        trace_threshold: spec.trace_threshold.clone(),
        trace_buffer: None,
    })?;
    base.keep_raw |= trace.is_some();
    let cpus_text = crate::units::format_cpu_list(&base.cpus);
    let mut scenarios = Vec::new();
    for entry in &spec.matrix {
        if entry.probe != "timer" {
            return Err(invalid("probe", &entry.probe, "suites run the timer probe"));
        }
        let mut methods = Vec::new();
        for m in &entry.methods {
            for method in Method::parse_list(m).map_err(|r| invalid("methods", m, r))? {
                if !methods.contains(&method) {
                    methods.push(method);
                }
            }
        }
        for policy_text in &entry.policies {
            let (policy, prio) = parse_policy(policy_text)?;
            let mut w = Vec::new();
            let (policy, priority) = plan::resolve_policy(Some(policy), prio, &mut w)?;
            let mut settings = base.clone();
            settings.policy = policy;
            settings.priority = priority;
            if methods.contains(&Method::Busy) {
                plan::check_busy_safety(&settings, common.force, &mut warnings)?;
            }
            for &method in &methods {
                for period_text in &entry.periods {
                    let period_ns = plan::duration_in_range(
                        "periods",
                        period_text,
                        1_000,
                        plan::MIN_PERIOD_NS,
                        plan::MAX_PERIOD_NS,
                    )?;
                    for &isolated in &entry.isolate {
                        for load_text in &entry.loads {
                            let loads: Vec<String> = if load_text.trim() == "none" {
                                Vec::new()
                            } else {
                                load_text
                                    .split('+')
                                    .map(|l| l.trim().replace("{cpus}", &cpus_text))
                                    .filter(|l| !l.is_empty())
                                    .collect()
                            };
                            // Bad specs fail here, before the first scenario runs.
                            let loads = plan::resolve_loads(&loads)?;
                            scenarios.push(ScenarioPlan {
                                probe: Box::new(TimerProbe {
                                    method,
                                    period_ns,
                                    deadline_ns: period_ns,
                                    break_above_ns: None,
                                }) as Box<dyn Probe>,
                                settings: settings.clone(),
                                dma_latency_us: dma,
                                loads,
                                isolate: if isolated {
                                    base.cpus.clone()
                                } else {
                                    Vec::new()
                                },
                                trace: trace.clone(),
                            });
                        }
                    }
                }
            }
        }
    }
    let output = plan::resolve_output(&args.output, &args.common.raw)?;
    Ok((
        Plan {
            scenarios,
            output,
            warnings,
            suite: Some(crate::result::SuiteInfo {
                title: spec.title.clone(),
                columns: spec.columns.clone(),
            }),
        },
        spec,
    ))
}
