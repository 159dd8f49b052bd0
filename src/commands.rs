//! One function per subcommand: build the plan, run it, print and save the results,
//! and turn the outcome into an exit code.

use crate::cli::{Cli, Command};
use crate::error::{EXIT_INTERRUPTED, EXIT_OK, EXIT_THRESHOLD};
use crate::plan::Plan;
use crate::report::{table::TableReporter, Reporter};
use crate::result::Run;
use anyhow::Context;
use std::io::Write;

/// Runs the parsed command line; returns the process exit code.
pub fn dispatch(cli: Cli, command_line: Vec<String>) -> anyhow::Result<i32> {
    let run = cli.command.run_args();
    if let Some(run) = run.filter(|run| !run.remote.hosts.is_empty()) {
        return crate::remote::run_on_hosts(run, &command_line, run.output.resume);
    }
    if run.is_some_and(|run| run.common.force) {
        // `--force`: an output path that is a symbolic link is written through (its
        // target replaced atomically) instead of refused.
        crate::output::atomic::write_through_symlinks();
    }
    match cli.command {
        Command::Timer(args) => {
            let plan = crate::plan::timer_plan(&args)?;
            run_with_plain_table(&plan, command_line)
        }
        Command::Suite(args) => suite(args, command_line),
        Command::Noise(args) => {
            let plan = crate::plan::noise_plan(&args)?;
            run_with_plain_table(&plan, command_line)
        }
        Command::Net(args) => run_net(&args, command_line),
        Command::Gpio(args) => gpio(&args, command_line),
        Command::Restore(args) => restore(args.force),
        Command::Wake(args) => {
            let plan = crate::plan::wake_plan(&args)?;
            run_with_plain_table(&plan, command_line)
        }
        Command::Report(args) => report(&args),
        Command::Compare(args) => compare(&args),
        Command::Load(args) => run_loads(&args),
        Command::Cyclictest(args) => cyclictest(&args.args, command_line),
        Command::Completions(args) => print_bytes(&crate::packaging::completion_script(args.shell)),
        Command::Manpage(args) => manpage(&args),
        Command::Doctor(args) => crate::doctor::run(&args),
        Command::Watch(args) => crate::watch::run(args, command_line),
    }
}

/// `latscope gpio`: `--list` prints the chips and lines; otherwise a run like the others.
fn gpio(args: &crate::cli::GpioArgs, command_line: Vec<String>) -> anyhow::Result<i32> {
    if args.list {
        let text =
            crate::probe::gpio::lines::list_text().map_err(crate::error::UserError::Unsupported)?;
        return print_bytes(text.as_bytes());
    }
    let plan = crate::plan::gpio_plan(args)?;
    run_with_plain_table(&plan, command_line)
}

/// Prints generated text (a completion script, a man page) to stdout.
fn print_bytes(bytes: &[u8]) -> anyhow::Result<i32> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .context("writing to stdout")?;
    Ok(EXIT_OK)
}

