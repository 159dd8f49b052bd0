//! The tests that decide whether an estimate may be shown: independence (Ljung-Box on
//! block maxima, Wald-Wolfowitz runs test on exceedances), identical distribution (two-
//! sample Kolmogorov-Smirnov, first half against second), goodness of fit (Anderson-
//! Darling, against the 1 % point for fitted parameters), and the coefficient of
//! variation of excesses that tells a light tail from an exponential one. Each returns
//! its statistic and p-value (or critical value) in words.

use super::Check;
use statrs::distribution::{ChiSquared, ContinuousCDF, Normal};

/// Tests refuse at this level: rare false refusals of data that is fine.
pub const ALPHA: f64 = 0.01;

/// The one-sided 1 % point of the standard normal.
pub const Z_ONE_SIDED: f64 = 2.326_347_874_040_841;

pub fn fmt_p(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

/// Ljung-Box on `xs` in time order with h = min(10, n/5) lags: (Q, its χ²_h p-value, h).
pub fn ljung_box_q(xs: &[f64]) -> (f64, f64, usize) {
    let n = xs.len();
    let h = (n / 5).clamp(1, 10);
    let mean = xs.iter().sum::<f64>() / n as f64;
    let denom: f64 = xs.iter().map(|x| (x - mean).powi(2)).sum();
    let mut q = 0.0;
    for k in 1..=h {
        let num: f64 = (k..n).map(|i| (xs[i] - mean) * (xs[i - k] - mean)).sum();
        let rho = if denom > 0.0 { num / denom } else { 0.0 };
        q += rho * rho / (n - k) as f64;
    }
    q *= (n * (n + 2)) as f64;
    let p = ChiSquared::new(h as f64).map_or(f64::NAN, |c| c.sf(q));
    (q, p, h)
}

/// Ljung-Box on `xs` in time order as a check (refused below `ALPHA`).
pub fn ljung_box(name: &str, xs: &[f64]) -> Check {
    let (q, p, h) = ljung_box_q(xs);
    Check::new(
        name,
        p >= ALPHA,
        format!(
            "Ljung-Box on {} values, {h} lags: Q = {q:.2}, p = {} (refused below {ALPHA})",
            xs.len(),
            fmt_p(p)
        ),
    )
}

/// Wald-Wolfowitz runs test on which samples exceed the threshold (clusters of
/// exceedances give too few runs): normal approximation, two-sided.
pub fn runs_test(name: &str, above: impl Iterator<Item = bool>) -> Check {
    let (mut n1, mut n0, mut runs, mut last) = (0u64, 0u64, 0u64, None);
    for a in above {
        if a {
            n1 += 1
        } else {
            n0 += 1
        }
        if last != Some(a) {
            runs += 1;
            last = Some(a);
        }
    }
    let n = (n1 + n0) as f64;
    let mu = 2.0 * n1 as f64 * n0 as f64 / n + 1.0;
    let var = (mu - 1.0) * (mu - 2.0) / (n - 1.0);
    let z = (runs as f64 - mu) / var.sqrt();
    let p = 2.0 * Normal::standard().sf(z.abs());
    let p = if p.is_finite() { p } else { 0.0 };
    Check::new(
        name,
        p >= ALPHA,
        format!(
            "runs test on {} exceedances: {runs} runs, {mu:.1} expected, z = {z:.2}, p = {} (refused below {ALPHA})",
            n1,
            fmt_p(p)
        ),
    )
}

/// The Kolmogorov distribution's tail, Q(λ) = 2 Σ (−1)^(j−1) exp(−2 j² λ²).
fn kolmogorov_sf(lambda: f64) -> f64 {
    if lambda < 0.2 {
        return 1.0;
    }
    let mut sum = 0.0;
    for j in 1..=100 {
        let term = (-2.0 * (j * j) as f64 * lambda * lambda).exp();
        sum += if j % 2 == 1 { term } else { -term };
        if term < 1e-12 {
            break;
        }
    }
    (2.0 * sum).clamp(0.0, 1.0)
}

/// Two-sample Kolmogorov-Smirnov between the first and the second half of `xs` (asymptotic
/// p-value with Stephens' correction).
pub fn ks_halves(name: &str, xs: &[f64]) -> Check {
    let mid = xs.len() / 2;
    let mut a = xs[..mid].to_vec();
    let mut b = xs[mid..].to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (mut i, mut j, mut d) = (0, 0, 0.0f64);
    while i < a.len() && j < b.len() {
        let v = a[i].min(b[j]);
        while i < a.len() && a[i] <= v {
            i += 1;
        }
        while j < b.len() && b[j] <= v {
            j += 1;
        }
        d = d.max((i as f64 / na - j as f64 / nb).abs());
    }
    let en = (na * nb / (na + nb)).sqrt();
    let p = kolmogorov_sf((en + 0.12 + 0.11 / en) * d);
    Check::new(
        name,
        p >= ALPHA,
        format!(
            "Kolmogorov-Smirnov, first {} against last {}: D = {d:.3}, p = {} (refused below {ALPHA})",
            a.len(),
            b.len(),
            fmt_p(p)
        ),
    )
}

/// Anderson-Darling A² of `xs` against the fitted distribution function `cdf`, refused
/// above `critical` (the 1 % point for the parameters fitted, ad_table.rs; `which` says
/// for which model).
pub fn anderson_darling(
    name: &str,
    xs: &[f64],
    cdf: impl Fn(f64) -> f64,
    critical: f64,
    which: &str,
) -> Check {
    let mut u: Vec<f64> = xs
        .iter()
        .map(|&x| cdf(x).clamp(1e-300, 1.0 - 1e-16))
        .collect();
    u.sort_by(f64::total_cmp);
    let n = u.len();
    let s: f64 = (0..n)
        .map(|i| (2 * i + 1) as f64 * (u[i].ln() + (-u[n - 1 - i]).ln_1p()))
        .sum();
    let a2 = -(n as f64) - s / n as f64;
    Check::new(
        name,
        a2 <= critical,
        format!(
            "Anderson-Darling on {n} values: A² = {a2:.3} (refused above {critical:.3}, its 1 % point with the parameters fitted, {which})"
        ),
    )
}

/// The coefficient of variation of excesses and its z score against an exponential tail's
/// 1 (√k·(CV − 1) is standard normal for k exponential excesses): below −2.33 the tail
/// is lighter than exponential at 1 %, above +2.33 heavier (MBPTA-CV: Abella et al.,
/// "Measurement-based worst-case execution time estimation using the coefficient of
/// variation", ACM TODAES 22(4), 2017).
pub fn coefficient_of_variation(excesses: &[f64]) -> (f64, f64) {
    let k = excesses.len() as f64;
    let mean = excesses.iter().sum::<f64>() / k;
    let var = excesses.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / k;
    let cv = var.sqrt() / mean;
    (cv, k.sqrt() * (cv - 1.0))
}
