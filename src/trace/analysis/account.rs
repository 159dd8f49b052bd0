//! Exclusive time on one CPU over an interval, from its events: which task, IRQ handler,
//! softirq, vector or NMI held it, and where nothing was traced at all. Nested contexts are
//! charged only their own time, so the causes never sum to more than the interval.

use serde::{Deserialize, Serialize};

use crate::trace::analysis::timeline::{policy_of, softirq_name, Policy, Timeline};
use crate::trace::event::{Event, EventKind};
use crate::units::human_ns;

/// What a stretch of CPU time was spent on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    /// Another task ran (at a priority that may run before the measuring thread).
    Task,
    /// A lower-priority task was switched in while the RT measuring thread was runnable:
    /// the signature of RT throttling (sched_rt_runtime_us), best effort.
    RtThrottling,
    /// A lower-priority task that was already running went on running after the RT
    /// measuring thread was woken: it was in kernel code that does not preempt (a kernel
    /// with `preempt=none` or `voluntary` switches only at resched points; on any kernel a
    /// preempt- or irq-disabled section).
    NotPreempted,
    /// A device IRQ handler (irq:irq_handler_entry/exit).
    Irq,
    /// A softirq (irq:softirq_entry/exit), named by vector.
    Softirq,
    /// The local timer interrupt and other non-IPI x86 vectors (irq_vectors:*).
    Vector,
    /// An inter-processor interrupt received (reschedule, call_function, irq_work vectors).
    Ipi,
    /// A non-maskable interrupt (nmi:nmi_handler `delta_ns`).
    Nmi,
    /// Page faults taken (exceptions:page_fault_*): a count; their time is inside the
    /// faulting task's, as the kernel traces no fault exit.
    PageFault,
    /// No event at all for longer than the bound where one was due: the CPU was not running
    /// the guest (the hypervisor stopped it) or was in SMM.
    Hypervisor,
    /// The CPU idled (e.g. leaving an idle state before the timer interrupt).
    Idle,
    /// Events were lost there: nothing can be said.
    Lost,
}

/// One thing that held the CPU, with its total time and how often it did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cause {
    pub kind: CauseKind,
    /// Task comm, IRQ action name, softirq vector name, vector name, or the kind's label.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Policy>,
    /// rt_priority for RT tasks, nice for others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq: Option<i32>,
    /// x86 vector number, or the softirq vector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<i32>,
    pub duration_ns: u64,
    /// Runs, entries, faults or silent stretches.
    pub count: u64,
}

/// What stops a CPU without the guest seeing it: on x86 a hypervisor or System Management
/// Mode (SMIs); on Arm and others a hypervisor or the firmware (EL3 calls, SDEI), never SMM.
/// A macro, so that the label below is built from it at compile time.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
macro_rules! cpu_stopper {
    () => {
        "hypervisor/SMI"
    };
}
#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
macro_rules! cpu_stopper {
    () => {
        "hypervisor/firmware"
    };
}
pub const CPU_STOPPER: &str = cpu_stopper!();

/// The label "no guest activity" silences are given.
pub const HYPERVISOR_LABEL: &str = concat!("no guest activity: ", cpu_stopper!());

impl Cause {
    fn new(kind: CauseKind, name: impl Into<String>) -> Self {
        Cause {
            kind,
            name: name.into(),
            pid: None,
            policy: None,
            priority: None,
            irq: None,
            vector: None,
            duration_ns: 0,
            count: 0,
        }
    }

    fn task(kind: CauseKind, comm: &str, pid: i32, prio: Option<i32>) -> Self {
        let mut c = Cause::new(kind, comm);
        c.pid = Some(pid);
        if let Some(prio) = prio {
            let (policy, priority) = policy_of(prio);
            c.policy = Some(policy);
            c.priority = Some(priority);
        }
        c
    }

    fn same(&self, other: &Cause) -> bool {
        self.kind == other.kind
            && self.name == other.name
            && self.pid == other.pid
            && self.irq == other.irq
            && self.vector == other.vector
    }

