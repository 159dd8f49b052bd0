//! Terminating signals are exit paths: the first SIGINT, SIGTERM, SIGHUP, SIGQUIT or
//! SIGPIPE stops the measurement so what was measured is reported and saved (marked
//! interrupted, naming the signal); a second one stops the waiting: the runner skips
//! what is slow (the trace analysis) and still saves every sample its measuring threads
//! took, then restores the system and exits. Only when those threads do not come back
//! within `ABORT_GRACE_NS` (a wait the kernel does not end, a hung load), or nothing is
//! being measured, does the signal thread run the emergency restorers (cpusets, IRQ
//! affinity, tracefs instance, exec loads, io scratch files, terminal settings) and exit
//! at once. Every signal ends the process with code 130 (README: exit codes), except
//! under `latscope cyclictest`, which exits 0 as cyclictest does and says nothing on the
//! first signal (`quiet_first_signal`). SIGUSR1 and SIGUSR2 ask `latscope cyclictest`
//! for its status (`status_signals`) instead of killing it.

use signal_hook::consts::{SIGHUP, SIGINT, SIGPIPE, SIGQUIT, SIGTERM};
use signal_hook::iterator::Signals;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The signals that end a run (each would otherwise kill latscope with nothing restored).
pub const TERMINATING_SIGNALS: [i32; 5] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE];

/// Set once a second signal arrived: the runner skips what can wait and saves at once.
static ABORTING: AtomicBool = AtomicBool::new(false);

/// Set by `quiet_first_signal`: the first signal stops the run without a line on stderr.
static QUIET_FIRST: AtomicBool = AtomicBool::new(false);

/// The first terminating signal stops the run silently (`latscope cyclictest`: a
/// script's stderr gets what cyclictest's gets); a second one still says it aborts.
pub fn quiet_first_signal() {
    QUIET_FIRST.store(true, Ordering::Relaxed);
}

/// Flags set by SIGUSR1 and SIGUSR2 (registered once per process): these signals no
/// longer kill latscope; whoever holds the flags answers them (cyclictest's status dump
/// on stderr, and into its /dev/shm status file).
pub fn status_signals() -> std::io::Result<[Arc<AtomicBool>; 2]> {
    static FLAGS: OnceLock<[Arc<AtomicBool>; 2]> = OnceLock::new();
    if let Some(flags) = FLAGS.get() {
        return Ok(flags.clone());
    }
    let flags = [
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    ];
    signal_hook::flag::register(signal_hook::consts::SIGUSR1, flags[0].clone())?;
    signal_hook::flag::register(signal_hook::consts::SIGUSR2, flags[1].clone())?;
    let _ = FLAGS.set(flags.clone());
    Ok(flags)
}

/// How long a second signal waits for the measuring threads to hand back their samples
/// before the signal thread restores the system and exits without them.
pub const ABORT_GRACE_NS: u64 = 1_000_000_000;

/// Who ends the process after a second signal (`PHASE`).
const IDLE: u8 = 0;
/// A probe measures: a second signal waits up to `ABORT_GRACE_NS` for it to return.
const MEASURING: u8 = 1;
/// The runner has the samples and restores and saves on its own: a second signal lets it.
const FINISHING: u8 = 2;
/// The signal thread runs the restorers and exits: nobody else may exit meanwhile.
const RESTORING: u8 = 3;

static PHASE: AtomicU8 = AtomicU8::new(IDLE);

/// Whether a second signal asked to abort: skip what can wait, save, restore, exit.
pub fn aborting() -> bool {
    ABORTING.load(Ordering::SeqCst)
}

/// The runner: a probe is about to measure (a second signal gives it `ABORT_GRACE_NS`
/// to return its samples).
pub fn measuring() {
    let _ = PHASE.compare_exchange(IDLE, MEASURING, Ordering::SeqCst, Ordering::SeqCst);
    let _ = PHASE.compare_exchange(FINISHING, MEASURING, Ordering::SeqCst, Ordering::SeqCst);
}

/// The runner: the probe returned; from here on it restores and saves by itself, so a
/// second signal no longer ends the process under it. When the signal thread already
/// began restoring (the grace ran out), this waits for it to end the process.
pub fn finishing() {
    if PHASE
        .compare_exchange(MEASURING, FINISHING, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        wait_if_aborting();
    }
}

/// The caller handles a second signal itself, from now until the process exits
/// (`--host`: it cuts the boards' connections so each saves at once, then fetches their
/// results): the signal thread marks it `aborting()` and never exits under it.
pub fn saves_on_its_own() {
    let _ = PHASE.compare_exchange(IDLE, FINISHING, Ordering::SeqCst, Ordering::SeqCst);
}