/// `latscope manpage`: the main page on stdout, or with `--dir` every page written
/// (atomically) into that directory, one path per line on stdout.
fn manpage(args: &crate::cli::ManpageArgs) -> anyhow::Result<i32> {
    let Some(dir) = &args.dir else {
        let page = crate::packaging::main_man_page().context("rendering the man page")?;
        return print_bytes(&page.roff);
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the man page directory {}", dir.display()))?;
    let pages = crate::packaging::all_man_pages().context("rendering the man pages")?;
    let mut written = String::new();
    for page in pages {
        let path = dir.join(&page.file_name);
        crate::output::atomic::write_atomically(&path, &page.roff)
            .with_context(|| format!("writing {}", path.display()))?;
        written.push_str(&format!("{}\n", path.display()));
    }
    print_bytes(written.as_bytes())
}

/// `latscope cyclictest ARGS`: cyclictest's options, cyclictest's output
/// (cyclictest::run). Exits 0 after a signal or a `-b` break, as cyclictest does.
fn cyclictest(args: &[String], command_line: Vec<String>) -> anyhow::Result<i32> {
    crate::cyclictest::run::run(args, command_line)
}

fn suite(args: crate::cli::SuiteArgs, command_line: Vec<String>) -> anyhow::Result<i32> {
    if args.list {
        print!("{}", suite_list_text()?);
        return Ok(EXIT_OK);
    }
    let (plan, _spec, size) = crate::suite::suite_plan(&args)?;
    if !plan.output.quiet {
        eprintln!(
            "latscope suite: {} scenario(s), about {} (estimated)",
            plan.scenarios.len(),
            crate::suite::plan::human_estimate(size.estimated_ns)
        );
    }
    let table = TableReporter {
        in_ns: plan.output.ns,
    };
    run_plan(&plan, command_line, None, &table)
}

/// `latscope suite --list`: every preset with its study, its scenarios and its runtime
/// at full scale and at `--samples 1000` (estimated, on this machine's CPU count).
fn suite_list_text() -> Result<String, crate::error::UserError> {
    use crate::suite::plan::{human_estimate, suite_size};
    let mut rows = Vec::new();
    for name in crate::suite::presets::NAMES {
        let spec: crate::suite::SuiteSpec =
            toml::from_str(crate::suite::presets::text(name).unwrap_or_default()).map_err(|e| {
                crate::error::UserError::BadInputFile {
                    path: format!("preset {name}"),
                    reason: e.to_string(),
                }
            })?;
        let full_args = crate::cli::CommonArgs {
            warmup: "1s".into(),
            ..Default::default()
        };
        let scaled_args = crate::cli::CommonArgs {
            samples: Some(1000),
            ..full_args.clone()
        };
        let full = suite_size(format!("preset {name}"), &spec, &full_args)?;
        let scaled = suite_size(format!("preset {name}"), &spec, &scaled_args)?;
        rows.push(vec![
            name.to_string(),
            crate::suite::presets::study(name).to_string(),
            full.scenarios.to_string(),
            human_estimate(full.estimated_ns),
            human_estimate(scaled.estimated_ns),
        ]);
    }
    let header = [
        "preset",
        "study",
        "scenarios",
        "full scale",
        "--samples 1000",
    ]
    .map(String::from)
    .to_vec();
    let width = crate::render::table::terminal_width();
    let fit = crate::render::table::Fit::new(header, rows, 2);
    let mut out = crate::render::table::fit_table(fit, width);
    out.push_str(&crate::render::table::wrap(
        "\nRun one: latscope suite --preset NAME [--samples N] [--export-html FILE]\n",
        width,
    ));
    Ok(out)
}

/// Executes a plan and prints the plain per-thread table.
fn run_with_plain_table(plan: &Plan, command_line: Vec<String>) -> anyhow::Result<i32> {
    let table = TableReporter {
        in_ns: plan.output.ns,
    };
    run_plan(plan, command_line, None, &table)
}

/// `latscope restore`: undoes the isolation of killed runs, removes their tracefs
/// instances and io load scratch directories, and says what it did (exec loads need no
/// cleanup: their PID namespace died with the run).
pub fn restore(force: bool) -> anyhow::Result<i32> {
    let mut outcomes = crate::isolate::restore_all(force)?;
    for r in crate::trace::remove_stale_instances() {
        outcomes.push(match r {
            Ok(name) => crate::isolate::RestoreOutcome::done(
                format!("removed tracefs instance {name} (its latscope run is gone)"),
                true,
            ),
            Err(message) => crate::isolate::RestoreOutcome::done(message, false),
        });
    }
    for r in crate::load::io::remove_stale_scratch_in(&std::env::temp_dir()) {
        outcomes.push(match r {
            Ok(message) => crate::isolate::RestoreOutcome::done(message, true),
            Err(message) => crate::isolate::RestoreOutcome::done(message, false),
        });
    }
    if outcomes.is_empty() {
        println!("nothing to restore");
        return Ok(EXIT_OK);
    }
    for o in &outcomes {
        println!("{}", o.message);
    }
    Ok(if outcomes.iter().all(|o| o.ok) {
        EXIT_OK
    } else if outcomes.iter().any(|o| o.needs_root) {
        crate::error::EXIT_PERMISSION
    } else {
        crate::error::EXIT_FAILURE
    })
}

/// `latscope load`: runs loads alone for a while and reports what they achieved.
pub fn run_loads(args: &crate::cli::LoadArgs) -> anyhow::Result<i32> {
    if args.list {
        print!("{}", crate::load::list_text());
        return Ok(EXIT_OK);
    }
    let crate::plan::load::LoadPlan { specs, duration_ns } = crate::plan::load_plan(args)?;
    let stop = crate::interrupt::install().context("installing the Ctrl-C handler")?;
    let running = crate::load::start(&specs, &[], stop.clone())?;
    let deadline = crate::sys::clock::monotonic_ns() + duration_ns;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let now = crate::sys::clock::monotonic_ns();
        if now >= deadline {
            break;
        }
        crate::sys::clock::sleep_for_ns((deadline - now).min(50_000_000));
    }
    let warnings = running.warnings.clone();
    let results = running.stop();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        print!(
            "{}",
            crate::report::loads::loads_table(
                &[("", &results)],
                crate::render::table::terminal_width()
            )
        );
    }
    for w in warnings {
        eprintln!("{}", wrapped_for_stderr(&format!("warning: {}", w.message)));
    }
    for r in &results {
        if let Some(e) = r.extra.get("error") {
            let line = format!("warning: load '{}' stopped early: {e}", r.spec);
            eprintln!("{}", wrapped_for_stderr(&line));
        }
    }
    Ok(if stop.load(std::sync::atomic::Ordering::Relaxed) {
        EXIT_INTERRUPTED
    } else {
        EXIT_OK
    })
}

