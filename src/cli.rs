//! The command line, clap derive only: subcommands, the options every probe shares
//! (flattened into each), and help text that teaches. Validation lives in `plan`.
//! Size: one file on purpose: every subcommand's clap options live here and nowhere else
//! (issue 23: "clap stays in cli.rs"), so the file grows with the commands, not its functions.

use crate::compare::multi::Axis;
use crate::output::exports::Format;
use crate::sys::sched::Policy;
use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "latscope",
    version = crate::build_info::VERSION,
    about = "How late do my tasks wake up on this machine, under this load, and why?",
    long_about = "latscope measures wake-up latency on Linux honestly (missed periods counted, \
nothing dropped), applies load, reports with tables and plots, compares runs and gives \
CI verdicts.\n\nStart with:  sudo latscope timer\n(1 ms period, SCHED_FIFO 95, every online \
CPU, 10 s, clock_nanosleep — the cyclictest way).",
    after_help = crate::error::exit_codes_help()
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once; boxing would only add noise
pub enum Command {
    /// Periodic wake-up latency: how late a task that sleeps until absolute deadlines
    /// wakes up (clock_nanosleep, nanosleep, timerfd, posix-timer, busy).
    Timer(TimerArgs),
    /// Run a matrix of scenarios (method × period × load × isolation × policy) from a
    /// study preset or a TOML plan, and print one combined table.
    Suite(SuiteArgs),
    /// Thread wake-up response: how long a thread blocked on eventfd, pipe, futex,
    /// condvar, socket, signal or message queue takes to run after another wakes it.
    Wake(WakeArgs),
    /// UDP round-trip latency (like ping -f) through a reflector, split with kernel
    /// receive timestamps into network+kernel and kernel-to-user wake-up time.
    Net(NetArgs),
    /// OS noise on a busy core (oslat/sysjitter style): a thread per CPU reads the clock
    /// in a tight loop and records every gap the OS steals above --threshold.
    Noise(NoiseArgs),
    /// How fast Linux answers a signal on a GPIO pin: loopback (an output wired to an
    /// input, or gpio-sim) split into drive→irq→user, or respond (answer each edge of an
    /// outside source on an output, for an oscilloscope); lost edges counted exactly.
    Gpio(GpioArgs),
    /// Run load generators alone and report their throughput and CPU share
    /// (`--list` documents every kind).
    Load(LoadArgs),
    /// Re-render a saved run (or a cyclictest --json file) as a table, JSON, CSV,
    /// Markdown, HTML, JUnit or LAVA, and judge it with --fail-above.
    Report(ReportArgs),
    /// Compare runs: align scenarios across files, show each statistic's change and
    /// ratio against the first, and give a verdict per scenario and CPU.
    Compare(CompareArgs),
    /// Undo what a run that was killed left before it could restore the system itself:
    /// its CPU isolation (--isolate: cpusets, task placement, IRQ affinities), tracefs
    /// instance, io load scratch directories and a serial load's terminal settings.
    Restore(RestoreArgs),
    /// A drop-in for cyclictest: takes cyclictest's options with their meanings
    /// (`latscope cyclictest -m -S -p95 -i1000 -h400 -q`) and prints its output formats on
    /// stdout; latscope's own figures go to stderr as `# latscope:` lines.
    Cyclictest(CyclictestArgs),
    /// Monitor latency for days: the timer probe until stopped, a result file per interval
    /// (daily by default, rotated at UTC midnight), alerts per interval, and a
    /// Prometheus/OpenMetrics endpoint (--listen).
    Watch(WatchArgs),
    /// Is this machine ready for real-time work? Checks the kernel, CPUs, memory,
    /// scheduling, clock, permissions and priorities, each with its evidence and fix, and
    /// measures what it can (cpu_dma_latency A/B, interrupts on the CPU, RT throttling).
    Doctor(DoctorArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) for every
    /// subcommand and option, generated from this command line.
    Completions(CompletionsArgs),
    /// Print the man page (roff), or with --dir write one page per subcommand
    /// (latscope.1, latscope-timer.1, ...), generated from this command line.
    Manpage(ManpageArgs),
}

impl Command {
    /// The run options of a measuring command (timer, suite, wake, net, noise).
    pub fn run_args(&self) -> Option<&RunArgs> {
        match self {
            Command::Timer(a) => Some(&a.run),
            Command::Suite(a) => Some(&a.run),
            Command::Wake(a) => Some(&a.run),
            Command::Net(a) => Some(&a.run),
            Command::Noise(a) => Some(&a.run),
            Command::Gpio(a) => Some(&a.run),
            _ => None,
        }
    }
}

