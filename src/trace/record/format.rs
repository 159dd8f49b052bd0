//! The kernel's self-description of its trace data: `events/header_page` (the ring-buffer
//! page header) and each event's `format` file (field names, offsets, sizes), and the
//! decoding of one raw event into an `Event` by those offsets — never by hard-coded ones.
//!
//! Written here rather than taken from a crate: the one maintained pure-Rust format parser
//! (`tracepoint_decode`) reads format files but not ftrace ring-buffer pages, which we need
//! anyway, and brings the EventHeader machinery along; the subset we need is small.

use crate::trace::event::{Event, EventKind, TaskRef};
use crate::trace::record::kernel_strings::KernelStrings;
use anyhow::{anyhow, bail, Context};
use std::collections::HashMap;
use std::path::Path;

/// How a field's bytes are laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldKind {
    /// An integer or pointer of `size` bytes.
    Scalar,
    /// A fixed array (`char comm[16]`); `elem_size` bytes per element.
    Array { elem_size: usize },
    /// `__data_loc T[] name`: a u32 with the data's offset (low 16 bits) and length (high 16).
    DataLoc,
    /// `__rel_loc`: like DataLoc, the offset counted from the end of this field.
    RelLoc,
}

/// One `field:` line of a format file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    /// The C type as written (`char`, `void *`, `pid_t`, `__data_loc char[]`).
    pub c_type: String,
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
    pub kind: FieldKind,
}

impl Field {
    /// Whether the field holds text (char arrays and char data_locs).
    pub fn is_text(&self) -> bool {
        let base = self
            .c_type
            .trim_start_matches("__data_loc ")
            .trim_start_matches("__rel_loc ");
        matches!(
            self.kind,
            FieldKind::Array { elem_size: 1 } | FieldKind::DataLoc | FieldKind::RelLoc
        ) && (base.starts_with("char") || base.starts_with("const char"))
    }

    pub fn is_pointer(&self) -> bool {
        self.kind == FieldKind::Scalar && self.c_type.contains('*')
    }

    /// The field's bytes in an event (the pointed-to bytes for data_loc/rel_loc).
    pub fn bytes<'a>(&self, data: &'a [u8]) -> Option<&'a [u8]> {
        let raw = data.get(self.offset..self.offset + self.size)?;
        match self.kind {
            FieldKind::Scalar | FieldKind::Array { .. } => Some(raw),
            FieldKind::DataLoc | FieldKind::RelLoc => {
                let loc = u32::from_le_bytes(raw.get(..4)?.try_into().ok()?);
                let mut off = (loc & 0xffff) as usize;
                let len = (loc >> 16) as usize;
                if self.kind == FieldKind::RelLoc {
                    off += self.offset + self.size;
                }
                data.get(off..off + len)
            }
        }
    }

    /// An unsigned integer field (1, 2, 4 or 8 bytes, little-endian).
    pub fn uint(&self, data: &[u8]) -> Option<u64> {
        read_uint(data.get(self.offset..self.offset + self.size)?)
    }

    /// A signed integer field, sign-extended from its size.
    pub fn int(&self, data: &[u8]) -> Option<i64> {
        let v = self.uint(data)?;
        let bits = self.size as u32 * 8;
        Some(if bits >= 64 {
            v as i64
        } else {
            ((v << (64 - bits)) as i64) >> (64 - bits)
        })
    }

    /// Text up to the first NUL.
    pub fn text(&self, data: &[u8]) -> Option<String> {
        let b = self.bytes(data)?;
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        Some(String::from_utf8_lossy(&b[..end]).into_owned())
    }

    /// The value as the kernel's text would show it, for `EventKind::Other`: integers in
    /// decimal (signed per the format), pointers in hex, text as text, other arrays as
    /// `{a,b,...}` in hex.
    pub fn display(&self, data: &[u8]) -> String {
        if self.is_text() {
            return self.text(data).unwrap_or_default();
        }
        match self.kind {
            FieldKind::Scalar if self.is_pointer() => self
                .uint(data)
                .map(|v| format!("0x{v:x}"))
                .unwrap_or_default(),
            FieldKind::Scalar if self.signed => {
                self.int(data).map(|v| v.to_string()).unwrap_or_default()
            }
            FieldKind::Scalar => self.uint(data).map(|v| v.to_string()).unwrap_or_default(),
            _ => {
                let b = self.bytes(data).unwrap_or_default();
                let elem = match self.kind {
                    FieldKind::Array { elem_size } if elem_size > 0 => elem_size,
                    _ => 1,
                };
                let parts: Vec<String> = b
                    .chunks(elem)
                    .filter_map(read_uint)
                    .map(|v| format!("0x{v:x}"))
                    .collect();
                format!("{{{}}}", parts.join(","))
            }
        }
    }
}

