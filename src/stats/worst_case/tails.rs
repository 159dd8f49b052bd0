//! The two fitted tails behind one interface, in nanoseconds: peaks over threshold (GPD on
//! the excesses) and block maxima (GEV). Each keeps its data scaled for the optimizer and
//! maps levels, intervals and plot points back to ns.

use super::checks::anderson_darling;
use super::{gev, gpd, Check, Fit};
use statrs::distribution::{ChiSquared, ContinuousCDF};

/// The χ²₁ quantile a 95 % likelihood interval or a 5 % likelihood-ratio test uses.
pub fn chi2_95() -> f64 {
    ChiSquared::new(1.0).map_or(3.841_458_820_694_124, |c| c.inverse_cdf(0.95))
}

/// The one-sided 1 % likelihood-ratio limit for ξ > 0 (χ²₁ at 0.98): a heavy tail is
/// declared at the level the checks refuse at.
pub fn heavy_limit() -> f64 {
    ChiSquared::new(1.0).map_or(5.411_894_431_054_4, |c| c.inverse_cdf(0.98))
}

/// A fitted tail.
pub trait Tail {
    /// The latency exceeded with probability `p` per sample, ns (MLE).
    fn level(&self, p: f64) -> f64;
    /// Its 95 % profile-likelihood interval, ns.
    fn interval(&self, p: f64) -> (Option<f64>, Option<f64>);
    /// ξ > 0, significantly (one-sided likelihood ratio against ξ = 0 at 1 %).
    fn heavy(&self) -> bool;
    /// The fitted parameters in ns.
    fn fit(&self) -> Fit;
    /// Anderson-Darling of the fitted data against the fit.
    fn goodness(&self) -> Check;
    /// The largest per-sample probability the fit speaks for.
    fn p_max(&self) -> f64;
    /// The fitted data at their empirical per-sample probability, ns.
    fn observed(&self) -> Vec<[f64; 2]>;
    /// QQ pairs (model, observed), ns.
    fn qq(&self) -> Vec<[f64; 2]>;
}

/// Plotting positions (i − 0.5)/n of n sorted values.
fn positions(n: usize) -> impl Iterator<Item = f64> {
    (0..n).map(move |i| (i as f64 + 0.5) / n as f64)
}

/// Peaks over threshold: the GPD of excesses over `threshold`.
pub struct Pot {
    pub threshold: f64,
    /// k / n.
    pub rate: f64,
    /// Excesses over the threshold / `unit`, sorted.
    scaled: Vec<f64>,
    unit: f64,
    g: gpd::Gpd,
    nll_min: f64,
    pub rule: String,
}

impl Pot {
    pub fn new(threshold: f64, excesses: &[f64], samples: usize, rule: String) -> Self {
        let unit = excesses.iter().sum::<f64>() / excesses.len() as f64;
        let mut scaled: Vec<f64> = excesses.iter().map(|y| y / unit).collect();
        scaled.sort_by(f64::total_cmp);
        let (g, nll_min) = gpd::fit(&scaled);
        Self {
            threshold,
            rate: excesses.len() as f64 / samples as f64,
            scaled,
            unit,
            g,
            nll_min,
            rule,
        }
    }
}

impl Tail for Pot {
    fn level(&self, p: f64) -> f64 {
        self.threshold + self.unit * gpd::excess_level(self.g, self.rate / p)
    }
    fn interval(&self, p: f64) -> (Option<f64>, Option<f64>) {
        let ratio = self.rate / p;
        let hat = gpd::excess_level(self.g, ratio);
        let dev =
            |x: f64| 2.0 * (gpd::profile_nll(&self.scaled, x, ratio, self.g.shape) - self.nll_min);
        let (lo, hi) = super::optimize::profile_interval(hat, 0.0, chi2_95(), dev);
        let to_ns = |x: f64| self.threshold + self.unit * x;
        (lo.map(to_ns), hi.map(to_ns))
    }
    fn heavy(&self) -> bool {
        self.g.shape > 0.0
            && 2.0 * (gpd::profile_shape_nll(&self.scaled, 0.0) - self.nll_min) > heavy_limit()
    }
    fn fit(&self) -> Fit {
        Fit {
            rule: self.rule.clone(),
            threshold_ns: Some(self.threshold.round() as u64),
            exceedances: Some(self.scaled.len() as u64),
            block_size: None,
            blocks: None,
            location_ns: None,
            scale_ns: self.g.scale * self.unit,
            shape: self.g.shape,
        }
    }
    fn goodness(&self) -> Check {
        anderson_darling("goodness of fit", &self.scaled, |y| gpd::cdf(self.g, y))
    }
    fn p_max(&self) -> f64 {
        self.rate
    }
    fn observed(&self) -> Vec<[f64; 2]> {
        let k = self.scaled.len();
        self.scaled
            .iter()
            .zip(positions(k))
            .map(|(y, f)| [self.rate * (1.0 - f), self.threshold + y * self.unit])
            .collect()
    }
    fn qq(&self) -> Vec<[f64; 2]> {
        let k = self.scaled.len();
        self.scaled
            .iter()
            .zip(positions(k))
            .map(|(y, f)| {
                let model = gpd::excess_level(self.g, 1.0 / (1.0 - f));
                [
                    self.threshold + model * self.unit,
                    self.threshold + y * self.unit,
                ]
            })
            .collect()
    }
}

