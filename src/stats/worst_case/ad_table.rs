//! The 1 % points of the Anderson-Darling A² when the distribution's parameters were
//! fitted to the same data by maximum likelihood. A² against a distribution given in
//! advance has its 1 % point at 3.857, but a fit bends towards its data and makes A²
//! smaller, so that value passes clear misfits (whole-µs data at A² = 3.3). The points
//! depend on the model and its shape (Choulakian and Stephens, "Goodness-of-fit tests for
//! the generalized Pareto distribution", Technometrics 43, 2001, tabulate the GPD's); the
//! table below is this estimator's own, by simulation with a fixed seed (the ignored test
//! `ad_table_generate` prints it again: `cargo test --release --lib ad_table_generate --
//! --ignored --nocapture`), so it matches the fits it judges.

/// A fitted model whose A² is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// GPD, scale and shape fitted.
    Gpd,
    /// GPD with the shape fixed at 0: the scale fitted.
    Exponential,
    /// GEV, location, scale and shape fitted.
    Gev,
    /// GEV with the shape fixed at 0: location and scale fitted.
    Gumbel,
}

/// The shapes of the table's columns.
pub const SHAPES: [f64; 11] = [-0.5, -0.4, -0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5];

/// GPD (scale and shape fitted to 300 excesses), 1 % points at `SHAPES`: 3000 simulated
/// fits per shape, smoothed by a quadratic in ξ (the raw points scatter by ±0.05).
const GPD: [f64; 11] = [
    1.76, 1.66, 1.58, 1.50, 1.44, 1.38, 1.33, 1.28, 1.25, 1.23, 1.21,
];
/// GEV (three parameters fitted to 200 maxima), 1 % points at `SHAPES`, likewise.
const GEV: [f64; 11] = [
    0.95, 0.92, 0.90, 0.88, 0.86, 0.84, 0.83, 0.82, 0.81, 0.81, 0.81,
];
/// Exponential (scale fitted to 300 excesses), the 1 % point (Stephens' table has 1.957
/// for A²·(1 + 0.6/n): 1.95 at n = 300).
const EXPONENTIAL: f64 = 1.91;
/// Gumbel (location and scale fitted to 200 maxima), the 1 % point (Stephens: 1.038 for
/// A²·(1 + 0.2/√n)).
const GUMBEL: f64 = 1.02;

/// The 1 % point of A² for `model` fitted with shape `shape` (interpolated between the
/// table's shapes, its ends beyond them).
pub fn critical(model: Model, shape: f64) -> f64 {
    let row = match model {
        Model::Gpd => &GPD,
        Model::Gev => &GEV,
        Model::Exponential => return EXPONENTIAL,
        Model::Gumbel => return GUMBEL,
    };
    let x = shape.clamp(SHAPES[0], SHAPES[SHAPES.len() - 1]);
    let i = SHAPES
        .windows(2)
        .position(|w| x <= w[1])
        .unwrap_or(SHAPES.len() - 2);
    let t = (x - SHAPES[i]) / (SHAPES[i + 1] - SHAPES[i]);
    row[i] + t * (row[i + 1] - row[i])
}

