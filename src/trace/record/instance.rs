//! latscope's own tracefs instance (`instances/latscope-PID`): clock, buffer size, CPUs and
//! events set for one run, removed again on Drop, on `finish`, by the emergency restorer
//! (second Ctrl-C) and, after a killed run, by `latscope restore`.

use crate::result::ProbeKind;
use crate::trace::record::tracefs::{TraceError, Tracefs};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Instances are named `latscope-PID`.
pub const INSTANCE_PREFIX: &str = "latscope-";

/// Every event the decoder and the analysis know ("system:name"): the recorder's default;
/// a probe's `--trace` records its subset (`probe_events`).
pub const DEFAULT_EVENTS: &[&str] = &[
    "timer:hrtimer_start",
    "timer:hrtimer_expire_entry",
    "timer:hrtimer_expire_exit",
    "timer:hrtimer_cancel",
    "sched:sched_waking",
    "sched:sched_wakeup",
    "sched:sched_switch",
    "irq:irq_handler_entry",
    "irq:irq_handler_exit",
    "irq:softirq_entry",
    "irq:softirq_exit",
    "irq:softirq_raise",
    "irq_vectors:local_timer_entry",
    "irq_vectors:local_timer_exit",
    "irq_vectors:reschedule_entry",
    "irq_vectors:reschedule_exit",
    "irq_vectors:call_function_entry",
    "irq_vectors:call_function_exit",
    "irq_vectors:call_function_single_entry",
    "irq_vectors:call_function_single_exit",
    "irq_vectors:irq_work_entry",
    "irq_vectors:irq_work_exit",
    "exceptions:page_fault_user",
    "exceptions:page_fault_kernel",
    "ipi:ipi_send_cpu",
    "ipi:ipi_send_cpumask",
    "rseq:rseq_update",
];

/// Attribution events that fire on every wake-up of a timer thread (the wake-up is a local
/// timer interrupt that wakes it): sched_wakeup names tasks and marks the measured one
/// runnable, local_timer_* time the timer interrupts.
const TIMER_WAKE_PATH_EVENTS: &[&str] = &[
    "sched:sched_wakeup",
    "irq_vectors:local_timer_entry",
    "irq_vectors:local_timer_exit",
];

/// What every probe's attribution reads besides (account.rs, timeline.rs): who ran
/// (sched_switch), IRQs, softirqs, the other vectors and IPIs received, page faults. These
/// fire on a wake-up only when something else happens there, when they are its cause.
const ATTRIBUTION_EVENTS: &[&str] = &[
    "sched:sched_switch",
    "irq:irq_handler_entry",
    "irq:irq_handler_exit",
    "irq:softirq_entry",
    "irq:softirq_exit",
    "irq_vectors:reschedule_entry",
    "irq_vectors:reschedule_exit",
    "irq_vectors:call_function_entry",
    "irq_vectors:call_function_exit",
    "irq_vectors:call_function_single_entry",
    "irq_vectors:call_function_single_exit",
    "irq_vectors:irq_work_entry",
    "irq_vectors:irq_work_exit",
    "exceptions:page_fault_user",
    "exceptions:page_fault_kernel",
];

/// The timer split's own: the hrtimer armed for the deadline (after the clock read, off the
/// wake path), its expiry or cancel. Not rseq_update: it fires on every return to user
/// space, on the wake path between the kernel's return and the clock read (+0.3 µs at the
/// p50 on the project's VM, bench/README.md); the clock read itself bounds the switch-in
/// instead, and `to_user` is reported as not measured (its time is in `remainder`).
const TIMER_SPLIT_EVENTS: &[&str] = &[
    "timer:hrtimer_start",
    "timer:hrtimer_expire_entry",
    "timer:hrtimer_cancel",
];

/// The wake split's own: the waker's try_to_wake_up, the wakee's return to user space.
const WAKE_SPLIT_EVENTS: &[&str] = &["sched:sched_waking", "rseq:rseq_update"];

