//! One function per subcommand: build the plan, run it, print and save the results,
//! and turn the outcome into an exit code.

use crate::cli::{Cli, Command};
use crate::error::{EXIT_INTERRUPTED, EXIT_OK};
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
        Command::Wake(args) => {
            let plan = crate::plan::wake::wake_plan(&args)?;
            run_plan(&plan, command_line)
        }
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
    if !plan.output.quiet {
        let table = TableReporter {
            in_ns: plan.output.ns,
        }
        .render(run)?;
        if json_to_stdout {
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
    Ok(if run.interrupted {
        EXIT_INTERRUPTED
    } else {
        EXIT_OK
    })
}