/// Executes a plan, prints the table and warnings, writes the exports.
pub fn run_plan(
    plan: &Plan,
    command_line: Vec<String>,
    previous: Option<Run>,
    table: &dyn Reporter<Run>,
) -> anyhow::Result<i32> {
    let previous = match previous {
        Some(previous) => Some(previous),
        None => resumed_run(plan)?,
    };
    let stop = crate::interrupt::install().context("installing the Ctrl-C handler")?;
    let outcome = crate::runner::execute(plan, command_line, stop, previous)?;
    let run = &outcome.run;
    let json_to_stdout = plan
        .output
        .export_json
        .as_ref()
        .is_some_and(|p| p.as_os_str() == "-");
    let export_to_stdout = plan.output.exports.iter().any(|e| e.to_stdout());
    if !plan.output.quiet {
        let bytes = table.render(run)?;
        // Through output::pipe: a pipe nobody reads gives up at the next signal.
        let written = if json_to_stdout || export_to_stdout {
            crate::output::pipe::write_stderr(&bytes)
        } else {
            crate::output::pipe::write_stdout(&bytes)
        };
        // After SIGHUP or SIGPIPE the terminal or pipe may be gone: the results are
        // saved, so a failed print must not turn the exit code into a failure.
        if let Err(e) = written {
            if !run.interrupted {
                return Err(e.into());
            }
        }
    }
    let warnings = crate::report::table::warning_lines(run);
    let _ = crate::output::pipe::write_stderr(wrapped_for_stderr(&warnings).as_bytes());
    if json_to_stdout {
        let mut out = crate::output::pipe::stdout()?;
        outcome.write_document(&mut out)?;
        out.flush()?;
    }
    let opts = crate::report::RenderOptions {
        in_ns: plan.output.ns,
        limits: plan.output.limits.clone(),
    };
    for e in plan.output.exports.iter().filter(|e| e.to_stdout()) {
        outcome.write_export(e, &opts)?;
    }
    let failed = crate::result::limits::print_verdict(
        &crate::result::limits::check_run(run, &plan.output.limits),
        !plan.output.limits.is_empty() && !plan.output.quiet,
    );
    let broke = run.scenarios.iter().any(|s| s.broke.is_some());
    Ok(if run.interrupted {
        EXIT_INTERRUPTED
    } else if failed || broke {
        EXIT_THRESHOLD
    } else {
        EXIT_OK
    })
}

