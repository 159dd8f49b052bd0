//! The watch's reader thread (SCHED_OTHER, on the CPUs not measured): a few ms after
//! each UTC second it folds every measuring thread's new counts into the current interval
//! (src/watch/interval.rs), rewrites the interval's file every minute, and at each
//! rotation writes it whole, judges --fail-above and starts the next file. When the
//! measurement ends it reads one last time, writes what it has (judged when the interval
//! is complete) and waits for the --on-fail hooks still running.

use super::alert::{run_hook, wait_for_hooks, Failure};
use super::files::{now_s, save, FileContext, IntervalFile};
use super::interval::{CpuTrack, Interval};
use super::metrics::PerCpu;
use super::settings::WatchSettings;
use crate::probe::LiveRegistry;
use crate::result::{Run, ScenarioParams};
use crate::stats::LiveStats;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often an unfinished interval's file is rewritten (a kill loses at most this).
const REWRITE_EVERY_S: u64 = 60;
/// How long after a second's end the reader reads (the samples of the second are in).
const AFTER_SECOND_NS: u64 = 5_000_000;

/// What the reader needs.
pub struct ReaderSetup {
    pub registry: LiveRegistry,
    pub settings: WatchSettings,
    pub host: String,
    pub template: Run,
    pub params: ScenarioParams,
    pub name: String,
    pub per_cpu: Vec<Arc<PerCpu>>,
    /// The CPUs the reader and the hooks run on (not measured).
    pub helper_cpus: Vec<usize>,
}

/// The running reader; `finish` makes it read and write one last time.
pub struct Reader {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<anyhow::Result<Written>>>,
}

/// The files a watch wrote: how many and the last (not a list: a watch of months at
/// `--rotate 1m` would keep one path per minute).
#[derive(Debug, Default)]
pub struct Written {
    pub count: usize,
    pub last: Option<PathBuf>,
}

impl Reader {
    pub fn start(setup: ReaderSetup) -> std::io::Result<Self> {
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        let thread = std::thread::Builder::new()
            .name("latscope-watch".into())
            .spawn(move || {
                super::server::helper_thread_placement(&setup.helper_cpus);
                read_until(setup, &flag)
            })?;
        Ok(Self {
            done,
            thread: Some(thread),
        })
    }

