//! Load generators: what `--load SPEC` and `latscope load` run beside a measurement.
//! This module parses specs (`cpu:50%`, `mem-churn:100%,size=64M,cpus=0`,
//! `exec:"stress-ng --cpu 1"`), documents every kind, and defines the Load and Worker
//! traits each generator file implements; `engine` runs them and measures what they
//! achieved.

mod active;
pub mod cpu;
pub mod engine;
pub mod exec;
pub mod fork;
pub mod io;
pub mod mem_access;
pub mod mem_churn;
pub mod net;
pub mod proc_stat;
pub mod prot_fault;
pub mod serial;
pub mod sleepers;
mod socket_pairs;
pub mod switch;
pub mod syscall;

pub use engine::{start, RunningLoads};

use crate::error::UserError;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Length of one duty-cycle slice: a load at `50%` works 5 ms of CPU time, then sleeps
/// to the end of its 10 ms slice.
pub const DUTY_SLICE_NS: u64 = 10_000_000;

/// The kinds of load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadKind {
    Cpu,
    MemChurn,
    ProtFault,
    MemAccess,
    Sleepers,
    Switch,
    Syscall,
    Io,
    Net,
    Fork,
    Serial,
    Exec,
}

/// Which fields a kind accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Duty,
    Count,
    Size,
    Cpus,
    Dir,
    /// `serial`'s baud rate (`N` or `baud=N`).
    Baud,
    /// `serial`'s terminal device (`dev=PATH`).
    Dev,
    /// A `key=value` no kind knows.
    Unknown,
}

/// What `latscope load --list` prints about one kind.
pub struct KindDoc {
    pub kind: LoadKind,
    pub name: &'static str,
    pub what: &'static str,
    /// The meaning of the count field (`N` or `n=N`).
    pub count_means: &'static str,
    pub default_size: &'static str,
    pub unit: &'static str,
    fields: &'static [Field],
}

const THREADED: &[Field] = &[Field::Duty, Field::Count, Field::Cpus];
const SIZED: &[Field] = &[Field::Duty, Field::Count, Field::Size, Field::Cpus];

/// Every kind, in `--list` order.
pub const KINDS: &[KindDoc] = &[
    KindDoc {
        kind: LoadKind::Cpu,
        name: "cpu",
        what: "integer arithmetic loop",
        count_means: "workers (default: one per CPU)",
        default_size: "",
        unit: "Mops/s",
        fields: THREADED,
    },
    KindDoc {
        kind: LoadKind::MemChurn,
        name: "mem-churn",
        what: "mmap a region, write every page (one minor fault each), munmap: page-fault and allocator pressure",
        count_means: "workers (default: one per CPU)",
        default_size: "64M",
        unit: "faults/s",
        fields: SIZED,
    },
    KindDoc {
        kind: LoadKind::ProtFault,
        name: "prot-fault",
        what: "mmap PROT_NONE, touch every page, the SIGSEGV handler makes it writable, munmap: fault-handling pressure",
        count_means: "workers (default: one per CPU)",
        default_size: "16M",
        unit: "faults/s",
        fields: SIZED,
    },
    KindDoc {
        kind: LoadKind::MemAccess,
        name: "mem-access",
        what: "volatile stores and a streaming read over a buffer larger than the last-level cache: memory-bus and cache pressure",
        count_means: "workers (default: one per CPU)",
        default_size: "2 x last-level cache, at least 64M",
        unit: "MB/s",
        fields: SIZED,
    },
    KindDoc {
        kind: LoadKind::Sleepers,
        name: "sleepers",
        what: "N threads each looping nanosleep(1 µs): scheduler and timer pressure (no duty cycle)",
        count_means: "threads (default 16), spread over the CPUs",
        default_size: "",
        unit: "wakeups/s",
        fields: &[Field::Count, Field::Cpus],
    },
    KindDoc {
        kind: LoadKind::Switch,
        name: "switch",
        what: "thread pairs on one CPU ping-ponging a byte over a socket pair: context-switch pressure",
        count_means: "pairs (default: one per CPU)",
        default_size: "",
        unit: "switches/s",
        fields: THREADED,
    },
    KindDoc {
        kind: LoadKind::Syscall,
        name: "syscall",
        what: "a storm of cheap system calls (getppid) and signals sent to itself (SIGURG, counted by a handler)",
        count_means: "workers (default: one per CPU)",
        default_size: "",
        unit: "syscalls/s",
        fields: THREADED,
    },
    KindDoc {
        kind: LoadKind::Io,
        name: "io",
        what: "write + fsync of a file in a temporary directory (removed afterwards), cache dropped, then sequential reads: block I/O and interrupts",
        count_means: "workers (default: one per CPU), one file each",
        default_size: "32M (file size)",
        unit: "MB/s",
        fields: &[Field::Duty, Field::Count, Field::Size, Field::Cpus, Field::Dir],
    },
    KindDoc {
        kind: LoadKind::Net,
        name: "net",
        what: "a TCP stream over loopback between a sender and a receiver thread on one CPU: softirq and network-stack pressure",
        count_means: "sender/receiver pairs (default: one per CPU)",
        default_size: "",
        unit: "MB/s",
        fields: THREADED,
    },
    KindDoc {
        kind: LoadKind::Fork,
        name: "fork",
        what: "fork a child that exits at once, and reap it: process creation and exit",
        count_means: "workers (default: one per CPU)",
        default_size: "",
        unit: "forks/s",
        fields: THREADED,
    },
    KindDoc {
        kind: LoadKind::Serial,
        name: "serial",
        what: "bytes written to a terminal at a baud rate (8N1: BAUD/10 bytes/s, paced in software), raw mode: a pseudo-terminal drained by a second thread, or a real tty given by dev= (its settings put back afterwards): serial-line load",
        count_means: "",
        default_size: "",
        unit: "B/s",
        fields: &[Field::Baud, Field::Dev, Field::Cpus],
    },
    KindDoc {
        kind: LoadKind::Exec,
        name: "exec",
        what: "any external command, run from argv without a shell in its own process group on the load CPUs; dies with latscope, killed (group) when the scenario ends. CPU share sums the group's processes",
        count_means: "",
        default_size: "",
        unit: "-",
        fields: &[Field::Cpus],
    },
];

