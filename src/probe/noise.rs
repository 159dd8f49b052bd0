//! `latscope noise`: how much time the OS steals from a busy core (oslat/sysjitter
//! style). One thread per CPU reads the clock in a tight loop; every gap between two
//! reads longer than the loop's own cost plus `threshold` is an interruption, recorded
//! (minus the loop cost) as one sample of metric `gap`.

use super::harness::run_measuring_threads_with_tids;
use super::{CommonSettings, Probe, ProbeContext, ProbeOutput};
use crate::result::{Metric, ParamsExtra, ThreadExtra, ThreadResult};
use crate::stats::{LiveStats, Recorder, RecorderConfig};
use crate::sys::clock;
use crate::warning::{Warning, WarningCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The method name in results: the measuring thread only reads the clock.
pub const METHOD: &str = "clock-loop";
/// How long each thread measures its own loop cost before the start barrier.
pub const CALIBRATION_NS: u64 = 20_000_000;
/// `--raw` keeps at most one gap per this many ns of run time (preallocated).
const RAW_GAP_SPACING_NS: u64 = 10_000;

/// The noise probe.
#[derive(Debug, Clone)]
pub struct NoiseProbe {
    /// Gaps (after subtracting the loop cost) at or below this are not noise.
    pub threshold_ns: u64,
    /// Gaps above this count as overruns.
    pub deadline_ns: u64,
}

/// The shortest iteration of the measuring loop seen in `duration_ns`: the loop's own
/// cost, subtracted from every gap. Runs the same reads and checks as `noise_phase`.
#[inline(never)]
pub fn loop_cost_ns(duration_ns: u64, stop: &AtomicBool) -> u64 {
    shortest_step_ns(clock::monotonic_ns, duration_ns, stop)
}

/// `loop_cost_ns` on any clock (the real one inlined; a scripted one in the tests): the
/// shortest difference between two consecutive reads until `duration_ns` after the first.
#[inline(always)]
fn shortest_step_ns(mut now_ns: impl FnMut() -> u64, duration_ns: u64, stop: &AtomicBool) -> u64 {
    let mut prev = now_ns();
    let end = prev + duration_ns;
    let mut min = u64::MAX;
    loop {
        let now = now_ns();
        let delta = now - prev;
        prev = now;
        if delta < min {
            min = delta;
        }
        if now >= end || stop.load(Ordering::Relaxed) {
            break;
        }
    }
    if min == u64::MAX {
        0
    } else {
        min
    }
}

/// The measuring loop: read the clock; a gap longer than cost + threshold is recorded.
/// Ends at `until_ns`, after `max_gaps` gaps, or when `stop` is set.
#[inline(never)]
pub fn noise_phase(
    rec: &mut Recorder,
    loop_cost_ns: u64,
    threshold_ns: u64,
    until_ns: u64,
    max_gaps: u64,
    stop: &AtomicBool,
) {
    let limit = loop_cost_ns + threshold_ns;
    let mut prev = clock::monotonic_ns();
    loop {
        let now = clock::monotonic_ns();
        let delta = now - prev;
        prev = now;
        if delta > limit {
            // Stamped with the gap's start: the last read before it.
            rec.record(now - delta, now, delta - loop_cost_ns);
            if rec.count() >= max_gaps {
                break;
            }
        }
        if now >= until_ns || stop.load(Ordering::Relaxed) {
            break;
        }
    }
}

/// What one measuring thread hands back.
struct NoiseOutcome {
    recorder: Recorder,
    loop_cost_ns: u64,
    started_ns: u64,
    ended_ns: u64,
}

/// The noise-specific numbers of one CPU, derived after the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseFigures {
    pub noise_ns_total: u64,
    pub noise_ns_per_second: f64,
    pub noise_percent: f64,
    pub gaps_per_second: f64,
}

impl NoiseFigures {
    /// From the total of recorded gaps, their count and the measured time.
    pub fn of(noise_ns_total: u64, gaps: u64, elapsed_ns: u64) -> Self {
        let secs = elapsed_ns.max(1) as f64 / 1e9;
        Self {
            noise_ns_total,
            noise_ns_per_second: noise_ns_total as f64 / secs,
            noise_percent: noise_ns_total as f64 / elapsed_ns.max(1) as f64 * 100.0,
            gaps_per_second: gaps as f64 / secs,
        }
    }
}

