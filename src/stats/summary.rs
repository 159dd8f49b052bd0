//! The statistics of one series, computed after the run from a Recorder: exact min, max,
//! mean and standard deviation, histogram percentiles clamped to the exact extremes.

use super::recorder::Recorder;
use super::Stat;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// One series' statistics. Field names are part of the JSON schema: scripts read them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub samples: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub stddev_ns: f64,
    pub max_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub p9999_ns: u64,
    pub p99999_ns: u64,
    pub overruns: u64,
    pub missed: u64,
}

impl Summary {
    pub fn from_recorder(rec: &Recorder) -> Self {
        let n = rec.count();
        let (mean, stddev) = mean_and_stddev(n, rec.sum_ns(), rec.sum_sq_ns2());
        let p = |q: f64| percentile(rec.histogram(), q, rec.min_ns(), rec.max_ns());
        Self {
            samples: n,
            min_ns: rec.min_ns(),
            mean_ns: mean,
            stddev_ns: stddev,
            max_ns: rec.max_ns(),
            p50_ns: p(50.0),
            p90_ns: p(90.0),
            p99_ns: p(99.0),
            p999_ns: p(99.9),
            p9999_ns: p(99.99),
            p99999_ns: p(99.999),
            overruns: rec.overruns(),
            missed: rec.missed(),
        }
    }

    /// A statistic's value (ns, or a count).
    pub fn stat(&self, stat: Stat) -> f64 {
        stat.of(self)
    }
}

/// The p-th percentile (0-100) as the histogram sees it, within the exact extremes: the
/// value at the nearest rank (`nearest_rank`), asked of the histogram half a rank below it
/// so that its own `ceil(q × n)` lands on that rank whatever the rounding.
pub fn percentile(hist: &Histogram<u64>, p: f64, min_ns: u64, max_ns: u64) -> u64 {
    if hist.is_empty() {
        return 0;
    }
    let n = hist.len();
    let rank = nearest_rank(p, n);
    hist.value_at_quantile((rank as f64 - 0.5) / n as f64)
        .clamp(min_ns, max_ns)
}

/// The nearest rank (1-based) of percentile `p` (0-100) among `n` samples: the smallest k
/// with k/n ≥ p/100. Computed as ceil(p/100 × n) in floating point, a product that is
/// exactly whole can land a hair above it (99.9 % of 1000 is 999.0000000000001) and take
/// the next rank: p99.9 of 1000 samples would be their maximum. The product's rounding
/// error is below n × 2.2e-16 (under 1e-6 for any n latscope can count to), and a real
/// fraction of a rank is at least 1e-5 (percentiles have at most three decimals), so 1e-6
/// is taken off first.
pub fn nearest_rank(p: f64, n: u64) -> u64 {
    let exact = p / 100.0 * n as f64;
    ((exact - 1e-6).ceil().max(1.0) as u64).min(n.max(1))
}

