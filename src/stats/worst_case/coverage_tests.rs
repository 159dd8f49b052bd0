//! The coverage table of bench/README.md (ignored: minutes): on synthetic families of
//! known tail — light, bounded, heavy, normal, whole-µs, clustered with a known extremal
//! index, and per-second maxima — with fixed seeds, how often the estimator gives a
//! number, how often its 95 % interval at 10⁻⁶ per period covers the truth, misses below
//! (optimistic) or above, says "heavy", or refuses. Run by name:
//! `cargo test --release --lib coverage_table -- --ignored --nocapture`.

use super::*;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

const P: f64 = 1e-6;
const SEEDS: u64 = 100;

/// Exp(mean) by inversion.
fn exp(r: &mut fastrand::Rng, mean: f64) -> f64 {
    -mean * (1.0 - r.f64()).ln()
}

/// GPD(σ, ξ) by inversion (ξ ≠ 0).
fn gpd(r: &mut fastrand::Rng, scale: f64, shape: f64) -> f64 {
    scale / shape * ((1.0 - r.f64()).powf(-shape) - 1.0)
}

/// A family: its name, what is drawn (ns, time order; or per-second maxima), the true 10⁻⁶
/// level per period (an episode's when the family clusters), the true extremal index, and
/// the tolerance of "covered" (half the grid of whole-µs data).
pub struct Family {
    pub name: &'static str,
    pub draw: fn(&mut fastrand::Rng, usize) -> Vec<u64>,
    pub truth: f64,
    pub theta: Option<f64>,
    pub tolerance: f64,
    /// Per-second maxima of this many samples each (block maxima), not samples.
    pub block: Option<u64>,
}

fn iid(r: &mut fastrand::Rng, n: usize, f: impl Fn(&mut fastrand::Rng) -> f64) -> Vec<u64> {
    (0..n).map(|_| f(r).round() as u64).collect()
}

/// Stalls that the next samples catch up on: Y_t = max(Y_{t−1} − c, Z_t), Z ~ Exp(5 µs),
/// c = 2 µs: θ = 1 − e^(−c/5 µs) = 0.330, and an episode exceeds x with probability
/// e^(−x/5 µs) per period, as Z does.
fn catch_up(r: &mut fastrand::Rng, n: usize) -> Vec<u64> {
    let mut y: f64 = 0.0;
    (0..n)
        .map(|_| {
            y = (y - 2000.0).max(exp(r, 5000.0));
            (20_000.0 + y).round() as u64
        })
        .collect()
}

/// Pairs: X_t = max(Z_t, Z_{t−1}), Z = 10 µs + GPD(1 µs, −0.2): θ = 1/2, an episode
/// exceeds x as Z does.
fn pairs(r: &mut fastrand::Rng, n: usize) -> Vec<u64> {
    let mut last = 10_000.0 + gpd(r, 1000.0, -0.2);
    (0..n)
        .map(|_| {
            let z = 10_000.0 + gpd(r, 1000.0, -0.2);
            let x = z.max(last);
            last = z;
            x.round() as u64
        })
        .collect()
}

/// Per-second maxima of 1000 samples of 50 µs + Exp(2 µs): exactly by inversion.
fn bm_exp(r: &mut fastrand::Rng, n: usize) -> Vec<u64> {
    (0..n)
        .map(|_| (50_000.0 - 2000.0 * (1.0 - r.f64().powf(1e-3)).ln()).round() as u64)
        .collect()
}

/// Per-second maxima of 1000 samples of 10 µs + GPD(1 µs, −0.2).
fn bm_gpd(r: &mut fastrand::Rng, n: usize) -> Vec<u64> {
    (0..n)
        .map(|_| {
            let u = r.f64().powf(1e-3);
            (10_000.0 + 1000.0 / -0.2 * ((1.0 - u).powf(0.2) - 1.0)).round() as u64
        })
        .collect()
}

