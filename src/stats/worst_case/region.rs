//! Intervals for long series: above `PROFILE_MAX` values the log-likelihood is quadratic
//! near its maximum to within far less than the interval's width, so the 95 % region of
//! the parameters is the ellipsoid of the observed information, and a return level's
//! interval is the range of the level over it (the profile-likelihood interval of the
//! quadratic approximation; the level itself is kept exact, so the skew of far
//! extrapolation stays). A profile search costs hundreds of passes over the data per
//! interval end; this costs one Hessian. The 2×2 and 3×3 algebra is written out here: a
//! linear algebra crate for a Cholesky factor of at most three rows would be most of its
//! weight unused.

use super::optimize::{hessian, minimize};

/// Above this many fitted values, intervals and the heavy-tail test come from the
/// quadratic approximation (tests.rs checks both ways agree at this size).
pub const PROFILE_MAX: usize = 2000;

/// The lower Cholesky factor of a symmetric positive definite `h`, or None.
fn cholesky(h: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let d = h.len();
    let mut l = vec![vec![0.0; d]; d];
    for i in 0..d {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let v = h[i][i] - s;
                if v.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                    return None;
                }
                l[i][i] = v.sqrt();
            } else {
                l[i][j] = (h[i][j] - s) / l[j][j];
            }
        }
    }
    Some(l)
}

/// Solves Lᵀ w = v for lower-triangular L.
fn solve_upper(l: &[Vec<f64>], v: &[f64]) -> Vec<f64> {
    let d = v.len();
    let mut w = vec![0.0; d];
    for i in (0..d).rev() {
        let s: f64 = (i + 1..d).map(|k| l[k][i] * w[k]).sum();
        w[i] = (v[i] - s) / l[i][i];
    }
    w
}

/// The unit vector of `angles` (none: +1; one: a circle; two: a sphere).
fn unit(angles: &[f64], d: usize) -> Vec<f64> {
    match d {
        1 => vec![if angles.first().copied().unwrap_or(0.0) < 0.0 {
            -1.0
        } else {
            1.0
        }],
        2 => vec![angles[0].cos(), angles[0].sin()],
        _ => vec![
            angles[0].sin() * angles[1].cos(),
            angles[0].sin() * angles[1].sin(),
            angles[0].cos(),
        ],
    }
}

/// The quadratic approximation of the negative log-likelihood `nll` at its minimum `at`.
pub struct Quadratic {
    at: Vec<f64>,
    l: Vec<Vec<f64>>,
}

impl Quadratic {
    /// None when the Hessian is not positive definite (a fit on a boundary).
    pub fn new(nll: &impl Fn(&[f64]) -> f64, at: &[f64]) -> Option<Self> {
        let h = hessian(nll, at, &vec![1e-3; at.len()]);
        Some(Self {
            at: at.to_vec(),
            l: cholesky(&h)?,
        })
    }

    /// The variance of parameter `i` (the i-th diagonal of the inverse Hessian).
    pub fn variance(&self, i: usize) -> f64 {
        let d = self.at.len();
        // (H⁻¹)ᵢᵢ = |L⁻¹ eᵢ|²... by columns of L⁻ᵀ: solve Lᵀ w = e_k for each k.
        (0..d)
            .map(|k| {
                let mut e = vec![0.0; d];
                e[k] = 1.0;
                solve_upper(&self.l, &e)[i].powi(2)
            })
            .sum()
    }

    /// The parameters on the region's boundary (deviance `limit`) in direction `angles`.
    fn boundary(&self, angles: &[f64], limit: f64) -> Vec<f64> {
        let w = solve_upper(&self.l, &unit(angles, self.at.len()));
        self.at
            .iter()
            .zip(w)
            .map(|(a, wi)| a + limit.sqrt() * wi)
            .collect()
    }

    /// The smallest and largest `level` over the region where the deviance is at most
    /// `limit`: a grid of directions, then a simplex from the best of each.
    pub fn range(&self, level: &impl Fn(&[f64]) -> f64, limit: f64) -> (f64, f64) {
        let d = self.at.len();
        let grid: Vec<Vec<f64>> = match d {
            1 => vec![vec![1.0], vec![-1.0]],
            2 => (0..72)
                .map(|i| vec![i as f64 * std::f64::consts::PI / 36.0])
                .collect(),
            _ => (0..=12)
                .flat_map(|i| (0..24).map(move |j| (i, j)))
                .map(|(i, j)| {
                    let pi = std::f64::consts::PI;
                    vec![i as f64 * pi / 12.0, j as f64 * pi / 12.0]
                })
                .collect(),
        };
        let at = |a: &[f64]| level(&self.boundary(a, limit));
        let best = |sign: f64| {
            let start = grid
                .iter()
                .min_by(|a, b| (sign * at(a)).total_cmp(&(sign * at(b))))
                .cloned()
                .unwrap_or_default();
            if d == 1 {
                return at(&start);
            }
            let (p, _) = minimize(|a| sign * at(a), &start, 0.1);
            at(&p)
        };
        (best(1.0), best(-1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quadratic_gives_its_exact_ellipse() {
        // nll = (x² / 4 + y²) / 2: variances 4 and 1; the range of x + y at deviance 1 is
        // ±√(4 + 1).
        let nll = |p: &[f64]| (p[0] * p[0] / 4.0 + p[1] * p[1]) / 2.0;
        let q = Quadratic::new(&nll, &[0.0, 0.0]).unwrap();
        assert!((q.variance(0) - 4.0).abs() < 1e-4 && (q.variance(1) - 1.0).abs() < 1e-4);
        let (lo, hi) = q.range(&|p: &[f64]| p[0] + p[1], 1.0);
        assert!((hi - 5f64.sqrt()).abs() < 1e-4 && (lo + 5f64.sqrt()).abs() < 1e-4);
        // Three parameters, correlated.
        let nll =
            |p: &[f64]| (2.0 * p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + 2.0 * p[0] * p[1]) / 2.0;
        let q = Quadratic::new(&nll, &[0.0; 3]).unwrap();
        // H = [[2,1,0],[1,1,0],[0,0,1]], H⁻¹ = [[1,−1,0],[−1,2,0],[0,0,1]].
        assert!((q.variance(1) - 2.0).abs() < 1e-4, "{}", q.variance(1));
        let (lo, hi) = q.range(&|p: &[f64]| p[1], 3.84);
        assert!((hi - (2.0f64 * 3.84).sqrt()).abs() < 1e-3, "{hi}");
        assert!((lo + (2.0f64 * 3.84).sqrt()).abs() < 1e-3, "{lo}");
    }
}
