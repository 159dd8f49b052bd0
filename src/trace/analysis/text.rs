//! Events as the kernel's `trace` file prints them, and back: recorded sequences are kept
//! as readable text fixtures, and real `trace` lines can be read into `Event`s.
//!
//! Differences from the kernel's text, by necessity: addresses the kernel prints as symbol
//! names (`%ps`/`%pS`: hrtimer functions, IPI call sites, kernel fault addresses) are
//! printed as `0x…` (no symbol table here), and parsing a symbol name yields 0; fields the
//! typed events do not keep (`was_armed`, `node_id`, `mm_cid`) are not printed; the task name
//! before the PID comes from sched events seen (`TextRenderer`) or is `<...>`.

use crate::trace::event::{arm_ipi_name, Event, EventKind, TaskRef, ARM_IPI};
use std::collections::HashMap;

// common_flags bits (include/linux/trace_events.h, 6.x).
const IRQS_OFF: u8 = 0x01;
const NEED_RESCHED_LAZY: u8 = 0x02;
const NEED_RESCHED: u8 = 0x04;
const HARDIRQ: u8 = 0x08;
const SOFTIRQ: u8 = 0x10;
const PREEMPT_RESCHED: u8 = 0x20;
const NMI: u8 = 0x40;
const BH_OFF: u8 = 0x80;

const HRTIMER_MODES: [&str; 12] = [
    "ABS",
    "REL",
    "ABS|PINNED",
    "REL|PINNED",
    "ABS|SOFT",
    "REL|SOFT",
    "ABS|PINNED|SOFT",
    "REL|PINNED|SOFT",
    "ABS|HARD",
    "REL|HARD",
    "ABS|PINNED|HARD",
    "REL|PINNED|HARD",
];
const SOFTIRQS: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];
const TASK_STATES: [(i64, char); 8] = [
    (0x01, 'S'),
    (0x02, 'D'),
    (0x04, 'T'),
    (0x08, 't'),
    (0x10, 'X'),
    (0x20, 'Z'),
    (0x40, 'P'),
    (0x80, 'I'),
];

/// The five latency-format characters (`d.h2.`): irqs-off/BH, need-resched,
/// hardirq/softirq/NMI, preempt depth, migrate-disable depth.
pub fn flags_text(flags: u8, preempt_count: u8) -> String {
    let irqs = match (flags & IRQS_OFF != 0, flags & BH_OFF != 0) {
        (true, true) => 'D',
        (true, false) => 'd',
        (false, true) => 'b',
        _ => '.',
    };
    let resched = match flags & (NEED_RESCHED | NEED_RESCHED_LAZY | PREEMPT_RESCHED) {
        x if x == NEED_RESCHED | NEED_RESCHED_LAZY | PREEMPT_RESCHED => 'B',
        x if x == NEED_RESCHED | PREEMPT_RESCHED => 'N',
        x if x == NEED_RESCHED_LAZY | PREEMPT_RESCHED => 'L',
        x if x == NEED_RESCHED | NEED_RESCHED_LAZY => 'b',
        NEED_RESCHED => 'n',
        PREEMPT_RESCHED => 'p',
        NEED_RESCHED_LAZY => 'l',
        _ => '.',
    };
    let irq = match (flags & NMI != 0, flags & HARDIRQ != 0, flags & SOFTIRQ != 0) {
        (true, true, _) => 'Z',
        (true, false, _) => 'z',
        (false, true, true) => 'H',
        (false, true, false) => 'h',
        (false, false, true) => 's',
        _ => '.',
    };
    let digit = |v: u8| {
        if v == 0 {
            '.'
        } else {
            char::from_digit(v as u32, 16).unwrap_or('?')
        }
    };
    [
        irqs,
        resched,
        irq,
        digit(preempt_count & 0xf),
        digit(preempt_count >> 4),
    ]
    .iter()
    .collect()
}

