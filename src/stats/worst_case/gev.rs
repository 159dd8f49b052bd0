//! The generalized extreme value distribution of block maxima: its negative
//! log-likelihood, maximum-likelihood fit, return levels and their profile likelihood
//! (Coles 2001, ch. 3). Maxima are given standardized (minus their mean, over their
//! standard deviation), so the optimizer works on numbers near 1.

use super::optimize::{minimize, thinned, IMPOSSIBLE};

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
            // t^(−1/ξ) as exp(−ln t / ξ): ln t is needed anyway, and `powf` costs several
            // times `exp` here (most of the time of 10⁵ per-second maxima, bench/README.md).
            let ln_t = t.ln();
            sum += (1.0 + 1.0 / shape) * ln_t + (-ln_t / shape).exp();
        }
    }
    sum
}

fn from_params(p: &[f64], shape: Option<f64>) -> Gev {
    Gev {
        location: p[0],
        scale: p[1].exp(),
        shape: shape.unwrap_or_else(|| p[2]),
    }
}

/// The Gumbel moment estimates (location, ln scale) of `maxima`.
fn moments(maxima: &[f64]) -> (f64, f64) {
    let n = maxima.len() as f64;
    let mean = maxima.iter().sum::<f64>() / n;
    let var = maxima.iter().map(|z| (z - mean).powi(2)).sum::<f64>() / n;
    let scale0 = ((6.0 * var).sqrt() / std::f64::consts::PI).max(1e-6);
    (mean - 0.5772 * scale0, scale0.ln())
}

/// The maximum-likelihood fit (from the Gumbel moment estimates) and its value; with
/// `fixed` the shape stays 0 (Gumbel). `sorted` maxima: a long series is first fitted
/// thinned, then once from there.
pub fn fit(sorted: &[f64], fixed: bool) -> (Gev, f64) {
    let shape = fixed.then_some(0.0);
    let f = |p: &[f64]| nll(sorted, from_params(p, shape));
    let (p, v) = if sorted.len() > super::gpd::THIN_ABOVE {
        let (g, _) = fit(&thinned(sorted, super::gpd::THIN_ABOVE / 2), fixed);
        let mut start = vec![g.location, g.scale.ln()];
        if !fixed {
            start.push(g.shape);
        }
        minimize(f, &start, 0.02)
    } else {
        let (loc0, ln_scale0) = moments(sorted);
        let starts: &[f64] = if fixed { &[0.0] } else { &[0.1, -0.2, 0.4] };
        let mut best = (vec![loc0, ln_scale0, 0.0], IMPOSSIBLE);
        for &xi in starts {
            let mut start = vec![loc0, ln_scale0];
            if !fixed {
                start.push(xi);
            }
            let found = minimize(f, &start, 0.2);
            if found.1 < best.1 {
                best = found;
            }
        }
        best
    };
    (from_params(&p, shape), v)
}

/// `(1 − y^(−ξ)) / ξ` with y = −ln(1 − q), its limit ln y at ξ = 0: the return level is
/// μ − σ × this.
fn reduced(q: f64, shape: f64) -> f64 {
    let ln_y = (-(-q).ln_1p()).ln();
    if shape.abs() < XI_ZERO {
        ln_y
    } else {
        -(-shape * ln_y).exp_m1() / shape
    }
}

/// The block maximum exceeded with probability `q` per block.
pub fn return_level(g: Gev, q: f64) -> f64 {
    g.location - g.scale * reduced(q, g.shape)
}

/// The smallest scale at which every maximum lies inside the support of the GEV with
/// shape `shape` and return level `level` at `q` (0: any scale).
fn feasible_scale(maxima: &[f64], level: f64, q: f64, shape: f64) -> f64 {
    let (lo, hi) = (maxima[0], maxima[maxima.len() - 1]);
    // The support's end is level + σ·(reduced − 1/ξ): below for ξ > 0, above for ξ < 0.
    let end = reduced(q, shape) - 1.0 / shape;
    if shape > XI_ZERO && end < 0.0 && level > lo {
        (level - lo) / -end
    } else if shape < -XI_ZERO && end > 0.0 && level < hi {
        (hi - level) / end
    } else {
        0.0
    }
}

/// The profile negative log-likelihood of the return level `level` at `q`: the minimum
/// over (σ, ξ) with μ tied to the level. It starts from the fit `start` and from the
/// smallest scale inside the support at the fit's shape and at ξ = 0 (a level far from
/// the fit puts data outside the support of the fit's own scale, where every trial is
/// impossible and the minimum would not be searched at all). With `fixed` the shape stays
/// 0. `maxima` sorted.
pub fn profile_nll(maxima: &[f64], level: f64, q: f64, start: Gev, fixed: bool) -> f64 {
    let shape_of = |p: &[f64]| if fixed { 0.0 } else { p[1] };
    let f = |p: &[f64]| {
        let (scale, shape) = (p[0].exp(), shape_of(p));
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
    let shapes: &[f64] = if fixed { &[0.0] } else { &[start.shape, 0.0] };
    let mut best = IMPOSSIBLE;
    for &xi in shapes {
        let floor = feasible_scale(maxima, level, q, xi);
        let scales = [start.scale, 1.5 * floor, 4.0 * floor];
        for s in scales.into_iter().filter(|&s| s > floor && s > 0.0) {
            let p: Vec<f64> = if fixed {
                vec![s.ln()]
            } else {
                vec![s.ln(), xi]
            };
            if f(&p) < IMPOSSIBLE {
                best = best.min(minimize(f, &p, 0.1).1);
                break;
            }
        }
    }
    best
}

/// The profile negative log-likelihood at shape `shape` (μ, σ free).
pub fn profile_shape_nll(maxima: &[f64], shape: f64, start: Gev) -> f64 {
    let f = |p: &[f64]| nll(maxima, from_params(p, Some(shape)));
    let (loc0, ln_scale0) = moments(maxima);
    let a = minimize(f, &[start.location, start.scale.ln()], 0.2).1;
    a.min(minimize(f, &[loc0, ln_scale0], 0.2).1)
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
    (-(-t.ln() / g.shape).exp()).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gumbel_return_level_is_the_limit_of_the_gev_one() {
        // μ − σ ln(−ln(1 − q)) at ξ = 0, and the GEV's tends to it.
        let q = 1e-3;
        let gumbel = return_level(
            Gev {
                location: 10.0,
                scale: 2.0,
                shape: 0.0,
            },
            q,
        );
        let want = 10.0 - 2.0 * (-(-q).ln_1p()).ln();
        assert!((gumbel - want).abs() < 1e-9, "{gumbel} for {want}");
        for shape in [1e-5, -1e-5] {
            let near = return_level(
                Gev {
                    location: 10.0,
                    scale: 2.0,
                    shape,
                },
                q,
            );
            assert!((near - gumbel).abs() < 1e-3, "{near} at ξ = {shape}");
        }
    }
}
