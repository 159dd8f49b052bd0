//! One measuring thread's current interval, built by the watch's reader from the thread's
//! cumulative live atomics (the histogram's bucket counts, sum, missed, overruns,
//! maximum): once a second it subtracts the previous read, so the measuring loop is not
//! changed at all (it already publishes those atomics) and no sample is counted twice or
//! lost across seconds and intervals. A second's maximum is exact when the run's maximum
//! grew in it, otherwise the top of the highest bucket that grew (within the histogram's
//! 0.1 %). Boundaries are where the reader reads, a few ms after each second on a CPU that
//! is not measured: a sample taken in that window counts in the second before.

use crate::result::{Metric, ThreadResult};
use crate::stats::live_histogram::{LiveHistogram, HISTOGRAM_HIGHEST_NS, HISTOGRAM_SIGFIG};
use crate::stats::summary::{mean_and_stddev, percentile};
use crate::stats::{LiveStats, Summary};
use hdrhistogram::Histogram;
use std::sync::atomic::Ordering;

/// What one CPU measured in the current interval.
#[derive(Debug, Clone)]
pub struct Interval {
    pub histogram: Histogram<u64>,
    pub sum_ns: u128,
    pub missed: u64,
    pub overruns: u64,
    pub max_ns: u64,
    /// The maximum of each second measured, in order (gap seconds are not invented).
    pub per_second_max_ns: Vec<u64>,
}

impl Interval {
    pub fn empty() -> Self {
        let mut histogram = Histogram::new_with_bounds(1, HISTOGRAM_HIGHEST_NS, HISTOGRAM_SIGFIG)
            .expect("valid bounds");
        // Every page of the counts written now (as the Recorder does): a zeroed
        // allocation's pages appear only when first written, so the watch's memory would
        // grow for days, a page each time latency reaches a range it never had.
        histogram.record(1).expect("in range");
        histogram.reset();
        Self {
            histogram,
            sum_ns: 0,
            missed: 0,
            overruns: 0,
            max_ns: 0,
            per_second_max_ns: Vec::new(),
        }
    }

    /// An interval as a file saved it (a restart goes on with it).
    pub fn from_thread(th: &ThreadResult) -> Self {
        let mut me = Self::empty();
        for &[value, count] in &th.histogram {
            me.histogram
                .saturating_record_n(value.min(HISTOGRAM_HIGHEST_NS), count);
        }
        let s = &th.summary;
        me.sum_ns = (s.mean_ns * s.samples as f64).round() as u128;
        (me.missed, me.overruns, me.max_ns) = (s.missed, s.overruns, s.max_ns);
        me.per_second_max_ns = th.per_second_max_ns.clone();
        me
    }

    pub fn count(&self) -> u64 {
        self.histogram.len()
    }

    /// The interval as a result thread: exact count, sum (mean), extremes to the
    /// histogram's precision, percentiles from its histogram.
    pub fn thread_result(&self, cpu: usize, method: &str) -> ThreadResult {
        let h = &self.histogram;
        let n = h.len();
        let min_ns = if n == 0 { 0 } else { h.min() };
        let max_ns = self.max_ns.max(min_ns);
        let (mean_ns, _) = mean_and_stddev(n, self.sum_ns, 0);
        let p = |q: f64| percentile(h, q, min_ns, max_ns);
        ThreadResult {
            cpu,
            method: method.to_string(),
            metric: Metric::Latency,
            summary: Summary {
                samples: n,
                min_ns,
                mean_ns,
                stddev_ns: if n == 0 { 0.0 } else { h.stdev() },
                max_ns,
                p50_ns: p(50.0),
                p90_ns: p(90.0),
                p99_ns: p(99.0),
                p999_ns: p(99.9),
                p9999_ns: p(99.99),
                p99999_ns: p(99.999),
                overruns: self.overruns,
                missed: self.missed,
            },
            histogram: h
                .iter_recorded()
                .map(|v| [v.value_iterated_to(), v.count_at_value()])
                .collect(),
            per_second_max_ns: self.per_second_max_ns.clone(),
            extra: Default::default(),
            worst_case: None,
        }
    }
}

/// The reader's view of one measuring thread: what it read last, and the interval.
#[derive(Debug)]
pub struct CpuTrack {
    pub cpu: usize,
    prev: Vec<u64>,
    now: Vec<u64>,
    prev_sum_ns: u64,
    prev_missed: u64,
    prev_overruns: u64,
    prev_max_ns: u64,
    pub interval: Interval,
}

impl CpuTrack {
    /// `seconds`: the interval's length, room kept for its per-second maxima.
    pub fn new(cpu: usize, buckets: usize, mut interval: Interval, seconds: usize) -> Self {
        let (mut prev, mut now) = (vec![0; buckets], vec![0; buckets]);
        // Present from the start (a zeroed allocation's pages are not): `prev` is
        // written only where counts changed, so it would grow page by page for hours.
        crate::sys::memlock::prefault_slice(&mut prev);
        crate::sys::memlock::prefault_slice(&mut now);
        let room = seconds.saturating_sub(interval.per_second_max_ns.len());
        interval.per_second_max_ns.reserve(room);
        Self {
            cpu,
            prev,
            now,
            prev_sum_ns: 0,
            prev_missed: 0,
            prev_overruns: 0,
            prev_max_ns: 0,
            interval,
        }
    }

