//! One function per subcommand: build the plan, run it, print and save the results,
//! and turn the outcome into an exit code.

use crate::cli::{Cli, Command};
use crate::error::{EXIT_INTERRUPTED, EXIT_OK, EXIT_THRESHOLD};
use crate::plan::Plan;
use crate::report::{table::TableReporter, Reporter};
use anyhow::Context;
use std::io::Write;

/// Runs the parsed command line; returns the process exit code.
pub fn dispatch(cli: Cli, command_line: Vec<String>) -> anyhow::Result<i32> {
    match cli.command {
        Command::Timer(args) => {
            let plan = crate::plan::timer_plan(&args)?;
            run_plan(&plan, command_line)
        }
        Command::Report(args) => report(&args),
        Command::Compare(args) => crate::report::compare::command(&args),
    }
}

/// Executes a plan, prints the table and warnings, writes the exports.
pub fn run_plan(plan: &Plan, command_line: Vec<String>) -> anyhow::Result<i32> {
    let stop = crate::interrupt::install().context("installing the Ctrl-C handler")?;
    let outcome = crate::runner::execute(plan, command_line, stop)?;
    let run = &outcome.run;
    let json_to_stdout = plan
        .output
        .export_json
        .as_ref()
        .is_some_and(|p| p.as_os_str() == "-");
    let export_to_stdout = plan.output.exports.iter().any(|e| e.to_stdout());
    if !plan.output.quiet {
        let table = TableReporter {
            in_ns: plan.output.ns,
        }
        .render(run)?;
        if json_to_stdout || export_to_stdout {
            std::io::stderr().write_all(&table)?;
        } else {
            std::io::stdout().write_all(&table)?;
        }
    }
    eprint!("{}", crate::report::table::warning_lines(run));
    if json_to_stdout {
        let bytes = crate::report::json::JsonReporter.render(run)?;
        crate::result::write_atomically(std::path::Path::new("-"), &bytes)?;
    }
    let opts = crate::report::RenderOptions {
        in_ns: plan.output.ns,
        limits: plan.output.limits.clone(),
    };
    let stdout_exports: Vec<_> = plan
        .output
        .exports
        .iter()
        .filter(|e| e.to_stdout())
        .cloned()
        .collect();
    crate::report::exports::write(&stdout_exports, run, &opts, true)?;
    let failed = crate::report::limits::print_verdict(
        &crate::report::limits::check_run(run, &plan.output.limits),
        !plan.output.limits.is_empty() && !plan.output.quiet,
    );
    Ok(if run.interrupted {
        EXIT_INTERRUPTED
    } else if failed {
        EXIT_THRESHOLD
    } else {
        EXIT_OK
    })
}

/// `latscope report`: re-renders a saved run (or a cyclictest --json file).
pub fn report(args: &crate::cli::ReportArgs) -> anyhow::Result<i32> {
    let run = crate::report::cyclictest_import::load_any(&args.input)?;
    let limits = crate::report::exports::limits_from_args(&args.output)?;
    let exports = crate::report::exports::from_args(&args.output);
    let target = args.out_file.clone().unwrap_or_else(|| "-".into());
    let mut all = exports.clone();
    all.push(crate::report::exports::Export {
        format: args.format,
        path: target.clone(),
    });
    crate::report::exports::check(&all)?;
    let opts = crate::report::RenderOptions {
        in_ns: args.output.ns,
        limits: limits.clone(),
    };
    crate::report::exports::write(&all, &run, &opts, true)?;
    if args.format == crate::report::Format::Table {
        eprint!("{}", crate::report::table::warning_lines(&run));
    }
    let failed = crate::report::limits::print_verdict(
        &crate::report::limits::check_run(&run, &limits),
        !limits.is_empty() && !args.output.quiet,
    );
    Ok(if failed { EXIT_THRESHOLD } else { EXIT_OK })
}