/// Population mean and standard deviation from exact integer sums; integer arithmetic
/// where it fits (u128), floating point only past that.
pub fn mean_and_stddev(n: u64, sum: u128, sum_sq: u128) -> (f64, f64) {
    if n == 0 {
        return (0.0, 0.0);
    }
    let mean = sum as f64 / n as f64;
    let n128 = n as u128;
    let variance = match (n128.checked_mul(sum_sq), sum.checked_mul(sum)) {
        (Some(a), Some(b)) => (a.saturating_sub(b)) as f64 / (n as f64 * n as f64),
        _ => (sum_sq as f64 / n as f64 - mean * mean).max(0.0),
    };
    (mean, variance.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::recorder::RecorderConfig;
    use proptest::prelude::*;

    fn naive_percentile(sorted: &[u64], p: f64) -> u64 {
        // The smallest value with at least p % of samples at or below it, in integers
        // (p in thousandths of a percent): no rounding of its own.
        let milli = (p * 1000.0).round() as u128;
        let n = sorted.len() as u128;
        let rank = (milli * n).div_ceil(100_000).max(1) as usize;
        sorted[rank.min(sorted.len()) - 1]
    }

    #[test]
    fn p999_of_exactly_1000_samples_is_the_999th_not_the_maximum() {
        let cfg = RecorderConfig {
            deadline_ns: 0,
            series_seconds: 1,
            raw_capacity: 0,
        };
        let mut rec = Recorder::standalone(&cfg);
        // 1..=1000 ns: every value its own histogram bucket (exact below 2048).
        for v in 1..=1000u64 {
            rec.record(0, 0, v);
        }
        let sum = Summary::from_recorder(&rec);
        assert_eq!(sum.max_ns, 1000);
        assert_eq!(sum.p999_ns, 999);
        assert_eq!(sum.p99_ns, 990);
        assert_eq!(sum.p50_ns, 500);
        assert_eq!(nearest_rank(99.9, 1000), 999);
        assert_eq!(nearest_rank(99.99, 10_000), 9_999);
        assert_eq!(nearest_rank(99.999, 100_000), 99_999);
        assert_eq!(nearest_rank(99.9, 1001), 1000);
        assert_eq!(nearest_rank(50.0, 1), 1);
        assert_eq!(nearest_rank(100.0, 7), 7);
    }

    proptest! {
        /// The rank never differs from the integer reference, for every percentile
        /// latscope reports and any count up to 10^9.
        #[test]
        fn nearest_rank_is_the_integer_rank(n in 1u64..1_000_000_000) {
            for p in [50.0, 90.0, 99.0, 99.9, 99.99, 99.999] {
                let milli = (p * 1000.0f64).round() as u128;
                let want = ((milli * n as u128).div_ceil(100_000).max(1)) as u64;
                prop_assert_eq!(nearest_rank(p, n), want, "p{} n {}", p, n);
            }
        }
    }

    proptest! {
        #[test]
        fn summary_matches_naive(samples in prop::collection::vec(0u64..5_000_000_000, 1..3000),
                                 deadline in 0u64..3_000_000_000) {
            let cfg = RecorderConfig { deadline_ns: deadline, series_seconds: 4, raw_capacity: 0 };
            let mut rec = Recorder::standalone(&cfg);
            for (i, &s) in samples.iter().enumerate() {
                rec.record(i as u64 * 1_000_000, i as u64 * 1_000_000, s);
            }
            let sum = Summary::from_recorder(&rec);
            let n = samples.len() as f64;
            let mean = samples.iter().map(|&x| x as f64).sum::<f64>() / n;
            let var = samples.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
            let mut sorted = samples.clone();
            sorted.sort_unstable();
            prop_assert_eq!(sum.samples, samples.len() as u64);
            prop_assert_eq!(sum.min_ns, sorted[0]);
            prop_assert_eq!(sum.max_ns, *sorted.last().unwrap());
            prop_assert!((sum.mean_ns - mean).abs() <= 1e-6 * mean.max(1.0));
            prop_assert!((sum.stddev_ns - var.sqrt()).abs() <= 1e-3 * var.sqrt().max(1.0) + 1e-3);
            prop_assert_eq!(sum.overruns, samples.iter().filter(|&&x| x > deadline).count() as u64);
            for (p, got) in [(50.0, sum.p50_ns), (90.0, sum.p90_ns), (99.0, sum.p99_ns),
                             (99.9, sum.p999_ns), (99.99, sum.p9999_ns), (99.999, sum.p99999_ns)] {
                let want = naive_percentile(&sorted, p);
                // HDR histogram with 3 significant digits: within 0.1 % (+1 ns).
                let tol = want / 1000 + 1;
                prop_assert!(got + tol >= want && got <= want + tol,
                    "p{}: got {} want {} (tol {})", p, got, want, tol);
            }
            prop_assert!(sum.min_ns <= sum.p50_ns && sum.p50_ns <= sum.p99_ns && sum.p99_ns <= sum.max_ns);
        }

        #[test]
        fn series_is_max_per_second(samples in prop::collection::vec((0u64..10_000_000_000, 0u64..1_000_000), 1..500)) {
            let cfg = RecorderConfig { deadline_ns: 0, series_seconds: 10, raw_capacity: 0 };
            let mut rec = Recorder::standalone(&cfg);
            let mut sorted = samples.clone();
            sorted.sort_unstable();
            let mut want = [0u64; 10];
            for &(at, v) in &sorted {
                rec.record(at, at, v);
                let i = (at / 1_000_000_000) as usize;
                want[i] = want[i].max(v);
            }
            let used = (sorted.last().unwrap().0 / 1_000_000_000) as usize + 1;
            prop_assert_eq!(rec.series().values(), &want[..used]);
        }
    }

    #[test]
    fn empty_summary_is_zero() {
        let cfg = RecorderConfig {
            deadline_ns: 0,
            series_seconds: 1,
            raw_capacity: 0,
        };
        let rec = Recorder::standalone(&cfg);
        let s = Summary::from_recorder(&rec);
        assert_eq!(s.samples, 0);
        assert_eq!(s.min_ns, 0);
        assert_eq!(s.p99_ns, 0);
    }

    #[test]
    fn raw_keeps_order_and_counts_what_does_not_fit() {
        let cfg = RecorderConfig {
            deadline_ns: 0,
            series_seconds: 1,
            raw_capacity: 3,
        };
        let mut rec = Recorder::standalone(&cfg);
        for v in [5, 1, 9, 7] {
            rec.record(0, 0, v);
        }
        assert_eq!(rec.raw(), &[[0, 5], [0, 1], [0, 9]]);
        assert_eq!(rec.raw_dropped(), 1);
    }
}
