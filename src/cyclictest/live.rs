//! `latscope cyclictest`'s live display: without `-q`, on a terminal, cyclictest's header
//! and `T:` lines redrawn in place while it measures, as cyclictest does. A thread reads
//! the measuring threads' published atomics (samples, max, the live histogram's Min and
//! Avg, exact to 0.1 %) ten times a second; the measuring loops are not touched. The block
//! is erased at the end, where the exact final lines take its place.

use super::format::{t_line, CyclictestOutput};
use crate::probe::LiveRegistry;
use hdrhistogram::Histogram;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The running display; `finish` (or drop) stops it and erases its lines.
pub struct LiveView {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the lines show besides the live values.
pub struct LiveSetup {
    pub opts: CyclictestOutput,
    /// Thread N's interval, µs.
    pub intervals_us: Vec<u64>,
}

impl LiveView {
    /// Starts the display when cyclictest would show one: no `-q` or `-v`, stdout a
    /// terminal that redraws in place. Publishes the plan's live atomics for it.
    pub fn start_if_wanted(planned: &mut super::plan::CyclictestPlan) -> Option<Self> {
        use std::io::IsTerminal;
        let opts = &planned.output;
        let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
        if opts.quiet || opts.verbose || dumb || !std::io::stdout().is_terminal() {
            return None;
        }
        let sp = planned.plan.scenarios.first()?;
        let base_us = sp.probe.period_ns() / 1000;
        let intervals_us = (0..sp.settings.cpus.len() as u64)
            .map(|i| base_us + i * planned.distance_us)
            .collect();
        let registry = LiveRegistry::default();
        planned.plan.output.live_view = Some(registry.clone());
        let setup = LiveSetup {
            opts: opts.clone(),
            intervals_us,
        };
        Some(Self::start(registry, setup))
    }

    /// Starts redrawing from `registry` (filled when the probe starts).
    pub fn start(registry: LiveRegistry, setup: LiveSetup) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        let done2 = done.clone();
        let thread = std::thread::Builder::new()
            .name("latscope-live".into())
            .stack_size(crate::sys::memlock::HELPER_STACK_BYTES)
            .spawn(move || draw_until(&done2, &registry, &setup))
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

impl Drop for LiveView {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One thread's values between redraws: its previous histogram (for Act) and tid.
#[derive(Default)]
struct Seen {
    previous: Option<Histogram<u64>>,
    act_ns: u64,
    tid: i64,
}

fn draw_until(done: &AtomicBool, registry: &LiveRegistry, setup: &LiveSetup) {
    let mut seen: Vec<Seen> = Vec::new();
    let mut drawn_lines = 0;
    let mut stdout = std::io::stdout();
    while !done.load(Ordering::Relaxed) {
        let threads = registry.lock().map(|l| l.clone()).unwrap_or_default();
        if !threads.is_empty() {
            if seen.len() != threads.len() {
                seen = threads.iter().map(|_| Seen::default()).collect();
            }
            find_tids(&threads, &mut seen);
            let mut block = String::new();
            if drawn_lines > 0 {
                block.push_str(&format!("\x1b[{drawn_lines}A"));
            }
            block.push_str(&header(&setup.opts));
            for (i, ((_, live), s)) in threads.iter().zip(&mut seen).enumerate() {
                let interval = setup.intervals_us.get(i).copied().unwrap_or(0);
                let values = values_of(live, s, setup.opts.unit_ns());
                block.push_str(&t_line(i, s.tid, interval, values, &setup.opts));
                block.push_str("\x1b[K\n");
            }
            drawn_lines = threads.len() + 2;
            let _ = stdout.write_all(block.as_bytes());
            let _ = stdout.flush();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if drawn_lines > 0 {
        let _ = write!(stdout, "\x1b[{drawn_lines}A\x1b[J");
        let _ = stdout.flush();
    }
}

/// cyclictest's live header and the blank line under it.
fn header(opts: &CyclictestOutput) -> String {
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let slash = if opts.priority == 0 { "/other" } else { "" };
    format!(
        "policy: {}{slash}: loadavg: {}\x1b[K\n\x1b[K\n",
        opts.policy_name,
        loadavg.trim_end()
    )
}

/// C, Min, Act, Avg, Max in the output unit: counts and max from the atomics, Min and
/// Avg from the live histogram, Act the largest sample since the last redraw.
fn values_of(live: &crate::stats::LiveStats, seen: &mut Seen, unit: u64) -> [u64; 5] {
    let cycles = live.samples.load(Ordering::Relaxed);
    let max = live.max_ns.load(Ordering::Relaxed);
    let (mut min, mut avg) = (0, 0);
    if let Some(h) = live.histogram.get().map(|h| h.snapshot()) {
        if !h.is_empty() {
            min = h.min();
            avg = h.mean() as u64;
        }
        let mut since = h.clone();
        if let Some(previous) = &seen.previous {
            let _ = since.subtract(previous);
        }
        if !since.is_empty() {
            seen.act_ns = since.max();
        }
        seen.previous = Some(h);
    }
    if cycles == 0 {
        // cyclictest's values before the first cycle.
        return [0, 1_000_000, 0, 0, 0];
    }
    [
        cycles,
        min / unit,
        // A bucket's upper bound can pass the exact max by its 0.1 %.
        seen.act_ns.min(max) / unit,
        avg / unit,
        max / unit,
    ]
}

/// The measuring threads' tids from their names (`latscope-cpuN`, in tid order when
/// several share a CPU), once each is found.
fn find_tids(threads: &[(usize, Arc<crate::stats::LiveStats>)], seen: &mut [Seen]) {
    if seen.iter().all(|s| s.tid != 0) {
        return;
    }
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return;
    };
    let mut named: Vec<(i64, String)> = dir
        .filter_map(|e| {
            let e = e.ok()?;
            let tid: i64 = e.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
            Some((tid, comm.trim_end().to_string()))
        })
        .collect();
    named.sort();
    named.retain(|(tid, _)| !seen.iter().any(|s| s.tid == *tid));
    for ((cpu, _), s) in threads.iter().zip(seen.iter_mut()) {
        if s.tid != 0 {
            continue;
        }
        let name = format!("latscope-cpu{cpu}");
        if let Some(i) = named.iter().position(|(_, n)| *n == name) {
            s.tid = named.remove(i).0;
        }
    }
}
