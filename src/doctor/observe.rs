//! The observation window: the noise probe spins on the measured CPU for a few seconds
//! (SCHED_FIFO when RT throttling is on, so its stops show), while /proc/interrupts is
//! read before and after: interrupts, local timer ticks and IPIs that reached the CPU.

use super::ab::AbSettings;
use super::finding::Measured;
use anyhow::Context;

/// Per-CPU counts of /proc/interrupts: (device IRQs, local timer, other) for `cpu`.
pub fn interrupt_counts(text: &str, cpu: usize) -> (u64, u64, u64) {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    let Some(column) = header.iter().position(|h| *h == format!("CPU{cpu}")) else {
        return (0, 0, 0);
    };
    let (mut device, mut local, mut other) = (0, 0, 0);
    for line in lines {
        let Some((name, rest)) = line.trim_start().split_once(':') else {
            continue;
        };
        let n: u64 = rest
            .split_whitespace()
            .nth(column)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if name == "LOC" {
            local += n;
        } else if name.chars().all(|c| c.is_ascii_digit()) {
            device += n;
        } else if name != "ERR" && name != "MIS" {
            other += n;
        }
    }
    (device, local, other)
}

/// Below this many local timer interrupts per second the tick is stopped (nohz_full
/// keeps a residual 1 Hz tick for the scheduler's statistics).
pub const TICK_STOPPED_PER_S: f64 = 5.0;

/// The isolation line from /proc/interrupts read before and after `secs` of a thread
/// spinning alone on `cpu`; `nohz_full`: the CPU is in nohz_full, so the tick must stop.
pub fn isolation_line(before: &str, after: &str, cpu: usize, secs: f64, nohz_full: bool) -> String {
    let (d0, l0, o0) = interrupt_counts(before, cpu);
    let (d1, l1, o1) = interrupt_counts(after, cpu);
    let ticks = l1.saturating_sub(l0);
    let rate = ticks as f64 / secs;
    let tick = match (rate < TICK_STOPPED_PER_S, nohz_full) {
        (true, true) => ": nohz_full stopped the tick",
        (true, false) => ": the tick is stopped",
        (false, true) => ": the tick runs although the CPU is nohz_full (another runnable task, a timer or RCU work keeps it)",
        (false, false) => ": the tick runs (not nohz_full)",
    };
    format!(
        "over {secs:.1} s of a thread spinning on CPU {cpu}: {} device IRQs, {ticks} local timer interrupts ({rate:.0}/s{tick}), {} other interrupts (IPIs, irq work)",
        d1.saturating_sub(d0),
        o1.saturating_sub(o0)
    )
}

/// What the window saw: the isolation line and the throttling line.
pub struct Observed {
    pub isolation: Measured,
    pub throttling: Option<Measured>,
}

/// Spins the noise probe on `s.cpu` for `seconds`, FIFO when `fifo` (RT throttling on:
/// its stops are measured), else SCHED_OTHER; `nohz_full`: the CPU is in nohz_full.
pub fn window(
    s: &AbSettings,
    seconds: u64,
    fifo: bool,
    nohz_full: bool,
) -> anyhow::Result<Observed> {
    let extra = ["--threshold".to_string(), "10us".to_string()];
    let (plan, argv) = super::ab::noise_plan(s, seconds, fifo, &extra)?;
    let before = std::fs::read_to_string("/proc/interrupts").context("reading /proc/interrupts")?;
    let outcome = crate::runner::execute(&plan, argv, s.stop.clone(), None)?;
    let after = std::fs::read_to_string("/proc/interrupts").context("reading /proc/interrupts")?;
    let thread = outcome
        .run
        .scenarios
        .first()
        .and_then(|sc| sc.threads.first())
        .context("the noise run returned no samples")?;
    let secs = seconds as f64 + 0.2;
    let isolation = Measured {
        summary: isolation_line(&before, &after, s.cpu, secs, nohz_full),
        pairs_ns: Vec::new(),
        restored: true,
    };
    let longest = thread.summary.max_ns;
    let throttling = fifo.then(|| Measured {
        summary: format!(
            "a FIFO thread spinning {secs:.1} s on CPU {}: longest stop {:.1} ms{}",
            s.cpu,
            longest as f64 / 1e6,
            if longest >= 10_000_000 {
                " (the throttle's stop)"
            } else {
                ""
            }
        ),
        pairs_ns: Vec::new(),
        restored: true,
    });
    Ok(Observed {
        isolation,
        throttling,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupt_rows_are_counted_per_cpu() {
        // The layout of this machine's /proc/interrupts (rows cut).
        let text = "           CPU0       CPU1       \n 26:          0          9  IO-APIC   4-edge      ttyS0\n 36:          0     488701 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\nNMI:          0          0   Non-maskable interrupts\nLOC:    4061855   23974443   Local timer interrupts\nRES:     223224     243497   Rescheduling interrupts\nERR:          0\n";
        assert_eq!(interrupt_counts(text, 1), (488710, 23974443, 243497));
        assert_eq!(interrupt_counts(text, 0), (0, 4061855, 223224));
        assert_eq!(interrupt_counts(text, 5), (0, 0, 0));
    }
}
