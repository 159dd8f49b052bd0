//! The options of the commands that check, set up, undo or stand in for others: doctor,
//! suite, restore, the cyclictest drop-in, completions and the man page.

use super::*;
use clap::Args;
use std::path::PathBuf;

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

/// Options of `latscope restore`.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// Also undo the isolation and terminal settings of runs that are still running.
    #[arg(long)]
    pub force: bool,
}