/// Inverse of `flags_text`: (flags, preempt_count).
pub fn parse_flags_text(s: &str) -> Option<(u8, u8)> {
    let c: Vec<char> = s.chars().collect();
    if c.len() < 4 {
        return None;
    }
    let mut f = match c[0] {
        'D' => IRQS_OFF | BH_OFF,
        'd' => IRQS_OFF,
        'b' => BH_OFF,
        _ => 0,
    };
    f |= match c[1] {
        'B' => NEED_RESCHED | NEED_RESCHED_LAZY | PREEMPT_RESCHED,
        'N' => NEED_RESCHED | PREEMPT_RESCHED,
        'L' => NEED_RESCHED_LAZY | PREEMPT_RESCHED,
        'b' => NEED_RESCHED | NEED_RESCHED_LAZY,
        'n' => NEED_RESCHED,
        'p' => PREEMPT_RESCHED,
        'l' => NEED_RESCHED_LAZY,
        _ => 0,
    };
    f |= match c[2] {
        'Z' => NMI | HARDIRQ,
        'z' => NMI,
        'H' => HARDIRQ | SOFTIRQ,
        'h' => HARDIRQ,
        's' => SOFTIRQ,
        _ => 0,
    };
    let digit = |ch: Option<&char>| ch.and_then(|c| c.to_digit(16)).unwrap_or(0) as u8;
    Some((f, digit(c.get(3)) | (digit(c.get(4)) << 4)))
}

/// `prev_state` as the kernel prints it (`R`, `S`, `D|K`, `R+`).
pub fn task_state_text(state: i64) -> String {
    let mut s: Vec<String> = TASK_STATES
        .iter()
        .filter(|(bit, _)| state & bit != 0)
        .map(|(_, c)| c.to_string())
        .collect();
    if s.is_empty() {
        s.push("R".into());
    }
    let mut out = s.join("|");
    if state & 0x100 != 0 {
        out.push('+');
    }
    out
}

fn parse_task_state(s: &str) -> i64 {
    let (s, plus) = match s.strip_suffix('+') {
        Some(r) => (r, 0x100),
        None => (s, 0),
    };
    s.split('|')
        .filter_map(|p| {
            let c = p.chars().next()?;
            TASK_STATES.iter().find(|(_, t)| *t == c).map(|(b, _)| *b)
        })
        .fold(plus, |a, b| a | b)
}

fn cpu_list(cpus: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        });
        i = j + 1;
    }
    out.join(",")
}

fn parse_cpu_list(s: &str) -> Vec<u32> {
    let mut v = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    v.extend(a..=b.min(crate::sys::cpu_list::MAX_CPUS as u32 - 1));
                }
            }
            None => v.extend(part.parse::<u32>().ok()),
        }
    }
    v
}

/// The event name as the kernel prints it (without the system).
pub fn event_name(kind: &EventKind) -> String {
    let tp = kind.tracepoint();
    tp.split_once(':')
        .map_or(tp.clone(), |(_, n)| n.to_string())
}

