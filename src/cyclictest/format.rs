//! `latscope cyclictest`'s output in cyclictest 2.4's layouts, so scripts that parse
//! cyclictest read it unchanged: the `T:` lines and the live header, the `-h` histogram
//! dump with its trailer, the `-b` break lines, `--spike` lines and the `--json` file
//! (the `-v` lines are stream.rs'). stdout is cyclictest's alone, so a parser that takes
//! its last line or every line gets cyclictest's; latscope's notes are one stderr line
//! of at most 80 columns (`note_line`).

use crate::render::Reporter;
use crate::result::{Run, ThreadResult};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt::Write as _;
use std::path::PathBuf;

/// What the output formats were asked for (built by `cyclictest::plan`).
#[derive(Debug, Clone, Default)]
pub struct CyclictestOutput {
    pub quiet: bool,
    pub verbose: bool,
    /// `-o RED`: with `-v`, print the largest of every RED samples.
    pub oscope: u64,
    /// `-N`: values in ns instead of µs.
    pub nsecs: bool,
    /// `-h`/`-H N`: the histogram's buckets.
    pub histogram: Option<usize>,
    /// `-H`: the summary column.
    pub histofall: bool,
    /// `--histfile`: the histogram goes there instead of stdout.
    pub histfile: Option<PathBuf>,
    /// `--json FILE`.
    pub json: Option<PathBuf>,
    /// `-F PATH`: a named pipe that hands the `T:` lines to whoever opens it.
    pub fifo: Option<PathBuf>,
    /// `-b`: the break limit (in the output unit).
    pub breaktrace: Option<u64>,
    /// `--tracemark`: with `-b`, the break written to the kernel's trace_marker.
    pub tracemark: bool,
    /// `--spike N` (in the output unit) and how many to list.
    pub spike: Option<(u64, usize)>,
    /// `-M`: a live frame only when a maximum grew.
    pub refresh_on_max: bool,
    /// `-R`: measure clock_gettime's resolution before the run.
    pub resolution_check: bool,
    /// How many of `-A`/`--secaligned` were given (they exclude each other).
    pub alignments: u32,
    /// The priority printed as `P:` for thread 0 (0 for SCHED_OTHER).
    pub priority: i32,
    /// `--priospread`: thread i's `P:` is the priority minus i.
    pub priority_spread: bool,
    /// The policy name cyclictest's live header shows (as asked: batch, idle, ...).
    pub policy_name: String,
    /// Some thread runs SCHED_OTHER: the header says `NAME/other`.
    pub other_shown: bool,
    /// /dev/cpu_dma_latency value held (None: `--laptop`, `--default-system`, or the
    /// device could not be opened).
    pub dma_latency_us: Option<i32>,
    /// The main thread's CPUs: `--mainaffinity`'s, else `-a`'s (as cyclictest).
    pub main_affinity: Option<Vec<usize>>,
    /// `-a LIST`'s CPUs (not under `-S`).
    pub affinity_cpus: Option<Vec<usize>>,
    /// `-v` with `-a LIST`: each thread's CPU, for `Thread N using cpu C.`.
    pub thread_cpus: Option<Vec<usize>>,
    /// Lines for stderr before the run, as cyclictest prints them (`WARN: …`).
    pub notices: Vec<String>,
    /// Lines for stdout before the run (`-v`: `Max CPUs = 2`, …).
    pub preamble: Vec<String>,
    /// What latscope noticed about the command line or does differently from cyclictest
    /// (ignored words, numbers read as atoi reads them): one `# latscope:` stderr line.
    pub notes: Vec<String>,
}

impl CyclictestOutput {
    pub fn unit_ns(&self) -> u64 {
        if self.nsecs {
            1
        } else {
            1000
        }
    }

    /// The `P:` of thread `index`.
    pub fn thread_priority(&self, index: usize) -> i32 {
        if self.priority_spread {
            (self.priority - index as i32).max(0)
        } else {
            self.priority
        }
    }

