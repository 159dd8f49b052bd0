//! The hot-path Recorder: one per measuring thread, allocated and touched before the
//! start barrier, after which `record` never allocates, locks or formats. Warm-ups
//! record into a small `scratch` recorder that is thrown away, so the measured one is
//! never cleared (a 220 KB memset) between the last warm-up wake-up and the first
//! measured deadline.

use super::fixed_buckets::FixedBuckets;
use super::live_histogram::LiveHistogram;
use super::sample_ring::SampleRing;
use super::series::PerSecondMax;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;

/// The histogram's layout (highest value, significant digits), shared with the live
/// histogram that mirrors it.
pub use super::live_histogram::{HISTOGRAM_HIGHEST_NS, HISTOGRAM_SIGFIG};
/// Significant digits of a warm-up's scratch histogram: same code path, a few KB.
const SCRATCH_SIGFIG: u8 = 1;

/// What the progress line reads: atomics written by the measuring thread. `samples` is
/// stored last in `record`, with Release: a reader that loads it with Acquire sees every
/// other value (and ring slot) of those samples.
#[derive(Debug, Default)]
pub struct LiveStats {
    pub samples: AtomicU64,
    pub max_ns: AtomicU64,
    pub missed: AtomicU64,
    pub overruns: AtomicU64,
    /// The smallest sample (meaningless while `samples` is 0).
    pub min_ns: AtomicU64,
    /// The latest sample (cyclictest's `Act`).
    pub last_ns: AtomicU64,
    /// The sum of the samples (wrapping; `sum / samples` is the exact mean).
    pub sum_ns: AtomicU64,
    /// The measuring thread's kernel id, once it runs (0 before).
    pub tid: AtomicI32,
    /// Set by the measuring thread once its measured phase is over (its loop left).
    pub done: std::sync::atomic::AtomicBool,
    /// The latest samples in order, when a reader prints them while the run goes on
    /// (`Recorder::with_sample_ring`).
    pub ring: std::sync::OnceLock<Arc<SampleRing>>,
    /// Set when the measured phase starts (`Recorder::restart`, after the counts are
    /// zeroed): until then the counts are the warm-up's, which the progress line never
    /// shows as measured.
    pub measuring: std::sync::atomic::AtomicBool,
    /// The measured Recorder's bucket counts, when the run checkpoints (see
    /// `live_histogram::enable`): what a checkpoint's percentiles come from.
    pub histogram: std::sync::OnceLock<Arc<LiveHistogram>>,
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
    /// The counts a checkpoint reads (the run checkpoints; not in a warm-up's scratch).
    live_histogram: Option<Arc<LiveHistogram>>,
    /// Times the histogram was zeroed after `new` (0 for a measuring thread's recorder).
    #[cfg(test)]
    histogram_clears: u64,
    /// The latest sample (cyclictest's `Act`).
    last_ns: u64,
    /// `latscope cyclictest -h N`: exact fixed-width buckets beside the HDR histogram.
    fixed: Option<FixedBuckets>,
    /// `latscope cyclictest -v`/`--spike`: the latest samples for the streaming reader.
    ring: Option<Arc<SampleRing>>,
}

impl Recorder {
    pub fn new(config: &RecorderConfig, live: Arc<LiveStats>) -> Self {
        let mut rec = Self::with_sigfig(config, live, HISTOGRAM_SIGFIG);
        if super::live_histogram::enabled() {
            // Built (every page written) here, before measuring.
            let h = rec.live.histogram.get_or_init(Default::default).clone();
            rec.live_histogram = Some(h);
        }
        rec
    }

    /// A recorder for a warm-up, thrown away after it: the same recording code with a
    /// coarse histogram (a few KB), one per-second slot and no `--raw` buffer. It shares
    /// `live`, which counts the warm-up with `measuring` still false (the progress line
    /// shows no counts until `restart` zeroes them and sets it).
    pub fn scratch(config: &RecorderConfig, live: Arc<LiveStats>) -> Self {
        let small = RecorderConfig {
            deadline_ns: config.deadline_ns,
            series_seconds: 1,
            raw_capacity: 0,
        };
        Self::with_sigfig(&small, live, SCRATCH_SIGFIG)
    }

