//! A cyclictest-style histogram (`latscope cyclictest -h N`): N buckets of one unit each
//! (1 µs, or 1 ns under `-N`), counted exactly in the measuring loop, and a log of the
//! sample numbers that fell beyond the last bucket (as many as there are buckets, like
//! cyclictest). Everything is allocated and touched before measuring; `record` only
//! indexes and stores.

/// Fixed-width buckets with an overflow log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedBuckets {
    unit_ns: u64,
    counts: Vec<u64>,
    overflows: u64,
    /// Sample numbers (0-based) of the first overflows, at most `counts.len()` of them.
    overflow_samples: Vec<u64>,
}

impl FixedBuckets {
    /// `buckets` buckets of `unit_ns` each (`unit_ns` >= 1, `buckets` >= 1).
    pub fn new(unit_ns: u64, buckets: usize) -> Self {
        let mut counts = vec![0u64; buckets.max(1)];
        super::prefault::prefault_slice(&mut counts);
        let mut overflow_samples = vec![0u64; buckets.max(1)];
        super::prefault::prefault_slice(&mut overflow_samples);
        overflow_samples.clear();
        Self {
            unit_ns: unit_ns.max(1),
            counts,
            overflows: 0,
            overflow_samples,
        }
    }

    /// Counts sample number `sample` (0-based) of `value_ns`; never allocates.
    #[inline(always)]
    pub fn record(&mut self, sample: u64, value_ns: u64) {
        let bucket = value_ns / self.unit_ns;
        if let Some(count) = self.counts.get_mut(bucket as usize) {
            *count += 1;
            return;
        }
        self.overflows += 1;
        if self.overflow_samples.len() < self.overflow_samples.capacity() {
            self.overflow_samples.push(sample);
        }
    }

    /// The width of one bucket, ns.
    pub fn unit_ns(&self) -> u64 {
        self.unit_ns
    }
    /// Every bucket's count, bucket i covering [i, i + 1) units.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }
    /// Samples beyond the last bucket.
    pub fn overflows(&self) -> u64 {
        self.overflows
    }
    /// The sample numbers of the first overflows (at most one per bucket).
    pub fn overflow_samples(&self) -> &[u64] {
        &self.overflow_samples
    }

    /// Forgets every sample (keeps the memory).
    pub fn clear(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.overflows = 0;
        self.overflow_samples.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_truncate_to_the_unit_and_log_overflows() {
        let mut b = FixedBuckets::new(1000, 3);
        for (i, v) in [0, 999, 1000, 2999, 3000, 5000, 7000, 9000, 1]
            .into_iter()
            .enumerate()
        {
            b.record(i as u64, v);
        }
        assert_eq!(b.counts(), &[3, 1, 1]);
        assert_eq!(b.overflows(), 4);
        // As many logged as there are buckets.
        assert_eq!(b.overflow_samples(), &[4, 5, 6]);
        b.clear();
        assert_eq!((b.counts(), b.overflows()), (&[0u64, 0, 0][..], 0));
    }
}