/// Options of `latscope doctor`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 ready, 1 warnings, 7 not ready (a FAIL), 2 bad input.\n\n\
As root and without --quick, doctor measures for one to two minutes: it says the most it \
will take before it starts (2 min, and 1 min 50 s more for each --try). Each A/B ends in \
a verdict, better, worse or within noise, from a sign test on its pairs.\n\n\
Examples:\n  sudo latscope doctor                     # checks, then one to two minutes of A/Bs\n  \
latscope doctor --quick                  # read only, under a second\n  \
sudo latscope doctor --cpus 3 --try isolate\n  \
latscope doctor -- timer --cpus 3 --policy other   # judge a planned run\n\n\
Check IDs and the JSON layout: docs/doctor.md."
)]
pub struct DoctorArgs {
    /// CPUs the real-time work will run on (judged, and measured on: the first). [default:
    /// the isolated CPUs, else the last online CPU]
    #[arg(short = 'a', long = "cpus", value_name = "LIST")]
    pub cpus: Option<String>,
    /// The SCHED_FIFO priority the real-time work will run at (1-99).
    #[arg(short = 'p', long, default_value_t = 95, value_parser = clap::value_parser!(i32).range(1..=99))]
    pub priority: i32,
    /// Read only: no measurement (under a second).
    #[arg(long)]
    pub quick: bool,
    /// At most this many alternating pairs of runs per A/B (a pair: 5 s). Each A/B stops
    /// as soon as its sign test decides, or can no longer (6 pairs at least to decide).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub pairs: u32,
    /// Also measure what a suggested runtime fix buys: applied for each "with" run only,
    /// restored after it (and by `latscope restore` after a kill), in alternating pairs
    /// against the machine as it is. Repeatable; `dma-latency` is always measured.
    #[arg(long = "try", value_enum, value_name = "FIX")]
    pub try_fix: Vec<TryFix>,
    /// Print each finding's evidence (the files and values read).
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Write the findings as JSON (`-` = stdout instead of the checklist).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Write the checklist as a self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    pub export_html: Option<PathBuf>,
    /// Read /proc, /sys, /boot and /dev from this tree instead of / (tests).
    #[arg(long, value_name = "DIR", hide = true)]
    pub root: Option<PathBuf>,
    /// A planned run to judge, after `--`: `-- timer --cpus 3 --policy other`.
    #[arg(last = true, value_name = "PLANNED RUN")]
    pub planned: Vec<String>,
}

/// A runtime fix `doctor --try` measures (applied for the measurement only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TryFix {
    /// Hold /dev/cpu_dma_latency at 0.
    DmaLatency,
    /// Shield the CPU (cpuset, IRQs and unbound work moved off), as --isolate.
    Isolate,
    /// Device IRQs delivered on the measured CPUs moved to the others (smp_affinity_list).
    IrqAffinity,
    /// RT throttling off: kernel.sched_rt_runtime_us = -1.
    RtThrottling,
    /// Timer migration off: kernel.timer_migration = 0.
    TimerMigration,
    /// NUMA balancing off: kernel.numa_balancing = 0.
    NumaBalancing,
    /// Transparent huge pages `madvise` (from `always`).
    Thp,
    /// KSM page merging stopped: /sys/kernel/mm/ksm/run = 0.
    Ksm,
    /// vm.swappiness = 10.
    Swappiness,
    /// NMI watchdog off: kernel.nmi_watchdog = 0.
    NmiWatchdog,
    /// The `performance` cpufreq governor on the measured CPUs.
    Governor,
}

