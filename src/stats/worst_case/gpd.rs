//! The generalized Pareto distribution of excesses over a threshold (peaks over threshold):
//! its negative log-likelihood, maximum-likelihood fit, return levels and their profile
//! likelihood (Coles 2001, ch. 4). Excesses are given scaled (divided by their mean), so
//! the optimizer works on numbers near 1.

use super::optimize::{minimize, thinned, IMPOSSIBLE};

/// Above this many values a fit starts from the fit of a thinned copy.
pub const THIN_ABOVE: usize = 4000;

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

/// The maximum-likelihood fit and its negative log-likelihood (`sorted` excesses: a long
/// series is first fitted thinned, then once from there).
pub fn fit(sorted: &[f64]) -> (Gpd, f64) {
    let f = |p: &[f64]| nll(sorted, p[0].exp(), p[1]);
    let (p, v) = if sorted.len() > THIN_ABOVE {
        let (g, _) = fit(&thinned(sorted, THIN_ABOVE / 2));
        minimize(f, &[g.scale.ln(), g.shape], 0.02)
    } else {
        let mut best = (vec![0.0, 0.0], IMPOSSIBLE);
        for xi in [0.1, -0.3, 0.4] {
            let found = minimize(f, &[0.0, xi], 0.2);
            if found.1 < best.1 {
                best = found;
            }
        }
        best
    };
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

/// The exponential fit (ξ fixed at 0): σ is the mean excess.
pub fn fit_exponential(excesses: &[f64]) -> (Gpd, f64) {
    let scale = excesses.iter().sum::<f64>() / excesses.len() as f64;
    let g = Gpd { scale, shape: 0.0 };
    (g, nll(excesses, scale, 0.0))
}

/// The profile negative log-likelihood of the excess level `level` at `ratio`: the
/// minimum over ξ with σ tied to the level, from the fit's shape `start` and from ξ = 0
/// (a bounded start can put the largest excess outside the support of a low level, where
/// every trial is impossible; ξ = 0 has no upper end). With `fixed` the shape stays 0 and
/// the level fixes σ.
pub fn profile_nll(excesses: &[f64], level: f64, ratio: f64, start: f64, fixed: bool) -> f64 {
    if level <= 0.0 {
        return IMPOSSIBLE;
    }
    if fixed {
        return nll(excesses, level / growth(ratio, 0.0), 0.0);
    }
    let f = |p: &[f64]| {
        let g = growth(ratio, p[0]);
        if g <= 0.0 {
            return IMPOSSIBLE;
        }
        nll(excesses, level / g, p[0])
    };
    let (_, a) = minimize(f, &[start], 0.1);
    if start == 0.0 {
        return a;
    }
    a.min(minimize(f, &[0.0], 0.1).1)
}

/// The profile negative log-likelihood at shape `shape` (σ free).
pub fn profile_shape_nll(excesses: &[f64], shape: f64) -> f64 {
    let mean = excesses.iter().sum::<f64>() / excesses.len() as f64;
    let f = |p: &[f64]| nll(excesses, p[0].exp(), shape);
    minimize(f, &[mean.ln()], 0.2).1
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