    /// A short label: `stall-inj/4242 FIFO/RR 99`, `irq 36 virtio1`, `softirq TIMER`.
    pub fn label(&self) -> String {
        let policy = || match (self.policy, self.priority) {
            (Some(Policy::Rt), Some(p)) => format!(" FIFO/RR {p}"),
            (Some(Policy::Other), Some(n)) => format!(" OTHER nice {n}"),
            (Some(Policy::Deadline), _) => " DEADLINE".to_string(),
            _ => String::new(),
        };
        match self.kind {
            CauseKind::Task => format!("{}/{}{}", self.name, self.pid.unwrap_or(0), policy()),
            CauseKind::RtThrottling => format!(
                "rt throttling: {}/{}{}",
                self.name,
                self.pid.unwrap_or(0),
                policy()
            ),
            CauseKind::NotPreempted => format!(
                "not preempted after the wake-up: {}/{}{}",
                self.name,
                self.pid.unwrap_or(0),
                policy()
            ),
            CauseKind::Irq => format!("irq {} {}", self.irq.unwrap_or(-1), self.name),
            CauseKind::Softirq => format!("softirq {}", self.name),
            CauseKind::Vector | CauseKind::Ipi => match self.vector {
                Some(v) => format!("{} (vector {v})", self.name),
                // Arm's IPIs: `call_function IPI`.
                None if self.kind == CauseKind::Ipi => format!("{} IPI", self.name),
                None => self.name.clone(),
            },
            CauseKind::PageFault => self.name.clone(),
            CauseKind::Nmi | CauseKind::Hypervisor | CauseKind::Idle | CauseKind::Lost => {
                self.name.clone()
            }
        }
    }

    /// `stall-inj/4242 FIFO/RR 99 ran 2.98 ms`, `irq 36 virtio1 12.00 µs`, `3 page faults`.
    pub fn render(&self) -> String {
        let times = if self.count > 1 {
            format!(" ×{}", self.count)
        } else {
            String::new()
        };
        match self.kind {
            CauseKind::Task | CauseKind::RtThrottling | CauseKind::NotPreempted => {
                format!("{} ran {}", self.label(), human_ns(self.duration_ns))
            }
            CauseKind::PageFault => format!("{} {}", self.count, self.name),
            _ => format!("{} {}{times}", self.label(), human_ns(self.duration_ns)),
        }
    }
}

/// Bounds for calling a stretch without events "silent".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SilenceBounds {
    /// While a task or handler runs, the tick fires every 1/HZ: a stretch without any event
    /// longer than this (default 1/HZ + 25 % at HZ=250) means the CPU was stopped.
    pub running_ns: u64,
    /// While the CPU should be reacting (a timer due, the measuring thread's own time, idle
    /// after a deadline), a stretch without events longer than this is the host's.
    pub waiting_ns: u64,
}

impl Default for SilenceBounds {
    fn default() -> Self {
        SilenceBounds::for_tick(4_000_000)
    }
}

impl SilenceBounds {
    /// Bounds for a tick of `tick_ns` (1e9 / CONFIG_HZ).
    pub fn for_tick(tick_ns: u64) -> Self {
        SilenceBounds {
            running_ns: tick_ns + tick_ns / 4,
            waiting_ns: 100_000,
        }
    }
}

/// What [`account`] found over one interval.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accounting {
    /// Largest first (page faults, which carry no time, last).
    pub causes: Vec<Cause>,
    /// Time no context could be named for (before the first event of the trace, or the
    /// measuring thread's own untraced kernel entry/exit).
    pub unexplained_ns: u64,
    /// Events inside the interval.
    pub events: usize,
    /// The interval overlaps a span with lost events.
    pub lost_events: bool,
}

impl Accounting {
    /// The cause with the most time, if any.
    pub fn dominant(&self) -> Option<&Cause> {
        self.causes
            .iter()
            .filter(|c| c.duration_ns > 0)
            .max_by_key(|c| c.duration_ns)
    }

    /// Sum of all causes' time.
    pub fn explained_ns(&self) -> u64 {
        self.causes.iter().map(|c| c.duration_ns).sum()
    }
}

#[derive(Debug, Clone)]
enum Frame {
    Irq { irq: i32, name: String },
    Softirq { vec: u32 },
    Vector { name: String, vector: i32 },
}

