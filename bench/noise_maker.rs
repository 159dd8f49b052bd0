//! The noise maker: imitates this VM's host at its worst by stopping random CPUs with
//! SCHED_FIFO 99 spins of random length (1-20 ms by default), about three times a second per
//! CPU, and logs every stall it made as `cpu start_ns end_ns` (CLOCK_MONOTONIC) so tests can
//! tell its stalls from theirs. Run the latency tests beside it to prove they judge latscope,
//! not the machine:
//!
//!     cargo run --release --example noise-maker -- --log /tmp/noise.log --duration 600 &
//!     LATSCOPE_NOISE_LOG=/tmp/noise.log cargo test --release
//!
//! Stops after --duration seconds or on SIGINT/SIGTERM. RT throttling (950 ms of every
//! second on a default kernel) keeps the machine usable even if a spin were to run away.

use latscope::sys::{affinity, clock, sched};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// FIFO 99 stalls of random length on random CPUs, logged, to run the latency tests under.
#[derive(clap::Parser)]
#[command(name = "noise-maker")]
struct Options {
    /// Log every stall as `cpu start_ns end_ns` (CLOCK_MONOTONIC) to this file.
    #[arg(long)]
    log: Option<std::path::PathBuf>,
    /// Stop after this many seconds.
    #[arg(long = "duration", default_value_t = 600)]
    duration_s: u64,
    /// Mean stalls per second on each CPU (Poisson-spaced).
    #[arg(long, default_value_t = 3.0)]
    per_second: f64,
    /// Shortest stall in ms.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=50))]
    min_ms: u64,
    /// Longest stall in ms.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=50))]
    max_ms: u64,
    /// CPUs to stall (default: every online CPU), e.g. 0-1.
    #[arg(long)]
    cpus: Option<String>,
}

fn main() {
    let o = <Options as clap::Parser>::parse();
    if o.min_ms > o.max_ms {
        eprintln!(
            "noise-maker: --min-ms {} is above --max-ms {}",
            o.min_ms, o.max_ms
        );
        std::process::exit(2);
    }
    let cpus = match &o.cpus {
        Some(list) => latscope::units::parse_cpu_list_plain(list).unwrap_or_else(|e| {
            eprintln!("noise-maker: --cpus {list}: {e}");
            std::process::exit(2)
        }),
        None => affinity::online_cpus(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).expect("signal handler");
    }
    let log: Arc<Mutex<Box<dyn Write + Send>>> = Arc::new(Mutex::new(match &o.log {
        Some(p) => Box::new(std::fs::File::create(p).expect("create the log")),
        None => Box::new(std::io::sink()),
    }));
    let end = clock::monotonic_ns() + o.duration_s * 1_000_000_000;
    let mean_gap_ns = (1e9 / o.per_second) as u64;
    let threads: Vec<_> = cpus
        .iter()
        .map(|&cpu| {
            let (stop, log) = (stop.clone(), log.clone());
            let (min_ns, max_ns) = (o.min_ms * 1_000_000, o.max_ms * 1_000_000);
            std::thread::Builder::new()
                .name(format!("noise-mk/{cpu}"))
                .spawn(move || {
                    affinity::pin_current_thread(cpu).expect("pin");
                    sched::set_current_thread(sched::Policy::Fifo, 99).expect("FIFO 99 (root?)");
                    let mut rng = fastrand::Rng::new();
                    let mut stalls = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        // Exponential gaps: a Poisson process, as uneven as the host's stops.
                        let u = rng.f64().max(1e-9);
                        let gap = (-(u.ln()) * mean_gap_ns as f64) as u64;
                        let at = clock::monotonic_ns() + gap.min(5 * mean_gap_ns);
                        if at >= end {
                            break;
                        }
                        clock::sleep_until_ns(at);
                        let length = rng.u64(min_ns..=max_ns);
                        let start = clock::monotonic_ns();
                        let mut now = start;
                        while now < start + length {
                            std::hint::spin_loop();
                            now = clock::monotonic_ns();
                        }
                        stalls += 1;
                        let mut log = log.lock().unwrap();
                        let _ = writeln!(log, "{cpu} {start} {now}");
                        let _ = log.flush();
                    }
                    stalls
                })
                .expect("spawn")
        })
        .collect();
    let total: u64 = threads.into_iter().map(|t| t.join().unwrap_or(0)).sum();
    eprintln!("noise-maker: {total} stalls on CPUs {cpus:?}");
}
