//! The statistical tests of the estimate on synthetic series with known tails (fixed
//! seeds, so CI is deterministic): interval coverage, a heavy tail, dependence, a shift
//! and too little data.

use super::*;
use statrs::distribution::{ContinuousCDF, Normal};

const N: usize = 20_000;
const P: f64 = 1e-6;

fn series(seed: u64, n: usize, draw: impl Fn(&mut fastrand::Rng) -> f64) -> Vec<u64> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n).map(|_| draw(&mut rng).round() as u64).collect()
}

/// GPD(σ, ξ) by its inverse distribution function.
fn gpd(rng: &mut fastrand::Rng, scale: f64, shape: f64) -> f64 {
    let u = 1.0 - rng.f64(); // (0, 1]
    scale / shape * (u.powf(-shape) - 1.0)
}

fn estimate_of(xs: &[u64]) -> WorstCase {
    estimate(Input::Samples(xs), &Options::default())
}

/// How many of 100 seeds give a usable estimate whose 95 % interval at 10⁻⁶ covers `truth`.
fn coverage(draw: impl Fn(&mut fastrand::Rng) -> f64 + Copy, truth: f64) -> usize {
    let mut covered = 0;
    for seed in 0..100 {
        let wc = estimate_of(&series(seed, N, draw));
        let Some(e) = wc.at(P, Per::Period).filter(|_| wc.usable()) else {
            eprintln!("seed {seed}: unbounded {}, {:?}", wc.unbounded, wc.refused);
            continue;
        };
        let lo = e.lower_ns.map_or(0.0, |v| v as f64);
        let hi = e.upper_ns.map_or(f64::INFINITY, |v| v as f64);
        covered += usize::from(lo <= truth + 0.5 && truth - 0.5 <= hi);
    }
    eprintln!("covered {covered} of 100");
    covered
}

#[test]
fn coverage_bounded_gpd() {
    // 10 µs + GPD(σ = 1 µs, ξ = −0.2): the 10⁻⁶ quantile is 10 µs + σ/ξ (p^−ξ − 1).
    let truth = 10_000.0 + 1000.0 / -0.2 * (P.powf(0.2) - 1.0);
    let covered = coverage(|r| 10_000.0 + gpd(r, 1000.0, -0.2), truth);
    assert!(covered >= 88, "covered {covered} of 100");
}

#[test]
fn coverage_exponential() {
    // 50 µs + Exp(mean 2 µs): the 10⁻⁶ quantile is 50 µs + 2 µs × ln 10⁶.
    let truth = 50_000.0 + 2000.0 * (1.0 / P).ln();
    let covered = coverage(|r| 50_000.0 - 2000.0 * (1.0 - r.f64()).ln(), truth);
    assert!(covered >= 88, "covered {covered} of 100");
}

#[test]
fn coverage_uniform_plus_noise() {
    // 1 ms × (U(0, 1) + U(0, h)): above 1 ms the tail is P(X > 1 + h − t) = t² / 2h, so
    // the 10⁻⁶ quantile is 1 + h − √(2h × 10⁻⁶) (ms).
    let h = 0.2;
    let truth = 1e6 * (1.0 + h - (2.0 * h * P).sqrt());
    let covered = coverage(|r| 1e6 * (r.f64() + h * r.f64()), truth);
    assert!(covered >= 88, "covered {covered} of 100");
}

#[test]
fn heavy_tail_is_unbounded() {
    // ξ = 0.3: heavy, shown by the likelihood ratio or the excesses' variation (a check
    // may refuse a seed at its 1 %; the tail is called heavy all the same).
    for seed in 0..5 {
        let wc = estimate_of(&series(seed, N, |r| 10_000.0 + gpd(r, 1000.0, 0.3)));
        assert!(wc.unbounded, "seed {seed}: {:?} {:?}", wc.fit, wc.checks);
        assert!(wc.estimates.is_empty());
    }
}

/// Y_t = max(Y_{t−1} − c, Z_t), Z ~ Exp(mean): each stall decays over the next samples
/// (a timer catching up), θ = 1 − e^(−c/mean), and an episode exceeds x with probability
/// e^(−x/mean) per period, as Z does.
fn catch_up(seed: u64, n: usize, c: f64, mean: f64) -> Vec<u64> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut y: f64 = 0.0;
    (0..n)
        .map(|_| {
            y = (y - c).max(-mean * (1.0 - rng.f64()).ln());
            (20_000.0 + y).round() as u64
        })
        .collect()
}