impl LoadKind {
    pub fn doc(self) -> &'static KindDoc {
        KINDS
            .iter()
            .find(|d| d.kind == self)
            .expect("every kind is documented")
    }

    pub fn name(self) -> &'static str {
        self.doc().name
    }
}

/// One parsed `--load` spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadSpec {
    /// The spec as typed.
    pub text: String,
    pub kind: LoadKind,
    /// Share of each 10 ms slice spent working, 1-100.
    pub duty_percent: u32,
    /// Workers, threads or pairs (see the kind's doc); None = the kind's default.
    pub count: Option<usize>,
    /// Region, buffer or file size in bytes; None = the kind's default.
    pub size_bytes: Option<u64>,
    /// CPUs to run on; None = the CPUs not being measured.
    pub cpus: Option<Vec<usize>>,
    /// Directory for the io load's files; None = the system temporary directory.
    pub dir: Option<PathBuf>,
    /// The command of an exec load (argv, no shell).
    pub command: Vec<String>,
    /// A serial load's baud rate; None = its default (115200).
    pub baud: Option<u32>,
    /// A serial load's terminal device; None = a new pseudo-terminal.
    pub device: Option<PathBuf>,
}

/// Most workers one load may start.
pub const MAX_COUNT: usize = 1024;
/// Largest size field accepted (per worker).
pub const MAX_SIZE_BYTES: u64 = 64 << 30;

fn bad(spec: &str, reason: impl Into<String>) -> UserError {
    UserError::InvalidValue {
        option: "--load".into(),
        value: spec.into(),
        reason: reason.into(),
    }
}

fn allowed_fields(doc: &KindDoc) -> String {
    let mut parts = Vec::new();
    for f in doc.fields {
        parts.push(match f {
            Field::Duty => "N% (duty, 1-100%)".to_string(),
            Field::Count => format!("N or n=N ({})", doc.count_means),
            Field::Size => format!("size=SIZE (default {})", doc.default_size),
            Field::Cpus => "cpus=LIST (last; default: the CPUs not measured)".to_string(),
            Field::Dir => "dir=PATH".to_string(),
            Field::Baud => format!(
                "BAUD or baud=BAUD (default {}; one of {})",
                serial::DEFAULT_BAUD,
                serial::allowed_bauds()
            ),
            Field::Dev => {
                "dev=PATH (a tty such as /dev/ttyS0; default: a new pseudo-terminal)".to_string()
            }
            Field::Unknown => String::new(),
        });
    }
    parts.join(", ")
}

fn known_kinds() -> String {
    KINDS.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
}

