//! The two fitted tails behind one interface, in nanoseconds: peaks over threshold (GPD on
//! the excesses, or on the cluster maxima's) and block maxima (GEV); a bounded fit the
//! light-tail check does not confirm has its intervals widened to hold the exponential
//! (Gumbel) tail's, fitted with the shape fixed at 0. Each keeps its data scaled for the
//! optimizer and maps levels, intervals and plot points back to ns.

use super::ad_table::{self, Model};
use super::checks::anderson_darling;
use super::region::{Quadratic, PROFILE_MAX};
use super::{gev, gpd, Check, Fit};
use statrs::distribution::{ChiSquared, ContinuousCDF};

/// The χ²₁ quantile a 95 % likelihood interval or a 5 % likelihood-ratio test uses.
pub fn chi2_95() -> f64 {
    ChiSquared::new(1.0).map_or(3.841_458_820_694_124, |c| c.inverse_cdf(0.95))
}

/// The one-sided 1 % likelihood-ratio limit for the sign of ξ (χ²₁ at 0.98): a heavy (or
/// a bounded) tail is declared at the level the checks refuse at.
pub fn one_sided_limit() -> f64 {
    ChiSquared::new(1.0).map_or(5.411_894_431_054_4, |c| c.inverse_cdf(0.98))
}

/// A fitted tail.
pub trait Tail {
    /// The latency exceeded with probability `p` per sample, ns (MLE).
    fn level(&self, p: f64) -> f64;
    /// Its 95 % interval, ns (profile likelihood; its quadratic approximation above
    /// `PROFILE_MAX` values).
    fn interval(&self, p: f64) -> Interval;
    /// The likelihood-ratio statistic of ξ = 0 against the fitted ξ (0 with the shape fixed).
    fn shape_lr(&self) -> f64;
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
    /// How many values were fitted.
    fn values(&self) -> usize;
}

/// ξ > 0 significantly (one-sided likelihood ratio against ξ = 0 at 1 %).
pub fn heavy<T: Tail>(t: &T) -> bool {
    t.fit().shape > 0.0 && t.shape_lr() > one_sided_limit()
}

/// The smallest interval holding both (an open end stays open).
fn union(a: Interval, b: Interval) -> Interval {
    let lower = a.0.zip(b.0).map(|(x, y)| x.min(y));
    let upper = a.1.zip(b.1).map(|(x, y)| x.max(y));
    (lower, upper)
}

/// A 95 % interval's ends, ns; None where the likelihood does not close.
pub type Interval = (Option<f64>, Option<f64>);

/// Plotting positions (i − 0.5)/n of n sorted values.
fn positions(n: usize) -> impl Iterator<Item = f64> {
    (0..n).map(move |i| (i as f64 + 0.5) / n as f64)
}

/// Peaks over threshold: the GPD of excesses (or cluster maxima's excesses) over
/// `threshold`.
pub struct Pot {
    pub threshold: f64,
    /// Fitted values (exceedances or clusters) per sample.
    pub rate: f64,
    /// Excesses over the threshold / `unit`, sorted.
    scaled: Vec<f64>,
    unit: f64,
    g: gpd::Gpd,
    nll_min: f64,
    fixed: bool,
    /// The exponential tail whose intervals these also hold (the light-tail check).
    also: Option<Box<Pot>>,
    pub rule: String,
}

impl Pot {
    /// The intervals widened to hold the exponential tail's too.
    pub fn widen(&mut self) {
        self.also = Some(Box::new(self.exponential()));
    }

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
            fixed: false,
            also: None,
            rule,
        }
    }

    /// The same excesses with the shape fixed at 0 (exponential).
    pub fn exponential(&self) -> Self {
        let (g, nll_min) = gpd::fit_exponential(&self.scaled);
        Self {
            scaled: self.scaled.clone(),
            rule: self.rule.clone(),
            g,
            nll_min,
            fixed: true,
            also: None,
            ..*self
        }
    }

    /// The excesses in ns, sorted.
    pub fn excesses(&self) -> Vec<f64> {
        self.scaled.iter().map(|y| y * self.unit).collect()
    }

    fn nll(&self) -> impl Fn(&[f64]) -> f64 + '_ {
        move |p: &[f64]| {
            let shape = if self.fixed { 0.0 } else { p[1] };
            gpd::nll(&self.scaled, p[0].exp(), shape)
        }
    }

    fn params(&self) -> Vec<f64> {
        let mut p = vec![self.g.scale.ln()];
        if !self.fixed {
            p.push(self.g.shape);
        }
        p
    }

    /// The 95 % interval of this fit alone.
    fn own_interval(&self, p: f64) -> Interval {
        let ratio = self.rate / p;
        let to_ns = |x: f64| self.threshold + self.unit * x;
        if self.scaled.len() > PROFILE_MAX {
            let level = |q: &[f64]| {
                let shape = if self.fixed { 0.0 } else { q[1] };
                let g = gpd::Gpd {
                    scale: q[0].exp(),
                    shape,
                };
                gpd::excess_level(g, ratio)
            };
            return match Quadratic::new(&self.nll(), &self.params()) {
                Some(quad) => {
                    let (lo, hi) = quad.range(&level, chi2_95());
                    (Some(to_ns(lo)), Some(to_ns(hi)))
                }
                None => (None, None),
            };
        }
        let hat = gpd::excess_level(self.g, ratio);
        let dev = |x: f64| {
            let prof = gpd::profile_nll(&self.scaled, x, ratio, self.g.shape, self.fixed);
            2.0 * (prof - self.nll_min)
        };
        let (lo, hi) = super::optimize::profile_interval(hat, 0.0, chi2_95(), dev);
        (lo.map(to_ns), hi.map(to_ns))
    }
}