/// Reads a tracefs text file. Some (`events/header_page`) serve only as many bytes as the
/// first read(2) asked for, so a small first read (as `read_to_string` makes) truncates
/// them: read with one large buffer.
pub fn read_tracefs_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 256 * 1024];
    let mut len = 0;
    loop {
        if len == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        match f.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(len);
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

fn read_uint(b: &[u8]) -> Option<u64> {
    Some(match b.len() {
        1 => b[0] as u64,
        2 => u16::from_le_bytes(b.try_into().ok()?) as u64,
        4 => u32::from_le_bytes(b.try_into().ok()?) as u64,
        8 => u64::from_le_bytes(b.try_into().ok()?),
        _ => return None,
    })
}

/// Parses one `field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;` line.
fn parse_field(line: &str) -> Option<Field> {
    let mut decl = None;
    let (mut offset, mut size, mut signed) = (None, None, false);
    for part in line.trim().split(';') {
        let part = part.trim();
        if let Some(d) = part.strip_prefix("field:") {
            decl = Some(d.trim());
        } else if let Some(v) = part.strip_prefix("offset:") {
            offset = v.trim().parse().ok();
        } else if let Some(v) = part.strip_prefix("size:") {
            size = v.trim().parse().ok();
        } else if let Some(v) = part.strip_prefix("signed:") {
            signed = v.trim() == "1";
        }
    }
    let decl = decl?;
    let (offset, size): (usize, usize) = (offset?, size?);
    // The name is the last identifier; an array suffix `[16]` follows it.
    let (head, array_len) = match decl.strip_suffix(']').and_then(|d| d.rsplit_once('[')) {
        Some((h, n)) => (h.trim_end(), Some(n.trim().to_string())),
        None => (decl, None),
    };
    let split = head.rfind(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    let name = head[split + 1..].to_string();
    let mut c_type = head[..split + 1].trim().to_string();
    let kind = if c_type.starts_with("__data_loc") {
        FieldKind::DataLoc
    } else if c_type.starts_with("__rel_loc") {
        FieldKind::RelLoc
    } else if let Some(n) = array_len {
        let elem_size = n
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .map_or(1, |n| (size / n).max(1));
        c_type.push_str("[]");
        FieldKind::Array { elem_size }
    } else {
        FieldKind::Scalar
    };
    if name.is_empty() {
        return None;
    }
    Some(Field {
        name,
        c_type,
        offset,
        size,
        signed,
        kind,
    })
}

/// One event's `format` file.
#[derive(Debug, Clone)]
pub struct EventFormat {
    pub system: String,
    pub name: String,
    pub id: u16,
    /// Every field, the `common_*` ones first.
    pub fields: Vec<Field>,
}

impl EventFormat {
    pub fn parse(system: &str, text: &str) -> anyhow::Result<EventFormat> {
        let mut name = None;
        let mut id = None;
        let mut fields = Vec::new();
        for line in text.lines() {
            let t = line.trim();
            if let Some(n) = t.strip_prefix("name:") {
                name = Some(n.trim().to_string());
            } else if let Some(n) = t.strip_prefix("ID:") {
                id = n.trim().parse().ok();
            } else if t.starts_with("field:") {
                fields.push(parse_field(t).ok_or_else(|| anyhow!("unreadable format line {t:?}"))?);
            }
        }
        Ok(EventFormat {
            system: system.to_string(),
            name: name.ok_or_else(|| anyhow!("format without a name"))?,
            id: id.ok_or_else(|| anyhow!("format without an ID"))?,
            fields,
        })
    }

    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// `events/header_page`: where the page timestamp, the commit word and the data are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderPage {
    pub timestamp_offset: usize,
    pub timestamp_size: usize,
    pub commit_offset: usize,
    pub commit_size: usize,
    pub data_offset: usize,
}

impl HeaderPage {
    pub fn parse(text: &str) -> anyhow::Result<HeaderPage> {
        let fields: Vec<Field> = text.lines().filter_map(parse_field).collect();
        let get = |n: &str| {
            fields
                .iter()
                .find(|f| f.name == n)
                .ok_or_else(|| anyhow!("header_page has no field {n}"))
        };
        let (ts, commit, data) = (get("timestamp")?, get("commit")?, get("data")?);
        if ts.size != 8 || !(commit.size == 4 || commit.size == 8) {
            bail!("unexpected header_page layout: {text}");
        }
        Ok(HeaderPage {
            timestamp_offset: ts.offset,
            timestamp_size: ts.size,
            commit_offset: commit.offset,
            commit_size: commit.size,
            data_offset: data.offset,
        })
    }
}

/// Which typed `EventKind` an event format decodes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Typed {
    HrtimerStart,
    HrtimerExpireEntry,
    HrtimerExpireExit,
    HrtimerCancel,
    SchedWaking,
    SchedWakeup,
    SchedSwitch,
    IrqHandlerEntry,
    IrqHandlerExit,
    SoftirqEntry,
    SoftirqExit,
    SoftirqRaise,
    VectorEntry,
    VectorExit,
    PageFault(bool),
    IpiSendCpu,
    IpiSendCpumask,
    /// Arm's ipi:ipi_entry / ipi_exit (true: entry).
    ArmIpi(bool),
    RseqUpdate,
    Other,
}

fn typed_of(system: &str, name: &str) -> Typed {
    match (system, name) {
        ("timer", "hrtimer_start") => Typed::HrtimerStart,
        ("timer", "hrtimer_expire_entry") => Typed::HrtimerExpireEntry,
        ("timer", "hrtimer_expire_exit") => Typed::HrtimerExpireExit,
        ("timer", "hrtimer_cancel") => Typed::HrtimerCancel,
        ("sched", "sched_waking") => Typed::SchedWaking,
        ("sched", "sched_wakeup") => Typed::SchedWakeup,
        ("sched", "sched_switch") => Typed::SchedSwitch,
        ("irq", "irq_handler_entry") => Typed::IrqHandlerEntry,
        ("irq", "irq_handler_exit") => Typed::IrqHandlerExit,
        ("irq", "softirq_entry") => Typed::SoftirqEntry,
        ("irq", "softirq_exit") => Typed::SoftirqExit,
        ("irq", "softirq_raise") => Typed::SoftirqRaise,
        ("irq_vectors", n) if n.ends_with("_entry") => Typed::VectorEntry,
        ("irq_vectors", n) if n.ends_with("_exit") => Typed::VectorExit,
        ("exceptions", "page_fault_user") => Typed::PageFault(true),
        ("exceptions", "page_fault_kernel") => Typed::PageFault(false),
        ("ipi", "ipi_send_cpu") => Typed::IpiSendCpu,
        ("ipi", "ipi_send_cpumask") => Typed::IpiSendCpumask,
        ("ipi", "ipi_entry") => Typed::ArmIpi(true),
        ("ipi", "ipi_exit") => Typed::ArmIpi(false),
        ("rseq", "rseq_update") => Typed::RseqUpdate,
        _ => Typed::Other,
    }
}

/// Set bits of a kernel bitmap (an array of little-endian unsigned longs).
fn bitmap_cpus(bytes: &[u8]) -> Vec<u32> {
    let mut cpus = Vec::new();
    for (i, byte) in bytes.iter().enumerate() {
        for bit in 0..8 {
            if byte & (1 << bit) != 0 {
                cpus.push((i * 8 + bit) as u32);
            }
        }
    }
    cpus
}

/// Decodes raw events of the enabled formats into `Event`s.
#[derive(Debug, Clone)]
pub struct Decoder {
    formats: HashMap<u16, (EventFormat, Typed)>,
    common_type: Field,
    common_flags: Field,
    common_preempt_count: Field,
    common_pid: Field,
    /// What `const char *` fields point at (Arm's IPI reasons); empty unless given.
    kernel_strings: KernelStrings,
}

impl Decoder {
    /// Reads the format files of `events` ("system:name") under `events_dir` (an instance's
    /// or the top `events/`). Events whose format cannot be read are skipped.
    pub fn load(events_dir: &Path, events: &[String]) -> anyhow::Result<Decoder> {
        let mut formats = Vec::new();
        for e in events {
            let Some((system, name)) = e.split_once(':') else {
                continue;
            };
            let dirs: Vec<std::path::PathBuf> = if name == "*" {
                std::fs::read_dir(events_dir.join(system))
                    .map(|rd| {
                        rd.flatten()
                            .map(|d| d.path())
                            .filter(|p| p.join("format").exists())
                            .collect()
                    })
                    .unwrap_or_default()
            } else {
                vec![events_dir.join(system).join(name)]
            };
            for d in dirs {
                let path = d.join("format");
                let text = read_tracefs_file(&path)
                    .with_context(|| format!("reading {}", path.display()))?;
                formats.push(
                    EventFormat::parse(system, &text)
                        .with_context(|| format!("parsing {}", path.display()))?,
                );
            }
        }
        Decoder::new(formats)
    }

    pub fn new(formats: Vec<EventFormat>) -> anyhow::Result<Decoder> {
        let first = formats.first().ok_or_else(|| anyhow!("no event formats"))?;
        let common = |n: &str| {
            first
                .field(n)
                .cloned()
                .ok_or_else(|| anyhow!("format of {} lacks {n}", first.name))
        };
        Ok(Decoder {
            common_type: common("common_type")?,
            common_flags: common("common_flags")?,
            common_preempt_count: common("common_preempt_count")?,
            common_pid: common("common_pid")?,
            kernel_strings: KernelStrings::default(),
            formats: formats
                .into_iter()
                .map(|f| {
                    let t = typed_of(&f.system, &f.name);
                    (f.id, (f, t))
                })
                .collect(),
        })
    }

    /// Names the strings pointer fields point at (tracefs' printk_formats).
    pub fn with_kernel_strings(mut self, strings: KernelStrings) -> Decoder {
        self.kernel_strings = strings;
        self
    }

    /// The format of an event id.
    pub fn format(&self, id: u16) -> Option<&EventFormat> {
        self.formats.get(&id).map(|(f, _)| f)
    }

    /// Decodes one raw event's data. `None` when its id is not one of the loaded formats or
    /// the data is shorter than the format says (counted by the caller).
    pub fn decode(&self, ts_ns: u64, cpu: u32, data: &[u8]) -> Option<Event> {
        let id = self.common_type.uint(data)? as u16;
        let (fmt, typed) = self.formats.get(&id)?;
        let kind = decode_kind(fmt, *typed, data, &self.kernel_strings)
            .or_else(|| Some(other_kind(fmt, data)))?;
        Some(Event {
            ts_ns,
            cpu,
            pid: self.common_pid.int(data)? as i32,
            flags: self.common_flags.uint(data)? as u8,
            preempt_count: self.common_preempt_count.uint(data)? as u8,
            kind,
        })
    }
}

fn other_kind(fmt: &EventFormat, data: &[u8]) -> EventKind {
    EventKind::Other {
        system: fmt.system.clone(),
        name: fmt.name.clone(),
        fields: fmt
            .fields
            .iter()
            .filter(|f| !f.name.starts_with("common_"))
            .map(|f| (f.name.clone(), f.display(data)))
            .collect(),
    }
}

/// The typed variant, or `None` when a field it needs is missing (then `Other`).
fn decode_kind(
    fmt: &EventFormat,
    typed: Typed,
    d: &[u8],
    strings: &KernelStrings,
) -> Option<EventKind> {
    let r = RecordFields { fmt, d };
    match typed {
        Typed::HrtimerStart
        | Typed::HrtimerExpireEntry
        | Typed::HrtimerExpireExit
        | Typed::HrtimerCancel => decode_timer(&r, typed),
        Typed::SchedWaking | Typed::SchedWakeup | Typed::SchedSwitch => decode_sched(&r, typed),
        Typed::IrqHandlerEntry
        | Typed::IrqHandlerExit
        | Typed::SoftirqEntry
        | Typed::SoftirqExit
        | Typed::SoftirqRaise
        | Typed::VectorEntry
        | Typed::VectorExit => decode_irq(&r, typed),
        Typed::PageFault(_) | Typed::IpiSendCpu | Typed::IpiSendCpumask | Typed::RseqUpdate => {
            decode_fault_ipi_rseq(&r, typed)
        }
        // The reason is a pointer to a kernel string (printk_formats says which); the IPI
        // is named `ipi` when the kernel did not list it.
        Typed::ArmIpi(entry) => {
            let reason = r.u("reason").and_then(|addr| strings.get(addr));
            let name = crate::trace::event::arm_ipi_name(reason).to_string();
            let vector = crate::trace::event::ARM_IPI;
            Some(if entry {
                EventKind::VectorEntry { name, vector }
            } else {
                EventKind::VectorExit { name, vector }
            })
        }
        Typed::Other => None,
    }
}

/// One raw event's fields, read by name through its format.
struct RecordFields<'a> {
    fmt: &'a EventFormat,
    d: &'a [u8],
}

