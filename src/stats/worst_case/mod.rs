//! The worst case beyond the samples (extreme value theory): the latency exceeded with a
//! small probability per period, with its 95 % profile-likelihood interval, from a tail
//! fit by maximum likelihood — peaks over a threshold with a generalized Pareto
//! distribution, or block maxima with a generalized extreme value distribution (Coles,
//! "An Introduction to Statistical Modeling of Extreme Values", 2001) — and the checks
//! that decide whether the data allows it. Late samples that come in clusters are
//! declustered (the extremal index), whole-µs data is spread within its step, and a light
//! tail is checked against the exponential. Pure: numbers in, a `WorstCase` out.

mod above;
mod ad_table;
mod bm;
mod checks;
mod common;
#[cfg(test)]
mod coverage_tests;
mod decluster;
mod diagnostics;
mod estimate;
mod gev;
mod gpd;
mod optimize;
mod pot;
mod quantum;
mod region;
#[cfg(test)]
mod repro_tests;
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
    /// Also compute the return-level curve, the QQ points and the threshold diagnostics for
    /// plots, and (samples in time order) the estimate against the number of samples.
    pub plot: bool,
    /// Only the 10⁻⁶-per-period estimate (the convergence points and the neighbouring
    /// choices need no more).
    pub first_only: bool,
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
    /// How far the estimate reaches beyond the data: the periods in which it is exceeded
    /// once on average, over the samples measured (above `EXTRAPOLATION_WARN`: said).
    #[serde(default)]
    pub extrapolation: f64,
}

/// Beyond this many times the data an estimate is marked as a far extrapolation.
pub const EXTRAPOLATION_WARN: f64 = 1e6;

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
    /// A bounded fit (ξ < 0) the light-tail check did not confirm: its intervals were
    /// widened to hold the exponential (Gumbel) tail's as well.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub widened: bool,
}

/// Late samples in clusters: what declustering found (peaks over threshold).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Clusters {
    /// θ in (0, 1], Ferro and Segers' intervals estimator: 1 / the mean cluster size in
    /// the limit; a sample exceeds a high level with probability p/θ when episodes above
    /// it start with probability p.
    pub extremal_index: f64,
    pub exceedances: u64,
    pub clusters: u64,
    /// Exceedances this many samples apart or more are in different clusters.
    pub separation: u64,
}

/// The 10⁻⁶-per-period estimate from the first `samples` samples only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Convergence {
    pub samples: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper_ns: Option<u64>,
    /// `estimate`, `heavy` or `refused: CHECKS`.
    pub status: String,
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
    /// Mean residual life: `[threshold_ns, mean excess_ns, lower_ns, upper_ns]` (95 %).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mrl: Vec<[f64; 4]>,
    /// Parameter stability: `[threshold_ns, ξ, ξ lower, ξ upper, σ* ns, σ* lower, σ*
    /// upper]` (95 %, σ* = σ − ξ·threshold, constant above a threshold the GPD holds at).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stability: Vec<[f64; 7]>,
}

/// The worst-case estimate of one series (the JSON `worst_case` object of a thread).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorstCase {
    pub method: Method,
    /// `samples` (every sample in time order) or `per-second maxima`.
    pub input: String,
    pub samples: u64,
    pub observed_max_ns: u64,
    /// The values sat on a grid of this many ns with ties (whole µs): each was spread
    /// uniformly within its step (fixed seed) before fitting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<Fit>,
    /// The exceedances came in clusters and their maxima were fitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clusters: Option<Clusters>,
    pub checks: Vec<Check>,
    pub estimates: Vec<Estimate>,
    /// Null, or why no estimate is shown.
    pub refused: Option<String>,
    /// The fitted tail is heavy (ξ > 0 significantly: likelihood ratio against ξ = 0, or
    /// the excesses' coefficient of variation above 1, one-sided at 1 %): no finite worst
    /// case. Said of a refused fit too.
    pub unbounded: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plot: Option<Plot>,
    /// The estimate from the first tenth, two tenths, ... of the samples (samples in time
    /// order), so a reader sees whether it has settled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub convergence: Vec<Convergence>,
}

/// The words shown instead of a number for a heavy tail.
pub const UNBOUNDED_WORDS: &str = "no finite worst case can be estimated from these samples: the fitted tail is heavy (shape ξ > 0, shown at 1 %), so larger latencies stay possible at every probability";

impl WorstCase {
    /// A refusal before any fit (wrong input for the method, too little data).
    pub fn refused(method: Method, input: &str, samples: u64, max: u64, reason: String) -> Self {
        Self {
            method,
            input: input.into(),
            samples,
            observed_max_ns: max,
            quantum_ns: None,
            fit: None,
            clusters: None,
            checks: Vec::new(),
            estimates: Vec::new(),
            refused: Some(reason),
            unbounded: false,
            plot: None,
            convergence: Vec::new(),
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
