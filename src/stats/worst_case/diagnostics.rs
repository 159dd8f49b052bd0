//! What lets a reader judge the choices behind an estimate: the threshold diagnostics of
//! peaks over threshold (Coles 2001, section 4.3.1: the mean residual life, linear in the
//! threshold above one where the GPD holds, and the parameter stability — ξ and the
//! modified scale σ* = σ − ξu constant there), and the estimate against the number of
//! samples (has it settled, or does each new part of the run move it?).

use super::above::{fitted_at, threshold_for};
use super::tails::Tail;
use super::*;

/// The 97.5 % point of the standard normal.
const Z95: f64 = 1.959_963_984_540_054;

/// `count` exceedance counts from `hi` down to `lo`, evenly on a log scale, no repeats.
fn counts(hi: usize, lo: usize, count: usize) -> Vec<usize> {
    let (a, b) = ((hi.max(2) as f64).ln(), (lo.max(2) as f64).ln());
    let mut out: Vec<usize> = (0..count)
        .map(|i| (a + (b - a) * i as f64 / (count - 1) as f64).exp().round() as usize)
        .collect();
    out.dedup();
    out
}

/// The mean excess over thresholds leaving from 10 × `k` down to 10 samples above them,
/// with its 95 % interval: `[threshold, mean excess, lower, upper]`.
fn mean_residual_life(sorted: &[f64], k: usize) -> Vec<[f64; 4]> {
    let n = sorted.len();
    counts((10 * k).min(n - 1), 10, 40)
        .into_iter()
        .map(|kk| {
            let u = threshold_for(sorted, kk);
            let ex: Vec<f64> = sorted
                .iter()
                .rev()
                .take_while(|&&x| x > u)
                .map(|x| x - u)
                .collect();
            let m = ex.len().max(1) as f64;
            let mean = ex.iter().sum::<f64>() / m;
            let sd = (ex.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / m).sqrt();
            let half = Z95 * sd / m.sqrt();
            [u, mean, mean - half, mean + half]
        })
        .collect()
}

/// ξ and σ* fitted at thresholds leaving from 4 × `k` down to `k` / 4 samples above
/// them (declustered as the estimate was), each with its 95 % interval from the GPD's
/// asymptotic covariance (Var ξ = (1+ξ)²/k, Var σ = 2σ²(1+ξ)/k, Cov = σ(1+ξ)/k: Smith
/// 1984, valid for ξ > −0.5).
fn stability(xs: &[f64], sorted: &[f64], k: usize, declustered: bool) -> Vec<[f64; 7]> {
    let n = sorted.len();
    counts((4 * k).min(n - 1), (k / 4).max(30), 12)
        .into_iter()
        .filter_map(|kk| {
            let u = threshold_for(sorted, kk);
            let f = fitted_at(xs, u, declustered, String::new());
            let m = f.tail.values() as f64;
            if m < 10.0 {
                return None;
            }
            let fit = f.tail.fit();
            let (xi, s) = (fit.shape, fit.scale_ns);
            let a = (1.0 + xi).max(0.01);
            let var_xi = a * a / m;
            let var_s = 2.0 * s * s * a / m;
            let cov = s * a / m;
            let star = s - xi * u;
            let var_star = (var_s + u * u * var_xi - 2.0 * u * cov).max(0.0);
            let (hx, hs) = (Z95 * var_xi.sqrt(), Z95 * var_star.sqrt());
            Some([u, xi, xi - hx, xi + hx, star, star - hs, star + hs])
        })
        .collect()
}

/// The threshold diagnostics of samples `xs` (time order; `sorted` the same sorted) around
/// the chosen `k` exceedances.
pub fn threshold_plots(xs: &[f64], sorted: &[f64], k: usize, declustered: bool) -> Plot {
    Plot {
        mrl: mean_residual_life(sorted, k),
        stability: stability(xs, sorted, k, declustered),
        ..Plot::default()
    }
}

/// The fewest samples a convergence point is computed from (the rule's 100 exceedances).
const CONVERGENCE_MIN: usize = MIN_EXCEEDANCES * MIN_EXCEEDANCES / 4;

/// A convergence point from an estimate.
fn point(samples: usize, wc: &WorstCase) -> Convergence {
    let e = wc.at(PROBABILITIES[0], Per::Period).filter(|_| wc.usable());
    let status = match (&wc.refused, wc.unbounded, e) {
        (Some(_), _, _) => {
            let failed: Vec<&str> = wc
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| c.name.as_str())
                .collect();
            format!("refused: {}", failed.join(", "))
        }
        (None, true, _) => "heavy".into(),
        (None, false, Some(_)) => "estimate".into(),
        (None, false, None) => "no 10⁻⁶ estimate".into(),
    };
    Convergence {
        samples: samples as u64,
        value_ns: e.map(|e| e.value_ns),
        lower_ns: e.and_then(|e| e.lower_ns),
        upper_ns: e.and_then(|e| e.upper_ns),
        status,
    }
}

/// The 10⁻⁶-per-period estimate (by `estimate`) from the first tenth, two tenths, ... of
/// `values` (time order), the whole being `whole` already.
pub fn convergence(
    values: &[u64],
    opts: &Options,
    whole: &WorstCase,
    estimate: impl Fn(&[u64], &Options) -> WorstCase,
) -> Vec<Convergence> {
    let n = values.len();
    let light = Options {
        plot: false,
        first_only: true,
        ..*opts
    };
    let mut out: Vec<Convergence> = (1..10)
        .map(|j| n * j / 10)
        .filter(|&m| m >= CONVERGENCE_MIN)
        .map(|m| point(m, &estimate(&values[..m], &light)))
        .collect();
    out.push(point(n, whole));
    out
}
