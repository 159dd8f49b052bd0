//! The command line, clap derive only: subcommands (here), each command's options (one
//! file per kind: probes, results, tools) and the groups every probe shares (shared.rs),
//! with help text that teaches. Validation lives in `plan`. Every subcommand's options
//! live under src/cli and nowhere else (issue 23: "clap stays in cli").

mod probes;
mod results;
mod shared;
mod tools;

pub use probes::*;
pub use results::*;
pub use shared::*;
pub use tools::*;

use clap::{Parser, Subcommand};

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
