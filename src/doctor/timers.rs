//! The tick and the kernel's own timers on the measured CPUs: high-resolution timers in
//! effect, the tickless configuration (NO_HZ_FULL where CPUs are isolated; the tick's
//! rate), `skew_tick`, and the soft-lockup watchdog's timer and stopper thread.

use super::finding::{CheckId, Finding};
use super::kernel::KernelConfig;
use super::memory::numeric_knob;
use super::Inputs;
use crate::units::format_cpu_list;

/// Per CPU, whether /proc/timer_list says `.hres_active : 1` (root only).
fn hres_per_cpu(text: &str) -> Vec<(usize, bool)> {
    let mut out = Vec::new();
    let mut cpu = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("cpu: ") {
            cpu = n.trim().parse().ok();
        } else if let (Some(c), Some(v)) = (cpu, line.trim().strip_prefix(".hres_active")) {
            out.push((c, v.trim_start_matches([' ', ':']).trim() == "1"));
            cpu = None;
        }
    }
    out
}

pub fn hrtimers(inputs: &Inputs, config: Option<&KernelConfig>) -> Finding {
    let id = CheckId::KernelHrtimers;
    let late = "a timer then fires on the next tick: a 1 ms period wakes up to a tick late";
    if let Ok(text) = inputs.files.read("/proc/timer_list") {
        let per_cpu = hres_per_cpu(&text);
        let off: Vec<usize> = per_cpu
            .iter()
            .filter(|(c, on)| inputs.cpus.contains(c) && !on)
            .map(|(c, _)| *c)
            .collect();
        let line = format!(
            "/proc/timer_list .hres_active: {}",
            per_cpu
                .iter()
                .map(|(c, on)| format!("cpu{c} {}", u8::from(*on)))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if !per_cpu.is_empty() {
            return if off.is_empty() {
                Finding::pass(id, "high-resolution timers active on the measured CPUs").with(line)
            } else {
                Finding::fail(
                    id,
                    format!("high-resolution timers off on CPU {}: {late}", format_cpu_list(&off)),
                    "a kernel with CONFIG_HIGH_RES_TIMERS=y, without highres=off on the command line, and a clock event device that can do one-shot (see dmesg for 'Switched to high resolution mode')",
                )
                .with(line)
            };
        }
    }
    if inputs.cmdline_value("highres").as_deref() == Some("off") {
        return Finding::fail(
            id,
            format!("high-resolution timers turned off (highres=off): {late}"),
            "drop highres=off from the kernel command line",
        )
        .with("/proc/cmdline: highres=off");
    }
    match config {
        Some(c) if c.is_set("HIGH_RES_TIMERS") => Finding::pass(
            id,
            "high-resolution timers built in (CONFIG_HIGH_RES_TIMERS; /proc/timer_list, root only, would show them active)",
        )
        .with(format!("{}: CONFIG_HIGH_RES_TIMERS=y", c.source)),
        Some(c) => Finding::fail(
            id,
            format!("kernel built without high-resolution timers: {late}"),
            "a kernel with CONFIG_HIGH_RES_TIMERS=y",
        )
        .with(format!("{}: no CONFIG_HIGH_RES_TIMERS", c.source)),
        None => Finding::skip(id, "neither /proc/timer_list (root only) nor the kernel config could be read"),
    }
}

/// The tick's rate from the config (`CONFIG_HZ=250`).
fn hz(config: &KernelConfig) -> Option<u32> {
    config.value("HZ").and_then(|v| v.parse().ok())
}

pub fn nohz(inputs: &Inputs, config: Option<&KernelConfig>) -> Finding {
    let id = CheckId::KernelNohz;
    let Some(c) = config else {
        return Finding::skip(id, "no kernel config found: the tick's configuration is unknown (/proc/config.gz, /boot/config-RELEASE)");
    };
    let mode = [
        (
            "NO_HZ_FULL",
            "NO_HZ_FULL (a CPU running one task can stop its tick)",
        ),
        (
            "NO_HZ_IDLE",
            "NO_HZ_IDLE (the tick stops only on idle CPUs)",
        ),
        ("HZ_PERIODIC", "HZ_PERIODIC (the tick never stops)"),
    ]
    .into_iter()
    .find(|(name, _)| c.is_set(name))
    .map_or("unknown tick mode", |(_, text)| text);
    let rate = hz(c).map_or(String::new(), |hz| format!(", the tick at {hz} Hz"));
    let set: Vec<String> = ["NO_HZ_FULL", "NO_HZ_IDLE", "HZ_PERIODIC"]
        .into_iter()
        .filter(|n| c.is_set(n))
        .map(|n| format!("CONFIG_{n}=y"))
        .chain(c.value("HZ").map(|v| format!("CONFIG_HZ={v}")))
        .collect();
    let line = format!("{}: {}", c.source, set.join(", "));
    let mut isolated = inputs.cpu_list("/sys/devices/system/cpu/isolated");
    isolated.extend(super::cpus::isolated_partitions(inputs));
    let measured_isolated: Vec<usize> = inputs
        .cpus
        .iter()
        .copied()
        .filter(|cpu| isolated.contains(cpu))
        .collect();
    if !c.is_set("NO_HZ_FULL") && !measured_isolated.is_empty() {
        return Finding::warn(
            id,
            format!(
                "CPU {} isolated, but the kernel has no NO_HZ_FULL: the tick keeps interrupting them{rate}",
                format_cpu_list(&measured_isolated)
            ),
            "a kernel with CONFIG_NO_HZ_FULL=y, booted with nohz_full= on the isolated CPUs",
        )
        .with(line);
    }
    Finding::pass(id, format!("{mode}{rate}")).with(line)
}

pub fn skew_tick(inputs: &Inputs) -> Finding {
    let id = CheckId::KernelSkewTick;
    let value = inputs.cmdline_value("skew_tick");
    let line = format!(
        "/proc/cmdline skew_tick=: {}",
        value.as_deref().unwrap_or("absent")
    );
    if value.as_deref().is_some_and(|v| v != "0") {
        return Finding::pass(id, "skew_tick=1: the CPUs' ticks are staggered").with(line);
    }
    if inputs.online.len() < 2 {
        return Finding::pass(id, "one CPU online: no ticks to stagger").with(line);
    }
    Finding::warn(
        id,
        format!(
            "the ticks of all {} CPUs fire at the same moment and contend for the same locks (jiffies, timekeeping)",
            inputs.online.len()
        ),
        "skew_tick=1 on the kernel command line",
    )
    .with(line)
}

pub fn watchdog(inputs: &Inputs) -> Finding {
    let id = CheckId::KernelWatchdog;
    let on = |name: &str, absent: &str| {
        numeric_knob(inputs, id, &format!("/proc/sys/kernel/{name}"), absent)
    };
    let all = match on(
        "watchdog",
        "no lockup detector built in (/proc/sys/kernel/watchdog missing)",
    ) {
        Ok(v) => v,
        Err(f) => return f,
    };
    let soft = on("soft_watchdog", "").unwrap_or(all);
    let thresh = on("watchdog_thresh", "").unwrap_or(10);
    let mask = inputs.cpu_list("/proc/sys/kernel/watchdog_cpumask");
    let line = format!(
        "/proc/sys/kernel: watchdog {all}, soft_watchdog {soft}, watchdog_thresh {thresh}, watchdog_cpumask {}",
        if mask.is_empty() { "unreadable".into() } else { format_cpu_list(&mask) }
    );
    let covered: Vec<usize> = inputs
        .cpus
        .iter()
        .copied()
        .filter(|c| mask.is_empty() || mask.contains(c))
        .collect();
    if all == 0 || soft == 0 || covered.is_empty() {
        return Finding::pass(
            id,
            "the soft-lockup watchdog does not run on the measured CPUs",
        )
        .with(line);
    }
    let others: Vec<usize> = inputs
        .online
        .iter()
        .copied()
        .filter(|c| !inputs.cpus.contains(c))
        .collect();
    let keep = if others.is_empty() {
        "sysctl kernel.soft_watchdog=0".to_string()
    } else {
        format!(
            "sysctl kernel.watchdog_cpumask={}",
            format_cpu_list(&others)
        )
    };
    Finding::warn(
        id,
        format!(
            "the soft-lockup watchdog runs on CPU {}: its timer fires every {:.0} s there and wakes the CPU's stopper thread, which preempts any RT task",
            format_cpu_list(&covered),
            thresh as f64 * 2.0 / 5.0
        ),
        format!("{keep} (or nowatchdog / nosoftlockup at boot; the lockup detector is then gone for them)"),
    )
    .with(line)
}

#[cfg(test)]
mod tests {
    #[test]
    fn timer_list_per_cpu() {
        // The layout of this VM's /proc/timer_list (clock bases cut).
        let text = "Timer List Version: v0.10\ncpu: 0\n clock 0:\n  .resolution: 1 nsecs\n  .expires_next   : 1 nsecs\n  .hres_active    : 1\ncpu: 1\n clock 0:\n  .hres_active    : 0\n";
        assert_eq!(super::hres_per_cpu(text), [(0, true), (1, false)]);
    }
}
