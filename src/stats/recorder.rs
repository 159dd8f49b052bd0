//! The hot-path Recorder: one per measuring thread, allocated and touched before the
//! start barrier, after which `record` never allocates, locks or formats.

use super::series::PerSecondMax;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The highest latency the histogram resolves: 60 s, so nothing ever overflows.
pub const HISTOGRAM_HIGHEST_NS: u64 = 60_000_000_000;
/// Significant decimal digits of the histogram: values are exact to 0.1 %.
pub const HISTOGRAM_SIGFIG: u8 = 3;

/// What the progress line reads: atomics written by the measuring thread.
#[derive(Debug, Default)]
pub struct LiveStats {
    pub samples: AtomicU64,
    pub max_ns: AtomicU64,
    pub missed: AtomicU64,
}

/// How a Recorder is sized before the run.
#[derive(Debug, Clone)]
pub struct RecorderConfig {
    /// Latency above which a sample counts as an overrun.
    pub deadline_ns: u64,
    /// Seconds of per-second maxima to preallocate.
    pub series_seconds: usize,
    /// Samples to keep in order for `--raw` (0 = none), each with its timestamp.
    pub raw_capacity: usize,
}

#[derive(Debug, Clone)]
pub struct Recorder {
    histogram: Histogram<u64>,
    count: u64,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u128,
    sum_sq_ns2: u128,
    overruns: u64,
    missed: u64,
    deadline_ns: u64,
    series: PerSecondMax,
    /// (stamp_ns, value_ns) per sample, in order: the stamp says when the sample's event
    /// was due or began on CLOCK_MONOTONIC (timer: the deadline; noise: the gap's start).
    raw: Vec<[u64; 2]>,
    raw_capacity: usize,
    raw_dropped: u64,
    live: Arc<LiveStats>,
}

impl Recorder {
    pub fn new(config: &RecorderConfig, live: Arc<LiveStats>) -> Self {
        let mut histogram = Histogram::new_with_bounds(1, HISTOGRAM_HIGHEST_NS, HISTOGRAM_SIGFIG)
            .expect("valid bounds");
        // Touch the counts array so its pages are resident before measuring.
        histogram.record(1).expect("in range");
        histogram.reset();
        // Fill then clear: the capacity stays and every page has been written once.
        let mut raw = vec![[0u64; 2]; config.raw_capacity];
        raw.clear();
        Self {
            histogram,
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            sum_sq_ns2: 0,
            overruns: 0,
            missed: 0,
            deadline_ns: config.deadline_ns,
            series: PerSecondMax::new(0, config.series_seconds),
            raw,
            raw_capacity: config.raw_capacity,
            raw_dropped: 0,
            live,
        }
    }

    /// A recorder with no live view, for tests and offline use.
    pub fn standalone(config: &RecorderConfig) -> Self {
        Self::new(config, Arc::new(LiveStats::default()))
    }

    /// Clears everything (after a warm-up) and starts the per-second series at
    /// `origin_ns`. Does not allocate.
    pub fn restart(&mut self, origin_ns: u64) {
        self.histogram.reset();
        self.count = 0;
        self.min_ns = u64::MAX;
        self.max_ns = 0;
        self.sum_ns = 0;
        self.sum_sq_ns2 = 0;
        self.overruns = 0;
        self.missed = 0;
        self.series.restart(origin_ns);
        self.raw.clear();
        self.raw_dropped = 0;
        self.live.samples.store(0, Ordering::Relaxed);
        self.live.max_ns.store(0, Ordering::Relaxed);
        self.live.missed.store(0, Ordering::Relaxed);
    }

    /// Records one sample: `latency_ns` observed at `at_ns`, for the event stamped
    /// `stamp_ns` (what `--raw` keeps beside the value: the deadline, the gap's start).
    #[inline(always)]
    pub fn record(&mut self, stamp_ns: u64, at_ns: u64, latency_ns: u64) {
        self.histogram.saturating_record(latency_ns);
        self.count += 1;
        if latency_ns < self.min_ns {
            self.min_ns = latency_ns;
        }
        if latency_ns > self.max_ns {
            self.max_ns = latency_ns;
            self.live.max_ns.store(latency_ns, Ordering::Relaxed);
        }
        self.sum_ns += latency_ns as u128;
        self.sum_sq_ns2 += latency_ns as u128 * latency_ns as u128;
        if latency_ns > self.deadline_ns {
            self.overruns += 1;
        }
        self.series.record(at_ns, latency_ns);
        if self.raw.len() < self.raw_capacity {
            self.raw.push([stamp_ns, latency_ns]);
        } else if self.raw_capacity > 0 {
            self.raw_dropped += 1;
        }
        self.live.samples.store(self.count, Ordering::Relaxed);
    }

    /// Adds periods that passed without a wake-up (the schedule skipped them).
    #[inline(always)]
    pub fn add_missed(&mut self, periods: u64) {
        self.missed += periods;
        self.live.missed.store(self.missed, Ordering::Relaxed);
    }

    pub fn count(&self) -> u64 {
        self.count
    }
    pub fn min_ns(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min_ns
        }
    }
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }
    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }
    pub fn sum_sq_ns2(&self) -> u128 {
        self.sum_sq_ns2
    }
    pub fn overruns(&self) -> u64 {
        self.overruns
    }
    pub fn missed(&self) -> u64 {
        self.missed
    }
    pub fn deadline_ns(&self) -> u64 {
        self.deadline_ns
    }
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.histogram
    }
    pub fn series(&self) -> &PerSecondMax {
        &self.series
    }
    /// Samples kept in order for `--raw`: (stamp_ns, value_ns).
    pub fn raw(&self) -> &[[u64; 2]] {
        &self.raw
    }
    /// Samples that did not fit the preallocated raw buffer (reported, never hidden).
    pub fn raw_dropped(&self) -> u64 {
        self.raw_dropped
    }
    pub fn live(&self) -> &Arc<LiveStats> {
        &self.live
    }
}