/// Options of `latscope completions`.
#[derive(Debug, Args)]
#[command(
    after_help = "Install (the .deb does this for bash, zsh and fish):\n  \
latscope completions bash > ~/.local/share/bash-completion/completions/latscope\n  \
latscope completions zsh > ~/.zfunc/_latscope   # with fpath+=(~/.zfunc) before compinit\n  \
latscope completions fish > ~/.config/fish/completions/latscope.fish"
)]
pub struct CompletionsArgs {
    /// The shell to write the completion script for.
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// Options of `latscope manpage`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  latscope manpage | man -l -\n  \
latscope manpage --dir /usr/local/share/man/man1")]
pub struct ManpageArgs {
    /// Write latscope.1 and one page per subcommand (latscope-timer.1, ...) into this
    /// directory (created if missing) instead of printing the main page.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Options of `latscope cyclictest`: cyclictest's own, read by cyclictest::args.
#[derive(Debug, Args)]
#[command(disable_help_flag = true, after_help = CYCLICTEST_HELP)]
pub struct CyclictestArgs {
    /// cyclictest's options (rt-tests 2.4); `latscope cyclictest --help` lists them.
    #[arg(
        value_name = "CYCLICTEST OPTIONS",
        num_args = 0..,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<String>,
}

/// `latscope cyclictest --help`: cyclictest's options and what latscope does with each.
pub const CYCLICTEST_HELP: &str = "\
latscope cyclictest: cyclictest's options (rt-tests 2.4) with cyclictest's meanings, on
latscope's timer probe, threads set up as cyclictest's (timer slack left as inherited).
The run ends for every thread when the first reaches -l, or at -D, Ctrl-C or SIGTERM
(then the normal summary, exit 0); SIGUSR1 prints the status on stderr, SIGUSR2 writes
it to /dev/shm/cyclictestPID. Output as cyclictest writes it, while it runs: live T:
frames (without -q) and -v samples into a terminal, pipe or file. Words that are not
options are ignored, as cyclictest does; one `# latscope:` stderr line says so (not
with -q).

-a [CPUSET] --affinity     thread N on CPU N, or round-robin over CPUSET (1, 0-3,6, all,
                           !LIST: all but LIST, +LIST: relative to the allowed CPUs)
-A USEC  --aligned=USEC    align thread wake-ups, thread N offset by N x USEC
-b USEC  --breaktrace=USEC stop when a latency exceeds USEC (prints the break lines)
-c CLOCK --clock=CLOCK     0 CLOCK_MONOTONIC (default), 1 CLOCK_REALTIME
         --default-system  leave /dev/cpu_dma_latency alone
-d DIST  --distance=DIST   interval of thread N += N x DIST us (default 500; 0 with -h)
-D TIME  --duration=TIME   run length: seconds, or with m, h, d
-F PATH  --fifo=PATH       a named pipe handing the T: lines to whoever opens it
-h US    --histogram=US    histogram of US 1-us buckets (exact) after the run
-H US    --histofall=US    the same with a summary column
         --histfile=PATH   the histogram into PATH instead of stdout
-i INTV  --interval=INTV   base interval in us (default 1000)
         --json=FILE       cyclictest's JSON file
         --laptop          leave /dev/cpu_dma_latency alone
         --latency=US      /dev/cpu_dma_latency value (default 0)
-l LOOPS --loops=LOOPS     loops; the first thread to reach them ends the run (0: endless)
         --mainaffinity=CPUSET  CPUs of the main thread (default: -a's)
-m       --mlockall        accepted: latscope always locks its memory
-M       --refresh_on_max  a live frame only when a maximum grew
-n       --nanosleep       accepted (older cyclictest): clock_nanosleep is the default
-N       --nsecs           values in ns
-o RED   --oscope=RED      with -v, the largest of every RED samples
-p PRIO  --priority=PRIO   priority (sets SCHED_FIFO, as cyclictest)
         --policy=NAME     other, batch, idle (these three run SCHED_OTHER, as in
                           cyclictest 2.4), fifo or rr; other names run as other
         --priospread      thread N at priority PRIO - N
-q       --quiet           the summary at the end only
-r, -s   --relative, --system  relative sleeps (latscope's nanosleep method)
-R       --resolution      check clock_gettime's resolution (WARN lines on stderr)
         --secaligned [USEC]  first wake-up at the next full second (+ USEC)
-S       --smp             a thread per CPU, pinned, one priority
         --smi             refused: needs Intel's SMI counter MSR (the reason is named)
         --spike=US, --spike-nodes=N  list samples above US (the first N, default 1024)
-t [NUM] --threads[=NUM]   NUM threads (without NUM: one per CPU)
         --tracemark       with -b: the break into trace_marker, tracing stopped
-u       --unbuffered      accepted: output is written as it comes already
-v       --verbose         every sample as n:c:v while it runs
-x       --posix_timers    POSIX timers (latscope's posix-timer method)
         --dbg_cyclictest  accepted, no effect

Differences (README: cyclictest differences): threads are pinned even without -a; Avg
is the mean of exact ns values; --policy other -p 0 runs SCHED_OTHER (cyclictest 2.4
runs SCHED_FIFO 2); -r and -s sleep to absolute deadlines; a bad value is an error
naming it (cyclictest prints its usage).
";

/// The suite's preset names, for shell completion and for suite::presets (NAMES), which
/// reads them here: cli sits below suite. Each has a TOML file in src/suite/presets/.
pub const PRESET_NAMES: [&str; 6] = [
    "memory-load",
    "wake-methods",
    "wake-competitors",
    "rt-cost",
    "irq-response",
    "quick",
];

/// Options of `latscope suite`.
#[derive(Debug, Args)]
#[command(
    after_help = "Presets (the published studies, 100 000 samples per scenario):\n  \
memory-load   clock_nanosleep at 300/500/1000 µs under cpu, mem-churn, prot-fault and\n                \
mem-access loads at 50/100 % on the measured CPU: avg, max, std-dev, overruns\n  \
wake-methods  clock_nanosleep, timerfd, busy at 1 ms, isolated and not, idle and under\n                \
a mixed load on the other CPUs: max, min, avg\n  \
wake-competitors  a writer wakes a reader (pipe, eventfd) every 16 ms under 0-32\n                \
nanosleep competitors, SCHED_RR 1 vs OTHER, waker on the same or another CPU\n  \
rt-cost       UDP flood round trips at 56/4000/8192 B, timer IRQ latency idle and under\n                \
net and io load, the loads' throughput (compare two kernels' runs)\n  \
irq-response  timer interrupt response idle and under net, io and serial load\n  \
quick         a one-minute health check (default)\n\n\
`latscope suite --list` shows each preset's runtime at full scale and at --samples 1000.\n\n\
Examples:\n  latscope suite --preset memory-load --export-json mem.json\n  \
latscope suite --preset wake-methods --samples 10000          # scaled down\n  \
latscope suite --plan my-suite.toml --export-json my.json\n  \
latscope suite --plan my-suite.toml --export-json my.json --resume   # continue after Ctrl-C\n\n\
The plan format is documented in docs/suite-plan.md; every preset is an example of it."
)]
pub struct SuiteArgs {
    /// A study preset: memory-load, wake-methods, wake-competitors, rt-cost, irq-response
    /// or quick.
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "plan",
        value_parser = crate::choice_list::Offered::names(&PRESET_NAMES),
        hide_possible_values = true
    )]
    pub preset: Option<String>,
    /// List every preset with its study, its scenarios and its runtime at full scale and
    /// at --samples 1000, and exit.
    #[arg(long, conflicts_with_all = ["preset", "plan", "resume"])]
    pub list: bool,
    /// Run a matrix of more than 10 000 scenarios (refused without it).
    #[arg(long)]
    pub yes: bool,
    /// A TOML plan file describing your own matrix.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// irq-response: measure a GPIO edge (latscope gpio) instead of the timer: the input line.
    #[arg(long, value_name = "LINE")]
    pub gpio_in: Option<String>,
    /// irq-response with --gpio-in: the output line (loopback; without it, respond).
    #[arg(long, value_name = "LINE", requires = "gpio_in")]
    pub gpio_out: Option<String>,
    /// irq-response with --gpio-in: wire or sim (gpio-sim's pull file, simulated).
    #[arg(long, value_name = "DRIVE", requires = "gpio_in")]
    pub gpio_drive: Option<String>,
    #[command(flatten)]
    pub run: RunArgs,
}

/// Options of `latscope report`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  latscope report run.json                        \
# the table again\n  latscope report run.json --format html -o run.html\n  \
latscope report run.json --fail-above p99=50us,max=100us --export-junit junit.xml\n  \
latscope report cyclictest.json                 # cyclictest --json output works too\n  \
latscope report wake.json --iterations 1-20     # the wake probe's first iterations\n  \
latscope report jan.json feb.json mar.json --by date -f html -o trend.html   # trend chart\n  \
latscope report /var/lib/latscope/watch/ -f html -o month.html   # long-term plot\n  \
latscope report lava-job.yaml                   # a LAVA job log with --export-lava's cases"
)]
pub struct ReportArgs {
    /// A result file written by --export-json (or by `cyclictest --json`).
    #[arg(value_name = "RUN.json")]
    pub input: PathBuf,
    /// More result files: one view of them all (a column per host, kernel, date or file).
    #[arg(value_name = "MORE.json")]
    pub more_inputs: Vec<PathBuf>,
    /// With several files: what the columns stand for (host, kernel, date, file; default
    /// file).
    #[arg(long, value_enum, value_name = "AXIS")]
    pub by: Option<Axis>,
    /// One machine's interval files over days as OSADL's long-term view: a row per interval
    /// in time order, the long-term plot (HTML), the worst case over the whole period. The
    /// default for a directory (`latscope report /var/lib/latscope/watch/`) and for files
    /// all named `watch-*.json`.
    #[arg(long)]
    pub long_term: bool,
    /// The format to print (or write with -o).
    #[arg(short = 'f', long, value_enum, default_value = "table")]
    pub format: Format,
    /// Write the --format output to this file instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub out_file: Option<PathBuf>,
    /// List these iterations of every wake scenario instead of the table: iteration,
    /// switch time (needs a `--trace` run), response time. `1-20` or `5`; iteration 1 is
    /// the first wake-up (cold, warm-up); the result keeps the first 100.
    #[arg(long, value_name = "RANGE")]
    pub iterations: Option<String>,
    #[command(flatten)]
    pub worst_case: WorstCaseArgs,
    #[command(flatten)]
    pub output: ReportOutputArgs,
}