    /// Whether cyclictest would draw live frames (neither `-q` nor `-v`).
    pub fn frames(&self) -> bool {
        !self.quiet && !self.verbose
    }
}

/// The widest `# latscope:` line (issue 33: every stderr line fits 80 columns).
const NOTE_COLUMNS: usize = 80;

/// The notes as one `# latscope:` line of at most 80 columns (None without notes): as
/// many as fit whole, then `…`.
pub fn note_line(notes: &[String]) -> Option<String> {
    let mut line = String::from("# latscope:");
    for (i, note) in notes.iter().enumerate() {
        let sep = if i == 0 { " " } else { "; " };
        let rest_after = if i + 1 < notes.len() { 3 } else { 0 };
        if line.chars().count() + sep.len() + note.chars().count() + rest_after > NOTE_COLUMNS {
            line.push_str(if i == 0 { " …" } else { "; …" });
            break;
        }
        line.push_str(sep);
        line.push_str(note);
    }
    (!notes.is_empty()).then_some(line)
}

/// cyclictest's live header (without the blank line after it): the policy, `/other`
/// when a thread runs SCHED_OTHER, /proc/loadavg, ten spaces.
pub fn header_line(opts: &CyclictestOutput, loadavg: &str) -> String {
    let slash = if opts.other_shown { "/other" } else { "" };
    format!(
        "policy: {}{slash}: loadavg: {}          ",
        opts.policy_name,
        loadavg.trim_end()
    )
}

/// One measuring thread as cyclictest reports it, in the output unit.
struct ThreadView<'a> {
    result: &'a ThreadResult,
    tid: i64,
    period_us: u64,
    cycles: u64,
    min: u64,
    act: u64,
    avg: f64,
    max: u64,
}

fn threads<'a>(run: &'a Run, opts: &CyclictestOutput) -> Vec<ThreadView<'a>> {
    let unit = opts.unit_ns();
    let Some(scenario) = run.scenarios.first() else {
        return Vec::new();
    };
    scenario
        .threads
        .iter()
        .map(|t| {
            let s = &t.summary;
            let empty = s.samples == 0;
            ThreadView {
                result: t,
                tid: t.extra.tid.unwrap_or(0).into(),
                period_us: t.extra.period_ns.unwrap_or(scenario.params.period_ns) / 1000,
                cycles: s.samples,
                // cyclictest's values before the first cycle.
                min: if empty { 1_000_000 } else { s.min_ns / unit },
                act: t.extra.last_ns.unwrap_or(0) / unit,
                avg: if empty { 0.0 } else { s.mean_ns / unit as f64 },
                max: s.max_ns / unit,
            }
        })
        .collect()
}

/// cyclictest's `T:` line (print_stat).
fn summary_line(t: &ThreadView, index: usize, opts: &CyclictestOutput) -> String {
    let values = [t.cycles, t.min, t.act, t.avg as u64, t.max];
    t_line(index, t.tid, t.period_us, values, opts)
}

/// A `T:` line from its values in the output unit: cycles, min, act, avg, max (the live
/// display's lines too).
pub fn t_line(
    index: usize,
    tid: i64,
    period_us: u64,
    [cycles, min, act, avg, max]: [u64; 5],
    opts: &CyclictestOutput,
) -> String {
    let prio = opts.thread_priority(index);
    if opts.nsecs {
        format!(
            "T:{index:2} ({tid:5}) P:{prio:2} I:{period_us} C:{cycles:7} Min:{min:7} Act:{act:8} Avg:{avg:8} Max:{max:8}"
        )
    } else {
        format!(
            "T:{index:2} ({tid:5}) P:{prio:2} I:{period_us} C:{cycles:7} Min:{min:7} Act:{act:5} Avg:{avg:5} Max:{max:8}"
        )
    }
}

/// The fixed-width histogram of a thread: (counts per bucket, overflows, logged samples).
struct Fixed {
    counts: Vec<u64>,
    overflows: u64,
    overflow_samples: Vec<u64>,
}

