//! Entry point: parse the command line, run, print errors once with their context, and
//! exit with the documented code.

#![deny(unsafe_code)]

use clap::Parser;
use latscope::error::{ThresholdFailed, UserError, EXIT_FAILURE, EXIT_THRESHOLD};

fn main() {
    let command_line: Vec<String> = std::env::args().collect();
    if let Some(refusal) = latscope::cli::cyclictest_histogram_typed_to_timer(&command_line) {
        eprintln!("latscope: error: {refusal}");
        std::process::exit(latscope::error::EXIT_USAGE);
    }
    let cli = latscope::cli::Cli::parse();
    let code = match latscope::commands::dispatch(cli, command_line) {
        Ok(code) => code,
        Err(err) => {
            // A second signal is restoring the system: its error (a removed tracefs
            // instance, say) is not the outcome; the signal thread exits with 130.
            latscope::interrupt::wait_if_aborting();
            if let Some(user) = err.downcast_ref::<UserError>() {
                eprintln!("latscope: error: {user}");
                user.exit_code()
            } else if let Some(t) = err.downcast_ref::<ThresholdFailed>() {
                eprintln!("latscope: FAIL: {t}");
                EXIT_THRESHOLD
            } else {
                eprintln!("latscope: error: {err:#}");
                EXIT_FAILURE
            }
        }
    };
    latscope::interrupt::wait_if_aborting();
    std::process::exit(code);
}
