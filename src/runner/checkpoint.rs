//! `--checkpoint`: while a scenario runs, its partial result (in the result schema,
//! marked `partial`) replaces the journal's last checkpoint every interval, so a
//! `kill -9` loses at most that much of what `report` shows.

use crate::result::journal::{self, Line, PartialLine};
use crate::result::{Checkpoint, CheckpointThread, Scenario, ThreadResult};
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
        let written = crate::result::create_growing(&path, |out| {
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
    let threads: Vec<CheckpointThread> = source
        .live
        .lock()
        .map(|l| {
            l.iter()
                .map(|(cpu, s)| CheckpointThread {
                    cpu: *cpu,
                    samples: s.samples.load(Ordering::Relaxed),
                    max_ns: s.max_ns.load(Ordering::Relaxed),
                    missed: s.missed.load(Ordering::Relaxed),
                })
                .collect()
        })
        .unwrap_or_default();
    let mut scenario = source.template.clone();
    scenario.partial = true;
    scenario.interrupted = true;
    scenario.elapsed_ns = elapsed_ns;
    scenario.threads = threads
        .iter()
        .map(|t| partial_thread(&scenario.params.method, t))
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

/// A thread's partial result: counts and maximum (the statistics the atomics hold), the
/// others marked unknown (shown as `–`, never judged).
fn partial_thread(method: &str, t: &CheckpointThread) -> ThreadResult {
    use crate::stats::Stat;
    let mut th = ThreadResult {
        cpu: t.cpu,
        method: method.to_string(),
        metric: crate::result::LATENCY_METRIC.into(),
        summary: crate::stats::Summary {
            samples: t.samples,
            max_ns: t.max_ns,
            missed: t.missed,
            ..Default::default()
        },
        histogram: Vec::new(),
        per_second_max_ns: Vec::new(),
        extra: Default::default(),
    };
    let unknown = [
        Stat::Min,
        Stat::Avg,
        Stat::Stddev,
        Stat::P50,
        Stat::P90,
        Stat::P99,
        Stat::P999,
        Stat::P9999,
        Stat::P99999,
        Stat::Overruns,
    ];
    th.extra.insert(
        crate::result::UNKNOWN_STATS_KEY.into(),
        unknown.iter().map(|s| s.name()).collect::<Vec<_>>().into(),
    );
    th
}

