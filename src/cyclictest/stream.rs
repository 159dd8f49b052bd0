//! `latscope cyclictest`'s main loop, as cyclictest's runs beside its measuring threads:
//! every 10 ms it reads the threads' published atomics and writes what cyclictest writes
//! then, into a terminal, a pipe or a file alike, each batch in one write, so a run
//! killed at any moment leaves what cyclictest would have written by then (more: nothing
//! waits in a buffer). Without `-q` or `-v`: a frame, the policy header and a `T:` line
//! per thread, then the cursor moved up over it (`-M`: only when a maximum grew). With
//! `-v`: each thread's new samples as `thread:cycle:value` lines. It collects `--spike`
//! samples, answers SIGUSR1 (the status on stderr) and SIGUSR2 (the status into the
//! /dev/shm status file) and hands the `T:` lines to whoever opens the `-F` pipe.
//!
//! The measuring threads are not touched: they store atomics and ring slots; this
//! thread formats and writes.

use super::format::{header_line, t_line, CyclictestOutput, Spike, Spikes};
use crate::probe::LiveRegistry;
use crate::stats::LiveStats;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// cyclictest's main loop sleeps 10 ms between its prints.
const TICK: Duration = Duration::from_millis(10);
/// cyclictest's FIFO thread waits 500 ms after finding no reader.
const FIFO_RETRY: Duration = Duration::from_millis(500);

/// What the stream writes, and where.
pub struct StreamSetup {
    pub opts: CyclictestOutput,
    /// Thread N's interval, µs (`I:`).
    pub intervals_us: Vec<u64>,
    /// Filled by the probe when its threads start.
    pub registry: LiveRegistry,
    /// SIGUSR1's and SIGUSR2's flags.
    pub status_requests: [Arc<AtomicBool>; 2],
    /// SIGUSR2's destination (/dev/shm/cyclictestPID).
    pub status_file: Option<PathBuf>,
}

/// What the stream collected for the end of the run.
#[derive(Debug, Default)]
pub struct StreamOutcome {
    pub spikes: Spikes,
    /// Samples per thread a ring overwrote before they were read (printed as missing).
    pub lost: Vec<u64>,
}

/// The running stream; `finish` ends it after a last read of the rings.
pub struct Streamer {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<StreamOutcome>>,
}

impl Streamer {
    pub fn start(setup: StreamSetup) -> std::io::Result<Self> {
        let done = Arc::new(AtomicBool::new(false));
        let done2 = done.clone();
        let thread = std::thread::Builder::new()
            .name("latscope-main".into())
            .stack_size(crate::sys::memlock::HELPER_STACK_BYTES)
            .spawn(move || stream_until(&done2, &setup))?;
        Ok(Self {
            done,
            thread: Some(thread),
        })
    }

    /// Ends the stream once the measuring threads are done: the rings are read to the
    /// end, no further frame is drawn (the caller prints the last one, exact).
    pub fn finish(mut self) -> StreamOutcome {
        self.stop().unwrap_or_default()
    }

    fn stop(&mut self) -> Option<StreamOutcome> {
        self.done.store(true, Ordering::SeqCst);
        self.thread.take().and_then(|t| t.join().ok())
    }
}