/// `--resume`: the run saved in `--export-json`, checked to be this plan's (None: no
/// `--resume`, or nothing saved yet).
fn resumed_run(plan: &Plan) -> anyhow::Result<Option<Run>> {
    match (plan.output.resume, &plan.output.export_json) {
        (true, Some(path)) if path.exists() => {
            let previous = Run::load(path)?;
            crate::runner::check_resumable(plan, &previous, path)?;
            Ok(Some(previous))
        }
        _ => Ok(None),
    }
}

/// `latscope net`: either the reflector alone (--serve) or a measuring plan.
fn run_net(args: &crate::cli::NetArgs, command_line: Vec<String>) -> anyhow::Result<i32> {
    let Some(addr) = &args.serve else {
        let plan = crate::plan::net_plan(args)?;
        return run_with_plain_table(&plan, command_line);
    };
    let serve = crate::plan::serve_plan(args, addr)?;
    for w in &serve.warnings {
        eprintln!("{}", wrapped_for_stderr(&format!("warning: {}", w.message)));
    }
    let stop = crate::interrupt::install().context("installing the Ctrl-C handler")?;
    let outcome = crate::probe::net::serve(serve.addr, serve.placement, serve.duration_ns, stop)?;
    let counts = &outcome.counts;
    use std::sync::atomic::Ordering::Relaxed;
    eprintln!(
        "latscope net: reflected {} datagrams, ignored {} malformed, {} addressed to itself, \
         {} over a source's rate limit, {} send errors",
        counts.reflected.load(Relaxed),
        counts.malformed.load(Relaxed),
        counts.to_itself.load(Relaxed),
        counts.rate_limited.load(Relaxed),
        counts.send_errors.load(Relaxed)
    );
    Ok(if outcome.interrupted {
        EXIT_INTERRUPTED
    } else {
        EXIT_OK
    })
}

/// `latscope report`: re-renders a saved run (or a cyclictest --json file). The input
/// is read once, within the input limit, and its kind decided by what was read.
pub fn report(args: &crate::cli::ReportArgs) -> anyhow::Result<i32> {
    let (first, more) = (&args.input, &args.more_inputs);
    if crate::import::intervals::long_term_wanted(args.long_term, first, more) {
        return report_long_term(args);
    }
    let text = crate::result::read_input_file(&args.input)?;
    if crate::doctor::saved::is_doctor_text(&text) {
        return crate::doctor::saved::report(args, &text);
    }
    let iterations = args
        .iterations
        .as_deref()
        .map(crate::report::iterations::parse_range)
        .transpose()?;
    if iterations.is_some() && args.format != crate::output::exports::Format::Table {
        return Err(crate::error::UserError::InvalidValue {
            option: "--iterations".into(),
            value: args.iterations.clone().unwrap_or_default(),
            reason: "the listing is text and replaces the table; leave --format out".into(),
        }
        .into());
    }
    if !args.more_inputs.is_empty() || args.by.is_some() {
        if iterations.is_some() {
            return Err(crate::error::UserError::InvalidValue {
                option: "--iterations".into(),
                value: args.iterations.clone().unwrap_or_default(),
                reason: "the listing reads one result file; give one file and no --by".into(),
            }
            .into());
        }
        return report_many(args, text);
    }
    if args.worst_case.worst_case && crate::import::series::is_plain_series(&text) {
        return worst_case_of_series(args, &text);
    }
    let mut run = crate::import::lava::result_from_text(&args.input, text)?;
    if args.worst_case.worst_case {
        let opts = worst_case_options(&args.worst_case, false)?;
        crate::result::worst_case::attach_to_run(&mut run, opts);
    }
    if let Some(range) = iterations {
        let text = crate::report::iterations::listing(&run, range, args.output.ns)?;
        let text = crate::output::terminal::escape_controls(&text);
        let _locked = crate::output::exports::claim_paths(&[("-o", &args.out_file)])?;
        match &args.out_file {
            Some(path) => crate::output::atomic::write_atomically(path, text.as_bytes())?,
            None => print!("{text}"),
        }
        return Ok(EXIT_OK);
    }
    let (output, limits, all) = report_exports(args)?;
    let _locked = crate::output::exports::claim(&all)?;
    let opts = crate::report::RenderOptions {
        in_ns: args.output.ns,
        limits: limits.clone(),
    };
    crate::report::write_exports(&all, &run, &opts, true)?;
    if args.format == crate::output::exports::Format::Table {
        let warnings = crate::report::table::warning_lines(&run);
        let warnings = crate::output::terminal::escape_controls(&warnings);
        eprint!("{}", wrapped_for_stderr(&warnings));
    }
    let failed = crate::result::limits::print_verdict(
        &crate::result::limits::check_run(&run, &limits),
        !limits.is_empty() && !output.quiet,
    );
    Ok(if failed { EXIT_THRESHOLD } else { EXIT_OK })
}

