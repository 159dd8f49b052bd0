//! Runs loads: worker threads pinned to their CPUs at SCHED_OTHER, the 10 ms duty
//! cycle, stopping (on request, on Ctrl-C, on a worker's error, on Drop), and what
//! each load achieved: throughput and the CPU share measured from /proc.

use super::active::{summarize, ActiveLoad};
use super::{exec::ExecLoad, Load, LoadKind, LoadSpec, Step, Worker, DUTY_SLICE_NS};
use crate::error::UserError;
use crate::result::LoadResult;
use crate::sys::{affinity, clock, process, sched};
use crate::warning::{Warning, WarningCode};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

/// Stack of a load thread: small, like every helper thread's.
const LOAD_STACK_BYTES: usize = crate::sys::memlock::HELPER_STACK_BYTES;
/// A work phase never runs longer than this in wall time, even when the CPU is
/// contended, so the thread keeps sleeping now and then.
const MAX_WORK_WALL_NS: u64 = 10 * DUTY_SLICE_NS;

/// Every load of a scenario, running. Stop with `stop()`; dropping stops too.
pub struct RunningLoads {
    loads: Vec<Box<dyn ActiveLoad>>,
    /// Warnings found while starting (e.g. loads sharing the measured CPUs).
    pub warnings: Vec<Warning>,
}

impl RunningLoads {
    /// Stops every load and returns what each achieved, in spec order.
    pub fn stop(mut self) -> Vec<LoadResult> {
        self.stop_all()
    }

    fn stop_all(&mut self) -> Vec<LoadResult> {
        for l in &self.loads {
            l.halt();
        }
        self.loads.drain(..).map(|l| l.finish()).collect()
    }

    pub fn len(&self) -> usize {
        self.loads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.loads.is_empty()
    }
}

