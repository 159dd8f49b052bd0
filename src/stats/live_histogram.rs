//! A measuring thread's histogram counts as atomics, so a checkpoint can read a running
//! scenario's distribution (percentiles, min, mean) without stopping or locking the loop.
//! Same buckets as the Recorder's HDR histogram (1 ns .. 60 s, 3 significant digits);
//! its one writer adds with a plain load and store (no locked instruction), readers load.
//! Allocated and touched only for runs that checkpoint (`enable`).

use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The highest latency the histogram resolves: 60 s, so nothing ever overflows.
pub const HISTOGRAM_HIGHEST_NS: u64 = 60_000_000_000;
/// Significant decimal digits of the histogram: values are exact to 0.1 %.
pub const HISTOGRAM_SIGFIG: u8 = 3;

/// Set by the runner when a result file takes checkpoints: measuring threads' Recorders
/// then keep a LiveHistogram beside their own.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Measuring threads started from now on keep live histograms (`--checkpoint` has a file).
pub fn enable(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// HDR bucket counts, readable while written.
#[derive(Debug)]
pub struct LiveHistogram {
    counts: Box<[AtomicU64]>,
    /// log2 of half the sub-buckets per bucket (10 for 3 digits: 2048 sub-buckets).
    half_magnitude: u32,
}

impl LiveHistogram {
    /// The layout of a Recorder's histogram, every page written before measuring.
    pub fn new() -> Self {
        // HdrHistogram's layout: 2 × 10^digits values at unit resolution, rounded up to
        // a power of two sub-buckets; buckets doubling until the highest value fits.
        let single_unit = 2 * 10u64.pow(u32::from(HISTOGRAM_SIGFIG));
        let sub_magnitude = 64 - (single_unit - 1).leading_zeros();
        let half_magnitude = sub_magnitude - 1;
        let mut buckets = 1u32;
        let mut smallest_untrackable = 1u64 << sub_magnitude;
        while smallest_untrackable <= HISTOGRAM_HIGHEST_NS {
            smallest_untrackable <<= 1;
            buckets += 1;
        }
        let len = ((buckets + 1) as usize) << half_magnitude;
        let counts: Box<[AtomicU64]> = (0..len).map(|_| AtomicU64::new(0)).collect();
        // The zeros above may become a zeroed allocation (fresh pages never written), so
        // one store per page makes each present now, not at the measuring thread's first
        // sample in its range (a page fault in the loop, and memory growing for hours).
        let stride = super::prefault::SMALLEST_PAGE_BYTES / std::mem::size_of::<AtomicU64>();
        for c in counts.iter().step_by(stride) {
            c.store(std::hint::black_box(0), Ordering::Relaxed);
        }
        Self {
            counts,
            half_magnitude,
        }
    }

    fn index(&self, value: u64) -> usize {
        let value = value.min(HISTOGRAM_HIGHEST_NS);
        let sub_mask = (1u64 << (self.half_magnitude + 1)) - 1;
        let base = 64 - self.half_magnitude - 1;
        let bucket = base - (value | sub_mask).leading_zeros();
        let sub = value >> bucket;
        (((bucket + 1) as u64) << self.half_magnitude) as usize + sub as usize
            - (1usize << self.half_magnitude)
    }

    fn value_at(&self, index: usize) -> u64 {
        let half = 1usize << self.half_magnitude;
        let mut bucket = (index >> self.half_magnitude) as i64 - 1;
        let mut sub = (index & (half - 1)) + half;
        if bucket < 0 {
            sub -= half;
            bucket = 0;
        }
        (sub as u64) << bucket
    }

    /// Counts one value (the measuring thread, the only writer).
    #[inline(always)]
    pub fn record(&self, value: u64) {
        let c = &self.counts[self.index(value)];
        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// Forgets every value (a used Recorder's restart).
    pub fn clear(&self) {
        for c in self.counts.iter() {
            c.store(0, Ordering::Relaxed);
        }
    }

    /// How many buckets it has (`read_into`'s length).
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Never empty (every layout has buckets); for clippy's `len` rule.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Every bucket's count as it is now, into `out` (`len()` long; a reader's, no
    /// allocation: `latscope watch` subtracts the previous read to get a second's counts).
    pub fn read_into(&self, out: &mut [u64]) {
        for (o, c) in out.iter_mut().zip(self.counts.iter()) {
            *o = c.load(Ordering::Relaxed);
        }
    }

    /// The smallest and the largest value bucket `index` holds.
    pub fn bucket_range(&self, index: usize) -> (u64, u64) {
        (
            self.value_at(index),
            self.value_at(index + 1).saturating_sub(1),
        )
    }

    /// What was counted so far as an HDR histogram (allocates: checkpoint thread only).
    pub fn snapshot(&self) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, HISTOGRAM_HIGHEST_NS, HISTOGRAM_SIGFIG)
            .expect("valid bounds");
        for (i, c) in self.counts.iter().enumerate() {
            let n = c.load(Ordering::Relaxed);
            if n > 0 {
                h.saturating_record_n(self.value_at(i), n);
            }
        }
        h
    }
}

impl Default for LiveHistogram {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain reference: the same values recorded into hdrhistogram itself.
    #[test]
    fn a_snapshot_equals_the_hdr_histogram_of_the_same_values() {
        let live = LiveHistogram::new();
        let mut reference =
            Histogram::<u64>::new_with_bounds(1, HISTOGRAM_HIGHEST_NS, HISTOGRAM_SIGFIG).unwrap();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = match i % 4 {
                0 => x % 3_000,
                1 => x % 100_000,
                2 => x % 50_000_000,
                _ => x % (2 * HISTOGRAM_HIGHEST_NS),
            };
            live.record(v);
            reference.saturating_record(v.min(HISTOGRAM_HIGHEST_NS));
        }
        let snap = live.snapshot();
        let pairs = |h: &Histogram<u64>| {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect::<Vec<_>>()
        };
        assert_eq!(pairs(&snap), pairs(&reference));
        for q in [0.0, 50.0, 99.0, 99.9, 100.0] {
            assert_eq!(
                snap.value_at_percentile(q),
                reference.value_at_percentile(q)
            );
        }
        assert_eq!(live.counts.len(), reference.distinct_values());
    }
}
