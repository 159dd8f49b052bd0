//! The generalized extreme value distribution of block maxima: its negative
//! log-likelihood, maximum-likelihood fit, return levels and their profile likelihood
//! (Coles 2001, ch. 3). Maxima are given standardized (minus their mean, over their
//! standard deviation), so the optimizer works on numbers near 1.

use super::optimize::{minimize, IMPOSSIBLE};

const XI_ZERO: f64 = 1e-7;

/// Fitted GEV: location μ, scale σ, shape ξ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gev {
    pub location: f64,
    pub scale: f64,
    pub shape: f64,
}

/// The negative log-likelihood of `maxima` under GEV(μ, σ, ξ); ξ ≤ −1 is excluded.
pub fn nll(maxima: &[f64], g: Gev) -> f64 {
    let Gev {
        location,
        scale,
        shape,
    } = g;
    if scale <= 0.0 || shape <= -1.0 || !scale.is_finite() || !shape.is_finite() {
        return IMPOSSIBLE;
    }
    let n = maxima.len() as f64;
    let mut sum = n * scale.ln();
    for &z in maxima {
        let s = (z - location) / scale;
        if shape.abs() < XI_ZERO {
            sum += s + (-s).exp();
        } else {
            let t = 1.0 + shape * s;
            if t <= 0.0 {
                return IMPOSSIBLE;
            }
            sum += (1.0 + 1.0 / shape) * t.ln() + t.powf(-1.0 / shape);
        }
    }
    sum
}

/// The maximum-likelihood fit (from the Gumbel moment estimates) and its value.
pub fn fit(maxima: &[f64]) -> (Gev, f64) {
    let n = maxima.len() as f64;
    let mean = maxima.iter().sum::<f64>() / n;
    let var = maxima.iter().map(|z| (z - mean).powi(2)).sum::<f64>() / n;
    let scale0 = (6.0 * var).sqrt() / std::f64::consts::PI;
    let loc0 = mean - 0.5772 * scale0;
    let f = |p: &[f64]| {
        nll(
            maxima,
            Gev {
                location: p[0],
                scale: p[1].exp(),
                shape: p[2],
            },
        )
    };
    let mut best = (vec![loc0, scale0.ln(), 0.0], IMPOSSIBLE);
    for xi in [0.1, -0.2, 0.4] {
        let found = minimize(f, &[loc0, scale0.ln(), xi], 0.2);
        if found.1 < best.1 {
            best = found;
        }
    }
    let p = best.0;
    let g = Gev {
        location: p[0],
        scale: p[1].exp(),
        shape: p[2],
    };
    (g, best.1)
}

/// `(1 − y^(−ξ)) / ξ` with y = −ln(1 − q), its limit −ln y at ξ = 0: the return level is
/// μ − σ × this.
fn reduced(q: f64, shape: f64) -> f64 {
    let ln_y = (-(-q).ln_1p()).ln();
    if shape.abs() < XI_ZERO {
        -ln_y
    } else {
        -(-shape * ln_y).exp_m1() / shape
    }
}

/// The block maximum exceeded with probability `q` per block.
pub fn return_level(g: Gev, q: f64) -> f64 {
    g.location - g.scale * reduced(q, g.shape)
}

/// The profile negative log-likelihood of the return level `level` at `q`: the minimum
/// over (σ, ξ) with μ tied to the level, from the fit `start`.
pub fn profile_nll(maxima: &[f64], level: f64, q: f64, start: Gev) -> f64 {
    let f = |p: &[f64]| {
        let (scale, shape) = (p[0].exp(), p[1]);
        let location = level + scale * reduced(q, shape);
        nll(
            maxima,
            Gev {
                location,
                scale,
                shape,
            },
        )
    };
    minimize(f, &[start.scale.ln(), start.shape], 0.1).1
}

/// The profile negative log-likelihood at shape `shape` (μ, σ free).
pub fn profile_shape_nll(maxima: &[f64], shape: f64, start: Gev) -> f64 {
    let f = |p: &[f64]| {
        nll(
            maxima,
            Gev {
                location: p[0],
                scale: p[1].exp(),
                shape,
            },
        )
    };
    minimize(f, &[start.location, start.scale.ln()], 0.2).1
}

/// The fitted distribution function.
pub fn cdf(g: Gev, z: f64) -> f64 {
    let s = (z - g.location) / g.scale;
    if g.shape.abs() < XI_ZERO {
        return (-(-s).exp()).exp();
    }
    let t = 1.0 + g.shape * s;
    if t <= 0.0 {
        return if g.shape > 0.0 { 0.0 } else { 1.0 };
    }
    (-t.powf(-1.0 / g.shape)).exp()
}