impl Drop for RunningLoads {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// The CPUs loads run on when their spec names none: the online CPUs not measured, or
/// all online CPUs (with a warning) when every CPU is measured.
pub fn default_cpus(measured: &[usize], online: &[usize]) -> (Vec<usize>, Option<Warning>) {
    let free: Vec<usize> = online
        .iter()
        .copied()
        .filter(|c| !measured.contains(c))
        .collect();
    if !free.is_empty() {
        return (free, None);
    }
    (
        online.to_vec(),
        Some(Warning::new(WarningCode::LoadOnMeasuredCpus, format!(
                "every online CPU ({}) is measured, so the loads share the measured CPUs; measure fewer CPUs (--cpus) or give the load cpus=",
                crate::units::format_cpu_list(online)
            ))),
    )
}

/// Checks that every CPU a spec names is online.
pub fn check_cpus(specs: &[LoadSpec], online: &[usize]) -> Result<(), UserError> {
    for spec in specs {
        for &cpu in spec.cpus.iter().flatten() {
            if !online.contains(&cpu) {
                return Err(UserError::CpuNotOnline {
                    cpu,
                    online: crate::units::format_cpu_list(online),
                });
            }
        }
    }
    Ok(())
}

/// Starts every load on its CPUs (default: the CPUs not in `measured_cpus`, and while
/// an isolation is active only the CPUs left to the system). Loads stop
/// when `stop` is set (Ctrl-C), on `RunningLoads::stop`, or when dropped. Returns once
/// every worker is set up and running; a setup failure stops the others and is
/// returned. Call from a long-lived thread: exec children die with it.
pub fn start(
    specs: &[LoadSpec],
    measured_cpus: &[usize],
    stop: Arc<AtomicBool>,
) -> anyhow::Result<RunningLoads> {
    let online = affinity::online_cpus();
    check_cpus(specs, &online)?;
    // While CPUs are shielded (--isolate), loads belong to the CPUs left to the system.
    let usable = crate::isolate::current_system_cpus().unwrap_or_else(|| online.clone());
    if let Some(isolated) = crate::isolate::current_isolated_cpus() {
        for spec in specs {
            if let Some(&cpu) = spec.cpus.iter().flatten().find(|c| isolated.contains(c)) {
                return Err(UserError::InvalidValue {
                    option: "--load".into(),
                    value: spec.text.clone(),
                    reason: format!(
                        "CPU {cpu} is isolated for this run; loads run on the other CPUs ({})",
                        crate::units::format_cpu_list(&usable)
                    ),
                }
                .into());
            }
        }
    }
    let mut running = RunningLoads {
        loads: Vec::new(),
        warnings: Vec::new(),
    };
    let (defaults, warning) = default_cpus(measured_cpus, &usable);
    if specs.iter().any(|s| s.cpus.is_none()) {
        running.warnings.extend(warning);
    }
    for spec in specs {
        let cpus = spec.cpus.clone().unwrap_or_else(|| defaults.clone());
        let active: Box<dyn ActiveLoad> = if spec.kind == LoadKind::Exec {
            Box::new(ExecLoad::start(spec, &cpus)?)
        } else {
            let load = super::build(spec, &cpus)?;
            Box::new(ThreadedLoad::start(spec, cpus, load.into(), stop.clone())?)
        };
        running.loads.push(active);
    }
    Ok(running)
}

/// What one worker thread did.
#[derive(Default)]
struct WorkerReport {
    units: u64,
    start_ns: u64,
    cpu_ns: u64,
    end_ns: u64,
    counters: super::Counters,
    error: Option<String>,
}

/// A thread-based load: its workers and the flags that stop them.
struct ThreadedLoad {
    spec: LoadSpec,
    cpus: Vec<usize>,
    load: Arc<dyn Load>,
    halt: Arc<AtomicBool>,
    handles: Vec<JoinHandle<WorkerReport>>,
    started_ns: u64,
}

impl ThreadedLoad {
    fn start(
        spec: &LoadSpec,
        cpus: Vec<usize>,
        load: Arc<dyn Load>,
        stop: Arc<AtomicBool>,
    ) -> anyhow::Result<Self> {
        let workers = load.workers();
        let halt = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let mut this = Self {
            spec: spec.clone(),
            cpus,
            load: load.clone(),
            halt: halt.clone(),
            handles: Vec::with_capacity(workers),
            started_ns: clock::monotonic_ns(),
        };
        for index in 0..workers {
            let (load, halt, stop, ready) =
                (load.clone(), halt.clone(), stop.clone(), ready_tx.clone());
            let duty = spec.duty_percent;
            let name: String = format!("ld-{}-{index}", spec.kind.name())
                .chars()
                .take(15)
                .collect();
            let spawned = std::thread::Builder::new()
                .name(name)
                .stack_size(LOAD_STACK_BYTES)
                .spawn(move || worker_main(&*load, index, duty, &halt, &stop, ready));
            match spawned {
                Ok(h) => this.handles.push(h),
                Err(e) => {
                    let _ = Box::new(this).finish();
                    return Err(anyhow::anyhow!(
                        "starting load '{}': cannot create a thread: {e}",
                        spec.text
                    ));
                }
            }
        }
        drop(ready_tx);
        // Every worker reports once, after its setup; a thread that died early closes
        // its sender, which ends the loop.
        let mut first_error = None;
        for _ in 0..workers {
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                Err(_) => {
                    first_error.get_or_insert("a load thread ended during setup".into());
                    break;
                }
            }
        }
        if let Some(e) = first_error {
            let _ = Box::new(this).finish();
            return Err(anyhow::anyhow!("starting load '{}': {e}", spec.text));
        }
        Ok(this)
    }
}

impl ActiveLoad for ThreadedLoad {
    fn halt(&self) {
        self.halt.store(true, Ordering::SeqCst);
        self.load.shutdown();
    }

    fn finish(self: Box<Self>) -> LoadResult {
        self.halt();
        let mut units = 0u64;
        let mut cpu_ns = 0u64;
        let mut end_ns = self.started_ns;
        let mut start_ns = u64::MAX;
        let mut counters: BTreeMap<String, u64> = BTreeMap::new();
        let mut errors = Vec::new();
        for h in self.handles {
            match h.join() {
                Ok(r) => {
                    units += r.units;
                    cpu_ns += r.cpu_ns;
                    end_ns = end_ns.max(r.end_ns);
                    if r.start_ns > 0 {
                        start_ns = start_ns.min(r.start_ns);
                    }
                    for (k, v) in r.counters {
                        *counters.entry(k.to_string()).or_default() += v;
                    }
                    errors.extend(r.error);
                }
                Err(_) => errors.push("a load thread panicked".into()),
            }
        }
        for (k, v) in self.load.counters_after() {
            *counters.entry(k.to_string()).or_default() += v;
        }
        if start_ns == u64::MAX {
            start_ns = self.started_ns;
        }
        let elapsed_ns = end_ns.saturating_sub(start_ns);
        let mut result = summarize(
            &self.spec,
            &self.cpus,
            units as f64 / self.load.units_per_reported(),
            cpu_ns,
            elapsed_ns,
        );
        result
            .extra
            .insert("workers".into(), self.load.workers().into());
        result
            .extra
            .insert("duty_percent".into(), self.spec.duty_percent.into());
        for (k, v) in counters {
            result.extra.insert(k, v.into());
        }
        if let Some(e) = errors.first() {
            result.extra.insert("error".into(), e.clone().into());
        }
        result
    }
}

