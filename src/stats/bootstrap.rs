//! How sure a percentile or maximum is: a seeded (deterministic) bootstrap from a run's
//! stored histogram, as `compare` states its noise (hyperfine's ±). Each resample draws
//! as many samples as the run had, with replacement; the interval is the 2.5 % and
//! 97.5 % points of the statistic over the resamples.
//!
//! A resample's k-th smallest value is the sample under the k-th smallest of n uniform
//! draws, so only that one uniform order statistic is drawn per resample: the top ones
//! exactly (the largest of n uniforms is V^(1/n), each next one below it the same way),
//! and deep ones (more than `exact_up_to` from the top) from the normal approximation of
//! their Beta(k, n+1-k) law. A plain resampler in the tests checks both paths.

/// Resamples per interval.
pub const RESAMPLES: usize = 1000;
/// The seed: the same file gives the same interval on every run.
pub const SEED: u64 = 0x1a75_c09e_2025;
/// Order statistics drawn exactly up to this far from the top; deeper ones are approximated.
pub const EXACT_UP_TO: u64 = 500;

/// A 95 % interval of one statistic, in the histogram's unit (ns).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    /// Whether two intervals share a value.
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.lo <= other.hi && other.lo <= self.hi
    }
}

/// A sparse histogram (`[value, count]`, values ascending) made ready for resampling.
pub struct Resampler {
    values: Vec<u64>,
    /// Cumulative counts, one per value.
    cum: Vec<u64>,
    n: u64,
}

impl Resampler {
    /// None for an empty histogram. Values are clamped to `[min, max]`, the exact
    /// extremes the run recorded (a bucket's upper bound may pass the real maximum).
    pub fn new(histogram: &[[u64; 2]], min: u64, max: u64) -> Option<Self> {
        let mut sorted: Vec<[u64; 2]> = histogram.iter().copied().filter(|b| b[1] > 0).collect();
        sorted.sort_by_key(|b| b[0]);
        let mut values = Vec::with_capacity(sorted.len());
        let mut cum = Vec::with_capacity(sorted.len());
        let mut n = 0u64;
        for [v, c] in sorted {
            n += c;
            values.push(v.clamp(min, max.max(min)));
            cum.push(n);
        }
        (n > 0).then_some(Self { values, cum, n })
    }

    pub fn samples(&self) -> u64 {
        self.n
    }

    /// The rank (1-based, from the bottom) of percentile `p` (0-100) among n samples,
    /// as HdrHistogram counts it; `p = 100` is the maximum.
    pub fn rank(&self, p: f64) -> u64 {
        super::summary::nearest_rank(p, self.n)
    }

    /// The sample at uniform `u` (0-1]: the value whose cumulative share first reaches it.
    fn value_at(&self, u: f64) -> u64 {
        let target = (u * self.n as f64).ceil().max(1.0) as u64;
        let i = self.cum.partition_point(|&c| c < target);
        self.values[i.min(self.values.len() - 1)]
    }

    /// The 95 % interval of the rank-`rank` value (percentile `p`, or 100 for the max).
    pub fn interval(&self, p: f64, resamples: usize, seed: u64, exact_up_to: u64) -> Interval {
        let from_top = self.n - self.rank(p) + 1;
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut draws: Vec<u64> = (0..resamples.max(1))
            .map(|_| self.value_at(uniform_from_top(&mut rng, self.n, from_top, exact_up_to)))
            .collect();
        draws.sort_unstable();
        let at =
            |q: f64| draws[((q * draws.len() as f64).ceil() as usize).clamp(1, draws.len()) - 1];
        Interval {
            lo: at(0.025) as f64,
            hi: at(0.975) as f64,
        }
    }
}

/// The `m`-th largest of `n` uniform draws (m = 1: the largest).
fn uniform_from_top(rng: &mut fastrand::Rng, n: u64, m: u64, exact_up_to: u64) -> f64 {
    if m <= exact_up_to {
        let mut u = 1.0f64;
        for i in 0..m {
            // The largest of the n - i draws below u: u · V^(1/(n - i)).
            u *= open_unit(rng).powf(1.0 / (n - i) as f64);
        }
        return u;
    }
    // Beta(k, m) with k = n + 1 - m, by its normal approximation.
    let (k, m, n1) = (n as f64 + 1.0 - m as f64, m as f64, n as f64 + 1.0);
    let mean = k / n1;
    let sd = (k * m / (n1 * n1 * (n1 + 1.0))).sqrt();
    let z = (-2.0 * open_unit(rng).ln()).sqrt() * (std::f64::consts::TAU * rng.f64()).cos();
    (mean + sd * z).clamp(f64::MIN_POSITIVE, 1.0)
}

