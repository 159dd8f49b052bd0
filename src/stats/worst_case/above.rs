//! The tail above a threshold: every exceedance, or — where they come in clusters — the
//! maxima of clusters that separate (declustered with the extremal index, then merged
//! while their maxima still depend on each other), fitted with a GPD. Shared by the
//! estimate (pot.rs) and its threshold diagnostics (diagnostics.rs).

use super::checks::{fmt_p, ljung_box_q, ALPHA};
use super::decluster::{decluster, decluster_runs, ranks, Declustered};
use super::tails::Pot;
use super::*;

/// The threshold leaving (about) `k` samples above it: the (k+1)-th largest value.
pub fn threshold_for(sorted: &[f64], k: usize) -> f64 {
    sorted[sorted.len() - 1 - k.min(sorted.len() - 1)]
}

/// What is fitted above a threshold: every exceedance, or the clusters' maxima.
pub struct Fitted {
    pub tail: Pot,
    /// The clusters, when the exceedances were declustered.
    pub clusters: Option<Clusters>,
    /// Whether the clusters separate, in words (declustered only).
    pub separate: Option<Check>,
}

/// The exceedances of `u` as clusters that separate: from the intervals estimator's
/// clusters (`clustered`: the runs test found exceedances next to each other) or from
/// every exceedance its own, the clusters are merged at twice, four times, ... the
/// separation while at least `MIN_EXCEEDANCES` are left, until their maxima are
/// independent (Ljung-Box on their ranks, so a few huge values do not decide: big
/// stalls next to big stalls are clusters of clusters). The clusters and the check
/// (failed: they do not separate); None when every exceedance stands alone and they are
/// independent as they are.
fn separated(xs: &[f64], u: f64, clustered: bool) -> Option<(Declustered, Check)> {
    let first = if clustered {
        decluster(xs, u)?
    } else {
        decluster_runs(xs, u, 1)?
    };
    let mut words = if clustered {
        format!(
            "the exceedances come in clusters, declustered: extremal index θ = {:.3} (Ferro and Segers' intervals estimator): {} clusters, {} or more samples apart",
            first.theta,
            first.maxima.len(),
            first.separation
        )
    } else {
        String::from("each exceedance stands alone")
    };
    let mut d = first;
    loop {
        let (q, p, h) = ljung_box_q(&ranks(&d.maxima));
        let lb = format!(
            "Ljung-Box on their ranks, {h} lags: Q = {q:.2}, p = {}",
            fmt_p(p)
        );
        if p >= ALPHA {
            if d.separation == 1 {
                return None;
            }
            words.push_str(&format!("; their maxima are independent ({lb}) and fitted"));
            return Some((d, Check::new("independence", true, words)));
        }
        words.push_str(&format!("; their maxima depend on each other ({lb})"));
        let next = decluster_runs(xs, u, d.separation.saturating_mul(2))?;
        if next.maxima.len() < MIN_EXCEEDANCES {
            words.push_str(&format!(
                "; {} or more samples apart only {} clusters are left, fewer than {MIN_EXCEEDANCES}: the clusters do not separate",
                next.separation,
                next.maxima.len()
            ));
            return Some((d, Check::new("independence", false, words)));
        }
        words.push_str(&format!(
            "; {} or more samples apart: {} clusters, θ = {:.3}",
            next.separation,
            next.maxima.len(),
            next.theta
        ));
        d = next;
    }
}

/// The tail above `u`: every exceedance, or the maxima of clusters that separate
/// (`clustered`: the runs test found exceedances next to each other).
pub fn fitted_at(xs: &[f64], u: f64, clustered: bool, rule: String) -> Fitted {
    let n = xs.len();
    let ex: Vec<f64> = xs.iter().filter(|&&x| x > u).map(|x| x - u).collect();
    let Some((d, separate)) = separated(xs, u, clustered) else {
        return Fitted {
            tail: Pot::new(u, &ex, n, rule),
            clusters: None,
            separate: None,
        };
    };
    let excesses: Vec<f64> = d.maxima.iter().map(|m| m - u).collect();
    Fitted {
        tail: Pot::new(u, &excesses, n, rule),
        clusters: Some(Clusters {
            extremal_index: d.theta,
            exceedances: ex.len() as u64,
            clusters: d.maxima.len() as u64,
            separation: d.separation,
        }),
        separate: Some(separate),
    }
}
