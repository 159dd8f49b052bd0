//! `--checkpoint`: while a scenario runs, its partial result (in the result schema,
//! marked `partial`) replaces the journal's last checkpoint every interval, so a
//! `kill -9` loses at most that much of what `report` shows.

use crate::result::journal::{self, Line, PartialLine};
use crate::result::{Checkpoint, CheckpointThread, Metric, ProbeKind, Scenario, ThreadResult};
use crate::stats::LiveStats;
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The checkpoint thread of one scenario; `finish` stops it and hands back the journal
/// file it last wrote (the runner appends there).
pub struct Checkpointer {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Option<File>>>,
}

/// What a checkpoint is written from: the scenario as it will be saved (no threads yet),
/// the live atomics of its measuring threads and the journal to rewrite.
pub struct CheckpointSource {
    pub template: Scenario,
    pub live: crate::probe::LiveRegistry,
    pub journal: Option<(PathBuf, File)>,
    pub interval_ns: u64,
}

impl Checkpointer {
    pub fn start(source: CheckpointSource) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        if source.journal.is_none() {
            return Self { done, thread: None };
        }
        let flag = done.clone();
        let thread = std::thread::Builder::new()
            .name("latscope-checkpoint".into())
            .spawn(move || checkpoint_loop(source, &flag))
            .ok();
        Self { done, thread }
    }

    /// Stops the thread; the newest journal file, when a checkpoint replaced it.
    pub fn finish(mut self) -> Option<File> {
        self.done.store(true, Ordering::Relaxed);
        self.thread.take().and_then(|t| t.join().ok()).flatten()
    }
}

fn checkpoint_loop(mut source: CheckpointSource, done: &AtomicBool) -> Option<File> {
    let (path, mut current) = source.journal.take()?;
    let mut replaced = None;
    let start_ns = crate::sys::clock::monotonic_ns();
    let mut next_ns = start_ns + source.interval_ns;
    while !done.load(Ordering::Relaxed) {
        let now = crate::sys::clock::monotonic_ns();
        if now < next_ns {
            crate::sys::clock::sleep_for_ns((next_ns - now).min(50_000_000));
            continue;
        }
        next_ns = now + source.interval_ns;
        let line = partial_line(&source, now - start_ns);
        let Ok(bytes) = journal::line(&Line::Partial(Box::new(line))) else {
            continue;
        };
        // Best effort: the scenario's own save reports write errors.
        let written = crate::output::atomic::create_growing(&path, |out| {
            super::store::copy_scenario_lines(&current, out)?;
            std::io::Write::write_all(out, &bytes)
        });
        if let Ok(Some(file)) = written {
            current = file.try_clone().unwrap_or(file);
            replaced = current.try_clone().ok();
        }
    }
    replaced
}

/// The running scenario as its measuring threads' atomics say so far.
fn partial_line(source: &CheckpointSource, elapsed_ns: u64) -> PartialLine {
    let live: Vec<(usize, Arc<LiveStats>)> =
        source.live.lock().map(|l| l.clone()).unwrap_or_default();
    let mut scenario = source.template.clone();
    scenario.partial = true;
    scenario.interrupted = true;
    scenario.elapsed_ns = elapsed_ns;
    let metric = live_metric(scenario.probe, &scenario.params.method);
    scenario.threads = live
        .iter()
        .map(|(cpu, s)| partial_thread(&scenario.params.method, metric, *cpu, s))
        .collect();
    let threads = scenario
        .threads
        .iter()
        .map(|t| CheckpointThread {
            cpu: t.cpu,
            samples: t.summary.samples,
            max_ns: t.summary.max_ns,
            missed: t.summary.missed,
        })
        .collect();
    PartialLine {
        checkpoint: Checkpoint {
            scenario: scenario.name.clone(),
            partial: true,
            started_at: scenario.started_at.clone(),
            written_at: crate::result::rfc3339_now(),
            elapsed_ns,
            threads,
        },
        scenario,
    }
}

/// What a probe's live atomics measure (the Recorder it hands its `LiveStats`), so a
/// checkpoint's thread is labelled as the finished result labels it: wake's wakee
/// response, net's round trip, gpio's total (loopback) or irq→user (respond).
fn live_metric(probe: ProbeKind, method: &str) -> Metric {
    match probe {
        ProbeKind::Timer | ProbeKind::Lava => Metric::Latency,
        ProbeKind::Wake => Metric::Response,
        ProbeKind::Net => Metric::RoundTrip,
        ProbeKind::Noise => Metric::Gap,
        ProbeKind::Gpio if method == "respond" => Metric::IrqToUser,
        ProbeKind::Gpio => Metric::Total,
    }
}

/// A thread's partial result: its live histogram's statistics (percentiles exact to the
/// histogram's 0.1 %, mean and standard deviation from its buckets), the exact maximum,
/// missed and overrun counts; without a live histogram, counts and maximum only, the
/// others marked unknown (shown as `–`, never judged).
fn partial_thread(method: &str, metric: Metric, cpu: usize, live: &LiveStats) -> ThreadResult {
    use crate::stats::summary::percentile;
    let max_ns = live.max_ns.load(Ordering::Relaxed);
    let mut th = ThreadResult {
        cpu,
        method: method.to_string(),
        metric,
        summary: crate::stats::Summary {
            samples: live.samples.load(Ordering::Relaxed),
            max_ns,
            missed: live.missed.load(Ordering::Relaxed),
            overruns: live.overruns.load(Ordering::Relaxed),
            ..Default::default()
        },
        histogram: Vec::new(),
        per_second_max_ns: Vec::new(),
        extra: Default::default(),
        worst_case: None,
    };
    let Some(h) = live.histogram.get().map(|h| h.snapshot()) else {
        th.extra.unknown_stats = Some(
            UNKNOWN_WITHOUT_HISTOGRAM
                .iter()
                .map(|s| s.name().to_string())
                .collect(),
        );
        return th;
    };
    let min_ns = if h.is_empty() { 0 } else { h.min() };
    let max_ns = max_ns.max(min_ns);
    let p = |q: f64| percentile(&h, q, min_ns, max_ns);
    let s = &mut th.summary;
    (s.samples, s.min_ns, s.max_ns) = (h.len(), min_ns, max_ns);
    (s.mean_ns, s.stddev_ns) = (h.mean(), h.stdev());
    (s.p50_ns, s.p90_ns, s.p99_ns) = (p(50.0), p(90.0), p(99.0));
    (s.p999_ns, s.p9999_ns, s.p99999_ns) = (p(99.9), p(99.99), p(99.999));
    th.histogram = h
        .iter_recorded()
        .map(|v| [v.value_iterated_to(), v.count_at_value()])
        .collect();
    th
}

const UNKNOWN_WITHOUT_HISTOGRAM: [crate::stats::Stat; 9] = {
    use crate::stats::Stat;
    [
        Stat::Min,
        Stat::Avg,
        Stat::Stddev,
        Stat::P50,
        Stat::P90,
        Stat::P99,
        Stat::P999,
        Stat::P9999,
        Stat::P99999,
    ]
};
