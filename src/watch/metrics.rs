//! The OpenMetrics exposition of `latscope watch --listen` (the contract of issue 39),
//! through the prometheus-client crate: a Collector that reads, at each scrape, the
//! measuring threads' cumulative live atomics (histogram buckets, sum, missed periods,
//! overruns) and what the reader keeps (the maximum since the last scrape, the intervals
//! that failed --fail-above). Labels host, probe, method, period, cpu.

use crate::probe::LiveRegistry;
use crate::stats::LiveStats;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The histogram's upper bounds in seconds: 1-2-5 steps from 1 µs to 1 s.
pub fn bucket_bounds_s() -> Vec<f64> {
    let mut out = Vec::new();
    let mut decade: f64 = 1e-6;
    while decade < 1.5 {
        for step in [1.0, 2.0, 5.0] {
            let b: f64 = step * decade;
            if b <= 1.0 + 1e-9 {
                out.push((b * 1e9).round() / 1e9);
            }
        }
        decade *= 10.0;
    }
    out
}

/// What the reader shares with the scrapes, per measured CPU (by position).
#[derive(Debug, Default)]
pub struct PerCpu {
    pub cpu: usize,
    /// The largest per-second maximum folded since the last scrape, ns.
    pub max_since_scrape_ns: AtomicU64,
    pub fail_above_intervals: AtomicU64,
}

/// Everything a scrape reads.
#[derive(Debug)]
pub struct WatchMetrics {
    pub live: LiveRegistry,
    pub per_cpu: Vec<Arc<PerCpu>>,
    /// host, probe, method, period.
    pub labels: Vec<(String, String)>,
    pub fail_above_ns: Option<u64>,
    pub readiness: Option<String>,
    pub start_time_s: f64,
}

impl WatchMetrics {
    fn labels_for(&self, cpu: usize) -> Vec<(String, String)> {
        let mut l = self.labels.clone();
        l.push(("cpu".into(), cpu.to_string()));
        l
    }
}

/// The text a `GET /metrics` answers.
pub fn render(metrics: &Arc<WatchMetrics>) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(metrics.clone()));
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, &registry)?;
    Ok(out)
}

/// Buckets (upper bound s, count) with +Inf last, the count, the sum in seconds.
pub type LiveBuckets = (Vec<(f64, u64)>, u64, f64);

/// A thread's histogram in the exposition's buckets: (upper bound s, count) per bucket
/// with +Inf last, the count and the sum in seconds (None: not measuring yet).
pub fn live_buckets(live: &LiveStats) -> Option<LiveBuckets> {
    let hist = live.histogram.get()?;
    let measuring = live.measuring.load(Ordering::Acquire);
    let mut counts = vec![0u64; hist.len()];
    if measuring {
        hist.read_into(&mut counts);
    }
    let bounds = bucket_bounds_s();
    let bounds_ns: Vec<u64> = bounds.iter().map(|b| (b * 1e9).round() as u64).collect();
    let mut buckets: Vec<(f64, u64)> = bounds.iter().map(|&b| (b, 0)).collect();
    buckets.push((f64::INFINITY, 0));
    let mut total = 0;
    for (i, &c) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
        let (_, high) = hist.bucket_range(i);
        let slot = bounds_ns.partition_point(|&b| b < high);
        buckets[slot].1 += c;
        total += c;
    }
    let sum_ns = if measuring {
        live.sum_ns.load(Ordering::Relaxed)
    } else {
        0
    };
    Some((buckets, total, sum_ns as f64 / 1e9))
}

impl Collector for WatchMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let live: Vec<(usize, Arc<LiveStats>)> =
            self.live.lock().map(|l| l.clone()).unwrap_or_default();
        {
            let mut m = encoder.encode_descriptor(
                "latscope_latency_seconds",
                "Wake-up latency of the measuring thread (timer probe)",
                None,
                MetricType::Histogram,
            )?;
            for (cpu, stats) in &live {
                if let Some((buckets, count, sum)) = live_buckets(stats) {
                    let labels = self.labels_for(*cpu);
                    m.encode_family(&labels)?
                        .encode_histogram::<Vec<(String, String)>>(sum, count, &buckets, None)?;
                }
            }
        }
        let counter = |name: &str,
                       help: &str,
                       get: &dyn Fn(&LiveStats) -> u64,
                       enc: &mut DescriptorEncoder| {
            let mut m = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
            for (cpu, stats) in &live {
                let v = if stats.measuring.load(Ordering::Acquire) {
                    get(stats)
                } else {
                    0
                };
                ConstCounter::new(v).encode(m.encode_family(&self.labels_for(*cpu))?)?;
            }
            Ok::<(), std::fmt::Error>(())
        };
        counter(
            "latscope_missed_periods",
            "Periods that passed without a wake-up",
            &|s| s.missed.load(Ordering::Relaxed),
            &mut encoder,
        )?;
        counter(
            "latscope_overruns",
            "Samples above the deadline",
            &|s| s.overruns.load(Ordering::Relaxed),
            &mut encoder,
        )?;
        self.encode_watch_metrics(&mut encoder)
    }
}