/// `report -q`: the table that would go to stdout is left out.
/// `report`'s output options as the shared ones, its limits, and every export it writes:
/// the `--export-*` files and the table or `--format` output unless `-q` leaves it out.
fn report_exports(
    args: &crate::cli::ReportArgs,
) -> anyhow::Result<(
    crate::cli::OutputArgs,
    Vec<crate::result::limits::Limit>,
    Vec<crate::output::exports::Export>,
)> {
    let output = crate::plan::output::report_output(&args.output);
    let limits = crate::plan::output::limits_from_args(&output)?;
    let mut all = crate::plan::output::exports_from_args(&output);
    if !quiet_table(args) {
        all.push(crate::output::exports::Export {
            format: args.format,
            path: args.out_file.clone().unwrap_or_else(|| "-".into()),
        });
    }
    Ok((output, limits, all))
}

fn quiet_table(args: &crate::cli::ReportArgs) -> bool {
    args.output.quiet
        && args.format == crate::output::exports::Format::Table
        && args.out_file.is_none()
}

/// `--worst-case`'s choices as typed (`series`: the input is a plain series).
fn worst_case_options(
    a: &crate::cli::WorstCaseArgs,
    series: bool,
) -> anyhow::Result<crate::stats::worst_case::Options> {
    let duration = |option: &str, text: &Option<String>| -> anyhow::Result<Option<u64>> {
        text.as_deref()
            .map(|t| {
                crate::units::parse_duration_ns(t, "us").map_err(|reason| {
                    crate::error::UserError::InvalidValue {
                        option: option.into(),
                        value: t.into(),
                        reason,
                    }
                    .into()
                })
            })
            .transpose()
    };
    if !series && a.period.is_some() {
        return Err(crate::error::UserError::InvalidValue {
            option: "--period".into(),
            value: a.period.clone().unwrap_or_default(),
            reason: "a result file carries its period; --period is for a plain series".into(),
        }
        .into());
    }
    Ok(crate::stats::worst_case::Options {
        method: a.method,
        block_size: a.block_size,
        threshold_ns: duration("--threshold", &a.threshold)?,
        period_ns: duration("--period", &a.period)?,
        plot: true,
        first_only: false,
    })
}

