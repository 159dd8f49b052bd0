//! The live progress line on a terminal: a thread that reads the measuring threads'
//! atomics four times a second and redraws one indicatif line. Measuring threads never
//! touch it.

use crate::probe::ProbeContext;
use crate::stats::LiveStats;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fmt::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct Progress {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Starts the progress line if `ctx.progress`; otherwise does nothing.
    pub fn start(
        ctx: &ProbeContext,
        cpus: Vec<usize>,
        lives: Vec<Arc<LiveStats>>,
        samples: Option<u64>,
        total_ns: Option<u64>,
    ) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        if let Ok(mut live) = ctx.live.lock() {
            *live = cpus.iter().copied().zip(lives.iter().cloned()).collect();
        }
        if !ctx.progress {
            return Self { done, thread: None };
        }
        let label = ctx.label.clone();
        let done2 = done.clone();
        let thread = std::thread::Builder::new()
            .name("latscope-progress".into())
            .spawn(move || {
                let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
                bar.set_style(
                    ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                let started = Instant::now();
                let mut line = String::with_capacity(256);
                while !done2.load(Ordering::Relaxed) {
                    line.clear();
                    let _ = write!(line, "{label}");
                    if let Some(total) = total_ns {
                        let pct =
                            (started.elapsed().as_nanos() as f64 / total as f64 * 100.0).min(100.0);
                        let _ = write!(line, " {pct:>3.0}%");
                    }
                    for (cpu, live) in cpus.iter().zip(&lives) {
                        let n = live.samples.load(Ordering::Relaxed);
                        let max = live.max_ns.load(Ordering::Relaxed);
                        let _ = write!(line, " | cpu{cpu}: {n}");
                        if let Some(s) = samples {
                            let _ = write!(line, "/{s}");
                        }
                        let _ = write!(line, " max {}", crate::units::human_ns(max));
                        let missed = live.missed.load(Ordering::Relaxed);
                        if missed > 0 {
                            let _ = write!(line, " missed {missed}");
                        }
                    }
                    bar.set_message(line.clone());
                    bar.tick();
                    std::thread::sleep(Duration::from_millis(250));
                }
                bar.finish_and_clear();
            })
            .ok();
        Self { done, thread }
    }

    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}