/// Called before the process exits on its own: while a second signal's restorers run
/// (cpusets, IRQs, tracefs), exiting would cut them short, so this waits for the signal
/// thread to end the process; otherwise it returns at once and keeps the signal thread
/// from starting them.
pub fn wait_if_aborting() {
    loop {
        let phase = PHASE.load(Ordering::SeqCst);
        if phase != RESTORING
            && PHASE
                .compare_exchange(phase, FINISHING, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The first terminating signal received (0: none).
static FIRST_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The name of the first terminating signal received, if any (`SIGHUP`).
pub fn received_signal() -> Option<&'static str> {
    signal_name(FIRST_SIGNAL.load(Ordering::Relaxed))
}

/// Terminating signals received so far, and the latest of them: a write to a pipe gives
/// up when one arrives during it (output/pipe.rs).
static SIGNALS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static LATEST_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// How many terminating signals arrived so far.
pub fn signals_received() -> u64 {
    SIGNALS.load(Ordering::SeqCst)
}

/// The name of the latest terminating signal received, if any.
pub fn latest_signal() -> Option<&'static str> {
    signal_name(LATEST_SIGNAL.load(Ordering::SeqCst))
}

/// The name of a terminating signal.
pub fn signal_name(sig: i32) -> Option<&'static str> {
    match sig {
        SIGINT => Some("SIGINT"),
        SIGTERM => Some("SIGTERM"),
        SIGHUP => Some("SIGHUP"),
        SIGQUIT => Some("SIGQUIT"),
        SIGPIPE => Some("SIGPIPE"),
        _ => None,
    }
}

/// One line on stderr that never panics (after SIGHUP the terminal may be gone: EIO)
/// and never holds the signal thread: a stderr pipe nobody reads gets 1 s.
fn say(text: &str) {
    let err = std::io::stderr();
    if crate::sys::fifo::may_wait(&err) {
        let deadline = crate::sys::clock::monotonic_ns() + 1_000_000_000;
        let late = Box::new(move || {
            (crate::sys::clock::monotonic_ns() > deadline).then(|| "1 s".to_string())
        });
        let mut out = crate::sys::fifo::PollWriter::new(err, "standard error", late);
        let _ = writeln!(out, "{text}");
    } else {
        let _ = writeln!(err.lock(), "{text}");
    }
}

type Restorer = Box<dyn Fn() + Send + Sync>;

fn restorers() -> &'static Mutex<Vec<(u64, Restorer)>> {
    static R: OnceLock<Mutex<Vec<(u64, Restorer)>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(Vec::new()))
}

/// Registers a function that undoes a system change if latscope must abort; returns a
/// key for `unregister_restorer` once the change is undone normally.
pub fn register_restorer(f: impl Fn() + Send + Sync + 'static) -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let key = NEXT.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut r) = restorers().lock() {
        r.push((key, Box::new(f)));
    }
    key
}

pub fn unregister_restorer(key: u64) {
    if let Ok(mut r) = restorers().lock() {
        r.retain(|(k, _)| *k != key);
    }
}

/// Runs every registered restorer, newest first.
pub fn run_restorers() {
    if let Ok(r) = restorers().lock() {
        for (_, f) in r.iter().rev() {
            f();
        }
    }
}

/// Installs the handlers (once per process; later calls share the same flag) and returns
/// the stop flag the probes watch.
pub fn install() -> std::io::Result<Arc<AtomicBool>> {
    static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    if let Some(stop) = STOP.get() {
        return Ok(stop.clone());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut signals = Signals::new(TERMINATING_SIGNALS)?;
    let flag = stop.clone();
    std::thread::Builder::new()
        .name("latscope-signals".into())
        .stack_size(crate::sys::memlock::HELPER_STACK_BYTES)
        .spawn(move || {
            for sig in signals.forever() {
                let name = signal_name(sig).unwrap_or("signal");
                let _ = FIRST_SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
                LATEST_SIGNAL.store(sig, Ordering::SeqCst);
                SIGNALS.fetch_add(1, Ordering::SeqCst);
                if !flag.swap(true, Ordering::SeqCst) {
                    if QUIET_FIRST.load(Ordering::Relaxed) {
                        continue;
                    }
                    say(&format!(
                        "\nlatscope: interrupted ({name}), finishing the current scenario's report (Ctrl-C again to abort)"
                    ));
                } else if !ABORTING.swap(true, Ordering::SeqCst) {
                    say(&format!(
                        "\nlatscope: second interrupt ({name}), saving what was measured, restoring the system and aborting"
                    ));
                    // Further signals wait here: the abort is under way.
                    abort_after_grace();
                }
            }
        })?;
    let _ = STOP.set(stop.clone());
    Ok(stop)
}

/// A second signal's watch: restores the system and exits (130) itself unless the
/// runner got its samples back within `ABORT_GRACE_NS` (it then restores, saves and
/// exits on its own) or the process exits first.
fn abort_after_grace() {
    let deadline = crate::sys::clock::monotonic_ns() + ABORT_GRACE_NS;
    loop {
        let phase = PHASE.load(Ordering::SeqCst);
        let expired = crate::sys::clock::monotonic_ns() >= deadline;
        if phase == FINISHING {
            return;
        }
        if (phase == IDLE || expired)
            && PHASE
                .compare_exchange(phase, RESTORING, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            if phase == MEASURING {
                say("latscope: the measuring threads did not stop within 1 s: the current scenario's samples are lost (an --export-json file keeps its last checkpoint)");
            }
            run_restorers();
            std::process::exit(crate::error::EXIT_ABORTED);
        }
        crate::sys::clock::sleep_for_ns(10_000_000);
    }
}