struct Replay<'t, 'a> {
    tl: &'t Timeline<'a>,
    cpu: u32,
    me: i32,
    me_prio: Option<i32>,
    bounds: SilenceBounds,
    from: u64,
    to: u64,
    current: Option<i32>,
    task_fresh: bool,
    stack: Vec<(Frame, bool)>,
    me_runnable: bool,
    /// The task running now was switched in while the measuring thread was runnable (the
    /// scheduler chose it), rather than having been running when the thread woke.
    picked_over_me: bool,
    out: Accounting,
}

/// The cause an interrupt frame on the CPU stands for: the IRQ, the softirq, or the
/// vector (IPIs told apart by their names).
fn frame_cause(frame: Frame) -> Cause {
    match frame {
        Frame::Irq { irq, name } => {
            let mut c = Cause::new(CauseKind::Irq, name);
            c.irq = Some(irq);
            c
        }
        Frame::Softirq { vec } => {
            let mut c = Cause::new(CauseKind::Softirq, softirq_name(vec));
            c.vector = Some(vec as i32);
            c
        }
        Frame::Vector { name, vector } => {
            // Arm's ipi:ipi_entry are all IPIs, whatever their reason.
            let ipi = vector == crate::trace::event::ARM_IPI
                || matches!(
                    name.as_str(),
                    "reschedule" | "call_function" | "call_function_single" | "irq_work"
                );
            let kind = if ipi {
                CauseKind::Ipi
            } else {
                CauseKind::Vector
            };
            let mut c = Cause::new(kind, name);
            // An Arm IPI has no vector number (ARM_IPI stands in for none).
            c.vector = (vector != crate::trace::event::ARM_IPI).then_some(vector);
            c
        }
    }
}

impl Replay<'_, '_> {
    /// Charges the time from `seg_start` to event `e`: first the idle before an unrecorded
    /// switch out of idle, then an NMI's own duration (`nmi_delta`) apart from the rest.
    fn charge_up_to(&mut self, e: &Event, mut seg_start: u64) {
        if let Some(t) = self.tl.switched_in_before(e).filter(|&t| t >= seg_start) {
            // An unrecorded switch out of idle: idle until t, the task from there.
            self.charge(seg_start, t);
            self.switch_in_unrecorded(e.pid);
            seg_start = t;
        }
        if let Some(delta) = nmi_delta(e) {
            let seg_from = seg_start.max(self.from);
            let nmi = delta.min(e.ts_ns.min(self.to).saturating_sub(seg_from));
            if nmi > 0 {
                self.add(Cause::new(CauseKind::Nmi, "nmi"), nmi, 1);
            }
            self.charge(seg_start, e.ts_ns - nmi);
        } else {
            self.charge(seg_start, e.ts_ns);
        }
    }

    fn add(&mut self, cause: Cause, ns: u64, runs: u64) {
        if let Some(c) = self.out.causes.iter_mut().find(|c| c.same(&cause)) {
            c.duration_ns += ns;
            c.count += runs;
        } else {
            let mut cause = cause;
            cause.duration_ns = ns;
            cause.count = runs;
            self.out.causes.push(cause);
        }
    }

    fn task_cause(&self, kind: CauseKind, pid: i32) -> Cause {
        let task = self.tl.task(pid);
        let comm = task.map(|t| t.comm.as_str()).unwrap_or("?");
        Cause::task(kind, comm, pid, task.map(|t| t.prio))
    }