impl RecordFields<'_> {
    fn f(&self, n: &str) -> Option<&Field> {
        self.fmt.field(n)
    }
    fn u(&self, n: &str) -> Option<u64> {
        self.f(n)?.uint(self.d)
    }
    fn i(&self, n: &str) -> Option<i64> {
        self.f(n)?.int(self.d)
    }
    fn s(&self, n: &str) -> Option<String> {
        self.f(n)?.text(self.d)
    }
    /// The task of `{prefix}comm`, `{prefix}pid`, `{prefix}prio`.
    fn task(&self, prefix: &str) -> Option<TaskRef> {
        Some(TaskRef {
            comm: self.s(&format!("{prefix}comm"))?,
            pid: self.i(&format!("{prefix}pid"))? as i32,
            prio: self.i(&format!("{prefix}prio"))? as i32,
        })
    }
    /// An x86 vector's name: the event's without `_entry`/`_exit`.
    fn vector_name(&self) -> String {
        self.fmt
            .name
            .trim_end_matches("_entry")
            .trim_end_matches("_exit")
            .to_string()
    }
}

fn decode_timer(r: &RecordFields, typed: Typed) -> Option<EventKind> {
    Some(match typed {
        Typed::HrtimerStart => EventKind::HrtimerStart {
            hrtimer: r.u("hrtimer")?,
            function: r.u("function")?,
            expires_ns: r.i("expires")?,
            softexpires_ns: r.i("softexpires")?,
            mode: r.u("mode")? as u32,
        },
        Typed::HrtimerExpireEntry => EventKind::HrtimerExpireEntry {
            hrtimer: r.u("hrtimer")?,
            now_ns: r.i("now")?,
            function: r.u("function")?,
        },
        Typed::HrtimerExpireExit => EventKind::HrtimerExpireExit {
            hrtimer: r.u("hrtimer")?,
        },
        Typed::HrtimerCancel => EventKind::HrtimerCancel {
            hrtimer: r.u("hrtimer")?,
        },
        _ => return None,
    })
}