impl Drop for Streamer {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// One thread's reading position and `-o` reduction state.
#[derive(Default, Clone)]
struct Cursor {
    next: u64,
    redmax: u64,
    cycle_of_max: u64,
    reduce: u64,
    lost: u64,
}

/// The stream's state between ticks.
#[derive(Default)]
struct State {
    cursors: Vec<Cursor>,
    spikes: Spikes,
    /// The maxima the last frame showed (`-M` draws when one grew).
    drawn_maxima: Option<Vec<u64>>,
    fifo_retry_at: Option<Instant>,
}

fn stream_until(done: &AtomicBool, setup: &StreamSetup) -> StreamOutcome {
    let opts = &setup.opts;
    let mut state = State::default();
    let mut stdout = std::io::stdout();
    loop {
        let finished = done.load(Ordering::SeqCst);
        let threads = setup.registry.lock().map(|l| l.clone()).unwrap_or_default();
        let mut batch = String::new();
        if !threads.is_empty() {
            state.cursors.resize(threads.len(), Cursor::default());
            if opts.verbose || opts.spike.is_some() {
                drain_rings(&threads, opts, &mut state, &mut batch);
            }
            // cyclictest's main loop draws no frame once a thread is done (its `-l`, a
            // break, the end of `-D`): the last frame is the exact one printed after.
            let ending = threads.iter().any(|(_, l)| l.done.load(Ordering::Acquire));
            if opts.frames() && !finished && !ending && frame_due(&threads, opts, &mut state) {
                frame(&threads, setup, &mut batch);
            }
        }
        if !batch.is_empty() {
            // A closed stdout (SIGPIPE ends the run) only stops the writing.
            let _ = stdout
                .write_all(batch.as_bytes())
                .and_then(|()| stdout.flush());
        }
        answer_status_requests(&threads, setup);
        if let Some(path) = &opts.fifo {
            serve_fifo(path, &threads, setup, &mut state);
        }
        if finished {
            break;
        }
        std::thread::sleep(TICK);
    }
    StreamOutcome {
        spikes: state.spikes,
        lost: state.cursors.iter().map(|c| c.lost).collect(),
    }
}

/// C, Min, Act, Avg and Max of one thread in the output unit, exact (the atomics of its
/// recorder; cyclictest's values before the first cycle).
pub fn live_values(live: &LiveStats, unit: u64) -> [u64; 5] {
    let cycles = live.samples.load(Ordering::Acquire);
    if cycles == 0 {
        return [0, 1_000_000, 0, 0, 0];
    }
    let sum = live.sum_ns.load(Ordering::Relaxed);
    [
        cycles,
        live.min_ns.load(Ordering::Relaxed) / unit,
        live.last_ns.load(Ordering::Relaxed) / unit,
        sum / cycles / unit,
        live.max_ns.load(Ordering::Relaxed) / unit,
    ]
}

/// The `T:` lines of the threads as they are now.
fn status_lines(threads: &[(usize, Arc<LiveStats>)], setup: &StreamSetup) -> String {
    let opts = &setup.opts;
    let mut s = String::new();
    for (i, (_, live)) in threads.iter().enumerate() {
        let interval = setup.intervals_us.get(i).copied().unwrap_or(0);
        let tid = live.tid.load(Ordering::Relaxed) as i64;
        s.push_str(&t_line(
            i,
            tid,
            interval,
            live_values(live, opts.unit_ns()),
            opts,
        ));
        s.push('\n');
    }
    s
}

/// Whether a frame is drawn now: always, or with `-M` when a maximum grew.
fn frame_due(
    threads: &[(usize, Arc<LiveStats>)],
    opts: &CyclictestOutput,
    state: &mut State,
) -> bool {
    if !opts.refresh_on_max {
        return true;
    }
    let maxima: Vec<u64> = threads
        .iter()
        .map(|(_, l)| l.max_ns.load(Ordering::Relaxed))
        .collect();
    if state.drawn_maxima.as_ref() == Some(&maxima) {
        return false;
    }
    state.drawn_maxima = Some(maxima);
    true
}

/// One live frame and the cursor moved up over it (print_stat's loop).
fn frame(threads: &[(usize, Arc<LiveStats>)], setup: &StreamSetup, batch: &mut String) {
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    batch.push_str(&header_line(&setup.opts, &loadavg));
    batch.push_str("\n\n");
    batch.push_str(&status_lines(threads, setup));
    batch.push_str(&format!("\x1b[{}A", threads.len() + 2));
}

/// The new samples of every thread: `-v` lines (the largest of every `-o` samples) and
/// `--spike` samples.
fn drain_rings(
    threads: &[(usize, Arc<LiveStats>)],
    opts: &CyclictestOutput,
    state: &mut State,
    batch: &mut String,
) {
    let unit = opts.unit_ns();
    let reduce_by = opts.oscope.max(1);
    let mut spikes: Vec<Spike> = Vec::new();
    for (index, ((_, live), cursor)) in threads.iter().zip(&mut state.cursors).enumerate() {
        let Some(ring) = live.ring.get() else {
            continue;
        };
        let published = live.samples.load(Ordering::Acquire);
        let drained = ring.drain(&mut cursor.next, published, || {
            live.samples.load(Ordering::Acquire)
        });
        cursor.lost += drained.lost;
        for sample in drained.samples {
            let value = sample.value_ns / unit;
            if opts.spike.is_some_and(|(trigger, _)| value > trigger) {
                spikes.push(Spike {
                    at_ns: sample.at_ns,
                    thread: index,
                    value,
                });
            }
            // cyclictest never prints the sample that broke the run (-b): its main loop
            // stops before the next print; parsers (ChromiumOS') add it from the
            // `# Break value:` line themselves.
            let broke = opts.breaktrace.is_some_and(|limit| value > limit);
            if opts.verbose && !broke {
                if value > cursor.redmax {
                    cursor.redmax = value;
                    cursor.cycle_of_max = sample.index;
                }
                cursor.reduce += 1;
                if cursor.reduce == reduce_by {
                    batch.push_str(&format!(
                        "{index:8}:{:8}:{:8}\n",
                        cursor.cycle_of_max, cursor.redmax
                    ));
                    (cursor.reduce, cursor.redmax) = (0, 0);
                }
            }
        }
    }
    if let Some((_, nodes)) = opts.spike {
        state.spikes.count += spikes.len() as u64;
        state.spikes.listed.extend(spikes);
        state.spikes.listed.sort_unstable();
        state.spikes.listed.truncate(nodes);
    }
}

/// SIGUSR1: the status on stderr; SIGUSR2: the status into the status file (truncated
/// first), each framed as cyclictest frames it.
fn answer_status_requests(threads: &[(usize, Arc<LiveStats>)], setup: &StreamSetup) {
    let [usr1, usr2] = &setup.status_requests;
    let asked = [
        usr1.swap(false, Ordering::SeqCst),
        usr2.swap(false, Ordering::SeqCst),
    ];
    if !asked.contains(&true) {
        return;
    }
    let rule = "#---------------------------\n";
    let text = format!(
        "{rule}# cyclictest current status:\n{}{rule}",
        status_lines(threads, setup)
    );
    if asked[0] {
        let _ = std::io::stderr().write_all(text.as_bytes());
    }
    if let (true, Some(path)) = (asked[1], &setup.status_file) {
        super::status::write_status_file(path, &text);
    }
}

/// `-F`: the `T:` lines to a reader of the named pipe; without one, tried again after
/// 500 ms.
fn serve_fifo(
    path: &std::path::Path,
    threads: &[(usize, Arc<LiveStats>)],
    setup: &StreamSetup,
    state: &mut State,
) {
    if state.fifo_retry_at.is_some_and(|at| Instant::now() < at) {
        return;
    }
    match super::status::open_fifo_for_reader(path) {
        Some(mut file) => {
            let _ = file.write_all(status_lines(threads, setup).as_bytes());
            state.fifo_retry_at = None;
        }
        None => state.fifo_retry_at = Some(Instant::now() + FIFO_RETRY),
    }
}