/// `latscope report SERIES --worst-case --unit ns|us`: the estimate of a plain series
/// (`text`, read from the input).
fn worst_case_of_series(args: &crate::cli::ReportArgs, text: &str) -> anyhow::Result<i32> {
    let a = &args.worst_case;
    let samples = crate::import::series::from_text(
        &args.input,
        text,
        a.unit.map(|u| match u {
            crate::cli::SeriesUnit::Ns => 1,
            crate::cli::SeriesUnit::Us => 1000,
        }),
    )?;
    let opts = worst_case_options(a, true)?;
    let (_, limits, all) = report_exports(args)?;
    let refuse = |option: &str, value: String, reason: &str| -> anyhow::Result<i32> {
        Err(crate::error::UserError::InvalidValue {
            option: option.into(),
            value,
            reason: reason.into(),
        }
        .into())
    };
    if !limits.is_empty() {
        let value = args.output.exports.fail_above.clone().unwrap_or_default();
        return refuse("--fail-above", value, "a plain series has no scenario statistics to limit; leave it out, or report a result file");
    }
    let by_format = |e: &crate::output::exports::Export, wc| {
        let title = crate::result::input_name(&args.input);
        crate::report::worst_case_series::series_bytes(
            e.format,
            &title,
            wc,
            opts.period_ns,
            args.output.ns,
        )
    };
    let writable = crate::report::worst_case_series::series_writes;
    if let Some(e) = all.iter().find(|e| !writable(e.format)) {
        let value = e.path.display().to_string();
        return refuse(e.format.flag(), value, "a plain series' estimate is written as text, JSON, Markdown or HTML; CSV, JUnit and LAVA list a result's scenarios and CPUs");
    }
    crate::output::exports::check(&all)?;
    let wc = crate::stats::worst_case::estimate(
        crate::stats::worst_case::Input::Samples(&samples),
        &opts,
    );
    let _locked = crate::output::exports::claim(&all)?;
    for e in &all {
        let bytes = by_format(e, &wc).unwrap_or_else(|| Ok(Vec::new()))?;
        crate::output::atomic::write_atomically(&e.path, &bytes)?;
    }
    Ok(EXIT_OK)
}

/// `latscope report A B C ... [--by AXIS]`: the many-results view of several files (a
/// column per host, kernel, date or file) in the comparison's formats; exit 3 when a
/// `--fail-above` limit fails in any of them.
fn report_many(args: &crate::cli::ReportArgs, first: String) -> anyhow::Result<i32> {
    use crate::compare::view;
    use crate::compare::{parse_rule, DEFAULT_RULE};
    use crate::error::UserError;
    let (output, limits, all) = report_exports(args)?;
    let mut renderers = Vec::new();
    for e in &all {
        let Some(reporter) = view::reporter(e.format, args.output.ns) else {
            return Err(UserError::InvalidValue {
                option: e.format.flag().into(),
                value: e.path.display().to_string(),
                reason: "a report of several files is a table, Markdown, CSV or HTML; report each file alone for the other formats".into(),
            }
            .into());
        };
        renderers.push((reporter, e));
    }
    let _locked = crate::output::exports::claim(&all)?;
    let mut paths = vec![args.input.clone()];
    paths.extend(args.more_inputs.iter().cloned());
    let mut loaded = vec![crate::import::lava::result_from_text(&args.input, first)?];
    for p in &args.more_inputs {
        loaded.push(crate::import::lava::load_result(p)?);
    }
    crate::import::lava::print_reading_warnings(&loaded, &paths);
    let by = Some(args.by.unwrap_or(crate::compare::multi::Axis::File));
    let arranged = crate::compare::multi::arrange(loaded, crate::compare::run_labels(&paths), by);
    let rules = vec![parse_rule(DEFAULT_RULE).map_err(UserError::Other)?];
    let mut cmp = crate::compare::compare(arranged.columns.clone(), &arranged.runs, &rules, &[]);
    cmp.files = arranged.files.clone();
    cmp.axis = arranged.axis;
    for (reporter, e) in renderers {
        let bytes = crate::output::terminal::escape_export(e.format, reporter.render(&cmp)?);
        crate::output::exports::write_bytes(&e.path, &bytes)?;
    }
    let mut failures = Vec::new();
    for (run, label) in arranged.runs.iter().zip(&arranged.columns) {
        failures.extend(
            crate::result::limits::check_run(run, &limits)
                .into_iter()
                .map(|mut f| {
                    f.source = Some(label.clone());
                    f
                }),
        );
    }
    let failed =
        crate::result::limits::print_verdict(&failures, !limits.is_empty() && !output.quiet);
    Ok(if failed { EXIT_THRESHOLD } else { EXIT_OK })
}

