//! Declustering: late samples come in clusters (a host that stops the CPU for 10 ms
//! delays the next ten 1 ms wake-ups), so exceedances of a threshold are not independent
//! and a tail fitted to all of them is wrong. The extremal index θ is estimated from the
//! times between exceedances (Ferro and Segers, "Inference for clusters of extreme
//! values", JRSS B 65, 2003: the intervals estimator), the exceedances are split into
//! ⌊θ·N⌋ clusters at the largest gaps (their declustering scheme), and the clusters'
//! maxima — independent when the clusters separate — are what the tail is fitted to.

/// Ferro and Segers' intervals estimator of θ from the times between consecutive
/// exceedances (in samples), capped at 1. None with fewer than two gaps or no spread.
pub fn extremal_index(gaps: &[u64]) -> Option<f64> {
    let n = gaps.len() as f64;
    if gaps.len() < 2 {
        return None;
    }
    let max = gaps.iter().copied().max().unwrap_or(0);
    let (num, den) = if max <= 2 {
        let s: f64 = gaps.iter().map(|&t| t as f64).sum();
        let s2: f64 = gaps.iter().map(|&t| (t as f64).powi(2)).sum();
        (2.0 * s * s, n * s2)
    } else {
        let s: f64 = gaps.iter().map(|&t| t as f64 - 1.0).sum();
        let s2: f64 = gaps
            .iter()
            .map(|&t| (t as f64 - 1.0) * (t as f64 - 2.0))
            .sum();
        (2.0 * s * s, n * s2)
    };
    (den > 0.0).then(|| (num / den).min(1.0))
}

/// The exceedances of a threshold grouped into clusters.
#[derive(Debug, Clone)]
pub struct Declustered {
    pub theta: f64,
    /// Exceedances at least this many samples apart are in different clusters.
    pub separation: u64,
    /// The largest value of each cluster, in time order.
    pub maxima: Vec<f64>,
}

/// The indices of the exceedances of `u` in `xs`.
fn exceedances(xs: &[f64], u: f64) -> Vec<usize> {
    (0..xs.len()).filter(|&i| xs[i] > u).collect()
}

/// The cluster maxima of the exceedances at `at` when gaps of `separation` samples or
/// more separate clusters.
fn maxima(xs: &[f64], at: &[usize], separation: u64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut current = xs[at[0]];
    for w in at.windows(2) {
        if (w[1] - w[0]) as u64 >= separation {
            out.push(current);
            current = xs[w[1]];
        } else {
            current = current.max(xs[w[1]]);
        }
    }
    out.push(current);
    out
}

/// The clusters of the exceedances of `u` in `xs` (time order): ⌊θ·N⌋ clusters, split at
/// the largest gaps; where gaps tie at the cut, fewer clusters so no tie is split (Ferro
/// and Segers, section 5). None with fewer than three exceedances.
pub fn decluster(xs: &[f64], u: f64) -> Option<Declustered> {
    let at = exceedances(xs, u);
    let gaps: Vec<u64> = at.windows(2).map(|w| (w[1] - w[0]) as u64).collect();
    let theta = extremal_index(&gaps)?;
    let wanted = ((theta * at.len() as f64).floor() as usize).max(1);
    let mut sorted = gaps.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    // The c−1 largest gaps separate c clusters; lower c while the cut would split a tie.
    let mut c = wanted.min(at.len());
    while c >= 2 && c - 1 < sorted.len() && sorted[c - 2] == sorted[c - 1] {
        c -= 1;
    }
    let separation = if c >= 2 {
        sorted[c - 2]
    } else {
        xs.len() as u64
    };
    Some(Declustered {
        theta,
        separation,
        maxima: maxima(xs, &at, separation),
    })
}

/// The clusters when gaps of `separation` samples or more separate them (runs
/// declustering: a longer run length than the intervals estimator's, where clusters
/// themselves come in bursts); θ is then clusters / exceedances.
pub fn decluster_runs(xs: &[f64], u: f64, separation: u64) -> Option<Declustered> {
    let at = exceedances(xs, u);
    if at.is_empty() {
        return None;
    }
    let maxima = maxima(xs, &at, separation);
    Some(Declustered {
        theta: maxima.len() as f64 / at.len() as f64,
        separation,
        maxima,
    })
}

/// The ranks of `xs` (1..n, ties by order), for a test of independence that a few huge
/// values do not dominate.
pub fn ranks(xs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut r = vec![0.0; xs.len()];
    for (rank, &i) in order.iter().enumerate() {
        r[i] = rank as f64 + 1.0;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independent_exceedances_give_theta_near_one() {
        // Geometric gaps (i.i.d. exceedances with probability 0.02): θ = 1.
        let mut rng = fastrand::Rng::with_seed(3);
        let xs: Vec<f64> = (0..200_000).map(|_| rng.f64()).collect();
        let d = decluster(&xs, 0.98).unwrap();
        assert!((d.theta - 1.0).abs() < 0.08, "θ = {}", d.theta);
    }

    #[test]
    fn pairs_give_theta_one_half_and_one_maximum_per_pair() {
        // Each exceedance is followed by a smaller one: clusters of exactly two, starting
        // as a Poisson process does (geometric gaps, as the estimator's theory has them).
        let mut rng = fastrand::Rng::with_seed(4);
        let mut xs = vec![0.0; 100_000];
        let mut i = 10;
        while i + 1 < xs.len() {
            xs[i] = 2.0 + rng.f64();
            xs[i + 1] = 1.5;
            i += 3 + (-100.0 * (1.0 - rng.f64()).ln()) as usize;
        }
        let d = decluster(&xs, 1.0).unwrap();
        assert!((d.theta - 0.5).abs() < 0.03, "θ = {}", d.theta);
        let pairs = xs.iter().filter(|&&x| x >= 2.0).count();
        assert!(
            d.maxima.len().abs_diff(pairs) <= pairs / 20,
            "{} of {pairs}",
            d.maxima.len()
        );
        assert!(d.maxima.iter().all(|&m| m >= 2.0));
    }

    #[test]
    fn the_intervals_estimator_matches_its_formula() {
        // max gap 3 > 2: θ = 2 (Σ(T−1))² / ((N−1) Σ(T−1)(T−2)) with N−1 = 4 gaps.
        let gaps = [1u64, 3, 5, 1];
        let s: f64 = 0.0 + 2.0 + 4.0 + 0.0;
        let s2: f64 = 0.0 + 2.0 * 1.0 + 4.0 * 3.0 + 0.0;
        let want: f64 = (2.0 * s * s / (4.0 * s2)).min(1.0);
        assert!((extremal_index(&gaps).unwrap() - want).abs() < 1e-12);
        // max gap ≤ 2: θ = 2 (ΣT)² / ((N−1) ΣT²).
        let gaps = [1u64, 1, 2, 1];
        let want: f64 = 2.0 * 25.0 / (4.0 * 7.0);
        assert!((extremal_index(&gaps).unwrap() - want.min(1.0)).abs() < 1e-12);
        assert_eq!(ranks(&[3.0, 1.0, 2.0]), vec![3.0, 1.0, 2.0]);
    }
}