fn fixed_of(t: &ThreadResult, buckets: usize) -> Fixed {
    let mut counts = vec![0u64; buckets];
    let h = t.extra.fixed_histogram.as_ref();
    for &[i, c] in h.map_or(&[][..], |h| &h.counts) {
        if let Some(slot) = counts.get_mut(i as usize) {
            *slot = c;
        }
    }
    Fixed {
        counts,
        overflows: h.map_or(0, |h| h.overflows),
        overflow_samples: h.map(|h| h.overflow_samples.clone()).unwrap_or_default(),
    }
}

/// The `-h`/`-H` dump (print_hist) with its trailer and the blank line after it.
pub struct HistogramReporter<'a>(pub &'a CyclictestOutput);

impl Reporter<Run> for HistogramReporter<'_> {
    fn render(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let opts = self.0;
        let buckets = opts.histogram.unwrap_or(0);
        let views = threads(run, opts);
        let fixed: Vec<Fixed> = views.iter().map(|t| fixed_of(t.result, buckets)).collect();
        let many = opts.histofall && views.len() > 1;
        let mut s = String::from("# Histogram\n");
        for bucket in 0..buckets {
            let _ = write!(s, "{bucket:06} ");
            let mut sum = 0u64;
            for (j, f) in fixed.iter().enumerate() {
                if j > 0 {
                    s.push('\t');
                }
                let _ = write!(s, "{:06}", f.counts[bucket]);
                sum += f.counts[bucket];
            }
            if many {
                let _ = write!(s, "\t{sum:06}");
            }
            s.push('\n');
        }
        let mut line = |label: &str, values: Vec<u64>, width: usize, total: Option<u64>| {
            s.push_str(label);
            for v in values {
                let _ = write!(s, " {v:0width$}");
            }
            if let (true, Some(t)) = (many, total) {
                let _ = write!(s, " {t:0width$}");
            }
            s.push('\n');
        };
        let totals: Vec<u64> = fixed.iter().map(|f| f.counts.iter().sum()).collect();
        let all_total = totals.iter().sum();
        line("# Total:", totals, 9, Some(all_total));
        line(
            "# Min Latencies:",
            views.iter().map(|t| t.min).collect(),
            5,
            None,
        );
        line(
            "# Avg Latencies:",
            views.iter().map(|t| t.avg as u64).collect(),
            5,
            None,
        );
        let max_max = views.iter().map(|t| t.max).max().unwrap_or(0);
        line(
            "# Max Latencies:",
            views.iter().map(|t| t.max).collect(),
            5,
            Some(max_max),
        );
        let overflows: Vec<u64> = fixed.iter().map(|f| f.overflows).collect();
        let all_overflows = overflows.iter().sum();
        line("# Histogram Overflows:", overflows, 5, Some(all_overflows));
        s.push_str("# Histogram Overflow at cycle number:\n");
        for (i, f) in fixed.iter().enumerate() {
            let _ = write!(s, "# Thread {i}:");
            for n in &f.overflow_samples {
                let _ = write!(s, " {n:05}");
            }
            let logged = f.overflow_samples.len() as u64;
            if f.overflows > logged {
                let _ = write!(s, " # {:05} others", f.overflows - logged);
            }
            s.push('\n');
        }
        s.push('\n');
        Ok(s.into_bytes())
    }
}

/// A `--spike` sample: when (CLOCK_MONOTONIC ns), which thread, the value in the
/// output unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Spike {
    pub at_ns: u64,
    pub thread: usize,
    pub value: u64,
}

/// The `--spike` samples the run saw: the first `--spike-nodes` in time order, and how
/// many there were.
#[derive(Debug, Clone, Default)]
pub struct Spikes {
    pub listed: Vec<Spike>,
    pub count: u64,
}

/// Everything cyclictest prints on stdout after its run (except a `--histfile`
/// histogram), and nothing else: the `-v` samples were streamed while it ran.
pub struct StdoutReporter<'a> {
    pub opts: &'a CyclictestOutput,
    /// The `--spike` samples.
    pub spikes: &'a Spikes,
    /// /proc/loadavg for the last frame's header.
    pub loadavg: String,
}