/// The events a probe's `--trace` records: only what its split and attribution read, since
/// every event on the measured CPU's wake path costs time before the thread runs. Left out
/// of timer, wake and noise: hrtimer_expire_exit and softirq_raise (inside the very
/// interrupt that wakes the timer thread), ipi_send_* (read by no analysis), and for timer
/// and noise sched_waking (sched_wakeup says the same, one event later). The timer also
/// leaves out `TIMER_WAKE_PATH_EVENTS`: its wake-up is known from its hrtimer's expiry, and
/// a timer interrupt's time shows in irq_latency and wake_to_run (in a spike it is charged
/// to what it interrupted), and rseq_update (see `TIMER_SPLIT_EVENTS`). Other probes record
/// `DEFAULT_EVENTS`.
pub fn probe_events(kind: ProbeKind) -> Vec<&'static str> {
    let own: &[&str] = match kind {
        ProbeKind::Timer => TIMER_SPLIT_EVENTS,
        ProbeKind::Wake => WAKE_SPLIT_EVENTS,
        ProbeKind::Noise => &[],
        // The GPIO split (gpio_split.rs) reads the wake split's events and the IRQ's.
        ProbeKind::Gpio => WAKE_SPLIT_EVENTS,
        ProbeKind::Net | ProbeKind::Lava => return DEFAULT_EVENTS.to_vec(),
    };
    let wake_path: &[&str] = if kind == ProbeKind::Timer {
        &[]
    } else {
        TIMER_WAKE_PATH_EVENTS
    };
    ATTRIBUTION_EVENTS
        .iter()
        .chain(wake_path)
        .chain(own)
        .copied()
        .collect()
}

/// Events that stand in for a missing one on other kernel versions and architectures:
/// (wanted, stand-in). Kernels before 6.3 have `ipi:ipi_raise` instead of
/// `ipi_send_cpu`/`ipi_send_cpumask`. Arm has no irq_vectors (x86's): its IPIs are
/// ipi:ipi_entry/ipi_exit (the reason names which), its local timer is an ordinary IRQ
/// (irq:irq_handler_entry, name `arch_timer`).
const STAND_INS: &[(&str, &str)] = &[
    ("ipi:ipi_send_cpu", "ipi:ipi_raise"),
    ("ipi:ipi_send_cpumask", "ipi:ipi_raise"),
    ("irq_vectors:local_timer_entry", "irq:irq_handler_entry"),
    ("irq_vectors:local_timer_exit", "irq:irq_handler_exit"),
    ("irq_vectors:reschedule_entry", "ipi:ipi_entry"),
    ("irq_vectors:reschedule_exit", "ipi:ipi_exit"),
    ("irq_vectors:call_function_entry", "ipi:ipi_entry"),
    ("irq_vectors:call_function_exit", "ipi:ipi_exit"),
    ("irq_vectors:call_function_single_entry", "ipi:ipi_entry"),
    ("irq_vectors:call_function_single_exit", "ipi:ipi_exit"),
    ("irq_vectors:irq_work_entry", "ipi:ipi_entry"),
    ("irq_vectors:irq_work_exit", "ipi:ipi_exit"),
];

/// The events to enable for `events` on a kernel that has those `exists` says: each
/// wanted one, else its stand-in (once each), and the wanted ones with neither.
pub fn resolve_events(
    events: &[&str],
    exists: impl Fn(&str) -> bool,
) -> (Vec<String>, Vec<String>) {
    let (mut enabled, mut missing) = (Vec::new(), Vec::new());
    for &event in events {
        let chosen = std::iter::once(event)
            .chain(
                STAND_INS
                    .iter()
                    .filter(|(w, _)| *w == event)
                    .map(|(_, s)| *s),
            )
            .find(|e| exists(e));
        match chosen {
            Some(name) if !enabled.iter().any(|e| e == name) => enabled.push(name.to_string()),
            Some(_) => {}
            None => missing.push(event.to_string()),
        }
    }
    (enabled, missing)
}

