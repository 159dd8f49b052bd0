//! The option groups every measuring command flattens (run, common, output, exports,
//! trace, remote), and clap's side of the value types typed on the command line.

use crate::compare::multi::Axis;
use crate::output::exports::Format;
use crate::sys::sched::Policy;
use clap::builder::PossibleValue;
use clap::Args;
use std::path::PathBuf;

/// The option groups every measuring command takes (each probe and `suite`), flattened
/// in this order: where and how it measures, then where the results go.
#[derive(Debug, Args, Clone, Default)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// `--host`: run on boards over ssh.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "On other machines (--host, over ssh)")]
pub struct RemoteArgs {
    /// Run this command on USER@BOARD instead of here, over the system's ssh (its config and
    /// keys; no password prompt). latscope is copied to the board's ~/.cache/latscope when
    /// missing, the progress line comes back, the result is fetched into the local
    /// --export-json/--export-*/--raw files (one per board: run.BOARD.json). Ctrl-C here
    /// reaches the board's run as SIGINT; if the connection drops, as SIGHUP: either way it
    /// stops, restores what it changed and keeps the result, fetched over a new connection.
    /// Repeat it (or use commas) to run on several boards at once.
    #[arg(long = "host", value_name = "USER@BOARD", value_delimiter = ',')]
    pub hosts: Vec<String>,
    /// One argument for ssh (repeatable), e.g. `--ssh-option=-p2222` or
    /// `--ssh-option=-oIdentityFile=~/.ssh/board`. The ssh program itself: LATSCOPE_SSH.
    #[arg(long = "ssh-option", value_name = "ARG", allow_hyphen_values = true)]
    pub ssh_options: Vec<String>,
}

/// `--trace`: why was it late (timer, wake, noise).
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Why was it late (--trace, needs root)")]
pub struct TraceArgs {
    /// Record the kernel's own trace events (hrtimer, sched, irq, softirq) in an own tracefs
    /// instance (instances/latscope-PID) while measuring, and join them to the samples by
    /// time. Each timer wake-up is split into irq_latency (deadline -> the hrtimer fired),
    /// wake_to_run (the thread woken -> switched in), to_user (switched in -> the clock read
    /// in user space) and remainder (what the events do not explain); wake responses into
    /// waker->wakeup and wakeup->run; noise gaps are classified as irq, softirq, another
    /// thread, or no guest activity (the hypervisor took the CPU). Every sample above
    /// --trace-threshold is a spike, named by what held the CPU (task, IRQ, softirq, with
    /// how long). The instance is removed at exit, on Ctrl-C, and after a kill by
    /// `latscope restore`.
    #[arg(long)]
    pub trace: bool,
    /// Samples above this are spikes to attribute (units: ns, us, ms). [default: the run's
    /// p99.9]
    #[arg(long, value_name = "DURATION")]
    pub trace_threshold: Option<String>,
    /// Trace ring buffer per traced CPU, with its unit (K, M, G; B for bytes: a bare number
    /// is refused, as the kernel's buffer_size_kb counts KiB). A drain thread on a
    /// CPU not measured empties it while the probe runs; lost events are counted per CPU
    /// and reported, never hidden. [default: 8M]
    #[arg(long, value_name = "SIZE")]
    pub trace_buffer: Option<String>,
}

/// Options shared by every probe.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "How to measure")]
pub struct CommonArgs {
    /// CPUs to measure on: `1`, `0-3,6` or `all` (as cyclictest's -a). [default: all online CPUs]
    #[arg(short = 'a', long = "cpus", value_name = "LIST")]
    pub cpus: Option<String>,
    /// Scheduling policy of the measuring threads. [default: fifo when permitted, else other]
    #[arg(long, value_enum)]
    pub policy: Option<Policy>,
    /// Priority: 1-99 for fifo/rr, 0 for other (as cyclictest's -p). [default: 95 for fifo/rr]
    #[arg(short = 'p', long, allow_negative_numbers = true)]
    pub priority: Option<i32>,
    /// Stop after this many samples per thread (as cyclictest's -l).
    #[arg(
        short = 'l',
        long,
        visible_alias = "loops",
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = sample_count
    )]
    pub samples: Option<u64>,
    /// Stop after this long (`30s`, `5m`; as cyclictest's -D, with a unit). Whichever of
    /// --samples and --duration comes first ends the run. [default: 10s when neither is given]
    #[arg(short = 'D', long, value_name = "DURATION", allow_hyphen_values = true)]
    pub duration: Option<String>,
    /// Time measured and discarded before recording starts.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "1s",
        allow_hyphen_values = true
    )]
    pub warmup: String,
    /// Hold /dev/cpu_dma_latency at this latency during the run, in whole µs (`0` or
    /// `0us` keeps CPUs out of deep idle states, as cyclictest does by default; `20us`
    /// allows the states that wake within 20 µs). [default: leave the system as it is]
    #[arg(
        long = "dma-latency",
        value_name = "DURATION",
        allow_hyphen_values = true
    )]
    pub dma_latency: Option<String>,
    /// The timer slack (PR_SET_TIMERSLACK) of every thread latscope starts for a
    /// scenario (units: ns, us, ms). The kernel delays a SCHED_OTHER
    /// thread's timer wake-ups by up to its slack to batch them (50us unless the process
    /// changed it); RT threads ignore it. The default of 1ns measures the scheduler and
    /// timer alone; `--timer-slack 50us` shows what an application that never sets its
    /// slack sees at SCHED_OTHER. [default: 1ns]
    #[arg(long = "timer-slack", value_name = "DURATION")]
    pub timer_slack: Option<String>,
    /// Write every sample in order to this CSV file (preallocated, for per-iteration listings).
    #[arg(long, value_name = "FILE")]
    pub raw: Option<PathBuf>,
    /// At the end, estimate the worst case beyond the samples per thread (extreme value
    /// theory, with its checks): every sample is kept in order, as for --raw.
    #[arg(long = "worst-case")]
    pub worst_case: bool,
    /// Allow settings that could stall the machine (e.g. busy-waiting at an RT priority on
    /// the only CPU, or with RT throttling off).
    #[arg(long)]
    pub force: bool,
    /// Shield these CPUs for the run without a reboot: an exclusive cpuset, every movable
    /// task and IRQ moved to the other CPUs; everything is restored afterwards (after a
    /// killed run: `latscope restore`). Measures on them unless --cpus says otherwise.
    #[arg(long, value_name = "LIST")]
    pub isolate: Option<String>,
    /// Run a load beside the measurement (repeatable), e.g. `cpu:50%`,
    /// `mem-churn:100%,size=64M`, `sleepers:16`, `serial:115200` (a pseudo-terminal; or
    /// `serial:9600,dev=/dev/ttyS0`), `exec:"stress-ng --cpu 1"`. Loads run at
    /// SCHED_OTHER on the CPUs not measured unless `cpus=` says otherwise; see
    /// `latscope load --list`.
    #[arg(long = "load", value_name = "SPEC")]
    pub loads: Vec<String>,
}

