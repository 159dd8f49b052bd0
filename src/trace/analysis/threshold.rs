//! Which samples count as spikes: above the run's own p99.9 by default, or above a given
//! duration.

use serde::{Deserialize, Serialize};

/// How the spike threshold is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Threshold {
    /// The run's p99.9 (nearest rank over the exact samples).
    P999,
    /// A fixed latency.
    Fixed(u64),
}

impl Threshold {
    /// The threshold in ns for these latencies (0 when there are none).
    pub fn resolve(self, latencies_ns: &[u64]) -> u64 {
        match self {
            Threshold::Fixed(ns) => ns,
            Threshold::P999 => exact_percentile(latencies_ns, 999),
        }
    }
}

/// The nearest-rank percentile of `values` at `per_mille` (1-1000; 999 = p99.9), exact
/// (sorts a copy; integer rank, so no float rounding), as stats::summary's tests define it.
pub fn exact_percentile(values: &[u64], per_mille: u64) -> u64 {
    if values.is_empty() {
        return 0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let n = sorted.len() as u64;
    let rank = (n * per_mille).div_ceil(1000).clamp(1, n) as usize;
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p999_is_nearest_rank() {
        let v: Vec<u64> = (1..=2000).rev().collect();
        assert_eq!(Threshold::P999.resolve(&v), 1998);
        assert_eq!(Threshold::P999.resolve(&[5]), 5);
        assert_eq!(Threshold::P999.resolve(&[]), 0);
        assert_eq!(Threshold::Fixed(7).resolve(&v), 7);
        let v: Vec<u64> = (1..=1000).collect();
        assert_eq!(exact_percentile(&v, 999), 999);
    }
}