fn decode_sched(r: &RecordFields, typed: Typed) -> Option<EventKind> {
    Some(match typed {
        Typed::SchedWaking => EventKind::SchedWaking {
            task: r.task("")?,
            target_cpu: r.i("target_cpu")? as u32,
        },
        Typed::SchedWakeup => EventKind::SchedWakeup {
            task: r.task("")?,
            target_cpu: r.i("target_cpu")? as u32,
        },
        Typed::SchedSwitch => EventKind::SchedSwitch {
            prev: r.task("prev_")?,
            prev_state: r.i("prev_state")?,
            next: r.task("next_")?,
        },
        _ => return None,
    })
}

fn decode_irq(r: &RecordFields, typed: Typed) -> Option<EventKind> {
    Some(match typed {
        Typed::IrqHandlerEntry => EventKind::IrqHandlerEntry {
            irq: r.i("irq")? as i32,
            name: r.s("name")?,
        },
        Typed::IrqHandlerExit => EventKind::IrqHandlerExit {
            irq: r.i("irq")? as i32,
            ret: r.i("ret")? as i32,
        },
        Typed::SoftirqEntry => EventKind::SoftirqEntry {
            vec: r.u("vec")? as u32,
        },
        Typed::SoftirqExit => EventKind::SoftirqExit {
            vec: r.u("vec")? as u32,
        },
        Typed::SoftirqRaise => EventKind::SoftirqRaise {
            vec: r.u("vec")? as u32,
        },
        Typed::VectorEntry => EventKind::VectorEntry {
            name: r.vector_name(),
            vector: r.i("vector")? as i32,
        },
        Typed::VectorExit => EventKind::VectorExit {
            name: r.vector_name(),
            vector: r.i("vector")? as i32,
        },
        _ => return None,
    })
}