/// What a `--trace` user learns of the events their kernel lacks, said once: on Arm
/// (ipi:ipi_entry stood in for x86's vectors) which parts they get, else the names.
pub fn missing_events_note(missing: &[String], enabled: &[String]) -> Option<String> {
    if missing.is_empty() {
        return None;
    }
    let arm = enabled.iter().any(|e| e == "ipi:ipi_entry");
    let only_faults = missing
        .iter()
        .all(|m| m.starts_with("exceptions:page_fault_"));
    Some(if arm && only_faults {
        "--trace on this Arm kernel: every part is split as on x86 (IPIs read from ipi:ipi_entry/ipi_exit, the arch timer's interrupt from irq:irq_handler_entry), but page faults are not told apart (exceptions:page_fault_* exist on x86 only): their time counts toward what they interrupted".to_string()
    } else {
        format!(
            "--trace: this kernel lacks {}; the parts that need them are not split",
            missing.join(", ")
        )
    })
}

/// Set while this process holds its instance (one per process: the name is the PID).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The instance name of a process.
pub fn instance_name(pid: u32) -> String {
    format!("{INSTANCE_PREFIX}{pid}")
}

/// `tracing_cpumask` text for a CPU list: 32-bit hex groups, most significant first.
pub fn cpumask_text(cpus: &[usize]) -> String {
    let groups = cpus.iter().max().map_or(1, |m| m / 32 + 1);
    let mut words = vec![0u32; groups];
    for &c in cpus {
        words[c / 32] |= 1 << (c % 32);
    }
    words
        .iter()
        .rev()
        .map(|w| format!("{w:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn write_file(path: &Path, value: &str) -> Result<(), TraceError> {
    std::fs::write(path, value)
        .map_err(|e| TraceError::io(format!("writing {value:?} to {}", path.display()), e))
}

/// An event directory for "system:name" (or "system:*" for the whole system).
fn event_dir(instance: &Path, event: &str) -> Option<PathBuf> {
    let (system, name) = event.split_once(':')?;
    let dir = instance.join("events").join(system);
    Some(if name == "*" { dir } else { dir.join(name) })
}

/// Turns tracing off and removes an instance directory. Retries briefly: the kernel
/// refuses (EBUSY) while a reader still holds one of its files, and answers ENODEV while
/// another thread's removal of it is under way. An error is only one when the
/// directory is still there: the message then sends the user to `latscope restore`.
fn remove_instance_dir(dir: &Path, wait_ms: u64) -> io::Result<()> {
    let _ = std::fs::write(dir.join("tracing_on"), "0");
    let mut waited = 0;
    loop {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(_) if !dir.exists() => return Ok(()),
            Err(_) if waited < wait_ms => {
                std::thread::sleep(std::time::Duration::from_millis(10));
                waited += 10;
            }
            Err(e) => return Err(e),
        }
    }
}

/// A configured instance; tracing stays off until `set_tracing(true)`. Removed on Drop.
#[derive(Debug)]
pub struct Instance {
    tracefs: Tracefs,
    name: String,
    dir: PathBuf,
    /// Events that exist and were enabled ("system:name").
    enabled: Vec<String>,
    /// Requested events this kernel lacks ("system:name").
    missing: Vec<String>,
    /// Set by the emergency restorer: readers must close their files at once.
    abort: Arc<AtomicBool>,
    restorer_key: Option<u64>,
    removed: bool,
}

impl Instance {
    /// Creates `instances/latscope-<our PID>` and configures it: tracing off, trace_clock
    /// `mono`, `buffer_kb_per_cpu` per CPU, recording only `cpus` (all when empty), the
    /// existing ones of `events` enabled.
    pub fn create(
        tracefs: Tracefs,
        buffer_kb_per_cpu: u64,
        cpus: &[usize],
        events: &[&str],
    ) -> Result<Instance, TraceError> {
        let name = instance_name(std::process::id());
        let dir = tracefs.root().join("instances").join(&name);
        if ACTIVE.swap(true, Ordering::SeqCst) {
            // A session of this very process holds it.
            return Err(TraceError::InstanceInUse {
                name,
                pid: std::process::id() as i32,
            });
        }
        if dir.exists() {
            // Left by a killed run whose PID we now carry.
            if let Err(e) = remove_instance_dir(&dir, 200) {
                ACTIVE.store(false, Ordering::SeqCst);
                return Err(TraceError::io(
                    format!("removing the stale {}", dir.display()),
                    e,
                ));
            }
        }
        if let Err(e) = std::fs::create_dir(&dir) {
            ACTIVE.store(false, Ordering::SeqCst);
            return Err(TraceError::io(format!("creating {}", dir.display()), e));
        }
        let abort = Arc::new(AtomicBool::new(false));
        let mut instance = Instance {
            tracefs,
            name,
            dir: dir.clone(),
            enabled: Vec::new(),
            missing: Vec::new(),
            abort: abort.clone(),
            restorer_key: None,
            removed: false,
        };
        let mounted = instance
            .tracefs
            .mounted_by_us()
            .then(|| instance.tracefs.root().to_path_buf());
        instance.restorer_key = Some(crate::interrupt::register_restorer(move || {
            abort.store(true, Ordering::SeqCst);
            if let Err(e) = remove_instance_dir(&dir, 500) {
                eprintln!(
                    "latscope: could not remove the trace instance {}: {e} (run `latscope restore`)",
                    dir.display()
                );
            }
            if let Some(root) = &mounted {
                let _ = crate::sys::mount::umount(root);
            }
        }));
        // On any error below, Drop removes the half-configured instance.
        instance.configure(buffer_kb_per_cpu, cpus, events)?;
        Ok(instance)
    }

    fn configure(
        &mut self,
        buffer_kb_per_cpu: u64,
        cpus: &[usize],
        events: &[&str],
    ) -> Result<(), TraceError> {
        write_file(&self.dir.join("tracing_on"), "0")?;
        write_file(&self.dir.join("trace_clock"), "mono")?;
        write_file(
            &self.dir.join("buffer_size_kb"),
            &buffer_kb_per_cpu.max(1).to_string(),
        )?;
        if !cpus.is_empty() {
            write_file(&self.dir.join("tracing_cpumask"), &cpumask_text(cpus))?;
        }
        let dir = self.dir.clone();
        let exists = |e: &str| event_dir(&dir, e).is_some_and(|d| d.join("enable").exists());
        let (enabled, missing) = resolve_events(events, exists);
        for name in enabled {
            if let Some(d) = event_dir(&self.dir, &name) {
                write_file(&d.join("enable"), "1")?;
                self.enabled.push(name);
            }
        }
        self.missing = missing;
        if self.enabled.is_empty() {
            return Err(TraceError::NoEvents(self.missing.join(", ")));
        }
        Ok(())
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The instance directory (…/instances/latscope-PID).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The tracefs root (events/header_page lives there).
    pub fn tracefs_root(&self) -> &Path {
        self.tracefs.root()
    }

    pub fn enabled_events(&self) -> &[String] {
        &self.enabled
    }

    /// Requested events this kernel does not have (for a warning naming them).
    pub fn missing_events(&self) -> &[String] {
        &self.missing
    }

    /// Set when the emergency restorer runs: readers close their files at once.
    pub fn abort_flag(&self) -> Arc<AtomicBool> {
        self.abort.clone()
    }

    /// Writes `tracing_on`.
    pub fn set_tracing(&self, on: bool) -> Result<(), TraceError> {
        write_file(&self.dir.join("tracing_on"), if on { "1" } else { "0" })
    }

    /// Stops tracing, removes the instance and unmounts tracefs if we mounted it.
    /// Idempotent; every reader of the instance's files must be closed before.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.removed {
            return Ok(());
        }
        self.removed = true;
        let result = remove_instance_dir(&self.dir, 1000);
        ACTIVE.store(false, Ordering::SeqCst);
        if let Some(key) = self.restorer_key.take() {
            crate::interrupt::unregister_restorer(key);
        }
        let unmounted = self.tracefs.release();
        result.and(unmounted)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            eprintln!(
                "latscope: warning: could not remove the trace instance {}: {e} (run `latscope restore`)",
                self.dir.display()
            );
        }
    }
}