impl Probe for NoiseProbe {
    fn busy_waits(&self) -> bool {
        true
    }
    fn kind(&self) -> crate::result::ProbeKind {
        crate::result::ProbeKind::Noise
    }
    fn method(&self) -> String {
        METHOD.to_string()
    }
    fn period_ns(&self) -> u64 {
        0
    }
    fn deadline_ns(&self) -> u64 {
        self.deadline_ns
    }
    /// Named only when not the default 1 µs, so a suite's threshold sweep has unique
    /// names and `latscope noise`'s stay as they were.
    fn name_suffix(&self) -> Option<String> {
        (self.threshold_ns != 1_000)
            .then(|| format!("threshold={}", crate::units::name_ns(self.threshold_ns)))
    }
    fn extra_params(&self) -> ParamsExtra {
        ParamsExtra {
            threshold_ns: Some(self.threshold_ns),
            ..ParamsExtra::default()
        }
    }

    fn run(&self, settings: &CommonSettings, ctx: &ProbeContext) -> anyhow::Result<ProbeOutput> {
        let placements = super::placements(settings);
        let config = RecorderConfig {
            deadline_ns: self.deadline_ns,
            series_seconds: settings.series_seconds(1_000_000),
            raw_capacity: settings.raw_capacity(RAW_GAP_SPACING_NS),
        };
        let lives: Vec<Arc<LiveStats>> = placements.iter().map(|_| Arc::default()).collect();
        let stop = &*ctx.stop;
        let progress = super::start_progress(ctx, settings, &lives);
        let (threshold, max_gaps) = (self.threshold_ns, settings.samples.unwrap_or(u64::MAX));
        let outcomes = run_measuring_threads_with_tids(
            &placements,
            |i| {
                let rec = Recorder::new(&config, lives[i].clone());
                let scratch = Recorder::scratch(&config, lives[i].clone());
                Ok((rec, scratch, loop_cost_ns(CALIBRATION_NS, stop)))
            },
            |_, (mut rec, mut scratch, cost), start_ns| {
                clock::sleep_until_ns(start_ns);
                if settings.warmup_ns > 0 {
                    // Into a recorder thrown away: `rec` stays unused, so its restart
                    // below is a few stores, not a histogram-sized memset.
                    let warm_end = start_ns + settings.warmup_ns;
                    noise_phase(&mut scratch, cost, threshold, warm_end, u64::MAX, stop);
                }
                let started_ns = clock::monotonic_ns();
                rec.restart(started_ns);
                let until = settings
                    .duration_ns
                    .map_or(u64::MAX, |d| started_ns.saturating_add(d));
                noise_phase(&mut rec, cost, threshold, until, max_gaps, stop);
                NoiseOutcome {
                    recorder: rec,
                    loop_cost_ns: cost,
                    started_ns,
                    ended_ns: clock::monotonic_ns(),
                }
            },
        );
        progress.finish();
        let (outcomes, tids) = outcomes?;

        Ok(self.results(settings, outcomes, tids, stop.load(Ordering::Relaxed)))
    }
}

impl NoiseProbe {
    /// Every thread's gaps as a result (with its noise figures), warnings, `--raw`.
    fn results(
        &self,
        settings: &CommonSettings,
        outcomes: Vec<NoiseOutcome>,
        tids: Vec<i32>,
        interrupted: bool,
    ) -> ProbeOutput {
        let mut out = ProbeOutput {
            interrupted,
            ..Default::default()
        };
        let throttle_gap_ns = rt_throttle_gap_ns(settings);
        let (mut started, mut ended) = (u64::MAX, 0);
        for ((cpu, mut o), tid) in settings.cpus.iter().copied().zip(outcomes).zip(tids) {
            out.tids.push(super::MeasuringThread {
                cpu,
                tid,
                role: "noise".into(),
            });
            started = started.min(o.started_ns);
            ended = ended.max(o.ended_ns);
            let elapsed = o.ended_ns.saturating_sub(o.started_ns);
            let rec = &o.recorder;
            let figures = NoiseFigures::of(rec.sum_ns() as u64, rec.count(), elapsed);
            let mut tr = ThreadResult::from_recorder(cpu, METHOD, Metric::Gap, rec);
            tr.extra = ThreadExtra {
                noise_ns_total: Some(figures.noise_ns_total),
                noise_ns_per_second: Some(round2(figures.noise_ns_per_second)),
                noise_percent: Some(round4(figures.noise_percent)),
                gaps_per_second: Some(round2(figures.gaps_per_second)),
                loop_cost_ns: Some(o.loop_cost_ns),
                threshold_ns: Some(self.threshold_ns),
                measured_ns: Some(elapsed),
                per_second_truncated: rec.series().truncated().then_some(true),
                ..ThreadExtra::default()
            };
            if let Some(gap) = throttle_gap_ns {
                let long = count_at_or_above(rec, gap * 8 / 10);
                if long > 0 {
                    out.warnings.push(Warning::new(WarningCode::NoiseRtThrottling, format!(
                            "CPU {cpu}: {long} gap(s) of {} or more: RT throttling stops a spinning {} thread for {} every second here (sched_rt_runtime_us), so that noise is the kernel's throttling, not hardware",
                            crate::units::human_ns(gap * 8 / 10),
                            settings.policy,
                            crate::units::human_ns(gap)
                        )));
                }
            }
            super::finish_raw(
                super::RawLabel {
                    cpu,
                    method: METHOD,
                    metric: Metric::Gap,
                    columns: ["start_ns", "gap_ns"],
                    subject: &format!("CPU {cpu}"),
                    what: "gaps",
                },
                &mut o.recorder,
                settings.keep_raw,
                &mut tr,
                &mut out,
            );
            out.threads.push(tr);
        }
        out.elapsed_ns = ended.saturating_sub(started);
        out.window_ns = [started, ended];
        out
    }
}