/// A uniform draw in (0, 1].
fn open_unit(rng: &mut fastrand::Rng) -> f64 {
    1.0 - rng.f64()
}

/// The 95 % interval of percentile `p` (100: the max) of a stored histogram, with the
/// default resamples and seed; None for an empty histogram.
pub fn interval(histogram: &[[u64; 2]], min: u64, max: u64, p: f64) -> Option<Interval> {
    Resampler::new(histogram, min, max).map(|r| r.interval(p, RESAMPLES, SEED, EXACT_UP_TO))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain bootstrap: expand the histogram, draw n samples with replacement, sort,
    /// take the rank-th; the interval over the resamples.
    fn plain(histogram: &[[u64; 2]], p: f64, resamples: usize, seed: u64) -> Interval {
        let samples: Vec<u64> = histogram
            .iter()
            .flat_map(|&[v, c]| std::iter::repeat_n(v, c as usize))
            .collect();
        let n = samples.len();
        let rank = crate::stats::summary::nearest_rank(p, n as u64) as usize;
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut stat: Vec<u64> = (0..resamples)
            .map(|_| {
                let mut r: Vec<u64> = (0..n).map(|_| samples[rng.usize(..n)]).collect();
                r.sort_unstable();
                r[rank - 1]
            })
            .collect();
        stat.sort_unstable();
        let at = |q: f64| stat[((q * stat.len() as f64).ceil() as usize).clamp(1, stat.len()) - 1];
        Interval {
            lo: at(0.025) as f64,
            hi: at(0.975) as f64,
        }
    }

    /// A long-tailed histogram: 1 µs buckets 10-59 µs, counts falling off, a few outliers.
    fn tailed(n_scale: u64) -> Vec<[u64; 2]> {
        let mut h: Vec<[u64; 2]> = (10..60u64)
            .map(|us| [us * 1000, n_scale * 100 / (us - 9) / (us - 9)])
            .filter(|b| b[1] > 0)
            .collect();
        h.extend([[200_000, 3], [900_000, 1], [2_500_000, 1]]);
        h
    }

    /// Where two intervals' ends differ by at most one bucket of the histogram.
    fn near(h: &[[u64; 2]], a: f64, b: f64) -> bool {
        let idx = |v: f64| h.iter().position(|x| x[0] as f64 == v).unwrap() as i64;
        (idx(a) - idx(b)).abs() <= 1
    }

    #[test]
    fn matches_the_plain_bootstrap_on_both_paths() {
        let h = tailed(40);
        let n: u64 = h.iter().map(|b| b[1]).sum();
        let r = Resampler::new(&h, 0, u64::MAX).unwrap();
        for p in [99.0, 99.9, 100.0] {
            let reference = plain(&h, p, 2000, 7);
            // Exact top order statistics, then the normal approximation for all but the max.
            for exact_up_to in [n, 5] {
                let fast = r.interval(p, 2000, 11, exact_up_to);
                assert!(
                    near(&h, fast.lo, reference.lo) && near(&h, fast.hi, reference.hi),
                    "p{p} (exact to {exact_up_to}): {fast:?} vs plain {reference:?}"
                );
            }
        }
    }

    #[test]
    fn seeded_and_clamped_to_the_recorded_extremes() {
        let h = tailed(40);
        assert_eq!(
            interval(&h, 0, 2_000_000, 99.9),
            interval(&h, 0, 2_000_000, 99.9)
        );
        let max = interval(&h, 0, 2_000_000, 100.0).unwrap();
        assert_eq!(
            max.hi, 2_000_000.0,
            "the top bucket clamped to the exact max"
        );
        assert!(
            max.lo < max.hi,
            "a single top sample is absent from some resamples"
        );
        assert_eq!(interval(&[], 0, 0, 99.0), None);
        let one = interval(&[[5000, 1000]], 5000, 5000, 99.0).unwrap();
        assert_eq!((one.lo, one.hi), (5000.0, 5000.0));
    }
}