/// The part after `name: `, in the events' print formats.
pub fn fields_text(kind: &EventKind) -> String {
    let task =
        |p: &str, t: &TaskRef| format!("{p}comm={} {p}pid={} {p}prio={}", t.comm, t.pid, t.prio);
    match kind {
        EventKind::HrtimerStart {
            hrtimer,
            function,
            expires_ns,
            softexpires_ns,
            mode,
        } => hrtimer_start_text(*hrtimer, *function, *expires_ns, *softexpires_ns, *mode),
        EventKind::HrtimerExpireEntry {
            hrtimer,
            now_ns,
            function,
        } => format!(
            "hrtimer={hrtimer:016x} function=0x{function:x} now={}",
            *now_ns as u64
        ),
        EventKind::HrtimerExpireExit { hrtimer } | EventKind::HrtimerCancel { hrtimer } => {
            format!("hrtimer={hrtimer:016x}")
        }
        EventKind::SchedWaking {
            task: t,
            target_cpu,
        }
        | EventKind::SchedWakeup {
            task: t,
            target_cpu,
        } => {
            format!("{} target_cpu={target_cpu:03}", task("", t))
        }
        EventKind::SchedSwitch {
            prev,
            prev_state,
            next,
        } => format!(
            "{} prev_state={} ==> {}",
            task("prev_", prev),
            task_state_text(*prev_state),
            task("next_", next)
        ),
        EventKind::IrqHandlerEntry { irq, name } => format!("irq={irq} name={name}"),
        EventKind::IrqHandlerExit { irq, ret } => format!(
            "irq={irq} ret={}",
            if *ret != 0 { "handled" } else { "unhandled" }
        ),
        EventKind::SoftirqEntry { vec }
        | EventKind::SoftirqExit { vec }
        | EventKind::SoftirqRaise { vec } => {
            format!(
                "vec={vec} [action={}]",
                SOFTIRQS.get(*vec as usize).copied().unwrap_or("?")
            )
        }
        EventKind::VectorEntry { name, vector } | EventKind::VectorExit { name, vector } => {
            vector_text(name, *vector)
        }
        EventKind::PageFault {
            address,
            ip,
            error_code,
            ..
        } => format!("address=0x{address:x} ip=0x{ip:x} error_code=0x{error_code:x}"),
        EventKind::IpiSend {
            targets,
            callsite,
            callback,
        } => ipi_send_text(targets, *callsite, *callback),
        EventKind::RseqUpdate { cpu_id } => format!("cpu_id={cpu_id}"),
        EventKind::Other { fields, .. } => fields
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// x86's `vector=N`; Arm's IPIs print their reason in parentheses, as ipi_entry does.
fn vector_text(name: &str, vector: i32) -> String {
    if vector == ARM_IPI {
        format!("({name})")
    } else {
        format!("vector={vector}")
    }
}

fn hrtimer_start_text(
    hrtimer: u64,
    function: u64,
    expires_ns: i64,
    softexpires_ns: i64,
    mode: u32,
) -> String {
    format!(
        "hrtimer={hrtimer:016x} function=0x{function:x} expires={} softexpires={} mode={}",
        expires_ns as u64,
        softexpires_ns as u64,
        HRTIMER_MODES
            .get(mode as usize)
            .map_or(mode.to_string(), |m| m.to_string())
    )
}

/// `ipi_send_cpu` (one target) or `ipi_send_cpumask`.
fn ipi_send_text(targets: &[u32], callsite: u64, callback: u64) -> String {
    if targets.len() == 1 {
        format!(
            "cpu={} callsite=0x{callsite:x} callback=0x{callback:x}",
            targets[0]
        )
    } else {
        format!(
            "cpumask={} callsite=0x{callsite:x} callback=0x{callback:x}",
            cpu_list(targets)
        )
    }
}

fn line(e: &Event, comm: &str, ns: bool) -> String {
    let ts = if ns {
        format!(
            "{:5}.{:09}",
            e.ts_ns / 1_000_000_000,
            e.ts_ns % 1_000_000_000
        )
    } else {
        // The kernel rounds to the nearest microsecond (ns2usecs).
        let us = (e.ts_ns + 500) / 1000;
        format!("{:5}.{:06}", us / 1_000_000, us % 1_000_000)
    };
    format!(
        "{comm:>16}-{:<7} [{:03}] {} {ts}: {}: {}",
        e.pid,
        e.cpu,
        flags_text(e.flags, e.preempt_count),
        event_name(&e.kind),
        fields_text(&e.kind)
    )
}

fn own_comm(e: &Event) -> Option<&str> {
    match &e.kind {
        _ if e.pid == 0 => Some("<idle>"),
        EventKind::SchedSwitch { prev, .. } if prev.pid == e.pid => Some(&prev.comm),
        _ => None,
    }
}

/// One line as the kernel's `trace` file prints it (microseconds).
pub fn render_text_line(e: &Event) -> String {
    line(e, own_comm(e).unwrap_or("<...>"), false)
}

/// Like `render_text_line` with nanosecond timestamps (`parse_text_line` reads both), for
/// fixtures that must keep the exact time.
pub fn render_text_line_ns(e: &Event) -> String {
    line(e, own_comm(e).unwrap_or("<...>"), true)
}

/// Renders a sequence, naming tasks from the sched events seen so far.
#[derive(Debug, Default)]
pub struct TextRenderer {
    comms: HashMap<i32, String>,
    /// Nanosecond timestamps instead of the kernel's microseconds.
    pub ns: bool,
}

impl TextRenderer {
    pub fn render(&mut self, e: &Event) -> String {
        match &e.kind {
            EventKind::SchedSwitch { prev, next, .. } => {
                self.comms.insert(prev.pid, prev.comm.clone());
                self.comms.insert(next.pid, next.comm.clone());
            }
            EventKind::SchedWaking { task, .. } | EventKind::SchedWakeup { task, .. } => {
                self.comms.insert(task.pid, task.comm.clone());
            }
            _ => {}
        }
        let comm = own_comm(e)
            .map(str::to_string)
            .or_else(|| self.comms.get(&e.pid).cloned())
            .unwrap_or_else(|| "<...>".into());
        line(e, &comm, self.ns)
    }
}

/// The parts of a `trace` line before the fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineHead<'a> {
    pub comm: &'a str,
    pub pid: i32,
    pub cpu: u32,
    /// The latency-format flags (`d.h2.`), empty when the line has none (irq-info off).
    pub flags: &'a str,
    pub ts_ns: u64,
    /// The timestamp as printed.
    pub ts_text: &'a str,
    pub name: &'a str,
    pub fields: &'a str,
}

/// Splits a `trace` line into its head and field text; `None` for comments and others.
pub fn split_line(line: &str) -> Option<LineHead<'_>> {
    if line.trim_start().starts_with('#') {
        return None;
    }
    // "COMM-PID [CPU] FLAGS TS: NAME: FIELDS"; COMM may hold spaces and dashes, so anchor
    // on the first " [ddd] ".
    let open = line.match_indices(" [").find_map(|(i, _)| {
        let rest = &line[i + 2..];
        let close = rest.find(']')?;
        rest[..close]
            .chars()
            .all(|c| c.is_ascii_digit())
            .then_some((i, close))
    })?;
    let (i, close) = open;
    let (comm, pid) = line[..i].trim().rsplit_once('-')?;
    let cpu: u32 = line[i + 2..i + 2 + close].parse().ok()?;
    let rest = line[i + 2 + close + 1..].trim_start();
    let (before, after) = rest.split_once(": ")?;
    let mut parts = before.split_whitespace();
    let (flags, ts_text) = match (parts.next()?, parts.next()) {
        (f, Some(ts)) => (f, ts),
        (ts, None) => ("", ts),
    };
    let ts_text = ts_text.trim_end_matches(':');
    let (secs, frac) = ts_text.split_once('.')?;
    let scale = 10u64.checked_pow(9u32.checked_sub(frac.len() as u32)?)?;
    let ts_ns = secs.parse::<u64>().ok()? * 1_000_000_000 + frac.parse::<u64>().ok()? * scale;
    let (name, fields) = after
        .split_once(": ")
        .unwrap_or((after.trim_end_matches(':'), ""));
    Some(LineHead {
        comm,
        pid: pid.parse().ok()?,
        cpu,
        flags,
        ts_ns,
        ts_text,
        name,
        fields,
    })
}

