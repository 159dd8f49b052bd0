//! From a series to a `WorstCase`: the documented choice of threshold or block size, the
//! checks in order (enough data, independence, identical distribution, goodness of fit,
//! neighbouring choices), then the estimates with their intervals — or the refusal naming
//! every check that failed, or the words for a heavy tail.

use super::checks::{ks_halves, ljung_box, runs_test};
use super::tails::{Bm, Pot, Tail};
use super::*;

const NEIGHBOUR: f64 = 0.7;

fn us(ns: f64) -> String {
    format!("{:.2} µs", ns / 1000.0)
}

/// The maxima of consecutive blocks of `m` values (an incomplete last block dropped).
fn block_maxima(xs: &[f64], m: usize) -> Vec<f64> {
    xs.chunks_exact(m.max(1))
        .map(|c| c.iter().copied().fold(f64::MIN, f64::max))
        .collect()
}

/// The rule's exceedance count for n samples: 2·√n.
fn default_exceedances(n: usize) -> usize {
    (2.0 * (n as f64).sqrt()).round() as usize
}

/// The threshold leaving (about) `k` samples above it: the (k+1)-th largest value.
fn threshold_for(sorted: &[f64], k: usize) -> f64 {
    sorted[sorted.len() - 1 - k.min(sorted.len() - 1)]
}

fn pot_at(xs: &[f64], u: f64, rule: String) -> Pot {
    let ex: Vec<f64> = xs.iter().filter(|&&x| x > u).map(|x| x - u).collect();
    Pot::new(u, &ex, xs.len(), rule)
}

/// Peaks over threshold on samples in time order.
fn pot_case(xs: &[f64], opts: &Options, base: WorstCase) -> WorstCase {
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
    let enough = Check::new(
        "enough data",
        k >= MIN_EXCEEDANCES,
        format!(
            "{k} exceedances over {} in {n} samples; at least {MIN_EXCEEDANCES} needed (the rule's 2·√n: at least {} samples)",
            us(u),
            MIN_EXCEEDANCES * MIN_EXCEEDANCES / 4
        ),
    );
    if !enough.passed {
        return refuse_early(base, enough);
    }
    let m = (n as f64).sqrt().round() as usize;
    let checks = vec![
        enough,
        runs_test("independence", xs.iter().map(|&x| x > u)),
        ks_halves("identical distribution", &block_maxima(xs, m)),
    ];
    let tail = pot_at(xs, u, rule);
    let near = |f: f64| {
        let kk = ((k as f64 * f).round() as usize).max(2);
        let uu = threshold_for(&sorted, kk);
        let label = format!("threshold {} ({} exceedances)", us(uu), kk);
        (pot_at(xs, uu, String::new()), label)
    };
    let neighbours = [near(NEIGHBOUR), near(1.0 / NEIGHBOUR)];
    finish(base, checks, &tail, &neighbours, opts)
}

/// Block maxima of samples in time order (`m` samples per block).
fn bm_from_samples(xs: &[f64], opts: &Options, base: WorstCase) -> WorstCase {
    let n = xs.len();
    let (m, rule) = match opts.block_size {
        Some(b) => (b as usize, format!("blocks of {b} samples as given")),
        None => (
            ((n as f64).sqrt().round() as usize).max(1),
            "√n blocks of √n samples".to_string(),
        ),
    };
    let maxima = block_maxima(xs, m);
    let at = |mm: usize, rule: String| Bm::new(&block_maxima(xs, mm), mm as f64, rule);
    let near = |f: f64| {
        let mm = ((m as f64 * f).round() as usize).max(1);
        (at(mm, String::new()), format!("blocks of {mm}"))
    };
    let minimum = format!(
        "at least {MIN_BLOCKS} needed (the rule's √n blocks: at least {} samples)",
        MIN_BLOCKS * MIN_BLOCKS
    );
    bm_case(&maxima, m as f64, rule, minimum, opts, base, || {
        [near(NEIGHBOUR), near(1.0 / NEIGHBOUR)]
    })
}

/// Block maxima from maxima of `m0`-sample blocks (per-second maxima): merged `factor` at
/// a time.
fn bm_from_maxima(maxima: &[f64], m0: f64, opts: &Options, base: WorstCase) -> WorstCase {
    let factor = opts
        .block_size
        .map_or(1, |b| ((b as f64 / m0).round() as usize).max(1));
    let rule = if factor == 1 {
        "one block per second (the per-second maxima)".to_string()
    } else {
        format!("blocks of {factor} seconds")
    };
    let merged = block_maxima(maxima, factor);
    let near = |f: usize| {
        let mx = block_maxima(maxima, f);
        (
            Bm::new(&mx, m0 * f as f64, String::new()),
            format!("blocks of {f} s"),
        )
    };
    let minimum = format!("at least {MIN_BLOCKS} needed (a run of {MIN_BLOCKS} seconds at least)");
    bm_case(
        &merged,
        m0 * factor as f64,
        rule,
        minimum,
        opts,
        base,
        || [near(factor + 1), near(factor + 2)],
    )
}

