//! Peaks over threshold on samples in time order: the threshold (2·√n samples above it,
//! or as given), independence by the runs test — exceedances in clusters are declustered
//! and the clusters' maxima fitted, refused only when the clusters do not separate —,
//! identical distribution, the light-tail check (the excesses' coefficient of variation
//! against the exponential's 1), and the same at the neighbouring thresholds.

use super::above::{fitted_at, threshold_for, Fitted};
use super::checks::{coefficient_of_variation, ks_halves, runs_test, Z_ONE_SIDED};
use super::common::{block_maxima, finish, refuse_early, us, Found};
use super::tails::{Pot, Tail};
use super::*;

const NEIGHBOUR: f64 = 0.7;

/// The rule's exceedance count for n samples: 2·√n.
fn default_exceedances(n: usize) -> usize {
    (2.0 * (n as f64).sqrt()).round() as usize
}

/// The light-tail check on `tail`'s excesses (MBPTA-CV): a bounded fit (ξ < 0) stands
/// alone only where the excesses vary significantly less than an exponential's (CV below
/// 1 at 1 %); otherwise its intervals are widened to hold the exponential tail's too, so
/// a light tail that is no bounded one (a normal's, whole-µs exponential data) is not
/// given an optimistic interval. Returns the tail, the check, and whether the variation
/// showed a heavy tail.
pub fn light_tail(mut tail: Pot) -> (Pot, Check, bool) {
    let (cv, z) = coefficient_of_variation(&tail.excesses());
    let shape = tail.fit().shape;
    let heavy = z > Z_ONE_SIDED;
    let words = if heavy {
        "heavier than exponential".to_string()
    } else if shape < 0.0 && z >= -Z_ONE_SIDED {
        tail.widen();
        format!(
            "the bounded fit (ξ = {shape:.3}) is not shown lighter than exponential, so its intervals also hold the exponential tail's"
        )
    } else if shape < 0.0 {
        format!("lighter than exponential: the bounded fit (ξ = {shape:.3}) stands")
    } else {
        format!("the fit's shape ξ = {shape:.3} is used")
    };
    let detail = format!(
        "coefficient of variation of the {} excesses {cv:.3}, z = {z:+.2} against an exponential tail's 1 (beyond ±{Z_ONE_SIDED:.2}: lighter or heavier at 1 %): {words}",
        tail.values()
    );
    (tail, Check::new("light tail", true, detail), heavy)
}

/// The 10⁻⁶ level at the threshold leaving `k` samples above it, for the neighbouring
/// choices check.
fn neighbour(xs: &[f64], sorted: &[f64], k: usize, clustered: bool) -> (f64, String) {
    let u = threshold_for(sorted, k);
    let f = fitted_at(xs, u, clustered, String::new());
    (
        f.tail.level(PROBABILITIES[0]),
        format!("threshold {} ({k} exceedances)", us(u)),
    )
}

/// The independence check: the runs test, and when the exceedances cluster, what
/// declustering found (passed when the clusters separate).
fn independence(runs: Check, f: &Fitted) -> Check {
    match &f.separate {
        None => runs,
        Some(sep) => Check::new(
            "independence",
            sep.passed,
            format!("{}: {}", runs.detail, sep.detail),
        ),
    }
}

/// Peaks over threshold on samples in time order.
pub fn pot_case(xs: &[f64], opts: &Options, mut base: WorstCase) -> WorstCase {
    let n = xs.len();
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (u, rule) = match opts.threshold_ns {
        Some(t) => (t as f64, format!("threshold {} as given", us(t as f64))),
        None => (
            threshold_for(&sorted, default_exceedances(n)),
            "threshold leaving 2·√n samples above it".to_string(),
        ),
    };
    let k = xs.iter().filter(|&&x| x > u).count();
    let enough = |fitted: usize, what: String, theta: f64| {
        // 2·√n·θ clusters under the rule: 100 of them take (50/θ)² samples.
        let samples = (MIN_EXCEEDANCES as f64 / 2.0 / theta).powi(2).ceil();
        let rule = if theta < 1.0 {
            format!(
                "with θ = {theta:.2}, about {samples} samples under the rule's 2·√n exceedances"
            )
        } else {
            format!("the rule's 2·√n: at least {samples} samples")
        };
        Check::new(
            "enough data",
            fitted >= MIN_EXCEEDANCES,
            format!(
                "{what} over {} in {n} samples; at least {MIN_EXCEEDANCES} needed ({rule})",
                us(u)
            ),
        )
    };
    if k < MIN_EXCEEDANCES {
        return refuse_early(base, enough(k, format!("{k} exceedances"), 1.0));
    }
    let runs = runs_test("independence", xs.iter().map(|&x| x > u));
    let clustered = !runs.passed;
    let f = fitted_at(xs, u, clustered, rule);
    let fitted = f.tail.values();
    let (what, theta) = match &f.clusters {
        Some(c) => (
            format!("{} clusters of {k} exceedances", c.clusters),
            c.extremal_index,
        ),
        None => (format!("{k} exceedances"), 1.0),
    };
    let m = (n as f64).sqrt().round() as usize;
    let checks = vec![
        enough(fitted, what, theta),
        independence(runs, &f),
        ks_halves("identical distribution", &block_maxima(xs, m)),
    ];
    if opts.plot {
        base.plot = Some(super::diagnostics::threshold_plots(
            xs, &sorted, k, clustered,
        ));
    }
    base.clusters = f.clusters;
    let (tail, light, heavy_cv) = light_tail(f.tail);
    let near = |factor: f64| {
        let kk = ((k as f64 * factor).round() as usize).max(2);
        neighbour(xs, &sorted, kk, clustered)
    };
    let found = Found {
        checks,
        light,
        heavy_cv,
        neighbours: [near(NEIGHBOUR), near(1.0 / NEIGHBOUR)],
    };
    let diagnostics = base.plot.take();
    let mut wc = finish(base, found, &tail, opts);
    if let (Some(d), Some(p)) = (diagnostics, wc.plot.as_mut()) {
        p.mrl = d.mrl;
        p.stability = d.stability;
    }
    wc
}
