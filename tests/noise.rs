//! `latscope noise` finds a stall of known length and period: a FIFO 99 thread on the
//! measured CPU spins 2 ms every 250 ms while noise measures there at FIFO 50.

use assert_cmd::Command;
use latscope::sys::{affinity, clock, sched};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const STALL_NS: u64 = 2_000_000;
const STALL_EVERY_NS: u64 = 250_000_000;
const MEASURE_S: u64 = 3;

/// Spins `STALL_NS` every `STALL_EVERY_NS` on `cpu` at FIFO 99 until `stop`; returns
/// how many stalls it made.
fn stall_injector(cpu: usize, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        affinity::pin_current_thread(cpu).expect("pin the stall thread");
        sched::set_current_thread(sched::Policy::Fifo, 99).expect("FIFO 99 for the stall");
        let mut next = clock::monotonic_ns() + 10_000_000;
        let mut stalls = 0;
        while !stop.load(Ordering::Relaxed) {
            clock::sleep_until_ns(next);
            let began = clock::monotonic_ns();
            while clock::monotonic_ns() < began + STALL_NS {
                std::hint::spin_loop();
            }
            stalls += 1;
            next += STALL_EVERY_NS;
        }
        stalls
    })
}

/// Sets the flag on drop, so the injector stops even when the test fails.
struct StopOnDrop(Arc<AtomicBool>);
impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Gaps at or above `ns` in a result thread's histogram.
fn gaps_at_or_above(thread: &serde_json::Value, ns: u64) -> u64 {
    thread["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b[0].as_u64().unwrap() >= ns)
        .map(|b| b[1].as_u64().unwrap())
        .sum()
}

#[test]
fn noise_finds_an_injected_fifo_stall() {
    if !sched::can_use_realtime() {
        eprintln!("SKIPPED noise_finds_an_injected_fifo_stall: needs SCHED_FIFO (run as root)");
        return;
    }
    let online = affinity::online_cpus();
    if online.len() < 2 {
        eprintln!("SKIPPED noise_finds_an_injected_fifo_stall: needs 2 CPUs (one stays free)");
        return;
    }
    let cpu = *online.last().unwrap();
    // The hypervisor on this VM stops the guest for 1-20 ms several times a minute; each
    // such stop is a real gap of its own. A run where the host added more than a few is
    // measured again (up to three times) rather than widening the bound.
    let mut attempts = 0;
    let (t, found, expected, throttled, max) = loop {
        attempts += 1;
        let stop = Arc::new(AtomicBool::new(false));
        let injector = stall_injector(cpu, stop.clone());
        let _stop_injector = StopOnDrop(stop.clone());
        let out = Command::cargo_bin("latscope")
            .unwrap()
            .args([
                "noise",
                "--cpus",
                &cpu.to_string(),
                "--policy",
                "fifo",
                "-p",
                "50",
            ])
            .args(["-D", &MEASURE_S.to_string(), "--warmup", "0.3s", "-q"])
            .args(["--export-json", "-"])
            .output()
            .unwrap();
        stop.store(true, Ordering::Relaxed);
        let made = injector.join().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let sc = &run["scenarios"][0];
        assert_eq!(sc["probe"], "noise");
        let t = &sc["threads"][0];
        assert_eq!(t["metric"], "gap");
        let expected = MEASURE_S * 1_000_000_000 / STALL_EVERY_NS;
        let found = gaps_at_or_above(t, 1_900_000);
        // RT throttling stops the FIFO pair for up to ~50 ms once a second: count those too.
        let throttled = gaps_at_or_above(t, 20_000_000);
        let max = t["max_ns"].as_u64().unwrap();
        eprintln!(
            "stalls injected {made} (in the measured {MEASURE_S} s: ~{expected}), gaps >= 1.9 ms {found}, of them >= 20 ms {throttled}, max {max} ns, extra {}",
            t["extra"]
        );
        assert!(
            found + 1 >= expected,
            "found {found} stall gaps, expected about {expected}"
        );
        if found <= expected + throttled + 8 || attempts == 3 {
            break (t.clone(), found, expected, throttled, max);
        }
        eprintln!("attempt {attempts}: {found} gaps for {expected} stalls, measuring again");
    };
    let t = &t;
    assert!(
        found <= expected + throttled + 8,
        "found {found} gaps >= 1.9 ms for {expected} stalls: far more than injected"
    );
    // At most 60 ms; where RT throttling is on, its window (50 ms here) plus the stall
    // that waited behind it plus the hypervisor's share may exceed that a little.
    let throttle_ns = match sched::rt_throttling() {
        Some((runtime, period)) if runtime >= 0 && runtime < period => {
            (period - runtime) as u64 * 1000
        }
        _ => 0,
    };
    let largest_allowed = 60_000_000u64.max(throttle_ns + STALL_NS + 13_000_000);
    assert!(
        (1_900_000..=largest_allowed).contains(&max),
        "largest gap {max} ns, allowed 1.9 ms to {largest_allowed} ns"
    );
    for key in [
        "noise_ns_total",
        "noise_percent",
        "gaps_per_second",
        "loop_cost_ns",
        "threshold_ns",
    ] {
        assert!(
            t["extra"].get(key).is_some(),
            "extra.{key} missing: {}",
            t["extra"]
        );
    }
    assert_eq!(t["extra"]["threshold_ns"], 1000);
    // 12 stalls of 2 ms in 3 s alone are 0.8 % of the time.
    assert!(t["extra"]["noise_percent"].as_f64().unwrap() >= 0.7);
}

#[test]
fn noise_rejects_a_bad_threshold() {
    let out = Command::cargo_bin("latscope")
        .unwrap()
        .args(["noise", "--threshold", "2s", "-D", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--threshold"), "{err}");
}
