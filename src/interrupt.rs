//! Terminating signals are exit paths: the first SIGINT, SIGTERM, SIGHUP, SIGQUIT or
//! SIGPIPE stops the measurement so what was measured is reported and saved (marked
//! interrupted, naming the signal); a second one runs the emergency restorers (cpusets,
//! IRQ affinity, tracefs instance, exec loads, io scratch files) and exits at once.
//! Every signal ends the process with code 130 (README: exit codes).

use signal_hook::consts::{SIGHUP, SIGINT, SIGPIPE, SIGQUIT, SIGTERM};
use signal_hook::iterator::Signals;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The signals that end a run (each would otherwise kill latscope with nothing restored).
pub const TERMINATING_SIGNALS: [i32; 5] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE];

/// Set once a second signal started the emergency restorers; the process then ends
/// from the signal thread with EXIT_ABORTED.
static ABORTING: AtomicBool = AtomicBool::new(false);

/// Called before the process exits on its own: while a second signal's restorers run
/// (cpusets, IRQs, tracefs), exiting would cut them short, so this waits for the signal
/// thread to end the process.
pub fn wait_if_aborting() {
    while ABORTING.load(Ordering::SeqCst) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The first terminating signal received (0: none).
static FIRST_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The name of the first terminating signal received, if any (`SIGHUP`).
pub fn received_signal() -> Option<&'static str> {
    signal_name(FIRST_SIGNAL.load(Ordering::Relaxed))
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

/// One line on stderr that never panics: after SIGHUP the terminal may be gone (EIO).
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
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
                if flag.swap(true, Ordering::SeqCst) {
                    ABORTING.store(true, Ordering::SeqCst);
                    say(&format!(
                        "\nlatscope: second interrupt ({name}), restoring the system and aborting"
                    ));
                    run_restorers();
                    std::process::exit(crate::error::EXIT_ABORTED);
                }
                say(&format!(
                    "\nlatscope: interrupted ({name}), finishing the current scenario's report (Ctrl-C again to abort)"
                ));
            }
        })?;
    let _ = STOP.set(stop.clone());
    Ok(stop)
}