impl Tail for Pot {
    fn level(&self, p: f64) -> f64 {
        self.threshold + self.unit * gpd::excess_level(self.g, self.rate / p)
    }
    fn interval(&self, p: f64) -> Interval {
        let own = self.own_interval(p);
        match &self.also {
            Some(also) => union(own, also.own_interval(p)),
            None => own,
        }
    }
    fn shape_lr(&self) -> f64 {
        if self.fixed {
            return 0.0;
        }
        if self.scaled.len() > PROFILE_MAX {
            return Quadratic::new(&self.nll(), &self.params())
                .map_or(0.0, |q| self.g.shape.powi(2) / q.variance(1));
        }
        2.0 * (gpd::profile_shape_nll(&self.scaled, 0.0) - self.nll_min)
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
            widened: self.also.is_some(),
        }
    }
    fn goodness(&self) -> Check {
        let model = if self.fixed {
            Model::Exponential
        } else {
            Model::Gpd
        };
        let critical = ad_table::critical(model, self.g.shape);
        let which = ad_table::describe(model, self.g.shape);
        let cdf = |y| gpd::cdf(self.g, y);
        anderson_darling("goodness of fit", &self.scaled, cdf, critical, &which)
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
    fn values(&self) -> usize {
        self.scaled.len()
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
    fixed: bool,
    /// The Gumbel tail whose intervals these also hold (the light-tail check).
    also: Option<Box<Bm>>,
    pub rule: String,
}

impl Bm {
    /// The intervals widened to hold the Gumbel tail's too.
    pub fn widen(&mut self) {
        self.also = Some(Box::new(self.gumbel()));
    }

    pub fn new(maxima: &[f64], block_size: f64, rule: String) -> Self {
        let n = maxima.len() as f64;
        let mean = maxima.iter().sum::<f64>() / n;
        let var = maxima.iter().map(|z| (z - mean).powi(2)).sum::<f64>() / n;
        let sd = if var > 0.0 { var.sqrt() } else { 1.0 };
        let mut scaled: Vec<f64> = maxima.iter().map(|z| (z - mean) / sd).collect();
        scaled.sort_by(f64::total_cmp);
        let (g, nll_min) = gev::fit(&scaled, false);
        Self {
            block_size,
            mean,
            sd,
            scaled,
            g,
            nll_min,
            fixed: false,
            also: None,
            rule,
        }
    }

    /// The same maxima with the shape fixed at 0 (Gumbel).
    pub fn gumbel(&self) -> Self {
        let (g, nll_min) = gev::fit(&self.scaled, true);
        Self {
            scaled: self.scaled.clone(),
            rule: self.rule.clone(),
            g,
            nll_min,
            fixed: true,
            also: None,
            ..*self
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

    fn gev_of(&self, p: &[f64]) -> gev::Gev {
        gev::Gev {
            location: p[0],
            scale: p[1].exp(),
            shape: if self.fixed { 0.0 } else { p[2] },
        }
    }

    fn nll(&self) -> impl Fn(&[f64]) -> f64 + '_ {
        move |p: &[f64]| gev::nll(&self.scaled, self.gev_of(p))
    }

    fn params(&self) -> Vec<f64> {
        let mut p = vec![self.g.location, self.g.scale.ln()];
        if !self.fixed {
            p.push(self.g.shape);
        }
        p
    }

    /// The 95 % interval of this fit alone.
    fn own_interval(&self, p: f64) -> Interval {
        let q = self.per_block(p);
        let to_ns = |x: f64| self.mean + self.sd * x;
        if self.scaled.len() > PROFILE_MAX {
            let level = |v: &[f64]| gev::return_level(self.gev_of(v), q);
            return match Quadratic::new(&self.nll(), &self.params()) {
                Some(quad) => {
                    let (lo, hi) = quad.range(&level, chi2_95());
                    (Some(to_ns(lo)), Some(to_ns(hi)))
                }
                None => (None, None),
            };
        }
        let hat = gev::return_level(self.g, q);
        let dev = |x: f64| {
            2.0 * (gev::profile_nll(&self.scaled, x, q, self.g, self.fixed) - self.nll_min)
        };
        let anchor = self.g.location.min(hat - self.g.scale);
        let (lo, hi) = super::optimize::profile_interval(hat, anchor, chi2_95(), dev);
        (lo.map(to_ns), hi.map(to_ns))
    }
}

impl Tail for Bm {
    fn level(&self, p: f64) -> f64 {
        self.mean + self.sd * gev::return_level(self.g, self.per_block(p))
    }
    fn interval(&self, p: f64) -> Interval {
        let own = self.own_interval(p);
        match &self.also {
            Some(also) => union(own, also.own_interval(p)),
            None => own,
        }
    }
    fn shape_lr(&self) -> f64 {
        if self.fixed {
            return 0.0;
        }
        if self.scaled.len() > PROFILE_MAX {
            return Quadratic::new(&self.nll(), &self.params())
                .map_or(0.0, |q| self.g.shape.powi(2) / q.variance(2));
        }
        2.0 * (gev::profile_shape_nll(&self.scaled, 0.0, self.g) - self.nll_min)
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
            widened: self.also.is_some(),
        }
    }
    fn goodness(&self) -> Check {
        let model = if self.fixed {
            Model::Gumbel
        } else {
            Model::Gev
        };
        let critical = ad_table::critical(model, self.g.shape);
        let which = ad_table::describe(model, self.g.shape);
        let cdf = |z| gev::cdf(self.g, z);
        anderson_darling("goodness of fit", &self.scaled, cdf, critical, &which)
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
    fn values(&self) -> usize {
        self.scaled.len()
    }
}