    /// Charges `[a, b]` (clipped to the interval) to the context now on the CPU. Whether
    /// the stretch was silent is judged on its whole length, also outside the interval.
    fn charge(&mut self, a: u64, b: u64) {
        let silent = b.saturating_sub(a);
        let (a, b) = (a.max(self.from), b.min(self.to));
        if b <= a {
            return;
        }
        let d = b - a;
        if self.tl.lost_in(self.cpu, a, b) {
            self.out.lost_events = true;
            self.add(Cause::new(CauseKind::Lost, "lost events"), d, 1);
            return;
        }
        if let Some((frame, fresh)) = self.stack.last_mut() {
            let runs = u64::from(std::mem::replace(fresh, false));
            let frame = frame.clone();
            if silent > self.bounds.running_ns {
                self.add(Cause::new(CauseKind::Hypervisor, HYPERVISOR_LABEL), d, 1);
                return;
            }
            self.add(frame_cause(frame), d, runs);
            return;
        }
        let runs = u64::from(std::mem::replace(&mut self.task_fresh, false));
        match self.current {
            None => self.out.unexplained_ns += d,
            Some(0) => {
                if d > self.bounds.waiting_ns {
                    self.add(Cause::new(CauseKind::Hypervisor, HYPERVISOR_LABEL), d, 1);
                } else {
                    self.add(Cause::new(CauseKind::Idle, "idle"), d, runs);
                }
            }
            Some(pid) if pid == self.me => {
                if d > self.bounds.waiting_ns {
                    self.add(Cause::new(CauseKind::Hypervisor, HYPERVISOR_LABEL), d, 1);
                } else {
                    self.out.unexplained_ns += d;
                }
            }
            Some(pid) => {
                if silent > self.bounds.running_ns {
                    self.add(Cause::new(CauseKind::Hypervisor, HYPERVISOR_LABEL), d, 1);
                    return;
                }
                let prio = self.tl.task(pid).map(|t| t.prio);
                let throttled = match (self.me_prio, prio) {
                    (Some(me), Some(p)) => self.me_runnable && me < 100 && p > me,
                    _ => false,
                };
                let kind = match (throttled, self.picked_over_me) {
                    (true, true) => CauseKind::RtThrottling,
                    (true, false) => CauseKind::NotPreempted,
                    (false, _) => CauseKind::Task,
                };
                let cause = self.task_cause(kind, pid);
                self.add(cause, d, runs);
            }
        }
    }

    fn apply(&mut self, e: &Event) {
        if e.ts_ns >= self.from && e.ts_ns <= self.to {
            self.out.events += 1;
        }
        if !matches!(e.kind, EventKind::SchedSwitch { .. }) && self.current != Some(e.pid) {
            self.current = Some(e.pid);
            self.task_fresh = true;
        }
        match &e.kind {
            EventKind::SchedSwitch {
                prev,
                prev_state,
                next,
            } => {
                self.stack.clear();
                if prev.pid == self.me {
                    self.me_runnable = prev_state & 0xff == 0;
                }
                if next.pid == self.me {
                    self.me_runnable = false;
                }
                self.picked_over_me = self.me_runnable;
                self.current = Some(next.pid);
                self.task_fresh = true;
            }
            EventKind::SchedWaking { task, .. } | EventKind::SchedWakeup { task, .. }
                if task.pid == self.me =>
            {
                self.me_runnable = true;
            }
            EventKind::IrqHandlerEntry { irq, name } => self.stack.push((
                Frame::Irq {
                    irq: *irq,
                    name: name.clone(),
                },
                true,
            )),
            EventKind::IrqHandlerExit { irq, .. } => {
                self.pop(|f| matches!(f, Frame::Irq { irq: i, .. } if i == irq))
            }
            EventKind::SoftirqEntry { vec } => {
                self.stack.push((Frame::Softirq { vec: *vec }, true))
            }
            EventKind::SoftirqExit { vec } => {
                self.pop(|f| matches!(f, Frame::Softirq { vec: v } if v == vec))
            }
            EventKind::VectorEntry { name, vector } => self.stack.push((
                Frame::Vector {
                    name: name.clone(),
                    vector: *vector,
                },
                true,
            )),
            EventKind::VectorExit { name, .. } => {
                self.pop(|f| matches!(f, Frame::Vector { name: n, .. } if n == name))
            }
            EventKind::PageFault { user, .. } if e.ts_ns >= self.from && e.ts_ns <= self.to => {
                let name = if *user {
                    "page faults (user)"
                } else {
                    "page faults (kernel)"
                };
                self.add(Cause::new(CauseKind::PageFault, name), 0, 1);
            }
            _ => {}
        }
    }

    /// The CPU left idle for `pid` without a recorded sched_switch.
    fn switch_in_unrecorded(&mut self, pid: i32) {
        self.stack.clear();
        if pid == self.me {
            self.me_runnable = false;
        }
        self.picked_over_me = self.me_runnable;
        self.current = Some(pid);
        self.task_fresh = true;
    }