    fn with_sigfig(config: &RecorderConfig, live: Arc<LiveStats>, sigfig: u8) -> Self {
        let mut histogram =
            Histogram::new_with_bounds(1, HISTOGRAM_HIGHEST_NS, sigfig).expect("valid bounds");
        // Touch the counts array so its pages are resident before measuring.
        histogram.record(1).expect("in range");
        histogram.reset();
        // Fill, write every page, clear: the capacity stays and every page is present.
        let mut raw = vec![[0u64; 2]; config.raw_capacity];
        super::prefault::prefault_slice(&mut raw);
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
            live_histogram: None,
            #[cfg(test)]
            histogram_clears: 0,
            last_ns: 0,
            fixed: None,
            ring: None,
        }
    }

    /// Also counts every sample into `buckets` (allocated and touched by the caller
    /// before measuring), as cyclictest's `-h` histogram.
    pub fn with_fixed_buckets(mut self, buckets: FixedBuckets) -> Self {
        self.fixed = Some(buckets);
        self
    }

    /// Also keeps the latest samples in `ring` (allocated by the caller before
    /// measuring) and publishes it in the live view for a reader that streams them.
    pub fn with_sample_ring(mut self, ring: Arc<SampleRing>) -> Self {
        let _ = self.live.ring.set(ring.clone());
        self.ring = Some(ring);
        self
    }

    /// A recorder with no live view, for tests and offline use.
    pub fn standalone(config: &RecorderConfig) -> Self {
        Self::new(config, Arc::new(LiveStats::default()))
    }

    /// Starts the measured phase: the per-second series counts from `origin_ns` and the
    /// live view shows zero. On a recorder that has recorded nothing (what measuring
    /// threads hand it: warm-ups go to a `scratch` one) this is a few stores; on a used
    /// one it first clears everything, the whole histogram included. Does not allocate.
    pub fn restart(&mut self, origin_ns: u64) {
        if self.count > 0 || self.missed > 0 || self.raw_dropped > 0 {
            self.clear();
        }
        self.series.restart(origin_ns);
        self.live.samples.store(0, Ordering::Relaxed);
        self.live.max_ns.store(0, Ordering::Relaxed);
        self.live.missed.store(0, Ordering::Relaxed);
        self.live.overruns.store(0, Ordering::Relaxed);
        self.live.min_ns.store(0, Ordering::Relaxed);
        self.live.last_ns.store(0, Ordering::Relaxed);
        self.live.sum_ns.store(0, Ordering::Relaxed);
        self.live.measuring.store(true, Ordering::Release);
    }

    /// Forgets every sample: zeroes the histogram (~220 KB), so never between a warm-up
    /// and the first measured deadline.
    fn clear(&mut self) {
        self.histogram.reset();
        #[cfg(test)]
        {
            self.histogram_clears += 1;
        }
        self.count = 0;
        self.min_ns = u64::MAX;
        self.max_ns = 0;
        self.sum_ns = 0;
        self.sum_sq_ns2 = 0;
        self.overruns = 0;
        self.missed = 0;
        self.raw.clear();
        self.raw_dropped = 0;
        self.last_ns = 0;
        if let Some(fixed) = &mut self.fixed {
            fixed.clear();
        }
        if let Some(h) = &self.live_histogram {
            h.clear();
        }
    }

    /// Records one sample: `latency_ns` observed at `at_ns`, for the event stamped
    /// `stamp_ns` (what `--raw` keeps beside the value: the deadline, the gap's start).
    #[inline(always)]
    pub fn record(&mut self, stamp_ns: u64, at_ns: u64, latency_ns: u64) {
        self.histogram.saturating_record(latency_ns);
        if let Some(fixed) = &mut self.fixed {
            fixed.record(self.count, latency_ns);
        }
        if let Some(ring) = &self.ring {
            ring.push(self.count, at_ns, latency_ns);
        }
        self.last_ns = latency_ns;
        self.live.last_ns.store(latency_ns, Ordering::Relaxed);
        self.count += 1;
        if latency_ns < self.min_ns {
            self.min_ns = latency_ns;
            self.live.min_ns.store(latency_ns, Ordering::Relaxed);
        }
        if latency_ns > self.max_ns {
            self.max_ns = latency_ns;
            self.live.max_ns.store(latency_ns, Ordering::Relaxed);
        }
        self.sum_ns += latency_ns as u128;
        self.live
            .sum_ns
            .store(self.sum_ns as u64, Ordering::Relaxed);
        self.sum_sq_ns2 += latency_ns as u128 * latency_ns as u128;
        if latency_ns > self.deadline_ns {
            self.overruns += 1;
            self.live.overruns.store(self.overruns, Ordering::Relaxed);
        }
        if let Some(h) = &self.live_histogram {
            h.record(latency_ns);
        }
        self.series.record(at_ns, latency_ns);
        if self.raw.len() < self.raw_capacity {
            self.raw.push([stamp_ns, latency_ns]);
        } else if self.raw_capacity > 0 {
            self.raw_dropped += 1;
        }
        self.live.samples.store(self.count, Ordering::Release);
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
    /// The latest sample (0 before the first).
    pub fn last_ns(&self) -> u64 {
        self.last_ns
    }
    /// The fixed-width buckets, when asked for (`with_fixed_buckets`).
    pub fn fixed_buckets(&self) -> Option<&FixedBuckets> {
        self.fixed.as_ref()
    }
    pub fn series(&self) -> &PerSecondMax {
        &self.series
    }
    /// Samples kept in order for `--raw`: (stamp_ns, value_ns).
    pub fn raw(&self) -> &[[u64; 2]] {
        &self.raw
    }
    /// Takes the raw samples out (the recorder keeps an empty buffer), so handing them
    /// to `--raw` costs no copy.
    pub fn take_raw(&mut self) -> Vec<[u64; 2]> {
        std::mem::take(&mut self.raw)
    }
    /// Samples that did not fit the preallocated raw buffer (reported, never hidden).
    pub fn raw_dropped(&self) -> u64 {
        self.raw_dropped
    }
    pub fn live(&self) -> &Arc<LiveStats> {
        &self.live
    }
    /// Times the histogram was zeroed after `new`: 0 for every measuring thread's
    /// recorder, which the probes' tests check.
    #[cfg(test)]
    pub fn histogram_clears(&self) -> u64 {
        self.histogram_clears
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> RecorderConfig {
        RecorderConfig {
            deadline_ns: 1_000,
            series_seconds: 4,
            raw_capacity: 8,
        }
    }

    #[test]
    fn restart_of_a_fresh_recorder_clears_nothing() {
        let mut rec = Recorder::standalone(&config());
        rec.restart(5);
        assert_eq!(rec.histogram_clears(), 0);
        rec.record(5, 6, 1);
        assert_eq!((rec.count(), rec.histogram().len()), (1, 1));
    }

    #[test]
    fn restart_of_a_used_recorder_forgets_every_sample() {
        let mut rec = Recorder::standalone(&config());
        rec.record(1, 2, 2_000);
        rec.add_missed(3);
        rec.restart(10);
        assert_eq!(rec.histogram_clears(), 1);
        assert_eq!((rec.count(), rec.missed(), rec.overruns()), (0, 0, 0));
        assert_eq!(rec.histogram().len(), 0);
        assert!(rec.raw().is_empty() && rec.series().values().is_empty());
        assert_eq!(rec.live().samples.load(Ordering::Relaxed), 0);
    }

    /// The live atomics a streaming reader prints (cyclictest's C, Min, Act, Avg, Max)
    /// against the plain reference: the same values counted here.
    #[test]
    fn live_atomics_and_ring_match_the_samples() {
        let ring = Arc::new(SampleRing::new(4));
        let mut rec = Recorder::standalone(&config()).with_sample_ring(ring.clone());
        let values = [7_u64, 3, 12, 3, 9, 20];
        for (i, v) in values.iter().enumerate() {
            rec.record(i as u64 * 100, i as u64 * 100 + v, *v);
        }
        let live = rec.live();
        let n = live.samples.load(Ordering::Acquire);
        assert_eq!(n, values.len() as u64);
        assert_eq!(live.min_ns.load(Ordering::Relaxed), 3);
        assert_eq!(live.max_ns.load(Ordering::Relaxed), 20);
        assert_eq!(live.last_ns.load(Ordering::Relaxed), 20);
        assert_eq!(
            live.sum_ns.load(Ordering::Relaxed),
            values.iter().sum::<u64>()
        );
        let mut cursor = 0;
        let drained = live.ring.get().unwrap().drain(&mut cursor, n, || n);
        assert_eq!(drained.lost, 2, "a 4-slot ring keeps the last 4 of 6");
        let kept: Vec<u64> = drained.samples.iter().map(|s| s.value_ns).collect();
        assert_eq!(kept, values[2..]);
        assert_eq!(drained.samples[0].at_ns, 200 + 12);
    }

    #[test]
    fn the_live_view_says_measuring_only_after_restart_with_counts_from_zero() {
        let live = Arc::new(LiveStats::default());
        let mut scratch = Recorder::scratch(&config(), live.clone());
        let mut rec = Recorder::new(&config(), live.clone());
        for (i, v) in [500, 476_500, 900].into_iter().enumerate() {
            scratch.record(i as u64, i as u64 + 1, v);
        }
        let seen = |l: &LiveStats| {
            (
                l.measuring.load(Ordering::Acquire),
                l.samples.load(Ordering::Relaxed),
                l.max_ns.load(Ordering::Relaxed),
                l.overruns.load(Ordering::Relaxed),
            )
        };
        // The warm-up: 3 samples, max 476.5 µs (1 over the 1 µs deadline), not measuring.
        assert_eq!(seen(&live), (false, 3, 476_500, 1));
        rec.restart(10);
        assert_eq!(seen(&live), (true, 0, 0, 0));
        rec.record(10, 11, 187_860);
        rec.record(11, 12, 700);
        assert_eq!(seen(&live), (true, 2, 187_860, 1));
    }

    #[test]
    fn scratch_is_small_and_shares_the_live_view() {
        let live = Arc::new(LiveStats::default());
        let mut scratch = Recorder::scratch(&config(), live.clone());
        let full = Recorder::new(&config(), live.clone());
        scratch.record(1, 2, 500);
        assert_eq!(live.samples.load(Ordering::Relaxed), 1);
        assert!(scratch.histogram().distinct_values() * 16 < full.histogram().distinct_values());
        assert_eq!(scratch.raw().len(), 0);
    }
}