    /// Adds what the thread counted since the last call to the interval; the maximum of
    /// those samples (None: it counted nothing, or is still warming up).
    pub fn fold(&mut self, live: &LiveStats, hist: &LiveHistogram) -> Option<u64> {
        if !live.measuring.load(Ordering::Acquire) {
            return None;
        }
        hist.read_into(&mut self.now);
        let mut top = None;
        for (i, (now, prev)) in self.now.iter().zip(self.prev.iter_mut()).enumerate() {
            let d = now.wrapping_sub(*prev);
            if d > 0 && d < u64::MAX / 2 {
                let (low, high) = hist.bucket_range(i);
                self.interval.histogram.saturating_record_n(low, d);
                top = Some(high);
                *prev = *now;
            }
        }
        let sum = live.sum_ns.load(Ordering::Relaxed);
        let missed = live.missed.load(Ordering::Relaxed);
        let overruns = live.overruns.load(Ordering::Relaxed);
        let max = live.max_ns.load(Ordering::Relaxed);
        self.interval.sum_ns += u128::from(sum.wrapping_sub(self.prev_sum_ns));
        self.interval.missed += missed.saturating_sub(self.prev_missed);
        self.interval.overruns += overruns.saturating_sub(self.prev_overruns);
        (self.prev_sum_ns, self.prev_missed, self.prev_overruns) = (sum, missed, overruns);
        let second_max = top.map(|high| {
            if max > self.prev_max_ns {
                max // the run's maximum grew: exact
            } else {
                high.min(max)
            }
        });
        self.prev_max_ns = self.prev_max_ns.max(max);
        if let Some(m) = second_max {
            self.interval.max_ns = self.interval.max_ns.max(m);
        }
        second_max
    }

    /// Starts the next interval in place (the reads go on from where they are): the
    /// histogram is zeroed and the per-second maxima cleared, their memory kept, so a
    /// watch allocates nothing per interval.
    pub fn next_interval(&mut self) {
        let iv = &mut self.interval;
        iv.histogram.reset();
        (iv.sum_ns, iv.missed, iv.overruns, iv.max_ns) = (0, 0, 0, 0);
        iv.per_second_max_ns.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Recorder, RecorderConfig};
    use std::sync::Arc;

    /// The plain reference: every value kept; each "second" folded and compared with the
    /// values of that second (count, sum, maximum to 0.1 %, histogram exact), and the
    /// interval's histogram with hdrhistogram's of the same values.
    #[test]
    fn seconds_folded_from_the_live_atomics_equal_the_reference() {
        crate::stats::live_histogram::enable(true);
        let live = Arc::new(LiveStats::default());
        let config = RecorderConfig {
            deadline_ns: 50_000,
            series_seconds: 4,
            raw_capacity: 0,
        };
        let mut rec = Recorder::new(&config, live.clone());
        rec.restart(0);
        let hist = live.histogram.get().unwrap().clone();
        let mut track = CpuTrack::new(1, hist.len(), Interval::empty(), 5);
        let mut reference =
            Histogram::<u64>::new_with_bounds(1, HISTOGRAM_HIGHEST_NS, HISTOGRAM_SIGFIG).unwrap();
        let (mut x, mut all_sum, mut all_max) = (0x2545_f491_4f6c_dd1du64, 0u128, 0u64);
        for second in 0..5u64 {
            let mut values = Vec::new();
            for i in 0..2_000u64 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let v = if i == 7 && second == 3 {
                    9_000_000
                } else {
                    1_000 + x % 80_000
                };
                let at = second * 1_000_000_000 + i * 100_000;
                rec.record(at, at, v);
                values.push(v);
                reference.record(v).unwrap();
            }
            let m = track.fold(&live, &hist).unwrap();
            let true_max = *values.iter().max().unwrap();
            assert!(
                m >= true_max && m <= true_max + true_max / 1000,
                "{m} vs {true_max}"
            );
            if true_max > all_max {
                assert_eq!(m, true_max, "a new maximum is exact");
            }
            all_max = all_max.max(true_max);
            all_sum += values.iter().map(|&v| u128::from(v)).sum::<u128>();
            assert_eq!(track.fold(&live, &hist), None, "nothing new");
        }
        let iv = track.interval.clone();
        track.next_interval();
        assert_eq!(iv.count(), 10_000);
        assert_eq!(iv.sum_ns, all_sum);
        assert_eq!(iv.max_ns, all_max);
        let pairs = |h: &Histogram<u64>| {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect::<Vec<_>>()
        };
        assert_eq!(pairs(&iv.histogram), pairs(&reference));
        let th = iv.thread_result(1, "clock-nanosleep");
        assert_eq!(
            th.summary.p99_ns,
            percentile(&reference, 99.0, reference.min(), all_max)
        );
        let again = Interval::from_thread(&th);
        assert_eq!(pairs(&again.histogram), pairs(&reference));
        assert_eq!(track.interval.count(), 0);
        crate::stats::live_histogram::enable(false);
    }
}