    /// After the measuring threads stopped: the last read and write; the files written.
    pub fn finish(mut self) -> anyhow::Result<Written> {
        self.done.store(true, Ordering::Relaxed);
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(anyhow::anyhow!("the watch's reader thread panicked")),
            None => Ok(Written::default()),
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The reader's state between seconds.
struct State {
    setup: ReaderSetup,
    file: IntervalFile,
    resumed: Vec<(usize, Interval)>,
    tracks: Vec<CpuTrack>,
    life_from_s: u64,
    last_write_s: u64,
    written: Written,
    /// The --on-fail hooks started (finished ones are dropped at each judgement).
    hooks: Vec<std::thread::JoinHandle<()>>,
}

fn read_until(setup: ReaderSetup, done: &AtomicBool) -> anyhow::Result<Written> {
    let start_s = now_s();
    let rotate_s = setup.settings.rotate_s;
    let mut file = IntervalFile::new(
        &setup.settings.dir,
        &setup.host,
        start_s - start_s % rotate_s,
        rotate_s,
        start_s,
    );
    let resumed = file.resume(start_s);
    let mut st = State {
        setup,
        file,
        resumed,
        tracks: Vec::new(),
        life_from_s: start_s,
        last_write_s: start_s,
        written: Written::default(),
        hooks: Vec::new(),
    };
    while !done.load(Ordering::Relaxed) {
        let next_ns = (crate::sys::clock::realtime_ns() / 1_000_000_000 + 1) * 1_000_000_000
            + AFTER_SECOND_NS;
        loop {
            let now = crate::sys::clock::realtime_ns();
            if now >= next_ns || done.load(Ordering::Relaxed) {
                break;
            }
            std::thread::sleep(Duration::from_nanos((next_ns - now).min(100_000_000)));
        }
        if done.load(Ordering::Relaxed) {
            break;
        }
        st.fold();
        let now = now_s();
        if now >= st.file.end_s {
            st.rotate(now)?;
        } else if now >= st.last_write_s + REWRITE_EVERY_S || st.first_write_due() {
            st.write(now, false)?;
        }
    }
    st.fold();
    let now = now_s();
    let complete = now >= st.file.end_s;
    st.write(now, complete)?;
    if complete {
        st.judge();
    }
    let timeout = Duration::from_nanos(st.setup.settings.on_fail_timeout_ns);
    wait_for_hooks(std::mem::take(&mut st.hooks), timeout);
    Ok(st.written)
}

impl State {
    /// The measuring threads published so far, by CPU (a copy: the lock is not held).
    fn published(&self) -> Vec<(usize, Arc<LiveStats>)> {
        self.setup
            .registry
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    /// Tracks for the measuring threads once they are published, then a fold of each.
    fn fold(&mut self) {
        if self.tracks.is_empty() {
            for (cpu, stats) in self.published() {
                let Some(h) = stats.histogram.get() else {
                    continue;
                };
                let pos = self.resumed.iter().position(|(c, _)| *c == cpu);
                let iv = pos
                    .map(|p| self.resumed.swap_remove(p).1)
                    .unwrap_or_else(Interval::empty);
                let seconds = self.setup.settings.rotate_s as usize;
                self.tracks.push(CpuTrack::new(cpu, h.len(), iv, seconds));
            }
        }
        let live = self.published();
        for track in &mut self.tracks {
            let Some((_, stats)) = live.iter().find(|(c, _)| *c == track.cpu) else {
                continue;
            };
            let Some(h) = stats.histogram.get() else {
                continue;
            };
            if let Some(max) = track.fold(stats, h) {
                track.interval.per_second_max_ns.push(max);
                if let Some(p) = self.setup.per_cpu.iter().find(|p| p.cpu == track.cpu) {
                    p.max_since_scrape_ns.fetch_max(max, Ordering::Relaxed);
                }
            }
        }
    }

    /// The file is written as soon as the first samples are in (it exists from the start
    /// of measuring; a kill after that loses at most the last minute).
    fn first_write_due(&self) -> bool {
        self.written.count == 0 && self.tracks.iter().any(|t| t.interval.count() > 0)
    }

    /// Writes the interval's file (atomically) as it is `now`.
    fn write(&mut self, now: u64, complete: bool) -> anyhow::Result<()> {
        if self.tracks.is_empty() && self.resumed.is_empty() {
            return Ok(()); // nothing measured yet (still warming up)
        }
        let ctx = FileContext {
            template: &self.setup.template,
            params: &self.setup.params,
            name: &self.setup.name,
        };
        let intervals: Vec<(usize, &Interval)> = self
            .tracks
            .iter()
            .map(|t| (t.cpu, &t.interval))
            .chain(self.resumed.iter().map(|(c, iv)| (*c, iv)))
            .collect();
        let run = self
            .file
            .run(&ctx, &intervals, now, complete, self.life_from_s);
        save(&self.file.path, &run)?;
        self.last_write_s = now;
        if self.written.last.as_ref() != Some(&self.file.path) {
            self.written.count += 1;
            self.written.last = Some(self.file.path.clone());
        }
        Ok(())
    }

    /// The interval is over: written whole, judged, and the next one begun.
    fn rotate(&mut self, now: u64) -> anyhow::Result<()> {
        self.write(now, true)?;
        self.judge();
        let rotate_s = self.setup.settings.rotate_s;
        let start = now - now % rotate_s;
        self.file = IntervalFile::new(
            &self.setup.settings.dir,
            &self.setup.host,
            start,
            rotate_s,
            start,
        );
        for t in &mut self.tracks {
            t.next_interval();
        }
        self.resumed.clear();
        self.life_from_s = start;
        Ok(())
    }

    /// `--fail-above` on the interval that just ended.
    fn judge(&mut self) {
        self.hooks.retain(|h| !h.is_finished());
        let Some(limit) = self.setup.settings.fail_above_ns else {
            return;
        };
        for t in &self.tracks {
            if t.interval.max_ns <= limit {
                continue;
            }
            let failure = Failure {
                interval_start: super::files::rfc3339(self.file.start_s),
                cpu: t.cpu,
                max_ns: t.interval.max_ns,
                limit_ns: limit,
                file: self.file.path.display().to_string(),
            };
            eprintln!("{}", failure.line());
            if let Some(p) = self.setup.per_cpu.iter().find(|p| p.cpu == t.cpu) {
                p.fail_above_intervals.fetch_add(1, Ordering::Relaxed);
            }
            let s = &self.setup.settings;
            if !s.on_fail.is_empty() {
                let timeout = Duration::from_nanos(s.on_fail_timeout_ns);
                let cpus = self.setup.helper_cpus.clone();
                self.hooks
                    .extend(run_hook(&s.on_fail, failure, timeout, cpus));
            }
        }
    }
}