/// In words, for the check's detail.
pub fn describe(model: Model, shape: f64) -> String {
    match model {
        Model::Gpd => format!("GPD at ξ = {shape:.2}"),
        Model::Gev => format!("GEV at ξ = {shape:.2}"),
        Model::Exponential => "exponential".into(),
        Model::Gumbel => "Gumbel".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::worst_case::{checks, gev, gpd};

    /// A² of `xs` against `cdf`.
    fn a2(xs: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
        let c = checks::anderson_darling("", xs, cdf, f64::INFINITY, "");
        let text = c.detail.split("A² = ").nth(1).unwrap();
        text.split(' ').next().unwrap().parse().unwrap()
    }

    /// The 99th percentile of `reps` A² values of `model` at `shape` on `n` simulated
    /// values (fixed seed).
    pub fn point(model: Model, shape: f64, n: usize, reps: usize, seed: u64) -> f64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut out: Vec<f64> = (0..reps)
            .map(|_| {
                let mut xs: Vec<f64> = (0..n)
                    .map(|_| {
                        let u = 1.0 - rng.f64();
                        match model {
                            Model::Gpd | Model::Exponential if shape == 0.0 => -u.ln(),
                            Model::Gpd | Model::Exponential => (u.powf(-shape) - 1.0) / shape,
                            _ if shape == 0.0 => -(-u.ln()).ln(),
                            _ => ((-u.ln()).powf(-shape) - 1.0) / shape,
                        }
                    })
                    .collect();
                xs.sort_by(f64::total_cmp);
                match model {
                    Model::Gpd | Model::Exponential => {
                        let m = xs.iter().sum::<f64>() / n as f64;
                        let ys: Vec<f64> = xs.iter().map(|x| x / m).collect();
                        let (g, _) = if model == Model::Gpd {
                            gpd::fit(&ys)
                        } else {
                            gpd::fit_exponential(&ys)
                        };
                        a2(&ys, |y| gpd::cdf(g, y))
                    }
                    Model::Gev | Model::Gumbel => {
                        let (g, _) = gev::fit(&xs, model == Model::Gumbel);
                        a2(&xs, |z| gev::cdf(g, z))
                    }
                }
            })
            .collect();
        out.sort_by(f64::total_cmp);
        out[(reps as f64 * 0.99) as usize]
    }

    /// The least-squares quadratic in ξ through `ys` at `SHAPES`, at `SHAPES`.
    fn smoothed(ys: &[f64]) -> Vec<f64> {
        // Normal equations of y = a + b ξ + c ξ², solved by Cramer's rule.
        let s = |k: i32| SHAPES.iter().map(|x| x.powi(k)).sum::<f64>();
        let t = |k: i32| {
            SHAPES
                .iter()
                .zip(ys)
                .map(|(x, y)| x.powi(k) * y)
                .sum::<f64>()
        };
        let m = [[s(0), s(1), s(2)], [s(1), s(2), s(3)], [s(2), s(3), s(4)]];
        let det = |m: [[f64; 3]; 3]| {
            m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
                - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        };
        let rhs = [t(0), t(1), t(2)];
        let coef: Vec<f64> = (0..3)
            .map(|j| {
                let mut mj = m;
                for (i, row) in mj.iter_mut().enumerate() {
                    row[j] = rhs[i];
                }
                det(mj) / det(m)
            })
            .collect();
        SHAPES
            .iter()
            .map(|x| coef[0] + coef[1] * x + coef[2] * x * x)
            .collect()
    }

    #[test]
    #[ignore = "prints the table (minutes): cargo test --release --lib ad_table_generate -- --ignored --nocapture"]
    fn ad_table_generate() {
        let reps = 3000;
        for (model, n) in [(Model::Gpd, 300), (Model::Gev, 200)] {
            let raw: Vec<f64> = SHAPES
                .iter()
                .enumerate()
                .map(|(i, &s)| point(model, s, n, reps, 37 + i as u64))
                .collect();
            let text = |v: &[f64]| {
                v.iter()
                    .map(|x| format!("{x:.2}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            println!("{model:?} (n = {n}): [{}]", text(&raw));
            println!("  smoothed: [{}]", text(&smoothed(&raw)));
        }
        println!(
            "Exponential: {:.2}",
            point(Model::Exponential, 0.0, 300, reps, 91)
        );
        println!("Gumbel: {:.2}", point(Model::Gumbel, 0.0, 200, reps, 92));
        // The points hardly depend on n (Choulakian and Stephens): a check at n = 100.
        for (model, s) in [(Model::Gpd, -0.2), (Model::Gpd, 0.2), (Model::Gev, 0.0)] {
            println!(
                "{model:?} at ξ = {s}, n = 100: {:.2}",
                point(model, s, 100, reps, 93)
            );
        }
    }

    #[test]
    fn the_smoothing_is_a_least_squares_quadratic() {
        // The generator's raw GPD row smooths to the table's.
        let raw = [
            1.80, 1.63, 1.55, 1.51, 1.38, 1.42, 1.40, 1.29, 1.20, 1.21, 1.23,
        ];
        for (s, t) in smoothed(&raw).iter().zip(GPD) {
            assert!((s - t).abs() < 0.006, "{s} against {t}");
        }
    }

    #[test]
    fn the_table_is_read_between_its_columns() {
        assert_eq!(critical(Model::Gpd, -0.5), GPD[0]);
        assert_eq!(critical(Model::Gpd, 3.0), GPD[10]);
        let mid = critical(Model::Gpd, 0.05);
        assert!((mid - (GPD[5] + GPD[6]) / 2.0).abs() < 1e-12);
        assert_eq!(critical(Model::Exponential, 0.7), EXPONENTIAL);
    }
}