/// Parses every `--load` value; the error names the spec, the bad field and what is
/// allowed.
pub fn parse_specs(texts: &[String]) -> Result<Vec<LoadSpec>, UserError> {
    texts.iter().map(|t| parse_spec(t)).collect()
}

/// Parses one spec: `KIND[:FIELD,FIELD,...]`, or `exec:"CMD ARGS"[,cpus=LIST]`.
pub fn parse_spec(text: &str) -> Result<LoadSpec, UserError> {
    let trimmed = text.trim();
    let (name, rest) = match trimmed.split_once(':') {
        Some((n, r)) => (n.trim(), r.trim()),
        None => (trimmed, ""),
    };
    let doc = KINDS.iter().find(|d| d.name == name).ok_or_else(|| {
        bad(
            text,
            format!(
                "unknown load kind '{name}'{}; known: {}; see `latscope load --list`",
                crate::choice_list::did_you_mean(name, KINDS.iter().map(|d| d.name)),
                known_kinds()
            ),
        )
    })?;
    let mut spec = LoadSpec {
        text: trimmed.to_string(),
        kind: doc.kind,
        duty_percent: 100,
        count: None,
        size_bytes: None,
        cpus: None,
        dir: None,
        command: Vec::new(),
        baud: None,
        device: None,
    };
    let fields_text = if doc.kind == LoadKind::Exec {
        let (command, fields) = split_exec(text, rest)?;
        spec.command = command;
        fields
    } else {
        rest.to_string()
    };
    let tokens: Vec<&str> = fields_text
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        i += 1;
        let (field, value) = match classify(token) {
            // serial's bare number is its baud rate.
            (Field::Count, value) if doc.kind == LoadKind::Serial => (Field::Baud, value),
            other => other,
        };
        if !doc.fields.contains(&field) {
            return Err(bad(
                text,
                format!(
                    "field '{token}' does not apply to {}; allowed: {}",
                    doc.name,
                    allowed_fields(doc)
                ),
            ));
        }
        if field == Field::Cpus {
            // A CPU list has commas of its own: the plain numbers and ranges after
            // `cpus=` belong to it.
            let mut list = value.to_string();
            while i < tokens.len() && is_cpu_item(tokens[i]) {
                list.push(',');
                list.push_str(tokens[i]);
                i += 1;
            }
            let cpus = crate::units::parse_cpu_list_plain(&list)
                .map_err(|r| bad(text, format!("cpus: {r}")))?;
            spec.cpus = Some(cpus);
        } else {
            set_field(&mut spec, field, token, value, text)?;
        }
    }
    Ok(spec)
}

/// Sets one field but `cpus` (which takes the tokens after it) from its token.
fn set_field(
    spec: &mut LoadSpec,
    field: Field,
    token: &str,
    value: &str,
    text: &str,
) -> Result<(), UserError> {
    match field {
        Field::Duty => spec.duty_percent = duty_of(token, value, text)?,
        Field::Count => spec.count = Some(count_of(token, value, text)?),
        Field::Size => {
            let bytes = crate::units::parse_size_bytes(value)
                .map_err(|r| bad(text, format!("size: {r}")))?;
            if bytes < crate::sys::memory::page_size() as u64 || bytes > MAX_SIZE_BYTES {
                return Err(bad(
                    text,
                    format!("size '{value}' is out of range: allowed 4K to 64G"),
                ));
            }
            spec.size_bytes = Some(bytes);
        }
        Field::Cpus | Field::Unknown => {
            unreachable!("cpus is parsed by parse_spec; no kind lists Unknown")
        }
        Field::Dir => {
            if value.is_empty() {
                return Err(bad(text, "dir= needs a directory path"));
            }
            spec.dir = Some(PathBuf::from(value));
        }
        Field::Baud => spec.baud = Some(baud_of(value, text)?),
        Field::Dev => {
            if value.is_empty() {
                return Err(bad(
                    text,
                    "dev= needs a terminal device, e.g. dev=/dev/ttyS0",
                ));
            }
            spec.device = Some(PathBuf::from(value));
        }
    }
    Ok(())
}

/// `50%`: a duty cycle of 1 to 100 %.
fn duty_of(token: &str, value: &str, text: &str) -> Result<u32, UserError> {
    let number = value.trim_end_matches('%');
    let duty: u32 = number.parse().map_err(|_| {
        bad(
            text,
            format!("duty '{token}' is not a percentage; write e.g. 50%"),
        )
    })?;
    if !(1..=100).contains(&duty) {
        return Err(bad(
            text,
            format!("duty '{token}' is out of range: allowed 1% to 100%"),
        ));
    }
    Ok(duty)
}

