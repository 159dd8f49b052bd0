//! The decoded trace event: what the recorder hands to the analysis. One typed variant per
//! event the analysis reads; everything else keeps its fields by name, so the decoder can be
//! cross-checked against the kernel's text rendering field by field.

use serde::{Deserialize, Serialize};

/// One event of the trace, on the trace clock (`mono`, i.e. CLOCK_MONOTONIC ns).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// CLOCK_MONOTONIC ns (the instance's trace_clock is `mono`).
    pub ts_ns: u64,
    /// The CPU whose ring buffer held the event.
    pub cpu: u32,
    /// `common_pid`: the task running when the event fired (0 = idle).
    pub pid: i32,
    /// `common_flags` (irqs-off, need-resched, hardirq, softirq bits).
    pub flags: u8,
    /// `common_preempt_count`.
    pub preempt_count: u8,
    pub kind: EventKind,
}

/// The task fields shared by sched_waking and sched_wakeup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRef {
    pub comm: String,
    pub pid: i32,
    /// Kernel priority as traced (0-99 RT: 99 - rt_priority; 100-139 normal; 120 = nice 0).
    pub prio: i32,
}

/// What happened. Field names follow the events' `format` files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    /// timer:hrtimer_start. `softexpires` is the absolute expiry the task asked for
    /// (for clock_nanosleep TIMER_ABSTIME on CLOCK_MONOTONIC it is latscope's deadline);
    /// `expires` adds the task's timer slack (0 for RT tasks).
    HrtimerStart {
        hrtimer: u64,
        function: u64,
        expires_ns: i64,
        softexpires_ns: i64,
        mode: u32,
    },
    /// timer:hrtimer_expire_entry; `now_ns` is the hrtimer base's time.
    HrtimerExpireEntry {
        hrtimer: u64,
        now_ns: i64,
        function: u64,
    },
    /// timer:hrtimer_expire_exit.
    HrtimerExpireExit { hrtimer: u64 },
    /// timer:hrtimer_cancel.
    HrtimerCancel { hrtimer: u64 },
    /// sched:sched_waking (on the waker's CPU).
    SchedWaking { task: TaskRef, target_cpu: u32 },
    /// sched:sched_wakeup.
    SchedWakeup { task: TaskRef, target_cpu: u32 },
    /// sched:sched_switch.
    SchedSwitch {
        prev: TaskRef,
        /// The traced `prev_state` bits (0 = R: preempted while runnable).
        prev_state: i64,
        next: TaskRef,
    },
    /// irq:irq_handler_entry.
    IrqHandlerEntry { irq: i32, name: String },
    /// irq:irq_handler_exit.
    IrqHandlerExit { irq: i32, ret: i32 },
    /// irq:softirq_entry (vec: 0 HI, 1 TIMER, 2 NET_TX, 3 NET_RX, 4 BLOCK, 5 IRQ_POLL,
    /// 6 TASKLET, 7 SCHED, 8 HRTIMER, 9 RCU).
    SoftirqEntry { vec: u32 },
    /// irq:softirq_exit.
    SoftirqExit { vec: u32 },
    /// irq:softirq_raise.
    SoftirqRaise { vec: u32 },
    /// irq_vectors:*_entry, `name` without the suffix (`local_timer`, `reschedule`,
    /// `call_function`, `call_function_single`, `irq_work`, ...); on Arm, which has no
    /// vectors, ipi:ipi_entry with `vector` [`ARM_IPI`] and the name of its reason
    /// ([`arm_ipi_name`]), so IPIs are charged alike on both.
    VectorEntry { name: String, vector: i32 },
    /// irq_vectors:*_exit (Arm: ipi:ipi_exit).
    VectorExit { name: String, vector: i32 },
    /// exceptions:page_fault_user / page_fault_kernel.
    PageFault {
        user: bool,
        address: u64,
        ip: u64,
        error_code: u64,
    },
    /// ipi:ipi_send_cpu (one target) and ipi:ipi_send_cpumask (targets as a CPU list).
    IpiSend {
        targets: Vec<u32>,
        callsite: u64,
        callback: u64,
    },
    /// rseq:rseq_update: the task is about to return to user space.
    RseqUpdate { cpu_id: i32 },
    /// Any other event, its fields by name as the kernel's text rendering prints them.
    Other {
        system: String,
        name: String,
        fields: Vec<(String, String)>,
    },
}