/// `key=value` pairs of a field text. A value runs until the next `identifier=` token, so
/// task names with spaces survive; `==>` separates, `[action=X]` counts as a pair.
pub fn field_pairs(fields: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for tok in fields.split_whitespace() {
        if tok == "==>" {
            continue;
        }
        let t = tok.trim_start_matches('[').trim_end_matches(']');
        match t.split_once('=') {
            Some((k, v))
                if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
            {
                out.push((k.to_string(), v.to_string()))
            }
            _ => match out.last_mut() {
                Some((_, v)) => {
                    v.push(' ');
                    v.push_str(tok);
                }
                None => out.push((String::new(), tok.to_string())),
            },
        }
    }
    out
}

fn num_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// An address field: hex (with or without 0x); a symbol name (real kernel text) gives 0.
fn addr(s: &str) -> u64 {
    let h = s.strip_prefix("0x").unwrap_or(s);
    u64::from_str_radix(h, 16).unwrap_or(0)
}

fn system_of(name: &str) -> &'static str {
    match name {
        n if n.starts_with("hrtimer_") || n.starts_with("timer_") || n.starts_with("tick_") => {
            "timer"
        }
        n if n.starts_with("sched_") => "sched",
        n if n.starts_with("irq_handler") || n.starts_with("softirq_") => "irq",
        n if n.starts_with("ipi_") => "ipi",
        n if n.ends_with("_entry") || n.ends_with("_exit") || n.starts_with("vector_") => {
            "irq_vectors"
        }
        n if n.starts_with("page_fault") => "exceptions",
        n if n.starts_with("rseq_") => "rseq",
        n if n.starts_with("nmi_") => "nmi",
        _ => "",
    }
}