/// What `latscope report` writes besides --format: the run's exports and verdict, without
/// the options of a running measurement (--checkpoint, --resume), so its help lists none
/// that would do nothing (issue 25, item 5).
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Exports and verdicts")]
pub struct ReportOutputArgs {
    /// No table on stdout and no PASS line (FAIL lines, errors and warnings still go to
    /// stderr; the exit code says the verdict).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Show latencies in ns instead of µs with two decimals.
    #[arg(long)]
    pub ns: bool,
    /// Write the run as latscope's JSON result (`-` = stdout): a cyclictest --json file or
    /// a LAVA log becomes a result `report` and `compare` read.
    #[arg(long = "export-json", value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    #[command(flatten)]
    pub exports: ExportArgs,
}

/// `latscope report --worst-case`: the estimate beyond the samples.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Worst case beyond the samples (--worst-case)")]
pub struct WorstCaseArgs {
    /// Estimate the latency exceeded with probability 1e-6, 1e-9, 1e-12 per period, with
    /// 95 % intervals and the checks that allow it. Input: a result (its per-second maxima:
    /// block maxima) or a plain series, one latency per line in time order (needs --unit).
    #[arg(long = "worst-case")]
    pub worst_case: bool,
    /// The unit of a plain series' values.
    #[arg(long, value_enum, value_name = "UNIT")]
    pub unit: Option<SeriesUnit>,
    /// The fit: peaks-over-threshold (GPD; the default for a series) or block-maxima
    /// (GEV; the only one a result file allows).
    #[arg(long = "worst-case-method", value_enum, value_name = "METHOD")]
    pub method: Option<crate::stats::worst_case::Method>,
    /// Samples per block (block maxima; a result's blocks are whole seconds). Default: √n.
    #[arg(long = "block-size", value_name = "N")]
    pub block_size: Option<u64>,
    /// The threshold of peaks over threshold, e.g. `120us`. Default: 2·√n samples above.
    #[arg(long = "threshold", value_name = "DURATION")]
    pub threshold: Option<String>,
    /// The period of a plain series, e.g. `1ms`, for the per-hour figures.
    #[arg(long = "period", value_name = "DURATION")]
    pub period: Option<String>,
}