/// `latscope report DIR` (or many `watch-*.json`, or `--long-term`): one machine's interval
/// files as the long-term view in every format asked; exit 3 when a limit fails in any.
fn report_long_term(args: &crate::cli::ReportArgs) -> anyhow::Result<i32> {
    use crate::report::long_term_formats::{bytes, writes};
    let refuse =
        |option: &str, value: String, reason: &str| crate::error::UserError::InvalidValue {
            option: option.into(),
            value,
            reason: reason.into(),
        };
    if args.by.is_some() || args.iterations.is_some() {
        let value = args
            .by
            .map(|b| b.name().to_string())
            .or(args.iterations.clone());
        return Err(refuse("--by/--iterations", value.unwrap_or_default(), "the long-term view puts the intervals in time order; leave it out, or give the files to `latscope compare`").into());
    }
    let (output, limits, all) = report_exports(args)?;
    if let Some(e) = all.iter().find(|e| !writes(e.format)) {
        return Err(refuse(e.format.flag(), e.path.display().to_string(), "the long-term view is written as a table, JSON, CSV, Markdown or HTML; report each file alone for JUnit or LAVA").into());
    }
    let paths = crate::import::intervals::interval_paths(&args.input, &args.more_inputs)?;
    let _locked = crate::output::exports::claim(&all)?;
    let runs: Vec<Run> =
        (paths.iter().map(|p| crate::import::lava::load_result(p))).collect::<Result<_, _>>()?;
    crate::import::lava::print_reading_warnings(&runs, &paths);
    let mut failures = Vec::new();
    for (run, p) in runs.iter().zip(&paths) {
        for mut f in crate::result::limits::check_run(run, &limits) {
            f.source = Some(p.display().to_string());
            failures.push(f);
        }
    }
    // The rows name each file by its name (a directory's files share the rest).
    let name = |p: &std::path::PathBuf| {
        p.file_name()
            .map_or(p.display().to_string(), |n| n.to_string_lossy().into())
    };
    let files = paths.iter().map(name).zip(runs).collect();
    let max = limits.iter().find(|l| l.stat == crate::stats::Stat::Max);
    let opts = worst_case_options(&args.worst_case, false)?;
    let opts = args.worst_case.worst_case.then_some(opts);
    let view = crate::report::long_term::build(files, opts, max.map(|l| l.limit as u64))?;
    let width = crate::render::table::terminal_width();
    for e in &all {
        let b = bytes(&view, e.format, args.output.ns, width).unwrap_or_else(|| Ok(Vec::new()))?;
        let b = crate::output::terminal::escape_export(e.format, b);
        crate::output::exports::write_bytes(&e.path, &b)?;
    }
    let failed =
        crate::result::limits::print_verdict(&failures, !limits.is_empty() && !output.quiet);
    Ok(if failed { EXIT_THRESHOLD } else { EXIT_OK })
}

