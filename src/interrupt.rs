//! Ctrl-C and SIGTERM: the first stops the measurement so what was measured is reported
//! and saved (marked interrupted); a second one runs the emergency restorers (cpusets,
//! IRQ affinity) and exits at once with code 130.

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

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

/// Installs the handlers and returns the stop flag the probes watch.
pub fn install() -> std::io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut signals = Signals::new([SIGINT, SIGTERM])?;
    let flag = stop.clone();
    std::thread::Builder::new()
        .name("latscope-signals".into())
        .stack_size(crate::sys::memlock::HELPER_STACK_BYTES)
        .spawn(move || {
            for _sig in signals.forever() {
                if flag.swap(true, Ordering::SeqCst) {
                    eprintln!("\nlatscope: second interrupt, restoring the system and aborting");
                    run_restorers();
                    std::process::exit(crate::error::EXIT_ABORTED);
                }
                eprintln!("\nlatscope: interrupted, finishing the current scenario's report (Ctrl-C again to abort)");
            }
        })?;
    Ok(stop)
}