/// The unit of a plain series (`--unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SeriesUnit {
    Ns,
    Us,
}

/// Options of `latscope restore`.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// Also undo the isolation and terminal settings of runs that are still running.
    #[arg(long)]
    pub force: bool,
}

/// Options of `latscope compare`.
#[derive(Debug, Args)]
#[command(
    after_help = "Scenarios are aligned by probe, method, period, loads, CPU and metric (a \
method's parenthesized suffix such as `(cyclictest)` is ignored; `--ignore` leaves axes \
out). Nothing lined up is an error (exit code 9) naming the axes that differ.\n\n\
Rule syntax: STATS:PERCENT[:ABSOLUTE], e.g. `p99.9,max:10%:5us` (the default): a \
statistic regressed when it is worse than the first run by more than PERCENT and by more \
than ABSOLUTE and the two runs' 95 % bootstrap intervals (from each histogram, seeded) do \
not overlap; improved when better by all three; \"within noise\" when the intervals overlap. Give --rule several times to judge several \
groups; a scenario regressed when any rule says so.\n\nExamples:\n  latscope compare \
base.json new.json\n  latscope compare idle.json loaded.json --ignore load     # idle against loaded\n  \
latscope compare base.json new.json --fail-on-regression --rule \
'max:20%:10us'\n  latscope compare latscope.json cyclictest.json --export-html cmp.html\n  \
latscope compare a.json b.json c.json --by host --export-html boards.html   # one column per board\n  \
latscope compare vanilla.json rt.json                # two rt-cost suite runs: the % change table\n\n\
Files may also be LAVA job logs holding the test sets and cases of --export-lava."
)]
pub struct CompareArgs {
    /// Two or more result files (latscope --export-json or cyclictest --json); the first
    /// is the baseline.
    #[arg(value_name = "RUN.json", num_args = 2.., required = true)]
    pub inputs: Vec<PathBuf>,
    /// One table with a column per host, kernel, date or file (the default with more
    /// than two files); `date` puts the columns in time order and draws trend charts.
    #[arg(long, value_enum, value_name = "AXIS")]
    pub by: Option<Axis>,
    /// Regression rule(s): STATS:PERCENT[:ABSOLUTE]. [default: p99.9,max:10%:5us]
    #[arg(long, value_name = "RULE")]
    pub rule: Vec<String>,
    /// Leave an axis out of the line-up (repeat or comma-separate), e.g. `--ignore load`
    /// to compare an idle run with a loaded one.
    #[arg(long, value_enum, value_name = "AXIS", value_delimiter = ',')]
    pub ignore: Vec<crate::compare::IgnoreAxis>,
    /// Exit with code 3 when any scenario regressed.
    #[arg(long)]
    pub fail_on_regression: bool,
    #[command(flatten)]
    pub output: CompareOutputArgs,
}

