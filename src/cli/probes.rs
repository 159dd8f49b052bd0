//! The options of each measuring command: timer, watch, noise, net, wake, gpio and load.

use super::*;
use clap::Args;
use std::path::PathBuf;

/// Options of `latscope timer`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  latscope timer                                  \
# 1 ms, FIFO 95, all CPUs, 10 s\n  latscope timer --method all --cpus 1 -D 30s     \
# every method in turn on CPU 1\n  latscope timer -i 300 -l 100000 -p 80 -a 1      \
# cyclictest-style options\n  latscope timer --export-json run.json --raw samples.csv"
)]
pub struct TimerArgs {
    /// Wake-up method(s): clock-nanosleep, nanosleep, timerfd, posix-timer, busy; a comma
    /// list or `all` runs each in turn.
    #[arg(
        short = 'm',
        long,
        value_name = "LIST",
        default_value = "clock-nanosleep",
        value_parser = crate::choice_list::Offered::list::<crate::probe::timer::Method>(),
        hide_possible_values = true
    )]
    pub method: String,
    /// Period between deadlines (units: ns, us, ms, s). [default: 1ms]
    #[arg(
        long,
        value_name = "DURATION",
        conflicts_with = "interval_us",
        allow_hyphen_values = true
    )]
    pub period: Option<String>,
    /// The period in µs, as cyclictest's -i.
    #[arg(
        short = 'i',
        long = "interval",
        value_name = "US",
        allow_hyphen_values = true
    )]
    pub interval_us: Option<String>,
    /// Latency above which a sample counts as an overrun. [default: one period]
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub deadline: Option<String>,
    /// Stop the run at the first sample above this latency (as cyclictest's -b, with a
    /// unit: `--break-above 500us`). With --trace the trace stops there too and keeps what led to it:
    /// the spike that broke the run is reported with its causes. Exit code 3.
    #[arg(long, value_name = "DURATION")]
    pub break_above: Option<String>,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

/// Options of `latscope watch` (the contract of issue 39: the measuring options of `timer`,
/// then where the intervals go, the endpoint and the alerts).
#[derive(Debug, Args, Clone, Default)]
#[command(
    after_help = "Examples:\n  sudo latscope watch --cpus 1 --interval 1ms --listen 127.0.0.1:9464\n  \
sudo latscope watch --config /etc/latscope/watch.toml\n  \
latscope watch --cpus 1 --rotate 1h --fail-above 200us --on-fail /usr/bin/logger -t latscope\n\n\
Memory stays bounded whatever the duration: each interval keeps a histogram and per-second \
maxima, never the samples (--raw and --worst-case are refused). SIGINT/SIGTERM write the \
last interval whole and restore every knob; after a restart the interval's file goes on, \
with the span not measured recorded as a gap."
)]
pub struct WatchArgs {
    /// Wake-up method: clock-nanosleep, nanosleep, timerfd, posix-timer, busy (one).
    /// [default: clock-nanosleep]
    #[arg(short = 'm', long, value_name = "METHOD")]
    pub method: Option<String>,
    /// Period between deadlines (units: ns, us, ms, s). [default: 1ms]
    #[arg(long, value_name = "DURATION", conflicts_with = "interval")]
    pub period: Option<String>,
    /// The period (`1ms`; a bare number is µs, as cyclictest's -i). [default: 1ms]
    #[arg(short = 'i', long, value_name = "DURATION")]
    pub interval: Option<String>,
    /// Latency above which a sample counts as an overrun. [default: one period]
    #[arg(long, value_name = "DURATION")]
    pub deadline: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
    /// Where the interval files go. [default: /var/lib/latscope/watch as root, else
    /// ./latscope-watch]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// One file per interval this long, aligned to UTC midnight: 1d, 1h, 10m, 2s... (at
    /// least 1s, dividing a day evenly). [default: 1d]
    #[arg(long, value_name = "DURATION")]
    pub rotate: Option<String>,
    /// Serve OpenMetrics at http://ADDR/metrics (e.g. 127.0.0.1:9464; off unless given).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// An interval whose maximum exceeds this is logged on stderr, counted in
    /// latscope_fail_above_intervals_total and runs --on-fail.
    #[arg(long = "fail-above", value_name = "DURATION")]
    pub fail_above: Option<String>,
    /// Run this command (no shell) when an interval fails --fail-above, with
    /// LATSCOPE_INTERVAL_START, LATSCOPE_MAX_NS, LATSCOPE_LIMIT_NS, LATSCOPE_CPU and
    /// LATSCOPE_FILE in its environment. Takes the rest of the command line: put it last.
    #[arg(long = "on-fail", value_name = "CMD", num_args = 1.., allow_hyphen_values = true)]
    pub on_fail: Vec<String>,
    /// Kill --on-fail's command after this long; at exit the watch waits this long at
    /// most for the hooks still running. [default: 10s]
    #[arg(long = "on-fail-timeout", value_name = "DURATION")]
    pub on_fail_timeout: Option<String>,
    /// Export doctor's readiness verdict (read-only checks) as latscope_readiness_info.
    #[arg(long)]
    pub readiness: bool,
    /// Read these settings from a TOML file by their long option names (e.g.
    /// /etc/latscope/watch.toml); the command line wins.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Options of `latscope noise`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  latscope noise                          \
# FIFO 95, every CPU but the first, 10 s\n  latscope noise --cpus 1 -D 60s          \
# as oslat --cpu-list 1 --duration 60 --rtprio 95\n  latscope noise --threshold 5us --export-json noise.json\n\n\
A spinning real-time thread is stopped by RT throttling (sched_rt_runtime_us) for the \
rest of every period: with 950000/1000000 that is a ~50 ms gap each second. It is real \
and latscope warns about it; use --policy other to measure without it.")]
pub struct NoiseArgs {
    /// Gaps at or below this (after subtracting the loop's own cost) are not noise
    /// (units: ns, us, ms).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "1us",
        allow_hyphen_values = true
    )]
    pub threshold: String,
    /// Gaps longer than this count as overruns.
    #[arg(long, value_name = "DURATION", default_value = "100us")]
    pub deadline: String,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