/// `16` or `n=16`: a count of 1 to `MAX_COUNT`.
fn count_of(token: &str, value: &str, text: &str) -> Result<usize, UserError> {
    let n: usize = value.parse().map_err(|_| {
        bad(
            text,
            format!("count '{token}' is not a whole number; write e.g. 16 or n=16"),
        )
    })?;
    if n == 0 || n > MAX_COUNT {
        return Err(bad(
            text,
            format!("count '{token}' is out of range: allowed 1 to {MAX_COUNT}"),
        ));
    }
    Ok(n)
}

/// A baud rate a terminal can be set to.
fn baud_of(value: &str, text: &str) -> Result<u32, UserError> {
    value
        .parse()
        .ok()
        .filter(|b| crate::sys::tty::standard_bauds().any(|s| s == *b))
        .ok_or_else(|| {
            bad(
                text,
                format!(
                    "baud rate '{value}' is not one a terminal can be set to; allowed: {}",
                    serial::allowed_bauds()
                ),
            )
        })
}

/// Which field a token sets, and its value.
fn classify(token: &str) -> (Field, &str) {
    if let Some((key, value)) = token.split_once('=') {
        let field = match key.trim() {
            "duty" => Field::Duty,
            "n" | "count" | "threads" | "workers" | "pairs" => Field::Count,
            "size" => Field::Size,
            "cpus" | "cpu" => Field::Cpus,
            "dir" => Field::Dir,
            "baud" => Field::Baud,
            "dev" | "device" => Field::Dev,
            _ => Field::Unknown,
        };
        return (field, value.trim());
    }
    if token.ends_with('%') {
        return (Field::Duty, token);
    }
    (Field::Count, token)
}

fn is_cpu_item(token: &str) -> bool {
    !token.is_empty() && token.chars().all(|c| c.is_ascii_digit() || c == '-')
}

/// Splits `exec:` into argv and the fields after it. Accepts `exec:"CMD ARGS",cpus=1`
/// (quotes kept by the shell with '…') and `exec:CMD ARGS` (quotes removed by the
/// shell); the command is split like a POSIX shell would, without running one.
fn split_exec(text: &str, rest: &str) -> Result<(Vec<String>, String), UserError> {
    let (command_text, fields) = if let Some(inner) = rest.strip_prefix('"') {
        match inner.find('"') {
            Some(end) => (
                inner[..end].to_string(),
                inner[end + 1..].trim_start_matches(',').to_string(),
            ),
            None => return Err(bad(text, "the command's opening quote is never closed")),
        }
    } else if let Some(inner) = rest.strip_prefix('\'') {
        match inner.find('\'') {
            Some(end) => (
                inner[..end].to_string(),
                inner[end + 1..].trim_start_matches(',').to_string(),
            ),
            None => return Err(bad(text, "the command's opening quote is never closed")),
        }
    } else {
        (rest.to_string(), String::new())
    };
    let argv = shlex::split(&command_text)
        .ok_or_else(|| bad(text, "the command has unbalanced quotes"))?;
    if argv.is_empty() {
        return Err(bad(
            text,
            "exec needs a command, e.g. exec:\"stress-ng --cpu 1\"",
        ));
    }
    Ok((argv, fields))
}

/// Extra counters a load reports beside its throughput (summed over its workers).
pub type Counters = BTreeMap<&'static str, u64>;

/// What one step of a worker did.
pub enum Step {
    /// Did this many units of work (the load's throughput unit, before scaling).
    Did(u64),
    /// The worker is done (e.g. its partner closed the connection).
    Finished,
}

/// The state of one worker thread, built on its own pinned thread.
pub trait Worker {
    /// Does one short, bounded piece of work (well under a millisecond, so the duty
    /// cycle and stopping stay accurate).
    fn step(&mut self) -> anyhow::Result<Step>;
    /// Counters to add to the load's result when the worker ends.
    fn counters(&self) -> Counters {
        Counters::new()
    }
}