/// Reads a line as `render_text_line` (or the kernel's `trace` file) prints it.
pub fn parse_text_line(line: &str) -> Option<Event> {
    let h = split_line(line)?;
    let (flags, preempt_count) = parse_flags_text(h.flags).unwrap_or((0, 0));
    let pairs = field_pairs(h.fields);
    let f = TextFields::new(&pairs);
    let kind = typed_kind(h.name, &f).unwrap_or_else(|| EventKind::Other {
        system: system_of(h.name).to_string(),
        name: h.name.to_string(),
        fields: pairs.clone(),
    });
    Some(Event {
        ts_ns: h.ts_ns,
        cpu: h.cpu,
        pid: h.pid,
        flags,
        preempt_count,
        kind,
    })
}

/// A text line's `key=value` fields, looked up by name.
struct TextFields<'a> {
    kv: HashMap<&'a str, &'a str>,
}

impl<'a> TextFields<'a> {
    fn new(pairs: &'a [(String, String)]) -> Self {
        let kv = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        TextFields { kv }
    }
    fn g(&self, k: &str) -> Option<&'a str> {
        self.kv.get(k).copied()
    }
    fn i(&self, k: &str) -> Option<i64> {
        self.g(k)?.parse::<i64>().ok()
    }
    fn u(&self, k: &str) -> Option<u64> {
        num_u64(self.g(k)?)
    }
    /// The task of `{p}comm`, `{p}pid`, `{p}prio` (`p`: "", "prev_", "next_").
    fn task(&self, p: &str) -> Option<TaskRef> {
        Some(TaskRef {
            comm: self.g(&format!("{p}comm"))?.to_string(),
            pid: self.i(&format!("{p}pid"))? as i32,
            prio: self.i(&format!("{p}prio"))? as i32,
        })
    }
}

/// The typed event of a known name with all its fields; None: unknown name or a field
/// missing (the caller keeps it as `Other`). Each group matches only its own names, so
/// trying them in turn is one match.
fn typed_kind(name: &str, f: &TextFields) -> Option<EventKind> {
    timer_kind(name, f)
        .or_else(|| sched_kind(name, f))
        .or_else(|| irq_kind(name, f))
        .or_else(|| fault_ipi_rseq_kind(name, f))
}

fn timer_kind(name: &str, f: &TextFields) -> Option<EventKind> {
    Some(match name {
        "hrtimer_start" => EventKind::HrtimerStart {
            hrtimer: addr(f.g("hrtimer")?),
            function: addr(f.g("function")?),
            expires_ns: f.u("expires")? as i64,
            softexpires_ns: f.u("softexpires")? as i64,
            mode: HRTIMER_MODES
                .iter()
                .position(|m| Some(*m) == f.g("mode"))
                .map(|p| p as u32)
                .or_else(|| f.g("mode")?.parse().ok())?,
        },
        "hrtimer_expire_entry" => EventKind::HrtimerExpireEntry {
            hrtimer: addr(f.g("hrtimer")?),
            now_ns: f.u("now")? as i64,
            function: addr(f.g("function")?),
        },
        "hrtimer_expire_exit" => EventKind::HrtimerExpireExit {
            hrtimer: addr(f.g("hrtimer")?),
        },
        "hrtimer_cancel" => EventKind::HrtimerCancel {
            hrtimer: addr(f.g("hrtimer")?),
        },
        _ => return None,
    })
}