/// Options of `latscope net`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  latscope net                                    \
# 64 B every 1 ms through an in-process reflector on 127.0.0.1\n  \
latscope net --flood --size 64,4000,8192 -D 5s   # like ping -f, three sizes in turn\n  \
latscope net --serve 0.0.0.0:9750               # reflector only (on the other machine)\n  \
latscope net --target 192.0.2.7:9750            # measure through that reflector\n\n\
The split uses SO_TIMESTAMPNS kernel receive stamps (CLOCK_REALTIME): kernel_to_user = \
realtime read right after recvmsg - kernel stamp; network = round_trip - kernel_to_user \
(it includes both kernels' stacks and the reflector)."
)]
pub struct NetArgs {
    /// UDP payload sizes in bytes (24-65507, header included); each size is a scenario.
    #[arg(long, value_name = "LIST", default_value = "64")]
    pub size: String,
    /// Time between sends. [default: 1ms]
    #[arg(short = 'i', long, value_name = "DURATION", conflicts_with = "flood")]
    pub interval: Option<String>,
    /// Send the next packet as soon as the reply arrives (like ping -f).
    #[arg(long)]
    pub flood: bool,
    /// No reply within this counts the packet lost. [default: 100ms or ten intervals,
    /// whichever is longer]
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Round trips longer than this count as overruns. [default: the interval; 1ms with
    /// --flood]
    #[arg(long, value_name = "DURATION")]
    pub deadline: Option<String>,
    /// Measure through an external reflector (`latscope net --serve` elsewhere) instead of
    /// an in-process one on 127.0.0.1.
    #[arg(long, value_name = "ADDR:PORT", conflicts_with = "serve")]
    pub target: Option<String>,
    /// Only reflect, on ADDR:PORT (port 0 picks one; the address is printed on stderr),
    /// until Ctrl-C or --duration. [default address: 127.0.0.1:9750]
    #[arg(long, value_name = "ADDR:PORT", num_args = 0..=1, default_missing_value = "127.0.0.1:9750")]
    pub serve: Option<String>,
    /// CPU of the in-process reflector thread. [default: another CPU than the sender's when
    /// there is one]
    #[arg(long, value_name = "CPU")]
    pub reflector_cpu: Option<usize>,
    /// Not available for net (it has no kernel-side split); accepted only to say so.
    #[arg(long, hide = true)]
    pub trace: bool,
    #[command(flatten)]
    pub run: RunArgs,
}

/// Options of `latscope wake`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  latscope wake                                         \
# eventfd, both threads on the last CPU, FIFO 95, 10 s\n  latscope wake --mechanism all -D 5s                   \
# every mechanism in turn\n  latscope wake --policy rr -p 1 --competitors 0,1,2,4,8,16,32   \
# the study's sweep\n  latscope wake --waker-cpu 0 --wakee-cpu 1 --raw iterations.csv\n\n\
Both threads run on one CPU unless told otherwise (the study's writer and reader shared \
one CPU). JSON: per scenario a `response` series (t1 − t0) with extra.merged, \
extra.first_response_ns, extra.stale_wakeups, and a `call` series (the waker's call cost)."
)]
pub struct WakeArgs {
    /// Wake-up mechanism(s): eventfd, pipe, futex, condvar, unix, signal, mqueue; a
    /// comma list or `all` runs each in turn.
    #[arg(
        short = 'm',
        long,
        value_name = "LIST",
        default_value = "eventfd",
        value_parser = crate::choice_list::Offered::list::<crate::probe::wake::mechanism::Mechanism>(),
        hide_possible_values = true
    )]
    pub mechanism: String,
    /// Time between wake-ups, on an absolute schedule.
    #[arg(short = 'i', long, value_name = "DURATION", default_value = "1ms")]
    pub interval: String,
    /// CPU of the waking thread. [default: the wakee's CPU]
    #[arg(long, value_name = "CPU")]
    pub waker_cpu: Option<usize>,
    /// CPU of the woken thread (and of the competitors). [default: the last online CPU]
    #[arg(long, value_name = "CPU")]
    pub wakee_cpu: Option<usize>,
    /// Competing SCHED_OTHER threads looping nanosleep(1 µs) on the wakee's CPU; a comma
    /// list sweeps them, one scenario per value (the study: 0,1,2,4,8,16,32).
    #[arg(
        long,
        value_name = "N[,N...]",
        default_value = "0",
        allow_hyphen_values = true
    )]
    pub competitors: String,
    /// Response above which a sample counts as an overrun. [default: one interval]
    #[arg(long, value_name = "DURATION")]
    pub deadline: Option<String>,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

