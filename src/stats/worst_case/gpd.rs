//! The generalized Pareto distribution of excesses over a threshold (peaks over threshold):
//! its negative log-likelihood, maximum-likelihood fit, return levels and their profile
//! likelihood (Coles 2001, ch. 4). Excesses are given scaled (divided by their mean), so
//! the optimizer works on numbers near 1.

use super::optimize::{minimize, IMPOSSIBLE};

/// Below this |ξ| the exponential limit is used.
const XI_ZERO: f64 = 1e-7;

/// Fitted GPD: scale σ and shape ξ of the excesses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gpd {
    pub scale: f64,
    pub shape: f64,
}

/// The negative log-likelihood of `excesses` (all > 0) under GPD(σ, ξ); ξ ≤ −1 is
/// excluded (the likelihood is unbounded there).
pub fn nll(excesses: &[f64], scale: f64, shape: f64) -> f64 {
    if scale <= 0.0 || shape <= -1.0 || !scale.is_finite() || !shape.is_finite() {
        return IMPOSSIBLE;
    }
    let n = excesses.len() as f64;
    if shape.abs() < XI_ZERO {
        return n * scale.ln() + excesses.iter().sum::<f64>() / scale;
    }
    let mut sum = 0.0;
    for &y in excesses {
        let t = 1.0 + shape * y / scale;
        if t <= 0.0 {
            return IMPOSSIBLE;
        }
        sum += t.ln();
    }
    n * scale.ln() + (1.0 + 1.0 / shape) * sum
}

/// The maximum-likelihood fit and its negative log-likelihood.
pub fn fit(excesses: &[f64]) -> (Gpd, f64) {
    let f = |p: &[f64]| nll(excesses, p[0].exp(), p[1]);
    let starts = [0.1, -0.3, 0.4];
    let mut best = (vec![0.0, 0.0], IMPOSSIBLE);
    for xi in starts {
        let found = minimize(f, &[0.0, xi], 0.2);
        if found.1 < best.1 {
            best = found;
        }
    }
    let (p, v) = best;
    (
        Gpd {
            scale: p[0].exp(),
            shape: p[1],
        },
        v,
    )
}

/// `((r^ξ) − 1) / ξ`, its limit ln r at ξ = 0.
fn growth(r: f64, shape: f64) -> f64 {
    if shape.abs() < XI_ZERO {
        r.ln()
    } else {
        (shape * r.ln()).exp_m1() / shape
    }
}

/// The excess exceeded with probability `ratio⁻¹` among excesses: for a tail probability p
/// and exceedance rate ζ, `ratio` = ζ / p.
pub fn excess_level(g: Gpd, ratio: f64) -> f64 {
    g.scale * growth(ratio, g.shape)
}

/// The profile negative log-likelihood of the excess level `level` at `ratio`: the
/// minimum over ξ with σ tied to the level, from the fit's shape `start`.
pub fn profile_nll(excesses: &[f64], level: f64, ratio: f64, start: f64) -> f64 {
    if level <= 0.0 {
        return IMPOSSIBLE;
    }
    let f = |p: &[f64]| {
        let g = growth(ratio, p[0]);
        if g <= 0.0 {
            return IMPOSSIBLE;
        }
        nll(excesses, level / g, p[0])
    };
    minimize(f, &[start], 0.1).1
}

/// The profile negative log-likelihood at shape `shape` (σ free).
pub fn profile_shape_nll(excesses: &[f64], shape: f64) -> f64 {
    let f = |p: &[f64]| nll(excesses, p[0].exp(), shape);
    minimize(f, &[0.0], 0.2).1
}

/// The fitted distribution function of an excess.
pub fn cdf(g: Gpd, y: f64) -> f64 {
    if y <= 0.0 {
        return 0.0;
    }
    if g.shape.abs() < XI_ZERO {
        return -(-y / g.scale).exp_m1();
    }
    let t = 1.0 + g.shape * y / g.scale;
    if t <= 0.0 {
        return 1.0;
    }
    1.0 - t.powf(-1.0 / g.shape)
}
