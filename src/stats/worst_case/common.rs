//! What both methods share once the tail is fitted: the checks that complete every
//! estimate (goodness of fit, light tail, neighbouring choices), the estimates with their
//! intervals and how far they reach beyond the data, or the refusal naming every check
//! that failed, or the words for a heavy tail; the plots' points; and the small helpers
//! (latencies in words, block maxima, a refusal before any fit).

use super::tails::{heavy, Tail};
use super::*;

/// A latency for the checks' words: µs below a second, then ms, s, and powers of ten for
/// the absurd values a heavy tail extrapolates to.
pub fn us(ns: f64) -> String {
    if !ns.is_finite() {
        "∞".into()
    } else if ns >= 1e12 {
        format!("{:.1e} s", ns / 1e9)
    } else if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e7 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} µs", ns / 1000.0)
    }
}

/// The neighbouring choices' 10⁻⁶ estimates inside the chosen one's interval (`main`).
fn neighbour_check(main: Option<&Estimate>, neighbours: &[(f64, String); 2]) -> Check {
    let Some(main) = main else {
        return Check::new(
            "neighbouring choices",
            false,
            "no 10⁻⁶ estimate: the fit speaks for no probability that small".into(),
        );
    };
    let lo = main.lower_ns.map_or(0.0, |v| v as f64);
    let hi = main.upper_ns.map_or(f64::INFINITY, |v| v as f64);
    let mut passed = true;
    let mut parts = Vec::new();
    for (v, label) in neighbours {
        passed &= v.is_finite() && *v >= lo && *v <= hi;
        parts.push(format!("{} at {label}", us(*v)));
    }
    Check::new(
        "neighbouring choices",
        passed,
        format!(
            "10⁻⁶ estimate {} here; {} — inside this interval [{}, {}] is required",
            us(main.value_ns as f64),
            parts.join(", "),
            us(lo),
            us(hi)
        ),
    )
}

/// What the case found before the common part: its checks so far, the light-tail check,
/// whether the excesses' variation showed a heavy tail, and the neighbours' 10⁻⁶ levels.
pub struct Found {
    pub checks: Vec<Check>,
    pub light: Check,
    pub heavy_cv: bool,
    pub neighbours: [(f64, String); 2],
}

/// The common end of both methods: the remaining checks, the estimates or the refusal,
/// the plot points.
pub fn finish<T: Tail>(mut wc: WorstCase, found: Found, tail: &T, opts: &Options) -> WorstCase {
    let Found {
        mut checks,
        light,
        heavy_cv,
        neighbours,
    } = found;
    checks.push(tail.goodness());
    checks.push(light);
    let all = estimates(tail, opts, wc.samples);
    checks.push(neighbour_check(all.first(), &neighbours));
    wc.fit = Some(tail.fit());
    let failed: Vec<&str> = checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.name.as_str())
        .collect();
    if !failed.is_empty() {
        wc.refused = Some(format!("failed: {} (see the checks)", failed.join(", ")));
    }
    wc.checks = checks;
    wc.unbounded = heavy(tail) || heavy_cv;
    if wc.refused.is_some() || wc.unbounded {
        // No curve without an estimate, but the QQ plot shows how the refused (or heavy)
        // fit misses the data.
        if opts.plot {
            wc.plot = Some(Plot {
                qq: tail.qq(),
                ..Plot::default()
            });
        }
        return wc;
    }
    wc.estimates = all;
    if opts.plot {
        wc.plot = Some(plot(tail, &wc.estimates));
    }
    wc
}

/// Per-sample probability of `p` per hour at `period_ns`.
fn per_hour(p: f64, period_ns: u64) -> f64 {
    let n = 3.6e12 / period_ns as f64;
    -((-p).ln_1p() / n).exp_m1()
}

fn estimates<T: Tail>(tail: &T, opts: &Options, samples: u64) -> Vec<Estimate> {
    let mut todo: Vec<(f64, Per, f64)> =
        PROBABILITIES.iter().map(|&p| (p, Per::Period, p)).collect();
    if let Some(period) = opts.period_ns.filter(|&p| p > 0 && !opts.first_only) {
        todo.extend(
            PROBABILITIES
                .iter()
                .map(|&p| (p, Per::Hour, per_hour(p, period))),
        );
    }
    if opts.first_only {
        todo.truncate(1);
    }
    todo.into_iter()
        .filter(|t| t.2 < tail.p_max())
        .map(|(probability, per, p)| {
            let (lo, hi) = tail.interval(p);
            Estimate {
                probability,
                per,
                value_ns: tail.level(p).round() as u64,
                lower_ns: lo.map(|v| v.round() as u64),
                upper_ns: hi.map(|v| v.round() as u64),
                // Exceeded once in 1/p periods on average.
                extrapolation: 1.0 / p / samples.max(1) as f64,
            }
        })
        .collect()
}

fn plot<T: Tail>(tail: &T, estimates: &[Estimate]) -> Plot {
    let smallest = 1e-12f64.min(estimates.iter().map(|e| e.probability).fold(1.0, f64::min));
    let (top, bottom) = (tail.p_max().log10(), smallest.log10());
    let steps = 8;
    let curve = (0..=steps)
        .map(|i| {
            let p = 10f64.powf(top + (bottom - top) * i as f64 / steps as f64);
            let v = tail.level(p);
            let (lo, hi) = tail.interval(p);
            [p, v, lo.unwrap_or(v), hi.unwrap_or(v)]
        })
        .collect();
    Plot {
        curve,
        observed: tail.observed(),
        qq: tail.qq(),
        ..Plot::default()
    }
}

/// The maxima of consecutive blocks of `m` values (an incomplete last block dropped).
pub fn block_maxima(xs: &[f64], m: usize) -> Vec<f64> {
    xs.chunks_exact(m.max(1))
        .map(|c| c.iter().copied().fold(f64::MIN, f64::max))
        .collect()
}

/// A refusal before any fit, naming the check.
pub fn refuse_early(mut base: WorstCase, check: Check) -> WorstCase {
    base.refused = Some(format!("{}: {}", check.name, check.detail));
    base.checks = vec![check];
    base
}