    fn pop(&mut self, is_it: impl Fn(&Frame) -> bool) {
        if let Some(at) = self.stack.iter().rposition(|(f, _)| is_it(f)) {
            self.stack.truncate(at);
        }
    }
}

/// The NMI duration an `nmi:nmi_handler` event reports, if `e` is one.
fn nmi_delta(e: &Event) -> Option<u64> {
    match &e.kind {
        EventKind::Other {
            system,
            name,
            fields,
        } if system == "nmi" && name == "nmi_handler" => fields
            .iter()
            .find(|(k, _)| k == "delta_ns")
            .and_then(|(_, v)| v.parse().ok()),
        _ => None,
    }
}

/// How far back the replay looks for a sched_switch to start from a known state.
const LOOKBACK_EVENTS: usize = 4096;

/// Splits `[from_ns, to_ns]` on `cpu` into what held it. `me` is the measuring thread: its
/// own time is not a cause, and lower-priority tasks running while it is runnable (and RT)
/// are charged as RT throttling.
pub fn account(
    tl: &Timeline,
    cpu: u32,
    from_ns: u64,
    to_ns: u64,
    me: i32,
    bounds: SilenceBounds,
) -> Accounting {
    account_woken(tl, cpu, (from_ns, to_ns), me, None, bounds)
}

/// `account`, where the measuring thread's wake-up is known without its sched_wakeup
/// (`woken_ns`: the timer's hrtimer expiry): from the event at that time on it counts as
/// runnable, as after a recorded wakeup.
pub fn account_woken(
    tl: &Timeline,
    cpu: u32,
    (from_ns, to_ns): (u64, u64),
    me: i32,
    woken_ns: Option<u64>,
    bounds: SilenceBounds,
) -> Accounting {
    let list = tl.cpu(cpu);
    let (first_in, start) = replay_start(tl, cpu, from_ns, bounds);
    let mut r = Replay {
        tl,
        cpu,
        me,
        me_prio: tl.task(me).map(|t| t.prio),
        bounds,
        from: from_ns,
        to: to_ns,
        current: None,
        task_fresh: true,
        stack: Vec::new(),
        me_runnable: false,
        picked_over_me: false,
        out: Accounting::default(),
    };
    let mut last = None::<u64>;
    for e in &list[start..] {
        if e.ts_ns > to_ns {
            break;
        }
        r.charge_up_to(e, last.unwrap_or(from_ns.min(e.ts_ns)));
        r.apply(e);
        if woken_ns == Some(e.ts_ns) {
            r.me_runnable = true;
        }
        last = Some(e.ts_ns);
    }
    match last {
        Some(t) => r.charge(t, to_ns),
        None => {
            // No event at all from the last switch to the end of the interval.
            let before = list[..first_in].last();
            if let Some(prev) = before {
                r.current = Some(prev.pid);
            }
            r.charge(from_ns, to_ns);
        }
    }
    if tl.lost_in(cpu, from_ns, to_ns) {
        r.out.lost_events = true;
    }
    let mut out = r.out;
    sort_causes(&mut out.causes);
    out
}

/// (first event in the interval, event to replay from): the last sched_switch before the
/// interval, so the task and the (empty) interrupt nesting are known when it starts; not
/// further back than two ticks either: older open frames would be missing exits.
fn replay_start(tl: &Timeline, cpu: u32, from_ns: u64, bounds: SilenceBounds) -> (usize, usize) {
    let list = tl.cpu(cpu);
    let first_in = tl.index_at(cpu, from_ns);
    let recent = tl.index_at(cpu, from_ns.saturating_sub(2 * bounds.running_ns));
    let floor = first_in.saturating_sub(LOOKBACK_EVENTS).max(recent);
    let start = (floor..first_in)
        .rev()
        .find(|&i| matches!(list[i].kind, EventKind::SchedSwitch { .. }))
        .unwrap_or(floor);
    (first_in, start)
}

/// Longest first, then most frequent, then by name.
fn sort_causes(causes: &mut [Cause]) {
    causes.sort_by(|a, b| {
        b.duration_ns
            .cmp(&a.duration_ns)
            .then(b.count.cmp(&a.count))
            .then(a.name.cmp(&b.name))
    });
}

#[cfg(test)]
#[path = "account_tests.rs"]
mod tests;