impl Reporter<Run> for StdoutReporter<'_> {
    fn render(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let opts = self.opts;
        let views = threads(run, opts);
        let unit = opts.unit_ns();
        let mut s = String::new();
        if opts.frames() {
            // The last frame: exact values, no cursor-up after it.
            let _ = writeln!(s, "{}\n", header_line(opts, &self.loadavg));
            for (i, t) in views.iter().enumerate() {
                let _ = writeln!(s, "{}", summary_line(t, i, opts));
            }
            if opts.refresh_on_max {
                let _ = write!(s, "\x1b[{}B", views.len() + 2);
            }
        }
        if opts.quiet && opts.histogram.is_none() {
            for (i, t) in views.iter().enumerate() {
                let _ = writeln!(s, "{}", summary_line(t, i, opts));
            }
        }
        if opts.spike.is_some() {
            spike_lines(&mut s, self.spikes);
        }
        if opts.histogram.is_some() && opts.histfile.is_none() {
            s.push_str(&String::from_utf8(HistogramReporter(opts).render(run)?)?);
        }
        if opts.breaktrace.is_some() {
            break_lines(&mut s, run, &views, unit);
        }
        Ok(s.into_bytes())
    }
}

/// `# Thread Ids:` and, when `-b` stopped the run, the thread and value that broke it.
fn break_lines(s: &mut String, run: &Run, views: &[ThreadView], unit: u64) {
    s.push_str("# Thread Ids:");
    for t in views {
        let _ = write!(s, " {:05}", t.tid);
    }
    s.push('\n');
    if let Some(broke) = run.scenarios.first().and_then(|sc| sc.broke) {
        // The thread that broke stopped at its first sample above -b: its maximum.
        let on_cpu = || views.iter().filter(|t| t.result.cpu == broke.cpu);
        let tid = on_cpu()
            .find(|t| t.result.summary.max_ns == broke.latency_ns)
            .or_else(|| on_cpu().next())
            .map_or(0, |t| t.tid);
        let _ = writeln!(s, "# Break thread: {tid}");
        let _ = writeln!(s, "# Break value: {}", broke.latency_ns / unit);
    }
}

/// `--spike` lines in time order (trigger_print), then the count.
fn spike_lines(s: &mut String, spikes: &Spikes) {
    if spikes.listed.is_empty() {
        return;
    }
    s.push('\n');
    for spike in &spikes.listed {
        let _ = writeln!(
            s,
            "T:{:2} Spike:{:8}: TS: {:12}",
            spike.thread,
            spike.value,
            spike.at_ns / 1000
        );
    }
    let _ = writeln!(s, "spikes = {}\n", spikes.count);
}

/// `--json FILE` with cyclictest 2.4's keys (rt_write_json and write_stats).
pub struct JsonReporter<'a> {
    pub opts: &'a CyclictestOutput,
    /// cyclictest's command line as it records it (`cyclictest -q -l 1000 …`).
    pub cmdline: String,
}

/// A map written in the order given (cyclictest writes threads and buckets in order).
struct OrderedMap<V>(Vec<(String, V)>);

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[derive(serde::Serialize)]
struct JsonThread {
    histogram: OrderedMap<u64>,
    cycles: u64,
    min: u64,
    max: u64,
    avg: f64,
    cpu: usize,
    node: i64,
}

#[derive(serde::Serialize)]
struct JsonSysinfo {
    sysname: String,
    nodename: String,
    release: String,
    version: String,
    machine: String,
    realtime: u8,
}

#[derive(serde::Serialize)]
struct JsonFile {
    file_version: u32,
    #[serde(rename = "cmdline:")]
    cmdline: String,
    #[serde(rename = "rt_test_version:")]
    rt_test_version: String,
    start_time: String,
    end_time: String,
    return_code: i32,
    sysinfo: JsonSysinfo,
    num_threads: usize,
    resolution_in_ns: u8,
    thread: OrderedMap<JsonThread>,
}