/// A standard normal (Box-Muller).
fn normal(r: &mut fastrand::Rng) -> f64 {
    let (u, v) = (1.0 - r.f64(), r.f64());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Student's t with 3 degrees of freedom: N / √(χ²₃ / 3).
fn t3(r: &mut fastrand::Rng) -> f64 {
    let z = normal(r);
    let chi: f64 = (0..3).map(|_| normal(r).powi(2)).sum();
    z / (chi / 3.0).sqrt()
}

/// A family of independent samples, covered within half a ns.
fn plain(
    name: &'static str,
    draw: fn(&mut fastrand::Rng, usize) -> Vec<u64>,
    truth: f64,
) -> Family {
    Family {
        name,
        draw,
        truth,
        theta: None,
        tolerance: 0.5,
        block: None,
    }
}

/// 10 µs + GPD(1 µs, ξ = −0.2): the 10⁻⁶ level.
fn gpd_truth() -> f64 {
    10_000.0 + 1000.0 / -0.2 * (P.powf(0.2) - 1.0)
}

/// 20 µs + Exp(5 µs): the 10⁻⁶ level.
fn exp5_truth() -> f64 {
    20_000.0 + 5000.0 * (1.0 / P).ln()
}

pub fn families() -> Vec<Family> {
    let mut out = independent_families();
    out.extend(other_families());
    out
}

/// Independent samples: light, bounded, normal and heavy tails.
fn independent_families() -> Vec<Family> {
    let z6 = Normal::standard().inverse_cdf(1.0 - P);
    let t3_level = StudentsT::new(0.0, 1.0, 3.0).map_or(f64::NAN, |t| t.inverse_cdf(1.0 - P / 2.0));
    vec![
        plain(
            "exponential: 50 µs + Exp(2 µs)",
            |r, n| iid(r, n, |r| 50_000.0 + exp(r, 2000.0)),
            50_000.0 + 2000.0 * (1.0 / P).ln(),
        ),
        plain(
            "bounded: 10 µs + GPD(1 µs, ξ = −0.2)",
            |r, n| iid(r, n, |r| 10_000.0 + gpd(r, 1000.0, -0.2)),
            gpd_truth(),
        ),
        plain(
            "bounded: 1 ms × (U + 0.2 U)",
            |r, n| iid(r, n, |r| 1e6 * (r.f64() + 0.2 * r.f64())),
            1e6 * (1.2 - (0.4 * P).sqrt()),
        ),
        plain(
            "normal: 30 µs + 2 µs × N(0, 1)",
            |r, n| iid(r, n, |r| 30_000.0 + 2000.0 * normal(r)),
            30_000.0 + 2000.0 * z6,
        ),
        plain(
            "heavy: 20 µs + |t₃| µs",
            |r, n| iid(r, n, |r| 20_000.0 + 1000.0 * t3(r).abs()),
            20_000.0 + 1000.0 * t3_level,
        ),
        plain(
            "heavy: 10 µs + GPD(1 µs, ξ = +0.3)",
            |r, n| iid(r, n, |r| 10_000.0 + gpd(r, 1000.0, 0.3)),
            10_000.0 + 1000.0 / 0.3 * (P.powf(-0.3) - 1.0),
        ),
    ]
}

/// Whole-µs data, clustered samples of known extremal index, per-second maxima.
fn other_families() -> Vec<Family> {
    vec![
        Family {
            tolerance: 500.0,
            ..plain(
                "whole µs: round(20 µs + Exp(5 µs))",
                |r, n| {
                    iid(r, n, |r| {
                        1000.0 * ((20_000.0 + exp(r, 5000.0)) / 1000.0).round()
                    })
                },
                exp5_truth(),
            )
        },
        Family {
            theta: Some(1.0 - (-0.4f64).exp()),
            ..plain(
                "clustered: catch-up of Exp(5 µs) stalls, θ = 0.33",
                catch_up,
                exp5_truth(),
            )
        },
        Family {
            theta: Some(0.5),
            ..plain(
                "clustered: pairs of GPD(ξ = −0.2), θ = 0.5",
                pairs,
                gpd_truth(),
            )
        },
        Family {
            block: Some(1000),
            ..plain(
                "per-second maxima of 50 µs + Exp(2 µs)",
                bm_exp,
                50_000.0 + 2000.0 * (1.0 / P).ln(),
            )
        },
        Family {
            block: Some(1000),
            ..plain(
                "per-second maxima of 10 µs + GPD(ξ = −0.2)",
                bm_gpd,
                gpd_truth(),
            )
        },
    ]
}

/// One row of the table: counts over the seeds.
#[derive(Default, Debug)]
pub struct Row {
    pub usable: usize,
    pub covered: usize,
    pub below: usize,
    pub above: usize,
    pub heavy: usize,
    pub refused: usize,
    pub theta_sum: f64,
    pub theta_n: usize,
    pub reasons: std::collections::BTreeMap<String, usize>,
}

/// The estimates of `f` at `n` values over `seeds` seeds (first seed `first`).
pub fn row(f: &Family, n: usize, first: u64, seeds: u64) -> Row {
    let mut out = Row::default();
    let opts = Options {
        first_only: true,
        ..Options::default()
    };
    for seed in first..first + seeds {
        let xs = (f.draw)(&mut fastrand::Rng::with_seed(seed), n);
        let input = match f.block {
            Some(m) => Input::BlockMaxima {
                maxima: &xs,
                samples: m * n as u64,
            },
            None => Input::Samples(&xs),
        };
        let wc = estimate(input, &opts);
        if let Some(c) = &wc.clusters {
            out.theta_sum += c.extremal_index;
            out.theta_n += 1;
        }
        if let Some(r) = &wc.refused {
            out.refused += 1;
            let failed: Vec<&str> = wc
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| c.name.as_str())
                .collect();
            let key = if failed.is_empty() {
                r.split(':').next().unwrap_or("").to_string()
            } else {
                failed.join(", ")
            };
            *out.reasons.entry(key).or_default() += 1;
            continue;
        }
        if wc.unbounded {
            out.heavy += 1;
            continue;
        }
        let Some(e) = wc.at(P, Per::Period) else {
            continue;
        };
        out.usable += 1;
        let lo = e.lower_ns.map_or(0.0, |v| v as f64);
        let hi = e.upper_ns.map_or(f64::INFINITY, |v| v as f64);
        if hi < f.truth - f.tolerance {
            out.below += 1;
        } else if lo > f.truth + f.tolerance {
            out.above += 1;
        } else {
            out.covered += 1;
        }
    }
    out
}