/// `latscope compare`: judges the later runs against the first, prints the comparison
/// and writes its exports; exit 3 when a `--fail-above` limit fails or, with
/// `--fail-on-regression`, a scenario regressed.
pub fn compare(args: &crate::cli::CompareArgs) -> anyhow::Result<i32> {
    use crate::compare::rules::rules_text;
    use crate::compare::view;
    use crate::error::UserError;
    let output = &crate::plan::output::compare_output(&args.output);
    let rules = compare_rules(&args.rule)?;
    let limits = crate::plan::output::limits_from_args(output)?;
    let exports = crate::plan::output::exports_from_args(output);
    let mut renderers = Vec::new();
    for e in &exports {
        let Some(reporter) = view::reporter(e.format, output.ns) else {
            return Err(UserError::InvalidValue {
                option: e.format.flag().into(),
                value: e.path.display().to_string(),
                reason: "compare exports HTML, Markdown and CSV; render a single run's other formats with `latscope report`".into(),
            }
            .into());
        };
        renderers.push((reporter, e));
    }
    let _locked = crate::output::exports::claim(&exports)?;
    let loaded: Vec<Run> = args
        .inputs
        .iter()
        .map(|p| crate::import::lava::load_result(p))
        .collect::<Result<_, _>>()?;
    crate::import::lava::print_reading_warnings(&loaded, &args.inputs);
    let arranged =
        crate::compare::multi::arrange(loaded, crate::compare::run_labels(&args.inputs), args.by);
    let (runs, labels) = (&arranged.runs, arranged.columns.clone());
    let mut cmp = crate::compare::compare(labels.clone(), runs, &rules, &args.ignore);
    cmp.files = arranged.files.clone();
    cmp.axis = arranged.axis;
    check_compared(&cmp)?;
    let to_stdout = exports.iter().any(|e| e.to_stdout());
    // Through anstream: verdict colours only on a terminal, never with NO_COLOR.
    if output.quiet {
        // -q: no table, the verdicts alone on stderr (as the help says).
        let width = crate::render::table::terminal_width();
        anstream::stderr().write_all(view::verdict_text(&cmp, width).as_bytes())?;
    } else {
        let text = view::ComparisonTableReporter { in_ns: output.ns }.render(&cmp)?;
        if to_stdout {
            anstream::stderr().write_all(&text)?;
        } else {
            anstream::stdout().write_all(&text)?;
        }
    }
    for (reporter, e) in renderers {
        let bytes = crate::output::terminal::escape_export(e.format, reporter.render(&cmp)?);
        crate::output::exports::write_bytes(&e.path, &bytes)?;
    }
    let limit_failed = compare_limits(runs, &labels, &limits, output.quiet);
    let regressed = cmp.any_regressed();
    if regressed && args.fail_on_regression {
        for (scenario, run) in cmp.regressed() {
            let line = format!(
                "FAIL: {scenario} regressed in {run} (rule {})",
                rules_text(&rules)
            );
            eprintln!("{}", wrapped_for_stderr(&line));
        }
    }
    Ok(if limit_failed || (regressed && args.fail_on_regression) {
        EXIT_THRESHOLD
    } else {
        EXIT_OK
    })
}

/// The `--fail-above` limits checked on every compared run (each failure named by its
/// run's label) and the verdict printed; whether one failed.
fn compare_limits(
    runs: &[Run],
    labels: &[String],
    limits: &[crate::result::limits::Limit],
    quiet: bool,
) -> bool {
    let mut failures = Vec::new();
    for (run, label) in runs.iter().zip(labels).skip(1) {
        failures.extend(
            crate::result::limits::check_run(run, limits)
                .into_iter()
                .map(|mut f| {
                    f.source = Some(label.clone());
                    f
                }),
        );
    }
    crate::result::limits::print_verdict(&failures, !limits.is_empty() && !quiet)
}

/// Nothing lined up is an error (exit code 9) naming the axes that differ; a later run
/// with nothing lined up beside others that have is a warning.
fn check_compared(cmp: &crate::compare::Comparison) -> anyhow::Result<()> {
    if !cmp.compared_any() {
        let why = crate::compare::nothing_lined_up_text(cmp, 1);
        return Err(crate::error::UserError::NothingCompared(why).into());
    }
    for r in cmp.uncompared_runs() {
        let line = format!("warning: {}", crate::compare::nothing_lined_up_text(cmp, r));
        eprintln!("{}", wrapped_for_stderr(&line));
    }
    Ok(())
}

/// `--rule` values parsed (the default rule without any); a bad one is named.
fn compare_rules(given: &[String]) -> anyhow::Result<Vec<crate::compare::Rule>> {
    use crate::compare::{parse_rule, DEFAULT_RULE};
    use crate::error::UserError;
    Ok(if given.is_empty() {
        vec![parse_rule(DEFAULT_RULE).map_err(UserError::Other)?]
    } else {
        given
            .iter()
            .map(|r| {
                parse_rule(r).map_err(|reason| UserError::InvalidValue {
                    option: "--rule".into(),
                    value: r.clone(),
                    reason,
                })
            })
            .collect::<Result<_, _>>()?
    })
}

/// Prose for stderr (warnings, notes, FAIL lines) wrapped at its terminal's width (else
/// `COLUMNS`, else 80) with a hanging indent, so no line is wider than a serial console.
fn wrapped_for_stderr(text: &str) -> String {
    crate::render::table::wrap(text, crate::render::table::stderr_width())
}