fn decode_fault_ipi_rseq(r: &RecordFields, typed: Typed) -> Option<EventKind> {
    Some(match typed {
        Typed::PageFault(user) => EventKind::PageFault {
            user,
            address: r.u("address")?,
            ip: r.u("ip")?,
            error_code: r.u("error_code")?,
        },
        Typed::IpiSendCpu => EventKind::IpiSend {
            targets: vec![r.u("cpu")? as u32],
            callsite: r.u("callsite")?,
            callback: r.u("callback")?,
        },
        Typed::IpiSendCpumask => EventKind::IpiSend {
            targets: bitmap_cpus(r.f("cpumask")?.bytes(r.d)?),
            callsite: r.u("callsite")?,
            callback: r.u("callback")?,
        },
        Typed::RseqUpdate => EventKind::RseqUpdate {
            cpu_id: r.i("cpu_id")? as i32,
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch\nID: 300\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\nprint fmt: \"...\"\n";

    const IRQ: &str = "name: irq_handler_entry\nID: 150\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n\
\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n";

    fn header(id: u16, pid: i32) -> Vec<u8> {
        let mut d = id.to_le_bytes().to_vec();
        d.extend([0x0d, 0x21]);
        d.extend(pid.to_le_bytes());
        d
    }

    #[test]
    fn parses_fields_arrays_and_data_loc() {
        let f = EventFormat::parse("sched", SWITCH).unwrap();
        assert_eq!(f.id, 300);
        let comm = f.field("prev_comm").unwrap();
        assert_eq!(comm.kind, FieldKind::Array { elem_size: 1 });
        assert!(comm.is_text());
        assert_eq!((comm.offset, comm.size), (8, 16));
        let irq = EventFormat::parse("irq", IRQ).unwrap();
        let name = irq.field("name").unwrap();
        assert_eq!(name.kind, FieldKind::DataLoc);
        assert!(name.is_text());
        assert!(irq.field("irq").unwrap().signed);
    }

    #[test]
    fn decodes_by_format_offsets() {
        let dec = Decoder::new(vec![
            EventFormat::parse("sched", SWITCH).unwrap(),
            EventFormat::parse("irq", IRQ).unwrap(),
        ])
        .unwrap();
        let mut d = header(300, 42);
        let mut comm = [0u8; 16];
        comm[..4].copy_from_slice(b"task");
        d.extend(comm);
        d.extend(42i32.to_le_bytes());
        d.extend(120i32.to_le_bytes());
        d.extend(1i64.to_le_bytes());
        let mut next = [0u8; 16];
        next[..9].copy_from_slice(b"swapper/0");
        d.extend(next);
        d.extend(0i32.to_le_bytes());
        d.extend(120i32.to_le_bytes());
        let e = dec.decode(5, 1, &d).unwrap();
        assert_eq!(
            (e.ts_ns, e.cpu, e.pid, e.flags, e.preempt_count),
            (5, 1, 42, 0x0d, 0x21)
        );
        let EventKind::SchedSwitch {
            prev,
            prev_state,
            next,
        } = e.kind
        else {
            panic!("{e:?}")
        };
        assert_eq!(
            (prev.comm.as_str(), prev.pid, prev.prio, prev_state),
            ("task", 42, 120, 1)
        );
        assert_eq!((next.comm.as_str(), next.pid), ("swapper/0", 0));

        let mut d = header(150, 0);
        d.extend((-3i32).to_le_bytes());
        let loc = 16u32 | (6 << 16);
        d.extend(loc.to_le_bytes());
        d.extend(b"eth0\0\0");
        let e = dec.decode(9, 0, &d).unwrap();
        assert_eq!(
            e.kind,
            EventKind::IrqHandlerEntry {
                irq: -3,
                name: "eth0".into()
            }
        );
        assert!(dec.decode(9, 0, &header(999, 0)).is_none());
    }

    #[test]
    fn header_page_layout() {
        let t = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
        let h = HeaderPage::parse(t).unwrap();
        assert_eq!((h.commit_offset, h.commit_size, h.data_offset), (8, 8, 16));
    }

    #[test]
    fn cpumask_bits() {
        assert_eq!(
            bitmap_cpus(&[0b101, 0, 0, 0, 0, 0, 0, 0, 1]),
            vec![0, 2, 64]
        );
    }
}

#[cfg(test)]
mod on_this_machine {
    #[test]
    fn reads_the_whole_header_page() {
        let p = std::path::Path::new("/sys/kernel/tracing/events/header_page");
        if let Ok(t) = super::read_tracefs_file(p) {
            let h = super::HeaderPage::parse(&t).unwrap();
            assert!(h.data_offset >= 12);
        }
    }
}