/// `latscope restore`: removes `instances/latscope-PID` left by runs that are gone (killed).
/// Returns the removed names and the failures; never mounts tracefs (nothing to remove then).
pub fn remove_stale_instances() -> Vec<Result<String, String>> {
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") else {
        return Vec::new();
    };
    let Some(root) = crate::trace::record::tracefs::find_in_mounts(&mounts) else {
        return Vec::new();
    };
    remove_stale_instances_in(&root.join("instances"))
}

/// The work of `remove_stale_instances` on one `instances` directory.
pub fn remove_stale_instances_in(instances: &Path) -> Vec<Result<String, String>> {
    let Ok(entries) = std::fs::read_dir(instances) else {
        return Vec::new();
    };
    let mut names: Vec<(String, i32)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = name.strip_prefix(INSTANCE_PREFIX)?.parse::<i32>().ok()?;
            Some((name, pid))
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .filter(|(_, pid)| !crate::sys::mount::pid_alive(*pid))
        .map(|(name, _)| {
            remove_instance_dir(&instances.join(&name), 200)
                .map(|()| name.clone())
                .map_err(|e| format!("could not remove tracefs instance {name}: {e}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpumask_groups() {
        assert_eq!(cpumask_text(&[0, 1]), "00000003");
        assert_eq!(cpumask_text(&[1, 33]), "00000002,00000002");
        assert_eq!(cpumask_text(&[]), "00000000");
    }

    #[test]
    fn probe_events_are_known_and_leave_the_wake_path_extras_out() {
        for kind in [
            ProbeKind::Timer,
            ProbeKind::Wake,
            ProbeKind::Noise,
            ProbeKind::Gpio,
        ] {
            let events = probe_events(kind);
            assert!(events.iter().all(|e| DEFAULT_EVENTS.contains(e)), "{kind}");
            for extra in [
                "timer:hrtimer_expire_exit",
                "irq:softirq_raise",
                "ipi:ipi_send_cpu",
            ] {
                assert!(!events.contains(&extra), "{kind} records {extra}");
            }
        }
        let timer = probe_events(ProbeKind::Timer);
        assert!(timer.contains(&"timer:hrtimer_expire_entry"));
        assert!(timer.contains(&"sched:sched_switch"));
        for on_every_wakeup in [
            "sched:sched_waking",
            "sched:sched_wakeup",
            "irq_vectors:local_timer_entry",
            "rseq:rseq_update",
        ] {
            assert!(!timer.contains(&on_every_wakeup), "{on_every_wakeup}");
        }
        assert!(probe_events(ProbeKind::Noise).contains(&"irq_vectors:local_timer_entry"));
        assert!(probe_events(ProbeKind::Wake).contains(&"sched:sched_waking"));
        assert!(probe_events(ProbeKind::Wake).contains(&"rseq:rseq_update"));
        assert_eq!(probe_events(ProbeKind::Net), DEFAULT_EVENTS.to_vec());
    }

    #[test]
    fn default_events_are_system_colon_name() {
        for e in DEFAULT_EVENTS {
            let (s, n) = e.split_once(':').unwrap();
            assert!(!s.is_empty() && !n.is_empty());
        }
    }
}
