//! The worst case beyond the samples (extreme value theory): the latency exceeded with a
//! small probability per period, with its 95 % profile-likelihood interval, from a tail
//! fit by maximum likelihood — peaks over a threshold with a generalized Pareto
//! distribution, or block maxima with a generalized extreme value distribution (Coles,
//! "An Introduction to Statistical Modeling of Extreme Values", 2001) — and the checks
//! that decide whether the data allows it. Pure: numbers in, a `WorstCase` out.

mod checks;
mod estimate;
mod gev;
mod gpd;
mod optimize;
mod tails;
#[cfg(test)]
mod tests;

pub use estimate::estimate;

use serde::{Deserialize, Serialize};

/// The probabilities every estimate is given at (per period, and per hour of running).
pub const PROBABILITIES: [f64; 3] = [1e-6, 1e-9, 1e-12];

/// The fewest exceedances a peaks-over-threshold fit accepts.
pub const MIN_EXCEEDANCES: usize = 100;
/// The fewest blocks a block-maxima fit accepts.
pub const MIN_BLOCKS: usize = 50;

/// How the tail is fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Excesses over a high threshold, generalized Pareto (GPD), maximum likelihood.
    PeaksOverThreshold,
    /// Maxima of blocks of consecutive samples, generalized extreme value (GEV), maximum
    /// likelihood.
    BlockMaxima,
}

impl Method {
    pub fn label(self) -> &'static str {
        match self {
            Method::PeaksOverThreshold => "peaks over threshold, GPD, maximum likelihood",
            Method::BlockMaxima => "block maxima, GEV, maximum likelihood",
        }
    }
}

/// What the estimate is made from.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// Every sample in time order, ns.
    Samples(&'a [u64]),
    /// Maxima of consecutive blocks in time order (e.g. the per-second maxima of a run),
    /// ns, and how many samples the whole series had.
    BlockMaxima { maxima: &'a [u64], samples: u64 },
}

/// What the user chose (None: the documented rule).
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    pub method: Option<Method>,
    /// Samples per block (block maxima from samples).
    pub block_size: Option<u64>,
    /// The threshold, ns (peaks over threshold).
    pub threshold_ns: Option<u64>,
    /// The period, for the per-hour figures (None: a plain series without one).
    pub period_ns: Option<u64>,
    /// Also compute the return-level curve and the QQ points for plots.
    pub plot: bool,
}

/// One check and its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    pub passed: bool,
    pub detail: String,
}

impl Check {
    pub fn new(name: &str, passed: bool, detail: String) -> Self {
        Self {
            name: name.into(),
            passed,
            detail,
        }
    }
}

/// What a probability is counted per.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Per {
    Period,
    Hour,
}

/// The latency exceeded with `probability` per period (or per hour), with its interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub probability: f64,
    pub per: Per,
    pub value_ns: u64,
    /// The 95 % interval's ends; null where the profile likelihood does not close (the
    /// data allows any larger value).
    pub lower_ns: Option<u64>,
    pub upper_ns: Option<u64>,
}

/// The fitted tail: the threshold (or block size) used and the parameters, in ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// The rule that chose the threshold or block size, in words.
    pub rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exceedances: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location_ns: Option<f64>,
    pub scale_ns: f64,
    /// ξ: below 0 a bounded tail, 0 exponential-like, above 0 heavy.
    pub shape: f64,
}

/// Points for the plots: the return-level curve with its band, the observed tail at its
/// empirical probability, and the QQ pairs (model quantile, observed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Plot {
    /// `[probability per period, value_ns, lower_ns, upper_ns]` (NaN-free: a missing end
    /// is the value itself).
    pub curve: Vec<[f64; 4]>,
    /// `[probability per period, value_ns]`.
    pub observed: Vec<[f64; 2]>,
    /// `[model_ns, observed_ns]`.
    pub qq: Vec<[f64; 2]>,
}

/// The worst-case estimate of one series (the JSON `worst_case` object of a thread).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorstCase {
    pub method: Method,
    /// `samples` (every sample in time order) or `per-second maxima`.
    pub input: String,
    pub samples: u64,
    pub observed_max_ns: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<Fit>,
    pub checks: Vec<Check>,
    pub estimates: Vec<Estimate>,
    /// Null, or why no estimate is shown.
    pub refused: Option<String>,
    /// The fitted tail is heavy (ξ > 0, one-sided likelihood-ratio test at 1 %): no finite
    /// worst case.
    pub unbounded: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plot: Option<Plot>,
}

/// The words shown instead of a number for a heavy tail.
pub const UNBOUNDED_WORDS: &str = "no finite worst case can be estimated from these samples: the fitted tail is heavy (shape ξ > 0), so larger latencies stay possible at every probability";

impl WorstCase {
    /// A refusal before any fit (wrong input for the method, too little data).
    pub fn refused(method: Method, input: &str, samples: u64, max: u64, reason: String) -> Self {
        Self {
            method,
            input: input.into(),
            samples,
            observed_max_ns: max,
            fit: None,
            checks: Vec::new(),
            estimates: Vec::new(),
            refused: Some(reason),
            unbounded: false,
            plot: None,
        }
    }

    /// Whether estimates are shown (every check passed, bounded tail).
    pub fn usable(&self) -> bool {
        self.refused.is_none() && !self.unbounded && !self.estimates.is_empty()
    }

    /// The estimate at `probability` per `per`.
    pub fn at(&self, probability: f64, per: Per) -> Option<&Estimate> {
        self.estimates
            .iter()
            .find(|e| e.per == per && (e.probability / probability - 1.0).abs() < 1e-9)
    }
}
