//! The live progress line on a terminal: a thread that reads the measuring threads'
//! atomics four times a second and redraws one indicatif line. Measuring threads never
//! touch it. Knows nothing of probes (they call it; it reads `stats` atomics only).
//! Only a terminal that redraws a line in place gets it (a pseudo-terminal or a virtual
//! console): a serial console (a LAVA board's, `/dev/ttyS0`, `/dev/console`) logs every
//! redraw with its escape codes, so there the line stays off.

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
    /// Starts the progress line labelled `label` if `show`; otherwise does nothing. The
    /// warm-up (`warmup_ns`) is labelled as such and its counts never shown: a CPU's counts
    /// appear once its thread has started the measured phase (`LiveStats::measuring`);
    /// `total_ns` (warm-up included) gives the time left.
    pub fn start(
        show: bool,
        label: &str,
        cpus: Vec<usize>,
        lives: Vec<Arc<LiveStats>>,
        samples: Option<u64>,
        total_ns: Option<u64>,
        warmup_ns: u64,
    ) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        if !show || !stderr_redraws_in_place() {
            return Self { done, thread: None };
        }
        let label = label.to_string();
        let done2 = done.clone();
        let thread = std::thread::Builder::new()
            .name("latscope-progress".into())
            .stack_size(crate::sys::memlock::HELPER_STACK_BYTES)
            .spawn(move || {
                let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
                bar.set_style(
                    ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                let started = Instant::now();
                let mut status = String::with_capacity(64);
                let mut tail = String::with_capacity(256);
                while !done2.load(Ordering::Relaxed) {
                    let elapsed = started.elapsed().as_nanos() as u64;
                    let measuring = lives.iter().any(|l| l.measuring.load(Ordering::Acquire));
                    status_text(&mut status, elapsed, warmup_ns, total_ns, measuring);
                    // A terminal of 0 columns (a serial console's answer) fits 80.
                    let columns = crate::sys::term_size::stderr_columns()
                        .unwrap_or_else(crate::render::table::fallback_width);
                    let width = Some(columns.saturating_sub(PREFIX_COLUMNS));
                    tail_text(&mut tail, &cpus, &lives, samples, false);
                    let len = |t: &str| t.chars().count();
                    if width.is_some_and(|w| len(&label) + len(&status) + len(&tail) > w) {
                        // Too long for the line: the worst CPU first, so it is never cut.
                        tail_text(&mut tail, &cpus, &lives, samples, true);
                    }
                    let line = fit(&label, &status, &tail, width);
                    bar.set_message(line);
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

/// The status after the label: the warm-up and its time left until the measuring threads
/// say the measured phase began (a clock alone would show the warm-up's counts as
/// measured, or a suite's `1962/1000`), then the share done and the time left.
fn status_text(
    status: &mut String,
    elapsed: u64,
    warmup_ns: u64,
    total_ns: Option<u64>,
    measuring: bool,
) {
    status.clear();
    if !measuring && warmup_ns > 0 {
        match warmup_ns.checked_sub(elapsed).filter(|&l| l > 0) {
            Some(left) => {
                let left = left.div_ceil(1_000_000_000);
                let _ = write!(status, " warm-up ({left} s left, not recorded)");
            }
            None => status.push_str(" warm-up (ending, not recorded)"),
        }
    } else if let Some(total) = total_ns {
        let pct = (elapsed as f64 / total as f64 * 100.0).min(100.0);
        let left = total.saturating_sub(elapsed).div_ceil(1_000_000_000);
        let _ = write!(status, " {pct:>3.0}% {left} s left");
    }
}

/// The per-CPU part: each CPU's measured counts (none during its warm-up), in CPU order
/// or with `worst_first` (a line too long) by the largest max and without the sample
/// counts (the share done says as much); for many CPUs one part naming the worst.
fn tail_text(
    tail: &mut String,
    cpus: &[usize],
    lives: &[Arc<LiveStats>],
    samples: Option<u64>,
    worst_first: bool,
) {
    tail.clear();
    let measured: Vec<(usize, &Arc<LiveStats>)> = cpus
        .iter()
        .copied()
        .zip(lives)
        .filter(|(_, l)| l.measuring.load(Ordering::Acquire))
        .collect();
    if measured.is_empty() {
        return;
    }
    if cpus.len() > MAX_CPUS_LISTED {
        let (cpus, lives): (Vec<usize>, Vec<Arc<LiveStats>>) =
            measured.iter().map(|(c, l)| (*c, Arc::clone(l))).unzip();
        worst_cpu(tail, &cpus, &lives);
        return;
    }
    let mut order: Vec<usize> = (0..measured.len()).collect();
    if worst_first {
        order.sort_by_key(|&i| std::cmp::Reverse(measured[i].1.max_ns.load(Ordering::Relaxed)));
    }
    for i in order {
        let (cpu, live) = measured[i];
        let _ = write!(tail, " | cpu{cpu}: ");
        if worst_first {
            tail.push_str("max ");
            tail.push_str(&crate::units::human_ns(live.max_ns.load(Ordering::Relaxed)));
            missed_part(tail, live);
        } else {
            cpu_part(tail, live, samples);
        }
    }
}

/// The columns before the message (`⠁   1s `: spinner, elapsed) and the last column, which
/// a terminal would wrap at.
const PREFIX_COLUMNS: usize = 9;

/// Columns of the label kept after a suite's `[3/40, ~2 min after this]` unless the worst
/// CPU needs them; `NAME_KEPT` are kept always (`timer clock…`).
const LABEL_KEPT: usize = 30;
const NAME_KEPT: usize = 12;

/// `text` cut to `n` characters, `…` marking the cut.
fn cut(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        return text.to_string();
    }
    let mut out: String = text.chars().take(n.saturating_sub(1)).collect();
    if n > 0 {
        out.push('…');
    }
    out
}

/// The line `label + status + tail` in `width` columns (None: as long as it is). The
/// label's end (the scenario's name) gives way first, so the suite's position and time
/// left at its start and the status (time left) stay; the name keeps `LABEL_KEPT`
/// columns unless the tail's first part (the worst CPU, when the line is too long) needs
/// them, and `NAME_KEPT` always; then the CPUs' parts that do not fit whole are left out.
fn fit(label: &str, status: &str, tail: &str, width: Option<usize>) -> String {
    let whole = format!("{label}{status}{tail}");
    let Some(width) = width else {
        return whole;
    };
    let len = |s: &str| s.chars().count();
    if len(&whole) <= width {
        return whole;
    }
    let head = label.find("] ").map_or(0, |i| len(&label[..i + 1]));
    let first_part = tail
        .get(3..)
        .and_then(|t| t.find(" | "))
        .map_or(tail, |i| &tail[..i + 3]);
    let without_status = width.saturating_sub(len(status));
    let room = width
        .saturating_sub(len(status) + len(tail))
        .max((head + LABEL_KEPT).min(without_status.saturating_sub(len(first_part))))
        .max(head + NAME_KEPT)
        .min(without_status);
    let mut line = format!("{}{status}", cut(label, room));
    if len(&line) + MIN_TAIL > width {
        // No room for a useful part of the tail: the status stays whole.
        return cut(&line, width);
    }
    // The CPUs' parts that fit whole; the first one cut if none does.
    let parts = tail.split(" | ").filter(|p| !p.is_empty());
    let mut added = 0;
    for part in parts {
        if len(&line) + 3 + len(part) > width {
            break;
        }
        line.push_str(" | ");
        line.push_str(part);
        added += 1;
    }
    if added == 0 {
        return cut(&format!("{line}{tail}"), width);
    }
    line
}

/// The fewest columns of the per-CPU tail worth showing (`| cpu0: 12…`).
const MIN_TAIL: usize = 10;

/// More CPUs than this: the line names the worst CPU and the count, not each CPU.
const MAX_CPUS_LISTED: usize = 4;

/// ` 12/1000 max 1.2 ms missed 3` for one CPU.
fn cpu_part(line: &mut String, live: &LiveStats, samples: Option<u64>) {
    let n = live.samples.load(Ordering::Relaxed);
    let _ = write!(line, "{n}");
    if let Some(s) = samples {
        let _ = write!(line, "/{s}");
    }
    let max = live.max_ns.load(Ordering::Relaxed);
    let _ = write!(line, " max {}", crate::units::human_ns(max));
    missed_part(line, live);
}

/// ` missed 3` when a CPU missed wake-ups.
fn missed_part(line: &mut String, live: &LiveStats) {
    let missed = live.missed.load(Ordering::Relaxed);
    if missed > 0 {
        let _ = write!(line, " missed {missed}");
    }
}

/// ` | 64 CPUs, worst cpu12: ...` for many CPUs (one line, not one part per CPU).
fn worst_cpu(line: &mut String, cpus: &[usize], lives: &[Arc<LiveStats>]) {
    let worst = cpus
        .iter()
        .zip(lives)
        .max_by_key(|(_, l)| l.max_ns.load(Ordering::Relaxed));
    let fewest = lives
        .iter()
        .map(|l| l.samples.load(Ordering::Relaxed))
        .min();
    if let Some((cpu, live)) = worst {
        let _ = write!(line, " | {} CPUs, worst cpu{cpu}: ", cpus.len());
        cpu_part(line, live, None);
        let _ = write!(line, " | fewest samples {}", fewest.unwrap_or(0));
    }
}

/// Whether stderr is a terminal that redraws a line in place: a pseudo-terminal
/// (`/dev/pts/N`: ssh, terminal emulators, `script`) or a virtual console (`/dev/ttyN`),
/// and `TERM` is not `dumb`. Not a pipe or file, not a serial line (`/dev/ttyS0`,
/// `ttyAMA0`, `hvc0`, `ttyUSB0`, ...) nor `/dev/console`, where a board farm logs
/// every redraw.
pub fn stderr_redraws_in_place() -> bool {
    if std::env::var_os("TERM").is_some_and(|t| t == "dumb") {
        return false;
    }
    std::fs::read_link("/proc/self/fd/2")
        .is_ok_and(|dev| redrawing_terminal(&dev.to_string_lossy()))
}

/// Whether a terminal device path is a pseudo-terminal or a virtual console.
fn redrawing_terminal(dev: &str) -> bool {
    if dev.starts_with("/dev/pts/") {
        return true;
    }
    dev.strip_prefix("/dev/tty")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::{fit, redrawing_terminal, status_text, tail_text, worst_cpu, MAX_CPUS_LISTED};
    use crate::stats::LiveStats;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    #[test]
    fn the_line_fits_the_width_and_keeps_the_time_left() {
        let label =
            "[1/3, ~4 s after this] timer clock-nanosleep 300 µs load=mem-churn:100%,cpus=1";
        let status = "  38% 2 s left";
        let tail = " | cpu0: 1234 max 41.44 µs | cpu1: 1234 max 54.13 µs";
        for width in [40, 71, 80, 191] {
            let line = fit(label, status, tail, Some(width));
            assert!(line.chars().count() <= width, "{width}: {line}");
            assert!(line.starts_with("[1/3, ~4 s after this] "), "{line}");
            if width >= 71 {
                assert!(line.contains(status), "{width}: {line}");
            }
            // A long status (the warm-up's) stays whole, the tail gives way.
            let warm = " warm-up (1 s left, not recorded)";
            let line = fit(label, warm, tail, Some(width));
            assert!(line.chars().count() <= width, "{width}: {line}");
            if width >= 71 {
                assert!(line.contains(warm), "{width}: {line}");
            }
        }
        let whole = fit(label, status, tail, None);
        assert_eq!(whole, format!("{label}{status}{tail}"));
        assert_eq!(fit(label, status, tail, Some(500)), whole);
        assert!(fit(label, status, tail, Some(100)).contains("timer clock-nanosleep 300 µs"));
        // At 80 columns (71 for the message) the first CPU's part stays whole.
        let line = fit(
            label,
            status,
            " | cpu1: max 54.13 µs | cpu0: max 41.44 µs",
            Some(71),
        );
        assert!(line.ends_with(" | cpu1: max 54.13 µs"), "{line}");
        assert!(line.contains("timer clock"), "{line}");
    }

    #[test]
    fn many_cpus_make_one_part_naming_the_worst_cpu_and_the_count() {
        let cpus: Vec<usize> = (0..64).collect();
        let lives: Vec<Arc<LiveStats>> = cpus
            .iter()
            .map(|&c| {
                let live = LiveStats::default();
                live.samples.store(1000 + c as u64, Ordering::Relaxed);
                live.max_ns
                    .store(if c == 12 { 1_200_000 } else { 40_000 }, Ordering::Relaxed);
                Arc::new(live)
            })
            .collect();
        assert!(cpus.len() > MAX_CPUS_LISTED);
        let mut line = String::new();
        worst_cpu(&mut line, &cpus, &lives);
        assert_eq!(
            line,
            " | 64 CPUs, worst cpu12: 1012 max 1.2 ms | fewest samples 1000"
        );
        assert!(
            fit("timer", " 38% 2 s left", &line, Some(80))
                .chars()
                .count()
                <= 80
        );
    }

    fn live(samples: u64, max_ns: u64, measuring: bool) -> Arc<LiveStats> {
        let live = LiveStats::default();
        live.samples.store(samples, Ordering::Relaxed);
        live.max_ns.store(max_ns, Ordering::Relaxed);
        live.measuring.store(measuring, Ordering::Relaxed);
        Arc::new(live)
    }

    #[test]
    fn the_warm_ups_counts_are_never_shown_as_measured() {
        // The clock says the warm-up is over, the threads have not started measuring:
        // still the warm-up, and no counts (they are the warm-up's 999 samples).
        let mut status = String::new();
        status_text(
            &mut status,
            1_100_000_000,
            1_000_000_000,
            Some(4e9 as u64),
            false,
        );
        assert_eq!(status, " warm-up (ending, not recorded)");
        status_text(
            &mut status,
            400_000_000,
            1_000_000_000,
            Some(4e9 as u64),
            false,
        );
        assert_eq!(status, " warm-up (1 s left, not recorded)");
        status_text(
            &mut status,
            2_000_000_000,
            1_000_000_000,
            Some(4e9 as u64),
            true,
        );
        assert_eq!(status, "  50% 2 s left");
        let mut tail = String::new();
        let warm = [live(999, 476_500, false), live(1962, 90_000, false)];
        tail_text(&mut tail, &[0, 1], &warm, Some(1000), false);
        assert_eq!(tail, "");
        let one = [live(249, 187_860, true), live(1962, 90_000, false)];
        tail_text(&mut tail, &[0, 1], &one, Some(1000), false);
        assert_eq!(tail, " | cpu0: 249/1000 max 187.86 µs");
    }

    #[test]
    fn a_line_too_long_puts_the_worst_cpu_first() {
        let lives = [live(1234, 41_440, true), live(1234, 3_000_000, true)];
        let mut tail = String::new();
        tail_text(&mut tail, &[0, 1], &lives, None, true);
        assert_eq!(tail, " | cpu1: max 3 ms | cpu0: max 41.44 µs");
        let label = "[9/27, ~40 s after this] timer clock-nanosleep 1 ms load=cpu:100%,cpus=1";
        let line = fit(label, "  38% 2 s left", &tail, Some(71));
        assert!(line.ends_with(" | cpu1: max 3 ms"), "{line}");
        assert!(line.contains(" 38% 2 s left"), "{line}");
    }

    #[test]
    fn serial_consoles_get_no_progress_line() {
        for dev in ["/dev/pts/0", "/dev/pts/17", "/dev/tty1", "/dev/tty63"] {
            assert!(redrawing_terminal(dev), "{dev}");
        }
        for dev in [
            "/dev/ttyS0",
            "/dev/ttyAMA0",
            "/dev/ttymxc1",
            "/dev/hvc0",
            "/dev/ttyUSB0",
            "/dev/console",
            "/dev/tty",
            "/dev/null",
            "pipe:[1234]",
            "/tmp/log",
        ] {
            assert!(!redrawing_terminal(dev), "{dev}");
        }
    }
}
