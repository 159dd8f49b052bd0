//! Entry point: parse the command line, run, print errors once with their context, and
//! exit with the documented code.

#![deny(unsafe_code)]

use clap::Parser;
use latscope::error::{UserError, EXIT_FAILURE};

fn main() {
    let command_line: Vec<String> = std::env::args().collect();
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
            } else {
                eprintln!("latscope: error: {err:#}");
                EXIT_FAILURE
            }
        }
    };
    latscope::interrupt::wait_if_aborting();
    std::process::exit(code);
}