impl EventKind {
    /// `system:name` of the tracepoint, e.g. `sched:sched_switch`.
    pub fn tracepoint(&self) -> String {
        let fixed = match self {
            EventKind::HrtimerStart { .. } => "timer:hrtimer_start",
            EventKind::HrtimerExpireEntry { .. } => "timer:hrtimer_expire_entry",
            EventKind::HrtimerExpireExit { .. } => "timer:hrtimer_expire_exit",
            EventKind::HrtimerCancel { .. } => "timer:hrtimer_cancel",
            EventKind::SchedWaking { .. } => "sched:sched_waking",
            EventKind::SchedWakeup { .. } => "sched:sched_wakeup",
            EventKind::SchedSwitch { .. } => "sched:sched_switch",
            EventKind::IrqHandlerEntry { .. } => "irq:irq_handler_entry",
            EventKind::IrqHandlerExit { .. } => "irq:irq_handler_exit",
            EventKind::SoftirqEntry { .. } => "irq:softirq_entry",
            EventKind::SoftirqExit { .. } => "irq:softirq_exit",
            EventKind::SoftirqRaise { .. } => "irq:softirq_raise",
            EventKind::VectorEntry {
                vector: ARM_IPI, ..
            } => "ipi:ipi_entry",
            EventKind::VectorExit {
                vector: ARM_IPI, ..
            } => "ipi:ipi_exit",
            EventKind::VectorEntry { name, .. } => return format!("irq_vectors:{name}_entry"),
            EventKind::VectorExit { name, .. } => return format!("irq_vectors:{name}_exit"),
            EventKind::PageFault { user: true, .. } => "exceptions:page_fault_user",
            EventKind::PageFault { user: false, .. } => "exceptions:page_fault_kernel",
            EventKind::IpiSend { targets, .. } if targets.len() == 1 => "ipi:ipi_send_cpu",
            EventKind::IpiSend { .. } => "ipi:ipi_send_cpumask",
            EventKind::RseqUpdate { .. } => "rseq:rseq_update",
            EventKind::Other { system, name, .. } => return format!("{system}:{name}"),
        };
        fixed.to_string()
    }
}

/// The `vector` of an Arm IPI (ipi:ipi_entry/ipi_exit), which has no vector number.
pub const ARM_IPI: i32 = -1;

/// An Arm IPI's name from the reason ipi:ipi_entry gives (arch/arm64/kernel/smp.c's
/// `ipi_types`), in x86's vector names where there is one (`reschedule`,
/// `call_function`, `irq_work`), else its own (`timer_broadcast`, `cpu_stop`,
/// `cpu_wakeup`); `ipi` when the reason is unknown (the binary record holds only a
/// pointer to the string).
pub fn arm_ipi_name(reason: Option<&str>) -> &'static str {
    let reason = reason
        .unwrap_or_default()
        .trim_matches(|c| c == '(' || c == ')');
    match reason {
        "Rescheduling interrupts" => "reschedule",
        "Function call interrupts" => "call_function",
        "Single function call interrupts" => "call_function_single",
        "IRQ work interrupts" => "irq_work",
        "Timer broadcast interrupts" => "timer_broadcast",
        "CPU stop interrupts" | "CPU stop (for crash dump) interrupts" => "cpu_stop",
        "CPU wake-up interrupts" | "CPU backtrace interrupts" => "cpu_wakeup",
        // Its own rendering (`(reschedule)`, text.rs) read back.
        own => [
            "reschedule",
            "call_function",
            "call_function_single",
            "irq_work",
            "timer_broadcast",
            "cpu_stop",
            "cpu_wakeup",
        ]
        .into_iter()
        .find(|n| *n == own)
        .unwrap_or("ipi"),
    }
}

// The loss counts are part of the saved result: they live with its schema.
pub use crate::result::trace::{CpuLosses, Losses};