/// This thread pinned to its worker's CPU at SCHED_OTHER, then the worker's state built
/// there (so its memory is that CPU's).
fn placed_worker(load: &dyn Load, index: usize) -> anyhow::Result<Box<dyn Worker>> {
    let cpu = load.cpu_of(index);
    affinity::pin_current_thread(cpu)
        .map_err(|e| anyhow::anyhow!("pinning a load thread to CPU {cpu}: {e}"))
        .and_then(|()| {
            sched::set_current_thread(sched::Policy::Other, 0)
                .map_err(|e| anyhow::anyhow!("setting SCHED_OTHER: {e}"))
        })
        .and_then(|()| load.worker(index))
}

/// The body of one worker thread: place it, build its state, wait for the others,
/// then step with the duty cycle until told to stop.
/// A stop request (Ctrl-C) ends every worker by itself: a pair's partner may be blocked
/// writing into a full socket whose reader has just left, which the reader's own shutdown
/// does not wake (TCP keeps the window closed); shut every pair down, as `halt` does.
fn wake_partners_if_stopped(load: &dyn Load, stop: &AtomicBool) {
    if stop.load(Ordering::Relaxed) {
        load.shutdown();
    }
}

fn worker_main(
    load: &dyn Load,
    index: usize,
    duty_percent: u32,
    halt: &AtomicBool,
    stop: &AtomicBool,
    ready: mpsc::Sender<Result<(), String>>,
) -> WorkerReport {
    let mut worker = match placed_worker(load, index) {
        Ok(w) => w,
        Err(e) => {
            let _ = ready.send(Err(format!("{e:#}")));
            return WorkerReport::default();
        }
    };
    let _ = ready.send(Ok(()));
    drop(ready);
    let cpu_start = super::proc_stat::current_thread_cpu_ns();
    let mut report = WorkerReport {
        start_ns: clock::monotonic_ns(),
        ..WorkerReport::default()
    };
    let running = || !halt.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed);
    let duty = if load.follows_duty(index) {
        duty_percent
    } else {
        100
    };
    let work_ns = DUTY_SLICE_NS * duty as u64 / 100;
    let mut slice_start = clock::monotonic_ns();
    'run: while running() {
        let work_start_cpu = if duty < 100 {
            process::thread_cpu_time_ns()
        } else {
            0
        };
        loop {
            match worker.step() {
                Ok(Step::Did(n)) => report.units += n,
                Ok(Step::Finished) => break 'run,
                // Stopping shuts pairs' sockets down under them: not an error.
                Err(_) if !running() => break 'run,
                Err(e) => {
                    report.error = Some(format!("{e:#}"));
                    // Stop the whole load: a pair's partner must not wait forever.
                    halt.store(true, Ordering::SeqCst);
                    load.shutdown();
                    break 'run;
                }
            }
            if duty == 100 {
                continue 'run;
            }
            if process::thread_cpu_time_ns().saturating_sub(work_start_cpu) >= work_ns
                || clock::monotonic_ns().saturating_sub(slice_start) >= MAX_WORK_WALL_NS
                || !running()
            {
                break;
            }
        }
        let slice_end = slice_start + DUTY_SLICE_NS;
        let now = clock::monotonic_ns();
        if now < slice_end {
            clock::sleep_until_ns(slice_end);
            slice_start = slice_end;
        } else {
            slice_start = now;
        }
    }
    wake_partners_if_stopped(load, stop);
    report.end_ns = clock::monotonic_ns();
    report.cpu_ns = super::proc_stat::current_thread_cpu_ns().saturating_sub(cpu_start);
    report.counters = worker.counters();
    drop(worker);
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_cpus_leave_the_measured_ones() {
        assert_eq!(default_cpus(&[1], &[0, 1]), (vec![0], None));
        let (cpus, warning) = default_cpus(&[0, 1], &[0, 1]);
        assert_eq!(cpus, vec![0, 1]);
        assert!(warning.unwrap().message.contains("share the measured CPUs"));
    }
}
