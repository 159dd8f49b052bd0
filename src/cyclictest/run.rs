//! `latscope cyclictest ARGS` from start to end, in cyclictest's order: its warnings and
//! the one `# latscope:` note line on stderr (none with `-q`), its lines before the run
//! on stdout, the status file and `-F` pipe made, the main loop streaming while the
//! timer probe measures, then the `--json` file, the `--histfile`, and the last lines on
//! stdout. Exits 0 after SIGINT/SIGTERM or a `-b` break, as cyclictest does.

use super::format::{note_line, HistogramReporter, JsonReporter, StdoutReporter};
use super::plan::CyclictestPlan;
use super::stream::{StreamSetup, Streamer};
use crate::error::EXIT_OK;
use crate::render::Reporter;
use anyhow::Context;
use std::io::Write;

/// Runs cyclictest's command line; returns the exit code.
pub fn run(args: &[String], command_line: Vec<String>) -> anyhow::Result<i32> {
    // Before anything else: SIGUSR1/SIGUSR2 must not kill the run.
    let status_requests = crate::interrupt::status_signals().context("handling SIGUSR1")?;
    let mut planned = super::plan::cyclictest_plan(args)?;
    if planned.help {
        print!("{}", crate::cli::CYCLICTEST_HELP);
        return Ok(EXIT_OK);
    }
    crate::interrupt::quiet_first_signal();
    let opts = &planned.output;
    // Its --json and --histfile are locked as a run's exports are (written after it).
    let outputs: Vec<(&str, &std::path::Path)> =
        [("--json", &opts.json), ("--histfile", &opts.histfile)]
            .into_iter()
            .filter_map(|(option, path)| Some((option, path.as_deref()?)))
            .collect();
    let _output_locks = crate::output::exports::lock_outputs(&outputs)?;
    let mut stderr = std::io::stderr();
    let mut before_run = String::new();
    for line in &opts.notices {
        before_run.push_str(line);
        before_run.push('\n');
    }
    if !opts.quiet {
        if let Some(line) = note_line(&opts.notes) {
            before_run.push_str(&line);
            before_run.push('\n');
        }
    }
    if opts.resolution_check {
        before_run.push_str(&clock_resolution_lines(opts.verbose));
    }
    if let Some(Err(warning)) = planned.trace_marker.as_ref().map(|m| m.open()) {
        before_run.push_str(&warning);
        before_run.push('\n');
    }
    let _ = stderr.write_all(before_run.as_bytes());
    let mut stdout = std::io::stdout();
    stdout.write_all(preamble(&planned).as_bytes())?;
    stdout.flush()?;
    if let Some(cpus) = &opts.main_affinity {
        crate::sys::affinity::pin_current_thread_to(cpus)
            .context("--mainaffinity: setting the main thread's CPUs")?;
    }
    let files = super::status::StatusFiles::create(opts.fifo.as_deref())?;
    let registry = crate::probe::LiveRegistry::default();
    planned.plan.output.live_view = Some(registry.clone());
    let stream = StreamSetup {
        opts: planned.output.clone(),
        intervals_us: planned.intervals_us(),
        registry,
        status_requests,
        status_file: files.status_file.clone(),
    };
    measure_and_print(&planned, command_line, stream)
}

/// The run itself (the stream beside it), then what cyclictest writes after it.
fn measure_and_print(
    planned: &CyclictestPlan,
    command_line: Vec<String>,
    stream: StreamSetup,
) -> anyhow::Result<i32> {
    let opts = &planned.output;
    let streamer = Streamer::start(stream).context("starting the main loop")?;
    let stop = crate::interrupt::install().context("installing the Ctrl-C handler")?;
    let outcome = crate::runner::execute(&planned.plan, command_line.clone(), stop, None);
    let streamed = streamer.finish();
    if let Some(marker) = &planned.trace_marker {
        marker.finish();
    }
    let outcome = outcome?;
    // cyclictest's layouts print histograms: the whole run, read back.
    let run = &outcome.full_run()?;
    if let Some(path) = &opts.json {
        let cmdline = command_line.join(" ");
        let bytes = JsonReporter { opts, cmdline }.render(run)?;
        crate::output::exports::write_bytes(path, &bytes)?;
    }
    if let Some(path) = &opts.histfile {
        crate::output::exports::write_bytes(path, &HistogramReporter(opts).render(run)?)?;
    }
    let text = StdoutReporter {
        opts,
        spikes: &streamed.spikes,
        loadavg: std::fs::read_to_string("/proc/loadavg").unwrap_or_default(),
    }
    .render(run)?;
    // After SIGHUP or SIGPIPE the terminal may be gone; the files are written.
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(&text);
    let _ = stdout.flush();
    let lost: u64 = streamed.lost.iter().sum();
    if lost > 0 {
        eprintln!("# latscope: {lost} samples were overwritten before they were printed");
    }
    Ok(EXIT_OK)
}

/// What cyclictest prints on stdout before it measures.
fn preamble(planned: &CyclictestPlan) -> String {
    let opts = &planned.output;
    let mut before = String::new();
    for line in &opts.preamble {
        before.push_str(line);
        before.push('\n');
    }
    if let Some(us) = opts.dma_latency_us {
        before.push_str(&format!("# /dev/cpu_dma_latency set to {us}us\n"));
    }
    if opts.verbose {
        // cyclictest prints each thread's interval after adding the distance to it.
        let distance = planned.distance_us;
        for (i, interval) in planned.intervals_us().into_iter().enumerate() {
            if let Some(cpu) = opts.thread_cpus.as_ref().and_then(|c| c.get(i)) {
                before.push_str(&format!("Thread {i} using cpu {cpu}.\n"));
            }
            before.push_str(&format!("Thread {i} Interval: {}\n", interval + distance));
        }
    }
    before
}

/// `-R`: clock_gettime called back to back; cyclictest's two warnings when the smallest
/// step seen is coarser than the resolution the kernel reports (or with `-v`).
fn clock_resolution_lines(verbose: bool) -> String {
    let reported = crate::sys::clock::monotonic_resolution_ns();
    let mut previous = crate::sys::clock::monotonic_ns();
    let mut smallest = u64::MAX;
    for _ in 0..100_000 {
        let now = crate::sys::clock::monotonic_ns();
        let step = now - previous;
        if step > 0 {
            smallest = smallest.min(step);
        }
        previous = now;
    }
    if smallest == u64::MAX || !(verbose || smallest > reported) {
        return String::new();
    }
    format!(
        "WARN: reported clock resolution: {reported} nsec\nWARN: measured clock resolution approximately: {smallest} nsec\n"
    )
}