/// The rt-tests version whose JSON this writes.
pub const RT_TESTS_VERSION: &str = "2.40";

impl Reporter<Run> for JsonReporter<'_> {
    fn render(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let opts = self.opts;
        let views = threads(run, opts);
        let buckets = opts.histogram.unwrap_or(0);
        let thread = views
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let fixed = fixed_of(t.result, buckets);
                let histogram = fixed
                    .counts
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| c > 0)
                    .map(|(b, &c)| (b.to_string(), c))
                    .collect();
                let node = numa_node(t.result.cpu);
                (
                    i.to_string(),
                    JsonThread {
                        histogram: OrderedMap(histogram),
                        cycles: t.cycles,
                        min: t.min,
                        max: t.max,
                        avg: (t.avg * 100.0).round() / 100.0,
                        cpu: t.result.cpu,
                        node,
                    },
                )
            })
            .collect();
        let sys = &run.system;
        let file = JsonFile {
            file_version: 1,
            cmdline: self.cmdline.clone(),
            rt_test_version: RT_TESTS_VERSION.into(),
            start_time: rfc2822(&run.started_at),
            end_time: rfc2822(&run.finished_at),
            return_code: 0,
            sysinfo: JsonSysinfo {
                sysname: "Linux".into(),
                nodename: sys.hostname.clone(),
                release: sys.kernel_release.clone(),
                version: sys.kernel_version.clone(),
                machine: std::env::consts::ARCH.into(),
                realtime: u8::from(
                    std::fs::read_to_string("/sys/kernel/realtime").is_ok_and(|s| s.trim() == "1"),
                ),
            },
            num_threads: views.len(),
            resolution_in_ns: u8::from(opts.nsecs),
            thread: OrderedMap(thread),
        };
        let mut bytes = serde_json::to_vec_pretty(&file)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

/// The NUMA node of `cpu` (sysfs `nodeN` link), 0 when the kernel shows none.
fn numa_node(cpu: usize) -> i64 {
    std::fs::read_dir(format!("/sys/devices/system/cpu/cpu{cpu}"))
        .ok()
        .and_then(|dir| {
            dir.flatten().find_map(|e| {
                e.file_name()
                    .to_str()
                    .and_then(|n| n.strip_prefix("node"))
                    .and_then(|n| n.parse().ok())
            })
        })
        .unwrap_or(0)
}

/// An RFC 3339 UTC time (`2026-11-23T20:57:13Z`) as cyclictest's RFC 2822 stamp
/// (`Mon, 23 Nov 2026 20:57:13 +0000`); unchanged when it is not one.
pub fn rfc2822(rfc3339: &str) -> String {
    let parse = || -> Option<String> {
        let (date, time) = rfc3339.trim_end_matches('Z').split_once('T')?;
        let mut parts = date.split('-').map(|p| p.parse::<i64>().ok());
        let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
        if !(1..=12).contains(&m) {
            return None;
        }
        // Days since 1970-01-01 (Howard Hinnant's days_from_civil), for the weekday.
        let yy = if m <= 2 { y - 1 } else { y };
        let era = yy.div_euclid(400);
        let yoe = yy - era * 400;
        let mp = (m + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        let weekday =
            ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
        let month = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ][(m - 1) as usize];
        Some(format!("{weekday}, {d:02} {month} {y} {time} +0000"))
    };
    parse().unwrap_or_else(|| rfc3339.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc2822_names_the_weekday() {
        assert_eq!(
            rfc2822("2026-11-23T20:57:13Z"),
            "Mon, 23 Nov 2026 20:57:13 +0000"
        );
        assert_eq!(
            rfc2822("2000-02-29T00:00:00Z"),
            "Tue, 29 Feb 2000 00:00:00 +0000"
        );
        assert_eq!(rfc2822("garbage"), "garbage");
    }
}