/// A thread-based load generator: how many workers, and how to build each.
pub trait Load: Send + Sync {
    /// Number of worker threads.
    fn workers(&self) -> usize;
    /// The CPU worker `index` is pinned to.
    fn cpu_of(&self, index: usize) -> usize;
    /// Whether worker `index` follows the duty cycle (the passive half of a pair, and
    /// sleepers, do not).
    fn follows_duty(&self, _index: usize) -> bool {
        true
    }
    /// Builds worker `index` (called on its pinned thread, so memory is local).
    fn worker(&self, index: usize) -> anyhow::Result<Box<dyn Worker>>;
    /// Counted units per reported unit (e.g. 1e6 bytes per MB/s).
    fn units_per_reported(&self) -> f64 {
        1.0
    }
    /// Unblocks workers that wait on their partner (called when stopping).
    fn shutdown(&self) {}
    /// Load-wide counters measured outside the workers (e.g. handled SIGSEGVs).
    fn counters_after(&self) -> Counters {
        Counters::new()
    }
}

/// Builds the thread-based generator of `spec` for `cpus` (not for exec).
pub fn build(spec: &LoadSpec, cpus: &[usize]) -> anyhow::Result<Box<dyn Load>> {
    let per_cpu = spec.count.unwrap_or(cpus.len());
    Ok(match spec.kind {
        LoadKind::Cpu => Box::new(cpu::CpuLoad::new(cpus, per_cpu)),
        LoadKind::MemChurn => {
            Box::new(mem_churn::MemChurnLoad::new(cpus, per_cpu, spec.size_bytes))
        }
        LoadKind::ProtFault => Box::new(prot_fault::ProtFaultLoad::new(
            cpus,
            per_cpu,
            spec.size_bytes,
        )),
        LoadKind::MemAccess => Box::new(mem_access::MemAccessLoad::new(
            cpus,
            per_cpu,
            spec.size_bytes,
        )),
        LoadKind::Sleepers => Box::new(sleepers::SleepersLoad::new(
            cpus,
            spec.count.unwrap_or(sleepers::DEFAULT_THREADS),
        )),
        LoadKind::Switch => Box::new(switch::switch_load(cpus, per_cpu)?),
        LoadKind::Syscall => Box::new(syscall::SyscallLoad::new(cpus, per_cpu)?),
        LoadKind::Io => Box::new(io::IoLoad::new(
            cpus,
            per_cpu,
            spec.size_bytes,
            spec.dir.as_deref(),
        )?),
        LoadKind::Net => Box::new(net::net_load(cpus, per_cpu)?),
        LoadKind::Fork => Box::new(fork::ForkLoad::new(cpus, per_cpu)),
        LoadKind::Serial => Box::new(serial::SerialLoad::new(cpus, spec)?),
        LoadKind::Exec => anyhow::bail!("exec loads run as child processes, not threads"),
    })
}

/// Round-robin placement: worker `index` of a per-CPU load.
pub(crate) fn round_robin(cpus: &[usize], index: usize) -> usize {
    cpus[index % cpus.len()]
}