/// How long RT throttling stops a real-time thread each throttling period, if it does.
fn rt_throttle_gap_ns(settings: &CommonSettings) -> Option<u64> {
    if !settings.policy.is_realtime() {
        return None;
    }
    let (runtime, period) = crate::sys::sched::rt_throttling()?;
    (runtime >= 0 && runtime < period).then(|| (period - runtime) as u64 * 1000)
}

/// Recorded gaps at or above `ns`, from the histogram.
pub fn count_at_or_above(rec: &Recorder, ns: u64) -> u64 {
    rec.histogram()
        .iter_recorded()
        .filter(|v| v.value_iterated_to() >= ns)
        .map(|v| v.count_at_value())
        .sum()
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn round4(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_from_totals() {
        let f = NoiseFigures::of(50_000_000, 10, 2_000_000_000);
        assert_eq!(f.noise_ns_per_second, 25_000_000.0);
        assert!((f.noise_percent - 2.5).abs() < 1e-9);
        assert_eq!(f.gaps_per_second, 5.0);
    }

    /// A clock that returns `reads` in turn (then keeps counting up by 1 ms).
    fn scripted(reads: &[u64]) -> impl FnMut() -> u64 + '_ {
        let mut i = 0;
        move || {
            i += 1;
            reads
                .get(i - 1)
                .copied()
                .unwrap_or_else(|| reads[reads.len() - 1] + (i - reads.len()) as u64 * 1_000_000)
        }
    }

    /// The loop's cost is its shortest iteration: a host stop (one long step) and slow
    /// steps do not raise it, the window ends it, and a set `stop` ends it after one step.
    #[test]
    fn loop_cost_is_the_shortest_step_of_the_window() {
        let stop = AtomicBool::new(false);
        // Steps of 30, 25, 2 ms (a stop), 40, 26 ns; the window of 5 ms ends after it.
        let reads = [
            1_000, 1_030, 1_055, 2_001_055, 2_001_095, 2_001_121, 6_000_000,
        ];
        assert_eq!(shortest_step_ns(scripted(&reads), 5_000_000, &stop), 25);
        // The window is 1 ms: the stop (read 4) ends it; the steps after it never count.
        let reads = [1_000, 1_030, 1_055, 2_001_055, 2_001_056];
        assert_eq!(shortest_step_ns(scripted(&reads), 1_000_000, &stop), 25);
        stop.store(true, Ordering::Relaxed);
        assert_eq!(
            shortest_step_ns(scripted(&[500, 520, 521]), 5_000_000, &stop),
            20
        );
        // The real clock: one step, and never more than the time the call took.
        let before = clock::monotonic_ns();
        let cost = loop_cost_ns(5_000_000, &stop);
        assert!(cost <= clock::monotonic_ns() - before, "{cost} ns");
    }

    #[test]
    fn phase_records_only_gaps_above_threshold() {
        let config = RecorderConfig {
            deadline_ns: 1_000_000,
            series_seconds: 2,
            raw_capacity: 0,
        };
        let mut rec = Recorder::standalone(&config);
        let stop = AtomicBool::new(false);
        let cost = loop_cost_ns(1_000_000, &stop);
        let until = clock::monotonic_ns() + 50_000_000;
        noise_phase(&mut rec, cost, 1_000, until, u64::MAX, &stop);
        assert!(rec.count() == 0 || rec.min_ns() > 1_000);
    }
}