fn bm_case(
    maxima: &[f64],
    m: f64,
    rule: String,
    minimum: String,
    opts: &Options,
    base: WorstCase,
    neighbours: impl FnOnce() -> [(Bm, String); 2],
) -> WorstCase {
    let b = maxima.len();
    let enough = Check::new(
        "enough data",
        b >= MIN_BLOCKS,
        format!("{b} blocks of {m:.0} samples; {minimum}"),
    );
    if !enough.passed {
        return refuse_early(base, enough);
    }
    let checks = vec![
        enough,
        ljung_box("independence", maxima),
        ks_halves("identical distribution", maxima),
    ];
    let tail = Bm::new(maxima, m, rule);
    finish(base, checks, &tail, &neighbours(), opts)
}

fn refuse_early(mut base: WorstCase, check: Check) -> WorstCase {
    base.refused = Some(format!("{}: {}", check.name, check.detail));
    base.checks = vec![check];
    base
}

/// The neighbouring choices' 10⁻⁶ estimates inside the chosen one's interval (`main`).
fn neighbour_check<T: Tail>(main: Option<&Estimate>, neighbours: &[(T, String); 2]) -> Check {
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
    for (t, label) in neighbours {
        let v = t.level(PROBABILITIES[0]);
        passed &= v.is_finite() && v >= lo && v <= hi;
        parts.push(format!("{} at {label}", us(v)));
    }
    let hi_text = if hi.is_finite() { us(hi) } else { "∞".into() };
    Check::new(
        "neighbouring choices",
        passed,
        format!(
            "10⁻⁶ estimate {} here; {} — inside this interval [{}, {hi_text}] is required",
            us(main.value_ns as f64),
            parts.join(", "),
            us(lo)
        ),
    )
}

fn finish<T: Tail>(
    mut wc: WorstCase,
    mut checks: Vec<Check>,
    tail: &T,
    neighbours: &[(T, String); 2],
    opts: &Options,
) -> WorstCase {
    checks.push(tail.goodness());
    let all = estimates(tail, opts.period_ns);
    checks.push(neighbour_check(all.first(), neighbours));
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
    if wc.refused.is_some() || tail.heavy() {
        wc.unbounded = wc.refused.is_none();
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

fn estimates<T: Tail>(tail: &T, period_ns: Option<u64>) -> Vec<Estimate> {
    let mut todo: Vec<(f64, Per, f64)> =
        PROBABILITIES.iter().map(|&p| (p, Per::Period, p)).collect();
    if let Some(period) = period_ns.filter(|&p| p > 0) {
        todo.extend(
            PROBABILITIES
                .iter()
                .map(|&p| (p, Per::Hour, per_hour(p, period))),
        );
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
            }
        })
        .collect()
}

fn plot<T: Tail>(tail: &T, estimates: &[Estimate]) -> Plot {
    let smallest = 1e-12f64.min(estimates.iter().map(|e| e.probability).fold(1.0, f64::min));
    let (top, bottom) = (tail.p_max().log10(), smallest.log10());
    let steps = 16;
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
    }
}

/// The worst-case estimate of `input` (see the module's documentation).
pub fn estimate(input: Input<'_>, opts: &Options) -> WorstCase {
    let (values, samples, label) = match input {
        Input::Samples(xs) => (xs, xs.len() as u64, "samples"),
        Input::BlockMaxima { maxima, samples } => (maxima, samples, "per-second maxima"),
    };
    let max = values.iter().copied().max().unwrap_or(0);
    let default = match input {
        Input::Samples(_) => Method::PeaksOverThreshold,
        Input::BlockMaxima { .. } => Method::BlockMaxima,
    };
    let method = opts.method.unwrap_or(default);
    let base = WorstCase::refused(method, label, samples, max, String::new());
    let base = WorstCase {
        refused: None,
        ..base
    };
    let xs: Vec<f64> = values.iter().map(|&v| v as f64).collect();
    match (method, input) {
        (Method::PeaksOverThreshold, Input::Samples(_)) => pot_case(&xs, opts, base),
        (Method::BlockMaxima, Input::Samples(_)) => bm_from_samples(&xs, opts, base),
        (Method::BlockMaxima, Input::BlockMaxima { .. }) => {
            let m0 = samples as f64 / xs.len().max(1) as f64;
            bm_from_maxima(&xs, m0, opts, base)
        }
        (Method::PeaksOverThreshold, Input::BlockMaxima { .. }) => WorstCase {
            refused: Some(
                "peaks over threshold needs every sample in time order, and this result has only a histogram (no time order: independence and identical distribution cannot be checked) and per-second maxima; use the block-maxima method on those, or measure with --worst-case (or --raw and read that series)"
                    .into(),
            ),
            ..base
        },
    }
}