#[test]
fn clustered_stalls_are_declustered_with_their_extremal_index() {
    // c = 2 µs, mean 5 µs: θ = 1 − e^(−0.4) = 0.33; the 10⁻⁶ episode level is
    // 20 µs + 5 µs × ln 10⁶ = 89.08 µs (a single sample exceeds it 3× as often).
    let theta = 1.0 - (-0.4f64).exp();
    let truth = 20_000.0 + 5000.0 * (1.0 / P).ln();
    let mut covered = 0;
    for seed in 0..20 {
        let wc = estimate_of(&catch_up(seed, 50_000, 2000.0, 5000.0));
        let c = wc.clusters.as_ref().expect("declustered");
        assert!(
            (c.extremal_index - theta).abs() < 0.1,
            "seed {seed}: θ = {} for {theta:.3}",
            c.extremal_index
        );
        let independence = wc.checks.iter().find(|c| c.name == "independence").unwrap();
        assert!(
            independence.detail.contains("declustered"),
            "{independence:?}"
        );
        let Some(e) = wc.at(P, Per::Period).filter(|_| wc.usable()) else {
            continue;
        };
        let (lo, hi) = (
            e.lower_ns.unwrap_or(0) as f64,
            e.upper_ns.unwrap_or(u64::MAX) as f64,
        );
        covered += usize::from(lo <= truth && truth <= hi);
    }
    // 20 seeds at 95 %: 16 or more covered unless the interval is wrong.
    assert!(covered >= 16, "covered {covered} of 20");
}

#[test]
fn clusters_in_bursts_that_do_not_separate_are_refused_saying_so() {
    // Isolated stalls (one in 100 samples on average) whose size follows a level that
    // changes every 5000 samples (a load that comes and goes): each stall stands alone,
    // but big ones come near big ones at every separation that leaves 100 clusters.
    let mut rng = fastrand::Rng::with_seed(8);
    let mut level = 1.0;
    let xs: Vec<u64> = (0..60_000)
        .map(|i| {
            if i % 5000 == 0 {
                level = -(1.0 - rng.f64()).ln();
            }
            let x = if rng.f64() < 0.01 {
                30_000.0 - level * 5000.0 * (1.0 - rng.f64()).ln()
            } else {
                20_000.0 + 1000.0 * rng.f64()
            };
            x.round() as u64
        })
        .collect();
    let wc = estimate_of(&xs);
    let reason = wc.refused.as_deref().unwrap_or("");
    assert!(
        reason.contains("independence"),
        "{reason:?} {:?}",
        wc.checks
    );
    let check = wc.checks.iter().find(|c| c.name == "independence").unwrap();
    assert!(
        check.detail.contains("the clusters do not separate"),
        "{check:?}"
    );
    assert!(wc.estimates.is_empty());
}

#[test]
fn an_autocorrelated_series_is_declustered_not_refused_for_it() {
    // AR(1), φ = 0.9: exceedances come in runs; their clusters separate.
    let normal = Normal::standard();
    for seed in 0..5 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut x = 0.0;
        let xs: Vec<u64> = (0..N)
            .map(|_| {
                x = 0.9 * x + normal.inverse_cdf(rng.f64().max(1e-300));
                (100_000.0 + 1000.0 * x).round() as u64
            })
            .collect();
        let wc = estimate_of(&xs);
        let c = wc.clusters.as_ref().expect("declustered");
        assert!(
            c.extremal_index < 0.7,
            "seed {seed}: θ = {}",
            c.extremal_index
        );
        let independence = wc.checks.iter().find(|c| c.name == "independence").unwrap();
        assert!(independence.passed, "seed {seed}: {independence:?}");
    }
}

#[test]
fn shifted_second_half_is_refused_naming_identical_distribution() {
    for seed in 0..5 {
        let mut xs = series(seed, N, |r| 50_000.0 - 2000.0 * (1.0 - r.f64()).ln());
        for x in &mut xs[N / 2..] {
            *x += 3000;
        }
        let wc = estimate_of(&xs);
        let reason = wc.refused.as_deref().unwrap_or("");
        assert!(
            reason.contains("identical distribution"),
            "seed {seed}: {reason:?}"
        );
    }
}

#[test]
fn too_few_samples_is_refused_naming_the_minimum() {
    let xs = series(7, 1000, |r| 50_000.0 - 2000.0 * (1.0 - r.f64()).ln());
    let wc = estimate_of(&xs);
    let reason = wc.refused.as_deref().unwrap_or("");
    assert!(reason.starts_with("enough data"), "{reason:?}");
    assert!(reason.contains("at least 100 needed"), "{reason:?}");
    assert!(reason.contains("at least 2500 samples"), "{reason:?}");
    let maxima = series(7, 30, |r| 50_000.0 - 2000.0 * (1.0 - r.f64()).ln());
    let wc = estimate(
        Input::BlockMaxima {
            maxima: &maxima,
            samples: 30_000,
        },
        &Options::default(),
    );
    let reason = wc.refused.as_deref().unwrap_or("");
    assert!(reason.contains("at least 50 needed"), "{reason:?}");
}