/// Where results go and how they are judged.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Results and exports")]
pub struct OutputArgs {
    /// Write the JSON result here (`-` = stdout): while the run goes, each finished
    /// scenario is appended (a journal `latscope report` reads); at the end one document.
    #[arg(long = "export-json", value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// No progress line and no table on stdout (errors and warnings still go to stderr).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Show latencies in ns instead of µs with two decimals.
    #[arg(long)]
    pub ns: bool,
    #[command(flatten)]
    pub exports: ExportArgs,
    /// While a scenario runs, rewrite the --export-json file this often with what it has
    /// measured so far (marked partial), so a SIGKILL loses at most this much.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub checkpoint: String,
    /// Continue the run saved in --export-json (cut short by Ctrl-C or killed): complete
    /// scenarios are kept and skipped, a cut one is kept as measured and continued for
    /// the samples or time it had left, the rest run.
    #[arg(long, requires = "export_json")]
    pub resume: bool,
}

/// The export files and the verdict's limits: the same for a measuring command and for
/// `report` of a saved run (flattened into both under their own heading).
#[derive(Debug, Args, Clone, Default)]
pub struct ExportArgs {
    /// Write a CSV file (`-` = stdout): one row per scenario × CPU with every statistic.
    #[arg(long = "export-csv", value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the table as Markdown (`-` = stdout).
    #[arg(long = "export-markdown", value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write a self-contained HTML report with plots (`-` = stdout).
    #[arg(long = "export-html", value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write JUnit XML for CI (`-` = stdout): one test case per scenario × CPU.
    #[arg(long = "export-junit", value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write a LAVA test script (`-` = stdout): a test set per scenario, a `lava-test-case`
    /// per CPU and statistic with its measurement, the kernel's preemption model echoed.
    #[arg(long = "export-lava", value_name = "FILE")]
    pub lava: Option<PathBuf>,
    /// Fail (exit code 3, one FAIL line per breach) when a statistic of any scenario and
    /// CPU exceeds its limit, e.g. `p99=50us,max=100us,overruns=0`. Statistics: min, avg,
    /// stddev, p50, p90, p99, p99.9, p99.99, p99.999, max, overruns, missed.
    #[arg(long = "fail-above", value_name = "STAT=LIMIT,...")]
    pub fail_above: Option<String>,
}

/// `--samples`: a whole number of samples; a negative one (which would otherwise reach
/// clap as an unknown option) is named with the range (issue 12, item 15).
fn sample_count(text: &str) -> Result<u64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("not a number of samples: --samples takes 1 to {}", u64::MAX))
}

// clap's side of the value types typed on the command line (`--policy`, `--format`,
// `--by`), so their own modules stay free of clap. Each help is its variant's doc comment
// without the final period, as clap's derive would print it.
impl clap::ValueEnum for Policy {
    fn value_variants<'a>() -> &'a [Self] {
        &[Policy::Other, Policy::Fifo, Policy::Rr]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            Policy::Other => PossibleValue::new("other")
                .help("SCHED_OTHER, the default time-sharing policy (priority 0)"),
            Policy::Fifo => PossibleValue::new("fifo")
                .help("SCHED_FIFO, real-time first-in first-out (priority 1-99)"),
            Policy::Rr => {
                PossibleValue::new("rr").help("SCHED_RR, real-time round-robin (priority 1-99)")
            }
        })
    }
}

impl clap::ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &Format::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()))
    }
}

impl clap::ValueEnum for Axis {
    fn value_variants<'a>() -> &'a [Self] {
        &[Axis::Host, Axis::Kernel, Axis::Date, Axis::File]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            Axis::Host => "The machine (`system.hostname`)",
            Axis::Kernel => "The kernel (`system.kernel_release` and preemption model)",
            Axis::Date => {
                "When the run started (columns oldest first; the HTML report draws a trend chart)"
            }
            Axis::File => "The file (its name)",
        };
        Some(PossibleValue::new(self.name()).help(help))
    }
}