/// What `latscope compare` writes: the comparison's formats only (HTML, Markdown, CSV),
/// so its help lists no option it would refuse (issue 22, item 8).
#[derive(Debug, Args, Clone, Default)]
pub struct CompareOutputArgs {
    /// No table on stdout (errors, warnings and verdicts still go to stderr).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Show latencies in ns instead of µs with two decimals.
    #[arg(long)]
    pub ns: bool,
    /// Write the comparison as CSV (`-` = stdout): one row per scenario × CPU ×
    /// statistic × run, with the change and verdict.
    #[arg(long = "export-csv", value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Write the comparison tables as Markdown (`-` = stdout).
    #[arg(long = "export-markdown", value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Write a self-contained HTML comparison with overlaid histograms (`-` = stdout).
    #[arg(long = "export-html", value_name = "FILE")]
    pub export_html: Option<PathBuf>,
    /// Fail (exit code 3, one FAIL line per breach) when a statistic of a later run
    /// exceeds its limit, e.g. `p99=50us,max=100us`.
    #[arg(long = "fail-above", value_name = "STAT=LIMIT,...")]
    pub fail_above: Option<String>,
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

/// `--samples`: a whole number of samples; a negative one (which would otherwise reach
/// clap as an unknown option) is named with the range (issue 12, item 15).
fn sample_count(text: &str) -> Result<u64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("not a number of samples: --samples takes 1 to {}", u64::MAX))
}

/// `latscope timer -h400` (or `-h 400`): cyclictest's histogram option typed to `timer`,
/// whose `-h` is help. Returns the one-line refusal, or None when `-h` (if any) is help.
pub fn cyclictest_histogram_typed_to_timer(args: &[String]) -> Option<String> {
    if args.get(1).map(String::as_str) != Some("timer") {
        return None;
    }
    let numeric = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let rest = &args[2..];
    rest.iter().enumerate().find_map(|(i, a)| {
        let value = match a.strip_prefix("-h") {
            Some("") => rest.get(i + 1).filter(|v| numeric(v)).cloned(),
            Some(v) if numeric(v.trim_start_matches('=')) => Some(v.trim_start_matches('=').to_string()),
            _ => None,
        }?;
        Some(format!(
            "`latscope timer -h` is help, not cyclictest's histogram (-h {value}): use `latscope cyclictest ... -h {value}` for cyclictest's options and histogram, or `latscope timer --export-html` for latscope's"
        ))
    })
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