/// The text of `latscope load --list`.
pub fn list_text() -> String {
    let mut out = String::from(
        "Load kinds (--load KIND[:FIELD,...], repeatable; `latscope load SPEC...` runs them alone)\n\n",
    );
    for d in KINDS {
        out.push_str(&format!("{}  [{}]\n    {}\n", d.name, d.unit, d.what));
        if d.kind == LoadKind::Exec {
            out.push_str("    fields: \"CMD ARGS\" (quoted, split like a shell without running one), cpus=LIST\n");
        } else {
            out.push_str(&format!("    fields: {}\n", allowed_fields(d)));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "Duty cycle: N% works N% of every {} ms slice (counted in CPU time) and sleeps the rest.\n\
Every load runs at SCHED_OTHER, pinned to its CPUs (default: the online CPUs not being\n\
measured; all online CPUs, with a warning, when none is left), and reports its\n\
throughput and the CPU share it used (from /proc), as % of one CPU per CPU given.\n\n\
Examples:\n  cpu:50%\n  mem-churn:100%,size=64M,cpus=0\n  sleepers:16\n  switch:2,cpus=0-1\n  \
io:50%,size=16M,dir=/var/tmp\n  serial:115200\n  serial:9600,dev=/dev/ttyS0\n  exec:\"stress-ng --cpu 1\"\n",
        DUTY_SLICE_NS / 1_000_000
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(t: &str) -> Result<LoadSpec, UserError> {
        parse_spec(t)
    }

    #[test]
    fn duty_size_cpus() {
        let s = one("mem-churn:100%,size=64M,cpus=0").unwrap();
        assert_eq!(s.kind, LoadKind::MemChurn);
        assert_eq!(s.duty_percent, 100);
        assert_eq!(s.size_bytes, Some(64 << 20));
        assert_eq!(s.cpus, Some(vec![0]));
        let s = one("cpu:50%").unwrap();
        assert_eq!((s.kind, s.duty_percent, s.count), (LoadKind::Cpu, 50, None));
        let s = one("cpu").unwrap();
        assert_eq!(s.duty_percent, 100);
    }

    #[test]
    fn counts_and_cpu_lists_with_commas() {
        let s = one("sleepers:16").unwrap();
        assert_eq!(s.count, Some(16));
        let s = one("switch:2,cpus=0,2-3").unwrap();
        assert_eq!(s.count, Some(2));
        assert_eq!(s.cpus, Some(vec![0, 2, 3]));
        let s = one("cpu:cpus=0,1,duty=25%,n=3").unwrap();
        assert_eq!(s.cpus, Some(vec![0, 1]));
        assert_eq!((s.duty_percent, s.count), (25, Some(3)));
    }

    #[test]
    fn exec_commands() {
        let s = one("exec:\"stress-ng --cpu 1\"").unwrap();
        assert_eq!(s.command, vec!["stress-ng", "--cpu", "1"]);
        let s = one("exec:sleep 100").unwrap();
        assert_eq!(s.command, vec!["sleep", "100"]);
        let s = one("exec:\"sh -c 'echo hi there'\",cpus=1").unwrap();
        assert_eq!(s.command, vec!["sh", "-c", "echo hi there"]);
        assert_eq!(s.cpus, Some(vec![1]));
        assert!(one("exec:").is_err());
        assert!(one("exec:\"sleep 1").is_err());
    }

    #[test]
    fn bad_specs_name_the_field_and_the_allowed_ones() {
        let e = one("cpux:50%").unwrap_err().to_string();
        assert!(
            e.contains("unknown load kind 'cpux'") && e.contains("mem-churn"),
            "{e}"
        );
        let e = one("cpu:150%").unwrap_err().to_string();
        assert!(e.contains("150%") && e.contains("1% to 100%"), "{e}");
        let e = one("cpu:size=64M").unwrap_err().to_string();
        assert!(e.contains("'size=64M'") && e.contains("allowed:"), "{e}");
        let e = one("sleepers:50%").unwrap_err().to_string();
        assert!(e.contains("does not apply to sleepers"), "{e}");
        let e = one("mem-churn:size=64Q").unwrap_err().to_string();
        assert!(e.contains("size"), "{e}");
        let e = one("cpu:colour=red").unwrap_err().to_string();
        assert!(e.contains("'colour=red'") && e.contains("allowed:"), "{e}");
        let e = one("cpu:0").unwrap_err().to_string();
        assert!(e.contains("1 to"), "{e}");
        let e = one("cpu:cpus=3-1").unwrap_err().to_string();
        assert!(e.contains("cpus"), "{e}");
        let e = one("cpu:fast").unwrap_err().to_string();
        assert!(e.contains("'fast'"), "{e}");
        assert!(parse_specs(&["cpu:50%".into(), "bogus".into()]).is_err());
    }

    #[test]
    fn serial_baud_and_device() {
        let s = one("serial:9600,dev=/dev/ttyS0,cpus=1").unwrap();
        assert_eq!(s.kind, LoadKind::Serial);
        assert_eq!(s.baud, Some(9600));
        assert_eq!(s.device, Some(PathBuf::from("/dev/ttyS0")));
        assert_eq!(s.cpus, Some(vec![1]));
        let s = one("serial").unwrap();
        assert_eq!((s.baud, s.device), (None, None));
        assert_eq!(one("serial:baud=115200").unwrap().baud, Some(115200));
        let e = one("serial:12345").unwrap_err().to_string();
        assert!(e.contains("'12345'") && e.contains("115200"), "{e}");
        let e = one("serial:50%").unwrap_err().to_string();
        assert!(e.contains("does not apply to serial"), "{e}");
        let e = one("serial:dev=").unwrap_err().to_string();
        assert!(e.contains("dev="), "{e}");
        let e = one("cpu:dev=/dev/ttyS0").unwrap_err().to_string();
        assert!(e.contains("does not apply to cpu"), "{e}");
    }

    #[test]
    fn every_kind_is_listed() {
        let text = list_text();
        for d in KINDS {
            assert!(text.contains(d.name));
            assert!(parse_spec(if d.kind == LoadKind::Exec {
                "exec:true"
            } else {
                d.name
            })
            .is_ok());
        }
    }
}