impl WatchMetrics {
    /// The reader's metrics: maximum since the last scrape, the alert, readiness, start.
    fn encode_watch_metrics(&self, encoder: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        {
            let mut m = encoder.encode_descriptor(
                "latscope_latency_max_seconds",
                "The largest latency since the last scrape (per-second resolution)",
                None,
                MetricType::Gauge,
            )?;
            for p in &self.per_cpu {
                let ns = p.max_since_scrape_ns.swap(0, Ordering::Relaxed);
                ConstGauge::new(ns as f64 / 1e9)
                    .encode(m.encode_family(&self.labels_for(p.cpu))?)?;
            }
        }
        if let Some(limit) = self.fail_above_ns {
            let mut m = encoder.encode_descriptor(
                "latscope_fail_above_intervals",
                "Intervals whose maximum exceeded --fail-above",
                None,
                MetricType::Counter,
            )?;
            for p in &self.per_cpu {
                let n = p.fail_above_intervals.load(Ordering::Relaxed);
                ConstCounter::new(n).encode(m.encode_family(&self.labels_for(p.cpu))?)?;
            }
            let g = encoder.encode_descriptor(
                "latscope_fail_above_seconds",
                "The --fail-above limit",
                None,
                MetricType::Gauge,
            )?;
            ConstGauge::new(limit as f64 / 1e9).encode(g)?;
        }
        if let Some(verdict) = &self.readiness {
            let mut m = encoder.encode_descriptor(
                "latscope_readiness",
                "doctor's verdict (read-only checks) for the measured CPUs",
                None,
                MetricType::Info,
            )?;
            let mut labels = self.labels.clone();
            labels.push(("verdict".into(), verdict.clone()));
            m.encode_info(&labels)?;
        }
        let g = encoder.encode_descriptor(
            "latscope_watch_start_time_seconds",
            "When this latscope watch started (Unix time)",
            None,
            MetricType::Gauge,
        )?;
        ConstGauge::new(self.start_time_s).encode(g)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exposition's buckets against the plain reference: each sample counted in the
    /// first bound at or above its bucket's top; count and sum as recorded.
    #[test]
    fn buckets_count_what_was_recorded() {
        crate::stats::live_histogram::enable(true);
        let live = Arc::new(LiveStats::default());
        let config = crate::stats::RecorderConfig {
            deadline_ns: 1_000_000,
            series_seconds: 2,
            raw_capacity: 0,
        };
        let mut rec = crate::stats::Recorder::new(&config, live.clone());
        rec.restart(0);
        let values = [
            500u64,
            1_000,
            1_500,
            3_000,
            20_000,
            20_001,
            700_000,
            2_000_000_000,
        ];
        for (i, &v) in values.iter().enumerate() {
            rec.record(i as u64 * 1_000, i as u64 * 1_000, v);
        }
        let (buckets, count, sum) = live_buckets(&live).unwrap();
        assert_eq!(count, values.len() as u64);
        assert!((sum - values.iter().sum::<u64>() as f64 / 1e9).abs() < 1e-9);
        let at = |le: f64| {
            buckets
                .iter()
                .take_while(|b| b.0 <= le)
                .map(|b| b.1)
                .sum::<u64>()
        };
        assert_eq!(at(1e-6), 2);
        assert_eq!(at(2e-6), 3);
        // 20 000 ns shares its bucket (20 000-20 015) with 20 001: a bucket counts under
        // the first bound at or above its top, so both are above 20 µs (never understated).
        assert_eq!(at(2e-5), 4);
        assert_eq!(at(5e-5), 6);
        assert_eq!(at(1.0), 7);
        assert_eq!(buckets.last().unwrap().1, 1);
        crate::stats::live_histogram::enable(false);
    }

    #[test]
    fn bounds_run_from_a_microsecond_to_a_second() {
        let b = bucket_bounds_s();
        assert_eq!(
            (b[0], b[1], b[2], *b.last().unwrap()),
            (1e-6, 2e-6, 5e-6, 1.0)
        );
        assert_eq!(b.len(), 19);
    }
}