/// Block maxima: the GEV of maxima of blocks of `block_size` samples.
pub struct Bm {
    pub block_size: f64,
    mean: f64,
    sd: f64,
    /// (maxima − mean) / sd, sorted.
    scaled: Vec<f64>,
    g: gev::Gev,
    nll_min: f64,
    pub rule: String,
}

impl Bm {
    pub fn new(maxima: &[f64], block_size: f64, rule: String) -> Self {
        let n = maxima.len() as f64;
        let mean = maxima.iter().sum::<f64>() / n;
        let var = maxima.iter().map(|z| (z - mean).powi(2)).sum::<f64>() / n;
        let sd = if var > 0.0 { var.sqrt() } else { 1.0 };
        let mut scaled: Vec<f64> = maxima.iter().map(|z| (z - mean) / sd).collect();
        scaled.sort_by(f64::total_cmp);
        let (g, nll_min) = gev::fit(&scaled);
        Self {
            block_size,
            mean,
            sd,
            scaled,
            g,
            nll_min,
            rule,
        }
    }

    /// The per-block probability of a per-sample probability p: 1 − (1 − p)^m.
    fn per_block(&self, p: f64) -> f64 {
        -(self.block_size * (-p).ln_1p()).exp_m1()
    }

    /// The per-sample probability of a per-block probability q.
    fn per_sample(&self, q: f64) -> f64 {
        -((-q).ln_1p() / self.block_size).exp_m1()
    }
}

impl Tail for Bm {
    fn level(&self, p: f64) -> f64 {
        self.mean + self.sd * gev::return_level(self.g, self.per_block(p))
    }
    fn interval(&self, p: f64) -> (Option<f64>, Option<f64>) {
        let q = self.per_block(p);
        let hat = gev::return_level(self.g, q);
        let dev = |x: f64| 2.0 * (gev::profile_nll(&self.scaled, x, q, self.g) - self.nll_min);
        let anchor = self.g.location.min(hat - self.g.scale);
        let (lo, hi) = super::optimize::profile_interval(hat, anchor, chi2_95(), dev);
        let to_ns = |x: f64| self.mean + self.sd * x;
        (lo.map(to_ns), hi.map(to_ns))
    }
    fn heavy(&self) -> bool {
        self.g.shape > 0.0
            && 2.0 * (gev::profile_shape_nll(&self.scaled, 0.0, self.g) - self.nll_min)
                > heavy_limit()
    }
    fn fit(&self) -> Fit {
        Fit {
            rule: self.rule.clone(),
            threshold_ns: None,
            exceedances: None,
            block_size: Some(self.block_size.round() as u64),
            blocks: Some(self.scaled.len() as u64),
            location_ns: Some(self.mean + self.sd * self.g.location),
            scale_ns: self.sd * self.g.scale,
            shape: self.g.shape,
        }
    }
    fn goodness(&self) -> Check {
        anderson_darling("goodness of fit", &self.scaled, |z| gev::cdf(self.g, z))
    }
    fn p_max(&self) -> f64 {
        self.per_sample(0.5)
    }
    fn observed(&self) -> Vec<[f64; 2]> {
        let b = self.scaled.len();
        self.scaled
            .iter()
            .zip(positions(b))
            .map(|(z, f)| [self.per_sample(1.0 - f), self.mean + self.sd * z])
            .collect()
    }
    fn qq(&self) -> Vec<[f64; 2]> {
        let b = self.scaled.len();
        self.scaled
            .iter()
            .zip(positions(b))
            .map(|(z, f)| {
                let model = gev::return_level(self.g, 1.0 - f);
                [self.mean + self.sd * model, self.mean + self.sd * z]
            })
            .collect()
    }
}
