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
    /// Re-render a saved run (or a cyclictest --json file) as a table, JSON, CSV,
    /// Markdown, HTML, JUnit or LAVA, and judge it with --fail-above.
    Report(ReportArgs),
    /// Compare runs: align scenarios across files, show each statistic's change and
    /// ratio against the first, and give a verdict per scenario and CPU.
    Compare(CompareArgs),
}

/// Options of `latscope report`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  latscope report run.json                        \
# the table again\n  latscope report run.json --format html -o run.html\n  \
latscope report run.json --fail-above p99=50us,max=100us --export-junit junit.xml\n  \
latscope report cyclictest.json                 # cyclictest --json output works too"
)]
pub struct ReportArgs {
    /// A result file written by --export-json (or by `cyclictest --json`).
    #[arg(value_name = "RUN.json")]
    pub input: PathBuf,
    /// The format to print (or write with -o).
    #[arg(short = 'f', long, value_enum, default_value = "table")]
    pub format: crate::report::Format,
    /// Write the --format output to this file instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub out_file: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Options of `latscope compare`.
#[derive(Debug, Args)]
#[command(
    after_help = "Scenarios are aligned by probe, method, period, loads, CPU and metric (a \
method's parenthesized suffix such as `(cyclictest)` is ignored).\n\n\
Rule syntax: STATS:PERCENT[:ABSOLUTE], e.g. `p99.9,max:10%:5us` (the default): a \
statistic regressed when it is worse than the first run by more than PERCENT and by more \
than ABSOLUTE; improved when better by both. Give --rule several times to judge several \
groups; a scenario regressed when any rule says so.\n\nExamples:\n  latscope compare \
base.json new.json\n  latscope compare base.json new.json --fail-on-regression --rule \
'max:20%:10us'\n  latscope compare latscope.json cyclictest.json --export-html cmp.html"
)]
pub struct CompareArgs {
    /// Two or more result files (latscope --export-json or cyclictest --json); the first
    /// is the baseline.
    #[arg(value_name = "RUN.json", num_args = 2.., required = true)]
    pub inputs: Vec<PathBuf>,
    /// Regression rule(s): STATS:PERCENT[:ABSOLUTE]. [default: p99.9,max:10%:5us]
    #[arg(long, value_name = "RULE")]
    pub rule: Vec<String>,
    /// Exit with code 3 when any scenario regressed.
    #[arg(long)]
    pub fail_on_regression: bool,
    #[command(flatten)]
    pub output: OutputArgs,
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
    /// Write a CSV file (`-` = stdout): one row per scenario × CPU with every statistic.
    #[arg(long = "export-csv", value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Write the table as Markdown (`-` = stdout).
    #[arg(long = "export-markdown", value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Write a self-contained HTML report with plots (`-` = stdout).
    #[arg(long = "export-html", value_name = "FILE")]
    pub export_html: Option<PathBuf>,
    /// Write JUnit XML for CI (`-` = stdout): one test case per scenario × CPU.
    #[arg(long = "export-junit", value_name = "FILE")]
    pub export_junit: Option<PathBuf>,
    /// Write `lava-test-case` lines for LAVA (`-` = stdout).
    #[arg(long = "export-lava", value_name = "FILE")]
    pub export_lava: Option<PathBuf>,
    /// Fail (exit code 3, one FAIL line per breach) when a statistic of any scenario and
    /// CPU exceeds its limit, e.g. `p99=50us,max=100us,overruns=0`. Statistics: min, avg,
    /// stddev, p50, p90, p99, p99.9, p99.99, p99.999, max, overruns, missed.
    #[arg(long = "fail-above", value_name = "STAT=LIMIT,...")]
    pub fail_above: Option<String>,
}