fn sched_kind(name: &str, f: &TextFields) -> Option<EventKind> {
    Some(match name {
        "sched_waking" => EventKind::SchedWaking {
            task: f.task("")?,
            target_cpu: f.u("target_cpu")? as u32,
        },
        "sched_wakeup" => EventKind::SchedWakeup {
            task: f.task("")?,
            target_cpu: f.u("target_cpu")? as u32,
        },
        "sched_switch" => EventKind::SchedSwitch {
            prev: f.task("prev_")?,
            prev_state: parse_task_state(f.g("prev_state")?),
            next: f.task("next_")?,
        },
        _ => return None,
    })
}

/// Interrupt handlers, softirqs and the x86 vectors (`*_entry`/`*_exit` with a `vector`).
fn irq_kind(name: &str, f: &TextFields) -> Option<EventKind> {
    let vectors = system_of(name) == "irq_vectors" && f.g("vector").is_some();
    Some(match name {
        "irq_handler_entry" => EventKind::IrqHandlerEntry {
            irq: f.i("irq")? as i32,
            name: f.g("name")?.to_string(),
        },
        "irq_handler_exit" => EventKind::IrqHandlerExit {
            irq: f.i("irq")? as i32,
            ret: match f.g("ret")? {
                "handled" => 1,
                "unhandled" => 0,
                n => n.parse().ok()?,
            },
        },
        "softirq_entry" => EventKind::SoftirqEntry {
            vec: f.u("vec")? as u32,
        },
        "softirq_exit" => EventKind::SoftirqExit {
            vec: f.u("vec")? as u32,
        },
        "softirq_raise" => EventKind::SoftirqRaise {
            vec: f.u("vec")? as u32,
        },
        n if vectors && n.ends_with("_entry") => EventKind::VectorEntry {
            name: n.trim_end_matches("_entry").to_string(),
            vector: f.i("vector")? as i32,
        },
        n if vectors && n.ends_with("_exit") => EventKind::VectorExit {
            name: n.trim_end_matches("_exit").to_string(),
            vector: f.i("vector")? as i32,
        },
        _ => return None,
    })
}

fn fault_ipi_rseq_kind(name: &str, f: &TextFields) -> Option<EventKind> {
    Some(match name {
        "page_fault_user" | "page_fault_kernel" => EventKind::PageFault {
            user: name == "page_fault_user",
            address: addr(f.g("address")?),
            ip: addr(f.g("ip")?),
            error_code: f.u("error_code")?,
        },
        "ipi_send_cpu" => EventKind::IpiSend {
            targets: vec![f.u("cpu")? as u32],
            callsite: addr(f.g("callsite")?),
            callback: addr(f.g("callback")?),
        },
        "ipi_send_cpumask" => EventKind::IpiSend {
            targets: parse_cpu_list(f.g("cpumask")?),
            callsite: addr(f.g("callsite")?),
            callback: addr(f.g("callback")?),
        },
        "rseq_update" => EventKind::RseqUpdate {
            cpu_id: f.i("cpu_id")? as i32,
        },
        // Arm's IPIs: `ipi_entry: (Rescheduling interrupts)`, the reason its one field.
        "ipi_entry" => EventKind::VectorEntry {
            name: arm_ipi_name(f.g("")).to_string(),
            vector: ARM_IPI,
        },
        "ipi_exit" => EventKind::VectorExit {
            name: arm_ipi_name(f.g("")).to_string(),
            vector: ARM_IPI,
        },
        _ => return None,
    })
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