/// One row of the table in Markdown.
fn line(f: &Family, n: usize, r: &Row) -> String {
    let pct = |c: usize| format!("{} %", c * 100 / SEEDS as usize);
    let of_usable = |c: usize| {
        (c * 100 + r.usable / 2)
            .checked_div(r.usable)
            .map_or("–".to_string(), |v| format!("{v} %"))
    };
    let reasons: Vec<String> = r.reasons.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let reasons = if reasons.is_empty() {
        String::new()
    } else {
        format!(" ({})", reasons.join("; "))
    };
    let theta = match (f.theta, r.theta_n) {
        (Some(t), k) if k > 0 => format!("{:.2} ({t:.2})", r.theta_sum / k as f64),
        (Some(t), _) => format!("– ({t:.2})"),
        (None, k) if k > 0 => format!("{:.2} in {k}", r.theta_sum / k as f64),
        _ => "–".into(),
    };
    format!(
        "| {} | {n} | {} | {} | {} | {} | {} | {}{reasons} | {theta} |",
        f.name.replace('|', "\\|"),
        pct(r.usable),
        of_usable(r.covered),
        of_usable(r.below),
        of_usable(r.above),
        pct(r.heavy),
        pct(r.refused),
    )
}

#[test]
#[ignore = "the coverage table (minutes): cargo test --release --lib coverage_table -- --ignored --nocapture"]
fn coverage_table() {
    println!("| family | n | number given | covered | below (optimistic) | above | heavy, in words | refused (by) | mean θ̂ (true) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for f in families() {
        let sizes: &[usize] = if f.block.is_some() {
            &[400, 3600]
        } else {
            &[10_000, 100_000]
        };
        for &n in sizes {
            println!("{}", line(&f, n, &row(&f, n, 1000, SEEDS)));
        }
    }
}
