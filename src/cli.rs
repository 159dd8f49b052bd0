//! The command line, clap derive only: subcommands, the options every probe shares
//! (flattened into each), and help text that teaches. Validation lives in `plan`.

use crate::sys::sched::Policy;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "latscope",
    version,
    about = "How late do my tasks wake up on this machine, under this load, and why?",
    long_about = "latscope measures wake-up latency on Linux honestly (missed periods counted, \
nothing dropped), applies load, reports with tables and plots, compares runs and gives \
CI verdicts.\n\nStart with:  sudo latscope timer\n(1 ms period, SCHED_FIFO 95, every online \
CPU, 10 s, clock_nanosleep — the cyclictest way).",
    after_help = "Exit codes: 0 ok, 1 runtime failure, 2 bad input, 3 a --fail-above limit \
or compare verdict failed, 4 missing permission, 130 interrupted (results up to then saved)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Periodic wake-up latency: how late a task that sleeps until absolute deadlines
    /// wakes up (clock_nanosleep, nanosleep, timerfd, posix-timer, busy).
    Timer(TimerArgs),
    /// Thread wake-up response: how long a thread blocked on eventfd, pipe, futex,
    /// condvar, socket, signal or message queue takes to run after another wakes it.
    Wake(WakeArgs),
}

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
        default_value = "clock-nanosleep"
    )]
    pub method: String,
    /// Period between deadlines (units: ns, us, ms, s). [default: 1ms]
    #[arg(long, value_name = "DURATION", conflicts_with = "interval_us")]
    pub period: Option<String>,
    /// The period in µs, as cyclictest's -i.
    #[arg(short = 'i', long = "interval", value_name = "US")]
    pub interval_us: Option<String>,
    /// Latency above which a sample counts as an overrun. [default: one period]
    #[arg(long, value_name = "DURATION")]
    pub deadline: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub output: OutputArgs,
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
    #[arg(short = 'm', long, value_name = "LIST", default_value = "eventfd")]
    pub mechanism: String,
    /// Time between wake-ups, on an absolute schedule (bare numbers are µs).
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
    #[arg(long, value_name = "N[,N...]", default_value = "0")]
    pub competitors: String,
    /// Response above which a sample counts as an overrun. [default: one interval]
    #[arg(long, value_name = "DURATION")]
    pub deadline: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Options shared by every probe.
#[derive(Debug, Args, Clone, Default)]
pub struct CommonArgs {
    /// CPUs to measure on: `1`, `0-3,6` or `all` (as cyclictest's -a). [default: all online CPUs]
    #[arg(short = 'a', long = "cpus", value_name = "LIST")]
    pub cpus: Option<String>,
    /// Scheduling policy of the measuring threads. [default: fifo when permitted, else other]
    #[arg(long, value_enum)]
    pub policy: Option<Policy>,
    /// Priority: 1-99 for fifo/rr, 0 for other (as cyclictest's -p). [default: 95 for fifo/rr]
    #[arg(short = 'p', long)]
    pub priority: Option<i32>,
    /// Stop after this many samples per thread (as cyclictest's -l).
    #[arg(short = 'l', long, visible_alias = "loops", value_name = "N")]
    pub samples: Option<u64>,
    /// Stop after this long (bare numbers are seconds; as cyclictest's -D). Whichever of
    /// --samples and --duration comes first ends the run. [default: 10s when neither is given]
    #[arg(short = 'D', long, value_name = "DURATION")]
    pub duration: Option<String>,
    /// Time measured and discarded before recording starts.
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub warmup: String,
    /// Hold /dev/cpu_dma_latency at this many µs during the run (0 keeps CPUs out of deep
    /// idle states, as cyclictest does by default). [default: leave the system as it is]
    #[arg(long = "dma-latency", value_name = "US")]
    pub dma_latency: Option<i32>,
    /// Write every sample in order to this CSV file (preallocated, for per-iteration listings).
    #[arg(long, value_name = "FILE")]
    pub raw: Option<PathBuf>,
    /// Allow settings that could stall the machine (e.g. busy-waiting at an RT priority on
    /// the only CPU, or with RT throttling off).
    #[arg(long)]
    pub force: bool,
}

/// Where results go and how they are judged.
#[derive(Debug, Args, Clone, Default)]
pub struct OutputArgs {
    /// Write the JSON result here (`-` = stdout), atomically, after every scenario.
    #[arg(long = "export-json", value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// No progress line and no table on stdout (errors and warnings still go to stderr).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Show latencies in ns instead of µs with two decimals.
    #[arg(long)]
    pub ns: bool,
}