/// Options of `latscope load`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  latscope load --list\n  latscope load cpu:50% -D 5s\n  \
latscope load mem-churn:100%,size=64M,cpus=0 switch:cpus=1 -D 10s\n  \
latscope load serial:115200 -D 5s\n  \
latscope load 'exec:\"stress-ng --cpu 1\"' -D 5s"
)]
pub struct LoadArgs {
    /// Load specs, KIND[:FIELD,...] (see --list).
    #[arg(value_name = "SPEC", required_unless_present = "list")]
    pub specs: Vec<String>,
    /// How long the loads run (`10s`, `5m`).
    #[arg(short = 'D', long, value_name = "DURATION", default_value = "10s")]
    pub duration: String,
    /// Document every load kind, its fields and its unit, and exit.
    #[arg(long)]
    pub list: bool,
    /// Print the results as JSON (a list of load results) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Options of `latscope gpio`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  latscope gpio --list                                  \
# chips, lines, names, users\n  latscope gpio --in GPIO17 --out GPIO27 -D 60s         \
# loopback: a jumper from GPIO27 to GPIO17\n  latscope gpio --in gpiochip0:17 --out gpiochip0:27   \
# respond to a function generator on 17, pulse 27 for a scope (--mode respond)\n  \
latscope gpio --in sim-in --drive sim                  # the lab: gpio-sim, no wire (simulated)\n\n\
Loopback stages: drive_to_irq = the event's kernel stamp (hard IRQ) - the clock before the \
set-values ioctl; irq_to_user = the clock after read() - the stamp; total. Respond: \
irq_to_user and user_to_output (the clock after the answer's ioctl - after read()). \
missed_edges counts the kernel event buffer's drops from the events' seqno. Exit code 8: this machine has no GPIO chip (no /dev/gpiochip*)."
)]
pub struct GpioArgs {
    /// List every GPIO chip and line (name, direction, who uses it) and exit.
    #[arg(long)]
    pub list: bool,
    /// The input line: CHIP:LINE (gpiochip0:17, 0:17, gpiochip0:sim-in) or a line name (GPIO17).
    #[arg(long = "in", value_name = "LINE")]
    pub input: Option<String>,
    /// The output line (loopback: wired to --in; respond: the answer, optional).
    #[arg(long = "out", value_name = "LINE")]
    pub output: Option<String>,
    /// loopback (the default when --out or --drive sim is given) or respond (the default
    /// with --in alone).
    #[arg(long, value_enum)]
    pub mode: Option<crate::probe::gpio::Mode>,
    /// How loopback drives --in: wire (set --out) or sim (gpio-sim's pull file; simulated).
    #[arg(long, value_enum, default_value = "wire")]
    pub drive: crate::probe::gpio::DriveKind,
    /// Loopback: time between driven edges (units: ns, us, ms, s). Respond: the expected
    /// spacing of the outside edges (sizes the per-second series).
    #[arg(long, value_name = "DURATION", default_value = "1ms")]
    pub period: String,
    /// Which edges raise events (both: respond mode's output follows the input's level).
    #[arg(long, value_enum, default_value = "rising")]
    pub edge: crate::probe::gpio::Edge,
    /// The input's bias.
    #[arg(long, value_enum, default_value = "as-is")]
    pub bias: crate::probe::gpio::Bias,
    /// Debounce on the input, in whole µs (none unless asked).
    #[arg(long, value_name = "DURATION")]
    pub debounce: Option<String>,
    /// The kernel's event buffer for the input, in events (1-4096). [default: the kernel's, 16]
    #[arg(long, value_name = "N")]
    pub event_buffer: Option<u32>,
    /// Run the line's IRQ thread at SCHED_FIFO N (1-99) for the run; restored after it.
    #[arg(long, value_name = "N")]
    pub irq_priority: Option<i32>,
    /// What stamps the events: monotonic (the kernel's hard-IRQ clock) or hte (Tegra's
    /// hardware timestamp engine, where the kernel has one).
    #[arg(long, value_enum, default_value = "monotonic")]
    pub event_clock: crate::probe::gpio::EventClock,
    /// Samples above this count as overruns.
    #[arg(long, value_name = "DURATION", default_value = "1ms")]
    pub deadline: String,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub run: RunArgs,
}
