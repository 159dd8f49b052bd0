//! The numerics every tail fit shares, on argmin's solvers: a Nelder-Mead minimum of a
//! negative log-likelihood, its observed information (the Hessian, by central
//! differences), and the profile-likelihood interval of a return level (where the
//! profile's deviance crosses the χ² quantile, found by Brent's root finder).

use argmin::core::{CostFunction, Error, Executor, State};
use argmin::solver::brent::BrentRoot;
use argmin::solver::neldermead::NelderMead;

/// A value no likelihood reaches: outside a model's support.
pub const IMPOSSIBLE: f64 = 1e300;

struct Cost<F>(F);

impl<F: Fn(&[f64]) -> f64> CostFunction for Cost<F> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, p: &Self::Param) -> Result<f64, Error> {
        let v = (self.0)(p);
        Ok(if v.is_finite() { v } else { IMPOSSIBLE })
    }
}

/// The minimum of `f` from `start` (a simplex of `start` and one step along each axis):
/// the parameters and the value. The simplex stops when its values spread less than
/// 10⁻⁹, or 10⁻¹³ of the value (a likelihood of 10⁵ values is a sum of 10⁵ terms: its
/// last digits are rounding).
pub fn minimize(f: impl Fn(&[f64]) -> f64, start: &[f64], step: f64) -> (Vec<f64>, f64) {
    let at_start = f(start);
    let tolerance = if at_start < IMPOSSIBLE {
        (at_start.abs() * 1e-13).max(1e-9)
    } else {
        1e-9
    };
    let mut simplex = vec![start.to_vec()];
    for i in 0..start.len() {
        let mut p = start.to_vec();
        p[i] += step;
        simplex.push(p);
    }
    let solver = NelderMead::new(simplex)
        .with_sd_tolerance(tolerance)
        .expect("a positive tolerance");
    match Executor::new(Cost(f), solver)
        .configure(|s| s.max_iters(2000))
        .run()
    {
        Ok(res) => {
            let state = res.state();
            let best = state.get_best_param().cloned().unwrap_or(start.to_vec());
            (best, state.get_best_cost())
        }
        Err(_) => (start.to_vec(), IMPOSSIBLE),
    }
}

/// The Hessian of `f` at `x` by central differences with steps `h` (one per parameter).
pub fn hessian(f: &impl Fn(&[f64]) -> f64, x: &[f64], h: &[f64]) -> Vec<Vec<f64>> {
    let d = x.len();
    let at = |steps: &[(usize, f64)]| {
        let mut p = x.to_vec();
        for &(i, s) in steps {
            p[i] += s * h[i];
        }
        f(&p)
    };
    let f0 = f(x);
    let mut out = vec![vec![0.0; d]; d];
    for i in 0..d {
        out[i][i] = (at(&[(i, 1.0)]) - 2.0 * f0 + at(&[(i, -1.0)])) / (h[i] * h[i]);
        for j in 0..i {
            let v = (at(&[(i, 1.0), (j, 1.0)])
                - at(&[(i, 1.0), (j, -1.0)])
                - at(&[(i, -1.0), (j, 1.0)])
                + at(&[(i, -1.0), (j, -1.0)]))
                / (4.0 * h[i] * h[j]);
            out[i][j] = v;
            out[j][i] = v;
        }
    }
    out
}

/// Every `stride`-th of `sorted` (values spread over the whole range): a fit on it starts
/// the fit on all of them near its end, so a long series costs a few passes, not hundreds.
pub fn thinned(sorted: &[f64], keep: usize) -> Vec<f64> {
    let stride = sorted.len().div_ceil(keep.max(1)).max(1);
    sorted
        .iter()
        .skip(stride / 2)
        .step_by(stride)
        .copied()
        .collect()
}

struct Root<F>(F);

impl<F: Fn(f64) -> f64> CostFunction for Root<F> {
    type Param = f64;
    type Output = f64;
    fn cost(&self, x: &f64) -> Result<f64, Error> {
        Ok((self.0)(*x))
    }
}

/// The root of `f` between `a` and `b` (of opposite signs), Brent's method.
fn root(f: impl Fn(f64) -> f64, a: f64, b: f64) -> Option<f64> {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    let tol = 1e-7 * (hi.abs().max(lo.abs())).max(1e-12);
    let solver = BrentRoot::new(lo, hi, tol);
    let res = Executor::new(Root(f), solver)
        .configure(|s| s.param((lo + hi) / 2.0).max_iters(200))
        .run()
        .ok()?;
    res.state().get_best_param().copied()
}

/// The 95 % profile-likelihood interval of a return level whose estimate is `hat`:
/// `deviance(x)` is 2 × (profile negative log-likelihood at x − the minimum), and the
/// interval's ends are where it crosses `limit` (the χ²₁ quantile). Candidates are
/// `anchor + (hat − anchor) × f` (`anchor` below every return level of interest: the
/// threshold, or the location), so a bound is searched on the scale of the estimate. An
/// end not found (the deviance stays below `limit` that far out) is None: unbounded.
pub fn profile_interval(
    hat: f64,
    anchor: f64,
    limit: f64,
    deviance: impl Fn(f64) -> f64,
) -> (Option<f64>, Option<f64>) {
    let span = hat - anchor;
    if span.is_nan() || span <= 0.0 {
        return (None, None);
    }
    let at = |f: f64| anchor + span * f;
    let crossing = |inner: f64, outer: f64| root(|x| deviance(x) - limit, inner, outer);
    let mut lower = None;
    let mut inner = hat;
    for k in 1..=60 {
        let outer = at(0.85f64.powi(k));
        if deviance(outer) >= limit {
            lower = crossing(inner, outer);
            break;
        }
        inner = outer;
    }
    let mut upper = None;
    inner = hat;
    for k in 1..=80 {
        let outer = at(1.25f64.powi(k));
        if deviance(outer) >= limit {
            upper = crossing(inner, outer);
            break;
        }
        inner = outer;
    }
    (lower, upper)
}
